//! Exact polynomials over BigRational: multivariate (sparse, for expand / simplify / systems)
//! and univariate dense (for gcd, factoring and roots). Every operation checks the size
//! limits ([`MAX_DEGREE`], [`MAX_TERMS`]) so a model's input cannot blow up.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use super::num::show_integer;

pub const MAX_DEGREE: u32 = 50;
pub const MAX_TERMS: usize = 2000;

/// A monomial: exponent by variable name (no zero exponents).
pub type Mono = BTreeMap<String, u32>;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Poly {
    pub terms: BTreeMap<Mono, BigRational>,
}

fn degree(m: &Mono) -> u32 {
    m.values().sum()
}

/// Graded lexicographic order (variables alphabetically, x > y): a monomial order.
pub fn grlex(a: &Mono, b: &Mono) -> Ordering {
    degree(a).cmp(&degree(b)).then_with(|| {
        let vars: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for v in vars {
            let (ea, eb) = (a.get(v).copied().unwrap_or(0), b.get(v).copied().unwrap_or(0));
            if ea != eb {
                return ea.cmp(&eb);
            }
        }
        Ordering::Equal
    })
}

impl Poly {
    pub fn constant(q: BigRational) -> Poly {
        let mut terms = BTreeMap::new();
        if !q.is_zero() {
            terms.insert(Mono::new(), q);
        }
        Poly { terms }
    }

