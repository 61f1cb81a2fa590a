//! `count[...]`: combinatorics on exact integers — binomials, permutations, factorials,
//! integer partitions (all, into at most k parts, into exactly k parts), Stirling numbers of the
//! second kind, Catalan numbers, derangements, multinomials and compositions.
//!
//! Every function has a bound on n chosen so the exact computation stays well under a second
//! (the dynamic programmes are O(n·k) big-integer additions).

use num_bigint::BigInt;
use num_traits::{One, Zero};

use super::num::{self, show_integer};

pub const USAGE: &str = "write one of: binomial n k, permutations n k, factorial n, partitions n, partitions n k, \
stirling2 n k, catalan n, derangements n, multinomial a b c, compositions n k; e.g. count[partitions 10 3]";

const MAX_PARTITIONS_N: u64 = 10_000;
const MAX_TABLE_N: u64 = 1_000;
const MAX_CATALAN_N: u64 = 20_000;
const MAX_DERANGEMENTS_N: u64 = 5_000;
const MAX_MULTINOMIAL_PARTS: usize = 50;

/// Answer a counting request, or say what to write instead.
pub fn count(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.chars().count() > 300 {
        return Err(format!("The request is too long. {USAGE}."));
    }
    // Accept `binomial(10, 3)`, `binomial 10 3`, `binomial 10, 3`.
    let cleaned: String =
        text.chars().map(|c| if matches!(c, '(' | ')' | ',' | ';' | '[' | ']') { ' ' } else { c }).collect();
    let mut words = cleaned.split_whitespace();
    let Some(op) = words.next() else {
        return Err(format!("There is nothing to count. {USAGE}."));
    };
    let op = op.to_lowercase();
    let args: Vec<u64> = words
        .map(|w| {
            w.parse::<u64>().map_err(|_| {
                format!("'{w}' is not a whole number ≥ 0 (arguments are plain integers like 10). {USAGE}.")
            })
        })
        .collect::<Result<_, _>>()?;
    let need = |n: usize, form: &str| -> Result<(), String> {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("{op} takes {n} number{}: write count[{form}]", if n == 1 { "" } else { "s" }))
        }
    };
    match op.as_str() {
        "binomial" | "binom" | "choose" | "c" | "combinations" => {
            need(2, "binomial n k")?;
            let (n, k) = (args[0], args[1]);
            Ok(format!("C({n}, {k}) = {}", show_integer(&num::binomial(n, k)?)))
        }
        "permutations" | "perm" | "p" | "arrangements" => {
            if args.len() == 1 {
                return Ok(format!("{}! = {}", args[0], show_integer(&num::factorial(args[0])?)));
            }
            need(2, "permutations n k")?;
            let (n, k) = (args[0], args[1]);
            Ok(format!("P({n}, {k}) = {}", show_integer(&num::permutations(n, k)?)))
        }
        "factorial" | "fact" => {
            need(1, "factorial n")?;
            Ok(format!("{}! = {}", args[0], show_integer(&num::factorial(args[0])?)))
        }
        "partitions" | "partition" => partitions_of(&args),
        "stirling2" | "stirling" | "s2" => {
            need(2, "stirling2 n k")?;
            let (n, k) = (args[0], args[1]);
            within(n, MAX_TABLE_N, "stirling2 n k")?;
            Ok(format!(
                "S({n}, {k}) = {} (ways to split {n} labelled items into {k} non-empty unlabelled groups)",
                show_integer(&stirling2(n, k))
            ))
        }
        "catalan" => {
            need(1, "catalan n")?;
            let n = args[0];
            within(n, MAX_CATALAN_N, "catalan n")?;
            let c = num::binomial(2 * n, n)? / BigInt::from(n + 1);
            Ok(format!("Catalan({n}) = {}", show_integer(&c)))
        }
        "derangements" | "derangement" | "subfactorial" => {
            need(1, "derangements n")?;
            let n = args[0];
            within(n, MAX_DERANGEMENTS_N, "derangements n")?;
            Ok(format!("!{n} = {} (permutations of {n} with no fixed point)", show_integer(&derangements(n))))
        }
        "multinomial" => multinomial(&args),
        "compositions" | "composition" => compositions(&args),
        other => Err(format!("'{other}' is not something count knows. {USAGE}.")),
    }
}

