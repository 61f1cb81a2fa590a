//! The candidates being judged now, with their values as bars, the beam cut-off
//! or threshold marked and the kept ones highlighted.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::theme::Slot;
use super::tree::badge;
use super::View;
use crate::engine::event::Event;
use crate::engine::methods::Cutoff;
use crate::engine::{Node, NodeId, NodeStatus};

/// The nodes of the latest evaluation round: BFS's whole step, or the siblings
/// of the latest scored node.
pub fn current_candidates<'a>(view: &View<'a>) -> Vec<&'a Node> {
    let app = view.app;
    let tree = app.run.engine.tree();
    let last: Option<NodeId> = app.events.iter().rev().find_map(|e| match e {
        Event::Scored { id, .. } => Some(*id),
        _ => None,
    });
    let Some(last) = last.filter(|&n| tree.contains(n)) else { return Vec::new() };
    let anchor = tree.node(last);
    let mut nodes: Vec<&Node> = if app.run.engine.view().candidates_by_depth {
        tree.nodes().filter(|n| n.depth == anchor.depth && n.id != tree.root()).collect()
    } else {
        let parent = anchor.parent.unwrap_or(tree.root());
        tree.node(parent).children.iter().map(|&c| tree.node(c)).collect()
    };
    nodes.sort_by(|a, b| {
        let v = |n: &Node| n.score.as_ref().map_or(f64::NEG_INFINITY, |s| s.value);
        v(b).partial_cmp(&v(a)).unwrap_or(std::cmp::Ordering::Equal).then(a.id.cmp(&b.id))
    });
    nodes
}

fn kept(node: &Node) -> bool {
    matches!(node.status, NodeStatus::Frontier | NodeStatus::Expanded | NodeStatus::Final | NodeStatus::Solution)
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let app = view.app;
    let nodes = current_candidates(view);
    let cutoff = app.run.engine.view().cutoff;
    let cut = cutoff.as_ref().map(|c| c.label().to_string()).unwrap_or_default();
    let block = view.block(super::Pane::Scores, &cut);
    let inner_width = area.width.saturating_sub(2) as usize;
    let max = nodes.iter().filter_map(|n| n.score.as_ref().map(|s| s.value)).fold(0.0f64, f64::max).max(1.0);
    let mut lines = Vec::new();
    let label_of = |n: &Node| {
        let classes = app.run.engine.core.task.value_classes();
        let mut label = format!("{} {}", n.id, badge(n, classes).unwrap_or_else(|| "…".into()));
        if let Some(m) = super::tree::metrics_text(n) {
            label.push_str(&format!(" {m}"));
        }
        label
    };
    let label_width = nodes.iter().map(|n| label_of(n).chars().count()).max().unwrap_or(0);
    let mut usable_seen = 0;
    let mut cut_drawn = false;
    for n in &nodes {
        let value = n.score.as_ref().map(|s| s.value);
        let (past_beam, below_threshold) = match &cutoff {
            Some(Cutoff::Beam { n, .. }) => (usable_seen == *n, false),
            Some(Cutoff::Threshold { value: t, .. }) => (false, value.is_some_and(|v| v < *t)),
            None => (false, false),
        };
        if !cut_drawn && value.is_some() && (past_beam || below_threshold) {
            lines.push(Line::from(Span::styled(
                format!("{:─^w$}", format!(" {cut} "), w = inner_width),
                view.style(Slot::Cutoff),
            )));
            cut_drawn = true;
        }
        if value.is_some() && !matches!(n.status, NodeStatus::Invalid(_) | NodeStatus::Pruned) {
            usable_seen += 1;
        }
        let label = format!("{:<label_width$}", label_of(n));
        let thought: String = n.thought.chars().take(28).collect();
        let bar_width = (inner_width / 3).clamp(4, 30);
        let filled = value.map(|v| ((v.max(0.0) / max) * bar_width as f64).round() as usize).unwrap_or(0);
        let bar_slot = if kept(n) { Slot::BarKept } else { Slot::Bar };
        let text_slot = if kept(n) { Slot::NodeKept } else { super::tree::status_slot(n) };
        lines.push(Line::from(vec![
            Span::styled(label, view.style(text_slot)),
            Span::raw(" "),
            Span::styled("█".repeat(filled), view.style(bar_slot)),
            Span::styled("░".repeat(bar_width - filled.min(bar_width)), view.style(Slot::Dim)),
            Span::raw(" "),
            Span::styled(thought, view.style(text_slot)),
        ]));
    }
    if lines.is_empty() {
        lines.push(Line::from(Span::styled("no evaluations yet — press space to step", view.style(Slot::Dim))));
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
