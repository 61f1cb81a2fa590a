//! Equivalence of parsed answers: exact numbers (decimals at the grading precision),
//! expressions at random points, labelled values, sets, intervals and tuples (by their
//! brackets), ratios, matrices, relations (see `relation`) and lists in any order.

use std::collections::BTreeSet;

use num_bigint::BigInt;
use num_complex::Complex64;
use num_rational::BigRational;
use num_traits::Zero;

use super::eval::{bound_variables, close, eval, exact, has_decimal, has_inf, points_with_whole, variables, TooLarge};
use super::parse::{Answer, Expr, Label, RelOp};
use super::relation::{interval_of, is_subject, relations, solved_for, MAX_VARS, MIN_VALID, POINTS};

/// At most this many elements in a list, and `\pm` per expression.
const MAX_ITEMS: usize = 64;
const MAX_PM: usize = 4;

/// What a comparison may use (the library's `GradeOptions`, strictness aside: variables
/// are renamed before comparing).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    /// Decimal places a number written with a decimal point is compared at.
    pub precision: u32,
    /// A relation or tuple in the prediction may equal a set or interval in the gold.
    pub set_relation: bool,
}

/// A decision and the rule that made it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub equal: bool,
    pub reason: String,
}

pub(crate) fn yes(reason: impl Into<String>) -> Verdict {
    Verdict { equal: true, reason: reason.into() }
}

pub(crate) fn no(reason: impl Into<String>) -> Verdict {
    Verdict { equal: false, reason: reason.into() }
}

fn kind(a: &Answer) -> &'static str {
    match a {
        Answer::Expr(_) => "an expression",
        Answer::Rel(_, ops) if ops.iter().all(|op| *op == RelOp::Eq) => "an equation",
        Answer::Rel(..) => "a relation",
        Answer::Labelled { .. } => "a labelled value",
        Answer::Bracketed { .. } => "a tuple or interval",
        Answer::Set(_) => "a set",
        Answer::Union(_) => "a union",
        Answer::Ratio(_) => "a ratio",
        Answer::Matrix(_) => "a matrix",
        Answer::List(_) => "a list of answers",
    }
}

fn different_kinds(gold: &Answer, pred: &Answer) -> Verdict {
    no(format!("{} vs {}", kind(gold), kind(pred)))
}

