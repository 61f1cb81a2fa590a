//! For tree methods: the step-by-step log of what the search did and why.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::super::theme::Slot;
use super::View;
use crate::engine::event::Event;
use crate::engine::methods::ReactShape;
use crate::engine::{Issue, NodeId, NodeStatus, Origin, SearchTree, StepPart};
use crate::memory::MemoryChange;

/// The steps of the branch through `selected`: its ancestors, itself, then the newest
/// continuation below it (the last child at each step), root excluded.
pub fn branch(tree: &SearchTree, selected: NodeId) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut cur = Some(selected);
    while let Some(n) = cur {
        if n == tree.root() {
            break;
        }
        out.push(n);
        cur = tree.node(n).parent;
    }
    out.reverse();
    let mut cur = selected;
    while let Some(&next) = tree.node(cur).children.last() {
        out.push(next);
        cur = next;
    }
    out
}

/// ReAct: the trajectory through the selected step, Thought / Action / Observation
/// styled apart, the selected step marked, tool latency on each observation, and a
/// note where the trajectory branches. Returns the lines and the line range of the
/// selected step.
fn trajectory(view: &View) -> (Vec<Line<'static>>, std::ops::Range<usize>) {
    let tree = view.app.session.run.engine.tree();
    if !tree.contains(view.selected) {
        return (Vec::new(), 0..0);
    }
    let what = capitalized(&view.app.session.run.engine.core.task.info().input_noun);
    let mut out = vec![Line::from(Span::styled(
        format!("{what}: {}", view.app.session.run.engine.core.x),
        view.style(Slot::Title),
    ))];
    // The question selected: the top, where it is.
    let mut selected = if view.selected == tree.root() { 0..1 } else { 0..0 };
    for id in branch(tree, view.selected) {
        let node = tree.node(id);
        let here = id == view.selected;
        let first = out.len();
        let siblings = node.parent.map_or(0, |p| tree.node(p).children.len());
        for (i, (slot, labelled, line)) in step_lines(view, node).into_iter().enumerate() {
            let line = line.as_str();
            let marker = match (here, i) {
                (true, 0) => "▶ ",
                (true, _) => "│ ",
                _ => "  ",
            };
            let mut spans = vec![Span::styled(marker, view.style(Slot::Selection))];
            if i == 0 && matches!(node.origin, Origin::Human { .. }) {
                spans.push(Span::styled("✎ ", view.style(Slot::NodeEdited)));
            }
            // Imported logs carry no tool timings.
            let latency = node.tool_ms.filter(|_| !view.app.session.header.provider.starts_with("import"));
            match (slot, latency.filter(|_| labelled), line.split_once(':')) {
                // The tool's latency right after the label, where a long observation cannot hide it.
                (Slot::Observation, Some(ms), Some((label, rest))) => {
                    spans.push(Span::styled(format!("{label}:"), view.style(slot)));
                    spans.push(Span::styled(format!(" ({ms} ms)"), view.style(Slot::Dim)));
                    spans.push(Span::styled(rest.to_string(), view.style(slot)));
                }
                _ => spans.push(Span::styled(line.to_string(), view.style(slot))),
            }
            if i == 0 && siblings > 1 {
                let p = node.parent.map(|p| tree.node(p).children.iter().position(|&c| c == id).unwrap_or(0));
                let k = p.unwrap_or(0) + 1;
                spans.push(Span::styled(format!("  [branch {k} of {siblings}]"), view.style(Slot::Dim)));
            }
            if let Some(tokens) = thought_for(view, node).filter(|_| i == 0) {
                spans.push(Span::styled(format!("  (thought for {tokens} tokens)"), view.style(Slot::Dim)));
            }
            if let NodeStatus::Invalid(reason) = &node.status {
                if i == 0 {
                    spans.push(Span::styled(format!("  ({reason})"), view.style(Slot::Error)));
                }
            }
            out.push(Line::from(spans));
        }
        if here {
            selected = first..out.len();
        }
    }
    (out, selected)
}

/// How long the model thought before the reply that made `node` (its reasoning tokens,
/// as the server counted them or as estimated from the thinking's text); none for a reply
/// without thinking.
fn thought_for(view: &View, node: &crate::engine::Node) -> Option<u64> {
    let call = view.app.session.run.engine.core.calls.get(&node.made_by?)?;
    let reply = call.reply.as_ref()?.as_ref().ok()?;
    Some(reply.usage.reasoning_tokens).filter(|&t| t > 0)
}

/// The whole run's thinking, at its end: `the model thought for 1234 tokens in 12 replies`.
fn thinking_total(view: &View) -> Option<String> {
    let calls = view.app.session.run.engine.core.calls.values();
    let thought: Vec<u64> = calls
        .filter_map(|c| c.reply.as_ref()?.as_ref().ok())
        .filter(|r| !r.cached)
        .map(|r| r.usage.reasoning_tokens)
        .filter(|&t| t > 0)
        .collect();
    let replies = if thought.len() == 1 { "reply" } else { "replies" };
    (!thought.is_empty()).then(|| {
        format!(
            "the model thought for {} tokens in {} {replies} (each folded under its reply in the detail pane)",
            thought.iter().sum::<u64>(),
            thought.len()
        )
    })
}

