//! The thought tree: one line per node with status, score badge and the thought.

use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Text;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui::Frame;

use super::super::state::TreeState;
use super::super::theme::Slot;
use super::View;
use crate::engine::tree::{format_value, DropReason};
use crate::engine::{Node, NodeId, NodeStatus, Origin, SearchTree};

pub fn status_slot(node: &Node) -> Slot {
    match &node.status {
        NodeStatus::Candidate => Slot::NodeCandidate,
        NodeStatus::Frontier => Slot::NodeFrontier,
        NodeStatus::Expanded => Slot::NodeExpanded,
        NodeStatus::Dropped(_) => Slot::NodeDropped,
        NodeStatus::Pruned => Slot::NodePruned,
        NodeStatus::Invalid(_) => Slot::NodeInvalid,
        NodeStatus::Final => Slot::NodeFinal,
        NodeStatus::Solution => Slot::NodeSolution,
    }
}

/// A short glyph for the status, so it reads without colour too.
pub fn status_glyph(node: &Node) -> &'static str {
    match &node.status {
        NodeStatus::Candidate => "·",
        NodeStatus::Frontier => "○",
        NodeStatus::Expanded => "●",
        // Left behind by a backtrack (nothing worth trying below it), not cut for its value.
        NodeStatus::Dropped(DropReason::NoChildLeft | DropReason::Backtracked | DropReason::Exhausted) => "↩",
        NodeStatus::Dropped(_) => "–",
        NodeStatus::Pruned => "✂",
        NodeStatus::Invalid(_) => "✗",
        NodeStatus::Final => "◇",
        NodeStatus::Solution => "★",
    }
}

/// The score badge: the value with the evaluator's classes behind it by their first
/// letters (Game of 24: `60 sss` for sure, sure, sure), from the task's value classes.
pub fn badge(node: &Node, classes: &[(&str, f64)]) -> Option<String> {
    let score = node.score.as_ref()?;
    let letters: String = score
        .samples
        .iter()
        .filter_map(|s| match s.as_str() {
            "?" => Some('?'),
            s => classes.iter().find(|(name, _)| *name == s).and_then(|(name, _)| name.chars().next()),
        })
        .collect();
    Some(if letters.is_empty() {
        format_value(score.value)
    } else {
        format!("{} {letters}", format_value(score.value))
    })
}

/// The colour of a value on the task's scale: at least the top class's value is high,
/// at least the next one's is middling (Game of 24: 20 and 1), lower is low.
pub fn value_slot(value: f64, classes: &[(&str, f64)]) -> Slot {
    let mut values: Vec<f64> = classes.iter().map(|(_, v)| *v).collect();
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    match values.as_slice() {
        [.., mid, high] if value >= *high => Slot::ScoreHigh,
        [.., mid, _] if value >= *mid => Slot::ScoreMid,
        [_, _, ..] => Slot::ScoreLow,
        // No classes: plain numbers, no scale to place them on.
        _ => Slot::ScoreMid,
    }
}

/// The method's numbers for a node, e.g. `N=3 Q=0.52` (whole numbers without decimals).
pub fn metrics_text(node: &Node) -> Option<String> {
    if node.metrics.is_empty() {
        return None;
    }
    let parts: Vec<String> = node
        .metrics
        .iter()
        .map(|(k, v)| if v.fract() == 0.0 && v.abs() < 1e15 { format!("{k}={v:.0}") } else { format!("{k}={v:.2}") })
        .collect();
    Some(parts.join(" "))
}

fn label(view: &View, tree: &SearchTree, node: &Node) -> Line<'static> {
    // Below a pruned node the search goes nowhere: its own mark, in the pruned colour.
    let under_pruned = node.status != NodeStatus::Pruned && tree.is_pruned(node.id);
    let slot = if under_pruned { Slot::NodePruned } else { status_slot(node) };
    let mut spans = vec![
        Span::styled(format!("{} ", status_glyph(node)), view.style(slot)),
        Span::styled(format!("{} ", node.id), view.style(Slot::Dim)),
    ];
    let classes = crate::engine::task::value_classes(view.app.session.run.engine.core.task.as_ref());
    if let Some(b) = badge(node, classes) {
        let slot = value_slot(node.score.as_ref().map(|s| s.value).unwrap_or(0.0), classes);
        spans.push(Span::styled(format!("[{b}] "), view.style(slot)));
    }
    if let Some(m) = metrics_text(node) {
        spans.push(Span::styled(format!("{m} "), view.style(Slot::Dim)));
    }
    if matches!(node.origin, Origin::Human { .. }) {
        spans.push(Span::styled("✎ ", view.style(Slot::NodeEdited)));
    }
    let text = if node.id == tree.root() {
        format!("input {}", crate::safe_text::one_line(&node.thought))
    } else if let Some(answer) = sample_answer(view, tree, node) {
        // A sampled whole answer (CoT-SC): the vote it casts, not its first line.
        format!("answer: {answer}")
    } else if view.app.session.header.params.method.has_react_steps() {
        react_label(node)
    } else if let Some(label) = &node.label {
        // The method's own one-line label (a refinement round with its answer and verdict).
        label.clone()
    } else {
        node.thought.lines().next().unwrap_or("").to_string()
    };
    let mut style = view.style(slot);
    if matches!(node.origin, Origin::Human { .. }) {
        style = style.patch(view.style(Slot::NodeEdited)).add_modifier(Modifier::ITALIC);
    }
    spans.push(Span::styled(text, style));
    Line::from(spans)
}

