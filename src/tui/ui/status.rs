//! The header (top line) and the footer (bottom line).
//!
//! The header never loses the essentials: mode, outcome, task and input, method and
//! its key parameters, provider, step, calls, tokens and busy time (in a replay, the
//! timeline position). When the line is too narrow the header gives up detail in a
//! fixed order (cached count, model, the input's tail, the parameters, ...) rather
//! than whole items. The footer shows the latest message (they expire) and the keys
//! of the focused pane.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::action::Action;
use super::super::state::{App, Pane};
use super::super::theme::Slot;
use super::View;
use crate::engine::RunMode;
use crate::safe_text::clip;

/// The mode word and its colour.
pub fn mode(app: &App) -> (String, Slot) {
    let engine = &app.session.run.engine;
    // Past the input where today's engine differs, the replay shows the record itself.
    let recorded =
        app.session.replay.as_ref().is_some_and(|r| r.marks.fidelity.recorded_from().is_some_and(|f| r.cursor > f));
    match (&app.session.replay, engine.mode()) {
        (Some(r), _) if r.playing && recorded => (format!("AS RECORDED ▶ {} steps/s", r.speed), Slot::Warning),
        (Some(r), _) if r.playing => (format!("REPLAY ▶ {} steps/s", r.speed), Slot::ModeReplay),
        (Some(_), _) if recorded => ("REPLAY AS RECORDED".to_string(), Slot::Warning),
        (Some(_), _) => ("REPLAY".to_string(), Slot::ModeReplay),
        _ if engine.is_finished() => ("FINISHED".to_string(), Slot::ModePaused),
        _ if app.session.run.stopped().is_some() => ("STOPPED".to_string(), Slot::Warning),
        (None, RunMode::Running) => ("RUNNING".to_string(), Slot::ModeRunning),
        (None, RunMode::Step(_)) => ("STEPPING".to_string(), Slot::ModeStepping),
        (None, RunMode::Paused) => {
            // Calls a breakpoint holds are pending in the engine but not sent: not in flight.
            let held = app.session.run.held_calls();
            let in_flight = engine.pending_calls().iter().filter(|c| !held.contains(c)).count();
            match (in_flight, held.len()) {
                (0, 0) => ("PAUSED".to_string(), Slot::ModePaused),
                (0, h) => (format!("PAUSED ({h} held)"), Slot::ModePaused),
                (n, _) => (format!("pausing ({n} in flight)"), Slot::ModeStepping),
            }
        }
    }
}

