//! ReAct: Thought → Action → Observation, one step at a time, until `finish` or
//! `max_steps`. Each step is a node (its thought and action); the observation is
//! appended to its path when the tool answers. A reply without a readable action
//! becomes an observation restating the format and counts as a bad call.

use crate::engine::{CallKind, Core, LlmRequest, NodeId, NodeStatus, Origin, Outcome, ToolRequest, ToolResult};

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
                let Some(prompt) = core.task.react_prompt(&core.x, &trajectory, step) else {
                    core.log(format!("the task {} has no ReAct prompt", core.task.name()));
                    self.phase = Phase::Done;
                    return Progress::Moved;
                };
                let request = LlmRequest::from_prompt(prompt, 1, core.params.temperature);
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

    fn on_act(&mut self, core: &mut Core, node: NodeId, reply: &str) {
        let step = core.tree.node(node).depth + 1;
        let parsed = core.task.parse_react(reply, step);
        let mut text = String::new();
        if let Some(t) = &parsed.thought {
            text.push_str(&format!("Thought {step}: {}", t.trim()));
        }
        if let Some((tool, arg)) = &parsed.action {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("Action {step}: {}[{arg}]", capitalise(tool)));
        }
        if text.is_empty() {
            text = format!("Thought {step}: {}", reply.trim());
        }
        let path = format!("{}{text}\n", core.tree.node(node).path);
        let child = core.tree.add_child(node, text.clone(), path, Origin::Model);
        core.emit(crate::engine::Event::NodeAdded { id: child, parent: node, thought: text });
        core.set_status(child, NodeStatus::Expanded);
        // The tool state (page, lookup cursor) goes on from the last step that ran a tool;
        // a bad call runs none.
        let after = last_tool_step(core, node);
        self.tip = child;
        match (parsed.problem, parsed.action) {
            (None, Some((tool, arg))) => {
                let request = ToolRequest { name: tool, arg };
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

/// `node` or its nearest ancestor that made a tool call (the root if none did).
fn last_tool_step(core: &Core, mut node: NodeId) -> NodeId {
    loop {
        let n = core.tree.node(node);
        // Model calls are in `core.calls`; a node's other calls are tool calls.
        if n.calls.iter().any(|c| !core.calls.contains_key(c)) {
            return node;
        }
        match n.parent {
            Some(parent) => node = parent,
            None => return node,
        }
    }
}

fn capitalise(tool: &str) -> String {
    let mut c = tool.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
