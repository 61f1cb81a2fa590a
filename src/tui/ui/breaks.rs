//! The breakpoint list (`B`): each breakpoint with whether it is on, the one selected,
//! and the line a new one is typed on (with why the last one was refused).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::super::state::BreakList;
use super::super::theme::Slot;
use super::popup::{centered, frame_block};
use super::View;

pub fn draw(frame: &mut Frame, view: &View, area: Rect, list: &BreakList) {
    let error_rows = if list.error.is_some() { 3 } else { 0 };
    let typing = if list.adding.is_some() { 2 } else { 0 };
    let rows = list.items.len().max(1) as u16 + typing + error_rows + 2;
    let rect = centered(area, 72, rows.min(area.height));
    super::popup::clear_under(frame, view, rect);
    let hint = if list.adding.is_some() {
        "enter add · esc cancel"
    } else {
        "space on/off · a add · d remove · esc close"
    };
    let scope = if view.app.is_replay() { "Breakpoints (this replay stops there)" } else { "Breakpoints" };
    let block = frame_block(view, scope.into(), hint);
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let [items_area, add_area, error_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(typing), Constraint::Length(error_rows)]).areas(inner);
    let mut lines: Vec<Line> = list
        .items
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let here = i == list.selected && list.adding.is_none();
            let (on, spec) = match text.strip_prefix('#') {
                Some(spec) => (false, spec),
                None => (true, text.as_str()),
            };
            Line::from(vec![
                Span::styled(if here { "▶ " } else { "  " }, view.style(Slot::Selection)),
                Span::styled(
                    if on { "[on]  " } else { "[off] " },
                    view.style(if on { Slot::ScoreHigh } else { Slot::Dim }),
                ),
                Span::styled(spec.to_string(), view.style(if here { Slot::Selection } else { Slot::Text })),
            ])
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::from(Span::styled("  none: press a to add one (e.g. score<0.3)", view.style(Slot::Dim))));
    }
    frame.render_widget(Paragraph::new(lines), items_area);
    if let Some(editor) = &list.adding {
        let [label, line] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(add_area);
        frame.render_widget(Paragraph::new(Span::styled("new breakpoint:", view.style(Slot::Title))), label);
        frame.render_widget(&**editor, line);
    }
    if let Some(error) = &list.error {
        let text = Paragraph::new(Span::styled(error.clone(), view.style(Slot::Error))).wrap(Wrap { trim: true });
        frame.render_widget(text, error_area);
    }
}
