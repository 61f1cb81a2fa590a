//! CPU-heavy tool work (the math tools) on a thread of its own, so the call can be
//! abandoned. Run on the async runtime, a tool that computes for a long time holds one of
//! its few worker threads, and a blocking-pool task (`spawn_blocking`) cannot be cancelled
//! and keeps the runtime — and so the process — from ending. A plain thread can be left
//! behind: the call fails at its time limit with an observation naming the limit, the run
//! goes on, and the thread ends with its computation or with the process.
//!
//! The solvers also bound their own work (step budgets, microlp's time limit), so an
//! abandoned thread normally finishes soon after; at most [`MAX_RUNNING`] tool threads run
//! at once, so a model that keeps asking for something pathological cannot pile them up.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::Observation;

/// How long a math tool may compute before its call fails (its time budget).
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Tool threads that may be running at once, abandoned ones included.
pub const MAX_RUNNING: usize = 4;

/// A count of running tool threads, with a ceiling.
pub struct Threads {
    running: AtomicUsize,
    max: usize,
}

impl Threads {
    pub const fn new(max: usize) -> Threads {
        Threads { running: AtomicUsize::new(0), max }
    }

    /// Threads running now (abandoned ones included).
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    fn take(&'static self) -> Option<Slot> {
        let max = self.max;
        self.running.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < max).then_some(n + 1)).ok()?;
        Some(Slot(self))
    }
}

/// The math tools' threads.
pub static TOOL_THREADS: Threads = Threads::new(MAX_RUNNING);

/// Counts a running tool thread while it lives.
struct Slot(&'static Threads);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Run `work` for the tool `name` on a thread of its own and wait at most `limit` for it.
/// A computation that takes longer is abandoned: the observation says so and names the
/// limit. A crash of `work` is a failed observation too.
pub async fn off_thread(
    name: &'static str,
    limit: Duration,
    work: impl FnOnce() -> Observation + Send + 'static,
) -> Observation {
    off_thread_in(&TOOL_THREADS, name, limit, work).await
}

/// [`off_thread`] counted in `threads`.
pub async fn off_thread_in(
    threads: &'static Threads,
    name: &'static str,
    limit: Duration,
    work: impl FnOnce() -> Observation + Send + 'static,
) -> Observation {
    let Some(slot) = threads.take() else {
        return Observation::fail(format!(
            "{name} is not run: {} earlier tool calls are still computing (abandoned at their time limit); ask for \
             something smaller",
            threads.max
        ));
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new().name(format!("tool-{name}")).spawn(move || {
        let _slot = slot;
        // The caller may have given up: nobody to tell, and nothing to do about it.
        let _ = tx.send(work());
    });
    if let Err(e) = spawned {
        return Observation::fail(format!("{name} could not start: {e}"));
    }
    // On the runtime (it needs its timers, as every runtime this program builds has), wait
    // without holding a worker; elsewhere (demo recording, a plain executor) on a small
    // timer of its own.
    let waited = if tokio::runtime::Handle::try_current().is_ok() {
        wait(limit, rx).await
    } else {
        match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(timer) => timer.block_on(wait(limit, rx)),
            Err(e) => return Observation::fail(format!("{name} could not wait for its answer: {e}")),
        }
    };
    match waited {
        Ok(Ok(observation)) => observation,
        Ok(Err(_)) => Observation::fail(format!("{name} crashed on this input; ask for it another way")),
        Err(_) => Observation::fail(format!(
            "{name} did not finish within {} (its time limit) and was abandoned; ask for something smaller or split \
             it into steps",
            seconds(limit)
        )),
    }
}

async fn wait(
    limit: Duration,
    rx: tokio::sync::oneshot::Receiver<Observation>,
) -> Result<Result<Observation, tokio::sync::oneshot::error::RecvError>, tokio::time::error::Elapsed> {
    tokio::time::timeout(limit, rx).await
}

fn seconds(limit: Duration) -> String {
    let s = limit.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Instant;

    #[tokio::test]
    async fn a_computation_that_never_ends_fails_at_the_limit_and_is_left_behind() {
        let stop = Arc::new(AtomicBool::new(false));
        let spin = Arc::clone(&stop);
        let started = Instant::now();
        let obs = off_thread("spin", Duration::from_millis(200), move || {
            // Busy, never yielding, until the test lets it go.
            while !spin.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            Observation::ok("done")
        })
        .await;
        let waited = started.elapsed();
        assert!(!obs.ok, "{obs:?}");
        assert_eq!(
            obs.text,
            "spin did not finish within 0.2 s (its time limit) and was abandoned; ask for something smaller or split \
             it into steps"
        );
        assert!(waited >= Duration::from_millis(200) && waited < Duration::from_secs(5), "{waited:?}");
        stop.store(true, Ordering::SeqCst);
    }

    #[tokio::test]
    async fn abandoned_threads_count_until_they_end_and_their_number_is_capped() {
        static TWO: Threads = Threads::new(2);
        let stop = Arc::new(AtomicBool::new(false));
        for _ in 0..2 {
            let spin = Arc::clone(&stop);
            let obs = off_thread_in(&TWO, "spin", Duration::from_millis(20), move || {
                while !spin.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Observation::ok("done")
            })
            .await;
            assert!(obs.text.contains("did not finish"), "{obs:?}");
        }
        assert_eq!(TWO.running(), 2);
        let refused = off_thread_in(&TWO, "lp", TIME_LIMIT, || Observation::ok("never run")).await;
        assert_eq!(
            refused.text,
            "lp is not run: 2 earlier tool calls are still computing (abandoned at their time limit); ask for \
             something smaller"
        );
        stop.store(true, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TWO.running() > 0 {
            assert!(Instant::now() < deadline, "the abandoned threads ended");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let obs = off_thread_in(&TWO, "lp", TIME_LIMIT, || Observation::ok("4")).await;
        assert_eq!(obs.text, "4");
    }

    #[test]
    fn off_the_runtime_it_waits_on_a_timer_of_its_own() {
        // Demo recording drives tools with a plain executor.
        let obs = futures::executor::block_on(off_thread("count", TIME_LIMIT, || Observation::ok("6")));
        assert_eq!(obs.text, "6");
        let obs = futures::executor::block_on(off_thread("count", Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_millis(500));
            Observation::ok("late")
        }));
        assert!(obs.text.starts_with("count did not finish within 0.05 s"), "{obs:?}");
    }

    #[tokio::test]
    async fn an_answer_comes_back_and_a_crash_is_an_observation() {
        let obs = off_thread("calc", TIME_LIMIT, || Observation::ok("42")).await;
        assert_eq!((obs.text.as_str(), obs.ok), ("42", true));
        let obs = off_thread("calc", TIME_LIMIT, || -> Observation { panic!("a bug in a solver") }).await;
        assert_eq!((obs.text.as_str(), obs.ok), ("calc crashed on this input; ask for it another way", false));
        assert_eq!(seconds(TIME_LIMIT), "10 s");
    }
}
