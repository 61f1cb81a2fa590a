//! The simulated model's creative writing: it writes plans and passages from the
//! input's sentences (request context `sentences`), votes for the better-formed
//! choice, and judges coherency — all with seeded noise, so a ToT search over
//! writing behaves as the paper's did: plans help, voting helps, nothing is perfect.
//!
//! Behaviour (each base rate below is multiplied by `--sim-noise` and by the ratio of
//! the named `--sim-*` rate to its default, so `--sim-noise 0` is a perfect writer):
//! * a plan (sample/propose at the root, stage `plan`) has one line per sentence; each
//!   line names the sentence its paragraph builds to, or with probability 0.3
//!   (`--sim-slip`) is vague and names none;
//! * a passage has one paragraph per sentence: one or two seeded filler sentences
//!   about a word of the sentence, then the sentence. A paragraph misses its ending
//!   (ends with a filler sentence instead) with probability 0.3 for io (`--sim-io`),
//!   0.2 for cot (`--sim-cot`), and after a plan 0.05 where the plan's line named the
//!   sentence, 0.35 where it was vague (`--sim-slip`);
//! * a vote (`--sim-misjudge`) rates each choice by its form — the share of
//!   paragraphs ending with their sentence for a passage, of plan lines naming their
//!   sentence for a plan — plus uniform noise of ±0.6 at the default rate, and
//!   names the highest, "The best choice is N";
//! * a coherency judgment (value, the score prompt) is 4 + 5 × that share, plus
//!   uniform noise of ±1.5 at the default `--sim-misjudge` rate, rounded and kept
//!   within 1..10: "Thus the coherency score is N".
//!
//! Every choice comes from the seed and the request (see `sim`), never call order.

use serde::Deserialize;

use crate::engine::rng::SplitMix64;
use crate::engine::sim::{SimConfig, SimRates};
use crate::protocol::{CallError, CallErrorKind, LlmRequest, Purpose};
use crate::tasks::writing::read;

const PLAN_VAGUE: f64 = 0.3;
const IO_MISS: f64 = 0.3;
const COT_MISS: f64 = 0.2;
const PLANNED_MISS: f64 = 0.05;
const UNPLANNED_MISS: f64 = 0.35;
const VOTE_NOISE: f64 = 0.6;
const JUDGE_NOISE: f64 = 1.5;

const FILLERS: &[&str] = &[
    "It began on an ordinary afternoon, when {w} was the last thing on anyone's mind.",
    "Nobody could have guessed how much {w} would come to matter.",
    "Looking back, {w} was where everything turned.",
    "There is a story behind {w}, and it is stranger than it sounds.",
    "By the end of the week, everyone was talking about {w}.",
    "Some lessons arrive slowly, and {w} was one of them.",
    "The whole family remembers the day {w} came up at dinner.",
    "Of all the odd things that year, {w} stood out.",
];

/// A base rate scaled by the noise dial and by the named rate's ratio to its default.
fn rate(cfg: &SimConfig, base: f64, named: impl Fn(&SimRates) -> f64) -> f64 {
    let default = named(&SimRates::default());
    let ratio = if default > 0.0 { named(&cfg.rates) / default } else { 1.0 };
    (base * ratio * cfg.noise).clamp(0.0, 1.0)
}

/// Noise amplitude scaled like a rate, but allowed above 1.
fn amplitude(cfg: &SimConfig, base: f64) -> f64 {
    let default = SimRates::default().misjudge;
    let ratio = if default > 0.0 { cfg.rates.misjudge / default } else { 1.0 };
    (base * ratio * cfg.noise).max(0.0)
}

/// What a writing request's context holds (the task's prompts and the feedback methods
/// write it): each field is read by the purposes that use it; a field of the wrong
/// shape is an error naming it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    /// The sentences the passage's paragraphs end with (else read from `input`).
    pub sentences: Option<Vec<String>>,
    /// The instruction with its sentences.
    pub input: String,
    /// The plan or passage so far.
    pub y: String,
    /// The candidates a vote chooses among.
    pub ys: Vec<String>,
    /// The passage a coherency judgment scores.
    pub passage: String,
    /// The attempt feedback looks at.
    pub attempt: String,
}

impl Context {
    /// The context of `request`, or the one line that says which field cannot be read.
    pub fn of(request: &LlmRequest) -> Result<Context, CallError> {
        crate::engine::sim::context("writing", request)
    }
}

