//! A bounded reader of the Python literals the reference logs print (dicts, lists,
//! strings, numbers, True/False/None), nesting at most `MAX_LITERAL_DEPTH` deep.

/// Actions are tool calls: `Search[Paramore]` is `ToolCall { name: "search", arg: "Paramore" }`.

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Py {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Py>),
    Dict(Vec<(Py, Py)>),
}

/// How deeply lists, tuples and dicts may nest in a literal. ReAct's results dicts nest
/// one level; the limit keeps a hostile or corrupt log from overflowing the stack.
pub const MAX_LITERAL_DEPTH: usize = 64;

/// Parse one Python literal: dicts, lists, tuples, strings (either quote, escapes, an
/// `u`/`b`/`r` prefix), ints, floats, `None`, `True`, `False`, `nan`, `inf`.
pub(super) fn parse_python_literal(text: &str) -> Result<Py, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = PyParser { chars, pos: 0, depth: 0 };
    let value = p.value()?;
    p.ws();
    if p.pos < p.chars.len() {
        return Err(format!("unexpected {:?} at column {}", p.chars[p.pos], p.pos + 1));
    }
    Ok(value)
}

pub(super) struct PyParser {
    chars: Vec<char>,
    pos: usize,
    /// Containers open around the current position.
    depth: usize,
}

impl PyParser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn err(&self, what: &str) -> String {
        match self.peek() {
            Some(c) => format!("{what}, found {c:?} at column {}", self.pos + 1),
            None => format!("{what}, found the end of the text"),
        }
    }

    fn value(&mut self) -> Result<Py, String> {
        self.ws();
        if matches!(self.peek(), Some('{' | '[' | '(')) {
            if self.depth >= MAX_LITERAL_DEPTH {
                return Err(format!(
                    "nested more than {MAX_LITERAL_DEPTH} levels deep at column {} (a results dict nests one level)",
                    self.pos + 1
                ));
            }
            self.depth += 1;
            let value = match self.peek() {
                Some('{') => self.dict(),
                Some('[') => self.seq(']').map(Py::List),
                _ => self.seq(')').map(Py::List),
            };
            self.depth -= 1;
            return value;
        }
        match self.peek() {
            Some('\'') | Some('"') => self.string().map(Py::Str),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                match word.as_str() {
                    "None" => Ok(Py::None),
                    "True" => Ok(Py::Bool(true)),
                    "False" => Ok(Py::Bool(false)),
                    "nan" => Ok(Py::Float(f64::NAN)),
                    "inf" => Ok(Py::Float(f64::INFINITY)),
                    "u" | "U" | "b" | "B" | "r" | "R" if matches!(self.peek(), Some('\'') | Some('"')) => {
                        self.string().map(Py::Str)
                    }
                    _ => Err(format!("unknown name {word:?} at column {}", start + 1)),
                }
            }
            _ => Err(self.err("expected a value")),
        }
    }

    fn dict(&mut self) -> Result<Py, String> {
        self.pos += 1; // '{'
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Py::Dict(items));
            }
            let key = self.value()?;
            self.ws();
            if self.peek() != Some(':') {
                return Err(self.err("expected ':' after a key"));
            }
            self.pos += 1;
            let value = self.value()?;
            items.push((key, value));
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn seq(&mut self, close: char) -> Result<Vec<Py>, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(items);
            }
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(c) if c == close => {}
                _ => return Err(self.err(&format!("expected ',' or '{close}'"))),
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let start = self.pos;
        let Some(quote) = self.peek() else { return Err(self.err("expected a string")) };
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(format!("unterminated string starting at column {}", start + 1));
            };
            self.pos += 1;
            if c == quote {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else { continue };
            self.pos += 1;
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' | '\'' | '"' => out.push(e),
                '\n' => {}
                'x' | 'u' | 'U' => {
                    let len = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = self.chars.iter().skip(self.pos).take(len).collect();
                    let ch = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32).filter(|_| hex.len() == len);
                    match ch {
                        Some(ch) => {
                            out.push(ch);
                            self.pos += len;
                        }
                        None => return Err(format!("bad \\{e} escape at column {}", self.pos)),
                    }
                }
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }

    fn number(&mut self) -> Result<Py, String> {
        let start = self.pos;
        if matches!(self.peek(), Some('-') | Some('+')) {
            self.pos += 1;
        }
        if self.chars[self.pos..].starts_with(&['i', 'n', 'f']) {
            self.pos += 3;
            let negative = self.chars[start] == '-';
            return Ok(Py::Float(if negative { f64::NEG_INFINITY } else { f64::INFINITY }));
        }
        let mut float = false;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || c == '_' {
                self.pos += 1;
            } else if c == '.' || c == 'e' || c == 'E' {
                float = true;
                self.pos += 1;
                if (c == 'e' || c == 'E') && matches!(self.peek(), Some('-') | Some('+')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let text: String = self.chars[start..self.pos].iter().filter(|c| **c != '_').collect();
        let bad = || format!("bad number {text:?} at column {}", start + 1);
        if float {
            text.parse().map(Py::Float).map_err(|_| bad())
        } else {
            text.parse().map(Py::Int).map_err(|_| bad())
        }
    }
}

// ---------------------------------------------------------------------------------------
// Scoring, as in the HotpotQA evaluation script the ReAct code uses.
