//! What a headless run reports: each problem's result, the run's summary, and the
//! progress line printed as problems end.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::overflows;
use crate::engine::health::ReplyHealth;
use crate::engine::methods::ReactShape;
use crate::engine::{AnswerKind, Engine, MethodKind, Outcome, Params};
use crate::llm::config::Price;
use crate::protocol::Purpose;
use crate::runtime::memory::MemoryUse;
use crate::session::Totals;
use crate::tasks::Problem;

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
    /// Of the completion tokens, those the model spent thinking (reasoning models).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub wall_ms: u64,
    /// Why the run stopped short, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The search ended on final states from none of which the task read an answer (its
    /// answer rule finds none in them): one of them, `#7: "...Answer: 18"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
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
    /// Samples lost by calls that got only some of theirs (see [`Totals::lost_samples`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_samples: u64,
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
    pub breaks: Vec<crate::runtime::run::BreakHit>,
    /// What the model got wrong, by kind of reply (derived from the replies, so a replay
    /// of the session gives the same figures).
    #[serde(default, skip_serializing_if = "ReplyHealth::is_empty")]
    pub reply_health: ReplyHealth,
    /// The calls sent, by the round trips behind them (for `bench`'s bound; not written).
    #[serde(skip)]
    pub rounds: Vec<crate::llm::limit::Round>,
    /// Why the run stopped issuing calls, typed (`stopped` is its text): what `serve`
    /// maps to an error code. Not written.
    #[serde(skip)]
    pub stop_reason: Option<crate::runtime::StopReason>,
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
    /// ReAct steps whose action was read from the model's first reply.
    #[serde(default)]
    pub read_first_try: usize,
    /// ReAct steps whose action was read only after a retry with a format reminder (chat
    /// prompts; the reference prompts have no retry).
    #[serde(default)]
    pub read_after_retry: usize,
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
        // A verdict a session did not record (before verdicts were inputs) scores as its
        // recorded outcome does.
        let f1 = engine.outcome().map_or(0.0, |o| {
            o.answer.as_deref().map_or(0.0, |a| core.score(a).unwrap_or(f64::from(u8::from(o.solved))))
        });
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
        let (mut read_first_try, mut read_after_retry) = (0, 0);
        for n in tree.nodes().filter(|n| n.step.as_ref().is_some_and(|s| s.action.is_some())) {
            if n.issues.iter().any(crate::engine::Issue::is_bad_call) || n.origin != crate::engine::Origin::Model {
                continue;
            }
            if n.issues.iter().any(crate::engine::Issue::is_retry) {
                read_after_retry += 1;
            } else {
                read_first_try += 1;
            }
        }
        Some(QaStats { f1, steps, bad_calls, read_first_try, read_after_retry })
    }
}

pub(super) fn is_zero(n: &u64) -> bool {
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
            reasoning_tokens: totals.reasoning_tokens,
            session: None,
            wall_ms,
            error: None,
            unread: None,
            provider_error: None,
            failed_calls: totals.failed_calls,
            lost_samples: totals.lost_samples,
            context_overflows: 0,
            cost_usd: None,
            stopped: None,
            qa: None,
            tool_calls: totals.tool_calls,
            answered_by: outcome.and_then(|o| o.answered_by),
            incomplete: false,
            facets: BTreeMap::new(),
            memory: None,
            stop_reason: None,
            metrics: BTreeMap::new(),
            breaks: Vec::new(),
            reply_health: ReplyHealth::default(),
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

    /// Note final states the task read no answer from (see [`ProblemResult::unread`]).
    pub fn with_unread(mut self, engine: &Engine) -> Self {
        self.unread = unread_finals(engine);
        self
    }

    /// Count what the model got wrong in the search (see [`ReplyHealth`]).
    pub fn with_health(mut self, engine: &Engine) -> Self {
        self.reply_health = ReplyHealth::of(engine);
        self
    }

    /// Add the question-answering scores of the run, if it is one.
    pub fn with_qa(mut self, engine: &Engine) -> Self {
        self.qa = QaStats::of(engine);
        self
    }
}

/// One of the outcome's final states, when the task read an answer from none of them:
/// `#7: "…the state's last line"`.
pub fn unread_finals(engine: &Engine) -> Option<String> {
    let outcome = engine.outcome()?;
    let tree = engine.tree();
    let finals: Vec<_> = outcome.finals.iter().filter(|&&f| tree.contains(f)).map(|&f| tree.node(f)).collect();
    if finals.is_empty() || outcome.answer.is_some() || finals.iter().any(|n| n.answer.is_some()) {
        return None;
    }
    let first = finals[0];
    let last = first.path.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
    Some(format!("{}: {:?}", first.id, crate::safe_text::clip(last, 80)))
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
    /// Of the completion tokens, those the model spent thinking (reasoning models).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    pub wall_ms: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_calls: u64,
    /// Calls whose prompt did not fit the model's context window (see `ProblemResult`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub context_overflows: u64,
    /// Samples lost by calls that got only some of theirs (see `ProblemResult`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_samples: u64,
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
    /// ReAct: steps whose action was read from the first reply, and after a retry with a
    /// format reminder (chat prompts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_first_try: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_after_retry: Option<usize>,
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
    /// What the model got wrong over the problems, by kind of reply (their sum).
    #[serde(default, skip_serializing_if = "ReplyHealth::is_empty")]
    pub reply_health: ReplyHealth,
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
            reasoning_tokens: results.iter().map(|r| r.reasoning_tokens).sum(),
            wall_ms,
            failed_calls: results.iter().map(|r| r.failed_calls).sum(),
            lost_samples: results.iter().map(|r| r.lost_samples).sum(),
            context_overflows: results.iter().map(|r| r.context_overflows).sum(),
            provider_errors: results.iter().filter(|r| r.provider_error.is_some()).count(),
            cost_usd: None,
            stopped: results.iter().find_map(|r| r.stopped.clone()),
            incomplete: results.iter().filter(|r| r.incomplete).count(),
            em: None,
            f1: None,
            mean_steps: None,
            bad_calls: None,
            read_first_try: None,
            read_after_retry: None,
            tool_calls: None,
            tokens: None,
            answered_by: None,
            by: by_facet(results),
            memory: memory_over(results),
            metrics: mean_metrics(results),
            reply_health: ReplyHealth::sum(results.iter().map(|r| &r.reply_health)),
        }
        .with_qa(params.method, results)
        .with_parts(params.method, results)
    }

    fn with_qa(mut self, method: MethodKind, results: &[ProblemResult]) -> Self {
        let qa: Vec<QaStats> = results.iter().filter_map(|r| r.qa).collect();
        if qa.is_empty() {
            return self;
        }
        let n = results.len().max(1) as f64;
        self.em = Some(self.solved);
        self.f1 = Some(qa.iter().map(|q| q.f1).sum::<f64>() / n);
        self.tokens = Some(self.prompt_tokens + self.completion_tokens);
        // Steps, unreadable actions and tool calls are a ReAct part's figures: io, cot and
        // the tree searches on a QA task have none to report.
        if method.info().react == ReactShape::None {
            return self;
        }
        self.mean_steps = Some(qa.iter().map(|q| q.steps).sum::<usize>() as f64 / n);
        self.bad_calls = Some(qa.iter().map(|q| q.bad_calls).sum());
        self.read_first_try = Some(qa.iter().map(|q| q.read_first_try).sum());
        self.read_after_retry = Some(qa.iter().map(|q| q.read_after_retry).sum());
        self.tool_calls = Some(results.iter().map(|r| r.tool_calls).sum());
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
