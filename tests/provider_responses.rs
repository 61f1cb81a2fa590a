//! OpenAI's Responses API, the provider kind added as one file of `src/llm/api/` plus one
//! registration line: its requests as the API documents them (instructions and input,
//! no `n`, seed or stop), whole and streamed replies, samples one request each, stops
//! cut here, the config file's `kind = "responses"`, and a whole `thoughtscope run`
//! against a local server that speaks only `/v1/responses`.

use crate::support;

use serde_json::{json, Value};
use support::{FakeServer, Reply, Seen};
use thoughtscope::llm::api::HttpProvider;
use thoughtscope::llm::config::{resolve, FileConfig, ProviderOptions};
use thoughtscope::llm::{CallOptions, Provider};
use thoughtscope::protocol::{CallErrorKind, LlmRequest, Message, Purpose};

const KEY: &str = "sk-responses-test-0123456789";

fn provider(server: &FakeServer) -> HttpProvider {
    let args = ProviderOptions {
        model: Some("gpt-5-mini".into()),
        base_url: Some(server.url.clone()),
        timeout: Some(5.0),
        retries: Some(2),
        ..Default::default()
    };
    let env = |k: &str| (k == "OPENAI_API_KEY").then(|| KEY.to_string());
    let mut r = resolve("openai-responses", &args, &FileConfig::default(), &env, 5).expect("the profile resolves");
    r.http.backoff_base = std::time::Duration::from_millis(10);
    r.http.backoff_max = std::time::Duration::from_millis(50);
    HttpProvider::new(&r).unwrap()
}

/// A Responses reply with one message of `text`.
fn response(text: &str, status: &str) -> String {
    json!({
        "id": "resp_1", "object": "response", "status": status, "model": "gpt-5-mini-2025",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}
        ],
        "usage": {"input_tokens": 40, "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 4}}
    })
    .to_string()
}

fn request(n: u32, stop: &[&str]) -> LlmRequest {
    LlmRequest {
        purpose: Purpose::Value,
        messages: vec![Message::system("Judge the numbers."), Message::user("4 4 10: can they reach 24?")],
        n,
        temperature: 0.7,
        max_tokens: Some(64),
        stop: stop.iter().map(|s| s.to_string()).collect(),
        context: Value::Null,
        nonce: 0,
        tools: vec![],
        sampling: Default::default(),
    }
}

#[tokio::test]
async fn requests_have_the_documented_shape_and_samples_are_one_request_each() {
    let server =
        FakeServer::start(|i, _| Reply::json(200, response(&format!("sure {i}\nObservation: x"), "completed")));
    let p = provider(&server);
    let reply = p.complete(&request(3, &["\nObservation"]), CallOptions::default()).await.unwrap();
    let texts: Vec<&str> = reply.completions.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts.len(), 3);
    assert!(texts.iter().all(|t| t.starts_with("sure ") && !t.contains("Observation")), "stops cut here: {texts:?}");
    assert!(reply.completions.iter().all(|c| c.finish_reason.as_deref() == Some("stop")));
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.estimated), (120, 27, false));
    assert_eq!(reply.model, "gpt-5-mini-2025");
    assert_eq!(p.honours_n(), Some(false), "the API has no n");

    let seen = server.seen();
    assert_eq!(seen.len(), 3, "three samples, three requests");
    for s in &seen {
        assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", "/v1/responses"));
        assert_eq!(s.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        let b = &s.body;
        assert_eq!(b["model"], "gpt-5-mini");
        assert_eq!(b["instructions"], "Judge the numbers.");
        assert_eq!(b["input"], json!([{"role": "user", "content": "4 4 10: can they reach 24?"}]));
        assert_eq!((b["max_output_tokens"].clone(), b["store"].clone()), (json!(64), json!(false)));
        for absent in ["n", "seed", "stop", "messages", "max_tokens"] {
            assert!(b.get(absent).is_none(), "{absent} sent: {b}");
        }
    }
}

#[tokio::test]
async fn streamed_replies_show_text_as_it_comes_and_a_cut_stream_is_retried() {
    let events = |cut: bool| {
        let mut e = vec![
            json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}).to_string(),
            json!({"type": "response.output_text.delta", "output_index": 1, "delta": "4 + 4"}).to_string(),
            json!({"type": "response.output_text.delta", "output_index": 1, "delta": " = 8"}).to_string(),
        ];
        if !cut {
            let done: Value = serde_json::from_str(&response("4 + 4 = 8", "completed")).unwrap();
            e.push(json!({"type": "response.completed", "response": done}).to_string());
        }
        e
    };
    let server = FakeServer::start(move |i, _| Reply::Sse { events: events(i == 0), cut: i == 0 });
    let p = provider(&server);
    let (deltas, shown) = support::recorded_deltas();
    let reply = p.complete(&request(1, &[]), CallOptions::streaming(deltas)).await.unwrap();
    assert_eq!(reply.completions[0].text, "4 + 4 = 8");
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (40, 9));
    assert_eq!(server.requests(), 2, "the cut stream was asked again");
    assert_eq!(server.seen()[0].body["stream"], true);
    assert_eq!(*shown.lock().unwrap(), ["0:4 + 4", "0: = 8", "0:restart", "0:4 + 4", "0: = 8"]);
}

