//! Tasks: the problems a search works on. Each implements `engine::Task` (pure
//! prompt rendering, reply parsing and answer checking) and knows its inputs.
//!
//! To add a task:
//! 1. Write `tasks/<name>.rs` (or a folder) with a type implementing `engine::Task`
//!    (the core, and the capabilities it has: `Task::tree`, `Task::react`, ...) and
//!    [`TaskSource`], a `pub const INFO: TaskInfo` (its name, input noun and hint for
//!    the explorer, default problem, answer kind, whether it reads `--data`), a `build`
//!    function of type [`BuildTask`] and, if `sim` plays it, its player
//!    (`engine::sim::Play`, reading the context its prompts carry).
//! 2. Add `pub mod <name>;` and a [`TaskEntry`] line to [`REGISTRY`] below
//!    (`TaskEntry::new(&INFO, build).sim(play)`). `countdown.rs` is the worked example.
//!
//! Prompts are templates in `assets/prompts/<name>/` loaded through [`prompts`], so a
//! user can edit them. The CLI, the explorer, the runner and the simulated model read
//! the task's registration and never name it; which methods work on it comes from the
//! capabilities it returns (`engine::methods::serving`).

#[cfg(test)]
mod chat_replies_tests;
#[cfg(test)]
mod chat_tests;
pub mod countdown;
pub mod crosswords;
pub mod file;
pub mod game24;
pub mod math;
pub mod prompts;
pub mod qa_data;
pub mod qa_demo;
pub mod reach;
pub mod react_text;
pub mod reply;
mod sim_players;
pub mod writing;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::{Task, TaskInfo};
use crate::tools::KnowledgeBackend;

pub use sim_players::{check_sim_plays, SimPlayers};

/// `a, b and c` (one function for the engine's messages and the tasks').
pub use crate::engine::text::and_list;

/// How a registered task is built: its info, the options, and a place for warnings.
pub type BuildTask = fn(&TaskInfo, &TaskOptions, &mut Vec<String>) -> Result<Arc<dyn TaskSource>, TaskError>;

/// How a task whose problems come from a data file is built again from a session
/// header's spec alone (its one problem with the gold answer, facets and action rules
/// the header records), so a replay needs no data file.
pub type RebuildTask = fn(&TaskInfo, &TaskSpec, &TaskOptions) -> Result<Arc<dyn TaskSource>, TaskError>;

/// A task's registration: what it says about itself, other names it answers to, how
/// to build it, and how a session rebuilds it. Written as one line with the builder
/// methods (`TaskEntry::new(&INFO, build).aliases(&["24"])`).
pub struct TaskEntry {
    pub info: &'static TaskInfo,
    pub aliases: &'static [&'static str],
    pub build: BuildTask,
    /// `None`: a session's task is built as `build` builds it without `--data`.
    pub from_spec: Option<RebuildTask>,
    /// How the simulated model (`--provider sim`) plays the task, if it does.
    pub sim: Option<crate::engine::sim::Play>,
}

impl TaskEntry {
    pub const fn new(info: &'static TaskInfo, build: BuildTask) -> TaskEntry {
        TaskEntry { info, aliases: &[], build, from_spec: None, sim: None }
    }

    /// Other names `--task` and sessions accept.
    pub const fn aliases(self, aliases: &'static [&'static str]) -> TaskEntry {
        TaskEntry { aliases, ..self }
    }

    /// The simulated model's player of the task.
    pub const fn sim(self, play: crate::engine::sim::Play) -> TaskEntry {
        TaskEntry { sim: Some(play), ..self }
    }

    /// How a session header rebuilds the task without its data file.
    pub const fn from_spec(self, rebuild: RebuildTask) -> TaskEntry {
        TaskEntry { from_spec: Some(rebuild), ..self }
    }
}

