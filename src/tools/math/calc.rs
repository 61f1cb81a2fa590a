//! `calc[expr]`: a calculator over exact big rationals. Roots are exact when the result is
//! rational (`sqrt(8/18)` = 2/3); an irrational value (`sqrt(2)`, `2^(1/2)`, `pi`) falls back
//! to a decimal approximation carried to 60 digits, shown to 30, and labelled as such.
//!
//! Bounded: input length and nesting (see `parse`), every intermediate result's size
//! ([`num::MAX_DIGITS`]), factorials, binomials, and a work budget for the counting functions
//! (a deterministic count, not a clock).

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::num;
use super::parse::{parse, Node};

pub const USAGE: &str = "write numbers with + - * / ^ ( ), sqrt(x), root(x, n), gcd(a, b), lcm(a, b), a mod b, \
floor(x), ceil(x), abs(x), n!, C(n, k), P(n, k), pi, e; e.g. calc[sqrt(8/18) + 2^10]";

/// Work units allowed per call (one unit per factor multiplied in a factorial, binomial, ...).
const WORK_BUDGET: u64 = 400_000;
/// Largest n for root(x, n).
const MAX_ROOT: u64 = 1000;

/// A value: exact, or an approximation of an irrational value.
#[derive(Debug, Clone)]
struct Value {
    q: BigRational,
    exact: bool,
}

impl Value {
    fn exact(q: BigRational) -> Value {
        Value { q, exact: true }
    }
}

struct Calc {
    work: u64,
    /// The first irrational step, for the label ("sqrt(2) is irrational").
    why_approx: Option<String>,
}

/// Evaluate `text`: the result line, or a one-line error that says what to write instead.
pub fn calc(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("There is nothing to calculate: {USAGE}."));
    }
    let node = parse(text).map_err(|e| format!("Could not read '{}': {e}. {USAGE}.", clip(text)))?;
    let mut c = Calc { work: 0, why_approx: None };
    let v = c.eval(&node).map_err(|e| format!("Could not calculate '{}': {e}.", clip(text)))?;
    Ok(if v.exact {
        num::show_exact(&v.q)
    } else {
        format!(
            "≈ {} (irrational: decimal approximation, because {})",
            num::decimal_sig(&v.q, num::SHOWN_DIGITS, true),
            c.why_approx.unwrap_or_else(|| "an irrational value is involved".into())
        )
    })
}

/// The input as quoted in an error, clipped.
pub fn clip(text: &str) -> String {
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text.to_string()
    }
}

fn show(v: &BigRational) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        "a long number".into()
    } else {
        s
    }
}

impl Calc {
    fn spend(&mut self, units: u64) -> Result<(), String> {
        self.work += units;
        if self.work > WORK_BUDGET {
            Err("the calculation is too large (work budget exceeded); split it into smaller steps".into())
        } else {
            Ok(())
        }
    }

    fn approx(&mut self, q: BigRational, why: impl FnOnce() -> String) -> Value {
        if self.why_approx.is_none() {
            self.why_approx = Some(why());
        }
        Value { q: num::round_sig(&q, num::CARRIED_DIGITS), exact: false }
    }

    /// Combine two values with an exact operation, keeping approximations rounded.
    fn finish(&self, q: BigRational, exact: bool) -> Result<Value, String> {
        if exact {
            num::check_size(&q)?;
            Ok(Value::exact(q))
        } else {
            Ok(Value { q: num::round_sig(&q, num::CARRIED_DIGITS), exact: false })
        }
    }

