//! Equivalence of parsed answers: exact numbers, expressions at random points, sets,
//! intervals and tuples (by their brackets), matrices, relations and lists in any order.

use std::collections::BTreeSet;

use num_rational::BigRational;
use num_traits::Zero;

use super::eval::{close, eval, exact, has_inf, points, variables, TooLarge};
use super::parse::{Answer, Expr, RelOp};

/// Random points tried per comparison, and how many must be defined on both sides.
const POINTS: usize = 12;
const MIN_VALID: usize = 5;
/// At most this many variables, elements in a list, and `\pm` per expression.
const MAX_VARS: usize = 8;
const MAX_ITEMS: usize = 64;
const MAX_PM: usize = 4;

/// A decision and the rule that made it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub equal: bool,
    pub reason: String,
}

fn yes(reason: impl Into<String>) -> Verdict {
    Verdict { equal: true, reason: reason.into() }
}

fn no(reason: impl Into<String>) -> Verdict {
    Verdict { equal: false, reason: reason.into() }
}

fn kind(a: &Answer) -> &'static str {
    match a {
        Answer::Expr(_) => "an expression",
        Answer::Rel(_, ops) if ops == &[RelOp::Eq] => "an equation",
        Answer::Rel(..) => "a relation",
        Answer::Bracketed { .. } => "a tuple or interval",
        Answer::Set(_) => "a set",
        Answer::Union(_) => "a union",
        Answer::Matrix(_) => "a matrix",
        Answer::List(_) => "a list of answers",
    }
}

fn count_pm(e: &Expr) -> usize {
    match e {
        Expr::Pm(a, b) => 1 + count_pm(a) + count_pm(b),
        Expr::Num(_) | Expr::Var(_) | Expr::Const(_) | Expr::Inf => 0,
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().map(count_pm).sum(),
        Expr::Neg(a) | Expr::Abs(a) | Expr::Root(_, a) | Expr::Func(_, a) | Expr::Fact(a) => count_pm(a),
        Expr::Div(a, b) | Expr::Pow(a, b) => count_pm(a) + count_pm(b),
    }
}

/// `e` with the k-th `\pm` (in traversal order) read as `+` when bit k of `mask` is 0.
fn choose(e: &Expr, mask: u32, k: &mut u32) -> Expr {
    let b = |x: &Expr, k: &mut u32| Box::new(choose(x, mask, k));
    match e {
        Expr::Pm(a, c) => {
            let bit = (mask >> *k) & 1;
            *k += 1;
            let a = choose(a, mask, k);
            let c = choose(c, mask, k);
            let c = if bit == 0 { c } else { Expr::Neg(Box::new(c)) };
            Expr::Add(vec![a, c])
        }
        Expr::Num(_) | Expr::Var(_) | Expr::Const(_) | Expr::Inf => e.clone(),
        Expr::Add(xs) => Expr::Add(xs.iter().map(|x| choose(x, mask, k)).collect()),
        Expr::Mul(xs) => Expr::Mul(xs.iter().map(|x| choose(x, mask, k)).collect()),
        Expr::Neg(a) => Expr::Neg(b(a, k)),
        Expr::Abs(a) => Expr::Abs(b(a, k)),
        Expr::Root(n, a) => Expr::Root(*n, b(a, k)),
        Expr::Func(f, a) => Expr::Func(*f, b(a, k)),
        Expr::Fact(a) => Expr::Fact(b(a, k)),
        Expr::Div(x, y) => {
            let x = b(x, k);
            Expr::Div(x, b(y, k))
        }
        Expr::Pow(x, y) => {
            let x = b(x, k);
            Expr::Pow(x, b(y, k))
        }
    }
}

/// The answers an item stands for: `1 \pm \sqrt{2}` is two, `x = 1 \pm 2` two equations.
fn expand(a: &Answer) -> Result<Vec<Answer>, String> {
    let variants = |e: &Expr| -> Result<Vec<Expr>, String> {
        let n = count_pm(e);
        if n > MAX_PM {
            return Err(format!("more than {MAX_PM} \\pm in one answer"));
        }
        Ok((0..1u32 << n).map(|mask| choose(e, mask, &mut 0)).collect())
    };
    Ok(match a {
        Answer::Expr(e) => variants(e)?.into_iter().map(Answer::Expr).collect(),
        Answer::Rel(sides, ops) if sides.len() == 2 && ops == &[RelOp::Eq] && count_pm(&sides[0]) == 0 => {
            variants(&sides[1])?.into_iter().map(|r| Answer::Rel(vec![sides[0].clone(), r], ops.clone())).collect()
        }
        Answer::List(xs) => {
            let mut out = Vec::new();
            for x in xs {
                out.extend(expand(x)?);
            }
            out
        }
        other => vec![other.clone()],
    })
}

