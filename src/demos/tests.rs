//! The demo recordings' own checks (the explorer's tests play them).

use super::*;

/// Tool state belongs to a branch: every observation a shipped demo recorded is the one
/// a live run's tool runner gives that step, continuing the tool state (page, lookup
/// cursor) of the step it comes after, whatever other branches did first. (Demo 6's
/// edited step once saw the abandoned branch's lookup cursor: "Result 2 / 3".)
#[test]
fn every_recorded_observation_is_what_its_own_branch_would_see() {
    let mut checked = 0;
    for demo in &DEMOS {
        let session = load(demo).unwrap();
        let task = crate::tasks::build(&session.header.task, &TaskOptions::default(), &mut Vec::new()).unwrap();
        let Some(registry) = task.tools() else { continue };
        let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
        let mut live = ToolRunner::new(registry);
        for call in &rebuilt.tool_calls {
            let again = futures::executor::block_on(live.run(&call.tool, call.node, call.after));
            assert_eq!(again.text, call.result.text, "{}: {:?} at {}", demo.file, call.tool, call.node);
            checked += 1;
        }
    }
    assert!(checked > 5, "{checked} tool calls");
}

/// The edit in demo 6 continues from the page its step comes after, with a fresh
/// lookup cursor: the first result, which names the river the answer then gives.
#[test]
fn the_react_edit_demo_shows_what_the_edited_branch_saw() {
    let session = load(&DEMOS[5]).unwrap();
    let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
    let tree = rebuilt.engine.tree();
    let edited = tree.nodes().find(|n| matches!(n.origin, crate::engine::Origin::Human { .. })).unwrap();
    let after_edit: Vec<_> = rebuilt.tool_calls.iter().filter(|c| tree.is_within(c.node, edited.id)).collect();
    assert!(after_edit[0].result.text.starts_with("(Result 1 / 3)"), "{}", after_edit[0].result.text);
    let answer = rebuilt.engine.outcome().and_then(|o| o.answer.clone()).unwrap();
    assert!(after_edit[0].result.text.contains(&answer), "the branch saw {answer} before answering it");
}
