//! What a replay compares: the decisions, not the wording.
//!
//! A replay feeds the recorded inputs to today's engine. What decides the search is
//! compared with the record; how it was put into words is not:
//!
//! * **Decisions** (a difference means today's engine no longer reproduces the run):
//!   every call the engine makes, with its whole request (the prompt included: the reply
//!   answered that prompt); and the events that change what the search is or does —
//!   nodes added (parent and thought: later prompts are built from it), statuses (their
//!   kind: dropped, invalid, final, ...), scores, metrics, selections, backtracks, run
//!   modes, failed and dropped calls (which call, on which node), rejected commands,
//!   memory changes and the outcome.
//! * **Presentation** (a difference is counted, never a mismatch): the transcript's log
//!   lines, and the sentences that explain a decision — why a node was dropped or found
//!   invalid (unless both say it in words this version reads as the same typed reason),
//!   the message of a failed call, why a reply was dropped or a command rejected.
//!
//! A session whose decisions all come out as recorded replays exactly (or exactly but
//! for wording); one where they stop doing so at some input is played from its recorded
//! events from that input on ([`Fidelity::AsRecorded`]).

use crate::engine::tree::DropReason;
use crate::engine::{Event, NodeStatus};

/// How a replay relates to its record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Fidelity {
    /// Every decision and every line came out as recorded.
    #[default]
    Exact,
    /// Every decision came out as recorded; `lines` lines (log lines, reasons) of
    /// `inputs` inputs are worded differently today. `first` is the first of them.
    Reworded { inputs: usize, lines: usize, first: String },
    /// Today's engine decides differently from input `from` on (`why`: the first
    /// difference); from there the run is shown as recorded. Before it, `reworded`
    /// inputs differed in wording only.
    AsRecorded { from: usize, why: String, reworded: usize },
}

impl Fidelity {
    /// Today's engine reproduces every decision (whatever the wording).
    pub fn reproduces(&self) -> bool {
        !matches!(self, Fidelity::AsRecorded { .. })
    }

    /// Every decision and line as recorded.
    pub fn is_exact(&self) -> bool {
        matches!(self, Fidelity::Exact)
    }

    /// The input from which the run is shown as recorded, if it is.
    pub fn recorded_from(&self) -> Option<usize> {
        match self {
            Fidelity::AsRecorded { from, .. } => Some(*from),
            _ => None,
        }
    }

    /// One word for scripts: `exact`, `reworded`, `as_recorded`.
    pub fn kind(&self) -> &'static str {
        match self {
            Fidelity::Exact => "exact",
            Fidelity::Reworded { .. } => "reworded",
            Fidelity::AsRecorded { .. } => "as_recorded",
        }
    }

    /// Note that input `seq`'s events came out as `comparison` says (before any divergence).
    pub(super) fn note(&mut self, seq: u64, comparison: &Comparison) {
        match (comparison, &mut *self) {
            (Comparison::Same, _) => {}
            (Comparison::Reworded { lines, first }, Fidelity::Exact) => {
                *self = Fidelity::Reworded { inputs: 1, lines: *lines, first: format!("input {seq}: {first}") }
            }
            (Comparison::Reworded { lines, .. }, Fidelity::Reworded { inputs, lines: all, .. }) => {
                *inputs += 1;
                *all += lines;
            }
            (Comparison::Reworded { .. }, Fidelity::AsRecorded { reworded, .. }) => *reworded += 1,
            (Comparison::Differs(why), _) => self.diverge(seq as usize, why.clone()),
        }
    }

    /// Today's engine decides differently at input `from`.
    pub(super) fn diverge(&mut self, from: usize, why: String) {
        let reworded = match self {
            Fidelity::Exact => 0,
            Fidelity::Reworded { inputs, .. } => *inputs,
            Fidelity::AsRecorded { .. } => return,
        };
        *self = Fidelity::AsRecorded { from, why, reworded };
    }
}

impl Fidelity {
    /// The sentence a replay says about itself: how it relates to its record and, for a
    /// session shown as recorded, which program and format recorded it.
    pub fn describe(&self, header: &super::Header) -> String {
        match self {
            Fidelity::AsRecorded { .. } => format!("{}; {self}", recorded_by(header)),
            _ => self.to_string(),
        }
    }
}

/// `recorded by thoughtscope 0.1.0 (format 2)` (an earlier thoughtscope when the header does not say).
pub fn recorded_by(header: &super::Header) -> String {
    match &header.thoughtscope {
        Some(v) => format!("recorded by thoughtscope {v} (format {})", header.version),
        None => format!("recorded by an earlier thoughtscope (format {})", header.version),
    }
}

