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

use super::super::app::{App, Pane};
use super::super::theme::Slot;
use super::tree::{badge, status_glyph, status_slot};
use super::View;
use crate::engine::event::Event;
use crate::engine::methods::{Candidates, Cutoff, Tally, Votes};
use crate::engine::{Node, NodeId, NodeStatus};

/// The nodes of the latest evaluation round (BFS's whole step, the siblings of the
/// latest scored node, or the nodes the method names), in the order the pane shows them.
#[cfg(test)]
pub fn current_candidates(app: &App) -> Vec<&Node> {
    match rows(app, usize::MAX) {
        Rows::Candidates(Ranked { rows, .. }) => rows
            .into_iter()
            .filter_map(|r| match r {
                Row::Node(n) => Some(n),
                Row::Cut(_) => None,
            })
            .collect(),
        Rows::Vote(_) => Vec::new(),
    }
}

/// One line of the candidate list.
enum Row<'a> {
    Node(&'a Node),
    /// The cut-off line (its label).
    Cut(String),
}

/// One line of a vote.
enum VoteRow {
    Answer(Tally),
    /// Samples that gave no answer the task can read.
    NoAnswer(usize),
    /// The votes the majority needs.
    Threshold(String),
}

enum Rows<'a> {
    Candidates(Ranked<'a>),
    Vote(Vote),
}

/// The first rows of the ranked candidates (as many as asked for), with what the pane
/// needs to know of all of them.
struct Ranked<'a> {
    rows: Vec<Row<'a>>,
    /// All the rows: the candidates, and the cut-off line if it is drawn.
    len: usize,
    /// The candidates.
    nodes: usize,
    /// Where the cut-off line is among all the rows, if it is drawn.
    cut: Option<usize>,
    shape: Shape,
}

/// What the candidate lines need of all the ranked nodes, not only the shown ones.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Shape {
    /// Some ranked node carries the score parts (`has_score_parts`).
    columns: bool,
    /// The value a full bar stands for: the highest value, at least 1.
    max: f64,
}

/// The latest round's candidates in the order the pane shows them, with the cut-off
/// line's place: kept between frames while nothing that ranks them changes (the app's
/// engine revision, its events and the tree's length). A BFS step can rank tens of
/// thousands of nodes while the pane shows a dozen, so only the rows asked for so far
/// are put in order (the first `sorted`; the others follow in no order).
#[derive(Debug, Default)]
pub struct RankCache {
    key: Option<crate::tui::app::EngineKey>,
    keyed: Vec<Key>,
    sorted: usize,
    cut: Option<(usize, String)>,
    shape: Option<Shape>,
}

/// A candidate's place: its rank (group), its value (higher first; none, or not a
/// number, last) and its id (lower first). Ids differ, so no two keys are equal.
type Key = (u8, f64, NodeId);

fn order(a: &Key, b: &Key) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2))
}

impl RankCache {
    /// Put the first `n` candidates in order (a partial selection, then a sort of those).
    fn sort_first(&mut self, n: usize) {
        let n = n.min(self.keyed.len());
        if n <= self.sorted {
            return;
        }
        let rest = &mut self.keyed[self.sorted..];
        let m = n - self.sorted;
        if m < rest.len() {
            rest.select_nth_unstable_by(m - 1, order);
            rest[..m].sort_unstable_by(order);
        } else {
            rest.sort_unstable_by(order);
        }
        self.sorted = n;
    }
}

struct Vote {
    votes: Votes,
    rows: Vec<VoteRow>,
}

impl Vote {
    /// Where the threshold line is among the rows.
    fn cut(&self) -> Option<usize> {
        self.rows.iter().position(|r| matches!(r, VoteRow::Threshold(_)))
    }
}

impl Rows<'_> {
    fn len(&self) -> usize {
        match self {
            Rows::Candidates(r) => r.len,
            Rows::Vote(v) => v.rows.len(),
        }
    }
}

/// Kept by the method: in the beam, expanded, or output.
fn kept(node: &Node) -> bool {
    matches!(node.status, NodeStatus::Frontier | NodeStatus::Expanded | NodeStatus::Final | NodeStatus::Solution)
}