#[tokio::test]
async fn how_a_response_ended_is_kept_and_failures_are_said() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::json(200, {
            let mut v: Value = serde_json::from_str(&response("4 + 4 = 8 (left: 8", "incomplete")).unwrap();
            v["incomplete_details"] = json!({"reason": "max_output_tokens"});
            v.to_string()
        }),
        _ => Reply::json(
            200,
            r#"{"status":"failed","error":{"code":"server_error","message":"the model crashed"},"output":[]}"#,
        ),
    });
    let p = provider(&server);
    let cut = p.complete(&request(1, &[]), CallOptions::default()).await.unwrap();
    assert_eq!(cut.completions[0].finish_reason.as_deref(), Some("length"));
    let e = p.complete(&request(1, &[]), CallOptions::default()).await.unwrap_err();
    assert!(e.message.contains("the model crashed"), "{e}");
    assert_ne!(e.kind, CallErrorKind::Malformed);
}

#[test]
fn a_config_files_kind_is_one_of_the_registry_and_a_wrong_one_is_named() {
    let file = FileConfig::parse(
        "[providers.work]\nkind = \"responses\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
        std::path::Path::new("c.toml"),
    )
    .unwrap();
    let r = resolve("work", &ProviderOptions::default(), &file, &|_| None, 0).unwrap();
    assert_eq!(HttpProvider::new(&r).unwrap().kind(), "responses");
    let e = FileConfig::parse("[providers.work]\nkind = \"gemini\"\n", std::path::Path::new("/c.toml")).unwrap_err();
    let e = e.to_string();
    assert!(e.starts_with("/c.toml: providers.work.kind must be one of openai, anthropic, responses"), "{e}");
    assert!(e.contains("\"gemini\""), "{e}");
}

/// Answers Game-of-24 prompts from a Responses request: two valid steps for a propose
/// prompt, "sure" otherwise.
fn game24(seen: &Seen) -> Reply {
    if seen.path != "/v1/responses" {
        return Reply::json(404, r#"{"error":{"message":"only /v1/responses here"}}"#);
    }
    let input = seen.body["input"].as_array().cloned().unwrap_or_default();
    let mut prompt: Vec<&str> = seen.body["instructions"].as_str().into_iter().collect();
    prompt.extend(input.iter().filter_map(|m| m["content"].as_str()));
    Reply::json(200, response(&support::game24_text(&prompt.join("\n"), "sure"), "completed"))
}

#[test]
fn a_whole_run_speaks_the_responses_api() {
    let server = FakeServer::start(|_, seen| game24(seen));
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = support::isolated(dir.path(), Some(KEY));
    let out = cmd
        .args(["run", "--task", "game24", "--method", "tot-bfs", "--input", "4 5 6 10", "--json"])
        .args(["--provider", "openai-responses", "--model", "gpt-5-mini", "--base-url", &server.url])
        .args(["--record", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let summary = support::last_json(&out);
    assert!(summary.get("failed_calls").is_none_or(|n| n == 0), "{summary}");
    // The fake answers "no idea" once one number is left; every value sample is read.
    assert_eq!(summary["reply_health"]["value_samples"]["bad"], 0, "{summary}");
    let calls = summary["llm_calls"].as_u64().unwrap();
    assert!(calls > 3, "{summary}");
    let seen = server.seen();
    assert!(seen.iter().all(|s| s.path == "/v1/responses"), "only the Responses endpoint is used");
    assert!(seen.len() as u64 >= calls, "samples are one request each");
    assert!(!stderr.contains(KEY) && !String::from_utf8_lossy(&out.stdout).contains(KEY));
    // The session replays to the same figures, with no server.
    drop(server);
    let mut files = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path());
    let session = files.find(|p| p.extension().is_some_and(|x| x == "jsonl")).expect("a session");
    let again = support::isolated(dir.path(), None)
        .args(["replay", session.to_str().unwrap(), "--headless", "--json"])
        .output()
        .unwrap();
    let mut replayed = support::summary(&again);
    let mut ran = summary.clone();
    for v in [&mut replayed, &mut ran] {
        v.as_object_mut().unwrap().remove("wall_ms");
    }
    assert_eq!(replayed["solved"], ran["solved"]);
    assert_eq!(
        (replayed["llm_calls"].clone(), replayed["reply_health"].clone()),
        (ran["llm_calls"].clone(), ran["reply_health"].clone())
    );
}
