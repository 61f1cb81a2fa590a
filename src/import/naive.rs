//! Import the reference Tree-of-Thoughts implementation's naive sampling logs (what its
//! `run.py --naive_run --prompt_sample standard|cot --n_generate_sample k` writes:
//! `{idx, ys, accs | infos, usage_so_far}` per input) as sessions of `io` (or `cot`, from
//! the file name's `naive_cot`): the k logged replies are the model's k completions of
//! the method's one call. The same run checks fidelity: our verdict on every sample must
//! be the log's (`accs[j]` for Game of 24; `infos[j].r_letter`, `r_word`, `r_game` for
//! crosswords).
//!
//! The task comes from the file name's first word (`game24_`, `crosswords_`, `text_`)
//! or, without one, from the verdicts (`accs` → Game of 24, `r_letter` → crosswords,
//! `rs` → creative writing).
//!
//! Creative writing: after the samples the engine asks the task's coherency judge about
//! each one (`Task::outcome_judge`), as the reference's `test_output` did; those calls
//! are answered with the log's judge scores `infos[j].rs` (one completion per score,
//! "Thus the coherency score is N"), and our coherency of each sample (the mean of its
//! scores, 0 with none) must be the log's `infos[j].r`. A sample whose `infos` entry is
//! missing, or has no `rs`, gets a failed judge call saying so (and no coherency). The
//! log's tokens cover the samples and the judge calls; they are shared over the calls
//! (marked estimated), so a session's total is the log's.
//!
//! Inputs: Game of 24 entry `idx` is line `idx` of the built-in 24.csv list; crosswords
//! entry `idx` is test puzzle `idx` (`mini0505.json[5 idx]`), as the reference reads
//! `mini0505_0_100_5.json`.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::tot::ImportError;
use crate::engine::{Engine, MethodKind, NodeId, NodeStatus, Params, Task};
use crate::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Purpose, Usage};
use crate::tasks::crosswords::board::{accuracy, Accuracy};
use crate::tasks::crosswords::{self, Crosswords};
use crate::tasks::game24::Game24;
use crate::tasks::writing::{self, Writing};
use crate::tasks::TaskSource;

/// What the importer reads, said in every message refusing a file.
const EXPECTED: &str = "expected a naive sampling log of the reference Tree-of-Thoughts run.py \
    (--naive_run), a JSON list of {idx, ys, accs or infos, usage_so_far}";

/// Beyond this many samples per input a log is not a run anyone made.
const MAX_SAMPLES: usize = 1000;

/// Tolerance when comparing the log's accuracies (written by Python as floats) with ours.
const EPS: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NaiveTask {
    Game24,
    Crosswords,
    Writing,
}

impl NaiveTask {
    pub fn label(self) -> &'static str {
        match self {
            NaiveTask::Game24 => "Game of 24",
            NaiveTask::Crosswords => "crosswords",
            NaiveTask::Writing => "creative writing",
        }
    }
}

/// The log's verdict on one sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LogVerdict {
    /// Game of 24: `accs[j]`.
    Correct(bool),
    /// Crosswords: `infos[j]`'s `r_letter`, `r_word`, `r_game`.
    Board { letter: f64, word: f64, game: bool },
}

/// Creative writing: the judge's scores of one sample (`infos[j].rs`) and their mean as
/// the log states it (`infos[j].r`); either may be missing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LogJudgment {
    pub rs: Option<Vec<u64>>,
    pub r: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct NaiveEntry {
    pub idx: usize,
    pub ys: Vec<String>,
    pub verdicts: Vec<LogVerdict>,
    /// Creative writing: one per sample (empty for the other tasks).
    pub judgments: Vec<LogJudgment>,
    usage_so_far: (u64, u64),
}

#[derive(Debug, Clone)]
pub struct NaiveLog {
    pub task: NaiveTask,
    /// `io` or `cot`.
    pub method: MethodKind,
    /// Whether the method comes from the file name (`naive_standard` / `naive_cot`).
    pub method_from_name: bool,
    pub backend: String,
    pub temperature: f32,
    pub entries: Vec<NaiveEntry>,
    /// Per entry: (prompt, completion) tokens (differences of `usage_so_far`).
    pub usage: Vec<(u64, u64)>,
}

