//! Synchronous engine tests: inputs in, effects and tree shape out.

use super::testkit::*;
use super::*;
use crate::protocol::{Prompt, Purpose};

const X: &str = "4 5 6 10";
const PROPOSALS: &str = "4 + 5 = 9 (left: 6 9 10)\n10 - 4 = 6 (left: 5 6 6)\n4 * 5 = 21 (left: 6 10 21)\n10 - 6 = 4 (left: 4 4 5)\n10 - 4 = 6 (left: 5 6 6)";

fn bfs(breadth: usize) -> Engine {
    engine(X, params(crate::engine::methods::tot_bfs::KIND).with("breadth", breadth).with("n_evaluate", 1))
}

/// Step through the first BFS step: proposals, then values (likely, sure, likely).
fn first_step(e: &mut Engine) -> Vec<Effect> {
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let c = calls(&fx);
    assert_eq!(c.len(), 1, "one propose call from the root");
    assert_eq!(c[0].1.purpose, Purpose::Propose);
    let fx = e.handle(reply(c[0].0, &[PROPOSALS]));
    assert!(calls(&fx).is_empty(), "stepping stops after the proposals");
    assert_eq!(e.mode(), RunMode::Paused);
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let c = calls(&fx);
    let mut out = fx.clone();
    for ((call, _), class) in c.iter().zip(["likely", "sure", "likely"]) {
        out.extend(e.handle(reply(*call, &[class])));
    }
    out
}

#[test]
fn bfs_step_proposes_then_evaluates_then_selects_stably() {
    let mut e = bfs(2);
    let fx = first_step(&mut e);
    let t = e.tree();
    assert_eq!(t.len(), 6);
    // 4 * 5 = 21 is rejected with the reason, and never evaluated.
    match &t.node(NodeId(3)).status {
        NodeStatus::Invalid(r) => assert!(r.contains("20"), "{r}"),
        s => panic!("expected invalid, got {s:?}"),
    }
    assert!(t.node(NodeId(3)).score.is_none());
    // The repeated candidate is worth 0, as in the reference.
    assert_eq!(t.value(NodeId(5)), Some(0.0));
    assert_eq!(t.node(NodeId(5)).score.as_ref().unwrap().note.as_deref(), Some("duplicate candidate in this step"));
    // sure (20) first, then the two likely (1) in their original order; b = 2.
    let selected: Vec<Event> = events(&fx).into_iter().filter(|e| matches!(e, Event::Selected { .. })).collect();
    assert_eq!(selected, vec![Event::Selected { step: 0, kept: vec![NodeId(2), NodeId(1)], candidates: 5 }]);
    assert_eq!(t.node(NodeId(2)).status, NodeStatus::Frontier);
    assert!(matches!(t.node(NodeId(4)).status, NodeStatus::Dropped(_)));
    assert_eq!(e.mode(), RunMode::Paused);
}

#[test]
fn run_and_pause() {
    let mut e = bfs(2);
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    e.handle(cmd(Command::Pause));
    let fx = e.handle(reply(c[0].0, &[PROPOSALS]));
    assert!(calls(&fx).is_empty(), "paused: no new calls after replies land");
    let fx = e.handle(run_cmd());
    assert_eq!(calls(&fx).len(), 3, "running again evaluates the three usable candidates");
}

#[test]
fn backtrack_returns_to_unexplored_states_of_the_step_before() {
    let mut e = bfs(2);
    first_step(&mut e);
    let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
    assert!(
        events(&fx).contains(&Event::Backtracked { from: vec![NodeId(2), NodeId(1)], to: vec![NodeId(4), NodeId(5)] })
    );
    assert!(matches!(e.tree().node(NodeId(2)).status, NodeStatus::Dropped(_)));
    assert_eq!(e.tree().node(NodeId(4)).status, NodeStatus::Frontier);
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let nodes: Vec<NodeId> = calls(&fx).iter().map(|(c, _)| e.core.calls[c].node).collect();
    assert_eq!(nodes, vec![NodeId(4), NodeId(5)]);
    // Nothing unexplored is left at that step now.
    let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
    assert!(events(&fx).iter().any(|e| matches!(e, Event::Rejected { .. })));
}

#[test]
fn prune_cancels_calls_and_drops_late_replies() {
    let mut e = bfs(2);
    first_step(&mut e);
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let c = calls(&fx);
    assert_eq!(c.len(), 2);
    let (call_for_1, _) = c.iter().find(|(call, _)| e.core.calls[call].node == NodeId(1)).cloned().unwrap();
    let fx = e.handle(cmd(Command::Prune { node: NodeId(1) }));
    assert_eq!(cancelled(&fx), vec![call_for_1]);
    assert_eq!(e.tree().node(NodeId(1)).status, NodeStatus::Pruned);
    let fx = e.handle(reply(call_for_1, &["9 + 6 = 15 (left: 10 15)"]));
    assert!(matches!(events(&fx)[..], [Event::ReplyDropped { .. }]));
    assert!(e.tree().node(NodeId(1)).children.is_empty());
    // Un-prune restores the old status.
    e.handle(cmd(Command::Unprune { node: NodeId(1) }));
    assert_eq!(e.tree().node(NodeId(1)).status, NodeStatus::Expanded);
    // The root cannot be pruned.
    let fx = e.handle(cmd(Command::Prune { node: NodeId(0) }));
    assert!(events(&fx).iter().any(|e| matches!(e, Event::Rejected { .. })));
}

#[test]
fn generation_guards_against_late_replies_after_prune_and_unprune() {
    let mut e = bfs(2);
    first_step(&mut e);
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let call = calls(&fx).iter().find(|(c, _)| e.core.calls[c].node == NodeId(2)).unwrap().0;
    e.handle(cmd(Command::Prune { node: NodeId(2) }));
    e.handle(cmd(Command::Unprune { node: NodeId(2) }));
    // The call was cancelled and the generation moved on: its reply must not land.
    let fx = e.handle(reply(call, &["9 + 6 = 15 (left: 10 15)"]));
    assert!(events(&fx).iter().any(|e| matches!(e, Event::ReplyDropped { .. })));
    assert!(e.tree().node(NodeId(2)).children.is_empty());
}

#[test]
fn edit_adds_a_human_sibling_that_is_evaluated_and_selectable() {
    let mut e = bfs(2);
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    e.handle(reply(calls(&fx)[0].0, &[PROPOSALS]));
    let fx = e.handle(cmd(Command::Edit { node: NodeId(3), text: "4 * 5 = 20 (left: 6 10 20)".into() }));
    let new = NodeId(6);
    let n = e.tree().node(new);
    assert_eq!(n.origin, Origin::Human { edited_from: Some(NodeId(3)) });
    assert_eq!(n.parent, Some(NodeId(0)));
    assert_eq!(n.status, NodeStatus::Candidate);
    assert!(matches!(e.tree().node(NodeId(3)).status, NodeStatus::Invalid(_)), "the original stays");
    let c = calls(&fx);
    assert_eq!(c.len(), 1, "the edit is evaluated at once");
    assert_eq!(e.core.calls[&c[0].0].node, new);
    e.handle(reply(c[0].0, &["sure"]));
    // Evaluate the rest; the edit is not asked about twice.
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let c = calls(&fx);
    assert_eq!(c.len(), 3);
    let mut all = Vec::new();
    for ((call, _), class) in c.iter().zip(["likely", "likely", "likely"]) {
        all.extend(events(&e.handle(reply(*call, &[class]))));
    }
    assert!(all.contains(&Event::Selected { step: 0, kept: vec![new, NodeId(1)], candidates: 6 }));
    // A bad edit is kept, marked invalid with the reason.
    let fx = e.handle(cmd(Command::Edit { node: NodeId(1), text: "4 + 5 = 10 (left: 6 10 10)".into() }));
    assert!(calls(&fx).is_empty());
    assert!(matches!(e.tree().node(NodeId(7)).status, NodeStatus::Invalid(_)), "{:?}", e.tree().node(NodeId(7)));
    let fx = e.handle(cmd(Command::Edit { node: NodeId(0), text: "x".into() }));
    assert!(events(&fx).iter().any(|e| matches!(e, Event::Rejected { .. })));
}

