//! Exact arithmetic shared by tasks and tools: rational numbers and their text forms
//! ([`number`]), the four checked operations ([`op`]), an expression evaluator ([`expr`]), and
//! the reach-a-target puzzles (Game of 24, countdown) for any target and any count of numbers:
//! the step grammar and move generator ([`steps`]), the answer checker ([`reach`]) and the
//! solver ([`solver`]).
//!
//! Everything a model writes is untrusted: every function here accepts any string and never panics.
//! All arithmetic is exact (`Ratio<i64>`) and checked with num-traits' `CheckedAdd`, `CheckedSub`,
//! `CheckedMul` and `CheckedDiv` on `Ratio`: an overflow or a division by zero is an error, never a
//! panic or a silently wrong value.

pub mod expr;
pub mod number;
pub mod op;
pub mod reach;
pub mod solver;
pub mod steps;

pub use expr::eval_expr;
pub use number::{
    canonical, compare, format_number, format_numbers, format_operand, neg, normalized, parse_number, parse_numbers,
    same_multiset, same_value, sort_values, Q,
};
pub use op::Op;

/// Longest line/expression (in bytes) the parsers will look at.
pub const MAX_INPUT_LEN: usize = 4096;

/// Short names for numbers in tests: `q(24)`, `fr(2, 3)`, `qs("4 9 10 13")`.
#[cfg(test)]
pub(crate) mod testing {
    use super::{parse_numbers, Q};

    pub fn q(n: i64) -> Q {
        Q::from_integer(n)
    }

    pub fn fr(n: i64, d: i64) -> Q {
        Q::new(n, d)
    }

    pub fn qs(s: &str) -> Vec<Q> {
        parse_numbers(s).expect("test numbers")
    }
}
