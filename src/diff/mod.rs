//! Two recorded runs compared: where their inputs first diverge (parameters, a prompt,
//! a reply, a tool observation or a person's command), and how their trees differ once
//! aligned by thought — nodes only in one, the same thought scored differently or
//! ending differently — and whether their outcomes differ. Used by `thoughtscope diff`.
//!
//! Nodes are aligned by thought under paired parents (see [`align`]): the same text
//! first, then the most alike, so an edited thought still pairs with its original.

pub mod align;
pub mod rows;

use std::cell::Cell;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::engine::{Engine, Input, NodeId, SearchTree};
use crate::export::Loaded;
use crate::protocol::LlmRequest;
use crate::session::cursor::ReplayCursor;
use crate::session::Session;

thread_local! {
    static REPLAYS: Cell<usize> = const { Cell::new(0) };
}

/// Whole replays [`replay`] has made on this thread (a test counts what opening a view costs).
pub fn replays() -> usize {
    REPLAYS.with(Cell::get)
}

/// A recorded run replayed to its end, once, as a cursor a view can step back and forth;
/// the error is one line naming the file.
pub fn replay<'s>(session: &'s Session, prompts: Option<&std::path::Path>) -> Result<ReplayCursor<'s>, String> {
    let mut cursor = ReplayCursor::new(session, prompts).map_err(|e| format!("{}: {e}", session.path.display()))?;
    cursor.seek(cursor.total());
    REPLAYS.with(|n| n.set(n.get() + 1));
    Ok(cursor)
}

/// One side of a comparison: the recording and its engine after the inputs replayed.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub session: &'a Session,
    pub engine: &'a Engine,
}

impl<'a> From<&'a Loaded> for Run<'a> {
    fn from(l: &'a Loaded) -> Self {
        Run { session: &l.session, engine: &l.rebuilt.engine }
    }
}

/// A header field (task, input, model, a search parameter, a sim setting) that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    pub field: String,
    pub a: String,
    pub b: String,
}

/// What kind of input the runs first differ at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// A model call's prompt (its messages).
    Prompt,
    /// A model call's settings (n, temperature, max tokens, stop, tools).
    Request,
    /// A model's reply (or its failure).
    Reply,
    /// A tool's observation.
    ToolObservation,
    /// A task's check program's verdict (recorded; never run again).
    Verdict,
    /// A person's (or a script's) command.
    Command,
    /// One run has no more inputs.
    End,
}

impl DivergenceKind {
    pub fn label(self) -> &'static str {
        match self {
            DivergenceKind::Prompt => "prompt",
            DivergenceKind::Request => "request settings",
            DivergenceKind::Reply => "reply",
            DivergenceKind::ToolObservation => "tool observation",
            DivergenceKind::Verdict => "check verdict",
            DivergenceKind::Command => "command",
            DivergenceKind::End => "end of a run",
        }
    }
}

/// The first input (0-based) at which the recordings differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    pub input: usize,
    pub kind: DivergenceKind,
    /// Each run's input there, in a line.
    pub a: String,
    pub b: String,
    /// The first line that differs inside it (a prompt's, a reply's), if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<(String, String)>,
}

/// A node of one run that the other does not have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OnlyIn {
    pub id: usize,
    pub status: String,
    pub thought: String,
}

/// A thought both runs have, with something different about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changed {
    pub a_id: usize,
    pub b_id: usize,
    pub thought: String,
    pub a: String,
    pub b: String,
}

/// A run, in brief.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub path: String,
    pub task: String,
    pub input: String,
    pub method: String,
    pub model: String,
    pub inputs: usize,
    pub nodes: usize,
    pub answer: Option<String>,
    pub solved: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub same: bool,
    pub a: Side,
    pub b: Side,
    pub parameters: Vec<FieldChange>,
    pub first_divergence: Option<Divergence>,
    /// How the trees' nodes were paired (see [`align`]).
    pub alignment: &'static str,
    /// Nodes paired across the runs.
    pub pairs: usize,
    pub only_in_a: Vec<OnlyIn>,
    pub only_in_b: Vec<OnlyIn>,
    /// Same thought, different score.
    pub score_changes: Vec<Changed>,
    /// Same thought, different status (kept, dropped, final, solution, ...).
    pub status_changes: Vec<Changed>,
    /// Paired nodes whose thoughts differ (edited, or the most alike of their siblings):
    /// `a` and `b` are the two thoughts.
    pub thought_changes: Vec<Changed>,
    /// The runs' answers or their correctness differ.
    pub outcome_differs: bool,
}

