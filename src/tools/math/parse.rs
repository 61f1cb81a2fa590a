//! The expression syntax the math tools share: numbers (integers, decimals, `1.5e3`), letters,
//! `+ - * / ^ **`, `mod` and `%`, postfix `!`, function calls `f(a, b)`, parentheses and
//! implicit multiplication (`2x`, `3(x + 1)`, `x y`). Unicode `× · ÷ −` are accepted.
//!
//! Bounded: the input length, the nesting depth and the token count are capped, so a model's
//! argument can never overflow the stack or take long to read.

use num_bigint::BigInt;
use num_rational::BigRational;

/// Longest argument (in characters) a math tool reads.
pub const MAX_INPUT_CHARS: usize = 2000;
/// Deepest nesting of parentheses, signs, powers and `!`.
pub const MAX_DEPTH: usize = 60;
/// Largest decimal exponent a literal may carry (`1e400` is refused).
const MAX_LITERAL_EXP: i64 = 1000;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Num(BigRational),
    /// A name that is not a call: a variable or a constant (`pi`, `e`).
    Var(String),
    Neg(Box<Node>),
    /// Terms, each with `true` when subtracted.
    Sum(Vec<(bool, Node)>),
    /// Factors, each with `true` when divided by.
    Product(Vec<(bool, Node)>),
    Pow(Box<Node>, Box<Node>),
    Fact(Box<Node>),
    Call(String, Vec<Node>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(BigRational),
    Ident(String),
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    Percent,
    Bang,
    Open,
    Close,
    Comma,
}

fn pow10(n: u32) -> BigInt {
    num_traits::pow(BigInt::from(10u8), n as usize)
}

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    if text.chars().count() > MAX_INPUT_CHARS {
        return Err(format!("the input is longer than {MAX_INPUT_CHARS} characters"));
    }
    let chars: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '0'..='9' | '.' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '_') {
                    i += 1;
                }
                // `1,000` style thousands separators are not read: a comma separates arguments.
                let digits: String = chars[start..i].iter().filter(|c| **c != '_').collect();
                let mut exp: i64 = 0;
                // An exponent only when `e` is followed by a digit (or a sign and a digit): `2e` is 2·e.
                if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                    let mut j = i + 1;
                    let mut sign = 1;
                    if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                        sign = if chars[j] == '-' { -1 } else { 1 };
                        j += 1;
                    }
                    if j < chars.len() && chars[j].is_ascii_digit() {
                        let s = j;
                        while j < chars.len() && chars[j].is_ascii_digit() {
                            j += 1;
                        }
                        let e: String = chars[s..j].iter().collect();
                        exp = e.parse::<i64>().ok().filter(|e| *e <= MAX_LITERAL_EXP).ok_or_else(|| {
                            format!("the exponent of '{}' is too large", chars[start..j].iter().collect::<String>())
                        })? * sign;
                        i = j;
                    }
                }
                toks.push(Tok::Num(decimal(&digits, exp)?));
            }
            c if c.is_alphabetic() => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                toks.push(Tok::Ident(chars[start..i].iter().collect::<String>().to_lowercase()));
            }
            '+' => {
                toks.push(Tok::Plus);
                i += 1;
            }
            '-' | '−' | '–' => {
                toks.push(Tok::Minus);
                i += 1;
            }
            '*' | '×' | '·' | '⋅' => {
                if c == '*' && chars.get(i + 1) == Some(&'*') {
                    toks.push(Tok::Caret);
                    i += 2;
                } else {
                    toks.push(Tok::Star);
                    i += 1;
                }
            }
            '/' | '÷' => {
                toks.push(Tok::Slash);
                i += 1;
            }
            '^' => {
                toks.push(Tok::Caret);
                i += 1;
            }
            '%' => {
                toks.push(Tok::Percent);
                i += 1;
            }
            '!' => {
                toks.push(Tok::Bang);
                i += 1;
            }
            '(' | '[' | '{' => {
                toks.push(Tok::Open);
                i += 1;
            }
            ')' | ']' | '}' => {
                toks.push(Tok::Close);
                i += 1;
            }
            ',' => {
                toks.push(Tok::Comma);
                i += 1;
            }
            '√' => {
                toks.push(Tok::Ident("sqrt".into()));
                i += 1;
            }
            'π' => {
                toks.push(Tok::Ident("pi".into()));
                i += 1;
            }
            other => return Err(format!("unexpected character '{other}' at position {}", i + 1)),
        }
    }
    Ok(toks)
}

