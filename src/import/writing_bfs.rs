//! Import the reference Tree-of-Thoughts implementation's creative-writing search log
//! (what its `run.py --task text --method_generate sample --method_evaluate vote` writes:
//! `{idx, steps: [{step, x, ys, new_ys, values, select_new_ys}], ys, infos: [{rs, r}],
//! usage_so_far}` per input) as `tot-bfs` sessions of the writing task, by re-running the
//! search with the log's samples as the model's completions, its vote counts as the
//! vote replies ("The best choice is N", one per vote counted, padded with replies that
//! name no choice) and its judge scores `rs` as the coherency judge's replies.
//!
//! The reference writes a candidate as its parent's text plus the raw sample; our states
//! are the task's own (`Plan:\n…`, then `…\n\nPassage:\n…`), so each candidate is mapped
//! to ours as the task reads its sample. The same run checks fidelity: at every step our
//! votes must be the log's `values`, our selection its `select_new_ys`, our final output
//! its first `ys` and our coherency of it its `infos[0].r`.
//!
//! The search's shape (samples per state, vote samples, states kept) comes from the file
//! name when it has the reference's form
//! (`{backend}_{temperature}_sample{n}_vote{n}_greedy{n}_start{a}_end{b}.json`), else from
//! the log (the most samples any state got, the most votes any step counted, the most
//! states any step kept). An entry whose `infos` hold no `rs` at all (run.py's older text
//! runs store `accs` instead) never asked the judge, so the imported run does not either
//! (its header says `unjudged`, and so do its replays); `rs` missing for some outputs only
//! leaves their judge calls failed with the reason. Missing `usage_so_far` leaves the
//! tokens at 0.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::naive::{judge_replies, read_judgments, LogJudgment};
use super::tot::ImportError;
use crate::engine::{Engine, Event, Params, Task};
use crate::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Purpose, Usage};
use crate::tasks::writing::{self, read, Writing};

const EXPECTED: &str = "expected the reference Tree-of-Thoughts creative-writing search log (run.py --task text \
    --method_generate sample --method_evaluate vote), a JSON list of {idx, steps, ys, infos, usage_so_far}";

/// Beyond these a log is not a run anyone made.
const MAX_SAMPLES: usize = 100;
const MAX_KEPT: usize = 100;
const EPS: f64 = 1e-9;

#[derive(Debug, Clone)]
pub struct WritingStep {
    pub ys: Vec<String>,
    pub new_ys: Vec<String>,
    pub values: Vec<f64>,
    pub select_new_ys: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct WritingEntry {
    pub idx: usize,
    pub x: String,
    pub steps: Vec<WritingStep>,
    pub ys: Vec<String>,
    pub judgments: Vec<LogJudgment>,
    usage_so_far: (u64, u64),
}

/// The search the log records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WritingRun {
    pub backend: String,
    pub temperature: f32,
    pub n_generate: u32,
    pub n_evaluate: u32,
    pub n_select: usize,
    pub from_file_name: bool,
}

#[derive(Debug, Clone)]
pub struct WritingLog {
    pub entries: Vec<WritingEntry>,
    pub run: WritingRun,
    pub usage: Vec<(u64, u64)>,
}

/// Per input: how our run compared with the log.
#[derive(Debug, Clone, Serialize)]
pub struct WritingCheck {
    pub idx: usize,
    pub input: String,
    pub steps: usize,
    pub steps_agreeing: usize,
    pub final_agrees: bool,
    /// Our coherency of the output, if it was judged.
    pub coherency: Option<f64>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub disagreements: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WritingReport {
    pub run: WritingRun,
    pub inputs: usize,
    pub inputs_agreeing: usize,
    pub steps: usize,
    pub steps_agreeing: usize,
    pub finals_agreeing: usize,
    pub judged: usize,
    /// Mean coherency of the judged outputs (the paper's figure).
    pub coherency: Option<f64>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub checks: Vec<WritingCheck>,
}

impl super::LogCheck for WritingCheck {
    fn label(&self) -> String {
        format!("input {}", self.idx)
    }
    fn disagreements(&self) -> &[String] {
        &self.disagreements
    }
}

impl super::VerifiedImport for WritingReport {
    type Check = WritingCheck;
    fn checks(&self) -> &[WritingCheck] {
        &self.checks
    }
    fn units(&self) -> &'static str {
        "inputs"
    }
}

