//! Best-of-N: k chain-of-thought answers, each scored on its own, and the best-scored
//! one is the answer (ties go to the answer sampled first). A task with the evaluator
//! `--evaluator` names (value or vote) scores them with it; a task without one but with
//! feedback prompts has each answer checked by a verifier call (its feedback prompt),
//! read as 1 for `VERDICT: correct` and 0 otherwise. No answer is ever scored by default.

use crate::engine::methods::samples::{SampleAnswers, SampleParams};
use crate::engine::methods::{Candidates, Method, MethodInfo, MethodView, Needs, Progress, ReactShape};
use crate::engine::params::{EVALUATOR, N_EVALUATE};
use crate::engine::task::Capability;
use crate::engine::{
    CallKind, Core, Duplicates, Generator, MethodKind, NodeId, Outcome, ParamError, ParamReader, Params, Score,
    SearchParams,
};
use crate::protocol::{LlmRequest, LlmResponse, Purpose};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("best-of-n");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "Best-of-N: k CoT answers scored by the task's evaluator (or a verifier call); the best is the answer",
    react: ReactShape::None,
    uses_tools: false,
    needs,
    params: &[&super::samples::SAMPLES, &EVALUATOR, &N_EVALUATE],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(BestOfN::new(SampleParams::read(p)?, scoring(p)?))),
};

/// The evaluator settings `Core::evaluate` scores the answers with (no tree is searched:
/// the generator's settings are unused).
fn scoring(p: &ParamReader) -> Result<SearchParams, ParamError> {
    // At most MAX_SAMPLES, so it fits.
    let n_evaluate = u32::try_from(p.whole(&N_EVALUATE)?).unwrap_or(u32::MAX);
    Ok(SearchParams {
        generator: Generator::Propose,
        n_generate: 1,
        evaluator: p.choice(&EVALUATOR)?,
        n_evaluate,
        steps: None,
        lenient: false,
    })
}

/// The task's evaluator (as `--evaluator` chooses), or else a verifier call.
fn needs(p: &Params) -> Needs {
    let evaluator = match p.word(EVALUATOR.name) {
        Some("vote") => Needs::of(&[Capability::VoteEvaluator], &[Purpose::Cot, Purpose::Vote]),
        _ => Needs::of(&[Capability::ValueEvaluator], &[Purpose::Cot, Purpose::Value]),
    };
    evaluator.or_else(Needs::of(&[Capability::Feedback], &[Purpose::Cot, Purpose::Feedback]))
}

/// The own call tag of a verifier call.
const TAG_VERIFY: u32 = 0;

#[derive(Debug, Clone)]
pub struct BestOfN {
    samples: SampleAnswers,
    /// The evaluator and its sample count.
    search: SearchParams,
    /// The scoring calls are issued (the evaluator's or the verifier's).
    scoring: bool,
    done: bool,
}

impl BestOfN {
    pub fn new(params: SampleParams, search: SearchParams) -> Self {
        BestOfN { samples: SampleAnswers::new(params), search, scoring: false, done: false }
    }

    /// Ask for a score of each usable answer; returns the calls issued.
    fn score_answers(&mut self, core: &mut Core) -> usize {
        let answers: Vec<NodeId> = self.samples.answers.iter().copied().filter(|&n| core.usable(n)).collect();
        if core.has_evaluator() {
            return core.evaluate(&answers, false, Duplicates::Evaluate);
        }
        let task = std::sync::Arc::clone(&core.task);
        let Some(verifier) = task.feedback() else {
            // The engine refuses best-of-n on a task with neither (see `needs`).
            core.log(format!("{} has no evaluator and no feedback prompts: nothing scored", task.name()));
            return 0;
        };
        for &id in &answers {
            let prompt = verifier.feedback_prompt(&core.x, &core.tree.node(id).path);
            core.issue(id, CallKind::Own(TAG_VERIFY), LlmRequest::from_prompt(prompt, 1, core.temperature), false);
        }
        answers.len()
    }

