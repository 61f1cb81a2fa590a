//! Arithmetic expressions: a tokenizer, a parser and an exact evaluator (+ - * / parentheses,
//! unary minus, decimals, unicode `× ÷ −`, 'x' as times between numbers).
//!
//! The tokens and the syntax tree are public so that a task can read its own line formats with them
//! (Game of 24 reads the single operation of a step line).

use num_traits::Zero;

use super::number::{decimal_len, neg, parse_decimal, Q};
use super::op::Op;
use super::MAX_INPUT_LEN;

/// Most tokens an expression may have (bounds the recursion depth of the evaluator).
const MAX_TOKENS: usize = 512;
/// Deepest nesting of parentheses / unary signs.
const MAX_DEPTH: usize = 64;

/// A token of an expression.
#[derive(Debug, Clone)]
pub enum Tok {
    /// A literal; `frac` is set when it was written as an unspaced fraction "2/3" (step mode only).
    Num {
        /// The value.
        value: Q,
        /// (numerator, denominator) as written, for an unspaced fraction.
        frac: Option<(Q, Q)>,
    },
    /// An operator.
    Op(Op),
    /// `(`, `[` or `{`.
    Open,
    /// `)`, `]` or `}`.
    Close,
    /// Lenient mode only: a run of text that is not part of any expression (prose, ':', ...).
    Gap,
}

/// Tokenize `s`. With `fractions`, an unspaced "a/b" between digits is one number. With `lenient`,
/// characters that cannot be part of an expression become `Gap` tokens instead of an error.
pub fn tokenize(s: &str, fractions: bool, lenient: bool) -> Result<Vec<Tok>, String> {
    let mut toks: Vec<Tok> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if toks.len() > MAX_TOKENS {
            return Err("the expression is too long".to_string());
        }
        let rest = &s[i..];
        let Some(c) = rest.chars().next() else { break };
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let starts_number =
            c.is_ascii_digit() || (c == '.' && rest.as_bytes().get(1).is_some_and(|b| b.is_ascii_digit()));
        if starts_number {
            let len = decimal_len(rest);
            let value =
                parse_decimal(&rest[..len]).ok_or_else(|| format!("the number {} is too large", &rest[..len]))?;
            i += len;
            let mut frac = None;
            let mut value = value;
            let after = &s[i..];
            if fractions && after.starts_with('/') && after.as_bytes().get(1).is_some_and(|b| b.is_ascii_digit()) {
                let dlen = decimal_len(&after[1..]);
                let den = parse_decimal(&after[1..1 + dlen])
                    .ok_or_else(|| format!("the number {} is too large", &after[1..1 + dlen]))?;
                let q = Op::Div.apply(value, den).ok_or_else(|| {
                    if den.is_zero() {
                        format!("{} divides by zero", &rest[..len + 1 + dlen])
                    } else {
                        format!("the number {} is too large", &rest[..len + 1 + dlen])
                    }
                })?;
                frac = Some((value, den));
                value = q;
                i += 1 + dlen;
            }
            toks.push(Tok::Num { value, frac });
            continue;
        }
        i += c.len_utf8();
        let tok = if let Some(op) = Op::from_char(c) {
            Some(Tok::Op(op))
        } else {
            match c {
                '(' | '[' | '{' => Some(Tok::Open),
                ')' | ']' | '}' => Some(Tok::Close),
                'x' | 'X' => {
                    let after_operand = matches!(toks.last(), Some(Tok::Num { .. } | Tok::Close));
                    let before_operand =
                        s[i..].trim_start().starts_with(|d: char| d.is_ascii_digit() || d == '(' || d == '.');
                    (after_operand && before_operand).then_some(Tok::Op(Op::Mul))
                }
                _ => None,
            }
        };
        match tok {
            Some(t) => toks.push(t),
            None if lenient => {
                if !matches!(toks.last(), Some(Tok::Gap)) {
                    toks.push(Tok::Gap);
                }
            }
            None => return Err(format!("unexpected '{c}'")),
        }
    }
    Ok(toks)
}

/// A parsed expression.
#[derive(Debug, Clone)]
pub enum Expr {
    /// A literal.
    Num(Q),
    /// Unary minus.
    Neg(Box<Expr>),
    /// A binary operation.
    Bin(Op, Box<Expr>, Box<Expr>),
}

