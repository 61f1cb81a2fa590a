//! What the HTTP providers share: one client with connect and overall timeouts,
//! retries with exponential backoff and jitter (honouring `Retry-After`), an optional
//! requests-per-minute limit, error messages that quote the server (and never the
//! key), and a server-sent-events parser for streamed replies.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use reqwest::header::HeaderMap;
use reqwest::StatusCode;

use super::secret::Secret;
use crate::engine::rng::SplitMix64;
use crate::protocol::{CallError, CallErrorKind};

#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    pub connect_timeout: Duration,
    /// Overall limit on one request, reply body included.
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub retries: u32,
    /// First backoff; doubled each retry up to `backoff_max`, with jitter.
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// A `Retry-After` longer than this fails the call instead of waiting.
    pub max_retry_after: Duration,
    pub rpm: Option<u32>,
    /// Do not use a proxy (servers on this machine).
    pub no_proxy: bool,
    /// A reply body larger than this fails the call (a runaway or hostile server
    /// cannot make the program hold it all in memory).
    pub max_response_bytes: u64,
}

/// What a cut stream's failure adds: the usual cause, and its fixes.
pub const STREAM_CUT_HINT: &str = " (a server that cancels a running stream when another request arrives cuts \
     streams like this: llama-cpp-python's server does unless started with --interrupt_requests False; or run \
     with --concurrency 1)";

/// The default cap on one reply body: far above any chat completion.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;
/// How much of an error body is read: enough for the server's message.
const MAX_ERROR_BODY_BYTES: u64 = 64 * 1024;

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(300),
            retries: 4,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            rpm: None,
            no_proxy: false,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }
}

/// The outcome of one attempt.
pub enum Attempt<T> {
    Done(T),
    /// Worth trying again, after the server's `Retry-After` if it gave one.
    Retry {
        error: CallError,
        after: Option<Duration>,
    },
    Fail(CallError),
}

/// Spaces requests so no more than `rpm` start in any minute (on average).
struct RateLimiter {
    interval: Duration,
    next: tokio::sync::Mutex<Option<tokio::time::Instant>>,
}

impl RateLimiter {
    async fn wait(&self) {
        let mut next = self.next.lock().await;
        let now = tokio::time::Instant::now();
        let at = next.map_or(now, |n| n.max(now));
        *next = Some(at + self.interval);
        drop(next);
        tokio::time::sleep_until(at).await;
    }
}

pub struct HttpCore {
    pub client: reqwest::Client,
    pub options: HttpOptions,
    pub key: Option<Secret>,
    /// Where the key came from, for authentication errors.
    pub key_source: Option<String>,
    limiter: Option<RateLimiter>,
    jitter: Mutex<SplitMix64>,
    /// Attempts repeated after a retryable failure, over this provider's life.
    pub retries_made: AtomicU64,
    /// HTTP requests sent (every attempt, every fallback sample).
    pub requests_sent: AtomicU64,
}

impl std::fmt::Debug for HttpCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCore").field("options", &self.options).field("key", &self.key).finish_non_exhaustive()
    }
}

