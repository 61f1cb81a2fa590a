//! `finish[answer]`: ends the episode with an answer.

use super::{BoxFuture, Observation, Tool, ToolSpec, ToolState};

#[derive(Debug, Clone, Copy, Default)]
pub struct FinishTool;

impl Tool for FinishTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single("finish", "returns the answer and finishes the task", "answer", "the final answer")
    }

    fn is_finish(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, _arg: &'a str, _state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        Box::pin(async { Observation::ok("Episode finished") })
    }
}
