//! Tokens of a cleaned answer (see `normalize::clean`): numbers, letters, commands,
//! brackets, operators, relations and the separators between several answers.

use super::parse::RelOp;

/// At most this many digits in one number literal.
const MAX_DIGITS: usize = 400;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A number literal as written (`12`, `0.5`).
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
    /// `;`: between the elements of a tuple, or between whole solutions.
    Semi,
    /// `:` in a ratio (`11:21`).
    Colon,
    Amp,
    RowSep,
    Bang,
    Pipe,
    /// `'` after a name (`f'`).
    Prime,
    Rel(RelOp),
    /// `or` / `and` between answers.
    Sep,
}

/// A token as written (in messages, and as the text of a name).
pub(crate) fn describe(t: &Tok) -> String {
    let s = match t {
        Tok::Num(n) => return n.clone(),
        Tok::Letter(c) => return c.to_string(),
        Tok::Cmd(c) => return format!("\\{c}"),
        Tok::Rel(op) => return format!("{op:?}"),
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::LBrack => "[",
        Tok::RBrack => "]",
        Tok::SetOpen => "\\{",
        Tok::SetClose => "\\}",
        Tok::Plus => "+",
        Tok::Minus => "-",
        Tok::Star => "*",
        Tok::Slash => "/",
        Tok::Caret => "^",
        Tok::Under => "_",
        Tok::Comma => ",",
        Tok::Semi => ";",
        Tok::Colon => ":",
        Tok::Amp => "&",
        Tok::RowSep => "\\\\",
        Tok::Bang => "!",
        Tok::Pipe => "|",
        Tok::Prime => "'",
        Tok::Sep => "or",
    };
    s.to_string()
}

pub(crate) fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i = match c {
            c if c.is_whitespace() => i + 1,
            '\\' => backslash(&chars, i, &mut toks)?,
            '0'..='9' | '.' => number(&chars, i, &mut toks)?,
            c if c.is_ascii_alphabetic() => word(&chars, i, &mut toks),
            _ => {
                let (t, len) = symbol(&chars, i)?;
                toks.push(t);
                i + len
            }
        };
    }
    Ok(toks)
}

/// A command (`\frac`, `\le`) or an escaped character (`\{`, `\\`); returns where it ends.
fn backslash(chars: &[char], i: usize, toks: &mut Vec<Tok>) -> Result<usize, String> {
    let Some(&n) = chars.get(i + 1) else { return Err("a lone backslash".into()) };
    if !n.is_ascii_alphabetic() {
        match n {
            '{' => toks.push(Tok::SetOpen),
            '}' => toks.push(Tok::SetClose),
            '\\' => toks.push(Tok::RowSep),
            '|' => toks.push(Tok::Pipe),
            ',' | ';' | ':' | '!' | ' ' => {}
            other => return Err(format!("unknown command \\{other}")),
        }
        return Ok(i + 2);
    }
    let mut j = i + 1;
    while j < chars.len() && chars[j].is_ascii_alphabetic() {
        j += 1;
    }
    let name: String = chars[i + 1..j].iter().collect();
    let tok = match name.as_str() {
        "le" | "leq" | "leqslant" => Tok::Rel(RelOp::Le),
        "ge" | "geq" | "geqslant" => Tok::Rel(RelOp::Ge),
        "lt" => Tok::Rel(RelOp::Lt),
        "gt" => Tok::Rel(RelOp::Gt),
        "ne" | "neq" => Tok::Rel(RelOp::Ne),
        "in" => Tok::Rel(RelOp::In),
        "approx" | "simeq" | "thickapprox" => Tok::Rel(RelOp::Approx),
        "cdot" | "times" | "ast" => Tok::Star,
        "div" => Tok::Slash,
        "colon" => Tok::Colon,
        "lbrace" => Tok::SetOpen,
        "rbrace" => Tok::SetClose,
        "vert" | "lvert" | "rvert" | "mid" => Tok::Pipe,
        "left" | "right" | "displaystyle" | "bigl" | "bigr" | "Bigl" | "Bigr" | "big" | "Big" | "limits" => {
            return Ok(j)
        }
        _ => Tok::Cmd(name),
    };
    toks.push(tok);
    Ok(j)
}

