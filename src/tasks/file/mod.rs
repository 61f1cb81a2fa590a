//! Tasks written as files: a `task.toml` (or a folder holding one, its prompt templates
//! and its data) names the problems, a minijinja prompt per call purpose, how an answer
//! is read and checked, and, when it has them, the tree-search steps and the tools. No
//! Rust needed: `--task ./mytask.toml`, or a name found in the config directory's
//! `tasks/`. A purpose without a prompt is a capability the task lacks, so the methods
//! that need it are refused by name.
//!
//! The whole definition (prompts and corpus inlined) and the problem's record go into
//! each session's header ([`TaskSource::definition`]), so a session replays and forks
//! without the file. `sim` plays a task file from the gold answers and correct steps
//! the file gives ([`sim`]), and says so when it cannot.

pub mod answer;
pub mod def;
mod rows;
pub mod show;
pub mod sim;
pub mod starter;
pub mod template;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use minijinja::Value as Vars;
use serde_json::{json, Value};

use super::{Problem, TaskError, TaskOptions, TaskSource};
use crate::engine::task::{
    DfsStyle, Feedback, JudgeRequest, Judgment, NativeTools, OutcomeJudge, Proposal, ReactSteps, TreeSearch,
    ValueEvaluator, VoteEvaluator,
};
use crate::engine::{AnswerKind, Params, PromptStyle, ReactStep, Task, TaskInfo};
use crate::protocol::{Message, Prompt, Purpose};
use crate::tools::corpus::Corpus;
use crate::tools::{CalculateTool, ToolRegistry};
use def::{CorpusFile, FileProblem, TaskDef};

/// The key of a file task's definition in its session header and prompt contexts.
pub const CONTEXT_KEY: &str = "file_task";

/// Whether `name` (a `--task` value) names a task file rather than a registered task: a
/// path (with a `/`, ending in `.toml`, or an existing folder), or a name with a file in
/// the config directory's `tasks/` (`tasks/NAME.toml` or `tasks/NAME/task.toml`).
pub fn locate(name: &str) -> Option<PathBuf> {
    let path = Path::new(name);
    if name.contains('/') || name.contains('\\') || name.ends_with(".toml") || path.is_dir() {
        return Some(path.to_path_buf());
    }
    let dir = crate::config::dir()?.join("tasks");
    [dir.join(format!("{name}.toml")), dir.join(name).join("task.toml")].into_iter().find(|p| p.is_file())
}

/// The corpus of a task file's documents.
pub fn corpus_of(files: &[CorpusFile]) -> Corpus {
    let mut corpus = Corpus::default();
    for f in files {
        corpus.load_text(Path::new(&f.name), &f.text);
    }
    corpus
}