    /// The usable answers, best-scored first; unscored ones last, ties in sampled order.
    fn ranked(&self, core: &Core) -> Vec<NodeId> {
        let mut answers: Vec<NodeId> = self.samples.answers.iter().copied().filter(|&n| core.usable(n)).collect();
        let value = |id: NodeId| core.tree.node(id).score.as_ref().map_or(f64::NEG_INFINITY, |s| s.value);
        // A stable sort keeps the sampled order among equal scores.
        answers.sort_by(|&a, &b| value(b).total_cmp(&value(a)));
        answers
    }
}

impl Method for BestOfN {
    fn search(&self) -> Option<SearchParams> {
        Some(self.search)
    }

    fn advance(&mut self, core: &mut Core) -> Progress {
        if !self.samples.asked {
            return self.samples.advance(core, Purpose::Cot);
        }
        if self.scoring {
            return Progress::Stuck("every answer is scored".into());
        }
        self.scoring = true;
        match self.score_answers(core) {
            0 => Progress::Moved,
            n => Progress::Issued(n),
        }
    }

    fn settle(&mut self, core: &mut Core) {
        if self.scoring && !core.has_pending() {
            self.done = true;
        }
    }

    fn done(&self) -> bool {
        self.done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        let ranked = self.ranked(core);
        let outcome = core.finalize(ranked);
        match outcome.finals.first() {
            Some(&best) => {
                let score = core.tree.node(best).score.as_ref().map(|s| s.value);
                core.log(format!(
                    "best of {}: {best} answers {:?} (score {})",
                    outcome.finals.len(),
                    outcome.answer.as_deref().unwrap_or(""),
                    score.map_or("none".to_string(), |v| format!("{v:.3}"))
                ));
            }
            None => core.log("no answer came back".to_string()),
        }
        outcome
    }

    fn on_children(&mut self, _core: &mut Core, _parent: NodeId, children: &[NodeId], _by_hand: bool) {
        self.samples.answers.extend_from_slice(children);
    }

    fn on_reply(&mut self, core: &mut Core, node: NodeId, tag: u32, reply: &LlmResponse) {
        if tag != TAG_VERIFY {
            return;
        }
        let task = std::sync::Arc::clone(&core.task);
        let Some(verifier) = task.feedback() else { return };
        let (verdict, feedback) = verifier.parse_feedback(&super::rounds::reply_text(reply));
        let (value, label) = match verdict {
            Some(true) => (1.0, "correct"),
            Some(false) => (0.0, "incorrect"),
            None => (0.0, "no verdict"),
        };
        core.set_score(node, Score { value, samples: vec![label.to_string()], note: Some(feedback) });
    }

    fn backtrack(&mut self, _core: &mut Core, _to: Option<NodeId>) -> Result<(), String> {
        SampleAnswers::no_tree(KIND.label())
    }

    fn continue_from(&mut self, _core: &mut Core, _node: NodeId) -> Result<(), String> {
        SampleAnswers::no_tree(KIND.label())
    }