impl HttpCore {
    pub fn new(options: HttpOptions, key: Option<Secret>, key_source: Option<String>) -> Result<HttpCore, CallError> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .timeout(options.timeout)
            .user_agent(concat!("thoughtscope/", env!("CARGO_PKG_VERSION")));
        if options.no_proxy {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| CallError { kind: CallErrorKind::Config, message: e.to_string() })?;
        let limiter = options.rpm.map(|rpm| RateLimiter {
            interval: Duration::from_secs_f64(60.0 / rpm.max(1) as f64),
            next: tokio::sync::Mutex::new(None),
        });
        let seed = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(7);
        Ok(HttpCore {
            client,
            options,
            key,
            key_source,
            limiter,
            jitter: Mutex::new(SplitMix64::new(seed)),
            retries_made: AtomicU64::new(0),
            requests_sent: AtomicU64::new(0),
        })
    }

    /// Remove the key from text a server sent back.
    pub fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(k) => k.scrub(text),
            None => text.to_string(),
        }
    }

    /// Backoff before retry `i` (0-based): base·2^i capped, times a jitter in [0.5, 1).
    fn backoff(&self, i: u32) -> Duration {
        let o = &self.options;
        let full = o.backoff_base.saturating_mul(1u32 << i.min(16)).min(o.backoff_max);
        let r = self.jitter.lock().map(|mut g| g.next_f64()).unwrap_or(0.5);
        full.mul_f64(0.5 + r / 2.0)
    }

    /// Run `attempt` until it is done, fails for good, or the retries are spent.
    pub async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<T, CallError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Attempt<T>>,
    {
        let mut i = 0u32;
        loop {
            if let Some(l) = &self.limiter {
                l.wait().await;
            }
            self.requests_sent.fetch_add(1, Ordering::Relaxed);
            match attempt().await {
                Attempt::Done(t) => return Ok(t),
                Attempt::Fail(e) => return Err(e),
                Attempt::Retry { mut error, after } => {
                    if i >= self.options.retries {
                        let n = i + 1;
                        error.message = format!("{} (gave up after {n} attempt{})", error.message, plural(n));
                        return Err(error);
                    }
                    if let Some(a) = after.filter(|a| *a > self.options.max_retry_after) {
                        error.message = format!(
                            "{} (the server asks to retry after {} s, more than the {} s this run waits)",
                            error.message,
                            a.as_secs(),
                            self.options.max_retry_after.as_secs()
                        );
                        return Err(error);
                    }
                    let wait = after.unwrap_or_else(|| self.backoff(i));
                    self.retries_made.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(wait).await;
                    i += 1;
                }
            }
        }
    }

    /// A reply that came back but could not be used: malformed, cut short, with no
    /// choices at all, or an error the server reported inside a 200 (a choice with no
    /// text is no fault: an empty answer). These are transient (a server under
    /// load, a proxy that dropped a connection), so they are retried like a 5xx.
    pub fn reply_fault<T>(&self, e: CallError) -> Attempt<T> {
        let error = CallError { message: self.scrub(&e.message), ..e };
        if is_transient_reply_fault(&error.kind) {
            Attempt::Retry { error, after: None }
        } else {
            Attempt::Fail(error)
        }
    }

    /// Read a streamed reply with `read`, passing deltas on to `deltas`. A stream that
    /// failed is a reply fault like any other (a cut stream is retried); the watcher is
    /// first told to forget the text it was shown of each sample ([`Streamed::Restart`]),
    /// since the retry streams the reply again from its start.
    ///
    /// [`Streamed::Restart`]: super::Streamed::Restart
    pub async fn watched_stream<T, F, Fut>(&self, deltas: &super::DeltaFn, read: F) -> Attempt<T>
    where
        F: FnOnce(super::DeltaFn) -> Fut,
        Fut: Future<Output = Result<T, CallError>>,
    {
        let shown = std::sync::Arc::new(Mutex::new(std::collections::BTreeSet::new()));
        let seen = std::sync::Arc::clone(&shown);
        let inner = std::sync::Arc::clone(deltas);
        let watched: super::DeltaFn = std::sync::Arc::new(move |i, piece| {
            if let Ok(mut s) = seen.lock() {
                s.insert(i);
            }
            inner(i, piece)
        });
        match read(watched).await {
            Ok(p) => Attempt::Done(p),
            Err(mut e) => {
                if e.kind == CallErrorKind::Truncated {
                    e.message.push_str(STREAM_CUT_HINT);
                }
                let attempt = self.reply_fault(e);
                if matches!(attempt, Attempt::Retry { .. }) {
                    let samples = shown.lock().map(|s| s.clone()).unwrap_or_default();
                    for i in samples {
                        deltas(i, super::Streamed::Restart);
                    }
                }
                attempt
            }
        }
    }

    /// The whole body of a successful reply as text, read as it arrives and refused
    /// once it passes `max_response_bytes`.
    pub async fn body_text<T>(&self, url: &str, resp: reqwest::Response) -> Result<String, Attempt<T>> {
        let cap = self.options.max_response_bytes;
        match read_capped(resp, cap).await {
            Ok((bytes, false)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Ok((_, true)) => Err(Attempt::Fail(self.too_large(url))),
            Err(e) => Err(self.transport_error(url, &e)),
        }
    }

    /// The body of an error reply, enough of it for the server's message.
    pub async fn error_body(&self, resp: reqwest::Response) -> String {
        match read_capped(resp, MAX_ERROR_BODY_BYTES).await {
            Ok((bytes, _)) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) => String::new(),
        }
    }

    /// The failure of a reply larger than the cap (not retried: it would come back as big).
    pub fn too_large(&self, url: &str) -> CallError {
        CallError {
            kind: CallErrorKind::TooLarge,
            message: format!(
                "the reply from {} is larger than the {} limit on a reply body; \
                 check --base-url points at a chat-completions server",
                redact_url(url),
                format_bytes(self.options.max_response_bytes)
            ),
        }
    }

    /// Classify a failure to send or to read a reply.
    pub fn transport_error<T>(&self, url: &str, e: &reqwest::Error) -> Attempt<T> {
        let (kind, what) = if e.is_timeout() {
            (CallErrorKind::Timeout, format!("no reply within {} s", self.options.timeout.as_secs_f64()))
        } else if e.is_connect() {
            (CallErrorKind::Connect, "could not connect".to_string())
        } else {
            (CallErrorKind::Connection, "the connection failed".to_string())
        };
        // The causes say what went wrong; reqwest's own line only repeats the URL.
        let detail = match std::error::Error::source(e) {
            Some(cause) => error_chain(cause),
            None => e.to_string(),
        };
        let shown = redact_url(url);
        let detail = self.scrub(&detail.replace(url, &shown));
        let error = CallError { kind, message: format!("{what} to {shown}: {detail}") };
        Attempt::Retry { error, after: None }
    }

    /// Turn a non-success status and its body into a retry or a clear failure.
    pub fn status_error<T>(&self, url: &str, status: StatusCode, headers: &HeaderMap, body: &str) -> Attempt<T> {
        let server = self.scrub(&server_message(body));
        let code = status.as_u16();
        let reason = status.canonical_reason().unwrap_or("");
        let mut message = format!("HTTP {code} {reason} from {}: {server}", redact_url(url));
        let kind = match code {
            // The same prompt will never fit: not retried, and the method stops that branch.
            400 | 413 | 422 | 500 if says_context_overflow(&server) => {
                message.push_str(" (the prompt does not fit the model's context window)");
                let error = CallError { kind: CallErrorKind::ContextOverflow, message };
                return Attempt::Fail(error);
            }
            400 => CallErrorKind::BadRequest,
            401 => CallErrorKind::Auth,
            403 => CallErrorKind::Forbidden,
            404 => CallErrorKind::NotFound,
            408 => CallErrorKind::Timeout,
            409 => CallErrorKind::Conflict,
            413 => CallErrorKind::TooLarge,
            429 => CallErrorKind::RateLimited,
            529 => CallErrorKind::Overloaded,
            500..=599 => CallErrorKind::Server,
            _ => CallErrorKind::Http,
        };
        match code {
            401 | 403 => {
                let hint = match (&self.key, &self.key_source) {
                    (None, Some(src)) => format!(" (no API key was sent: {src} is not set)"),
                    (None, None) => " (no API key was sent: this profile names none)".to_string(),
                    (Some(_), Some(src)) => format!(" (check the key from {src})"),
                    (Some(_), None) => String::new(),
                };
                message.push_str(&hint);
            }
            404 => message.push_str(" (check --model and --base-url)"),
            _ => {}
        }
        let error = CallError { kind, message };
        if matches!(code, 408 | 409 | 429) || (500..=599).contains(&code) {
            Attempt::Retry { error, after: retry_after(headers) }
        } else {
            Attempt::Fail(error)
        }
    }
}

