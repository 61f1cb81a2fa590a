//! The expression parser: tokens (see `lex`) to an [`Expr`] — numbers, variables,
//! constants, sums, products, fractions, powers, roots, functions, factorials, absolute
//! values, `\pm`, and `\sum` / `\prod` over a bound variable.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

use super::lex::{describe, Tok};
use super::parse::{check_depth, matching_close, BigOp, Expr, Func, Konst};

/// Parse a whole token slice as one expression.
pub(crate) fn expr_all(toks: &[Tok], depth: usize) -> Result<Expr, String> {
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

/// A Greek letter used as a variable (`\theta`, `\Delta`).
pub(crate) fn is_greek(name: &str) -> bool {
    GREEK.contains(&name) || matches!(name, "Delta" | "Gamma" | "Omega" | "Phi" | "Sigma" | "Theta" | "Lambda" | "Psi")
}

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
                let value = parse_decimal(&n).ok_or_else(|| format!("a bad number {n}"))?;
                if n.contains('.') {
                    Expr::Dec(value)
                } else {
                    Expr::Num(value)
                }
            }
            Tok::Letter(c) => {
                let mut name = c.to_string();
                let subscripted = self.eat(&Tok::Under);
                if subscripted {
                    name.push('_');
                    name.push_str(&self.subscript()?);
                }
                let primed = self.primes(&mut name);
                match c {
                    'e' if !subscripted && !primed => Expr::Const(Konst::E),
                    'i' if !subscripted && !primed => Expr::Const(Konst::I),
                    _ => Expr::Var(name),
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

    /// `f'`, `f''`: primes become part of the name.
    fn primes(&mut self, name: &mut String) -> bool {
        let mut any = false;
        while self.eat(&Tok::Prime) {
            name.push('\'');
            any = true;
        }
        any
    }

    /// `\sum_{k=1}^{n} body` (or `\prod`): the body is the product that follows, up to
    /// a `+` or `-`, as in `\sin 2x`.
    fn big_operator(&mut self, op: BigOp) -> Result<Expr, String> {
        let missing = || format!("a \\{} without its bounds (`_{{k=1}}^{{n}}`)", op.name());
        if !self.eat(&Tok::Under) || !self.eat(&Tok::LBrace) {
            return Err(missing());
        }
        let var = match (self.peek().cloned(), self.toks.get(self.pos + 1)) {
            (Some(Tok::Letter(c)), Some(Tok::Rel(super::parse::RelOp::Eq))) => c.to_string(),
            _ => return Err(missing()),
        };
        self.pos += 2;
        let lo = self.expr()?;
        self.expect(&Tok::RBrace)?;
        if !self.eat(&Tok::Caret) {
            return Err(missing());
        }
        let hi = self.arg()?;
        let mut factors = vec![self.power()?];
        while self.starts_atom() {
            factors.push(self.power()?);
        }
        // `\sum_{i=1}^{n} i^2`: the bound `i` (or `e`) is the variable, not the constant.
        let body = bind(product(factors), &var);
        Ok(Expr::Big(op, var, Box::new([lo, hi, body])))
    }

    fn command(&mut self, name: &str) -> Result<Expr, String> {
        Ok(match name {
            "pi" => Expr::Const(Konst::Pi),
            "sum" => self.big_operator(BigOp::Sum)?,
            "prod" => self.big_operator(BigOp::Prod)?,
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
                } else if is_greek(name) || name.len() == 1 {
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

/// `e` with the constant `i` or `e` read as the bound variable of that name.
fn bind(e: Expr, var: &str) -> Expr {
    let b = |x: Box<Expr>| Box::new(bind(*x, var));
    match e {
        Expr::Const(Konst::I) if var == "i" => Expr::Var(var.into()),
        Expr::Const(Konst::E) if var == "e" => Expr::Var(var.into()),
        Expr::Add(xs) => Expr::Add(xs.into_iter().map(|x| bind(x, var)).collect()),
        Expr::Mul(xs) => Expr::Mul(xs.into_iter().map(|x| bind(x, var)).collect()),
        Expr::Neg(a) => Expr::Neg(b(a)),
        Expr::Abs(a) => Expr::Abs(b(a)),
        Expr::Root(n, a) => Expr::Root(n, b(a)),
        Expr::Func(f, a) => Expr::Func(f, b(a)),
        Expr::Fact(a) => Expr::Fact(b(a)),
        Expr::Div(x, y) => Expr::Div(b(x), b(y)),
        Expr::Pow(x, y) => Expr::Pow(b(x), b(y)),
        Expr::Pm(x, y) => Expr::Pm(b(x), b(y)),
        other => other,
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
