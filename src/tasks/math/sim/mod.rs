//! The simulated model on `math-demo` and `mc-demo`. It knows each compiled-in
//! problem's worked solution and the typed mistakes listed with it (arithmetic slip,
//! sign error, off-by-one count, missed case, wrong formula), and plays every request
//! from the request's context alone:
//!
//! * cot / io: a mistake happens with a rate that grows with the problem's level
//!   ([`ERROR_BY_LEVEL`]; io more often); which one is drawn among the problem's own.
//!   The reply is the solution up to the wrong step, the wrong step, and its answer.
//! * ReAct: the arithmetic step goes to the calculator (`calc`, or `calculate` when
//!   that is what the request offers), so when its observation holds the right value no
//!   arithmetic slip is made; other kinds of mistakes happen as in cot.
//! * Feedback (self-check): reads the attempt's answer, and if it is one of the typed
//!   wrong answers, catches it with a rate by kind ([`CATCH`]: arithmetic and sign
//!   often, off-by-one and missed cases sometimes, wrong formulas rarely), naming the
//!   kind; it also says "incorrect" of a right attempt now and then ([`FALSE_ALARM`]).
//! * Refine: fixes a mistake the feedback names with high probability; after a bare
//!   "wrong" it solves again; after a false alarm it sometimes talks itself into a mistake.
//! * Reflect: names the kind of mistake (when the feedback did, or when it finds it
//!   itself) and what to do differently; a later cot whose `reflections` name a kind
//!   avoids that kind.
//!
//! `--sim-noise` scales every rate of a mistake (and every rate of missing one).

use serde::Deserialize;

use crate::engine::rng::{stable_hash, SplitMix64};
use crate::engine::sim::SimConfig;
use crate::protocol::{CallError, CallErrorKind, LlmRequest, Purpose};
use crate::tasks::math::answer::{choice_letter, finish_arg, math_answer};
use crate::tasks::math::demo::{self, Calc, Mistake, MistakeKind};
use crate::tasks::math::{mc_demo, MathKind};

/// Chance a chain of thought goes wrong, by level 1-5 (multiple choice: level 3).
pub const ERROR_BY_LEVEL: [f64; 5] = [0.2, 0.3, 0.4, 0.5, 0.6];
/// Share of problems the model holds a misconception about (by seed), and how much more
/// often it errs on them (less often on the others, so the mean rate stays).
const STUBBORN: f64 = 0.3;
const STUBBORN_EXTRA: f64 = 0.3;
/// How much more often a direct (io) answer goes wrong.
const IO_EXTRA: f64 = 0.25;
/// Chance a self-check catches a mistake of each kind.
pub const CATCH: [(MistakeKind, f64); 5] = [
    (MistakeKind::Arithmetic, 0.85),
    (MistakeKind::Sign, 0.75),
    (MistakeKind::OffByOne, 0.5),
    (MistakeKind::MissedCase, 0.45),
    (MistakeKind::WrongFormula, 0.15),
];
/// Chance a self-check calls a right attempt wrong.
pub const FALSE_ALARM: f64 = 0.12;
/// Chance a refinement does not fix a mistake the feedback names.
const REFINE_MISS: f64 = 0.1;
/// Chance a new attempt after a bare "wrong" still goes wrong.
const RESOLVE_MISS: f64 = 0.45;
/// Chance a refinement turns a right answer wrong after a false alarm.
const OVERCORRECT: f64 = 0.3;
/// Chance a trial makes a mistake its reflections warned of anyway.
const REPEAT: f64 = 0.1;
/// Chance a reflection on a wrong answer finds the kind of mistake by itself.
const SELF_FIND: f64 = 0.6;

/// A problem the sim knows, free answer or multiple choice.
struct Script {
    /// Stable hash of the problem text: which problems the model is stubborn on.
    id: u64,
    choice: bool,
    level: u8,
    gold: String,
    options: usize,
    steps: &'static [&'static str],
    calc: Option<Calc>,
    mistakes: &'static [Mistake],
}

