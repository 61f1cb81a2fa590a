//! The four operations, exact and checked.

use num_traits::{CheckedAdd, CheckedDiv, CheckedMul, CheckedSub, Zero};

use super::number::{format_operand, normalized, Q};

/// One of the four arithmetic operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

impl Op {
    /// All four, in the order `+ - * /`.
    pub const ALL: [Op; 4] = [Op::Add, Op::Sub, Op::Mul, Op::Div];

    /// The ASCII symbol used in canonical lines: `+ - * /`.
    pub fn symbol(self) -> char {
        match self {
            Op::Add => '+',
            Op::Sub => '-',
            Op::Mul => '*',
            Op::Div => '/',
        }
    }

    /// `+ - * /` and the unicode `− – × · ∗ ÷ ∕` spellings. ('x' is context dependent and not here.)
    pub fn from_char(c: char) -> Option<Op> {
        match c {
            '+' => Some(Op::Add),
            '-' | '\u{2212}' | '\u{2013}' => Some(Op::Sub),
            '*' | '\u{d7}' | '\u{b7}' | '\u{2217}' | '\u{22c5}' => Some(Op::Mul),
            '/' | '\u{f7}' | '\u{2215}' => Some(Op::Div),
            _ => None,
        }
    }

    /// Exact and checked: `None` on overflow or division by zero. The result is in normal form
    /// (see [`normalized`]); an operand without one (a zero denominator, or `i64::MIN` left after
    /// reducing, only possible in a ratio a caller built with `Ratio::new_raw`) gives `None`.
    pub fn apply(self, a: Q, b: Q) -> Option<Q> {
        let (a, b) = (normalized(&a)?, normalized(&b)?);
        let value = match self {
            Op::Add => a.checked_add(&b),
            Op::Sub => a.checked_sub(&b),
            Op::Mul => a.checked_mul(&b),
            Op::Div => a.checked_div(&b),
        }?;
        // num-rational may return a numerator of exactly `i64::MIN`, which could not be negated.
        normalized(&value)
    }

    /// [`Op::apply`], or why not in plain words ("1 / 0 divides by zero", "... overflows (numbers
    /// too large)").
    pub fn apply_or_reason(self, a: Q, b: Q) -> Result<Q, String> {
        self.apply(a, b).ok_or_else(|| {
            if self == Op::Div && b.is_zero() {
                format!("{} / 0 divides by zero", format_operand(&a))
            } else {
                format!("{} {} {} overflows (numbers too large)", format_operand(&a), self.symbol(), format_operand(&b))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::parse_number;

    use crate::arith::testing::{fr, q};

    #[test]
    fn op_apply_is_exact_and_checked() {
        assert_eq!(Op::Add.apply(q(4), q(5)), Some(q(9)));
        assert_eq!(Op::Sub.apply(q(4), q(5)), Some(q(-1)));
        assert_eq!(Op::Mul.apply(fr(2, 3), q(3)), Some(q(2)));
        assert_eq!(Op::Div.apply(q(4), q(3)), Some(fr(4, 3)));
        assert_ne!(Op::Div.apply(q(4), q(3)), parse_number("1.33"));
        assert_eq!(Op::Div.apply(q(4), q(0)), None);
        assert_eq!(Op::Mul.apply(q(i64::MAX), q(2)), None);
        assert_eq!(Op::Add.apply(q(i64::MAX), q(1)), None);
        assert_eq!(Op::Sub.apply(q(-i64::MAX), q(1)), None);
        assert_eq!(Op::Div.apply(fr(1, i64::MAX), q(2)), None);
        assert_eq!(Op::Add.apply(fr(1, i64::MAX), fr(1, i64::MAX - 1)), None);
        // Large but representable after reduction.
        assert_eq!(Op::Mul.apply(fr(i64::MAX, 2), fr(2, i64::MAX)), Some(q(1)));
        assert_eq!(Op::ALL.map(Op::symbol), ['+', '-', '*', '/']);
    }
}
