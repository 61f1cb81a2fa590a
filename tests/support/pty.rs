//! The binary in a pseudo-terminal: keys in, the screen (a vt100 parser) out, and checks
//! that the terminal is put back in its normal mode when the program ends.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, Child, CommandBuilder, ExitStatus, MasterPty, PtySize};

/// `thoughtscope ARGS` in the directory `home`, its data and config kept under it.
pub fn thoughtscope_in(home: &Path, args: &[&str]) -> CommandBuilder {
    let mut cmd = thoughtscope(args);
    cmd.cwd(home);
    cmd.env("THOUGHTSCOPE_DATA_DIR", home.join("data"));
    cmd.env("THOUGHTSCOPE_CONFIG_DIR", home.join("config"));
    cmd
}

/// `thoughtscope ARGS` as it is.
pub fn thoughtscope(args: &[&str]) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_thoughtscope"));
    cmd.args(args);
    cmd.env("TERM", "xterm-256color");
    cmd
}

pub struct Pty {
    parser: Arc<Mutex<vt100::Parser>>,
    /// Every byte the program wrote, for what the screen parser keeps no trace of (OSC 52).
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Option<Box<dyn Write + Send>>,
    master: Option<Box<dyn MasterPty + Send>>,
    child: Box<dyn Child + Send + Sync>,
    pump: Option<std::thread::JoinHandle<()>>,
}

impl Pty {
    /// Start `cmd` in a terminal of `rows` × `cols`.
    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Pty {
        let pair = native_pty_system().openpty(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }).unwrap();
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let sink = Arc::clone(&parser);
        let raw = Arc::new(Mutex::new(Vec::new()));
        let bytes = Arc::clone(&raw);
        let pump = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                bytes.lock().unwrap().extend_from_slice(&buf[..n]);
                sink.lock().unwrap().process(&buf[..n]);
            }
        });
        Pty { parser, raw, writer: Some(writer), master: Some(pair.master), child, pump: Some(pump) }
    }

    /// What the screen shows now.
    pub fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Every byte the program has written so far.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// Wait (bounded) until the file at `path` exists and satisfies `ok`.
    pub fn wait_file(&self, path: &Path, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(text) = std::fs::read_to_string(path) {
                if ok(&text) {
                    return text;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("{} never came as expected; the screen shows:\n{}", path.display(), self.text());
    }

    /// Look at the screen's state (alternate screen, cursor, mouse mode).
    pub fn screen<T>(&self, f: impl FnOnce(&vt100::Screen) -> T) -> T {
        f(self.parser.lock().unwrap().screen())
    }

    /// Wait (bounded) until the screen text satisfies `ok`; `what` names it in the failure.
    pub fn wait_until(&self, what: &str, ok: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if ok(&self.text()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the screen never showed {what}; it shows:\n{}", self.text());
    }

    /// Wait (bounded) until the screen shows `needle`.
    pub fn wait_for(&self, needle: &str) {
        self.wait_until(&format!("{needle:?}"), |t| t.contains(needle));
    }

    /// Wait (bounded) until `needle` is gone from the screen.
    pub fn wait_gone(&self, needle: &str) {
        self.wait_until(&format!("{needle:?} gone"), |t| !t.contains(needle));
    }

    /// Type `keys`.
    pub fn send(&mut self, keys: &[u8]) {
        self.writer.as_mut().expect("the terminal is open").write_all(keys).unwrap();
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("the child's pid")
    }

    /// Wait (bounded) for the program to end; `why` names what should have ended it.
    pub fn wait_exit(&mut self, why: &str) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "{why} did not end the program");
            std::thread::sleep(Duration::from_millis(20));
        };
        // Let the last bytes arrive.
        std::thread::sleep(Duration::from_millis(100));
        status
    }

    /// After the program ended: off the alternate screen, cursor shown, mouse reporting
    /// off, and the terminal out of raw mode (`what` names the case in a failure).
    pub fn assert_restored(&self, what: &str) {
        self.screen(|s| {
            assert!(!s.alternate_screen(), "{what}: left the alternate screen");
            assert!(!s.hide_cursor(), "{what}: the cursor is visible again");
            assert_eq!(s.mouse_protocol_mode(), vt100::MouseProtocolMode::None, "{what}: mouse reporting is off");
        });
        if let Some(termios) = self.master.as_ref().and_then(|m| m.get_termios()) {
            let flags = format!("{:?}", termios.local_flags);
            assert!(flags.contains("ICANON") && flags.contains("ECHO"), "{what}: raw mode is off again: {flags}");
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        let _ = self.child.kill();
        self.writer.take();
        self.master.take();
        if let Some(pump) = self.pump.take() {
            let _ = pump.join();
        }
    }
}
