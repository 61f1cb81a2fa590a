//! Rebuild a recorded run from its session file, with no provider at all: the
//! recorded inputs are fed to a fresh engine in order (through a `ReplayCursor`).
//! Every reply must answer a call the engine really made with the recorded request,
//! and the events must come out as recorded; any difference is reported.

use super::cursor::ReplayCursor;
use super::{Record, Session, Totals};
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

/// What a headless replay keeps of a session file besides the rebuilt run.
pub struct Replayed {
    pub header: super::Header,
    /// Problems met while loading (a torn last line, a malformed line), as in [`Session::warnings`].
    pub load_warnings: Vec<String>,
    /// The file has its `end` line (see [`Session::complete`]).
    pub complete: bool,
    /// Why the run stopped early, if it did (see [`Session::stopped`]).
    pub stopped: Option<String>,
    pub rebuilt: Rebuilt,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Session(#[from] super::SessionError),
    #[error("{path}: {source}")]
    Task { path: String, source: TaskError },
}

/// Replay the session file at `path` to its end, headless (what `thoughtscope replay`
/// does), reading it once and keeping none of its records: each input is applied and
/// checked against its recorded events as they are read, so memory is the rebuilt run's
/// alone. Gives the same run, mismatches and warnings as [`Session::load`] and
/// [`rebuild`]; a file whose events are not each right after their input (not one this
/// program writes) is loaded whole and rebuilt that way instead.
pub fn replay_file(path: &std::path::Path, prompt_dir: Option<&std::path::Path>) -> Result<Replayed, ReplayError> {
    let task_err = |source| ReplayError::Task { path: path.display().to_string(), source };
    let mut stream: Option<Stream> = None;
    let mut failed: Option<TaskError> = None;
    let mut ungrouped = false;
    let (mut complete, mut stopped, mut wall_ms) = (false, None, 0);
    let (header, load_warnings) = super::read_records(path, |header, record| {
        let s = match &mut stream {
            Some(s) => s,
            None => match header.build_task(&crate::tasks::TaskOptions::prompts(prompt_dir)) {
                Ok(task) => {
                    stream.insert(Stream::new(path, header.engine(task as std::sync::Arc<dyn crate::engine::Task>)))
                }
                Err(e) => {
                    failed = Some(e);
                    return false;
                }
            },
        };
        match record {
            Record::Input { seq, input, request } => {
                if s.pending.as_ref().is_some_and(|p| p.seq >= seq) || s.last_seq.is_some_and(|last| last >= seq) {
                    ungrouped = true;
                    return false;
                }
                s.flush(false);
                s.pending = Some(Pending { seq, input, request, events: Vec::new() });
            }
            Record::Event { seq, event } => match &mut s.pending {
                Some(p) if p.seq == seq => p.events.push(event),
                _ => {
                    ungrouped = true;
                    return false;
                }
            },
            Record::End { wall_ms: w, .. } => {
                complete = true;
                wall_ms = w;
            }
            Record::Stopped { reason } => {
                stopped.get_or_insert(reason);
            }
            Record::Caption { .. } | Record::Header(_) => {}
        }
        true
    })?;
    if let Some(e) = failed {
        return Err(task_err(e));
    }
    if ungrouped {
        drop(stream);
        let session = Session::load(path)?;
        let rebuilt = rebuild(&session, prompt_dir, None).map_err(task_err)?;
        let stopped = session.stopped().map(str::to_string);
        let complete = session.complete();
        return Ok(Replayed { header: session.header, load_warnings: session.warnings, complete, stopped, rebuilt });
    }
    let mut s = match stream {
        Some(s) => s,
        // No records at all: the run as the header starts it.
        None => {
            let task = header.build_task(&crate::tasks::TaskOptions::prompts(prompt_dir)).map_err(task_err)?;
            Stream::new(path, header.engine(task as std::sync::Arc<dyn crate::engine::Task>))
        }
    };
    // The last input may be torn in a file cut short, as the cursor judges it.
    s.flush(!(load_warnings.is_empty() && complete));
    let pending_tools = {
        let pending = s.engine.pending_calls();
        let mut tools = std::mem::take(&mut s.issued_tools);
        tools.retain(|e| matches!(e, Effect::CallTool { call, .. } if pending.contains(call)));
        tools
    };
    let rebuilt = Rebuilt {
        engine: s.engine,
        totals: s.totals,
        wall_ms,
        mismatches: s.mismatches,
        warnings: s.warnings,
        inputs: s.position,
        tool_calls: s.tool_calls,
        pending_tools,
    };
    Ok(Replayed { header, load_warnings, complete, stopped, rebuilt })
}

/// An input read and not yet applied: its events may still follow.
struct Pending {
    seq: u64,
    input: crate::engine::Input,
    request: Option<crate::engine::LlmRequest>,
    events: Vec<crate::engine::Event>,
}

/// A replay in one pass over a file: the state a [`ReplayCursor`] keeps, without
/// checkpoints or the events it shows.
struct Stream {
    name: String,
    engine: Engine,
    totals: Totals,
    issued_tools: Vec<Effect>,
    mismatches: Vec<String>,
    warnings: Vec<String>,
    tool_calls: Vec<RecordedToolCall>,
    position: usize,
    pending: Option<Pending>,
    last_seq: Option<u64>,
}

impl Stream {
    fn new(path: &std::path::Path, engine: Engine) -> Self {
        Stream {
            name: path.display().to_string(),
            engine,
            totals: Totals::default(),
            issued_tools: Vec::new(),
            mismatches: Vec::new(),
            warnings: Vec::new(),
            tool_calls: Vec::new(),
            position: 0,
            pending: None,
            last_seq: None,
        }
    }