pub fn answer(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    let ctx = Context::of(request)?;
    let sentences: Vec<String> = match &ctx.sentences {
        Some(list) => list.clone(),
        None => read::sentences(&ctx.input),
    };
    if sentences.is_empty() {
        return Err(CallError { kind: CallErrorKind::Sim, message: "writing request without sentences".into() });
    }
    let y = ctx.y.as_str();
    match request.purpose {
        Purpose::Io => Ok(passage(&sentences, &vec![rate(cfg, IO_MISS, |r| r.io); sentences.len()], rng)),
        Purpose::Cot | Purpose::Refine => {
            let (plan, _) = plan(cfg, &sentences, rng);
            let miss = vec![rate(cfg, COT_MISS, |r| r.cot); sentences.len()];
            Ok(format!("Plan:\n{plan}\n\nPassage:\n{}", passage(&sentences, &miss, rng)))
        }
        Purpose::Sample | Purpose::Propose => {
            if y.trim().is_empty() {
                Ok(format!("Plan:\n{}", plan(cfg, &sentences, rng).0))
            } else {
                let plan_text = read::plan_of(y);
                let miss: Vec<f64> = sentences
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        let named = plan_text.lines().nth(i).is_some_and(|l| l.contains(s.as_str()));
                        if named {
                            rate(cfg, PLANNED_MISS, |r| r.slip)
                        } else {
                            rate(cfg, UNPLANNED_MISS, |r| r.slip)
                        }
                    })
                    .collect();
                Ok(format!("Passage:\n{}", passage(&sentences, &miss, rng)))
            }
        }
        Purpose::Vote => {
            let ys = &ctx.ys;
            if ys.is_empty() {
                return Err(CallError { kind: CallErrorKind::Sim, message: "writing vote without choices".into() });
            }
            let noise = amplitude(cfg, VOTE_NOISE);
            let mut best = (0, f64::MIN);
            for (i, y) in ys.iter().enumerate() {
                let rated = form(y, &sentences) + noise * (2.0 * rng.next_f64() - 1.0);
                if rated > best.1 {
                    best = (i, rated);
                }
            }
            Ok(format!(
                "Choice {} keeps closest to the instruction: its paragraphs build to the given sentences.\nThe best choice is {}",
                best.0 + 1,
                best.0 + 1
            ))
        }
        Purpose::Value | Purpose::Judge => {
            let share = form(&ctx.passage, &sentences);
            let raw = 4.0 + 5.0 * share + amplitude(cfg, JUDGE_NOISE) * (2.0 * rng.next_f64() - 1.0);
            let score = raw.round().clamp(1.0, 10.0) as u64;
            Ok(format!("The passage reads as one story to a degree; its endings fit as shown.\nThus the coherency score is {score}"))
        }
        Purpose::Feedback => {
            let attempt = read::passage_of(&ctx.attempt);
            let right = read::ending_share(&attempt, &sentences) >= 1.0;
            let says = right != rng.chance(rate(cfg, 0.33, |r| r.misjudge) / 2.0);
            Ok(format!(
                "I checked that each paragraph ends with its sentence.\nVERDICT: {}",
                if says { "correct" } else { "incorrect" }
            ))
        }
        Purpose::Reflect => {
            Ok("A paragraph did not end with its given sentence; plan each paragraph toward it.".into())
        }
        Purpose::Act => Err(CallError { kind: CallErrorKind::Sim, message: "writing has no act requests".into() }),
    }
}

/// How well-formed a state is: for a passage, the share of sentences ending their
/// paragraph; for a plan, the share of plan lines naming their sentence.
fn form(y: &str, sentences: &[String]) -> f64 {
    if y.contains("Passage:") || !y.trim_start().starts_with("Plan:") {
        return read::ending_share(&read::passage_of(y), sentences);
    }
    let plan = read::plan_of(y);
    let named =
        sentences.iter().enumerate().filter(|(i, s)| plan.lines().nth(*i).is_some_and(|l| l.contains(s.as_str())));
    named.count() as f64 / sentences.len().max(1) as f64
}

