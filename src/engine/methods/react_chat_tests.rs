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

/// Two steps (with these observations), then the request for step 3.
fn after_two_steps(e: &mut Engine, observations: [&str; 2]) -> Vec<Effect> {
    let mut fx = e.handle(run_cmd());
    for (i, seen) in observations.iter().enumerate() {
        let step = i + 1;
        let said = format!("Thought {step}: Look {step}.\nAction {step}: Search[Place {step}]");
        fx = e.handle(reply(calls(&fx)[0].0, &[&said]));
        fx = e.handle(observe(tool_calls(&fx)[0].0, seen));
    }
    fx
}

#[test]
fn a_chat_episode_is_a_conversation_each_step_an_assistant_turn_each_observation_the_next_user_turn() {
    let mut e = chat_engine(5);
    let first = calls(&e.handle(run_cmd()))[0].1.clone();
    let mut e = chat_engine(5);
    let fx = after_two_steps(&mut e, ["Marrowick is a town.", "The Vell river runs through it."]);
    let third = &calls(&fx)[0].1;
    // The system message and the example turns are the first request's; the question has
    // its own user turn, then the episode in turns.
    let (before, question) = first.messages.split_at(first.messages.len() - 1);
    assert_eq!(&third.messages[..before.len()], before);
    let episode: Vec<(Role, &str)> =
        third.messages[before.len()..].iter().map(|m| (m.role, m.content.as_str())).collect();
    let asked = question[0].content.lines().next().unwrap().to_string();
    assert!(asked.starts_with("Question: "), "{asked}");
    assert_eq!(
        episode,
        [
            (Role::User, asked.as_str()),
            (Role::Assistant, "Thought 1: Look 1.\nAction 1: Search[Place 1]"),
            (Role::User, "Observation 1: Marrowick is a town."),
            (Role::Assistant, "Thought 2: Look 2.\nAction 2: Search[Place 2]"),
            (
                Role::User,
                "Observation 2: The Vell river runs through it.\nWrite Thought 3 and Action 3, and nothing else."
            ),
        ]
    );
    // Turns alternate from the system message to the last, which asks for the next step.
    for pair in third.messages[1..].windows(2) {
        assert_ne!(pair[0].role, pair[1].role, "{:?}", roles(&third.messages));
    }
    // A reply in the same shape is read as step 3.
    let fx = e.handle(reply(calls(&fx)[0].0, &["Thought 3: Done.\nAction 3: Finish[Vell]"]));
    assert_eq!(tool_calls(&fx)[0].1, ToolRequest { name: "finish".into(), arg: "Vell".into() });
}

#[test]
fn a_retry_and_a_persons_thought_follow_the_episodes_turns() {
    // The retry's reply and reminder come after the last observation's turn.
    let mut e = chat_engine(5);
    let fx = after_two_steps(&mut e, ["Short.", "Shorter."]);
    let asked = calls(&fx)[0].clone();
    let fx = e.handle(reply(asked.0, &["Hmm."]));
    let retry = &calls(&fx)[0].1;
    assert_eq!(&retry.messages[..asked.1.messages.len()], asked.1.messages.as_slice());
    assert_eq!(roles(&retry.messages[asked.1.messages.len()..]), [Role::Assistant, Role::User]);
    // A person's thought for step 2: the turns up to step 1's observation, which asks for the action.
    let mut e = chat_engine(5);
    let fx = after_two_steps(&mut e, ["Short.", "Shorter."]);
    drop(fx);
    let step2 = e.tree().nodes().find(|n| n.depth == 2).unwrap().id;
    let fx = e.handle(cmd(Command::Edit { node: step2, text: "Thought 2: Try the river.".into() }));
    let m = &calls(&fx)[0].1.messages;
    let [.., model, told] = m.as_slice() else { unreachable!() };
    assert_eq!(
        (model.role, model.content.as_str()),
        (Role::Assistant, "Thought 1: Look 1.\nAction 1: Search[Place 1]")
    );
    assert_eq!(told.role, Role::User);
    assert!(told.content.starts_with("Observation 1: Short.\nWrite Thought 2 and Action 2, and nothing else."));
    assert!(told.content.ends_with("Write Action 2 only, as Action 2: Tool[argument]."), "{}", told.content);
}

