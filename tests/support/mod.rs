//! A fault-injecting HTTP server on 127.0.0.1 for provider tests. Each connection
//! carries one request; a handler decides the reply from the request's number and
//! content: JSON with any status and headers, a server-sent-event stream (whole or
//! cut mid-way), raw bytes, or no reply at all (hang, bounded). It runs on its own
//! thread and runtime, so both async library tests and binary tests can use it, and
//! stops when dropped.

#![allow(dead_code)]

pub mod pty;
pub mod scripted;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: serde_json::Value,
    pub raw_body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The text of all messages, for handlers that answer by prompt.
    pub fn prompt(&self) -> String {
        self.body["messages"]
            .as_array()
            .map(|m| m.iter().filter_map(|x| x["content"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }
}

pub enum Reply {
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `data:` payloads of an event stream; `cut` drops the connection after them
    /// without ending the chunked body.
    Sse {
        events: Vec<String>,
        cut: bool,
    },
    /// Read the request and never answer (the connection is dropped after 20 s).
    Hang,
    Raw(Vec<u8>),
}

impl Reply {
    pub fn json(status: u16, body: impl Into<String>) -> Reply {
        Reply::Json { status, headers: vec![], body: body.into() }
    }

    /// An OpenAI chat-completions reply with these choices and usage.
    pub fn chat(texts: &[&str], usage: Option<(u64, u64)>) -> Reply {
        let choices: Vec<serde_json::Value> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                serde_json::json!({"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"})
            })
            .collect();
        let mut body =
            serde_json::json!({"id": "x", "object": "chat.completion", "model": "fake-model", "choices": choices});
        if let Some((p, c)) = usage {
            body["usage"] = serde_json::json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
        }
        Reply::json(200, body.to_string())
    }

    /// An OpenAI stream of one choice split into `pieces`, ending with [DONE] unless cut.
    pub fn chat_stream(pieces: &[&str], cut: bool) -> Reply {
        let mut events: Vec<String> = pieces
            .iter()
            .map(|p| serde_json::json!({"choices": [{"index": 0, "delta": {"content": p}}]}).to_string())
            .collect();
        if !cut {
            events
                .push(serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string());
            events.push("[DONE]".into());
        }
        Reply::Sse { events, cut }
    }
}

type Handler = dyn Fn(usize, &Seen) -> Reply + Send + Sync;

