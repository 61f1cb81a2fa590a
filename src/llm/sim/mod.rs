//! `sim`: a simulated model, the offline default. It is not a language model and
//! says so (`simulated: true` on every reply, "simulated" in the UI and summaries).
//! It answers the built-in tasks' requests from the task's own logic, reading the
//! structured context each request carries, never the prompt text, with seeded,
//! tunable mistakes so searches behave like they do with a real model.
//!
//! Error model (each rate is multiplied by `--sim-noise`, default 1.0; 0 is a
//! perfect model):
//! * `slip`     — a proposed step has wrong arithmetic (the search should reject it);
//! * `miss`     — a proposal lists no step that keeps the puzzle solvable;
//! * `misjudge` — an evaluator sample names the wrong class (sure/likely/impossible);
//! * `answer`   — the final expression written from correct steps is wrong;
//! * `io`       — a direct (io) answer is wrong;
//! * `cot`      — a chain of thought goes wrong at its first step.
//!
//! Randomness comes from the seed and the request itself (messages, nonce, sample
//! index), never from call order, so concurrency does not change any answer.
//!
//! Each task's player lives beside the task and is registered with it
//! (`tasks::TaskEntry::sim`): `src/tasks/game24/sim.rs`, `src/tasks/math/sim/` (with
//! ReTreVal's play on the math demo sets in `src/tasks/math/sim/retreval/`, where each
//! approach has a typical, learnable mistake), and so on. This module holds what they
//! share: the rates, the seeded randomness, reading a request's typed context
//! ([`context`]) and the provider.

#[cfg(test)]
pub(crate) mod context_testing;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{BoxFuture, CallOptions, Provider};
use crate::engine::rng::{stable_hash, SplitMix64};
use crate::protocol::{
    estimate_prompt_tokens, estimate_tokens, CallError, CallErrorKind, Completion, LlmRequest, LlmResponse,
    ToolCallOut, Usage,
};
use crate::tasks::react_text::parse_step;

pub const SIM_MODEL: &str = "sim-1 (simulated)";

/// Base error rates at `--sim-noise 1`, calibrated so the Tree-of-Thoughts paper's
/// Game-of-24 pattern appears (see README).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimRates {
    pub slip: f64,
    pub miss: f64,
    pub misjudge: f64,
    pub answer: f64,
    pub io: f64,
    pub cot: f64,
}

impl Default for SimRates {
    fn default() -> Self {
        SimRates { slip: 0.08, miss: 0.05, misjudge: 0.33, answer: 0.05, io: 0.93, cot: 0.95 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub seed: u64,
    /// One overall dial on every error rate.
    pub noise: f64,
    pub rates: SimRates,
    pub latency_ms: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { seed: 0, noise: 1.0, rates: SimRates::default(), latency_ms: 0 }
    }
}

impl SimConfig {
    /// The effective rate of one kind of mistake.
    pub fn rate(&self, base: f64) -> f64 {
        (base * self.noise).clamp(0.0, 1.0)
    }
}

/// How the simulated model answers one sample of a request of a task: each task
/// registers its own player with the task (`tasks::TaskEntry::sim`).
pub type Play = fn(&SimConfig, &LlmRequest, &mut SplitMix64) -> Result<String, CallError>;

/// The simulated player registered with the task named `task` (or an alias), if any.
pub fn player(task: &str) -> Option<Play> {
    crate::tasks::find(task).and_then(|entry| entry.sim)
}

/// Whether the simulated model can answer requests of the task named `task`.
pub fn plays(task: &str) -> bool {
    player(task).is_some()
}

/// Whether the simulated model can play a run of `params` on `task`: `Err` is the one
/// line that says why not, for refusing the run before it starts.
pub fn check_plays(task: &dyn crate::engine::Task, params: &crate::engine::Params) -> Result<(), String> {
    if let Some(verdict) = task.sim_plays(params) {
        return verdict;
    }
    if plays(task.name()) {
        return Ok(());
    }
    let played: Vec<&str> = crate::tasks::names().into_iter().filter(|name| plays(name)).collect();
    Err(format!(
        "sim cannot play {}: it has no simulated player (sim plays {}); run it with a model (--provider ...)",
        task.name(),
        crate::tasks::and_list(&played)
    ))
}

pub struct SimProvider {
    pub config: SimConfig,
}

impl SimProvider {
    pub fn new(config: SimConfig) -> Self {
        SimProvider { config }
    }

    /// The answer without latency (used by the async path and by synchronous tools).
    pub fn answer(&self, request: &LlmRequest) -> Result<LlmResponse, CallError> {
        self.answer_from(request, 0)
    }

