//! Finding nodes in the explorer, driven by keys and drawn at 80×24 and 160×45: `/` a
//! regex (`n`/`N` from match to match, round at the ends, matches marked in the tree
//! pane, the count in its title), `#` a node by number, ctrl-f a filter, `z` zoom.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::engine::Score;
use crate::tui::theme::Slot;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

fn press(app: &mut App, code: KeyCode, modifiers: KeyModifiers) {
    let effects = app.handle_key(KeyEvent::new(code, modifiers));
    settle(app, effects);
}

fn key(app: &mut App, c: char) {
    press(app, KeyCode::Char(c), KeyModifiers::NONE);
}

/// Type `text` into the open prompt and press enter.
fn enter(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, c);
    }
    press(app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(app.popup.is_none(), "enter closes the prompt");
}

fn message(app: &App) -> String {
    app.message.clone().unwrap_or_default()
}

/// A tree made by hand, so what matches is known:
///
/// ```text
/// #0 the input
/// ├ #1 alpha one
/// │ ├ #3 beta
/// │ └ #4 alpha two      (pruned)
/// └ #2 gamma            (score 5)
///   └ #5 ALPHA three    (a solution)
/// ```
///
/// `#3` scores 0.1. In tree order the `alpha` nodes are #1, #4, #5.
fn hand_tree(dir: &Path) -> App {
    let mut app = live(dir, Params::default());
    let tree = &mut app.session.run.engine.core.tree;
    let one = tree.add_child(NodeId(0), "alpha one".into(), String::new(), Origin::Model);
    let gamma = tree.add_child(NodeId(0), "gamma".into(), String::new(), Origin::Model);
    let beta = tree.add_child(one, "beta".into(), String::new(), Origin::Model);
    let two = tree.add_child(one, "alpha two".into(), String::new(), Origin::Model);
    let three = tree.add_child(gamma, "ALPHA three".into(), String::new(), Origin::Model);
    tree.node_mut(two).status = NodeStatus::Pruned;
    tree.node_mut(three).status = NodeStatus::Solution;
    let score = |value| Some(Box::new(Score { value, samples: Vec::new(), note: None }));
    tree.node_mut(beta).score = score(0.1);
    tree.node_mut(gamma).score = score(5.0);
    app.session.revision += 1;
    app.view.focus = Pane::Tree;
    app.handle_action(Action::Top);
    assert_eq!(app.selected(), NodeId(0));
    app
}

/// The ids on the tree pane's rows, top to bottom.
fn row_ids(app: &mut App, width: u16, height: u16) -> Vec<usize> {
    pane_rows(app, Pane::Tree, width, height)
        .iter()
        .filter_map(|row| {
            let at = row.find('#')?;
            let digits: String = row[at + 1..].chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

/// The screen as text and the cell of the first `#id ` drawn in the tree pane.
fn screen_and_id_cell(app: &mut App, width: u16, height: u16, id: usize) -> (String, Option<ratatui::buffer::Cell>) {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            ui::draw_app(f, app);
        })
        .unwrap();
    let area = app.areas[Pane::Tree.index()];
    let buffer = terminal.backend().buffer().clone();
    let wanted = format!("#{id} ");
    let mut cell = None;
    for y in area.y..area.bottom() {
        let row: String = (area.x..area.right()).map(|x| buffer[(x, y)].symbol().to_string()).collect();
        if let Some(at) = row.find(&wanted) {
            let column = row[..at].chars().count() as u16;
            cell = Some(buffer[(area.x + column, y)].clone());
            break;
        }
    }
    (format!("{}", terminal.backend()), cell)
}

#[test]
fn find_selects_the_matches_in_tree_order_counts_them_and_wraps_both_ways() {
    for (width, height) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = hand_tree(dir.path());
        key(&mut app, '/');
        assert!(matches!(app.popup, Some(super::super::app::Popup::Ask { .. })), "/ opens the prompt");
        enter(&mut app, "alpha");
        // Lower case ignores case: ALPHA three matches too.
        assert_eq!(app.selected(), NodeId(1), "the first match from the selection on");
        assert_eq!(message(&app), "/alpha/: match 1 of 3");
        let (screen, _) = screen_and_id_cell(&mut app, width, height, 1);
        assert!(screen.contains("/alpha/ 1 of 3"), "the tree pane's title counts the matches:\n{screen}");
        let mut seen = Vec::new();
        for _ in 0..3 {
            key(&mut app, 'n');
            seen.push((app.selected().0, message(&app)));
        }
        assert_eq!(
            seen,
            [
                (4, "/alpha/: match 2 of 3".to_string()),
                (5, "/alpha/: match 3 of 3".to_string()),
                (1, "/alpha/: match 1 of 3 (round from the other end)".to_string()),
            ],
            "n goes in tree order and wraps"
        );
        key(&mut app, 'N');
        assert_eq!(
            (app.selected(), message(&app)),
            (NodeId(5), "/alpha/: match 3 of 3 (round from the other end)".into())
        );
        key(&mut app, 'N');
        assert_eq!((app.selected(), message(&app)), (NodeId(4), "/alpha/: match 2 of 3".into()));
        // From a node that is no match, n and N go to the matches either side of it.
        app.handle_action(Action::Down);
        assert_eq!(app.selected(), NodeId(2));
        key(&mut app, 'N');
        assert_eq!(app.selected(), NodeId(4));
        app.handle_action(Action::Down);
        key(&mut app, 'n');
        assert_eq!(app.selected(), NodeId(5));
        let (screen, _) = screen_and_id_cell(&mut app, width, height, 5);
        assert!(screen.contains("/alpha/ 3 of 3"), "{screen}");
    }
}

