//! ReAct in native tool mode with the chat prompts: the conversation is in the APIs' own
//! tool shape — the examples and the episode's steps as assistant turns with tool calls,
//! each observation a tool turn tied to its call's id — and a reply with several calls
//! runs the first and answers the others "not run".

use std::sync::Arc;

use serde_json::json;

use super::react::{native_turns, FINISHED, NOT_RUN};
use crate::engine::testkit::*;
use crate::engine::{Effect, Engine, Issue, Params, PromptStyle, Step, ToolMode};
use crate::protocol::{Completion, LlmRequest, Message, Role, ToolCallOut, ToolDef, ToolRequest};
use crate::tasks::prompts::Loader;
use crate::tasks::qa_demo::QaDemo;
use crate::tasks::TaskSource;

fn native_engine(style: PromptStyle) -> Engine {
    let task = Arc::new(QaDemo::styled(Loader::new(None, style)).unwrap());
    let x = task.problem(0).unwrap().input;
    Engine::new(task, &x, Params::new(super::react::KIND).with("max_steps", 5).with("tool_mode", ToolMode::Native))
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

fn observe(call: u64, text: &str) -> crate::engine::Input {
    use crate::engine::{Input, ToolReply};
    use crate::protocol::ToolResult;
    Input::ToolReply(ToolReply { call, result: ToolResult { text: text.into(), ok: true, latency_ms: 0 } })
}

fn roles(messages: &[Message]) -> Vec<Role> {
    messages.iter().map(|m| m.role).collect()
}

/// Every call of an assistant turn is answered by the tool turns right after it, in order.
fn assert_each_call_answered(r: &LlmRequest) {
    for (i, m) in r.messages.iter().enumerate() {
        for (k, call) in m.tool_calls.iter().enumerate() {
            let answer = &r.messages[i + 1 + k];
            assert_eq!(answer.role, Role::Tool, "{:?}", roles(&r.messages));
            assert_eq!(answer.tool_call_id, call.id, "{:?}", r.messages);
        }
    }
}

#[test]
fn the_native_examples_are_tool_calls_and_no_stop_is_sent() {
    let mut e = native_engine(PromptStyle::Chat);
    let c = calls(&e.handle(run_cmd()));
    let r = &c[0].1;
    assert!(!r.tools.is_empty());
    assert!(r.stop.is_empty(), "no text stop sequences with tools: {:?}", r.stop);
    let said: Vec<&Message> = r.messages.iter().filter(|m| m.role == Role::Assistant).collect();
    assert_eq!(said.len(), 4, "the example's four steps");
    for m in &said {
        assert_eq!(m.tool_calls.len(), 1, "{m:?}");
        assert!(!m.content.contains("Action") && !m.content.starts_with("Thought"), "{:?}", m.content);
    }
    let first = &said[0].tool_calls[0];
    assert_eq!(first.id.as_deref(), Some("example_1"));
    assert_eq!((first.name.as_str(), &first.arguments), ("search", &json!({"entity": "Amberly lighthouse"})));
    assert_eq!(said[2].tool_calls[0].name, "lookup");
    assert_eq!(said[2].tool_calls[0].arguments, json!({"keyword": "flows"}));
    assert_each_call_answered(r);
    let results: Vec<&str> = r.messages.iter().filter(|m| m.role == Role::Tool).map(|m| m.content.as_str()).collect();
    assert_eq!(results.len(), 4);
    assert!(results[0].starts_with("The Amberly lighthouse is a stone tower"), "no label: {}", results[0]);
    assert_eq!(results[3], FINISHED, "the example's finish gets the finish tool's answer");
    let last = r.messages.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert!(last.content.starts_with("Question: ") && last.content.contains("Now step 1"), "{}", last.content);
    assert!(!r.messages.iter().any(|m| m.content.contains("Action 1: Search[")), "no action written as text");
}

#[test]
fn the_next_step_carries_the_call_with_its_id_and_the_result_as_a_tool_turn() {
    let mut e = native_engine(PromptStyle::Chat);
    let c = calls(&e.handle(run_cmd()));
    let before = c[0].1.messages.len();
    let fx = e.handle(native(c[0].0, "I need Ilse Varga first.", &[("search", json!({"entity": "Ilse Varga"}))]));
    let t = tool_calls(&fx);
    assert_eq!(t.len(), 1);
    let fx = e.handle(observe(t[0].0, "Ilse Varga was born in Marrowick."));
    let c = calls(&fx);
    let r = &c[0].1;
    assert!(r.stop.is_empty());
    assert_each_call_answered(r);
    // The question's turn, then the step: the assistant's call, its result, the ask.
    let [.., question, said, result, ask] = r.messages.as_slice() else { panic!("{:?}", roles(&r.messages)) };
    assert_eq!(r.messages.len(), before + 3);
    assert!(question.content.starts_with("Question: ") && !question.content.contains("Now step"));
    assert_eq!((said.role, said.content.as_str()), (Role::Assistant, "I need Ilse Varga first."));
    assert_eq!(
        said.tool_calls,
        [ToolCallOut { id: Some("call_0".into()), name: "search".into(), arguments: json!({"entity": "Ilse Varga"}) }]
    );
    assert_eq!(
        (result.role, result.tool_call_id.as_deref(), result.content.as_str()),
        (Role::Tool, Some("call_0"), "Ilse Varga was born in Marrowick.")
    );
    assert_eq!(ask.role, Role::User);
    assert!(ask.content.starts_with("Now step 2"), "{}", ask.content);
}

#[test]
fn a_reply_with_two_calls_runs_the_first_and_answers_the_second_not_run() {
    let mut e = native_engine(PromptStyle::Chat);
    let c = calls(&e.handle(run_cmd()));
    let fx = e.handle(native(
        c[0].0,
        "Two things at once.",
        &[("search", json!({"entity": "Ilse Varga"})), ("lookup", json!({"keyword": "born"}))],
    ));
    let t = tool_calls(&fx);
    assert_eq!(t.len(), 1, "one call a step");
    assert_eq!(t[0].1, ToolRequest { name: "search".into(), arg: "Ilse Varga".into() });
    let step = e.tree().nodes().find(|n| n.step.as_ref().is_some_and(|s| s.calls.len() == 2)).expect("the step");
    let note = step.issues.iter().map(Issue::to_string).find(|n| n.contains("2 tool calls")).expect("a note");
    assert!(note.contains(NOT_RUN) && note.contains("lookup"), "{note}");
    let fx = e.handle(observe(t[0].0, "Ilse Varga was born in Marrowick."));
    let r = &calls(&fx)[0].1;
    assert_each_call_answered(r);
    let at = r.messages.iter().position(|m| m.tool_calls.len() == 2).expect("the step's turn with both calls");
    let ids: Vec<Option<&str>> = r.messages[at].tool_calls.iter().map(|c| c.id.as_deref()).collect();
    assert_eq!(ids, [Some("call_0"), Some("call_1")]);
    assert_eq!(r.messages[at + 1].content, "Ilse Varga was born in Marrowick.");
    assert_eq!(
        (r.messages[at + 2].tool_call_id.as_deref(), r.messages[at + 2].content.as_str()),
        (Some("call_1"), NOT_RUN)
    );
}

#[test]
fn a_call_the_server_gave_no_id_gets_a_stable_one() {
    let mut e = native_engine(PromptStyle::Chat);
    let c = calls(&e.handle(run_cmd()));
    let call = ToolCallOut { id: None, name: "search".into(), arguments: json!({"entity": "Ilse Varga"}) };
    let completion = Completion { tool_calls: vec![call], ..Completion::text("Look.", None) };
    let fx = e.handle(reply_with(c[0].0, vec![completion]));
    let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
    let r = &calls(&fx)[0].1;
    let said = r.messages.iter().rfind(|m| !m.tool_calls.is_empty()).unwrap();
    assert_eq!(said.tool_calls[0].id.as_deref(), Some("call_1_1"));
    assert_each_call_answered(r);
}

#[test]
fn a_bad_tool_call_is_answered_by_its_problem_on_the_retry() {
    let mut e = native_engine(PromptStyle::Chat);
    let c = calls(&e.handle(run_cmd()));
    let fx = e.handle(native(c[0].0, "Search.", &[("search", json!("{\"entity\": \"Ilse"))]));
    let c = calls(&fx);
    assert_eq!(c.len(), 1, "asked again");
    let r = &c[0].1;
    assert_each_call_answered(r);
    let [.., said, result, ask] = r.messages.as_slice() else { unreachable!() };
    assert_eq!((said.content.as_str(), said.tool_calls.len()), ("Search.", 1));
    assert!(result.content.starts_with("not run: Invalid action"), "{}", result.content);
    assert_eq!(ask.role, Role::User);
}

#[test]
fn the_reference_style_keeps_one_message_and_text_mode_has_no_tool_turns() {
    let mut e = native_engine(PromptStyle::Reference);
    let c = calls(&e.handle(run_cmd()));
    let fx = e.handle(native(c[0].0, "Look.", &[("search", json!({"entity": "Ilse Varga"}))]));
    let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
    let r = &calls(&fx)[0].1;
    assert_eq!(roles(&r.messages), [Role::User]);
    assert!(r.messages[0].content.contains("Observation 1: Ilse Varga was born in Marrowick."));
    assert!(r.stop.is_empty(), "tools are offered, so no stop: {:?}", r.stop);
}

#[test]
fn native_turns_leaves_a_step_without_an_action_as_text() {
    let tools = vec![ToolDef {
        name: "search".into(),
        description: "search".into(),
        parameters: json!({"type": "object", "properties": {"entity": {"type": "string"}}, "required": ["entity"]}),
    }];
    let mut messages = vec![
        Message::user("Question: q"),
        Message::assistant("Thought 1: hm"),
        Message::user("Observation 1: Invalid action: no tool call."),
        Message::assistant("Thought 2: look\nAction 2: Search[x]"),
        Message::user("Observation 2: x is y.\nNow step 3."),
    ];
    let bad = Step { thought: Some("hm".into()), problem: Some("Invalid".into()), ..Step::new(1) };
    let good = Step {
        thought: Some("look".into()),
        action: Some(ToolRequest { name: "search".into(), arg: "x".into() }),
        observation: Some("x is y.".into()),
        ..Step::new(2)
    };
    native_turns(&mut messages, 0, &tools, &[bad, good]);
    assert_eq!(roles(&messages), [Role::User, Role::Assistant, Role::User, Role::Assistant, Role::Tool, Role::User]);
    assert_eq!(messages[1].content, "Thought 1: hm", "the bad call stays as it was said");
    // A step the model wrote as text (or a person edited) is a call with a made id.
    assert_eq!(messages[3].content, "look");
    assert_eq!(
        messages[3].tool_calls,
        [ToolCallOut { id: Some("call_2_1".into()), name: "search".into(), arguments: json!({"entity": "x"}) }]
    );
    assert_eq!((messages[4].tool_call_id.as_deref(), messages[4].content.as_str()), (Some("call_2_1"), "x is y."));
    assert_eq!(messages[5].content, "Now step 3.");
}

#[test]
fn an_id_a_server_gives_every_step_is_made_unique() {
    let mut e = native_engine(PromptStyle::Chat);
    let c = calls(&e.handle(run_cmd()));
    // testkit's native replies number their calls from call_0 in every reply.
    let fx = e.handle(native(c[0].0, "First.", &[("search", json!({"entity": "Ilse Varga"}))]));
    let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
    let fx = e.handle(native(calls(&fx)[0].0, "Second.", &[("search", json!({"entity": "Marrowick"}))]));
    let fx = e.handle(observe(tool_calls(&fx)[0].0, "Marrowick lies on the Tessel River."));
    let r = &calls(&fx)[0].1;
    assert_each_call_answered(r);
    let ids: Vec<&str> = r
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .filter_map(|c| c.id.as_deref())
        .filter(|id| id.starts_with("call"))
        .collect();
    assert_eq!(ids, ["call_0", "call_2_1"]);
}
