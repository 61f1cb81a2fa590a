//! Several problems in one explorer (`tui --range A..B`), opening a session or demo
//! from inside the app (`o`), and the problems found in the config and theme files,
//! shown at start.
//!
//! Each problem of the list is its own session, recorded separately (as headless
//! `run --record DIR` does). Leaving a problem ends its recording; coming back to it
//! opens what was recorded as a replay (`f` forks it, `R` starts it again).

use super::*;
use crate::tasks::TaskOptions;

impl App {
    /// A live run on the first of `problems`, the others reachable with the next/previous
    /// problem keys; each is recorded in its own session file.
    pub fn live_list(
        setup: Setup,
        problems: Vec<Problem>,
        keymap: Keymap,
        themes: ThemeSet,
        theme: &str,
    ) -> Result<App, String> {
        let first = problems.first().cloned().ok_or("no problem to open")?;
        let mut app = App::live(setup.clone(), &first, keymap, themes, theme);
        if problems.len() > 1 {
            let mut sessions = vec![None; problems.len()];
            sessions[0] = app.session_path();
            app.problems = Some(ProblemList { problems, at: 0, sessions, setup, away: false });
        }
        Ok(app)
    }

    /// The session files of the list's problems visited so far, in list order.
    pub fn list_sessions(&self) -> Vec<PathBuf> {
        self.problems.as_ref().map(|l| l.sessions.iter().flatten().cloned().collect()).unwrap_or_default()
    }

    /// Move to the problem `step` places away in the list (1 next, -1 previous).
    pub fn move_problem(&mut self, step: isize) -> Vec<Effect> {
        self.touch();
        let Some(list) = self.problems.as_ref() else {
            self.message = Some("one problem here: open several with `thoughtscope tui --range A..B`".into());
            return Vec::new();
        };
        let target = list.at as isize + step;
        if target < 0 || target >= list.problems.len() as isize {
            let edge = if step > 0 { "last" } else { "first" };
            self.message = Some(format!("this is the {edge} problem ({} of {})", list.at + 1, list.problems.len()));
            return Vec::new();
        }
        self.goto_problem(target as usize);
        Vec::new()
    }

    /// Leave the open problem (its recording ends) and open problem `to` of the list:
    /// a new live run, or the session it was recorded in if it was visited before.
    pub fn goto_problem(&mut self, to: usize) {
        let Some(mut list) = self.problems.take() else { return };
        if to >= list.problems.len() {
            self.problems = Some(list);
            return;
        }
        // Remember where this problem's run went, if the open run is still one of it.
        let here = &list.problems[list.at];
        if self.session.replay.is_none()
            && self.session.header.input == here.input
            && self.session.header.index == here.index
        {
            // A run that recorded nothing leaves no file (see `finish_recording`): coming
            // back to its problem starts it afresh.
            let recorded = self.session.run.writer().is_some_and(|w| w.inputs() > 0);
            list.sessions[list.at] = self.session_path().filter(|_| recorded);
        }
        self.finish_recording();
        self.session.setup = list.setup.clone();
        list.at = to;
        list.away = false;
        let problem = list.problems[to].clone();
        let recorded = list.sessions[to].clone();
        let n = list.problems.len();
        self.problems = Some(list);
        let reopened =
            recorded.map(|path| Session::load(&path).map_err(|e| e.to_string()).and_then(|s| self.open_replay(s)));
        match reopened {
            Some(Ok(())) => {
                self.message = Some(format!("problem {}/{n}: as recorded (f forks it, R starts it again)", to + 1))
            }
            Some(Err(e)) => {
                self.start(problem);
                self.message =
                    Some(format!("problem {}/{n}: a new run (the recorded one cannot be opened: {e})", to + 1));
            }
            None => {
                self.start(problem);
                if let Some(l) = self.problems.as_mut() {
                    l.sessions[to] = self.session.run.writer().map(|w| w.path().to_path_buf());
                }
                let input = crate::safe_text::one_line(&self.session.header.input);
                self.message = Some(format!("problem {}/{n}: {input}", to + 1));
            }
        }
        self.touch();
    }

    /// Show `session` read-only in this app, with the cursor at its end (the open live
    /// run's recording ends first). The app takes the session's task, so `f` and `R`
    /// continue it.
    pub fn open_replay(&mut self, session: Session) -> Result<(), String> {
        let options = TaskOptions { prompts: self.session.setup.prompts.clone(), ..TaskOptions::default() };
        let task = session.header.build_task(&options).map_err(|e| e.to_string())?;
        let session = Arc::new(session);
        let mut timeline = ReplayCursor::shared(Arc::clone(&session), self.session.setup.prompts.as_deref())
            .map_err(|e| e.to_string())?;
        self.finish_recording();
        let total = timeline.total();
        let marks = super::replay::Marks::walk(&mut timeline);
        let captions = session.captions();
        // A narrated session (a demo) opens on its first caption, like `thoughtscope demo`.
        let open_at = captions.first().map(|c| c.at).unwrap_or(total);
        let h = &session.header;
        let engine = h.engine(Arc::clone(timeline.task()));
        self.session.setup.task = task;
        self.session.setup.header = h.clone();
        self.session.header = h.clone();
        self.session.run = Run::new(engine, None, StopPolicy::default());
        self.session.bump();
        self.session.events.clear();
        self.session.streaming.clear();
        self.tree.reset();
        self.popup = None;
        // A find was for the session shown before: another session starts without one.
        self.find = None;
        self.detail.home();
        self.transcript.home();
        self.session.engine_replaced();
        self.session.replay = Some(Replay {
            session,
            cursor: 0,
            total,
            playing: false,
            speed: super::PLAY_SPEED,
            carry: 0.0,
            timeline,
            marks,
            captions,
            through_captions: false,
        });
        self.seek(open_at);
        self.say_fidelity();
        Ok(())
    }

    /// Open an entry of the popup (or a path) as a replay; a failure is the message.
    pub fn open_source(&mut self, source: &OpenSource) -> Result<(), String> {
        let session = match source {
            OpenSource::Demo(i) => {
                let demo = crate::demos::DEMOS.get(*i).ok_or_else(|| format!("there is no demo {}", i + 1))?;
                crate::demos::load(demo)?
            }
            OpenSource::File(path) => Session::load(path).map_err(|e| e.to_string())?,
        };
        let name = session.path.display().to_string();
        self.open_replay(session)?;
        if let Some(list) = self.problems.as_mut() {
            list.away = true;
        }
        self.message = Some(format!("opened {name} (read-only: f forks a live run)"));
        Ok(())
    }

    /// Problems found in the config, keymap and theme files: one goes to the message
    /// line, several to a popup listing them all.
    pub fn show_problems(&mut self, notes: &[String]) {
        match notes {
            [] => {}
            [one] => self.message = Some(one.clone()),
            many => {
                self.message = Some(format!("{} warnings about the settings files (listed; esc closes)", many.len()));
                self.popup = Some(Popup::Problems { lines: many.to_vec(), scroll: 0 });
            }
        }
        self.touch();
    }
}
