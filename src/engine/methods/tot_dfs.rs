//! Tree-of-Thoughts DFS (the paper's Algorithm 2): expand the current state,
//! evaluate its children, try the most promising first, prune children valued
//! below the threshold, backtrack to the parent when none remain; stop at a final
//! state that passes the threshold or after `max_states` expansions, outputting
//! the best (deepest, then highest-valued) state seen.
//!
//! The paper's crossword DFS is the same search in another shape, set by generic
//! parameters (each defaults to what the task's `TreeSearch::dfs_style` says, and the
//! default style is the one above, so Game of 24 runs as it always did):
//! * `child_order proposal`: children are tried in the order of their proposal's own
//!   score (`TreeSearch::proposal_scores`; stable on ties), each evaluated when it is tried,
//!   and `max_states` counts these visited states, as the paper's notebook does;
//! * `prune task | none` (`--no-prune`): a tried child is dropped when the task's rule
//!   calls its evaluation a dead end (crosswords: a clue judged impossible), or never;
//! * `max_children N`: at most N children are tried per state (0: all);
//! * `run_to cap`: a state at depth T is a leaf, not the end: the search goes on to the
//!   state cap or until every branch is exhausted, and outputs the deepest state
//!   visited (the first visited on ties).

use serde::{Deserialize, Serialize};

use crate::engine::event::Event;
use crate::engine::params::{choices, Choice, DefaultValue, Kind, ParamDecl, SEARCH};
use crate::engine::task::PROPOSAL_SCORE;
use crate::engine::tree::DropReason;
use crate::engine::MethodKind;
use crate::engine::{Core, Duplicates, NodeId, NodeStatus, Outcome, ParamError, ParamReader, SearchParams};

use super::{count, rank_by_value, Cutoff, Method, MethodInfo, MethodView, Progress};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Expand,
    Generating,
    Evaluate,
    Evaluating,
    Choose,
    /// `child_order proposal`: waiting for the evaluation of the child being tried.
    Trying(NodeId),
    Done,
}

/// In what order DFS tries a state's children.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChildOrder {
    /// All children are evaluated together, then tried best value first.
    Value,
    /// Tried in the order of their proposal's own score, each evaluated when tried.
    Proposal,
}

impl Choice for ChildOrder {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("value", "evaluate all children, try the best valued first", ChildOrder::Value),
        ("proposal", "try children by their proposal's own score, evaluating each when tried", ChildOrder::Proposal),
    ];
}

/// Which evaluated children DFS drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PruneRule {
    /// Those valued below `threshold`.
    Threshold,
    /// Those the task's rule calls dead ends (`Pruning::prune_reason`).
    Task,
    /// None: every child is searched.
    None,
}

impl Choice for PruneRule {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("threshold", "drop children valued below --threshold", PruneRule::Threshold),
        ("task", "drop children the task calls dead ends (crosswords: a clue judged impossible)", PruneRule::Task),
        ("none", "drop none", PruneRule::None),
    ];
}

/// Where DFS stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunTo {
    /// At the first state of depth T it reaches.
    Final,
    /// At the state cap or when every branch is exhausted; states of depth T are leaves.
    Cap,
}

impl Choice for RunTo {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("final", "stop at the first state of depth T", RunTo::Final),
        ("cap", "go on to the state cap; output the deepest state visited", RunTo::Cap),
    ];
}

/// The shape of a DFS, as a task prefers it (`Task::dfs_style`) and parameters override.
/// The shape of a DFS, as a task prefers it (`TreeSearch::dfs_style`) and parameters override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DfsStyle {
    pub order: ChildOrder,
    pub prune: PruneRule,
    /// Most children tried per state; 0 is no cap.
    pub max_children: usize,
    pub run_to: RunTo,
}

impl Default for DfsStyle {
    fn default() -> Self {
        DfsStyle { order: ChildOrder::Value, prune: PruneRule::Threshold, max_children: 0, run_to: RunTo::Final }
    }
}

