//! Game of 24: exact arithmetic, lenient parsing of model-written steps and answers, and a solver.
//!
//! Everything a model writes is untrusted: every function here accepts any string and never panics.
//! All arithmetic is exact (`Ratio<i64>`) and checked: an overflow or a division by zero is an error,
//! never a panic or a silently wrong value.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

use num_rational::Ratio;
use num_traits::{Signed, Zero};

/// An exact rational number.
pub type Q = Ratio<i64>;

/// The value every puzzle must reach.
pub const TARGET: i64 = 24;

/// The ranked puzzle list (`rank,numbers`), derived from the Tree-of-Thoughts `24.csv`.
pub const PUZZLES_CSV: &str = include_str!("../../../assets/game24/puzzles.csv");

/// `solvable`/`solve` refuse larger inputs (the search grows factorially); they return `false`/`None`.
pub const MAX_SOLVE_NUMBERS: usize = 6;

/// Longest line/expression (in bytes) the parsers will look at.
const MAX_INPUT_LEN: usize = 4096;
/// Most tokens an expression may have (bounds the recursion depth of the evaluator).
const MAX_TOKENS: usize = 512;
/// Deepest nesting of parentheses / unary signs.
const MAX_DEPTH: usize = 64;
/// The solvability memo is cleared when it grows past this many entries.
const MEMO_LIMIT: usize = 500_000;

fn target() -> Q {
    Q::from_integer(TARGET)
}

// ---------------------------------------------------------------------------------------------
// Exact, checked arithmetic (all intermediate products in i128, results reduced and range-checked).
// ---------------------------------------------------------------------------------------------

fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Reduced numerator/denominator with a positive denominator, in i128 (never overflows).
fn reduced_parts(q: &Q) -> (i128, i128) {
    let (mut n, mut d) = (i128::from(*q.numer()), i128::from(*q.denom()));
    if d < 0 {
        n = -n;
        d = -d;
    }
    if d == 0 {
        return (n, d);
    }
    let g = gcd_u128(n.unsigned_abs(), d.unsigned_abs());
    if g > 1 {
        // g divides both and is at most |d| <= 2^63, so it fits in i128.
        let g = g as i128;
        n /= g;
        d /= g;
    }
    (n, d)
}

/// Build a reduced `Q` from an i128 fraction; `None` on a zero denominator or if it does not fit.
/// Never produces `i64::MIN` as numerator, so negation of a result is always safe.
fn make_q(n: i128, d: i128) -> Option<Q> {
    if d == 0 {
        return None;
    }
    if n == 0 {
        return Some(Q::zero());
    }
    let negative = (n < 0) != (d < 0);
    let (mut un, mut ud) = (n.unsigned_abs(), d.unsigned_abs());
    let g = gcd_u128(un, ud);
    un /= g;
    ud /= g;
    let n64 = i64::try_from(un).ok()?;
    let d64 = i64::try_from(ud).ok()?;
    Some(Q::new_raw(if negative { -n64 } else { n64 }, d64))
}

fn q_add(a: &Q, b: &Q) -> Option<Q> {
    let (an, ad) = (i128::from(*a.numer()), i128::from(*a.denom()));
    let (bn, bd) = (i128::from(*b.numer()), i128::from(*b.denom()));
    make_q(an.checked_mul(bd)?.checked_add(bn.checked_mul(ad)?)?, ad.checked_mul(bd)?)
}

fn q_sub(a: &Q, b: &Q) -> Option<Q> {
    let (an, ad) = (i128::from(*a.numer()), i128::from(*a.denom()));
    let (bn, bd) = (i128::from(*b.numer()), i128::from(*b.denom()));
    make_q(an.checked_mul(bd)?.checked_sub(bn.checked_mul(ad)?)?, ad.checked_mul(bd)?)
}

fn q_mul(a: &Q, b: &Q) -> Option<Q> {
    let (an, ad) = (i128::from(*a.numer()), i128::from(*a.denom()));
    let (bn, bd) = (i128::from(*b.numer()), i128::from(*b.denom()));
    make_q(an.checked_mul(bn)?, ad.checked_mul(bd)?)
}

fn q_div(a: &Q, b: &Q) -> Option<Q> {
    let (an, ad) = (i128::from(*a.numer()), i128::from(*a.denom()));
    let (bn, bd) = (i128::from(*b.numer()), i128::from(*b.denom()));
    make_q(an.checked_mul(bd)?, ad.checked_mul(bn)?)
}

fn q_neg(a: &Q) -> Option<Q> {
    make_q(-i128::from(*a.numer()), i128::from(*a.denom()))
}

/// Total order on rationals by cross-multiplication (no overflow possible in i128).
fn q_cmp(a: &Q, b: &Q) -> Ordering {
    let (an, ad) = reduced_parts(a);
    let (bn, bd) = reduced_parts(b);
    // Denominators are positive after `reduced_parts`; each product fits in i128.
    (an * bd).cmp(&(bn * ad))
}

fn q_eq(a: &Q, b: &Q) -> bool {
    q_cmp(a, b) == Ordering::Equal
}

fn sort_q(v: &mut [Q]) {
    v.sort_by(q_cmp);
}

/// The numbers sorted ascending (the canonical order used by `moves` and error messages).
pub fn canonical(numbers: &[Q]) -> Vec<Q> {
    let mut v = numbers.to_vec();
    sort_q(&mut v);
    v
}

fn same_multiset(a: &[Q], b: &[Q]) -> bool {
    a.len() == b.len() && canonical(a).iter().zip(canonical(b).iter()).all(|(x, y)| q_eq(x, y))
}

fn abs_all(v: &[Q]) -> Vec<Q> {
    v.iter().map(|q| if q.is_negative() { q_neg(q).unwrap_or(*q) } else { *q }).collect()
}

// ---------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------

/// Strip one leading sign (`-`, unicode minus `−`, en dash `–`, `+`). Returns (negative, rest).
fn strip_sign(s: &str) -> (bool, &str) {
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

/// An unsigned decimal "12", "1.5", ".5", "5." (ASCII digits only) -> exact value.
fn parse_decimal(s: &str) -> Option<Q> {
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
    let mut n: i128 = 0;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        n = n.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    let d = 10i128.checked_pow(u32::try_from(frac_part.len()).ok()?)?;
    make_q(n, d)
}

/// Length in bytes of the decimal literal at the start of `s` ("12", "1.5", ".5"; a trailing
/// '.' not followed by a digit is not part of it).
fn decimal_len(s: &str) -> usize {
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
        value = q_div(&value, &parse_decimal(den)?)?;
    }
    if negative {
        value = q_neg(&value)?;
    }
    Some(value)
}

