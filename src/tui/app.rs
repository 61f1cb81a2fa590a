//! The explorer's state and its reactions to actions and replies. Everything here
//! is synchronous: the async loop (`tui::run`) feeds keys and model replies in and
//! carries the returned effects out, so tests drive an `App` without a runtime.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};
use ratatui_textarea::TextArea;
use tui_tree_widget::TreeState;

use super::action::Action;
use super::keymap::Keymap;
use super::theme::{Theme, ThemeSet};
use crate::engine::{Command, Effect, Engine, Event, Input, LlmReply, LlmRequest, NodeId, NodeStatus, Task};
use crate::runtime::headless::RunLimits;
use crate::runtime::{Run, StopPolicy};
use crate::session::cursor::ReplayCursor;
use crate::session::{Header, Session, SessionWriter};
use crate::tasks::{Problem, TaskSource};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Tree,
    Scores,
    Detail,
    Transcript,
}

impl Pane {
    pub const ALL: [Pane; 4] = [Pane::Tree, Pane::Scores, Pane::Detail, Pane::Transcript];

    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Tree => "Tree",
            Pane::Scores => "Scores",
            Pane::Detail => "Detail",
            Pane::Transcript => "Transcript",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompting {
    NewInput,
    SaveAs,
}

pub enum Popup {
    Help { scroll: u16 },
    Edit { node: NodeId, editor: Box<TextArea<'static>> },
    Ask { what: Prompting, editor: Box<TextArea<'static>> },
}

/// A session opened read-only, with a cursor over its inputs.
pub struct Replay {
    pub session: Arc<Session>,
    /// Inputs applied so far (0 = the start).
    pub cursor: usize,
    pub total: usize,
    pub playing: bool,
    /// Inputs per second while playing.
    pub speed: f64,
    /// Inputs due while playing but not yet played (the fraction carried between frames).
    pub carry: f64,
    /// Applies the inputs. Its engine slot is swapped with `App::engine` while it works,
    /// so the app shows the cursor's engine without cloning it.
    pub timeline: ReplayCursor<'static>,
}

/// Fastest playback, in inputs per second (`>` doubles the speed up to this).
pub const MAX_PLAY_SPEED: f64 = 16384.0;

/// What the app needs to start runs: the task, the run's header template and where
/// new sessions go.
#[derive(Clone)]
pub struct Setup {
    pub task: Arc<dyn TaskSource>,
    pub prompts: Option<PathBuf>,
    /// Header of new live runs (its input/index are replaced per problem).
    pub header: Header,
    pub sessions_dir: PathBuf,
    /// Budgets, price and cache, as for headless runs.
    pub limits: RunLimits,
}

pub struct App {
    pub setup: Setup,
    /// The engine with its recording, totals and stop policy: the one run loop's state.
    pub run: Run,
    pub header: Header,
    pub replay: Option<Replay>,
    /// Everything the engine reported, for the transcript.
    pub events: Vec<Event>,
    pub focus: Pane,
    pub tree_state: TreeState<usize>,
    collapsed: BTreeSet<usize>,
    /// Keep the selection on the newest node while the search runs.
    follow: bool,
    pub popup: Option<Popup>,
    pub keymap: Keymap,
    pub themes: ThemeSet,
    pub theme_name: String,
    pub no_color: bool,
    /// A line for the status bar (errors, confirmations).
    pub message: Option<String>,
    /// Scroll offsets of the detail and transcript panes (transcript: lines up from the end).
    pub detail_scroll: u16,
    pub transcript_scroll: u16,
    /// Left column width in percent.
    pub split: u16,
    pub quit: bool,
    /// The engine was replaced: the driver must drop its calls.
    pub reset_driver: bool,
    /// Milliseconds since the current run started (set by the loop; the app reads no clock).
    pub elapsed_ms: u64,
    /// Where each pane was drawn last, for mouse clicks.
    pub areas: [Rect; 4],
    /// Bumped on every change that needs a redraw.
    pub version: u64,
    /// Text streamed so far for calls still in flight: (call, sample) -> text.
    pub streaming: std::collections::BTreeMap<(u64, u32), String>,
}

impl App {
    fn base(setup: Setup, engine: Engine, header: Header, keymap: Keymap, themes: ThemeSet, theme: &str) -> App {
        let theme_name = themes.get_or_first(theme).name.clone();
        App {
            setup,
            run: Run::new(engine, None, StopPolicy::default()),
            header,
            replay: None,
            events: Vec::new(),
            focus: Pane::Tree,
            tree_state: TreeState::default(),
            collapsed: BTreeSet::new(),
            follow: true,
            popup: None,
            keymap,
            themes,
            theme_name,
            no_color: false,
            message: None,
            detail_scroll: 0,
            transcript_scroll: 0,
            split: 48,
            quit: false,
            reset_driver: false,
            elapsed_ms: 0,
            areas: [Rect::default(); 4],
            version: 0,
            streaming: Default::default(),
        }
    }

    /// A live run on `problem`, recording to a new session file.
    pub fn live(setup: Setup, problem: &Problem, keymap: Keymap, themes: ThemeSet, theme: &str) -> App {
        let task: Arc<dyn Task> = Arc::clone(&setup.task) as Arc<dyn Task>;
        let engine = Engine::new(task, &problem.input, setup.header.params.clone());
        let header = setup.header.clone();
        let mut app = App::base(setup, engine, header, keymap, themes, theme);
        app.start(problem.clone());
        app
    }

    /// A recorded session, read-only, with the cursor at its end.
    pub fn replay(
        setup: Setup,
        session: Session,
        keymap: Keymap,
        themes: ThemeSet,
        theme: &str,
    ) -> Result<App, String> {
        let session = Arc::new(session);
        let timeline =
            ReplayCursor::shared(Arc::clone(&session), setup.prompts.as_deref()).map_err(|e| e.to_string())?;
        let total = timeline.total();
        // The engine at input 0, like the cursor's: the two are swapped on every move.
        let h = &session.header;
        let engine = Engine::new(Arc::clone(timeline.task()), &h.input, h.params.clone());
        let header = session.header.clone();
        let mut app = App::base(setup, engine, header, keymap, themes, theme);
        app.replay = Some(Replay { session, cursor: 0, total, playing: false, speed: 8.0, carry: 0.0, timeline });
        app.seek(total);
        Ok(app)
    }

    pub fn theme(&self) -> Theme {
        let t = self.themes.get_or_first(&self.theme_name).clone();
        if self.no_color {
            t.no_color()
        } else {
            t
        }
    }

    pub fn session_path(&self) -> Option<PathBuf> {
        match &self.replay {
            Some(r) => Some(r.session.path.clone()),
            None => self.run.writer().map(|w| w.path().to_path_buf()),
        }
    }

    pub fn is_replay(&self) -> bool {
        self.replay.is_some()
    }

    fn touch(&mut self) {
        self.version += 1;
    }

    /// Begin a fresh live run on `problem` (new engine, new session file).
    fn start(&mut self, problem: Problem) {
        let task: Arc<dyn Task> = Arc::clone(&self.setup.task) as Arc<dyn Task>;
        let engine = Engine::new(task, &problem.input, self.setup.header.params.clone());
        let mut header = self.setup.header.clone();
        header.input = problem.input.clone();
        header.index = problem.index;
        header.gold = self.setup.task.gold(&problem.input);
        self.header = header;
        self.replay = None;
        self.events.clear();
        self.tree_state = TreeState::default();
        self.collapsed.clear();
        self.follow = true;
        self.reset_driver = true;
        self.elapsed_ms = 0;
        let name = format!(
            "{}-{}-{}.jsonl",
            self.header.task,
            problem.index.map(|i| i.to_string()).unwrap_or_else(|| problem.input.replace(' ', "_")),
            self.header.params.method.label()
        );
        let path = unique_path(&self.setup.sessions_dir, &name);
        let writer = match SessionWriter::create(&path, &self.header) {
            Ok(w) => Some(w),
            Err(e) => {
                self.message = Some(format!("not recording: {e}"));
                None
            }
        };
        let limits = &self.setup.limits;
        self.run = Run::new(engine, writer, StopPolicy::live(limits.budget, limits.price));
        self.select(NodeId(0));
        self.touch();
    }

    /// Give the engine an input, record it, remember its events; returns the effects for the driver.
    fn feed(&mut self, input: Input, request: Option<&LlmRequest>) -> Vec<Effect> {
        let fed = self.run.feed(input, request);
        if let Some(refused) = fed.refused {
            self.message = Some(refused);
            self.touch();
            return Vec::new();
        }
        let events = fed.events;
        if let Some(reason) = &fed.stopped {
            self.message = Some(format!("stopped: {reason}"));
        }
        for event in &events {
            match event {
                Event::Rejected { reason } => self.message = Some(reason.clone()),
                Event::NodeAdded { id, .. } if self.follow => self.select(*id),
                _ => {}
            }
        }
        self.events.extend(events);
        self.touch();
        fed.effects
    }

    /// Text arriving on a streamed call (shown in the detail pane until the reply lands).
    pub fn on_delta(&mut self, call: u64, sample: u32, text: &str) {
        if self.replay.is_none() && self.run.engine.pending_calls().contains(&call) {
            self.streaming.entry((call, sample)).or_default().push_str(text);
            self.touch();
        }
    }

    /// The money spent so far, if the provider has a price.
    pub fn cost_usd(&self) -> Option<f64> {
        let t = &self.run.totals;
        self.header.price.as_ref().map(|p| p.cost(t.prompt_tokens, t.completion_tokens))
    }

    /// A model reply or tool observation from the driver.
    pub fn on_input(&mut self, input: Input, request: Option<&LlmRequest>) -> Vec<Effect> {
        match (input, request) {
            (Input::LlmReply(reply), Some(request)) => self.on_reply(reply, request),
            (input, _) if self.replay.is_none() => self.feed(input, None),
            _ => Vec::new(),
        }
    }

    /// A model reply from the driver.
    pub fn on_reply(&mut self, reply: LlmReply, request: &LlmRequest) -> Vec<Effect> {
        if self.replay.is_some() {
            return Vec::new();
        }
        self.streaming.retain(|(call, _), _| *call != reply.call);
        self.feed(Input::LlmReply(reply), Some(request))
    }

    fn command(&mut self, command: Command) -> Vec<Effect> {
        if self.replay.is_some() {
            self.message = Some("this is a read-only replay: press f to fork a live run from here".into());
            self.touch();
            return Vec::new();
        }
        self.feed(Input::command(command), None)
    }

    pub fn selected(&self) -> NodeId {
        self.tree_state
            .selected()
            .last()
            .map(|&i| NodeId(i))
            .filter(|&n| self.run.engine.tree().contains(n))
            .unwrap_or(NodeId(0))
    }

    /// The ids from the root down to `node`, as the tree widget names it.
    pub fn path_to(&self, node: NodeId) -> Vec<usize> {
        let tree = self.run.engine.tree();
        let mut path = vec![node.0];
        let mut cur = tree.get(node).and_then(|n| n.parent);
        while let Some(p) = cur {
            path.push(p.0);
            cur = tree.node(p).parent;
        }
        path.reverse();
        path
    }

    fn select(&mut self, node: NodeId) {
        if !self.run.engine.tree().contains(node) {
            return;
        }
        let path = self.path_to(node);
        for i in 1..path.len() {
            self.collapsed.remove(&path[i - 1]);
        }
        self.open_all();
        self.tree_state.select(path);
        self.detail_scroll = 0;
    }

    /// Open every node with children except the ones collapsed by hand.
    pub fn open_all(&mut self) {
        let ids: Vec<NodeId> = self
            .run
            .engine
            .tree()
            .nodes()
            .filter(|n| !n.children.is_empty() && !self.collapsed.contains(&n.id.0))
            .map(|n| n.id)
            .collect();
        for id in ids {
            let path = self.path_to(id);
            self.tree_state.open(path);
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if self.popup.is_some() {
            return self.popup_key(key);
        }
        match self.keymap.action_for(&key) {
            Some(action) => self.handle_action(action),
            None => Vec::new(),
        }
    }

    fn popup_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        self.touch();
        match self.popup.take() {
            Some(Popup::Help { scroll }) => {
                let scroll = match key.code {
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::PageDown => scroll.saturating_add(10),
                    KeyCode::PageUp => scroll.saturating_sub(10),
                    _ => return Vec::new(),
                };
                self.popup = Some(Popup::Help { scroll });
                Vec::new()
            }
            Some(Popup::Edit { node, mut editor }) => match key.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Char('s') if ctrl => self.submit_edit(node, editor.lines().join("\n")),
                KeyCode::Enter if alt || ctrl => self.submit_edit(node, editor.lines().join("\n")),
                _ => {
                    editor.input(key);
                    self.popup = Some(Popup::Edit { node, editor });
                    Vec::new()
                }
            },
            Some(Popup::Ask { what, mut editor }) => match key.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Enter => {
                    let text = editor.lines().join(" ").trim().to_string();
                    self.answer(what, &text)
                }
                _ => {
                    editor.input(key);
                    self.popup = Some(Popup::Ask { what, editor });
                    Vec::new()
                }
            },
            None => Vec::new(),
        }
    }

