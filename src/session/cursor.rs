//! A replay cursor over a recorded session: the task is built once, the recorded
//! inputs are applied forward one at a time, and a clone of the engine is kept every
//! `interval` inputs so that going back costs at most `interval` inputs of work. The
//! clones share the tree's nodes and the calls' records, and the spacing is as close as
//! a memory budget allows (`interval_for`), so that a step back past a checkpoint, even
//! just after a jump, replays a few dozen inputs on a 100,000-node session.
//! An input that does much more than the others (the reply that completes a BFS step
//! drops thousands of candidates, each a status change and an event) gets a checkpoint
//! right after it, so a step back never re-applies it and a step onto it restores it:
//! a step costs a few light inputs of work wherever it lands.
//! Every reply must answer a call the engine really made with the recorded request,
//! and the events must make the decisions recorded (`fidelity`: wording may differ).
//! At the first input where they do not, today's engine no longer reproduces the run:
//! from there on the cursor applies the recorded events instead (`Engine::apply_recorded`),
//! so the timeline, tree, detail and transcript show the run as it was recorded.

use std::ops::Deref;
use std::sync::Arc;

use super::fidelity::{compare, Comparison, Fidelity};
use super::replay::{check_input, Rebuilt, RecordedToolCall};
use super::{Record, Session, Totals};
use crate::engine::{Effect, Engine, Event, Task};
use crate::tasks::{TaskError, TaskOptions};

/// The spacing of checkpoints, in inputs, unless the memory budget below needs a wider
/// one: a step back past a checkpoint replays at most this many inputs (about 0.1 ms
/// each on a 100,000-node session), so it stays well inside a frame.
pub const DEFAULT_INTERVAL: usize = 16;
/// Memory the checkpoints of one cursor may take, as estimated by `interval_for`.
const CHECKPOINT_BUDGET: u128 = 64 << 20;
/// What a checkpoint holds per node (a shared pointer per chunk of 64 nodes, and the
/// chunks the inputs after it change, copied) and per call made (an entry of the calls
/// map, node overhead included), in bytes.
const CHECKPOINT_BYTES_PER_NODE: u128 = 1;
const CHECKPOINT_BYTES_PER_CALL: u128 = 48;
/// Fine checkpoints kept between two checkpoints, in the stretch the cursor was sent to.
const FINE_PER_INTERVAL: usize = 16;
/// The closest spacing of fine checkpoints, in inputs: a checkpoint of a large tree
/// costs about as much to make and to free as replaying several inputs.
const FINE_MIN_SPACING: usize = 16;
/// An input whose recorded events number at least this many is heavy: the state right
/// after it is kept (replaying one costs about as much as a whole stretch of light ones).
pub const HEAVY_EVENTS: usize = 256;

/// The session a cursor reads: borrowed (a one-off rebuild) or shared (the explorer).
enum Source<'s> {
    Borrowed(&'s Session),
    Shared(Arc<Session>),
}

impl Deref for Source<'_> {
    type Target = Session;
    fn deref(&self) -> &Session {
        match self {
            Source::Borrowed(s) => s,
            Source::Shared(s) => s,
        }
    }
}

/// One recorded input: where it is in the records, and its recorded events
/// (a range of `ReplayCursor::events_by_seq`).
struct InputAt {
    record: usize,
    events: std::ops::Range<usize>,
}

/// The state after some inputs, as far as it cannot be recovered by truncating
/// the append-only lists.
#[derive(Clone)]
struct State {
    engine: Engine,
    totals: Totals,
    /// Tool calls made and not yet answered (ReAct).
    issued_tools: Vec<Effect>,
}

/// What the inputs produced in order (events, answered tool calls, mismatches). What
/// a run produces up to an input is a prefix of what it produces up to a later one, so
/// the cursor keeps everything it ever produced and shows the prefix up to `position`;
/// going back past a checkpoint and forward again re-walks what it already has.
struct Prefix<T> {
    items: Vec<T>,
    shown: usize,
}

impl<T> Prefix<T> {
    fn new() -> Self {
        Prefix { items: Vec::new(), shown: 0 }
    }

    fn push(&mut self, item: T) {
        if self.shown == self.items.len() {
            self.items.push(item);
        }
        self.shown += 1;
    }

    fn shown(&self) -> &[T] {
        &self.items[..self.shown]
    }
}

struct Checkpoint {
    state: State,
    events: usize,
    tool_calls: usize,
    reworded: usize,
}

