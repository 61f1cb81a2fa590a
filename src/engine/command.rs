//! What a person (or a script) can ask of a running search.

use serde::{Deserialize, Serialize};

use super::tree::NodeId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "cmd")]
pub enum Command {
    /// Carry out `n` units of work (one batch of calls each), then pause.
    Step { n: u32 },
    /// Run until finished or paused.
    Run,
    /// Issue no new calls (calls in flight still land).
    Pause,
    /// Drop a subtree from the search and cancel its calls.
    Prune { node: NodeId },
    /// Undo a prune.
    Unprune { node: NodeId },
    /// Add a person's version of a thought as a sibling; it is evaluated and can be continued from.
    Edit { node: NodeId, text: String },
    /// Leave the current branch: BFS for the next best states of the step before (or the
    /// state `to` among them), DFS popping to the parent (or up to `to`), MCTS dropping
    /// the last branch it went down (or `to`).
    Backtrack {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<NodeId>,
        /// Why the branch failed, for methods that learn from typed failures
        /// (`MethodView::backtrack_causes` lists the names a method reads).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cause: Option<String>,
    },
    /// A person's change to the run's memory (edit, pin or remove an entry).
    Memory { change: crate::memory::MemoryChange },
    /// Generate more children of a node now.
    Expand { node: NodeId },
    /// Ask the evaluator again about a node (bypassing the cache).
    Reevaluate { node: NodeId },
    /// Continue the search from this node only.
    Continue { node: NodeId },
    /// Replace the run's breakpoints (see [`super::breakpoint`]; `#` in front: switched off).
    Breakpoints { set: Vec<String> },
}
