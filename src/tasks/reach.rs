//! Reach-a-target arithmetic puzzles (Game of 24, countdown) as tasks: the prompts, the
//! tree-search steps and the value and vote evaluators they share, over the shared
//! arithmetic (`crate::arith`: the step grammar, the answer checker for any target).
//!
//! A puzzle task is a [`Reach`] over its [`Rules`]: how many numbers a problem has, where
//! its target is (fixed, or after `->` in the input), how it reads and lists its problems,
//! and the few places its prompts are written its own way (the token limits, the request
//! context its simulated player reads). Everything else is here, once.
//!
//! Both puzzles' prompts and contexts are byte-for-byte what they were before this module
//! existed: recorded sessions replay exactly.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::{prompts, reply, TaskError, TaskOptions, TaskSource};
use crate::arith::reach::check_answer;
use crate::arith::steps::{check_step, numbers_left_text};
use crate::arith::{parse_numbers, Q};
use crate::engine::task::{DfsStyle, Feedback, TreeSearch, ValueEvaluator, VoteEvaluator};
use crate::engine::{PromptStyle, Proposal, Task, TaskInfo};
use crate::protocol::{Prompt, Purpose};

/// The value evaluator's classes and the value each sample adds, in the order the
/// reference sums them.
pub const VALUE_CLASSES: [(&str, f64); 3] = [("impossible", 0.001), ("likely", 1.0), ("sure", 20.0)];

/// A puzzle's six templates (`reach_templates!("countdown")` compiles them in).
pub struct Templates {
    pub io: prompts::Builtin,
    pub cot: prompts::Builtin,
    pub propose: prompts::Builtin,
    pub value: prompts::Builtin,
    pub value_last: prompts::Builtin,
    pub vote: prompts::Builtin,
}

/// `reach_templates!("game24")`: the [`Templates`] in `assets/prompts/game24/`.
#[macro_export]
macro_rules! reach_templates {
    ($task:literal) => {
        $crate::tasks::reach::Templates {
            io: $crate::builtin_prompt!($task, "io.txt"),
            cot: $crate::builtin_prompt!($task, "cot.txt"),
            propose: $crate::builtin_prompt!($task, "propose.txt"),
            value: $crate::builtin_prompt!($task, "value.txt"),
            value_last: $crate::builtin_prompt!($task, "value_last.txt"),
            vote: $crate::builtin_prompt!($task, "vote.txt"),
        }
    };
}

/// What a request asks about, for its context (each puzzle writes it its own way:
/// [`Rules::context`]). The default context is this, the fields that are set.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Ctx<'a> {
    /// The task's name.
    pub task: &'a str,
    /// The problem.
    pub input: &'a str,
    /// The steps so far (absent on io, cot and vote requests).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<&'a str>,
    /// The numbers left after `y`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numbers: Option<&'a str>,
    /// A proposal request for the final expression (every number combined).
    #[serde(rename = "final", skip_serializing_if = "Option::is_none")]
    pub last: Option<bool>,
    /// The answer a final-state value request judges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<&'a str>,
    /// The states a vote chooses among.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ys: Option<&'a [String]>,
}

