//! Demo sessions the project records itself with the simulated model (in
//! `sessions/`, bundled into the binary): each shows one idea of search over
//! thoughts. `thoughtscope record-demos DIR` regenerates them deterministically.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::arith::parse_numbers;
use crate::engine::{Command, Engine, Event, Input, NodeId, Params, Task};
use crate::llm::sim::{SimConfig, SimProvider};
use crate::runtime::headless::{header_for, RunSetup};
use crate::runtime::{sync, Run, StopPolicy};
use crate::session::{Header, Session, SessionWriter};
use crate::tasks::game24::solver::solvable;
use crate::tasks::game24::steps::moves;
use crate::tasks::game24::Game24;
use crate::tasks::{Problem, TaskSource};

/// A bundled demo: its file name and text.
pub struct Demo {
    pub file: &'static str,
    pub text: &'static str,
}

pub const DEMOS: [Demo; 4] = [
    Demo { file: "bfs-solved.jsonl", text: include_str!("../sessions/bfs-solved.jsonl") },
    Demo { file: "dfs-backtracks.jsonl", text: include_str!("../sessions/dfs-backtracks.jsonl") },
    Demo { file: "edit-rescues.jsonl", text: include_str!("../sessions/edit-rescues.jsonl") },
    Demo { file: "mcts.jsonl", text: include_str!("../sessions/mcts.jsonl") },
];

/// Load a bundled demo as a session (named after its file in `sessions/`).
pub fn load(demo: &Demo) -> Result<Session, String> {
    Session::parse(demo.text, &PathBuf::from("sessions").join(demo.file)).map_err(|e| e.to_string())
}

fn setup(params: Params, seed: u64) -> (RunSetup, Arc<Game24>, SimProvider) {
    let task = Arc::new(Game24::builtin());
    let sim = SimConfig { seed, ..SimConfig::default() };
    let provider = SimProvider::new(sim.clone());
    let setup = RunSetup {
        task: Arc::clone(&task) as Arc<dyn TaskSource>,
        params,
        provider: Arc::new(SimProvider::new(sim.clone())),
        sim: Some(sim),
        concurrency: 1,
        record: None,
        limits: Default::default(),
        replay_tools: None,
    };
    (setup, task, provider)
}

type Recorder<'a> = (Run, &'a SimProvider);

fn step(rec: &mut Recorder, inputs: Vec<Input>) -> Result<Vec<Event>, String> {
    let (run, sim) = rec;
    sync::drive(run, inputs, |r| sim.answer(r)).map_err(|e| e.to_string())
}

