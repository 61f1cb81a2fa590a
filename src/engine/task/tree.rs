//! The tree-search capability: a task whose output is built step by step, with the
//! generator's prompts and parsers and the evaluators that judge partial outputs.

pub use crate::engine::methods::tot_dfs::DfsStyle;
use crate::engine::Score;
use crate::protocol::Prompt;

/// One candidate next state, as parsed from a model reply or a person's edit.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The new thought (one step).
    pub thought: String,
    /// The whole partial output after this step.
    pub path: String,
    /// Why the task rejects this step, if it does (kept as a rejected candidate).
    pub problem: Option<String>,
}

/// Tree search (Tree of Thoughts, MCTS): the steps, how to propose or sample the next
/// one and read it, and which evaluators judge a state. A task without it answers whole.
pub trait TreeSearch {
    /// Number of thought steps (T in the paper): a state this deep is final.
    fn default_steps(&self) -> usize;
    /// Prompt to propose several next steps from partial output `y`.
    fn propose_prompt(&self, x: &str, y: &str) -> Prompt;
    /// Prompt to sample one next step from `y`.
    fn sample_prompt(&self, x: &str, y: &str) -> Prompt;
    /// Split a propose reply into candidates. Never fails: bad lines become candidates with a problem.
    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal>;
    /// Read a sampled continuation as one candidate.
    fn parse_sample(&self, x: &str, y: &str, reply: &str) -> Proposal;
    /// A person's text as the next step after `y`.
    fn parse_edit(&self, x: &str, y: &str, text: &str) -> Proposal;
    /// The value evaluator (`--evaluator value`), if the task has one.
    fn value(&self) -> Option<&dyn ValueEvaluator>;
    /// The vote evaluator (`--evaluator vote`), if the task has one.
    fn vote(&self) -> Option<&dyn VoteEvaluator>;
    /// How tot-dfs searches this task where its parameters do not say (the paper's
    /// settings for the task; `DfsStyle::default()` is its Algorithm 2).
    fn dfs_style(&self) -> DfsStyle;
    /// The program that judges proposal `p` after `y`, for a task that checks its steps
    /// with one (a task file's `step_command`; none for a proposal with a problem
    /// already). The engine never runs it: see [`crate::engine::check`].
    fn step_command(&self, _x: &str, _y: &str, _p: &Proposal) -> Option<crate::engine::CheckRequest> {
        None
    }
    /// Proposals that carry their own scores (crosswords: confidences), if the task's do.
    fn proposal_scores(&self) -> Option<&dyn ProposalScores> {
        None
    }
    /// The task's own rule that an evaluated state is a dead end, if it has one.
    fn pruning(&self) -> Option<&dyn Pruning> {
        None
    }
}

/// Values a state: a prompt per state and the value read from its samples.
pub trait ValueEvaluator {
    /// Prompt asking how promising state `y` is.
    fn value_prompt(&self, x: &str, y: &str) -> Prompt;
    /// The evaluator's value classes, lowest first, with the value each sample adds
    /// (e.g. impossible 0.001, likely 1, sure 20): for badges, colours and scaling
    /// values to rewards. Empty when values are plain numbers.
    fn value_classes(&self) -> &[(&'static str, f64)];
    /// Value from the evaluator's samples, and the class read from each.
    fn parse_value(&self, x: &str, y: &str, samples: &[String]) -> (f64, Vec<String>);
    /// A value the task fixes without asking, with the reason (e.g. a last step that
    /// gives no answer is worth 0); `None` asks. Skipped in lenient (reference) mode.
    fn fixed_value(&self, x: &str, y: &str) -> Option<(f64, String)>;
}

/// Votes among sibling states: one prompt listing them, a choice read from each sample.
pub trait VoteEvaluator {
    fn vote_prompt(&self, x: &str, ys: &[String]) -> Prompt;
    /// Which of `n_choices` states a vote sample chose (0-based), if it is readable.
    fn parse_vote(&self, reply: &str, n_choices: usize) -> Option<usize>;
}

/// Proposals with their own scores: a propose call asks `n_generate` samples, and
/// their candidates are merged; each child keeps its score as the node metric
/// [`super::PROPOSAL_SCORE`] (`tot-dfs --child-order proposal` tries them in that order).
pub trait ProposalScores {
    /// The candidates of all samples of one propose call, each with its score, best first.
    fn merge_proposals(&self, x: &str, y: &str, replies: &[String]) -> Vec<(Proposal, f64)>;
}

/// The task's rule that an evaluated state is a dead end (`tot-dfs --prune task`).
pub trait Pruning {
    /// Why state `y` valued `score` is a dead end; `None` keeps it.
    fn prune_reason(&self, x: &str, y: &str, score: &Score) -> Option<String>;
}