/// `partitions n` (all of them) or `partitions n k` (into at most and exactly k parts).
fn partitions_of(args: &[u64]) -> Result<String, String> {
    match args.len() {
        1 => {
            let n = args[0];
            within(n, MAX_PARTITIONS_N, "partitions n")?;
            Ok(format!(
                "p({n}) = {} (partitions of {n} into positive parts, order ignored)",
                show_integer(&partitions(n))
            ))
        }
        2 => {
            let (n, k) = (args[0], args[1]);
            within(n, MAX_TABLE_N, "partitions n k")?;
            let at_most = partitions_at_most(n, k);
            let exactly = if k == 0 {
                if n == 0 {
                    BigInt::one()
                } else {
                    BigInt::zero()
                }
            } else if k > n {
                BigInt::zero()
            } else {
                partitions_at_most(n - k, k)
            };
            Ok(format!(
                "partitions of {n} into at most {k} parts: {}; into exactly {k} parts: {}",
                show_integer(&at_most),
                show_integer(&exactly)
            ))
        }
        _ => Err("partitions takes n, or n and k: write count[partitions 10] or count[partitions 10 3]".to_string()),
    }
}

/// `multinomial a b c ...`: (a+b+c+...)! / (a! b! c! ...).
fn multinomial(args: &[u64]) -> Result<String, String> {
    if args.is_empty() || args.len() > MAX_MULTINOMIAL_PARTS {
        return Err(format!(
            "multinomial takes 1 to {MAX_MULTINOMIAL_PARTS} part sizes: write count[multinomial 2 3 4]"
        ));
    }
    let total: u64 = args.iter().fold(0u64, |a, b| a.saturating_add(*b));
    if total > num::MAX_FACTORIAL {
        return Err(format!("multinomial is limited to a total of {} (got {total})", num::MAX_FACTORIAL));
    }
    let mut r = num::factorial(total)?;
    for a in args {
        r /= num::factorial(*a)?;
    }
    let parts: Vec<String> = args.iter().map(u64::to_string).collect();
    Ok(format!("({total}; {}) = {}", parts.join(", "), show_integer(&r)))
}

/// `compositions n` (ordered sums of positive parts) or `compositions n k`.
fn compositions(args: &[u64]) -> Result<String, String> {
    match args.len() {
        1 => {
            let n = args[0];
            within(n, num::MAX_DIGITS * 3, "compositions n")?;
            let r = if n == 0 { BigInt::one() } else { num_traits::pow(BigInt::from(2), (n - 1) as usize) };
            Ok(format!("compositions of {n} (ordered sums of positive parts): {}", show_integer(&r)))
        }
        2 => {
            let (n, k) = (args[0], args[1]);
            let positive = if n == 0 && k == 0 {
                BigInt::one()
            } else if n == 0 || k == 0 {
                BigInt::zero()
            } else {
                num::binomial(n - 1, k - 1)?
            };
            let weak = if k == 0 {
                if n == 0 {
                    BigInt::one()
                } else {
                    BigInt::zero()
                }
            } else {
                num::binomial(n + k - 1, k - 1)?
            };
            Ok(format!(
                "compositions of {n} into {k} positive parts: {}; into {k} parts ≥ 0: {}",
                show_integer(&positive),
                show_integer(&weak)
            ))
        }
        _ => Err("compositions takes n, or n and k: write count[compositions 10 3]".into()),
    }
}

/// `what` takes n up to `max`.
fn within(n: u64, max: u64, what: &str) -> Result<(), String> {
    if n > max {
        Err(format!("{what} is limited to n ≤ {max} (got {n})"))
    } else {
        Ok(())
    }
}

/// p(n) by Euler's pentagonal-number recurrence: O(n^1.5) big additions.
fn partitions(n: u64) -> BigInt {
    let n = n as usize;
    let mut p = vec![BigInt::zero(); n + 1];
    p[0] = BigInt::one();
    for m in 1..=n {
        let mut acc = BigInt::zero();
        for j in 1.. {
            let g1 = j * (3 * j - 1) / 2;
            if g1 > m {
                break;
            }
            let sign_plus = j % 2 == 1;
            let mut add = p[m - g1].clone();
            let g2 = j * (3 * j + 1) / 2;
            if g2 <= m {
                add += &p[m - g2];
            }
            if sign_plus {
                acc += add;
            } else {
                acc -= add;
            }
        }
        p[m] = acc;
    }
    p.swap_remove(n)
}

