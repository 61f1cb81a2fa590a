//! The simulated model's answers to ReTreVal's prompts on `math-demo` and `mc-demo`
//! (every request whose context carries `"retreval": "<kind>"`; see the table in
//! `engine::methods::retreval` and the shared contract: `solve` and `rewrite` besides).
//! The play is built so the method behaves as the paper describes: mistakes recur by
//! approach, and a memory that names them makes them rarer.
//!
//! ## Approach weaknesses (a `solve` under approach A)
//! Each approach has a typical kind of mistake ([`WEAKNESS`]) and, for the run's seed, a
//! rate drawn once in [`RATE_MIN`]..[`RATE_MAX`] ([`weakness_rate`]):
//!
//! | approach      | typical mistake (`MistakeKind`) | cause it is filed under (`FailureCause`) |
//! |---------------|---------------------------------|------------------------------------------|
//! | algebraic     | sign error                      | `logic_error`                            |
//! | casework      | missed case                     | `incomplete_reasoning`                   |
//! | geometric     | wrong formula                   | `wrong_constraint`                       |
//! | numeric       | arithmetic slip                 | `arithmetic_error`                       |
//! | combinatorial | off-by-one count                | `off_by_one`                             |
//!
//! The mapping MistakeKind ↔ FailureCause ([`CAUSES`], [`cause_of`], [`kind_of`]) is
//! one to one; `missing_step` and `other` name no kind. A solve draws, in this order:
//! 1. the approach's typical mistake, if the problem lists one of that kind (which one
//!    of them is fixed per seed, problem and approach), with the approach's rate;
//! 2. otherwise a mistake of the first kind the problem lists in the approach's
//!    [`habit_order`] (casework: missed case, off-by-one, wrong formula, sign,
//!    arithmetic; ...) with [`FALLBACK`] × the approach's rate — an approach that
//!    does not fit the problem's pitfalls errs less, and the way closest to its habit;
//! 3. a background mistake, any of the problem's, with [`BACKGROUND`] × the level
//!    rate of `math.rs` ([`super::ERROR_BY_LEVEL`]).
//!
//! So the same approach fails the same way across problems. Approach `other` (or no
//! hint) has no weakness, only the background.
//!
//! **Learnable**: a mistake whose cause is named, together with the solve's approach,
//! on one line of the context's `"lessons"` or `"history"` (the cause's name or label:
//! `casework approach, incomplete_reasoning: ...`, `Earlier attempt failed: incomplete
//! reasoning in casework approach: ...`) is made at [`LESSON`] × its rate.
//!
//! **Tools**: in a tool-augmented solve (purpose `act`) the arithmetic step goes to the
//! offered calculator (`calc` or `calculate`) first; once the observation holds the
//! right value no arithmetic slip is made. Without tools (`--no-tools`: purpose `cot`)
//! slips happen at their rate. The first thought names the approach
//! (`Approach: casework — split the problem into cases ...`), in words that
//! `approach_from_trace` counts.
//!
//! **Refinement** (`"critique"` and `"attempt"` in the context): an attempt whose
//! mistake the critique names (by its kind or its cause) is fixed but with chance
//! [`REFINE_MISS`]; a right attempt stays right; a mistake the critique does not name
//! is kept with chance [`ANCHOR`] (the model anchors on its own attempt), else the
//! refinement is a fresh solve under the model above.
//!
//! ## The other kinds
//! * `complexity`: the problem's level (multiple choice: 3) with noise — a level 1–2
//!   problem is over-estimated by 1 or 2 with chance [`OVERESTIMATE`] (the paper notes
//!   this), a level 3–5 one is off by one either way with chance [`MISESTIMATE`] —
//!   as a reason and `Complexity: N`.
//! * `local`: a 0–10 self-assessment, `Score: N`: a right attempt 7–9 (now and then a
//!   doubtful 6); a wrong one 2–4 when the model notices its mistake (the chance is the
//!   self-check catch rate of its kind, [`super::CATCH`]), else 6–8; an attempt with no
//!   recognisable answer 3–5.
//! * `cross`: `Versus K: N` per sibling and a `Critique:` line. Each attempt's
//!   standing is 0.6 × (it looks right: right, or wrong with its mistake unnoticed) +
//!   0.4 × (its answer is the majority answer); N = 5 + 5 × (standing − sibling's
//!   standing) ± 1, clamped. The critique names a noticed mistake by kind and cause.
//! * `approach`: `Approach: NAME`, the approach the trace states (else the keyword guess).
//! * `validate`: like the self-check (`Feedback`) play: a typed mistake is caught with
//!   the chance of its kind ([`super::CATCH`]: arithmetic 0.85, sign 0.75, off-by-one
//!   0.5, missed case 0.45, wrong formula 0.15); a right attempt is called wrong with
//!   chance [`super::FALSE_ALARM`]; an attempt with no answer is always caught
//!   (`incomplete_reasoning`). `VERDICT:` and, when incorrect, `CAUSE:` (mapped as above).
//! * `failure`: `Cause:`, `Approach:` and `Summary:` lines; the cause is the mistake's
//!   (else the one the feedback names), the summary names the approach and what to
//!   check (`with casework, list every case, including the boundary ones, before adding
//!   them up; here ... was a missed case`).
//! * `decompose`: 2–3 subtasks (at most `max_subtasks`) from the worked steps, each
//!   with `Depends on:` (the one before) and `Exit condition:`. A subtask's own solve
//!   (its problem is `subtask_problem`'s text) works those steps, under the same model
//!   restricted to the mistakes in them, and finishes with the step's result (the last
//!   subtask: the answer).
//! * `compose`: the answer from the subtasks' results: a typed mistake in a result
//!   carries through, right results give the right answer; results it cannot read are
//!   solved again at the level rate.
//! * `rewrite`: one line, `<approach> approach, <cause>: <strategy>`, the strategy of
//!   the entry's cause sharpened by its latest signal (so a rewritten lesson still
//!   names approach and cause and keeps teaching).
//!
//! Every rate of a mistake (and of missing one) is multiplied by `--sim-noise`, as
//! elsewhere. Randomness comes from the seed and the request only.

