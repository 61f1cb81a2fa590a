//! The one run loop's synchronous half: an engine, the session it records to, the
//! running totals and the stop policy. Every driver — headless, the explorer, the
//! synchronous drivers of importers and demos — feeds inputs through [`Run::feed`],
//! so counting, recording and stopping behave the same everywhere. The async half
//! ([`super::Driver`]) carries out the effects this returns.

use crate::engine::breakpoint::{self, Gauge, Hit, Seen};
use crate::engine::{Command, Effect, Engine, Event, Input, LlmReply, RunMode};
use crate::llm::config::Price;
use crate::protocol::{CallErrorKind, LlmRequest};
use crate::session::{apply_input, Applied, SessionError, SessionWriter, Totals};

use serde::{Deserialize, Serialize};

use super::headless::Budget;

/// Why a run stopped issuing calls.
#[derive(Debug, Clone, PartialEq)]
pub enum StopReason {
    /// A spending limit was reached (the text names the limit and what was spent).
    Budget(String),
    /// The server cannot be reached, or refused the key or the model: every later call would fail too.
    Fatal { unreachable: bool, message: String },
    /// The session file could not be written: going on would spend without a record.
    Recording(String),
    /// A signal asked the program to stop (Ctrl-C, `kill`).
    Interrupted(Signal),
    /// The task failed: its check program gave no verdict (it could not start, ran out of
    /// time, crashed, exited non-zero or printed no verdict). An error of the task, never a
    /// wrong answer: the text names the program and what it printed.
    Task(String),
}

/// A signal that asks a run to stop, with its conventional number (the exit code is 128 + it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal {
    pub name: &'static str,
    pub number: i32,
}

impl Signal {
    pub const HUP: Signal = Signal { name: "SIGHUP", number: 1 };
    pub const INT: Signal = Signal { name: "SIGINT", number: 2 };
    pub const QUIT: Signal = Signal { name: "SIGQUIT", number: 3 };
    pub const TERM: Signal = Signal { name: "SIGTERM", number: 15 };

    /// The exit code a program stopped by this signal conventionally ends with (130 for SIGINT).
    pub fn exit_code(&self) -> i32 {
        128 + self.number
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Budget(text) => f.write_str(text),
            StopReason::Fatal { unreachable: true, message } => write!(f, "the server is unreachable: {message}"),
            StopReason::Fatal { unreachable: false, message } => write!(f, "the server refused the call: {message}"),
            StopReason::Recording(message) => write!(f, "the session could not be written: {message}"),
            StopReason::Interrupted(signal) => write!(f, "interrupted by {signal}"),
            StopReason::Task(message) => write!(f, "the task failed: {message}"),
        }
    }
}

/// When a run stops issuing calls: budgets (over this run and what earlier runs of
/// the same batch spent) and call errors no retry can mend.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StopPolicy {
    pub budget: Budget,
    pub price: Option<Price>,
    /// Spent before this run (earlier problems of a batch), counted against the budget.
    pub spent_before: Totals,
    /// Stop on a fatal call error (auth, forbidden, not found, unreachable).
    pub stop_on_fatal: bool,
}

impl StopPolicy {
    /// The policy of a live run: stop on fatal errors, with `budget` at `price`.
    pub fn live(budget: Budget, price: Option<Price>) -> Self {
        StopPolicy { budget, price, spent_before: Totals::default(), stop_on_fatal: true }
    }

    /// Whether `input` (just counted into `totals`) ends the run's calls.
    pub fn check(&self, input: &Input, totals: &Totals) -> Option<StopReason> {
        if let Input::CheckReply(crate::engine::CheckReply { result: Err(failure), .. }) = input {
            return Some(StopReason::Task(failure.clone()));
        }
        if self.stop_on_fatal {
            if let Input::LlmReply(LlmReply { result: Err(e), .. }) = input {
                if e.kind.is_fatal() {
                    return Some(StopReason::Fatal {
                        unreachable: e.kind.is_unreachable(),
                        message: e.message.clone(),
                    });
                }
            }
        }
        let mut all = self.spent_before;
        all.add(totals);
        self.budget.exceeded(&all, self.price.as_ref()).map(StopReason::Budget)
    }
}

