//! Tools for ReAct / ReTreVal agents: a `ToolSpec` per tool (shown in prompts, sent as
//! native OpenAI / Anthropic tool definitions, shown in the UI), a `Tool` trait run by the
//! runtime, and a `ToolRegistry` that never fails a run: unknown tools, bad arguments,
//! timeouts and missing pages all come back as an `Observation` with `ok = false`.
//!
//! Per-trajectory state (the current page and the lookup cursor) is explicit data in
//! `ToolState`, so a replay or a fork can carry it instead of re-running searches.

pub mod calculate;
pub mod choice;
pub mod corpus;
pub mod finish;
pub mod knowledge;
pub mod math;
pub mod mcp;
pub mod recorded;
pub mod text;
pub mod wikipedia;
pub mod worker;

use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A boxed future, as tools return them (the same type as `llm::BoxFuture`; tools do
/// not depend on the providers).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
pub use calculate::CalculateTool;
pub use finish::FinishTool;
pub use knowledge::{KnowledgeBackend, KnowledgeError, LookupTool, Page, SearchOutcome, SearchTool};

/// What a tool is, for prompts, native tool definitions and the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments (an object).
    pub args: Value,
}

impl ToolSpec {
    /// A tool taking one string argument, written `name[arg]` in ReAct prompts.
    pub fn single(name: &str, description: &str, arg: &str, arg_description: &str) -> ToolSpec {
        ToolSpec {
            name: name.to_string(),
            description: description.to_string(),
            args: json!({
                "type": "object",
                "properties": {arg: {"type": "string", "description": arg_description}},
                "required": [arg],
            }),
        }
    }

    /// An OpenAI chat-completions `tools` entry.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.args},
        })
    }

    /// The engine's plain definition, which requests carry and providers send natively.
    pub fn to_def(&self) -> crate::protocol::ToolDef {
        crate::protocol::ToolDef {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.args.clone(),
        }
    }

    /// An Anthropic Messages `tools` entry (answered with `tool_use` blocks).
    pub fn to_anthropic(&self) -> Value {
        json!({"name": self.name, "description": self.description, "input_schema": self.args})
    }

    /// The single argument's name: the first required property, else the first property.
    pub fn arg_name(&self) -> Option<&str> {
        let required = self.args["required"].as_array().and_then(|r| r.first()).and_then(Value::as_str);
        required.or_else(|| self.args["properties"].as_object().and_then(|p| p.keys().next()).map(String::as_str))
    }

    /// How a call is written in text: `search[entity]`, or for a tool of several
    /// arguments (an MCP server's) the JSON object it takes, `add[{"a": number, "b": number}]`.
    pub fn call_form(&self) -> String {
        match self.args["properties"].as_object() {
            Some(properties) if properties.len() > 1 => {
                let fields: Vec<String> = properties
                    .iter()
                    .map(|(k, p)| format!("\"{k}\": {}", p["type"].as_str().unwrap_or("value")))
                    .collect();
                format!("{}[{{{}}}]", self.name, fields.join(", "))
            }
            _ => format!("{}[{}]", self.name, self.arg_name().unwrap_or("")),
        }
    }

    /// `search[entity]: description`, the line a ReAct prompt lists the tool with.
    pub fn prompt_line(&self) -> String {
        format!("{}: {}", self.call_form(), self.description)
    }

    /// The call a native tool-use block (`input` JSON) stands for.
    pub fn call_from_input(&self, input: &Value) -> ToolCall {
        let arg = match input {
            Value::String(s) => s.clone(),
            Value::Object(map) => match self.arg_name().and_then(|a| map.get(a)) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => input.to_string(),
            },
            Value::Null => String::new(),
            other => other.to_string(),
        };
        ToolCall { name: self.name.clone(), arg }
    }
}

/// "Call tool NAME with ARG", as the engine emits it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    pub arg: String,
}

impl ToolCall {
    pub fn new(name: impl Into<String>, arg: impl Into<String>) -> ToolCall {
        ToolCall { name: name.into(), arg: arg.into() }
    }

    /// A ReAct action as read from text: the tool name lowercased (`Search[x]` is
    /// `{name: "search", arg: "x"}`).
    pub fn action(name: &str, arg: &str) -> ToolCall {
        ToolCall { name: name.trim().to_lowercase(), arg: arg.to_string() }
    }

    /// The canonical ReAct text: the tool name capitalised, the argument in brackets
    /// (`Search[x]`), as prompts and trajectories write it.
    pub fn react_text(&self) -> String {
        crate::engine::Step::action_text(&crate::protocol::ToolRequest {
            name: self.name.clone(),
            arg: self.arg.clone(),
        })
    }

    /// Parse a ReAct action, `Search[Colorado orogeny]` (an optional `Action:` / `Action 3:`
    /// prefix is skipped; a missing closing bracket is tolerated).
    pub fn parse(action: &str) -> Result<ToolCall, String> {
        let mut text = action.trim();
        if let Some(rest) = text.strip_prefix("Action") {
            if let Some((label, after)) = rest.split_once(':') {
                if label.trim().chars().all(|c| c.is_ascii_digit()) {
                    text = after.trim();
                }
            }
        }
        let Some((name, rest)) = text.split_once('[') else {
            return Err(format!("'{text}' is not an action: write it as tool[argument], e.g. search[Paris]"));
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            return Err(format!("'{name}' is not a tool name: write the action as tool[argument]"));
        }
        let arg = match rest.rfind(']') {
            Some(end) => &rest[..end],
            None => rest,
        };
        Ok(ToolCall { name: name.to_string(), arg: arg.trim().to_string() })
    }
}