/// Whether an entry looks like a writing search: `steps` whose input is sentences, not
/// four numbers.
pub fn looks_writing_bfs(first: &Value) -> bool {
    let Some(x) = first.get("steps").and_then(|s| s.get(0)).and_then(|s| s.get("x")).and_then(Value::as_str) else {
        return false;
    };
    let four_numbers = {
        let words: Vec<&str> = x.split_whitespace().collect();
        words.len() == 4 && words.iter().all(|w| w.parse::<u32>().is_ok())
    };
    !four_numbers && read::sentences(x).len() >= 2
}

pub fn read_log(path: &Path) -> Result<WritingLog, ImportError> {
    let source = path.display().to_string();
    let fail = |message: String| ImportError::Read { path: source.clone(), message };
    let text = crate::userfile::read_text(path, &crate::userfile::LOG)
        .map_err(|e| fail(format!("cannot read: {}", e.reason())))?;
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    parse_log(&text, &name).map_err(fail)
}

/// Validate and read a log's text; the error is one line naming the entry, step and field.
pub fn parse_log(text: &str, file_name: &str) -> Result<WritingLog, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e}); {EXPECTED}"))?;
    let items = match &value {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => return Err(format!("the list is empty; {EXPECTED}")),
        _ => return Err(format!("the file holds no JSON list; {EXPECTED}")),
    };
    let mut entries: Vec<WritingEntry> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let entry = read_entry(i, item)?;
        if let Some(first) = entries.iter().position(|e| e.idx == entry.idx) {
            return Err(format!(
                "input idx {} appears twice (entries {first} and {i}): its sessions would overwrite each other",
                entry.idx
            ));
        }
        entries.push(entry);
    }
    let steps = || entries.iter().flat_map(|e| e.steps.iter().map(move |s| (e.idx, s)));
    let most_samples = steps().map(|(_, s)| s.new_ys.len().div_ceil(s.ys.len().max(1))).max().unwrap_or(1).max(1);
    let most_votes = steps().map(|(_, s)| s.values.iter().sum::<f64>().round() as usize).max().unwrap_or(1).max(1);
    let most_kept = steps().map(|(_, s)| s.select_new_ys.len()).max().unwrap_or(1).max(1);
    let run = match parse_file_name(file_name) {
        Some(n) => {
            for (idx, s) in steps() {
                let votes = s.values.iter().sum::<f64>().round() as usize;
                if votes > n.n_evaluate as usize || s.select_new_ys.len() > n.n_select {
                    return Err(format!(
                        "input {idx}: a step counts {votes} votes and keeps {} states, but the file name says vote{} \
                         greedy{}",
                        s.select_new_ys.len(),
                        n.n_evaluate,
                        n.n_select
                    ));
                }
            }
            n
        }
        // The search's shape from the log; the backend and temperature from a name such as
        // run.py's older `gpt-4_1.0_generate_sample_select_greedy_sample5_start0_end100.json`.
        None => {
            let (backend, temperature) =
                super::named_backend_and_temperature(file_name).unwrap_or_else(|| ("gpt-4".into(), 0.7));
            WritingRun {
                backend,
                temperature,
                n_generate: u32::try_from(most_samples).unwrap_or(u32::MAX),
                n_evaluate: u32::try_from(most_votes).unwrap_or(u32::MAX),
                n_select: most_kept,
                from_file_name: false,
            }
        }
    };
    let usage = super::own_usage(entries.iter().map(|e| e.usage_so_far));
    Ok(WritingLog { entries, run, usage })
}

/// `{backend}_{temperature}_sample{n}_vote{n}_greedy{n}_start{a}_end{b}.json`, if the name has that form.
fn parse_file_name(name: &str) -> Option<WritingRun> {
    let stem = name.strip_suffix(".json").unwrap_or(name);
    let parts: Vec<&str> = stem.split('_').collect();
    let n = parts.len();
    if n < 7 {
        return None;
    }
    let number = |part: &str, word: &str| part.strip_prefix(word).and_then(|d| d.parse::<usize>().ok());
    number(parts[n - 2], "start")?;
    number(parts[n - 1], "end")?;
    let n_generate = number(parts[n - 5], "sample").filter(|k| (1..=MAX_SAMPLES).contains(k))?;
    let n_evaluate = number(parts[n - 4], "vote").filter(|k| (1..=MAX_SAMPLES).contains(k))?;
    let n_select = number(parts[n - 3], "greedy").filter(|k| (1..=MAX_KEPT).contains(k))?;
    let temperature = parts[n - 6].parse::<f32>().ok()?;
    Some(WritingRun {
        backend: parts[..n - 6].join("_"),
        temperature,
        n_generate: n_generate as u32,
        n_evaluate: n_evaluate as u32,
        n_select,
        from_file_name: true,
    })
}

