//! One file per search method. A method is a state machine driven by the engine:
//! `advance` issues the next unit of work (a batch of calls), `settle` finishes a
//! batch once all its replies are in, and human commands reshape its state.

pub mod cot;
pub mod cot_sc;
pub mod hybrid;
pub mod io;
pub mod react;
mod samples;
pub mod tot_bfs;
pub mod tot_dfs;

use super::{Core, MethodKind, NodeId, Outcome, Params};

/// What a call to `advance` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Issued this many calls (at least one).
    Issued(usize),
    /// Changed state without calls; call `advance` again.
    Moved,
    /// Nothing can be done until a person acts; the reason goes to the log.
    Stuck(String),
}

/// Cloneable (through `dyn-clone`) so an engine can be checkpointed for replay.
pub trait Method: dyn_clone::DynClone + Send {
    fn advance(&mut self, core: &mut Core) -> Progress;
    /// All calls are answered: close the current batch (select, sort, ...).
    fn settle(&mut self, core: &mut Core);
    fn done(&self) -> bool;
    /// The outcome; called once when `done` turns true.
    fn outcome(&mut self, core: &mut Core) -> Outcome;
    /// New children of `parent` arrived.
    fn on_children(&mut self, core: &mut Core, parent: NodeId, children: &[NodeId], by_hand: bool);
    fn on_prune(&mut self, _core: &mut Core, _node: NodeId) {}
    /// A person added `new` as an edited version of `original`.
    fn on_edit(&mut self, _core: &mut Core, _original: NodeId, _new: NodeId) {}
    /// A person rewrote `node` as `text`. Methods that follow one trajectory (ReAct)
    /// handle it themselves and return the new node; `None` leaves it to the engine's
    /// tree-search edit (a new sibling, evaluated).
    fn edit(&mut self, _core: &mut Core, _node: NodeId, _text: &str) -> Option<Result<NodeId, String>> {
        None
    }
    /// ReAct: the model's reply for the step after `node` (its text and any native tool calls).
    fn on_act(&mut self, _core: &mut Core, _node: NodeId, _reply: &crate::engine::Completion) {}
    /// ReAct: the step's model call failed.
    fn on_act_failed(&mut self, _core: &mut Core, _node: NodeId, _message: &str) {}
    /// ReAct: the observation for `node`'s action.
    fn on_tool(&mut self, _core: &mut Core, _node: NodeId, _result: crate::engine::ToolResult) {}
    fn backtrack(&mut self, core: &mut Core) -> Result<(), String>;
    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String>;
}

dyn_clone::clone_trait_object!(Method);

pub fn build(params: &Params) -> Box<dyn Method> {
    match params.method {
        MethodKind::Io => Box::new(io::Io::new()),
        MethodKind::Cot => Box::new(cot::Cot::new()),
        MethodKind::CotSc => Box::new(cot_sc::CotSc::new()),
        MethodKind::TotBfs => Box::new(tot_bfs::TotBfs::new()),
        MethodKind::TotDfs => Box::new(tot_dfs::TotDfs::new()),
        MethodKind::React => Box::new(react::React::new()),
        MethodKind::ReactCotSc => Box::new(hybrid::Hybrid::react_cot_sc()),
        MethodKind::CotScReact => Box::new(hybrid::Hybrid::cot_sc_react()),
    }
}

/// Stable sort by value, descending (unscored last): the reference's
/// `sorted(ids, key=value, reverse=True)`, which keeps ties in their original order.
pub fn rank_by_value(core: &Core, nodes: &[NodeId]) -> Vec<NodeId> {
    let mut ranked = nodes.to_vec();
    let v = |id: &NodeId| core.tree.value(*id).unwrap_or(f64::NEG_INFINITY);
    ranked.sort_by(|a, b| v(b).partial_cmp(&v(a)).unwrap_or(std::cmp::Ordering::Equal));
    ranked
}

#[cfg(test)]
mod hybrid_tests;
