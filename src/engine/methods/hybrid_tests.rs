//! The ReAct paper's hybrids, driven synchronously with scripted replies on qa-demo.

use std::sync::Arc;

use crate::engine::testkit::*;
use crate::engine::*;
use crate::protocol::{Purpose, ToolResult};
use crate::tasks::qa_demo::QaDemo;
use crate::tasks::TaskSource;

/// Question 0: "Which river flows through the city where the composer Ilse Varga was born?"
const RIGHT: &str = "Tessel River";

fn qa_engine(params: Params) -> Engine {
    let task = Arc::new(QaDemo::new(None).unwrap());
    let x = task.problem(0).unwrap().input;
    Engine::new(task, &x, params)
}

fn hybrid(method: MethodKind, max_steps: usize, samples: u32) -> Params {
    Params::new(method).with("max_steps", max_steps).with("samples", samples)
}

fn tool_calls(effects: &[Effect]) -> Vec<u64> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::CallTool { call, .. } => Some(*call),
            _ => None,
        })
        .collect()
}

fn observe(call: u64, text: &str) -> Input {
    Input::ToolReply(ToolReply { call, result: ToolResult { text: text.into(), ok: true, latency_ms: 0 } })
}

fn logs(effects: &[Effect]) -> Vec<String> {
    events(effects)
        .into_iter()
        .filter_map(|e| match e {
            Event::Log { text } => Some(text),
            _ => None,
        })
        .collect()
}

fn answers(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|a| format!("Thinking about what I remember of it.\nAnswer: {a}")).collect()
}

fn reply_all(call: u64, texts: &[String]) -> Input {
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    reply(call, &texts)
}

/// One ReAct step: answer the Act call `call` with `action`, then its tool with `observation`.
fn react_step(e: &mut Engine, call: u64, action: &str, observation: &str) -> Vec<Effect> {
    let fx = e.handle(reply(call, &[action]));
    let tools = tool_calls(&fx);
    assert_eq!(tools.len(), 1, "one tool call per step: {fx:?}");
    e.handle(observe(tools[0], observation))
}

#[test]
fn react_cot_sc_that_finishes_in_react_never_samples() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::REACT_COT_SC, 7, 5));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1.purpose, Purpose::Act, "ReAct runs first");
    let fx = react_step(&mut e, c[0].0, "Action 1: Search[Ilse Varga]", "Ilse Varga was born in Marrowick.");
    let c = calls(&fx);
    let fx = react_step(&mut e, c[0].0, &format!("Action 2: Finish[{RIGHT}]"), "Episode finished");
    assert!(calls(&fx).is_empty(), "no CoT-SC call after ReAct answered");
    let o = e.outcome().expect("finished");
    assert!(o.solved);
    assert_eq!(o.answer.as_deref(), Some(RIGHT));
    assert_eq!(o.answered_by, Some(crate::engine::methods::react::KIND));
    assert_eq!(o.sample_accuracy, None);
    assert!(e.core.calls.values().all(|c| c.request.purpose == Purpose::Act));
}

#[test]
fn react_cot_sc_falls_back_to_the_majority_after_max_steps() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::REACT_COT_SC, 2, 5));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    let fx = react_step(&mut e, c[0].0, "Action 1: Search[Ilse Varga]", "Ilse Varga was born in Marrowick.");
    let c = calls(&fx);
    let fx = react_step(&mut e, c[0].0, "Action 2: Search[Marrowick]", "Marrowick is a city on the Tessel River.");
    assert!(e.outcome().is_none(), "no answer yet: CoT-SC takes over");
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1.purpose, Purpose::Cot);
    assert_eq!(c[0].1.n, 5, "--samples gives CoT-SC's n");
    assert_eq!(e.core.calls[&c[0].0].node, e.tree().root(), "samples hang under the root next to the ReAct steps");
    let log = logs(&fx);
    assert!(log.iter().any(|l| l.contains("no answer within 2 steps") && l.contains("CoT-SC")), "{log:?}");
    let fx = e.handle(reply_all(c[0].0, &answers(&[RIGHT, "Marrowick", RIGHT, "Ilse Varga", RIGHT])));
    assert!(calls(&fx).is_empty());
    let o = e.outcome().expect("finished");
    assert!(o.solved, "{o:?}");
    assert_eq!(o.answer.as_deref(), Some(RIGHT));
    assert_eq!(o.answered_by, Some(crate::engine::methods::cot_sc::KIND));
    assert_eq!(o.sample_accuracy, Some(0.6));
    assert_eq!(e.tree().node(e.tree().root()).children.len(), 1 + 5, "the ReAct chain and the five samples");
}