/// The answers a list-like answer holds (a list, a set, or one item), `\pm` expanded.
fn items(a: &Answer) -> Result<Vec<Answer>, String> {
    let out = match a {
        Answer::Set(xs) => {
            let mut out = Vec::new();
            for x in xs {
                out.extend(expand(x)?);
            }
            out
        }
        other => expand(other)?,
    };
    if out.len() > MAX_ITEMS {
        return Err(format!("more than {MAX_ITEMS} answers"));
    }
    Ok(out)
}

/// Every element of `a` equals some element of `b` and the other way round (duplicates
/// count once).
fn same_elements(a: &[Answer], b: &[Answer], depth: usize) -> Verdict {
    for (xs, ys, which) in [(a, b, "gold"), (b, a, "prediction")] {
        for x in xs {
            let mut found = false;
            for y in ys {
                let v = answers(x, y, depth + 1);
                if v.equal {
                    found = true;
                    break;
                }
                if v.reason.starts_with("too large") {
                    return v;
                }
            }
            if !found {
                return no(format!("an element of the {which} has no equal on the other side"));
            }
        }
    }
    yes("the same elements")
}

/// A one-to-one matching of `a` and `b` (lists: same count, any order).
fn same_multiset(a: &[Answer], b: &[Answer], depth: usize) -> Verdict {
    if a.len() != b.len() {
        return no(format!("{} answers vs {}", a.len(), b.len()));
    }
    let mut used = vec![false; b.len()];
    for x in a {
        let hit = b.iter().enumerate().find(|(j, y)| !used[*j] && answers(x, y, depth + 1).equal);
        match hit {
            Some((j, _)) => used[j] = true,
            None => return no("an answer of the gold list has no equal in the prediction"),
        }
    }
    yes("the same answers in some order")
}

fn all_pairs(a: &[Answer], b: &[Answer], depth: usize) -> Verdict {
    if a.len() != b.len() {
        return no(format!("{} elements vs {}", a.len(), b.len()));
    }
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let v = answers(x, y, depth + 1);
        if !v.equal {
            return no(format!("element {} differs: {}", k + 1, v.reason));
        }
    }
    yes("equal element by element")
}

/// Whether `pred` is equivalent to `gold`, and by which rule.
pub(crate) fn answers(gold: &Answer, pred: &Answer, depth: usize) -> Verdict {
    if depth > 40 {
        return no("nested too deep to compare");
    }
    use Answer::*;
    let listish = |a: &Answer| {
        matches!(a, List(_))
            || matches!(a, Expr(e) if count_pm(e) > 0)
            || matches!(a, Rel(s, _) if s.iter().any(|e| count_pm(e) > 0))
    };
    if listish(gold) || listish(pred) {
        return match (items(gold), items(pred)) {
            (Ok(g), Ok(p)) if g.len() == 1 && p.len() == 1 => answers(&g[0], &p[0], depth + 1),
            (Ok(g), Ok(p)) => same_multiset(&g, &p, depth),
            (Err(e), _) | (_, Err(e)) => no(e),
        };
    }
    match (gold, pred) {
        (Expr(g), Expr(p)) => exprs(g, p),
        (Set(_), Set(_)) => match (items(gold), items(pred)) {
            (Ok(g), Ok(p)) => same_elements(&g, &p, depth),
            (Err(e), _) | (_, Err(e)) => no(e),
        },
        (Bracketed { open: go, close: gc, items: g }, Bracketed { open: po, close: pc, items: p }) => {
            if go != po || gc != pc {
                return no(format!("brackets {go}..{gc} vs {po}..{pc}"));
            }
            all_pairs(g, p, depth)
        }
        (Union(g), Union(p)) => same_elements(g, p, depth),
        (Union(g), p @ Bracketed { .. }) if g.len() == 1 => answers(&g[0], p, depth + 1),
        (Matrix(g), Matrix(p)) => {
            if g.len() != p.len() || g[0].len() != p[0].len() {
                return no(format!("a {}x{} matrix vs {}x{}", g.len(), g[0].len(), p.len(), p[0].len()));
            }
            let g: Vec<Answer> = g.iter().flatten().cloned().collect();
            let p: Vec<Answer> = p.iter().flatten().cloned().collect();
            all_pairs(&g, &p, depth)
        }
        (Rel(gs, gops), Rel(ps, pops)) => relations(gs, gops, ps, pops),
        (Rel(sides, ops), Expr(e)) | (Expr(e), Rel(sides, ops)) => match solved_for(sides, ops) {
            Some(value) => {
                let v = exprs(value, e);
                Verdict { equal: v.equal, reason: format!("the equation's value: {}", v.reason) }
            }
            None => no(format!("{} vs {}", kind(gold), kind(pred))),
        },
        (Rel(sides, ops), b @ Bracketed { .. }) => match interval_of(sides, ops) {
            Some(i) => answers(&i, b, depth + 1),
            None => no(format!("{} vs {}", kind(gold), kind(pred))),
        },
        (b @ Bracketed { .. }, Rel(sides, ops)) => match interval_of(sides, ops) {
            Some(i) => answers(b, &i, depth + 1),
            None => no(format!("{} vs {}", kind(gold), kind(pred))),
        },
        _ => no(format!("{} vs {}", kind(gold), kind(pred))),
    }
}