    fn eval(&mut self, node: &Node) -> Result<Value, String> {
        match node {
            Node::Num(q) => Ok(Value::exact(q.clone())),
            Node::Var(name) => match name.as_str() {
                "pi" => Ok(self.approx(num::pi(), || "pi is irrational".into())),
                "e" => Ok(self.approx(num::euler(), || "e is irrational".into())),
                other => Err(format!("'{other}' is not a number or a known constant (pi, e); calc has no variables — use algebra[...] for those")),
            },
            Node::Neg(x) => {
                let v = self.eval(x)?;
                Ok(Value { q: -v.q, exact: v.exact })
            }
            Node::Sum(terms) => {
                let mut acc = BigRational::zero();
                let mut exact = true;
                for (minus, t) in terms {
                    let v = self.eval(t)?;
                    exact &= v.exact;
                    acc = if *minus { acc - v.q } else { acc + v.q };
                    acc = self.finish(acc, exact)?.q;
                }
                self.finish(acc, exact)
            }
            Node::Product(factors) => {
                let mut acc = BigRational::one();
                let mut exact = true;
                for (divide, f) in factors {
                    let v = self.eval(f)?;
                    exact &= v.exact;
                    if *divide {
                        if v.q.is_zero() {
                            return Err("division by zero".into());
                        }
                        acc /= v.q;
                    } else {
                        acc *= v.q;
                    }
                    acc = self.finish(acc, exact)?.q;
                }
                self.finish(acc, exact)
            }
            Node::Pow(b, e) => {
                let b = self.eval(b)?;
                let e = self.eval(e)?;
                self.pow(b, e)
            }
            Node::Fact(x) => {
                let v = self.eval(x)?;
                let n = self.count_arg(&v, "the number before '!'")?;
                self.spend(n)?;
                Ok(Value::exact(BigRational::from_integer(num::factorial(n)?)))
            }
            Node::Call(name, args) => self.call(name, args),
        }
    }

    fn count_arg(&self, v: &Value, what: &str) -> Result<u64, String> {
        if !v.exact {
            return Err(format!("{what} must be an exact whole number, not an approximation"));
        }
        num::to_count(&v.q, what)
    }

    fn int_arg(&self, v: &Value, what: &str) -> Result<BigInt, String> {
        if !v.exact || !v.q.is_integer() {
            return Err(format!("{what} must be a whole number, not {}", show(&v.q)));
        }
        Ok(v.q.to_integer())
    }

    fn pow(&mut self, b: Value, e: Value) -> Result<Value, String> {
        if !e.exact {
            return Err("the exponent is irrational; calc takes rational exponents only (like 2^(1/3))".into());
        }
        let (p, q) = (e.q.numer().clone(), e.q.denom().clone());
        if b.q.is_zero() {
            return if p.is_negative() {
                Err("0 to a negative power is a division by zero".into())
            } else if p.is_zero() {
                Ok(Value::exact(BigRational::one()))
            } else {
                Ok(Value { q: BigRational::zero(), exact: b.exact })
            };
        }
        let size = num::digits(b.q.numer()).max(num::digits(b.q.denom())).max(1);
        let p_abs = p.abs().to_u64().filter(|p| p.saturating_mul(size) <= num::MAX_DIGITS).ok_or_else(|| {
            format!(
                "the power is too large: the result would have more than {} digits; keep exponents smaller",
                num::MAX_DIGITS
            )
        })?;
        // The root first (exact when possible), then the integer power.
        let q_root = q.to_u64().filter(|q| *q <= MAX_ROOT).ok_or_else(|| {
            format!("the exponent's denominator is too large (roots up to the {MAX_ROOT}th are supported)")
        })?;
        let base = if q_root == 1 { b } else { self.root(b, q_root as u32)? };
        let mut r = Value {
            q: BigRational::new(
                num_traits::pow(base.q.numer().clone(), p_abs as usize),
                num_traits::pow(base.q.denom().clone(), p_abs as usize),
            ),
            exact: base.exact,
        };
        if p.is_negative() {
            r.q = r.q.recip();
        }
        self.finish(r.q, r.exact)
    }

    fn root(&mut self, x: Value, n: u32) -> Result<Value, String> {
        if x.q.is_negative() && n % 2 == 0 {
            return Err(format!("the {} root of the negative number {} is not real", ordinal(n), show(&x.q)));
        }
        if x.exact {
            if let Some(r) = num::exact_root(&x.q, n) {
                return Ok(Value::exact(r));
            }
            let q = x.q.clone();
            let why = move || {
                if n == 2 {
                    format!("sqrt({q}) is irrational")
                } else {
                    format!("the {} root of {q} is irrational", ordinal(n))
                }
            };
            let r = num::approx_root(&x.q, n);
            return Ok(self.approx(r, why));
        }
        Ok(Value { q: num::approx_root(&x.q, n), exact: false })
    }

