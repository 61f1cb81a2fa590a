//! The memory pane (`M`): the run's cross-problem memory as the engine holds it now
//! (live, or in a replay as of the timeline's cursor) — the approaches' reliabilities,
//! what this problem used, the entries grouped by approach (a tui-tree-widget tree:
//! approach → entries, by confidence), and the selected entry in full.
//! Drawn over the tree, scores and detail panes; the transcript stays in view below.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use tui_tree_widget::Tree;

use super::super::state::{sorted_entries, MemoryPane, MemoryUse};
use super::super::theme::Slot;
use super::View;
use crate::engine::methods::REGISTRY;
use crate::engine::Params;
use crate::memory::{Category, Entry, Memory};

/// Where the pane goes: the tree, scores and detail panes together.
pub fn area(panes: &[Rect; 4]) -> Rect {
    panes[0].union(panes[1]).union(panes[2])
}

/// The line a run without memory shows, naming the methods that keep one (read from
/// the registry, so the explorer names no method itself).
pub fn no_memory_text() -> String {
    let keepers: Vec<String> = REGISTRY
        .iter()
        .filter(|info| (info.wants_memory)(&Params::new(info.kind)))
        .map(|info| format!("--method {}", info.kind.label()))
        .collect();
    if keepers.is_empty() {
        "this run keeps no memory (no method here keeps one)".into()
    } else {
        format!("this run keeps no memory — {} with --memory NAME does", keepers.join(" or "))
    }
}

fn category_slot(category: Category) -> Slot {
    match category {
        Category::Failure => Slot::Warning,
        Category::Success => Slot::NodeSolution,
        Category::Insight => Slot::Text,
    }
}

/// `#id category approach conf 0.62 hits 3/1 v2 📌`, padded to the widths given.
fn entry_head(e: &Entry, id_w: usize, approach_w: usize) -> String {
    let id = format!("#{}", e.id);
    let pin = if e.pinned { " 📌" } else { "   " };
    format!(
        "{id:<id_w$} {:<7} {:<approach_w$} conf {:.2} hits {}/{} v{}{pin}",
        e.category.name(),
        e.approach,
        e.confidence,
        e.hits,
        e.misses,
        e.version
    )
}

/// What this problem did with an entry, short: `used ✓2 ✗1 · critiqued`.
fn use_text(u: &MemoryUse) -> String {
    let mut parts = Vec::new();
    if u.solved + u.unsolved > 0 {
        let mut used = "used".to_string();
        if u.solved > 0 {
            used.push_str(&format!(" ✓{}", u.solved));
        }
        if u.unsolved > 0 {
            used.push_str(&format!(" ✗{}", u.unsolved));
        }
        parts.push(used);
    }
    if u.signals > 0 {
        parts.push(if u.signals == 1 { "critiqued".into() } else { format!("critiqued ×{}", u.signals) });
    }
    parts.join(" · ")
}

fn reliability_line(view: &View, memory: &Memory, width: usize) -> Line<'static> {
    let mut spans = vec![Span::styled("reliability ", view.style(Slot::Title))];
    let known = memory.reliabilities();
    if known.is_empty() {
        let initial = memory.params().reliability_initial;
        spans.push(Span::styled(format!("no approach tried yet (each starts at {initial:.2})"), view.style(Slot::Dim)));
    } else {
        let mut ranked: Vec<(&String, &f64)> = known.iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
        let text = ranked.iter().map(|(a, r)| format!("{a} {r:.2}")).collect::<Vec<_>>().join(" · ");
        spans.push(Span::styled(crate::safe_text::clip(&text, width.saturating_sub(12)), view.style(Slot::Text)));
    }
    Line::from(spans)
}

fn used_line(view: &View, uses: &std::collections::BTreeMap<u64, MemoryUse>, width: usize) -> Line<'static> {
    let mut spans = vec![Span::styled("this problem: ", view.style(Slot::Title))];
    if uses.is_empty() {
        spans.push(Span::styled("has used no entry yet", view.style(Slot::Dim)));
    } else {
        let text = uses.iter().map(|(id, u)| format!("#{id} {}", use_text(u))).collect::<Vec<_>>().join(", ");
        spans.push(Span::styled(crate::safe_text::clip(&text, width.saturating_sub(14)), view.style(Slot::Text)));
    }
    Line::from(spans)
}

