//! Tasks: the problems a search works on. Each implements `engine::Task` (pure
//! prompt rendering, reply parsing and answer checking) and knows its inputs.
//!
//! To add a task:
//! 1. Write `tasks/<name>.rs` (or a folder) with a type implementing `engine::Task`
//!    and [`TaskSource`], a `pub const INFO: TaskInfo` (its name, input noun and hint
//!    for the explorer, default problem, answer kind, whether `sim` plays it, whether
//!    it reads `--data`) and a `build` function of type [`BuildTask`].
//! 2. Add `pub mod <name>;` and a [`TaskEntry`] line to [`REGISTRY`] below.
//!
//! Prompts are templates in `assets/prompts/<name>/` loaded through [`prompts`], so a
//! user can edit them; `Task::value_classes` gives the evaluator's classes that badges,
//! colours and MCTS's rewards use. The CLI, the explorer and the runner read the
//! task's `TaskInfo` and never name it. (The simulated model answers only the tasks
//! it knows, `game24`, `qa-demo`, `math-demo`, `mc-demo`, `crosswords` and `writing`; a task with `sim_plays: false` is refused on `sim`
//! up front.)

pub mod crosswords;
pub mod game24;
pub mod math;
pub mod prompts;
pub mod qa_data;
pub mod qa_demo;
pub mod react_text;
pub mod writing;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::{Task, TaskInfo};
use crate::tools::KnowledgeBackend;

/// How a registered task is built: its info, the options, and a place for warnings.
pub type BuildTask = fn(&TaskInfo, &TaskOptions, &mut Vec<String>) -> Result<Arc<dyn TaskSource>, TaskError>;

/// A task's registration: what it says about itself, other names it answers to, and
/// how to build it.
pub struct TaskEntry {
    pub info: &'static TaskInfo,
    pub aliases: &'static [&'static str],
    pub build: BuildTask,
}

/// Every task, the default first: one line each.
pub const REGISTRY: &[TaskEntry] = &[
    TaskEntry { info: &game24::INFO, aliases: &["24"], build: game24::Game24::build },
    TaskEntry { info: &qa_demo::INFO, aliases: &[], build: qa_demo::QaDemo::build },
    TaskEntry { info: &qa_data::HOTPOTQA, aliases: &[], build: qa_data::QaData::build },
    TaskEntry { info: &qa_data::FEVER, aliases: &[], build: qa_data::QaData::build },
    TaskEntry { info: &math::MATH500, aliases: &["math-500"], build: math::MathTask::build },
    TaskEntry { info: &math::MMLU_PRO, aliases: &["mmlupro"], build: math::MathTask::build },
    TaskEntry { info: &math::MATH_DEMO, aliases: &[], build: math::MathTask::build },
    TaskEntry { info: &math::MC_DEMO, aliases: &[], build: math::MathTask::build },
    TaskEntry { info: &crosswords::INFO, aliases: &["crossword"], build: crosswords::Crosswords::build },
    TaskEntry { info: &writing::INFO, aliases: &["text"], build: writing::Writing::build },
];

/// The registered task named `name` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static TaskEntry> {
    REGISTRY.iter().find(|e| e.info.name == name || e.aliases.contains(&name))
}

/// The registered names, for help and errors.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.info.name).collect()
}

/// The task runs use when none is named.
pub fn default_task() -> &'static TaskInfo {
    REGISTRY[0].info
}

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("unknown task {0:?} (known: {known})", known = names().join(", "))]
    Unknown(String),
    #[error("bad --range {0:?}: {1}")]
    Range(String, String),
    #[error("bad --input {0:?}: {1}")]
    Input(String, String),
    #[error("prompt template {path}: {message}")]
    Prompt { path: String, message: String },
    #[error("task data: {0}")]
    Data(String),
}

/// One problem of a task: its position in the task's list (if any) and its input text.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub index: Option<usize>,
    pub input: String,
}

/// A task family with its problem list.
pub trait TaskSource: Task {
    /// Number of problems in the built-in list.
    fn problem_count(&self) -> usize;
    /// The problem at a 0-based index.
    fn problem(&self, index: usize) -> Option<Problem>;
    /// A problem written by the user (e.g. `"4 9 10 13"`), normalised and checked.
    fn parse_input(&self, text: &str) -> Result<Problem, TaskError>;
    /// The tools ReAct may use on this task, if it supports ReAct.
    fn tools(&self) -> Option<std::sync::Arc<crate::tools::ToolRegistry>> {
        None
    }
    /// The gold answer of a problem, when the task has one outside its own logic (QA data);
    /// recorded in session headers so replays need no data file.
    fn gold(&self, _input: &str) -> Option<String> {
        None
    }
    /// What a problem is, for results broken down by it: `subject` and `level`, or
    /// `category` (and `id`, its id in the data set, which is recorded but not grouped
    /// by). Recorded in session headers, so replays break down the same way.
    fn facets(&self, _input: &str) -> std::collections::BTreeMap<String, String> {
        std::collections::BTreeMap::new()
    }
    /// The facets of `problem` as listed (its index may say more than its text: math-demo's
    /// `pass` over the list); by default those of its input.
    fn problem_facets(&self, problem: &Problem) -> std::collections::BTreeMap<String, String> {
        self.facets(&problem.input)
    }
    /// How far `--range` reaches: by default the list's end; a task that repeats its
    /// list in further passes (math-demo) reaches further. An open range (`5..`) still
    /// ends at [`TaskSource::problem_count`].
    fn range_limit(&self) -> usize {
        self.problem_count()
    }
    /// How ReAct replies are read and answered, when not tolerantly: hotpotqa and fever in
    /// the ReAct notebook's own way (`--react-mode reference`, imported trajectories).
    /// Recorded in session headers (`actions`), so replays and forks keep the mode.
    fn action_rules(&self) -> Option<react_text::ActionRules> {
        None
    }
}

