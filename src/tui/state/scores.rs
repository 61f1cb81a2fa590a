//! The scores pane's model: the latest round's candidates ranked as the pane lists them
//! (kept between frames in `RankCache`), a vote's rows, and the pane's scroll room.
//! `tui/ui/scores.rs` draws these rows.
//!
//! Everything is read from the engine's current statuses, so it agrees with the tree
//! after every command (prune, backtrack, edit, expand).

use super::{App, Pane};
use crate::engine::event::Event;
use crate::engine::methods::{Candidates, Cutoff, Tally, Votes};
use crate::engine::{Node, NodeId, NodeStatus};

/// One line of the candidate list.
pub(crate) enum Row<'a> {
    Node(&'a Node),
    /// The cut-off line (its label).
    Cut(String),
}

/// One line of a vote.
pub(crate) enum VoteRow {
    Answer(Tally),
    /// Samples that gave no answer the task can read.
    NoAnswer(usize),
    /// The votes the majority needs.
    Threshold(String),
}

pub(crate) enum Rows<'a> {
    Candidates(Ranked<'a>),
    Vote(Vote),
}

/// The first rows of the ranked candidates (as many as asked for), with what the pane
/// needs to know of all of them.
pub(crate) struct Ranked<'a> {
    pub(crate) rows: Vec<Row<'a>>,
    /// All the rows: the candidates, and the cut-off line if it is drawn.
    pub(crate) len: usize,
    /// The candidates.
    pub(crate) nodes: usize,
    /// Where the cut-off line is among all the rows, if it is drawn.
    pub(crate) cut: Option<usize>,
    pub(crate) shape: Shape,
}

/// What the candidate lines need of all the ranked nodes, not only the shown ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shape {
    /// Some ranked node carries the score parts (`has_score_parts`).
    pub(crate) columns: bool,
    /// The value a full bar stands for: the highest value, at least 1.
    pub(crate) max: f64,
}

/// The latest round's candidates in the order the pane shows them, with the cut-off
/// line's place: kept between frames while nothing that ranks them changes (the app's
/// engine revision, its events and the tree's length). A BFS step can rank tens of
/// thousands of nodes while the pane shows a dozen, so only the rows asked for so far
/// are put in order (the first `sorted`; the others follow in no order).
#[derive(Debug, Default)]
pub struct RankCache {
    pub(crate) key: Option<super::EngineKey>,
    pub(crate) keyed: Vec<Key>,
    pub(crate) sorted: usize,
    pub(crate) cut: Option<(usize, String)>,
    pub(crate) shape: Option<Shape>,
}

/// A candidate's place: its rank (group), its value (higher first; none, or not a
/// number, last) and its id (lower first). Ids differ, so no two keys are equal.
pub(crate) type Key = (u8, f64, NodeId);

pub(crate) fn order(a: &Key, b: &Key) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2))
}

impl RankCache {
    /// Put the first `n` candidates in order (a partial selection, then a sort of those).
    pub(crate) fn sort_first(&mut self, n: usize) {
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

pub(crate) struct Vote {
    pub(crate) votes: Votes,
    pub(crate) rows: Vec<VoteRow>,
}

impl Vote {
    /// Where the threshold line is among the rows.
    pub(crate) fn cut(&self) -> Option<usize> {
        self.rows.iter().position(|r| matches!(r, VoteRow::Threshold(_)))
    }
}

impl Rows<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Rows::Candidates(r) => r.len,
            Rows::Vote(v) => v.rows.len(),
        }
    }
}

/// Kept by the method: in the beam, expanded, or output.
pub(crate) fn kept(node: &Node) -> bool {
    matches!(node.status, NodeStatus::Frontier | NodeStatus::Expanded | NodeStatus::Final | NodeStatus::Solution)
}