/// A value class's name as `&'static str` (the engine's badges take them so): each
/// distinct name is kept once for the life of the program.
fn interned(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// A task read from a task file.
pub struct FileTask {
    def: TaskDef,
    info: TaskInfo,
    problems: Vec<FileProblem>,
    by_input: HashMap<String, usize>,
    classes: Vec<(&'static str, f64)>,
    step_re: Option<regex::Regex>,
    final_re: Option<regex::Regex>,
    vote_re: Option<regex::Regex>,
    tools: Option<Arc<ToolRegistry>>,
    /// The `problem.<field>`s the prompts read (a typed input has none of them).
    fields_read: BTreeSet<String>,
    checker: answer::Checker,
    /// The simulated model's wrong reply of each problem, by input, built once.
    wrong_replies: Mutex<HashMap<String, Option<String>>>,
    style: PromptStyle,
}

impl FileTask {
    /// The task in the file at `path`, for `tasks::build`.
    pub fn open(path: &Path, options: &TaskOptions, warnings: &mut Vec<String>) -> Result<FileTask, TaskError> {
        if options.data.is_some() {
            return Err(TaskError::Data(format!(
                "{}: a task file names its problems in [problems]; drop --data",
                path.display()
            )));
        }
        if options.prompts.is_some() {
            return Err(TaskError::Data(format!(
                "{}: a task file's prompts are in its [prompts]; drop --prompts",
                path.display()
            )));
        }
        let loaded = def::load(path).map_err(|e| TaskError::File(e.to_string()))?;
        warnings.extend(loaded.warnings.iter().cloned());
        let mut def = loaded.def;
        let live = start_mcp(&mut def, &options.mcp)
            .map_err(|m| TaskError::File(format!("{}: {m}", loaded.path.display())))?;
        let task = FileTask::new(def, loaded.problems, options.style, live)
            .map_err(|m| TaskError::File(format!("{}: {m}", loaded.path.display())))?;
        task.check_renders().map_err(|m| TaskError::File(format!("{}: {m}", loaded.path.display())))?;
        Ok(task)
    }

    /// The task a session header recorded (its definition and its one problem).
    pub fn from_recorded(recorded: &Value, style: PromptStyle) -> Result<FileTask, TaskError> {
        let bad = |e: String| TaskError::File(format!("the session's task definition: {e}"));
        let def: TaskDef = serde_json::from_value(recorded["def"].clone()).map_err(|e| bad(e.to_string()))?;
        let problem: FileProblem =
            serde_json::from_value(recorded["problem"].clone()).map_err(|e| bad(e.to_string()))?;
        FileTask::new(def, vec![problem], style, Vec::new()).map_err(bad)
    }

    /// The task of `def`; `mcp`: the started MCP servers' tools (none: those the
    /// definition records, offline, as a replay has them).
    fn new(
        def: TaskDef,
        problems: Vec<FileProblem>,
        style: PromptStyle,
        mcp: Vec<Arc<dyn crate::tools::Tool>>,
    ) -> Result<FileTask, String> {
        let mut classes: Vec<(&'static str, f64)> = def
            .tree
            .as_ref()
            .map(|t| t.value_classes.iter().map(|(k, v)| (interned(k), *v)).collect())
            .unwrap_or_default();
        classes.sort_by(|a, b| a.1.total_cmp(&b.1));
        let re = |p: Option<&String>| p.map(|p| regex::Regex::new(p).map_err(|e| e.to_string())).transpose();
        let tree = def.tree.as_ref();
        let (step_re, final_re) =
            (re(tree.and_then(|t| t.step_pattern.as_ref()))?, re(tree.and_then(|t| t.final_pattern.as_ref()))?);
        let vote_re = re(tree.and_then(|t| t.vote_pattern.as_ref()))?;
        let tools = def.tools.as_ref().map(|t| {
            let mut registry = ToolRegistry::new();
            if !t.corpus.is_empty() {
                registry = ToolRegistry::react(Arc::new(corpus_of(&t.corpus)));
            }
            if t.calculate {
                registry = registry.with(CalculateTool);
            }
            if t.math {
                use crate::tools::math::{AlgebraTool, CalcTool, CountTool, LpTool};
                registry = registry.with(CalcTool).with(AlgebraTool).with(LpTool).with(CountTool);
            }
            let mcp = if mcp.is_empty() { crate::tools::mcp::offline(&t.mcp_tools) } else { mcp.clone() };
            for tool in mcp {
                registry.register(tool);
            }
            if registry.get("finish").is_none() {
                registry = registry.with(crate::tools::FinishTool);
            }
            Arc::new(registry)
        });
        let fields_read = def.prompts.values().flat_map(|t| template::problem_fields(t)).collect();
        let by_input = problems.iter().enumerate().rev().map(|(i, p)| (p.input.clone(), i)).collect();
        let info = info_of(&def, &problems);
        Ok(FileTask {
            def,
            info,
            problems,
            by_input,
            classes,
            step_re,
            final_re,
            vote_re,
            tools,
            fields_read,
            checker: answer::Checker::default(),
            wrong_replies: Mutex::default(),
            style,
        })
    }

    /// The definition as read.
    pub fn def(&self) -> &TaskDef {
        &self.def
    }

    /// The problems as listed.
    pub fn problems(&self) -> &[FileProblem] {
        &self.problems
    }

    fn record(&self, x: &str) -> Cow<'_, FileProblem> {
        match self.by_input.get(x.trim()) {
            Some(&i) => Cow::Borrowed(&self.problems[i]),
            None => Cow::Owned(FileProblem { input: x.trim().to_string(), ..FileProblem::default() }),
        }
    }

    /// Every prompt renders for every listed problem (up to the first thousand), so a
    /// field a template reads and a row lacks is found when the file is read.
    fn check_renders(&self) -> Result<(), String> {
        for (i, p) in self.problems.iter().take(1000).enumerate() {
            for (purpose, text) in &self.def.prompts {
                let vars = self.vars(&p.input, self.sample_vars(&p.input, purpose));
                template::render(text, &vars).map_err(|m| format!("prompts.{purpose}: problem {i}: {m}"))?;
            }
        }
        Ok(())
    }

    /// The prompts of the first problem, rendered (`task check`).
    pub fn rendered_examples(&self) -> Vec<(String, Vec<Message>)> {
        let Some(first) = self.problems.first() else { return Vec::new() };
        self.def
            .prompts
            .iter()
            .map(|(purpose, text)| {
                let vars = self.vars(&first.input, self.sample_vars(&first.input, purpose));
                (purpose.clone(), template::render(text, &vars).unwrap_or_default())
            })
            .collect()
    }

    /// Template variables a prompt of `purpose` on `x` has, with sample values (for
    /// checking that every problem renders, and for `task check`).
    fn sample_vars(&self, x: &str, purpose: &str) -> Value {
        match purpose {
            "judge" => self.judge_vars(x, "(the answer to judge)"),
            _ => sample_vars(purpose),
        }
    }

    /// The judge prompt's variables about `answer` to `x`.
    fn judge_vars(&self, x: &str, answer: &str) -> Value {
        json!({ "answer": answer, "gold": self.record(x).gold, "rubric": self.def.check.rubric })
    }

    /// The template variables of a prompt on problem `x`, with `extra`.
    fn vars(&self, x: &str, extra: Value) -> Vars {
        let record = self.record(x);
        let mut problem = record.fields.clone();
        problem.entry("input").or_insert_with(|| json!(record.input));
        let mut all = json!({ "input": record.input, "problem": problem });
        if let (Some(all), Value::Object(extra)) = (all.as_object_mut(), extra) {
            all.extend(extra);
        }
        if self.tools.is_some() && all.get("tools").is_none() {
            all["tools"] = json!(self.tools.as_ref().map(|t| t.prompt_lines()));
        }
        Vars::from_serialize(&all)
    }

    /// A prompt of `purpose` on `x`, rendered with `extra` variables; its context tells
    /// the simulated model what it needs (the gold answer, the correct steps, the state).
    fn prompt(&self, purpose: &str, call: Purpose, x: &str, extra: Value, max_tokens: u32) -> Prompt {
        let text = self.def.prompts.get(purpose).map(String::as_str).unwrap_or_default();
        let messages = match template::render(text, &self.vars(x, extra.clone())) {
            Ok(m) => m,
            // Every listed problem rendered when the file was read; a typed input was
            // refused if the prompts read fields it lacks. What is left says what failed.
            Err(m) => {
                vec![Message::user(format!("(the {purpose} prompt of task {} did not render: {m})", self.def.name))]
            }
        };
        let record = self.record(x);
        let mut context = json!({
            "task": self.def.name,
            "input": record.input,
            CONTEXT_KEY: {
                "gold": record.gold,
                "steps": record.steps,
                "right": record.gold.as_deref().and_then(|g| self.def.answer.write(g)),
                "wrong": record.gold.as_deref().and_then(|g| self.wrong_reply_once(x, g)),
            },
        });
        if let (Some(c), Value::Object(extra)) = (context.as_object_mut(), extra) {
            c.extend(extra);
        }
        let stop = if call == Purpose::Act {
            crate::tasks::react_text::STOP_SEQUENCES.iter().map(|s| s.to_string()).collect()
        } else {
            vec![]
        };
        Prompt { purpose: call, messages, context, stop, max_tokens: Some(max_tokens), sampling: Default::default() }
    }

    /// [`FileTask::wrong_reply`], asked once a problem (every prompt carries it).
    fn wrong_reply_once(&self, x: &str, gold: &str) -> Option<String> {
        let key = x.trim().to_string();
        if let Some(known) = self.wrong_replies.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return known.clone();
        }
        let wrong = self.wrong_reply(x, gold);
        self.wrong_replies.lock().unwrap_or_else(|p| p.into_inner()).insert(key, wrong.clone());
        wrong
    }

    /// A reply stating an answer the check refuses (the simulated model's mistakes), if
    /// one is found without asking an external checker.
    fn wrong_reply(&self, x: &str, gold: &str) -> Option<String> {
        let refused = |c: &str| match self.def.check.kind {
            answer::CheckKind::Command => false,
            // The judge's verdicts come from its replies; a different text stands in.
            answer::CheckKind::Judge => {
                crate::tasks::react_text::normalize_answer(c) != crate::tasks::react_text::normalize_answer(gold)
            }
            _ => self.def.check.check(&self.checker, x, c, gold).is_err(),
        };
        let candidates = [bump_last_number(gold), format!("not {gold}"), "none of these".to_string()];
        candidates.into_iter().filter(|c| !c.is_empty()).find(|c| refused(c)).and_then(|c| self.def.answer.write(&c))
    }

    fn steps_of(y: &str) -> Vec<&str> {
        y.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
    }

    fn tree_vars(&self, x: &str, y: &str) -> Value {
        let steps = FileTask::steps_of(y);
        let answer = (steps.len() >= self.depth()).then(|| self.extract_answer(x, y)).flatten();
        json!({ "y": y, "steps": steps, "step": steps.len() + 1, "answer": answer })
    }

    fn depth(&self) -> usize {
        self.def.tree.as_ref().map_or(1, |t| t.steps)
    }

    /// A candidate step after `y`, checked by the step (or final-step) pattern; the step
    /// command, if the file names one, judges it after that ([`TreeSearch::step_command`]).
    fn candidate(&self, _x: &str, y: &str, line: &str) -> Proposal {
        let thought = crate::tasks::reply::plain_line(line);
        let last = FileTask::steps_of(y).len() + 1 >= self.depth();
        let (re, which) = if last { (&self.final_re, "final_pattern") } else { (&self.step_re, "step_pattern") };
        let problem = match re {
            _ if thought.is_empty() => Some("an empty step".to_string()),
            Some(re) if !re.is_match(&thought) => {
                Some(format!("the step does not match [tree] {which} {}", re.as_str()))
            }
            _ => None,
        };
        let path = format!("{y}{thought}\n");
        Proposal { thought, path, problem }
    }
}

/// Start the MCP servers a run gives (`--mcp`) and record their tools in `def`: the
/// live tools, or the line that says why not.
fn start_mcp(
    def: &mut TaskDef,
    servers: &[crate::tools::mcp::McpConfig],
) -> Result<Vec<Arc<dyn crate::tools::Tool>>, String> {
    let named = def.tools.as_ref().map(|t| t.mcp.clone()).unwrap_or_default();
    if let Some(missing) = named.iter().find(|n| !servers.iter().any(|s| &s.name == *n)) {
        return Err(format!(
            "[tools] mcp names the server {missing}: start it with --mcp {missing} (an [[mcp]] entry in the config file)"
        ));
    }
    if servers.is_empty() {
        return Ok(Vec::new());
    }
    if !def.prompts.contains_key("react") {
        return Err(format!("--mcp adds tools to ReAct, and {} has no react prompt", def.name));
    }
    let tools = def.tools.get_or_insert_with(def::ToolsDef::default);
    let mut live = Vec::new();
    for server in servers {
        let (started, defs) = crate::tools::mcp::connect(server)?;
        live.extend(started);
        tools.mcp_tools.extend(defs);
        tools.mcp_servers.push(server.recorded());
    }
    Ok(live)
}

/// Template variables a prompt of `purpose` has, with sample values (for checking that
/// every problem renders, and for `task check`).
fn sample_vars(purpose: &str) -> Value {
    match purpose {
        "propose" | "sample" => json!({ "y": "", "steps": [], "step": 1 }),
        "value" => json!({ "y": "", "steps": [], "step": 1, "answer": null }),
        "vote" => json!({ "choices": "Choice 1:\n(a state)\nChoice 2:\n(another)", "ys": ["(a state)", "(another)"] }),
        "react" | "react_native" => json!({ "trajectory": "", "step": 1 }),
        "feedback" => json!({ "attempt": "(an attempt)" }),
        "refine" | "reflect" => json!({ "attempt": "(an attempt)", "feedback": "(the feedback)" }),
        _ => json!({}),
    }
}

/// `text` with its last number one more (`36` → `37`); empty when it has no number.
pub fn bump_last_number(text: &str) -> String {
    let Some(end) = text.rfind(|c: char| c.is_ascii_digit()) else { return String::new() };
    let start = text[..=end].rfind(|c: char| !c.is_ascii_digit()).map_or(0, |i| i + 1);
    match text[start..=end].parse::<u64>() {
        Ok(n) => format!("{}{}{}", &text[..start], n.saturating_add(1), &text[end + 1..]),
        Err(_) => String::new(),
    }
}

fn info_of(def: &TaskDef, problems: &[FileProblem]) -> TaskInfo {
    let answer_kind = match def.check.kind {
        answer::CheckKind::Numeric | answer::CheckKind::Math => AnswerKind::Expression,
        answer::CheckKind::Choice => AnswerKind::Label,
        _ => AnswerKind::ShortText,
    };
    let noun = def.input_noun.clone();
    let hint = if def.input_hint.is_empty() {
        format!("a {noun} number or a {noun} of your own")
    } else {
        def.input_hint.clone()
    };
    let mut examples = vec![Cow::Owned("0".to_string())];
    examples.extend(problems.first().map(|p| Cow::Owned(p.input.lines().next().unwrap_or("").to_string())));
    TaskInfo {
        name: Cow::Owned(def.name.clone()),
        about: Cow::Owned(if def.about.is_empty() {
            format!("a task file with {}", crate::engine::methods::count(problems.len(), "problem", "problems"))
        } else {
            def.about.clone()
        }),
        input_noun: Cow::Owned(noun),
        input_hint: Cow::Owned(hint),
        input_examples: Cow::Owned(examples),
        default_problem: 0,
        answer_kind,
        reads_data: false,
    }
}

impl Task for FileTask {
    fn info(&self) -> &TaskInfo {
        &self.info
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        let mut prompt = self.prompt("io", Purpose::Io, x, json!({}), 400);
        if let Some(call) = &self.def.io_call {
            prompt.max_tokens = call.max_tokens;
            prompt.stop = call.stop.clone();
            prompt.sampling = call.sampling;
        }
        prompt
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        self.prompt("cot", Purpose::Cot, x, json!({}), 1000)
    }

    fn extract_answer(&self, _x: &str, y: &str) -> Option<String> {
        // A ReAct trajectory ends with Finish[answer].
        if self.tools.is_some() {
            for line in y.lines().rev() {
                let lower = line.to_ascii_lowercase();
                if let Some(at) = lower.find("finish[") {
                    let rest = &line[at + "finish[".len()..];
                    return Some(rest.rsplit_once(']').map_or(rest, |(a, _)| a).trim().to_string());
                }
            }
        }
        self.def.answer.read(y)
    }

    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let record = self.record(x);
        if self.def.check.kind == answer::CheckKind::Judge {
            return self.def.check.check(&self.checker, x, answer, record.gold.as_deref().unwrap_or(""));
        }
        let gold = record.gold.as_deref().ok_or_else(|| format!("{:?} has no gold answer in the task file", x))?;
        self.def.check.check(&self.checker, x, answer, gold)
    }

    fn score(&self, x: &str, answer: &str) -> f64 {
        let record = self.record(x);
        record.gold.as_deref().map_or(0.0, |gold| self.def.check.score(&self.checker, x, answer, gold))
    }

    fn check_command(&self, x: &str, answer: &str) -> Option<crate::engine::CheckRequest> {
        let gold = self.record(x).gold.clone()?;
        self.def.check.command_request(x, answer, &gold)
    }

    fn answer_rule(&self) -> Option<String> {
        let read = serde_json::to_value(self.def.answer.read).ok()?;
        Some(format!("[answer] read = {read}"))
    }

    fn runs_checks(&self) -> bool {
        self.def.check.kind == answer::CheckKind::Command
            || self.def.tree.as_ref().is_some_and(|t| !t.step_command.is_empty())
    }

    fn answer_key(&self, answer: &str) -> String {
        self.def.check.key(answer)
    }

    fn prompt_style(&self) -> PromptStyle {
        self.style
    }

    fn tree(&self) -> Option<&dyn TreeSearch> {
        self.def.tree.as_ref().map(|_| self as &dyn TreeSearch)
    }

    fn react(&self) -> Option<&dyn ReactSteps> {
        self.def.prompts.contains_key("react").then_some(self as &dyn ReactSteps)
    }

    fn feedback(&self) -> Option<&dyn Feedback> {
        Some(self)
    }

    fn judge(&self) -> Option<&dyn OutcomeJudge> {
        (self.def.check.kind == answer::CheckKind::Judge).then_some(self as &dyn OutcomeJudge)
    }

    fn sim_plays(&self, params: &Params) -> Option<Result<(), String>> {
        Some(sim::plays(self, params))
    }
}

