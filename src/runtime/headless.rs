//! Headless runs: one problem at a time through the same engine and driver the UI
//! uses, recording a session per problem if asked, with a summary at the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use tokio::sync::{watch, Semaphore};

use super::memory::{MemoryUse, RunMemory};
use super::{Driver, Run, Signal, StopPolicy, StopReason};
use crate::engine::methods::ReactShape;
use crate::engine::{AnswerKind, CallErrorKind, Command, Engine, Input, MethodKind, Outcome, Params, Purpose};
use crate::llm::cache::{CacheMode, CachePolicy, ResponseCache};
use crate::llm::config::{ConfigError, Price, ProviderArgs};
use crate::llm::limit::Limit;
use crate::llm::sim::SimConfig;
use crate::llm::Provider;
use crate::session::{Header, MemorySnapshot, SessionWriter, Totals, FORMAT, VERSION};
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
    /// Of those tokens, the ones estimated because the server did not report them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub estimated_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub wall_ms: u64,
    /// Why the run stopped short, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The problem ended without an answer because calls to the provider failed (the
    /// first failure): a failure of the provider, not of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_error: Option<String>,
    /// Calls that failed (each recorded on its node; the search went on without them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_calls: u64,
    /// Of those, calls whose prompt did not fit the model's context window (each stopped its branch).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_overflows: u64,
    /// What the calls cost, if the model's price is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The whole run stopped issuing calls here (a budget used up, the key refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Question answering: token F1, ReAct steps and bad calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<QaStats>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tool_calls: u64,
    /// Hybrids: the part that gave the answer (react or cot-sc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<MethodKind>,
    /// Replays: the recording ends before the run did (no end line: killed, crashed,
    /// disk full), so the result is what the run had reached, not a verdict.
    #[serde(default, skip_serializing_if = "is_false")]
    pub incomplete: bool,
    /// What the problem is (math tasks: `subject` and `level`, or `category`; `id` in
    /// its data set), for accuracy broken down by each (`Summary::by`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facets: BTreeMap<String, String>,
    /// The named memory the problem read and updated (methods that keep one): its
    /// entries when the problem began and after it was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryUse>,
    /// The task's own figures of the search (`Task::metrics`; crosswords: letter, word,
    /// game and their oracles), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// Where each breakpoint (`--break`) would have fired: input, step, node, breakpoint, reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breaks: Vec<super::run::BreakHit>,
    /// The calls sent, by the round trips behind them (for `bench`'s bound; not written).
    #[serde(skip)]
    pub rounds: Vec<crate::llm::limit::Round>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Per-question scores of question answering (ReAct or CoT on QA tasks).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QaStats {
    pub f1: f64,
    /// ReAct steps taken (0 for methods without steps).
    pub steps: usize,
    /// Replies without a readable action.
    pub bad_calls: usize,
}

impl QaStats {
    /// For QA tasks (those with tools) and ReAct runs; `None` otherwise.
    pub fn of(engine: &Engine) -> Option<QaStats> {
        let core = &engine.core;
        let shape = core.params.method.info().react;
        let react = shape == ReactShape::Whole;
        let hybrid = shape == ReactShape::Part;
        let qa = matches!(core.task.info().answer_kind, AnswerKind::ShortText | AnswerKind::Label);
        if !react && !hybrid && !qa {
            return None;
        }
        let f1 = engine.outcome().and_then(|o| o.answer.as_deref()).map_or(0.0, |a| core.task.score(&core.x, a));
        let tree = engine.tree();
        let steps = if react {
            // The steps of the trajectory that answered (edits leave other branches beside it).
            let answered = engine.outcome().and_then(|o| o.finals.first()).map(|&f| tree.node(f).depth);
            answered.unwrap_or_else(|| tree.nodes().map(|n| n.depth).max().unwrap_or(0))
        } else if hybrid {
            // CoT-SC samples are depth-1 nodes too: count the answered ReAct calls instead.
            core.calls.values().filter(|c| c.request.purpose == Purpose::Act && c.reply.is_some()).count()
        } else {
            0
        };
        let bad_calls = tree.nodes().filter(|n| n.issues.iter().any(crate::engine::Issue::is_bad_call)).count();
        Some(QaStats { f1, steps, bad_calls })
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
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
            estimated_tokens: totals.estimated_tokens,
            session: None,
            wall_ms,
            error: None,
            provider_error: None,
            failed_calls: totals.failed_calls,
            context_overflows: 0,
            cost_usd: None,
            stopped: None,
            qa: None,
            tool_calls: totals.tool_calls,
            answered_by: outcome.and_then(|o| o.answered_by),
            incomplete: false,
            facets: BTreeMap::new(),
            memory: None,
            metrics: BTreeMap::new(),
            breaks: Vec::new(),
            rounds: Vec::new(),
        }
    }

    /// Add the task's own figures of the finished search (`Task::metrics`), if it has any.
    pub fn with_metrics(mut self, engine: &Engine) -> Self {
        if let Some(outcome) = engine.outcome() {
            self.metrics = engine.core.task.metrics(&engine.core.x, engine.tree(), outcome);
            // `-0.0` (an empty f64 sum is -0.0) reads as a sign where there is none.
            for value in self.metrics.values_mut() {
                if *value == 0.0 {
                    *value = 0.0;
                }
            }
        }
        self
    }

    /// Add what the problem is (its task's facets, or its session header's).
    pub fn with_facets(mut self, facets: BTreeMap<String, String>) -> Self {
        self.facets = facets;
        self
    }

    /// Set the cost from the model's price, if known.
    pub fn priced(mut self, price: Option<&Price>) -> Self {
        self.cost_usd = price.map(|p| p.cost(self.prompt_tokens, self.completion_tokens));
        self
    }

    /// Count the calls whose prompt did not fit the model's context window.
    pub fn with_overflows(mut self, engine: &Engine) -> Self {
        self.context_overflows = overflows(engine).len() as u64;
        self
    }

    /// Add the question-answering scores of the run, if it is one.
    pub fn with_qa(mut self, engine: &Engine) -> Self {
        self.qa = QaStats::of(engine);
        self
    }
}

