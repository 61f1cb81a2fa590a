//! Headless runs: one problem at a time through the same engine and driver the UI
//! uses, recording a session per problem if asked, with a summary at the end.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use super::Driver;
use crate::engine::{Command, Effect, Engine, Event, Input, Outcome, Params};
use crate::llm::cache::ResponseCache;
use crate::llm::sim::SimConfig;
use crate::llm::Provider;
use crate::session::{Header, SessionError, SessionWriter, Totals, FORMAT, VERSION};
use crate::tasks::{Problem, TaskSource};

/// The result of one problem, as written to `--out` (one JSON line each).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProblemResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    pub input: String,
    pub answer: Option<String>,
    /// The top-ranked answer is correct.
    pub correct: bool,
    /// Some kept final answer is correct.
    pub correct_any: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_accuracy: Option<f64>,
    pub calls: u64,
    pub cache_hits: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub wall_ms: u64,
    /// Why the run stopped short, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ProblemResult {
    pub fn new(problem: &Problem, outcome: Option<&Outcome>, totals: Totals, wall_ms: u64) -> Self {
        ProblemResult {
            index: problem.index,
            input: problem.input.clone(),
            answer: outcome.and_then(|o| o.answer.clone()),
            correct: outcome.is_some_and(|o| o.solved),
            correct_any: outcome.is_some_and(|o| o.solved_any),
            sample_accuracy: outcome.and_then(|o| o.sample_accuracy),
            calls: totals.llm_calls,
            cache_hits: totals.cache_hits,
            prompt_tokens: totals.prompt_tokens,
            completion_tokens: totals.completion_tokens,
            session: None,
            wall_ms,
            error: None,
        }
    }
}

/// The one JSON object `run --json` and `replay --headless --json` print.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub task: String,
    pub method: String,
    pub provider: String,
    pub model: String,
    pub simulated: bool,
    pub n: usize,
    pub solved: usize,
    pub solved_any: usize,
    pub success_rate: f64,
    /// For io / cot / cot-sc: mean share of correct samples per problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_sample_accuracy: Option<f64>,
    pub llm_calls: u64,
    pub cache_hits: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub wall_ms: u64,
}

impl Summary {
    pub fn from_results(
        task: &str,
        params: &Params,
        provider: &str,
        model: &str,
        simulated: bool,
        results: &[ProblemResult],
        wall_ms: u64,
    ) -> Self {
        let n = results.len();
        let solved = results.iter().filter(|r| r.correct).count();
        let accs: Vec<f64> = results.iter().filter_map(|r| r.sample_accuracy).collect();
        Summary {
            task: task.to_string(),
            method: params.method.label().to_string(),
            provider: provider.to_string(),
            model: model.to_string(),
            simulated,
            n,
            solved,
            solved_any: results.iter().filter(|r| r.correct_any).count(),
            success_rate: if n == 0 { 0.0 } else { solved as f64 / n as f64 },
            mean_sample_accuracy: (!accs.is_empty()).then(|| accs.iter().sum::<f64>() / accs.len() as f64),
            llm_calls: results.iter().map(|r| r.calls).sum(),
            cache_hits: results.iter().map(|r| r.cache_hits).sum(),
            prompt_tokens: results.iter().map(|r| r.prompt_tokens).sum(),
            completion_tokens: results.iter().map(|r| r.completion_tokens).sum(),
            wall_ms,
        }
    }

    /// The summary without the wall-clock time, for comparing runs.
    pub fn without_time(&self) -> Summary {
        Summary { wall_ms: 0, ..self.clone() }
    }
}

/// What a headless run needs besides the problems.
pub struct RunSetup {
    pub task: Arc<dyn TaskSource>,
    pub params: Params,
    pub provider: Arc<dyn Provider>,
    pub sim: Option<SimConfig>,
    pub concurrency: usize,
    /// A file for one problem, a directory for several.
    pub record: Option<PathBuf>,
}

