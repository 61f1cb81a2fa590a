//! Panes opened by a key over the four main panes, each one file registered here with
//! one line (`registry!` below): its name (the keymap's `run = "NAME"`), its default
//! key, its description for the help and the key reference, and how it opens. An open
//! pane owns its state and scroll, takes the keys it handles (`Pane::handle`) and draws
//! itself from what the explorer shows (`Context`); keys it leaves (`Handled::No`) go on
//! to the explorer, so the search can be stepped while the pane watches it.
//!
//! This module reads the engine and the theme only: `tui/state` holds the open pane,
//! `tui/app` routes keys to it and `tui/ui` draws it.

use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;

use super::action::Action;
use super::theme::Theme;
use crate::engine::Engine;

/// What an open pane may read: the engine shown (live or at the replay cursor), the
/// theme, and what the keymap binds to the actions a pane names in its hints.
pub struct Context<'a> {
    pub engine: &'a Engine,
    pub theme: &'a Theme,
    /// The first key bound to an action, as text (empty if none).
    pub key: &'a dyn Fn(Action) -> String,
}

/// What became of a key given to an open pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// The pane acted on it.
    Yes,
    /// Not the pane's: the explorer acts on it.
    No,
    /// The pane closes.
    Close,
}

/// A pane registered below, while it is open.
pub trait Pane {
    /// A key pressed while the pane is open; `action` is what the keymap binds it to
    /// (scrolling keys arrive as `Up`, `PageDown`, ...).
    fn handle(&mut self, key: &KeyEvent, action: Option<Action>, cx: &Context) -> Handled;
    /// Draw into `area` (the four main panes' room). Its scroll is kept in range here.
    fn draw(&self, frame: &mut Frame, area: Rect, cx: &Context);
}

/// A registered pane: what the keymap, the help and the explorer need to know of it.
pub struct Kind {
    /// Its name: the keymap's `run = "NAME"`, and its title.
    pub name: &'static str,
    /// The key that opens (and closes) it unless the keymap binds that key otherwise.
    pub key: &'static str,
    /// What it shows and which keys work in it, for the help and the key reference.
    pub about: &'static str,
    /// The keys it takes while open and what they do, for the footer (which then shows
    /// these instead of the explorer's keys they shadow).
    pub hints: &'static [(&'static str, &'static str)],
    pub open: fn() -> Box<dyn Pane>,
}

macro_rules! registry {
    ($($pane:ident),* $(,)?) => {
        $(pub mod $pane;)*
        /// Every registered pane, in help order (`Action::Pane(i)` opens `PANES[i]`).
        pub const PANES: &[&Kind] = &[$(&$pane::KIND),*];
    };
}

registry!(calls);

/// The registered pane `index`, if there is one.
pub fn kind(index: u8) -> Option<&'static Kind> {
    PANES.get(usize::from(index)).copied()
}
