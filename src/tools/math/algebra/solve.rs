//! `solve`: one equation in one unknown (exact roots where they exist, numeric ones
//! else), and linear or substitutable systems.

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::tools::math::calc::clip;
use crate::tools::math::num::{decimal_sig, exact_int_root};
use crate::tools::math::parse::parse;
use crate::tools::math::poly::{self, Poly, UPoly};

use super::*;

/// A root of a one-variable polynomial.
#[derive(Debug, Clone)]
pub(super) enum Root {
    Exact(BigRational),
    /// Text of an exact radical form, and its value when real.
    Radical(String, Option<f64>),
    /// A numeric root (re, im).
    Numeric(f64, f64),
}

pub(super) fn show_root(v: &str, r: &Root) -> String {
    match r {
        Root::Exact(q) => {
            if q.is_integer() {
                format!("{v} = {q}")
            } else {
                format!("{v} = {q} (≈ {})", decimal_sig(q, 10, false))
            }
        }
        Root::Radical(s, Some(x)) => format!("{v} = {s} (≈ {x:.10})"),
        Root::Radical(s, None) => format!("{v} = {s}"),
        Root::Numeric(re, im) if im.abs() < 1e-12 => format!("{v} ≈ {re:.12}"),
        Root::Numeric(re, im) => format!("{v} ≈ {re:.12} {} {:.12}i", if *im < 0.0 { "-" } else { "+" }, im.abs()),
    }
}

/// √(n) for a non-negative rational as `k*sqrt(m)` text with m square-free (as far as trial
/// division finds), and its value.
pub(super) fn sqrt_text(q: &BigRational) -> (String, f64) {
    // √(a/b) = √(a·b)/b.
    let mut rad = q.numer() * q.denom();
    let den = q.denom().clone();
    let mut out = BigInt::one();
    let mut p = 2u64;
    while p < 100_000 && BigInt::from(p * p) <= rad {
        let pp = BigInt::from(p * p);
        while (&rad % &pp).is_zero() {
            rad /= &pp;
            out *= BigInt::from(p);
        }
        p += 1;
    }
    if let Some(r) = exact_int_root(&rad, 2) {
        out *= r;
        rad = BigInt::one();
    }
    let k = BigRational::new(out, den);
    let value = k.to_f64().unwrap_or(f64::NAN) * rad.to_f64().unwrap_or(f64::NAN).sqrt();
    let text = if rad.is_one() {
        k.to_string()
    } else if k.is_one() {
        format!("sqrt({rad})")
    } else if k.numer().is_one() {
        format!("sqrt({rad})/{}", k.denom())
    } else if k.is_integer() {
        format!("{k}*sqrt({rad})")
    } else {
        format!("{}*sqrt({rad})/{}", k.numer(), k.denom())
    };
    (text, value)
}

/// The roots of a one-variable polynomial: exact rational ones, radicals for quadratic
/// leftovers, numeric ones (Durand–Kerner, fixed iterations) for the rest.
pub(super) fn roots(p: &UPoly) -> Result<(Vec<(Root, u32)>, bool), String> {
    let (_, factors) = factor_univariate(p)?;
    let mut out = Vec::new();
    let mut numeric = false;
    for (f, m) in factors {
        let f: UPoly = f.iter().map(|c| BigRational::from_integer(c.clone())).collect();
        match poly::udeg(&f) {
            0 => {}
            1 => out.push((Root::Exact(-&f[0] / &f[1]), m)),
            2 => {
                let (c, b, a) = (&f[0], &f[1], &f[2]);
                let disc = b * b - BigRational::from_integer(4.into()) * a * c;
                let two_a = a * BigRational::from_integer(2.into());
                let centre = -b / &two_a;
                let (s, val) = sqrt_text(&(disc.abs() / (&two_a * &two_a)));
                let c_txt = if centre.is_zero() { String::new() } else { format!("{centre} ") };
                let cf = centre.to_f64().unwrap_or(f64::NAN);
                if disc.is_positive() {
                    out.push((
                        Root::Radical(format!("{c_txt}+ {s}").trim_start_matches("+ ").to_string(), Some(cf + val)),
                        m,
                    ));
                    out.push((
                        Root::Radical(
                            format!("{c_txt}- {s}").replace("- ", if centre.is_zero() { "-" } else { "- " }),
                            Some(cf - val),
                        ),
                        m,
                    ));
                } else {
                    out.push((Root::Radical(format!("{c_txt}+ {s}*i").trim_start_matches("+ ").to_string(), None), m));
                    out.push((
                        Root::Radical(
                            format!("{c_txt}- {s}*i").replace("- ", if centre.is_zero() { "-" } else { "- " }),
                            None,
                        ),
                        m,
                    ));
                }
            }
            _ => {
                numeric = true;
                for (re, im) in numeric_roots(&f) {
                    out.push((Root::Numeric(re, im), m));
                }
            }
        }
    }
    Ok((out, numeric))
}

