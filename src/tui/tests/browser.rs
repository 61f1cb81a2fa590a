//! The session browser (`o`), at 80×24 and 160×45: each session's fields, newest first,
//! grouped folder → task → method on tui-tree-widget; typing filters; enter opens; a
//! malformed file is a row saying it cannot be read; a session still being written is
//! live and opening it follows it.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::tui::app::browser_scan::{self, Outcome};
use crate::tui::app::{Popup, SessionBrowser};

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];
/// The fixture's clock: its files were written in the minutes before this.
const NOW: u64 = 1_780_000_000;

fn key(app: &mut App, code: KeyCode) {
    let effects = app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    settle(app, effects);
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn shipped(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions").join(name)).unwrap()
}

fn written(path: &Path, text: &str, at: Option<u64>) {
    std::fs::write(path, text).unwrap();
    if let Some(at) = at {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_secs(at)).unwrap();
    }
}

/// A sessions folder: a session still being written (the newest), two complete ones, a
/// malformed file, and a batch folder with an older one. `at` gives the times written
/// (`None`: now).
fn fixture(dir: &Path, live_at: Option<u64>) {
    let bfs = shipped("bfs-solved.jsonl");
    let growing: String = bfs.lines().take(60).map(|l| format!("{l}\n")).collect();
    written(&dir.join("growing.jsonl"), &growing, live_at);
    written(&dir.join("vote.jsonl"), &shipped("cot-sc-vote.jsonl"), Some(NOW - 600));
    written(&dir.join("bfs.jsonl"), &bfs, Some(NOW - 1200));
    written(&dir.join("broken.jsonl"), "this is not a session\n", Some(NOW - 1800));
    std::fs::create_dir(dir.join("batch")).unwrap();
    written(&dir.join("batch/dfs.jsonl"), &shipped("dfs-backtracks.jsonl"), Some(NOW - 2400));
}

/// An explorer on a demo (a replay: it records nothing into the folder) with the browser
/// open over `dir` as of the fixture's clock.
fn browsing(dir: &Path) -> App {
    let mut app = demo_replay(dir, 0);
    let rows = browser_scan::scan(dir, UNIX_EPOCH + Duration::from_secs(NOW));
    app.popup = Some(Popup::Open(Box::new(SessionBrowser::new(rows))));
    app
}

fn browser(app: &App) -> &SessionBrowser {
    match &app.popup {
        Some(Popup::Open(b)) => b,
        _ => panic!("the session browser is open"),
    }
}

/// The screen with the temporary folder's name (different on every run) replaced by a
/// name as long.
fn screen(app: &mut App, dir: &Path, w: u16, h: u16) -> String {
    let shown = crate::tui::app::shown_path(dir);
    let same = format!("{:~<width$}", "SESSIONS", width = shown.chars().count());
    render(app, w, h).replace(&shown, &same)
}

fn names(b: &SessionBrowser) -> Vec<String> {
    b.rows.iter().map(|r| r.name.clone()).collect()
}

#[test]
fn the_browser_lists_each_sessions_fields_newest_first_grouped_by_folder_task_and_method() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), Some(NOW - 60));
    let mut app = browsing(dir.path());
    let b = browser(&app);
    let demos = crate::demos::DEMOS.len();
    assert_eq!(
        names(b)[..5],
        ["growing.jsonl", "vote.jsonl", "bfs.jsonl", "broken.jsonl", "dfs.jsonl"],
        "newest first"
    );
    assert_eq!(b.rows.len(), 5 + demos, "then the bundled demos");
    // Each row's fields, from the header and the last lines.
    let s = b.rows[2].read.as_ref().unwrap();
    assert_eq!((s.task.as_str(), s.input.as_str(), s.method.as_str()), ("game24", "4 5 6 10", "tot-bfs"));
    assert_eq!((s.provider.as_str(), s.outcome.clone()), ("sim", Outcome::Solved));
    assert_eq!(s.totals.map(|t| (t.llm_calls, t.tokens())), Some((88, 12_700)));
    assert_eq!(b.rows[2].date(), browser_scan::utc_minutes(NOW - 1200));
    let live = b.rows[0].read.as_ref().unwrap();
    assert_eq!((live.outcome.clone(), live.totals), (Outcome::Live, None), "no end line, written a minute ago");
    assert!(b.rows[3].read.as_ref().is_err_and(|e| e.contains("not a session header")), "{:?}", b.rows[3].read);
    // The tree: folder → task → method → session; the malformed file in its folder.
    let shown: Vec<String> = b.visible().iter().map(|p| p.join("/")).collect();
    let root = format!("f:{}", crate::tui::app::shown_path(dir.path()));
    let want = [
        root.clone(),
        format!("{root}/t:game24"),
        format!("{root}/t:game24/m:tot-bfs"),
        format!("{root}/t:game24/m:tot-bfs/0"),
        format!("{root}/t:game24/m:tot-bfs/2"),
        format!("{root}/t:qa-demo"),
        format!("{root}/t:qa-demo/m:cot-sc"),
        format!("{root}/t:qa-demo/m:cot-sc/1"),
        format!("{root}/3"),
    ];
    assert_eq!(shown[..want.len()], want, "{shown:#?}");
    assert!(shown[want.len()].ends_with("/batch"), "{shown:#?}");
    assert_eq!(b.selected_row(), Some(0), "the newest session is selected");
    for (w, h) in SIZES {
        let text = screen(&mut app, dir.path(), w, h);
        for word in ["● live", "★ solved", "88 calls", "cannot be read", "tot-bfs", "qa-demo", "batch"] {
            assert!(text.contains(word), "{w}x{h}: {word}\n{text}");
        }
        insta::assert_snapshot!(format!("browser_{w}x{h}"), text);
    }
}

