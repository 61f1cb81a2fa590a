//! OpenAI's chat-completions API, as spoken by OpenAI, Ollama, vLLM, the llama.cpp
//! server, LM Studio and OpenRouter.
//!
//! Servers differ in what they honour. Many ignore `n` (the llama.cpp server returns
//! one choice): when a reply has fewer choices than asked, the missing samples are
//! fetched one request each (with seeds `seed+1`, `seed+2`, ... so they differ), and
//! later calls go straight to one request per sample. A reply without token usage
//! gets an estimate, marked as such.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};

use futures::StreamExt;
use serde_json::{json, Value};

use super::config::{ModelPrice, Price, Resolved};
use super::fanout::{fan_out, Slots};
use super::http::{shorten, Attempt, HttpCore, SseParser};
use super::{BoxFuture, CallOptions, DeltaFn, Provider, Streamed};
use crate::protocol::{
    estimate_prompt_tokens, estimate_tokens, CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Role,
    ToolCallOut, ToolDef, Usage,
};

const N_UNKNOWN: u8 = 0;
const N_HONOURED: u8 = 1;
const N_IGNORED: u8 = 2;

pub struct OpenAiProvider {
    name: String,
    model: String,
    base_url: String,
    http: HttpCore,
    price: Option<Price>,
    price_assumed: bool,
    n_mode: AtomicU8,
    seed: Option<u64>,
    max_tokens_param: String,
    stream_usage: bool,
    /// The context window the command line or the profile states.
    context: Option<super::ContextWindow>,
}

/// What one HTTP request brought back.
#[derive(Debug, Default)]
pub(crate) struct Part {
    pub completions: Vec<Completion>,
    /// (prompt, completion) tokens, if the server said.
    pub usage: Option<(u64, u64)>,
    pub model: Option<String>,
}

pub(crate) fn malformed(message: String) -> CallError {
    CallError { kind: CallErrorKind::Malformed, message }
}

pub(crate) fn truncated(message: String) -> CallError {
    CallError { kind: CallErrorKind::Truncated, message }
}

/// `part`, unless no choice of it has text or a tool call (`"content": null`, `""`, only
/// whitespace): such a reply gives a method nothing to read, so it is a fault of the reply,
/// retried like a malformed one and a failed call when the retries run out, never an
/// empty answer to score.
pub(crate) fn with_text(part: Part) -> Result<Part, CallError> {
    let blank = |c: &Completion| c.text.trim().is_empty() && c.tool_calls.is_empty();
    if !part.completions.iter().all(blank) {
        return Ok(part);
    }
    let finish = part.completions.iter().find_map(|c| c.finish_reason.as_deref());
    let how = finish.map(|f| format!(", finish reason {f:?}")).unwrap_or_default();
    Err(CallError {
        kind: CallErrorKind::Empty,
        message: format!("the reply has no text (its content is null or empty and it calls no tool{how})"),
    })
}

/// Put the parts of a call together: completions in sample order, usage summed
/// (estimated for parts whose server did not say).
pub(crate) fn assemble(request: &LlmRequest, parts: Vec<Part>, want: usize, model: &str) -> LlmResponse {
    let mut usage = Usage::default();
    let mut completions = Vec::with_capacity(want);
    let mut served_by = None;
    for part in parts {
        match part.usage {
            Some((p, c)) => {
                usage.prompt_tokens += p;
                usage.completion_tokens += c;
            }
            None => {
                usage.estimated = true;
                usage.prompt_tokens += estimate_prompt_tokens(request);
                usage.completion_tokens += part.completions.iter().map(|c| estimate_tokens(&c.text)).sum::<u64>();
            }
        }
        served_by = served_by.or(part.model);
        completions.extend(part.completions);
    }
    completions.truncate(want);
    LlmResponse {
        completions,
        usage,
        latency_ms: 0,
        model: served_by.filter(|m| !m.is_empty()).unwrap_or_else(|| model.to_string()),
        simulated: false,
        cached: false,
    }
}

