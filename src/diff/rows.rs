//! Two trees side by side, aligned by thought: one row per node of either tree, in
//! pre-order, a node and its counterpart on the same row, each row marked the same,
//! changed (thought, score or status, saying which), only in A or only in B.

use std::collections::HashMap;

use super::Differs;
use crate::engine::{NodeId, SearchTree};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Same,
    /// Paired, with a different thought, score or status.
    Changed,
    OnlyA,
    OnlyB,
}

impl Mark {
    /// The sign drawn between the two sides.
    pub fn sign(self) -> &'static str {
        match self {
            Mark::Same => "=",
            Mark::Changed => "≠",
            Mark::OnlyA => "‹",
            Mark::OnlyB => "›",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub depth: usize,
    pub a: Option<NodeId>,
    pub b: Option<NodeId>,
    pub mark: Mark,
    /// What differs between a paired node and its counterpart.
    pub differs: Differs,
}

/// The rows of the two trees, in pre-order (A's children first, then B's own).
pub fn rows(a: &SearchTree, b: &SearchTree) -> Vec<Row> {
    let (pairs, _, _) = super::align(a, b);
    let to_b: HashMap<NodeId, NodeId> = pairs.iter().copied().collect();
    let paired_b: std::collections::HashSet<NodeId> = pairs.iter().map(|(_, y)| *y).collect();
    let mut out = Vec::new();
    let root = (Some(a.root()).filter(|_| !a.is_empty()), to_b.get(&a.root()).copied(), 0usize);
    let mut stack = vec![root];
    while let Some((x, y, depth)) = stack.pop() {
        let differs = match (x, y) {
            (Some(x), Some(y)) => Differs::of(a, x, b, y),
            _ => Differs::default(),
        };
        let mark = match (x, y) {
            (Some(_), Some(_)) if differs.any() => Mark::Changed,
            (Some(_), Some(_)) => Mark::Same,
            (Some(_), None) => Mark::OnlyA,
            (None, Some(_)) => Mark::OnlyB,
            (None, None) => continue,
        };
        out.push(Row { depth, a: x, b: y, mark, differs });
        let mut children: Vec<(Option<NodeId>, Option<NodeId>, usize)> = Vec::new();
        if let Some(x) = x {
            for &c in &a.node(x).children {
                children.push((Some(c), to_b.get(&c).copied(), depth + 1));
            }
        }
        if let Some(y) = y {
            for &c in &b.node(y).children {
                if !paired_b.contains(&c) {
                    children.push((None, Some(c), depth + 1));
                }
            }
        }
        stack.extend(children.into_iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Origin;

    #[test]
    fn rows_pair_thoughts_and_mark_the_rest() {
        let mut a = SearchTree::new("x");
        let a1 = a.add_child(a.root(), "one".into(), String::new(), Origin::Model);
        a.add_child(a.root(), "two".into(), String::new(), Origin::Model);
        a.add_child(a1, "deep".into(), String::new(), Origin::Model);
        let mut b = SearchTree::new("x");
        let b1 = b.add_child(b.root(), "one".into(), String::new(), Origin::Model);
        b.add_child(b.root(), "three".into(), String::new(), Origin::Model);
        b.node_mut(b1).score = Some(Box::new(crate::engine::Score { value: 2.0, ..Default::default() }));
        let rows = rows(&a, &b);
        let marks: Vec<(Mark, usize)> = rows.iter().map(|r| (r.mark, r.depth)).collect();
        assert_eq!(
            marks,
            vec![(Mark::Same, 0), (Mark::Changed, 1), (Mark::OnlyA, 2), (Mark::OnlyA, 1), (Mark::OnlyB, 1)]
        );
        assert_eq!(rows[1].b, Some(b1));
        assert_eq!(rows[1].differs, Differs { score: true, ..Differs::default() });
    }

    #[test]
    fn an_edited_thought_is_a_changed_row_and_its_subtree_still_pairs() {
        let mut a = SearchTree::new("x");
        let a1 = a.add_child(a.root(), "4 * 5 = 20 (left: 6 10 20)".into(), String::new(), Origin::Model);
        a.add_child(a1, "20 - 6 = 14 (left: 10 14)".into(), String::new(), Origin::Model);
        let mut b = SearchTree::new("x");
        let b1 = b.add_child(b.root(), "5 * 4 = 20 (left: 6 10 20)".into(), String::new(), Origin::Model);
        b.add_child(b1, "20 - 6 = 14 (left: 10 14)".into(), String::new(), Origin::Model);
        let rows = rows(&a, &b);
        let marks: Vec<Mark> = rows.iter().map(|r| r.mark).collect();
        assert_eq!(marks, vec![Mark::Same, Mark::Changed, Mark::Same]);
        assert_eq!(rows[1].differs.words(), "thought");
        assert_eq!((rows[2].a, rows[2].b), (Some(NodeId(2)), Some(NodeId(2))));
    }
}
