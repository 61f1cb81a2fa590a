//! Exact big-number helpers for the math tools: size limits, exact and approximate roots,
//! decimal formatting to a number of significant digits, and the counting functions
//! (factorial, binomial, permutations) with their bounds.

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Largest number of decimal digits a result (numerator or denominator) may have.
pub const MAX_DIGITS: u64 = 100_000;
/// Largest n for n!.
pub const MAX_FACTORIAL: u64 = 10_000;
/// Largest n for binomials and permutations.
pub const MAX_CHOOSE_N: u64 = 100_000;
/// Significant digits shown for a decimal approximation.
pub const SHOWN_DIGITS: usize = 30;
/// Significant digits carried by approximate values (guard digits beyond those shown).
pub const CARRIED_DIGITS: i64 = 60;
/// Longest exact integer printed in full; longer ones are abbreviated.
const MAX_SHOWN_INTEGER: usize = 600;

pub fn int(n: i64) -> BigRational {
    BigRational::from_integer(BigInt::from(n))
}

pub fn pow10(n: u64) -> BigInt {
    num_traits::pow(BigInt::from(10u8), n as usize)
}

/// An upper estimate of the number of decimal digits of `n`.
pub fn digits(n: &BigInt) -> u64 {
    n.bits() * 30103 / 100000 + 1
}

/// Refuse a value whose numerator or denominator is too long.
pub fn check_size(q: &BigRational) -> Result<(), String> {
    let d = digits(q.numer()).max(digits(q.denom()));
    if d > MAX_DIGITS {
        Err(format!("the result would have about {d} digits, more than the limit of {MAX_DIGITS}"))
    } else {
        Ok(())
    }
}

/// The exact integer `n`-th root of `x` if there is one (x ≥ 0 or n odd).
pub fn exact_int_root(x: &BigInt, n: u32) -> Option<BigInt> {
    if x.is_negative() {
        if n % 2 == 0 {
            return None;
        }
        return exact_int_root(&-x, n).map(|r| -r);
    }
    let r = x.nth_root(n);
    (num_traits::pow(r.clone(), n as usize) == *x).then_some(r)
}

/// The exact rational `n`-th root of `q`, if it is rational.
pub fn exact_root(q: &BigRational, n: u32) -> Option<BigRational> {
    let num = exact_int_root(q.numer(), n)?;
    let den = exact_int_root(q.denom(), n)?;
    Some(BigRational::new(num, den))
}

/// floor(log10 |q|) for q ≠ 0, exactly.
pub fn log10_floor(q: &BigRational) -> i64 {
    let a = q.abs();
    let mut e = digits(a.numer()) as i64 - digits(a.denom()) as i64;
    // Move e until 10^e ≤ a < 10^(e+1); the estimate is within a few steps.
    loop {
        let lo = pow10_q(e);
        if a < lo {
            e -= 1;
            continue;
        }
        if a >= pow10_q(e + 1) {
            e += 1;
            continue;
        }
        return e;
    }
}

/// 10^e as a rational, for any sign of e.
pub fn pow10_q(e: i64) -> BigRational {
    let p = pow10(e.unsigned_abs());
    if e >= 0 {
        BigRational::from_integer(p)
    } else {
        BigRational::new(BigInt::one(), p)
    }
}

/// `q` rounded to `sig` significant digits (as a rational).
pub fn round_sig(q: &BigRational, sig: i64) -> BigRational {
    if q.is_zero() {
        return q.clone();
    }
    let e = log10_floor(q);
    let scale = pow10_q(sig - 1 - e);
    (q * &scale).round() / scale
}

/// The real `n`-th root of `q` to about [`CARRIED_DIGITS`] significant digits (q ≥ 0 or n odd).
pub fn approx_root(q: &BigRational, n: u32) -> BigRational {
    if q.is_negative() {
        return -approx_root(&-q, n);
    }
    if q.is_zero() {
        return q.clone();
    }
    // root(q) = root(q · 10^(n·k)) / 10^k with k large enough that the integer root has the digits.
    let e = log10_floor(q);
    let k = (CARRIED_DIGITS + 5 - e / n as i64).max(0) as u64;
    let scaled = (q * BigRational::from_integer(pow10(k * n as u64))).floor().to_integer();
    let r = scaled.nth_root(n);
    round_sig(&BigRational::new(r, pow10(k)), CARRIED_DIGITS)
}