/// The one JSON object `run --json` and `replay --headless --json` print.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub task: String,
    pub method: String,
    /// ReAct: how actions were written, `text` or `native` (tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_mode: Option<String>,
    pub provider: String,
    pub model: String,
    pub simulated: bool,
    /// The method's parameters (as in a session header), so a summary says what ran.
    #[serde(default)]
    pub params: Params,
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
    /// Of those tokens, the ones estimated because the server did not report them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub estimated_tokens: u64,
    pub wall_ms: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_calls: u64,
    /// Calls whose prompt did not fit the model's context window (see `ProblemResult`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_overflows: u64,
    /// Problems that ended without an answer because provider calls failed (counted
    /// in `n`, not solved, but not model failures either).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub provider_errors: usize,
    /// US dollars by the price table, when the model's price is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Why the run stopped before every problem was done (budget, refused key, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Replays: sessions whose recording ends before the run did (counted in `n`, not solved).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub incomplete: usize,
    /// Question answering: exact matches (the same as `solved`), mean token F1,
    /// mean ReAct steps, bad calls, tool calls and all tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub em: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_steps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bad_calls: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Hybrids: how many answers each part gave, e.g. `{"cot-sc": 4, "react": 11}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<BTreeMap<String, usize>>,
    /// Accuracy by each facet of the problems (subject, level, category), e.g.
    /// `{"level": {"1": {"n": 6, "solved": 5, "accuracy": 0.83}}}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by: BTreeMap<String, BTreeMap<String, FacetStats>>,
    /// The named memory of the run: entries before its first problem and after its last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryUse>,
    /// The mean of each task figure over the problems that have it (`ProblemResult::metrics`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
}

/// The mean of each metric over the results that have it.
pub fn mean_metrics(results: &[ProblemResult]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for r in results {
        for (k, v) in &r.metrics {
            let e = sums.entry(k.clone()).or_insert((0.0, 0));
            e.0 += v;
            e.1 += 1;
        }
    }
    sums.into_iter().map(|(k, (sum, n))| (k, sum / n as f64)).collect()
}

/// How the problems of one facet value did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FacetStats {
    pub n: usize,
    pub solved: usize,
    pub accuracy: f64,
}

/// The memory over a run's problems: the first one's `entries_before`, the last one's
/// `entries_after`, merged if any problem's save was.
fn memory_over(results: &[ProblemResult]) -> Option<MemoryUse> {
    let first = results.iter().find_map(|r| r.memory.as_ref())?;
    let last = results.iter().rev().find_map(|r| r.memory.as_ref())?;
    Some(MemoryUse {
        name: first.name.clone(),
        entries_before: first.entries_before,
        entries_after: last.entries_after,
        merged: results.iter().filter_map(|r| r.memory.as_ref()).any(|m| m.merged),
        notes: Vec::new(),
    })
}

