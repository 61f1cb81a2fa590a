//! Game of 24: four numbers, + - * /, make 24. Thought steps follow the
//! Tree-of-Thoughts format `a op b = r (left: ...)`, four steps with the last one
//! `Answer: <expr> = 24`. Candidate and value semantics follow the reference
//! implementation (see `docs` in README): proposals are the reply's lines, values
//! are sure/likely/impossible mapped to 20/1/0.001 and summed over samples.
//!
//! The game is a thin task over `crate::arith`'s reach-a-target puzzles (the step grammar and
//! moves, the answer checker, the solver) with the target 24 and four numbers; its puzzle list
//! is `puzzles`.

pub mod puzzles;
pub mod sim;

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::{prompts, reply, Problem, TaskError, TaskOptions, TaskSource};
use crate::arith::steps::{check_step, numbers_left_text};
use crate::arith::{format_numbers, parse_numbers, Q};
use crate::engine::task::{DfsStyle, Feedback, TreeSearch, ValueEvaluator, VoteEvaluator};
use crate::engine::{AnswerKind, Prompt, PromptStyle, Proposal, Purpose, Task, TaskInfo};

const IO: prompts::Builtin = crate::builtin_prompt!("game24", "io.txt");
const COT: prompts::Builtin = crate::builtin_prompt!("game24", "cot.txt");
const PROPOSE: prompts::Builtin = crate::builtin_prompt!("game24", "propose.txt");
const VALUE: prompts::Builtin = crate::builtin_prompt!("game24", "value.txt");
const VALUE_LAST: prompts::Builtin = crate::builtin_prompt!("game24", "value_last.txt");
const VOTE: prompts::Builtin = crate::builtin_prompt!("game24", "vote.txt");

/// The value every puzzle must reach.
pub const TARGET: i64 = 24;

/// How many numbers a puzzle has.
pub const NUMBERS: usize = 4;

/// [`TARGET`] as a number.
pub fn target() -> Q {
    Q::from_integer(TARGET)
}

/// The exact checker of an answer to the puzzle `input` (see [`crate::arith::reach::check_answer`]).
pub fn check_answer(input: &[Q], answer: &str) -> Result<(), String> {
    crate::arith::reach::check_answer(input, answer, &target())
}

/// Whether 24 is reachable from `numbers`.
pub fn solvable(numbers: &[Q]) -> bool {
    crate::arith::solver::solvable(numbers, &target())
}

/// One expression that makes 24 from `numbers`, if there is one.
pub fn solve(numbers: &[Q]) -> Option<String> {
    crate::arith::solver::solve(numbers, &target())
}

/// The evaluator's classes and their values, in the order the reference sums them.
pub const VALUE_CLASSES: [(&str, f64); 3] = [("impossible", 0.001), ("likely", 1.0), ("sure", 20.0)];

/// Registration (see `tasks::REGISTRY`).
pub const INFO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("game24"),
    about: Cow::Borrowed("Game of 24: reach 24 with four numbers and + - * / (the Tree-of-Thoughts puzzles)"),
    input_noun: Cow::Borrowed("puzzle"),
    input_hint: Cow::Borrowed("a puzzle number or four numbers"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("900"), Cow::Borrowed("4 9 10 13")]),
    // The paper's first test puzzle.
    default_problem: 900,
    answer_kind: AnswerKind::Expression,
    reads_data: false,
};

pub struct Game24 {
    io: String,
    cot: String,
    propose: String,
    value: String,
    value_last: String,
    vote: String,
    style: PromptStyle,
    puzzles: Vec<(u32, Vec<Q>)>,
}

impl Game24 {
    /// Build for `tasks::REGISTRY`.
    pub fn build(
        info: &TaskInfo,
        options: &TaskOptions,
        _warnings: &mut Vec<String>,
    ) -> Result<Arc<dyn TaskSource>, TaskError> {
        super::no_data(info, options)?;
        Ok(Arc::new(Game24::styled(options.loader())?))
    }

    /// With the reference prompts (the built-in ones, or those in `prompt_dir`).
    pub fn new(prompt_dir: Option<&Path>) -> Result<Self, TaskError> {
        Game24::styled(prompts::Loader::new(prompt_dir, PromptStyle::Reference))
    }