fn strings(v: Option<&Value>, what: &str) -> Result<Vec<String>, String> {
    let list = v.and_then(Value::as_array).ok_or_else(|| format!("no list `{what}`"))?;
    list.iter()
        .enumerate()
        .map(|(j, y)| y.as_str().map(str::to_string).ok_or_else(|| format!("`{what}[{j}]` is not text")))
        .collect()
}

fn read_entry(i: usize, item: &Value) -> Result<WritingEntry, String> {
    let obj = item.as_object().ok_or_else(|| format!("entry {i} is not a JSON object; {EXPECTED}"))?;
    let idx = obj
        .get("idx")
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("entry {i} has no input number `idx`"))?;
    let at = |what: String| format!("input {idx}: {what}");
    let raw_steps = obj.get("steps").and_then(Value::as_array).ok_or_else(|| at("no list `steps`".into()))?;
    if raw_steps.is_empty() {
        return Err(at("`steps` is empty".into()));
    }
    let mut x = String::new();
    let mut steps = Vec::with_capacity(raw_steps.len());
    let mut kept = vec![String::new()];
    for (k, s) in raw_steps.iter().enumerate() {
        let at = |what: String| format!("input {idx}, step {k}: {what}");
        let sx = s.get("x").and_then(Value::as_str).ok_or_else(|| at("no input text `x`".into()))?;
        if k == 0 {
            x = sx.to_string();
        } else if sx != x {
            return Err(at("its input `x` is not step 0's".into()));
        }
        let ys = strings(s.get("ys"), "ys").map_err(at)?;
        let new_ys = strings(s.get("new_ys"), "new_ys").map_err(at)?;
        let select_new_ys = strings(s.get("select_new_ys"), "select_new_ys").map_err(at)?;
        let values: Vec<f64> = s
            .get("values")
            .and_then(Value::as_array)
            .ok_or_else(|| at("no vote counts `values`".into()))?
            .iter()
            .enumerate()
            .map(|(j, v)| {
                v.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= MAX_SAMPLES as f64)
                    .ok_or_else(|| at(format!("`values[{j}]` is {v}, not a vote count")))
            })
            .collect::<Result<_, _>>()?;
        if ys != kept {
            return Err(at("`ys` is not what the step before kept (`select_new_ys`)".into()));
        }
        if values.len() != new_ys.len() {
            return Err(at(format!("{} candidates but {} vote counts", new_ys.len(), values.len())));
        }
        if new_ys.len() > MAX_SAMPLES * ys.len().max(1) {
            return Err(at(format!(
                "{} candidates from {} states: more than {MAX_SAMPLES} each",
                new_ys.len(),
                ys.len()
            )));
        }
        if let Some((j, y)) = new_ys.iter().enumerate().find(|(_, y)| !ys.iter().any(|p| y.starts_with(p.as_str()))) {
            return Err(at(format!("candidate {j} ({:?}…) continues none of the kept states", first_chars(y, 40))));
        }
        if let Some(y) = select_new_ys.iter().find(|y| !new_ys.contains(y)) {
            return Err(at(format!("kept {:?}…, which is none of its candidates", first_chars(y, 40))));
        }
        kept = select_new_ys.clone();
        steps.push(WritingStep { ys, new_ys, values, select_new_ys });
    }
    let ys = match obj.get("ys") {
        None | Some(Value::Null) => kept.clone(),
        v => strings(v, "ys").map_err(at)?,
    };
    let judgments = read_judgments(obj.get("infos"), ys.len()).map_err(at)?;
    let usage = obj.get("usage_so_far");
    let get = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_u64).unwrap_or(0);
    Ok(WritingEntry { idx, x, steps, ys, judgments, usage_so_far: (get("prompt_tokens"), get("completion_tokens")) })
}

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The search's parameters: the reference's writing BFS, keeping what it keeps.
pub fn writing_params(run: &WritingRun, steps: usize) -> Params {
    Params::new(crate::engine::methods::tot_bfs::KIND)
        .with("breadth", run.n_select)
        .with("n_generate", run.n_generate)
        .with("n_evaluate", run.n_evaluate)
        .with("generator", "sample")
        .with("evaluator", "vote")
        .with("select", "greedy")
        .with("steps", steps)
        .with("lenient", true)
        .with("temperature", run.temperature)
}

