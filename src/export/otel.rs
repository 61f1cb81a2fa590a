//! The run as OpenTelemetry spans in OTLP JSON (`resourceSpans` / `scopeSpans` /
//! `spans`, hex ids, unix-nanosecond times as strings), following the GenAI semantic
//! conventions, so a session opens in Jaeger, Phoenix or Langfuse:
//!
//! * one root span for the session (`thoughtscope.*` attributes: task, input, method,
//!   outcome);
//! * one span per tree node that calls were made for, under its nearest ancestor's;
//! * one `CLIENT` span per model call (`chat <model>`): `gen_ai.operation.name`,
//!   `gen_ai.provider.name` (and the older `gen_ai.system`), `gen_ai.request.model`,
//!   `gen_ai.request.temperature`/`max_tokens`/`choice.count`/`stop_sequences`,
//!   `gen_ai.response.model`/`finish_reasons`, `gen_ai.usage.input_tokens`/
//!   `output_tokens`, `error.type` on a failure; the prompt and the completions as the
//!   span events `gen_ai.content.prompt` (`gen_ai.prompt`) and
//!   `gen_ai.content.completion` (`gen_ai.completion`);
//! * one span per tool call (`execute_tool <name>`, `gen_ai.tool.name`).
//!
//! Sessions record each call's latency, not clock times: spans are laid out one after
//! another in recording order from `Options::start_unix_nanos`, each as long as its
//! recorded latency (at least a millisecond, so the order shows). Ids are derived from
//! the session, so exporting twice gives the same trace.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use super::Options;
use crate::engine::{Input, LlmReply, NodeId, ToolReply};
use crate::protocol::LlmRequest;
use crate::session::replay::{Rebuilt, RecordedToolCall};
use crate::session::{Header, Session};

const MS: u64 = 1_000_000;
/// OTLP span kinds and status codes (the proto enums, as numbers).
const KIND_INTERNAL: u64 = 1;
const KIND_CLIENT: u64 = 3;
const STATUS_OK: u64 = 1;
const STATUS_ERROR: u64 = 2;

/// FNV-1a, 64 bits: stable ids from text.
fn fnv(text: &str, salt: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ salt.wrapping_mul(0x100_0000_01b3);
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    // Zero ids are invalid in OTLP.
    if h == 0 {
        1
    } else {
        h
    }
}

fn string(key: &str, value: impl Into<String>) -> Value {
    json!({"key": key, "value": {"stringValue": value.into()}})
}

fn int(key: &str, value: u64) -> Value {
    json!({"key": key, "value": {"intValue": value.to_string()}})
}

fn double(key: &str, value: f64) -> Value {
    json!({"key": key, "value": {"doubleValue": value}})
}

fn boolean(key: &str, value: bool) -> Value {
    json!({"key": key, "value": {"boolValue": value}})
}

fn strings(key: &str, values: &[String]) -> Value {
    let values: Vec<Value> = values.iter().map(|v| json!({"stringValue": v})).collect();
    json!({"key": key, "value": {"arrayValue": {"values": values}}})
}

/// A span being built: times in nanoseconds.
struct Span {
    id: u64,
    parent: Option<u64>,
    name: String,
    kind: u64,
    start: u64,
    end: u64,
    attributes: Vec<Value>,
    events: Vec<Value>,
    error: Option<String>,
    /// A tree node's span (its times are its calls').
    node: bool,
}

impl Span {
    fn json(&self, trace: &str) -> Value {
        let status = match &self.error {
            Some(message) => json!({"code": STATUS_ERROR, "message": message}),
            None => json!({"code": STATUS_OK}),
        };
        let mut span = json!({
            "traceId": trace,
            "spanId": format!("{:016x}", self.id),
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": self.start.to_string(),
            "endTimeUnixNano": self.end.max(self.start).to_string(),
            "attributes": self.attributes,
            "events": self.events,
            "status": status,
        });
        if let (Some(parent), Some(obj)) = (self.parent, span.as_object_mut()) {
            obj.insert("parentSpanId".into(), json!(format!("{parent:016x}")));
        }
        span
    }
}

/// The provider's name as the conventions spell the well-known ones.
fn provider_name(provider: &str) -> String {
    match provider {
        "openai" => "openai".into(),
        "anthropic" => "anthropic".into(),
        other => other.to_string(),
    }
}

/// The messages of a request as the `gen_ai.prompt` JSON: `[{role, content}]`.
fn prompt_json(request: &LlmRequest) -> String {
    serde_json::to_string(&request.messages).unwrap_or_default()
}

pub fn export(session: &Session, rebuilt: &Rebuilt, options: &Options) -> String {
    let mut value = value(session, rebuilt, options);
    crate::llm::secret::redact_json(&mut value);
    let mut text = serde_json::to_string(&value).unwrap_or_default();
    text.push('\n');
    text
}

