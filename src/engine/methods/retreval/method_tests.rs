//! The ReTreVal method at engine level: scripted replies (no runtime, no sim), each
//! test driving one feature and asserting the tree, the requests and the events.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::json;

use super::method::{CAUSE_NAMES, INFO, KIND, MAX_TOOL_STEPS};
use super::FailureCause;
use crate::engine::testkit::{calls, events, reply};
use crate::engine::{Command, Effect, Engine, Event, Input, NodeId, NodeStatus, Params, ToolReply};
use crate::memory::{Category, Memory};
use crate::protocol::{LlmRequest, ToolRequest, ToolResult};
use crate::tasks::math::{demo, MathKind, MathTask};

const X: &str = r"Solve for $x$: $3x + 7 = 25$.";

fn params(extra: serde_json::Value) -> Params {
    let mut object = extra.as_object().cloned().unwrap_or_default();
    object.insert("method".into(), KIND.label().into());
    serde_json::from_value(serde_json::Value::Object(object)).unwrap()
}

fn engine(extra: serde_json::Value, memory: Option<Memory>) -> Engine {
    let task = Arc::new(MathTask::new(MathKind::MathDemo, None, demo::items()).unwrap());
    let mut e = Engine::try_new(task, X, params(extra)).unwrap();
    e.set_memory(memory);
    e
}

fn kind(r: &LlmRequest) -> &str {
    r.context.get("retreval").and_then(|v| v.as_str()).unwrap_or("")
}

fn approach(r: &LlmRequest) -> &str {
    r.context.get("approach").and_then(|v| v.as_str()).unwrap_or("")
}

/// A scripted model: each prompt kind answers as the closure says.
type Llm<'a> = Box<dyn FnMut(&LlmRequest) -> String + 'a>;

/// The usual replies: complexity `c`, a two-step solve (calc then finish 6), local 8,
/// cross 5 against each sibling, validation correct.
fn standard(c: u8) -> impl FnMut(&LlmRequest) -> String {
    move |r: &LlmRequest| match kind(r) {
        "complexity" => format!("It is a linear equation.\nComplexity: {c}"),
        "solve" => solve_reply(r),
        "local" => "Every step checks.\nScore: 8".into(),
        "cross" => cross_reply(r, 5),
        "validate" => "The steps are right.\nVERDICT: correct".into(),
        "failure" => "Cause: off_by_one\nApproach: casework\nSummary: counted one value too many".into(),
        "rewrite" => "Check the count of cases at both ends before finishing.".into(),
        other => panic!("unexpected prompt kind {other:?}"),
    }
}

fn solve_reply(r: &LlmRequest) -> String {
    let step = r.context.get("step").and_then(|v| v.as_u64()).unwrap_or(1);
    if step == 1 {
        "Thought 1: Subtract 7 from both sides.\nAction 1: calc[25 - 7]".into()
    } else {
        format!("Thought {step}: So 3x = 18 and x = 6.\nAction {step}: finish[6]")
    }
}

fn cross_reply(r: &LlmRequest, score: u8) -> String {
    let n = r.context.get("siblings").and_then(|v| v.as_array()).map_or(0, Vec::len);
    let mut lines: Vec<String> = (1..=n).map(|k| format!("Versus {k}: {score}")).collect();
    lines.push("Critique: it does not check the result.".into());
    lines.join("\n")
}

fn tool(t: &ToolRequest) -> String {
    match t.name.as_str() {
        "calc" => "18".into(),
        "finish" => format!("Episode finished: {}", t.arg),
        other => format!("unknown tool {other}"),
    }
}

/// Everything a drive saw.
#[derive(Default)]
struct Seen {
    events: Vec<Event>,
    requests: Vec<LlmRequest>,
    tools: Vec<ToolRequest>,
    /// Every input fed, in order (for a replay).
    inputs: Vec<Input>,
}

/// Feed `first`, then answer every call (model and tool) in the order issued until the
/// engine issues no more.
fn drive(e: &mut Engine, first: Input, llm: &mut Llm<'_>, seen: &mut Seen) {
    enum Call {
        Llm(u64, LlmRequest),
        Tool(u64, ToolRequest),
    }
    let mut queue: VecDeque<Call> = VecDeque::new();
    let mut input = first;
    loop {
        seen.inputs.push(input.clone());
        let effects = e.handle(input);
        seen.events.extend(events(&effects));
        for fx in &effects {
            match fx {
                Effect::CallLlm { call, request } => queue.push_back(Call::Llm(*call, request.clone())),
                Effect::CallTool { call, tool, .. } => queue.push_back(Call::Tool(*call, tool.clone())),
                Effect::Cancel { calls } => queue.retain(|c| match c {
                    Call::Llm(id, _) | Call::Tool(id, _) => !calls.contains(id),
                }),
                Effect::Emit { .. } | Effect::RunCheck { .. } => {}
            }
        }
        let Some(next) = queue.pop_front() else { return };
        input = match next {
            Call::Llm(call, request) => {
                let text = llm(&request);
                seen.requests.push(request);
                reply(call, &[&text])
            }
            Call::Tool(call, t) => {
                let text = tool(&t);
                seen.tools.push(t);
                Input::ToolReply(ToolReply { call, result: ToolResult { text, ok: true, latency_ms: 0 } })
            }
        };
    }
}

fn run(e: &mut Engine, llm: impl FnMut(&LlmRequest) -> String) -> Seen {
    let mut seen = Seen::default();
    let mut llm: Llm<'_> = Box::new(llm);
    drive(e, Input::command(Command::Run), &mut llm, &mut seen);
    seen
}

