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

/// How a task lays its prompts out for the model (`--prompt-style`). Recorded in session
/// headers (absent: reference), so replays and forks send the same messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptStyle {
    /// The reference papers' completion-style prompts, each one user message that ends
    /// where the model is to go on (`Thought 3:`): for fidelity, base models and `sim`.
    #[default]
    Reference,
    /// For chat models: a system message with the instructions and the exact reply
    /// format, the examples as user/assistant turns, the current state as the last
    /// user turn asking for exactly the next step.
    Chat,
}

impl PromptStyle {
    pub const ALL: [PromptStyle; 2] = [PromptStyle::Reference, PromptStyle::Chat];

    pub fn name(self) -> &'static str {
        match self {
            PromptStyle::Reference => "reference",
            PromptStyle::Chat => "chat",
        }
    }

    pub fn is_reference(&self) -> bool {
        *self == PromptStyle::Reference
    }
}

impl std::fmt::Display for PromptStyle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PromptStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PromptStyle::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown prompt style {s:?} (known: reference, chat)"))
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// Shared: a reply's samples are often the same text, and the run keeps each reply.
    pub text: super::text::Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<super::text::Text>,
    /// Native tool calls the reply made (empty for plain text replies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallOut>,
}

impl Completion {
    /// A plain text reply.
    pub fn text(text: impl Into<String>, finish_reason: Option<String>) -> Self {
        Completion { text: text.into().into(), finish_reason: finish_reason.map(Into::into), tool_calls: Vec::new() }
    }
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

impl LlmResponse {
    /// Store repeated samples once: a completion whose text or finish reason an earlier
    /// one's (among the last 64) equals shares that one's. The run keeps every reply, and
    /// `n` samples of one prompt often repeat themselves.
    pub fn share_repeated_texts(&mut self) {
        const WINDOW: usize = 64;
        for i in 1..self.completions.len() {
            let (before, rest) = self.completions.split_at_mut(i);
            let c = &mut rest[0];
            let earlier = &before[i.saturating_sub(WINDOW)..];
            if let Some(e) = earlier.iter().rev().find(|e| e.text == c.text) {
                c.text = e.text.clone();
            }
            if let Some(reason) = &c.finish_reason {
                if let Some(r) = earlier.iter().rev().find_map(|e| e.finish_reason.as_ref().filter(|r| *r == reason)) {
                    c.finish_reason = Some(r.clone());
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct CallError {
    pub kind: CallErrorKind,
    pub message: String,
}

impl CallError {
    pub fn new(kind: CallErrorKind, message: impl Into<String>) -> Self {
        CallError { kind, message: message.into() }
    }
}

/// What kind of failure a call met. Recorded in sessions as its snake_case name
/// (`"auth"`, `"not_found"`, ...); a name this build does not know loads as
/// [`CallErrorKind::Other`] and is written back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CallErrorKind {
    /// 401: the key was refused.
    Auth,
    /// 403: the key may not use this model or endpoint.
    Forbidden,
    /// 404: no such model or endpoint.
    NotFound,
    /// The server could not be reached at all.
    Connect,
    /// The connection failed after it was made.
    Connection,
    /// No reply in time (or 408).
    Timeout,
    BadRequest,
    Conflict,
    TooLarge,
    RateLimited,
    Overloaded,
    /// A 5xx, or an error the server reported mid-stream.
    Server,
    /// Any other non-success status.
    Http,
    /// The HTTP client could not be built from the configuration.
    Config,
    /// The reply could not be read.
    Malformed,
    /// The stream ended before the reply did.
    Truncated,
    /// The reply had no choices or content.
    Empty,
    /// The prompt does not fit the model's context window (the server said so, in one
    /// of the usual phrasings): the same prompt can never succeed, so the branch stops.
    ContextOverflow,
    /// A replayed run asked something the recording does not have.
    NotRecorded,
    /// The driver was halted before the call was sent.
    NotSent,
    /// An identical request in flight failed and this one shared its failure (it was
    /// not sent itself).
    Shared,
    /// The call's task panicked or was lost.
    Internal,
    /// The program is shutting down.
    Shutdown,
    /// An importer's log has no answer for the request.
    Import,
    /// The simulated model cannot answer the request.
    Sim,
    /// Any other kind, as recorded.
    Other(String),
}

impl CallErrorKind {
    const NAMED: [CallErrorKind; 25] = [
        CallErrorKind::Auth,
        CallErrorKind::Forbidden,
        CallErrorKind::NotFound,
        CallErrorKind::Connect,
        CallErrorKind::Connection,
        CallErrorKind::Timeout,
        CallErrorKind::BadRequest,
        CallErrorKind::Conflict,
        CallErrorKind::TooLarge,
        CallErrorKind::RateLimited,
        CallErrorKind::Overloaded,
        CallErrorKind::Server,
        CallErrorKind::Http,
        CallErrorKind::Config,
        CallErrorKind::Malformed,
        CallErrorKind::Truncated,
        CallErrorKind::Empty,
        CallErrorKind::ContextOverflow,
        CallErrorKind::NotRecorded,
        CallErrorKind::NotSent,
        CallErrorKind::Shared,
        CallErrorKind::Internal,
        CallErrorKind::Shutdown,
        CallErrorKind::Import,
        CallErrorKind::Sim,
    ];

    /// The name sessions record.
    pub fn as_str(&self) -> &str {
        match self {
            CallErrorKind::Auth => "auth",
            CallErrorKind::Forbidden => "forbidden",
            CallErrorKind::NotFound => "not_found",
            CallErrorKind::Connect => "connect",
            CallErrorKind::Connection => "connection",
            CallErrorKind::Timeout => "timeout",
            CallErrorKind::BadRequest => "bad_request",
            CallErrorKind::Conflict => "conflict",
            CallErrorKind::TooLarge => "too_large",
            CallErrorKind::RateLimited => "rate_limited",
            CallErrorKind::Overloaded => "overloaded",
            CallErrorKind::Server => "server",
            CallErrorKind::Http => "http",
            CallErrorKind::Config => "config",
            CallErrorKind::Malformed => "malformed",
            CallErrorKind::Truncated => "truncated",
            CallErrorKind::Empty => "empty",
            CallErrorKind::ContextOverflow => "context_overflow",
            CallErrorKind::NotRecorded => "not_recorded",
            CallErrorKind::NotSent => "not_sent",
            CallErrorKind::Shared => "shared",
            CallErrorKind::Internal => "internal",
            CallErrorKind::Shutdown => "shutdown",
            CallErrorKind::Import => "import",
            CallErrorKind::Sim => "sim",
            CallErrorKind::Other(name) => name,
        }
    }

    /// The kind a recorded name stands for (a named kind, else `Other`).
    pub fn from_name(name: &str) -> CallErrorKind {
        Self::NAMED.iter().find(|k| k.as_str() == name).cloned().unwrap_or_else(|| CallErrorKind::Other(name.into()))
    }

    /// Every later call would fail the same way, so a live run stops rather than fail
    /// them all: the key was refused, the model or endpoint does not exist, or the
    /// server cannot be reached (`connect` comes after every retry failed).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            CallErrorKind::Auth | CallErrorKind::Forbidden | CallErrorKind::NotFound | CallErrorKind::Connect
        )
    }
}

impl std::fmt::Display for CallErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CallErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CallErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(CallErrorKind::from_name(&name))
    }
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

/// A tool offered to a model for native tool calling: its name, what it does and a
/// JSON schema of its arguments (an object). Providers turn it into OpenAI `tools` /
/// Anthropic `tools` entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

impl ToolDef {
    /// The single argument's name: the first required property, else the first property.
    pub fn arg_name(&self) -> Option<&str> {
        let required = self.parameters["required"].as_array().and_then(|r| r.first()).and_then(|v| v.as_str());
        required.or_else(|| self.parameters["properties"].as_object().and_then(|p| p.keys().next()).map(String::as_str))
    }
}

/// A native tool call in a model's reply. `arguments` is the parsed JSON object; when a
/// server sent arguments that are not valid JSON they are kept as a string, so the
/// method can report the bad call instead of the provider failing the whole reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallOut {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    pub arguments: serde_json::Value,
}

impl ToolCallOut {
    /// The call as `name[arg]` for a tool taking one argument, given the tools offered.
    /// A tool not offered keeps its first string argument (the tool runner then names the
    /// valid tools); arguments that are not a JSON object, or lack the argument, are an error.
    pub fn to_request(&self, tools: &[ToolDef]) -> Result<ToolRequest, String> {
        let name = self.name.trim().to_lowercase();
        if name.is_empty() {
            return Err("the tool call has no tool name".into());
        }
        let def = tools.iter().find(|t| t.name.eq_ignore_ascii_case(&name));
        let several = def.is_some_and(|d| d.parameters["properties"].as_object().is_some_and(|p| p.len() > 1));
        let arg = match &self.arguments {
            // A tool of several arguments (an MCP server's) takes them as one JSON object.
            serde_json::Value::Object(map) if several => serde_json::Value::Object(map.clone()).to_string(),
            serde_json::Value::Object(map) => {
                let wanted = def.and_then(ToolDef::arg_name);
                let value = match wanted.and_then(|a| map.get(a)) {
                    Some(v) => Some(v),
                    // A single argument under another name is still the argument.
                    None if map.len() == 1 => map.values().next(),
                    // A tool not offered: its first string (the runner answers that there is no such tool).
                    None if def.is_none() => map.values().find(|v| v.is_string()),
                    None => None,
                };
                match value {
                    Some(serde_json::Value::String(s)) => s.trim().to_string(),
                    Some(serde_json::Value::Null) | None if def.is_some() => {
                        return Err(format!("the call of {name} has no \"{}\" argument", wanted.unwrap_or("argument")))
                    }
                    Some(serde_json::Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                }
            }
            serde_json::Value::String(raw) => {
                return Err(format!(
                    "the arguments of {name} are not a JSON object: {}",
                    raw.chars().take(80).collect::<String>()
                ))
            }
            other => return Err(format!("the arguments of {name} are not a JSON object: {other}")),
        };
        Ok(ToolRequest { name, arg })
    }

    /// The call as the model made it, `name({json})`, for notes.
    pub fn describe(&self) -> String {
        format!("{}({})", self.name, self.arguments)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_replys_repeated_samples_are_stored_once() {
        let stop = || Some("stop".to_string());
        let mut r = LlmResponse {
            completions: vec![
                Completion::text("4 + 5 = 9", stop()),
                Completion::text("5 * 4 = 20", stop()),
                Completion::text("4 + 5 = 9", stop()),
                Completion::text("4 + 5 = 9", None),
            ],
            usage: Usage::default(),
            latency_ms: 0,
            model: "m".into(),
            simulated: false,
            cached: false,
        };
        let before = r.clone();
        r.share_repeated_texts();
        assert_eq!(r, before, "the reply reads the same");
        let c = &r.completions;
        assert!(c[2].text.shares(&c[0].text) && c[3].text.shares(&c[0].text));
        assert!(!c[1].text.shares(&c[0].text));
        let reason = |i: usize| c[i].finish_reason.clone().unwrap();
        assert!(reason(1).shares(&reason(0)) && reason(2).shares(&reason(0)));
        assert!(c[3].finish_reason.is_none());
    }
    use super::*;

    #[test]
    fn call_error_kinds_keep_their_recorded_names() {
        for kind in CallErrorKind::NAMED.iter() {
            let json = serde_json::to_string(kind).unwrap();
            assert_eq!(json, format!("\"{kind}\""));
            assert_eq!(&serde_json::from_str::<CallErrorKind>(&json).unwrap(), kind, "{json}");
            assert!(!matches!(kind, CallErrorKind::Other(_)));
        }
        let e = CallError::new(CallErrorKind::NotFound, "HTTP 404");
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, r#"{"kind":"not_found","message":"HTTP 404"}"#);
        assert_eq!(serde_json::from_str::<CallError>(&json).unwrap(), e);
        assert_eq!(e.to_string(), "not_found: HTTP 404");
    }

    #[test]
    fn an_unknown_recorded_kind_loads_and_is_written_back_unchanged() {
        let json = r#"{"kind":"quota_exhausted_v2","message":"m"}"#;
        let e: CallError = serde_json::from_str(json).unwrap();
        assert_eq!(e.kind, CallErrorKind::Other("quota_exhausted_v2".into()));
        assert_eq!(e.kind.to_string(), "quota_exhausted_v2");
        assert!(!e.kind.is_fatal());
        assert_eq!(serde_json::to_string(&e).unwrap(), json);
    }

    #[test]
    fn only_auth_forbidden_not_found_and_connect_are_fatal() {
        let fatal: Vec<&str> = CallErrorKind::NAMED.iter().filter(|k| k.is_fatal()).map(|k| k.as_str()).collect();
        assert_eq!(fatal, ["auth", "forbidden", "not_found", "connect"]);
        assert!(!CallErrorKind::from_name("test").is_fatal());
        assert_eq!(CallErrorKind::from_name("auth"), CallErrorKind::Auth);
    }
}
