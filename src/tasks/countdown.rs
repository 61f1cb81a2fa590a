//! Countdown: make a target from six numbers with + - * /, every number used exactly
//! once (`1 3 7 10 25 50 -> 765`). A thin task over the reach-a-target puzzles
//! (`tasks::reach`: the prompts, steps and evaluators Game of 24 shares; `arith`: the step
//! grammar, the move generator, the solver and the answer checker, all for any target),
//! with its own prompts (`assets/prompts/countdown/`), its problems
//! (`assets/countdown/problems.txt`) and its own simulated player ([`play`]), which
//! reads the typed [`Context`] every countdown prompt carries.
//!
//! The whole task is this file and one registration line in `tasks::REGISTRY`: the
//! worked example of adding a task (see the README).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::reach::{self, Ctx, Reach, Rules, Templates};
use super::{Problem, TaskError, TaskSource};
use crate::arith::reach::{answer_from_steps, check_answer};
use crate::arith::solver::{solvable, solve};
use crate::arith::steps::{moves, numbers_left_text};
use crate::arith::{canonical, format_number, format_numbers, parse_numbers, Q};
use crate::engine::rng::{stable_hash, SplitMix64};
use crate::engine::sim::SimConfig;
use crate::engine::{AnswerKind, TaskInfo};
use crate::protocol::{CallError, CallErrorKind, LlmRequest, Purpose};

/// How many numbers a problem has.
pub const NUMBERS: usize = 6;

/// Registration (see `tasks::REGISTRY`).
pub const INFO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("countdown"),
    about: Cow::Borrowed("Countdown: reach a target with six numbers and + - * /, each used exactly once"),
    input_noun: Cow::Borrowed("problem"),
    input_hint: Cow::Borrowed("a problem number or six numbers, -> and a target"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("0"), Cow::Borrowed("1 3 7 10 25 50 -> 765")]),
    default_problem: 0,
    answer_kind: AnswerKind::Expression,
    reads_data: false,
};

const PROBLEMS: &str = include_str!("../../assets/countdown/problems.txt");

/// The evaluator's classes and the value each sample adds (as Game of 24's).
pub const VALUE_CLASSES: [(&str, f64); 3] = reach::VALUE_CLASSES;

/// One problem: the numbers (in order) and the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Puzzle {
    pub numbers: Vec<Q>,
    pub target: Q,
}

impl Puzzle {
    /// Read `1 3 7 10 25 50 -> 765` (or the seven numbers alone, the target last).
    pub fn parse(text: &str) -> Result<Puzzle, String> {
        let (numbers, target) = match text.split_once("->") {
            Some((numbers, target)) => (numbers.to_string(), target.trim().to_string()),
            None => {
                let mut words: Vec<&str> = text.split_whitespace().collect();
                let target = words.pop().unwrap_or("").to_string();
                (words.join(" "), target)
            }
        };
        let mut numbers = parse_numbers(&numbers).ok_or("expected numbers separated by spaces, -> and a target")?;
        let target = parse_numbers(&target)
            .and_then(|t| (t.len() == 1).then(|| t[0]))
            .ok_or("expected one target number after ->")?;
        if numbers.len() != NUMBERS {
            return Err(format!("expected {NUMBERS} numbers before ->, got {}", numbers.len()));
        }
        numbers.sort();
        Ok(Puzzle { numbers, target })
    }

    /// The problem as the prompts and sessions write it.
    pub fn text(&self) -> String {
        format!("{} -> {}", format_numbers(&self.numbers), format_number(&self.target))
    }
}

/// What every countdown prompt tells its player, read back typed ([`play`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Context {
    /// Always `countdown` (the simulated model finds the task's player by it).
    pub task: String,
    /// The problem (`numbers -> target`).
    pub input: String,
    /// The partial output the prompt continues or judges.
    #[serde(default)]
    pub y: String,
    /// The numbers left after `y`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numbers: Option<String>,
    /// The answer a final-state value prompt judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The states a vote chooses among.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ys: Vec<String>,
}

/// Countdown's rules: six numbers, the target after `->`, the listed problems.
pub struct CountdownRules {
    problems: Vec<Puzzle>,
}

pub type Countdown = Reach<CountdownRules>;

