//! Two trees aligned node to node, the way a person reads them side by side: the roots
//! pair, and the children of two paired nodes pair by thought — the same text first (in
//! order, so duplicate proposals pair up in turn), then, among the rest, the most similar
//! thoughts above [`THRESHOLD`], one to one, ties going to the earlier sibling. So an
//! edited thought, or one whose siblings differ (another seed proposed a different set),
//! still pairs with its counterpart and its subtree keeps aligning below it.

use std::collections::{HashMap, VecDeque};

use crate::engine::{NodeId, SearchTree};

/// How alike two thoughts must be (0 to 1, see [`similarity`]) to pair when neither has an
/// exact counterpart among its siblings.
pub const THRESHOLD: f64 = 0.6;

/// Most sibling comparisons made for one pair of parents; past it (thousands of children
/// under one node) only exact thoughts pair there, so aligning stays fast.
const MAX_COMPARISONS: usize = 20_000;

/// Thoughts longer than this (in tokens) are compared by their tokens' overlap: an edit
/// distance over them would cost too much.
const MAX_EDIT_TOKENS: usize = 300;

/// The alignment, in a line (the CLI's report and the view's header say which one they use).
pub const DESCRIPTION: &str =
    "children of paired nodes by thought: the same text first, then the most alike (≥ 60% of words in order), one to one";

/// Which nodes pair, and which are left over on each side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Alignment {
    /// (A's node, B's node), in A's node order.
    pub pairs: Vec<(NodeId, NodeId)>,
    pub only_a: Vec<NodeId>,
    pub only_b: Vec<NodeId>,
}

fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',' || c == ';' || c == ':')
        .filter(|t| !t.is_empty())
        .map(|t| t.trim_end_matches(['.', '!', '?']).to_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Share of tokens the two texts have in common, in any order (Dice's coefficient over
/// token multisets).
pub fn token_overlap(a: &str, b: &str) -> f64 {
    overlap(&tokens(a), &tokens(b))
}

fn overlap(ta: &[String], tb: &[String]) -> f64 {
    if ta.is_empty() && tb.is_empty() {
        return 1.0;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in ta {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    let mut common = 0;
    for t in tb {
        if let Some(n) = counts.get_mut(t.as_str()) {
            if *n > 0 {
                *n -= 1;
                common += 1;
            }
        }
    }
    2.0 * common as f64 / (ta.len() + tb.len()) as f64
}

/// 1 less the edit distance between the two token lists over the longer one's length.
fn token_edit(ta: &[String], tb: &[String]) -> f64 {
    let longest = ta.len().max(tb.len());
    if longest == 0 {
        return 1.0;
    }
    let mut row: Vec<usize> = (0..=tb.len()).collect();
    for (i, x) in ta.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, y) in tb.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(x != y)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    1.0 - row[tb.len()] as f64 / longest as f64
}

/// How alike two thoughts are, 0 to 1: their tokens' edit similarity (words and numbers in
/// order, so `4 + 6 = 10` and `4 * 5 = 20` are far apart though they share a shape, while
/// one changed number in a long thought stays close). Past [`MAX_EDIT_TOKENS`] tokens, their
/// overlap in any order.
pub fn similarity(a: &str, b: &str) -> f64 {
    let (ta, tb) = (tokens(a), tokens(b));
    if ta.len() > MAX_EDIT_TOKENS || tb.len() > MAX_EDIT_TOKENS {
        return overlap(&ta, &tb);
    }
    token_edit(&ta, &tb)
}

/// Pair the children `ca` (of A) and `cb` (of B) of two paired nodes; indices into each.
fn pair_children(
    ta: &SearchTree,
    ca: &[NodeId],
    tb: &SearchTree,
    cb: &[NodeId],
    threshold: f64,
) -> Vec<(usize, usize)> {
    let mut b_free = vec![true; cb.len()];
    let mut a_free = vec![true; ca.len()];
    let mut pairs = Vec::new();
    // The same text: each of A's children takes the earliest free one of B's.
    let mut by_text: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (j, &y) in cb.iter().enumerate() {
        by_text.entry(tb.node(y).thought.as_str()).or_default().push_back(j);
    }
    for (i, &x) in ca.iter().enumerate() {
        if let Some(j) = by_text.get_mut(ta.node(x).thought.as_str()).and_then(VecDeque::pop_front) {
            pairs.push((i, j));
            a_free[i] = false;
            b_free[j] = false;
        }
    }
    // The rest: the most alike first, ties to the earlier siblings.
    let rest_a: Vec<usize> = (0..ca.len()).filter(|&i| a_free[i]).collect();
    let rest_b: Vec<usize> = (0..cb.len()).filter(|&j| b_free[j]).collect();
    if !rest_a.is_empty() && !rest_b.is_empty() && rest_a.len() * rest_b.len() <= MAX_COMPARISONS {
        let mut candidates = Vec::new();
        for &i in &rest_a {
            for &j in &rest_b {
                let s = similarity(&ta.node(ca[i]).thought, &tb.node(cb[j]).thought);
                if s >= threshold {
                    candidates.push((s, i, j));
                }
            }
        }
        candidates.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
        for (_, i, j) in candidates {
            if a_free[i] && b_free[j] {
                a_free[i] = false;
                b_free[j] = false;
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// Align two trees (see the module doc). Either tree may be empty (a run with no inputs).
pub fn align(a: &SearchTree, b: &SearchTree) -> Alignment {
    align_with(a, b, THRESHOLD)
}

/// [`align`] with another similarity threshold (above 1: exact thoughts only).
pub fn align_with(a: &SearchTree, b: &SearchTree, threshold: f64) -> Alignment {
    let mut to_b: Vec<Option<NodeId>> = vec![None; a.len()];
    let mut b_paired = vec![false; b.len()];
    if !a.is_empty() && !b.is_empty() {
        let mut queue = VecDeque::from([(a.root(), b.root())]);
        while let Some((x, y)) = queue.pop_front() {
            to_b[x.0] = Some(y);
            b_paired[y.0] = true;
            let (ca, cb) = (&a.node(x).children, &b.node(y).children);
            if ca.is_empty() || cb.is_empty() {
                continue;
            }
            for (i, j) in pair_children(a, ca, b, cb, threshold) {
                queue.push_back((ca[i], cb[j]));
            }
        }
    }
    let mut out = Alignment::default();
    for (i, y) in to_b.iter().enumerate() {
        match y {
            Some(y) => out.pairs.push((NodeId(i), *y)),
            None => out.only_a.push(NodeId(i)),
        }
    }
    out.only_b = (0..b.len()).filter(|&j| !b_paired[j]).map(NodeId).collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Origin;

    fn tree(children: &[&str]) -> SearchTree {
        let mut t = SearchTree::new("4 5 6 10");
        for c in children {
            t.add_child(t.root(), (*c).into(), String::new(), Origin::Model);
        }
        t
    }

    #[test]
    fn similarity_reads_edits_and_rewordings() {
        assert_eq!(similarity("a b c", "a b c"), 1.0);
        assert!(similarity("4 + 6 = 10 (left: 5 10 10)", "4 + 6 = 10 (left: 5 10 11)") > 0.85);
        assert!(similarity("Let us add the two numbers first", "Let us add both numbers first.") > THRESHOLD);
        // The same shape, another move: not alike.
        assert!(similarity("4 + 6 = 10 (left: 5 10 10)", "4 * 5 = 20 (left: 6 10 20)") < THRESHOLD);
        assert!(similarity("10 - 4 = 6 (left: 5 6 6)", "Paris is the capital of France") < THRESHOLD);
        assert_eq!(token_overlap("the cat sat on the mat", "on the mat the cat sat"), 1.0);
        // Past the edit limit, order no longer counts.
        let long: Vec<String> = (0..400).map(|i| format!("w{i}")).collect();
        let reversed: Vec<String> = long.iter().rev().cloned().collect();
        assert_eq!(similarity(&long.join(" "), &reversed.join(" ")), 1.0);
    }

    #[test]
    fn exact_thoughts_pair_in_order_whatever_their_position() {
        let a = tree(&["one", "two", "two", "three"]);
        let b = tree(&["two", "three", "one", "two"]);
        let al = align(&a, &b);
        let pairs: Vec<(usize, usize)> = al.pairs.iter().map(|(x, y)| (x.0, y.0)).collect();
        assert_eq!(pairs, vec![(0, 0), (1, 3), (2, 1), (3, 4), (4, 2)]);
        assert!(al.only_a.is_empty() && al.only_b.is_empty());
    }

    #[test]
    fn an_edited_thought_pairs_with_its_original_and_unlike_ones_do_not() {
        let a = tree(&["4 + 6 = 10 (left: 5 10 10)", "Paris is in France", "5 * 10 = 50 (left: 4 6 50)"]);
        let b = tree(&["5 * 10 = 50 (left: 4 6 50)", "4 + 6 = 10 (left: 5 10 11)", "a kangaroo"]);
        let al = align(&a, &b);
        let pairs: Vec<(usize, usize)> = al.pairs.iter().map(|(x, y)| (x.0, y.0)).collect();
        assert_eq!(pairs, vec![(0, 0), (1, 2), (3, 1)]);
        assert_eq!(al.only_a, vec![NodeId(2)]);
        assert_eq!(al.only_b, vec![NodeId(3)]);
    }

    #[test]
    fn children_of_paired_nodes_keep_aligning_below_a_changed_thought() {
        let mut a = tree(&["4 + 6 = 10 (left: 5 10 10)"]);
        let mut b = tree(&["4 + 6 = 10 (left: 5 10 10) "]);
        a.add_child(NodeId(1), "10 + 10 = 20 (left: 5 20)".into(), String::new(), Origin::Model);
        b.add_child(NodeId(1), "10 + 10 = 20 (left: 5 20)".into(), String::new(), Origin::Model);
        let al = align(&a, &b);
        assert_eq!(al.pairs.len(), 3);
        // An empty tree pairs nothing.
        let empty = SearchTree::default();
        let al = align(&empty, &b);
        assert!(al.pairs.is_empty());
        assert_eq!(al.only_b.len(), 3);
    }
}
