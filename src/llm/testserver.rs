//! A local OpenAI-compatible server that answers `/v1/chat/completions` after a set
//! latency, for `thoughtscope bench` to time whole runs over real HTTP.
//!
//! It answers with the simulated model's replies, so a search against it is a real
//! search: the client side files each request's purpose and context in a
//! [`Registry`] (the [`Registering`] provider does it as the call goes out), and the
//! server looks them up by the messages it receives. With `honour_n` off it returns
//! one choice whatever `n` asks, like the llama.cpp server.
//!
//! Samples differ the way a real server's do: a request with a `seed` gets the draws
//! from `seed` on (so `n` choices of seed `s` are the same as one choice each of seeds
//! `s`, `s+1`, ... that the client sends where `n` is ignored), and a request without
//! one gets the next draws of its messages (a count per prompt), never the same again.
//! It can answer a share of proposals with empty content ([`ServerOptions::empty_proposals`]).
//!
//! HTTP/1.1 with keep-alive, one request at a time per connection (as reqwest sends
//! them), on 127.0.0.1 with a port of its own; its own thread and runtime; stops when
//! dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::sim::SimProvider;
use super::{BoxFuture, CallOptions, Provider};
use crate::protocol::{CallError, LlmRequest, LlmResponse};

/// Requests as the client sent them, by their messages' text.
#[derive(Clone, Default)]
pub struct Registry(Arc<Mutex<HashMap<String, LlmRequest>>>);

/// The key of a request: its messages' text (what the server sees of it).
fn key_of<'a>(contents: impl Iterator<Item = &'a str>) -> String {
    contents.collect::<Vec<_>>().join("\u{1}")
}

impl Registry {
    fn file(&self, request: &LlmRequest) {
        let key = key_of(request.messages.iter().map(|m| m.content.as_str()));
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(key, request.clone());
    }

    /// The request filed under the body's messages, and its key.
    fn find(&self, body: &Value) -> Option<(LlmRequest, String)> {
        let messages = body.get("messages")?.as_array()?;
        let key = key_of(messages.iter().map(|m| m.get("content").and_then(Value::as_str).unwrap_or("")));
        let request = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned()?;
        Some((request, key))
    }
}

/// A provider that files each request in a [`Registry`] before `inner` sends it.
pub struct Registering {
    pub inner: Arc<dyn Provider>,
    pub registry: Registry,
}

impl Provider for Registering {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        self.registry.file(request);
        self.inner.complete(request, options)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn cache_scope(&self) -> String {
        self.inner.cache_scope()
    }

    fn price(&self) -> Option<super::config::Price> {
        self.inner.price()
    }

    fn price_assumed(&self) -> bool {
        self.inner.price_assumed()
    }
}

/// How the server answers.
#[derive(Debug, Clone, Copy)]
pub struct ServerOptions {
    pub latency: Duration,
    /// Return `n` choices (false: one, whatever `n` asks).
    pub honour_n: bool,
    /// Answer 1 in this many proposal requests (`Purpose::Propose`) with empty content and
    /// `finish_reason: "stop"`, as a server does that filtered the answer or whose model
    /// had nothing to say (0: none). Which ones is a hash of the messages, so a request
    /// gets the same answer whenever it is asked, in any order.
    pub empty_proposals: u32,
}

impl ServerOptions {
    /// A server answering after `latency`, honouring `n` or not, every reply with text.
    pub fn new(latency: Duration, honour_n: bool) -> ServerOptions {
        ServerOptions { latency, honour_n, empty_proposals: 0 }
    }
}

/// Whether the request filed under `key` is one the server answers empty.
fn answered_empty(options: &ServerOptions, purpose: crate::protocol::Purpose, key: &str) -> bool {
    // FNV-1a: stable across runs and platforms, unlike the standard library's hasher.
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    options.empty_proposals > 0
        && purpose == crate::protocol::Purpose::Propose
        && hash % u64::from(options.empty_proposals) == 0
}

