//! OpenAI's chat-completions API, as spoken by OpenAI, Ollama, vLLM, the llama.cpp
//! server, LM Studio and OpenRouter: `n` samples per request where the server honours
//! it, a seed, stop sequences, tools as `function` entries, usage in streams when asked
//! (`stream_options.include_usage`), and a context window the server may tell
//! (`/props`, `/v1/models`).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::provider::{malformed, tool_arguments, truncated};
use super::{Api, Builtin, Call, HttpProvider, Part, Samples, Settings, StreamRead};
use crate::llm::http::shorten;
use crate::llm::secret::Secret;
use crate::llm::{BoxFuture, ContextWindow, DeltaFn, Streamed};
use crate::protocol::{CallError, CallErrorKind, Completion, Role, Thinking, ThinkingKind, ToolCallOut, ToolDef};
fn role(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// A message of a chat-completions request: `{role, content}`; an assistant turn's tool
/// calls as `tool_calls` (`{id, type: "function", function: {name, arguments}}`, the
/// arguments a JSON string), and a tool's result as `{role: "tool", tool_call_id, content}`.
fn message_json(m: &crate::protocol::Message) -> Value {
    let mut v = json!({"role": role(m.role), "content": m.content});
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_text()}})
            })
            .collect();
        v["tool_calls"] = Value::Array(calls);
        if m.content.is_empty() {
            // A turn of tool calls alone has no content (the API's documented shape).
            v["content"] = Value::Null;
        }
    }
    if let Some(id) = &m.tool_call_id {
        v["tool_call_id"] = json!(id);
    }
    // Thinking that came as `reasoning_content` goes back the same way (DeepSeek's
    // thinking mode requires it inside a tool loop); other servers never sent it.
    let field: Vec<&str> =
        m.thinking.iter().filter(|t| t.kind == ThinkingKind::Field).map(|t| t.text.as_str()).collect();
    if !field.is_empty() {
        v["reasoning_content"] = json!(field.join("\n\n"));
    }
    v
}

/// A `tools` entry of a chat-completions request.
pub(crate) fn tool_json(tool: &ToolDef) -> Value {
    json!({
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    })
}

/// The `tool_calls` of a whole reply's message.
fn tool_calls_of(message: Option<&Value>) -> Vec<ToolCallOut> {
    let calls = message.and_then(|m| m.get("tool_calls")).and_then(Value::as_array);
    calls
        .into_iter()
        .flatten()
        .map(|c| ToolCallOut {
            id: c.get("id").and_then(Value::as_str).map(str::to_string),
            name: c.pointer("/function/name").and_then(Value::as_str).unwrap_or("").to_string(),
            arguments: tool_arguments(c.pointer("/function/arguments")),
        })
        .collect()
}

/// The fields servers put a reasoning model's thinking in beside `content`: vLLM's
/// reasoning parsers and DeepSeek `reasoning_content`, newer vLLM, Ollama, OpenRouter and
/// Groq `reasoning`, some gateways `thinking`.
const THINKING_FIELDS: &[&str] = &["reasoning_content", "reasoning", "thinking"];

/// The thinking a message (or a streamed delta) carries: a text in one of
/// [`THINKING_FIELDS`], else OpenRouter's `reasoning_details` (text or summary pieces),
/// else `thinking` parts of a content list (Mistral's Magistral).
fn thinking_of(message: Option<&Value>) -> Option<String> {
    let m = message?;
    if let Some(text) = THINKING_FIELDS.iter().find_map(|f| m.get(*f).and_then(Value::as_str)) {
        return Some(text.to_string());
    }
    let texts = |list: &Value, keys: &[&str]| -> String {
        let items = list.as_array().into_iter().flatten();
        items.filter_map(|d| keys.iter().find_map(|k| d.get(*k).and_then(Value::as_str))).collect()
    };
    if let Some(details) = m.get("reasoning_details").filter(|d| d.is_array()) {
        return Some(texts(details, &["text", "summary"]));
    }
    let parts = m.get("content").and_then(Value::as_array)?;
    let thinking: String = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("thinking"))
        .map(|p| match p.get("thinking") {
            Some(Value::String(t)) => t.clone(),
            Some(list) => texts(list, &["text"]),
            None => String::new(),
        })
        .collect();
    Some(thinking)
}