pub(crate) fn count_pm(e: &Expr) -> usize {
    match e {
        Expr::Pm(a, b) => 1 + count_pm(a) + count_pm(b),
        Expr::Num(_) | Expr::Dec(_) | Expr::Var(_) | Expr::Const(_) | Expr::Inf => 0,
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().map(count_pm).sum(),
        Expr::Big(_, _, parts) => parts.iter().map(count_pm).sum(),
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
        Expr::Num(_) | Expr::Dec(_) | Expr::Var(_) | Expr::Const(_) | Expr::Inf | Expr::Big(..) => e.clone(),
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

fn pm_variants(e: &Expr) -> Result<Vec<Expr>, String> {
    let n = count_pm(e);
    if n > MAX_PM {
        return Err(format!("more than {MAX_PM} \\pm in one answer"));
    }
    Ok((0..1u32 << n).map(|mask| choose(e, mask, &mut 0)).collect())
}

/// The answers an item stands for: `1 \pm \sqrt{2}` is two, `x = 1 \pm 2` two values.
fn expand(a: &Answer) -> Result<Vec<Answer>, String> {
    Ok(match a {
        Answer::Expr(e) => pm_variants(e)?.into_iter().map(Answer::Expr).collect(),
        Answer::Rel(sides, ops) if sides.len() == 2 && ops == &[RelOp::Eq] && count_pm(&sides[0]) == 0 => {
            pm_variants(&sides[1])?.into_iter().map(|r| Answer::Rel(vec![sides[0].clone(), r], ops.clone())).collect()
        }
        Answer::Labelled { label, value, approx: None } => match value.as_ref() {
            Answer::Expr(e) if count_pm(e) > 0 => pm_variants(e)?
                .into_iter()
                .map(|v| Answer::Labelled { label: label.clone(), value: Box::new(Answer::Expr(v)), approx: None })
                .collect(),
            _ => vec![a.clone()],
        },
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
fn same_elements(a: &[Answer], b: &[Answer], depth: usize, ctx: &Ctx) -> Verdict {
    for (xs, ys, which) in [(a, b, "gold"), (b, a, "prediction")] {
        for x in xs {
            let mut found = false;
            for y in ys {
                let v = if which == "gold" { answers(x, y, depth + 1, ctx) } else { answers(y, x, depth + 1, ctx) };
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

fn all_pairs(a: &[Answer], b: &[Answer], depth: usize, ctx: &Ctx) -> Verdict {
    if a.len() != b.len() {
        return no(format!("{} elements vs {}", a.len(), b.len()));
    }
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        let v = answers(x, y, depth + 1, ctx);
        if !v.equal {
            return no(format!("element {} differs: {}", k + 1, v.reason));
        }
    }
    yes("equal element by element")
}

/// A list of values under distinct names (`x = 2, y = 3`): its values in order.
fn named_values(a: &Answer) -> Option<Vec<Answer>> {
    let Answer::List(xs) = a else { return None };
    let mut keys = BTreeSet::new();
    let mut values = Vec::new();
    for x in xs {
        let Answer::Labelled { label, value, .. } = x else { return None };
        if !keys.insert(label.key.as_str()) {
            return None;
        }
        values.push(value.as_ref().clone());
    }
    (values.len() >= 2).then_some(values)
}

fn listish(a: &Answer) -> bool {
    match a {
        Answer::List(_) => true,
        Answer::Expr(e) => count_pm(e) > 0,
        Answer::Rel(s, _) => s.iter().any(|e| count_pm(e) > 0),
        Answer::Labelled { value, approx: None, .. } => matches!(value.as_ref(), Answer::Expr(e) if count_pm(e) > 0),
        _ => false,
    }
}

/// Whether `pred` is equivalent to `gold`, and by which rule.
pub(crate) fn answers(gold: &Answer, pred: &Answer, depth: usize, ctx: &Ctx) -> Verdict {
    if depth > 40 {
        return no("nested too deep to compare");
    }
    // Named values against a tuple: `x = 2, y = 3` is `(2, 3)`.
    match (gold, pred) {
        (Answer::Bracketed { open: '(', close: ')', items }, named)
        | (named, Answer::Bracketed { open: '(', close: ')', items }) => {
            if let Some(values) = named_values(named) {
                let (g, p) = if matches!(gold, Answer::Bracketed { .. }) { (items, &values) } else { (&values, items) };
                return all_pairs(g, p, depth, ctx);
            }
        }
        _ => {}
    }
    if listish(gold) || listish(pred) {
        return match (items(gold), items(pred)) {
            (Ok(g), Ok(p)) if g.len() == 1 && p.len() == 1 => answers(&g[0], &p[0], depth + 1, ctx),
            (Ok(g), Ok(p)) => same_elements(&g, &p, depth, ctx),
            (Err(e), _) | (_, Err(e)) => no(e),
        };
    }
    use Answer::*;
    match (gold, pred) {
        (Labelled { .. }, _) | (_, Labelled { .. }) => labelled(gold, pred, depth, ctx),
        (Expr(g), Expr(p)) => exprs(g, p, ctx),
        (Set(_), Set(_)) => match (items(gold), items(pred)) {
            (Ok(g), Ok(p)) => same_elements(&g, &p, depth, ctx),
            (Err(e), _) | (_, Err(e)) => no(e),
        },
        // `\{2\}` and `2`: a set of one answer is that answer.
        (Set(s), Expr(_)) if s.len() == 1 => answers(&s[0], pred, depth + 1, ctx),
        (Expr(_), Set(s)) if s.len() == 1 => answers(gold, &s[0], depth + 1, ctx),
        (Bracketed { items: t, .. }, Set(s)) | (Set(s), Bracketed { items: t, .. }) => {
            if !ctx.set_relation {
                return no(format!(
                    "{} vs {} (a tuple is ordered; see the set-relation option)",
                    kind(gold),
                    kind(pred)
                ));
            }
            let v = same_elements(t, s, depth, ctx);
            Verdict { reason: format!("as sets: {}", v.reason), ..v }
        }
        (Bracketed { open: go, close: gc, items: g }, Bracketed { open: po, close: pc, items: p }) => {
            if go != po || gc != pc {
                return no(format!("brackets {go}..{gc} vs {po}..{pc}"));
            }
            all_pairs(g, p, depth, ctx)
        }
        (Union(g), Union(p)) => same_elements(g, p, depth, ctx),
        (Union(g), p @ Bracketed { .. }) if g.len() == 1 => answers(&g[0], p, depth + 1, ctx),
        (Ratio(g), Ratio(p)) => {
            let wrap = |xs: &[super::parse::Expr]| xs.iter().cloned().map(Answer::Expr).collect::<Vec<_>>();
            all_pairs(&wrap(g), &wrap(p), depth, ctx)
        }
        (Matrix(g), Matrix(p)) => {
            if g.len() != p.len() || g[0].len() != p[0].len() {
                return no(format!("a {}x{} matrix vs {}x{}", g.len(), g[0].len(), p.len(), p[0].len()));
            }
            let g: Vec<Answer> = g.iter().flatten().cloned().collect();
            let p: Vec<Answer> = p.iter().flatten().cloned().collect();
            all_pairs(&g, &p, depth, ctx)
        }
        (Rel(gs, gops), Rel(ps, pops)) => relations(gs, gops, ps, pops, ctx),
        (Rel(sides, ops), Expr(e)) => match solved_for(sides, ops) {
            Some(value) => {
                let v = exprs(value, e, ctx);
                Verdict { equal: v.equal, reason: format!("the equation's value: {}", v.reason) }
            }
            None => no(format!("{} vs {} (the gold asks for the relation)", kind(gold), kind(pred))),
        },
        (Expr(e), Rel(sides, ops)) => stated_value(e, sides, ops, ctx),
        (Rel(sides, ops), set @ (Bracketed { .. } | Union(_) | Set(_))) => match interval_of(sides, ops) {
            Some(i) => answers(&i, set, depth + 1, ctx),
            None => different_kinds(gold, pred),
        },
        (set @ (Bracketed { .. } | Union(_) | Set(_)), Rel(sides, ops)) => {
            if !ctx.set_relation {
                return no(format!("{} vs {} (see the set-relation option)", kind(gold), kind(pred)));
            }
            match interval_of(sides, ops) {
                Some(i) => answers(set, &i, depth + 1, ctx),
                None => different_kinds(gold, pred),
            }
        }
        _ => different_kinds(gold, pred),
    }
}

/// A value gold against an equation the prediction states (`x = 5`, `a + b = 5`,
/// `2 + 3 = 5`): its last side, or the variable's value in `5 = x`. A last side with
/// variables is a value only after a name (`y = 2x+1`, `f(x) = 2x+1`): `7 = 11a+c`
/// states that `11a+c` is 7, not the expression `11a+c`.
fn stated_value(gold: &Expr, sides: &[Expr], ops: &[RelOp], ctx: &Ctx) -> Verdict {
    if !ops.iter().all(|op| *op == RelOp::Eq) {
        return no("an expression vs a relation");
    }
    let last = match solved_for(sides, ops) {
        Some(value) => value,
        None => {
            let last = &sides[sides.len() - 1];
            let mut vars = BTreeSet::new();
            variables(last, &mut vars);
            if !vars.is_empty() && !is_subject(&sides[0]) {
                return no("an expression vs an equation whose sides are not a name and its value");
            }
            last
        }
    };
    let v = exprs(gold, last, ctx);
    Verdict { equal: v.equal, reason: format!("the equation's value: {}", v.reason) }
}

/// The values a labelled answer states: the exact one, then the approximation.
fn stated(a: &Answer) -> Vec<&Answer> {
    match a {
        Answer::Labelled { value, approx, .. } => std::iter::once(value.as_ref()).chain(approx.as_deref()).collect(),
        other => vec![other],
    }
}

/// `f(n)` and `f(x)`: the same function of a dummy variable (the function and variable names).
fn function_label(key: &str) -> Option<(&str, &str)> {
    let (name, rest) = key.split_once('(')?;
    let var = rest.strip_suffix(')')?;
    let single = |s: &str| s.len() == 1 && s.chars().all(|c| c.is_ascii_alphabetic());
    (single(name) && single(var)).then_some((name, var))
}

/// Labelled values: the same name compares the values; different names compare the
/// equations (`y = 2x` vs `x = y/2`); a name against a plain answer compares its value.
fn labelled(gold: &Answer, pred: &Answer, depth: usize, ctx: &Ctx) -> Verdict {
    use Answer::*;
    let values = |g: &Answer, p: &Answer| -> Verdict {
        let mut last = no("no stated value");
        for gv in stated(g) {
            for pv in stated(p) {
                last = answers(gv, pv, depth + 1, ctx);
                if last.equal {
                    return last;
                }
            }
        }
        last
    };
    match (gold, pred) {
        (Labelled { label: gl, value: gv, .. }, Labelled { label: pl, value: pv, .. }) => {
            if gl.key == pl.key {
                return values(gold, pred);
            }
            if let (Some((gf, gx)), Some((pf, px))) = (function_label(&gl.key), function_label(&pl.key)) {
                // Renaming `x` to `n` must not capture an `n` the value already has.
                let mut free = BTreeSet::new();
                answer_variables(pv, &mut free);
                if gf == pf && !free.contains(gx) {
                    let renamed = rename_answer(pv, &[(px.to_string(), gx.to_string())]);
                    return answers(gv, &renamed, depth + 1, ctx);
                }
            }
            match (as_equation(gl, gv), as_equation(pl, pv)) {
                (Some(g), Some(p)) => answers(&g, &p, depth + 1, ctx),
                _ => no(format!("values of {} vs {}", gl.key, pl.key)),
            }
        }
        (Labelled { label, value, .. }, r @ Rel(..)) => match as_equation(label, value) {
            Some(g) => answers(&g, r, depth + 1, ctx),
            None => different_kinds(gold, pred),
        },
        (r @ Rel(..), Labelled { label, value, .. }) => match as_equation(label, value) {
            Some(p) => answers(r, &p, depth + 1, ctx),
            None => different_kinds(gold, pred),
        },
        (Labelled { .. }, _) | (_, Labelled { .. }) => values(gold, pred),
        _ => different_kinds(gold, pred),
    }
}

/// `y = 2x + 3` as the equation it also is.
fn as_equation(label: &Label, value: &Answer) -> Option<Answer> {
    match (&label.expr, value) {
        (Some(l), Answer::Expr(v)) => Some(Answer::Rel(vec![l.clone(), v.clone()], vec![RelOp::Eq])),
        _ => None,
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

/// Expressions: exactly when both are rational numbers (at the grading precision when
/// either has a decimal), else at random points.
pub(crate) fn exprs(g: &Expr, p: &Expr, ctx: &Ctx) -> Verdict {
    if has_inf(g) || has_inf(p) {
        return match (inf_sign(g), inf_sign(p)) {
            (Some(a), Some(b)) if a == b => yes("the same infinity"),
            _ if g == p => yes("the same expression"),
            _ => no("infinities differ"),
        };
    }
    let decimal = has_decimal(g) || has_decimal(p);
    match (exact(g), exact(p)) {
        (Err(TooLarge(what)), _) | (_, Err(TooLarge(what))) => {
            return if g == p {
                yes("the same expression (too large to evaluate)")
            } else {
                no(format!("too large to compare: {what}"))
            };
        }
        (Ok(Some(a)), Ok(Some(b))) if decimal => {
            let n = ctx.precision as usize;
            return if round_to(&a, n) == round_to(&b, n) {
                yes(format!("equal when rounded to {n} decimal places"))
            } else {
                no(format!("different numbers at {n} decimal places ({} vs {})", short(&a), short(&b)))
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
    if names.is_empty() {
        return constants(g, p, decimal, ctx);
    }
    if names.len() > MAX_VARS {
        return no(format!("more than {MAX_VARS} variables"));
    }
    let names: Vec<String> = names.into_iter().collect();
    let mut whole = BTreeSet::new();
    bound_variables(g, &mut whole);
    bound_variables(p, &mut whole);
    let mut valid = 0;
    for pt in &points_with_whole(&names, POINTS, &whole) {
        let (Some(a), Some(b)) = (eval(g, pt), eval(p, pt)) else { continue };
        if !close(a, b) {
            return no("different values at a random point");
        }
        valid += 1;
    }
    if valid >= MIN_VALID {
        yes(format!("equal at {valid} random points"))
    } else {
        no(format!("defined at only {valid} of {POINTS} random points"))
    }
}

/// Two constant expressions, one of them irrational: their values (rounded to the
/// grading precision when either is written with a decimal).
fn constants(g: &Expr, p: &Expr, decimal: bool, ctx: &Ctx) -> Verdict {
    let (Some(a), Some(b)) = (eval(g, &[]), eval(p, &[])) else {
        return no("could not evaluate (undefined or too large)");
    };
    if !decimal {
        return if close(a, b) { yes("equal values") } else { no("different values") };
    }
    let n = ctx.precision;
    match (rounded(a, n), rounded(b, n)) {
        (Some(x), Some(y)) if x == y => yes(format!("equal when rounded to {n} decimal places")),
        (Some(_), Some(_)) => no(format!("different values at {n} decimal places")),
        // Beyond what 64-bit floats resolve: as close as they can tell.
        _ if close(a, b) => yes("equal to floating-point precision (too many digits to round)"),
        _ => no("different values"),
    }
}

/// A complex value's parts scaled to `n` decimal places and rounded, when a float holds
/// them exactly (below 2^52).
fn rounded(z: Complex64, n: u32) -> Option<(i64, i64)> {
    let scale = 10f64.powi(n as i32);
    let part = |x: f64| {
        let s = (x * scale).round();
        (s.abs() < 4.5e15).then_some(s as i64)
    };
    Some((part(z.re)?, part(z.im)?))
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

/// `x` rounded half away from zero to `places` decimal places.
pub(crate) fn round_to(x: &BigRational, places: usize) -> BigRational {
    let scale = BigRational::from_integer(num_traits::pow(BigInt::from(10), places));
    let scaled = x * &scale;
    let rounded = scaled.round();
    if rounded.is_zero() {
        return rounded;
    }
    rounded / scale
}

/// `a` with variables renamed (`map`: from, to).
pub(crate) fn rename_answer(a: &Answer, map: &[(String, String)]) -> Answer {
    let e = |x: &Expr| rename(x, map);
    let all = |xs: &[Answer]| xs.iter().map(|x| rename_answer(x, map)).collect::<Vec<_>>();
    match a {
        Answer::Expr(x) => Answer::Expr(e(x)),
        Answer::Rel(sides, ops) => Answer::Rel(sides.iter().map(e).collect(), ops.clone()),
        Answer::Labelled { label, value, approx } => Answer::Labelled {
            label: Label { key: label.key.clone(), expr: label.expr.as_ref().map(e) },
            value: Box::new(rename_answer(value, map)),
            approx: approx.as_ref().map(|x| Box::new(rename_answer(x, map))),
        },
        Answer::Bracketed { open, close, items } => Answer::Bracketed { open: *open, close: *close, items: all(items) },
        Answer::Set(xs) => Answer::Set(all(xs)),
        Answer::Union(xs) => Answer::Union(all(xs)),
        Answer::List(xs) => Answer::List(all(xs)),
        Answer::Ratio(xs) => Answer::Ratio(xs.iter().map(e).collect()),
        Answer::Matrix(rows) => Answer::Matrix(rows.iter().map(|r| all(r)).collect()),
    }
}

fn rename(x: &Expr, map: &[(String, String)]) -> Expr {
    let b = |y: &Expr| Box::new(rename(y, map));
    match x {
        Expr::Var(v) => {
            Expr::Var(map.iter().find(|(from, _)| from == v).map_or_else(|| v.clone(), |(_, to)| to.clone()))
        }
        Expr::Num(_) | Expr::Dec(_) | Expr::Const(_) | Expr::Inf => x.clone(),
        Expr::Add(xs) => Expr::Add(xs.iter().map(|y| rename(y, map)).collect()),
        Expr::Mul(xs) => Expr::Mul(xs.iter().map(|y| rename(y, map)).collect()),
        Expr::Neg(a) => Expr::Neg(b(a)),
        Expr::Abs(a) => Expr::Abs(b(a)),
        Expr::Root(n, a) => Expr::Root(*n, b(a)),
        Expr::Func(f, a) => Expr::Func(*f, b(a)),
        Expr::Fact(a) => Expr::Fact(b(a)),
        Expr::Div(a, c) => Expr::Div(b(a), b(c)),
        Expr::Pow(a, c) => Expr::Pow(b(a), b(c)),
        Expr::Pm(a, c) => Expr::Pm(b(a), b(c)),
        Expr::Big(op, var, parts) => {
            // The bound variable stays bound.
            let inner: Vec<(String, String)> = map.iter().filter(|(from, _)| from != var).cloned().collect();
            let [lo, hi, body] = parts.as_ref();
            Expr::Big(*op, var.clone(), Box::new([rename(lo, map), rename(hi, map), rename(body, &inner)]))
        }
    }
}

/// The variables an answer uses (bound ones excluded).
pub(crate) fn answer_variables(a: &Answer, out: &mut BTreeSet<String>) {
    let all = |xs: &[Answer], out: &mut BTreeSet<String>| xs.iter().for_each(|x| answer_variables(x, out));
    match a {
        Answer::Expr(x) => variables(x, out),
        Answer::Rel(sides, _) | Answer::Ratio(sides) => sides.iter().for_each(|x| variables(x, out)),
        Answer::Labelled { label, value, approx } => {
            if let Some(l) = &label.expr {
                variables(l, out);
            }
            answer_variables(value, out);
            if let Some(x) = approx {
                answer_variables(x, out);
            }
        }
        Answer::Bracketed { items, .. } => all(items, out),
        Answer::Set(xs) | Answer::Union(xs) | Answer::List(xs) => all(xs, out),
        Answer::Matrix(rows) => rows.iter().for_each(|r| all(r, out)),
    }
}
