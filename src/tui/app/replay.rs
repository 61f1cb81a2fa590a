//! The replay timeline: moving the cursor (by input, by search step, by human action
//! or caption), playback in search steps per second, and forking a live run from it.

use super::*;
pub use crate::tui::state::Marks;

impl Marks {
    /// Walk the whole session once, noting where the method's step counter moves and
    /// where commands were given; leaves the cursor back at input 0.
    pub fn walk(timeline: &mut ReplayCursor<'static>) -> Marks {
        let total = timeline.total();
        let kinds: Vec<(bool, bool)> = timeline
            .session()
            .inputs()
            .map(|(input, _)| match input {
                Input::Command { command: Command::Step { .. } | Command::Run | Command::Pause } => (true, false),
                Input::Command { .. } => (true, true),
                _ => (false, false),
            })
            .collect();
        let mut marks = Marks { steps: vec![0], actions: Vec::new(), fidelity: Default::default() };
        let mut step = timeline.engine().view().step;
        let mut finished = timeline.engine().is_finished();
        for p in 1..=total {
            let events_before = timeline.events().len();
            if timeline.forward(1) == 0 {
                break;
            }
            let as_recorded = timeline.recorded_from().is_some_and(|from| p > from);
            let now = if as_recorded {
                // Played as recorded, the method's step counter stands still: a step ends
                // where the record says one did (a selection, a backtrack, an outcome).
                let ends = timeline.events()[events_before..]
                    .iter()
                    .any(|e| matches!(e, Event::Selected { .. } | Event::Backtracked { .. } | Event::Finished { .. }));
                step + usize::from(ends)
            } else {
                timeline.engine().view().step
            };
            let (command, steering) = kinds.get(p - 1).copied().unwrap_or((false, false));
            if steering {
                marks.actions.push(p);
            }
            let done = timeline.engine().is_finished();
            if now != step || (done && !finished) {
                // A command that starts a step shows nothing of it yet: stop just before
                // it (the previous step complete). A reply that completes a step (and
                // issues the next one) shows the completed step.
                marks.steps.push(if command && !done { p - 1 } else { p });
            }
            step = now;
            finished = done;
        }
        marks.steps.push(total);
        marks.steps.sort_unstable();
        marks.steps.dedup();
        marks.fidelity = timeline.fidelity();
        timeline.seek(0);
        marks
    }
}

/// The first of `positions` after `cursor`, else `last`.
fn next_after(positions: impl IntoIterator<Item = usize>, cursor: usize, last: usize) -> usize {
    positions.into_iter().filter(|&p| p > cursor).min().unwrap_or(last)
}

/// The last of `positions` before `cursor`, else 0.
fn previous_before(positions: impl IntoIterator<Item = usize>, cursor: usize) -> usize {
    positions.into_iter().filter(|&p| p < cursor).max().unwrap_or(0)
}

impl App {
    pub(super) fn replay_move(&mut self, to: impl Fn(usize, usize) -> usize) -> Vec<Effect> {
        let Some(r) = self.session.replay.as_ref() else {
            self.message = Some("the timeline is for replays: thoughtscope replay FILE".into());
            return Vec::new();
        };
        let target = to(r.cursor, r.total);
        self.seek(target);
        Vec::new()
    }

    /// Say at the opening of a replay that today's engine does not reproduce the session
    /// (which program recorded it, from which input it is shown as recorded).
    pub(super) fn say_fidelity(&mut self) {
        let Some(r) = self.session.replay.as_ref() else { return };
        if !r.marks.fidelity.reproduces() {
            self.message = Some(r.marks.fidelity.describe(&r.session.header));
        }
    }

    /// Move by search step: forward to the end of the next step, or back to the end of the previous one.
    pub(super) fn replay_step(&mut self, forward: bool) -> Vec<Effect> {
        let Some(r) = self.session.replay.as_ref() else { return self.replay_move(|c, _| c) };
        let steps = r.marks.steps.iter().copied();
        let to = if forward { next_after(steps, r.cursor, r.total) } else { previous_before(steps, r.cursor) };
        self.seek(to);
        Vec::new()
    }

    /// Move to the next (previous) human action or caption.
    pub(super) fn replay_mark(&mut self, forward: bool) -> Vec<Effect> {
        let Some(r) = self.session.replay.as_ref() else { return self.replay_move(|c, _| c) };
        let marks: Vec<usize> = r.marks.actions.iter().copied().chain(r.captions.iter().map(|c| c.at)).collect();
        let to = if forward { next_after(marks, r.cursor, r.total) } else { previous_before(marks, r.cursor) };
        self.seek(to);
        Vec::new()
    }