/// What makes one reach-a-target puzzle task (Game of 24, countdown).
pub trait Rules: Sized + Send + Sync + 'static {
    /// How many numbers a problem has: a search's default steps, and when the last
    /// step must be the answer.
    const NUMBERS: usize;
    /// The problem text carries the target after `->` (and the propose and value
    /// templates a `{target}`); else the target is the task's own.
    const TARGET_IN_INPUT: bool;
    /// `max_tokens` of a chain-of-thought request.
    const COT_TOKENS: u32;
    /// `max_tokens` of a one-step sample.
    const SAMPLE_TOKENS: u32;
    /// Why a step that is not the answer is refused once every number is combined.
    const ALL_COMBINED: &'static str;

    /// The task's registration.
    fn info() -> &'static TaskInfo;
    /// The templates compiled in (`reach_templates!`).
    fn templates() -> Templates;
    /// The rules with the task's problems read.
    fn load() -> Result<Self, TaskError>;
    /// The numbers and the target of problem `x`, or the one line a check gives.
    fn puzzle(&self, x: &str) -> Result<(Vec<Q>, Q), String>;
    /// Whether `numbers` (the text after `left: `) leaves nothing but the answer to give.
    fn all_combined(&self, numbers: &str) -> bool;
    /// The answer a value request judges when the last line of `y` is no step (None:
    /// judge the numbers left).
    fn final_answer(&self, y: &str) -> Option<String>;
    /// A request's context as this puzzle's simulated player reads it.
    fn context(&self, ctx: Ctx) -> Value {
        serde_json::to_value(ctx).unwrap_or_default()
    }
    /// Self-Refine and Reflexion, for a puzzle that offers them.
    fn feedback(_task: &Reach<Self>) -> Option<&dyn Feedback> {
        None
    }
}

/// A reach-a-target puzzle task: its rules and its templates, loaded in one style.
pub struct Reach<R: Rules> {
    pub rules: R,
    io: String,
    cot: String,
    propose: String,
    value: String,
    value_last: String,
    vote: String,
    style: PromptStyle,
}

impl<R: Rules> Reach<R> {
    /// Build for `tasks::REGISTRY` (a puzzle reads no data file).
    pub fn build(
        info: &TaskInfo,
        options: &TaskOptions,
        _warnings: &mut Vec<String>,
    ) -> Result<Arc<dyn TaskSource>, TaskError>
    where
        Reach<R>: TaskSource,
    {
        super::no_data(info, options)?;
        Ok(Arc::new(Reach::styled(options.loader())?))
    }

    /// With the templates `loader` finds, in its style.
    pub fn styled(loader: prompts::Loader) -> Result<Self, TaskError> {
        let t = R::templates();
        let numbers: &[&str] = if R::TARGET_IN_INPUT { &["numbers", "target"] } else { &["numbers"] };
        Ok(Reach {
            io: loader.load(t.io, &["input"])?,
            cot: loader.load(t.cot, &["input"])?,
            propose: loader.load(t.propose, numbers)?,
            value: loader.load(t.value, numbers)?,
            value_last: loader.load(t.value_last, &["input", "answer"])?,
            vote: loader.load(t.vote, &["input", "choices"])?,
            style: loader.style,
            rules: R::load()?,
        })
    }

    /// The target as problem `x` writes it (after `->`), if the problem carries one.
    fn target_text<'x>(&self, x: &'x str) -> Option<&'x str> {
        R::TARGET_IN_INPUT.then(|| x.split_once("->").map_or("", |(_, t)| t.trim()))
    }

    /// The numbers left after partial output `y`, as the reference reads them: the text
    /// after `left: ` up to `)` on the last line, or the problem's numbers when `y` is empty.
    pub fn numbers_left(&self, x: &str, y: &str) -> String {
        numbers_left_text(x.split_once("->").map_or(x, |(numbers, _)| numbers), y)
    }

    /// A propose or value template's text: the numbers left, and the target if the problem has one.
    fn render_numbers(&self, template: &str, x: &str, numbers: &str) -> Vec<crate::protocol::Message> {
        match self.target_text(x) {
            Some(target) => prompts::render_messages(template, &[("numbers", numbers), ("target", target)]),
            None => prompts::render_messages(template, &[("numbers", numbers)]),
        }
    }

    fn ctx<'a>(&self, x: &'a str) -> Ctx<'a> {
        Ctx { task: &R::info().name, input: x, y: None, numbers: None, last: None, answer: None, ys: None }
    }

    fn prompt(&self, purpose: Purpose, messages: Vec<crate::protocol::Message>, ctx: Ctx, max_tokens: u32) -> Prompt {
        Prompt {
            purpose,
            messages,
            context: self.rules.context(ctx),
            stop: vec![],
            max_tokens: Some(max_tokens),
            sampling: Default::default(),
        }
    }
}

