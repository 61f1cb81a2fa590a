//! The interface a task gives the engine: it renders prompts, parses replies, says
//! when a state is final and checks answers. Tasks are pure logic (no I/O).

use std::collections::BTreeMap;

pub use super::methods::tot_dfs::DfsStyle;
use super::request::{Message, Prompt, Purpose, Role, ToolDef};
use super::{Outcome, Score, SearchTree};

/// The node metric under which a child keeps its proposal's own score (see
/// [`Task::scores_proposals`]).
pub const PROPOSAL_SCORE: &str = "proposal";

/// A model judgment the engine asks for about an output once the method is done (see
/// [`Task::outcome_judge`]): the prompt (purpose [`Purpose::Judge`]) and its sample count.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRequest {
    pub prompt: Prompt,
    pub n: u32,
}

/// What a task reads from a judge's samples: metrics for the judged node (which
/// [`Task::metrics`] then reads from the tree) and a line for its detail pane.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Judgment {
    pub metrics: Vec<(String, f64)>,
    pub note: String,
}

/// A state drawn as a grid (crosswords' board): cells row by row with a class each,
/// labels for the rows and columns, and the clues with their letters and verdicts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoardView {
    pub rows: Vec<Vec<BoardCell>>,
    pub row_labels: Vec<String>,
    pub column_labels: Vec<String>,
    pub clues: Vec<ClueRow>,
}

/// One cell: its letter (`None` when empty) and its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardCell {
    pub letter: Option<char>,
    pub class: CellClass,
}

/// How a cell is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellClass {
    Empty,
    /// Filled by an earlier step.
    Filled,
    /// Written by this state's own step.
    Changed,
    /// This state's step overwrote a different letter here.
    Conflict,
}