#[derive(Debug, Clone)]
struct Frame {
    node: NodeId,
    /// Children still to try, best first.
    todo: Vec<NodeId>,
    /// Children generated for this frame (before evaluation).
    fresh: Vec<NodeId>,
    /// Children tried so far (`child_order proposal`, for `max_children`).
    tried: usize,
}

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("tot-dfs");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "Tree of Thoughts, depth-first: best child first, prune below a threshold, backtrack",
    react: super::ReactShape::None,
    uses_tools: false,
    needs,
    params: &[
        &THRESHOLD,
        &MAX_STATES,
        &CHILD_ORDER,
        &PRUNE,
        &NO_PRUNE,
        &MAX_CHILDREN,
        &RUN_TO,
        SEARCH[0],
        SEARCH[1],
        SEARCH[2],
        SEARCH[3],
        SEARCH[4],
        SEARCH[5],
    ],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(TotDfs::new(DfsParams::read(p)?))),
};

pub const THRESHOLD: ParamDecl = ParamDecl {
    name: "threshold",
    help: "Prune children valued below this",
    kind: Kind::Real { min: f64::NEG_INFINITY, max: f64::INFINITY },
    default: DefaultValue::Real(3.0),
};

pub const MAX_STATES: ParamDecl = ParamDecl {
    name: "max_states",
    help: "Cap on states expanded (visited, with --child-order proposal)",
    kind: Kind::Whole { min: 1, max: 10_000_000 },
    default: DefaultValue::Whole(100),
};

pub const CHILD_ORDER: ParamDecl = ParamDecl {
    name: "child_order",
    help: "The order children are tried in",
    kind: Kind::Choice(choices::<ChildOrder>),
    default: DefaultValue::Unset("the task's; value, or proposal for crosswords"),
};

pub const PRUNE: ParamDecl = ParamDecl {
    name: "prune",
    help: "Which tried children are dropped",
    kind: Kind::Choice(choices::<PruneRule>),
    default: DefaultValue::Unset("the task's; threshold, or task for crosswords"),
};

pub const NO_PRUNE: ParamDecl = ParamDecl {
    name: "no_prune",
    help: "Prune nothing (the same as --prune none)",
    kind: Kind::Flag,
    default: DefaultValue::Flag(false),
};

pub const MAX_CHILDREN: ParamDecl = ParamDecl {
    name: "max_children",
    help: "Most children tried per state, 0 for all",
    kind: Kind::Whole { min: 0, max: 10_000_000 },
    default: DefaultValue::Unset("the task's; 0, or 3 for crosswords"),
};

pub const RUN_TO: ParamDecl = ParamDecl {
    name: "run_to",
    help: "Where the search stops",
    kind: Kind::Choice(choices::<RunTo>),
    default: DefaultValue::Unset("the task's; final, or cap for crosswords"),
};
/// `MethodInfo::needs`: a tree search, and what the shape's parameters ask of the task
/// (`--prune task` its dead-end rule, `--child-order proposal` its scored proposals).
fn needs(p: &crate::engine::Params) -> super::Needs {
    let mut needs = super::Needs::tree_search(p);
    if let Ok(dfs) = DfsParams::read(&p.reader()) {
        if dfs.prune == Some(PruneRule::Task) {
            needs.capabilities.push(crate::engine::task::Capability::Pruning);
        }
        if dfs.order == Some(ChildOrder::Proposal) {
            needs.capabilities.push(crate::engine::task::Capability::ProposalScores);
        }
    }
    needs
}

/// DFS's parameters: the pruning threshold and the cap on states, over the shared search components.
#[derive(Debug, Clone, PartialEq)]
pub struct DfsParams {
    /// Children valued below this are pruned.
    pub threshold: f64,
    /// Most states expanded.
    pub max_states: usize,
    pub search: SearchParams,
    /// The shape given by parameters; unset parts come from the task's `dfs_style`.
    pub order: Option<ChildOrder>,
    pub prune: Option<PruneRule>,
    pub max_children: Option<usize>,
    pub run_to: Option<RunTo>,
}

impl DfsParams {
    pub fn read(p: &ParamReader) -> Result<DfsParams, ParamError> {
        let no_prune = p.flag(&NO_PRUNE)?;
        let prune = p.optional_choice(&PRUNE)?;
        Ok(DfsParams {
            threshold: p.real(&THRESHOLD)?,
            max_states: p.count(&MAX_STATES)?,
            search: SearchParams::read(p)?,
            order: p.optional_choice(&CHILD_ORDER)?,
            prune: if no_prune { Some(PruneRule::None) } else { prune },
            max_children: p.optional_count(&MAX_CHILDREN)?,
            run_to: p.optional_choice(&RUN_TO)?,
        })
    }