/// A content that is a list of parts: the text of its `text` parts (its `thinking`
/// parts are read by [`thinking_of`]).
fn text_parts(parts: &[Value]) -> String {
    let text = parts.iter().filter(|p| p.get("type").and_then(Value::as_str) == Some("text"));
    text.filter_map(|p| p.get("text").and_then(Value::as_str)).collect()
}

/// A `reasoning_content` field's text as the reply's thinking.
fn field_thinking(text: &str) -> Vec<Thinking> {
    if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![Thinking::new(ThinkingKind::Field, text)]
    }
}

/// Parse a whole (not streamed) chat-completions reply.
pub(crate) fn parse_chat(text: &str) -> Result<Part, CallError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| malformed(format!("the reply is not valid JSON ({e}): {}", shorten(text, 200))))?;
    if v.get("error").is_some_and(|e| !e.is_null()) {
        let message = crate::llm::http::server_message(text);
        let kind = crate::llm::http::reported_error_kind(&message, CallErrorKind::Server);
        return Err(CallError { kind, message });
    }
    let choices = v
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(format!("the reply has no list of choices: {}", shorten(text, 200))))?;
    if choices.is_empty() {
        return Err(CallError {
            kind: CallErrorKind::Empty,
            message: "the server returned an empty list of choices".into(),
        });
    }
    let mut indexed = Vec::with_capacity(choices.len());
    for (i, c) in choices.iter().enumerate() {
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(i as u64);
        let content = c.pointer("/message/content").or_else(|| c.get("text"));
        let text = match content {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => text_parts(parts),
            Some(Value::Null) | None if c.get("message").is_some() => String::new(),
            _ => return Err(malformed(format!("choice {i} has no message content: {}", shorten(&c.to_string(), 200)))),
        };
        // "tool_calls" is a normal finish: the calls are read with the text.
        let finish_reason = c.get("finish_reason").and_then(Value::as_str).map(str::to_string);
        let tool_calls = tool_calls_of(c.get("message"));
        let thinking = field_thinking(&thinking_of(c.get("message")).unwrap_or_default());
        let finish_reason = finish_reason.map(Into::into);
        indexed.push((index, Completion { text: text.into(), finish_reason, tool_calls, thinking }));
    }
    indexed.sort_by_key(|(i, _)| *i);
    Ok(Part {
        completions: indexed.into_iter().map(|(_, c)| c).collect(),
        usage: usage_of(&v),
        reasoning_tokens: reasoning_tokens_of(&v),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
    })
}

fn usage_of(v: &Value) -> Option<(u64, u64)> {
    let u = v.get("usage")?;
    Some((u.get("prompt_tokens")?.as_u64()?, u.get("completion_tokens")?.as_u64()?))
}

/// `usage.completion_tokens_details.reasoning_tokens` (OpenAI, vLLM, OpenRouter).
fn reasoning_tokens_of(v: &Value) -> Option<u64> {
    v.pointer("/usage/completion_tokens_details/reasoning_tokens").and_then(Value::as_u64)
}

/// A tool call being streamed: its id and name come first, its arguments in pieces.
#[derive(Debug, Default)]
struct PartialCall {
    /// The `index` the stream gives the call within its choice.
    index: u64,
    id: Option<String>,
    name: String,
    arguments: String,
}

impl PartialCall {
    fn finish(self) -> ToolCallOut {
        ToolCallOut { id: self.id, name: self.name, arguments: tool_arguments(Some(&Value::String(self.arguments))) }
    }
}