/// An input whose log lines (or reasons) today's engine words differently.
#[derive(Debug, Clone)]
struct Reworded {
    seq: u64,
    lines: usize,
    first: String,
}

pub struct ReplayCursor<'s> {
    session: Source<'s>,
    task: Arc<dyn Task>,
    inputs: Vec<InputAt>,
    /// Record indices of the recorded events, ordered by the seq of their input.
    events_by_seq: Vec<usize>,
    /// In a file cut short (no end line, or a torn last line) the last input's events
    /// may be cut short: if they are, the input is dropped with a warning.
    torn_seq: Option<u64>,
    /// What the cursor found wrong with the recording (a torn input dropped, a recorded
    /// event that could not be applied).
    warnings: Vec<String>,
    /// The first input today's engine decides differently (its position), and why: from
    /// there on the recorded events are applied. A property of the file, kept once found.
    divergence: Option<(usize, String)>,
    /// The furthest position reached so far (warnings are noted once, the first time).
    furthest: usize,
    interval: usize,
    /// `checkpoints[i]` is the state after `i * interval` inputs.
    checkpoints: Vec<Checkpoint>,
    /// Finer checkpoints (every `fine_spacing()` inputs) inside the one
    /// stretch between two checkpoints where the cursor was last sent, with the position
    /// of each: stepping back there replays a few inputs, not up to `interval`.
    fine: Vec<(usize, Checkpoint)>,
    /// The stretch (`position / interval`) the fine checkpoints are kept for.
    fine_stretch: Option<usize>,
    /// Positions right after a heavy input (`heavy_positions`), where a checkpoint is
    /// kept once the cursor has walked there, and those checkpoints.
    heavy: Vec<usize>,
    /// The events that make an input heavy (`HEAVY_EVENTS` unless set), and the nodes
    /// the recording adds (for the checkpoints' memory estimate).
    heavy_events: usize,
    nodes: usize,
    heavy_checkpoints: std::collections::BTreeMap<usize, Checkpoint>,
    /// The most recorded events of one input the last `seek` applied (a heavy input
    /// re-applied shows here).
    heaviest_applied: usize,
    position: usize,
    state: State,
    /// Inputs applied in all, going forward from wherever the cursor was restored to
    /// (what seeking costs).
    applied: u64,
    /// Inputs applied since the state last shared its nodes and calls with a checkpoint.
    unshared: usize,
    /// The events the engine emitted.
    events: Prefix<Event>,
    tool_calls: Prefix<RecordedToolCall>,
    reworded: Prefix<Reworded>,
}

impl ReplayCursor<'static> {
    /// A cursor that shares the session (the explorer keeps it next to the cursor).
    pub fn shared(session: Arc<Session>, prompt_dir: Option<&std::path::Path>) -> Result<Self, TaskError> {
        let task = task_for(&session, prompt_dir)?;
        Ok(ReplayCursor::build(Source::Shared(session), task))
    }
}

impl<'s> ReplayCursor<'s> {
    /// A cursor over a borrowed session, at input 0.
    pub fn new(session: &'s Session, prompt_dir: Option<&std::path::Path>) -> Result<Self, TaskError> {
        let task = task_for(session, prompt_dir)?;
        Ok(ReplayCursor::build(Source::Borrowed(session), task))
    }

    fn build(session: Source<'s>, task: Arc<dyn Task>) -> Self {
        // Index the recorded events by input once, rather than scanning them per input.
        let mut events: Vec<(u64, usize)> = Vec::new();
        let mut nodes = 0;
        for (i, r) in session.records.iter().enumerate() {
            if let Record::Event { seq, event } = r {
                events.push((*seq, i));
                nodes += usize::from(matches!(event, Event::NodeAdded { .. }));
            }
        }
        events.sort_by_key(|(seq, _)| *seq);
        let mut inputs = Vec::new();
        let mut last_seq = None;
        for (i, r) in session.records.iter().enumerate() {
            if let Record::Input { seq, .. } = r {
                let start = events.partition_point(|(s, _)| s < seq);
                let end = events.partition_point(|(s, _)| s <= seq);
                inputs.push(InputAt { record: i, events: start..end });
                last_seq = Some(*seq);
            }
        }
        let torn_seq = if session.warnings.is_empty() && session.complete() { None } else { last_seq };
        let interval = interval_for(inputs.len(), nodes);
        let heavy = heavy_positions(&inputs, interval, nodes, HEAVY_EVENTS);
        let h = &session.header;
        let engine = h.engine(Arc::clone(&task));
        let state = State { engine, totals: Totals::default(), issued_tools: Vec::new() };
        let start = Checkpoint { state: state.clone(), events: 0, tool_calls: 0, reworded: 0 };
        ReplayCursor {
            session,
            task,
            inputs,
            events_by_seq: events.into_iter().map(|(_, i)| i).collect(),
            torn_seq,
            warnings: Vec::new(),
            divergence: None,
            furthest: 0,
            interval,
            checkpoints: vec![start],
            fine: Vec::new(),
            fine_stretch: None,
            heavy,
            heavy_events: HEAVY_EVENTS,
            nodes,
            heavy_checkpoints: Default::default(),
            heaviest_applied: 0,
            position: 0,
            state,
            applied: 0,
            unshared: 0,
            events: Prefix::new(),
            tool_calls: Prefix::new(),
            reworded: Prefix::new(),
        }
    }

