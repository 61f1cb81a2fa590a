//! The HTTP providers against a local fault-injecting server: retries (and how many),
//! Retry-After, timeouts, the errors people see, malformed and cut replies, servers
//! that ignore `n`, streaming through the driver, Anthropic's request shape, and native
//! tool calling (tools sent, tool calls read, whole and streamed) with both.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{FakeServer, Reply};
use thoughtscope::engine::Effect;

use thoughtscope::llm::api::HttpProvider;
use thoughtscope::llm::cache::ResponseCache;
use thoughtscope::llm::config::{resolve, FileConfig, ProviderOptions, Resolved};
use thoughtscope::llm::{CallOptions, DeltaFn, Provider, Streamed};
use thoughtscope::protocol::{CallErrorKind, LlmRequest, Message, Purpose, ToolDef};
use thoughtscope::runtime::Driver;

const KEY: &str = "sk-fault-test-0123456789";

fn resolved(name: &str, url: &str, tweak: impl FnOnce(&mut ProviderOptions)) -> Resolved {
    let mut args = ProviderOptions {
        model: Some("fake-model".into()),
        base_url: Some(url.into()),
        timeout: Some(5.0),
        retries: Some(3),
        ..Default::default()
    };
    tweak(&mut args);
    let env = |k: &str| matches!(k, "OPENAI_API_KEY" | "ANTHROPIC_API_KEY").then(|| KEY.to_string());
    let mut r = resolve(name, &args, &FileConfig::default(), &env, 11).expect("profile resolves");
    // Short backoff so retries take milliseconds.
    r.http.backoff_base = Duration::from_millis(20);
    r.http.backoff_max = Duration::from_millis(100);
    r
}

fn openai(server: &FakeServer) -> HttpProvider {
    HttpProvider::new(&resolved("openai", &server.url, |_| {})).unwrap()
}

fn request(n: u32) -> LlmRequest {
    LlmRequest {
        purpose: Purpose::Value,
        messages: vec![Message::user("Evaluate if given numbers can reach 24: 4 4 10")],
        n,
        temperature: 0.7,
        max_tokens: Some(50),
        stop: vec![],
        context: serde_json::Value::Null,
        nonce: 0,
        tools: vec![],
        sampling: Default::default(),
    }
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_answered() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::Json {
            status: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#.into(),
        },
        _ => Reply::chat(&["sure"], Some((20, 1))),
    });
    let p = openai(&server);
    let started = Instant::now();
    let reply = p.complete(&request(1), CallOptions::default()).await.expect("answered after the wait");
    assert_eq!(reply.completions[0].text, "sure");
    assert_eq!(server.requests(), 2);
    assert_eq!(p.http().retries_made.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "waited the server's Retry-After: {:?}",
        started.elapsed()
    );
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.estimated), (20, 1, false));
}

#[tokio::test]
async fn an_absurd_retry_after_fails_the_call_instead_of_panicking() {
    for (name, value) in [("retry-after", "1e20"), ("retry-after-ms", "1e30"), ("retry-after", "inf")] {
        let server = FakeServer::start(move |_, _| Reply::Json {
            status: 429,
            headers: vec![(name.into(), value.into())],
            body: r#"{"error":{"message":"Rate limit reached"}}"#.into(),
        });
        let err = openai(&server)
            .complete(&request(1), CallOptions::default())
            .await
            .expect_err("the wait is longer than a run waits");
        assert_eq!(err.kind, CallErrorKind::RateLimited, "{name}: {value}");
        assert!(err.message.contains("the server asks to retry after 86400 s"), "{name}: {value}: {err}");
        assert_eq!(server.requests(), 1, "{name}: {value}: no retry");
    }
    // NaN and negative waits are ignored: the usual backoff applies.
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::Json {
            status: 429,
            headers: vec![("retry-after".into(), "-5".into()), ("retry-after-ms".into(), "NaN".into())],
            body: "{}".into(),
        },
        _ => Reply::chat(&["sure"], Some((20, 1))),
    });
    let reply = openai(&server).complete(&request(1), CallOptions::default()).await.expect("retried after the backoff");
    assert_eq!(reply.completions[0].text, "sure");
}

