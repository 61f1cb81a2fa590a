//! `thoughtscope serve`: an OpenAI-compatible HTTP front. Each `POST
//! /v1/chat/completions` or `POST /v1/responses` (the Responses API: `instructions` and
//! `input`, semantic stream events) is one search of the one run loop (`runtime::headless`),
//! recorded as a session in the sessions folder like any other run, so the search
//! behind an answer can be replayed, stepped and forked. The request's `model` picks
//! the method and the upstream model (`cot-sc@gpt-4o-mini`; a model alone is io), its
//! `thoughtscope` object the parameters and, optionally, a task; without one the
//! conversation is the problem of the open-question task.
//!
//! Manners: a bearer token when one is set (required off loopback), a limit on
//! searches at once (429 with Retry-After beyond it) and on upstream calls at once
//! (they queue), per-request budgets, OpenAI-style error bodies, time limits on a
//! request's head and body and a cap on open connections ([`conn`]), and on a signal
//! (SIGINT, SIGTERM, SIGHUP) the idle connections are closed and the searches in flight
//! are stopped and recorded before the server exits. A client is told nothing of the
//! server's files: a task that cannot be built is "not available" (the detail goes to the
//! server's stderr), and what a request sent is echoed only in part.

pub mod bench;
pub mod conn;
pub mod open_question;
pub mod openai;
pub mod route;
mod search;
pub mod settings;

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde_json::json;
use tokio::sync::{watch, Semaphore};

use crate::config::ParamPatch;
use crate::engine::sim::SimConfig;
use crate::llm::config::{FileConfig, ProviderOptions};
use crate::llm::{ContextWindow, Provider};
use crate::runtime::headless::Interrupts;
use crate::tasks::TaskSource;
use openai::{ApiError, ChatRequest};
use route::Profile;

/// Who answers the searches' calls.
#[derive(Clone)]
pub enum Upstream {
    /// The simulated model (offline): it plays the built-in tasks, not open questions.
    Sim(SimConfig),
    /// A real provider: its profile name, its connection options (`--model` is the served
    /// model) and the config file's profiles and prices.
    Real { provider: String, connect: Box<ProviderOptions>, file: Box<FileConfig> },
}

/// How the server runs.
#[derive(Clone)]
pub struct Options {
    pub upstream: Upstream,
    /// Where each request's session is written.
    pub sessions: PathBuf,
    /// The bearer token every request must carry, if set.
    pub api_key: Option<String>,
    /// Searches at once; a request beyond them is answered 429.
    pub max_searches: usize,
    /// Upstream calls at once, over all searches (more wait their turn).
    pub max_calls: usize,
    /// Open connections at once (see [`conn`]).
    pub max_connections: usize,
    /// Each request's budget, and the cache, as `run`'s flags give them.
    pub limits: ProviderOptions,
    /// The config's `[defaults]` parameters, under each request's.
    pub defaults: ParamPatch,
    pub profiles: BTreeMap<String, Profile>,
    /// The task of requests that name none (`None`: the open question).
    pub task: Option<String>,
}

/// A real provider built for a model and seed, with the model's context window.
type Built = (Arc<dyn Provider>, Option<ContextWindow>);
/// An upstream provider's key: its model, the seed and the reasoning effort asked.
type UpstreamKey = (String, u64, Option<String>);

/// The server's state, shared by its handlers.
pub struct Serve {
    options: Options,
    searches: Arc<Semaphore>,
    calls: Arc<Semaphore>,
    interrupts: watch::Receiver<Interrupts>,
    /// Real providers by (model, seed, reasoning effort), with the model's context window.
    providers: Mutex<HashMap<UpstreamKey, Built>>,
    /// Named tasks, built once (by name and prompt style).
    tasks: Mutex<HashMap<String, Arc<dyn TaskSource>>>,
    counter: AtomicU64,
    /// The served model's name (`--model`, the profile's, or `sim`).
    model: String,
}

impl Serve {
    /// The server's state: its limits, and signals heard on `interrupts` stop the
    /// searches in flight. The served model's provider is built now, so a bad profile,
    /// key or budget stops the server before it listens.
    pub fn new(options: Options, interrupts: watch::Receiver<Interrupts>) -> Result<Arc<Serve>, String> {
        std::fs::create_dir_all(&options.sessions).map_err(|e| {
            format!(
                "cannot create the sessions folder {}: {e}; give --sessions a folder you can write to",
                options.sessions.display()
            )
        })?;
        let model = match &options.upstream {
            Upstream::Sim(_) => "sim".to_string(),
            Upstream::Real { provider, connect, file } => {
                let built = crate::llm::config::build(provider, connect, file, 0).map_err(|e| e.to_string())?;
                crate::runtime::headless::RunLimits::from_options(&options.limits, built.as_ref())
                    .map_err(|e| e.to_string())?;
                built.model().to_string()
            }
        };
        if let Upstream::Sim(_) = &options.upstream {
            let sim = crate::llm::sim::SimProvider::new(SimConfig::default(), &crate::tasks::SimPlayers);
            crate::runtime::headless::RunLimits::from_options(&options.limits, &sim).map_err(|e| e.to_string())?;
        }
        Ok(Arc::new(Serve {
            searches: Arc::new(Semaphore::new(options.max_searches.max(1))),
            calls: Arc::new(Semaphore::new(options.max_calls.max(1))),
            options,
            interrupts,
            providers: Mutex::default(),
            tasks: Mutex::default(),
            counter: AtomicU64::new(0),
            model,
        }))
    }