    /// Keep a checkpoint every `interval` inputs (at least 1) instead of the default.
    pub fn with_interval(mut self, interval: usize) -> Self {
        self.interval = interval.max(1);
        self.reset_checkpoints()
    }

    /// Keep a checkpoint after every input with at least `events` recorded events
    /// (instead of `HEAVY_EVENTS`; `usize::MAX`: none).
    pub fn with_heavy_events(mut self, events: usize) -> Self {
        self.heavy_events = events.max(1);
        self.reset_checkpoints()
    }

    fn reset_checkpoints(mut self) -> Self {
        self.heavy = heavy_positions(&self.inputs, self.interval, self.nodes, self.heavy_events);
        self.checkpoints.truncate(1);
        self.fine.clear();
        self.fine_stretch = None;
        self.heavy_checkpoints.clear();
        let target = self.position;
        self.restore(0);
        self.forward(target);
        self
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn task(&self) -> &Arc<dyn Task> {
        &self.task
    }

    /// Inputs applied so far.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Inputs recorded.
    pub fn total(&self) -> usize {
        self.inputs.len()
    }

    pub fn interval(&self) -> usize {
        self.interval
    }

    pub fn checkpoints(&self) -> usize {
        self.checkpoints.len()
    }

    pub fn engine(&self) -> &Engine {
        &self.state.engine
    }

    /// The engine, to swap with one the caller holds (the explorer shows the cursor's
    /// engine as its own). Whatever is put here must be the engine at `position`.
    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.state.engine
    }

    pub fn totals(&self) -> Totals {
        self.state.totals
    }

    /// The events the engine emitted for the inputs applied so far.
    pub fn events(&self) -> &[Event] {
        self.events.shown()
    }

    /// Every tool call the cursor has answered, also those past its position (after it
    /// has been at the end once: the whole recording's).
    pub fn all_tool_calls(&self) -> &[RecordedToolCall] {
        &self.tool_calls.items
    }

    pub fn tool_calls(&self) -> &[RecordedToolCall] {
        self.tool_calls.shown()
    }

    /// What was wrong with the recording: an input whose events the file cuts short
    /// (found when the cursor reaches it), dropped.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// How the replay relates to its record, as far as the cursor has gone: the inputs
    /// up to `position` worded differently, and the input from which today's engine
    /// decides differently once the cursor has been there (from then on, wherever it is).
    pub fn fidelity(&self) -> Fidelity {
        let shown = self.reworded.shown();
        let mut fidelity = match shown.first() {
            None => Fidelity::Exact,
            Some(first) => Fidelity::Reworded {
                inputs: shown.len(),
                lines: shown.iter().map(|r| r.lines).sum(),
                first: format!("input {}: {}", first.seq, first.first),
            },
        };
        if let Some((from, why)) = &self.divergence {
            fidelity.diverge(*from, why.clone());
        }
        fidelity
    }

    /// The input from which the session is played as recorded, once the cursor has found
    /// it (see [`ReplayCursor::fidelity`]; this is cheap to ask after every step).
    pub fn recorded_from(&self) -> Option<usize> {
        self.divergence.as_ref().map(|(from, _)| *from)
    }

    /// Each input up to `position` that today's engine words differently, with how many
    /// lines and the first difference (for `replay --verbose`).
    pub fn reworded(&self) -> Vec<String> {
        let s = |n| crate::engine::methods::count(n, "line", "lines");
        self.reworded.shown().iter().map(|r| format!("input {}: {} ({})", r.seq, s(r.lines), r.first)).collect()
    }