    /// The answer with samples `first..first + n` of the request's draws (a server
    /// asked with a `seed` answers from there, so each seed gives other samples).
    pub fn answer_from(&self, request: &LlmRequest, first: u64) -> Result<LlmResponse, CallError> {
        let task = request.context.get("task").and_then(|t| t.as_str()).unwrap_or("");
        let identity = serde_json::to_string(&request.messages).unwrap_or_default();
        let base = [self.config.seed, stable_hash(identity.as_bytes()), request.nonce as u64];
        let mut completions = Vec::with_capacity(request.n as usize);
        for i in 0..request.n.max(1) {
            let sample = first.wrapping_add(i as u64).wrapping_add(1);
            let mut rng = SplitMix64::from_parts(&[base[0], base[1], base[2], sample]);
            // A task file's prompts carry what its player reads (`tasks::file::sim`).
            let file_task = request.context.get(crate::tasks::file::CONTEXT_KEY).is_some();
            let play = if file_task { Some(crate::tasks::file::sim::play as Play) } else { player(task) };
            let Some(play) = play else {
                return Err(CallError {
                    kind: CallErrorKind::Sim,
                    message: format!("the sim provider does not know the task {task:?}"),
                });
            };
            let text = play(&self.config, request, &mut rng)?;
            let completion = if request.tools.is_empty() {
                Completion::text(text, Some("stop".into()))
            } else {
                as_tool_call(&text, request)
            };
            completions.push(completion);
        }
        let completion_tokens = completions.iter().map(completion_tokens).sum();
        Ok(LlmResponse {
            completions,
            usage: Usage { prompt_tokens: estimate_prompt_tokens(request), completion_tokens, estimated: true },
            latency_ms: self.config.latency_ms,
            model: SIM_MODEL.into(),
            simulated: true,
            cached: false,
        })
    }
}

/// A ReAct reply written in the text format, as a model with native tool calling would
/// give it: the thought as text and the action as a tool call whose argument is named
/// as the offered tool's schema says. The same seeded choices as in text mode.
fn as_tool_call(text: &str, request: &LlmRequest) -> Completion {
    let parsed = parse_step(text, 0);
    let Some(mut action) = parsed.action else {
        return Completion::text(text, Some("stop".into()));
    };
    // An answer with unbalanced brackets (an interval such as `[2,5)`) runs to the last `]`.
    if action.name.eq_ignore_ascii_case("finish") {
        if let Some(arg) = crate::tasks::math::answer::finish_arg(text) {
            action.arg = arg;
        }
    }
    let arg_name = request
        .tools
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case(&action.name))
        .and_then(|t| t.arg_name())
        .unwrap_or("input")
        .to_string();
    let tool = request.tools.iter().find(|t| t.name.eq_ignore_ascii_case(&action.name));
    let several = tool.is_some_and(|t| t.parameters["properties"].as_object().is_some_and(|p| p.len() > 1));
    let mut arguments = serde_json::Map::new();
    match serde_json::from_str::<serde_json::Value>(&action.arg) {
        // A tool of several arguments (an MCP server's) is called with the JSON object written.
        Ok(serde_json::Value::Object(object)) if several => arguments = object,
        _ => {
            arguments.insert(arg_name, serde_json::Value::String(action.arg));
        }
    }
    Completion {
        text: parsed.thought.unwrap_or_default().into(),
        finish_reason: Some("tool_calls".into()),
        tool_calls: vec![ToolCallOut {
            id: Some("sim-call-1".into()),
            name: action.name,
            arguments: serde_json::Value::Object(arguments),
        }],
    }
}

/// A request's context read as a player's typed context `T` (a struct whose fields all
/// have defaults, so a key a prompt leaves out is the default): or the one line that
/// says which field has the wrong shape — `crosswords request context: field "puzzle":
/// invalid type: string "3", expected u64`. Never a silent default for a field that is
/// there but unreadable.
pub fn context<T: serde::de::DeserializeOwned>(task: &str, request: &LlmRequest) -> Result<T, CallError> {
    let error =
        |message: String| CallError { kind: CallErrorKind::Sim, message: format!("{task} request context{message}") };
    let Some(fields) = request.context.as_object() else {
        return Err(error(format!(" is not an object of fields: {}", request.context)));
    };
    T::deserialize(&request.context).map_err(|e| {
        // serde names the type but not the key: find the field that alone fails.
        let field = fields.iter().find(|(key, value)| {
            let alone = serde_json::Value::Object(std::iter::once(((*key).clone(), (*value).clone())).collect());
            T::deserialize(&alone).is_err()
        });
        match field {
            Some((key, _)) => error(format!(": field {key:?}: {e}")),
            None => error(format!(": {e}")),
        }
    })
}

/// Estimated tokens of a reply: its text and its tool calls as JSON.
fn completion_tokens(c: &Completion) -> u64 {
    let calls = if c.tool_calls.is_empty() { 0 } else { estimate_tokens(&serde_json::json!(c.tool_calls).to_string()) };
    estimate_tokens(&c.text) + calls
}

impl Provider for SimProvider {
    fn name(&self) -> &str {
        "sim"
    }

    fn model(&self) -> &str {
        SIM_MODEL
    }

    fn simulated(&self) -> bool {
        true
    }

    /// Answers whole (no stream), the same whatever the occurrence.
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(async move {
            if self.config.latency_ms > 0 {
                tokio::time::sleep(Duration::from_millis(self.config.latency_ms)).await;
            }
            self.answer(request)
        })
    }
}