/// What building a task may take besides its name.
#[derive(Clone, Default)]
pub struct TaskOptions {
    /// Prompt templates overriding the built-in ones (same file names).
    pub prompts: Option<PathBuf>,
    /// The problems (`--data FILE`): hotpotqa and fever read them from here.
    pub data: Option<PathBuf>,
    /// The knowledge backend of search/lookup, if not the task's own (qa-demo: its corpus;
    /// hotpotqa, fever: Wikipedia).
    pub knowledge: Option<Arc<dyn KnowledgeBackend>>,
    /// How ReAct replies are read (`--react-mode`); `None`: the task's own way (tolerant).
    pub actions: Option<react_text::ActionRules>,
}

impl TaskOptions {
    pub fn prompts(dir: Option<&Path>) -> TaskOptions {
        TaskOptions { prompts: dir.map(Path::to_path_buf), ..TaskOptions::default() }
    }
}

/// Build a task by name. `warnings` gets problems met reading its data (skipped items).
pub fn build(name: &str, options: &TaskOptions, warnings: &mut Vec<String>) -> Result<Arc<dyn TaskSource>, TaskError> {
    let entry = find(name).ok_or_else(|| TaskError::Unknown(name.to_string()))?;
    let _ = prompts::take_warnings(None);
    let built = (entry.build)(entry.info, options, warnings);
    // Templates with unknown placeholders, and files in --prompts the task does not read.
    warnings.extend(prompts::take_warnings(options.prompts.as_deref()));
    built
}

/// For tasks whose problems are built in: `--data` is a mistake.
pub fn no_data(info: &TaskInfo, options: &TaskOptions) -> Result<(), TaskError> {
    match options.data {
        Some(_) => {
            let with_data: Vec<&str> = REGISTRY.iter().filter(|e| e.info.reads_data).map(|e| e.info.name).collect();
            Err(TaskError::Data(format!(
                "{} has its problems built in; --data is for {}",
                info.name,
                and_list(&with_data)
            )))
        }
        None => Ok(()),
    }
}

/// `a, b and c`.
pub fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What a session header records about its task: enough to build it again with no
/// data file (the header holds these fields; `session::Header::task_spec` lends them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskSpec<'a> {
    pub name: &'a str,
    pub input: &'a str,
    /// The problem's gold answer, for tasks whose answers come from a data file.
    pub gold: Option<&'a str>,
    /// How ReAct actions were read (imported trajectories: as the reference did).
    pub actions: Option<react_text::ActionRules>,
    /// The problem's facets (subject, level, category, id), for tasks whose problems
    /// come from a data file.
    pub facets: Option<&'a std::collections::BTreeMap<String, String>>,
}

/// The task a session ran, from its header's spec alone (no data file): replay, the
/// explorer's replay and fork. QA tasks take the gold answer and the action rules recorded.
pub fn for_spec(spec: &TaskSpec, options: &TaskOptions) -> Result<Arc<dyn TaskSource>, TaskError> {
    if let Some(kind) = math::MathKind::from_name(spec.name) {
        return Ok(Arc::new(math::MathTask::from_spec(kind, spec, options.prompts.as_deref())?));
    }
    match qa_data::QaKind::from_name(spec.name) {
        Some(kind) => {
            Ok(Arc::new(qa_data::QaData::from_spec(kind, spec, options.prompts.as_deref(), options.knowledge.clone())?))
        }
        None => build(spec.name, &TaskOptions { data: None, ..options.clone() }, &mut Vec::new()),
    }
}

/// The task of recorded sessions of task `name`, from their headers alone, for a re-drive
/// with no data file (`run --provider replay`): a QA task's problems are the sessions'
/// questions with their recorded gold answers; other tasks have their problems built in.
pub fn for_specs(name: &str, specs: &[TaskSpec], options: &TaskOptions) -> Result<Arc<dyn TaskSource>, TaskError> {
    match qa_data::QaKind::from_name(name) {
        Some(kind) => Ok(Arc::new(qa_data::QaData::from_specs(
            kind,
            specs,
            options.actions.unwrap_or_default(),
            options.prompts.as_deref(),
            options.knowledge.clone(),
        )?)),
        None => build(name, options, &mut Vec::new()),
    }
}

