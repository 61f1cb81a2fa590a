//! What the engine asks a model, and what comes back. Requests carry their purpose
//! and the task's structured state next to the messages, so the `sim` provider (and
//! importers) can answer without parsing prompt text.

use serde::{Deserialize, Serialize};

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
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Message { role: Role::User, content: content.into() }
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
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl LlmRequest {
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
        }
    }

    /// The key under which identical requests share one answer: everything that
    /// changes what a model would say (not the structured context, which only mirrors it).
    pub fn cache_key(&self, model: &str) -> String {
        let key = serde_json::json!({
            "model": model,
            "messages": self.messages,
            "n": self.n,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stop": self.stop,
            "nonce": self.nonce,
        });
        key.to_string()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// True when the numbers are an estimate (a simulated model, or a server that did not say).
    #[serde(default)]
    pub estimated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmResponse {
    pub completions: Vec<Completion>,
    pub usage: Usage,
    pub latency_ms: u64,
    pub model: String,
    /// Produced by the `sim` provider: not a language model.
    #[serde(default)]
    pub simulated: bool,
    /// Answered from the cache: no call was made.
    #[serde(default)]
    pub cached: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct CallError {
    pub kind: String,
    pub message: String,
}

/// A tool call the engine asks the runtime to make (ReAct): `name[arg]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRequest {
    pub name: String,
    pub arg: String,
}

/// What a tool answered: the observation text, whether it worked, how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub text: String,
    pub ok: bool,
    #[serde(default)]
    pub latency_ms: u64,
}
