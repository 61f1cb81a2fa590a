//! Issue 28, what steering shows: `x` on an expanded node marks the children that
//! repeat earlier ones and says so, `v` logs the old and the new value, a hand-expanded
//! candidate is ●, DFS children that pass the threshold are ○, a BFS step does not
//! count a pruned subtree's children as its candidates, and bars are on the task's scale.

use super::*;

fn logs(app: &App) -> Vec<String> {
    app.session
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Log { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn expanding_again_marks_the_repeats_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    let root = app.session.run.engine.tree().root();
    let first: Vec<NodeId> = app.session.run.engine.tree().node(root).children.clone();
    assert!(!first.is_empty());
    select(&mut app, root);
    act(&mut app, Action::Expand);
    let tree = app.session.run.engine.tree();
    let again: Vec<NodeId> = tree.node(root).children.iter().copied().filter(|c| !first.contains(c)).collect();
    let mut repeats = 0;
    for &c in &again {
        let twin = first.iter().find(|&&f| tree.node(f).path == tree.node(c).path);
        match twin {
            Some(twin) => {
                repeats += 1;
                assert_eq!(tree.node(c).status, NodeStatus::Invalid(format!("duplicate of {twin}")));
                assert!(tree.node(c).score.is_none(), "a repeat is not valued again");
            }
            None => assert!(!matches!(tree.node(c).status, NodeStatus::Invalid(_)), "{c} is new"),
        }
    }
    assert!(repeats > 0, "the same prompt gives the same proposals (the issue's #49–#56 = #1–#8)");
    let log = logs(&app);
    assert!(log
        .iter()
        .any(|l| l.starts_with(&format!("expanding {root} by hand again (it has {} children)", first.len()))));
    let said = format!("{repeats} of {} new children of {root} repeat earlier ones, marked ✗ duplicate:", again.len());
    assert!(log.iter().any(|l| l.starts_with(&said)), "{said:?} in {log:#?}");
    // The tree marks them ✗ with the reason in the detail pane.
    let screen = render(&mut app, 160, 45);
    assert!(screen.contains("✗"), "{screen}");
}

#[test]
fn reevaluating_logs_the_old_and_the_new_value_and_a_hand_expanded_candidate_is_expanded() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let tree = app.session.run.engine.tree();
    let node = tree.nodes().find(|n| n.depth == 1 && n.score.is_some()).unwrap().id;
    let before = tree.value(node).unwrap();
    select(&mut app, node);
    act(&mut app, Action::Reevaluate);
    let after = app.session.run.engine.tree().value(node).unwrap();
    let fmt = crate::engine::tree::format_value;
    let log = logs(&app);
    assert!(log.contains(&format!("re-evaluating {node} (now {})", fmt(before))), "{log:#?}");
    assert!(log.contains(&format!("re-evaluated {node}: {} → {}", fmt(before), fmt(after))), "{log:#?}");
    for (w, h) in [(80, 24), (160, 45)] {
        let rows = pane_rows(&mut app, Pane::Transcript, w, h).join(" ");
        assert!(rows.contains(&format!("re-evaluated {node}:")), "{w}x{h}: {rows}");
    }

    // A candidate (·) expanded by hand has children: ●.
    let tree = app.session.run.engine.tree();
    let candidate = tree.nodes().find(|n| n.status == NodeStatus::Candidate && n.children.is_empty()).map(|n| n.id);
    let dropped = tree.nodes().find(|n| matches!(n.status, NodeStatus::Dropped(_))).map(|n| n.id);
    let target = candidate.or(dropped).unwrap();
    let was = tree.node(target).status.clone();
    select(&mut app, target);
    act(&mut app, Action::Expand);
    let tree = app.session.run.engine.tree();
    assert!(!tree.node(target).children.is_empty());
    if was == NodeStatus::Candidate {
        assert_eq!(tree.node(target).status, NodeStatus::Expanded);
    }
}

#[test]
fn dfs_children_that_pass_the_threshold_wait_as_frontier() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::new(crate::engine::methods::tot_dfs::KIND));
    for _ in 0..3 {
        act(&mut app, Action::Step);
    }
    let tree = app.session.run.engine.tree();
    let threshold = 3.0;
    let root = tree.root();
    let children = &tree.node(root).children;
    let passing: Vec<&crate::engine::Node> = children
        .iter()
        .map(|&c| tree.node(c))
        .filter(|n| n.score.as_ref().is_some_and(|s| s.value >= threshold))
        .collect();
    assert!(passing.len() > 1, "more than the one tried passes");
    for n in passing {
        assert!(matches!(n.status, NodeStatus::Frontier | NodeStatus::Expanded), "{} is {:?}", n.id, n.status);
    }
    assert!(!children.iter().any(|&c| {
        let n = tree.node(c);
        n.status == NodeStatus::Candidate && n.score.is_some()
    }));
}