#[test]
fn expand_and_reevaluate_by_hand() {
    let mut e = bfs(2);
    first_step(&mut e);
    let fx = e.handle(cmd(Command::Expand { node: NodeId(4) }));
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1.purpose, Purpose::Propose);
    let fx = e.handle(reply(c[0].0, &["4 * 4 = 16 (left: 5 16)\n5 + 4 = 9 (left: 4 9)"]));
    let c = calls(&fx);
    assert_eq!(c.len(), 2, "children made by hand are evaluated at once");
    assert!(c.iter().all(|(_, r)| r.purpose == Purpose::Value));
    let fx = e.handle(cmd(Command::Reevaluate { node: NodeId(2) }));
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert!(c[0].1.nonce > 0, "a fresh answer, not the cached one");
    e.handle(reply(c[0].0, &["impossible"]));
    assert_eq!(e.tree().value(NodeId(2)), Some(0.001));
}

#[test]
fn continue_from_a_node_makes_it_the_frontier() {
    let mut e = bfs(2);
    first_step(&mut e);
    e.handle(cmd(Command::Continue { node: NodeId(4) }));
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let nodes: Vec<NodeId> = calls(&fx).iter().map(|(c, _)| e.core.calls[c].node).collect();
    assert_eq!(nodes, vec![NodeId(4)]);
    assert!(matches!(e.tree().node(NodeId(2)).status, NodeStatus::Dropped(_)));
    let fx = e.handle(cmd(Command::Continue { node: NodeId(3) }));
    assert!(
        events(&fx).iter().any(|e| matches!(e, Event::Rejected { .. })),
        "an invalid node cannot be continued from"
    );
}

#[test]
fn failed_and_unknown_calls_are_reported_not_fatal() {
    let mut e = bfs(2);
    let fx = e.handle(run_cmd());
    let call = calls(&fx)[0].0;
    let fx = e.handle(failure(call, "server said no"));
    let ev = events(&fx);
    assert!(ev.iter().any(|e| matches!(e, Event::CallFailed { message, .. } if message.contains("server said no"))));
    assert!(e.is_finished());
    assert!(!e.outcome().unwrap().solved);
    let fx = e.handle(reply(99, &["x"]));
    assert!(matches!(events(&fx)[..], [Event::ReplyDropped { .. }]));
}

#[test]
fn bfs_with_a_perfect_sim_solves() {
    for x in ["4 9 10 13", "1 1 4 6", "4 5 6 10", "2 9 10 12"] {
        let mut e = engine(x, params(crate::engine::methods::tot_bfs::KIND));
        let events = run_sync(&mut e, run_cmd(), sim(0.0, 7));
        let o = e.outcome().unwrap_or_else(|| panic!("{x}: did not finish"));
        assert!(o.solved, "{x}: {o:?}");
        let selections = events.iter().filter(|e| matches!(e, Event::Selected { .. })).count();
        assert_eq!(selections, 4, "T = 4 steps");
        assert!(matches!(events.last(), Some(Event::Mode { .. }) | Some(Event::Finished { .. })));
        let answer = o.answer.clone().unwrap();
        assert!(e.core.task.check(x, &answer).is_ok(), "{answer}");
    }
}

#[test]
fn bfs_sample_generator_vote_evaluator_and_sampled_selection_run() {
    let p = params(crate::engine::methods::tot_bfs::KIND)
        .with("generator", "sample")
        .with("n_generate", 3)
        .with("evaluator", "vote")
        .with("n_evaluate", 5)
        .with("select", "sample");
    let mut e = engine("4 9 10 13", p);
    let events = run_sync(&mut e, run_cmd(), sim(0.0, 1));
    assert!(e.is_finished());
    let kept: Vec<&Event> = events.iter().filter(|e| matches!(e, Event::Selected { .. })).collect();
    assert_eq!(kept.len(), 4);
    // Votes are scores: every evaluated candidate got a count.
    assert!(e
        .tree()
        .nodes()
        .filter(|n| n.depth == 1)
        .all(|n| n.score.is_some() || matches!(n.status, NodeStatus::Invalid(_))));
}

#[test]
fn dfs_backtracks_when_no_child_passes_the_threshold() {
    let mut e = engine(X, params(crate::engine::methods::tot_dfs::KIND).with("n_evaluate", 1).with("threshold", 3.0));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    let fx = e.handle(reply(c[0].0, &["4 + 5 = 9 (left: 6 9 10)\n10 - 4 = 6 (left: 5 6 6)"]));
    let c = calls(&fx);
    assert_eq!(c.len(), 2);
    e.handle(reply(c[0].0, &["sure"]));
    let fx = e.handle(reply(c[1].0, &["sure"]));
    let c = calls(&fx);
    assert_eq!(e.core.calls[&c[0].0].node, NodeId(1), "the first of equal children is tried first");
    let fx = e.handle(reply(c[0].0, &["6 + 9 = 15 (left: 10 15)"]));
    let c = calls(&fx);
    let fx = e.handle(reply(c[0].0, &["impossible"]));
    let ev = events(&fx);
    assert!(ev.contains(&Event::Backtracked { from: vec![NodeId(1)], to: vec![NodeId(0)] }), "{ev:?}");
    assert!(matches!(e.tree().node(NodeId(3)).status, NodeStatus::Dropped(_)));
    let c = calls(&fx);
    assert_eq!(e.core.calls[&c[0].0].node, NodeId(2), "then the next sibling");
    // A backtrack by hand pops to the parent.
    let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
    assert!(events(&fx).contains(&Event::Backtracked { from: vec![NodeId(2)], to: vec![NodeId(0)] }));
    assert_eq!(cancelled(&fx), vec![c[0].0]);
}

#[test]
fn dfs_with_a_perfect_sim_solves_and_respects_the_state_cap() {
    let mut e = engine("4 9 10 13", params(crate::engine::methods::tot_dfs::KIND));
    run_sync(&mut e, run_cmd(), sim(0.0, 3));
    assert!(e.outcome().unwrap().solved);
    let mut e = engine("4 9 10 13", params(crate::engine::methods::tot_dfs::KIND).with("max_states", 2));
    let events = run_sync(&mut e, run_cmd(), sim(1.0, 3));
    let proposes = e.core.calls.values().filter(|c| c.request.purpose == Purpose::Propose).count();
    assert!(proposes <= 2, "{proposes} expansions");
    assert!(events.iter().any(|e| matches!(e, Event::Finished { .. })));
}