fn logs(seen: &Seen) -> Vec<String> {
    seen.events
        .iter()
        .filter_map(|e| match e {
            Event::Log { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn labelled(e: &Engine, prefix: &str) -> Vec<NodeId> {
    e.tree().nodes().filter(|n| n.label.as_deref().is_some_and(|l| l.starts_with(prefix))).map(|n| n.id).collect()
}

fn root_attempt_heads(e: &Engine) -> Vec<NodeId> {
    let root = e.tree().root();
    e.tree()
        .node(root)
        .children
        .iter()
        .copied()
        .filter(|&c| e.tree().node(c).label.as_deref().is_some_and(|l| l.starts_with("attempt ")))
        .collect()
}

#[test]
fn it_is_registered_with_its_flags_and_wants_a_memory_unless_told_not_to() {
    assert_eq!(crate::engine::methods::find("retreval").map(|i| i.kind), Some(KIND));
    for own in super::params::OWN {
        assert!(INFO.param(own.name).is_some(), "{}", own.name);
    }
    assert!(INFO.param("feedback").is_some() && INFO.param("tool_mode").is_some());
    assert!((INFO.wants_memory)(&params(json!({}))));
    assert!(!(INFO.wants_memory)(&params(json!({"no_memory": true}))));
    let names: Vec<&str> = FailureCause::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(CAUSE_NAMES, names.as_slice());
    let e = engine(json!({}), None);
    assert_eq!(e.view().backtrack_causes, names.as_slice());
    let bad = Engine::try_new(
        Arc::new(MathTask::new(MathKind::MathDemo, None, demo::items()).unwrap()),
        X,
        params(json!({"complexity_table": "huge"})),
    );
    assert!(bad.is_err());
}

#[test]
fn the_complexity_estimate_maps_through_either_table_to_the_number_of_root_attempts() {
    for (table, level, depth, branching) in [("paper", 4u8, 4, 4u8), ("official", 4, 4, 3), ("official", 1, 1, 2)] {
        let mut e = engine(json!({"complexity_table": table}), None);
        let mut seen = Seen::default();
        let mut llm: Llm<'_> = Box::new(standard(level));
        // One step: the complexity call alone.
        drive(&mut e, Input::command(Command::Step { n: 1 }), &mut llm, &mut seen);
        assert_eq!(seen.requests.len(), 1);
        assert_eq!(kind(&seen.requests[0]), "complexity");
        let text = format!("complexity {level} → depth {depth} × branching {branching}");
        let node = labelled(&e, "complexity ");
        assert_eq!(node.len(), 1, "{table}");
        assert_eq!(e.tree().node(node[0]).label.as_deref(), Some(text.as_str()));
        assert_eq!(e.tree().node(node[0]).parent, Some(e.tree().root()));
        assert!(e.tree().node(e.tree().root()).note("complexity").is_some_and(|n| n.starts_with(&text)));
        assert!(e.view().params.ends_with(&format!("complexity {level} → {depth}×{branching}")), "{}", e.view().params);
        assert!(logs(&seen).iter().any(|l| l.contains(&text) && l.contains(table)), "{:?}", logs(&seen));
        // The next step starts b root-level attempts.
        drive(&mut e, Input::command(Command::Step { n: 1 }), &mut llm, &mut seen);
        assert_eq!(root_attempt_heads(&e).len(), usize::from(branching), "{table} {level}");
        let acts = seen.requests.iter().filter(|r| kind(r) == "solve").count();
        assert_eq!(acts, usize::from(branching));
    }
}

#[test]
fn an_unreadable_complexity_reply_counts_as_three_with_a_log_line() {
    let mut e = engine(json!({}), None);
    let seen = run(&mut e, |r| match kind(r) {
        "complexity" => "Hard to say.".into(),
        _ => standard(3)(r),
    });
    assert!(logs(&seen).iter().any(|l| l.contains("unreadable; taken as 3")), "{:?}", logs(&seen));
    assert_eq!(labelled(&e, "complexity 3 → depth 3 × branching 3").len(), 1);
}

#[test]
fn a_person_can_change_the_estimate_until_an_attempt_is_scored() {
    let mut e = engine(json!({}), None);
    let mut seen = Seen::default();
    let mut llm: Llm<'_> = Box::new(standard(3));
    drive(&mut e, Input::command(Command::Step { n: 1 }), &mut llm, &mut seen);
    let node = labelled(&e, "complexity 3")[0];
    // Not a number from 1 to 5: refused, plainly.
    let fx = e.handle(Input::command(Command::Edit { node, text: "very hard".into() }));
    assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("1 to 5"))));
    let fx = e.handle(Input::command(Command::Edit { node, text: "1".into() }));
    assert!(!events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })), "{:?}", events(&fx));
    assert_eq!(e.tree().node(node).label.as_deref(), Some("complexity 1 → depth 2 × branching 2"));
    drive(&mut e, Input::command(Command::Step { n: 1 }), &mut llm, &mut seen);
    assert_eq!(root_attempt_heads(&e).len(), 2, "the edited estimate's branching");
    // Once an attempt is scored, the shape stays.
    drive(&mut e, Input::command(Command::Run), &mut llm, &mut seen);
    let fx = e.handle(Input::command(Command::Edit { node, text: "5".into() }));
    assert!(events(&fx)
        .iter()
        .any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("before the first attempt is scored"))));
}

