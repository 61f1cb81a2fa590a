//! `hotpotqa` and `fever`: the ReAct paper's question answering (HotpotQA) and fact
//! checking (FEVER) tasks over data the user names with `--data FILE`. Prompts follow the
//! paper's format (`assets/prompts/hotpotqa/`, `assets/prompts/fever/`); answers come from
//! `Finish[...]` and are scored by exact match and token F1; the tools are search, lookup
//! and finish over a knowledge backend (Wikipedia unless the CLI chooses a corpus).
//!
//! Data files:
//! * hotpotqa: a JSON list of `{question, answer, type}` (`hotpot_dev_v1_simplified.json`),
//!   or JSON Lines of the same;
//! * fever: JSON Lines of `{claim, label}` (label SUPPORTS, REFUTES or NOT ENOUGH INFO), or
//!   a JSON list of them;
//! * either: ReAct's logged trajectories (text, blocks separated by `-----------`): the
//!   claims or questions with the `gt_answer` of their results.
//!
//! A session records the gold answer in its header, so replay needs no data file
//! ([`QaData::from_spec`]).

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use super::react_text::{self, check_answer, f1, parse_step_with, ActionRules, QaItem, QuestionKind};
use super::{prompts, Problem, TaskError, TaskOptions, TaskSource};
use crate::engine::task::{Feedback, NativeTools, ReactSteps};
use crate::engine::{AnswerKind, PromptStyle, ReactStep, Task, TaskInfo};
use crate::protocol::{Message, Prompt, Purpose};
use crate::tools::choice::LazyBackend;
use crate::tools::wikipedia::WikipediaOptions;
use crate::tools::{KnowledgeBackend, ToolRegistry};

/// Which of the two tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QaKind {
    HotpotQa,
    Fever,
}

/// FEVER's three labels.
pub const FEVER_LABELS: [&str; 3] = ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"];

/// Registrations (see `tasks::REGISTRY`).
pub const HOTPOTQA: TaskInfo = TaskInfo {
    name: Cow::Borrowed("hotpotqa"),
    about: Cow::Borrowed("HotpotQA multi-hop questions from --data (JSON or ReAct trajectory text)"),
    input_noun: Cow::Borrowed("question"),
    input_hint: Cow::Borrowed("a question number from the data file or a question of your own"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("0")]),
    default_problem: 0,
    answer_kind: AnswerKind::ShortText,
    reads_data: true,
};
pub const FEVER: TaskInfo = TaskInfo {
    name: Cow::Borrowed("fever"),
    about: Cow::Borrowed("FEVER claims to verify from --data (JSONL or ReAct trajectory text)"),
    input_noun: Cow::Borrowed("claim"),
    input_hint: Cow::Borrowed("a claim number from the data file or a claim of your own to verify"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("0")]),
    default_problem: 0,
    answer_kind: AnswerKind::Label,
    reads_data: true,
};

impl QaKind {
    pub fn from_name(name: &str) -> Option<QaKind> {
        [QaKind::HotpotQa, QaKind::Fever].into_iter().find(|k| k.name() == name)
    }

    pub fn info(self) -> &'static TaskInfo {
        match self {
            QaKind::HotpotQa => &HOTPOTQA,
            QaKind::Fever => &FEVER,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            QaKind::HotpotQa => "hotpotqa",
            QaKind::Fever => "fever",
        }
    }

    /// The placeholder the prompts put the problem in.
    fn var(self) -> &'static str {
        match self {
            QaKind::HotpotQa => "question",
            QaKind::Fever => "claim",
        }
    }

    /// The kind of trajectory (in ReAct's text logs) this task reads.
    pub fn trajectory_kind(self) -> QuestionKind {
        match self {
            QaKind::HotpotQa => QuestionKind::Question,
            QaKind::Fever => QuestionKind::Claim,
        }
    }

    fn builtin(self) -> [prompts::Builtin; 3] {
        match self {
            QaKind::HotpotQa => [
                crate::builtin_prompt!("hotpotqa", "react.txt"),
                crate::builtin_prompt!("hotpotqa", "cot.txt"),
                crate::builtin_prompt!("hotpotqa", "io.txt"),
            ],
            QaKind::Fever => [
                crate::builtin_prompt!("fever", "react.txt"),
                crate::builtin_prompt!("fever", "cot.txt"),
                crate::builtin_prompt!("fever", "io.txt"),
            ],
        }
    }
}

