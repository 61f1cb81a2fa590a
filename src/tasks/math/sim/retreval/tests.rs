//! The simulated model on ReTreVal's prompts, built with the method's own prompt
//! builders on the real math tasks and read back with the method's own parsers; rates
//! measured over the 42 problems and many seeds.

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::engine::methods::retreval::{
    approach_prompt, complexity_prompt, compose_prompt, cross_prompt, decompose_prompt, failure_note, failure_prompt,
    local_prompt, parse_complexity, parse_cross, parse_failure, parse_local_score, parse_subtasks, parse_validation,
    subtask_problem, validation_prompt, SolvedSubtask, TypedFailure,
};
use crate::engine::sim::{SimConfig, Simulator};
use crate::engine::task::Task;
use crate::protocol::{LlmRequest, Prompt};
use crate::tasks::math::demo::{DemoProblem, PROBLEMS};
use crate::tasks::{SimPlayers, TaskSource};

fn task(name: &str) -> Arc<dyn TaskSource> {
    crate::tasks::by_name(name, None).unwrap()
}

fn ask(seed: u64, prompt: Prompt) -> String {
    ask_with(SimConfig { seed, ..SimConfig::default() }, prompt)
}

fn ask_with(cfg: SimConfig, prompt: Prompt) -> String {
    let sim = Simulator::new(cfg, &SimPlayers);
    let req = LlmRequest::from_prompt(prompt, 1, 0.7);
    match sim.answer(&req) {
        Ok(r) => r.completions[0].text.to_string(),
        Err(e) => panic!("{}", e.message),
    }
}

/// A prompt with `fields` added to its context.
fn with(mut p: Prompt, fields: Value) -> Prompt {
    if let (Some(c), Some(f)) = (p.context.as_object_mut(), fields.as_object()) {
        c.extend(f.clone());
    }
    p
}

/// A solve without tools (`--no-tools`): the task's cot prompt with the solve fields.
fn cot_solve(t: &dyn Task, x: &str, approach: Approach, lessons: &[&str]) -> Prompt {
    with(t.cot_prompt(x), json!({"retreval": "solve", "approach": approach.name(), "lessons": lessons, "history": []}))
}

/// One step of a tool-augmented solve.
fn act_solve(t: &dyn Task, x: &str, approach: Approach, trajectory: &str, step: usize) -> Prompt {
    let p = t.react().expect("a task with ReAct steps").react_prompt(x, trajectory, step);
    with(p, json!({"retreval": "solve", "approach": approach.name(), "lessons": [], "history": []}))
}

/// A whole tool-augmented solve: the calculator step with its true observation, then
/// the finish step. Returns the trajectory with both.
fn tool_solve(seed: u64, t: &dyn Task, x: &str, approach: Approach, lessons: &[&str]) -> String {
    let first = ask(seed, with(act_solve(t, x, approach, "", 1), json!({"lessons": lessons})));
    let step = crate::tasks::react_text::parse_step(&first, 1);
    let action = step.action.expect("the first step acts");
    let mut trajectory =
        format!("Thought 1: {}\nAction 1: {}[{}]\n", step.thought.unwrap_or_default(), action.name, action.arg);
    if action.name.eq_ignore_ascii_case("finish") {
        return trajectory;
    }
    let value = crate::arith::expr::eval_calc(&action.arg).map(|v| v.to_string()).unwrap_or_else(|e| e.to_string());
    trajectory.push_str(&format!("Observation 1: {value}\n"));
    let second = ask(seed, with(act_solve(t, x, approach, &trajectory, 2), json!({"lessons": lessons})));
    trajectory.push_str(&second);
    trajectory
}

fn target(p: &DemoProblem) -> Target {
    Target::resolve("math-demo", p.problem).unwrap()
}

fn mistake_of(p: &DemoProblem, trace: &str) -> Option<MistakeKind> {
    match target(p).judge(trace) {
        Verdict::Wrong(m) => Some(m.kind),
        _ => None,
    }
}

const APPROACHES: [Approach; 5] =
    [Approach::Algebraic, Approach::Casework, Approach::Geometric, Approach::Numeric, Approach::Combinatorial];