impl std::fmt::Display for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.name, self.arg)
    }
}

/// What a tool call gave back; recorded in sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    pub text: String,
    /// False when the tool could not do what was asked (the text says why).
    pub ok: bool,
    pub latency_ms: u64,
}

impl Observation {
    pub fn ok(text: impl Into<String>) -> Observation {
        Observation { text: text.into(), ok: true, latency_ms: 0 }
    }

    pub fn fail(text: impl Into<String>) -> Observation {
        Observation { text: text.into(), ok: false, latency_ms: 0 }
    }
}

/// Per-trajectory tool state. Plain data: cloned on fork, serialised with a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolState {
    /// The page the last successful search opened.
    pub page: Option<Page>,
    pub lookup: Option<LookupCursor>,
}

/// Where `lookup` is in the current page: the keyword and how many results were shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookupCursor {
    pub keyword: String,
    pub shown: usize,
}

pub trait Tool: Send + Sync {
    fn spec(&self) -> ToolSpec;
    /// True for the tool that ends an episode (`finish`).
    fn is_finish(&self) -> bool {
        false
    }
    /// Run the tool. Failures are observations with `ok = false`, never errors.
    fn call<'a>(&'a self, arg: &'a str, state: &'a mut ToolState) -> BoxFuture<'a, Observation>;
}

/// Tools by case-insensitive name, in the order they were added.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    /// The MCP servers whose tools were added ([`ToolRegistry::with_mcp`]).
    mcp: mcp::McpRecord,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry").field("tools", &self.names()).finish()
    }
}

impl ToolRegistry {
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// ReAct's action space: search, lookup and finish over one knowledge backend.
    pub fn react(backend: Arc<dyn KnowledgeBackend>) -> ToolRegistry {
        ToolRegistry::new().with(SearchTool::new(backend)).with(LookupTool).with(FinishTool)
    }

    /// Add a tool; one with the same name (any case) is replaced in place.
    pub fn with(mut self, tool: impl Tool + 'static) -> ToolRegistry {
        self.register(Arc::new(tool));
        self
    }

    /// Add the MCP servers' tools a run gives (next to the task's own; one named like a
    /// task tool takes its place), keeping their record for the session header.
    pub fn with_mcp(mut self, added: &mcp::McpTools) -> ToolRegistry {
        for tool in &added.tools {
            self.register(Arc::clone(tool));
        }
        self.mcp.servers.extend(added.record.servers.iter().cloned());
        self.mcp.tools.extend(added.record.tools.iter().cloned());
        self
    }

    /// The MCP servers and tools this registry offers (empty: none).
    pub fn mcp(&self) -> &mcp::McpRecord {
        &self.mcp
    }

    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.spec().name;
        match self.tools.iter().position(|t| t.spec().name.eq_ignore_ascii_case(&name)) {
            Some(i) => self.tools[i] = tool,
            None => self.tools.push(tool),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        let name = name.trim();
        self.tools.iter().find(|t| t.spec().name.eq_ignore_ascii_case(name))
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec()).collect()
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.spec().name).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every tool's definition for native tool calling, in order.
    pub fn tool_defs(&self) -> Vec<crate::protocol::ToolDef> {
        self.specs().iter().map(ToolSpec::to_def).collect()
    }

    pub fn openai_tools(&self) -> Value {
        Value::Array(self.specs().iter().map(ToolSpec::to_openai).collect())
    }

    pub fn anthropic_tools(&self) -> Value {
        Value::Array(self.specs().iter().map(ToolSpec::to_anthropic).collect())
    }

    /// One `name[arg]: description` line per tool, for ReAct prompts.
    pub fn prompt_lines(&self) -> String {
        let lines: Vec<String> =
            self.specs().iter().enumerate().map(|(i, s)| format!("({}) {}", i + 1, s.prompt_line())).collect();
        lines.join("\n")
    }

    /// Each tool as a call, `name[arg]`, joined as a sentence ("calc[expression],
    /// solve[equation] or finish[answer]"): the example a format reminder gives, so it
    /// names this task's tools and no others.
    pub fn call_examples(&self) -> String {
        // As the prompts list them (`prompt_line`).
        let calls: Vec<String> = self.specs().iter().map(ToolSpec::call_form).collect();
        match calls.split_last() {
            None => String::new(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// Whether this call ends the episode.
    pub fn is_finish(&self, call: &ToolCall) -> bool {
        self.get(&call.name).is_some_and(|t| t.is_finish())
    }

    /// Run a call; an unknown tool is an observation naming the valid ones. The latency is
    /// measured here, around the tool.
    pub async fn call(&self, call: &ToolCall, state: &mut ToolState) -> Observation {
        let Some(tool) = self.get(&call.name) else {
            return Observation::fail(format!(
                "There is no tool named '{}'. Valid tools: {}.",
                call.name,
                self.specs().iter().map(ToolSpec::call_form).collect::<Vec<_>>().join(", ")
            ));
        };
        let start = Instant::now();
        let mut observation = tool.call(&call.arg, state).await;
        observation.latency_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        observation
    }
}

#[cfg(test)]
mod tests;