/// Where a candidate goes: kept ones first, then the undecided, the dropped, the
/// pruned and the invalid.
fn group(node: &Node) -> u8 {
    match node.status {
        NodeStatus::Frontier | NodeStatus::Expanded | NodeStatus::Final | NodeStatus::Solution => 0,
        NodeStatus::Candidate => 1,
        NodeStatus::Dropped(_) => 2,
        NodeStatus::Pruned => 3,
        NodeStatus::Invalid(_) => 4,
    }
}

fn value(node: &Node) -> Option<f64> {
    node.score.as_ref().map(|s| s.value)
}

/// The score parts a method may put on its nodes, shown as columns (in this order)
/// when a ranked node carries them: a local score, a cross-check, a penalty taken off
/// and the total that ranks it.
const SCORE_PARTS: [&str; 4] = ["local", "cross", "penalty", "total"];

/// Whether the pane shows the score parts as columns: some ranked node has a local
/// score and a total (a part a node lacks, e.g. no cross-check, shows as `–`).
fn has_score_parts(node: &Node) -> bool {
    node.metrics.contains_key("local") && node.metrics.contains_key("total")
}

fn part_columns(rows: &Rows) -> bool {
    match rows {
        Rows::Candidates(r) => r.shape.columns,
        Rows::Vote(_) => false,
    }
}

/// The column headings and width: full words where the pane is wide, else `loc crs pen tot`.
fn part_headings(inner_width: usize) -> ([&'static str; 4], usize) {
    if inner_width >= 90 {
        (SCORE_PARTS, 8)
    } else {
        (["loc", "crs", "pen", "tot"], 6)
    }
}

/// One score part as its column shows it: the penalty as what it takes off (`−0.12`).
fn part_text(node: &Node, part: &str) -> String {
    match node.metrics.get(part) {
        None => "–".into(),
        Some(v) if part == "penalty" && *v != 0.0 => format!("−{:.2}", v.abs()),
        Some(v) => format!("{v:.2}"),
    }
}

/// The first `need` rows of the latest round's candidates, each placed by what the
/// engine did with it (ranked once per change, see `RankCache`).
fn candidate_rows(app: &App, need: usize) -> Ranked<'_> {
    let tree = app.session.run.engine.tree();
    let key = app.engine_key();
    let mut cache = app.scores.rank_cache.borrow_mut();
    if cache.key != Some(key) {
        *cache = rank(app);
        cache.key = Some(key);
    }
    let shape = cache.shape.unwrap_or(Shape { columns: false, max: 1.0 });
    let nodes = cache.keyed.len();
    let cut = cache.cut.as_ref().filter(|(at, _)| *at < nodes).map(|(at, label)| (*at, label.clone()));
    let len = nodes + usize::from(cut.is_some());
    let need = need.min(len);
    cache.sort_first(need);
    let mut rows: Vec<Row> = cache.keyed[..need.min(nodes)].iter().map(|k| Row::Node(tree.node(k.2))).collect();
    let cut_at = cut.as_ref().map(|(at, _)| *at);
    if let Some((at, label)) = cut.filter(|(at, _)| *at <= rows.len()) {
        rows.insert(at, Row::Cut(label));
    }
    rows.truncate(need);
    Ranked { rows, len, nodes, cut: cut_at, shape }
}

