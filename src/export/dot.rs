//! The tree as a Graphviz DOT digraph: one box per node (id, status, value, and the
//! thought wrapped and shortened), coloured by status; the path from the root to the
//! answer drawn in bold red. `dot -Tsvg tree.dot > tree.svg` draws it.

use std::fmt::Write as _;

use crate::engine::{NodeId, NodeStatus};
use crate::session::replay::Rebuilt;
use crate::session::Session;

/// Characters per line of a node's thought, and lines at most.
const WIDTH: usize = 36;
const LINES: usize = 3;

/// `text` inside a DOT double-quoted string: backslashes and quotes escaped (so a
/// thought's `\n` or `\l` is text, not a label escape), line breaks as `\n`.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() || crate::safe_text::is_bidi_control(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Fill colour by status.
fn fill(status: &NodeStatus) -> &'static str {
    match status {
        NodeStatus::Solution => "#b9f6ca",
        NodeStatus::Final => "#e6f4ea",
        NodeStatus::Frontier | NodeStatus::Expanded => "#e3f2fd",
        NodeStatus::Candidate => "#ffffff",
        NodeStatus::Dropped(_) | NodeStatus::Pruned => "#eeeeee",
        NodeStatus::Invalid(_) => "#ffcdd2",
    }
}

/// A node's label lines: `#id status value`, then its text.
pub fn label_lines(rebuilt: &Rebuilt, id: NodeId) -> Vec<String> {
    let tree = rebuilt.engine.tree();
    let n = tree.node(id);
    let mut head = format!("{} {}", id, n.status.label());
    if let Some(v) = super::value_text(tree, id) {
        head.push_str(&format!(" · {v}"));
    }
    let mut lines = vec![head];
    lines.extend(super::wrap(&super::node_text(tree, id), WIDTH, LINES));
    lines
}

pub fn export(session: &Session, rebuilt: &Rebuilt) -> String {
    let tree = rebuilt.engine.tree();
    let path = super::solution_path(rebuilt);
    let h = &session.header;
    let title = format!("{} · {} · {}", h.task, super::without_controls(&h.input), h.params.method.label());
    let mut out = String::new();
    out.push_str("digraph thoughtscope {\n");
    let _ = writeln!(out, "  graph [label={}, labelloc=t, rankdir=TB, fontname=\"Helvetica\"];", quote(&title));
    out.push_str("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n");
    out.push_str("  edge [color=\"#9e9e9e\"];\n");
    for n in tree.nodes() {
        let label = label_lines(rebuilt, n.id).join("\n");
        let on_path = path.contains(&n.id);
        let border = if on_path { ", color=\"#d32f2f\", penwidth=2.5" } else { "" };
        let dashed = if matches!(n.status, NodeStatus::Dropped(_) | NodeStatus::Pruned) {
            ", fontcolor=\"#757575\""
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  n{} [label={}, fillcolor=\"{}\"{border}{dashed}];",
            n.id.0,
            quote(&label),
            fill(&n.status)
        );
    }
    for n in tree.nodes() {
        if let Some(p) = n.parent {
            let on_path = path.contains(&n.id) && path.contains(&p);
            let style = if on_path { " [color=\"#d32f2f\", penwidth=2.5]" } else { "" };
            let _ = writeln!(out, "  n{} -> n{}{style};", p.0, n.id.0);
        }
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quotes_escape_what_dot_reads_specially() {
        assert_eq!(quote(r#"say "hi" \l"#), r#""say \"hi\" \\l""#);
        assert_eq!(quote("a\nb"), r#""a\nb""#);
        assert_eq!(quote("x\u{1b}y ✓"), "\"x y ✓\"");
    }
}
