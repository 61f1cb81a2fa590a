use futures::executor::block_on;
use proptest::prelude::*;

use super::*;
use crate::tools::{ToolCall, ToolState};

fn run(action: &str) -> Observation {
    let call = ToolCall::parse(action).expect("a well-formed action");
    block_on(registry().call(&call, &mut ToolState::default()))
}

#[test]
fn the_registry_offers_every_math_tool_and_finish() {
    let r = registry();
    assert_eq!(r.names(), ["calc", "algebra", "lp", "count", "finish"]);
    // The format reminder's example names these tools, as the prompt lists them.
    let examples = r.call_examples();
    for spec in r.specs() {
        assert!(examples.contains(&format!("{}[{}]", spec.name, spec.arg_name().unwrap())), "{examples}");
    }
    assert!(examples.ends_with(" or finish[answer]") && !examples.contains("Search"), "{examples}");
    assert!(r.is_finish(&ToolCall::new("finish", "42")));
    for spec in r.specs() {
        assert_eq!(spec.args["type"], "object");
        assert!(spec.arg_name().is_some(), "{} takes one string argument", spec.name);
        assert!(spec.description.len() < 300, "{} has a short description", spec.name);
    }
    let lines = r.prompt_lines();
    assert!(lines.contains("(1) calc[expression]: ") && lines.contains("(5) finish[answer]: "), "{lines}");
}

#[test]
fn tools_run_through_the_registry_in_text_and_native_form() {
    let calc = run("calc[sqrt(8/18)]");
    assert!(calc.ok && calc.text.starts_with("2/3"), "{calc:?}");
    let algebra = run("Algebra[factor x^2 - 1]");
    assert_eq!((algebra.text.as_str(), algebra.ok), ("(x + 1)*(x - 1)", true));
    let count = run("count[catalan 5]");
    assert_eq!(count.text, "Catalan(5) = 42");
    let lp = run("lp[maximize x subject to x <= 3]");
    assert_eq!(lp.text, "optimal: maximum = 3 at x = 3");
    // Native tool calls carry the argument as JSON.
    let spec = CalcTool.spec();
    let call = spec.call_from_input(&serde_json::json!({"expression": "2^10"}));
    let obs = block_on(registry().call(&call, &mut ToolState::default()));
    assert_eq!((obs.text.as_str(), obs.ok), ("1024", true));
}

#[test]
fn failures_are_observations_never_errors() {
    let bad = run("calc[2 +]");
    assert!(!bad.ok && bad.text.contains("e.g. calc["), "{bad:?}");
    let bad = run("count[fibonacci 3]");
    assert!(!bad.ok);
    let too_long = run("algebra[expand (x + y + z)^50]");
    assert!(
        !too_long.ok && too_long.text.contains("too long to show"),
        "{}",
        &too_long.text[..100.min(too_long.text.len())]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No argument, however malformed, makes a math tool panic.
    #[test]
    fn argument_parsers_never_panic(arg in "\\PC{0,80}") {
        let _ = calc::calc(&arg);
        let _ = algebra::algebra(&arg);
        let _ = lp::lp(&arg);
        let _ = count::count(&arg);
    }

    /// The same with inputs built from the tools' own vocabulary, which reach deeper code.
    #[test]
    fn near_miss_arguments_never_panic(
        words in proptest::collection::vec(proptest::sample::select(vec![
            "x", "y", "2", "0", "-", "+", "*", "/", "^", "(", ")", "=", ";", "<=", ">=", "!", "sqrt(", ",",
            "1/2", "10", "pi", "for", "wrt", "subject to", "integer", "mod", "gcd(", "C(", "e",
        ]), 0..24),
        head in proptest::sample::select(vec![
            "", "solve ", "factor ", "simplify ", "expand ", "diff ", "maximize ", "minimize ", "binomial ",
            "partitions ", "stirling2 ",
        ]),
    ) {
        let arg = format!("{head}{}", words.join(" "));
        let _ = calc::calc(&arg);
        let _ = algebra::algebra(&arg);
        let _ = lp::lp(&arg);
        let _ = count::count(&arg);
    }
}
