//! Import the reference Tree-of-Thoughts implementation's Game-of-24 BFS log (what its
//! `run.py --task game24 --method_generate propose --method_evaluate value` writes:
//! `{idx, steps: [{step, x, ys, new_ys, values, select_new_ys}], ys, infos, usage_so_far}`
//! per puzzle) as sessions, by re-running our `tot-bfs` with the log's candidates and
//! values as the model's replies. The same run checks fidelity: at every step our
//! selection must equal the log's `select_new_ys`, our final paths its `ys` and our
//! verdicts on them its `infos`.
//!
//! The log is validated first, so a log of another kind (creative writing, crosswords,
//! a naive sampling run) is refused with what was expected and what was found. The
//! search's parameters (breadth, evaluator samples, temperature, model) come from the
//! file name when it has the reference's form
//! (`{backend}_{temperature}_propose{n}_value{n}_greedy{n}_start{a}_end{b}.json`), else
//! from the log itself and run.py's defaults.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{Engine, Event, NodeStatus, Params};
use crate::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Purpose, Usage};
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
    /// The run's token usage up to and including this puzzle (cumulative, as run.py logs it).
    #[serde(default)]
    pub usage_so_far: Option<Value>,
}

impl LogEntry {
    /// The log's verdict on each final path: `infos[j].r` (1 or 0, or a boolean).
    pub fn verdicts(&self) -> Vec<Option<bool>> {
        self.infos.iter().map(|info| verdict(info.get("r")?)).collect()
    }

    /// `usage_so_far`'s (prompt, completion) tokens; (0, 0) when the log has none.
    fn usage_so_far(&self) -> (u64, u64) {
        let get = |key: &str| self.usage_so_far.as_ref().and_then(|u| u.get(key)).and_then(Value::as_u64).unwrap_or(0);
        (get("prompt_tokens"), get("completion_tokens"))
    }
}

fn verdict(r: &Value) -> Option<bool> {
    match r {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|r| r != 0.0),
        _ => None,
    }
}

/// The search the log records, as our parameters need it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogRun {
    /// run.py's `--backend` (the model).
    pub backend: String,
    pub temperature: f32,
    /// `--n_evaluate_sample`: value samples per candidate.
    pub n_evaluate: u32,
    /// `--n_select_sample`: states kept per step (the breadth).
    pub n_select: usize,
    /// Whether the figures come from the file name (else from the log and run.py's defaults).
    pub from_file_name: bool,
}

/// A validated log: its puzzles, the search that made them and each puzzle's own token
/// usage (the difference of consecutive `usage_so_far`).
#[derive(Debug, Clone)]
pub struct Log {
    pub entries: Vec<LogEntry>,
    pub run: LogRun,
    /// Per entry: (prompt, completion) tokens spent on that puzzle.
    pub usage: Vec<(u64, u64)>,
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
    /// Our final paths are the log's `ys`, in order.
    pub finals_agree: bool,
    /// Our verdict on every final path is the log's `infos[].r`.
    pub verdicts_agree: bool,
    pub solved: bool,
    pub solved_any: bool,
    /// The tokens the log says this puzzle spent (recorded in the session, spread over its calls).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Every difference from the log, the first one first.
    pub disagreements: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub puzzles: usize,
    /// Puzzles with no difference at all from the log.
    pub puzzles_agreeing: usize,
    pub steps: usize,
    pub steps_agreeing: usize,
    pub finals_agreeing: usize,
    pub verdicts_agreeing: usize,
    pub solved: usize,
    pub solved_any: usize,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub run: LogRun,
    pub checks: Vec<PuzzleCheck>,
}

impl super::LogCheck for PuzzleCheck {
    fn label(&self) -> String {
        format!("puzzle {} ({})", self.idx, self.input)
    }
    fn disagreements(&self) -> &[String] {
        &self.disagreements
    }
}

impl super::VerifiedImport for VerifyReport {
    type Check = PuzzleCheck;
    fn checks(&self) -> &[PuzzleCheck] {
        &self.checks
    }
    fn units(&self) -> &'static str {
        "puzzles"
    }
}