/// Durand–Kerner with a fixed iteration count (deterministic): all complex roots.
pub(super) fn numeric_roots(p: &UPoly) -> Vec<(f64, f64)> {
    let n = poly::udeg(p);
    let lead = p[n].to_f64().unwrap_or(1.0);
    let c: Vec<f64> = p.iter().map(|x| x.to_f64().unwrap_or(0.0) / lead).collect();
    let eval = |z: (f64, f64)| {
        let mut acc = (0.0, 0.0);
        for k in (0..=n).rev() {
            acc = (acc.0 * z.0 - acc.1 * z.1 + c[k], acc.0 * z.1 + acc.1 * z.0);
        }
        acc
    };
    let radius = 1.0 + c.iter().take(n).map(|x| x.abs()).fold(0.0, f64::max);
    let mut z: Vec<(f64, f64)> = (0..n)
        .map(|k| {
            let t = 2.0 * std::f64::consts::PI * k as f64 / n as f64 + 0.4;
            (radius * t.cos(), radius * t.sin())
        })
        .collect();
    for _ in 0..500 {
        for i in 0..n {
            let mut den = (1.0, 0.0);
            for j in 0..n {
                if i != j {
                    let d = (z[i].0 - z[j].0, z[i].1 - z[j].1);
                    den = (den.0 * d.0 - den.1 * d.1, den.0 * d.1 + den.1 * d.0);
                }
            }
            let num = eval(z[i]);
            let norm = den.0 * den.0 + den.1 * den.1;
            if norm > 0.0 {
                let q = ((num.0 * den.0 + num.1 * den.1) / norm, (num.1 * den.0 - num.0 * den.1) / norm);
                z[i] = (z[i].0 - q.0, z[i].1 - q.1);
            }
        }
    }
    let mut z: Vec<(f64, f64)> =
        z.into_iter().map(|(re, im)| if im.abs() < 1e-9 { (re, 0.0) } else { (re, im) }).collect();
    z.sort_by(|a, b| (a.1 != 0.0).cmp(&(b.1 != 0.0)).then(a.0.total_cmp(&b.0)).then(a.1.total_cmp(&b.1)));
    z
}

/// Split `eq1; eq2 for x, y` into the equations and the unknowns asked for.
pub(super) fn split_solve(text: &str) -> (Vec<String>, Vec<String>) {
    let lower = text.to_lowercase();
    let (eqs, unknowns) = match lower.rfind(" for ").or_else(|| lower.rfind(" wrt ")) {
        Some(i) => (&text[..i], &text[i + 5..]),
        None => (text, ""),
    };
    let unknowns: Vec<String> = unknowns
        .split([',', ' ', ';'])
        .map(|s| s.trim().to_lowercase())
        .filter(|s| !s.is_empty() && s != "and")
        .collect();
    let mut parts: Vec<String> =
        eqs.split([';', '\n']).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    if parts.len() == 1 && parts[0].matches('=').count() > 1 && !parts[0].contains("==") {
        parts = parts[0].split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    }
    if parts.len() == 1 && parts[0].contains(" and ") {
        parts = parts[0].split(" and ").map(|s| s.trim().to_string()).collect();
    }
    (parts, unknowns)
}