pub struct QaData {
    kind: QaKind,
    react: String,
    cot: String,
    io: String,
    items: Vec<QaItem>,
    tools: Arc<ToolRegistry>,
    rules: ActionRules,
    style: PromptStyle,
}

/// The default knowledge backend of these tasks: Wikipedia, built on first use.
pub fn default_backend() -> Arc<dyn KnowledgeBackend> {
    Arc::new(LazyBackend::wikipedia(WikipediaOptions::default()))
}

impl QaData {
    /// The task over `items`, with search/lookup/finish over `backend` (Wikipedia if `None`).
    /// Build for `tasks::REGISTRY`: the problems come from `--data` (none without it).
    pub fn build(
        info: &TaskInfo,
        options: &TaskOptions,
        warnings: &mut Vec<String>,
    ) -> Result<Arc<dyn TaskSource>, TaskError> {
        let kind = QaKind::from_name(&info.name).ok_or_else(|| TaskError::Unknown(info.name.to_string()))?;
        let items = match &options.data {
            Some(path) => {
                let (items, w) = read_data(kind, path)?;
                warnings.extend(w);
                items
            }
            None => Vec::new(),
        };
        let rules = options.actions.unwrap_or_default();
        if rules == ActionRules::Reference && !options.mcp_tools.is_empty() {
            return Err(TaskError::Data(
                "--react-mode reference reads only search, lookup and finish, as the paper's environment did; \
                 drop it to offer an MCP server's tools"
                    .into(),
            ));
        }
        let task = QaData::styled(kind, options.loader(), items, options.knowledge.clone())?;
        Ok(Arc::new(task.with_rules(rules).with_mcp(&options.mcp_tools)))
    }

    /// With the reference prompts (the built-in ones, or those in `prompt_dir`).
    pub fn new(
        kind: QaKind,
        prompt_dir: Option<&Path>,
        items: Vec<QaItem>,
        backend: Option<Arc<dyn KnowledgeBackend>>,
    ) -> Result<Self, TaskError> {
        QaData::styled(kind, prompts::Loader::new(prompt_dir, PromptStyle::Reference), items, backend)
    }

    pub fn styled(
        kind: QaKind,
        loader: prompts::Loader,
        items: Vec<QaItem>,
        backend: Option<Arc<dyn KnowledgeBackend>>,
    ) -> Result<Self, TaskError> {
        let [react, cot, io] = kind.builtin();
        let var = kind.var();
        let backend = backend.unwrap_or_else(default_backend);
        Ok(QaData {
            kind,
            react: loader.load(react, &[var, "trajectory", "step"])?,
            cot: loader.load(cot, &[var])?,
            io: loader.load(io, &[var])?,
            items,
            tools: Arc::new(ToolRegistry::react(backend)),
            rules: ActionRules::Tolerant,
            style: loader.style,
        })
    }

    /// Read actions by these rules (imported trajectories use the reference environment's).
    pub fn with_rules(mut self, rules: ActionRules) -> Self {
        self.rules = rules;
        self
    }

    /// Rebuild for `tasks::REGISTRY` (`TaskEntry::from_spec`): the task a session ran.
    pub fn rebuild(
        info: &TaskInfo,
        spec: &super::TaskSpec,
        options: &TaskOptions,
    ) -> Result<Arc<dyn TaskSource>, TaskError> {
        let kind = QaKind::from_name(&info.name).ok_or_else(|| TaskError::Unknown(info.name.to_string()))?;
        Ok(Arc::new(
            QaData::from_spec(kind, spec, options.loader(), options.knowledge.clone())?.with_mcp(&options.mcp_tools),
        ))
    }

