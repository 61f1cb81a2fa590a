//! The simulated model (`--provider sim`, the offline default), sans-IO: what the tasks
//! that play it and the `sim` provider that answers with it both speak. It is not a
//! language model and says so (`simulated: true` on every reply, "simulated" in the UI
//! and summaries). It answers the tasks' requests from the task's own logic, reading the
//! structured context each request carries, never the prompt text, with seeded, tunable
//! mistakes so searches behave like they do with a real model.
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
//! approach has a typical, learnable mistake), and so on. The [`Simulator`] finds a
//! request's player through [`Players`], the registry this module defines and the tasks
//! implement (`tasks::SimPlayers`), so neither this module nor the provider names a task.
//! This module holds what the players share: the rates, the seeded randomness, reading a
//! request's typed context ([`context`]); the provider (`llm::sim`) adds only latency.

#[cfg(test)]
pub(crate) mod context_testing;
pub mod thinking;

use serde::{Deserialize, Serialize};

use crate::engine::rng::{stable_hash, SplitMix64};
use crate::protocol::{
    estimate_prompt_tokens, estimate_tokens, CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Thinking,
    ThinkingKind, ToolCallOut, ToolRequest, Usage,
};

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
    /// Thinking mode (`--sim-thinking`): each reply carries a short simulated thinking
    /// trace apart from its answer (see [`thinking`]); the answers are the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub thinking: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { seed: 0, noise: 1.0, rates: SimRates::default(), latency_ms: 0, thinking: false }
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

/// Where the simulated model finds the player of a request: the tasks register their
/// players (`tasks::TaskEntry::sim`) and implement this over their registry
/// (`tasks::SimPlayers`), so the simulator names no task.
pub trait Players: Send + Sync {
    /// The player of the task `request` is for (as its context says), if the task has one.
    fn player(&self, request: &LlmRequest) -> Option<Play>;

    /// A ReAct reply in the tasks' text format, read: its thought and its action, for
    /// answering a request that offers native tools with a tool call.
    fn read_step(&self, text: &str) -> (Option<String>, Option<ToolRequest>);
}

/// The simulated model: its settings and the registry it finds the tasks' players in.
pub struct Simulator {
    pub config: SimConfig,
    players: &'static dyn Players,
}

impl Simulator {
    pub fn new(config: SimConfig, players: &'static dyn Players) -> Self {
        Simulator { config, players }
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
            let Some(play) = self.players.player(request) else {
                return Err(CallError {
                    kind: CallErrorKind::Sim,
                    message: format!("the sim provider does not know the task {task:?}"),
                });
            };
            let text = play(&self.config, request, &mut rng)?;
            let mut completion = if request.tools.is_empty() {
                Completion::text(text, Some("stop".into()))
            } else {
                as_tool_call(self.players.read_step(&text), text, request)
            };
            if self.config.thinking {
                let trace = thinking::trace(request, &completion.text, &mut rng);
                completion.thinking.push(Thinking::new(ThinkingKind::Simulated, trace));
            }
            completions.push(completion);
        }
        let completion_tokens = completions.iter().map(completion_tokens).sum();
        let reasoning_tokens = completions.iter().map(|c| estimate_tokens(&c.thinking_text())).sum();
        Ok(LlmResponse {
            completions,
            usage: Usage {
                prompt_tokens: estimate_prompt_tokens(request),
                completion_tokens,
                estimated: true,
                reasoning_tokens,
            },
            latency_ms: self.config.latency_ms,
            model: SIM_MODEL.into(),
            simulated: true,
            cached: false,
            lost: None,
        })
    }
}

/// A ReAct reply written in the text format (`text`, read as `step`), as a model with
/// native tool calling would give it: the thought as text and the action as a tool call
/// whose argument is named as the offered tool's schema says. The same seeded choices as
/// in text mode.
fn as_tool_call(step: (Option<String>, Option<ToolRequest>), text: String, request: &LlmRequest) -> Completion {
    let (thought, Some(action)) = step else {
        return Completion::text(text, Some("stop".into()));
    };
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
        text: thought.unwrap_or_default().into(),
        finish_reason: Some("tool_calls".into()),
        tool_calls: vec![ToolCallOut {
            // One id a step, as a server gives each call its own (the results go back by id).
            id: Some(format!("sim-call-{}", request.context["step"].as_u64().unwrap_or(0))),
            name: action.name,
            arguments: serde_json::Value::Object(arguments),
        }],
        thinking: Vec::new(),
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
    estimate_tokens(&c.text) + calls + estimate_tokens(&c.thinking_text())
}
