//! The session browser (`o`): a tui-tree-widget tree of the sessions, folder → task →
//! method → session, with the filter typed so far and the selected session in full.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;
use tui_tree_widget::Tree;

use super::super::state::{scan::Outcome, BrowserNode as Node, OpenSource, SessionBrowser};
use super::super::theme::Slot;
use super::popup::{centered, clear_under, frame_block};
use super::status::short_count;
use super::View;
use crate::tui::state::scan::SessionRow;

/// The cells a session's row takes before its text: the selection mark, the indent of
/// its depth and the widget's fold symbol.
fn lead(depth: usize) -> usize {
    2 + depth * 2 + 2
}

/// `spans` cut to `width` cells, the last one cut ending in `…`.
fn fit(spans: Vec<(String, Style)>, width: usize) -> Line<'static> {
    let mut left = width;
    let mut out = Vec::new();
    for (text, style) in spans {
        if left == 0 {
            break;
        }
        let n = text.chars().count();
        if n <= left {
            left -= n;
            out.push(Span::styled(text, style));
        } else {
            out.push(Span::styled(crate::safe_text::clip(&text, left), style));
            left = 0;
        }
    }
    Line::from(out)
}

fn outcome_slot(outcome: &Outcome) -> Slot {
    match outcome {
        Outcome::Solved => Slot::NodeSolution,
        Outcome::NotSolved => Slot::Warning,
        Outcome::Stopped(_) => Slot::Error,
        Outcome::Live => Slot::ModeRunning,
        Outcome::Unfinished | Outcome::Ended => Slot::Dim,
    }
}

/// `88 calls  12.7k tok`, or blanks while the session has no end line.
fn figures(row: &SessionRow) -> String {
    match row.read.as_ref().ok().and_then(|s| s.totals) {
        Some(t) => format!("{:>4} calls {:>6} tok", t.llm_calls, short_count(t.tokens())),
        None => format!("{:>4} calls {:>6} tok", "–", "–"),
    }
}

/// A session's row: date, outcome, calls and tokens, input, provider/model, task, method.
fn session_line(view: &View, row: &SessionRow, width: usize) -> Line<'static> {
    let date = row.date();
    // Narrow: the date without its year.
    let date = if width < 100 && date.len() == 16 { date[5..].to_string() } else { date };
    let date_w = if width < 100 { 11 } else { 16 };
    let dim = view.style(Slot::Dim);
    let s = match &row.read {
        Ok(s) => s,
        Err(e) => {
            let text = format!("{} — cannot be read: {}", row.name, crate::safe_text::one_line(e));
            return fit(vec![(format!("{date:<date_w$} "), dim), (text, view.style(Slot::Error))], width);
        }
    };
    let input_room = if width < 100 { 18 } else { 40 };
    let mut spans = vec![
        (format!("{date:<date_w$} "), dim),
        (format!("{:<12} ", s.outcome.text()), view.style(outcome_slot(&s.outcome))),
        (format!("{}  ", figures(row)), view.style(Slot::Text)),
    ];
    // A bundled demo is known by its title: before its input, or in its place when narrow.
    match row.title() {
        Some(title) if width < 100 => spans.push((crate::safe_text::clip(title, 28), view.style(Slot::Title))),
        Some(title) => spans.extend([
            (format!("{title} · "), view.style(Slot::Title)),
            (crate::safe_text::clip(&s.input, input_room), view.style(Slot::Thought)),
        ]),
        None => spans.push((crate::safe_text::clip(&s.input, input_room), view.style(Slot::Thought))),
    }
    spans.push((format!(" · {}/{} · {} · {}", s.provider, s.model, s.task, s.method), dim));
    fit(spans, width)
}

fn group_line(view: &View, label: &str, sessions: usize, width: usize) -> Line<'static> {
    let count = format!("  {sessions} session{}", if sessions == 1 { "" } else { "s" });
    fit(vec![(label.to_string(), view.style(Slot::Title)), (count, view.style(Slot::Dim))], width)
}