/// Answers our engine's calls from one input's log.
struct LogAnswers<'a> {
    entry: &'a WritingEntry,
    task: &'a Writing,
    model: String,
    /// Our state's path → the log's text of it.
    log_of: HashMap<String, String>,
    /// Steps whose samples were given, per log parent (a parent is expanded once a step).
    sampled: HashMap<(usize, String), bool>,
    judged: Vec<bool>,
}

impl<'a> LogAnswers<'a> {
    fn new(entry: &'a WritingEntry, task: &'a Writing, model: &str) -> Self {
        LogAnswers {
            entry,
            task,
            model: model.to_string(),
            log_of: HashMap::from([(String::new(), String::new())]),
            sampled: HashMap::new(),
            judged: vec![false; entry.ys.len()],
        }
    }
}

impl super::LogAnswerer for LogAnswers<'_> {
    fn answer(&mut self, request: &LlmRequest, usage: Usage) -> Result<LlmResponse, CallError> {
        let fail = |message: String| CallError { kind: CallErrorKind::Import, message };
        let y = request.context.get("y").and_then(Value::as_str).unwrap_or("");
        let texts: Vec<String> = match request.purpose {
            Purpose::Sample => {
                let parent = self.log_of.get(y).cloned().ok_or_else(|| fail(format!("the log has no state {y:?}")))?;
                let x = &self.entry.x;
                let (k, step) = self
                    .entry
                    .steps
                    .iter()
                    .enumerate()
                    .find(|(k, s)| s.ys.contains(&parent) && !self.sampled.contains_key(&(*k, parent.clone())))
                    .ok_or_else(|| fail("the log has no further samples for this state".into()))?;
                self.sampled.insert((k, parent.clone()), true);
                // This parent's run of candidates (the first parent that prefixes them).
                let owner = |c: &String| step.ys.iter().find(|p| c.starts_with(p.as_str())) == Some(&parent);
                let raws: Vec<(String, String)> = step
                    .new_ys
                    .iter()
                    .filter(|c| owner(c))
                    .map(|c| (c.clone(), c[parent.len()..].to_string()))
                    .collect();
                for (full, raw) in &raws {
                    let ours = crate::engine::TreeSearch::parse_sample(self.task, x, y, raw).path;
                    self.log_of.entry(ours).or_insert_with(|| full.clone());
                }
                raws.into_iter().map(|(_, raw)| raw).collect()
            }
            Purpose::Vote => {
                let ours: Vec<String> = request
                    .context
                    .get("ys")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default();
                let mut replies = Vec::new();
                for (i, y) in ours.iter().enumerate() {
                    let full = self.log_of.get(y).ok_or_else(|| fail(format!("the log has no candidate {y:?}")))?;
                    let count = self
                        .entry
                        .steps
                        .iter()
                        .find_map(|s| s.new_ys.iter().position(|c| c == full).map(|j| s.values[j]))
                        .ok_or_else(|| fail("the log has no vote count for a candidate".into()))?;
                    for _ in 0..count as usize {
                        replies.push(format!("The best choice is {}", i + 1));
                    }
                }
                while replies.len() < request.n as usize {
                    replies.push("(a vote that names no choice)".into());
                }
                replies
            }
            Purpose::Judge => {
                let passage = request.context.get("passage").and_then(Value::as_str).unwrap_or("");
                let j = (0..self.entry.ys.len())
                    .find(|&j| !self.judged[j] && read::passage_of(&self.entry.ys[j]) == passage)
                    .ok_or_else(|| fail("the judge asked about a passage that is none of the log's outputs".into()))?;
                self.judged[j] = true;
                let judgment = self.entry.judgments.get(j).cloned().unwrap_or_default();
                judge_replies(&judgment).ok_or_else(|| {
                    fail(format!("the log has no coherency scores (infos[{j}].rs) for output {}", j + 1))
                })?
            }
            other => return Err(fail(format!("the log has no {} calls", other.label()))),
        };
        Ok(LlmResponse {
            completions: texts.into_iter().map(|t| Completion::text(t, None)).collect(),
            usage,
            latency_ms: 0,
            model: self.model.clone(),
            simulated: false,
            cached: false,
            lost: None,
        })
    }
}

