//! `u`: the last steering command undone by forking the session just before it, at
//! 80×24 and 160×45; the old session is kept, ended.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

fn press_u(app: &mut App) {
    let effects = app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::NONE));
    settle(app, effects);
}

#[test]
fn u_undoes_a_prune_by_forking_before_it_and_keeps_the_old_session() {
    for (w, h) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = live(dir.path(), Params::default());
        act(&mut app, Action::Step);
        let child = app.session.run.engine.tree().node(NodeId(0)).children[1];
        select(&mut app, child);
        act(&mut app, Action::Prune);
        assert_eq!(app.session.run.engine.tree().node(child).status, NodeStatus::Pruned);
        let old = app.session_path().unwrap();
        let inputs_before = Session::load(&old).unwrap().input_count();
        press_u(&mut app);
        assert!(app.session.replay.is_none(), "a live run again");
        let new = app.session_path().unwrap();
        assert_ne!(new, old, "a new session");
        assert_ne!(app.session.run.engine.tree().node(child).status, NodeStatus::Pruned, "the prune is undone");
        let message = app.message.clone().unwrap_or_default();
        // The prune was the input after the step's ones.
        let at = inputs_before - 1;
        assert!(
            message.starts_with(&format!("undone: a new session forked before input {at}; the old one is kept")),
            "{message}"
        );
        assert!(render(&mut app, w, h).contains("undone: a new session"), "the footer says so");
        // The old session is kept, with the prune and its end line.
        let kept = Session::load(&old).unwrap();
        assert!(kept.complete(), "the old session is ended");
        assert!(recorded_commands(&old).contains(&Command::Prune { node: child }));
        // The new one goes on from there: steering is recorded in it, not the old one.
        act(&mut app, Action::Step);
        assert!(!recorded_commands(&new).contains(&Command::Prune { node: child }), "{:?}", recorded_commands(&new));
        assert!(recorded_commands(&new).contains(&Command::Step { n: 1 }));
        assert_eq!(Session::load(&old).unwrap().input_count(), inputs_before, "the old session is not written to");
    }
}

#[test]
fn u_undoes_an_edit_and_says_when_there_is_nothing_to_undo() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    press_u(&mut app);
    assert!(app.message.as_deref().unwrap_or_default().starts_with("nothing to undo"), "{:?}", app.message);
    act(&mut app, Action::Step);
    let count = app.session.run.engine.tree().len();
    let child = app.session.run.engine.tree().node(NodeId(0)).children[0];
    let effects = app.submit_edit(child, "4 + 6 = 10 (left: 5 10 10)".into());
    settle(&mut app, effects);
    assert!(app.session.run.engine.tree().len() > count);
    press_u(&mut app);
    assert_eq!(app.session.run.engine.tree().len(), count, "the edited node is gone");
    assert!(app.message.as_deref().unwrap_or_default().starts_with("undone:"), "{:?}", app.message);
    // Nothing steered in the fork yet: only what its parent steered before the edit (nothing).
    press_u(&mut app);
    assert!(app.message.as_deref().unwrap_or_default().starts_with("nothing to undo"), "{:?}", app.message);
}

#[test]
fn in_a_replay_u_says_where_to_go() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    press_u(&mut app);
    assert!(app.session.replay.is_some());
    assert!(app.message.as_deref().unwrap_or_default().starts_with("undo is for a live run"), "{:?}", app.message);
}

/// Undo after undo: each fork is named after the first session (`…-fork-N`, never
/// `…-fork-58-fork-56`), and the clock goes on from the time the undone run had spent.
#[test]
fn repeated_undos_keep_short_names_and_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let first = app.session_path().unwrap();
    let stem = first.file_stem().unwrap().to_string_lossy().to_string();
    for round in 0..3 {
        act(&mut app, Action::Step);
        let child = app.session.run.engine.tree().node(NodeId(0)).children[1];
        select(&mut app, child);
        act(&mut app, Action::Prune);
        app.session.elapsed_ms = 4_000 + round;
        press_u(&mut app);
        assert!(app.message.as_deref().unwrap_or_default().starts_with("undone:"), "{:?}", app.message);
        let name = app.session_path().unwrap().file_name().unwrap().to_string_lossy().to_string();
        assert!(name.starts_with(&format!("{stem}-fork-")), "{name}");
        assert_eq!(name.matches("-fork-").count(), 1, "round {round}: {name}");
        // The run loop restarts its busy clock from here (not from zero).
        assert_eq!(app.session.take_clock_start(), 4_000 + round, "round {round}");
        assert_eq!(app.session.elapsed_ms, 4_000 + round);
    }
}
