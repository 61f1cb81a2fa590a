//! The explorer's state and its reactions to actions and replies. Everything here
//! is synchronous: the async loop (`tui::run`) feeds keys and model replies in and
//! carries the returned effects out, so tests drive an `App` without a runtime.
//!
//! The state itself (`App`, its panes and popups) is defined in `tui/state`, which
//! `tui/ui` draws from; this module changes it. `mod.rs` holds its construction and the
//! one place inputs reach the run (`feed`); `actions.rs` turns keys, mouse and actions
//! into commands; `navigation.rs` moves the selection and routes scrolling to the
//! focused pane; `replay.rs` is the timeline, playback and fork.

mod actions;
mod breaks;
mod browser;
mod export;
mod filter;
mod find;
mod follow;
mod handoff;
mod memory;
mod navigation;
mod problems;
mod replay;
mod undo;

/// Where a new session or export goes (see [`crate::session::unique_path`]).
pub use crate::session::unique_path;
pub use crate::tui::state::follow::read_written;
pub use crate::tui::state::{
    by_approach, memory_note, plain_text, rows, scan as browser_scan, shown_path, sorted_entries, App, BreakList,
    BreakMarks, BrowserNode, CauseChooser, Chosen, DetailPane, EngineKey, Filter, Find, Following, HelpView,
    MemoryPane, MemoryUse, OpenPane, OpenSource, Outgoing, Pane, Popup, ProblemList, Prompting, Replay, ScoresPane,
    Scroll, SessionBrowser, SessionState, Setup, TranscriptPane, TreePane, TreeState, ViewState, FILTER_ACCEPTED,
    MAX_PLAY_SPEED, PLAY_SPEED,
};
pub use breaks::walk_breaks;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use ratatui_textarea::TextArea;

use super::action::Action;
use super::keymap::Keymap;
use super::theme::ThemeSet;
use crate::engine::{Command, Effect, Engine, Event, Input, LlmReply, NodeId, NodeStatus, Origin, Task};
use crate::protocol::LlmRequest;
use crate::runtime::{Run, StopPolicy};
use crate::session::cursor::ReplayCursor;
use crate::session::{Header, Session, SessionWriter};
use crate::tasks::Problem;

impl App {
    fn base(setup: Setup, engine: Engine, header: Header, keymap: Keymap, themes: ThemeSet, theme: &str) -> App {
        App {
            session: SessionState::new(setup, Run::new(engine, None, StopPolicy::default()), header),
            view: ViewState::new(themes, theme),
            tree: TreePane::default(),
            popup: None,
            keymap,
            message: None,
            detail: DetailPane::default(),
            transcript: TranscriptPane::default(),
            scores: ScoresPane::default(),
            help: HelpView::default(),
            quit: false,
            areas: [Rect::default(); 4],
            problems: None,
            memory_pane: None,
            memory_notes: Default::default(),
            find: None,
            filter: None,
            filter_generation: 0,
            outgoing: None,
            followed: None,
            open_pane: None,
        }
    }

    /// A live run on `problem`, recording to a new session file.
    pub fn live(setup: Setup, problem: &Problem, keymap: Keymap, themes: ThemeSet, theme: &str) -> App {
        let task: Arc<dyn Task> = Arc::clone(&setup.task) as Arc<dyn Task>;
        let mut engine = Engine::new(task, &problem.input, setup.header.params.clone());
        engine.set_context_window(setup.header.context_window);
        let header = setup.header.clone();
        let mut app = App::base(setup, engine, header, keymap, themes, theme);
        app.start(problem.clone());
        app
    }

    /// A recorded session, read-only: at its first caption if it is narrated (a demo
    /// tells its story from the start), else at its end.
    pub fn replay(
        setup: Setup,
        session: Session,
        keymap: Keymap,
        themes: ThemeSet,
        theme: &str,
    ) -> Result<App, String> {
        let session = Arc::new(session);
        let mut timeline =
            ReplayCursor::shared(Arc::clone(&session), setup.prompts.as_deref()).map_err(|e| e.to_string())?;
        let total = timeline.total();
        // Walked before the app's engine exists, so the cursor is back at 0 like it.
        let marks = replay::Marks::walk(&mut timeline);
        let captions = session.captions();
        // The engine at input 0, like the cursor's: the two are swapped on every move.
        let h = &session.header;
        let engine = h.engine(Arc::clone(timeline.task()));
        let header = session.header.clone();
        let mut app = App::base(setup, engine, header, keymap, themes, theme);
        // Playback stops where the session's breakpoints (its last list) fire.
        let set = session.inputs().filter_map(|(input, _)| match input {
            Input::Command { command: Command::Breakpoints { set } } => Some(set.clone()),
            _ => None,
        });
        app.session.replay_breaks = set.last().and_then(|s| crate::engine::breakpoint::Breakpoint::parse_all(&s).ok());
        let open_at = captions.first().map(|c| c.at).unwrap_or(total);
        app.session.replay = Some(Replay {
            session,
            cursor: 0,
            total,
            playing: false,
            speed: PLAY_SPEED,
            carry: 0.0,
            timeline,
            marks,
            captions,
            through_captions: false,
        });
        app.seek(open_at);
        app.say_fidelity();
        Ok(app)
    }