mod habits;

pub use habits::*;

use std::ops::Range;

use super::{advice, calc_observation, calculator, catch_rate, holds_value, sim_error, Context, Script, Verdict};
use crate::engine::methods::retreval::{approach_from_trace, parse_approach, Approach, FailureCause, CONTEXT_KEY};
use crate::engine::rng::SplitMix64;
use crate::engine::sim::SimConfig;
use crate::protocol::{CallError, LlmRequest, Purpose};
use crate::tasks::math::answer::{choice_letter, finish_arg, math_answer};
use crate::tasks::math::demo::{Mistake, MistakeKind};

/// One subtask of the sim's decomposition of a problem: which worked steps it covers.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Group {
    steps: Range<usize>,
    goal: String,
    exit: String,
    last: bool,
}

/// What a goal phrase of a worked step is: the words before its colon when they read
/// like an instruction, else the step itself.
fn step_goal(step: &str) -> String {
    let step = step.trim().trim_end_matches('.');
    match step.split_once(": ") {
        Some((head, _)) if head.split_whitespace().count() >= 2 && head.chars().count() <= 80 => head.to_string(),
        _ => format!("work out this step: {step}"),
    }
}

/// The sim's decomposition of a problem into 2 to 3 subtasks (at most `max`), over
/// its worked steps in order.
fn plan(script: &Script, max: usize) -> Vec<Group> {
    let n = script.steps.len();
    let k = if n >= 3 { 3.min(max.max(2)) } else { 2 };
    let mut groups = Vec::with_capacity(k);
    let mut start = 0;
    for i in 0..k {
        let end = if i + 1 == k { n } else { (start + (n - start).div_ceil(k - i)).min(n) };
        let steps = start..end;
        let last = i + 1 == k;
        let mut goals: Vec<String> = script.steps[steps.clone()].iter().map(|s| step_goal(s)).collect();
        if last {
            goals.push("state the final answer".into());
        }
        let mut goal = goals.join("; then ");
        if let Some(first) = goal.get(..1) {
            goal = format!("{}{}", first.to_uppercase(), &goal[1..]);
        }
        let exit = if last {
            "the final answer to the main problem is stated in the required form".to_string()
        } else {
            "the result of this step is written down as one equation or value".to_string()
        };
        groups.push(Group { steps, goal, exit, last });
        start = end;
    }
    groups
}

