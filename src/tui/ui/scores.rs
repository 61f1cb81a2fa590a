//! The candidates being judged now, with their values as bars, the beam cut-off
//! or threshold marked and the kept ones highlighted — or, for methods that vote
//! over sampled answers (CoT-SC and the hybrids), the answers' histogram.
//!
//! Everything is read from the engine's current statuses when the pane is drawn, so
//! it agrees with the tree after every command (prune, backtrack, edit, expand).

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::state::Pane;
use super::super::theme::Slot;
use super::tree::{badge, status_glyph, status_slot};
use super::View;
use crate::engine::{Node, NodeStatus};
use crate::tui::state::scores::*;

/// Which rows the pane shows (indices into all its rows): from `scroll`, as many as
/// fit. At the top, when the cut-off line falls below them, the first rows, then the
/// cut-off line and the row after it: where the method cuts is always in view.
fn shown_rows(len: usize, scroll: usize, height: usize, cut: Option<usize>) -> Vec<usize> {
    match cut {
        Some(c) if scroll == 0 && c >= height && height >= 2 && c < len => {
            let after = usize::from(c + 1 < len && height >= 3);
            let mut out: Vec<usize> = (0..height - 1 - after).collect();
            out.push(c);
            out.extend((c + 1..len).take(after));
            out
        }
        _ => (scroll..len.min(scroll + height)).collect(),
    }
}

/// The numbers (from 1) of the items shown, as `k of n` (from the top), `a–b of n`,
/// or with a gap `1–3, 7 of n`; none when all `n` show.
fn range_text(shown: &[usize], n: usize) -> Option<String> {
    if shown.len() >= n || shown.is_empty() {
        return None;
    }
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &k in shown {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == k => *end = k,
            _ => runs.push((k, k)),
        }
    }
    if let [(1, end)] = runs[..] {
        return Some(format!("{end} of {n}"));
    }
    let runs: Vec<String> =
        runs.iter().map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}–{b}") }).collect();
    Some(format!("{} of {n}", runs.join(", ")))
}

/// The item numbers (from 1) of the shown rows that are items (not a cut-off line).
fn item_numbers(is_item: &[bool], shown: &[usize]) -> Vec<usize> {
    shown.iter().filter(|&&i| is_item[i]).map(|&i| is_item[..=i].iter().filter(|&&x| x).count()).collect()
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let (now, len) = (line.chars().count(), word.chars().count());
        if now > 0 && now + 1 + len > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let rest: String = line.chars().skip(width).collect();
            out.push(line.chars().take(width).collect());
            line = rest;
        }
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

/// `text` cut to `width` characters, with `…` where it was cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut cut: String = text.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let app = view.app;
    let inner_width = area.width.saturating_sub(2) as usize;
    // The rows down to the last one the pane can show, and to the one after the cut-off.
    let need = usize::from(app.scores.scroll) + area.height as usize;
    let mut all = rows(app, need);
    if let Rows::Candidates(Ranked { cut: Some(c), .. }) = &all {
        if c + 2 > need {
            all = rows(app, c + 2);
        }
    }
    let heading = usize::from(part_columns(&all));
    let height = (area.height.saturating_sub(2) as usize).saturating_sub(heading);
    // Which node each line shows, for clicks (`candidate_lines` fills it).
    app.scores.lines.borrow_mut().clear();
    let scroll = usize::from(app.scores.scroll).min(all.len().saturating_sub(height.max(1)));
    let (lines, extra) = match all {
        Rows::Candidates(ranked) => candidate_lines(view, ranked, scroll, height, inner_width),
        Rows::Vote(vote) => vote_lines(view, vote, scroll, height, inner_width),
    };
    let block = view.block(Pane::Scores, &extra);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// A message in the pane, wrapped at words to its width.
fn hint_lines(view: &View, hint: &str, width: usize) -> Vec<Line<'static>> {
    wrap_words(hint, width).into_iter().map(|l| Line::from(Span::styled(l, view.style(Slot::Dim)))).collect()
}