/// Per input: how our run compared with the log.
#[derive(Debug, Clone, Serialize)]
pub struct NaiveCheck {
    pub idx: usize,
    pub input: String,
    pub samples: usize,
    /// Game of 24: samples we find correct.
    pub correct: usize,
    /// Crosswords: sums over the samples of our letter and word accuracy, and games solved.
    pub letter_sum: f64,
    pub word_sum: f64,
    pub games: usize,
    /// Crosswords: the same sums of the scores the log stores (`infos`).
    pub log_letter_sum: f64,
    pub log_word_sum: f64,
    pub log_games: usize,
    /// Samples whose stored score is not what the reference's scorer gives (ours is its
    /// `test_output`), each naming the sample and both figures: said on every import.
    pub score_disagreements: Vec<String>,
    /// Whether the first sample is correct (Game of 24).
    pub first_correct: bool,
    /// Creative writing: samples with our coherency, and its sum over them.
    pub judged: usize,
    pub coherency_sum: f64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub disagreements: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NaiveReport {
    pub task: NaiveTask,
    pub method: String,
    pub method_from_name: bool,
    pub backend: String,
    pub temperature: f32,
    pub puzzles: usize,
    pub puzzles_agreeing: usize,
    pub samples: usize,
    /// Game of 24: correct samples, inputs with a correct sample, inputs whose first is.
    pub samples_correct: usize,
    pub puzzles_any: usize,
    pub puzzles_first: usize,
    /// Crosswords: mean letter and word accuracy over all samples (0..1), games solved.
    pub letter: f64,
    pub word: f64,
    pub games: usize,
    /// Crosswords: the same figures from the scores the log stores.
    pub log_letter: f64,
    pub log_word: f64,
    pub log_games: usize,
    /// Creative writing: samples judged, and their mean coherency (the paper's figure).
    pub judged: usize,
    pub coherency: Option<f64>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub checks: Vec<NaiveCheck>,
}

impl super::LogCheck for NaiveCheck {
    fn label(&self) -> String {
        format!("input {} ({})", self.idx, self.input)
    }
    fn disagreements(&self) -> &[String] {
        &self.disagreements
    }
}

impl super::VerifiedImport for NaiveReport {
    type Check = NaiveCheck;
    fn checks(&self) -> &[NaiveCheck] {
        &self.checks
    }
    fn units(&self) -> &'static str {
        "inputs"
    }
}

/// What a file name says: the task (its first word) and the method (`naive_standard` → io,
/// `naive_cot` → cot), the backend and temperature of
/// `{backend}_{temperature}_naive_{prompt}_sample_{k}_start{a}_end{b}.json` (run.py's name,
/// which our copies prefix with the task: `{task}_{backend}_...`).
#[derive(Debug, Clone, PartialEq, Default)]
struct Named {
    task: Option<NaiveTask>,
    method: Option<MethodKind>,
    backend: Option<String>,
    temperature: Option<f32>,
}

fn parse_file_name(name: &str) -> Named {
    let stem = name.strip_suffix(".json").unwrap_or(name);
    let parts: Vec<&str> = stem.split('_').collect();
    let task = match parts.first().copied() {
        Some("game24") => Some(NaiveTask::Game24),
        Some("crosswords") => Some(NaiveTask::Crosswords),
        Some("text") => Some(NaiveTask::Writing),
        _ => None,
    };
    let naive = parts.iter().position(|p| *p == "naive");
    let method = naive.and_then(|i| match parts.get(i + 1).copied() {
        Some("standard") => Some(crate::engine::methods::io::KIND),
        Some("cot") => Some(crate::engine::methods::cot::KIND),
        _ => None,
    });
    // {backend...}_{temperature}_naive_..., the task's word first in our copies.
    let (backend, temperature) = super::named_backend_and_temperature(name).unzip();
    Named { task, method, backend, temperature }
}

/// Whether `value` (a JSON list) looks like a naive sampling log: objects with `ys` and
/// no `steps`.
pub fn looks_naive(value: &Value) -> bool {
    value.as_array().and_then(|a| a.first()).is_some_and(|e| e.get("ys").is_some() && e.get("steps").is_none())
}

