//! Chain-of-thought prompting: k step-by-step answers; success per sample and best-of-k.

use crate::engine::{Core, NodeId, Outcome, Purpose};

use super::samples::SampleAnswers;
use super::{Method, Progress};

#[derive(Debug, Clone, Default)]
pub struct Cot {
    samples: SampleAnswers,
}

impl Cot {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Method for Cot {
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
        self.samples.finalize(core)
    }

    fn on_children(&mut self, _core: &mut Core, _parent: NodeId, children: &[NodeId], _by_hand: bool) {
        self.samples.answers.extend_from_slice(children);
    }

    fn backtrack(&mut self, _core: &mut Core) -> Result<(), String> {
        SampleAnswers::no_tree("cot")
    }

    fn continue_from(&mut self, _core: &mut Core, _node: NodeId) -> Result<(), String> {
        SampleAnswers::no_tree("cot")
    }
}