    /// With the MCP servers' tools a run adds (`--mcp`) next to search, lookup and finish;
    /// the ReAct prompt lists them after its own.
    pub fn with_mcp(mut self, added: &crate::tools::mcp::McpTools) -> Self {
        if !added.is_empty() {
            self.tools = Arc::new((*self.tools).clone().with_mcp(added));
        }
        self
    }

    /// The ReAct prompt's messages with the MCP servers' tools listed: numbered on after
    /// the prompt's own list (the line naming `Finish[`), or else before it all.
    fn list_mcp_tools(&self, mut messages: Vec<Message>) -> Vec<Message> {
        let specs: Vec<_> = self
            .tools
            .specs()
            .into_iter()
            .filter(|s| self.tools.mcp().tools.iter().any(|t| t.name == s.name))
            .collect();
        if specs.is_empty() {
            return messages;
        }
        let Some(first) = messages.first_mut() else { return messages };
        let own = self.tools.specs().len() - specs.len();
        let lines: Vec<String> =
            specs.iter().enumerate().map(|(i, s)| format!("({}) {}", own + i + 1, s.prompt_line())).collect();
        let lines = lines.join("\n");
        let text = &first.content;
        let after = text.find("Finish[").and_then(|at| text[at..].find('\n').map(|end| at + end + 1));
        first.content = match after {
            Some(at) => format!("{}{lines}\n{}", &text[..at], &text[at..]),
            None => format!("You can also call these tools:\n{lines}\n\n{text}"),
        };
        messages
    }

    /// The task a session ran, from its header alone: its one problem with the gold
    /// answer the header records, and the action rules it used.
    pub fn from_spec(
        kind: QaKind,
        spec: &super::TaskSpec,
        loader: prompts::Loader,
        backend: Option<Arc<dyn KnowledgeBackend>>,
    ) -> Result<Self, TaskError> {
        let items = spec
            .gold
            .iter()
            .map(|gold| QaItem { question: spec.input.to_string(), answer: gold.to_string(), kind: String::new() })
            .collect();
        Ok(QaData::styled(kind, loader, items, backend)?.with_rules(spec.actions.unwrap_or_default()))
    }

    /// The task of several recorded sessions, from their headers alone: their problems in
    /// order (each once) with the gold answers recorded, read by `rules`.
    pub fn from_specs(
        kind: QaKind,
        specs: &[super::TaskSpec],
        rules: ActionRules,
        loader: prompts::Loader,
        backend: Option<Arc<dyn KnowledgeBackend>>,
    ) -> Result<Self, TaskError> {
        let mut items: Vec<QaItem> = Vec::with_capacity(specs.len());
        // One problem a spec (the caller says which are the same problem).
        for spec in specs {
            if let Some(gold) = spec.gold {
                items.push(QaItem { question: spec.input.to_string(), answer: gold.to_string(), kind: String::new() });
            }
        }
        Ok(QaData::styled(kind, loader, items, backend)?.with_rules(rules))
    }

    pub fn kind(&self) -> QaKind {
        self.kind
    }

    fn gold_of(&self, x: &str) -> Option<&str> {
        let x = x.trim();
        self.items.iter().find(|q| q.question.trim() == x).map(|q| q.answer.as_str())
    }

    fn prompt(&self, purpose: Purpose, messages: Vec<Message>, x: &str, extra: Value) -> Prompt {
        let mut context = json!({"task": self.kind.name(), "question": x});
        if let (Some(c), Some(e)) = (context.as_object_mut(), extra.as_object()) {
            c.extend(e.clone());
        }
        let stop = if purpose == Purpose::Act {
            react_text::STOP_SEQUENCES.iter().map(|s| s.to_string()).collect()
        } else {
            vec![]
        };
        Prompt { purpose, messages, context, stop, max_tokens: Some(300), sampling: Default::default() }
    }

