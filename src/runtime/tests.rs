//! Driver tests on tokio's paused clock: sleeps advance instantly and in order, so
//! these check concurrency and ordering without real waiting or timing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::Driver;
use crate::engine::Effect;
use crate::llm::cache::ResponseCache;
use crate::llm::{BoxFuture, CallOptions, Provider};
use crate::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Message, Purpose, Usage};

/// Answers with the request's first message after a delay given by `delay(text)`,
/// counting how many calls are in flight at once.
struct Probe {
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    calls: AtomicUsize,
    delay: fn(&str) -> u64,
}

impl Probe {
    fn new(delay: fn(&str) -> u64) -> Arc<Self> {
        Arc::new(Probe { in_flight: AtomicUsize::new(0), peak: AtomicUsize::new(0), calls: AtomicUsize::new(0), delay })
    }
}

impl Provider for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn model(&self) -> &str {
        "probe-model"
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            let text = request.messages[0].content.clone();
            tokio::time::sleep(Duration::from_millis((self.delay)(&text))).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            if text == "fail" {
                return Err(CallError { kind: CallErrorKind::Http, message: "boom".into() });
            }
            Ok(LlmResponse {
                completions: vec![Completion::text(text, None)],
                usage: Usage { prompt_tokens: 3, completion_tokens: 1, estimated: false, ..Usage::default() },
                latency_ms: 0,
                model: "probe-model".into(),
                simulated: false,
                cached: false,
                lost: None,
            })
        })
    }
}

fn call(id: u64, text: &str) -> Effect {
    Effect::CallLlm {
        call: id,
        request: LlmRequest {
            purpose: Purpose::Value,
            messages: vec![Message::user(text)],
            n: 1,
            temperature: 0.7,
            max_tokens: None,
            stop: vec![],
            context: serde_json::Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        },
    }
}

fn driver(provider: Arc<Probe>, limit: usize) -> Driver {
    Driver::new(provider, Arc::new(Semaphore::new(limit)), Arc::new(Mutex::new(ResponseCache::new())))
}

async fn drain(d: &mut Driver) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    while let Some((reply, _)) = d.next_reply().await {
        let text = match reply.result {
            Ok(r) => format!("{}{}", r.completions[0].text, if r.cached { " (cached)" } else { "" }),
            Err(e) => format!("error: {e}"),
        };
        out.push((reply.call, text));
    }
    out
}

#[tokio::test(start_paused = true)]
async fn replies_come_back_in_request_order_not_arrival_order() {
    // Later calls finish first.
    let probe = Probe::new(|t| 100 - t.parse::<u64>().unwrap_or(0) * 10);
    let mut d = driver(probe.clone(), 8);
    d.execute(&(0..6).map(|i| call(i, &i.to_string())).collect::<Vec<_>>());
    let got = drain(&mut d).await;
    let ids: Vec<u64> = got.iter().map(|(c, _)| *c).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5]);
}

#[tokio::test(start_paused = true)]
async fn concurrency_is_bounded_by_the_limit() {
    for (limit, expected_peak) in [(1, 1), (4, 4), (16, 10)] {
        let probe = Probe::new(|_| 50);
        let mut d = driver(probe.clone(), limit);
        d.execute(&(0..10).map(|i| call(i, &format!("q{i}"))).collect::<Vec<_>>());
        let started = tokio::time::Instant::now();
        drain(&mut d).await;
        assert_eq!(probe.peak.load(Ordering::SeqCst), expected_peak, "limit {limit}");
        // On the paused clock, time only passes in sleeps: 10 calls of 50 ms in waves of `limit`.
        let waves = 10u64.div_ceil(limit as u64);
        assert_eq!(started.elapsed().as_millis() as u64 / 50, waves, "limit {limit}");
    }
}

