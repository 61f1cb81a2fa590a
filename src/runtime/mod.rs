//! The tokio driver: the only place that awaits I/O for a search. It carries out the
//! engine's effects (model calls run concurrently under a global limit), answers
//! identical requests from the cache (coalescing identical calls in flight), and
//! hands replies back in request order — not arrival order — so the engine sees
//! the same sequence of inputs whatever the timing.

pub mod bench;
pub mod check_run;
pub mod headless;
pub mod memory;
pub mod run;
pub mod signals;
pub mod sync;
pub mod tools;

pub use run::{Fed, Run, Signal, StopPolicy, StopReason};

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::task::{AbortHandle, JoinSet};

use crate::engine::check::Verdict;
use crate::engine::{CheckReply, CheckRequest, Effect, Input, LlmReply, NodeId, ToolReply};
use crate::llm::cache::{Asked, CallKey, ResponseCache};
use crate::llm::limit::{Limit, Priority, Round};
use crate::llm::{CallOptions, DeltaFn, Provider, Streamed};
use crate::protocol::{CallError, CallErrorKind, LlmRequest, LlmResponse, ToolRequest, ToolResult};

type CallResult = Result<LlmResponse, CallError>;

/// What a finished task of the driver produced.
enum Done {
    Llm(CallResult),
    Tool(ToolResult),
    Check(Result<Verdict, String>),
}

/// Part of a reply as it streams in, for showing a thought as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta {
    pub call: u64,
    /// Which of the call's `n` samples the text belongs to.
    pub sample: u32,
    pub text: String,
    /// Forget the sample's text so far (`text` is empty): its stream was cut and is
    /// being asked again.
    pub restart: bool,
}

/// The request back from its `Arc` (its task has finished with it by now, so no copy).
fn unshare(request: Arc<LlmRequest>) -> LlmRequest {
    Arc::try_unwrap(request).unwrap_or_else(|shared| (*shared).clone())
}

pub struct Driver {
    provider: Arc<dyn Provider>,
    /// The provider's cache scope, made once (not per call).
    scope: String,
    limit: Limit,
    /// This problem's place in the run, for the limit's order (see [`Priority`]).
    problem: u32,
    /// Round trips behind the calls the engine issues now: one more than the deepest
    /// reply fed to it so far.
    depth: u32,
    /// The round trips behind each outstanding model call.
    depths: HashMap<u64, u32>,
    /// Calls sent to the provider, by the round trips behind them.
    rounds: Vec<Round>,
    cache: Arc<Mutex<ResponseCache>>,
    /// Outstanding calls in the order the engine issued them.
    order: VecDeque<u64>,
    /// Shared with the call's task, so a request is not copied for it.
    requests: HashMap<u64, Arc<LlmRequest>>,
    /// How each outstanding model call is filed (see [`ResponseCache::key_for`]).
    keys: HashMap<u64, CallKey>,
    ready: HashMap<u64, Done>,
    /// Identical requests in flight: cache key -> leader call; leader -> followers.
    inflight: HashMap<String, u64>,
    followers: HashMap<u64, Vec<u64>>,
    /// Model calls and tool calls in flight; their state lives here, not in a
    /// future the caller may drop, so a `select!` that loses never restarts them.
    tasks: JoinSet<(u64, Done)>,
    aborts: HashMap<u64, AbortHandle>,
    /// Calls sent to the provider (not answered from the cache).
    pub calls_made: u64,
    /// Where streamed text goes, if someone is watching.
    deltas: Option<tokio::sync::mpsc::UnboundedSender<Delta>>,
    /// Set when the run must send nothing more (a budget is used up).
    halted: Arc<AtomicBool>,
    /// Runs tool calls (ReAct); one at a time, in the order they were issued.
    tools: Option<Arc<tokio::sync::Mutex<tools::ToolRunner>>>,
    /// The model's context window, when the run knows it: a request whose prompt and
    /// reply cannot fit is not sent (it fails as `context_overflow`, saying so).
    window: Option<u64>,
    /// Calls of this driver that other problems' drivers may be waiting for (a shared
    /// cache's in-flight key): landed when they end, however they end.
    flying: HashMap<u64, (String, u64)>,
    /// Name each check program on standard error before it first runs (headless runs).
    announce_checks: bool,
}