#[test]
fn cot_sc_react_keeps_a_strong_majority() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::COT_SC_REACT, 7, 5));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1.purpose, Purpose::Cot, "CoT-SC runs first");
    // 3 of 5 ≥ 5/2: kept, even though it is wrong.
    let fx = e.handle(reply_all(c[0].0, &answers(&["Marrowick", RIGHT, "Marrowick", "Marrowick", RIGHT])));
    assert!(calls(&fx).is_empty(), "no ReAct call");
    let log = logs(&fx);
    assert!(log.iter().any(|l| l.contains("3 of 5") && l.contains("keeping")), "{log:?}");
    let o = e.outcome().expect("finished");
    assert_eq!(o.answer.as_deref(), Some("Marrowick"));
    assert!(!o.solved && o.solved_any);
    assert_eq!(o.answered_by, Some(crate::engine::methods::cot_sc::KIND));
    assert!(e.core.calls.values().all(|c| c.request.purpose != Purpose::Act));
}

#[test]
fn cot_sc_react_switches_to_react_on_a_weak_majority() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::COT_SC_REACT, 7, 5));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    // 2 of 5 < 5/2: back off to ReAct.
    let fx = e.handle(reply_all(c[0].0, &answers(&["Marrowick", "Ilse Varga", "Marrowick", RIGHT, "Ilse Varga"])));
    let log = logs(&fx);
    assert!(log.iter().any(|l| l.contains("only 2 of 5") && l.contains("ReAct")), "{log:?}");
    assert!(e.outcome().is_none());
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1.purpose, Purpose::Act);
    assert_eq!(e.core.calls[&c[0].0].node, e.tree().root(), "ReAct starts from the question");
    let fx = react_step(&mut e, c[0].0, "Action 1: Search[Ilse Varga]", "Ilse Varga was born in Marrowick.");
    let c = calls(&fx);
    react_step(&mut e, c[0].0, &format!("Action 2: Finish[{RIGHT}]"), "Episode finished");
    let o = e.outcome().expect("finished");
    assert!(o.solved, "{o:?}");
    assert_eq!(o.answer.as_deref(), Some(RIGHT));
    assert_eq!(o.answered_by, Some(crate::engine::methods::react::KIND));
    assert_eq!(o.finals.len(), 1 + 5, "ReAct's answer first, then the samples");
    assert_eq!(o.sample_accuracy, Some(0.2));
    // Both parts are in the tree: the samples and the ReAct chain under the root.
    assert_eq!(e.tree().node(e.tree().root()).children.len(), 5 + 1);
}

#[test]
fn cot_sc_react_keeps_the_majority_when_react_gives_no_answer_either() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::COT_SC_REACT, 1, 4));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    let fx = e.handle(reply_all(c[0].0, &answers(&["Marrowick", RIGHT, "Ilse Varga", "Tessel"])));
    let c = calls(&fx);
    assert_eq!(c[0].1.purpose, Purpose::Act, "1 of 4 is weak");
    let fx = react_step(&mut e, c[0].0, "Action 1: Search[Ilse Varga]", "Ilse Varga was born in Marrowick.");
    let log = logs(&fx);
    assert!(
        log.iter().any(|l| l.contains("keeping the CoT-SC majority answer \"Marrowick\" (1 of 4 votes)")),
        "{log:?}"
    );
    let o = e.outcome().expect("finished");
    assert_eq!(o.answer.as_deref(), Some("Marrowick"), "ties go to the answer seen first");
    assert_eq!(o.answered_by, Some(crate::engine::methods::cot_sc::KIND));
}