impl std::fmt::Display for Fidelity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fidelity::Exact => f.write_str("replayed exactly"),
            Fidelity::Reworded { inputs, lines, .. } => write!(
                f,
                "replayed exactly but for wording ({} of {} worded differently today)",
                crate::engine::methods::count(*lines, "line", "lines"),
                crate::engine::methods::count(*inputs, "input", "inputs")
            ),
            Fidelity::AsRecorded { from, why, .. } => {
                write!(f, "today's engine differs from input {from} on ({why}): shown as recorded from there")
            }
        }
    }
}

/// How the events today's engine emitted for one input compare with the recorded ones.
#[derive(Debug, Clone, PartialEq)]
pub enum Comparison {
    Same,
    /// The same decisions; `lines` lines worded differently (`first` says the first).
    Reworded {
        lines: usize,
        first: String,
    },
    /// A decision differs: the first difference.
    Differs(String),
}

/// Compare the events today's engine emitted for an input with the recorded ones.
pub fn compare<'a>(emitted: &[Event], recorded: impl IntoIterator<Item = &'a Event> + Clone) -> Comparison {
    if emitted.iter().eq(recorded.clone()) {
        return Comparison::Same;
    }
    let decided = |e: &&Event| !matches!(e, Event::Log { .. });
    let mine: Vec<&Event> = emitted.iter().filter(decided).collect();
    let theirs: Vec<&Event> = recorded.clone().into_iter().filter(decided).collect();
    let mut lines = 0;
    let mut first: Option<String> = None;
    for (i, (a, b)) in mine.iter().zip(&theirs).enumerate() {
        match same_decision(a, b) {
            Some(true) => {}
            Some(false) => {
                lines += 1;
                first.get_or_insert_with(|| format!("today {}, recorded {}", wording(a), wording(b)));
            }
            None => return Comparison::Differs(format!("decision {i}: today {}, recorded {}", shown(a), shown(b))),
        }
    }
    if mine.len() != theirs.len() {
        let (n, m) = (mine.len(), theirs.len());
        let extra = if n > m {
            format!("today also {}", shown(mine[m]))
        } else {
            format!("recorded also {}", shown(theirs[n]))
        };
        return Comparison::Differs(format!("{n} decisions today, {m} recorded; {extra}"));
    }
    let mine: Vec<&str> = emitted.iter().filter_map(log_text).collect();
    let theirs: Vec<&str> = recorded.into_iter().filter_map(log_text).collect();
    for (a, b) in mine.iter().zip(&theirs) {
        if a != b {
            lines += 1;
            first.get_or_insert_with(|| format!("today {a:?}, recorded {b:?}"));
        }
    }
    let (n, m) = (mine.len(), theirs.len());
    if n != m {
        lines += n.abs_diff(m);
        first.get_or_insert_with(|| format!("{n} log lines today, {m} recorded"));
    }
    Comparison::Reworded { lines, first: first.unwrap_or_default() }
}

fn log_text(e: &Event) -> Option<&str> {
    match e {
        Event::Log { text } => Some(text.as_str()),
        _ => None,
    }
}

/// Whether two events make the same decision: `Some(true)` worded alike too,
/// `Some(false)` the same decision in other words, `None` different decisions.
pub fn same_decision(a: &Event, b: &Event) -> Option<bool> {
    if a == b {
        return Some(true);
    }
    let same = match (a, b) {
        (Event::Status { id: x, status: s }, Event::Status { id: y, status: t }) => x == y && same_status(s, t),
        (Event::CallFailed { call: c, node: n, .. }, Event::CallFailed { call: d, node: m, .. }) => c == d && n == m,
        (Event::ReplyDropped { call: c, .. }, Event::ReplyDropped { call: d, .. }) => c == d,
        (Event::Rejected { .. }, Event::Rejected { .. }) => true,
        _ => false,
    };
    same.then_some(false)
}

/// The same status: the same kind, and for a dropped node the same typed reason when
/// both reasons read as one (a reason in words this version does not read is wording).
fn same_status(a: &NodeStatus, b: &NodeStatus) -> bool {
    match (a, b) {
        (NodeStatus::Dropped(x), NodeStatus::Dropped(y)) => {
            matches!(x, DropReason::Other(_)) || matches!(y, DropReason::Other(_)) || x == y
        }
        _ => a.label() == b.label(),
    }
}

/// An event as a difference names it, cut to a line's length.
fn shown(e: &Event) -> String {
    crate::safe_text::clip(&format!("{e:?}"), 160)
}

/// The words of an event that differ between two wordings of one decision.
fn wording(e: &Event) -> String {
    match e {
        Event::Status { status: NodeStatus::Dropped(r), .. } => format!("{:?}", r.to_string()),
        Event::Status { status: NodeStatus::Invalid(r), .. } => format!("{r:?}"),
        Event::CallFailed { message, .. } => format!("{message:?}"),
        Event::ReplyDropped { reason, .. } | Event::Rejected { reason } => format!("{reason:?}"),
        other => format!("{other:?}"),
    }
}
