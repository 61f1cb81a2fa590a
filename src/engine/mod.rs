//! The sans-IO core. `Engine::handle(Input) -> Vec<Effect>` is the whole interface:
//! the engine owns the tree and the method's state, does no I/O and reads no clock.
//! Everything nondeterministic arrives as an `Input`; everything to be done leaves as
//! an `Effect`. This module must never import tokio, reqwest, ratatui, crossterm or clap
//! (checked by `tests/engine_is_sans_io.rs`).

pub mod command;
pub mod effect;
pub mod event;
pub mod input;
pub mod methods;
pub mod request;
pub mod rng;
pub mod step;
pub mod task;
pub mod tree;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use command::Command;
pub use effect::Effect;
pub use event::{Event, Outcome, RunMode};
pub use input::{Input, LlmReply, ToolReply};
pub use request::{
    CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Message, Prompt, Purpose, ToolCallOut, ToolDef,
    ToolRequest, ToolResult, Usage,
};
pub use step::{Step, StepPart};
pub use task::{AnswerKind, Proposal, ReactStep, Task, TaskInfo};
pub use tree::{Issue, Node, NodeId, NodeStatus, Origin, Score, SearchTree};

use methods::{Method, Progress};
use rng::SplitMix64;

/// A search method, by its registered name (`methods::REGISTRY`). Each method's
/// module defines its own `KIND`; sessions store the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MethodKind(pub(crate) &'static str);

impl MethodKind {
    pub fn label(self) -> &'static str {
        self.0
    }

    /// The registered method with this name.
    pub fn from_name(name: &str) -> Option<MethodKind> {
        methods::find(name).map(|info| info.kind)
    }

    /// Its registration (every `MethodKind` is registered: they come from the registry).
    pub fn info(self) -> &'static methods::MethodInfo {
        methods::find(self.0).unwrap_or(methods::REGISTRY[0])
    }

    /// Methods that follow a ReAct trajectory (thought, action, observation), alone
    /// or as a part of a hybrid.
    pub fn has_react_steps(self) -> bool {
        self.info().react_steps
    }
}

impl std::fmt::Display for MethodKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for MethodKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for MethodKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        MethodKind::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown method {name:?} (known: {})", methods::names().join(", ")))
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Generator {
    Propose,
    Sample,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evaluator {
    Value,
    Vote,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    Greedy,
    Sample,
}

/// How a ReAct agent writes its actions: in the paper's text format (`Action i: Tool[arg]`,
/// with stop sequences), or as native tool calls (OpenAI `tools`, Anthropic `tool_use`),
/// where the reply's text is the thought and the tool call is the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolMode {
    #[default]
    Text,
    Native,
}

impl ToolMode {
    pub fn label(self) -> &'static str {
        match self {
            ToolMode::Text => "text",
            ToolMode::Native => "native",
        }
    }

    /// Sessions of text-mode runs leave the field out, so they read as they did before it existed.
    fn is_text(&self) -> bool {
        *self == ToolMode::Text
    }
}

