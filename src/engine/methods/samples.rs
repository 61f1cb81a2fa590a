//! Shared machinery of the sampling baselines (io, cot, cot-sc): one call for k
//! whole answers from the root, each becoming a final child.

use crate::engine::params::{DefaultValue, Kind, ParamDecl, MAX_SAMPLES};
use crate::engine::{CallKind, Core, LlmRequest, NodeId, ParamError, ParamReader, Purpose};

use super::Progress;

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