/// One equation as a fraction `lhs - rhs` (= 0), with the letters it was written with (some
/// may cancel).
pub(super) fn equation(text: &str) -> Result<(Frac, BTreeSet<String>), String> {
    let mut sides = text.split('=').filter(|s| !s.trim().is_empty());
    let lhs = sides.next().ok_or_else(|| format!("'{}' is not an equation", clip(text)))?;
    let rhs = sides.next();
    if sides.next().is_some() {
        return Err(format!("'{}' has more than one '='", clip(text)));
    }
    let l = parse(lhs)?;
    let mut letters = node_vars(&l);
    let l = to_frac(&l)?;
    match rhs {
        Some(r) => {
            let r = parse(r)?;
            letters.extend(node_vars(&r));
            Ok((l.add(&to_frac(&r)?, -1)?, letters))
        }
        None => Ok((l, letters)),
    }
}

pub(super) fn solve(text: &str) -> Result<String, String> {
    let (eq_texts, mut unknowns) = split_solve(text);
    if eq_texts.is_empty() {
        return Err("there is no equation".into());
    }
    if eq_texts.len() > 6 {
        return Err("at most 6 equations are supported".into());
    }
    let parsed: Vec<(Frac, BTreeSet<String>)> = eq_texts.iter().map(|t| equation(t)).collect::<Result<_, _>>()?;
    let mut all_vars: BTreeSet<String> = parsed.iter().flat_map(|(f, _)| f.vars()).collect();
    if all_vars.is_empty() {
        all_vars = parsed.iter().flat_map(|(_, letters)| letters.iter().cloned()).collect();
    }
    let eqs: Vec<Frac> = parsed.into_iter().map(|(f, _)| f).collect();
    if unknowns.is_empty() {
        unknowns = if eqs.len() == 1 && all_vars.len() > 1 {
            if all_vars.contains("x") {
                vec!["x".to_string()]
            } else {
                return Err("there are several letters: say which to solve for, e.g. 'solve a*t + b = 0 for t'".into());
            }
        } else {
            all_vars.iter().cloned().collect()
        };
    }
    if unknowns.is_empty() {
        let holds = eqs.iter().all(|e| e.num.is_zero());
        return Ok(if holds {
            "the equation holds (no unknowns)".into()
        } else {
            "the equation is false (no unknowns)".into()
        });
    }
    if eqs.len() == 1 && unknowns.len() == 1 {
        return solve_one(&eqs[0], &unknowns[0]);
    }
    solve_system(&eqs, &unknowns)
}

