//! Self-Refine (Madaan et al., 2023): an answer (the task's cot prompt), feedback on it
//! from the same model (a `feedback` call ending in `VERDICT: correct|incorrect`), a
//! refined answer that follows the feedback (a `refine` call), and so on until the
//! feedback says the answer is correct or `rounds` refinements were made. The answer is
//! the last attempt's. With `feedback = oracle` the task's checker judges instead (no
//! call); with `first = io` the first answer comes from the io prompt: together the
//! Tree-of-Thoughts paper's "IO + Refine" for Game of 24 (`rounds = 10` there).
//!
//! In the tree the attempts form a chain under the root (each refinement a child of the
//! attempt it refines); an attempt's feedback is its `feedback` note. Editing an
//! attempt's text continues from the edited attempt; editing its feedback makes the
//! next refinement from the edited feedback.
//!
//! Parameters (declared below and in `rounds`): `rounds` (1 to 50, default 4),
//! `feedback` (`self` or `oracle`, default `self`), `first` (`cot` or `io`, default `cot`).

use crate::engine::params::{choices, DefaultValue, Kind, ParamDecl};
use crate::engine::{Core, MethodKind, NodeId, NodeStatus, Origin, Outcome, ParamError, ParamReader};
use crate::protocol::LlmResponse;

use super::rounds::{self, Chain, FeedbackSource, FirstPrompt, Next, Waiting, Wording, FEEDBACK, FEEDBACK_NOTE};
use super::{count, Method, MethodInfo, MethodView, Progress};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("self-refine");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "self-refine: answer, feedback, refined answer, until the feedback says correct or --rounds",
    react: super::ReactShape::None,
    uses_tools: false,
    needs,
    params: &[&ROUNDS, &FEEDBACK, &FIRST],
    wants_memory: super::no_memory,
    build: |params| Ok(Box::new(SelfRefine::new(SelfRefineParams::read(params)?))),
};

pub const ROUNDS: ParamDecl = ParamDecl {
    name: "rounds",
    help: "Most refinements after the first answer",
    kind: Kind::Whole { min: 1, max: 50 },
    default: DefaultValue::Whole(4),
};

pub const FIRST: ParamDecl = ParamDecl {
    name: "first",
    help: "The prompt of the first answer",
    kind: Kind::Choice(choices::<FirstPrompt>),
    default: DefaultValue::Word("cot"),
};

/// Self-Refine's own parameters.
/// `MethodInfo::needs`: the task's feedback prompts; the first answer's call, the
/// feedback calls (unless the checker gives the feedback) and the refinements.
fn needs(p: &crate::engine::Params) -> super::Needs {
    use crate::protocol::Purpose;
    // Parameters out of range are refused when the method is built; until then, the defaults'.
    let (first, feedback) =
        SelfRefineParams::read(&p.reader()).map(|own| (own.first, own.feedback)).unwrap_or_default();
    let first = match first {
        FirstPrompt::Io => Purpose::Io,
        FirstPrompt::Cot => Purpose::Cot,
    };
    let mut calls = vec![first, Purpose::Refine];
    if feedback == FeedbackSource::SelfCheck {
        calls.push(Purpose::Feedback);
    }
    super::Needs::of(&[crate::engine::task::Capability::Feedback], &calls)
}

/// Self-Refine's own parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelfRefineParams {
    /// Most refinements after the first answer.
    pub rounds: usize,
    pub feedback: FeedbackSource,
    pub first: FirstPrompt,
}

impl SelfRefineParams {
    pub fn read(p: &ParamReader) -> Result<SelfRefineParams, ParamError> {
        Ok(SelfRefineParams {
            rounds: p.count(&ROUNDS)?,
            feedback: rounds::read_feedback(p)?,
            first: p.choice(&FIRST)?,
        })
    }
}

/// Self-Refine's words for its chain: attempts, judged by feedback.
static WORDING: Wording = Wording {
    method: "self-refine",
    noun: "attempt",
    judged_as: "feedback on",
    feedback_of: "the feedback on",
    feedback_name: "feedback",
    label_end: |n| if n.notes.iter().any(|n| n.label.ends_with("(edited)")) { " (feedback edited)" } else { "" },
    correct: |n, node| format!("the feedback says attempt {n} ({node}) is correct; stopping"),
    spent: |n| {
        format!("{}, the budget; the last attempt stands", count(n.saturating_sub(1), "refinement", "refinements"))
    },
    no_attempt: |parent| {
        format!("no attempt came back for {parent} (the call failed or the reply was empty); stopping")
    },
    no_judgement: |node| format!("no feedback came back for {node}; the attempt stands"),
};

