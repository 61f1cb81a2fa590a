//! The simulated model on `qa-demo`. As a ReAct agent it follows the plan the
//! task's own data implies — search the first page, search the second, look up the
//! keyword, finish — with seeded mistakes (a search for the wrong entity, a lookup
//! that finds nothing) from which it recovers on later steps. Without tools (cot,
//! io) it can only guess from its "memory", and is usually wrong: on some questions
//! always with the same wrong entity (so CoT-SC agrees on it), on others wavering
//! between two (so CoT-SC's majority is weak and cot-sc-react backs off to ReAct).

use serde_json::Value;

use super::SimConfig;
use crate::engine::rng::{stable_hash, SplitMix64};
use crate::engine::{CallError, CallErrorKind, LlmRequest, Purpose};
use crate::tasks::react_text::parse_step;

/// Base rate of a wrong action in a ReAct step, and of a wrong CoT/IO answer.
const REACT_SLIP: f64 = 0.2;
const GUESS_WRONG: f64 = 0.75;

fn gold(request: &LlmRequest) -> Option<(Vec<String>, String, String)> {
    let g = request.context.get("gold")?;
    let hops: Vec<String> = g.get("hops")?.as_array()?.iter().filter_map(|h| h.as_str().map(str::to_string)).collect();
    let keyword = g.get("keyword")?.as_str()?.to_string();
    let answer = g.get("answer")?.as_str()?.to_string();
    Some((hops, keyword, answer))
}

/// The actions already taken in the trajectory, as (tool, arg) lowercased.
fn taken(trajectory: &str) -> Vec<(String, String)> {
    trajectory
        .lines()
        .filter(|l| l.to_lowercase().starts_with("action"))
        .filter_map(|l| parse_step(l, 0).action)
        .map(|a| (a.name.to_lowercase(), a.arg.to_lowercase()))
        .collect()
}

pub fn answer(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    let question = request.context.get("question").and_then(Value::as_str).unwrap_or("");
    match request.purpose {
        Purpose::Act => {
            let Some((hops, keyword, answer)) = gold(request) else {
                return Ok(format!(
                    "I do not know this question well; I will search for it.\nAction: Search[{question}]"
                ));
            };
            let trajectory = request.context.get("trajectory").and_then(Value::as_str).unwrap_or("");
            let step = request.context.get("step").and_then(Value::as_u64).unwrap_or(1);
            let done = taken(trajectory);
            let has = |tool: &str, arg: &str| done.iter().any(|(t, a)| t == tool && a == &arg.to_lowercase());
            let slip = rng.chance(cfg.rate(REACT_SLIP));
            let (first, second) = (hops.first().cloned().unwrap_or_default(), hops.get(1).cloned().unwrap_or_default());
            let text = if !has("search", &first) {
                if slip {
                    // A search for the wrong entity: a part of the name.
                    let wrong = first.split_whitespace().last().unwrap_or(&first).to_string();
                    format!("I should look up {wrong} first.\nAction {step}: Search[{wrong} (disambiguation)]")
                } else {
                    format!("I need to find {first} first.\nAction {step}: Search[{first}]")
                }
            } else if !has("search", &second) {
                format!(
                    "{first} leads to {second}. I need to know more about {second}.\nAction {step}: Search[{second}]"
                )
            } else if !has("lookup", &keyword) {
                if slip && !done.iter().any(|(t, _)| t == "lookup") {
                    format!("The first sentences do not answer it. I will look for details.\nAction {step}: Lookup[details]")
                } else {
                    format!("I will look up \"{keyword}\" on this page.\nAction {step}: Lookup[{keyword}]")
                }
            } else {
                format!("The observation answers the question: {answer}.\nAction {step}: Finish[{answer}]")
            };
            Ok(text)
        }
        Purpose::Cot | Purpose::Io => {
            let (right, distractors) = match gold_from_context(request) {
                Some(v) => v,
                None => (None, vec!["I am not sure".to_string()]),
            };
            let guess_wrong = rng.chance(cfg.rate(GUESS_WRONG));
            let answer = match right {
                Some(r) if !guess_wrong => r,
                // A second draw only on wavering questions: which samples are right stays the same.
                _ if distractors.len() > 1 && wavers(cfg, question) => {
                    distractors[rng.below(distractors.len())].clone()
                }
                _ => distractors[0].clone(),
            };
            Ok(format!("Thinking about what I remember of it.\nAnswer: {answer}"))
        }
        other => {
            Err(CallError { kind: CallErrorKind::Sim, message: format!("qa-demo has no {} requests", other.label()) })
        }
    }
}

/// The right answer and plausible wrong ones (the hops' names, the first hop's first), for tool-less answers.
fn gold_from_context(request: &LlmRequest) -> Option<(Option<String>, Vec<String>)> {
    let question = request.context.get("question").and_then(Value::as_str)?;
    let q = crate::tools::corpus::qa_demo_questions().ok()?.into_iter().find(|q| q.question == question)?;
    let mut distractors: Vec<String> = q.hops.iter().filter(|h| **h != q.answer).cloned().collect();
    if distractors.is_empty() {
        distractors.push("unknown".into());
    }
    Some((Some(q.answer), distractors))
}

/// Whether the sim's "memory" of a question wavers between wrong entities (about half
/// the questions, by seed) rather than settling on one.
fn wavers(cfg: &SimConfig, question: &str) -> bool {
    SplitMix64::from_parts(&[cfg.seed, stable_hash(question.as_bytes()), 0xa5e7]).chance(0.5)
}