/// Where a candidate goes: kept ones first, then the undecided, the dropped, the
/// pruned and the invalid.
pub(crate) fn group(node: &Node) -> u8 {
    match node.status {
        NodeStatus::Frontier | NodeStatus::Expanded | NodeStatus::Final | NodeStatus::Solution => 0,
        NodeStatus::Candidate => 1,
        NodeStatus::Dropped(_) => 2,
        NodeStatus::Pruned => 3,
        NodeStatus::Invalid(_) => 4,
    }
}

pub(crate) fn value(node: &Node) -> Option<f64> {
    node.score.as_ref().map(|s| s.value)
}

/// The score parts a method may put on its nodes, shown as columns (in this order)
/// when a ranked node carries them: a local score, a cross-check, a penalty taken off
/// and the total that ranks it.
pub(crate) const SCORE_PARTS: [&str; 4] = ["local", "cross", "penalty", "total"];

/// Whether the pane shows the score parts as columns: some ranked node has a local
/// score and a total (a part a node lacks, e.g. no cross-check, shows as `–`).
pub(crate) fn has_score_parts(node: &Node) -> bool {
    node.metrics.contains_key("local") && node.metrics.contains_key("total")
}

pub(crate) fn part_columns(rows: &Rows) -> bool {
    match rows {
        Rows::Candidates(r) => r.shape.columns,
        Rows::Vote(_) => false,
    }
}

/// The column headings and width: full words where the pane is wide, else `loc crs pen tot`.
pub(crate) fn part_headings(inner_width: usize) -> ([&'static str; 4], usize) {
    if inner_width >= 90 {
        (SCORE_PARTS, 8)
    } else {
        (["loc", "crs", "pen", "tot"], 6)
    }
}

/// One score part as its column shows it: the penalty as what it takes off (`−0.12`).
pub(crate) fn part_text(node: &Node, part: &str) -> String {
    match node.metrics.get(part) {
        None => "–".into(),
        Some(v) if part == "penalty" && *v != 0.0 => format!("−{:.2}", v.abs()),
        Some(v) => format!("{v:.2}"),
    }
}

/// The first `need` rows of the latest round's candidates, each placed by what the
/// engine did with it (ranked once per change, see `RankCache`).
pub(crate) fn candidate_rows(app: &App, need: usize) -> Ranked<'_> {
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
pub(crate) fn rank(app: &App) -> RankCache {
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
pub(crate) fn value_scale(app: &App) -> Option<f64> {
    let core = &app.session.run.engine.core;
    let search = core.search?;
    if search.evaluator != crate::engine::params::Evaluator::Value {
        return None;
    }
    let top = crate::engine::task::value_classes(core.task.as_ref()).iter().map(|(_, v)| *v).fold(0.0, f64::max);
    (top > 0.0).then(|| top * f64::from(search.n_evaluate.max(1)))
}

pub(crate) fn vote_rows(votes: Votes) -> Vote {
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
pub(crate) fn rows(app: &App, need: usize) -> Rows<'_> {
    match app.session.run.engine.view().votes {
        Some(votes) => Rows::Vote(vote_rows(votes)),
        None => Rows::Candidates(candidate_rows(app, need)),
    }
}

/// The rows the pane shows at once, as the last frame drew it (the score parts'
/// heading line takes one).
pub(crate) fn visible_rows(app: &App) -> usize {
    let heading = usize::from(part_columns(&rows(app, 0)));
    (app.areas[Pane::Scores.index()].height.saturating_sub(2) as usize).saturating_sub(heading)
}

/// How far the pane can scroll: its rows past the ones that fit.
pub(crate) fn max_scroll(app: &App) -> usize {
    rows(app, 0).len().saturating_sub(visible_rows(app).max(1))
}

/// The nodes of the latest evaluation round (BFS's whole step, the siblings of the
/// latest scored node, or the nodes the method names), in the order the pane shows them.
#[cfg(test)]
pub(crate) fn current_candidates(app: &App) -> Vec<&Node> {
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
