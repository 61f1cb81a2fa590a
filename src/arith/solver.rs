//! The reach-a-target solver: is a target reachable from some numbers (each used once, + - * /,
//! exact), and one expression that reaches it.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

use super::reach::{without, Node};
use crate::arith::{compare, normalized, same_value, sort_values, Op, Q};

/// `solvable`/`solve` refuse larger inputs (the search grows factorially); they return `false`/`None`.
pub const MAX_SOLVE_NUMBERS: usize = 6;

/// The solvability memo is cleared when it grows past this many entries.
const MEMO_LIMIT: usize = 500_000;

thread_local! {
    /// Per target: whether each sorted multiset reaches it.
    static MEMO: RefCell<HashMap<Q, HashMap<Vec<Q>, bool>>> = RefCell::new(HashMap::new());
}

/// Every value obtainable from one operation on `a` and `b` (both orders), without overflow.
fn combinations(a: &Q, b: &Q) -> impl Iterator<Item = Q> {
    let (a, b) = (*a, *b);
    [
        Op::Add.apply(a, b),
        Op::Sub.apply(a, b),
        Op::Sub.apply(b, a),
        Op::Mul.apply(a, b),
        Op::Div.apply(a, b),
        Op::Div.apply(b, a),
    ]
    .into_iter()
    .flatten()
}

fn insert_sorted(v: &mut Vec<Q>, q: Q) {
    let pos = v.partition_point(|x| compare(x, &q) == Ordering::Less);
    v.insert(pos, q);
}

fn solvable_sorted(sorted: &[Q], target: &Q, memo: &mut HashMap<Vec<Q>, bool>) -> bool {
    if sorted.len() == 1 {
        return same_value(&sorted[0], target);
    }
    if let Some(&known) = memo.get(sorted) {
        return known;
    }
    let n = sorted.len();
    let mut found = false;
    'outer: for i in 0..n {
        if i > 0 && same_value(&sorted[i], &sorted[i - 1]) {
            continue;
        }
        for j in i + 1..n {
            if j > i + 1 && same_value(&sorted[j], &sorted[j - 1]) {
                continue;
            }
            let rest: Vec<Q> = sorted.iter().enumerate().filter(|&(k, _)| k != i && k != j).map(|(_, q)| *q).collect();
            for r in combinations(&sorted[i], &sorted[j]) {
                let mut next = rest.clone();
                insert_sorted(&mut next, r);
                if solvable_sorted(&next, target, memo) {
                    found = true;
                    break 'outer;
                }
            }
        }
    }
    memo.insert(sorted.to_vec(), found);
    found
}

/// Is `target` reachable from these numbers (each used once, + - * /, exact)? Memoized per
/// thread on the target and the sorted multiset. Empty input or more than `MAX_SOLVE_NUMBERS`
/// numbers: false.
pub fn solvable(numbers: &[Q], target: &Q) -> bool {
    if numbers.is_empty() || numbers.len() > MAX_SOLVE_NUMBERS {
        return false;
    }
    // Normalize (callers may hand in unreduced ratios); values that do not fit are unsolvable.
    let Some(mut key) = numbers.iter().map(normalized).collect::<Option<Vec<Q>>>() else {
        return false;
    };
    let Some(target) = normalized(target) else {
        return false;
    };
    sort_values(&mut key);
    let with_memo = MEMO.try_with(|m| match m.try_borrow_mut() {
        Ok(mut memo) => {
            let memo = memo.entry(target).or_default();
            if memo.len() > MEMO_LIMIT {
                memo.clear();
            }
            Some(solvable_sorted(&key, &target, memo))
        }
        Err(_) => None,
    });
    match with_memo {
        Ok(Some(b)) => b,
        _ => solvable_sorted(&key, &target, &mut HashMap::new()),
    }
}