fn start<'a>(
    setup: &RunSetup,
    task: &Arc<Game24>,
    sim: &'a SimProvider,
    problem: &Problem,
    out: Option<(&Path, &str)>,
) -> Result<Recorder<'a>, String> {
    let engine = Engine::new(Arc::clone(task) as Arc<dyn Task>, &problem.input, setup.params.clone());
    let writer = match out {
        Some((path, note)) => {
            let mut header: Header = header_for(setup, problem);
            header.note = Some(note.to_string());
            Some(SessionWriter::create(path, &header).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    Ok((Run::new(engine, writer, StopPolicy::default()), sim))
}

/// Close a demo's session with its end line (wall time 0, so recordings are reproducible):
/// a session without one replays as cut short.
fn end(rec: &mut Recorder) -> Result<(), String> {
    rec.0.end(0).map_err(|e| e.to_string())
}

fn run(command: Command) -> Vec<Input> {
    vec![Input::command(command)]
}

const BFS_NOTE: &str = "ToT-BFS keeps the 5 best-valued states per step and reaches 24 in four steps";
const DFS_NOTE: &str = "ToT-DFS tries the best child first, prunes below the threshold and backtracks";
const MCTS_NOTE: &str =
    "MCTS picks children by UCT (mean value plus exploration), values them and backs rewards up; N and Q on each node";
const EDIT_NOTE: &str = "A greedy search (b=1) keeps a dead end; a person edits the step and the search recovers";

/// Record, into `dir/file`, a plain run of `params` on the first test puzzle (from
/// 900) whose run `shows` what the demo is about.
fn first_run(
    dir: &Path,
    file: &str,
    note: &str,
    params: Params,
    shows: impl Fn(&Engine, &[Event]) -> bool,
) -> Result<(), String> {
    let (setup, task, sim) = setup(params, 0);
    for i in 900..1000 {
        let problem = task.problem(i).ok_or("no puzzle")?;
        let mut rec = start(&setup, &task, &sim, &problem, None)?;
        let events = step(&mut rec, run(Command::Run))?;
        if shows(&rec.0.engine, &events) {
            let mut rec = start(&setup, &task, &sim, &problem, Some((&dir.join(file), note)))?;
            step(&mut rec, run(Command::Run))?;
            return end(&mut rec);
        }
    }
    Err(format!("no test puzzle for the demo {file}"))
}

fn solved(engine: &Engine) -> bool {
    engine.outcome().is_some_and(|o| o.solved)
}

/// The scripted rescue: step twice (propose, evaluate and keep one), edit the kept
/// dead end into a step that can still reach 24, continue from the edit, run.
fn rescue(rec: &mut Recorder, input: &str) -> Result<bool, String> {
    let events = step(rec, vec![Input::command(Command::Step { n: 1 }), Input::command(Command::Step { n: 1 })])?;
    let Some(kept) = events.iter().find_map(|e| match e {
        Event::Selected { kept, .. } => kept.first().copied(),
        _ => None,
    }) else {
        return Ok(false);
    };
    let numbers = parse_numbers(input).ok_or("bad input")?;
    let Some(good) = moves(&numbers).into_iter().find(|m| solvable(&m.left)) else { return Ok(false) };
    let events = step(rec, run(Command::Edit { node: kept, text: good.line }))?;
    let Some(edited) = events.iter().find_map(|e| match e {
        Event::NodeAdded { id, .. } => Some(*id),
        _ => None,
    }) else {
        return Ok(false);
    };
    step(rec, vec![Input::command(Command::Continue { node: edited }), Input::command(Command::Run)])?;
    Ok(solved(&rec.0.engine))
}

/// Greedy BFS on the first test puzzle where it fails alone, keeps a dead end at
/// step 1, and the edit rescues it.
fn edit(dir: &Path) -> Result<(), String> {
    let params = Params { method: crate::engine::methods::tot_bfs::KIND, breadth: 1, ..Params::default() };
    let (setup, task, sim) = setup(params, 0);
    for i in 900..1000 {
        let problem = task.problem(i).ok_or("no puzzle")?;
        let mut alone = start(&setup, &task, &sim, &problem, None)?;
        step(&mut alone, run(Command::Run))?;
        if solved(&alone.0.engine) {
            continue;
        }
        // The step-1 choice must be a dead end for the edit to matter.
        let first_kept = alone
            .0
            .engine
            .tree()
            .nodes()
            .find(|n| n.depth == 1 && n.status != crate::engine::NodeStatus::Candidate && !n.children.is_empty())
            .map(|n| n.id);
        let dead_end = first_kept.is_some_and(|k: NodeId| {
            let left = crate::tasks::game24::current_numbers_text(&problem.input, &alone.0.engine.tree().node(k).path);
            parse_numbers(&left).is_some_and(|n| !solvable(&n))
        });
        if !dead_end {
            continue;
        }
        let mut trial = start(&setup, &task, &sim, &problem, None)?;
        if rescue(&mut trial, &problem.input)? {
            let mut rec = start(&setup, &task, &sim, &problem, Some((&dir.join("edit-rescues.jsonl"), EDIT_NOTE)))?;
            rescue(&mut rec, &problem.input)?;
            return end(&mut rec);
        }
    }
    Err("no test puzzle for the edit demo".into())
}

/// Record the demo sessions into `dir`.
pub fn record_all(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bfs = Params { method: crate::engine::methods::tot_bfs::KIND, ..Params::default() };
    first_run(dir, "bfs-solved.jsonl", BFS_NOTE, bfs, |e, _| solved(e))?;
    let dfs = Params { method: crate::engine::methods::tot_dfs::KIND, ..Params::default() };
    first_run(dir, "dfs-backtracks.jsonl", DFS_NOTE, dfs, |e, events| {
        solved(e) && events.iter().filter(|ev| matches!(ev, Event::Backtracked { .. })).count() >= 2
    })?;
    edit(dir)?;
    let mcts = Params { method: crate::engine::methods::mcts::KIND, ..Params::default() };
    first_run(dir, "mcts.jsonl", MCTS_NOTE, mcts, |e, _| solved(e) && e.view().step >= 3)?;
    println!("recorded the demo sessions into {}", dir.display());
    Ok(())
}
