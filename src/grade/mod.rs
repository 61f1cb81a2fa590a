//! Grading math answers: extract the final answer from a model reply, normalise it
//! and decide whether it is equivalent to the gold answer.
//!
//! The steps, each in its own file: [`extract_answer`] (boxes, "final answer"
//! statements, "the answer is", answers in prose: `extract` and `prose`), [`normalize`]
//! (the MATH benchmark's `strip_string` and more), a small LaTeX parser (`lex`, `parse`,
//! `expr`), and equivalence (`equiv`, `relation`, `eval`): exact big rationals where both
//! sides are rational, evaluation at seeded random points otherwise, labelled values,
//! sets, intervals, tuples, ratios, matrices, relations and lists. Everything is bounded
//! (input length, nesting, number sizes); what cannot be decided is "different", with
//! the reason.
//!
//! A number written with a decimal point is compared with the other side after rounding
//! both to [`GradeOptions::precision`] decimal places (6 by default, as Math-Verify's
//! float rounding), everywhere: alone and inside tuples, intervals, sets, lists, matrices
//! and equations.

mod equiv;
mod eval;
mod expr;
mod extract;
mod lex;
mod normalize;
mod parse;
mod prose;
mod relation;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use serde::Serialize;

pub use extract::{extract_answer, states_answer};
pub use normalize::normalize;

/// The largest [`Precision`]: beyond 15 decimal places 64-bit floats cannot round.
pub const MAX_PRECISION: u32 = 15;

/// A grading option out of its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GradeError {
    #[error("precision {0} is out of range: give 0 to {MAX_PRECISION} decimal places")]
    Precision(u32),
}

/// Decimal places a decimal answer is compared at (0 to [`MAX_PRECISION`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Precision(u32);

impl Precision {
    pub fn new(places: u32) -> Result<Self, GradeError> {
        if places > MAX_PRECISION {
            return Err(GradeError::Precision(places));
        }
        Ok(Self(places))
    }

    pub fn places(self) -> u32 {
        self.0
    }
}

/// How strictly [`grade_with`] compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GradeOptions {
    /// A number written with a decimal point matches when both sides, rounded to this
    /// many decimal places, are equal (`0.333333` is `\frac{1}{3}` at 6; `0.33` needs 2).
    pub precision: Precision,
    /// Variables must match (`f(x)` is not `f(y)`). When false, a prediction whose
    /// variables differ from the gold's (as many of them) has them renamed to the gold's
    /// in sorted order before comparing.
    pub strict: bool,
    /// A relation may equal a set or interval in both directions (`x \in [1,2]` gold vs
    /// `1 \le x \le 2`), and a tuple may equal a set with the same elements (`(1,3)` vs
    /// `\{1,3\}`). A relation gold against an interval prediction is always compared.
    pub set_relation: bool,
}

impl Default for GradeOptions {
    fn default() -> Self {
        Self { precision: Precision(6), strict: true, set_relation: false }
    }
}

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
    equivalent_with(gold, pred, &GradeOptions::default())
}

/// [`equivalent`] with options.
pub fn equivalent_with(gold: &str, pred: &str, options: &GradeOptions) -> bool {
    grade_answers(&answer_of(gold), &answer_of(pred), options).equivalent
}

/// Grade a model reply (its final answer is extracted) against a gold answer (a MATH
/// solution, a reply, or the answer itself; its answer is extracted the same way).
pub fn grade(gold: &str, pred_reply: &str) -> Grade {
    grade_with(gold, pred_reply, &GradeOptions::default())
}

/// [`grade`] with options.
pub fn grade_with(gold: &str, pred_reply: &str, options: &GradeOptions) -> Grade {
    grade_answers(&answer_of(gold), &answer_of(pred_reply), options)
}

/// The answer a text states (an answer as it is stays itself).
fn answer_of(text: &str) -> String {
    extract_answer(text).unwrap_or_default()
}

/// Grade two extracted answers.
fn grade_answers(gold: &str, pred: &str, options: &GradeOptions) -> Grade {
    let side = |s: &str| GradedSide { extracted: s.to_string(), normalized: normalize(s) };
    let (g, p) = (side(gold), side(pred));
    let (equivalent, reason) = decide(gold, pred, &g.normalized, &p.normalized, options);
    Grade { equivalent, gold: g, pred: p, reason }
}

