//! An empty reply is an answer (issue 54, item 1): a reply with no text and no tool call
//! that stopped (`"stop"`, a content filter, no reason) is handed to the task's reader like
//! any other, whole or streamed, OpenAI-compatible, Anthropic or Responses, never retried
//! with back-off; the profile's `retry_empty` asks it once more, at once. A reply with no
//! text that stopped at its length is said plainly and never retried. Whole runs of each
//! method family against a server answering empty finish with no failed call and count
//! the empty replies as unreadable.

use crate::support;

use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use support::{FakeServer, Reply, Seen};
use thoughtscope::llm::api::HttpProvider;
use thoughtscope::llm::config::{resolve, FileConfig, ProviderOptions, Resolved};
use thoughtscope::llm::{CallOptions, Provider, Streamed};
use thoughtscope::protocol::{CallErrorKind, LlmRequest, Message, Purpose};

const KEY: &str = "sk-empty-test-0123456789";

/// A resolved profile with quick back-off (so a wrongly retried reply would still show in
/// the request count, not in the test's time).
fn resolved(name: &str, url: &str) -> Resolved {
    let args = ProviderOptions {
        model: Some("fake-model".into()),
        base_url: Some(url.into()),
        timeout: Some(5.0),
        retries: Some(3),
        ..Default::default()
    };
    let env = |k: &str| matches!(k, "OPENAI_API_KEY" | "ANTHROPIC_API_KEY").then(|| KEY.to_string());
    let mut r = resolve(name, &args, &FileConfig::default(), &env, 11).expect("profile resolves");
    r.http.backoff_base = Duration::from_millis(20);
    r.http.backoff_max = Duration::from_millis(100);
    r
}

fn provider(name: &str, server: &FakeServer) -> HttpProvider {
    HttpProvider::new(&resolved(name, &server.url)).unwrap()
}

fn request() -> LlmRequest {
    let messages = vec![Message::user("Input: 4 5 6 10\nPossible next steps:")];
    LlmRequest { max_tokens: Some(50), ..LlmRequest::simple(Purpose::Propose, messages) }
}

