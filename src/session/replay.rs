//! Rebuild a recorded run from its session file, with no provider at all: the
//! recorded inputs are fed to a fresh engine in order. Every reply must answer a
//! call the engine really made with the recorded request, and the events must come
//! out as recorded; any difference is reported.

use std::sync::Arc;

use super::{Record, Session, Totals};
use crate::engine::{Effect, Engine, Event, Input, NodeId, Task, ToolRequest, ToolResult};
use crate::tasks::{self, TaskError, TaskOptions};

pub struct Rebuilt {
    pub engine: Engine,
    pub totals: Totals,
    /// Wall time of the original run, if the session recorded its end.
    pub wall_ms: u64,
    /// Where the rebuilt run differs from the record (empty for an exact replay).
    pub mismatches: Vec<String>,
    pub inputs: usize,
    /// The tool calls the inputs answered (ReAct), in order, with their observations.
    pub tool_calls: Vec<RecordedToolCall>,
    /// Tool calls made and not answered by the inputs fed (a fork makes them again).
    pub pending_tools: Vec<Effect>,
}

/// One answered tool call: what the engine asked, for which step, and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedToolCall {
    pub tool: ToolRequest,
    /// The step the call belongs to, and the step whose tool state it continues.
    pub node: NodeId,
    pub after: NodeId,
    pub result: ToolResult,
}

/// Feed the first `limit` inputs (all if `None`) of `session` to a new engine.
pub fn rebuild(
    session: &Session,
    prompt_dir: Option<&std::path::Path>,
    limit: Option<usize>,
) -> Result<Rebuilt, TaskError> {
    let h = &session.header;
    let task: Arc<dyn Task> = tasks::for_header(h, &TaskOptions::prompts(prompt_dir))? as Arc<dyn Task>;
    let mut engine = Engine::new(task, &h.input, h.params.clone());
    let mut totals = Totals::default();
    let mut mismatches = Vec::new();
    let name = session.path.display();
    let mut recorded_events: Vec<(u64, &Event)> = Vec::new();
    for r in &session.records {
        if let Record::Event { seq, event } = r {
            recorded_events.push((*seq, event));
        }
    }
    // In a torn file the last input's events may be cut short: do not hold them against it.
    let last_seq = session.records.iter().rev().find_map(|r| match r {
        Record::Input { seq, .. } => Some(*seq),
        _ => None,
    });
    let torn = !session.warnings.is_empty();
    let mut inputs = 0;
    let mut tool_calls = Vec::new();
    let mut issued_tools: Vec<Effect> = Vec::new();
    for r in &session.records {
        let Record::Input { seq, input, request } = r else { continue };
        if limit.is_some_and(|l| inputs >= l) {
            break;
        }
        inputs += 1;
        if let Input::LlmReply(reply) = input {
            match engine.core.calls.get(&reply.call) {
                None => mismatches
                    .push(format!("{name}: input {seq} answers call {} that the engine never made", reply.call)),
                Some(made) => {
                    if let Some(req) = request {
                        if &made.request != req {
                            mismatches.push(format!(
                                "{name}: input {seq}: call {} was made with a different request",
                                reply.call
                            ));
                        }
                    }
                }
            }
        }
        totals.count(input);
        if let Input::ToolReply(reply) = input {
            let issued =
                issued_tools.iter().position(|e| matches!(e, Effect::CallTool { call, .. } if *call == reply.call));
            if let Some(Effect::CallTool { tool, node, after, .. }) = issued.map(|i| issued_tools.remove(i)) {
                tool_calls.push(RecordedToolCall { tool, node, after, result: reply.result.clone() });
            }
        }
        let effects = engine.handle(input.clone());
        issued_tools.extend(effects.iter().filter(|e| matches!(e, Effect::CallTool { .. })).cloned());
        let events: Vec<&Event> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Emit { event } => Some(event),
                _ => None,
            })
            .collect();
        let expected: Vec<&Event> = recorded_events.iter().filter(|(s, _)| s == seq).map(|(_, e)| *e).collect();
        let complete = !(torn && Some(*seq) == last_seq);
        if complete && events != expected && mismatches.len() < 20 {
            mismatches.push(format!(
                "{name}: input {seq} caused {} events, the record has {} (first difference: {})",
                events.len(),
                expected.len(),
                first_difference(&events, &expected)
            ));
        }
    }
    let wall_ms = session.end().map(|(_, w)| w).unwrap_or(0);
    let pending = engine.pending_calls();
    issued_tools.retain(|e| matches!(e, Effect::CallTool { call, .. } if pending.contains(call)));
    Ok(Rebuilt { engine, totals, wall_ms, mismatches, inputs, tool_calls, pending_tools: issued_tools })
}

fn first_difference(a: &[&Event], b: &[&Event]) -> String {
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        if x != y {
            return format!("event {i}: rebuilt {:?}, recorded {:?}", x, y);
        }
    }
    format!("event {}", a.len().min(b.len()))
}
