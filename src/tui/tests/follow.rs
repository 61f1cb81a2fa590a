//! `replay --follow`: a session file another process is writing, shown as it grows, at
//! 80×24 and 160×45. The timeline stays at the live end unless the person moves it, a
//! torn last line is read when it is whole (not an error), and a fork ends the following.

use std::io::Write;

use super::*;
use crate::tui::app::read_written;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

fn shipped_lines() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
    std::fs::read_to_string(path).unwrap().lines().map(|l| format!("{l}\n")).collect()
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// The file with the shipped session's first `n` lines, opened and followed.
fn following(dir: &Path, lines: &[String], n: usize) -> (App, std::path::PathBuf) {
    let path = dir.join("growing.jsonl");
    std::fs::write(&path, lines[..n].concat()).unwrap();
    let (session, read) = read_written(&path).unwrap();
    let params = session.header.params.clone();
    let mut app = App::replay(setup(dir, params), session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    app.follow_file(read);
    (app, path)
}

fn cursor(app: &App) -> (usize, usize) {
    let r = app.session.replay.as_ref().unwrap();
    (r.cursor, r.total)
}

#[test]
fn the_timeline_follows_the_file_at_its_live_end_and_a_torn_line_waits() {
    let lines = shipped_lines();
    let whole = Session::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl")).unwrap();
    for (w, h) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let (mut app, path) = following(dir.path(), &lines, 12);
        let (at, total) = cursor(&app);
        assert_eq!(at, total, "a followed session opens at its live end");
        assert!(render(&mut app, w, h).contains("following"), "the header says so");
        assert!(!app.follow_tick(), "nothing new");
        // Lines 12 to 39, the last of them half-written: it is not read yet, and no warning.
        let records = |app: &App| app.session.replay.as_ref().unwrap().session.records.len();
        let next = &lines[12..40].concat();
        let cut = next.len() - 30;
        append(&path, &next[..cut]);
        assert!(app.follow_tick(), "the whole lines are shown");
        assert_eq!(records(&app), 38, "39 whole lines: the header and 38 records");
        assert_eq!(app.message, None, "a line being written is not an error");
        let (at, partly) = cursor(&app);
        assert_eq!(at, partly, "at the live end");
        append(&path, &next[cut..]);
        assert!(app.follow_tick(), "the line, now whole, is shown");
        assert_eq!(records(&app), 39);
        let (at, total) = cursor(&app);
        assert!(total >= partly && at == total, "at the live end: {at}/{total} (was {partly})");
        assert_eq!(app.message, None);
        // Moved back by the person: the timeline stays where they put it.
        act(&mut app, Action::ReplayBack);
        act(&mut app, Action::ReplayBack);
        let kept = cursor(&app).0;
        append(&path, &lines[40..120].concat());
        assert!(app.follow_tick());
        let (at, total) = cursor(&app);
        assert_eq!(at, kept, "the cursor stays where the person moved it");
        let screen = render(&mut app, w, h);
        assert!(screen.contains(&format!("following, {} behind", total - at)), "{screen}");
        // `)` goes back to the live end, and the rest of the session arrives.
        act(&mut app, Action::ReplayEnd);
        append(&path, &lines[120..].concat());
        assert!(app.follow_tick());
        let (at, total) = cursor(&app);
        assert_eq!((at, total), (whole.input_count(), whole.input_count()), "the whole session, at its end");
        assert!(app.session.run.engine.outcome().is_some_and(|o| o.solved), "the finished run shows its solution");
        assert!(render(&mut app, w, h).contains("★"));
    }
}

#[test]
fn a_followed_session_forks_like_any_replay_and_the_fork_stops_following() {
    let lines = shipped_lines();
    let dir = tempfile::tempdir().unwrap();
    let (mut app, path) = following(dir.path(), &lines, 60);
    act(&mut app, Action::Fork);
    assert!(app.session.replay.is_none(), "a live run from the cursor");
    let forked = app.session_path().unwrap();
    assert_ne!(forked, path);
    append(&path, &lines[60..100].concat());
    assert!(!app.follow_tick(), "the fork is not replaced by the file");
    assert!(app.followed.is_none());
}

#[test]
fn a_followed_file_that_cannot_be_read_says_so_in_one_line() {
    let lines = shipped_lines();
    let dir = tempfile::tempdir().unwrap();
    let (mut app, path) = following(dir.path(), &lines, 30);
    let shown = cursor(&app);
    std::fs::write(&path, "not a session\n").unwrap();
    assert!(app.follow_tick());
    let message = app.message.clone().unwrap_or_default();
    assert!(!message.is_empty() && !message.contains('\n'), "{message:?}");
    assert!(app.followed.is_none(), "following stops");
    assert_eq!(cursor(&app), shown, "the session shown is kept");
}
