//! The interface a task gives the engine: it renders prompts, parses replies, says
//! when a state is final and checks answers. Tasks are pure logic (no I/O).

use super::request::{Prompt, ToolDef};

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

/// One ReAct step as read from a model reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReactStep {
    pub thought: Option<String>,
    /// The tool and its argument.
    pub action: Option<(String, String)>,
    /// Why the reply cannot be used (becomes the observation; a bad call).
    pub problem: Option<String>,
    /// Further actions the reply wrote after the first, as written: noted on the step, not taken.
    pub extra_actions: Vec<String>,
    /// The reply did not split into a thought and an action (the ReAct code's bad call):
    /// its first line is the thought, and the model is asked again for the action alone.
    pub ask_action: bool,
}

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

/// What a task says about itself, so generic layers (the explorer, the CLI, the
/// runner) need not know it by name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskInfo {
    /// The task's name (sessions, `--task`).
    pub name: &'static str,
    /// A line for help.
    pub about: &'static str,
    /// What one input is called: `puzzle`, `question`, `claim`.
    pub input_noun: &'static str,
    /// How a person writes a new input in the explorer, short enough to follow "type ...":
    /// `a puzzle number or four numbers`.
    pub input_hint: &'static str,
    /// Inputs a person could type (a problem number first, if the task has a list): the
    /// explorer's new-input placeholder.
    pub input_examples: &'static [&'static str],
    /// The problem the explorer opens on when none is named.
    pub default_problem: usize,
    pub answer_kind: AnswerKind,
    /// The offline simulated model can play it (answers its requests from the task's logic).
    pub sim_plays: bool,
    /// Its problems come from a file (`--data`), not built in.
    pub reads_data: bool,
}

pub trait Task: Send + Sync {
    /// What the task says about itself.
    fn info(&self) -> &'static TaskInfo;
    fn name(&self) -> &str {
        self.info().name
    }
    /// Number of thought steps for tree search (T in the paper).
    fn default_steps(&self) -> usize;
    fn io_prompt(&self, x: &str) -> Prompt;
    fn cot_prompt(&self, x: &str) -> Prompt;
    // Tree search (ToT). The defaults describe a task that answers whole (QA): its
    // "steps" are whole answers, it has no evaluator, and the CLI refuses tree methods
    // for it; the prompts fall back to chain of thought.

    /// Prompt to propose several next steps from partial output `y`.
    fn propose_prompt(&self, x: &str, _y: &str) -> Prompt {
        self.cot_prompt(x)
    }
    /// Prompt to sample one next step from `y`.
    fn sample_prompt(&self, x: &str, _y: &str) -> Prompt {
        self.cot_prompt(x)
    }
    /// Split a propose reply into candidates. Never fails: bad lines become candidates with a problem.
    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal> {
        vec![self.parse_edit(x, y, reply)]
    }
    /// Read a sampled continuation as one candidate.
    fn parse_sample(&self, x: &str, y: &str, reply: &str) -> Proposal {
        self.parse_edit(x, y, reply)
    }
    /// A person's text as the next step after `y`.
    fn parse_edit(&self, _x: &str, y: &str, text: &str) -> Proposal {
        Proposal { thought: text.trim().to_string(), path: format!("{y}{}\n", text.trim()), problem: None }
    }
    /// Whether states can be valued or voted on (tree search). Tasks that answer whole
    /// have no evaluator, so an edited answer is not sent to one.
    fn has_evaluator(&self) -> bool {
        false
    }
    /// Prompt asking how promising state `y` is.
    fn value_prompt(&self, x: &str, _y: &str) -> Prompt {
        self.cot_prompt(x)
    }
    /// A value the task fixes without asking, with the reason (e.g. a last step that
    /// gives no answer is worth 0). Skipped in lenient (reference) mode.
    fn fixed_value(&self, _x: &str, _y: &str) -> Option<(f64, String)> {
        None
    }
    /// The evaluator's value classes, lowest first, with the value each sample adds
    /// (e.g. impossible 0.001, likely 1, sure 20): for badges, colours and scaling
    /// values to rewards. Empty when values are plain numbers.
    fn value_classes(&self) -> &[(&'static str, f64)] {
        &[]
    }
    /// Value from the evaluator's samples, and the class read from each.
    fn parse_value(&self, _x: &str, _y: &str, _samples: &[String]) -> (f64, Vec<String>) {
        (0.0, vec![])
    }
    fn vote_prompt(&self, x: &str, _ys: &[String]) -> Prompt {
        self.cot_prompt(x)
    }
    /// Which of `n_choices` states a vote sample chose (0-based), if it is readable.
    fn parse_vote(&self, _reply: &str, _n_choices: usize) -> Option<usize> {
        None
    }
    /// The answer a final path or a whole io/cot reply states, if any.
    fn extract_answer(&self, x: &str, y: &str) -> Option<String>;
    /// Exact check of an answer.
    fn check(&self, x: &str, answer: &str) -> Result<(), String>;
    /// ReAct: the prompt for step `step` given the trajectory text so far, if the task supports ReAct.
    fn react_prompt(&self, _x: &str, _trajectory: &str, _step: usize) -> Option<Prompt> {
        None
    }
    /// ReAct with native tool calling (`--tool-mode native`): the prompt for step `step`,
    /// asking the model to think in text and call exactly one of [`Task::react_tools`].
    /// `None` if the task has no such prompt.
    fn react_native_prompt(&self, _x: &str, _trajectory: &str, _step: usize) -> Option<Prompt> {
        None
    }
    /// ReAct: the tools the agent may call, as native tool definitions (empty if none).
    fn react_tools(&self) -> Vec<ToolDef> {
        Vec::new()
    }
    /// ReAct: read a step from a reply.
    fn parse_react(&self, _reply: &str, _step: usize) -> ReactStep {
        ReactStep { problem: Some("this task has no ReAct format".into()), ..ReactStep::default() }
    }
    /// Partial credit for an answer in [0, 1] (token F1 for QA); 1 or 0 by `check` otherwise.
    fn score(&self, x: &str, answer: &str) -> f64 {
        if self.check(x, answer).is_ok() {
            1.0
        } else {
            0.0
        }
    }
    /// A short description of state `y` for people (e.g. "numbers left: 6 9 10").
    fn describe_state(&self, _x: &str, _y: &str) -> Option<String> {
        None
    }
    /// Normal form of an answer for majority voting.
    fn answer_key(&self, answer: &str) -> String {
        answer.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}
