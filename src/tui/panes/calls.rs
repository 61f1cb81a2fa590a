//! The calls pane (`L`): every model call of the run shown (live, or a replay at its
//! cursor) in the order they were made, with the node it was for, its purpose, its
//! latency, its prompt and completion tokens and its status: `ok`, `retry` (a reply
//! asked again with a format reminder, answered), `cached` (answered from the cache: no
//! call made, so no latency or tokens of its own), `failed KIND` (the error kind the
//! session recorded), `waiting` (in flight) or `no reply` (cancelled). `f` shows the
//! failed calls only, `p` one purpose after another; the last line sums what is shown
//! with the rule the run's totals use (a call counts when it reached the provider).
//! Every figure is read from the engine's call records, which a replay rebuilds from
//! the session's recorded replies.

use std::cell::Cell;

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::{Context, Handled, Kind, Pane};
use crate::engine::Engine;
use crate::protocol::CallErrorKind;
use crate::tui::action::Action;
use crate::tui::theme::Slot;

pub const KIND: Kind = Kind {
    name: "calls",
    key: "L",
    about: "The calls pane: every model call of the run with its purpose, latency, tokens and status \
            (in it: f failed only, p one purpose after another, esc closes)",
    hints: &[("↑↓", "scroll"), ("f", "failed only"), ("p", "purpose"), ("esc", "close")],
    open: || Box::<Calls>::default(),
};

/// A call's outcome as the pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// Asked again with a format reminder after an unreadable reply, and answered.
    Retry,
    Cached,
    /// The error kind the session recorded (`rate_limited`, `timeout`, ...).
    Failed(String),
    Waiting,
    /// No reply, none awaited (cancelled).
    NoReply,
}

impl Status {
    fn text(&self) -> String {
        match self {
            Status::Ok => "ok".into(),
            Status::Retry => "retry".into(),
            Status::Cached => "cached".into(),
            Status::Failed(kind) => format!("failed {kind}"),
            Status::Waiting => "waiting".into(),
            Status::NoReply => "no reply".into(),
        }
    }
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub call: u64,
    pub node: usize,
    pub purpose: &'static str,
    /// Milliseconds, where a provider measured them (not a cached or simulated reply).
    pub latency_ms: Option<u64>,
    /// Prompt and completion tokens of a reply the provider gave (not a cached one).
    pub tokens: Option<(u64, u64)>,
    pub status: Status,
    /// It reached the provider: counted in the run's calls (a cached reply, a call not
    /// sent and one sharing another's failure are not).
    pub counted: bool,
}

/// Every model call of `engine`, in the order they were made.
pub fn rows(engine: &Engine) -> Vec<Row> {
    let pending = engine.pending_calls();
    engine
        .core
        .calls
        .iter()
        .map(|(&call, record)| {
            let retry = record.request.context.get("retry").and_then(|v| v.as_bool()) == Some(true);
            let mut row = Row {
                call,
                node: record.node.0,
                purpose: record.request.purpose.label(),
                latency_ms: None,
                tokens: None,
                status: Status::NoReply,
                counted: false,
            };
            match &record.reply {
                Some(Ok(r)) if r.cached => row.status = Status::Cached,
                Some(Ok(r)) => {
                    row.status = if retry { Status::Retry } else { Status::Ok };
                    row.latency_ms = (!r.simulated).then_some(r.latency_ms);
                    row.tokens = Some((r.usage.prompt_tokens, r.usage.completion_tokens));
                    row.counted = true;
                }
                Some(Err(e)) => {
                    row.status = Status::Failed(e.kind.as_str().to_string());
                    row.counted = !matches!(e.kind, CallErrorKind::Shared | CallErrorKind::NotSent);
                }
                None if pending.contains(&call) => row.status = Status::Waiting,
                None => {}
            }
            row
        })
        .collect()
}

/// The pane's state: its filter and scroll (the rows shown at the last draw bound it).
#[derive(Debug, Default)]
pub struct Calls {
    pub failed_only: bool,
    /// Only the calls of this purpose.
    pub purpose: Option<&'static str>,
    pub scroll: Cell<usize>,
    /// Rows the list had room for when last drawn.
    height: Cell<usize>,
}

impl Calls {
    /// The rows the filter lets through.
    pub fn shown(&self, engine: &Engine) -> Vec<Row> {
        rows(engine)
            .into_iter()
            .filter(|r| !self.failed_only || matches!(r.status, Status::Failed(_)))
            .filter(|r| self.purpose.is_none_or(|p| r.purpose == p))
            .collect()
    }

    /// The next purpose among the run's calls (in the order they first appear), then all.
    fn next_purpose(&mut self, engine: &Engine) {
        let mut purposes: Vec<&'static str> = Vec::new();
        for row in rows(engine) {
            if !purposes.contains(&row.purpose) {
                purposes.push(row.purpose);
            }
        }
        let at = self.purpose.and_then(|p| purposes.iter().position(|q| *q == p));
        self.purpose = match at {
            None => purposes.first().copied(),
            Some(i) => purposes.get(i + 1).copied(),
        };
    }

