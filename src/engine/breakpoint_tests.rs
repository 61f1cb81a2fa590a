//! Each condition firing on a real search (engine-level, with the testkit), and the syntax.

use std::sync::Arc;

use super::super::testkit::*;
use super::super::*;
use super::*;
use crate::protocol::{CallError, LlmRequest, LlmResponse, Purpose, ToolResult};
use crate::tasks::qa_demo::QaDemo;
use crate::tasks::TaskSource;

/// An engine with breakpoints, fed input by input the way `runtime::Run` does:
/// meters before and after, then the check.
struct Watch {
    engine: Engine,
    gauge: Gauge,
    price_per_token: Option<f64>,
    hits: Vec<Hit>,
    /// Calls and tool calls issued and not yet answered, in order.
    queue: Vec<Effect>,
}

impl Watch {
    fn new(engine: Engine, specs: &[&str]) -> Watch {
        let mut w =
            Watch { engine, gauge: Gauge::default(), price_per_token: None, hits: Vec::new(), queue: Vec::new() };
        let set = specs.iter().map(|s| s.to_string()).collect();
        let fx = w.engine.handle(cmd(Command::Breakpoints { set }));
        assert!(
            !events(&fx).iter().any(|e| matches!(e, Event::Rejected { .. })),
            "{specs:?} rejected: {:?}",
            events(&fx)
        );
        w
    }

    fn feed(&mut self, input: Input) -> Vec<Hit> {
        let before = self.gauge;
        if let Input::LlmReply(LlmReply { result, .. }) = &input {
            self.gauge.calls += 1;
            if let Ok(r) = result {
                self.gauge.tokens += r.usage.prompt_tokens + r.usage.completion_tokens;
            }
            self.gauge.cost = self.price_per_token.map(|p| p * self.gauge.tokens as f64);
        }
        let fx = self.engine.handle(input.clone());
        self.gauge.step = self.engine.view().step;
        let (effects, evs): (Vec<Effect>, Vec<Effect>) =
            fx.into_iter().partition(|e| !matches!(e, Effect::Emit { .. }));
        let evs: Vec<Event> = events(&evs);
        let gone = cancelled(&effects);
        self.queue.retain(
            |e| !matches!(e, Effect::CallLlm { call, .. } | Effect::CallTool { call, .. } if gone.contains(call)),
        );
        self.queue.extend(effects.iter().filter(|e| !matches!(e, Effect::Cancel { .. })).cloned());
        let seen =
            Seen { input: &input, effects: &effects, events: &evs, engine: &self.engine, before, after: self.gauge };
        let hits = check(self.engine.breakpoints(), &seen);
        self.hits.extend(hits.clone());
        hits
    }

    /// Answer calls in order (model calls with `answer`, tools with `observe`) until the
    /// search issues no more, or stop at the first hit if `stop`.
    fn run(&mut self, mut answer: impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>, stop: bool) -> Vec<Hit> {
        let mut hits = self.feed(run_cmd());
        while (!stop || hits.is_empty()) && !self.queue.is_empty() {
            let input = match self.queue.remove(0) {
                Effect::CallLlm { call, request } => Input::LlmReply(LlmReply { call, result: answer(&request) }),
                Effect::CallTool { call, tool, .. } => Input::ToolReply(ToolReply {
                    call,
                    result: ToolResult { text: format!("{} observed", tool.arg), ok: true, latency_ms: 0 },
                }),
                _ => continue,
            };
            hits = self.feed(input);
        }
        hits
    }
}

fn sim_answer(noise: f64, seed: u64) -> impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError> {
    let provider = crate::engine::sim::Simulator::new(
        crate::engine::sim::SimConfig { seed, noise, ..Default::default() },
        &crate::tasks::SimPlayers,
    );
    move |request| provider.answer(request)
}

fn bfs() -> Engine {
    engine("4 9 10 13", params(crate::engine::methods::tot_bfs::KIND))
}

fn qa() -> Engine {
    let task = Arc::new(QaDemo::new(None).unwrap());
    let x = task.problem(0).unwrap().input;
    let params = Params::new(crate::engine::methods::react::KIND).with("max_steps", 7);
    Engine::new(task, &x, params)
}

fn text_reply(text: &str) -> Result<LlmResponse, CallError> {
    match reply(0, &[text]) {
        Input::LlmReply(r) => r.result,
        _ => unreachable!(),
    }
}

#[test]
fn score_below_and_above_fire_on_the_scored_node() {
    let mut w = Watch::new(bfs(), &["score<0.3", "score>10"]);
    w.run(sim_answer(1.0, 3), false);
    let low = w.hits.iter().find(|h| h.breakpoint == "score<0.3").expect("a low score");
    let node = low.node.expect("a node");
    let value = w.engine.tree().node(node).score.as_ref().unwrap().value;
    assert!(value < 0.3, "{low:?} {value}");
    assert!(low.reason.contains("below 0.3"), "{}", low.reason);
    let high = w.hits.iter().find(|h| h.breakpoint == "score>10").expect("a high score");
    assert!(w.engine.tree().node(high.node.unwrap()).score.as_ref().unwrap().value > 10.0);
}

