//! The bench's local server where it ignores `n`: the samples a client fetches one
//! request each differ the way a real server's would, so a run against it draws what a
//! run against a server honouring `n` draws. With a `seed` (sent by default, `seed+k`
//! for sample k) the samples are exactly those `n` returns; without one, each request
//! gets the next draws of its prompt.

use std::sync::Arc;
use std::time::Duration;

use thoughtscope::engine::sim::SimConfig;
use thoughtscope::llm::api::HttpProvider;
use thoughtscope::llm::config::{resolve, FileConfig, ProviderOptions};
use thoughtscope::llm::sim::SimProvider;
use thoughtscope::llm::testserver::{LatencyServer, Registering, Registry, ServerOptions};
use thoughtscope::llm::{CallOptions, Provider};
use thoughtscope::protocol::{LlmRequest, Message, Purpose};
use thoughtscope::tasks::SimPlayers;

/// A game24 proposal request for `numbers`, wanting `n` samples.
fn proposal(numbers: &str, n: u32) -> LlmRequest {
    LlmRequest {
        purpose: Purpose::Propose,
        messages: vec![Message::user(format!("List possible next steps for the Game of 24: {numbers}"))],
        n,
        temperature: 0.7,
        max_tokens: Some(200),
        stop: vec![],
        context: serde_json::json!({"task": "game24", "input": numbers, "numbers": numbers}),
        nonce: 0,
        tools: vec![],
        sampling: Default::default(),
    }
}

/// A server honouring `n` or not, and a client of it sending `seed` (or none).
fn connect(honour_n: bool, seed: Option<u64>) -> (LatencyServer, Registering) {
    let registry = Registry::default();
    let options = ServerOptions::new(Duration::from_millis(2), honour_n);
    let server = LatencyServer::start(options, registry.clone(), SimProvider::new(SimConfig::default(), &SimPlayers))
        .expect("the local server starts");
    let args = ProviderOptions {
        model: Some("bench-model".into()),
        base_url: Some(server.url.clone()),
        timeout: Some(10.0),
        ..Default::default()
    };
    let mut resolved = resolve("openai", &args, &FileConfig::default(), &|_| None, 5).expect("the profile resolves");
    resolved.seed = seed;
    let inner: Arc<dyn Provider> = Arc::new(HttpProvider::new(&resolved).expect("the provider builds"));
    (server, Registering { inner, registry })
}

/// The texts of `calls` calls of the same request, one after another.
async fn draws(honour_n: bool, seed: Option<u64>, n: u32, calls: usize) -> (Vec<Vec<String>>, u64) {
    let (server, client) = connect(honour_n, seed);
    let request = proposal("4 5 6 10", n);
    let mut all = Vec::new();
    for _ in 0..calls {
        let reply = client.complete(&request, CallOptions::default()).await.expect("the server answers");
        all.push(reply.completions.into_iter().map(|c| c.text.to_string()).collect::<Vec<_>>());
    }
    (all, server.requests())
}

#[tokio::test]
async fn with_a_seed_the_samples_fetched_one_each_are_those_n_returns() {
    let (honoured, one_request_each) = draws(true, Some(5), 3, 1).await;
    let (ignored, requests) = draws(false, Some(5), 3, 1).await;
    assert_eq!(one_request_each, 1);
    assert_eq!(requests, 3, "one request per sample where n is ignored");
    assert_eq!(ignored, honoured, "the same samples in the same order");
    let first = &ignored[0];
    assert!(first.iter().any(|t| t != &first[0]), "the samples differ from one another: {first:?}");
    // Another seed, other samples.
    let (other, _) = draws(false, Some(6), 3, 1).await;
    assert_ne!(other, ignored);
}

#[tokio::test]
async fn without_a_seed_each_request_draws_afresh() {
    let (honoured, _) = draws(true, None, 3, 2).await;
    let (ignored, requests) = draws(false, None, 3, 2).await;
    assert_eq!(requests, 6);
    for call in &ignored {
        assert!(call.iter().any(|t| t != &call[0]), "the samples of one call differ: {call:?}");
    }
    assert_ne!(ignored[0], ignored[1], "the same request asked again gets other samples");
    // Both servers hand out the same draws of the prompt, whichever way they are asked.
    let sorted = |calls: Vec<Vec<String>>| {
        let mut all: Vec<String> = calls.into_iter().flatten().collect();
        all.sort();
        all
    };
    assert_eq!(sorted(ignored), sorted(honoured));
}
