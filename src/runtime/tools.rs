//! Runs the engine's tool calls (ReAct) against a registry. Each trajectory step
//! continues the tool state (current page, lookup cursor) its previous step left,
//! so branches made by edits keep their own state.

use std::collections::HashMap;
use std::sync::Arc;

use crate::engine::{NodeId, ToolRequest, ToolResult};
use crate::tools::{ToolCall, ToolRegistry, ToolState};

pub struct ToolRunner {
    registry: Arc<ToolRegistry>,
    states: HashMap<NodeId, ToolState>,
}

impl ToolRunner {
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        ToolRunner { registry, states: HashMap::new() }
    }

    /// Run `tool` for step `node`, starting from the state step `after` left.
    pub async fn run(&mut self, tool: &ToolRequest, node: NodeId, after: NodeId) -> ToolResult {
        let mut state = self.states.get(&after).cloned().unwrap_or_default();
        let obs = self.registry.call(&ToolCall::new(tool.name.clone(), tool.arg.clone()), &mut state).await;
        self.states.insert(node, state);
        ToolResult { text: obs.text, ok: obs.ok, latency_ms: obs.latency_ms }
    }
}
