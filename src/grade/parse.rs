//! A small LaTeX/ASCII answer parser: a cleaned answer (see `normalize::clean`) to an
//! [`Answer`] — an expression, a relation, a labelled value (`x = 5`, `(p,q) = (3,2)`), a
//! tuple or interval, a set, a union, a ratio, a matrix or a list of several answers.
//! Bounded: input length, nesting depth and the number of `\pm` are capped, and anything
//! it does not know is an error, never a guess. Tokens are in `lex`, expressions in `expr`.

use num_rational::BigRational;

use super::expr::expr_all;
use super::lex::{describe, tokenize, Tok};

/// The longest answer parsed (longer ones are compared by their normal form only).
pub(crate) const MAX_LEN: usize = 1000;
/// The deepest nesting of groups and operators.
const MAX_DEPTH: usize = 60;

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

/// `\sum` or `\prod` over a bound variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BigOp {
    Sum,
    Prod,
}

impl BigOp {
    pub(crate) fn name(self) -> &'static str {
        match self {
            BigOp::Sum => "sum",
            BigOp::Prod => "prod",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    Num(BigRational),
    /// A number written with a decimal point (`0.33`): compared at the grading precision.
    Dec(BigRational),
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
    /// `\sum_{var=lo}^{hi} body`: `[lo, hi, body]`.
    Big(BigOp, String, Box<[Expr; 3]>),
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
    /// `\approx`: in a chain after a name, the side before it is the exact value.
    Approx,
}

/// The name a value is given (`x`, `f(x)`, `(p,q)`, `V_1:V_2`): its text without braces,
/// and the expression it reads as, when it is one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Label {
    pub key: String,
    pub expr: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Answer {
    Expr(Expr),
    /// `a < b <= c`: sides and the operators between them.
    Rel(Vec<Expr>, Vec<RelOp>),
    /// `x = 5`, `z = 1 + 1 = 2` (the last side), `x = 1/3 \approx 0.33` (the exact side,
    /// and the approximation).
    Labelled {
        label: Label,
        value: Box<Answer>,
        approx: Option<Box<Answer>>,
    },
    /// `(1,2)`, `[1,2)`: a tuple or an interval, told apart by the comparison.
    Bracketed {
        open: char,
        close: char,
        items: Vec<Answer>,
    },
    Set(Vec<Answer>),
    Union(Vec<Answer>),
    /// `11:21`, compared part by part.
    Ratio(Vec<Expr>),
    Matrix(Vec<Vec<Answer>>),
    /// Several answers (`1, 2`; `x = 1 or x = 2`) in any order.
    List(Vec<Answer>),
}

/// Parse a cleaned answer. An equation chain that does not parse as a whole
/// (`1 = \zzz = x = 0`) is read by its last side.
pub(crate) fn parse_answer(s: &str) -> Result<Answer, String> {
    if s.len() > MAX_LEN {
        return Err(format!("longer than {MAX_LEN} bytes"));
    }
    let whole = tokenize(s).and_then(|toks| {
        if toks.is_empty() {
            return Err("empty".to_string());
        }
        answer(&toks, 0)
    });
    let Err(e) = whole else { return whole };
    match last_side_of_chain(s) {
        Some(last) => parse_answer(last).map_err(|_| e),
        None => Err(e),
    }
}

/// `a = b = c` (three sides or more, no list): `c`.
fn last_side_of_chain(s: &str) -> Option<&str> {
    if s.contains([',', ';']) {
        return None;
    }
    let bytes = s.as_bytes();
    let eqs: Vec<usize> =
        s.match_indices('=').map(|(i, _)| i).filter(|&i| i == 0 || !b"<>!".contains(&bytes[i - 1])).collect();
    let last = *eqs.last()?;
    (eqs.len() >= 2 && !s[last + 1..].trim().is_empty()).then(|| s[last + 1..].trim())
}

pub(crate) fn opens(t: &Tok) -> bool {
    matches!(t, Tok::LBrace | Tok::LParen | Tok::LBrack | Tok::SetOpen) || matches!(t, Tok::Cmd(c) if c == "begin")
}

pub(crate) fn closes(t: &Tok) -> bool {
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

/// The top-level tokens for which `pick` gives a value, in order.
fn top_level<T>(toks: &[Tok], pick: impl Fn(&Tok) -> Option<T>) -> Vec<T> {
    let mut depth = 0i64;
    let mut out = Vec::new();
    for t in toks {
        if opens(t) {
            depth += 1;
        } else if closes(t) {
            depth -= 1;
        } else if depth == 0 {
            out.extend(pick(t));
        }
    }
    out
}

/// Where the bracket opened at 0 closes (brackets of any kind nest).
pub(crate) fn matching_close(toks: &[Tok]) -> Option<usize> {
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

pub(crate) fn check_depth(depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        Err(format!("nested more than {MAX_DEPTH} deep"))
    } else {
        Ok(())
    }
}

fn items_of(parts: Vec<&[Tok]>, depth: usize) -> Result<Vec<Answer>, String> {
    parts.into_iter().filter(|p| !p.is_empty()).map(|p| item(p, depth + 1)).collect()
}

/// A whole answer: solutions separated by `;` (each a tuple when it has several parts:
/// `p=5,q=2; p=7,q=2` is `(5,2), (7,2)`), or a list separated by `,` / `or` / `and`.
fn answer(toks: &[Tok], depth: usize) -> Result<Answer, String> {
    check_depth(depth)?;
    let groups = split_top(toks, |t| *t == Tok::Semi);
    if groups.len() == 1 {
        return group(toks, depth + 1);
    }
    let mut out = Vec::new();
    for g in groups.into_iter().filter(|g| !g.is_empty()) {
        out.push(match group(g, depth + 1)? {
            Answer::List(parts) => Answer::Bracketed { open: '(', close: ')', items: tuple_values(parts) },
            one => one,
        });
    }
    Ok(Answer::List(out))
}

/// The parts of one solution as tuple elements: named values (`p=5, q=2`) by their values.
fn tuple_values(parts: Vec<Answer>) -> Vec<Answer> {
    if !parts.iter().all(|p| matches!(p, Answer::Labelled { .. })) {
        return parts;
    }
    parts
        .into_iter()
        .map(|p| match p {
            Answer::Labelled { value, .. } => *value,
            other => other,
        })
        .collect()
}

fn group(toks: &[Tok], depth: usize) -> Result<Answer, String> {
    let parts = split_top(toks, |t| matches!(t, Tok::Comma | Tok::Sep));
    if parts.len() > 1 {
        return Ok(Answer::List(items_of(parts, depth)?));
    }
    item(toks, depth + 1)
}

fn item(toks: &[Tok], depth: usize) -> Result<Answer, String> {
    check_depth(depth)?;
    if toks.is_empty() {
        return Err("an empty item".into());
    }
    let sides = split_top(toks, |t| matches!(t, Tok::Rel(_)));
    if sides.len() > 1 {
        return relation(toks, sides, depth);
    }
    let unions = split_top(toks, |t| matches!(t, Tok::Cmd(c) if c == "cup"));
    if unions.len() > 1 {
        return Ok(Answer::Union(items_of(unions, depth)?));
    }
    match &toks[0] {
        Tok::Cmd(c) if (c == "emptyset" || c == "varnothing") && toks.len() == 1 => return Ok(Answer::Set(Vec::new())),
        Tok::Cmd(c) if c == "begin" => return matrix(toks, depth + 1),
        _ => {}
    }
    if matching_close(toks).is_some_and(|end| end == toks.len() - 1) {
        if let Some(a) = bracketed(toks, depth)? {
            return Ok(a);
        }
    }
    let ratio = split_top(toks, |t| *t == Tok::Colon);
    if ratio.len() > 1 {
        let parts = ratio.into_iter().map(|p| expr_all(p, depth + 1)).collect::<Result<Vec<_>, _>>()?;
        return Ok(Answer::Ratio(parts));
    }
    Ok(Answer::Expr(expr_all(toks, depth + 1)?))
}

/// `\{..\}`, `{a, b}`, `(a, b)`, `[a, b)`, and a single answer in parentheses
/// (`(\begin{pmatrix}..\end{pmatrix})`); `None` for a group that is an expression.
fn bracketed(toks: &[Tok], depth: usize) -> Result<Option<Answer>, String> {
    let inner = &toks[1..toks.len() - 1];
    let elements = || items_of(split_top(inner, |t| matches!(t, Tok::Comma | Tok::Semi)), depth);
    let several = split_top(inner, |t| matches!(t, Tok::Comma | Tok::Semi)).len() > 1;
    let last = &toks[toks.len() - 1];
    Ok(Some(match (&toks[0], last) {
        (Tok::SetOpen, Tok::SetClose) => Answer::Set(elements()?),
        (Tok::LBrace, Tok::RBrace) if several => Answer::Set(elements()?),
        (Tok::LParen | Tok::LBrack, Tok::RParen | Tok::RBrack) if several => {
            let open = if toks[0] == Tok::LParen { '(' } else { '[' };
            let close = if *last == Tok::RParen { ')' } else { ']' };
            Answer::Bracketed { open, close, items: elements()? }
        }
        // `(\begin{pmatrix}..\end{pmatrix})`, `\left[\begin{array}..\end{array}\right]`.
        (Tok::LParen | Tok::LBrack, Tok::RParen | Tok::RBrack) if matches!(inner.first(), Some(Tok::Cmd(c)) if c == "begin") => {
            item(inner, depth)?
        }
        _ => return Ok(None),
    }))
}

/// `x = 5`, `3 < x \le 4`, `x \in [1,2]`, `f(x) = 1`, `a + b = 7`.
fn relation(toks: &[Tok], sides: Vec<&[Tok]>, depth: usize) -> Result<Answer, String> {
    let ops: Vec<RelOp> = top_level(toks, |t| match t {
        Tok::Rel(op) => Some(*op),
        _ => None,
    });
    if ops == [RelOp::In] {
        return item(sides[1], depth + 1);
    }
    if ops.contains(&RelOp::In) {
        return Err("'\\in' in a chain".into());
    }
    let assigns = ops.iter().all(|op| matches!(op, RelOp::Eq | RelOp::Approx));
    if assigns && is_label(sides[0]) {
        return labelled(sides, &ops, depth);
    }
    let exprs = sides.into_iter().map(|s| expr_all(s, depth + 1)).collect::<Result<Vec<_>, _>>()?;
    let ops = ops.into_iter().map(|op| if op == RelOp::Approx { RelOp::Eq } else { op }).collect();
    Ok(Answer::Rel(exprs, ops))
}

/// A name, its exact value (the last side before any `\approx`) and the approximation.
fn labelled(sides: Vec<&[Tok]>, ops: &[RelOp], depth: usize) -> Result<Answer, String> {
    let key: String = sides[0].iter().filter(|t| !matches!(t, Tok::LBrace | Tok::RBrace)).map(describe).collect();
    let label = Label { key, expr: expr_all(sides[0], depth + 1).ok() };
    let first_approx = ops.iter().position(|op| *op == RelOp::Approx);
    let (exact, approx) = match first_approx {
        None => (sides.len() - 1, None),
        Some(0) => (1, None),
        Some(k) => (k, Some(k + 1)),
    };
    let value = Box::new(item(sides[exact], depth + 1)?);
    let approx = match approx {
        Some(k) => Some(Box::new(item(sides[k], depth + 1)?)),
        None => None,
    };
    Ok(Answer::Labelled { label, value, approx })
}

/// Commands a name may use: Greek letters, accents, angles, fractions of names.
const NAME_COMMANDS: [&str; 10] =
    ["frac", "overline", "angle", "mathbf", "vec", "hat", "bar", "tilde", "triangle", "widehat"];

/// Whether the left side of `=` names the value rather than computes it: letters,
/// subscripts, primes, `f(x)`, `(p,q)`, `V_1:V_2`, `|AB|`, `\frac{NO}{BO}`, `\angle A`
/// — no operator and no number outside a subscript or a function's argument.
fn is_label(toks: &[Tok]) -> bool {
    let mut letters = false;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Letter(_) => letters = true,
            Tok::Cmd(c) if super::expr::is_greek(c) => letters = true,
            Tok::Cmd(c) if NAME_COMMANDS.contains(&c.as_str()) => {}
            Tok::Prime | Tok::Colon | Tok::Pipe | Tok::LBrace | Tok::RBrace => {}
            Tok::Under => i += group_len(&toks[i + 1..]),
            // An inverse function's name: `f^{-1}(x)`.
            Tok::Caret
                if i > 0
                    && matches!(toks[i - 1], Tok::Letter(_))
                    && matches!(&toks[i + 1..], [Tok::LBrace, Tok::Minus, Tok::Num(n), Tok::RBrace, ..] if n == "1") =>
            {
                i += 4;
            }
            Tok::LParen => {
                let Some(close) = matching_close(&toks[i..]) else { return false };
                let after_name = i > 0 && matches!(toks[i - 1], Tok::Letter(_) | Tok::Prime);
                let inner = &toks[i + 1..i + close];
                let ok = inner.iter().all(|t| match t {
                    Tok::Letter(_) | Tok::Comma | Tok::Under | Tok::LBrace | Tok::RBrace => true,
                    Tok::Cmd(c) => super::expr::is_greek(c),
                    Tok::Num(_) | Tok::Plus | Tok::Minus => after_name,
                    _ => false,
                });
                if !ok {
                    return false;
                }
                letters |= inner.iter().any(|t| matches!(t, Tok::Letter(_)));
                i += close;
            }
            _ => return false,
        }
        i += 1;
    }
    letters
}

/// How many tokens a subscript takes: a brace group, or one token.
fn group_len(toks: &[Tok]) -> usize {
    match toks.first() {
        Some(Tok::LBrace) => matching_close(toks).map_or(toks.len(), |c| c + 1),
        Some(_) => 1,
        None => 0,
    }
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
