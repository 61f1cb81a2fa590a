//! Exports of a recorded run: the tree as the replayed engine has it, written as JSON
//! (for scripts), Graphviz DOT and Mermaid (for papers and slides, the solution path
//! highlighted and long thoughts shortened), or OpenTelemetry spans as OTLP JSON (so a
//! session opens in Jaeger, Phoenix or Langfuse).
//!
//! Every export is a pure function of a loaded session and its rebuilt engine; what it
//! returns has known secret values redacted.

pub mod dot;
pub mod json;
pub mod mermaid;
pub mod otel;

use std::path::Path;

use crate::engine::{NodeId, NodeStatus, SearchTree};
use crate::session::replay::{self, Rebuilt};
use crate::session::Session;

/// What an export is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Dot,
    Mermaid,
    Otel,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Json, Format::Dot, Format::Mermaid, Format::Otel];

    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Dot => "dot",
            Format::Mermaid => "mermaid",
            Format::Otel => "otel",
        }
    }

    /// The file name ending an export of this format gets.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Json => "tree.json",
            Format::Dot => "dot",
            Format::Mermaid => "mmd",
            Format::Otel => "otlp.json",
        }
    }

    /// The format a name says, or a plain line listing the ones there are.
    pub fn parse(name: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == name.trim().to_ascii_lowercase())
            .ok_or_else(|| format!("unknown export format {name:?}: use one of json, dot, mermaid, otel"))
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A session and the engine its inputs rebuild.
pub struct Loaded {
    pub session: Session,
    pub rebuilt: Rebuilt,
}

/// Load a session file and replay it (no provider); the error is one line naming the file.
pub fn load(path: &Path, prompts: Option<&Path>) -> Result<Loaded, String> {
    let session = Session::load(path).map_err(|e| e.to_string())?;
    let rebuilt = replay::rebuild(&session, prompts, None).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Loaded { session, rebuilt })
}

/// Options that are not part of the run: when the trace starts (sessions hold
/// latencies, not clock times).
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Unix time in nanoseconds of the run's start, for OpenTelemetry spans.
    pub start_unix_nanos: u64,
}

/// When a recorded run started, for trace times: the file's last change less the run's
/// wall time (0 when the file's time cannot be read).
pub fn start_nanos(path: &Path, wall_ms: u64) -> u64 {
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    modified.saturating_sub(wall_ms.saturating_mul(1_000_000))
}

/// The run exported in `format`, with known secrets redacted.
pub fn export(session: &Session, rebuilt: &Rebuilt, format: Format, options: &Options) -> String {
    let text = match format {
        Format::Json => json::export(session, rebuilt),
        Format::Dot => dot::export(session, rebuilt),
        Format::Mermaid => mermaid::export(session, rebuilt),
        Format::Otel => otel::export(session, rebuilt, options),
    };
    match format {
        // JSON escapes controls itself; bidi characters become `\uXXXX` escapes too.
        Format::Json | Format::Otel => crate::safe_text::json_safe(&text).into_owned(),
        Format::Dot | Format::Mermaid => crate::llm::secret::redact(&text).into_owned(),
    }
}

/// The node the run's answer came from: the top-ranked final state, else the first
/// node the task's checker accepted.
pub fn answer_node(rebuilt: &Rebuilt) -> Option<NodeId> {
    let tree = rebuilt.engine.tree();
    let ranked = rebuilt.engine.outcome().and_then(|o| o.finals.first().copied()).filter(|id| tree.contains(*id));
    ranked.or_else(|| tree.nodes().find(|n| n.status == NodeStatus::Solution).map(|n| n.id))
}

/// The nodes from the root to the answer's node (empty when there is no answer).
pub fn solution_path(rebuilt: &Rebuilt) -> Vec<NodeId> {
    let tree = rebuilt.engine.tree();
    match answer_node(rebuilt) {
        Some(id) => {
            let mut path = tree.ancestors(id);
            path.reverse();
            path.push(id);
            path
        }
        None => Vec::new(),
    }
}

/// A node's text for a picture: the method's label, else its thought, on one line.
pub fn node_text(tree: &SearchTree, id: NodeId) -> String {
    let n = tree.node(id);
    let text = n.label.as_deref().filter(|l| !l.trim().is_empty()).unwrap_or(&n.thought);
    crate::safe_text::one_line(&without_controls(text))
}

/// `text` without control characters (a picture has no use for them).
pub fn without_controls(text: &str) -> String {
    text.chars().map(|c| if c.is_control() || crate::safe_text::is_bidi_control(c) { ' ' } else { c }).collect()
}

/// `text` broken into at most `lines` lines of at most `width` characters, at spaces
/// where it can be; what does not fit is cut with `…`.
pub fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let width = width.max(2);
    // Words longer than a line are split.
    let mut words: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let chars: Vec<char> = word.chars().collect();
        words.extend(chars.chunks(width).map(|c| c.iter().collect::<String>()));
    }
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut i = 0;
    while i < words.len() && out.len() < lines {
        let word = &words[i];
        if current.is_empty() {
            current.push_str(word);
            i += 1;
        } else if current.chars().count() + 1 + word.chars().count() <= width {
            current.push(' ');
            current.push_str(word);
            i += 1;
        } else {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() && out.len() < lines {
        out.push(current);
    }
    if i < words.len() {
        if let Some(last) = out.last_mut() {
            let keep: String = last.chars().take(width - 1).collect();
            *last = format!("{keep}…");
        }
    }
    out
}

/// The value as the tree pane shows it.
pub fn value_text(tree: &SearchTree, id: NodeId) -> Option<String> {
    tree.value(id).map(crate::engine::tree::format_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_marks_a_cut() {
        assert_eq!(wrap("one two three", 7, 3), vec!["one two", "three"]);
        assert_eq!(wrap("one two three four", 7, 2), vec!["one two", "three…"]);
        assert_eq!(wrap("abcdefghij", 4, 2), vec!["abcd", "efg…"]);
        assert_eq!(wrap("", 4, 2), Vec::<String>::new());
        assert_eq!(wrap("αβγ δ", 3, 2), vec!["αβγ", "δ"]);
    }

    #[test]
    fn formats_parse_by_name() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.name()), Ok(f));
        }
        assert!(Format::parse("svg").unwrap_err().contains("json, dot, mermaid, otel"));
    }
}