/// What feeding one input did.
#[derive(Debug, Default)]
pub struct Fed {
    /// Calls and cancellations for the driver (after a stop: cancellations only).
    pub effects: Vec<Effect>,
    /// What the engine reported, in order.
    pub events: Vec<Event>,
    /// The run stopped with this input: the driver must send nothing more.
    pub stopped: Option<StopReason>,
    /// The input was a command refused because the run had stopped (not given to the engine).
    pub refused: Option<String>,
    /// Breakpoints that fired on this input (see [`crate::engine::breakpoint`]).
    pub hits: Vec<Hit>,
    /// Calls this input asked for that wait with those a breakpoint held (the search is
    /// held: nothing new is sent until it runs or steps).
    pub held_back: usize,
}

/// Where a breakpoint fired in a run: after which input, at which step of the method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BreakHit {
    /// 0-based position of the input (in the run's session) it fired on.
    pub input: u64,
    /// The method's step counter then.
    pub step: usize,
    #[serde(flatten)]
    pub hit: Hit,
}

/// An engine with its recording, totals and stop policy.
pub struct Run {
    pub engine: Engine,
    writer: Option<SessionWriter>,
    pub totals: Totals,
    policy: StopPolicy,
    stopped: Option<StopReason>,
    /// The error that stopped the recording, until someone takes it.
    write_error: Option<SessionError>,
    /// The end line is written (a second `end` writes nothing).
    ended: bool,
    /// The memory changes the engine reported so far, in order (what saving the
    /// run's named memory applies if the file changed meanwhile).
    memory_changes: Vec<crate::memory::MemoryChange>,
    /// The named memory this run saves when it is over, and what it began from.
    memory_target: Option<(super::memory::RunMemory, crate::memory::Memory)>,
    /// Saving the named memory failed (the explorer keeps this until it exits and reports it).
    pub memory_error: Option<String>,
    /// Pause the search when a breakpoint fires (the explorer); otherwise they are only noted (headless).
    pub pause_on_break: bool,
    /// Calls a breakpoint kept from being sent, until the search is resumed.
    held: Vec<Effect>,
    /// A breakpoint paused the search and it has not run or stepped since: nothing new is sent.
    at_break: bool,
    /// Every breakpoint that fired, in order.
    hits: Vec<BreakHit>,
    /// Inputs given to the engine so far.
    inputs: u64,
    /// What the run found out about the server so far (see `Provider::found`), written
    /// with the end line.
    found: Vec<String>,
}

impl Run {
    pub fn new(engine: Engine, writer: Option<SessionWriter>, policy: StopPolicy) -> Self {
        Run {
            engine,
            writer,
            totals: Totals::default(),
            policy,
            stopped: None,
            write_error: None,
            ended: false,
            memory_changes: Vec::new(),
            memory_target: None,
            memory_error: None,
            pause_on_break: false,
            held: Vec::new(),
            at_break: false,
            hits: Vec::new(),
            inputs: 0,
            found: Vec::new(),
        }
    }

    /// Take what the provider has found out so far (its whole list, each time): returns
    /// the lines not seen before, which the end line will carry.
    pub fn note_found(&mut self, found: Vec<String>) -> Vec<String> {
        let new: Vec<String> = found.into_iter().filter(|f| !self.found.contains(f)).collect();
        self.found.extend(new.iter().cloned());
        new
    }

    /// What the run found out about the server so far.
    pub fn found(&self) -> &[String] {
        &self.found
    }

    /// Every breakpoint that fired so far, in order.
    pub fn break_hits(&self) -> &[BreakHit] {
        &self.hits
    }

    /// Calls held back by a breakpoint until the search resumes.
    pub fn held(&self) -> &[Effect] {
        &self.held
    }

    /// Whether the search is held at a breakpoint: paused by one and not run or stepped
    /// since. Held, a command's calls wait with the held ones instead of being sent.
    pub fn at_break(&self) -> bool {
        self.at_break
    }