/// Accuracy by each facet the results carry (not by a problem's `id`, which is its own group).
pub fn by_facet(results: &[ProblemResult]) -> BTreeMap<String, BTreeMap<String, FacetStats>> {
    let mut by: BTreeMap<String, BTreeMap<String, FacetStats>> = BTreeMap::new();
    for r in results {
        for (facet, value) in r.facets.iter().filter(|(k, _)| k.as_str() != crate::tasks::math::ID_FACET) {
            let stats = by.entry(facet.clone()).or_default().entry(value.clone()).or_insert(FacetStats {
                n: 0,
                solved: 0,
                accuracy: 0.0,
            });
            stats.n += 1;
            stats.solved += r.correct as usize;
            stats.accuracy = stats.solved as f64 / stats.n as f64;
        }
    }
    by
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
            tool_mode: params.word("tool_mode").filter(|_| params.method.has_react_steps()).map(str::to_string),
            provider: provider.to_string(),
            model: model.to_string(),
            simulated,
            params: params.clone(),
            n,
            solved,
            solved_any: results.iter().filter(|r| r.correct_any).count(),
            success_rate: if n == 0 { 0.0 } else { solved as f64 / n as f64 },
            mean_sample_accuracy: (!accs.is_empty()).then(|| accs.iter().sum::<f64>() / accs.len() as f64),
            llm_calls: results.iter().map(|r| r.calls).sum(),
            cache_hits: results.iter().map(|r| r.cache_hits).sum(),
            prompt_tokens: results.iter().map(|r| r.prompt_tokens).sum(),
            completion_tokens: results.iter().map(|r| r.completion_tokens).sum(),
            estimated_tokens: results.iter().map(|r| r.estimated_tokens).sum(),
            wall_ms,
            failed_calls: results.iter().map(|r| r.failed_calls).sum(),
            context_overflows: results.iter().map(|r| r.context_overflows).sum(),
            provider_errors: results.iter().filter(|r| r.provider_error.is_some()).count(),
            cost_usd: None,
            stopped: results.iter().find_map(|r| r.stopped.clone()),
            incomplete: results.iter().filter(|r| r.incomplete).count(),
            em: None,
            f1: None,
            mean_steps: None,
            bad_calls: None,
            tool_calls: None,
            tokens: None,
            answered_by: None,
            by: by_facet(results),
            memory: memory_over(results),
            metrics: mean_metrics(results),
        }
        .with_qa(results)
        .with_parts(params.method, results)
    }

    fn with_qa(mut self, results: &[ProblemResult]) -> Self {
        let qa: Vec<QaStats> = results.iter().filter_map(|r| r.qa).collect();
        if qa.is_empty() {
            return self;
        }
        let n = results.len().max(1) as f64;
        self.em = Some(self.solved);
        self.f1 = Some(qa.iter().map(|q| q.f1).sum::<f64>() / n);
        self.mean_steps = Some(qa.iter().map(|q| q.steps).sum::<usize>() as f64 / n);
        self.bad_calls = Some(qa.iter().map(|q| q.bad_calls).sum());
        self.tool_calls = Some(results.iter().map(|r| r.tool_calls).sum());
        self.tokens = Some(self.prompt_tokens + self.completion_tokens);
        self
    }

    /// Set the cost from the model's price, if known.
    pub fn priced(mut self, price: Option<&Price>) -> Self {
        self.cost_usd = price.map(|p| p.cost(self.prompt_tokens, self.completion_tokens));
        self
    }

    fn with_parts(mut self, method: MethodKind, results: &[ProblemResult]) -> Self {
        // A method with a ReAct part beside another says which part answered each problem.
        if method.info().react == ReactShape::Part {
            let mut parts = BTreeMap::new();
            for by in results.iter().filter_map(|r| r.answered_by) {
                *parts.entry(by.label().to_string()).or_insert(0) += 1;
            }
            self.answered_by = Some(parts);
        }
        self
    }

    /// The summary without the wall-clock time, for comparing runs.
    pub fn without_time(&self) -> Summary {
        Summary { wall_ms: 0, ..self.clone() }
    }
}

/// How far a headless run is, for its progress bar: problems done of all, and how
/// many of those are solved, counted from the same results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
    pub solved: usize,
}

impl Progress {
    pub fn new(total: usize) -> Self {
        Progress { done: 0, total, solved: 0 }
    }

    /// Count one finished problem.
    pub fn add(&mut self, r: &ProblemResult) {
        self.done += 1;
        self.solved += r.correct as usize;
    }

    /// E.g. `3/10 done, 2 solved`.
    pub fn line(&self) -> String {
        format!("{}/{} done, {} solved", self.done, self.total, self.solved)
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
    /// Cache, price and budgets.
    pub limits: RunLimits,
    /// `--provider replay`: tool calls are answered from the recording alone, with these
    /// observations by problem input (a problem without any has none to give).
    pub replay_tools: Option<std::collections::HashMap<String, Arc<crate::tools::recorded::RecordedTools>>>,
    /// The named memory the method reads and updates, if it keeps one (see
    /// [`super::memory::resolve`]): loaded before each problem, saved after it.
    pub memory: Option<RunMemory>,
}

/// Spending limits for a whole run; a run stops issuing calls when one is reached.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

impl Budget {
    /// Why `spent` is over budget, if it is.
    /// Tokens the server did not report are estimated from the text and count
    /// [`crate::session::ESTIMATE_MARGIN`] times here, so an under-estimate does not let a
    /// run spend past its budget (the message says how many were estimated).
    pub fn exceeded(&self, spent: &Totals, price: Option<&Price>) -> Option<String> {
        let tokens = spent.tokens_for_budget();
        let estimated = spent.estimated_tokens;
        let how = if estimated > 0 {
            format!(
                " ({estimated} of them estimated, as the server did not report them, and counted {} times)",
                crate::session::ESTIMATE_MARGIN
            )
        } else {
            String::new()
        };
        if let Some(max) = self.tokens.filter(|&m| tokens >= m) {
            return Some(format!("budget exceeded: {tokens} tokens counted{how}, --budget-tokens {max}"));
        }
        if let (Some(max), Some(p)) = (self.usd, price) {
            // The extra count of estimated tokens at the dearer of the two prices.
            let extra = (crate::session::ESTIMATE_MARGIN - 1) * estimated;
            let cost = p.cost(spent.prompt_tokens, spent.completion_tokens) + p.cost(extra, 0).max(p.cost(0, extra));
            if cost >= max {
                return Some(format!("budget exceeded: ${cost:.4} spent{how}, --budget-usd {max}"));
            }
        }
        None
    }
}

/// What a run may spend and where replies are kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLimits {
    pub budget: Budget,
    /// The model's price, for costs (US dollars per million tokens).
    pub price: Option<Price>,
    pub cache: CacheMode,
    /// Which call purposes share answers (default: value prompts, like the reference).
    pub cache_policy: CachePolicy,
    /// Directory of the disk cache (default: under the user cache directory).
    pub cache_dir: Option<PathBuf>,
    /// Breakpoints as written (`--break`, the config's `break`), already checked: headless
    /// runs note where each fires, the explorer pauses there.
    pub breakpoints: Vec<String>,
}