fn role(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// A `tools` entry of a chat-completions request.
pub(crate) fn tool_json(tool: &ToolDef) -> Value {
    json!({
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    })
}

/// A tool call's arguments: chat completions sends them as a JSON string. Arguments that
/// are not valid JSON stay a string, for the method to report as a bad call; an object
/// (as some servers send) is kept; nothing at all is an empty object.
pub(crate) fn tool_arguments(raw: Option<&Value>) -> Value {
    match raw {
        Some(Value::String(s)) if s.trim().is_empty() => json!({}),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(Value::Null) | None => json!({}),
        Some(other) => other.clone(),
    }
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

/// Parse a whole (not streamed) chat-completions reply.
pub(crate) fn parse_chat(text: &str) -> Result<Part, CallError> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| malformed(format!("the reply is not valid JSON ({e}): {}", shorten(text, 200))))?;
    if v.get("error").is_some_and(|e| !e.is_null()) {
        let message = super::http::server_message(text);
        let kind = super::http::reported_error_kind(&message, CallErrorKind::Server);
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
            Some(Value::Null) | None if c.get("message").is_some() => String::new(),
            _ => return Err(malformed(format!("choice {i} has no message content: {}", shorten(&c.to_string(), 200)))),
        };
        // "tool_calls" is a normal finish: the calls are read with the text.
        let finish_reason = c.get("finish_reason").and_then(Value::as_str).map(str::to_string);
        let tool_calls = tool_calls_of(c.get("message"));
        indexed
            .push((index, Completion { text: text.into(), finish_reason: finish_reason.map(Into::into), tool_calls }));
    }
    indexed.sort_by_key(|(i, _)| *i);
    with_text(Part {
        completions: indexed.into_iter().map(|(_, c)| c).collect(),
        usage: usage_of(&v),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
    })
}

fn usage_of(v: &Value) -> Option<(u64, u64)> {
    let u = v.get("usage")?;
    Some((u.get("prompt_tokens")?.as_u64()?, u.get("completion_tokens")?.as_u64()?))
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
            let said = super::http::server_message(data);
            return Err(CallError {
                kind: super::http::reported_error_kind(&said, CallErrorKind::Server),
                message: format!("the server reported an error mid-stream: {said}"),
            });
        }
        if let Some(u) = usage_of(&v) {
            self.usage = Some(u);
        }
        if self.model.is_none() {
            self.model = v.get("model").and_then(Value::as_str).map(str::to_string);
        }
        for (i, c) in v.get("choices").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(i as u64);
            let piece = c.pointer("/delta/content").or_else(|| c.get("text")).and_then(Value::as_str).unwrap_or("");
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
        let (mut finish, mut calls) = (self.finish, self.calls);
        let completions = self
            .texts
            .into_iter()
            .map(|(i, text)| Completion {
                text: text.into(),
                finish_reason: finish.remove(&i).map(Into::into),
                tool_calls: calls.remove(&i).unwrap_or_default().into_iter().map(PartialCall::finish).collect(),
            })
            .collect();
        with_text(Part { completions, usage: self.usage, model: self.model })
    }
}

impl OpenAiProvider {
    pub fn new(r: &Resolved) -> Result<OpenAiProvider, CallError> {
        let n_mode = match r.n_supported {
            Some(true) => N_HONOURED,
            Some(false) => N_IGNORED,
            None => N_UNKNOWN,
        };
        Ok(OpenAiProvider {
            name: r.name.clone(),
            model: r.model.clone(),
            base_url: r.base_url.clone(),
            http: HttpCore::new(r.http.clone(), r.key.clone(), r.key_source.clone())?,
            price: None,
            price_assumed: false,
            n_mode: AtomicU8::new(n_mode),
            seed: r.seed,
            max_tokens_param: r.max_tokens_param.clone(),
            stream_usage: r.stream_usage,
            context: r.context.clone(),
        })
    }

    /// The shared HTTP machinery (retry counters, options).
    /// With the model's price, for costs and budgets.
    pub fn priced(mut self, price: Option<ModelPrice>) -> Self {
        self.price = price.map(|p| p.price);
        self.price_assumed = price.is_some_and(|p| p.assumed);
        self
    }

    pub fn http(&self) -> &HttpCore {
        &self.http
    }

    /// Whether the server was found to honour `n` (`None` before the first call with n > 1).
    pub fn honours_n(&self) -> Option<bool> {
        match self.n_mode.load(Ordering::Relaxed) {
            N_HONOURED => Some(true),
            N_IGNORED => Some(false),
            _ => None,
        }
    }