/// The check programs named on standard error so far, in this process (problems side by
/// side each have a driver; a program is named once).
fn first_announcement(argv: &[String]) -> bool {
    static NAMED: std::sync::OnceLock<Mutex<std::collections::HashSet<Vec<String>>>> = std::sync::OnceLock::new();
    let mut named = NAMED.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    named.insert(argv.to_vec())
}

/// `result` with any known key taken out, as every reply is before it goes further.
fn redacted(result: Result<LlmResponse, CallError>) -> Result<LlmResponse, CallError> {
    match result {
        Ok(mut reply) => {
            crate::llm::secret::redact_in_place(&mut reply);
            Ok(reply)
        }
        Err(mut e) => {
            e.message = crate::llm::secret::redact(&e.message).into_owned();
            Err(e)
        }
    }
}

/// Why `request` cannot be sent to a model whose context window is `window` tokens, if
/// it cannot: its prompt and the reply it allows (`max_tokens`, else 256) are estimated
/// over the window.
pub fn does_not_fit(request: &LlmRequest, window: u64) -> Option<CallError> {
    let prompt = crate::protocol::estimate_prompt_tokens(request);
    let reply = u64::from(request.max_tokens.unwrap_or(256));
    (prompt + reply > window).then(|| {
        CallError::new(
            CallErrorKind::ContextOverflow,
            format!(
                "not sent: the prompt (about {prompt} tokens) and its reply (up to {reply}) do not fit the \
                 model's context window ({window} tokens); give the model a larger context (--context-window N, \
                 or context = N in the provider's profile) or a shorter prompt"
            ),
        )
    })
}

impl Driver {
    /// `limit` bounds concurrent provider calls; share one semaphore to bound a whole program.
    /// A [`PriorityLimit`](crate::llm::limit::PriorityLimit) shared by problems side by
    /// side lets calls of the problems furthest from their end go first.
    pub fn new(provider: Arc<dyn Provider>, limit: impl Into<Limit>, cache: Arc<Mutex<ResponseCache>>) -> Self {
        Driver {
            scope: provider.cache_scope(),
            provider,
            limit: limit.into(),
            problem: 0,
            depth: 0,
            depths: HashMap::new(),
            rounds: Vec::new(),
            cache,
            order: VecDeque::new(),
            requests: HashMap::new(),
            keys: HashMap::new(),
            ready: HashMap::new(),
            inflight: HashMap::new(),
            followers: HashMap::new(),
            tasks: JoinSet::new(),
            aborts: HashMap::new(),
            calls_made: 0,
            deltas: None,
            halted: Arc::new(AtomicBool::new(false)),
            tools: None,
            window: None,
            flying: HashMap::new(),
            announce_checks: false,
        }
    }

    /// Say on standard error, before a task's check program first runs, which program it
    /// is (a headless run; the explorer has it in its transcript).
    pub fn announcing_checks(mut self) -> Self {
        self.announce_checks = true;
        self
    }

    /// Send no request that cannot fit a context window of `tokens` (prompt and reply,
    /// estimated as the engine's ReAct fitting does): it fails at once as
    /// `context_overflow`, so the branch stops with a message saying why, before any
    /// server is asked. `None`: no check (the window is not known, as for `sim`).
    pub fn with_context_window(mut self, tokens: Option<u64>) -> Self {
        self.window = tokens;
        self
    }

    /// This driver's problem is the `index`-th of the run: on a shared priority limit,
    /// its calls go before those of later problems as many round trips in.
    pub fn for_problem(mut self, index: usize) -> Self {
        self.problem = u32::try_from(index).unwrap_or(u32::MAX);
        self
    }

    /// The calls sent to the provider so far, by the round trips behind them.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Run the engine's tool calls with these tools.
    pub fn with_tools(mut self, runner: tools::ToolRunner) -> Self {
        self.tools = Some(Arc::new(tokio::sync::Mutex::new(runner)));
        self
    }