/// A lesson as the method writes it into the memory after a failed validation.
fn lesson(approach: Approach, kind: MistakeKind) -> String {
    let cause = cause_of(kind);
    format!("{approach} approach, {}: {}", cause.name(), check(cause))
}

#[test]
fn every_kind_of_reply_reads_back_with_the_methods_parsers() {
    for name in ["math-demo", "mc-demo"] {
        let t = task(name);
        let t: &dyn Task = &*t;
        let inputs: Vec<String> = match name {
            "math-demo" => PROBLEMS.iter().map(|p| p.problem.to_string()).collect(),
            _ => crate::tasks::math::mc_demo::QUESTIONS.iter().map(|q| q.input()).collect(),
        };
        for (i, x) in inputs.iter().enumerate() {
            let seed = i as u64;
            let reading = parse_complexity(&ask(seed, complexity_prompt(t, x))).expect("a complexity");
            assert!((1..=5).contains(&reading.level.level()) && reading.note.is_none());
            let approach = APPROACHES[i % 5];
            // Both forms of solve state the approach so the classifier and the keyword guess read it.
            let cot = ask(seed, cot_solve(t, x, approach, &[]));
            let tools = tool_solve(seed, t, x, approach, &[]);
            for trace in [&cot, &tools] {
                assert_eq!(approach_from_trace(trace), approach, "{trace}");
                assert_eq!(parse_approach(&ask(seed, approach_prompt(t, x, trace))), Some(approach));
                let local = parse_local_score(&ask(seed, local_prompt(t, x, trace))).expect("a local score");
                assert!(local.note.is_none() && (0.0..=1.0).contains(&local.score));
            }
            assert!(t.extract_answer(x, &cot).is_some(), "the cot solve answers: {cot}");
            assert!(finish_arg(&tools).is_some(), "the tool solve finishes: {tools}");
            let other = ask(seed + 1, cot_solve(t, x, APPROACHES[(i + 1) % 5], &[]));
            let critique = parse_cross(&ask(seed, cross_prompt(t, x, &cot, &[tools.clone(), other])), 2);
            assert!(critique.scores.iter().all(Option::is_some), "{critique:?}");
            assert!(!critique.critique.is_empty());
            let v = parse_validation(&ask(seed, validation_prompt(t, x, &cot)));
            assert!(v.verdict.is_some(), "{v:?}");
            assert_eq!(v.verdict == Some(false), v.cause.is_some(), "{v:?}");
            let f = parse_failure(&ask(seed, failure_prompt(t, x, &cot, &v.critique)), Approach::Other).unwrap();
            assert_eq!(f.approach, approach);
            assert!(f.summary.contains(approach.name()), "{f:?}");
            // Decompose, solve each subtask on its own problem text, compose.
            let subtasks = parse_subtasks(&ask(seed, decompose_prompt(t, x, 3)), 3).unwrap();
            assert!((2..=3).contains(&subtasks.len()));
            let mut solved: Vec<SolvedSubtask> = Vec::new();
            for s in &subtasks {
                let sub = subtask_problem(x, s, &solved);
                let trace = ask(0, cot_solve(t, &sub, Approach::Other, &[]));
                let result = trace.lines().last().unwrap().to_string();
                solved.push(SolvedSubtask { subtask: s.clone(), result });
            }
            let composed = ask(seed, compose_prompt(t, x, &solved));
            assert!(t.extract_answer(x, &composed).is_some(), "{composed}");
        }
    }
}

#[test]
fn weaknesses_recur_by_approach() {
    let t = task("math-demo");
    for tools in [false, true] {
        for approach in APPROACHES {
            // With the calculator, numeric's slips are gone (see the next test).
            if tools && approach == Approach::Numeric {
                continue;
            }
            let mut counts = [0usize; 5];
            for seed in 0..12 {
                for p in PROBLEMS {
                    let reply = match tools {
                        false => ask(seed, cot_solve(&*t, p.problem, approach, &[])),
                        true => tool_solve(seed, &*t, p.problem, approach, &[]),
                    };
                    if let Some(kind) = mistake_of(p, &reply) {
                        counts[MistakeKind::ALL.iter().position(|k| *k == kind).unwrap()] += 1;
                    }
                }
            }
            let mut sorted = counts;
            sorted.sort_unstable();
            let most = MistakeKind::ALL[(0..5).max_by_key(|i| counts[*i]).unwrap()];
            assert_eq!(Some(most), typical(approach), "{approach} (tools {tools}): {counts:?}");
            assert!(sorted[4] as f64 > 1.3 * sorted[3] as f64, "{approach} (tools {tools}): {counts:?}");
        }
    }
}

