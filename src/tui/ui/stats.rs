//! The Stats view (`S`): the current run's calls and tokens per method step (the axis is
//! the method's own step — BFS step, DFS expansion, MCTS iteration, ReAct step — when
//! each call was made) and, where the session recorded latencies, over time (the calls'
//! summed latency); the score distribution of each depth and the share of calls by
//! purpose. The figures come from the engine's call records with the rule the run's
//! totals use (a call counts when it reached the provider), so they agree with them.

use std::collections::BTreeMap;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::theme::Slot;
use super::popup::{centered, frame_block};
use super::View;
use crate::engine::Engine;
use crate::protocol::CallErrorKind;

/// The figures the view draws.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Tokens of each call that reached the provider, in the order the calls were made.
    pub tokens_per_call: Vec<u64>,
    /// Latency of each of those calls in milliseconds (0 where none was recorded, as `sim`).
    pub latency_per_call: Vec<u64>,
    /// Calls and tokens by the method's step when the call was made.
    pub per_step: BTreeMap<usize, (u64, u64)>,
    /// What a step is called (`step`, `iteration`, `expansion`, ...).
    pub step_noun: &'static str,
    /// Calls that reached the provider (the run's `llm_calls`).
    pub calls: u64,
    /// Their prompt and completion tokens.
    pub tokens: u64,
    /// Calls by purpose, most first (ties by name).
    pub by_purpose: Vec<(String, u64)>,
    /// Scores by depth (the step of a tree search), in node order.
    pub scores: BTreeMap<usize, Vec<f64>>,
}

impl Stats {
    pub fn of(engine: &Engine) -> Stats {
        let mut stats = Stats { step_noun: engine.view().step_noun, ..Stats::default() };
        let mut purposes: BTreeMap<String, u64> = BTreeMap::new();
        for (&call, record) in &engine.core.calls {
            let (tokens, latency) = match &record.reply {
                Some(Ok(r)) if !r.cached => (r.usage.prompt_tokens + r.usage.completion_tokens, r.latency_ms),
                Some(Err(e)) if !matches!(e.kind, CallErrorKind::Shared | CallErrorKind::NotSent) => (0, 0),
                _ => continue,
            };
            stats.calls += 1;
            stats.tokens += tokens;
            stats.tokens_per_call.push(tokens);
            stats.latency_per_call.push(latency);
            let step = stats.per_step.entry(engine.call_step(call)).or_default();
            step.0 += 1;
            step.1 += tokens;
            *purposes.entry(record.request.purpose.label().to_string()).or_default() += 1;
        }
        stats.by_purpose = purposes.into_iter().collect();
        stats.by_purpose.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for node in engine.tree().nodes() {
            if let Some(score) = &node.score {
                if score.value.is_finite() {
                    stats.scores.entry(node.depth).or_default().push(score.value);
                }
            }
        }
        stats
    }
}

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// `values` squeezed into `width` columns (each the largest of its share), as block characters.
pub fn sparkline(values: &[u64], width: usize) -> String {
    if values.is_empty() || width == 0 {
        return String::new();
    }
    let columns = width.min(values.len());
    let cols: Vec<u64> = (0..columns)
        .map(|c| {
            let start = c * values.len() / columns;
            let end = ((c + 1) * values.len() / columns).max(start + 1);
            values[start..end].iter().copied().max().unwrap_or(0)
        })
        .collect();
    let top = cols.iter().copied().max().unwrap_or(0).max(1);
    cols.iter().map(|&v| if v == 0 { ' ' } else { BLOCKS[((v * 7) / top) as usize] }).collect()
}

/// `values` spread over `width` columns, each column the value at its share: a value spans
/// several columns when there are fewer values than columns, a column shows the largest
/// of its values when there are more.
pub fn stretch(values: &[u64], width: usize) -> Vec<u64> {
    if values.is_empty() {
        return vec![0; width];
    }
    (0..width)
        .map(|c| {
            let start = c * values.len() / width;
            let end = ((c + 1) * values.len() / width).max(start + 1);
            values[start..end].iter().copied().max().unwrap_or(0)
        })
        .collect()
}