    /// Fill a template; the prompt ends where the model goes on (`Thought 2:`, `Answer:`),
    /// without the file's last newline.
    fn render(&self, template: &str, vars: &[(&str, &str)]) -> Vec<Message> {
        let mut messages = prompts::render_messages(template, vars);
        if let Some(last) = messages.last_mut() {
            last.content.truncate(last.content.trim_end_matches(['\n', '\r']).len());
        }
        messages
    }
}

impl Task for QaData {
    fn info(&self) -> &TaskInfo {
        self.kind.info()
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Io, self.render(&self.io, &[(self.kind.var(), x)]), x, json!({}))
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Cot, self.render(&self.cot, &[(self.kind.var(), x)]), x, json!({}))
    }

    fn extract_answer(&self, _x: &str, y: &str) -> Option<String> {
        extract_answer(y)
    }

    fn answer_from_fallback(&self, _x: &str, y: &str) -> Option<bool> {
        Some(answer_is_fallback(y))
    }

    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let gold = self.gold_of(x).ok_or_else(|| format!("no gold answer for {x:?}"))?;
        check_answer(answer, gold)
    }

    fn score(&self, x: &str, answer: &str) -> f64 {
        self.gold_of(x).map_or(0.0, |g| f1(answer, g))
    }

    fn describe_state(&self, _x: &str, y: &str) -> Option<String> {
        Some(react_text::describe_trajectory(y))
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
impl Feedback for QaData {}

impl ReactSteps for QaData {
    fn react_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt {
        let text =
            self.render(&self.react, &[(self.kind.var(), x), ("trajectory", trajectory), ("step", &step.to_string())]);
        let text = self.list_mcp_tools(text);
        self.prompt(Purpose::Act, text, x, json!({"step": step, "trajectory": trajectory}))
    }

    fn parse_react(&self, reply: &str, step: usize) -> ReactStep {
        parse_step_with(self.rules, reply, step).into()
    }

    fn parse_react_action(&self, action: &str, step: usize) -> ReactStep {
        react_text::parse_action_with(self.rules, action, step).into()
    }

    /// The paper's prompts are text only.
    fn native(&self) -> Option<&dyn NativeTools> {
        None
    }
}

/// The answer of a final state: the argument of its last `Finish[...]` action (ReAct), else
/// the text after its last `Answer:` (cot, io), else its last line (a bare io answer).
pub fn extract_answer(y: &str) -> Option<String> {
    let finish = y.lines().rev().find_map(|line| {
        let t = line.trim_start();
        let lower = t.to_ascii_lowercase();
        if !lower.starts_with("action") {
            return None;
        }
        let at = lower.find("finish[")?;
        let rest = &t[at + "finish[".len()..];
        Some(rest.rsplit_once(']').map_or(rest, |(a, _)| a).trim().to_string())
    });
    if finish.is_some() {
        return finish;
    }
    let answer = y.lines().rev().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        lower.find("answer:").map(|_| super::reply::strip_answer_prefix(line).to_string())
    });
    answer.or_else(|| y.lines().rev().map(str::trim).find(|l| !l.is_empty()).map(str::to_string))
}

/// Whether [`extract_answer`] reads `y`'s answer from its last line: no `Finish[...]`
/// action and no `Answer:` line.
pub fn answer_is_fallback(y: &str) -> bool {
    let finish = y.lines().any(|line| {
        let lower = line.trim_start().to_ascii_lowercase();
        lower.starts_with("action") && lower.contains("finish[")
    });
    !finish && !y.lines().any(|l| l.to_ascii_lowercase().contains("answer:"))
}

impl TaskSource for QaData {
    fn problem_count(&self) -> usize {
        self.items.len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        self.items.get(index).map(|q| Problem { index: Some(index), input: q.question.clone() })
    }

    fn tools(&self) -> Option<Arc<ToolRegistry>> {
        Some(Arc::clone(&self.tools))
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        if text.trim().is_empty() {
            return Err(TaskError::Input(text.into(), format!("a {} is needed", self.kind.var())));
        }
        let index = self.items.iter().position(|q| q.question.trim() == text.trim());
        Ok(Problem { index, input: text.trim().to_string() })
    }

