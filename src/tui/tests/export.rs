//! `X`: the tree on screen exported to a file, the format picked by the file's ending
//! or by name; a replay exports the tree at its cursor.

use std::path::PathBuf;

use super::*;
use crate::tui::app::Popup;

/// A copy of a demo session in `dir`, opened as a replay (exports go next to it).
fn replay_copy(dir: &Path) -> App {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
    let file = dir.join("bfs.jsonl");
    std::fs::copy(source, &file).unwrap();
    let session = Session::load(&file).unwrap();
    let params = session.header.params.clone();
    App::replay(setup(dir, params), session, Keymap::default(), ThemeSet::default(), "dark").unwrap()
}

#[test]
fn x_exports_the_tree_on_screen() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = replay_copy(dir.path());
    act(&mut app, Action::ReplayEnd);
    act(&mut app, Action::Export);
    let Some(Popup::Ask { what: Prompting::Export, editor }) = &app.popup else { panic!("X asks where") };
    assert!(editor.lines()[0].ends_with("bfs.dot"), "prefilled next to the session: {:?}", editor.lines());
    app.popup = None;

    let target = dir.path().join("out/tree.dot");
    app.answer(Prompting::Export, target.to_str().unwrap());
    let message = app.message.clone().unwrap_or_default();
    let nodes = app.session.run.engine.tree().len();
    assert_eq!(message, format!("exported the tree (dot, {nodes} nodes) to {}", target.display()));
    let dot = std::fs::read_to_string(&target).unwrap();
    assert!(dot.starts_with("digraph thoughtscope {"));
    assert_eq!(dot.lines().filter(|l| l.contains(" -> ")).count(), nodes - 1);

    // A format's name: the default path with its ending; the tree at the cursor.
    act(&mut app, Action::ReplayStart);
    act(&mut app, Action::ReplayStepForward);
    let shown = app.session.run.engine.tree().len();
    assert!(shown < nodes);
    app.answer(Prompting::Export, "json");
    let message = app.message.clone().unwrap_or_default();
    let path = message.rsplit_once(" to ").map(|(_, p)| PathBuf::from(p)).expect("the message names the file");
    assert!(path.to_string_lossy().ends_with(".tree.json"), "{message}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["nodes"].as_array().unwrap().len(), shown, "the tree at the cursor");

    // An ending that names no format is one line saying what to type.
    app.answer(Prompting::Export, "tree.svg");
    assert!(app.message.as_deref().unwrap_or_default().contains(".json, .dot, .mmd or .otlp.json"));
    assert!(!dir.path().join("tree.svg").exists());
}
