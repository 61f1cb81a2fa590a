//! Provider kinds: one file per API a model is spoken to through.
//!
//! A kind ([`Api`]) says what differs between APIs: its built-in profiles, the address
//! and headers of a call, the request body, how a whole reply and a streamed one are
//! read, and what the API supports (several samples per request, a seed, stop
//! sequences, the temperature range). Everything they share — one HTTP client, retries
//! with backoff, the rate limit, size caps, server-sent events, samples fetched one
//! request each, usage estimates, secrets kept out of messages — is the one
//! [`HttpProvider`] in `provider.rs`.
//!
//! To add a kind:
//! 1. Write `api/<name>.rs` with a unit struct implementing [`Api`] and a
//!    `pub(super) static API: <Struct>`; its `kind()` is the word profiles use
//!    (`kind = "<name>"` in the config file) and its `profiles()` the built-in ones.
//! 2. Add `<name>` to the `kinds!` line below.
//!
//! Nothing outside the file names the kind: the config file, `--provider`, the
//! generated provider reference and the error messages all read [`kinds`].

mod provider;

pub use provider::{HttpProvider, Part, StreamRead};

use reqwest::RequestBuilder;
use serde_json::Value;

use super::secret::Secret;
use super::{BoxFuture, ContextWindow};
use crate::protocol::{CallError, LlmRequest};

/// Declares each kind's module and lists its `API` in [`KINDS`], in this order.
macro_rules! kinds {
    ($($kind:ident),* $(,)?) => {
        $(pub mod $kind;)*
        /// Every provider kind, in the order help and references list them.
        pub static KINDS: &[&dyn Api] = &[$(&$kind::API),*];
    };
}

kinds!(openai, anthropic, responses);

/// A built-in profile a kind brings: `--provider NAME` works with no config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// `--provider` and `[providers.NAME]` use it.
    pub name: &'static str,
    pub base_url: &'static str,
    /// The environment variable holding the key, if the API takes one.
    pub key_env: Option<&'static str>,
    /// An environment variable that moves the base URL (the SDKs' own, e.g. `OPENAI_BASE_URL`).
    pub base_url_env: Option<&'static str>,
    /// Whether the server honours `n`, when known (`None`: found out from the first reply).
    pub n: Option<bool>,
    /// Where `--think on|off` goes when not `chat_template_kwargs` (see [`ThinkVia`]).
    pub think_via: Option<ThinkVia>,
    /// What the profile is for, in the generated reference.
    pub about: &'static str,
}

/// Everything that shapes one request body besides the engine's request.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub request: &'a LlmRequest,
    pub model: &'a str,
    /// Samples asked of this one request (1 for APIs without `n`).
    pub n: u32,
    /// The first sample's index, for the seed (`seed + sample`: samples fetched one
    /// request each differ).
    pub sample: u32,
    pub stream: bool,
    pub settings: &'a Settings,
}

/// A profile's settings of the wire format, as resolved (see `llm::config::Resolved`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Sent as `seed` where the API has one (`None`: the profile turned it off).
    pub seed: Option<u64>,
    /// The name of the completion-limit field (`max_tokens`, `max_completion_tokens`).
    pub max_tokens_param: String,
    /// Ask for usage in streamed replies where the API needs asking.
    pub stream_usage: bool,
    /// What a reasoning model is asked.
    pub reasoning: Reasoning,
}

/// Where an open model's think switch goes in a chat-completions request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkVia {
    /// `chat_template_kwargs.enable_thinking`, which vLLM, SGLang and llama.cpp's server read.
    #[default]
    ChatTemplateKwargs,
    /// `reasoning_effort`: `none` for off, a level for on (Ollama's OpenAI-compatible API
    /// takes its think switch there and ignores `chat_template_kwargs`).
    ReasoningEffort,
}

/// What is asked of a reasoning model, as the flags and the profile resolve it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reasoning {
    /// A reasoning model: no temperature is sent (OpenAI's reject any but their own), and
    /// the completion limit goes as `max_completion_tokens` unless the profile names it.
    pub model: bool,
    /// `reasoning_effort` (`reasoning.effort` in the Responses API).
    pub effort: Option<String>,
    /// Anthropic's extended thinking budget, in tokens.
    pub thinking_budget: Option<u32>,
    /// An open model's thinking switched on or off (`chat_template_kwargs.enable_thinking`,
    /// or `reasoning_effort` where the profile says so: see [`ThinkVia`]).
    pub think: Option<bool>,
    pub think_via: ThinkVia,
    /// The tag pairs split off the front of a reply's text (`<think>…</think>`, ...).
    pub think_tags: Vec<(String, String)>,
}