/// π to about [`CARRIED_DIGITS`] digits (Machin: 16·atan(1/5) − 4·atan(1/239), in fixed point).
pub fn pi() -> BigRational {
    let scale = pow10(CARRIED_DIGITS as u64 + 10);
    let atan_inv = |x: i64| -> BigInt {
        let x = BigInt::from(x);
        let x2 = &x * &x;
        let mut term = &scale / &x;
        let mut sum = term.clone();
        let mut k = 1u64;
        while !term.is_zero() {
            term /= &x2;
            let t = &term / BigInt::from(2 * k + 1);
            if k % 2 == 1 {
                sum -= t;
            } else {
                sum += t;
            }
            k += 1;
        }
        sum
    };
    let fixed = BigInt::from(16) * atan_inv(5) - BigInt::from(4) * atan_inv(239);
    round_sig(&BigRational::new(fixed, scale), CARRIED_DIGITS)
}

/// e to about [`CARRIED_DIGITS`] digits (Σ 1/k!, in fixed point).
pub fn euler() -> BigRational {
    let scale = pow10(CARRIED_DIGITS as u64 + 10);
    let mut term = scale.clone();
    let mut sum = BigInt::zero();
    let mut k = 1u64;
    while !term.is_zero() {
        sum += &term;
        term /= BigInt::from(k);
        k += 1;
    }
    round_sig(&BigRational::new(sum, scale), CARRIED_DIGITS)
}

/// `q` as a decimal with `sig` significant digits ("1.41421356237309504880168872421",
/// "1.5e-40"); trailing zeros are kept only when `keep_zeros`.
pub fn decimal_sig(q: &BigRational, sig: usize, keep_zeros: bool) -> String {
    if q.is_zero() {
        return "0".into();
    }
    let neg = q.is_negative();
    let a = q.abs();
    let mut e = log10_floor(&a);
    let mut m = (&a * pow10_q(sig as i64 - 1 - e)).round().to_integer();
    if digits_exact(&m) > sig {
        // Rounding carried into a new digit (9.99… → 10.0…).
        e += 1;
        m /= BigInt::from(10);
    }
    let mut ds = m.to_string();
    let body = if (-7..40).contains(&e) {
        if e >= 0 {
            let point = (e + 1) as usize;
            if ds.len() <= point {
                ds.push_str(&"0".repeat(point - ds.len()));
                ds
            } else {
                let (i, f) = ds.split_at(point);
                let f = if keep_zeros { f.to_string() } else { f.trim_end_matches('0').to_string() };
                if f.is_empty() {
                    i.to_string()
                } else {
                    format!("{i}.{f}")
                }
            }
        } else {
            let f = format!("{}{}", "0".repeat((-e - 1) as usize), ds);
            let f = if keep_zeros { f } else { f.trim_end_matches('0').to_string() };
            format!("0.{f}")
        }
    } else {
        let (i, f) = ds.split_at(1);
        let f = if keep_zeros { f.to_string() } else { f.trim_end_matches('0').to_string() };
        if f.is_empty() {
            format!("{i}e{e}")
        } else {
            format!("{i}.{f}e{e}")
        }
    };
    if neg {
        format!("-{body}")
    } else {
        body
    }
}

fn digits_exact(n: &BigInt) -> usize {
    n.magnitude().to_string().len()
}

/// An integer in full, or abbreviated when very long ("a 35660-digit integer: 28462596…00000").
pub fn show_integer(n: &BigInt) -> String {
    let s = n.to_string();
    if s.len() <= MAX_SHOWN_INTEGER {
        return s;
    }
    let (sign, body) = if n.sign() == Sign::Minus { ("-", &s[1..]) } else { ("", &s[..]) };
    format!("{sign}{}…{} (a {}-digit integer, shown abbreviated)", &body[..40], &body[body.len() - 20..], body.len())
}

/// Whether q has a finite decimal expansion (its denominator has only the primes 2 and 5).
pub fn terminates(q: &BigRational) -> bool {
    let mut d = q.denom().clone();
    for p in [2u8, 5] {
        let p = BigInt::from(p);
        while (&d % &p).is_zero() {
            d /= &p;
        }
    }
    d.is_one()
}

/// An exact value as text: "42", "0.25" (= 1/4), "7/3 ≈ 2.33333333333333333333333333333".
pub fn show_exact(q: &BigRational) -> String {
    if q.is_integer() {
        return show_integer(q.numer());
    }
    let frac = format!("{}/{}", show_integer(q.numer()), show_integer(q.denom()));
    if terminates(q) && digits(q.denom()) < 25 && digits(q.numer()) < 40 {
        // A short exact decimal: print all of it.
        let e = log10_floor(q);
        let d = (digits(q.denom()) as i64 + e.max(0) + 2) as usize;
        format!("{frac} = {}", decimal_sig(q, d.max(1), false))
    } else {
        format!("{frac} ≈ {}", decimal_sig(q, SHOWN_DIGITS, true))
    }
}

