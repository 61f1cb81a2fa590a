//! The open popup (`o`: demos, recorded sessions, a path field) and the list of
//! warnings about the settings files at start.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::super::app::OpenList;
use super::super::theme::Slot;
use super::popup::{centered, frame_block};
use super::View;

pub fn draw_open(frame: &mut Frame, view: &View, area: Rect, list: &OpenList) {
    let rows = list.entries.len().max(1) as u16;
    let rect = centered(area, 90, (rows + 4).min(area.height.saturating_sub(2)).max(6));
    super::popup::clear_under(frame, view, rect);
    let block = frame_block(
        view,
        "Open a demo or a session (read-only; f forks)".into(),
        "↑↓ choose · enter open · type a path · esc cancel",
    );
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let [items, _, path] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(1), Constraint::Length(1)]).areas(inner);
    // Keep the selected entry in sight.
    let height = items.height as usize;
    let first = list.selected.saturating_sub(height.saturating_sub(1));
    let lines: Vec<Line> = if list.entries.is_empty() {
        vec![Line::from(Span::styled("no demos or sessions found", view.style(Slot::Dim)))]
    } else {
        list.entries
            .iter()
            .enumerate()
            .skip(first)
            .take(height)
            .map(|(i, e)| {
                let (mark, style) = if i == list.selected {
                    ("▶ ", view.style(Slot::Selection))
                } else {
                    ("  ", view.style(Slot::Popup))
                };
                Line::from(Span::styled(format!("{mark}{}", e.label), style))
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), items);
    frame.render_widget(&*list.path, path);
}

pub fn draw_problems(frame: &mut Frame, view: &View, area: Rect, lines: &[String], scroll: u16) {
    let width = area.width.saturating_sub(4).min(100);
    let text: Vec<Line> = lines.iter().map(|l| Line::from(format!("• {l}"))).collect();
    // Room for wrapped lines: a rough count, capped by the screen.
    let needed: u16 = lines.iter().map(|l| (l.chars().count() as u16 + 2) / width.max(1) + 1).sum();
    let rect = centered(area, width + 2, (needed + 2).min(area.height));
    super::popup::clear_under(frame, view, rect);
    let block =
        frame_block(view, format!("{} warnings about the settings files", lines.len()), "esc close · ↑↓ scroll");
    frame.render_widget(
        Paragraph::new(text)
            .style(view.style(Slot::Warning))
            .block(block)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        rect,
    );
}