    pub fn session_path(&self) -> Option<PathBuf> {
        match &self.session.replay {
            Some(r) => Some(r.session.path.clone()),
            None => self.session.run.writer().map(|w| w.path().to_path_buf()),
        }
    }

    fn touch(&mut self) {
        self.view.touch();
    }

    /// Begin a fresh live run on `problem` (new engine, new session file); the run it
    /// replaces gets its end line first, so its session replays as complete.
    fn start(&mut self, problem: Problem) {
        self.finish_recording();
        // A memory that could not be saved is not used again: its lessons would be lost.
        let memory_failed = self.session.run.memory_error.take();
        let task: Arc<dyn Task> = Arc::clone(&self.session.setup.task) as Arc<dyn Task>;
        let mut engine = Engine::new(task, &problem.input, self.session.setup.header.params.clone());
        engine.set_context_window(self.session.setup.header.context_window);
        let mut header = self.session.setup.header.clone();
        header.input = problem.input.clone();
        header.index = problem.index;
        header.gold = self.session.setup.task.gold(&problem.input);
        header.facets = self.session.setup.task.problem_facets(&problem);
        header.task_def = self.session.setup.task.definition(&problem.input);
        // A method keeping a memory starts from the named memory as it stands now (the
        // template header names it); it is saved when this run ends (`finish_recording`).
        let memory =
            header.memory.as_ref().filter(|_| memory_failed.is_none()).map(|m| match &self.session.setup.memory_dir {
                Some(dir) => crate::runtime::memory::RunMemory {
                    name: m.name.clone(),
                    store: crate::memory::MemoryStore::new(dir),
                },
                None => crate::runtime::memory::RunMemory::user(&m.name),
            });
        let started = memory.as_ref().map(crate::runtime::memory::load_blocking);
        header.memory = match (&memory, &started) {
            (Some(m), Some(Ok(loaded))) => Some(crate::session::MemorySnapshot::new(m.name.clone(), loaded.clone())),
            _ => None,
        };
        self.session.header = header;
        self.session.replay = None;
        self.session.events.clear();
        self.tree.reset();
        self.session.engine_replaced();
        // A new run's scores are read from the best down.
        self.scores.home();
        let h = &self.session.header;
        let name = crate::session::file_name(&h.task, problem.index, &problem.input, h.params.method.label());
        let named = self.session.setup.session_file.take();
        // A file the explorer named itself is removed again if the run ends with nothing
        // recorded (opened and quit, or another session opened, before any step).
        self.session.own_file = named.is_none();
        let path = named.unwrap_or_else(|| unique_path(&self.session.setup.sessions_dir, &name));
        let writer = match SessionWriter::create(&path, &self.session.header) {
            Ok(w) => Some(w),
            Err(e) => {
                self.message = Some(format!("not recording: {e}"));
                None
            }
        };
        let limits = &self.session.setup.limits;
        self.session.run = Run::new(engine, writer, StopPolicy::live(limits.budget, limits.price));
        let breakpoints = limits.breakpoints.clone();
        self.session.bump();
        self.session.run.pause_on_break = true;
        if !breakpoints.is_empty() {
            // The run opens with its breakpoints: a command, so the session and its replays have them.
            let set = breakpoints;
            self.feed(Input::command(Command::Breakpoints { set }), None);
        }
        match (memory, started) {
            (Some(m), Some(Ok(loaded))) => self.session.run.keep_memory(m, loaded),
            (_, Some(Err(e))) => self.message = Some(format!("{e}; this run keeps no memory")),
            _ => {}
        }
        if let Some(failed) = memory_failed {
            self.message = Some(format!("{failed}; this run keeps no memory"));
            self.session.run.memory_error = Some(failed);
        }
        self.select(NodeId(0));
        self.touch();
    }

    /// `recording to FILE`, for the message line when a live run starts (and again at quit),
    /// so the file can be followed (`replay --follow`) or opened.
    pub fn recording_note(&self) -> Option<String> {
        if self.session.replay.is_some() {
            return None;
        }
        self.session_path().map(|p| format!("recording to {}", shown_path(&p)))
    }

