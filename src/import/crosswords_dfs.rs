//! Import the reference Tree-of-Thoughts crossword DFS log (its notebook's `infoss`: a
//! list per puzzle of the states the search visited, in visiting order, each
//! `{total_step, env_step, actions, info {r_letter, r_word}, count {sure, maybe,
//! impossible}}`) as sessions of `tot-dfs` on `--task crosswords`, list k on test
//! puzzle k.
//!
//! The log's states become the model's replies: for each expanded state a propose reply
//! listing exactly its logged children in visiting order (all `certain`, so the
//! engine's stable best-first order is the log's), and for each visited state a value
//! reply whose verdict lines carry its `count` over `judged_clues` of its board
//! (`sure` first, then `maybe`, then `impossible`). Pruning is off when some state
//! judged impossible was expanded (or the file name says `no_prune`), else the task's
//! rule. The engine then decides the visiting order itself; `--verify` checks it visits
//! the log's states in the log's order, that every `info` and `count` re-derives, and
//! that the output's figures (deepest state, best-state oracle) are the log's.
//!
//! The log records no token usage: the sessions carry none.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::tot::ImportError;
use crate::engine::{Command, Engine, Input, MethodKind, Params, Task};
use crate::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Purpose, Usage};
use crate::runtime::{sync, Run, StopPolicy};
use crate::session::SessionWriter;
use crate::tasks::crosswords::board::{accuracy, clue_label, SIZE};
use crate::tasks::crosswords::{self, board_of, judged_clues, Crosswords};
use crate::tasks::TaskSource;

const EXPECTED: &str = "expected the reference crossword DFS log, a JSON list (one per puzzle) of lists of \
    {total_step, env_step, actions, info {r_letter, r_word}, count {sure, maybe, impossible}}";

/// The reference notebook's cap on visited states.
const STATE_CAP: usize = 100;
const EPS: f64 = 1e-9;

#[derive(Debug, Clone, PartialEq)]
pub struct DfsState {
    pub actions: Vec<String>,
    pub r_letter: f64,
    pub r_word: f64,
    /// sure, maybe, impossible.
    pub count: (usize, usize, usize),
}

impl DfsState {
    /// The state as our path: one action a line.
    pub fn path(&self) -> String {
        path_of(&self.actions)
    }
}

fn path_of(actions: &[String]) -> String {
    actions.iter().map(|a| format!("{a}\n")).collect()
}

#[derive(Debug, Clone)]
pub struct DfsLog {
    pub puzzles: Vec<Vec<DfsState>>,
    pub prune: bool,
}

/// Per puzzle: how our run compared with the log, and its figures.
#[derive(Debug, Clone, Serialize)]
pub struct DfsCheck {
    pub puzzle: usize,
    pub states: usize,
    /// The log's figures of the deepest state (first visited on ties) and of the best state.
    pub letter: f64,
    pub word: f64,
    pub game: bool,
    pub oracle_letter: f64,
    pub oracle_word: f64,
    pub oracle_game: bool,
    /// Our session's figures (`Task::metrics`).
    pub metrics: std::collections::BTreeMap<String, f64>,
    pub disagreements: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DfsReport {
    pub puzzles: usize,
    pub puzzles_agreeing: usize,
    pub prune: bool,
    pub states: usize,
    /// Means over the puzzles of our sessions' figures (0..1) and games solved.
    pub letter: f64,
    pub word: f64,
    pub games: usize,
    pub oracle_letter: f64,
    pub oracle_word: f64,
    pub oracle_games: usize,
    pub checks: Vec<DfsCheck>,
}

impl super::LogCheck for DfsCheck {
    fn label(&self) -> String {
        format!("puzzle {}", self.puzzle)
    }
    fn disagreements(&self) -> &[String] {
        &self.disagreements
    }
}

impl super::VerifiedImport for DfsReport {
    type Check = DfsCheck;
    fn checks(&self) -> &[DfsCheck] {
        &self.checks
    }
    fn units(&self) -> &'static str {
        "puzzles"
    }
}

/// Whether `value` looks like a crossword DFS log: a list of lists of states with `actions`.
pub fn looks_dfs(value: &Value) -> bool {
    value.as_array().is_some_and(|puzzles| {
        puzzles.iter().all(Value::is_array)
            && puzzles.iter().filter_map(Value::as_array).flatten().next().is_some_and(|s| s.get("actions").is_some())
    })
}

