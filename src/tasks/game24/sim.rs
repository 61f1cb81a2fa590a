//! The simulated model's Game-of-24 behaviour, driven by the exact solver.

use serde::Deserialize;
use serde_json::Value;

use crate::arith::reach::answer_from_steps;
use crate::arith::steps::{moves, Move};
use crate::arith::{canonical, format_number, format_numbers, parse_numbers, Op, Q};
use crate::engine::rng::{stable_hash, SplitMix64};
use crate::engine::sim::SimConfig;
use crate::protocol::{CallError, CallErrorKind, LlmRequest, Purpose};
use crate::tasks::game24::{check_answer, solvable, solve};

/// How many steps a proposal lists at most (real models list 6 to 12).
const PROPOSE_WIDTH: usize = 8;

/// What a Game-of-24 request's context holds (the task's prompts and the feedback
/// methods write it): each field is read by the purposes that use it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    /// The puzzle, four numbers.
    pub input: String,
    /// The steps so far.
    pub y: String,
    /// The numbers left after `y`.
    pub numbers: String,
    /// A proposal for the final expression (all four numbers used).
    #[serde(rename = "final")]
    pub last: bool,
    /// The answer a value prompt judges.
    pub answer: Option<String>,
    /// The candidates a vote prompt chooses among.
    pub ys: Vec<String>,
    /// The attempt feedback, refinement and reflection look at.
    pub attempt: String,
    pub feedback: String,
    /// Reflexion's reflections on earlier failures.
    pub reflections: Vec<Value>,
}

impl Context {
    /// The context of `request`, or the one line that says why it cannot be read.
    pub fn of(request: &LlmRequest) -> Result<Context, CallError> {
        crate::engine::sim::context("game24", request)
    }
}

fn bad_request(what: &str) -> CallError {
    CallError { kind: CallErrorKind::Sim, message: format!("game24 request without {what}") }
}

pub fn answer(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    let ctx = Context::of(request)?;
    let input = parse_numbers(&ctx.input).ok_or_else(|| bad_request("a readable input"))?;
    match request.purpose {
        Purpose::Act => Err(CallError { kind: CallErrorKind::Sim, message: "game24 has no ReAct actions".into() }),
        Purpose::Judge => Err(CallError { kind: CallErrorKind::Sim, message: "game24 has no judge requests".into() }),
        Purpose::Io => Ok(io(cfg, &input, rng)),
        Purpose::Cot => match ctx.reflections.len() {
            0 => Ok(cot(cfg, &input, rng)),
            k => Ok(cot_reflected(cfg, &input, k, rng)),
        },
        Purpose::Propose if ctx.last => Ok(final_answer(cfg, &input, &ctx.y, rng)),
        Purpose::Propose => Ok(propose(cfg, &ctx.numbers, rng)),
        Purpose::Sample if ctx.numbers.trim() == "24" => Ok(final_answer(cfg, &input, &ctx.y, rng)),
        Purpose::Sample => Ok(propose(cfg, &ctx.numbers, rng).lines().next().unwrap_or("").to_string()),
        Purpose::Value => match &ctx.answer {
            Some(answer) => Ok(judge_answer(cfg, &input, answer, rng)),
            None => Ok(judge_numbers(cfg, &ctx.numbers, rng)),
        },
        Purpose::Vote => Ok(vote(cfg, &input, &ctx.ys, rng)),
        Purpose::Feedback => Ok(feedback(cfg, &input, &ctx.attempt, rng)),
        Purpose::Refine => Ok(refine(cfg, &input, &ctx.attempt, rng)),
        Purpose::Reflect => Ok(reflect(&input, &ctx.attempt, &ctx.feedback)),
    }
}

/// A wrong but plausible result for `a op b`.
fn slip(value: Q, rng: &mut SplitMix64) -> Q {
    let delta = Q::from_integer([1, 2, -1, 3][rng.below(4)]);
    value + delta
}

fn step_line(a: &Q, op: Op, b: &Q, result: &Q, rest: &[Q]) -> String {
    let mut left: Vec<Q> = rest.to_vec();
    left.push(*result);
    left.sort();
    format!(
        "{} {} {} = {} (left: {})",
        format_number(a),
        op.symbol(),
        format_number(b),
        format_number(result),
        format_numbers(&left)
    )
}

