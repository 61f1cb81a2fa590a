//! Reflexion (Shinn et al., 2023): trials. Each trial is a chain-of-thought attempt; it
//! is judged by the model itself (a `feedback` call ending in a verdict) or, with
//! `feedback = oracle`, by the task's checker (no call). After a failed trial the
//! model writes a reflection (a `reflect` call: what went wrong, what to do
//! differently), which is kept and given to every later trial in its cot prompt
//! (`Task::reflexion_cot_prompt`). The run stops at the first trial judged correct or
//! after `trials` trials; the answer is the last trial's.
//!
//! In the tree the trials form a chain under the root (each a child of the one
//! before); a trial's feedback and reflection are its `feedback` and `reflection`
//! notes. Editing a trial's text continues from the edited trial; editing its
//! reflection (or its feedback) changes what the next trial is given.
//!
//! Parameters (flattened into the session header, all optional): `trials` (1 to 20,
//! default 3), `feedback` (`self` or `oracle`, default `self`).

use crate::engine::params::{DefaultValue, Kind, ParamDecl};
use crate::engine::{Core, MethodKind, NodeId, NodeStatus, Origin, Outcome, ParamError, ParamReader};
use crate::protocol::LlmResponse;

use super::rounds::{
    self, Chain, FeedbackSource, Next, Waiting, Wording, FEEDBACK, FEEDBACK_NOTE, REFLECTION_NOTE, TAG_REFLECT,
};
use super::{count, Method, MethodInfo, MethodView, Progress};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("reflexion");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "reflexion: cot trials; after a failed one the model reflects, and later trials get the reflections",
    react: super::ReactShape::None,
    uses_tools: false,
    needs,
    params: &[&TRIALS, &FEEDBACK],
    wants_memory: super::no_memory,
    build: |params| Ok(Box::new(Reflexion::new(ReflexionParams::read(params)?))),
};

pub const TRIALS: ParamDecl = ParamDecl {
    name: "trials",
    help: "Most trials",
    kind: Kind::Whole { min: 1, max: 20 },
    default: DefaultValue::Whole(3),
};

/// Reflexion's own parameters.
/// `MethodInfo::needs`: the task's feedback prompts; the trials, the self-evaluations
/// (unless the checker judges) and the reflections.
fn needs(p: &crate::engine::Params) -> super::Needs {
    use crate::protocol::Purpose;
    // Parameters out of range are refused when the method is built; until then, the defaults'.
    let feedback = ReflexionParams::read(&p.reader()).map(|own| own.feedback).unwrap_or_default();
    let mut calls = vec![Purpose::Cot, Purpose::Reflect];
    if feedback == FeedbackSource::SelfCheck {
        calls.push(Purpose::Feedback);
    }
    super::Needs::of(&[crate::engine::task::Capability::Feedback], &calls)
}

/// Reflexion's own parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReflexionParams {
    pub trials: usize,
    pub feedback: FeedbackSource,
}

impl ReflexionParams {
    pub fn read(p: &ParamReader) -> Result<ReflexionParams, ParamError> {
        Ok(ReflexionParams { trials: p.count(&TRIALS)?, feedback: rounds::read_feedback(p)? })
    }
}

/// Reflexion's words for its chain: trials, judged by a self-evaluation.
static WORDING: Wording = Wording {
    method: "reflexion",
    noun: "trial",
    judged_as: "judgement of",
    feedback_of: "the self-evaluation of",
    feedback_name: "self-evaluation",
    label_end: |n| if n.note(REFLECTION_NOTE).is_some() { " · reflected" } else { "" },
    correct: |n, node| format!("trial {n} ({node}) is judged correct; stopping"),
    spent: |n| format!("{}, the budget; the last trial stands", count(n, "trial", "trials")),
    no_attempt: |parent| {
        format!("no trial came back after {parent} (the call failed or the reply was empty); stopping")
    },
    no_judgement: |node| format!("the call for {node} failed or came back empty; the trial stands"),
};

#[derive(Debug, Clone)]
pub struct Reflexion {
    params: ReflexionParams,
    chain: Chain,
}

impl Reflexion {
    pub fn new(params: ReflexionParams) -> Self {
        Reflexion { params, chain: Chain::new(&WORDING, params.feedback) }
    }