/// What the pane says while there is nothing to rank.
fn no_candidates_hint(view: &View) -> String {
    let app = view.app;
    let engine = &app.session.run.engine;
    let method = &engine.core.params.method;
    if *method == crate::engine::methods::retreval::method::KIND {
        format!(
            "{method}: each round's attempts show here with their scores (loc crs pen tot) once they are \
             scored; its steps are in the transcript"
        )
    } else if !method.info().searches_tree(&engine.core.params) {
        format!("{method} scores nothing: its steps are in the transcript")
    } else if engine.is_finished() {
        "no evaluations".to_string()
    } else if app.session.replay.is_some() {
        "no evaluations yet at this point of the replay".to_string()
    } else {
        format!("no evaluations yet — press {} to step", view.key(super::super::action::Action::Step))
    }
}

/// The widths a candidate line is laid out in.
struct Widths {
    label: usize,
    part: usize,
    bar: usize,
    thought: usize,
    /// The value a full bar stands for.
    max: f64,
    /// The score parts show as columns.
    columns: bool,
}

/// One candidate's line: its label, its score parts, its bar and its thought.
fn node_line(view: &View, n: &Node, widths: &Widths, label: &str) -> Line<'static> {
    let &Widths { label: label_width, part: part_width, bar: bar_width, thought: thought_width, max, columns } = widths;
    let filled = value(n).map(|v| ((v.max(0.0) / max) * bar_width as f64).round() as usize).unwrap_or(0);
    let bar_slot = if kept(n) { Slot::BarKept } else { Slot::Bar };
    let text_slot = if kept(n) { Slot::NodeKept } else { status_slot(n) };
    // Beside the score parts, a node's short label (`casework · 12`) says more than its text's first line.
    let first_line = n.thought.lines().next().unwrap_or("");
    let text = if columns { n.label.as_deref().unwrap_or(first_line) } else { first_line };
    let thought = fit(text.trim(), thought_width);
    let mut spans = vec![Span::styled(format!("{:<label_width$}", label), view.style(text_slot)), Span::raw(" ")];
    if columns {
        for part in SCORE_PARTS {
            let slot = if part == "total" { text_slot } else { Slot::Dim };
            spans.push(Span::styled(format!("{:>w$} ", part_text(n, part), w = part_width - 1), view.style(slot)));
        }
    }
    if bar_width > 0 {
        spans.push(Span::styled("█".repeat(filled.min(bar_width)), view.style(bar_slot)));
        spans.push(Span::styled("░".repeat(bar_width - filled.min(bar_width)), view.style(Slot::Dim)));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(thought, view.style(text_slot)));
    Line::from(spans)
}

