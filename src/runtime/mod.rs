//! The tokio driver: the only place that awaits I/O for a search. It carries out the
//! engine's effects (model calls run concurrently under a global limit), answers
//! identical requests from the cache (coalescing identical calls in flight), and
//! hands replies back in request order — not arrival order — so the engine sees
//! the same sequence of inputs whatever the timing.

pub mod headless;
pub mod tools;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio::task::{AbortHandle, JoinSet};

use crate::engine::{
    CallError, Effect, Input, LlmReply, LlmRequest, LlmResponse, NodeId, ToolReply, ToolRequest, ToolResult,
};
use crate::llm::cache::ResponseCache;
use crate::llm::{DeltaFn, Provider};

type CallResult = Result<LlmResponse, CallError>;

/// Part of a reply as it streams in, for showing a thought as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta {
    pub call: u64,
    /// Which of the call's `n` samples the text belongs to.
    pub sample: u32,
    pub text: String,
}

pub struct Driver {
    provider: Arc<dyn Provider>,
    limit: Arc<Semaphore>,
    cache: Arc<Mutex<ResponseCache>>,
    /// Outstanding calls in the order the engine issued them.
    order: VecDeque<u64>,
    requests: HashMap<u64, LlmRequest>,
    ready: HashMap<u64, CallResult>,
    /// Identical requests in flight: cache key -> leader call; leader -> followers.
    inflight: HashMap<String, u64>,
    followers: HashMap<u64, Vec<u64>>,
    tasks: JoinSet<(u64, CallResult)>,
    aborts: HashMap<u64, AbortHandle>,
    /// Calls sent to the provider (not answered from the cache).
    pub calls_made: u64,
    /// Where streamed text goes, if someone is watching.
    deltas: Option<tokio::sync::mpsc::UnboundedSender<Delta>>,
    /// Set when the run must send nothing more (a budget is used up).
    halted: Arc<AtomicBool>,
    /// Runs tool calls (ReAct), in request order with the model calls.
    tools: Option<tools::ToolRunner>,
    tool_calls: HashMap<u64, (ToolRequest, NodeId, NodeId)>,
}

/// The kind of error a call gets when the driver was halted before it was sent.
pub const NOT_SENT: &str = "not_sent";

impl Driver {
    /// `limit` bounds concurrent provider calls; share one semaphore to bound a whole program.
    pub fn new(provider: Arc<dyn Provider>, limit: Arc<Semaphore>, cache: Arc<Mutex<ResponseCache>>) -> Self {
        Driver {
            provider,
            limit,
            cache,
            order: VecDeque::new(),
            requests: HashMap::new(),
            ready: HashMap::new(),
            inflight: HashMap::new(),
            followers: HashMap::new(),
            tasks: JoinSet::new(),
            aborts: HashMap::new(),
            calls_made: 0,
            deltas: None,
            halted: Arc::new(AtomicBool::new(false)),
            tools: None,
            tool_calls: HashMap::new(),
        }
    }

    /// Run the engine's tool calls with these tools.
    pub fn with_tools(mut self, runner: tools::ToolRunner) -> Self {
        self.tools = Some(runner);
        self
    }

    /// Send no more calls: those waiting for a slot (and any started later) fail at
    /// once with kind [`NOT_SENT`]; calls already sent still land.
    pub fn halt(&self) {
        self.halted.store(true, Ordering::SeqCst);
    }

    /// Ask providers to stream, and send their text as it arrives to `tx` (replies
    /// still come whole from `next_reply`; coalesced and cached calls send nothing).
    pub fn with_deltas(mut self, tx: tokio::sync::mpsc::UnboundedSender<Delta>) -> Self {
        self.deltas = Some(tx);
        self
    }

    pub fn outstanding(&self) -> usize {
        self.order.len()
    }

    /// Start the calls and cancellations among `effects` (events are for the caller).
    pub fn execute(&mut self, effects: &[Effect]) {
        for effect in effects {
            match effect {
                Effect::CallLlm { call, request } => self.start(*call, request.clone()),
                Effect::CallTool { call, tool, node, after } => {
                    self.order.push_back(*call);
                    self.tool_calls.insert(*call, (tool.clone(), *node, *after));
                }
                Effect::Cancel { calls } => {
                    for c in calls {
                        self.tool_calls.remove(c);
                    }
                    self.cancel(calls)
                }
                Effect::Emit { .. } => {}
            }
        }
    }