/// Every task, the default first: one line each.
pub const REGISTRY: &[TaskEntry] = &[
    TaskEntry::new(&game24::INFO, game24::Game24::build).aliases(&["24"]).sim(game24::sim::answer),
    TaskEntry::new(&qa_demo::INFO, qa_demo::QaDemo::build).sim(qa_demo::sim::answer),
    TaskEntry::new(&qa_data::HOTPOTQA, qa_data::QaData::build).from_spec(qa_data::QaData::rebuild),
    TaskEntry::new(&qa_data::FEVER, qa_data::QaData::build).from_spec(qa_data::QaData::rebuild),
    TaskEntry::new(&math::MATH500, math::MathTask::build).aliases(&["math-500"]).from_spec(math::MathTask::rebuild),
    TaskEntry::new(&math::MMLU_PRO, math::MathTask::build).aliases(&["mmlupro"]).from_spec(math::MathTask::rebuild),
    TaskEntry::new(&math::MATH_DEMO, math::MathTask::build).sim(math::sim::answer),
    TaskEntry::new(&math::MC_DEMO, math::MathTask::build).sim(math::sim::answer),
    TaskEntry::new(&crosswords::INFO, crosswords::Crosswords::build)
        .aliases(&["crossword"])
        .sim(crosswords::sim::answer),
    TaskEntry::new(&writing::INFO, writing::Writing::build).aliases(&["text"]).sim(writing::sim::answer),
    TaskEntry::new(&countdown::INFO, countdown::Countdown::build).sim(countdown::play),
];

/// The registered task named `name` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static TaskEntry> {
    REGISTRY.iter().find(|e| e.info.name == name || e.aliases.contains(&name))
}

/// The registered names, for help and errors.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| &*e.info.name).collect()
}

/// The problem the explorer opens task `name` on: a registered task's own, a task
/// file's first.
pub fn default_problem(name: &str) -> Result<usize, TaskError> {
    match find(name) {
        Some(entry) => Ok(entry.info.default_problem),
        None if file::locate(name).is_some() => Ok(0),
        None => Err(TaskError::Unknown(name.to_string())),
    }
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
    /// An MCP server that cannot be started or reached (the message names it).
    #[error("{0}")]
    Mcp(String),
    /// A task file that cannot be read, said as `file:line: key: what`.
    #[error("task file {0}")]
    File(String),
    /// A prompt style the task has no templates for.
    #[error("task {task} has no {style} prompts (use --prompt-style {has})")]
    Style { task: String, style: crate::engine::PromptStyle, has: crate::engine::PromptStyle },
    /// A method the task cannot serve (a session header naming one, say).
    #[error("method {method} on task {task}: {0}", method = .0.method, task = .0.task)]
    Unsupported(#[from] crate::engine::methods::Unsupported),
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
    /// The task's whole definition with problem `input`'s record, for a task defined at
    /// runtime (a task file): recorded in session headers (`task_def`), so a session
    /// rebuilds the task without the file.
    /// A registered task given MCP servers' tools (`--mcp`) records them here as
    /// `{"mcp": {servers, tools}}`, so a replay offers the same tools without the servers.
    fn definition(&self, _input: &str) -> Option<serde_json::Value> {
        let tools = self.tools()?;
        (!tools.mcp().is_empty()).then(|| serde_json::json!({ "mcp": tools.mcp() }))
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
    /// How prompts are laid out (`--prompt-style`).
    pub style: crate::engine::PromptStyle,
    /// MCP servers whose tools ReAct and ReTreVal offer (`--mcp`, `--mcp-cmd`): a task
    /// file starts them itself, [`build`] starts them for a registered task.
    pub mcp: Vec<crate::tools::mcp::McpConfig>,
    /// The MCP servers' tools a registered task adds to its own: started by [`build`], or
    /// offline from a session's record ([`for_spec`]).
    pub mcp_tools: crate::tools::mcp::McpTools,
}

impl TaskOptions {
    pub fn prompts(dir: Option<&Path>) -> TaskOptions {
        TaskOptions { prompts: dir.map(Path::to_path_buf), ..TaskOptions::default() }
    }

    /// Where the task's templates come from: `--prompts` in `--prompt-style`.
    pub fn loader(&self) -> prompts::Loader<'_> {
        prompts::Loader::new(self.prompts.as_deref(), self.style)
    }
}

/// Build a task by name. `warnings` gets problems met reading its data (skipped items).
/// A name that is no registered task is a task file (`file::locate`): a path, or a name
/// under the config directory's `tasks/`.
/// The registered tasks that read ReAct replies by the reference notebook's rules when
/// asked (`--react-mode reference`): each built so, and kept if it says it reads them
/// that way. In the registry's order; for messages.
pub fn reading_reference_actions() -> Vec<&'static str> {
    let options = TaskOptions { actions: Some(react_text::ActionRules::Reference), ..TaskOptions::default() };
    let honours = |e: &&TaskEntry| {
        (e.build)(e.info, &options, &mut Vec::new()).is_ok_and(|task| task.action_rules() == options.actions)
    };
    REGISTRY.iter().filter(honours).map(|e| e.info.name.as_ref()).collect()
}

