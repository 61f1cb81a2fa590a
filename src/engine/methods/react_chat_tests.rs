//! ReAct with the chat prompts: the layout a chat model gets, one retry with a format
//! reminder for a reply it cannot read, and the first-try / after-retry counts.

use std::sync::Arc;

use crate::engine::testkit::*;
use crate::engine::{Command, Effect, Engine, Issue, Params, PromptStyle, ToolMode};
use crate::protocol::{Message, Purpose, Role, ToolRequest};
use crate::tasks::prompts::Loader;
use crate::tasks::qa_demo::QaDemo;
use crate::tasks::TaskSource;

fn chat_engine(max_steps: usize) -> Engine {
    let task = Arc::new(QaDemo::styled(Loader::new(None, PromptStyle::Chat)).unwrap());
    let x = task.problem(0).unwrap().input;
    let params = Params::new(super::react::KIND).with("max_steps", max_steps).with("tool_mode", ToolMode::Text);
    Engine::new(task, &x, params)
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

#[test]
fn a_chat_step_is_a_system_message_example_turns_and_the_state_last() {
    let mut e = chat_engine(5);
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    let m = &c[0].1.messages;
    assert_eq!(m[0].role, Role::System);
    assert!(m[0].content.contains("search[") && m[0].content.contains("Action N: Tool[argument]"), "{}", m[0].content);
    // The example alternates user and assistant turns, one step per assistant turn.
    for pair in m[1..].windows(2) {
        assert_ne!(pair[0].role, pair[1].role, "{:?}", roles(m));
    }
    let examples: Vec<&Message> = m.iter().filter(|m| m.role == Role::Assistant).collect();
    assert!(examples.iter().all(|a| a.content.starts_with("Thought ") && a.content.lines().count() == 2));
    let last = m.last().unwrap();
    assert_eq!(last.role, Role::User);
    assert!(
        last.content.starts_with("Question: ")
            && last.content.ends_with("Write Thought 1 and Action 1, and nothing else.")
    );
    assert_eq!(c[0].1.purpose, Purpose::Act);
}

#[test]
fn an_unreadable_chat_reply_is_asked_once_more_with_the_tasks_tools_named() {
    let mut e = chat_engine(5);
    let fx = e.handle(run_cmd());
    let first = calls(&fx)[0].clone();
    let fx = e.handle(reply(first.0, &["Sure! I would start by looking up the university."]));
    assert!(tool_calls(&fx).is_empty());
    let c = calls(&fx);
    assert_eq!(c.len(), 1, "one retry");
    let retry = &c[0].1;
    assert_eq!(retry.messages.len(), first.1.messages.len() + 2, "the reply and the reminder are the next turns");
    let [.., said, ask] = retry.messages.as_slice() else { unreachable!() };
    assert_eq!(
        (said.role, said.content.as_str()),
        (Role::Assistant, "Sure! I would start by looking up the university.")
    );
    assert_eq!(ask.role, Role::User);
    assert!(ask.content.contains("search[") && ask.content.contains("finish["), "{}", ask.content);
    assert!(!ask.content.contains("Search[entity]"), "names this task's tools: {}", ask.content);
    // The retry's reply is read: the step is the retry's, marked as retried, not a bad call.
    let fx =
        e.handle(reply(c[0].0, &["**Thought 1:** Find the founder.\n**Action 1:** Search[University of Marrowick]"]));
    let t = tool_calls(&fx);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].1.arg, "University of Marrowick");
    let step = e.tree().nodes().find(|n| n.issues.iter().any(Issue::is_retry)).expect("the retried step");
    assert!(!step.issues.iter().any(Issue::is_bad_call));
    assert_eq!(step.step.as_ref().unwrap().thought.as_deref(), Some("Find the founder."));
    e.handle(observe(t[0].0, "The University of Marrowick was founded by Ilse Varga."));
    let stats = crate::runtime::headless::QaStats::of(&e).unwrap();
    assert_eq!((stats.read_first_try, stats.read_after_retry, stats.bad_calls), (0, 1, 0));
}

#[test]
fn a_chat_reply_still_unreadable_after_the_retry_is_one_bad_call() {
    let mut e = chat_engine(2);
    let fx = e.handle(run_cmd());
    let fx = e.handle(reply(calls(&fx)[0].0, &["Let me think about it."]));
    let fx = e.handle(reply(calls(&fx)[0].0, &["I still need to think."]));
    assert!(tool_calls(&fx).is_empty());
    let bad: Vec<_> = e.tree().nodes().filter(|n| n.issues.iter().any(Issue::is_bad_call)).collect();
    assert_eq!(bad.len(), 1, "one step, one bad call");
    assert!(bad[0].issues.iter().any(Issue::is_retry));
    assert!(bad[0].path.contains("Observation 1: "), "{}", bad[0].path);
    // The next step is asked (no second retry of the same step).
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert!(c[0].1.messages.last().unwrap().content.contains("Write Thought 2 and Action 2"));
    let fx = e.handle(reply(c[0].0, &["Thought 2: Look.\nAction 2: Search[Ilse Varga]"]));
    e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
    let stats = crate::runtime::headless::QaStats::of(&e).unwrap();
    assert_eq!((stats.read_first_try, stats.read_after_retry, stats.bad_calls), (1, 0, 1));
}

#[test]
fn a_failed_retry_leaves_the_step_a_bad_call_saying_so() {
    let mut e = chat_engine(3);
    let fx = e.handle(run_cmd());
    let fx = e.handle(reply(calls(&fx)[0].0, &["No idea."]));
    e.handle(failure(calls(&fx)[0].0, "connection reset"));
    let bad = e.tree().nodes().find(|n| n.issues.iter().any(Issue::is_bad_call)).expect("a bad call");
    assert!(bad.path.contains("asking again failed"), "{}", bad.path);
}

#[test]
fn the_reference_prompts_have_no_retry() {
    let task = Arc::new(QaDemo::new(None).unwrap());
    let x = task.problem(0).unwrap().input;
    let mut e = Engine::new(task, &x, Params::new(super::react::KIND).with("max_steps", 2));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    assert_eq!(roles(&c[0].1.messages), [Role::User]);
    let fx = e.handle(reply(c[0].0, &["I am not sure what to do here."]));
    let next = calls(&fx);
    assert!(next[0].1.messages[0].content.contains("Observation 1: Invalid action"), "the next step, not a retry");
}

#[test]
fn a_persons_thought_in_a_chat_prompt_asks_for_the_action_alone() {
    let mut e = chat_engine(5);
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let fx = e.handle(reply(calls(&fx)[0].0, &["Thought 1: Start.\nAction 1: Search[Ilse Varga]"]));
    e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
    let step = e.tree().nodes().find(|n| n.depth == 1).unwrap().id;
    let fx = e.handle(cmd(Command::Edit { node: step, text: "Thought 1: Look up the university instead.".into() }));
    let c = calls(&fx);
    let last = c[0].1.messages.last().unwrap();
    assert!(last.content.ends_with("Write Action 1 only, as Action 1: Tool[argument]."), "{}", last.content);
    assert!(last.content.contains("Thought 1 is already written: Look up the university instead."));
}
