//! The replay part of `thoughtscope bench`: record a long session through the real
//! engine, session writer and simulated model, then time the replay cursor on it
//! (open, single forward steps, random seeks) against a full rebuild from input 0.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::{sync, Run, StopPolicy};
use crate::engine::rng::SplitMix64;
use crate::engine::{Command, Engine, Input, NodeId, Params, Task};
use crate::llm::sim::{SimConfig, SimProvider, SIM_MODEL};
use crate::session::cursor::ReplayCursor;
use crate::session::replay::rebuild;
use crate::session::{Header, Session, SessionWriter, FORMAT, VERSION};
use crate::tasks::TaskOptions;

/// The goals the figures are printed against.
pub const STEP_GOAL_MS: f64 = 1.0;
pub const SEEK_GOAL_MS: f64 = 50.0;

pub const PUZZLE: &str = "4 5 6 10";

/// Record a Game of 24 session of at least `inputs` inputs at `path`: a tot-bfs run
/// to its end, then a person steering on and on — expanding each node by hand and
/// re-evaluating the next, in turn — with the simulated model answering every call.
pub fn record_steered_session(path: &Path, inputs: usize) -> Result<Session, String> {
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        task: crate::tasks::game24::INFO.name.into(),
        input: PUZZLE.into(),
        index: None,
        params: Params::default(),
        provider: "sim".into(),
        model: SIM_MODEL.into(),
        simulated: true,
        sim: Some(SimConfig::default()),
        price: None,
        source: None,
        parent: None,
        note: Some("a long steered run for `thoughtscope bench`".into()),
        gold: None,
        actions: None,
        facets: Default::default(),
        memory: None,
    };
    let task = header.build_task(&TaskOptions::default()).map_err(|e| e.to_string())? as Arc<dyn Task>;
    let engine = Engine::new(task, PUZZLE, header.params.clone());
    let writer = SessionWriter::create(path, &header).map_err(|e| e.to_string())?;
    let mut run = Run::new(engine, Some(writer), StopPolicy::default());
    let sim = SimProvider::new(SimConfig::default());
    let mut next = 1usize;
    let mut turn = 0usize;
    let mut command = Command::Run;
    loop {
        sync::drive(&mut run, vec![Input::command(command)], |r| sim.answer(r)).map_err(|e| e.to_string())?;
        if run.writer().map_or(0, |w| w.inputs() as usize) >= inputs {
            break;
        }
        // The next node the search may still use, round and round the growing tree.
        let engine = &run.engine;
        let tree = engine.tree();
        let mut node = NodeId(next % tree.len());
        for _ in 0..tree.len() {
            if node != tree.root() && engine.core.usable(node) {
                break;
            }
            node = NodeId((node.0 + 1) % tree.len());
        }
        next = node.0 + 1;
        turn += 1;
        command = if turn % 2 == 1 { Command::Expand { node } } else { Command::Reevaluate { node } };
    }
    run.end(0).map_err(|e| e.to_string())?;
    Session::load(path).map_err(|e| e.to_string())
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Record a session of `inputs` inputs in `dir`, time the cursor on it, and print the figures.
pub fn replay_bench(dir: &Path, inputs: usize, seeks: usize, seed: u64, out: &mut dyn Write) -> Result<(), String> {
    let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}").map_err(|e| e.to_string());
    let path = dir.join("bench-replay.jsonl");
    let started = Instant::now();
    let session = record_steered_session(&path, inputs)?;
    let recorded_ms = ms(started);
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let total = session.input_count();
    w(
        out,
        format!(
            "replay: a steered tot-bfs session on game24 {PUZZLE:?}, {total} inputs ({:.1} MB, recorded in {:.2} s)",
            bytes as f64 / 1e6,
            recorded_ms / 1000.0
        ),
    )?;

    // Open as the explorer does: load the file, build the task once, go to the end.
    let started = Instant::now();
    let session = Arc::new(Session::load(&path).map_err(|e| e.to_string())?);
    let load_ms = ms(started);
    let mut cursor = ReplayCursor::shared(Arc::clone(&session), None).map_err(|e| e.to_string())?;
    cursor.seek(total);
    let open_ms = ms(started);
    if let Some(m) = cursor.mismatches().first() {
        return Err(format!("the recorded session does not replay exactly: {m}"));
    }
    w(
        out,
        format!(
            "  open                {open_ms:10.1} ms  (load {load_ms:.1} ms; {} nodes, {} checkpoints every {} inputs)",
            cursor.engine().tree().len(),
            cursor.checkpoints(),
            cursor.interval()
        ),
    )?;

    // Every forward step from the start, timed one by one.
    cursor.seek(0);
    let (mut sum, mut max, mut slowest) = (0.0f64, 0.0f64, 0);
    for i in 0..total {
        let t = Instant::now();
        cursor.forward(1);
        let m = ms(t);
        sum += m;
        if m > max {
            (max, slowest) = (m, i);
        }
    }
    let mean = sum / total.max(1) as f64;
    w(
        out,
        format!(
            "  forward step        mean {mean:8.4} ms  max {max:8.3} ms   goal ≤ {STEP_GOAL_MS} ms: mean {:.3}x, max {:.2}x of it (slowest: input {slowest})",
            mean / STEP_GOAL_MS,
            max / STEP_GOAL_MS
        ),
    )?;

    // Random seeks anywhere, from wherever the last one left the cursor.
    let mut rng = SplitMix64::new(seed);
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    let mut last = 0;
    for _ in 0..seeks {
        let k = (rng.next_u64() % (total as u64 + 1)) as usize;
        let t = Instant::now();
        cursor.seek(k);
        let m = ms(t);
        sum += m;
        max = max.max(m);
        last = k;
    }
    let seek_mean = sum / seeks.max(1) as f64;
    w(
        out,
        format!(
            "  seek ({seeks} random, seed {seed}) mean {seek_mean:8.3} ms  max {max:8.3} ms   goal ≤ {SEEK_GOAL_MS} ms: mean {:.3}x, max {:.2}x of it",
            seek_mean / SEEK_GOAL_MS,
            max / SEEK_GOAL_MS
        ),
    )?;

    // For reference: what the explorer did for every move before the cursor.
    let t = Instant::now();
    let rebuilt = rebuild(&session, None, Some(last)).map_err(|e| e.to_string())?;
    let rebuild_ms = ms(t);
    if rebuilt.inputs != last || rebuilt.engine.tree().len() != cursor.engine().tree().len() {
        return Err(format!("the rebuild to input {last} differs from the cursor's state"));
    }
    w(
        out,
        format!(
            "  full rebuild to input {last} (each seek before; its O(N²) event scan now gone) {rebuild_ms:.1} ms; seek mean / rebuild = {:.4}",
            seek_mean / rebuild_ms.max(1e-9)
        ),
    )?;
    Ok(())
}

/// CPU time this process has used so far (user and system, all threads), from
/// `/proc/self/stat`; `None` where there is no such file.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) end at its closing bracket.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name and state.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // The kernel's USER_HZ is 100 on every Linux this runs on.
    Some(ticks as f64 / 100.0)
}

/// Run `problems` of `setup`'s task and method with the simulated model answering each
/// call synchronously (no driver, no runtime, no cache): the engine and sim share of a
/// call, for telling the driver's own cost apart. Returns the replies fed.
pub fn sync_sim_replies(setup: &super::headless::RunSetup, problems: &[crate::tasks::Problem]) -> Result<u64, String> {
    let sim = SimProvider::new(setup.sim.clone().unwrap_or_default());
    let mut replies = 0u64;
    for problem in problems {
        let task: Arc<dyn Task> = Arc::clone(&setup.task) as Arc<dyn Task>;
        let engine = Engine::new(task, &problem.input, setup.params.clone());
        let mut run = Run::new(engine, None, StopPolicy::default());
        sync::drive(&mut run, vec![Input::command(Command::Run)], |r| {
            replies += 1;
            sim.answer(r)
        })
        .map_err(|e| e.to_string())?;
    }
    Ok(replies)
}
