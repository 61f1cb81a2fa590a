//! The replay timeline: moving the cursor, playback, and forking a live run from it.

use super::*;

impl App {
    pub(super) fn replay_move(&mut self, to: impl Fn(usize, usize) -> usize) -> Vec<Effect> {
        let Some(r) = self.replay.as_ref() else {
            self.message = Some("the timeline is for replays: thoughtscope replay FILE".into());
            return Vec::new();
        };
        let target = to(r.cursor, r.total);
        self.seek(target);
        Vec::new()
    }

    /// Show the state after the first `cursor` inputs of the replayed session.
    pub fn seek(&mut self, cursor: usize) {
        let Some(r) = self.replay.as_mut() else { return };
        let cursor = cursor.min(r.total);
        if cursor >= r.total {
            r.playing = false;
        }
        std::mem::swap(&mut self.run.engine, r.timeline.engine_mut());
        r.timeline.seek(cursor);
        std::mem::swap(&mut self.run.engine, r.timeline.engine_mut());
        r.cursor = r.timeline.position();
        let at_end = r.cursor >= r.total;
        self.run.totals = r.timeline.totals();
        // The events at any input are a prefix of those at a later one: cut or extend.
        let events = r.timeline.events();
        if self.events.len() > events.len() {
            self.events.truncate(events.len());
        } else {
            self.events.extend_from_slice(&events[self.events.len()..]);
        }
        let keep = self.selected();
        let last_added = self.events.iter().rev().find_map(|e| match e {
            Event::NodeAdded { id, .. } => Some(*id),
            _ => None,
        });
        // Following: the newest node, or at the end of a finished session its answer.
        let target = match (self.follow, at_end && self.run.engine.outcome().is_some()) {
            (true, true) => self.landing().or(last_added).unwrap_or(NodeId(0)),
            (true, false) => last_added.unwrap_or(NodeId(0)),
            (false, _) => keep,
        };
        self.select(if self.run.engine.tree().contains(target) { target } else { NodeId(0) });
        self.touch();
    }

    /// Playback: play the inputs due after `elapsed` seconds at the replay speed,
    /// carrying the fraction to the next frame (the loop passes the time; the app reads no clock).
    pub fn play_tick(&mut self, elapsed: f64) {
        let Some(r) = self.replay.as_mut() else { return };
        if !r.playing {
            return;
        }
        let due = r.carry + r.speed * elapsed.max(0.0);
        let n = due.floor();
        r.carry = due - n;
        if n >= 1.0 {
            let next = r.cursor.saturating_add(n as usize);
            self.follow = true;
            self.seek(next);
        }
    }

    /// Seconds between playback steps, if playing.
    pub fn play_interval(&self) -> Option<f64> {
        self.replay.as_ref().filter(|r| r.playing).map(|r| 1.0 / r.speed)
    }

    /// Start a live run from the replay cursor, writing a new session that names its parent.
    pub(super) fn fork(&mut self) -> Vec<Effect> {
        let Some(r) = self.replay.take() else {
            self.message = Some("fork works in a replay: it starts a live run from the cursor".into());
            return Vec::new();
        };
        let stem =
            r.session.path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "session".into());
        let path = unique_path(&self.setup.sessions_dir, &format!("{stem}-fork-{}.jsonl", r.cursor));
        match SessionWriter::fork(&path, &r.session, r.cursor) {
            Ok(w) => {
                // The budget counts the whole session, the parent's part included.
                let limits = &self.setup.limits;
                self.run.go_live(Some(w), StopPolicy::live(limits.budget, limits.price));
            }
            Err(e) => {
                self.message = Some(format!("cannot fork: {e}"));
                self.replay = Some(r);
                return Vec::new();
            }
        }
        self.header = r.session.header.clone();
        self.setup.header.params = self.header.params.clone();
        self.reset_driver = true;
        self.message = Some(format!("forked at input {} of {} into {}", r.cursor, r.total, path.display()));
        // Calls made before the fork point but not answered in it are made again.
        let mut effects: Vec<Effect> = self
            .run
            .engine
            .pending_calls()
            .into_iter()
            .filter_map(|call| {
                self.run.engine.core.calls.get(&call).map(|c| Effect::CallLlm { call, request: c.request.clone() })
            })
            .collect();
        // So are tool calls (ReAct), which the engine keeps no request for.
        let mut timeline = r.timeline;
        std::mem::swap(&mut self.run.engine, timeline.engine_mut());
        effects.extend(timeline.pending_tools());
        std::mem::swap(&mut self.run.engine, timeline.engine_mut());
        // A fork starts paused, so the person steers from here.
        effects.extend(self.feed(Input::command(Command::Pause), None));
        effects
    }
}