    fn body(&self, request: &LlmRequest, n: u32, sample: u32, stream: bool) -> Value {
        let messages: Vec<Value> =
            request.messages.iter().map(|m| json!({"role": role(m.role), "content": m.content})).collect();
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "temperature": super::wire_temperature(request.temperature),
        });
        let obj = body.as_object_mut().expect("a JSON object literal");
        if let Some(m) = request.max_tokens {
            obj.insert(self.max_tokens_param.clone(), json!(m));
        }
        if !request.stop.is_empty() {
            obj.insert("stop".into(), json!(request.stop));
        }
        if !request.tools.is_empty() {
            obj.insert("tools".into(), Value::Array(request.tools.iter().map(tool_json).collect()));
            obj.insert("tool_choice".into(), json!("auto"));
        }
        if n > 1 {
            obj.insert("n".into(), json!(n));
        }
        if let Some(seed) = self.seed {
            obj.insert("seed".into(), json!(seed.wrapping_add(sample as u64)));
        }
        if stream {
            obj.insert("stream".into(), json!(true));
            if self.stream_usage {
                obj.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
        body
    }

    /// One HTTP request (with retries) for `n` choices, the first being sample `sample`.
    async fn one(
        &self,
        request: &LlmRequest,
        n: u32,
        sample: u32,
        deltas: Option<&DeltaFn>,
    ) -> Result<Part, CallError> {
        let body = self.body(request, n, sample, deltas.is_some());
        let url = format!("{}/chat/completions", self.base_url);
        let (body, url, http) = (&body, url.as_str(), &self.http);
        http.with_retries(|| async move {
            let mut rb = http.client.post(url).json(body);
            if let Some(k) = &http.key {
                rb = rb.bearer_auth(k.expose());
            }
            let resp = match rb.send().await {
                Ok(r) => r,
                Err(e) => return http.transport_error(url, &e),
            };
            let status = resp.status();
            if !status.is_success() {
                let headers = resp.headers().clone();
                let text = http.error_body(resp).await;
                return http.status_error(url, status, &headers, &text);
            }
            match deltas {
                Some(d) => {
                    http.watched_stream(
                        d,
                        |watched| async move { read_stream(resp, sample, &watched, http, url).await },
                    )
                    .await
                }
                None => match http.body_text(url, resp).await {
                    Err(attempt) => attempt,
                    Ok(text) => match parse_chat(&text) {
                        Ok(p) => Attempt::Done(p),
                        Err(e) => http.reply_fault(e),
                    },
                },
            }
        })
        .await
    }

    /// `n` samples in one request where the server honours `n`; where it does not, one
    /// request per missing sample, side by side as far as `slots` allow.
    async fn call(
        &self,
        request: &LlmRequest,
        deltas: Option<DeltaFn>,
        slots: Slots,
    ) -> Result<LlmResponse, CallError> {
        let want = request.n.max(1);
        let deltas = deltas.as_ref();
        let one_each = |first: u32| {
            let slots = &slots;
            async move { fan_out(want - first, slots, |k| self.one(request, 1, first + k, deltas)).await }
        };
        if want > 1 && self.n_mode.load(Ordering::Relaxed) == N_IGNORED {
            let parts = one_each(0).await?;
            return Ok(assemble(request, parts, want as usize, &self.model));
        }
        let first = self.one(request, want, 0, deltas).await?;
        let got = (first.completions.len() as u32).min(want);
        if want > 1 && self.n_mode.load(Ordering::Relaxed) == N_UNKNOWN {
            let mode = if got >= want { N_HONOURED } else { N_IGNORED };
            self.n_mode.store(mode, Ordering::Relaxed);
        }
        let mut parts = vec![first];
        if got < want {
            parts.extend(one_each(got).await?);
        }
        Ok(assemble(request, parts, want as usize, &self.model))
    }
}

/// Read a `text/event-stream` reply to the end, reporting text as it arrives.
async fn read_stream(
    resp: reqwest::Response,
    first_sample: u32,
    deltas: &DeltaFn,
    http: &HttpCore,
    url: &str,
) -> Result<Part, CallError> {
    let mut parser = SseParser::default();
    let mut state = StreamState::default();
    let mut body = resp.bytes_stream();
    let mut read = 0u64;
    while let Some(chunk) = body.next().await {
        let bytes = chunk.map_err(|e| {
            let what = if e.is_timeout() { "timed out" } else { "was cut" };
            truncated(format!("the stream {what} after {} characters: {e}", state.chars))
        })?;
        read += bytes.len() as u64;
        if read > http.options.max_response_bytes {
            return Err(http.too_large(url));
        }
        for ev in parser.push(&bytes) {
            state.event(&ev.data, first_sample, Some(deltas))?;
        }
    }
    for ev in parser.finish() {
        state.event(&ev.data, first_sample, Some(deltas))?;
    }
    state.finish()
}

