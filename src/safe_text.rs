//! Text made safe to print on a terminal. Model replies, tool observations and session
//! files are untrusted: printed raw, an ESC/OSC sequence could retitle the window, hide
//! text or write to the clipboard, and a bidi override (U+202E) could show text in
//! another order than it has. [`terminal_safe`] is the one function every text printer
//! uses (the headless `replay`, `run` and `import` output, warnings); the explorer cleans
//! each drawn cell with [`cell_safe`].
//!
//! * C0 controls except `\n` and `\t`, DEL and C1 controls become visible escapes
//!   (`\u{1b}`, `\u{7}`, `\u{9b}`); a `\r` right before `\n` is dropped (CRLF text);
//! * bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) become the same
//!   kind of escape (`\u{202e}`);
//! * known secret values are redacted ([`crate::llm::secret::redact`]).

use std::borrow::Cow;
use std::fmt::Write as _;

/// A bidirectional formatting character: marks, embeddings, overrides and isolates.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A character a terminal must not receive raw: C0 controls other than `\n` and `\t`,
/// DEL, C1 controls and bidi controls.
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// `text` with known secrets redacted and every unsafe character as a visible escape
/// (borrowed when there is nothing to change).
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let redacted = crate::llm::secret::redact(text);
    if !redacted.chars().any(is_unsafe) {
        return redacted;
    }
    let mut out = String::with_capacity(redacted.len() + 16);
    let mut chars = redacted.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if is_unsafe(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A JSON text (as `serde_json` writes it) safe for a terminal: `serde_json` already
/// escapes controls; bidi controls (and any unsafe character left) become JSON `\uXXXX`
/// escapes, which read back as the same string.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    let redacted = crate::llm::secret::redact(json);
    if !redacted.chars().any(is_unsafe) {
        return redacted;
    }
    let mut out = String::with_capacity(redacted.len() + 16);
    for c in redacted.chars() {
        if is_unsafe(c) && c != '\r' {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One drawn cell's symbol without unsafe characters, or `None` when it has none (the
/// layout is done, so they are dropped rather than escaped; a symbol left empty is a space).
pub fn cell_safe(symbol: &str) -> Option<String> {
    if !symbol.chars().any(is_unsafe) {
        return None;
    }
    let kept: String = symbol.chars().filter(|c| !is_unsafe(*c)).collect();
    Some(if kept.is_empty() { " ".to_string() } else { kept })
}

/// `text` on one line: every run of whitespace, line breaks included, becomes one space
/// (a multiple-choice input's options read `... A. 47 B. 49`, not `...A. 47B. 49`).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters of `text`, with `…` if cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_become_visible_escapes() {
        let text = "ok\x1b]0;owned\x07 \x1b[2J\tdone\r\nline\u{202e}gnp.exe\u{2066}x\u{2069}\u{200f}\u{9b}31m\x7f\rend";
        let safe = terminal_safe(text);
        assert_eq!(
            safe,
            "ok\\u{1b}]0;owned\\u{7} \\u{1b}[2J\tdone\nline\\u{202e}gnp.exe\\u{2066}x\\u{2069}\\u{200f}\\u{9b}31m\\u{7f}\\u{d}end"
        );
        assert!(!safe.chars().any(is_unsafe));
        assert!(matches!(terminal_safe("plain text, ünïcode ✓\n\tindented"), Cow::Borrowed(_)));
        for c in ['\u{61c}', '\u{200e}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{2067}', '\u{2068}'] {
            assert!(is_bidi_control(c) && terminal_safe(&c.to_string()).starts_with("\\u{"), "{c:?}");
        }
    }

    #[test]
    fn json_stays_json_and_cells_drop_what_is_unsafe() {
        let line = serde_json::to_string(&serde_json::json!({"t": "a\u{202e}b\x1b[1m"})).unwrap();
        let safe = json_safe(&line);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["t"], "a\u{202e}b\x1b[1m");
        assert_eq!(cell_safe("a\u{202e}"), Some("a".to_string()));
        assert_eq!(cell_safe("\u{202e}"), Some(" ".to_string()));
        assert_eq!(cell_safe("é"), None);
    }

    #[test]
    fn known_secrets_are_redacted_too() {
        let _key = crate::llm::secret::Secret::new("sk-terminal-safe-99").unwrap();
        assert_eq!(terminal_safe("key sk-terminal-safe-99\x1b"), "key [redacted]\\u{1b}");
        assert_eq!(json_safe("\"sk-terminal-safe-99\""), "\"[redacted]\"");
    }
}