/// The OTLP JSON value (`TracesData`).
pub fn value(session: &Session, rebuilt: &Rebuilt, options: &Options) -> Value {
    let h = &session.header;
    let tree = rebuilt.engine.tree();
    let seed = serde_json::to_string(&h).unwrap_or_default() + &session.input_count().to_string();
    let trace = format!("{:016x}{:016x}", fnv(&seed, 1), fnv(&seed, 2));
    let span_id = |kind: &str, n: u64| fnv(&format!("{seed}\u{0}{kind}\u{0}{n}"), 3);
    let provider = provider_name(&h.provider);
    let root_id = span_id("session", 0);

    // Which node each call was made for.
    let mut call_node: HashMap<u64, NodeId> = HashMap::new();
    for n in tree.nodes() {
        for &c in &n.calls {
            call_node.insert(c, n.id);
        }
    }
    let mut spans: Vec<Span> = Vec::new();
    // Node spans by node, made when a call for the node is met.
    let mut node_spans: BTreeMap<NodeId, usize> = BTreeMap::new();
    let mut clock = options.start_unix_nanos;
    let mut tools = rebuilt.tool_calls.iter();
    let mut tool_n = 0u64;
    for (input, request) in session.inputs() {
        let (node, mut span) = match input {
            Input::LlmReply(reply) => {
                let node = call_node.get(&reply.call).copied();
                (node, llm_span(h, &provider, reply, request, span_id("call", reply.call), clock))
            }
            Input::ToolReply(reply) => {
                // The answered tool calls come in the order of their replies.
                let recorded = tools.find(|t| t.result == reply.result);
                tool_n += 1;
                (recorded.map(|t| t.node), tool_span(reply, recorded, span_id("tool", tool_n), clock))
            }
            Input::Command { .. } | Input::CheckReply(_) => continue,
        };
        clock = span.end;
        for event in &mut span.events {
            event["timeUnixNano"] = json!(if event["name"] == "gen_ai.content.prompt" {
                span.start.to_string()
            } else {
                span.end.to_string()
            });
        }
        span.parent = Some(match node {
            Some(node) => {
                let at = node_span(tree, node, &mut node_spans, &mut spans, root_id, &span_id);
                spans[at].id
            }
            None => root_id,
        });
        spans.push(span);
    }

    cover_descendants(&mut spans);

    let wall_end = options.start_unix_nanos + rebuilt.wall_ms * MS;
    let outcome = rebuilt.engine.outcome();
    let mut root_attributes = vec![
        string("thoughtscope.task", h.task.clone()),
        string("thoughtscope.input", h.input.clone()),
        string("thoughtscope.method", h.params.method.label()),
        string("gen_ai.provider.name", provider.clone()),
        string("gen_ai.request.model", h.model.clone()),
        boolean("thoughtscope.simulated", h.simulated),
        int("thoughtscope.nodes", tree.len() as u64),
        int("gen_ai.usage.input_tokens", rebuilt.totals.prompt_tokens),
        int("gen_ai.usage.output_tokens", rebuilt.totals.completion_tokens),
        boolean("thoughtscope.complete", session.complete()),
    ];
    if let Some(o) = outcome {
        root_attributes.push(boolean("thoughtscope.solved", o.solved));
        if let Some(answer) = &o.answer {
            root_attributes.push(string("thoughtscope.answer", answer.clone()));
        }
    }
    let root = Span {
        id: root_id,
        parent: None,
        name: format!("{} {}", h.params.method.label(), h.task),
        kind: KIND_INTERNAL,
        start: options.start_unix_nanos,
        end: clock.max(wall_end),
        attributes: root_attributes,
        events: Vec::new(),
        error: session.stopped().map(str::to_string),
        node: false,
    };
    let mut all = vec![root.json(&trace)];
    all.extend(spans.iter().map(|s| s.json(&trace)));
    json!({
        "resourceSpans": [{
            "resource": {"attributes": [
                string("service.name", "thoughtscope"),
                string("service.version", env!("CARGO_PKG_VERSION")),
            ]},
            "scopeSpans": [{
                "scope": {"name": "thoughtscope", "version": env!("CARGO_PKG_VERSION")},
                "spans": all,
            }],
        }]
    })
}

