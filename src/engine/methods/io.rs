//! Input-output prompting: k direct answers; success per sample and best-of-k.

use crate::engine::MethodKind;
use crate::engine::{Core, NodeId, Outcome, Purpose};

use super::samples::{SampleAnswers, SampleParams};
use super::{Method, MethodInfo, MethodView, Progress};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("io");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "IO prompting: k whole answers, no reasoning",
    react: super::ReactShape::None,
    uses_tools: false,
    needs: |_| super::Needs::of(&[], &[crate::engine::Purpose::Io]),
    params: &[&super::samples::SAMPLES],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(Io::new(SampleParams::read(p)?))),
};

#[derive(Debug, Clone)]
pub struct Io {
    samples: SampleAnswers,
}

impl Io {
    pub fn new(params: SampleParams) -> Self {
        Io { samples: SampleAnswers::new(params) }
    }
}

impl Method for Io {
    fn advance(&mut self, core: &mut Core) -> Progress {
        self.samples.advance(core, Purpose::Io)
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

    fn backtrack(&mut self, _core: &mut Core, _to: Option<NodeId>) -> Result<(), String> {
        SampleAnswers::no_tree("io")
    }

    fn continue_from(&mut self, _core: &mut Core, _node: NodeId) -> Result<(), String> {
        SampleAnswers::no_tree("io")
    }

    fn view(&self, _core: &Core) -> MethodView {
        MethodView {
            params: self.samples.params.label(KIND.label()),
            // One step: the call for all k samples.
            step: usize::from(self.samples.asked),
            ..MethodView::default()
        }
    }
}