/// What the importer reads, said in every message refusing a file.
const EXPECTED: &str = "expected the reference Tree-of-Thoughts Game-of-24 BFS log (run.py --task game24 \
    --method_generate propose --method_evaluate value), a JSON list of {idx, steps, ys, infos, usage_so_far}";

/// The steps of a Game-of-24 search: three operations, then the answer.
const GAME24_STEPS: usize = 4;

/// Beyond these a file name is not a run anyone made (and would cost memory to re-run).
const MAX_SAMPLES: u32 = 100;
const MAX_KEPT: usize = 1000;

/// run.py's defaults for what a file name does not say.
const DEFAULT_BACKEND: &str = "gpt-4";
const DEFAULT_TEMPERATURE: f32 = 0.7;

pub fn read_log(path: &Path) -> Result<Log, ImportError> {
    let source = path.display().to_string();
    let fail = |message: String| ImportError::Read { path: source.clone(), message };
    let text = crate::userfile::read_text(path, &crate::userfile::LOG)
        .map_err(|e| fail(format!("cannot read: {}", e.reason())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    parse_log(&text, &name).map_err(fail)
}

/// Validate and read a log's text; `file_name` may carry the run's parameters. The error
/// is one line: what is wrong, what was found and what was expected.
pub fn parse_log(text: &str, file_name: &str) -> Result<Log, String> {
    let named = parse_file_name(file_name)?;
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e}); {EXPECTED}"))?;
    let not_bfs = |what: String| format!("not a Game-of-24 BFS log: {what}; {EXPECTED}");
    let items = match &value {
        Value::Array(items) if items.is_empty() => return Err(not_bfs("the list is empty".into())),
        Value::Array(items) => items,
        other => return Err(not_bfs(format!("the file holds a JSON {}, not a list", json_kind(other)))),
    };
    let mut entries = Vec::with_capacity(items.len());
    let mut positions: HashMap<usize, usize> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let entry = read_entry(i, item).map_err(not_bfs)?;
        if let Some(first) = positions.insert(entry.idx, i) {
            return Err(format!(
                "puzzle idx {} appears twice (entries {first} and {i}): its sessions would overwrite each other; \
                 remove or renumber one",
                entry.idx
            ));
        }
        entries.push(entry);
    }
    let run = log_run(&entries, named)?;
    let usage = super::own_usage(entries.iter().map(|e| e.usage_so_far()));
    Ok(Log { entries, run, usage })
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

fn shorten(s: &str, max: usize) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= max {
        s
    } else {
        format!("{}...", s.chars().take(max).collect::<String>())
    }
}

/// Which reference task an entry's verdicts and input point to (for messages): its name
/// and run.py's flag.
fn task_hint(item: &Value) -> (&'static str, &'static str) {
    let infos = item.get("infos").and_then(Value::as_array);
    let has = |key: &str| infos.is_some_and(|infos| infos.iter().any(|i| i.get(key).is_some()));
    if has("rs") {
        ("creative writing", "--task text")
    } else if has("r_letter") || has("r_word") {
        ("crosswords", "--task crosswords")
    } else if item.get("accs").is_some() || has("r") && !has("rs") {
        ("Game of 24", "--task game24")
    } else {
        ("another task", "--task ?")
    }
}

