//! The session part of the explorer: the run or replay shown (its engine, header and
//! events), what starts runs (the setup), what the loop reports about the run in flight
//! (elapsed time, streamed text), the counters that say the engine shown changed, and a
//! replay's own breakpoints.

use std::collections::BTreeMap;

use super::{BreakMarks, Replay, Setup};
use crate::engine::breakpoint::Breakpoint;
use crate::engine::Event;
use crate::runtime::Run;
use crate::session::Header;

pub struct SessionState {
    pub setup: Setup,
    /// The engine with its recording, totals and stop policy: the one run loop's state.
    pub run: Run,
    /// The header of the session shown (live or replayed).
    pub header: Header,
    /// The session opened read-only, when this is a replay.
    pub replay: Option<Replay>,
    /// Everything the engine reported, for the transcript.
    pub events: Vec<Event>,
    /// Text streamed so far for calls still in flight: (call, sample) -> text.
    pub streaming: BTreeMap<(u64, u32), String>,
    /// Milliseconds since the current run started (set by the loop; the app reads no clock).
    pub elapsed_ms: u64,
    /// Where the busy clock of the next run shown starts (`u` goes on with the time the
    /// undone run had spent; a new run or an opened session starts at zero).
    pub clock_from: Option<u64>,
    /// Whether the live run's session file is one the explorer named (not `--record`'s
    /// or save-as's): removed again if the run ends with no input recorded.
    pub own_file: bool,
    /// Bumped whenever the engine shown may have changed (an input fed, a timeline seek, a
    /// new run or problem): what panes computed from the whole tree keep between frames
    /// is computed again (moving the selection keeps it).
    pub revision: u64,
    /// The engine was replaced: the driver must drop its calls.
    pub reset_driver: bool,
    /// `--nonstop`: `P` plays through captions without stopping at them, as `N` does.
    pub play_nonstop: bool,
    /// A replay's own breakpoints (`B` in a replay): where playback stops.
    pub replay_breaks: Option<Vec<Breakpoint>>,
    /// Where the replay's breakpoints fire, once computed for the current list.
    pub(crate) break_marks: Option<BreakMarks>,
}

impl SessionState {
    pub fn new(setup: Setup, run: Run, header: Header) -> SessionState {
        SessionState {
            setup,
            run,
            header,
            replay: None,
            events: Vec::new(),
            streaming: BTreeMap::new(),
            elapsed_ms: 0,
            clock_from: None,
            own_file: false,
            revision: 0,
            reset_driver: false,
            play_nonstop: false,
            replay_breaks: None,
            break_marks: None,
        }
    }

    /// A new engine is shown (a new run, or a session opened): the driver drops its
    /// calls and the clock starts again.
    pub fn engine_replaced(&mut self) {
        self.reset_driver = true;
        self.elapsed_ms = 0;
    }

    /// The busy time the run now shown starts from, taken once (see `clock_from`).
    pub fn take_clock_start(&mut self) -> u64 {
        let from = self.clock_from.take().unwrap_or(0);
        self.elapsed_ms = from;
        from
    }

    /// The engine shown may have changed.
    pub fn bump(&mut self) {
        self.revision += 1;
    }

    /// `text` arrived for `sample` of `call`.
    pub fn stream(&mut self, call: u64, sample: u32, text: &str) {
        self.streaming.entry((call, sample)).or_default().push_str(text);
    }

    /// A streamed sample starts over: whether any of its text was shown.
    pub fn restart(&mut self, call: u64, sample: u32) -> bool {
        self.streaming.remove(&(call, sample)).is_some()
    }

    /// `call`'s reply landed: its streamed text goes.
    pub fn landed(&mut self, call: u64) {
        self.streaming.retain(|(c, _), _| *c != call);
    }

    /// Whether any text is streaming in for `call`, and its samples' texts so far.
    pub fn streamed(&self, call: u64) -> impl Iterator<Item = (u32, &String)> {
        self.streaming.range((call, 0)..=(call, u32::MAX)).map(|((_, sample), text)| (*sample, text))
    }

    /// A replay's breakpoints changed: where they fire is computed again.
    pub fn set_replay_breaks(&mut self, list: Option<Vec<Breakpoint>>) {
        self.replay_breaks = list;
        self.break_marks = None;
    }
}