    fn view(&self, core: &Core) -> MethodView {
        MethodView {
            params: self.samples.params.label(KIND.label()),
            step: usize::from(self.samples.asked) + usize::from(self.scoring),
            candidates: Candidates::These(self.samples.answers.iter().copied().filter(|&n| core.usable(n)).collect()),
            ..MethodView::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::engine::testkit::{run_cmd, run_sync, sim};
    use crate::engine::{Engine, Event, Task};
    use crate::tasks::{self, TaskOptions};

    fn params(samples: u32, seed: u64) -> Params {
        Params::new(KIND).with("samples", samples).with("seed", seed)
    }

    fn task(name: &str) -> Arc<dyn Task> {
        tasks::build(name, &TaskOptions::default(), &mut Vec::new()).expect("a built-in task") as Arc<dyn Task>
    }

    /// Run best-of-n on problem `index` of `name` against the simulated model.
    fn run(name: &str, index: usize, samples: u32, seed: u64, noise: f64) -> (Engine, Vec<Event>) {
        let source = tasks::build(name, &TaskOptions::default(), &mut Vec::new()).expect("a built-in task");
        let x = source.problem(index).expect("a problem").input;
        let mut engine = Engine::new(source as Arc<dyn Task>, &x, params(samples, seed));
        let events = run_sync(&mut engine, run_cmd(), sim(noise, seed));
        (engine, events)
    }

    #[test]
    fn it_is_registered_and_refused_where_nothing_can_score() {
        assert!(crate::engine::methods::REGISTRY.iter().any(|m| m.kind == KIND));
        assert_eq!(MethodKind::from_name("best-of-n"), Some(KIND));
        // Game of 24 has a value and a vote evaluator; math-demo has feedback prompts.
        for name in ["game24", "math-demo"] {
            assert_eq!(crate::engine::methods::check_serves(task(name).as_ref(), &params(3, 0)), Ok(()), "{name}");
        }
        // A task with neither evaluator nor feedback is refused, naming what it lacks.
        for entry in tasks::REGISTRY {
            let t = task(&entry.info.name);
            let scorable = t.tree().is_some_and(|tree| tree.value().is_some()) || t.feedback().is_some();
            let served = crate::engine::methods::check_serves(t.as_ref(), &params(3, 0));
            assert_eq!(served.is_ok(), scorable, "{}", entry.info.name);
            if let Err(refused) = served {
                assert!(refused.to_string().contains("value evaluator"), "{refused}");
            }
        }
    }

    #[test]
    fn on_game24_the_value_evaluator_scores_each_answer_and_the_best_is_taken() {
        let (mut right_sampled, mut right_taken) = (0, 0);
        for seed in 0..8 {
            let (engine, _) = run("game24", 0, 5, seed, 0.5);
            let outcome = engine.outcome().expect("finished").clone();
            let tree = engine.tree();
            let scores: Vec<f64> = outcome
                .finals
                .iter()
                .map(|&n| tree.node(n).score.as_ref().expect("every answer is valued").value)
                .collect();
            assert_eq!(scores.len(), 5, "five answers");
            assert!(scores.windows(2).all(|w| w[0] >= w[1]), "ranked by score: {scores:?}");
            // Each answer was valued by the task's value prompt, with no verifier call.
            let purposes: Vec<Purpose> = engine.core.calls.values().map(|c| c.request.purpose).collect();
            assert!(purposes.contains(&Purpose::Value) && !purposes.contains(&Purpose::Feedback), "{purposes:?}");
            right_sampled += usize::from(outcome.solved_any);
            right_taken += usize::from(outcome.solved);
        }
        // The simulated evaluator mostly knows a right answer: when one was sampled, it is
        // nearly always the one taken.
        assert!(right_sampled > 0, "some seed samples a right answer");
        assert!(right_taken + 1 >= right_sampled, "taken {right_taken} of {right_sampled}");
    }

    #[test]
    fn on_math_demo_a_verifier_call_scores_each_answer() {
        let (engine, _) = run("math-demo", 0, 4, 3, 1.0);
        let outcome = engine.outcome().expect("finished").clone();
        assert_eq!(outcome.finals.len(), 4);
        let purposes: Vec<Purpose> = engine.core.calls.values().map(|c| c.request.purpose).collect();
        assert_eq!(purposes.iter().filter(|p| **p == Purpose::Feedback).count(), 4, "{purposes:?}");
        for &n in &outcome.finals {
            let score = engine.tree().node(n).score.as_ref().expect("verified");
            assert!(score.value == 0.0 || score.value == 1.0);
        }
        // A perfect verifier puts a right answer first whenever one was sampled.
        for seed in 0..8 {
            let (engine, _) = run("math-demo", 0, 6, seed, 0.0);
            let outcome = engine.outcome().expect("finished");
            assert_eq!(outcome.solved, outcome.solved_any, "seed {seed}");
        }
    }
}
