//! Game of 24 solver: is 24 reachable from some numbers, and one expression that reaches it.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

use super::answer::{without, Node};
use super::target;
use crate::arith::{compare, normalized, same_value, sort_values, Op, Q};

/// `solvable`/`solve` refuse larger inputs (the search grows factorially); they return `false`/`None`.
pub const MAX_SOLVE_NUMBERS: usize = 6;

/// The solvability memo is cleared when it grows past this many entries.
const MEMO_LIMIT: usize = 500_000;

thread_local! {
    static MEMO: RefCell<HashMap<Vec<Q>, bool>> = RefCell::new(HashMap::new());
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

fn solvable_sorted(sorted: &[Q], memo: &mut HashMap<Vec<Q>, bool>) -> bool {
    if sorted.len() == 1 {
        return same_value(&sorted[0], &target());
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
                if solvable_sorted(&next, memo) {
                    found = true;
                    break 'outer;
                }
            }
        }
    }
    memo.insert(sorted.to_vec(), found);
    found
}

/// Is 24 reachable from these numbers (each used once, + - * /, exact)? Memoized per thread on the
/// sorted multiset. Empty input or more than `MAX_SOLVE_NUMBERS` numbers: false.
pub fn solvable(numbers: &[Q]) -> bool {
    if numbers.is_empty() || numbers.len() > MAX_SOLVE_NUMBERS {
        return false;
    }
    // Normalize (callers may hand in unreduced ratios); values that do not fit are unsolvable.
    let Some(mut key) = numbers.iter().map(normalized).collect::<Option<Vec<Q>>>() else {
        return false;
    };
    sort_values(&mut key);
    let with_memo = MEMO.try_with(|m| match m.try_borrow_mut() {
        Ok(mut memo) => {
            if memo.len() > MEMO_LIMIT {
                memo.clear();
            }
            Some(solvable_sorted(&key, &mut memo))
        }
        Err(_) => None,
    });
    match with_memo {
        Ok(Some(b)) => b,
        _ => solvable_sorted(&key, &mut HashMap::new()),
    }
}

fn solve_nodes(nodes: &[Node]) -> Option<String> {
    if let [only] = nodes {
        return same_value(&only.value, &target()).then(|| only.expr.clone());
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
                if solvable(&values) {
                    if let Some(s) = solve_nodes(&next) {
                        return Some(s);
                    }
                }
            }
        }
    }
    None
}

/// One expression reaching 24, e.g. "(10 - 4) * (13 - 9)", or None. Every compound
/// sub-expression is parenthesized; the result passes `check_answer` for integer and decimal
/// inputs.
pub fn solve(numbers: &[Q]) -> Option<String> {
    if !solvable(numbers) {
        return None;
    }
    let nodes: Vec<Node> = numbers.iter().map(Node::leaf).collect();
    solve_nodes(&nodes)
}

#[cfg(test)]
mod tests {
    use super::super::answer::check_answer;
    use super::super::puzzles::puzzles;
    use super::*;

    use crate::arith::testing::{fr, q, qs};

    #[test]
    fn solvable_known_cases() {
        assert!(solvable(&qs("1 1 4 6")));
        assert!(!solvable(&qs("1 1 1 1")));
        assert!(solvable(&qs("4 9 10 13")));
        assert!(solvable(&qs("3 3 8 8")));
        assert!(solvable(&qs("1 5 5 5")));
        assert!(!solvable(&qs("1 1 2 2")));
        assert!(solvable(&qs("24")));
        assert!(!solvable(&qs("23")));
        assert!(solvable(&qs("4 6")));
        assert!(solvable(&qs("20 4")));
        assert!(!solvable(&[]));
        assert!(!solvable(&qs("1 2 3 4 5 6 7")));
        assert!(!solvable(&[q(i64::MAX), q(i64::MAX), q(i64::MAX), q(i64::MAX)]));
        // Negative and fractional numbers work too.
        assert!(solvable(&[q(-4), q(-6)]));
        assert!(solvable(&[fr(2, 3), q(36)]));
    }

    #[test]
    fn solve_known_cases() {
        let s = solve(&qs("4 9 10 13")).unwrap();
        assert_eq!(check_answer(&qs("4 9 10 13"), &s), Ok(()));
        let s = solve(&qs("3 3 8 8")).unwrap();
        assert_eq!(check_answer(&qs("3 3 8 8"), &s), Ok(()), "{s}");
        let s = solve(&qs("1 5 5 5")).unwrap();
        assert_eq!(check_answer(&qs("1 5 5 5"), &s), Ok(()), "{s}");
        assert_eq!(solve(&qs("1 1 1 1")), None);
        assert_eq!(solve(&qs("24")), Some("24".to_string()));
        assert_eq!(solve(&[q(-4), q(-6)]).as_deref(), Some("(-4) * (-6)"));
        let s = solve(&[fr(3, 2), q(16)]).unwrap();
        assert_eq!(check_answer(&[fr(3, 2), q(16)], &s), Ok(()));
    }

    #[test]
    fn all_puzzles_solvable_and_solutions_check() {
        let all = puzzles().unwrap();
        let mut solved = 0;
        for (rank, nums) in &all {
            if solvable(nums) {
                let s = solve(nums).unwrap_or_else(|| panic!("rank {rank}: no solution"));
                assert_eq!(check_answer(nums, &s), Ok(()), "rank {rank}: {s}");
                assert_eq!(check_answer(nums, &format!("Answer: {s} = 24")), Ok(()));
                solved += 1;
            }
        }
        assert_eq!(solved, 1362);
    }
}