/// Whether a server's words say the prompt does not fit the model's context window, in
/// the phrasings of OpenAI, vLLM, the llama.cpp servers (C++ and llama-cpp-python),
/// Anthropic, TGI and Gemini.
pub fn says_context_overflow(text: &str) -> bool {
    const PHRASES: [&str; 9] = [
        // OpenAI's error code (llama-cpp-python sends it too).
        "context_length_exceeded",
        // OpenAI, vLLM, llama-cpp-python, Mistral, Ollama: "This model's maximum context length is 2048 tokens".
        "maximum context length",
        // llama.cpp's llama-server: type `exceed_context_size_error`.
        "exceed_context_size",
        // llama.cpp's llama-server: "the request exceeds the available context size".
        "exceeds the available context size",
        // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
        "prompt is too long",
        // Anthropic: "input length and `max_tokens` exceed context limit".
        "exceed context limit",
        // TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096".
        "tokens + `max_new_tokens` must be <=",
        // Gemini: "exceeds the maximum number of tokens allowed".
        "maximum number of tokens allowed",
        "context length exceeded",
    ];
    let t = text.to_lowercase();
    // llama-cpp-python: "Requested tokens (2100) exceed context window of 2048".
    let exceeds_window = t.contains("exceed") && t.contains("context window");
    exceeds_window || PHRASES.iter().any(|p| t.contains(p))
}

