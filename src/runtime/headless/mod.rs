//! Headless runs: one problem at a time through the same engine and driver the UI
//! uses, recording a session per problem if asked, with a summary at the end.

mod drive;
mod limits;
mod overflow;
mod results;

use drive::drive_watching;
pub use drive::{drive, drive_until, listen_for_signals, Interrupts, SIGNAL_GRACE};
pub use limits::{open_cache, Budget, RunLimits};
use overflow::{overflow_note, overflows};
pub use results::{by_facet, mean_metrics, FacetStats, ProblemResult, Progress, QaStats, Summary};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::{watch, Semaphore};

use super::memory::RunMemory;
use super::{Driver, Run, Signal, StopPolicy, StopReason};
use crate::engine::sim::SimConfig;
use crate::engine::{Command, Engine, Input, Params};
use crate::llm::cache::ResponseCache;
use crate::llm::limit::Limit;
use crate::llm::Provider;
use crate::protocol::CallErrorKind;
use crate::session::{Header, MemorySnapshot, SessionWriter, Totals, FORMAT, VERSION};
use crate::tasks::{Problem, TaskSource};

/// What a headless run needs besides the problems.
pub struct RunSetup {
    pub task: Arc<dyn TaskSource>,
    pub params: Params,
    pub provider: Arc<dyn Provider>,
    pub sim: Option<SimConfig>,
    pub concurrency: usize,
    /// A file for one problem, a directory for several.
    pub record: Option<PathBuf>,
    /// Cache, price and budgets.
    pub limits: RunLimits,
    /// `--provider replay`: tool calls are answered from the recording alone, with these
    /// observations by problem input (a problem without any has none to give).
    pub replay_tools: Option<std::collections::HashMap<String, Arc<crate::tools::recorded::RecordedTools>>>,
    /// The named memory the method reads and updates, if it keeps one (see
    /// [`super::memory::resolve`]): loaded before each problem, saved after it.
    pub memory: Option<RunMemory>,
    /// The outcome is not put to the task's judge: a re-drive of sessions that never
    /// judged theirs (an imported log without judge scores, header `unjudged`).
    pub unjudged: bool,
}

/// Whether a `--record` path names one session file: it ends in `.jsonl` and is not an
/// existing directory.
pub fn is_session_file(record: &Path) -> bool {
    !record.is_dir() && record.extension().is_some_and(|e| e == "jsonl")
}

/// Where problem `p`'s session goes: into `record` if it is an existing directory, or
/// if the run has `many` problems and `record` does not end in `.jsonl`; else `record`
/// is the session file itself. In a directory, a session already there is kept: the new
/// one is named `-2`, `-3`, ... (a second run into the same folder loses nothing).
pub fn session_path(record: &Path, task: &str, method: &str, problem: &Problem, many: bool) -> PathBuf {
    if record.is_dir() || (many && !is_session_file(record)) {
        let name = crate::session::file_name(task, problem.index, &problem.input, method);
        crate::session::unique_path(record, &name)
    } else {
        record.to_path_buf()
    }
}

pub fn header_for(setup: &RunSetup, problem: &Problem) -> Header {
    Header {
        format: FORMAT.into(),
        version: VERSION,
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: setup.task.name().to_string(),
        input: problem.input.clone(),
        index: problem.index,
        params: setup.params.clone(),
        provider: setup.provider.name().to_string(),
        model: setup.provider.model().to_string(),
        simulated: setup.provider.simulated(),
        sim: setup.sim.clone(),
        price: setup.limits.price,
        source: None,
        parent: None,
        note: None,
        gold: setup.task.gold(&problem.input),
        actions: setup.task.action_rules(),
        facets: setup.task.problem_facets(problem),
        memory: None,
        unjudged: setup.unjudged,
        prompt_style: setup.task.prompt_style(),
        context_window: setup.limits.context.as_ref().map(|c| c.tokens),
        task_def: setup.task.definition(&problem.input),
        provider_notes: setup.provider.notes(),
    }
}