/// A score breakpoint names every node that crossed with the input that scored them,
/// not only one of them (issue 28: `score<2` named one node of a batch).
#[test]
fn a_score_breakpoint_names_every_node_that_crossed() {
    let mut w = Watch::new(bfs(), &["score<2"]);
    w.run(sim_answer(1.0, 3), false);
    let low: Vec<NodeId> =
        w.engine.tree().nodes().filter(|n| n.score.as_ref().is_some_and(|s| s.value < 2.0)).map(|n| n.id).collect();
    assert!(low.len() > 3, "{low:?}");
    let said: String = w.hits.iter().map(|h| h.reason.clone()).collect::<Vec<_>>().join("\n");
    let named = |id: &NodeId| said.contains(&format!("{id} scored")) || said.contains(&format!("{id} "));
    let unnamed: Vec<&NodeId> = low.iter().filter(|id| !named(id)).collect();
    // A hit lists six nodes and counts the rest: every unnamed one is in such a count.
    let counted: usize =
        w.hits.iter().filter_map(|h| h.reason.split("and ").nth(1)?.split(' ').next()?.parse::<usize>().ok()).sum();
    assert!(unnamed.len() <= counted, "{unnamed:?} not named in:\n{said}");
}

#[test]
fn disagree_fires_when_samples_differ_and_not_when_they_agree() {
    let mut w = Watch::new(bfs(), &["disagree"]);
    let mut n = 0;
    w.run(
        |request| {
            n += 1;
            match request.purpose {
                Purpose::Value if n == 3 => Ok(reply_texts(&["... sure", "... impossible", "... sure"])),
                Purpose::Value => Ok(reply_texts(&["... likely", "... likely", "... likely"])),
                _ => sim_answer(0.0, 1)(request),
            }
        },
        true,
    );
    assert_eq!(w.hits.len(), 1, "{:?}", w.hits);
    let node = w.hits[0].node.unwrap();
    let samples = &w.engine.tree().node(node).score.as_ref().unwrap().samples;
    assert!(samples.iter().any(|s| s == "sure") && samples.iter().any(|s| s == "impossible"), "{samples:?}");
}

fn reply_texts(texts: &[&str]) -> LlmResponse {
    match reply(0, texts) {
        Input::LlmReply(r) => r.result.unwrap(),
        _ => unreachable!(),
    }
}

#[test]
fn tool_fires_before_the_tool_call_is_made() {
    let mut w = Watch::new(qa(), &["tool=lookup", "tool"]);
    let fx = w.engine.handle(run_cmd());
    let call = calls(&fx)[0].0;
    let hits = w.feed(reply(call, &["I need Ilse Varga first.\nAction 1: Search[Ilse Varga]"]));
    assert_eq!(hits.len(), 1, "only the any-tool breakpoint: {hits:?}");
    assert_eq!(hits[0].breakpoint, "tool");
    assert!(hits[0].reason.contains("search[Ilse Varga]"), "{}", hits[0].reason);
    assert!(w.queue.iter().any(|e| matches!(e, Effect::CallTool { .. })), "the call is still to be made");
    let Some(Effect::CallTool { call, .. }) = w.queue.pop() else { panic!() };
    let hits = w.feed(Input::ToolReply(ToolReply {
        call,
        result: ToolResult { text: "born in Marrowick".into(), ok: true, latency_ms: 0 },
    }));
    assert!(hits.is_empty());
    let Some(Effect::CallLlm { call, .. }) = w.queue.pop() else { panic!() };
    let hits = w.feed(reply(call, &["Thought 2: look it up.\nAction 2: Lookup[river]"]));
    let names: Vec<&str> = hits.iter().map(|h| h.breakpoint.as_str()).collect();
    assert_eq!(names, ["tool=lookup", "tool"]);
}

#[test]
fn bad_call_thought_reply_and_step_fire_in_react() {
    let mut w = Watch::new(qa(), &["bad-call", "thought~/(?i)not sure/", "reply~/Action 2/", "step=2"]);
    let mut n = 0;
    w.run(
        |_| {
            n += 1;
            text_reply(match n {
                1 => "I am not sure what to do here.",
                2 => "Thought 2: look.\nAction 2: Search[Ilse Varga]",
                _ => "Thought 3: done.\nAction 3: Finish[Tessel River]",
            })
        },
        false,
    );
    let by = |b: &str| w.hits.iter().find(|h| h.breakpoint == b).unwrap_or_else(|| panic!("{b}: {:?}", w.hits)).clone();
    let bad = by("bad-call");
    assert!(w.engine.tree().node(bad.node.unwrap()).issues.iter().any(Issue::is_bad_call));
    assert_eq!(by("thought~/(?i)not sure/").node, bad.node);
    let r = by("reply~/Action 2/");
    assert!(r.reason.contains("matches /Action 2/"), "{}", r.reason);
    assert!(by("step=2").reason.contains("step 2"));
    assert_eq!(w.hits.iter().filter(|h| h.breakpoint == "step=2").count(), 1, "a step fires once");
}

