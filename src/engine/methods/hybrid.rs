//! The ReAct paper's hybrids (Yao et al. 2023, §3.3), built from the `React` and
//! `CotSc` state machines and delegating to whichever part is running:
//!
//! * `react-cot-sc`: ReAct first; when it gives no answer within `max_steps`, back
//!   off to CoT-SC with `samples` samples and take the majority answer.
//! * `cot-sc-react`: CoT-SC first; when the majority answer has fewer than
//!   `majority_threshold` × n votes (the paper's n/2), back off to ReAct.
//!
//! Both parts grow the same tree under the root (ReAct steps as a chain, CoT-SC
//! samples as whole answers), and the switch is logged with its reason.

use std::collections::BTreeSet;

use crate::engine::params::{DefaultValue, Kind, ParamDecl};
use crate::engine::{Core, MethodKind, NodeId, Outcome, ParamError, ParamReader};
use crate::protocol::ToolResult;

use super::cot_sc::CotSc;
use super::react::{React, ReactParams, MAX_STEPS, TOOL_MODE};
use super::samples::{SampleParams, SAMPLES};
use super::{Method, MethodInfo, MethodView, Progress, Votes};

/// Registrations (see `methods::REGISTRY`).
pub const REACT_COT_SC: MethodKind = MethodKind("react-cot-sc");
pub const COT_SC_REACT: MethodKind = MethodKind("cot-sc-react");
pub const REACT_COT_SC_INFO: MethodInfo = MethodInfo {
    kind: REACT_COT_SC,
    about: "ReAct, backing off to CoT-SC when it does not finish within its steps (ReAct paper §3.3)",
    react: super::ReactShape::Part,
    uses_tools: true,
    needs,
    params: &[&MAX_STEPS, &TOOL_MODE, &HYBRID_SAMPLES],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(Hybrid::react_cot_sc(HybridParams::read(p)?))),
};
pub const COT_SC_REACT_INFO: MethodInfo = MethodInfo {
    kind: COT_SC_REACT,
    about: "CoT-SC, backing off to ReAct when the majority answer is weak (ReAct paper §3.3)",
    react: super::ReactShape::Part,
    uses_tools: true,
    needs,
    params: &[&MAX_STEPS, &TOOL_MODE, &HYBRID_SAMPLES, &MAJORITY_THRESHOLD],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(Hybrid::cot_sc_react(HybridParams::read(p)?))),
};

/// The ReAct paper's hybrids take 21 CoT-SC samples.
pub const HYBRID_SAMPLES: ParamDecl = ParamDecl { default: DefaultValue::Whole(21), ..SAMPLES };

pub const MAJORITY_THRESHOLD: ParamDecl = ParamDecl {
    name: "majority_threshold",
    help: "Back off to ReAct when the majority answer has fewer than this share of the samples (the paper's n/2)",
    kind: Kind::Real { min: 0.0, max: 1.0 },
    default: DefaultValue::Real(0.5),
};
/// `MethodInfo::needs`: ReAct steps (in the run's tool mode) and chain-of-thought samples.
fn needs(p: &crate::engine::Params) -> super::Needs {
    super::Needs::react(p).and(super::Needs::of(&[], &[crate::protocol::Purpose::Cot]))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    React,
    CotSc,
    Done,
}

/// A hybrid's parameters: its two parts' and the share of votes CoT-SC must win.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridParams {
    pub react: ReactParams,
    pub samples: SampleParams,
    /// cot-sc-react: back off to ReAct when the majority has fewer than this share of the
    /// votes (`None` for react-cot-sc, which takes the majority whatever its share).
    pub majority_threshold: Option<f64>,
}

impl HybridParams {
    pub fn read(p: &ParamReader) -> Result<HybridParams, ParamError> {
        let cot_sc_first = p.method() == COT_SC_REACT;
        Ok(HybridParams {
            react: ReactParams::read(p)?,
            samples: SampleParams::read(p)?,
            majority_threshold: if cot_sc_first { Some(p.real(&MAJORITY_THRESHOLD)?) } else { None },
        })
    }
}

#[derive(Debug, Clone)]
pub struct Hybrid {
    params: HybridParams,
    /// `ReactCotSc` or `CotScReact`: which part runs first.
    kind: MethodKind,
    react: React,
    cot_sc: CotSc,
    part: Part,
    /// The CoT-SC samples, to tell them from ReAct steps.
    samples: BTreeSet<NodeId>,
    /// The CoT-SC result once its samples are in (it is worked out once).
    cot_sc_outcome: Option<Outcome>,
    outcome: Option<Outcome>,
}