#[tokio::test]
async fn a_500_is_retried_and_a_persistent_one_gives_up_quoting_the_server() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::json(500, r#"{"error":{"message":"upstream hiccup"}}"#),
        _ => Reply::chat(&["likely"], Some((20, 1))),
    });
    let reply = openai(&server).complete(&request(1), CallOptions::default()).await.unwrap();
    assert_eq!(reply.completions[0].text, "likely");
    assert_eq!(server.requests(), 2);

    let server = FakeServer::start(|_, _| Reply::json(503, r#"{"error":{"message":"model is loading"}}"#));
    let err = openai(&server).complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!(server.requests(), 4, "one attempt and three retries");
    assert_eq!(err.kind, CallErrorKind::Server);
    assert!(err.message.contains("HTTP 503") && err.message.contains("model is loading"), "{err}");
    assert!(err.message.contains("gave up after 4 attempts"), "{err}");
}

#[tokio::test]
async fn a_401_fails_at_once_with_the_servers_words_and_never_the_key() {
    let server = FakeServer::start(|_, seen| {
        // Like OpenAI, echo (part of) the key back.
        let sent = seen.header("authorization").unwrap_or("").trim_start_matches("Bearer ").to_string();
        Reply::json(
            401,
            format!(r#"{{"error":{{"message":"Incorrect API key provided: {sent}","type":"invalid_request_error"}}}}"#),
        )
    });
    let err = openai(&server).complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!(server.requests(), 1, "authentication errors are not retried");
    assert_eq!(err.kind, CallErrorKind::Auth);
    assert!(err.message.contains("HTTP 401 Unauthorized"), "{err}");
    assert!(err.message.contains("Incorrect API key provided: ***"), "{err}");
    assert!(err.message.contains("OPENAI_API_KEY"), "names where the key came from: {err}");
    assert!(!err.message.contains(KEY), "{err}");
    assert_eq!(server.seen()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));

    let server = FakeServer::start(|_, _| Reply::json(404, r#"{"error":{"message":"model 'nope' not found"}}"#));
    let err = openai(&server).complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!((err.kind.as_str(), server.requests()), ("not_found", 1));
    assert!(err.message.contains("model 'nope' not found") && err.message.contains("--model"), "{err}");
}

#[tokio::test]
async fn a_hanging_server_times_out_each_attempt() {
    let server = FakeServer::start(|_, _| Reply::Hang);
    let r = resolved("openai", &server.url, |a| {
        a.timeout = Some(0.4);
        a.retries = Some(1);
    });
    let p = HttpProvider::new(&r).unwrap();
    let started = Instant::now();
    let err = p.complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!(err.kind, CallErrorKind::Timeout);
    assert!(err.message.contains("no reply within 0.4 s") && err.message.contains("gave up after 2 attempts"), "{err}");
    assert_eq!(server.requests(), 2);
    assert!(started.elapsed() < Duration::from_secs(5), "bounded by the timeout: {:?}", started.elapsed());
}

#[tokio::test]
async fn nothing_listening_is_a_connection_error_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let r = resolved("openai", &format!("http://127.0.0.1:{port}/v1"), |a| a.retries = Some(2));
    let err = HttpProvider::new(&r).unwrap().complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!(err.kind, CallErrorKind::Connect);
    assert!(err.message.contains("could not connect") && err.message.contains("gave up after 3 attempts"), "{err}");
}

#[tokio::test]
async fn malformed_truncated_and_choiceless_replies_are_retried() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::json(200, r#"{"choices":[{"message":{"content":"su"#),
        1 => Reply::json(200, r#"{"id":"x","choices":[]}"#),
        2 => Reply::Raw(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n<html>hi".to_vec(),
        ),
        3 => Reply::json(200, r#"{"error":{"message":"upstream overloaded"}}"#),
        _ => Reply::chat(&["sure"], None),
    });
    let p = HttpProvider::new(&resolved("openai", &server.url, |a| a.retries = Some(4))).unwrap();
    let ok = p.complete(&request(1), CallOptions::default()).await.expect("answered once the faults pass");
    assert_eq!(ok.completions[0].text, "sure");
    assert_eq!(
        server.requests(),
        5,
        "a malformed body, an empty choice list, a cut body and an error in a 200 are each retried"
    );
    assert_eq!(p.http().retries_made.load(std::sync::atomic::Ordering::SeqCst), 4);
    assert!(ok.usage.estimated, "no usage from the server: estimated and marked");
    assert!(ok.usage.prompt_tokens > 0 && ok.usage.completion_tokens > 0);

    // Within --retries: a server that always sends junk fails the call, naming the fault.
    let server = FakeServer::start(|_, _| Reply::json(200, r#"{"choices":[{"message":{"content":"su"#));
    let e = openai(&server).complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!(e.kind, CallErrorKind::Malformed, "{e}");
    assert!(e.message.contains("not valid JSON") && e.message.contains("gave up after 4 attempts"), "{e}");
    assert_eq!(server.requests(), 4, "one attempt and three retries");
}

#[tokio::test]
async fn a_stream_cut_before_any_text_is_retried() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::Sse {
            events: vec![r#"{"model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}"#.into()],
            cut: true,
        },
        _ => Reply::chat_stream(&["4 + 4", " = 8"], false),
    });
    let p = openai(&server);
    let deltas: DeltaFn = Arc::new(|_, _: Streamed<'_>| {});
    let reply = p.complete(&request(1), CallOptions::streaming(deltas)).await.expect("the retry streams the reply");
    assert_eq!(reply.completions[0].text, "4 + 4 = 8");
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn a_huge_reply_is_refused_without_holding_it() {
    // 40 MB announced and sent (the cap is 16 MB): the call fails at once, naming the server.
    let huge = format!(r#"{{"choices":[{{"message":{{"content":"{}"}}}}]}}"#, "x".repeat(40 << 20));
    let body = Arc::new(huge);
    let b = Arc::clone(&body);
    let server = FakeServer::start(move |_, _| Reply::json(200, b.as_str()));
    let e = openai(&server).complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!(e.kind, CallErrorKind::TooLarge, "{e}");
    assert!(e.message.contains("larger than the 16 MB limit") && e.message.contains(&server.url), "{e}");
    assert_eq!(server.requests(), 1, "not retried: it would come back as big");

    // Without a content-length (a chunked stream) the reading stops at the cap too.
    let r = resolved("openai", &server.url, |_| {});
    let mut small = r.clone();
    small.http.max_response_bytes = 1000;
    let events: Vec<String> = (0..50)
        .map(|_| format!(r#"{{"choices":[{{"index":0,"delta":{{"content":"{}"}}}}]}}"#, "y".repeat(100)))
        .collect();
    let server = FakeServer::start(move |_, _| Reply::Sse { events: events.clone(), cut: false });
    small.base_url = server.url.clone();
    let p = HttpProvider::new(&small).unwrap();
    let e = p.complete(&request(1), CallOptions::streaming(Arc::new(|_, _: Streamed<'_>| {}))).await.unwrap_err();
    assert_eq!(e.kind, CallErrorKind::TooLarge, "{e}");
    assert!(e.message.contains("larger than the 1000 bytes limit"), "{e}");
}

#[tokio::test]
async fn a_stream_cut_midway_is_retried_and_the_watcher_forgets_what_it_was_shown() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::chat_stream(&["4 + 4", " = 8"], true),
        _ => Reply::chat_stream(&["4 + 4", " = 8 ", "(left: 8 10)"], false),
    });
    let p = openai(&server);
    // What a watcher shows of sample 0: text appended, cleared on a restart.
    let shown = Arc::new(Mutex::new((String::new(), 0)));
    let g = shown.clone();
    let deltas: DeltaFn = Arc::new(move |i, piece: Streamed<'_>| {
        assert_eq!(i, 0);
        let mut s = g.lock().unwrap();
        match piece {
            Streamed::Text(t) => s.0.push_str(t),
            Streamed::Restart => {
                assert_eq!(s.0, "4 + 4 = 8", "the pieces before the cut were shown");
                s.0.clear();
                s.1 += 1;
            }
        }
    });
    let reply = p.complete(&request(1), CallOptions::streaming(deltas)).await.unwrap();
    assert_eq!(server.requests(), 2, "the cut stream is asked again");
    assert_eq!(reply.completions[0].text, "4 + 4 = 8 (left: 8 10)");
    assert_eq!(reply.completions[0].finish_reason.as_deref(), Some("stop"));
    let (text, restarts) = shown.lock().unwrap().clone();
    assert_eq!(
        (text.as_str(), restarts),
        (reply.completions[0].text.as_str(), 1),
        "shown once, not glued to the retry"
    );
    assert!(reply.usage.estimated);
    let body = &server.seen()[1].body;
    assert_eq!((body["stream"].as_bool(), body["stream_options"]["include_usage"].as_bool()), (Some(true), Some(true)));
}

/// A stream cut on every try fails as truncated, naming the usual cause and its fixes.
#[tokio::test]
async fn a_stream_cut_on_every_try_fails_naming_the_cause() {
    let server = FakeServer::start(|_, _| Reply::chat_stream(&["4 + 4", " = 8"], true));
    let p = openai(&server);
    let err = p.complete(&request(1), CallOptions::streaming(Arc::new(|_, _: Streamed<'_>| {}))).await.unwrap_err();
    assert_eq!(err.kind, CallErrorKind::Truncated, "{err}");
    assert!(err.message.contains("after 9 characters") && err.message.contains("--interrupt_requests"), "{err}");
    assert!(server.requests() > 1, "retried before failing");
}

#[tokio::test]
async fn a_server_ignoring_n_is_asked_once_per_sample() {
    let server = FakeServer::start(|i, _| Reply::chat(&[&format!("sample {i}")], Some((30, 2))));
    let p = openai(&server);
    assert_eq!(p.honours_n(), None);
    let reply = p.complete(&request(3), CallOptions::default()).await.unwrap();
    let texts: Vec<&str> = reply.completions.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["sample 0", "sample 1", "sample 2"]);
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (90, 6), "usage of all three requests");
    assert_eq!(p.honours_n(), Some(false));
    let seen = server.seen();
    assert_eq!(seen[0].body["n"], 3);
    assert!(seen[1].body.get("n").is_none() && seen[2].body.get("n").is_none());
    let seeds: Vec<u64> = seen.iter().map(|s| s.body["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, [11, 12, 13], "each sample its own seed");
    // Now known: the next call goes straight to one request per sample.
    let reply = p.complete(&request(2), CallOptions::default()).await.unwrap();
    assert_eq!(reply.completions.len(), 2);
    assert_eq!(server.requests(), 5);
    assert!(server.seen()[3].body.get("n").is_none());

    // A server that honours n is asked once.
    let server = FakeServer::start(|_, s| {
        let n = s.body["n"].as_u64().unwrap_or(1) as usize;
        let texts: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
        Reply::chat(&texts.iter().map(String::as_str).collect::<Vec<_>>(), Some((30, 2)))
    });
    let p = openai(&server);
    assert_eq!(p.complete(&request(5), CallOptions::default()).await.unwrap().completions.len(), 5);
    assert_eq!((server.requests(), p.honours_n()), (1, Some(true)));
}

#[tokio::test]
async fn requests_carry_the_parameters() {
    let server = FakeServer::start(|_, _| Reply::chat(&["x"], Some((1, 1))));
    let p = openai(&server);
    let mut r = request(1);
    r.messages.insert(0, Message::system("be brief"));
    r.stop = vec!["\n".into()];
    r.temperature = 0.0;
    p.complete(&r, CallOptions::default()).await.unwrap();
    let s = &server.seen()[0];
    assert_eq!((s.method.as_str(), s.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(s.body["model"], "fake-model");
    assert_eq!(s.body["messages"][0], serde_json::json!({"role": "system", "content": "be brief"}));
    assert_eq!(s.body["messages"][1]["role"], "user");
    assert_eq!((s.body["max_tokens"].as_u64(), s.body["temperature"].as_f64()), (Some(50), Some(0.0)));
    assert_eq!(s.body["stop"], serde_json::json!(["\n"]));
    assert!(s.body.get("n").is_none() && s.body.get("stream").is_none());
}

#[tokio::test]
async fn a_requests_per_minute_limit_spaces_requests() {
    let server = FakeServer::start(|_, _| Reply::chat(&["x"], Some((1, 1))));
    let p = HttpProvider::new(&resolved("openai", &server.url, |a| a.rpm = Some(600))).unwrap();
    let started = Instant::now();
    let mut req = request(1);
    for i in 0..3 {
        req.nonce = i;
        p.complete(&req, CallOptions::default()).await.unwrap();
    }
    assert!(started.elapsed() >= Duration::from_millis(190), "600/min = one per 100 ms: {:?}", started.elapsed());
}

#[tokio::test]
async fn the_driver_streams_deltas_tagged_with_their_call() {
    let server = FakeServer::start(|_, s| {
        let which = if s.prompt().contains("first") { "one" } else { "two" };
        Reply::chat_stream(&[which, "!"], false)
    });
    let provider: Arc<dyn Provider> = Arc::new(openai(&server));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut driver =
        Driver::new(provider, Arc::new(tokio::sync::Semaphore::new(2)), Arc::new(Mutex::new(ResponseCache::new())))
            .with_deltas(tx);
    let mut first = request(1);
    first.messages = vec![Message::user("first")];
    let mut second = request(1);
    second.messages = vec![Message::user("second")];
    driver.execute(&[Effect::CallLlm { call: 7, request: first }, Effect::CallLlm { call: 8, request: second }]);
    let mut replies = Vec::new();
    while let Some((reply, _)) = driver.next_reply().await {
        replies.push((reply.call, reply.result.unwrap().completions[0].text.clone()));
    }
    assert_eq!(replies, vec![(7, "one!".into()), (8, "two!".into())]);
    drop(driver);
    let mut by_call = std::collections::BTreeMap::<u64, String>::new();
    while let Some(d) = rx.recv().await {
        assert_eq!(d.sample, 0);
        by_call.entry(d.call).or_default().push_str(&d.text);
    }
    assert_eq!(by_call.get(&7).map(String::as_str), Some("one!"));
    assert_eq!(by_call.get(&8).map(String::as_str), Some("two!"));
}

fn anthropic_reply(text: &str) -> Reply {
    Reply::json(
        200,
        serde_json::json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 15, "output_tokens": 3}
        })
        .to_string(),
    )
}

#[tokio::test]
async fn anthropic_overloaded_is_retried_and_requests_have_its_shape() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::json(529, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
        _ => anthropic_reply("sure\nmore"),
    });
    let p = HttpProvider::new(&resolved("anthropic", &server.url, |_| {})).unwrap();
    let mut r = request(2);
    r.messages.insert(0, Message::system("judge"));
    r.stop = vec!["\n".into(), "Input:".into()];
    let reply = p.complete(&r, CallOptions::default()).await.unwrap();
    assert_eq!(server.requests(), 3, "one overloaded attempt, then one request per sample");
    assert_eq!(reply.completions.len(), 2);
    assert_eq!(reply.completions[0].text, "sure", "whitespace stops are applied locally");
    assert_eq!(reply.completions[0].finish_reason.as_deref(), Some("stop"));
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.estimated), (30, 6, false));
    let s = &server.seen()[1];
    assert_eq!(s.path, "/v1/messages");
    assert_eq!(s.header("x-api-key"), Some(KEY));
    assert_eq!(s.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(s.body["system"], "judge");
    assert_eq!(s.body["max_tokens"], 50);
    assert_eq!(s.body["stop_sequences"], serde_json::json!(["Input:"]));
    assert_eq!(s.body["messages"].as_array().unwrap().len(), 1);

    let server = FakeServer::start(|_, _| {
        Reply::json(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#)
    });
    let p = HttpProvider::new(&resolved("anthropic", &server.url, |_| {})).unwrap();
    let err = p.complete(&request(1), CallOptions::default()).await.unwrap_err();
    assert_eq!((err.kind.as_str(), server.requests()), ("auth", 1));
    assert!(
        err.message.contains("invalid x-api-key (authentication_error)") && err.message.contains("ANTHROPIC_API_KEY")
    );
}

#[tokio::test]
async fn anthropic_streams() {
    let events = [
        r#"{"type":"message_start","message":{"model":"claude-test","usage":{"input_tokens":11,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"impos"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"sible"}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":2}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let server = FakeServer::start(move |i, _| Reply::Sse {
        events: events.iter().take(if i == 0 { 6 } else { 3 }).map(|s| s.to_string()).collect(),
        cut: i != 0,
    });
    let p = HttpProvider::new(&resolved("anthropic", &server.url, |_| {})).unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let s2 = seen.clone();
    let d: DeltaFn = Arc::new(move |_, piece: Streamed<'_>| {
        if let Streamed::Text(t) = piece {
            s2.lock().unwrap().push_str(t);
        }
    });
    let reply = p.complete(&request(1), CallOptions::streaming(d.clone())).await.unwrap();
    assert_eq!(reply.completions[0].text, "impossible");
    assert_eq!(reply.completions[0].finish_reason.as_deref(), Some("length"));
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (11, 2));
    assert_eq!(*seen.lock().unwrap(), "impossible");
    assert_eq!(p.complete(&request(1), CallOptions::streaming(d)).await.unwrap_err().kind, CallErrorKind::Truncated);
}

/// A ReAct step request offering two tools natively.
fn tool_request() -> LlmRequest {
    let tool = |name: &str, arg: &str| ToolDef {
        name: name.into(),
        description: format!("{name} something"),
        parameters: json!({"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}),
    };
    LlmRequest {
        purpose: Purpose::Act,
        messages: vec![Message::user("Question: where was Ilse Varga born? Think, then call one tool.")],
        n: 1,
        temperature: 0.0,
        max_tokens: Some(200),
        stop: vec!["\nObservation".into()],
        context: serde_json::Value::Null,
        nonce: 0,
        tools: vec![tool("search", "entity"), tool("finish", "answer")],
        sampling: Default::default(),
    }
}

#[tokio::test]
async fn openai_tools_are_sent_and_tool_calls_read() {
    let server = FakeServer::start(|_, _| {
        let message = json!({
            "role": "assistant",
            "content": "I need to find Ilse Varga first.",
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "search", "arguments": "{\"entity\": \"Ilse Varga\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "finish", "arguments": "{answer: oops"}}
            ]
        });
        let body = json!({"model": "fake-model", "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                          "usage": {"prompt_tokens": 40, "completion_tokens": 12}});
        Reply::json(200, body.to_string())
    });
    let reply = openai(&server)
        .complete(&tool_request(), CallOptions::default())
        .await
        .expect("a tool_calls finish is a normal reply");
    let s = &server.seen()[0];
    assert_eq!(s.body["tools"].as_array().map(Vec::len), Some(2));
    assert_eq!(s.body["tools"][0]["type"], "function");
    assert_eq!(s.body["tools"][0]["function"]["name"], "search");
    assert_eq!(s.body["tools"][0]["function"]["description"], "search something");
    assert_eq!(s.body["tools"][0]["function"]["parameters"]["required"], json!(["entity"]));
    assert_eq!(s.body["tool_choice"], "auto");
    let c = &reply.completions[0];
    assert_eq!(c.text, "I need to find Ilse Varga first.");
    assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(c.tool_calls.len(), 2);
    assert_eq!((c.tool_calls[0].id.as_deref(), c.tool_calls[0].name.as_str()), (Some("call_1"), "search"));
    assert_eq!(c.tool_calls[0].arguments, json!({"entity": "Ilse Varga"}), "arguments parsed from their JSON string");
    assert_eq!(c.tool_calls[1].arguments, json!("{answer: oops"), "invalid JSON is kept as the string for the method");
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (40, 12));

    // A request without tools sends none.
    let server = FakeServer::start(|_, _| Reply::chat(&["x"], Some((1, 1))));
    openai(&server).complete(&request(1), CallOptions::default()).await.unwrap();
    let s = &server.seen()[0];
    assert!(s.body.get("tools").is_none() && s.body.get("tool_choice").is_none());
}

#[tokio::test]
async fn openai_streamed_tool_calls_are_put_together() {
    let server = FakeServer::start(|_, _| {
        let events = [
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Find "}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "her."}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                    "function": {"name": "search", "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"enti"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "ty\": \"Ilse Varga\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ];
        let mut events: Vec<String> = events.iter().map(|e| e.to_string()).collect();
        events.push("[DONE]".into());
        Reply::Sse { events, cut: false }
    });
    let seen = Arc::new(Mutex::new(String::new()));
    let s2 = seen.clone();
    let d: DeltaFn = Arc::new(move |_, piece: Streamed<'_>| {
        if let Streamed::Text(t) = piece {
            s2.lock().unwrap().push_str(t);
        }
    });
    let reply = openai(&server).complete(&tool_request(), CallOptions::streaming(d)).await.unwrap();
    assert_eq!(server.seen()[0].body["stream"], true, "replies with tools stream too");
    let c = &reply.completions[0];
    assert_eq!(c.text, "Find her.");
    assert_eq!(*seen.lock().unwrap(), "Find her.", "only the text is streamed as it arrives");
    assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(c.tool_calls.len(), 1);
    assert_eq!(c.tool_calls[0].id.as_deref(), Some("call_a"));
    assert_eq!(c.tool_calls[0].arguments, json!({"entity": "Ilse Varga"}));
}

#[tokio::test]
async fn anthropic_tools_are_sent_and_tool_use_blocks_read() {
    let server = FakeServer::start(|_, _| {
        Reply::json(
            200,
            json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [
                    {"type": "text", "text": "I need to find Ilse Varga first."},
                    {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"entity": "Ilse Varga"}}
                ],
                "stop_reason": "tool_use", "usage": {"input_tokens": 50, "output_tokens": 20}
            })
            .to_string(),
        )
    });
    let p = HttpProvider::new(&resolved("anthropic", &server.url, |_| {})).unwrap();
    let reply = p.complete(&tool_request(), CallOptions::default()).await.expect("a tool_use stop is a normal reply");
    let s = &server.seen()[0];
    assert_eq!(
        s.body["tools"][0],
        json!({"name": "search", "description": "search something",
               "input_schema": {"type": "object", "properties": {"entity": {"type": "string"}}, "required": ["entity"]}})
    );
    assert_eq!(s.body["tools"].as_array().map(Vec::len), Some(2));
    assert_eq!(s.body["stop_sequences"], json!(["\nObservation"]));
    let c = &reply.completions[0];
    assert_eq!(c.text, "I need to find Ilse Varga first.");
    assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(c.tool_calls.len(), 1);
    assert_eq!((c.tool_calls[0].id.as_deref(), c.tool_calls[0].name.as_str()), (Some("toolu_1"), "search"));
    assert_eq!(c.tool_calls[0].arguments, json!({"entity": "Ilse Varga"}));
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (50, 20));
}

#[tokio::test]
async fn anthropic_streamed_tool_use_is_put_together() {
    let events = [
        r#"{"type":"message_start","message":{"model":"claude-test","usage":{"input_tokens":30,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Find her."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"search","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"entity\": \"Ilse"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" Varga\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":25}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let server = FakeServer::start(move |_, _| Reply::Sse {
        events: events.iter().map(|s| s.to_string()).collect(),
        cut: false,
    });
    let p = HttpProvider::new(&resolved("anthropic", &server.url, |_| {})).unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let s2 = seen.clone();
    let d: DeltaFn = Arc::new(move |_, piece: Streamed<'_>| {
        if let Streamed::Text(t) = piece {
            s2.lock().unwrap().push_str(t);
        }
    });
    let reply = p.complete(&tool_request(), CallOptions::streaming(d)).await.unwrap();
    let c = &reply.completions[0];
    assert_eq!((c.text.as_str(), seen.lock().unwrap().as_str()), ("Find her.", "Find her."));
    assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(c.tool_calls.len(), 1);
    assert_eq!((c.tool_calls[0].id.as_deref(), c.tool_calls[0].name.as_str()), (Some("toolu_9"), "search"));
    assert_eq!(c.tool_calls[0].arguments, json!({"entity": "Ilse Varga"}));
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (30, 25));
}

