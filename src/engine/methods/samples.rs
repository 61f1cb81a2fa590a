//! Shared machinery of the sampling baselines (io, cot, cot-sc): one call for k
//! whole answers from the root, each becoming a final child; and io's and cot's
//! one implementation, [`WholeAnswers`].

use crate::engine::params::{DefaultValue, Kind, ParamDecl, MAX_SAMPLES};
use crate::engine::{CallKind, Core, MethodKind, NodeId, Outcome, ParamError, ParamReader};
use crate::protocol::{LlmRequest, Purpose};

use super::{Method, MethodView, Progress};

/// k: the whole answers asked for in one call (io, cot, cot-sc and the hybrids' CoT-SC).
pub const SAMPLES: ParamDecl = ParamDecl {
    name: "samples",
    help: "k: whole answers sampled in one call",
    kind: Kind::Whole { min: 1, max: MAX_SAMPLES },
    default: DefaultValue::Whole(10),
};

/// The sampling baselines' parameters: k, the answers asked for in one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleParams {
    pub samples: u32,
}

impl SampleParams {
    pub fn read(p: &ParamReader) -> Result<SampleParams, ParamError> {
        // At most MAX_SAMPLES, so it fits.
        Ok(SampleParams { samples: u32::try_from(p.whole(&SAMPLES)?).unwrap_or(u32::MAX) })
    }

    pub fn label(&self, method: &str) -> String {
        format!("{method} k={}", self.samples)
    }
}

#[derive(Debug, Clone)]
pub struct SampleAnswers {
    pub params: SampleParams,
    pub asked: bool,
    pub answers: Vec<NodeId>,
    pub done: bool,
}

impl SampleAnswers {
    pub fn new(params: SampleParams) -> SampleAnswers {
        SampleAnswers { params, asked: false, answers: Vec::new(), done: false }
    }

    pub fn advance(&mut self, core: &mut Core, purpose: Purpose) -> Progress {
        if self.asked {
            return Progress::Stuck("all samples are in".into());
        }
        let prompt = match purpose {
            Purpose::Io => core.task.io_prompt(&core.x),
            _ => core.task.cot_prompt(&core.x),
        };
        let request = LlmRequest::from_prompt(prompt, self.params.samples, core.temperature);
        let root = core.tree.root();
        core.issue(root, CallKind::Answer, request, false);
        self.asked = true;
        Progress::Issued(1)
    }

    pub fn settle(&mut self, core: &Core) {
        if self.asked && !core.has_pending() {
            self.done = true;
        }
    }

    /// Finalize the usable answers; returns (outcome over them, share correct).
    pub fn finalize(&self, core: &mut Core) -> crate::engine::Outcome {
        let finals: Vec<NodeId> = self.answers.iter().copied().filter(|&n| core.usable(n)).collect();
        let mut outcome = core.finalize(finals);
        let total = outcome.finals.len();
        let correct =
            outcome.finals.iter().filter(|&&n| core.tree.node(n).status == crate::engine::NodeStatus::Solution).count();
        outcome.sample_accuracy = Some(if total == 0 { 0.0 } else { correct as f64 / total as f64 });
        outcome
    }

    pub fn no_tree(what: &str) -> Result<(), String> {
        Err(format!("{what} samples whole answers; there is no tree to backtrack or continue in"))
    }
}

/// The io and cot methods: k whole answers to the task's input-output or chain-of-thought
/// prompt, scored per sample and best-of-k. One implementation, registered under each
/// name by `io.rs` and `cot.rs` with the prompt it asks with.
#[derive(Debug, Clone)]
pub struct WholeAnswers {
    kind: MethodKind,
    /// `Purpose::Io` or `Purpose::Cot`: which of the task's prompts is asked.
    prompt: Purpose,
    samples: SampleAnswers,
}

impl WholeAnswers {
    pub fn new(kind: MethodKind, prompt: Purpose, params: SampleParams) -> WholeAnswers {
        WholeAnswers { kind, prompt, samples: SampleAnswers::new(params) }
    }

    /// `MethodInfo::build` of a method asking `prompt` under the name `kind`.
    pub fn build(kind: MethodKind, prompt: Purpose, p: &ParamReader) -> Result<Box<dyn Method>, ParamError> {
        Ok(Box::new(WholeAnswers::new(kind, prompt, SampleParams::read(p)?)))
    }
}

impl Method for WholeAnswers {
    fn advance(&mut self, core: &mut Core) -> Progress {
        self.samples.advance(core, self.prompt)
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
        SampleAnswers::no_tree(self.kind.label())
    }

    fn continue_from(&mut self, _core: &mut Core, _node: NodeId) -> Result<(), String> {
        SampleAnswers::no_tree(self.kind.label())
    }

    fn view(&self, _core: &Core) -> MethodView {
        MethodView {
            params: self.samples.params.label(self.kind.label()),
            // One step: the call for all k samples.
            step: usize::from(self.samples.asked),
            ..MethodView::default()
        }
    }
}