/// Method parameters, named as in the Tree-of-Thoughts paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub method: MethodKind,
    /// b: states kept per step (BFS).
    pub breadth: usize,
    /// k: samples per state when the generator samples.
    pub n_generate: u32,
    /// Evaluator samples per state (value) or per step (vote).
    pub n_evaluate: u32,
    pub generator: Generator,
    pub evaluator: Evaluator,
    pub select: Selection,
    /// T: thought steps; `None` means the task's default.
    pub steps: Option<usize>,
    /// DFS: children valued below this are pruned.
    pub threshold: f64,
    /// DFS: cap on states visited.
    pub max_states: usize,
    /// k for io / cot / cot-sc.
    pub samples: u32,
    /// ReAct: most thought/action/observation steps.
    #[serde(default = "default_max_steps")]
    pub max_steps: usize,
    /// ReAct: actions as text or as native tool calls.
    #[serde(default, skip_serializing_if = "ToolMode::is_text")]
    pub tool_mode: ToolMode,
    /// cot-sc-react: switch to ReAct when the majority answer has fewer than this share of the samples.
    #[serde(default = "default_majority_threshold", skip_serializing_if = "is_default_majority_threshold")]
    pub majority_threshold: f64,
    pub temperature: f32,
    /// Keep malformed proposals as candidates, like the reference implementation,
    /// instead of rejecting them.
    pub lenient: bool,
    /// Seed for the method's own choices (`--select sample`).
    pub seed: u64,
    /// The parameters of methods that keep their own (e.g. MCTS's `uct_c`,
    /// `iterations`), by name, flattened into the header; each method reads its own.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            method: methods::tot_bfs::KIND,
            breadth: 5,
            n_generate: 1,
            n_evaluate: 3,
            generator: Generator::Propose,
            evaluator: Evaluator::Value,
            select: Selection::Greedy,
            steps: None,
            threshold: 3.0,
            max_states: 100,
            samples: 10,
            max_steps: 7,
            tool_mode: ToolMode::Text,
            majority_threshold: default_majority_threshold(),
            temperature: 0.7,
            lenient: false,
            seed: 0,
            extra: serde_json::Map::new(),
        }
    }
}

fn default_max_steps() -> usize {
    7
}

/// The ReAct paper's n/2.
fn default_majority_threshold() -> f64 {
    0.5
}

fn is_default_majority_threshold(t: &f64) -> bool {
    *t == default_majority_threshold()
}

/// Why a call was made; decides what its reply does.
#[derive(Debug, Clone, PartialEq)]
pub enum CallKind {
    /// Propose or sample children of the node.
    Generate,
    /// Value the node.
    Evaluate,
    /// Vote among these nodes (the call's node is their parent).
    Vote { nodes: Vec<NodeId> },
    /// Whole answers (io / cot): each completion becomes a final child.
    Answer,
    /// ReAct: the next thought and action after the node.
    Act,
    /// ReAct: the tool call of the node's action.
    Tool,
    /// A call of the method's own kind (its tag is the method's to choose); the reply
    /// goes to `Method::on_reply`.
    Own(u32),
}

#[derive(Debug, Clone)]
pub struct Pending {
    pub node: NodeId,
    pub kind: CallKind,
    pub generation: u64,
    /// Asked for by a person (expand, re-evaluate, edit), not by the method's own schedule.
    pub by_hand: bool,
}

/// The request and reply behind a call, kept for the detail view.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallRecord {
    pub node: NodeId,
    pub request: LlmRequest,
    pub reply: Option<Result<LlmResponse, CallError>>,
}

/// Shared state and helpers the methods work through.
#[derive(Clone)]
pub struct Core {
    pub tree: SearchTree,
    pub task: Arc<dyn Task>,
    pub x: String,
    pub params: Params,
    /// Shared, so cloning the engine for a replay checkpoint does not copy every prompt.
    pub calls: BTreeMap<u64, Arc<CallRecord>>,
    pending: BTreeMap<u64, Pending>,
    next_call: u64,
    out: Vec<Effect>,
    pruned_from: HashMap<NodeId, NodeStatus>,
    pub rng: SplitMix64,
}

impl Core {
    pub fn steps(&self) -> usize {
        self.params.steps.unwrap_or_else(|| self.task.default_steps())
    }

    pub fn emit(&mut self, event: Event) {
        self.out.push(Effect::Emit { event });
    }