#[test]
fn io_scores_each_sample_and_best_of_k() {
    let mut e = engine("4 9 10 13", params(crate::engine::methods::io::KIND).with("samples", 3));
    let fx = e.handle(run_cmd());
    let c = calls(&fx);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1.n, 3);
    assert_eq!(c[0].1.purpose, Purpose::Io);
    e.handle(reply(c[0].0, &["4 + 9 + 10 + 13 = 24", "(10 - 4) * (13 - 9) = 24", "Answer: 13 + 10 - 9 + 4 = 18"]));
    let o = e.outcome().unwrap();
    assert!(!o.solved, "the first sample is wrong");
    assert!(o.solved_any);
    assert!((o.sample_accuracy.unwrap() - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!(e.tree().node(NodeId(2)).status, NodeStatus::Solution);
    let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
    assert!(events(&fx).iter().any(|e| matches!(e, Event::Rejected { .. })));
}

#[test]
fn cot_reads_the_answer_line() {
    let mut e = engine("4 9 10 13", params(crate::engine::methods::cot::KIND).with("samples", 2));
    let fx = e.handle(run_cmd());
    let chain =
        "13 - 9 = 4 (left: 4 4 10)\n10 - 4 = 6 (left: 4 6)\n4 * 6 = 24 (left: 24)\nAnswer: (13 - 9) * (10 - 4) = 24";
    e.handle(reply(calls(&fx)[0].0, &[chain, "10 + 13 = 23 (left: 4 9 23)\nAnswer: 23 + 9 - 4 = 24"]));
    let o = e.outcome().unwrap();
    assert!(o.solved);
    assert_eq!(o.answer.as_deref(), Some("(13 - 9) * (10 - 4) = 24"));
    assert_eq!(o.sample_accuracy, Some(0.5));
}

#[test]
fn io_and_cot_are_one_method_asking_their_own_prompt() {
    use crate::engine::methods::{cot, io};
    for (kind, purpose) in [(io::KIND, Purpose::Io), (cot::KIND, Purpose::Cot)] {
        let mut e = engine("4 9 10 13", params(kind).with("samples", 2));
        let fx = e.handle(run_cmd());
        let c = calls(&fx);
        assert_eq!((c.len(), c[0].1.purpose, c[0].1.n), (1, purpose, 2), "{kind}");
        let prompt = match purpose {
            Purpose::Io => e.core.task.io_prompt(&e.core.x),
            _ => e.core.task.cot_prompt(&e.core.x),
        };
        assert_eq!(c[0].1.messages, prompt.messages, "{kind} asks the task's own prompt");
        assert_eq!(e.view().params, format!("{kind} k=2"));
        let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
        let named = events(&fx).into_iter().any(
            |ev| matches!(ev, Event::Rejected { reason } if reason.starts_with(&format!("{kind} samples whole answers"))),
        );
        assert!(named, "{kind}'s refusal names it");
    }
}

#[test]
fn cot_sc_takes_the_majority_answer() {
    let mut e = engine("4 9 10 13", params(crate::engine::methods::cot_sc::KIND).with("samples", 5));
    let fx = e.handle(run_cmd());
    let right = "Answer: (10 - 4) * (13 - 9) = 24";
    let wrong = "Answer: 4 * 9 - 13 + 10 = 24";
    e.handle(reply(calls(&fx)[0].0, &[right, wrong, wrong, "no idea", "Answer: 4*9 - 13+10 = 24"]));
    let o = e.outcome().unwrap();
    assert!(!o.solved, "three samples agree on a wrong answer");
    assert!(o.solved_any);
    assert_eq!(o.answer.as_deref(), Some("4 * 9 - 13 + 10 = 24"));
    let mut e = engine("4 9 10 13", params(crate::engine::methods::cot_sc::KIND).with("samples", 3));
    let fx = e.handle(run_cmd());
    e.handle(reply(calls(&fx)[0].0, &[wrong, right, right]));
    assert!(e.outcome().unwrap().solved);
}

/// The explorer's view of the vote: answers by normalised key, most votes first (ties
/// to the first seen), each sample's answer, and the count as the method made it.
#[test]
fn cot_sc_shows_its_vote_as_counted() {
    let mut e = engine("4 9 10 13", params(crate::engine::methods::cot_sc::KIND).with("samples", 5));
    let votes = e.view().votes.expect("cot-sc holds a vote");
    assert_eq!((votes.samples, votes.asked, votes.tallies.len()), (0, 5, 0));
    let fx = e.handle(run_cmd());
    let right = "Answer: (10 - 4) * (13 - 9) = 24";
    let wrong = "Answer: 4 * 9 - 13 + 10 = 24";
    e.handle(reply(calls(&fx)[0].0, &[right, wrong, "no idea", "Answer: 4*9 - 13+10 = 24", right]));
    let votes = e.view().votes.unwrap();
    assert_eq!(votes.samples, 5);
    let counts: Vec<(String, usize, NodeId)> =
        votes.tallies.iter().map(|t| (t.answer.clone(), t.votes, t.first)).collect();
    // 2 against 2: the answer seen first wins, as the method decided.
    assert_eq!(
        counts,
        vec![
            ("(10-4)*(13-9)".into(), 2, NodeId(1)),
            ("4*9-13+10".into(), 2, NodeId(2)),
            ("noidea".into(), 1, NodeId(3))
        ]
    );
    assert_eq!(e.outcome().unwrap().answer.as_deref(), Some("(10 - 4) * (13 - 9) = 24"));
    assert_eq!(votes.answer_of(NodeId(4)), Some("4*9-13+10"));
    assert_eq!(votes.answers.len(), 5);
    assert_eq!(votes.threshold, None);
    // Pruning a sample afterwards does not rewrite the count behind the answer.
    e.handle(cmd(Command::Prune { node: NodeId(5) }));
    assert_eq!(e.view().votes.unwrap(), votes);
}

#[test]
fn lenient_mode_keeps_malformed_proposals_like_the_reference() {
    let mut e = engine(
        X,
        params(crate::engine::methods::tot_bfs::KIND).with("lenient", true).with("breadth", 5).with("n_evaluate", 1),
    );
    let fx = e.handle(run_cmd());
    let fx = e.handle(reply(calls(&fx)[0].0, &[PROPOSALS]));
    // All five are candidates: the bad arithmetic is noted but kept; the duplicate gets 0 without a call.
    assert_eq!(calls(&fx).len(), 4);
    let n3 = e.tree().node(NodeId(3));
    assert_eq!(n3.status, NodeStatus::Candidate);
    assert!(matches!(&n3.issues[0], Issue::Proposal(p) if p.contains("20")), "{:?}", n3.issues);
}

#[test]
fn same_inputs_give_the_same_effects() {
    let run = || {
        let mut e = engine("4 9 10 13", params(crate::engine::methods::tot_bfs::KIND));
        run_sync(&mut e, run_cmd(), sim(1.0, 11))
    };
    assert_eq!(run(), run());
}

mod react {
    use std::sync::Arc;

    use super::super::testkit::*;
    use super::super::*;
    use crate::protocol::{CallError, CallErrorKind, Purpose, ToolRequest, ToolResult};
    use crate::tasks::qa_demo::QaDemo;
    use crate::tasks::TaskSource;

    fn qa_engine(max_steps: usize) -> (Engine, String) {
        qa_engine_in(ToolMode::Text, max_steps)
    }

    fn qa_engine_in(tool_mode: ToolMode, max_steps: usize) -> (Engine, String) {
        let task = Arc::new(QaDemo::new(None).unwrap());
        let x = task.problem(0).unwrap().input;
        let params =
            Params::new(crate::engine::methods::react::KIND).with("max_steps", max_steps).with("tool_mode", tool_mode);
        (Engine::new(task, &x, params), x)
    }

    fn tool_calls(effects: &[Effect]) -> Vec<(u64, ToolRequest, NodeId)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::CallTool { call, tool, node, .. } => Some((*call, tool.clone(), *node)),
                _ => None,
            })
            .collect()
    }

    fn observe(call: u64, text: &str) -> Input {
        Input::ToolReply(ToolReply { call, result: ToolResult { text: text.into(), ok: true, latency_ms: 0 } })
    }

    #[test]
    fn thought_action_observation_until_finish() {
        let (mut e, x) = qa_engine(7);
        let fx = e.handle(run_cmd());
        let c = calls(&fx);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].1.purpose, Purpose::Act);
        assert!(c[0].1.stop.iter().any(|s| s.contains("Observation")), "stop before the model writes observations");
        assert!(c[0].1.messages[0].content.contains(&x));
        let fx = e.handle(reply(c[0].0, &["I need Ilse Varga first.\nAction 1: Search[Ilse Varga]"]));
        let t = tool_calls(&fx);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].1, ToolRequest { name: "search".into(), arg: "Ilse Varga".into() });
        let fx = e.handle(observe(t[0].0, "Ilse Varga was born in Marrowick."));
        let c = calls(&fx);
        assert!(c[0].1.messages[0].content.contains("Observation 1: Ilse Varga was born in Marrowick."));
        let fx = e.handle(reply(
            c[0].0,
            &["Thought 2: She was born in Marrowick; its river is the answer.\nAction 2: Finish[Tessel River]"],
        ));
        let t = tool_calls(&fx);
        assert_eq!(t[0].1.name, "finish");
        e.handle(observe(t[0].0, "Episode finished"));
        let o = e.outcome().unwrap();
        assert!(o.solved, "{o:?}");
        assert_eq!(o.answer.as_deref(), Some("Tessel River"));
        assert_eq!(e.tree().node(NodeId(2)).status, NodeStatus::Solution);
    }

    /// A finish whose tool call failed (a replay that lacks it) is no answer: the agent
    /// sees the failure and goes on, and an episode that ends there has no answer.
    #[test]
    fn a_finish_whose_call_failed_is_not_counted() {
        let (mut e, _) = qa_engine(2);
        let fx = e.handle(run_cmd());
        let c = calls(&fx);
        let fx = e.handle(reply(c[0].0, &["I know it.\nAction 1: Finish[Tessel River]"]));
        let t = tool_calls(&fx);
        assert_eq!(t[0].1.name, "finish");
        let failed =
            ToolResult { text: "No recorded observation for finish[Tessel River]".into(), ok: false, latency_ms: 0 };
        let fx = e.handle(Input::ToolReply(ToolReply { call: t[0].0, result: failed }));
        assert!(e.outcome().is_none(), "the episode goes on after a failed finish");
        let c = calls(&fx);
        assert_eq!(c.len(), 1, "step 2 is asked");
        assert!(c[0].1.messages[0].content.contains("Observation 1: No recorded observation"));
        let step = e.tree().node(t[0].2);
        assert!(step.issues.iter().any(|i| i.to_string().contains("does not count")), "{:?}", step.issues);
        let fx = e.handle(reply(c[0].0, &["Still sure.\nAction 2: Search[Tessel River]"]));
        e.handle(observe(tool_calls(&fx)[0].0, "The Tessel is a river."));
        let o = e.outcome().expect("finished after max steps");
        assert!(!o.solved && o.answer.is_none(), "{o:?}");
    }

    #[test]
    fn unreadable_replies_are_bad_calls_and_steps_are_capped() {
        let (mut e, _) = qa_engine(3);
        let mut fx = e.handle(run_cmd());
        for _ in 0..3 {
            let c = calls(&fx);
            assert_eq!(c.len(), 1, "one step at a time");
            fx = e.handle(reply(c[0].0, &["I am not sure what to do here."]));
            assert!(tool_calls(&fx).is_empty(), "no tool for a reply without an action");
        }
        let o = e.outcome().expect("finished after max steps");
        assert!(!o.solved && o.answer.is_none());
        let bad = e.tree().nodes().filter(|n| n.issues.iter().any(Issue::is_bad_call)).count();
        assert_eq!(bad, 3);
        assert!(
            e.tree().node(NodeId(1)).path.contains("Observation 1: Invalid action"),
            "{}",
            e.tree().node(NodeId(1)).path
        );
    }

    #[test]
    fn continue_from_a_past_step_branches() {
        let (mut e, _) = qa_engine(7);
        let fx = e.handle(run_cmd());
        let fx = e.handle(reply(calls(&fx)[0].0, &["Action 1: Search[Ilse Varga]"]));
        let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
        let fx = e.handle(reply(calls(&fx)[0].0, &["Action 2: Search[Nowhere]"]));
        e.handle(observe(tool_calls(&fx)[0].0, "Could not find Nowhere."));
        // Go back to step 1 and continue from there: a second branch under it.
        let fx = e.handle(cmd(Command::Continue { node: NodeId(1) }));
        let c = calls(&fx);
        assert_eq!(c.len(), 1);
        assert_eq!(e.core.calls[&c[0].0].node, NodeId(1));
        let fx = e.handle(reply(c[0].0, &["Action 2: Search[Marrowick]"]));
        let t = tool_calls(&fx);
        assert_eq!(t[0].1.arg, "Marrowick");
        assert_eq!(e.tree().node(NodeId(1)).children.len(), 2, "both continuations stay as branches");
        let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
        assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })));
    }

    /// Steps 1 and 2 of a trajectory, paused after the second observation; returns the
    /// engine and the step nodes.
    fn two_steps() -> (Engine, NodeId, NodeId) {
        let (mut e, _) = qa_engine(7);
        let fx = e.handle(cmd(Command::Step { n: 2 }));
        let fx = e.handle(reply(calls(&fx)[0].0, &["Thought 1: Start with her.\nAction 1: Search[Ilse Varga]"]));
        let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
        let fx = e.handle(reply(calls(&fx)[0].0, &["Thought 2: Wrong way.\nAction 2: Search[Nowhere]"]));
        let fx = e.handle(observe(tool_calls(&fx)[0].0, "Could not find Nowhere."));
        assert!(calls(&fx).is_empty(), "paused after two steps");
        (e, NodeId(1), NodeId(2))
    }

    #[test]
    fn editing_a_thought_asks_the_model_for_the_action_and_keeps_the_old_branch() {
        let (mut e, s1, s2) = two_steps();
        let fx = e.handle(cmd(Command::Edit { node: s2, text: "Marrowick is where she was born; search it.".into() }));
        let c = calls(&fx);
        assert_eq!(c.len(), 1, "one call: the action after the person's thought");
        let new = e.core.calls[&c[0].0].node;
        assert_ne!(new, s2);
        let prompt = &c[0].1.messages[0].content;
        assert!(prompt.ends_with("Thought 2: Marrowick is where she was born; search it.\nAction 2:"), "{prompt}");
        assert!(!prompt.contains("Nowhere"), "the old continuation is not in the prompt");
        assert_eq!(e.tree().node(new).origin, Origin::Human { edited_from: Some(s2) });
        assert_eq!(e.tree().node(new).parent, Some(s1));
        // The model continues after "Action 2:" with just the action.
        let fx = e.handle(reply(c[0].0, &[" Search[Marrowick]"]));
        let t = tool_calls(&fx);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].1, ToolRequest { name: "search".into(), arg: "Marrowick".into() });
        assert_eq!(t[0].2, new);
        let fx = e.handle(observe(t[0].0, "Marrowick lies on the Tessel River."));
        assert!(calls(&fx).is_empty(), "the edit runs its own step, then the run mode (paused) holds");
        let n = e.tree().node(new);
        assert!(n.path.ends_with(
            "Thought 2: Marrowick is where she was born; search it.\nAction 2: Search[Marrowick]\nObservation 2: Marrowick lies on the Tessel River.\n"
        ), "{}", n.path);
        // Both branches stay under step 1, and the next step goes on from the edited one.
        assert_eq!(e.tree().node(s1).children, vec![s2, new]);
        assert!(e.tree().node(s2).path.contains("Nowhere"));
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let c = calls(&fx);
        assert_eq!(e.core.calls[&c[0].0].node, new);
        assert!(c[0].1.messages[0].content.contains("Observation 2: Marrowick lies on the Tessel River."));
    }

    #[test]
    fn editing_an_action_runs_it_and_drops_the_old_branch_calls() {
        let (mut e, s1, s2) = two_steps();
        // Step 3 in flight on the old branch.
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let old_call = calls(&fx)[0].0;
        let fx = e.handle(cmd(Command::Edit {
            node: s2,
            text: "Thought 2: Her birthplace next.\nAction 2: search[Marrowick]\nObservation 2: (left over)".into(),
        }));
        assert_eq!(cancelled(&fx), vec![old_call], "the old continuation's call is cancelled");
        assert!(calls(&fx).is_empty(), "an edit with an action needs no model call");
        let t = tool_calls(&fx);
        assert_eq!(t[0].1.arg, "Marrowick");
        let new = t[0].2;
        assert_eq!(e.tree().node(new).thought, "Thought 2: Her birthplace next.\nAction 2: Search[Marrowick]");
        // A late reply for the cancelled call changes nothing.
        let fx = e.handle(reply(old_call, &["Action 3: Finish[wrong]"]));
        assert!(events(&fx).iter().any(|ev| matches!(ev, Event::ReplyDropped { .. })));
        assert_eq!(e.tree().node(s2).children.len(), 0);
        e.handle(observe(t[0].0, "Marrowick lies on the Tessel River."));
        let fx = e.handle(cmd(Command::Run));
        let fx = e.handle(reply(calls(&fx)[0].0, &["Action 3: Finish[Tessel River]"]));
        e.handle(observe(tool_calls(&fx)[0].0, "Episode finished"));
        let o = e.outcome().expect("finished on the edited branch");
        assert!(o.solved);
        assert!(e.tree().is_within(o.finals[0], new));
        assert_eq!(e.tree().node(s1).children.len(), 2);
    }

    #[test]
    fn an_empty_react_edit_is_rejected() {
        let (mut e, _, s2) = two_steps();
        let fx = e.handle(cmd(Command::Edit { node: s2, text: "Observation 2: only this".into() }));
        assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })));
        assert_eq!(e.tree().len(), 3);
    }

    #[test]
    fn of_several_text_actions_the_first_is_taken_and_the_rest_noted() {
        let (mut e, _) = qa_engine(7);
        let fx = e.handle(run_cmd());
        let fx = e.handle(reply(
            calls(&fx)[0].0,
            &["Thought 1: Two at once.\nAction 1: Search[Ilse Varga]\nAction 2: Search[Marrowick]"],
        ));
        let t = tool_calls(&fx);
        assert_eq!(t.len(), 1, "one action a step");
        assert_eq!(t[0].1.arg, "Ilse Varga");
        let issues = &e.tree().node(t[0].2).issues;
        let shown: Vec<String> = issues.iter().map(ToString::to_string).collect();
        assert!(shown.iter().any(|i| i.contains("not taken") && i.contains("Search[Marrowick]")), "{issues:?}");
        let step = e.tree().node(t[0].2).step.as_ref().unwrap();
        assert_eq!(step.extra_actions, ["Search[Marrowick]"]);
    }

    /// Every step node's text is its typed step as the one formatter writes it, and the
    /// task's parser reads that text back to the same thought and action.
    fn assert_steps_round_trip(e: &Engine) -> usize {
        let tree = e.tree();
        let mut checked = 0;
        for node in tree.nodes() {
            let Some(step) = &node.step else { continue };
            assert_eq!(step.n, node.depth);
            assert_eq!(node.thought, step.text());
            let parent = tree.node(node.parent.unwrap());
            assert_eq!(node.path, format!("{}{}", parent.path, step.path_text()));
            let parsed = crate::tasks::react_text::parse_step(&node.thought, step.n);
            assert_eq!(parsed.thought, step.thought, "{}", node.thought);
            let action = parsed.action.map(|a| ToolRequest { name: a.name, arg: a.arg });
            assert_eq!(action, step.action, "{}", node.thought);
            checked += 1;
        }
        checked
    }

    #[test]
    fn steps_are_typed_and_their_text_round_trips() {
        let (mut e, _) = qa_engine(7);
        let fx = e.handle(run_cmd());
        let fx = e.handle(reply(calls(&fx)[0].0, &["I need Ilse Varga first.\nAction 1: Search[Ilse Varga]"]));
        let fx = e.handle(observe(tool_calls(&fx)[0].0, "  Ilse Varga was born in Marrowick.  "));
        let step = e.tree().node(NodeId(1)).step.as_deref().cloned().unwrap();
        assert_eq!(step.thought.as_deref(), Some("I need Ilse Varga first."));
        assert_eq!(step.action, Some(ToolRequest { name: "search".into(), arg: "Ilse Varga".into() }));
        assert_eq!(step.observation.as_deref(), Some("Ilse Varga was born in Marrowick."));
        assert_eq!(step.problem, None);
        // A bad call: no action; the problem is the observation.
        let fx = e.handle(reply(calls(&fx)[0].0, &["Thought 2: I am not sure what to do here."]));
        let bad = e.tree().node(NodeId(2));
        let step = bad.step.as_deref().cloned().unwrap();
        assert!(step.is_bad_call() && step.action.is_none());
        assert_eq!(step.observation, step.problem);
        assert!(bad.issues.iter().any(Issue::is_bad_call));
        assert!(bad.issues[0].to_string().starts_with("bad call: Invalid action"), "{}", bad.issues[0]);
        // Two actions: the first is taken, the second kept on the step.
        let fx = e.handle(reply(
            calls(&fx)[0].0,
            &["Thought 3: Two at once.\nAction 3: Lookup[river]\nAction 4: Search[Marrowick]"],
        ));
        let step = e.tree().node(NodeId(3)).step.as_deref().cloned().unwrap();
        assert_eq!(step.extra_actions, ["Search[Marrowick]"]);
        e.handle(observe(tool_calls(&fx)[0].0, "(Result 1 / 1) The Tessel runs through Marrowick."));
        assert_eq!(assert_steps_round_trip(&e), 3);
    }

    #[test]
    fn native_tool_call_steps_round_trip_too() {
        use serde_json::json;
        let (mut e, _) = qa_engine_in(ToolMode::Native, 7);
        let c = calls(&e.handle(run_cmd()));
        let fx = e.handle(native(c[0].0, "I need Ilse Varga first.", &[("search", json!({"entity": "Ilse Varga"}))]));
        let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
        // Unusable arguments: a bad call.
        let fx = e.handle(native(calls(&fx)[0].0, "Search.", &[("search", json!("{\"entity\": \"Ilse"))]));
        assert!(e.tree().node(NodeId(2)).step.as_ref().unwrap().is_bad_call());
        let fx = e.handle(native(
            calls(&fx)[0].0,
            "",
            &[("finish", json!({"answer": "Tessel River"})), ("search", json!({"entity": "x"}))],
        ));
        let step = e.tree().node(NodeId(3)).step.as_deref().cloned().unwrap();
        assert_eq!((step.thought.as_deref(), step.text().as_str()), (None, "Action 3: Finish[Tessel River]"));
        assert_eq!(step.extra_actions, [r#"search({"entity":"x"})"#]);
        e.handle(observe(tool_calls(&fx)[0].0, "Episode finished"));
        assert_eq!(assert_steps_round_trip(&e), 3);
        assert!(e.outcome().unwrap().solved);
    }

    fn failed(call: u64, kind: CallErrorKind, message: &str) -> Input {
        Input::LlmReply(LlmReply { call, result: Err(CallError { kind, message: message.into() }) })
    }

    #[test]
    fn a_failed_step_is_asked_again_as_it_was_and_never_becomes_text() {
        let (mut e, _) = qa_engine_in(ToolMode::Text, 3);
        let c = calls(&e.handle(run_cmd()));
        let fx = e.handle(reply(c[0].0, &["I need Ilse Varga first.\nAction 1: Search[Ilse Varga]"]));
        let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
        let (call, asked) = calls(&fx).remove(0);
        let fx = e.handle(failed(call, CallErrorKind::Server, "HTTP 500: upstream hiccup"));
        let (_, again) = calls(&fx).remove(0);
        assert_eq!(again.messages, asked.messages, "the same prompt: nothing of the failure in it");
        // The lost step is shown beside the trajectory, as no step, and uses up a step.
        let lost = e.tree().nodes().find(|n| n.thought.contains("the step is asked again")).unwrap();
        assert!(lost.step.is_none() && matches!(&lost.status, NodeStatus::Invalid(r) if r.contains("upstream hiccup")));
        assert!(!lost.path.contains("hiccup"));
        let fx = e.handle(failed(calls(&fx)[0].0, CallErrorKind::Server, "HTTP 500: again"));
        assert!(calls(&fx).is_empty(), "1 step and 2 lost ones: --max-steps 3 is used up");
        assert_eq!(e.outcome().and_then(|o| o.answer.clone()), None);
    }

    #[test]
    fn a_context_overflow_ends_the_episode_and_is_logged_once() {
        let (mut e, _) = qa_engine_in(ToolMode::Text, 7);
        let c = calls(&e.handle(run_cmd()));
        let fx = e.handle(reply(c[0].0, &["I need Ilse Varga first.\nAction 1: Search[Ilse Varga]"]));
        let fx = e.handle(observe(tool_calls(&fx)[0].0, "Ilse Varga was born in Marrowick."));
        let message = "HTTP 400: maximum context length is 2048 tokens";
        let fx = e.handle(failed(calls(&fx)[0].0, CallErrorKind::ContextOverflow, message));
        assert!(calls(&fx).is_empty() && e.outcome().is_some(), "nothing more is asked: the episode is over");
        let logs: Vec<String> = events(&fx)
            .into_iter()
            .filter_map(|ev| match ev {
                Event::Log { text } if text.contains("context window") => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(logs.len(), 1, "{logs:?}");
        let last = e.tree().nodes().last().unwrap();
        assert!(matches!(&last.status, NodeStatus::Invalid(r) if r.contains("context_overflow")), "{:?}", last.status);
    }

    #[test]
    fn issues_show_the_text_they_always_had() {
        let cases = [
            (Issue::Proposal("uses 20, which is not left".into()), "uses 20, which is not left"),
            (Issue::CallFailed { call: 4, message: "http: boom".into() }, "call 4 failed: http: boom"),
            (Issue::BadCall("Invalid action: x".into()), "bad call: Invalid action: x"),
            (Issue::ActionFailed("timeout: slow".into()), "the model call for the action failed: timeout: slow"),
            (
                Issue::Note("1 more actions in the reply were not taken".into()),
                "1 more actions in the reply were not taken",
            ),
        ];
        for (issue, text) in cases {
            assert_eq!(issue.to_string(), text);
            assert_eq!(issue.is_bad_call(), text.starts_with("bad call"));
            let json = serde_json::to_string(&issue).unwrap();
            assert_eq!(serde_json::from_str::<Issue>(&json).unwrap(), issue, "{json}");
        }
        let json = serde_json::to_string(&Issue::CallFailed { call: 4, message: "m".into() }).unwrap();
        assert_eq!(json, r#"{"call_failed":{"call":4,"message":"m"}}"#);
    }

    mod native {
        use serde_json::json;

        use super::super::super::testkit::*;
        use super::super::super::*;
        use super::{observe, qa_engine_in, tool_calls};
        use crate::protocol::ToolRequest;

        fn issues(e: &Engine, id: usize) -> Vec<String> {
            e.tree().node(NodeId(id)).issues.iter().map(ToString::to_string).collect()
        }

        #[test]
        fn the_request_offers_the_tools_and_the_tool_call_is_the_action() {
            let (mut e, x) = qa_engine_in(ToolMode::Native, 7);
            let c = calls(&e.handle(run_cmd()));
            assert_eq!(c.len(), 1);
            let request = &c[0].1;
            let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["search", "lookup", "finish", "calculate"]);
            assert_eq!(request.tools[0].arg_name(), Some("entity"));
            assert!(request.messages[0].content.contains(&x));
            assert!(request.messages[0].content.contains("call exactly one of the tools"), "the native prompt");
            let fx =
                e.handle(native(c[0].0, "I need Ilse Varga first.", &[("search", json!({"entity": "Ilse Varga"}))]));
            let t = tool_calls(&fx);
            assert_eq!(t.len(), 1);
            assert_eq!(t[0].1, ToolRequest { name: "search".into(), arg: "Ilse Varga".into() });
            // Written in the canonical text, so the transcript and later prompts read as in text mode.
            assert_eq!(
                e.tree().node(NodeId(1)).thought,
                "Thought 1: I need Ilse Varga first.\nAction 1: Search[Ilse Varga]"
            );
            assert!(issues(&e, 1).is_empty(), "{:?}", issues(&e, 1));
            let c = calls(&e.handle(observe(t[0].0, "Ilse Varga was born in Marrowick.")));
            let prompt = &c[0].1.messages[0].content;
            assert!(prompt.contains("Action 1: Search[Ilse Varga]\nObservation 1: Ilse Varga was born in Marrowick."));
            assert!(!c[0].1.tools.is_empty(), "every step offers the tools");
            let fx = e.handle(native(c[0].0, "", &[("Finish", json!({"answer": "Tessel River"}))]));
            let t = tool_calls(&fx);
            assert_eq!(t[0].1, ToolRequest { name: "finish".into(), arg: "Tessel River".into() });
            assert_eq!(e.tree().node(NodeId(2)).thought, "Action 2: Finish[Tessel River]", "no text, no thought line");
            e.handle(observe(t[0].0, "Episode finished"));
            let o = e.outcome().unwrap();
            assert!(o.solved, "{o:?}");
            assert_eq!(o.answer.as_deref(), Some("Tessel River"));
        }

        #[test]
        fn of_two_tool_calls_the_first_is_taken_and_the_second_noted() {
            let (mut e, _) = qa_engine_in(ToolMode::Native, 7);
            let c = calls(&e.handle(run_cmd()));
            let fx = e.handle(native(
                c[0].0,
                "Thought 1: Two things to find.",
                &[("search", json!({"entity": "Ilse Varga"})), ("lookup", json!({"keyword": "born"}))],
            ));
            let t = tool_calls(&fx);
            assert_eq!(t.len(), 1, "one action per step");
            assert_eq!(t[0].1.arg, "Ilse Varga");
            assert_eq!(
                e.tree().node(NodeId(1)).thought,
                "Thought 1: Two things to find.\nAction 1: Search[Ilse Varga]"
            );
            let notes = issues(&e, 1);
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(notes[0].contains("2 tool calls") && notes[0].contains("lookup"), "{notes:?}");
            assert!(!notes[0].starts_with("bad call"), "not a bad call");
        }

        #[test]
        fn without_a_tool_call_a_text_action_is_read_and_noted() {
            let (mut e, _) = qa_engine_in(ToolMode::Native, 7);
            let c = calls(&e.handle(run_cmd()));
            let fx = e.handle(reply(c[0].0, &["I need Ilse Varga first.\nAction 1: Search[Ilse Varga]"]));
            let t = tool_calls(&fx);
            assert_eq!(t[0].1, ToolRequest { name: "search".into(), arg: "Ilse Varga".into() });
            let notes = issues(&e, 1);
            assert!(notes.iter().any(|n| n.contains("no native tool call")), "{notes:?}");
        }

        #[test]
        fn a_reply_with_neither_a_tool_call_nor_an_action_is_a_bad_call() {
            let (mut e, _) = qa_engine_in(ToolMode::Native, 7);
            let c = calls(&e.handle(run_cmd()));
            let fx = e.handle(reply(c[0].0, &["I am not sure what to do here."]));
            assert!(tool_calls(&fx).is_empty(), "no tool for a reply without an action");
            let next = calls(&fx);
            assert_eq!(next.len(), 1, "the agent gets another step");
            let node = e.tree().node(NodeId(1));
            assert_eq!(node.issues.iter().filter(|i| i.is_bad_call()).count(), 1, "{:?}", node.issues);
            assert!(node.path.contains("Thought 1: I am not sure what to do here."), "{}", node.path);
            // The observation restates what is expected, naming the tools and their arguments.
            let observation = node.path.lines().find(|l| l.starts_with("Observation 1:")).unwrap();
            assert!(observation.contains("Invalid action: the reply called no tool"), "{observation}");
            assert!(observation.contains("search(entity)") && observation.contains("finish(answer)"), "{observation}");
            assert!(next[0].1.messages[0].content.contains(observation), "the model sees it");
        }

        #[test]
        fn unusable_tool_arguments_are_bad_calls_naming_the_problem() {
            let (mut e, _) = qa_engine_in(ToolMode::Native, 7);
            let c = calls(&e.handle(run_cmd()));
            // Arguments that were not valid JSON reach the engine as a string.
            let fx = e.handle(native(c[0].0, "Search.", &[("search", json!("{\"entity\": \"Ilse"))]));
            assert!(tool_calls(&fx).is_empty());
            let node = e.tree().node(NodeId(1));
            assert!(node.path.contains("Observation 1: Invalid action: the arguments of search are not a JSON object"));
            let c = calls(&fx);
            let fx = e.handle(native(c[0].0, "Look it up.", &[("lookup", json!({"word": "born", "page": 2}))]));
            assert!(tool_calls(&fx).is_empty());
            let node = e.tree().node(NodeId(2));
            assert!(node.path.contains("the call of lookup has no \"keyword\" argument"), "{}", node.path);
            // A single argument under another name is still the argument.
            let c = calls(&fx);
            let fx = e.handle(native(c[0].0, "", &[("search", json!({"query": "Ilse Varga"}))]));
            assert_eq!(tool_calls(&fx)[0].1.arg, "Ilse Varga");
            let bad = e.tree().nodes().filter(|n| n.issues.iter().any(Issue::is_bad_call)).count();
            assert_eq!(bad, 2);
        }

        #[test]
        fn text_mode_sessions_and_cache_keys_are_unchanged() {
            let react = Params::new(crate::engine::methods::react::KIND);
            let mut text = serde_json::to_value(&react).unwrap();
            assert_eq!(text["tool_mode"], "text", "a react header records its tool mode: {text}");
            text.as_object_mut().unwrap().remove("tool_mode");
            let back: Params = serde_json::from_value(text).unwrap();
            assert_eq!(back, react, "old sessions, which left text mode out, read as text mode");
            let native = react.with("tool_mode", "native");
            let v = serde_json::to_value(&native).unwrap();
            assert_eq!(v["tool_mode"], "native");
            assert_eq!(serde_json::from_value::<Params>(v).unwrap(), native);

            let (mut e, _) = qa_engine_in(ToolMode::Text, 7);
            let text_request = calls(&e.handle(run_cmd()))[0].1.clone();
            assert!(text_request.tools.is_empty());
            let key = text_request.cache_key("m");
            assert!(!key.contains("tools"), "{key}");
            assert!(!serde_json::to_string(&text_request).unwrap().contains("tools"));
            let (mut e, _) = qa_engine_in(ToolMode::Native, 7);
            let native_request = calls(&e.handle(run_cmd()))[0].1.clone();
            let mut without_tools = native_request.clone();
            without_tools.tools.clear();
            assert_ne!(native_request.cache_key("m"), without_tools.cache_key("m"), "the tools are part of the key");
        }

        #[test]
        fn the_sim_answers_native_requests_with_tool_calls() {
            let (mut e, _) = qa_engine_in(ToolMode::Native, 7);
            let c = calls(&e.handle(run_cmd()));
            let sim = crate::engine::sim::Simulator::new(
                crate::engine::sim::SimConfig { noise: 0.0, ..Default::default() },
                &crate::tasks::SimPlayers,
            );
            let response = sim.answer(&c[0].1).unwrap();
            let completion = &response.completions[0];
            assert_eq!(completion.tool_calls.len(), 1, "{completion:?}");
            assert_eq!(completion.tool_calls[0].name, "search");
            assert_eq!(completion.tool_calls[0].arguments, json!({"entity": "Ilse Varga"}));
            assert!(!completion.text.contains("Action"), "the text is only the thought: {}", completion.text);
            assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
        }
    }
}

/// The duplicate rule is the method's choice: the reference's 0 for a repeated state
/// in one batch, or a call for each.
#[test]
fn duplicates_in_a_batch_score_zero_or_are_asked_by_choice() {
    for (rule, calls_expected) in [(Duplicates::ScoreZero, 1), (Duplicates::Evaluate, 2)] {
        let mut e = engine(X, params(crate::engine::methods::tot_bfs::KIND));
        let root = e.tree().root();
        let same = "4 + 5 = 9 (left: 6 9 10)";
        let proposals = (0..2).map(|_| Proposal { thought: same.into(), path: format!("{same}\n"), problem: None });
        let ids = e.core.add_proposals(root, proposals.collect(), Origin::Model);
        let issued = e.core.evaluate(&ids, false, rule);
        assert_eq!(issued, calls_expected, "{rule:?}");
        let zero = e.tree().node(ids[1]).score.as_ref().map(|s| s.value);
        assert_eq!(zero, (rule == Duplicates::ScoreZero).then_some(0.0), "{rule:?}");
    }
}

/// A backtrack can name where to go: DFS pops up to an ancestor on its path (and
/// refuses a node off it), BFS takes one chosen state of the step before.
#[test]
fn backtrack_to_a_named_node() {
    // DFS two levels deep: root → #1 → #3; backtracking to the root drops #3 and #1.
    let mut e = engine(X, params(crate::engine::methods::tot_dfs::KIND).with("n_evaluate", 1).with("threshold", 3.0));
    let fx = e.handle(run_cmd());
    let fx = e.handle(reply(calls(&fx)[0].0, &["4 + 5 = 9 (left: 6 9 10)\n10 - 4 = 6 (left: 5 6 6)"]));
    let c = calls(&fx);
    e.handle(reply(c[0].0, &["sure"]));
    let fx = e.handle(reply(c[1].0, &["sure"]));
    let fx = e.handle(reply(calls(&fx)[0].0, &["6 + 9 = 15 (left: 10 15)"]));
    e.handle(reply(calls(&fx)[0].0, &["sure"]));
    let fx = e.handle(cmd(Command::Backtrack { to: Some(NodeId(2)), cause: None }));
    assert!(events(&fx)
        .iter()
        .any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("not on the search's path"))));
    let fx = e.handle(cmd(Command::Backtrack { to: Some(NodeId(0)), cause: None }));
    let ev = events(&fx);
    assert!(ev.contains(&Event::Backtracked { from: vec![NodeId(3)], to: vec![NodeId(1)] }), "{ev:?}");
    assert!(ev.contains(&Event::Backtracked { from: vec![NodeId(1)], to: vec![NodeId(0)] }), "{ev:?}");

    // BFS with b=2 kept #2 and #1 at step 1: backtracking to #5 makes it the frontier alone.
    let mut e = bfs(2);
    first_step(&mut e);
    let fx = e.handle(cmd(Command::Backtrack { to: Some(NodeId(5)), cause: None }));
    let ev = events(&fx);
    assert!(ev.contains(&Event::Backtracked { from: vec![NodeId(2), NodeId(1)], to: vec![NodeId(5)] }), "{ev:?}");
    assert_eq!(e.tree().node(NodeId(5)).status, NodeStatus::Frontier);
    assert_ne!(e.tree().node(NodeId(4)).status, NodeStatus::Frontier);
    let fx = e.handle(cmd(Command::Backtrack { to: Some(NodeId(1)), cause: None }));
    assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })), "#1 was explored");

    // Sessions keep the old form when no node is named.
    let json = serde_json::to_string(&Command::Backtrack { to: None, cause: None }).unwrap();
    assert_eq!(json, r#"{"cmd":"backtrack"}"#);
    assert_eq!(serde_json::from_str::<Command>(&json).unwrap(), Command::Backtrack { to: None, cause: None });
    let to = serde_json::from_str::<Command>(r#"{"cmd":"backtrack","to":4}"#).unwrap();
    assert_eq!(to, Command::Backtrack { to: Some(NodeId(4)), cause: None });
}

/// Game of 24 whose parsers misbehave: votes name choices past the list, and an edit
/// reads as no step at all. The engine must record these, never index out of bounds.
struct Adversarial(crate::tasks::game24::Game24);

impl Task for Adversarial {
    fn info(&self) -> &TaskInfo {
        self.0.info()
    }
    fn io_prompt(&self, x: &str) -> Prompt {
        self.0.io_prompt(x)
    }
    fn cot_prompt(&self, x: &str) -> Prompt {
        self.0.cot_prompt(x)
    }
    fn extract_answer(&self, x: &str, y: &str) -> Option<String> {
        self.0.extract_answer(x, y)
    }
    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        self.0.check(x, answer)
    }
    fn tree(&self) -> Option<&dyn TreeSearch> {
        Some(self)
    }
}