impl<R: Rules> Task for Reach<R> {
    fn info(&self) -> &TaskInfo {
        R::info()
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Io, prompts::render_messages(&self.io, &[("input", x)]), self.ctx(x), 100)
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Cot, prompts::render_messages(&self.cot, &[("input", x)]), self.ctx(x), R::COT_TOKENS)
    }

    fn extract_answer(&self, _x: &str, y: &str) -> Option<String> {
        // The reference reads the last line; a reply with an explicit `Answer:` line is read there.
        reply::answer_line(y)
    }

    fn answer_from_fallback(&self, _x: &str, y: &str) -> Option<bool> {
        Some(reply::answer_line_is_fallback(y))
    }

    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let (numbers, target) = self.rules.puzzle(x)?;
        check_answer(&numbers, answer, &target)
    }

    fn describe_state(&self, x: &str, y: &str) -> Option<String> {
        if !y.trim().is_empty() && !reply::last_line(y).contains("left: ") {
            return None;
        }
        let numbers = self.numbers_left(x, y);
        Some(match self.target_text(x) {
            Some(target) => format!("numbers left: {numbers} (target {target})"),
            None => format!("numbers left: {numbers}"),
        })
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
        R::feedback(self)
    }
}

impl<R: Rules> TreeSearch for Reach<R> {
    /// One step a pair of numbers combined, then the answer.
    fn default_steps(&self) -> usize {
        R::NUMBERS
    }

    fn propose_prompt(&self, x: &str, y: &str) -> Prompt {
        let numbers = self.numbers_left(x, y);
        let last = self.rules.all_combined(&numbers);
        let messages = if last {
            // Every number is combined: ask for the whole expression, continuing the steps.
            prompts::render_then(&self.cot, &[("input", x)], y)
        } else {
            self.render_numbers(&self.propose, x, &numbers)
        };
        let ctx = Ctx { y: Some(y), numbers: Some(&numbers), last: Some(last), ..self.ctx(x) };
        self.prompt(Purpose::Propose, messages, ctx, 400)
    }