    pub fn var(name: &str) -> Poly {
        Poly { terms: BTreeMap::from([(Mono::from([(name.to_string(), 1)]), BigRational::one())]) }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn as_constant(&self) -> Option<BigRational> {
        match self.terms.len() {
            0 => Some(BigRational::zero()),
            1 => self.terms.get(&Mono::new()).cloned(),
            _ => None,
        }
    }

    pub fn vars(&self) -> BTreeSet<String> {
        self.terms.keys().flat_map(|m| m.keys().cloned()).collect()
    }

    pub fn degree_in(&self, v: &str) -> u32 {
        self.terms.keys().map(|m| m.get(v).copied().unwrap_or(0)).max().unwrap_or(0)
    }

    pub fn total_degree(&self) -> u32 {
        self.terms.keys().map(degree).max().unwrap_or(0)
    }

    fn check(self) -> Result<Poly, String> {
        if self.terms.len() > MAX_TERMS {
            return Err(format!("the expansion has more than {MAX_TERMS} terms"));
        }
        if self.terms.keys().any(|m| m.values().any(|e| *e > MAX_DEGREE)) {
            return Err(format!("a degree above {MAX_DEGREE} is not supported"));
        }
        Ok(self)
    }

    pub fn add(&self, other: &Poly) -> Poly {
        let mut terms = self.terms.clone();
        for (m, c) in &other.terms {
            let e = terms.entry(m.clone()).or_insert_with(BigRational::zero);
            *e += c;
            if e.is_zero() {
                terms.remove(m);
            }
        }
        Poly { terms }
    }

    pub fn scale(&self, k: &BigRational) -> Poly {
        if k.is_zero() {
            return Poly::default();
        }
        Poly { terms: self.terms.iter().map(|(m, c)| (m.clone(), c * k)).collect() }
    }

    pub fn neg(&self) -> Poly {
        self.scale(&-BigRational::one())
    }

    pub fn sub(&self, other: &Poly) -> Poly {
        self.add(&other.neg())
    }

    pub fn mul(&self, other: &Poly) -> Result<Poly, String> {
        if self.terms.len().saturating_mul(other.terms.len()) > MAX_TERMS * 20 {
            return Err(format!("the product is too large (more than {MAX_TERMS} terms)"));
        }
        let mut terms: BTreeMap<Mono, BigRational> = BTreeMap::new();
        for (ma, ca) in &self.terms {
            for (mb, cb) in &other.terms {
                let mut m = ma.clone();
                for (v, e) in mb {
                    *m.entry(v.clone()).or_insert(0) += e;
                }
                *terms.entry(m).or_insert_with(BigRational::zero) += ca * cb;
            }
        }
        terms.retain(|_, c| !c.is_zero());
        Poly { terms }.check()
    }

    pub fn pow(&self, n: u32) -> Result<Poly, String> {
        if n > MAX_DEGREE || self.total_degree().saturating_mul(n) > MAX_DEGREE * 2 {
            return Err(format!("the power {n} is too large (degrees up to {MAX_DEGREE} are supported)"));
        }
        let mut acc = Poly::constant(BigRational::one());
        for _ in 0..n {
            acc = acc.mul(self)?;
        }
        Ok(acc)
    }

    /// The leading term in grlex order.
    pub fn leading(&self) -> Option<(&Mono, &BigRational)> {
        self.terms.iter().max_by(|a, b| grlex(a.0, b.0))
    }

    /// `self / d` when `d` divides `self` exactly, else `None`.
    pub fn exact_div(&self, d: &Poly) -> Option<Poly> {
        let (dm, dc) = d.leading()?;
        let mut rest = self.clone();
        let mut quotient = Poly::default();
        for _ in 0..MAX_TERMS * 4 {
            let Some((rm, rc)) = rest.leading() else {
                return Some(quotient);
            };
            let mut m = Mono::new();
            for (v, e) in rm {
                let de = dm.get(v).copied().unwrap_or(0);
                if *e > de {
                    m.insert(v.clone(), e - de);
                }
            }
            if dm.iter().any(|(v, e)| rm.get(v).copied().unwrap_or(0) < *e) {
                return None;
            }
            let t = Poly { terms: BTreeMap::from([(m, rc / dc)]) };
            rest = rest.sub(&t.mul(d).ok()?);
            quotient = quotient.add(&t);
        }
        None
    }

    /// Substitute `v := value` (a polynomial).
    pub fn substitute(&self, v: &str, value: &Poly) -> Result<Poly, String> {
        let mut out = Poly::default();
        let mut powers: Vec<Poly> = vec![Poly::constant(BigRational::one())];
        for (m, c) in &self.terms {
            let e = m.get(v).copied().unwrap_or(0) as usize;
            while powers.len() <= e {
                let next = powers[powers.len() - 1].mul(value)?;
                powers.push(next);
            }
            let mut rest = m.clone();
            rest.remove(v);
            let term = Poly { terms: BTreeMap::from([(rest, c.clone())]) };
            out = out.add(&term.mul(&powers[e])?);
        }
        out.check()
    }

    /// Coefficients in `v` (index = power), each a polynomial in the other variables.
    pub fn coeffs_in(&self, v: &str) -> Vec<Poly> {
        let mut out = vec![Poly::default(); self.degree_in(v) as usize + 1];
        for (m, c) in &self.terms {
            let e = m.get(v).copied().unwrap_or(0) as usize;
            let mut rest = m.clone();
            rest.remove(v);
            out[e] = out[e].add(&Poly { terms: BTreeMap::from([(rest, c.clone())]) });
        }
        out
    }

    /// Dense coefficients when `v` is the only variable.
    pub fn to_univariate(&self, v: &str) -> Option<UPoly> {
        if self.vars().iter().any(|x| x != v) {
            return None;
        }
        Some(trim(self.coeffs_in(v).iter().map(|c| c.as_constant().unwrap_or_default()).collect()))
    }

    pub fn from_univariate(p: &UPoly, v: &str) -> Poly {
        let mut terms = BTreeMap::new();
        for (i, c) in p.iter().enumerate() {
            if !c.is_zero() {
                let m = if i == 0 { Mono::new() } else { Mono::from([(v.to_string(), i as u32)]) };
                terms.insert(m, c.clone());
            }
        }
        Poly { terms }
    }

    /// Partial derivative in `v`.
    pub fn diff(&self, v: &str) -> Poly {
        let mut terms = BTreeMap::new();
        for (m, c) in &self.terms {
            if let Some(e) = m.get(v).copied() {
                let mut m2 = m.clone();
                if e == 1 {
                    m2.remove(v);
                } else {
                    m2.insert(v.to_string(), e - 1);
                }
                *terms.entry(m2).or_insert_with(BigRational::zero) += c * BigRational::from_integer(e.into());
            }
        }
        terms.retain(|_, c: &mut BigRational| !c.is_zero());
        Poly { terms }
    }

    /// The numeric content made 1 with a positive leading coefficient: (factor, primitive).
    pub fn primitive(&self) -> (BigRational, Poly) {
        if self.is_zero() {
            return (BigRational::one(), self.clone());
        }
        let den = self.terms.values().fold(BigInt::one(), |a, c| a.lcm(c.denom()));
        let num = self.terms.values().fold(BigInt::zero(), |a, c| a.gcd(&(c.numer() * (&den / c.denom()))));
        let mut k = BigRational::new(num, den);
        if self.leading().is_some_and(|(_, c)| c.is_negative()) {
            k = -k;
        }
        (k.clone(), self.scale(&k.recip()))
    }

    /// The common monomial factor of all terms.
    pub fn monomial_content(&self) -> Mono {
        let mut it = self.terms.keys();
        let Some(first) = it.next() else { return Mono::new() };
        let mut common = first.clone();
        for m in it {
            common = common.into_iter().filter_map(|(v, e)| m.get(&v).map(|f| (v, e.min(*f)))).collect();
        }
        common
    }

    pub fn eval_f64(&self, values: &BTreeMap<String, f64>) -> f64 {
        self.terms
            .iter()
            .map(|(m, c)| {
                let c = num_traits::ToPrimitive::to_f64(c).unwrap_or(f64::NAN);
                m.iter().fold(c, |acc, (v, e)| acc * values.get(v).copied().unwrap_or(f64::NAN).powi(*e as i32))
            })
            .sum()
    }
}

/// A coefficient as text ("3", "1/2").
fn show_q(q: &BigRational) -> String {
    if q.is_integer() {
        show_integer(q.numer())
    } else {
        format!("{}/{}", show_integer(q.numer()), show_integer(q.denom()))
    }
}

pub fn show_mono(m: &Mono) -> String {
    m.iter().map(|(v, e)| if *e == 1 { v.clone() } else { format!("{v}^{e}") }).collect::<Vec<_>>().join("*")
}

impl std::fmt::Display for Poly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_zero() {
            return write!(f, "0");
        }
        let mut terms: Vec<(&Mono, &BigRational)> = self.terms.iter().collect();
        terms.sort_by(|a, b| grlex(b.0, a.0));
        for (i, (m, c)) in terms.iter().enumerate() {
            let neg = c.is_negative();
            let a = c.abs();
            if i == 0 {
                if neg {
                    write!(f, "-")?;
                }
            } else {
                write!(f, "{}", if neg { " - " } else { " + " })?;
            }
            if m.is_empty() {
                write!(f, "{}", show_q(&a))?;
            } else if a.is_one() {
                write!(f, "{}", show_mono(m))?;
            } else {
                write!(f, "{}*{}", show_q(&a), show_mono(m))?;
            }
        }
        Ok(())
    }
}