pub fn read_log(path: &Path) -> Result<NaiveLog, ImportError> {
    let source = path.display().to_string();
    let fail = |message: String| ImportError::Read { path: source.clone(), message };
    let text = crate::userfile::read_text(path, &crate::userfile::LOG)
        .map_err(|e| fail(format!("cannot read: {}", e.reason())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    parse_log(&text, &name).map_err(fail)
}

fn content_task(item: &Value) -> Option<NaiveTask> {
    if item.get("accs").is_some() {
        return Some(NaiveTask::Game24);
    }
    let infos = item.get("infos")?.as_array()?;
    let has = |key: &str| infos.iter().any(|i| i.get(key).is_some());
    if has("r_letter") {
        Some(NaiveTask::Crosswords)
    } else if has("rs") {
        Some(NaiveTask::Writing)
    } else if has("r") {
        // run.py's game24 test_output writes {r: 0|1}.
        Some(NaiveTask::Game24)
    } else {
        None
    }
}

/// Validate and read a naive log's text; `file_name` may name the task and method. The
/// error is one line naming the entry and field.
pub fn parse_log(text: &str, file_name: &str) -> Result<NaiveLog, String> {
    let named = parse_file_name(file_name);
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e}); {EXPECTED}"))?;
    let items = match &value {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => return Err(format!("the list is empty; {EXPECTED}")),
        _ => return Err(format!("the file holds no JSON list; {EXPECTED}")),
    };
    let found = match (content_task(&items[0]), named.task) {
        (Some(found), _) => found,
        // A writing log whose scores are missing still has its samples to import.
        (None, Some(NaiveTask::Writing)) => NaiveTask::Writing,
        (None, _) => {
            return Err(format!("entry 0 has neither `accs` nor `infos` with verdicts (r, r_letter or rs); {EXPECTED}"))
        }
    };
    let task = match named.task {
        Some(t) if t != found => {
            return Err(format!(
                "the file name says {} but entry 0's verdicts are those of {}",
                t.label(),
                found.label()
            ))
        }
        _ => found,
    };
    let mut entries: Vec<NaiveEntry> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let entry = read_entry(i, item, task)?;
        if let Some(first) = entries.iter().position(|e| e.idx == entry.idx) {
            return Err(format!(
                "input idx {} appears twice (entries {first} and {i}): its sessions would overwrite each other",
                entry.idx
            ));
        }
        entries.push(entry);
    }
    let usage = super::own_usage(entries.iter().map(|e| e.usage_so_far));
    Ok(NaiveLog {
        task,
        method: named.method.unwrap_or(crate::engine::methods::io::KIND),
        method_from_name: named.method.is_some(),
        backend: named.backend.unwrap_or_else(|| "gpt-4".into()),
        temperature: named.temperature.unwrap_or(0.7),
        entries,
        usage,
    })
}

