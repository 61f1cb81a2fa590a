//! The simulated model's play of a task file. It plays only what the file lets it play
//! truthfully: each problem's gold answer (io, cot, ReAct's finish), and for tree search
//! and ReAct the problem's list of correct steps (the actions, for ReAct). It answers
//! io, cot, propose, sample, value, vote and ReAct calls, and a `kind = "judge"` check's
//! judge (right when the answer is the gold one); methods that make other calls
//! (Self-Refine's feedback, ReTreVal's phases) are refused before the run starts, in one
//! line ([`plays`]), never answered with made-up text.
//!
//! Mistakes, each drawn per sample with `--sim-noise` times its rate: a whole answer
//! (io [`IO_WRONG`], cot [`COT_WRONG`]) states the wrong answer the task built; a step
//! slips (`slip`: its last number is one more); an evaluator names the wrong class
//! (`misjudge`); ReAct finishes with a wrong answer (`answer`).

use serde::Deserialize;

use super::{bump_last_number, FileTask, CONTEXT_KEY};
use crate::engine::rng::SplitMix64;
use crate::engine::sim::SimConfig;
use crate::engine::task::Capability;
use crate::engine::{methods, Params, Task};
use crate::protocol::{CallError, CallErrorKind, LlmRequest, Purpose};

/// How often a direct answer is wrong at `--sim-noise 1`.
pub const IO_WRONG: f64 = 0.5;
/// How often a chain of thought ends wrong at `--sim-noise 1`.
pub const COT_WRONG: f64 = 0.3;

/// The calls the player answers.
const PLAYED: &[Purpose] =
    &[Purpose::Io, Purpose::Cot, Purpose::Propose, Purpose::Sample, Purpose::Value, Purpose::Vote, Purpose::Act];