/// What an attempt's answer is: right, one of the typed mistakes, or something else.
#[derive(Clone, Copy)]
enum Verdict {
    Right,
    Wrong(&'static Mistake),
    Other,
}

fn sim_error(message: String) -> CallError {
    CallError { kind: CallErrorKind::Sim, message }
}

impl Script {
    fn find(task: &str, problem: &str) -> Option<Script> {
        match MathKind::from_name(task)? {
            MathKind::MathDemo => demo::find(problem).map(|p| Script {
                id: stable_hash(problem.trim().as_bytes()),
                choice: false,
                level: p.level,
                gold: p.answer.to_string(),
                options: 0,
                steps: p.steps,
                calc: p.calc,
                mistakes: p.mistakes,
            }),
            MathKind::McDemo => mc_demo::find(problem).map(|q| Script {
                id: stable_hash(problem.trim().as_bytes()),
                choice: true,
                level: 3,
                gold: q.gold(),
                options: q.options.len(),
                steps: q.steps,
                calc: q.calc,
                mistakes: q.mistakes,
            }),
            _ => None,
        }
    }

    fn error_rate(&self) -> f64 {
        ERROR_BY_LEVEL[usize::from(self.level.clamp(1, 5)) - 1]
    }

    fn final_line(&self, answer: &str) -> String {
        if self.choice {
            format!("The answer is ({answer}).")
        } else {
            format!("The final answer is $\\boxed{{{answer}}}$.")
        }
    }

    /// The lines of the solution with `mistake` (or without one), ending with its answer.
    fn lines(&self, mistake: Option<&Mistake>) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        match mistake {
            Some(m) => {
                lines.extend(self.steps.iter().take(m.step).map(|s| s.to_string()));
                lines.push(m.text.to_string());
                lines.push(self.final_line(m.answer));
            }
            None => {
                lines.extend(self.steps.iter().map(|s| s.to_string()));
                lines.push(self.final_line(&self.gold));
            }
        }
        lines
    }

    fn answer_of(&self, mistake: Option<&Mistake>) -> String {
        mistake.map_or_else(|| self.gold.clone(), |m| m.answer.to_string())
    }

    /// Which answer an attempt (a chain of thought or a trajectory) gives.
    fn judge(&self, attempt: &str) -> Verdict {
        let answer = if self.choice {
            let from = finish_arg(attempt).unwrap_or_else(|| attempt.to_string());
            choice_letter(&from, self.options).map(|c| c.to_string())
        } else {
            finish_arg(attempt).or_else(|| math_answer(attempt))
        };
        let Some(answer) = answer else { return Verdict::Other };
        let same = |a: &str| {
            if self.choice {
                a.trim().eq_ignore_ascii_case(answer.trim())
            } else {
                a.trim() == answer.trim() || crate::grade::equivalent(a, &answer)
            }
        };
        if same(&self.gold) {
            return Verdict::Right;
        }
        self.mistakes.iter().find(|m| same(m.answer)).map_or(Verdict::Other, Verdict::Wrong)
    }

    /// Whether the model holds a misconception about this problem (by seed): it then
    /// errs more often, and always the same way, so voting over samples cannot fix it.
    fn stubborn(&self, cfg: &SimConfig) -> Option<usize> {
        let mut rng = SplitMix64::from_parts(&[cfg.seed, self.id, 0x57b0]);
        let stubborn = rng.chance(STUBBORN);
        let which = rng.below(self.mistakes.len());
        stubborn.then_some(which)
    }

    /// Draw whether a mistake happens (rate `p`, shifted by [`Script::stubborn`]) and
    /// which, leaving out the kinds in `avoid` (each is still made with a small chance)
    /// and, if `no_slips`, arithmetic.
    fn draw(
        &self,
        cfg: &SimConfig,
        rng: &mut SplitMix64,
        p: f64,
        avoid: &[MistakeKind],
        no_slips: bool,
    ) -> Option<&'static Mistake> {
        let stubborn = self.stubborn(cfg);
        let p = match stubborn {
            Some(_) => (p + STUBBORN_EXTRA).min(0.9),
            None => (p - STUBBORN_EXTRA * STUBBORN / (1.0 - STUBBORN)).max(0.05),
        };
        let happens = rng.chance(cfg.rate(p));
        let which = stubborn.unwrap_or_else(|| rng.below(self.mistakes.len()));
        let repeat = rng.chance(cfg.rate(REPEAT));
        if !happens || self.mistakes.is_empty() {
            return None;
        }
        let m = &self.mistakes[which];
        if no_slips && m.kind == MistakeKind::Arithmetic {
            return None;
        }
        if avoid.contains(&m.kind) && !repeat {
            return None;
        }
        Some(m)
    }
}