    fn start(&mut self, call: u64, request: LlmRequest) {
        let model = self.provider.cache_scope();
        let key = request.cache_key(&model);
        self.order.push_back(call);
        self.requests.insert(call, request.clone());
        let cached = self.cache.lock().ok().and_then(|mut c| c.get(&model, &request));
        if let Some(reply) = cached {
            self.ready.insert(call, Ok(reply));
            return;
        }
        if let Some(&leader) = self.inflight.get(&key) {
            self.followers.entry(leader).or_default().push(call);
            return;
        }
        self.inflight.insert(key, call);
        self.calls_made += 1;
        let provider = Arc::clone(&self.provider);
        let limit = Arc::clone(&self.limit);
        let sink: Option<DeltaFn> = self.deltas.clone().map(|tx| -> DeltaFn {
            Arc::new(move |sample, text: &str| {
                // A watcher that has gone away is not an error for the call.
                let _ = tx.send(Delta { call, sample, text: text.to_string() });
            })
        });
        let halted = Arc::clone(&self.halted);
        let handle = self.tasks.spawn(async move {
            let permit = limit.acquire_owned().await;
            let started = Instant::now();
            let mut result = match permit {
                Ok(_permit) if halted.load(Ordering::SeqCst) => {
                    Err(CallError { kind: NOT_SENT.into(), message: "not sent: the run had stopped".into() })
                }
                Ok(_permit) => match sink {
                    Some(sink) => provider.complete_streaming(&request, sink).await,
                    None => provider.complete(&request).await,
                },
                Err(_) => Err(CallError { kind: "shutdown".into(), message: "the program is shutting down".into() }),
            };
            if let Ok(reply) = result.as_mut() {
                if !reply.simulated {
                    reply.latency_ms = started.elapsed().as_millis() as u64;
                }
            }
            (call, result)
        });
        self.aborts.insert(call, handle);
    }

    fn cancel(&mut self, calls: &[u64]) {
        for call in calls {
            self.order.retain(|c| c != call);
            self.ready.remove(call);
            // Keep a leader running while someone still waits for its reply.
            let has_followers = self.followers.get(call).is_some_and(|f| f.iter().any(|x| self.order.contains(x)));
            if !has_followers {
                if let Some(h) = self.aborts.remove(call) {
                    h.abort();
                }
                self.inflight.retain(|_, leader| leader != call);
                self.followers.remove(call);
            }
        }
    }

    fn complete(&mut self, call: u64, result: CallResult) {
        self.aborts.remove(&call);
        let model = self.provider.cache_scope();
        if let Some(request) = self.requests.get(&call) {
            let key = request.cache_key(&model);
            if self.inflight.get(&key) == Some(&call) {
                self.inflight.remove(&key);
            }
            if let Ok(reply) = &result {
                if let Ok(mut cache) = self.cache.lock() {
                    cache.put(&model, request, reply);
                }
            }
        }
        for follower in self.followers.remove(&call).unwrap_or_default() {
            let shared = match &result {
                Ok(reply) => {
                    let mut r = reply.clone();
                    r.cached = true;
                    r.latency_ms = 0;
                    r.usage.prompt_tokens = 0;
                    r.usage.completion_tokens = 0;
                    if let Ok(mut cache) = self.cache.lock() {
                        cache.hits += 1;
                    }
                    Ok(r)
                }
                Err(e) => Err(e.clone()),
            };
            if self.order.contains(&follower) {
                self.ready.insert(follower, shared);
            }
        }
        if self.order.contains(&call) {
            self.ready.insert(call, result);
        }
    }

    /// The next input in request order — a model reply (with its request) or a tool
    /// observation; `None` when nothing is outstanding.
    pub async fn next_input(&mut self) -> Option<(Input, Option<LlmRequest>)> {
        let front = *self.order.front()?;
        if let Some((tool, node, after)) = self.tool_calls.get(&front).cloned() {
            // Tools run here, in order; the call stays queued until it is done (cancel-safe).
            let result = match self.tools.as_mut() {
                Some(runner) => runner.run(&tool, node, after).await,
                None => ToolResult { text: "No tools are available in this run.".into(), ok: false, latency_ms: 0 },
            };
            self.tool_calls.remove(&front);
            self.order.pop_front();
            return Some((Input::ToolReply(ToolReply { call: front, result }), None));
        }
        let (reply, request) = self.next_reply().await?;
        Some((Input::LlmReply(reply), Some(request)))
    }

    /// The next reply in request order, with its request; `None` when nothing is outstanding.
    pub async fn next_reply(&mut self) -> Option<(LlmReply, LlmRequest)> {
        loop {
            let front = *self.order.front()?;
            if self.tool_calls.contains_key(&front) {
                // A tool call is next: only `next_input` delivers it.
                return None;
            }
            if let Some(result) = self.ready.remove(&front) {
                self.order.pop_front();
                let request = self.requests.remove(&front)?;
                return Some((LlmReply { call: front, result }, request));
            }
            match self.tasks.join_next().await {
                Some(Ok((call, result))) => self.complete(call, result),
                Some(Err(join_error)) => {
                    if join_error.is_cancelled() {
                        continue;
                    }
                    // A provider panicked: fail the call it was running, keep the run going.
                    let id = join_error.id();
                    let call = self.aborts.iter().find(|(_, h)| h.id() == id).map(|(c, _)| *c);
                    if let Some(call) = call {
                        let err = CallError {
                            kind: "internal".into(),
                            message: format!("the provider crashed: {join_error}"),
                        };
                        self.complete(call, Err(err));
                    }
                }
                None => {
                    // Nothing is running yet the front has no reply: fail it rather than wait forever.
                    let err = CallError { kind: "internal".into(), message: "the call was lost by the driver".into() };
                    self.ready.insert(front, Err(err));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
