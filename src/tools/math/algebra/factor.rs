//! `factor`: rational roots by the rational root test, integer factors of univariate
//! polynomials, and the homogeneous two-variable case.

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use crate::tools::math::parse::parse;
use crate::tools::math::poly::{self, Poly, UPoly};

use super::*;

/// Divisors of |n| (n ≠ 0), or None when there would be too many or n is too large to split.
pub(super) fn divisors(n: &BigInt) -> Option<Vec<BigInt>> {
    let mut n = n.abs();
    let mut primes: Vec<(BigInt, u32)> = Vec::new();
    let mut p = 2u64;
    while p <= TRIAL_LIMIT && BigInt::from(p) * BigInt::from(p) <= n {
        let bp = BigInt::from(p);
        let mut e = 0;
        while (&n % &bp).is_zero() {
            n /= &bp;
            e += 1;
        }
        if e > 0 {
            primes.push((bp, e));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if n > BigInt::one() {
        // What remains is prime when it is below TRIAL_LIMIT²; above, it may not be, and the
        // divisor list could miss candidates: refuse rather than give an incomplete factoring.
        if n > BigInt::from(TRIAL_LIMIT) * BigInt::from(TRIAL_LIMIT) {
            return None;
        }
        primes.push((n, 1));
    }
    let mut out = vec![BigInt::one()];
    for (p, e) in primes {
        let mut next = Vec::new();
        for d in &out {
            let mut pe = BigInt::one();
            for _ in 0..=e {
                next.push(d * &pe);
                pe *= &p;
            }
        }
        out = next;
        if out.len() > MAX_CANDIDATES {
            return None;
        }
    }
    Some(out)
}

/// The rational roots of a polynomial (each once), in increasing order.
pub(super) fn rational_roots(p: &UPoly) -> Result<Vec<BigRational>, String> {
    let mut roots = Vec::new();
    let mut p = poly::trim(p.clone());
    if p.is_empty() {
        return Ok(roots);
    }
    if p[0].is_zero() {
        roots.push(BigRational::zero());
        while p.first().is_some_and(Zero::is_zero) {
            p.remove(0);
        }
    }
    if poly::udeg(&p) == 0 {
        return Ok(roots);
    }
    let ints = poly::to_primitive_integer(&p);
    let (a0, an) = (&ints[0], &ints[ints.len() - 1]);
    let (Some(ps), Some(qs)) = (divisors(a0), divisors(an)) else {
        return Err("the coefficients are too large to search for rational roots".into());
    };
    if ps.len().saturating_mul(qs.len()) > MAX_CANDIDATES {
        return Err("there are too many candidate rational roots to try".into());
    }
    let mut found = BTreeSet::new();
    for q in &qs {
        for pn in &ps {
            if !pn.gcd(q).is_one() {
                continue;
            }
            for sign in [1i64, -1] {
                let r = BigRational::new(pn * BigInt::from(sign), q.clone());
                if poly::ueval(&p, &r).is_zero() {
                    found.insert(r);
                }
            }
        }
    }
    roots.extend(found);
    roots.sort();
    Ok(roots)
}

/// A primitive integer polynomial (coefficient i of x^i) and its multiplicity.
pub(super) type IntFactor = (Vec<BigInt>, u32);

/// A factorisation over the rationals of a one-variable polynomial: the constant, then
/// primitive integer factors with multiplicities (linear ones first).
pub(super) fn factor_univariate(p: &UPoly) -> Result<(BigRational, Vec<IntFactor>), String> {
    let p = poly::trim(p.clone());
    let lead = p.last().cloned().unwrap_or_default();
    let mut factors: Vec<(Vec<BigInt>, u32)> = Vec::new();
    for (part, mult) in poly::square_free(&p) {
        let mut rest = part;
        for r in rational_roots(&rest)? {
            let lin = vec![-r.clone(), BigRational::one()];
            rest = poly::udivrem(&rest, &lin).0;
            factors.push((poly::to_primitive_integer(&lin), mult));
        }
        if poly::udeg(&rest) > 0 {
            factors.push((poly::to_primitive_integer(&rest), mult));
        }
    }
    // The constant: p / Π factors (all factors have positive leading coefficients).
    let mut lead_product = BigRational::one();
    for (f, m) in &factors {
        let l = BigRational::from_integer(f.last().cloned().unwrap_or_else(BigInt::one));
        for _ in 0..*m {
            lead_product *= &l;
        }
    }
    factors.sort_by_key(|(f, _)| f.len());
    Ok((lead / lead_product, factors))
}

pub(super) fn int_poly(f: &[BigInt], v: &str) -> Poly {
    Poly::from_univariate(&f.iter().map(|c| BigRational::from_integer(c.clone())).collect(), v)
}

pub(super) fn show_factors(constant: &BigRational, factors: &[(Poly, u32)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (f, m) in factors {
        let s = if f.terms.len() > 1 { format!("({f})") } else { f.to_string() };
        parts.push(if *m > 1 { format!("{s}^{m}") } else { s });
    }
    if parts.is_empty() {
        return constant.to_string();
    }
    if let [(f, 1)] = factors {
        if constant.is_one() {
            return f.to_string();
        }
    }
    let body = parts.join("*");
    if constant.is_one() {
        body
    } else if *constant == -BigRational::one() {
        format!("-{body}")
    } else {
        format!("{constant}*{body}")
    }
}

pub(super) fn factor(text: &str) -> Result<String, String> {
    let f = to_frac(&parse(text)?)?;
    if f.den.as_constant().is_none() {
        let (n, d) = (factor_poly(&f.num)?, factor_poly(&f.den)?);
        return Ok(format!("({})/({})", n.0, d.0));
    }
    let (s, note) = factor_poly(&f.num)?;
    Ok(format!("{s}{note}"))
}

/// Factor a polynomial: (text, note about what may factor further).
pub(super) fn factor_poly(p: &Poly) -> Result<(String, String), String> {
    let vars = p.vars();
    if vars.is_empty() {
        return Ok((p.to_string(), String::new()));
    }
    // The common monomial, then the rest.
    let mono = p.monomial_content();
    let mono_poly = Poly { terms: BTreeMap::from([(mono.clone(), BigRational::one())]) };
    let rest = p.exact_div(&mono_poly).ok_or("internal: monomial content does not divide")?;
    let mut out: Vec<(Poly, u32)> = mono.iter().map(|(v, e)| (Poly::var(v), *e)).collect();
    let rest_vars = rest.vars();
    let (constant, note) = if rest_vars.len() == 1 {
        let v = rest_vars.iter().next().cloned().unwrap_or_default();
        let u = rest.to_univariate(&v).ok_or("internal: not univariate")?;
        let (c, fs) = factor_univariate(&u)?;
        let note = leftover_note(fs.iter().map(|(f, _)| f.len() - 1));
        out.extend(fs.iter().map(|(f, m)| (int_poly(f, &v), *m)));
        (c, note)
    } else if let Some((x, y)) = homogeneous_pair(&rest) {
        // f(x, y) = y^d · f(x/y, 1): factor f(x, 1) and put y back in each factor.
        let u = rest.substitute(&y, &Poly::constant(BigRational::one()))?.to_univariate(&x).unwrap_or_default();
        let (c, fs) = factor_univariate(&u)?;
        let d = rest.total_degree();
        let mut used = 0;
        for (f, m) in &fs {
            let k = f.len() - 1;
            let mut terms = BTreeMap::new();
            for (i, coef) in f.iter().enumerate() {
                if !coef.is_zero() {
                    let mut mono = poly::Mono::new();
                    if i > 0 {
                        mono.insert(x.clone(), i as u32);
                    }
                    if k - i > 0 {
                        mono.insert(y.clone(), (k - i) as u32);
                    }
                    terms.insert(mono, BigRational::from_integer(coef.clone()));
                }
            }
            used += k as u32 * m;
            out.push((Poly { terms }, *m));
        }
        if d > used {
            out.push((Poly::var(&y), d - used));
        }
        (c, leftover_note(fs.iter().map(|(f, _)| f.len() - 1)))
    } else {
        let (c, prim) = rest.primitive();
        if !(prim.as_constant().is_some_and(|k| k.is_one())) {
            out.push((prim, 1));
        }
        (c, " (common factors only: this polynomial in several variables is not factored further)".to_string())
    };
    out.retain(|(f, _)| f.as_constant().is_none_or(|k| !k.is_one()));
    Ok((show_factors(&constant, &out), note))
}

pub(super) fn leftover_note(degrees: impl Iterator<Item = usize>) -> String {
    if degrees.into_iter().any(|d| d >= 4) {
        " (factors of degree ≥ 4 have no rational roots but may still split into quadratics)".into()
    } else {
        String::new()
    }
}

/// Two variables and every term of the same total degree.
pub(super) fn homogeneous_pair(p: &Poly) -> Option<(String, String)> {
    let vars: Vec<String> = p.vars().into_iter().collect();
    if vars.len() != 2 {
        return None;
    }
    let d = p.total_degree();
    p.terms.keys().all(|m| m.values().sum::<u32>() == d).then(|| (vars[0].clone(), vars[1].clone()))
}

// ---------------------------------------------------------------- solving