/// Self-Refine and Reflexion: the file's `feedback`, `refine` and `reflect` prompts where
/// it gives them, else the generic ones over its cot prompt.
impl Feedback for FileTask {
    fn feedback_prompt(&self, x: &str, attempt: &str) -> Prompt {
        match self.def.prompts.contains_key("feedback") {
            true => self.prompt("feedback", Purpose::Feedback, x, json!({ "attempt": attempt }), 600),
            false => crate::engine::task::feedback::generic_feedback(self, x, attempt),
        }
    }

    fn refine_prompt(&self, x: &str, attempt: &str, feedback: &str) -> Prompt {
        match self.def.prompts.contains_key("refine") {
            true => {
                self.prompt("refine", Purpose::Refine, x, json!({ "attempt": attempt, "feedback": feedback }), 1000)
            }
            false => crate::engine::task::feedback::generic_refine(self, x, attempt, feedback),
        }
    }

    fn reflect_prompt(&self, x: &str, attempt: &str, feedback: &str) -> Prompt {
        match self.def.prompts.contains_key("reflect") {
            true => {
                self.prompt("reflect", Purpose::Reflect, x, json!({ "attempt": attempt, "feedback": feedback }), 300)
            }
            false => crate::engine::task::feedback::generic_reflect(self, x, attempt, feedback),
        }
    }
}