/// What a math request's context holds (the task's prompts, the feedback and ReAct
/// methods and ReTreVal's prompts write it): each field is read by the requests that
/// use it; a field of the wrong shape is an error naming it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    /// ReTreVal's prompt kind (`"retreval": "solve"`, ...; the key is
    /// `methods::retreval::CONTEXT_KEY`), on ReTreVal's requests only.
    pub retreval: Option<String>,
    /// The task (`math-demo`, `mc-demo`) and the problem's text.
    pub task: String,
    pub problem: String,
    /// Reflexion's reflections on earlier trials.
    pub reflections: Vec<String>,
    /// The attempt feedback, refinement and reflection look at, and its feedback.
    pub attempt: String,
    pub feedback: String,
    /// The tools a ReAct prompt lists.
    pub tools: Vec<String>,
    /// The ReAct step the reply is for (1 when not given), the trajectory so far, and a
    /// thought a person wrote for it (an edit).
    pub step: Option<u64>,
    pub trajectory: String,
    pub thought: String,
    /// ReTreVal: the trace a score judges, the sibling traces a cross critique compares.
    pub trace: String,
    pub siblings: Vec<String>,
    /// ReTreVal: a solve's approach hint, the critique it refines from, and the lessons
    /// and history of earlier problems it is given.
    pub approach: String,
    pub critique: String,
    pub lessons: Vec<String>,
    pub history: Vec<String>,
    /// ReTreVal: most subtasks of a decomposition, and the solved subtasks a composition joins.
    pub max_subtasks: Option<u64>,
    pub subtasks: Vec<Subtask>,
    /// ReTreVal: a memory entry to rewrite and the signals behind it.
    pub entry: String,
    pub signals: Vec<String>,
}

/// A solved subtask a ReTreVal composition is given.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Subtask {
    pub goal: String,
    pub result: String,
}

impl Context {
    /// The context of `request`, or the one line that says which field cannot be read.
    pub fn of(request: &LlmRequest) -> Result<Context, CallError> {
        crate::engine::sim::context("math", request)
    }
}

fn catch_rate(kind: MistakeKind) -> f64 {
    CATCH.iter().find(|(k, _)| *k == kind).map_or(0.5, |(_, r)| *r)
}

/// Whether a feedback text says the attempt is right (`Some(true)`), wrong, or neither.
fn feedback_verdict(feedback: &str) -> Option<bool> {
    let lower = feedback.to_lowercase();
    if let Some(at) = lower.rfind("verdict") {
        let rest = &lower[at..];
        if rest.contains("incorrect") || rest.contains("wrong") {
            return Some(false);
        }
        if rest.contains("correct") {
            return Some(true);
        }
    }
    if lower.contains("incorrect") || lower.contains("is wrong") || lower.contains("not correct") {
        return Some(false);
    }
    lower.contains("is correct").then_some(true)
}

/// Advice after a mistake of a kind.
fn advice(kind: MistakeKind) -> &'static str {
    match kind {
        MistakeKind::Arithmetic => "recompute every calculation, or use the calculator",
        MistakeKind::Sign => "track the signs when moving terms and evaluating powers",
        MistakeKind::OffByOne => "check whether the endpoints are counted",
        MistakeKind::MissedCase => "list every case before concluding",
        MistakeKind::WrongFormula => "check that the formula fits the situation before using it",
    }
}

pub fn answer(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    // ReTreVal's prompts mark themselves; they have their own play (retreval.rs).
    let ctx = Context::of(request)?;
    if let Some(kind) = &ctx.retreval {
        return retreval::answer(cfg, request, &ctx, rng, kind);
    }
    let (task, problem) = (ctx.task.as_str(), ctx.problem.as_str());
    let Some(script) = Script::find(task, problem) else {
        return Err(sim_error(format!(
            "the simulated model knows only the {task} problems compiled in; this one is not among them \
             (run it with a model: --provider ...)"
        )));
    };
    match request.purpose {
        Purpose::Io => {
            let p = (script.error_rate() + IO_EXTRA).min(0.95);
            let m = script.draw(cfg, rng, p, &[], false);
            Ok(script.final_line(&script.answer_of(m)))
        }
        Purpose::Cot => {
            let avoid: Vec<MistakeKind> = ctx.reflections.iter().flat_map(|r| MistakeKind::named_in(r)).collect();
            let m = script.draw(cfg, rng, script.error_rate(), &avoid, false);
            let mut lines = script.lines(m);
            if !avoid.is_empty() {
                let kinds: Vec<&str> = avoid.iter().map(|k| k.label()).collect();
                lines.insert(0, format!("This time I watch for a {}.", kinds.join(" and a ")));
            }
            Ok(lines.join("\n"))
        }
        Purpose::Act => Ok(act(cfg, request, &ctx, rng, &script)),
        Purpose::Feedback => Ok(feedback(cfg, rng, &script, &ctx.attempt)),
        Purpose::Refine => Ok(refine(cfg, rng, &script, &ctx.attempt, &ctx.feedback)),
        Purpose::Reflect => Ok(reflect(cfg, rng, &script, &ctx.attempt, &ctx.feedback)),
        other => Err(sim_error(format!("{task} has no {} requests", other.label()))),
    }
}