    pub fn log(&mut self, text: impl Into<String>) {
        self.emit(Event::Log { text: text.into() });
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    pub fn evaluation_pending(&self, node: NodeId) -> bool {
        self.pending.values().any(|p| p.node == node && p.kind == CallKind::Evaluate)
    }

    pub fn set_status(&mut self, id: NodeId, status: NodeStatus) {
        if self.tree.node(id).status != status {
            self.tree.node_mut(id).status = status.clone();
            self.emit(Event::Status { id, status });
        }
    }

    /// Set some of the node's metrics (the method's own numbers), shown by the panes.
    pub fn set_metrics(&mut self, id: NodeId, metrics: &[(&str, f64)]) {
        let node = self.tree.node_mut(id);
        let mut changed = std::collections::BTreeMap::new();
        for (key, value) in metrics {
            if node.metrics.get(*key) != Some(value) {
                node.metrics.insert(key.to_string(), *value);
                changed.insert(key.to_string(), *value);
            }
        }
        if !changed.is_empty() {
            self.emit(Event::Metrics { id, metrics: changed });
        }
    }

    pub fn set_score(&mut self, id: NodeId, score: Score) {
        let value = score.value;
        self.tree.node_mut(id).score = Some(score);
        self.emit(Event::Scored { id, value });
    }

    /// A node the search may still use: not pruned by hand, not rejected.
    pub fn usable(&self, id: NodeId) -> bool {
        !self.tree.is_pruned(id) && !matches!(self.tree.node(id).status, NodeStatus::Invalid(_))
    }

    pub fn issue(&mut self, node: NodeId, kind: CallKind, request: LlmRequest, by_hand: bool) -> u64 {
        let call = self.next_call;
        self.next_call += 1;
        let generation = self.tree.node(node).generation;
        self.pending.insert(call, Pending { node, kind, generation, by_hand });
        self.calls.insert(call, Arc::new(CallRecord { node, request: request.clone(), reply: None }));
        self.tree.node_mut(node).calls.push(call);
        self.out.push(Effect::CallLlm { call, request });
        call
    }

    /// Ask the runtime to run a tool for `node` (ReAct), continuing the tool state of `after`.
    pub fn issue_tool(&mut self, node: NodeId, after: NodeId, tool: ToolRequest) -> u64 {
        let call = self.next_call;
        self.next_call += 1;
        let generation = self.tree.node(node).generation;
        self.pending.insert(call, Pending { node, kind: CallKind::Tool, generation, by_hand: false });
        self.tree.node_mut(node).calls.push(call);
        self.out.push(Effect::CallTool { call, tool, node, after });
        call
    }

    /// Ask for children of `node` with the configured generator.
    pub fn generate(&mut self, node: NodeId, by_hand: bool) {
        let y = self.tree.node(node).path.clone();
        let request = match self.params.generator {
            Generator::Propose => {
                LlmRequest::from_prompt(self.task.propose_prompt(&self.x, &y), 1, self.params.temperature)
            }
            Generator::Sample => LlmRequest::from_prompt(
                self.task.sample_prompt(&self.x, &y),
                self.params.n_generate.max(1),
                self.params.temperature,
            ),
        };
        self.issue(node, CallKind::Generate, request, by_hand);
        if self.tree.node(node).status == NodeStatus::Frontier {
            self.set_status(node, NodeStatus::Expanded);
        }
    }

    /// Evaluate `nodes` as one step's candidates: duplicates (same path) after the
    /// first get 0, as in the reference; fixed values are set at once.
    /// Returns the number of calls issued.
    pub fn evaluate(&mut self, nodes: &[NodeId], by_hand: bool) -> usize {
        let usable: Vec<NodeId> = nodes.iter().copied().filter(|&n| self.usable(n)).collect();
        match self.params.evaluator {
            Evaluator::Value => {
                let mut seen = BTreeSet::new();
                let mut issued = 0;
                for id in usable {
                    let y = self.tree.node(id).path.clone();
                    if !seen.insert(y.clone()) {
                        if self.tree.node(id).score.is_none() {
                            let note = "duplicate candidate in this step".to_string();
                            self.set_score(id, Score { value: 0.0, samples: vec![], note: Some(note) });
                        }
                        continue;
                    }
                    if self.tree.node(id).score.is_some() || self.evaluation_pending(id) {
                        continue;
                    }
                    if self.fix_value(id) {
                        continue;
                    }
                    let prompt = self.task.value_prompt(&self.x, &y);
                    let request = LlmRequest::from_prompt(prompt, self.params.n_evaluate, self.params.temperature);
                    self.issue(id, CallKind::Evaluate, request, by_hand);
                    issued += 1;
                }
                issued
            }
            Evaluator::Vote => {
                if usable.is_empty() {
                    return 0;
                }
                let ys: Vec<String> = usable.iter().map(|&n| self.tree.node(n).path.clone()).collect();
                let parent = self.tree.node(usable[0]).parent.unwrap_or(self.tree.root());
                let prompt = self.task.vote_prompt(&self.x, &ys);
                let request = LlmRequest::from_prompt(prompt, self.params.n_evaluate, self.params.temperature);
                self.issue(parent, CallKind::Vote { nodes: usable }, request, by_hand);
                1
            }
        }
    }

    /// Set the task's fixed value for a node, if it has one (not in lenient mode).
    fn fix_value(&mut self, id: NodeId) -> bool {
        if self.params.lenient {
            return false;
        }
        let y = &self.tree.node(id).path;
        match self.task.fixed_value(&self.x, y) {
            Some((value, note)) => {
                self.set_score(id, Score { value, samples: vec![], note: Some(note) });
                true
            }
            None => false,
        }
    }

    /// Ask again about one node, bypassing the cache.
    pub fn reevaluate(&mut self, id: NodeId) {
        if self.fix_value(id) {
            return;
        }
        let y = self.tree.node(id).path.clone();
        let prompt = self.task.value_prompt(&self.x, &y);
        let mut request = LlmRequest::from_prompt(prompt, self.params.n_evaluate, self.params.temperature);
        request.nonce = self.tree.node(id).calls.len() as u32 + 1;
        self.issue(id, CallKind::Evaluate, request, true);
    }

    /// Add candidates under `parent`. In strict mode a proposal with a problem is
    /// kept as an invalid node with the reason; in lenient mode it stays usable.
    pub fn add_proposals(&mut self, parent: NodeId, proposals: Vec<Proposal>, origin: Origin) -> Vec<NodeId> {
        let mut ids = Vec::with_capacity(proposals.len());
        for p in proposals {
            // Blank lines are candidates only in lenient mode (the reference keeps them).
            if p.thought.is_empty() && !self.params.lenient {
                continue;
            }
            let id = self.tree.add_child(parent, p.thought.clone(), p.path, origin.clone());
            self.emit(Event::NodeAdded { id, parent, thought: p.thought });
            if let Some(problem) = p.problem {
                self.tree.node_mut(id).issues.push(Issue::Proposal(problem.clone()));
                if !self.params.lenient {
                    self.set_status(id, NodeStatus::Invalid(problem));
                }
            }
            ids.push(id);
        }
        ids
    }

    /// Cancel pending calls that satisfy `pred`; returns their ids.
    pub fn cancel_where(&mut self, pred: impl Fn(&Pending) -> bool) -> Vec<u64> {
        let calls: Vec<u64> = self.pending.iter().filter(|(_, p)| pred(p)).map(|(&c, _)| c).collect();
        for c in &calls {
            self.pending.remove(c);
        }
        if !calls.is_empty() {
            self.out.push(Effect::Cancel { calls: calls.clone() });
        }
        calls
    }

    /// Cancel the method's own scheduled calls (not ones a person asked for).
    pub fn cancel_scheduled(&mut self) -> Vec<u64> {
        self.cancel_where(|p| !p.by_hand)
    }

    /// Rank the final states, check their answers and build the outcome.
    pub fn finalize(&mut self, finals: Vec<NodeId>) -> Outcome {
        let mut correct = Vec::with_capacity(finals.len());
        for &id in &finals {
            let y = self.tree.node(id).path.clone();
            let answer = self.task.extract_answer(&self.x, &y);
            let ok = answer.as_deref().map(|a| self.task.check(&self.x, a).is_ok()).unwrap_or(false);
            self.tree.node_mut(id).answer = answer;
            self.set_status(id, if ok { NodeStatus::Solution } else { NodeStatus::Final });
            correct.push(ok);
        }
        let answer = finals.first().and_then(|&id| self.tree.node(id).answer.clone());
        Outcome {
            solved: correct.first().copied().unwrap_or(false),
            solved_any: correct.iter().any(|&c| c),
            answer,
            finals,
            sample_accuracy: None,
            answered_by: None,
        }
    }
}

/// A search: the tree, the method's state and the run mode.
#[derive(Clone)]
pub struct Engine {
    pub core: Core,
    method: Box<dyn Method>,
    mode: RunMode,
    outcome: Option<Outcome>,
}

impl Engine {
    pub fn new(task: Arc<dyn Task>, x: &str, params: Params) -> Engine {
        let method = methods::build(&params);
        let rng = SplitMix64::new(params.seed ^ 0x5eed_7007);
        let core = Core {
            tree: SearchTree::new(x),
            task,
            x: x.to_string(),
            params,
            calls: BTreeMap::new(),
            pending: BTreeMap::new(),
            next_call: 0,
            out: Vec::new(),
            pruned_from: HashMap::new(),
            rng,
        };
        Engine { core, method, mode: RunMode::Paused, outcome: None }
    }

