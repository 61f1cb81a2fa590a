//! What the engine asks a model. Requests carry their purpose and the task's structured
//! state next to the messages, so the `sim` provider (and importers) can answer without
//! parsing prompt text.

use serde::{Deserialize, Serialize};

use super::{Thinking, ToolCallOut, ToolDef};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// Answer directly (input-output prompting).
    Io,
    /// Think step by step, then answer.
    Cot,
    /// Propose several next steps in one reply.
    Propose,
    /// Sample one continuation (the next step).
    Sample,
    /// Judge how promising a state is.
    Value,
    /// Vote for the most promising of several states.
    Vote,
    /// Think and choose the next action (ReAct).
    Act,
    /// Critique an attempt and say whether it is correct (Self-Refine, Reflexion).
    Feedback,
    /// Rewrite an attempt following feedback (Self-Refine).
    Refine,
    /// Reflect on a failed attempt, for the next trial (Reflexion).
    Reflect,
    /// Judge a finished search's output for the task's figures (creative writing's
    /// coherency), after the method is done.
    Judge,
}

impl Purpose {
    pub fn label(self) -> &'static str {
        match self {
            Purpose::Io => "io",
            Purpose::Cot => "cot",
            Purpose::Propose => "propose",
            Purpose::Sample => "sample",
            Purpose::Value => "value",
            Purpose::Vote => "vote",
            Purpose::Act => "act",
            Purpose::Feedback => "feedback",
            Purpose::Refine => "refine",
            Purpose::Reflect => "reflect",
            Purpose::Judge => "judge",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    /// A tool's result, answering the call [`Message::tool_call_id`] names (native tool
    /// mode): OpenAI's `tool` message, Anthropic's `tool_result` block, the Responses API's
    /// `function_call_output` item.
    Tool,
}

/// One turn. The tool fields are only set in native tool mode, and left out of the JSON
/// when empty, so sessions and cache keys of other requests are as they were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// An assistant turn's native tool calls, each with its id (the server's, or one the
    /// engine made when the server gave none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallOut>,
    /// A [`Role::Tool`] turn: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// An assistant turn's thinking, sent back as the API requires inside a tool loop
    /// (Anthropic's blocks with their signatures, `reasoning_content`, Responses items).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<Thinking>,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None, thinking: Vec::new() }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message::new(Role::User, content)
    }

    pub fn system(content: impl Into<String>) -> Self {
        Message::new(Role::System, content)
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Message::new(Role::Assistant, content)
    }

    /// An assistant turn that made native tool calls (each with an id), after its text.
    pub fn assistant_calls(content: impl Into<String>, calls: Vec<ToolCallOut>) -> Self {
        Message { tool_calls: calls, ..Message::assistant(content) }
    }

    /// A tool's result for the call `id`.
    pub fn tool(id: impl Into<String>, content: impl Into<String>) -> Self {
        Message { tool_call_id: Some(id.into()), ..Message::new(Role::Tool, content) }
    }
}

/// A sampling number as a request body sends it: the decimal the user gave (`0.7`), not
/// the f32's binary value widened to f64 (`0.699999988079071`).
pub fn as_written(x: f32) -> f64 {
    x.to_string().parse::<f64>().unwrap_or(f64::from(x))
}

/// Sampling fields besides the temperature, sent only where a request says them (`serve`
/// passing a client's own through io); each API kind sends those it takes
/// ([`crate::llm::Provider::sampling_fields`]), and a request with one it does not take is
/// refused before it is made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f32>,
}

impl Sampling {
    pub fn is_default(&self) -> bool {
        *self == Sampling::default()
    }

    /// The fields set, by their API names, with their values.
    pub fn fields(&self) -> Vec<(&'static str, f32)> {
        [
            ("top_p", self.top_p),
            ("presence_penalty", self.presence_penalty),
            ("frequency_penalty", self.frequency_penalty),
        ]
        .into_iter()
        .filter_map(|(name, v)| Some((name, v?)))
        .collect()
    }

    /// Put the fields set into a request body (their values as written, not widened).
    pub fn insert_into(&self, body: &mut serde_json::Map<String, serde_json::Value>, takes: &[&str]) {
        for (name, value) in self.fields().into_iter().filter(|(name, _)| takes.contains(name)) {
            body.insert(name.into(), serde_json::json!(as_written(value)));
        }
    }
}

/// A prompt as a task renders it (before the method decides n and temperature).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prompt {
    pub purpose: Purpose,
    pub messages: Vec<Message>,
    /// The task's structured view of the state, for `sim` and importers.
    pub context: serde_json::Value,
    pub stop: Vec<String>,
    pub max_tokens: Option<u32>,
    /// Sampling fields besides the temperature (none unless the task says them).
    #[serde(default, skip_serializing_if = "Sampling::is_default")]
    pub sampling: Sampling,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmRequest {
    pub purpose: Purpose,
    pub messages: Vec<Message>,
    /// Number of completions wanted.
    pub n: u32,
    pub temperature: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    pub context: serde_json::Value,
    /// Non-zero when a person asked for a fresh answer (re-evaluate), so the cache
    /// does not hand back the old one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nonce: u32,
    /// Tools the model may call natively (ReAct `--tool-mode native`); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef>,
    /// Sampling fields besides the temperature (see [`Sampling`]).
    #[serde(default, skip_serializing_if = "Sampling::is_default")]
    pub sampling: Sampling,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl LlmRequest {
    /// One sample of `messages` at temperature 0.7, with no completion limit, stop, tools
    /// or context: what a one-off call (and a test) starts from.
    pub fn simple(purpose: Purpose, messages: Vec<Message>) -> Self {
        LlmRequest {
            purpose,
            messages,
            n: 1,
            temperature: 0.7,
            max_tokens: None,
            stop: Vec::new(),
            context: serde_json::Value::Null,
            nonce: 0,
            tools: Vec::new(),
            sampling: Sampling::default(),
        }
    }

    pub fn from_prompt(prompt: Prompt, n: u32, temperature: f32) -> Self {
        LlmRequest {
            purpose: prompt.purpose,
            messages: prompt.messages,
            n,
            temperature,
            max_tokens: prompt.max_tokens,
            stop: prompt.stop,
            context: prompt.context,
            nonce: 0,
            tools: Vec::new(),
            sampling: prompt.sampling,
        }
    }

    /// The key under which identical requests share one answer: everything that
    /// changes what a model would say (not the structured context, which only mirrors it).
    pub fn cache_key(&self, model: &str) -> String {
        let mut key = serde_json::json!({
            "model": model,
            "messages": self.messages,
            "n": self.n,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stop": self.stop,
            "nonce": self.nonce,
        });
        // Only requests with tools (or sampling fields) name them, so keys of requests
        // without stay as they were.
        if let Some(obj) = key.as_object_mut() {
            if !self.tools.is_empty() {
                obj.insert("tools".into(), serde_json::json!(self.tools));
            }
            if !self.sampling.is_default() {
                obj.insert("sampling".into(), serde_json::json!(self.sampling));
            }
        }
        key.to_string()
    }
}