    /// The shape of this run on a task that prefers `task`.
    pub fn style(&self, task: DfsStyle) -> DfsStyle {
        DfsStyle {
            order: self.order.unwrap_or(task.order),
            prune: self.prune.unwrap_or(task.prune),
            max_children: self.max_children.unwrap_or(task.max_children),
            run_to: self.run_to.unwrap_or(task.run_to),
        }
    }
}

/// Why the task's dead-end rule drops `id` valued `score`, if it does (a task without a
/// rule drops nothing: the engine refuses `--prune task` there, and a task whose own
/// style prunes by its rule has one).
fn prune_reason(core: &Core, id: NodeId, score: &crate::engine::Score) -> Option<DropReason> {
    let rule = core.task.tree().and_then(|t| t.pruning())?;
    rule.prune_reason(&core.x, &core.tree.node(id).path, score).map(DropReason::Other)
}

#[derive(Debug, Clone)]
pub struct TotDfs {
    params: DfsParams,
    stack: Vec<Frame>,
    phase: Phase,
    expansions: usize,
    /// States tried (evaluated) under `child_order proposal`, which `max_states` caps.
    visited: usize,
    best: Option<NodeId>,
    finals: Vec<NodeId>,
}

impl TotDfs {
    pub fn new(params: DfsParams) -> Self {
        TotDfs {
            params,
            stack: vec![frame(NodeId(0))],
            phase: Phase::Expand,
            expansions: 0,
            visited: 0,
            best: None,
            finals: Vec::new(),
        }
    }

    /// This run's shape: the parameters over the task's preferences.
    fn style(&self, core: &Core) -> DfsStyle {
        self.params.style(core.task.tree().map_or_else(DfsStyle::default, |t| t.dfs_style()))
    }

    fn consider_best(&mut self, core: &Core, id: NodeId) {
        let by_value = self.style(core).order == ChildOrder::Value;
        // Proposal order: the deepest state, the first visited on ties (the paper's crossword output).
        let key = |n: NodeId| {
            let value = if by_value { core.tree.value(n).unwrap_or(0.0) } else { 0.0 };
            (core.tree.node(n).depth, value)
        };
        match self.best {
            Some(b) if key(b) >= key(id) => {}
            _ => self.best = Some(id),
        }
    }

    fn stop_with_best(&mut self) {
        self.finals = self.best.into_iter().collect();
        self.phase = Phase::Done;
    }

    /// Leave the state on top; `why` marks it dropped (`None`: a leaf keeps its status).
    fn pop(&mut self, core: &mut Core, why: Option<DropReason>) {
        if let Some(f) = self.stack.pop() {
            if let Some(why) = &why {
                if core.usable(f.node) && f.node != core.tree.root() {
                    core.set_status(f.node, NodeStatus::Dropped(why.clone()));
                }
            }
            let to: Vec<NodeId> = self.stack.last().map(|p| p.node).into_iter().collect();
            core.emit(Event::Backtracked { from: vec![f.node], to: to.clone() });
            if let Some(parent) = to.first() {
                let why = why.map_or_else(|| "a leaf".to_string(), |w| w.to_string());
                core.log(format!("backtracked from {} to {parent}: {why}", f.node));
            }
        }
    }

    /// `child_order proposal`: try the next child of the state on top (evaluate it), or
    /// leave the state when none is left or its children cap is reached.
    fn try_next(&mut self, core: &mut Core, style: DfsStyle) -> Progress {
        let max_states = self.params.max_states;
        let Some(top) = self.stack.last_mut() else {
            self.stop_with_best();
            return Progress::Moved;
        };
        let capped = style.max_children > 0 && top.tried >= style.max_children;
        while !capped && !top.todo.is_empty() {
            let child = top.todo.remove(0);
            if !core.usable(child) {
                continue;
            }
            if self.visited >= max_states {
                core.log(format!("visited {}, the cap; stopping", count(self.visited, "state", "states")));
                self.stop_with_best();
                return Progress::Moved;
            }
            top.tried += 1;
            self.visited += 1;
            let issued = core.evaluate(&[child], false, Duplicates::Evaluate);
            self.phase = Phase::Trying(child);
            return if issued == 0 { Progress::Moved } else { Progress::Issued(issued) };
        }
        if capped {
            let node = top.node;
            core.log(format!("{node}: tried {}, the cap", count(style.max_children, "child", "children")));
        }
        if self.stack.len() <= 1 {
            core.log("every branch is exhausted");
            self.stack.clear();
            self.stop_with_best();
            return Progress::Moved;
        }
        self.pop(core, Some(DropReason::Exhausted));
        Progress::Moved
    }

