//! ReAct: Thought → Action → Observation, one step at a time, until `finish` or
//! `max_steps`. Each step is a node (its thought and action); the observation is
//! appended to its path when the tool answers. A reply without a readable action
//! becomes an observation restating the format and counts as a bad call.
//!
//! A person may rewrite any step (`Command::Edit`): the edited step becomes a new
//! sibling and the agent goes on from it, while the old continuation stays as a
//! branch (its calls in flight are cancelled). An edit with an action runs that
//! action; a thought alone is given back to the model, which writes the action.
//!
//! With `--tool-mode native` the request offers the task's tools for native tool
//! calling: the reply's text is the thought and its first tool call the action (a
//! reply that calls no tool may still write a text action, which is read as in text
//! mode). Either way the step is kept typed on its node ([`Step`]) and written from it in
//! the canonical `Thought i:` / `Action i: Tool[arg]` text, so transcripts and prompts
//! look the same in both modes.

use crate::engine::params::{choices, DefaultValue, Kind, ParamDecl};
use std::sync::Arc;

use crate::engine::task::Capability;
use crate::engine::{CallKind, Core, Issue, NodeId, NodeStatus, Origin, Outcome, Step, ToolMode};
use crate::engine::{MethodKind, ParamError, ParamReader};
use crate::protocol::{
    CallError, CallErrorKind, Completion, LlmRequest, Message, Role, ToolCallOut, ToolDef, ToolRequest, ToolResult,
};

use super::{Method, MethodInfo, MethodView, Progress};

mod turns;
pub use turns::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Think,
    Thinking,
    Acting,
    Done,
}

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("react");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "ReAct: thought, action, observation with tools",
    react: super::ReactShape::Whole,
    uses_tools: true,
    needs: super::Needs::react,
    params: &[&MAX_STEPS, &TOOL_MODE],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(React::new(ReactParams::read(p)?))),
};

pub const MAX_STEPS: ParamDecl = ParamDecl {
    name: "max_steps",
    help: "Most thought/action/observation steps",
    kind: Kind::Whole { min: 1, max: 1000 },
    default: DefaultValue::Whole(7),
};

/// How actions are written; read by every method that calls the task's tools.
pub const TOOL_MODE: ParamDecl = ParamDecl {
    name: "tool_mode",
    help: "How actions are written",
    kind: Kind::Choice(choices::<ToolMode>),
    default: DefaultValue::Word("text"),
};

/// ReAct's parameters: how many steps, and how actions are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReactParams {
    /// Most thought/action/observation steps.
    pub max_steps: usize,
    pub tool_mode: ToolMode,
}

impl ReactParams {
    pub fn read(p: &ParamReader) -> Result<ReactParams, ParamError> {
        Ok(ReactParams { max_steps: p.count(&MAX_STEPS)?, tool_mode: p.choice(&TOOL_MODE)? })
    }
}

#[derive(Debug, Clone)]
pub struct React {
    pub params: ReactParams,
    /// The last step of the trajectory (the root before the first).
    tip: NodeId,
    phase: Phase,
    finals: Vec<NodeId>,
    /// The tool of the step being acted on.
    acting: Option<ToolRequest>,
    /// A person's step with a thought and no action yet: the model is asked for the action.
    completing: Option<NodeId>,
    /// The step being completed is the model's own after a reply that did not split into a
    /// thought and an action (the ReAct code's bad call): the reply is the action alone.
    reasking: bool,
    /// Chat prompts: the step whose first reply could not be read and was asked again with
    /// a format reminder, and why it could not be read.
    retrying: Option<(NodeId, String)>,
    pub bad_calls: usize,
    /// Steps whose model call failed on this trajectory (each uses up a step of `max_steps`).
    lost: usize,
}

impl React {
    pub fn new(params: ReactParams) -> Self {
        React {
            params,
            tip: NodeId(0),
            phase: Phase::Think,
            finals: Vec::new(),
            acting: None,
            completing: None,
            reasking: false,
            retrying: None,
            bad_calls: 0,
            lost: 0,
        }
    }