    pub fn tree(&self) -> &SearchTree {
        &self.core.tree
    }

    pub fn mode(&self) -> RunMode {
        self.mode
    }

    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// What the explorer shows of the method's state.
    pub fn view(&self) -> methods::MethodView {
        self.method.view(&self.core)
    }

    pub fn is_finished(&self) -> bool {
        self.outcome.is_some()
    }

    /// Calls issued and not yet answered (or cancelled).
    pub fn pending_calls(&self) -> Vec<u64> {
        self.core.pending.keys().copied().collect()
    }

    pub fn is_idle(&self) -> bool {
        self.core.pending.is_empty()
    }

    pub fn handle(&mut self, input: Input) -> Vec<Effect> {
        match input {
            Input::Command { command } => self.command(command),
            Input::LlmReply(reply) => self.reply(reply),
            Input::ToolReply(reply) => self.tool_reply(reply),
        }
        self.pump();
        std::mem::take(&mut self.core.out)
    }

    fn set_mode(&mut self, mode: RunMode) {
        if self.mode != mode {
            self.mode = mode;
            self.core.emit(Event::Mode { mode });
        }
    }

    fn reject(&mut self, reason: impl Into<String>) {
        self.core.emit(Event::Rejected { reason: reason.into() });
    }

    fn check_node(&mut self, node: NodeId) -> bool {
        if self.core.tree.contains(node) {
            true
        } else {
            self.reject(format!("there is no node {node}"));
            false
        }
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Run => self.set_mode(RunMode::Running),
            Command::Pause => self.set_mode(RunMode::Paused),
            Command::Step { n } => self.set_mode(RunMode::Step(n.max(1))),
            Command::Prune { node } => {
                if !self.check_node(node) {
                    return;
                }
                if node == self.core.tree.root() {
                    return self.reject("the root cannot be pruned");
                }
                if self.core.tree.node(node).status == NodeStatus::Pruned {
                    return self.reject(format!("{node} is already pruned"));
                }
                let old = self.core.tree.node(node).status.clone();
                self.core.pruned_from.insert(node, old);
                self.core.set_status(node, NodeStatus::Pruned);
                self.core.tree.bump_generation(node);
                let tree = &self.core.tree;
                let inside: BTreeSet<NodeId> = tree.subtree(node).into_iter().collect();
                let cancelled = self.core.cancel_where(|p| inside.contains(&p.node));
                self.core.log(format!("pruned {node} ({} calls cancelled)", cancelled.len()));
                self.method.on_prune(&mut self.core, node);
            }
            Command::Unprune { node } => {
                if !self.check_node(node) {
                    return;
                }
                match self.core.pruned_from.remove(&node) {
                    Some(old) => {
                        self.core.set_status(node, old);
                        self.core.log(format!("un-pruned {node}"));
                    }
                    None => self.reject(format!("{node} is not pruned")),
                }
            }
            Command::Edit { node, text } => {
                if !self.check_node(node) {
                    return;
                }
                let Some(parent) = self.core.tree.node(node).parent else {
                    return self.reject("the root (the puzzle input) cannot be edited; use a new input instead");
                };
                let text = text.trim().to_string();
                if text.is_empty() {
                    return self.reject("an edited thought cannot be empty");
                }
                if let Some(result) = self.method.edit(&mut self.core, node, &text) {
                    match result {
                        Ok(new) => {
                            self.core.log(format!("edited {node} by hand as {new}; the old continuation stays"));
                            self.outcome = None;
                        }
                        Err(reason) => self.reject(reason),
                    }
                    return;
                }
                let y = self.core.tree.node(parent).path.clone();
                let proposal = self.core.task.parse_edit(&self.core.x, &y, &text);
                let origin = Origin::Human { edited_from: Some(node) };
                let ids = self.core.add_proposals(parent, vec![proposal], origin);
                let new = ids[0];
                self.core.log(format!("edited {node} by hand as {new}"));
                if self.core.usable(new) && self.core.task.has_evaluator() {
                    self.core.evaluate(&[new], true);
                }
                self.method.on_edit(&mut self.core, node, new);
                // A finished search can go on from an edit.
                self.outcome = None;
            }
            Command::Backtrack => {
                if let Err(reason) = self.method.backtrack(&mut self.core) {
                    self.reject(reason);
                } else {
                    self.outcome = None;
                }
            }
            Command::Expand { node } => {
                if !self.check_node(node) {
                    return;
                }
                if !self.core.usable(node) {
                    return self.reject(format!("{node} is pruned or invalid"));
                }
                self.core.generate(node, true);
                self.core.log(format!("expanding {node} by hand"));
            }
            Command::Reevaluate { node } => {
                if !self.check_node(node) {
                    return;
                }
                if node == self.core.tree.root() {
                    return self.reject("the root has no value to re-evaluate");
                }
                if !self.core.task.has_evaluator() {
                    return self.reject(format!("{} has no evaluator to ask", self.core.task.name()));
                }
                self.core.reevaluate(node);
            }
            Command::Continue { node } => {
                if !self.check_node(node) {
                    return;
                }
                if !self.core.usable(node) {
                    return self.reject(format!("{node} is pruned or invalid"));
                }
                match self.method.continue_from(&mut self.core, node) {
                    Ok(()) => {
                        self.outcome = None;
                        self.core.log(format!("continuing from {node}"));
                    }
                    Err(reason) => self.reject(reason),
                }
            }
        }
    }