/// What a request's problem is: a whole problem, or one subtask of one (a subtask's
/// problem text is `subtask_problem`'s: the main problem, results, the goal).
pub(super) struct Target {
    script: Script,
    part: Option<Group>,
}

impl Target {
    fn resolve(task: &str, problem: &str) -> Option<Target> {
        if let Some(script) = Script::find(task, problem) {
            return Some(Target { script, part: None });
        }
        let rest = problem.trim_start().strip_prefix("Main problem:")?;
        let end =
            ["\n\nResults already found:", "\n\nSolve only this subtask:"].iter().filter_map(|m| rest.find(m)).min()?;
        let script = Script::find(task, &rest[..end])?;
        let goal = rest.split_once("Solve only this subtask:")?.1;
        let goal = goal.split_once("\nIt is done when:").map_or(goal, |(g, _)| g).trim();
        let part = (2..=4).flat_map(|max| plan(&script, max)).find(|g| g.goal == goal)?;
        Some(Target { script, part: Some(part) })
    }

    /// The mistakes this target can go wrong with.
    fn mistakes(&self) -> Vec<&'static Mistake> {
        match &self.part {
            None => self.script.mistakes.iter().collect(),
            Some(g) => self
                .script
                .mistakes
                .iter()
                .filter(|m| g.steps.contains(&m.step) || (g.last && m.step >= g.steps.start))
                .collect(),
        }
    }

    /// The worked lines (up to and with the mistake), without the final line, and the
    /// answer (a subtask that is not the last: its result).
    fn worked(&self, mistake: Option<&'static Mistake>) -> (Vec<String>, String) {
        let range = self.part.as_ref().map_or(0..self.script.steps.len(), |g| g.steps.clone());
        let mut lines: Vec<String> = Vec::new();
        match mistake {
            Some(m) => {
                lines.extend(self.script.steps[range.start..m.step.max(range.start)].iter().map(|s| s.to_string()));
                lines.push(m.text.to_string());
            }
            None => lines.extend(self.script.steps[range.clone()].iter().map(|s| s.to_string())),
        }
        let last = self.part.as_ref().is_none_or(|g| g.last);
        let answer = if last {
            self.script.answer_of(mistake)
        } else {
            let line = lines.last().cloned().unwrap_or_default();
            line.replace('[', "(").replace(']', ")")
        };
        (lines, answer)
    }

    /// The closing line of a written solution.
    fn closing(&self, answer: &str) -> String {
        match &self.part {
            Some(g) if !g.last => format!("Result: {answer}"),
            _ => self.script.final_line(answer),
        }
    }

    /// Whether an attempt at this target is right, wrong by a typed mistake, or neither.
    fn judge(&self, attempt: &str) -> Verdict {
        let Some(g) = &self.part else { return self.script.judge(attempt) };
        let squashed = squash(attempt);
        if let Some(m) = self.mistakes().into_iter().find(|m| squashed.contains(&squash(m.text))) {
            return Verdict::Wrong(m);
        }
        if g.last {
            return self.script.judge(attempt);
        }
        let (_, result) = self.worked(None);
        if squashed.contains(&squash(&result)) {
            Verdict::Right
        } else {
            Verdict::Other
        }
    }

    /// The answer an attempt gives, normalised for comparing attempts.
    fn answer_in(&self, attempt: &str) -> Option<String> {
        if let Some(g) = &self.part {
            if !g.last {
                let found = finish_arg(attempt).or_else(|| {
                    attempt.lines().rev().find_map(|l| l.trim().strip_prefix("Result:").map(str::to_string))
                })?;
                return Some(squash(&found));
            }
        }
        if self.script.choice {
            let from = finish_arg(attempt).unwrap_or_else(|| attempt.to_string());
            choice_letter(&from, self.script.options).map(|c| c.to_string())
        } else {
            let answer = finish_arg(attempt).or_else(|| math_answer(attempt))?;
            // Equivalent forms of a typed answer read as that answer.
            let same = |a: &str| a.trim() == answer.trim() || crate::grade::equivalent(a, &answer);
            let known = std::iter::once(self.script.gold.as_str())
                .chain(self.script.mistakes.iter().map(|m| m.answer))
                .find(|a| same(a));
            Some(squash(known.unwrap_or(&answer)))
        }
    }

    fn level(&self) -> u8 {
        let level = self.script.level.clamp(1, 5);
        if self.part.is_some() {
            level.saturating_sub(1).max(1)
        } else {
            level
        }
    }
}