/// Tokens in a short form: 950, 12.3k, 4.1M.
pub fn short_count(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// How much of each item the header shows; `less` lowers it step by step.
#[derive(Debug, Clone, Copy)]
struct Detail {
    /// What the model got wrong (the first item to go).
    health: bool,
    cached: bool,
    model: bool,
    input: usize,
    params: bool,
    answer: usize,
    provider: bool,
}

impl Detail {
    const FULL: Detail = Detail {
        health: true,
        cached: true,
        model: true,
        input: usize::MAX,
        params: true,
        answer: usize::MAX,
        provider: true,
    };

    /// The next smaller header, or `None` at the smallest. `one_line`: only the
    /// steps that lose no item (beyond them the header takes a second line).
    fn less(self, one_line: bool) -> Option<Detail> {
        let d = self;
        Some(if d.health {
            Detail { health: false, ..d }
        } else if d.cached {
            Detail { cached: false, ..d }
        } else if d.input > 32 {
            Detail { input: 32, ..d }
        } else if d.model {
            Detail { model: false, ..d }
        } else if d.answer > 16 {
            Detail { answer: 16, ..d }
        } else if one_line {
            return None;
        } else if d.answer > 0 {
            Detail { answer: 0, ..d }
        } else if d.input > 14 {
            Detail { input: 14, ..d }
        } else if d.input > 6 {
            Detail { input: 6, ..d }
        } else if d.provider {
            // The method's parameters (b=5 n=3 propose/value) go last: they say what the run is.
            Detail { provider: false, ..d }
        } else if d.params {
            Detail { params: false, ..d }
        } else {
            return None;
        })
    }
}

type Items = Vec<(String, Slot)>;

/// The header's items as (text, slot) pairs at a level of detail: what the run is
/// (mode, outcome, task and input) and how it goes (method, provider, counts).
fn items(app: &App, d: Detail, health: Option<&str>) -> (Items, Items) {
    let mut what = Vec::new();
    let (mode, slot) = mode(app);
    what.push((format!(" {mode} "), slot));
    if let Some(o) = app.session.run.engine.outcome() {
        // The transcript's finished line in short: the answer when solved, else the reason.
        let verdict = super::outcome::Verdict::of(o, &app.session.run.engine);
        let (glyph, word) = (verdict.glyph(), verdict.word());
        let (text, slot) = match (&verdict.short, d.answer) {
            (_, 0) => (format!(" {glyph} {word} "), if verdict.solved { Slot::NodeSolution } else { Slot::Warning }),
            (None, n) => {
                let answer = clip(verdict.answer.as_deref().unwrap_or_default(), n);
                (format!(" {glyph} {word} {answer}").trim_end().to_string() + " ", Slot::NodeSolution)
            }
            (Some(why), n) => (format!(" {glyph} {word} ({}) ", clip(why, n.max(16))), Slot::Warning),
        };
        what.push((text, slot));
    }
    let h = &app.session.header;
    let input = clip(&crate::safe_text::one_line(&h.input), d.input);
    let task = match h.index {
        Some(i) => format!(" {} #{i} [{input}]", h.task),
        None => format!(" {} [{input}]", h.task),
    };
    what.push((task, Slot::StatusBar));
    if let Some(position) = app.problem_position() {
        what.push((format!(" · {position}"), Slot::StatusBar));
    }
    let mut how = Vec::new();
    let method = app.session.run.engine.view();
    let params = if d.params { method.params.clone() } else { app.session.header.params.method.label().to_string() };
    how.push((format!(" {params}"), Slot::StatusBar));
    if d.provider {
        if h.simulated {
            // Short of room, the word alone says it: the model is simulated.
            let provider = if d.model { format!(" {}:", h.provider) } else { " ".to_string() };
            how.push((provider, Slot::StatusBar));
            how.push(("simulated".into(), Slot::Simulated));
        } else if d.model {
            how.push((format!(" {}:{}", h.provider, h.model), Slot::StatusBar));
        } else {
            how.push((format!(" {}", h.provider), Slot::StatusBar));
        }
    } else if h.simulated {
        // The provider gives way before the method's parameters, but a simulated model is
        // always said (its figures are not a real model's), in the provider's short name.
        how.push((" ".into(), Slot::StatusBar));
        how.push(("sim".into(), Slot::Simulated));
    }
    let t = &app.session.run.totals;
    let calls = if t.llm_calls == 1 { "call" } else { "calls" };
    let mut stats = format!(" · {} {} · {} {calls}", method.step_noun, method.step, t.llm_calls);
    if d.cached && t.cache_hits > 0 {
        stats.push_str(&format!(" (+{} cached)", t.cache_hits));
    }
    // Estimated (a server that did not report usage) is marked: `~12.7k tok`. An imported
    // log's total is the log's own, whatever share of it each call was given.
    let estimated = t.estimated_tokens > 0 && !h.provider.starts_with("import");
    stats.push_str(&format!(" · {}{} tok", if estimated { "~" } else { "" }, short_count(t.tokens())));
    // A reasoning model's thinking is counted apart: `12.7k tok (8.1k thinking)`.
    if t.reasoning_tokens > 0 {
        stats.push_str(&format!(" ({} thinking)", short_count(t.reasoning_tokens)));
    }
    if let Some(cost) = app.cost_usd() {
        stats.push_str(&format!(" · ${cost:.4}"));
    }
    if !app.session.streaming.is_empty() {
        stats.push_str(&format!(" · receiving {}", app.session.streaming.len()));
    }
    match &app.session.replay {
        Some(r) => {
            stats.push_str(&format!(" · input {}/{}", r.cursor, r.total));
            if let Some(note) = app.follow_note() {
                stats.push_str(&format!(" · {note}"));
            }
        }
        None => stats.push_str(&format!(" · {:.1}s", app.session.elapsed_ms as f64 / 1000.0)),
    }
    how.push((stats, Slot::StatusBar));
    if let Some(health) = health.filter(|_| d.health) {
        how.push((format!(" · {health}"), Slot::Warning));
    }
    (what, how)
}

fn width(items: &[(String, Slot)]) -> usize {
    items.iter().map(|(text, _)| text.chars().count()).sum()
}

/// The header's lines for a screen `width` wide: one line if every item fits in
/// it (with less detail), else two.
pub fn header_rows(app: &App, max: usize) -> Vec<Items> {
    // Kinds of reply the model got wrong half the time or more (derived from the replies).
    let health = crate::engine::health::ReplyHealth::of(&app.session.run.engine).short_line();
    let health = health.as_deref();
    let mut detail = Detail::FULL;
    loop {
        let (mut what, how) = items(app, detail, health);
        what.extend(how);
        if width(&what) <= max {
            return vec![what];
        }
        match detail.less(true) {
            Some(less) => detail = less,
            None => break,
        }
    }
    // Two lines, each with the most detail that fits.
    let fit = |pick: fn((Items, Items)) -> Items| {
        let mut detail = Detail::FULL;
        loop {
            let line = pick(items(app, detail, health));
            match detail.less(false) {
                Some(less) if width(&line) > max => detail = less,
                _ => return line,
            }
        }
    };
    vec![fit(|(what, _)| what), fit(|(_, how)| how)]
}

/// The header's text for a line `width` wide (without colours; lines joined by
/// a newline), for tests.
#[cfg(test)]
pub fn header_text(app: &App, width: usize) -> String {
    header_rows(app, width)
        .into_iter()
        .map(|row| row.into_iter().map(|(text, _)| text).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn draw_header(frame: &mut Frame, view: &View, area: Rect) {
    let bar = view.style(Slot::StatusBar);
    let lines: Vec<Line> = header_rows(view.app, area.width as usize)
        .into_iter()
        .map(|row| {
            Line::from(
                row.into_iter()
                    .map(|(text, slot)| {
                        Span::styled(text, if slot == Slot::StatusBar { bar } else { view.style(slot) })
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).style(bar), area);
}

/// The footer's hints as keys: an open registered pane's own keys, or the memory pane's
/// while it is shown (they are fixed, like a popup's), then the keymap's for the focused pane.
fn hint_keys(view: &View) -> Vec<(String, &'static str)> {
    let app = view.app;
    let from_keymap = |hints: Vec<(Action, &'static str)>| hints.into_iter().map(|(a, what)| (view.key(a), what));
    if let Some(kind) = app.open_pane.as_ref().and_then(|open| crate::tui::panes::kind(open.index)) {
        let mut out: Vec<(String, &'static str)> = kind.hints.iter().map(|(k, w)| (k.to_string(), *w)).collect();
        out.extend(from_keymap(vec![(Action::Help, "help"), (Action::Quit, "quit")]));
        return out;
    }
    if app.memory_pane.is_none() {
        return from_keymap(hints(app)).collect();
    }
    let mut out: Vec<(String, &'static str)> = Vec::new();
    if app.session.run.engine.memory().is_some_and(|m| !m.is_empty()) {
        out.extend(
            [("↑↓", "select"), ("← →", "fold"), ("e", "edit entry"), ("p", "pin"), ("d", "remove")]
                .map(|(k, w)| (k.to_string(), w)),
        );
    }
    out.push(("esc".into(), "close"));
    let steering = if app.session.replay.is_some() {
        vec![(Action::ReplayStepForward, "next step"), (Action::ReplayStepBack, "back")]
    } else {
        vec![(Action::Step, "step"), (Action::RunPause, "run/pause")]
    };
    out.extend(from_keymap(steering));
    out.extend(from_keymap(vec![(Action::Help, "help"), (Action::Quit, "quit")]));
    out
}

/// The keys worth knowing in the focused pane, most useful first.
fn hints(app: &App) -> Vec<(Action, &'static str)> {
    let replay = app.session.replay.is_some();
    let mut out = Vec::new();
    if replay {
        out.extend([
            (Action::ReplayPlay, "play"),
            (Action::ReplayStepForward, "next step"),
            (Action::ReplayStepBack, "back"),
            (Action::ReplayMarkForward, "next caption/action"),
            (Action::Fork, "fork"),
        ]);
    } else {
        match app.view.focus {
            Pane::Tree => out.extend([
                (Action::Step, "step"),
                (Action::RunPause, "run/pause"),
                (Action::Prune, "prune"),
                (Action::Edit, "edit"),
                (Action::Backtrack, "backtrack"),
                (Action::Expand, "expand"),
                (Action::Continue, "continue"),
                (Action::ToggleFollow, "follow"),
            ]),
            Pane::Scores | Pane::Detail | Pane::Transcript => {
                out.extend([(Action::Step, "step"), (Action::RunPause, "run/pause"), (Action::PageDown, "scroll")])
            }
        }
    }
    if app.problem_position().is_some() {
        out.push((Action::NextProblem, "next problem"));
    }
    out.extend([(Action::FocusNext, "pane"), (Action::Help, "help"), (Action::Quit, "quit")]);
    out
}

/// Footer lines for a screen `width` wide: one, or two when the message needs them
/// (a message is never cut short on one line when a second can hold it).
pub fn footer_height(app: &App, width: usize) -> u16 {
    match &app.message {
        Some(m) if m.chars().count() + 2 > width => 2,
        _ => 1,
    }
}

pub fn draw_footer(frame: &mut Frame, view: &View, area: Rect) {
    let app = view.app;
    let max = area.width as usize;
    let mut spans = Vec::new();
    let mut used = 0;
    if let Some(m) = &app.message {
        if area.height > 1 && m.chars().count() + 2 > max {
            // A long message takes the footer's lines, wrapped; the key hints wait.
            let text = Paragraph::new(format!(" {m}"))
                .style(view.style(Slot::Warning))
                .wrap(ratatui::widgets::Wrap { trim: false });
            frame.render_widget(text, area);
            return;
        }
        let text = format!(" {} ", clip(m, max.saturating_sub(2)));
        used += text.chars().count();
        spans.push(Span::styled(text, view.style(Slot::Warning)));
    }
    let key_style = view.style(Slot::StatusKey);
    let bar = view.style(Slot::StatusBar);
    for (key, what) in hint_keys(view) {
        if key.is_empty() {
            continue;
        }
        let n = key.chars().count() + what.chars().count() + 2;
        if used + n > max {
            break;
        }
        used += n;
        spans.push(Span::styled(format!(" {key}"), key_style));
        spans.push(Span::styled(format!(" {what}"), bar));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(Style::default().patch(bar)), area);
}