#[test]
fn approach_hints_follow_the_memorys_reliability() {
    let mut memory = Memory::default();
    memory.record_outcome("numeric", true).unwrap();
    memory.record_outcome("numeric", true).unwrap();
    memory.record_outcome("casework", false).unwrap();
    let mut e = engine(json!({}), Some(memory));
    let seen = run(&mut e, standard(4)); // paper: 4 × 4
    let first: Vec<&str> = seen.requests.iter().filter(|r| kind(r) == "solve").take(4).map(approach).collect();
    // numeric (0.68) first, the never-seen at 0.5 in list order, casework (0.4) last.
    assert_eq!(first, ["numeric", "algebraic", "geometric", "combinatorial"]);
    // Without the memory, the list's order.
    let mut e = engine(json!({"no_memory": true}), Some(Memory::default()));
    let seen = run(&mut e, standard(4));
    let first: Vec<&str> = seen.requests.iter().filter(|r| kind(r) == "solve").take(4).map(approach).collect();
    assert_eq!(first, ["algebraic", "casework", "geometric", "numeric"]);
}

#[test]
fn each_tool_call_is_a_child_step_with_its_observation_and_the_attempt_is_its_last_node() {
    let mut e = engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1"}), None);
    let seen = run(&mut e, standard(2));
    assert_eq!(seen.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["calc", "finish"]);
    let head = root_attempt_heads(&e)[0];
    let step1 = e.tree().node(head).children[0];
    let s1 = e.tree().node(step1).step.as_deref().cloned().unwrap();
    assert_eq!(s1.action.as_ref().map(|a| a.name.as_str()), Some("calc"));
    assert_eq!(s1.observation.as_deref(), Some("18"));
    let step2 = e.tree().node(step1).children[0];
    let last = e.tree().node(step2);
    assert_eq!(last.step.as_ref().and_then(|s| s.observation.as_deref()), Some("Episode finished: 6"));
    assert!(last.path.starts_with("Thought 1:") && last.path.contains("Observation 1: 18"), "{}", last.path);
    assert_eq!(last.label.as_deref(), Some("algebraic · 6"));
    assert_eq!(last.answer.as_deref(), Some("6"));
    // The solve's prompt carries ReTreVal's fields.
    let solve = seen.requests.iter().find(|r| kind(r) == "solve").unwrap();
    assert_eq!(solve.context["approach"], "algebraic");
    assert_eq!(solve.context["lessons"], json!([]));
    assert_eq!(solve.context["history"], json!([]));
    assert!(solve.messages[0].content.starts_with("Approach: solve this with the algebraic approach."));
    let outcome = e.outcome().unwrap();
    assert_eq!((outcome.finals.first(), outcome.solved), (Some(&step2), true));
    assert_eq!(e.view().step, 1, "one attempt finished");
}

#[test]
fn the_same_action_twice_in_a_row_ends_the_solve_with_a_note() {
    let mut e = engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1"}), None);
    let seen = run(&mut e, |r| match kind(r) {
        "solve" => {
            let step = r.context["step"].as_u64().unwrap();
            format!("Thought {step}: Try again.\nAction {step}: calc[25 - 7]")
        }
        _ => standard(2)(r),
    });
    assert_eq!(seen.tools.len(), 1, "the repeated action is not run");
    let looped: Vec<&crate::engine::Node> = e.tree().nodes().filter(|n| n.note("loop").is_some()).collect();
    assert_eq!(looped.len(), 1);
    assert_eq!(looped[0].depth, 3, "root → attempt → step 1 → step 2");
    assert!(logs(&seen).iter().any(|l| l.contains("loop detected")));
    assert!(looped[0].label.as_deref().is_some_and(|l| l.starts_with("algebraic · ")));
    // The method's "(not run: ...)" observation is never the attempt's answer.
    for n in e.tree().nodes() {
        assert!(!n.answer.as_deref().unwrap_or("").contains("not run"), "{}: {:?}", n.id, n.answer);
    }
    assert!(!e.outcome().unwrap().answer.as_deref().unwrap_or("").contains("not run"));
}

/// A classification that echoes the prompt's list of causes names none, and a failure
/// whose classification cannot be read is noted on the attempt but writes no lesson.
#[test]
fn an_echoed_template_is_no_cause_and_an_unreadable_failure_writes_no_lesson() {
    use super::failure::{parse_failure, parse_failure_cause};
    use super::scoring::Approach;
    let echo = "Cause: one of arithmetic_error, logic_error, off_by_one, incomplete_reasoning\nSummary:";
    assert_eq!(parse_failure_cause(echo), None);
    assert!(parse_failure(echo, Approach::Algebraic).is_err());
    assert!(parse_failure_cause("Cause: arithmetic_error").is_some());
    let mut e = engine(
        json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1", "no_decompose": true}),
        Some(Memory::default()),
    );
    let seen = run(&mut e, |r| match kind(r) {
        "validate" => "VERDICT: incorrect".into(),
        "failure" => echo.into(),
        _ => standard(1)(r),
    });
    assert!(logs(&seen).iter().any(|l| l.contains("no lesson is written")), "{:?}", logs(&seen));
    let failures = e.memory().unwrap().entries().iter().filter(|x| x.category == Category::Failure).count();
    assert_eq!(failures, 0, "nothing lasting from an unreadable classification");
}

#[test]
fn a_solve_stops_after_the_step_cap() {
    let mut e = engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1"}), None);
    let seen = run(&mut e, |r| match kind(r) {
        "solve" => {
            let step = r.context["step"].as_u64().unwrap();
            format!("Thought {step}: Compute.\nAction {step}: calc[{step} + 1]")
        }
        _ => standard(2)(r),
    });
    assert_eq!(seen.tools.len(), MAX_TOOL_STEPS);
    assert!(e.tree().nodes().any(|n| n.note("stopped").is_some()));
}