#[test]
fn lessons_naming_approach_and_cause_make_that_mistake_much_rarer() {
    let t = task("math-demo");
    for approach in APPROACHES {
        let kind = typical(approach).unwrap();
        let count = |lessons: &[&str], seeds: std::ops::Range<u64>| {
            let mut n = 0;
            for seed in seeds {
                for p in PROBLEMS {
                    let reply = ask(seed, cot_solve(&*t, p.problem, approach, lessons));
                    n += (mistake_of(p, &reply) == Some(kind)) as usize;
                }
            }
            n
        };
        let before = count(&[], 0..15);
        let learnt = lesson(approach, kind);
        let after = count(&[&learnt], 0..15);
        assert!(before >= 30, "{approach}: {before}");
        assert!((after as f64) < 0.4 * before as f64, "{approach}: {before} -> {after}");
        // A lesson about another approach's mistake, or the right cause under another
        // approach, does not help.
        let elsewhere = lesson(APPROACHES[(APPROACHES.iter().position(|a| *a == approach).unwrap() + 1) % 5], kind);
        let unrelated = count(&[&elsewhere], 0..15);
        assert!(unrelated as f64 > 0.7 * before as f64, "{approach}: {before} vs {unrelated} ({elsewhere})");
        // The backtracking note in the history teaches the same.
        let note = failure_note(&TypedFailure { cause: cause_of(kind), approach, summary: "it went wrong".into() });
        let mut n = 0;
        for seed in 0..15 {
            for p in PROBLEMS {
                let prompt = with(cot_solve(&*t, p.problem, approach, &[]), json!({"history": [note]}));
                n += (mistake_of(p, &ask(seed, prompt)) == Some(kind)) as usize;
            }
        }
        assert!((n as f64) < 0.4 * before as f64, "{approach} history: {before} -> {n}");
    }
}

#[test]
fn tool_solves_make_no_arithmetic_slips_and_cot_solves_do() {
    let t = task("math-demo");
    let (mut tool_slips, mut cot_slips, mut tool_wrong) = (0, 0, 0);
    for seed in 0..10 {
        for p in PROBLEMS {
            let traj = tool_solve(seed, &*t, p.problem, Approach::Numeric, &[]);
            assert!(traj.contains("Observation 1:"), "the calculator was used: {traj}");
            match mistake_of(p, &traj) {
                Some(MistakeKind::Arithmetic) => tool_slips += 1,
                Some(_) => tool_wrong += 1,
                None => {}
            }
            let cot = ask(seed, cot_solve(&*t, p.problem, Approach::Numeric, &[]));
            cot_slips += (mistake_of(p, &cot) == Some(MistakeKind::Arithmetic)) as usize;
        }
    }
    assert_eq!(tool_slips, 0);
    assert!(cot_slips > 40, "{cot_slips}");
    assert!(tool_wrong > 0, "other kinds still happen with tools");
}

#[test]
fn validation_catches_each_kind_at_its_configured_rate_and_names_its_cause() {
    let t = task("math-demo");
    for (kind, rate) in super::super::CATCH {
        let (mut caught, mut total) = (0, 0);
        for p in PROBLEMS {
            let target = target(p);
            for m in p.mistakes.iter().filter(|m| m.kind == kind) {
                let (mut lines, answer) = target.worked(Some(m));
                lines.push(target.closing(&answer));
                let attempt = lines.join("\n");
                for seed in 0..20 {
                    let v = parse_validation(&ask(seed, validation_prompt(&*t, p.problem, &attempt)));
                    total += 1;
                    if v.verdict == Some(false) {
                        caught += 1;
                        assert_eq!(v.cause, Some(cause_of(kind)));
                    }
                }
            }
        }
        let measured = caught as f64 / total as f64;
        assert!((measured - rate).abs() < 0.12, "{kind:?}: {measured} vs {rate}");
    }
    let (mut alarms, mut total) = (0, 0);
    for p in PROBLEMS {
        let right = target(p).script.lines(None).join("\n");
        for seed in 0..10 {
            total += 1;
            alarms += (parse_validation(&ask(seed, validation_prompt(&*t, p.problem, &right))).verdict == Some(false))
                as usize;
        }
    }
    let rate = alarms as f64 / total as f64;
    assert!(rate > 0.0 && rate < 0.25, "false alarms {rate}");
}

