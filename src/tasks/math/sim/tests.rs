//! The simulated model on the math demo sets, request by request, with the contexts the
//! tasks and the Self-Refine / Reflexion methods send (see the shared contract in
//! `tasks::math`): rates measured over many seeds.

use serde_json::{json, Value};

use super::*;
use crate::engine::sim::{SimConfig, Simulator};
use crate::protocol::{LlmRequest, Message, Purpose};
use crate::tasks::math::demo::{DemoProblem, MistakeKind, PROBLEMS};
use crate::tasks::SimPlayers;

fn request(purpose: Purpose, context: Value) -> LlmRequest {
    LlmRequest {
        purpose,
        // The messages differ with the context, as real prompts do (the seed mixes them in).
        messages: vec![Message::user(context.to_string())],
        n: 1,
        temperature: 0.7,
        max_tokens: None,
        stop: vec![],
        context,
        nonce: 0,
        tools: vec![],
        sampling: Default::default(),
    }
}

fn reply(seed: u64, req: &LlmRequest) -> String {
    let sim = Simulator::new(SimConfig { seed, ..SimConfig::default() }, &SimPlayers);
    sim.answer(req).unwrap().completions[0].text.to_string()
}

fn cot_context(p: &DemoProblem) -> Value {
    json!({"task": "math-demo", "problem": p.problem})
}

fn with(mut base: Value, key: &str, value: Value) -> Value {
    base.as_object_mut().unwrap().insert(key.into(), value);
    base
}

fn script(p: &DemoProblem) -> Script {
    Script::find("math-demo", p.problem).unwrap()
}

/// The attempt a mistake of `kind` gives on `p` (the cot text), if `p` lists one.
fn attempt_with(p: &DemoProblem, kind: MistakeKind) -> Option<String> {
    let m = p.mistakes.iter().find(|m| m.kind == kind)?;
    Some(script(p).lines(Some(m)).join("\n"))
}

fn is_right(p: &DemoProblem, text: &str) -> bool {
    matches!(script(p).judge(text), Verdict::Right)
}

#[test]
fn chains_of_thought_go_wrong_at_a_realistic_rate_and_replies_depend_only_on_seed_and_request() {
    let mut wrong = 0;
    let mut total = 0;
    for seed in 0..20 {
        for p in PROBLEMS {
            let req = request(Purpose::Cot, cot_context(p));
            let text = reply(seed, &req);
            assert_eq!(text, reply(seed, &req), "the same request, the same reply");
            assert!(text.contains("\\boxed{"), "{text}");
            total += 1;
            wrong += !is_right(p, &text) as usize;
        }
    }
    let rate = wrong as f64 / total as f64;
    assert!((0.3..=0.5).contains(&rate), "cot wrong {rate}");
    // At noise 0 the model is perfect.
    let perfect = Simulator::new(SimConfig { noise: 0.0, ..SimConfig::default() }, &SimPlayers);
    for p in PROBLEMS {
        let text = perfect.answer(&request(Purpose::Cot, cot_context(p))).unwrap().completions[0].text.clone();
        assert!(is_right(p, &text), "{text}");
    }
}

#[test]
fn a_problem_it_does_not_know_is_a_clear_error() {
    let sim = Simulator::new(SimConfig::default(), &SimPlayers);
    let err =
        sim.answer(&request(Purpose::Cot, json!({"task": "math-demo", "problem": "What is 1 + 1?"}))).unwrap_err();
    assert!(err.message.contains("not among them"), "{}", err.message);
    let p = &PROBLEMS[0];
    let err = sim.answer(&request(Purpose::Value, cot_context(p))).unwrap_err();
    assert!(err.message.contains("no value requests"), "{}", err.message);
}