    /// Give the engine an input, record it, remember its events; returns the effects for the driver.
    fn feed(&mut self, input: Input, request: Option<&LlmRequest>) -> Vec<Effect> {
        let step = self.session.run.engine.view().step;
        let held_before = self.session.run.at_break();
        let fed = self.session.run.feed(input, request);
        self.session.bump();
        // A new step's candidates are read from the best down.
        if self.session.run.engine.view().step != step {
            self.scores.home();
        }
        if let Some(refused) = fed.refused {
            self.message = Some(refused);
            self.touch();
            return Vec::new();
        }
        let events = fed.events;
        if let Some(reason) = &fed.stopped {
            self.message = Some(format!("stopped: {reason}"));
        }
        let mut revealed = false;
        // Nodes the person closed (left arrow, a click) stay closed unless something new grows below them.
        self.keep_closed();
        for event in &events {
            match event {
                Event::Rejected { reason } => self.message = Some(reason.clone()),
                Event::NodeAdded { id, parent, .. } => {
                    // New children are shown, whoever asked for them: open the way down to them.
                    self.reveal(*parent);
                    revealed = true;
                    if self.tree.following() {
                        self.select(*id);
                    }
                }
                // The search is over: a follower lands on the answer, not on the last node made.
                Event::Finished { .. } if self.tree.following() => {
                    if let Some(node) = self.landing() {
                        self.select(node);
                    }
                }
                _ => {}
            }
        }
        if revealed {
            self.open_all();
        }
        // A finished run's memory is saved at once, not only at the next problem or quit.
        if events.iter().any(|e| matches!(e, Event::Finished { .. })) {
            let pending = self.session.run.memory_save_point();
            self.save_memory(pending);
        }
        if let Some(hit) = fed.hits.first() {
            if held_before {
                // Replies still landing while held: each further hit is added to what is said.
                self.add_break(&fed.hits);
            } else {
                self.show_break(hit, fed.hits.len());
            }
        }
        if fed.held_back > 0 {
            self.show_held_back(fed.held_back);
        }
        self.session.events.extend(events);
        self.touch();
        fed.effects
    }

    /// Text arriving on a streamed call (shown in the detail pane until the reply lands).
    pub fn on_delta(&mut self, call: u64, sample: u32, text: &str) {
        if self.session.replay.is_none() && self.session.run.engine.pending_calls().contains(&call) {
            self.session.stream(call, sample, text);
            self.touch();
        }
    }

    /// A streamed sample starts over (its stream was cut and is asked again): the text
    /// shown of it so far goes.
    pub fn on_restart(&mut self, call: u64, sample: u32) {
        if self.session.restart(call, sample) {
            self.touch();
        }
    }

    /// A model reply or tool observation from the driver.
    pub fn on_input(&mut self, input: Input, request: Option<&LlmRequest>) -> Vec<Effect> {
        match (input, request) {
            (Input::LlmReply(reply), Some(request)) => self.on_reply(reply, request),
            (input, _) if self.session.replay.is_none() => self.feed(input, None),
            _ => Vec::new(),
        }
    }

    /// A model reply from the driver.
    pub fn on_reply(&mut self, reply: LlmReply, request: &LlmRequest) -> Vec<Effect> {
        if self.session.replay.is_some() {
            return Vec::new();
        }
        self.session.landed(reply.call);
        self.feed(Input::LlmReply(reply), Some(request))
    }

    /// What the provider has found out about the server so far (its whole list, each
    /// time): a line not seen before is said on the footer and kept for the Stats view
    /// and the session's end line.
    pub fn on_found(&mut self, found: Vec<String>) {
        if self.session.replay.is_some() {
            return;
        }
        let new = self.session.run.note_found(found);
        if let Some(first) = new.first() {
            self.message = Some(format!("note: {first} (S lists what was found)"));
            self.touch();
        }
    }

    /// Record the end of the run (totals and time) when leaving.
    pub fn finish_recording(&mut self) {
        let unused = self.session.run.writer().filter(|w| w.inputs() == 0).map(|w| w.path().to_path_buf());
        let _ = self.session.run.end(self.session.elapsed_ms);
        if let Some(path) = unused.filter(|_| std::mem::take(&mut self.session.own_file)) {
            // Nothing happened in it: a header and an end line are not a session worth keeping.
            let _ = std::fs::remove_file(path);
        }
        // What a live run's named memory learnt since it was last saved, before the next
        // problem loads it.
        let pending = self.session.run.memory_save_point();
        self.save_memory(pending);
    }

    /// Save `pending` (a run's memory changes), saying so if it fails.
    fn save_memory(&mut self, pending: Option<crate::runtime::memory::PendingSave>) {
        if let Some(Err(e)) = pending.map(crate::runtime::memory::PendingSave::save_blocking) {
            self.message = Some(e.to_string());
            self.session.run.memory_error = Some(e.to_string());
        }
    }
}

/// A key typed into a text field: ctrl-u clears the line up to the cursor (as in a
/// shell), anything else goes to the field.
pub(crate) fn type_key(editor: &mut TextArea<'static>, key: KeyEvent) {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(key.code, KeyCode::Char('u') | KeyCode::Char('U')) {
        editor.delete_line_by_head();
    } else {
        editor.input(key);
    }
}
