//! The selected node in full: thought, state, scores, origin, and every prompt
//! sent and raw reply received for it.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::super::theme::Slot;
use super::View;
use crate::engine::tree::format_value;
use crate::engine::{NodeStatus, Origin};

pub fn lines(view: &View) -> Vec<Line<'static>> {
    lines_with(view, view.app.view.thinking_open)
}

/// [`lines`], with each reply's thinking whole (`thinking_open`) or folded to its first
/// lines (the pager and the clipboard take it whole).
pub fn lines_with(view: &View, thinking_open: bool) -> Vec<Line<'static>> {
    let app = view.app;
    let node_id = view.selected;
    let tree = app.session.run.engine.tree();
    let Some(n) = tree.get(node_id) else { return vec![] };
    let head = view.style(Slot::Title);
    let dim = view.style(Slot::Dim);
    let text = view.style(Slot::Text);
    let mut out = Vec::new();
    let origin = match &n.origin {
        Origin::Root => format!("the {} input", app.session.run.engine.core.task.info().input_noun),
        Origin::Model if app.session.header.provider.starts_with("import:") => {
            format!(
                "imported from {} (model {})",
                app.session.header.provider.trim_start_matches("import:"),
                app.session.header.model
            )
        }
        Origin::Model => format!("proposed by {}", app.session.header.model),
        Origin::Human { edited_from: Some(from) } => format!("edited by hand from {from}"),
        Origin::Human { edited_from: None } => "written by hand".to_string(),
    };
    out.push(Line::from(vec![
        Span::styled(format!("{} ", n.id), head),
        Span::styled(n.status.label().to_string(), view.style(super::tree::status_slot(n))),
        Span::styled(format!(" · depth {} · {origin}", n.depth), dim),
    ]));
    match &n.status {
        NodeStatus::Dropped(r) => out.push(Line::from(Span::styled(format!("why: {r}"), view.style(Slot::Warning)))),
        NodeStatus::Invalid(r) => out.push(Line::from(Span::styled(format!("why: {r}"), view.style(Slot::Warning)))),
        _ => {}
    }
    out.push(Line::from(Span::styled("Thought", head)));
    for l in n.thought.lines() {
        out.push(Line::from(Span::styled(format!("  {l}"), view.style(Slot::Thought))));
    }
    // The method's notes on the node (feedback on an attempt, a reflection), under the thought.
    for note in &n.notes {
        out.push(Line::from(Span::styled(capitalised(&note.label), head)));
        for l in note.text.lines() {
            out.push(Line::from(Span::styled(format!("  {l}"), view.style(Slot::Observation))));
        }
    }
    if n.id != tree.root() {
        out.push(Line::from(Span::styled("State", head)));
        if let Some(state) = app.session.run.engine.core.task.describe_state(&app.session.run.engine.core.x, &n.path) {
            out.push(Line::from(Span::styled(format!("  {state}"), text)));
        }
        for l in n.path.lines() {
            out.push(Line::from(Span::styled(format!("  {l}"), dim)));
        }
        // A task with a grid (crosswords) draws the state's board and its clues' verdicts.
        if let Some(board) = app.session.run.engine.core.task.board() {
            let board = board.board(&app.session.run.engine.core.x, &n.path, n.score.as_deref());
            out.extend(super::board::lines(&board, &view.theme));
        }
    }
    if let Some(s) = &n.score {
        let mut v = format!("value {}", format_value(s.value));
        if !s.samples.is_empty() {
            v.push_str(&format!(" from {}", s.samples.join(", ")));
        }
        if let Some(note) = &s.note {
            v.push_str(&format!(" ({note})"));
        }
        out.push(Line::from(vec![Span::styled("Score ", head), Span::styled(v, text)]));
    }
    if let Some(m) = super::tree::metrics_text(n) {
        out.push(Line::from(vec![Span::styled("Metrics ", head), Span::styled(m, text)]));
    }
    if let Some(a) = &n.answer {
        out.push(Line::from(vec![Span::styled("Answer ", head), Span::styled(a.clone(), text)]));
    }
    for issue in &n.issues {
        out.push(Line::from(Span::styled(format!("! {issue}"), view.style(Slot::Warning))));
    }
    call_lines(view, n, thinking_open, &mut out);
    out
}