#[test]
fn scores_combine_local_cross_and_the_skepticism_penalty_into_metrics() {
    let mut memory = Memory::default();
    memory.record_outcome("algebraic", true).unwrap(); // 0.6: ranked first
    let mut e = engine(json!({"complexity_table": "1:1x2,2:1x2,3:1x2,4:1x2,5:1x2"}), Some(memory));
    run(&mut e, |r| match kind(r) {
        "cross" => cross_reply(r, 6),
        _ => standard(2)(r),
    });
    let algebraic = labelled(&e, "algebraic · ")[0];
    let casework = labelled(&e, "casework · ")[0];
    let m = &e.tree().node(algebraic).metrics;
    let expected = 0.6 * 0.8 + 0.4 * 0.6 - 0.4 * (1.0 - 0.6);
    assert!((m["local"] - 0.8).abs() < 1e-9 && (m["cross"] - 0.6).abs() < 1e-9);
    assert!((m["penalty"] - 0.16).abs() < 1e-9, "{m:?}");
    assert!((m["total"] - expected).abs() < 1e-9, "{m:?}");
    assert!((e.tree().value(algebraic).unwrap() - expected).abs() < 1e-9);
    // casework was never seen: no penalty.
    let m = &e.tree().node(casework).metrics;
    assert_eq!(m["penalty"], 0.0);
    assert!((m["total"] - 0.72).abs() < 1e-9, "{m:?}");
    assert!(e.tree().node(algebraic).note("critique").is_some_and(|c| c.contains("does not check")));
}

#[test]
fn unreadable_scores_and_verdicts_never_stop_the_search() {
    let mut e = engine(json!({"complexity_table": "1:1x2,2:1x2,3:1x2,4:1x2,5:1x2", "no_decompose": true}), None);
    let seen = run(&mut e, |r| match kind(r) {
        "local" => "Looks fine to me.".into(),
        "cross" => "Both are similar.".into(),
        "validate" => "Hmm.".into(),
        "failure" => "I cannot tell.".into(),
        _ => standard(2)(r),
    });
    let leaf = labelled(&e, "algebraic · ")[0];
    let m = &e.tree().node(leaf).metrics;
    assert_eq!((m["local"], m.get("cross"), m["total"]), (0.5, None, 0.5));
    assert!(e.tree().node(leaf).note("local").is_some());
    let logs = logs(&seen);
    assert!(logs.iter().any(|l| l.contains("gives no verdict; treated as failed")), "{logs:?}");
    assert!(logs.iter().any(|l| l.contains("names no cause")), "{logs:?}");
    assert!(e.is_finished());
}

/// A refinement writes "carefully" and scores higher than the attempt it refines.
fn careful_refinements(r: &LlmRequest) -> String {
    match kind(r) {
        "solve" if r.context.get("critique").is_some() && r.context["step"] == 1 => {
            "Thought 1: Carefully subtract 7 from both sides.\nAction 1: calc[25 - 7]".into()
        }
        "local" if r.context["trace"].as_str().unwrap_or("").contains("Carefully") => "Score: 9".into(),
        "local" => "Score: 7".into(),
        _ => String::new(),
    }
}

#[test]
fn a_failed_validation_is_classified_remembered_and_backtracks_to_another_approach() {
    // Paper table, complexity 1: depth 2, branching 2 (algebraic, casework).
    let mut e = engine(json!({}), Some(Memory::default()));
    let snapshot = e.memory().cloned().unwrap();
    let mut validations = 0;
    let mut llm = |r: &LlmRequest| match kind(r) {
        "local" | "solve" if !careful_refinements(r).is_empty() => careful_refinements(r),
        "validate" => {
            validations += 1;
            if validations == 1 {
                "x = 6 does not fit.\nVERDICT: incorrect\nCAUSE: arithmetic_error".into()
            } else {
                "VERDICT: correct".into()
            }
        }
        _ => standard(1)(r),
    };
    let seen = run(&mut e, &mut llm);
    // Level 1 ties: the first (algebraic) is refined, its best refinement validated and failed.
    let failure = seen.requests.iter().filter(|r| kind(r) == "failure").count();
    assert_eq!(failure, 1);
    let entry = e.memory().unwrap().entries().iter().find(|en| en.category == Category::Failure).unwrap();
    assert_eq!(entry.content, "algebraic approach, off_by_one: counted one value too many");
    assert_eq!(entry.approach, "algebraic");
    // The jump: to the casework root-level attempt, with the failure in its history.
    let jumped = seen.events.iter().find_map(|ev| match ev {
        Event::Backtracked { from, to } => Some((from.clone(), to.clone())),
        _ => None,
    });
    let (from, to) = jumped.expect("a Backtracked event");
    assert_eq!(from.len(), 1);
    let target = to[0];
    assert_eq!(e.tree().node(target).label.as_deref(), Some("casework · 6"));
    let note = "Earlier attempt failed: off-by-one in algebraic approach: counted one value too many";
    assert_eq!(e.tree().node(target).note("history"), Some(note));
    assert!(logs(&seen).iter().any(|l| l.starts_with(&format!(
        "validation failed (off_by_one in algebraic approach); backtracking to {target} (casework, total"
    ))));
    let refined: Vec<&LlmRequest> =
        seen.requests.iter().filter(|r| kind(r) == "solve" && approach(r) == "casework").collect();
    let with_history = refined.iter().find(|r| r.context.get("critique").is_some()).expect("a casework refinement");
    assert!(with_history.context["history"].as_array().unwrap().iter().any(|h| h == note));
    assert!(with_history.context["attempt"].as_str().unwrap().contains("Finish[6]"));
    // Each refined attempt's refinements are numbered 1, 2 under it.
    for node in e.tree().nodes() {
        let heads: Vec<&str> = node
            .children
            .iter()
            .filter_map(|&c| e.tree().node(c).label.as_deref())
            .filter(|l| l.starts_with("refinement "))
            .collect();
        if !heads.is_empty() {
            let numbers: Vec<String> =
                heads.iter().map(|l| l["refinement ".len()..].split(' ').next().unwrap().to_string()).collect();
            assert_eq!(numbers, ["1", "2"], "{heads:?}");
        }
    }
    // The final answer is the validated casework refinement.
    let outcome = e.outcome().unwrap();
    let final_node = e.tree().node(outcome.finals[0]);
    assert_eq!(final_node.label.as_deref(), Some("casework · 6"));
    assert_ne!(outcome.finals[0], target, "a refinement of the target, not the target");
    // The memory's journal: the recorded changes rebuild the final memory.
    let mut rebuilt = snapshot.clone();
    for ev in &seen.events {
        if let Event::Memory { change } = ev {
            rebuilt.apply(change).unwrap();
        }
    }
    assert_eq!(&rebuilt, e.memory().unwrap());
    assert_eq!(e.memory().unwrap().reliability("casework"), Some(0.6), "solved by validation: 0.8·0.5 + 0.2");
    assert!(e
        .memory()
        .unwrap()
        .entries()
        .iter()
        .any(|en| en.category == Category::Success && en.content.starts_with("casework approach worked:")));
    // A replay: the same inputs into a fresh engine with the same snapshot give the same events.
    let mut again = engine(json!({}), Some(snapshot));
    let mut replayed = Vec::new();
    for input in &seen.inputs {
        replayed.extend(events(&again.handle(input.clone())));
    }
    assert_eq!(replayed, seen.events);
    assert_eq!(again.memory(), e.memory());
}