/// Rank the latest round's candidates (what `candidate_rows` shows).
fn rank(app: &App) -> RankCache {
    let tree = app.session.run.engine.tree();
    let method = app.session.run.engine.view();
    let nodes: Vec<&Node> = if let Candidates::These(ids) = &method.candidates {
        ids.iter().filter(|&&n| tree.contains(n)).map(|&n| tree.node(n)).collect()
    } else {
        let last: Option<NodeId> = app.session.events.iter().rev().find_map(|e| match e {
            Event::Scored { id, .. } => Some(*id),
            _ => None,
        });
        let Some(last) = last.filter(|&n| tree.contains(n)) else { return RankCache::default() };
        let anchor = tree.node(last);
        if method.candidates == Candidates::ByDepth {
            tree.nodes().filter(|n| n.depth == anchor.depth && n.id != tree.root()).collect()
        } else {
            let parent = anchor.parent.unwrap_or(tree.root());
            tree.node(parent).children.iter().map(|&c| tree.node(c)).collect()
        }
    };
    // A beam is drawn after the states the method kept; a threshold by value among
    // the candidates a person left alone.
    let rank = |n: &Node| match method.cutoff {
        Some(Cutoff::Beam { .. }) => group(n),
        _ => group(n).saturating_sub(2),
    };
    // Each node's rank and value read once (-0 as 0, so they tie as they compare).
    let value_key = |n: &Node| value(n).filter(|v| !v.is_nan()).map_or(f64::NEG_INFINITY, |v| v + 0.0);
    // One pass over the nodes (tens of thousands after a BFS step) for everything below.
    let mut keyed: Vec<Key> = Vec::with_capacity(nodes.len());
    let (mut kept_count, mut dropped, mut scored) = (0, false, 0);
    let mut shape = Shape { columns: false, max: 0.0 };
    for n in &nodes {
        keyed.push((rank(n), value_key(n), n.id));
        kept_count += usize::from(kept(n));
        dropped |= matches!(n.status, NodeStatus::Dropped(_));
        scored += usize::from(group(n) == 1 && n.score.is_some());
        shape.columns |= has_score_parts(n);
        if let Some(v) = value(n) {
            shape.max = shape.max.max(v);
        }
    }
    // Bars on the task's value scale (the top class times the samples summed), so
    // "1.002 (likely, impossible, impossible)" is a short bar whatever else the step holds;
    // a task without value classes (plain scores) is scaled to the step's best.
    shape.max = value_scale(app).unwrap_or(shape.max).max(shape.max).max(1.0);
    // Where the cut-off line goes: before the node at this index.
    let cut_at = match &method.cutoff {
        Some(Cutoff::Beam { n: beam, .. }) => {
            if kept_count > 0 || dropped {
                // After the states the engine keeps.
                Some(kept_count)
            } else {
                // Not selected yet: where the beam will fall among the scored candidates.
                (scored > *beam).then_some(*beam)
            }
        }
        Some(Cutoff::Threshold { value: t, .. }) => {
            // Before the first (in order) of the left-alone candidates under the threshold:
            // at the number of candidates ranked before it.
            let under = |i: &usize| rank(nodes[*i]) == 0 && value(nodes[*i]).is_some_and(|v| v < *t);
            let first = (0..nodes.len()).filter(under).min_by(|&a, &b| order(&keyed[a], &keyed[b]));
            first.map(|f| keyed.iter().filter(|k| order(k, &keyed[f]).is_lt()).count())
        }
        None => None,
    };
    let label = method.cutoff.as_ref().map(|c| c.label().to_string()).unwrap_or_default();
    RankCache { key: None, keyed, sorted: 0, cut: cut_at.map(|at| (at, label)), shape: Some(shape) }
}

/// The largest value the task's value evaluator can give (its top class times the
/// samples it sums), when the run values states with one.
fn value_scale(app: &App) -> Option<f64> {
    let core = &app.session.run.engine.core;
    let search = core.search?;
    if search.evaluator != crate::engine::params::Evaluator::Value {
        return None;
    }
    let top = crate::engine::task::value_classes(core.task.as_ref()).iter().map(|(_, v)| *v).fold(0.0, f64::max);
    (top > 0.0).then(|| top * f64::from(search.n_evaluate.max(1)))
}

fn vote_rows(votes: Votes) -> Vote {
    let mut rows: Vec<VoteRow> = votes.tallies.iter().cloned().map(VoteRow::Answer).collect();
    if let Some(needed) = votes.needed() {
        let share = votes.threshold.unwrap_or(0.0);
        let label = format!("needs {share} × {} = {needed}", votes.samples);
        // Between the answers with enough votes and the rest.
        let at = votes.tallies.iter().take_while(|t| t.votes > 0 && t.votes as f64 >= needed).count();
        if !votes.tallies.is_empty() {
            rows.insert(at, VoteRow::Threshold(label));
        }
    }
    let unread = votes.samples.saturating_sub(votes.answers.len());
    if unread > 0 {
        rows.push(VoteRow::NoAnswer(unread));
    }
    Vote { votes, rows }
}

