//! For tree methods: the step-by-step log of what the search did and why.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::theme::Slot;
use super::View;
use crate::engine::event::Event;

/// ReAct: the trajectory up to the selected step, Thought / Action / Observation styled apart.
fn trajectory(view: &View) -> Vec<Line<'static>> {
    let tree = view.app.engine.tree();
    let Some(node) = tree.get(view.selected) else { return Vec::new() };
    let mut out =
        vec![Line::from(Span::styled(format!("Question: {}", view.app.engine.core.x), view.style(Slot::Title)))];
    for line in node.path.lines() {
        let lower = line.to_lowercase();
        let slot = if lower.starts_with("action") {
            Slot::Action
        } else if lower.starts_with("observation") {
            Slot::Observation
        } else {
            Slot::Thought
        };
        out.push(Line::from(Span::styled(line.to_string(), view.style(slot))));
    }
    out
}

fn is_react_step(view: &View) -> bool {
    let tree = view.app.engine.tree();
    tree.get(view.selected)
        .is_some_and(|n| n.id != tree.root() && n.path.lines().any(|l| l.to_lowercase().starts_with("action")))
}

pub fn lines(view: &View) -> Vec<Line<'static>> {
    use crate::engine::MethodKind;
    match view.app.header.params.method {
        MethodKind::React => return trajectory(view),
        // Hybrids: a ReAct step shows its trajectory; the question and the CoT-SC samples show the log (the switch).
        MethodKind::ReactCotSc | MethodKind::CotScReact if is_react_step(view) => return trajectory(view),
        _ => {}
    }
    let mut out = Vec::new();
    for e in &view.app.events {
        let (slot, text) = match e {
            Event::Log { text } => (Slot::Text, text.clone()),
            Event::Backtracked { from, to } => (
                Slot::Warning,
                format!(
                    "backtracked from {} to {}",
                    from.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" "),
                    to.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" ")
                ),
            ),
            Event::CallFailed { call, node, message } => {
                (Slot::Error, format!("call {call} for {node} failed: {message}"))
            }
            Event::Rejected { reason } => (Slot::Warning, format!("not done: {reason}")),
            Event::Finished { outcome } => (
                if outcome.solved { Slot::NodeSolution } else { Slot::Warning },
                match &outcome.answer {
                    Some(a) if outcome.solved => format!("finished: solved — {a}"),
                    Some(a) => format!("finished: not solved — top answer {a}"),
                    None => "finished: no answer".to_string(),
                },
            ),
            _ => continue,
        };
        out.push(Line::from(Span::styled(text, view.style(slot))));
    }
    out
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let all = lines(view);
    let height = area.height.saturating_sub(2) as usize;
    let from_end = (view.app.transcript_scroll as usize).min(all.len().saturating_sub(height));
    let start = all.len().saturating_sub(height + from_end);
    let shown: Vec<Line> = all.iter().skip(start).take(height).cloned().collect();
    let mut extra = if from_end > 0 { format!("{from_end} lines up") } else { String::new() };
    let mut block = view.block(super::Pane::Transcript, &extra);
    if let Some(r) = &view.app.replay {
        // The replay timeline: where the cursor is among the session's inputs.
        let width = (area.width as usize / 3).clamp(10, 60);
        let filled = (r.cursor * width).checked_div(r.total).unwrap_or(width);
        extra = format!(
            " timeline {}{} {}/{} {} ",
            "█".repeat(filled),
            "░".repeat(width - filled),
            r.cursor,
            r.total,
            if r.playing { format!("▶ {}/s", r.speed) } else { "[ ] { } P".to_string() }
        );
        block = block.title_bottom(Line::from(Span::styled(extra, view.style(Slot::Timeline))));
    }
    frame.render_widget(Paragraph::new(shown).block(block), area);
}