/// Read and check one entry of the list: the shape run.py's game24 BFS writes.
fn read_entry(i: usize, item: &Value) -> Result<LogEntry, String> {
    let obj = match item {
        Value::Object(obj) => obj,
        Value::Array(states) if states.first().is_some_and(|s| s.get("actions").is_some()) => {
            return Err(format!(
                "entry {i} is a list of search states ({{total_step, env_step, actions, info, count}}), as in a \
                 crosswords DFS log"
            ))
        }
        Value::Array(_) => return Err(format!("entry {i} is a list, as in a puzzle file (clues and letters)")),
        other => return Err(format!("entry {i} is a JSON {}", json_kind(other))),
    };
    let idx = obj
        .get("idx")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("entry {i} has no puzzle number `idx`"))?;
    let Some(steps) = obj.get("steps") else {
        let (task, flag) = task_hint(item);
        return Err(if obj.contains_key("ys") {
            format!(
                "puzzle {idx} has no `steps`: a naive sampling log of {task} (run.py {flag} --naive_run), not a search"
            )
        } else {
            format!("puzzle {idx} has no `steps`")
        });
    };
    // The input first: another task's search log fails here with the clearest message.
    let x = steps.get(0).and_then(|s| s.get("x")).and_then(Value::as_str).unwrap_or("");
    let numbers: Vec<&str> = x.split_whitespace().collect();
    if numbers.len() != 4 || numbers.iter().any(|n| n.parse::<u32>().is_err()) {
        let (task, flag) = task_hint(item);
        return Err(format!(
            "puzzle {idx}: the input `x` is {:?}, not four numbers: a search log of {task} (run.py {flag})",
            shorten(x, 50)
        ));
    }
    let entry: LogEntry =
        serde_json::from_value(item.clone()).map_err(|e| format!("puzzle {idx}: {e} (in `steps`, `ys` or `infos`)"))?;
    check_entry(&entry)?;
    Ok(entry)
}

/// The structure of one puzzle's search: 4 steps, each expanding the states the step
/// before kept, candidates that add one line to a kept state (proposals), one value per
/// candidate that is a sum of value classes, and a verdict per final path.
fn check_entry(e: &LogEntry) -> Result<(), String> {
    let idx = e.idx;
    if e.steps.len() != GAME24_STEPS {
        return Err(format!(
            "puzzle {idx} has {} steps; a Game-of-24 search has {GAME24_STEPS} (three operations, then the answer)",
            e.steps.len()
        ));
    }
    let x = &e.steps[0].x;
    let mut kept = vec![String::new()];
    for (k, s) in e.steps.iter().enumerate() {
        let at = |what: String| format!("puzzle {idx}, step {k}: {what}");
        if s.step != k {
            return Err(at(format!("numbered {}", s.step)));
        }
        if &s.x != x {
            return Err(at(format!("the input is {:?}, step 0's is {x:?}", s.x)));
        }
        if s.ys != kept {
            return Err(at("`ys` is not what the step before kept (`select_new_ys`)".into()));
        }
        if s.values.len() != s.new_ys.len() {
            return Err(at(format!("{} candidates but {} values", s.new_ys.len(), s.values.len())));
        }
        for (j, y) in s.new_ys.iter().enumerate() {
            let proposal = s.ys.iter().any(|p| {
                y.strip_prefix(p.as_str()).and_then(|l| l.strip_suffix('\n')).is_some_and(|l| !l.contains('\n'))
            });
            if !proposal {
                return Err(at(format!(
                    "candidate {j} ({:?}) does not add one line to a kept state: not proposals (--method_generate \
                     propose)",
                    shorten(y, 60)
                )));
            }
        }
        for (j, v) in s.values.iter().enumerate() {
            let verdicts = value_counts(*v).map(|(sure, likely, impossible)| sure + likely + impossible);
            if verdicts.is_none_or(|n| n > MAX_SAMPLES as usize) {
                return Err(at(format!(
                    "value {v} of candidate {j} is not a sum of at most {MAX_SAMPLES} verdicts (sure 20, likely 1, \
                     impossible 0.001): not values (--method_evaluate value)"
                )));
            }
        }
        if let Some(y) = s.select_new_ys.iter().find(|y| !s.new_ys.contains(y)) {
            return Err(at(format!("kept {:?}, which is none of its candidates", shorten(y, 60))));
        }
        kept = s.select_new_ys.clone();
    }
    if e.infos.len() != e.ys.len() {
        return Err(format!(
            "puzzle {idx}: {} final paths (`ys`) but {} verdicts (`infos`)",
            e.ys.len(),
            e.infos.len()
        ));
    }
    if let Some(j) = e.verdicts().iter().position(Option::is_none) {
        return Err(format!("puzzle {idx}: `infos[{j}]` has no verdict `r` (1 or 0): {}", e.infos[j]));
    }
    Ok(())
}