/// The sim's answer to a ReTreVal request of kind `kind`.
pub(super) fn answer(
    cfg: &SimConfig,
    request: &LlmRequest,
    ctx: &Context,
    rng: &mut SplitMix64,
    kind: &str,
) -> Result<String, CallError> {
    let (task, problem) = (ctx.task.as_str(), ctx.problem.as_str());
    let Some(target) = Target::resolve(task, problem) else {
        return Err(sim_error(format!(
            "the simulated model knows only the {task} problems compiled in (and its own subtasks of them); this \
             ReTreVal {kind} request is about another one (run it with a model: --provider ...)"
        )));
    };
    match kind {
        "complexity" => Ok(complexity(cfg, rng, &target)),
        "solve" if request.purpose == Purpose::Act => Ok(act(cfg, request, ctx, rng, &target)),
        "solve" => Ok(cot(cfg, ctx, rng, &target)),
        "local" => Ok(local(cfg, rng, &target, &ctx.trace)),
        "cross" => {
            let siblings: Vec<&str> = ctx.siblings.iter().map(String::as_str).collect();
            Ok(cross(cfg, rng, &target, &ctx.trace, &siblings))
        }
        "approach" => Ok(format!("Approach: {}", stated_approach(&ctx.trace))),
        "validate" => Ok(validate(cfg, rng, &target, &ctx.attempt)),
        "failure" => Ok(failure(&target, &ctx.attempt, &ctx.feedback)),
        "decompose" => Ok(decompose(&target, ctx.max_subtasks.unwrap_or(3) as usize)),
        "compose" => Ok(compose(cfg, ctx, rng, &target)),
        "rewrite" => Ok(rewrite(ctx)),
        other => Err(sim_error(format!(
            "the simulated model does not know the ReTreVal prompt kind {other:?} (context field {CONTEXT_KEY:?})"
        ))),
    }
}

/// The approach a trace states on an `Approach:` line, else the keyword guess.
fn stated_approach(trace: &str) -> Approach {
    trace
        .lines()
        .find(|l| l.to_lowercase().contains("approach:"))
        .and_then(parse_approach)
        .unwrap_or_else(|| approach_from_trace(trace))
}

fn complexity(cfg: &SimConfig, rng: &mut SplitMix64, target: &Target) -> String {
    let level = target.level();
    let u = rng.next_f64();
    let more = rng.chance(0.4);
    let estimate = if level <= 2 {
        if u < cfg.rate(OVERESTIMATE) {
            level + 1 + u8::from(more)
        } else {
            level
        }
    } else if u < cfg.rate(MISESTIMATE) / 2.0 {
        level - 1
    } else if u < cfg.rate(MISESTIMATE) {
        level + 1
    } else {
        level
    };
    let estimate = estimate.clamp(1, 5);
    let steps = target.part.as_ref().map_or(target.script.steps.len(), |g| g.steps.len().max(1));
    let cases = target.script.mistakes.iter().any(|m| m.kind == MistakeKind::MissedCase);
    let reason = match estimate {
        1 => "It is a direct computation once the numbers are written down.".to_string(),
        2 => format!("A short chain of about {steps} standard steps."),
        3 => format!("About {steps} steps, and one idea to find before they go through."),
        4 => format!(
            "A longer chain of about {steps} steps{}, where a slip is easy.",
            if cases { " with cases to keep apart" } else { "" }
        ),
        _ => "Several ideas and cases to combine; it is easy to lose one.".to_string(),
    };
    format!("{reason}\nComplexity: {estimate}")
}