pub(super) fn solve_one(eq: &Frac, v: &str) -> Result<String, String> {
    let num = &eq.num;
    if num.is_zero() {
        return Ok(format!("every {v} is a solution (the equation is an identity)"));
    }
    if num.degree_in(v) == 0 {
        return Ok(format!("no solution: the equation reduces to {num} = 0"));
    }
    let Some(u) = num.to_univariate(v) else {
        // Other letters are parameters: linear or quadratic in v.
        let c = num.coeffs_in(v);
        return match c.len() - 1 {
            1 => {
                let sol = reduce(Frac { num: c[0].neg(), den: c[1].clone() })?;
                Ok(format!("{v} = {} (when {} ≠ 0)", show_frac(&sol), c[1]))
            }
            2 => {
                let disc = c[1].mul(&c[1])?.sub(&c[2].mul(&c[0])?.scale(&BigRational::from_integer(4.into())));
                Ok(format!("{v} = (-({}) ± sqrt({disc}))/(2*({})) (when {} ≠ 0)", c[1], c[2], c[2]))
            }
            d => Err(format!(
                "with other letters as parameters only degree 1 or 2 in {v} is solved (this is degree {d})"
            )),
        };
    };
    let (rs, numeric) = roots(&u)?;
    // Exclude roots where the denominator vanishes.
    let den_u = eq.den.to_univariate(v);
    let mut shown = Vec::new();
    let mut excluded = Vec::new();
    for (r, m) in &rs {
        if let (Root::Exact(q), Some(d)) = (r, &den_u) {
            if poly::ueval(d, q).is_zero() {
                excluded.push(show_root(v, r));
                continue;
            }
        }
        let mut s = show_root(v, r);
        if *m > 1 {
            s.push_str(&format!(" (multiplicity {m})"));
        }
        shown.push(s);
    }
    let mut out = if shown.is_empty() { "no solution".to_string() } else { shown.join("; ") };
    if numeric {
        out.push_str(" (≈ roots are numeric: no exact rational or quadratic form)");
    }
    if !excluded.is_empty() {
        out.push_str(&format!(" (excluded, the denominator is 0 there: {})", excluded.join(", ")));
    }
    Ok(out)
}

/// A linear system by exact Gaussian elimination; otherwise substitution through an equation
/// that is linear in one unknown, or a one-unknown equation with rational roots.
pub(super) fn solve_system(eqs: &[Frac], unknowns: &[String]) -> Result<String, String> {
    let polys: Vec<Poly> = eqs.iter().map(|e| e.num.clone()).collect();
    let linear = polys.iter().all(|p| p.total_degree() <= 1 && p.vars().iter().all(|v| unknowns.contains(v)));
    if linear {
        return gauss(&polys, unknowns);
    }
    let mut solutions = Vec::new();
    substitute_solve(polys, unknowns.to_vec(), BTreeMap::new(), &mut solutions, 0)?;
    if solutions.is_empty() {
        return Ok("no solution".into());
    }
    let lines: Vec<String> = solutions
        .iter()
        .map(|s| {
            let parts: Vec<String> = unknowns.iter().filter_map(|u| s.get(u).map(|q| format!("{u} = {q}"))).collect();
            format!("({})", parts.join(", "))
        })
        .collect();
    Ok(lines.join("; "))
}