impl RunLimits {
    /// The limits `args` ask for, with `provider`'s price.
    pub fn from_args(args: &ProviderArgs, provider: &dyn Provider) -> Result<RunLimits, ConfigError> {
        let price = provider.price();
        if let Some(b) = args.budget_usd {
            if !(b.is_finite() && b > 0.0) {
                return Err(ConfigError::Invalid(format!("--budget-usd must be a positive amount, not {b}")));
            }
            if let Some(why) = unmeasured_money(provider, price.is_some()) {
                return Err(ConfigError::Invalid(why));
            }
        }
        if args.budget_tokens == Some(0) {
            return Err(ConfigError::Invalid("--budget-tokens must be at least 1".into()));
        }
        Ok(RunLimits {
            budget: Budget { usd: args.budget_usd, tokens: args.budget_tokens },
            price,
            cache: args.cache,
            cache_policy: args.cache_purposes.clone().unwrap_or_default(),
            cache_dir: None,
            breakpoints: Vec::new(),
        })
    }

    /// The inputs a run opens with: its breakpoints (if any), then `then`.
    pub fn opening(&self, then: Input) -> Vec<Input> {
        let mut inputs = Vec::new();
        if !self.breakpoints.is_empty() {
            inputs.push(Input::command(Command::Breakpoints { set: self.breakpoints.clone() }));
        }
        inputs.push(then);
        inputs
    }
}

/// Why a money budget could not be measured on `provider`, if it could not: refused
/// rather than warned about, since a budget that never trips lets a run spend without
/// bound (a local proxy to a paid API is taken as free), and a warning scrolls away.
fn unmeasured_money(provider: &dyn Provider, priced: bool) -> Option<String> {
    let model = provider.model();
    let add =
        format!("add [prices.\"{model}\"] with input and output (US dollars per million tokens) to the config file");
    if provider.simulated() {
        return Some(
            "--budget-usd: the simulated model has no price, so a money budget would never stop the run; \
             use --budget-tokens N"
                .into(),
        );
    }
    if !priced {
        return Some(format!("--budget-usd needs the price of model {model:?}: {add}"));
    }
    if provider.price_assumed() {
        return Some(format!(
            "--budget-usd cannot be measured: {} is on this machine and nothing prices model {model:?}, so it \
             counts as free and the budget would never stop the run; if it passes calls on to a paid API, {add}",
            provider.describe()
        ));
    }
    None
}

/// Whether a `--record` path names one session file: it ends in `.jsonl` and is not an
/// existing directory.
pub fn is_session_file(record: &Path) -> bool {
    !record.is_dir() && record.extension().is_some_and(|e| e == "jsonl")
}

/// Where problem `p`'s session goes: into `record` if it is an existing directory, or
/// if the run has `many` problems and `record` does not end in `.jsonl`; else `record`
/// is the session file itself.
pub fn session_path(record: &Path, task: &str, problem: &Problem, many: bool) -> PathBuf {
    if record.is_dir() || (many && !is_session_file(record)) {
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
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: setup.task.name().to_string(),
        input: problem.input.clone(),
        index: problem.index,
        params: setup.params.clone(),
        provider: setup.provider.name().to_string(),
        model: setup.provider.model().to_string(),
        simulated: setup.provider.simulated(),
        sim: setup.sim.clone(),
        price: setup.limits.price,
        source: None,
        parent: None,
        note: None,
        gold: setup.task.gold(&problem.input),
        actions: setup.task.action_rules(),
        facets: setup.task.problem_facets(problem),
        memory: None,
        unjudged: false,
    }
}

/// Drive a run until its engine finishes or stalls (nothing outstanding), after
/// feeding `first`. A stop (budget, fatal error, recording failure) halts the driver:
/// calls not yet sent are dropped, calls already sent land and are recorded.
pub async fn drive(run: &mut Run, driver: &mut Driver, first: Vec<Input>) {
    let (_keep, mut never) = Interrupts::channel();
    drive_until(run, driver, first, &mut never).await;
}

/// The signals a headless run has received: the first one stops the run, a second
/// one stops waiting for the calls already sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interrupts {
    pub first: Option<Signal>,
    pub count: u32,
}

impl Interrupts {
    /// A channel to send signals on (a test, or [`listen_for_signals`]) and its receiver.
    pub fn channel() -> (watch::Sender<Interrupts>, watch::Receiver<Interrupts>) {
        watch::channel(Interrupts::default())
    }

    /// Note one more signal.
    pub fn add(&mut self, signal: Signal) {
        self.first.get_or_insert(signal);
        self.count += 1;
    }
}