/// One clue of a board: label (`h1`), clue text, current letters (`_` blank), status
/// (`unfilled`, `filled`, `changed`) and the evaluator's verdict, if it gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClueRow {
    pub label: String,
    pub clue: String,
    pub letters: String,
    pub status: String,
    pub verdict: Option<String>,
}

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

    // Self-Refine and Reflexion. The defaults build every prompt from the task's own
    // chain-of-thought prompt, so every task has them; a task may override any.

    /// Ask the model to check `attempt` step by step and end with `VERDICT: correct` or
    /// `VERDICT: incorrect`. Context: the cot context plus `"attempt"`.
    fn feedback_prompt(&self, x: &str, attempt: &str) -> Prompt {
        let mut prompt = after_attempt(self.cot_prompt(x), Purpose::Feedback, attempt, FEEDBACK_REQUEST.to_string());
        add_context(&mut prompt, &[("attempt", attempt.into())]);
        prompt
    }

    /// Ask for a complete new attempt (in the cot reply's format) that follows `feedback`.
    /// Context: the cot context plus `"attempt"` and `"feedback"`.
    fn refine_prompt(&self, x: &str, attempt: &str, feedback: &str) -> Prompt {
        let ask = format!("{REFINE_REQUEST_HEAD}\n\n{}\n\n{REFINE_REQUEST_TAIL}", feedback.trim());
        let mut prompt = after_attempt(self.cot_prompt(x), Purpose::Refine, attempt, ask);
        add_context(&mut prompt, &[("attempt", attempt.into()), ("feedback", feedback.into())]);
        prompt
    }

    /// Ask for a short reflection on a failed `attempt` (what went wrong, what to do
    /// differently). Context: the cot context plus `"attempt"` and `"feedback"`.
    fn reflect_prompt(&self, x: &str, attempt: &str, feedback: &str) -> Prompt {
        let ask = format!("{REFLECT_REQUEST_HEAD}\n\n{}\n\n{REFLECT_REQUEST_TAIL}", feedback.trim());
        let mut prompt = after_attempt(self.cot_prompt(x), Purpose::Reflect, attempt, ask);
        add_context(&mut prompt, &[("attempt", attempt.into()), ("feedback", feedback.into())]);
        prompt
    }

    /// Reflexion's later trials: the cot prompt with the reflections added to its (last)
    /// user message. Context: the cot context plus `"reflections"`.
    fn reflexion_cot_prompt(&self, x: &str, reflections: &[String]) -> Prompt {
        let mut prompt = self.cot_prompt(x);
        if reflections.is_empty() {
            return prompt;
        }
        let listed: Vec<String> = reflections.iter().map(|r| format!("- {}", r.trim())).collect();
        let add = format!("\n\n{REFLECTIONS_HEAD}\n{}\n{REFLECTIONS_TAIL}", listed.join("\n"));
        match prompt.messages.iter_mut().rev().find(|m| m.role == Role::User) {
            Some(m) => m.content.push_str(&add),
            None => prompt.messages.push(Message::user(add.trim_start())),
        }
        add_context(&mut prompt, &[("reflections", reflections.into())]);
        prompt
    }

    /// Read a feedback reply: the verdict of its last `VERDICT: correct|incorrect` line
    /// (`None` if it has none) and the feedback text.
    fn parse_feedback(&self, reply: &str) -> (Option<bool>, String) {
        (read_verdict(reply), reply.trim().to_string())
    }

    // Search-shape hooks (read by the engine and tot-dfs) and what the explorer and the
    // run summary show of a task's states. The defaults keep tasks as they were.

    /// Whether the task's proposals carry their own scores (crosswords: confidences):
    /// a propose call then asks `n_generate` samples, [`Task::merge_proposals`] combines
    /// them, and each child keeps its score as the node metric [`PROPOSAL_SCORE`].
    fn scores_proposals(&self) -> bool {
        false
    }
    /// The candidates of all samples of one propose call, each with its score, best
    /// first (called when [`Task::scores_proposals`]).
    fn merge_proposals(&self, x: &str, y: &str, replies: &[String]) -> Vec<(Proposal, f64)> {
        replies.iter().flat_map(|r| self.parse_proposals(x, y, r)).map(|p| (p, 0.0)).collect()
    }
    /// The task's own rule that an evaluated state is a dead end, with the reason
    /// (crosswords: a clue judged impossible); `None` keeps the state. `tot-dfs --prune task`.
    fn prune_reason(&self, _x: &str, _y: &str, _score: &Score) -> Option<String> {
        None
    }
    /// How tot-dfs searches this task where its parameters do not say (the paper's
    /// settings for the task).
    fn dfs_style(&self) -> DfsStyle {
        DfsStyle::default()
    }
    /// The task's own figures of a finished search (crosswords: letter, word and game
    /// accuracy of the output and of the best state visited), by name, each a share from
    /// 0 to 1 (printed as a percentage); a run's summary gives their means over problems.
    fn metrics(&self, _x: &str, _tree: &SearchTree, _outcome: &Outcome) -> BTreeMap<String, f64> {
        BTreeMap::new()
    }
    /// Whether metric `name` is a share from 0 to 1 (printed as a percentage, the default)
    /// rather than a plain score (printed as it is, e.g. a coherency of 1 to 10).
    fn metric_is_share(&self, _name: &str) -> bool {
        true
    }
    /// A model judgment of output `y` (one of [`Outcome::outputs`]) that the engine asks
    /// for when any method is done, before it finishes, as an ordinary recorded call on
    /// the output's node — so replay repeats it and a fork judges afresh. `None`: no
    /// judgment (the default).
    fn outcome_judge(&self, _x: &str, _y: &str) -> Option<JudgeRequest> {
        None
    }
    /// Read the judge's samples about output `y`; the metrics are set on its node.
    fn read_judgment(&self, _x: &str, _y: &str, _samples: &[String]) -> Judgment {
        Judgment::default()
    }
    /// State `y` drawn as a grid for the explorer, if the task has one, with the
    /// evaluator's verdicts from `score`.
    fn board(&self, _x: &str, _y: &str, _score: Option<&Score>) -> Option<BoardView> {
        None
    }
}

const FEEDBACK_REQUEST: &str = "Check the attempt above step by step: is every step right, and is the final \
answer correct? Say what is wrong, if anything. End with a line `VERDICT: correct` or `VERDICT: incorrect`.";
const REFINE_REQUEST_HEAD: &str = "Here is feedback on the attempt above:";
const REFINE_REQUEST_TAIL: &str = "Following this feedback, write a complete new attempt at the problem, in \
the same format as before, ending with the final answer.";
const REFLECT_REQUEST_HEAD: &str = "The attempt above was judged incorrect. The feedback was:";
const REFLECT_REQUEST_TAIL: &str = "In two or three sentences, reflect: what went wrong, and what will you do \
differently on the next attempt? Do not write a new attempt.";
const REFLECTIONS_HEAD: &str = "Reflections on your earlier attempts at this problem:";
const REFLECTIONS_TAIL: &str = "Use them to avoid the same mistakes.";

