//! ReAct: Thought → Action → Observation, one step at a time, until `finish` or
//! `max_steps`. Each step is a node (its thought and action); the observation is
//! appended to its path when the tool answers. A reply without a readable action
//! becomes an observation restating the format and counts as a bad call.
//!
//! With `--tool-mode native` the request offers the task's tools for native tool
//! calling: the reply's text is the thought and its first tool call the action (a
//! reply that calls no tool may still write a text action, which is read as in text
//! mode). Either way the step is written in the canonical `Thought i:` / `Action i:
//! Tool[arg]` text, so transcripts and prompts look the same in both modes.

use crate::engine::{
    CallKind, Completion, Core, LlmRequest, NodeId, NodeStatus, Origin, Outcome, ToolDef, ToolMode, ToolRequest,
    ToolResult,
};

use super::{Method, Progress};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Think,
    Thinking,
    Acting,
    Done,
}

#[derive(Debug)]
pub struct React {
    /// The last step of the trajectory (the root before the first).
    tip: NodeId,
    phase: Phase,
    finals: Vec<NodeId>,
    /// The tool of the step being acted on.
    acting: Option<ToolRequest>,
    pub bad_calls: usize,
}

impl React {
    pub fn new() -> Self {
        React { tip: NodeId(0), phase: Phase::Think, finals: Vec::new(), acting: None, bad_calls: 0 }
    }

    fn observe(core: &mut Core, node: NodeId, text: &str) {
        let step = core.tree.node(node).depth;
        let n = core.tree.node_mut(node);
        let text = text.trim();
        n.path.push_str(&format!("Observation {step}: {text}\n"));
        n.thought.push_str(&format!("\nObservation {step}: {text}"));
    }
}

impl Default for React {
    fn default() -> Self {
        Self::new()
    }
}

impl Method for React {
    fn advance(&mut self, core: &mut Core) -> Progress {
        match self.phase {
            Phase::Think => {
                let step = core.tree.node(self.tip).depth + 1;
                if step > core.params.max_steps {
                    core.log(format!("no answer after {} steps", core.params.max_steps));
                    self.finals.clear();
                    self.phase = Phase::Done;
                    return Progress::Moved;
                }
                let trajectory = core.tree.node(self.tip).path.clone();
                let native = core.params.tool_mode == ToolMode::Native;
                let prompt = if native {
                    core.task.react_native_prompt(&core.x, &trajectory, step)
                } else {
                    core.task.react_prompt(&core.x, &trajectory, step)
                };
                let tools = if native { core.task.react_tools() } else { Vec::new() };
                let Some(prompt) = prompt.filter(|_| !native || !tools.is_empty()) else {
                    let what = if native { "native tool-calling ReAct prompt and tools" } else { "ReAct prompt" };
                    core.log(format!("the task {} has no {what}", core.task.name()));
                    self.phase = Phase::Done;
                    return Progress::Moved;
                };
                let mut request = LlmRequest::from_prompt(prompt, 1, core.params.temperature);
                request.tools = tools;
                let tip = self.tip;
                core.issue(tip, CallKind::Act, request, false);
                self.phase = Phase::Thinking;
                Progress::Issued(1)
            }
            Phase::Thinking | Phase::Acting => Progress::Stuck("waiting for replies".into()),
            Phase::Done => Progress::Stuck("the episode is finished".into()),
        }
    }

    fn settle(&mut self, _core: &mut Core) {}

    fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        core.finalize(self.finals.clone())
    }

    fn on_children(&mut self, _core: &mut Core, _parent: NodeId, _children: &[NodeId], _by_hand: bool) {}

    fn on_act(&mut self, core: &mut Core, node: NodeId, reply: &Completion) {
        let step = core.tree.node(node).depth + 1;
        let read = read_step(core, reply, step);
        let mut text = String::new();
        if let Some(t) = &read.thought {
            text.push_str(&format!("Thought {step}: {}", t.trim()));
        }
        if let Some(action) = &read.action {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("Action {step}: {}[{}]", capitalise(&action.name), action.arg));
        }
        if text.is_empty() {
            text = format!("Thought {step}: {}", read.raw);
        }
        let path = format!("{}{text}\n", core.tree.node(node).path);
        let child = core.tree.add_child(node, text.clone(), path, Origin::Model);
        core.emit(crate::engine::Event::NodeAdded { id: child, parent: node, thought: text });
        core.set_status(child, NodeStatus::Expanded);
        core.tree.node_mut(child).issues.extend(read.notes);
        let after = node;
        self.tip = child;
        match (read.problem, read.action) {
            (None, Some(request)) => {
                self.acting = Some(request.clone());
                core.issue_tool(child, after, request);
                self.phase = Phase::Acting;
            }
            (problem, _) => {
                let problem = problem.unwrap_or_else(|| "no action".into());
                self.bad_calls += 1;
                core.tree.node_mut(child).issues.push(format!("bad call: {problem}"));
                React::observe(core, child, &problem);
                self.phase = Phase::Think;
            }
        }
    }

    fn on_act_failed(&mut self, core: &mut Core, node: NodeId, message: &str) {
        // The step is lost; count it so a dead server cannot loop forever.
        let step = core.tree.node(node).depth + 1;
        let path = format!("{}Thought {step}: (the model call failed: {message})\n", core.tree.node(node).path);
        let child = core.tree.add_child(node, format!("(call failed: {message})"), path, Origin::Model);
        core.emit(crate::engine::Event::NodeAdded { id: child, parent: node, thought: "(call failed)".into() });
        core.set_status(child, NodeStatus::Invalid(message.to_string()));
        self.tip = child;
        self.phase = Phase::Think;
    }

    fn on_tool(&mut self, core: &mut Core, node: NodeId, result: ToolResult) {
        React::observe(core, node, &result.text);
        let finished = self.acting.take().is_some_and(|t| t.name.eq_ignore_ascii_case("finish"));
        if finished {
            self.finals = vec![node];
            self.phase = Phase::Done;
        } else {
            self.phase = Phase::Think;
        }
    }

    fn backtrack(&mut self, _core: &mut Core) -> Result<(), String> {
        Err("ReAct follows one trajectory: select a step and continue from it (enter), or edit it".into())
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        core.cancel_scheduled();
        self.tip = node;
        self.finals.clear();
        self.acting = None;
        self.phase = Phase::Think;
        Ok(())
    }
}

fn capitalise(tool: &str) -> String {
    let mut c = tool.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// One step as read from a reply, in either tool mode.
struct ReadStep {
    thought: Option<String>,
    action: Option<ToolRequest>,
    /// Why the reply cannot be used: the observation the agent gets (a bad call).
    problem: Option<String>,
    /// Things worth knowing that do not make the call bad (extra tool calls, ...).
    notes: Vec<String>,
    /// The reply as it came, for a step that has neither thought nor action.
    raw: String,
}

/// Read a reply: its first native tool call is the action and its text the thought;
/// without a tool call, the text is read in the paper's format.
fn read_step(core: &Core, reply: &Completion, step: usize) -> ReadStep {
    let native = core.params.tool_mode == ToolMode::Native;
    let parsed = core.task.parse_react(&reply.text, step);
    let mut raw = reply.text.trim().to_string();
    for call in &reply.tool_calls {
        raw.push_str(&format!("\n(tool call {})", call.describe()));
    }
    let raw = raw.trim().to_string();
    let mut notes = Vec::new();
    let Some(first) = reply.tool_calls.first() else {
        // No native call: the text format (in native mode a fallback, noted).
        let action = parsed.action.map(|(name, arg)| ToolRequest { name, arg });
        let mut problem = parsed.problem;
        if native {
            match (&action, &problem) {
                (Some(_), None) => notes.push("no native tool call: the action was read from the reply's text".into()),
                _ => problem = Some(native_problem("the reply called no tool", step, &core.task.react_tools())),
            }
        }
        return ReadStep { thought: parsed.thought, action, problem, notes, raw };
    };
    // The text is the thought: as the text parser reads it (labels and a written action
    // left out), else as it is.
    let thought = parsed.thought.or_else(|| Some(reply.text.trim().to_string()).filter(|t| !t.is_empty()));
    if let Some((name, arg)) = &parsed.action {
        notes.push(format!("the text also wrote an action, {name}[{arg}]; the tool call was taken"));
    }
    if reply.tool_calls.len() > 1 {
        let ignored: Vec<String> = reply.tool_calls[1..].iter().map(|c| c.describe()).collect();
        notes.push(format!(
            "{} tool calls in one reply: only the first was taken; ignored {}",
            reply.tool_calls.len(),
            ignored.join(", ")
        ));
    }
    let tools = core.task.react_tools();
    match first.to_request(&tools) {
        Ok(action) => ReadStep { thought, action: Some(action), problem: None, notes, raw },
        Err(detail) => {
            ReadStep { thought, action: None, problem: Some(native_problem(&detail, step, &tools)), notes, raw }
        }
    }
}

/// The observation for an unusable native reply: what was wrong and what is expected.
fn native_problem(detail: &str, step: usize, tools: &[ToolDef]) -> String {
    let list: Vec<String> = tools.iter().map(|t| format!("{}({})", t.name, t.arg_name().unwrap_or(""))).collect();
    format!(
        "Invalid action: {detail}. For step {step}, write your thought as text, then call exactly one tool \
         with its argument: {}.",
        list.join(", ")
    )
}