/// Parse a Python-style range `A..B` (0-based, end exclusive) or a single index `A`.
pub fn parse_range(text: &str, len: usize) -> Result<std::ops::Range<usize>, TaskError> {
    parse_range_within(text, len, len)
}

/// [`parse_range`] for a task whose indices reach past its list (`limit` > `len`, see
/// [`TaskSource::range_limit`]): an open end is still `len`, an explicit one may be up to `limit`.
pub fn parse_range_within(text: &str, len: usize, limit: usize) -> Result<std::ops::Range<usize>, TaskError> {
    let limit = limit.max(len);
    let err = |m: &str| TaskError::Range(text.to_string(), m.to_string());
    let (a, b) = match text.split_once("..") {
        Some((a, b)) => {
            let a: usize =
                if a.trim().is_empty() { 0 } else { a.trim().parse().map_err(|_| err("start is not a number"))? };
            let b: usize =
                if b.trim().is_empty() { len } else { b.trim().parse().map_err(|_| err("end is not a number"))? };
            (a, b)
        }
        None => {
            let a: usize = text.trim().parse().map_err(|_| err("expected A..B or an index"))?;
            // No `a + 1` overflow for an index like usize::MAX: it is past the end anyway.
            (a, a.checked_add(1).filter(|&b| b <= limit).ok_or_else(|| err(&too_far(len, limit)))?)
        }
    };
    if a >= b {
        return Err(err("the range is empty"));
    }
    if b > limit {
        return Err(err(&too_far(len, limit)));
    }
    Ok(a..b)
}

fn too_far(len: usize, limit: usize) -> String {
    if limit > len {
        format!("the task has {len} problems; indices 0..{limit} go over them again in further passes")
    } else {
        format!("the task has {len} problems (indices 0..{len})")
    }
}

/// A task by name with its built-in problems and tools (no data file).
pub fn by_name(name: &str, prompt_dir: Option<&Path>) -> Result<Arc<dyn TaskSource>, TaskError> {
    build(name, &TaskOptions::prompts(prompt_dir), &mut Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_task_builds_and_says_who_it_is() {
        for entry in REGISTRY {
            let task = build(entry.info.name, &TaskOptions::default(), &mut Vec::new()).unwrap();
            assert_eq!(task.name(), entry.info.name);
            assert_eq!(task.info(), entry.info, "{} returns its own info", entry.info.name);
            assert!(!entry.info.input_noun.is_empty() && !entry.info.input_hint.is_empty());
            assert!(!entry.info.input_examples.is_empty(), "{} gives examples of inputs", entry.info.name);
            if entry.info.reads_data {
                assert_eq!(task.problem_count(), 0, "no problems without --data");
            } else {
                assert!(task.problem(entry.info.default_problem).is_some(), "{} opens on a problem", entry.info.name);
                let data = TaskOptions { data: Some("x.jsonl".into()), ..TaskOptions::default() };
                let err = build(entry.info.name, &data, &mut Vec::new()).err().expect("--data refused");
                assert!(err.to_string().contains("--data is for hotpotqa, fever, math500 and mmlu-pro"), "{err}");
            }
        }
        assert_eq!(find("24").map(|e| e.info.name), Some("game24"));
        for entry in REGISTRY {
            assert_eq!(entry.info.sim_plays, crate::llm::sim::plays(entry.info.name), "{}", entry.info.name);
        }
        let err = build("chess", &TaskOptions::default(), &mut Vec::new()).err().unwrap();
        assert_eq!(
            err.to_string(),
            "unknown task \"chess\" (known: game24, qa-demo, hotpotqa, fever, math500, mmlu-pro, math-demo, mc-demo, crosswords, writing)"
        );
    }

    #[test]
    fn ranges_follow_python() {
        assert_eq!(parse_range("900..1000", 1362).unwrap(), 900..1000);
        assert_eq!(parse_range("5", 1362).unwrap(), 5..6);
        assert_eq!(parse_range("..3", 1362).unwrap(), 0..3);
        assert!(parse_range("10..5", 1362).is_err());
        assert!(parse_range("0..2000", 1362).unwrap_err().to_string().contains("1362 problems"));
        assert!(parse_range("a..b", 10).is_err());
        // Indices at the top of usize are errors, not an overflow.
        let max = usize::MAX.to_string();
        for text in [max.clone(), format!("{max}.."), format!("..{max}"), format!("0..{max}"), format!("{max}..{max}")]
        {
            assert!(parse_range(&text, 1362).is_err(), "{text}");
        }
        assert!(parse_range(&max, 1362).unwrap_err().to_string().contains("1362 problems"));
        assert!(parse_range("18446744073709551616", 1362).is_err(), "past u64");
    }
}