/// The pane's rows: all of a vote's, the first `need` of the candidates'.
fn rows(app: &App, need: usize) -> Rows<'_> {
    match app.session.run.engine.view().votes {
        Some(votes) => Rows::Vote(vote_rows(votes)),
        None => Rows::Candidates(candidate_rows(app, need)),
    }
}

/// The rows the pane shows at once, as the last frame drew it (the score parts'
/// heading line takes one).
pub fn visible_rows(app: &App) -> usize {
    let heading = usize::from(part_columns(&rows(app, 0)));
    (app.areas[Pane::Scores.index()].height.saturating_sub(2) as usize).saturating_sub(heading)
}

/// How far the pane can scroll: its rows past the ones that fit.
pub fn max_scroll(app: &App) -> usize {
    rows(app, 0).len().saturating_sub(visible_rows(app).max(1))
}

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
        let engine = &app.session.run.engine;
        let method = &engine.core.params.method;
        let hint = if *method == crate::engine::methods::retreval::method::KIND {
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
        };
        return (hint_lines(view, &hint, inner_width), extra);
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
    let max = shape.max;
    let (headings, part_width) = part_headings(inner_width);
    let parts_width = if columns { part_width * SCORE_PARTS.len() } else { 0 };
    // Beside the score parts the bar only fits a wide pane (the total column says the value).
    let bar_width = if columns && inner_width < 90 { 0 } else { (inner_width / 5).clamp(4, 20) };
    let thought_width = inner_width.saturating_sub(label_width + parts_width + bar_width + 2);
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
        Row::Node(n) => {
            let filled = value(n).map(|v| ((v.max(0.0) / max) * bar_width as f64).round() as usize).unwrap_or(0);
            let bar_slot = if kept(n) { Slot::BarKept } else { Slot::Bar };
            let text_slot = if kept(n) { Slot::NodeKept } else { status_slot(n) };
            // Beside the score parts, a node's short label (`casework · 12`) says more than its text's first line.
            let first_line = n.thought.lines().next().unwrap_or("");
            let text = if columns { n.label.as_deref().unwrap_or(first_line) } else { first_line };
            let thought = fit(text.trim(), thought_width);
            let mut spans =
                vec![Span::styled(format!("{:<label_width$}", label_of(n)), view.style(text_slot)), Span::raw(" ")];
            if columns {
                for part in SCORE_PARTS {
                    let slot = if part == "total" { text_slot } else { Slot::Dim };
                    spans.push(Span::styled(
                        format!("{:>w$} ", part_text(n, part), w = part_width - 1),
                        view.style(slot),
                    ));
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

#[cfg(test)]
mod rank_tests {
    use super::*;
    use crate::engine::rng::SplitMix64;

    /// Putting the first rows in order a few at a time (as the pane scrolls) gives the
    /// same rows as sorting all of them: ties by rank and value go by id, -0 ties with 0,
    /// no value and not-a-number come last.
    #[test]
    fn the_rows_put_in_order_as_asked_are_those_of_a_full_sort() {
        let mut rng = SplitMix64::new(7);
        let values = [f64::NEG_INFINITY, 0.0, -0.0 + 0.0, 1.0, 2.5, 60.0, 0.001, 20.0];
        let keyed: Vec<Key> = (0..3000)
            .map(|i| {
                let r = rng.next_u64();
                ((r % 5) as u8, values[((r >> 8) % values.len() as u64) as usize], NodeId(i))
            })
            .collect();
        let mut full = keyed.clone();
        full.sort_by(order);
        let mut cache = RankCache { keyed, ..RankCache::default() };
        for n in [0, 1, 12, 13, 40, 39, 700, 2999, 3000, 5000] {
            cache.sort_first(n);
            let n = n.min(full.len());
            assert_eq!(&cache.keyed[..n], &full[..n], "first {n}");
        }
        assert_eq!(cache.keyed, full);
    }
}