impl TreeSearch for FileTask {
    fn default_steps(&self) -> usize {
        self.depth()
    }

    fn propose_prompt(&self, x: &str, y: &str) -> Prompt {
        let purpose = if self.def.prompts.contains_key("propose") { "propose" } else { "sample" };
        self.prompt(purpose, Purpose::Propose, x, self.tree_vars(x, y), 400)
    }

    fn sample_prompt(&self, x: &str, y: &str) -> Prompt {
        let purpose = if self.def.prompts.contains_key("sample") { "sample" } else { "propose" };
        self.prompt(purpose, Purpose::Sample, x, self.tree_vars(x, y), 200)
    }

    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal> {
        reply
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("```"))
            .map(|l| self.candidate(x, y, l))
            .collect()
    }

    fn parse_sample(&self, x: &str, y: &str, reply: &str) -> Proposal {
        let line = reply.lines().find(|l| !l.trim().is_empty() && !l.trim_start().starts_with("```")).unwrap_or("");
        self.candidate(x, y, line)
    }

    fn parse_edit(&self, x: &str, y: &str, text: &str) -> Proposal {
        self.candidate(x, y, text.lines().next().unwrap_or(""))
    }

    fn value(&self) -> Option<&dyn ValueEvaluator> {
        self.def.prompts.contains_key("value").then_some(self as &dyn ValueEvaluator)
    }

    fn vote(&self) -> Option<&dyn VoteEvaluator> {
        self.def.prompts.contains_key("vote").then_some(self as &dyn VoteEvaluator)
    }

    fn dfs_style(&self) -> DfsStyle {
        DfsStyle::default()
    }

    fn step_command(&self, x: &str, y: &str, p: &Proposal) -> Option<crate::engine::CheckRequest> {
        let tree = self.def.tree.as_ref()?;
        if tree.step_command.is_empty() || p.problem.is_some() || p.thought.is_empty() {
            return None;
        }
        let steps = FileTask::steps_of(y);
        let last = steps.len() + 1 >= self.depth();
        let stdin = json!({ "input": x.trim(), "steps": steps, "step": p.thought, "last": last });
        Some(crate::engine::CheckRequest {
            purpose: crate::engine::CheckPurpose::Step,
            argv: tree.step_command.clone(),
            timeout_ms: tree.step_timeout_ms.unwrap_or(answer::DEFAULT_TIMEOUT_MS),
            stdin: stdin.to_string(),
        })
    }
}