#[test]
fn self_checks_catch_arithmetic_and_sign_often_and_wrong_formulas_rarely() {
    let catch_rate = |kind: MistakeKind| {
        let (mut caught, mut total) = (0, 0);
        for p in PROBLEMS {
            let Some(attempt) = attempt_with(p, kind) else { continue };
            for seed in 0..30 {
                let text = reply(seed, &request(Purpose::Feedback, with(cot_context(p), "attempt", json!(attempt))));
                total += 1;
                if text.ends_with("VERDICT: incorrect") {
                    caught += 1;
                    assert!(text.contains(kind.label()), "feedback names the kind: {text}");
                }
            }
        }
        caught as f64 / total as f64
    };
    let arithmetic = catch_rate(MistakeKind::Arithmetic);
    let sign = catch_rate(MistakeKind::Sign);
    let missed = catch_rate(MistakeKind::MissedCase);
    let formula = catch_rate(MistakeKind::WrongFormula);
    assert!(arithmetic > 0.7 && sign > 0.6, "{arithmetic} {sign}");
    assert!((0.25..0.65).contains(&missed), "{missed}");
    assert!(formula < 0.3, "{formula}");
    // A right attempt is sometimes called wrong, mostly not.
    let (mut alarms, mut total) = (0, 0);
    for p in PROBLEMS {
        let right = script(p).lines(None).join("\n");
        for seed in 0..10 {
            let text = reply(seed, &request(Purpose::Feedback, with(cot_context(p), "attempt", json!(right))));
            total += 1;
            alarms += text.ends_with("VERDICT: incorrect") as usize;
        }
    }
    let rate = alarms as f64 / total as f64;
    assert!(rate > 0.0 && rate < 0.25, "false alarms {rate}");
}

#[test]
fn refine_fixes_a_named_mistake_and_reflections_steer_later_trials() {
    let (mut fixed, mut total) = (0, 0);
    for p in PROBLEMS {
        let Some(attempt) = attempt_with(p, MistakeKind::Sign) else { continue };
        let feedback = "Step 2 is wrong: this is a sign error.\nVERDICT: incorrect";
        for seed in 0..10 {
            let ctx = with(with(cot_context(p), "attempt", json!(attempt)), "feedback", json!(feedback));
            let text = reply(seed, &request(Purpose::Refine, ctx));
            assert!(text.contains("\\boxed{"), "a complete attempt: {text}");
            total += 1;
            fixed += is_right(p, &text) as usize;
        }
    }
    assert!(fixed as f64 / total as f64 > 0.8, "{fixed}/{total}");
    // Feedback that says it is correct leaves the attempt as it was.
    let p = PROBLEMS.iter().find(|p| attempt_with(p, MistakeKind::WrongFormula).is_some()).unwrap();
    let attempt = attempt_with(p, MistakeKind::WrongFormula).unwrap();
    let ctx = with(with(cot_context(p), "attempt", json!(attempt)), "feedback", json!("Looks fine.\nVERDICT: correct"));
    assert!(!is_right(p, &reply(1, &request(Purpose::Refine, ctx))));

    // A reflection names the kind the feedback found ...
    let ctx = with(
        with(cot_context(p), "attempt", json!(attempt)),
        "feedback",
        json!("It uses the wrong formula.\nVERDICT: incorrect"),
    );
    let reflection = reply(3, &request(Purpose::Reflect, ctx));
    assert!(MistakeKind::named_in(&reflection).contains(&MistakeKind::WrongFormula), "{reflection}");
    // ... and trials that carry it avoid that kind.
    let formula_problems: Vec<&DemoProblem> =
        PROBLEMS.iter().filter(|p| p.mistakes.iter().all(|m| m.kind == MistakeKind::WrongFormula)).collect();
    let count_formula = |reflections: Option<&str>| {
        let mut n = 0;
        for p in PROBLEMS {
            for seed in 0..20 {
                let ctx = match reflections {
                    Some(r) => with(cot_context(p), "reflections", json!([r])),
                    None => cot_context(p),
                };
                let text = reply(seed, &request(Purpose::Cot, ctx));
                n +=
                    matches!(script(p).judge(&text), Verdict::Wrong(m) if m.kind == MistakeKind::WrongFormula) as usize;
            }
        }
        n
    };
    let before = count_formula(None);
    let after = count_formula(Some(&reflection));
    assert!(
        after * 4 < before,
        "reflections on a wrong formula: {before} -> {after} ({} such problems)",
        formula_problems.len()
    );
}

