//! `lp[...]`: linear and integer programs, solved by `microlp` (pure Rust simplex with
//! branch and bound), written as
//! `maximize 3x + 2y subject to x + y <= 4; x + 3y <= 6; x >= 0; y >= 0` (also `minimize`,
//! `max`/`min`, `s.t.`, `st`, constraints separated by `;`, `,` or new lines, chains
//! `0 <= x <= 4`, and `integer x, y`).
//!
//! The solver works in floating point; the answer is rationalised with a bounded continued
//! fraction and then checked exactly against every constraint, so a fraction is only shown when
//! it is exactly feasible. Bounded: at most 30 variables and 60 constraints, a
//! branch-and-bound node budget (deterministic), and a time limit inside the solver as a
//! last resort ([`SOLVER_TIME_LIMIT`]; the tool's own limit in the runtime is longer).
//!
//! Every continuous variable goes to the solver as the difference of two non-negative parts
//! (`x = x⁺ − x⁻`; an integer one keeps finite bounds, ±2^31): microlp 0.6 mishandles free
//! variables (both bounds infinite) — it
//! pivots forever on `maximize x + y subject to x + y <= 4` and calls
//! `maximize x - y subject to x - y <= 3` unbounded — while the split program is in the
//! standard form its simplex is made for.

use std::collections::BTreeMap;

use microlp::{
    ComparisonOp, OptimizationDirection, Problem, SolutionStatus, SolveOptions, SolveOutcome, TerminationReason,
};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::calc::{clip, exact_value};
use super::num::{decimal_sig, int};
use super::parse::{parse, Node};

pub const USAGE: &str = "write e.g. lp[maximize 3x + 2y subject to x + y <= 4; x + 3y <= 6; x >= 0; y >= 0] \
(or minimize; add 'integer x, y' for integer variables; variables are free unless you bound them)";

const MAX_VARS: usize = 30;
const MAX_CONSTRAINTS: usize = 60;
const MAX_NODES: u64 = 20_000;
/// Wall-clock limit inside the solver: it checks it between pivots and stops cleanly.
pub const SOLVER_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);
const MAX_COEFF: f64 = 1e12;
/// Largest denominator tried when turning the solver's floats back into fractions.
const MAX_DENOMINATOR: i64 = 1_000_000;

/// A linear form: coefficients by variable, and a constant.
#[derive(Debug, Clone, Default, PartialEq)]
struct Linear {
    coeffs: BTreeMap<String, BigRational>,
    constant: BigRational,
}

impl Linear {
    fn constant(q: BigRational) -> Linear {
        Linear { coeffs: BTreeMap::new(), constant: q }
    }

    fn scale(mut self, k: &BigRational) -> Linear {
        for c in self.coeffs.values_mut() {
            *c *= k;
        }
        self.constant *= k;
        self.coeffs.retain(|_, c| !c.is_zero());
        self
    }

    fn add(mut self, other: Linear, sign: i64) -> Linear {
        let s = int(sign);
        for (v, c) in other.coeffs {
            *self.coeffs.entry(v).or_insert_with(BigRational::zero) += c * &s;
        }
        self.constant += other.constant * s;
        self.coeffs.retain(|_, c| !c.is_zero());
        self
    }

    fn is_constant(&self) -> bool {
        self.coeffs.is_empty()
    }

    fn eval(&self, values: &BTreeMap<String, BigRational>) -> BigRational {
        self.coeffs
            .iter()
            .fold(self.constant.clone(), |acc, (v, c)| acc + c * values.get(v).cloned().unwrap_or_default())
    }
}

