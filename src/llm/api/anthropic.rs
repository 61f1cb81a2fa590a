//! Anthropic's Messages API. Its differences from chat completions: the system
//! prompt is a separate field, `max_tokens` is required, stops are
//! `stop_sequences` (and may not be whitespace only, so those are applied here),
//! there is no `n` (one request per sample), usage is `input_tokens` /
//! `output_tokens`, a streamed reply is a sequence of typed events, and an
//! overloaded service answers 529 (retried like 5xx).

use serde_json::{json, Value};

use super::provider::{malformed, tool_arguments, truncated};
use super::{Api, Builtin, Call, HttpProvider, Part, Samples, Settings, StreamRead};
use crate::llm::http::{server_message, shorten};
use crate::llm::secret::Secret;
use crate::llm::{BoxFuture, ContextWindow, DeltaFn};
use crate::protocol::{CallError, CallErrorKind, Completion, Thinking, ThinkingKind, ToolCallOut};

pub const API_VERSION: &str = "2023-06-01";
/// Used when a request does not say how long a reply may be (the API requires it).
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The API's stop reasons in the words the rest of the program uses.
fn finish_reason(stop_reason: &str) -> String {
    match stop_reason {
        "end_turn" | "stop_sequence" => "stop".into(),
        "max_tokens" => "length".into(),
        // A normal end: the reply's tool_use blocks are its tool calls.
        "tool_use" => "tool_calls".into(),
        other => other.into(),
    }
}

/// Stops the API accepts (it rejects whitespace-only ones).
fn api_stops(stops: &[String]) -> Vec<&String> {
    stops.iter().filter(|s| !s.trim().is_empty()).collect()
}

/// A `thinking` or `redacted_thinking` content block as the reply's thinking, kept
/// whole (a later turn of a tool loop must send it back unchanged with its signature).
fn thinking_block(block: &Value) -> Option<Thinking> {
    let text = |key: &str| block.get(key).and_then(Value::as_str).map(str::to_string);
    match block.get("type").and_then(Value::as_str)? {
        "thinking" => Some(Thinking {
            kind: ThinkingKind::Block,
            text: text("thinking").unwrap_or_default(),
            signature: text("signature"),
            id: None,
        }),
        "redacted_thinking" => {
            Some(Thinking { kind: ThinkingKind::Redacted, text: String::new(), signature: text("data"), id: None })
        }
        _ => None,
    }
}

/// A thinking block as it was received (Anthropic's own kinds only): text and signature,
/// or the redacted block's data.
fn thinking_json(t: &Thinking) -> Option<Value> {
    match t.kind {
        ThinkingKind::Block => Some(json!({"type": "thinking", "thinking": t.text, "signature": t.signature})),
        ThinkingKind::Redacted => Some(json!({"type": "redacted_thinking", "data": t.signature})),
        _ => None,
    }
}

pub(crate) fn parse_message(text: &str) -> Result<Part, CallError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| malformed(format!("the reply is not valid JSON ({e}): {}", shorten(text, 200))))?;
    if v.get("type").and_then(Value::as_str) == Some("error") {
        let message = server_message(text);
        let kind = crate::llm::http::reported_error_kind(&message, CallErrorKind::Server);
        return Err(CallError { kind, message });
    }
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(format!("the reply has no content list: {}", shorten(text, 200))))?;
    let texts: Vec<&str> = content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let tool_calls: Vec<ToolCallOut> = content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|b| ToolCallOut {
            id: b.get("id").and_then(Value::as_str).map(str::to_string),
            name: b.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
            arguments: b.get("input").cloned().unwrap_or_else(|| json!({})),
        })
        .collect();
    let usage =
        v.get("usage").and_then(|u| Some((u.get("input_tokens")?.as_u64()?, u.get("output_tokens")?.as_u64()?)));
    Ok(Part {
        completions: vec![Completion {
            text: texts.concat().into(),
            finish_reason: v.get("stop_reason").and_then(Value::as_str).map(|r| finish_reason(r).into()),
            tool_calls,
            thinking: content.iter().filter_map(thinking_block).collect(),
        }],
        usage,
        // The API counts thinking in `output_tokens` without saying how much: estimated.
        reasoning_tokens: None,
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
    })
}