/// Accumulates a streamed reply.
#[derive(Default)]
struct StreamState {
    texts: BTreeMap<u64, String>,
    /// Thinking by choice, as it arrives in `reasoning_content` deltas.
    thinking: BTreeMap<u64, String>,
    reasoning_tokens: Option<u64>,
    /// Tool calls by choice, in the order they began.
    calls: BTreeMap<u64, Vec<PartialCall>>,
    finish: BTreeMap<u64, String>,
    usage: Option<(u64, u64)>,
    model: Option<String>,
    done: bool,
    chars: usize,
}

impl StreamState {
    fn event(&mut self, data: &str, first_sample: u32, deltas: Option<&DeltaFn>) -> Result<(), CallError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            malformed(format!(
                "a stream event is not valid JSON ({e}) after {} characters: {}",
                self.chars,
                shorten(data, 200)
            ))
        })?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            let said = crate::llm::http::server_message(data);
            return Err(CallError {
                kind: crate::llm::http::reported_error_kind(&said, CallErrorKind::Server),
                message: format!("the server reported an error mid-stream: {said}"),
            });
        }
        if let Some(u) = usage_of(&v) {
            self.usage = Some(u);
        }
        if let Some(r) = reasoning_tokens_of(&v) {
            self.reasoning_tokens = Some(r);
        }
        if self.model.is_none() {
            self.model = v.get("model").and_then(Value::as_str).map(str::to_string);
        }
        for (i, c) in v.get("choices").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(i as u64);
            let parts = c.pointer("/delta/content").and_then(Value::as_array).map(|p| text_parts(p));
            let piece = match &parts {
                Some(text) => text.as_str(),
                None => c.pointer("/delta/content").or_else(|| c.get("text")).and_then(Value::as_str).unwrap_or(""),
            };
            if let Some(thought) = thinking_of(c.get("delta")).filter(|t| !t.is_empty()) {
                self.thinking.entry(index).or_default().push_str(&thought);
                self.chars += thought.len();
            }
            let text = self.texts.entry(index).or_default();
            if !piece.is_empty() {
                text.push_str(piece);
                self.chars += piece.len();
                if let Some(d) = deltas {
                    d(first_sample + index as u32, Streamed::Text(piece));
                }
            }
            for (k, d) in c.pointer("/delta/tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
                self.tool_delta(index, k as u64, d);
            }
            if let Some(f) = c.get("finish_reason").and_then(Value::as_str) {
                self.finish.insert(index, f.to_string());
            }
        }
        Ok(())
    }

    /// One piece of a streamed tool call. A piece with an id not seen before starts a new
    /// call (some servers reuse index 0 for every call of a reply); one without continues
    /// the latest call at its index.
    fn tool_delta(&mut self, choice: u64, position: u64, d: &Value) {
        let index = d.get("index").and_then(Value::as_u64).unwrap_or(position);
        let id = d.get("id").and_then(Value::as_str).filter(|i| !i.is_empty());
        let calls = self.calls.entry(choice).or_default();
        let existing = match id {
            Some(id) => calls.iter().position(|c| c.id.as_deref() == Some(id)),
            None => calls.iter().rposition(|c| c.index == index),
        };
        let at = match existing {
            Some(at) => at,
            None => {
                calls.push(PartialCall { index, id: id.map(str::to_string), ..PartialCall::default() });
                calls.len() - 1
            }
        };
        let call = &mut calls[at];
        if let Some(name) = d.pointer("/function/name").and_then(Value::as_str) {
            if call.name.is_empty() {
                call.name = name.to_string();
            }
        }
        if let Some(piece) = d.pointer("/function/arguments").and_then(Value::as_str) {
            call.arguments.push_str(piece);
            self.chars += piece.len();
        }
    }

    fn finish(self) -> Result<Part, CallError> {
        let finished = !self.texts.is_empty() && self.texts.keys().all(|k| self.finish.contains_key(k));
        if !(self.done || finished) {
            return Err(truncated(format!(
                "the stream ended early, after {} characters, without [DONE] or a finish reason",
                self.chars
            )));
        }
        if self.done && !finished && self.chars > 0 {
            // What llama-cpp-python sends when another request interrupts the stream: [DONE]
            // after part of the reply, with no finish reason (every server sends one at the end).
            return Err(truncated(format!(
                "the stream was stopped after {} characters: [DONE] came before a finish reason",
                self.chars
            )));
        }
        if self.texts.is_empty() {
            return Err(CallError { kind: CallErrorKind::Empty, message: "the stream carried no choices".into() });
        }
        let (mut finish, mut calls, mut thinking) = (self.finish, self.calls, self.thinking);
        let completions = self
            .texts
            .into_iter()
            .map(|(i, text)| Completion {
                text: text.into(),
                finish_reason: finish.remove(&i).map(Into::into),
                tool_calls: calls.remove(&i).unwrap_or_default().into_iter().map(PartialCall::finish).collect(),
                thinking: field_thinking(&thinking.remove(&i).unwrap_or_default()),
            })
            .collect();
        Ok(Part { completions, usage: self.usage, reasoning_tokens: self.reasoning_tokens, model: self.model })
    }
}

