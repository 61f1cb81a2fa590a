//! What Self-Refine and Reflexion share: a chain of attempts under the root, each the
//! child of the one before, judged by feedback (the model's, or the task's checker's
//! with `feedback = oracle`); [`Chain`] is that state and the reading of its replies. The feedback and the reflection live on the attempt's
//! node as notes, so a person edits them with the attempt (`Node::edit_text`) and
//! the next call reads the edited text.
//!
//! Parameters: `feedback` (`self` or `oracle`, default `self`, declared here and read
//! by both and by ReTreVal); Self-Refine's `rounds` and `first`, Reflexion's `trials`
//! (declared in their files).

use std::collections::BTreeMap;

use crate::engine::event::Event;
use crate::engine::params::{choice_name, choices, Choice, DefaultValue, Kind, ParamDecl};
use crate::engine::task::Feedback;
use crate::engine::tree::{split_notes, DropReason};
use crate::engine::{CallKind, Core, NodeId, NodeStatus, Origin, Outcome, ParamError, ParamReader, Proposal};
use crate::protocol::{LlmRequest, LlmResponse, Prompt};

use super::Progress;

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
pub fn oracle_feedback(core: &mut Core, attempt: NodeId) -> (bool, String) {
    let text = &core.tree.node(attempt).path;
    match core.task.extract_answer(&core.x, text) {
        None => (false, "The attempt states no final answer.".to_string()),
        Some(answer) => match core.check(&answer) {
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
/// the reply is empty (the caller says so and stops; it is counted as an answer with
/// nothing to grade).
pub fn add_attempt(core: &mut Core, parent: NodeId, reply: &LlmResponse, origin: Origin) -> Option<NodeId> {
    let text = reply.completions.first().map(|c| c.text.clone()).unwrap_or_default();
    let added = add_attempt_text(core, parent, &text, origin);
    if added.is_none() {
        core.read_tallies.answers.bad("", "an empty reply, nothing to grade");
    }
    added
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

/// What a chain method waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// An attempt under this node (the root, or the attempt before).
    Attempt(NodeId),
    /// Feedback on this attempt.
    Feedback(NodeId),
    /// A reflection on this attempt (Reflexion).
    Reflection(NodeId),
}

impl Waiting {
    fn node(self) -> NodeId {
        match self {
            Waiting::Attempt(n) | Waiting::Feedback(n) | Waiting::Reflection(n) => n,
        }
    }
}

/// How a chain method words what it does in the tree and the transcript (Self-Refine's
/// attempts and feedback, Reflexion's trials and self-evaluations).
#[derive(Debug)]
pub struct Wording {
    /// The method's name, for "… is waiting for a reply".
    pub method: &'static str,
    /// What an attempt is called: "attempt", "trial".
    pub noun: &'static str,
    /// How a verdict on attempt n is logged: "feedback on", "judgement of".
    pub judged_as: &'static str,
    /// The feedback reply, as the no-verdict and empty lines name it: "the feedback on",
    /// and its name alone: "feedback".
    pub feedback_of: &'static str,
    pub feedback_name: &'static str,
    /// The end of an attempt's tree label after its verdict (from its node).
    pub label_end: fn(&crate::engine::tree::Node) -> &'static str,
    /// The log line when attempt n (node) is judged correct.
    pub correct: fn(usize, NodeId) -> String,
    /// The log line when attempt n used up the budget.
    pub spent: fn(usize) -> String,
    /// The log lines when no attempt came back under a node, and no judgement of one.
    pub no_attempt: fn(NodeId) -> String,
    pub no_judgement: fn(NodeId) -> String,
}

/// The state of a chain of attempts that Self-Refine and Reflexion share: the latest
/// attempt, what is awaited, each attempt's verdict, and how replies to attempts and
/// to feedback are read, judged, labelled and logged; backtracking, pruning and
/// continuing along the chain. Each method adds what follows a failed attempt.
#[derive(Debug, Clone)]
pub struct Chain {
    /// The latest attempt the chain continues from.
    pub current: Option<NodeId>,
    pub waiting: Option<Waiting>,
    /// Each judged attempt's verdict (`None`: the feedback named none, read as incorrect).
    pub verdicts: BTreeMap<NodeId, Option<bool>>,
    pub done: bool,
    /// Who judges an attempt.
    feedback: FeedbackSource,
    words: &'static Wording,
}

/// What a chain method does next, after [`Chain::next`] has done what is shared.
pub enum Next {
    /// Nothing more now (waiting, judged without a call, stopped): this progress.
    Done(Progress),
    /// The first attempt, under the root.
    First,
    /// This attempt failed and the budget allows another.
    After(NodeId),
}

impl Chain {
    pub fn new(words: &'static Wording, feedback: FeedbackSource) -> Chain {
        Chain { current: None, waiting: None, verdicts: BTreeMap::new(), done: false, feedback, words }
    }

    /// The attempt's number in its chain (the first is 1).
    pub fn attempt_no(core: &Core, node: NodeId) -> usize {
        core.tree.node(node).depth
    }

    pub fn label(&self, core: &mut Core, node: NodeId) {
        let n = core.tree.node(node);
        let answer = n.answer.clone().unwrap_or_else(|| "no answer".into());
        let verdict = match self.verdicts.get(&node) {
            Some(v) => verdict_text(*v),
            None => "… not judged yet",
        };
        let end = (self.words.label_end)(n);
        let label = format!("{} {} · answer {answer} · {verdict}{end}", self.words.noun, Self::attempt_no(core, node));
        core.set_label(node, label);
    }

    /// Record feedback on `node`: the note, the verdict, the label and a transcript line.
    fn judged(&mut self, core: &mut Core, node: NodeId, verdict: Option<bool>, text: &str, by: &str) {
        core.set_note(node, FEEDBACK_NOTE, text);
        self.verdicts.insert(node, verdict);
        self.label(core, node);
        let first = text.lines().next().unwrap_or("").trim();
        let w = self.words;
        let n = Self::attempt_no(core, node);
        core.log(format!("{by} {} {} {n} ({node}): {} — {first}", w.judged_as, w.noun, verdict_text(verdict)));
        if verdict.is_none() {
            core.log(format!("{} {node} has no VERDICT line and states no verdict; taken as incorrect", w.feedback_of));
        }
    }

    fn stop(&mut self, core: &mut Core, why: String) -> Progress {
        core.log(why);
        self.done = true;
        Progress::Moved
    }

    /// What is shared of a step: wait for a reply in flight; judge the latest attempt
    /// (the checker, or a feedback call); stop at a correct one or after `most`
    /// attempts. Otherwise the method asks for the first attempt or the next.
    pub fn next(&mut self, core: &mut Core, fb: &dyn Feedback, most: usize) -> Next {
        if self.waiting.is_some() {
            return Next::Done(Progress::Stuck(format!("{} is waiting for a reply", self.words.method)));
        }
        let Some(node) = self.current else {
            return Next::First;
        };
        match self.verdicts.get(&node).copied() {
            None => Next::Done(self.judge(core, fb, node)),
            Some(Some(true)) => {
                let why = (self.words.correct)(Self::attempt_no(core, node), node);
                Next::Done(self.stop(core, why))
            }
            Some(_) => {
                let n = Self::attempt_no(core, node);
                if n >= most {
                    let why = (self.words.spent)(n);
                    return Next::Done(self.stop(core, why));
                }
                Next::After(node)
            }
        }
    }

    /// Judge attempt `node`: the task's checker at once, or a feedback call.
    fn judge(&mut self, core: &mut Core, fb: &dyn Feedback, node: NodeId) -> Progress {
        match self.feedback {
            FeedbackSource::Oracle => {
                let (ok, text) = oracle_feedback(core, node);
                self.judged(core, node, Some(ok), &text, "the checker's");
                Progress::Moved
            }
            FeedbackSource::SelfCheck => {
                let attempt = core.tree.node(node).path.clone();
                let prompt = fb.feedback_prompt(&core.x, &attempt);
                self.ask(core, Waiting::Feedback(node), prompt)
            }
        }
    }

    /// Issue the call `waiting` names (an attempt, feedback or a reflection) and wait for it.
    pub fn ask(&mut self, core: &mut Core, waiting: Waiting, prompt: Prompt) -> Progress {
        let tag = match waiting {
            Waiting::Attempt(_) => TAG_ATTEMPT,
            Waiting::Feedback(_) => TAG_FEEDBACK,
            Waiting::Reflection(_) => TAG_REFLECT,
        };
        issue(core, waiting.node(), tag, prompt);
        self.waiting = Some(waiting);
        Progress::Issued(1)
    }

    /// All replies are in: a call that came back without what it asked for (failed, or
    /// empty) ends the run, and the last attempt stands.
    pub fn settle(&mut self, core: &mut Core) {
        match self.waiting.take() {
            Some(Waiting::Attempt(parent)) => {
                core.log((self.words.no_attempt)(parent));
                self.done = true;
            }
            Some(Waiting::Feedback(node) | Waiting::Reflection(node)) => {
                core.log((self.words.no_judgement)(node));
                self.done = true;
            }
            None => {}
        }
    }

    /// The outcome: the latest attempt's answer.
    pub fn outcome(&self, core: &mut Core) -> Outcome {
        let finals: Vec<NodeId> = self.current.filter(|&n| core.usable(n)).into_iter().collect();
        core.finalize(finals)
    }

    /// Pruning the latest attempt (or one before it) goes on from the attempt above the pruned one.
    pub fn on_prune(&mut self, core: &mut Core, node: NodeId) {
        if self.waiting.is_some_and(|w| inside(core, w.node(), node)) {
            self.waiting = None;
        }
        if self.current.is_some_and(|cur| inside(core, cur, node)) {
            self.current = core.tree.node(node).parent.filter(|&p| p != core.tree.root());
        }
    }

    /// A reply to an attempt or to feedback that is awaited; `false` for another reply
    /// (a reflection, which the method reads, or one no longer awaited).
    pub fn on_reply(&mut self, core: &mut Core, node: NodeId, tag: u32, reply: &LlmResponse) -> bool {
        match (tag, self.waiting) {
            (TAG_ATTEMPT, Some(Waiting::Attempt(parent))) if parent == node => {
                if let Some(id) = add_attempt(core, node, reply, Origin::Model) {
                    self.waiting = None;
                    self.current = Some(id);
                    self.label(core, id);
                }
                true
            }
            (TAG_FEEDBACK, Some(Waiting::Feedback(attempt))) if attempt == node => {
                let (verdict, text) = read_verdict(core, &reply_text(reply));
                let text = if text.is_empty() { format!("(the {} was empty)", self.words.feedback_name) } else { text };
                self.waiting = None;
                self.judged(core, node, verdict, &text, "the model's");
                true
            }
            _ => false,
        }
    }

    /// Leave the named attempt (or the latest) and go on from the one before it.
    pub fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String> {
        let Some(leave) = to.or(self.current).filter(|&n| n != core.tree.root()) else {
            return Err("nothing to backtrack from yet: step the run first".into());
        };
        core.cancel_scheduled();
        self.waiting = None;
        core.set_status(leave, NodeStatus::Dropped(DropReason::Backtracked));
        core.emit(Event::Backtracked { from: vec![leave], to: core.tree.node(leave).parent.into_iter().collect() });
        self.current = core.tree.node(leave).parent.filter(|&p| p != core.tree.root());
        self.done = false;
        Ok(())
    }

    /// Go on from `node` (the root: a new first attempt).
    pub fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        self.current = (node != core.tree.root()).then_some(node);
        if node != core.tree.root() && core.tree.node(node).status != NodeStatus::Candidate {
            core.set_status(node, NodeStatus::Candidate);
        }
        core.cancel_scheduled();
        self.waiting = None;
        self.done = false;
        Ok(())
    }

    /// Drop what is in flight before a person's edit reshapes the chain.
    pub fn restart(&mut self, core: &mut Core) {
        core.cancel_scheduled();
        self.waiting = None;
        self.done = false;
    }

    /// The explorer's step counter: the attempt being made or the latest.
    pub fn step(&self, core: &Core) -> usize {
        match (self.current, self.waiting) {
            (_, Some(Waiting::Attempt(parent))) => core.tree.node(parent).depth + 1,
            (Some(n), _) => core.tree.node(n).depth,
            (None, _) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Play `script` (a purpose and a reply each; `None` fails the call) on `method`;
    /// the log lines and the first attempt's label.
    fn logs(
        method: crate::engine::MethodKind,
        script: &[(crate::protocol::Purpose, Option<&str>)],
    ) -> (Vec<String>, Option<String>) {
        use crate::engine::testkit::*;
        let mut e = engine("4 5 6 10", from_header(method, &[]));
        let mut fx = e.handle(run_cmd());
        let mut lines = Vec::new();
        for (purpose, text) in script {
            lines.extend(events(&fx).into_iter().filter_map(|ev| match ev {
                Event::Log { text } => Some(text),
                _ => None,
            }));
            let (call, request) = calls(&fx).pop().expect("a call is waiting");
            assert_eq!(request.purpose, *purpose, "{method}");
            fx = e.handle(match text {
                Some(text) => reply(call, &[text]),
                None => failure(call, "the server went away"),
            });
        }
        lines.extend(events(&fx).into_iter().filter_map(|ev| match ev {
            Event::Log { text } => Some(text),
            _ => None,
        }));
        assert!(e.is_finished(), "{method}: {lines:?}");
        (lines, e.tree().node(NodeId(1)).label.clone())
    }

    #[test]
    fn the_shared_chain_says_each_methods_own_words() {
        use crate::engine::methods::{reflexion, self_refine};
        use crate::protocol::Purpose;
        let wrong = "Answer: (4 + 5) + 6 + 10 = 24";
        let (lines, label) = logs(
            self_refine::KIND,
            &[(Purpose::Cot, Some(wrong)), (Purpose::Feedback, Some("Looks fine.")), (Purpose::Refine, None)],
        );
        assert_eq!(
            lines,
            [
                "the model's feedback on attempt 1 (#1): ? no verdict — Looks fine.",
                "the feedback on #1 has no VERDICT line and states no verdict; taken as incorrect",
                "no attempt came back for #1 (the call failed or the reply was empty); stopping",
            ]
        );
        assert_eq!(label.as_deref(), Some("attempt 1 · answer (4 + 5) + 6 + 10 = 24 · ? no verdict"));
        let (lines, label) = logs(
            reflexion::KIND,
            &[
                (Purpose::Cot, Some(wrong)),
                (Purpose::Feedback, Some("Looks fine.")),
                (Purpose::Reflect, Some("Multiply.")),
                (Purpose::Cot, None),
            ],
        );
        assert_eq!(
            lines,
            [
                "the model's judgement of trial 1 (#1): ? no verdict — Looks fine.",
                "the self-evaluation of #1 has no VERDICT line and states no verdict; taken as incorrect",
                "reflection on trial 1 (#1), kept for the next trials: Multiply.",
                "no trial came back after #1 (the call failed or the reply was empty); stopping",
            ]
        );
        assert_eq!(label.as_deref(), Some("trial 1 · answer (4 + 5) + 6 + 10 = 24 · ? no verdict · reflected"));
    }

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