/// Header fields that say where a file came from, not what was run.
const PROVENANCE: [&str; 4] = ["parent", "note", "source", "kind"];

fn flatten(prefix: &str, value: &Value, out: &mut BTreeMap<String, String>) {
    match value {
        // A memory snapshot is one field: its entries are not parameters.
        Value::Object(map) if prefix != "memory" => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

fn header_fields(session: &Session) -> BTreeMap<String, String> {
    let mut value = serde_json::to_value(&session.header).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        for k in PROVENANCE {
            map.remove(k);
        }
    }
    let mut out = BTreeMap::new();
    flatten("", &value, &mut out);
    // `params.method` reads better as `method`, and so on.
    out.into_iter().map(|(k, v)| (k.strip_prefix("params.").map(str::to_string).unwrap_or(k), v)).collect()
}

fn clip(text: &str) -> String {
    crate::safe_text::clip(&crate::safe_text::one_line(text), 100)
}

/// The header fields that differ, in name order.
pub fn parameters(a: &Session, b: &Session) -> Vec<FieldChange> {
    let (fa, fb) = (header_fields(a), header_fields(b));
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    let none = "(none)".to_string();
    keys.into_iter()
        .filter(|k| fa.get(*k) != fb.get(*k))
        .map(|k| FieldChange {
            field: k.clone(),
            a: clip(fa.get(k).unwrap_or(&none)),
            b: clip(fb.get(k).unwrap_or(&none)),
        })
        .collect()
}

/// An input in a line.
pub fn describe(input: &Input, request: Option<&LlmRequest>) -> String {
    match input {
        Input::Command { command } => {
            format!("command {}", serde_json::to_string(command).unwrap_or_default())
        }
        Input::LlmReply(reply) => {
            let purpose = request.map(|r| format!(" ({})", r.purpose.label())).unwrap_or_default();
            match &reply.result {
                Ok(r) => {
                    let text = r.completions.first().map(|c| c.text.as_str()).unwrap_or("");
                    let more = if r.completions.len() > 1 {
                        format!(" (+{} more)", r.completions.len() - 1)
                    } else {
                        String::new()
                    };
                    format!("reply to call {}{purpose}: {}{more}", reply.call, clip(text))
                }
                Err(e) => format!("failed call {}{purpose}: {e}", reply.call),
            }
        }
        Input::ToolReply(reply) => format!("tool reply to call {}: {}", reply.call, clip(&reply.result.text)),
        Input::CheckReply(reply) => format!("check verdict to call {}: {}", reply.call, clip(&verdict_text(reply))),
    }
}

/// A recorded check verdict as text: `correct (score 1)`, or why there was none.
fn verdict_text(reply: &crate::engine::CheckReply) -> String {
    match &reply.result {
        Ok(v) => format!("{} (score {})", if v.correct { "correct" } else { "incorrect" }, v.score),
        Err(failure) => failure.clone(),
    }
}

/// The first line where two texts differ (the shorter text's missing line reads empty).
fn first_line_diff(a: &str, b: &str) -> Option<(String, String)> {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    (0..la.len().max(lb.len())).find_map(|i| {
        let (x, y) = (la.get(i).copied().unwrap_or(""), lb.get(i).copied().unwrap_or(""));
        (x != y).then(|| (clip(x), clip(y)))
    })
}

fn prompt_text(r: &LlmRequest) -> String {
    r.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n")
}

fn reply_text(input: &Input) -> String {
    match input {
        Input::LlmReply(reply) => match &reply.result {
            // The thinking first, marked, as it came before the answer.
            Ok(r) => r
                .completions
                .iter()
                .flat_map(|c| {
                    let thought = c.thinking.iter().flat_map(|t| t.text.lines()).map(|l| format!("[thinking] {l}"));
                    thought.chain(c.text.lines().map(str::to_string))
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(e) => e.to_string(),
        },
        Input::ToolReply(reply) => reply.result.text.clone(),
        Input::CheckReply(reply) => verdict_text(reply),
        Input::Command { .. } => String::new(),
    }
}

/// What a reply says, without how long it took or whether the cache answered it.
fn reply_content(input: &Input) -> Value {
    match input {
        Input::LlmReply(reply) => match &reply.result {
            Ok(r) => serde_json::json!({"call": reply.call, "completions": r.completions}),
            Err(e) => serde_json::json!({"call": reply.call, "error": e}),
        },
        Input::ToolReply(reply) => {
            serde_json::json!({"call": reply.call, "text": reply.result.text, "ok": reply.result.ok})
        }
        Input::CheckReply(reply) => serde_json::to_value(reply).unwrap_or(Value::Null),
        Input::Command { command } => serde_json::to_value(command).unwrap_or(Value::Null),
    }
}

/// A request without the parts a model does not see (the structured context).
fn request_settings(r: &LlmRequest) -> Value {
    serde_json::json!({"n": r.n, "temperature": r.temperature, "max_tokens": r.max_tokens, "stop": r.stop,
        "nonce": r.nonce, "tools": r.tools, "purpose": r.purpose})
}

/// The first input where the recordings differ.
pub fn first_divergence(a: &Session, b: &Session) -> Option<Divergence> {
    let (ia, ib): (Vec<_>, Vec<_>) = (a.inputs().collect(), b.inputs().collect());
    for i in 0..ia.len().max(ib.len()) {
        let (x, y) = match (ia.get(i), ib.get(i)) {
            (Some(x), Some(y)) => (x, y),
            (x, y) => {
                let line = |s: Option<&(&Input, Option<&LlmRequest>)>| {
                    s.map(|(input, req)| describe(input, *req)).unwrap_or_else(|| "(no more inputs)".into())
                };
                return Some(Divergence { input: i, kind: DivergenceKind::End, a: line(x), b: line(y), detail: None });
            }
        };
        let ((input_a, req_a), (input_b, req_b)) = (*x, *y);
        let kind = match (input_a, input_b) {
            (Input::Command { .. }, _) | (_, Input::Command { .. }) => {
                (input_a != input_b).then_some(DivergenceKind::Command)
            }
            (Input::LlmReply(_), Input::LlmReply(_)) => {
                let prompt = match (req_a, req_b) {
                    (Some(ra), Some(rb)) if ra.messages != rb.messages => Some(DivergenceKind::Prompt),
                    (Some(ra), Some(rb)) if request_settings(ra) != request_settings(rb) => {
                        Some(DivergenceKind::Request)
                    }
                    (Some(_), None) | (None, Some(_)) => Some(DivergenceKind::Request),
                    _ => None,
                };
                prompt.or_else(|| (reply_content(input_a) != reply_content(input_b)).then_some(DivergenceKind::Reply))
            }
            (Input::ToolReply(_), Input::ToolReply(_)) => {
                (reply_content(input_a) != reply_content(input_b)).then_some(DivergenceKind::ToolObservation)
            }
            (Input::ToolReply(_), _) | (_, Input::ToolReply(_)) => Some(DivergenceKind::ToolObservation),
            (Input::CheckReply(_), Input::CheckReply(_)) => {
                (reply_content(input_a) != reply_content(input_b)).then_some(DivergenceKind::Verdict)
            }
            (Input::CheckReply(_), _) | (_, Input::CheckReply(_)) => Some(DivergenceKind::Verdict),
        };
        if let Some(kind) = kind {
            let detail = match kind {
                DivergenceKind::Prompt => match (req_a, req_b) {
                    (Some(ra), Some(rb)) => first_line_diff(&prompt_text(ra), &prompt_text(rb)),
                    _ => None,
                },
                DivergenceKind::Request => match (req_a, req_b) {
                    (Some(ra), Some(rb)) => Some((request_settings(ra).to_string(), request_settings(rb).to_string())),
                    _ => None,
                },
                DivergenceKind::Reply | DivergenceKind::ToolObservation | DivergenceKind::Verdict => {
                    first_line_diff(&reply_text(input_a), &reply_text(input_b))
                }
                _ => None,
            };
            return Some(Divergence {
                input: i,
                kind,
                a: describe(input_a, req_a),
                b: describe(input_b, req_b),
                detail,
            });
        }
    }
    None
}

/// Pairs of aligned nodes (A's id, B's id) in A's order, A's unpaired nodes and B's.
pub fn align(a: &SearchTree, b: &SearchTree) -> (Vec<(NodeId, NodeId)>, Vec<NodeId>, Vec<NodeId>) {
    let al = align::align(a, b);
    (al.pairs, al.only_a, al.only_b)
}

fn side(run: Run) -> Side {
    let h = &run.session.header;
    let outcome = run.engine.outcome();
    Side {
        path: run.session.path.display().to_string(),
        task: h.task.clone(),
        input: h.input.clone(),
        method: h.params.method.label().to_string(),
        model: h.model.clone(),
        inputs: run.session.input_count(),
        nodes: run.engine.tree().len(),
        answer: outcome.and_then(|o| o.answer.clone()),
        solved: outcome.map(|o| o.solved),
    }
}

fn only(tree: &SearchTree, ids: &[NodeId]) -> Vec<OnlyIn> {
    ids.iter()
        .map(|&id| {
            let n = tree.node(id);
            OnlyIn { id: id.0, status: n.status.label().to_string(), thought: clip(&n.thought) }
        })
        .collect()
}

fn value_text(v: Option<f64>) -> String {
    v.map(crate::engine::tree::format_value).unwrap_or_else(|| "unscored".into())
}

/// What differs between two paired nodes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Differs {
    pub thought: bool,
    pub score: bool,
    pub status: bool,
}

impl Differs {
    pub fn of(a: &SearchTree, x: NodeId, b: &SearchTree, y: NodeId) -> Differs {
        let score = match (a.value(x), b.value(y)) {
            (Some(p), Some(q)) => (p - q).abs() > 1e-9,
            (None, None) => false,
            _ => true,
        };
        Differs {
            thought: a.node(x).thought != b.node(y).thought,
            score,
            status: a.node(x).status.label() != b.node(y).status.label(),
        }
    }

    pub fn any(self) -> bool {
        self.thought || self.score || self.status
    }

    /// `thought, score` — what differs, in words.
    pub fn words(self) -> String {
        let parts: Vec<&str> = [(self.thought, "thought"), (self.score, "score"), (self.status, "status")]
            .into_iter()
            .filter_map(|(on, word)| on.then_some(word))
            .collect();
        parts.join(", ")
    }
}

/// Compare two loaded runs.
pub fn diff(a: &Loaded, b: &Loaded) -> Diff {
    diff_runs(a.into(), b.into())
}

/// Compare two runs, each a recording and its engine after the inputs replayed.
pub fn diff_runs(a: Run, b: Run) -> Diff {
    let (ta, tb) = (a.engine.tree(), b.engine.tree());
    let (pairs, only_a, only_b) = align(ta, tb);
    let mut score_changes = Vec::new();
    let mut status_changes = Vec::new();
    let mut thought_changes = Vec::new();
    for &(x, y) in &pairs {
        let (na, nb) = (ta.node(x), tb.node(y));
        let what = Differs::of(ta, x, tb, y);
        let change = |a: String, b: String| Changed { a_id: x.0, b_id: y.0, thought: clip(&na.thought), a, b };
        if what.thought {
            thought_changes.push(change(clip(&na.thought), clip(&nb.thought)));
            continue;
        }
        if what.score {
            score_changes.push(change(value_text(ta.value(x)), value_text(tb.value(y))));
        }
        if what.status {
            status_changes.push(change(na.status.label().to_string(), nb.status.label().to_string()));
        }
    }
    let (sa, sb) = (side(a), side(b));
    let outcome_differs = sa.answer != sb.answer || sa.solved != sb.solved;
    let parameters = parameters(a.session, b.session);
    let first_divergence = first_divergence(a.session, b.session);
    let same = parameters.is_empty()
        && first_divergence.is_none()
        && only_a.is_empty()
        && only_b.is_empty()
        && score_changes.is_empty()
        && status_changes.is_empty()
        && thought_changes.is_empty()
        && !outcome_differs;
    Diff {
        same,
        alignment: align::DESCRIPTION,
        pairs: pairs.len(),
        only_in_a: only(ta, &only_a),
        only_in_b: only(tb, &only_b),
        a: sa,
        b: sb,
        parameters,
        first_divergence,
        score_changes,
        status_changes,
        thought_changes,
        outcome_differs,
    }
}

/// Most lines a text report lists of each kind of difference.
const SHOWN: usize = 8;

fn outcome_text(s: &Side) -> String {
    match (s.solved, &s.answer) {
        (None, _) => "unfinished".to_string(),
        (Some(solved), answer) => format!(
            "{} (answer {})",
            if solved { "solved" } else { "not solved" },
            answer.as_deref().map(clip).unwrap_or_else(|| "none".into())
        ),
    }
}

impl Diff {
    /// The report a person reads.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for (name, s) in [("A", &self.a), ("B", &self.b)] {
            out.push_str(&format!(
                "{name}: {} ({} {}, {}, {}; {} inputs, {} nodes)\n",
                s.path,
                s.task,
                clip(&s.input),
                s.method,
                s.model,
                s.inputs,
                s.nodes
            ));
        }
        if self.same {
            out.push_str("the runs are the same\n");
            return out;
        }
        if !self.parameters.is_empty() {
            let list: Vec<String> = self.parameters.iter().map(|c| format!("{} {} → {}", c.field, c.a, c.b)).collect();
            out.push_str(&format!("parameters: {}\n", list.join("; ")));
        }
        match &self.first_divergence {
            Some(d) => {
                out.push_str(&format!("first divergence: input {} ({})\n", d.input, d.kind.label()));
                out.push_str(&format!("  A: {}\n  B: {}\n", d.a, d.b));
                if let Some((x, y)) = &d.detail {
                    out.push_str(&format!("  first differing line:\n    A: {x}\n    B: {y}\n"));
                }
            }
            None => out.push_str("the recorded inputs are the same\n"),
        }
        let list = |out: &mut String, title: &str, items: &[OnlyIn]| {
            out.push_str(&format!("{title}: {}\n", items.len()));
            for n in items.iter().take(SHOWN) {
                out.push_str(&format!("  #{} {} {}\n", n.id, n.status, n.thought));
            }
            if items.len() > SHOWN {
                out.push_str(&format!("  … {} more\n", items.len() - SHOWN));
            }
        };
        out.push_str(&format!("aligned {} node pairs: {}\n", self.pairs, self.alignment));
        list(&mut out, "nodes only in A", &self.only_in_a);
        list(&mut out, "nodes only in B", &self.only_in_b);
        let changes = |out: &mut String, title: &str, items: &[Changed]| {
            out.push_str(&format!("{title}: {}\n", items.len()));
            for c in items.iter().take(SHOWN) {
                if c.a == c.thought {
                    out.push_str(&format!("  A#{} B#{} {} → {}\n", c.a_id, c.b_id, c.a, c.b));
                } else {
                    out.push_str(&format!("  A#{} B#{} {}: {} → {}\n", c.a_id, c.b_id, c.thought, c.a, c.b));
                }
            }
            if items.len() > SHOWN {
                out.push_str(&format!("  … {} more\n", items.len() - SHOWN));
            }
        };
        changes(&mut out, "same thought, different score", &self.score_changes);
        changes(&mut out, "same thought, different status", &self.status_changes);
        changes(&mut out, "paired, thought changed", &self.thought_changes);
        out.push_str(&format!(
            "outcome: A {}, B {}{}\n",
            outcome_text(&self.a),
            outcome_text(&self.b),
            if self.outcome_differs { " (different)" } else { " (the same)" }
        ));
        out.push_str("the runs differ\n");
        out
    }
}