    /// Tool calls made and not answered by the inputs applied (a fork makes them again).
    pub fn pending_tools(&self) -> Vec<Effect> {
        let pending = self.state.engine.pending_calls();
        let mut tools = self.state.issued_tools.clone();
        tools.retain(|e| matches!(e, Effect::CallTool { call, .. } if pending.contains(call)));
        tools
    }

    /// Apply the next `n` inputs (fewer at the end); returns how many were applied.
    pub fn forward(&mut self, n: usize) -> usize {
        let start = self.position;
        let end = self.position.saturating_add(n);
        // A torn last input is dropped when reached, so the end is re-read each time.
        while self.position < end.min(self.inputs.len()) {
            self.step();
        }
        self.position - start
    }

    /// Go to just after the first `k` inputs (clamped to the session), from the
    /// nearest checkpoint at or before `k` unless the cursor is already closer.
    pub fn seek(&mut self, k: usize) {
        let k = k.min(self.inputs.len());
        self.heaviest_applied = 0;
        // Fine checkpoints are kept in the stretch the cursor is sent to (dropped when it
        // is sent to another), and made as the cursor walks it.
        let stretch = k / self.interval;
        if self.fine_stretch != Some(stretch) {
            let old = std::mem::take(&mut self.fine);
            // Freeing them takes milliseconds on a large tree: done off this thread.
            if !old.is_empty() && self.position > self.interval {
                std::thread::spawn(move || drop(old));
            }
            self.fine_stretch = Some(stretch);
        }
        let (kept, from) = self.nearest_checkpoint(k);
        if k < self.position || self.position < from {
            self.restore_from(from, kept);
        }
        self.forward(k - self.position);
    }

    /// The checkpoint closest at or before position `k`, and its position.
    fn nearest_checkpoint(&self, k: usize) -> (Kept, usize) {
        let nearest = (k / self.interval).min(self.checkpoints.len() - 1);
        let fine = self.fine.iter().rposition(|(at, _)| *at <= k);
        let from = fine.map_or(nearest * self.interval, |f| self.fine[f].0);
        // The state right after a heavy input, if that is closer.
        let heavy = self.heavy_checkpoints.range(..=k).next_back().map(|(&at, _)| at).filter(|&at| at > from);
        match (heavy, fine) {
            (Some(at), _) => (Kept::Heavy, at),
            (None, Some(f)) => (Kept::Fine(f), from),
            (None, None) => (Kept::Coarse, nearest * self.interval),
        }
    }

    /// Inputs applied in all since the cursor was made (a seek costs what it adds).
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// The most recorded events of one input that the last `seek` applied (0: none applied).
    pub fn heaviest_applied(&self) -> usize {
        self.heaviest_applied
    }

    /// Checkpoints kept right after heavy inputs so far.
    pub fn heavy_checkpoints(&self) -> usize {
        self.heavy_checkpoints.len()
    }

    /// Fine checkpoints kept now (in the stretch the cursor was last sent to).
    pub fn fine_checkpoints(&self) -> usize {
        self.fine.len()
    }

    /// The run after the inputs applied so far, as `rebuild` reports it.
    pub fn into_rebuilt(self) -> Rebuilt {
        let pending_tools = self.pending_tools();
        let wall_ms = self.session.end().map(|(_, w)| w).unwrap_or(0);
        let fidelity = self.fidelity();
        let reworded = self.reworded();
        Rebuilt {
            engine: self.state.engine,
            totals: self.state.totals,
            wall_ms,
            fidelity,
            reworded,
            warnings: self.warnings,
            inputs: self.position,
            tool_calls: self.tool_calls.shown().to_vec(),
            pending_tools,
        }
    }

    fn restore(&mut self, i: usize) {
        self.restore_from(i * self.interval, Kept::Coarse);
    }

    /// Go back to the checkpoint at `position` (coarse, fine number `f`, or after a heavy input).
    fn restore_from(&mut self, position: usize, kept: Kept) {
        let c = match kept {
            Kept::Fine(f) => &self.fine[f].1,
            Kept::Coarse => &self.checkpoints[position / self.interval],
            Kept::Heavy => &self.heavy_checkpoints[&position],
        };
        let old = std::mem::replace(&mut self.state, c.state.clone());
        // Freeing a long run's state takes milliseconds (a pointer per node and call to
        // release, and all of it when a long playback walked past the checkpoints without
        // sharing them), so it is done off this thread; short sessions free it here.
        if self.position > self.interval || self.unshared > self.interval {
            std::thread::spawn(move || drop(old));
        }
        self.unshared = 0;
        self.events.shown = c.events;
        self.tool_calls.shown = c.tool_calls;
        self.reworded.shown = c.reworded;
        self.position = position;
    }

