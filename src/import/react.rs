//! Import ReAct's logged trajectories (the text the reference notebooks print: FEVER
//! `Claim:` or HotpotQA `Question:` blocks, see [`react_text::read_trajectories`]) as
//! sessions, one per trajectory, by driving our `react` method through the real engine:
//! each logged step's `Thought i: ...\nAction i: ...` is the model's reply to the engine's
//! Act call, and each logged observation answers the tool call the action makes. The
//! session's header records the gold answer and that actions are read as the reference
//! environment read them (so `Action 3: \n\nFinish[x]` is its `Invalid action`, as logged),
//! which makes the session replay exactly and fork into a live run.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::tot::ImportError;
use crate::engine::{Command, Engine, Input, Params, Task};
use crate::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, ToolResult, Usage};
use crate::runtime::{sync, Run, StopPolicy};
use crate::session::{Header, SessionWriter, FORMAT, VERSION};
use crate::tasks::qa_data::{QaData, QaKind};
use crate::tasks::react_text::{self, ActionRules, QaItem, QuestionKind, Trajectory};

/// The provider and model named in imported sessions' headers.
pub const PROVIDER: &str = "import:react-text";
pub const MODEL: &str = "gpt-3 (recorded)";

/// How one trajectory came out.
#[derive(Debug, Clone, Serialize)]
pub struct TrajectoryImport {
    /// Position in the file (0-based) and the log's question index.
    pub position: usize,
    pub question_idx: Option<usize>,
    pub task: String,
    pub session: String,
    pub steps: usize,
    /// The log's exact match and F1 (0 without a results dict).
    pub em_log: f64,
    pub f1_log: f64,
    /// Ours, from the imported run.
    pub em: bool,
    pub f1: f64,
    pub answer: Option<String>,
    /// Where the session shows something other than the log.
    pub differences: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    pub sessions: usize,
    pub em_log: f64,
    pub em: usize,
    pub f1_log: f64,
    pub f1: f64,
    pub differences: usize,
    pub trajectories: Vec<TrajectoryImport>,
    /// Problems the reader met (skipped blocks, missing results), naming file and line.
    pub warnings: Vec<String>,
}

/// The reply the log's step `step` (1-based) stands for, as our engine asks for it.
pub fn step_reply(t: &Trajectory, step: usize) -> Option<String> {
    let s = t.steps.get(step.checked_sub(1)?)?;
    // The notebook's reply always splits at `\nAction i: `: a step the log prints with no
    // thought is an empty one before the marker (a reply that starts with `Action i: ` does
    // not split there, and is its bad call).
    let thought = s.thought.as_deref().unwrap_or("");
    Some(format!("Thought {step}: {thought}\nAction {step}: {}", s.action_text))
}

/// Whether the log's last step is a finish the reference environment accepted.
fn finishes(t: &Trajectory) -> bool {
    let n = t.steps.len();
    step_reply(t, n).is_some_and(|r| {
        react_text::parse_step_reference(&r, n).action.is_some_and(|a| a.name.eq_ignore_ascii_case("finish"))
    })
}

/// The parameters of an imported run: react with the paper's 7 steps, or as many as the
/// log has; a log that stops short without finishing stops there too.
pub fn params_for(t: &Trajectory) -> Params {
    let n = t.steps.len().max(1);
    let max_steps = if finishes(t) { n.max(7) } else { n };
    Params::new(crate::engine::methods::react::KIND).with("max_steps", max_steps).with("temperature", 0.0)
}

fn recorded(text: String) -> LlmResponse {
    LlmResponse {
        completions: vec![Completion::text(text, None)],
        usage: Usage { estimated: true, ..Usage::default() },
        latency_ms: 0,
        model: MODEL.into(),
        simulated: false,
        cached: false,
        lost: None,
    }
}

/// The observation each step of the rebuilt trajectory shows, by step.
fn shown_observations(engine: &Engine) -> Vec<(usize, String)> {
    let tree = engine.tree();
    let mut out: Vec<(usize, String)> = tree
        .nodes()
        .filter(|n| n.depth > 0)
        .map(|n| (n.depth, n.step.as_ref().and_then(|s| s.observation.clone()).unwrap_or_default()))
        .collect();
    out.sort_by_key(|(d, _)| *d);
    out
}