    fn gold(&self, input: &str) -> Option<String> {
        self.gold_of(input).map(str::to_string)
    }

    fn action_rules(&self) -> Option<ActionRules> {
        (self.rules != ActionRules::Tolerant).then_some(self.rules)
    }
}

// ---------------------------------------------------------------------------------------
// Data files

/// Read `path` for task `kind` (see the module notes for the formats). Returns the
/// questions and warnings (trajectories skipped, ...), each naming the file.
pub fn read_data(kind: QaKind, path: &Path) -> Result<(Vec<QaItem>, Vec<String>), TaskError> {
    let name = path.display().to_string();
    let text = crate::userfile::read_text(path, &crate::userfile::DATA)
        .map_err(|e| TaskError::Data(format!("{name}: cannot read: {}", e.reason())))?;
    let (items, warnings) = parse_data(kind, &text, &name)?;
    if items.is_empty() {
        return Err(TaskError::Data(format!("{name}: no {}s in the file", kind.var())));
    }
    Ok((items, warnings))
}

/// [`read_data`] on text; `name` names it in messages.
pub fn parse_data(kind: QaKind, text: &str, name: &str) -> Result<(Vec<QaItem>, Vec<String>), TaskError> {
    let data_err = |m: String| TaskError::Data(format!("{name}{m}"));
    match text.trim_start().chars().next() {
        Some('[') => {
            let values: Vec<Value> =
                serde_json::from_str(text).map_err(|e| data_err(format!(": not a JSON list: {e}")))?;
            let items = values
                .iter()
                .enumerate()
                .map(|(i, v)| item_of(kind, v).map_err(|m| data_err(format!(": item {i}: {m}"))))
                .collect::<Result<_, _>>()?;
            Ok((items, Vec::new()))
        }
        Some('{') => {
            let mut items = Vec::new();
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let at = |m: String| data_err(format!(":{}: {m}", i + 1));
                let value: Value = serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
                items.push(item_of(kind, &value).map_err(at)?);
            }
            Ok((items, Vec::new()))
        }
        _ => {
            let (trajectories, mut warnings) = react_text::read_trajectories(text, name);
            let mut items = Vec::new();
            for (i, t) in trajectories.into_iter().enumerate() {
                let which = t.question_idx.map_or_else(|| format!("trajectory {i}"), |q| format!("question {q}"));
                if t.kind != kind.trajectory_kind() {
                    warnings.push(format!("{name}: {which} is not a {}; skipped", kind.var()));
                    continue;
                }
                match t.result {
                    Some(r) => items.push(QaItem { question: t.question, answer: r.gt_answer, kind: String::new() }),
                    None => warnings.push(format!("{name}: {which} has no results dict (no gold answer); skipped")),
                }
            }
            Ok((items, warnings))
        }
    }
}

/// One question from a JSON object: `{question, answer, type}` or `{claim, label}`.
fn item_of(kind: QaKind, value: &Value) -> Result<QaItem, String> {
    let text = |keys: &[&str]| keys.iter().find_map(|k| value.get(*k).and_then(Value::as_str)).map(str::to_string);
    let (question_keys, answer_keys): (&[&str], &[&str]) = match kind {
        QaKind::HotpotQa => (&["question"], &["answer"]),
        QaKind::Fever => (&["claim", "question"], &["label", "answer"]),
    };
    let question = text(question_keys)
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| format!("needs a non-empty string {:?}", question_keys[0]))?;
    let answer = text(answer_keys).ok_or_else(|| format!("needs a string {:?}", answer_keys[0]))?;
    if kind == QaKind::Fever && !FEVER_LABELS.iter().any(|l| l.eq_ignore_ascii_case(answer.trim())) {
        return Err(format!("the label {answer:?} is not one of {}", FEVER_LABELS.join(", ")));
    }
    let kind_text = text(&["type"]).unwrap_or_default();
    Ok(QaItem { question: question.trim().to_string(), answer, kind: kind_text })
}

#[cfg(test)]
#[path = "qa_data_tests.rs"]
mod tests;