impl ValueEvaluator for FileTask {
    fn value_prompt(&self, x: &str, y: &str) -> Prompt {
        let mut prompt = self.prompt("value", Purpose::Value, x, self.tree_vars(x, y), 200);
        // The words the simulated model answers with.
        prompt.context["value_classes"] = json!(self.def.tree.as_ref().map(|t| &t.value_classes));
        prompt
    }

    fn value_classes(&self) -> &[(&'static str, f64)] {
        &self.classes
    }

    fn parse_value(&self, _x: &str, _y: &str, samples: &[String]) -> (f64, Vec<String>) {
        crate::tasks::reply::class_value_styled(samples, &self.classes, self.style)
    }

    fn fixed_value(&self, x: &str, y: &str) -> Option<(f64, String)> {
        let done = FileTask::steps_of(y).len() >= self.depth();
        (done && self.extract_answer(x, y).is_none()).then(|| (0.0, "the last step gives no answer".to_string()))
    }
}

impl VoteEvaluator for FileTask {
    fn vote_prompt(&self, x: &str, ys: &[String]) -> Prompt {
        let extra = json!({ "choices": crate::tasks::reply::numbered_choices(ys), "ys": ys });
        self.prompt("vote", Purpose::Vote, x, extra, 400)
    }

    fn parse_vote(&self, reply: &str, n_choices: usize) -> Option<usize> {
        match &self.vote_re {
            None => crate::tasks::reply::best_choice(reply, n_choices),
            Some(re) => {
                let n: usize = re.captures_iter(reply).last()?.get(1)?.as_str().trim().parse().ok()?;
                (1..=n_choices).contains(&n).then(|| n - 1)
            }
        }
    }
}

impl ReactSteps for FileTask {
    fn react_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt {
        let extra = json!({ "trajectory": trajectory, "step": step });
        self.prompt("react", Purpose::Act, x, extra, 300)
    }

