//! Exact rational numbers: normal form, comparison, and their text forms ("5", "-1", "(-1)",
//! "1.5", ".5", "2/3", "−3").

use std::cmp::Ordering;

use num_rational::Ratio;
use num_traits::{CheckedAdd, Signed};

use super::op::Op;
use super::MAX_INPUT_LEN;

/// An exact rational number.
pub type Q = Ratio<i64>;

/// `q` in normal form: reduced, with a positive denominator and a numerator other than `i64::MIN`
/// (so it can always be negated). `None` if there is none: a zero denominator, or a reduced value
/// that does not fit. Every operation here hands num-rational only normal forms (a ratio a caller
/// built with `Ratio::new_raw` may be anything, and `i64::MIN` would overflow inside its gcd).
pub fn normalized(q: &Q) -> Option<Q> {
    let (n, d) = (*q.numer(), *q.denom());
    if d == 0 {
        return None;
    }
    // Reduce the magnitudes as unsigned numbers, where `i64::MIN` has a magnitude (2^63).
    let magnitude = Ratio::<u64>::new(n.unsigned_abs(), d.unsigned_abs());
    let numer = i64::try_from(*magnitude.numer()).ok()?;
    let denom = i64::try_from(*magnitude.denom()).ok()?;
    Some(Q::new_raw(if (n < 0) != (d < 0) { -numer } else { numer }, denom))
}

/// `-q`, exact; `None` if `q` has no normal form (see [`normalized`]).
pub fn neg(q: &Q) -> Option<Q> {
    normalized(q).map(|v| -v)
}

/// Total order on rationals by cross-multiplication in i128, where no product can overflow; unlike
/// `Ratio`'s own `Ord` it accepts any ratio a caller built (e.g. a negative denominator with
/// `i64::MIN`).
pub fn compare(a: &Q, b: &Q) -> Ordering {
    let parts = |q: &Q| {
        let (n, d) = (i128::from(*q.numer()), i128::from(*q.denom()));
        if d < 0 {
            (-n, -d)
        } else {
            (n, d)
        }
    };
    let ((an, ad), (bn, bd)) = (parts(a), parts(b));
    (an * bd).cmp(&(bn * ad))
}

/// `a` and `b` are the same value (`2/4` and `1/2` are).
pub fn same_value(a: &Q, b: &Q) -> bool {
    compare(a, b) == Ordering::Equal
}

/// Sort ascending by value.
pub fn sort_values(v: &mut [Q]) {
    v.sort_by(compare);
}

/// The numbers sorted ascending (the canonical order used by moves and error messages).
pub fn canonical(numbers: &[Q]) -> Vec<Q> {
    let mut v = numbers.to_vec();
    sort_values(&mut v);
    v
}

/// `a` and `b` hold the same values, counted with multiplicity, in any order.
pub fn same_multiset(a: &[Q], b: &[Q]) -> bool {
    a.len() == b.len() && canonical(a).iter().zip(canonical(b).iter()).all(|(x, y)| same_value(x, y))
}

// ---------------------------------------------------------------------------------------------
// Reading numbers
// ---------------------------------------------------------------------------------------------

/// Strip one leading sign (`-`, unicode minus `−`, en dash `–`, `+`). Returns (negative, rest).
pub fn strip_sign(s: &str) -> (bool, &str) {
    if let Some(r) = s.strip_prefix('-') {
        (true, r)
    } else if let Some(r) = s.strip_prefix('\u{2212}') {
        (true, r)
    } else if let Some(r) = s.strip_prefix('\u{2013}') {
        (true, r)
    } else if let Some(r) = s.strip_prefix('+') {
        (false, r)
    } else {
        (false, s)
    }
}