    /// Apply the pending input and check it against its recorded events (the checks
    /// `ReplayCursor` makes, in the same words); `maybe_torn` when it is the last input
    /// of a file cut short.
    fn flush(&mut self, maybe_torn: bool) {
        let Some(Pending { seq, input, request, events: expected }) = self.pending.take() else { return };
        self.last_seq = Some(seq);
        let name = &self.name;
        let mismatches = &mut self.mismatches;
        let answered = check_input(&self.engine, &mut self.issued_tools, name, seq, &input, request.as_ref(), |m| {
            mismatches.push(m)
        });
        // The state before a possibly torn input, to go back to if it is dropped (taken
        // where the cursor takes it, after the answered tool call is struck off).
        let before = maybe_torn.then(|| (self.engine.clone(), self.totals, self.issued_tools.clone()));
        let applied = super::apply_input(&mut self.engine, &mut self.totals, &input);
        self.issued_tools.extend(applied.effects.into_iter().filter(|e| matches!(e, Effect::CallTool { .. })));
        let emitted = applied.events;
        let same = emitted == expected;
        if let Some((engine, totals, issued)) = before.filter(|_| !same) {
            if expected.len() < emitted.len() && expected.iter().zip(&emitted).all(|(r, e)| r == e) {
                self.warnings.push(format!(
                    "{name}: input {seq} is torn (the file ends after {} of its {} events); dropped it",
                    expected.len(),
                    emitted.len()
                ));
                (self.engine, self.totals, self.issued_tools) = (engine, totals, issued);
                return;
            }
        }
        if !same && self.mismatches.len() < 20 {
            self.mismatches.push(format!(
                "{name}: input {seq} caused {} events, the record has {} (first difference: {})",
                emitted.len(),
                expected.len(),
                first_difference(&emitted, &expected)
            ));
        }
        self.tool_calls.extend(answered);
        self.position += 1;
    }
}

/// Where two lists of events first differ, for a mismatch message.
pub(super) fn first_difference<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T]) -> String {
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        if x != y {
            return format!("event {i}: rebuilt {:?}, recorded {:?}", x, y);
        }
    }
    format!("event {}", a.len().min(b.len()))
}

/// The checks made before input `seq` of session `name` is applied, by the cursor and by
/// the one-pass replay alike: a model reply must answer a call the engine made, with the
/// request recorded beside it (each difference goes to `mismatch`); a tool reply strikes
/// its call off `issued_tools` and comes back as the tool call it answered.
pub(super) fn check_input(
    engine: &Engine,
    issued_tools: &mut Vec<Effect>,
    name: &dyn std::fmt::Display,
    seq: u64,
    input: &crate::engine::Input,
    request: Option<&crate::engine::LlmRequest>,
    mut mismatch: impl FnMut(String),
) -> Option<RecordedToolCall> {
    match input {
        crate::engine::Input::LlmReply(reply) => {
            match engine.core.calls.get(&reply.call) {
                None => mismatch(format!("{name}: input {seq} answers call {} that the engine never made", reply.call)),
                Some(made) if request.is_some_and(|req| &made.request != req) => {
                    mismatch(format!("{name}: input {seq}: call {} was made with a different request", reply.call))
                }
                Some(_) => {}
            }
            None
        }
        crate::engine::Input::ToolReply(reply) => {
            let issued =
                issued_tools.iter().position(|e| matches!(e, Effect::CallTool { call, .. } if *call == reply.call));
            match issued.map(|i| issued_tools.remove(i)) {
                Some(Effect::CallTool { tool, node, after, .. }) => {
                    Some(RecordedToolCall { tool, node, after, result: reply.result.clone() })
                }
                _ => None,
            }
        }
        _ => None,
    }
}