/// What every task-file prompt carries for its player (see `FileTask::prompt`).
#[derive(Debug, Deserialize)]
struct Context {
    task: String,
    file_task: Known,
    /// The state's steps (tree prompts).
    #[serde(default)]
    steps: Vec<String>,
    /// The states a vote chooses among.
    #[serde(default)]
    ys: Vec<String>,
    /// The ReAct step.
    #[serde(default)]
    step: Option<usize>,
    /// The answer a judge prompt asks about.
    #[serde(default)]
    answer: Option<String>,
    /// ReTreVal's prompts name their phase; the player does not play them.
    #[serde(default)]
    retreval: Option<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct Known {
    gold: Option<String>,
    #[serde(default)]
    steps: Vec<String>,
    /// A reply stating the gold answer in the task's answer format.
    right: Option<String>,
    /// A reply stating an answer the check refuses.
    wrong: Option<String>,
}

/// Whether the simulated model can play a run of `params` on `task`: `Err` says why not.
pub fn plays(task: &FileTask, params: &Params) -> Result<(), String> {
    let name = task.name();
    let cannot = |why: String| {
        Err(format!("sim cannot play {name} with {}: {why}; run it with a model (--provider ...)", params.method))
    };
    let needs = served(&methods::needs(params), task);
    if let Some(call) = needs.calls.iter().find(|c| !PLAYED.contains(c)) {
        let played: Vec<&str> = PLAYED.iter().map(|p| p.label()).collect();
        return cannot(format!(
            "the method makes {} calls, and sim plays a task file's {} calls only",
            call.label(),
            played.join(", ")
        ));
    }
    let steps_needed = needs.capabilities.iter().any(|c| matches!(c, Capability::TreeSteps | Capability::ReactSteps));
    for (i, p) in task.problems().iter().enumerate() {
        let Some(gold) = &p.gold else { return cannot(format!("problem {i} has no gold answer")) };
        if task.def().answer.write(gold).is_none() {
            return cannot(format!(
                "its answers are read by [answer] read = {:?}, which sim cannot write",
                task.def().answer.read
            ));
        }
        if steps_needed && p.steps.is_empty() {
            return cannot(format!("problem {i} lists no correct steps (the steps field), which sim plays from"));
        }
    }
    if needs.calls.contains(&Purpose::Vote)
        && task.tree().and_then(|t| t.vote()).is_some_and(|v| v.parse_vote("The best choice is 1", 2) != Some(0))
    {
        return cannot("its [tree] vote_pattern does not read \"The best choice is N\", the way sim votes".into());
    }
    Ok(())
}

/// The needs the method meets on `task` (its own, or the first alternative the task
/// meets, such as best-of-n's verifier calls on a task without an evaluator).
fn served(needs: &methods::Needs, task: &FileTask) -> methods::Needs {
    match &needs.otherwise {
        Some(alternative) if !needs.capabilities.iter().all(|c| c.of(task)) => served(alternative, task),
        _ => methods::Needs { otherwise: None, ..needs.clone() },
    }
}

fn sim_error(message: String) -> CallError {
    CallError { kind: CallErrorKind::Sim, message }
}

/// The simulated model's answer to one sample of a task-file request.
pub fn play(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    let ctx: Context = serde_json::from_value(request.context.clone())
        .map_err(|e| sim_error(format!("a task-file request with an unreadable {CONTEXT_KEY} context: {e}")))?;
    if ctx.retreval.is_some() {
        return Err(sim_error(format!("sim does not play ReTreVal's phases on the task file {}", ctx.task)));
    }
    let known = &ctx.file_task;
    let gold =
        known.gold.as_deref().ok_or_else(|| sim_error(format!("{}: the problem has no gold answer", ctx.task)))?;
    let right =
        known.right.clone().ok_or_else(|| sim_error(format!("{}: sim cannot write this task's answers", ctx.task)))?;
    let wrong = known.wrong.clone().unwrap_or_else(|| "I do not know.".to_string());
    let whole =
        |rate: f64, rng: &mut SplitMix64| if rng.next_f64() < cfg.rate(rate) { wrong.clone() } else { right.clone() };
    match request.purpose {
        Purpose::Io => Ok(whole(IO_WRONG, rng)),
        Purpose::Cot => {
            let mut text = String::from("Let me work through it step by step.\n");
            for s in &known.steps {
                text.push_str(s);
                text.push('\n');
            }
            Ok(text + &whole(COT_WRONG, rng))
        }
        Purpose::Propose | Purpose::Sample => {
            let correct = known.steps.get(ctx.steps.len()).cloned().unwrap_or_else(|| right.clone());
            let mut step = correct.clone();
            if rng.next_f64() < cfg.rate(cfg.rates.slip) {
                step = slipped(&correct);
            }
            if request.purpose == Purpose::Sample {
                return Ok(step);
            }
            let mut lines = vec![step, slipped(&correct)];
            lines.dedup();
            rng.shuffle(&mut lines);
            Ok(lines.join("\n"))
        }
        Purpose::Value => {
            let classes = value_classes(request);
            let on_track = is_prefix(&ctx.steps, &known.steps);
            let mut class = if on_track { classes.last() } else { classes.first() };
            if rng.next_f64() < cfg.rate(cfg.rates.misjudge) && classes.len() > 1 {
                class = classes.get(rng.below(classes.len()));
            }
            class
                .map(|c| c.to_string())
                .ok_or_else(|| sim_error(format!("{}: no value classes to answer with", ctx.task)))
        }
        Purpose::Vote => {
            let on_track = ctx.ys.iter().position(|y| {
                is_prefix(&super::FileTask::steps_of(y).iter().map(|s| s.to_string()).collect::<Vec<_>>(), &known.steps)
            });
            let mut choice = on_track.unwrap_or(0);
            if rng.next_f64() < cfg.rate(cfg.rates.misjudge) && !ctx.ys.is_empty() {
                choice = rng.below(ctx.ys.len());
            }
            Ok(format!("The best choice is {}", choice + 1))
        }
        Purpose::Act => {
            let step = ctx.step.unwrap_or(1);
            let action = match known.steps.get(step.max(1) - 1) {
                Some(action) => action.clone(),
                None if rng.next_f64() < cfg.rate(cfg.rates.answer) => format!("Finish[{}]", wrong_answer(gold)),
                None => format!("Finish[{gold}]"),
            };
            Ok(format!("Thought {step}: Next I take {action}.\nAction {step}: {action}"))
        }
        Purpose::Judge => {
            // The judge of a `kind = "judge"` check: the answer against the gold one.
            let answer = ctx.answer.as_deref().unwrap_or("");
            let norm = crate::tasks::react_text::normalize_answer;
            let mut right = norm(answer) == norm(gold) || crate::grade::equivalent(gold, answer);
            if rng.next_f64() < cfg.rate(cfg.rates.misjudge) {
                right = !right;
            }
            let (says, verdict) = if right { ("meets", "correct") } else { ("does not meet", "incorrect") };
            Ok(format!("The answer {says} the rubric.\nVERDICT: {verdict}"))
        }
        other => Err(sim_error(format!("sim does not play {} calls on the task file {}", other.label(), ctx.task))),
    }
}

/// A step with a slip: its last number one more, or a step that says nothing.
fn slipped(step: &str) -> String {
    let bumped = bump_last_number(step);
    if bumped.is_empty() {
        format!("{step} (perhaps)")
    } else {
        bumped
    }
}

fn wrong_answer(gold: &str) -> String {
    let bumped = bump_last_number(gold);
    if bumped.is_empty() {
        format!("not {gold}")
    } else {
        bumped
    }
}

/// Whether the state's steps are the first of the correct ones.
fn is_prefix(state: &[String], correct: &[String]) -> bool {
    state.len() <= correct.len() && state.iter().zip(correct).all(|(a, b)| a.trim() == b.trim())
}

/// The value words the request's task counts, lowest first, read from the task file's
/// definition the prompt names (the engine's `value_classes` of the task).
fn value_classes(request: &LlmRequest) -> Vec<String> {
    let mut classes: Vec<(String, f64)> = request
        .context
        .get("value_classes")
        .and_then(|v| serde_json::from_value::<std::collections::BTreeMap<String, f64>>(v.clone()).ok())
        .unwrap_or_default()
        .into_iter()
        .collect();
    classes.sort_by(|a, b| a.1.total_cmp(&b.1));
    classes.into_iter().map(|(name, _)| name).collect()
}