/// Check an attempt step by step and give a verdict.
fn feedback(cfg: &SimConfig, rng: &mut SplitMix64, script: &Script, attempt: &str) -> String {
    let verdict = script.judge(attempt);
    let finds = rng.next_f64();
    let which = rng.below(script.mistakes.len().max(1));
    match verdict {
        Verdict::Wrong(m) if finds >= cfg.rate(1.0 - catch_rate(m.kind)) => format!(
            "Checking step by step: step {} is wrong. \"{}\" is a {}: I should {}.\nVERDICT: incorrect",
            m.step + 1,
            m.text,
            m.kind.label(),
            advice(m.kind)
        ),
        Verdict::Other if finds >= cfg.rate(0.5) => {
            "Checking step by step: the final answer does not follow from the steps.\nVERDICT: incorrect".to_string()
        }
        Verdict::Right if finds < cfg.rate(FALSE_ALARM) && !script.mistakes.is_empty() => {
            let kind = script.mistakes[which].kind;
            format!(
                "Checking step by step: step {} looks doubtful; it may be a {}.\nVERDICT: incorrect",
                script.mistakes[which].step + 1,
                kind.label()
            )
        }
        _ => "Checking step by step: each step follows from the one before, and the answer answers the question.\n\
              VERDICT: correct"
            .to_string(),
    }
}

/// A new complete attempt after feedback.
fn refine(cfg: &SimConfig, rng: &mut SplitMix64, script: &Script, attempt: &str, feedback: &str) -> String {
    let verdict = script.judge(attempt);
    let named = MistakeKind::named_in(feedback);
    let says = feedback_verdict(feedback);
    let roll = rng.next_f64();
    let fresh = script.draw(cfg, rng, script.error_rate(), &[], false);
    let alternative = |m: &'static Mistake| script.mistakes.iter().find(|o| o.answer != m.answer).or(Some(m));
    let outcome: Option<&Mistake> = match verdict {
        Verdict::Wrong(m) if named.contains(&m.kind) => (roll < cfg.rate(REFINE_MISS)).then_some(m),
        Verdict::Wrong(m) if says == Some(false) => (roll < cfg.rate(RESOLVE_MISS)).then(|| alternative(m)).flatten(),
        Verdict::Wrong(m) => Some(m),
        Verdict::Right if says == Some(false) && roll < cfg.rate(OVERCORRECT) => {
            script.mistakes.iter().find(|m| named.contains(&m.kind)).or(script.mistakes.first())
        }
        Verdict::Right => None,
        Verdict::Other => fresh,
    };
    let mut lines = vec![if says == Some(true) {
        "The check found no problem, so I keep my solution.".to_string()
    } else {
        "Taking the feedback into account, I work through it again.".to_string()
    }];
    lines.extend(script.lines(outcome));
    lines.join("\n")
}

/// A short reflection on a failed attempt, naming the kind of mistake when it is found.
fn reflect(cfg: &SimConfig, rng: &mut SplitMix64, script: &Script, attempt: &str, feedback: &str) -> String {
    let named = MistakeKind::named_in(feedback);
    let finds = rng.chance(1.0 - cfg.rate(1.0 - SELF_FIND));
    match script.judge(attempt) {
        Verdict::Wrong(m) if named.contains(&m.kind) || finds => format!(
            "My answer {} was wrong because of a {} in the step \"{}\". Next time I will {}.",
            m.answer,
            m.kind.label(),
            m.text,
            advice(m.kind)
        ),
        _ => "I could not tell where the attempt went wrong. Next time I will work more slowly and check each step \
              before the next."
            .to_string(),
    }
}