#[test]
fn replies_depend_on_seed_and_request_only() {
    let t = task("math-demo");
    let p = &PROBLEMS[5];
    let prompts = [
        complexity_prompt(&*t, p.problem),
        cot_solve(&*t, p.problem, Approach::Casework, &[]),
        act_solve(&*t, p.problem, Approach::Algebraic, "", 1),
        local_prompt(&*t, p.problem, "Approach: numeric\nThe final answer is $\\boxed{3}$."),
        decompose_prompt(&*t, p.problem, 3),
    ];
    for prompt in prompts {
        let a = ask(7, prompt.clone());
        assert_eq!(a, ask(7, prompt.clone()));
        // Asked in another order, after other requests: the same.
        let _ = ask(8, prompt.clone());
        assert_eq!(a, ask(7, prompt));
    }
    // Seeds change replies somewhere.
    let replies: std::collections::BTreeSet<String> =
        (0..20).map(|s| ask(s, cot_solve(&*t, PROBLEMS[20].problem, Approach::Numeric, &[]))).collect();
    assert!(replies.len() > 1);
    // The weakness rates vary by seed, within their range.
    let rates: Vec<f64> = (0..20).map(|s| weakness_rate(s, Approach::Casework)).collect();
    assert!(rates.iter().all(|r| (RATE_MIN..=RATE_MAX).contains(r)));
    assert!(rates.iter().any(|r| (r - rates[0]).abs() > 0.01));
    assert_eq!(weakness_rate(3, Approach::Other), 0.0);
}

#[test]
fn the_mapping_between_kinds_and_causes_is_one_to_one() {
    for kind in MistakeKind::ALL {
        assert_eq!(kind_of(cause_of(kind)), Some(kind));
    }
    assert_eq!(kind_of(FailureCause::MissingStep), None);
    assert_eq!(kind_of(FailureCause::Other), None);
    assert_eq!(causes_named("Earlier attempt failed: off-by-one in casework approach"), vec![FailureCause::OffByOne]);
    assert_eq!(causes_named("casework approach, incomplete_reasoning: x"), vec![FailureCause::IncompleteReasoning]);
}

#[test]
fn refinement_fixes_the_mistake_its_critique_names_and_keeps_a_right_answer() {
    let t = task("math-demo");
    let (mut fixed, mut total, mut unnamed_fixed, mut unnamed) = (0, 0, 0, 0);
    for p in PROBLEMS {
        let target = target(p);
        for m in p.mistakes {
            let (mut lines, answer) = target.worked(Some(m));
            lines.push(target.closing(&answer));
            let attempt = lines.join("\n");
            for seed in 0..6 {
                let named = format!("the step is a {} ({})", m.kind.label(), cause_of(m.kind).name());
                for (critique, named_it) in [(named.as_str(), true), ("it could be more careful", false)] {
                    let prompt = with(
                        cot_solve(&*t, p.problem, Approach::Other, &[]),
                        json!({"critique": critique, "attempt": attempt, "history": [critique]}),
                    );
                    let right = matches!(target.judge(&ask(seed, prompt)), Verdict::Right);
                    if named_it {
                        total += 1;
                        fixed += right as usize;
                    } else {
                        unnamed += 1;
                        unnamed_fixed += right as usize;
                    }
                }
            }
        }
        let right = target.script.lines(None).join("\n");
        for seed in 0..3 {
            let prompt = with(
                act_solve(&*t, p.problem, Approach::Casework, "", 6),
                json!({"critique": "it does not double-check the last step", "attempt": right}),
            );
            assert!(matches!(target.judge(&ask(seed, prompt)), Verdict::Right), "a right answer stays");
        }
    }
    assert!(fixed as f64 / total as f64 > 0.85, "{fixed}/{total}");
    // A vague critique leaves the model anchored on its attempt: fixed far less often.
    let vague = unnamed_fixed as f64 / unnamed as f64;
    assert!((0.15..0.6).contains(&vague), "fixed after a vague critique: {vague}");
}

