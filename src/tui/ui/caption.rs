//! The caption box: a narrated session's caption for the replay cursor (demo sessions
//! tell their story this way), over the bottom of the tree pane, titled with the demo's
//! title and the caption's number.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::super::action::Action;
use super::super::theme::Slot;
use super::View;

/// `text` broken into lines of at most `width` characters, at spaces where it can.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            let mut word: Vec<char> = word.chars().collect();
            loop {
                let used = line.chars().count();
                let gap = usize::from(used > 0);
                if used + gap + word.len() <= width {
                    if gap == 1 {
                        line.push(' ');
                    }
                    line.extend(word.iter());
                    break;
                }
                if used > 0 {
                    lines.push(std::mem::take(&mut line));
                    continue;
                }
                // A word longer than the line: cut it.
                let rest = word.split_off(width);
                lines.push(word.iter().collect());
                word = rest;
            }
        }
        lines.push(line);
    }
    lines
}

/// The caption's title, else the demo's (the first caption's), else "Caption".
fn title(view: &View, caption: &crate::session::Caption) -> String {
    let demo_title = view.app.session.replay.as_ref().and_then(|r| r.captions.iter().find_map(|c| c.title.clone()));
    caption.title.clone().or(demo_title).unwrap_or_else(|| "Caption".to_string())
}

/// Draw the caption for the replay cursor over the bottom of `pane`, if there is one.
pub fn draw(frame: &mut Frame, view: &View, pane: Rect) {
    let app = view.app;
    let Some((caption, i, n)) = app.caption() else { return };
    if pane.width < 12 || pane.height < 5 {
        return;
    }
    let title = title(view, caption);
    let inner_width = pane.width.saturating_sub(2) as usize;
    let mut lines = wrap(&caption.text, inner_width);
    // At most half the pane, so the tree stays in view; `C` shows the rest.
    let max_lines = (pane.height / 2).saturating_sub(2).max(1) as usize;
    let cut = lines.len() > max_lines;
    if cut {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            let keep: String = last.chars().take(inner_width.saturating_sub(1)).collect();
            *last = format!("{keep}…");
        }
    }
    let height = lines.len() as u16 + 2;
    let rect = Rect { x: pane.x, y: pane.y + pane.height - height, width: pane.width, height };
    let next = view.key(Action::ReplayMarkForward);
    let back = view.key(Action::ReplayMarkBack);
    let whole = view.key(Action::ShowCaption);
    let mut hints = Vec::new();
    if cut && !whole.is_empty() {
        hints.push(format!("{whole} read all"));
    }
    if !next.is_empty() {
        hints.push(format!("{next} next · {back} back"));
    }
    let hint = if hints.is_empty() { String::new() } else { format!(" {} ", hints.join(" · ")) };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(view.style(Slot::BorderFocused))
        .style(view.style(Slot::Popup))
        // The number first: a long title is cut at the pane's edge, the number never.
        .title(Line::from(Span::styled(format!(" {i}/{n} · {title} "), view.style(Slot::Title))))
        .title_bottom(Line::from(Span::styled(hint, view.style(Slot::Dim))));
    let text: Vec<Line> = lines.into_iter().map(|l| Line::from(Span::styled(l, view.style(Slot::HelpDesc)))).collect();
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(text).block(block), rect);
}

/// `C`: the caption in full, in a popup as wide as the screen allows, scrolling when
/// the screen is too short for it.
pub fn draw_full(frame: &mut Frame, view: &View, area: Rect, scroll: u16) {
    let Some((caption, i, n)) = view.app.caption() else { return };
    let width = 84.min(area.width);
    let lines = wrap(&caption.text, width.saturating_sub(2) as usize);
    let rows = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let rect = super::popup::centered(area, width, rows.saturating_add(2));
    let shown = rect.height.saturating_sub(2);
    let limit = rows.saturating_sub(shown);
    view.app.help.set(shown, limit);
    super::popup::clear_under(frame, view, rect);
    let title = title(view, caption);
    let hint = if limit > 0 { "esc close · ↑↓ PgUp PgDn scroll" } else { "esc close" };
    let block = super::popup::frame_block(view, format!("{i}/{n} · {title}"), hint);
    let text: Vec<Line> = lines.into_iter().map(|l| Line::from(Span::styled(l, view.style(Slot::HelpDesc)))).collect();
    frame.render_widget(Paragraph::new(text).block(block).scroll((scroll.min(limit), 0)), rect);
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn captions_wrap_at_spaces_and_cut_long_words() {
        assert_eq!(wrap("the beam keeps five states", 10), vec!["the beam", "keeps five", "states"]);
        assert_eq!(wrap("abcdefghijkl x", 5), vec!["abcde", "fghij", "kl x"]);
        assert_eq!(wrap("one\ntwo", 20), vec!["one", "two"]);
    }
}