/// Integers as "5"; terminating decimals with at most 3 decimals as "1.5"; otherwise "a/b".
pub fn format_number(q: &Q) -> String {
    let (n, d) = reduced_parts(q);
    if d == 1 {
        return n.to_string();
    }
    if d > 0 && 1000 % d == 0 {
        let scaled = n * (1000 / d);
        let sign = if scaled < 0 { "-" } else { "" };
        let a = scaled.unsigned_abs();
        let frac = format!("{:03}", a % 1000);
        return format!("{sign}{}.{}", a / 1000, frac.trim_end_matches('0'));
    }
    format!("{n}/{d}")
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

/// Space separated, in the given order.
pub fn format_numbers(qs: &[Q]) -> String {
    qs.iter().map(format_number).collect::<Vec<_>>().join(" ")
}

/// A number as an operand inside an expression: negatives and non-decimal fractions in parentheses.
fn format_operand(q: &Q) -> String {
    let s = format_number(q);
    if q.is_negative() || s.contains('/') {
        format!("({s})")
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

/// One of the four operations of the game.
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

    /// Exact and checked: `None` on overflow or division by zero.
    pub fn apply(self, a: Q, b: Q) -> Option<Q> {
        match self {
            Op::Add => q_add(&a, &b),
            Op::Sub => q_sub(&a, &b),
            Op::Mul => q_mul(&a, &b),
            Op::Div => q_div(&a, &b),
        }
    }
}

fn apply_or_reason(op: Op, a: Q, b: Q) -> Result<Q, String> {
    op.apply(a, b).ok_or_else(|| {
        if op == Op::Div && b.is_zero() {
            format!("{} / 0 divides by zero", format_operand(&a))
        } else {
            format!("{} {} {} overflows (numbers too large)", format_operand(&a), op.symbol(), format_operand(&b))
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Tokenizer and expression parser
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Tok {
    /// A literal; `frac` is set when it was written as an unspaced fraction "2/3" (step mode only).
    Num {
        value: Q,
        frac: Option<(Q, Q)>,
    },
    Op(Op),
    Open,
    Close,
    /// Lenient mode only: a run of text that is not part of any expression (prose, ':', ...).
    Gap,
}

/// Tokenize `s`. With `fractions`, an unspaced "a/b" between digits is one number. With `lenient`,
/// characters that cannot be part of an expression become `Gap` tokens instead of an error.
fn tokenize(s: &str, fractions: bool, lenient: bool) -> Result<Vec<Tok>, String> {
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
                let q = q_div(&value, &den).ok_or_else(|| {
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

#[derive(Debug, Clone)]
enum Expr {
    Num(Q),
    Neg(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
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

/// The value of a signed literal (`5`, `-5`, `(-5)`), or None if `e` contains an operation.
fn leaf_value(e: &Expr) -> Option<Q> {
    match e {
        Expr::Num(q) => Some(*q),
        Expr::Neg(inner) => q_neg(&leaf_value(inner)?),
        Expr::Bin(..) => None,
    }
}

fn eval(e: &Expr, leaves: &mut Vec<Q>) -> Result<Q, String> {
    match e {
        Expr::Num(q) => {
            leaves.push(*q);
            Ok(*q)
        }
        Expr::Neg(inner) => {
            if let Some(v) = leaf_value(e) {
                // A negative literal counts as one (signed) number.
                leaves.push(v);
                return Ok(v);
            }
            let v = eval(inner, leaves)?;
            q_neg(&v).ok_or_else(|| "overflow (numbers too large)".to_string())
        }
        Expr::Bin(op, l, r) => {
            let a = eval(l, leaves)?;
            let b = eval(r, leaves)?;
            apply_or_reason(*op, a, b)
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
    let e = Parser::parse_all(&toks)?;
    let mut leaves = Vec::new();
    let v = eval(&e, &mut leaves)?;
    Ok((v, leaves))
}

// ---------------------------------------------------------------------------------------------
// Step lines
// ---------------------------------------------------------------------------------------------

/// A step line as written, before checking it against the numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLine {
    /// Left operand.
    pub a: Q,
    /// The operation.
    pub op: Op,
    /// Right operand.
    pub b: Q,
    /// The result as written after `=` (or `≈`).
    pub result: Q,
    /// The line marks its result as approximate (`≈`, "approx.", "rounded", "~", "...").
    pub approx: bool,
    /// The `left:` list as written, if any.
    pub left: Option<Vec<Q>>,
}

const APPROX_MARKERS: [&str; 7] = ["approx", "\u{2248}", "~", "rounded", "roughly", "\u{2026}", "..."];

/// Remove markdown emphasis/code marks, leading bullets and list numbering.
fn strip_decorations(line: &str) -> String {
    let cleaned = line.replace("**", "").replace('`', "");
    let mut s = cleaned.trim();
    for _ in 0..4 {
        let before = s.len();
        for bullet in ["- ", "* ", "+ ", "\u{2022}", "\u{b7} ", "> ", "\u{2013} ", "\u{2014} "] {
            if let Some(r) = s.strip_prefix(bullet) {
                s = r.trim_start();
            }
        }
        // "1. " / "1) " / "(1) " numbering
        let body = s.strip_prefix('(').unwrap_or(s);
        let digits = body.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && digits <= 3 {
            let after = &body[digits..];
            if let Some(r) = after.strip_prefix(". ").or_else(|| after.strip_prefix(") ")) {
                s = r.trim_start();
            }
        }
        if s.len() == before {
            break;
        }
    }
    s.to_string()
}

/// The text of the `left:` (or `remaining:`) list up to the closing parenthesis, if present.
fn find_left(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for kw in ["left", "remaining"] {
        for (pos, _) in lower.match_indices(kw) {
            let after = &text[pos + kw.len()..];
            if let Some(list) = after.trim_start().strip_prefix(':') {
                if best.is_none_or(|(p, _)| pos < p) {
                    best = Some((pos, cut_at_close(list)));
                }
                break;
            }
        }
    }
    best.map(|(_, s)| s)
}

/// `s` up to the first ')' that closes a parenthesis opened before `s`.
fn cut_at_close(s: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return &s[..i],
            ')' => depth -= 1,
            _ => {}
        }
    }
    s
}

fn parse_left_list(s: &str) -> Result<(Vec<Q>, bool), String> {
    let mut approx = false;
    let mut out = Vec::new();
    let mut inner = s.trim();
    if let Some(r) = inner.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        inner = r;
    }
    for tok in inner.split(|c: char| c.is_whitespace() || c == ',' || c == ';') {
        if tok.is_empty() {
            continue;
        }
        match tok.to_ascii_lowercase().as_str() {
            "and" => continue,
            "approx." | "approx" | "approximately" | "about" | "~" | "\u{2248}" => {
                approx = true;
                continue;
            }
            _ => {}
        }
        let t = tok.trim_start_matches(['~', '\u{2248}']);
        let t2 = t.trim_end_matches(['.', '\u{2026}']);
        if t.len() != tok.len() || t.ends_with("..") || t.ends_with('\u{2026}') {
            approx = true;
        }
        let value = parse_number(t).or_else(|| parse_number(t2));
        match value {
            Some(q) => out.push(q),
            None => return Err(format!("cannot read the `left:` list \"{}\"", s.trim())),
        }
    }
    if out.is_empty() {
        return Err("the `left:` list is empty".to_string());
    }
    Ok((out, approx))
}

/// Read a (possibly parenthesized, signed, decimal or fractional) number at the start of `s`.
fn read_number_prefix(s: &str) -> Option<(Q, &str)> {
    let mut rest = s.trim_start();
    let open = rest.starts_with('(');
    if open {
        rest = rest[1..].trim_start();
    }
    let (negative, r) = strip_sign(rest);
    rest = r;
    let len = decimal_len(rest);
    if len == 0 {
        return None;
    }
    let mut value = parse_decimal(&rest[..len])?;
    rest = &rest[len..];
    // "2/3" or "2 / 3" written as the result.
    if let Some(after) = rest.trim_start().strip_prefix('/') {
        let after = after.trim_start();
        let dlen = decimal_len(after);
        if dlen > 0 {
            value = q_div(&value, &parse_decimal(&after[..dlen])?)?;
            rest = &after[dlen..];
        }
    }
    if negative {
        value = q_neg(&value)?;
    }
    if open {
        rest = rest.trim_start().strip_prefix(')')?;
    }
    Some((value, rest))
}

/// The result after `=`: skips "approx." etc. Returns (value, marked approximate).
fn read_result(rhs: &str) -> Result<(Q, bool), String> {
    let mut s = rhs.trim_start_matches(|c: char| c == '=' || c == '>' || c.is_whitespace());
    let mut approx = false;
    loop {
        let lower = s.to_ascii_lowercase();
        let word = ["approximately", "approx.", "approx", "about", "around", "roughly", "~", "\u{2248}"]
            .into_iter()
            .find(|w| lower.starts_with(w));
        match word {
            Some(w) => {
                approx = true;
                s = s[w.len()..].trim_start();
            }
            None => break,
        }
    }
    match read_number_prefix(s) {
        Some((q, _)) => Ok((q, approx)),
        None if s.trim().is_empty() => Err("no result after `=`".to_string()),
        None => {
            let len = decimal_len(s.trim_start_matches(['-', '+', '(', '\u{2212}']));
            if len > 0 {
                Err("the result after `=` is too large".to_string())
            } else {
                Err("the result after `=` is not a number".to_string())
            }
        }
    }
}

/// True if the text contains something like "7 / 8" (a number, an operator, a number).
fn has_operation(text: &str) -> bool {
    let Ok(toks) = tokenize(text, false, true) else {
        return false;
    };
    toks.windows(3).any(|w| {
        matches!(w[0], Tok::Num { .. } | Tok::Close)
            && matches!(w[1], Tok::Op(_))
            && matches!(w[2], Tok::Num { .. } | Tok::Open)
    })
}

/// The single operation "a op b" at the end of the text before `=`.
fn operation_from_lhs(lhs: &str) -> Result<(Q, Op, Q), String> {
    let toks = tokenize(lhs, true, true).map_err(|e| format!("cannot read the operation: {e}"))?;
    let start = toks.iter().rposition(|t| matches!(t, Tok::Gap)).map_or(0, |p| p + 1);
    let toks = &toks[start..];
    if toks.is_empty() {
        return Err("no operation found".to_string());
    }
    // "6/9 = 2/3": an unspaced fraction on its own is the division.
    if let [Tok::Num { frac: Some((n, d)), .. }] = toks {
        return Ok((*n, Op::Div, *d));
    }
    // The longest suffix that is a well-formed expression (skips stray "1)" numbering etc.).
    let mut last_err = String::new();
    for k in 0..toks.len() {
        match Parser::parse_all(&toks[k..]) {
            Ok(Expr::Bin(op, l, r)) => {
                return match (leaf_value(&l), leaf_value(&r)) {
                    (Some(a), Some(b)) => Ok((a, op, b)),
                    _ => Err(format!("more than one operation in \"{}\" (a step does exactly one)", lhs.trim())),
                };
            }
            Ok(_) => return Err("no operation found".to_string()),
            Err(e) => {
                if last_err.is_empty() {
                    last_err = e;
                }
            }
        }
    }
    Err(format!("cannot read the operation \"{}\": {last_err}", lhs.trim()))
}

/// Parse one proposal line like `4 + 5 = 9 (left: 6 9 10)`.
///
/// Tolerates bullets/numbering, `**bold**`, unicode `× ÷ −`, 'x' as times, `≈`, "approx.",
/// parenthesized negatives, unspaced fractions ("2/3"), prose before the operation and after the
/// `left:` list. A missing `left:` list is not a parse error (`left` is `None`; `check_step`
/// rejects it). Err(reason) says in plain words what is wrong, e.g. "no operation found",
/// "the operation has no `= result`", "more than one operation in ...", "cannot read the `left:` list ...".
pub fn parse_step_line(line: &str) -> Result<StepLine, String> {
    if line.len() > MAX_INPUT_LEN {
        return Err("the line is too long".to_string());
    }
    let text = strip_decorations(line);
    if text.is_empty() {
        return Err("empty line".to_string());
    }
    let lower = text.to_ascii_lowercase();
    let Some((rel, rel_char)) = text.char_indices().find(|&(_, c)| c == '=' || c == '\u{2248}') else {
        return Err(if has_operation(&text) {
            "the operation has no `= result`".to_string()
        } else {
            "no operation found".to_string()
        });
    };
    let (a, op, b) = operation_from_lhs(&text[..rel])?;
    let rhs = &text[rel + rel_char.len_utf8()..];
    let (result, rhs_approx) = read_result(rhs)?;
    let mut approx = rhs_approx || rel_char == '\u{2248}' || APPROX_MARKERS.iter().any(|m| lower.contains(m));
    let left = match find_left(rhs) {
        None => None,
        Some(list) => {
            let (values, list_approx) = parse_left_list(list)?;
            approx |= list_approx;
            Some(values)
        }
    };
    Ok(StepLine { a, op, b, result, approx, left })
}

fn describe_op(a: &Q, op: Op, b: &Q) -> String {
    format!("{} {} {}", format_operand(a), op.symbol(), format_operand(b))
}

/// Remove one occurrence of `x` from `rest` (what is still unused of `numbers`).
fn take_operand(rest: &mut Vec<Q>, numbers: &[Q], x: &Q) -> Result<(), String> {
    if let Some(i) = rest.iter().position(|q| q_eq(q, x)) {
        rest.remove(i);
        return Ok(());
    }
    let have = numbers.iter().filter(|q| q_eq(q, x)).count();
    if have == 0 {
        Err(format!("{} is not among the numbers {}", format_number(x), format_numbers(numbers)))
    } else {
        let times = if have == 1 { "once".to_string() } else { format!("{have} times") };
        Err(format!(
            "{} is used twice, but it appears only {times} in the numbers {}",
            format_number(x),
            format_numbers(numbers)
        ))
    }
}

/// Check a step line against the current numbers (a multiset).
///
/// Ok(new numbers left, in the order the line's `left:` list wrote them) or Err(reason), e.g.
/// "10 / 1.5 is 20/3, not 6.67", "3 is not among the numbers 4 5 6 10",
/// "left list 4 4 6 should be 4 5 6 ...", "no `left:` list".
/// Rules: both operands must be among the current numbers (each used once); the written result
/// must be exactly right (an approximate result is an error; an exactly right result marked
/// "approx." is accepted); the `left:` list must be present and equal, as a multiset, the unused
/// numbers plus the result.
pub fn check_step(numbers: &[Q], line: &str) -> Result<Vec<Q>, String> {
    let step = parse_step_line(line)?;
    let mut rest = numbers.to_vec();
    take_operand(&mut rest, numbers, &step.a)?;
    take_operand(&mut rest, numbers, &step.b)?;
    let exact = apply_or_reason(step.op, step.a, step.b)?;
    if !q_eq(&exact, &step.result) {
        return Err(format!(
            "{} is {}, not {}",
            describe_op(&step.a, step.op, &step.b),
            format_number(&exact),
            format_number(&step.result)
        ));
    }
    let Some(left) = step.left else {
        return Err("no `left:` list".to_string());
    };
    rest.push(exact);
    if !same_multiset(&left, &rest) {
        return Err(format!("left list {} should be {}", format_numbers(&left), format_numbers(&canonical(&rest))));
    }
    Ok(left)
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

/// Byte offset just after an "answer:" label (case-insensitive, optional space before ':').
fn after_answer_label(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    let mut found = None;
    for (pos, _) in lower.match_indices("answer") {
        let after = &lower[pos + "answer".len()..];
        let spaces = after.len() - after.trim_start().len();
        if after.trim_start().starts_with(':') {
            found = Some(pos + "answer".len() + spaces + 1);
        }
    }
    found
}

/// The line of a (possibly multi-line) reply that holds the answer expression.
fn answer_text(answer: &str) -> String {
    let lines: Vec<String> = answer.lines().map(strip_decorations).filter(|l| !l.is_empty()).collect();
    let labelled = lines.iter().rposition(|l| after_answer_label(l).is_some());
    match labelled {
        Some(i) => {
            let line = &lines[i];
            let body = after_answer_label(line).map_or("", |p| &line[p..]).trim();
            if body.is_empty() {
                lines.get(i + 1).cloned().unwrap_or_default()
            } else {
                body.to_string()
            }
        }
        None => lines.last().cloned().unwrap_or_default(),
    }
}

/// The exact checker. `answer` is "EXPR", "EXPR = 24" or a line "Answer: EXPR = 24" (the label is
/// case-insensitive; in a multi-line reply the last labelled line is used; text after the first
/// '=' is ignored, so prose is tolerated only there). Ok(()) iff the expression uses exactly the
/// input numbers (as a multiset) and equals 24. Err(reason) otherwise, e.g.
/// "uses 4 4 10 but the puzzle is 4 5 6 10", "equals 22, not 24", "cannot parse ...".
pub fn check_answer(input: &[Q], answer: &str) -> Result<(), String> {
    if answer.len() > 1 << 20 {
        return Err("cannot parse the answer: it is too long".to_string());
    }
    let text =
        answer_text(answer).replace("\\times", "*").replace("\\cdot", "*").replace("\\div", "/").replace('$', "");
    let expr = text.split('=').next().unwrap_or("").trim();
    let expr = expr.trim_end_matches('.').trim();
    if expr.is_empty() {
        return Err("cannot parse the answer: no expression found".to_string());
    }
    let (value, leaves) = eval_expr(expr).map_err(|e| format!("cannot parse \"{expr}\": {e}"))?;
    if !same_multiset(&leaves, input) && !same_multiset(&abs_all(&leaves), &abs_all(input)) {
        return Err(format!(
            "uses {} but the puzzle is {}",
            format_numbers(&canonical(&leaves)),
            format_numbers(input)
        ));
    }
    if !q_eq(&value, &target()) {
        return Err(format!("equals {}, not {TARGET}", format_number(&value)));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Solver
// ---------------------------------------------------------------------------------------------

thread_local! {
    static MEMO: RefCell<HashMap<Vec<Q>, bool>> = RefCell::new(HashMap::new());
}

/// Every value obtainable from one operation on `a` and `b` (both orders), without overflow.
fn combinations(a: &Q, b: &Q) -> impl Iterator<Item = Q> {
    [q_add(a, b), q_sub(a, b), q_sub(b, a), q_mul(a, b), q_div(a, b), q_div(b, a)].into_iter().flatten()
}

fn insert_sorted(v: &mut Vec<Q>, q: Q) {
    let pos = v.partition_point(|x| q_cmp(x, &q) == Ordering::Less);
    v.insert(pos, q);
}

fn solvable_sorted(sorted: &[Q], memo: &mut HashMap<Vec<Q>, bool>) -> bool {
    if sorted.len() == 1 {
        return q_eq(&sorted[0], &target());
    }
    if let Some(&known) = memo.get(sorted) {
        return known;
    }
    let n = sorted.len();
    let mut found = false;
    'outer: for i in 0..n {
        if i > 0 && q_eq(&sorted[i], &sorted[i - 1]) {
            continue;
        }
        for j in i + 1..n {
            if j > i + 1 && q_eq(&sorted[j], &sorted[j - 1]) {
                continue;
            }
            let rest: Vec<Q> = sorted.iter().enumerate().filter(|&(k, _)| k != i && k != j).map(|(_, q)| *q).collect();
            for r in combinations(&sorted[i], &sorted[j]) {
                let mut next = rest.clone();
                insert_sorted(&mut next, r);
                if solvable_sorted(&next, memo) {
                    found = true;
                    break 'outer;
                }
            }
        }
    }
    memo.insert(sorted.to_vec(), found);
    found
}

/// Is 24 reachable from these numbers (each used once, + - * /, exact)? Memoized per thread on the
/// sorted multiset. Empty input or more than `MAX_SOLVE_NUMBERS` numbers: false.
pub fn solvable(numbers: &[Q]) -> bool {
    if numbers.is_empty() || numbers.len() > MAX_SOLVE_NUMBERS {
        return false;
    }
    // Normalize (callers may hand in unreduced ratios); values that do not fit are unsolvable.
    let Some(mut key) = numbers
        .iter()
        .map(|x| {
            let (n, d) = reduced_parts(x);
            make_q(n, d)
        })
        .collect::<Option<Vec<Q>>>()
    else {
        return false;
    };
    sort_q(&mut key);
    let with_memo = MEMO.try_with(|m| match m.try_borrow_mut() {
        Ok(mut memo) => {
            if memo.len() > MEMO_LIMIT {
                memo.clear();
            }
            Some(solvable_sorted(&key, &mut memo))
        }
        Err(_) => None,
    });
    match with_memo {
        Ok(Some(b)) => b,
        _ => solvable_sorted(&key, &mut HashMap::new()),
    }
}

/// A number together with the expression it stands for.
#[derive(Debug, Clone)]
struct Node {
    value: Q,
    expr: String,
    leaf: bool,
}

impl Node {
    fn leaf(q: &Q) -> Node {
        Node { value: *q, expr: format_operand(q), leaf: true }
    }

    fn wrapped(&self) -> String {
        if self.leaf {
            self.expr.clone()
        } else {
            format!("({})", self.expr)
        }
    }

    fn combine(a: &Node, op: Op, b: &Node, value: Q) -> Node {
        Node { value, expr: format!("{} {} {}", a.wrapped(), op.symbol(), b.wrapped()), leaf: false }
    }
}

fn without(nodes: &[Node], i: usize, j: usize) -> Vec<Node> {
    nodes.iter().enumerate().filter(|&(k, _)| k != i && k != j).map(|(_, n)| n.clone()).collect()
}

fn solve_nodes(nodes: &[Node]) -> Option<String> {
    if let [only] = nodes {
        return q_eq(&only.value, &target()).then(|| only.expr.clone());
    }
    for i in 0..nodes.len() {
        for j in i + 1..nodes.len() {
            let (x, y) = (&nodes[i], &nodes[j]);
            let (big, small) = if q_cmp(&x.value, &y.value) == Ordering::Less { (y, x) } else { (x, y) };
            let candidates = [
                (x, Op::Add, y),
                (x, Op::Mul, y),
                (big, Op::Sub, small),
                (big, Op::Div, small),
                (small, Op::Div, big),
                (small, Op::Sub, big),
            ];
            for (l, op, r) in candidates {
                let Some(v) = op.apply(l.value, r.value) else {
                    continue;
                };
                let mut next = without(nodes, i, j);
                next.push(Node::combine(l, op, r, v));
                let values: Vec<Q> = next.iter().map(|n| n.value).collect();
                if solvable(&values) {
                    if let Some(s) = solve_nodes(&next) {
                        return Some(s);
                    }
                }
            }
        }
    }
    None
}

/// One expression reaching 24, e.g. "(10 - 4) * (13 - 9)", or None. Every compound
/// sub-expression is parenthesized; the result passes `check_answer` for integer and decimal
/// inputs.
pub fn solve(numbers: &[Q]) -> Option<String> {
    if !solvable(numbers) {
        return None;
    }
    let nodes: Vec<Node> = numbers.iter().map(Node::leaf).collect();
    solve_nodes(&nodes)
}

// ---------------------------------------------------------------------------------------------
// Moves and answers from steps
// ---------------------------------------------------------------------------------------------

/// One possible step from a set of numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    /// Canonical line, e.g. "4 + 5 = 9 (left: 6 9 10)".
    pub line: String,
    /// Left operand.
    pub a: Q,
    /// The operation.
    pub op: Op,
    /// Right operand.
    pub b: Q,
    /// `a op b`, exact.
    pub result: Q,
    /// The numbers after the move, sorted ascending.
    pub left: Vec<Q>,
}

/// The canonical step line "a op b = r (left: ...)" (operands: negatives/fractions in parentheses).
pub fn format_step(a: &Q, op: Op, b: &Q, result: &Q, left: &[Q]) -> String {
    format!("{} = {} (left: {})", describe_op(a, op, b), format_number(result), format_numbers(left))
}

/// All distinct single moves from these numbers. For each unordered pair of values (equal values
/// count once): `small + big`, `big - small` (the negative order is skipped), `small * big`,
/// `big / small` and `small / big` (once if equal; division by zero skipped; overflowing
/// operations skipped). The `left` list is sorted ascending.
pub fn moves(numbers: &[Q]) -> Vec<Move> {
    let mut out = Vec::new();
    let mut seen: Vec<(Q, Q)> = Vec::new();
    for i in 0..numbers.len() {
        for j in i + 1..numbers.len() {
            let (x, y) = (numbers[i], numbers[j]);
            let (small, big) = if q_cmp(&x, &y) == Ordering::Greater { (y, x) } else { (x, y) };
            if seen.iter().any(|(s, b)| q_eq(s, &small) && q_eq(b, &big)) {
                continue;
            }
            seen.push((small, big));
            let rest: Vec<Q> = numbers.iter().enumerate().filter(|&(k, _)| k != i && k != j).map(|(_, q)| *q).collect();
            let mut candidates =
                vec![(small, Op::Add, big), (big, Op::Sub, small), (small, Op::Mul, big), (big, Op::Div, small)];
            if !q_eq(&small, &big) {
                candidates.push((small, Op::Div, big));
            }
            for (a, op, b) in candidates {
                let Some(result) = op.apply(a, b) else {
                    continue;
                };
                let mut left = rest.clone();
                left.push(result);
                sort_q(&mut left);
                out.push(Move { line: format_step(&a, op, &b, &result, &left), a, op, b, result, left });
            }
        }
    }
    out
}

/// Build the final expression from a puzzle's input and the step lines taken, e.g. input
/// 4 5 6 10 with ["4 * 5 = 20 (left: 6 10 20)", "10 - 6 = 4 (left: 4 20)", "4 + 20 = 24 (left: 24)"]
/// -> "(4 * 5) + (10 - 6)". Every compound sub-expression is parenthesized; for `+` and `*` the
/// operand that was made (or given) first is written first. Each step must parse, use available numbers and be exactly right; a
/// `left:` list, if written, must match. None if the steps don't chain or more than one number
/// remains. (The value is not required to be 24; use `check_answer` on the result.)
pub fn answer_from_steps(input: &[Q], steps: &[&str]) -> Option<String> {
    let mut nodes: Vec<Node> = input.iter().map(Node::leaf).collect();
    // When each node was made: inputs in input order, then one per step.
    let mut born: Vec<usize> = (0..nodes.len()).collect();
    for (birth, line) in (nodes.len()..).zip(steps.iter()) {
        let step = parse_step_line(line).ok()?;
        let ia = nodes.iter().position(|n| q_eq(&n.value, &step.a))?;
        let ib = nodes.iter().enumerate().position(|(k, n)| k != ia && q_eq(&n.value, &step.b))?;
        let exact = step.op.apply(step.a, step.b)?;
        if !q_eq(&exact, &step.result) {
            return None;
        }
        // For + and * the operand made earlier comes first, so the answer reads in step order
        // ("(4 * 5) + (10 - 6)" even if the line says "4 + 20").
        let (first, second) = match step.op {
            Op::Add | Op::Mul if born[ib] < born[ia] => (ib, ia),
            _ => (ia, ib),
        };
        let combined = Node::combine(&nodes[first], step.op, &nodes[second], exact);
        nodes = without(&nodes, ia, ib);
        nodes.push(combined);
        born = born.iter().enumerate().filter(|&(k, _)| k != ia && k != ib).map(|(_, b)| *b).collect();
        born.push(birth);
        if let Some(left) = &step.left {
            let values: Vec<Q> = nodes.iter().map(|n| n.value).collect();
            if !same_multiset(left, &values) {
                return None;
            }
        }
    }
    match nodes.as_slice() {
        [only] => Some(only.expr.clone()),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Puzzles
// ---------------------------------------------------------------------------------------------

/// (rank, numbers) in ranked order; index i is 0-based like Python's range (index 900 is rank 901).
pub fn puzzles() -> Result<Vec<(u32, Vec<Q>)>, String> {
    let mut lines = PUZZLES_CSV.lines();
    match lines.next() {
        Some(h) if h.trim() == "rank,numbers" => {}
        other => return Err(format!("puzzles.csv: expected header `rank,numbers`, found {:?}", other.unwrap_or(""))),
    }
    let mut out = Vec::new();
    for (k, line) in lines.enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let lineno = k + 2;
        let (rank, nums) = line.split_once(',').ok_or_else(|| format!("puzzles.csv line {lineno}: no comma"))?;
        let rank: u32 = rank.trim().parse().map_err(|_| format!("puzzles.csv line {lineno}: bad rank {rank:?}"))?;
        let numbers = parse_numbers(nums).ok_or_else(|| format!("puzzles.csv line {lineno}: bad numbers {nums:?}"))?;
        out.push((rank, numbers));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i64) -> Q {
        Q::from_integer(n)
    }

    fn fr(n: i64, d: i64) -> Q {
        Q::new(n, d)
    }

    fn qs(s: &str) -> Vec<Q> {
        parse_numbers(s).expect("test numbers")
    }

    // ---------------- numbers ----------------

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

    // ---------------- ops ----------------

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

    // ---------------- step lines: the recorded messy examples ----------------

    #[test]
    fn messy_fraction_result_parses_and_checks() {
        let s = parse_step_line("6 / 9 = 2/3 (left: 2/3 10)").unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(6), Op::Div, q(9), fr(2, 3)));
        assert!(!s.approx);
        assert_eq!(s.left, Some(vec![fr(2, 3), q(10)]));
        assert_eq!(check_step(&qs("6 9 10"), "6 / 9 = 2/3 (left: 2/3 10)"), Ok(vec![fr(2, 3), q(10)]));
    }

    #[test]
    fn messy_parenthesized_negative_operand() {
        let s = parse_step_line("6 + (-1) = 5 (left: 5 10)").unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(6), Op::Add, q(-1), q(5)));
        assert_eq!(check_step(&qs("-1 6 10"), "6 + (-1) = 5 (left: 5 10)"), Ok(vec![q(5), q(10)]));
    }

    #[test]
    fn messy_approx_in_parentheses() {
        let line = "10 / 1.5 = 6.67 (approx.) (left: 6.67)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(10), Op::Div, fr(3, 2), fr(667, 100)));
        assert!(s.approx);
        assert_eq!(s.left, Some(vec![fr(667, 100)]));
        assert_eq!(check_step(&[q(10), fr(3, 2)], line), Err("10 / 1.5 is 20/3, not 6.67".to_string()));
    }

    #[test]
    fn messy_approx_sign() {
        let line = "10 / 1.5 \u{2248} 6.67 (left: 6.67)";
        let s = parse_step_line(line).unwrap();
        assert!(s.approx);
        assert_eq!(s.result, fr(667, 100));
        assert_eq!(check_step(&[q(10), fr(3, 2)], line), Err("10 / 1.5 is 20/3, not 6.67".to_string()));
    }

    #[test]
    fn messy_decimals_allowed_comment() {
        let line = "4 / 3 = 1.33 (left: 1.33 7) (if decimals are allowed)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(4), Op::Div, q(3), fr(133, 100)));
        assert_eq!(s.left, Some(vec![fr(133, 100), q(7)]));
        // Exactness: 4/3 is not 1.33.
        assert_eq!(check_step(&qs("3 4 7"), line), Err("4 / 3 is 4/3, not 1.33".to_string()));
        // The exact version is fine.
        assert_eq!(check_step(&qs("3 4 7"), "4 / 3 = 4/3 (left: 4/3 7)"), Ok(vec![fr(4, 3), q(7)]));
    }

    #[test]
    fn messy_rounded_left_inside_comment() {
        let line = "12 / 7 = 1.71 (rounded, left: 1.71)";
        let s = parse_step_line(line).unwrap();
        assert!(s.approx);
        assert_eq!(s.result, fr(171, 100));
        assert_eq!(s.left, Some(vec![fr(171, 100)]));
        assert_eq!(check_step(&qs("7 12"), line), Err("12 / 7 is 12/7, not 1.71".to_string()));
    }

    #[test]
    fn messy_not_valid_without_left() {
        let line = "17 / 2 = 8.5 (not a whole number, not valid)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(17), Op::Div, q(2), fr(17, 2)));
        assert_eq!(s.left, None);
        assert_eq!(check_step(&qs("2 17"), line), Err("no `left:` list".to_string()));
    }

    #[test]
    fn messy_no_result() {
        assert_eq!(parse_step_line("7 / 8 (not a whole number)"), Err("the operation has no `= result`".to_string()));
    }

    #[test]
    fn messy_approx_word_in_result_and_left() {
        let line = "19 / 7 = approx. 2.71 (left: approx. 2.71)";
        let s = parse_step_line(line).unwrap();
        assert!(s.approx);
        assert_eq!(s.result, fr(271, 100));
        assert_eq!(s.left, Some(vec![fr(271, 100)]));
        assert_eq!(check_step(&qs("7 19"), line), Err("19 / 7 is 19/7, not 2.71".to_string()));
    }

    #[test]
    fn messy_prose_lines() {
        assert_eq!(
            parse_step_line("Since there is only one number given as input, there are no possible next steps ..."),
            Err("no operation found".to_string())
        );
        assert_eq!(
            parse_step_line("1. Round the number to the nearest whole number: round(2.18) = 2"),
            Err("no operation found".to_string())
        );
        assert_eq!(parse_step_line("Possible next steps:"), Err("no operation found".to_string()));
        assert_eq!(parse_step_line(""), Err("empty line".to_string()));
        assert_eq!(parse_step_line("   "), Err("empty line".to_string()));
    }

    #[test]
    fn messy_negative_result() {
        let line = "4 - 5 = -1 (left: -1 6 10)";
        let s = parse_step_line(line).unwrap();
        assert_eq!((s.a, s.op, s.b, s.result), (q(4), Op::Sub, q(5), q(-1)));
        assert_eq!(check_step(&qs("4 5 6 10"), line), Ok(vec![q(-1), q(6), q(10)]));
    }

    #[test]
    fn messy_plain_step_and_wrong_left() {
        assert_eq!(check_step(&qs("4 5 6 10"), "10 - 6 = 4 (left: 4 4 5)"), Ok(vec![q(4), q(4), q(5)]));
        assert_eq!(
            check_step(&qs("4 5 6 10"), "10 - 6 = 4 (left: 4 4 6)"),
            Err("left list 4 4 6 should be 4 4 5".to_string())
        );
        assert_eq!(
            check_step(&qs("4 5 6 10"), "10 - 6 = 4 (left: 4 5)"),
            Err("left list 4 5 should be 4 4 5".to_string())
        );
    }

    #[test]
    fn left_order_is_kept() {
        assert_eq!(check_step(&qs("4 5 6 10"), "4 + 5 = 9 (left: 10 9 6)"), Ok(vec![q(10), q(9), q(6)]));
    }

    #[test]
    fn unicode_and_markup_variants() {
        let numbers = qs("4 5 6 10");
        for line in [
            "4 \u{d7} 5 = 20 (left: 6 10 20)",
            "4 x 5 = 20 (left: 6 10 20)",
            "4x5=20 (left: 6 10 20)",
            "4 X 5 = 20 (left: 6 10 20)",
            "4 * 5 = 20 (left: 6 10 20)",
            "- 4 * 5 = 20 (left: 6 10 20)",
            "* 4 * 5 = 20 (left: 6 10 20)",
            "1. 4 * 5 = 20 (left: 6 10 20)",
            "2) 4 * 5 = 20 (left: 6 10 20)",
            "**4 * 5 = 20** (left: 6 10 20)",
            "**4 * 5 = 20 (left: 6 10 20)**",
            "- **4 * 5 = 20 (left: 6 10 20)**   ",
            "`4 * 5 = 20 (left: 6 10 20)`",
            "Step 1: 4 * 5 = 20 (left: 6 10 20)",
            "Multiply 4 and 5: 4 * 5 = 20 (left: 6 10 20)",
            "4 * 5 = 20 (Left: 6, 10, 20)",
            "4 * 5 = 20 (left: 6 10 and 20)",
            "4 * 5 = 20 (left: [6, 10, 20])",
            "4 * 5 = 20 (remaining: 6 10 20)",
            "4 * 5 = 20, left: 6 10 20",
            "4 * 5 = 20 (left: 6 10 20) -- good start",
            "(4 * 5) = 20 (left: 6 10 20)",
        ] {
            assert_eq!(check_step(&numbers, line).map(|v| canonical(&v)), Ok(vec![q(6), q(10), q(20)]), "{line}");
        }
        for line in ["10 \u{2212} 6 = 4 (left: 4 4 5)", "10 \u{2013} 6 = 4 (left: 4 4 5)", "10-6=4 (left: 4 4 5)"] {
            assert_eq!(check_step(&numbers, line), Ok(vec![q(4), q(4), q(5)]), "{line}");
        }
        assert_eq!(check_step(&numbers, "10 \u{f7} 5 = 2 (left: 2 4 6)"), Ok(vec![q(2), q(4), q(6)]));
        assert_eq!(check_step(&qs("-1 6"), "6 \u{2212} (\u{2212}1) = 7 (left: 7)"), Ok(vec![q(7)]));
    }

    #[test]
    fn fraction_operands() {
        let numbers = vec![fr(10, 3), q(2), q(9)];
        assert_eq!(check_step(&numbers, "10/3 - 2 = 4/3 (left: 4/3 9)"), Ok(vec![fr(4, 3), q(9)]));
        assert_eq!(check_step(&numbers, "9 * 10/3 = 30 (left: 2 30)"), Ok(vec![q(2), q(30)]));
        assert_eq!(check_step(&numbers, "10/3 / 2 = 5/3 (left: 5/3 9)"), Ok(vec![fr(5, 3), q(9)]));
        // Spaced fraction as the result.
        let s = parse_step_line("6 / 9 = 2 / 3 (left: 2/3 10)").unwrap();
        assert_eq!(s.result, fr(2, 3));
        // Unspaced division on the left side.
        let s = parse_step_line("6/9 = 2/3 (left: 2/3 10)").unwrap();
        assert_eq!((s.a, s.op, s.b), (q(6), Op::Div, q(9)));
    }

    #[test]
    fn step_parse_errors() {
        assert_eq!(
            parse_step_line("2 * 3 + 4 = 10 (left: 10)"),
            Err("more than one operation in \"2 * 3 + 4\" (a step does exactly one)".to_string())
        );
        assert!(parse_step_line("Answer: (4 * 5) + (10 - 6) = 24").unwrap_err().starts_with("more than one operation"));
        assert_eq!(parse_step_line("4 + 5 = (left: 9)"), Err("the result after `=` is not a number".to_string()));
        assert_eq!(parse_step_line("4 + 5 ="), Err("no result after `=`".to_string()));
        assert_eq!(parse_step_line("= 9 (left: 9)"), Err("no operation found".to_string()));
        assert_eq!(parse_step_line("4 = 4 (left: 4)"), Err("no operation found".to_string()));
        assert_eq!(
            parse_step_line("4 + 5 = 9 (left: six nine)"),
            Err("cannot read the `left:` list \"six nine\"".to_string())
        );
        assert_eq!(parse_step_line("4 + 5 = 9 (left: )"), Err("the `left:` list is empty".to_string()));
        assert!(parse_step_line("4 + 5 = 99999999999999999999 (left: 9)").is_err());
        assert!(parse_step_line("99999999999999999999 + 5 = 9 (left: 9)").is_err());
        assert!(parse_step_line("4 / 0 = 9 (left: 9)").is_ok());
        assert!(parse_step_line("4/0 = 9 (left: 9)").is_err());
        assert!(parse_step_line(&"1".repeat(10_000)).is_err());
    }

    #[test]
    fn check_step_operand_rules() {
        let numbers = qs("4 5 6 10");
        assert_eq!(
            check_step(&numbers, "3 + 5 = 8 (left: 4 6 8 10)"),
            Err("3 is not among the numbers 4 5 6 10".to_string())
        );
        // A number used twice.
        assert_eq!(
            check_step(&numbers, "5 + 5 = 10 (left: 4 6 10 10)"),
            Err("5 is used twice, but it appears only once in the numbers 4 5 6 10".to_string())
        );
        // ... which is fine when it really is there twice.
        assert_eq!(check_step(&qs("4 4 5"), "4 * 4 = 16 (left: 5 16)"), Ok(vec![q(5), q(16)]));
        assert_eq!(
            check_step(&numbers, "10 / 0 = 0 (left: 0)"),
            Err("0 is not among the numbers 4 5 6 10".to_string())
        );
        assert_eq!(check_step(&qs("0 10"), "10 / 0 = 0 (left: 0)"), Err("10 / 0 divides by zero".to_string()));
        assert_eq!(check_step(&numbers, "4 + 5 = 10 (left: 6 10 10)"), Err("4 + 5 is 9, not 10".to_string()));
        // An "approx." marker on an exactly right result is harmless.
        assert_eq!(check_step(&numbers, "10 / 4 \u{2248} 2.5 (left: 2.5 5 6)"), Ok(vec![fr(5, 2), q(5), q(6)]));
        let big = vec![q(i64::MAX), q(2)];
        assert!(check_step(&big, "9223372036854775807 * 2 = 1 (left: 1)").unwrap_err().contains("overflows"));
        assert_eq!(check_step(&[q(24)], "24 + 0 = 24 (left: 24)"), Err("0 is not among the numbers 24".to_string()));
    }

    // ---------------- expressions and answers ----------------

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

    #[test]
    fn check_answer_accepts() {
        let p = qs("4 5 6 10");
        for a in [
            "(4 * 5) + (10 - 6)",
            "(4 * 5) + (10 - 6) = 24",
            "Answer: (4 * 5) + (10 - 6) = 24",
            "answer: (4*5)+(10-6)=24",
            "ANSWER : (4 * 5) + (10 - 6) = 24",
            "Answer: (4 * 5) + (10 - 6) = 24, which uses every number once.",
            "**Answer: (4 \u{d7} 5) + (10 \u{2212} 6) = 24**",
            "Answer: (4 * 5) + (10 - 6).",
            "4 * 5 + 10 - 6",
            "10 - 6 + 5 * 4 = 24",
            "Steps:\n4 * 5 = 20 (left: 6 10 20)\nAnswer: (4 * 5) + (10 - 6) = 24",
            "Answer:\n(4 * 5) + (10 - 6) = 24",
            "  Answer: $(4 \\times 5) + (10 - 6) = 24$  ",
        ] {
            assert_eq!(check_answer(&p, a), Ok(()), "{a}");
        }
        assert_eq!(check_answer(&qs("4 9 10 13"), "(10-4)*(13-9) = 24"), Ok(()));
        assert_eq!(
            check_answer(&qs("1 1 4 6"), "(1 + 1 + 4) * 4"),
            Err("uses 1 1 4 4 but the puzzle is 1 1 4 6".to_string())
        );
        assert_eq!(check_answer(&qs("1 1 4 6"), "(1 + 1) * 4 * 6 / 2").map_err(|e| e.starts_with("uses")), Err(true));
        assert_eq!(
            check_answer(&qs("1 1 4 6"), "(1 + 1 + 4) * 6 - 6 * 2").map_err(|e| e.starts_with("uses")),
            Err(true)
        );
        assert_eq!(
            check_answer(&qs("1 1 4 6"), "(6 - 1 - 1) * 4 + 8 - 8").map_err(|e| e.starts_with("uses")),
            Err(true)
        );
        assert_eq!(check_answer(&qs("1 1 4 6"), "6 * 4 * 1 * 1"), Ok(()));
        assert_eq!(check_answer(&qs("3 3 8 8"), "8 / (3 - 8 / 3)"), Ok(()));
        // A negative literal still counts as the number it negates.
        assert_eq!(check_answer(&p, "-6 + 10 + 4 * 5"), Ok(()));
    }

    #[test]
    fn check_answer_rejects() {
        let p = qs("4 5 6 10");
        assert_eq!(check_answer(&p, "(4 * 4) + (10 - 2)"), Err("uses 2 4 4 10 but the puzzle is 4 5 6 10".to_string()));
        assert_eq!(
            check_answer(&p, "Answer: 4 * 4 + 10 = 26"),
            Err("uses 4 4 10 but the puzzle is 4 5 6 10".to_string())
        );
        assert_eq!(
            check_answer(&p, "(4 * 5) + (10 - 6) + 1"),
            Err("uses 1 4 5 6 10 but the puzzle is 4 5 6 10".to_string())
        );
        assert_eq!(check_answer(&p, "Answer: 4 * 5 + 6 - 10 = 24"), Err("equals 16, not 24".to_string()));
        assert_eq!(check_answer(&p, "(4 + 6) * 5 / 10 + 20 - 20").map_err(|e| e.starts_with("uses")), Err(true));
        assert_eq!(
            check_answer(&qs("2 4 6 10"), "2 * 4 + 6 + 10 - 2"),
            Err("uses 2 2 4 6 10 but the puzzle is 2 4 6 10".to_string())
        );
        assert_eq!(check_answer(&qs("2 4 6 10"), "2 + 4 + 6 + 10"), Err("equals 22, not 24".to_string()));
        assert_eq!(check_answer(&qs("3 4 7 8"), "4 / 3 * 7 + 8"), Err("equals 52/3, not 24".to_string()));
        assert!(check_answer(&p, "Answer: (4 * 5) + (10 - 6) which equals 24")
            .unwrap_err()
            .starts_with("cannot parse"));
        assert!(check_answer(&p, "").unwrap_err().starts_with("cannot parse"));
        assert!(check_answer(&p, "Answer:").unwrap_err().starts_with("cannot parse"));
        assert!(check_answer(&p, "= 24").unwrap_err().starts_with("cannot parse"));
        assert!(check_answer(&p, "Answer: 24").unwrap_err().starts_with("uses 24"));
        assert!(check_answer(&p, "(4 * 5) + (10 - 6) / 0").unwrap_err().contains("divides by zero"));
    }

    // ---------------- solver ----------------

    #[test]
    fn solvable_known_cases() {
        assert!(solvable(&qs("1 1 4 6")));
        assert!(!solvable(&qs("1 1 1 1")));
        assert!(solvable(&qs("4 9 10 13")));
        assert!(solvable(&qs("3 3 8 8")));
        assert!(solvable(&qs("1 5 5 5")));
        assert!(!solvable(&qs("1 1 2 2")));
        assert!(solvable(&qs("24")));
        assert!(!solvable(&qs("23")));
        assert!(solvable(&qs("4 6")));
        assert!(solvable(&qs("20 4")));
        assert!(!solvable(&[]));
        assert!(!solvable(&qs("1 2 3 4 5 6 7")));
        assert!(!solvable(&[q(i64::MAX), q(i64::MAX), q(i64::MAX), q(i64::MAX)]));
        // Negative and fractional numbers work too.
        assert!(solvable(&[q(-4), q(-6)]));
        assert!(solvable(&[fr(2, 3), q(36)]));
    }

    #[test]
    fn solve_known_cases() {
        let s = solve(&qs("4 9 10 13")).unwrap();
        assert_eq!(check_answer(&qs("4 9 10 13"), &s), Ok(()));
        let s = solve(&qs("3 3 8 8")).unwrap();
        assert_eq!(check_answer(&qs("3 3 8 8"), &s), Ok(()), "{s}");
        let s = solve(&qs("1 5 5 5")).unwrap();
        assert_eq!(check_answer(&qs("1 5 5 5"), &s), Ok(()), "{s}");
        assert_eq!(solve(&qs("1 1 1 1")), None);
        assert_eq!(solve(&qs("24")), Some("24".to_string()));
        assert_eq!(solve(&[q(-4), q(-6)]).as_deref(), Some("(-4) * (-6)"));
        let s = solve(&[fr(3, 2), q(16)]).unwrap();
        assert_eq!(check_answer(&[fr(3, 2), q(16)], &s), Ok(()));
    }

    #[test]
    fn all_puzzles_solvable_and_solutions_check() {
        let all = puzzles().unwrap();
        let mut solved = 0;
        for (rank, nums) in &all {
            if solvable(nums) {
                let s = solve(nums).unwrap_or_else(|| panic!("rank {rank}: no solution"));
                assert_eq!(check_answer(nums, &s), Ok(()), "rank {rank}: {s}");
                assert_eq!(check_answer(nums, &format!("Answer: {s} = 24")), Ok(()));
                solved += 1;
            }
        }
        assert_eq!(solved, 1362);
    }

    // ---------------- moves and answers from steps ----------------

    #[test]
    fn moves_for_4_5_6_10() {
        let ms = moves(&qs("4 5 6 10"));
        // 6 pairs x (+, -, *, /, /) = 30.
        assert_eq!(ms.len(), 30);
        let lines: Vec<&str> = ms.iter().map(|m| m.line.as_str()).collect();
        assert!(lines.contains(&"4 + 5 = 9 (left: 6 9 10)"));
        assert!(lines.contains(&"5 - 4 = 1 (left: 1 6 10)"));
        assert!(lines.contains(&"4 * 5 = 20 (left: 6 10 20)"));
        assert!(lines.contains(&"5 / 4 = 1.25 (left: 1.25 6 10)"));
        assert!(lines.contains(&"4 / 5 = 0.8 (left: 0.8 6 10)"));
        assert!(lines.contains(&"10 / 6 = 5/3 (left: 5/3 4 5)"));
        assert!(!lines.iter().any(|l| l.contains("= -")));
        for m in &ms {
            assert_eq!(check_step(&qs("4 5 6 10"), &m.line), Ok(m.left.clone()), "{}", m.line);
            assert_eq!(m.left, canonical(&m.left));
            assert_eq!(m.op.apply(m.a, m.b), Some(m.result));
        }
    }

    #[test]
    fn moves_edge_cases() {
        // Equal values: one pair, one division, subtraction giving 0.
        let ms = moves(&qs("4 4"));
        let lines: Vec<&str> = ms.iter().map(|m| m.line.as_str()).collect();
        assert_eq!(
            lines,
            vec!["4 + 4 = 8 (left: 8)", "4 - 4 = 0 (left: 0)", "4 * 4 = 16 (left: 16)", "4 / 4 = 1 (left: 1)"]
        );
        // Duplicate pairs are listed once: 4 4 5 has pairs {4,4} and {4,5}.
        assert_eq!(moves(&qs("4 4 5")).len(), 4 + 5);
        // Division by zero is skipped.
        let ms = moves(&qs("0 3"));
        assert!(ms.iter().all(|m| !m.line.starts_with("3 / 0")));
        assert_eq!(ms.len(), 4);
        // Fractions and negatives are written so that they parse back.
        for nums in [vec![fr(10, 3), q(2), q(-1)], vec![fr(-2, 3), fr(1, 7)]] {
            for m in moves(&nums) {
                assert_eq!(check_step(&nums, &m.line), Ok(m.left.clone()), "{}", m.line);
            }
        }
        assert!(moves(&qs("5")).is_empty());
        assert!(moves(&[]).is_empty());
        assert!(moves(&[q(i64::MAX), q(i64::MAX)]).len() < 5);
        assert_eq!(
            moves(&qs("10 3")).iter().find(|m| m.op == Op::Div && m.a == q(10)).map(|m| m.line.clone()),
            Some("10 / 3 = 10/3 (left: 10/3)".to_string())
        );
    }

    #[test]
    fn answer_from_steps_example() {
        let input = qs("4 5 6 10");
        let steps = ["4 * 5 = 20 (left: 6 10 20)", "10 - 6 = 4 (left: 4 20)", "4 + 20 = 24 (left: 24)"];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(ans, "(4 * 5) + (10 - 6)");
        assert_eq!(check_answer(&input, &ans), Ok(()));
        // Computed numbers that equal an input number: either choice gives a valid answer.
        let steps = ["10 - 6 = 4 (left: 4 4 5)", "4 * 5 = 20 (left: 4 20)", "4 + 20 = 24 (left: 24)"];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(check_answer(&input, &ans), Ok(()), "{ans}");
        // Messy but valid lines.
        let steps = [
            "1. **4 \u{d7} 5 = 20** (left: 6, 10, 20)",
            "- 10 \u{2212} 6 = 4 (left: 4 20)",
            "Step 3: 20 + 4 = 24 (left: 24)",
        ];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(ans, "(4 * 5) + (10 - 6)");
        // Steps that don't chain.
        assert_eq!(answer_from_steps(&input, &["4 * 5 = 20 (left: 6 10 20)"]), None);
        assert_eq!(answer_from_steps(&input, &["4 * 4 = 16 (left: 5 6 10 16)"]), None);
        assert_eq!(answer_from_steps(&input, &["4 * 5 = 21 (left: 6 10 21)"]), None);
        assert_eq!(answer_from_steps(&input, &["4 * 5 = 20 (left: 6 10 21)"]), None);
        assert_eq!(answer_from_steps(&input, &["nonsense"]), None);
        assert_eq!(answer_from_steps(&input, &[]), None);
        assert_eq!(answer_from_steps(&qs("24"), &[]), Some("24".to_string()));
        // Fraction intermediate: 8 / (3 - 8/3).
        let input = qs("3 3 8 8");
        let steps = ["8 / 3 = 8/3 (left: 3 8 8/3)", "3 - 8/3 = 1/3 (left: 1/3 8)", "8 / 1/3 = 24 (left: 24)"];
        let ans = answer_from_steps(&input, &steps).unwrap();
        assert_eq!(ans, "8 / (3 - (8 / 3))");
        assert_eq!(check_answer(&input, &ans), Ok(()));
    }

    #[test]
    fn answer_from_steps_round_trip_on_test_split() {
        let all = puzzles().unwrap();
        let mut checked = 0;
        for (rank, input) in &all[900..1000] {
            if !solvable(input) {
                continue;
            }
            let mut current = input.clone();
            let mut lines = Vec::new();
            while current.len() > 1 {
                let m = moves(&current)
                    .into_iter()
                    .find(|m| solvable(&m.left))
                    .unwrap_or_else(|| panic!("rank {rank}: stuck at {}", format_numbers(&current)));
                assert_eq!(check_step(&current, &m.line), Ok(m.left.clone()));
                current = m.left.clone();
                lines.push(m.line);
            }
            assert_eq!(current, vec![q(24)]);
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let ans =
                answer_from_steps(input, &refs).unwrap_or_else(|| panic!("rank {rank}: steps {lines:?} did not chain"));
            assert_eq!(check_answer(input, &ans), Ok(()), "rank {rank}: {ans}");
            assert_eq!(check_answer(input, &format!("Answer: {ans} = 24")), Ok(()));
            checked += 1;
        }
        assert_eq!(checked, 100);
    }

    // ---------------- puzzles ----------------

    #[test]
    fn puzzle_asset() {
        let all = puzzles().unwrap();
        assert_eq!(all.len(), 1362);
        assert_eq!(all[0], (1, qs("1 1 4 6")));
        assert_eq!(all[900], (901, qs("4 5 6 10")));
        assert_eq!(all[999], (1000, qs("4 9 10 13")));
        assert_eq!(all[1361], (1362, qs("2 3 5 12")));
        for (i, (rank, nums)) in all.iter().enumerate() {
            assert_eq!(*rank as usize, i + 1);
            assert_eq!(nums.len(), 4);
        }
    }

    // ---------------- robustness ----------------

    /// Small deterministic generator (no external crates).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn fuzz_never_panics() {
        let pieces = [
            "0",
            "1",
            "4",
            "9",
            "10",
            "24",
            "-",
            "+",
            "*",
            "/",
            "x",
            "(",
            ")",
            "=",
            " ",
            ".",
            ",",
            "\u{2212}",
            "\u{d7}",
            "\u{f7}",
            "\u{2248}",
            "left:",
            "(left: ",
            "approx.",
            "Answer:",
            "**",
            "1. ",
            "- ",
            "2/3",
            "9223372036854775807",
            "99999999999999999999",
            "0.",
            "é",
            "[",
            "]",
            "~",
            "...",
            "\u{2026}",
            "remaining:",
            ":",
            "\n",
            "\t",
            "e",
            "round",
        ];
        let mut rng = Lcg(42);
        let numbers = qs("4 5 6 10");
        for _ in 0..20_000 {
            let len = rng.below(16);
            let s: String = (0..len).map(|_| pieces[rng.below(pieces.len())]).collect();
            let _ = parse_number(&s);
            let _ = parse_numbers(&s);
            let _ = parse_step_line(&s);
            let _ = check_step(&numbers, &s);
            let _ = eval_expr(&s);
            let _ = check_answer(&numbers, &s);
            let _ = answer_from_steps(&numbers, &[&s]);
        }
    }

    #[test]
    fn fuzz_step_lines_from_moves_never_panic_on_extremes() {
        let extremes = [q(i64::MAX), q(-i64::MAX), fr(1, i64::MAX), fr(i64::MAX, i64::MAX - 1), q(0), q(1), q(-1)];
        let mut rng = Lcg(7);
        for _ in 0..500 {
            let n = 1 + rng.below(4);
            let nums: Vec<Q> = (0..n).map(|_| extremes[rng.below(extremes.len())]).collect();
            let _ = solvable(&nums);
            let _ = solve(&nums);
            for m in moves(&nums) {
                assert_eq!(check_step(&nums, &m.line), Ok(m.left.clone()), "{}", m.line);
            }
        }
        // Ratios built by callers with the extreme i64::MIN value don't panic either.
        let weird = [q(i64::MIN), Q::new_raw(i64::MIN, i64::MIN), q(3)];
        let _ = moves(&weird);
        let _ = solvable(&weird);
        let _ = format_numbers(&weird);
        let _ = check_step(&weird, "3 + 3 = 6 (left: 6)");
        let _ = check_answer(&weird, "3 * 8");
    }
}