impl Hybrid {
    pub fn react_cot_sc(params: HybridParams) -> Self {
        Hybrid::new(REACT_COT_SC, Part::React, params)
    }

    pub fn cot_sc_react(params: HybridParams) -> Self {
        Hybrid::new(COT_SC_REACT, Part::CotSc, params)
    }

    fn new(kind: MethodKind, first: Part, params: HybridParams) -> Self {
        Hybrid {
            params,
            kind,
            react: React::new(params.react),
            cot_sc: CotSc::new(params.samples),
            part: first,
            samples: BTreeSet::new(),
            cot_sc_outcome: None,
            outcome: None,
        }
    }

    fn finish(&mut self, mut outcome: Outcome, by: MethodKind) {
        outcome.answered_by = outcome.answer.is_some().then_some(by);
        self.outcome = Some(outcome);
        self.part = Part::Done;
    }

    /// ReAct stopped: with an answer it is the result; without one, fall back.
    fn react_finished(&mut self, core: &mut Core) {
        let mut outcome = self.react.outcome(core);
        if outcome.answer.is_some() {
            // cot-sc-react: the samples that were not trusted stay as further finals.
            if let Some(sc) = &self.cot_sc_outcome {
                outcome.finals.extend(sc.finals.iter().copied());
                outcome.solved_any |= sc.solved_any;
                outcome.sample_accuracy = sc.sample_accuracy;
            }
            return self.finish(outcome, super::react::KIND);
        }
        match (self.kind, self.cot_sc_outcome.clone()) {
            (kind, Some(sc)) => {
                let react = if kind == COT_SC_REACT { "ReAct gave no answer either" } else { "ReAct gave no answer" };
                core.log(self.keeping_the_majority(react, &sc));
                self.finish(sc, super::cot_sc::KIND);
            }
            (_, None) => {
                core.log(format!(
                    "ReAct gave no answer within {}: backing off to CoT-SC with {}",
                    super::count(self.params.react.max_steps, "step", "steps"),
                    super::count(self.params.samples.samples as usize, "sample", "samples")
                ));
                self.part = Part::CotSc;
            }
        }
    }

    /// CoT-SC's samples are in: react-cot-sc takes the majority; cot-sc-react
    /// takes it only if it is strong enough.
    fn cot_sc_finished(&mut self, core: &mut Core) {
        let outcome = self.cot_sc.outcome(core);
        self.cot_sc_outcome = Some(outcome.clone());
        // react-cot-sc has no threshold: its CoT-SC part is the last resort.
        let Some(threshold) = self.params.majority_threshold else {
            return self.finish(outcome, super::cot_sc::KIND);
        };
        let majority = self.cot_sc.majority.unwrap_or(super::cot_sc::Majority { votes: 0, samples: 0 });
        let needed = threshold * majority.samples as f64;
        let (votes, n) = (majority.votes, majority.samples);
        if votes > 0 && votes as f64 >= needed {
            core.log(format!(
                "the majority has {votes} of {n} {} (at least {threshold} × {n}): keeping the CoT-SC answer",
                super::noun(n, "vote", "votes")
            ));
            self.finish(outcome, super::cot_sc::KIND);
        } else {
            core.log(format!(
                "the majority has only {votes} of {n} {} (fewer than {threshold} × {n} = {needed}): \
                 backing off to ReAct",
                super::noun(n, "vote", "votes")
            ));
            self.part = Part::React;
        }
    }
}

impl Hybrid {
    /// The log line for falling back to CoT-SC's result, in the vote's own figures: the
    /// majority answer with its votes, or that no sample gave an answer to keep.
    fn keeping_the_majority(&self, react: &str, sc: &Outcome) -> String {
        let m = self.cot_sc.majority.unwrap_or(super::cot_sc::Majority { votes: 0, samples: 0 });
        let votes = format!("{} of {} {}", m.votes, m.samples, super::noun(m.samples, "vote", "votes"));
        match &sc.answer {
            Some(answer) if m.votes > 0 => {
                format!("{react}: keeping the CoT-SC majority answer \"{answer}\" ({votes})")
            }
            _ => format!("{react}, and no CoT-SC sample gave an answer ({votes}): the run ends with no answer"),
        }
    }

