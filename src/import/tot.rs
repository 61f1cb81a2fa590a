//! Import the reference Tree-of-Thoughts implementation's Game-of-24 BFS log
//! (`{idx, steps: [{step, x, ys, new_ys, values, select_new_ys}], ys, infos, usage_so_far}`
//! per puzzle) as sessions, by re-running our `tot-bfs` with the log's candidates and
//! values as the model's replies. The same run checks fidelity: at every step our
//! selection must equal the log's `select_new_ys`.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{
    CallError, CallErrorKind, Command, Completion, Engine, Evaluator, Event, Generator, Input, LlmRequest, LlmResponse,
    Params, Purpose, Selection, Usage,
};
use crate::runtime::{sync, Run, StopPolicy};
use crate::session::{Header, SessionWriter, FORMAT, VERSION};
use crate::tasks::game24::{Game24, VALUE_CLASSES};

#[derive(Debug, Clone, Deserialize)]
pub struct LogStep {
    pub step: usize,
    pub x: String,
    pub ys: Vec<String>,
    pub new_ys: Vec<String>,
    pub values: Vec<f64>,
    pub select_new_ys: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LogEntry {
    pub idx: usize,
    pub steps: Vec<LogStep>,
    #[serde(default)]
    pub ys: Vec<String>,
    #[serde(default)]
    pub infos: Vec<Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: puzzle {idx}: {message}")]
    Entry { path: String, idx: usize, message: String },
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
}

/// Per puzzle: how our run compared with the log.
#[derive(Debug, Clone, Serialize)]
pub struct PuzzleCheck {
    pub idx: usize,
    pub input: String,
    pub steps: usize,
    pub steps_agreeing: usize,
    pub solved: bool,
    pub solved_any: bool,
    pub disagreements: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub puzzles: usize,
    pub steps: usize,
    pub steps_agreeing: usize,
    pub solved: usize,
    pub solved_any: usize,
    pub checks: Vec<PuzzleCheck>,
}

pub fn read_log(path: &Path) -> Result<Vec<LogEntry>, ImportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ImportError::Read { path: path.display().to_string(), message: e.to_string() })?;
    serde_json::from_str(&text).map_err(|e| ImportError::Read {
        path: path.display().to_string(),
        message: format!("not a reference ToT log (a JSON list of {{idx, steps, ys, infos}}): {e}"),
    })
}

/// The parameters of the reference run: b=5, propose, value with 3 samples, greedy,
/// keeping malformed proposals as the reference does.
pub fn reference_params() -> Params {
    Params {
        method: crate::engine::methods::tot_bfs::KIND,
        breadth: 5,
        n_generate: 1,
        n_evaluate: 3,
        generator: Generator::Propose,
        evaluator: Evaluator::Value,
        select: Selection::Greedy,
        steps: Some(4),
        lenient: true,
        temperature: 0.7,
        ..Params::default()
    }
}

/// Evaluator samples whose mapped classes sum to `value` (e.g. 1.002 = likely + 2 impossible).
pub fn value_samples(value: f64, n: usize) -> Vec<String> {
    let sure = ((value + 1e-6) / 20.0).floor().max(0.0) as usize;
    let rest = value - 20.0 * sure as f64;
    let likely = (rest + 1e-6).floor().max(0.0) as usize;
    let impossible = ((rest - likely as f64) * 1000.0).round().max(0.0) as usize;
    let mut out = Vec::new();
    for (name, count) in [("sure", sure), ("likely", likely), ("impossible", impossible)] {
        out.extend(std::iter::repeat_n(name.to_string(), count));
    }
    while out.len() < n {
        out.push("(no verdict)".into());
    }
    let _ = VALUE_CLASSES;
    out
}

/// Answers our engine's calls from one puzzle's log.
struct LogAnswers {
    proposals: HashMap<String, VecDeque<String>>,
    values: HashMap<String, f64>,
}

impl LogAnswers {
    fn new(entry: &LogEntry) -> Result<Self, String> {
        let mut proposals: HashMap<String, VecDeque<String>> = HashMap::new();
        let mut values = HashMap::new();
        for s in &entry.steps {
            if s.values.len() != s.new_ys.len() {
                return Err(format!("step {}: {} candidates but {} values", s.step, s.new_ys.len(), s.values.len()));
            }
            let mut at = 0;
            for (i, parent) in s.ys.iter().enumerate() {
                // The run of candidates extending this parent.
                let start = at;
                while at < s.new_ys.len() && s.new_ys[at].starts_with(parent.as_str()) {
                    at += 1;
                }
                // A parent kept twice was expanded twice: its runs follow each other.
                // Cut where the run starts over (its first candidate repeats), else in half.
                let copies = 1 + s.ys[i + 1..].iter().take_while(|p| *p == parent).count();
                if copies > 1 && at > start && s.ys[..i].last() != Some(parent) {
                    let first = &s.new_ys[start];
                    let cut = (start + 1..at)
                        .find(|&j| &s.new_ys[j] == first)
                        .unwrap_or(start + (at - start).div_ceil(copies));
                    at = cut;
                }
                let lines: Vec<&str> = s.new_ys[start..at]
                    .iter()
                    .map(|y| y[parent.len()..].strip_suffix('\n').unwrap_or(&y[parent.len()..]))
                    .collect();
                proposals.entry(parent.clone()).or_default().push_back(lines.join("\n"));
            }
            if at != s.new_ys.len() {
                return Err(format!("step {}: candidate {} extends none of the kept states", s.step, at));
            }
            for (y, v) in s.new_ys.iter().zip(&s.values) {
                values.entry(y.clone()).or_insert(*v);
            }
        }
        Ok(LogAnswers { proposals, values })
    }

