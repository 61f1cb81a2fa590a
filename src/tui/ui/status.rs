//! The status bar: task and input, method and parameters, provider and model (sim
//! visibly simulated), mode, step, calls, tokens, elapsed, outcome; in a replay,
//! the timeline.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::action::Action;
use super::super::theme::Slot;
use super::View;
use crate::engine::RunMode;

fn params_text(view: &View) -> String {
    view.app.run.engine.view().params
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let app = view.app;
    let bar = view.style(Slot::StatusBar);
    let mut spans = Vec::new();
    let (mode, slot) = match (&app.replay, app.run.engine.mode()) {
        (Some(r), _) if r.playing => (format!(" REPLAY ▶ {}/s ", r.speed), Slot::ModeReplay),
        (Some(_), _) => (" REPLAY ".to_string(), Slot::ModeReplay),
        (None, RunMode::Running) => (" RUNNING ".to_string(), Slot::ModeRunning),
        (None, RunMode::Step(_)) => (" STEPPING ".to_string(), Slot::ModeStepping),
        (None, RunMode::Paused) => (" PAUSED ".to_string(), Slot::ModePaused),
    };
    spans.push(Span::styled(mode, view.style(slot)));
    let h = &app.header;
    let input = match h.index {
        Some(i) => format!(" {} #{i} [{}] ", h.task, h.input),
        None => format!(" {} [{}] ", h.task, h.input),
    };
    spans.push(Span::styled(input, bar));
    let params_at = spans.len();
    spans.push(Span::styled(format!("{} ", params_text(view)), bar));
    spans.push(Span::styled(format!("{}:", h.provider), bar));
    if h.simulated {
        spans.push(Span::styled("simulated ", view.style(Slot::Simulated)));
    } else {
        spans.push(Span::styled(format!("{} ", h.model), bar));
    }
    let t = &app.run.totals;
    let method = app.run.engine.view();
    let mut stats = format!(
        "{} {} · calls {} (+{} cached) · tok {}",
        method.step_noun,
        method.step,
        t.llm_calls,
        t.cache_hits,
        t.prompt_tokens + t.completion_tokens
    );
    if let Some(cost) = app.cost_usd() {
        stats.push_str(&format!(" · ${cost:.4}"));
    }
    if !app.streaming.is_empty() {
        stats.push_str(&format!(" · receiving {}", app.streaming.len()));
    }
    if let Some(r) = &app.replay {
        stats.push_str(&format!(" · input {}/{}", r.cursor, r.total));
    } else {
        stats.push_str(&format!(" · {:.1}s", app.elapsed_ms as f64 / 1000.0));
    }
    spans.push(Span::styled(stats, bar));
    if let Some(o) = app.run.engine.outcome() {
        let (text, slot) = if o.solved {
            (format!(" ★ solved {} ", o.answer.clone().unwrap_or_default()), Slot::NodeSolution)
        } else if o.solved_any {
            (" ◇ solved (not top-ranked) ".to_string(), Slot::NodeFinal)
        } else {
            (" ✗ unsolved ".to_string(), Slot::Warning)
        };
        spans.push(Span::styled(text, view.style(slot)));
    }
    if let Some(m) = &app.message {
        spans.push(Span::styled(format!(" {m}"), view.style(Slot::Warning)));
    } else {
        spans.push(Span::styled(format!(" {} help", view.key(Action::Help)), view.style(Slot::StatusKey)));
    }
    // On a narrow screen drop the parameters first, then the hint.
    let width = |spans: &[Span]| spans.iter().map(|s| s.content.chars().count()).sum::<usize>();
    if width(&spans) > area.width as usize {
        spans.remove(params_at);
    }
    if width(&spans) > area.width as usize && app.message.is_none() {
        spans.pop();
    }
    let used = width(&spans);
    let pad = (area.width as usize).saturating_sub(used);
    spans.push(Span::styled(" ".repeat(pad), bar));
    frame.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}
