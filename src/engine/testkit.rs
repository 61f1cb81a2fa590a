//! Helpers for synchronous engine tests: scripted replies, no runtime, no sleeps.

use std::collections::VecDeque;
use std::sync::Arc;

use super::*;
use crate::engine::sim::{SimConfig, Simulator};
use crate::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, ToolCallOut, Usage};
use crate::tasks::game24::Game24;
use crate::tasks::SimPlayers;

pub fn params(method: MethodKind) -> Params {
    Params::new(method)
}

/// `method`'s parameters as a session header with these `fields` gives them (values of
/// the wrong type or out of range included: the method's read says so).
pub fn from_header(method: MethodKind, fields: &[(&str, serde_json::Value)]) -> Params {
    let mut object = serde_json::Map::new();
    object.insert("method".into(), method.label().into());
    for (k, v) in fields {
        object.insert(k.to_string(), v.clone());
    }
    serde_json::from_value(serde_json::Value::Object(object)).expect("a known method")
}

pub fn engine(x: &str, params: Params) -> Engine {
    Engine::new(Arc::new(Game24::builtin()), x, params)
}

pub fn reply(call: u64, texts: &[&str]) -> Input {
    Input::LlmReply(LlmReply {
        call,
        result: Ok(LlmResponse {
            completions: texts.iter().map(|t| Completion::text(*t, None)).collect(),
            usage: Usage::default(),
            latency_ms: 0,
            model: "test".into(),
            simulated: false,
            cached: false,
            lost: None,
        }),
    })
}

/// A reply of whole completions (with native tool calls, say).
pub fn reply_with(call: u64, completions: Vec<Completion>) -> Input {
    Input::LlmReply(LlmReply {
        call,
        result: Ok(LlmResponse {
            completions,
            usage: Usage::default(),
            latency_ms: 0,
            model: "test".into(),
            simulated: false,
            cached: false,
            lost: None,
        }),
    })
}

/// A native reply: `text` as the thought and these tool calls (name, JSON arguments).
pub fn native(call: u64, text: &str, tool_calls: &[(&str, serde_json::Value)]) -> Input {
    let tool_calls = tool_calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCallOut {
            id: Some(format!("call_{i}")),
            name: name.to_string(),
            arguments: arguments.clone(),
        })
        .collect();
    reply_with(call, vec![Completion { tool_calls, ..Completion::text(text, Some("tool_calls".into())) }])
}

pub fn failure(call: u64, message: &str) -> Input {
    Input::LlmReply(LlmReply {
        call,
        result: Err(CallError { kind: CallErrorKind::Other("test".into()), message: message.into() }),
    })
}

pub fn calls(effects: &[Effect]) -> Vec<(u64, LlmRequest)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallLlm { call, request } => Some((*call, request.clone())),
            _ => None,
        })
        .collect()
}

pub fn events(effects: &[Effect]) -> Vec<Event> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit { event } => Some(event.clone()),
            _ => None,
        })
        .collect()
}

pub fn cancelled(effects: &[Effect]) -> Vec<u64> {
    effects
        .iter()
        .flat_map(|e| match e {
            Effect::Cancel { calls } => calls.clone(),
            _ => vec![],
        })
        .collect()
}

/// Feed `first`, then answer every call in request order with `answer` until the
/// engine issues no more; returns every event.
pub fn run_sync(engine: &mut Engine, first: Input, answer: impl FnMut(&LlmRequest) -> Vec<String>) -> Vec<Event> {
    let no_checks = |r: &CheckRequest| -> Result<check::Verdict, String> { panic!("no check program expected: {r:?}") };
    run_sync_checked(engine, first, answer, no_checks)
}

/// [`run_sync`], with the task's check programs answered by `verdict` (in request order,
/// with the model calls).
pub fn run_sync_checked(
    engine: &mut Engine,
    first: Input,
    mut answer: impl FnMut(&LlmRequest) -> Vec<String>,
    mut verdict: impl FnMut(&CheckRequest) -> Result<check::Verdict, String>,
) -> Vec<Event> {
    let mut queue: VecDeque<Effect> = VecDeque::new();
    let mut all = Vec::new();
    let mut input = first;
    loop {
        let effects = engine.handle(input);
        all.extend(events(&effects));
        let gone = cancelled(&effects);
        queue.retain(|e| e.call().is_some_and(|c| !gone.contains(&c)));
        queue.extend(effects.into_iter().filter(|e| matches!(e, Effect::CallLlm { .. } | Effect::RunCheck { .. })));
        input = match queue.pop_front() {
            None => return all,
            Some(Effect::CallLlm { call, request }) => {
                let texts = answer(&request);
                let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
                reply(call, &texts)
            }
            Some(Effect::RunCheck { call, request }) => {
                Input::CheckReply(CheckReply { call, result: verdict(&request) })
            }
            Some(other) => unreachable!("only calls are queued: {other:?}"),
        };
    }
}

/// A responder backed by the simulated model.
pub fn sim(noise: f64, seed: u64) -> impl FnMut(&LlmRequest) -> Vec<String> {
    let provider = Simulator::new(SimConfig { seed, noise, ..SimConfig::default() }, &SimPlayers);
    move |request| match provider.answer(request) {
        Ok(r) => r.completions.into_iter().map(|c| c.text.to_string()).collect(),
        Err(e) => vec![format!("error: {e}")],
    }
}

pub fn run_cmd() -> Input {
    Input::command(Command::Run)
}

pub fn cmd(command: Command) -> Input {
    Input::command(command)
}
