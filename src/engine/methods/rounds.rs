//! What Self-Refine and Reflexion share: a chain of attempts under the root, each the
//! child of the one before, judged by feedback (the model's, or the task's checker's
//! with `feedback = oracle`). The feedback and the reflection live on the attempt's
//! node as notes, so a person edits them with the attempt (`Node::edit_text`) and
//! the next call reads the edited text.
//!
//! Parameters: `feedback` (`self` or `oracle`, default `self`, declared here and read
//! by both and by ReTreVal); Self-Refine's `rounds` and `first`, Reflexion's `trials`
//! (declared in their files).

use crate::engine::params::{choice_name, choices, Choice, DefaultValue, Kind, ParamDecl};
use crate::engine::tree::split_notes;
use crate::engine::{
    CallKind, Core, LlmRequest, LlmResponse, NodeId, Origin, ParamError, ParamReader, Prompt, Proposal,
};

/// Who judges an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeedbackSource {
    /// The same model, asked to check the attempt (a `feedback` call).
    #[default]
    SelfCheck,
    /// The task's checker: no call (the ToT paper's "IO + Refine" for Game of 24).
    Oracle,
}

impl Choice for FeedbackSource {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("self", "the same model checks the attempt", FeedbackSource::SelfCheck),
        ("oracle", "the task's checker judges (no call)", FeedbackSource::Oracle),
    ];
}

impl FeedbackSource {
    pub fn label(self) -> &'static str {
        choice_name(self)
    }
}

/// The prompt of Self-Refine's first attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FirstPrompt {
    /// The task's input-output prompt (the ToT paper's IO + Refine).
    Io,
    /// The task's chain-of-thought prompt.
    #[default]
    Cot,
}

impl Choice for FirstPrompt {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("cot", "the task's chain-of-thought prompt", FirstPrompt::Cot),
        ("io", "the task's input-output prompt", FirstPrompt::Io),
    ];
}

impl FirstPrompt {
    pub fn label(self) -> &'static str {
        choice_name(self)
    }
}

/// Who judges an attempt (self-refine, reflexion, retreval).
pub const FEEDBACK: ParamDecl = ParamDecl {
    name: "feedback",
    help: "Who judges an attempt: the model itself, or the task's checker with no call; \
           self-refine with oracle feedback is the ToT paper's IO + Refine",
    kind: Kind::Choice(choices::<FeedbackSource>),
    default: DefaultValue::Word("self"),
};

/// The note labels on an attempt's node.
pub const FEEDBACK_NOTE: &str = "feedback";
pub const REFLECTION_NOTE: &str = "reflection";

/// Own call tags: a new attempt under the call's node, feedback on it, a reflection on it.
pub const TAG_ATTEMPT: u32 = 0;
pub const TAG_FEEDBACK: u32 = 1;
pub const TAG_REFLECT: u32 = 2;

pub fn read_feedback(p: &ParamReader) -> Result<FeedbackSource, ParamError> {
    p.choice(&FEEDBACK)
}

/// The verdict a piece of feedback gave, as the tree shows it.
pub fn verdict_text(verdict: Option<bool>) -> &'static str {
    match verdict {
        Some(true) => "✓ correct",
        Some(false) => "✗ incorrect",
        None => "? no verdict",
    }
}

/// The checker's feedback on `attempt`: no call. The text never holds the gold answer
/// (tasks keep their check messages free of it).
pub fn oracle_feedback(core: &Core, attempt: NodeId) -> (bool, String) {
    let text = &core.tree.node(attempt).path;
    match core.task.extract_answer(&core.x, text) {
        None => (false, "The attempt states no final answer.".to_string()),
        Some(answer) => match core.task.check(&core.x, &answer) {
            Ok(()) => (true, format!("The answer {answer} is correct.")),
            Err(reason) => (false, format!("The answer {answer} is wrong: {reason}.")),
        },
    }
}

/// Issue a call for `node` with a fresh nonce when `node` already has children (a
/// repeated request after a backtrack or an edit gets a new answer, not the cache's).
pub fn issue(core: &mut Core, node: NodeId, tag: u32, prompt: Prompt) {
    let mut request = LlmRequest::from_prompt(prompt, 1, core.temperature);
    if tag == TAG_ATTEMPT {
        request.nonce = core.tree.node(node).children.len() as u32;
    }
    core.issue(node, CallKind::Own(tag), request, false);
}

/// A new attempt under `parent` from a reply: the first completion's text. `None` when
/// the reply is empty (the caller says so and stops).
pub fn add_attempt(core: &mut Core, parent: NodeId, reply: &LlmResponse, origin: Origin) -> Option<NodeId> {
    let text = reply.completions.first().map(|c| c.text.clone()).unwrap_or_default();
    add_attempt_text(core, parent, &text, origin)
}