/// Remove one `a` and one `b` from `numbers`.
fn rest_after(numbers: &[Q], a: &Q, b: &Q) -> Vec<Q> {
    let mut rest = numbers.to_vec();
    for x in [a, b] {
        if let Some(i) = rest.iter().position(|n| n == x) {
            rest.remove(i);
        }
    }
    rest
}

fn propose(cfg: &SimConfig, numbers_text: &str, rng: &mut SplitMix64) -> String {
    let Some(numbers) = parse_numbers(numbers_text) else {
        return "I cannot read these numbers.".into();
    };
    if numbers.len() < 2 {
        return format!("Only {} is left; there is no step to take.", numbers_text.trim());
    }
    let mut moves = moves(&numbers);
    rng.shuffle(&mut moves);
    let (mut good, mut bad): (Vec<_>, Vec<_>) = moves.into_iter().partition(|m| solvable(&m.left));
    if rng.chance(cfg.rate(cfg.rates.miss)) {
        good.clear();
    }
    // A real proposer lists a few promising steps among many others.
    let n_good = good.len().min(1 + rng.below(3));
    let mut chosen: Vec<Move> = good.drain(..n_good).collect();
    chosen.extend(bad.drain(..bad.len().min(PROPOSE_WIDTH.saturating_sub(chosen.len()))));
    rng.shuffle(&mut chosen);
    let slip_rate = cfg.rate(cfg.rates.slip);
    chosen
        .iter()
        .map(|m| {
            if rng.chance(slip_rate) {
                let wrong = slip(m.result, rng);
                step_line(&m.a, m.op, &m.b, &wrong, &rest_after(&numbers, &m.a, &m.b))
            } else {
                m.line.clone()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn steps_of(y: &str) -> Vec<&str> {
    y.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
}

fn final_answer(cfg: &SimConfig, input: &[Q], y: &str, rng: &mut SplitMix64) -> String {
    let steps = steps_of(y);
    match answer_from_steps(input, &steps) {
        Some(expr) if !rng.chance(cfg.rate(cfg.rates.answer)) => format!("Answer: {expr} = 24"),
        Some(expr) => format!("Answer: {} = 24", garble(&expr, rng)),
        None => format!("Answer: {} = 24", wrong_expression(input, rng)),
    }
}

/// Change one number in an expression (a copying mistake).
fn garble(expr: &str, rng: &mut SplitMix64) -> String {
    let digits: Vec<usize> = expr.char_indices().filter(|(_, c)| c.is_ascii_digit()).map(|(i, _)| i).collect();
    if digits.is_empty() {
        return format!("{expr} + 1");
    }
    let at = digits[rng.below(digits.len())];
    let mut out = String::with_capacity(expr.len());
    for (i, c) in expr.char_indices() {
        if i == at {
            let d = c.to_digit(10).unwrap_or(0);
            out.push(char::from_digit((d + 1 + rng.below(8) as u32) % 10, 10).unwrap_or('1'));
        } else {
            out.push(c);
        }
    }
    out
}

/// An expression over the input numbers that does not make 24.
fn wrong_expression(input: &[Q], rng: &mut SplitMix64) -> String {
    for _ in 0..20 {
        let mut nums: Vec<String> = input.iter().map(format_number).collect();
        rng.shuffle(&mut nums);
        let ops = ['+', '-', '*', '/'];
        let mut expr = nums[0].clone();
        for n in &nums[1..] {
            let op = ops[rng.below(4)];
            expr = if rng.chance(0.5) { format!("({expr}) {op} {n}") } else { format!("{expr} {op} {n}") };
        }
        if check_answer(input, &expr).is_err() {
            return expr;
        }
    }
    input.iter().map(format_number).collect::<Vec<_>>().join(" + ")
}

/// How easy a puzzle is for this simulated model, in [0, 1): fixed per seed and puzzle,
/// so repeated samples of one puzzle succeed or fail together, as real models' do.
fn ease(cfg: &SimConfig, input: &[Q]) -> f64 {
    let key = format_numbers(&canonical(input));
    SplitMix64::from_parts(&[cfg.seed, stable_hash(key.as_bytes()), 0xea5e]).next_f64()
}

/// Whether one whole-answer sample (io or cot) is right. With error rate r the chance is
/// (1 - r)^g, where g grows fast as a puzzle gets harder: most puzzles are out of reach
/// and a few are easy, so best-of-k and majority votes behave as with real models
/// (r = 0 is always right, r = 1 never).
fn sample_is_right(cfg: &SimConfig, base_rate: f64, input: &[Q], rng: &mut SplitMix64) -> bool {
    let r = cfg.rate(base_rate);
    let hard = 1.0 - ease(cfg, input);
    let g = 20.0 * hard * hard + 0.3;
    rng.chance((1.0 - r).powf(g))
}

/// A generator for the puzzle's "habit": the same favourite answer (right or wrong)
/// comes back across samples, so answers cluster.
fn habit(cfg: &SimConfig, input: &[Q], which: u64) -> SplitMix64 {
    let key = format_numbers(&canonical(input));
    SplitMix64::from_parts(&[cfg.seed, stable_hash(key.as_bytes()), which])
}

fn io(cfg: &SimConfig, input: &[Q], rng: &mut SplitMix64) -> String {
    if sample_is_right(cfg, cfg.rates.io, input, rng) {
        if let Some(expr) = solve(input) {
            return format!("{expr} = 24");
        }
    }
    let mut source = if rng.chance(0.5) { habit(cfg, input, 1) } else { rng.clone() };
    rng.next_u64();
    format!("{} = 24", wrong_expression(input, &mut source))
}

/// A chain of three steps and an answer. A right chain follows solvable moves; a
/// wrong one takes a hopeless first step and then claims 24 anyway.
fn cot(cfg: &SimConfig, input: &[Q], rng: &mut SplitMix64) -> String {
    let right = sample_is_right(cfg, cfg.rates.cot, input, rng);
    chain(cfg, input, right, rng)
}

/// A cot trial that was given `k` reflections on earlier failures: each one makes a
/// right chain likelier (the error rate is raised to the power 1 + k/2, k at most 6).
fn cot_reflected(cfg: &SimConfig, input: &[Q], k: usize, rng: &mut SplitMix64) -> String {
    let rate = cfg.rate(cfg.rates.cot).powf(1.0 + k.min(6) as f64 / 2.0);
    let right = sample_is_right(&SimConfig { noise: 1.0, ..cfg.clone() }, rate, input, rng);
    chain(cfg, input, right, rng)
}

/// Check an attempt (a `feedback` request): the checker's verdict on its answer, wrong
/// a third as often as the evaluator's `misjudge` rate.
fn feedback(cfg: &SimConfig, input: &[Q], attempt: &str, rng: &mut SplitMix64) -> String {
    let right = check_answer(input, attempt);
    let flip = rng.chance(cfg.rate(cfg.rates.misjudge) / 3.0);
    let verdict = right.is_ok() != flip;
    let why = match (&right, flip) {
        (Ok(()), false) => "Each number is used once and the expression makes 24.".to_string(),
        (Ok(()), true) => "The steps look fine, but I am not sure the expression really makes 24.".to_string(),
        (Err(reason), false) => format!("The final expression is wrong: it {reason}."),
        (Err(_), true) => "Each step follows from the one before, and the answer looks right.".to_string(),
    };
    let verdict = if verdict { "correct" } else { "incorrect" };
    format!("Checking the steps and the final expression.\n{why}\nVERDICT: {verdict}")
}

/// A refined attempt (a `refine` request): a right attempt is kept; a wrong one is
/// replaced by a new chain, right as often as a direct (io) answer is.
fn refine(cfg: &SimConfig, input: &[Q], attempt: &str, rng: &mut SplitMix64) -> String {
    if check_answer(input, attempt).is_ok() && !attempt.trim().is_empty() {
        return attempt.trim().to_string();
    }
    let right = sample_is_right(cfg, cfg.rates.io, input, rng);
    // The wrong ones are fresh mistakes, not the puzzle's habit, so refinements differ.
    let mut own = rng.clone();
    rng.next_u64();
    chain_from(input, right, &mut own)
}

/// A reflection on a failed attempt (a `reflect` request), from its answer and feedback.
fn reflect(input: &[Q], attempt: &str, feedback: &str) -> String {
    let reason = match check_answer(input, attempt) {
        Ok(()) => "the check doubted my answer, which may have been right".to_string(),
        Err(reason) => format!("my final expression {reason}"),
    };
    let told = feedback.lines().map(str::trim).find(|l| !l.is_empty() && !l.to_lowercase().starts_with("verdict"));
    let told = told.map(|t| format!(" The feedback said: {t}")).unwrap_or_default();
    format!(
        "I failed because {reason}.{told} Next time I will pick a first step that leaves numbers which can still \
         make 24, and check that the final expression uses {} exactly once and equals 24 before answering.",
        format_numbers(input)
    )
}

/// A chain for a cot-style reply, right or wrong as decided (the puzzle's habit shapes it).
fn chain(cfg: &SimConfig, input: &[Q], right: bool, rng: &mut SplitMix64) -> String {
    let (which, share) = if right { (2, 0.8) } else { (3, 0.5) };
    let mut walk = if rng.chance(share) { habit(cfg, input, which) } else { rng.clone() };
    rng.next_u64();
    chain_from(input, right, &mut walk)
}

/// Three steps down solvable moves (a right chain) or from a hopeless first move (a
/// wrong one, which claims 24 anyway), and the answer.
fn chain_from(input: &[Q], right: bool, walk: &mut SplitMix64) -> String {
    let mut numbers = input.to_vec();
    let mut lines = Vec::new();
    for step in 0..3 {
        let mut moves = moves(&numbers);
        if moves.is_empty() {
            break;
        }
        walk.shuffle(&mut moves);
        let want_good = right || step > 0;
        let pick = moves.iter().position(|m| solvable(&m.left) == want_good).unwrap_or(0);
        let m = moves.swap_remove(pick);
        lines.push(m.line.clone());
        numbers = m.left;
    }
    let steps: Vec<&str> = lines.iter().map(String::as_str).collect();
    let expr = answer_from_steps(input, &steps).unwrap_or_else(|| wrong_expression(input, walk));
    format!("{}\nAnswer: {expr} = 24", lines.join("\n"))
}

fn mislabel(truth: &'static str, rng: &mut SplitMix64) -> &'static str {
    let others: [&'static str; 2] = match truth {
        "sure" => ["likely", "impossible"],
        "likely" => ["sure", "impossible"],
        _ => ["likely", "sure"],
    };
    // Confident wrong verdicts are rarer than hedged ones.
    if rng.chance(0.7) {
        if others[0] == "likely" {
            others[0]
        } else {
            others[1]
        }
    } else if others[0] == "likely" {
        others[1]
    } else {
        others[0]
    }
}

fn judge_numbers(cfg: &SimConfig, numbers_text: &str, rng: &mut SplitMix64) -> String {
    let Some(numbers) = parse_numbers(numbers_text) else {
        return format!("{} cannot be read as numbers\nimpossible", numbers_text.trim());
    };
    let solution = solve(&numbers);
    let truth = match (&solution, numbers.len()) {
        (Some(_), 1..=3) => "sure",
        (Some(_), _) => "likely",
        (None, _) => "impossible",
    };
    let verdict = if rng.chance(cfg.rate(cfg.rates.misjudge)) { mislabel(truth, rng) } else { truth };
    let work = match (&solution, verdict) {
        (Some(expr), "sure") => format!("{expr} = 24"),
        _ => format!(
            "{} = {}",
            numbers.iter().map(format_number).collect::<Vec<_>>().join(" + "),
            format_number(&numbers.iter().copied().sum::<Q>())
        ),
    };
    format!("{work}\n{verdict}")
}

fn judge_answer(cfg: &SimConfig, input: &[Q], answer: &str, rng: &mut SplitMix64) -> String {
    let right = check_answer(input, answer);
    let truth = if right.is_ok() { "sure" } else { "impossible" };
    let flip = rng.chance(cfg.rate(cfg.rates.misjudge) / 3.0);
    let verdict = match (truth, flip) {
        ("sure", true) => "impossible",
        ("impossible", true) => "sure",
        (t, _) => t,
    };
    let why = match right {
        Ok(()) => "it uses each number once and makes 24".to_string(),
        Err(reason) => reason,
    };
    format!("{why}\n{verdict}")
}

fn vote(cfg: &SimConfig, input: &[Q], ys: &[String], rng: &mut SplitMix64) -> String {
    if ys.is_empty() {
        return "There are no choices.".into();
    }
    let promising: Vec<usize> = (0..ys.len())
        .filter(|&i| {
            let numbers = crate::tasks::game24::current_numbers_text(&format_numbers(input), &ys[i]);
            parse_numbers(&numbers).is_some_and(|n| solvable(&n))
        })
        .collect();
    let pick = if !promising.is_empty() && !rng.chance(cfg.rate(cfg.rates.misjudge)) {
        promising[rng.below(promising.len())]
    } else {
        rng.below(ys.len())
    };
    format!("Choice {} keeps the most options open.\nThe best choice is {}", pick + 1, pick + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Feedback, Task};
    use crate::tasks::game24::Game24;

    fn ask(cfg: &SimConfig, prompt: crate::protocol::Prompt, seed: u64) -> String {
        let request = LlmRequest::from_prompt(prompt, 1, 0.7);
        answer(cfg, &request, &mut SplitMix64::new(seed)).expect("the sim answers")
    }

    /// Every prompt the task writes is read by the typed context, field by field; a
    /// context of the wrong shape is an error naming the field, never a silent default.
    #[test]
    fn the_tasks_prompts_are_read_by_the_typed_context() {
        let task = Game24::builtin();
        let tree = task.tree().expect("game24 searches trees");
        let x = "4 5 6 10";
        let y = "10 - 4 = 6 (left: 5 6 6)\n";
        let propose = tree.propose_prompt(x, y);
        let ctx = Context::of(&LlmRequest::from_prompt(propose, 1, 0.7)).unwrap();
        assert_eq!((ctx.input.as_str(), ctx.y.as_str(), ctx.numbers.as_str(), ctx.last), (x, y, "5 6 6", false));
        let value = tree.value().expect("game24 values states").value_prompt(x, y);
        let ctx = Context::of(&LlmRequest::from_prompt(value, 1, 0.7)).unwrap();
        assert_eq!((ctx.numbers.as_str(), ctx.answer.as_deref()), ("5 6 6", None));
        let ys = vec!["a\n".to_string(), "b\n".to_string()];
        let vote = tree.vote().expect("game24 votes").vote_prompt(x, &ys);
        assert_eq!(Context::of(&LlmRequest::from_prompt(vote, 1, 0.7)).unwrap().ys, ys);
        let mut bad = LlmRequest::from_prompt(task.cot_prompt(x), 1, 0.7);
        bad.context = serde_json::json!({"input": 24});
        let e = answer(&SimConfig::default(), &bad, &mut SplitMix64::new(0)).unwrap_err();
        assert!(e.message.starts_with("game24 request context: field \"input\": invalid type: integer `24`"), "{e}");
    }

    #[test]
    fn feedback_refine_and_reflect_are_answered_from_the_context() {
        let task = Game24::builtin();
        let x = "4 5 6 10";
        let wrong = "Answer: 4 + 5 + 6 + 10 = 24";
        let right = "Answer: (5 * 6) - (10 - 4) = 24";
        let perfect = SimConfig { noise: 0.0, ..SimConfig::default() };
        // A perfect judge: the verdict is the checker's.
        let fb = ask(&perfect, task.feedback_prompt(x, wrong), 1);
        assert_eq!(task.parse_feedback(&fb).0, Some(false), "{fb}");
        assert!(fb.contains("equals 25"), "{fb}");
        assert_eq!(task.parse_feedback(&ask(&perfect, task.feedback_prompt(x, right), 1)).0, Some(true));
        // A perfect refiner fixes a wrong attempt; a right one is kept as it is.
        let refined = ask(&perfect, task.refine_prompt(x, wrong, &fb), 2);
        let answer = task.extract_answer(x, &refined).unwrap();
        assert_eq!(task.check(x, &answer), Ok(()), "{refined}");
        assert_eq!(ask(&SimConfig::default(), task.refine_prompt(x, right, "VERDICT: incorrect"), 2), right);
        // A reflection names what went wrong.
        let r = ask(&SimConfig::default(), task.reflect_prompt(x, wrong, &fb), 3);
        assert!(r.contains("equals 25, not 24") && r.contains("Next time"), "{r}");
        // A cot request with reflections is answered (better, see reflexion's tests).
        let cot = ask(&perfect, task.reflexion_cot_prompt(x, &["Multiply.".into()]), 4);
        assert_eq!(task.check(x, &task.extract_answer(x, &cot).unwrap()), Ok(()));
    }

    #[test]
    fn the_self_check_misjudges_now_and_then() {
        let task = Game24::builtin();
        let cfg = SimConfig::default();
        let mut wrong_verdicts = 0;
        for seed in 0..300 {
            let fb = ask(&cfg, task.feedback_prompt("4 5 6 10", "Answer: 4 + 5 + 6 + 10 = 24"), seed);
            wrong_verdicts += usize::from(task.parse_feedback(&fb).0 != Some(false));
        }
        // misjudge 0.33 / 3: about 33 of 300.
        assert!((10..70).contains(&wrong_verdicts), "{wrong_verdicts}");
    }
}