#[test]
fn a_persons_backtrack_records_the_named_cause_without_a_failure_call() {
    let mut e = engine(json!({}), Some(Memory::default()));
    let mut llm: Llm<'_> = Box::new(standard(1));
    let mut seen = Seen::default();
    // Complexity, two solve steps, then the scores of level 1.
    drive(&mut e, Input::command(Command::Step { n: 4 }), &mut llm, &mut seen);
    assert!(labelled(&e, "algebraic · ").iter().any(|&n| e.tree().node(n).score.is_some()));
    let fx = e.handle(Input::command(Command::Backtrack { to: None, cause: Some("typo".into()) }));
    assert!(events(&fx)
        .iter()
        .any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("not a failure cause"))));
    let fx = e.handle(Input::command(Command::Backtrack { to: None, cause: Some("missing_step".into()) }));
    let evs = events(&fx);
    assert!(!evs.iter().any(|ev| matches!(ev, Event::Rejected { .. })), "{evs:?}");
    assert!(calls(&fx).iter().all(|(_, r)| kind(r) != "failure"));
    let to = evs
        .iter()
        .find_map(|ev| match ev {
            Event::Backtracked { to, .. } => Some(to[0]),
            _ => None,
        })
        .unwrap();
    assert_eq!(e.tree().node(to).label.as_deref(), Some("casework · 6"));
    assert!(e.tree().node(to).note("history").is_some_and(|h| h.contains("missing step in algebraic approach")));
    assert!(evs.iter().any(|ev| matches!(ev, Event::Log { text } if text.starts_with("marked wrong by hand (missing_step in algebraic approach); backtracking to"))));
    let entry = &e.memory().unwrap().entries()[0];
    assert!(entry.content.starts_with("algebraic approach, missing_step:"), "{}", entry.content);
    assert!(evs.iter().any(|ev| matches!(ev, Event::Memory { .. })));
    // The rest of the run never asks for a classification of that failure.
    drive(&mut e, Input::command(Command::Run), &mut llm, &mut seen);
    assert!(seen.requests.iter().all(|r| kind(r) != "failure"));
    assert!(e.is_finished());
    // A plain backtrack to a node that is no root-level attempt is refused.
    let mut e = engine(json!({}), None);
    drive(&mut e, Input::command(Command::Step { n: 4 }), &mut llm, &mut seen);
    let complexity = labelled(&e, "complexity ")[0];
    let fx = e.handle(Input::command(Command::Backtrack { to: Some(complexity), cause: None }));
    assert!(events(&fx)
        .iter()
        .any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("root-level attempt"))));
}

#[test]
fn without_backtracking_a_failed_validation_finalizes_the_best_leaf() {
    let mut e = engine(json!({"no_backtrack": true}), Some(Memory::default()));
    let seen = run(&mut e, |r| match kind(r) {
        "validate" => "VERDICT: incorrect\nCAUSE: logic_error".into(),
        _ => standard(1)(r),
    });
    assert!(seen.requests.iter().all(|r| kind(r) != "failure"));
    assert!(!seen.events.iter().any(|ev| matches!(ev, Event::Backtracked { .. })));
    let outcome = e.outcome().unwrap();
    let best = e
        .tree()
        .nodes()
        .filter(|n| n.score.is_some())
        .map(|n| n.score.as_ref().unwrap().value)
        .fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(e.tree().value(outcome.finals[0]), Some(best));
    // Not validated: the outcome counts as unsolved for the memory (self mode never peeks at the gold answer).
    assert_eq!(e.memory().unwrap().reliability("algebraic"), Some(0.4));
}