/// Draw the mistake of a fresh solve under `approach` (see the module doc), warned of
/// `warned`, with no arithmetic slip when `no_slips`.
fn fresh(
    cfg: &SimConfig,
    rng: &mut SplitMix64,
    target: &Target,
    approach: Approach,
    warned: &[MistakeKind],
    no_slips: bool,
) -> Option<&'static Mistake> {
    let mistakes = target.mistakes();
    let rate = weakness_rate(cfg.seed, approach);
    let habit = SplitMix64::from_parts(&[cfg.seed, target.script.id, approach as u64, 0x4ab1]).next_u64() as usize;
    let mut candidates: Vec<(&'static Mistake, f64)> = Vec::new();
    if let Some(kind) = typical(approach) {
        let of_kind: Vec<&'static Mistake> = mistakes.iter().copied().filter(|m| m.kind == kind).collect();
        if !of_kind.is_empty() {
            candidates.push((of_kind[habit % of_kind.len()], rate));
        } else {
            if let Some(m) = habit_order(approach).iter().find_map(|k| mistakes.iter().copied().find(|m| m.kind == *k))
            {
                candidates.push((m, rate * FALLBACK));
            }
        }
    }
    let level_rate = super::ERROR_BY_LEVEL[usize::from(target.level()) - 1];
    let background = rng.below(mistakes.len().max(1));
    if let Some(m) = mistakes.get(background) {
        candidates.push((m, level_rate * BACKGROUND));
    }
    // Draw every roll, so one candidate's outcome does not shift another's.
    let rolls: Vec<f64> = (0..2).map(|_| rng.next_f64()).collect();
    candidates.into_iter().zip(rolls).find_map(|((m, p), roll)| {
        let p = if warned.contains(&m.kind) { p * LESSON } else { p };
        let slip_avoided = no_slips && m.kind == MistakeKind::Arithmetic;
        (roll < cfg.rate(p) && !slip_avoided).then_some(m)
    })
}

/// The solve's approach hint (`other` when there is none).
fn hint(ctx: &Context) -> Approach {
    Approach::from_word(&ctx.approach).unwrap_or(Approach::Other)
}

/// The outcome of a solve (fresh or a refinement) and, for a refinement, the line that
/// says what it does about the critique.
fn outcome(
    cfg: &SimConfig,
    ctx: &Context,
    rng: &mut SplitMix64,
    target: &Target,
    no_slips: bool,
) -> (Option<&'static Mistake>, Option<String>) {
    let approach = hint(ctx);
    let warned = warned_of(ctx, approach);
    let critique = ctx.critique.as_str();
    let attempt = ctx.attempt.as_str();
    let roll = rng.next_f64();
    let fresh = fresh(cfg, rng, target, approach, &warned, no_slips);
    if critique.is_empty() && attempt.is_empty() {
        return (fresh, None);
    }
    let named = kinds_named(critique);
    match target.judge(attempt) {
        Verdict::Wrong(m) if named.contains(&m.kind) => {
            let kept = roll < cfg.rate(REFINE_MISS) && !(no_slips && m.kind == MistakeKind::Arithmetic);
            let line = format!("The critique points to a {}; I redo that step carefully.", m.kind.label());
            (kept.then_some(m), Some(line))
        }
        Verdict::Right => (None, Some("The earlier attempt holds up; I keep its answer and recheck each step.".into())),
        // A vague critique anchors the model on its own attempt: it often keeps the mistake.
        Verdict::Wrong(m) if roll < cfg.rate(ANCHOR) => {
            (Some(m), Some("The critique does not say where it went wrong; I go over my steps again.".into()))
        }
        _ => (fresh, Some("The critique does not say where it went wrong, so I work through it again.".into())),
    }
}

/// Lines that say which lessons the solve keeps in mind.
fn heeding(ctx: &Context) -> Option<String> {
    let warned = warned_of(ctx, hint(ctx));
    (!warned.is_empty()).then(|| {
        let causes: Vec<&str> = warned.iter().map(|k| cause_of(*k).label()).collect();
        format!("From earlier problems I watch for: {}.", causes.join(", "))
    })
}

