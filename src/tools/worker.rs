//! CPU-heavy tool work (the math tools) on a thread of its own, so the call can be
//! abandoned. Run on the async runtime, a tool that computes for a long time holds one of
//! its few worker threads, and a blocking-pool task (`spawn_blocking`) cannot be cancelled
//! and keeps the runtime — and so the process — from ending. A plain thread can be left
//! behind: the call fails at its time limit with an observation naming the limit, the run
//! goes on, and the thread ends with its computation or with the process.
//!
//! The solvers also bound their own work (step budgets, microlp's time limit), so an
//! abandoned thread normally finishes soon after. At most [`MAX_RUNNING`] tool threads
//! run at once: a call beyond them waits for one to end (the calls of problems run side
//! by side take their turns, and each gets its answer whatever the timing), and is
//! refused only when every one of them is a thread abandoned at its time limit, so a
//! model that keeps asking for something pathological cannot pile them up.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};

use super::Observation;

/// How long a math tool may compute before its call fails (its time budget).
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// Tool threads that may be running at once, abandoned ones included.
pub const MAX_RUNNING: usize = 4;

/// The tool threads' slots, and how many of them abandoned threads hold.
pub struct Threads {
    slots: Semaphore,
    abandoned: AtomicUsize,
    max: usize,
}

/// A call's thread: still computing, finished, or abandoned by its caller.
const COMPUTING: u8 = 0;
const FINISHED: u8 = 1;
const ABANDONED: u8 = 2;

impl Threads {
    pub const fn new(max: usize) -> Threads {
        Threads { slots: Semaphore::const_new(max), abandoned: AtomicUsize::new(0), max }
    }

    /// Threads running now (abandoned ones included).
    pub fn running(&self) -> usize {
        self.max - self.slots.available_permits()
    }

    /// Threads running now that their callers abandoned at the time limit.
    pub fn abandoned(&self) -> usize {
        self.abandoned.load(Ordering::SeqCst)
    }

    /// A slot, when one is free or frees within `limit`; `None` at once when every slot
    /// is held by an abandoned thread (nothing to wait for), or when none freed in time.
    async fn take(&'static self, limit: Duration) -> Option<SemaphorePermit<'static>> {
        if let Ok(permit) = self.slots.try_acquire() {
            return Some(permit);
        }
        if self.abandoned() >= self.max {
            return None;
        }
        tokio::time::timeout(limit, self.slots.acquire()).await.ok()?.ok()
    }
}

/// The math tools' threads.
pub static TOOL_THREADS: Threads = Threads::new(MAX_RUNNING);

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
    // On the runtime (it needs its timers, as every runtime this program builds has), wait
    // without holding a worker; elsewhere (demo recording, a plain executor) on a small
    // timer of its own.
    if tokio::runtime::Handle::try_current().is_ok() {
        return run_in(threads, name, limit, work).await;
    }
    match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(timer) => timer.block_on(run_in(threads, name, limit, work)),
        Err(e) => Observation::fail(format!("{name} could not wait for its answer: {e}")),
    }
}

async fn run_in(
    threads: &'static Threads,
    name: &'static str,
    limit: Duration,
    work: impl FnOnce() -> Observation + Send + 'static,
) -> Observation {
    let Some(slot) = threads.take(limit).await else {
        let abandoned = threads.abandoned();
        return Observation::fail(if abandoned >= threads.max {
            format!(
                "{name} is not run: {abandoned} earlier tool calls are still computing (abandoned at their time \
                 limit); ask for something smaller"
            )
        } else {
            format!(
                "{name} is not run: all {} tool threads stayed busy for {} ({abandoned} of them abandoned at their \
                 time limit); ask for something smaller",
                threads.max,
                seconds(limit)
            )
        });
    };
    let state = Arc::new(AtomicU8::new(COMPUTING));
    let ending = Ending { threads, state: Arc::clone(&state) };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new().name(format!("tool-{name}")).spawn(move || {
        // Both dropped as the thread ends, whether `work` returns or panics (the mark first,
        // so a free slot never has an abandoned thread still counted).
        let (_ending, _slot) = (ending, slot);
        // The caller may have given up: nobody to tell, and nothing to do about it.
        let _ = tx.send(work());
    });
    if let Err(e) = spawned {
        return Observation::fail(format!("{name} could not start: {e}"));
    }
    match wait(limit, rx).await {
        Ok(Ok(observation)) => observation,
        Ok(Err(_)) => Observation::fail(format!("{name} crashed on this input; ask for it another way")),
        Err(_) => {
            // Counted before it is marked, so the thread's uncounting never goes below zero.
            threads.abandoned.fetch_add(1, Ordering::SeqCst);
            if state.compare_exchange(COMPUTING, ABANDONED, Ordering::SeqCst, Ordering::SeqCst).is_err() {
                threads.abandoned.fetch_sub(1, Ordering::SeqCst);
            }
            Observation::fail(format!(
                "{name} did not finish within {} (its time limit) and was abandoned; ask for something smaller or \
                 split it into steps",
                seconds(limit)
            ))
        }
    }
}

/// Marks a call's thread finished as it ends; one its caller abandoned is uncounted.
struct Ending {
    threads: &'static Threads,
    state: Arc<AtomicU8>,
}

impl Drop for Ending {
    fn drop(&mut self) {
        if self.state.compare_exchange(COMPUTING, FINISHED, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            self.threads.abandoned.fetch_sub(1, Ordering::SeqCst);
        }
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
        assert_eq!((TWO.running(), TWO.abandoned()), (2, 2));
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
        assert_eq!(TWO.abandoned(), 0);
        let obs = off_thread_in(&TWO, "lp", TIME_LIMIT, || Observation::ok("4")).await;
        assert_eq!(obs.text, "4");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_beyond_the_threads_wait_their_turn_and_all_get_their_answers() {
        // Problems side by side ask for more tools at once than there are threads: each
        // waits for a slot, none is refused (a refusal here made runs depend on timing).
        static ONE: Threads = Threads::new(1);
        let calls = (0..4).map(|i| {
            off_thread_in(&ONE, "calc", TIME_LIMIT, move || {
                std::thread::sleep(Duration::from_millis(30));
                Observation::ok(i.to_string())
            })
        });
        let answers: Vec<String> = futures::future::join_all(calls).await.into_iter().map(|o| o.text).collect();
        assert_eq!(answers, ["0", "1", "2", "3"]);
        // A slot held past the time given to wait for one: refused, saying why.
        // (The calls' threads free their slot just after answering: wait for that first.)
        while ONE.running() > 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let (stop, started) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (spin, running) = (Arc::clone(&stop), Arc::clone(&started));
        let busy = tokio::spawn(off_thread_in(&ONE, "spin", TIME_LIMIT, move || {
            running.store(true, Ordering::SeqCst);
            while !spin.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Observation::ok("done")
        }));
        while !started.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let refused = off_thread_in(&ONE, "lp", Duration::from_millis(50), || Observation::ok("never run")).await;
        assert_eq!(
            refused.text,
            "lp is not run: all 1 tool threads stayed busy for 0.05 s (0 of them abandoned at their time limit); \
             ask for something smaller"
        );
        stop.store(true, Ordering::SeqCst);
        assert_eq!(busy.await.unwrap().text, "done");
        let deadline = Instant::now() + Duration::from_secs(10);
        while ONE.running() > 0 {
            assert!(Instant::now() < deadline, "the thread ended");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(ONE.abandoned(), 0);
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
