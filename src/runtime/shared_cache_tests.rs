//! Problems side by side with a real model share one cache (issue 27): an identical
//! request of two problems is asked once, the session that reused it records the answer
//! whole as a cache hit and replays alone; `sim`'s problems keep their own caches.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::engine::Params;
use crate::llm::sim::SimProvider;
use crate::llm::{BoxFuture, CallOptions, Provider};
use crate::protocol::{CallError, LlmRequest, LlmResponse};
use crate::runtime::headless::{run_headless, Interrupts, RunSetup};
use crate::tasks::{Problem, SimPlayers};

/// The simulated model's answers from a provider that says it is a real model.
struct Real {
    sim: SimProvider,
    calls: AtomicUsize,
}

impl Provider for Real {
    fn name(&self) -> &str {
        "openai"
    }
    fn model(&self) -> &str {
        "real-model"
    }
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move { self.sim.answer(request) })
    }
}

async fn run(provider: Arc<dyn Provider>, problems: &[Problem], dir: &std::path::Path) -> Vec<(u64, u64, String)> {
    let task = crate::tasks::build("game24", &Default::default(), &mut Vec::new()).unwrap();
    let setup = RunSetup {
        task,
        params: Params::new(crate::engine::methods::tot_bfs::KIND),
        provider,
        sim: None,
        concurrency: 8,
        record: Some(dir.to_path_buf()),
        limits: Default::default(),
        replay_tools: None,
        unjudged: false,
        memory: None,
    };
    let (_keep, rx) = Interrupts::channel();
    let done = run_headless(&setup, problems, rx, |_| Ok(())).await;
    assert!(done.stopped.is_none(), "{:?}", done.stopped);
    done.results.iter().map(|r| (r.calls, r.cache_hits, r.session.clone().unwrap())).collect()
}

#[tokio::test]
async fn a_real_models_problems_share_identical_requests_and_each_session_replays_alone() {
    let dir = tempfile::tempdir().unwrap();
    // The same puzzle twice (two problems of a list can meet the same states too).
    let problems: Vec<Problem> =
        (0..2).map(|i| Problem { index: Some(900 + i), input: "4 5 6 10".to_string() }).collect();
    let alone = Arc::new(Real { sim: SimProvider::new(Default::default(), &SimPlayers), calls: AtomicUsize::new(0) });
    let one = run(alone.clone(), &problems[..1], &dir.path().join("one")).await;
    let one_calls = alone.calls.load(Ordering::SeqCst);
    assert_eq!(one_calls as u64, one[0].0, "each call of one problem reaches the model");

    let real = Arc::new(Real { sim: SimProvider::new(Default::default(), &SimPlayers), calls: AtomicUsize::new(0) });
    let both = run(real.clone(), &problems, &dir.path().join("real")).await;
    let sent = real.calls.load(Ordering::SeqCst);
    let hits: u64 = both.iter().map(|r| r.1).sum::<u64>() - 2 * one[0].1;
    assert!(sent < 2 * one_calls, "the second problem's shared value requests were not asked again: {sent}");
    assert!(hits > 0, "and were cache hits: {both:?}");
    for (_, _, path) in &both {
        let session = crate::session::Session::load(std::path::Path::new(path)).unwrap();
        let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
        assert!(rebuilt.fidelity.is_exact(), "{path}: {}", rebuilt.fidelity);
    }

    // `sim` keeps each problem's cache its own: twice the calls, whatever the timing.
    let sim: Arc<dyn Provider> = Arc::new(SimProvider::new(Default::default(), &SimPlayers));
    let isolated = run(sim, &problems, &dir.path().join("sim")).await;
    assert_eq!(isolated[0].0 + isolated[1].0, 2 * one[0].0);
    assert_eq!(isolated[0].1, isolated[1].1, "the same cache hits in each");
}