/// Run every problem and return their results in order (see [`run_headless`]). The
/// cache is shared as [`run_headless`] says; a run whose budget is used up, or whose
/// server refuses the key or the model, stops issuing calls and starts no more problems.
pub async fn run_problems(
    setup: &RunSetup,
    problems: &[Problem],
    progress: impl FnMut(&ProblemResult),
) -> Vec<ProblemResult> {
    run_problems_under(setup, problems, Arc::new(Semaphore::new(setup.concurrency.max(1))), progress).await
}

/// [`run_problems`], its calls under `limit` instead of a limit of its own, so several
/// runs side by side share one concurrency limit (`bench compare`).
pub async fn run_problems_under(
    setup: &RunSetup,
    problems: &[Problem],
    limit: Arc<Semaphore>,
    mut progress: impl FnMut(&ProblemResult),
) -> Vec<ProblemResult> {
    let (_keep, never) = Interrupts::channel();
    run_headless_under(setup, problems, limit, never, |r| {
        progress(r);
        Ok(())
    })
    .await
    .results
}

/// What a headless run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Headless {
    /// One per problem started, in order (the last one may have been stopped short).
    pub results: Vec<ProblemResult>,
    /// Why the run stopped before every problem was done, if it did.
    pub stopped: Option<String>,
    /// The signal that stopped it, if one did.
    pub signal: Option<Signal>,
    /// Model calls in flight abandoned at a signal (what they cost is not counted).
    pub abandoned: usize,
}

/// Whether the problems of a run go side by side. They go one after another when a
/// problem must begin from what the one before it left: a named memory (problem k+1
/// starts from problem k's lessons), a budget (the run stops at the same call whatever
/// the timing), or a provider that answers by occurrence across problems (replay).
pub fn side_by_side(setup: &RunSetup, problems: usize) -> bool {
    problems > 1
        && setup.memory.is_none()
        && setup.limits.budget == Budget::default()
        && setup.provider.problems_side_by_side()
}

/// A problem set up to run: its engine and recording, driver and clock.
struct Started {
    run: Run,
    driver: Driver,
    path: Option<PathBuf>,
    /// A note for the problem's result (the disk cache could not be had).
    note: Option<String>,
    clock: Instant,
    /// The run's start, for where this problem's end falls in it.
    run_start: RunStart,
}

/// When a run began: on the wall clock (recorded, telling one run's sessions from
/// another's) and on the monotonic one (for the times from it).
#[derive(Debug, Clone, Copy)]
struct RunStart {
    unix_ms: u64,
    at: Instant,
}

impl RunStart {
    fn now() -> RunStart {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        RunStart { unix_ms, at: Instant::now() }
    }

    /// Where now falls in the run.
    fn clock(&self) -> crate::session::RunClock {
        crate::session::RunClock { started_unix_ms: self.unix_ms, ended_ms: self.at.elapsed().as_millis() as u64 }
    }
}

/// What one problem came to.
struct Finished {
    result: ProblemResult,
    totals: Totals,
    stopped: Option<StopReason>,
    abandoned: usize,
    /// The problem's memory, to save once its result is reported (its `--out` line written
    /// first, so a slow save or a kill during it loses no finished problem).
    memory_save: Option<super::memory::PendingSave>,
}

