//! A small LaTeX/ASCII answer parser: a cleaned answer (see `normalize::clean`) to an
//! [`Answer`] — an expression, a relation, a tuple or interval, a set, a union, a
//! matrix or a list of several answers. Bounded: input length, nesting depth and the
//! number of `\pm` are capped, and anything it does not know is an error, never a guess.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

/// The longest answer parsed (longer ones are compared by their normal form only).
pub(crate) const MAX_LEN: usize = 1000;
/// The deepest nesting of groups and operators.
const MAX_DEPTH: usize = 60;
/// At most this many digits in one number literal.
const MAX_DIGITS: usize = 400;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Konst {
    Pi,
    E,
    I,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Sin,
    Cos,
    Tan,
    Sec,
    Csc,
    Cot,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Ln,
    /// `\log` without a base: base 10, as in the competition problems MATH draws on.
    Log10,
    Exp,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    Num(BigRational),
    Var(String),
    Const(Konst),
    Inf,
    Add(Vec<Expr>),
    Mul(Vec<Expr>),
    Neg(Box<Expr>),
    Div(Box<Expr>, Box<Expr>),
    Pow(Box<Expr>, Box<Expr>),
    /// The n-th root (2 for `\sqrt`).
    Root(u32, Box<Expr>),
    Func(Func, Box<Expr>),
    Fact(Box<Expr>),
    Abs(Box<Expr>),
    /// `a \pm b` (two answers).
    Pm(Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RelOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Answer {
    Expr(Expr),
    /// `a < b <= c`: sides and the operators between them.
    Rel(Vec<Expr>, Vec<RelOp>),
    /// `(1,2)`, `[1,2)`: a tuple or an interval, told apart by the comparison.
    Bracketed {
        open: char,
        close: char,
        items: Vec<Answer>,
    },
    Set(Vec<Answer>),
    Union(Vec<Answer>),
    Matrix(Vec<Vec<Answer>>),
    /// Several answers (`1, 2`; `x = 1 or x = 2`) in any order.
    List(Vec<Answer>),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(String),
    Letter(char),
    Cmd(String),
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBrack,
    RBrack,
    SetOpen,
    SetClose,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    Under,
    Comma,
    Amp,
    RowSep,
    Bang,
    Pipe,
    Rel(RelOp),
    /// `or` / `and` between answers.
    Sep,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(n) => n.clone(),
        Tok::Letter(c) => c.to_string(),
        Tok::Cmd(c) => format!("\\{c}"),
        other => format!("{other:?}"),
    }
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '\\' => {
                let Some(&n) = chars.get(i + 1) else { return Err("a lone backslash".into()) };
                if n.is_ascii_alphabetic() {
                    let mut j = i + 1;
                    while j < chars.len() && chars[j].is_ascii_alphabetic() {
                        j += 1;
                    }
                    let name: String = chars[i + 1..j].iter().collect();
                    i = j;
                    match name.as_str() {
                        "le" | "leq" | "leqslant" => toks.push(Tok::Rel(RelOp::Le)),
                        "ge" | "geq" | "geqslant" => toks.push(Tok::Rel(RelOp::Ge)),
                        "lt" => toks.push(Tok::Rel(RelOp::Lt)),
                        "gt" => toks.push(Tok::Rel(RelOp::Gt)),
                        "ne" | "neq" => toks.push(Tok::Rel(RelOp::Ne)),
                        "in" => toks.push(Tok::Rel(RelOp::In)),
                        "cdot" | "times" | "ast" => toks.push(Tok::Star),
                        "div" => toks.push(Tok::Slash),
                        "lbrace" => toks.push(Tok::SetOpen),
                        "rbrace" => toks.push(Tok::SetClose),
                        "vert" | "lvert" | "rvert" | "mid" => toks.push(Tok::Pipe),
                        "left" | "right" | "displaystyle" | "bigl" | "bigr" | "Bigl" | "Bigr" | "big" | "Big" => {}
                        _ => toks.push(Tok::Cmd(name)),
                    }
                } else {
                    i += 2;
                    match n {
                        '{' => toks.push(Tok::SetOpen),
                        '}' => toks.push(Tok::SetClose),
                        '\\' => toks.push(Tok::RowSep),
                        '|' => toks.push(Tok::Pipe),
                        ',' | ';' | ':' | '!' | ' ' => {}
                        other => return Err(format!("unknown command \\{other}")),
                    }
                }
            }
            '0'..='9' | '.' => {
                let mut j = i;
                let mut dot = false;
                while j < chars.len() && (chars[j].is_ascii_digit() || (chars[j] == '.' && !dot)) {
                    if chars[j] == '.' {
                        // "5." at the end, or "2.x": the dot is not part of the number.
                        if !chars.get(j + 1).is_some_and(char::is_ascii_digit) {
                            break;
                        }
                        dot = true;
                    }
                    j += 1;
                }
                if j == i {
                    return Err("a stray '.'".into());
                }
                let lit: String = chars[i..j].iter().collect();
                if lit.len() > MAX_DIGITS {
                    return Err(format!("a number of {} digits (at most {MAX_DIGITS})", lit.len()));
                }
                toks.push(Tok::Num(lit));
                i = j;
                // `1e3`, `2.5E-4`: scientific notation becomes `* 10^{...}`.
                if matches!(chars.get(i), Some('e' | 'E')) {
                    let mut k = i + 1;
                    let neg = matches!(chars.get(k), Some('-'));
                    if matches!(chars.get(k), Some('-' | '+')) {
                        k += 1;
                    }
                    let start = k;
                    while k < chars.len() && chars[k].is_ascii_digit() {
                        k += 1;
                    }
                    if k > start && !chars.get(k).is_some_and(|c| c.is_ascii_alphabetic()) {
                        let exp: String = chars[start..k].iter().collect();
                        toks.extend([Tok::Star, Tok::Num("10".into()), Tok::Caret, Tok::LBrace]);
                        if neg {
                            toks.push(Tok::Minus);
                        }
                        toks.extend([Tok::Num(exp), Tok::RBrace]);
                        i = k;
                    }
                }
            }
            c if c.is_ascii_alphabetic() => {
                let mut j = i;
                while j < chars.len() && chars[j].is_ascii_alphabetic() {
                    j += 1;
                }
                let word: String = chars[i..j].iter().collect();
                let spaced = (i == 0 || chars[i - 1].is_whitespace()) && (j == chars.len() || chars[j].is_whitespace());
                if spaced && (word == "or" || word == "and") {
                    toks.push(Tok::Sep);
                } else {
                    toks.extend(word.chars().map(Tok::Letter));
                }
                i = j;
            }
            _ => {
                i += 1;
                let t = match c {
                    '{' => Tok::LBrace,
                    '}' => Tok::RBrace,
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    '[' => Tok::LBrack,
                    ']' => Tok::RBrack,
                    '+' => Tok::Plus,
                    '-' | '−' | '–' => Tok::Minus,
                    '*' | '·' | '×' => Tok::Star,
                    '/' | '÷' => Tok::Slash,
                    '^' => Tok::Caret,
                    '_' => Tok::Under,
                    ',' => Tok::Comma,
                    ';' => Tok::Comma,
                    '&' => Tok::Amp,
                    '|' => Tok::Pipe,
                    '!' if chars.get(i) == Some(&'=') => {
                        i += 1;
                        Tok::Rel(RelOp::Ne)
                    }
                    '!' => Tok::Bang,
                    '=' => Tok::Rel(RelOp::Eq),
                    '<' | '>' => {
                        let eq = chars.get(i) == Some(&'=');
                        if eq {
                            i += 1;
                        }
                        Tok::Rel(match (c, eq) {
                            ('<', false) => RelOp::Lt,
                            ('<', true) => RelOp::Le,
                            (_, false) => RelOp::Gt,
                            (_, true) => RelOp::Ge,
                        })
                    }
                    '≤' => Tok::Rel(RelOp::Le),
                    '≥' => Tok::Rel(RelOp::Ge),
                    '≠' => Tok::Rel(RelOp::Ne),
                    'π' => Tok::Cmd("pi".into()),
                    '∞' => Tok::Cmd("infty".into()),
                    '√' => Tok::Cmd("sqrt".into()),
                    '±' => Tok::Cmd("pm".into()),
                    '∪' => Tok::Cmd("cup".into()),
                    other => return Err(format!("unexpected character {other:?}")),
                };
                toks.push(t);
            }
        }
    }
    Ok(toks)
}