#[test]
fn complexity_follows_the_level_and_sometimes_overestimates_easy_problems() {
    let t = task("math-demo");
    let mut by_level = [(0.0, 0usize); 5];
    let mut over = 0;
    let mut easy = 0;
    for seed in 0..10 {
        for p in PROBLEMS {
            let level = parse_complexity(&ask(seed, complexity_prompt(&*t, p.problem))).unwrap().level.level();
            let slot = &mut by_level[usize::from(p.level) - 1];
            slot.0 += f64::from(level);
            slot.1 += 1;
            if p.level <= 2 {
                easy += 1;
                over += (level > p.level) as usize;
            }
        }
    }
    let means: Vec<f64> = by_level.iter().map(|(s, n)| s / *n as f64).collect();
    assert!(means.windows(2).all(|w| w[0] < w[1]), "{means:?}");
    let share = over as f64 / easy as f64;
    assert!((0.2..0.5).contains(&share), "{share}");
    // At noise 0 the estimate is the level.
    let perfect = SimConfig { noise: 0.0, ..SimConfig::default() };
    for p in PROBLEMS {
        let level = parse_complexity(&ask_with(perfect.clone(), complexity_prompt(&*t, p.problem))).unwrap().level;
        assert_eq!(level.level(), p.level);
    }
}