fn linear(node: &Node) -> Result<Linear, String> {
    match node {
        Node::Num(q) => Ok(Linear::constant(q.clone())),
        Node::Var(v) if v == "pi" || v == "e" => Err(format!("'{v}' is not a rational coefficient")),
        Node::Var(v) => {
            Ok(Linear { coeffs: BTreeMap::from([(v.clone(), BigRational::one())]), constant: BigRational::zero() })
        }
        Node::Neg(x) => Ok(linear(x)?.scale(&int(-1))),
        Node::Sum(terms) => {
            let mut acc = Linear::default();
            for (minus, t) in terms {
                acc = acc.add(linear(t)?, if *minus { -1 } else { 1 });
            }
            Ok(acc)
        }
        Node::Product(factors) => {
            let mut acc = Linear::constant(BigRational::one());
            for (divide, f) in factors {
                let f = linear(f)?;
                if *divide {
                    if !f.is_constant() || f.constant.is_zero() {
                        return Err("only division by a non-zero number is linear".into());
                    }
                    acc = acc.scale(&f.constant.recip());
                } else if f.is_constant() {
                    acc = acc.scale(&f.constant);
                } else if acc.is_constant() {
                    let k = acc.constant.clone();
                    acc = f.scale(&k);
                } else {
                    return Err("a product of two variables is not linear".into());
                }
            }
            Ok(acc)
        }
        other => exact_value(other).map(Linear::constant).ok_or_else(|| {
            "only sums of numbers times variables are linear (no powers, roots or functions of variables)".into()
        }),
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    Le,
    Ge,
    Eq,
}

/// Split `a <= b >= c` into expressions and the comparisons between them.
fn split_comparisons(text: &str) -> (Vec<String>, Vec<Cmp>) {
    let mut parts = vec![String::new()];
    let mut cmps = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let (cmp, len) = match (two.as_str(), chars[i]) {
            ("<=", _) | ("=<", _) => (Some(Cmp::Le), 2),
            (">=", _) | ("=>", _) => (Some(Cmp::Ge), 2),
            ("==", _) => (Some(Cmp::Eq), 2),
            (_, '≤') | (_, '<') => (Some(Cmp::Le), 1),
            (_, '≥') | (_, '>') => (Some(Cmp::Ge), 1),
            (_, '=') => (Some(Cmp::Eq), 1),
            _ => (None, 1),
        };
        match cmp {
            Some(c) => {
                cmps.push(c);
                parts.push(String::new());
            }
            None => parts.last_mut().expect("parts is never empty").push(chars[i]),
        }
        i += len;
    }
    (parts, cmps)
}

/// A constraint `lhs cmp 0`.
struct Constraint {
    lhs: Linear,
    cmp: Cmp,
    text: String,
}

struct Program {
    maximize: bool,
    objective: Linear,
    constraints: Vec<Constraint>,
    integer: Vec<String>,
}

fn find_word(lower: &str, words: &[&str]) -> Option<(usize, usize)> {
    for w in words {
        let mut from = 0;
        while let Some(i) = lower[from..].find(w) {
            let at = from + i;
            let before_ok = at == 0 || !lower[..at].chars().next_back().is_some_and(char::is_alphanumeric);
            let end = at + w.len();
            let after_ok = end >= lower.len() || !lower[end..].chars().next().is_some_and(char::is_alphanumeric);
            if before_ok && after_ok {
                return Some((at, end));
            }
            from = end;
        }
    }
    None
}

