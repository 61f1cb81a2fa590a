//! The interface a task gives the engine. A task is a small core — its info, the io and
//! chain-of-thought prompts, reading and checking an answer — plus the capabilities it
//! has, each returned only by a task that has it: tree search ([`TreeSearch`], with a
//! value and/or vote evaluator), ReAct steps ([`ReactSteps`]), feedback on attempts
//! ([`Feedback`]), a judge of finished outputs ([`OutcomeJudge`]) and a board view
//! ([`Board`]). A method states which capabilities it needs (`MethodInfo::needs`); the
//! engine refuses a method its task cannot serve, naming what is missing. No capability
//! falls back to another prompt. Tasks are pure logic (no I/O).

pub mod feedback;
pub mod react;
pub mod tree;
pub mod view;

use std::borrow::Cow;
use std::collections::BTreeMap;

pub use feedback::{read_verdict, Feedback, FeedbackContext};
pub use react::{NativeTools, ReactStep, ReactSteps};
pub use tree::{DfsStyle, Proposal, ProposalScores, Pruning, TreeSearch, ValueEvaluator, VoteEvaluator};
pub use view::{Board, BoardCell, BoardView, CellClass, ClueRow, JudgeRequest, Judgment, OutcomeJudge};

use super::{Outcome, SearchTree};
use crate::protocol::Prompt;

/// The node metric under which a child keeps its proposal's own score (see
/// [`ProposalScores`]).
pub const PROPOSAL_SCORE: &str = "proposal";

/// What kind of answer a task checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// An arithmetic expression or a number, checked exactly.
    Expression,
    /// A short text answer, scored by exact match and token F1 (QA).
    ShortText,
    /// One label of a fixed set (e.g. SUPPORTS / REFUTES / NOT ENOUGH INFO).
    Label,
}

/// Text of a [`TaskInfo`]: borrowed for the built-in tasks, owned for tasks defined at
/// runtime (from a file).
pub type InfoText = Cow<'static, str>;

/// What a task says about itself, so generic layers (the explorer, the CLI, the
/// runner) need not know it by name. Built-in tasks give it as a `const`; a task
/// defined at runtime builds one with owned text.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskInfo {
    /// The task's name (sessions, `--task`).
    pub name: InfoText,
    /// A line for help.
    pub about: InfoText,
    /// What one input is called: `puzzle`, `question`, `claim`.
    pub input_noun: InfoText,
    /// How a person writes a new input in the explorer, short enough to follow "type ...":
    /// `a puzzle number or four numbers`.
    pub input_hint: InfoText,
    /// Inputs a person could type (a problem number first, if the task has a list): the
    /// explorer's new-input placeholder.
    pub input_examples: Cow<'static, [InfoText]>,
    /// The problem the explorer opens on when none is named.
    pub default_problem: usize,
    pub answer_kind: AnswerKind,
    /// Its problems come from a file (`--data`), not built in.
    pub reads_data: bool,
}

/// What a method may need of a task beyond its core (see `MethodInfo::needs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// Tree-search steps ([`TreeSearch`]).
    TreeSteps,
    /// A value evaluator ([`ValueEvaluator`]).
    ValueEvaluator,
    /// A vote evaluator ([`VoteEvaluator`]).
    VoteEvaluator,
    /// Proposals scored by the task ([`ProposalScores`]).
    ProposalScores,
    /// A dead-end rule ([`Pruning`]).
    Pruning,
    /// ReAct steps with tools ([`ReactSteps`]).
    ReactSteps,
    /// Native tool calling ([`NativeTools`]).
    NativeTools,
    /// Feedback prompts ([`Feedback`]).
    Feedback,
}

impl Capability {
    /// What the task lacks, for "X has no ...".
    pub fn describe(self) -> &'static str {
        match self {
            Capability::TreeSteps => "tree-search steps",
            Capability::ValueEvaluator => "value evaluator",
            Capability::VoteEvaluator => "vote evaluator",
            Capability::ProposalScores => "scored proposals (for --child-order proposal)",
            Capability::Pruning => "dead-end rule (for --prune task)",
            Capability::ReactSteps => "ReAct steps with tools",
            Capability::NativeTools => "native tool-calling prompt (for --tool-mode native)",
            Capability::Feedback => "feedback prompts",
        }
    }

    /// The capability this one is part of (an evaluator is part of tree search), if any:
    /// a task without that one is said to lack it alone.
    pub fn part_of(self) -> Option<Capability> {
        match self {
            Capability::ValueEvaluator
            | Capability::VoteEvaluator
            | Capability::ProposalScores
            | Capability::Pruning => Some(Capability::TreeSteps),
            Capability::NativeTools => Some(Capability::ReactSteps),
            Capability::TreeSteps | Capability::ReactSteps | Capability::Feedback => None,
        }
    }

    /// Whether `task` has this capability.
    pub fn of(self, task: &dyn Task) -> bool {
        let tree = task.tree();
        match self {
            Capability::TreeSteps => tree.is_some(),
            Capability::ValueEvaluator => tree.is_some_and(|t| t.value().is_some()),
            Capability::VoteEvaluator => tree.is_some_and(|t| t.vote().is_some()),
            Capability::ProposalScores => tree.is_some_and(|t| t.proposal_scores().is_some()),
            Capability::Pruning => tree.is_some_and(|t| t.pruning().is_some()),
            Capability::ReactSteps => task.react().is_some(),
            Capability::NativeTools => task.react().is_some_and(|r| r.native().is_some()),
            Capability::Feedback => task.feedback().is_some(),
        }
    }
}

