//! The math tasks: `math500` (MATH-500 in PRM800K's JSON Lines, `--data FILE`),
//! `mmlu-pro` (MMLU-Pro multiple choice, `--data FILE`), and two compiled-in demo sets
//! the project wrote itself so everything works offline on `sim`: `math-demo` (free
//! answers in LaTeX) and `mc-demo` (multiple choice).
//!
//! * Free answers: the model puts its final answer in `\boxed{}`; ReAct ends with
//!   `finish[answer]`. Answers are read and compared by `crate::grade` (LaTeX-aware
//!   equivalence); cot-sc votes over `grade::normalize`d answers.
//! * Multiple choice: the input is the question followed by its options, one a line
//!   (`A. ...` to `J. ...`); the answer is read as MMLU-Pro's evaluation does
//!   ([`answer::choice_letter`]).
//! * ReAct offers the math tools (`crate::tools::math::registry()`) in text and native mode.
//! * Each problem has facets (subject and level, or category) that results and
//!   summaries break accuracy down by ([`crate::tasks::TaskSource::facets`]); a session
//!   header records them with the gold answer, so a replay needs no data file.

pub mod answer;
pub mod data;
pub mod demo;
pub mod mc_demo;
pub mod sim;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::react_text;
use super::{prompts, Problem, TaskError, TaskOptions, TaskSource, TaskSpec};
use crate::engine::task::{Feedback, NativeTools, ReactSteps};
use crate::engine::{AnswerKind, PromptStyle, ReactStep, Task, TaskInfo};
use crate::protocol::{Message, Prompt, Purpose, ToolDef};
use crate::tools::ToolRegistry;

pub use data::{MathItem, McItem};

/// Registrations (see `tasks::REGISTRY`).
pub const MATH500: TaskInfo = TaskInfo {
    name: Cow::Borrowed("math500"),
    about: Cow::Borrowed("MATH-500 competition problems from --data (PRM800K JSON Lines); answers in \\boxed{}"),
    input_noun: Cow::Borrowed("problem"),
    input_hint: Cow::Borrowed("a problem number from the data file or a problem of your own"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("0")]),
    default_problem: 0,
    answer_kind: AnswerKind::Expression,
    reads_data: true,
};
pub const MMLU_PRO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("mmlu-pro"),
    about: Cow::Borrowed("MMLU-Pro multiple choice (up to 10 options) from --data (JSON Lines)"),
    input_noun: Cow::Borrowed("question"),
    input_hint: Cow::Borrowed("a question number from the data file, or a question with lines A. ... B. ..."),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("0")]),
    default_problem: 0,
    answer_kind: AnswerKind::Label,
    reads_data: true,
};
pub const MATH_DEMO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("math-demo"),
    about: Cow::Borrowed(
        "42 math problems the project wrote (7 subjects, levels 1-5, LaTeX answers), offline on sim; \
         --range past 41 goes over them again in shuffled passes (index i: pass i/42, facet pass)",
    ),
    input_noun: Cow::Borrowed("problem"),
    input_hint: Cow::Borrowed("a problem number or a problem of your own"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("3"), Cow::Borrowed("What is $2^{10} - 1$?")]),
    default_problem: 0,
    answer_kind: AnswerKind::Expression,
    reads_data: false,
};
pub const MC_DEMO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("mc-demo"),
    about: Cow::Borrowed("16 multiple-choice questions the project wrote (several categories), offline on sim"),
    input_noun: Cow::Borrowed("question"),
    input_hint: Cow::Borrowed("a question number, or a question with lines A. ... B. ..."),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("2"), Cow::Borrowed("What is 7 * 8?\nA. 54\nB. 56\nC. 58")]),
    default_problem: 0,
    answer_kind: AnswerKind::Label,
    reads_data: false,
};

/// Which of the four tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathKind {
    Math500,
    MmluPro,
    MathDemo,
    McDemo,
}