pub fn read_log(path: &Path) -> Result<DfsLog, ImportError> {
    let source = path.display().to_string();
    let fail = |message: String| ImportError::Read { path: source.clone(), message };
    let text = crate::userfile::read_text(path, &crate::userfile::LOG)
        .map_err(|e| fail(format!("cannot read: {}", e.reason())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    parse_log(&text, &name).map_err(fail)
}

pub fn parse_log(text: &str, file_name: &str) -> Result<DfsLog, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e}); {EXPECTED}"))?;
    let lists = value.as_array().ok_or_else(|| format!("the file holds no JSON list; {EXPECTED}"))?;
    if lists.is_empty() {
        return Err(format!("the list is empty; {EXPECTED}"));
    }
    if lists.len() > crosswords::TEST_COUNT {
        return Err(format!(
            "{} puzzles; list k belongs to test puzzle k, and there are {} test puzzles",
            lists.len(),
            crosswords::TEST_COUNT
        ));
    }
    let mut puzzles = Vec::with_capacity(lists.len());
    for (k, list) in lists.iter().enumerate() {
        let states = list.as_array().ok_or_else(|| format!("puzzle {k} is not a list of states; {EXPECTED}"))?;
        let mut out: Vec<DfsState> = Vec::with_capacity(states.len());
        for (i, s) in states.iter().enumerate() {
            let state = read_state(s).map_err(|what| format!("puzzle {k}, state {i}: {what}"))?;
            let depth = state.actions.len();
            if let Some(step) = s.get("env_step").and_then(Value::as_u64) {
                if step as usize != depth {
                    return Err(format!("puzzle {k}, state {i}: env_step {step} but {depth} actions"));
                }
            }
            if depth > crosswords::DFS_DEPTH {
                return Err(format!(
                    "puzzle {k}, state {i}: depth {depth}, deeper than the search's {}",
                    crosswords::DFS_DEPTH
                ));
            }
            let parent = &state.actions[..depth - 1];
            if depth > 1 && !out.iter().any(|p| p.actions == parent) {
                return Err(format!("puzzle {k}, state {i}: no earlier state is its parent ({})", parent.join(", ")));
            }
            if out.iter().any(|p| p.actions == state.actions) {
                return Err(format!("puzzle {k}, state {i}: visited twice ({})", state.actions.join(", ")));
            }
            out.push(state);
        }
        puzzles.push(out);
    }
    // The run was without pruning if it expanded a state judged impossible.
    let expanded_impossible = puzzles.iter().any(|states| {
        states.iter().any(|s| {
            s.count.2 > 0
                && states.iter().any(|c| c.actions.len() == s.actions.len() + 1 && c.actions.starts_with(&s.actions))
        })
    });
    let prune = !(expanded_impossible || file_name.contains("no_prune"));
    Ok(DfsLog { puzzles, prune })
}

fn read_state(s: &Value) -> Result<DfsState, String> {
    let actions: Vec<String> = s
        .get("actions")
        .and_then(Value::as_array)
        .ok_or("no list `actions`")?
        .iter()
        .map(|a| a.as_str().map(|a| a.trim().to_lowercase()).ok_or("an action is not text"))
        .collect::<Result<_, _>>()?;
    if actions.is_empty() {
        return Err("no actions".into());
    }
    for a in &actions {
        if crosswords::board::Action::parse(a).is_err() {
            return Err(format!("the action {a:?} is not like \"h2. motor\""));
        }
    }
    let info = s.get("info").ok_or("no `info`")?;
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).ok_or(format!("no number `{k}`"));
    let count = s.get("count").ok_or("no `count`")?;
    let whole = |k: &str| {
        count.get(k).and_then(Value::as_u64).map(|n| n as usize).ok_or(format!("no whole number `count.{k}`"))
    };
    Ok(DfsState {
        actions,
        r_letter: num(info, "r_letter")?,
        r_word: num(info, "r_word")?,
        count: (whole("sure")?, whole("maybe")?, whole("impossible")?),
    })
}

/// The deepest state (first visited on ties) and the best (highest r_word, first on ties).
fn log_figures(states: &[DfsState]) -> (Option<&DfsState>, Option<&DfsState>) {
    let mut deepest: Option<&DfsState> = None;
    let mut best: Option<&DfsState> = None;
    for s in states {
        if deepest.is_none_or(|d| s.actions.len() > d.actions.len()) {
            deepest = Some(s);
        }
        if best.is_none_or(|b| s.r_word > b.r_word + EPS) {
            best = Some(s);
        }
    }
    (deepest, best)
}