/// A server that ignores `n` gets one request a sample; when a later one fails after its
/// retries, the samples that came are kept with their tokens and the reply says how many
/// were lost and why. Nothing that came: the call failed, as before.
#[tokio::test]
async fn samples_that_came_before_a_failure_are_kept_with_their_tokens() {
    let server = FakeServer::start(|i, _| match i {
        0 | 1 => Reply::chat(&[["sure", "likely"][i]], Some((20, 1))),
        _ => Reply::json(500, r#"{"error":{"message":"the server fell over"}}"#),
    });
    let p = HttpProvider::new(&resolved("openai", &server.url, |a| a.retries = Some(0))).unwrap();
    let reply = p.complete(&request(3), CallOptions::default()).await.expect("two of three samples came");
    let texts: Vec<&str> = reply.completions.iter().map(|c| &*c.text).collect();
    assert_eq!(texts, ["sure", "likely"]);
    assert_eq!((reply.usage.prompt_tokens, reply.usage.completion_tokens), (40, 2), "both requests' tokens");
    let lost = reply.lost.expect("the reply says a sample was lost");
    assert_eq!((lost.samples, lost.error.kind), (1, CallErrorKind::Server));
    assert!(lost.error.message.contains("the server fell over"), "{}", lost.error.message);

    let server = FakeServer::start(|_, _| Reply::json(500, r#"{"error":{"message":"down"}}"#));
    let p = HttpProvider::new(&resolved("openai", &server.url, |a| a.retries = Some(0))).unwrap();
    let failed = p.complete(&request(3), CallOptions::default()).await.unwrap_err();
    assert_eq!(failed.kind, CallErrorKind::Server, "nothing came: the call failed");
}

/// The same through a run: CoT-SC's samples, one of three lost, the two that came voted
/// on and their tokens counted; the summary, the session and its replay all say so.
#[test]
fn a_run_counts_lost_samples_and_keeps_the_ones_that_came() {
    let server = FakeServer::start(|i, _| match i {
        0 | 1 => Reply::chat(&["4 * 5 = 20\n20 + 10 - 6 = 24\nAnswer: 4 * 5 + 10 - 6 = 24"], Some((100, 10))),
        _ => Reply::json(500, r#"{"error":{"message":"the server fell over"}}"#),
    });
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("s.jsonl");
    let out = support::isolated(dir.path(), Some(KEY))
        .args(["run", "--task", "game24", "--method", "cot-sc", "--samples", "3", "--input", "4 5 6 10", "--json"])
        .args(["--provider", "openai", "--model", "fake-model", "--base-url", &server.url])
        .args(["--retries", "0", "--concurrency", "1", "--record"])
        .arg(&rec)
        .output()
        .unwrap();
    let s = support::summary(&out);
    assert_eq!(s["lost_samples"], 1, "{s}");
    assert_eq!((s["failed_calls"].as_u64().unwrap_or(0), s["prompt_tokens"].as_u64()), (0, Some(200)), "{s}");
    assert_eq!(s["solved"], 1, "the two samples that came were voted on: {s}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ignored `n`") && err.contains("`n = false`"), "the server ignoring n is said: {err}");
    let session = std::fs::read_to_string(&rec).unwrap();
    assert!(session.contains("\"lost\":{\"samples\":1"), "the session records the loss");
    let replayed = support::summary(
        &support::isolated(dir.path(), None)
            .args(["replay", rec.to_str().unwrap(), "--headless", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        (replayed["lost_samples"].clone(), replayed["prompt_tokens"].clone()),
        (s["lost_samples"].clone(), s["prompt_tokens"].clone())
    );
    let human =
        support::isolated(dir.path(), None).args(["replay", rec.to_str().unwrap(), "--headless"]).output().unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("samples lost 1"), "{text}");
    // What the run found out about the server ends its session, and its replay says it again.
    let end: serde_json::Value =
        session.lines().filter_map(|l| serde_json::from_str(l).ok()).next_back().expect("an end line");
    assert!(end["found"][0].as_str().is_some_and(|f| f.contains("ignored `n`")), "{end}");
    let noted = String::from_utf8_lossy(&human.stderr);
    assert!(noted.contains("note: ") && noted.contains("ignored `n`"), "{noted}");
}

/// A server that reports no usage is named after the run, saying how the counts were
/// made: plain replies, streamed ones (include_usage not honoured), and tool definitions
/// counted in the prompt's estimate. A server that reports usage is not named.
#[tokio::test]
async fn a_server_that_sends_no_usage_is_named_with_how_the_counts_were_made() {
    let server = FakeServer::start(|_, seen| match seen.body["stream"].as_bool() {
        Some(true) => Reply::chat_stream(&["su", "re"], false),
        _ => Reply::chat(&["sure"], None),
    });
    let p = openai(&server);
    assert!(p.found().is_empty(), "nothing found before a call");
    let reply = p.complete(&request(1), CallOptions::default()).await.unwrap();
    assert!(reply.usage.estimated);
    let found = p.found().join("\n");
    assert!(found.contains("reported no token usage in its replies") && !found.contains("tool"), "{found}");

    let p = openai(&server);
    let deltas: DeltaFn = Arc::new(|_, _: Streamed<'_>| {});
    p.complete(&request(1), CallOptions::streaming(deltas)).await.unwrap();
    let found = p.found().join("\n");
    assert!(found.contains("its streamed replies (stream_options.include_usage was not honoured)"), "{found}");

    let p = openai(&server);
    p.complete(&tool_request(), CallOptions::default()).await.unwrap();
    assert!(p.found().join("\n").contains("count the tool definitions"), "{:?}", p.found());

    let counted = FakeServer::start(|_, _| Reply::chat(&["sure"], Some((20, 1))));
    let p = openai(&counted);
    p.complete(&request(1), CallOptions::default()).await.unwrap();
    assert!(p.found().is_empty(), "{:?}", p.found());
}