#[test]
fn typing_filters_the_sessions_keeping_their_groups_and_backspace_widens_again() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), Some(NOW - 60));
    let mut app = browsing(dir.path());
    type_text(&mut app, "tot-dfs");
    let b = browser(&app);
    let matching: Vec<&str> = b.matching().iter().map(|&i| b.rows[i].name.as_str()).collect();
    assert_eq!(matching, ["dfs.jsonl", "dfs-backtracks.jsonl"], "the batch's session and the demo");
    let shown: Vec<String> = b.visible().iter().map(|p| p.last().unwrap().clone()).collect();
    assert_eq!(
        shown,
        [
            "f:".to_string() + &crate::tui::app::shown_path(&dir.path().join("batch")),
            "t:game24".into(),
            "m:tot-dfs".into(),
            "4".into(),
            "f:bundled demos".into(),
            "t:game24".into(),
            "m:tot-dfs".into(),
            "6".into()
        ]
    );
    assert_eq!(b.selected_row(), Some(4), "the first match is selected");
    for (w, h) in SIZES {
        let text = screen(&mut app, dir.path(), w, h);
        assert!(text.contains("2 of 14 match") && text.contains("filter: tot-dfs"), "{text}");
        assert!(!text.contains("vote.jsonl") && !text.contains("qa-demo"), "{text}");
        // The demo is listed by its title (issue 46 item 14: demos had none).
        let title = if w < 100 { "Depth first, wi" } else { "Depth first, with backtracking" };
        assert!(text.contains(title), "{w}x{h}: {text}");
        insta::assert_snapshot!(format!("browser_filtered_{w}x{h}"), text);
    }
    // Every word must match: a task and an outcome.
    for _ in 0.."tot-dfs".len() {
        key(&mut app, KeyCode::Backspace);
    }
    type_text(&mut app, "GAME24 live");
    let b = browser(&app);
    assert_eq!(b.matching(), [0], "case ignored, both words");
    // Cleared, everything is back.
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    assert_eq!(browser(&app).matching().len(), 14);
}

#[test]
fn arrows_move_over_groups_and_sessions_and_fold_groups() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), Some(NOW - 60));
    let mut app = browsing(dir.path());
    key(&mut app, KeyCode::Down);
    assert_eq!(browser(&app).selected_row(), Some(2), "the next session of the method");
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    assert_eq!(browser(&app).selected_row(), None, "the method's group");
    let before = browser(&app).visible().len();
    // Left folds the group, right unfolds it; enter on a group does the same.
    key(&mut app, KeyCode::Left);
    assert_eq!(browser(&app).visible().len(), before - 2);
    key(&mut app, KeyCode::Right);
    assert_eq!(browser(&app).visible().len(), before);
    key(&mut app, KeyCode::Enter);
    assert_eq!(browser(&app).visible().len(), before - 2);
    assert!(matches!(app.popup, Some(Popup::Open(_))), "enter on a group opens no session");
    key(&mut app, KeyCode::End);
    assert_eq!(browser(&app).selected_row(), Some(12), "the last demo");
    key(&mut app, KeyCode::Home);
    assert_eq!(browser(&app).selected_row(), None, "the first folder");
    key(&mut app, KeyCode::Esc);
    assert!(app.popup.is_none());
}

