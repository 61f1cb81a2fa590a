//! The one HTTP provider every kind runs on: a request built by the kind, sent with
//! retries, read whole or streamed by the kind's reader, samples fetched one request
//! each where the API (or the server) gives one per request, usage summed (estimated
//! and marked where the server did not say), price and context window.
//!
//! Servers differ in what they honour. Many OpenAI-compatible ones ignore `n` (the
//! llama.cpp server returns one choice): when a reply has fewer choices than asked, the
//! missing samples are fetched one request each (with seeds `seed+1`, `seed+2`, ... so
//! they differ), and later calls go straight to one request per sample.

use std::sync::atomic::{AtomicU8, Ordering};

use futures::StreamExt;
use serde_json::Value;

use super::{Api, Call, Samples, Settings};
use crate::llm::config::{ModelPrice, Price, Resolved};
use crate::llm::fanout::{fan_out, Slots};
use crate::llm::http::{apply_stops, Attempt, HttpCore, SseParser};
use crate::llm::{BoxFuture, CallOptions, ContextWindow, DeltaFn, Provider};
use crate::protocol::{
    estimate_prompt_tokens, estimate_tokens, CallError, CallErrorKind, Completion, LlmRequest, LlmResponse,
    LostSamples, Usage,
};

const N_UNKNOWN: u8 = 0;
const N_HONOURED: u8 = 1;
const N_IGNORED: u8 = 2;

/// What one HTTP request brought back.
#[derive(Debug, Default)]
pub struct Part {
    pub completions: Vec<Completion>,
    /// (prompt, completion) tokens, if the server said.
    pub usage: Option<(u64, u64)>,
    /// Of the completion tokens, those spent thinking, if the server said.
    pub reasoning_tokens: Option<u64>,
    pub model: Option<String>,
}

impl Part {
    /// Whether no completion has text or a tool call (`"content": null`, `""`, only
    /// whitespace).
    pub fn is_blank(&self) -> bool {
        self.completions.iter().all(|c| c.text.trim().is_empty() && c.tool_calls.is_empty())
    }

    /// `self`, unless it is blank and stopped at its length: retrying that cannot help,
    /// the completion limit must be raised, so it fails the call saying so (never
    /// retried). A blank reply that stopped otherwise (`"stop"`, a content filter, no
    /// reason) is an answer, an empty one: the task's reader counts it as unreadable.
    pub fn judged(self) -> Result<Part, CallError> {
        let length = self.completions.iter().any(|c| c.finish_reason.as_deref() == Some("length"));
        if !length || !self.is_blank() {
            return Ok(self);
        }
        let thought: usize = self.completions.iter().map(|c| c.thinking_text().chars().count()).sum();
        let message = if thought > 0 {
            format!(
                "the model spent its whole completion limit thinking ({thought} characters of thinking, no answer): \
                 the task's limit on a reply covers thinking and answer together; lower --reasoning-effort, or \
                 use a model that thinks less"
            )
        } else {
            let hidden = match self.reasoning_tokens.filter(|&r| r > 0) {
                Some(r) => format!(" ({r} tokens of thinking the server did not show)"),
                None => String::new(),
            };
            format!(
                "the reply reached its completion limit (finish reason \"length\") before any text{hidden}: raise \
                 the completion limit (for a reasoning model it covers thinking and answer together: or lower \
                 --reasoning-effort)"
            )
        };
        Err(CallError { kind: CallErrorKind::AllThinking, message })
    }
}

/// A reply that could not be read.
pub fn malformed(message: String) -> CallError {
    CallError { kind: CallErrorKind::Malformed, message }
}

/// A reply that ended before it was whole.
pub fn truncated(message: String) -> CallError {
    CallError { kind: CallErrorKind::Truncated, message }
}