/// `x = 5` (or `5 = x`): the value of a single variable.
fn solved_for<'a>(sides: &'a [Expr], ops: &[RelOp]) -> Option<&'a Expr> {
    if ops != [RelOp::Eq] {
        return None;
    }
    match (&sides[0], &sides[1]) {
        (Expr::Var(_), v) => Some(v),
        (v, Expr::Var(_)) => Some(v),
        _ => None,
    }
}

/// `x > 3` as `(3, \infty)`, `-2 \le x \le 7` as `[-2, 7]`.
fn interval_of(sides: &[Expr], ops: &[RelOp]) -> Option<Answer> {
    let e = |x: &Expr| Answer::Expr(x.clone());
    let inf = || Answer::Expr(Expr::Inf);
    let neg_inf = || Answer::Expr(Expr::Neg(Box::new(Expr::Inf)));
    let open = |op: RelOp| matches!(op, RelOp::Lt | RelOp::Gt);
    let bracket = |lo: Answer, lo_open: bool, hi: Answer, hi_open: bool| Answer::Bracketed {
        open: if lo_open { '(' } else { '[' },
        close: if hi_open { ')' } else { ']' },
        items: vec![lo, hi],
    };
    let is_var = |x: &Expr| matches!(x, Expr::Var(_));
    match (sides, ops) {
        ([v, b], [op]) if is_var(v) => match op {
            RelOp::Lt | RelOp::Le => Some(bracket(neg_inf(), true, e(b), open(*op))),
            RelOp::Gt | RelOp::Ge => Some(bracket(e(b), open(*op), inf(), true)),
            _ => None,
        },
        ([b, v], [op]) if is_var(v) => match op {
            RelOp::Lt | RelOp::Le => Some(bracket(e(b), open(*op), inf(), true)),
            RelOp::Gt | RelOp::Ge => Some(bracket(neg_inf(), true, e(b), open(*op))),
            _ => None,
        },
        ([a, v, b], [o1, o2]) if is_var(v) => match (o1, o2) {
            (RelOp::Lt | RelOp::Le, RelOp::Lt | RelOp::Le) => Some(bracket(e(a), open(*o1), e(b), open(*o2))),
            (RelOp::Gt | RelOp::Ge, RelOp::Gt | RelOp::Ge) => Some(bracket(e(b), open(*o2), e(a), open(*o1))),
            _ => None,
        },
        _ => None,
    }
}

/// `a > b` read as `b < a`, so direction does not matter.
fn forward(sides: &[Expr], ops: &[RelOp]) -> (Vec<Expr>, Vec<RelOp>) {
    if !ops.is_empty() && ops.iter().all(|o| matches!(o, RelOp::Gt | RelOp::Ge)) {
        let flipped = ops.iter().rev().map(|o| if *o == RelOp::Gt { RelOp::Lt } else { RelOp::Le }).collect();
        (sides.iter().rev().cloned().collect(), flipped)
    } else {
        (sides.to_vec(), ops.to_vec())
    }
}

fn relations(gs: &[Expr], gops: &[RelOp], ps: &[Expr], pops: &[RelOp]) -> Verdict {
    let (gs, gops) = forward(gs, gops);
    let (ps, pops) = forward(ps, pops);
    if gops != pops {
        return no(format!("relations {gops:?} vs {pops:?}"));
    }
    if matches!(gops.as_slice(), [RelOp::Eq] | [RelOp::Ne]) {
        // Equations: the same up to a non-zero factor, whatever side holds what.
        let diff = |s: &[Expr]| Expr::Add(vec![s[0].clone(), Expr::Neg(Box::new(s[1].clone()))]);
        return proportional(&diff(&gs), &diff(&ps));
    }
    for (k, (g, p)) in gs.iter().zip(&ps).enumerate() {
        let v = exprs(g, p);
        if !v.equal {
            return no(format!("side {} differs: {}", k + 1, v.reason));
        }
    }
    yes("the same relation")
}