/// The parameters a reference file name states.
#[derive(Debug, Clone, PartialEq)]
struct NamedRun {
    backend: String,
    temperature: f32,
    n_evaluate: u32,
    n_select: usize,
}

/// Read `{backend}_{temperature}_{generate}{n}_{evaluate}{n}_{select}{n}_start{a}_end{b}.json`.
/// Not that form: Ok(None). That form with a method we cannot re-run: an error.
fn parse_file_name(name: &str) -> Result<Option<NamedRun>, String> {
    let stem = name.strip_suffix(".json").unwrap_or(name);
    let parts: Vec<&str> = stem.split('_').collect();
    let n = parts.len();
    if n < 7 {
        return Ok(None);
    }
    let split = |part: &str| -> Option<(String, usize)> {
        let digits = part.len() - part.trim_start_matches(|c: char| c.is_ascii_alphabetic()).len();
        let (word, number) = part.split_at(digits);
        Some((word.to_string(), number.parse().ok()?)).filter(|(w, _)| !w.is_empty())
    };
    let (Some(start), Some(end), Some(select), Some(evaluate), Some(generate), Ok(temperature)) = (
        split(parts[n - 2]),
        split(parts[n - 1]),
        split(parts[n - 3]),
        split(parts[n - 4]),
        split(parts[n - 5]),
        parts[n - 6].parse::<f32>(),
    ) else {
        return Ok(None);
    };
    if start.0 != "start" || end.0 != "end" {
        return Ok(None);
    }
    let refuse = |what: String| Err(format!("the file name says {what}; {EXPECTED}"));
    if generate.0 != "propose" {
        return refuse(format!("--method_generate {}", generate.0));
    }
    if evaluate.0 != "value" {
        return refuse(format!("--method_evaluate {}", evaluate.0));
    }
    if select.0 != "greedy" {
        return refuse(format!("--method_select {} (only greedy selection re-runs deterministically)", select.0));
    }
    let n_evaluate = u32::try_from(evaluate.1).ok().filter(|&n| (1..=MAX_SAMPLES).contains(&n));
    let (Some(n_evaluate), 1..=MAX_KEPT) = (n_evaluate, select.1) else {
        return refuse(format!("{} value samples and {} kept states", evaluate.1, select.1));
    };
    Ok(Some(NamedRun { backend: parts[..n - 6].join("_"), temperature, n_evaluate, n_select: select.1 }))
}

/// The run's parameters: the file name's, checked against the log, or read off the log
/// (the most states any step kept; the most verdicts any value sums).
fn log_run(entries: &[LogEntry], named: Option<NamedRun>) -> Result<LogRun, String> {
    let steps = || entries.iter().flat_map(|e| e.steps.iter().map(move |s| (e.idx, s)));
    let samples = |v: f64| value_counts(v).map_or(0, |(s, l, i)| u32::try_from(s + l + i).unwrap_or(u32::MAX));
    let most_kept = steps().map(|(_, s)| s.select_new_ys.len()).max().unwrap_or(0).max(1);
    let most_samples = steps().flat_map(|(_, s)| s.values.iter().map(|&v| samples(v))).max().unwrap_or(0).max(1);
    let Some(named) = named else {
        return Ok(LogRun {
            backend: DEFAULT_BACKEND.into(),
            temperature: DEFAULT_TEMPERATURE,
            n_evaluate: most_samples,
            n_select: most_kept,
            from_file_name: false,
        });
    };
    for (idx, s) in steps() {
        if s.select_new_ys.len() > named.n_select {
            return Err(format!(
                "puzzle {idx}, step {}: keeps {} states, but the file name says greedy{}",
                s.step,
                s.select_new_ys.len(),
                named.n_select
            ));
        }
        if let Some(v) = s.values.iter().find(|&&v| samples(v) > named.n_evaluate) {
            return Err(format!(
                "puzzle {idx}, step {}: the value {v} sums {} verdicts, but the file name says value{}",
                s.step,
                samples(*v),
                named.n_evaluate
            ));
        }
    }
    Ok(LogRun {
        backend: named.backend,
        temperature: named.temperature,
        n_evaluate: named.n_evaluate,
        n_select: named.n_select,
        from_file_name: true,
    })
}