impl TreeSearch for Adversarial {
    fn default_steps(&self) -> usize {
        self.0.default_steps()
    }
    fn propose_prompt(&self, x: &str, y: &str) -> Prompt {
        self.0.propose_prompt(x, y)
    }
    fn sample_prompt(&self, x: &str, y: &str) -> Prompt {
        self.0.sample_prompt(x, y)
    }
    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal> {
        self.0.parse_proposals(x, y, reply)
    }
    fn parse_sample(&self, x: &str, y: &str, reply: &str) -> Proposal {
        self.0.parse_sample(x, y, reply)
    }
    fn parse_edit(&self, _x: &str, y: &str, _text: &str) -> Proposal {
        Proposal { thought: String::new(), path: y.to_string(), problem: Some("unreadable".into()) }
    }
    fn value(&self) -> Option<&dyn ValueEvaluator> {
        TreeSearch::value(&self.0)
    }
    fn vote(&self) -> Option<&dyn VoteEvaluator> {
        Some(self)
    }
    fn dfs_style(&self) -> crate::engine::task::DfsStyle {
        self.0.dfs_style()
    }
}

impl VoteEvaluator for Adversarial {
    fn vote_prompt(&self, x: &str, ys: &[String]) -> Prompt {
        self.0.vote_prompt(x, ys)
    }
    fn parse_vote(&self, reply: &str, n_choices: usize) -> Option<usize> {
        // Half the replies name the choice just past the end, the rest usize::MAX.
        Some(if reply.len() % 2 == 0 { n_choices } else { usize::MAX })
    }
}