/// Dense univariate polynomial, coefficient i of x^i, no trailing zeros.
pub type UPoly = Vec<BigRational>;

pub fn trim(mut p: UPoly) -> UPoly {
    while p.last().is_some_and(Zero::is_zero) {
        p.pop();
    }
    p
}

pub fn udeg(p: &UPoly) -> usize {
    p.len().saturating_sub(1)
}

/// (quotient, remainder); `d` must be non-zero.
pub fn udivrem(p: &UPoly, d: &UPoly) -> (UPoly, UPoly) {
    let mut r = trim(p.clone());
    let d = trim(d.clone());
    if d.is_empty() || r.len() < d.len() {
        return (Vec::new(), r);
    }
    let lead = d[d.len() - 1].clone();
    let mut q = vec![BigRational::zero(); r.len() - d.len() + 1];
    while r.len() >= d.len() && !r.is_empty() {
        let shift = r.len() - d.len();
        let k = &r[r.len() - 1] / &lead;
        for (i, c) in d.iter().enumerate() {
            r[i + shift] -= &k * c;
        }
        q[shift] = k;
        r.pop();
        r = trim(r);
    }
    (trim(q), r)
}

pub fn monic(p: &UPoly) -> UPoly {
    match p.last() {
        Some(l) if !l.is_zero() => p.iter().map(|c| c / l).collect(),
        _ => p.clone(),
    }
}

