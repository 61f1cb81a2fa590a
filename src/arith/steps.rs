//! Step lines of the reach-a-target puzzles (Game of 24, countdown): reading and checking
//! "a op b = c (left: ...)" lines as models write them, the numbers a partial output leaves,
//! and the canonical moves from a set of numbers. Nothing here depends on the target.
//!
//! Everything a model writes is untrusted: every function here accepts any string and never panics.

use std::cmp::Ordering;

use crate::arith::expr::{parse_tokens, tokenize, Expr, Tok};
use crate::arith::number::{decimal_len, parse_decimal, strip_sign};
use crate::arith::{
    canonical, compare, format_number, format_numbers, format_operand, neg, parse_number, same_multiset, same_value,
    sort_values, Op, MAX_INPUT_LEN, Q,
};

/// A step line as written, before checking it against the numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    /// Left operand.
    pub a: Q,
    /// The operation.
    pub op: Op,
    /// Right operand.
    pub b: Q,
    /// The result as written after `=` (or `≈`).
    pub result: Q,
    /// The line marks its result as approximate (`≈`, "approx.", "rounded", "~", "...").
    pub approx: bool,
    /// The `left:` list as written, if any.
    pub left: Option<Vec<Q>>,
}

/// The numbers left after partial output `y`, as the Tree-of-Thoughts reference reads them:
/// the text after `left: ` up to `)` on the last line, or `start` (the puzzle's numbers)
/// when `y` is empty.
pub fn numbers_left_text(start: &str, y: &str) -> String {
    let y = y.trim();
    if y.is_empty() {
        return start.trim().to_string();
    }
    let last = y.rsplit('\n').next().unwrap_or("");
    let after = last.rsplit("left: ").next().unwrap_or(last);
    after.split(')').next().unwrap_or(after).to_string()
}

const APPROX_MARKERS: [&str; 7] = ["approx", "\u{2248}", "~", "rounded", "roughly", "\u{2026}", "..."];

/// Remove markdown emphasis/code marks, leading bullets and list numbering.
pub(crate) fn strip_decorations(line: &str) -> String {
    let cleaned = line.replace("**", "").replace('`', "");
    let mut s = cleaned.trim();
    for _ in 0..4 {
        let before = s.len();
        for bullet in ["- ", "* ", "+ ", "\u{2022}", "\u{b7} ", "> ", "\u{2013} ", "\u{2014} "] {
            if let Some(r) = s.strip_prefix(bullet) {
                s = r.trim_start();
            }
        }
        // "1. " / "1) " / "(1) " numbering
        let body = s.strip_prefix('(').unwrap_or(s);
        let digits = body.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && digits <= 3 {
            let after = &body[digits..];
            if let Some(r) = after.strip_prefix(". ").or_else(|| after.strip_prefix(") ")) {
                s = r.trim_start();
            }
        }
        if s.len() == before {
            break;
        }
    }
    s.to_string()
}

/// The text of the `left:` (or `remaining:`) list up to the closing parenthesis, if present.
fn find_left(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for kw in ["left", "remaining"] {
        for (pos, _) in lower.match_indices(kw) {
            let after = &text[pos + kw.len()..];
            if let Some(list) = after.trim_start().strip_prefix(':') {
                if best.is_none_or(|(p, _)| pos < p) {
                    best = Some((pos, cut_at_close(list)));
                }
                break;
            }
        }
    }
    best.map(|(_, s)| s)
}

/// `s` up to the first ')' that closes a parenthesis opened before `s`.
fn cut_at_close(s: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return &s[..i],
            ')' => depth -= 1,
            _ => {}
        }
    }
    s
}

fn parse_left_list(s: &str) -> Result<(Vec<Q>, bool), String> {
    let mut approx = false;
    let mut out = Vec::new();
    let mut inner = s.trim();
    if let Some(r) = inner.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        inner = r;
    }
    for tok in inner.split(|c: char| c.is_whitespace() || c == ',' || c == ';') {
        if tok.is_empty() {
            continue;
        }
        match tok.to_ascii_lowercase().as_str() {
            "and" => continue,
            "approx." | "approx" | "approximately" | "about" | "~" | "\u{2248}" => {
                approx = true;
                continue;
            }
            _ => {}
        }
        let t = tok.trim_start_matches(['~', '\u{2248}']);
        let t2 = t.trim_end_matches(['.', '\u{2026}']);
        if t.len() != tok.len() || t.ends_with("..") || t.ends_with('\u{2026}') {
            approx = true;
        }
        let value = parse_number(t).or_else(|| parse_number(t2));
        match value {
            Some(q) => out.push(q),
            None => return Err(format!("cannot read the `left:` list \"{}\"", s.trim())),
        }
    }
    if out.is_empty() {
        return Err("the `left:` list is empty".to_string());
    }
    Ok((out, approx))
}