fn read_program(text: &str) -> Result<Program, String> {
    let lower = text.to_lowercase();
    let lower = lower.trim();
    let (maximize, rest) = if let Some(r) = lower.strip_prefix("maximize").or(lower.strip_prefix("maximise")) {
        (true, r)
    } else if let Some(r) = lower.strip_prefix("minimize").or(lower.strip_prefix("minimise")) {
        (false, r)
    } else if let Some(r) = lower.strip_prefix("max") {
        (true, r)
    } else if let Some(r) = lower.strip_prefix("min") {
        (false, r)
    } else {
        return Err("start with 'maximize' or 'minimize'".into());
    };
    let (objective_text, body) = match find_word(rest, &["subject to", "s.t.", "st", "such that", "where"]) {
        Some((a, b)) => (&rest[..a], &rest[b..]),
        None => (rest, ""),
    };
    let objective_text = objective_text.trim().trim_end_matches([',', ';', ':']).trim();
    // `z = 3x + 2y` names the objective; the name is dropped.
    let objective_text = match objective_text.split_once('=') {
        Some((name, expr)) if name.trim().chars().all(char::is_alphanumeric) => expr,
        _ => objective_text,
    };
    let objective = linear(&parse(objective_text).map_err(|e| format!("the objective: {e}"))?)
        .map_err(|e| format!("the objective is not linear: {e}"))?;

    let mut constraints = Vec::new();
    let mut integer = Vec::new();
    let pieces: Vec<&str> = body.split([';', '\n']).collect();
    for piece in pieces {
        let piece = piece.trim().trim_end_matches('.').trim();
        if piece.is_empty() {
            continue;
        }
        if let Some((_, end)) = find_word(piece, &["integers", "integer", "int", "general"]).filter(|(a, _)| *a == 0) {
            for name in piece[end..].split([',', ' ']).map(str::trim).filter(|s| !s.is_empty()) {
                if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    return Err(format!("'{name}' in the integer list is not a variable name"));
                }
                integer.push(name.to_string());
            }
            continue;
        }
        // `x >= 0, y >= 0` on one line: a comma separates constraints outside parentheses.
        for one in split_top_level_commas(piece) {
            let one = one.trim();
            if one.is_empty() {
                continue;
            }
            let (parts, cmps) = split_comparisons(one);
            if cmps.is_empty() {
                return Err(format!("the constraint '{}' has no <=, >= or =", clip(one)));
            }
            let mut forms = Vec::new();
            for p in &parts {
                let node = parse(p.trim()).map_err(|e| format!("in '{}': {e}", clip(one)))?;
                forms.push(linear(&node).map_err(|e| format!("'{}' is not linear: {e}", clip(one)))?);
            }
            for (i, cmp) in cmps.iter().enumerate() {
                let lhs = forms[i].clone().add(forms[i + 1].clone(), -1);
                constraints.push(Constraint { lhs, cmp: *cmp, text: one.to_string() });
            }
        }
    }
    if constraints.len() > MAX_CONSTRAINTS {
        return Err(format!("at most {MAX_CONSTRAINTS} constraints are supported"));
    }
    Ok(Program { maximize, objective, constraints, integer })
}

fn split_top_level_commas(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().expect("never empty").push(c);
    }
    out
}

fn to_f64(q: &BigRational) -> Result<f64, String> {
    let f = q.to_f64().unwrap_or(f64::NAN);
    if !f.is_finite() || f.abs() > MAX_COEFF || (f != 0.0 && f.abs() < 1.0 / MAX_COEFF) {
        return Err(format!("the coefficient {q} is outside the solver's range (1e-12 to 1e12)"));
    }
    Ok(f)
}

/// The closest fraction to `x` with a denominator ≤ [`MAX_DENOMINATOR`] (continued fractions).
fn rationalise(x: f64) -> Option<BigRational> {
    if !x.is_finite() || x.abs() > 1e15 {
        return None;
    }
    let (mut h0, mut h1, mut k0, mut k1) = (0i128, 1i128, 1i128, 0i128);
    let mut r = x;
    for _ in 0..40 {
        let a = r.floor();
        let ai = a as i128;
        let (h2, k2) = (ai * h1 + h0, ai * k1 + k0);
        if k2 > MAX_DENOMINATOR as i128 {
            break;
        }
        (h0, h1, k0, k1) = (h1, h2, k1, k2);
        let frac = r - a;
        if frac.abs() < 1e-12 || ((h1 as f64 / k1 as f64) - x).abs() < 1e-12 * x.abs().max(1.0) {
            break;
        }
        r = 1.0 / frac;
    }
    (k1 != 0).then(|| BigRational::new(BigInt::from(h1), BigInt::from(k1)))
}

/// Solve an LP/MILP: the result line, or what to write instead.
pub fn lp(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("There is no program to solve: {USAGE}."));
    }
    if text.chars().count() > super::parse::MAX_INPUT_CHARS {
        return Err(format!("The program is longer than {} characters.", super::parse::MAX_INPUT_CHARS));
    }
    let program = read_program(text).map_err(|e| format!("Could not read the program: {e}. {USAGE}."))?;
    solve(&program).map_err(|e| format!("Could not solve the program: {e}."))
}