fn read_entry(i: usize, item: &Value, task: NaiveTask) -> Result<NaiveEntry, String> {
    let obj = item.as_object().ok_or_else(|| format!("entry {i} is not a JSON object; {EXPECTED}"))?;
    let idx = obj
        .get("idx")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("entry {i} has no input number `idx`"))?;
    let at = |what: String| format!("entry {i} (idx {idx}): {what}");
    if obj.contains_key("steps") {
        return Err(at("has `steps`: a search log, not naive sampling".into()));
    }
    let ys: Vec<String> = obj
        .get("ys")
        .and_then(Value::as_array)
        .ok_or_else(|| at("no list of sampled replies `ys`".into()))?
        .iter()
        .enumerate()
        .map(|(j, y)| y.as_str().map(str::to_string).ok_or_else(|| at(format!("`ys[{j}]` is not text"))))
        .collect::<Result<_, _>>()?;
    if ys.is_empty() || ys.len() > MAX_SAMPLES {
        return Err(at(format!("{} samples in `ys`; expected 1 to {MAX_SAMPLES}", ys.len())));
    }
    let verdicts: Vec<LogVerdict> = match task {
        NaiveTask::Game24 => {
            let (key, list) = match (obj.get("accs"), obj.get("infos")) {
                (Some(a), _) => ("accs", a),
                (None, Some(infos)) => ("infos", infos),
                (None, None) => return Err(at("neither `accs` nor `infos`".into())),
            };
            let list = list.as_array().ok_or_else(|| at(format!("`{key}` is not a list")))?;
            list.iter()
                .enumerate()
                .map(|(j, v)| {
                    let v = if key == "infos" { v.get("r").unwrap_or(&Value::Null) } else { v };
                    match v {
                        Value::Bool(b) => Ok(LogVerdict::Correct(*b)),
                        Value::Number(n) => Ok(LogVerdict::Correct(n.as_f64().unwrap_or(0.0) != 0.0)),
                        other => Err(at(format!("`{key}[{j}]` is {other}, not a verdict (true/false or 1/0)"))),
                    }
                })
                .collect::<Result<_, _>>()?
        }
        NaiveTask::Crosswords => {
            let infos = obj.get("infos").and_then(Value::as_array).ok_or_else(|| at("no list `infos`".into()))?;
            infos
                .iter()
                .enumerate()
                .map(|(j, info)| {
                    let num = |k: &str| info.get(k).and_then(Value::as_f64);
                    let game = match info.get("r_game") {
                        Some(Value::Bool(b)) => Some(*b),
                        Some(Value::Number(n)) => n.as_f64().map(|g| g != 0.0),
                        _ => None,
                    };
                    match (num("r_letter"), num("r_word"), game) {
                        (Some(letter), Some(word), Some(game)) => Ok(LogVerdict::Board { letter, word, game }),
                        _ => Err(at(format!("`infos[{j}]` lacks r_letter, r_word or r_game: {info}"))),
                    }
                })
                .collect::<Result<_, _>>()?
        }
        NaiveTask::Writing => Vec::new(),
    };
    let judgments = match task {
        NaiveTask::Writing => read_judgments(obj.get("infos"), ys.len()).map_err(at)?,
        _ => Vec::new(),
    };
    if task != NaiveTask::Writing && verdicts.len() != ys.len() {
        return Err(at(format!("{} samples in `ys` but {} verdicts", ys.len(), verdicts.len())));
    }
    let usage = obj.get("usage_so_far");
    let get = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64).unwrap_or(0);
    Ok(NaiveEntry { idx, ys, verdicts, judgments, usage_so_far: (get("prompt_tokens"), get("completion_tokens")) })
}

/// Creative writing's `infos`: per sample `{rs: [scores], r: mean}`, either part optional;
/// missing `infos` (or fewer entries than samples) leaves the rest unjudged.
pub(crate) fn read_judgments(infos: Option<&Value>, samples: usize) -> Result<Vec<LogJudgment>, String> {
    let list = match infos {
        None | Some(Value::Null) => return Ok(vec![LogJudgment::default(); samples]),
        Some(Value::Array(list)) => list,
        Some(other) => return Err(format!("`infos` is {other}, not a list")),
    };
    if list.len() > samples {
        return Err(format!("{samples} samples in `ys` but {} entries in `infos`", list.len()));
    }
    let mut out = Vec::with_capacity(samples);
    for (j, info) in list.iter().enumerate() {
        let rs = match info.get("rs") {
            None | Some(Value::Null) => None,
            Some(Value::Array(scores)) => Some(
                scores
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        v.as_f64()
                            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1e9)
                            .map(|f| f as u64)
                            .ok_or_else(|| format!("`infos[{j}].rs[{k}]` is {v}, not a whole-number coherency score"))
                    })
                    .collect::<Result<Vec<u64>, String>>()?,
            ),
            Some(other) => return Err(format!("`infos[{j}].rs` is {other}, not a list of scores")),
        };
        let r = match info.get("r") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_f64().ok_or_else(|| format!("`infos[{j}].r` is {v}, not a number"))?),
        };
        out.push(LogJudgment { rs, r });
    }
    out.resize(samples, LogJudgment::default());
    Ok(out)
}

/// The judge's replies for one sample: "Thus the coherency score is N" per logged score.
pub(crate) fn judge_replies(judgment: &LogJudgment) -> Option<Vec<String>> {
    let rs = judgment.rs.as_ref()?;
    Some(rs.iter().map(|n| format!("Thus the coherency score is {n}")).collect())
}