impl Rules for CountdownRules {
    /// Five steps of two numbers into one, then the answer.
    const NUMBERS: usize = NUMBERS;
    const TARGET_IN_INPUT: bool = true;
    const COT_TOKENS: u32 = 300;
    const SAMPLE_TOKENS: u32 = 80;
    const ALL_COMBINED: &'static str = "every number is combined: expected the final `Answer:` line";

    fn info() -> &'static TaskInfo {
        &INFO
    }

    fn templates() -> Templates {
        crate::reach_templates!("countdown")
    }

    fn load() -> Result<Self, TaskError> {
        let problems = PROBLEMS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| Puzzle::parse(l).map_err(|e| TaskError::Data(format!("assets/countdown/problems.txt: {l}: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CountdownRules { problems })
    }

    fn puzzle(&self, x: &str) -> Result<(Vec<Q>, Q), String> {
        let p = Puzzle::parse(x).map_err(|e| format!("cannot read the problem {x:?}: {e}"))?;
        Ok((p.numbers, p.target))
    }

    /// One number is left.
    fn all_combined(&self, numbers: &str) -> bool {
        parse_numbers(numbers).is_some_and(|n| n.len() == 1)
    }

    fn final_answer(&self, y: &str) -> Option<String> {
        let last = super::reply::last_line(y);
        (!y.trim().is_empty() && !last.contains("left: ")).then(|| super::reply::strip_answer_prefix(last).to_string())
    }

    /// The typed [`Context`] [`play`] reads.
    fn context(&self, ctx: Ctx) -> Value {
        let context = Context {
            task: ctx.task.to_string(),
            input: ctx.input.to_string(),
            y: ctx.y.unwrap_or_default().to_string(),
            numbers: ctx.numbers.map(str::to_string),
            answer: ctx.answer.map(str::to_string),
            ys: ctx.ys.unwrap_or_default().to_vec(),
        };
        serde_json::to_value(&context).unwrap_or_default()
    }
}

impl TaskSource for Countdown {
    fn problem_count(&self) -> usize {
        self.rules.problems.len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        self.rules.problems.get(index).map(|p| Problem { index: Some(index), input: p.text() })
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        if let Ok(index) = text.trim().parse::<usize>() {
            return self.problem(index).ok_or_else(|| {
                TaskError::Input(
                    text.into(),
                    format!(
                        "there are {} problems (0 to {})",
                        self.rules.problems.len(),
                        self.rules.problems.len() - 1
                    ),
                )
            });
        }
        let input = Puzzle::parse(text).map_err(|e| TaskError::Input(text.into(), e))?.text();
        let index = self.rules.problems.iter().position(|p| p.text() == input);
        Ok(Problem { index, input })
    }
}

// ---- The simulated player: answers countdown's requests from the solver, with the
// sim's seeded mistakes (`SimConfig`'s rates), reading the typed `Context`.

/// How many steps a proposal lists at most.
const PROPOSE_WIDTH: usize = 8;

fn sim_error(message: String) -> CallError {
    CallError { kind: CallErrorKind::Sim, message }
}

/// The simulated model's answer to one sample of a countdown request (registered with
/// the task: `TaskEntry::sim`).
pub fn play(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    let ctx: Context = serde_json::from_value(request.context.clone())
        .map_err(|e| sim_error(format!("countdown request with an unreadable context: {e}")))?;
    let p = Puzzle::parse(&ctx.input).map_err(|e| sim_error(format!("countdown request: {e}")))?;
    let left = || parse_numbers(ctx.numbers.as_deref().unwrap_or("")).unwrap_or_default();
    match request.purpose {
        Purpose::Io => Ok(whole_answer(cfg, &p, cfg.rates.io, false, rng)),
        Purpose::Cot => Ok(whole_answer(cfg, &p, cfg.rates.cot, true, rng)),
        Purpose::Propose | Purpose::Sample => {
            let numbers = left();
            if numbers.len() == 1 {
                return Ok(final_answer(cfg, &p, &ctx.y, rng));
            }
            let listed = propose(cfg, &p, &numbers, rng);
            Ok(match request.purpose {
                Purpose::Sample => listed.lines().next().unwrap_or("").to_string(),
                _ => listed,
            })
        }
        Purpose::Value => Ok(match &ctx.answer {
            Some(answer) => judge_answer(cfg, &p, answer, rng),
            None => judge_numbers(cfg, &p, &left(), rng),
        }),
        Purpose::Vote => Ok(vote(cfg, &p, &ctx.ys, rng)),
        other => Err(sim_error(format!("countdown has no {other:?} requests"))),
    }
}

/// How easy a problem is for this simulated model, in [0, 1): fixed per seed and
/// problem, so samples of one problem succeed or fail together, as real models' do.
fn ease(cfg: &SimConfig, p: &Puzzle) -> f64 {
    SplitMix64::from_parts(&[cfg.seed, stable_hash(p.text().as_bytes()), 0xc0de]).next_f64()
}

/// Whether one whole answer is right: (1 - r)^g, g growing fast with how hard it is.
fn sample_is_right(cfg: &SimConfig, base_rate: f64, p: &Puzzle, rng: &mut SplitMix64) -> bool {
    let hard = 1.0 - ease(cfg, p);
    rng.chance((1.0 - cfg.rate(base_rate)).powf(20.0 * hard * hard + 0.3))
}

/// An expression over the numbers that misses the target.
fn wrong_expression(p: &Puzzle, rng: &mut SplitMix64) -> String {
    for _ in 0..20 {
        let mut nums: Vec<String> = p.numbers.iter().map(format_number).collect();
        rng.shuffle(&mut nums);
        let mut expr = nums[0].clone();
        for n in &nums[1..] {
            let op = ['+', '-', '*'][rng.below(3)];
            expr = if rng.chance(0.5) { format!("({expr}) {op} {n}") } else { format!("{expr} {op} {n}") };
        }
        if check_answer(&p.numbers, &expr, &p.target).is_err() {
            return expr;
        }
    }
    p.numbers.iter().map(format_number).collect::<Vec<_>>().join(" + ")
}

/// An io answer (the expression) or a chain of thought (five steps and the answer).
fn whole_answer(cfg: &SimConfig, p: &Puzzle, rate: f64, steps: bool, rng: &mut SplitMix64) -> String {
    let right = sample_is_right(cfg, rate, p, rng);
    let target = format_number(&p.target);
    if !steps {
        let expr = if right { solve(&p.numbers, &p.target) } else { None };
        return format!("Answer: {} = {target}", expr.unwrap_or_else(|| wrong_expression(p, rng)));
    }
    // A right chain follows moves that keep the target reachable; a wrong one starts
    // with a hopeless move and claims the target anyway.
    let mut numbers = p.numbers.clone();
    let mut lines = Vec::new();
    while numbers.len() > 1 {
        let mut all = moves(&numbers);
        rng.shuffle(&mut all);
        let want_good = right || !lines.is_empty();
        let pick = all.iter().position(|m| solvable(&m.left, &p.target) == want_good).unwrap_or(0);
        let Some(m) = all.into_iter().nth(pick) else { break };
        lines.push(m.line);
        numbers = m.left;
    }
    let taken: Vec<&str> = lines.iter().map(String::as_str).collect();
    let expr = answer_from_steps(&p.numbers, &taken).unwrap_or_else(|| wrong_expression(p, rng));
    format!("{}\nAnswer: {expr} = {target}", lines.join("\n"))
}

/// Next steps from `numbers`: a few that keep the target reachable among others, some
/// with a slip in their arithmetic; none that keeps it reachable now and then (`miss`).
fn propose(cfg: &SimConfig, p: &Puzzle, numbers: &[Q], rng: &mut SplitMix64) -> String {
    let mut all = moves(numbers);
    rng.shuffle(&mut all);
    let want_good = if rng.chance(cfg.rate(cfg.rates.miss)) { 0 } else { 1 + rng.below(3) };
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    // Classified lazily: the solver's answer for a hopeless set of numbers is the dear one.
    for m in all {
        if good.len() + bad.len() >= PROPOSE_WIDTH && good.len() >= want_good {
            break;
        }
        if solvable(&m.left, &p.target) {
            if good.len() < want_good {
                good.push(m);
            }
        } else if bad.len() + want_good < PROPOSE_WIDTH {
            bad.push(m);
        }
    }
    good.extend(bad);
    rng.shuffle(&mut good);
    let slip = cfg.rate(cfg.rates.slip);
    good.iter()
        .map(|m| {
            if rng.chance(slip) {
                // A wrong result, as a careless model writes it.
                let wrong = m.result + Q::from_integer([1, 2, -1, 10][rng.below(4)]);
                m.line.replacen(&format!("= {}", format_number(&m.result)), &format!("= {}", format_number(&wrong)), 1)
            } else {
                m.line.clone()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The final answer after the steps of `y`, now and then miscopied (`answer`).
fn final_answer(cfg: &SimConfig, p: &Puzzle, y: &str, rng: &mut SplitMix64) -> String {
    let steps: Vec<&str> = y.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let target = format_number(&p.target);
    match answer_from_steps(&p.numbers, &steps) {
        Some(expr) if !rng.chance(cfg.rate(cfg.rates.answer)) => format!("Answer: {expr} = {target}"),
        _ => format!("Answer: {} = {target}", wrong_expression(p, rng)),
    }
}

/// A class other than `truth` (a misjudgment).
fn mislabel(truth: &'static str, rng: &mut SplitMix64) -> &'static str {
    let others: Vec<&'static str> = VALUE_CLASSES.iter().map(|(n, _)| *n).filter(|n| *n != truth).collect();
    others[rng.below(others.len())]
}

fn judge_numbers(cfg: &SimConfig, p: &Puzzle, numbers: &[Q], rng: &mut SplitMix64) -> String {
    let reachable = !numbers.is_empty() && solvable(numbers, &p.target);
    let truth = match (reachable, numbers.len()) {
        (true, 1..=3) => "sure",
        (true, _) => "likely",
        (false, _) => "impossible",
    };
    let verdict = if rng.chance(cfg.rate(cfg.rates.misjudge)) { mislabel(truth, rng) } else { truth };
    let sum: Q = numbers.iter().copied().sum();
    format!("{} = {}\n{verdict}", format_numbers(numbers).replace(' ', " + "), format_number(&sum))
}

fn judge_answer(cfg: &SimConfig, p: &Puzzle, answer: &str, rng: &mut SplitMix64) -> String {
    let right = check_answer(&p.numbers, answer, &p.target);
    let flip = rng.chance(cfg.rate(cfg.rates.misjudge) / 3.0);
    let verdict = if right.is_ok() != flip { "sure" } else { "impossible" };
    let why = right.err().unwrap_or_else(|| "it uses each number once and makes the target".to_string());
    format!("{why}\n{verdict}")
}

fn vote(cfg: &SimConfig, p: &Puzzle, ys: &[String], rng: &mut SplitMix64) -> String {
    if ys.is_empty() {
        return "There are no choices.".into();
    }
    let start = format_numbers(&canonical(&p.numbers));
    let promising: Vec<usize> = (0..ys.len())
        .filter(|&i| parse_numbers(&numbers_left_text(&start, &ys[i])).is_some_and(|n| solvable(&n, &p.target)))
        .collect();
    let pick = if !promising.is_empty() && !rng.chance(cfg.rate(cfg.rates.misjudge)) {
        promising[rng.below(promising.len())]
    } else {
        rng.below(ys.len())
    };
    format!("Choice {} keeps the target in reach.\nThe best choice is {}", pick + 1, pick + 1)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::testkit::{run_cmd, run_sync, sim};
    use crate::engine::Task;
    use crate::engine::{methods, Engine, MethodKind, Params};
    use crate::protocol::Prompt;
    use crate::tasks::{self, TaskOptions};

    fn countdown() -> Arc<dyn TaskSource> {
        tasks::build("countdown", &TaskOptions::default(), &mut Vec::new()).expect("countdown builds")
    }

    #[test]
    fn every_listed_problem_has_a_solution_and_the_checker_knows_it() {
        let task = countdown();
        assert!(task.problem_count() >= 30, "a few dozen problems");
        for i in 0..task.problem_count() {
            let x = task.problem(i).unwrap().input;
            let p = Puzzle::parse(&x).unwrap();
            let expr = solve(&p.numbers, &p.target).unwrap_or_else(|| panic!("problem {i} ({x}) has no solution"));
            assert_eq!(task.check(&x, &format!("Answer: {expr} = {}", format_number(&p.target))), Ok(()), "{x}");
            // Every number is used exactly once: dropping one is refused.
            let short =
                expr.rsplit_once(' ').map(|(head, _)| head.trim_end_matches(['+', '-', '*', '/', ' '])).unwrap();
            assert!(task.check(&x, short).is_err(), "{x}: {short}");
            assert_eq!(task.parse_input(&x).unwrap(), Problem { index: Some(i), input: x.clone() });
        }
        assert!(task.parse_input("1 2 3 -> 6").is_err());
        assert_eq!(task.parse_input("50 25 10 7 3 1 765").unwrap().input, "1 3 7 10 25 50 -> 765");
    }

    #[test]
    fn a_step_is_checked_against_the_numbers_left() {
        let task = countdown();
        let tree = task.tree().unwrap();
        let x = "1 3 7 10 25 50 -> 765";
        let ok = tree.parse_edit(x, "", "25 * 3 = 75 (left: 1 7 10 50 75)");
        assert_eq!(ok.problem, None);
        let wrong = tree.parse_edit(x, "", "25 * 3 = 76 (left: 1 7 10 50 76)");
        assert!(wrong.problem.is_some());
        let y = "50 + 25 = 75 (left: 1 3 7 10 75)\n";
        assert!(tree.parse_edit(x, y, "50 - 1 = 49 (left: 3 7 10 49)").problem.is_some(), "50 is used up");
        assert_eq!(task.describe_state(x, y).as_deref(), Some("numbers left: 1 3 7 10 75 (target 765)"));
    }

    #[test]
    fn the_player_reads_the_typed_context_and_a_perfect_one_solves() {
        let task = countdown();
        let x = task.problem(0).unwrap().input;
        let perfect = SimConfig { noise: 0.0, ..SimConfig::default() };
        let ask = |prompt: Prompt| {
            let request = LlmRequest::from_prompt(prompt, 1, 0.7);
            play(&perfect, &request, &mut SplitMix64::new(7)).expect("the player answers")
        };
        let ctx: Context = serde_json::from_value(task.cot_prompt(&x).context).unwrap();
        assert_eq!((ctx.task.as_str(), ctx.input.as_str()), ("countdown", x.as_str()));
        let cot = ask(task.cot_prompt(&x));
        assert_eq!(task.check(&x, &task.extract_answer(&x, &cot).unwrap()), Ok(()), "{cot}");
        let tree = task.tree().unwrap();
        let proposals = tree.parse_proposals(&x, "", &ask(tree.propose_prompt(&x, "")));
        assert!(proposals.iter().all(|p| p.problem.is_none()), "{proposals:?}");
        let value = tree.value().unwrap();
        let (v, classes) = value.parse_value(&x, "", &[ask(value.value_prompt(&x, ""))]);
        assert_eq!((v, classes), (1.0, vec!["likely".to_string()]));
        // A request of a kind countdown has not is an error naming it, never a made-up reply.
        let mut feedback = task.cot_prompt(&x);
        feedback.purpose = Purpose::Feedback;
        let request = LlmRequest::from_prompt(feedback, 1, 0.7);
        assert!(play(&perfect, &request, &mut SplitMix64::new(1)).is_err());
    }

    /// Every method the registries say works on countdown runs to an answer against the
    /// simulated model; the ones the proof names among them.
    #[test]
    fn it_runs_with_every_method_that_serves_it() {
        let task = countdown();
        let x = task.problem(3).unwrap().input;
        let served: Vec<&str> =
            methods::serving(task.as_ref(), &Params::default()).iter().map(|m| m.kind.label()).collect();
        for name in ["io", "cot", "cot-sc", "tot-bfs", "tot-dfs", "mcts"] {
            assert!(served.contains(&name), "{name} works on countdown: {served:?}");
        }
        for name in served {
            let params = Params::new(MethodKind::from_name(name).unwrap());
            let mut engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, &x, params);
            run_sync(&mut engine, run_cmd(), sim(1.0, 5));
            assert!(engine.outcome().is_some(), "{name} finishes");
        }
        // Tree search with a perfect model solves it.
        let params = Params::new(MethodKind::from_name("tot-bfs").unwrap());
        let mut engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, &x, params);
        run_sync(&mut engine, run_cmd(), sim(0.0, 5));
        assert!(engine.outcome().unwrap().solved, "{:?}", engine.outcome());
    }
}