/// The core of a task, and the capabilities it has.
pub trait Task: Send + Sync {
    /// What the task says about itself.
    fn info(&self) -> &TaskInfo;
    fn name(&self) -> &str {
        &self.info().name
    }
    fn io_prompt(&self, x: &str) -> Prompt;
    fn cot_prompt(&self, x: &str) -> Prompt;
    /// The answer a final path or a whole io/cot reply states, if any.
    fn extract_answer(&self, x: &str, y: &str) -> Option<String>;
    /// Whether the answer of `y` was read from a fallback (its last line, because it
    /// has no answer line), for the run's count of such answers; `None` when the task
    /// cannot tell (then not counted).
    fn answer_from_fallback(&self, _x: &str, _y: &str) -> Option<bool> {
        None
    }
    /// Exact check of an answer.
    fn check(&self, x: &str, answer: &str) -> Result<(), String>;
    /// Partial credit for an answer in [0, 1]: token F1 for QA, a share of the
    /// sentences for writing; a task without partial credit scores 1 or 0 by `check`.
    fn score(&self, x: &str, answer: &str) -> f64 {
        if self.check(x, answer).is_ok() {
            1.0
        } else {
            0.0
        }
    }
    /// The program that judges `answer` to `x`, for a task whose check is one (a task
    /// file's `[check] command`): the engine never runs it, and `check` and `score` are
    /// then not asked (see [`crate::engine::check`]).
    fn check_command(&self, _x: &str, _answer: &str) -> Option<crate::engine::CheckRequest> {
        None
    }
    /// How the task reads an answer from a reply, for a message about answers it could not
    /// read (a task file: `[answer] read = "boxed"`). `None`: its own way, unnamed.
    fn answer_rule(&self) -> Option<String> {
        None
    }
    /// Whether the task judges answers or steps with programs ([`Task::check_command`],
    /// [`TreeSearch::step_command`]): the engine then holds an input that needs a
    /// verdict until the verdict is in.
    fn runs_checks(&self) -> bool {
        false
    }
    /// Normal form of an answer for majority voting; by default its words joined by one space.
    fn answer_key(&self, answer: &str) -> String {
        answer.split_whitespace().collect::<Vec<_>>().join(" ")
    }
    /// How the task's prompts are laid out (`--prompt-style`): a task built with chat
    /// templates says chat; one without them is reference only, and `tasks::build`
    /// refuses chat for it in so many words.
    fn prompt_style(&self) -> crate::engine::PromptStyle {
        crate::engine::PromptStyle::Reference
    }
    /// A short description of state `y` for people (e.g. "numbers left: 6 9 10"), if the
    /// task has one for this state.
    fn describe_state(&self, _x: &str, _y: &str) -> Option<String> {
        None
    }
    /// The task's own figures of a finished search (crosswords: letter, word and game
    /// accuracy of the output and of the best state visited), by name, each a share from
    /// 0 to 1 (printed as a percentage); a run's summary gives their means over problems.
    /// A task without figures of its own has none.
    fn metrics(&self, _x: &str, _tree: &SearchTree, _outcome: &Outcome) -> BTreeMap<String, f64> {
        BTreeMap::new()
    }
    /// Whether metric `name` is a share from 0 to 1 (printed as a percentage, the default)
    /// rather than a plain score (printed as it is, e.g. a coherency of 1 to 10).
    fn metric_is_share(&self, _name: &str) -> bool {
        true
    }

    /// Whether the simulated model can play a run of `params` on this task, for a task
    /// whose player is not registered with it by name (a task file plays from its gold
    /// answers): `Err` is the line that says why not. `None`: the registry decides.
    fn sim_plays(&self, _params: &crate::engine::Params) -> Option<Result<(), String>> {
        None
    }

    // The capabilities: `None` is "the task has none", and a method that needs one is
    // refused on this task before it starts.

    /// Tree search over the task's steps.
    fn tree(&self) -> Option<&dyn TreeSearch> {
        None
    }
    /// ReAct steps with tools.
    fn react(&self) -> Option<&dyn ReactSteps> {
        None
    }
    /// Feedback prompts (self-refine, reflexion).
    fn feedback(&self) -> Option<&dyn Feedback> {
        None
    }
    /// A judge of finished outputs.
    fn judge(&self) -> Option<&dyn OutcomeJudge> {
        None
    }
    /// A board drawn for a state.
    fn board(&self) -> Option<&dyn Board> {
        None
    }
}

/// The value classes of `task`'s value evaluator, for badges and colours; empty for a
/// task without one (its values, if any, are votes or plain numbers).
pub fn value_classes(task: &dyn Task) -> &[(&'static str, f64)] {
    match task.tree().and_then(|t| t.value()) {
        Some(v) => v.value_classes(),
        None => &[],
    }
}