/// Whether `f = c * h` for a non-zero constant `c` at every random point.
fn proportional(f: &Expr, h: &Expr) -> Verdict {
    let mut names = BTreeSet::new();
    variables(f, &mut names);
    variables(h, &mut names);
    if names.is_empty() {
        return exprs(f, h);
    }
    if names.len() > MAX_VARS {
        return no(format!("more than {MAX_VARS} variables"));
    }
    let names: Vec<String> = names.into_iter().collect();
    let values: Vec<_> = points(&names, POINTS).iter().filter_map(|pt| Some((eval(f, pt)?, eval(h, pt)?))).collect();
    if values.len() < MIN_VALID {
        return no(format!("defined at only {} of {POINTS} random points", values.len()));
    }
    let Some(ratio) = values.iter().find(|(_, b)| b.norm() > 1e-9).map(|(a, b)| a / b) else {
        return no("the prediction's equation holds everywhere");
    };
    if ratio.norm() < 1e-12 {
        return no("the gold's equation holds everywhere");
    }
    if values.iter().all(|(a, b)| close(*a, ratio * b)) {
        yes(format!("the same equation at {} random points", values.len()))
    } else {
        no("the equations differ at random points")
    }
}

/// `+\infty`, `-\infty`, or neither.
fn inf_sign(e: &Expr) -> Option<i8> {
    match e {
        Expr::Inf => Some(1),
        Expr::Neg(a) => inf_sign(a).map(|s| -s),
        Expr::Add(xs) if xs.len() == 1 => inf_sign(&xs[0]),
        _ => None,
    }
}

/// Expressions: exactly when both are rational numbers, else at random points.
pub(crate) fn exprs(g: &Expr, p: &Expr) -> Verdict {
    if has_inf(g) || has_inf(p) {
        return match (inf_sign(g), inf_sign(p)) {
            (Some(a), Some(b)) if a == b => yes("the same infinity"),
            _ if g == p => yes("the same expression"),
            _ => no("infinities differ"),
        };
    }
    match (exact(g), exact(p)) {
        (Err(TooLarge(what)), _) | (_, Err(TooLarge(what))) => {
            return if g == p {
                yes("the same expression (too large to evaluate)")
            } else {
                no(format!("too large to compare: {what}"))
            };
        }
        (Ok(Some(a)), Ok(Some(b))) => {
            return if a == b {
                yes("equal numbers")
            } else {
                no(format!("different numbers ({} vs {})", short(&a), short(&b)))
            };
        }
        _ => {}
    }
    let mut names = BTreeSet::new();
    variables(g, &mut names);
    variables(p, &mut names);
    if names.len() > MAX_VARS {
        return no(format!("more than {MAX_VARS} variables"));
    }
    let names: Vec<String> = names.into_iter().collect();
    let count = if names.is_empty() { 1 } else { POINTS };
    let pts = points(&names, count);
    let mut valid = 0;
    for pt in &pts {
        let (Some(a), Some(b)) = (eval(g, pt), eval(p, pt)) else { continue };
        if !close(a, b) {
            return if names.is_empty() { no("different values") } else { no("different values at a random point") };
        }
        valid += 1;
    }
    if names.is_empty() {
        if valid == 1 {
            yes("equal values")
        } else {
            no("could not evaluate (undefined or too large)")
        }
    } else if valid >= MIN_VALID {
        yes(format!("equal at {valid} random points"))
    } else {
        no(format!("defined at only {valid} of {count} random points"))
    }
}

/// A number for a reason line: at most 40 characters.
fn short(r: &BigRational) -> String {
    let text = r.to_string();
    if text.len() <= 40 {
        text
    } else {
        format!("{}...({} characters)", &text[..20], text.len())
    }
}

/// The exact value of a rational answer, when it is one.
pub(crate) fn rational_value(a: &Answer) -> Option<BigRational> {
    match a {
        Answer::Expr(e) if count_pm(e) == 0 => exact(e).ok().flatten(),
        _ => None,
    }
}

/// `x` rounded half away from zero to `places` decimal places.
pub(crate) fn round_to(x: &BigRational, places: usize) -> BigRational {
    let scale = BigRational::from_integer(num_traits::pow(num_bigint::BigInt::from(10), places));
    let scaled = x * &scale;
    let rounded = scaled.round();
    if rounded.is_zero() {
        return rounded;
    }
    rounded / scale
}