    fn observe(core: &mut Core, node: NodeId, text: &str) {
        let mut step = step_of(core, node);
        step.observation = Some(text.trim().to_string());
        write_step(core, node, step);
    }
}

/// The step `node` is (every node the method acts on was made with one).
fn step_of(core: &Core, node: NodeId) -> Step {
    let n = core.tree.node(node);
    n.step.as_deref().cloned().unwrap_or_else(|| Step::new(n.depth))
}

/// Keep `step` on `node` and write the node's text from it: its thought is the step's
/// text, its path the parent's path and the step's lines.
fn write_step(core: &mut Core, node: NodeId, step: Step) {
    let (thought, path) = step_texts(core, core.tree.node(node).parent, &step);
    let n = core.tree.node_mut(node);
    n.thought = thought.into();
    n.path = path.into();
    n.step = Some(Box::new(step));
}

/// The thought and the path of a node for `step` under `parent`.
fn step_texts(core: &Core, parent: Option<NodeId>, step: &Step) -> (String, String) {
    let before = parent.map_or("", |p| core.tree.node(p).path.as_str());
    (step.text(), format!("{before}{}", step.path_text()))
}

/// Add a node for `step` under `parent`.
fn add_step(core: &mut Core, parent: NodeId, step: Step, origin: Origin) -> NodeId {
    let (thought, path) = step_texts(core, Some(parent), &step);
    let child = core.add_node(parent, thought, path, origin);
    core.tree.node_mut(child).step = Some(Box::new(step));
    core.set_status(child, NodeStatus::Expanded);
    child
}

impl React {
    /// Run the step's action, or record why there is none (a bad call).
    fn act(&mut self, core: &mut Core, step_node: NodeId, action: Option<ToolRequest>, problem: Option<String>) {
        // The tool state (page, lookup cursor) goes on from the last step that ran a tool;
        // a bad call runs none.
        let after = last_tool_step(core, core.tree.node(step_node).parent.unwrap_or(NodeId(0)));
        match (problem, action) {
            (None, Some(request)) => {
                self.acting = Some(request.clone());
                core.issue_tool(step_node, after, request);
                self.phase = Phase::Acting;
            }
            (problem, _) => {
                let problem = problem.unwrap_or_else(|| "no action".into());
                self.bad_calls += 1;
                core.tree.node_mut(step_node).add_issue(Issue::BadCall(problem.clone()));
                let mut step = step_of(core, step_node);
                step.problem = Some(problem.clone());
                write_step(core, step_node, step);
                React::observe(core, step_node, &problem);
                self.phase = Phase::Think;
            }
        }
    }

    /// The model wrote the action for a person's thought (`node`).
    fn complete(&mut self, core: &mut Core, node: NodeId, reply: &Completion) {
        let step = core.tree.node(node).depth;
        // The model continues after `Action i:`, so a bare `Search[x]` is the action;
        // a reply that restates a thought and an action is read as a whole, and a
        // native tool call is the action.
        let mut reply = reply.clone();
        let reasked = std::mem::take(&mut self.reasking);
        // The ReAct code asked again with a stop at the line's end: the reply is the action.
        let alone = reply.tool_calls.is_empty() && (reasked || !reply.text.to_lowercase().contains("action"));
        let read = if alone && self.params.tool_mode == ToolMode::Text {
            read_action_alone(core, &reply.text, step)
        } else {
            if alone {
                reply.text = format!("Action {step}: {}", reply.text.trim()).into();
            }
            read_step(core, self.params, &reply, step)
        };
        if read.action.is_some() {
            let mut typed = step_of(core, node);
            typed.action = read.action.clone();
            typed.extra_actions = read.extra_actions.clone();
            typed.calls = read.calls.clone();
            typed.thinking = if read.calls.is_empty() { Vec::new() } else { reply.thinking.clone() };
            write_step(core, node, typed);
        }
        core.tree.node_mut(node).issues.extend(read.notes.into_iter().map(Issue::Note));
        let problem = if read.action.is_some() { None } else { read.problem };
        self.act(core, node, read.action, problem);
    }

