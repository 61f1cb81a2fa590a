//! Reasoning models (issue 50): each API shape's thinking — OpenAI's reasoning models
//! (no temperature, `max_completion_tokens`, `reasoning_effort`, reasoning tokens in the
//! usage), vLLM and DeepSeek's `reasoning_content`, a model served raw with `<think>`
//! tags, Anthropic's extended thinking (thinking and redacted blocks with signatures)
//! and the Responses API's reasoning items — drives a whole tree search with no failed
//! call, the thinking recorded in the session and never read as an answer, reasoning
//! tokens counted apart, and the session replaying to the same figures with no server.

use crate::support;

use serde_json::{json, Value};
use support::{FakeServer, Reply, Seen};

const KEY: &str = "sk-reasoning-test-0123456789";

/// What thinking that was read as a reply would break: a proposal naming numbers the
/// puzzle does not have (counted as unreadable) and a value word.
const MISLEADING: &str = "Let me see. 3 * 8 = 24 (left: 4 5 24)\nimpossible?\nWait, 4 + 5 = 9 is better.";

/// The prompt of a request of any of the three APIs.
fn prompt(seen: &Seen) -> String {
    let mut parts: Vec<String> = Vec::new();
    for key in ["system", "instructions"] {
        parts.extend(seen.body[key].as_str().map(str::to_string));
    }
    for key in ["messages", "input"] {
        for m in seen.body[key].as_array().into_iter().flatten() {
            parts.extend(m["content"].as_str().map(str::to_string));
        }
    }
    parts.join("\n")
}

/// The Game-of-24 answer a request wants (see `support::game24_text`).
fn answer(seen: &Seen) -> String {
    support::game24_text(&prompt(seen), "sure")
}

struct Ran {
    summary: Value,
    stderr: String,
    session: String,
    replayed: Value,
}