/// The kind of an error a server reported in a reply it sent as a success (inside a 200,
/// or mid-stream): a context overflow when it says so, else `otherwise`.
pub fn reported_error_kind(message: &str, otherwise: CallErrorKind) -> CallErrorKind {
    if says_context_overflow(message) {
        CallErrorKind::ContextOverflow
    } else {
        otherwise
    }
}

/// Reply faults worth another attempt (see [`HttpCore::reply_fault`]).
pub fn is_transient_reply_fault(kind: &CallErrorKind) -> bool {
    matches!(
        kind,
        CallErrorKind::Malformed
            | CallErrorKind::Truncated
            | CallErrorKind::Empty
            | CallErrorKind::Server
            | CallErrorKind::Overloaded
    )
}

/// Read a body up to `cap` bytes: the bytes, and whether there was more (then reading
/// stopped there, so a huge body never sits in memory).
async fn read_capped(resp: reqwest::Response, cap: u64) -> Result<(Vec<u8>, bool), reqwest::Error> {
    if resp.content_length().is_some_and(|n| n > cap) {
        return Ok((Vec::new(), true));
    }
    let mut body = resp.bytes_stream();
    let mut out = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        if out.len() as u64 + chunk.len() as u64 > cap {
            return Ok((out, true));
        }
        out.extend_from_slice(&chunk);
    }
    Ok((out, false))
}

/// A byte count for people: `16 MB`, `512 KB`, `100 bytes`.
pub fn format_bytes(n: u64) -> String {
    const MB: u64 = 1024 * 1024;
    if n >= MB && n % MB == 0 {
        format!("{} MB", n / MB)
    } else if n >= 1024 && n % 1024 == 0 {
        format!("{} KB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

/// A URL fit to show: without user name, password or query (which can hold keys).
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            if !u.username().is_empty() || u.password().is_some() {
                let _ = u.set_username("");
                let _ = u.set_password(None);
            }
            if u.query().is_some() {
                u.set_query(None);
            }
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// An error with its causes, e.g. "error sending request: connection refused".
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// The server's own words from an error body: `error.message` (OpenAI, Anthropic),
/// `error` as a string, `detail` (FastAPI), `message`, else the text itself, shortened.
pub fn server_message(body: &str) -> String {
    let text = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(v) => {
            let pick = |v: &serde_json::Value| -> Option<String> {
                match v {
                    serde_json::Value::String(s) => Some(s.clone()),
                    serde_json::Value::Null => None,
                    other => Some(other.to_string()),
                }
            };
            let error_type = v.pointer("/error/type").and_then(|t| t.as_str());
            let msg = v
                .pointer("/error/message")
                .and_then(pick)
                .or_else(|| v.get("error").filter(|e| e.is_string()).and_then(pick))
                .or_else(|| v.get("detail").and_then(pick))
                .or_else(|| v.get("message").and_then(pick));
            match (msg, error_type) {
                (Some(m), Some(t)) => format!("{m} ({t})"),
                (Some(m), None) => m,
                (None, _) => body.trim().to_string(),
            }
        }
        Err(_) => body.trim().to_string(),
    };
    if text.is_empty() {
        return "(empty body)".into();
    }
    shorten(&text, 500)
}

pub fn shorten(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(max_chars).collect();
    format!("{cut}…")
}

/// The longest wait a `Retry-After` header is read as: a server asking for more (or for
/// 1e20 s, which no `Duration` holds) is taken to ask for this, and the retry loop
/// then gives up on it, since it exceeds [`HttpOptions::max_retry_after`].
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(24 * 3600);

/// A server's number of seconds as a wait: NaN and negative values are ignored,
/// huge or infinite ones capped (a plain `Duration::from_secs_f64` would panic).
fn server_secs(s: f64) -> Option<Duration> {
    if s.is_nan() || s < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(s).map_or(RETRY_AFTER_CAP, |d| d.min(RETRY_AFTER_CAP)))
}

/// `Retry-After` (seconds or an HTTP date) or OpenAI's `retry-after-ms`, capped at
/// [`RETRY_AFTER_CAP`]; unreadable, NaN or negative values are ignored.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(|s| s.trim().to_string());
    if let Some(wait) =
        get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()).and_then(|ms| server_secs(ms / 1000.0))
    {
        return Some(wait);
    }
    let v = get("retry-after")?;
    if let Ok(s) = v.parse::<f64>() {
        return server_secs(s);
    }
    let at = httpdate::parse_http_date(&v).ok()?;
    Some(at.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO).min(RETRY_AFTER_CAP))
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// An incremental parser for `text/event-stream`: feed it bytes as they arrive.
#[derive(Debug, Default)]
pub struct SseParser {
    pending: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(pos) = self.pending.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = self.pending.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\n', '\r']);
            self.line(line, &mut out);
        }
        out
    }

    /// The event still open when the stream ended, if any.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.pending.is_empty() {
            let raw = std::mem::take(&mut self.pending);
            let line = String::from_utf8_lossy(&raw).trim_end_matches('\r').to_string();
            self.line(&line, &mut out);
        }
        self.line("", &mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                out.push(SseEvent { event: self.event.take(), data: self.data.join("\n") });
                self.data.clear();
            }
            self.event = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => self.data.push(value.to_string()),
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
    }
}

