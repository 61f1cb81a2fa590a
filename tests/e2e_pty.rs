//! End to end: the binary in a pseudo-terminal, keys in, screen out — and the
//! terminal left in its normal mode after `q` or a signal.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};

struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
}

impl Screen {
    fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Wait (bounded) until the screen shows `needle`.
    fn wait_for(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if self.text().contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the screen never showed {needle:?}; it shows:\n{}", self.text());
    }

    /// Wait (bounded) until `needle` is gone from the screen.
    fn wait_gone(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if !self.text().contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the screen still shows {needle:?}:\n{}", self.text());
    }
}

#[test]
fn explorer_steps_runs_and_quits_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let pair = native_pty_system().openpty(PtySize { rows: 30, cols: 110, pixel_width: 0, pixel_height: 0 }).unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_thoughtscope"));
    cmd.cwd(home.path());
    cmd.env("THOUGHTSCOPE_DATA_DIR", home.path().join("data"));
    cmd.env("THOUGHTSCOPE_CONFIG_DIR", home.path().join("config"));
    cmd.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(30, 110, 0)));
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let sink = Arc::clone(&parser);
    let pump = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().process(&buf[..n]);
        }
    });
    let screen = Screen { parser: Arc::clone(&parser) };
    screen.wait_for("1 Tree");
    screen.wait_for("PAUSED");
    assert!(parser.lock().unwrap().screen().alternate_screen(), "the explorer uses the alternate screen");
    writer.write_all(b" ").unwrap();
    screen.wait_for("step 1: expanding 1 state");
    writer.write_all(b"r").unwrap();
    screen.wait_for("finished:");
    writer.write_all(b"?").unwrap();
    screen.wait_for(" Keys ");
    // Esc alone (a terminal reads Esc followed at once by q as alt-q).
    writer.write_all(b"\x1b").unwrap();
    screen.wait_gone(" Keys ");
    writer.write_all(b"q").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "q did not quit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    // Let the last bytes arrive, then check the terminal is back to normal.
    std::thread::sleep(Duration::from_millis(100));
    {
        let p = parser.lock().unwrap();
        assert!(!p.screen().alternate_screen(), "left the alternate screen");
        assert!(!p.screen().hide_cursor(), "the cursor is visible again");
    }
    if let Some(termios) = pair.master.get_termios() {
        let flags = format!("{:?}", termios.local_flags);
        assert!(flags.contains("ICANON") && flags.contains("ECHO"), "raw mode is off again: {flags}");
    }
    let sessions = std::fs::read_dir(home.path().join("data/sessions")).unwrap().count();
    assert_eq!(sessions, 1, "the run was recorded");
    drop(writer);
    drop(pair.master);
    let _ = pump.join();
}

#[test]
fn a_signal_restores_the_terminal_and_closes_the_session() {
    for (signal, code) in [("INT", 130), ("QUIT", 131), ("TERM", 143), ("HUP", 129)] {
        let home = tempfile::tempdir().unwrap();
        let pair =
            native_pty_system().openpty(PtySize { rows: 30, cols: 110, pixel_width: 0, pixel_height: 0 }).unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_thoughtscope"));
        cmd.cwd(home.path());
        cmd.env("THOUGHTSCOPE_DATA_DIR", home.path().join("data"));
        cmd.env("THOUGHTSCOPE_CONFIG_DIR", home.path().join("config"));
        cmd.env("TERM", "xterm-256color");
        let mut child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(30, 110, 0)));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let mut writer = pair.master.take_writer().unwrap();
        let sink = Arc::clone(&parser);
        let pump = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().process(&buf[..n]);
            }
        });
        let screen = Screen { parser: Arc::clone(&parser) };
        screen.wait_for("PAUSED");
        writer.write_all(b" ").unwrap();
        screen.wait_for("step 1: expanding 1 state");
        {
            let p = parser.lock().unwrap();
            assert!(p.screen().alternate_screen() && p.screen().hide_cursor());
            assert_ne!(p.screen().mouse_protocol_mode(), vt100::MouseProtocolMode::None, "mouse reporting is on");
        }
        let pid = child.process_id().expect("the child's pid");
        let sent = std::process::Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status();
        assert!(sent.unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "SIG{signal} did not end the explorer");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.exit_code(), code, "SIG{signal}");
        std::thread::sleep(Duration::from_millis(100));
        {
            let p = parser.lock().unwrap();
            assert!(!p.screen().alternate_screen(), "SIG{signal}: left the alternate screen");
            assert!(!p.screen().hide_cursor(), "SIG{signal}: the cursor is visible again");
            assert_eq!(p.screen().mouse_protocol_mode(), vt100::MouseProtocolMode::None, "SIG{signal}: mouse off");
        }
        if let Some(termios) = pair.master.get_termios() {
            let flags = format!("{:?}", termios.local_flags);
            assert!(flags.contains("ICANON") && flags.contains("ECHO"), "raw mode is off again: {flags}");
        }
        let sessions: Vec<_> = std::fs::read_dir(home.path().join("data/sessions")).unwrap().collect();
        assert_eq!(sessions.len(), 1, "the run was recorded");
        let text = std::fs::read_to_string(sessions[0].as_ref().unwrap().path()).unwrap();
        assert!(text.lines().last().unwrap().starts_with("{\"kind\":\"end\""), "SIG{signal}: the session is closed");
        drop(writer);
        drop(pair.master);
        let _ = pump.join();
    }
}

/// `thoughtscope demo 1` in a terminal: it opens at the start on its first caption, with
/// the demo's title; `}` moves to the next caption, `]` plays one search step, `P` plays
/// the rest to the final caption.
#[test]
fn a_demo_plays_with_its_captions() {
    let home = tempfile::tempdir().unwrap();
    let (rows, cols) = (45, 160);
    let pair = native_pty_system().openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_thoughtscope"));
    cmd.args(["demo", "1"]);
    cmd.cwd(home.path());
    cmd.env("THOUGHTSCOPE_DATA_DIR", home.path().join("data"));
    cmd.env("THOUGHTSCOPE_CONFIG_DIR", home.path().join("config"));
    cmd.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let sink = Arc::clone(&parser);
    let pump = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().process(&buf[..n]);
        }
    });
    let screen = Screen { parser: Arc::clone(&parser) };
    screen.wait_for("Beam search over thoughts");
    screen.wait_for("input 0/");
    let first = screen.text();
    let count = first
        .split(" · 1/")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("the first caption is numbered 1/n:\n{first}"));
    assert!(count >= 3, "{first}");
    writer.write_all(b"}").unwrap();
    screen.wait_for(&format!(" · 2/{count} "));
    screen.wait_for("Step 1:");
    writer.write_all(b"P").unwrap();
    screen.wait_for(&format!(" · {count}/{count} "));
    screen.wait_for("Solved:");
    writer.write_all(b"q").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "q did not quit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    drop(writer);
    drop(pair.master);
    let _ = pump.join();
}
