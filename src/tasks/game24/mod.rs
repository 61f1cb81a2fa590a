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
use crate::engine::{AnswerKind, Message, Prompt, Proposal, Purpose, Task, TaskInfo};

const IO: &str = include_str!("../../../assets/prompts/game24/io.txt");
const COT: &str = include_str!("../../../assets/prompts/game24/cot.txt");
const PROPOSE: &str = include_str!("../../../assets/prompts/game24/propose.txt");
const VALUE: &str = include_str!("../../../assets/prompts/game24/value.txt");
const VALUE_LAST: &str = include_str!("../../../assets/prompts/game24/value_last.txt");
const VOTE: &str = include_str!("../../../assets/prompts/game24/vote.txt");

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
        Ok(Arc::new(Game24::new(options.prompts.as_deref())?))
    }

    pub fn new(prompt_dir: Option<&Path>) -> Result<Self, TaskError> {
        let load = |name: &str, builtin: &str, vars: &[&str]| prompts::load_checked(prompt_dir, name, builtin, vars);
        Ok(Game24 {
            io: load("io.txt", IO, &["input"])?,
            cot: load("cot.txt", COT, &["input"])?,
            propose: load("propose.txt", PROPOSE, &["numbers"])?,
            value: load("value.txt", VALUE, &["numbers"])?,
            value_last: load("value_last.txt", VALUE_LAST, &["input", "answer"])?,
            vote: load("vote.txt", VOTE, &["input", "choices"])?,
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
            messages: vec![Message::user(prompts::render(&self.io, &[("input", x)]))],
            context: json!({"task": "game24", "input": x}),
            stop: vec![],
            max_tokens: Some(100),
        }
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Cot,
            messages: vec![Message::user(prompts::render(&self.cot, &[("input", x)]))],
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
        let text = if numbers.trim() == "24" {
            // All numbers are combined: ask for the whole expression, continuing the steps.
            prompts::render(&self.cot, &[("input", x)]) + y
        } else {
            prompts::render(&self.propose, &[("numbers", &numbers)])
        };
        Prompt {
            purpose: Purpose::Propose,
            messages: vec![Message::user(text)],
            context: json!({"task": "game24", "input": x, "y": y, "numbers": numbers, "final": numbers.trim() == "24"}),
            stop: vec![],
            max_tokens: Some(400),
        }
    }

    fn sample_prompt(&self, x: &str, y: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Sample,
            messages: vec![Message::user(prompts::render(&self.cot, &[("input", x)]) + y)],
            context: json!({"task": "game24", "input": x, "y": y, "numbers": current_numbers_text(x, y)}),
            stop: vec!["\n".into()],
            max_tokens: Some(60),
        }
    }

    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal> {
        reply.split('\n').map(|line| self.parse_edit(x, y, line)).collect()
    }

    fn parse_sample(&self, x: &str, y: &str, reply: &str) -> Proposal {
        let line = reply.trim_start_matches('\n').split('\n').next().unwrap_or("");
        self.parse_edit(x, y, line)
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
            let text = prompts::render(&self.value_last, &[("input", x), ("answer", &answer)]);
            (text, json!({"task": "game24", "input": x, "y": y, "answer": answer}))
        } else {
            let numbers = current_numbers_text(x, y);
            let text = prompts::render(&self.value, &[("numbers", &numbers)]);
            (text, json!({"task": "game24", "input": x, "y": y, "numbers": numbers}))
        };
        Prompt {
            purpose: Purpose::Value,
            messages: vec![Message::user(text)],
            context,
            stop: vec![],
            max_tokens: Some(200),
        }
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
            messages: vec![Message::user(prompts::render(&self.vote, &[("input", x), ("choices", &choices)]))],
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
