//! `diff`: symbolic derivatives of expression trees, simplified and shown.

use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::tools::math::calc::exact_value;
use crate::tools::math::parse::{parse, Node};

use super::*;

/// An expression tree for derivatives of non-rational expressions.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum E {
    Num(BigRational),
    Var(String),
    Add(Vec<E>),
    Mul(Vec<E>),
    Pow(Box<E>, Box<E>),
    Fn(String, Box<E>),
}

pub(super) fn num(n: i64) -> E {
    E::Num(BigRational::from_integer(n.into()))
}

pub(super) fn to_e(node: &Node) -> Result<E, String> {
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

pub(super) fn size(e: &E) -> usize {
    match e {
        E::Num(_) | E::Var(_) => 1,
        E::Add(v) | E::Mul(v) => 1 + v.iter().map(size).sum::<usize>(),
        E::Pow(a, b) => 1 + size(a) + size(b),
        E::Fn(_, a) => 1 + size(a),
    }
}

pub(super) fn free_of(e: &E, v: &str) -> bool {
    match e {
        E::Num(_) => true,
        E::Var(x) => x != v,
        E::Add(xs) | E::Mul(xs) => xs.iter().all(|x| free_of(x, v)),
        E::Pow(a, b) => free_of(a, v) && free_of(b, v),
        E::Fn(_, a) => free_of(a, v),
    }
}

pub(super) fn d(e: &E, v: &str) -> E {
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
pub(super) fn simp(e: E) -> E {
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

pub(super) fn show_e(e: &E) -> String {
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

pub(super) fn atom(e: &E) -> String {
    match e {
        E::Var(_) | E::Fn(..) => show_e(e),
        E::Num(q) if q.is_integer() && !q.is_negative() => show_e(e),
        _ => format!("({})", show_e(e)),
    }
}

pub(super) fn diff(text: &str) -> Result<String, String> {
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