/// The span of one model call: its request, usage and reply as GenAI attributes and events.
fn llm_span(h: &Header, provider: &str, reply: &LlmReply, request: Option<&LlmRequest>, id: u64, clock: u64) -> Span {
    let mut attributes = vec![
        string("gen_ai.operation.name", "chat"),
        string("gen_ai.provider.name", provider.to_string()),
        string("gen_ai.system", provider.to_string()),
        string("gen_ai.request.model", h.model.clone()),
        int("thoughtscope.call.id", reply.call),
    ];
    let mut events = Vec::new();
    if let Some(r) = request {
        attributes.push(string("thoughtscope.call.purpose", r.purpose.label()));
        attributes.push(double("gen_ai.request.temperature", f64::from(r.temperature)));
        if let Some(max) = r.max_tokens {
            attributes.push(int("gen_ai.request.max_tokens", u64::from(max)));
        }
        if r.n != 1 {
            attributes.push(int("gen_ai.request.choice.count", u64::from(r.n)));
        }
        if !r.stop.is_empty() {
            attributes.push(strings("gen_ai.request.stop_sequences", &r.stop));
        }
        events.push(("gen_ai.content.prompt", vec![string("gen_ai.prompt", prompt_json(r))]));
    }
    let mut latency = 0;
    let mut error = None;
    match &reply.result {
        Ok(r) => {
            latency = r.latency_ms;
            attributes.push(string("gen_ai.response.model", r.model.clone()));
            attributes.push(int("gen_ai.usage.input_tokens", r.usage.prompt_tokens));
            attributes.push(int("gen_ai.usage.output_tokens", r.usage.completion_tokens));
            let reasons: Vec<String> =
                r.completions.iter().filter_map(|c| c.finish_reason.as_ref().map(|r| r.to_string())).collect();
            if !reasons.is_empty() {
                attributes.push(strings("gen_ai.response.finish_reasons", &reasons));
            }
            if r.cached {
                attributes.push(boolean("thoughtscope.call.cached", true));
            }
            if r.simulated {
                attributes.push(boolean("thoughtscope.call.simulated", true));
            }
            let completions = serde_json::to_string(&r.completions).unwrap_or_default();
            events.push(("gen_ai.content.completion", vec![string("gen_ai.completion", completions)]));
        }
        Err(e) => {
            attributes.push(string("error.type", e.kind.as_str()));
            error = Some(e.message.clone());
        }
    }
    let name = format!("chat {}", h.model);
    Span {
        id,
        parent: None,
        name,
        kind: KIND_CLIENT,
        start: clock,
        end: clock + latency.max(1) * MS,
        attributes,
        events: events
            .into_iter()
            .map(|(name, attributes)| json!({"timeUnixNano": "", "name": name, "attributes": attributes}))
            .collect(),
        error,
        node: false,
    }
}

/// The span of one tool call, named by the recorded call it answers (when it is known).
fn tool_span(reply: &ToolReply, recorded: Option<&RecordedToolCall>, id: u64, clock: u64) -> Span {
    let (name, arg) = match recorded {
        Some(t) => (t.tool.name.clone(), Some(t.tool.arg.clone())),
        None => ("tool".to_string(), None),
    };
    let mut attributes = vec![
        string("gen_ai.operation.name", "execute_tool"),
        string("gen_ai.tool.name", name.clone()),
        int("thoughtscope.call.id", reply.call),
        boolean("thoughtscope.tool.ok", reply.result.ok),
    ];
    if let Some(arg) = arg {
        attributes.push(string("gen_ai.tool.call.arguments", arg));
    }
    attributes.push(string("gen_ai.tool.call.result", reply.result.text.clone()));
    Span {
        id,
        parent: None,
        name: format!("execute_tool {name}"),
        kind: KIND_INTERNAL,
        start: clock,
        end: clock + reply.result.latency_ms.max(1) * MS,
        attributes,
        events: Vec::new(),
        error: (!reply.result.ok).then(|| "the tool reported a failure".to_string()),
        node: false,
    }
}

/// Node spans cover the calls under them (their own and their descendants').
fn cover_descendants(spans: &mut [Span]) {
    let index: HashMap<u64, usize> = spans.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    let mut ranges: HashMap<usize, (u64, u64)> = HashMap::new();
    for s in spans.iter().filter(|s| !s.node) {
        let mut parent = s.parent.and_then(|p| index.get(&p).copied());
        while let Some(at) = parent {
            let r = ranges.entry(at).or_insert((s.start, s.end));
            r.0 = r.0.min(s.start);
            r.1 = r.1.max(s.end);
            parent = spans[at].parent.and_then(|p| index.get(&p).copied());
        }
    }
    for (at, (start, end)) in ranges {
        spans[at].start = start;
        spans[at].end = end;
    }
}

/// The index in `spans` of `node`'s span, made (with its ancestors') if new.
fn node_span(
    tree: &crate::engine::SearchTree,
    node: NodeId,
    node_spans: &mut BTreeMap<NodeId, usize>,
    spans: &mut Vec<Span>,
    root_id: u64,
    span_id: &dyn Fn(&str, u64) -> u64,
) -> usize {
    if let Some(&at) = node_spans.get(&node) {
        return at;
    }
    let n = tree.node(node);
    // The nearest ancestor that has a span already is the parent; others are not made.
    let parent = tree.ancestors(node).into_iter().find_map(|a| node_spans.get(&a).map(|&i| spans[i].id));
    let mut attributes = vec![
        int("thoughtscope.node.id", node.0 as u64),
        int("thoughtscope.node.depth", n.depth as u64),
        string("thoughtscope.node.status", n.status.label()),
        string("thoughtscope.node.thought", n.thought.clone()),
    ];
    if let Some(v) = tree.value(node) {
        attributes.push(double("thoughtscope.node.value", v));
    }
    if let Some(answer) = &n.answer {
        attributes.push(string("thoughtscope.node.answer", answer.clone()));
    }
    spans.push(Span {
        id: span_id("node", node.0 as u64),
        parent: Some(parent.unwrap_or(root_id)),
        name: format!("node {node} {}", n.status.label()),
        kind: KIND_INTERNAL,
        start: 0,
        end: 0,
        attributes,
        events: Vec::new(),
        error: None,
        node: true,
    });
    node_spans.insert(node, spans.len() - 1);
    spans.len() - 1
}