impl StreamRead for StreamState {
    fn event(&mut self, data: &str, first_sample: u32, deltas: Option<&DeltaFn>) -> Result<(), CallError> {
        StreamState::event(self, data, first_sample, deltas)
    }

    fn chars(&self) -> usize {
        self.chars
    }

    fn finish(self: Box<Self>) -> Result<Part, CallError> {
        StreamState::finish(*self)
    }
}

/// The chat-completions kind.
pub struct ChatCompletions;

pub(super) static API: ChatCompletions = ChatCompletions;

const PROFILES: &[Builtin] = &[
    Builtin {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        base_url_env: Some("OPENAI_BASE_URL"),
        n: None,
        think_via: None,
        about: "OpenAI's chat completions",
    },
    Builtin {
        name: "ollama",
        base_url: "http://localhost:11434/v1",
        key_env: None,
        base_url_env: None,
        n: None,
        think_via: Some(super::ThinkVia::ReasoningEffort),
        about: "an Ollama server on this machine",
    },
    Builtin {
        name: "vllm",
        base_url: "http://localhost:8000/v1",
        key_env: None,
        base_url_env: None,
        n: None,
        think_via: None,
        about: "a vLLM server on this machine",
    },
    Builtin {
        name: "llamacpp",
        base_url: "http://localhost:8080/v1",
        key_env: None,
        base_url_env: None,
        n: Some(false),
        think_via: None,
        about: "a llama.cpp server on this machine (it ignores n: one request per sample)",
    },
    Builtin {
        name: "lmstudio",
        base_url: "http://localhost:1234/v1",
        key_env: None,
        base_url_env: None,
        n: None,
        think_via: None,
        about: "an LM Studio server on this machine",
    },
    Builtin {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        key_env: Some("OPENROUTER_API_KEY"),
        base_url_env: None,
        n: None,
        think_via: None,
        about: "OpenRouter's chat completions",
    },
];