/// Read a (possibly parenthesized, signed, decimal or fractional) number at the start of `s`.
fn read_number_prefix(s: &str) -> Option<(Q, &str)> {
    let mut rest = s.trim_start();
    let open = rest.starts_with('(');
    if open {
        rest = rest[1..].trim_start();
    }
    let (negative, r) = strip_sign(rest);
    rest = r;
    let len = decimal_len(rest);
    if len == 0 {
        return None;
    }
    let mut value = parse_decimal(&rest[..len])?;
    rest = &rest[len..];
    // "2/3" or "2 / 3" written as the result.
    if let Some(after) = rest.trim_start().strip_prefix('/') {
        let after = after.trim_start();
        let dlen = decimal_len(after);
        if dlen > 0 {
            value = Op::Div.apply(value, parse_decimal(&after[..dlen])?)?;
            rest = &after[dlen..];
        }
    }
    if negative {
        value = neg(&value)?;
    }
    if open {
        rest = rest.trim_start().strip_prefix(')')?;
    }
    Some((value, rest))
}

/// The result after `=`: skips "approx." etc. Returns (value, marked approximate).
fn read_result(rhs: &str) -> Result<(Q, bool), String> {
    let mut s = rhs.trim_start_matches(|c: char| c == '=' || c == '>' || c.is_whitespace());
    let mut approx = false;
    loop {
        let lower = s.to_ascii_lowercase();
        let word = ["approximately", "approx.", "approx", "about", "around", "roughly", "~", "\u{2248}"]
            .into_iter()
            .find(|w| lower.starts_with(w));
        match word {
            Some(w) => {
                approx = true;
                s = s[w.len()..].trim_start();
            }
            None => break,
        }
    }
    match read_number_prefix(s) {
        Some((q, _)) => Ok((q, approx)),
        None if s.trim().is_empty() => Err("no result after `=`".to_string()),
        None => {
            let len = decimal_len(s.trim_start_matches(['-', '+', '(', '\u{2212}']));
            if len > 0 {
                Err("the result after `=` is too large".to_string())
            } else {
                Err("the result after `=` is not a number".to_string())
            }
        }
    }
}

/// True if the text contains something like "7 / 8" (a number, an operator, a number).
fn has_operation(text: &str) -> bool {
    let Ok(toks) = tokenize(text, false, true) else {
        return false;
    };
    toks.windows(3).any(|w| {
        matches!(w[0], Tok::Num { .. } | Tok::Close)
            && matches!(w[1], Tok::Op(_))
            && matches!(w[2], Tok::Num { .. } | Tok::Open)
    })
}

/// The single operation "a op b" at the end of the text before `=`.
fn operation_from_lhs(lhs: &str) -> Result<(Q, Op, Q), String> {
    let toks = tokenize(lhs, true, true).map_err(|e| format!("cannot read the operation: {e}"))?;
    let start = toks.iter().rposition(|t| matches!(t, Tok::Gap)).map_or(0, |p| p + 1);
    let toks = &toks[start..];
    if toks.is_empty() {
        return Err("no operation found".to_string());
    }
    // "6/9 = 2/3": an unspaced fraction on its own is the division.
    if let [Tok::Num { frac: Some((n, d)), .. }] = toks {
        return Ok((*n, Op::Div, *d));
    }
    // The longest suffix that is a well-formed expression (skips stray "1)" numbering etc.).
    let mut last_err = String::new();
    for k in 0..toks.len() {
        match parse_tokens(&toks[k..]) {
            Ok(Expr::Bin(op, l, r)) => {
                return match (l.leaf_value(), r.leaf_value()) {
                    (Some(a), Some(b)) => Ok((a, op, b)),
                    _ => Err(format!("more than one operation in \"{}\" (a step does exactly one)", lhs.trim())),
                };
            }
            Ok(_) => return Err("no operation found".to_string()),
            Err(e) => {
                if last_err.is_empty() {
                    last_err = e;
                }
            }
        }
    }
    Err(format!("cannot read the operation \"{}\": {last_err}", lhs.trim()))
}