    /// Send no more calls: those waiting for a slot (and any started later) fail at
    /// once with kind [`CallErrorKind::NotSent`]; calls already sent still land.
    pub fn halt(&self) {
        self.halted.store(true, Ordering::SeqCst);
    }

    /// Ask providers to stream, and send their text as it arrives to `tx` (replies
    /// still come whole from `next_reply`; coalesced and cached calls send nothing).
    pub fn with_deltas(mut self, tx: tokio::sync::mpsc::UnboundedSender<Delta>) -> Self {
        self.deltas = Some(tx);
        self
    }

    /// Carry out what feeding an input asked for: after a stop, send nothing new.
    pub fn apply(&mut self, fed: &Fed) {
        if fed.stopped.is_some() {
            self.halt();
        }
        self.execute(&fed.effects);
    }

    pub fn outstanding(&self) -> usize {
        self.order.len()
    }

    /// Start the calls and cancellations among `effects` (events are for the caller).
    pub fn execute(&mut self, effects: &[Effect]) {
        for effect in effects {
            match effect {
                Effect::CallLlm { call, request } => self.start(*call, request.clone()),
                Effect::CallTool { call, tool, node, after } => self.start_tool(*call, tool.clone(), *node, *after),
                Effect::RunCheck { call, request } => self.start_check(*call, request.clone()),
                Effect::Cancel { calls } => self.cancel(calls),
                Effect::Emit { .. } => {}
            }
        }
    }