    /// Apply input `position`: by today's engine, checked against the record, up to the
    /// input where it decides differently; from there as recorded.
    fn step(&mut self) {
        if self.divergence.as_ref().is_some_and(|(from, _)| self.position >= *from) {
            return self.step_recorded();
        }
        let at = &self.inputs[self.position];
        let session: &Session = &self.session;
        let Record::Input { seq, input, request } = &session.records[at.record] else {
            unreachable!("inputs index Input records")
        };
        let seq = *seq;
        let name = session.path.display();
        let state = &mut self.state;
        let answered = match check_input(&state.engine, &mut state.issued_tools, input, request.as_ref()) {
            Ok(answered) => answered,
            // Nothing applied yet: the state is the one before the input.
            Err(why) => return self.diverge(why, false),
        };
        // The state before a possibly torn input, to go back to if it is dropped.
        let before = (self.torn_seq == Some(seq)).then(|| state.clone());
        // The same step a live run takes (`runtime::Run` feeds inputs through it too).
        let applied = super::apply_input(&mut state.engine, &mut state.totals, input);
        let unrecorded = super::replay::unrecorded_verdicts(&applied.effects);
        state.issued_tools.extend(applied.effects.into_iter().filter(|e| matches!(e, Effect::CallTool { .. })));
        let emitted = applied.events;
        let expected: Vec<&Event> = self.events_by_seq[at.events.clone()]
            .iter()
            .filter_map(|&r| match &session.records[r] {
                Record::Event { event, .. } => Some(event),
                _ => None,
            })
            .collect();
        let comparison = super::replay::explained(compare(&emitted, expected.iter().copied()), unrecorded);
        if let Some(before) = before.filter(|_| comparison != Comparison::Same) {
            if super::replay::is_torn(&emitted, &expected) {
                // The file ends inside this input's events (killed or out of space mid-write):
                // what it did is not all recorded, so it is left out, like a torn line.
                self.warnings.push(format!(
                    "{name}: input {seq} is torn (the file ends after {} of its {} events); dropped it",
                    expected.len(),
                    emitted.len()
                ));
                self.state = before;
                self.inputs.truncate(self.position);
                return;
            }
        }
        match comparison {
            Comparison::Same => {}
            Comparison::Reworded { lines, first } => self.reworded.push(Reworded { seq, lines, first }),
            Comparison::Differs(why) => return self.diverge(why, true),
        }
        if let Some(call) = answered {
            self.tool_calls.push(call);
        }
        for event in emitted {
            self.events.push(event);
        }
        self.stepped(at_events(&self.inputs[self.position]));
    }

    /// Today's engine decides input `position` differently (`why`): from here the run is
    /// played as recorded. `applied`: the engine has taken the input already, so the
    /// state before it is restored first (from a checkpoint, the inputs before it again).
    fn diverge(&mut self, why: String, applied: bool) {
        let at = self.position;
        self.divergence = Some((at, why));
        if applied {
            let (kept, from) = self.nearest_checkpoint(at);
            self.restore_from(from, kept);
            self.forward(at - self.position);
        }
        self.step_recorded();
    }

    /// Apply input `position` as recorded: its recorded events, not today's engine's.
    fn step_recorded(&mut self) {
        let at = &self.inputs[self.position];
        let session: &Session = &self.session;
        let Record::Input { seq, input, request } = &session.records[at.record] else {
            unreachable!("inputs index Input records")
        };
        let events: Vec<Event> = self.events_by_seq[at.events.clone()]
            .iter()
            .filter_map(|&r| match &session.records[r] {
                Record::Event { event, .. } => Some(event.clone()),
                _ => None,
            })
            .collect();
        let state = &mut self.state;
        state.totals.count(input);
        let problems = state.engine.apply_recorded(input, request.as_ref(), &events);
        // A tool call today's engine made before the divergence, answered here.
        if let crate::engine::Input::ToolReply(reply) = input {
            let issued = state
                .issued_tools
                .iter()
                .position(|e| matches!(e, Effect::CallTool { call, .. } if *call == reply.call));
            if let Some(Effect::CallTool { tool, node, after, .. }) = issued.map(|i| state.issued_tools.remove(i)) {
                self.tool_calls.push(RecordedToolCall { tool, node, after, result: reply.result.clone() });
            }
        }
        if self.position >= self.furthest {
            let name = session.path.display();
            self.warnings.extend(problems.into_iter().map(|p| format!("{name}: input {seq} (as recorded): {p}")));
        }
        for event in events {
            self.events.push(event);
        }
        self.stepped(at_events(&self.inputs[self.position]));
    }