/// Re-run one input against its log; record a session to `out` if given. The log's
/// tokens for the input are shared over its calls (marked estimated).
pub fn check_entry(
    entry: &WritingEntry,
    run_info: &WritingRun,
    usage: (u64, u64),
    source: &str,
    out: Option<&Path>,
) -> Result<WritingCheck, ImportError> {
    let err = |message: String| ImportError::Entry { path: source.to_string(), idx: entry.idx, message };
    let x = entry.x.clone();
    let params = writing_params(run_info, entry.steps.len());
    params.check().map_err(|e| err(format!("the run's parameters are out of range: {e}")))?;
    let task = Arc::new(Writing::builtin());
    let engine_task: Arc<dyn Task> = task.clone();
    let model = run_info.backend.clone();
    let path = out.map(|dir| dir.join(format!("writing-tot-bfs-{:04}.jsonl", entry.idx)));
    let session = path.as_ref().map(|p| p.display().to_string());
    // A log that stores no judge scores (run.py's older text runs, `accs` instead of
    // `infos`) never asked the judge: neither does the imported run, nor its replays.
    let judged = entry.judgments.iter().any(|j| j.rs.is_some());
    let (run, events, answers) = super::drive_sharing_usage(
        || {
            let mut engine = Engine::new(engine_task.clone(), &x, params.clone());
            engine.set_outcome_judge(judged);
            engine
        },
        || LogAnswers::new(entry, &task, &model),
        usage,
        super::Shares::Estimated,
        || {
            super::log_writer(path.as_deref(), || crate::session::Header {
                unjudged: !judged,
                prompt_style: Default::default(),
                context_window: None,
                task_def: None,
                provider_notes: Vec::new(),
                ..super::tot_log_header(&writing::INFO.name, &x, entry.idx, params.clone(), &model, source)
            })
        },
    )?;
    let log_of = answers.log_of;
    let engine = run.engine;
    let tree = engine.tree();
    let as_log = |path: &str| log_of.get(path).cloned().unwrap_or_else(|| path.to_string());
    let mut disagreements = Vec::new();
    let selections: Vec<Vec<String>> = events
        .iter()
        .filter_map(|e| match e {
            Event::Selected { kept, .. } => Some(kept.iter().map(|&id| as_log(&tree.node(id).path)).collect()),
            _ => None,
        })
        .collect();
    let mut agreeing = 0;
    for (k, s) in entry.steps.iter().enumerate() {
        // Our vote counts of the step's candidates, by the log's text of each.
        for (j, c) in s.new_ys.iter().enumerate() {
            let ours = tree.nodes().find(|n| as_log(&n.path) == *c).and_then(|n| n.score.as_ref()).map(|sc| sc.value);
            if ours.is_none_or(|v| (v - s.values[j]).abs() > EPS) {
                disagreements.push(format!(
                    "step {k}, candidate {}: we count {} votes, the log {}",
                    j + 1,
                    ours.map_or("no".to_string(), |v| v.to_string()),
                    s.values[j]
                ));
            }
        }
        match selections.get(k) {
            Some(ours) if ours == &s.select_new_ys => agreeing += 1,
            Some(_) => disagreements.push(format!("step {k}: we keep other states than the log's select_new_ys")),
            None => disagreements.push(format!("step {k}: our run made no selection")),
        }
    }
    let outcome = engine.outcome().cloned().unwrap_or_default();
    let first = outcome.finals.first().map(|&id| as_log(&tree.node(id).path));
    let final_agrees = first.as_ref() == entry.ys.first();
    if !final_agrees {
        disagreements.push("our output is not the log's first final state (ys[0])".into());
    }
    let coherency = outcome.finals.first().and_then(|&id| tree.node(id).metrics.get(writing::COHERENCY).copied());
    if let (Some(ours), Some(r)) = (coherency, entry.judgments.first().and_then(|j| j.r)) {
        if (ours - r).abs() > EPS {
            disagreements.push(format!("our coherency of the output is {ours}, the log's infos[0].r says {r}"));
        }
    }
    Ok(WritingCheck {
        idx: entry.idx,
        input: x,
        steps: entry.steps.len(),
        steps_agreeing: agreeing,
        final_agrees,
        coherency,
        prompt_tokens: usage.0,
        completion_tokens: usage.1,
        disagreements,
        session,
    })
}