/// Catch SIGINT, SIGTERM and SIGHUP from now on (they no longer end the program at
/// once) and report them on the returned channel. They are heard on a thread of their
/// own whatever the run's workers are doing; a second signal ends the program within
/// [`super::signals::HARD_EXIT_AFTER`] (see [`super::signals`]).
pub fn listen_for_signals() -> std::io::Result<watch::Receiver<Interrupts>> {
    super::signals::listen(&[Signal::INT, Signal::TERM, Signal::HUP], super::signals::flush_stdout)
}

/// How long the calls in flight at the first signal may take to land (what they cost
/// is then counted) before they are abandoned and the run ends.
pub const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// [`drive`], stopping on a signal: the first one stops issuing calls (the session
/// gets a `stopped` record), abandons the tool calls in flight (they cost nothing, and a
/// tool computing could hold the end up to its time limit) and lets the model calls
/// already sent land for up to [`SIGNAL_GRACE`], so what they cost is counted; after
/// that, or at a second signal, it stops waiting for them. Returns how many model calls
/// in flight were abandoned that way.
pub async fn drive_until(
    run: &mut Run,
    driver: &mut Driver,
    first: Vec<Input>,
    interrupts: &mut watch::Receiver<Interrupts>,
) -> usize {
    drive_watching(run, driver, first, interrupts, |_| {}).await
}

/// [`drive_until`], showing each model reply or tool observation to `seen` before the run takes it.
async fn drive_watching(
    run: &mut Run,
    driver: &mut Driver,
    first: Vec<Input>,
    interrupts: &mut watch::Receiver<Interrupts>,
    mut seen: impl FnMut(&Input),
) -> usize {
    for input in first {
        let fed = run.feed(input, None);
        driver.apply(&fed);
    }
    let mut listening = true;
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        let now = *interrupts.borrow_and_update();
        if let Some(signal) = now.first {
            if now.count > 1 {
                return driver.outstanding();
            }
            if !matches!(run.stopped(), Some(StopReason::Interrupted(_))) {
                let fed = run.interrupt(StopReason::Interrupted(signal));
                // Halt even if a budget had stopped the run already: nothing more is sent.
                driver.halt();
                driver.apply(&fed);
                driver.abandon_tools();
                grace = Some(Box::pin(tokio::time::sleep(SIGNAL_GRACE)));
            }
        }
        tokio::select! {
            changed = interrupts.changed(), if listening => listening = changed.is_ok(),
            () = async { if let Some(g) = grace.as_mut() { g.await } }, if grace.is_some() => {
                return driver.outstanding();
            }
            next = driver.next_input() => match next {
                Some((input, request)) => {
                    seen(&input);
                    let fed = run.feed(input, request.as_ref());
                    driver.apply(&fed);
                }
                None => return 0,
            },
        }
    }
}

/// The response cache `limits` ask for, and a note if the disk cache could not be had.
pub fn open_cache(limits: &RunLimits) -> (ResponseCache, Option<String>) {
    let policy = limits.cache_policy.clone();
    let (cache, note) = match limits.cache {
        CacheMode::Off => (ResponseCache::off(), None),
        CacheMode::Memory => (ResponseCache::new(), None),
        CacheMode::Disk => {
            let dir = limits.cache_dir.clone().or_else(crate::llm::cache::default_disk_dir);
            match dir.as_deref().map(ResponseCache::with_disk) {
                Some(Ok(c)) => (c, None),
                Some(Err(e)) => (
                    ResponseCache::new(),
                    Some(format!("the disk cache is unavailable ({e}); replies are kept in memory only")),
                ),
                None => {
                    (ResponseCache::new(), Some("no user cache directory; replies are kept in memory only".to_string()))
                }
            }
        }
    };
    (cache.with_policy(policy), note)
}

/// Run every problem and return their results in order (see [`run_headless`]). The
/// cache is shared as [`run_headless`] says; a run whose budget is used up, or whose
/// server refuses the key or the model, stops issuing calls and starts no more problems.
pub async fn run_problems(
    setup: &RunSetup,
    problems: &[Problem],
    progress: impl FnMut(&ProblemResult),
) -> Vec<ProblemResult> {
    run_problems_under(setup, problems, Arc::new(Semaphore::new(setup.concurrency.max(1))), progress).await
}

/// [`run_problems`], its calls under `limit` instead of a limit of its own, so several
/// runs side by side share one concurrency limit (`bench compare`).
pub async fn run_problems_under(
    setup: &RunSetup,
    problems: &[Problem],
    limit: Arc<Semaphore>,
    mut progress: impl FnMut(&ProblemResult),
) -> Vec<ProblemResult> {
    let (_keep, never) = Interrupts::channel();
    run_headless_under(setup, problems, limit, never, |r| {
        progress(r);
        Ok(())
    })
    .await
    .results
}

/// What a headless run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Headless {
    /// One per problem started, in order (the last one may have been stopped short).
    pub results: Vec<ProblemResult>,
    /// Why the run stopped before every problem was done, if it did.
    pub stopped: Option<String>,
    /// The signal that stopped it, if one did.
    pub signal: Option<Signal>,
    /// Model calls in flight abandoned at a signal (what they cost is not counted).
    pub abandoned: usize,
}