impl Api for ChatCompletions {
    fn kind(&self) -> &'static str {
        "openai"
    }

    fn about(&self) -> &'static str {
        "OpenAI's chat-completions API: OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter and any compatible server"
    }

    fn profiles(&self) -> &'static [Builtin] {
        PROFILES
    }

    fn samples(&self) -> Samples {
        Samples::N
    }

    fn takes_think_switch(&self) -> bool {
        true
    }

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/chat/completions")
    }

    fn authorize(&self, request: reqwest::RequestBuilder, key: Option<&Secret>) -> reqwest::RequestBuilder {
        super::bearer(request, key)
    }

    fn body(&self, call: &Call<'_>) -> Value {
        let request = call.request;
        let messages: Vec<Value> = request.messages.iter().map(message_json).collect();
        let mut body = json!({
            "model": call.model,
            "messages": messages,
        });
        let obj = body.as_object_mut().expect("a JSON object literal");
        super::sampling(obj, call);
        if let Some(m) = request.max_tokens {
            obj.insert(call.settings.max_tokens_param.clone(), json!(m));
        }
        if !request.stop.is_empty() {
            obj.insert("stop".into(), json!(request.stop));
        }
        if !request.tools.is_empty() {
            obj.insert("tools".into(), Value::Array(request.tools.iter().map(tool_json).collect()));
            obj.insert("tool_choice".into(), json!("auto"));
        }
        if call.n > 1 {
            obj.insert("n".into(), json!(call.n));
        }
        if let Some(seed) = call.settings.seed {
            obj.insert("seed".into(), json!(seed.wrapping_add(call.sample as u64)));
        }
        if call.stream {
            obj.insert("stream".into(), json!(true));
            if call.settings.stream_usage {
                obj.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
        body
    }

    fn parse(&self, text: &str) -> Result<Part, CallError> {
        parse_chat(text)
    }

    fn notes(&self, model: &str, settings: &Settings) -> Vec<String> {
        let mut notes = super::reasoning_notes(model, settings);
        if settings.reasoning.model && settings.max_tokens_param == "max_completion_tokens" {
            notes.push("the completion limit is sent as max_completion_tokens (it includes the thinking)".into());
        }
        notes
    }

    fn stream(&self) -> Box<dyn StreamRead> {
        Box::<StreamState>::default()
    }

    /// What the server says of its context window: llama.cpp's `llama-server` the one it
    /// runs with (`/props`), vLLM, OpenRouter and LM Studio the model's (`/v1/models`:
    /// `max_model_len`, `context_length`, `max_context_length`). OpenAI, Ollama and
    /// llama-cpp-python do not say.
    fn context_window<'a>(&'a self, provider: &'a HttpProvider) -> BoxFuture<'a, Option<ContextWindow>> {
        Box::pin(discover_context(provider))
    }

    fn cache_scope(&self, base_url: &str, model: &str, settings: &Settings) -> String {
        // As before the registry: answers cached by earlier versions are found again.
        format!("{base_url} {model} seed={:?}", settings.seed)
    }
}

async fn discover_context(provider: &HttpProvider) -> Option<ContextWindow> {
    use crate::llm::Provider;
    let base = provider.base_url().trim_end_matches('/');
    let origin = base.strip_suffix("/v1").unwrap_or(base);
    if let Some(v) = provider.get_json(&format!("{origin}/props")).await {
        let n = v.pointer("/default_generation_settings/n_ctx").or_else(|| v.get("n_ctx"));
        if let Some(tokens) = n.and_then(Value::as_u64).filter(|n| *n > 0) {
            return Some(ContextWindow { tokens, source: format!("the server's {origin}/props"), measured: true });
        }
    }
    let v = provider.get_json(&format!("{base}/models")).await?;
    let models = v.get("data")?.as_array()?;
    let model = models
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(provider.model()))
        .or(if models.len() == 1 { models.first() } else { None })?;
    ["max_model_len", "context_length", "max_context_length", "context_window"].iter().find_map(|key| {
        let tokens = model.get(*key).and_then(Value::as_u64).filter(|n| *n > 0)?;
        Some(ContextWindow { tokens, source: format!("the server's {base}/models ({key})"), measured: true })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::LlmRequest;

    #[test]
    fn the_temperature_goes_out_as_the_user_wrote_it() {
        let env = |_: &str| None;
        let args = crate::llm::config::ProviderOptions {
            model: Some("m".into()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..Default::default()
        };
        let r =
            crate::llm::config::resolve("openai", &args, &crate::llm::config::FileConfig::default(), &env, 0).unwrap();
        let provider = HttpProvider::new(&r).unwrap();
        for (t, wire) in [(0.7_f32, "0.7"), (0.1, "0.1"), (1.0, "1.0"), (0.0, "0.0")] {
            let request = LlmRequest::from_prompt(
                crate::protocol::Prompt {
                    purpose: crate::protocol::Purpose::Cot,
                    messages: vec![crate::protocol::Message::user("q")],
                    context: Value::Null,
                    stop: vec![],
                    max_tokens: None,
                    sampling: Default::default(),
                },
                1,
                t,
            );
            let body = provider.body(&request, 1, 0, false);
            assert_eq!(serde_json::to_string(&body["temperature"]).unwrap(), wire);
        }
    }

    #[test]
    fn whole_replies_parse_and_bad_ones_name_the_problem() {
        let ok = r#"{"model":"m1","choices":[{"index":1,"message":{"content":"b"},"finish_reason":"length"},
                    {"index":0,"message":{"role":"assistant","content":"a"},"finish_reason":"stop"}],
                    "usage":{"prompt_tokens":7,"completion_tokens":3}}"#;
        let p = parse_chat(ok).unwrap();
        assert_eq!(p.completions.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(p.completions[1].finish_reason.as_deref(), Some("length"));
        assert_eq!(p.usage, Some((7, 3)));
        assert_eq!(parse_chat(r#"{"choices":[]}"#).unwrap_err().kind, CallErrorKind::Empty);
        assert_eq!(parse_chat(r#"{"choices":[{"message":{"con"#).unwrap_err().kind, CallErrorKind::Malformed);
        assert_eq!(parse_chat(r#"{"object":"x"}"#).unwrap_err().kind, CallErrorKind::Malformed);
        assert_eq!(parse_chat(r#"{"error":{"message":"boom"}}"#).unwrap_err().message, "boom");
        let no_usage = parse_chat(r#"{"choices":[{"message":{"content":"x"}}]}"#).unwrap();
        assert_eq!((no_usage.usage, no_usage.completions[0].text.as_str()), (None, "x"));
        // No text in any choice (null, empty, blank) and no tool call: an empty answer, unless
        // it stopped at its length.
        for content in ["null", "\"\"", "\" \\n \""] {
            let reply = format!(r#"{{"choices":[{{"message":{{"content":{content}}},"finish_reason":"stop"}}]}}"#);
            let p = parse_chat(&reply).and_then(Part::judged).unwrap();
            assert!(p.is_blank() && p.completions[0].finish_reason.as_deref() == Some("stop"), "{content}");
            let cut = reply.replace("\"stop\"", "\"length\"");
            let e = parse_chat(&cut).and_then(Part::judged).unwrap_err();
            assert_eq!(e.kind, CallErrorKind::AllThinking, "{content}: {e}");
        }
        let two = r#"{"choices":[{"message":{"content":""}},{"index":1,"message":{"content":"b"}}]}"#;
        assert_eq!(parse_chat(two).unwrap().completions.len(), 2, "one choice with text is a reply");
        let call = r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c","function":{"name":"search","arguments":"{}"}}]}}]}"#;
        assert_eq!(parse_chat(call).unwrap().completions[0].tool_calls.len(), 1, "a tool call is a reply");
    }

    #[test]
    fn streams_accumulate_by_choice_and_report_deltas() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let d: DeltaFn = std::sync::Arc::new(move |i, piece: Streamed<'_>| {
            if let Streamed::Text(t) = piece {
                s2.lock().unwrap().push((i, t.to_string()))
            }
        });
        let mut st = StreamState::default();
        for data in [
            r#"{"model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"He"}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"X"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"llo"},"finish_reason":"length"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}"#,
            "[DONE]",
        ] {
            st.event(data, 3, Some(&d)).unwrap();
        }
        let p = st.finish().unwrap();
        assert_eq!(p.completions[0].text, "Hello");
        assert_eq!(p.completions[0].finish_reason.as_deref(), Some("length"));
        assert_eq!(p.completions[1].text, "X");
        assert_eq!(p.usage, Some((5, 4)));
        assert_eq!(*seen.lock().unwrap(), vec![(3, "He".into()), (4, "X".into()), (3, "llo".into())]);
        // Cut before the end: a failure, not a short answer.
        let mut st = StreamState::default();
        st.event(r#"{"choices":[{"index":0,"delta":{"content":"4 + 4"}}]}"#, 0, None).unwrap();
        assert_eq!(st.finish().unwrap_err().kind, CallErrorKind::Truncated);
        // [DONE] after part of a reply, no finish reason: a server that stopped the stream
        // (llama-cpp-python when another request arrives), not a whole reply.
        let mut st = StreamState::default();
        st.event(r#"{"choices":[{"index":0,"delta":{"content":"4 + 4"}}]}"#, 0, None).unwrap();
        st.event("[DONE]", 0, None).unwrap();
        let e = st.finish().unwrap_err();
        assert!(e.kind == CallErrorKind::Truncated && e.message.contains("[DONE] came before a finish reason"), "{e}");
        let mut st = StreamState::default();
        assert_eq!(st.event("{\"choices\":[", 0, None).unwrap_err().kind, CallErrorKind::Malformed);
    }

    #[test]
    fn reasoning_fields_and_tokens_are_read_whole_and_streamed() {
        for field in THINKING_FIELDS {
            let body = json!({"choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "24", field.to_string(): "6 * 4, so 24"}}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 30,
                          "completion_tokens_details": {"reasoning_tokens": 25}}});
            let p = parse_chat(&body.to_string()).unwrap();
            let c = &p.completions[0];
            assert_eq!((c.text.as_str(), c.thinking_text().as_str()), ("24", "6 * 4, so 24"), "{field}");
            assert_eq!(c.thinking[0].kind, ThinkingKind::Field);
            assert_eq!(p.reasoning_tokens, Some(25));
        }
        // Content as a list of parts with thinking parts (Magistral); OpenRouter's details.
        let magistral = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
            "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "6 * 4"}]},
                        {"type": "text", "text": "24"}]}}]});
        let details = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
            "content": "24", "reasoning_details": [{"type": "reasoning.summary", "summary": "6 * 4"},
                                                   {"type": "reasoning.encrypted", "data": "x"}]}}]});
        for body in [magistral, details] {
            let p = parse_chat(&body.to_string()).unwrap();
            assert_eq!((p.completions[0].text.as_str(), p.completions[0].thinking_text().as_str()), ("24", "6 * 4"));
        }
        let mut st = StreamState::default();
        for data in [
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"6 * 4"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":", so 24","content":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"24"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":6}}}"#,
            "[DONE]",
        ] {
            st.event(data, 0, None).unwrap();
        }
        let p = st.finish().unwrap();
        assert_eq!((p.completions[0].text.as_str(), p.completions[0].thinking_text().as_str()), ("24", "6 * 4, so 24"));
        assert_eq!(p.reasoning_tokens, Some(6));
    }

    #[test]
    fn a_reasoning_model_is_sent_no_temperature_and_its_own_limit_and_effort() {
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-test".to_string());
        let resolved = |model: &str, effort: Option<&str>| {
            let args = crate::llm::config::ProviderOptions {
                model: Some(model.into()),
                reasoning_effort: effort.map(str::to_string),
                ..Default::default()
            };
            crate::llm::config::resolve("openai", &args, &crate::llm::config::FileConfig::default(), &env, 1).unwrap()
        };
        let request = LlmRequest {
            purpose: crate::protocol::Purpose::Value,
            messages: vec![crate::protocol::Message::user("x")],
            n: 1,
            temperature: 0.7,
            max_tokens: Some(100),
            stop: vec![],
            context: Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        };
        for (model, reasoning) in [("o3-mini", true), ("gpt-5.1", true), ("openai/o4-mini", true), ("gpt-4o", false), ("gpt-5-chat-latest", false)] {
            let p = HttpProvider::new(&resolved(model, Some("low"))).unwrap();
            let b = p.body(&request, 1, 0, false);
            assert_eq!(b.get("temperature").is_none(), reasoning, "{model}");
            assert_eq!(b.get("max_completion_tokens").is_some(), reasoning, "{model}");
            assert_eq!(b.get("max_tokens").is_some(), !reasoning, "{model}");
            assert_eq!(b["reasoning_effort"], "low");
            use crate::llm::Provider;
            assert_eq!(p.notes().iter().any(|n| n.contains("temperature is not sent")), reasoning, "{model}");
        }
    }

    #[test]
    fn an_open_models_thinking_is_switched_through_the_chat_template() {
        let env = |_: &str| None;
        let request = LlmRequest::simple(crate::protocol::Purpose::Value, vec![crate::protocol::Message::user("x")]);
        for think in [Some(false), Some(true), None] {
            let args = crate::llm::config::ProviderOptions { model: Some("qwen3-8b".into()), think, ..Default::default() };
            let r = crate::llm::config::resolve("vllm", &args, &crate::llm::config::FileConfig::default(), &env, 1);
            let p = HttpProvider::new(&r.unwrap()).unwrap();
            let b = p.body(&request, 1, 0, false);
            match think {
                Some(on) => assert_eq!(b["chat_template_kwargs"], json!({"enable_thinking": on})),
                None => assert!(b.get("chat_template_kwargs").is_none()),
            }
            use crate::llm::Provider;
            assert_eq!(p.notes().iter().any(|n| n.contains("chat_template_kwargs")), think.is_some());
        }
    }

    /// Ollama's OpenAI-compatible API takes its think switch as `reasoning_effort` (`none`
    /// for off, a level for on) and ignores `chat_template_kwargs`: the built-in profile
    /// sends it there, a level given with --reasoning-effort wins, and off with a level
    /// is refused as a contradiction.
    #[test]
    fn ollamas_think_switch_goes_as_reasoning_effort() {
        let env = |_: &str| None;
        let request = LlmRequest::simple(crate::protocol::Purpose::Value, vec![crate::protocol::Message::user("x")]);
        let cases = [(Some(true), None, Some("medium")), (Some(false), None, Some("none")), (None, None, None)];
        let cases = cases.into_iter().chain([(Some(true), Some("high"), Some("high")), (None, Some("low"), Some("low"))]);
        for (think, effort, sent) in cases {
            let args = crate::llm::config::ProviderOptions {
                model: Some("qwen3:8b".into()),
                think,
                reasoning_effort: effort.map(str::to_string),
                ..Default::default()
            };
            let r = crate::llm::config::resolve("ollama", &args, &crate::llm::config::FileConfig::default(), &env, 1);
            let p = HttpProvider::new(&r.unwrap()).unwrap();
            let b = p.body(&request, 1, 0, false);
            assert_eq!(b.get("reasoning_effort").and_then(Value::as_str), sent, "{think:?} {effort:?}: {b}");
            assert!(b.get("chat_template_kwargs").is_none(), "{b}");
            use crate::llm::Provider;
            let said = p.notes().iter().any(|n| n.contains("through reasoning_effort"));
            assert_eq!(said, think.is_some(), "{:?}", p.notes());
        }
        let args = crate::llm::config::ProviderOptions {
            model: Some("qwen3:8b".into()),
            think: Some(false),
            reasoning_effort: Some("high".into()),
            ..Default::default()
        };
        let err = crate::llm::config::resolve("ollama", &args, &crate::llm::config::FileConfig::default(), &env, 1);
        let err = err.unwrap_err().to_string();
        assert!(err.contains("--think off and --reasoning-effort high contradict each other"), "{err}");
        // A profile of another kind of server may say so too.
        let file: crate::llm::config::FileConfig =
            toml::from_str("[providers.box]\nkind = \"openai\"\nbase_url = \"http://h/v1\"\nthink_via = \"reasoning_effort\"\n")
                .unwrap();
        let args = crate::llm::config::ProviderOptions { model: Some("m".into()), think: Some(false), ..Default::default() };
        let p = HttpProvider::new(&crate::llm::config::resolve("box", &args, &file, &env, 1).unwrap()).unwrap();
        assert_eq!(p.body(&request, 1, 0, false)["reasoning_effort"], "none");
    }
}
