//! `calculate[expr]`: exact arithmetic over rationals (+ - * /, powers and parentheses), with the
//! shared expression evaluator of `crate::arith` in its calculator syntax.

use super::{BoxFuture, Observation, Tool, ToolSpec, ToolState};
use crate::arith::expr::eval_calc;
use crate::arith::{format_number, Q};

#[derive(Debug, Clone, Copy, Default)]
pub struct CalculateTool;

const USAGE: &str =
    "calculate takes numbers, + - * /, ** (or ^) for powers and parentheses, e.g. calculate[(3 + 5) * 2 / 7]";

/// The exact value of `expr` as text ("0.5", "7", "2/3 (≈ 0.666667)"), or why not.
pub fn calculate(expr: &str) -> Result<String, String> {
    let expr = expr.trim();
    if expr.is_empty() {
        return Err(format!("There is nothing to calculate: {USAGE}."));
    }
    let value = eval_calc(expr).map_err(|why| format!("Could not calculate '{expr}': {why}. {USAGE}."))?;
    Ok(describe(&value))
}

fn describe(value: &Q) -> String {
    let exact = format_number(value);
    if exact.contains('/') {
        let approx = *value.numer() as f64 / *value.denom() as f64;
        format!("{exact} (≈ {approx:.6})")
    } else {
        exact
    }
}

impl Tool for CalculateTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single(
            "calculate",
            "evaluates an arithmetic expression exactly (+ - * /, ** for powers, parentheses) and returns its value",
            "expression",
            "the expression, e.g. (3 + 5) * 2 / 7",
        )
    }

    fn call<'a>(&'a self, arg: &'a str, _state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        Box::pin(async move {
            match calculate(arg) {
                Ok(text) => Observation::ok(text),
                Err(why) => Observation::fail(why),
            }
        })
    }
}
