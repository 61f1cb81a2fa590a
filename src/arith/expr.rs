//! Arithmetic expressions: a tokenizer, a parser and an exact evaluator (+ - * / parentheses,
//! unary minus, decimals, unicode `× ÷ −`, 'x' as times between numbers). The calculator's
//! syntax ([`eval_calc`]) adds powers (`**` or `^`, with a bounded exponent) and hexadecimal
//! literals (`0x10`); the Game-of-24 syntax has neither.
//!
//! The tokens and the syntax tree are public so that a task can read its own line formats with them
//! (Game of 24 reads the single operation of a step line).

use num_traits::Zero;

use super::number::{decimal_len, format_operand, neg, parse_decimal, Q};
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
    /// Calculator syntax only: `**` or `^`, a power.
    Pow,
}

/// Largest exponent a power may have (beyond it, any base other than 0 and ±1 overflows).
pub const MAX_EXPONENT: i64 = 64;

/// Tokenize `s`. With `fractions`, an unspaced "a/b" between digits is one number. With `lenient`,
/// characters that cannot be part of an expression become `Gap` tokens instead of an error.
pub fn tokenize(s: &str, fractions: bool, lenient: bool) -> Result<Vec<Tok>, String> {
    tokenize_with(s, fractions, lenient, false)
}

