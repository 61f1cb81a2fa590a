//! End to end: the binary in a pseudo-terminal, keys in, screen out — and the
//! terminal left in its normal mode after `q` or a signal.

use crate::support;

use support::pty::{thoughtscope_in, Pty};

#[test]
fn explorer_steps_runs_and_quits_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let mut screen = Pty::spawn(thoughtscope_in(home.path(), &[]), 30, 110);
    screen.wait_for("1 Tree");
    screen.wait_for("PAUSED");
    assert!(screen.screen(|s| s.alternate_screen()), "the explorer uses the alternate screen");
    screen.send(b" ");
    screen.wait_for("step 1: expanding 1 state");
    screen.send(b"r");
    screen.wait_for("finished:");
    screen.send(b"?");
    screen.wait_for(" Keys ");
    // Esc alone (a terminal reads Esc followed at once by q as alt-q).
    screen.send(b"\x1b");
    screen.wait_gone(" Keys ");
    screen.send(b"q");
    let status = screen.wait_exit("q");
    assert!(status.success(), "{status:?}");
    screen.assert_restored("q");
    let sessions = std::fs::read_dir(home.path().join("data/sessions")).unwrap().count();
    assert_eq!(sessions, 1, "the run was recorded");
}

#[test]
fn a_signal_restores_the_terminal_and_closes_the_session() {
    for (signal, code) in [("INT", 130), ("QUIT", 131), ("TERM", 143), ("HUP", 129)] {
        let home = tempfile::tempdir().unwrap();
        let mut screen = Pty::spawn(thoughtscope_in(home.path(), &[]), 30, 110);
        screen.wait_for("PAUSED");
        screen.send(b" ");
        screen.wait_for("step 1: expanding 1 state");
        screen.screen(|s| {
            assert!(s.alternate_screen() && s.hide_cursor());
            assert_ne!(s.mouse_protocol_mode(), vt100::MouseProtocolMode::None, "mouse reporting is on");
        });
        let sent = std::process::Command::new("kill").args([&format!("-{signal}"), &screen.pid().to_string()]).status();
        assert!(sent.unwrap().success());
        let status = screen.wait_exit(&format!("SIG{signal}"));
        assert_eq!(status.exit_code(), code, "SIG{signal}");
        screen.assert_restored(&format!("SIG{signal}"));
        let sessions: Vec<_> = std::fs::read_dir(home.path().join("data/sessions")).unwrap().collect();
        assert_eq!(sessions.len(), 1, "the run was recorded");
        let text = std::fs::read_to_string(sessions[0].as_ref().unwrap().path()).unwrap();
        assert!(text.lines().last().unwrap().starts_with("{\"kind\":\"end\""), "SIG{signal}: the session is closed");
    }
}

/// `thoughtscope demo 1` in a terminal: it opens at the start on its first caption, with
/// the demo's title; `}` moves to the next caption, `]` plays one search step, `P` plays
/// the rest to the final caption.
#[test]
fn a_demo_plays_with_its_captions() {
    let home = tempfile::tempdir().unwrap();
    let mut screen = Pty::spawn(thoughtscope_in(home.path(), &["demo", "1"]), 45, 160);
    screen.wait_for("Beam search over thoughts");
    screen.wait_for("input 0/");
    let first = screen.text();
    let count = first
        .split(" 1/")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("the first caption is numbered 1/n:\n{first}"));
    assert!(count >= 3, "{first}");
    screen.send(b"}");
    screen.wait_for(&format!(" 2/{count} · "));
    screen.wait_for("Step 1:");
    // P stops at the next caption until a key goes on; N plays through to the end.
    screen.send(b"P");
    screen.wait_for(&format!(" 3/{count} · "));
    screen.wait_for(&format!("caption 3/{count}: P plays on"));
    screen.send(b"N");
    screen.wait_for(&format!(" {count}/{count} · "));
    screen.wait_for("Solved:");
    screen.send(b"q");
    let status = screen.wait_exit("q");
    assert!(status.success(), "{status:?}");
}

/// A keymap that unbinds every key, ctrl-c included, still leaves ctrl-c to quit; and
/// `--record NAME.jsonl` is the session file, not a folder.
#[test]
fn ctrl_c_quits_whatever_the_keymap_unbinds_and_a_jsonl_record_path_is_the_session_file() {
    let home = tempfile::tempdir().unwrap();
    let keymap = thoughtscope::tui::keymap::Keymap::default();
    let keys: Vec<String> = keymap
        .bindings()
        .iter()
        .flat_map(|b| b.keys.iter().map(|k| serde_json::to_string(&k.to_string()).unwrap()))
        .collect();
    assert!(keys.iter().any(|k| k == "\"ctrl-c\""), "the default keymap binds ctrl-c: {keys:?}");
    std::fs::create_dir_all(home.path().join("config")).unwrap();
    let config = format!("[[keymap]]\non = [{}]\nrun = \"none\"\n", keys.join(", "));
    std::fs::write(home.path().join("config/config.toml"), config).unwrap();
    let mut screen = Pty::spawn(thoughtscope_in(home.path(), &["--record", "mine.jsonl"]), 30, 110);
    screen.wait_for("PAUSED");
    screen.wait_for("ctrl-c always quits");
    screen.send(b"\x03");
    let status = screen.wait_exit("ctrl-c");
    assert!(status.success(), "{status:?}");
    screen.assert_restored("ctrl-c");
    let session = home.path().join("mine.jsonl");
    assert!(session.is_file(), "--record mine.jsonl is the session file");
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.lines().last().unwrap().starts_with("{\"kind\":\"end\""), "the session is closed");
}