/// Every call behind `n`, the one that wrote it first: its purpose, tokens and time, the
/// messages sent, the replies (or the text streaming in) and any native tool calls.
fn call_lines(view: &View, n: &crate::engine::Node, thinking_open: bool, out: &mut Vec<Line<'static>>) {
    let app = view.app;
    let head = view.style(Slot::Title);
    let dim = view.style(Slot::Dim);
    // The call that wrote this node (on its parent, for model-made nodes) comes first.
    let mut calls: Vec<(u64, &str)> =
        n.made_by.filter(|c| !n.calls.contains(c)).map(|c| (c, " · wrote this")).into_iter().collect();
    let later = if app.session.header.params.method.has_react_steps() { " · for the next step" } else { "" };
    calls.extend(n.calls.iter().map(|&c| (c, if Some(c) == n.made_by { " · wrote this" } else { later })));
    for (call, role) in &calls {
        let Some(record) = app.session.run.engine.core.calls.get(call) else { continue };
        let r = &record.request;
        let mut title = format!("── call {call} · {} · n={}{role}", r.purpose.label(), r.n);
        match &record.reply {
            Some(Ok(resp)) => {
                // The simulated model's counts are its own (made by the same text rule), as
                // the header's and the summary's are: only a real server's missing usage is an estimate.
                let est = match (resp.usage.estimated && !resp.simulated, r.tools.is_empty()) {
                    (false, _) => "",
                    (true, true) => " (estimated from the text: the server reported no usage)",
                    (true, false) => {
                        " (estimated from the text and the tool definitions: the server reported no usage)"
                    }
                };
                let thought = match resp.usage.reasoning_tokens {
                    0 => String::new(),
                    r => format!(" ({r} thinking)"),
                };
                title.push_str(&format!(
                    " · {}+{}{thought} tokens{est} · {} ms",
                    resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.latency_ms
                ));
                if resp.cached {
                    title.push_str(" · cached");
                }
                if resp.simulated {
                    title.push_str(" · simulated");
                }
            }
            Some(Err(e)) => title.push_str(&format!(" · failed: {e}")),
            // Text streaming in is a reply arriving, not a wait.
            None if is_streaming(app, *call) => title.push_str(" · receiving"),
            None => title.push_str(" · waiting"),
        }
        out.push(Line::from(Span::styled(title, view.style(Slot::Action))));
        if !r.tools.is_empty() {
            let names: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
            out.push(Line::from(Span::styled(format!("tools offered: {}", names.join(", ")), head)));
        }
        for m in &r.messages {
            let mut label = format!("prompt ({:?}", m.role).to_lowercase();
            if let Some(id) = &m.tool_call_id {
                // A native tool result: the call it answers.
                label.push_str(&format!(", result of {id}"));
            }
            out.push(Line::from(Span::styled(format!("{label}):"), head)));
            for l in m.content.lines() {
                out.push(Line::from(Span::styled(format!("  {l}"), dim)));
            }
            for c in &m.tool_calls {
                let id = c.id.as_deref().unwrap_or("?");
                out.push(Line::from(Span::styled(format!("  tool call {id}: {}", c.describe()), dim)));
            }
        }
        if record.reply.is_none() {
            for (sample, text) in app.session.streamed(*call) {
                out.push(Line::from(Span::styled(format!("receiving sample {}:", sample + 1), head)));
                for l in text.lines() {
                    out.push(Line::from(Span::styled(format!("  {l}"), view.style(Slot::Observation))));
                }
            }
        }
        if let Some(Ok(resp)) = &record.reply {
            for (i, c) in resp.completions.iter().enumerate() {
                thinking_lines(view, c, thinking_open, out);
                out.push(Line::from(Span::styled(format!("reply {}:", i + 1), head)));
                for l in c.text.lines() {
                    out.push(Line::from(Span::styled(format!("  {l}"), view.style(Slot::Observation))));
                }
                // Native tool calls are part of the raw reply too.
                for call in &c.tool_calls {
                    let line = format!("  tool call {}", call.describe());
                    out.push(Line::from(Span::styled(line, view.style(Slot::Action))));
                }
            }
        }
    }
}

