//! `qa-demo`: two-hop questions over a small corpus the project wrote
//! (`assets/corpus/qa-demo/`), so ReAct works offline on a fresh machine. Answers are
//! scored by exact match and token F1 as in the ReAct paper.

pub mod sim;

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::react_text::{self, check_answer, f1};
use super::{prompts, Problem, TaskError, TaskOptions, TaskSource};
use crate::engine::task::{Feedback, NativeTools, ReactSteps};
use crate::engine::{AnswerKind, PromptStyle, ReactStep, Task, TaskInfo};
use crate::protocol::{Message, Prompt, Purpose, ToolDef};
use crate::tools::corpus::{qa_demo, qa_demo_questions, QaQuestion};
use crate::tools::{CalculateTool, KnowledgeBackend, ToolRegistry};

const REACT: prompts::Builtin = crate::builtin_prompt!("qa-demo", "react.txt");
const REACT_NATIVE: prompts::Builtin = crate::builtin_prompt!("qa-demo", "react-native.txt");
const COT: prompts::Builtin = crate::builtin_prompt!("qa-demo", "cot.txt");
const IO: prompts::Builtin = crate::builtin_prompt!("qa-demo", "io.txt");

pub struct QaDemo {
    react: String,
    react_native: String,
    cot: String,
    io: String,
    questions: Vec<QaQuestion>,
    tools: Arc<ToolRegistry>,
    /// The tool lines of the prompt: always the built-in corpus's, so a run with another
    /// backend sends the same prompts (and its sessions replay with the default task).
    prompt_tools: String,
    style: PromptStyle,
}

/// Registration (see `tasks::REGISTRY`).
pub const INFO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("qa-demo"),
    about: Cow::Borrowed("15 two-hop questions over a small bundled corpus, for ReAct offline"),
    input_noun: Cow::Borrowed("question"),
    input_hint: Cow::Borrowed("a question number or a question of your own"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("3"), Cow::Borrowed("Who founded the University of Marrowick?")]),
    default_problem: 0,
    answer_kind: AnswerKind::ShortText,
    reads_data: false,
};

impl QaDemo {
    /// Build for `tasks::REGISTRY`.
    pub fn build(
        info: &TaskInfo,
        options: &TaskOptions,
        _warnings: &mut Vec<String>,
    ) -> Result<Arc<dyn TaskSource>, TaskError> {
        super::no_data(info, options)?;
        Ok(Arc::new(
            QaDemo::styled(options.loader())?.with_knowledge(options.knowledge.clone()).with_mcp(&options.mcp_tools),
        ))
    }

    /// With the reference prompts (the built-in ones, or those in `prompt_dir`).
    pub fn new(prompt_dir: Option<&Path>) -> Result<Self, TaskError> {
        QaDemo::styled(prompts::Loader::new(prompt_dir, PromptStyle::Reference))
    }

    pub fn styled(loader: prompts::Loader) -> Result<Self, TaskError> {
        let tools = ToolRegistry::react(Arc::new(qa_demo())).with(CalculateTool);
        let prompt_tools = tools.prompt_lines();
        Ok(QaDemo {
            react: loader.load(REACT, &["question", "trajectory", "step", "tools"])?,
            // The tools go with the request as native definitions, so this prompt need not list them.
            react_native: loader.load(REACT_NATIVE, &["question", "trajectory", "step"])?,
            cot: loader.load(COT, &["question"])?,
            io: loader.load(IO, &["question"])?,
            questions: qa_demo_questions().map_err(TaskError::Data)?,
            tools: Arc::new(tools),
            prompt_tools,
            style: loader.style,
        })
    }

    /// Search and lookup over `backend` instead of the compiled-in corpus (if given).
    pub fn with_knowledge(mut self, backend: Option<Arc<dyn KnowledgeBackend>>) -> Self {
        if let Some(backend) = backend {
            self.tools = Arc::new(ToolRegistry::react(backend).with(CalculateTool));
        }
        self
    }

    /// With the MCP servers' tools a run adds (`--mcp`) next to its own.
    pub fn with_mcp(mut self, added: &crate::tools::mcp::McpTools) -> Self {
        if !added.is_empty() {
            self.tools = Arc::new((*self.tools).clone().with_mcp(added));
            self.prompt_tools = self.tools.prompt_lines();
        }
        self
    }

    fn gold(&self, question: &str) -> Option<&QaQuestion> {
        self.questions.iter().find(|q| q.question.trim() == question.trim())
    }