impl MathKind {
    pub const ALL: [MathKind; 4] = [MathKind::Math500, MathKind::MmluPro, MathKind::MathDemo, MathKind::McDemo];

    pub fn from_name(name: &str) -> Option<MathKind> {
        MathKind::ALL.into_iter().find(|k| k.info().name == name)
    }

    pub fn info(self) -> &'static TaskInfo {
        match self {
            MathKind::Math500 => &MATH500,
            MathKind::MmluPro => &MMLU_PRO,
            MathKind::MathDemo => &MATH_DEMO,
            MathKind::McDemo => &MC_DEMO,
        }
    }

    /// Multiple choice (an option letter) rather than a free answer.
    pub fn choice(self) -> bool {
        matches!(self, MathKind::MmluPro | MathKind::McDemo)
    }

    /// The built-in prompt files: io, cot, react, react-native.
    fn builtin(self) -> [prompts::Builtin; 4] {
        match self {
            MathKind::Math500 => [
                crate::builtin_prompt!("math500", "io.txt"),
                crate::builtin_prompt!("math500", "cot.txt"),
                crate::builtin_prompt!("math500", "react.txt"),
                crate::builtin_prompt!("math500", "react-native.txt"),
            ],
            MathKind::MathDemo => [
                crate::builtin_prompt!("math-demo", "io.txt"),
                crate::builtin_prompt!("math-demo", "cot.txt"),
                crate::builtin_prompt!("math-demo", "react.txt"),
                crate::builtin_prompt!("math-demo", "react-native.txt"),
            ],
            MathKind::MmluPro => [
                crate::builtin_prompt!("mmlu-pro", "io.txt"),
                crate::builtin_prompt!("mmlu-pro", "cot.txt"),
                crate::builtin_prompt!("mmlu-pro", "react.txt"),
                crate::builtin_prompt!("mmlu-pro", "react-native.txt"),
            ],
            MathKind::McDemo => [
                crate::builtin_prompt!("mc-demo", "io.txt"),
                crate::builtin_prompt!("mc-demo", "cot.txt"),
                crate::builtin_prompt!("mc-demo", "react.txt"),
                crate::builtin_prompt!("mc-demo", "react-native.txt"),
            ],
        }
    }
}

/// One problem of a math task: its input text (the problem, or the question with its
/// option lines), its gold answer (LaTeX, or an option letter) and its facets.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub input: String,
    pub gold: String,
    /// `subject` and `level`, or `category`; `id` is the problem's id in its data set.
    pub facets: BTreeMap<String, String>,
}

/// The facet key of a problem's id in its data set: recorded, not grouped by.
pub const ID_FACET: &str = "id";
/// The facet of a math-demo problem picked past the list's end: which pass over the list (1, 2, ...).
pub const PASS_FACET: &str = "pass";

/// Longest model reply read for an answer (bytes); longer replies are read from their end.
const MAX_REPLY: usize = 64 * 1024;

pub struct MathTask {
    kind: MathKind,
    io: String,
    cot: String,
    react: String,
    react_native: String,
    items: Vec<Item>,
    tools: Arc<ToolRegistry>,
    style: PromptStyle,
}

impl MathTask {
    /// Build for `tasks::REGISTRY`: the demo sets are compiled in; math500 and mmlu-pro
    /// read `--data` (no problems without it).
    pub fn build(
        info: &TaskInfo,
        options: &TaskOptions,
        warnings: &mut Vec<String>,
    ) -> Result<Arc<dyn TaskSource>, TaskError> {
        let kind = MathKind::from_name(&info.name).ok_or_else(|| TaskError::Unknown(info.name.to_string()))?;
        let items = match kind {
            MathKind::MathDemo => {
                super::no_data(info, options)?;
                demo::items()
            }
            MathKind::McDemo => {
                super::no_data(info, options)?;
                mc_demo::items()
            }
            MathKind::Math500 | MathKind::MmluPro => match &options.data {
                Some(path) => {
                    let (items, w) = data::read(kind, path)?;
                    warnings.extend(w);
                    items
                }
                None => Vec::new(),
            },
        };
        Ok(Arc::new(MathTask::styled(kind, options.loader(), items)?.with_mcp(&options.mcp_tools)))
    }