/// The explorer on a task file (a copy of assets/tasks/stepwise): it runs and steers as
/// on a built-in task, and the session it records replays with the file gone.
#[test]
fn the_explorer_runs_a_task_file_and_its_session_replays_without_it() {
    let home = tempfile::tempdir().unwrap();
    let folder = home.path().join("stepwise");
    std::fs::create_dir_all(&folder).unwrap();
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tasks/stepwise");
    for e in std::fs::read_dir(example).unwrap() {
        let path = e.unwrap().path();
        std::fs::copy(&path, folder.join(path.file_name().unwrap())).unwrap();
    }
    let args = ["tui", "--task", folder.to_str().unwrap(), "--method", "tot-bfs", "--record", "mine.jsonl"];
    let mut screen = Pty::spawn(thoughtscope_in(home.path(), &args), 24, 80);
    screen.wait_for("PAUSED");
    screen.wait_for("stepwise #0 [A baker makes 4 trays");
    screen.send(b" ");
    screen.wait_for("step 1: expanding 1 state");
    // Steer: prune a first step, then run to the end.
    screen.send(b"\x1b[B");
    screen.send(b"p");
    screen.wait_for("pruned #");
    screen.send(b"r");
    screen.wait_for("finished:");
    screen.send(b"q");
    let status = screen.wait_exit("q");
    assert!(status.success(), "{status:?}");
    screen.assert_restored("q");
    std::fs::remove_dir_all(&folder).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .current_dir(home.path())
        .env("THOUGHTSCOPE_DATA_DIR", home.path().join("data"))
        .env("THOUGHTSCOPE_CONFIG_DIR", home.path().join("config"))
        .args(["replay", "mine.jsonl", "--headless", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!((summary["task"].as_str(), summary["n"].as_u64()), (Some("stepwise"), Some(1)), "{summary}");
    assert!(summary["llm_calls"].as_u64().unwrap() > 3, "the run's calls replay: {summary}");
    let session = std::fs::read_to_string(home.path().join("mine.jsonl")).unwrap();
    assert!(session.contains("\"prune\""), "the prune is recorded");
}

/// Issue 28, checked by hand: `tui --task math-demo` alone runs the first method that
/// serves the task, and the note saying so went to stderr behind the full screen, seen
/// only after quitting. The explorer says it at 80×24 too.
#[test]
fn the_explorer_says_which_method_it_chose_for_a_task_alone() {
    let home = tempfile::tempdir().unwrap();
    let mut screen = Pty::spawn(thoughtscope_in(home.path(), &["tui", "--task", "math-demo"]), 24, 80);
    screen.wait_for("io k=10");
    screen.wait_for("note: the default method tot-bfs does not work on math-demo; running io");
    assert!(screen.screen(|s| s.alternate_screen()), "said in the explorer, not before it");
    screen.send(b"q");
    assert!(screen.wait_exit("q").success());
}

/// A fake program for a hand-off: a shell script at `dir/name` running `body` with the
/// file as `$1`.
fn script(dir: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `V` runs `$PAGER` on the selected node's whole detail with the terminal in its normal
/// mode, `E` runs `$EDITOR` on its thought and the changed text becomes an edit, `y`
/// writes the detail as OSC 52; the explorer takes the screen back after each.
#[test]
fn pager_editor_and_clipboard_hand_offs() {
    let home = tempfile::tempdir().unwrap();
    let got = home.path().join("paged.txt");
    let mode = home.path().join("mode.txt");
    // The pager keeps what it got and whether the terminal was out of raw mode and off the alternate screen.
    let pager = script(
        home.path(),
        "pager",
        &format!(
            "cp \"$1\" {got}.part && mv {got}.part {got}\nif stty -a < /dev/tty | grep -q ' icanon'; then echo cooked > {mode}; else echo raw > {mode}; fi",
            got = got.display(),
            mode = mode.display()
        ),
    );
    let edited = home.path().join("edited.txt");
    let editor =
        script(home.path(), "editor", &format!("cp \"$1\" {}\nprintf 'my own thought\\n' > \"$1\"", edited.display()));
    let mut cmd = thoughtscope_in(home.path(), &[]);
    cmd.env("PAGER", pager.to_str().unwrap());
    cmd.env("EDITOR", editor.to_str().unwrap());
    cmd.env_remove("VISUAL");
    let mut screen = Pty::spawn(cmd, 30, 110);
    screen.wait_for("PAUSED");
    screen.send(b" ");
    screen.wait_for("step 1: expanding 1 state");
    screen.send(b"\x1b[B");
    screen.send(b"V");
    let paged = screen.wait_file(&got, |t| !t.is_empty());
    assert!(paged.contains("prompt (user):") && paged.contains("reply 1:"), "the whole detail: {paged}");
    assert_eq!(
        screen.wait_file(&mode, |t| !t.is_empty()).trim(),
        "cooked",
        "the pager had the terminal in its normal mode"
    );
    screen.wait_for("detail was shown in the pager");
    assert!(screen.screen(|s| s.alternate_screen()), "the explorer took the screen back");
    assert_ne!(screen.screen(|s| s.mouse_protocol_mode()), vt100::MouseProtocolMode::None, "and the mouse");
    // The editor gets the thought; what it writes is the edit.
    screen.send(b"E");
    let thought = screen.wait_file(&edited, |t| !t.is_empty());
    assert!(paged.contains(thought.trim()), "the editor got the selected thought {thought:?}");
    screen.wait_for("my own thought");
    screen.wait_for("✎");
    // y: the selected node's detail as OSC 52.
    screen.send(b"y");
    screen.wait_for("sent to the clipboard by OSC 52");
    let raw = String::from_utf8_lossy(&screen.raw()).into_owned();
    let start = raw.find("\x1b]52;c;").expect("an OSC 52 sequence") + 7;
    let end = start + raw[start..].find('\x07').expect("the sequence ends");
    assert!(end - start > 100, "the detail, base64: {}", &raw[start..end]);
    screen.send(b"q");
    let status = screen.wait_exit("q");
    assert!(status.success(), "{status:?}");
    screen.assert_restored("q");
    let sessions: Vec<_> = std::fs::read_dir(home.path().join("data/sessions")).unwrap().collect();
    let text = std::fs::read_to_string(sessions[0].as_ref().unwrap().path()).unwrap();
    assert!(text.contains("my own thought"), "the edit is recorded");
}

/// `replay --follow`: a second process appends a shipped session to a file line by line,
/// each line torn for a moment; the explorer shows each whole line as it lands, ends at
/// the session's end with no warning about the torn lines, and forks from it.
#[test]
fn replay_follow_shows_a_session_as_another_process_writes_it() {
    let home = tempfile::tempdir().unwrap();
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
    let text = std::fs::read_to_string(&shipped).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let inputs = lines.iter().filter(|l| l.starts_with("{\"kind\":\"input\"")).count();
    let growing = home.path().join("growing.jsonl");
    std::fs::write(&growing, lines[..10].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    std::fs::write(home.path().join("rest.jsonl"), lines[10..].iter().map(|l| format!("{l}\n")).collect::<String>())
        .unwrap();
    let mut screen = Pty::spawn(thoughtscope_in(home.path(), &["replay", "growing.jsonl", "--follow"]), 30, 110);
    screen.wait_for("following");
    // The writer stops halfway until `go` exists, so the test sees the session part-written.
    let half = (lines.len() - 10) / 2;
    let first_half = lines[..10 + half].iter().filter(|l| l.starts_with("{\"kind\":\"input\"")).count();
    let script = format!(
        "n=0; while IFS= read -r l; do n=$((n+1)); if [ $n -eq {} ]; then while [ ! -e go ]; do sleep 0.05; done; fi; \
         printf '%s' \"$l\" >> growing.jsonl; sleep 0.01; printf '\\n' >> growing.jsonl; done < rest.jsonl",
        half + 1
    );
    let mut writer = std::process::Command::new("sh").current_dir(home.path()).arg("-c").arg(script).spawn().unwrap();
    // At most the inputs written so far (the last may wait for its events).
    screen.wait_until("the first half", |t| {
        (first_half.saturating_sub(1)..=first_half).any(|n| t.contains(&format!("input {n}/{n} · following")))
    });
    std::fs::write(home.path().join("go"), "").unwrap();
    assert!(writer.wait().unwrap().success());
    screen.wait_for(&format!("input {inputs}/{inputs} · following"));
    let shown = screen.text();
    assert!(!shown.contains("torn") && !shown.contains("warning"), "no torn-line warning:\n{shown}");
    // Back one search step, then fork there.
    screen.send(b"[");
    screen.wait_for("following, ");
    screen.send(b"f");
    screen.wait_for("forked at input");
    screen.send(b"q");
    let status = screen.wait_exit("q");
    assert!(status.success(), "{status:?}");
    screen.assert_restored("q");
}