/// The selected entry in full: its numbers, content (wrapped), signals, sources, versions.
fn entry_detail(view: &View, e: &Entry, used: Option<&MemoryUse>) -> Vec<Line<'static>> {
    let mut head = format!(
        "#{} {} · {} · confidence {:.2} · hits {} · misses {} · v{}",
        e.id,
        e.category.name(),
        e.approach,
        e.confidence,
        e.hits,
        e.misses,
        e.version
    );
    if e.pinned {
        head.push_str(" · pinned 📌");
    }
    // What the lesson's outcome was checked against (absent: kept before evidence was).
    match e.evidence {
        Some(crate::memory::Evidence::Gold) => head.push_str(" · checked against the gold answer"),
        Some(crate::memory::Evidence::SelfValidated) => head.push_str(" · only self-validated"),
        None => {}
    }
    if let Some(u) = used.map(use_text).filter(|t| !t.is_empty()) {
        head.push_str(&format!(" · this problem: {u}"));
    }
    let mut lines = vec![Line::from(Span::styled(head, view.style(category_slot(e.category))))];
    lines.extend(e.content.lines().map(|l| Line::from(Span::styled(l.to_string(), view.style(Slot::Thought)))));
    let dim = |text: String| Line::from(Span::styled(text, view.style(Slot::Dim)));
    if !e.signals.is_empty() {
        lines.push(dim(format!("signals ({}):", e.signals.len())));
        lines.extend(e.signals.iter().map(|s| dim(format!("  • {}", crate::safe_text::one_line(s)))));
    }
    if !e.sources.is_empty() {
        lines.push(dim(format!("from: {}", e.sources.join(" · "))));
    }
    if let Some(last) = e.history.last() {
        lines.push(dim(format!(
            "{} earlier version{}; v{} said: {}",
            e.history.len(),
            if e.history.len() == 1 { "" } else { "s" },
            last.version,
            crate::safe_text::one_line(&last.content)
        )));
    }
    lines
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let app = view.app;
    let memory = app.session.run.engine.memory();
    let mut extra = String::new();
    if let Some(snapshot) = &app.session.header.memory {
        extra.push_str(&snapshot.name);
    }
    if let Some(m) = memory {
        let n = m.len();
        let count = format!("{n} entr{}", if n == 1 { "y" } else { "ies" });
        extra = if extra.is_empty() { count } else { format!("{extra} · {count}") };
    }
    let mut title = vec![Span::styled(" Memory ", view.style(Slot::Title))];
    if !extra.is_empty() {
        title.push(Span::styled(format!("{extra} "), view.style(Slot::Dim)));
    }
    let hint = if memory.is_some_and(|m| !m.is_empty()) {
        " ↑↓ select · ← → fold · e edit · p pin · d remove · esc close "
    } else {
        " esc close "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(view.style(Slot::BorderFocused))
        .style(view.style(Slot::Background))
        .title(Line::from(title))
        .title_bottom(Line::from(Span::styled(hint, view.style(Slot::Dim))));
    frame.render_widget(Clear, area);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(memory) = memory else {
        let line = Line::from(Span::styled(no_memory_text(), view.style(Slot::Dim)));
        frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: false }), inner);
        return;
    };
    let width = inner.width as usize;
    let uses = app.memory_uses();
    let detail_height = (inner.height * 2 / 5).max(3);
    let [top, list_area, detail_area] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(1), Constraint::Length(detail_height)]).areas(inner);
    frame
        .render_widget(Paragraph::new(vec![reliability_line(view, memory, width), used_line(view, &uses, width)]), top);
    let entries = sorted_entries(memory);
    if entries.is_empty() {
        let line = Line::from(Span::styled(
            "the memory is empty: lessons arrive as the method learns (a failure to avoid, a strategy that worked)",
            view.style(Slot::Dim),
        ));
        frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: false }), list_area.union(detail_area));
        return;
    }
    let id_w = entries.iter().map(|e| e.id.to_string().len() + 1).max().unwrap_or(2);
    let approach_w = entries.iter().map(|e| e.approach.chars().count()).max().unwrap_or(0).min(14);
    let use_w = uses.values().map(|u| use_text(u).chars().count()).max().unwrap_or(0);
    // An entry's row: the selection mark, its approach's indent and fold symbol come first.
    let room = width.saturating_sub(6);
    let entry_line = |e: &Entry| {
        let head = entry_head(e, id_w, approach_w);
        // What this problem did with it, as a column so the headlines line up.
        let used = uses.get(&e.id).map(use_text).unwrap_or_default();
        let used = if use_w == 0 { String::new() } else { format!(" {used:<use_w$}") };
        // The head is as wide on screen as its characters, plus one for the pin's double width.
        let taken = head.chars().count() + usize::from(e.pinned) + used.chars().count() + 1;
        let headline = crate::safe_text::clip(&crate::safe_text::one_line(e.headline()), room.saturating_sub(taken));
        Line::from(vec![
            Span::styled(head, view.style(category_slot(e.category))),
            Span::styled(used, view.style(Slot::NodeKept)),
            Span::raw(" "),
            Span::styled(headline, view.style(Slot::Thought)),
        ])
    };
    let reliabilities = memory.reliabilities();
    let approach_line = |name: &str, entries: &[&Entry]| {
        let n = entries.len();
        let mut about = format!("  {n} entr{}", if n == 1 { "y" } else { "ies" });
        if let Some(r) = reliabilities.get(name) {
            about.push_str(&format!(" · reliability {r:.2}"));
        }
        Line::from(vec![
            Span::styled(crate::safe_text::clip(name, width.saturating_sub(4)), view.style(Slot::Title)),
            Span::styled(about, view.style(Slot::Dim)),
        ])
    };
    let items = MemoryPane::items(memory, &approach_line, &entry_line);
    if let (Some(pane), Ok(tree)) = (&app.memory_pane, Tree::new(&items)) {
        pane.sync(memory);
        let tree = tree.highlight_symbol("▶ ").highlight_style(view.style(Slot::Selection));
        frame.render_stateful_widget(tree, list_area, &mut pane.state.borrow_mut());
    }
    let selected_approach = app.memory_pane.as_ref().and_then(|p| p.key.clone()).filter(|k| k.starts_with("a:"));
    if let (None, Some(key)) = (app.memory_selected(), selected_approach) {
        let name = &key[2..];
        let line = Line::from(Span::styled(
            format!("approach {name}: ← folds it, → unfolds it, ↓ selects its entries"),
            view.style(Slot::Dim),
        ));
        let block = Block::default().borders(Borders::TOP).border_style(view.style(Slot::Border));
        frame.render_widget(Paragraph::new(line).block(block).wrap(Wrap { trim: false }), detail_area);
        return;
    }
    if let Some(e) = app.memory_selected() {
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(view.style(Slot::Border))
            .title(Span::styled(format!(" entry #{} ", e.id), view.style(Slot::Title)));
        let detail = Paragraph::new(entry_detail(view, e, uses.get(&e.id))).block(block).wrap(Wrap { trim: false });
        frame.render_widget(detail, detail_area);
    }
}