/// The value reply carrying `count` over the clues the task judges on `path`'s board:
/// `sure` first, then `maybe`, then `impossible`; clues beyond the count get a line with
/// no verdict (the reference counts only replies ending in a verdict word). None when
/// the count has more verdicts than there are judged clues.
fn value_reply(path: &str, count: (usize, usize, usize)) -> Result<String, String> {
    let judged = judged_clues(&board_of(path));
    let (sure, maybe, impossible) = count;
    if sure + maybe + impossible > judged.len() {
        return Err(format!(
            "count has {} verdicts but the task judges only {} clues on this board",
            sure + maybe + impossible,
            judged.len()
        ));
    }
    let verdicts = std::iter::repeat_n("sure", sure)
        .chain(std::iter::repeat_n("maybe", maybe))
        .chain(std::iter::repeat_n("impossible", impossible))
        .chain(std::iter::repeat("(no verdict)"));
    let lines: Vec<String> = judged.iter().zip(verdicts).map(|(&c, v)| format!("{}. {v}", clue_label(c))).collect();
    Ok(lines.join("\n"))
}

/// The verdict counts (sure, maybe, impossible) of a node's score labels (`h1 sure`).
fn counts_of(score: &crate::engine::Score) -> (usize, usize, usize) {
    let verdicts = crosswords::verdicts_of(score);
    let n = |v: &str| verdicts.values().filter(|w| w.as_str() == v).count();
    (n("sure"), n("maybe"), n("impossible"))
}

/// Where the session disagrees with the log state by state: the visiting order, each
/// state's verdict counts, and each state's letter and word accuracy on the board.
fn state_disagreements(
    states: &[DfsState],
    visited_order: &[String],
    tree: &crate::engine::SearchTree,
    gold: &[u8; SIZE * SIZE],
) -> Vec<String> {
    let mut disagreements = Vec::new();
    // The visiting order: ours against the log's.
    let theirs: Vec<String> = states.iter().map(DfsState::path).collect();
    if let Some(i) = visited_order.iter().zip(&theirs).position(|(a, b)| a != b) {
        disagreements.push(format!(
            "visit {}: we visit {:?}, the log {:?}",
            i + 1,
            visited_order[i].trim_end().replace('\n', ", "),
            theirs[i].trim_end().replace('\n', ", ")
        ));
    } else if visited_order.len() != theirs.len() {
        disagreements.push(format!("we visit {} states, the log {}", visited_order.len(), theirs.len()));
    }
    // Every count is the verdicts the session records on that state.
    for s in states {
        let path = s.path();
        let Some(node) = tree.nodes().find(|n| n.path == path && n.score.is_some()) else { continue };
        let ours = node.score.as_deref().map(counts_of).unwrap_or_default();
        if ours != s.count {
            disagreements.push(format!(
                "state {}: the session's verdicts are sure {} maybe {} impossible {}, the log's count {:?}",
                s.actions.join(", "),
                ours.0,
                ours.1,
                ours.2,
                s.count
            ));
        }
    }
    // Every info re-derives on the board.
    for (i, s) in states.iter().enumerate() {
        let acc = accuracy(&board_of(&s.path()), gold);
        if (acc.letter - s.r_letter).abs() > EPS || (acc.word - s.r_word).abs() > EPS {
            disagreements.push(format!(
                "state {i} ({}): we score letter {} word {}, the log's info says {} {}",
                s.actions.join(", "),
                acc.letter,
                acc.word,
                s.r_letter,
                s.r_word
            ));
        }
    }
    disagreements
}

