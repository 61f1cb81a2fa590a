//! Self-consistency over chains of thought: k CoT samples, majority vote on the
//! final answer (ties go to the answer seen first).

use crate::engine::MethodKind;
use std::collections::HashMap;

use crate::engine::{Core, NodeId, Outcome};
use crate::protocol::Purpose;

use super::samples::{SampleAnswers, SampleParams};
use super::{Method, MethodInfo, MethodView, Progress, Tally, Votes};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("cot-sc");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "CoT with self-consistency: the majority answer of k samples",
    react: super::ReactShape::None,
    uses_tools: false,
    needs: |_| super::Needs::of(&[], &[crate::protocol::Purpose::Cot]),
    params: &[&super::samples::SAMPLES],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(CotSc::new(SampleParams::read(p)?))),
};

#[derive(Debug, Clone)]
pub struct CotSc {
    samples: SampleAnswers,
    /// Set by `outcome`: how strong the majority was.
    pub majority: Option<Majority>,
    /// Set by `outcome`: the vote as it was counted, so the explorer keeps showing the
    /// count behind the answer even if a person prunes a sample afterwards.
    counted: Option<Votes>,
}

/// The majority answer's votes among the samples that came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Majority {
    pub votes: usize,
    pub samples: usize,
}

impl CotSc {
    pub fn new(params: SampleParams) -> Self {
        CotSc { samples: SampleAnswers::new(params), majority: None, counted: None }
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
        let (tallies, answers) = tally(core, &outcome.finals);
        let best = tallies.first().map(|t| (t.votes, t.first));
        // The answers tied with the majority (a tie goes to the answer seen first).
        let tied: Vec<String> =
            tallies.iter().skip(1).filter(|t| Some(t.votes) == best.map(|b| b.0)).map(|t| t.answer.clone()).collect();
        let samples = self.samples.answers.len();
        let asked = self.samples.params.samples as usize;
        self.counted = Some(Votes { tallies, samples, asked, threshold: None, answers });
        self.majority = Some(Majority { votes: best.map_or(0, |(count, _)| count), samples });
        match best {
            Some((count, winner)) => {
                let answer = core.tree.node(winner).answer.clone();
                outcome.solved = answer.as_deref().is_some_and(|a| core.check(a).is_ok());
                // Rank the majority's representative first.
                outcome.finals.retain(|&n| n != winner);
                outcome.finals.insert(0, winner);
                let tie = if tied.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", tied with {} and taken as the answer the samples gave first",
                        tied.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ")
                    )
                };
                core.log(format!(
                    "majority answer {:?} with {count} of {} {}{tie}",
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
        SampleAnswers::no_tree(KIND.label())
    }

    fn continue_from(&mut self, _core: &mut Core, _node: NodeId) -> Result<(), String> {
        SampleAnswers::no_tree(KIND.label())
    }

    fn view(&self, core: &Core) -> MethodView {
        MethodView {
            params: self.samples.params.label(KIND.label()),
            votes: Some(self.votes(core, None)),
            // One step: the call for all k samples.
            step: usize::from(self.samples.asked),
            ..MethodView::default()
        }
    }
}

impl CotSc {
    /// The vote so far, over the samples that came back (the pane's histogram).
    pub fn votes(&self, core: &Core, threshold: Option<f64>) -> Votes {
        if let Some(counted) = &self.counted {
            return Votes { threshold, ..counted.clone() };
        }
        let usable: Vec<NodeId> = self.samples.answers.iter().copied().filter(|&n| core.usable(n)).collect();
        let (tallies, answers) = tally(core, &usable);
        Votes {
            tallies,
            samples: self.samples.answers.len(),
            asked: self.samples.params.samples as usize,
            threshold,
            answers,
        }
    }
}

/// Count the normalised answers of `samples`: one tally per answer, most votes first,
/// ties in the order the answers were first seen (so the first is the majority: ties
/// go to the answer seen first). Also gives each sample's normalised answer.
pub fn tally(core: &Core, samples: &[NodeId]) -> (Vec<Tally>, Vec<(NodeId, String)>) {
    let mut tallies: Vec<Tally> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut answers = Vec::new();
    for &id in samples {
        let node = core.tree.node(id);
        // Finals carry their answer; samples not finalized yet are read the same way.
        let Some(answer) = node.answer.clone().or_else(|| core.task.extract_answer(&core.x, &node.path)) else {
            continue;
        };
        let key = core.task.answer_key(&answer);
        answers.push((id, key.clone()));
        match index.get(&key) {
            Some(&i) => tallies[i].votes += 1,
            None => {
                index.insert(key.clone(), tallies.len());
                tallies.push(Tally { answer: key, votes: 1, first: id });
            }
        }
    }
    // A stable sort: equal counts keep their first-seen order.
    tallies.sort_by_key(|t| std::cmp::Reverse(t.votes));
    (tallies, answers)
}
