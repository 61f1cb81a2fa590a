//! Property tests: whatever a model replies, the reply parsers and the engine that
//! uses them never panic. Proposal, sample, edit, value, vote and ReAct step parsing
//! of every registered task, the ReAct text parsers, and whole searches fed arbitrary
//! replies. Short runs (256 cases each) so they belong in the normal `cargo test`.

use std::collections::VecDeque;

use proptest::prelude::*;

use thoughtscope::engine::{Command, Effect, Engine, Input, LlmReply, MethodKind, Params};
use thoughtscope::protocol::{Completion, LlmResponse, Usage};
use thoughtscope::tasks::{self, react_text, TaskOptions};

/// Text shaped like replies (steps, values, votes, ReAct lines) around arbitrary text,
/// so the parsers' interesting branches are reached, not only their first check.
fn reply() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9 +*/()=-]{0,30}\\(left: [0-9 .-]{0,12}\\)?",
        "(Answer|answer): [0-9 +*/()=-]{0,30}",
        "(sure|likely|impossible|Sure|LIKELY|[a-z]{0,8})\n?",
        "[\\s\\S]{0,20}(best choice is|The best choice is) -?[0-9]{0,25}[\\s\\S]{0,5}",
        "(Thought|Action|Observation) ?[0-9]{0,20}: ?(Search|Lookup|Finish|[a-z]{0,5})\\[[^\\]]{0,12}\\]?[\\s\\S]{0,10}",
        "\n{0,3}[\\s\\S]{0,10}\n(Thought|Action) [0-9]{1,3}:[^\n]{0,20}\n{0,2}",
    ]
}

fn replies() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(reply(), 0..6)
}

fn all_tasks() -> Vec<std::sync::Arc<dyn tasks::TaskSource>> {
    tasks::REGISTRY
        .iter()
        .map(|e| tasks::build(&e.info.name, &TaskOptions::default(), &mut Vec::new()).expect("builds"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn task_parsers_never_panic(x in reply(), y in reply(), text in reply(), samples in replies(), n in 0usize..12, step in 0usize..40) {
        for task in all_tasks() {
            if let Some(tree) = task.tree() {
                for p in tree.parse_proposals(&x, &y, &text) {
                    prop_assert!(!p.thought.contains('\n') || task.info().name != "game24", "one line per game24 step");
                }
                let _ = tree.parse_sample(&x, &y, &text);
                let _ = tree.parse_edit(&x, &y, &text);
                if let Some(evaluator) = tree.value() {
                    let (value, labels) = evaluator.parse_value(&x, &y, &samples);
                    prop_assert!(!value.is_nan());
                    prop_assert!(labels.len() == samples.len() || labels.is_empty());
                    let _ = evaluator.fixed_value(&x, &y);
                }
                if let Some(vote) = tree.vote() {
                    if let Some(i) = vote.parse_vote(&text, n) {
                        prop_assert!(i < n, "{}: vote {i} of {n} choices", task.info().name);
                    }
                }
                if let Some(scored) = tree.proposal_scores() {
                    let _ = scored.merge_proposals(&x, &y, &samples);
                }
            }
            if let Some(react) = task.react() {
                let _ = react.parse_react(&text, step);
            }
            if let Some(feedback) = task.feedback() {
                let _ = feedback.parse_feedback(&text);
            }
            let _ = task.extract_answer(&x, &y);
            let _ = task.check(&x, &text);
            let _ = task.describe_state(&x, &y);
            let _ = task.parse_input(&text);
        }
    }

    #[test]
    fn react_step_parsers_never_panic(text in reply(), step in 0usize..1000) {
        let _ = react_text::parse_step(&text, step);
        let _ = react_text::parse_step_reference(&text, step);
        let _ = react_text::describe_trajectory(&text);
        let _ = react_text::normalize_answer(&text);
        let f1 = react_text::f1(&text, "the gold answer");
        prop_assert!((0.0..=1.0).contains(&f1));
    }

    #[test]
    fn searches_fed_arbitrary_replies_never_panic(pool in prop::collection::vec(reply(), 1..8), method in 0usize..6) {
        let name = ["tot-bfs", "tot-dfs", "mcts", "cot-sc", "cot", "io"][method];
        let method = MethodKind::from_name(name).expect("a registered method");
        let task = tasks::build("game24", &TaskOptions::default(), &mut Vec::new()).expect("game24");
        let mut engine = Engine::new(task, "4 9 10 13", Params::new(method));
        let mut pool = pool.into_iter().cycle();
        let mut queue = VecDeque::new();
        let mut input = Input::command(Command::Run);
        // Enough inputs for a whole search; a search that never ends is not this test's concern.
        for _ in 0..400 {
            for effect in engine.handle(input) {
                match effect {
                    Effect::CallLlm { call, request } => queue.push_back((call, request.n.max(1))),
                    Effect::Cancel { calls } => queue.retain(|(c, _)| !calls.contains(c)),
                    _ => {}
                }
            }
            let Some((call, n)) = queue.pop_front() else { break };
            let completions = (0..n).map(|_| Completion::text(pool.next().unwrap_or_default(), None)).collect();
            input = Input::LlmReply(LlmReply {
                call,
                result: Ok(LlmResponse {
                    completions,
                    usage: Usage::default(),
                    latency_ms: 0,
                    model: "proptest".into(),
                    simulated: false,
                    cached: false,
                    lost: None,
                }),
            });
        }
    }
}
