//! Game of 24: four numbers, + - * /, make 24. Thought steps follow the
//! Tree-of-Thoughts format `a op b = r (left: ...)`, four steps with the last one
//! `Answer: <expr> = 24`. Candidate and value semantics follow the reference
//! implementation (see `docs` in README): proposals are the reply's lines, values
//! are sure/likely/impossible mapped to 20/1/0.001 and summed over samples.
//!
//! The game is a thin task over the reach-a-target puzzles (`tasks::reach`: the prompts,
//! steps and evaluators; `crate::arith`: the step grammar, moves, checker and solver) with the
//! target 24 and four numbers; its puzzle list is `puzzles`.

pub mod puzzles;
pub mod sim;

use std::borrow::Cow;
use std::path::Path;

use super::reach::{self, Reach, Rules, Templates};
use super::{prompts, reply, Problem, TaskError, TaskSource};
use crate::arith::steps::numbers_left_text;
use crate::arith::{format_numbers, parse_numbers, Q};
use crate::engine::task::Feedback;
use crate::engine::{AnswerKind, PromptStyle, TaskInfo};

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
pub const VALUE_CLASSES: [(&str, f64); 3] = reach::VALUE_CLASSES;

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

/// Game of 24's rules: four numbers, the target 24, the ranked puzzle list.
pub struct Rules24 {
    puzzles: Vec<(u32, Vec<Q>)>,
}

pub type Game24 = Reach<Rules24>;

impl Rules for Rules24 {
    const NUMBERS: usize = NUMBERS;
    const TARGET_IN_INPUT: bool = false;
    const COT_TOKENS: u32 = 200;
    const SAMPLE_TOKENS: u32 = 60;
    const ALL_COMBINED: &'static str = "all numbers are combined: expected the final `Answer:` line";

    fn info() -> &'static TaskInfo {
        &INFO
    }

    fn templates() -> Templates {
        crate::reach_templates!("game24")
    }

    fn load() -> Result<Self, TaskError> {
        Ok(Rules24 { puzzles: puzzles::puzzles().map_err(TaskError::Data)? })
    }

    fn puzzle(&self, x: &str) -> Result<(Vec<Q>, Q), String> {
        let input = parse_numbers(x).ok_or_else(|| format!("cannot read the puzzle {x:?}"))?;
        Ok((input, target()))
    }

    /// The numbers left are the target itself.
    fn all_combined(&self, numbers: &str) -> bool {
        numbers.trim() == TARGET.to_string()
    }

    /// As the reference: the last line, lower-cased, without `answer: `, when it is no step.
    fn final_answer(&self, y: &str) -> Option<String> {
        let last = reply::last_line(y);
        (!last.contains("left: ")).then(|| last.to_lowercase().replace("answer: ", ""))
    }

    fn feedback(task: &Game24) -> Option<&dyn Feedback> {
        Some(task)
    }
}

impl Game24 {
    /// With the reference prompts (the built-in ones, or those in `prompt_dir`).
    pub fn new(prompt_dir: Option<&Path>) -> Result<Self, TaskError> {
        Game24::styled(prompts::Loader::new(prompt_dir, PromptStyle::Reference))
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
        self.rules.puzzles.get(index).map(|p| p.0)
    }
}

/// The numbers left after partial output `y`, as the reference reads them: the text
/// after `left: ` up to `)` on the last line, or the input when `y` is empty.
pub fn current_numbers_text(x: &str, y: &str) -> String {
    numbers_left_text(x, y)
}

/// Read one evaluator sample: the class named on its last non-empty line.
pub fn read_value_class(sample: &str) -> Option<&'static str> {
    reply::value_class(sample, &VALUE_CLASSES)
}

/// Self-Refine and Reflexion with the generic prompts over the cot prompt.
impl Feedback for Game24 {}

impl TaskSource for Game24 {
    fn problem_count(&self) -> usize {
        self.rules.puzzles.len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        self.rules.puzzles.get(index).map(|(_, numbers)| Problem { index: Some(index), input: format_numbers(numbers) })
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        let mut numbers = parse_numbers(text)
            .ok_or_else(|| TaskError::Input(text.into(), "expected numbers separated by spaces".into()))?;
        numbers.sort();
        if numbers.len() != NUMBERS {
            return Err(TaskError::Input(text.into(), format!("expected {NUMBERS} numbers, got {}", numbers.len())));
        }
        let input = format_numbers(&numbers);
        let index = self.rules.puzzles.iter().position(|(_, p)| format_numbers(p) == input);
        Ok(Problem { index, input })
    }
}

#[cfg(test)]
mod tests;