#[test]
fn decomposition_builds_a_subtree_and_composes_a_validated_candidate() {
    // One attempt (depth 1, branching 1) whose score stays low: the problem is split
    // before anything is validated, and the composed candidate is what gets validated.
    let mut e = engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1"}), None);
    let mut validated = Vec::new();
    let seen = run(&mut e, |r| match kind(r) {
        "local" => "Score: 2".into(),
        "validate" => {
            validated.push(r.context["attempt"].as_str().unwrap_or_default().to_string());
            "VERDICT: correct".into()
        }
        "decompose" => "Subtask 1: Find 3x.\nDepends on: none\nExit condition: 3x is known.\n\
Subtask 2: Find x.\nDepends on: 1\nExit condition: x is known."
            .into(),
        "compose" => {
            let subtasks = r.context["subtasks"].as_array().unwrap();
            assert_eq!(subtasks.len(), 2);
            assert_eq!(subtasks[0]["result"], "6");
            "From the subtasks, x = 6. The answer is \\boxed{6}.".into()
        }
        _ => standard(3)(r),
    });
    let root = e.tree().root();
    let decomposition = labelled(&e, "decomposition · 2 subtasks");
    assert_eq!(decomposition.len(), 1);
    let d = e.tree().node(decomposition[0]);
    assert_eq!(d.parent, Some(root));
    let subtasks: Vec<&str> = d.children.iter().filter_map(|&c| e.tree().node(c).label.as_deref()).collect();
    assert_eq!(subtasks, ["subtask 1 · Find 3x.", "subtask 2 · Find x.", "composed · 6"]);
    // Each subtask has its own solve under it, on the subtask's text.
    let subtask_solves: Vec<&LlmRequest> =
        seen.requests.iter().filter(|r| kind(r) == "solve" && r.context.get("subtask").is_some()).collect();
    assert_eq!(subtask_solves.len(), 4, "two steps per subtask");
    assert!(subtask_solves[2].context["problem"].as_str().unwrap().contains("Solve only this subtask: Find x."));
    let outcome = e.outcome().unwrap();
    assert_eq!(e.tree().node(outcome.finals[0]).label.as_deref(), Some("composed · 6"));
    assert_eq!(e.tree().node(outcome.finals[0]).parent, Some(decomposition[0]));
    assert!(logs(&seen).iter().any(|l| l.contains("after the refinements") && l.contains("decomposing")));
    assert_eq!(validated.len(), 1, "only the composed candidate is validated");
    assert!(validated[0].contains("x = 6"), "{validated:?}");
    // Unreadable subtasks: logged, and the best leaf is the answer.
    let mut e = engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1"}), None);
    let seen = run(&mut e, |r| match kind(r) {
        "local" => "Score: 2".into(),
        "validate" => "VERDICT: incorrect".into(),
        "decompose" => "Just solve it.".into(),
        _ => standard(3)(r),
    });
    assert!(logs(&seen).iter().any(|l| l.starts_with("decomposition: the reply lists no subtasks")));
    assert_eq!(e.tree().node(e.outcome().unwrap().finals[0]).label.as_deref(), Some("algebraic · 6"));
}

#[test]
fn the_memory_feeds_lessons_in_and_rewrites_an_entry_with_three_signals() {
    let mut memory = Memory::default();
    // Written on a problem like this one (a linear equation to solve), so it is retrieved.
    let earlier = Some("Solve for $x$: $2x + 5 = 11$.");
    let id = memory
        .add("algebraic approach, arithmetic_error: subtracted wrongly", Category::Failure, "algebraic", earlier)
        .unwrap()
        .id();
    // One about something else is not.
    memory
        .add(
            "casework approach, missed case: count the dice outcomes twice",
            Category::Failure,
            "casework",
            Some("Two fair six-sided dice are rolled. What is the probability that the sum is $8$?"),
        )
        .unwrap();
    memory.add_signal(id, "first").unwrap();
    memory.add_signal(id, "second").unwrap();
    let mut e =
        engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1", "no_decompose": true}), Some(memory));
    let seen = run(&mut e, |r| match kind(r) {
        "validate" => "VERDICT: incorrect\nCAUSE: arithmetic_error".into(),
        "failure" => "Cause: arithmetic_error\nSummary: 25 - 7 is 18".into(),
        _ => standard(2)(r),
    });
    let solve = seen.requests.iter().find(|r| kind(r) == "solve").unwrap();
    let lessons = solve.context["lessons"].as_array().unwrap();
    assert_eq!(lessons, &[json!("algebraic approach, arithmetic_error: subtracted wrongly")]);
    assert!(solve.messages[0].content.contains("Lessons from earlier problems:"));
    let rewrite = seen.requests.iter().find(|r| kind(r) == "rewrite").expect("a rewrite call");
    assert_eq!(rewrite.purpose, crate::protocol::Purpose::Reflect);
    assert_eq!(rewrite.context["signals"].as_array().unwrap().len(), 3);
    let entry = e.memory().unwrap().entry(id).unwrap();
    assert_eq!(entry.content, "Check the count of cases at both ends before finishing.");
    assert!(entry.version >= 2 && entry.misses == 1, "{entry:?}");
    assert!(entry.signals.is_empty(), "a rewrite clears the signals");
    // With --no-memory nothing is read or written.
    let mut e = engine(json!({"no_memory": true}), Some(Memory::default()));
    let seen = run(&mut e, standard(1));
    assert!(!seen.events.iter().any(|ev| matches!(ev, Event::Memory { .. })));
    assert!(seen.requests.iter().filter(|r| kind(r) == "solve").all(|r| r.context["lessons"] == json!([])));
}

#[test]
fn with_oracle_feedback_the_checker_validates_and_no_validation_call_is_made() {
    let mut e = engine(json!({"feedback": "oracle"}), Some(Memory::default()));
    let seen = run(&mut e, standard(1));
    assert!(seen.requests.iter().all(|r| kind(r) != "validate"));
    assert!(e.outcome().unwrap().solved);
    assert_eq!(e.memory().unwrap().reliability("algebraic"), Some(0.6));
}

