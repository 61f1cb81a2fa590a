//! `algebra[...]`: a small, bounded computer algebra over exact rationals —
//! `simplify`, `expand`, `factor`, `solve` (one polynomial equation, or a small system) and
//! `diff` (derivatives of polynomial, rational and elementary expressions).
//!
//! No maintained CAS crate with a permissive licence covers this (see the commit that added
//! this file for the comparison), so it is written here on `poly`: expressions become
//! fractions of multivariate polynomials; one-variable fractions are reduced by a polynomial
//! gcd, others by exact division; factoring is over the rationals in one variable (square-free
//! parts, rational roots) and for homogeneous two-variable polynomials; equations of degree ≤ 2
//! are solved exactly (radicals for quadratics), higher degrees give exact rational roots and
//! numeric roots for the rest, saying so. Letters are single-letter variables (`xy` is x·y).

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::calc::{clip, exact_value};
use super::num::{decimal_sig, exact_int_root};
use super::parse::{parse, Node};
use super::poly::{self, Poly, UPoly, MAX_DEGREE};

pub const USAGE: &str = "write one of: simplify <expr>, expand <expr>, factor <expr>, solve <equation> [for x], \
solve <eq1>; <eq2> [for x, y], diff <expr> [wrt x]; e.g. algebra[factor x^3 - 2x^2 - x + 2]";

/// Most candidate rational roots tried (p/q with p | a0, q | an).
const MAX_CANDIDATES: usize = 20_000;
/// Trial division bound when listing divisors.
const TRIAL_LIMIT: u64 = 1_000_000;
/// Most nodes an expression tree may grow to while differentiating.
const MAX_TREE: usize = 20_000;