    pub fn styled(loader: prompts::Loader) -> Result<Self, TaskError> {
        Ok(Game24 {
            io: loader.load(IO, &["input"])?,
            cot: loader.load(COT, &["input"])?,
            propose: loader.load(PROPOSE, &["numbers"])?,
            value: loader.load(VALUE, &["numbers"])?,
            value_last: loader.load(VALUE_LAST, &["input", "answer"])?,
            vote: loader.load(VOTE, &["input", "choices"])?,
            style: loader.style,
            puzzles: puzzles::puzzles().map_err(TaskError::Data)?,
        })
    }

    /// The built-in prompts only.
    pub fn builtin() -> Self {
        match Game24::new(None) {
            Ok(t) => t,
            // The built-ins are compiled in and covered by tests.
            Err(e) => unreachable!("built-in game24 assets are broken: {e}"),
        }
    }

    pub fn rank(&self, index: usize) -> Option<u32> {
        self.puzzles.get(index).map(|p| p.0)
    }
}

/// The numbers left after partial output `y`, as the reference reads them: the text
/// after `left: ` up to `)` on the last line, or the input when `y` is empty.
pub fn current_numbers_text(x: &str, y: &str) -> String {
    numbers_left_text(x, y)
}

/// Whether the last line of `y` states a final answer.
fn has_answer(y: &str) -> bool {
    y.to_lowercase().contains("answer")
}

/// Read one evaluator sample: the class named on its last non-empty line.
pub fn read_value_class(sample: &str) -> Option<&'static str> {
    reply::value_class(sample, &VALUE_CLASSES)
}

impl Task for Game24 {
    fn info(&self) -> &TaskInfo {
        &INFO
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Io,
            messages: prompts::render_messages(&self.io, &[("input", x)]),
            context: json!({"task": "game24", "input": x}),
            stop: vec![],
            max_tokens: Some(100),
        }
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Cot,
            messages: prompts::render_messages(&self.cot, &[("input", x)]),
            context: json!({"task": "game24", "input": x}),
            stop: vec![],
            max_tokens: Some(200),
        }
    }

    fn extract_answer(&self, _x: &str, y: &str) -> Option<String> {
        // The reference reads the last line; a reply with an explicit `Answer:` line is read there.
        reply::answer_line(y)
    }

    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let input = parse_numbers(x).ok_or_else(|| format!("cannot read the puzzle {x:?}"))?;
        check_answer(&input, answer)
    }

    fn describe_state(&self, x: &str, y: &str) -> Option<String> {
        if !y.trim().is_empty() && !reply::last_line(y).contains("left: ") {
            return None;
        }
        Some(format!("numbers left: {}", current_numbers_text(x, y)))
    }

    fn answer_key(&self, answer: &str) -> String {
        reply::expression_key(answer)
    }

    fn tree(&self) -> Option<&dyn TreeSearch> {
        Some(self)
    }

    fn prompt_style(&self) -> PromptStyle {
        self.style
    }

    fn feedback(&self) -> Option<&dyn Feedback> {
        Some(self)
    }
}

/// Self-Refine and Reflexion with the generic prompts over the cot prompt.
impl Feedback for Game24 {}

impl TreeSearch for Game24 {
    fn default_steps(&self) -> usize {
        4
    }

    fn propose_prompt(&self, x: &str, y: &str) -> Prompt {
        let numbers = current_numbers_text(x, y);
        let messages = if numbers.trim() == "24" {
            // All numbers are combined: ask for the whole expression, continuing the steps.
            prompts::render_then(&self.cot, &[("input", x)], y)
        } else {
            prompts::render_messages(&self.propose, &[("numbers", &numbers)])
        };
        Prompt {
            purpose: Purpose::Propose,
            messages,
            context: json!({"task": "game24", "input": x, "y": y, "numbers": numbers, "final": numbers.trim() == "24"}),
            stop: vec![],
            max_tokens: Some(400),
        }
    }