/// `digits` (like `12.5` or `.5`) times 10^exp, exactly.
fn decimal(digits: &str, exp: i64) -> Result<BigRational, String> {
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return Err(format!("'{digits}' is not a number"));
    }
    let all = format!("{int}{frac}");
    let mantissa: BigInt = all.parse().map_err(|_| format!("'{digits}' is not a number"))?;
    let scale = exp - frac.len() as i64;
    let p = pow10(scale.unsigned_abs() as u32);
    Ok(if scale >= 0 { BigRational::from_integer(mantissa * p) } else { BigRational::new(mantissa, p) })
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

/// Parse one expression; the whole input must be used.
pub fn parse(text: &str) -> Result<Node, String> {
    let toks = lex(text)?;
    if toks.is_empty() {
        return Err("the expression is empty".into());
    }
    let mut p = Parser { toks, pos: 0, depth: 0 };
    let node = p.sum()?;
    if p.pos < p.toks.len() {
        return Err(match &p.toks[p.pos] {
            Tok::Close => "there is a ')' without a matching '('".into(),
            Tok::Comma => "a ',' outside a function call".into(),
            t => format!("unexpected {} after a complete expression", describe(t)),
        });
    }
    Ok(node)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(n) => format!("number {n}"),
        Tok::Ident(s) => format!("'{s}'"),
        Tok::Plus => "'+'".into(),
        Tok::Minus => "'-'".into(),
        Tok::Star => "'*'".into(),
        Tok::Slash => "'/'".into(),
        Tok::Caret => "'^'".into(),
        Tok::Percent => "'%'".into(),
        Tok::Bang => "'!'".into(),
        Tok::Open => "'('".into(),
        Tok::Close => "')'".into(),
        Tok::Comma => "','".into(),
    }
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(format!("the expression is nested more than {MAX_DEPTH} levels deep"))
        } else {
            Ok(())
        }
    }

    fn sum(&mut self) -> Result<Node, String> {
        self.enter()?;
        let mut terms = vec![(false, self.product()?)];
        while let Some(t) = self.peek() {
            let minus = match t {
                Tok::Plus => false,
                Tok::Minus => true,
                _ => break,
            };
            self.pos += 1;
            terms.push((minus, self.product()?));
        }
        self.depth -= 1;
        Ok(if terms.len() == 1 && !terms[0].0 { terms.remove(0).1 } else { Node::Sum(terms) })
    }

    fn is_mod(&self) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s == "mod")
    }

    fn product(&mut self) -> Result<Node, String> {
        let mut factors = vec![(false, self.unary()?)];
        loop {
            let divide = match self.peek() {
                Some(Tok::Star) => {
                    self.pos += 1;
                    false
                }
                Some(Tok::Slash) => {
                    self.pos += 1;
                    true
                }
                Some(Tok::Percent) => {
                    self.pos += 1;
                    let left = collapse(std::mem::take(&mut factors));
                    factors.push((false, Node::Call("mod".into(), vec![left, self.unary()?])));
                    continue;
                }
                _ if self.is_mod() => {
                    self.pos += 1;
                    let left = collapse(std::mem::take(&mut factors));
                    factors.push((false, Node::Call("mod".into(), vec![left, self.unary()?])));
                    continue;
                }
                // Implicit multiplication: `2x`, `2(x+1)`, `(a)(b)`, `x y`.
                Some(Tok::Ident(_)) | Some(Tok::Open) | Some(Tok::Num(_)) => false,
                _ => break,
            };
            let factor = self.unary()?;
            factors.push((divide, factor));
        }
        Ok(collapse(factors))
    }

    fn unary(&mut self) -> Result<Node, String> {
        match self.peek() {
            Some(Tok::Minus) => {
                self.pos += 1;
                self.enter()?;
                let inner = self.unary()?;
                self.depth -= 1;
                Ok(match inner {
                    Node::Num(n) => Node::Num(-n),
                    other => Node::Neg(Box::new(other)),
                })
            }
            Some(Tok::Plus) => {
                self.pos += 1;
                self.enter()?;
                let inner = self.unary();
                self.depth -= 1;
                inner
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<Node, String> {
        let base = self.postfix()?;
        if let Some(Tok::Caret) = self.peek() {
            self.pos += 1;
            self.enter()?;
            let exp = self.unary()?;
            self.depth -= 1;
            return Ok(Node::Pow(Box::new(base), Box::new(exp)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Node, String> {
        let mut node = self.primary()?;
        let depth = self.depth;
        while let Some(Tok::Bang) = self.peek() {
            self.pos += 1;
            self.enter()?;
            node = Node::Fact(Box::new(node));
        }
        self.depth = depth;
        Ok(node)
    }

    fn primary(&mut self) -> Result<Node, String> {
        let Some(tok) = self.peek().cloned() else {
            return Err("the expression ends where a number or a name was expected".into());
        };
        self.pos += 1;
        match tok {
            Tok::Num(n) => Ok(Node::Num(n)),
            Tok::Open => {
                let inner = self.sum()?;
                match self.peek() {
                    Some(Tok::Close) => {
                        self.pos += 1;
                        Ok(inner)
                    }
                    _ => Err("a '(' is not closed".into()),
                }
            }
            Tok::Ident(name) => {
                if let Some(Tok::Open) = self.peek() {
                    if is_function(&name) {
                        self.pos += 1;
                        self.enter()?;
                        let mut args = Vec::new();
                        if let Some(Tok::Close) = self.peek() {
                            self.pos += 1;
                        } else {
                            loop {
                                args.push(self.sum()?);
                                match self.peek() {
                                    Some(Tok::Comma) => self.pos += 1,
                                    Some(Tok::Close) => {
                                        self.pos += 1;
                                        break;
                                    }
                                    _ => return Err(format!("the call {name}( is not closed with ')'")),
                                }
                            }
                        }
                        self.depth -= 1;
                        return Ok(Node::Call(name, args));
                    }
                }
                Ok(Node::Var(name))
            }
            other => Err(format!("unexpected {} where a number or a name was expected", describe(&other))),
        }
    }
}

fn collapse(mut factors: Vec<(bool, Node)>) -> Node {
    if factors.len() == 1 && !factors[0].0 {
        factors.remove(0).1
    } else {
        Node::Product(factors)
    }
}

/// Names read as function calls when followed by `(`.
pub const FUNCTIONS: &[&str] = &[
    "sqrt",
    "root",
    "cbrt",
    "gcd",
    "lcm",
    "mod",
    "floor",
    "ceil",
    "abs",
    "round",
    "fact",
    "factorial",
    "c",
    "binom",
    "binomial",
    "choose",
    "ncr",
    "p",
    "perm",
    "npr",
    "sin",
    "cos",
    "tan",
    "exp",
    "ln",
    "log",
    "asin",
    "acos",
    "atan",
];

pub fn is_function(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn numbers_are_exact() {
        assert_eq!(parse("0.1"), Ok(Node::Num(r(1, 10))));
        assert_eq!(parse(".5"), Ok(Node::Num(r(1, 2))));
        assert_eq!(parse("1.5e3"), Ok(Node::Num(r(1500, 1))));
        assert_eq!(parse("25e-2"), Ok(Node::Num(r(1, 4))));
        assert_eq!(parse("-3"), Ok(Node::Num(r(-3, 1))));
    }

    #[test]
    fn structure_and_precedence() {
        let two_x = parse("2x").unwrap();
        assert_eq!(two_x, Node::Product(vec![(false, Node::Num(r(2, 1))), (false, Node::Var("x".into()))]));
        // -2^2 is -(2^2) and 2^3^2 is 2^(3^2).
        assert!(matches!(parse("-x^2").unwrap(), Node::Neg(_)));
        match parse("2^3^2").unwrap() {
            Node::Pow(_, e) => assert!(matches!(*e, Node::Pow(_, _))),
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse("7 mod 3").unwrap(), Node::Call(n, _) if n == "mod"));
        assert!(matches!(parse("5!").unwrap(), Node::Fact(_)));
        assert!(matches!(parse("gcd(4, 6)").unwrap(), Node::Call(n, a) if n == "gcd" && a.len() == 2));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("(1 + 2").unwrap_err().contains("not closed"));
        assert!(parse("1 + 2)").unwrap_err().contains("')'"));
        assert!(parse("2 $ 3").unwrap_err().contains("'$'"));
        assert!(parse("1e5000").unwrap_err().contains("exponent"));
        assert!(parse("1.2.3").unwrap_err().contains("not a number"));
        let deep = format!("{}1{}", "(".repeat(500), ")".repeat(500));
        assert!(parse(&deep).unwrap_err().contains("nested"));
        assert!(parse(&"-".repeat(1000)).unwrap_err().contains("nested"));
        assert!(parse(&"1".repeat(3000)).unwrap_err().contains("longer"));
        assert!(parse(&format!("3{}", "!".repeat(100))).unwrap_err().contains("nested"));
        // Long flat sums are not deep.
        assert!(parse(&vec!["5!"; 300].join("+")).is_ok());
    }
}