    /// `child_order proposal`: the child being tried is evaluated; go into it unless the prune rule drops it.
    fn tried(&mut self, core: &mut Core, child: NodeId, style: DfsStyle) {
        self.phase = Phase::Choose;
        if !core.usable(child) {
            return;
        }
        self.consider_best(core, child);
        let dead = match (style.prune, core.tree.node(child).score.as_ref()) {
            (PruneRule::None, _) | (_, None) => None,
            (PruneRule::Threshold, Some(score)) => (score.value < self.params.threshold)
                .then_some(DropReason::BelowThreshold { value: score.value, threshold: self.params.threshold }),
            (PruneRule::Task, Some(score)) => prune_reason(core, child, score),
        };
        match dead {
            Some(why) => {
                core.log(format!("{child} pruned: {why}"));
                core.set_status(child, NodeStatus::Dropped(why));
            }
            None => {
                core.set_status(child, NodeStatus::Frontier);
                self.stack.push(frame(child));
                self.phase = Phase::Expand;
            }
        }
    }
}

fn frame(node: NodeId) -> Frame {
    Frame { node, todo: Vec::new(), fresh: Vec::new(), tried: 0 }
}

/// Stable sort by the proposal's own score, descending (unscored last).
fn rank_by_proposal(core: &Core, nodes: &[NodeId]) -> Vec<NodeId> {
    let mut ranked = nodes.to_vec();
    let v = |id: &NodeId| core.tree.node(*id).metrics.get(PROPOSAL_SCORE).copied().unwrap_or(f64::NEG_INFINITY);
    ranked.sort_by(|a, b| v(b).partial_cmp(&v(a)).unwrap_or(std::cmp::Ordering::Equal));
    ranked
}

impl Method for TotDfs {
    fn advance(&mut self, core: &mut Core) -> Progress {
        let style = self.style(core);
        match self.phase {
            Phase::Expand => {
                let Some(top) = self.stack.last() else {
                    self.stop_with_best();
                    return Progress::Moved;
                };
                let node = top.node;
                if core.tree.node(node).depth >= core.steps() {
                    if style.run_to == RunTo::Cap {
                        self.phase = Phase::Choose;
                        self.pop(core, None);
                        return Progress::Moved;
                    }
                    core.log(format!("reached a final state {node}"));
                    self.finals = vec![node];
                    self.phase = Phase::Done;
                    return Progress::Moved;
                }
                let capped = match style.order {
                    ChildOrder::Value => self.expansions >= self.params.max_states,
                    ChildOrder::Proposal => self.visited >= self.params.max_states,
                };
                if capped {
                    let n = if style.order == ChildOrder::Value { self.expansions } else { self.visited };
                    core.log(format!("visited {}, the cap; stopping", count(n, "state", "states")));
                    self.stop_with_best();
                    return Progress::Moved;
                }
                self.expansions += 1;
                core.set_status(node, NodeStatus::Expanded);
                core.generate(node, false);
                self.phase = Phase::Generating;
                Progress::Issued(1)
            }
            Phase::Evaluate => {
                let fresh = self.stack.last().map(|f| f.fresh.clone()).unwrap_or_default();
                let issued = core.evaluate(&fresh, false, Duplicates::ScoreZero);
                self.phase = Phase::Evaluating;
                if issued == 0 {
                    Progress::Moved
                } else {
                    Progress::Issued(issued)
                }
            }
            Phase::Choose if style.order == ChildOrder::Proposal => self.try_next(core, style),
            Phase::Choose => {
                let Some(top) = self.stack.last_mut() else {
                    self.stop_with_best();
                    return Progress::Moved;
                };
                while !top.todo.is_empty() {
                    let child = top.todo.remove(0);
                    if core.usable(child) {
                        core.set_status(child, NodeStatus::Frontier);
                        self.consider_best(core, child);
                        self.stack.push(frame(child));
                        self.phase = Phase::Expand;
                        return Progress::Moved;
                    }
                }
                if self.stack.len() <= 1 {
                    core.log("every branch is exhausted");
                    self.stack.clear();
                    self.stop_with_best();
                    return Progress::Moved;
                }
                self.pop(core, Some(DropReason::NoChildLeft));
                Progress::Moved
            }
            Phase::Generating | Phase::Evaluating | Phase::Trying(_) => Progress::Stuck("waiting for replies".into()),
            Phase::Done => Progress::Stuck("the search is finished".into()),
        }
    }