/// An unsigned decimal "12", "1.5", ".5", "5." (ASCII digits only) -> exact value. None if it is
/// not one, has more than 18 significant decimals, or does not fit.
pub fn parse_decimal(s: &str) -> Option<Q> {
    let (int_part, frac_part) = s.split_once('.').unwrap_or((s, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit()) || !frac_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac_part = frac_part.trim_end_matches('0');
    if frac_part.len() > 18 {
        return None;
    }
    // Only ASCII digits are left, so `parse` fails only on overflow (leading zeros are fine).
    let digits = |t: &str| if t.is_empty() { Some(0) } else { t.parse::<i64>().ok() };
    let whole = Q::from_integer(digits(int_part)?);
    // 10^18 fits in i64.
    let scale = 10i64.checked_pow(u32::try_from(frac_part.len()).ok()?)?;
    let fraction = Q::new(digits(frac_part)?, scale);
    // The sum's numerator is the reduced numerator of the value, so this overflows only when the
    // value does not fit.
    whole.checked_add(&fraction)
}

/// Length in bytes of the decimal literal at the start of `s` ("12", "1.5", ".5"; a trailing
/// '.' not followed by a digit is not part of it).
pub fn decimal_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut k = 0;
    while k < b.len() && b[k].is_ascii_digit() {
        k += 1;
    }
    if k + 1 < b.len() && b[k] == b'.' && b[k + 1].is_ascii_digit() {
        k += 1;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
    }
    k
}

/// "5", "-1", "(-1)", "1.5", "0.666", "2/3", "−3" -> exact rational. None if not a number
/// (or not representable with 64-bit numerator and denominator).
pub fn parse_number(s: &str) -> Option<Q> {
    if s.len() > MAX_INPUT_LEN {
        return None;
    }
    let mut s = s.trim();
    // Balanced outer parentheses, e.g. "(-1)".
    while let Some(inner) = s.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        s = inner.trim();
    }
    // A sentence-ending period: "5."
    let s = match s.strip_suffix('.') {
        Some(t) if t.ends_with(|c: char| c.is_ascii_digit()) => t,
        _ => s,
    };
    let (negative, rest) = strip_sign(s);
    let (num, den) = match rest.split_once('/') {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (rest, None),
    };
    let mut value = parse_decimal(num)?;
    if let Some(den) = den {
        value = Op::Div.apply(value, parse_decimal(den)?)?;
    }
    if negative {
        value = neg(&value)?;
    }
    Some(value)
}

/// Space-separated list "4 9 10 13" (also tolerates commas, semicolons and surrounding brackets)
/// -> numbers. None if any item is not a number or the list is empty.
pub fn parse_numbers(s: &str) -> Option<Vec<Q>> {
    if s.len() > MAX_INPUT_LEN {
        return None;
    }
    let mut s = s.trim();
    if let Some(inner) = s.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        s = inner;
    }
    let out: Option<Vec<Q>> = s
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|t| !t.is_empty())
        .map(parse_number)
        .collect();
    out.filter(|v| !v.is_empty())
}

// ---------------------------------------------------------------------------------------------
// Writing numbers
// ---------------------------------------------------------------------------------------------

/// Integers as "5"; terminating decimals with at most 3 decimals as "1.5"; otherwise "a/b".
/// Always the reduced value, whatever ratio it is given.
pub fn format_number(q: &Q) -> String {
    let (n, d) = (*q.numer(), *q.denom());
    if d == 0 {
        // Only a ratio built with `Ratio::new_raw` can have a zero denominator.
        return format!("{n}/0");
    }
    // Reduce the magnitudes as unsigned numbers, where `i64::MIN` has a magnitude (2^63).
    let magnitude = Ratio::<u64>::new(n.unsigned_abs(), d.unsigned_abs());
    let (un, ud) = (*magnitude.numer(), *magnitude.denom());
    let sign = if (n < 0) != (d < 0) && un != 0 { "-" } else { "" };
    if ud == 1 {
        return format!("{sign}{un}");
    }
    if 1000 % ud == 0 {
        let scaled = u128::from(un) * u128::from(1000 / ud);
        let frac = format!("{:03}", scaled % 1000);
        return format!("{sign}{}.{}", scaled / 1000, frac.trim_end_matches('0'));
    }
    format!("{sign}{un}/{ud}")
}

/// Space separated, in the given order.
pub fn format_numbers(qs: &[Q]) -> String {
    qs.iter().map(format_number).collect::<Vec<_>>().join(" ")
}

