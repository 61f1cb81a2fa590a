//! Answers of the reach-a-target puzzles (Game of 24's 24, countdown's target): the exact
//! checker for a model's final answer, and the answer expression built from the step lines taken.
//!
//! Everything a model writes is untrusted: every function here accepts any string and never panics.

use num_traits::Signed;

use super::steps::{parse_step_line, strip_decorations};
use crate::arith::{
    canonical, eval_expr, format_number, format_numbers, format_operand, neg, same_multiset, same_value, Op, Q,
};

/// Byte offset just after an "answer:" label (case-insensitive, optional space before ':').
fn after_answer_label(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut found = None;
    for (pos, _) in lower.match_indices("answer") {
        let after = &lower[pos + "answer".len()..];
        let spaces = after.len() - after.trim_start().len();
        if after.trim_start().starts_with(':') {
            found = Some(pos + "answer".len() + spaces + 1);
        }
    }
    found
}

/// The line of a (possibly multi-line) reply that holds the answer expression.
fn answer_text(answer: &str) -> String {
    let lines: Vec<String> = answer.lines().map(strip_decorations).filter(|l| !l.is_empty()).collect();
    let labelled = lines.iter().rposition(|l| after_answer_label(l).is_some());
    match labelled {
        Some(i) => {
            let line = &lines[i];
            let body = after_answer_label(line).map_or("", |p| &line[p..]).trim();
            if body.is_empty() {
                lines.get(i + 1).cloned().unwrap_or_default()
            } else {
                body.to_string()
            }
        }
        None => lines.last().cloned().unwrap_or_default(),
    }
}

/// The exact checker. `answer` is "EXPR", "EXPR = 24" or a line "Answer: EXPR = 24" (the label is
/// case-insensitive; in a multi-line reply the last labelled line is used; text after the first
/// '=' is ignored, so prose is tolerated only there). Ok(()) iff the expression uses exactly the
/// input numbers (as a multiset) and equals `target`. Err(reason) otherwise, e.g.
/// "uses 4 4 10 but the puzzle is 4 5 6 10", "equals 22, not 24", "cannot parse ...".
pub fn check_answer(input: &[Q], answer: &str, target: &Q) -> Result<(), String> {
    if answer.len() > 1 << 20 {
        return Err("cannot parse the answer: it is too long".to_string());
    }
    let text =
        answer_text(answer).replace("\\times", "*").replace("\\cdot", "*").replace("\\div", "/").replace('$', "");
    let expr = text.split('=').next().unwrap_or("").trim();
    let expr = expr.trim_end_matches('.').trim();
    if expr.is_empty() {
        return Err("cannot parse the answer: no expression found".to_string());
    }
    let (value, leaves) = eval_expr(expr).map_err(|e| format!("cannot parse \"{expr}\": {e}"))?;
    if !same_multiset(&leaves, input) && !same_multiset(&abs_all(&leaves), &abs_all(input)) {
        return Err(format!(
            "uses {} but the puzzle is {}",
            format_numbers(&canonical(&leaves)),
            format_numbers(input)
        ));
    }
    if !same_value(&value, target) {
        return Err(format!("equals {}, not {}", format_number(&value), format_number(target)));
    }
    Ok(())
}

/// The numbers without their signs.
fn abs_all(v: &[Q]) -> Vec<Q> {
    v.iter().map(|q| if q.is_negative() { neg(q).unwrap_or(*q) } else { *q }).collect()
}

/// A number together with the expression it stands for.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) value: Q,
    pub(crate) expr: String,
    leaf: bool,
}

impl Node {
    pub(crate) fn leaf(q: &Q) -> Node {
        Node { value: *q, expr: format_operand(q), leaf: true }
    }

    fn wrapped(&self) -> String {
        if self.leaf {
            self.expr.clone()
        } else {
            format!("({})", self.expr)
        }
    }

    pub(crate) fn combine(a: &Node, op: Op, b: &Node, value: Q) -> Node {
        Node { value, expr: format!("{} {} {}", a.wrapped(), op.symbol(), b.wrapped()), leaf: false }
    }
}

pub(crate) fn without(nodes: &[Node], i: usize, j: usize) -> Vec<Node> {
    nodes.iter().enumerate().filter(|&(k, _)| k != i && k != j).map(|(_, n)| n.clone()).collect()
}