/// A non-negative integer argument that fits in u64, or why not.
pub fn to_count(q: &BigRational, what: &str) -> Result<u64, String> {
    if !q.is_integer() || q.is_negative() {
        return Err(format!("{what} must be a whole number ≥ 0, not {q}"));
    }
    q.to_integer().to_u64().ok_or_else(|| format!("{what} = {q} is far too large"))
}

pub fn factorial(n: u64) -> Result<BigInt, String> {
    if n > MAX_FACTORIAL {
        return Err(format!("{n}! is too large: factorials are limited to n ≤ {MAX_FACTORIAL}"));
    }
    Ok(product_range(1, n))
}

/// lo·(lo+1)·…·hi by splitting in halves (balanced products are much faster than a running one).
pub fn product_range(lo: u64, hi: u64) -> BigInt {
    if lo > hi {
        return BigInt::one();
    }
    if hi - lo < 16 {
        return (lo..=hi).fold(BigInt::one(), |acc, k| acc * BigInt::from(k));
    }
    let mid = lo + (hi - lo) / 2;
    product_range(lo, mid) * product_range(mid + 1, hi)
}

pub fn binomial(n: u64, k: u64) -> Result<BigInt, String> {
    if n > MAX_CHOOSE_N {
        return Err(format!("C({n}, {k}) is too large: binomials are limited to n ≤ {MAX_CHOOSE_N}"));
    }
    if k > n {
        return Ok(BigInt::zero());
    }
    let k = k.min(n - k);
    Ok(product_range(n - k + 1, n) / product_range(1, k))
}

pub fn permutations(n: u64, k: u64) -> Result<BigInt, String> {
    if n > MAX_CHOOSE_N {
        return Err(format!("P({n}, {k}) is too large: permutations are limited to n ≤ {MAX_CHOOSE_N}"));
    }
    if k > n {
        return Ok(BigInt::zero());
    }
    Ok(product_range(n - k + 1, n))
}

pub fn gcd(a: &BigInt, b: &BigInt) -> BigInt {
    a.gcd(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn roots_are_exact_when_rational() {
        assert_eq!(exact_root(&r(8, 18), 2), Some(r(2, 3)), "8/18 is reduced to 4/9");
        assert_eq!(exact_root(&r(4, 9), 2), Some(r(2, 3)));
        assert_eq!(exact_root(&r(-27, 8), 3), Some(r(-3, 2)));
        assert_eq!(exact_root(&r(2, 1), 2), None);
        assert_eq!(exact_root(&r(-4, 1), 2), None);
    }

    #[test]
    fn decimals_have_the_asked_significant_digits() {
        assert_eq!(decimal_sig(&approx_root(&r(2, 1), 2), 30, true), "1.41421356237309504880168872421");
        assert_eq!(decimal_sig(&pi(), 30, true), "3.14159265358979323846264338328");
        assert_eq!(decimal_sig(&euler(), 20, true), "2.7182818284590452354");
        assert_eq!(decimal_sig(&r(1, 4), 10, false), "0.25");
        assert_eq!(decimal_sig(&r(-1, 3), 5, true), "-0.33333");
        assert_eq!(decimal_sig(&r(999_999, 1), 3, true), "1000000");
        assert_eq!(decimal_sig(&r(1, 1), 3, true), "1.00");
        assert_eq!(decimal_sig(&pow10_q(-50), 3, false), "1e-50");
        assert_eq!(decimal_sig(&r(1, 1000), 3, false), "0.001");
        assert_eq!(show_exact(&r(7, 3)), "7/3 ≈ 2.33333333333333333333333333333");
        assert_eq!(show_exact(&r(1, 8)), "1/8 = 0.125");
        assert_eq!(show_exact(&r(-5, 1)), "-5");
    }

    #[test]
    fn counting_is_exact_and_bounded() {
        assert_eq!(factorial(20).unwrap(), BigInt::from(2_432_902_008_176_640_000u64));
        assert_eq!(binomial(52, 5).unwrap(), BigInt::from(2_598_960));
        assert_eq!(binomial(3, 5).unwrap(), BigInt::zero());
        assert_eq!(permutations(10, 3).unwrap(), BigInt::from(720));
        assert!(factorial(10_001).unwrap_err().contains("10000"));
        assert!(binomial(1_000_000, 2).unwrap_err().contains("limited"));
        let big = factorial(3000).unwrap();
        assert!(show_integer(&big).contains("9131-digit integer"), "{}", show_integer(&big));
    }
}