/// A plan: one numbered line per sentence, each naming it or (seeded) vague. Returns
/// the text and which lines name their sentence.
fn plan(cfg: &SimConfig, sentences: &[String], rng: &mut SplitMix64) -> (String, Vec<bool>) {
    let vague = rate(cfg, PLAN_VAGUE, |r| r.slip);
    let mut lines = Vec::new();
    let mut named = Vec::new();
    for (i, s) in sentences.iter().enumerate() {
        if rng.chance(vague) {
            lines.push(format!("{}. Introduce {} and keep the story moving.", i + 1, keyword(s)));
            named.push(false);
        } else {
            lines.push(format!("{}. Build a scene about {} that ends with: {s}", i + 1, keyword(s)));
            named.push(true);
        }
    }
    (lines.join("\n"), named)
}

/// A passage of one paragraph per sentence; paragraph i misses its ending with
/// probability `miss[i]`.
fn passage(sentences: &[String], miss: &[f64], rng: &mut SplitMix64) -> String {
    let mut paragraphs = Vec::new();
    for (i, s) in sentences.iter().enumerate() {
        let w = keyword(s);
        let filler = |rng: &mut SplitMix64| FILLERS[rng.below(FILLERS.len())].replace("{w}", &w);
        let mut parts = vec![filler(rng)];
        if rng.chance(0.5) {
            parts.push(filler(rng));
        }
        if rng.chance(miss.get(i).copied().unwrap_or(0.0)) {
            // The sentence comes too early, or not at all: the paragraph ends elsewhere.
            if rng.chance(0.5) {
                parts.insert(0, s.clone());
            }
            parts.push(filler(rng));
        } else {
            parts.push(s.clone());
        }
        paragraphs.push(parts.join(" "));
    }
    paragraphs.join("\n\n")
}

/// The longest word of a sentence, lower case: what its paragraph is about.
fn keyword(sentence: &str) -> String {
    let words = sentence.split(|c: char| !c.is_alphabetic() && c != '-').filter(|w| !w.is_empty());
    let mut best = "";
    for w in words {
        if w.chars().count() > best.chars().count() {
            best = w;
        }
    }
    format!("the {}", best.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::context_testing::{self, assert_bad_contexts_refused};
    use crate::engine::{Feedback, Task};
    use crate::tasks::writing::Writing;
    use crate::tasks::TaskSource;

    fn ask(request: &LlmRequest) -> Result<String, CallError> {
        context_testing::ask(answer, request)
    }

    /// Every prompt the task writes is read by the typed context, field by field; a
    /// context of the wrong shape is an error naming the field, never a silent default.
    #[test]
    fn the_tasks_prompts_are_read_by_the_typed_context() {
        let task = Writing::builtin();
        let x = task.problem(0).unwrap().input;
        let sentences = read::sentences(&x);
        assert_eq!(sentences.len(), 4);
        let tree = task.tree().expect("writing searches trees");
        let plan = context_testing::request(tree.sample_prompt(&x, ""));
        let ctx = Context::of(&plan).unwrap();
        assert_eq!((ctx.sentences.as_deref(), ctx.input.as_str()), (Some(&sentences[..]), x.as_str()));
        assert!(ask(&plan).unwrap().starts_with("Plan:"));
        let ys = vec!["Plan:\n1. a".to_string(), "Plan:\n1. b".to_string()];
        let vote = context_testing::request(tree.vote().expect("writing votes").vote_prompt(&x, &ys));
        assert_eq!(Context::of(&vote).unwrap().ys, ys);
        assert!(ask(&vote).unwrap().contains("The best choice is "));
        let score = context_testing::request(task.score_prompt(&x, "One.\n\nTwo."));
        assert_eq!(Context::of(&score).unwrap().passage, "One.\n\nTwo.");
        assert!(ask(&score).unwrap().contains("coherency score is "));
        let feedback = context_testing::request(task.feedback_prompt(&x, "Passage:\nOne."));
        assert_eq!(Context::of(&feedback).unwrap().attempt, "Passage:\nOne.");
        assert!(ask(&feedback).unwrap().contains("VERDICT: "));
        let bad = [
            (serde_json::json!({"sentences": ["a", 2]}), "field \"sentences\": invalid type: integer `2`"),
            (serde_json::json!({"input": "a", "ys": "b"}), "field \"ys\": invalid type: string \"b\""),
            (serde_json::json!({"input": "a", "passage": 1}), "field \"passage\": invalid type: integer `1`"),
        ];
        assert_bad_contexts_refused("writing", answer, &vote, &bad);
    }
}