#[tokio::test(start_paused = true)]
async fn identical_requests_are_answered_once() {
    let probe = Probe::new(|_| 10);
    let mut d = driver(probe.clone(), 8);
    d.execute(&[call(0, "same"), call(1, "same"), call(2, "other")]);
    let got = drain(&mut d).await;
    assert_eq!(got, vec![(0, "same".into()), (1, "same (cached)".into()), (2, "other".into())]);
    d.execute(&[call(3, "same")]);
    assert_eq!(drain(&mut d).await, vec![(3, "same (cached)".into())]);
    assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
    assert_eq!(d.calls_made, 2);
}

#[tokio::test(start_paused = true)]
async fn cancelled_calls_are_not_waited_for_and_failures_are_replies() {
    let probe = Probe::new(|t| if t == "slow" { 10_000 } else { 10 });
    let mut d = driver(probe.clone(), 8);
    d.execute(&[call(0, "slow"), call(1, "fail"), call(2, "ok")]);
    d.execute(&[Effect::Cancel { calls: vec![0] }]);
    let started = tokio::time::Instant::now();
    let got = drain(&mut d).await;
    assert_eq!(got, vec![(1, "error: http: boom".into()), (2, "ok".into())]);
    assert!(started.elapsed() < Duration::from_millis(1000), "the slow call was aborted");
    // An identical request after the cancelled leader is called afresh, not stuck behind it.
    d.execute(&[call(3, "slow")]);
    assert_eq!(drain(&mut d).await, vec![(3, "slow".into())]);
}

#[test]
fn progress_counts_done_and_solved_from_the_same_results() {
    use super::headless::{ProblemResult, Progress};
    let problem = crate::tasks::Problem { index: Some(900), input: "4 5 6 10".into() };
    let mut r = ProblemResult::new(&problem, None, crate::session::Totals::default(), 0);
    let mut p = Progress::new(10);
    assert_eq!(p.line(), "0/10 done, 0 solved");
    r.correct = true;
    p.add(&r);
    assert_eq!(p.line(), "1/10 done, 1 solved", "never more solved than done");
    r.correct = false;
    p.add(&r);
    assert_eq!(p.line(), "2/10 done, 1 solved");
}

fn proposal(id: u64, text: &str) -> Effect {
    match call(id, text) {
        Effect::CallLlm { call, mut request } => {
            request.purpose = Purpose::Propose;
            Effect::CallLlm { call, request }
        }
        other => other,
    }
}

#[tokio::test(start_paused = true)]
async fn requests_sharing_a_failed_one_are_not_counted_as_calls() {
    let probe = Probe::new(|_| 10);
    let mut d = driver(probe.clone(), 8);
    d.execute(&[call(0, "fail"), call(1, "fail"), call(2, "fail")]);
    let mut totals = crate::session::Totals::default();
    let mut kinds = Vec::new();
    while let Some((reply, _)) = d.next_reply().await {
        kinds.push(reply.result.as_ref().err().map(|e| e.kind.clone()));
        totals.count(&crate::engine::Input::LlmReply(reply));
    }
    assert_eq!(probe.calls.load(Ordering::SeqCst), 1, "one request was sent");
    assert_eq!(kinds, vec![Some(CallErrorKind::Http), Some(CallErrorKind::Shared), Some(CallErrorKind::Shared)]);
    assert_eq!((totals.llm_calls, totals.failed_calls), (1, 1), "counted as sent: {totals:?}");
    assert_eq!(d.calls_made, 1);
}

#[tokio::test(start_paused = true)]
async fn proposals_are_drawn_afresh_while_values_are_shared() {
    let probe = Probe::new(|_| 10);
    let mut d = driver(probe.clone(), 8);
    d.execute(&[proposal(0, "p"), proposal(1, "p"), call(2, "v"), call(3, "v")]);
    let got = drain(&mut d).await;
    assert_eq!(got, vec![(0, "p".into()), (1, "p".into()), (2, "v".into()), (3, "v (cached)".into())]);
    d.execute(&[proposal(4, "p"), call(5, "v")]);
    assert_eq!(drain(&mut d).await, vec![(4, "p".into()), (5, "v (cached)".into())]);
    assert_eq!(probe.calls.load(Ordering::SeqCst), 4, "three proposals and one value");

    // --cache off: every request is sent.
    let probe = Probe::new(|_| 10);
    let mut d = Driver::new(probe.clone(), Arc::new(Semaphore::new(8)), Arc::new(Mutex::new(ResponseCache::off())));
    d.execute(&[call(0, "v"), call(1, "v")]);
    assert_eq!(drain(&mut d).await, vec![(0, "v".into()), (1, "v".into())]);
    assert_eq!(probe.calls.load(Ordering::SeqCst), 2);
}