    fn sample_prompt(&self, x: &str, y: &str) -> Prompt {
        let numbers = self.numbers_left(x, y);
        let ctx = Ctx { y: Some(y), numbers: Some(&numbers), ..self.ctx(x) };
        Prompt {
            // The reference takes one line; a chat model may open with a remark, so its
            // whole reply is read for the first step line.
            stop: if self.style.is_reference() { vec!["\n".into()] } else { vec![] },
            ..self.prompt(Purpose::Sample, prompts::render_then(&self.cot, &[("input", x)], y), ctx, R::SAMPLE_TOKENS)
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
        let numbers_text = self.numbers_left(x, y);
        let thought = line.trim().to_string();
        let problem = if thought.is_empty() {
            Some("empty line".to_string())
        } else if self.rules.all_combined(&numbers_text) {
            (!thought.to_lowercase().contains("answer:")).then(|| R::ALL_COMBINED.to_string())
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

impl<R: Rules> ValueEvaluator for Reach<R> {
    fn value_prompt(&self, x: &str, y: &str) -> Prompt {
        match self.rules.final_answer(y) {
            Some(answer) => {
                let text = prompts::render_messages(&self.value_last, &[("input", x), ("answer", &answer)]);
                self.prompt(Purpose::Value, text, Ctx { y: Some(y), answer: Some(&answer), ..self.ctx(x) }, 200)
            }
            None => {
                let numbers = self.numbers_left(x, y);
                let text = self.render_numbers(&self.value, x, &numbers);
                self.prompt(Purpose::Value, text, Ctx { y: Some(y), numbers: Some(&numbers), ..self.ctx(x) }, 200)
            }
        }
    }

    fn value_classes(&self) -> &[(&'static str, f64)] {
        &VALUE_CLASSES
    }

    fn parse_value(&self, _x: &str, _y: &str, samples: &[String]) -> (f64, Vec<String>) {
        reply::class_value_styled(samples, &VALUE_CLASSES, self.style)
    }

    fn fixed_value(&self, _x: &str, y: &str) -> Option<(f64, String)> {
        let steps = y.trim().split('\n').count();
        (steps == R::NUMBERS && !y.to_lowercase().contains("answer"))
            .then(|| (0.0, "the last step gives no answer".to_string()))
    }
}

impl<R: Rules> VoteEvaluator for Reach<R> {
    fn vote_prompt(&self, x: &str, ys: &[String]) -> Prompt {
        let choices = reply::numbered_choices(ys);
        let messages = prompts::render_messages(&self.vote, &[("input", x), ("choices", &choices)]);
        self.prompt(Purpose::Vote, messages, Ctx { ys: Some(ys), ..self.ctx(x) }, 400)
    }

    fn parse_vote(&self, text: &str, n_choices: usize) -> Option<usize> {
        reply::best_choice(text, n_choices)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::engine::task::TreeSearch;
    use crate::engine::Task;
    use crate::tasks::countdown::Countdown;
    use crate::tasks::game24::Game24;
    use crate::tasks::TaskOptions;

    /// Each puzzle's requests carry the context its player reads, key for key as the
    /// sessions recorded before the two tasks shared this module (a replay compares them).
    #[test]
    fn each_puzzle_writes_its_own_contexts_and_limits() {
        let g = Game24::builtin();
        let x = "4 5 6 10";
        assert_eq!(g.io_prompt(x).context, json!({"task": "game24", "input": x}));
        let y = "4 * 5 = 20 (left: 6 10 20)\n";
        let propose = g.propose_prompt(x, y);
        assert_eq!(
            propose.context,
            json!({"task": "game24", "input": x, "y": y, "numbers": "6 10 20", "final": false})
        );
        let done = "4 * 5 = 20 (left: 6 10 20)\n10 - 6 = 4 (left: 4 20)\n4 + 20 = 24 (left: 24)\n";
        assert_eq!(g.propose_prompt(x, done).context["final"], json!(true));
        let value = g.value().unwrap().value_prompt(x, &format!("{done}Answer: (4 * 5) + (10 - 6) = 24\n"));
        assert_eq!(value.context["answer"], json!("(4 * 5) + (10 - 6) = 24"));
        assert_eq!((g.cot_prompt(x).max_tokens, g.sample_prompt(x, "").max_tokens), (Some(200), Some(60)));
        assert_eq!(g.describe_state(x, y).as_deref(), Some("numbers left: 6 10 20"));
        assert_eq!(g.default_steps(), 4);

        let c = Countdown::styled(TaskOptions::default().loader()).unwrap();
        let x = "1 3 7 10 25 50 -> 765";
        assert_eq!(c.io_prompt(x).context, json!({"task": "countdown", "input": x, "y": ""}));
        assert_eq!(
            c.propose_prompt(x, "").context,
            json!({"task": "countdown", "input": x, "y": "", "numbers": x[..14]})
        );
        let ys = vec!["a".to_string()];
        let vote = c.vote().unwrap().vote_prompt(x, &ys);
        assert_eq!(vote.context, json!({"task": "countdown", "input": x, "y": "", "ys": ["a"]}));
        assert_eq!((c.cot_prompt(x).max_tokens, c.sample_prompt(x, "").max_tokens), (Some(300), Some(80)));
        assert_eq!(c.default_steps(), 6);
        // The propose template names the target the problem carries.
        let propose = c.propose_prompt(x, "");
        let text = &propose.messages.last().unwrap().content;
        assert!(text.contains("765"), "{text}");
    }
}