/// How an API takes several samples of one prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Samples {
    /// `n` in one request, where the server honours it (found out from the first reply
    /// unless the profile says); one request per sample where it does not.
    N,
    /// The API has no `n`: one request per sample, side by side as slots allow.
    OnePerRequest,
}

/// One API a model is spoken to through. Implementations are unit structs: what a
/// profile sets arrives in [`Call::settings`].
pub trait Api: Send + Sync + 'static {
    /// The word a profile's `kind` takes (`openai`, `anthropic`, `responses`).
    fn kind(&self) -> &'static str;
    /// One line on what speaks this API, for help and the generated reference.
    fn about(&self) -> &'static str;
    /// The built-in profiles of this kind.
    fn profiles(&self) -> &'static [Builtin];

    /// The base URL as calls use it, from the one the user gave (trimmed, no trailing `/`).
    fn base_url(&self, given: String) -> String {
        given
    }
    /// Calls are refused without a key (the API never answers without one), and the
    /// name of the API in that message.
    fn needs_key(&self) -> Option<&'static str> {
        None
    }

    /// How several samples are taken.
    fn samples(&self) -> Samples;
    /// The API takes `reasoning_effort` (or its own form of it).
    fn takes_reasoning_effort(&self) -> bool {
        true
    }
    /// The API takes a thinking budget in tokens (Anthropic's extended thinking).
    fn takes_thinking_budget(&self) -> bool {
        false
    }
    /// The API can switch an open model's thinking (`chat_template_kwargs`).
    fn takes_think_switch(&self) -> bool {
        false
    }
    /// What the requests leave out or send otherwise than the run asked, for a model and
    /// settings: one line each, printed before the run and recorded in the session.
    fn notes(&self, model: &str, settings: &Settings) -> Vec<String> {
        let _ = (model, settings);
        Vec::new()
    }
    /// The temperatures the API accepts, if narrower than 0 to 2.
    fn temperature_range(&self) -> Option<(f32, f32)> {
        None
    }
    /// The sampling fields besides the temperature the API takes (see [`crate::protocol::Sampling`]).
    fn sampling_fields(&self) -> &'static [&'static str] {
        &["top_p", "presence_penalty", "frequency_penalty"]
    }
    /// The stop sequences the API cannot be sent (all of them, for an API without
    /// stops): the reply is cut at them here instead.
    fn stops_cut_here<'s>(&self, stops: &'s [String]) -> Vec<&'s String> {
        let _ = stops;
        Vec::new()
    }

    /// Where a call is posted, from the base URL.
    fn url(&self, base_url: &str) -> String;
    /// The call's headers: the key and any version header the API wants.
    fn authorize(&self, request: RequestBuilder, key: Option<&Secret>) -> RequestBuilder;
    /// The request body.
    fn body(&self, call: &Call<'_>) -> Value;
    /// A whole (not streamed) reply.
    fn parse(&self, text: &str) -> Result<Part, CallError>;
    /// A reader for one streamed reply.
    fn stream(&self) -> Box<dyn StreamRead>;

    /// What the server says of the model's context window when no profile states it.
    fn context_window<'a>(&'a self, provider: &'a HttpProvider) -> BoxFuture<'a, Option<ContextWindow>> {
        let _ = provider;
        Box::pin(async { None })
    }
    /// What cached answers are keyed to besides the request (`base_url`, `model` and,
    /// where sent, the seed): an answer from one server, model or kind is not another's.
    fn cache_scope(&self, base_url: &str, model: &str, settings: &Settings) -> String {
        let _ = settings;
        format!("{} {base_url} {model}", self.kind())
    }
}

/// The system messages joined by a blank line (`None` without any) and the other turns
/// as `{role, content}`, for APIs that take the system prompt apart (Anthropic's
/// `system`, the Responses API's `instructions`). Turns with native tool calls or tool
/// results are each kind's own shape: `turn` writes them (it is given every non-system
/// turn, and returns the values to send for it, or `None` for the plain shape).
pub fn system_apart(
    request: &LlmRequest,
    mut turn: impl FnMut(&crate::protocol::Message) -> Option<Vec<Value>>,
) -> (Option<String>, Vec<Value>) {
    use crate::protocol::Role;
    let system: Vec<&str> =
        request.messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
    let mut turns = Vec::new();
    for m in request.messages.iter().filter(|m| m.role != Role::System) {
        match turn(m) {
            Some(values) => turns.extend(values),
            None => {
                let role = if m.role == Role::Assistant { "assistant" } else { "user" };
                turns.push(serde_json::json!({"role": role, "content": m.content}));
            }
        }
    }
    ((!system.is_empty()).then(|| system.join("\n\n")), turns)
}