#[test]
fn solution_fires_on_the_solved_node() {
    let mut w = Watch::new(bfs(), &["solution"]);
    w.run(sim_answer(0.0, 1), false);
    assert!(w.engine.outcome().unwrap().solved_any);
    let hit = &w.hits[0];
    assert_eq!(w.engine.tree().node(hit.node.unwrap()).status, NodeStatus::Solution);
    assert!(hit.reason.contains("is a solution"), "{}", hit.reason);
}

#[test]
fn parse_fail_fires_on_a_proposal_the_task_rejects() {
    let mut w = Watch::new(bfs(), &["parse-fail"]);
    w.run(
        |request| match request.purpose {
            Purpose::Propose => Ok(reply_texts(&["4 + 9 = 13 (left: 10 13 13)\nthis is not a step"])),
            _ => sim_answer(0.0, 1)(request),
        },
        true,
    );
    let hit = w.hits.first().expect("a parse failure");
    assert!(matches!(w.engine.tree().node(hit.node.unwrap()).status, NodeStatus::Invalid(_)));
}

#[test]
fn provider_error_fires_on_a_failed_call_with_its_node() {
    let mut w = Watch::new(bfs(), &["provider-error"]);
    let fx = w.engine.handle(run_cmd());
    let call = calls(&fx)[0].0;
    let hits = w.feed(failure(call, "HTTP 500 from the server"));
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].node, Some(w.engine.tree().root()));
    assert!(hits[0].reason.contains("HTTP 500"), "{}", hits[0].reason);
}

#[test]
fn calls_tokens_and_cost_fire_once_when_passed() {
    let mut w = Watch::new(bfs(), &["calls>3", "tokens>1000", "cost>0.001"]);
    w.price_per_token = Some(1e-6);
    w.run(sim_answer(1.0, 5), false);
    for b in ["calls>3", "tokens>1000", "cost>0.001"] {
        assert_eq!(w.hits.iter().filter(|h| h.breakpoint == b).count(), 1, "{b}: {:?}", w.hits);
    }
    assert!(w.hits.iter().any(|h| h.reason == "calls passed 3 (4 answered)"), "{:?}", w.hits);
}

#[test]
fn switched_off_breakpoints_do_not_fire() {
    let mut w = Watch::new(bfs(), &["#score<100"]);
    w.run(sim_answer(1.0, 3), false);
    assert!(w.hits.is_empty());
    assert_eq!(w.engine.breakpoints()[0].text(), "#score<100");
}

#[test]
fn the_syntax_reads_every_condition() {
    for spec in [
        "score<0.3",
        "score>0.9",
        "disagree",
        "tool",
        "tool=calculator",
        "bad-call",
        "parse-fail",
        "provider-error",
        "solution",
        "step=12",
        "calls>100",
        "tokens>50000",
        "cost>0.5",
        "thought~/regex/",
        "reply~/a|b/",
        " Score < 1 ",
        "#solution",
    ] {
        assert!(Breakpoint::parse(spec).is_ok(), "{spec}");
    }
}

#[test]
fn bad_syntax_is_one_line_naming_the_breakpoint_and_the_accepted_forms() {
    for (spec, says) in [
        ("score<abc", "`abc` is not a number"),
        ("scored<1", "`scored` is not a condition"),
        ("explode", "`explode` is not a condition"),
        ("step>3", "`step` does not take `>`"),
        ("tool=", "tool= needs a tool name"),
        ("thought~abc", "not a /REGEX/"),
        ("reply~/(/", "bad regex"),
        ("calls>1.5", "not a whole number"),
        ("", "empty condition"),
    ] {
        let e = Breakpoint::parse(spec).unwrap_err().to_string();
        assert!(e.starts_with(&format!("breakpoint `{}`", spec.trim())), "{e}");
        assert!(e.contains(says), "{spec}: {e}");
        assert!(e.contains("accepted: score<X"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

#[test]
fn a_bad_breakpoints_command_is_rejected_and_keeps_the_old_set() {
    let mut e = bfs();
    e.handle(cmd(Command::Breakpoints { set: vec!["solution".into()] }));
    let fx = e.handle(cmd(Command::Breakpoints { set: vec!["solution".into(), "nonsense".into()] }));
    assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("`nonsense`"))));
    assert_eq!(e.breakpoints().len(), 1);
}