/// Parse one proposal line like `4 + 5 = 9 (left: 6 9 10)`.
///
/// Tolerates bullets/numbering, `**bold**`, unicode `× ÷ −`, 'x' as times, `≈`, "approx.",
/// parenthesized negatives, unspaced fractions ("2/3"), prose before the operation and after the
/// `left:` list. A missing `left:` list is not a parse error (`left` is `None`; `check_step`
/// rejects it). Err(reason) says in plain words what is wrong, e.g. "no operation found",
/// "the operation has no `= result`", "more than one operation in ...", "cannot read the `left:` list ...".
pub fn parse_step_line(line: &str) -> Result<StepLine, String> {
    if line.len() > MAX_INPUT_LEN {
        return Err("the line is too long".to_string());
    }
    let text = strip_decorations(line);
    if text.is_empty() {
        return Err("empty line".to_string());
    }
    let lower = text.to_ascii_lowercase();
    let Some((rel, rel_char)) = text.char_indices().find(|&(_, c)| c == '=' || c == '\u{2248}') else {
        return Err(if has_operation(&text) {
            "the operation has no `= result`".to_string()
        } else {
            "no operation found".to_string()
        });
    };
    let (a, op, b) = operation_from_lhs(&text[..rel])?;
    let rhs = &text[rel + rel_char.len_utf8()..];
    let (result, rhs_approx) = read_result(rhs)?;
    let mut approx = rhs_approx || rel_char == '\u{2248}' || APPROX_MARKERS.iter().any(|m| lower.contains(m));
    let left = match find_left(rhs) {
        None => None,
        Some(list) => {
            let (values, list_approx) = parse_left_list(list)?;
            approx |= list_approx;
            Some(values)
        }
    };
    Ok(StepLine { a, op, b, result, approx, left })
}

fn describe_op(a: &Q, op: Op, b: &Q) -> String {
    format!("{} {} {}", format_operand(a), op.symbol(), format_operand(b))
}

/// Remove one occurrence of `x` from `rest` (what is still unused of `numbers`).
fn take_operand(rest: &mut Vec<Q>, numbers: &[Q], x: &Q) -> Result<(), String> {
    if let Some(i) = rest.iter().position(|q| same_value(q, x)) {
        rest.remove(i);
        return Ok(());
    }
    let have = numbers.iter().filter(|q| same_value(q, x)).count();
    if have == 0 {
        Err(format!("{} is not among the numbers {}", format_number(x), format_numbers(numbers)))
    } else {
        let times = if have == 1 { "once".to_string() } else { format!("{have} times") };
        Err(format!(
            "{} is used twice, but it appears only {times} in the numbers {}",
            format_number(x),
            format_numbers(numbers)
        ))
    }
}

/// Check a step line against the current numbers (a multiset).
///
/// Ok(new numbers left, in the order the line's `left:` list wrote them) or Err(reason), e.g.
/// "10 / 1.5 is 20/3, not 6.67", "3 is not among the numbers 4 5 6 10",
/// "left list 4 4 6 should be 4 5 6 ...", "no `left:` list".
/// Rules: both operands must be among the current numbers (each used once); the written result
/// must be exactly right (an approximate result is an error; an exactly right result marked
/// "approx." is accepted); the `left:` list must be present and equal, as a multiset, the unused
/// numbers plus the result.
pub fn check_step(numbers: &[Q], line: &str) -> Result<Vec<Q>, String> {
    let step = parse_step_line(line)?;
    let mut rest = numbers.to_vec();
    take_operand(&mut rest, numbers, &step.a)?;
    take_operand(&mut rest, numbers, &step.b)?;
    let exact = step.op.apply_or_reason(step.a, step.b)?;
    if !same_value(&exact, &step.result) {
        return Err(format!(
            "{} is {}, not {}",
            describe_op(&step.a, step.op, &step.b),
            format_number(&exact),
            format_number(&step.result)
        ));
    }
    let Some(left) = step.left else {
        return Err("no `left:` list".to_string());
    };
    rest.push(exact);
    if !same_multiset(&left, &rest) {
        return Err(format!("left list {} should be {}", format_numbers(&left), format_numbers(&canonical(&rest))));
    }
    Ok(left)
}