/// Partitions of n into at most k parts (= into parts of size ≤ k): O(n·k) additions.
fn partitions_at_most(n: u64, k: u64) -> BigInt {
    let n = n as usize;
    let k = (k as usize).min(n);
    let mut t = vec![BigInt::zero(); n + 1];
    t[0] = BigInt::one();
    for part in 1..=k {
        for m in part..=n {
            let add = t[m - part].clone();
            t[m] += add;
        }
    }
    t.swap_remove(n)
}

/// S(n, k) by the recurrence S(n, k) = k·S(n−1, k) + S(n−1, k−1), row by row.
fn stirling2(n: u64, k: u64) -> BigInt {
    if k > n {
        return BigInt::zero();
    }
    let (n, k) = (n as usize, k as usize);
    let mut row = vec![BigInt::zero(); k + 1];
    row[0] = BigInt::one();
    for i in 1..=n {
        for j in (1..=k.min(i)).rev() {
            let v = &row[j] * BigInt::from(j) + &row[j - 1];
            row[j] = v;
        }
        row[0] = BigInt::zero();
    }
    row.swap_remove(k)
}

/// !n by !n = (n−1)(!(n−1) + !(n−2)).
fn derangements(n: u64) -> BigInt {
    let (mut a, mut b) = (BigInt::one(), BigInt::zero()); // !0, !1
    if n == 0 {
        return a;
    }
    for m in 2..=n {
        let c = BigInt::from(m - 1) * (&a + &b);
        a = b;
        b = c;
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(count("binomial 10 3").unwrap(), "C(10, 3) = 120");
        assert_eq!(count("binomial(52, 5)").unwrap(), "C(52, 5) = 2598960");
        assert_eq!(count("permutations 10 3").unwrap(), "P(10, 3) = 720");
        assert_eq!(count("factorial 10").unwrap(), "10! = 3628800");
        assert!(count("partitions 100").unwrap().starts_with("p(100) = 190569292 "));
        assert_eq!(
            count("partitions 10 3").unwrap(),
            "partitions of 10 into at most 3 parts: 14; into exactly 3 parts: 8"
        );
        assert!(count("stirling2 10 3").unwrap().starts_with("S(10, 3) = 9330 "));
        assert_eq!(count("catalan 10").unwrap(), "Catalan(10) = 16796");
        assert!(count("derangements 5").unwrap().starts_with("!5 = 44 "));
        assert_eq!(count("multinomial 2 3 4").unwrap(), "(9; 2, 3, 4) = 1260");
        assert_eq!(
            count("compositions 10 3").unwrap(),
            "compositions of 10 into 3 positive parts: 36; into 3 parts ≥ 0: 66"
        );
        assert!(count("compositions 5").unwrap().ends_with(": 16"));
    }

    #[test]
    fn edge_cases() {
        assert!(count("partitions 0").unwrap().starts_with("p(0) = 1 "));
        assert!(count("stirling2 0 0").unwrap().starts_with("S(0, 0) = 1 "));
        assert!(count("stirling2 3 5").unwrap().starts_with("S(3, 5) = 0 "));
        assert!(count("derangements 0").unwrap().starts_with("!0 = 1 "));
        assert!(count("derangements 1").unwrap().starts_with("!1 = 0 "));
        assert_eq!(count("binomial 3 5").unwrap(), "C(3, 5) = 0");
        // p(n) agrees with the at-most-n-parts table.
        for n in 0..40u64 {
            assert_eq!(partitions(n), partitions_at_most(n, n), "n = {n}");
        }
        // Σ_k S(n, k) is the Bell number B(8) = 4140.
        let bell: BigInt = (0..=8).map(|k| stirling2(8, k)).sum();
        assert_eq!(bell, BigInt::from(4140));
    }

    #[test]
    fn bounds_and_bad_arguments() {
        assert!(count("partitions 20000").unwrap_err().contains("n ≤ 10000"));
        assert!(count("stirling2 5000 3").unwrap_err().contains("n ≤ 1000"));
        assert!(count("factorial 20000").unwrap_err().contains("10000"));
        assert!(count("binomial 10").unwrap_err().contains("binomial n k"));
        assert!(count("binomial ten 3").unwrap_err().contains("'ten' is not a whole number"));
        assert!(count("binomial -1 3").unwrap_err().contains("whole number"));
        assert!(count("fibonacci 10").unwrap_err().contains("not something count knows"));
        assert!(count("").unwrap_err().contains("nothing to count"));
        assert!(count("multinomial 9000 9000").unwrap_err().contains("limited"));
    }
}