    /// The reflections the trial after `last` is given: those of `last` and the trials before it.
    fn reflections(core: &Core, last: NodeId) -> Vec<String> {
        rounds::chain(core, last)
            .into_iter()
            .filter_map(|n| core.tree.node(n).note(REFLECTION_NOTE))
            .map(str::to_string)
            .collect()
    }
}

impl Method for Reflexion {
    fn advance(&mut self, core: &mut Core) -> Progress {
        let task = std::sync::Arc::clone(&core.task);
        let Some(fb) = task.feedback() else {
            return Progress::Stuck(rounds::no_feedback(core));
        };
        match self.chain.next(core, fb, self.params.trials) {
            Next::Done(progress) => progress,
            Next::First => {
                let prompt = fb.reflexion_cot_prompt(&core.x, &[]);
                let root = core.tree.root();
                self.chain.ask(core, Waiting::Attempt(root), prompt)
            }
            Next::After(node) => {
                if core.tree.node(node).note(REFLECTION_NOTE).is_none() {
                    let attempt = core.tree.node(node).path.clone();
                    let feedback = core.tree.node(node).note(FEEDBACK_NOTE).unwrap_or("").to_string();
                    let prompt = fb.reflect_prompt(&core.x, &attempt, &feedback);
                    return self.chain.ask(core, Waiting::Reflection(node), prompt);
                }
                let reflections = Self::reflections(core, node);
                let prompt = fb.reflexion_cot_prompt(&core.x, &reflections);
                let progress = self.chain.ask(core, Waiting::Attempt(node), prompt);
                core.set_status(node, NodeStatus::Expanded);
                progress
            }
        }
    }

    fn settle(&mut self, core: &mut Core) {
        self.chain.settle(core)
    }

    fn done(&self) -> bool {
        self.chain.done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        self.chain.outcome(core)
    }

    fn on_children(&mut self, _core: &mut Core, _parent: NodeId, _children: &[NodeId], _by_hand: bool) {}

    fn on_prune(&mut self, core: &mut Core, node: NodeId) {
        self.chain.on_prune(core, node)
    }

    fn on_reply(&mut self, core: &mut Core, node: NodeId, tag: u32, reply: &LlmResponse) {
        if self.chain.on_reply(core, node, tag, reply) {
            return;
        }
        if tag == TAG_REFLECT && self.chain.waiting == Some(Waiting::Reflection(node)) {
            let text = rounds::reply_text(reply);
            if text.is_empty() {
                return;
            }
            self.chain.waiting = None;
            core.set_note(node, REFLECTION_NOTE, &text);
            self.chain.label(core, node);
            let first = text.lines().next().unwrap_or("").trim().to_string();
            core.log(format!(
                "reflection on trial {} ({node}), kept for the next trials: {first}",
                Chain::attempt_no(core, node)
            ));
        }
    }

    fn edit(&mut self, core: &mut Core, node: NodeId, text: &str) -> Option<Result<NodeId, String>> {
        Some(self.edit_trial(core, node, text))
    }

    fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String> {
        self.chain.backtrack(core, to)
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        self.chain.continue_from(core, node)
    }

    fn view(&self, core: &Core) -> MethodView {
        let params = format!("reflexion trials={} feedback={}", self.params.trials, self.params.feedback.label());
        MethodView { params, step: self.chain.step(core), step_noun: "trial", ..MethodView::default() }
    }
}