/// The parameters of the reference run: propose, value with `n_evaluate` samples,
/// greedy keeping `n_select`, keeping malformed proposals as the reference does.
pub fn reference_params(run: &LogRun) -> Params {
    Params::new(crate::engine::methods::tot_bfs::KIND)
        .with("breadth", run.n_select)
        .with("n_generate", 1)
        .with("n_evaluate", run.n_evaluate)
        .with("generator", "propose")
        .with("evaluator", "value")
        .with("select", "greedy")
        .with("steps", GAME24_STEPS)
        .with("lenient", true)
        .with("temperature", run.temperature)
}

/// How many `sure`, `likely` and `impossible` verdicts sum to `value` (e.g. 1.002 = one
/// likely and two impossible); None if no counts do.
pub fn value_counts(value: f64) -> Option<(usize, usize, usize)> {
    if !(0.0..=1e6).contains(&value) {
        return None;
    }
    let [(_, impossible_v), (_, likely_v), (_, sure_v)] = VALUE_CLASSES;
    let sure = ((value + 1e-6) / sure_v).floor() as usize;
    let rest = value - sure_v * sure as f64;
    let likely = ((rest + 1e-6) / likely_v).floor().max(0.0) as usize;
    let impossible = ((rest - likely_v * likely as f64) / impossible_v).round().max(0.0) as usize;
    let sum = sure_v * sure as f64 + likely_v * likely as f64 + impossible_v * impossible as f64;
    ((sum - value).abs() < 1e-6 && (impossible as f64) * impossible_v < likely_v).then_some((sure, likely, impossible))
}

/// Evaluator samples whose mapped classes sum to `value` (e.g. 1.002 = likely + 2 impossible),
/// padded to `n` with samples that name no class.
pub fn value_samples(value: f64, n: usize) -> Vec<String> {
    let (sure, likely, impossible) = value_counts(value).unwrap_or((0, 0, 0));
    let mut out = Vec::new();
    for (name, count) in [("sure", sure), ("likely", likely), ("impossible", impossible)] {
        out.extend(std::iter::repeat_n(name.to_string(), count));
    }
    while out.len() < n {
        out.push("(no verdict)".into());
    }
    out
}

/// The key of the reference's value cache for candidate `y` of puzzle `x`: its value prompt,
/// which sees only the numbers left (or, for a last step, the puzzle and the answer), as
/// `Game24Task.value_prompt_wrap` builds it. The cache lives as long as the run, over puzzles.
fn reference_value_key(x: &str, y: &str) -> String {
    let last = y.trim().lines().last().unwrap_or("");
    match last.split_once("left: ") {
        None => format!("answer\n{x}\n{}", last.to_lowercase().replace("answer: ", "")),
        Some(_) => {
            let left = last.rsplit("left: ").next().unwrap_or("");
            format!("left\n{}", left.split(')').next().unwrap_or(""))
        }
    }
}

/// Answers our engine's calls from one puzzle's log.
#[derive(Clone)]
struct LogAnswers {
    proposals: HashMap<String, VecDeque<String>>,
    values: HashMap<String, f64>,
    model: String,
    x: String,
    /// The reference's value cache so far in the run ([`reference_value_key`]s): a value
    /// it holds was not asked again.
    value_cache: HashSet<String>,
}

impl LogAnswers {
    fn new(entry: &LogEntry, model: &str, value_cache: HashSet<String>) -> Result<Self, String> {
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
        let x = entry.steps.first().map(|s| s.x.clone()).unwrap_or_default();
        Ok(LogAnswers { proposals, values, model: model.to_string(), x, value_cache })
    }

    fn value_key(&self, request: &LlmRequest) -> Option<String> {
        let y = request.context.get("y").and_then(Value::as_str)?;
        (request.purpose == Purpose::Value).then(|| reference_value_key(&self.x, y))
    }
}

impl super::LogAnswerer for LogAnswers {
    fn answered_from_cache(&self, request: &LlmRequest) -> bool {
        self.value_key(request).is_some_and(|k| self.value_cache.contains(&k))
    }