/// The temperature (left out for a reasoning model, which takes only its own) and the
/// reasoning effort, where set, as chat completions take them.
pub fn sampling(body: &mut serde_json::Map<String, Value>, call: &Call<'_>) {
    let reasoning = &call.settings.reasoning;
    if !reasoning.model {
        body.insert("temperature".into(), serde_json::json!(crate::llm::wire_temperature(call.request.temperature)));
    }
    if let Some(effort) = &reasoning.effort {
        body.insert("reasoning_effort".into(), serde_json::json!(effort));
    }
    match (reasoning.think, reasoning.think_via) {
        (Some(on), ThinkVia::ChatTemplateKwargs) => {
            body.insert("chat_template_kwargs".into(), serde_json::json!({"enable_thinking": on}));
        }
        // A level given with --reasoning-effort is already there (a contradicting one is refused).
        (Some(on), ThinkVia::ReasoningEffort) if reasoning.effort.is_none() => {
            body.insert("reasoning_effort".into(), serde_json::json!(if on { THINK_ON_EFFORT } else { "none" }));
        }
        _ => {}
    }
    call.request.sampling.insert_into(body, &["top_p", "presence_penalty", "frequency_penalty"]);
}

/// The level `--think on` asks where the switch goes as `reasoning_effort` and no level was given.
pub const THINK_ON_EFFORT: &str = "medium";

/// The note a reasoning model's left-out temperature needs.
pub fn reasoning_notes(model: &str, settings: &Settings) -> Vec<String> {
    let mut notes = Vec::new();
    if settings.reasoning.model {
        notes.push(format!(
            "temperature is not sent: {model} is a reasoning model, which takes only its own; samples differ by the \
             model's own randomness, not by --temperature"
        ));
    }
    if let Some(effort) = &settings.reasoning.effort {
        notes.push(format!("reasoning effort {effort} is asked of {model}"));
    }
    let onoff = |on: bool| if on { "on" } else { "off" };
    match (settings.reasoning.think, settings.reasoning.think_via) {
        (Some(on), ThinkVia::ChatTemplateKwargs) => notes.push(format!(
            "thinking is switched {} through chat_template_kwargs.enable_thinking (vLLM, SGLang and llama.cpp's \
             server read it; a server that does not leaves the model as it is)",
            onoff(on)
        )),
        (Some(on), ThinkVia::ReasoningEffort) => notes.push(format!(
            "thinking is switched {} through reasoning_effort ({}), as Ollama's OpenAI-compatible API takes it",
            onoff(on),
            match (&settings.reasoning.effort, on) {
                (Some(level), _) => level.clone(),
                (None, true) => format!("{THINK_ON_EFFORT}; --reasoning-effort LEVEL asks another"),
                (None, false) => "none".into(),
            }
        )),
        (None, _) => {}
    }
    notes
}

/// The key as a bearer token (OpenAI's APIs and the servers that copy them).
pub fn bearer(request: RequestBuilder, key: Option<&Secret>) -> RequestBuilder {
    match key {
        Some(k) => request.bearer_auth(k.expose()),
        None => request,
    }
}

/// The kind called `name`, if there is one.
pub fn kind(name: &str) -> Option<&'static dyn Api> {
    KINDS.iter().copied().find(|k| k.kind() == name)
}

/// Every kind's word, for messages: `openai, anthropic, responses`.
pub fn kind_names() -> String {
    KINDS.iter().map(|k| k.kind()).collect::<Vec<_>>().join(", ")
}

/// Every built-in profile with its kind, in registry order.
pub fn builtins() -> impl Iterator<Item = (&'static dyn Api, &'static Builtin)> {
    KINDS.iter().flat_map(|k| k.profiles().iter().map(move |b| (*k, b)))
}

/// The built-in profile called `name`, with its kind.
pub fn builtin(name: &str) -> Option<(&'static dyn Api, &'static Builtin)> {
    builtins().find(|(_, b)| b.name == name)
}

/// A kind as a value: compared and shown by its word.
#[derive(Clone, Copy)]
pub struct Kind(pub &'static dyn Api);

impl Kind {
    pub fn api(self) -> &'static dyn Api {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.kind()
    }
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.name() == other.name()
    }
}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_and_builtin_profile_has_one_name() {
        let mut kinds: Vec<&str> = KINDS.iter().map(|k| k.kind()).collect();
        let n = kinds.len();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), n, "two kinds share a word");
        let mut names: Vec<&str> = builtins().map(|(_, b)| b.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "two built-in profiles share a name");
        for (k, b) in builtins() {
            assert!(reqwest::Url::parse(b.base_url).is_ok(), "{}: {}", b.name, b.base_url);
            assert!(!b.about.is_empty() && !b.about.ends_with('.'), "{}", b.name);
            assert_eq!(kind(k.kind()).map(|x| x.kind()), Some(k.kind()));
        }
        assert!(kind("gemini").is_none());
    }
}
