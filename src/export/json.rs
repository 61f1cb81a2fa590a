//! The tree as JSON for scripts. The shape is stable (`"format": "thoughtscope-tree"`,
//! `"version": 1`; fields are only ever added):
//!
//! ```text
//! { format, version, task, input, method, params, provider, model, simulated,
//!   complete,                      // the recording has its end line
//!   outcome: { answer, solved, solved_any, finals: [id] } | null,
//!   solution_path: [id],           // root .. the answer's node; [] without an answer
//!   totals: { llm_calls, cache_hits, failed_calls, prompt_tokens, completion_tokens, tool_calls },
//!   nodes: [ { id, parent, depth, children: [id], status, reason, thought, label,
//!              value, samples, score_note, origin, edited_from, answer,
//!              metrics: {name: number}, issues: [text], calls: [id], made_by,
//!              on_solution_path } ] ,
//!   thinking: { "<call>": [ { sample, kind, text, tokens } ] } }  // each reply's thinking, by call
//! ```
//!
//! A node's `made_by` names the call whose `thinking` came before it (a call of several
//! samples has one entry per piece, each with its sample); encrypted or redacted pieces
//! have an empty `text`. `totals.reasoning_tokens` counts the thinking apart.
//!
//! `status` is one of candidate, frontier, expanded, dropped, pruned, invalid, final,
//! solution; `reason` says why for dropped and invalid nodes (else null); `origin` is
//! root, model or human.

use serde_json::{json, Value};

use crate::engine::{NodeStatus, Origin};
use crate::session::replay::Rebuilt;
use crate::session::Session;

pub const FORMAT: &str = "thoughtscope-tree";
pub const VERSION: u32 = 1;

/// The JSON value of the export.
pub fn value(session: &Session, rebuilt: &Rebuilt) -> Value {
    let tree = rebuilt.engine.tree();
    let path = super::solution_path(rebuilt);
    let h = &session.header;
    let params = serde_json::to_value(&h.params).unwrap_or(Value::Null);
    let method = params.get("method").cloned().unwrap_or(Value::Null);
    let nodes: Vec<Value> = tree
        .nodes()
        .map(|n| {
            let reason = match &n.status {
                NodeStatus::Dropped(r) => Some(r.to_string()),
                NodeStatus::Invalid(r) => Some(r.clone()),
                _ => None,
            };
            let (origin, edited_from) = match &n.origin {
                Origin::Root => ("root", None),
                Origin::Model => ("model", None),
                Origin::Human { edited_from } => ("human", edited_from.map(|id| id.0)),
            };
            json!({
                "id": n.id.0,
                "parent": n.parent.map(|p| p.0),
                "depth": n.depth,
                "children": n.children.iter().map(|c| c.0).collect::<Vec<_>>(),
                "status": n.status.label(),
                "reason": reason,
                "thought": n.thought,
                "label": n.label,
                "value": n.score.as_ref().map(|s| s.value),
                "samples": n.score.as_ref().map(|s| s.samples.clone()).unwrap_or_default(),
                "score_note": n.score.as_ref().and_then(|s| s.note.clone()),
                "origin": origin,
                "edited_from": edited_from,
                "answer": n.answer,
                "metrics": n.metrics,
                "issues": n.issues.iter().map(|i| i.to_string()).collect::<Vec<_>>(),
                "calls": n.calls,
                "made_by": n.made_by,
                "on_solution_path": path.contains(&n.id),
            })
        })
        .collect();
    let outcome = rebuilt.engine.outcome().map(|o| {
        json!({
            "answer": o.answer,
            "solved": o.solved,
            "solved_any": o.solved_any,
            "finals": o.finals.iter().map(|f| f.0).collect::<Vec<_>>(),
        })
    });
    json!({
        "format": FORMAT,
        "version": VERSION,
        "task": h.task,
        "input": h.input,
        "method": method,
        "params": params,
        "provider": h.provider,
        "model": h.model,
        "simulated": h.simulated,
        "complete": session.complete(),
        "outcome": outcome,
        "solution_path": path.iter().map(|id| id.0).collect::<Vec<_>>(),
        "totals": rebuilt.totals,
        "nodes": nodes,
        "thinking": thinking(&rebuilt.engine),
    })
}

/// Each call's thinking, by call id: a piece per sample that thought, as the model wrote it.
fn thinking(engine: &crate::engine::Engine) -> Value {
    let mut by_call = serde_json::Map::new();
    for (call, record) in &engine.core.calls {
        let Some(Ok(reply)) = &record.reply else { continue };
        let pieces: Vec<Value> = reply
            .completions
            .iter()
            .enumerate()
            .flat_map(|(sample, c)| c.thinking.iter().map(move |t| (sample, t)))
            .map(|(sample, t)| {
                json!({
                    "sample": sample,
                    "kind": t.kind,
                    "text": t.text,
                    "tokens": crate::protocol::estimate_tokens(&t.text),
                })
            })
            .collect();
        if !pieces.is_empty() {
            by_call.insert(call.to_string(), Value::Array(pieces));
        }
    }
    Value::Object(by_call)
}

/// The export as pretty-printed JSON text.
pub fn export(session: &Session, rebuilt: &Rebuilt) -> String {
    let mut value = value(session, rebuilt);
    crate::llm::secret::redact_json(&mut value);
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    text
}