fn decide(gold: &str, pred: &str, gold_norm: &str, pred_norm: &str, options: &GradeOptions) -> (bool, String) {
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
    if normalize::normal_form(gold, false) == normalize::normal_form(pred, false) {
        return (true, "the same normal form".into());
    }
    let (g, p) = match (parse::parse_answer(&gc), parse::parse_answer(&pc)) {
        (Ok(g), Ok(p)) => (g, p),
        (Err(e), _) => return (false, format!("the gold could not be parsed ({e}) and the normal forms differ")),
        (_, Err(e)) => return (false, format!("the prediction could not be parsed ({e}) and the normal forms differ")),
    };
    let p = if options.strict { p } else { renamed_to(&g, p) };
    let ctx = equiv::Ctx { precision: options.precision.places(), set_relation: options.set_relation };
    let verdict = equiv::answers(&g, &p, 0, &ctx);
    if verdict.equal {
        return (true, verdict.reason);
    }
    // A percentage is also its value over 100 (`28\%` is `0.28`) against a plain number.
    for (which, raw, parsed) in [("gold", gold, &g), ("prediction", pred, &p)] {
        let other = if which == "gold" { pred } else { gold };
        let (true, false, parse::Answer::Expr(e)) = (has_percent(raw), has_percent(other), parsed) else { continue };
        let hundredth = parse::Answer::Expr(parse::Expr::Div(
            Box::new(e.clone()),
            Box::new(parse::Expr::Num(num_rational::BigRational::from_integer(100.into()))),
        ));
        let v = if which == "gold" {
            equiv::answers(&hundredth, &p, 0, &ctx)
        } else {
            equiv::answers(&g, &hundredth, 0, &ctx)
        };
        if v.equal {
            return (true, format!("the {which}'s percentage over 100: {}", v.reason));
        }
    }
    // `1,22` is also the decimal 1.22 (a decimal comma) against a single number.
    for (which, text) in [("gold", &gc), ("prediction", &pc)] {
        let Some(dotted) = decimal_comma(text) else { continue };
        let Ok(alt) = parse::parse_answer(&dotted) else { continue };
        let v = if which == "gold" { equiv::answers(&alt, &p, 0, &ctx) } else { equiv::answers(&g, &alt, 0, &ctx) };
        if v.equal {
            return (true, format!("reading the {which}'s {} as {dotted}: {}", text.trim(), v.reason));
        }
    }
    (false, verdict.reason)
}

/// The prediction with its variables renamed to the gold's (sorted order), when they
/// differ and there are as many.
fn renamed_to(gold: &parse::Answer, pred: parse::Answer) -> parse::Answer {
    let (mut gv, mut pv) = (BTreeSet::new(), BTreeSet::new());
    equiv::answer_variables(gold, &mut gv);
    equiv::answer_variables(&pred, &mut pv);
    if gv == pv || gv.len() != pv.len() {
        return pred;
    }
    let map: Vec<(String, String)> = pv.into_iter().zip(gv).collect();
    equiv::rename_answer(&pred, &map)
}

/// `1,22`, `1000,99`, `0,111` as `1.22`, `1000.99`, `0.111`: one comma and no space,
/// at least two digits after it, and not a thousands group (`1,000`, `12,345`).
fn decimal_comma(s: &str) -> Option<String> {
    let t = s.trim();
    let (left, right) = t.split_once(',')?;
    let int = left.strip_prefix('-').unwrap_or(left);
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !digits(right) || right.len() < 2 {
        return None;
    }
    let thousands = right.len() == 3 && int.len() <= 3 && int != "0";
    (!thousands).then(|| format!("{left}.{right}"))
}

/// Whether an answer is written as a percentage (`28\%`, `28 percent`, `28 pct`).
fn has_percent(raw: &str) -> bool {
    let lower = raw.to_ascii_lowercase();
    lower.contains('%')
        || lower.contains("per cent")
        || lower.split(|c: char| !c.is_ascii_alphabetic()).any(|w| matches!(w, "percent" | "percentage" | "pct"))
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