#[test]
fn matches_are_marked_in_the_tree_and_n_opens_a_folded_ancestor() {
    for (width, height) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = hand_tree(dir.path());
        key(&mut app, '/');
        enter(&mut app, "alpha");
        let found = app.theme().style(Slot::FindMatch);
        let (_, cell) = screen_and_id_cell(&mut app, width, height, 4);
        assert_eq!(cell.map(|c| c.bg), found.bg, "a match's number is marked");
        let (_, cell) = screen_and_id_cell(&mut app, width, height, 3);
        assert_ne!(cell.map(|c| c.bg), found.bg, "a node that does not match is not");
        // Fold #2: its match #5 is not on a row until n goes to it.
        app.handle_action(Action::Down);
        app.handle_action(Action::Down);
        app.handle_action(Action::Down);
        assert_eq!(app.selected(), NodeId(2));
        key(&mut app, 'c');
        assert!(!row_ids(&mut app, width, height).contains(&5), "#2 is folded");
        key(&mut app, 'n');
        assert_eq!(app.selected(), NodeId(5));
        assert_eq!(row_ids(&mut app, width, height), [0, 1, 3, 4, 2, 5], "#2 was opened");
        // A capital letter makes the case count.
        key(&mut app, '/');
        for _ in 0.."alpha".len() {
            press(&mut app, KeyCode::Backspace, KeyModifiers::NONE);
        }
        enter(&mut app, "ALPHA");
        assert_eq!((app.selected(), message(&app)), (NodeId(5), "/ALPHA/: match 1 of 1".into()));
    }
}

#[test]
fn the_matches_are_computed_once_per_query_and_again_when_the_tree_grows() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = hand_tree(dir.path());
    key(&mut app, '/');
    enter(&mut app, "alpha");
    for _ in 0..5 {
        render(&mut app, 80, 24);
        key(&mut app, 'n');
    }
    assert_eq!(app.find.as_ref().map(|f| f.computed()), Some(1), "frames and n look the matches up");
    app.session.run.engine.core.tree.add_child(NodeId(3), "alpha four".into(), String::new(), Origin::Model);
    render(&mut app, 80, 24);
    render(&mut app, 80, 24);
    let find = app.find.as_ref().unwrap();
    assert_eq!((find.computed(), find.count()), (2, 4), "once more for the grown tree");
}

#[test]
fn find_searches_the_replies_behind_a_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    // The evaluator's replies say "impossible" of some states (their score samples say so).
    let judged: Vec<usize> = app
        .session
        .run
        .engine
        .tree()
        .nodes()
        .filter(|n| n.score.as_ref().is_some_and(|s| s.samples.iter().any(|c| c == "impossible")))
        .map(|n| n.id.0)
        .collect();
    assert!(!judged.is_empty(), "some state was judged impossible");
    key(&mut app, '/');
    enter(&mut app, "impossible");
    let find = app.find.as_ref().unwrap();
    for id in &judged {
        assert!(find.is_match(*id), "#{id}'s value reply says impossible");
    }
    assert!(message(&app).starts_with("/impossible/: match 1 of "), "{}", message(&app));
    assert!(find.is_match(app.selected().0));
}