/// Answers at once (or after 100 ms for "hold"), noting the order calls were sent in.
struct Recorder {
    sent: Mutex<Vec<String>>,
}

impl Provider for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn model(&self) -> &str {
        "recorder-model"
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(async move {
            let text = request.messages[0].content.clone();
            self.sent.lock().unwrap().push(text.clone());
            let ms = if text == "hold" { 100 } else { 1 };
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(LlmResponse {
                completions: vec![Completion::text(text, None)],
                usage: Usage { prompt_tokens: 3, completion_tokens: 1, estimated: false, ..Usage::default() },
                latency_ms: 0,
                model: "recorder-model".into(),
                simulated: false,
                cached: false,
                lost: None,
            })
        })
    }
}

#[tokio::test(start_paused = true)]
async fn on_a_priority_limit_calls_fewer_round_trips_in_then_of_earlier_problems_go_first() {
    use crate::llm::limit::{PriorityLimit, Round};
    let recorder = Arc::new(Recorder { sent: Mutex::new(Vec::new()) });
    let limit = PriorityLimit::new(1);
    let cache = || Arc::new(Mutex::new(ResponseCache::off()));
    let driver = |p: usize| Driver::new(recorder.clone(), Arc::clone(&limit), cache()).for_problem(p);
    let (mut d0, mut d1, mut d2) = (driver(0), driver(1), driver(2));
    // Problem 0 is a round trip in; then problem 1 holds the only slot.
    d0.execute(&[call(0, "first")]);
    assert_eq!(drain(&mut d0).await.len(), 1);
    d1.execute(&[call(0, "hold")]);
    tokio::time::sleep(Duration::from_millis(1)).await;
    // Asked for in the order a first-come-first-served limit would send them.
    d0.execute(&[call(1, "deep")]);
    d2.execute(&[call(0, "third")]);
    d1.execute(&[call(1, "later")]);
    let (a, b, c) = tokio::join!(drain(&mut d0), drain(&mut d1), drain(&mut d2));
    assert_eq!((a.len(), b.len(), c.len()), (1, 2, 1));
    let sent = recorder.sent.lock().unwrap().clone();
    assert_eq!(sent, ["first", "hold", "later", "third", "deep"]);
    let one = Round { calls: 1, samples: 1 };
    assert_eq!(d0.rounds(), [one, one], "a call at each of two round trips");
    assert_eq!(d1.rounds(), [Round { calls: 2, samples: 2 }]);
    assert_eq!(limit.available(), 1);
}

/// A tool that computes (on its own thread, like the math tools) until told to stop.
struct Busy(Arc<std::sync::atomic::AtomicBool>);

impl crate::tools::Tool for Busy {
    fn spec(&self) -> crate::tools::ToolSpec {
        crate::tools::ToolSpec::single("busy", "computes until stopped", "arg", "anything")
    }

    fn call<'a>(
        &'a self,
        _arg: &'a str,
        _state: &'a mut crate::tools::ToolState,
    ) -> crate::tools::BoxFuture<'a, crate::tools::Observation> {
        let stop = Arc::clone(&self.0);
        Box::pin(crate::tools::worker::off_thread("busy", Duration::from_secs(600), move || {
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            crate::tools::Observation::ok("done")
        }))
    }
}

