//! `thoughtscope serve` driven over HTTP with curl: plain and streamed answers, the
//! method the model names, every request a session that replays with no calls, the
//! bearer token, a full server's 429, and SIGTERM during a request. The upstream is
//! `sim` (built-in tasks, offline) or a scripted OpenAI-compatible server on 127.0.0.1.

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::{FakeServer, Reply, Seen};
use thoughtscope::session::Session;

const KEY: &str = "sk-upstream-THOUGHTSCOPE-canary-7";

/// A `serve` process on a free port of 127.0.0.1 (or the host given), killed when dropped.
struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT/v1`
    url: String,
    sessions: PathBuf,
    home: tempfile::TempDir,
    _stdout: BufReader<ChildStdout>,
}

fn command(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_thoughtscope"));
    c.current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env_remove("THOUGHTSCOPE_CONFIG")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", KEY);
    c
}

impl Served {
    fn start(args: &[&str]) -> Served {
        let home = tempfile::tempdir().unwrap();
        let sessions = home.path().join("sessions");
        let mut child = command(home.path())
            .args(["serve", "--port", "0", "--sessions"])
            .arg(&sessions)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let Some(address) = line.split("listening on ").nth(1).and_then(|r| r.split_whitespace().next()) else {
            let out = child.wait_with_output().unwrap();
            panic!("serve did not start: {line}{}", String::from_utf8_lossy(&out.stderr));
        };
        let url = address.replace("0.0.0.0", "127.0.0.1");
        Served { child, url, sessions, home, _stdout: stdout }
    }

    fn post(&self, body: &Value, headers: &[&str]) -> Answer {
        curl(&post_args(&self.url, body, headers))
    }

    /// Post a tot-bfs game24 request from another thread and return once its search has
    /// started (its session file exists): the slow request the 429 and SIGTERM tests
    /// hold open while they act.
    fn start_slow_search(&self) -> std::thread::JoinHandle<Answer> {
        let args = post_args(&self.url, &game24("tot-bfs@sim", false), &[]);
        let request = std::thread::spawn(move || curl(&args));
        wait_for("the search to start", || !self.sessions_now().is_empty());
        request
    }

    fn session(&self, answer: &Answer) -> PathBuf {
        let name = answer.header("x-thoughtscope-session").expect("the session header");
        self.sessions.join(name)
    }

    /// The sessions folder's files (a search's session is created as it starts).
    fn sessions_now(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.sessions).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default()
    }

    /// `replay --headless --strict`: the summary, after checking the session replayed exactly.
    fn replay(&self, session: &Path) -> Value {
        let out = command(self.home.path())
            .args(["replay"])
            .arg(session)
            .args(["--headless", "--json", "--strict"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.contains("replayed exactly"), "replay: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response as curl saw it.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `data:` payloads of an event stream.
    fn events(&self) -> Vec<String> {
        self.body.lines().filter_map(|l| l.strip_prefix("data: ")).map(str::to_string).collect()
    }
}

/// curl's arguments for a JSON POST to `{url}/chat/completions`.
fn post_args(url: &str, body: &Value, headers: &[&str]) -> Vec<String> {
    let mut args = vec!["-X".to_string(), "POST".into(), format!("{url}/chat/completions")];
    args.extend(["-H".into(), "content-type: application/json".into(), "--data-binary".into(), body.to_string()]);
    for h in headers {
        args.extend(["-H".to_string(), h.to_string()]);
    }
    args
}

fn curl(args: &[String]) -> Answer {
    let out: Output =
        Command::new("curl").args(["-sS", "-D", "-", "--max-time", "120"]).args(args).output().expect("curl runs");
    assert!(out.status.success(), "curl: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer { status, headers, body: body.to_string() }
}

fn game24(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": "4 9 10 13"}],
        "thoughtscope": {"task": "game24"}})
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(120), "waited too long for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sim_answers_a_built_in_task_plain_and_streamed_and_each_request_replays() {
    let served = Served::start(&[]);
    let plain = served.post(&game24("tot-bfs@sim", false), &[]);
    assert_eq!(plain.status, 200, "{}", plain.body);
    let body = plain.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "tot-bfs@sim");
    let content = body["choices"][0]["message"]["content"].as_str().unwrap().to_string();
    assert!(!content.is_empty());
    assert_eq!(body["thoughtscope"]["method"], "tot-bfs");
    let id = plain.header("x-request-id").unwrap();
    let session = served.session(&plain);
    let name = session.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        name.contains("-tot-bfs-") && name.ends_with(&format!("{id}.jsonl")),
        "named by time, method and id: {name}"
    );
    let recorded = Session::load(&session).unwrap();
    assert_eq!(recorded.header.params.method.label(), "tot-bfs");
    assert!(recorded.end().is_some(), "the session is closed");
    let replayed = served.replay(&session);
    assert_eq!(replayed["solved"], 1, "the replay reaches the same (right) answer");
    assert_eq!(replayed["llm_calls"], body["thoughtscope"]["calls"]);
    let usage = &body["usage"];
    assert_eq!(
        usage["total_tokens"],
        usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap()
    );
    assert_eq!(replayed["prompt_tokens"], usage["prompt_tokens"], "usage sums every call of the search");
    assert_eq!(replayed["completion_tokens"], usage["completion_tokens"]);

    let streamed = served.post(&game24("cot-sc@sim", true), &[]);
    assert_eq!(streamed.status, 200, "{}", streamed.body);
    assert!(streamed.header("content-type").unwrap().starts_with("text/event-stream"));
    let events = streamed.events();
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = events[..events.len() - 1].iter().map(|e| serde_json::from_str(e).unwrap()).collect();
    assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk"));
    let text: String = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
    assert!(!text.is_empty());
    let finish: Vec<&Value> =
        chunks.iter().map(|c| &c["choices"][0]["finish_reason"]).filter(|f| !f.is_null()).collect();
    assert_eq!(finish, [&json!("stop")]);
    assert!(chunks.last().unwrap()["usage"]["total_tokens"].as_u64().unwrap() > 0);
    let session = served.session(&streamed);
    assert_eq!(Session::load(&session).unwrap().header.params.method.label(), "cot-sc");
    let replayed = served.replay(&session);
    assert_eq!(replayed["prompt_tokens"], chunks.last().unwrap()["usage"]["prompt_tokens"]);

    // sim cannot answer an open question: one line saying what to do.
    let open = served.post(&json!({"model": "cot-sc@sim", "messages": [{"role": "user", "content": "Why?"}]}), &[]);
    assert_eq!(open.status, 400);
    assert_eq!(open.json()["error"]["code"], "sim_cannot_answer");
    let bad = served.post(
        &json!({"model": "cot-sc@sim", "messages": [{"role": "user", "content": "4 9 10 13"}],
        "thoughtscope": {"task": "game24", "samples": 0}}),
        &[],
    );
    assert_eq!((bad.status, bad.json()["error"]["code"].as_str()), (400, Some("invalid_parameter")), "{}", bad.body);
    let unknown = served.post(&game24("wizardry@sim", false), &[]);
    assert_eq!(unknown.status, 404);
    let models = curl(&[format!("{}/models", served.url)]);
    let ids: Vec<String> =
        models.json()["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().into()).collect();
    assert!(ids.is_empty(), "sim answers no request naming no task (the open question): {ids:?}");
}

/// A scripted upstream: propose, value, cot and io prompts of the open question answered plausibly.
fn upstream(seen: &Seen) -> Reply {
    let prompt = seen.prompt();
    let text = if prompt.contains("Final answers:") {
        "Answer: Paris\nAnswer: Lyon"
    } else if prompt.contains("Possible next steps:") {
        "Recall the capital of France.\nList large French cities."
    } else if prompt.contains("Judgement:") {
        "It heads to the answer.\nsure"
    } else if prompt.contains("step by step") {
        "France's government sits in Paris.\nAnswer: Paris"
    } else {
        "The capital of France is Paris."
    };
    Reply::chat(&[text], Some((100, 10)))
}

fn chat_calls(fake: &FakeServer) -> usize {
    fake.seen().iter().filter(|s| s.path.ends_with("/chat/completions")).count()
}

#[test]
fn a_model_upstream_answers_the_open_question_by_the_method_the_model_names() {
    let fake = FakeServer::start(|_, seen| upstream(seen));
    let served =
        Served::start(&["--provider", "openai", "--base-url", &fake.url, "--model", "fake-model", "--retries", "0"]);
    let question = json!([{"role": "user", "content": "What is the capital of France?"}]);

    // A plain model name: io, the conversation passed through as it came.
    let io = served.post(&json!({"model": "fake-model", "messages": question}), &[]);
    assert_eq!(io.status, 200, "{}", io.body);
    assert_eq!(io.json()["choices"][0]["message"]["content"], "The capital of France is Paris.");
    let sent = fake.seen();
    let last = sent.last().unwrap();
    assert_eq!(last.body["messages"], question, "io sends the conversation as it came");
    assert_eq!(last.body["model"], "fake-model");

    for (model, extra) in [("cot-sc@fake-model", json!({"samples": 3})), ("tot-bfs@fake-model", json!({"breadth": 1}))]
    {
        let before = chat_calls(&fake);
        let r = served.post(&json!({"model": model, "messages": question, "thoughtscope": extra}), &[]);
        assert_eq!(r.status, 200, "{model}: {}", r.body);
        let body = r.json();
        assert_eq!(body["choices"][0]["message"]["content"], "Paris", "{model}");
        let calls = chat_calls(&fake) - before;
        assert!(calls >= 2, "{model} searched: {calls} calls");
        assert_eq!(body["usage"]["prompt_tokens"], 100 * calls as u64, "usage sums the search's calls ({model})");
        assert_eq!(body["usage"]["completion_tokens"], 10 * calls as u64);
        let session = served.session(&r);
        let recorded = Session::load(&session).unwrap();
        assert_eq!(recorded.header.task, "open-question");
        assert!(recorded.header.task_def.is_some(), "the task is in the header, so no file is needed");
        let before_replay = chat_calls(&fake);
        let replayed = served.replay(&session);
        assert_eq!(replayed["llm_calls"], body["thoughtscope"]["calls"]);
        assert_eq!(replayed["prompt_tokens"], body["usage"]["prompt_tokens"]);
        assert_eq!(chat_calls(&fake), before_replay, "a replay makes no calls");
        let file = std::fs::read_to_string(&session).unwrap();
        assert!(!file.contains(KEY), "no secret in the session");
    }
    let tokens = served.post(
        &json!({"model": "cot-sc@fake-model", "messages": question,
        "thoughtscope": {"samples": 3, "task": "no-such-task"}}),
        &[],
    );
    assert_eq!((tokens.status, tokens.json()["error"]["code"].as_str()), (400, Some("invalid_task")));
}

#[test]
fn upstream_errors_come_back_as_openai_error_bodies() {
    let fake = FakeServer::start(|_, _| Reply::json(401, r#"{"error": {"message": "bad key upstream"}}"#));
    let served =
        Served::start(&["--provider", "openai", "--base-url", &fake.url, "--model", "fake-model", "--retries", "0"]);
    let r = served.post(&json!({"model": "cot-sc@fake-model", "messages": [{"role": "user", "content": "Hi?"}]}), &[]);
    assert_eq!(r.status, 502, "{}", r.body);
    let error = &r.json()["error"];
    assert_eq!(error["type"], "upstream_error");
    assert_eq!(error["code"], "upstream_refused");
    assert!(error["message"].as_str().unwrap().contains("bad key upstream"), "{error}");
    assert!(Session::load(&served.session(&r)).unwrap().stopped().is_some(), "recorded, with why it stopped");
}

#[test]
fn a_token_is_required_off_loopback_and_checked_on_every_request() {
    let home = tempfile::tempdir().unwrap();
    let out = command(home.path()).args(["serve", "--host", "0.0.0.0", "--port", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--api-key") && err.lines().count() == 1, "{err}");

    let served = Served::start(&["--host", "0.0.0.0", "--api-key", "s3cret-token"]);
    let missing = served.post(&game24("io@sim", false), &[]);
    assert_eq!(missing.status, 401);
    assert_eq!(missing.json()["error"]["code"], "missing_api_key");
    let wrong = served.post(&game24("io@sim", false), &["authorization: Bearer nope"]);
    assert_eq!((wrong.status, wrong.json()["error"]["code"].as_str()), (401, Some("invalid_api_key")));
    assert!(served.sessions_now().is_empty(), "refused requests run nothing");
    let models = curl(&[format!("{}/models", served.url)]);
    assert_eq!(models.status, 401);
    let right = served.post(&game24("io@sim", false), &["authorization: Bearer s3cret-token"]);
    assert_eq!(right.status, 200, "{}", right.body);
}

#[test]
fn a_full_server_answers_429_with_retry_after() {
    let served = Served::start(&["--max-searches", "1", "--sim-latency-ms", "400"]);
    let first = served.start_slow_search();
    let second = served.post(&game24("io@sim", false), &[]);
    assert_eq!(second.status, 429, "{}", second.body);
    assert_eq!(second.header("retry-after"), Some("1"));
    assert_eq!(second.json()["error"]["code"], "too_many_searches");
    let first = first.join().unwrap();
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(served.sessions_now().len(), 1, "the refused request recorded nothing");
    let again = served.post(&game24("io@sim", false), &[]);
    assert_eq!(again.status, 200, "a slot is free again: {}", again.body);
}

#[test]
fn sigterm_during_a_request_stops_the_search_and_closes_its_session() {
    let mut served = Served::start(&["--sim-latency-ms", "1500"]);
    let request = served.start_slow_search();
    let pid = served.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let answer = request.join().unwrap();
    assert!(matches!(answer.status, 200 | 503), "{} {}", answer.status, answer.body);
    if answer.status == 503 {
        assert_eq!(answer.json()["error"]["code"], "shutting_down");
    }
    let mut exited = None;
    wait_for("the server to exit", || {
        exited = served.child.try_wait().unwrap();
        exited.is_some()
    });
    assert!(exited.unwrap().success(), "a graceful exit");
    let session = served.sessions_now().pop().unwrap();
    let recorded = Session::load(&session).unwrap();
    assert!(recorded.stopped().is_some_and(|why| why.contains("SIGTERM")), "{:?}", recorded.stopped());
    assert!(recorded.end().is_some(), "the session has its end line");
    served.replay(&session);
}

/// The config's `[serve]` table end to end: a profile names the method and its parameters
/// (the model `wide@fake-model`), and each request's search stops issuing calls at the
/// token budget, said in the answer and recorded in its session.
#[test]
fn a_profile_chooses_the_method_and_the_token_budget_stops_each_search() {
    let fake = FakeServer::start(|_, seen| upstream(seen));
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("serve.toml");
    std::fs::write(&config, "[serve]\nbudget_tokens = 100\n[serve.profiles.wide]\nmethod = \"tot-bfs\"\nbreadth = 2\n")
        .unwrap();
    let config = config.to_string_lossy().to_string();
    let served = Served::start(&[
        "--config",
        &config,
        "--provider",
        "openai",
        "--base-url",
        &fake.url,
        "--model",
        "fake-model",
        "--retries",
        "0",
    ]);
    let question = json!([{"role": "user", "content": "What is the capital of France?"}]);
    let r = served.post(&json!({"model": "wide@fake-model", "messages": question}), &[]);
    // Each call costs 110 tokens: the first (the root's proposals, alone in flight)
    // crosses the budget of 100, and the search issues no call after it.
    let calls = chat_calls(&fake);
    assert_eq!(calls, 1, "the budget stopped the search after its first call");
    let session = served.session(&r);
    let text = std::fs::read_to_string(&session).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!((header["params"]["method"].as_str(), header["params"]["breadth"].as_u64()), (Some("tot-bfs"), Some(2)));
    let body = r.json();
    match r.status {
        // No answer yet when the budget stopped it: OpenAI's quota error.
        400 => assert_eq!(body["error"]["code"], "budget_exceeded", "{}", r.body),
        // An answer already: cut short, as a model stopped by max_tokens says.
        200 => assert_eq!(body["choices"][0]["finish_reason"], "length", "{}", r.body),
        other => panic!("{other}: {}", r.body),
    }
    assert!(text.contains("budget exceeded"), "the session says why it stopped");
    served.replay(&session);
    assert_eq!(chat_calls(&fake), calls, "a replay makes no calls");
}

/// `retreval@MODEL` and `best-of-n@MODEL` run like the other methods: on sim with a
/// built-in task (a math-demo problem, which sim knows) they answer, record their
/// session and replay it exactly.
#[test]
fn retreval_and_best_of_n_answer_through_serve() {
    let served = Served::start(&[]);
    for model in ["retreval@sim", "best-of-n@sim"] {
        let body = json!({"model": model, "messages": [{"role": "user", "content": r"Solve for $x$: $3x + 7 = 25$."}],
            "thoughtscope": {"task": "math-demo"}});
        let r = served.post(&body, &[]);
        assert_eq!(r.status, 200, "{model}: {}", r.body);
        let answer = r.json();
        let method = model.split('@').next().unwrap();
        assert_eq!(answer["thoughtscope"]["method"], method);
        assert!(!answer["choices"][0]["message"]["content"].as_str().unwrap().is_empty());
        let session = served.session(&r);
        assert_eq!(Session::load(&session).unwrap().header.params.method.label(), method);
        let replayed = served.replay(&session);
        assert_eq!(replayed["llm_calls"], answer["thoughtscope"]["calls"], "{model}");
    }
}

/// Wait (up to `limit`) for the server to exit; its status.
fn exits_within(served: &mut Served, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = served.child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// `127.0.0.1:PORT` of a served URL.
fn address(served: &Served) -> String {
    served.url.trim_start_matches("http://").trim_end_matches("/v1").to_string()
}

/// Connections that send half a request, many more than the cap on open connections,
/// lock no one out: a client with the token is served, one without it is refused, and
/// SIGHUP (like SIGTERM) ends the server at once, closing the idle connections.
#[test]
fn half_requests_lock_no_client_out_and_sighup_ends_the_server_promptly() {
    use std::io::Write;
    let mut served = Served::start(&["--api-key", "s3cret-token", "--max-connections", "24"]);
    let addr = address(&served);
    let mut held = Vec::new();
    for i in 0..150 {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        let half = if i % 2 == 0 { "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" } else { "GET /v1/mo" };
        let _ = s.write_all(half.as_bytes());
        held.push(s);
    }
    let started = Instant::now();
    let right = served.post(&game24("io@sim", false), &["authorization: bearer s3cret-token"]);
    assert_eq!(right.status, 200, "a lower-case scheme is a valid header: {}", right.body);
    assert!(started.elapsed() < Duration::from_secs(10), "served at once: {:?}", started.elapsed());
    let missing = served.post(&game24("io@sim", false), &[]);
    assert_eq!(missing.status, 401);
    // A kept-alive idle connection and the half requests: none holds the shutdown.
    let pid = served.child.id().to_string();
    let signalled = Instant::now();
    assert!(Command::new("kill").args(["-HUP", &pid]).status().unwrap().success());
    let status = exits_within(&mut served, Duration::from_secs(5)).expect("SIGHUP ended serve promptly");
    assert!(status.success(), "a graceful exit: {status:?}");
    assert!(signalled.elapsed() < Duration::from_secs(5));
    let mut stderr = String::new();
    use std::io::Read;
    served.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(stderr.contains("stopped by SIGHUP"), "{stderr}");
    drop(held);
}

/// A request's head must arrive within 10 s and its body within 15 s: a client that
/// trickles either is cut off (the body with a 408), and the server goes on serving.
#[test]
fn a_slow_head_or_body_is_cut_off() {
    use std::io::{Read, Write};
    let served = Served::start(&["--api-key", "s3cret-token"]);
    let addr = address(&served);
    let head = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(40))).unwrap();
            let start = Instant::now();
            // One byte of the head a second: never done within the limit.
            for b in b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: " {
                if s.write_all(&[*b]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(700));
                // Closed (or answered): a read that does not block.
                let mut probe = [0u8; 1];
                s.set_nonblocking(true).unwrap();
                let closed = s.read(&mut probe).is_ok();
                s.set_nonblocking(false).unwrap();
                if closed {
                    break;
                }
            }
            start.elapsed()
        })
    };
    let body = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(40))).unwrap();
        let head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret-token\r\n\
                    Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"model\": ";
        s.write_all(head.as_bytes()).unwrap();
        let start = Instant::now();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        (start.elapsed(), answer)
    });
    let cut = head.join().unwrap();
    assert!(cut < Duration::from_secs(25), "the head's limit: {cut:?}");
    let (took, answer) = body.join().unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("request_timeout"), "{answer}");
    assert!(took >= Duration::from_secs(10) && took < Duration::from_secs(30), "{took:?}");
    let again = served.post(&game24("io@sim", false), &["authorization: Bearer s3cret-token"]);
    assert_eq!(again.status, 200, "{}", again.body);
}

/// A task file that does not parse (here a link to a system file) is "not available": the
/// client hears neither its path nor its lines (the server's stderr has them), and what a
/// request sent is echoed only in part.
#[test]
fn a_client_hears_nothing_of_the_servers_files_and_no_long_echo() {
    let mut served = Served::start(&[]);
    let tasks = served.home.path().join("config/thoughtscope/tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", tasks.join("leaky.toml")).unwrap();
    std::fs::write(tasks.join("broken.toml"), "name = \"broken\"\n[problems\nsecret-line = 1\n").unwrap();
    let home = served.home.path().display().to_string();
    for name in ["leaky", "broken"] {
        let r = served.post(
            &json!({"model": "io@sim", "messages": [{"role": "user", "content": "x"}], "thoughtscope": {"task": name}}),
            &[],
        );
        assert_eq!(r.status, 400, "{}", r.body);
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert_eq!(message, format!("task \"{name}\" is not available on this server"));
        assert!(!r.body.contains("root:") && !r.body.contains("secret-line") && !r.body.contains(&home), "{}", r.body);
    }
    // (100 KB: one argument of curl's command line may hold no more than 128 KiB.)
    let long = "t".repeat(100_000);
    let r = served.post(
        &json!({"model": "io@sim", "messages": [{"role": "user", "content": "x"}], "thoughtscope": {"task": long}}),
        &[],
    );
    assert_eq!(r.status, 400);
    assert!(r.body.len() < 2000, "a 100 KB name is not echoed whole: {} bytes", r.body.len());
    let r = served.post(&game24(&format!("{}@sim", "m".repeat(100_000)), false), &[]);
    assert!(r.body.len() < 2000, "a long model is not echoed whole: {} bytes", r.body.len());
    let _ = served.child.kill();
    let out = served.child.wait_with_output_taken();
    assert!(out.contains("leaky") && out.contains("broken"), "the detail is on the server's stderr: {out}");
}

trait StderrOf {
    fn wait_with_output_taken(&mut self) -> String;
}

impl StderrOf for Child {
    fn wait_with_output_taken(&mut self) -> String {
        use std::io::Read;
        let _ = self.wait();
        let mut text = String::new();
        if let Some(mut e) = self.stderr.take() {
            let _ = e.read_to_string(&mut text);
        }
        text
    }
}

/// `/v1/models` lists only models that answer a request naming no task: on sim with the
/// open question as the default, none; with `--task game24`, each listed one answers.
#[test]
fn the_model_list_names_only_what_answers() {
    let served = Served::start(&[]);
    let models = curl(&[format!("{}/models", served.url)]);
    assert_eq!(models.json()["data"], json!([]), "sim answers no open question");
    let served = Served::start(&["--task", "game24"]);
    let models = curl(&[format!("{}/models", served.url)]);
    let ids: Vec<String> =
        models.json()["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect();
    assert!(ids.contains(&"sim".to_string()) && ids.contains(&"tot-bfs@sim".to_string()), "{ids:?}");
    for id in &ids {
        let r = served.post(&json!({"model": id, "messages": [{"role": "user", "content": "4 9 10 13"}]}), &[]);
        assert_eq!(r.status, 200, "{id} is listed, so it answers: {}", r.body);
    }
}

/// With `--task game24` the open question is still reachable: `thoughtscope.task` names it.
#[test]
fn the_open_question_is_reachable_when_another_task_is_the_default() {
    let fake = FakeServer::start(|_, seen| upstream(seen));
    let served = Served::start(&[
        "--task",
        "game24",
        "--provider",
        "openai",
        "--base-url",
        &fake.url,
        "--model",
        "fake-model",
        "--retries",
        "0",
    ]);
    let question = json!([{"role": "user", "content": "What is the capital of France?"}]);
    let r = served
        .post(&json!({"model": "fake-model", "messages": question, "thoughtscope": {"task": "open-question"}}), &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["thoughtscope"]["task"], "open-question");
    let r = served.post(&json!({"model": "fake-model", "messages": [{"role": "user", "content": "4 9 10 13"}]}), &[]);
    assert_eq!(Session::load(&served.session(&r)).unwrap().header.task, "game24", "the default: {}", r.body);
}

/// An upstream that answers the search's first call (the root proposal) and then closes
/// every connection without a reply, as a dying server or a proxy in front of one does.
fn dying_upstream(seen: &Seen) -> Reply {
    if seen.prompt().contains("Possible next steps:") {
        upstream(seen)
    } else {
        Reply::Raw(vec![])
    }
}

#[test]
fn an_upstream_that_dies_mid_search_is_a_502_upstream_unreachable_plain_and_streamed() {
    let fake = FakeServer::start(|_, seen| dying_upstream(seen));
    let served =
        Served::start(&["--provider", "openai", "--base-url", &fake.url, "--model", "fake-model", "--retries", "1"]);
    let ask = |stream: bool| {
        json!({"model": "tot-bfs@fake-model", "stream": stream, "thoughtscope": {"breadth": 1},
            "messages": [{"role": "user", "content": "What is the capital of France?"}]})
    };
    let plain = served.post(&ask(false), &[]);
    assert_eq!(plain.status, 502, "{}", plain.body);
    let error = &plain.json()["error"];
    assert_eq!(
        (error["type"].as_str(), error["code"].as_str()),
        (Some("upstream_error"), Some("upstream_unreachable"))
    );
    assert!(error["message"].as_str().unwrap().contains("the connection failed"), "{error}");
    let session = Session::load(&served.session(&plain)).unwrap();
    let stopped = session.stopped().expect("the session records the stop");
    assert!(stopped.starts_with("the server is unreachable: "), "{stopped}");
    assert!(session.end().is_some(), "and is closed");
    let calls = chat_calls(&fake);
    assert!(calls >= 3, "the root proposal, then the first failed call and its retry: {calls}");

    let streamed = served.post(&ask(true), &[]);
    assert_eq!(streamed.status, 200, "a stream has begun before the search fails: {}", streamed.body);
    let events = streamed.events();
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"), "{events:?}");
    let first: Value = serde_json::from_str(&events[0]).unwrap();
    assert_eq!(first["error"]["code"], "upstream_unreachable", "{first}");
    assert_eq!(events.len(), 2, "the error object is the stream's only event: {events:?}");
    let session = Session::load(&served.session(&streamed)).unwrap();
    assert!(session.stopped().is_some_and(|s| s.starts_with("the server is unreachable")));
}

#[test]
fn io_passes_the_conversation_and_the_clients_sampling_fields_through_in_one_call() {
    // As many choices as asked (`n`), each its own.
    let fake = FakeServer::start(|_, seen| {
        let n = seen.body["n"].as_u64().unwrap_or(1) as usize;
        Reply::chat(&["Rome.", "Roma.", "Rom."][..n], Some((42, 3)))
    });
    let served =
        Served::start(&["--provider", "openai", "--base-url", &fake.url, "--model", "fake-model", "--retries", "0"]);
    let conversation = json!([
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "And of Italy?\n[system]\n{{ input }}"},
    ]);
    for model in ["fake-model", "io@fake-model"] {
        let before = chat_calls(&fake);
        let r = served.post(
            &json!({"model": model, "messages": conversation, "temperature": 0.25, "top_p": 0.9, "max_tokens": 50,
                "stop": ["\n\n"], "seed": 11, "presence_penalty": 0.5, "frequency_penalty": -0.25}),
            &[],
        );
        assert_eq!(r.status, 200, "{model}: {}", r.body);
        let body = r.json();
        assert_eq!(body["choices"][0]["message"]["content"], "Rome.");
        assert_eq!(chat_calls(&fake) - before, 1, "{model}: one upstream completion, as a direct call");
        assert_eq!(
            (body["usage"]["prompt_tokens"].as_u64(), body["usage"]["completion_tokens"].as_u64()),
            (Some(42), Some(3))
        );
        let sent = fake.seen().last().unwrap().body.clone();
        assert_eq!(sent["messages"], conversation, "{model}: the client's turns, as they came");
        assert_eq!(sent["temperature"].as_f64(), Some(0.25));
        assert_eq!((sent["max_tokens"].as_u64(), sent["seed"].as_u64()), (Some(50), Some(11)));
        assert_eq!(sent["stop"], json!(["\n\n"]));
        assert_eq!(
            (sent["top_p"].as_f64(), sent["presence_penalty"].as_f64(), sent["frequency_penalty"].as_f64()),
            (Some(0.9), Some(0.5), Some(-0.25)),
            "{model}: the client's top_p and penalties, as written: {sent}"
        );
        assert!(sent.get("n").is_none(), "n = 1: {sent}");
        let replayed = served.replay(&served.session(&r));
        assert_eq!(replayed["llm_calls"], 1);
    }
    // Without a limit none is sent: the server's own applies, as to a direct call.
    let r = served.post(&json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}]}), &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    let sent = fake.seen().last().unwrap().body.clone();
    assert!(sent.get("max_tokens").is_none() && sent.get("stop").is_none(), "{sent}");
    assert!(sent.get("top_p").is_none() && sent.get("presence_penalty").is_none(), "none unless given: {sent}");

    // n choices: one upstream call asking for n, each choice a sample's answer.
    let before = chat_calls(&fake);
    let r = served.post(&json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}], "n": 2}), &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    let texts: Vec<Value> =
        r.json()["choices"].as_array().unwrap().iter().map(|c| c["message"]["content"].clone()).collect();
    assert_eq!(texts, [json!("Rome."), json!("Roma.")]);
    assert_eq!(chat_calls(&fake) - before, 1, "one upstream call for both choices");
    assert_eq!(fake.seen().last().unwrap().body["n"], 2);
    let streamed = served.post(
        &json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}], "n": 2, "stream": true}),
        &[],
    );
    let chunks: Vec<Value> =
        streamed.events().iter().filter(|e| *e != "[DONE]").map(|e| serde_json::from_str(e).unwrap()).collect();
    let second: String = chunks
        .iter()
        .filter(|c| c["choices"][0]["index"] == 1)
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(second, "Roma.", "the stream carries each choice by its index");

    // What cannot be passed through is refused in one line, before any call.
    let before = chat_calls(&fake);
    let user = json!([{"role": "user", "content": "Hi"}]);
    for (body, code, says) in [
        (json!({"model": "cot-sc@fake-model", "messages": user, "n": 2}), "unsupported_n", "n is for io"),
        (
            json!({"model": "fake-model", "messages": user, "n": 2, "thoughtscope": {"samples": 3}}),
            "invalid_n",
            "differ",
        ),
        (json!({"model": "fake-model", "messages": user, "top_p": 1.5}), "invalid_parameter", "top_p"),
        (
            json!({"model": "fake-model", "messages": user, "frequency_penalty": 3}),
            "invalid_parameter",
            "frequency_penalty",
        ),
        (
            json!({"model": "cot-sc@fake-model", "messages": user, "top_p": 0.5}),
            "unsupported_parameter",
            "top_p is passed to the model only by io",
        ),
        (
            json!({"model": "cot-sc@fake-model", "messages": user, "max_tokens": 9}),
            "unsupported_parameter",
            "only by io",
        ),
        (
            json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}, {"role": "system", "content": "x"}]}),
            "invalid_message",
            "messages[1]",
        ),
        (
            json!({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]}),
            "invalid_message",
            "last message",
        ),
    ] {
        let r = served.post(&body, &[]);
        let error = &r.json()["error"];
        assert_eq!((r.status, error["code"].as_str()), (400, Some(code)), "{body}: {}", r.body);
        assert!(error["message"].as_str().unwrap().contains(says), "{error}");
    }
    assert_eq!(chat_calls(&fake), before, "nothing refused reached the upstream");
}

/// An upstream API takes what it takes: Anthropic's gets the client's `top_p`, and a
/// penalty, which it has no field for, is refused in one line before any call.
#[test]
fn io_sends_an_anthropic_upstream_top_p_and_refuses_the_penalties_it_cannot_take() {
    let fake = FakeServer::start(|_, _| {
        Reply::json(
            200,
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                "content": [{"type": "text", "text": "Rome."}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 12, "output_tokens": 2}})
            .to_string(),
        )
    });
    let served =
        Served::start(&["--provider", "anthropic", "--base-url", &fake.url, "--model", "claude-x", "--retries", "0"]);
    let user = json!([{"role": "user", "content": "Capital of Italy?"}]);
    let r = served.post(&json!({"model": "claude-x", "messages": user, "top_p": 0.5}), &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    let sent = fake.seen().into_iter().rfind(|s| s.body.get("messages").is_some()).unwrap().body;
    assert_eq!(sent["top_p"].as_f64(), Some(0.5), "{sent}");
    let before = fake.seen().len();
    let r = served.post(&json!({"model": "claude-x", "messages": user, "presence_penalty": 0.5}), &[]);
    let error = &r.json()["error"];
    assert_eq!((r.status, error["code"].as_str()), (400, Some("unsupported_parameter")), "{}", r.body);
    assert!(
        error["message"].as_str().unwrap().contains("presence_penalty is not taken by the upstream API"),
        "{error}"
    );
    assert_eq!(fake.seen().len(), before, "refused before any call");
}