/// Parse a cleaned answer.
pub(crate) fn parse_answer(s: &str) -> Result<Answer, String> {
    if s.len() > MAX_LEN {
        return Err(format!("longer than {MAX_LEN} bytes"));
    }
    let toks = tokenize(s)?;
    if toks.is_empty() {
        return Err("empty".into());
    }
    answer(&toks, 0)
}

fn opens(t: &Tok) -> bool {
    matches!(t, Tok::LBrace | Tok::LParen | Tok::LBrack | Tok::SetOpen) || matches!(t, Tok::Cmd(c) if c == "begin")
}

fn closes(t: &Tok) -> bool {
    matches!(t, Tok::RBrace | Tok::RParen | Tok::RBrack | Tok::SetClose) || matches!(t, Tok::Cmd(c) if c == "end")
}

/// Split at top-level tokens for which `at` holds (brackets of any kind nest).
fn split_top(toks: &[Tok], at: impl Fn(&Tok) -> bool) -> Vec<&[Tok]> {
    let mut parts = Vec::new();
    let mut depth = 0i64;
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        if opens(t) {
            depth += 1;
        } else if closes(t) {
            depth -= 1;
        } else if depth == 0 && at(t) {
            parts.push(&toks[start..i]);
            start = i + 1;
        }
    }
    parts.push(&toks[start..]);
    parts
}