/// A tool call's arguments as sent in a JSON string (chat completions, Responses, a
/// streamed Anthropic `input_json_delta`). Arguments that are not valid JSON stay a
/// string, for the method to report as a bad call; an object (as some servers send) is
/// kept; nothing at all is an empty object.
pub fn tool_arguments(raw: Option<&Value>) -> Value {
    match raw {
        Some(Value::String(s)) if s.trim().is_empty() => serde_json::json!({}),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(Value::Null) | None => serde_json::json!({}),
        Some(other) => other.clone(),
    }
}

/// Reads one streamed reply, event by event (the `data` of each server-sent event).
pub trait StreamRead: Send {
    /// One event; text of sample `first_sample + choice` goes to `deltas` as it comes.
    fn event(&mut self, data: &str, first_sample: u32, deltas: Option<&DeltaFn>) -> Result<(), CallError>;
    /// Characters read so far, for messages about a stream cut short.
    fn chars(&self) -> usize;
    /// The reply, or why the stream did not make a whole one.
    fn finish(self: Box<Self>) -> Result<Part, CallError>;
}

/// Put the parts of a call together: completions in sample order, usage summed
/// (estimated for parts whose server did not say).
pub fn assemble(request: &LlmRequest, parts: Vec<Part>, want: usize, model: &str) -> LlmResponse {
    let mut usage = Usage::default();
    let mut completions = Vec::with_capacity(want);
    let mut served_by = None;
    for part in parts {
        let thought = || part.completions.iter().map(|c| estimate_tokens(&c.thinking_text())).sum::<u64>();
        match part.usage {
            Some((p, c)) => {
                usage.prompt_tokens += p;
                usage.completion_tokens += c;
                // A server that counts thinking in its output without saying how much
                // (Anthropic): estimated from the thinking's text, never more than the output.
                usage.reasoning_tokens += part.reasoning_tokens.unwrap_or_else(|| thought().min(c));
            }
            None => {
                usage.estimated = true;
                usage.prompt_tokens += estimate_prompt_tokens(request);
                usage.completion_tokens += part.completions.iter().map(|c| estimate_tokens(&c.text)).sum::<u64>();
                usage.completion_tokens += thought();
                usage.reasoning_tokens += thought();
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
        lost: None,
    }
}

/// Which replies of a run came without token usage.
#[derive(Default)]
struct UsageMissing {
    streamed: std::sync::atomic::AtomicBool,
    plain: std::sync::atomic::AtomicBool,
    /// Some of them answered a request that offered tools (whose definitions the
    /// estimate counts).
    with_tools: std::sync::atomic::AtomicBool,
}

/// A model behind an HTTP API of any kind.
pub struct HttpProvider {
    api: &'static dyn Api,
    name: String,
    model: String,
    base_url: String,
    http: HttpCore,
    price: Option<Price>,
    price_assumed: bool,
    n_mode: AtomicU8,
    /// The server was found to ignore `n` in this run (it was not known before).
    n_found_ignored: std::sync::atomic::AtomicBool,
    /// Replies came without usage in this run.
    usage_missing: UsageMissing,
    settings: Settings,
    /// The context window the command line or the profile states.
    context: Option<ContextWindow>,
    /// Ask a reply with no text once more, at once (the profile's `retry_empty`).
    retry_empty: bool,
}

impl HttpProvider {
    /// The provider a resolved profile describes, speaking its kind's API.
    pub fn new(r: &Resolved) -> Result<HttpProvider, CallError> {
        let api = r.kind.api();
        let n_mode = match (api.samples(), r.n_supported) {
            (Samples::OnePerRequest, _) | (Samples::N, Some(false)) => N_IGNORED,
            (Samples::N, Some(true)) => N_HONOURED,
            (Samples::N, None) => N_UNKNOWN,
        };
        Ok(HttpProvider {
            api,
            name: r.name.clone(),
            model: r.model.clone(),
            base_url: r.base_url.clone(),
            http: HttpCore::new(r.http.clone(), r.key.clone(), r.key_source.clone())?,
            price: None,
            price_assumed: false,
            n_mode: AtomicU8::new(n_mode),
            n_found_ignored: std::sync::atomic::AtomicBool::new(false),
            usage_missing: Default::default(),
            settings: Settings {
                seed: r.seed,
                max_tokens_param: r.max_tokens_param.clone(),
                stream_usage: r.stream_usage,
                reasoning: r.reasoning.clone(),
            },
            context: r.context.clone(),
            retry_empty: r.retry_empty,
        })
    }

    /// With the model's price, for costs and budgets.
    pub fn priced(mut self, price: Option<ModelPrice>) -> Self {
        self.price = price.map(|p| p.price);
        self.price_assumed = price.is_some_and(|p| p.assumed);
        self
    }

    /// The shared HTTP machinery (retry and request counters, options).
    pub fn http(&self) -> &HttpCore {
        &self.http
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The kind's word (`openai`, `anthropic`, `responses`).
    pub fn kind(&self) -> &'static str {
        self.api.kind()
    }

    /// Whether the server was found to honour `n` (`None` before the first call with
    /// n > 1; always `Some(false)` for an API without `n`).
    pub fn honours_n(&self) -> Option<bool> {
        match self.n_mode.load(Ordering::Relaxed) {
            N_HONOURED => Some(true),
            N_IGNORED => Some(false),
            _ => None,
        }
    }

    /// The request body of a call for `n` samples, the first being sample `sample`.
    pub fn body(&self, request: &LlmRequest, n: u32, sample: u32, stream: bool) -> Value {
        self.api.body(&Call { request, model: &self.model, n, sample, stream, settings: &self.settings })
    }

    /// A small JSON document the server serves at `url`, if it does (5 s at most, no retries).
    pub async fn get_json(&self, url: &str) -> Option<Value> {
        let rb = self.http.client.get(url).timeout(std::time::Duration::from_secs(5));
        let resp = self.api.authorize(rb, self.http.key.as_ref()).send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        let bytes = resp.bytes().await.ok()?;
        if bytes.len() > 4 << 20 {
            return None;
        }
        serde_json::from_slice(&bytes).ok()
    }

    /// One HTTP request (with retries) for `n` samples, the first being sample `sample`.
    /// A reply with no text and no tool call is an answer (an empty one, for the task's
    /// reader to count as unreadable), never a fault retried with back-off: where the
    /// profile says `retry_empty`, it is asked once more at once, and the second reply
    /// stands whatever it is.
    async fn one(
        &self,
        request: &LlmRequest,
        n: u32,
        sample: u32,
        deltas: Option<&DeltaFn>,
    ) -> Result<Part, CallError> {
        let part = self.send(request, n, sample, deltas).await?;
        if !(self.retry_empty && part.is_blank()) {
            return Ok(part);
        }
        self.http.retries_made.fetch_add(1, Ordering::Relaxed);
        if let Some(d) = deltas {
            // Whatever blank text was shown of each sample is asked again from its start.
            for i in sample..sample + n {
                d(i, crate::llm::Streamed::Restart);
            }
        }
        self.send(request, n, sample, deltas).await
    }

    /// One HTTP request with its retries on faults (see [`HttpCore::with_retries`]).
    async fn send(
        &self,
        request: &LlmRequest,
        n: u32,
        sample: u32,
        deltas: Option<&DeltaFn>,
    ) -> Result<Part, CallError> {
        let body = self.body(request, n, sample, deltas.is_some());
        let url = self.api.url(&self.base_url);
        let (body, url, http, api) = (&body, url.as_str(), &self.http, self.api);
        let tags = &self.settings.reasoning.think_tags;
        // Thinking tags come off before anything reads the text, and before a reply with
        // nothing after its thinking is judged.
        let split = move |mut part: Part| {
            for c in &mut part.completions {
                c.split_thinking_tags(tags);
            }
            part
        };
        let mut part = http
            .with_retries(|| async move {
                let rb = api.authorize(http.client.post(url), http.key.as_ref()).json(body);
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
                        let read = |watched| async move {
                            read_stream(api.stream(), resp, sample, &watched, http, url, split).await
                        };
                        http.watched_stream(d, read).await
                    }
                    None => match http.body_text(url, resp).await {
                        Err(attempt) => attempt,
                        Ok(text) => match api.parse(&text).map(split).and_then(Part::judged) {
                            Ok(p) => Attempt::Done(p),
                            Err(e) => http.reply_fault(e),
                        },
                    },
                }
            })
            .await?;
        // Stops the API could not be sent: cut at them here.
        let unsent: Vec<String> = api.stops_cut_here(&request.stop).into_iter().cloned().collect();
        if !unsent.is_empty() {
            for c in &mut part.completions {
                if let Some(cut) = apply_stops(&c.text, &unsent) {
                    c.text = cut.into();
                    if c.tool_calls.is_empty() {
                        c.finish_reason = Some("stop".into());
                    }
                }
            }
        }
        Ok(part)
    }

    /// `n` samples in one request where the server honours `n`; where it does not (or the
    /// API has none), one request per missing sample, side by side as far as `slots` allow.
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
        let mut parts = Vec::new();
        if !(want > 1 && self.n_mode.load(Ordering::Relaxed) == N_IGNORED) {
            let first = self.one(request, want, 0, deltas).await?;
            let got = (first.completions.len() as u32).min(want);
            if want > 1 && self.n_mode.load(Ordering::Relaxed) == N_UNKNOWN {
                let mode = if got >= want { N_HONOURED } else { N_IGNORED };
                self.n_mode.store(mode, Ordering::Relaxed);
                self.n_found_ignored.store(mode == N_IGNORED, Ordering::Relaxed);
            }
            parts.push(first);
        }
        let got: usize = parts.iter().map(|p| p.completions.len()).sum();
        if (got as u32) < want {
            match one_each(got as u32).await {
                Ok(more) => parts.extend(more),
                // Nothing came: the call failed.
                Err(partial) if got == 0 && partial.got.is_empty() => return Err(partial.error),
                // Some samples came: they are kept with their tokens, and the rest said lost.
                Err(partial) => {
                    parts.extend(partial.got);
                    let mut response = assemble(request, parts, want as usize, &self.model);
                    let samples = want - response.completions.len() as u32;
                    response.lost = Some(LostSamples { samples, error: partial.error });
                    return Ok(response);
                }
            }
        }
        Ok(assemble(request, parts, want as usize, &self.model))
    }
}