/// Whether the problems of a run go side by side. They go one after another when a
/// problem must begin from what the one before it left: a named memory (problem k+1
/// starts from problem k's lessons), a budget (the run stops at the same call whatever
/// the timing), or a provider that answers by occurrence across problems (replay).
pub fn side_by_side(setup: &RunSetup, problems: usize) -> bool {
    problems > 1
        && setup.memory.is_none()
        && setup.limits.budget == Budget::default()
        && setup.provider.problems_side_by_side()
}

/// A problem set up to run: its engine and recording, driver and clock.
struct Started {
    run: Run,
    driver: Driver,
    path: Option<PathBuf>,
    /// A note for the problem's result (the disk cache could not be had).
    note: Option<String>,
    clock: Instant,
}

/// What one problem came to.
struct Finished {
    result: ProblemResult,
    totals: Totals,
    stopped: Option<StopReason>,
    abandoned: usize,
    memory_failed: Option<String>,
}

/// Set `problem` up: engine, session file (created now, so a run that cannot record
/// stops before spending), driver with its tools, and its memory if it keeps one.
#[allow(clippy::too_many_arguments)]
fn start_problem(
    setup: &RunSetup,
    problem: &Problem,
    position: usize,
    many: bool,
    limit: &Limit,
    cache: Arc<Mutex<ResponseCache>>,
    memory: Option<crate::memory::Memory>,
    spent: Totals,
    note: Option<String>,
) -> Result<Started, String> {
    let clock = Instant::now();
    let task: Arc<dyn crate::engine::Task> = Arc::clone(&setup.task) as Arc<dyn crate::engine::Task>;
    let engine = Engine::new(task, &problem.input, setup.params.clone());
    let mut header = header_for(setup, problem);
    if let (Some(m), Some(memory)) = (&setup.memory, &memory) {
        header.memory = Some(MemorySnapshot::new(m.name.clone(), memory.clone()));
    }
    let mut driver = Driver::new(Arc::clone(&setup.provider), limit.clone(), cache).for_problem(position);
    if let Some(tools) = setup.task.tools() {
        let runner = super::tools::ToolRunner::new(tools);
        let runner = match &setup.replay_tools {
            Some(recorded) => runner.recorded_only(recorded.get(&problem.input).cloned()),
            None => runner,
        };
        driver = driver.with_tools(runner);
    }
    let path = setup.record.as_ref().map(|r| session_path(r, setup.task.name(), problem, many));
    let writer = match &path {
        // Running on unrecorded would spend without the record asked for.
        Some(p) => Some(
            SessionWriter::create(p, &header)
                .map_err(|e| format!("cannot record the session ({e}); give --record a path you can write to"))?,
        ),
        None => None,
    };
    let price = setup.limits.price;
    let policy = StopPolicy { budget: setup.limits.budget, price, spent_before: spent, stop_on_fatal: true };
    let mut run = Run::new(engine, writer, policy);
    if let (Some(m), Some(memory)) = (&setup.memory, memory) {
        run.keep_memory(m.clone(), memory);
    }
    Ok(Started { run, driver, path, note, clock })
}