/// Set `problem` up: engine, session file (created now, so a run that cannot record
/// stops before spending), driver with its tools, and its memory if it keeps one.
#[allow(clippy::too_many_arguments)]
fn start_problem(
    setup: &RunSetup,
    problem: &Problem,
    position: usize,
    many: bool,
    limit: &Limit,
    cache: Arc<Mutex<ResponseCache>>,
    memory: Option<crate::memory::Memory>,
    spent: Totals,
    note: Option<String>,
    run_start: RunStart,
) -> Result<Started, String> {
    let clock = Instant::now();
    let task: Arc<dyn crate::engine::Task> = Arc::clone(&setup.task) as Arc<dyn crate::engine::Task>;
    let mut engine = Engine::new(task, &problem.input, setup.params.clone());
    engine.set_context_window(setup.limits.context.as_ref().map(|c| c.tokens));
    engine.set_outcome_judge(!setup.unjudged);
    let mut header = header_for(setup, problem);
    if let (Some(m), Some(memory)) = (&setup.memory, &memory) {
        header.memory = Some(MemorySnapshot::new(m.name.clone(), memory.clone()));
    }
    let mut driver = Driver::new(Arc::clone(&setup.provider), limit.clone(), cache)
        .announcing_checks()
        .for_problem(position)
        .with_context_window(setup.limits.context.as_ref().filter(|c| c.measured).map(|c| c.tokens));
    if let Some(tools) = setup.task.tools() {
        let runner = super::tools::ToolRunner::new(tools);
        let runner = match &setup.replay_tools {
            Some(recorded) => runner.recorded_only(recorded.get(&problem.input).cloned()),
            None => runner,
        };
        driver = driver.with_tools(runner);
    }
    let path =
        setup.record.as_ref().map(|r| session_path(r, setup.task.name(), setup.params.method.label(), problem, many));
    let writer = match &path {
        // Running on unrecorded would spend without the record asked for.
        Some(p) => Some(
            SessionWriter::create(p, &header)
                .map_err(|e| format!("cannot record the session ({e}); give --record a path you can write to"))?,
        ),
        None => None,
    };
    let price = setup.limits.price;
    let policy = StopPolicy { budget: setup.limits.budget, price, spent_before: spent, stop_on_fatal: true };
    let mut run = Run::new(engine, writer, policy);
    if let (Some(m), Some(memory)) = (&setup.memory, memory) {
        run.keep_memory(m.clone(), memory);
    }
    Ok(Started { run, driver, path, note, clock, run_start })
}