    /// The log's reply to `request`; `usage` is the share of the puzzle's tokens it carries.
    fn answer(&mut self, request: &LlmRequest, usage: Usage) -> Result<LlmResponse, CallError> {
        let cached = self.value_key(request).is_some_and(|k| !self.value_cache.insert(k));
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
            usage,
            latency_ms: 0,
            model: self.model.clone(),
            simulated: false,
            cached,
            lost: None,
        })
    }
}

/// `total` tokens shared over `calls` calls, the remainder one each to the first calls.
pub(crate) fn share(total: u64, calls: u64, call: u64) -> u64 {
    match calls {
        0 => 0,
        _ => total / calls + u64::from(call < total % calls),
    }
}

/// Re-run one puzzle against its log; record a session to `out` if given. `usage` is the
/// puzzle's (prompt, completion) tokens: the log gives them per puzzle only, so each call
/// carries an equal share, marked estimated, and the session's totals are the log's. A
/// value the reference's cache held (`value_cache`, the run's so far; updated here) was
/// not asked: a cache hit with no tokens.
pub fn check_puzzle(
    entry: &LogEntry,
    run_info: &LogRun,
    usage: (u64, u64),
    source: &str,
    out: Option<&Path>,
    value_cache: &mut HashSet<String>,
) -> Result<PuzzleCheck, ImportError> {
    let x = entry.steps.first().map(|s| s.x.clone()).unwrap_or_default();
    let err = |message: String| ImportError::Entry { path: source.to_string(), idx: entry.idx, message };
    let params = reference_params(run_info);
    params.check().map_err(|e| err(format!("the run's parameters are out of range: {e}")))?;
    let task = Arc::new(Game24::builtin());
    let model = run_info.backend.clone();
    let answers = LogAnswers::new(entry, &model, value_cache.clone()).map_err(err)?;
    let path = out.map(|dir| dir.join(format!("tot-log-{:04}.jsonl", entry.idx)));
    let session = path.as_ref().map(|p| p.display().to_string());
    let (run, events, answered) = super::drive_sharing_usage(
        || Engine::new(task.clone(), &x, params.clone()),
        || answers.clone(),
        usage,
        super::Shares::Estimated,
        || {
            super::log_writer(path.as_deref(), || {
                super::tot_log_header(&crate::tasks::game24::INFO.name, &x, entry.idx, params.clone(), &model, source)
            })
        },
    )?;
    *value_cache = answered.value_cache;
    let engine = run.engine;
    let tree = engine.tree();
    let selections: Vec<Vec<String>> = events
        .iter()
        .filter_map(|e| match e {
            Event::Selected { kept, .. } => Some(kept.iter().map(|&id| tree.node(id).path.to_string()).collect()),
            _ => None,
        })
        .collect();
    let mut disagreements = Vec::new();
    let mut agreeing = 0;
    for (i, s) in entry.steps.iter().enumerate() {
        match selections.get(i) {
            Some(ours) if ours == &s.select_new_ys => agreeing += 1,
            Some(ours) => disagreements.push(format!(
                "step {}: {}",
                s.step,
                first_difference("kept state", ours, &s.select_new_ys)
            )),
            None => disagreements.push(format!("step {}: our run made no selection", s.step)),
        }
    }
    let outcome = engine.outcome().cloned().unwrap_or_default();
    let finals: Vec<String> = outcome.finals.iter().map(|&id| tree.node(id).path.to_string()).collect();
    let finals_agree = finals == entry.ys;
    if !finals_agree {
        disagreements.push(format!("final paths (ys): {}", first_difference("final path", &finals, &entry.ys)));
    }
    // The verdicts on the paths both have, in order: ours are the task's exact check.
    let ours: Vec<bool> =
        outcome.finals.iter().map(|&id| matches!(tree.node(id).status, NodeStatus::Solution)).collect();
    let theirs = entry.verdicts();
    let mut verdicts_agree = ours.len() == theirs.len();
    for (j, (ours, theirs)) in ours.iter().zip(&theirs).enumerate() {
        if Some(*ours) != *theirs {
            verdicts_agree = false;
            let said = |ok: bool| if ok { "correct (r 1)" } else { "wrong (r 0)" };
            disagreements.push(format!(
                "verdict on final path {} ({:?}): we find it {}, the log's infos say {}",
                j + 1,
                shorten(finals[j].lines().last().unwrap_or(""), 60),
                said(*ours),
                theirs.map_or("nothing", said)
            ));
            break;
        }
    }
    Ok(PuzzleCheck {
        idx: entry.idx,
        input: x,
        steps: entry.steps.len(),
        steps_agreeing: agreeing,
        finals_agree,
        verdicts_agree,
        solved: outcome.solved,
        solved_any: outcome.solved_any,
        prompt_tokens: usage.0,
        completion_tokens: usage.1,
        disagreements,
        session,
    })
}