    fn answer(&mut self, request: &LlmRequest) -> Result<LlmResponse, CallError> {
        let y = request.context.get("y").and_then(Value::as_str).unwrap_or("");
        let missing =
            |what: &str| CallError { kind: CallErrorKind::Import, message: format!("the log has no {what} for {y:?}") };
        let texts = match request.purpose {
            Purpose::Propose => {
                vec![self.proposals.get_mut(y).and_then(VecDeque::pop_front).ok_or_else(|| missing("proposal"))?]
            }
            Purpose::Value => value_samples(*self.values.get(y).ok_or_else(|| missing("value"))?, request.n as usize),
            other => {
                return Err(CallError {
                    kind: CallErrorKind::Import,
                    message: format!("the log has no {} calls", other.label()),
                })
            }
        };
        Ok(LlmResponse {
            completions: texts.into_iter().map(|text| Completion::text(text, None)).collect(),
            usage: Usage { prompt_tokens: 0, completion_tokens: 0, estimated: true },
            latency_ms: 0,
            model: "gpt-4".into(),
            simulated: false,
            cached: false,
        })
    }
}

/// Re-run one puzzle against its log; record a session to `out` if given.
pub fn check_puzzle(entry: &LogEntry, source: &str, out: Option<&Path>) -> Result<PuzzleCheck, ImportError> {
    let x = entry.steps.first().map(|s| s.x.clone()).unwrap_or_default();
    let err = |message: String| ImportError::Entry { path: source.to_string(), idx: entry.idx, message };
    let mut answers = LogAnswers::new(entry).map_err(err)?;
    let params = reference_params();
    let task = Arc::new(Game24::builtin());
    let engine = Engine::new(task, &x, params.clone());
    let writer = match out {
        Some(dir) => {
            let header = Header {
                format: FORMAT.into(),
                version: VERSION,
                task: crate::tasks::game24::INFO.name.into(),
                input: x.clone(),
                index: Some(entry.idx),
                params,
                provider: "import:tot-log".into(),
                model: "gpt-4".into(),
                simulated: false,
                sim: None,
                price: None,
                source: Some(format!("tot-log:{source}#{}", entry.idx)),
                parent: None,
                note: None,
                gold: None,
                actions: None,
            };
            Some(SessionWriter::create(&dir.join(format!("tot-log-{:04}.jsonl", entry.idx)), &header)?)
        }
        None => None,
    };
    let session = writer.as_ref().map(|w| w.path().display().to_string());
    let mut run = Run::new(engine, writer, StopPolicy::default());
    let events = sync::drive(&mut run, vec![Input::command(Command::Run)], |r| answers.answer(r))?;
    run.end(0)?;
    let engine = run.engine;
    let selections: Vec<Vec<String>> = events
        .iter()
        .filter_map(|e| match e {
            Event::Selected { kept, .. } => Some(kept.iter().map(|&id| engine.tree().node(id).path.clone()).collect()),
            _ => None,
        })
        .collect();
    let mut disagreements = Vec::new();
    let mut agreeing = 0;
    for (i, s) in entry.steps.iter().enumerate() {
        match selections.get(i) {
            Some(ours) if ours == &s.select_new_ys => agreeing += 1,
            Some(ours) => {
                disagreements.push(format!("step {}: we kept {:?}, the log kept {:?}", s.step, ours, s.select_new_ys))
            }
            None => disagreements.push(format!("step {}: our run made no selection", s.step)),
        }
    }
    let outcome = engine.outcome().cloned().unwrap_or_default();
    let finals: Vec<String> = outcome.finals.iter().map(|&id| engine.tree().node(id).path.clone()).collect();
    if !entry.ys.is_empty() && finals != entry.ys {
        disagreements.push("the final states differ from the log's ys".into());
    }
    Ok(PuzzleCheck {
        idx: entry.idx,
        input: x,
        steps: entry.steps.len(),
        steps_agreeing: agreeing,
        solved: outcome.solved,
        solved_any: outcome.solved_any,
        disagreements,
        session,
    })
}

pub fn import(path: &Path, out: Option<&Path>) -> Result<VerifyReport, ImportError> {
    let entries = read_log(path)?;
    let source = path.display().to_string();
    let mut checks = Vec::with_capacity(entries.len());
    for entry in &entries {
        checks.push(check_puzzle(entry, &source, out)?);
    }
    Ok(VerifyReport {
        puzzles: checks.len(),
        steps: checks.iter().map(|c| c.steps).sum(),
        steps_agreeing: checks.iter().map(|c| c.steps_agreeing).sum(),
        solved: checks.iter().filter(|c| c.solved).count(),
        solved_any: checks.iter().filter(|c| c.solved_any).count(),
        checks,
    })
}

pub fn default_out_dir(path: &Path) -> PathBuf {
    path.with_extension("sessions")
}
