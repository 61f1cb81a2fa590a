//! What the engine asks a model. Requests carry their purpose and the task's structured
//! state next to the messages, so the `sim` provider (and importers) can answer without
//! parsing prompt text.

use serde::{Deserialize, Serialize};

use super::ToolDef;

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

    pub fn system(content: impl Into<String>) -> Self {
        Message { role: Role::System, content: content.into() }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Message { role: Role::Assistant, content: content.into() }
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
    /// Tools the model may call natively (ReAct `--tool-mode native`); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef>,
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
            tools: Vec::new(),
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
        // Only requests with tools name them, so keys of requests without stay as they were.
        if !self.tools.is_empty() {
            if let Some(obj) = key.as_object_mut() {
                obj.insert("tools".into(), serde_json::json!(self.tools));
            }
        }
        key.to_string()
    }
}
