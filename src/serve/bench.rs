//! `thoughtscope bench`'s serve line: requests per second `serve` sustains against a
//! local upstream that answers every call after a set latency, through io and cot-sc,
//! against the same requests sent to the upstream directly (what serve adds).

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::routing::post;
use axum::{Json, Router};
use futures::stream::{self, StreamExt};
use serde_json::{json, Value};

use super::{Options, Serve, Upstream};
use crate::llm::config::ProviderOptions;
use crate::runtime::headless::Interrupts;

/// A local OpenAI-compatible upstream: every request answered after `latency` with
/// `n` choices of a cot-style reply.
async fn upstream(latency: Duration) -> std::io::Result<(String, tokio::task::JoinHandle<()>)> {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |Json(body): Json<Value>| async move {
            tokio::time::sleep(latency).await;
            let n = body["n"].as_u64().unwrap_or(1).max(1);
            let choices: Vec<Value> = (0..n)
                .map(|i| json!({"index": i, "message": {"role": "assistant", "content": "It is 6 * 7.\nAnswer: 42"}, "finish_reason": "stop"}))
                .collect();
            Json(json!({"id": "x", "object": "chat.completion", "model": "bench", "choices": choices,
                "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1", listener.local_addr()?);
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((url, task))
}

/// `requests` POSTs of `body` to `url`, `at_once` at a time: requests per second, and
/// how many did not come back 200.
async fn drive(client: &reqwest::Client, url: &str, body: &Value, requests: usize, at_once: usize) -> (f64, usize) {
    let started = Instant::now();
    let failed = stream::iter(0..requests)
        .map(|_| async move {
            match client.post(url).json(body).send().await {
                Ok(r) if r.status().is_success() => r.bytes().await.is_err() as usize,
                _ => 1,
            }
        })
        .buffer_unordered(at_once)
        .fold(0, |n, f| async move { n + f })
        .await;
    (requests as f64 / started.elapsed().as_secs_f64(), failed)
}

/// Run the serve bench and print its lines to `out`.
pub fn serve_bench(latency_ms: u64, requests: usize, at_once: usize, out: &mut dyn Write) -> Result<(), String> {
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let sessions = std::env::temp_dir().join(format!("thoughtscope-serve-bench-{}", std::process::id()));
    let result = rt.block_on(async {
        let (upstream_url, upstream_task) =
            upstream(Duration::from_millis(latency_ms)).await.map_err(|e| e.to_string())?;
        let connect = ProviderOptions {
            model: Some("bench-model".into()),
            base_url: Some(upstream_url.clone()),
            timeout: Some(60.0),
            ..ProviderOptions::default()
        };
        let options = Options {
            upstream: Upstream::Real {
                provider: "openai".into(),
                connect: Box::new(connect.clone()),
                file: Box::default(),
            },
            sessions: sessions.clone(),
            api_key: None,
            max_searches: at_once,
            max_calls: 1024,
            limits: connect,
            defaults: Default::default(),
            profiles: Default::default(),
            task: None,
        };
        let (_keep, interrupts) = Interrupts::channel();
        let state = Serve::new(options, interrupts)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| e.to_string())?;
        let serve_url = format!("http://{}/v1/chat/completions", listener.local_addr().map_err(|e| e.to_string())?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(super::serve(Arc::clone(&state), listener, async move {
            let _ = stopped.await;
        }));
        let client = reqwest::Client::new();
        let question = json!([{"role": "user", "content": "What is six times seven?"}]);
        let direct_url = format!("{upstream_url}/chat/completions");
        let direct =
            drive(&client, &direct_url, &json!({"model": "bench-model", "messages": question}), requests, at_once)
                .await;
        let io =
            drive(&client, &serve_url, &json!({"model": "bench-model", "messages": question}), requests, at_once).await;
        let cot_sc_body = json!({"model": "cot-sc@bench-model", "messages": question, "thoughtscope": {"samples": 5}});
        let cot_sc = drive(&client, &serve_url, &cot_sc_body, requests, at_once).await;
        let _ = stop.send(());
        let _ = server.await;
        upstream_task.abort();
        Ok::<_, String>((direct, io, cot_sc))
    });
    let _ = std::fs::remove_dir_all(&sessions);
    let ((direct, _), (io, io_failed), (cot_sc, cot_failed)) = result?;
    let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}").map_err(|e| e.to_string());
    w(
        out,
        format!(
            "serve: {requests} requests, {at_once} at once, against a local upstream answering after {latency_ms} ms"
        ),
    )?;
    w(out, format!("  direct to the upstream   {direct:8.1} requests/s"))?;
    let added = |rate: f64| (at_once as f64 / rate - at_once as f64 / direct) * 1000.0;
    w(out, format!("  io through serve         {io:8.1} requests/s  ({:+.1} ms a request, each recorded)", added(io)))?;
    w(out, format!("  cot-sc (5 samples)       {cot_sc:8.1} requests/s  ({:+.1} ms a request)", added(cot_sc)))?;
    if io_failed + cot_failed > 0 {
        w(out, format!("  ({io_failed} io and {cot_failed} cot-sc requests failed)"))?;
    }
    Ok(())
}
