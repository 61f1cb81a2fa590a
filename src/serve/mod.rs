//! `thoughtscope serve`: an OpenAI-compatible HTTP front. Each `POST
//! /v1/chat/completions` is one search of the one run loop (`runtime::headless`),
//! recorded as a session in the sessions folder like any other run, so the search
//! behind an answer can be replayed, stepped and forked. The request's `model` picks
//! the method and the upstream model (`cot-sc@gpt-4o-mini`; a model alone is io), its
//! `thoughtscope` object the parameters and, optionally, a task; without one the
//! conversation is the problem of the open-question task.
//!
//! Manners: a bearer token when one is set (required off loopback), a limit on
//! searches at once (429 with Retry-After beyond it) and on upstream calls at once
//! (they queue), per-request budgets, OpenAI-style error bodies, and on a signal the
//! searches in flight are stopped and recorded before the server exits.

pub mod bench;
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

/// The server's state, shared by its handlers.
pub struct Serve {
    options: Options,
    searches: Arc<Semaphore>,
    calls: Arc<Semaphore>,
    interrupts: watch::Receiver<Interrupts>,
    /// Real providers by (model, seed), with the model's context window.
    providers: Mutex<HashMap<(String, u64), Built>>,
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
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
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
        .route("/v1/models", get(models))
        .fallback(|| async {
            error_response(&ApiError::new(
                404,
                "invalid_request_error",
                "unknown_url",
                "no such route: POST /v1/chat/completions or GET /v1/models",
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
    axum::serve(listener, router(Arc::clone(&state))).with_graceful_shutdown(shutdown).await?;
    if !state.drain(Duration::from_secs(10)).await {
        eprintln!("warning: searches still running 10 s after the shutdown began; their sessions may lack an end line");
    }
    Ok(())
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
    let model = state.model().to_string();
    let mut ids = vec![model.clone()];
    ids.extend(state.methods_served().into_iter().map(|m| format!("{m}@{model}")));
    ids.extend(state.options.profiles.keys().map(|p| format!("{p}@{model}")));
    let data: Vec<_> = ids
        .into_iter()
        .map(|id| json!({ "id": id, "object": "model", "created": 0, "owned_by": "thoughtscope" }))
        .collect();
    Json(json!({ "object": "list", "data": data })).into_response()
}

async fn chat(State(state): State<Arc<Serve>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(e) = state.authorize(&headers) {
        return error_response(&e);
    }
    let request = match ChatRequest::parse(&body) {
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
        let events = futures::stream::once(search).flat_map(|done| {
            let mut events: Vec<String> = match done {
                Ok(Ok(answer)) => answer.chunks().iter().map(ToString::to_string).collect(),
                Ok(Err(e)) => vec![e.body().to_string()],
                Err(e) => vec![ApiError::new(500, "server_error", "search_failed", e.to_string()).body().to_string()],
            };
            events.push("[DONE]".into());
            futures::stream::iter(events.into_iter().map(|data| Ok::<_, Infallible>(Event::default().data(data))))
        });
        Sse::new(events).keep_alive(KeepAlive::default()).into_response()
    } else {
        match search.await {
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