/// Where the bracket opened at 0 closes (brackets of any kind nest).
fn matching_close(toks: &[Tok]) -> Option<usize> {
    let mut depth = 0i64;
    for (i, t) in toks.iter().enumerate() {
        if opens(t) {
            depth += 1;
        } else if closes(t) {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

fn check_depth(depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        Err(format!("nested more than {MAX_DEPTH} deep"))
    } else {
        Ok(())
    }
}

fn answer(toks: &[Tok], depth: usize) -> Result<Answer, String> {
    check_depth(depth)?;
    let parts = split_top(toks, |t| matches!(t, Tok::Comma | Tok::Sep));
    if parts.len() > 1 {
        let items =
            parts.into_iter().filter(|p| !p.is_empty()).map(|p| item(p, depth + 1)).collect::<Result<Vec<_>, _>>()?;
        return Ok(Answer::List(items));
    }
    item(toks, depth + 1)
}

fn item(toks: &[Tok], depth: usize) -> Result<Answer, String> {
    check_depth(depth)?;
    if toks.is_empty() {
        return Err("an empty item".into());
    }
    // Relations: `x = 5`, `3 < x \le 4`, `x \in [1,2]`.
    let sides = split_top(toks, |t| matches!(t, Tok::Rel(_)));
    if sides.len() > 1 {
        let ops: Vec<RelOp> = toks
            .iter()
            .scan(0i64, |d, t| {
                if opens(t) {
                    *d += 1;
                } else if closes(t) {
                    *d -= 1;
                }
                Some((*d, t))
            })
            .filter_map(|(d, t)| match t {
                Tok::Rel(op) if d == 0 => Some(*op),
                _ => None,
            })
            .collect();
        if ops == [RelOp::In] {
            return item(sides[1], depth + 1);
        }
        if ops.contains(&RelOp::In) {
            return Err("'\\in' in a chain".into());
        }
        let exprs = sides.into_iter().map(|s| expr_all(s, depth + 1)).collect::<Result<Vec<_>, _>>()?;
        return Ok(Answer::Rel(exprs, ops));
    }
    let unions = split_top(toks, |t| matches!(t, Tok::Cmd(c) if c == "cup"));
    if unions.len() > 1 {
        let parts = unions.into_iter().map(|p| item(p, depth + 1)).collect::<Result<Vec<_>, _>>()?;
        return Ok(Answer::Union(parts));
    }
    match &toks[0] {
        Tok::Cmd(c) if (c == "emptyset" || c == "varnothing") && toks.len() == 1 => return Ok(Answer::Set(Vec::new())),
        Tok::Cmd(c) if c == "begin" => return matrix(toks, depth + 1),
        _ => {}
    }
    let whole = matching_close(toks).is_some_and(|end| end == toks.len() - 1);
    if whole {
        let inner = &toks[1..toks.len() - 1];
        let elements = || -> Result<Vec<Answer>, String> {
            split_top(inner, |t| matches!(t, Tok::Comma))
                .into_iter()
                .filter(|p| !p.is_empty())
                .map(|p| item(p, depth + 1))
                .collect()
        };
        let has_comma = split_top(inner, |t| matches!(t, Tok::Comma)).len() > 1;
        match (&toks[0], &toks[toks.len() - 1]) {
            (Tok::SetOpen, Tok::SetClose) => return Ok(Answer::Set(elements()?)),
            (Tok::LBrace, Tok::RBrace) if has_comma => return Ok(Answer::Set(elements()?)),
            (Tok::LParen | Tok::LBrack, Tok::RParen | Tok::RBrack) if has_comma => {
                let open = if toks[0] == Tok::LParen { '(' } else { '[' };
                let close = if toks[toks.len() - 1] == Tok::RParen { ')' } else { ']' };
                return Ok(Answer::Bracketed { open, close, items: elements()? });
            }
            _ => {}
        }
    }
    Ok(Answer::Expr(expr_all(toks, depth + 1)?))
}

fn matrix(toks: &[Tok], depth: usize) -> Result<Answer, String> {
    // \begin { name } cells \end { name }
    let env = |at: usize| -> Option<String> {
        match (toks.get(at), toks.get(at + 1)) {
            (Some(Tok::LBrace), _) => {
                let mut name = String::new();
                for t in &toks[at + 1..] {
                    match t {
                        Tok::Letter(c) => name.push(*c),
                        Tok::RBrace => return Some(name),
                        _ => return None,
                    }
                }
                None
            }
            _ => None,
        }
    };
    let name = env(1).ok_or("a \\begin without an environment name")?;
    if !name.ends_with("matrix") && name != "array" {
        return Err(format!("the environment {name} is not a matrix"));
    }
    let body_start = 2 + name.len() + 1;
    let end = toks.iter().rposition(|t| matches!(t, Tok::Cmd(c) if c == "end")).ok_or("a matrix without \\end")?;
    if end < body_start || env(end + 1).as_deref() != Some(name.as_str()) || end + name.len() + 3 != toks.len() {
        return Err("a matrix that does not end where the answer ends".into());
    }
    let mut body = &toks[body_start..end];
    if name == "array" {
        // \begin{array}{cc}: skip the column spec.
        if body.first() == Some(&Tok::LBrace) {
            let close = matching_close(body).ok_or("an unclosed array column spec")?;
            body = &body[close + 1..];
        }
    }
    let rows: Vec<Vec<Answer>> = split_top(body, |t| *t == Tok::RowSep)
        .into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| split_top(r, |t| *t == Tok::Amp).into_iter().map(|c| item(c, depth + 1)).collect())
        .collect::<Result<_, _>>()?;
    if rows.is_empty() || rows.iter().any(|r| r.len() != rows[0].len()) {
        return Err("a matrix with rows of different lengths".into());
    }
    Ok(Answer::Matrix(rows))
}

/// Parse a whole token slice as one expression.
fn expr_all(toks: &[Tok], depth: usize) -> Result<Expr, String> {
    let mut p = Parser { toks: toks.to_vec(), pos: 0, depth, in_abs: 0, last_was_frac: false };
    let e = p.expr()?;
    match p.toks.get(p.pos) {
        None => Ok(e),
        Some(t) => Err(format!("unexpected {}", describe(t))),
    }
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
    in_abs: usize,
    /// The last atom was a `\frac` (for mixed numbers).
    last_was_frac: bool,
}

fn func_of(name: &str) -> Option<Func> {
    Some(match name {
        "sin" => Func::Sin,
        "cos" => Func::Cos,
        "tan" => Func::Tan,
        "sec" => Func::Sec,
        "csc" => Func::Csc,
        "cot" => Func::Cot,
        "arcsin" => Func::Asin,
        "arccos" => Func::Acos,
        "arctan" => Func::Atan,
        "sinh" => Func::Sinh,
        "cosh" => Func::Cosh,
        "tanh" => Func::Tanh,
        "ln" => Func::Ln,
        "log" | "lg" => Func::Log10,
        "exp" => Func::Exp,
        _ => return None,
    })
}

const GREEK: [&str; 23] = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "varepsilon",
    "zeta",
    "eta",
    "theta",
    "vartheta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "rho",
    "sigma",
    "tau",
    "phi",
    "varphi",
    "chi",
    "omega",
];