/// A number as an operand inside an expression: negatives and non-decimal fractions in parentheses.
pub fn format_operand(q: &Q) -> String {
    let s = format_number(q);
    if q.is_negative() || s.contains('/') {
        format!("({s})")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::arith::testing::{fr, q};

    #[test]
    fn parse_number_forms() {
        assert_eq!(parse_number("5"), Some(q(5)));
        assert_eq!(parse_number(" 5 "), Some(q(5)));
        assert_eq!(parse_number("-1"), Some(q(-1)));
        assert_eq!(parse_number("(-1)"), Some(q(-1)));
        assert_eq!(parse_number("\u{2212}3"), Some(q(-3)));
        assert_eq!(parse_number("+7"), Some(q(7)));
        assert_eq!(parse_number("1.5"), Some(fr(3, 2)));
        assert_eq!(parse_number(".5"), Some(fr(1, 2)));
        assert_eq!(parse_number("5."), Some(q(5)));
        assert_eq!(parse_number("0.666"), Some(fr(333, 500)));
        assert_eq!(parse_number("2/3"), Some(fr(2, 3)));
        assert_eq!(parse_number("-2/3"), Some(fr(-2, 3)));
        assert_eq!(parse_number("6/9"), Some(fr(2, 3)));
        assert_eq!(parse_number("1.50000000000000000000000"), Some(fr(3, 2)));
        assert_eq!(parse_number("9223372036854775807"), Some(q(i64::MAX)));
        assert_eq!(parse_number("-9223372036854775807"), Some(q(-i64::MAX)));
    }

    #[test]
    fn parse_number_rejects() {
        for s in [
            "",
            " ",
            "-",
            ".",
            "abc",
            "1/0",
            "0/0",
            "1.2.3",
            "1e5",
            "--1",
            "2/",
            "/3",
            "approx. 2.71",
            "9223372036854775808",
            "-9223372036854775808",
            "99999999999999999999999999999999999999999999",
            "0.0000000000000000000001",
            "1/99999999999999999999",
            "(",
            ")",
            "()",
            "５",
        ] {
            assert_eq!(parse_number(s), None, "{s:?}");
        }
    }

    #[test]
    fn format_number_forms() {
        assert_eq!(format_number(&q(5)), "5");
        assert_eq!(format_number(&q(-1)), "-1");
        assert_eq!(format_number(&q(0)), "0");
        assert_eq!(format_number(&fr(3, 2)), "1.5");
        assert_eq!(format_number(&fr(-1, 2)), "-0.5");
        assert_eq!(format_number(&fr(1, 8)), "0.125");
        assert_eq!(format_number(&fr(667, 100)), "6.67");
        assert_eq!(format_number(&fr(1, 16)), "1/16");
        assert_eq!(format_number(&fr(2, 3)), "2/3");
        assert_eq!(format_number(&fr(-10, 3)), "-10/3");
        assert_eq!(format_number(&fr(20, 3)), "20/3");
        // Non-normalized input still prints reduced.
        assert_eq!(format_number(&Q::new_raw(4, 2)), "2");
        assert_eq!(format_number(&Q::new_raw(1, -2)), "-0.5");
        assert_eq!(format_number(&q(i64::MIN)), i64::MIN.to_string());
    }

    #[test]
    fn format_parse_round_trip() {
        for n in -30..=30 {
            for d in 1..=30 {
                let x = fr(n, d);
                assert_eq!(parse_number(&format_number(&x)), Some(x));
            }
        }
    }

    #[test]
    fn numbers_lists() {
        assert_eq!(parse_numbers("4 9 10 13"), Some(vec![q(4), q(9), q(10), q(13)]));
        assert_eq!(parse_numbers("4, 9, 10, 13"), Some(vec![q(4), q(9), q(10), q(13)]));
        assert_eq!(parse_numbers("[4,9]"), Some(vec![q(4), q(9)]));
        assert_eq!(parse_numbers("2/3 10"), Some(vec![fr(2, 3), q(10)]));
        assert_eq!(parse_numbers("(-1) 6 10"), Some(vec![q(-1), q(6), q(10)]));
        assert_eq!(parse_numbers(""), None);
        assert_eq!(parse_numbers("4 x 5"), None);
        assert_eq!(format_numbers(&[q(10), fr(2, 3), fr(3, 2)]), "10 2/3 1.5");
        assert_eq!(format_numbers(&[]), "");
    }
}
