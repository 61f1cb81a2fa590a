//! The replay part of `thoughtscope bench`: record a long session through the real
//! engine, session writer and simulated model, then time the replay cursor on it
//! (open, single forward steps, random seeks) against a full rebuild from input 0.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::{sync, Run, StopPolicy};
use crate::engine::rng::SplitMix64;
use crate::engine::sim::{SimConfig, SIM_MODEL};
use crate::engine::{Command, Engine, Input, NodeId, Params, Task};
use crate::llm::sim::SimProvider;
use crate::session::cursor::ReplayCursor;
use crate::session::replay::rebuild;
use crate::session::{Header, Session, SessionWriter, FORMAT, VERSION};
use crate::tasks::{SimPlayers, TaskOptions};

/// The goals the figures are printed against.
pub const STEP_GOAL_MS: f64 = 1.0;
pub const SEEK_GOAL_MS: f64 = 50.0;

pub const PUZZLE: &str = "4 5 6 10";

/// A run of the simulated model on [`PUZZLE`] recording to `path`, and the model.
fn sim_recording(path: &Path, params: Params, note: String) -> Result<(Run, SimProvider), String> {
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: crate::tasks::game24::INFO.name.into(),
        input: PUZZLE.into(),
        index: None,
        params,
        provider: "sim".into(),
        model: SIM_MODEL.into(),
        simulated: true,
        sim: Some(SimConfig::default()),
        price: None,
        source: None,
        parent: None,
        note: Some(note),
        gold: None,
        actions: None,
        facets: Default::default(),
        memory: None,
        unjudged: false,
        prompt_style: Default::default(),
        context_window: None,
        task_def: None,
        provider_notes: Vec::new(),
    };
    let task = header.build_task(&TaskOptions::default()).map_err(|e| e.to_string())? as Arc<dyn Task>;
    let engine = Engine::new(task, PUZZLE, header.params.clone());
    let writer = SessionWriter::create(path, &header).map_err(|e| e.to_string())?;
    Ok((Run::new(engine, Some(writer), StopPolicy::default()), SimProvider::new(SimConfig::default(), &SimPlayers)))
}