/// The selected node in full, on two lines.
fn selected_lines(view: &View, browser: &SessionBrowser, width: usize) -> Vec<Line<'static>> {
    let dim = view.style(Slot::Dim);
    let Some(row) = browser.selected_row().map(|i| &browser.rows[i]) else {
        let selected = browser.state.borrow().selected().last().cloned().unwrap_or_default();
        let what = selected.split_once(':').map(|(_, name)| name.to_string()).unwrap_or_default();
        return vec![fit(vec![(format!("{what}: enter or ← → fold and unfold"), dim)], width)];
    };
    let place = match &row.source {
        OpenSource::File(path) => super::super::state::shown_path(path),
        OpenSource::Demo(i) => format!("demo {} · {} · {}", i + 1, row.name, row.title().unwrap_or_default()),
    };
    let first = format!("{place} · {}", row.date());
    let second = match &row.read {
        Err(e) => format!("cannot be read: {}", crate::safe_text::one_line(e)),
        Ok(s) => {
            let mut parts = vec![s.input.clone(), format!("{}/{}", s.provider, s.model), s.outcome.text()];
            match &s.outcome {
                Outcome::Stopped(why) => parts.push(crate::safe_text::one_line(why)),
                Outcome::Live => parts.push("enter follows it as it is written".into()),
                _ => {}
            }
            if let Some(a) = &s.answer {
                parts.push(format!("answer {a}"));
            }
            if let Some(t) = &s.totals {
                parts.push(format!("{} calls, {} tokens", t.llm_calls, t.tokens()));
            }
            if let Some(note) = &s.note {
                parts.push(crate::safe_text::one_line(note));
            }
            parts.join(" · ")
        }
    };
    vec![fit(vec![(first, dim)], width), fit(vec![(second, view.style(Slot::Text))], width)]
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect, browser: &SessionBrowser) {
    let rect = centered(area, area.width.saturating_sub(4).clamp(20, 160), area.height.saturating_sub(2).max(6));
    clear_under(frame, view, rect);
    let shown = browser.matching().len();
    let title = if browser.filter.is_empty() {
        format!("Sessions: {} — folder → task → method, newest first", browser.rows.len())
    } else {
        format!("Sessions: {shown} of {} match", browser.rows.len())
    };
    let block = frame_block(view, title, "type to filter · ↑↓ move · ← → fold · enter open · esc close");
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    // The message line (why a session could not be opened) is under the browser: it is shown in it.
    let said = u16::from(view.app.message.is_some());
    let [tree_area, detail, filter, message] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(2), Constraint::Length(1), Constraint::Length(said)])
            .areas(inner);
    browser.page.set(usize::from(tree_area.height));
    let width = usize::from(tree_area.width);
    let nodes = browser.tree();
    if nodes.is_empty() {
        let text = if browser.filter.is_empty() {
            "no sessions yet".to_string()
        } else {
            format!("no session matches “{}”: enter opens it as a file's path", browser.filter)
        };
        frame.render_widget(Paragraph::new(Span::styled(text, view.style(Slot::Dim))), tree_area);
    } else {
        let text = |n: &Node, depth: usize| {
            let room = width.saturating_sub(lead(depth));
            match n {
                Node::Group { label, sessions, .. } => group_line(view, label, *sessions, room),
                Node::Session(i) => session_line(view, &browser.rows[*i], room),
            }
        };
        let items = SessionBrowser::items(&nodes, 0, &text);
        if let Ok(tree) = Tree::new(&items) {
            let tree = tree.highlight_symbol("▶ ").highlight_style(view.style(Slot::Selection));
            frame.render_stateful_widget(tree, tree_area, &mut browser.state.borrow_mut());
        }
    }
    frame.render_widget(Paragraph::new(selected_lines(view, browser, width)), detail);
    let typed = if browser.filter.is_empty() {
        let hint = "filter: type words of a task, input, method, model, outcome or date, or a file's path";
        fit(vec![(hint.to_string(), view.style(Slot::Dim))], width)
    } else {
        let shown = format!("{}▏", browser.filter);
        // The end of a long filter stays in sight.
        let room = width.saturating_sub(8);
        let skip = shown.chars().count().saturating_sub(room);
        let shown = if skip > 0 { format!("…{}", shown.chars().skip(skip + 1).collect::<String>()) } else { shown };
        Line::from(vec![Span::styled("filter: ", view.style(Slot::Dim)), Span::styled(shown, view.style(Slot::Text))])
    };
    frame.render_widget(Paragraph::new(typed), filter);
    if let Some(text) = &view.app.message {
        let line = fit(vec![(crate::safe_text::one_line(text), view.style(Slot::Warning))], width);
        frame.render_widget(Paragraph::new(line), message);
    }
}