    /// After an input (`events` recorded events) is applied: move on, and keep a
    /// checkpoint where one is due.
    fn stepped(&mut self, events: usize) {
        self.position += 1;
        self.furthest = self.furthest.max(self.position);
        self.applied += 1;
        self.unshared += 1;
        self.heaviest_applied = self.heaviest_applied.max(events);
        let heavy = self.heavy.binary_search(&self.position).is_ok();
        if heavy && !self.heavy_checkpoints.contains_key(&self.position) {
            self.unshared = 0;
            let checkpoint = self.checkpoint();
            self.heavy_checkpoints.insert(self.position, checkpoint);
        } else if self.position % self.interval == 0 && self.position / self.interval == self.checkpoints.len() {
            self.unshared = 0;
            let checkpoint = self.checkpoint();
            self.checkpoints.push(checkpoint);
        } else if self.fine_stretch == Some(self.position / self.interval)
            && self.position % self.fine_spacing() == 0
            && self.position % self.interval != 0
            && self.fine.last().is_none_or(|(at, _)| *at < self.position)
        {
            self.unshared = 0;
            let checkpoint = self.checkpoint();
            self.fine.push((self.position, checkpoint));
        }
    }
}

/// The number of recorded events of an input.
fn at_events(at: &InputAt) -> usize {
    at.events.len()
}

impl ReplayCursor<'_> {
    /// The spacing of fine checkpoints (at least `FINE_MIN_SPACING`, so between
    /// checkpoints that close there are few or none).
    fn fine_spacing(&self) -> usize {
        (self.interval / FINE_PER_INTERVAL).max(FINE_MIN_SPACING)
    }

    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            state: self.state.clone(),
            events: self.events.shown,
            tool_calls: self.tool_calls.shown,
            reworded: self.reworded.shown,
        }
    }
}

/// The spacing of checkpoints for a session of `inputs` inputs adding `nodes` nodes:
/// `DEFAULT_INTERVAL`, or wider where checkpoints that close would take more than
/// `CHECKPOINT_BUDGET` (each holds the tree and the calls made so far, on average
/// about half of the whole run's).
pub(super) fn interval_for(inputs: usize, nodes: usize) -> usize {
    let last = nodes as u128 * CHECKPOINT_BYTES_PER_NODE + inputs as u128 * CHECKPOINT_BYTES_PER_CALL;
    let spacing = (inputs as u128 * last).div_ceil(2 * CHECKPOINT_BUDGET);
    DEFAULT_INTERVAL.max(usize::try_from(spacing).unwrap_or(usize::MAX))
}

/// Which checkpoint to restore.
enum Kept {
    Coarse,
    Fine(usize),
    Heavy,
}

/// The positions right after the inputs with at least `events` recorded events, not on a
/// checkpoint already: the heaviest ones, as many as `CHECKPOINT_BUDGET` holds of
/// checkpoints as big as the last one (`interval_for`'s estimate), in order.
fn heavy_positions(inputs: &[InputAt], interval: usize, nodes: usize, events: usize) -> Vec<usize> {
    let mut heavy: Vec<(usize, usize)> = inputs
        .iter()
        .enumerate()
        .map(|(i, at)| (i + 1, at.events.len()))
        .filter(|&(p, n)| n >= events && p % interval != 0)
        .collect();
    let last = nodes as u128 * CHECKPOINT_BYTES_PER_NODE + inputs.len() as u128 * CHECKPOINT_BYTES_PER_CALL;
    let room = usize::try_from(CHECKPOINT_BUDGET / last.max(1)).unwrap_or(usize::MAX);
    if heavy.len() > room {
        heavy.sort_by_key(|&(p, n)| (std::cmp::Reverse(n), p));
        heavy.truncate(room);
    }
    let mut positions: Vec<usize> = heavy.into_iter().map(|(p, _)| p).collect();
    positions.sort_unstable();
    positions
}

fn task_for(session: &Session, prompt_dir: Option<&std::path::Path>) -> Result<Arc<dyn Task>, TaskError> {
    Ok(session.header.build_task(&TaskOptions::prompts(prompt_dir))? as Arc<dyn Task>)
}
