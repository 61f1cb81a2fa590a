//! Grading math answers: extract the final answer from a model reply, normalise it
//! and decide whether it is equivalent to the gold answer.
//!
//! The steps, each in its own file: [`extract_answer`] (the last `\boxed{}`, "the
//! answer is", "Answer:", the last line), [`normalize`] (the MATH benchmark's
//! `strip_string` and more), a small LaTeX parser (`parse`), and equivalence
//! (`equiv`): exact big rationals where both sides are rational, evaluation at seeded
//! random points otherwise, sets, intervals, tuples, matrices, relations and lists.
//! Everything is bounded (input length, nesting, number sizes); what cannot be decided
//! is "different", with the reason.
//!
//! A decimal prediction against a fraction gold (`0.33` for `\frac{1}{3}`) counts when
//! the gold is a non-integer rational, the decimal has at least two significant digits,
//! and the gold rounded (half away from zero) to the decimal's places is that decimal.

mod equiv;
mod eval;
mod extract;
mod normalize;
mod parse;
#[cfg(test)]
mod tests;

use num_rational::BigRational;
use serde::Serialize;

pub use extract::extract_answer;
pub use normalize::normalize;

/// One side of a grading: the answer as extracted and in normal form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GradedSide {
    pub extracted: String,
    pub normalized: String,
}

/// The verdict of [`grade`], with the forms compared and the rule that decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grade {
    pub equivalent: bool,
    pub gold: GradedSide,
    pub pred: GradedSide,
    pub reason: String,
}

/// Whether `pred` (an answer, already extracted) is equivalent to `gold`.
pub fn equivalent(gold: &str, pred: &str) -> bool {
    grade_answers(&gold_answer(gold), &as_answer(pred)).equivalent
}

/// Grade a model reply (its final answer is extracted) against a gold answer (a MATH
/// solution with a `\boxed{}`, or the answer itself).
pub fn grade(gold: &str, pred_reply: &str) -> Grade {
    let pred = extract_answer(pred_reply).unwrap_or_default();
    grade_answers(&gold_answer(gold), &pred)
}

/// The gold answer: the boxed one of a solution, else the text with its delimiters off.
fn gold_answer(gold: &str) -> String {
    if extract::has_box(gold) {
        extract_answer(gold).unwrap_or_default()
    } else {
        extract::strip_delimiters(gold)
    }
}

/// An already extracted answer, with a stray `\boxed{}` or `$...$` removed.
fn as_answer(pred: &str) -> String {
    if extract::has_box(pred) {
        extract_answer(pred).unwrap_or_default()
    } else {
        extract::strip_delimiters(pred)
    }
}

/// Grade two extracted answers.
fn grade_answers(gold: &str, pred: &str) -> Grade {
    let side = |s: &str| GradedSide { extracted: s.to_string(), normalized: normalize(s) };
    let (g, p) = (side(gold), side(pred));
    let (equivalent, reason) = decide(gold, pred, &g.normalized, &p.normalized);
    Grade { equivalent, gold: g, pred: p, reason }
}

fn decide(gold: &str, pred: &str, gold_norm: &str, pred_norm: &str) -> (bool, String) {
    if gold.trim().is_empty() {
        return (false, "the gold answer is empty".into());
    }
    if pred.trim().is_empty() {
        return (false, "no answer in the prediction".into());
    }
    if gold.len() > normalize::MAX_NORMALIZED || pred.len() > normalize::MAX_NORMALIZED {
        let same = gold_norm == pred_norm;
        return (same, format!("an answer longer than {} bytes is compared as text only", normalize::MAX_NORMALIZED));
    }
    let (gc, pc) = (normalize::clean(gold), normalize::clean(pred));
    if let Some(letter) = choice_letter(&gc) {
        return match leading_choice(&pc) {
            Some(p) if p == letter => (true, format!("the same choice ({letter})")),
            Some(p) => (false, format!("choice ({p}) vs ({letter})")),
            None => (false, format!("the gold is choice ({letter}); the prediction names none")),
        };
    }
    if is_text(&gc) || is_text(&pc) {
        let key = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
        return if key(&gc) == key(&pc) { (true, "the same text".into()) } else { (false, "different text".into()) };
    }
    if gold_norm == pred_norm {
        return (true, "the same normal form".into());
    }
    let parsed_g = parse::parse_answer(&gc);
    let parsed_p = parse::parse_answer(&pc);
    let (g, p) = match (parsed_g, parsed_p) {
        (Ok(g), Ok(p)) => (g, p),
        (Err(e), _) => return (false, format!("the gold could not be parsed ({e}) and the normal forms differ")),
        (_, Err(e)) => return (false, format!("the prediction could not be parsed ({e}) and the normal forms differ")),
    };
    let verdict = equiv::answers(&g, &p, 0);
    if verdict.equal {
        return (true, verdict.reason);
    }
    // A gold written as a decimal is exact as written: no rounding of it counts.
    if let (None, Some(reason)) = (decimal_literal(&gc), decimal_rounding(&g, &pc)) {
        return (true, reason);
    }
    (false, verdict.reason)
}

/// `(B)`, `B`, `\text{(B)}` (already unwrapped): a multiple-choice letter A to J.
fn choice_letter(s: &str) -> Option<char> {
    let t = s.trim();
    let t = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')).unwrap_or(t).trim();
    let mut chars = t.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'A'..='J'), None) => Some(c),
        _ => None,
    }
}

/// The letter a prediction starts with: `B`, `(B)`, `(B) 42`, `B.`.
fn leading_choice(s: &str) -> Option<char> {
    let t = s.trim();
    let t = t.strip_prefix('(').unwrap_or(t);
    let mut chars = t.chars();
    let c = chars.next().filter(|c| ('A'..='J').contains(c))?;
    match chars.next() {
        None | Some(')' | '.' | ':' | ' ') => Some(c),
        _ => None,
    }
}

/// A word answer (`east`, `Evelyn`, `no`): letters in a run of two or more, outside
/// any command, and no digits or maths syntax.
fn is_text(s: &str) -> bool {
    if s.contains(|c: char| c.is_ascii_digit() || "\\^_{}=<>+*/|".contains(c)) {
        return false;
    }
    s.split(|c: char| !c.is_alphabetic()).any(|w| w.chars().count() >= 2)
}

/// A plain decimal literal: its value, places and significant digits.
fn decimal_literal(s: &str) -> Option<(BigRational, usize, usize)> {
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b.trim_start()),
        None => (false, t),
    };
    let (int, frac) = body.split_once('.')?;
    if frac.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value = parse::parse_decimal(body)?;
    let significant = format!("{int}{frac}").trim_start_matches('0').len();
    Some((if neg { -value } else { value }, frac.len(), significant))
}

/// The rounding rule (module docs): `Some(reason)` when the prediction is the gold
/// rounded to the prediction's own places.
fn decimal_rounding(gold: &parse::Answer, pred_clean: &str) -> Option<String> {
    let (value, places, significant) = decimal_literal(pred_clean)?;
    let exact = equiv::rational_value(gold)?;
    if exact.is_integer() || significant < 2 {
        return None;
    }
    (equiv::round_to(&exact, places) == value).then(|| format!("the gold rounded to {places} decimal places"))
}