/// Issue 28: after "0 of 21 votes" nothing is "kept": the line says no sample answered.
#[test]
fn cot_sc_react_with_no_sample_answer_and_no_react_answer_says_there_is_none() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::COT_SC_REACT, 1, 3));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    let unreadable: Vec<String> = (0..3).map(|_| "I am not sure what to say.".to_string()).collect();
    let fx = e.handle(reply_all(c[0].0, &unreadable));
    let log = logs(&fx);
    assert!(log.iter().any(|l| l.contains("only 0 of 3 votes")), "{log:?}");
    let c = calls(&fx);
    assert_eq!(c[0].1.purpose, Purpose::Act);
    let fx = react_step(&mut e, c[0].0, "Action 1: Search[Ilse Varga]", "Ilse Varga was born in Marrowick.");
    let log = logs(&fx);
    assert!(!log.iter().any(|l| l.contains("keeping")), "nothing to keep after 0 votes: {log:?}");
    assert!(
        log.iter().any(|l| l.contains("no CoT-SC sample gave an answer (0 of 3 votes): the run ends with no answer")),
        "{log:?}"
    );
    let o = e.outcome().expect("finished");
    assert_eq!(o.answer, None);
    assert!(!o.solved);
}

#[test]
fn the_majority_threshold_decides_the_switch() {
    let weak_for_half = answers(&["Marrowick", "Marrowick", RIGHT, "Ilse Varga", "Tessel"]);
    let switches = |threshold: f64, texts: &[String]| {
        let mut e =
            qa_engine(hybrid(crate::engine::methods::hybrid::COT_SC_REACT, 7, 5).with("majority_threshold", threshold));
        let fx = e.handle(run_cmd());
        let fx = e.handle(reply_all(calls(&fx)[0].0, texts));
        calls(&fx).iter().any(|(_, r)| r.purpose == Purpose::Act)
    };
    assert!(switches(0.5, &weak_for_half), "2 of 5 < 2.5");
    assert!(!switches(0.4, &weak_for_half), "2 of 5 ≥ 2");
    let strong = answers(&[RIGHT, RIGHT, RIGHT, RIGHT, "Marrowick"]);
    assert!(!switches(0.8, &strong), "4 of 5 ≥ 4");
    assert!(switches(0.9, &strong), "4 of 5 < 4.5");
    assert!(switches(0.0, &vec!["I cannot say.".to_string(); 5]), "no answer at all is never a majority");
}

#[test]
fn a_person_continues_react_steps_not_samples() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::REACT_COT_SC, 1, 3));
    let fx = e.handle(run_cmd());
    let fx = react_step(&mut e, calls(&fx)[0].0, "Action 1: Search[Ilse Varga]", "Ilse Varga was born in Marrowick.");
    let c = calls(&fx);
    e.handle(reply_all(c[0].0, &answers(&["Marrowick", "Marrowick", RIGHT])));
    assert_eq!(e.outcome().unwrap().answered_by, Some(crate::engine::methods::cot_sc::KIND));
    let sample = *e.tree().node(e.tree().root()).children.last().unwrap();
    let fx = e.handle(cmd(Command::Continue { node: sample }));
    assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("CoT-SC sample"))));
    let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
    assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })));
    // Continuing from the question runs ReAct again; CoT-SC is not asked twice.
    let fx = e.handle(cmd(Command::Continue { node: e.tree().root() }));
    assert!(calls(&fx).is_empty(), "paused after finishing");
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1.purpose, Purpose::Act);
    react_step(&mut e, c[0].0, &format!("Action 1: Finish[{RIGHT}]"), "Episode finished");
    let o = e.outcome().expect("finished again");
    assert_eq!(o.answered_by, Some(crate::engine::methods::react::KIND));
    assert!(o.solved);
}