    fn scroll_by(&self, engine: &Engine, action: Action) -> bool {
        let page = self.height.get().max(1);
        let max = self.shown(engine).len().saturating_sub(page);
        let now = self.scroll.get();
        let to = match action {
            Action::Up => now.saturating_sub(1),
            Action::Down => now + 1,
            Action::PageUp => now.saturating_sub(page),
            Action::PageDown => now + page,
            Action::Top => 0,
            Action::Bottom => max,
            _ => return false,
        };
        self.scroll.set(to.min(max));
        true
    }

    /// What the title says of the filter.
    fn filter_text(&self) -> String {
        match (self.failed_only, self.purpose) {
            (false, None) => String::new(),
            (true, None) => "failed only".into(),
            (false, Some(p)) => format!("purpose {p}"),
            (true, Some(p)) => format!("failed {p} only"),
        }
    }
}

/// The sum line: calls shown, how many failed and were cached, and the tokens and time
/// of those that reached the provider.
pub fn summary(shown: &[Row], all: usize) -> String {
    let failed = shown.iter().filter(|r| matches!(r.status, Status::Failed(_))).count();
    let cached = shown.iter().filter(|r| r.status == Status::Cached).count();
    let counted = shown.iter().filter(|r| r.counted).count();
    let (prompt, completion) =
        shown.iter().filter_map(|r| r.tokens).fold((0, 0), |(p, c), (rp, rc)| (p + rp, c + rc));
    let ms: u64 = shown.iter().filter_map(|r| r.latency_ms).sum();
    let of = if shown.len() == all { format!("{all} calls") } else { format!("{} of {all} calls", shown.len()) };
    let mut out = format!("{of} · {counted} sent · {failed} failed · {cached} cached · {prompt}+{completion} tokens");
    if ms > 0 {
        out.push_str(&format!(" · {:.1} s", ms as f64 / 1000.0));
    }
    out
}

fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn row_text(r: &Row, width: usize) -> String {
    let dash = || "–".to_string();
    let ms = r.latency_ms.map_or_else(dash, |m| m.to_string());
    let (p, c) = r.tokens.map_or_else(|| (dash(), dash()), |(p, c)| (p.to_string(), c.to_string()));
    let line = format!("{:>5} {:<12} {:>5} {:>7} {:>7} {:>6}  {}", r.call, fit(r.purpose, 12), r.node, ms, p, c, r.status.text());
    fit(&line, width)
}

impl Pane for Calls {
    fn handle(&mut self, key: &KeyEvent, action: Option<Action>, cx: &Context) -> Handled {
        match key.code {
            KeyCode::Esc => return Handled::Close,
            KeyCode::Char('f') => self.failed_only = !self.failed_only,
            KeyCode::Char('p') => self.next_purpose(cx.engine),
            _ => {
                return match action {
                    Some(a) if self.scroll_by(cx.engine, a) => Handled::Yes,
                    _ => Handled::No,
                }
            }
        }
        self.scroll.set(0);
        Handled::Yes
    }

    fn draw(&self, frame: &mut Frame, area: Rect, cx: &Context) {
        let style = |slot| cx.theme.style(slot);
        let index = super::PANES.iter().position(|k| k.name == KIND.name).and_then(|i| u8::try_from(i).ok());
        let close = index.map(|i| (cx.key)(Action::Pane(i))).unwrap_or_default();
        let mut title = vec![Span::styled(" calls ", style(Slot::Title))];
        let filter = self.filter_text();
        if !filter.is_empty() {
            title.push(Span::styled(format!("{filter} "), style(Slot::Dim)));
        }
        title.push(Span::styled(format!("f failed · p purpose · esc {close} close "), style(Slot::Dim)));
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Thick)
            .border_style(style(Slot::BorderFocused))
            .title(Line::from(title));
        let inner = block.inner(area);
        frame.render_widget(Clear, area);
        frame.render_widget(block, area);
        let width = inner.width as usize;
        let all = rows(cx.engine).len();
        let shown = self.shown(cx.engine);
        // The heading and the sum line take two rows.
        let room = (inner.height as usize).saturating_sub(2);
        self.height.set(room);
        let scroll = self.scroll.get().min(shown.len().saturating_sub(room.max(1)));
        self.scroll.set(scroll);
        let heading = format!("{:>5} {:<12} {:>5} {:>7} {:>7} {:>6}  {}", "call", "purpose", "node", "ms", "prompt", "compl", "status");
        let mut lines = vec![Line::from(Span::styled(fit(&heading, width), style(Slot::Dim)))];
        if shown.is_empty() {
            let none = if all == 0 { "no model calls yet" } else { "no call meets the filter" };
            lines.push(Line::from(Span::styled(none, style(Slot::Dim))));
        }
        for r in shown.iter().skip(scroll).take(room) {
            let slot = match r.status {
                Status::Failed(_) => Slot::Error,
                Status::Cached | Status::NoReply | Status::Waiting => Slot::Dim,
                _ => Slot::Text,
            };
            lines.push(Line::from(Span::styled(row_text(r, width), style(slot))));
        }
        lines.resize(inner.height.saturating_sub(1) as usize, Line::default());
        lines.push(Line::from(Span::styled(fit(&summary(&shown, all), width), style(Slot::Title))));
        frame.render_widget(Paragraph::new(lines), inner);
    }
}