    /// The ids of the held calls (asked for by the engine, not sent yet).
    pub fn held_calls(&self) -> Vec<u64> {
        self.held.iter().filter_map(Effect::call).collect()
    }

    /// The meters the breakpoints on counts read.
    fn gauge(&self, step: bool) -> Gauge {
        let t = &self.totals;
        Gauge {
            calls: t.llm_calls,
            tokens: t.prompt_tokens + t.completion_tokens,
            cost: self.policy.price.as_ref().map(|p| p.cost(t.prompt_tokens, t.completion_tokens)),
            step: if step { self.engine.view().step } else { 0 },
        }
    }

    /// Why the run stopped issuing calls, if it did.
    pub fn stopped(&self) -> Option<&StopReason> {
        self.stopped.as_ref()
    }

    pub fn writer(&self) -> Option<&SessionWriter> {
        self.writer.as_ref()
    }

    pub fn writer_mut(&mut self) -> Option<&mut SessionWriter> {
        self.writer.as_mut()
    }

    /// Record from here on to `writer` under `policy` (a fork of a replay going live).
    pub fn go_live(&mut self, writer: Option<SessionWriter>, policy: StopPolicy) {
        self.writer = writer;
        self.policy = policy;
        self.stopped = None;
    }

    /// Handle one input: count it, give it to the engine, record it with the events it
    /// caused, and apply the stop policy. `request` is the model request a reply answers.
    pub fn feed(&mut self, input: Input, request: Option<&LlmRequest>) -> Fed {
        if let Some(reason) = &self.stopped {
            if is_not_sent(&input) {
                // Failed by the driver because the run had stopped: never sent, not an input.
                return Fed::default();
            }
            if let Input::Command { command } = &input {
                if !matches!(command, Command::Pause | Command::Prune { .. } | Command::Unprune { .. }) {
                    // Anything else may ask for calls that would never be sent.
                    let refused = format!("the run has stopped ({reason}); start a new run to go on");
                    return Fed { refused: Some(refused), ..Fed::default() };
                }
            }
        }
        let watched = self.engine.breakpoints().iter().any(|b| b.enabled);
        let needs_step = self
            .engine
            .breakpoints()
            .iter()
            .any(|b| b.enabled && matches!(b.condition, breakpoint::Condition::Step(_)));
        let before = watched.then(|| self.gauge(needs_step));
        let applied = apply_input(&mut self.engine, &mut self.totals, &input);
        let index = self.inputs;
        self.inputs += 1;
        let hits = match before {
            Some(before) => {
                let after = self.gauge(needs_step);
                let seen = Seen {
                    input: &input,
                    effects: &applied.effects,
                    events: &applied.events,
                    engine: &self.engine,
                    before,
                    after,
                };
                breakpoint::check(self.engine.breakpoints(), &seen)
            }
            None => Vec::new(),
        };
        let (mut fed, newly) = self.record(&input, request, applied);
        if self.stopped.is_none() {
            let reason = newly.or_else(|| self.policy.check(&input, &self.totals));
            if let Some(reason) = reason {
                fed.stopped = Some(self.stop(reason, &mut fed));
            }
        }
        if self.stopped.is_some() {
            self.held.clear();
            self.at_break = false;
            fed.effects.retain(|e| matches!(e, Effect::Cancel { .. }));
            fed.hits = hits;
            return fed;
        }
        self.hold_or_release(&mut fed, !hits.is_empty());
        if !hits.is_empty() {
            let step = self.engine.view().step;
            self.hits.extend(hits.iter().map(|hit| BreakHit { input: index, step, hit: hit.clone() }));
            fed.hits = hits;
        }
        fed
    }

