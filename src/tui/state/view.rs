//! What the explorer looks like, apart from what it shows: the focused pane, the
//! layout (split, zoom), the theme, and the redraw counter.

use super::Pane;
use crate::tui::theme::{Theme, ThemeSet};

pub struct ViewState {
    /// The pane keys go to.
    pub focus: Pane,
    /// Left column width in percent.
    pub split: u16,
    /// `z`: the focused pane has the whole screen.
    pub zoomed: bool,
    /// `T`: the detail pane shows each reply's thinking whole (else its first lines).
    pub thinking_open: bool,
    pub themes: ThemeSet,
    pub theme_name: String,
    pub no_color: bool,
    /// Bumped on every change that needs a redraw.
    pub version: u64,
}

impl ViewState {
    /// The tree focused, the left column at 48%, theme `theme` (else the first one).
    pub fn new(themes: ThemeSet, theme: &str) -> ViewState {
        let theme_name = themes.get_or_first(theme).name.clone();
        ViewState {
            focus: Pane::Tree,
            split: 48,
            zoomed: false,
            thinking_open: false,
            themes,
            theme_name,
            no_color: false,
            version: 0,
        }
    }

    /// The theme drawn with (without colours under `--no-color`).
    pub fn theme(&self) -> Theme {
        let t = self.themes.get_or_first(&self.theme_name).clone();
        if self.no_color {
            t.no_color()
        } else {
            t
        }
    }

    /// The next theme of the set; returns its name.
    pub fn next_theme(&mut self) -> &str {
        self.theme_name = self.themes.next_after(&self.theme_name).name.clone();
        &self.theme_name
    }

    /// Focus the next pane (`forward`) or the one before, round.
    pub fn cycle_focus(&mut self, forward: bool) {
        let i = self.focus.index();
        let n = Pane::ALL.len();
        let next = if forward { (i + 1) % n } else { (i + n - 1) % n };
        self.focus = Pane::ALL[next];
    }

    /// The left column 5% wider (`wider`) or narrower, between 20% and 80%.
    pub fn resize(&mut self, wider: bool) {
        self.split = if wider { (self.split + 5).min(80) } else { self.split.saturating_sub(5).max(20) };
    }

    /// Something changed that needs a redraw.
    pub fn touch(&mut self) {
        self.version += 1;
    }
}
