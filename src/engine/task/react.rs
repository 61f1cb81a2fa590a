//! The ReAct capability: a task an agent works on with tools, one thought and action
//! a step. The tools themselves (which do I/O) are the runtime's: `TaskSource::tools`.

use crate::protocol::{Prompt, ToolDef};

/// One ReAct step as read from a model reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReactStep {
    pub thought: Option<String>,
    /// The tool and its argument.
    pub action: Option<(String, String)>,
    /// Why the reply cannot be used (becomes the observation; a bad call).
    pub problem: Option<String>,
    /// Further actions the reply wrote after the first, as written: noted on the step, not taken.
    pub extra_actions: Vec<String>,
    /// The reply did not split into a thought and an action (the ReAct code's bad call):
    /// its first line is the thought, and the model is asked again for the action alone.
    pub ask_action: bool,
}

/// ReAct steps in the paper's text format (`Action i: Tool[arg]`).
pub trait ReactSteps {
    /// The prompt for step `step` given the trajectory text so far.
    fn react_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt;
    /// Read a step from a reply.
    fn parse_react(&self, reply: &str, step: usize) -> ReactStep;
    /// Read a reply that is the action alone: the prompt ended in `Action {step}:` (a
    /// person wrote the thought, or a reply that did not split was asked again).
    fn parse_react_action(&self, action: &str, step: usize) -> ReactStep {
        self.parse_react(&format!("Action {step}: {}", action.trim()), step)
    }
    /// Native tool calling (`--tool-mode native`), if the task has a prompt for it.
    fn native(&self) -> Option<&dyn NativeTools>;
}

/// ReAct with native tool calls: the model thinks in text and calls one tool.
pub trait NativeTools {
    /// The prompt for step `step`, asking for exactly one call of [`NativeTools::tool_defs`].
    fn react_native_prompt(&self, x: &str, trajectory: &str, step: usize) -> Prompt;
    /// The tools the agent may call, as native tool definitions (never empty).
    fn tool_defs(&self) -> Vec<ToolDef>;
}