/// Read a `text/event-stream` reply to the end with `state`, reporting text as it arrives.
async fn read_stream(
    mut state: Box<dyn StreamRead>,
    resp: reqwest::Response,
    first_sample: u32,
    deltas: &DeltaFn,
    http: &HttpCore,
    url: &str,
    split: impl FnOnce(Part) -> Part,
) -> Result<Part, CallError> {
    let mut parser = SseParser::default();
    let mut body = resp.bytes_stream();
    let mut read = 0u64;
    while let Some(chunk) = body.next().await {
        let bytes = chunk.map_err(|e| {
            let what = if e.is_timeout() { "timed out" } else { "was cut" };
            truncated(format!("the stream {what} after {} characters: {e}", state.chars()))
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
    state.finish().map(split).and_then(Part::judged)
}

impl Provider for HttpProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(async move {
            let streamed = options.stream.is_some();
            let reply = self.call(request, options.stream, options.slots).await?;
            if reply.usage.estimated {
                let missing = &self.usage_missing;
                let kind = if streamed { &missing.streamed } else { &missing.plain };
                kind.store(true, Ordering::Relaxed);
                if !request.tools.is_empty() {
                    missing.with_tools.store(true, Ordering::Relaxed);
                }
            }
            Ok(reply)
        })
    }

    fn context_window(&self) -> BoxFuture<'_, Option<ContextWindow>> {
        Box::pin(async move {
            match &self.context {
                Some(stated) => Some(stated.clone()),
                None => self.api.context_window(self).await,
            }
        })
    }

    fn price(&self) -> Option<Price> {
        self.price
    }

    fn price_assumed(&self) -> bool {
        self.price_assumed
    }

    fn temperature_range(&self) -> Option<(f32, f32)> {
        self.api.temperature_range()
    }

    fn describe(&self) -> String {
        format!("{} ({})", self.name, crate::llm::http::redact_url(&self.base_url))
    }

    fn notes(&self) -> Vec<String> {
        self.api.notes(&self.model, &self.settings)
    }

    fn sampling_fields(&self) -> &'static [&'static str] {
        self.api.sampling_fields()
    }

    fn found(&self) -> Vec<String> {
        let mut found = Vec::new();
        if self.n_found_ignored.load(Ordering::Relaxed) {
            found.push(format!(
                "{} ignored `n` (it sent fewer samples than asked): the rest were fetched one request each, \
                 each billed its prompt; `n = false` in the provider's profile skips the first try",
                self.describe()
            ));
        }
        let missing = |flag: &std::sync::atomic::AtomicBool| flag.load(Ordering::Relaxed);
        let m = &self.usage_missing;
        let how = match (missing(&m.streamed), missing(&m.plain)) {
            (_, true) => Some("its replies"),
            (true, false) => Some("its streamed replies (stream_options.include_usage was not honoured)"),
            (false, false) => None,
        };
        if let Some(how) = how {
            let tools = match missing(&m.with_tools) {
                true => {
                    "; the prompt estimates count the tool definitions, which a server that drops `tools` never saw"
                }
                false => "",
            };
            found.push(format!(
                "{} reported no token usage in {how}: those calls' tokens are estimated from the text (about 4 \
                 characters a token; `~` in the explorer, estimated_tokens in the summary){tools}",
                self.describe()
            ));
        }
        found
    }

    fn cache_scope(&self) -> String {
        self.api.cache_scope(&self.base_url, &self.model, &self.settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Message, Purpose};

    #[test]
    fn missing_usage_is_estimated_and_marked() {
        let request = LlmRequest {
            purpose: Purpose::Value,
            messages: vec![Message::user("12345678")],
            n: 2,
            temperature: 0.7,
            max_tokens: None,
            stop: vec![],
            context: Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        };
        let part =
            |text: &str, usage| Part { completions: vec![Completion::text(text, None)], usage, ..Part::default() };
        let r = assemble(&request, vec![part("abcd", Some((10, 1))), part("abcdefgh", None)], 2, "m");
        assert_eq!(r.completions.len(), 2);
        assert!(r.usage.estimated);
        assert_eq!(r.usage.prompt_tokens, 10 + estimate_prompt_tokens(&request));
        assert_eq!(r.usage.completion_tokens, 1 + 2);
        assert_eq!(r.model, "m");
    }

    #[test]
    fn a_reply_with_no_text_is_an_answer_unless_it_stopped_at_its_length() {
        let part = |texts: &[&str], finish: Option<&str>| Part {
            completions: texts.iter().map(|t| Completion::text(*t, finish.map(Into::into))).collect(),
            ..Part::default()
        };
        for finish in [Some("stop"), Some("content_filter"), None] {
            for text in ["", " \n "] {
                let blank = part(&[text], finish);
                assert!(blank.is_blank());
                let read = blank.judged().expect("an empty reply is an answer");
                assert_eq!(read.completions[0].text, text, "handed on as it came ({finish:?})");
            }
        }
        assert!(!part(&["", "b"], Some("stop")).is_blank(), "one completion with text is not blank");
        // Stopped at its length with no text: said, never handed on as an answer.
        let e = part(&[""], Some("length")).judged().unwrap_err();
        assert_eq!(e.kind, CallErrorKind::AllThinking, "{e}");
        assert!(e.message.contains("raise the completion limit") && !e.message.contains("did not show"), "{e}");
        let hidden = Part { reasoning_tokens: Some(64), ..part(&[""], Some("length")) };
        let e = hidden.judged().unwrap_err();
        assert!(e.message.contains("64 tokens of thinking the server did not show"), "{e}");
        // Text cut at its length is a reply like any other.
        assert!(part(&["4 + 4"], Some("length")).judged().is_ok());
    }
}