pub fn ugcd(a: &UPoly, b: &UPoly) -> UPoly {
    let (mut a, mut b) = (trim(a.clone()), trim(b.clone()));
    while !b.is_empty() {
        let (_, r) = udivrem(&a, &b);
        a = b;
        b = monic(&r);
    }
    monic(&a)
}

pub fn uderiv(p: &UPoly) -> UPoly {
    p.iter().enumerate().skip(1).map(|(i, c)| c * BigRational::from_integer(i.into())).collect()
}

pub fn ueval(p: &UPoly, x: &BigRational) -> BigRational {
    p.iter().rev().fold(BigRational::zero(), |acc, c| acc * x + c)
}

/// Square-free decomposition (Yun): monic factors with their multiplicities.
pub fn square_free(p: &UPoly) -> Vec<(UPoly, u32)> {
    let p = monic(&trim(p.clone()));
    if udeg(&p) == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let dp = uderiv(&p);
    let mut a = ugcd(&p, &dp);
    let mut b = udivrem(&p, &a).0;
    let mut c = udivrem(&dp, &a).0;
    let mut d = pad_sub(&c, &uderiv(&b));
    let mut i = 1;
    while udeg(&b) > 0 && i <= MAX_DEGREE * 2 {
        a = ugcd(&b, &d);
        if udeg(&a) > 0 {
            out.push((monic(&a), i));
        }
        b = udivrem(&b, &a).0;
        c = udivrem(&d, &a).0;
        d = pad_sub(&c, &uderiv(&b));
        i += 1;
    }
    out
}

fn pad_sub(a: &UPoly, b: &UPoly) -> UPoly {
    let n = a.len().max(b.len());
    let z = BigRational::zero();
    trim((0..n).map(|i| a.get(i).unwrap_or(&z) - b.get(i).unwrap_or(&z)).collect())
}

/// Integer coefficients with gcd 1 and a positive leading coefficient, from a rational poly.
pub fn to_primitive_integer(p: &UPoly) -> Vec<BigInt> {
    let den = p.iter().fold(BigInt::one(), |a, c| a.lcm(c.denom()));
    let ints: Vec<BigInt> = p.iter().map(|c| c.numer() * (&den / c.denom())).collect();
    let g = ints.iter().fold(BigInt::zero(), |a, c| a.gcd(c));
    let sign = if ints.last().is_some_and(Signed::is_negative) { -BigInt::one() } else { BigInt::one() };
    if g.is_zero() {
        return ints;
    }
    ints.iter().map(|c| c / &g * &sign).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn up(cs: &[i64]) -> UPoly {
        trim(cs.iter().map(|c| BigRational::from_integer((*c).into())).collect())
    }

    #[test]
    fn multivariate_arithmetic() {
        let x = Poly::var("x");
        let y = Poly::var("y");
        let s = x.add(&y);
        let sq = s.pow(2).unwrap();
        assert_eq!(sq.to_string(), "x^2 + 2*x*y + y^2");
        assert_eq!(sq.exact_div(&s), Some(s.clone()));
        assert_eq!(sq.exact_div(&x.sub(&y)), None);
        assert_eq!(sq.diff("x").to_string(), "2*x + 2*y");
        assert_eq!(sq.substitute("y", &Poly::constant(BigRational::one())).unwrap().to_string(), "x^2 + 2*x + 1");
        assert!(x.pow(60).unwrap_err().contains("too large"));
    }

    #[test]
    fn univariate_gcd_and_square_free() {
        // (x-1)^2 (x+2)
        let p = up(&[2, -3, 0, 1]);
        assert_eq!(ugcd(&p, &uderiv(&p)), up(&[-1, 1]));
        let sf = square_free(&p);
        assert_eq!(sf, vec![(up(&[2, 1]), 1), (up(&[-1, 1]), 2)]);
    }
}