    /// Breakpoints in a paused run: a firing one keeps the calls this input asked for
    /// from being sent and pauses the engine (an input, so a replay agrees); the calls
    /// held go out when the engine runs or steps again, less any cancelled meanwhile.
    /// Until then the run is held: the calls of any other input (a person's expand,
    /// edit or backtrack) join the held ones, so nothing new passes the breakpoint.
    fn hold_or_release(&mut self, fed: &mut Fed, fired: bool) {
        if !self.pause_on_break {
            return;
        }
        let cancelled: Vec<u64> = fed
            .effects
            .iter()
            .flat_map(|e| match e {
                Effect::Cancel { calls } => calls.clone(),
                _ => Vec::new(),
            })
            .collect();
        if !cancelled.is_empty() {
            self.held.retain(|e| e.call().is_none_or(|call| !cancelled.contains(&call)));
        }
        if fired {
            let (calls, rest): (Vec<Effect>, Vec<Effect>) =
                std::mem::take(&mut fed.effects).into_iter().partition(|e| e.call().is_some());
            self.held.extend(calls);
            fed.effects = rest;
            self.at_break = true;
            if self.engine.mode() != RunMode::Paused {
                let pause = Input::command(Command::Pause);
                let applied = apply_input(&mut self.engine, &mut self.totals, &pause);
                self.inputs += 1;
                let (more, failed) = self.record(&pause, None, applied);
                fed.effects.extend(more.effects);
                fed.events.extend(more.events);
                if let Some(reason) = failed {
                    fed.stopped = Some(self.stop(reason, fed));
                    self.held.clear();
                    self.at_break = false;
                }
            }
        } else if self.engine.mode() != RunMode::Paused {
            self.at_break = false;
            let mut effects = std::mem::take(&mut self.held);
            effects.append(&mut fed.effects);
            fed.effects = effects;
        } else if self.at_break {
            // Still held: a command's calls (expand, edit, backtrack, ...) join the held ones
            // rather than go out past the breakpoint; run or step sends them all.
            let (calls, rest): (Vec<Effect>, Vec<Effect>) =
                std::mem::take(&mut fed.effects).into_iter().partition(|e| e.call().is_some());
            fed.held_back = calls.len();
            self.held.extend(calls);
            fed.effects = rest;
        }
    }

    /// Split effects into driver work and events, and record the input with its events.
    /// Returns a stop reason if the recording failed.
    fn record(&mut self, input: &Input, request: Option<&LlmRequest>, applied: Applied) -> (Fed, Option<StopReason>) {
        let fed = Fed { effects: applied.effects, events: applied.events, ..Fed::default() };
        for event in &fed.events {
            if let Event::Memory { change } = event {
                self.memory_changes.push(change.clone());
            }
        }
        let failed = match self.writer.as_mut().map(|w| w.input(input, request, &fed.events)) {
            Some(Err(e)) => {
                // What was written stays readable; nothing more is written to a failing file.
                self.writer = None;
                let reason = StopReason::Recording(e.to_string());
                self.write_error = Some(e);
                Some(reason)
            }
            _ => None,
        };
        (fed, failed)
    }

    /// Stop issuing calls because the program was asked to stop (a signal): the
    /// session gets a `stopped` record naming why. Calls already sent still land and
    /// are recorded when fed. Nothing happens if the run had already stopped.
    pub fn interrupt(&mut self, reason: StopReason) -> Fed {
        let mut fed = Fed::default();
        if self.stopped.is_none() {
            fed.stopped = Some(self.stop(reason, &mut fed));
            fed.effects.retain(|e| matches!(e, Effect::Cancel { .. }));
            self.held.clear();
            self.at_break = false;
        }
        fed
    }

    /// Stop issuing calls: pause the engine (an input, so a replay agrees) and note why.
    fn stop(&mut self, reason: StopReason, fed: &mut Fed) -> StopReason {
        self.stopped = Some(reason.clone());
        let pause = Input::command(Command::Pause);
        let applied = apply_input(&mut self.engine, &mut self.totals, &pause);
        self.inputs += 1;
        let (more, failed) = self.record(&pause, None, applied);
        fed.effects.extend(more.effects);
        fed.events.extend(more.events);
        if failed.is_none() {
            if let Some(w) = self.writer.as_mut() {
                if w.stopped(&reason.to_string()).is_err() {
                    self.writer = None;
                }
            }
        }
        reason
    }

    /// The memory changes the engine reported so far, in order.
    pub fn memory_changes(&self) -> &[crate::memory::MemoryChange] {
        &self.memory_changes
    }