#[test]
fn the_threshold_and_the_part_serialize_only_when_used() {
    // Only cot-sc-react reads the threshold, so only its header records it.
    let plain = serde_json::to_string(&Params::default()).unwrap();
    assert!(!plain.contains("majority_threshold"), "{plain}");
    let react_first = serde_json::to_string(&Params::new(crate::engine::methods::hybrid::REACT_COT_SC)).unwrap();
    assert!(!react_first.contains("majority_threshold"), "{react_first}");
    let p = hybrid(crate::engine::methods::hybrid::COT_SC_REACT, 7, 21).with("majority_threshold", 0.7);
    let text = serde_json::to_string(&p).unwrap();
    assert!(text.contains("\"majority_threshold\":0.7") && text.contains("\"cot-sc-react\""), "{text}");
    assert_eq!(serde_json::from_str::<Params>(&text).unwrap(), p);
    let old = text.replace(",\"majority_threshold\":0.7", "");
    assert_eq!(serde_json::from_str::<Params>(&old).unwrap().get("majority_threshold"), Some(&Value::Real(0.5)));
    assert!(!serde_json::to_string(&Outcome::default()).unwrap().contains("answered_by"));
    let o = Outcome { answered_by: Some(crate::engine::methods::cot_sc::KIND), ..Outcome::default() };
    assert!(serde_json::to_string(&o).unwrap().contains("\"answered_by\":\"cot-sc\""));
}

#[test]
fn a_person_edits_react_steps_in_a_hybrid_and_the_agent_goes_on_from_the_edit() {
    let mut e = qa_engine(hybrid(crate::engine::methods::hybrid::REACT_COT_SC, 1, 3));
    let fx = e.handle(run_cmd());
    let fx = react_step(&mut e, calls(&fx)[0].0, "Action 1: Search[Nowhere]", "Could not find Nowhere.");
    let c = calls(&fx);
    assert_eq!(c[0].1.purpose, Purpose::Cot, "one step was too few: CoT-SC");
    e.handle(reply_all(c[0].0, &answers(&["Marrowick", "Marrowick", RIGHT])));
    assert_eq!(e.outcome().unwrap().answered_by, Some(crate::engine::methods::cot_sc::KIND));
    // Rewrite the ReAct step with the right action: ReAct answers this time.
    let step = e.tree().node(e.tree().root()).children[0];
    let fx =
        e.handle(cmd(Command::Edit { node: step, text: format!("Thought 1: I know it.\nAction 1: Finish[{RIGHT}]") }));
    assert!(calls(&fx).is_empty(), "an edited action runs as written");
    let t = tool_calls(&fx);
    assert_eq!(t.len(), 1);
    e.handle(observe(t[0], "Episode finished"));
    let o = e.outcome().expect("finished on the edit");
    assert_eq!(o.answered_by, Some(crate::engine::methods::react::KIND));
    assert!(o.solved);
    // A CoT-SC sample is a whole answer: edited as a tree node (a sibling), not run as a step.
    let sample = *e
        .tree()
        .node(e.tree().root())
        .children
        .iter()
        .find(|&&c| c != step && e.tree().node(c).origin == Origin::Model)
        .unwrap();
    let before = e.tree().len();
    let fx = e.handle(cmd(Command::Edit { node: sample, text: format!("Answer: {RIGHT}") }));
    assert!(tool_calls(&fx).is_empty());
    assert!(calls(&fx).is_empty(), "QA tasks have no evaluator to ask about an edited answer");
    assert_eq!(e.tree().len(), before + 1);
    let fx = e.handle(cmd(Command::Reevaluate { node: sample }));
    assert!(events(&fx)
        .iter()
        .any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("no value evaluator"))));
}