    fn start(&mut self, call: u64, request: LlmRequest) {
        let model = &self.scope;
        self.order.push_back(call);
        // One lock for filing and looking up (it was two, a hot spot per call).
        let (filed, cached) = match self.cache.lock() {
            Ok(mut c) => {
                let filed = c.key_for(model, &request);
                let cached = c.get_key(&filed.key);
                (filed, cached)
            }
            Err(_) => (CallKey { key: request.cache_key(model), occurrence: 0, shared: false }, None),
        };
        let request = Arc::new(request);
        self.requests.insert(call, Arc::clone(&request));
        if let Some(mut reply) = cached {
            // A disk entry written before its key was known as a secret.
            crate::llm::secret::redact_in_place(&mut reply);
            self.ready.insert(call, Done::Llm(Ok(reply)));
            return;
        }
        if let Some(refusal) = self.window.and_then(|w| does_not_fit(&request, w)) {
            self.ready.insert(call, Done::Llm(Err(refusal)));
            return;
        }
        self.keys.insert(call, filed.clone());
        // Only calls whose purpose shares answers wait for an identical one in flight.
        if filed.shared {
            if let Some(&leader) = self.inflight.get(&filed.key) {
                self.followers.entry(leader).or_default().push(call);
                return;
            }
            // Another problem sharing the cache has it in flight: wait for its answer.
            let asked = self.cache.lock().ok().map(|mut c| c.wait_or_fly(&filed.key));
            match asked {
                Some(Asked::Wait(answer)) => return self.follow_other_problem(call, answer),
                Some(Asked::Fly(id)) => {
                    self.flying.insert(call, (filed.key.clone(), id));
                }
                None => {}
            }
            self.inflight.insert(filed.key.clone(), call);
        }
        self.calls_made += 1;
        let occurrence = filed.occurrence;
        let provider = Arc::clone(&self.provider);
        let limit = self.limit.clone();
        self.depths.insert(call, self.depth);
        let priority = Priority { depth: self.depth, problem: self.problem };
        let depth = self.depth as usize;
        if self.rounds.len() <= depth {
            self.rounds.resize(depth + 1, Round::default());
        }
        self.rounds[depth].calls += 1;
        self.rounds[depth].samples += u64::from(request.n.max(1));
        let sink: Option<DeltaFn> = self.deltas.clone().map(|tx| -> DeltaFn {
            Arc::new(move |sample, piece: Streamed<'_>| {
                // A watcher that has gone away is not an error for the call.
                let delta = match piece {
                    Streamed::Text(text) => {
                        Delta { call, sample, text: crate::llm::secret::redact(text).into_owned(), restart: false }
                    }
                    Streamed::Restart => Delta { call, sample, text: String::new(), restart: true },
                };
                let _ = tx.send(delta);
            })
        });
        // Landed by the call itself, so other problems waiting get the answer whether or
        // not this driver is still reading its replies.
        let landing =
            self.flying.get(&call).map(|(key, id)| (Arc::clone(&self.cache), key.clone(), *id, filed.clone()));
        let halted = Arc::clone(&self.halted);
        let slots = crate::llm::fanout::Slots::of(limit.clone(), Arc::clone(&halted)).at(priority);
        let handle = self.tasks.spawn(async move {
            let permit = limit.acquire(priority).await;
            let started = Instant::now();
            let mut result = match permit {
                Some(_permit) if halted.load(Ordering::SeqCst) => {
                    Err(CallError { kind: CallErrorKind::NotSent, message: "not sent: the run had stopped".into() })
                }
                Some(_permit) => provider.complete(&request, CallOptions { stream: sink, occurrence, slots }).await,
                None => {
                    Err(CallError { kind: CallErrorKind::Shutdown, message: "the program is shutting down".into() })
                }
            };
            if let Ok(reply) = result.as_mut() {
                if !reply.simulated {
                    reply.latency_ms = started.elapsed().as_millis() as u64;
                }
            }
            if let Some((cache, key, id, filed)) = landing {
                let shared = redacted(result.clone());
                if let Ok(mut cache) = cache.lock() {
                    if let Ok(reply) = &shared {
                        cache.put_key(&filed, reply);
                    }
                    cache.land(&key, id, &shared);
                }
            }
            (call, Done::Llm(result))
        });
        self.aborts.insert(call, handle);
    }

    /// Take the answer another problem's identical request gets, as a cache hit (not a
    /// call: nothing is sent); its failure is shared, as within one problem.
    fn follow_other_problem(
        &mut self,
        call: u64,
        answer: tokio::sync::oneshot::Receiver<Result<LlmResponse, CallError>>,
    ) {
        let handle = self.tasks.spawn(async move {
            let result = match answer.await {
                Ok(Ok(mut reply)) => {
                    reply.cached = true;
                    reply.latency_ms = 0;
                    reply.usage.prompt_tokens = 0;
                    reply.usage.completion_tokens = 0;
                    Ok(reply)
                }
                Ok(Err(e)) => Err(CallError {
                    kind: CallErrorKind::Shared,
                    message: format!("an identical request of another problem failed ({}): {}", e.kind, e.message),
                }),
                Err(_) => Err(CallError {
                    kind: CallErrorKind::Shared,
                    message: "an identical request of another problem was given up (its run stopped)".into(),
                }),
            };
            (call, Done::Llm(result))
        });
        self.aborts.insert(call, handle);
    }

    /// Start a tool call as a task of the driver (tools are not money: no permit).
    fn start_tool(&mut self, call: u64, tool: ToolRequest, node: NodeId, after: NodeId) {
        self.order.push_back(call);
        let Some(runner) = self.tools.clone() else {
            let text = "No tools are available in this run.".to_string();
            self.ready.insert(call, Done::Tool(ToolResult { text, ok: false, latency_ms: 0 }));
            return;
        };
        let handle = self.tasks.spawn(async move {
            let mut runner = runner.lock_owned().await;
            (call, Done::Tool(runner.run(&tool, node, after).await))
        });
        self.aborts.insert(call, handle);
    }

    /// Run a task's check program on a thread of its own (it is bounded by its time limit).
    fn start_check(&mut self, call: u64, request: CheckRequest) {
        self.order.push_back(call);
        if self.halted.load(Ordering::SeqCst) {
            let failure = format!("{} was not run: the run had stopped", request.named());
            self.ready.insert(call, Done::Check(Err(failure)));
            return;
        }
        if self.announce_checks && first_announcement(&request.argv) {
            let line = format!("note: running {} (its verdicts are recorded in the session)", request.named());
            eprintln!("{}", crate::safe_text::terminal_safe(&line));
        }
        let handle = self.tasks.spawn(async move {
            let done = tokio::task::spawn_blocking(move || check_run::run(&request)).await;
            let result = done.unwrap_or_else(|e| Err(format!("the check program's runner failed: {e}")));
            (call, Done::Check(result))
        });
        self.aborts.insert(call, handle);
    }

    /// Give up the tool calls still running (a run that stops: tools cost nothing, and a
    /// tool computing would hold the end up to its time limit). Their replies never come;
    /// the engine is not told. Returns how many were given up.
    pub fn abandon_tools(&mut self) -> usize {
        let running: Vec<u64> = self
            .order
            .iter()
            .copied()
            .filter(|c| !self.requests.contains_key(c) && !self.ready.contains_key(c))
            .collect();
        self.cancel(&running);
        running.len()
    }

    fn cancel(&mut self, calls: &[u64]) {
        for call in calls {
            self.order.retain(|c| c != call);
            self.ready.remove(call);
            self.depths.remove(call);
            // Keep a leader running while someone still waits for its reply.
            let mut has_followers = self.followers.get(call).is_some_and(|f| f.iter().any(|x| self.order.contains(x)));
            // Other problems waiting for it keep it running too; else it is no longer in flight.
            if !has_followers {
                if let Some((key, id)) = self.flying.get(call) {
                    let given_up = self.cache.lock().map_or(true, |mut c| c.unfly_unless_waited(key, *id));
                    if given_up {
                        self.flying.remove(call);
                    } else {
                        has_followers = true;
                    }
                }
            }
            if !has_followers {
                if let Some(h) = self.aborts.remove(call) {
                    h.abort();
                }
                self.inflight.retain(|_, leader| leader != call);
                self.followers.remove(call);
                self.keys.remove(call);
            }
        }
    }

    fn complete(&mut self, call: u64, done: Done) {
        self.aborts.remove(&call);
        // A known key a model echoed or a tool read goes no further: not into the engine
        // (nor back to a model), the session or the cache.
        let done = match done {
            Done::Llm(Ok(mut reply)) => {
                crate::llm::secret::redact_in_place(&mut reply);
                Done::Llm(Ok(reply))
            }
            Done::Llm(Err(mut e)) => {
                e.message = crate::llm::secret::redact(&e.message).into_owned();
                Done::Llm(Err(e))
            }
            Done::Tool(mut result) => {
                result.text = crate::llm::secret::redact(&result.text).into_owned();
                Done::Tool(result)
            }
            Done::Check(Ok(mut verdict)) => {
                verdict.said = crate::llm::secret::redact(&verdict.said).into_owned();
                Done::Check(Ok(verdict))
            }
            Done::Check(Err(failure)) => Done::Check(Err(crate::llm::secret::redact(&failure).into_owned())),
        };
        let result = match done {
            local @ (Done::Tool(_) | Done::Check(_)) => {
                if self.order.contains(&call) {
                    self.ready.insert(call, local);
                }
                return;
            }
            Done::Llm(result) => result,
        };
        if let Some(filed) = self.keys.remove(&call) {
            if self.inflight.get(&filed.key) == Some(&call) {
                self.inflight.remove(&filed.key);
            }
            if let Ok(mut cache) = self.cache.lock() {
                if let Ok(reply) = &result {
                    cache.put_key(&filed, reply);
                }
                // Landed by the call's own task already.
                self.flying.remove(&call);
            }
        }
        for follower in self.followers.remove(&call).unwrap_or_default() {
            self.keys.remove(&follower);
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
                // Not sent itself: the failure is the leader's, counted once.
                Err(e) => Err(CallError {
                    kind: CallErrorKind::Shared,
                    message: format!("an identical request in flight failed ({}): {}", e.kind, e.message),
                }),
            };
            if self.order.contains(&follower) {
                self.ready.insert(follower, Done::Llm(shared));
            }
        }
        if self.order.contains(&call) {
            self.ready.insert(call, Done::Llm(result));
        }
    }

    /// The next input in request order — a model reply (with its request) or a tool
    /// observation; `None` when nothing is outstanding. Cancel-safe: everything in
    /// flight is a task of the driver, so dropping this future loses nothing.
    pub async fn next_input(&mut self) -> Option<(Input, Option<LlmRequest>)> {
        loop {
            let front = *self.order.front()?;
            if let Some(done) = self.ready.remove(&front) {
                self.order.pop_front();
                self.went_deeper(front);
                return Some(match done {
                    Done::Tool(result) => (Input::ToolReply(ToolReply { call: front, result }), None),
                    Done::Check(result) => (Input::CheckReply(CheckReply { call: front, result }), None),
                    Done::Llm(result) => {
                        let request = self.requests.remove(&front).map(unshare);
                        (Input::LlmReply(LlmReply { call: front, result }), request)
                    }
                });
            }
            self.wait_one(front).await;
        }
    }

    /// The next model reply in request order, with its request; `None` when nothing is
    /// outstanding or a tool call is next (only `next_input` delivers those).
    pub async fn next_reply(&mut self) -> Option<(LlmReply, LlmRequest)> {
        loop {
            let front = *self.order.front()?;
            match self.ready.remove(&front) {
                Some(Done::Llm(result)) => {
                    self.order.pop_front();
                    self.went_deeper(front);
                    let request = self.requests.remove(&front).map(unshare)?;
                    return Some((LlmReply { call: front, result }, request));
                }
                Some(local @ (Done::Tool(_) | Done::Check(_))) => {
                    self.ready.insert(front, local);
                    return None;
                }
                None if !self.requests.contains_key(&front) => return None,
                None => self.wait_one(front).await,
            }
        }
    }

    /// The engine is fed the reply of `call`: what it issues next is a round trip deeper.
    fn went_deeper(&mut self, call: u64) {
        if let Some(d) = self.depths.remove(&call) {
            self.depth = self.depth.max(d.saturating_add(1));
        }
    }

    /// Wait for one task to finish and file its result.
    async fn wait_one(&mut self, front: u64) {
        match self.tasks.join_next().await {
            Some(Ok((call, done))) => self.complete(call, done),
            Some(Err(join_error)) => {
                if join_error.is_cancelled() {
                    return;
                }
                // A provider or tool panicked: fail the call it was running, keep the run going.
                let id = join_error.id();
                let call = self.aborts.iter().find(|(_, h)| h.id() == id).map(|(c, _)| *c);
                if let Some(call) = call {
                    let message = format!("the call crashed: {join_error}");
                    let done = if self.requests.contains_key(&call) {
                        Done::Llm(Err(CallError { kind: CallErrorKind::Internal, message }))
                    } else {
                        Done::Tool(ToolResult { text: message, ok: false, latency_ms: 0 })
                    };
                    self.complete(call, done);
                }
            }
            None => {
                // Nothing is running yet the front has no reply: fail it rather than wait forever.
                let message = "the call was lost by the driver".to_string();
                let done = if self.requests.contains_key(&front) {
                    Done::Llm(Err(CallError { kind: CallErrorKind::Internal, message }))
                } else {
                    Done::Tool(ToolResult { text: message, ok: false, latency_ms: 0 })
                };
                self.ready.insert(front, done);
            }
        }
    }
}

#[cfg(test)]
mod chat_style_tests;
#[cfg(test)]
mod params_tests;
#[cfg(test)]
mod shared_cache_tests;
#[cfg(test)]
mod tests;

impl Drop for Driver {
    /// Calls other problems wait for and this driver will never finish (its run was
    /// dropped mid-call): they are told, so no other problem waits for ever.
    fn drop(&mut self) {
        if self.flying.is_empty() {
            return;
        }
        let given_up = Err(CallError::new(CallErrorKind::NotSent, "not answered: the run asking it stopped"));
        if let Ok(mut cache) = self.cache.lock() {
            for (key, id) in self.flying.values() {
                cache.land(key, *id, &given_up);
            }
        }
    }
}