    /// Show the state after the first `cursor` inputs of the replayed session.
    pub fn seek(&mut self, cursor: usize) {
        let Some(r) = self.session.replay.as_mut() else { return };
        let cursor = cursor.min(r.total);
        if cursor >= r.total {
            r.playing = false;
        }
        let step = self.session.run.engine.view().step;
        std::mem::swap(&mut self.session.run.engine, r.timeline.engine_mut());
        r.timeline.seek(cursor);
        std::mem::swap(&mut self.session.run.engine, r.timeline.engine_mut());
        self.session.revision += 1;
        // Another step's candidates are read from the best down.
        if self.session.run.engine.view().step != step {
            self.scores.home();
        }
        r.cursor = r.timeline.position();
        let at_end = r.cursor >= r.total;
        self.session.run.totals = r.timeline.totals();
        // The events at any input are a prefix of those at a later one: cut or extend.
        let events = r.timeline.events();
        if self.session.events.len() > events.len() {
            self.session.events.truncate(events.len());
        } else {
            self.session.events.extend_from_slice(&events[self.session.events.len()..]);
        }
        let keep = self.selected();
        let last_added = self.session.events.iter().rev().find_map(|e| match e {
            Event::NodeAdded { id, .. } => Some(*id),
            _ => None,
        });
        // Following: the newest node, or at the end of a finished session its answer.
        let target = match (self.tree.following(), at_end && self.session.run.engine.outcome().is_some()) {
            (true, true) => self.landing().or(last_added).unwrap_or(NodeId(0)),
            (true, false) => last_added.unwrap_or(NodeId(0)),
            (false, _) => keep,
        };
        self.select(if self.session.run.engine.tree().contains(target) { target } else { NodeId(0) });
        self.touch();
    }

    /// Playback: play the search steps due after `elapsed` seconds at the replay speed,
    /// carrying the fraction to the next frame (the loop passes the time; the app reads no clock).
    pub fn play_tick(&mut self, elapsed: f64) {
        let Some(r) = self.session.replay.as_mut() else { return };
        if !r.playing {
            return;
        }
        let due = r.carry + r.speed * elapsed.max(0.0);
        let n = due.floor();
        r.carry = due - n;
        if n >= 1.0 {
            let from = r.cursor;
            let mut next = r.cursor;
            for _ in 0..(n as usize).min(r.marks.steps.len()) {
                next = next_after(r.marks.steps.iter().copied(), next, r.total);
            }
            self.tree.set_following(true);
            // `P` stops at the next caption on the way, until the person goes on (`N` plays through).
            let caption = if r.through_captions {
                None
            } else {
                r.captions.iter().map(|c| c.at).find(|&at| at > from && at <= next)
            };
            let next = caption.unwrap_or(next);
            // Play until a breakpoint fires on the way.
            if let Some((at, hit, count)) = self.break_between(from, next) {
                self.seek(at);
                if let Some(r) = self.session.replay.as_mut() {
                    r.playing = false;
                }
                self.show_break(&hit, count);
                return;
            }
            self.seek(next);
            if caption.is_some() {
                if let Some(r) = self.session.replay.as_mut() {
                    r.playing = false;
                }
                let play = self.keymap.key_hint(Action::ReplayPlay).unwrap_or_default();
                // With no find on, find-previous plays without stopping too (`N` by default).
                let prev = self.keymap.key_hint(Action::FindPrev).filter(|_| self.find.is_none());
                let nonstop = prev.or_else(|| self.keymap.key_hint(Action::ReplayPlayNonstop)).unwrap_or_default();
                if let Some((_, i, n)) = self.caption() {
                    self.message = Some(format!("caption {i}/{n}: {play} plays on ({nonstop} plays without stopping)"));
                }
            }
        }
    }

    /// Seconds between playback steps, if playing.
    pub fn play_interval(&self) -> Option<f64> {
        self.session.replay.as_ref().filter(|r| r.playing).map(|r| 1.0 / r.speed)
    }