    fn call(&mut self, name: &str, args: &[Node]) -> Result<Value, String> {
        let arity = |n: usize| -> Result<(), String> {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!("{name}() takes {n} argument{}, not {}", if n == 1 { "" } else { "s" }, args.len()))
            }
        };
        match name {
            "sqrt" => {
                arity(1)?;
                let v = self.eval(&args[0])?;
                self.root(v, 2)
            }
            "cbrt" => {
                arity(1)?;
                let v = self.eval(&args[0])?;
                self.root(v, 3)
            }
            "root" => {
                arity(2)?;
                let v = self.eval(&args[0])?;
                let n = self.eval(&args[1])?;
                let n = self.count_arg(&n, "the root's degree n in root(x, n)")?;
                if n == 0 || n > MAX_ROOT {
                    return Err(format!("root(x, n) needs 1 ≤ n ≤ {MAX_ROOT}"));
                }
                self.root(v, n as u32)
            }
            "gcd" | "lcm" => {
                if args.len() < 2 {
                    return Err(format!("{name}() takes two or more whole numbers, e.g. {name}(12, 18)"));
                }
                let mut acc: Option<BigInt> = None;
                for a in args {
                    let v = self.eval(a)?;
                    let n = self.int_arg(&v, &format!("each argument of {name}()"))?;
                    acc = Some(match acc {
                        None => n.abs(),
                        Some(m) if name == "gcd" => m.gcd(&n),
                        Some(m) => m.lcm(&n),
                    });
                    if let Some(m) = &acc {
                        num::check_size(&BigRational::from_integer(m.clone()))?;
                    }
                }
                Ok(Value::exact(BigRational::from_integer(acc.unwrap_or_default())))
            }
            "mod" => {
                arity(2)?;
                let a = self.eval(&args[0])?;
                let b = self.eval(&args[1])?;
                if b.q.is_zero() {
                    return Err("mod by zero".into());
                }
                // a − b·floor(a/b): the result has the sign of b, as in most math texts.
                let r = &a.q - &b.q * (&a.q / &b.q).floor();
                self.finish(r, a.exact && b.exact)
            }
            "floor" | "ceil" | "round" | "abs" => {
                arity(1)?;
                let v = self.eval(&args[0])?;
                let r = match name {
                    "floor" => v.q.floor(),
                    "ceil" => v.q.ceil(),
                    "round" => v.q.round(),
                    _ => v.q.abs(),
                };
                // An approximation rounds to an exact integer unless it sits next to an integer.
                let exact = v.exact || (name != "abs" && (&v.q - v.q.round()).abs() > num::pow10_q(-40));
                Ok(Value { q: r, exact })
            }
            "fact" | "factorial" => {
                arity(1)?;
                let v = self.eval(&args[0])?;
                let n = self.count_arg(&v, "the argument of fact()")?;
                self.spend(n)?;
                Ok(Value::exact(BigRational::from_integer(num::factorial(n)?)))
            }
            "c" | "binom" | "binomial" | "choose" | "ncr" | "p" | "perm" | "npr" => {
                arity(2)?;
                let n = self.eval(&args[0])?;
                let k = self.eval(&args[1])?;
                let n = self.count_arg(&n, &format!("n in {name}(n, k)"))?;
                let k = self.count_arg(&k, &format!("k in {name}(n, k)"))?;
                self.spend(n.min(k.saturating_mul(2)).max(1))?;
                let r =
                    if matches!(name, "p" | "perm" | "npr") { num::permutations(n, k)? } else { num::binomial(n, k)? };
                let r = BigRational::from_integer(r);
                num::check_size(&r)?;
                Ok(Value::exact(r))
            }
            other => Err(format!("calc has no function {other}(); {USAGE}")),
        }
    }
}

fn ordinal(n: u32) -> String {
    match n {
        2 => "square".into(),
        3 => "cube".into(),
        n => format!("{n}th"),
    }
}