/// `thoughtscope run` of tot-bfs on one puzzle against `server`, recorded; then the
/// session replayed headless with no server.
fn run(server: FakeServer, provider: &[&str]) -> (Ran, Vec<Seen>) {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("s.jsonl");
    let out = support::isolated(dir.path(), Some(KEY))
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["run", "--task", "game24", "--method", "tot-bfs", "--input", "4 5 6 10", "--json"])
        .args(["--base-url", &server.url, "--retries", "1"])
        .args(provider)
        .args(["--record", rec.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let summary = support::last_json(&out);
    let seen = server.seen();
    drop(server);
    let again = support::isolated(dir.path(), None)
        .args(["replay", rec.to_str().unwrap(), "--headless", "--json"])
        .output()
        .unwrap();
    let replayed = support::summary(&again);
    let session = std::fs::read_to_string(&rec).unwrap();
    (Ran { summary, stderr, session, replayed }, seen)
}

/// What every shape must give: no failed call, every proposal and value read from the
/// answer alone, the thinking in the session, reasoning tokens counted and replayed.
fn check(ran: &Ran, thinking_in_session: &str) {
    let s = &ran.summary;
    assert!(s.get("failed_calls").is_none_or(|n| n == 0), "{s}\n{}", ran.stderr);
    // The same answers with no thinking read the same: every proposal line and value
    // sample counted as the plain model's are (the fake has no idea at the last step).
    let (plain, _) = run(
        FakeServer::start(|_, seen| Reply::chat(&[&answer(seen)], Some((50, 10)))),
        &["--provider", "vllm", "--model", "plain"],
    );
    assert_eq!(s["reply_health"], plain.summary["reply_health"], "thinking was read as a reply");
    assert!(!s["reply_health"].to_string().contains("3 * 8"), "{s}");
    assert_eq!(s["reply_health"]["value_samples"]["bad"], 0, "{s}");
    assert!(s["llm_calls"].as_u64().unwrap() > 3, "{s}");
    let reasoning = s["reasoning_tokens"].as_u64().unwrap_or(0);
    assert!(reasoning > 0 && reasoning < s["completion_tokens"].as_u64().unwrap(), "{s}");
    assert!(ran.session.contains(thinking_in_session), "the thinking is recorded verbatim");
    assert!(!ran.session.contains(KEY) && !ran.stderr.contains(KEY));
    for key in ["solved", "llm_calls", "reply_health", "reasoning_tokens", "completion_tokens"] {
        assert_eq!(ran.replayed[key], s[key], "{key} after replay");
    }
}

fn chat(content: &str, message_extra: Value, usage: Value) -> Reply {
    let mut message = json!({"role": "assistant", "content": content});
    if let (Some(m), Some(extra)) = (message.as_object_mut(), message_extra.as_object()) {
        m.extend(extra.clone());
    }
    let body =
        json!({"model": "m", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage});
    Reply::json(200, body.to_string())
}

#[test]
fn an_openai_reasoning_model_gets_no_temperature_and_its_reasoning_tokens_are_counted() {
    // A server that answers as OpenAI's reasoning models do: 400 on temperature or max_tokens.
    let server = FakeServer::start(|_, seen| {
        for refused in ["temperature", "max_tokens"] {
            if seen.body.get(refused).is_some() {
                let e = format!("Unsupported parameter: '{refused}' is not supported with this model.");
                return Reply::json(400, json!({"error": {"message": e, "type": "invalid_request_error"}}).to_string());
            }
        }
        let usage = json!({"prompt_tokens": 50, "completion_tokens": 90,
                           "completion_tokens_details": {"reasoning_tokens": 64}});
        chat(&answer(seen), json!({}), usage)
    });
    let (ran, seen) = run(server, &["--provider", "openai", "--model", "o4-mini", "--reasoning-effort", "low"]);
    check(&ran, "o4-mini is a reasoning model");
    assert!(seen.iter().all(|s| s.body["reasoning_effort"] == "low" && s.body.get("temperature").is_none()));
    assert!(seen.iter().any(|s| s.body.get("max_completion_tokens").is_some()));
    assert!(ran.stderr.contains("note: temperature is not sent: o4-mini is a reasoning model"), "{}", ran.stderr);
    // Each request's reasoning tokens (samples are one request each: the fake gives one choice).
    let posts = seen.iter().filter(|s| s.method == "POST").count() as u64;
    assert_eq!(ran.summary["reasoning_tokens"].as_u64(), Some(64 * posts));
}

#[test]
fn reasoning_content_beside_the_content_is_thinking() {
    let server = FakeServer::start(|_, seen| {
        let usage = json!({"prompt_tokens": 50, "completion_tokens": 40});
        chat(&answer(seen), json!({"reasoning_content": MISLEADING}), usage)
    });
    let (ran, _) = run(server, &["--provider", "vllm", "--model", "deepseek-r1"]);
    check(&ran, r#""kind":"field""#);
    assert!(ran.session.contains("Wait, 4 + 5 = 9 is better."));
}

#[test]
fn a_model_served_raw_has_its_think_tags_taken_off_before_any_reader() {
    let server = FakeServer::start(|_, seen| {
        let text = format!("<think>\n{MISLEADING}\n</think>\n\n{}", answer(seen));
        Reply::chat(&[&text], Some((50, 60)))
    });
    let (ran, _) = run(server, &["--provider", "llamacpp", "--model", "qwen3-8b"]);
    check(&ran, r#""kind":"tag""#);
}

#[test]
fn anthropic_extended_thinking_is_asked_for_and_its_blocks_are_kept_whole() {
    let server = FakeServer::start(|_, seen| {
        let body = json!({
            "type": "message", "role": "assistant", "model": "claude-x",
            "content": [
                {"type": "thinking", "thinking": MISLEADING, "signature": "sig-EqQBCgIYAhIM"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                {"type": "text", "text": answer(seen)}
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 60, "output_tokens": 120}
        });
        Reply::json(200, body.to_string())
    });
    let (ran, seen) =
        run(server, &["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--thinking-budget", "2048"]);
    check(&ran, "sig-EqQBCgIYAhIM");
    assert!(ran.session.contains("EmwKAhgBEgy3va3pzix"), "redacted thinking is kept to be passed back");
    for s in &seen {
        assert_eq!(s.body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert!(s.body.get("temperature").is_none(), "no temperature with thinking");
        assert!(s.body["max_tokens"].as_u64().unwrap() > 2048, "max_tokens holds the budget and the answer");
    }
}

#[test]
fn responses_reasoning_items_are_thinking_and_the_effort_is_asked() {
    let server = FakeServer::start(|_, seen| {
        let body = json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [
                {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAAB-enc",
                 "summary": [{"type": "summary_text", "text": MISLEADING}]},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": answer(seen), "annotations": []}]}
            ],
            "usage": {"input_tokens": 40, "output_tokens": 70, "output_tokens_details": {"reasoning_tokens": 48}}
        });
        Reply::json(200, body.to_string())
    });
    let (ran, seen) =
        run(server, &["--provider", "openai-responses", "--model", "gpt-5-mini", "--reasoning-effort", "high"]);
    check(&ran, "gAAAAB-enc");
    for s in &seen {
        assert_eq!(s.body["reasoning"], json!({"effort": "high", "summary": "auto"}));
        assert_eq!(s.body["include"], json!(["reasoning.encrypted_content"]));
        assert!(s.body.get("temperature").is_none());
    }
}

#[test]
fn a_reply_that_is_all_thinking_is_said_plainly_and_not_retried() {
    let server = FakeServer::start(|_, _| {
        let body = json!({"model": "m", "choices": [{"index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": "<think>\nHmm, 4 and 5, then"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 100}});
        Reply::json(200, body.to_string())
    });
    let dir = tempfile::tempdir().unwrap();
    let out = support::isolated(dir.path(), None)
        .args(["run", "--task", "game24", "--method", "cot", "--samples", "1", "--input", "4 5 6 10", "--json"])
        .args(["--provider", "llamacpp", "--model", "qwen3", "--base-url", &server.url, "--retries", "3"])
        .output()
        .unwrap();
    let summary = support::last_json(&out);
    let posts = server.seen().iter().filter(|s| s.method == "POST").count();
    assert_eq!(posts, 1, "retrying cannot help a reply cut while thinking: {summary}");
    assert_eq!(summary["failed_calls"], 1, "{summary}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("spent its whole completion limit thinking") && said.contains("lower --reasoning-effort"),
        "{said}"
    );
}

#[test]
fn a_wrong_reasoning_setting_is_one_plain_line() {
    let dir = tempfile::tempdir().unwrap();
    for (args, said) in [
        (
            &["--provider", "openai", "--reasoning-effort", "extreme"][..],
            "--reasoning-effort must be one of none, minimal",
        ),
        (
            &["--provider", "openai", "--thinking-budget", "4000"][..],
            "--thinking-budget is Anthropic's extended thinking",
        ),
        (
            &["--provider", "anthropic", "--reasoning-effort", "low"][..],
            "--reasoning-effort is not part of the anthropic API",
        ),
        (&["--provider", "anthropic", "--thinking-budget", "100"][..], "--thinking-budget must be from 1024"),
        (&["--provider", "anthropic", "--think", "off"][..], "--think switches an open model's thinking"),
        (&["--provider", "openai", "--think", "maybe"][..], "invalid value 'maybe' for '--think <on|off>'"),
    ] {
        let out = support::isolated(dir.path(), Some(KEY))
            .env("ANTHROPIC_API_KEY", KEY)
            .args(["run", "--task", "game24", "--method", "cot", "--input", "4 5 6 10", "--model", "m"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(said), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
}

#[tokio::test]
async fn a_streamed_reply_has_its_think_tags_taken_off_too() {
    use thoughtscope::llm::config::{resolve, FileConfig, ProviderOptions};
    use thoughtscope::llm::{CallOptions, Provider};
    use thoughtscope::protocol::{LlmRequest, Message, Purpose, ThinkingKind};
    let server = FakeServer::start(|_, _| {
        Reply::chat_stream(&["<thi", "nk>Hmm, 4 + 5.</th", "ink>\n", "4 + 5 = 9 (left: 6 9 10)"], false)
    });
    let args =
        ProviderOptions { model: Some("qwen3".into()), base_url: Some(server.url.clone()), ..Default::default() };
    let r = resolve("llamacpp", &args, &FileConfig::default(), &|_| None, 1).unwrap();
    let p = thoughtscope::llm::api::HttpProvider::new(&r).unwrap();
    let request = LlmRequest {
        purpose: Purpose::Propose,
        messages: vec![Message::user("4 5 6 10")],
        n: 1,
        temperature: 0.7,
        max_tokens: None,
        stop: vec![],
        context: Value::Null,
        nonce: 0,
        tools: vec![],
        sampling: Default::default(),
    };
    let shown = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = std::sync::Arc::clone(&shown);
    let deltas: thoughtscope::llm::DeltaFn = std::sync::Arc::new(move |_, piece| {
        if let thoughtscope::llm::Streamed::Text(t) = piece {
            sink.lock().unwrap().push_str(t);
        }
    });
    let reply = p.complete(&request, CallOptions::streaming(deltas)).await.unwrap();
    let c = &reply.completions[0];
    assert_eq!(c.text.as_str(), "4 + 5 = 9 (left: 6 9 10)");
    assert_eq!((c.thinking[0].kind, c.thinking[0].text.as_str()), (ThinkingKind::Tag, "Hmm, 4 + 5."));
    assert!(reply.usage.reasoning_tokens > 0 && reply.usage.estimated, "no usage in the stream: estimated");
}