/// Build the final expression from a puzzle's input and the step lines taken, e.g. input
/// 4 5 6 10 with ["4 * 5 = 20 (left: 6 10 20)", "10 - 6 = 4 (left: 4 20)", "4 + 20 = 24 (left: 24)"]
/// -> "(4 * 5) + (10 - 6)". Every compound sub-expression is parenthesized; for `+` and `*` the
/// operand that was made (or given) first is written first. Each step must parse, use available numbers and be exactly right; a
/// `left:` list, if written, must match. None if the steps don't chain or more than one number
/// remains. (The value is not required to be the target; use `check_answer` on the result.)
pub fn answer_from_steps(input: &[Q], steps: &[&str]) -> Option<String> {
    let mut nodes: Vec<Node> = input.iter().map(Node::leaf).collect();
    // When each node was made: inputs in input order, then one per step.
    let mut born: Vec<usize> = (0..nodes.len()).collect();
    for (birth, line) in (nodes.len()..).zip(steps.iter()) {
        let step = parse_step_line(line).ok()?;
        let ia = nodes.iter().position(|n| same_value(&n.value, &step.a))?;
        let ib = nodes.iter().enumerate().position(|(k, n)| k != ia && same_value(&n.value, &step.b))?;
        let exact = step.op.apply(step.a, step.b)?;
        if !same_value(&exact, &step.result) {
            return None;
        }
        // For + and * the operand made earlier comes first, so the answer reads in step order
        // ("(4 * 5) + (10 - 6)" even if the line says "4 + 20").
        let (first, second) = match step.op {
            Op::Add | Op::Mul if born[ib] < born[ia] => (ib, ia),
            _ => (ia, ib),
        };
        let combined = Node::combine(&nodes[first], step.op, &nodes[second], exact);
        nodes = without(&nodes, ia, ib);
        nodes.push(combined);
        born = born.iter().enumerate().filter(|&(k, _)| k != ia && k != ib).map(|(_, b)| *b).collect();
        born.push(birth);
        if let Some(left) = &step.left {
            let values: Vec<Q> = nodes.iter().map(|n| n.value).collect();
            if !same_multiset(left, &values) {
                return None;
            }
        }
    }
    match nodes.as_slice() {
        [only] => Some(only.expr.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::arith::testing::{q, qs};

    fn check24(numbers: &[Q], answer: &str) -> Result<(), String> {
        check_answer(numbers, answer, &q(24))
    }

    #[test]
    fn the_target_is_a_parameter() {
        assert_eq!(check_answer(&qs("2 3"), "2 * 3", &q(6)), Ok(()));
        assert_eq!(check_answer(&qs("2 3"), "2 + 3", &q(6)), Err("equals 5, not 6".to_string()));
        let n = qs("3 6 25 50 75 100");
        assert_eq!(check_answer(&n, "((100 + 6) * 75 * 3 - 50) / 25 = 952", &q(952)), Ok(()));
        assert_eq!(check_answer(&n, "((100 + 6) * 75 * 3 - 50) / 25", &q(24)), Err("equals 952, not 24".to_string()));
        assert_eq!(
            check_answer(&n, "(100 + 6) * 3 * 3", &q(952)),
            Err("uses 3 3 6 100 but the puzzle is 3 6 25 50 75 100".to_string())
        );
    }

    #[test]
    fn check_answer_accepts() {
        let p = qs("4 5 6 10");
        for a in [
            "(4 * 5) + (10 - 6)",
            "(4 * 5) + (10 - 6) = 24",
            "Answer: (4 * 5) + (10 - 6) = 24",
            "answer: (4*5)+(10-6)=24",
            "ANSWER : (4 * 5) + (10 - 6) = 24",
            "Answer: (4 * 5) + (10 - 6) = 24, which uses every number once.",
            "**Answer: (4 \u{d7} 5) + (10 \u{2212} 6) = 24**",
            "Answer: (4 * 5) + (10 - 6).",
            "4 * 5 + 10 - 6",
            "10 - 6 + 5 * 4 = 24",
            "Steps:\n4 * 5 = 20 (left: 6 10 20)\nAnswer: (4 * 5) + (10 - 6) = 24",
            "Answer:\n(4 * 5) + (10 - 6) = 24",
            "  Answer: $(4 \\times 5) + (10 - 6) = 24$  ",
        ] {
            assert_eq!(check24(&p, a), Ok(()), "{a}");
        }
        assert_eq!(check24(&qs("4 9 10 13"), "(10-4)*(13-9) = 24"), Ok(()));
        assert_eq!(
            check24(&qs("1 1 4 6"), "(1 + 1 + 4) * 4"),
            Err("uses 1 1 4 4 but the puzzle is 1 1 4 6".to_string())
        );
        assert_eq!(check24(&qs("1 1 4 6"), "(1 + 1) * 4 * 6 / 2").map_err(|e| e.starts_with("uses")), Err(true));
        assert_eq!(check24(&qs("1 1 4 6"), "(1 + 1 + 4) * 6 - 6 * 2").map_err(|e| e.starts_with("uses")), Err(true));
        assert_eq!(check24(&qs("1 1 4 6"), "(6 - 1 - 1) * 4 + 8 - 8").map_err(|e| e.starts_with("uses")), Err(true));
        assert_eq!(check24(&qs("1 1 4 6"), "6 * 4 * 1 * 1"), Ok(()));
        assert_eq!(check24(&qs("3 3 8 8"), "8 / (3 - 8 / 3)"), Ok(()));
        // A negative literal still counts as the number it negates.
        assert_eq!(check24(&p, "-6 + 10 + 4 * 5"), Ok(()));
    }

    #[test]
    fn check_answer_rejects() {
        let p = qs("4 5 6 10");
        assert_eq!(check24(&p, "(4 * 4) + (10 - 2)"), Err("uses 2 4 4 10 but the puzzle is 4 5 6 10".to_string()));
        assert_eq!(check24(&p, "Answer: 4 * 4 + 10 = 26"), Err("uses 4 4 10 but the puzzle is 4 5 6 10".to_string()));
        assert_eq!(
            check24(&p, "(4 * 5) + (10 - 6) + 1"),
            Err("uses 1 4 5 6 10 but the puzzle is 4 5 6 10".to_string())
        );
        assert_eq!(check24(&p, "Answer: 4 * 5 + 6 - 10 = 24"), Err("equals 16, not 24".to_string()));
        assert_eq!(check24(&p, "(4 + 6) * 5 / 10 + 20 - 20").map_err(|e| e.starts_with("uses")), Err(true));
        assert_eq!(
            check24(&qs("2 4 6 10"), "2 * 4 + 6 + 10 - 2"),
            Err("uses 2 2 4 6 10 but the puzzle is 2 4 6 10".to_string())
        );
        assert_eq!(check24(&qs("2 4 6 10"), "2 + 4 + 6 + 10"), Err("equals 22, not 24".to_string()));
        assert_eq!(check24(&qs("3 4 7 8"), "4 / 3 * 7 + 8"), Err("equals 52/3, not 24".to_string()));
        assert!(check24(&p, "Answer: (4 * 5) + (10 - 6) which equals 24").unwrap_err().starts_with("cannot parse"));
        assert!(check24(&p, "").unwrap_err().starts_with("cannot parse"));
        assert!(check24(&p, "Answer:").unwrap_err().starts_with("cannot parse"));
        assert!(check24(&p, "= 24").unwrap_err().starts_with("cannot parse"));
        assert!(check24(&p, "Answer: 24").unwrap_err().starts_with("uses 24"));
        assert!(check24(&p, "(4 * 5) + (10 - 6) / 0").unwrap_err().contains("divides by zero"));
    }

    #[test]
    fn answer_from_steps_example() {
        let input = qs("4 5 6 10");
        let steps = ["4 * 5 = 20 (left: 6 10 20)", "10 - 6 = 4 (left: 4 20)", "4 + 20 = 24 (left: 24)"];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(ans, "(4 * 5) + (10 - 6)");
        assert_eq!(check24(&input, &ans), Ok(()));
        // Computed numbers that equal an input number: either choice gives a valid answer.
        let steps = ["10 - 6 = 4 (left: 4 4 5)", "4 * 5 = 20 (left: 4 20)", "4 + 20 = 24 (left: 24)"];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(check24(&input, &ans), Ok(()), "{ans}");
        // Messy but valid lines.
        let steps = [
            "1. **4 \u{d7} 5 = 20** (left: 6, 10, 20)",
            "- 10 \u{2212} 6 = 4 (left: 4 20)",
            "Step 3: 20 + 4 = 24 (left: 24)",
        ];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(ans, "(4 * 5) + (10 - 6)");
        // Steps that don't chain.
        assert_eq!(answer_from_steps(&input, &["4 * 5 = 20 (left: 6 10 20)"]), None);
        assert_eq!(answer_from_steps(&input, &["4 * 4 = 16 (left: 5 6 10 16)"]), None);
        assert_eq!(answer_from_steps(&input, &["4 * 5 = 21 (left: 6 10 21)"]), None);
        assert_eq!(answer_from_steps(&input, &["4 * 5 = 20 (left: 6 10 21)"]), None);
        assert_eq!(answer_from_steps(&input, &["nonsense"]), None);
        assert_eq!(answer_from_steps(&input, &[]), None);
        assert_eq!(answer_from_steps(&qs("24"), &[]), Some("24".to_string()));
        // Fraction intermediate: 8 / (3 - 8/3).
        let input = qs("3 3 8 8");
        let steps = ["8 / 3 = 8/3 (left: 3 8 8/3)", "3 - 8/3 = 1/3 (left: 1/3 8)", "8 / 1/3 = 24 (left: 24)"];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(ans, "8 / (3 - (8 / 3))");
        assert_eq!(check24(&input, &ans), Ok(()));
    }
}