/// Accumulates a streamed reply from its events.
#[derive(Default)]
struct StreamState {
    text: String,
    /// `tool_use` blocks by content-block index: id, name and the input JSON as it arrives.
    calls: std::collections::BTreeMap<u64, (Option<String>, String, String)>,
    /// `thinking` and `redacted_thinking` blocks by content-block index.
    thinking: std::collections::BTreeMap<u64, Thinking>,
    stop_reason: Option<String>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    model: Option<String>,
    done: bool,
}

impl StreamState {
    fn event(&mut self, data: &str, sample: u32, deltas: Option<&DeltaFn>) -> Result<(), CallError> {
        let v: Value = serde_json::from_str(data).map_err(|e| {
            malformed(format!(
                "a stream event is not valid JSON ({e}) after {} characters: {}",
                self.text.len(),
                shorten(data, 200)
            ))
        })?;
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                let m = v.get("message");
                self.model = m.and_then(|m| m.get("model")).and_then(Value::as_str).map(str::to_string);
                self.input_tokens = m.and_then(|m| m.pointer("/usage/input_tokens")).and_then(Value::as_u64);
            }
            "content_block_start" => {
                let block = v.get("content_block");
                if let Some(t) = block.and_then(thinking_block) {
                    let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                    self.thinking.insert(index, t);
                }
                if block.and_then(|b| b.get("type")).and_then(Value::as_str) == Some("tool_use") {
                    let index = v.get("index").and_then(Value::as_u64).unwrap_or(self.calls.len() as u64);
                    let id = block.and_then(|b| b.get("id")).and_then(Value::as_str).map(str::to_string);
                    let name = block.and_then(|b| b.get("name")).and_then(Value::as_str).unwrap_or("").to_string();
                    self.calls.insert(index, (id, name, String::new()));
                }
            }
            "content_block_delta" => {
                if let Some(t) = v.pointer("/delta/text").and_then(Value::as_str) {
                    self.text.push_str(t);
                    if let Some(d) = deltas {
                        d(sample, crate::llm::Streamed::Text(t));
                    }
                }
                let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(t) = v.pointer("/delta/thinking").and_then(Value::as_str) {
                    if let Some(block) = self.thinking.get_mut(&index) {
                        block.text.push_str(t);
                    }
                }
                if let Some(sig) = v.pointer("/delta/signature").and_then(Value::as_str) {
                    if let Some(block) = self.thinking.get_mut(&index) {
                        block.signature.get_or_insert_with(String::new).push_str(sig);
                    }
                }
                if let Some(piece) = v.pointer("/delta/partial_json").and_then(Value::as_str) {
                    if let Some((_, _, input)) = self.calls.get_mut(&index) {
                        input.push_str(piece);
                    }
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(o) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.output_tokens = Some(o);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let said = server_message(data);
                let kind = if v.pointer("/error/type").and_then(Value::as_str) == Some("overloaded_error") {
                    CallErrorKind::Overloaded
                } else {
                    crate::llm::http::reported_error_kind(&said, CallErrorKind::Server)
                };
                return Err(CallError { kind, message: format!("the server reported an error mid-stream: {said}") });
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> Result<Part, CallError> {
        if !self.done {
            return Err(truncated(format!(
                "the stream ended early, after {} characters, without message_stop",
                self.text.len()
            )));
        }
        let usage = self.input_tokens.zip(self.output_tokens);
        Ok(Part {
            completions: vec![Completion {
                text: self.text.into(),
                finish_reason: self.stop_reason.as_deref().map(|r| finish_reason(r).into()),
                tool_calls: self
                    .calls
                    .into_values()
                    .map(|(id, name, input)| ToolCallOut {
                        id,
                        name,
                        arguments: tool_arguments(Some(&Value::String(input))),
                    })
                    .collect(),
                thinking: self.thinking.into_values().collect(),
            }],
            usage,
            reasoning_tokens: None,
            model: self.model,
        })
    }
}

impl StreamRead for StreamState {
    fn event(&mut self, data: &str, first_sample: u32, deltas: Option<&DeltaFn>) -> Result<(), CallError> {
        StreamState::event(self, data, first_sample, deltas)
    }

    fn chars(&self) -> usize {
        self.text.len()
    }

    fn finish(self: Box<Self>) -> Result<Part, CallError> {
        StreamState::finish(*self)
    }
}

/// The Messages kind.
pub struct Messages;

pub(super) static API: Messages = Messages;

const PROFILES: &[Builtin] = &[Builtin {
    name: "anthropic",
    base_url: "https://api.anthropic.com/v1",
    key_env: Some("ANTHROPIC_API_KEY"),
    base_url_env: Some("ANTHROPIC_BASE_URL"),
    n: Some(false),
    think_via: None,
    about: "Anthropic's Messages API",
}];

impl Api for Messages {
    fn kind(&self) -> &'static str {
        "anthropic"
    }

    fn about(&self) -> &'static str {
        "Anthropic's Messages API"
    }