// A real clock: the tool computes on a real thread.
#[tokio::test]
async fn a_stopping_run_gives_up_a_computing_tool_at_once_and_keeps_its_model_calls() {
    use crate::engine::{Input, NodeId};
    use crate::protocol::ToolRequest;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let registry = Arc::new(crate::tools::ToolRegistry::new().with(Busy(Arc::clone(&stop))));
    let mut d = driver(Probe::new(|_| 50), 4).with_tools(super::tools::ToolRunner::new(registry));
    let tool = ToolRequest { name: "busy".into(), arg: "forever".into() };
    d.execute(&[Effect::CallTool { call: 1, tool, node: NodeId(1), after: NodeId(0) }, call(2, "a model call")]);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let started = std::time::Instant::now();
    assert_eq!(d.abandon_tools(), 1);
    assert_eq!(d.outstanding(), 1, "the model call is still awaited");
    match d.next_input().await {
        Some((Input::LlmReply(reply), _)) => assert_eq!(reply.call, 2),
        other => panic!("expected the model's reply, got {other:?}"),
    }
    assert!(d.next_input().await.is_none(), "the tool's reply never comes");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    stop.store(true, Ordering::SeqCst);
}

/// Problems side by side sharing one cache (a real model): an identical shared request
/// two problems have in flight at once is sent once; the other problem gets the answer
/// as a cache hit with no tokens. A failed one is shared, and a driver dropped mid-call
/// tells the problems waiting for it, so none waits for ever.
#[tokio::test(start_paused = true)]
async fn problems_sharing_a_cache_ask_an_identical_request_in_flight_once() {
    let probe = Probe::new(|t| if t == "slow" { 500 } else { 50 });
    let cache = Arc::new(Mutex::new(ResponseCache::new()));
    let limit = Arc::new(Semaphore::new(8));
    let mut a = Driver::new(probe.clone(), Arc::clone(&limit), Arc::clone(&cache)).for_problem(0);
    let mut b = Driver::new(probe.clone(), Arc::clone(&limit), Arc::clone(&cache)).for_problem(1);
    a.execute(&[call(0, "v"), call(1, "fail")]);
    b.execute(&[call(0, "v"), call(1, "fail"), call(2, "w")]);
    let (got_a, got_b) = tokio::join!(drain(&mut a), drain(&mut b));
    assert_eq!(probe.calls.load(Ordering::SeqCst), 3, "v, fail and w once each");
    assert_eq!(got_a, vec![(0, "v".to_string()), (1, "error: http: boom".to_string())]);
    assert_eq!(got_b[0], (0, "v (cached)".to_string()));
    assert!(
        got_b[1].1.starts_with("error: shared: an identical request of another problem failed (http)"),
        "{got_b:?}"
    );
    assert_eq!(got_b[2], (2, "w".to_string()));
    assert_eq!((a.calls_made, b.calls_made), (2, 1), "the followed requests are no calls");
    assert_eq!(cache.lock().unwrap().hits, 1);

    // A call cancelled by its own problem runs on while another problem waits for it.
    let mut e = Driver::new(probe.clone(), Arc::clone(&limit), Arc::clone(&cache)).for_problem(4);
    let mut f = Driver::new(probe.clone(), Arc::clone(&limit), Arc::clone(&cache)).for_problem(5);
    e.execute(&[call(0, "slow")]);
    f.execute(&[call(0, "slow")]);
    e.execute(&[Effect::Cancel { calls: vec![0] }]);
    let (got_e, got_f) = tokio::join!(drain(&mut e), drain(&mut f));
    assert_eq!((got_e, got_f), (vec![], vec![(0, "slow (cached)".to_string())]));

    // A driver dropped while its call is in flight: the problem waiting is told.
    let mut c = Driver::new(probe.clone(), Arc::clone(&limit), Arc::clone(&cache)).for_problem(2);
    let mut d = Driver::new(probe.clone(), Arc::clone(&limit), Arc::clone(&cache)).for_problem(3);
    c.execute(&[call(0, "gone")]);
    d.execute(&[call(0, "gone")]);
    drop(c);
    let got = tokio::time::timeout(Duration::from_secs(5), drain(&mut d)).await.expect("not waiting for ever");
    assert!(
        got[0].1.starts_with("error: shared: an identical request of another problem failed (not_sent)"),
        "{got:?}"
    );
}
