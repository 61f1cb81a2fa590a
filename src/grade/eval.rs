//! Evaluating parsed expressions: exactly over big rationals (with caps on sizes, so
//! `2^{10^{10}}` or `10000!` is "too large" rather than a hang), and in complex floating
//! point at seeded random points for everything else.

use std::collections::BTreeSet;

use num_bigint::BigInt;
use num_complex::Complex64;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::parse::{BigOp, Expr, Func, Konst};

/// Numerator plus denominator bits of any exact intermediate result.
const MAX_BITS: u64 = 20_000;
/// The largest factorial computed exactly.
const MAX_FACTORIAL: u32 = 1000;
/// At most this many terms in a `\sum` or `\prod` with number bounds.
const MAX_TERMS: i64 = 1000;

/// A computation that was stopped by a size cap.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TooLarge(pub String);

fn bits(r: &BigRational) -> u64 {
    r.numer().bits() + r.denom().bits()
}

fn capped(r: BigRational) -> Result<BigRational, TooLarge> {
    if bits(&r) > MAX_BITS {
        Err(TooLarge(format!("an intermediate number of more than {MAX_BITS} bits")))
    } else {
        Ok(r)
    }
}

/// The exact value when the expression is a rational number (`None` when it has
/// variables, constants, irrational roots or is undefined).
pub(crate) fn exact(e: &Expr) -> Result<Option<BigRational>, TooLarge> {
    exact_in(e, &[])
}

/// [`exact`] with the bound variables of enclosing sums set.
fn exact_in(e: &Expr, bound: &[(String, BigRational)]) -> Result<Option<BigRational>, TooLarge> {
    let exact = |x: &Expr| exact_in(x, bound);
    Ok(match e {
        Expr::Num(n) | Expr::Dec(n) => Some(n.clone()),
        Expr::Var(v) => bound.iter().rev().find(|(name, _)| name == v).map(|(_, x)| x.clone()),
        Expr::Const(_) | Expr::Inf | Expr::Func(..) | Expr::Pm(..) => None,
        Expr::Big(op, var, parts) => {
            let [lo, hi, body] = parts.as_ref();
            let (Some(lo), Some(hi)) = (exact(lo)?, exact(hi)?) else { return Ok(None) };
            let Some((lo, hi)) = small_range(&lo, &hi) else { return Ok(None) };
            let mut acc = if *op == BigOp::Sum { BigRational::zero() } else { BigRational::one() };
            let mut env = bound.to_vec();
            for k in lo..=hi {
                env.push((var.clone(), BigRational::from_integer(k.into())));
                let Some(v) = exact_in(body, &env)? else { return Ok(None) };
                env.pop();
                acc = capped(if *op == BigOp::Sum { acc + v } else { acc * v })?;
            }
            Some(acc)
        }
        Expr::Neg(a) => exact(a)?.map(|a| -a),
        Expr::Abs(a) => exact(a)?.map(|a| a.abs()),
        Expr::Add(xs) => {
            let mut acc = BigRational::zero();
            for x in xs {
                let Some(v) = exact(x)? else { return Ok(None) };
                acc = capped(acc + v)?;
            }
            Some(acc)
        }
        Expr::Mul(xs) => {
            let mut acc = BigRational::one();
            for x in xs {
                let Some(v) = exact(x)? else { return Ok(None) };
                acc = capped(acc * v)?;
            }
            Some(acc)
        }
        Expr::Div(a, b) => match (exact(a)?, exact(b)?) {
            (Some(a), Some(b)) if !b.is_zero() => Some(capped(a / b)?),
            _ => None,
        },
        Expr::Pow(a, b) => match (exact(a)?, exact(b)?) {
            (Some(a), Some(b)) => rational_pow(&a, &b)?,
            _ => None,
        },
        Expr::Root(n, a) => match exact(a)? {
            Some(a) => exact_root(&a, *n),
            None => None,
        },
        Expr::Fact(a) => match exact(a)? {
            Some(a) if a.is_integer() && !a.is_negative() => {
                let n = a.to_integer().to_u32().filter(|n| *n <= MAX_FACTORIAL);
                let Some(n) = n else { return Err(TooLarge(format!("a factorial of more than {MAX_FACTORIAL}"))) };
                let mut acc = BigInt::one();
                for k in 2..=n {
                    acc *= k;
                }
                Some(BigRational::from_integer(acc))
            }
            _ => None,
        },
    })
}

/// Integer bounds of a sum with at most [`MAX_TERMS`] terms (an empty range is fine).
fn small_range(lo: &BigRational, hi: &BigRational) -> Option<(i64, i64)> {
    if !lo.is_integer() || !hi.is_integer() {
        return None;
    }
    let (lo, hi) = (lo.to_integer().to_i64()?, hi.to_integer().to_i64()?);
    (hi.checked_sub(lo)? < MAX_TERMS).then_some((lo, hi))
}