impl OpenAiProvider {
    /// What the server says of its context window: llama.cpp's `llama-server` the one it
    /// runs with (`/props`), vLLM, OpenRouter and LM Studio the model's (`/v1/models`:
    /// `max_model_len`, `context_length`, `max_context_length`). OpenAI, Ollama and
    /// llama-cpp-python do not say.
    async fn discover_context(&self) -> Option<super::ContextWindow> {
        let base = self.base_url.trim_end_matches('/');
        let origin = base.strip_suffix("/v1").unwrap_or(base);
        if let Some(v) = self.get_json(&format!("{origin}/props")).await {
            let n = v.pointer("/default_generation_settings/n_ctx").or_else(|| v.get("n_ctx"));
            if let Some(tokens) = n.and_then(Value::as_u64).filter(|n| *n > 0) {
                return Some(super::ContextWindow {
                    tokens,
                    source: format!("the server's {origin}/props"),
                    measured: true,
                });
            }
        }
        let v = self.get_json(&format!("{base}/models")).await?;
        let models = v.get("data")?.as_array()?;
        let model = models
            .iter()
            .find(|m| m.get("id").and_then(Value::as_str) == Some(self.model.as_str()))
            .or(if models.len() == 1 { models.first() } else { None })?;
        ["max_model_len", "context_length", "max_context_length", "context_window"].iter().find_map(|key| {
            let tokens = model.get(*key).and_then(Value::as_u64).filter(|n| *n > 0)?;
            Some(super::ContextWindow { tokens, source: format!("the server's {base}/models ({key})"), measured: true })
        })
    }

    /// A small JSON document the server serves at `url`, if it does (5 s at most, no retries).
    async fn get_json(&self, url: &str) -> Option<Value> {
        let mut rb = self.http.client.get(url).timeout(std::time::Duration::from_secs(5));
        if let Some(k) = &self.http.key {
            rb = rb.bearer_auth(k.expose());
        }
        let resp = rb.send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        let bytes = resp.bytes().await.ok()?;
        if bytes.len() > 4 << 20 {
            return None;
        }
        serde_json::from_slice(&bytes).ok()
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn context_window(&self) -> BoxFuture<'_, Option<super::ContextWindow>> {
        Box::pin(async move {
            match &self.context {
                Some(stated) => Some(stated.clone()),
                None => self.discover_context().await,
            }
        })
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(self.call(request, options.stream, options.slots))
    }

    fn price(&self) -> Option<Price> {
        self.price
    }

    fn price_assumed(&self) -> bool {
        self.price_assumed
    }

    fn describe(&self) -> String {
        format!("{} ({})", self.name, super::http::redact_url(&self.base_url))
    }

    fn cache_scope(&self) -> String {
        format!("{} {} seed={:?}", self.base_url, self.model, self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let provider = OpenAiProvider::new(&r).unwrap();
        for (t, wire) in [(0.7_f32, "0.7"), (0.1, "0.1"), (1.0, "1.0"), (0.0, "0.0")] {
            let request = LlmRequest::from_prompt(
                crate::protocol::Prompt {
                    purpose: crate::protocol::Purpose::Cot,
                    messages: vec![crate::protocol::Message::user("q")],
                    context: Value::Null,
                    stop: vec![],
                    max_tokens: None,
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
        // No text in any choice (null, empty, blank) and no tool call: a fault of the reply.
        for content in ["null", "\"\"", "\" \\n \""] {
            let reply = format!(r#"{{"choices":[{{"message":{{"content":{content}}},"finish_reason":"stop"}}]}}"#);
            let e = parse_chat(&reply).unwrap_err();
            assert_eq!(e.kind, CallErrorKind::Empty, "{content}: {e}");
            assert!(e.message.contains("no text") && e.message.contains("\"stop\""), "{e}");
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
    fn missing_usage_is_estimated_and_marked() {
        let request = LlmRequest {
            purpose: crate::protocol::Purpose::Value,
            messages: vec![crate::protocol::Message::user("12345678")],
            n: 2,
            temperature: 0.7,
            max_tokens: None,
            stop: vec![],
            context: Value::Null,
            nonce: 0,
            tools: vec![],
        };
        let part = |text: &str, usage| Part { completions: vec![Completion::text(text, None)], usage, model: None };
        let r = assemble(&request, vec![part("abcd", Some((10, 1))), part("abcdefgh", None)], 2, "m");
        assert_eq!(r.completions.len(), 2);
        assert!(r.usage.estimated);
        assert_eq!(r.usage.prompt_tokens, 10 + estimate_prompt_tokens(&request));
        assert_eq!(r.usage.completion_tokens, 1 + 2);
        assert_eq!(r.model, "m");
    }
}