#[test]
fn enter_opens_the_selected_session_and_a_live_one_is_followed_as_it_grows() {
    let dir = tempfile::tempdir().unwrap();
    // The live session written now, so the browser the `o` key opens finds it live.
    fixture(dir.path(), None);
    let mut app = demo_replay(dir.path(), 0);
    act(&mut app, Action::Open);
    assert!(browser(&app).rows[0].live());
    key(&mut app, KeyCode::Enter);
    assert!(app.popup.is_none());
    assert!(app.is_replay());
    assert_eq!(app.session_path().unwrap(), dir.path().join("growing.jsonl"));
    assert_eq!(app.follow_note().as_deref(), Some("following"));
    assert!(app.message.as_deref().is_some_and(|m| m.starts_with("following")), "{:?}", app.message);
    let before = app.session.replay.as_ref().unwrap().total;
    // The rest of the session lands: the timeline shows it at its live end.
    let rest: String = shipped("bfs-solved.jsonl").lines().skip(60).map(|l| format!("{l}\n")).collect();
    std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join("growing.jsonl"))
        .unwrap()
        .write_all(rest.as_bytes())
        .unwrap();
    assert!(app.follow_tick());
    let r = app.session.replay.as_ref().unwrap();
    assert!(r.total > before && r.cursor == r.total, "{} of {}", r.cursor, r.total);
    assert!(app.session.run.engine.is_finished());

    // A complete session opens as it stands, and nothing is followed any more.
    act(&mut app, Action::Open);
    type_text(&mut app, "vote");
    key(&mut app, KeyCode::Enter);
    assert!(app.popup.is_none());
    assert_eq!(app.session_path().unwrap(), dir.path().join("vote.jsonl"));
    assert_eq!(app.session.header.params.method.label(), "cot-sc");
    assert!(app.followed.is_none() && app.follow_note().is_none());
    assert!(!app.follow_tick());
}

#[test]
fn a_malformed_file_is_a_row_and_opening_it_says_why_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), Some(NOW - 60));
    let mut app = browsing(dir.path());
    type_text(&mut app, "broken");
    assert_eq!(browser(&app).selected_row(), Some(3));
    for (w, h) in SIZES {
        let text = screen(&mut app, dir.path(), w, h);
        assert!(text.contains("broken.jsonl — cannot be read"), "{text}");
    }
    key(&mut app, KeyCode::Enter);
    let message = app.message.clone().unwrap();
    assert!(message.starts_with("cannot open: ") && message.contains("broken.jsonl"), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    assert!(matches!(app.popup, Some(Popup::Open(_))), "the browser stays open");
    for (w, h) in SIZES {
        let text = screen(&mut app, dir.path(), w, h);
        assert!(text.contains("│cannot open: "), "the browser shows why: {text}");
    }
    assert_eq!(app.session_path().unwrap(), Path::new("sessions/bfs-solved.jsonl"), "the demo is still shown");
}

#[test]
fn only_the_header_and_the_last_lines_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let bfs = shipped("bfs-solved.jsonl");
    let (header, rest) = bfs.split_once('\n').unwrap();
    // Five megabytes of lines in the middle that are not records: a whole read stops there.
    let junk = "x".repeat(1023) + "\n";
    let text = format!("{header}\n{}{rest}", junk.repeat(5 * 1024));
    let path = dir.path().join("big.jsonl");
    written(&path, &text, Some(NOW - 3600));
    assert!(Session::load(&path).unwrap().warnings.iter().any(|w| w.contains("malformed line")));
    let (_, read) = browser_scan::read_file(&path, UNIX_EPOCH + Duration::from_secs(NOW));
    let s = read.unwrap();
    assert_eq!((s.outcome, s.totals.map(|t| t.llm_calls)), (Outcome::Solved, Some(88)));
    // Not written to for an hour and no end line: cut short, not live.
    let cut: String = bfs.lines().take(60).map(|l| format!("{l}\n")).collect();
    written(&path, &cut, Some(NOW - 3600));
    let (_, read) = browser_scan::read_file(&path, SystemTime::UNIX_EPOCH + Duration::from_secs(NOW));
    assert_eq!(read.unwrap().outcome, Outcome::Unfinished);
}