/// Where two lists of paths first differ, said for a person.
fn first_difference(noun: &str, ours: &[String], theirs: &[String]) -> String {
    match ours.iter().zip(theirs).position(|(a, b)| a != b) {
        Some(j) => format!(
            "{noun} {}: we have {:?}, the log {:?}",
            j + 1,
            shorten(&ours[j].replace('\n', " | "), 120),
            shorten(&theirs[j].replace('\n', " | "), 120)
        ),
        None => format!("we have {} {noun}s, the log {}", ours.len(), theirs.len()),
    }
}

/// Validate the log at `path`, then re-run every puzzle (recording sessions to `out` if given).
/// Nothing is written when the log is refused.
pub fn import(path: &Path, out: Option<&Path>) -> Result<VerifyReport, ImportError> {
    let log = read_log(path)?;
    let source = path.display().to_string();
    let mut checks = Vec::with_capacity(log.entries.len());
    let mut value_cache = HashSet::new();
    for (entry, usage) in log.entries.iter().zip(&log.usage) {
        checks.push(check_puzzle(entry, &log.run, *usage, &source, out, &mut value_cache)?);
    }
    Ok(VerifyReport {
        puzzles: checks.len(),
        puzzles_agreeing: checks.iter().filter(|c| c.disagreements.is_empty()).count(),
        steps: checks.iter().map(|c| c.steps).sum(),
        steps_agreeing: checks.iter().map(|c| c.steps_agreeing).sum(),
        finals_agreeing: checks.iter().filter(|c| c.finals_agree).count(),
        verdicts_agreeing: checks.iter().filter(|c| c.verdicts_agree).count(),
        solved: checks.iter().filter(|c| c.solved).count(),
        solved_any: checks.iter().filter(|c| c.solved_any).count(),
        prompt_tokens: checks.iter().map(|c| c.prompt_tokens).sum(),
        completion_tokens: checks.iter().map(|c| c.completion_tokens).sum(),
        run: log.run,
        checks,
    })
}