    fn sample_prompt(&self, x: &str, y: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Sample,
            messages: prompts::render_then(&self.cot, &[("input", x)], y),
            context: json!({"task": "game24", "input": x, "y": y, "numbers": current_numbers_text(x, y)}),
            // The reference takes one line; a chat model may open with a remark, so its
            // whole reply is read for the first step line.
            stop: if self.style.is_reference() { vec!["\n".into()] } else { vec![] },
            max_tokens: Some(60),
        }
    }

    /// Every line a step, as the reference reads it; in the chat style the step lines of
    /// a chat model's list ([`reply::chat_step_lines`]).
    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal> {
        match self.style {
            PromptStyle::Reference => reply.split('\n').map(|line| self.parse_edit(x, y, line)).collect(),
            PromptStyle::Chat => reply::chat_step_lines(reply).iter().map(|line| self.parse_edit(x, y, line)).collect(),
        }
    }

    fn parse_sample(&self, x: &str, y: &str, reply: &str) -> Proposal {
        match self.style {
            PromptStyle::Reference => {
                let line = reply.trim_start_matches('\n').split('\n').next().unwrap_or("");
                self.parse_edit(x, y, line)
            }
            PromptStyle::Chat => {
                let lines = reply::chat_step_lines(reply);
                self.parse_edit(x, y, lines.first().map_or("", String::as_str))
            }
        }
    }

    fn parse_edit(&self, x: &str, y: &str, line: &str) -> Proposal {
        let numbers_text = current_numbers_text(x, y);
        let thought = line.trim().to_string();
        let problem = if thought.is_empty() {
            Some("empty line".to_string())
        } else if numbers_text.trim() == "24" {
            if thought.to_lowercase().contains("answer:") {
                None
            } else {
                Some("all numbers are combined: expected the final `Answer:` line".to_string())
            }
        } else {
            match parse_numbers(&numbers_text) {
                None => Some(format!("cannot read the numbers left before this step ({numbers_text:?})")),
                Some(numbers) => check_step(&numbers, &thought).err(),
            }
        };
        Proposal { thought, path: format!("{y}{line}\n"), problem }
    }

    fn value(&self) -> Option<&dyn ValueEvaluator> {
        Some(self)
    }

    fn vote(&self) -> Option<&dyn VoteEvaluator> {
        Some(self)
    }

    fn dfs_style(&self) -> DfsStyle {
        DfsStyle::default()
    }
}

impl ValueEvaluator for Game24 {
    fn value_prompt(&self, x: &str, y: &str) -> Prompt {
        let last = reply::last_line(y);
        let (text, context) = if !last.contains("left: ") {
            let answer = last.to_lowercase().replace("answer: ", "");
            let text = prompts::render_messages(&self.value_last, &[("input", x), ("answer", &answer)]);
            (text, json!({"task": "game24", "input": x, "y": y, "answer": answer}))
        } else {
            let numbers = current_numbers_text(x, y);
            let text = prompts::render_messages(&self.value, &[("numbers", &numbers)]);
            (text, json!({"task": "game24", "input": x, "y": y, "numbers": numbers}))
        };
        Prompt { purpose: Purpose::Value, messages: text, context, stop: vec![], max_tokens: Some(200) }
    }

    fn fixed_value(&self, _x: &str, y: &str) -> Option<(f64, String)> {
        let lines = y.trim().split('\n').count();
        if lines == NUMBERS && !has_answer(y) {
            Some((0.0, "the last step gives no answer".into()))
        } else {
            None
        }
    }

    fn parse_value(&self, _x: &str, _y: &str, samples: &[String]) -> (f64, Vec<String>) {
        reply::class_value(samples, &VALUE_CLASSES)
    }

    fn value_classes(&self) -> &[(&'static str, f64)] {
        &VALUE_CLASSES
    }
}

impl VoteEvaluator for Game24 {
    fn vote_prompt(&self, x: &str, ys: &[String]) -> Prompt {
        let choices = reply::numbered_choices(ys);
        Prompt {
            purpose: Purpose::Vote,
            messages: prompts::render_messages(&self.vote, &[("input", x), ("choices", &choices)]),
            context: json!({"task": "game24", "input": x, "ys": ys}),
            stop: vec![],
            max_tokens: Some(400),
        }
    }

    fn parse_vote(&self, text: &str, n_choices: usize) -> Option<usize> {
        reply::best_choice(text, n_choices)
    }
}

impl TaskSource for Game24 {
    fn problem_count(&self) -> usize {
        self.puzzles.len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        self.puzzles.get(index).map(|(_, numbers)| Problem { index: Some(index), input: format_numbers(numbers) })
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        let mut numbers = parse_numbers(text)
            .ok_or_else(|| TaskError::Input(text.into(), "expected numbers separated by spaces".into()))?;
        numbers.sort();
        if numbers.len() != NUMBERS {
            return Err(TaskError::Input(text.into(), format!("expected {NUMBERS} numbers, got {}", numbers.len())));
        }
        let input = format_numbers(&numbers);
        let index = self.puzzles.iter().position(|(_, p)| format_numbers(p) == input);
        Ok(Problem { index, input })
    }
}

#[cfg(test)]
mod tests;
