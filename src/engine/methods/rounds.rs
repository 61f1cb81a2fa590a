//! What Self-Refine and Reflexion share: a chain of attempts under the root, each the
//! child of the one before, judged by feedback (the model's, or the task's checker's
//! with `feedback = oracle`). The feedback and the reflection live on the attempt's
//! node as notes, so a person edits them with the attempt (`Node::edit_text`) and
//! the next call reads the edited text.
//!
//! Parameters (flattened into the session header, all optional): `feedback`
//! (`self` or `oracle`, default `self`); Self-Refine's `rounds` and `first`,
//! Reflexion's `trials` (read in their files).

use serde::{Deserialize, Serialize};

use crate::engine::tree::split_notes;
use crate::engine::{CallKind, Core, LlmRequest, LlmResponse, NodeId, Origin, ParamError, Params, Prompt, Proposal};

/// Who judges an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeedbackSource {
    /// The same model, asked to check the attempt (a `feedback` call).
    #[default]
    #[serde(rename = "self")]
    SelfCheck,
    /// The task's checker: no call (the ToT paper's "IO + Refine" for Game of 24).
    Oracle,
}

impl FeedbackSource {
    pub fn label(self) -> &'static str {
        match self {
            FeedbackSource::SelfCheck => "self",
            FeedbackSource::Oracle => "oracle",
        }
    }
}

/// The prompt of Self-Refine's first attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FirstPrompt {
    /// The task's input-output prompt (the ToT paper's IO + Refine).
    Io,
    /// The task's chain-of-thought prompt.
    #[default]
    Cot,
}

impl FirstPrompt {
    pub fn label(self) -> &'static str {
        match self {
            FirstPrompt::Io => "io",
            FirstPrompt::Cot => "cot",
        }
    }
}

pub const FEEDBACK: &str = "feedback";
/// The note labels on an attempt's node.
pub const FEEDBACK_NOTE: &str = "feedback";
pub const REFLECTION_NOTE: &str = "reflection";

/// Own call tags: a new attempt under the call's node, feedback on it, a reflection on it.
pub const TAG_ATTEMPT: u32 = 0;
pub const TAG_FEEDBACK: u32 = 1;
pub const TAG_REFLECT: u32 = 2;

/// A whole number from `Params::extra` within `min..=max`, or the default.
pub fn extra_count(
    params: &Params,
    key: &'static str,
    default: usize,
    min: usize,
    max: usize,
) -> Result<usize, ParamError> {
    let Some(v) = params.extra.get(key) else { return Ok(default) };
    let expected = format!("it must be a whole number from {min} to {max}");
    match v.as_f64() {
        Some(n) if n.fract() == 0.0 && n >= min as f64 && n <= max as f64 => Ok(n as usize),
        // JSON has no NaN: serde_json writes it as null.
        _ => Err(ParamError { name: key, value: if v.is_null() { "NaN".into() } else { v.to_string() }, expected }),
    }
}

/// A word from `Params::extra` read as `T` (serde names), or the default.
pub fn extra_word<T: for<'de> Deserialize<'de> + Default>(
    params: &Params,
    key: &'static str,
    names: &[&str],
) -> Result<T, ParamError> {
    let Some(v) = params.extra.get(key) else { return Ok(T::default()) };
    serde_json::from_value(v.clone()).map_err(|_| ParamError {
        name: key,
        value: v.to_string(),
        expected: format!("it must be one of {}", names.join(", ")),
    })
}

pub fn read_feedback(params: &Params) -> Result<FeedbackSource, ParamError> {
    extra_word(params, FEEDBACK, &["self", "oracle"])
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
    let mut request = LlmRequest::from_prompt(prompt, 1, core.params.temperature);
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
        let with = |k: &str, v: serde_json::Value| {
            let mut p = Params::default();
            p.extra.insert(k.into(), v);
            p
        };
        assert_eq!(extra_count(&Params::default(), "rounds", 4, 1, 50), Ok(4));
        assert_eq!(extra_count(&with("rounds", 7.into()), "rounds", 4, 1, 50), Ok(7));
        let err = extra_count(&with("rounds", 51.into()), "rounds", 4, 1, 50).unwrap_err();
        assert_eq!(err.to_string(), "rounds (--rounds) is 51: it must be a whole number from 1 to 50");
        let err = extra_count(&with("rounds", 2.5.into()), "rounds", 4, 1, 50).unwrap_err();
        assert_eq!(err.to_string(), "rounds (--rounds) is 2.5: it must be a whole number from 1 to 50");
        assert_eq!(read_feedback(&with("feedback", "oracle".into())), Ok(FeedbackSource::Oracle));
        assert_eq!(read_feedback(&with("feedback", "self".into())), Ok(FeedbackSource::SelfCheck));
        let err = read_feedback(&with("feedback", "gold".into())).unwrap_err();
        assert_eq!(err.to_string(), "feedback (--feedback) is \"gold\": it must be one of self, oracle");
        // The header writes the names the flags take.
        assert_eq!(serde_json::to_value(FeedbackSource::SelfCheck).unwrap(), "self");
        assert_eq!(serde_json::to_value(FirstPrompt::Io).unwrap(), "io");
    }
}