/// A step's lines as the transcript shows them, each with its slot and whether it is the
/// first (labelled) line of its part. A step the agent could not act on (a bad call) has
/// no action in the tree; its raw action, as the model wrote it, is shown before the
/// observation that rejected it (line breaks as `⏎`). A node that is no step (a lost
/// call) shows its text.
fn step_lines(view: &View, node: &crate::engine::Node) -> Vec<(Slot, bool, String)> {
    let Some(step) = &node.step else {
        return node.thought.lines().map(|l| (Slot::Thought, false, l.to_string())).collect();
    };
    let mut lines = Vec::new();
    for (part, text) in step.parts() {
        let slot = match part {
            StepPart::Thought => Slot::Thought,
            StepPart::Action => Slot::Action,
            StepPart::Observation => Slot::Observation,
        };
        lines.extend(text.lines().enumerate().map(|(i, l)| (slot, i == 0, l.to_string())));
    }
    // Native calls of the same reply after the first: what the model was told of each.
    for call in step.calls.iter().skip(1) {
        let told = crate::engine::methods::react::NOT_RUN;
        lines.push((Slot::Observation, false, format!("  {}: {told}", call.describe())));
    }
    let bad = node.issues.iter().any(Issue::is_bad_call);
    if !bad || step.action.is_some() {
        return lines;
    }
    let reply = node
        .made_by
        .and_then(|c| view.app.session.run.engine.core.calls.get(&c))
        .and_then(|r| r.reply.as_ref())
        .and_then(|r| r.as_ref().ok())
        .and_then(|r| r.completions.first())
        .map(|c| c.text.clone())
        .unwrap_or_default();
    let is = |l: &str, word: &str| l.trim_start().to_lowercase().starts_with(word);
    let taken: Vec<&str> =
        reply.lines().skip_while(|l| !is(l, "action")).take_while(|l| !is(l, "observation")).collect();
    if taken.is_empty() {
        return lines;
    }
    let raw = taken.join("⏎").trim_end_matches('⏎').to_string();
    let pos = lines.iter().position(|(slot, _, _)| *slot == Slot::Observation).unwrap_or(lines.len());
    lines.insert(pos, (Slot::Action, true, raw));
    lines
}

/// Whether the pane shows a ReAct trajectory: always for ReAct; for the hybrids when
/// a ReAct step is selected (the question and the CoT-SC samples show the log, with the switch).
fn shows_trajectory(view: &View) -> bool {
    let tree = view.app.session.run.engine.tree();
    match view.app.session.header.params.method.info().react {
        ReactShape::Whole => true,
        ReactShape::Part => {
            // A step of the ReAct part, or a node below one.
            tree.contains(view.selected)
                && std::iter::once(view.selected)
                    .chain(tree.ancestors(view.selected))
                    .any(|id| tree.node(id).step.as_ref().is_some_and(|s| s.action.is_some()))
        }
        ReactShape::None => false,
    }
}

pub fn lines(view: &View) -> Vec<Line<'static>> {
    if shows_trajectory(view) {
        return trajectory(view).0;
    }
    let mut out = Vec::new();
    let events = &view.app.session.events;
    // One line per memory change, with what it did (computed from the session's snapshot).
    let notes = view.app.memory_notes();
    let mut memory_changes = 0;
    // The verdict last told: an edit valued in a finished search ends it again with the
    // same verdict, which is not told twice.
    let mut told: Option<&crate::engine::Outcome> = None;
    let last_finished = events.iter().rposition(|e| matches!(e, Event::Finished { .. }));
    // The end of the run: the kinds of reply the model got wrong half the time or more.
    let health = |out: &mut Vec<Line<'static>>| {
        let health = crate::engine::health::ReplyHealth::of(&view.app.session.run.engine);
        out.extend(thinking_total(view).map(|t| Line::from(Span::styled(t, view.style(Slot::Dim)))));
        out.extend(health.warnings().into_iter().map(|w| Line::from(Span::styled(w, view.style(Slot::Warning)))));
    };
    for (i, e) in events.iter().enumerate() {
        let (slot, text) = match e {
            Event::Memory { change } => {
                let note = notes.get(memory_changes).cloned();
                memory_changes += 1;
                // A person's edit or removal: the engine's own line just before says it.
                let by_hand = matches!(change, MemoryChange::Edit { .. } | MemoryChange::Remove { .. });
                if by_hand && i > 0 && matches!(events[i - 1], Event::Log { .. }) {
                    continue;
                }
                (Slot::Text, note.unwrap_or_else(|| super::super::state::memory_note(change, None)))
            }
            // The method's own line about a backtrack says it with the reason: one line, not two.
            Event::Log { text } if i > 0 && matches!(events[i - 1], Event::Backtracked { .. }) => {
                (Slot::Warning, text.clone())
            }
            Event::Log { text } => (Slot::Text, text.clone()),
            Event::Backtracked { .. } if matches!(events.get(i + 1), Some(Event::Log { text }) if text.starts_with("backtracked")) => {
                continue
            }
            Event::Backtracked { from, to } => (Slot::Warning, backtrack_line(from, to)),
            Event::CallFailed { call, node, message } => {
                (Slot::Error, format!("call {call} for {node} failed: {message}"))
            }
            Event::Rejected { reason } => (Slot::Warning, format!("not done: {reason}")),
            Event::Finished { outcome } if told == Some(outcome) => {
                if Some(i) == last_finished {
                    health(&mut out);
                }
                continue;
            }
            Event::Finished { outcome } => (
                if outcome.solved { Slot::NodeSolution } else { Slot::Warning },
                super::outcome::Verdict::of(outcome, &view.app.session.run.engine).finished_line(),
            ),
            _ => continue,
        };
        if let Event::Finished { outcome } = e {
            told = Some(outcome);
        }
        // A text's own line breaks (a written passage's paragraphs) are kept, blank lines too.
        out.extend(
            text.split('\n').map(|l| Line::from(Span::styled(l.trim_end_matches('\r').to_string(), view.style(slot)))),
        );
        if Some(i) == last_finished {
            health(&mut out);
        }
    }
    out
}

