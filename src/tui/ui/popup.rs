//! Popups: help (generated from the keymap), the thought editor, one-line questions.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::super::app::{Popup, Prompting};
use super::super::theme::Slot;
use super::View;

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
            let rect = centered(area, 76, 9);
            frame.render_widget(Clear, rect);
            let block =
                frame_block(view, format!("Edit {node}: becomes a new sibling, evaluated"), "ctrl-s save · esc cancel");
            let inner = block.inner(rect);
            frame.render_widget(block, rect);
            frame.render_widget(&**editor, inner);
        }
        Popup::Ask { what, editor } => {
            let title = match what {
                Prompting::NewInput => format!("New input: {}", view.app.setup.task.info().input_hint),
                Prompting::SaveAs => "Save the session as".to_string(),
            };
            let rect = centered(area, 70, 3);
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