    /// Rebuild for `tasks::REGISTRY` (`TaskEntry::from_spec`): the task a session ran.
    pub fn rebuild(info: &TaskInfo, spec: &TaskSpec, options: &TaskOptions) -> Result<Arc<dyn TaskSource>, TaskError> {
        let kind = MathKind::from_name(&info.name).ok_or_else(|| TaskError::Unknown(info.name.to_string()))?;
        Ok(Arc::new(MathTask::from_spec(kind, spec, options.loader())?.with_mcp(&options.mcp_tools)))
    }

    /// The task a session ran, from its header alone: for the data-file tasks, its one
    /// problem with the gold answer and facets the header records.
    pub fn from_spec(kind: MathKind, spec: &TaskSpec, loader: prompts::Loader) -> Result<Self, TaskError> {
        let items = match kind {
            MathKind::MathDemo => demo::items(),
            MathKind::McDemo => mc_demo::items(),
            MathKind::Math500 | MathKind::MmluPro => spec
                .gold
                .iter()
                .map(|gold| Item {
                    input: spec.input.to_string(),
                    gold: gold.to_string(),
                    facets: spec.facets.cloned().unwrap_or_default(),
                })
                .collect(),
        };
        MathTask::styled(kind, loader, items)
    }

    /// With the reference prompts (the built-in ones, or those in `prompt_dir`).
    pub fn new(kind: MathKind, prompt_dir: Option<&Path>, items: Vec<Item>) -> Result<Self, TaskError> {
        MathTask::styled(kind, prompts::Loader::new(prompt_dir, PromptStyle::Reference), items)
    }

    pub fn styled(kind: MathKind, loader: prompts::Loader, items: Vec<Item>) -> Result<Self, TaskError> {
        let [io, cot, react, react_native] = kind.builtin();
        let vars: &[&str] = if kind.choice() { &["question", "options"] } else { &["problem"] };
        let load = |builtin: prompts::Builtin, more: &[&str]| -> Result<String, TaskError> {
            let text = loader.load(builtin, vars)?;
            prompts::require(&text, builtin.name, more)?;
            Ok(text)
        };
        Ok(MathTask {
            kind,
            io: load(io, &[])?,
            cot: load(cot, &[])?,
            react: load(react, &["trajectory", "step", "tools"])?,
            // The tools go with the request as native definitions, so this prompt need not list them.
            react_native: load(react_native, &["trajectory", "step"])?,
            items,
            tools: crate::tools::math::registry(),
            style: loader.style,
        })
    }

    /// With the MCP servers' tools a run adds (`--mcp`) next to the math tools.
    pub fn with_mcp(mut self, added: &crate::tools::mcp::McpTools) -> Self {
        if !added.is_empty() {
            self.tools = Arc::new((*self.tools).clone().with_mcp(added));
        }
        self
    }

    pub fn kind(&self) -> MathKind {
        self.kind
    }

    pub fn items(&self) -> &[Item] {
        &self.items
    }

    fn item(&self, x: &str) -> Option<&Item> {
        let x = x.trim();
        self.items.iter().find(|i| i.input.trim() == x)
    }

    /// The placeholders of a prompt for input `x`.
    fn vars(&self, x: &str) -> Vec<(&'static str, String)> {
        if self.kind.choice() {
            let (question, options) = answer::split_options(x);
            let lines: Vec<String> =
                options.iter().enumerate().map(|(i, o)| format!("{}. {o}", answer::letter(i))).collect();
            let category = self.item(x).and_then(|i| i.facets.get("category")).map_or("general knowledge", |c| c);
            vec![("question", question), ("options", lines.join("\n")), ("category", category.replace('_', " "))]
        } else {
            vec![("problem", x.trim().to_string())]
        }
    }

