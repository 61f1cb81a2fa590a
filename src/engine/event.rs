//! What observers (the UI, the session file, the headless runner) see happen.

use serde::{Deserialize, Serialize};

use super::tree::{NodeId, NodeStatus};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode", content = "remaining")]
pub enum RunMode {
    Paused,
    Step(u32),
    Running,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    NodeAdded {
        id: NodeId,
        parent: NodeId,
        /// The node's own thought (shared with it, not a copy).
        thought: crate::protocol::Text,
    },
    Scored {
        id: NodeId,
        value: f64,
    },
    Status {
        id: NodeId,
        status: NodeStatus,
    },
    /// Selection at the end of a BFS step: which candidates were kept.
    Selected {
        step: usize,
        kept: Vec<NodeId>,
        candidates: usize,
    },
    Backtracked {
        from: Vec<NodeId>,
        to: Vec<NodeId>,
    },
    /// The method set some of a node's numbers (MCTS: N and Q).
    Metrics {
        id: NodeId,
        metrics: std::collections::BTreeMap<String, f64>,
    },
    Mode {
        mode: RunMode,
    },
    CallFailed {
        call: u64,
        node: NodeId,
        message: String,
    },
    ReplyDropped {
        call: u64,
        reason: String,
    },
    /// The run's memory changed (the method learnt something, or a person edited it).
    Memory {
        change: crate::memory::MemoryChange,
    },
    /// A line for the transcript: what the search did and why.
    Log {
        text: String,
    },
    /// A command that could not be carried out, and why.
    Rejected {
        reason: String,
    },
    Finished {
        outcome: Outcome,
    },
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Outcome {
    /// Final states in rank order (best first).
    pub finals: Vec<NodeId>,
    /// The answer of the top-ranked final state.
    pub answer: Option<String>,
    /// The top-ranked answer is correct.
    pub solved: bool,
    /// Some final state's answer is correct.
    pub solved_any: bool,
    /// For io/cot/cot-sc: the share of samples whose answer is correct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_accuracy: Option<f64>,
    /// For the hybrids (react-cot-sc, cot-sc-react): the part that gave the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<super::MethodKind>,
}

impl Outcome {
    /// The outputs a search stands by: every sample for whole-answer methods (io, cot,
    /// cot-sc: those that report a sample accuracy), the top-ranked final state otherwise.
    pub fn outputs(&self) -> Vec<NodeId> {
        if self.sample_accuracy.is_some() {
            self.finals.clone()
        } else {
            self.finals.first().copied().into_iter().collect()
        }
    }
}
