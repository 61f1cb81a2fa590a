//! Self-consistency over chains of thought: k CoT samples, majority vote on the
//! final answer (ties go to the answer seen first).

use crate::engine::MethodKind;
use std::collections::HashMap;

use crate::engine::{Core, NodeId, Outcome, Purpose};

use super::samples::{SampleAnswers, SampleParams};
use super::{Method, MethodInfo, MethodView, Progress};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("cot-sc");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "CoT with self-consistency: the majority answer of k samples",
    react_steps: false,
    tree_search: false,
    default_samples: None,
    own_params: &[],
    build: |p| Ok(Box::new(CotSc::new(SampleParams::read(p)?))),
};

#[derive(Debug, Clone)]
pub struct CotSc {
    samples: SampleAnswers,
    /// Set by `outcome`: how strong the majority was.
    pub majority: Option<Majority>,
}

/// The majority answer's votes among the samples that came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Majority {
    pub votes: usize,
    pub samples: usize,
}

impl CotSc {
    pub fn new(params: SampleParams) -> Self {
        CotSc { samples: SampleAnswers::new(params), majority: None }
    }
}

impl Method for CotSc {
    fn advance(&mut self, core: &mut Core) -> Progress {
        self.samples.advance(core, Purpose::Cot)
    }

    fn settle(&mut self, core: &mut Core) {
        self.samples.settle(core)
    }

    fn done(&self) -> bool {
        self.samples.done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        let mut outcome = self.samples.finalize(core);
        // Count normalised answers in order of first appearance.
        let mut order: Vec<String> = Vec::new();
        let mut counts: HashMap<String, (usize, NodeId)> = HashMap::new();
        for &id in &outcome.finals {
            let Some(answer) = core.tree.node(id).answer.clone() else { continue };
            let key = core.task.answer_key(&answer);
            let entry = counts.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                (0, id)
            });
            entry.0 += 1;
        }
        let mut best: Option<(&String, usize, NodeId)> = None;
        for key in &order {
            let (count, first) = counts[key];
            if best.is_none_or(|(_, c, _)| count > c) {
                best = Some((key, count, first));
            }
        }
        let samples = self.samples.answers.len();
        self.majority = Some(Majority { votes: best.map_or(0, |(_, count, _)| count), samples });
        match best {
            Some((_, count, winner)) => {
                let answer = core.tree.node(winner).answer.clone();
                outcome.solved = answer.as_deref().is_some_and(|a| core.task.check(&core.x, a).is_ok());
                // Rank the majority's representative first.
                outcome.finals.retain(|&n| n != winner);
                outcome.finals.insert(0, winner);
                core.log(format!(
                    "majority answer {:?} with {count} of {} {}",
                    answer.as_deref().unwrap_or(""),
                    samples,
                    super::noun(samples, "vote", "votes")
                ));
                outcome.answer = answer;
            }
            None => {
                outcome.solved = false;
                outcome.answer = None;
            }
        }
        outcome
    }

    fn on_children(&mut self, _core: &mut Core, _parent: NodeId, children: &[NodeId], _by_hand: bool) {
        self.samples.answers.extend_from_slice(children);
    }

    fn backtrack(&mut self, _core: &mut Core, _to: Option<NodeId>) -> Result<(), String> {
        SampleAnswers::no_tree("cot-sc")
    }

    fn continue_from(&mut self, _core: &mut Core, _node: NodeId) -> Result<(), String> {
        SampleAnswers::no_tree("cot-sc")
    }

    fn view(&self, _core: &Core) -> MethodView {
        MethodView { params: self.samples.params.label(KIND.label()), ..MethodView::default() }
    }
}
