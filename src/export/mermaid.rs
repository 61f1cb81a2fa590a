//! The tree as a Mermaid flowchart (`flowchart TD`): one node per thought with its id,
//! status, value and shortened text; nodes get a class by status and the edges from
//! the root to the answer a bold red `linkStyle`. Pastes into Markdown that renders
//! Mermaid (GitHub, GitLab, many slide tools).

use std::fmt::Write as _;

use crate::engine::NodeStatus;
use crate::session::replay::Rebuilt;
use crate::session::Session;

/// `text` for a quoted Mermaid label: characters Mermaid reads specially become its
/// entity codes (`#quot;`, `#35;`, `#lt;`, ...), controls become spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '`' => out.push_str("#96;"),
            c if c.is_control() || crate::safe_text::is_bidi_control(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The class a node gets by its status.
fn class(status: &NodeStatus) -> &'static str {
    match status {
        NodeStatus::Solution => "solution",
        NodeStatus::Final => "final",
        NodeStatus::Frontier | NodeStatus::Expanded => "kept",
        NodeStatus::Candidate => "candidate",
        NodeStatus::Dropped(_) | NodeStatus::Pruned => "dropped",
        NodeStatus::Invalid(_) => "invalid",
    }
}

pub fn export(session: &Session, rebuilt: &Rebuilt) -> String {
    let tree = rebuilt.engine.tree();
    let path = super::solution_path(rebuilt);
    let h = &session.header;
    let mut out = String::new();
    let title = format!("{} · {} · {}", h.task, super::without_controls(&h.input), h.params.method.label());
    // The title in front matter; its value is a quoted YAML string.
    let _ = writeln!(
        out,
        "---\ntitle: {}\n---",
        serde_json::to_string(&crate::safe_text::one_line(&title)).unwrap_or_default()
    );
    out.push_str("flowchart TD\n");
    for n in tree.nodes() {
        let lines: Vec<String> = super::dot::label_lines(rebuilt, n.id).iter().map(|l| escape(l)).collect();
        let _ = writeln!(out, "  n{}[\"{}\"]", n.id.0, lines.join("<br/>"));
    }
    let mut on_path = Vec::new();
    let mut edge = 0;
    for n in tree.nodes() {
        if let Some(p) = n.parent {
            let _ = writeln!(out, "  n{} --> n{}", p.0, n.id.0);
            if path.contains(&n.id) && path.contains(&p) {
                on_path.push(edge.to_string());
            }
            edge += 1;
        }
    }
    out.push_str("  classDef solution fill:#b9f6ca,stroke:#1b5e20,stroke-width:2px\n");
    out.push_str("  classDef final fill:#e6f4ea,stroke:#2e7d32\n");
    out.push_str("  classDef kept fill:#e3f2fd,stroke:#1565c0\n");
    out.push_str("  classDef candidate fill:#ffffff,stroke:#616161\n");
    out.push_str("  classDef dropped fill:#eeeeee,stroke:#9e9e9e,color:#757575\n");
    out.push_str("  classDef invalid fill:#ffcdd2,stroke:#c62828\n");
    out.push_str("  classDef path stroke:#d32f2f,stroke-width:3px\n");
    for name in ["solution", "final", "kept", "candidate", "dropped", "invalid"] {
        let ids: Vec<String> =
            tree.nodes().filter(|n| class(&n.status) == name).map(|n| format!("n{}", n.id.0)).collect();
        if !ids.is_empty() {
            let _ = writeln!(out, "  class {} {name}", ids.join(","));
        }
    }
    if !path.is_empty() {
        let ids: Vec<String> = path.iter().map(|id| format!("n{}", id.0)).collect();
        let _ = writeln!(out, "  class {} path", ids.join(","));
    }
    if !on_path.is_empty() {
        let _ = writeln!(out, "  linkStyle {} stroke:#d32f2f,stroke-width:3px", on_path.join(","));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn labels_escape_quotes_brackets_and_entities() {
        assert_eq!(escape(r#"a "b" <c> #1;"#), "a #quot;b#quot; #lt;c#gt; #35;1;");
        assert_eq!(escape("[x] (y) {z} ✓"), "[x] (y) {z} ✓");
    }
}