    /// Start the engine from `started`, the named memory `target` as it stands, and
    /// save it there when the run is over ([`Run::take_memory_save`]). Runs that never
    /// call this (replays, forks) write no memory file.
    pub fn keep_memory(&mut self, target: super::memory::RunMemory, started: crate::memory::Memory) {
        self.engine.set_memory(Some(started.clone()));
        self.memory_changes.clear();
        self.memory_target = Some((target, started));
    }

    /// The run's memory to save, once (a second call gives None): what it began from,
    /// the changes it made and the result.
    pub fn take_memory_save(&mut self) -> Option<super::memory::PendingSave> {
        let (target, started) = self.memory_target.take()?;
        let now = self.engine.memory().cloned().unwrap_or_else(|| started.clone());
        Some(super::memory::PendingSave { target, started, changes: self.memory_changes.clone(), now })
    }

    /// The run's memory changes since the last save point, to save now, keeping the
    /// target: what is saved becomes the new starting point, so a later save (another
    /// save point, or [`Run::take_memory_save`] at the end) writes only what came after
    /// and nothing is applied twice. None when nothing changed since.
    pub fn memory_save_point(&mut self) -> Option<super::memory::PendingSave> {
        let (target, started) = self.memory_target.as_mut()?;
        if self.memory_changes.is_empty() {
            return None;
        }
        let now = self.engine.memory().cloned().unwrap_or_else(|| started.clone());
        let before = std::mem::replace(started, now.clone());
        let changes = std::mem::take(&mut self.memory_changes);
        Some(super::memory::PendingSave { target: target.clone(), started: before, changes, now })
    }

    /// The error that stopped the recording, if any (once).
    pub fn take_write_error(&mut self) -> Option<SessionError> {
        self.write_error.take()
    }

    /// Write the session's end line (totals and time), once; a failure is returned, the
    /// session keeps what it had.
    pub fn end(&mut self, wall_ms: u64) -> Result<(), SessionError> {
        self.end_in(wall_ms, None)
    }

    /// [`Run::end`] for a problem of a run of several, with where its end falls in the run.
    pub fn end_in(&mut self, wall_ms: u64, run: Option<crate::session::RunClock>) -> Result<(), SessionError> {
        match self.writer.as_mut() {
            Some(w) if !self.ended => {
                w.end(self.totals, wall_ms, run, &self.found)?;
                self.ended = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Take the engine and writer apart (for callers that keep the engine after the run).
    pub fn into_parts(self) -> (Engine, Option<SessionWriter>, Totals) {
        (self.engine, self.writer, self.totals)
    }
}

fn is_not_sent(input: &Input) -> bool {
    matches!(input, Input::LlmReply(r) if matches!(&r.result, Err(e) if e.kind == CallErrorKind::NotSent))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::CallError;

    fn failed(kind: CallErrorKind) -> Option<StopReason> {
        let input = Input::LlmReply(LlmReply { call: 1, result: Err(CallError::new(kind, "after 3 attempts")) });
        StopPolicy::live(Budget::default(), None).check(&input, &Totals::default())
    }

    /// Every live driver (run, the explorer, serve) stops through this one check: a
    /// connection lost after the retries is the server out of reach, as one never made.
    #[test]
    fn a_lost_connection_stops_a_live_run_as_unreachable_and_a_timeout_does_not() {
        for kind in [CallErrorKind::Connect, CallErrorKind::Connection] {
            let stop = failed(kind.clone());
            assert!(matches!(stop, Some(StopReason::Fatal { unreachable: true, .. })), "{kind}: {stop:?}");
            assert!(stop.unwrap().to_string().starts_with("the server is unreachable: "));
        }
        assert!(matches!(failed(CallErrorKind::Auth), Some(StopReason::Fatal { unreachable: false, .. })));
        assert_eq!(failed(CallErrorKind::Timeout), None, "a slow model is not a dead one");
        let replaying = StopPolicy::default();
        let input =
            Input::LlmReply(LlmReply { call: 1, result: Err(CallError::new(CallErrorKind::Connection, "lost")) });
        assert_eq!(replaying.check(&input, &Totals::default()), None, "a replay decides no stop of its own");
    }
}