/// Drive a started problem to its end (or a stop), close its session, and make its
/// result (its memory is saved by the caller, after the result is reported: see
/// [`Headless::save_memory`]). `seen` is shown every reply as it is taken.
async fn finish_problem(
    setup: &RunSetup,
    problem: &Problem,
    started: Started,
    interrupts: &mut watch::Receiver<Interrupts>,
    seen: impl FnMut(&Input),
) -> Finished {
    let Started { mut run, mut driver, path, note, clock, run_start } = started;
    let mut error = note;
    let first = setup.limits.opening(Input::command(Command::Run));
    let abandoned = drive_watching(&mut run, &mut driver, first, interrupts, seen).await;
    let stopped = run.stopped().cloned();
    let totals = run.totals;
    let wall_ms = clock.elapsed().as_millis() as u64;
    // What the server showed of itself so far (in the run, not only this problem) ends with it.
    run.note_found(setup.provider.found());
    if let Err(e) = run.end_in(wall_ms, Some(run_start.clock())) {
        error = Some(e.to_string());
    }
    let session = path.map(|p| p.display().to_string());
    let memory_save = run.take_memory_save();
    // As the problem left it; the save replaces it with what the file holds then.
    let memory_use = memory_save.as_ref().map(|pending| pending.unsaved_use());
    let breaks = run.break_hits().to_vec();
    let (engine, _, _) = run.into_parts();
    let mut result = ProblemResult::new(problem, engine.outcome(), totals, wall_ms)
        .priced(setup.limits.price.as_ref())
        .with_qa(&engine)
        .with_health(&engine)
        .with_facets(setup.task.problem_facets(problem))
        .with_metrics(&engine)
        .with_overflows(&engine)
        .with_unread(&engine);
    result.memory = memory_use;
    result.breaks = breaks;
    result.rounds = driver.rounds().to_vec();
    let first_failure = engine.core.calls.values().find_map(|c| match &c.reply {
        Some(Err(e)) if e.kind != CallErrorKind::NotSent => Some(e.message.clone()),
        _ => None,
    });
    let overflows = overflows(&engine);
    if let Some(first) = overflows.first() {
        // Said once, and instead of "no answer: calls failed" below: the prompt is at fault, not the server.
        let note = overflow_note(overflows.len(), first, setup.limits.context.as_ref(), &setup.provider.describe());
        error = Some(match error {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    // Failures ended the problem when it has no answer and either no call succeeded or
    // the search never got past its root (a failed first proposal leaves nothing to expand).
    let answered = engine.outcome().is_some_and(|o| o.answer.is_some());
    let stuck_at_root = engine.tree().nodes().count() <= 1;
    let all_failed = totals.failed_calls == totals.llm_calls;
    if !answered && totals.failed_calls > 0 && (all_failed || stuck_at_root) {
        if let Some(f) = &first_failure {
            result.provider_error = Some(f.clone());
            if error.is_none() && stopped.is_none() {
                error = Some(format!(
                    "no answer: {} of {} calls to {} failed; first: {f}",
                    totals.failed_calls,
                    totals.llm_calls,
                    setup.provider.describe()
                ));
            }
        }
    }
    if engine.outcome().is_none() && error.is_none() {
        error = Some(match &stopped {
            Some(reason) => format!("stopped: {reason}"),
            None => {
                let failure = engine.core.calls.values().find_map(|c| match &c.reply {
                    Some(Err(e)) => Some(e.to_string()),
                    _ => None,
                });
                match failure {
                    Some(f) => format!("the search stopped before finishing; first failed call: {f}"),
                    None => "the search stopped before finishing (no states left to expand)".into(),
                }
            }
        });
    }
    if abandoned > 0 {
        let note = format!("{abandoned} calls in flight abandoned at the signal: what they cost is not counted");
        error = Some(match error {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    result.session = session;
    result.error = error;
    result.stopped = stopped.as_ref().map(|r| r.to_string());
    result.stop_reason = stopped.clone();
    Finished { result, totals, stopped, abandoned, memory_save }
}

impl Headless {
    /// Report a finished problem (as it ends) and note why the run must start no more
    /// problems, if it must (the first reason is kept). Returns whether it must.
    fn report(&mut self, finished: Finished, progress: &mut impl FnMut(&ProblemResult) -> Result<(), String>) -> bool {
        let Finished { result, stopped, abandoned, .. } = finished;
        self.abandoned += abandoned;
        let reported = progress(&result);
        self.results.push(result);
        if let Some(StopReason::Interrupted(signal)) = &stopped {
            self.signal.get_or_insert(*signal);
        }
        // The next problem would start after a stop, or with nowhere to write its result.
        let reason = stopped.map(|r| r.to_string()).or(reported.err());
        match reason {
            Some(reason) => {
                self.stopped.get_or_insert(reason);
                true
            }
            None => false,
        }
    }

    /// Save the memory of the problem reported last, before the next problem starts (so it
    /// begins from what this one learnt): its result then gives what the file holds. A save
    /// that fails is added to that result's error and stops the run (the next problem would
    /// start from a memory that lost this one's lessons). Returns whether the run must stop.
    async fn save_memory(&mut self, pending: super::memory::PendingSave) -> bool {
        match pending.save().await {
            Ok(used) => {
                if let Some(last) = self.results.last_mut() {
                    last.memory = Some(used);
                }
                false
            }
            Err(e) => {
                let failed = e.to_string();
                if let Some(last) = self.results.last_mut() {
                    last.error = Some(match last.error.take() {
                        Some(before) => format!("{before}; {failed}"),
                        None => failed.clone(),
                    });
                }
                self.stopped.get_or_insert(failed);
                true
            }
        }
    }

    /// Stop before starting another problem: a signal, or a reason of the run's own.
    fn refuse(&mut self, reason: String, signal: Option<Signal>) {
        if let Some(signal) = signal {
            self.signal.get_or_insert(signal);
        }
        self.stopped.get_or_insert(reason);
    }
}

/// Whether `input` is a model reply that came back well (the server takes our calls).
fn answered_well(input: &Input) -> bool {
    matches!(input, Input::LlmReply(r) if r.result.is_ok())
}

/// Run every problem until a signal arrives on `interrupts`, and report each result
/// to `progress` as soon as that problem ends (problems side by side end in any order;
/// each result carries its problem's `index`). [`Headless::results`] are in problem order.
///
/// Problems go side by side (see [`side_by_side`]), up to `--concurrency` of them,
/// their calls all under the one concurrency limit; the first problem goes alone until
/// a call of it comes back well, so a refused key or an unreachable server costs one
/// call. With `sim`, each problem's calls see the replies cached before the run began
/// (`--cache disk`) and the problem's own, never those of the problems beside it, so
/// results and sessions are the same whatever the concurrency and timing. With a real
/// model the problems share one cache, as the reference's value cache is shared across
/// puzzles: an identical request of two problems is asked once, and the session that
/// reused the answer records it whole as a cache hit, so each session still replays
/// alone. Runs that go one problem after another (memory, budgets, replay) share one
/// cache across their problems.
///
/// A signal stops the problems in flight (each session gets a `stopped` record and its
/// end line; each is reported) and starts no more. A stop in one problem (a refused
/// key, a session that cannot be written, a memory that cannot be saved, an error from
/// `progress`) starts no more problems; those already running finish and are reported.
pub async fn run_headless(
    setup: &RunSetup,
    problems: &[Problem],
    interrupts: watch::Receiver<Interrupts>,
    progress: impl FnMut(&ProblemResult) -> Result<(), String>,
) -> Headless {
    run_headless_under(setup, problems, Arc::new(Semaphore::new(setup.concurrency.max(1))), interrupts, progress).await
}

/// [`run_headless`], its calls under `limit` (shared with other runs) instead of a
/// limit of its own.
pub async fn run_headless_under(
    setup: &RunSetup,
    problems: &[Problem],
    limit: Arc<Semaphore>,
    mut interrupts: watch::Receiver<Interrupts>,
    mut progress: impl FnMut(&ProblemResult) -> Result<(), String>,
) -> Headless {
    // First come first served: measured against a priority limit that sends calls of the
    // problems fewest round trips in first (llm::limit), it is as fast where a server
    // honours `n` and faster where samples fan out (bench --http-only, README).
    let limit = Limit::Fifo(limit);
    let (mut cache, cache_note) = open_cache(&setup.limits);
    let many = problems.len() > 1;
    let run_start = RunStart::now();
    let mut done = Headless { results: Vec::with_capacity(problems.len()), ..Headless::default() };
    if side_by_side(setup, problems.len()) {
        let (signals, report) = (&mut interrupts, &mut progress);
        side_by_side_run(setup, problems, &limit, &mut cache, cache_note, run_start, signals, report, &mut done).await;
    } else {
        let cache = Arc::new(Mutex::new(cache));
        let mut note = cache_note;
        let mut spent = Totals::default();
        for (position, problem) in problems.iter().enumerate() {
            if let Some(signal) = interrupts.borrow().first {
                done.refuse(StopReason::Interrupted(signal).to_string(), Some(signal));
                break;
            }
            // The named memory as problem k-1 left it: loaded before anything is spent.
            let memory = match &setup.memory {
                Some(m) => match super::memory::load(m).await {
                    Ok(memory) => Some(memory),
                    Err(e) => {
                        done.refuse(e.to_string(), None);
                        break;
                    }
                },
                None => None,
            };
            let started = match start_problem(
                setup,
                problem,
                position,
                many,
                &limit,
                Arc::clone(&cache),
                memory,
                spent,
                note.take(),
                run_start,
            ) {
                Ok(started) => started,
                Err(reason) => {
                    done.refuse(reason, None);
                    break;
                }
            };
            let mut finished = finish_problem(setup, problem, started, &mut interrupts, |_| {}).await;
            spent.add(&finished.totals);
            let memory_save = finished.memory_save.take();
            // Its line (`--out`) first, then the memory: a slow save of a large memory, or a
            // kill during it, loses no finished problem.
            let mut stop = done.report(finished, &mut progress);
            if let Some(pending) = memory_save {
                stop |= done.save_memory(pending).await;
            }
            if stop {
                break;
            }
        }
    }
    if done.signal.is_none() {
        // A signal after the last problem: nothing was cut short, but the caller was asked to stop.
        done.signal = interrupts.borrow().first;
    }
    done
}

#[allow(clippy::too_many_arguments)]
async fn side_by_side_run(
    setup: &RunSetup,
    problems: &[Problem],
    limit: &Limit,
    cache: &mut ResponseCache,
    mut note: Option<String>,
    run_start: RunStart,
    interrupts: &mut watch::Receiver<Interrupts>,
    progress: &mut impl FnMut(&ProblemResult) -> Result<(), String>,
    done: &mut Headless,
) {
    use futures::stream::{FuturesUnordered, StreamExt};
    let window = setup.concurrency.max(1);
    // Set once any call of the run has come back well.
    let (well_tx, mut well) = watch::channel(false);
    let mut running = FuturesUnordered::new();
    // The position of each reported result: reported as each problem ends, put back in
    // problem order at the end.
    let mut order: Vec<usize> = Vec::with_capacity(problems.len());
    let (mut launched, mut blocked) = (0usize, false);
    // A real model's problems share one cache (fewer requests); `sim`'s each have their
    // own, so its results do not depend on timing.
    let shared = (!setup.provider.simulated()).then(|| Arc::new(Mutex::new(cache.scope())));
    loop {
        while !blocked && launched < problems.len() && running.len() < window && (launched == 0 || *well.borrow()) {
            if let Some(signal) = interrupts.borrow().first {
                done.refuse(StopReason::Interrupted(signal).to_string(), Some(signal));
                blocked = true;
                break;
            }
            let problem = &problems[launched];
            let scoped = match &shared {
                Some(run_wide) => Arc::clone(run_wide),
                None => Arc::new(Mutex::new(cache.scope())),
            };
            let fresh = Totals::default();
            match start_problem(setup, problem, launched, true, limit, scoped, None, fresh, note.take(), run_start) {
                Ok(started) => {
                    let (index, mut signals, well_tx) = (launched, interrupts.clone(), well_tx.clone());
                    running.push(async move {
                        let seen = |input: &Input| {
                            if answered_well(input) && !*well_tx.borrow() {
                                let _ = well_tx.send(true);
                            }
                        };
                        (index, finish_problem(setup, problem, started, &mut signals, seen).await)
                    });
                    launched += 1;
                }
                Err(reason) => {
                    done.refuse(reason, None);
                    blocked = true;
                }
            }
        }
        if running.is_empty() {
            break;
        }
        let waiting_for_first = !*well.borrow();
        tokio::select! {
            Some((index, one)) = running.next() => {
                // Reported (and written to `--out`) as soon as it ends, whatever is still
                // running before it: a kill then loses no finished problem.
                order.push(index);
                blocked |= done.report(one, progress);
                // The first problem ended without a good reply: let the next one try alone.
                if running.is_empty() && !*well.borrow() {
                    let _ = well_tx.send(true);
                }
            }
            _ = well.changed(), if waiting_for_first => {}
        }
    }
    let mut by_position: Vec<(usize, ProblemResult)> = order.into_iter().zip(done.results.drain(..)).collect();
    by_position.sort_by_key(|(position, _)| *position);
    done.results = by_position.into_iter().map(|(_, r)| r).collect();
}