    /// An edit from the popup (also used by tests and scripts).
    pub fn submit_edit(&mut self, node: NodeId, text: String) -> Vec<Effect> {
        self.follow = true;
        self.command(Command::Edit { node, text })
    }

    /// An answer to a one-line question popup.
    pub fn answer(&mut self, what: Prompting, text: &str) -> Vec<Effect> {
        match what {
            Prompting::NewInput => match self.parse_problem(text) {
                Ok(problem) => {
                    self.start(problem);
                    Vec::new()
                }
                Err(e) => {
                    self.message = Some(e);
                    Vec::new()
                }
            },
            Prompting::SaveAs => {
                let path = PathBuf::from(text);
                self.message = Some(match self.run.writer_mut() {
                    Some(w) => match w.save_as(&path) {
                        Ok(()) => format!("saved; recording continues in {}", path.display()),
                        Err(e) => format!("could not save: {e}"),
                    },
                    None => "nothing is being recorded (fork the replay first)".into(),
                });
                Vec::new()
            }
        }
    }

    fn parse_problem(&self, text: &str) -> Result<Problem, String> {
        let task = &self.setup.task;
        if let Ok(i) = text.trim().parse::<usize>() {
            return task.problem(i).ok_or_else(|| {
                format!("there is no puzzle {i}: the list has {} (0..{})", task.problem_count(), task.problem_count())
            });
        }
        task.parse_input(text).map_err(|e| e.to_string())
    }