/// One possible step from a set of numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    /// Canonical line, e.g. "4 + 5 = 9 (left: 6 9 10)".
    pub line: String,
    /// Left operand.
    pub a: Q,
    /// The operation.
    pub op: Op,
    /// Right operand.
    pub b: Q,
    /// `a op b`, exact.
    pub result: Q,
    /// The numbers after the move, sorted ascending.
    pub left: Vec<Q>,
}

/// The canonical step line "a op b = r (left: ...)" (operands: negatives/fractions in parentheses).
pub fn format_step(a: &Q, op: Op, b: &Q, result: &Q, left: &[Q]) -> String {
    format!("{} = {} (left: {})", describe_op(a, op, b), format_number(result), format_numbers(left))
}

/// All distinct single moves from these numbers. For each unordered pair of values (equal values
/// count once): `small + big`, `big - small` (the negative order is skipped), `small * big`,
/// `big / small` and `small / big` (once if equal; division by zero skipped; overflowing
/// operations skipped). The `left` list is sorted ascending.
pub fn moves(numbers: &[Q]) -> Vec<Move> {
    let mut out = Vec::new();
    let mut seen: Vec<(Q, Q)> = Vec::new();
    for i in 0..numbers.len() {
        for j in i + 1..numbers.len() {
            let (x, y) = (numbers[i], numbers[j]);
            let (small, big) = if compare(&x, &y) == Ordering::Greater { (y, x) } else { (x, y) };
            if seen.iter().any(|(s, b)| same_value(s, &small) && same_value(b, &big)) {
                continue;
            }
            seen.push((small, big));
            let rest: Vec<Q> = numbers.iter().enumerate().filter(|&(k, _)| k != i && k != j).map(|(_, q)| *q).collect();
            let mut candidates =
                vec![(small, Op::Add, big), (big, Op::Sub, small), (small, Op::Mul, big), (big, Op::Div, small)];
            if !same_value(&small, &big) {
                candidates.push((small, Op::Div, big));
            }
            for (a, op, b) in candidates {
                let Some(result) = op.apply(a, b) else {
                    continue;
                };
                let mut left = rest.clone();
                left.push(result);
                sort_values(&mut left);
                out.push(Move { line: format_step(&a, op, &b, &result, &left), a, op, b, result, left });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::arith::testing::{fr, q, qs};

    #[test]
    fn messy_fraction_result_parses_and_checks() {
        let s = parse_step_line("6 / 9 = 2/3 (left: 2/3 10)").unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(6), Op::Div, q(9), fr(2, 3)));
        assert!(!s.approx);
        assert_eq!(s.left, Some(vec![fr(2, 3), q(10)]));
        assert_eq!(check_step(&qs("6 9 10"), "6 / 9 = 2/3 (left: 2/3 10)"), Ok(vec![fr(2, 3), q(10)]));
    }

    #[test]
    fn messy_parenthesized_negative_operand() {
        let s = parse_step_line("6 + (-1) = 5 (left: 5 10)").unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(6), Op::Add, q(-1), q(5)));
        assert_eq!(check_step(&qs("-1 6 10"), "6 + (-1) = 5 (left: 5 10)"), Ok(vec![q(5), q(10)]));
    }

    #[test]
    fn messy_approx_in_parentheses() {
        let line = "10 / 1.5 = 6.67 (approx.) (left: 6.67)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(10), Op::Div, fr(3, 2), fr(667, 100)));
        assert!(s.approx);
        assert_eq!(s.left, Some(vec![fr(667, 100)]));
        assert_eq!(check_step(&[q(10), fr(3, 2)], line), Err("10 / 1.5 is 20/3, not 6.67".to_string()));
    }

    #[test]
    fn messy_approx_sign() {
        let line = "10 / 1.5 \u{2248} 6.67 (left: 6.67)";
        let s = parse_step_line(line).unwrap();
        assert!(s.approx);
        assert_eq!(s.result, fr(667, 100));
        assert_eq!(check_step(&[q(10), fr(3, 2)], line), Err("10 / 1.5 is 20/3, not 6.67".to_string()));
    }

    #[test]
    fn messy_decimals_allowed_comment() {
        let line = "4 / 3 = 1.33 (left: 1.33 7) (if decimals are allowed)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(4), Op::Div, q(3), fr(133, 100)));
        assert_eq!(s.left, Some(vec![fr(133, 100), q(7)]));
        // Exactness: 4/3 is not 1.33.
        assert_eq!(check_step(&qs("3 4 7"), line), Err("4 / 3 is 4/3, not 1.33".to_string()));
        // The exact version is fine.
        assert_eq!(check_step(&qs("3 4 7"), "4 / 3 = 4/3 (left: 4/3 7)"), Ok(vec![fr(4, 3), q(7)]));
    }

    #[test]
    fn messy_rounded_left_inside_comment() {
        let line = "12 / 7 = 1.71 (rounded, left: 1.71)";
        let s = parse_step_line(line).unwrap();
        assert!(s.approx);
        assert_eq!(s.result, fr(171, 100));
        assert_eq!(s.left, Some(vec![fr(171, 100)]));
        assert_eq!(check_step(&qs("7 12"), line), Err("12 / 7 is 12/7, not 1.71".to_string()));
    }

    #[test]
    fn messy_not_valid_without_left() {
        let line = "17 / 2 = 8.5 (not a whole number, not valid)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(17), Op::Div, q(2), fr(17, 2)));
        assert_eq!(s.left, None);
        assert_eq!(check_step(&qs("2 17"), line), Err("no `left:` list".to_string()));
    }

    #[test]
    fn messy_no_result() {
        assert_eq!(parse_step_line("7 / 8 (not a whole number)"), Err("the operation has no `= result`".to_string()));
    }

    #[test]
    fn messy_approx_word_in_result_and_left() {
        let line = "19 / 7 = approx. 2.71 (left: approx. 2.71)";
        let s = parse_step_line(line).unwrap();
        assert!(s.approx);
        assert_eq!(s.result, fr(271, 100));
        assert_eq!(s.left, Some(vec![fr(271, 100)]));
        assert_eq!(check_step(&qs("7 19"), line), Err("19 / 7 is 19/7, not 2.71".to_string()));
    }

    #[test]
    fn messy_prose_lines() {
        assert_eq!(
            parse_step_line("Since there is only one number given as input, there are no possible next steps ..."),
            Err("no operation found".to_string())
        );
        assert_eq!(
            parse_step_line("1. Round the number to the nearest whole number: round(2.18) = 2"),
            Err("no operation found".to_string())
        );
        assert_eq!(parse_step_line("Possible next steps:"), Err("no operation found".to_string()));
        assert_eq!(parse_step_line(""), Err("empty line".to_string()));
        assert_eq!(parse_step_line("   "), Err("empty line".to_string()));
    }

    #[test]
    fn messy_negative_result() {
        let line = "4 - 5 = -1 (left: -1 6 10)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(4), Op::Sub, q(5), q(-1)));
        assert_eq!(check_step(&qs("4 5 6 10"), line), Ok(vec![q(-1), q(6), q(10)]));
    }

    #[test]
    fn messy_plain_step_and_wrong_left() {
        assert_eq!(check_step(&qs("4 5 6 10"), "10 - 6 = 4 (left: 4 4 5)"), Ok(vec![q(4), q(4), q(5)]));
        assert_eq!(
            check_step(&qs("4 5 6 10"), "10 - 6 = 4 (left: 4 4 6)"),
            Err("left list 4 4 6 should be 4 4 5".to_string())
        );
        assert_eq!(
            check_step(&qs("4 5 6 10"), "10 - 6 = 4 (left: 4 5)"),
            Err("left list 4 5 should be 4 4 5".to_string())
        );
    }

    #[test]
    fn left_order_is_kept() {
        assert_eq!(check_step(&qs("4 5 6 10"), "4 + 5 = 9 (left: 10 9 6)"), Ok(vec![q(10), q(9), q(6)]));
    }

    #[test]
    fn unicode_and_markup_variants() {
        let numbers = qs("4 5 6 10");
        for line in [
            "4 \u{d7} 5 = 20 (left: 6 10 20)",
            "4 x 5 = 20 (left: 6 10 20)",
            "4x5=20 (left: 6 10 20)",
            "4 X 5 = 20 (left: 6 10 20)",
            "4 * 5 = 20 (left: 6 10 20)",
            "- 4 * 5 = 20 (left: 6 10 20)",
            "* 4 * 5 = 20 (left: 6 10 20)",
            "1. 4 * 5 = 20 (left: 6 10 20)",
            "2) 4 * 5 = 20 (left: 6 10 20)",
            "**4 * 5 = 20** (left: 6 10 20)",
            "**4 * 5 = 20 (left: 6 10 20)**",
            "- **4 * 5 = 20 (left: 6 10 20)**   ",
            "`4 * 5 = 20 (left: 6 10 20)`",
            "Step 1: 4 * 5 = 20 (left: 6 10 20)",
            "Multiply 4 and 5: 4 * 5 = 20 (left: 6 10 20)",
            "4 * 5 = 20 (Left: 6, 10, 20)",
            "4 * 5 = 20 (left: 6 10 and 20)",
            "4 * 5 = 20 (left: [6, 10, 20])",
            "4 * 5 = 20 (remaining: 6 10 20)",
            "4 * 5 = 20, left: 6 10 20",
            "4 * 5 = 20 (left: 6 10 20) -- good start",
            "(4 * 5) = 20 (left: 6 10 20)",
        ] {
            assert_eq!(check_step(&numbers, line).map(|v| canonical(&v)), Ok(vec![q(6), q(10), q(20)]), "{line}");
        }
        for line in ["10 \u{2212} 6 = 4 (left: 4 4 5)", "10 \u{2013} 6 = 4 (left: 4 4 5)", "10-6=4 (left: 4 4 5)"] {
            assert_eq!(check_step(&numbers, line), Ok(vec![q(4), q(4), q(5)]), "{line}");
        }
        assert_eq!(check_step(&numbers, "10 \u{f7} 5 = 2 (left: 2 4 6)"), Ok(vec![q(2), q(4), q(6)]));
        assert_eq!(check_step(&qs("-1 6"), "6 \u{2212} (\u{2212}1) = 7 (left: 7)"), Ok(vec![q(7)]));
    }

    #[test]
    fn fraction_operands() {
        let numbers = vec![fr(10, 3), q(2), q(9)];
        assert_eq!(check_step(&numbers, "10/3 - 2 = 4/3 (left: 4/3 9)"), Ok(vec![fr(4, 3), q(9)]));
        assert_eq!(check_step(&numbers, "9 * 10/3 = 30 (left: 2 30)"), Ok(vec![q(2), q(30)]));
        assert_eq!(check_step(&numbers, "10/3 / 2 = 5/3 (left: 5/3 9)"), Ok(vec![fr(5, 3), q(9)]));
        // Spaced fraction as the result.
        let s = parse_step_line("6 / 9 = 2 / 3 (left: 2/3 10)").unwrap();
        assert_eq!(s.result, fr(2, 3));
        // Unspaced division on the left side.
        let s = parse_step_line("6/9 = 2/3 (left: 2/3 10)").unwrap();
        assert_eq!((s.a, s.op, s.b), (q(6), Op::Div, q(9)));
    }

    #[test]
    fn step_parse_errors() {
        assert_eq!(
            parse_step_line("2 * 3 + 4 = 10 (left: 10)"),
            Err("more than one operation in \"2 * 3 + 4\" (a step does exactly one)".to_string())
        );
        assert!(parse_step_line("Answer: (4 * 5) + (10 - 6) = 24").unwrap_err().starts_with("more than one operation"));
        assert_eq!(parse_step_line("4 + 5 = (left: 9)"), Err("the result after `=` is not a number".to_string()));
        assert_eq!(parse_step_line("4 + 5 ="), Err("no result after `=`".to_string()));
        assert_eq!(parse_step_line("= 9 (left: 9)"), Err("no operation found".to_string()));
        assert_eq!(parse_step_line("4 = 4 (left: 4)"), Err("no operation found".to_string()));
        assert_eq!(
            parse_step_line("4 + 5 = 9 (left: six nine)"),
            Err("cannot read the `left:` list \"six nine\"".to_string())
        );
        assert_eq!(parse_step_line("4 + 5 = 9 (left: )"), Err("the `left:` list is empty".to_string()));
        assert!(parse_step_line("4 + 5 = 99999999999999999999 (left: 9)").is_err());
        assert!(parse_step_line("99999999999999999999 + 5 = 9 (left: 9)").is_err());
        assert!(parse_step_line("4 / 0 = 9 (left: 9)").is_ok());
        assert!(parse_step_line("4/0 = 9 (left: 9)").is_err());
        assert!(parse_step_line(&"1".repeat(10_000)).is_err());
    }

    #[test]
    fn check_step_operand_rules() {
        let numbers = qs("4 5 6 10");
        assert_eq!(
            check_step(&numbers, "3 + 5 = 8 (left: 4 6 8 10)"),
            Err("3 is not among the numbers 4 5 6 10".to_string())
        );
        // A number used twice.
        assert_eq!(
            check_step(&numbers, "5 + 5 = 10 (left: 4 6 10 10)"),
            Err("5 is used twice, but it appears only once in the numbers 4 5 6 10".to_string())
        );
        // ... which is fine when it really is there twice.
        assert_eq!(check_step(&qs("4 4 5"), "4 * 4 = 16 (left: 5 16)"), Ok(vec![q(5), q(16)]));
        assert_eq!(
            check_step(&numbers, "10 / 0 = 0 (left: 0)"),
            Err("0 is not among the numbers 4 5 6 10".to_string())
        );
        assert_eq!(check_step(&qs("0 10"), "10 / 0 = 0 (left: 0)"), Err("10 / 0 divides by zero".to_string()));
        assert_eq!(check_step(&numbers, "4 + 5 = 10 (left: 6 10 10)"), Err("4 + 5 is 9, not 10".to_string()));
        // An "approx." marker on an exactly right result is harmless.
        assert_eq!(check_step(&numbers, "10 / 4 \u{2248} 2.5 (left: 2.5 5 6)"), Ok(vec![fr(5, 2), q(5), q(6)]));
        let big = vec![q(i64::MAX), q(2)];
        assert!(check_step(&big, "9223372036854775807 * 2 = 1 (left: 1)").unwrap_err().contains("overflows"));
        assert_eq!(check_step(&[q(24)], "24 + 0 = 24 (left: 24)"), Err("0 is not among the numbers 24".to_string()));
    }

    #[test]
    fn moves_for_4_5_6_10() {
        let ms = moves(&qs("4 5 6 10"));
        // 6 pairs x (+, -, *, /, /) = 30.
        assert_eq!(ms.len(), 30);
        let lines: Vec<&str> = ms.iter().map(|m| m.line.as_str()).collect();
        assert!(lines.contains(&"4 + 5 = 9 (left: 6 9 10)"));
        assert!(lines.contains(&"5 - 4 = 1 (left: 1 6 10)"));
        assert!(lines.contains(&"4 * 5 = 20 (left: 6 10 20)"));
        assert!(lines.contains(&"5 / 4 = 1.25 (left: 1.25 6 10)"));
        assert!(lines.contains(&"4 / 5 = 0.8 (left: 0.8 6 10)"));
        assert!(lines.contains(&"10 / 6 = 5/3 (left: 5/3 4 5)"));
        assert!(!lines.iter().any(|l| l.contains("= -")));
        for m in &ms {
            assert_eq!(check_step(&qs("4 5 6 10"), &m.line), Ok(m.left.clone()), "{}", m.line);
            assert_eq!(m.left, canonical(&m.left));
            assert_eq!(m.op.apply(m.a, m.b), Some(m.result));
        }
    }

    #[test]
    fn moves_edge_cases() {
        // Equal values: one pair, one division, subtraction giving 0.
        let ms = moves(&qs("4 4"));
        let lines: Vec<&str> = ms.iter().map(|m| m.line.as_str()).collect();
        assert_eq!(
            lines,
            vec!["4 + 4 = 8 (left: 8)", "4 - 4 = 0 (left: 0)", "4 * 4 = 16 (left: 16)", "4 / 4 = 1 (left: 1)"]
        );
        // Duplicate pairs are listed once: 4 4 5 has pairs {4,4} and {4,5}.
        assert_eq!(moves(&qs("4 4 5")).len(), 4 + 5);
        // Division by zero is skipped.
        let ms = moves(&qs("0 3"));
        assert!(ms.iter().all(|m| !m.line.starts_with("3 / 0")));
        assert_eq!(ms.len(), 4);
        // Fractions and negatives are written so that they parse back.
        for nums in [vec![fr(10, 3), q(2), q(-1)], vec![fr(-2, 3), fr(1, 7)]] {
            for m in moves(&nums) {
                assert_eq!(check_step(&nums, &m.line), Ok(m.left.clone()), "{}", m.line);
            }
        }
        assert!(moves(&qs("5")).is_empty());
        assert!(moves(&[]).is_empty());
        assert!(moves(&[q(i64::MAX), q(i64::MAX)]).len() < 5);
        assert_eq!(
            moves(&qs("10 3")).iter().find(|m| m.op == Op::Div && m.a == q(10)).map(|m| m.line.clone()),
            Some("10 / 3 = 10/3 (left: 10/3)".to_string())
        );
    }
}