/// Drive a started problem to its end (or a stop), close its session, save its memory,
/// and make its result. `seen` is shown every reply as it is taken.
async fn finish_problem(
    setup: &RunSetup,
    problem: &Problem,
    started: Started,
    interrupts: &mut watch::Receiver<Interrupts>,
    seen: impl FnMut(&Input),
) -> Finished {
    let Started { mut run, mut driver, path, note, clock } = started;
    let mut error = note;
    let first = setup.limits.opening(Input::command(Command::Run));
    let abandoned = drive_watching(&mut run, &mut driver, first, interrupts, seen).await;
    let stopped = run.stopped().cloned();
    let totals = run.totals;
    let wall_ms = clock.elapsed().as_millis() as u64;
    if let Err(e) = run.end(wall_ms) {
        error = Some(e.to_string());
    }
    let session = path.map(|p| p.display().to_string());
    // Saved before the next problem starts, so it begins from what this one learnt.
    let mut memory_failed = None;
    let memory_use = match run.take_memory_save() {
        Some(pending) => {
            let unsaved = pending.unsaved_use();
            match pending.save().await {
                Ok(used) => Some(used),
                Err(e) => {
                    memory_failed = Some(e.to_string());
                    Some(unsaved)
                }
            }
        }
        None => None,
    };
    let breaks = run.break_hits().to_vec();
    let (engine, _, _) = run.into_parts();
    let mut result = ProblemResult::new(problem, engine.outcome(), totals, wall_ms)
        .priced(setup.limits.price.as_ref())
        .with_qa(&engine)
        .with_facets(setup.task.problem_facets(problem))
        .with_metrics(&engine)
        .with_overflows(&engine);
    result.memory = memory_use;
    result.breaks = breaks;
    result.rounds = driver.rounds().to_vec();
    let first_failure = engine.core.calls.values().find_map(|c| match &c.reply {
        Some(Err(e)) if e.kind != CallErrorKind::NotSent => Some(e.message.clone()),
        _ => None,
    });
    let overflows = overflows(&engine);
    if let Some(first) = overflows.first() {
        // Said once, and instead of "no answer: calls failed" below: the prompt is at fault, not the server.
        let note = overflow_note(overflows.len(), first);
        error = Some(match error {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    // Failures ended the problem when it has no answer and either no call succeeded or
    // the search never got past its root (a failed first proposal leaves nothing to expand).
    let answered = engine.outcome().is_some_and(|o| o.answer.is_some());
    let stuck_at_root = engine.tree().nodes().count() <= 1;
    let all_failed = totals.failed_calls == totals.llm_calls;
    if !answered && totals.failed_calls > 0 && (all_failed || stuck_at_root) {
        if let Some(f) = &first_failure {
            result.provider_error = Some(f.clone());
            if error.is_none() && stopped.is_none() {
                error = Some(format!(
                    "no answer: {} of {} calls to {} failed; first: {f}",
                    totals.failed_calls,
                    totals.llm_calls,
                    setup.provider.describe()
                ));
            }
        }
    }
    if engine.outcome().is_none() && error.is_none() {
        error = Some(match &stopped {
            Some(reason) => format!("stopped: {reason}"),
            None => {
                let failure = engine.core.calls.values().find_map(|c| match &c.reply {
                    Some(Err(e)) => Some(e.to_string()),
                    _ => None,
                });
                match failure {
                    Some(f) => format!("the search stopped before finishing; first failed call: {f}"),
                    None => "the search stopped before finishing (no states left to expand)".into(),
                }
            }
        });
    }
    if abandoned > 0 {
        let note = format!("{abandoned} calls in flight abandoned at the signal: what they cost is not counted");
        error = Some(match error {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    if let Some(failed) = &memory_failed {
        error = Some(match error {
            Some(e) => format!("{e}; {failed}"),
            None => failed.clone(),
        });
    }
    result.session = session;
    result.error = error;
    result.stopped = stopped.as_ref().map(|r| r.to_string());
    Finished { result, totals, stopped, abandoned, memory_failed }
}

/// The messages of the calls whose prompt did not fit the model's context window.
fn overflows(engine: &Engine) -> Vec<String> {
    let overflowed = |c: &Arc<crate::engine::CallRecord>| match &c.reply {
        Some(Err(e)) if e.kind == CallErrorKind::ContextOverflow => Some(e.message.clone()),
        _ => None,
    };
    engine.core.calls.values().filter_map(overflowed).collect()
}

/// The one line a problem's result says about its context overflows (`n` of them, the first saying `first`).
fn overflow_note(n: usize, first: &str) -> String {
    let (what, branches) = if n == 1 { ("1 prompt", "its branch") } else { ("prompts", "their branches") };
    let what = if n == 1 { what.to_string() } else { format!("{n} {what}") };
    format!(
        "{what} did not fit the model's context window, so {branches} stopped there ({first}); give the model a \
         larger context (llama.cpp: --n_ctx 4096 or more; Ollama: num_ctx) or take fewer steps"
    )
}

impl Headless {
    /// Report a finished problem (as it ends) and note why the run must start no more
    /// problems, if it must (the first reason is kept). Returns whether it must.
    fn report(&mut self, finished: Finished, progress: &mut impl FnMut(&ProblemResult) -> Result<(), String>) -> bool {
        let Finished { result, stopped, abandoned, memory_failed, .. } = finished;
        self.abandoned += abandoned;
        let reported = progress(&result);
        self.results.push(result);
        if let Some(StopReason::Interrupted(signal)) = &stopped {
            self.signal.get_or_insert(*signal);
        }
        // The next problem would start after a stop, from a memory that lost this one's
        // lessons, or with nowhere to write its result.
        let reason = stopped.map(|r| r.to_string()).or(memory_failed).or(reported.err());
        match reason {
            Some(reason) => {
                self.stopped.get_or_insert(reason);
                true
            }
            None => false,
        }
    }

    /// Stop before starting another problem: a signal, or a reason of the run's own.
    fn refuse(&mut self, reason: String, signal: Option<Signal>) {
        if let Some(signal) = signal {
            self.signal.get_or_insert(signal);
        }
        self.stopped.get_or_insert(reason);
    }
}

/// Whether `input` is a model reply that came back well (the server takes our calls).
fn answered_well(input: &Input) -> bool {
    matches!(input, Input::LlmReply(r) if r.result.is_ok())
}

/// Run every problem until a signal arrives on `interrupts`, and report each result
/// to `progress` as soon as that problem ends (problems side by side end in any order;
/// each result carries its problem's `index`). [`Headless::results`] are in problem order.
///
/// Problems go side by side (see [`side_by_side`]), up to `--concurrency` of them,
/// their calls all under the one concurrency limit; the first problem goes alone until
/// a call of it comes back well, so a refused key or an unreachable server costs one
/// call. Each problem's calls see the replies cached before the run began (`--cache
/// disk`) and the problem's own, never those of the problems beside it, so results and
/// sessions are the same whatever the concurrency and timing. Runs that go one problem
/// after another (memory, budgets, replay) share one cache across their problems.
///
/// A signal stops the problems in flight (each session gets a `stopped` record and its
/// end line; each is reported) and starts no more. A stop in one problem (a refused
/// key, a session that cannot be written, a memory that cannot be saved, an error from
/// `progress`) starts no more problems; those already running finish and are reported.
pub async fn run_headless(
    setup: &RunSetup,
    problems: &[Problem],
    interrupts: watch::Receiver<Interrupts>,
    progress: impl FnMut(&ProblemResult) -> Result<(), String>,
) -> Headless {
    run_headless_under(setup, problems, Arc::new(Semaphore::new(setup.concurrency.max(1))), interrupts, progress).await
}

/// [`run_headless`], its calls under `limit` (shared with other runs) instead of a
/// limit of its own.
pub async fn run_headless_under(
    setup: &RunSetup,
    problems: &[Problem],
    limit: Arc<Semaphore>,
    mut interrupts: watch::Receiver<Interrupts>,
    mut progress: impl FnMut(&ProblemResult) -> Result<(), String>,
) -> Headless {
    // First come first served: measured against a priority limit that sends calls of the
    // problems fewest round trips in first (llm::limit), it is as fast where a server
    // honours `n` and faster where samples fan out (bench --http-only, README).
    let limit = Limit::Fifo(limit);
    let (mut cache, cache_note) = open_cache(&setup.limits);
    let many = problems.len() > 1;
    let mut done = Headless { results: Vec::with_capacity(problems.len()), ..Headless::default() };
    if side_by_side(setup, problems.len()) {
        side_by_side_run(setup, problems, &limit, &mut cache, cache_note, &mut interrupts, &mut progress, &mut done)
            .await;
    } else {
        let cache = Arc::new(Mutex::new(cache));
        let mut note = cache_note;
        let mut spent = Totals::default();
        for (position, problem) in problems.iter().enumerate() {
            if let Some(signal) = interrupts.borrow().first {
                done.refuse(StopReason::Interrupted(signal).to_string(), Some(signal));
                break;
            }
            // The named memory as problem k-1 left it: loaded before anything is spent.
            let memory = match &setup.memory {
                Some(m) => match super::memory::load(m).await {
                    Ok(memory) => Some(memory),
                    Err(e) => {
                        done.refuse(e.to_string(), None);
                        break;
                    }
                },
                None => None,
            };
            let started = match start_problem(
                setup,
                problem,
                position,
                many,
                &limit,
                Arc::clone(&cache),
                memory,
                spent,
                note.take(),
            ) {
                Ok(started) => started,
                Err(reason) => {
                    done.refuse(reason, None);
                    break;
                }
            };
            let finished = finish_problem(setup, problem, started, &mut interrupts, |_| {}).await;
            spent.add(&finished.totals);
            if done.report(finished, &mut progress) {
                break;
            }
        }
    }
    if done.signal.is_none() {
        // A signal after the last problem: nothing was cut short, but the caller was asked to stop.
        done.signal = interrupts.borrow().first;
    }
    done
}

#[allow(clippy::too_many_arguments)]
async fn side_by_side_run(
    setup: &RunSetup,
    problems: &[Problem],
    limit: &Limit,
    cache: &mut ResponseCache,
    mut note: Option<String>,
    interrupts: &mut watch::Receiver<Interrupts>,
    progress: &mut impl FnMut(&ProblemResult) -> Result<(), String>,
    done: &mut Headless,
) {
    use futures::stream::{FuturesUnordered, StreamExt};
    let window = setup.concurrency.max(1);
    // Set once any call of the run has come back well.
    let (well_tx, mut well) = watch::channel(false);
    let mut running = FuturesUnordered::new();
    // The position of each reported result: reported as each problem ends, put back in
    // problem order at the end.
    let mut order: Vec<usize> = Vec::with_capacity(problems.len());
    let (mut launched, mut blocked) = (0usize, false);
    loop {
        while !blocked && launched < problems.len() && running.len() < window && (launched == 0 || *well.borrow()) {
            if let Some(signal) = interrupts.borrow().first {
                done.refuse(StopReason::Interrupted(signal).to_string(), Some(signal));
                blocked = true;
                break;
            }
            let problem = &problems[launched];
            let scoped = Arc::new(Mutex::new(cache.scope()));
            match start_problem(setup, problem, launched, true, limit, scoped, None, Totals::default(), note.take()) {
                Ok(started) => {
                    let (index, mut signals, well_tx) = (launched, interrupts.clone(), well_tx.clone());
                    running.push(async move {
                        let seen = |input: &Input| {
                            if answered_well(input) && !*well_tx.borrow() {
                                let _ = well_tx.send(true);
                            }
                        };
                        (index, finish_problem(setup, problem, started, &mut signals, seen).await)
                    });
                    launched += 1;
                }
                Err(reason) => {
                    done.refuse(reason, None);
                    blocked = true;
                }
            }
        }
        if running.is_empty() {
            break;
        }
        let waiting_for_first = !*well.borrow();
        tokio::select! {
            Some((index, one)) = running.next() => {
                // Reported (and written to `--out`) as soon as it ends, whatever is still
                // running before it: a kill then loses no finished problem.
                order.push(index);
                blocked |= done.report(one, progress);
                // The first problem ended without a good reply: let the next one try alone.
                if running.is_empty() && !*well.borrow() {
                    let _ = well_tx.send(true);
                }
            }
            _ = well.changed(), if waiting_for_first => {}
        }
    }
    let mut by_position: Vec<(usize, ProblemResult)> = order.into_iter().zip(done.results.drain(..)).collect();
    by_position.sort_by_key(|(position, _)| *position);
    done.results = by_position.into_iter().map(|(_, r)| r).collect();
}