/// Re-run one input's sampling with the log's replies; record a session to `out` if given.
pub fn check_entry(
    log: &NaiveLog,
    entry: &NaiveEntry,
    usage: (u64, u64),
    source: &str,
    out: Option<&Path>,
) -> Result<NaiveCheck, ImportError> {
    let err = |message: String| ImportError::Entry { path: source.to_string(), idx: entry.idx, message };
    let task: Arc<dyn TaskSource> = match log.task {
        NaiveTask::Game24 => Arc::new(Game24::builtin()),
        NaiveTask::Crosswords => Arc::new(Crosswords::builtin()),
        NaiveTask::Writing => Arc::new(Writing::builtin()),
    };
    let name = task.name().to_string();
    let name = name.as_str();
    let problem = task.problem(entry.idx).ok_or_else(|| {
        err(format!(
            "there is no {} input {} (the built-in list has {})",
            log.task.label(),
            entry.idx,
            task.problem_count()
        ))
    })?;
    let x = problem.input.clone();
    let params = Params::new(log.method).with("samples", entry.ys.len()).with("temperature", log.temperature);
    params.check().map_err(|e| err(format!("the run's parameters are out of range: {e}")))?;
    let path = out.map(|dir| dir.join(format!("{}-{}-{:04}.jsonl", name, log.method.label(), entry.idx)));
    let session = path.as_ref().map(|p| p.display().to_string());
    let engine_task: Arc<dyn Task> = task.clone();
    // One call (Game of 24, crosswords): the log's per-input tokens are its own; several
    // (writing's judge calls too): an equal share each, estimated.
    let (run, _, _) = super::drive_sharing_usage(
        || Engine::new(engine_task.clone(), &x, params.clone()),
        || SampleAnswers::new(entry, &log.backend),
        usage,
        super::Shares::EstimatedIfShared,
        || {
            super::log_writer(path.as_deref(), || {
                super::tot_log_header(name, &x, entry.idx, params.clone(), &log.backend, source)
            })
        },
    )?;
    let engine = run.engine;
    let tree = engine.tree();
    let samples: Vec<_> = tree.node(tree.root()).children.clone();
    let mut disagreements = Vec::new();
    if samples.len() != entry.ys.len() {
        disagreements.push(format!("our run has {} samples, the log {}", samples.len(), entry.ys.len()));
    }
    let mut check = NaiveCheck {
        idx: entry.idx,
        input: x.clone(),
        samples: samples.len(),
        correct: 0,
        letter_sum: 0.0,
        word_sum: 0.0,
        games: 0,
        log_letter_sum: 0.0,
        log_word_sum: 0.0,
        log_games: 0,
        score_disagreements: Vec::new(),
        first_correct: false,
        judged: 0,
        coherency_sum: 0.0,
        prompt_tokens: usage.0,
        completion_tokens: usage.1,
        disagreements: Vec::new(),
        session,
    };
    let gold = crosswords::find_puzzle(&x).map(|(_, p)| p.gold);
    for (j, (&id, theirs)) in samples.iter().zip(&entry.verdicts).enumerate() {
        let node = tree.node(id);
        if node.path != entry.ys[j] {
            disagreements.push(format!("sample {}: our text differs from the log's `ys[{j}]`", j + 1));
        }
        match (*theirs, log.task) {
            (LogVerdict::Correct(log_ok), _) => {
                let ok = node.status == NodeStatus::Solution;
                check.correct += usize::from(ok);
                if j == 0 {
                    check.first_correct = ok;
                }
                if ok != log_ok && disagreements.len() < 20 {
                    let said = |b: bool| if b { "correct" } else { "wrong" };
                    let line = format!(
                        "sample {}: we find {:?} {}, the log says {}",
                        j + 1,
                        node.answer.clone().unwrap_or_default(),
                        said(ok),
                        said(log_ok)
                    );
                    check.score_disagreements.push(line.clone());
                    disagreements.push(line);
                }
            }
            (LogVerdict::Board { letter, word, game }, _) => {
                let Some(gold) = gold else {
                    return Err(err(format!("{x:?} is not a built-in crossword")));
                };
                let ours = accuracy(&crosswords::board_of(&node.path), &gold);
                if let Some(line) = check.add_board(j, &ours, (letter, word, game)) {
                    disagreements.push(line);
                }
            }
        }
    }
    if log.task == NaiveTask::Writing {
        check.add_coherency(&samples, &entry.judgments, tree, &mut disagreements);
    }
    check.disagreements = disagreements;
    Ok(check)
}

