//! Following a session another process is writing (`replay --follow FILE`): the file is
//! read again when it grows, up to its last whole line (a line still being written is
//! not an error: it is read when it is whole), and the timeline stays at the live end
//! unless the person has moved it. Forking works as from any replay; a fork ends the
//! following (the explorer then runs its own session).

use super::*;

impl App {
    /// Follow the replayed session's file from now on (`read` bytes of it are shown).
    pub fn follow_file(&mut self, read: u64) {
        let Some(r) = &self.session.replay else { return };
        let path = r.session.path.clone();
        self.followed = Some(Following { path, seen: read, read });
        // At the live end: the inputs whose events are all written (the cursor dropped any other).
        if let Some(r) = self.session.replay.as_mut() {
            r.total = r.timeline.total();
        }
        self.seek(usize::MAX);
    }

    /// Look at the followed file again (the loop calls this every frame): when it has
    /// grown by whole lines, show them. True when the screen changed.
    pub fn follow_tick(&mut self) -> bool {
        let Some(f) = &self.followed else { return false };
        if self.session.replay.is_none() {
            // Forked, or another session opened: this explorer runs its own now.
            self.followed = None;
            return false;
        }
        let Ok(len) = std::fs::metadata(&f.path).map(|m| m.len()) else { return false };
        if len == f.seen {
            return false;
        }
        let path = f.path.clone();
        let (session, read) = match read_written(&path) {
            Ok(read) => read,
            Err(e) => {
                self.message = Some(e);
                self.followed = None;
                self.touch();
                return true;
            }
        };
        let before = self.followed.as_ref().map_or(0, |f| f.read);
        if let Some(f) = self.followed.as_mut() {
            f.seen = len;
            f.read = read;
        }
        if read == before {
            return false;
        }
        match self.reload_replay(session) {
            Ok(()) => true,
            Err(e) => {
                self.message = Some(e);
                self.touch();
                true
            }
        }
    }

    /// Show `session`, a longer copy of the replayed one: at its new end if the timeline
    /// was at the end, else where it was.
    fn reload_replay(&mut self, session: Session) -> Result<(), String> {
        let Some(r) = self.session.replay.as_ref() else { return Ok(()) };
        let (cursor, at_end) = (r.cursor, r.cursor >= r.total);
        self.show_timeline(session, |total| if at_end { total } else { cursor.min(total) })
    }

    /// Show `session` read-only with its timeline, at the input `at` picks from its total
    /// (the playback speed kept if a replay was shown).
    pub(super) fn show_timeline(&mut self, session: Session, at: impl FnOnce(usize) -> usize) -> Result<(), String> {
        let session = Arc::new(session);
        let mut timeline = ReplayCursor::shared(Arc::clone(&session), self.session.setup.prompts.as_deref())
            .map_err(|e| e.to_string())?;
        let marks = replay::Marks::walk(&mut timeline);
        // After the walk: an input whose events are still being written is left out.
        let total = timeline.total();
        // The engine at input 0, like the new cursor's: the two are swapped on every move.
        self.session.run.engine = session.header.engine(Arc::clone(timeline.task()));
        self.session.events.clear();
        let (playing, speed) = self.session.replay.as_ref().map_or((false, PLAY_SPEED), |r| (r.playing, r.speed));
        self.session.replay = Some(Replay {
            captions: session.captions(),
            session,
            cursor: 0,
            total,
            playing,
            speed,
            carry: 0.0,
            timeline,
            marks,
            through_captions: false,
        });
        self.seek(at(total));
        Ok(())
    }
}