fn solve(program: &Program) -> Result<String, String> {
    let names = variable_names(program)?;
    // A constraint without variables is true or false by itself.
    for c in program.constraints.iter().filter(|c| c.lhs.is_constant()) {
        if !holds(&c.lhs.constant, c.cmp) {
            return Ok(format!("infeasible: the constraint '{}' can never hold", c.text));
        }
    }
    // The relaxation first: it decides infeasible / unbounded without integer bounds.
    let (relaxed, _) = build(program, &names, false)?;
    match run(&relaxed)? {
        Run::Infeasible => return Ok("infeasible: no point satisfies all the constraints".into()),
        Run::Unbounded => {
            return Ok(format!(
                "unbounded: the objective can be made arbitrarily {} (did you forget bounds such as x >= 0?)",
                if program.maximize { "large" } else { "small" }
            ))
        }
        Run::Stopped(reason) => return Err(stopped(reason)),
        Run::Solved { .. } => {}
    }
    let (problem, vars) = build(program, &names, !program.integer.is_empty())?;
    let (values, unproven) = match run(&problem)? {
        Run::Infeasible => return Ok("infeasible: no integer point satisfies all the constraints".into()),
        Run::Unbounded => return Ok("unbounded".into()),
        Run::Stopped(reason) => return Err(stopped(reason)),
        Run::Solved { values, unproven } => (values, unproven),
    };
    let floats: Vec<f64> =
        vars.iter().map(|v| values[v.pos.idx()] - v.neg.map_or(0.0, |neg| values[neg.idx()])).collect();
    let note = match unproven {
        None => "",
        Some(TerminationReason::TimeLimit) => " (time limit reached: best found, not proven optimal)",
        Some(_) => " (node budget reached: best found, not proven optimal)",
    };
    Ok(answer(program, &names, &floats, note))
}

/// The variables in order of first appearance (objective, then constraints), checked.
fn variable_names(program: &Program) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = program.objective.coeffs.keys().cloned().collect();
    for c in &program.constraints {
        for v in c.lhs.coeffs.keys() {
            if !names.contains(v) {
                names.push(v.clone());
            }
        }
    }
    for v in &program.integer {
        if !names.contains(v) {
            return Err(format!("the integer variable '{v}' does not appear in the objective or the constraints"));
        }
    }
    if names.is_empty() {
        return Err("the program has no variables".into());
    }
    if names.len() > MAX_VARS {
        return Err(format!("at most {MAX_VARS} variables are supported (got {})", names.len()));
    }
    Ok(names)
}

/// Whether `value cmp 0` holds.
fn holds(value: &BigRational, cmp: Cmp) -> bool {
    match cmp {
        Cmp::Le => !value.is_positive(),
        Cmp::Ge => !value.is_negative(),
        Cmp::Eq => value.is_zero(),
    }
}

/// The program for the solver, with each continuous variable split in two non-negative
/// parts (see the module docs: never a free variable); integer variables only if `integer`.
fn build(program: &Program, names: &[String], integer: bool) -> Result<(Problem, Vec<Split>), String> {
    let direction = if program.maximize { OptimizationDirection::Maximize } else { OptimizationDirection::Minimize };
    let mut problem = Problem::new(direction);
    let mut vars = Vec::new();
    for name in names {
        let c = program.objective.coeffs.get(name).map(to_f64).transpose()?.unwrap_or(0.0);
        let split = if integer && program.integer.contains(name) {
            // Integers keep one variable with finite bounds: split in two, branch and bound
            // would wander along pos = neg + k, where neither part is bounded.
            Split { pos: problem.add_integer_var(c, (i32::MIN, i32::MAX)), neg: None }
        } else {
            let pos = problem.add_var(c, (0.0, f64::INFINITY));
            Split { pos, neg: Some(problem.add_var(-c, (0.0, f64::INFINITY))) }
        };
        vars.push(split);
    }
    for c in program.constraints.iter().filter(|c| !c.lhs.is_constant()) {
        let mut terms = Vec::new();
        for (v, k) in &c.lhs.coeffs {
            let i = names.iter().position(|n| n == v).ok_or("internal: unknown variable")?;
            let k = to_f64(k)?;
            terms.push((vars[i].pos, k));
            if let Some(neg) = vars[i].neg {
                terms.push((neg, -k));
            }
        }
        let rhs = if c.lhs.constant.is_zero() { 0.0 } else { -to_f64(&c.lhs.constant)? };
        let op = match c.cmp {
            Cmp::Le => ComparisonOp::Le,
            Cmp::Ge => ComparisonOp::Ge,
            Cmp::Eq => ComparisonOp::Eq,
        };
        problem.add_constraint(terms.as_slice(), op, rhs);
    }
    Ok((problem, vars))
}