fn adversarial(params: Params) -> Engine {
    Engine::new(Arc::new(Adversarial(crate::tasks::game24::Game24::builtin())), "4 9 10 13", params)
}

#[test]
fn votes_for_choices_past_the_list_are_not_counted_and_do_not_panic() {
    let p = params(crate::engine::methods::tot_bfs::KIND).with("evaluator", "vote").with("n_evaluate", 3);
    let mut e = adversarial(p);
    let events = run_sync(&mut e, run_cmd(), sim(0.0, 1));
    assert!(e.is_finished());
    let logged = events.iter().any(|ev| format!("{ev:?}").contains("named a choice outside 1.."));
    assert!(logged, "the unreadable votes are recorded in the transcript");
    assert!(e.tree().nodes().filter_map(|n| n.score.as_ref()).all(|s| s.value == 0.0), "no vote was counted");
}

#[test]
fn an_edit_the_task_reads_as_no_step_is_rejected_not_a_panic() {
    let mut e = adversarial(params(crate::engine::methods::tot_bfs::KIND).with("n_evaluate", 1));
    let fx = e.handle(cmd(Command::Step { n: 1 }));
    let c = calls(&fx);
    e.handle(reply(c[0].0, &["4 + 9 = 13 (left: 10 13 13)"]));
    let fx = e.handle(cmd(Command::Edit { node: NodeId(1), text: "13 - 10 = 3 (left: 3 13)".into() }));
    let ev = events(&fx);
    assert!(ev.iter().any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("not a step"))), "{ev:?}");
}