    fn tool_reply(&mut self, reply: ToolReply) {
        let call = reply.call;
        let Some(pending) = self.core.pending.remove(&call) else {
            self.core.emit(Event::ReplyDropped { call, reason: "no such tool call in flight".into() });
            return;
        };
        if self.core.tree.node(pending.node).generation != pending.generation {
            self.core.emit(Event::ReplyDropped { call, reason: "the node changed since the call was made".into() });
            return;
        }
        self.method.on_tool(&mut self.core, pending.node, reply.result);
    }

    fn reply(&mut self, reply: LlmReply) {
        let call = reply.call;
        let Some(pending) = self.core.pending.remove(&call) else {
            let reason =
                if self.core.calls.contains_key(&call) { "cancelled or already answered" } else { "no such call" };
            self.core.emit(Event::ReplyDropped { call, reason: reason.into() });
            return;
        };
        if let Some(record) = self.core.calls.get_mut(&call) {
            Arc::make_mut(record).reply = Some(reply.result.clone());
        }
        if self.core.tree.node(pending.node).generation != pending.generation {
            let reason = "the node changed since the call was made".to_string();
            self.core.emit(Event::ReplyDropped { call, reason });
            return;
        }
        let node = pending.node;
        let response = match reply.result {
            Ok(r) => r,
            Err(err) => {
                let message = err.to_string();
                self.core.tree.node_mut(node).issues.push(Issue::CallFailed { call, message: message.clone() });
                self.core.emit(Event::CallFailed { call, node, message: message.clone() });
                if pending.kind == CallKind::Act {
                    self.method.on_act_failed(&mut self.core, node, &message);
                }
                if pending.kind == CallKind::Evaluate {
                    let note = format!("evaluation failed: {message}");
                    self.core.set_score(node, Score { value: 0.0, samples: vec![], note: Some(note) });
                }
                return;
            }
        };
        let before = self.core.tree.len();
        let kind = pending.kind.clone();
        self.apply_reply(node, pending, response);
        // Remember which call wrote each new node, for the detail view (or, for a
        // person's ReAct thought the model completed, which call wrote its action).
        for id in before..self.core.tree.len() {
            self.core.tree.node_mut(NodeId(id)).made_by = Some(call);
        }
        if self.core.tree.len() == before && kind == CallKind::Act {
            self.core.tree.node_mut(node).made_by.get_or_insert(call);
        }
    }