#[test]
fn local_scores_favour_right_attempts_but_an_unnoticed_mistake_can_score_high() {
    let t = task("math-demo");
    let (mut right, mut wrong) = (Vec::new(), Vec::new());
    for p in PROBLEMS {
        let target = target(p);
        let mut attempts = vec![(target.script.lines(None).join("\n"), true)];
        attempts.extend(p.mistakes.iter().map(|m| (target.script.lines(Some(m)).join("\n"), false)));
        for (attempt, ok) in attempts {
            for seed in 0..5 {
                let s = parse_local_score(&ask(seed, local_prompt(&*t, p.problem, &attempt))).unwrap().score;
                if ok {
                    right.push(s)
                } else {
                    wrong.push(s)
                }
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(mean(&right) > mean(&wrong) + 0.15, "{} vs {}", mean(&right), mean(&wrong));
    assert!(wrong.iter().any(|s| *s >= 0.7), "some wrong attempts look fine");
}

#[test]
fn cross_critique_prefers_right_attempts_that_agree_with_the_majority() {
    let t = task("math-demo");
    let (mut right_scores, mut wrong_scores) = (Vec::new(), Vec::new());
    let mut named = 0;
    for p in PROBLEMS.iter().filter(|p| !p.mistakes.is_empty()) {
        let target = target(p);
        let right = target.script.lines(None).join("\n");
        let wrong = target.script.lines(Some(&p.mistakes[0])).join("\n");
        for seed in 0..5 {
            let c = parse_cross(&ask(seed, cross_prompt(&*t, p.problem, &right, &[right.clone(), wrong.clone()])), 2);
            right_scores.push(c.cross().unwrap());
            let c = parse_cross(&ask(seed, cross_prompt(&*t, p.problem, &wrong, &[right.clone(), right.clone()])), 2);
            wrong_scores.push(c.cross().unwrap());
            named += MistakeKind::named_in(&c.critique).contains(&p.mistakes[0].kind) as usize;
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(mean(&right_scores) > 0.55 && mean(&wrong_scores) < 0.4, "{} {}", mean(&right_scores), mean(&wrong_scores));
    assert!(named > 0, "a noticed mistake is named in the critique");
}

#[test]
fn failure_summaries_and_rewrites_keep_teaching_the_same_lesson() {
    let t = task("math-demo");
    let p = PROBLEMS.iter().find(|p| p.mistakes.iter().any(|m| m.kind == MistakeKind::MissedCase)).unwrap();
    let m = p.mistakes.iter().find(|m| m.kind == MistakeKind::MissedCase).unwrap();
    let mut attempt = vec![intro(Approach::Casework).to_string()];
    attempt.extend(target(p).script.lines(Some(m)));
    let attempt = attempt.join("\n");
    let f = parse_failure(&ask(1, failure_prompt(&*t, p.problem, &attempt, "VERDICT: incorrect")), Approach::Other)
        .unwrap();
    assert_eq!((f.cause, f.approach), (FailureCause::IncompleteReasoning, Approach::Casework));
    assert!(f.summary.contains("list every case"), "{f:?}");
    // The memory entry the method writes from it teaches the casework solve.
    let entry = format!("{} approach, {}: {}", f.approach, f.cause.name(), f.summary);
    let solve = with(cot_solve(&*t, p.problem, Approach::Casework, &[&entry]), json!({}));
    assert!(warned_of(&Context::of(&LlmRequest::from_prompt(solve, 1, 0.7)).unwrap(), Approach::Casework)
        .contains(&MistakeKind::MissedCase));
    // A rewrite of it still names approach and cause, and takes in the latest signal.
    let mut p = t.cot_prompt(p.problem);
    p = with(p, json!({"retreval": "rewrite", "entry": entry, "signals": ["the boundary x = 0 was left out again"]}));
    let rewritten = ask(2, p.clone());
    assert!(rewritten.starts_with("casework approach, incomplete_reasoning:"), "{rewritten}");
    assert!(rewritten.contains("boundary x = 0"), "{rewritten}");
    let req = LlmRequest::from_prompt(
        with(cot_solve(&*t, PROBLEMS[0].problem, Approach::Casework, &[&rewritten]), json!({})),
        1,
        0.7,
    );
    assert!(warned_of(&Context::of(&req).unwrap(), Approach::Casework).contains(&MistakeKind::MissedCase));
}

#[test]
fn a_problem_or_kind_it_does_not_know_is_a_clear_error() {
    let t = task("math-demo");
    let sim = Simulator::new(SimConfig::default(), &SimPlayers);
    let err = sim.answer(&LlmRequest::from_prompt(complexity_prompt(&*t, "What is 1 + 1?"), 1, 0.7)).unwrap_err();
    assert!(err.message.contains("ReTreVal complexity request"), "{}", err.message);
    let p = with(t.cot_prompt(PROBLEMS[0].problem), json!({"retreval": "brainstorm"}));
    let err = sim.answer(&LlmRequest::from_prompt(p, 1, 0.7)).unwrap_err();
    assert!(err.message.contains("\"brainstorm\""), "{}", err.message);
    // A subtask whose goal the sim did not write is not one of its own.
    let sub = "Main problem:\nSolve for $x$: $3x + 7 = 25$.\n\nSolve only this subtask: guess\nIt is done when: done";
    assert!(Target::resolve("math-demo", sub).is_none());
    assert!(Target::resolve("math-demo", "Main problem:\nnothing").is_none());
}

#[test]
fn at_noise_zero_every_solve_is_right_and_every_right_attempt_passes() {
    let t = task("math-demo");
    let perfect = SimConfig { noise: 0.0, ..SimConfig::default() };
    for p in PROBLEMS {
        for approach in APPROACHES {
            let reply = ask_with(perfect.clone(), cot_solve(&*t, p.problem, approach, &[]));
            assert!(matches!(target(p).judge(&reply), Verdict::Right), "{reply}");
            let v = parse_validation(&ask_with(perfect.clone(), validation_prompt(&*t, p.problem, &reply)));
            assert_eq!(v.verdict, Some(true));
        }
    }
}

#[test]
fn with_native_tool_calls_the_solve_calls_the_calculator() {
    let t = task("math-demo");
    let p = &PROBLEMS[0];
    let prompt = with(
        t.react().and_then(|r| r.native()).expect("native tools").react_native_prompt(p.problem, "", 1),
        json!({"retreval": "solve", "approach": "numeric", "lessons": [], "history": []}),
    );
    let mut req = LlmRequest::from_prompt(prompt, 1, 0.7);
    req.tools = t.react().and_then(|r| r.native()).expect("native tools").tool_defs();
    assert!(!req.tools.is_empty());
    let reply = Simulator::new(SimConfig::default(), &SimPlayers).answer(&req).unwrap();
    let call = &reply.completions[0].tool_calls[0];
    assert_eq!(call.name, "calc");
    assert!(call.arguments.to_string().contains(p.calc.unwrap().expr), "{call:?}");
    assert!(reply.completions[0].text.starts_with("Approach: numeric"), "{}", reply.completions[0].text);
}
