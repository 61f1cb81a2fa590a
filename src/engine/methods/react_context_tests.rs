//! ReAct fits its prompt to the model's context window (issue 27): the oldest
//! observations are trimmed, with a marker the model sees and a log line, and a step
//! that cannot fit even so is not sent.

use std::sync::Arc;

use super::react::{trim_observations, TRIMMED};
use crate::engine::testkit::*;
use crate::engine::{Effect, Engine, Input, Params, ToolReply};
use crate::protocol::{ToolRequest, ToolResult};
use crate::tasks::qa_demo::QaDemo;
use crate::tasks::TaskSource;

fn engine(window: Option<u64>) -> Engine {
    let task = Arc::new(QaDemo::new(None).unwrap());
    let x = task.problem(0).unwrap().input;
    let mut e = Engine::new(task, &x, Params::new(super::react::KIND).with("max_steps", 6));
    e.set_context_window(window);
    e
}

fn tool_calls(effects: &[Effect]) -> Vec<(u64, ToolRequest)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallTool { call, tool, .. } => Some((*call, tool.clone())),
            _ => None,
        })
        .collect()
}

fn logs(effects: &[Effect]) -> Vec<String> {
    events(effects)
        .into_iter()
        .filter_map(|ev| match ev {
            crate::engine::Event::Log { text } => Some(text),
            _ => None,
        })
        .collect()
}

fn observe(call: u64, text: &str) -> Input {
    Input::ToolReply(ToolReply { call, result: ToolResult { text: text.into(), ok: true, latency_ms: 0 } })
}

/// Two steps with long observations, then the request for step 3.
fn third_request(e: &mut Engine) -> Vec<Effect> {
    let long = "The Corve River rises in the Harl Hills. ".repeat(60);
    let mut fx = e.handle(run_cmd());
    for step in 1..=2 {
        fx = e.handle(reply(calls(&fx)[0].0, &[&format!("Thought {step}: Look.\nAction {step}: Search[Corve River]")]));
        fx = e.handle(observe(tool_calls(&fx)[0].0, &long));
    }
    fx
}

#[test]
fn observations_are_trimmed_by_label_keeping_the_rest() {
    let t = "Thought 1: a\nAction 1: Search[x]\nObservation 1: long\nmore of it\nThought 2: b\nAction 2: Lookup[y]\n\
             Observation 2: second\nThought 3: c\n";
    assert_eq!(
        trim_observations(t, 1),
        format!("Thought 1: a\nAction 1: Search[x]\nObservation 1: {TRIMMED}\nThought 2: b\nAction 2: Lookup[y]\nObservation 2: second\nThought 3: c\n")
    );
    assert_eq!(trim_observations(t, 0), t);
    assert!(trim_observations(t, 2).contains(&format!("Observation 2: {TRIMMED}\n")));
}

#[test]
fn a_trajectory_past_the_window_is_sent_with_its_oldest_observations_trimmed() {
    // Without a window the prompt is as long as it gets.
    let mut free = engine(None);
    let fx = third_request(&mut free);
    let whole = calls(&fx)[0].1.messages[0].content.clone();
    assert!(!whole.contains(TRIMMED));
    // With one that holds the prompt with one long observation but not two.
    let need = crate::protocol::estimate_tokens(&whole);
    let mut e = engine(Some(need - 200));
    let fx = third_request(&mut e);
    let c = calls(&fx);
    assert_eq!(c.len(), 1, "step 3 is asked");
    let prompt = &c[0].1.messages[0].content;
    assert!(prompt.contains(&format!("Observation 1: {TRIMMED}")), "{prompt}");
    assert!(!prompt.contains(&format!("Observation 2: {TRIMMED}")), "the latest is kept");
    assert!(prompt.contains("Observation 2: The Corve River rises"));
    let log = logs(&fx);
    assert!(log.iter().any(|l| l.contains("step 3: the oldest observation was trimmed")), "{log:?}");
    // The tree keeps the observation whole: only the prompt is trimmed.
    assert!(e.tree().nodes().any(|n| n.path.contains("Observation 1: The Corve River rises")));
}

#[test]
fn a_step_that_cannot_fit_even_trimmed_is_not_sent_and_the_episode_says_why() {
    // A window that holds step 1 and 2 (a short first observation) but not the long
    // second one, however the first is trimmed.
    let mut probe = engine(None);
    let fx = probe.handle(run_cmd());
    let first = &calls(&fx)[0].1;
    let window = crate::protocol::estimate_prompt_tokens(first) + u64::from(first.max_tokens.unwrap_or(256)) + 300;
    let mut e = engine(Some(window));
    let mut fx = e.handle(run_cmd());
    for (step, seen) in [(1, "Short.".to_string()), (2, "The Corve River rises in the Harl Hills. ".repeat(80))] {
        fx = e.handle(reply(calls(&fx)[0].0, &[&format!("Thought {step}: Look.\nAction {step}: Search[Corve River]")]));
        fx = e.handle(observe(tool_calls(&fx)[0].0, &seen));
    }
    assert!(calls(&fx).is_empty(), "no request that cannot fit is sent");
    assert!(e.is_finished());
    let log = logs(&fx);
    let said = log
        .iter()
        .find(|l| l.contains(&format!("do not fit the model's context window ({window} tokens)")))
        .unwrap_or_else(|| panic!("{log:?}"));
    assert!(said.starts_with("step 3: "), "{said}");
    assert!(said.contains("even with the older observations trimmed") && said.contains("the episode stops here"));
}
