//! The list of warnings about the settings files at start.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::super::theme::Slot;
use super::popup::{centered, frame_block};
use super::View;

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