/// The result line for the solver's point: exact when every value rationalises to an
/// exactly feasible point, else the floats, labelled so.
fn answer(program: &Program, names: &[String], floats: &[f64], note: &str) -> String {
    let exact: Option<BTreeMap<String, BigRational>> = names
        .iter()
        .zip(floats)
        .map(|(n, f)| {
            let q = rationalise(*f)?;
            if program.integer.contains(n) && !q.is_integer() {
                return None;
            }
            Some((n.clone(), q))
        })
        .collect();
    let exact = exact.filter(|vals| program.constraints.iter().all(|c| holds(&c.lhs.eval(vals), c.cmp)));
    let word = if program.maximize { "maximum" } else { "minimum" };
    match exact {
        Some(vals) => {
            let value = program.objective.eval(&vals);
            let assignments: Vec<String> = names.iter().map(|n| format!("{n} = {}", show_q(&vals[n]))).collect();
            format!("optimal: {word} = {} at {}{note}", show_q(&value), assignments.join(", "))
        }
        None => {
            let value = program.objective.constant.to_f64().unwrap_or(0.0)
                + names
                    .iter()
                    .zip(floats)
                    .map(|(n, f)| program.objective.coeffs.get(n).and_then(ToPrimitive::to_f64).unwrap_or(0.0) * f)
                    .sum::<f64>();
            let assignments: Vec<String> = names.iter().zip(floats).map(|(n, f)| format!("{n} ≈ {f:.9}")).collect();
            format!(
                "optimal (floating point, no exact fraction found): {word} ≈ {value:.9} at {}{note}",
                assignments.join(", ")
            )
        }
    }
}

fn show_q(q: &BigRational) -> String {
    if q.is_integer() {
        q.to_string()
    } else {
        format!("{q} (≈ {})", decimal_sig(q, 10, false))
    }
}

/// One variable of the program as the solver sees it: `pos - neg`, both non-negative; an
/// integer variable is `pos` alone, within ±2^31.
#[derive(Debug, Clone, Copy)]
struct Split {
    pos: microlp::Variable,
    neg: Option<microlp::Variable>,
}

enum Run {
    Infeasible,
    Unbounded,
    /// A limit stopped the solver before it had a usable point.
    Stopped(TerminationReason),
    /// `unproven` is None for a proven optimum, else the limit that stopped the search.
    Solved {
        values: Vec<f64>,
        unproven: Option<TerminationReason>,
    },
}

/// What to say when a limit stopped the solver with nothing to show.
fn stopped(reason: TerminationReason) -> String {
    match reason {
        TerminationReason::TimeLimit => format!(
            "the solver did not finish within {} s; give a smaller program or tighter bounds",
            SOLVER_TIME_LIMIT.as_secs()
        ),
        _ => format!(
            "the search stopped after {MAX_NODES} branch-and-bound nodes without a feasible integer point; \
             give tighter bounds"
        ),
    }
}