    /// The served model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Whether `headers` carry the bearer token (always, when none is set).
    fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(key) = &self.options.api_key else { return Ok(()) };
        // The scheme is case-insensitive (RFC 9110): `bearer KEY` is as good as `Bearer KEY`.
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim_start().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        match given {
            Some(given) if same(given.as_bytes(), key.as_bytes()) => Ok(()),
            Some(_) => Err(ApiError::new(401, "invalid_request_error", "invalid_api_key", "the API key is wrong")),
            None => Err(ApiError::new(
                401,
                "invalid_request_error",
                "missing_api_key",
                "this server needs an API key: send Authorization: Bearer KEY",
            )),
        }
    }

    /// A fresh request id: the clock and a count, mixed.
    fn request_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let mut x = nanos ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(std::process::id()).rotate_left(32);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        format!("{:012x}", (x ^ (x >> 31)) & 0xFFFF_FFFF_FFFF)
    }

    /// Wait (up to `limit`) until every search in flight has ended and closed its session.
    pub async fn drain(&self, limit: Duration) -> bool {
        let all = u32::try_from(self.options.max_searches.max(1)).unwrap_or(u32::MAX);
        tokio::time::timeout(limit, self.searches.acquire_many(all)).await.is_ok()
    }
}

/// Equal bytes, compared in time that depends only on the lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The routes: chat completions and the model list; anything else is a 404 in OpenAI's shape.
pub fn router(state: Arc<Serve>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/responses", post(responses))
        .route("/v1/models", get(models))
        .fallback(|| async {
            error_response(&ApiError::new(
                404,
                "invalid_request_error",
                "unknown_url",
                "no such route: POST /v1/chat/completions, POST /v1/responses or GET /v1/models",
            ))
        })
        .with_state(state)
}

/// Serve on `listener` until `shutdown` resolves, then let the searches in flight end
/// (a signal stops them; each closes its session) before returning.
pub async fn serve(
    state: Arc<Serve>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let max_connections = state.options.max_connections;
    conn::serve(listener, router(Arc::clone(&state)), max_connections, shutdown).await;
    if !state.drain(Duration::from_secs(10)).await {
        eprintln!("warning: searches still running 10 s after the shutdown began; their sessions may lack an end line");
    }
    Ok(())
}

/// A failed search in a stream: chat completions' error object then `[DONE]`; the
/// Responses API's `error` event.
fn stream_error(e: &ApiError, wire: Wire) -> Vec<Event> {
    match wire {
        Wire::Chat => vec![Event::default().data(e.body().to_string()), Event::default().data("[DONE]")],
        Wire::Responses => {
            let error = e.body()["error"].clone();
            let data = serde_json::json!({"type": "error", "sequence_number": 0, "code": error["code"],
                "message": error["message"], "param": null});
            vec![Event::default().event("error").data(data.to_string())]
        }
    }
}

fn error_response(e: &ApiError) -> Response {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, Json(e.body())).into_response();
    if let Some(after) = e.retry_after {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(after));
    }
    if e.status == 401 {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

async fn models(State(state): State<Arc<Serve>>, headers: HeaderMap) -> Response {
    if let Err(e) = state.authorize(&headers) {
        return error_response(&e);
    }
    // Only what answers a request that names no task (sim plays the built-in tasks only,
    // so with the open question as the default it lists nothing).
    let model = state.model().to_string();
    let mut ids = Vec::new();
    if state.answers(crate::engine::methods::io::KIND, None) {
        ids.push(model.clone());
    }
    ids.extend(state.methods_served().into_iter().map(|m| format!("{m}@{model}")));
    let profiles = state.options.profiles.iter().filter(|(_, p)| state.answers(p.method, Some(p)));
    ids.extend(profiles.map(|(name, _)| format!("{name}@{model}")));
    let data: Vec<_> = ids
        .into_iter()
        .map(|id| json!({ "id": id, "object": "model", "created": 0, "owned_by": "thoughtscope" }))
        .collect();
    Json(json!({ "object": "list", "data": data })).into_response()
}

/// The most of a request body read (as axum's own default).
const MAX_BODY: usize = 2 * 1024 * 1024;

/// A request's body, read once its token is checked: within [`conn::BODY_SECS`] and up
/// to [`MAX_BODY`].
async fn read_body(body: axum::body::Body) -> Result<Bytes, ApiError> {
    let limit = Duration::from_secs(conn::BODY_SECS);
    match tokio::time::timeout(limit, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) if is_too_large(&e) => Err(ApiError::new(
            413,
            "invalid_request_error",
            "request_too_large",
            format!("the request body is larger than {} MiB", MAX_BODY >> 20),
        )),
        Ok(Err(e)) => Err(ApiError::invalid("invalid_body", format!("the request body could not be read: {e}"))),
        Err(_) => Err(ApiError::new(
            408,
            "invalid_request_error",
            "request_timeout",
            format!("the request body did not arrive within {} s", conn::BODY_SECS),
        )),
    }
}