/// Cut `text` at the first stop sequence (for APIs that do not take every stop).
pub fn apply_stops(text: &str, stops: &[String]) -> Option<String> {
    let cut = stops.iter().filter(|s| !s.is_empty()).filter_map(|s| text.find(s.as_str())).min()?;
    Some(text[..cut].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn sse_events_survive_any_chunking() {
        let stream =
            "data: {\"a\":1}\r\n\r\n: keep-alive\n\nevent: message_delta\ndata: x\ndata: y\n\ndata: [DONE]\n\n";
        let whole = SseParser::default().push(stream.as_bytes());
        assert_eq!(
            whole,
            vec![
                SseEvent { event: None, data: "{\"a\":1}".into() },
                SseEvent { event: Some("message_delta".into()), data: "x\ny".into() },
                SseEvent { event: None, data: "[DONE]".into() },
            ]
        );
        for size in 1..8 {
            let mut p = SseParser::default();
            let mut got = Vec::new();
            for chunk in stream.as_bytes().chunks(size) {
                got.extend(p.push(chunk));
            }
            got.extend(p.finish());
            assert_eq!(got, whole, "chunks of {size}");
        }
        // Multi-byte characters split across chunks stay whole.
        let mut p = SseParser::default();
        let bytes = "data: é24\n\n".as_bytes();
        let mut got = p.push(&bytes[..7]);
        got.extend(p.push(&bytes[7..]));
        assert_eq!(got[0].data, "é24");
        // An event without its blank line is still delivered at the end.
        let mut p = SseParser::default();
        assert!(p.push(b"data: last").is_empty());
        assert_eq!(p.finish()[0].data, "last");
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_milliseconds() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after", HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&h), Some(Duration::ZERO), "a date in the past means now");
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
    }

    #[test]
    fn absurd_retry_after_values_are_capped_or_ignored_never_a_panic() {
        let header = |name: &'static str, value: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(name, HeaderValue::from_static(value));
            retry_after(&h)
        };
        for huge in ["1e20", "1e300", "inf", "18446744073709551616"] {
            assert_eq!(header("retry-after", huge), Some(RETRY_AFTER_CAP), "retry-after {huge}");
        }
        assert_eq!(header("retry-after-ms", "1e30"), Some(RETRY_AFTER_CAP));
        assert_eq!(header("retry-after-ms", "inf"), Some(RETRY_AFTER_CAP));
        for bad in ["NaN", "-1", "-inf", "nan"] {
            assert_eq!(header("retry-after", bad), None, "retry-after {bad}");
            assert_eq!(header("retry-after-ms", bad), None, "retry-after-ms {bad}");
        }
        // A bad milliseconds header does not hide a good seconds one.
        let mut h = HeaderMap::new();
        h.insert("retry-after-ms", HeaderValue::from_static("NaN"));
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        assert_eq!(header("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"), Some(RETRY_AFTER_CAP));
    }

    #[test]
    fn server_messages_are_quoted_from_the_usual_shapes() {
        let openai = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#;
        assert_eq!(server_message(openai), "Incorrect API key provided (invalid_request_error)");
        let anthropic = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(server_message(anthropic), "Overloaded (overloaded_error)");
        assert_eq!(server_message(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(server_message(r#"{"error":"model 'x' not found"}"#), "model 'x' not found");
        assert_eq!(server_message("<html>bad gateway</html>"), "<html>bad gateway</html>");
        assert_eq!(server_message(""), "(empty body)");
        assert_eq!(server_message(&"x".repeat(600)).chars().count(), 501);
    }

    #[test]
    fn status_errors_retry_the_right_codes_and_hide_the_key() {
        let key = Secret::new("sk-secret-1").unwrap();
        let core = HttpCore::new(HttpOptions::default(), Some(key), Some("OPENAI_API_KEY".into())).unwrap();
        let h = HeaderMap::new();
        let retried = |code: u16| {
            let status = StatusCode::from_u16(code).unwrap();
            matches!(core.status_error::<()>("u", status, &h, "{}"), Attempt::Retry { .. })
        };
        for code in [408, 409, 429, 500, 502, 503, 529] {
            assert!(retried(code), "{code} is retried");
        }
        for code in [400, 401, 403, 404, 422] {
            assert!(!retried(code), "{code} is not retried");
        }
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-secret-1"}}"#;
        let Attempt::Fail(e) = core.status_error::<()>("http://h/v1", StatusCode::UNAUTHORIZED, &h, body) else {
            panic!("401 fails")
        };
        assert_eq!(e.kind, CallErrorKind::Auth);
        assert!(e.message.contains("HTTP 401 Unauthorized from http://h/v1: Incorrect API key provided: ***"));
        assert!(e.message.contains("check the key from OPENAI_API_KEY") && !e.message.contains("sk-secret-1"));
    }

    #[test]
    fn context_overflows_are_recognised_in_the_usual_phrasings_and_not_retried() {
        let said = [
            // OpenAI
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            // vLLM
            r#"{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 2154 tokens (1898 in the messages, 256 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}"#,
            // llama.cpp's llama-server
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":2100,"n_ctx":2048}}"#,
            // llama-cpp-python (its formatter, and the raw exception of older versions)
            r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 2101 tokens (2101 in the messages, 0 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"detail":"Requested tokens (2101) exceed context window of 2048"}"#,
            // Anthropic
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease input length or `max_tokens` and try again"}}"#,
        ];
        let core = HttpCore::new(HttpOptions::default(), None, None).unwrap();
        for body in said {
            let Attempt::Fail(e) =
                core.status_error::<()>("http://h/v1", StatusCode::BAD_REQUEST, &HeaderMap::new(), body)
            else {
                panic!("not retried: {body}")
            };
            assert_eq!(e.kind, CallErrorKind::ContextOverflow, "{body}");
            assert!(e.message.contains("does not fit the model's context window"), "{e}");
        }
        // Other 400s stay bad requests; a rate limit on tokens per minute is no overflow.
        for body in [
            r#"{"error":{"message":"Invalid value for 'temperature'"}}"#,
            r#"{"error":{"message":"Rate limit reached for gpt-4 on tokens per min (TPM): Limit 10000"}}"#,
        ] {
            assert!(!says_context_overflow(body), "{body}");
        }
        let err = core.status_error::<()>("u", StatusCode::BAD_REQUEST, &HeaderMap::new(), r#"{"error":"bad"}"#);
        assert!(matches!(err, Attempt::Fail(CallError { kind: CallErrorKind::BadRequest, .. })));
        assert_eq!(
            reported_error_kind("prompt is too long: 9 tokens", CallErrorKind::Server),
            CallErrorKind::ContextOverflow
        );
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        let core = HttpCore::new(HttpOptions::default(), None, None).unwrap();
        for i in 0..10 {
            let full = Duration::from_millis(500).saturating_mul(1 << i).min(Duration::from_secs(30));
            let b = core.backoff(i);
            assert!(b >= full / 2 && b <= full, "retry {i}: {b:?}");
        }
    }

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(redact_url("https://u:pw@h.example/v1/chat?api-key=k"), "https://h.example/v1/chat");
        assert_eq!(
            redact_url("http://127.0.0.1:8080/v1/chat/completions"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
    }

    #[test]
    fn stops_cut_at_the_earliest() {
        let stops = vec!["\n".to_string(), "END".to_string()];
        assert_eq!(apply_stops("a END b\nc", &stops).as_deref(), Some("a "));
        assert_eq!(apply_stops("abc", &stops), None);
    }
}