    fn edit_step(&mut self, core: &mut Core, node: NodeId, text: &str) -> Result<NodeId, String> {
        let parent = core.tree.node(node).parent.ok_or("the question itself cannot be edited")?;
        let step = core.tree.node(node).depth;
        // Observations come from the tools: drop any the person left in the text.
        let text: Vec<&str> =
            text.lines().take_while(|l| !l.trim_start().to_lowercase().starts_with("observation")).collect();
        let task = Arc::clone(&core.task);
        let react = task.react().ok_or_else(|| no_react_steps(core))?;
        let parsed = react.parse_react(&text.join("\n"), step);
        let thought = parsed.thought.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
        if thought.is_none() && parsed.action.is_none() {
            return Err(
                "write a thought, an action in the form Tool[argument] (one of the tools the prompt lists), or both"
                    .into(),
            );
        }
        // The old continuation stays as a branch; whatever is still running for it is stale.
        core.cancel_scheduled();
        core.tree.bump_generation(node);
        let action = parsed.action.map(|(name, arg)| ToolRequest { name, arg });
        let typed = Step { thought: thought.clone(), action: action.clone(), ..Step::new(step) };
        let child = add_step(core, parent, typed, Origin::Human { edited_from: Some(node) });
        self.tip = child;
        self.lost = 0;
        self.finals.clear();
        self.acting = None;
        self.completing = None;
        self.reasking = false;
        self.retrying = None;
        if action.is_some() {
            self.act(core, child, action, None);
            return Ok(child);
        }
        // A thought alone: the model writes the action that follows it.
        let trajectory = core.tree.node(parent).path.clone();
        let thought = thought.unwrap_or_default();
        let steps = steps_to(core, parent);
        let mut request = step_request(core, self.params, &trajectory, &steps, step)?;
        let chat = !core.task.prompt_style().is_reference();
        if let Some(last) = request.messages.last_mut() {
            if chat && request.tools.is_empty() {
                // A chat prompt asks for the whole step: say the thought is written.
                last.content.push_str(&format!(
                    "\nThought {step} is already written: {thought}\nWrite Action {step} only, as Action {step}: \
                     Tool[argument]."
                ));
            } else if request.tools.is_empty() {
                // The text prompt ends with `Thought i:`; the person's thought follows it.
                last.content.truncate(last.content.trim_end().len());
                last.content.push_str(&format!(" {thought}\nAction {step}:"));
            } else {
                last.content.push_str(&format!(
                    "\nThought {step} is already written: {thought}\nCall the one tool that follows from it."
                ));
            }
        }
        if let Some(c) = request.context.as_object_mut() {
            c.insert("thought".into(), serde_json::Value::String(thought));
        }
        core.issue(child, CallKind::Act, request, false);
        self.completing = Some(child);
        self.phase = Phase::Thinking;
        Ok(child)
    }
}

impl React {
    /// A reply that did not split into a thought and an action, as the ReAct code handles
    /// it: a bad call; its first line is the step's thought and the model is asked again,
    /// with `Thought i: <thought>\nAction i:` appended and a stop at the line's end, for the
    /// action alone.
    fn reask(&mut self, core: &mut Core, node: NodeId, step: usize, thought: Option<String>) {
        self.bad_calls += 1;
        let typed = Step { thought: thought.clone(), ..Step::new(step) };
        let child = add_step(core, node, typed, Origin::Model);
        core.tree.node_mut(child).add_issue(Issue::BadCall(format!(
            "the reply did not split into Thought {step} and Action {step}: its first line is the thought, and the \
             model was asked again for the action"
        )));
        self.tip = child;
        let trajectory = core.tree.node(node).path.clone();
        let thought = thought.unwrap_or_default();
        let steps = steps_to(core, node);
        let mut request = match step_request(core, self.params, &trajectory, &steps, step) {
            Ok(r) => r,
            Err(why) => {
                core.log(why);
                self.phase = Phase::Done;
                return;
            }
        };
        if let Some(last) = request.messages.last_mut() {
            last.content.truncate(last.content.trim_end().len());
            last.content.push_str(&format!(" {thought}\nAction {step}:"));
        }
        request.stop = vec!["\n".into()];
        if let Some(c) = request.context.as_object_mut() {
            c.insert("thought".into(), serde_json::Value::String(thought));
            c.insert("reask".into(), serde_json::Value::Bool(true));
        }
        core.issue(child, CallKind::Act, request, false);
        self.completing = Some(child);
        self.reasking = true;
        self.phase = Phase::Thinking;
    }
}