/// How many lines of a piece of thinking the folded detail pane shows.
const FOLDED_LINES: usize = 3;

/// A reply's thinking, apart from its answer and dimmed (no reader saw it): where it
/// came from and about how long it is, then its text (folded: its first lines and how
/// many more there are); a redacted or encrypted piece is named, never shown.
fn thinking_lines(view: &View, c: &crate::protocol::Completion, open: bool, out: &mut Vec<Line<'static>>) {
    let dim = view.style(Slot::Dim);
    for t in &c.thinking {
        let tokens = crate::protocol::estimate_tokens(&t.text);
        let title = match (t.text.trim().is_empty(), t.signature.is_some()) {
            (true, true) => format!("thinking ({}, encrypted: passed back, not shown)", t.kind.label()),
            (true, false) => format!("thinking ({}, empty)", t.kind.label()),
            (false, _) => format!("thinking ({}, about {tokens} tokens; not read as the answer):", t.kind.label()),
        };
        out.push(Line::from(Span::styled(title, view.style(Slot::Title))));
        let all = t.text.lines().count();
        let shown = if open || all <= FOLDED_LINES + 1 { all } else { FOLDED_LINES };
        for l in t.text.lines().take(shown) {
            out.push(Line::from(Span::styled(format!("  │ {l}"), dim)));
        }
        if shown < all {
            let key = view.key(crate::tui::action::Action::Thinking);
            let more = format!("  │ … {} more lines ({key} unfolds; / finds in them, V pages them)", all - shown);
            out.push(Line::from(Span::styled(more, view.style(Slot::HelpKey))));
        }
    }
}

/// Whether text of `call`'s reply is streaming in (the call has not answered yet).
fn is_streaming(app: &crate::tui::state::App, call: u64) -> bool {
    app.session.streamed(call).next().is_some()
}

/// Whether a reply for the selected node is streaming in.
fn receiving(view: &View) -> bool {
    let app = view.app;
    let Some(n) = app.session.run.engine.tree().get(view.selected) else { return false };
    n.made_by
        .into_iter()
        .chain(n.calls.iter().copied())
        .any(|c| app.session.run.engine.core.calls.get(&c).is_some_and(|r| r.reply.is_none()) && is_streaming(app, c))
}

/// `feedback` → `Feedback`, for a section heading.
fn capitalised(label: &str) -> String {
    let mut chars = label.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let all = lines(view);
    let height = area.height.saturating_sub(2) as usize;
    // Long prompt and reply lines wrap: the limit counts the lines as drawn, so the last
    // line of the last reply can be scrolled into view.
    let paragraph = Paragraph::new(all).wrap(Wrap { trim: false });
    let total = paragraph.line_count(area.width.saturating_sub(2));
    let max_scroll = total.saturating_sub(height).min(u16::MAX as usize) as u16;
    // A reply streaming in for the selected node is followed (its newest text at the
    // bottom) unless the person is reading the pane with the keys (it has the focus).
    let follow = view.app.view.focus != super::Pane::Detail && receiving(view);
    let measured = view.app.detail.measured(max_scroll);
    let scroll = if follow { max_scroll } else { measured };
    let extra = if max_scroll > 0 { format!("{}/{}", scroll as usize + 1, total) } else { String::new() };
    let block = view.block(super::Pane::Detail, &extra);
    frame.render_widget(paragraph.block(block).scroll((scroll, 0)), area);
}