    /// The CoT-SC vote once that part has started (cot-sc-react: with the share the
    /// majority needs); none while only ReAct has run.
    fn votes(&self, core: &Core) -> Option<Votes> {
        if self.part != Part::CotSc && self.samples.is_empty() {
            return None;
        }
        let threshold = self.params.majority_threshold;
        Some(self.cot_sc.votes(core, threshold))
    }
}

impl Method for Hybrid {
    fn advance(&mut self, core: &mut Core) -> Progress {
        match self.part {
            Part::React => self.react.advance(core),
            Part::CotSc => self.cot_sc.advance(core),
            Part::Done => Progress::Stuck("the episode is finished".into()),
        }
    }

    fn settle(&mut self, core: &mut Core) {
        match self.part {
            Part::React => {
                self.react.settle(core);
                if self.react.done() {
                    self.react_finished(core);
                }
            }
            Part::CotSc => {
                self.cot_sc.settle(core);
                if self.cot_sc.done() {
                    self.cot_sc_finished(core);
                }
            }
            Part::Done => {}
        }
    }

    fn done(&self) -> bool {
        self.part == Part::Done
    }

    fn outcome(&mut self, _core: &mut Core) -> Outcome {
        self.outcome.clone().unwrap_or_default()
    }

    fn on_children(&mut self, core: &mut Core, parent: NodeId, children: &[NodeId], by_hand: bool) {
        if self.part == Part::CotSc && !by_hand {
            self.samples.extend(children.iter().copied());
            self.cot_sc.on_children(core, parent, children, by_hand);
        } else {
            self.react.on_children(core, parent, children, by_hand);
        }
    }

    fn on_prune(&mut self, core: &mut Core, node: NodeId) {
        if self.samples.contains(&node) {
            self.cot_sc.on_prune(core, node);
        } else {
            self.react.on_prune(core, node);
        }
    }

    fn on_edit(&mut self, core: &mut Core, original: NodeId, new: NodeId) {
        if self.samples.contains(&original) {
            self.cot_sc.on_edit(core, original, new);
        } else {
            self.react.on_edit(core, original, new);
        }
    }

    fn on_act(&mut self, core: &mut Core, node: NodeId, reply: &crate::protocol::Completion) {
        self.react.on_act(core, node, reply);
    }

    /// A ReAct step is edited as in ReAct (the agent goes on from the edit); a CoT-SC
    /// sample is a whole answer, edited like a tree node by the engine.
    fn edit(&mut self, core: &mut Core, node: NodeId, text: &str) -> Option<Result<NodeId, String>> {
        if self.samples.contains(&node) {
            return None;
        }
        let result = self.react.edit(core, node, text)?;
        if result.is_ok() {
            if self.cot_sc_outcome.is_none() {
                self.cot_sc = CotSc::new(self.params.samples);
            }
            self.outcome = None;
            self.part = Part::React;
        }
        Some(result)
    }

    fn on_act_failed(&mut self, core: &mut Core, node: NodeId, error: &crate::protocol::CallError) {
        self.react.on_act_failed(core, node, error);
    }

    fn on_tool(&mut self, core: &mut Core, node: NodeId, result: ToolResult) {
        self.react.on_tool(core, node, result);
    }

    fn backtrack(&mut self, _core: &mut Core, _to: Option<NodeId>) -> Result<(), String> {
        Err(format!(
            "{} follows one ReAct trajectory and samples whole CoT answers: select a ReAct step and continue \
             from it (enter), or edit it",
            self.kind.label()
        ))
    }

    /// Continue the ReAct part from the root or one of its steps; when it stops,
    /// the hybrid's rule applies again (CoT-SC runs at most once).
    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        if self.samples.contains(&node) {
            return Err(format!(
                "{node} is a CoT-SC sample, a whole answer: continue from the question or a ReAct step"
            ));
        }
        self.react.continue_from(core, node)?;
        if self.cot_sc_outcome.is_none() {
            // Its call (if any) was just cancelled: start CoT-SC afresh if it is needed.
            self.cot_sc = CotSc::new(self.params.samples);
        }
        self.outcome = None;
        self.part = Part::React;
        Ok(())
    }

    fn view(&self, core: &Core) -> MethodView {
        let p = &self.params;
        let react = self.react.view(core);
        MethodView {
            params: format!("{} max {} steps k={}", self.kind.label(), p.react.max_steps, p.samples.samples),
            step: react.step,
            step_noun: "ReAct step",
            cutoff: None,
            candidates: super::Candidates::Siblings,
            votes: self.votes(core),
            ..MethodView::default()
        }
    }
}