/// Validate the log at `path`, then re-run every input (recording sessions to `out` if
/// given). Nothing is written when the log is refused.
pub fn import(path: &Path, out: Option<&Path>) -> Result<WritingReport, ImportError> {
    let log = read_log(path)?;
    let source = path.display().to_string();
    let mut checks = Vec::with_capacity(log.entries.len());
    for (entry, usage) in log.entries.iter().zip(&log.usage) {
        checks.push(check_entry(entry, &log.run, *usage, &source, out)?);
    }
    let judged: Vec<f64> = checks.iter().filter_map(|c| c.coherency).collect();
    Ok(WritingReport {
        inputs: checks.len(),
        inputs_agreeing: checks.iter().filter(|c| c.disagreements.is_empty()).count(),
        steps: checks.iter().map(|c| c.steps).sum(),
        steps_agreeing: checks.iter().map(|c| c.steps_agreeing).sum(),
        finals_agreeing: checks.iter().filter(|c| c.final_agrees).count(),
        judged: judged.len(),
        coherency: (!judged.is_empty()).then(|| judged.iter().sum::<f64>() / judged.len() as f64),
        prompt_tokens: checks.iter().map(|c| c.prompt_tokens).sum(),
        completion_tokens: checks.iter().map(|c| c.completion_tokens).sum(),
        run: log.run,
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_give_the_search_shape() {
        let run = parse_file_name("gpt-4_1.0_sample5_vote5_greedy1_start0_end100.json").expect("the reference form");
        assert_eq!(
            (run.backend.as_str(), run.temperature, run.n_generate, run.n_evaluate, run.n_select),
            ("gpt-4", 1.0, 5, 5, 1)
        );
        assert_eq!(parse_file_name("gpt-4_0.7_propose1_value3_greedy5_start900_end1000.json"), None);
        assert_eq!(parse_file_name("log.json"), None);
    }

    #[test]
    fn malformed_entries_are_named() {
        let x = "One is here. Two is there.";
        let bad = format!(
            r#"[{{"idx": 2, "steps": [{{"x": "{x}", "ys": [""], "new_ys": ["a"], "values": [1, 2], "select_new_ys": ["a"]}}]}}]"#
        );
        let err = parse_log(&bad, "x.json").unwrap_err();
        assert!(err.contains("input 2, step 0: 1 candidates but 2 vote counts"), "{err}");
        let bad = format!(
            r#"[{{"idx": 2, "steps": [{{"x": "{x}", "ys": [""], "new_ys": ["a"], "values": [1], "select_new_ys": ["b"]}}]}}]"#
        );
        assert!(parse_log(&bad, "x.json").unwrap_err().contains("none of its candidates"));
        let good = format!(
            r#"[{{"idx": 2, "steps": [{{"x": "{x}", "ys": [""], "new_ys": ["a", "b"], "values": [1, 3], "select_new_ys": ["b"]}}]}}]"#
        );
        let log = parse_log(&good, "x.json").expect("no infos, no usage: still a log");
        assert_eq!((log.run.n_generate, log.run.n_evaluate, log.run.n_select), (2, 4, 1));
        assert_eq!(log.entries[0].ys, vec!["b".to_string()], "ys default to the last step's kept states");
        assert_eq!((log.run.backend.as_str(), log.run.temperature), ("gpt-4", 0.7), "run.py's defaults");
        // run.py's older name: the shape from the log, the backend and temperature from the name.
        let log = parse_log(&good, "gpt-4_1.0_generate_sample_select_greedy_sample5_start0_end100.json").unwrap();
        assert_eq!((log.run.backend.as_str(), log.run.temperature, log.run.from_file_name), ("gpt-4", 1.0, false));
        assert_eq!((log.run.n_generate, log.run.n_evaluate, log.run.n_select), (2, 4, 1));
    }
}