fn candidate_lines(
    view: &View,
    ranked: Ranked,
    scroll: usize,
    height: usize,
    inner_width: usize,
) -> (Vec<Line<'static>>, String) {
    let app = view.app;
    let cutoff = app.session.run.engine.view().cutoff;
    let mut extra = cutoff.as_ref().map(|c| c.label().to_string()).unwrap_or_default();
    let Ranked { rows, nodes, cut, shape, .. } = ranked;
    if nodes == 0 {
        return (hint_lines(view, &no_candidates_hint(view), inner_width), extra);
    }
    let classes = crate::engine::task::value_classes(app.session.run.engine.core.task.as_ref());
    let columns = shape.columns;
    let label_of = |n: &Node| {
        if columns {
            // The parts' columns say the value (the total); the badge would repeat it.
            return format!("{} {}", status_glyph(n), n.id);
        }
        // `…` waits for a value; invalid and other unscored states show no value at all.
        let value = badge(n, classes).unwrap_or_else(|| {
            if n.status == NodeStatus::Candidate {
                "…".into()
            } else {
                String::new()
            }
        });
        let mut label = format!("{} {} {value}", status_glyph(n), n.id);
        if let Some(m) = super::tree::metrics_text(n) {
            label.push_str(&format!(" {m}"));
        }
        label
    };
    let shown_at = shown_rows(rows.len(), scroll, height, cut);
    let shown: Vec<&Row> = shown_at.iter().map(|&i| &rows[i]).collect();
    // Labels are made for the rows in view only: a BFS step can rank tens of thousands.
    let label_width = shown
        .iter()
        .filter_map(|r| match r {
            Row::Node(n) => Some(label_of(n).chars().count()),
            Row::Cut(_) => None,
        })
        .max()
        .unwrap_or(0);
    let (headings, part_width) = part_headings(inner_width);
    let parts_width = if columns { part_width * SCORE_PARTS.len() } else { 0 };
    // Beside the score parts the bar only fits a wide pane (the total column says the value).
    let bar_width = if columns && inner_width < 90 { 0 } else { (inner_width / 5).clamp(4, 20) };
    let thought_width = inner_width.saturating_sub(label_width + parts_width + bar_width + 2);
    let widths = Widths {
        label: label_width,
        part: part_width,
        bar: bar_width,
        thought: thought_width,
        max: shape.max,
        columns,
    };
    let is_node: Vec<bool> = rows.iter().map(|r| matches!(r, Row::Node(_))).collect();
    if let Some(range) = range_text(&item_numbers(&is_node, &shown_at), nodes) {
        extra = if extra.is_empty() { range } else { format!("{extra} · {range}") };
    }
    let mut lines: Vec<Line<'static>> = Vec::new();
    *app.scores.lines.borrow_mut() = std::iter::repeat_n(None, usize::from(columns))
        .chain(shown.iter().map(|r| match r {
            Row::Node(n) => Some(n.id),
            Row::Cut(_) => None,
        }))
        .collect();
    if columns {
        let mut heading = format!("{:<label_width$} ", "");
        for h in headings {
            heading.push_str(&format!("{h:>w$}", w = part_width - 1));
            heading.push(' ');
        }
        lines.push(Line::from(Span::styled(heading, view.style(Slot::Dim))));
    }
    lines.extend(shown.into_iter().map(|row| match row {
        Row::Cut(label) => Line::from(Span::styled(
            format!("{:─^w$}", format!(" {label} "), w = inner_width),
            view.style(Slot::Cutoff),
        )),
        Row::Node(n) => node_line(view, n, &widths, &label_of(n)),
    }));
    (lines, extra)
}

