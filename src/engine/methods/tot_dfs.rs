//! Tree-of-Thoughts DFS (the paper's Algorithm 2): expand the current state,
//! evaluate its children, try the most promising first, prune children valued
//! below the threshold, backtrack to the parent when none remain; stop at a final
//! state that passes the threshold or after `max_states` expansions, outputting
//! the best (deepest, then highest-valued) state seen.

use crate::engine::event::Event;
use crate::engine::params::{real, whole};
use crate::engine::tree::DropReason;
use crate::engine::MethodKind;
use crate::engine::{Core, Duplicates, NodeId, NodeStatus, Outcome, ParamError, Params, SearchParams};

use super::{count, rank_by_value, Cutoff, Method, MethodInfo, MethodView, Progress};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Expand,
    Generating,
    Evaluate,
    Evaluating,
    Choose,
    Done,
}

#[derive(Debug, Clone)]
struct Frame {
    node: NodeId,
    /// Children still to try, best first.
    todo: Vec<NodeId>,
    /// Children generated for this frame (before evaluation).
    fresh: Vec<NodeId>,
}

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("tot-dfs");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "Tree of Thoughts, depth-first: best child first, prune below a threshold, backtrack",
    react_steps: false,

    uses_tools: false,
    tree_search: true,
    default_samples: None,
    own_params: &[],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(TotDfs::new(DfsParams::read(p)?))),
};

/// DFS's parameters: the pruning threshold and the cap on states, over the shared search components.
#[derive(Debug, Clone, PartialEq)]
pub struct DfsParams {
    /// Children valued below this are pruned.
    pub threshold: f64,
    /// Most states expanded.
    pub max_states: usize,
    pub search: SearchParams,
}

impl DfsParams {
    pub fn read(p: &Params) -> Result<DfsParams, ParamError> {
        Ok(DfsParams {
            threshold: real("threshold", p.threshold, f64::NEG_INFINITY, f64::INFINITY)?,
            max_states: whole("max_states", p.max_states, 1, 10_000_000)?,
            search: SearchParams::read(p)?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct TotDfs {
    params: DfsParams,
    stack: Vec<Frame>,
    phase: Phase,
    expansions: usize,
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
            best: None,
            finals: Vec::new(),
        }
    }

    fn consider_best(&mut self, core: &Core, id: NodeId) {
        let key = |n: NodeId| (core.tree.node(n).depth, core.tree.value(n).unwrap_or(0.0));
        match self.best {
            Some(b) if key(b) >= key(id) => {}
            _ => self.best = Some(id),
        }
    }

    fn stop_with_best(&mut self) {
        self.finals = self.best.into_iter().collect();
        self.phase = Phase::Done;
    }

    fn pop(&mut self, core: &mut Core, why: DropReason) {
        if let Some(f) = self.stack.pop() {
            if core.usable(f.node) && f.node != core.tree.root() {
                core.set_status(f.node, NodeStatus::Dropped(why.clone()));
            }
            let to: Vec<NodeId> = self.stack.last().map(|p| p.node).into_iter().collect();
            core.emit(Event::Backtracked { from: vec![f.node], to: to.clone() });
            if let Some(parent) = to.first() {
                core.log(format!("backtracked from {} to {parent}: {why}", f.node));
            }
        }
    }
}

fn frame(node: NodeId) -> Frame {
    Frame { node, todo: Vec::new(), fresh: Vec::new() }
}

impl Method for TotDfs {
    fn advance(&mut self, core: &mut Core) -> Progress {
        match self.phase {
            Phase::Expand => {
                let Some(top) = self.stack.last() else {
                    self.stop_with_best();
                    return Progress::Moved;
                };
                let node = top.node;
                if core.tree.node(node).depth >= core.steps() {
                    core.log(format!("reached a final state {node}"));
                    self.finals = vec![node];
                    self.phase = Phase::Done;
                    return Progress::Moved;
                }
                if self.expansions >= self.params.max_states {
                    core.log(format!("visited {}, the cap; stopping", count(self.expansions, "state", "states")));
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
                self.pop(core, DropReason::NoChildLeft);
                Progress::Moved
            }
            Phase::Generating | Phase::Evaluating => Progress::Stuck("waiting for replies".into()),
            Phase::Done => Progress::Stuck("the search is finished".into()),
        }
    }

    fn settle(&mut self, core: &mut Core) {
        match self.phase {
            Phase::Generating => self.phase = Phase::Evaluate,
            Phase::Evaluating => {
                let threshold = self.params.threshold;
                let Some(top) = self.stack.last_mut() else { return };
                let fresh = std::mem::take(&mut top.fresh);
                let scored: Vec<NodeId> = fresh.into_iter().filter(|&n| core.usable(n)).collect();
                let ranked = rank_by_value(core, &scored);
                let mut keep = Vec::new();
                for id in ranked {
                    let v = core.tree.value(id).unwrap_or(0.0);
                    if v >= threshold {
                        keep.push(id);
                    } else {
                        core.set_status(id, NodeStatus::Dropped(DropReason::BelowThreshold { value: v, threshold }));
                    }
                }
                let pass = if keep.len() == 1 { "child passes" } else { "children pass" };
                core.log(format!("{}: {} {pass} the threshold", top.node, keep.len()));
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

    fn on_children(&mut self, _core: &mut Core, parent: NodeId, children: &[NodeId], by_hand: bool) {
        if let Some(top) = self.stack.last_mut() {
            if top.node == parent {
                if by_hand && self.phase == Phase::Choose {
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
            self.pop(core, DropReason::Backtracked);
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
        self.stack = path
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let next = path.get(i + 1).copied();
                let siblings: Vec<NodeId> = core
                    .tree
                    .node(n)
                    .children
                    .iter()
                    .copied()
                    .filter(|&c| {
                        Some(c) != next && core.usable(c) && core.tree.value(c).is_some_and(|v| v >= threshold)
                    })
                    .collect();
                let todo = if next.is_some() { rank_by_value(core, &siblings) } else { Vec::new() };
                Frame { node: n, todo, fresh: Vec::new() }
            })
            .collect();
        core.set_status(node, NodeStatus::Frontier);
        self.finals.clear();
        self.phase = Phase::Expand;
        Ok(())
    }

    fn view(&self, _core: &Core) -> MethodView {
        let p = &self.params;
        MethodView {
            params: format!("tot-dfs v≥{} max {}", p.threshold, p.max_states),
            step: self.expansions,
            step_noun: "expansion",
            cutoff: Some(Cutoff::Threshold { value: p.threshold, label: format!("threshold {}", p.threshold) }),
            candidates_by_depth: false,
            votes: None,
            ..MethodView::default()
        }
    }
}