/// An OpenAI chat reply of one choice with this `content` (JSON) and finish reason.
fn chat(content: &str, finish: &str) -> Reply {
    Reply::json(200, format!(r#"{{"choices":[{{"message":{{"content":{content}}},"finish_reason":"{finish}"}}]}}"#))
}

fn anthropic(text: &str, stop: &str) -> Reply {
    let content = if text.is_empty() { json!([]) } else { json!([{"type": "text", "text": text}]) };
    let body = json!({"type": "message", "model": "claude-test", "content": content, "stop_reason": stop,
        "usage": {"input_tokens": 12, "output_tokens": 1}});
    Reply::json(200, body.to_string())
}

fn responses(text: &str, status: &str) -> Value {
    let mut v = json!({"id": "resp_1", "object": "response", "status": status, "model": "gpt-5-mini",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}],
        "usage": {"input_tokens": 40, "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 9}}});
    if status == "incomplete" {
        v["incomplete_details"] = json!({"reason": "max_output_tokens"});
    }
    v
}

fn retries(p: &HttpProvider) -> u64 {
    p.http().retries_made.load(std::sync::atomic::Ordering::SeqCst)
}

/// Whole replies of each kind: an empty one comes back as an empty answer after one
/// request, none retried.
#[tokio::test]
async fn an_empty_reply_of_any_kind_is_an_answer_asked_once() {
    for (content, finish) in [("null", "stop"), ("\"\"", "stop"), ("\" \\n \"", "stop"), ("null", "content_filter")] {
        let server = FakeServer::start(move |_, _| chat(content, finish));
        let p = provider("openai", &server);
        let reply = p.complete(&request(), CallOptions::default()).await.expect("an empty reply is an answer");
        assert!(reply.completions[0].text.trim().is_empty(), "{content}");
        assert_eq!(reply.completions[0].finish_reason.as_deref(), Some(finish));
        assert_eq!((server.requests(), retries(&p)), (1, 0), "{content} {finish}: not retried");
    }
    // No finish reason at all.
    let server = FakeServer::start(|_, _| Reply::json(200, r#"{"choices":[{"message":{"content":""}}]}"#));
    let p = provider("openai", &server);
    assert_eq!(p.complete(&request(), CallOptions::default()).await.unwrap().completions[0].text, "");
    assert_eq!(server.requests(), 1);

    let server = FakeServer::start(|_, _| anthropic("", "end_turn"));
    let p = provider("anthropic", &server);
    let reply = p.complete(&request(), CallOptions::default()).await.expect("an empty message is an answer");
    assert_eq!((reply.completions[0].text.as_str(), reply.completions[0].finish_reason.as_deref()), ("", Some("stop")));
    assert_eq!(server.requests(), 1);

    let server = FakeServer::start(|_, _| Reply::json(200, responses("", "completed").to_string()));
    let p = provider("openai-responses", &server);
    let reply = p.complete(&request(), CallOptions::default()).await.expect("an empty response is an answer");
    assert_eq!(reply.completions[0].text, "");
    assert_eq!(server.requests(), 1);
}

/// Streamed replies of each kind: the same, and the watcher is told nothing to forget.
#[tokio::test]
async fn an_empty_stream_of_any_kind_is_an_answer_asked_once() {
    let (deltas, shown) = support::recorded_deltas();
    let server = FakeServer::start(|_, _| Reply::chat_stream(&[], false));
    let p = provider("openai", &server);
    let reply = p.complete(&request(), CallOptions::streaming(Arc::clone(&deltas))).await.unwrap();
    assert_eq!((reply.completions[0].text.as_str(), server.requests()), ("", 1));

    let events = [
        r#"{"type":"message_start","message":{"model":"claude-test","usage":{"input_tokens":11,"output_tokens":1}}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let server = FakeServer::start(move |_, _| Reply::Sse { events: events.map(String::from).to_vec(), cut: false });
    let p = provider("anthropic", &server);
    let reply = p.complete(&request(), CallOptions::streaming(Arc::clone(&deltas))).await.unwrap();
    assert_eq!((reply.completions[0].text.as_str(), server.requests()), ("", 1));

    let done = json!({"type": "response.completed", "response": responses("", "completed")}).to_string();
    let server = FakeServer::start(move |_, _| Reply::Sse { events: vec![done.clone()], cut: false });
    let p = provider("openai-responses", &server);
    let reply = p.complete(&request(), CallOptions::streaming(Arc::clone(&deltas))).await.unwrap();
    assert_eq!((reply.completions[0].text.as_str(), server.requests()), ("", 1));
    assert!(shown.lock().unwrap().is_empty(), "nothing shown, nothing restarted: {:?}", shown.lock().unwrap());
}

/// `retry_empty = true` in the profile: an empty reply is asked once more, at once (no
/// back-off), and the second reply stands, empty or not.
#[tokio::test]
async fn the_profiles_retry_empty_asks_once_more_at_once() {
    let config: FileConfig = {
        let mut c: FileConfig = toml::from_str("[providers.openai]\nretry_empty = true\n").expect("the key is read");
        c.path = "config.toml".into();
        c
    };
    let args = ProviderOptions {
        model: Some("fake-model".into()),
        timeout: Some(5.0),
        retries: Some(3),
        ..Default::default()
    };
    let env = |k: &str| (k == "OPENAI_API_KEY").then(|| KEY.to_string());
    let with = |url: &str| {
        let args = ProviderOptions { base_url: Some(url.into()), ..args.clone() };
        let mut r = resolve("openai", &args, &config, &env, 11).expect("profile resolves");
        assert!(r.retry_empty, "the profile's key is taken");
        // A long back-off: a retry that waited for it would show in the time.
        r.http.backoff_base = Duration::from_secs(2);
        r.http.backoff_max = Duration::from_secs(2);
        HttpProvider::new(&r).unwrap()
    };

    let server =
        FakeServer::start(|i, _| if i == 0 { chat("null", "stop") } else { Reply::chat(&["4 + 5 = 9"], None) });
    let p = with(&server.url);
    let started = std::time::Instant::now();
    let reply = p.complete(&request(), CallOptions::default()).await.unwrap();
    assert_eq!(reply.completions[0].text, "4 + 5 = 9", "the second reply stands");
    assert_eq!((server.requests(), retries(&p)), (2, 1));
    assert!(started.elapsed() < Duration::from_secs(1), "asked again at once: {:?}", started.elapsed());

    let server = FakeServer::start(|_, _| chat("\"\"", "stop"));
    let p = with(&server.url);
    let reply = p.complete(&request(), CallOptions::default()).await.expect("still an answer");
    assert_eq!((reply.completions[0].text.as_str(), server.requests()), ("", 2), "exactly one retry");

    // A streamed retry tells the watcher to forget the sample's first (blank) reply.
    let server = FakeServer::start(|i, _| Reply::chat_stream(if i == 0 { &[" "] } else { &["4 + 5", " = 9"] }, false));
    let (deltas, shown) = support::recorded_deltas();
    let reply = with(&server.url).complete(&request(), CallOptions::streaming(deltas)).await.unwrap();
    assert_eq!((reply.completions[0].text.as_str(), server.requests()), ("4 + 5 = 9", 2));
    assert_eq!(*shown.lock().unwrap(), ["0: ", "0:restart", "0:4 + 5", "0: = 9"]);

    // The key is refused where it is not a boolean.
    let bad = toml::from_str::<FileConfig>("[providers.openai]\nretry_empty = \"yes\"\n");
    assert!(bad.is_err());
}

/// No text and finish reason `"length"`: said plainly (raise the completion limit) and never
/// retried, whole or streamed, of each kind.
#[tokio::test]
async fn no_text_at_the_length_limit_is_said_and_not_retried() {
    let check = |e: thoughtscope::protocol::CallError, server: &FakeServer, what: &str| {
        assert_eq!(e.kind, CallErrorKind::AllThinking, "{what}: {e}");
        assert!(e.message.contains("raise the completion limit"), "{what}: {e}");
        assert_eq!(server.requests(), 1, "{what}: not retried");
    };
    let server = FakeServer::start(|_, _| chat("null", "length"));
    let e = provider("openai", &server).complete(&request(), CallOptions::default()).await.unwrap_err();
    check(e, &server, "openai");

    let events = vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}).to_string(),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}).to_string(),
        "[DONE]".to_string(),
    ];
    let server = FakeServer::start(move |_, _| Reply::Sse { events: events.clone(), cut: false });
    let streaming = CallOptions::streaming(Arc::new(|_, _: Streamed<'_>| {}));
    let e = provider("openai", &server).complete(&request(), streaming).await.unwrap_err();
    check(e, &server, "openai streamed");

    let server = FakeServer::start(|_, _| anthropic("", "max_tokens"));
    let e = provider("anthropic", &server).complete(&request(), CallOptions::default()).await.unwrap_err();
    check(e, &server, "anthropic");

    let server = FakeServer::start(|_, _| Reply::json(200, responses("", "incomplete").to_string()));
    let e = provider("openai-responses", &server).complete(&request(), CallOptions::default()).await.unwrap_err();
    assert!(e.message.contains("9 tokens of thinking the server did not show"), "{e}");
    check(e, &server, "responses");
}

/// `thoughtscope run ARGS` against `server` (Game of 24 on 4 5 6 10 unless ARGS name a task).
/// A reply honouring the request's `n`: `n` choices of `text`, or of no text (`null`,
/// finish reason `"stop"`), so each call is one request.
fn honouring_n(seen: &Seen, text: Option<&str>) -> Reply {
    let n = seen.body["n"].as_u64().unwrap_or(1) as usize;
    let choices: Vec<Value> = (0..n)
        .map(|i| json!({"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}))
        .collect();
    Reply::json(200, json!({"model": "fake-model", "choices": choices}).to_string())
}

fn run(dir: &Path, server: &FakeServer, args: &[&str]) -> Output {
    let task: &[&str] = match args.contains(&"--task") {
        true => &[],
        false => &["--task", "game24", "--input", "4 5 6 10"],
    };
    support::isolated(dir, Some(KEY))
        .arg("run")
        .args(task)
        .args(["--concurrency", "1"])
        .args(["--provider", "openai", "--model", "fake-model", "--base-url", server.url.as_str()])
        .args(["--retries", "3", "--timeout", "10"])
        .args(args)
        .output()
        .expect("the binary runs")
}

fn posts(server: &FakeServer) -> usize {
    server.seen().iter().filter(|s| s.method == "POST").count()
}

/// A tot-bfs run whose every other proposal comes back empty: it finishes with no failed
/// call, one request a call, and the empty replies counted as unreadable proposal lines —
/// in `--json`, the human summary and `replay --headless` alike.
#[test]
fn a_run_with_empty_proposals_finishes_and_counts_them_as_unreadable() {
    let proposals = Arc::new(Mutex::new(0usize));
    let seen = Arc::clone(&proposals);
    let server = FakeServer::start(move |_, s: &Seen| {
        let prompt = s.prompt();
        if prompt.to_lowercase().contains("possible next steps") {
            let mut k = seen.lock().unwrap();
            *k += 1;
            if *k % 2 == 0 {
                return honouring_n(s, None);
            }
        }
        honouring_n(s, Some(&support::game24_text(&prompt, "sure")))
    });
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("s.jsonl");
    let out = run(dir.path(), &server, &["--method", "tot-bfs", "--json", "--record", rec.to_str().unwrap()]);
    let s = support::summary(&out);
    assert_eq!(s["failed_calls"].as_u64().unwrap_or(0), 0, "{s}");
    assert_eq!(s["llm_calls"].as_u64(), Some(posts(&server) as u64), "one request a call, no retries: {s}");
    let empties = (*proposals.lock().unwrap() / 2) as u64;
    assert!(empties > 0);
    let health = &s["reply_health"]["proposals"];
    // Each empty reply is one unreadable line (a proposal the task rejects is one too), the
    // first bad one an empty reply.
    let bad = health["bad"].as_u64().unwrap_or(0);
    assert!(bad >= empties, "{empties} empty replies: {s}");
    assert_eq!(health["example"], json!({"reply": "", "read": "no step read from the reply"}), "{s}");

    let replayed = support::last_json(
        &support::isolated(dir.path(), None)
            .args(["replay", rec.to_str().unwrap(), "--headless", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(replayed["reply_health"], s["reply_health"], "the replay counts the same");
    let human =
        support::isolated(dir.path(), None).args(["replay", rec.to_str().unwrap(), "--headless"]).output().unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(human.contains(&format!("proposal lines unreadable or invalid {bad}/")), "{human}");
}

/// Every method family against a server whose every reply is empty (the tree searches'
/// evaluators: every reply but the proposals): the run finishes without a failed call or a
/// panic, one request a call, and counts the empty replies as unreadable.
#[test]
fn every_method_family_copes_with_nothing_but_empty_replies() {
    let proposals_read = Arc::new(Mutex::new(false));
    let mode = Arc::clone(&proposals_read);
    let server = FakeServer::start(move |_, s: &Seen| {
        let prompt = s.prompt();
        match *mode.lock().unwrap() && prompt.to_lowercase().contains("possible next steps") {
            true => honouring_n(s, Some(&support::game24_text(&prompt, ""))),
            false => honouring_n(s, None),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let families: [(&[&str], bool, &str); 9] = [
        (&["--method", "io"], false, "answers"),
        (&["--method", "cot"], false, "answers"),
        (&["--method", "tot-bfs"], false, "proposals"),
        (&["--method", "tot-bfs"], true, "value_samples"),
        (&["--method", "tot-bfs", "--breadth", "1", "--evaluator", "vote"], true, "vote_samples"),
        (&["--method", "tot-dfs"], false, "proposals"),
        (&["--method", "mcts"], false, "proposals"),
        (&["--method", "react", "--task", "qa-demo", "--range", "0..1", "--max-steps", "3"], false, "steps"),
        (&["--method", "self-refine"], false, "answers"),
    ];
    let mut uncounted = Vec::new();
    for (args, read_proposals, kind) in families {
        *proposals_read.lock().unwrap() = read_proposals;
        let before = posts(&server);
        let out = run(dir.path(), &server, &[args, &["--json"]].concat());
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!said.contains("panicked"), "{args:?}: {said}");
        let s = support::summary(&out);
        assert_eq!(s["failed_calls"].as_u64().unwrap_or(0), 0, "{args:?}: {s}\n{said}");
        let requests = (posts(&server) - before) as u64;
        assert_eq!(s["llm_calls"].as_u64(), Some(requests), "{args:?}: one request a call: {s}");
        if s["reply_health"][kind]["bad"].as_u64().unwrap_or(0) == 0 {
            uncounted.push(format!("{args:?}: the empty replies are not counted as {kind}: {s}"));
        }
    }
    assert!(uncounted.is_empty(), "{}", uncounted.join("\n"));
}