    /// What a successful reply does, by the kind of call.
    fn apply_reply(&mut self, node: NodeId, pending: Pending, response: LlmResponse) {
        let texts: Vec<String> = response.completions.iter().map(|c| c.text.clone()).collect();
        let (x, y) = (self.core.x.clone(), self.core.tree.node(node).path.clone());
        match pending.kind {
            CallKind::Generate => {
                let proposals: Vec<Proposal> = match self.core.params.generator {
                    Generator::Propose => {
                        texts.iter().flat_map(|t| self.core.task.parse_proposals(&x, &y, t)).collect()
                    }
                    Generator::Sample => texts.iter().map(|t| self.core.task.parse_sample(&x, &y, t)).collect(),
                };
                let children = self.core.add_proposals(node, proposals, Origin::Model);
                if pending.by_hand {
                    let fresh: Vec<NodeId> = children.clone();
                    self.core.evaluate(&fresh, true);
                }
                self.method.on_children(&mut self.core, node, &children, pending.by_hand);
            }
            CallKind::Evaluate => {
                let (value, samples) = self.core.task.parse_value(&x, &y, &texts);
                self.core.set_score(node, Score { value, samples, note: None });
            }
            CallKind::Vote { nodes } => {
                let mut votes = vec![0.0; nodes.len()];
                for t in &texts {
                    if let Some(i) = self.core.task.parse_vote(t, nodes.len()) {
                        votes[i] += 1.0;
                    }
                }
                for (i, &id) in nodes.iter().enumerate() {
                    let samples = vec![format!("{} of {} votes", votes[i], texts.len())];
                    self.core.set_score(id, Score { value: votes[i], samples, note: None });
                }
            }
            CallKind::Act => {
                // The first completion: its text, and its native tool calls if any.
                let completion = response.completions.first().cloned().unwrap_or_else(|| Completion::text("", None));
                self.method.on_act(&mut self.core, node, &completion);
            }
            CallKind::Tool => {}
            CallKind::Own(tag) => self.method.on_reply(&mut self.core, node, tag, &response),
            CallKind::Answer => {
                let proposals = texts
                    .iter()
                    .map(|t| Proposal { thought: t.trim().to_string(), path: t.clone(), problem: None })
                    .collect();
                let children = self.core.add_proposals(node, proposals, Origin::Model);
                self.method.on_children(&mut self.core, node, &children, pending.by_hand);
            }
        }
    }

    /// Settle finished batches and issue new ones as the run mode allows.
    fn pump(&mut self) {
        loop {
            if self.outcome.is_some() || self.core.has_pending() {
                return;
            }
            self.method.settle(&mut self.core);
            if self.method.done() {
                let outcome = self.method.outcome(&mut self.core);
                return self.finish(outcome);
            }
            match self.mode {
                RunMode::Paused => return,
                RunMode::Step(0) => return self.set_mode(RunMode::Paused),
                _ => {}
            }
            match self.method.advance(&mut self.core) {
                Progress::Issued(_) => {
                    if let RunMode::Step(k) = self.mode {
                        self.mode = RunMode::Step(k.saturating_sub(1));
                    }
                }
                Progress::Moved => {}
                Progress::Stuck(reason) => {
                    self.core.log(reason);
                    return self.set_mode(RunMode::Paused);
                }
            }
        }
    }

    fn finish(&mut self, outcome: Outcome) {
        self.core.emit(Event::Finished { outcome: outcome.clone() });
        self.outcome = Some(outcome);
        self.set_mode(RunMode::Paused);
    }
}

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