fn solve_nodes(nodes: &[Node], target: &Q) -> Option<String> {
    if let [only] = nodes {
        return same_value(&only.value, target).then(|| only.expr.clone());
    }
    for i in 0..nodes.len() {
        for j in i + 1..nodes.len() {
            let (x, y) = (&nodes[i], &nodes[j]);
            let (big, small) = if compare(&x.value, &y.value) == Ordering::Less { (y, x) } else { (x, y) };
            let candidates = [
                (x, Op::Add, y),
                (x, Op::Mul, y),
                (big, Op::Sub, small),
                (big, Op::Div, small),
                (small, Op::Div, big),
                (small, Op::Sub, big),
            ];
            for (l, op, r) in candidates {
                let Some(v) = op.apply(l.value, r.value) else {
                    continue;
                };
                let mut next = without(nodes, i, j);
                next.push(Node::combine(l, op, r, v));
                let values: Vec<Q> = next.iter().map(|n| n.value).collect();
                if solvable(&values, target) {
                    if let Some(s) = solve_nodes(&next, target) {
                        return Some(s);
                    }
                }
            }
        }
    }
    None
}

/// One expression reaching `target`, e.g. "(10 - 4) * (13 - 9)" for 24, or None. Every
/// compound sub-expression is parenthesized; the result passes `check_answer` for integer and
/// decimal inputs.
pub fn solve(numbers: &[Q], target: &Q) -> Option<String> {
    if !solvable(numbers, target) {
        return None;
    }
    let nodes: Vec<Node> = numbers.iter().map(Node::leaf).collect();
    solve_nodes(&nodes, target)
}

#[cfg(test)]
mod tests {
    use super::super::reach::check_answer;
    use super::*;

    use crate::arith::testing::{fr, q, qs};

    fn solvable24(numbers: &[Q]) -> bool {
        solvable(numbers, &q(24))
    }

    fn solve24(numbers: &[Q]) -> Option<String> {
        solve(numbers, &q(24))
    }

    fn check24(numbers: &[Q], answer: &str) -> Result<(), String> {
        check_answer(numbers, answer, &q(24))
    }

    #[test]
    fn solvable_known_cases() {
        assert!(solvable24(&qs("1 1 4 6")));
        assert!(!solvable24(&qs("1 1 1 1")));
        assert!(solvable24(&qs("4 9 10 13")));
        assert!(solvable24(&qs("3 3 8 8")));
        assert!(solvable24(&qs("1 5 5 5")));
        assert!(!solvable24(&qs("1 1 2 2")));
        assert!(solvable24(&qs("24")));
        assert!(!solvable24(&qs("23")));
        assert!(solvable24(&qs("4 6")));
        assert!(solvable24(&qs("20 4")));
        assert!(!solvable24(&[]));
        assert!(!solvable24(&qs("1 2 3 4 5 6 7")));
        assert!(!solvable24(&[q(i64::MAX), q(i64::MAX), q(i64::MAX), q(i64::MAX)]));
        // Negative and fractional numbers work too.
        assert!(solvable24(&[q(-4), q(-6)]));
        assert!(solvable24(&[fr(2, 3), q(36)]));
    }

    #[test]
    fn solve_known_cases() {
        let s = solve24(&qs("4 9 10 13")).unwrap();
        assert_eq!(check24(&qs("4 9 10 13"), &s), Ok(()));
        let s = solve24(&qs("3 3 8 8")).unwrap();
        assert_eq!(check24(&qs("3 3 8 8"), &s), Ok(()), "{s}");
        let s = solve24(&qs("1 5 5 5")).unwrap();
        assert_eq!(check24(&qs("1 5 5 5"), &s), Ok(()), "{s}");
        assert_eq!(solve24(&qs("1 1 1 1")), None);
        assert_eq!(solve24(&qs("24")), Some("24".to_string()));
        assert_eq!(solve24(&[q(-4), q(-6)]).as_deref(), Some("(-4) * (-6)"));
        let s = solve24(&[fr(3, 2), q(16)]).unwrap();
        assert_eq!(check24(&[fr(3, 2), q(16)], &s), Ok(()));
    }

    #[test]
    fn other_targets_and_counts() {
        let t = q(952);
        // The classic countdown round: 25 50 75 100 3 6 makes 952.
        let numbers = qs("3 6 25 50 75 100");
        let s = solve(&numbers, &t).expect("952 is reachable");
        assert_eq!(check_answer(&numbers, &s, &t), Ok(()), "{s}");
        assert!(!solvable(&qs("1 1 1 1 1 1"), &t));
        // The memo is kept per target: the same numbers reach 24 but not 25.
        assert!(solvable(&qs("4 6"), &q(24)));
        assert!(!solvable(&qs("4 6"), &q(25)));
        assert!(solvable(&qs("4 6"), &q(10)));
    }
}