#[test]
fn a_person_edits_pins_and_removes_memory_entries_and_each_change_is_an_event() {
    use crate::memory::{Category, Memory, MemoryChange};
    let mut e = bfs(1);
    let fx = e.handle(cmd(Command::Memory { change: MemoryChange::Remove { id: 0 } }));
    assert!(
        events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("no memory"))),
        "{fx:?}"
    );
    let mut memory = Memory::default();
    let id = memory.add("casework: list every case before counting", Category::Failure, "casework", None).unwrap().id();
    e.set_memory(Some(memory));
    // The snapshot's own journal is not this run's change.
    assert!(!events(&e.handle(cmd(Command::Pause))).iter().any(|ev| matches!(ev, Event::Memory { .. })));
    let pin = MemoryChange::Edit { id, content: None, confidence: None, pinned: Some(true) };
    let fx = e.handle(cmd(Command::Memory { change: pin.clone() }));
    assert!(events(&fx).contains(&Event::Memory { change: pin }), "{fx:?}");
    assert!(e.memory().unwrap().entry(id).unwrap().pinned);
    let fx = e.handle(cmd(Command::Memory { change: MemoryChange::Consolidate }));
    assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })), "only edits and removals by hand");
    let fx = e.handle(cmd(Command::Memory { change: MemoryChange::Remove { id: 7 } }));
    assert!(
        events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { reason } if reason.contains("no memory entry 7"))),
        "{fx:?}"
    );
    let fx = e.handle(cmd(Command::Memory { change: MemoryChange::Remove { id } }));
    assert!(events(&fx).contains(&Event::Memory { change: MemoryChange::Remove { id } }));
    assert!(e.memory().unwrap().is_empty());
}