pub(super) fn gauss(polys: &[Poly], unknowns: &[String]) -> Result<String, String> {
    let n = unknowns.len();
    let mut rows: Vec<Vec<BigRational>> = polys
        .iter()
        .map(|p| {
            let mut row: Vec<BigRational> = unknowns
                .iter()
                .map(|u| p.terms.get(&poly::Mono::from([(u.clone(), 1)])).cloned().unwrap_or_default())
                .collect();
            row.push(-p.terms.get(&poly::Mono::new()).cloned().unwrap_or_default());
            row
        })
        .collect();
    let mut pivots = Vec::new();
    let mut r = 0;
    for c in 0..n {
        let Some(p) = (r..rows.len()).find(|&i| !rows[i][c].is_zero()) else { continue };
        rows.swap(r, p);
        let k = rows[r][c].clone();
        for x in rows[r].iter_mut() {
            *x /= &k;
        }
        for i in 0..rows.len() {
            if i != r && !rows[i][c].is_zero() {
                let f = rows[i][c].clone();
                let pivot_row = rows[r].clone();
                for (x, p) in rows[i].iter_mut().zip(&pivot_row) {
                    *x -= p * &f;
                }
            }
        }
        pivots.push(c);
        r += 1;
    }
    if rows[r..].iter().any(|row| !row[n].is_zero()) {
        return Ok("no solution: the equations are inconsistent".into());
    }
    let mut parts = Vec::new();
    for (i, c) in pivots.iter().enumerate() {
        let mut expr = Poly::constant(rows[i][n].clone());
        for j in 0..n {
            if j != *c && !rows[i][j].is_zero() {
                expr = expr.sub(&Poly::var(&unknowns[j]).scale(&rows[i][j]));
            }
        }
        parts.push(format!("{} = {expr}", unknowns[*c]));
    }
    let free: Vec<&String> = (0..n).filter(|c| !pivots.contains(c)).map(|c| &unknowns[c]).collect();
    let mut out = parts.join(", ");
    if !free.is_empty() {
        out.push_str(&format!(
            " (infinitely many solutions: {} free)",
            free.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(out)
}

pub(super) fn substitute_solve(
    polys: Vec<Poly>,
    unknowns: Vec<String>,
    known: BTreeMap<String, Poly>,
    out: &mut Vec<BTreeMap<String, BigRational>>,
    depth: usize,
) -> Result<(), String> {
    if depth > 8 || out.len() > 50 {
        return Err("the system is too large for the substitution solver".into());
    }
    let polys: Vec<Poly> = polys.into_iter().filter(|p| !p.is_zero()).collect();
    if polys.iter().any(|p| p.as_constant().is_some()) {
        return Ok(()); // a contradiction: this branch has no solution
    }
    let remaining: Vec<String> = unknowns.iter().filter(|u| !known.contains_key(*u)).cloned().collect();
    if polys.is_empty() {
        if !remaining.is_empty() {
            return Err(format!("infinitely many solutions ({} not determined)", remaining.join(", ")));
        }
        // Back-substitute in reverse order of elimination: every `known` is in terms of later ones.
        let mut values: BTreeMap<String, BigRational> = BTreeMap::new();
        for _ in 0..known.len() + 1 {
            for (v, p) in &known {
                if values.contains_key(v) {
                    continue;
                }
                let mut q = p.clone();
                for (w, val) in &values {
                    q = q.substitute(w, &Poly::constant(val.clone()))?;
                }
                if let Some(c) = q.as_constant() {
                    values.insert(v.clone(), c);
                }
            }
        }
        out.push(values);
        return Ok(());
    }
    // An unknown that appears linearly with a constant coefficient in some equation.
    for (i, p) in polys.iter().enumerate() {
        for v in &remaining {
            let c = p.coeffs_in(v);
            if c.len() == 2 && c[1].as_constant().is_some_and(|k| !k.is_zero()) {
                let k = c[1].as_constant().unwrap_or_else(BigRational::one);
                let value = c[0].scale(&(-k.recip()));
                let rest: Vec<Poly> = polys
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, q)| q.substitute(v, &value))
                    .collect::<Result<_, _>>()?;
                let mut known = known.clone();
                known.insert(v.clone(), value);
                return substitute_solve(rest, unknowns, known, out, depth + 1);
            }
        }
    }
    // An equation in one unknown: branch on its rational roots.
    for p in &polys {
        let vs = p.vars();
        if vs.len() == 1 {
            let v = vs.iter().next().cloned().unwrap_or_default();
            let u = p.to_univariate(&v).unwrap_or_default();
            let (rs, _) = roots(&u)?;
            let exact: Vec<BigRational> =
                rs.iter().filter_map(|(r, _)| if let Root::Exact(q) = r { Some(q.clone()) } else { None }).collect();
            if exact.len() < rs.len() {
                return Err(format!(
                    "{v} has irrational or complex roots here ({}); the system solver only follows exact rational roots",
                    rs.iter().map(|(r, _)| show_root(&v, r)).collect::<Vec<_>>().join(", ")
                ));
            }
            for q in exact {
                let value = Poly::constant(q);
                let rest: Vec<Poly> = polys.iter().map(|x| x.substitute(&v, &value)).collect::<Result<_, _>>()?;
                let mut known = known.clone();
                known.insert(v.clone(), value);
                substitute_solve(rest, unknowns.clone(), known, out, depth + 1)?;
            }
            return Ok(());
        }
    }
    Err("this non-linear system needs an equation that is linear in one unknown or has only one unknown".into())
}

// ---------------------------------------------------------------- derivatives