    /// Start a live run from the replay cursor, writing a new session that names its parent.
    pub(super) fn fork(&mut self) -> Vec<Effect> {
        let Some(r) = self.session.replay.take() else {
            self.message = Some("fork works in a replay: it starts a live run from the cursor".into());
            return Vec::new();
        };
        let stem =
            r.session.path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "session".into());
        // A fork of a fork (each `u` is one) is named after the first session, not a chain.
        let stem = fork_base(&stem);
        let path = unique_path(&self.session.setup.sessions_dir, &format!("{stem}-fork-{}.jsonl", r.cursor));
        // Past the input where today's engine stops reproducing the session, the state
        // shown is the record's, which today's engine cannot go on from: the fork goes on
        // from today's engine fed the same inputs, and says so.
        let diverged = r.marks.fidelity.recorded_from().filter(|&from| r.cursor > from);
        let today = match diverged {
            Some(_) => match crate::session::replay::today(&r.session, self.session.setup.prompts.as_deref(), r.cursor)
            {
                Ok(today) => Some(today),
                Err(e) => {
                    self.message = Some(format!("cannot fork: {e}"));
                    self.session.replay = Some(r);
                    return Vec::new();
                }
            },
            None => None,
        };
        match SessionWriter::fork(&path, &r.session, r.cursor) {
            Ok(w) => {
                // The budget counts the whole session, the parent's part included.
                let limits = &self.session.setup.limits;
                self.session.run.go_live(Some(w), StopPolicy::live(limits.budget, limits.price));
                self.session.bump();
            }
            Err(e) => {
                self.message = Some(format!("cannot fork: {e}"));
                self.session.replay = Some(r);
                return Vec::new();
            }
        }
        self.session.header = r.session.header.clone();
        self.session.setup.header.params = self.session.header.params.clone();
        self.session.reset_driver = true;
        self.message = Some(format!("forked at input {} of {} into {}", r.cursor, r.total, path.display()));
        let mut timeline = r.timeline;
        let mut pending_tools = None;
        if let (Some(from), Some(today)) = (diverged, today) {
            self.message = Some(format!(
                "forked at input {} of {} into {}: the continuation uses today's engine, which differs from this \
                 session from input {from} on (the tree is today's engine's on the recorded inputs)",
                r.cursor,
                r.total,
                path.display()
            ));
            self.session.run.engine = today.engine;
            self.session.run.totals = today.totals;
            pending_tools = Some(today.pending_tools);
            self.session.events = today.events;
            self.session.bump();
            self.select(NodeId(0));
        }
        // Calls made before the fork point but not answered in it are made again.
        let mut effects: Vec<Effect> = self
            .session
            .run
            .engine
            .pending_calls()
            .into_iter()
            .filter_map(|call| {
                self.session
                    .run
                    .engine
                    .core
                    .calls
                    .get(&call)
                    .map(|c| Effect::CallLlm { call, request: c.request.clone() })
            })
            .collect();
        // And the task's check programs asked for and not answered: the fork runs them
        // (a live act; the transcript names each program before it first runs).
        effects.extend(self.session.run.engine.core.pending_checks());
        // So are tool calls (ReAct), which the engine keeps no request for.
        match pending_tools {
            Some(tools) => effects.extend(tools),
            None => {
                std::mem::swap(&mut self.session.run.engine, timeline.engine_mut());
                effects.extend(timeline.pending_tools());
                std::mem::swap(&mut self.session.run.engine, timeline.engine_mut());
            }
        }
        // Running a task's check programs again is a live act: the fork says so first.
        if let Some(named) = check_programs(&self.session.run.engine) {
            let message = self.message.take().unwrap_or_default();
            self.message = Some(format!("{message}; the fork runs {named} when it needs a verdict"));
        }
        // A fork starts paused, so the person steers from here.
        effects.extend(self.feed(Input::command(Command::Pause), None));
        // It pauses at breakpoints, the replay's list if the person changed it there.
        self.session.run.pause_on_break = true;
        if let Some(list) = self.session.replay_breaks.take() {
            let set: Vec<String> = list.iter().map(|b| b.text()).collect();
            let now: Vec<String> = self.session.run.engine.breakpoints().iter().map(|b| b.text()).collect();
            if set != now {
                effects.extend(self.feed(Input::command(Command::Breakpoints { set }), None));
            }
        }
        effects
    }
}

/// The task's check programs, named, if it has any (a task file's check or step command).
fn check_programs(engine: &crate::engine::Engine) -> Option<String> {
    let core = &engine.core;
    if !core.task.runs_checks() {
        return None;
    }
    let pending: Vec<String> = core
        .pending_checks()
        .iter()
        .filter_map(|e| match e {
            Effect::RunCheck { request, .. } => Some(request.named()),
            _ => None,
        })
        .collect();
    Some(match pending.first() {
        Some(first) => first.clone(),
        None => "the task's check programs".to_string(),
    })
}

/// `name` without the `-fork-N` (and a `-2`, `-3` ... after it) that forks add: the
/// session the chain of forks started from.
pub fn fork_base(stem: &str) -> &str {
    fn digits(n: &str) -> bool {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    }
    fn strip_fork(x: &str) -> Option<&str> {
        x.rsplit_once("-fork-").filter(|(head, n)| !head.is_empty() && digits(n)).map(|(head, _)| head)
    }
    let mut rest = stem;
    loop {
        if let Some(head) = strip_fork(rest) {
            rest = head;
            continue;
        }
        // A unique_path suffix after the fork's: `-fork-12-2`.
        match rest.rsplit_once('-').filter(|(_, n)| digits(n)).and_then(|(head, _)| strip_fork(head)) {
            Some(head) => rest = head,
            None => return rest,
        }
    }
}

#[cfg(test)]
mod fork_name_tests {
    #[test]
    fn a_fork_of_a_fork_is_named_after_the_first_session() {
        assert_eq!(super::fork_base("game24-900-tot-bfs"), "game24-900-tot-bfs");
        assert_eq!(super::fork_base("game24-900-tot-bfs-fork-58"), "game24-900-tot-bfs");
        assert_eq!(super::fork_base("s-fork-58-fork-56-fork-55"), "s");
        assert_eq!(super::fork_base("s-fork-58-2-fork-3"), "s");
        assert_eq!(super::fork_base("edit-rescues-2"), "edit-rescues-2");
        assert_eq!(super::fork_base("-fork-3"), "-fork-3");
    }
}