impl NaiveCheck {
    /// Count one sample's board (ours, and the log's letter, word and game), and say how
    /// they disagree if they do.
    fn add_board(&mut self, j: usize, ours: &Accuracy, (letter, word, game): (f64, f64, bool)) -> Option<String> {
        self.letter_sum += ours.letter;
        self.word_sum += ours.word;
        self.games += usize::from(ours.game);
        self.log_letter_sum += letter;
        self.log_word_sum += word;
        self.log_games += usize::from(game);
        if (ours.letter - letter).abs() <= EPS && (ours.word - word).abs() <= EPS && ours.game == game {
            return None;
        }
        let line = format!(
            "sample {}: the reference's scorer (test_output: the last five rows after `Output:`) gives \
             letter {} word {} game {}, the log's infos say letter {letter} word {word} game {game}",
            j + 1,
            ours.letter,
            ours.word,
            ours.game
        );
        self.score_disagreements.push(line.clone());
        Some(line)
    }

    /// Count the samples' coherency (writing) against the log's judgments.
    fn add_coherency(
        &mut self,
        samples: &[NodeId],
        judgments: &[LogJudgment],
        tree: &crate::engine::SearchTree,
        disagreements: &mut Vec<String>,
    ) {
        for (j, (&id, theirs)) in samples.iter().zip(judgments).enumerate() {
            let ours = tree.node(id).metrics.get(writing::COHERENCY).copied();
            if let Some(c) = ours {
                self.judged += 1;
                self.coherency_sum += c;
            }
            match (ours, theirs.r) {
                (Some(ours), Some(r)) if (ours - r).abs() > EPS => disagreements.push(format!(
                    "sample {}: our coherency is {ours} from its scores, the log's infos r says {r}",
                    j + 1
                )),
                (None, Some(r)) if theirs.rs.is_some() => {
                    disagreements.push(format!("sample {}: we have no coherency, the log's infos r says {r}", j + 1))
                }
                _ => {}
            }
        }
    }
}

/// Answers one input's calls from its log: the samples, then (writing) the judge's scores.
struct SampleAnswers<'a> {
    entry: &'a NaiveEntry,
    model: String,
    answered: bool,
    /// Per sample: whether its judge call was answered.
    judged: Vec<bool>,
}

impl<'a> SampleAnswers<'a> {
    fn new(entry: &'a NaiveEntry, model: &str) -> Self {
        SampleAnswers { entry, model: model.to_string(), answered: false, judged: vec![false; entry.ys.len()] }
    }
}

impl super::LogAnswerer for SampleAnswers<'_> {
    fn answer(&mut self, request: &LlmRequest, usage: Usage) -> Result<LlmResponse, CallError> {
        let fail = |message: String| CallError { kind: CallErrorKind::Import, message };
        let texts = if request.purpose == Purpose::Judge {
            // The sample judged: the first not yet judged whose passage is the request's.
            let passage = request.context.get("passage").and_then(Value::as_str).unwrap_or("");
            let j = (0..self.entry.ys.len())
                .find(|&j| !self.judged[j] && writing::read::passage_of(&self.entry.ys[j]) == passage)
                .ok_or_else(|| fail("the judge asked about a passage that is none of the log's samples".into()))?;
            self.judged[j] = true;
            let judgment = self.entry.judgments.get(j).cloned().unwrap_or_default();
            judge_replies(&judgment)
                .ok_or_else(|| fail(format!("the log has no coherency scores (infos[{j}].rs) for sample {}", j + 1)))?
        } else {
            if self.answered {
                return Err(fail("the log has one sampling call per input; the method asked for another".into()));
            }
            self.answered = true;
            self.entry.ys.clone()
        };
        Ok(LlmResponse {
            completions: texts.into_iter().map(|y| Completion::text(y, None)).collect(),
            usage,
            latency_ms: 0,
            model: self.model.clone(),
            simulated: false,
            cached: false,
            lost: None,
        })
    }
}