/// Record a Game of 24 session of at least `inputs` inputs at `path`: a tot-bfs run
/// to its end, then a person steering on and on — expanding each node by hand and
/// re-evaluating the next, in turn — with the simulated model answering every call.
pub fn record_steered_session(path: &Path, inputs: usize) -> Result<Session, String> {
    let (mut run, sim) = sim_recording(path, Params::default(), "a long steered run for `thoughtscope bench`".into())?;
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
    let fidelity = cursor.fidelity();
    if !fidelity.is_exact() {
        return Err(format!("the recorded session does not replay exactly: {fidelity}"));
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

/// The goals of the scale figures (issue 15).
pub const REPLAY_MEMORY_GOAL: f64 = 2.0;
pub const FRAME_GOAL_MS: f64 = 16.0;
pub const OPEN_GOAL_S: f64 = 2.0;

/// Record a Game of 24 tot-bfs session with a sampling generator — `n_generate` samples
/// per state, `breadth` states kept per step — big enough to have about `nodes` nodes.
pub fn record_sampled_session(path: &Path, nodes: usize) -> Result<Session, String> {
    let n_generate = 50u32;
    // Two sampled levels of `breadth × n_generate` nodes each make the bulk of the tree.
    let breadth = (nodes / (2 * n_generate as usize)).max(1);
    let params = Params::default().with("generator", "sample").with("n_generate", n_generate).with("breadth", breadth);
    let (mut run, sim) =
        sim_recording(path, params, format!("a sampled tot-bfs run of about {nodes} nodes for `thoughtscope bench`"))?;
    sync::drive(&mut run, vec![Input::command(Command::Run)], |r| sim.answer(r)).map_err(|e| e.to_string())?;
    run.end(0).map_err(|e| e.to_string())?;
    Session::load(path).map_err(|e| e.to_string())
}

/// This process's resident memory now and at its peak, in kB (Linux; `None` elsewhere).
pub fn memory_kb() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// What `measure_replay` found: the headless replay's time and its memory.
#[derive(Debug, Clone, Copy)]
pub struct ReplayMeasure {
    pub secs: f64,
    /// Resident memory before loading, and at the peak, in kB.
    pub base_kb: u64,
    pub peak_kb: u64,
    pub nodes: usize,
}

impl ReplayMeasure {
    pub fn line(&self) -> String {
        format!(
            "replay-measure secs={} base_kb={} peak_kb={} nodes={}",
            self.secs, self.base_kb, self.peak_kb, self.nodes
        )
    }

    pub fn parse(line: &str) -> Option<ReplayMeasure> {
        let rest = line.trim().strip_prefix("replay-measure ")?;
        let mut m = ReplayMeasure { secs: 0.0, base_kb: 0, peak_kb: 0, nodes: 0 };
        for part in rest.split(' ') {
            let (k, v) = part.split_once('=')?;
            match k {
                "secs" => m.secs = v.parse().ok()?,
                "base_kb" => m.base_kb = v.parse().ok()?,
                "peak_kb" => m.peak_kb = v.parse().ok()?,
                "nodes" => m.nodes = v.parse().ok()?,
                _ => {}
            }
        }
        Some(m)
    }
}

/// A headless replay of `path` as `thoughtscope replay` does it (read, rebuild, check),
/// timed, with this process's memory before and at the peak. Meant for a fresh process
/// (the bench runs it in a child), so the peak is the replay's own.
pub fn measure_replay(path: &Path) -> Result<ReplayMeasure, String> {
    let (base_kb, _) = memory_kb().unwrap_or((0, 0));
    let started = Instant::now();
    let rebuilt = crate::session::replay::replay_file(path, None).map_err(|e| e.to_string())?.rebuilt;
    let secs = started.elapsed().as_secs_f64();
    if !rebuilt.fidelity.is_exact() {
        return Err(format!("the session does not replay exactly: {}", rebuilt.fidelity));
    }
    let (_, peak_kb) = memory_kb().unwrap_or((0, 0));
    Ok(ReplayMeasure { secs, base_kb, peak_kb, nodes: rebuilt.engine.tree().len() })
}

/// Python's per-line `json.loads` over `path`, timed in seconds (the interpreter's start
/// included, a few tens of ms); `None` if there is no `python3`.
pub fn python_json_loads_secs(path: &Path) -> Option<f64> {
    let script = "import json,sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)\n";
    let started = Instant::now();
    let status = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| started.elapsed().as_secs_f64())
}

/// The replay figures at scale: a sampled session of about `nodes` nodes is recorded at
/// `path`, replayed headless in a fresh process (`child` runs `measure_replay` there and
/// prints its `ReplayMeasure::line`), and set against Python's `json.loads` per line.
pub fn replay_scale_bench(
    path: &Path,
    nodes: usize,
    child: &dyn Fn(&Path) -> Result<String, String>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}").map_err(|e| e.to_string());
    let started = Instant::now();
    let session = record_sampled_session(path, nodes)?;
    let recorded_s = started.elapsed().as_secs_f64();
    let inputs = session.input_count();
    drop(session);
    let mb = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    let printed = child(path)?;
    let m = printed
        .lines()
        .find_map(ReplayMeasure::parse)
        .ok_or_else(|| format!("the replay measurement printed no figures: {}", printed.trim()))?;
    w(
        out,
        format!(
            "replay at scale: a sampled tot-bfs session on game24 {PUZZLE:?} (--generator sample --n-generate 50), {} nodes, {inputs} inputs, {mb:.1} MB (recorded in {recorded_s:.1} s)",
            m.nodes
        ),
    )?;
    let per_mb = m.secs / mb.max(1e-9);
    match python_json_loads_secs(path) {
        Some(py) => w(
            out,
            format!(
                "  headless replay      {:8.3} s  ({:.4} s/MB); python json.loads per line {py:.3} s ({:.4} s/MB)   goal ≤ python: {:.2}x of it",
                m.secs,
                per_mb,
                py / mb.max(1e-9),
                m.secs / py.max(1e-9)
            ),
        )?,
        None => w(out, format!("  headless replay      {:8.3} s  ({per_mb:.4} s/MB); python3 not found, no reference", m.secs))?,
    }
    if m.peak_kb == 0 {
        w(out, "  memory: not measured (no /proc/self/status on this system)".into())?;
    } else {
        let used_mb = m.peak_kb.saturating_sub(m.base_kb) as f64 / 1024.0 * 1.048576;
        let ratio = used_mb / mb.max(1e-9);
        w(
            out,
            format!(
                "  replay memory        {used_mb:8.1} MB at peak over the process's start ({:.1} MB peak RSS) = {ratio:.2} MB per MB of session   goal ≤ {REPLAY_MEMORY_GOAL}: {:.2}x of it",
                m.peak_kb as f64 / 1000.0 * 1.024,
                ratio / REPLAY_MEMORY_GOAL
            ),
        )?;
    }
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
    let sim = SimProvider::new(setup.sim.clone().unwrap_or_default(), &SimPlayers);
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