    fn prompt(&self, purpose: Purpose, messages: Vec<Message>, x: &str, extra: serde_json::Value) -> Prompt {
        let mut context = json!({"task": "qa-demo", "question": x});
        if let (Some(c), Some(e)) = (context.as_object_mut(), extra.as_object()) {
            c.extend(e.clone());
        }
        let stop = if purpose == Purpose::Act {
            react_text::STOP_SEQUENCES.iter().map(|s| s.to_string()).collect()
        } else {
            vec![]
        };
        Prompt { purpose, messages, context, stop, max_tokens: Some(200), sampling: Default::default() }
    }

    /// A ReAct step's prompt with the structured context `sim` plays the agent from.
    /// (Its stop sequences stay in native mode too: harmless there, and they still keep a
    /// model that writes its action as text from writing the observation as well.)
    fn act_prompt(&self, text: Vec<Message>, x: &str, trajectory: &str, step: usize) -> Prompt {
        let gold = self.gold(x).map(|q| json!({"hops": q.hops, "keyword": q.keyword, "answer": q.answer}));
        self.prompt(Purpose::Act, text, x, json!({"step": step, "trajectory": trajectory, "gold": gold}))
    }
}

impl Task for QaDemo {
    fn info(&self) -> &TaskInfo {
        &INFO
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Io, prompts::render_messages(&self.io, &[("question", x)]), x, json!({}))
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        self.prompt(Purpose::Cot, prompts::render_messages(&self.cot, &[("question", x)]), x, json!({}))
    }

    fn extract_answer(&self, _x: &str, y: &str) -> Option<String> {
        // A ReAct trajectory ends with Finish[answer]; a chain of thought with "Answer: ...".
        for line in y.lines().rev() {
            let lower = line.to_ascii_lowercase();
            if let Some(at) = lower.find("finish[") {
                let rest = &line[at + "finish[".len()..];
                return Some(rest.rsplit_once(']').map_or(rest, |(a, _)| a).trim().to_string());
            }
            if lower.contains("answer:") {
                return Some(super::reply::strip_answer_prefix(line).to_string());
            }
        }
        None
    }

    /// An answer is only read from a `Finish[...]` or an `Answer:` line: never a fallback.
    fn answer_from_fallback(&self, _x: &str, _y: &str) -> Option<bool> {
        Some(false)
    }

    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let gold = self.gold(x).ok_or_else(|| format!("no gold answer for {x:?}"))?;
        check_answer(answer, &gold.answer)
    }

    fn score(&self, x: &str, answer: &str) -> f64 {
        self.gold(x).map_or(0.0, |g| f1(answer, &g.answer))
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
impl Feedback for QaDemo {}

impl ReactSteps for QaDemo {
    fn react_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt {
        let text = prompts::render_messages(
            &self.react,
            &[("question", x), ("trajectory", trajectory), ("step", &step.to_string()), ("tools", &self.prompt_tools)],
        );
        self.act_prompt(text, x, trajectory, step)
    }

    fn parse_react(&self, reply: &str, step: usize) -> ReactStep {
        react_text::parse_step_naming(reply, step, &self.tools.call_examples()).into()
    }

    fn native(&self) -> Option<&dyn NativeTools> {
        Some(self)
    }
}

impl NativeTools for QaDemo {
    fn react_native_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt {
        let text = prompts::render_messages(
            &self.react_native,
            &[
                ("question", x),
                ("trajectory", trajectory),
                ("step", &step.to_string()),
                ("tools", &self.tools.prompt_lines()),
            ],
        );
        self.act_prompt(text, x, trajectory, step)
    }

    fn tool_defs(&self) -> Vec<ToolDef> {
        self.tools.tool_defs()
    }
}

impl TaskSource for QaDemo {
    fn problem_count(&self) -> usize {
        self.questions.len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        self.questions.get(index).map(|q| Problem { index: Some(index), input: q.question.clone() })
    }

    /// Search and lookup over the corpus, calculate, finish.
    fn tools(&self) -> Option<Arc<ToolRegistry>> {
        Some(Arc::clone(&self.tools))
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        let index = self.questions.iter().position(|q| q.question.trim() == text.trim());
        if text.trim().is_empty() {
            return Err(TaskError::Input(text.into(), "a question is needed".into()));
        }
        Ok(Problem { index, input: text.trim().to_string() })
    }
}