/// A solve without tools: the whole solution in one reply.
fn cot(cfg: &SimConfig, ctx: &Context, rng: &mut SplitMix64, target: &Target) -> String {
    let (mistake, refining) = outcome(cfg, ctx, rng, target, false);
    let (lines, answer) = target.worked(mistake);
    let mut out = vec![intro(hint(ctx)).to_string()];
    out.extend(heeding(ctx));
    out.extend(refining);
    out.extend(lines);
    out.push(target.closing(&answer));
    out.join("\n")
}

/// One step of a tool-augmented solve: the calculator for the arithmetic step (when
/// the target has it), then finish.
fn act(cfg: &SimConfig, request: &LlmRequest, ctx: &Context, rng: &mut SplitMix64, target: &Target) -> String {
    let step = ctx.step.unwrap_or(1);
    let trajectory = ctx.trajectory.as_str();
    let edited = ctx.thought.as_str();
    let finish = |answer: &str| format!("Action {step}: finish[{answer}]");
    // A person wrote this step's thought: follow an answer it states, else go on.
    if let Some(answer) = crate::tasks::math::answer::last_boxed(edited) {
        return finish(&answer);
    }
    let observation = calc_observation(trajectory);
    let range = target.part.as_ref().map_or(0..target.script.steps.len(), |g| g.steps.clone());
    let calc = target.script.calc.filter(|c| range.contains(&c.step));
    let mut thought: Vec<String> = Vec::new();
    if step <= 1 {
        thought.push(intro(hint(ctx)).to_string());
        thought.extend(heeding(ctx));
    }
    if let (Some(calc), Some(tool), None, true) = (calc, calculator(request, ctx), &observation, step < 6) {
        let action = format!("Action {step}: {tool}[{}]", calc.expr);
        if !edited.is_empty() {
            return action;
        }
        thought.extend(script_lines(target, range.start..calc.step));
        thought.push(format!("Next I need {}; I hand it to the {tool} tool.", calc.expr));
        return format!("{}\n{action}", thought.join(" "));
    }
    let calc_ok = matches!((&observation, calc), (Some(o), Some(c)) if holds_value(o, c.value));
    let (mistake, refining) = outcome(cfg, ctx, rng, target, calc_ok);
    let (lines, answer) = target.worked(mistake);
    if !edited.is_empty() {
        return finish(&answer);
    }
    thought.extend(refining);
    // After the tool, the lines from the calculated step on (or the mistake, if before it).
    let after = match (calc, &observation) {
        (Some(c), Some(_)) => c.step - range.start,
        _ => 0,
    };
    match (&observation, calc_ok) {
        (Some(_), true) => thought.push(format!("The tool gives {}.", calc.map_or("", |c| c.value))),
        (Some(_), false) => thought.push("The tool did not help; I work it out by hand.".into()),
        (None, _) => {}
    }
    let from = match mistake {
        Some(m) if m.step < range.start + after => lines.len() - 1,
        _ => after.min(lines.len().saturating_sub(1)),
    };
    thought.extend(lines.into_iter().skip(from));
    if target.script.choice && target.part.as_ref().is_none_or(|g| g.last) {
        thought.push(format!("So the answer is option {answer}."));
    }
    format!("{}\n{}", thought.join(" "), finish(&answer))
}

fn script_lines(target: &Target, range: Range<usize>) -> Vec<String> {
    target.script.steps.get(range).unwrap_or(&[]).iter().map(|s| s.to_string()).collect()
}

/// Whether the model notices a mistake of this kind when it looks (the self-check rate).
fn notices(cfg: &SimConfig, rng: &mut SplitMix64, kind: MistakeKind) -> bool {
    rng.next_f64() >= cfg.rate(1.0 - catch_rate(kind))
}