/// Parse a whole token list as one expression, or say in plain words what is wrong.
pub fn parse_tokens(toks: &[Tok]) -> Result<Expr, String> {
    Parser::parse_all(toks)
}

struct Parser<'a> {
    toks: &'a [Tok],
    pos: usize,
}

impl Parser<'_> {
    fn parse_all(toks: &[Tok]) -> Result<Expr, String> {
        if toks.is_empty() {
            return Err("the expression is empty".to_string());
        }
        let mut p = Parser { toks, pos: 0 };
        let e = p.expr(0)?;
        match p.toks.get(p.pos) {
            None => Ok(e),
            Some(Tok::Close) => Err("unbalanced parentheses (an extra ')')".to_string()),
            Some(Tok::Num { .. }) => Err("an operator is missing between two numbers".to_string()),
            Some(Tok::Open) => Err("an operator is missing before '('".to_string()),
            Some(Tok::Op(_)) | Some(Tok::Gap) => Err("unexpected text in the expression".to_string()),
        }
    }

    fn peek_op(&self) -> Option<Op> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(op)) => Some(*op),
            _ => None,
        }
    }

    fn expr(&mut self, depth: usize) -> Result<Expr, String> {
        let mut lhs = self.term(depth)?;
        while let Some(op @ (Op::Add | Op::Sub)) = self.peek_op() {
            self.pos += 1;
            let rhs = self.term(depth)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn term(&mut self, depth: usize) -> Result<Expr, String> {
        let mut lhs = self.factor(depth)?;
        while let Some(op @ (Op::Mul | Op::Div)) = self.peek_op() {
            self.pos += 1;
            let rhs = self.factor(depth)?;
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn factor(&mut self, depth: usize) -> Result<Expr, String> {
        if depth > MAX_DEPTH {
            return Err("the expression is nested too deeply".to_string());
        }
        let tok = self.toks.get(self.pos).cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Num { value, .. }) => Ok(Expr::Num(value)),
            Some(Tok::Op(Op::Sub)) => Ok(Expr::Neg(Box::new(self.factor(depth + 1)?))),
            Some(Tok::Op(Op::Add)) => self.factor(depth + 1),
            Some(Tok::Open) => {
                let e = self.expr(depth + 1)?;
                match self.toks.get(self.pos) {
                    Some(Tok::Close) => {
                        self.pos += 1;
                        Ok(e)
                    }
                    _ => Err("unbalanced parentheses (a missing ')')".to_string()),
                }
            }
            Some(Tok::Op(op)) => Err(format!("'{}' is missing a number before it", op.symbol())),
            Some(Tok::Close) => Err("a number is missing before ')'".to_string()),
            Some(Tok::Gap) => Err("unexpected text in the expression".to_string()),
            None => Err("a number is missing at the end".to_string()),
        }
    }
}

impl Expr {
    /// The value of a signed literal (`5`, `-5`, `(-5)`), or None if it contains an operation.
    pub fn leaf_value(&self) -> Option<Q> {
        match self {
            Expr::Num(q) => Some(*q),
            Expr::Neg(inner) => neg(&inner.leaf_value()?),
            Expr::Bin(..) => None,
        }
    }
}

fn eval(e: &Expr, leaves: &mut Vec<Q>) -> Result<Q, String> {
    match e {
        Expr::Num(q) => {
            leaves.push(*q);
            Ok(*q)
        }
        Expr::Neg(inner) => {
            if let Some(v) = e.leaf_value() {
                // A negative literal counts as one (signed) number.
                leaves.push(v);
                return Ok(v);
            }
            let v = eval(inner, leaves)?;
            neg(&v).ok_or_else(|| "overflow (numbers too large)".to_string())
        }
        Expr::Bin(op, l, r) => {
            let a = eval(l, leaves)?;
            let b = eval(r, leaves)?;
            op.apply_or_reason(a, b)
        }
    }
}

/// Evaluate an arithmetic expression exactly: + - * / parentheses, unary minus, decimals, unicode
/// `× ÷ −`, 'x' as times only between numbers. Returns the value and the leaf numbers used in order
/// (a literal with a unary minus directly applied, like `-4` or `(-4)`, is the leaf `-4`).
pub fn eval_expr(expr: &str) -> Result<(Q, Vec<Q>), String> {
    if expr.len() > MAX_INPUT_LEN {
        return Err("the expression is too long".to_string());
    }
    let toks = tokenize(expr, false, false)?;
    let e = parse_tokens(&toks)?;
    let mut leaves = Vec::new();
    let v = eval(&e, &mut leaves)?;
    Ok((v, leaves))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::arith::testing::{fr, q, qs};

    #[test]
    fn eval_expr_basics() {
        assert_eq!(eval_expr("(4 * 5) + (10 - 6)"), Ok((q(24), qs("4 5 10 6"))));
        assert_eq!(eval_expr("8/(3-8/3)"), Ok((q(24), qs("8 3 8 3"))));
        assert_eq!(eval_expr("2 + 3 * 4"), Ok((q(14), qs("2 3 4"))));
        assert_eq!(eval_expr("(2 + 3) * 4"), Ok((q(20), qs("2 3 4"))));
        assert_eq!(eval_expr("10 - 4 - 3"), Ok((q(3), qs("10 4 3"))));
        assert_eq!(eval_expr("24 / 4 / 3"), Ok((q(2), qs("24 4 3"))));
        assert_eq!(eval_expr("-4 + 10"), Ok((q(6), qs("-4 10"))));
        assert_eq!(eval_expr("-(4 - 10)"), Ok((q(6), qs("4 10"))));
        assert_eq!(eval_expr("6 + (-1)"), Ok((q(5), vec![q(6), q(-1)])));
        assert_eq!(eval_expr("1.5 * 16"), Ok((q(24), vec![fr(3, 2), q(16)])));
        assert_eq!(eval_expr("4 \u{d7} 6"), Ok((q(24), qs("4 6"))));
        assert_eq!(eval_expr("48 \u{f7} 2"), Ok((q(24), qs("48 2"))));
        assert_eq!(eval_expr("30 \u{2212} 6"), Ok((q(24), qs("30 6"))));
        assert_eq!(eval_expr("4 x 6"), Ok((q(24), qs("4 6"))));
        assert_eq!(eval_expr("(1 + 3)x(2 + 4)"), Ok((q(24), qs("1 3 2 4"))));
        assert_eq!(eval_expr("[4 * (5 + 1)]"), Ok((q(24), qs("4 5 1"))));
        assert_eq!(eval_expr("4/3"), Ok((fr(4, 3), qs("4 3"))));
    }

    #[test]
    fn eval_expr_errors() {
        assert_eq!(eval_expr("1/0"), Err("1 / 0 divides by zero".to_string()));
        assert_eq!(eval_expr("1/(2-2)"), Err("1 / 0 divides by zero".to_string()));
        assert!(eval_expr("9223372036854775807 + 1").unwrap_err().contains("overflows"));
        assert!(eval_expr("99999999999999999999").unwrap_err().contains("too large"));
        assert!(eval_expr("").is_err());
        assert!(eval_expr("x").is_err());
        assert!(eval_expr("4 x").is_err());
        assert!(eval_expr("x 4").is_err());
        assert!(eval_expr("(4 + 5").unwrap_err().contains("missing ')'"));
        assert!(eval_expr("4 + 5)").unwrap_err().contains("extra ')'"));
        assert!(eval_expr("4 5").unwrap_err().contains("operator is missing"));
        assert!(eval_expr("4 +").is_err());
        assert!(eval_expr("* 4").is_err());
        assert!(eval_expr("4 ^ 2").unwrap_err().contains('^'));
        assert!(eval_expr("2(3+4)").is_err());
        assert!(eval_expr("4 + 5 which is 9").is_err());
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(eval_expr(&deep).is_err());
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(eval_expr(&deep).is_err());
        let long = "1+".repeat(1000) + "1";
        assert!(eval_expr(&long).is_err());
        let unary = "-".repeat(1000) + "1";
        assert!(eval_expr(&unary).is_err());
        // Moderate nesting is fine.
        let ok = format!("{}24{}", "(".repeat(20), ")".repeat(20));
        assert_eq!(eval_expr(&ok).map(|r| r.0), Ok(q(24)));
    }
}