/// `a^b` when it is rational: integer exponents, and fractional ones whose root is exact.
fn rational_pow(a: &BigRational, b: &BigRational) -> Result<Option<BigRational>, TooLarge> {
    if !b.is_integer() {
        let Some(q) = b.denom().to_u32().filter(|q| *q <= 64) else { return Ok(None) };
        let Some(root) = exact_root(a, q) else { return Ok(None) };
        return rational_pow(&root, &BigRational::from_integer(b.numer().clone()));
    }
    let n = b.to_integer();
    if a.is_zero() {
        return Ok(if n.is_negative() {
            None
        } else if n.is_zero() {
            Some(BigRational::one())
        } else {
            Some(a.clone())
        });
    }
    if a.abs().is_one() {
        let odd = n.bits() > 0 && (&n % 2u32) != BigInt::zero();
        return Ok(Some(if a.is_negative() && odd { -BigRational::one() } else { BigRational::one() }));
    }
    let Some(k) = n.abs().to_u64().filter(|k| *k <= MAX_BITS) else {
        return Err(TooLarge(format!("an exponent of {n}")));
    };
    if bits(a).saturating_mul(k) > MAX_BITS * 2 {
        return Err(TooLarge(format!("a power with exponent {n}")));
    }
    let p = num_traits::pow(a.clone(), k as usize);
    let p = if n.is_negative() { p.recip() } else { p };
    Ok(Some(capped(p)?))
}

/// The exact n-th root of a rational, if it is rational.
fn exact_root(a: &BigRational, n: u32) -> Option<BigRational> {
    if a.is_negative() && n % 2 == 0 {
        return None;
    }
    let root = |x: &BigInt| -> Option<BigInt> {
        let r = x.abs().nth_root(n);
        (num_traits::pow(r.clone(), n as usize) == x.abs()).then(|| if x.is_negative() { -r } else { r })
    };
    Some(BigRational::new(root(a.numer())?, root(a.denom())?))
}

/// The variables an expression uses.
pub(crate) fn variables(e: &Expr, out: &mut BTreeSet<String>) {
    match e {
        Expr::Var(v) => {
            out.insert(v.clone());
        }
        Expr::Num(_) | Expr::Dec(_) | Expr::Const(_) | Expr::Inf => {}
        Expr::Big(_, var, parts) => {
            let mut inner = BTreeSet::new();
            parts.iter().for_each(|x| variables(x, &mut inner));
            inner.remove(var);
            out.extend(inner);
        }
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().for_each(|x| variables(x, out)),
        Expr::Neg(a) | Expr::Abs(a) | Expr::Root(_, a) | Expr::Func(_, a) | Expr::Fact(a) => variables(a, out),
        Expr::Div(a, b) | Expr::Pow(a, b) | Expr::Pm(a, b) => {
            variables(a, out);
            variables(b, out);
        }
    }
}

/// The free variables the bounds of a `\sum`/`\prod` use (`n` in `\sum_{k=1}^{n} k`):
/// they count terms, so comparisons read them at whole numbers.
pub(crate) fn bound_variables(e: &Expr, out: &mut BTreeSet<String>) {
    match e {
        Expr::Big(_, var, parts) => {
            let mut inner = BTreeSet::new();
            variables(&parts[0], &mut inner);
            variables(&parts[1], &mut inner);
            inner.remove(var);
            out.extend(inner);
            parts.iter().for_each(|x| bound_variables(x, out));
        }
        Expr::Var(_) | Expr::Num(_) | Expr::Dec(_) | Expr::Const(_) | Expr::Inf => {}
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().for_each(|x| bound_variables(x, out)),
        Expr::Neg(a) | Expr::Abs(a) | Expr::Root(_, a) | Expr::Func(_, a) | Expr::Fact(a) => bound_variables(a, out),
        Expr::Div(a, b) | Expr::Pow(a, b) | Expr::Pm(a, b) => {
            bound_variables(a, out);
            bound_variables(b, out);
        }
    }
}

/// [`points`], with the variables in `whole` at whole numbers from 1 to 11 instead.
pub(crate) fn points_with_whole(
    vars: &[String],
    count: usize,
    whole: &BTreeSet<String>,
) -> Vec<Vec<(String, Complex64)>> {
    let mut pts = points(vars, count);
    for (k, pt) in pts.iter_mut().enumerate() {
        for (j, (name, value)) in pt.iter_mut().enumerate() {
            if whole.contains(name) {
                *value = Complex64::new(1.0 + ((k * 5 + j * 3) % 11) as f64, 0.0);
            }
        }
    }
    pts
}

