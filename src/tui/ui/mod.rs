//! Drawing: pure functions from a `View` (a snapshot of the app) to the screen.
//! Only the tree widget's scroll state is mutable, as ratatui's stateful widgets need.

mod board;
mod breaks;
pub(crate) mod browser;
mod caption;
pub(crate) mod detail;
pub(crate) mod memory;
pub(crate) mod outcome;
mod popup;
mod problems;
pub(crate) mod scores;
pub(crate) mod stats;
pub(crate) mod status;
pub(crate) mod transcript;
pub(crate) mod tree;

pub use popup::pane_actions;

use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders};
use ratatui::Frame;

use super::action::Action;
use super::state::{App, Pane, TreeState};
use super::theme::{Slot, Theme};
use crate::engine::NodeId;

/// The help popup's text, plain (for tests and hand-offs).
pub fn help_text(app: &App) -> String {
    let view = View::new(app, app.selected());
    crate::tui::state::plain_text(&popup::help_lines(&view))
}

/// What drawing needs, borrowed from the app.
pub struct View<'a> {
    pub app: &'a App,
    pub theme: Theme,
    /// The selected node (read before the tree state is lent to the tree widget).
    pub selected: NodeId,
}

impl<'a> View<'a> {
    pub fn new(app: &'a App, selected: NodeId) -> Self {
        View { app, theme: app.theme(), selected }
    }

    pub fn style(&self, slot: Slot) -> Style {
        self.theme.style(slot)
    }

    /// A pane's frame: title with its focus key, highlighted when focused.
    pub fn block(&self, pane: Pane, extra: &str) -> Block<'static> {
        let focused = self.app.view.focus == pane;
        let border = if focused { self.style(Slot::BorderFocused) } else { self.style(Slot::Border) };
        let n = pane.index() + 1;
        let mut title = vec![Span::styled(format!(" {n} {} ", pane.title()), self.style(Slot::Title))];
        if focused && self.app.view.zoomed {
            title.push(Span::styled(format!("zoomed, {} back ", self.key(Action::Zoom)), self.style(Slot::Dim)));
        }
        if !extra.is_empty() {
            title.push(Span::styled(format!("{extra} "), self.style(Slot::Dim)));
        }
        Block::default()
            .borders(Borders::ALL)
            .border_type(if focused { BorderType::Thick } else { BorderType::Plain })
            .border_style(border)
            .title(Line::from(title))
    }

    /// Keys bound to an action, for hints ("? help").
    pub fn key(&self, action: Action) -> String {
        self.app.keymap.key_hint(action).unwrap_or_default()
    }
}

/// The four pane areas, the header (top line) and the footer (bottom line) for a screen of `area`.
pub fn layout(area: Rect, split: u16, header_height: u16, footer_height: u16) -> ([Rect; 4], Rect, Rect) {
    let [header, main, footer] =
        Layout::vertical([Constraint::Length(header_height), Constraint::Min(3), Constraint::Length(footer_height)])
            .areas(area);
    let transcript_height = if main.height >= 40 {
        12
    } else if main.height >= 20 {
        6
    } else {
        4
    };
    let [top, transcript] = Layout::vertical([Constraint::Min(3), Constraint::Length(transcript_height)]).areas(main);
    let split = split.clamp(20, 80);
    let [left, right] = Layout::default()
        .direction(Direction::Horizontal)
        .constraints([Constraint::Percentage(split), Constraint::Percentage(100 - split)])
        .areas(top);
    // A third of the column, but at least 8 rows (half the column on a small screen):
    // a beam of 5 and its cut-off line fit at 80×24.
    let scores_height = (right.height / 3).max((right.height / 2).min(8)).clamp(3, 14);
    let [scores, detail] = Layout::vertical([Constraint::Length(scores_height), Constraint::Min(3)]).areas(right);
    ([left, scores, detail, transcript], header, footer)
}