impl React {
    /// Chat prompts: a reply with no readable action is asked once more, with the reply and
    /// a reminder of the format (naming this task's tools) as the next turns. The step is
    /// a node now (its thought the reply as it came, marked [`Issue::Retried`]); the
    /// retry's reply becomes the step, or the step is a bad call as without a retry.
    fn retry(&mut self, core: &mut Core, node: NodeId, step: usize, read: &ReadStep, problem: String) {
        let raw = read.raw.as_str();
        let typed = Step { thought: Some(raw.to_string()), ..Step::new(step) };
        let child = add_step(core, node, typed, Origin::Model);
        core.tree.node_mut(child).add_issue(Issue::Retried(problem.clone()));
        self.tip = child;
        let trajectory = core.tree.node(node).path.clone();
        let steps = steps_to(core, node);
        let mut request = match step_request(core, self.params, &trajectory, &steps, step) {
            Ok(r) => r,
            Err(why) => {
                core.log(why);
                self.phase = Phase::Done;
                return;
            }
        };
        let ask = if request.tools.is_empty() {
            format!(
                "That reply could not be read: {problem}\nReply again with exactly two lines, Thought {step}: ... \
                 and Action {step}: Tool[argument], and nothing else."
            )
        } else {
            format!(
                "That reply could not be read: {problem}\nWrite thought {step} as text, then call exactly one tool."
            )
        };
        if read.calls.is_empty() {
            request.messages.push(Message::assistant(raw));
        } else {
            // The reply's tool calls go back as calls, each answered: the first with why it
            // could not be run, the others as not run.
            request.messages.push(Message::assistant_calls(read.text.trim(), read.calls.clone()));
            for (i, call) in read.calls.iter().enumerate() {
                let answer = if i == 0 { format!("not run: {problem}") } else { NOT_RUN.to_string() };
                request.messages.push(Message::tool(call.id.clone().unwrap_or_default(), answer));
            }
        }
        request.messages.push(Message::user(ask));
        if let Some(c) = request.context.as_object_mut() {
            c.insert("retry".into(), serde_json::Value::Bool(true));
        }
        core.issue(child, CallKind::Act, request, false);
        self.retrying = Some((child, problem));
        self.phase = Phase::Thinking;
    }

    /// The retry's reply for step node `node`: read as a whole step; if it still has no
    /// action, the step is a bad call whose observation says why.
    fn after_retry(&mut self, core: &mut Core, node: NodeId, reply: &Completion, first_problem: String) {
        let step = core.tree.node(node).depth;
        let read = read_step(core, self.params, reply, step);
        if read.action.is_some() {
            let thought = read.thought.as_deref().map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
            let mut typed = step_of(core, node);
            if thought.is_some() {
                typed.thought = thought;
            }
            typed.action = read.action.clone();
            typed.extra_actions = read.extra_actions.clone();
            typed.calls = read.calls.clone();
            typed.thinking = if read.calls.is_empty() { Vec::new() } else { reply.thinking.clone() };
            write_step(core, node, typed);
            core.tree.node_mut(node).issues.extend(read.notes.into_iter().map(Issue::Note));
            self.act(core, node, read.action, None);
        } else {
            let problem = read.problem.unwrap_or(first_problem);
            self.act(core, node, None, Some(problem));
        }
    }
}

