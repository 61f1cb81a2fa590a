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

mod diff;
mod factor;
mod solve;

use diff::*;
use factor::*;
use solve::*;

use std::collections::{BTreeMap, BTreeSet};

use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive};

use super::calc::{clip, exact_value};
use super::parse::{parse, Node};
use super::poly::{self, Poly, MAX_DEGREE};

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