/// The calculator tool the request offers: `calc` if it has one, else `calculate`.
fn calculator(request: &LlmRequest, ctx: &Context) -> Option<String> {
    let mut names: Vec<String> = request.tools.iter().map(|t| t.name.clone()).collect();
    names.extend(ctx.tools.iter().cloned());
    ["calc", "calculate"].iter().find(|want| names.iter().any(|n| n.eq_ignore_ascii_case(want))).map(|s| s.to_string())
}

/// The observation that followed the first calculator action of a trajectory, if any.
fn calc_observation(trajectory: &str) -> Option<String> {
    let mut lines = trajectory.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("action") && (lower.contains("calc[") || lower.contains("calculate[")) {
            let obs = lines.find(|l| l.to_ascii_lowercase().starts_with("observation"))?;
            return Some(obs.split_once(':').map_or(obs, |(_, rest)| rest).trim().to_string());
        }
    }
    None
}

/// Whether `text` states the number `value` (as an integer, a fraction or a decimal):
/// a calculator's observation, however it writes the result.
fn holds_value(text: &str, value: &str) -> bool {
    use crate::arith::expr::eval_calc;
    let Ok(want) = eval_calc(value) else { return false };
    let number_char = |c: char| c.is_ascii_digit() || c == '.' || c == '/';
    let mut tokens = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if number_char(c) || (c == '-' && current.is_empty()) {
            current.push(c);
        } else {
            if current.chars().any(|c| c.is_ascii_digit()) {
                tokens.push(std::mem::take(&mut current));
            }
            current.clear();
            if c == '-' {
                current.push(c);
            }
        }
    }
    tokens.iter().take(64).any(|t| eval_calc(t.trim_end_matches(['.', '/'])).is_ok_and(|v| v == want))
}

/// One ReAct step: the calculator for the arithmetic step, then finish.
fn act(cfg: &SimConfig, request: &LlmRequest, ctx: &Context, rng: &mut SplitMix64, script: &Script) -> String {
    let step = ctx.step.unwrap_or(1);
    let trajectory = ctx.trajectory.as_str();
    let edited = ctx.thought.as_str();
    let tool = calculator(request, ctx);
    let observation = calc_observation(trajectory);
    let finish = |answer: &str| format!("Action {step}: finish[{answer}]");
    // A person wrote this step's thought: follow an answer it states, else go on with the plan.
    if !edited.is_empty() {
        if let Some(answer) = crate::tasks::math::answer::last_boxed(edited) {
            return finish(&answer);
        }
    }
    let (calc, tool) = match (script.calc, tool) {
        (Some(calc), Some(tool)) if observation.is_none() && step < 6 => (calc, tool),
        _ => {
            // The calculator has answered (or there is none): finish.
            let calc_ok = matches!((&observation, script.calc), (Some(o), Some(c)) if holds_value(o, c.value));
            let m = script.draw(cfg, rng, script.error_rate(), &[], calc_ok);
            let mut lines = script.lines(m);
            let answer = script.answer_of(m);
            lines.pop();
            let after = match (script.calc, &observation) {
                (Some(c), Some(_)) => c.step + 1,
                _ => 0,
            };
            let mut thought: Vec<String> = Vec::new();
            match (&observation, calc_ok) {
                (Some(_), true) => {
                    thought.push(format!("The calculator gives {}.", script.calc.map_or("", |c| c.value)))
                }
                (Some(_), false) => thought.push("The calculator did not help; I work it out by hand.".into()),
                (None, _) => {}
            }
            let from = match m {
                Some(m) if m.step < after => lines.len() - 1,
                _ => after.min(lines.len().saturating_sub(1)),
            };
            thought.extend(lines.into_iter().skip(from));
            if script.choice {
                thought.push(format!("So the answer is option {answer}."));
            }
            let thought = thought.join(" ");
            if !edited.is_empty() {
                return finish(&answer);
            }
            return format!("{thought}\n{}", finish(&answer));
        }
    };
    let before: Vec<&str> = script.steps.iter().take(calc.step).copied().collect();
    let action = format!("Action {step}: {tool}[{}]", calc.expr);
    if !edited.is_empty() {
        return action;
    }
    let mut thought = before.join(" ");
    if !thought.is_empty() {
        thought.push(' ');
    }
    thought.push_str(&format!("Next I need {}; I will compute it with the calculator.", calc.expr));
    format!("{thought}\n{action}")
}

#[cfg(test)]
mod tests;

pub mod retreval;