/// Calls and tokens in each of `width` equal spans of the calls' summed latency: a call
/// falls in the span where its latency, added to those before it, ends.
pub fn over_time(latency: &[u64], tokens: &[u64], width: usize) -> (Vec<u64>, Vec<u64>) {
    let total: u64 = latency.iter().sum();
    let (mut calls, mut toks) = (vec![0u64; width.max(1)], vec![0u64; width.max(1)]);
    let mut clock = 0u64;
    for (i, &ms) in latency.iter().enumerate() {
        clock += ms;
        // Spans end-inclusive: a call ending exactly at a span's end belongs to it.
        let c = ((clock as u128 * width as u128).saturating_sub(1) / total.max(1) as u128) as usize;
        let c = c.min(width.max(1) - 1);
        calls[c] += 1;
        toks[c] += tokens.get(i).copied().unwrap_or(0);
    }
    (calls, toks)
}

/// `left` at the start and `right` at the end of `width` columns.
fn axis(left: &str, right: &str, width: usize) -> String {
    let gap = width.saturating_sub(left.chars().count() + right.chars().count()).max(1);
    format!("{left}{}{right}", " ".repeat(gap))
}

/// Milliseconds as `850 ms`, `12.3 s` or `4.2 min`.
fn seconds(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 120_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{:.1} min", ms as f64 / 60_000.0)
    }
}

/// Counts of `values` in `bins` equal bins over `lo..=hi`.
pub fn histogram(values: &[f64], bins: usize, lo: f64, hi: f64) -> Vec<u64> {
    let mut counts = vec![0u64; bins.max(1)];
    let span = hi - lo;
    for &v in values {
        let i = if span > 0.0 { (((v - lo) / span) * bins as f64) as usize } else { 0 };
        counts[i.min(bins.max(1) - 1)] += 1;
    }
    counts
}

