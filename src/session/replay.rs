//! Rebuild a recorded run from its session file, with no provider at all: the
//! recorded inputs are fed to a fresh engine in order (through a `ReplayCursor`).
//! Every reply must answer a call the engine really made with the recorded request,
//! and the events must come out as recorded; any difference is reported.

use super::cursor::ReplayCursor;
use super::{Session, Totals};
use crate::engine::{Effect, Engine};
use crate::tasks::TaskError;

pub struct Rebuilt {
    pub engine: Engine,
    pub totals: Totals,
    /// Wall time of the original run, if the session recorded its end.
    pub wall_ms: u64,
    /// Where the rebuilt run differs from the record (empty for an exact replay).
    pub mismatches: Vec<String>,
    /// What was wrong with the recording (a torn last input, dropped).
    pub warnings: Vec<String>,
    pub inputs: usize,
    /// The tool calls the inputs answered (ReAct), in order, with their observations.
    pub tool_calls: Vec<RecordedToolCall>,
    /// Tool calls made and not answered by the inputs fed (a fork makes them again).
    pub pending_tools: Vec<Effect>,
}

pub use crate::tools::recorded::RecordedToolCall;

/// Feed the first `limit` inputs (all if `None`) of `session` to a new engine.
pub fn rebuild(
    session: &Session,
    prompt_dir: Option<&std::path::Path>,
    limit: Option<usize>,
) -> Result<Rebuilt, TaskError> {
    // One pass forward: no checkpoints are needed.
    let mut cursor = ReplayCursor::new(session, prompt_dir)?.with_interval(usize::MAX);
    cursor.forward(limit.unwrap_or(usize::MAX));
    Ok(cursor.into_rebuilt())
}