    pub fn handle_mouse(&mut self, mouse: MouseEvent) -> Vec<Effect> {
        if self.popup.is_some() {
            return Vec::new();
        }
        let at = Position { x: mouse.column, y: mouse.row };
        let pane = Pane::ALL.iter().copied().find(|p| self.areas[p.index()].contains(at));
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(p) = pane {
                    self.focus = p;
                    if p == Pane::Tree && self.tree_state.click_at(at) {
                        self.follow = false;
                        self.detail_scroll = 0;
                    }
                    self.touch();
                }
                Vec::new()
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                if let Some(p) = pane {
                    self.focus = p;
                }
                let down = matches!(mouse.kind, MouseEventKind::ScrollDown);
                self.handle_action(if down { Action::Down } else { Action::Up })
            }
            _ => Vec::new(),
        }
    }

    pub fn handle_action(&mut self, action: Action) -> Vec<Effect> {
        self.touch();
        let node = self.selected();
        match action {
            Action::Step => {
                self.follow = true;
                self.command(Command::Step { n: 1 })
            }
            Action::RunPause => {
                self.follow = true;
                let running = matches!(self.run.engine.mode(), crate::engine::RunMode::Running);
                self.command(if running { Command::Pause } else { Command::Run })
            }
            Action::Prune => {
                let pruned = self.run.engine.tree().node(node).status == NodeStatus::Pruned;
                self.command(if pruned { Command::Unprune { node } } else { Command::Prune { node } })
            }
            Action::Edit => {
                if self.replay.is_some() {
                    return self.command(Command::Pause);
                }
                if node == NodeId(0) {
                    self.message = Some("the root is the puzzle itself: press i for a new input".into());
                    return Vec::new();
                }
                let thought = &self.run.engine.tree().node(node).thought;
                let lines: Vec<String> = if self.header.params.method.has_react_steps() {
                    // A ReAct step: its thought and action; the observation comes from the tool.
                    thought
                        .lines()
                        .filter(|l| !l.trim_start().to_lowercase().starts_with("observation"))
                        .map(str::to_string)
                        .collect()
                } else {
                    vec![thought.clone()]
                };
                let mut editor = TextArea::new(lines);
                editor.move_cursor(ratatui_textarea::CursorMove::End);
                self.popup = Some(Popup::Edit { node, editor: Box::new(editor) });
                Vec::new()
            }
            Action::Backtrack => self.command(Command::Backtrack),
            Action::Expand => self.command(Command::Expand { node }),
            Action::Reevaluate => self.command(Command::Reevaluate { node }),
            Action::Continue => self.command(Command::Continue { node }),
            Action::NewInput => {
                let mut editor = TextArea::default();
                editor.set_placeholder_text(self.setup.task.info().input_hint);
                self.popup = Some(Popup::Ask { what: Prompting::NewInput, editor: Box::new(editor) });
                Vec::new()
            }
            Action::Restart => {
                let problem = Problem { index: self.header.index, input: self.header.input.clone() };
                self.start(problem);
                Vec::new()
            }
            Action::SaveAs => {
                let current = self.session_path().map(|p| p.display().to_string()).unwrap_or_default();
                let editor = TextArea::new(vec![current]);
                let mut editor = Box::new(editor);
                editor.move_cursor(ratatui_textarea::CursorMove::End);
                self.popup = Some(Popup::Ask { what: Prompting::SaveAs, editor });
                Vec::new()
            }
            Action::Up | Action::Down | Action::PageUp | Action::PageDown | Action::Top | Action::Bottom => {
                self.scroll(action);
                Vec::new()
            }
            Action::Left => {
                self.follow = false;
                self.tree_state.key_left();
                Vec::new()
            }
            Action::Right => {
                self.follow = false;
                self.collapsed.remove(&node.0);
                self.tree_state.key_right();
                Vec::new()
            }
            Action::ToggleCollapse => {
                if !self.collapsed.remove(&node.0) {
                    self.collapsed.insert(node.0);
                }
                self.tree_state.toggle_selected();
                Vec::new()
            }
            Action::JumpBest => {
                self.follow = false;
                if let Some(best) = self.best_node() {
                    self.select(best);
                }
                Vec::new()
            }
            Action::NextSolution => {
                self.follow = false;
                let solutions: Vec<NodeId> =
                    self.run.engine.tree().nodes().filter(|n| n.status == NodeStatus::Solution).map(|n| n.id).collect();
                match solutions.iter().find(|&&s| s > node).or(solutions.first()) {
                    Some(&s) => self.select(s),
                    None => self.message = Some("no solution yet".into()),
                }
                Vec::new()
            }
            Action::FocusNext | Action::FocusPrev => {
                let i = self.focus.index();
                let n = Pane::ALL.len();
                let next = if action == Action::FocusNext { (i + 1) % n } else { (i + n - 1) % n };
                self.focus = Pane::ALL[next];
                Vec::new()
            }
            Action::FocusTree | Action::FocusScores | Action::FocusDetail | Action::FocusTranscript => {
                self.focus = match action {
                    Action::FocusTree => Pane::Tree,
                    Action::FocusScores => Pane::Scores,
                    Action::FocusDetail => Pane::Detail,
                    _ => Pane::Transcript,
                };
                Vec::new()
            }
            Action::WiderTree => {
                self.split = (self.split + 5).min(80);
                Vec::new()
            }
            Action::NarrowerTree => {
                self.split = self.split.saturating_sub(5).max(20);
                Vec::new()
            }
            Action::ReplayBack => self.replay_move(|c, _| c.saturating_sub(1)),
            Action::ReplayForward => self.replay_move(|c, t| (c + 1).min(t)),
            Action::ReplayStart => self.replay_move(|_, _| 0),
            Action::ReplayEnd => self.replay_move(|_, t| t),
            Action::ReplayPlay => {
                match self.replay.as_mut() {
                    Some(r) => {
                        if !r.playing && r.cursor >= r.total {
                            r.cursor = 0;
                        }
                        r.playing = !r.playing;
                        r.carry = 0.0;
                    }
                    None => self.message = Some("play works in a replay (thoughtscope replay FILE)".into()),
                }
                Vec::new()
            }
            Action::ReplaySlower | Action::ReplayFaster => {
                if let Some(r) = self.replay.as_mut() {
                    r.speed = if action == Action::ReplayFaster {
                        (r.speed * 2.0).min(MAX_PLAY_SPEED)
                    } else {
                        (r.speed / 2.0).max(0.5)
                    };
                    self.message = Some(format!("replay speed {} inputs/s", r.speed));
                }
                Vec::new()
            }
            Action::Fork => self.fork(),
            Action::CycleTheme => {
                self.theme_name = self.themes.next_after(&self.theme_name).name.clone();
                self.message = Some(format!("theme {}", self.theme_name));
                Vec::new()
            }
            Action::Help => {
                self.popup = Some(Popup::Help { scroll: 0 });
                Vec::new()
            }
            Action::Quit => {
                self.quit = true;
                Vec::new()
            }
        }
    }

    fn scroll(&mut self, action: Action) {
        let page = 10u16;
        match self.focus {
            Pane::Tree | Pane::Scores => {
                self.follow = false;
                match action {
                    Action::Up => {
                        self.tree_state.key_up();
                    }
                    Action::Down => {
                        self.tree_state.key_down();
                    }
                    Action::PageUp => {
                        self.tree_state.select_relative(|c| c.map_or(0, |c| c.saturating_sub(page as usize)));
                    }
                    Action::PageDown => {
                        self.tree_state.select_relative(|c| c.map_or(0, |c| c.saturating_add(page as usize)));
                    }
                    Action::Top => {
                        self.tree_state.select_first();
                    }
                    _ => {
                        self.tree_state.select_last();
                    }
                }
                self.detail_scroll = 0;
            }
            Pane::Detail => {
                self.detail_scroll = match action {
                    Action::Up => self.detail_scroll.saturating_sub(1),
                    Action::Down => self.detail_scroll.saturating_add(1),
                    Action::PageUp => self.detail_scroll.saturating_sub(page),
                    Action::PageDown => self.detail_scroll.saturating_add(page),
                    Action::Top => 0,
                    _ => u16::MAX / 2,
                }
            }
            Pane::Transcript
                if self.header.params.method.has_react_steps() && matches!(action, Action::Up | Action::Down) =>
            {
                // A ReAct trajectory: up and down walk its steps (down follows the newest branch).
                self.follow = false;
                let tree = self.run.engine.tree();
                let node = self.selected();
                let next = match action {
                    Action::Up => tree.node(node).parent,
                    _ => tree.node(node).children.last().copied(),
                };
                if let Some(next) = next {
                    self.select(next);
                }
                self.transcript_scroll = 0;
            }
            Pane::Transcript => {
                // Offsets count lines up from the newest.
                self.transcript_scroll = match action {
                    Action::Up => self.transcript_scroll.saturating_add(1),
                    Action::Down => self.transcript_scroll.saturating_sub(1),
                    Action::PageUp => self.transcript_scroll.saturating_add(page),
                    Action::PageDown => self.transcript_scroll.saturating_sub(page),
                    Action::Top => u16::MAX / 2,
                    _ => 0,
                }
            }
        }
    }

    /// The best state: a solution if there is one, else the highest value at the deepest scored level.
    fn best_node(&self) -> Option<NodeId> {
        let tree = self.run.engine.tree();
        if let Some(s) = tree.nodes().find(|n| n.status == NodeStatus::Solution) {
            return Some(s.id);
        }
        let depth = tree.nodes().filter(|n| n.score.is_some()).map(|n| n.depth).max()?;
        tree.nodes()
            .filter(|n| n.depth == depth && n.score.is_some())
            .max_by(|a, b| {
                let (x, y) = (a.score.as_ref().map_or(0.0, |s| s.value), b.score.as_ref().map_or(0.0, |s| s.value));
                x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal).then(b.id.cmp(&a.id))
            })
            .map(|n| n.id)
    }

    fn replay_move(&mut self, to: impl Fn(usize, usize) -> usize) -> Vec<Effect> {
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
        let target = if self.follow { last_added.unwrap_or(NodeId(0)) } else { keep };
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
    fn fork(&mut self) -> Vec<Effect> {
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

    /// Record the end of the run (totals and time) when leaving.
    pub fn finish_recording(&mut self) {
        let _ = self.run.end(self.elapsed_ms);
    }

    /// The step counter for the status bar: the method's own.
    pub fn step_count(&self) -> usize {
        self.run.engine.view().step
    }
}

/// `dir/name`, or `dir/name-2`, `-3`, ... if taken.
pub fn unique_path(dir: &Path, name: &str) -> PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, "jsonl"));
    (2..).map(|i| dir.join(format!("{stem}-{i}.{ext}"))).find(|p| !p.exists()).unwrap_or(first)
}