    fn render(&self, template: &str, x: &str, more: &[(&str, &str)]) -> Vec<Message> {
        let vars = self.vars(x);
        let mut all: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.extend_from_slice(more);
        let mut messages = prompts::render_messages(template, &all);
        if let Some(last) = messages.last_mut() {
            last.content.truncate(last.content.trim_end_matches(['\n', '\r']).len());
        }
        messages
    }

    /// A prompt with the structured context `sim` answers from: the task, the problem,
    /// and for the demo sets its index in the compiled-in list.
    fn prompt(&self, purpose: Purpose, messages: Vec<Message>, x: &str, extra: Value) -> Prompt {
        let mut context = json!({"task": self.kind.info().name, "problem": x.trim()});
        if let (Some(c), Some(e)) = (context.as_object_mut(), extra.as_object()) {
            c.extend(e.clone());
        }
        let stop = if purpose == Purpose::Act {
            react_text::STOP_SEQUENCES.iter().map(|s| s.to_string()).collect()
        } else {
            vec![]
        };
        let max_tokens = if purpose == Purpose::Io { 200 } else { 1024 };
        Prompt { purpose, messages, context, stop, max_tokens: Some(max_tokens), sampling: Default::default() }
    }

    fn act_prompt(&self, text: Vec<Message>, x: &str, trajectory: &str, step: usize) -> Prompt {
        let tools: Vec<String> = self.tools.names();
        self.prompt(Purpose::Act, text, x, json!({"step": step, "trajectory": trajectory, "tools": tools}))
    }

    /// The option letters the question at `x` offers (A.. up to J).
    fn letters(&self, x: &str) -> usize {
        answer::split_options(x).1.len()
    }
}

