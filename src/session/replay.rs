//! Rebuild a recorded run from its session file, with no provider at all: the
//! recorded inputs are fed to a fresh engine in order (through a `ReplayCursor`).
//! Every reply must answer a call the engine really made with the recorded request,
//! and the events must make the decisions recorded (see [`super::fidelity`]); from the
//! first input where they do not, the run is played from its recorded events.

use super::cursor::ReplayCursor;
use super::fidelity::{compare, Comparison, Fidelity};
use super::{Record, Session, Totals};
use crate::engine::{Effect, Engine, Task};
use crate::tasks::TaskError;
use std::sync::Arc;

pub struct Rebuilt {
    pub engine: Engine,
    pub totals: Totals,
    /// Wall time of the original run, if the session recorded its end.
    pub wall_ms: u64,
    /// How the rebuilt run relates to the record: exact, exact but for wording, or
    /// played as recorded from the input where today's engine decides differently.
    pub fidelity: Fidelity,
    /// Each input whose lines today's engine words differently (before any divergence).
    pub reworded: Vec<String>,
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

/// Today's engine after the first `k` inputs of a session, fed with no checks: what a fork
/// of a session shown as recorded continues from (the record's decisions past the input
/// where today's engine differs are not today's engine's, and it cannot go on from them).
pub struct Today {
    pub engine: Engine,
    pub totals: Totals,
    /// Tool calls made and not answered by the inputs fed (a fork makes them again).
    pub pending_tools: Vec<Effect>,
    /// The events the engine emitted, in order.
    pub events: Vec<crate::engine::Event>,
}

/// Feed the first `k` inputs of `session` to today's engine (see [`Today`]).
pub fn today(session: &Session, prompt_dir: Option<&std::path::Path>, k: usize) -> Result<Today, TaskError> {
    let task = session.header.build_task(&crate::tasks::TaskOptions::prompts(prompt_dir))?;
    let mut engine = session.header.engine(task as Arc<dyn Task>);
    let mut totals = Totals::default();
    let mut issued: Vec<Effect> = Vec::new();
    let mut events = Vec::new();
    for (input, _) in session.inputs().take(k) {
        if let crate::engine::Input::ToolReply(reply) = input {
            issued.retain(|e| !matches!(e, Effect::CallTool { call, .. } if *call == reply.call));
        }
        let applied = super::apply_input(&mut engine, &mut totals, input);
        issued.extend(applied.effects.into_iter().filter(|e| matches!(e, Effect::CallTool { .. })));
        events.extend(applied.events);
    }
    let pending = engine.pending_calls();
    issued.retain(|e| matches!(e, Effect::CallTool { call, .. } if pending.contains(call)));
    Ok(Today { engine, totals, pending_tools: issued, events })
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
    /// Where the session's end falls in its run (see [`Session::run_clock`]).
    pub run: Option<super::RunClock>,
    /// What the run found out about the server (see [`Session::found`]).
    pub found: Vec<String>,
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
/// alone. Gives the same run, fidelity and warnings as [`Session::load`] and
/// [`rebuild`]. A file that today's engine stops reproducing at some input is read a
/// second time, played as recorded from that input on; a file whose events are not each
/// right after their input (not one this program writes) is loaded whole and rebuilt
/// that way instead.
pub fn replay_file(path: &std::path::Path, prompt_dir: Option<&std::path::Path>) -> Result<Replayed, ReplayError> {
    let first = read_pass(path, prompt_dir, None)?;
    let pass = match first {
        Pass::Ungrouped => return replay_loaded(path, prompt_dir),
        Pass::Done(done) => match done.stream.divergence.clone() {
            // Again from the start: today's engine up to the input, the record from it.
            Some((from, why)) => match read_pass(path, prompt_dir, Some(from))? {
                Pass::Ungrouped => return replay_loaded(path, prompt_dir),
                Pass::Done(mut again) => {
                    again.stream.fidelity = done.stream.fidelity;
                    again.stream.fidelity.diverge(from, why);
                    again.stream.reworded = done.stream.reworded;
                    again
                }
            },
            None => done,
        },
    };
    let Done { header, load_warnings, complete, stopped, wall_ms, run, found, stream: s } = *pass;
    let pending_tools = {
        let pending = s.engine.pending_calls();
        let mut tools = s.issued_tools;
        tools.retain(|e| matches!(e, Effect::CallTool { call, .. } if pending.contains(call)));
        tools
    };
    let rebuilt = Rebuilt {
        engine: s.engine,
        totals: s.totals,
        wall_ms,
        fidelity: s.fidelity,
        reworded: s.reworded,
        warnings: s.warnings,
        inputs: s.position,
        tool_calls: s.tool_calls,
        pending_tools,
    };
    Ok(Replayed { header, load_warnings, complete, stopped, run, found, rebuilt })
}

/// A file whose records are not grouped by input: loaded whole and rebuilt by a cursor.
fn replay_loaded(path: &std::path::Path, prompt_dir: Option<&std::path::Path>) -> Result<Replayed, ReplayError> {
    let session = Session::load(path)?;
    let rebuilt = rebuild(&session, prompt_dir, None)
        .map_err(|source| ReplayError::Task { path: path.display().to_string(), source })?;
    let stopped = session.stopped().map(str::to_string);
    let complete = session.complete();
    let run = session.run_clock();
    let found = session.found().to_vec();
    Ok(Replayed { header: session.header, load_warnings: session.warnings, complete, stopped, run, found, rebuilt })
}

/// One read of a session file by [`replay_file`].
enum Pass {
    /// The records are not grouped by input.
    Ungrouped,
    /// Boxed: a rebuilt run is large.
    Done(Box<Done>),
}

/// A file read to its end (or to the divergence a first pass found).
struct Done {
    header: super::Header,
    load_warnings: Vec<String>,
    complete: bool,
    stopped: Option<String>,
    wall_ms: u64,
    run: Option<super::RunClock>,
    found: Vec<String>,
    stream: Stream,
}

/// Read the file once, applying each input as its events follow: by today's engine with
/// the checks up to `recorded_from` (or a divergence found), as recorded from there.
/// A pass that finds a divergence stops reading there.
fn read_pass(
    path: &std::path::Path,
    prompt_dir: Option<&std::path::Path>,
    recorded_from: Option<usize>,
) -> Result<Pass, ReplayError> {
    let task_err = |source| ReplayError::Task { path: path.display().to_string(), source };
    let options = crate::tasks::TaskOptions::prompts(prompt_dir);
    let mut stream: Option<Stream> = None;
    let mut failed: Option<TaskError> = None;
    let mut ungrouped = false;
    let (mut complete, mut stopped, mut wall_ms, mut run, mut found) = (false, None, 0, None, Vec::new());
    let (header, load_warnings) = super::read_records(path, |header, record| {
        let s = match &mut stream {
            Some(s) => s,
            None => match header.build_task(&options) {
                Ok(task) => stream.insert(Stream::new(path, header.engine(task as Arc<dyn Task>), recorded_from)),
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
                if s.divergence.is_some() && recorded_from.is_none() {
                    return false;
                }
                s.pending = Some(Pending { seq, input, request, events: Vec::new() });
            }
            Record::Event { seq, event } => match &mut s.pending {
                Some(p) if p.seq == seq => p.events.push(event),
                _ => {
                    ungrouped = true;
                    return false;
                }
            },
            Record::End { wall_ms: w, run: clock, found: f, .. } => {
                complete = true;
                wall_ms = w;
                run = clock;
                found = f;
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
        return Ok(Pass::Ungrouped);
    }
    let mut stream = match stream {
        Some(s) => s,
        // No records at all: the run as the header starts it.
        None => {
            let task = header.build_task(&options).map_err(task_err)?;
            Stream::new(path, header.engine(task as Arc<dyn Task>), recorded_from)
        }
    };
    // The last input may be torn in a file cut short, as the cursor judges it.
    stream.flush(!(load_warnings.is_empty() && complete));
    Ok(Pass::Done(Box::new(Done { header, load_warnings, complete, stopped, wall_ms, run, found, stream })))
}

/// An input read and not yet applied: its events may still follow.
struct Pending {
    seq: u64,
    input: crate::engine::Input,
    request: Option<crate::protocol::LlmRequest>,
    events: Vec<crate::engine::Event>,
}

/// A replay in one pass over a file: the state a [`ReplayCursor`] keeps, without
/// checkpoints or the events it shows.
struct Stream {
    name: String,
    engine: Engine,
    totals: Totals,
    issued_tools: Vec<Effect>,
    fidelity: Fidelity,
    reworded: Vec<String>,
    /// The input (position) from which the inputs are applied as recorded, if known.
    recorded_from: Option<usize>,
    /// The first input found to be decided differently, and why (a first pass stops there).
    divergence: Option<(usize, String)>,
    warnings: Vec<String>,
    tool_calls: Vec<RecordedToolCall>,
    position: usize,
    pending: Option<Pending>,
    last_seq: Option<u64>,
}

impl Stream {
    fn new(path: &std::path::Path, engine: Engine, recorded_from: Option<usize>) -> Self {
        Stream {
            name: path.display().to_string(),
            engine,
            totals: Totals::default(),
            issued_tools: Vec::new(),
            fidelity: Fidelity::Exact,
            reworded: Vec::new(),
            recorded_from,
            divergence: None,
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
        if self.recorded_from.is_some_and(|from| self.position >= from) {
            return self.flush_recorded(seq, input, request, expected);
        }
        let name = &self.name;
        let answered = match check_input(&self.engine, &mut self.issued_tools, &input, request.as_ref()) {
            Ok(answered) => answered,
            Err(why) => {
                self.divergence = Some((self.position, why));
                return;
            }
        };
        // The state before a possibly torn input, to go back to if it is dropped (taken
        // where the cursor takes it, after the answered tool call is struck off).
        let before = maybe_torn.then(|| (self.engine.clone(), self.totals, self.issued_tools.clone()));
        let applied = super::apply_input(&mut self.engine, &mut self.totals, &input);
        let unrecorded = unrecorded_verdicts(&applied.effects);
        self.issued_tools.extend(applied.effects.into_iter().filter(|e| matches!(e, Effect::CallTool { .. })));
        let emitted = applied.events;
        // A second pass has compared these inputs already.
        let comparison = if self.recorded_from.is_some() {
            Comparison::Same
        } else {
            explained(compare(&emitted, &expected), unrecorded)
        };
        if let Some((engine, totals, issued)) = before.filter(|_| comparison != Comparison::Same) {
            let expected: Vec<&crate::engine::Event> = expected.iter().collect();
            if is_torn(&emitted, &expected) {
                self.warnings.push(format!(
                    "{name}: input {seq} is torn (the file ends after {} of its {} events); dropped it",
                    expected.len(),
                    emitted.len()
                ));
                (self.engine, self.totals, self.issued_tools) = (engine, totals, issued);
                return;
            }
        }
        match &comparison {
            Comparison::Same => {}
            Comparison::Reworded { lines, first } => {
                let n = crate::engine::methods::count(*lines, "line", "lines");
                self.reworded.push(format!("input {seq}: {n} ({first})"));
                self.fidelity.note(seq, &comparison);
            }
            Comparison::Differs(why) => {
                self.divergence = Some((self.position, why.clone()));
                return;
            }
        }
        self.tool_calls.extend(answered);
        self.position += 1;
    }

    /// Apply an input as recorded (on a second pass, from the divergence on).
    fn flush_recorded(
        &mut self,
        seq: u64,
        input: crate::engine::Input,
        request: Option<crate::protocol::LlmRequest>,
        events: Vec<crate::engine::Event>,
    ) {
        self.totals.count(&input);
        let problems = self.engine.apply_recorded(&input, request.as_ref(), &events);
        let name = &self.name;
        self.warnings.extend(problems.into_iter().map(|p| format!("{name}: input {seq} (as recorded): {p}")));
        if let crate::engine::Input::ToolReply(reply) = &input {
            let issued = self
                .issued_tools
                .iter()
                .position(|e| matches!(e, Effect::CallTool { call, .. } if *call == reply.call));
            if let Some(Effect::CallTool { tool, node, after, .. }) = issued.map(|i| self.issued_tools.remove(i)) {
                self.tool_calls.push(RecordedToolCall { tool, node, after, result: reply.result.clone() });
            }
        }
        self.position += 1;
    }
}

/// The note of a session recorded before check programs' verdicts were inputs: today's
/// engine asks for a verdict (`effects` run a check program) that the session does not
/// hold, so from there it is shown as recorded, verdicts included, and the program is
/// never run. `None` when the input asks for no verdict.
pub(super) fn unrecorded_verdicts(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::RunCheck { request, .. } => Some(format!(
            "today's engine asks {} for a verdict this session did not record (it was recorded before verdicts \
             were kept): its verdicts are shown as recorded, and the program is not run",
            request.named()
        )),
        _ => None,
    })
}

/// `comparison`, with a difference that comes from a verdict the session lacks said so.
pub(super) fn explained(comparison: Comparison, unrecorded: Option<String>) -> Comparison {
    match (comparison, unrecorded) {
        (Comparison::Differs(_), Some(note)) => Comparison::Differs(note),
        (comparison, _) => comparison,
    }
}

/// Whether the recorded events of an input stop short of what the engine emitted for it
/// (the file ends inside them): fewer, and the same as far as they go (in decisions).
pub(super) fn is_torn(emitted: &[crate::engine::Event], recorded: &[&crate::engine::Event]) -> bool {
    recorded.len() < emitted.len()
        && (recorded.iter().zip(emitted).all(|(r, e)| *r == e)
            || !matches!(compare(&emitted[..recorded.len()], recorded.iter().copied()), Comparison::Differs(_)))
}

/// The checks made before an input is applied, by the cursor and by the one-pass
/// replay alike: a model reply must answer a call the engine made, with the request
/// recorded beside it (else `Err` says how today's engine differs); a tool reply strikes
/// its call off `issued_tools` and comes back as the tool call it answered.
pub(super) fn check_input(
    engine: &Engine,
    issued_tools: &mut Vec<Effect>,
    input: &crate::engine::Input,
    request: Option<&crate::protocol::LlmRequest>,
) -> Result<Option<RecordedToolCall>, String> {
    match input {
        crate::engine::Input::LlmReply(reply) => match engine.core.calls.get(&reply.call) {
            None => Err(format!("the reply answers call {}, which today's engine does not make", reply.call)),
            Some(made) if request.is_some_and(|req| &made.request != req) => {
                Err(format!("today's engine makes call {} with a different request", reply.call))
            }
            Some(_) => Ok(None),
        },
        crate::engine::Input::CheckReply(reply) => {
            match engine.core.pending_checks().iter().any(|e| e.call() == Some(reply.call)) {
                true => Ok(None),
                false => Err(format!("the verdict answers check {}, which today's engine does not ask", reply.call)),
            }
        }
        crate::engine::Input::ToolReply(reply) => {
            let issued =
                issued_tools.iter().position(|e| matches!(e, Effect::CallTool { call, .. } if *call == reply.call));
            Ok(match issued.map(|i| issued_tools.remove(i)) {
                Some(Effect::CallTool { tool, node, after, .. }) => {
                    Some(RecordedToolCall { tool, node, after, result: reply.result.clone() })
                }
                _ => None,
            })
        }
        _ => Ok(None),
    }
}
