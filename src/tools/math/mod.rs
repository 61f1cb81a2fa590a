//! Math tools for ReAct and ReTreVal on the math tasks, each taking one string argument:
//!
//! * `calc[...]` — exact big-rational arithmetic, exact roots, integer functions; irrational
//!   results as labelled 30-digit decimals ([`calc`]);
//! * `algebra[...]` — simplify, expand, factor, solve, diff over rational polynomials ([`algebra`]);
//! * `lp[...]` — linear and integer programs through `microlp` ([`lp`]);
//! * `count[...]` — combinatorics on exact integers ([`count`]);
//! * `finish[...]`.
//!
//! A tool never fails a run: bad arguments and too-large requests come back as
//! `Observation::fail` with one line saying what to write instead. Every tool is bounded by
//! input size, result size and deterministic step budgets, and computes on a thread of its
//! own that is abandoned at [`super::worker::TIME_LIMIT`] (see [`super::worker`]), so no
//! input keeps a run, or the process, waiting.

pub mod algebra;
pub mod calc;
pub mod count;
pub mod lp;
pub mod num;
pub mod parse;
pub mod poly;

use std::sync::Arc;

use super::{BoxFuture, FinishTool, Observation, Tool, ToolRegistry, ToolSpec, ToolState};

/// The math tools, with `finish`.
pub fn registry() -> Arc<ToolRegistry> {
    Arc::new(ToolRegistry::new().with(CalcTool).with(AlgebraTool).with(LpTool).with(CountTool).with(FinishTool))
}

/// Longest observation text a math tool returns (it goes into the model's prompt).
pub const MAX_OUTPUT_CHARS: usize = 4000;

fn observe(result: Result<String, String>) -> Observation {
    match result {
        Ok(text) if text.chars().count() > MAX_OUTPUT_CHARS => Observation::fail(format!(
            "The result is {} characters long, too long to show (limit {MAX_OUTPUT_CHARS}); ask for something smaller, \
             e.g. a coefficient or a value at a point.",
            text.chars().count()
        )),
        Ok(text) => Observation::ok(text),
        Err(why) => Observation::fail(why),
    }
}

/// Run a math tool's function on its own thread, within the tools' time limit.
fn compute<'a>(name: &'static str, arg: &str, tool: fn(&str) -> Result<String, String>) -> BoxFuture<'a, Observation> {
    let arg = arg.to_string();
    Box::pin(super::worker::off_thread(name, super::worker::TIME_LIMIT, move || observe(tool(&arg))))
}

/// `calc[expression]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CalcTool;

impl Tool for CalcTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single(
            "calc",
            "exact calculator over big fractions: + - * / ^, sqrt(x), root(x, n), gcd, lcm, mod, floor, ceil, abs, n!, \
             C(n, k), P(n, k), pi; irrational results come back as a labelled 30-digit decimal",
            "expression",
            "the expression, e.g. sqrt(8/18) + 3^20 / 7",
        )
    }

    fn call<'a>(&'a self, arg: &'a str, _state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        compute("calc", arg, calc::calc)
    }
}

/// `lp[program]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LpTool;

impl Tool for LpTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single(
            "lp",
            "solves a linear or integer program exactly where possible: 'maximize 3x + 2y subject to x + y <= 4; \
             x >= 0; y >= 0' (or minimize; 'integer x, y' for integer variables; variables are free unless bounded); \
             returns the optimum and the variable values, or infeasible / unbounded",
            "program",
            "the program, e.g. maximize 3x + 2y subject to x + y <= 4; x + 3y <= 6; x >= 0; y >= 0",
        )
    }

    fn call<'a>(&'a self, arg: &'a str, _state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        compute("lp", arg, lp::lp)
    }
}

/// `count[request]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountTool;

impl Tool for CountTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single(
            "count",
            "exact combinatorics: binomial n k, permutations n k, factorial n, partitions n [k], stirling2 n k, \
             catalan n, derangements n, multinomial a b c, compositions n [k]",
            "request",
            "the request, e.g. partitions 10 3",
        )
    }

    fn call<'a>(&'a self, arg: &'a str, _state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        compute("count", arg, count::count)
    }
}

/// `algebra[command]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlgebraTool;

impl Tool for AlgebraTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single(
            "algebra",
            "exact algebra on polynomials and fractions (single-letter variables, xy = x*y): simplify <expr>, \
             expand <expr>, factor <expr>, solve <equation> [for x], solve <eq1>; <eq2> [for x, y], diff <expr> [wrt x]",
            "command",
            "the command, e.g. solve x^2 - 5x + 6 = 0",
        )
    }

    fn call<'a>(&'a self, arg: &'a str, _state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        compute("algebra", arg, algebra::algebra)
    }
}

#[cfg(test)]
mod lp_tests;
#[cfg(test)]
mod tests;