impl Method for React {
    fn advance(&mut self, core: &mut Core) -> Progress {
        match self.phase {
            Phase::Think => {
                let step = core.tree.node(self.tip).depth + 1;
                if step + self.lost > self.params.max_steps {
                    core.log(format!("no answer after {}", super::count(self.params.max_steps, "step", "steps")));
                    self.finals.clear();
                    self.phase = Phase::Done;
                    return Progress::Moved;
                }
                let trajectory = core.tree.node(self.tip).path.clone();
                let steps = steps_to(core, self.tip);
                let request = match step_request(core, self.params, &trajectory, &steps, step) {
                    Ok(r) => r,
                    Err(why) => {
                        core.log(why);
                        self.phase = Phase::Done;
                        return Progress::Moved;
                    }
                };
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
        if self.completing == Some(node) {
            self.completing = None;
            return self.complete(core, node, reply);
        }
        if let Some((retried, first_problem)) = self.retrying.take_if(|(n, _)| *n == node) {
            return self.after_retry(core, retried, reply, first_problem);
        }
        let step = core.tree.node(node).depth + 1;
        let read = read_step(core, self.params, reply, step);
        if read.ask_action {
            return self.reask(core, node, step, read.thought);
        }
        if read.action.is_none() && !core.task.prompt_style().is_reference() {
            if let Some(problem) = read.problem.clone() {
                return self.retry(core, node, step, &read, problem);
            }
        }
        let mut thought = read.thought.as_deref().map(|t| t.trim().to_string());
        if thought.is_none() && read.action.is_none() {
            // Neither: the reply as it came is the thought.
            thought = Some(read.raw.clone());
        }
        let typed = Step {
            thought,
            action: read.action.clone(),
            extra_actions: read.extra_actions.clone(),
            calls: read.calls.clone(),
            thinking: if read.calls.is_empty() { Vec::new() } else { reply.thinking.clone() },
            ..Step::new(step)
        };
        let child = add_step(core, node, typed, Origin::Model);
        core.tree.node_mut(child).issues.extend(read.notes.into_iter().map(Issue::Note));
        self.tip = child;
        self.act(core, child, read.action, read.problem);
    }

    fn on_act_failed(&mut self, core: &mut Core, node: NodeId, error: &CallError) {
        let message = error.to_string();
        let overflow = error.kind == CallErrorKind::ContextOverflow;
        if let Some((retried, problem)) = self.retrying.take_if(|(n, _)| *n == node) {
            // The first reply stands, unread: a bad call, with why the retry gave nothing.
            self.act(core, retried, None, Some(format!("{problem} (asking again failed: {message})")));
            if overflow {
                self.phase = Phase::Done;
            }
            return;
        }
        if self.completing == Some(node) {
            // A thought whose action the model could not write: keep the thought, with no
            // observation (the failure is no text for the model), and go on from it.
            self.completing = None;
            self.reasking = false;
            core.tree.node_mut(node).add_issue(Issue::ActionFailed(message.clone()));
            self.bad_calls += 1;
            self.phase = if overflow { Phase::Done } else { Phase::Think };
            return;
        }
        // The step is lost: a node that is no step says so, beside the trajectory, whose
        // prompt it leaves as it was (a failure is no text for the model). The step is asked
        // again, and the lost one counts against `max_steps`, so a dead server cannot loop
        // forever. A prompt too long for the model's context never fits: the episode ends.
        let path = core.tree.node(node).path.clone();
        let what = if overflow {
            "(the prompt does not fit the model's context window: the episode stops here)"
        } else {
            "(the model call failed: the step is asked again)"
        };
        let child = core.add_node(node, what.to_string(), path.to_string(), Origin::Model);
        core.set_status(child, NodeStatus::Invalid(message));
        self.lost += 1;
        self.phase = if overflow { Phase::Done } else { Phase::Think };
    }

    fn on_tool(&mut self, core: &mut Core, node: NodeId, result: ToolResult) {
        core.tree.node_mut(node).tool_ms = Some(result.latency_ms);
        React::observe(core, node, &result.text);
        let finishing = self.acting.take().is_some_and(|t| t.name.eq_ignore_ascii_case("finish"));
        if finishing && result.ok {
            self.finals = vec![node];
            self.phase = Phase::Done;
        } else {
            // A finish whose call failed (a replay that lacks it) gave no answer: the agent
            // sees the failure as its observation and goes on, as after any failed tool.
            if finishing {
                core.tree
                    .node_mut(node)
                    .add_issue(Issue::Note("the finish call failed, so its answer does not count".into()));
            }
            self.phase = Phase::Think;
        }
    }

    fn edit(&mut self, core: &mut Core, node: NodeId, text: &str) -> Option<Result<NodeId, String>> {
        Some(self.edit_step(core, node, text))
    }

    fn backtrack(&mut self, _core: &mut Core, _to: Option<NodeId>) -> Result<(), String> {
        Err("ReAct follows one trajectory: select a step and continue from it (enter), or edit it".into())
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        core.cancel_scheduled();
        // A lost step (a node that is no step) is no place on a trajectory: go on from its parent.
        let n = core.tree.node(node);
        let node = match n.parent {
            Some(parent) if n.step.is_none() => parent,
            _ => node,
        };
        self.tip = node;
        self.lost = 0;
        self.finals.clear();
        self.acting = None;
        self.completing = None;
        self.reasking = false;
        self.retrying = None;
        self.phase = Phase::Think;
        Ok(())
    }

    fn view(&self, core: &Core) -> MethodView {
        MethodView {
            params: format!("react max {} steps", self.params.max_steps),
            step: core.tree.node(self.tip).depth,
            step_noun: "step",
            cutoff: None,
            candidates: super::Candidates::Siblings,
            votes: None,
            ..MethodView::default()
        }
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

/// Why a ReAct step cannot be asked for or read: the task has no ReAct steps (the
/// engine refuses ReAct methods on such a task; this is the line if one gets here).
pub(super) fn no_react_steps(core: &Core) -> String {
    format!("{} has no ReAct steps with tools", core.task.name())
}

/// The request for step `step` after `trajectory`, fitted to the model's context window
/// when the run knows it, the latest step always kept; a step that does not fit even so is
/// not asked (the error says why), so no request is sent that cannot fit. The reference
/// style trims the oldest observations (each replaced by a marker the model sees); the chat
/// style drops the oldest steps whole, each an (assistant, user) turn pair, and says how many
/// in the question's turn. Trimming is said in the log.
fn step_request(
    core: &mut Core,
    params: ReactParams,
    trajectory: &str,
    steps: &[Step],
    step: usize,
) -> Result<LlmRequest, String> {
    let request = raw_step_request(core, params, trajectory, steps, step)?;
    let Some(window) = core.context_window else { return Ok(request) };
    let needs = |r: &LlmRequest| crate::protocol::estimate_prompt_tokens(r) + u64::from(r.max_tokens.unwrap_or(256));
    if needs(&request) <= window {
        return Ok(request);
    }
    let chat = !core.task.prompt_style().is_reference();
    let parts = if chat { EpisodeTurns::of(trajectory).pairs.len() } else { observation_count(trajectory) };
    let mut last = needs(&request);
    for trimmed in 1..parts {
        let shorter =
            if chat { drop_oldest_steps(trajectory, trimmed) } else { trim_observations(trajectory, trimmed) };
        let fitted = raw_step_request(core, params, &shorter, steps, step)?;
        last = needs(&fitted);
        if last <= window {
            let what = match (chat, trimmed) {
                (false, 1) => "the oldest observation was trimmed".to_string(),
                (false, k) => format!("the {k} oldest observations were trimmed"),
                (true, 1) => "the oldest step (its assistant and user turns) was dropped".to_string(),
                (true, k) => format!("the {k} oldest steps (their assistant and user turns) were dropped"),
            };
            core.log(format!("step {step}: {what} so the prompt fits the model's context window ({window} tokens)"));
            return Ok(fitted);
        }
    }
    let even = match (chat, parts > 1) {
        (_, false) => "",
        (false, true) => " even with the older observations trimmed",
        (true, true) => " even with the older steps dropped",
    };
    Err(format!(
        "step {step}: the prompt and its reply (about {last} tokens) do not fit the model's context window \
         ({window} tokens){even}; the episode stops here (give the model a larger context, or take fewer steps)"
    ))
}

/// The request for step `step` after `trajectory`, in the run's tool mode, as the task writes it.
fn raw_step_request(
    core: &Core,
    params: ReactParams,
    trajectory: &str,
    steps: &[Step],
    step: usize,
) -> Result<LlmRequest, String> {
    let react = core.task.react().ok_or_else(|| no_react_steps(core))?;
    let (prompt, tools) = match params.tool_mode {
        ToolMode::Native => {
            let native = react
                .native()
                .ok_or_else(|| format!("{} has no {}", core.task.name(), Capability::NativeTools.describe()))?;
            (native.react_native_prompt(&core.x, trajectory, step), native.tool_defs())
        }
        ToolMode::Text => (react.react_prompt(&core.x, trajectory, step), Vec::new()),
    };
    let mut request = LlmRequest::from_prompt(prompt, 1, core.temperature);
    if !core.task.prompt_style().is_reference() {
        let examples = request.messages.len().saturating_sub(1);
        episode_in_turns(&mut request.messages, trajectory);
        if !tools.is_empty() {
            native_turns(&mut request.messages, examples, &tools, steps);
        }
    }
    with_tools(&mut request, tools);
    Ok(request)
}

/// Offer `tools` (none in text mode): a request with tools carries no text stop sequences
/// (`\nObservation` and the like are for text actions; a tool call ends the reply).
pub(super) fn with_tools(request: &mut LlmRequest, tools: Vec<ToolDef>) {
    if !tools.is_empty() {
        request.stop.clear();
    }
    request.tools = tools;
}

/// The steps on the trajectory that ends at `node`, from the first (the nodes with a step).
pub(super) fn steps_to(core: &Core, node: NodeId) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut at = Some(node);
    while let Some(id) = at {
        let n = core.tree.node(id);
        if let Some(step) = n.step.as_deref() {
            steps.push(step.clone());
        }
        at = n.parent;
    }
    steps.reverse();
    steps
}

/// The native tool definitions the task offers (none in text mode or without them).
fn offered_tools(core: &Core) -> Vec<ToolDef> {
    core.task.react().and_then(|r| r.native()).map(|n| n.tool_defs()).unwrap_or_default()
}

/// One step as read from a reply, in either tool mode (ReTreVal's solves read theirs with it too).
pub(super) struct ReadStep {
    pub(super) thought: Option<String>,
    pub(super) action: Option<ToolRequest>,
    /// Why the reply cannot be used: the observation the agent gets (a bad call).
    pub(super) problem: Option<String>,
    /// Things worth knowing that do not make the call bad (extra tool calls, ...).
    pub(super) notes: Vec<String>,
    /// Further actions or tool calls in the reply, not taken.
    pub(super) extra_actions: Vec<String>,
    /// The reply as it came, for a step that has neither thought nor action.
    pub(super) raw: String,
    /// Text mode: the reply did not split into a thought and an action (see `React::reask`).
    pub(super) ask_action: bool,
    /// Native mode: the reply's tool calls, each with an id (`call_<step>_<i>` when the
    /// server gave none), for the next requests.
    pub(super) calls: Vec<ToolCallOut>,
    /// The reply's text as it came.
    pub(super) text: String,
}

/// Read a reply: its first native tool call is the action and its text the thought;
/// without a tool call, the text is read in the paper's format.
pub(super) fn read_step(core: &Core, params: ReactParams, reply: &Completion, step: usize) -> ReadStep {
    let native = params.tool_mode == ToolMode::Native;
    let Some(react) = core.task.react() else {
        let problem = Some(no_react_steps(core));
        let raw = reply.text.trim().to_string();
        return ReadStep {
            thought: None,
            action: None,
            problem,
            notes: vec![],
            extra_actions: vec![],
            raw,
            ask_action: false,
            calls: vec![],
            text: String::new(),
        };
    };
    let parsed = react.parse_react(&reply.text, step);
    let mut raw = reply.text.trim().to_string();
    for call in &reply.tool_calls {
        raw.push_str(&format!("\n(tool call {})", call.describe()));
    }
    let raw = raw.trim().to_string();
    let mut notes = Vec::new();
    if !parsed.extra_actions.is_empty() && parsed.action.is_some() {
        notes.push(format!(
            "{} more actions in the reply were not taken (one action a step): {}",
            parsed.extra_actions.len(),
            parsed.extra_actions.join(", ")
        ));
    }
    let Some(first) = reply.tool_calls.first() else {
        // No native call: the text format (in native mode a fallback, noted).
        let action = parsed.action.map(|(name, arg)| ToolRequest { name, arg });
        let mut problem = parsed.problem;
        if native {
            match (&action, &problem) {
                (Some(_), None) => notes.push("no native tool call: the action was read from the reply's text".into()),
                _ => problem = Some(native_problem("the reply called no tool", step, &offered_tools(core))),
            }
        }
        let extra_actions = parsed.extra_actions;
        let ask_action = parsed.ask_action && !native;
        let text = reply.text.to_string();
        return ReadStep {
            thought: parsed.thought,
            action,
            problem,
            notes,
            extra_actions,
            raw,
            ask_action,
            calls: vec![],
            text,
        };
    };
    // The text is the thought: as the text parser reads it (labels and a written action
    // left out), else as it is.
    let thought = parsed.thought.or_else(|| Some(reply.text.trim().to_string()).filter(|t| !t.is_empty()));
    if let Some((name, arg)) = &parsed.action {
        notes.push(format!("the text also wrote an action, {name}[{arg}]; the tool call was taken"));
    }
    let ignored: Vec<String> = reply.tool_calls[1..].iter().map(|c| c.describe()).collect();
    if reply.tool_calls.len() > 1 {
        notes.push(format!(
            "{} tool calls in one reply: the first was run (one call a step); the model was told \"{NOT_RUN}\" for {}",
            reply.tool_calls.len(),
            ignored.join(", ")
        ));
    }
    let calls = with_ids(&reply.tool_calls, step);
    let text = reply.text.to_string();
    let tools = offered_tools(core);
    match first.to_request(&tools) {
        Ok(action) => ReadStep {
            thought,
            action: Some(action),
            problem: None,
            notes,
            extra_actions: ignored,
            raw,
            ask_action: false,
            calls,
            text,
        },
        Err(detail) => {
            let problem = Some(native_problem(&detail, step, &tools));
            let extra_actions = ignored;
            ReadStep { thought, action: None, problem, notes, extra_actions, raw, ask_action: false, calls, text }
        }
    }
}

/// Read a text reply that is the action alone (the prompt ended in `Action {step}:`), as
/// the task reads one (the reference mode: as the notebook's second call is read).
fn read_action_alone(core: &Core, text: &str, step: usize) -> ReadStep {
    let raw = text.trim().to_string();
    let Some(react) = core.task.react() else {
        let problem = Some(no_react_steps(core));
        return ReadStep {
            thought: None,
            action: None,
            problem,
            notes: vec![],
            extra_actions: vec![],
            raw,
            ask_action: false,
            calls: vec![],
            text: String::new(),
        };
    };
    let parsed = react.parse_react_action(text, step);
    let mut notes = Vec::new();
    if !parsed.extra_actions.is_empty() && parsed.action.is_some() {
        notes.push(format!(
            "{} more actions in the reply were not taken (one action a step): {}",
            parsed.extra_actions.len(),
            parsed.extra_actions.join(", ")
        ));
    }
    let action = parsed.action.map(|(name, arg)| ToolRequest { name, arg });
    let (thought, problem, extra_actions) = (parsed.thought, parsed.problem, parsed.extra_actions);
    let text = text.to_string();
    ReadStep { thought, action, problem, notes, extra_actions, raw, ask_action: false, calls: vec![], text }
}

/// A reply's tool calls, each with an id: the server's, else `call_<step>_<i>` (from 1), so
/// the next requests tie each result to its call and a replay sends the same ids.
pub fn with_ids(calls: &[ToolCallOut], step: usize) -> Vec<ToolCallOut> {
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = c.id.clone().filter(|id| !id.trim().is_empty());
            ToolCallOut { id: Some(id.unwrap_or_else(|| format!("call_{step}_{}", i + 1))), ..c.clone() }
        })
        .collect()
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