fn run(problem: &Problem) -> Result<Run, String> {
    let mut options = SolveOptions::default();
    options.node_limit = Some(MAX_NODES);
    options.time_limit = Some(SOLVER_TIME_LIMIT);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| problem.solve_with(options)))
        .map_err(|_| "the LP solver failed on this input (numerical trouble); rescale the coefficients".to_string())?;
    match outcome {
        Err(microlp::Error::Infeasible) => Ok(Run::Infeasible),
        Err(microlp::Error::Unbounded) => Ok(Run::Unbounded),
        Err(other) => Err(format!("the LP solver failed: {other}")),
        Ok(SolveOutcome::Interrupted(stop)) => Ok(Run::Stopped(stop.termination_reason())),
        Ok(SolveOutcome::Solution(solution)) => {
            let unproven = (solution.status() != SolutionStatus::Optimal).then(|| solution.termination_reason());
            let values = solution.iter().map(|(_, v)| v).collect();
            Ok(Run::Solved { values, unproven })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_lp_is_exact() {
        let s = lp("maximize 3x + 2y subject to x + y <= 4; x + 3y <= 6; x >= 0; y >= 0").unwrap();
        assert_eq!(s, "optimal: maximum = 12 at x = 4, y = 0");
        let s = lp("maximize x + y s.t. 2x + y <= 4, x + 2y <= 4, x >= 0, y >= 0").unwrap();
        assert_eq!(s, "optimal: maximum = 8/3 (≈ 2.666666667) at x = 4/3 (≈ 1.333333333), y = 4/3 (≈ 1.333333333)");
        let s = lp("minimize z = 2a + 3b subject to a + b >= 10; a <= 4; a >= 0; b >= 0").unwrap();
        assert_eq!(s, "optimal: minimum = 26 at a = 4, b = 6");
        let s = lp("max x subject to 0 <= x <= 7/2").unwrap();
        assert_eq!(s, "optimal: maximum = 7/2 (≈ 3.5) at x = 7/2 (≈ 3.5)");
    }

    #[test]
    fn integer_programs() {
        let relaxed = lp("maximize x + y subject to 2x + 2y <= 5; x >= 0; y >= 0").unwrap();
        assert!(relaxed.starts_with("optimal: maximum = 5/2"), "{relaxed}");
        let s = lp("maximize x + y subject to 2x + 2y <= 5; x >= 0; y >= 0; integer x, y").unwrap();
        assert!(s.starts_with("optimal: maximum = 2 at"), "{s}");
    }

    #[test]
    fn infeasible_and_unbounded() {
        assert!(lp("maximize x subject to x <= 1; x >= 2").unwrap().starts_with("infeasible"));
        assert!(lp("maximize x + y subject to x >= 0; y >= 0").unwrap().starts_with("unbounded"));
        assert!(lp("maximize x subject to x <= 1; 1 >= 2").unwrap().contains("can never hold"));
    }

    #[test]
    fn bad_programs_say_what_to_write() {
        assert!(lp("").unwrap_err().contains("e.g. lp[maximize"));
        assert!(lp("optimise x").unwrap_err().contains("'maximize' or 'minimize'"));
        assert!(lp("maximize x*y subject to x <= 1").unwrap_err().contains("not linear"));
        assert!(lp("maximize x subject to x^2 <= 1").unwrap_err().contains("not linear"));
        assert!(lp("maximize x subject to x + 1").unwrap_err().contains("no <=, >= or ="));
        assert!(lp("maximize x subject to x <= 1; integer y").unwrap_err().contains("'y'"));
        assert!(lp("maximize 1e20 x subject to x <= 1").unwrap_err().contains("range"));
        let many: Vec<String> = (0..40).map(|i| format!("v{i} >= 0")).collect();
        let text = format!("maximize v0 subject to {}", many.join("; "));
        assert!(lp(&text).unwrap_err().contains("at most 30 variables"));
    }

    #[test]
    fn rationalise_finds_small_fractions() {
        assert_eq!(rationalise(4.0 / 3.0), Some(BigRational::new(4.into(), 3.into())));
        assert_eq!(rationalise(-2.5), Some(BigRational::new((-5).into(), 2.into())));
        assert_eq!(rationalise(0.0), Some(BigRational::zero()));
    }
}
