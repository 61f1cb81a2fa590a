//! Everything nondeterministic that enters the engine. A session file is the list
//! of these, so feeding them again rebuilds every state.

use serde::{Deserialize, Serialize};

use super::check::CheckReply;
use super::command::Command;
use crate::protocol::{CallError, LlmResponse, ToolResult};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum Input {
    Command {
        command: Command,
    },
    LlmReply(LlmReply),
    ToolReply(ToolReply),
    /// A task's check program's verdict on an answer or a step (see [`super::check`]).
    CheckReply(CheckReply),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolReply {
    pub call: u64,
    pub result: ToolResult,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmReply {
    pub call: u64,
    pub result: Result<LlmResponse, CallError>,
}

impl Input {
    pub fn command(command: Command) -> Self {
        Input::Command { command }
    }

    /// The call this input answers (a model, tool or check call), if it answers one.
    pub fn answers(&self) -> Option<u64> {
        match self {
            Input::Command { .. } => None,
            Input::LlmReply(r) => Some(r.call),
            Input::ToolReply(r) => Some(r.call),
            Input::CheckReply(r) => Some(r.call),
        }
    }
}