/// Where problem `p`'s session goes.
pub fn session_path(record: &Path, task: &str, problem: &Problem, many: bool) -> PathBuf {
    if many {
        let name = match problem.index {
            Some(i) => format!("{task}-{i:04}.jsonl"),
            None => format!("{task}-{}.jsonl", problem.input.replace(' ', "_")),
        };
        record.join(name)
    } else {
        record.to_path_buf()
    }
}

pub fn header_for(setup: &RunSetup, problem: &Problem) -> Header {
    Header {
        format: FORMAT.into(),
        version: VERSION,
        task: setup.task.name().to_string(),
        input: problem.input.clone(),
        index: problem.index,
        params: setup.params.clone(),
        provider: setup.provider.name().to_string(),
        model: setup.provider.model().to_string(),
        simulated: setup.provider.simulated(),
        sim: setup.sim.clone(),
        source: None,
        parent: None,
        note: None,
    }
}

fn events_of(effects: &[Effect]) -> Vec<Event> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit { event } => Some(event.clone()),
            _ => None,
        })
        .collect()
}

/// Drive one engine until it finishes (or stalls), recording every input.
pub async fn drive(
    engine: &mut Engine,
    driver: &mut Driver,
    mut writer: Option<&mut SessionWriter>,
    first: Vec<Input>,
) -> Result<Totals, SessionError> {
    let mut totals = Totals::default();
    for input in first {
        let effects = engine.handle(input.clone());
        if let Some(w) = writer.as_deref_mut() {
            w.input(&input, None, &events_of(&effects))?;
        }
        driver.execute(&effects);
    }
    while let Some((reply, request)) = driver.next_reply().await {
        let input = Input::LlmReply(reply);
        totals.count(&input);
        let effects = engine.handle(input.clone());
        if let Some(w) = writer.as_deref_mut() {
            w.input(&input, Some(&request), &events_of(&effects))?;
        }
        driver.execute(&effects);
    }
    Ok(totals)
}

/// Run every problem, one after another (calls within a problem run concurrently).
/// The cache is shared across problems, like the reference implementation's.
pub async fn run_problems(
    setup: &RunSetup,
    problems: &[Problem],
    mut progress: impl FnMut(&ProblemResult),
) -> Vec<ProblemResult> {
    let limit = Arc::new(Semaphore::new(setup.concurrency.max(1)));
    let cache = Arc::new(Mutex::new(ResponseCache::new()));
    let many = problems.len() > 1;
    let mut results = Vec::with_capacity(problems.len());
    for problem in problems {
        let started = Instant::now();
        let task: Arc<dyn crate::engine::Task> = Arc::clone(&setup.task) as Arc<dyn crate::engine::Task>;
        let mut engine = Engine::new(task, &problem.input, setup.params.clone());
        let mut driver = Driver::new(Arc::clone(&setup.provider), Arc::clone(&limit), Arc::clone(&cache));
        let path = setup.record.as_ref().map(|r| session_path(r, setup.task.name(), problem, many));
        let mut error = None;
        let mut writer = match &path {
            Some(p) => match SessionWriter::create(p, &header_for(setup, problem)) {
                Ok(w) => Some(w),
                Err(e) => {
                    error = Some(e.to_string());
                    None
                }
            },
            None => None,
        };
        let totals = match drive(&mut engine, &mut driver, writer.as_mut(), vec![Input::command(Command::Run)]).await {
            Ok(t) => t,
            Err(e) => {
                error = Some(e.to_string());
                Totals::default()
            }
        };
        let wall_ms = started.elapsed().as_millis() as u64;
        if let Some(w) = writer.as_mut() {
            if let Err(e) = w.end(totals, wall_ms) {
                error = Some(e.to_string());
            }
        }
        let mut result = ProblemResult::new(problem, engine.outcome(), totals, wall_ms);
        if engine.outcome().is_none() && error.is_none() {
            error = Some("the search stopped before finishing (no states left to expand)".into());
        }
        result.session = writer.as_ref().map(|w| w.path().display().to_string());
        result.error = error;
        progress(&result);
        results.push(result);
    }
    results
}