fn local(cfg: &SimConfig, rng: &mut SplitMix64, target: &Target, trace: &str) -> String {
    let noise = rng.below(3) as i64 - 1;
    let doubt = rng.chance(cfg.rate(DOUBT));
    let verdict = target.judge(trace);
    let (score, why) = match verdict {
        Verdict::Right if doubt => {
            (6, "The steps seem to follow, but I am not fully sure of the last one.".to_string())
        }
        Verdict::Right => {
            (8 + noise, "Each step follows from the one before and the answer answers the question.".into())
        }
        Verdict::Wrong(m) if notices(cfg, rng, m.kind) => (
            3 + noise,
            format!("The step \"{}\" looks like a {}; the answer is doubtful.", short(m.text, 120), m.kind.label()),
        ),
        Verdict::Wrong(_) => (7 + noise, "The steps look right and the answer is stated.".into()),
        Verdict::Other => (4 + noise, "I cannot see the attempt reach a clear answer.".into()),
    };
    format!("{why}\nScore: {}", score.clamp(0, 10))
}

fn cross(cfg: &SimConfig, rng: &mut SplitMix64, target: &Target, trace: &str, siblings: &[&str]) -> String {
    let all: Vec<&str> = std::iter::once(trace).chain(siblings.iter().copied()).collect();
    let answers: Vec<Option<String>> = all.iter().map(|t| target.answer_in(t)).collect();
    let mut counts: Vec<(&String, usize)> = Vec::new();
    for a in answers.iter().flatten() {
        match counts.iter_mut().find(|(b, _)| *b == a) {
            Some((_, n)) => *n += 1,
            None => counts.push((a, 1)),
        }
    }
    let top = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let leaders: Vec<&String> = counts.iter().filter(|(_, n)| *n == top).map(|(a, _)| *a).collect();
    let majority = (top >= 2 && leaders.len() == 1).then(|| leaders[0].clone());
    let mut noticed: Option<&'static Mistake> = None;
    let standing: Vec<f64> = all
        .iter()
        .zip(&answers)
        .enumerate()
        .map(|(i, (t, a))| {
            let looks_right = match target.judge(t) {
                Verdict::Right => 1.0,
                Verdict::Wrong(m) => {
                    let seen = notices(cfg, rng, m.kind);
                    if i == 0 && seen {
                        noticed = Some(m);
                    }
                    if seen {
                        0.0
                    } else {
                        1.0
                    }
                }
                Verdict::Other => 0.3,
            };
            let agrees = if a.is_some() && *a == majority { 1.0 } else { 0.0 };
            0.6 * looks_right + 0.4 * agrees
        })
        .collect();
    let mut lines = Vec::new();
    for (k, s) in standing.iter().enumerate().skip(1) {
        let noise = rng.below(3) as f64 - 1.0;
        let n = (5.0 + 5.0 * (standing[0] - s) + noise).round().clamp(0.0, 10.0);
        lines.push(format!("Versus {k}: {n}"));
    }
    let critique = match (noticed, &answers[0], &majority) {
        (Some(m), _, _) => format!(
            "the step \"{}\" is a {} ({}); {}.",
            short(m.text, 120),
            m.kind.label(),
            cause_of(m.kind).name(),
            advice(m.kind)
        ),
        (None, None, _) => "it does not reach a clear final answer; it needs to finish the work.".to_string(),
        (None, Some(a), Some(major)) if a != major => {
            "its answer differs from most of the other attempts; the final steps need rechecking.".to_string()
        }
        _ => "it agrees with the others; its weakest point is that it does not double-check the last step.".into(),
    };
    lines.push(format!("Critique: {critique}"));
    lines.join("\n")
}

fn validate(cfg: &SimConfig, rng: &mut SplitMix64, target: &Target, attempt: &str) -> String {
    let finds = rng.next_f64();
    let which = rng.below(target.script.mistakes.len().max(1));
    match target.judge(attempt) {
        Verdict::Wrong(m) if finds >= cfg.rate(1.0 - catch_rate(m.kind)) => format!(
            "Checking step by step: the step \"{}\" is wrong; it is a {}: I should {}.\nVERDICT: incorrect\nCAUSE: {}",
            short(m.text, 160),
            m.kind.label(),
            advice(m.kind),
            cause_of(m.kind).name()
        ),
        Verdict::Other if target.answer_in(attempt).is_none() => {
            "Checking step by step: the attempt stops before it reaches a final answer.\nVERDICT: incorrect\n\
             CAUSE: incomplete_reasoning"
                .to_string()
        }
        Verdict::Other if finds >= cfg.rate(1.0 - OTHER_CAUGHT) => {
            "Checking step by step: the final answer does not follow from the steps.\nVERDICT: incorrect\n\
             CAUSE: logic_error"
                .to_string()
        }
        Verdict::Right if finds < cfg.rate(super::FALSE_ALARM) && !target.script.mistakes.is_empty() => {
            let m = &target.script.mistakes[which];
            format!(
                "Checking step by step: step {} looks doubtful; it may be a {}.\nVERDICT: incorrect\nCAUSE: {}",
                m.step + 1,
                m.kind.label(),
                cause_of(m.kind).name()
            )
        }
        _ => "Checking step by step: each step follows from the one before, and the answer answers the question.\n\
              VERDICT: correct"
            .to_string(),
    }
}

