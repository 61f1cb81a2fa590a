//! Popups: help (generated from the keymap), the thought editor, one-line questions.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::super::app::{Popup, Prompting};
use super::super::theme::Slot;
use super::View;
use crate::engine::NodeId;

pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

pub(super) fn frame_block(view: &View, title: String, hint: &str) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(view.style(Slot::BorderFocused))
        .style(view.style(Slot::Popup))
        .title(Line::from(Span::styled(format!(" {title} "), view.style(Slot::Title))))
        .title_bottom(Line::from(Span::styled(format!(" {hint} "), view.style(Slot::Dim))))
}

pub fn help_lines(view: &View) -> Vec<Line<'static>> {
    let rows = view.app.keymap.help();
    let width = rows.iter().map(|(k, _, _)| k.chars().count()).max().unwrap_or(8).min(18);
    rows.into_iter()
        .map(|(keys, _, desc)| {
            Line::from(vec![
                Span::styled(format!(" {keys:<width$} "), view.style(Slot::HelpKey)),
                Span::styled(desc, view.style(Slot::HelpDesc)),
            ])
        })
        .collect()
}

/// What saving the edit popup does, in the method's terms: a ReAct step (a node with a
/// step) is continued by the agent; a tree search's thought becomes a sibling, evaluated
/// if the task has an evaluator; any other node (a sample) a sibling.
pub fn edit_title(view: &View, node: NodeId) -> String {
    let engine = &view.app.run.engine;
    let n = engine.tree().node(node);
    if let Some(step) = &n.step {
        return format!("Edit step {}: the agent continues from your thought", step.n);
    }
    let evaluated = if engine.core.task.has_evaluator() { ", evaluated" } else { "" };
    if view.app.header.params.method.info().tree_search {
        format!("Edit thought {node}: becomes a new sibling{evaluated}")
    } else {
        format!("Edit {node}: becomes a new sibling{evaluated}")
    }
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let Some(popup) = &view.app.popup else { return };
    match popup {
        Popup::Help { scroll } => {
            let lines = help_lines(view);
            let rect = centered(area, 90, lines.len() as u16 + 2);
            frame.render_widget(Clear, rect);
            let block = frame_block(view, "Keys".into(), "esc close · ↑↓ scroll");
            frame.render_widget(Paragraph::new(lines).block(block).scroll((*scroll, 0)), rect);
        }
        Popup::Edit { node, editor } => {
            let width = 76.min(area.width);
            // Tall enough for the wrapped text and a line to type on, within the screen.
            let rows: usize = editor
                .lines()
                .iter()
                .map(|l| l.chars().count().max(1).div_ceil((width as usize).saturating_sub(2).max(1)))
                .sum();
            let rect = centered(
                area,
                width,
                u16::try_from(rows)
                    .unwrap_or(u16::MAX)
                    .saturating_add(3)
                    .clamp(5, area.height.saturating_sub(2).max(5)),
            );
            frame.render_widget(Clear, rect);
            let block = frame_block(view, edit_title(view, *node), "ctrl-s save · esc cancel");
            let inner = block.inner(rect);
            frame.render_widget(block, rect);
            frame.render_widget(&**editor, inner);
        }
        Popup::Ask { what, editor } => {
            let title = match what {
                Prompting::NewInput => {
                    let info = view.app.setup.task.info();
                    // The examples are the editor's placeholder.
                    format!("New {}: {}", info.input_noun, info.input_hint)
                }
                Prompting::SaveAs => "Save the session as".to_string(),
            };
            let width = (title.chars().count() as u16 + 6).max(70);
            let rect = centered(area, width, 3);
            frame.render_widget(Clear, rect);
            let block = frame_block(view, title, "enter ok · esc cancel");
            let [inner] = Layout::vertical([Constraint::Length(1)]).areas(block.inner(rect));
            frame.render_widget(block, rect);
            frame.render_widget(&**editor, inner);
        }
        Popup::Open(list) => super::problems::draw_open(frame, view, area, list),
        Popup::Problems { lines, scroll } => super::problems::draw_problems(frame, view, area, lines, *scroll),
    }
}
