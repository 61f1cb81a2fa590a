//! Carrying out a hand-off (`app::Outgoing`) on the real terminal: the terminal is
//! suspended (raw mode off, the main screen back, mouse reporting off, and the key
//! reader stopped so it does not steal the other program's keys), the pager or editor
//! runs on a temporary file, and the terminal is taken back, as git and lazygit do. The
//! clipboard is an OSC 52 sequence written to the terminal.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::Stream;
use ratatui::crossterm::event::{Event, EventStream};

use super::app::Outgoing;

/// The terminal's key and mouse events, with a switch that stops reading them while
/// another program has the terminal (a reader left running would take its keys).
#[derive(Clone)]
pub struct Events {
    inner: Arc<Mutex<Option<EventStream>>>,
}

impl Events {
    pub fn new() -> Events {
        Events { inner: Arc::new(Mutex::new(Some(EventStream::new()))) }
    }

    /// Stop reading (the reader's thread ends).
    pub fn stop(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            *inner = None;
        }
    }

    /// Read again.
    pub fn start(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            *inner = Some(EventStream::new());
        }
    }
}

impl Default for Events {
    fn default() -> Self {
        Events::new()
    }
}

impl Stream for Events {
    type Item = std::io::Result<Event>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Ok(mut inner) = self.inner.lock() else { return Poll::Ready(None) };
        match inner.as_mut() {
            Some(stream) => Pin::new(stream).poll_next(cx),
            // Stopped: the loop polls again on its next turn (a frame tick comes every 33 ms).
            None => Poll::Pending,
        }
    }
}

/// Carry out `job` on the real terminal, stopping `events` while another program runs.
/// Returns the file's text as the program left it (the text sent, for the clipboard).
pub fn carry_out(job: &Outgoing, events: &Events) -> Result<String, String> {
    match job {
        Outgoing::Clipboard { text, .. } => {
            let mut out = std::io::stdout();
            out.write_all(osc52(text).as_bytes())
                .and_then(|_| out.flush())
                .map_err(|e| format!("could not write to the terminal: {e}"))?;
            Ok(text.clone())
        }
        Outgoing::Pager { text, .. } => suspended(events, || run_on_file(&program("PAGER", "less"), "PAGER", text)),
        Outgoing::Editor { text, .. } => suspended(events, || run_on_file(&editor(), "EDITOR", text)),
    }
}

/// `f` with the terminal given back to the shell's normal mode, then taken again.
fn suspended<T>(events: &Events, f: impl FnOnce() -> T) -> T {
    events.stop();
    super::restore_terminal();
    let out = f();
    let _ = super::enter_terminal();
    events.start();
    out
}

/// An environment variable's command, or `fallback` when it is unset or empty.
fn program(var: &str, fallback: &str) -> String {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty()).unwrap_or_else(|| fallback.to_string())
}

/// The editor as git finds it: `$VISUAL`, then `$EDITOR`, then `vi`.
fn editor() -> String {
    match std::env::var("VISUAL").ok().filter(|v| !v.trim().is_empty()) {
        Some(visual) => visual,
        None => program("EDITOR", "vi"),
    }
}

/// A temporary file of this process for a hand-off (removed by `run_on_file`).
fn temp_file() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("thoughtscope-{}-{n}.txt", std::process::id()))
}

/// Write `text` to a temporary file, run `command FILE` through the shell (so a command
/// with arguments, `less -R` or `code --wait`, works as in git), and read the file back.
pub fn run_on_file(command: &str, var: &str, text: &str) -> Result<String, String> {
    let path = temp_file();
    std::fs::write(&path, text).map_err(|e| format!("could not write {}: {e}", path.display()))?;
    let result = run_shell(command, var, &path).and_then(|()| {
        std::fs::read_to_string(&path).map_err(|e| format!("could not read {} back: {e}", path.display()))
    });
    let _ = std::fs::remove_file(&path);
    result
}

fn run_shell(command: &str, var: &str, path: &Path) -> Result<(), String> {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{command} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .map_err(|e| format!("could not start ${var} ({command}): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("${var} ({command}) ended with {status}: set {var} to a program that takes a file"))
    }
}

/// The OSC 52 sequence that puts `text` on the system clipboard.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

/// Standard base64 with padding (RFC 4648).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }

    #[test]
    fn a_program_gets_the_file_and_its_changes_come_back() {
        let back = run_on_file("sed -i 's/old/new/'", "EDITOR", "the old thought\n").unwrap();
        assert_eq!(back, "the new thought\n");
        let err = run_on_file("false", "PAGER", "text").unwrap_err();
        assert!(err.starts_with("$PAGER (false) ended with"), "{err}");
    }
}