#[test]
fn no_tools_makes_each_attempt_one_chain_of_thought_call() {
    let mut e = engine(json!({"no_tools": true, "no_cross": true}), None);
    let seen = run(&mut e, |r| match kind(r) {
        "solve" => {
            assert_eq!(r.purpose, crate::protocol::Purpose::Cot);
            "3x = 18, so x = 6. The answer is \\boxed{6}.".into()
        }
        "cross" => panic!("no cross critique with --no-cross"),
        _ => standard(1)(r),
    });
    assert!(seen.tools.is_empty());
    let leaf = labelled(&e, "algebraic · 6")[0];
    assert_eq!(e.tree().node(leaf).metrics.get("cross"), None);
    assert_eq!(e.tree().node(leaf).metrics["total"], 0.8);
    assert!(e.outcome().unwrap().solved);
}

#[test]
fn pruned_attempts_are_never_picked_and_an_edited_attempt_is_scored_like_the_others() {
    let mut e = engine(json!({"complexity_table": "1:1x2,2:1x2,3:1x2,4:1x2,5:1x2", "no_decompose": true}), None);
    let mut llm: Llm<'_> = Box::new(standard(1));
    let mut seen = Seen::default();
    drive(&mut e, Input::command(Command::Step { n: 1 }), &mut llm, &mut seen);
    drive(&mut e, Input::command(Command::Step { n: 1 }), &mut llm, &mut seen);
    let heads = root_attempt_heads(&e);
    e.handle(Input::command(Command::Prune { node: heads[0] }));
    drive(&mut e, Input::command(Command::Run), &mut llm, &mut seen);
    let outcome = e.outcome().unwrap();
    assert!(outcome.finals.iter().all(|&f| !e.tree().is_pruned(f)));
    assert_eq!(e.tree().node(outcome.finals[0]).label.as_deref(), Some("casework · 6"));
    // Edit the final attempt: a new sibling, scored.
    let last = outcome.finals[0];
    let fx = e.handle(Input::command(Command::Edit { node: last, text: "x = 7\nAction 1: finish[7]".into() }));
    assert!(!events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })), "{:?}", events(&fx));
    let mut llm: Llm<'_> = Box::new(standard(1));
    let mut more = Seen::default();
    drive(&mut e, Input::command(Command::Run), &mut llm, &mut more);
    let edited = e.tree().nodes().find(|n| matches!(n.origin, crate::engine::Origin::Human { .. })).unwrap();
    assert_eq!(edited.label.as_deref(), Some("casework · 7"));
    assert!(edited.metrics.contains_key("total"));
    assert_ne!(edited.status, NodeStatus::Pruned);
    // A step in the middle of an attempt is not edited.
    let middle = e.tree().node(heads[1]).children[0];
    let fx = e.handle(Input::command(Command::Edit { node: middle, text: "x".into() }));
    assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })));
}

/// A solve step with no action names this task's own tools (issue 27: it named a fixed
/// math list whatever the task), and a task whose tools it cannot list points to the prompt.
#[test]
fn a_step_without_an_action_names_the_tasks_own_tools() {
    let math = engine(json!({}), None);
    let said = super::method::no_action(&math.core);
    let tools = crate::tools::math::registry().call_examples();
    assert!(said.contains("finish[answer]") && said.contains("calc["), "{said}");
    for name in crate::tools::math::registry().names() {
        assert!(said.contains(&format!("{name}[")), "{name} in {said} ({tools})");
    }
    let qa = Arc::new(crate::tasks::qa_demo::QaDemo::new(None).unwrap());
    let x = crate::tasks::TaskSource::problem(qa.as_ref(), 0).unwrap().input;
    let e = Engine::try_new(qa, &x, params(json!({}))).unwrap();
    let said = super::method::no_action(&e.core);
    assert!(said.contains("search[") && !said.contains("algebra"), "{said}");
}

fn chat_engine(extra: serde_json::Value) -> Engine {
    let loader = crate::tasks::prompts::Loader::new(None, crate::engine::PromptStyle::Chat);
    let task = Arc::new(MathTask::styled(MathKind::MathDemo, loader, demo::items()).unwrap());
    Engine::try_new(task, X, params(extra)).unwrap()
}

#[test]
fn in_the_chat_style_a_solves_steps_are_turns_and_compose_has_its_own_system_message() {
    use crate::protocol::Role;
    let mut e = chat_engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1"}));
    let seen = run(&mut e, |r| match kind(r) {
        "local" => "Score: 2".into(),
        "validate" => "VERDICT: correct".into(),
        "decompose" => "Subtask 1: Find 3x.\nDepends on: none\nExit condition: 3x is known.\n\
Subtask 2: Find x.\nDepends on: 1\nExit condition: x is known."
            .into(),
        "compose" => "From the subtasks, x = 6. The final answer is $\\boxed{6}$.".into(),
        _ => standard(3)(r),
    });
    // Step 2 of the first solve: the approach and the problem in one user turn, step 1 as
    // the assistant's turn, its observation and the ask for step 2 as the last user turn.
    let second = seen
        .requests
        .iter()
        .find(|r| kind(r) == "solve" && r.context["step"] == 2 && r.context.get("subtask").is_none())
        .expect("a second solve step");
    let n = second.messages.len();
    let last: Vec<(Role, &str)> = second.messages[n - 3..].iter().map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(last[0].0, Role::User);
    assert!(
        last[0].1.starts_with("Approach: solve this with the ") && last[0].1.contains("Problem: "),
        "{}",
        last[0].1
    );
    assert!(!last[0].1.contains("Thought 1"), "{}", last[0].1);
    assert_eq!(last[1], (Role::Assistant, "Thought 1: Subtract 7 from both sides.\nAction 1: Calc[25 - 7]"));
    assert_eq!(last[2].0, Role::User);
    assert!(last[2].1.starts_with("Observation 1: 18\n") && last[2].1.contains("Write Thought 2 and Action 2"));
    // The compose call: its own instructions first, the solver's quoted for the answer's form.
    let compose = seen.requests.iter().find(|r| kind(r) == "compose").expect("a compose call");
    let system = &compose.messages[0];
    assert_eq!(system.role, Role::System);
    assert!(system.content.starts_with("You combine the results of a problem's solved subtasks"), "{}", system.content);
    assert!(system.content.contains("The solver of this problem was told:") && system.content.contains("\\boxed{"));
    assert_eq!(compose.messages.iter().filter(|m| m.role == Role::System).count(), 1);
    assert!(compose.messages.last().unwrap().content.contains("Using these results, solve the whole problem"));
}