impl Reflexion {
    /// A person's edit of a trial: its text (a new trial, judged afresh), its feedback
    /// (the verdict it states) or its reflection (given to the trials after it).
    fn edit_trial(&mut self, core: &mut Core, node: NodeId, text: &str) -> Result<NodeId, String> {
        let edit = rounds::read_edit(core, node, text)?;
        if edit.attempt.is_none() && edit.changed_notes.is_empty() {
            return Err(format!("nothing was changed in {node}"));
        }
        self.chain.restart(core);
        let target = match edit.attempt {
            Some(attempt) => {
                let parent = core.tree.node(node).parent.unwrap_or(core.tree.root());
                let origin = Origin::Human { edited_from: Some(node) };
                rounds::add_attempt_text(core, parent, &attempt, origin)
                    .ok_or_else(|| "an edited trial cannot be empty".to_string())?
            }
            None => node,
        };
        if target != node {
            // A new trial: judged afresh, unless the person also wrote its feedback.
            self.chain.verdicts.remove(&target);
        }
        for (label, text) in &edit.changed_notes {
            core.set_note(target, label, text);
            if label == FEEDBACK_NOTE {
                let (verdict, _) = rounds::read_verdict(core, text);
                self.chain.verdicts.insert(target, Some(verdict.unwrap_or(false)));
            }
            core.log(format!("the {label} of {target} was edited by hand"));
        }
        if target == node && core.tree.node(node).status == NodeStatus::Expanded {
            core.set_status(node, NodeStatus::Candidate);
        }
        self.chain.current = Some(target);
        self.chain.label(core, target);
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testkit::*;
    use crate::engine::{Command, Engine};
    use crate::protocol::Purpose;

    const X: &str = "4 5 6 10";
    const WRONG: &str = "4 + 5 = 9 (left: 6 9 10)\nAnswer: (4 + 5) + 6 + 10 = 24";
    const RIGHT: &str = "5 * 6 = 30 (left: 4 10 30)\nAnswer: (5 * 6) - (10 - 4) = 24";

    fn reflexion(extra: &[(&str, serde_json::Value)]) -> crate::engine::Params {
        from_header(KIND, extra)
    }

    /// Answer the latest call with `text`, checking its purpose; returns the new calls.
    fn answer(
        e: &mut Engine,
        waiting: &[(u64, crate::protocol::LlmRequest)],
        purpose: Purpose,
        text: &str,
    ) -> Vec<(u64, crate::protocol::LlmRequest)> {
        let (call, request) = waiting.last().expect("a call is waiting");
        assert_eq!(request.purpose, purpose, "{request:?}");
        calls(&e.handle(reply(*call, &[text])))
    }

    #[test]
    fn reflections_are_kept_and_given_to_every_later_trial() {
        let mut e = engine(X, reflexion(&[]));
        let c = calls(&e.handle(run_cmd()));
        assert!(c[0].1.context.get("reflections").is_none(), "the first trial is the plain cot prompt");
        let c = answer(&mut e, &c, Purpose::Cot, WRONG);
        let c = answer(&mut e, &c, Purpose::Feedback, "VERDICT: incorrect");
        assert_eq!(c[0].1.context["feedback"], "VERDICT: incorrect");
        assert_eq!(c[0].1.context["attempt"], WRONG);
        let c = answer(&mut e, &c, Purpose::Reflect, "I added instead of multiplying.");
        let trial2 = &c[0].1;
        assert_eq!(trial2.context["reflections"], serde_json::json!(["I added instead of multiplying."]));
        assert!(trial2.messages.last().unwrap().content.contains("- I added instead of multiplying."));
        assert_eq!(e.core.calls[&c[0].0].node, NodeId(1), "the next trial follows the first in the chain");
        let c = answer(&mut e, &c, Purpose::Cot, WRONG);
        let c = answer(&mut e, &c, Purpose::Feedback, "Verdict - incorrect");
        let c = answer(&mut e, &c, Purpose::Reflect, "Use 5 * 6 first.");
        assert_eq!(
            c[0].1.context["reflections"],
            serde_json::json!(["I added instead of multiplying.", "Use 5 * 6 first."])
        );
        assert_eq!(e.view().step, 3);
        assert_eq!(e.view().step_noun, "trial");
        // The third trial fails too: the budget is spent and no reflection is asked for.
        let c = answer(&mut e, &c, Purpose::Cot, WRONG);
        let c = answer(&mut e, &c, Purpose::Feedback, "VERDICT: incorrect");
        assert!(c.is_empty());
        assert!(e.is_finished());
        assert_eq!(e.outcome().unwrap().finals, vec![NodeId(3)]);
        assert_eq!(e.tree().node(NodeId(2)).note("reflection"), Some("Use 5 * 6 first."));
        assert!(e.tree().node(NodeId(2)).label.as_deref().unwrap().ends_with("reflected"));
    }

    #[test]
    fn stops_at_the_first_trial_judged_correct() {
        let mut e = engine(X, reflexion(&[("trials", 5.into())]));
        let c = calls(&e.handle(run_cmd()));
        let c = answer(&mut e, &c, Purpose::Cot, WRONG);
        let c = answer(&mut e, &c, Purpose::Feedback, "VERDICT: incorrect");
        let c = answer(&mut e, &c, Purpose::Reflect, "Multiply.");
        let c = answer(&mut e, &c, Purpose::Cot, RIGHT);
        let c = answer(&mut e, &c, Purpose::Feedback, "VERDICT: correct");
        assert!(c.is_empty());
        assert!(e.is_finished());
        let o = e.outcome().unwrap();
        assert!(o.solved);
        assert_eq!(o.answer.as_deref(), Some("(5 * 6) - (10 - 4) = 24"));
    }

    #[test]
    fn oracle_judgement_makes_no_feedback_calls() {
        let mut e = engine(X, reflexion(&[("feedback", "oracle".into()), ("trials", 2.into())]));
        let c = calls(&e.handle(run_cmd()));
        let c = answer(&mut e, &c, Purpose::Cot, WRONG);
        // Judged by the checker: straight to the reflection, given the checker's reason.
        assert_eq!(c[0].1.context["feedback"], "The answer (4 + 5) + 6 + 10 = 24 is wrong: equals 25, not 24.");
        let c = answer(&mut e, &c, Purpose::Reflect, "Multiply.");
        let c = answer(&mut e, &c, Purpose::Cot, RIGHT);
        assert!(c.is_empty());
        assert!(e.is_finished() && e.outcome().unwrap().solved);
    }

    #[test]
    fn editing_a_reflection_changes_what_the_next_trial_is_given() {
        let mut e = engine(X, reflexion(&[("feedback", "oracle".into())]));
        let c = calls(&e.handle(cmd(Command::Step { n: 2 })));
        let c = answer(&mut e, &c, Purpose::Cot, WRONG);
        let c = answer(&mut e, &c, Purpose::Reflect, "Try harder.");
        assert!(c.is_empty(), "paused after two steps");
        let text = e.tree().node(NodeId(1)).edit_text();
        let edited = text.replace("Try harder.", "Start with 5 * 6 = 30.");
        e.handle(cmd(Command::Edit { node: NodeId(1), text: edited }));
        let c = calls(&e.handle(cmd(Command::Step { n: 1 })));
        assert_eq!(c[0].1.context["reflections"], serde_json::json!(["Start with 5 * 6 = 30."]));
    }

    #[test]
    fn out_of_range_trials_are_refused_in_one_line() {
        let task = std::sync::Arc::new(crate::tasks::game24::Game24::builtin());
        for (v, says) in [
            (serde_json::json!(0), "trials (--trials) is 0: it must be a whole number from 1 to 20"),
            (serde_json::json!(21), "trials (--trials) is 21: it must be a whole number from 1 to 20"),
            (serde_json::json!("many"), "trials (--trials) is \"many\": it must be a whole number from 1 to 20"),
        ] {
            let err = Engine::try_new(task.clone(), X, reflexion(&[("trials", v)])).err().unwrap();
            assert_eq!(err.to_string(), says);
        }
    }

    #[test]
    fn on_the_simulated_model_reflections_help() {
        // Over many puzzles, trials after reflections are right more often than first trials.
        let task = std::sync::Arc::new(crate::tasks::game24::Game24::builtin());
        let (mut first_right, mut solved) = (0, 0);
        for i in 900..1000 {
            let x = crate::tasks::TaskSource::problem(&*task, i).unwrap().input;
            let mut e = engine(&x, reflexion(&[("feedback", "oracle".into()), ("trials", 5.into())]));
            run_sync(&mut e, run_cmd(), sim(1.0, 3));
            assert!(e.is_finished());
            first_right += usize::from(e.tree().node(NodeId(1)).note("feedback").unwrap().ends_with("is correct."));
            solved += usize::from(e.outcome().unwrap().solved);
        }
        assert!(solved > first_right + 5, "reflections help: {first_right} first trials right, {solved} solved");
    }
}
