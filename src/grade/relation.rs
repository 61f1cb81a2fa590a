//! Relations: equations up to a non-zero factor, inequalities up to a positive factor
//! (`x < 1` is `-x > -1`), chains side by side, and relations read as intervals
//! (`x > 3` is `(3, \infty)`, `0 < f(x) < 1` is `(0, 1)`).

use std::collections::BTreeSet;

use num_complex::Complex64;

use super::equiv::{exprs, no, yes, Ctx, Verdict};
use super::eval::{close, eval, points, variables};
use super::parse::{Answer, Expr, RelOp};

/// Random points tried per comparison, and how many must be defined on both sides.
pub(crate) const POINTS: usize = 12;
pub(crate) const MIN_VALID: usize = 5;
/// At most this many variables per comparison.
pub(crate) const MAX_VARS: usize = 8;

/// `x = 5` (or `5 = x`): the value of a single variable.
pub(crate) fn solved_for<'a>(sides: &'a [Expr], ops: &[RelOp]) -> Option<&'a Expr> {
    if ops != [RelOp::Eq] {
        return None;
    }
    match (&sides[0], &sides[1]) {
        (Expr::Var(_), v) => Some(v),
        (v, Expr::Var(_)) => Some(v),
        _ => None,
    }
}

/// What a relation is about: a variable, or a product of names such as `f(x)` or `xy`
/// (a function application reads as a product of its letters).
pub(crate) fn is_subject(e: &Expr) -> bool {
    match e {
        Expr::Var(_) => true,
        Expr::Mul(xs) => xs.iter().all(|x| matches!(x, Expr::Var(_))),
        _ => false,
    }
}

/// `x > 3` as `(3, \infty)`, `-2 \le x \le 7` as `[-2, 7]`.
pub(crate) fn interval_of(sides: &[Expr], ops: &[RelOp]) -> Option<Answer> {
    let e = |x: &Expr| Answer::Expr(x.clone());
    let inf = || Answer::Expr(Expr::Inf);
    let neg_inf = || Answer::Expr(Expr::Neg(Box::new(Expr::Inf)));
    let open = |op: RelOp| matches!(op, RelOp::Lt | RelOp::Gt);
    let bracket = |lo: Answer, lo_open: bool, hi: Answer, hi_open: bool| Answer::Bracketed {
        open: if lo_open { '(' } else { '[' },
        close: if hi_open { ')' } else { ']' },
        items: vec![lo, hi],
    };
    match (sides, ops) {
        ([v, b], [op]) if is_subject(v) => match op {
            RelOp::Lt | RelOp::Le => Some(bracket(neg_inf(), true, e(b), open(*op))),
            RelOp::Gt | RelOp::Ge => Some(bracket(e(b), open(*op), inf(), true)),
            _ => None,
        },
        ([b, v], [op]) if is_subject(v) => match op {
            RelOp::Lt | RelOp::Le => Some(bracket(e(b), open(*op), inf(), true)),
            RelOp::Gt | RelOp::Ge => Some(bracket(neg_inf(), true, e(b), open(*op))),
            _ => None,
        },
        ([a, v, b], [o1, o2]) if is_subject(v) => match (o1, o2) {
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

/// The sign a factor between two relations must have.
#[derive(Clone, Copy, PartialEq)]
enum Factor {
    NonZero,
    Positive,
}

pub(crate) fn relations(gs: &[Expr], gops: &[RelOp], ps: &[Expr], pops: &[RelOp], ctx: &Ctx) -> Verdict {
    let (gs, gops) = forward(gs, gops);
    let (ps, pops) = forward(ps, pops);
    if gops != pops {
        return no(format!("relations {gops:?} vs {pops:?}"));
    }
    // `right - left`: an equation is that being 0, `a < b` that being positive.
    let diff = |s: &[Expr]| Expr::Add(vec![s[1].clone(), Expr::Neg(Box::new(s[0].clone()))]);
    match gops.as_slice() {
        [RelOp::Eq] | [RelOp::Ne] => return proportional(&diff(&gs), &diff(&ps), Factor::NonZero, ctx),
        [RelOp::Lt] | [RelOp::Le] => return proportional(&diff(&gs), &diff(&ps), Factor::Positive, ctx),
        _ => {}
    }
    for (k, (g, p)) in gs.iter().zip(&ps).enumerate() {
        let v = exprs(g, p, ctx);
        if !v.equal {
            return no(format!("side {} differs: {}", k + 1, v.reason));
        }
    }
    yes("the same relation")
}

/// Whether `f = c * h` for one constant `c` (non-zero, or positive) at every random point.
fn proportional(f: &Expr, h: &Expr, factor: Factor, ctx: &Ctx) -> Verdict {
    let mut names = BTreeSet::new();
    variables(f, &mut names);
    variables(h, &mut names);
    if names.is_empty() {
        return exprs(f, h, ctx);
    }
    if names.len() > MAX_VARS {
        return no(format!("more than {MAX_VARS} variables"));
    }
    let names: Vec<String> = names.into_iter().collect();
    let values: Vec<(Complex64, Complex64)> =
        points(&names, POINTS).iter().filter_map(|pt| Some((eval(f, pt)?, eval(h, pt)?))).collect();
    if values.len() < MIN_VALID {
        return no(format!("defined at only {} of {POINTS} random points", values.len()));
    }
    let Some(ratio) = values.iter().find(|(_, b)| b.norm() > 1e-9).map(|(a, b)| a / b) else {
        return no("the prediction's relation holds everywhere");
    };
    if ratio.norm() < 1e-12 {
        return no("the gold's relation holds everywhere");
    }
    if factor == Factor::Positive && !(ratio.re > 0.0 && ratio.im.abs() <= 1e-9 * ratio.re) {
        return no("the inequalities point different ways");
    }
    if values.iter().all(|(a, b)| close(*a, ratio * b)) {
        yes(format!("the same relation at {} random points", values.len()))
    } else {
        no("the relations differ at random points")
    }
}