impl Task for MathTask {
    fn info(&self) -> &TaskInfo {
        self.kind.info()
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Io, self.render(&self.io, x, &[]), x, json!({}))
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Cot, self.render(&self.cot, x, &[]), x, json!({}))
    }

    fn extract_answer(&self, x: &str, y: &str) -> Option<String> {
        let y = answer::tail(y, MAX_REPLY);
        if self.kind.choice() {
            let n = self.letters(x);
            let from = answer::finish_arg(y).unwrap_or_else(|| y.to_string());
            answer::choice_letter(&from, n).map(|c| c.to_string())
        } else {
            answer::finish_arg(y).or_else(|| answer::math_answer(y))
        }
    }

    /// Free answers only (a choice's letter is read wherever it is written).
    fn answer_from_fallback(&self, _x: &str, y: &str) -> Option<bool> {
        let y = answer::tail(y, MAX_REPLY);
        (!self.kind.choice()).then(|| answer::finish_arg(y).is_none() && !crate::grade::states_answer(y))
    }

    /// Right or wrong against the gold answer. The reason never names the gold answer
    /// (oracle feedback passes it to the model).
    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let item = self.item(x).ok_or_else(|| "this problem has no gold answer to check against".to_string())?;
        if self.kind.choice() {
            let n = self.letters(x);
            let Some(letter) = answer::choice_letter(answer, n) else {
                return Err(format!("{answer:?} names none of the options A to {}", answer::letter(n.max(1) - 1)));
            };
            if item.gold.trim().eq_ignore_ascii_case(&letter.to_string()) {
                Ok(())
            } else {
                Err(format!("option {letter} is not the right option"))
            }
        } else if crate::grade::equivalent(&item.gold, answer) {
            Ok(())
        } else {
            Err(format!("{} is not equivalent to the reference answer", answer.trim()))
        }
    }

    fn answer_key(&self, answer: &str) -> String {
        if self.kind.choice() {
            answer.trim().to_ascii_uppercase()
        } else {
            crate::grade::normalize(answer)
        }
    }

    fn react(&self) -> Option<&dyn ReactSteps> {
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
impl Feedback for MathTask {}

impl ReactSteps for MathTask {
    fn react_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt {
        let step_text = step.to_string();
        let tools = self.tools.prompt_lines();
        let text = self.render(&self.react, x, &[("trajectory", trajectory), ("step", &step_text), ("tools", &tools)]);
        self.act_prompt(text, x, trajectory, step)
    }

    fn parse_react(&self, reply: &str, step: usize) -> ReactStep {
        let mut read: ReactStep = react_text::parse_step_naming(reply, step, &self.tools.call_examples()).into();
        // An answer with unbalanced brackets (`finish[[2,5)]`) runs to the line's last `]`.
        if let Some(arg) = answer::first_finish(reply) {
            read.action = Some(("finish".to_string(), arg));
            read.problem = None;
            read.ask_action = false;
        }
        read
    }

    fn native(&self) -> Option<&dyn NativeTools> {
        Some(self)
    }
}

impl NativeTools for MathTask {
    fn react_native_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt {
        let step_text = step.to_string();
        let tools = self.tools.prompt_lines();
        let text =
            self.render(&self.react_native, x, &[("trajectory", trajectory), ("step", &step_text), ("tools", &tools)]);
        self.act_prompt(text, x, trajectory, step)
    }

    fn tool_defs(&self) -> Vec<ToolDef> {
        self.tools.tool_defs()
    }
}

impl TaskSource for MathTask {
    fn problem_count(&self) -> usize {
        self.items.len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        if let Some(item) = self.items.get(index) {
            return Some(Problem { index: Some(index), input: item.input.clone() });
        }
        // math-demo: indices past the list are further passes over it, in a shuffled order.
        if self.kind != MathKind::MathDemo {
            return None;
        }
        let (at, _) = demo::at_index(index)?;
        self.items.get(at).map(|i| Problem { index: Some(index), input: i.input.clone() })
    }

    fn range_limit(&self) -> usize {
        match self.kind {
            MathKind::MathDemo => self.items.len() * demo::PASSES,
            _ => self.items.len(),
        }
    }

    /// math-demo's further passes carry a facet `pass` (1, 2, ...).
    fn problem_facets(&self, problem: &Problem) -> BTreeMap<String, String> {
        let mut facets = self.facets(&problem.input);
        if self.kind == MathKind::MathDemo {
            if let Some((_, pass)) = problem.index.filter(|&i| i >= self.items.len()).and_then(demo::at_index) {
                facets.insert(PASS_FACET.to_string(), pass.to_string());
            }
        }
        facets
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(TaskError::Input(text.into(), format!("a {} is needed", self.kind.info().input_noun)));
        }
        if text.len() > data::MAX_TEXT {
            return Err(TaskError::Input(answer::clip(text, 40), format!("longer than {} bytes", data::MAX_TEXT)));
        }
        // A problem number picks from the list.
        if let Ok(i) = text.parse::<usize>() {
            if let Some(p) = self.problem(i) {
                return Ok(p);
            }
        }
        if self.kind.choice() {
            let (question, options) = answer::split_options(text);
            if options.len() < 2 || question.trim().is_empty() {
                return Err(TaskError::Input(
                    answer::clip(text, 40),
                    "write the question, then its options one a line: A. ..., B. ... (at least two)".into(),
                ));
            }
            let input = answer::join_options(&question, &options);
            let index = self.items.iter().position(|i| i.input.trim() == input.trim());
            return Ok(Problem { index, input });
        }
        let index = self.items.iter().position(|i| i.input.trim() == text);
        Ok(Problem { index, input: text.to_string() })
    }

    /// The math tools and finish.
    fn tools(&self) -> Option<Arc<ToolRegistry>> {
        Some(Arc::clone(&self.tools))
    }

    fn gold(&self, input: &str) -> Option<String> {
        self.item(input).map(|i| i.gold.clone())
    }

    fn facets(&self, input: &str) -> BTreeMap<String, String> {
        self.item(input).map(|i| i.facets.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