pub fn build(name: &str, options: &TaskOptions, warnings: &mut Vec<String>) -> Result<Arc<dyn TaskSource>, TaskError> {
    let Some(entry) = find(name) else {
        let path = file::locate(name).ok_or_else(|| TaskError::Unknown(name.to_string()))?;
        return styled(Arc::new(file::FileTask::open(&path, options, warnings)?), options);
    };
    let _ = prompts::take_warnings(None);
    let built = (entry.build)(entry.info, options, warnings);
    // Templates with unknown placeholders, and files in --prompts the task does not read.
    warnings.extend(prompts::take_warnings(options.prompts.as_deref()));
    let task = styled(built?, options)?;
    if options.mcp.is_empty() {
        return Ok(task);
    }
    with_mcp(entry, task, options)
}

/// `task` again with the MCP servers of `options` started and their tools added to its
/// own, or the line that says why not (the task uses no tools, a server did not start).
fn with_mcp(
    entry: &TaskEntry,
    task: Arc<dyn TaskSource>,
    options: &TaskOptions,
) -> Result<Arc<dyn TaskSource>, TaskError> {
    let name = &entry.info.name;
    if task.tools().is_none() {
        return Err(TaskError::Data(format!(
            "{name} uses no tools (it has no ReAct steps), so --mcp has no place for a server's tools; \
             use it with a task that has ReAct or ReTreVal with tools"
        )));
    }
    let started = crate::tools::mcp::McpTools::start(&options.mcp).map_err(TaskError::Mcp)?;
    let options = TaskOptions { mcp_tools: started, ..options.clone() };
    let task = styled((entry.build)(entry.info, &options, &mut Vec::new())?, &options)?;
    let offered = task.tools().map(|t| t.mcp().tools.len()).unwrap_or(0);
    if offered != options.mcp_tools.record.tools.len() {
        return Err(TaskError::Data(format!("{name} does not take tools from MCP servers (--mcp)")));
    }
    Ok(task)
}

/// The task if it lays its prompts out as `options` asks, else the error that says so.
fn styled(task: Arc<dyn TaskSource>, options: &TaskOptions) -> Result<Arc<dyn TaskSource>, TaskError> {
    let has = task.prompt_style();
    if has == options.style {
        Ok(task)
    } else {
        Err(TaskError::Style { task: task.name().to_string(), style: options.style, has })
    }
}