#[test]
fn in_the_reference_style_compose_is_the_tasks_prompt_as_before() {
    let mut e = engine(json!({"complexity_table": "1:1x1,2:1x1,3:1x1,4:1x1,5:1x1"}), None);
    let seen = run(&mut e, |r| match kind(r) {
        "local" => "Score: 2".into(),
        "validate" => "VERDICT: correct".into(),
        "decompose" => "Subtask 1: Find 3x.\nDepends on: none\nExit condition: 3x is known.\n\
Subtask 2: Find x.\nDepends on: 1\nExit condition: x is known."
            .into(),
        "compose" => "x = 6. The answer is \\boxed{6}.".into(),
        _ => standard(3)(r),
    });
    let compose = seen.requests.iter().find(|r| kind(r) == "compose").expect("a compose call");
    assert_eq!(compose.messages.len(), 1);
    let solve = seen.requests.iter().find(|r| kind(r) == "solve" && r.context["step"] == 2).unwrap();
    assert_eq!(solve.messages.len(), 1, "the reference solve step is one user message");
}

#[test]
fn a_lesson_keeps_its_evidence_and_a_self_validation_the_grading_contradicts_is_said() {
    use crate::memory::Evidence;
    // The model finishes with x = 7 and calls it correct; the gold answer is 6.
    let wrong = |r: &LlmRequest| match kind(r) {
        "solve" if r.context["step"] != 1 => "Thought 2: So x = 7.\nAction 2: finish[7]".to_string(),
        _ => standard(1)(r),
    };
    let mut e = engine(json!({"no_decompose": true}), Some(Memory::default()));
    let seen = run(&mut e, wrong);
    let said = logs(&seen);
    assert!(
        said.iter().any(|l| l.starts_with("memory: the model's own validation called the ")
            && l.contains("attempt correct, but the run's grading does not (")
            && l.ends_with("what the memory learns from this problem is marked self-validated")),
        "{said:?}"
    );
    assert!(said.iter().any(|l| l.contains(" approach solved (self-validated) → reliability")), "{said:?}");
    let m = e.memory().unwrap();
    assert!(!m.is_empty());
    assert!(m.entries().iter().all(|en| en.evidence == Some(Evidence::SelfValidated)), "{:?}", m.entries());
    // Graded by the checker: the lessons are gold-checked and nothing contradicts.
    let mut e = engine(json!({"no_decompose": true, "feedback": "oracle"}), Some(Memory::default()));
    let seen = run(&mut e, standard(1));
    assert!(!logs(&seen).iter().any(|l| l.contains("the run's grading")));
    let m = e.memory().unwrap();
    assert!(!m.is_empty());
    assert!(m.entries().iter().all(|en| en.evidence == Some(Evidence::Gold)), "{:?}", m.entries());
    // A memory recorded before evidence was kept (a session's snapshot) keeps none, as it did.
    let old: Memory = serde_json::from_value({
        let mut v = serde_json::to_value(Memory::default()).unwrap();
        v["params"].as_object_mut().unwrap().remove("record_evidence");
        v
    })
    .unwrap();
    let mut e = engine(json!({"no_decompose": true}), Some(old));
    let seen = run(&mut e, wrong);
    assert!(!logs(&seen).iter().any(|l| l.contains("the run's grading") || l.contains("(self-validated)")));
    assert!(e.memory().unwrap().entries().iter().all(|en| en.evidence.is_none()));
}

#[test]
fn native_chat_solves_send_each_action_back_as_a_tool_call_and_its_result() {
    use crate::engine::PromptStyle;
    use crate::protocol::Role;
    let loader = crate::tasks::prompts::Loader::new(None, PromptStyle::Chat);
    let task = Arc::new(MathTask::styled(MathKind::MathDemo, loader, demo::items()).unwrap());
    let mut e = Engine::try_new(task, X, params(json!({"tool_mode": "native"}))).unwrap();
    e.set_memory(None);
    // Text actions from a model that makes no native call: read from the text (noted), and
    // sent back as calls with made ids.
    let seen = run(&mut e, standard(1));
    let second = seen
        .requests
        .iter()
        .find(|r| kind(r) == "solve" && r.context.get("step").and_then(|s| s.as_u64()) == Some(2))
        .expect("a solve's second step");
    assert!(!second.tools.is_empty() && second.stop.is_empty(), "tools and no stop: {:?}", second.stop);
    let at = second
        .messages
        .iter()
        .position(|m| m.tool_calls.first().and_then(|c| c.id.as_deref()) == Some("call_1_1"))
        .expect("step 1 as a call");
    let said = &second.messages[at];
    assert_eq!((said.role, said.content.as_str()), (Role::Assistant, "Subtract 7 from both sides."));
    assert_eq!(said.tool_calls[0].name, "calc");
    let result = &second.messages[at + 1];
    assert_eq!(
        (result.role, result.tool_call_id.as_deref(), result.content.as_str()),
        (Role::Tool, Some("call_1_1"), "18")
    );
    // The examples are calls too.
    assert!(second.messages.iter().any(|m| m.tool_calls.first().and_then(|c| c.id.as_deref()) == Some("example_1")));
}