#[test]
fn a_bfs_step_counts_no_pruned_subtree_and_bars_are_on_the_value_scale() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    // Prune a kept state once its children are generated, before the step selects.
    for _ in 0..3 {
        act(&mut app, Action::Step);
    }
    let tree = app.session.run.engine.tree();
    let kept = tree.nodes().find(|n| n.depth == 1 && !n.children.is_empty()).unwrap().id;
    select(&mut app, kept);
    act(&mut app, Action::Prune);
    act(&mut app, Action::Step);
    let tree = app.session.run.engine.tree();
    let (step, kept_now, candidates) = app
        .session
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Selected { step, kept, candidates } => Some((*step, kept.len(), *candidates)),
            _ => None,
        })
        .unwrap();
    let depth2: Vec<&crate::engine::Node> = tree.nodes().filter(|n| n.depth == 2).collect();
    let pruned = depth2.iter().filter(|n| tree.is_pruned(n.id)).count();
    assert!(pruned > 0, "the pruned state had children");
    assert_eq!(candidates, depth2.len() - pruned, "the step's candidates leave out the pruned subtree");
    let line = format!("step {}: kept {kept_now} of {candidates} candidates", step + 1);
    let log = logs(&app);
    let said = log.iter().find(|l| l.starts_with(&line)).unwrap_or_else(|| panic!("{line:?} in {log:#?}"));
    assert!(said.contains(&format!("; {pruned} in pruned subtrees not counted")), "{said}");

    // Game of 24 values are sums of 3 samples of at most 20 (sure): the bar is out of 60.
    let rows = pane_rows(&mut app, Pane::Scores, 160, 45);
    let mut checked = 0;
    for n in app.session.run.engine.tree().nodes().filter(|n| n.depth == 2 && n.score.is_some()) {
        let v = n.score.as_ref().unwrap().value;
        let Some(row) = rows.iter().find(|r| r.contains(&format!(" {} ", n.id))) else { continue };
        let filled = row.chars().filter(|&c| c == '█').count();
        let width = filled + row.chars().filter(|&c| c == '░').count();
        assert_eq!(filled, ((v / 60.0) * width as f64).round() as usize, "{row}");
        checked += 1;
    }
    assert!(checked > 0, "{rows:#?}");
}

/// A node expanded by hand before the search step reaches it: the step's children that
/// repeat the hand-made ones are marked duplicates too, not valued and not kept (issue 28:
/// #33 = #9 went into the beam with nothing said).
#[test]
fn a_search_step_after_a_hand_expansion_marks_its_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    // Step until the first selection has kept nodes that wait for the next step.
    let mut frontier = None;
    for _ in 0..6 {
        act(&mut app, Action::Step);
        let tree = app.session.run.engine.tree();
        frontier = tree.nodes().find(|n| n.depth == 1 && n.status == NodeStatus::Frontier).map(|n| n.id);
        if frontier.is_some() {
            break;
        }
    }
    let node = frontier.expect("a kept node waits for the next step");
    select(&mut app, node);
    act(&mut app, Action::Expand);
    let by_hand: Vec<NodeId> = app.session.run.engine.tree().node(node).children.clone();
    assert!(!by_hand.is_empty());
    act(&mut app, Action::Step);
    let tree = app.session.run.engine.tree();
    let again: Vec<NodeId> = tree.node(node).children.iter().copied().filter(|c| !by_hand.contains(c)).collect();
    assert!(!again.is_empty(), "the step expanded {node} again");
    let mut repeats = Vec::new();
    for &c in &again {
        match by_hand.iter().find(|&&h| tree.node(h).path == tree.node(c).path) {
            Some(&twin) => {
                assert_eq!(tree.node(c).status, NodeStatus::Invalid(format!("duplicate of {twin}")));
                assert!(tree.node(c).score.is_none(), "a repeat is not valued again");
                repeats.push(c);
            }
            None => assert!(!matches!(tree.node(c).status, NodeStatus::Invalid(ref r) if r.starts_with("duplicate"))),
        }
    }
    assert!(!repeats.is_empty(), "sim gives the same proposals for the same prompt");
    let said =
        format!("{} of {} new children of {node} repeat earlier ones, marked ✗ duplicate:", repeats.len(), again.len());
    assert!(logs(&app).iter().any(|l| l.starts_with(&said)), "{said:?} in {:#?}", logs(&app));
    // The hand-made children are the step's candidates too: once the step selects, each
    // is kept or dropped below the beam, and the count of candidates holds them.
    for _ in 0..6 {
        if logs(&app).iter().any(|l| l.starts_with("step 2: kept")) {
            break;
        }
        act(&mut app, Action::Step);
    }
    let tree = app.session.run.engine.tree();
    for &h in &by_hand {
        let status = &tree.node(h).status;
        assert!(matches!(status, NodeStatus::Frontier | NodeStatus::Dropped(_)), "{h} was a candidate: {status:?}");
    }
    let kept = logs(&app).into_iter().find(|l| l.starts_with("step 2: kept")).expect("step 2 selected");
    let candidates: usize = tree.nodes().filter(|n| n.depth == 2 && !tree.is_pruned(n.id)).count();
    assert!(kept.contains(&format!(" of {candidates} candidates")), "{kept}");
    // Within one step, no child is compared with its own step's siblings: a first
    // expansion marks nothing.
    let tree = app.session.run.engine.tree();
    let marked = tree.nodes().filter(|n| matches!(&n.status, NodeStatus::Invalid(r) if r.starts_with("duplicate")));
    assert!(marked.map(|n| n.id).all(|id| repeats.contains(&id)));
}