#[derive(Debug, Clone)]
pub struct SelfRefine {
    params: SelfRefineParams,
    chain: Chain,
}

impl SelfRefine {
    pub fn new(params: SelfRefineParams) -> Self {
        SelfRefine { params, chain: Chain::new(&WORDING, params.feedback) }
    }

    fn feedback_text(core: &Core, node: NodeId) -> String {
        let n = core.tree.node(node);
        n.notes.iter().find(|n| n.label.starts_with(FEEDBACK_NOTE)).map(|n| n.text.clone()).unwrap_or_default()
    }
}

impl Method for SelfRefine {
    fn advance(&mut self, core: &mut Core) -> Progress {
        let task = std::sync::Arc::clone(&core.task);
        let Some(fb) = task.feedback() else {
            return Progress::Stuck(rounds::no_feedback(core));
        };
        // The first answer and at most `rounds` refinements.
        match self.chain.next(core, fb, self.params.rounds + 1) {
            Next::Done(progress) => progress,
            Next::First => {
                let prompt = match self.params.first {
                    FirstPrompt::Io => core.task.io_prompt(&core.x),
                    FirstPrompt::Cot => core.task.cot_prompt(&core.x),
                };
                let root = core.tree.root();
                self.chain.ask(core, Waiting::Attempt(root), prompt)
            }
            Next::After(node) => {
                let attempt = core.tree.node(node).path.clone();
                let feedback = Self::feedback_text(core, node);
                let prompt = fb.refine_prompt(&core.x, &attempt, &feedback);
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
        self.chain.on_reply(core, node, tag, reply);
    }

    fn edit(&mut self, core: &mut Core, node: NodeId, text: &str) -> Option<Result<NodeId, String>> {
        Some(self.edit_attempt(core, node, text))
    }

    fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String> {
        // Leave the named attempt (or the latest) and refine the one before it again.
        self.chain.backtrack(core, to)
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        self.chain.continue_from(core, node)
    }

    fn view(&self, core: &Core) -> MethodView {
        let p = &self.params;
        let mut params = format!("self-refine rounds={} feedback={}", p.rounds, p.feedback.label());
        if p.first != FirstPrompt::Cot {
            params.push_str(&format!(" first={}", p.first.label()));
        }
        MethodView { params, step: self.chain.step(core), step_noun: "attempt", ..MethodView::default() }
    }
}

impl SelfRefine {
    /// A person's edit of an attempt (its text and its feedback, `Node::edit_text`).
    fn edit_attempt(&mut self, core: &mut Core, node: NodeId, text: &str) -> Result<NodeId, String> {
        let edit = rounds::read_edit(core, node, text)?;
        let feedback =
            edit.changed_notes.iter().find(|(label, _)| label.starts_with(FEEDBACK_NOTE)).map(|(_, t)| t.clone());
        if edit.attempt.is_none() && feedback.is_none() {
            return Err(format!("nothing was changed in {node}"));
        }
        // Whatever was in flight belongs to the old chain.
        self.chain.restart(core);
        let target = match edit.attempt {
            Some(attempt) => {
                let parent = core.tree.node(node).parent.unwrap_or(core.tree.root());
                let origin = Origin::Human { edited_from: Some(node) };
                let Some(new) = rounds::add_attempt_text(core, parent, &attempt, origin) else {
                    return Err("an edited attempt cannot be empty".into());
                };
                new
            }
            None => node,
        };
        if let Some(text) = feedback {
            // The edited feedback is what the next refinement follows.
            let (verdict, _) = rounds::read_verdict(core, &text);
            core.tree.node_mut(target).notes.retain(|n| !n.label.starts_with(FEEDBACK_NOTE));
            let label = format!("{FEEDBACK_NOTE} (edited)");
            core.set_note(target, &label, &text);
            self.chain.verdicts.insert(target, Some(verdict.unwrap_or(false)));
            core.log(format!("the feedback on {target} was edited by hand; the next refinement follows it"));
            if target == node && core.tree.node(node).status == NodeStatus::Expanded {
                core.set_status(node, NodeStatus::Candidate);
            }
        } else {
            self.chain.verdicts.remove(&target);
        }
        self.chain.current = Some(target);
        self.chain.label(core, target);
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::Event;
    use crate::engine::testkit::*;
    use crate::engine::{Command, Effect, Engine, Input};
    use crate::protocol::Purpose;
    use crate::protocol::Role;

    const X: &str = "4 5 6 10";
    const WRONG: &str = "4 + 5 = 9 (left: 6 9 10)\nAnswer: (4 + 5) + 6 + 10 = 24";
    const RIGHT: &str = "5 * 6 = 30 (left: 4 10 30)\nAnswer: (5 * 6) - (10 - 4) = 24";

    fn refine(extra: &[(&str, serde_json::Value)]) -> crate::engine::Params {
        from_header(KIND, extra)
    }

    /// Feed `input`, then answer each call with the next scripted reply (checking its
    /// purpose) until the script ends; returns every effect.
    fn script(e: &mut Engine, input: Input, replies: &[(Purpose, &str)]) -> Vec<Effect> {
        let mut all = e.handle(input);
        for (purpose, text) in replies {
            let c = calls(&all);
            let (call, request) = c.last().expect("a call is waiting");
            assert_eq!(request.purpose, *purpose, "{request:?}");
            let fx = e.handle(reply(*call, &[text]));
            all.extend(fx);
        }
        all
    }

    #[test]
    fn stops_when_the_feedback_says_correct() {
        let mut e = engine(X, refine(&[]));
        let fx = script(
            &mut e,
            run_cmd(),
            &[
                (Purpose::Cot, WRONG),
                (Purpose::Feedback, "It sums to 25.\nVERDICT: incorrect"),
                (Purpose::Refine, RIGHT),
                (Purpose::Feedback, "All good.\n**Verdict:** Correct"),
            ],
        );
        assert_eq!(calls(&fx).len(), 4);
        assert!(e.is_finished(), "{:?}", events(&fx));
        let o = e.outcome().unwrap();
        assert!(o.solved);
        assert_eq!(o.answer.as_deref(), Some("(5 * 6) - (10 - 4) = 24"));
        // A chain: the refinement is the first attempt's child; the feedback is a note.
        let (first, second) = (NodeId(1), NodeId(2));
        assert_eq!(e.tree().node(second).parent, Some(first));
        assert_eq!(e.tree().node(first).note("feedback"), Some("It sums to 25.\nVERDICT: incorrect"));
        assert!(e.tree().node(first).label.as_deref().unwrap().contains("✗ incorrect"));
        assert!(e.tree().node(second).label.as_deref().unwrap().contains("attempt 2"));
        assert_eq!(e.view().step, 2);
        assert_eq!(e.view().params, "self-refine rounds=4 feedback=self");
    }

    #[test]
    fn the_feedback_request_and_the_refine_request_follow_the_contract() {
        let mut e = engine(X, refine(&[]));
        let fx =
            script(&mut e, run_cmd(), &[(Purpose::Cot, WRONG), (Purpose::Feedback, "Sums to 25. VERDICT: incorrect")]);
        let c = calls(&fx);
        let feedback = &c[1].1;
        assert_eq!(feedback.context["attempt"], WRONG);
        assert_eq!(feedback.context["input"], X, "the cot context is kept");
        assert_eq!(feedback.messages[1].role, Role::Assistant);
        assert_eq!(feedback.messages[1].content, WRONG);
        assert!(feedback.messages[2].content.contains("VERDICT: correct"));
        let refine = &c[2].1;
        assert_eq!(refine.purpose, Purpose::Refine);
        assert_eq!(refine.context["feedback"], "Sums to 25. VERDICT: incorrect");
        assert_eq!(refine.context["attempt"], WRONG);
        assert!(refine.messages.last().unwrap().content.contains("Sums to 25."));
    }

    #[test]
    fn stops_after_the_round_limit_with_the_last_attempt() {
        let mut e = engine(X, refine(&[("rounds", 2.into())]));
        let no = (Purpose::Feedback, "VERDICT: incorrect");
        let third = "Answer: 4 * 5 + 6 - 10 = 24";
        let fx = script(
            &mut e,
            run_cmd(),
            &[(Purpose::Cot, WRONG), no, (Purpose::Refine, WRONG), no, (Purpose::Refine, third), no],
        );
        assert_eq!(calls(&fx).len(), 6, "one answer, two refinements, three judgements");
        assert!(e.is_finished());
        let o = e.outcome().unwrap();
        assert_eq!(o.answer.as_deref(), Some("4 * 5 + 6 - 10 = 24"));
        assert!(!o.solved);
        assert_eq!(e.tree().node(o.finals[0]).depth, 3);
        assert!(events(&fx)
            .iter()
            .any(|ev| matches!(ev, Event::Log { text } if text.contains("2 refinements, the budget"))));
    }

    #[test]
    fn oracle_feedback_makes_no_calls_and_never_names_the_gold() {
        let mut e = engine(X, refine(&[("feedback", "oracle".into()), ("first", "io".into())]));
        let fx = script(&mut e, run_cmd(), &[(Purpose::Io, "Answer: 4 + 5 + 6 + 10 = 24"), (Purpose::Refine, RIGHT)]);
        let c = calls(&fx);
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|(_, r)| r.purpose != Purpose::Feedback));
        assert!(e.is_finished());
        assert!(e.outcome().unwrap().solved);
        let fb = e.tree().node(NodeId(1)).note("feedback").unwrap();
        assert_eq!(fb, "The answer 4 + 5 + 6 + 10 = 24 is wrong: equals 25, not 24.");
        assert_eq!(c[1].1.context["feedback"], fb);
        assert_eq!(e.tree().node(NodeId(2)).note("feedback"), Some("The answer (5 * 6) - (10 - 4) = 24 is correct."));
        // A right first answer: one call in all.
        let mut e = engine(X, refine(&[("feedback", "oracle".into())]));
        let fx = script(&mut e, run_cmd(), &[(Purpose::Cot, RIGHT)]);
        assert_eq!(calls(&fx).len(), 1);
        assert!(e.is_finished() && e.outcome().unwrap().solved);
    }

    #[test]
    fn an_unreadable_verdict_is_taken_as_incorrect_and_said() {
        let mut e = engine(X, refine(&[("rounds", 1.into())]));
        let fx = script(&mut e, run_cmd(), &[(Purpose::Cot, RIGHT), (Purpose::Feedback, "Looks fine to me.")]);
        assert_eq!(calls(&fx).last().unwrap().1.purpose, Purpose::Refine);
        assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Log { text } if text.contains("no VERDICT line"))));
        assert!(e.tree().node(NodeId(1)).label.as_deref().unwrap().contains("? no verdict"));
    }

    #[test]
    fn editing_the_feedback_makes_the_next_refinement_follow_it() {
        let mut e = engine(X, refine(&[]));
        // Step through the answer and its feedback; the run pauses before the refinement.
        let fx = e.handle(cmd(Command::Step { n: 2 }));
        let first = calls(&fx)[0].0;
        let fx = e.handle(reply(first, &[WRONG]));
        let fb = calls(&fx)[0].0;
        let fx = e.handle(reply(fb, &["The steps look right.\nVERDICT: incorrect"]));
        assert!(calls(&fx).is_empty(), "two steps taken: paused");
        let attempt = NodeId(1);
        let text = e.tree().node(attempt).edit_text();
        assert_eq!(text, format!("{WRONG}\n── feedback ──\nThe steps look right.\nVERDICT: incorrect"));
        let edited = text.replace("The steps look right.", "The sum is 25, not 24: multiply instead.");
        let fx = e.handle(cmd(Command::Edit { node: attempt, text: edited }));
        assert!(!events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })), "{:?}", events(&fx));
        assert_eq!(e.tree().len(), 2, "the attempt itself did not change: no new node");
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let c = calls(&fx);
        assert_eq!(c[0].1.purpose, Purpose::Refine);
        let feedback = c[0].1.context["feedback"].as_str().unwrap();
        assert!(feedback.starts_with("The sum is 25, not 24: multiply instead."), "{feedback}");
        assert!(c[0].1.messages.last().unwrap().content.contains("multiply instead"));
        // The refinement of the edited feedback is the attempt's child and is judged as usual.
        let fx = e.handle(reply(c[0].0, &[RIGHT]));
        assert_eq!(e.tree().node(NodeId(2)).parent, Some(attempt));
        assert!(calls(&fx).is_empty());
        // An empty note or a note the node does not have is refused with a reason.
        for bad in [format!("{WRONG}\n── feedback ──\n"), format!("{WRONG}\n── reflection ──\nx")] {
            let fx = e.handle(cmd(Command::Edit { node: attempt, text: bad }));
            assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Rejected { .. })));
        }
    }

    #[test]
    fn editing_an_attempt_continues_from_the_edited_attempt() {
        let mut e = engine(X, refine(&[("feedback", "oracle".into())]));
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        e.handle(reply(calls(&fx)[0].0, &[WRONG]));
        // The checker judged it; the refinement waits for the next step.
        let fx = e.handle(cmd(Command::Edit { node: NodeId(1), text: RIGHT.into() }));
        assert!(calls(&fx).is_empty());
        let new = NodeId(2);
        assert_eq!(e.tree().node(new).parent, Some(NodeId(0)), "a sibling of the edited attempt");
        assert_eq!(e.tree().node(new).origin, Origin::Human { edited_from: Some(NodeId(1)) });
        let fx = e.handle(run_cmd());
        assert!(calls(&fx).is_empty(), "the checker accepts the edited attempt: no refinement");
        assert!(e.is_finished());
        assert_eq!(e.outcome().unwrap().finals, vec![new]);
        assert!(e.outcome().unwrap().solved);
    }

    #[test]
    fn a_recorded_run_replays_to_the_same_events_and_tree() {
        // Run on the simulated model, keeping every input; feed the inputs to a new engine.
        let mut answer = sim(1.0, 7);
        for p in [refine(&[("rounds", 6.into())]), refine(&[("feedback", "oracle".into()), ("rounds", 10.into())])] {
            for x in ["4 5 6 10", "1 1 4 6", "2 5 8 11"] {
                let mut e = engine(x, p.clone());
                let mut inputs = vec![run_cmd()];
                let mut recorded = Vec::new();
                let mut queue = std::collections::VecDeque::new();
                loop {
                    let fx = e.handle(inputs.last().unwrap().clone());
                    recorded.extend(events(&fx));
                    queue.extend(calls(&fx));
                    let Some((call, request)) = queue.pop_front() else { break };
                    let texts = answer(&request);
                    inputs.push(reply(call, &texts.iter().map(String::as_str).collect::<Vec<_>>()));
                }
                assert!(e.is_finished(), "{x}");
                let mut again = engine(x, p.clone());
                let replayed: Vec<Event> = inputs.iter().flat_map(|i| events(&again.handle(i.clone()))).collect();
                assert_eq!(replayed, recorded, "{x}");
                assert_eq!(again.tree().render_text(), e.tree().render_text());
                let notes =
                    |e: &Engine| e.tree().nodes().map(|n| (n.notes.clone(), n.label.clone())).collect::<Vec<_>>();
                assert_eq!(notes(&again), notes(&e));
                assert_eq!(again.outcome(), e.outcome());
            }
        }
    }

    #[test]
    fn out_of_range_parameters_are_refused_in_one_line() {
        let task = std::sync::Arc::new(crate::tasks::game24::Game24::builtin());
        for (key, value, says) in [
            ("rounds", serde_json::json!(0), "rounds (--rounds) is 0: it must be a whole number from 1 to 50"),
            ("rounds", serde_json::json!(51), "rounds (--rounds) is 51: it must be a whole number from 1 to 50"),
            (
                "feedback",
                serde_json::json!("teacher"),
                "feedback (--feedback) is \"teacher\": it must be one of self, oracle",
            ),
            ("first", serde_json::json!("tot"), "first (--first) is \"tot\": it must be one of cot, io"),
        ] {
            let err = Engine::try_new(task.clone(), X, refine(&[(key, value)])).err().expect(key);
            assert_eq!(err.to_string(), says);
            assert!(!err.to_string().contains('\n'));
        }
    }

    #[test]
    fn backtrack_refines_the_attempt_before_again() {
        let mut e = engine(X, refine(&[("feedback", "oracle".into())]));
        let fx = e.handle(cmd(Command::Step { n: 2 }));
        let fx = e.handle(reply(calls(&fx)[0].0, &[WRONG]));
        let refine_call = calls(&fx)[0].0;
        e.handle(reply(refine_call, &["Answer: 4 * 6 = 24"]));
        let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
        assert!(events(&fx).contains(&Event::Backtracked { from: vec![NodeId(2)], to: vec![NodeId(1)] }));
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let c = calls(&fx);
        assert_eq!(c[0].1.purpose, Purpose::Refine);
        assert_eq!(e.core.calls[&c[0].0].node, NodeId(1));
        assert_eq!(c[0].1.nonce, 1, "a fresh answer, not the one that was left");
    }

    #[test]
    fn pruning_the_latest_attempt_refines_the_one_above_it_again() {
        let mut e = engine(X, refine(&[("feedback", "oracle".into())]));
        let fx = e.handle(cmd(Command::Step { n: 2 }));
        let fx = e.handle(reply(calls(&fx)[0].0, &[WRONG]));
        e.handle(reply(calls(&fx)[0].0, &["Answer: 4 * 6 = 24"]));
        e.handle(cmd(Command::Prune { node: NodeId(2) }));
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let c = calls(&fx);
        assert_eq!(c[0].1.purpose, Purpose::Refine);
        assert_eq!(e.core.calls[&c[0].0].node, NodeId(1));
        // Pruning while a refinement is in flight cancels it and goes back too.
        let fx = e.handle(cmd(Command::Prune { node: NodeId(1) }));
        assert_eq!(cancelled(&fx), vec![c[0].0]);
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let c = calls(&fx);
        assert_eq!((c[0].1.purpose, e.core.calls[&c[0].0].node), (Purpose::Cot, NodeId(0)), "a new first answer");
        assert_eq!(c[0].1.nonce, 1);
    }
}