/// `prompt`'s messages, then `attempt` as the assistant's reply, then `ask` from the user.
fn after_attempt(mut prompt: Prompt, purpose: Purpose, attempt: &str, ask: String) -> Prompt {
    prompt.purpose = purpose;
    prompt.messages.push(Message { role: Role::Assistant, content: attempt.to_string() });
    prompt.messages.push(Message::user(ask));
    prompt
}

/// Add fields to a prompt's context object (a context that is not an object becomes one).
fn add_context(prompt: &mut Prompt, fields: &[(&str, serde_json::Value)]) {
    if !prompt.context.is_object() {
        prompt.context = serde_json::Value::Object(serde_json::Map::new());
    }
    if let Some(obj) = prompt.context.as_object_mut() {
        for (k, v) in fields {
            obj.insert(k.to_string(), v.clone());
        }
    }
}

/// The verdict of the last line that names one: `VERDICT: correct`, `**Verdict:** Incorrect`,
/// `Verdict - incorrect` (case, markdown and the separator do not matter).
pub fn read_verdict(reply: &str) -> Option<bool> {
    reply.lines().rev().find_map(|line| {
        let cleaned: String = line.to_lowercase().chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
        let words: Vec<&str> = cleaned.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "verdict")?;
        match words.get(at + 1..)?.iter().find(|w| !matches!(**w, "is" | "the"))? {
            &"correct" | &"right" => Some(true),
            &"incorrect" | &"wrong" | &"not" => Some(false),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_is_read_from_the_last_line_that_names_one() {
        for (reply, verdict) in [
            ("All steps check.\nVERDICT: correct", Some(true)),
            ("VERDICT: incorrect", Some(false)),
            ("**Verdict:** Incorrect", Some(false)),
            ("Verdict - incorrect.", Some(false)),
            ("verdict: CORRECT", Some(true)),
            ("> VERDICT: `correct`", Some(true)),
            ("VERDICT: correct\nOn second thought...\nVERDICT: incorrect", Some(false)),
            ("The verdict is not correct", Some(false)),
            ("The answer is correct.", None),
            ("VERDICT: unsure", None),
            ("", None),
        ] {
            assert_eq!(read_verdict(reply), verdict, "{reply:?}");
        }
    }

    #[test]
    fn the_generic_prompts_build_on_the_cot_prompt() {
        let task = crate::tasks::game24::Game24::builtin();
        let cot = task.cot_prompt("4 5 6 10");
        let fb = task.feedback_prompt("4 5 6 10", "Answer: 4 * 6 = 24");
        assert_eq!(fb.purpose, Purpose::Feedback);
        assert_eq!(fb.messages[..cot.messages.len()], cot.messages[..]);
        assert_eq!(fb.context["attempt"], "Answer: 4 * 6 = 24");
        assert_eq!(fb.context["task"], "game24");
        let reflect = task.reflect_prompt("4 5 6 10", "a", "it is wrong");
        assert_eq!(
            (reflect.purpose, &reflect.context["feedback"]),
            (Purpose::Reflect, &serde_json::json!("it is wrong"))
        );
        assert!(reflect.messages.last().unwrap().content.contains("it is wrong"));
        let plain = task.reflexion_cot_prompt("4 5 6 10", &[]);
        assert_eq!(plain, cot, "no reflections: the cot prompt itself");
        let with = task.reflexion_cot_prompt("4 5 6 10", &["first".into(), "second".into()]);
        assert_eq!(with.purpose, Purpose::Cot);
        assert_eq!(with.messages.len(), cot.messages.len());
        assert!(with
            .messages
            .last()
            .unwrap()
            .content
            .ends_with("- first\n- second\nUse them to avoid the same mistakes."));
        assert_eq!(task.parse_feedback("  x\nVERDICT: correct \n"), (Some(true), "x\nVERDICT: correct".to_string()));
    }
}