fn short(x: f64) -> String {
    if x.abs() >= 100.0 || x == x.trunc() {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

/// The view's lines for an inner width of `width` columns and at most `rows` rows.
pub fn lines(view: &View, stats: &Stats, width: usize, rows: usize) -> Vec<Line<'static>> {
    let label = |t: &str| Span::styled(format!("{t:<9}"), view.style(Slot::Dim));
    let text = |t: String| Span::styled(t, view.style(Slot::Text));
    let mut out = Vec::new();
    let cost = view.app.cost_usd().map(|c| format!(" · ${c:.4}")).unwrap_or_default();
    out.push(Line::from(vec![
        label("run"),
        text(format!(
            "{} calls · {} tokens{cost} · {} nodes",
            stats.calls,
            stats.tokens,
            view.app.session.run.engine.tree().nodes().count()
        )),
    ]));
    out.extend(server_lines(view, width));
    // Room after a chart for its peak (` peak 12345 (iteration 123)`).
    let spark_width = width.saturating_sub(9 + 26).max(4);
    let score = view.style(Slot::ScoreHigh);
    let dim = |t: String| Span::styled(t, view.style(Slot::Dim));
    let noun = stats.step_noun;
    out.push(Line::from(Span::styled(
        format!("calls and tokens per {noun} (the method's {noun} when each call was made)"),
        view.style(Slot::Title),
    )));
    match (stats.per_step.keys().next(), stats.per_step.keys().next_back()) {
        (Some(&first), Some(&last)) => {
            let series = |pick: fn(&(u64, u64)) -> u64| -> Vec<u64> {
                (first..=last).map(|s| stats.per_step.get(&s).map(pick).unwrap_or(0)).collect()
            };
            for (name, values) in [("calls", series(|c| c.0)), ("tokens", series(|c| c.1))] {
                let (at, peak) = values.iter().enumerate().fold((0, 0), |m, (i, &v)| if v > m.1 { (i, v) } else { m });
                out.push(Line::from(vec![
                    label(name),
                    Span::styled(sparkline(&stretch(&values, spark_width), spark_width), score),
                    text(format!(" peak {peak} ({noun} {})", first + at)),
                ]));
            }
            out.push(Line::from(vec![
                label(""),
                dim(axis(&format!("{noun} {first}"), &format!("{noun} {last}"), spark_width)),
            ]));
        }
        _ => out.push(Line::from(text("  no calls yet".into()))),
    }
    let total_ms: u64 = stats.latency_per_call.iter().sum();
    if total_ms == 0 {
        out.push(Line::from(vec![
            label("time"),
            dim("no latencies recorded (a simulated model): no time axis".into()),
        ]));
    } else {
        out.push(Line::from(Span::styled(
            format!("over time (the calls' latencies added up, 0 … {})", seconds(total_ms)),
            view.style(Slot::Title),
        )));
        let (calls, tokens) = over_time(&stats.latency_per_call, &stats.tokens_per_call, spark_width);
        for (name, values) in [("calls", calls), ("tokens", tokens)] {
            let peak = values.iter().copied().max().unwrap_or(0);
            out.push(Line::from(vec![
                label(name),
                Span::styled(sparkline(&values, spark_width), score),
                text(format!(" peak {peak} in {}", seconds(total_ms.div_ceil(spark_width as u64)))),
            ]));
        }
        out.push(Line::from(vec![label(""), dim(axis("0 s", &seconds(total_ms), spark_width))]));
    }

    out.push(Line::from(Span::styled(
        "scores per step (histogram of each depth, low → high)",
        view.style(Slot::Title),
    )));
    let all: Vec<f64> = stats.scores.values().flatten().copied().collect();
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let purposes = stats.by_purpose.len().max(1) + 1;
    let depth_rows = rows.saturating_sub(out.len() + purposes).max(1);
    if all.is_empty() {
        out.push(Line::from(text("  no scores yet".into())));
    } else {
        let bins = width.saturating_sub(30).clamp(4, 40);
        let shown: Vec<(&usize, &Vec<f64>)> = stats.scores.iter().collect();
        let skip = shown.len().saturating_sub(depth_rows);
        for (depth, values) in shown.into_iter().skip(skip) {
            let counts = histogram(values, bins, lo, hi);
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            out.push(Line::from(vec![
                label(&format!("depth {depth}")),
                Span::styled(sparkline(&counts, bins), view.style(Slot::ScoreMid)),
                text(format!(" n={} mean {}", values.len(), short(mean))),
            ]));
        }
        out.push(Line::from(Span::styled(format!("{:9}{} … {}", "", short(lo), short(hi)), view.style(Slot::Dim))));
    }
    out.push(Line::from(Span::styled("calls by purpose", view.style(Slot::Title))));
    let bar_width = width.saturating_sub(9 + 14).max(1) as u64;
    for (purpose, n) in &stats.by_purpose {
        let share = *n as f64 / stats.calls.max(1) as f64;
        let filled = ((*n * bar_width) / stats.calls.max(1)) as usize;
        out.push(Line::from(vec![
            label(purpose),
            Span::styled("█".repeat(filled.max(1)), view.style(Slot::ScoreHigh)),
            text(format!(" {n} ({:.0}%)", share * 100.0)),
        ]));
    }
    if stats.by_purpose.is_empty() {
        out.push(Line::from(text("  no calls yet".into())));
    }
    out.truncate(rows);
    out
}

/// How many of the run's tokens are estimated (the header's `~`) and how; what the run was
/// told about the server before it began (the provider's notes) and found out as it went
/// (it ignored `n`, sent no token usage, ...): each wrapped to at most three rows; a
/// replay's as its session recorded them. An imported log's total is its own: not said.
fn server_lines(view: &View, width: usize) -> Vec<Line<'static>> {
    let session = &view.app.session;
    let found = match &session.replay {
        Some(r) => r.session.found(),
        None => session.run.found(),
    };
    let estimated = match session.run.totals.estimated_tokens {
        0 => None,
        _ if session.header.provider.starts_with("import") => None,
        n => Some(format!(
            "~ {n} of the tokens are estimated from the text (about 4 characters a token): the server reported no \
             usage for those calls"
        )),
    };
    let mut out = Vec::new();
    for note in estimated.iter().chain(&session.header.provider_notes).chain(found) {
        let rows = super::caption::wrap(note, width.saturating_sub(9).max(8));
        for (i, row) in rows.iter().take(3).enumerate() {
            let cut = i == 2 && rows.len() > 3;
            let row = if cut { format!("{row}…") } else { row.clone() };
            let label = if i == 0 { "server" } else { "" };
            out.push(Line::from(vec![
                Span::styled(format!("{label:<9}"), view.style(Slot::Dim)),
                Span::styled(row, view.style(Slot::Warning)),
            ]));
        }
    }
    out
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let rect = centered(area, area.width.saturating_sub(4).min(120), area.height.saturating_sub(2));
    super::popup::clear_under(frame, view, rect);
    let block = frame_block(view, "Stats of this run".into(), "any key closes");
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let stats = Stats::of(&view.app.session.run.engine);
    let lines = lines(view, &stats, inner.width as usize, inner.height as usize);
    frame.render_widget(Paragraph::new(lines), inner);
}
