//! `u`: undo the last steering command (prune, un-prune, edit, backtrack, expand,
//! re-evaluate, continue) by forking the session just before it. A session replays
//! exactly, so the fork is the run as it stood then; the old session is kept, ended.

use super::*;

/// Whether `command` steers the search (what `u` undoes; stepping, running, pausing,
/// breakpoints and memory changes are not undone this way).
pub fn is_undoable(command: &Command) -> bool {
    matches!(
        command,
        Command::Prune { .. }
            | Command::Unprune { .. }
            | Command::Edit { .. }
            | Command::Backtrack { .. }
            | Command::Expand { .. }
            | Command::Reevaluate { .. }
            | Command::Continue { .. }
    )
}

/// The position of the last steering command among the session's inputs.
pub fn last_steering(session: &Session) -> Option<usize> {
    let mut last = None;
    for (i, (input, _)) in session.inputs().enumerate() {
        if matches!(input, Input::Command { command } if is_undoable(command)) {
            last = Some(i);
        }
    }
    last
}

impl App {
    /// `u`: fork the live run's session just before its last steering command.
    pub(super) fn undo(&mut self) -> Vec<Effect> {
        if self.session.replay.is_some() {
            self.message = Some("undo is for a live run: in a replay, { goes back to the previous human action".into());
            return Vec::new();
        }
        let Some(path) = self.session_path() else {
            self.message = Some("undo needs the run's session file, and this run records none".into());
            return Vec::new();
        };
        let session = match Session::load(&path) {
            Ok(session) => session,
            Err(e) => {
                self.message = Some(format!("cannot undo: {e}"));
                return Vec::new();
            }
        };
        let Some(at) = last_steering(&session) else {
            self.message =
                Some("nothing to undo: no prune, edit, backtrack, expand or continue in this run yet".to_string());
            return Vec::new();
        };
        // The old session gets its end line and is kept as it is; the time it spent is
        // spent, so the clock goes on from it.
        let spent = self.session.elapsed_ms;
        self.finish_recording();
        let task: Arc<dyn Task> = Arc::clone(&self.session.setup.task) as Arc<dyn Task>;
        self.session.run = Run::new(session.header.engine(task), None, StopPolicy::default());
        self.session.replay = None;
        if let Err(e) = self.show_timeline(session, |total| at.min(total)) {
            self.message = Some(format!("cannot undo: {e}"));
            return Vec::new();
        }
        let effects = self.fork();
        if self.session.replay.is_some() {
            // The fork failed and said why; the run shown is the old one, read-only.
            return effects;
        }
        self.session.clock_from = Some(spent);
        self.message = Some(format!(
            "undone: a new session forked before input {at}; the old one is kept ({})",
            super::actions::short_path(&path)
        ));
        effects
    }
}