/// Whether the expression has a number written with a decimal point.
pub(crate) fn has_decimal(e: &Expr) -> bool {
    match e {
        Expr::Dec(_) => true,
        Expr::Num(_) | Expr::Const(_) | Expr::Var(_) | Expr::Inf => false,
        Expr::Big(_, _, parts) => parts.iter().any(has_decimal),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().any(has_decimal),
        Expr::Neg(a) | Expr::Abs(a) | Expr::Root(_, a) | Expr::Func(_, a) | Expr::Fact(a) => has_decimal(a),
        Expr::Div(a, b) | Expr::Pow(a, b) | Expr::Pm(a, b) => has_decimal(a) || has_decimal(b),
    }
}

/// Whether the expression mentions `\infty` anywhere.
pub(crate) fn has_inf(e: &Expr) -> bool {
    match e {
        Expr::Inf => true,
        Expr::Num(_) | Expr::Dec(_) | Expr::Const(_) | Expr::Var(_) => false,
        Expr::Big(_, _, parts) => parts.iter().any(has_inf),
        Expr::Add(xs) | Expr::Mul(xs) => xs.iter().any(has_inf),
        Expr::Neg(a) | Expr::Abs(a) | Expr::Root(_, a) | Expr::Func(_, a) | Expr::Fact(a) => has_inf(a),
        Expr::Div(a, b) | Expr::Pow(a, b) | Expr::Pm(a, b) => has_inf(a) || has_inf(b),
    }
}

/// Magnitudes beyond this count as overflow (so `inf - inf` never happens).
const HUGE: f64 = 1e150;

fn finite(z: Complex64) -> Option<Complex64> {
    // `+ 0.0` turns -0.0 into 0.0, so `-1` stays on the principal branch (`\sqrt{-1}` = i).
    let z = Complex64::new(z.re + 0.0, z.im + 0.0);
    (z.re.is_finite() && z.im.is_finite() && z.norm() < HUGE).then_some(z)
}

fn small_integer(e: &Expr) -> Option<i32> {
    match e {
        Expr::Num(n) if n.is_integer() => n.to_integer().to_i32().filter(|k| k.abs() <= 1024),
        Expr::Neg(a) => small_integer(a).map(|k| -k),
        _ => None,
    }
}

/// An exponent `p/q` with `q` odd (and small), for real roots of negative bases.
fn odd_root_exponent(e: &Expr) -> Option<(i32, u32)> {
    let r = exact(e).ok()??;
    let q = r.denom().to_u32().filter(|q| q % 2 == 1 && *q <= 64)?;
    let p = r.numer().to_i32().filter(|p| p.abs() <= 1024)?;
    Some((p, q))
}

/// The value at a point (`vars` gives each variable's value); `None` where undefined
/// or overflowing.
pub(crate) fn eval(e: &Expr, vars: &[(String, Complex64)]) -> Option<Complex64> {
    let z = match e {
        Expr::Num(n) | Expr::Dec(n) => Complex64::new(n.to_f64()?, 0.0),
        Expr::Big(op, var, parts) => big_value(*op, var, parts, vars)?,
        Expr::Var(v) => vars.iter().find(|(name, _)| name == v)?.1,
        Expr::Const(Konst::Pi) => Complex64::new(std::f64::consts::PI, 0.0),
        Expr::Const(Konst::E) => Complex64::new(std::f64::consts::E, 0.0),
        Expr::Const(Konst::I) => Complex64::i(),
        Expr::Inf | Expr::Pm(..) => return None,
        Expr::Add(xs) => {
            let mut acc = Complex64::new(0.0, 0.0);
            for x in xs {
                acc = finite(acc + eval(x, vars)?)?;
            }
            acc
        }
        Expr::Mul(xs) => {
            let mut acc = Complex64::new(1.0, 0.0);
            for x in xs {
                acc = finite(acc * eval(x, vars)?)?;
            }
            acc
        }
        Expr::Neg(a) => -eval(a, vars)?,
        Expr::Abs(a) => Complex64::new(eval(a, vars)?.norm(), 0.0),
        Expr::Div(a, b) => {
            let d = eval(b, vars)?;
            if d.norm() < 1e-300 {
                return None;
            }
            eval(a, vars)? / d
        }
        Expr::Pow(a, b) => {
            let base = eval(a, vars)?;
            if let Some(k) = small_integer(b) {
                if base.norm() == 0.0 && k < 0 {
                    return None;
                }
                base.powi(k)
            } else if let Some((p, q)) = odd_root_exponent(b).filter(|_| base.im == 0.0 && base.re < 0.0) {
                // `x^{1/3}` at a negative x: the real root, as `\sqrt[3]{x}` is.
                let root = -(-base.re).powf(1.0 / f64::from(q));
                Complex64::new(root, 0.0).powi(p)
            } else {
                let exp = eval(b, vars)?;
                if base.norm() == 0.0 {
                    if exp.re > 0.0 {
                        Complex64::new(0.0, 0.0)
                    } else {
                        return None;
                    }
                } else {
                    base.powc(exp)
                }
            }
        }
        Expr::Root(n, a) => {
            let x = eval(a, vars)?;
            if x.im == 0.0 && x.re < 0.0 && n % 2 == 1 {
                // The real odd root, as an answer means it.
                Complex64::new(-(-x.re).powf(1.0 / f64::from(*n)), 0.0)
            } else if x.im == 0.0 && x.re >= 0.0 {
                Complex64::new(x.re.powf(1.0 / f64::from(*n)), 0.0)
            } else {
                x.powf(1.0 / f64::from(*n))
            }
        }
        Expr::Fact(a) => {
            let x = eval(a, vars)?;
            let k = x.re.round();
            if x.im != 0.0 || (x.re - k).abs() > 1e-9 || !(0.0..=170.0).contains(&k) {
                return None;
            }
            Complex64::new((2..=k as u32).map(f64::from).product(), 0.0)
        }
        Expr::Func(f, a) => {
            let x = eval(a, vars)?;
            match f {
                Func::Sin => x.sin(),
                Func::Cos => x.cos(),
                Func::Tan => x.tan(),
                Func::Sec => x.cos().inv(),
                Func::Csc => x.sin().inv(),
                Func::Cot => x.tan().inv(),
                Func::Asin => x.asin(),
                Func::Acos => x.acos(),
                Func::Atan => x.atan(),
                Func::Sinh => x.sinh(),
                Func::Cosh => x.cosh(),
                Func::Tanh => x.tanh(),
                Func::Ln => {
                    if x.norm() == 0.0 {
                        return None;
                    }
                    x.ln()
                }
                Func::Log10 => {
                    if x.norm() == 0.0 {
                        return None;
                    }
                    x.ln() / std::f64::consts::LN_10
                }
                Func::Exp => x.exp(),
            }
        }
    };
    finite(z)
}