fn failure(target: &Target, attempt: &str, feedback: &str) -> String {
    let approach = stated_approach(attempt);
    let verdict = target.judge(attempt);
    let cause = match verdict {
        Verdict::Wrong(m) => cause_of(m.kind),
        _ => causes_named(feedback)
            .first()
            .copied()
            .or_else(|| kinds_named(feedback).first().map(|k| cause_of(*k)))
            .unwrap_or(if target.answer_in(attempt).is_none() {
                FailureCause::IncompleteReasoning
            } else {
                FailureCause::Other
            }),
    };
    let how = if approach == Approach::Other { "working directly".to_string() } else { format!("with {approach}") };
    let mut summary = format!("{how}, {}", check(cause));
    if let Verdict::Wrong(m) = verdict {
        summary.push_str(&format!("; here \"{}\" was a {}", short(m.text, 90), m.kind.label()));
    }
    format!("Cause: {}\nApproach: {approach}\nSummary: {summary}.", cause.name())
}

fn decompose(target: &Target, max: usize) -> String {
    let mut lines = vec!["The problem splits along its worked steps:".to_string()];
    for (i, g) in plan(&target.script, max).iter().enumerate() {
        lines.push(format!("Subtask {}: {}", i + 1, g.goal));
        lines.push(if i == 0 { "Depends on: none".to_string() } else { format!("Depends on: {i}") });
        lines.push(format!("Exit condition: {}", g.exit));
    }
    lines.join("\n")
}

fn compose(cfg: &SimConfig, ctx: &Context, rng: &mut SplitMix64, target: &Target) -> String {
    let results: Vec<String> = ctx.subtasks.iter().map(|t| t.result.clone()).collect();
    let script = &target.script;
    let carried = script.mistakes.iter().find(|m| results.iter().any(|r| squash(r).contains(&squash(m.text))));
    let mistake = match (carried, results.last().map(|r| script.judge(r))) {
        (Some(m), _) => Some(m),
        (None, Some(Verdict::Wrong(m))) => Some(m),
        (None, Some(Verdict::Right)) => None,
        _ => script.draw(cfg, rng, script.error_rate(), &[], false),
    };
    let mut lines = vec!["Putting the subtasks' results together:".to_string()];
    lines.extend(script.lines(mistake));
    lines.join("\n")
}

fn rewrite(ctx: &Context) -> String {
    let entry = ctx.entry.as_str();
    let signals: Vec<&str> = ctx.signals.iter().map(String::as_str).collect();
    let approach = entry
        .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
        .find_map(Approach::from_word)
        .filter(|a| *a != Approach::Other);
    let cause = causes_named(entry).into_iter().next();
    let latest = signals.last().map(|s| short(&s.split_whitespace().collect::<Vec<_>>().join(" "), 140));
    let mut out = match (approach, cause) {
        (Some(a), Some(c)) => format!("{a} approach, {}: {}", c.name(), check(c)),
        (Some(a), None) => {
            format!("{a} approach: use it where it fits, and recheck the final answer against every condition")
        }
        (None, Some(c)) => format!("{}: {}", c.name(), check(c)),
        (None, None) => format!("Strategy: {}", short(entry, 200)),
    };
    if let Some(s) = latest {
        out.push_str(&format!("; the latest critique says to watch this: {s}"));
    }
    out
}

#[cfg(test)]
mod tests;