pub fn add_attempt_text(core: &mut Core, parent: NodeId, text: &str, origin: Origin) -> Option<NodeId> {
    if text.trim().is_empty() {
        return None;
    }
    let proposal = Proposal { thought: text.trim().to_string(), path: text.to_string(), problem: None };
    let id = *core.add_proposals(parent, vec![proposal], origin).first()?;
    let answer = core.task.extract_answer(&core.x, text);
    core.tree.node_mut(id).answer = answer;
    Some(id)
}

/// The first reply's text.
pub fn reply_text(reply: &LlmResponse) -> String {
    reply.completions.first().map(|c| c.text.trim().to_string()).unwrap_or_default()
}

/// What a person's edit of an attempt says: a rewritten attempt (its new text), and
/// the notes they changed (label and new text).
pub struct EditedAttempt {
    pub attempt: Option<String>,
    pub changed_notes: Vec<(String, String)>,
}

/// Compare a person's edited text (`Node::edit_text` format) with the node.
pub fn read_edit(core: &Core, node: NodeId, text: &str) -> Result<EditedAttempt, String> {
    let n = core.tree.node(node);
    let (thought, notes) = split_notes(text);
    if thought.is_empty() {
        return Err("an edited attempt cannot be empty".into());
    }
    let attempt = (thought != n.thought.trim()).then_some(thought);
    let mut changed_notes = Vec::new();
    for note in notes {
        if !n.notes.iter().any(|old| old.label == note.label) {
            return Err(format!(
                "{node} has no note \"{}\" to edit (it has: {})",
                note.label,
                if n.notes.is_empty() {
                    "none".to_string()
                } else {
                    n.notes.iter().map(|n| n.label.clone()).collect::<Vec<_>>().join(", ")
                }
            ));
        }
        if note.text.is_empty() {
            return Err(format!("the {} of {node} cannot be empty", note.label));
        }
        if n.note(&note.label) != Some(note.text.as_str()) {
            changed_notes.push((note.label, note.text));
        }
    }
    Ok(EditedAttempt { attempt, changed_notes })
}

/// Whether `node` is `top` or below it.
pub fn inside(core: &Core, node: NodeId, top: NodeId) -> bool {
    node == top || core.tree.ancestors(node).contains(&top)
}

/// The attempts of the chain from the first to `last`, in order.
pub fn chain(core: &Core, last: NodeId) -> Vec<NodeId> {
    let mut nodes: Vec<NodeId> = core.tree.ancestors(last).into_iter().filter(|&n| n != core.tree.root()).collect();
    nodes.reverse();
    nodes.push(last);
    nodes
}

/// Why a feedback method cannot go on: the task has no feedback prompts (the engine
/// refuses self-refine and reflexion on such a task; this is the line if one gets here).
pub(super) fn no_feedback(core: &Core) -> String {
    format!("{} has no {}", core.task.name(), crate::engine::task::Capability::Feedback.describe())
}

/// A feedback reply read by the task's feedback capability: its verdict and text (no
/// verdict on a task without the capability, where these methods are refused).
pub(super) fn read_verdict(core: &Core, reply: &str) -> (Option<bool>, String) {
    match core.task.feedback() {
        Some(fb) => fb.parse_feedback(reply),
        None => (None, reply.trim().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_range_checked_with_one_line_errors() {
        use crate::engine::methods::self_refine::{KIND, ROUNDS};
        let with = |k: &str, v: serde_json::Value| crate::engine::testkit::from_header(KIND, &[(k, v)]);
        let rounds = |p: crate::engine::Params| p.reader().count(&ROUNDS);
        assert_eq!(rounds(with("seed", 0.into())), Ok(4));
        assert_eq!(rounds(with("rounds", 7.into())), Ok(7));
        let err = rounds(with("rounds", 51.into())).unwrap_err();
        assert_eq!(err.to_string(), "rounds (--rounds) is 51: it must be a whole number from 1 to 50");
        let err = rounds(with("rounds", 2.5.into())).unwrap_err();
        assert_eq!(err.to_string(), "rounds (--rounds) is 2.5: it must be a whole number from 1 to 50");
        assert_eq!(read_feedback(&with("feedback", "oracle".into()).reader()), Ok(FeedbackSource::Oracle));
        assert_eq!(read_feedback(&with("feedback", "self".into()).reader()), Ok(FeedbackSource::SelfCheck));
        let err = read_feedback(&with("feedback", "gold".into()).reader()).unwrap_err();
        assert_eq!(err.to_string(), "feedback (--feedback) is \"gold\": it must be one of self, oracle");
        // The header writes the names the flags take.
        let json = serde_json::to_value(with("feedback", "oracle".into()).with("first", "io")).unwrap();
        assert_eq!((json["feedback"].as_str(), json["first"].as_str()), (Some("oracle"), Some("io")));
        assert_eq!((FeedbackSource::SelfCheck.label(), FirstPrompt::Io.label()), ("self", "io"));
    }
}