    fn parse_react(&self, reply: &str, step: usize) -> ReactStep {
        let examples = self.tools.as_ref().map(|t| t.call_examples()).unwrap_or_default();
        crate::tasks::react_text::parse_step_naming(reply, step, &examples).into()
    }

    fn native(&self) -> Option<&dyn NativeTools> {
        self.def.prompts.contains_key("react_native").then_some(self as &dyn NativeTools)
    }
}

/// `--tool-mode native`: the `react_native` prompt, and the tools as tool definitions.
impl NativeTools for FileTask {
    fn react_native_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt {
        let extra = json!({ "trajectory": trajectory, "step": step });
        // The stop sequences stay, as for the built-in tasks: they keep a model that
        // writes its action as text from writing the observation too.
        self.prompt("react_native", Purpose::Act, x, extra, 300)
    }

    fn tool_defs(&self) -> Vec<crate::protocol::ToolDef> {
        self.tools.as_ref().map(|t| t.tool_defs()).unwrap_or_default()
    }
}

/// A `kind = "judge"` check: the judge is asked about each output's answer when the
/// method is done, and its verdict decides whether the node is a solution.
impl OutcomeJudge for FileTask {
    fn outcome_judge(&self, x: &str, y: &str) -> Option<JudgeRequest> {
        let answer = self.extract_answer(x, y)?;
        let prompt = self.prompt("judge", Purpose::Judge, x, self.judge_vars(x, &answer), 400);
        Some(JudgeRequest { prompt, n: 1 })
    }