#[test]
fn a_chat_episode_past_the_context_window_drops_whole_turn_pairs_from_the_oldest_and_says_so() {
    let long = "The Corve River rises in the Harl Hills. ".repeat(60);
    let mut free = chat_engine(6);
    let fx = after_two_steps(&mut free, [&long, &long]);
    let whole = calls(&fx)[0].1.clone();
    let need = crate::protocol::estimate_prompt_tokens(&whole) + u64::from(whole.max_tokens.unwrap_or(256));
    let mut e = chat_engine(6);
    e.set_context_window(Some(need - 200));
    let fx = after_two_steps(&mut e, [&long, &long]);
    let c = calls(&fx);
    assert_eq!(c.len(), 1, "step 3 is asked");
    let m = &c[0].1.messages;
    // Two turns fewer: step 1's assistant turn and its observation's user turn.
    assert_eq!(m.len(), whole.messages.len() - 2);
    let n = m.len();
    let tail: Vec<Role> = roles(&m[n - 3..]);
    assert_eq!(tail, [Role::User, Role::Assistant, Role::User]);
    assert!(m[n - 3].content.starts_with("Question: "));
    assert!(
        m[n - 3].content.ends_with("[1 earlier step left out to fit the model's context window]"),
        "{}",
        m[n - 3].content
    );
    assert!(m[n - 2].content.starts_with("Thought 2: "), "the latest step is kept: {}", m[n - 2].content);
    assert!(
        m[n - 1].content.starts_with("Observation 2: The Corve River") && m[n - 1].content.ends_with("nothing else.")
    );
    assert!(!m.iter().any(|t| t.content.contains("Look 1.")), "step 1 is left out");
    let said: Vec<String> = events(&fx)
        .into_iter()
        .filter_map(|ev| match ev {
            crate::engine::Event::Log { text } => Some(text),
            _ => None,
        })
        .collect();
    assert!(
        said.iter()
            .any(|l| l
                .starts_with("step 3: the oldest step (its assistant and user turns) was dropped so the prompt fits")),
        "{said:?}"
    );
    // The tree keeps the step: only the prompt leaves it out.
    assert!(e.tree().nodes().any(|n| n.path.contains("Observation 1: The Corve River")));
}

#[test]
fn the_reference_style_keeps_the_episode_in_one_user_message() {
    let task = Arc::new(QaDemo::new(None).unwrap());
    let x = task.problem(0).unwrap().input;
    let mut e = Engine::new(task, &x, Params::new(super::react::KIND).with("max_steps", 5));
    let fx = after_two_steps(&mut e, ["Marrowick is a town.", "The Vell river runs through it."]);
    let m = &calls(&fx)[0].1.messages;
    assert_eq!(roles(m), [Role::User]);
    assert!(
        m[0].content.trim_end().ends_with(
            "Thought 1: Look 1.\nAction 1: Search[Place 1]\nObservation 1: Marrowick is a town.\nThought 2: Look 2.\n\
         Action 2: Search[Place 2]\nObservation 2: The Vell river runs through it.\nThought 3:"
        ),
        "{}",
        m[0].content
    );
}

#[test]
fn episode_turns_split_a_trajectory_by_its_labels() {
    use super::react::{drop_oldest_steps, episode_in_turns, EpisodeTurns};
    let t = "Approach: casework\nThought 1: a\nmore a\nAction 1: Calc[1]\nObservation 1: 1\nline two\nThought 2: b\n\
             Observation 2: bad call\nAction 3: Finish[x]\n";
    let turns = EpisodeTurns::of(t);
    assert_eq!(turns.lead, "Approach: casework\n");
    assert_eq!(
        turns.pairs,
        [
            ("Thought 1: a\nmore a\nAction 1: Calc[1]\n".to_string(), "Observation 1: 1\nline two\n".to_string()),
            ("Thought 2: b\n".to_string(), "Observation 2: bad call\n".to_string()),
            ("Action 3: Finish[x]\n".to_string(), String::new()),
        ]
    );
    assert_eq!(
        drop_oldest_steps(t, 2),
        "Approach: casework\n[2 earlier steps left out to fit the model's context window]\nAction 3: Finish[x]\n"
    );
    // Guidance before the question stays with it; a trajectory ending in the model's part
    // ends with the ask as its own user turn.
    let mut m = vec![Message::system("s"), Message::user(format!("Guide.\nQuestion: q\n{t}\nGo on."))];
    episode_in_turns(&mut m, t);
    let got: Vec<(Role, &str)> = m.iter().map(|m| (m.role, m.content.as_str())).collect();
    assert_eq!(
        got,
        [
            (Role::System, "s"),
            (Role::User, "Guide.\nQuestion: q\nApproach: casework"),
            (Role::Assistant, "Thought 1: a\nmore a\nAction 1: Calc[1]"),
            (Role::User, "Observation 1: 1\nline two"),
            (Role::Assistant, "Thought 2: b"),
            (Role::User, "Observation 2: bad call"),
            (Role::Assistant, "Action 3: Finish[x]"),
            (Role::User, "Go on."),
        ]
    );
    // An empty trajectory, or one the last turn does not hold, leaves the messages as they are.
    let before = vec![Message::user("Question: q\n\nGo on.")];
    let mut same = before.clone();
    episode_in_turns(&mut same, "");
    episode_in_turns(&mut same, "Thought 1: elsewhere\n");
    assert_eq!(same, before);
}

#[test]
fn a_format_reminder_quoted_in_an_observation_stays_in_the_users_turn() {
    use super::react::EpisodeTurns;
    // A bad call's observation shows the step's form (`Thought 3: ...`): it is what the
    // model was told, not a step; the next step (numbered higher) is the model's again.
    let t = "Thought 3: hmm\nObservation 3: Invalid action: no action found. Reply in this form:\n\
             Thought 3: <your reasoning>\nAction 3: Tool[argument]\nThought 4: ok\nAction 4: Finish[x]\n";
    let turns = EpisodeTurns::of(t);
    assert_eq!(
        turns.pairs,
        [
            (
                "Thought 3: hmm\n".to_string(),
                "Observation 3: Invalid action: no action found. Reply in this form:\nThought 3: <your reasoning>\n\
                 Action 3: Tool[argument]\n"
                    .to_string()
            ),
            ("Thought 4: ok\nAction 4: Finish[x]\n".to_string(), String::new()),
        ]
    );
}