/// Run an algebra command: the result line, or what to write instead.
pub fn algebra(text: &str) -> Result<String, String> {
    let text = text.trim();
    let (cmd, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let rest = rest.trim();
    if rest.is_empty() {
        return Err(format!("Nothing to do. {USAGE}."));
    }
    let result = match cmd.to_lowercase().as_str() {
        "simplify" | "cancel" => simplify(rest),
        "expand" => expand(rest),
        "factor" | "factorise" | "factorize" => factor(rest),
        "solve" => solve(rest),
        "diff" | "derivative" | "differentiate" | "d" => diff(rest),
        other => return Err(format!("'{other}' is not an algebra command. {USAGE}.")),
    };
    result.map_err(|e| format!("Could not {cmd} '{}': {e}.", clip(rest)))
}

/// A fraction of polynomials.
#[derive(Debug, Clone)]
struct Frac {
    num: Poly,
    den: Poly,
}

impl Frac {
    fn poly(p: Poly) -> Frac {
        Frac { num: p, den: Poly::constant(BigRational::one()) }
    }

    fn add(&self, o: &Frac, sign: i64) -> Result<Frac, String> {
        let k = BigRational::from_integer(sign.into());
        if self.den == o.den {
            return reduce(Frac { num: self.num.add(&o.num.scale(&k)), den: self.den.clone() });
        }
        reduce(Frac { num: self.num.mul(&o.den)?.add(&o.num.mul(&self.den)?.scale(&k)), den: self.den.mul(&o.den)? })
    }

    fn mul(&self, o: &Frac) -> Result<Frac, String> {
        reduce(Frac { num: self.num.mul(&o.num)?, den: self.den.mul(&o.den)? })
    }

    fn recip(&self) -> Result<Frac, String> {
        if self.num.is_zero() {
            return Err("division by zero".into());
        }
        reduce(Frac { num: self.den.clone(), den: self.num.clone() })
    }

    fn vars(&self) -> BTreeSet<String> {
        let mut v = self.num.vars();
        v.extend(self.den.vars());
        v
    }
}

/// Cancel common factors: a one-variable gcd, exact division, monomial and numeric content.
fn reduce(f: Frac) -> Result<Frac, String> {
    let Frac { mut num, mut den } = f;
    if den.is_zero() {
        return Err("division by zero".into());
    }
    if num.is_zero() {
        return Ok(Frac::poly(Poly::default()));
    }
    if let Some(k) = den.as_constant() {
        return Ok(Frac::poly(num.scale(&k.recip())));
    }
    let vars: BTreeSet<String> = num.vars().union(&den.vars()).cloned().collect();
    if vars.len() == 1 {
        let v = vars.iter().next().cloned().unwrap_or_default();
        if let (Some(a), Some(b)) = (num.to_univariate(&v), den.to_univariate(&v)) {
            let g = poly::ugcd(&a, &b);
            if poly::udeg(&g) > 0 {
                num = Poly::from_univariate(&poly::udivrem(&a, &g).0, &v);
                den = Poly::from_univariate(&poly::udivrem(&b, &g).0, &v);
            }
        }
    } else {
        if let Some(q) = num.exact_div(&den) {
            return Ok(Frac::poly(q));
        }
        let (mn, md) = (num.monomial_content(), den.monomial_content());
        let common: poly::Mono = mn.iter().filter_map(|(v, e)| md.get(v).map(|f| (v.clone(), *e.min(f)))).collect();
        if !common.is_empty() {
            let m = Poly { terms: BTreeMap::from([(common, BigRational::one())]) };
            num = num.exact_div(&m).unwrap_or(num);
            den = den.exact_div(&m).unwrap_or(den);
        }
    }
    // A monic-looking denominator: its leading coefficient 1.
    if let Some((_, c)) = den.leading() {
        let k = c.recip();
        num = num.scale(&k);
        den = den.scale(&k);
    }
    if let Some(k) = den.as_constant() {
        return Ok(Frac::poly(num.scale(&k.recip())));
    }
    Ok(Frac { num, den })
}

fn to_frac(node: &Node) -> Result<Frac, String> {
    match node {
        Node::Num(q) => Ok(Frac::poly(Poly::constant(q.clone()))),
        Node::Var(name) => {
            if name == "pi" || name == "e" {
                return Err(format!("'{name}' is irrational; algebra works with rational numbers and letters"));
            }
            // `xy` is x·y; `x1` stays one variable.
            let is_run = name.chars().all(char::is_alphabetic) && name.chars().count() > 1;
            if is_run {
                let mut p = Poly::constant(BigRational::one());
                for c in name.chars() {
                    p = p.mul(&Poly::var(&c.to_string()))?;
                }
                return Ok(Frac::poly(p));
            }
            Ok(Frac::poly(Poly::var(name)))
        }
        Node::Neg(x) => {
            let f = to_frac(x)?;
            Ok(Frac { num: f.num.neg(), den: f.den })
        }
        Node::Sum(terms) => {
            let mut acc = Frac::poly(Poly::default());
            for (minus, t) in terms {
                acc = acc.add(&to_frac(t)?, if *minus { -1 } else { 1 })?;
            }
            Ok(acc)
        }
        Node::Product(factors) => {
            let mut acc = Frac::poly(Poly::constant(BigRational::one()));
            for (divide, f) in factors {
                let f = to_frac(f)?;
                acc = acc.mul(&if *divide { f.recip()? } else { f })?;
            }
            Ok(acc)
        }
        Node::Pow(b, e) => {
            let e = exact_value(e)
                .filter(BigRational::is_integer)
                .ok_or("only whole-number powers are supported here (roots and symbolic exponents only in diff)")?;
            let n = e.to_integer().abs().to_u32().filter(|n| *n <= MAX_DEGREE).ok_or_else(|| {
                format!("the power {e} is too large (up to {MAX_DEGREE})")
            })?;
            let b = to_frac(b)?;
            let p = Frac { num: b.num.pow(n)?, den: b.den.pow(n)? };
            if e.is_negative() {
                p.recip()
            } else {
                Ok(p)
            }
        }
        // `c(x + 1)` and `p(x)` are products, not binomials, when they take one argument.
        Node::Call(name, args) if (name == "c" || name == "p") && args.len() == 1 => {
            Ok(Frac::poly(Poly::var(name)).mul(&to_frac(&args[0])?)?)
        }
        other => exact_value(other).map(|q| Frac::poly(Poly::constant(q))).ok_or_else(|| {
            "only polynomials and fractions of polynomials are supported here (functions like sqrt or sin: use diff)".into()
        }),
    }
}

fn show_frac(f: &Frac) -> String {
    if f.den.as_constant().is_some() {
        return f.num.to_string();
    }
    let wrap = |p: &Poly| if p.terms.len() > 1 { format!("({p})") } else { p.to_string() };
    format!("{}/{}", wrap(&f.num), wrap(&f.den))
}

fn simplify(text: &str) -> Result<String, String> {
    let f = to_frac(&parse(text)?)?;
    Ok(show_frac(&f))
}

fn expand(text: &str) -> Result<String, String> {
    let f = to_frac(&parse(text)?)?;
    Ok(show_frac(&f))
}

// ---------------------------------------------------------------- factoring

/// Divisors of |n| (n ≠ 0), or None when there would be too many or n is too large to split.
fn divisors(n: &BigInt) -> Option<Vec<BigInt>> {
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
fn rational_roots(p: &UPoly) -> Result<Vec<BigRational>, String> {
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
type IntFactor = (Vec<BigInt>, u32);

/// A factorisation over the rationals of a one-variable polynomial: the constant, then
/// primitive integer factors with multiplicities (linear ones first).
fn factor_univariate(p: &UPoly) -> Result<(BigRational, Vec<IntFactor>), String> {
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

fn int_poly(f: &[BigInt], v: &str) -> Poly {
    Poly::from_univariate(&f.iter().map(|c| BigRational::from_integer(c.clone())).collect(), v)
}

fn show_factors(constant: &BigRational, factors: &[(Poly, u32)]) -> String {
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

fn factor(text: &str) -> Result<String, String> {
    let f = to_frac(&parse(text)?)?;
    if f.den.as_constant().is_none() {
        let (n, d) = (factor_poly(&f.num)?, factor_poly(&f.den)?);
        return Ok(format!("({})/({})", n.0, d.0));
    }
    let (s, note) = factor_poly(&f.num)?;
    Ok(format!("{s}{note}"))
}

/// Factor a polynomial: (text, note about what may factor further).
fn factor_poly(p: &Poly) -> Result<(String, String), String> {
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

fn leftover_note(degrees: impl Iterator<Item = usize>) -> String {
    if degrees.into_iter().any(|d| d >= 4) {
        " (factors of degree ≥ 4 have no rational roots but may still split into quadratics)".into()
    } else {
        String::new()
    }
}

/// Two variables and every term of the same total degree.
fn homogeneous_pair(p: &Poly) -> Option<(String, String)> {
    let vars: Vec<String> = p.vars().into_iter().collect();
    if vars.len() != 2 {
        return None;
    }
    let d = p.total_degree();
    p.terms.keys().all(|m| m.values().sum::<u32>() == d).then(|| (vars[0].clone(), vars[1].clone()))
}

// ---------------------------------------------------------------- solving

/// A root of a one-variable polynomial.
#[derive(Debug, Clone)]
enum Root {
    Exact(BigRational),
    /// Text of an exact radical form, and its value when real.
    Radical(String, Option<f64>),
    /// A numeric root (re, im).
    Numeric(f64, f64),
}

fn show_root(v: &str, r: &Root) -> String {
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
fn sqrt_text(q: &BigRational) -> (String, f64) {
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
fn roots(p: &UPoly) -> Result<(Vec<(Root, u32)>, bool), String> {
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
fn numeric_roots(p: &UPoly) -> Vec<(f64, f64)> {
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
fn split_solve(text: &str) -> (Vec<String>, Vec<String>) {
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
fn equation(text: &str) -> Result<(Frac, BTreeSet<String>), String> {
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

fn solve(text: &str) -> Result<String, String> {
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

fn solve_one(eq: &Frac, v: &str) -> Result<String, String> {
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
fn solve_system(eqs: &[Frac], unknowns: &[String]) -> Result<String, String> {
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

fn gauss(polys: &[Poly], unknowns: &[String]) -> Result<String, String> {
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

fn substitute_solve(
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

/// An expression tree for derivatives of non-rational expressions.
#[derive(Debug, Clone, PartialEq)]
enum E {
    Num(BigRational),
    Var(String),
    Add(Vec<E>),
    Mul(Vec<E>),
    Pow(Box<E>, Box<E>),
    Fn(String, Box<E>),
}

fn num(n: i64) -> E {
    E::Num(BigRational::from_integer(n.into()))
}

fn to_e(node: &Node) -> Result<E, String> {
    Ok(match node {
        Node::Num(q) => E::Num(q.clone()),
        Node::Var(v) => E::Var(v.clone()),
        Node::Neg(x) => E::Mul(vec![num(-1), to_e(x)?]),
        Node::Sum(ts) => E::Add(
            ts.iter()
                .map(|(m, t)| Ok(if *m { E::Mul(vec![num(-1), to_e(t)?]) } else { to_e(t)? }))
                .collect::<Result<_, String>>()?,
        ),
        Node::Product(fs) => E::Mul(
            fs.iter()
                .map(|(d, f)| Ok(if *d { E::Pow(Box::new(to_e(f)?), Box::new(num(-1))) } else { to_e(f)? }))
                .collect::<Result<_, String>>()?,
        ),
        Node::Pow(b, e) => E::Pow(Box::new(to_e(b)?), Box::new(to_e(e)?)),
        Node::Call(name, args) if args.len() == 1 => {
            let a = to_e(&args[0])?;
            match name.as_str() {
                "sqrt" => E::Pow(Box::new(a), Box::new(E::Num(BigRational::new(1.into(), 2.into())))),
                "cbrt" => E::Pow(Box::new(a), Box::new(E::Num(BigRational::new(1.into(), 3.into())))),
                "exp" | "ln" | "log" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" => {
                    E::Fn(if name == "log" { "ln".into() } else { name.clone() }, Box::new(a))
                }
                "c" | "p" => E::Mul(vec![E::Var(name.clone()), a]),
                other => return Err(format!("diff does not know {other}()")),
            }
        }
        other => {
            E::Num(exact_value(other).ok_or("diff handles + - * / ^, sqrt, exp, ln, sin, cos, tan, asin, acos, atan")?)
        }
    })
}

fn size(e: &E) -> usize {
    match e {
        E::Num(_) | E::Var(_) => 1,
        E::Add(v) | E::Mul(v) => 1 + v.iter().map(size).sum::<usize>(),
        E::Pow(a, b) => 1 + size(a) + size(b),
        E::Fn(_, a) => 1 + size(a),
    }
}

fn free_of(e: &E, v: &str) -> bool {
    match e {
        E::Num(_) => true,
        E::Var(x) => x != v,
        E::Add(xs) | E::Mul(xs) => xs.iter().all(|x| free_of(x, v)),
        E::Pow(a, b) => free_of(a, v) && free_of(b, v),
        E::Fn(_, a) => free_of(a, v),
    }
}

fn d(e: &E, v: &str) -> E {
    if free_of(e, v) {
        return num(0);
    }
    match e {
        E::Num(_) => num(0),
        E::Var(x) => num(if x == v { 1 } else { 0 }),
        E::Add(xs) => E::Add(xs.iter().map(|x| d(x, v)).collect()),
        E::Mul(xs) => E::Add(
            (0..xs.len())
                .map(|i| E::Mul(xs.iter().enumerate().map(|(j, x)| if i == j { d(x, v) } else { x.clone() }).collect()))
                .collect(),
        ),
        E::Pow(b, ex) if free_of(ex, v) => {
            E::Mul(vec![(**ex).clone(), E::Pow(b.clone(), Box::new(E::Add(vec![(**ex).clone(), num(-1)]))), d(b, v)])
        }
        E::Pow(b, ex) if **b == E::Var("e".into()) => E::Mul(vec![e.clone(), d(ex, v)]),
        E::Pow(b, ex) => E::Mul(vec![
            e.clone(),
            E::Add(vec![
                E::Mul(vec![d(ex, v), E::Fn("ln".into(), b.clone())]),
                E::Mul(vec![(**ex).clone(), d(b, v), E::Pow(b.clone(), Box::new(num(-1)))]),
            ]),
        ]),
        E::Fn(f, a) => {
            let da = d(a, v);
            let a = (**a).clone();
            let half = E::Num(BigRational::new((-1).into(), 2.into()));
            let outer = match f.as_str() {
                "sin" => E::Fn("cos".into(), Box::new(a)),
                "cos" => E::Mul(vec![num(-1), E::Fn("sin".into(), Box::new(a))]),
                "tan" => E::Pow(Box::new(E::Fn("cos".into(), Box::new(a))), Box::new(num(-2))),
                "exp" => E::Fn("exp".into(), Box::new(a)),
                "ln" => E::Pow(Box::new(a), Box::new(num(-1))),
                "asin" => E::Pow(
                    Box::new(E::Add(vec![num(1), E::Mul(vec![num(-1), E::Pow(Box::new(a), Box::new(num(2)))])])),
                    Box::new(half),
                ),
                "acos" => E::Mul(vec![
                    num(-1),
                    E::Pow(
                        Box::new(E::Add(vec![num(1), E::Mul(vec![num(-1), E::Pow(Box::new(a), Box::new(num(2)))])])),
                        Box::new(half),
                    ),
                ]),
                _ => E::Pow(Box::new(E::Add(vec![num(1), E::Pow(Box::new(a), Box::new(num(2)))])), Box::new(num(-1))),
            };
            E::Mul(vec![outer, da])
        }
    }
}

/// Light simplification: flatten, fold numbers, drop 0 and 1, merge equal bases.
fn simp(e: E) -> E {
    match e {
        E::Add(xs) => {
            let mut flat = Vec::new();
            let mut k = BigRational::zero();
            for x in xs.into_iter().map(simp) {
                match x {
                    E::Num(q) => k += q,
                    E::Add(ys) => flat.extend(ys),
                    other => flat.push(other),
                }
            }
            if !k.is_zero() {
                flat.push(E::Num(k));
            }
            match flat.len() {
                0 => num(0),
                1 => flat.remove(0),
                _ => E::Add(flat),
            }
        }
        E::Mul(xs) => {
            let mut k = BigRational::one();
            let mut bases: Vec<(E, E)> = Vec::new();
            let mut stack: Vec<E> = xs.into_iter().map(simp).collect();
            while let Some(x) = stack.pop() {
                match x {
                    E::Num(q) => k *= q,
                    E::Mul(ys) => stack.extend(ys),
                    other => {
                        let (b, ex) = match other {
                            E::Pow(b, ex) => (*b, *ex),
                            o => (o, num(1)),
                        };
                        if let Some(slot) = bases.iter_mut().find(|(bb, _)| *bb == b) {
                            slot.1 = simp(E::Add(vec![slot.1.clone(), ex]));
                        } else {
                            bases.push((b, ex));
                        }
                    }
                }
            }
            if k.is_zero() {
                return num(0);
            }
            let mut out: Vec<E> = bases
                .into_iter()
                .rev()
                .filter_map(|(b, ex)| match ex {
                    E::Num(q) if q.is_zero() => None,
                    E::Num(q) if q.is_one() => Some(b),
                    ex => Some(E::Pow(Box::new(b), Box::new(ex))),
                })
                .collect();
            if !k.is_one() || out.is_empty() {
                out.insert(0, E::Num(k));
            }
            if out.len() == 1 {
                out.remove(0)
            } else {
                E::Mul(out)
            }
        }
        E::Pow(b, ex) => {
            let (b, ex) = (simp(*b), simp(*ex));
            match (&b, &ex) {
                (_, E::Num(q)) if q.is_zero() => num(1),
                (_, E::Num(q)) if q.is_one() => b,
                (E::Num(a), E::Num(q))
                    if q.is_integer()
                        && q.abs() <= BigRational::from_integer(20.into())
                        && !(a.is_zero() && q.is_negative()) =>
                {
                    let n = q.to_integer().to_i32().unwrap_or(1);
                    E::Num(num_traits::pow::Pow::pow(a, n))
                }
                _ => E::Pow(Box::new(b), Box::new(ex)),
            }
        }
        E::Fn(f, a) => E::Fn(f, Box::new(simp(*a))),
        other => other,
    }
}

fn show_e(e: &E) -> String {
    match e {
        E::Num(q) => q.to_string(),
        E::Var(v) => v.clone(),
        E::Add(xs) => {
            let mut s = String::new();
            for (i, x) in xs.iter().enumerate() {
                let t = show_e(x);
                if i == 0 {
                    s.push_str(&t);
                } else if let Some(rest) = t.strip_prefix('-') {
                    s.push_str(" - ");
                    s.push_str(rest);
                } else {
                    s.push_str(" + ");
                    s.push_str(&t);
                }
            }
            s
        }
        E::Mul(xs) => {
            let mut num_parts = Vec::new();
            let mut den_parts = Vec::new();
            let mut sign = "";
            for x in xs {
                match x {
                    E::Num(q) if *q == -BigRational::one() => sign = "-",
                    E::Pow(b, ex) if matches!(&**ex, E::Num(q) if q.is_negative()) => {
                        let E::Num(q) = &**ex else { continue };
                        let pos = -q.clone();
                        den_parts.push(if pos.is_one() {
                            atom(b)
                        } else {
                            format!("{}^{}", atom(b), atom(&E::Num(pos)))
                        });
                    }
                    other => num_parts.push(if matches!(other, E::Add(_)) {
                        format!("({})", show_e(other))
                    } else {
                        show_e(other)
                    }),
                }
            }
            let top = if num_parts.is_empty() { "1".to_string() } else { num_parts.join("*") };
            if den_parts.is_empty() {
                format!("{sign}{top}")
            } else if den_parts.len() == 1 {
                format!("{sign}{top}/{}", den_parts[0])
            } else {
                format!("{sign}{top}/({})", den_parts.join("*"))
            }
        }
        E::Pow(_, ex) if matches!(&**ex, E::Num(q) if q.is_negative()) => show_e(&E::Mul(vec![e.clone()])),
        E::Pow(b, ex) => {
            if let E::Num(q) = &**ex {
                if *q == BigRational::new(1.into(), 2.into()) {
                    return format!("sqrt({})", show_e(b));
                }
            }
            format!("{}^{}", atom(b), atom(ex))
        }
        E::Fn(f, a) => format!("{f}({})", show_e(a)),
    }
}

fn atom(e: &E) -> String {
    match e {
        E::Var(_) | E::Fn(..) => show_e(e),
        E::Num(q) if q.is_integer() && !q.is_negative() => show_e(e),
        _ => format!("({})", show_e(e)),
    }
}

fn diff(text: &str) -> Result<String, String> {
    let lower = text.to_lowercase();
    let (expr, var) = match lower.rfind(" wrt ").or_else(|| lower.rfind(" for ")) {
        Some(i) => (&text[..i], text[i + 5..].trim().to_lowercase()),
        None => (text, String::new()),
    };
    let node = parse(expr)?;
    let var = if var.is_empty() {
        let vars = node_vars(&node);
        match vars.len() {
            0 => "x".to_string(),
            1 => vars.into_iter().next().unwrap_or_default(),
            _ if vars.contains("x") => "x".to_string(),
            _ => return Err("there are several letters: say which, e.g. 'diff a*t^2 wrt t'".into()),
        }
    } else {
        var
    };
    // Polynomials and fractions: the exact quotient rule, then cancellation.
    if let Ok(f) = to_frac(&node) {
        let top = f.num.diff(&var).mul(&f.den)?.sub(&f.num.mul(&f.den.diff(&var))?);
        let g = reduce(Frac { num: top, den: f.den.mul(&f.den)? })?;
        return Ok(format!("d/d{var} = {}", show_frac(&g)));
    }
    let e = to_e(&node)?;
    let de = d(&e, &var);
    if size(&de) > MAX_TREE {
        return Err("the derivative is too large".into());
    }
    Ok(format!("d/d{var} = {}", show_e(&simp(de))))
}

fn node_vars(node: &Node) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    fn walk(n: &Node, out: &mut BTreeSet<String>) {
        match n {
            Node::Var(v) if v != "pi" && v != "e" => {
                out.insert(v.clone());
            }
            Node::Var(_) | Node::Num(_) => {}
            Node::Neg(x) | Node::Fact(x) => walk(x, out),
            Node::Sum(xs) | Node::Product(xs) => xs.iter().for_each(|(_, x)| walk(x, out)),
            Node::Pow(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            Node::Call(_, args) => args.iter().for_each(|a| walk(a, out)),
        }
    }
    walk(node, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> String {
        algebra(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn expand_and_simplify() {
        assert_eq!(ok("expand (x + 1)^3"), "x^3 + 3*x^2 + 3*x + 1");
        assert_eq!(ok("expand (a - b)(a + b)"), "a^2 - b^2");
        assert_eq!(ok("simplify (x^2 - 1)/(x - 1)"), "x + 1");
        assert_eq!(ok("simplify (x^2 - y^2)/(x + y)"), "x - y");
        assert_eq!(ok("simplify 1/x + 1/(x + 1)"), "(2*x + 1)/(x^2 + x)");
        assert_eq!(ok("simplify (2x + 4)/6"), "1/3*x + 2/3");
        assert_eq!(ok("expand 2xy + yx"), "3*x*y");
    }

    #[test]
    fn factor_over_the_rationals() {
        assert_eq!(ok("factor x^3 - 2x^2 - x + 2"), "(x + 1)*(x - 1)*(x - 2)");
        assert_eq!(ok("factor 2x^2 - 8"), "2*(x + 2)*(x - 2)");
        assert_eq!(ok("factor x^4 - 2x^2 + 1"), "(x + 1)^2*(x - 1)^2");
        assert_eq!(ok("factor 6x^2 + x - 2"), "(3*x + 2)*(2*x - 1)");
        assert_eq!(ok("factor x^3 + x"), "x*(x^2 + 1)");
        assert_eq!(ok("factor x^2 - y^2"), "(x + y)*(x - y)");
        assert_eq!(ok("factor x^2*y + x*y^2"), "x*y*(x + y)");
        assert!(ok("factor x^4 + 4").contains("may still split"), "x^4+4 = (x^2-2x+2)(x^2+2x+2) is not found");
        assert_eq!(ok("factor x^2 - 2"), "x^2 - 2", "irreducible over the rationals");
        assert_eq!(ok("factor (x^2 - 1)/(x^2 + 2x + 1)"), "(x - 1)/(x + 1)");
    }

    #[test]
    fn solve_equations() {
        assert_eq!(ok("solve x^2 - 5x + 6 = 0"), "x = 2; x = 3");
        assert_eq!(ok("solve 2x + 3 = 7"), "x = 2");
        assert_eq!(ok("solve x^2 = 2"), "x = sqrt(2) (≈ 1.4142135624); x = -sqrt(2) (≈ -1.4142135624)");
        assert_eq!(
            ok("solve x^2 + x - 1 = 0"),
            "x = -1/2 + sqrt(5)/2 (≈ 0.6180339887); x = -1/2 - sqrt(5)/2 (≈ -1.6180339887)"
        );
        assert_eq!(ok("solve x^2 + 1 = 0"), "x = sqrt(1)*i; x = -sqrt(1)*i".replace("sqrt(1)", "1"));
        assert_eq!(ok("solve (x - 1)^2 = 0"), "x = 1 (multiplicity 2)");
        let s = ok("solve x^3 - 2 = 0");
        assert!(s.starts_with("x ≈ 1.259921049895") && s.contains("numeric"), "{s}");
        assert_eq!(ok("solve 3/x = 1/2"), "x = 6");
        assert_eq!(ok("solve (x^2 - 1)/(x - 1) = 0"), "x = -1", "x = 1 cancels with the denominator");
        let s = ok("solve x/(x - 1) = 1/(x - 1)");
        assert!(s.starts_with("no solution"), "{s}");
        assert_eq!(ok("solve a*t + b = 0 for t"), "t = -b/a (when a ≠ 0)");
        assert_eq!(ok("solve x + 1 = x + 1"), "every x is a solution (the equation is an identity)");
    }

    #[test]
    fn solve_systems() {
        assert_eq!(ok("solve x + y = 10; x - y = 2"), "x = 6, y = 4");
        assert_eq!(ok("solve x + y = 3, 2x + 2y = 6 for x, y"), "x = -y + 3 (infinitely many solutions: y free)");
        assert_eq!(ok("solve x + y = 1; x + y = 2"), "no solution: the equations are inconsistent");
        assert_eq!(ok("solve x + y = 10; x*y = 21"), "(x = 7, y = 3); (x = 3, y = 7)");
        assert_eq!(ok("solve x^2 = 4; x*y = 6"), "(x = -2, y = -3); (x = 2, y = 3)");
        assert!(algebra("solve x^2 + y^2 = 25; x*y = 12").unwrap_err().contains("linear in one unknown"));
    }

    #[test]
    fn derivatives() {
        assert_eq!(ok("diff x^3 + 2x"), "d/dx = 3*x^2 + 2");
        assert_eq!(ok("diff 1/x"), "d/dx = -1/x^2");
        assert_eq!(ok("diff a*t^2 wrt t"), "d/dt = 2*a*t");
        assert_eq!(ok("diff sin(x^2)"), "d/dx = 2*cos(x^2)*x");
        assert_eq!(ok("diff sqrt(x)"), "d/dx = 1/2/x^(1/2)");
        assert_eq!(ok("diff exp(2x)"), "d/dx = 2*exp(2*x)");
        assert_eq!(ok("diff ln(x)"), "d/dx = 1/x");
    }

    #[test]
    fn bounds_and_errors() {
        assert!(algebra("expand (x + y + z + w)^50").unwrap_err().contains("terms"));
        assert!(algebra("expand x^100").unwrap_err().contains("too large"));
        assert!(algebra("frobnicate x").unwrap_err().contains("not an algebra command"));
        assert!(algebra("factor").unwrap_err().contains("Nothing to do"));
        assert!(algebra("simplify sqrt(x)").unwrap_err().contains("use diff"));
        assert!(algebra("solve x = 1 = 2").unwrap_err().contains("more than one '='"));
        assert!(algebra("simplify 1/(x - x)").unwrap_err().contains("division by zero"));
        assert!(algebra("solve x^2 + y = 1; y^2 + x*y = 3; x^3 = y").is_err());
        assert!(algebra("factor x^2 - 1000000000000000000000000000000007").unwrap_err().contains("too large"));
    }
}