/// Validate the naive log at `path`, then re-run every input (recording sessions to `out`
/// if given). Nothing is written when the log is refused.
pub fn import(path: &Path, out: Option<&Path>) -> Result<NaiveReport, ImportError> {
    let log = read_log(path)?;
    let source = path.display().to_string();
    let mut checks = Vec::with_capacity(log.entries.len());
    for (entry, usage) in log.entries.iter().zip(&log.usage) {
        checks.push(check_entry(&log, entry, *usage, &source, out)?);
    }
    let samples: usize = checks.iter().map(|c| c.samples).sum();
    let per = samples.max(1) as f64;
    Ok(NaiveReport {
        task: log.task,
        method: log.method.label().to_string(),
        method_from_name: log.method_from_name,
        backend: log.backend.clone(),
        temperature: log.temperature,
        puzzles: checks.len(),
        puzzles_agreeing: checks.iter().filter(|c| c.disagreements.is_empty()).count(),
        samples,
        samples_correct: checks.iter().map(|c| c.correct).sum(),
        puzzles_any: checks.iter().filter(|c| c.correct > 0).count(),
        puzzles_first: checks.iter().filter(|c| c.first_correct).count(),
        letter: checks.iter().map(|c| c.letter_sum).sum::<f64>() / per,
        word: checks.iter().map(|c| c.word_sum).sum::<f64>() / per,
        games: checks.iter().map(|c| c.games).sum(),
        log_letter: checks.iter().map(|c| c.log_letter_sum).sum::<f64>() / per,
        log_word: checks.iter().map(|c| c.log_word_sum).sum::<f64>() / per,
        log_games: checks.iter().map(|c| c.log_games).sum(),
        judged: checks.iter().map(|c| c.judged).sum(),
        coherency: (log.task == NaiveTask::Writing).then(|| {
            checks.iter().map(|c| c.coherency_sum).sum::<f64>()
                / checks.iter().map(|c| c.judged).sum::<usize>().max(1) as f64
        }),
        prompt_tokens: checks.iter().map(|c| c.prompt_tokens).sum(),
        completion_tokens: checks.iter().map(|c| c.completion_tokens).sum(),
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_give_task_method_backend_and_temperature() {
        let n = parse_file_name("game24_gpt-4_0.7_naive_standard_sample_100_start900_end1000.json");
        assert_eq!(n.task, Some(NaiveTask::Game24));
        assert_eq!(n.method, Some(crate::engine::methods::io::KIND));
        assert_eq!((n.backend.as_deref(), n.temperature), (Some("gpt-4"), Some(0.7)));
        let n = parse_file_name("crosswords_my_model_1.0_naive_cot_sample_3_start0_end2.json");
        assert_eq!(n.task, Some(NaiveTask::Crosswords));
        assert_eq!(n.method, Some(crate::engine::methods::cot::KIND));
        assert_eq!(n.backend.as_deref(), Some("my_model"));
        assert_eq!(parse_file_name("log.json"), Named::default());
        // The reference repository's own names have no task word: 1.0, not the default 0.7.
        let n = parse_file_name("gpt-4_1.0_naive_cot_sample_10_start0_end100.json");
        assert_eq!((n.task, n.method), (None, Some(crate::engine::methods::cot::KIND)));
        assert_eq!((n.backend.as_deref(), n.temperature), (Some("gpt-4"), Some(1.0)));
    }

    #[test]
    fn malformed_entries_are_named() {
        let err = parse_log(r#"[{"idx": 3, "ys": ["a", "b"], "accs": [true]}]"#, "x.json").unwrap_err();
        assert!(err.contains("entry 0 (idx 3): 2 samples in `ys` but 1 verdicts"), "{err}");
        let err = parse_log(r#"[{"idx": 3, "ys": ["a"], "accs": ["yes"]}]"#, "x.json").unwrap_err();
        assert!(err.contains("`accs[0]` is \"yes\""), "{err}");
        let log = parse_log(r#"[{"idx": 3, "ys": ["a", "b"], "infos": [{"rs": [1, 2], "r": 1.5}, {}]}]"#, "x.json")
            .expect("a writing log");
        assert_eq!(log.task, NaiveTask::Writing);
        assert_eq!(log.entries[0].judgments[0], LogJudgment { rs: Some(vec![1, 2]), r: Some(1.5) });
        assert_eq!(log.entries[0].judgments[1], LogJudgment::default(), "missing scores are allowed");
        let err = parse_log(r#"[{"idx": 3, "ys": ["a"], "infos": [{"rs": ["x"], "r": 1.0}]}]"#, "x.json").unwrap_err();
        assert!(err.contains("entry 0 (idx 3): `infos[0].rs[0]` is \"x\""), "{err}");
        let err = parse_log(r#"[{"idx": 3, "ys": ["a"], "accs": [true]}]"#, "crosswords_gpt-4_0.7_naive_standard.json")
            .unwrap_err();
        assert!(err.contains("the file name says crosswords"), "{err}");
    }
}