/// `/` finds in a reply's thinking too, folded or not.
#[test]
fn find_searches_the_thinking_behind_a_node() {
    let dir = tempfile::tempdir().unwrap();
    let which = crate::demos::DEMOS.iter().position(|d| d.file == "thinking-bfs.jsonl").unwrap();
    let mut app = demo_replay(dir.path(), which);
    // Words only the thinking has (the proposals never say them).
    assert!(app.session.run.engine.tree().nodes().all(|n| !n.thought.contains("double-check")));
    let replies = app.session.run.engine.core.calls.values().filter_map(|c| c.reply.as_ref()?.as_ref().ok());
    assert!(replies.flat_map(|r| &r.completions).all(|c| !c.text.contains("double-check")));
    key(&mut app, '/');
    enter(&mut app, "double-check");
    assert!(message(&app).starts_with("/double-check/: match "), "{}", message(&app));
    assert!(app.find.as_ref().unwrap().is_match(app.selected().0));
}

#[test]
fn a_bad_regex_is_one_line_and_esc_cancels_the_prompt() {
    for (width, height) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = hand_tree(dir.path());
        key(&mut app, '/');
        enter(&mut app, "alpha(");
        let said = message(&app);
        assert!(said.starts_with("bad regex /alpha(/: "), "{said}");
        assert!(!said.contains('\n'), "one line: {said:?}");
        assert!(app.find.is_none(), "no find is on");
        let screen = render(&mut app, width, height);
        assert!(screen.contains("bad regex /alpha(/"), "{screen}");
        // n with no find on is still the next solution.
        key(&mut app, 'n');
        assert_eq!(app.selected(), NodeId(5));
        // Esc leaves the prompt and changes nothing.
        key(&mut app, '/');
        key(&mut app, 'b');
        press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
        assert!(app.popup.is_none() && app.find.is_none());
        assert_eq!(app.selected(), NodeId(5));
        // An empty query clears a find.
        key(&mut app, '/');
        enter(&mut app, "beta");
        assert_eq!(app.selected(), NodeId(3), "round from #5 to the one match");
        key(&mut app, '/');
        for _ in 0.."beta".len() {
            press(&mut app, KeyCode::Backspace, KeyModifiers::NONE);
        }
        enter(&mut app, "");
        assert!(app.find.is_none(), "{}", message(&app));
        assert_eq!(message(&app), "find /beta/ cleared");
    }
}

#[test]
fn goto_selects_node_n_and_says_plainly_when_there_is_none() {
    for (width, height) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = hand_tree(dir.path());
        // Fold #2: going to #5 opens it.
        key(&mut app, '#');
        enter(&mut app, "2");
        assert_eq!(app.selected(), NodeId(2));
        key(&mut app, 'c');
        assert!(!row_ids(&mut app, width, height).contains(&5));
        key(&mut app, ':');
        enter(&mut app, "5");
        assert_eq!((app.selected(), message(&app)), (NodeId(5), "node #5".into()));
        assert!(row_ids(&mut app, width, height).contains(&5), "its folded parent was opened");
        key(&mut app, '#');
        enter(&mut app, "#3");
        assert_eq!(app.selected(), NodeId(3), "a typed # is fine");
        key(&mut app, '#');
        enter(&mut app, "99");
        assert_eq!(message(&app), "there is no node #99: this tree has 6 nodes, #0 to #5");
        assert_eq!(app.selected(), NodeId(3), "the selection stays");
        key(&mut app, ':');
        enter(&mut app, "x1");
        assert_eq!(message(&app), "\"x1\" is not a node number: type one from 0 to 5");
        let screen = render(&mut app, width, height);
        assert!(screen.contains("is not a node number"), "{screen}");
    }
}

fn filter(app: &mut App, condition: &str) {
    press(app, KeyCode::Char('f'), KeyModifiers::CONTROL);
    enter(app, condition);
}