/// The vote: one row per answer (votes and a bar out of the n samples, then the first
/// sample that gave it), the majority marked `▶` and highlighted, the threshold line
/// where the method has one.
fn vote_lines(
    view: &View,
    vote: Vote,
    scroll: usize,
    height: usize,
    inner_width: usize,
) -> (Vec<Line<'static>>, String) {
    let votes = &vote.votes;
    let tree = view.app.session.run.engine.tree();
    let mut extra = if votes.samples < votes.asked {
        format!("vote · {} of {} samples in", votes.samples, votes.asked)
    } else {
        format!("vote of {} samples", votes.samples)
    };
    if vote.rows.is_empty() {
        let hint = if votes.samples > 0 {
            "no sample gave an answer".to_string()
        } else if view.app.session.replay.is_some() {
            format!("no samples yet at this point of the replay ({} asked)", votes.asked)
        } else {
            format!(
                "waiting for {} samples — press {} to step",
                votes.asked,
                view.key(super::super::action::Action::Step)
            )
        };
        return (hint_lines(view, &hint, inner_width), extra);
    }
    let majority = votes.tallies.first().map(|t| t.first);
    let tie = matches!(votes.tallies.as_slice(), [first, second, ..] if first.votes == second.votes);
    let count_width = votes.samples.max(1).to_string().len();
    let bar_width = (inner_width / 5).clamp(4, 21);
    // The answer column takes what the mark, the count, the bar and the first sample leave.
    let id_width = votes.tallies.iter().map(|t| t.first.to_string().len()).max().unwrap_or(0) + 2;
    let room = inner_width.saturating_sub(2 + 1 + count_width + 1 + bar_width + 1 + id_width);
    let widest = votes.tallies.iter().map(|t| t.answer.chars().count()).max().unwrap_or(0).max("no answer".len());
    let answer_width = widest.min(room);
    let bar = |count: usize| {
        let filled = (count * bar_width).div_ceil(votes.samples.max(1)).min(bar_width);
        (filled, bar_width - filled)
    };
    let is_answer: Vec<bool> = vote.rows.iter().map(|r| matches!(r, VoteRow::Answer(_))).collect();
    let answers = is_answer.iter().filter(|&&a| a).count();
    let shown_at = shown_rows(vote.rows.len(), scroll, height, vote.cut());
    let shown: Vec<&VoteRow> = shown_at.iter().map(|&i| &vote.rows[i]).collect();
    let range = range_text(&item_numbers(&is_answer, &shown_at), answers).map(|r| format!("{r} answers"));
    extra = vote_title(&extra, tie, range.as_deref(), inner_width.saturating_sub(" 2 Scores ".len() + 1));
    let lines = shown
        .into_iter()
        .map(|row| match row {
            VoteRow::Threshold(label) => Line::from(Span::styled(
                format!("{:─^w$}", format!(" {label} "), w = inner_width),
                view.style(Slot::Cutoff),
            )),
            VoteRow::Answer(t) => {
                let is_majority = Some(t.first) == majority;
                let slot = if is_majority { Slot::NodeKept } else { Slot::NodeCandidate };
                let (filled, empty) = bar(t.votes);
                Line::from(vec![
                    Span::styled(if is_majority { "▶ " } else { "  " }, view.style(slot)),
                    Span::styled(format!("{:<answer_width$}", fit(&t.answer, answer_width)), view.style(slot)),
                    Span::styled(format!(" {:>count_width$} ", t.votes), view.style(slot)),
                    Span::styled("█".repeat(filled), view.style(if is_majority { Slot::BarKept } else { Slot::Bar })),
                    Span::styled("░".repeat(empty), view.style(Slot::Dim)),
                    // The first sample with this answer, marked as in the tree (★: the task accepts it).
                    Span::styled(
                        format!(" {}", status_glyph(tree.node(t.first))),
                        view.style(status_slot(tree.node(t.first))),
                    ),
                    Span::styled(format!(" {}", t.first), view.style(Slot::Dim)),
                ])
            }
            VoteRow::NoAnswer(count) => {
                let (filled, empty) = bar(*count);
                Line::from(vec![
                    Span::styled(format!("  {:<answer_width$}", fit("no answer", answer_width)), view.style(Slot::Dim)),
                    Span::styled(format!(" {count:>count_width$} "), view.style(Slot::Dim)),
                    Span::styled("█".repeat(filled), view.style(Slot::Bar)),
                    Span::styled("░".repeat(empty), view.style(Slot::Dim)),
                ])
            }
        })
        .collect();
    (lines, extra)
}

/// The vote pane's title after its name, fitted to `room` columns: how a tie was broken
/// matters most (it says which row is marked and why), then the count of samples, then
/// which answers are shown; longer forms give way to shorter ones, then parts are dropped.
pub(crate) fn vote_title(count: &str, tie: bool, range: Option<&str>, room: usize) -> String {
    let ties: &[&str] = if tie { &["tie: first given wins", "tie: first given", "tie: 1st"] } else { &[""] };
    let counts = [count.to_string(), count.replace(" samples in", "").replace(" samples", ""), String::new()];
    let ranges: Vec<&str> = range.map_or(vec![""], |r| vec![r, ""]);
    let join = |parts: &[&str]| parts.iter().filter(|p| !p.is_empty()).copied().collect::<Vec<_>>().join(" · ");
    for tie in ties {
        for c in &counts {
            for r in &ranges {
                let title = join(&[c, tie, r]);
                if title.chars().count() <= room {
                    return title;
                }
            }
        }
    }
    join(&[ties[ties.len() - 1]])
}
