//! What the engine asks its driver to do.

use serde::{Deserialize, Serialize};

use super::check::CheckRequest;
use super::event::Event;
use super::tree::NodeId;
use crate::protocol::{LlmRequest, ToolRequest};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Effect {
    /// Make a model call; answer with `Input::LlmReply { call, .. }`.
    CallLlm { call: u64, request: LlmRequest },
    /// Run a tool for the trajectory ending at `node`, whose tool state is the one
    /// left by the tool call of `after` (the previous step; the root for the first).
    CallTool { call: u64, tool: ToolRequest, node: NodeId, after: NodeId },
    /// Run a task's check program (an answer's or a step's judge); answer with
    /// `Input::CheckReply { call, .. }`. The engine never runs it itself.
    RunCheck { call: u64, request: CheckRequest },
    /// These calls no longer matter (pruned, backtracked); their replies will be dropped.
    Cancel { calls: Vec<u64> },
    /// Something observers should see.
    Emit { event: Event },
}

impl Effect {
    /// The call this effect makes (a model, tool or check call), if it makes one.
    pub fn call(&self) -> Option<u64> {
        match self {
            Effect::CallLlm { call, .. } | Effect::CallTool { call, .. } | Effect::RunCheck { call, .. } => Some(*call),
            Effect::Cancel { .. } | Effect::Emit { .. } => None,
        }
    }
}