#[test]
fn the_filter_shows_the_matching_nodes_with_their_ancestors_and_clears() {
    for (width, height) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = hand_tree(dir.path());
        assert_eq!(row_ids(&mut app, width, height), [0, 1, 3, 4, 2, 5]);
        filter(&mut app, "solution");
        assert_eq!(row_ids(&mut app, width, height), [0, 2, 5], "the solution and its ancestors");
        assert_eq!(app.selected(), NodeId(5), "the selection moved to the first node meeting it");
        let screen = render(&mut app, width, height);
        assert!(screen.contains("filter solution: 1"), "the title says the filter is on:\n{screen}");
        // A find looks among the nodes shown.
        key(&mut app, '/');
        enter(&mut app, "alpha");
        assert_eq!(message(&app), "/alpha/: match 1 of 1");
        // Going to a hidden node says so.
        key(&mut app, '#');
        enter(&mut app, "3");
        assert_eq!(message(&app), "node #3 is hidden by the filter (ctrl-f clears it)");
        // The same key again clears it.
        press(&mut app, KeyCode::Char('f'), KeyModifiers::CONTROL);
        assert!(app.popup.is_none() && app.filter.is_none());
        assert_eq!(message(&app), "filter solution cleared: every node is shown");
        assert_eq!(row_ids(&mut app, width, height), [0, 1, 3, 4, 2, 5]);
        assert_eq!(app.find.as_ref().map(|f| f.count()), Some(3), "the find sees every node again");
        for (condition, rows) in [
            ("pruned", vec![0, 1, 4]),
            ("score<0.5", vec![0, 1, 3]),
            ("score>1", vec![0, 2]),
            ("thought~/^gamma$/", vec![0, 2]),
            ("pruned, solution", vec![0, 1, 4, 2, 5]),
        ] {
            filter(&mut app, condition);
            assert_eq!(row_ids(&mut app, width, height), rows, "filter {condition}");
            // An empty condition clears it too.
            filter(&mut app, "");
            assert!(app.filter.is_none());
        }
        filter(&mut app, "calls>3");
        assert!(app.filter.is_none());
        assert!(
            message(&app).starts_with("filter `calls>3`: a condition on the whole run, not on a node"),
            "{}",
            message(&app)
        );
        filter(&mut app, "nonsense");
        let said = message(&app);
        assert!(
            said.starts_with("filter `nonsense`: `nonsense` is not a condition; accepted: solution, pruned"),
            "{said}"
        );
        assert!(!said.contains('\n'));
        assert_eq!(row_ids(&mut app, width, height), [0, 1, 3, 4, 2, 5]);
    }
}

#[test]
fn the_filter_follows_a_growing_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    filter(&mut app, "score<1");
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let tree = app.session.run.engine.tree();
    let low = |n: &crate::engine::Node| n.score.as_ref().is_some_and(|s| s.value < 1.0);
    let valued: Vec<usize> = tree.nodes().filter(|n| low(n)).map(|n| n.id.0).collect();
    assert!(!valued.is_empty(), "some state was valued below 1");
    let rows = row_ids(&mut app, 160, 200);
    for id in &valued {
        assert!(rows.contains(id), "#{id} is valued below 1");
        let mut at = app.session.run.engine.tree().node(NodeId(*id)).parent;
        while let Some(parent) = at {
            assert!(rows.contains(&parent.0), "#{id}'s ancestor #{} is shown", parent.0);
            at = app.session.run.engine.tree().node(parent).parent;
        }
    }
    let tree = app.session.run.engine.tree();
    assert!(rows.len() < tree.len(), "some nodes are hidden: {} of {}", rows.len(), tree.len());
    for id in &rows {
        let node = tree.node(NodeId(*id));
        assert!(
            *id == 0 || low(node) || valued.iter().any(|&d| app.path_to(NodeId(d)).contains(id)),
            "#{id} neither meets the filter nor leads to a node that does"
        );
    }
}

#[test]
fn zoom_gives_the_focused_pane_the_screen_and_back() {
    for (width, height) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = hand_tree(dir.path());
        render(&mut app, width, height);
        let normal = app.areas;
        let all = normal.iter().fold(normal[0], |all, p| all.union(*p));
        app.view.focus = Pane::Detail;
        key(&mut app, 'z');
        let screen = render(&mut app, width, height);
        assert_eq!(app.areas[Pane::Detail.index()], all, "the detail pane has every pane's room");
        for pane in [Pane::Tree, Pane::Scores, Pane::Transcript] {
            assert!(app.areas[pane.index()].is_empty(), "{pane:?} is not drawn");
        }
        assert!(screen.contains("3 Detail zoomed, z back"), "{screen}");
        assert!(!screen.contains("1 Tree") && !screen.contains("4 Transcript"), "{screen}");
        assert_eq!(app.page(Pane::Detail), all.height - 3, "a page is the zoomed pane's height");
        // Tab zooms the next pane.
        press(&mut app, KeyCode::Tab, KeyModifiers::NONE);
        render(&mut app, width, height);
        assert_eq!(app.view.focus, Pane::Transcript);
        assert_eq!(app.areas[Pane::Transcript.index()], all);
        key(&mut app, 'z');
        let screen = render(&mut app, width, height);
        assert_eq!(app.areas, normal, "z gives every pane back");
        assert!(screen.contains("1 Tree") && screen.contains("3 Detail") && !screen.contains("zoomed"), "{screen}");
    }
}
