//! The explorer's state: what it holds, and the components that own their part of it
//! (each pane's and popup's state, scroll and keys). `tui/app` changes it (actions,
//! replies, replay); `tui/ui` draws it and names nothing of `tui/app` (tests/structure.rs
//! holds that arrow out).

pub mod breaks;
pub mod browser;
pub mod filter;
pub mod find;
pub mod follow;
pub mod handoff;
pub mod memory;
pub mod memory_tree;
pub mod panes;
pub mod problems;
pub mod queries;
pub mod rows;
pub mod scan;
pub mod scores;
pub mod session;
pub mod view;

pub use breaks::{BreakList, BreakMarks};
pub use browser::{Chosen, Node as BrowserNode, SessionBrowser};
pub use filter::{Filter, FILTER_ACCEPTED};
pub use find::Find;
pub use follow::Following;
pub use handoff::{plain as plain_text, Outgoing};
pub use memory::{memory_note, sorted_entries, CauseChooser, MemoryUse};
pub use memory_tree::{by_approach, MemoryPane};
pub use panes::{DetailPane, HelpView, ScoresPane, Scroll, TranscriptPane, TreePane};
pub use problems::{OpenSource, ProblemList};
pub use rows::TreeState;
pub use session::SessionState;
pub use view::ViewState;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use super::keymap::Keymap;
use super::theme::Theme;
use crate::engine::{Engine, NodeId, NodeStatus};
use crate::runtime::headless::RunLimits;
use crate::session::cursor::ReplayCursor;
use crate::session::{Header, Session};
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
    /// Where to export the tree on screen (`X`).
    Export,
    /// A regex to find among the nodes (`/`).
    Find,
    /// A node's number to go to (`#`).
    GotoNode,
    /// A condition to filter the tree by (ctrl-f).
    Filter,
}

pub enum Popup {
    Help {
        scroll: u16,
    },
    /// `C`: the replay's caption in full (the caption box shows half the tree pane at most).
    Caption {
        scroll: u16,
    },
    Edit {
        node: NodeId,
        editor: Box<TextArea<'static>>,
    },
    Ask {
        what: Prompting,
        editor: Box<TextArea<'static>>,
    },
    /// Open a demo or a recorded session (`o`).
    Open(Box<SessionBrowser>),
    /// The problems found in the config and theme files, at start.
    Problems {
        lines: Vec<String>,
        scroll: u16,
    },
    /// The memory pane's `e`: a new text for a memory entry.
    MemoryEdit {
        id: crate::memory::EntryId,
        editor: Box<TextArea<'static>>,
    },
    /// The memory pane's `d`: remove this entry? (y/n)
    MemoryRemove {
        id: crate::memory::EntryId,
    },
    /// `b` when the method types its failures: which cause to backtrack for.
    Causes(CauseChooser),
    /// `B`: the breakpoints (toggle, add, remove).
    Breaks(BreakList),
    /// `S`: the run's figures (calls and tokens over time, scores per step, calls by purpose).
    Stats,
}

/// A session opened read-only, with a cursor over its inputs.
pub struct Replay {
    pub session: Arc<Session>,
    /// Inputs applied so far (0 = the start).
    pub cursor: usize,
    pub total: usize,
    pub playing: bool,
    /// Search steps per second while playing.
    pub speed: f64,
    /// Inputs due while playing but not yet played (the fraction carried between frames).
    pub carry: f64,
    /// Applies the inputs. Its engine slot is swapped with `App::engine` while it works,
    /// so the app shows the cursor's engine without cloning it.
    pub timeline: ReplayCursor<'static>,
    /// Where the timeline stops when it moves by search step, and by human action or
    /// caption (input positions, ascending; see `replay::Marks`).
    pub marks: Marks,
    /// The session's narration, by input position.
    pub captions: Vec<crate::session::Caption>,
    /// This play goes through the captions (`N`, or `P` with `--nonstop`); else it stops at each.
    pub through_captions: bool,
}

/// The positions the timeline stops at when it moves by more than one input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    /// The end of each search step: the state once the step's last reply has landed
    /// (0 and the end included), so one press shows one whole batch of work.
    pub steps: Vec<usize>,
    /// Right after each command a person gave that changes the tree (edit, prune,
    /// backtrack, expand, re-evaluate, continue; stepping and running are the steps').
    pub actions: Vec<usize>,
    /// How the whole session replays (exact, exact but for wording, or as recorded from
    /// the input where today's engine differs).
    pub fidelity: crate::session::fidelity::Fidelity,
}