    fn settle(&mut self, core: &mut Core) {
        let style = self.style(core);
        match self.phase {
            Phase::Generating if style.order == ChildOrder::Proposal => {
                let Some(top) = self.stack.last_mut() else { return };
                let fresh = std::mem::take(&mut top.fresh);
                let usable: Vec<NodeId> = fresh.into_iter().filter(|&n| core.usable(n)).collect();
                top.todo = rank_by_proposal(core, &usable);
                let n = top.todo.len();
                core.log(format!("{}: {} to try", top.node, count(n, "candidate", "candidates")));
                self.phase = Phase::Choose;
            }
            Phase::Generating => self.phase = Phase::Evaluate,
            Phase::Trying(child) => self.tried(core, child, style),
            Phase::Evaluating => {
                let threshold = self.params.threshold;
                let Some(top) = self.stack.last_mut() else { return };
                let fresh = std::mem::take(&mut top.fresh);
                let scored: Vec<NodeId> = fresh.into_iter().filter(|&n| core.usable(n)).collect();
                let ranked = rank_by_value(core, &scored);
                let mut keep = Vec::new();
                for id in ranked {
                    let v = core.tree.value(id).unwrap_or(0.0);
                    let cut = match style.prune {
                        PruneRule::Threshold => {
                            (v < threshold).then_some(DropReason::BelowThreshold { value: v, threshold })
                        }
                        PruneRule::None => None,
                        PruneRule::Task => {
                            core.tree.node(id).score.as_ref().and_then(|score| prune_reason(core, id, score))
                        }
                    };
                    match cut {
                        None if style.max_children == 0 || keep.len() < style.max_children => keep.push(id),
                        None => {
                            let why = format!(
                                "beyond the {} tried per state",
                                count(style.max_children, "child", "children")
                            );
                            core.set_status(id, NodeStatus::Dropped(DropReason::Other(why)));
                        }
                        Some(why) => core.set_status(id, NodeStatus::Dropped(why)),
                    }
                }
                let pass = if keep.len() == 1 { "child passes" } else { "children pass" };
                let rule = match style.prune {
                    PruneRule::Threshold => "the threshold",
                    PruneRule::Task => "the task's rule",
                    PruneRule::None => "(no pruning)",
                };
                core.log(format!("{}: {} {pass} {rule}", top.node, keep.len()));
                // Those that pass wait on the stack to be tried: frontier (○), as the legend says.
                for &id in &keep {
                    core.set_status(id, NodeStatus::Frontier);
                }
                top.todo = keep;
                self.phase = Phase::Choose;
            }
            _ => {}
        }
    }

    fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        core.finalize(self.finals.clone())
    }

    fn on_children(&mut self, core: &mut Core, parent: NodeId, children: &[NodeId], by_hand: bool) {
        let proposal_order = self.style(core).order == ChildOrder::Proposal;
        if let Some(top) = self.stack.last_mut() {
            if top.node == parent {
                if by_hand && (self.phase == Phase::Choose || proposal_order) {
                    // Already evaluated by the engine; try them after the current list.
                    top.todo.extend_from_slice(children);
                } else {
                    top.fresh.extend_from_slice(children);
                }
            }
        }
    }

    fn on_prune(&mut self, core: &mut Core, node: NodeId) {
        if let Some(pos) = self.stack.iter().position(|f| core.tree.is_within(f.node, node)) {
            self.stack.truncate(pos.max(1));
            if self.phase != Phase::Done {
                self.phase = Phase::Choose;
            }
        } else if matches!(self.phase, Phase::Trying(child) if core.tree.is_within(child, node)) {
            self.phase = Phase::Choose;
        }
    }

    fn on_edit(&mut self, _core: &mut Core, original: NodeId, new: NodeId) {
        // A person's version is tried next, before the remaining siblings.
        for f in self.stack.iter_mut() {
            if f.todo.contains(&original) || f.fresh.contains(&original) {
                f.todo.insert(0, new);
                return;
            }
        }
        if let Some(pos) = self.stack.iter().position(|f| f.node == original) {
            if pos > 0 {
                self.stack[pos - 1].todo.insert(0, new);
                return;
            }
        }
        if let Phase::Trying(child) = self.phase {
            if child == original {
                if let Some(top) = self.stack.last_mut() {
                    top.todo.insert(0, new);
                }
            }
        }
    }

    fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String> {
        if self.stack.len() <= 1 {
            return Err("already at the root: nothing to backtrack from".into());
        }
        // Pop to the parent, or until `to` is the state on top.
        let keep = match to {
            None => self.stack.len() - 1,
            Some(node) => match self.stack.iter().position(|f| f.node == node) {
                Some(i) if i + 1 < self.stack.len() => i + 1,
                Some(_) => return Err(format!("{node} is the state being tried: nothing to backtrack from")),
                None => return Err(format!("{node} is not on the search's path: DFS backtracks to an ancestor")),
            },
        };
        core.cancel_scheduled();
        while self.stack.len() > keep {
            self.pop(core, Some(DropReason::Backtracked));
        }
        self.phase = Phase::Choose;
        Ok(())
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        core.cancel_scheduled();
        let mut path = vec![node];
        let mut cur = core.tree.node(node).parent;
        while let Some(p) = cur {
            path.push(p);
            cur = core.tree.node(p).parent;
        }
        path.reverse();
        let threshold = self.params.threshold;
        let proposal_order = self.style(core).order == ChildOrder::Proposal;
        self.stack = path
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let next = path.get(i + 1).copied();
                let children = &core.tree.node(n).children;
                if proposal_order {
                    // Children not tried yet (no evaluation), in proposal order; the tried ones count.
                    let untried: Vec<NodeId> = children
                        .iter()
                        .copied()
                        .filter(|&c| Some(c) != next && core.usable(c) && core.tree.node(c).score.is_none())
                        .collect();
                    let tried = children.iter().filter(|&&c| core.tree.node(c).score.is_some()).count();
                    let todo = if next.is_some() { rank_by_proposal(core, &untried) } else { Vec::new() };
                    return Frame { node: n, todo, fresh: Vec::new(), tried };
                }
                let siblings: Vec<NodeId> = children
                    .iter()
                    .copied()
                    .filter(|&c| {
                        Some(c) != next && core.usable(c) && core.tree.value(c).is_some_and(|v| v >= threshold)
                    })
                    .collect();
                let todo = if next.is_some() { rank_by_value(core, &siblings) } else { Vec::new() };
                Frame { node: n, todo, fresh: Vec::new(), tried: 0 }
            })
            .collect();
        core.set_status(node, NodeStatus::Frontier);
        self.finals.clear();
        self.phase = Phase::Expand;
        Ok(())
    }

    fn search(&self) -> Option<SearchParams> {
        Some(self.params.search)
    }

    fn view(&self, core: &Core) -> MethodView {
        let p = &self.params;
        let style = self.style(core);
        if style == DfsStyle::default() {
            return MethodView {
                params: format!("tot-dfs v≥{} max {}", p.threshold, p.max_states),
                step: self.expansions,
                step_noun: "expansion",
                cutoff: Some(Cutoff::Threshold { value: p.threshold, label: format!("threshold {}", p.threshold) }),
                candidates: super::Candidates::Siblings,
                votes: None,
                ..MethodView::default()
            };
        }
        let prune = match style.prune {
            PruneRule::Threshold => format!("prune v<{}", p.threshold),
            PruneRule::Task => "prune by task".to_string(),
            PruneRule::None => "no prune".to_string(),
        };
        let order = match style.order {
            ChildOrder::Value => "by value",
            ChildOrder::Proposal => "by proposal",
        };
        let children =
            if style.max_children > 0 { format!(" ≤{} children", style.max_children) } else { String::new() };
        let to_cap = if style.run_to == RunTo::Cap { " to cap" } else { "" };
        let (step, step_noun) = match style.order {
            ChildOrder::Value => (self.expansions, "expansion"),
            ChildOrder::Proposal => (self.visited, "visited state"),
        };
        MethodView {
            params: format!("tot-dfs {order} {prune}{children} max {}{to_cap}", p.max_states),
            step,
            step_noun,
            cutoff: (style.prune == PruneRule::Threshold)
                .then(|| Cutoff::Threshold { value: p.threshold, label: format!("threshold {}", p.threshold) }),
            candidates: super::Candidates::Siblings,
            votes: None,
            ..MethodView::default()
        }
    }
}