pub struct FakeServer {
    /// `http://127.0.0.1:PORT/v1`
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    count: Arc<AtomicUsize>,
    /// What `GET …/props` and `GET …/models` answer (by path suffix); 404 for others.
    discovery: Arc<Mutex<Vec<(String, String)>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeServer {
    pub fn start(handler: impl Fn(usize, &Seen) -> Reply + Send + Sync + 'static) -> FakeServer {
        let handler: Arc<Handler> = Arc::new(handler);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let count = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let discovery: Arc<Mutex<Vec<(String, String)>>> = Arc::new(Mutex::new(Vec::new()));
        let (seen2, count2, discovery2) = (seen.clone(), count.clone(), discovery.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                port_tx.send(listener.local_addr().unwrap().port()).unwrap();
                let mut rx = rx;
                loop {
                    tokio::select! {
                        _ = &mut rx => break,
                        accepted = listener.accept() => {
                            let Ok((socket, _)) = accepted else { continue };
                            let (h, s, c, d) = (handler.clone(), seen2.clone(), count2.clone(), discovery2.clone());
                            tokio::spawn(async move { serve(socket, h, s, c, d).await });
                        }
                    }
                }
            });
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        let port = port_rx.recv_timeout(Duration::from_secs(10)).expect("the fake server starts");
        FakeServer {
            url: format!("http://127.0.0.1:{port}/v1"),
            seen,
            count,
            discovery,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// Answer `GET <path ending in suffix>` with `body` (a server saying its context window).
    pub fn serve_discovery(&self, suffix: &str, body: &str) {
        self.discovery.lock().unwrap().push((suffix.to_string(), body.to_string()));
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() > 1 << 20 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    while buf.len() < head_end + len {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let raw_body = String::from_utf8_lossy(&buf[head_end..head_end + len]).to_string();
    let body = serde_json::from_str(&raw_body).unwrap_or(serde_json::Value::Null);
    Some(Seen { method, path, headers, body, raw_body })
}

/// Whether a request asks what the server says of its context window (`GET /props`,
/// `GET /v1/models`), as the client does once before a ReAct run.
pub fn is_discovery(request: &Seen) -> bool {
    request.method == "GET" && (request.path.ends_with("/props") || request.path.ends_with("/models"))
}

async fn serve(
    mut socket: TcpStream,
    handler: Arc<Handler>,
    seen: Arc<Mutex<Vec<Seen>>>,
    count: Arc<AtomicUsize>,
    discovery: Arc<Mutex<Vec<(String, String)>>>,
) {
    let Some(request) = read_request(&mut socket).await else { return };
    let request = if is_discovery(&request) {
        // Not a model call: neither counted nor seen; 404 unless the test serves it.
        let body = discovery.lock().unwrap().iter().find(|(p, _)| request.path.ends_with(p.as_str())).cloned();
        let (status, body) = match body {
            Some((_, b)) => ("200 OK", b),
            None => ("404 Not Found", r#"{"error":"not found"}"#.to_string()),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = socket.write_all(head.as_bytes()).await;
        let _ = socket.write_all(body.as_bytes()).await;
        let _ = socket.flush().await;
        let _ = socket.shutdown().await;
        return;
    } else {
        request
    };
    let n = count.fetch_add(1, Ordering::SeqCst);
    seen.lock().unwrap().push(request.clone());
    match handler(n, &request) {
        Reply::Json { status, headers, body } => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
        }
        Reply::Sse { events, cut } => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
            let _ = socket.write_all(head.as_bytes()).await;
            for e in events {
                let data = format!("data: {e}\n\n");
                let _ = socket.write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes()).await;
                let _ = socket.flush().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            if !cut {
                let _ = socket.write_all(b"0\r\n\r\n").await;
            }
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
        Reply::Raw(bytes) => {
            let _ = socket.write_all(&bytes).await;
        }
    }
    let _ = socket.flush().await;
    let _ = socket.shutdown().await;
}

/// A plausible Game-of-24 answer: two valid steps for a propose prompt (built from the
/// numbers it names), `otherwise` for any other prompt (a value word, say), so a search
/// goes on to its last step.
pub fn game24_text(prompt: &str, otherwise: &str) -> String {
    if !prompt.to_lowercase().contains("possible next steps") {
        return otherwise.into();
    }
    let last = prompt.rsplit("Input: ").next().unwrap_or("");
    let numbers: Vec<i64> =
        last.lines().next().unwrap_or("").split_whitespace().filter_map(|n| n.parse().ok()).collect();
    if numbers.len() < 2 {
        return "no idea".into();
    }
    let (a, b, rest) = (numbers[0], numbers[1], &numbers[2..]);
    let step = |op: &str, r: i64| {
        let mut left: Vec<i64> = rest.to_vec();
        left.push(r);
        left.sort();
        let left: Vec<String> = left.iter().map(|n| n.to_string()).collect();
        format!("{a} {op} {b} = {r} (left: {})", left.join(" "))
    };
    format!("{}\n{}", step("+", a + b), step("*", a * b))
}

/// `thoughtscope` run in `dir` with its home, config and cache there, no config file or
/// base URL from the environment, and `key` as the OpenAI key (or none).
pub fn isolated(dir: &std::path::Path, key: Option<&str>) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_thoughtscope"));
    cmd.current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("THOUGHTSCOPE_CONFIG")
        .env_remove("OPENAI_BASE_URL");
    match key {
        Some(key) => cmd.env("OPENAI_API_KEY", key),
        None => cmd.env_remove("OPENAI_API_KEY"),
    };
    cmd
}

/// A file under tests/fixtures.
pub fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// The JSON summary a successful `--json` run prints last.
pub fn summary(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    last_json(out)
}

/// The last line of stdout, as JSON.
pub fn last_json(out: &std::process::Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| panic!("no output"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// `thoughtscope` run in `dir` with every place it keeps things (data, config, cache,
/// temporary files) under it and no config file from the environment.
pub fn sandboxed(dir: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_thoughtscope"));
    cmd.current_dir(dir)
        .env("THOUGHTSCOPE_DATA_DIR", dir.join("data"))
        .env("THOUGHTSCOPE_CONFIG_DIR", dir.join("config"))
        .env_remove("THOUGHTSCOPE_CONFIG")
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .env("XDG_CACHE_HOME", dir.join("xdg-cache"))
        .env("TMPDIR", dir);
    cmd
}

/// The ReAct step a prompt asks for, from its last line: `Thought N:` (the reference
/// prompt, which the model continues) or `Write Thought N and Action N, ...` (the chat
/// prompt, the default with a real provider); 0 if neither.
pub fn react_step(prompt: &str) -> usize {
    let last = prompt.trim_end().lines().last().unwrap_or("");
    match last.strip_prefix("Write Thought ") {
        Some(rest) => rest.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0),
        None => last.trim_start_matches("Thought ").trim_end_matches(':').parse().unwrap_or(0),
    }
}

/// GitHub's anchor (README.md and docs/ links) for a heading: lowercase, punctuation dropped, spaces to dashes.
pub fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A stream watcher that records what it is handed, as `sample:text` and `sample:restart`.
pub fn recorded_deltas() -> (thoughtscope::llm::DeltaFn, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use thoughtscope::llm::Streamed;
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = std::sync::Arc::clone(&shown);
    let deltas: thoughtscope::llm::DeltaFn = std::sync::Arc::new(move |i, piece: Streamed<'_>| {
        s.lock().unwrap().push(match piece {
            Streamed::Text(t) => format!("{i}:{t}"),
            Streamed::Restart => format!("{i}:restart"),
        })
    });
    (deltas, shown)
}