pub struct LatencyServer {
    /// `http://127.0.0.1:PORT/v1`
    pub url: String,
    requests: Arc<AtomicU64>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Shared {
    options: ServerOptions,
    registry: Registry,
    sim: SimProvider,
    requests: Arc<AtomicU64>,
    /// Draws handed out so far per prompt, for requests without a seed.
    drawn: Mutex<HashMap<String, u64>>,
}

impl LatencyServer {
    /// Start answering on a free port of 127.0.0.1 from `registry` with `sim`'s answers.
    pub fn start(options: ServerOptions, registry: Registry, sim: SimProvider) -> std::io::Result<LatencyServer> {
        let requests = Arc::new(AtomicU64::new(0));
        let drawn = Mutex::new(HashMap::new());
        let shared = Arc::new(Shared { options, registry, sim, requests: Arc::clone(&requests), drawn });
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let port = std_listener.local_addr()?.port();
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let thread = std::thread::Builder::new().name("latency-server".into()).spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = TcpListener::from_std(std_listener) else { return };
                loop {
                    tokio::select! {
                        _ = &mut rx => break,
                        accepted = listener.accept() => {
                            let Ok((socket, _)) = accepted else { continue };
                            let _ = socket.set_nodelay(true);
                            tokio::spawn(serve(socket, Arc::clone(&shared)));
                        }
                    }
                }
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        })?;
        Ok(LatencyServer {
            url: format!("http://127.0.0.1:{port}/v1"),
            requests,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// Model requests (`/chat/completions`) answered so far.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for LatencyServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One connection: requests one after another until the client closes it.
async fn serve(mut socket: TcpStream, shared: Arc<Shared>) {
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    loop {
        let Some((path, body)) = read_request(&mut socket, &mut buf).await else { return };
        tokio::time::sleep(shared.options.latency).await;
        let (status, reply) = answer(&shared, &path, &body);
        // Model requests only: a client asking the server's context window is no model call.
        if path.ends_with("/chat/completions") {
            shared.requests.fetch_add(1, Ordering::SeqCst);
        }
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: keep-alive\r\n\r\n",
            reply.len()
        );
        let mut out = head.into_bytes();
        out.extend_from_slice(reply.as_bytes());
        if socket.write_all(&out).await.is_err() {
            return;
        }
    }
}

/// The next request on the connection (path and body), leaving any bytes after it in `buf`.
async fn read_request(socket: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    let mut chunk = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > 1 << 20 {
            return None;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let len: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(n, _)| n.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[head_end..head_end + len].to_vec();
    buf.drain(..head_end + len);
    Some((path, body))
}

fn error(status: &str, message: &str) -> (String, String) {
    (status.to_string(), json!({"error": {"message": message}}).to_string())
}

/// The reply to one request: the simulated model's answer to what the client filed.
fn answer(shared: &Shared, path: &str, body: &[u8]) -> (String, String) {
    if !path.ends_with("/chat/completions") {
        return error("404 Not Found", &format!("no route {path}: this server answers /v1/chat/completions"));
    }
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return error("400 Bad Request", "the request body is not JSON");
    };
    let Some((mut request, key)) = shared.registry.find(&body) else {
        return error("400 Bad Request", "no request with these messages was filed with the server");
    };
    let empty = answered_empty(&shared.options, request.purpose, &key);
    let asked = body.get("n").and_then(Value::as_u64).unwrap_or(1).max(1) as u32;
    request.n = if shared.options.honour_n { asked } else { 1 };
    let first = match body.get("seed").and_then(Value::as_u64) {
        Some(seed) => seed,
        None => {
            let mut drawn = shared.drawn.lock().unwrap_or_else(|e| e.into_inner());
            let next = drawn.entry(key).or_insert(0);
            let first = *next;
            *next += u64::from(request.n);
            first
        }
    };
    let reply = match shared.sim.answer_from(&request, first) {
        Ok(reply) => reply,
        Err(e) => return error("500 Internal Server Error", &e.message),
    };
    let choices: Vec<Value> = reply
        .completions
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let content = if empty { "" } else { c.text.as_str() };
            json!({"index": i, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"})
        })
        .collect();
    let completion_tokens = if empty { 0 } else { reply.usage.completion_tokens };
    let model = body.get("model").cloned().unwrap_or(Value::Null);
    let usage = json!({
        "prompt_tokens": reply.usage.prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": reply.usage.prompt_tokens + completion_tokens,
    });
    let out = json!({"id": "bench", "object": "chat.completion", "model": model, "choices": choices, "usage": usage});
    ("200 OK".to_string(), out.to_string())
}