    fn profiles(&self) -> &'static [Builtin] {
        PROFILES
    }

    /// The Anthropic SDKs' base URL (`ANTHROPIC_BASE_URL`) has no `/v1`, which they add
    /// before `/messages`: either form names the same API.
    fn base_url(&self, mut given: String) -> String {
        if !given.ends_with("/v1") {
            given.push_str("/v1");
        }
        given
    }

    fn needs_key(&self) -> Option<&'static str> {
        Some("the Anthropic API")
    }

    fn samples(&self) -> Samples {
        Samples::OnePerRequest
    }

    fn temperature_range(&self) -> Option<(f32, f32)> {
        Some((0.0, 1.0))
    }

    /// Whitespace-only stops are refused by the API: the reply is cut at them here.
    fn stops_cut_here<'s>(&self, stops: &'s [String]) -> Vec<&'s String> {
        stops.iter().filter(|s| s.trim().is_empty()).collect()
    }

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/messages")
    }

    fn authorize(&self, request: reqwest::RequestBuilder, key: Option<&Secret>) -> reqwest::RequestBuilder {
        let request = request.header("anthropic-version", API_VERSION);
        match key {
            Some(k) => request.header("x-api-key", k.expose()),
            None => request,
        }
    }

    fn sampling_fields(&self) -> &'static [&'static str] {
        &["top_p"]
    }

    fn body(&self, call: &Call<'_>) -> Value {
        let mut body = body(call.request, call.model, call.stream);
        if let Some(obj) = body.as_object_mut() {
            call.request.sampling.insert_into(obj, self.sampling_fields());
        }
        if let (Some(budget), Some(obj)) = (call.settings.reasoning.thinking_budget, body.as_object_mut()) {
            // Extended thinking: no temperature is taken with it, and max_tokens holds the
            // thinking and the answer, so the answer keeps the limit it was asked.
            obj.remove("temperature");
            let answer = obj.get("max_tokens").and_then(Value::as_u64).unwrap_or(u64::from(DEFAULT_MAX_TOKENS));
            obj.insert("max_tokens".into(), json!(answer + u64::from(budget)));
            obj.insert("thinking".into(), json!({"type": "enabled", "budget_tokens": budget}));
        }
        body
    }

    fn takes_reasoning_effort(&self) -> bool {
        false
    }

    fn takes_thinking_budget(&self) -> bool {
        true
    }

    fn notes(&self, model: &str, settings: &Settings) -> Vec<String> {
        match settings.reasoning.thinking_budget {
            Some(budget) => vec![format!(
                "extended thinking ({budget} tokens) is asked of {model}: temperature is not sent (the API takes none \
                 with thinking), and max_tokens is the answer's limit plus the budget"
            )],
            None => Vec::new(),
        }
    }

    fn parse(&self, text: &str) -> Result<Part, CallError> {
        parse_message(text)
    }

    fn stream(&self) -> Box<dyn StreamRead> {
        Box::<StreamState>::default()
    }

    /// As stated, else 200k tokens: the window Anthropic publishes for its current models.
    fn context_window<'a>(&'a self, _: &'a HttpProvider) -> BoxFuture<'a, Option<ContextWindow>> {
        let window = ContextWindow {
            measured: true,
            tokens: 200_000,
            source: "the window Anthropic publishes for its models".into(),
        };
        Box::pin(async move { Some(window) })
    }

    fn cache_scope(&self, base_url: &str, model: &str, _: &Settings) -> String {
        // As before the registry: answers cached by earlier versions are found again.
        format!("{base_url} {model}")
    }
}