#[test]
fn react_uses_the_offered_calculator_and_then_makes_no_slips() {
    for tool in ["calc", "calculate"] {
        for p in PROBLEMS {
            let calc = p.calc.unwrap();
            let ctx = json!({"task": "math-demo", "problem": p.problem, "step": 1, "trajectory": "", "tools": [tool, "finish"]});
            let text = reply(0, &request(Purpose::Act, ctx));
            assert!(text.ends_with(&format!("Action 1: {tool}[{}]", calc.expr)), "{text}");
        }
    }
    // After the calculator's observation, a problem whose only mistakes are slips is always right.
    let slips_only: Vec<&DemoProblem> =
        PROBLEMS.iter().filter(|p| p.mistakes.iter().all(|m| m.kind == MistakeKind::Arithmetic)).collect();
    assert!(slips_only.len() >= 2);
    for p in slips_only {
        let calc = p.calc.unwrap();
        let trajectory = format!("Thought 1: compute.\nAction 1: Calc[{}]\nObservation 1: {}\n", calc.expr, calc.value);
        for seed in 0..20 {
            let ctx = json!({"task": "math-demo", "problem": p.problem, "step": 2, "trajectory": trajectory, "tools": ["calc", "finish"]});
            let text = reply(seed, &request(Purpose::Act, ctx));
            assert!(text.ends_with(&format!("Action 2: finish[{}]", p.answer)), "{text}");
        }
    }
    // Without a calculator it answers in one step, slips and all.
    let p = &PROBLEMS[0];
    let ctx = json!({"task": "math-demo", "problem": p.problem, "step": 1, "trajectory": "", "tools": ["finish"]});
    assert!(reply(0, &request(Purpose::Act, ctx)).contains("Action 1: finish["));
}

#[test]
fn multiple_choice_picks_distractors_with_typed_reasoning() {
    let (mut wrong, mut total) = (0, 0);
    for q in crate::tasks::math::mc_demo::QUESTIONS {
        for seed in 0..20 {
            let text = reply(seed, &request(Purpose::Cot, json!({"task": "mc-demo", "problem": q.input()})));
            let letter = crate::tasks::math::answer::choice_letter(&text, q.options.len()).unwrap();
            total += 1;
            if letter.to_string() != q.gold() {
                wrong += 1;
                let m = q.mistakes.iter().find(|m| m.answer == letter.to_string()).expect("a listed distractor");
                assert!(text.contains(m.text), "{text}");
            }
        }
    }
    let rate = wrong as f64 / total as f64;
    assert!((0.25..0.5).contains(&rate), "{rate}");
}

#[test]
fn a_calculator_observation_holds_a_value_however_it_is_written() {
    assert!(holds_value("2/3 (≈ 0.666667)", "2/3"));
    assert!(holds_value("= 4.8", "24/5"));
    assert!(holds_value("2^10 - 1 = 1023", "1023"));
    assert!(holds_value("-7", "-7"));
    assert!(!holds_value("-7", "7"));
    assert!(!holds_value("17", "7"));
    assert!(!holds_value("There is no tool named 'calc'.", "7"));
}

/// The task's prompts and ReTreVal's are read by the typed context; a context of the
/// wrong shape is an error naming the field, never a silent default.
#[test]
fn a_context_of_the_wrong_shape_is_an_error_naming_the_field() {
    use crate::engine::Task;
    assert_eq!(crate::engine::methods::retreval::CONTEXT_KEY, "retreval", "the typed field's name");
    let items = crate::tasks::math::demo::items();
    let task = crate::tasks::math::MathTask::new(crate::tasks::math::MathKind::MathDemo, None, items).unwrap();
    let p = &PROBLEMS[0];
    let cot = LlmRequest::from_prompt(task.cot_prompt(p.problem), 1, 0.7);
    let ctx = Context::of(&cot).unwrap();
    assert_eq!((ctx.task.as_str(), ctx.problem.as_str(), ctx.retreval.as_deref()), ("math-demo", p.problem, None));
    let sim = Simulator::new(SimConfig::default(), &SimPlayers);
    for (purpose, bad, says) in [
        (Purpose::Cot, with(cot_context(p), "reflections", json!("x")), "field \"reflections\": invalid type: string"),
        (Purpose::Act, with(cot_context(p), "step", json!("2")), "field \"step\": invalid type: string \"2\""),
        (Purpose::Act, with(cot_context(p), "tools", json!([1])), "field \"tools\": invalid type: integer `1`"),
        (
            Purpose::Cot,
            with(with(cot_context(p), "retreval", json!("compose")), "subtasks", json!([{"result": 3}])),
            "field \"subtasks\": invalid type: integer `3`",
        ),
        (Purpose::Cot, with(cot_context(p), "retreval", json!(1)), "field \"retreval\": invalid type: integer `1`"),
    ] {
        let err = sim.answer(&request(purpose, bad)).unwrap_err();
        assert!(err.message.starts_with(&format!("math request context: {says}")), "{}", err.message);
    }
}