pub fn check_puzzle(
    k: usize,
    states: &[DfsState],
    prune: bool,
    source: &str,
    out: Option<&Path>,
) -> Result<DfsCheck, ImportError> {
    let err = |message: String| ImportError::Entry { path: source.to_string(), idx: k, message };
    let task = Arc::new(Crosswords::builtin());
    let x = task.problem(k).ok_or_else(|| err(format!("there is no test puzzle {k}")))?.input;
    let mut children: HashMap<String, Vec<String>> = HashMap::new();
    let mut counts: HashMap<String, (usize, usize, usize)> = HashMap::new();
    for s in states {
        let parent = path_of(&s.actions[..s.actions.len() - 1]);
        children.entry(parent).or_default().push(s.actions[s.actions.len() - 1].clone());
        counts.insert(s.path(), s.count);
    }
    let method = MethodKind::from_name("tot-dfs").ok_or_else(|| err("tot-dfs is not registered".into()))?;
    let params = Params::new(method)
        .with("n_generate", 1)
        .with("n_evaluate", 1)
        .with("max_states", STATE_CAP.max(states.len()))
        .with("prune", if prune { "task" } else { "none" });
    params.check().map_err(|e| err(format!("the run's parameters are out of range: {e}")))?;
    let writer = match out {
        Some(dir) => {
            let header = super::tot_log_header(&crosswords::INFO.name, &x, k, params.clone(), "gpt-4", source);
            Some(SessionWriter::create(&dir.join(format!("crosswords-dfs-{k:02}.jsonl")), &header)?)
        }
        None => None,
    };
    let session = writer.as_ref().map(|w| w.path().display().to_string());
    let engine_task: Arc<dyn Task> = task.clone();
    let mut run = Run::new(Engine::new(engine_task, &x, params), writer, StopPolicy::default());
    let mut disagreements = Vec::new();
    let mut visited_order: Vec<String> = Vec::new();
    sync::drive(&mut run, vec![Input::command(Command::Run)], |r: &LlmRequest| {
        let y = r.context.get("y").and_then(Value::as_str).unwrap_or("").to_string();
        let text = match r.purpose {
            Purpose::Propose => children
                .get(&y)
                .map(|c| c.iter().map(|a| format!("{a} (certain)")).collect::<Vec<_>>().join("\n"))
                .unwrap_or_default(),
            Purpose::Value => {
                visited_order.push(y.clone());
                match counts.get(&y) {
                    Some(&count) => match value_reply(&y, count) {
                        Ok(text) => text,
                        Err(p) => {
                            disagreements.push(format!("state {:?}: {p}", y.trim_end().replace('\n', ", ")));
                            String::new()
                        }
                    },
                    None => {
                        return Err(CallError {
                            kind: CallErrorKind::Import,
                            message: format!("the log never visited {:?}", y.trim_end().replace('\n', ", ")),
                        })
                    }
                }
            }
            other => {
                return Err(CallError {
                    kind: CallErrorKind::Import,
                    message: format!("the log has no {} calls", other.label()),
                })
            }
        };
        Ok(LlmResponse {
            completions: vec![Completion::text(text, None)],
            usage: Usage::default(),
            latency_ms: 0,
            model: "gpt-4".into(),
            simulated: false,
            cached: false,
            lost: None,
        })
    })?;
    run.end(0)?;
    let engine = run.engine;
    let tree = engine.tree();
    let gold = crosswords::find_puzzle(&x).map(|(_, p)| p.gold).ok_or_else(|| err("no gold board".into()))?;
    disagreements.extend(state_disagreements(states, &visited_order, tree, &gold));
    let outcome = engine.outcome().cloned().unwrap_or_default();
    let metrics = engine.core.task.metrics(&x, tree, &outcome);
    let (deepest, best) = log_figures(states);
    let fig = |s: Option<&DfsState>| s.map_or((0.0, 0.0, false), |s| (s.r_letter, s.r_word, s.r_word >= 1.0 - EPS));
    let (letter, word, game) = fig(deepest);
    let (oracle_letter, oracle_word, oracle_game) = fig(best);
    let ours = |key: &str| metrics.get(key).copied().unwrap_or(f64::NAN);
    for (key, log) in [
        ("letter", letter),
        ("word", word),
        ("game", f64::from(u8::from(game))),
        ("oracle_letter", oracle_letter),
        ("oracle_word", oracle_word),
        ("oracle_game", f64::from(u8::from(oracle_game))),
    ] {
        if (ours(key) - log).abs() > EPS {
            disagreements.push(format!("metric {key}: our session gives {}, the log {log}", ours(key)));
        }
    }
    Ok(DfsCheck {
        puzzle: k,
        states: states.len(),
        letter,
        word,
        game,
        oracle_letter,
        oracle_word,
        oracle_game,
        metrics,
        disagreements,
        session,
    })
}

pub fn import(path: &Path, out: Option<&Path>) -> Result<DfsReport, ImportError> {
    let log = read_log(path)?;
    let source = path.display().to_string();
    let mut checks = Vec::with_capacity(log.puzzles.len());
    for (k, states) in log.puzzles.iter().enumerate() {
        checks.push(check_puzzle(k, states, log.prune, &source, out)?);
    }
    let n = checks.len().max(1) as f64;
    let mean = |key: &str| checks.iter().map(|c| c.metrics.get(key).copied().unwrap_or(0.0)).sum::<f64>() / n;
    let count = |key: &str| checks.iter().filter(|c| c.metrics.get(key).copied().unwrap_or(0.0) >= 1.0).count();
    Ok(DfsReport {
        puzzles: checks.len(),
        puzzles_agreeing: checks.iter().filter(|c| c.disagreements.is_empty()).count(),
        prune: log.prune,
        states: checks.iter().map(|c| c.states).sum(),
        letter: mean("letter"),
        word: mean("word"),
        games: count("game"),
        oracle_letter: mean("oracle_letter"),
        oracle_word: mean("oracle_word"),
        oracle_games: count("oracle_game"),
        checks,
    })
}
