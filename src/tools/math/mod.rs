//! Math tools for ReAct and ReTreVal on the math tasks.
//!
//! (Interface fixed for the math tasks; the full registry replaces this body.)

use std::sync::Arc;

use super::{CalculateTool, FinishTool, ToolRegistry};

/// The math tools, with `finish`.
pub fn registry() -> Arc<ToolRegistry> {
    Arc::new(ToolRegistry::new().with(CalculateTool).with(FinishTool))
}