pub fn default_out_dir(path: &Path) -> PathBuf {
    path.with_extension("sessions")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_of_the_reference_give_the_runs_parameters() {
        let named = parse_file_name("gpt-4_0.7_propose1_value3_greedy5_start900_end1000.json").unwrap().unwrap();
        assert_eq!(named, NamedRun { backend: "gpt-4".into(), temperature: 0.7, n_evaluate: 3, n_select: 5 });
        let named = parse_file_name("my_model_1.0_propose1_value10_greedy1_start0_end5.json").unwrap().unwrap();
        assert_eq!((named.backend.as_str(), named.n_evaluate, named.n_select), ("my_model", 10, 1));
        // Other names say nothing; names of other searches are refused, saying why.
        assert_eq!(parse_file_name("tot-log-3.json"), Ok(None));
        assert_eq!(parse_file_name("game24_gpt-4_0.7_naive_standard_sample_100_start900_end1000.json"), Ok(None));
        let sample = parse_file_name("gpt-4_1.0_sample5_vote5_greedy1_start0_end100.json").unwrap_err();
        assert!(sample.contains("--method_generate sample"), "{sample}");
        let vote = parse_file_name("gpt-4_0.7_propose1_vote3_greedy5_start900_end1000.json").unwrap_err();
        assert!(vote.contains("--method_evaluate vote"), "{vote}");
        let random = parse_file_name("gpt-4_0.7_propose1_value3_sample5_start900_end1000.json").unwrap_err();
        assert!(random.contains("--method_select sample"), "{random}");
        assert!(parse_file_name("gpt-4_0.7_propose1_value0_greedy5_start900_end1000.json").is_err());
        assert!(parse_file_name("gpt-4_0.7_propose1_value99999999999_greedy5_start0_end1.json").is_err());
        assert!(parse_file_name("gpt-4_0.7_propose1_value101_greedy5_start0_end1.json").is_err());
    }

    #[test]
    fn values_decompose_into_verdicts_or_are_refused() {
        assert_eq!(value_counts(60.0), Some((3, 0, 0)));
        assert_eq!(value_counts(1.002), Some((0, 1, 2)));
        assert_eq!(value_counts(21.001), Some((1, 1, 1)));
        assert_eq!(value_counts(0.0), Some((0, 0, 0)));
        assert_eq!(value_counts(0.005), Some((0, 0, 5)));
        // Arithmetically 500 impossibles; the log check allows at most MAX_SAMPLES verdicts.
        assert_eq!(value_counts(0.5), Some((0, 0, 500)));
        for bad in [2.0005, 0.0005, -1.0, f64::NAN, f64::INFINITY, 1e12] {
            assert_eq!(value_counts(bad), None, "{bad}");
        }
        assert_eq!(value_samples(1.002, 5), ["likely", "impossible", "impossible", "(no verdict)", "(no verdict)"]);
    }

    #[test]
    fn a_log_without_a_name_takes_its_parameters_from_the_log_and_run_pys_defaults() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tot-log-3.json")).unwrap();
        let log = parse_log(&text, "tot-log-3.json").unwrap();
        assert_eq!(log.entries.len(), 3);
        assert_eq!(
            log.run,
            LogRun { backend: "gpt-4".into(), temperature: 0.7, n_evaluate: 3, n_select: 5, from_file_name: false }
        );
        // The name's figures must hold for the log: 5 states kept is more than greedy4 allows.
        let err = parse_log(&text, "gpt-4_0.7_propose1_value3_greedy4_start900_end903.json").unwrap_err();
        assert!(err.contains("keeps 5 states, but the file name says greedy4"), "{err}");
    }

    #[test]
    fn structural_faults_are_named_by_puzzle_and_step() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tot-log-3.json")).unwrap();
        let log: Value = serde_json::from_str(&text).unwrap();
        let with = |edit: &dyn Fn(&mut Value)| {
            let mut log = log.clone();
            edit(&mut log);
            parse_log(&log.to_string(), "x.json").unwrap_err()
        };
        let err = with(&|l| l[0]["steps"].as_array_mut().unwrap().truncate(2));
        assert!(err.contains("puzzle 900 has 2 steps; a Game-of-24 search has 4"), "{err}");
        let err = with(&|l| l[1]["steps"][2]["values"][0] = Value::from(2.5));
        assert!(
            err.contains("puzzle 901, step 2: value 2.5 of candidate 0 is not a sum of at most 100 verdicts"),
            "{err}"
        );
        let err = with(&|l| l[1]["steps"][1]["ys"][0] = Value::from("9 + 9 = 18 (left: 18)\n"));
        assert!(err.contains("puzzle 901, step 1: `ys` is not what the step before kept"), "{err}");
        let err = with(&|l| l[2]["infos"][0] = serde_json::json!({"rs": [1, 2]}));
        assert!(err.contains("puzzle 902: `infos[0]` has no verdict `r`"), "{err}");
        let err = with(&|l| {
            let y = l[0]["steps"][0]["new_ys"][0].as_str().unwrap().to_string();
            l[0]["steps"][0]["new_ys"][0] = Value::from(format!("{y}and a second line\n"));
        });
        assert!(err.contains("puzzle 900, step 0: candidate 0") && err.contains("does not add one line"), "{err}");
        assert!(with(&|l| *l = serde_json::json!({"idx": 1})).contains("the file holds a JSON object, not a list"));
    }
}