fn is_too_large(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// The two APIs a search is asked through.
#[derive(Clone, Copy, PartialEq)]
enum Wire {
    Chat,
    Responses,
}

async fn chat(State(state): State<Arc<Serve>>, headers: HeaderMap, body: axum::body::Body) -> Response {
    answer(state, headers, body, Wire::Chat).await
}

async fn responses(State(state): State<Arc<Serve>>, headers: HeaderMap, body: axum::body::Body) -> Response {
    answer(state, headers, body, Wire::Responses).await
}

/// One search, asked and answered in `wire`'s format.
async fn answer(state: Arc<Serve>, headers: HeaderMap, body: axum::body::Body, wire: Wire) -> Response {
    if let Err(e) = state.authorize(&headers) {
        return error_response(&e);
    }
    let body = match read_body(body).await {
        Ok(body) => body,
        Err(e) => {
            // The rest of the body may never come: the connection is not kept.
            let mut response = error_response(&e);
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    let parsed = match wire {
        Wire::Chat => ChatRequest::parse(&body),
        Wire::Responses => ChatRequest::parse_responses(&body),
    };
    let request = match parsed {
        Ok(r) => r,
        Err(e) => return error_response(&e),
    };
    if state.interrupts.borrow().first.is_some() {
        let mut e = ApiError::new(503, "server_error", "shutting_down", "the server is shutting down");
        e.retry_after = Some(5);
        return error_response(&e);
    }
    let Ok(permit) = Arc::clone(&state.searches).try_acquire_owned() else {
        let mut e = ApiError::new(
            429,
            "rate_limit_error",
            "too_many_searches",
            format!("all {} search slots are busy; try again shortly", state.options.max_searches),
        );
        e.retry_after = Some(1);
        return error_response(&e);
    };
    let prepared = match state.prepare(&request).await {
        Ok(p) => p,
        Err(e) => return error_response(&e),
    };
    let (id, file) = (prepared.id.clone(), prepared.file_name());
    let (calls, interrupts) = (Arc::clone(&state.calls), state.interrupts.clone());
    // Its own task: a client that goes away does not cut the search (or its session) short.
    let search = tokio::spawn(async move {
        let _slot = permit;
        prepared.run(calls, interrupts).await
    });
    let mut response = if request.stream {
        let events = futures::stream::once(search).flat_map(move |done| {
            let events: Vec<Event> = match (done, wire) {
                (Ok(Ok(answer)), Wire::Chat) => {
                    let mut events: Vec<Event> =
                        answer.chunks().iter().map(|c| Event::default().data(c.to_string())).collect();
                    events.push(Event::default().data("[DONE]"));
                    events
                }
                (Ok(Ok(answer)), Wire::Responses) => answer
                    .response_events()
                    .into_iter()
                    .map(|(kind, data)| Event::default().event(kind).data(data.to_string()))
                    .collect(),
                (Ok(Err(e)), wire) => stream_error(&e, wire),
                (Err(e), wire) => {
                    stream_error(&ApiError::new(500, "server_error", "search_failed", e.to_string()), wire)
                }
            };
            futures::stream::iter(events.into_iter().map(Ok::<_, Infallible>))
        });
        Sse::new(events).keep_alive(KeepAlive::default()).into_response()
    } else {
        match search.await {
            Ok(Ok(answer)) if wire == Wire::Responses => Json(answer.response()).into_response(),
            Ok(Ok(answer)) => Json(answer.completion()).into_response(),
            Ok(Err(e)) => error_response(&e),
            Err(e) => error_response(&ApiError::new(500, "server_error", "search_failed", e.to_string())),
        }
    };
    for (name, value) in [("x-request-id", id), ("x-thoughtscope-session", file)] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