/// Points a summand is read at, and their weights, for sums whose bounds are not
/// integers at a point (`\sum_{k=0}^{n-1}` at a random real `n`).
const SUMMAND_POINTS: [(f64, f64); 4] = [(0.37, 1.0), (1.91, 0.61), (2.63, 0.43), (4.17, 0.29)];

/// The value of a `\sum`/`\prod`: the sum itself when the bounds are integers with at
/// most [`MAX_TERMS`] terms; otherwise a stand-in that is the same for equal bounds and
/// equal summands and differs otherwise (a weighted mix of the bounds and the summand
/// at fixed points), so such sums compare structurally.
fn big_value(op: BigOp, var: &str, parts: &[Expr; 3], vars: &[(String, Complex64)]) -> Option<Complex64> {
    let [lo, hi, body] = parts;
    let (lo, hi) = (eval(lo, vars)?, eval(hi, vars)?);
    let mut env = vars.to_vec();
    let mut at = |k: f64| {
        env.push((var.to_string(), Complex64::new(k, 0.0)));
        let v = eval(body, &env);
        env.pop();
        v
    };
    let integer = |z: Complex64| (z.im == 0.0 && (z.re - z.re.round()).abs() < 1e-9).then(|| z.re.round());
    if let (Some(a), Some(b)) = (integer(lo), integer(hi)) {
        if b - a < MAX_TERMS as f64 {
            let mut acc = Complex64::new(if op == BigOp::Sum { 0.0 } else { 1.0 }, 0.0);
            let mut k = a;
            while k <= b {
                acc = finite(if op == BigOp::Sum { acc + at(k)? } else { acc * at(k)? })?;
                k += 1.0;
            }
            return Some(acc);
        }
    }
    let mut mix = lo * 0.73 + hi * 0.53 + if op == BigOp::Sum { 0.27 } else { 0.17 };
    for (k, w) in SUMMAND_POINTS {
        mix += at(k)? * w;
    }
    finite(mix)
}

/// Whether two values agree to a relative tolerance of 1e-9.
pub(crate) fn close(a: Complex64, b: Complex64) -> bool {
    let diff = (a - b).norm();
    diff <= 1e-9 * a.norm().max(b.norm()) || diff < 1e-12
}

/// Seeded real points (answers are about real variables: `|x|^2` = `x^2`, `\sqrt{x^2}` !=
/// `x`): each a value per variable, in [0.2, 3.2] on even trials and [-3.2, -0.2] on odd ones.
pub(crate) fn points(vars: &[String], count: usize) -> Vec<Vec<(String, Complex64)>> {
    let mut state: u64 = 0x005e_ed0f_9ade;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..count)
        .map(|k| {
            vars.iter()
                .map(|v| {
                    let magnitude = 0.2 + 3.0 * next();
                    let re = if k % 2 == 1 { -magnitude } else { magnitude };
                    (v.clone(), Complex64::new(re, 0.0))
                })
                .collect()
        })
        .collect()
}