/// The normalised answer a sample votes for, when the method holds a vote. Samples
/// are whole answers: leaves under the root that are not ReAct steps.
fn sample_answer(view: &View, tree: &SearchTree, node: &Node) -> Option<String> {
    if node.parent != Some(tree.root()) || !node.children.is_empty() || node.step.is_some() {
        return None;
    }
    view.app.session.run.engine.view().votes?.answer_of(node.id).map(str::to_string)
}

/// A ReAct step in one line: `2 Search[Corve River] · the thought`, so the actions of
/// sibling branches read side by side.
pub fn react_label(node: &Node) -> String {
    let Some(step) = &node.step else {
        return node.thought.lines().next().unwrap_or("").to_string();
    };
    let action = step.action.as_ref().map(crate::engine::Step::action_text);
    let thought = step.thought.as_deref().map(|t| t.lines().next().unwrap_or("").trim().to_string());
    match (action, thought) {
        (Some(a), Some(t)) => format!("{} {a} · {t}", node.depth),
        (Some(a), None) => format!("{} {a}", node.depth),
        (None, Some(t)) => format!("{} · {t}", node.depth),
        (None, None) => node.thought.lines().next().unwrap_or("").to_string(),
    }
}

/// Draw the rows in view (the flattened list of shown nodes, brought up to date with the
/// engine's tree first): a label is made for each drawn row and for no other node.
pub fn draw(frame: &mut Frame, view: &View, state: &mut TreeState, area: Rect) {
    let tree = view.app.session.run.engine.tree();
    state.sync(tree);
    // Counted once per change of the engine (a walk of every node), not every frame.
    let key = view.app.engine_key();
    let solved = match view.app.tree.solved_cache.get() {
        Some((k, solved)) if k == key => solved,
        _ => {
            let solved = tree.nodes().filter(|n| n.status == NodeStatus::Solution).count();
            view.app.tree.solved_cache.set(Some((key, solved)));
            solved
        }
    };
    let mut extra = format!(
        "{} node{}{}{}",
        tree.len(),
        if tree.len() == 1 { "" } else { "s" },
        // Right final states, not "solved": the run's verdict is the top answer's (header, transcript).
        if solved > 0 { format!(", {solved} ★ right") } else { String::new() },
        if view.app.following() { " · following" } else { "" }
    );
    // The filter and the find, first: they say what the rows are.
    for part in [view.app.find_title(view.selected), view.app.filter_title()].into_iter().flatten() {
        extra = format!("{part} · {extra}");
    }
    let block = view.block(super::Pane::Tree, &extra);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let window = state.window(inner.height as usize);
    let selected = state.selected().last().copied();
    let highlight = view.style(Slot::Selection);
    let found = view.style(Slot::FindMatch);
    let find = view.app.find.as_ref();
    let buf = frame.buffer_mut();
    let mut lines = Vec::with_capacity(window.len());
    for (i, row) in state.rows()[window].iter().enumerate() {
        let y = inner.y + i as u16;
        let line_area = Rect { y, height: 1, ..inner };
        // As tui-tree-widget drew it: two spaces a level, then the fold mark, then the label.
        let indent = row.depth * 2;
        let (x, _) = buf.set_stringn(inner.x, y, " ".repeat(indent), indent, ratatui::style::Style::default());
        let node = tree.node(NodeId(row.id));
        // Under a filter, a node whose children are all hidden shows as a leaf.
        let shown_children = state.filtered() && !node.children.iter().any(|c| state.shows(c.0));
        let mark = if node.children.is_empty() || shown_children {
            "  "
        } else if state.is_open(row.id) {
            "\u{25bc} "
        } else {
            "\u{25b6} "
        };
        let room = inner.width.saturating_sub(x - inner.x);
        let (x, _) = buf.set_stringn(x, y, mark, room as usize, ratatui::style::Style::default());
        let text_area = Rect { x, width: inner.width.saturating_sub(x - inner.x), ..line_area };
        let mut line = label(view, tree, node);
        if find.is_some_and(|f| f.is_match(row.id)) {
            // A match of the find: its number is marked (the selection still shows over it).
            if let Some(id) = line.spans.get_mut(1) {
                id.style = id.style.patch(found);
            }
        }
        Text::from(line).render(text_area, buf);
        if selected == Some(row.id) {
            buf.set_style(line_area, highlight);
        }
        lines.push((y, row.id));
    }
    state.drawn(inner, lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn badges_and_colours_come_from_the_tasks_value_classes() {
        let classes = crate::tasks::game24::VALUE_CLASSES;
        assert_eq!(value_slot(60.0, &classes), Slot::ScoreHigh);
        assert_eq!(value_slot(20.0, &classes), Slot::ScoreHigh);
        assert_eq!(value_slot(2.0, &classes), Slot::ScoreMid);
        assert_eq!(value_slot(0.003, &classes), Slot::ScoreLow);
        assert_eq!(value_slot(0.5, &[]), Slot::ScoreMid, "no scale without classes");
        let mut tree = SearchTree::new("4 9 10 13");
        let id = tree.add_child(NodeId(0), "t".into(), "t".into(), Origin::Model);
        let samples = vec!["sure".to_string(), "likely".into(), "?".into()];
        tree.node_mut(id).score = Some(Box::new(crate::engine::Score { value: 21.0, samples, note: None }));
        assert_eq!(badge(tree.node(id), &classes).as_deref(), Some("21 sl?"));
        // Another task's classes give their own letters.
        let other = [("no", 0.0), ("yes", 1.0)];
        let samples = vec!["yes".to_string(), "no".into()];
        tree.node_mut(id).score = Some(Box::new(crate::engine::Score { value: 1.0, samples, note: None }));
        assert_eq!(badge(tree.node(id), &other).as_deref(), Some("1 yn"));
    }
}