/// For tasks whose problems are built in: `--data` is a mistake.
pub fn no_data(info: &TaskInfo, options: &TaskOptions) -> Result<(), TaskError> {
    match options.data {
        Some(_) => {
            let with_data: Vec<&str> = REGISTRY.iter().filter(|e| e.info.reads_data).map(|e| &*e.info.name).collect();
            Err(TaskError::Data(format!(
                "{} has its problems built in; --data is for {}",
                info.name,
                and_list(&with_data)
            )))
        }
        None => Ok(()),
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
    /// How the task laid its prompts out.
    pub style: crate::engine::PromptStyle,
    /// A task file's recorded definition (`Header::task_def`).
    pub definition: Option<&'a serde_json::Value>,
}

/// The task a session ran, from its header's spec alone (no data file): replay, the
/// explorer's replay and fork. A task registered with [`TaskEntry::from_spec`] takes
/// what the header recorded (the gold answer, facets, action rules); the others are
/// built without `--data`. The prompts are laid out in the style the header records.
pub fn for_spec(spec: &TaskSpec, options: &TaskOptions) -> Result<Arc<dyn TaskSource>, TaskError> {
    if let Some(recorded) = spec.definition.filter(|d| d.get("def").is_some()) {
        return Ok(Arc::new(file::FileTask::from_recorded(recorded, spec.style)?));
    }
    let entry = find(spec.name).ok_or_else(|| TaskError::Unknown(spec.name.to_string()))?;
    // The MCP servers' tools the session's run offered, without the servers.
    let mcp_tools = match spec.definition.and_then(|d| d.get("mcp")) {
        Some(record) => crate::tools::mcp::McpTools::offline(
            &serde_json::from_value(record.clone())
                .map_err(|e| TaskError::Data(format!("the session's MCP tools: {e}")))?,
        ),
        None => crate::tools::mcp::McpTools::default(),
    };
    let options = &TaskOptions { style: spec.style, mcp_tools, ..options.clone() };
    let task = match entry.from_spec {
        Some(rebuild) => rebuild(entry.info, spec, options),
        None => (entry.build)(entry.info, &TaskOptions { data: None, ..options.clone() }, &mut Vec::new()),
    }?;
    styled(task, options)
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
            options.loader(),
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
        let has = crate::engine::methods::count(len, "problem", "problems");
        format!("the task has {has}; indices 0..{limit} go over them again in further passes")
    } else {
        let has = crate::engine::methods::count(len, "problem", "problems");
        format!("the task has {has} (indices 0..{len})")
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
    fn the_tasks_reading_reference_actions_are_those_that_do() {
        assert_eq!(reading_reference_actions(), ["hotpotqa", "fever"]);
        let reference = TaskOptions { actions: Some(react_text::ActionRules::Reference), ..TaskOptions::default() };
        let demo = build("qa-demo", &reference, &mut Vec::new()).unwrap();
        assert_eq!(demo.action_rules(), None, "qa-demo reads its replies its own way");
    }

    #[test]
    fn every_registered_task_builds_and_says_who_it_is() {
        let with_data: Vec<&str> = REGISTRY.iter().filter(|e| e.info.reads_data).map(|e| &*e.info.name).collect();
        for entry in REGISTRY {
            let name = &*entry.info.name;
            let task = build(name, &TaskOptions::default(), &mut Vec::new()).unwrap();
            assert_eq!(task.name(), name);
            assert_eq!(task.info(), entry.info, "{name} returns its own info");
            assert!(!entry.info.input_noun.is_empty() && !entry.info.input_hint.is_empty());
            assert!(!entry.info.input_examples.is_empty(), "{name} gives examples of inputs");
            if entry.info.reads_data {
                assert_eq!(task.problem_count(), 0, "no problems without --data");
            } else {
                assert!(task.problem(entry.info.default_problem).is_some(), "{name} opens on a problem");
                let data = TaskOptions { data: Some("x.jsonl".into()), ..TaskOptions::default() };
                let err = build(name, &data, &mut Vec::new()).err().expect("--data refused");
                let told = format!("{name} has its problems built in; --data is for {}", and_list(&with_data));
                assert!(err.to_string().contains(&told), "{err}");
            }
        }
        assert!(!with_data.is_empty() && with_data.len() < REGISTRY.len());
        assert_eq!(find("24").map(|e| &*e.info.name), Some("game24"));
        let err = build("chess", &TaskOptions::default(), &mut Vec::new()).err().unwrap();
        assert_eq!(err.to_string(), format!("unknown task \"chess\" (known: {})", names().join(", ")));
        assert_eq!(names().len(), REGISTRY.len());
    }

    #[test]
    fn every_task_capability_is_whole() {
        use crate::engine::methods::tot_dfs::{ChildOrder, PruneRule};
        for entry in REGISTRY {
            let name = &*entry.info.name;
            let task = build(name, &TaskOptions::default(), &mut Vec::new()).unwrap();
            // The engine's ReAct steps and the runtime's tools come together.
            assert_eq!(task.react().is_some(), task.tools().is_some(), "{name}: ReAct steps and tools");
            if let Some(native) = task.react().and_then(|r| r.native()) {
                assert!(!native.tool_defs().is_empty(), "{name}: native tool calling offers tools");
            }
            if let Some(tree) = task.tree() {
                assert!(tree.default_steps() > 0, "{name}");
                assert!(tree.value().is_some() || tree.vote().is_some(), "{name}: a tree search has an evaluator");
                // The task's own DFS shape uses only what the task has.
                let style = tree.dfs_style();
                if style.prune == PruneRule::Task {
                    assert!(tree.pruning().is_some(), "{name} prunes by a rule it has");
                }
                if style.order == ChildOrder::Proposal {
                    assert!(tree.proposal_scores().is_some(), "{name} orders by scores it has");
                }
            }
        }
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