/// Import one trajectory into `out` under `name`.
pub fn import_trajectory(
    t: &Trajectory,
    position: usize,
    source: &str,
    out: &Path,
    name: &str,
) -> Result<TrajectoryImport, ImportError> {
    let kind = match t.kind {
        QuestionKind::Claim => QaKind::Fever,
        QuestionKind::Question => QaKind::HotpotQa,
    };
    let idx = t.question_idx.unwrap_or(position);
    let entry_err = |message: String| ImportError::Entry { path: source.to_string(), idx, message };
    let gold = t.result.as_ref().map(|r| r.gt_answer.clone());
    let items: Vec<QaItem> =
        gold.iter().map(|g| QaItem { question: t.question.clone(), answer: g.clone(), kind: String::new() }).collect();
    let task = QaData::new(kind, None, items, None).map_err(|e| entry_err(e.to_string()))?;
    let task: Arc<dyn Task> = Arc::new(task.with_rules(ActionRules::Reference));
    let params = params_for(t);
    let header = Header {
        format: FORMAT.into(),
        version: VERSION,
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: kind.name().into(),
        input: t.question.clone(),
        index: Some(idx),
        params: params.clone(),
        provider: PROVIDER.into(),
        model: MODEL.into(),
        simulated: false,
        sim: None,
        price: None,
        source: Some(format!("react-text:{source}#{idx}")),
        parent: None,
        note: None,
        gold: gold.clone(),
        actions: Some(ActionRules::Reference),
        facets: Default::default(),
        memory: None,
        unjudged: false,
        prompt_style: Default::default(),
        context_window: None,
        task_def: None,
        provider_notes: Vec::new(),
    };
    let path = out.join(name);
    let writer = SessionWriter::create(&path, &header)?;
    let engine = Engine::new(Arc::clone(&task), &t.question, params);
    let mut run = Run::new(engine, Some(writer), StopPolicy::default());
    // The step whose reply was given last: its observation answers the next tool call.
    let step = std::cell::Cell::new(0usize);
    let answer = |request: &LlmRequest| -> Result<LlmResponse, CallError> {
        let n = request.context.get("step").and_then(serde_json::Value::as_u64).unwrap_or(0) as usize;
        step.set(n);
        let logged = n.checked_sub(1).and_then(|i| t.steps.get(i));
        let reask = request.context.get("reask").and_then(serde_json::Value::as_bool).unwrap_or(false);
        // A bad call: the first reply is the text the log printed after `ohh...`, the
        // second (the engine asks again for the action alone) the action the log shows.
        let reply = match logged.and_then(|s| s.bad_call.as_ref().map(|b| (s, b))) {
            Some((s, _)) if reask => Some(s.action_text.clone()),
            Some((_, bad)) => Some(bad.clone()),
            None => step_reply(t, n),
        };
        reply
            .map(recorded)
            .ok_or_else(|| CallError { kind: CallErrorKind::Import, message: format!("the log has no step {n}") })
    };
    let tool = |_: &crate::protocol::ToolRequest, _, _| {
        let observation = t.steps.get(step.get().wrapping_sub(1)).map(|s| s.observation.clone()).unwrap_or_default();
        ToolResult { text: observation, ok: true, latency_ms: 0 }
    };
    sync::drive_with_tools(&mut run, vec![Input::command(Command::Run)], answer, tool)?;
    run.end(0)?;
    let engine = run.engine;

    let mut differences = Vec::new();
    let shown = shown_observations(&engine);
    if shown.len() != t.steps.len() {
        differences.push(format!("the log has {} steps, the session {}", t.steps.len(), shown.len()));
    }
    for ((n, ours), logged) in shown.iter().zip(&t.steps) {
        if ours.trim() != logged.observation.trim() {
            differences.push(format!(
                "step {n}: the session shows {:?}, the log {:?}",
                ours.trim(),
                logged.observation.trim()
            ));
        }
    }
    let outcome = engine.outcome().cloned().unwrap_or_default();
    let answer = outcome.answer.clone();
    if let Some(r) = &t.result {
        if answer.as_deref().unwrap_or("") != r.answer {
            differences.push(format!("the session answers {:?}, the log {:?}", answer.unwrap_or_default(), r.answer));
        }
    }
    let f1 = outcome.answer.as_deref().map_or(0.0, |a| task.score(&t.question, a));
    Ok(TrajectoryImport {
        position,
        question_idx: t.question_idx,
        task: kind.name().into(),
        session: path.display().to_string(),
        steps: shown.len(),
        em_log: t.result.as_ref().map_or(0.0, |r| r.em),
        f1_log: t.result.as_ref().map_or(0.0, |r| r.f1),
        em: outcome.solved,
        f1,
        answer: outcome.answer,
        differences,
    })
}

/// Import every trajectory of the file at `path` into `out` (one session each, named by
/// task and question index: `fever-03687.jsonl`).
pub fn import(path: &Path, out: &Path) -> Result<ImportReport, ImportError> {
    let text = crate::userfile::read_text(path, &crate::userfile::LOG)
        .map_err(|e| ImportError::Read { path: path.display().to_string(), message: e.reason() })?;
    import_text(&text, &path.display().to_string(), out)
}

/// [`import`] on the file's text; `source` names it in headers and messages.
pub fn import_text(text: &str, source: &str, out: &Path) -> Result<ImportReport, ImportError> {
    let (trajectories, warnings) = react_text::read_trajectories(text, source);
    if trajectories.is_empty() {
        return Err(ImportError::Read {
            path: source.to_string(),
            message: "no ReAct trajectories (blocks of `<index> Claim: ...` or `Question: ...` with Thought/Action/Observation steps)".into(),
        });
    }
    let mut names = HashSet::new();
    let mut imported = Vec::with_capacity(trajectories.len());
    for (position, t) in trajectories.iter().enumerate() {
        let task = if t.kind == QuestionKind::Claim { QaKind::Fever } else { QaKind::HotpotQa }.name();
        let stem = format!("{task}-{:05}", t.question_idx.unwrap_or(position));
        let name = (1..).map(|i| if i == 1 { format!("{stem}.jsonl") } else { format!("{stem}-{i}.jsonl") });
        let name = name.into_iter().find(|n| names.insert(n.clone())).unwrap_or_default();
        imported.push(import_trajectory(t, position, source, out, &name)?);
    }
    let n = imported.len().max(1) as f64;
    Ok(ImportReport {
        sessions: imported.len(),
        em_log: imported.iter().map(|t| t.em_log).sum(),
        em: imported.iter().filter(|t| t.em).count(),
        f1_log: imported.iter().map(|t| t.f1_log).sum::<f64>() / n,
        f1: imported.iter().map(|t| t.f1).sum::<f64>() / n,
        differences: imported.iter().map(|t| t.differences.len()).sum(),
        trajectories: imported,
        warnings,
    })
}