/// How many screen lines `line` takes in a pane `width` columns wide (it wraps at words).
fn rows(line: &Line<'static>, width: u16) -> usize {
    Paragraph::new(line.clone()).wrap(Wrap { trim: false }).line_count(width).max(1)
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let height = area.height.saturating_sub(2) as usize;
    let width = area.width.saturating_sub(2);
    let (all, selected) = if shows_trajectory(view) {
        let (all, sel) = trajectory(view);
        (all, Some(sel))
    } else {
        (lines(view), None)
    };
    // Lines wrap, so every position below counts screen lines: `top[i]` is where line i starts.
    let mut top = Vec::with_capacity(all.len() + 1);
    top.push(0usize);
    for line in &all {
        let next = top[top.len() - 1] + rows(line, width);
        top.push(next);
    }
    let total = top[all.len()];
    let end = match selected {
        // Keep the selected step in view, with what follows it below when there is room.
        // A step taller than the pane shows from its first line (the ▶ Thought).
        Some(sel) if !sel.is_empty() => {
            let (first, last) = (top[sel.start.min(all.len())], top[sel.end.min(all.len())]);
            if last - first >= height {
                (first + height).min(total)
            } else {
                let below = height.saturating_sub(last - first) / 2;
                (last + below).min(total).max(first)
            }
        }
        _ => total,
    };
    // The person's scroll: lines up from where the pane rests, or (below zero) down to the end.
    // (A pane taller than the lines up to where it rests shows from the top.)
    let base = end.max(height.min(total));
    let up = base.saturating_sub(height).min(u16::MAX as usize);
    let down = total.saturating_sub(base).min(u16::MAX as usize);
    let offset = view.app.transcript.measured(up as u16, down as u16);
    let bottom = if offset >= 0 { base - offset as usize } else { base + offset.unsigned_abs() as usize };
    let start = bottom.saturating_sub(height);
    let shown = Paragraph::new(all).wrap(Wrap { trim: false }).scroll((start.min(u16::MAX as usize) as u16, 0));
    let mut extra = match offset {
        o if o > 0 => format!("{o} lines up"),
        o if o < 0 => format!("{} lines down", o.unsigned_abs()),
        _ => String::new(),
    };
    if shows_trajectory(view) {
        if let Some(tools) = view.app.session.setup.task.tools() {
            // The tools the agent has, as its prompt names them (a tool of several
            // arguments as its JSON object).
            let names: Vec<String> = tools.specs().iter().map(|t| t.call_form()).collect();
            let sep = if extra.is_empty() { "" } else { " · " };
            extra = format!("{extra}{sep}tools: {}", names.join(" · "));
        }
    }
    // What the title holds beside " 4 Transcript " and the corners, with `…` where it is cut.
    let room = (area.width as usize).saturating_sub(2 + " 4 Transcript ".chars().count() + 1);
    let mut extra = crate::safe_text::clip(&extra, room);
    let mut block = view.block(super::Pane::Transcript, &extra);
    if let Some(r) = &view.app.session.replay {
        // The replay timeline: where the cursor is among the session's inputs.
        let width = (area.width as usize / 3).clamp(10, 60);
        let filled = (r.cursor * width).checked_div(r.total).unwrap_or(width);
        extra = format!(
            " timeline {}{} {}/{} {} ",
            "█".repeat(filled),
            "░".repeat(width - filled),
            r.cursor,
            r.total,
            if r.playing { format!("▶ {} steps/s", r.speed) } else { "[ ] { } P".to_string() }
        );
        block = block.title_bottom(Line::from(Span::styled(extra, view.style(Slot::Timeline))));
    }
    frame.render_widget(shown.block(block), area);
}

/// `backtracked from #21 to #9` (several states on either side for BFS).
pub fn backtrack_line(from: &[NodeId], to: &[NodeId]) -> String {
    let ids = |ns: &[NodeId]| ns.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" ");
    format!("backtracked from {} to {}", ids(from), ids(to))
}

/// `claim` → `Claim`.
fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}
