//! Every session this project has shipped opens in the explorer: the demo sessions of
//! every earlier commit (tests/fixtures/shipped-sessions/), today's sessions/ and the
//! session fixtures. Each opens, its timeline is stepped to the end and back with every
//! stop drawn, and the tree, detail and transcript panes have something in them. A
//! session today's engine no longer reproduces says so and is shown as recorded; a fork
//! from it warns that the continuation is today's engine's.

use super::*;

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The session files in `dir` (their first line a session header), in name order.
fn sessions_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            text.lines().next().is_some_and(|l| l.contains("\"format\":\"thoughtscope-session\""))
        })
        .collect();
    files.sort();
    files
}

/// The text inside each pane's border, as last drawn at `width`×`height`.
fn panes(app: &mut App, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let mut areas = Default::default();
    terminal.draw(|f| areas = ui::draw_app(f, app)).unwrap();
    let buffer = terminal.backend().buffer().clone();
    let areas: [ratatui::layout::Rect; 4] = areas;
    areas
        .iter()
        .map(|r| {
            let mut text = String::new();
            for y in r.y + 1..(r.y + r.height).saturating_sub(1) {
                for x in r.x + 1..(r.x + r.width).saturating_sub(1) {
                    text.push_str(buffer[(x, y)].symbol());
                }
                text.push('\n');
            }
            text
        })
        .collect()
}

fn opened(dir: &Path, file: &Path) -> App {
    let session = Session::load(file).unwrap_or_else(|e| panic!("{e}"));
    let params = session.header.params.clone();
    App::replay(setup(dir, params), session, Keymap::default(), ThemeSet::default(), "dark")
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

fn cursor(app: &App) -> (usize, usize) {
    let r = app.session.replay.as_ref().unwrap();
    (r.cursor, r.total)
}

#[test]
fn every_shipped_session_opens_in_the_explorer_and_its_timeline_steps_to_the_end_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = sessions_in(&repo("tests/fixtures/shipped-sessions"));
    assert!(files.len() >= 36, "the shipped sessions are all here ({} found)", files.len());
    files.extend(sessions_in(&repo("sessions")));
    files.extend(sessions_in(&repo("tests/fixtures")));
    let mut as_recorded = 0;
    for file in &files {
        let name = file.display();
        let mut app = opened(dir.path(), file);
        let fidelity = app.session.replay.as_ref().unwrap().marks.fidelity.clone();
        if let Some(from) = fidelity.recorded_from() {
            as_recorded += 1;
            let said = app.message.clone().unwrap_or_default();
            assert!(said.contains("recorded by") && said.contains(&format!("from input {from} on")), "{name}: {said}");
        }
        act(&mut app, Action::ReplayStart);
        assert_eq!(cursor(&app).0, 0, "{name}");
        let mut stops = 0;
        while cursor(&app).0 < cursor(&app).1 {
            let before = cursor(&app).0;
            act(&mut app, Action::ReplayStepForward);
            assert!(cursor(&app).0 > before, "{name}: a step forward from {before} moves");
            panes(&mut app, 100, 30);
            stops += 1;
        }
        let texts = panes(&mut app, 120, 40);
        for pane in [Pane::Tree, Pane::Detail, Pane::Transcript] {
            assert!(!texts[pane.index()].trim().is_empty(), "{name}: the {pane:?} pane is empty at the end");
        }
        if fidelity.recorded_from().is_some() {
            let header = ui::status::header_text(&app, 160);
            assert!(header.contains("REPLAY AS RECORDED"), "{name}: {header}");
            assert!(app.session.run.engine.outcome().is_some(), "{name}: the recorded outcome");
        }
        while cursor(&app).0 > 0 {
            let before = cursor(&app).0;
            act(&mut app, Action::ReplayStepBack);
            assert!(cursor(&app).0 < before, "{name}: a step back from {before} moves");
            panes(&mut app, 100, 30);
            stops -= 1;
        }
        assert!(stops <= 0, "{name}: as many steps back as forward");
        let header = ui::status::header_text(&app, 160);
        assert!(header.contains("REPLAY") && !header.contains("AS RECORDED"), "{name}: at 0 it is today's: {header}");
        // Every input, one at a time, as the timeline's `.` does, drawn where played as recorded.
        let total = cursor(&app).1;
        for k in 1..=total {
            act(&mut app, Action::ReplayForward);
            assert_eq!(cursor(&app).0, k, "{name}");
            if fidelity.recorded_from().is_some_and(|from| k > from) {
                panes(&mut app, 100, 30);
            }
        }
    }
    assert!(as_recorded >= 2, "sessions shown as recorded: {as_recorded}");
}

#[test]
fn a_fork_from_a_session_shown_as_recorded_says_it_goes_on_with_todays_engine() {
    let dir = tempfile::tempdir().unwrap();
    let file = repo("tests/fixtures/shipped-sessions/f14a4c6-retreval-uses.jsonl");
    let mut app = opened(dir.path(), &file);
    let from = app.session.replay.as_ref().unwrap().marks.fidelity.recorded_from().expect("shown as recorded");
    // A fork before the divergence is today's engine anyway: no warning.
    app.seek(from);
    let effects = app.handle_action(Action::Fork);
    let said = app.message.clone().unwrap_or_default();
    assert!(said.starts_with("forked at input") && !said.contains("today's engine"), "{said}");
    drop(effects);
    // Past it, the fork goes on from today's engine fed the recorded inputs, and says so.
    let mut app = opened(dir.path(), &file);
    let total = cursor(&app).1;
    app.seek(total);
    let effects = app.handle_action(Action::Fork);
    let said = app.message.clone().unwrap_or_default();
    assert!(said.contains("continuation uses today's engine") && said.contains(&format!("input {from} on")), "{said}");
    let today = crate::session::replay::today(&Session::load(&file).unwrap(), None, total).unwrap();
    assert_eq!(
        serde_json::to_string(app.session.run.engine.tree()).unwrap(),
        serde_json::to_string(today.engine.tree()).unwrap(),
        "the fork's engine is today's on the recorded inputs"
    );
    assert!(!app.is_replay());
    settle(&mut app, effects);
    // The forked file names its parent and replays like it: as recorded from the same input.
    let forked = app.session_path().unwrap();
    app.finish_recording();
    let session = Session::load(&forked).unwrap();
    assert!(session.header.parent.is_some());
    let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
    assert_eq!(rebuilt.fidelity.recorded_from(), Some(from), "{}", rebuilt.fidelity);
}

/// A session shown as recorded, at its end: the status bar says so, the tree is the
/// record's (its nodes past the divergence added from the recorded events), and the
/// detail pane shows the recorded call behind the selected node.
#[test]
fn snapshot_of_a_session_shown_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = opened(dir.path(), &repo("tests/fixtures/shipped-sessions/f14a4c6-retreval-uses.jsonl"));
    let total = cursor(&app).1;
    app.seek(total);
    app.message = None;
    insta::assert_snapshot!("as_recorded_160x50", render(&mut app, 160, 50));
}