    fn read_judgment(&self, x: &str, y: &str, samples: &[String]) -> Judgment {
        let Some(answer) = self.extract_answer(x, y) else { return Judgment::default() };
        let reply = samples.first().map(String::as_str).unwrap_or("");
        let (right, note) = match crate::engine::task::read_verdict(reply) {
            Some(right) => {
                let said = reply.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
                let verdict = if right { "correct" } else { "incorrect" };
                (right, format!("the judge: {verdict} ({})", crate::safe_text::clip(said, 200)))
            }
            None => (
                false,
                "the judge's reply has no `VERDICT: correct|incorrect` line; the answer is not counted as right"
                    .to_string(),
            ),
        };
        self.checker.set_judged(x, &self.answer_key(&answer), right);
        Judgment { metrics: vec![], note, verdict: Some(right) }
    }

    /// The same answer (as majority voting counts it) is judged once.
    fn judge_key(&self, x: &str, y: &str) -> Option<String> {
        self.extract_answer(x, y).map(|a| self.answer_key(&a))
    }
}

impl TaskSource for FileTask {
    fn problem_count(&self) -> usize {
        self.problems.len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        self.problems.get(index).map(|p| Problem { index: Some(index), input: p.input.clone() })
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(TaskError::Input(text.into(), format!("a {} is needed", self.info.input_noun)));
        }
        if let Some(&i) = self.by_input.get(text) {
            return Ok(Problem { index: Some(i), input: text.to_string() });
        }
        let n = self.problems.len();
        if self.def.check.kind != answer::CheckKind::Judge {
            // Its answers could not be checked (nor played by sim): refused now, not
            // counted as wrong at the end.
            return Err(TaskError::Input(
                text.into(),
                format!(
                    "{} checks answers against the gold answers of its {n} problems, and a {} of your own has none: \
                     pick one of them (--range A..B, 0-based), or add this one with its answer to [problems]",
                    self.def.name, self.info.input_noun
                ),
            ));
        }
        let read: Vec<&str> = self.fields_read.iter().map(String::as_str).filter(|f| *f != "input").collect();
        if !read.is_empty() {
            return Err(TaskError::Input(
                text.into(),
                format!("the prompts read problem.{} of a listed problem; pick one by number", read.join(", problem.")),
            ));
        }
        Ok(Problem { index: None, input: text.to_string() })
    }

    fn tools(&self) -> Option<Arc<ToolRegistry>> {
        self.react().and(self.tools.clone())
    }

    fn gold(&self, input: &str) -> Option<String> {
        self.record(input).gold.clone()
    }

    fn facets(&self, input: &str) -> std::collections::BTreeMap<String, String> {
        self.record(input).facets.clone()
    }

    fn definition(&self, input: &str) -> Option<Value> {
        Some(json!({ "def": self.def, "problem": *self.record(input) }))
    }
}