pub(crate) fn parse_decimal(lit: &str) -> Option<BigRational> {
    let (int, frac) = lit.split_once('.').unwrap_or((lit, ""));
    let digits = format!("{int}{frac}");
    let num: BigInt = if digits.is_empty() { BigInt::zero() } else { digits.parse().ok()? };
    let den = num_traits::pow(BigInt::from(10), frac.len());
    Some(BigRational::new(num, den))
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok) -> Result<(), String> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(format!("expected {} but found {}", describe(t), self.peek().map_or("the end".into(), describe)))
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        check_depth(self.depth)
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let mut terms = vec![self.term()?];
        loop {
            match self.peek() {
                Some(Tok::Plus) => {
                    self.pos += 1;
                    terms.push(self.term()?);
                }
                Some(Tok::Minus) => {
                    self.pos += 1;
                    terms.push(Expr::Neg(Box::new(self.term()?)));
                }
                Some(Tok::Cmd(c)) if c == "pm" || c == "mp" => {
                    let minus_first = c == "mp";
                    self.pos += 1;
                    let t = self.term()?;
                    let t = if minus_first { Expr::Neg(Box::new(t)) } else { t };
                    let so_far = sum(std::mem::take(&mut terms));
                    terms.push(Expr::Pm(Box::new(so_far), Box::new(t)));
                }
                _ => break,
            }
        }
        self.depth -= 1;
        Ok(sum(terms))
    }

    fn starts_atom(&self) -> bool {
        match self.peek() {
            Some(Tok::Num(_) | Tok::Letter(_) | Tok::LParen | Tok::LBrace) => true,
            Some(Tok::Pipe) => self.in_abs == 0,
            Some(Tok::Cmd(c)) => !matches!(c.as_str(), "pm" | "mp" | "cup" | "end" | "begin" | "cap"),
            _ => false,
        }
    }

    fn term(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let mut factors = vec![self.unary()?];
        loop {
            match self.peek() {
                Some(Tok::Star) => {
                    self.pos += 1;
                    factors.push(self.unary()?);
                }
                Some(Tok::Slash) => {
                    self.pos += 1;
                    let den = self.unary()?;
                    let num = product(std::mem::take(&mut factors));
                    factors.push(Expr::Div(Box::new(num), Box::new(den)));
                }
                _ if self.starts_atom() => {
                    // A mixed number: `2\frac{1}{3}` is 7/3 (integer literal, then a fraction of literals).
                    let mixed_base = match factors.as_slice() {
                        [Expr::Num(n)] if n.is_integer() => Some((n.clone(), false)),
                        [Expr::Neg(b)] => match b.as_ref() {
                            Expr::Num(n) if n.is_integer() => Some((n.clone(), true)),
                            _ => None,
                        },
                        _ => None,
                    };
                    let next = self.power()?;
                    if let (Some((whole, neg)), Expr::Div(a, b)) = (&mixed_base, &next) {
                        if let (Expr::Num(a), Expr::Num(b)) = (a.as_ref(), b.as_ref()) {
                            if a.is_integer() && b.is_integer() && !b.is_zero() && self.last_was_frac {
                                let v = whole + a / b;
                                factors = vec![if *neg { Expr::Neg(Box::new(Expr::Num(v))) } else { Expr::Num(v) }];
                                continue;
                            }
                        }
                    }
                    factors.push(next);
                }
                _ => break,
            }
        }
        self.depth -= 1;
        Ok(product(factors))
    }

    fn unary(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let e = match self.peek() {
            Some(Tok::Minus) => {
                self.pos += 1;
                Expr::Neg(Box::new(self.unary()?))
            }
            Some(Tok::Plus) => {
                self.pos += 1;
                self.unary()?
            }
            Some(Tok::Cmd(c)) if c == "pm" => {
                self.pos += 1;
                Expr::Pm(Box::new(Expr::Num(BigRational::zero())), Box::new(self.unary()?))
            }
            _ => self.power()?,
        };
        self.depth -= 1;
        Ok(e)
    }

    fn power(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let base = self.postfix()?;
        let e = if self.eat(&Tok::Caret) {
            let exp = self.exponent()?;
            let e = Expr::Pow(Box::new(base), Box::new(exp));
            self.postfix_ops(e)
        } else {
            base
        };
        self.depth -= 1;
        Ok(e)
    }

    fn exponent(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let e = match self.peek() {
            Some(Tok::Minus) => {
                self.pos += 1;
                Expr::Neg(Box::new(self.exponent()?))
            }
            Some(Tok::Plus) => {
                self.pos += 1;
                self.exponent()?
            }
            _ => {
                let a = self.postfix()?;
                if self.eat(&Tok::Caret) {
                    Expr::Pow(Box::new(a), Box::new(self.exponent()?))
                } else {
                    a
                }
            }
        };
        self.depth -= 1;
        Ok(e)
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let a = self.atom()?;
        Ok(self.postfix_ops(a))
    }

    fn postfix_ops(&mut self, mut e: Expr) -> Expr {
        while self.eat(&Tok::Bang) {
            e = Expr::Fact(Box::new(e));
        }
        e
    }

    /// A LaTeX argument: a `{group}`, or one character / command.
    fn arg(&mut self) -> Result<Expr, String> {
        match self.peek().cloned() {
            Some(Tok::LBrace) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(&Tok::RBrace)?;
                Ok(e)
            }
            Some(Tok::Num(n)) if n.len() > 1 => {
                // `\frac12`: the argument is the first digit only.
                let (first, rest) = n.split_at(1);
                self.toks[self.pos] = Tok::Num(rest.to_string());
                parse_decimal(first).map(Expr::Num).ok_or_else(|| format!("a bad number {n}"))
            }
            Some(Tok::Num(_) | Tok::Letter(_) | Tok::Cmd(_)) => self.atom(),
            other => {
                Err(format!("a command argument missing (found {})", other.as_ref().map_or("the end".into(), describe)))
            }
        }
    }

    fn atom(&mut self) -> Result<Expr, String> {
        self.enter()?;
        self.last_was_frac = false;
        let Some(t) = self.peek().cloned() else { return Err("an expression ends too early".into()) };
        self.pos += 1;
        let e = match t {
            Tok::Num(n) => {
                if self.peek() == Some(&Tok::Under) {
                    return Err(format!("a number in another base ({n}_...)"));
                }
                Expr::Num(parse_decimal(&n).ok_or_else(|| format!("a bad number {n}"))?)
            }
            Tok::Letter(c) => {
                let mut name = c.to_string();
                if self.eat(&Tok::Under) {
                    name.push('_');
                    name.push_str(&self.subscript()?);
                    Expr::Var(name)
                } else {
                    match c {
                        'e' => Expr::Const(Konst::E),
                        'i' => Expr::Const(Konst::I),
                        _ => Expr::Var(name),
                    }
                }
            }
            Tok::LParen | Tok::LBrack => {
                let e = self.expr()?;
                if !(self.eat(&Tok::RParen) || self.eat(&Tok::RBrack)) {
                    return Err(format!(
                        "an unclosed bracket (found {})",
                        self.peek().map_or("the end".into(), describe)
                    ));
                }
                e
            }
            Tok::LBrace => {
                let e = self.expr()?;
                self.expect(&Tok::RBrace)?;
                e
            }
            Tok::Pipe => {
                self.in_abs += 1;
                let e = self.expr()?;
                self.in_abs -= 1;
                self.expect(&Tok::Pipe)?;
                Expr::Abs(Box::new(e))
            }
            Tok::Cmd(name) => self.command(&name)?,
            other => return Err(format!("unexpected {}", describe(&other))),
        };
        self.depth -= 1;
        Ok(e)
    }

    fn subscript(&mut self) -> Result<String, String> {
        match self.peek().cloned() {
            Some(Tok::LBrace) => {
                let close = matching_close(&self.toks[self.pos..]).ok_or("an unclosed subscript")?;
                let text: String = self.toks[self.pos + 1..self.pos + close].iter().map(describe).collect();
                self.pos += close + 1;
                Ok(text)
            }
            Some(Tok::Num(n)) => {
                let (first, rest) = n.split_at(1);
                if rest.is_empty() {
                    self.pos += 1;
                } else {
                    self.toks[self.pos] = Tok::Num(rest.to_string());
                }
                Ok(first.to_string())
            }
            Some(t @ Tok::Letter(_)) => {
                self.pos += 1;
                Ok(describe(&t))
            }
            _ => Err("a subscript missing".into()),
        }
    }

    fn command(&mut self, name: &str) -> Result<Expr, String> {
        Ok(match name {
            "pi" => Expr::Const(Konst::Pi),
            "infty" | "infinity" => Expr::Inf,
            "frac" => {
                let a = self.arg()?;
                let b = self.arg()?;
                self.last_was_frac = true;
                Expr::Div(Box::new(a), Box::new(b))
            }
            "sqrt" => {
                let mut n = 2u32;
                if self.eat(&Tok::LBrack) {
                    match self.peek().cloned() {
                        Some(Tok::Num(k)) => {
                            n = k
                                .parse()
                                .ok()
                                .filter(|k| (2..=64).contains(k))
                                .ok_or_else(|| format!("a root index {k} (2 to 64)"))?;
                            self.pos += 1;
                        }
                        other => {
                            return Err(format!("a root index {}", other.as_ref().map_or("missing".into(), describe)))
                        }
                    }
                    self.expect(&Tok::RBrack)?;
                }
                Expr::Root(n, Box::new(self.arg()?))
            }
            "binom" | "dbinom" | "tbinom" => {
                let n = self.arg()?;
                let k = self.arg()?;
                // n! / (k! (n-k)!)
                let nk = Expr::Add(vec![n.clone(), Expr::Neg(Box::new(k.clone()))]);
                Expr::Div(
                    Box::new(Expr::Fact(Box::new(n))),
                    Box::new(Expr::Mul(vec![Expr::Fact(Box::new(k)), Expr::Fact(Box::new(nk))])),
                )
            }
            "operatorname" | "mathrm" | "text" => {
                // \operatorname{sin} x
                let close = matching_close(&self.toks[self.pos..]).ok_or("an unclosed \\operatorname")?;
                let word: String = self.toks[self.pos + 1..self.pos + close].iter().map(describe).collect();
                self.pos += close + 1;
                self.command(&word)?
            }
            _ => {
                if let Some(f) = func_of(name) {
                    self.function(f, name == "log")?
                } else if GREEK.contains(&name)
                    || name.len() == 1
                    || matches!(name, "Delta" | "Gamma" | "Omega" | "Phi" | "Sigma" | "Theta" | "Lambda")
                {
                    let mut v = format!("\\{name}");
                    if self.eat(&Tok::Under) {
                        v.push('_');
                        v.push_str(&self.subscript()?);
                    }
                    Expr::Var(v)
                } else {
                    return Err(format!("unknown command \\{name}"));
                }
            }
        })
    }

    /// `\sin x`, `\sin^2 x`, `\sin(2x)`, `\log_2 8`.
    fn function(&mut self, f: Func, is_log: bool) -> Result<Expr, String> {
        let base = if is_log && self.eat(&Tok::Under) { Some(self.arg()?) } else { None };
        let mut power = if self.eat(&Tok::Caret) { Some(self.exponent()?) } else { None };
        // `\sin^{-1} x` is arcsin x, not 1/sin x.
        let minus_one = Expr::Neg(Box::new(Expr::Num(BigRational::one())));
        let inverse = match f {
            Func::Sin => Some(Func::Asin),
            Func::Cos => Some(Func::Acos),
            Func::Tan => Some(Func::Atan),
            _ => None,
        };
        let f = match inverse {
            Some(inv) if power.as_ref() == Some(&minus_one) => {
                power = None;
                inv
            }
            _ => f,
        };
        let argument = match self.peek() {
            Some(Tok::LParen) => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(&Tok::RParen)?;
                e
            }
            Some(Tok::LBrace) => self.arg()?,
            _ => {
                // `\sin 2x`: the implicit product that follows, up to an operator.
                let mut factors = vec![self.power()?];
                while self.starts_atom() && !matches!(self.peek(), Some(Tok::Cmd(c)) if func_of(c).is_some()) {
                    factors.push(self.power()?);
                }
                product(factors)
            }
        };
        let mut e = match base {
            Some(b) => Expr::Div(
                Box::new(Expr::Func(Func::Ln, Box::new(argument))),
                Box::new(Expr::Func(Func::Ln, Box::new(b))),
            ),
            None => Expr::Func(f, Box::new(argument)),
        };
        if let Some(p) = power {
            e = Expr::Pow(Box::new(e), Box::new(p));
        }
        Ok(e)
    }
}

fn sum(mut terms: Vec<Expr>) -> Expr {
    if terms.len() == 1 {
        terms.pop().unwrap_or(Expr::Num(BigRational::zero()))
    } else {
        Expr::Add(terms)
    }
}

fn product(mut factors: Vec<Expr>) -> Expr {
    if factors.len() == 1 {
        factors.pop().unwrap_or(Expr::Num(BigRational::one()))
    } else {
        Expr::Mul(factors)
    }
}