fn body(request: &crate::protocol::LlmRequest, model: &str, stream: bool) -> Value {
    let (system, turns) = super::system_apart(request, |m| {
        if !m.tool_calls.is_empty() {
            // Its thinking blocks whole (the API requires them back inside a tool loop),
            // the turn's text, then one `tool_use` block a call.
            let mut blocks: Vec<Value> = m.thinking.iter().filter_map(thinking_json).collect();
            if !m.content.trim().is_empty() {
                blocks.push(json!({"type": "text", "text": m.content}));
            }
            for c in &m.tool_calls {
                blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments_object()}));
            }
            return Some(vec![json!({"role": "assistant", "content": blocks})]);
        }
        let id = m.tool_call_id.as_ref()?;
        let block = json!({"type": "tool_result", "tool_use_id": id, "content": m.content});
        Some(vec![json!({"role": "user", "content": [block]})])
    });
    let messages = tool_results_together(turns);
    let mut body = json!({
        "model": model,
        "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        // The API's range is 0..=1 (a run asking for more is refused before it starts).
        "temperature": crate::llm::wire_temperature(request.temperature.clamp(0.0, 1.0)),
    });
    let obj = body.as_object_mut().expect("a JSON object literal");
    if let Some(system) = system {
        obj.insert("system".into(), json!(system));
    }
    let stops = api_stops(&request.stop);
    if !stops.is_empty() {
        obj.insert("stop_sequences".into(), json!(stops));
    }
    if !request.tools.is_empty() {
        // Answered with `tool_use` content blocks; the model chooses (the default `auto`).
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        obj.insert("tools".into(), Value::Array(tools));
    }
    if stream {
        obj.insert("stream".into(), json!(true));
    }
    body
}