/// Zoomed: the focused pane takes every pane's room; the others get none (so no click lands on them).
pub fn zoom(panes: &[Rect; 4], focus: Pane) -> [Rect; 4] {
    let all = panes.iter().fold(panes[0], |all, p| all.union(*p));
    let mut zoomed = [Rect::default(); 4];
    zoomed[focus.index()] = all;
    zoomed
}

/// Draw the whole app into a frame (lending it the tree state); returns the pane areas.
pub fn draw_app(frame: &mut Frame, app: &mut App) -> [Rect; 4] {
    // The find's and the filter's nodes, if the engine changed since they were computed.
    app.refresh_found();
    let selected = app.selected();
    let mut state = std::mem::take(&mut app.tree.state);
    let areas = {
        let view = View::new(app, selected);
        draw(frame, &view, &mut state)
    };
    app.tree.state = state;
    app.areas = areas;
    areas
}

/// Draw everything; returns where each pane went (for mouse clicks).
pub fn draw(frame: &mut Frame, view: &View, tree_state: &mut TreeState) -> [Rect; 4] {
    let area = frame.area();
    frame.render_widget(Block::default().style(view.style(Slot::Background)), area);
    let header_height = status::header_rows(view.app, area.width as usize).len() as u16;
    let footer_height = status::footer_height(view.app, area.width as usize);
    let (laid_out, header, footer) = layout(area, view.app.view.split, header_height, footer_height);
    let panes = if view.app.view.zoomed { zoom(&laid_out, view.app.view.focus) } else { laid_out };
    let shown = |pane: Pane| !panes[pane.index()].is_empty();
    if shown(Pane::Tree) {
        tree::draw(frame, view, tree_state, panes[0]);
    }
    if shown(Pane::Scores) {
        scores::draw(frame, view, panes[1]);
    }
    if shown(Pane::Detail) {
        detail::draw(frame, view, panes[2]);
    }
    if shown(Pane::Transcript) {
        transcript::draw(frame, view, panes[3]);
    }
    if shown(Pane::Tree) {
        caption::draw(frame, view, panes[0]);
    }
    if view.app.memory_pane.is_some() {
        memory::draw(frame, view, memory::area(&laid_out));
    }
    if let Some(open) = &view.app.open_pane {
        // A registered pane has the four panes' room (the header and footer stay).
        let key = |a: Action| view.key(a);
        let cx = crate::tui::panes::Context { engine: &view.app.session.run.engine, theme: &view.theme, key: &key };
        open.pane.draw(frame, laid_out.iter().fold(laid_out[0], |all, p| all.union(*p)), &cx);
    }
    status::draw_header(frame, view, header);
    status::draw_footer(frame, view, footer);
    popup::draw(frame, view, area);
    clean_cells(frame.buffer_mut());
    panes
}

/// Text from models and files may hold bidi controls (U+202E...) that ratatui passes to the
/// terminal inside a cell: drop them (and any control character) from every drawn cell.
pub fn clean_cells(buffer: &mut ratatui::buffer::Buffer) {
    for cell in buffer.content.iter_mut() {
        if let Some(clean) = crate::safe_text::cell_safe(cell.symbol()) {
            cell.set_symbol(&clean);
        }
    }
}

#[cfg(test)]
mod clean_cells_tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::text::Span;
    use ratatui::widgets::Widget;

    #[test]
    fn no_bidi_or_control_character_is_left_in_a_drawn_cell() {
        let area = Rect::new(0, 0, 40, 1);
        let mut buffer = Buffer::empty(area);
        // A span (as the tree and transcript draw) appends zero-width characters to a cell.
        Span::raw("ab\u{202e}cd\u{2066}e\u{200f}f\u{1b}[2J").render(area, &mut buffer);
        let raw: String = buffer.content.iter().map(|c| c.symbol()).collect();
        assert!(raw.contains('\u{202e}'), "ratatui keeps the override in a cell: {raw:?}");
        super::clean_cells(&mut buffer);
        let drawn: String = buffer.content.iter().map(|c| c.symbol()).collect();
        assert!(!drawn.chars().any(crate::safe_text::is_unsafe), "{drawn:?}");
        assert!(drawn.starts_with("abcdef"), "{drawn:?}");
    }
}