/// For other tools: the value of a constant expression if it is exact.
pub fn exact_value(node: &Node) -> Option<BigRational> {
    let mut c = Calc { work: 0, why_approx: None };
    c.eval(node).ok().filter(|v| v.exact).map(|v| v.q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_arithmetic_and_fractions() {
        assert_eq!(calc("1/3 + 1/6").unwrap(), "1/2 = 0.5");
        assert_eq!(calc("7/3").unwrap(), "7/3 ≈ 2.33333333333333333333333333333");
        assert_eq!(calc("2^100").unwrap(), "1267650600228229401496703205376");
        assert_eq!(calc("2**-2").unwrap(), "1/4 = 0.25");
        assert_eq!(calc("-2^2").unwrap(), "-4");
        assert_eq!(calc("(-2)^3").unwrap(), "-8");
        assert_eq!(calc("0.1 + 0.2").unwrap(), "3/10 = 0.3");
        assert_eq!(calc("3(4 + 1)").unwrap(), "15");
        assert_eq!(calc("12 × 3 ÷ 4 − 1").unwrap(), "8");
    }

    #[test]
    fn roots_are_exact_when_the_result_is_rational() {
        assert_eq!(calc("sqrt(8/18)").unwrap(), "2/3 ≈ 0.666666666666666666666666666667");
        assert_eq!(calc("sqrt(144)").unwrap(), "12");
        assert_eq!(calc("root(-125, 3)").unwrap(), "-5");
        assert_eq!(calc("8^(2/3)").unwrap(), "4");
        assert_eq!(calc("(27/8)^(-1/3)").unwrap(), "2/3 ≈ 0.666666666666666666666666666667");
    }

    #[test]
    fn irrational_results_are_labelled_approximations() {
        let s = calc("sqrt(2)").unwrap();
        assert!(s.starts_with("≈ 1.41421356237309504880168872421 (irrational: decimal approximation"), "{s}");
        assert!(s.contains("sqrt(2) is irrational"), "{s}");
        let s = calc("2^(1/2)").unwrap();
        assert!(s.starts_with("≈ 1.41421356237309504880168872421 (irrational"), "{s}");
        let s = calc("pi").unwrap();
        assert!(s.starts_with("≈ 3.14159265358979323846264338328 (irrational"), "{s}");
        assert!(s.contains("pi is irrational"));
        let s = calc("2*pi*3").unwrap();
        assert!(s.starts_with("≈ 18.8495559215387594307758602997"), "{s}");
        // floor of an approximation far from an integer is exact again.
        assert_eq!(calc("floor(100*sqrt(2))").unwrap(), "141");
    }

    #[test]
    fn integer_functions() {
        assert_eq!(calc("gcd(12, 18)").unwrap(), "6");
        assert_eq!(calc("lcm(4, 6, 10)").unwrap(), "60");
        assert_eq!(calc("17 mod 5").unwrap(), "2");
        assert_eq!(calc("mod(-7, 3)").unwrap(), "2");
        assert_eq!(calc("17 % 5").unwrap(), "2");
        assert_eq!(calc("floor(7/2) + ceil(7/2) + abs(-3)").unwrap(), "10");
        assert_eq!(calc("5!").unwrap(), "120");
        assert_eq!(calc("fact(6)").unwrap(), "720");
        assert_eq!(calc("C(10, 3)").unwrap(), "120");
        assert_eq!(calc("binom(52, 5)").unwrap(), "2598960");
        assert_eq!(calc("P(10, 3)").unwrap(), "720");
        assert_eq!(calc("3!!").unwrap(), "720", "(3!)! = 6!");
    }

    #[test]
    fn bounds_give_clear_errors() {
        assert!(calc("10001!").unwrap_err().contains("10000"));
        assert!(calc("2^1000000").unwrap_err().contains("digits"));
        assert!(calc("(2^1000)^1000").unwrap_err().contains("digits"));
        assert!(calc("1/0").unwrap_err().contains("division by zero"));
        assert!(calc("0^-1").unwrap_err().contains("division by zero"));
        assert!(calc("sqrt(-4)").unwrap_err().contains("not real"));
        assert!(calc("2^pi").unwrap_err().contains("irrational"));
        assert!(calc("(1/2)!").unwrap_err().contains("whole number"));
        assert!(calc("gcd(1/2, 3)").unwrap_err().contains("whole number"));
        let many = vec!["10000!"; 60].join("+");
        let e = calc(&many).unwrap_err();
        assert!(e.contains("budget"), "{e}");
    }

    #[test]
    fn parse_errors_say_what_to_write() {
        let e = calc("2 +").unwrap_err();
        assert!(e.starts_with("Could not read '2 +'") && e.contains("e.g. calc["), "{e}");
        assert!(calc("x + 1").unwrap_err().contains("algebra"));
        assert!(calc("sin(1)").unwrap_err().contains("no function sin"));
        assert!(calc("sqrt(1, 2)").unwrap_err().contains("1 argument"));
        assert!(calc("  ").unwrap_err().contains("nothing to calculate"));
    }
}