/// [`tokenize`], with the calculator's powers and hexadecimal literals when `calc`.
fn tokenize_with(s: &str, fractions: bool, lenient: bool, calc: bool) -> Result<Vec<Tok>, String> {
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
        if calc {
            if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
                let len = hex.find(|d: char| !d.is_ascii_alphanumeric()).unwrap_or(hex.len());
                let digits = &hex[..len];
                if !digits.is_empty() {
                    let literal = &rest[..2 + len];
                    if !digits.chars().all(|d| d.is_ascii_hexdigit()) {
                        return Err(format!("{literal} is not a hexadecimal number"));
                    }
                    let value =
                        i64::from_str_radix(digits, 16).map_err(|_| format!("the number {literal} is too large"))?;
                    toks.push(Tok::Num { value: Q::from_integer(value), frac: None });
                    i += 2 + len;
                    continue;
                }
            }
            if rest.starts_with("**") || c == '^' {
                toks.push(Tok::Pow);
                i += if c == '^' { 1 } else { 2 };
                continue;
            }
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
    /// A power, base and exponent (calculator syntax only).
    Pow(Box<Expr>, Box<Expr>),
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
            Some(Tok::Pow) => Err("a power needs a base: write it as 2 ** 3".to_string()),
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
        match self.toks.get(self.pos) {
            Some(Tok::Op(Op::Sub)) => {
                self.pos += 1;
                Ok(Expr::Neg(Box::new(self.factor(depth + 1)?)))
            }
            Some(Tok::Op(Op::Add)) => {
                self.pos += 1;
                self.factor(depth + 1)
            }
            _ => self.power(depth),
        }
    }

    /// An operand and, in calculator syntax, `** exponent` (right-associative, binding tighter
    /// than a unary minus on its left: `-2 ** 2` is -4, as in Python).
    fn power(&mut self, depth: usize) -> Result<Expr, String> {
        let base = self.atom(depth)?;
        if matches!(self.toks.get(self.pos), Some(Tok::Pow)) {
            self.pos += 1;
            let exponent = self.factor(depth + 1)?;
            return Ok(Expr::Pow(Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn atom(&mut self, depth: usize) -> Result<Expr, String> {
        let tok = self.toks.get(self.pos).cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Num { value, .. }) => Ok(Expr::Num(value)),
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
            Some(Tok::Pow) => Err("a power needs a base: write it as 2 ** 3".to_string()),
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
            Expr::Bin(..) | Expr::Pow(..) => None,
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
        Expr::Pow(base, exponent) => {
            let b = eval(base, leaves)?;
            let e = eval(exponent, leaves)?;
            power(b, e)
        }
    }
}

/// `base ** exponent`, exactly: the exponent must be a whole number, and at most
/// [`MAX_EXPONENT`] in size unless the base is 0 or ±1 (any other would overflow anyway), so a
/// power tower like `9 ** 9 ** 9` is an error at once, never a long loop.
fn power(base: Q, exponent: Q) -> Result<Q, String> {
    let shown = format!("{} ** {}", format_operand(&base), format_operand(&exponent));
    if !exponent.is_integer() {
        return Err(format!("{shown}: the exponent must be a whole number"));
    }
    let e = *exponent.numer();
    let one = Q::from_integer(1);
    if e == 0 {
        return Ok(one);
    }
    if base.is_zero() {
        return if e > 0 { Ok(base) } else { Err(format!("{shown} divides by zero")) };
    }
    if base == one {
        return Ok(one);
    }
    if base == -one {
        return Ok(if e % 2 == 0 { one } else { base });
    }
    if e.unsigned_abs() > MAX_EXPONENT as u64 {
        return Err(format!("{shown} is too large (the exponent may be at most {MAX_EXPONENT})"));
    }
    let too_large = || format!("{shown} is too large (it overflows exact numbers)");
    let mut value = one;
    for _ in 0..e.unsigned_abs() {
        value = Op::Mul.apply(value, base).ok_or_else(too_large)?;
    }
    if e < 0 {
        value = Op::Div.apply(one, value).ok_or_else(too_large)?;
    }
    Ok(value)
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

/// Evaluate a calculator expression exactly: everything [`eval_expr`] reads, plus powers
/// (`2 ** 3`, `2 ^ 3`; right-associative, whole exponents up to [`MAX_EXPONENT`]) and
/// hexadecimal literals (`0x10`).
pub fn eval_calc(expr: &str) -> Result<Q, String> {
    if expr.len() > MAX_INPUT_LEN {
        return Err("the expression is too long".to_string());
    }
    let toks = tokenize_with(expr, false, false, true)?;
    let e = parse_tokens(&toks)?;
    eval(&e, &mut Vec::new())
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
        // Powers and hexadecimal are the calculator's, not Game of 24's.
        assert!(eval_expr("2**3").is_err());
        assert!(eval_expr("2^3").is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Any text gives a value or a reason, in both syntaxes, and never panics.
        #[test]
        fn arbitrary_expressions_never_panic(
            expr in proptest::prop_oneof![
                proptest::prelude::any::<String>(),
                "[-+*/^x0-9 .()\\[\\]{}\u{d7}\u{f7}\u{2212}]{0,60}",
                "(0x[0-9a-fA-FgG]{0,20}|[0-9]{1,20}|\\*\\*|\\^|[-+*/()]| ){0,30}",
            ]
        ) {
            let _ = eval_calc(&expr);
            let _ = eval_expr(&expr);
            let _ = tokenize(&expr, true, true);
        }

        /// A power of small numbers is exact or "too large", never wrong: it agrees with
        /// checked integer arithmetic.
        #[test]
        fn small_powers_agree_with_integer_arithmetic(base in -20i64..20, exp in 0u32..80) {
            let got = eval_calc(&format!("({base}) ** {exp}"));
            // Exact numbers keep to ±(2^63 - 1), so negating one never overflows: i64::MIN
            // ((-8) ** 21, (-2) ** 63) is out of range like anything larger.
            match base.checked_pow(exp).filter(|&v| v != i64::MIN) {
                Some(v) => proptest::prop_assert_eq!(got, Ok(q(v))),
                None => proptest::prop_assert!(got.is_err_and(|e| e.contains("too large"))),
            }
        }
    }

    #[test]
    fn eval_calc_has_powers_and_hexadecimal() {
        assert_eq!(eval_calc("2**3"), Ok(q(8)));
        assert_eq!(eval_calc("2 ^ 3"), Ok(q(8)));
        assert_eq!(eval_calc("2 ** 3 ** 2"), Ok(q(512)), "right-associative");
        assert_eq!(eval_calc("-2 ** 2"), Ok(q(-4)), "the power binds tighter than a unary minus");
        assert_eq!(eval_calc("(-2) ** 3"), Ok(q(-8)));
        assert_eq!(eval_calc("2 ** -2"), Ok(fr(1, 4)));
        assert_eq!(eval_calc("(2/3) ** 2 * 9"), Ok(q(4)));
        assert_eq!(eval_calc("1 + 2 * 3 ** 2"), Ok(q(19)));
        assert_eq!(eval_calc("0 ** 0"), Ok(q(1)));
        assert_eq!(eval_calc("1 ** 99999999999"), Ok(q(1)));
        assert_eq!(eval_calc("(-1) ** 99999999999"), Ok(q(-1)));
        assert_eq!(eval_calc("2 ** 62"), Ok(q(1 << 62)));
        assert_eq!(eval_calc("0x10"), Ok(q(16)));
        assert_eq!(eval_calc("0XfF + 1"), Ok(q(256)));
        assert_eq!(eval_calc("3 x 4"), Ok(q(12)));
        assert_eq!(eval_calc("(4 * 5) + (10 - 6)"), Ok(q(24)));

        let err = |e: &str| eval_calc(e).unwrap_err();
        assert!(err("9**9**9**9").contains("too large"), "{}", err("9**9**9**9"));
        assert!(err("2 ** 64").contains("too large"));
        assert!(err("(-8) ** 21").contains("too large"), "i64::MIN is out of range");
        assert!(err("2 ** 1000000").contains("too large"));
        assert!(err("0 ** -1").contains("divides by zero"));
        assert!(err("2 ** 0.5").contains("whole number"));
        assert!(err("0x").contains('x'));
        assert!(err("0xZZ").contains("not a hexadecimal"));
        assert!(err("0xFFFFFFFFFFFFFFFFFF").contains("too large"));
        assert!(err("** 2").contains("base"));
        assert!(err("2 **").contains("missing"));
        assert!(err("2 *** 3").contains("missing"), "{}", err("2 *** 3"));
        let tower = "2**".repeat(200) + "2";
        assert!(eval_calc(&tower).is_err());
    }
}