/// A number literal, and scientific notation (`2.5E-4` becomes `2.5 * 10^{-4}`).
fn number(chars: &[char], i: usize, toks: &mut Vec<Tok>) -> Result<usize, String> {
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
    if !matches!(chars.get(j), Some('e' | 'E')) {
        return Ok(j);
    }
    let mut k = j + 1;
    let neg = matches!(chars.get(k), Some('-'));
    if matches!(chars.get(k), Some('-' | '+')) {
        k += 1;
    }
    let start = k;
    while k < chars.len() && chars[k].is_ascii_digit() {
        k += 1;
    }
    if k == start || chars.get(k).is_some_and(|c| c.is_ascii_alphabetic()) {
        return Ok(j);
    }
    let exp: String = chars[start..k].iter().collect();
    toks.extend([Tok::Star, Tok::Num("10".into()), Tok::Caret, Tok::LBrace]);
    if neg {
        toks.push(Tok::Minus);
    }
    toks.extend([Tok::Num(exp), Tok::RBrace]);
    Ok(k)
}

/// A run of letters: each letter is a variable, except `or` / `and` between answers
/// (spaced, or glued between a value and a bracket or a capitalised name: `(11,7)or(7,11)`,
/// `W(x)=1orW(x)=-1`).
fn word(chars: &[char], i: usize, toks: &mut Vec<Tok>) -> usize {
    let mut j = i;
    while j < chars.len() && chars[j].is_ascii_alphabetic() {
        j += 1;
    }
    let word: String = chars[i..j].iter().collect();
    let before = i.checked_sub(1).map(|k| chars[k]);
    let after = chars.get(j).copied();
    let value_before = before.is_some_and(|c| c.is_ascii_digit() || ")]}".contains(c));
    let open_before = before.is_none_or(char::is_whitespace) || value_before;
    let open_after = after.is_none_or(|c| c.is_whitespace() || c.is_ascii_digit() || "([{-\\".contains(c));
    for sep in ["or", "and"] {
        if word == sep && open_before && open_after {
            toks.push(Tok::Sep);
            return j;
        }
        let glued = word.strip_prefix(sep).filter(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()));
        if let (Some(rest), true) = (glued, value_before) {
            toks.push(Tok::Sep);
            toks.extend(rest.chars().map(Tok::Letter));
            return j;
        }
    }
    toks.extend(word.chars().map(Tok::Letter));
    j
}

/// One symbol, and how many characters it takes.
fn symbol(chars: &[char], i: usize) -> Result<(Tok, usize), String> {
    let c = chars[i];
    let next_is_eq = chars.get(i + 1) == Some(&'=');
    let t = match c {
        '{' => Tok::LBrace,
        '}' => Tok::RBrace,
        '(' => Tok::LParen,
        ')' => Tok::RParen,
        '[' => Tok::LBrack,
        ']' => Tok::RBrack,
        '+' => Tok::Plus,
        '-' | '−' | '–' => Tok::Minus,
        // `x**2`: a power as Python writes it.
        '*' if chars.get(i + 1) == Some(&'*') => return Ok((Tok::Caret, 2)),
        '*' | '·' | '×' => Tok::Star,
        '/' | '÷' => Tok::Slash,
        '^' => Tok::Caret,
        '_' => Tok::Under,
        ',' => Tok::Comma,
        ';' => Tok::Semi,
        ':' => Tok::Colon,
        '&' => Tok::Amp,
        '|' => Tok::Pipe,
        '\'' => Tok::Prime,
        '!' if next_is_eq => return Ok((Tok::Rel(RelOp::Ne), 2)),
        '!' => Tok::Bang,
        '=' => Tok::Rel(RelOp::Eq),
        '<' if next_is_eq => return Ok((Tok::Rel(RelOp::Le), 2)),
        '>' if next_is_eq => return Ok((Tok::Rel(RelOp::Ge), 2)),
        '<' => Tok::Rel(RelOp::Lt),
        '>' => Tok::Rel(RelOp::Gt),
        '≤' => Tok::Rel(RelOp::Le),
        '≥' => Tok::Rel(RelOp::Ge),
        '≠' => Tok::Rel(RelOp::Ne),
        '≈' => Tok::Rel(RelOp::Approx),
        'π' => Tok::Cmd("pi".into()),
        '∞' => Tok::Cmd("infty".into()),
        '√' => Tok::Cmd("sqrt".into()),
        '±' => Tok::Cmd("pm".into()),
        '∪' => Tok::Cmd("cup".into()),
        other => return Err(format!("unexpected character {other:?}")),
    };
    Ok((t, 1))
}