/// The results of one reply's tool calls in one user message, and a user turn that
/// follows them in that message too (a text block after the `tool_result` blocks): the
/// Messages API wants user and assistant turns to alternate. Turns without tool results
/// (every request outside native tool mode) are left as they are.
fn tool_results_together(turns: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(turns.len());
    for turn in turns {
        let previous_results = out.last().is_some_and(|p| p["role"] == "user" && p["content"].is_array());
        if previous_results && turn["role"] == "user" {
            let blocks = match &turn["content"] {
                Value::Array(blocks) => blocks.clone(),
                Value::String(text) => vec![json!({"type": "text", "text": text})],
                _ => Vec::new(),
            };
            if let Some(Value::Array(into)) = out.last_mut().map(|p| &mut p["content"]) {
                into.extend(blocks);
            }
            continue;
        }
        out.push(turn);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::config::{resolve, FileConfig, ProviderOptions};
    use crate::protocol::{LlmRequest, Message, Purpose};

    fn provider() -> HttpProvider {
        let env = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant-test".to_string());
        let args = ProviderOptions { model: Some("claude-3-5-haiku-latest".into()), ..Default::default() };
        let r = resolve("anthropic", &args, &FileConfig::default(), &env, 0).unwrap();
        HttpProvider::new(&r).unwrap()
    }

    #[test]
    fn requests_carry_system_max_tokens_and_only_accepted_stops() {
        let request = LlmRequest {
            purpose: Purpose::Sample,
            messages: vec![Message::system("be brief"), Message::user("4 4 6 8")],
            n: 1,
            temperature: 1.3,
            max_tokens: None,
            stop: vec!["\n".into(), "Input:".into()],
            context: Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        };
        let b = provider().body(&request, 1, 0, false);
        assert_eq!(b["system"], "be brief");
        assert_eq!(b["messages"], json!([{"role": "user", "content": "4 4 6 8"}]));
        assert_eq!(b["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(b["temperature"], 1.0);
        assert_eq!(b["stop_sequences"], json!(["Input:"]));
        assert!(b.get("n").is_none() && b.get("stream").is_none());
        let b = provider().body(&LlmRequest { temperature: 0.7, ..request }, 1, 0, false);
        assert_eq!(
            serde_json::to_string(&b["temperature"]).unwrap(),
            "0.7",
            "what the user gave, not the f32's widening"
        );
    }

    #[test]
    fn replies_and_stream_events_parse() {
        let text = r#"{"type":"message","model":"claude-x","content":[{"type":"text","text":"4 + 4 = 8"}],
                      "stop_reason":"max_tokens","usage":{"input_tokens":12,"output_tokens":5}}"#;
        let p = parse_message(text).unwrap();
        assert_eq!(p.completions[0].text, "4 + 4 = 8");
        assert_eq!(p.completions[0].finish_reason.as_deref(), Some("length"));
        assert_eq!(p.usage, Some((12, 5)));
        let err = parse_message(r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#);
        assert_eq!(err.unwrap_err().message, "bad (invalid_request_error)");
        assert_eq!(parse_message("{").unwrap_err().kind, CallErrorKind::Malformed);

        let got = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let g = got.clone();
        let d: DeltaFn = std::sync::Arc::new(move |_, piece: crate::llm::Streamed<'_>| {
            if let crate::llm::Streamed::Text(t) = piece {
                g.lock().unwrap().push_str(t)
            }
        });
        let mut st = StreamState::default();
        for e in [
            r#"{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":9,"output_tokens":1}}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"sure"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#,
            r#"{"type":"message_stop"}"#,
        ] {
            st.event(e, 0, Some(&d)).unwrap();
        }
        let p = st.finish().unwrap();
        assert_eq!((p.completions[0].text.as_str(), p.usage), ("sure", Some((9, 2))));
        assert_eq!(*got.lock().unwrap(), "sure");
        let mut st = StreamState::default();
        let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(st.event(overloaded, 0, Some(&d)).unwrap_err().kind, CallErrorKind::Overloaded);
        assert_eq!(StreamState::default().finish().unwrap_err().kind, CallErrorKind::Truncated);
    }

    #[test]
    fn thinking_and_redacted_blocks_are_kept_whole_and_streamed() {
        let body = json!({"content": [
            {"type": "thinking", "thinking": "4 * 6 = 24", "signature": "sig1"},
            {"type": "redacted_thinking", "data": "enc1"},
            {"type": "text", "text": "24"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 40}});
        let p = parse_message(&body.to_string()).unwrap();
        let c = &p.completions[0];
        assert_eq!(c.text.as_str(), "24");
        assert_eq!(
            c.thinking,
            vec![
                Thinking { kind: ThinkingKind::Block, text: "4 * 6 = 24".into(), signature: Some("sig1".into()), id: None },
                Thinking { kind: ThinkingKind::Redacted, text: String::new(), signature: Some("enc1".into()), id: None },
            ]
        );
        let mut st = StreamState::default();
        for e in [
            r#"{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":9,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"4 * 6"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" = 24"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig2"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"enc2"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"24"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":30}}"#,
            r#"{"type":"message_stop"}"#,
        ] {
            st.event(e, 0, None).unwrap();
        }
        let p = st.finish().unwrap();
        let c = &p.completions[0];
        assert_eq!((c.text.as_str(), c.thinking_text().as_str()), ("24", "4 * 6 = 24"));
        assert_eq!(c.thinking[0].signature.as_deref(), Some("sig2"));
        assert_eq!((c.thinking[1].kind, c.thinking[1].signature.as_deref()), (ThinkingKind::Redacted, Some("enc2")));
    }

    #[test]
    fn a_thinking_budget_asks_for_extended_thinking_without_temperature() {
        let env = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant-test".to_string());
        let args = ProviderOptions {
            model: Some("claude-sonnet-4-5".into()),
            thinking_budget: Some(2048),
            ..Default::default()
        };
        let p = HttpProvider::new(&resolve("anthropic", &args, &FileConfig::default(), &env, 0).unwrap()).unwrap();
        let request = LlmRequest {
            purpose: Purpose::Value,
            messages: vec![Message::user("x")],
            n: 1,
            temperature: 0.7,
            max_tokens: Some(100),
            stop: vec![],
            context: Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        };
        let b = p.body(&request, 1, 0, false);
        assert_eq!(b["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert_eq!((b.get("temperature"), b["max_tokens"].as_u64()), (None, Some(2148)));
        let plain = provider().body(&request, 1, 0, false);
        assert!(plain.get("thinking").is_none() && plain.get("temperature").is_some());
    }
}