/// Fastest playback, in search steps per second (`+` doubles the speed up to this).
pub const MAX_PLAY_SPEED: f64 = 64.0;
/// Playback speed when a replay opens, in search steps per second.
pub const PLAY_SPEED: f64 = 2.0;

/// What the app needs to start runs: the task, the run's header template and where
/// new sessions go.
#[derive(Clone)]
pub struct Setup {
    pub task: Arc<dyn TaskSource>,
    pub prompts: Option<PathBuf>,
    /// Header of new live runs (its input/index are replaced per problem).
    pub header: Header,
    pub sessions_dir: PathBuf,
    /// `--record FILE.jsonl`: the first live run records to this file (later ones go to
    /// `sessions_dir`, its folder).
    pub session_file: Option<PathBuf>,
    /// Where named memories live (`<dir>/memory/<name>.json`); `None`: the user data directory.
    pub memory_dir: Option<PathBuf>,
    /// Budgets, price and cache, as for headless runs.
    pub limits: RunLimits,
}

pub struct App {
    /// What starts runs, the loop's reports on the run in flight, the engine's revision.
    pub session: SessionState,
    /// Focus, layout, theme and the redraw counter.
    pub view: ViewState,
    /// The tree pane: selection, folding, following the newest node.
    pub tree: TreePane,
    pub popup: Option<Popup>,
    pub keymap: Keymap,
    /// A line for the status bar (errors, confirmations).
    pub message: Option<String>,
    /// The detail pane (its scroll and limit).
    pub detail: DetailPane,
    /// The transcript pane (its scroll and limits).
    pub transcript: TranscriptPane,
    /// The scores pane (its scroll, ranking and clickable lines).
    pub scores: ScoresPane,
    /// The help and caption popups' view (rows shown and scroll limit).
    pub help: HelpView,
    pub quit: bool,
    /// Where each pane was drawn last, for mouse clicks.
    pub areas: [Rect; 4],
    /// The problems of this explorer when it holds several (`tui --range A..B`).
    pub problems: Option<ProblemList>,
    /// The memory pane (`M`), when it is shown.
    pub memory_pane: Option<MemoryPane>,
    /// The transcript's memory lines, computed from the session's memory snapshot and
    /// the memory events so far (kept between frames; see `memory::NotesCache`).
    pub(crate) memory_notes: std::cell::RefCell<memory::NotesCache>,
    /// The find (`/`), when one is on: its matches, kept until the engine or the filter changes.
    pub find: Option<Find>,
    /// The filter (ctrl-f), when one is on.
    pub filter: Option<Filter>,
    /// Bumped whenever the nodes the filter shows may have changed (the find follows them).
    pub(crate) filter_generation: u64,
    /// A hand-off the loop carries out next (`V` pager, `E` editor, `y` clipboard).
    pub outgoing: Option<Outgoing>,
    /// `replay --follow`: the replayed file is read again as another process writes it.
    pub followed: Option<Following>,
    /// The registered pane open over the main panes (`tui::panes`), if one is.
    pub open_pane: Option<OpenPane>,
}

/// A registered pane while it is open: which one, and its state.
pub struct OpenPane {
    pub index: u8,
    pub pane: Box<dyn crate::tui::panes::Pane>,
}

/// What says the engine shown is unchanged since a pane computed something from the
/// whole tree: the engine revision, the events and the tree's length (`App::engine_key`).
pub type EngineKey = (u64, usize, usize);

impl App {
    /// The key of the engine shown now (see `EngineKey`).
    pub fn engine_key(&self) -> EngineKey {
        (self.session.revision, self.session.events.len(), self.session.run.engine.tree().len())
    }

    pub fn theme(&self) -> Theme {
        self.view.theme()
    }

    pub fn is_replay(&self) -> bool {
        self.session.replay.is_some()
    }

    /// The money spent so far, if the provider has a price.
    pub fn cost_usd(&self) -> Option<f64> {
        let t = &self.session.run.totals;
        self.session.header.price.as_ref().map(|p| p.cost(t.prompt_tokens, t.completion_tokens))
    }
}

/// A path as a person would type it: from the working directory when it is under it,
/// else from the home directory (`~/…`), else whole.
pub fn shown_path(path: &Path) -> String {
    if let Some(rel) = std::env::current_dir().ok().and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf)) {
        return rel.display().to_string();
    }
    match std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|home| path.strip_prefix(home).ok().map(Path::to_path_buf))
    {
        Some(rel) => format!("~/{}", rel.display()),
        None => path.display().to_string(),
    }
}
