//! The explorer's panes as components (the way gitui's `components` are built): each
//! owns its scroll offset and the limit the last frame measured for it, and moves
//! itself by a [`Scroll`]. `App` only says which pane the key goes to (the focus) and
//! how far a page is (from the pane's area as drawn).

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

use super::rows::TreeState;
use super::EngineKey;
use crate::engine::{NodeId, SearchTree as Tree};
use crate::tui::action::Action;

/// A move within a pane: a line, a page (`page` lines, from the pane's height), or an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
}

impl Scroll {
    /// The move an action asks for, if it is one (`Top` and `Bottom` are home and end).
    pub fn of(action: Action) -> Option<Scroll> {
        Some(match action {
            Action::Up => Scroll::Up,
            Action::Down => Scroll::Down,
            Action::PageUp => Scroll::PageUp,
            Action::PageDown => Scroll::PageDown,
            Action::Top => Scroll::Home,
            Action::Bottom => Scroll::End,
            _ => return None,
        })
    }

    /// `at` moved by this, in `0..=max` (`page` lines a page).
    fn within(self, at: u16, page: u16, max: u16) -> u16 {
        let at = at.min(max);
        match self {
            Scroll::Up => at.saturating_sub(1),
            Scroll::Down => at.saturating_add(1),
            Scroll::PageUp => at.saturating_sub(page),
            Scroll::PageDown => at.saturating_add(page),
            Scroll::Home => 0,
            Scroll::End => max,
        }
        .min(max)
    }
}

/// The tree pane: the tree widget's state (selection, open nodes, filter), the nodes the
/// person closed by hand, whether the selection follows the newest node, and the count
/// of solutions its title shows (kept between frames).
pub struct TreePane {
    pub state: TreeState,
    /// Nodes closed by hand: they stay closed when new nodes open the way to others.
    collapsed: BTreeSet<usize>,
    /// Keep the selection on the newest node while the search runs (on at the start,
    /// off once the person moves the selection, toggled by `t`).
    follow: bool,
    /// The count of solutions, with the engine key it is for.
    pub(crate) solved_cache: Cell<Option<(EngineKey, usize)>>,
}

impl Default for TreePane {
    fn default() -> Self {
        TreePane {
            state: TreeState::default(),
            collapsed: BTreeSet::new(),
            follow: true,
            solved_cache: Cell::default(),
        }
    }
}

impl TreePane {
    /// A new tree (a new run or session): nothing closed, following again.
    pub fn reset(&mut self) {
        self.state = TreeState::default();
        self.collapsed.clear();
        self.follow = true;
    }

    /// Whether the selection follows the newest node.
    pub fn following(&self) -> bool {
        self.follow
    }

    pub fn set_following(&mut self, on: bool) {
        self.follow = on;
    }

    /// The person moved the selection: it stays where they put it.
    pub fn stop_following(&mut self) {
        self.follow = false;
    }

    /// Open the nodes on `path` (ids from the root down): they are no longer collapsed
    /// (the widget opens them at the next `open_all`).
    pub fn reveal(&mut self, path: &[usize]) {
        for id in path {
            self.collapsed.remove(id);
        }
    }

    /// Select the node at the end of `path`, opening its ancestors.
    pub fn select(&mut self, path: Vec<usize>) {
        if let Some((_, above)) = path.split_last() {
            self.reveal(above);
        }
        self.open_all();
        self.state.select(path);
    }

    /// Remember as collapsed by hand the nodes closed in the widget since `open_all`.
    pub fn keep_closed(&mut self) {
        self.collapsed.extend(self.state.closed().iter().copied());
    }

    /// Open every node except the ones collapsed by hand.
    pub fn open_all(&mut self) {
        let collapsed = &self.collapsed;
        self.state.retain_closed(|id| collapsed.contains(&id));
    }

    /// Left: close the selected node, or go to its parent.
    pub fn left(&mut self, tree: &Tree) {
        self.follow = false;
        self.state.key_left(tree);
    }

    /// Right: open `node` (the selected one), or go to its first child.
    pub fn right(&mut self, node: NodeId) {
        self.follow = false;
        self.collapsed.remove(&node.0);
        self.state.key_right();
    }

    /// Fold or unfold `node` (the selected one), remembering it as closed by hand.
    pub fn toggle(&mut self, node: NodeId, tree: &Tree) {
        if !self.collapsed.remove(&node.0) {
            self.collapsed.insert(node.0);
        }
        self.state.toggle_selected(tree);
    }

    /// Move the selection by `how` over the rows shown (`page` rows a page).
    pub fn scroll(&mut self, how: Scroll, page: u16, tree: &Tree) {
        self.follow = false;
        self.state.sync(tree);
        let page = usize::from(page);
        match how {
            Scroll::Up => {
                self.state.key_up();
            }
            Scroll::Down => {
                self.state.key_down();
            }
            Scroll::PageUp => {
                self.state.select_relative(|c| c.map_or(0, |c| c.saturating_sub(page)));
            }
            Scroll::PageDown => {
                self.state.select_relative(|c| c.map_or(0, |c| c.saturating_add(page)));
            }
            Scroll::Home => {
                self.state.select_first();
            }
            Scroll::End => {
                self.state.select_last();
            }
        }
    }
}

/// The detail pane: its scroll offset and the largest useful one, in wrapped (screen)
/// lines, as the last frame measured it (`u16::MAX` before the first frame).
pub struct DetailPane {
    pub scroll: u16,
    pub limit: Cell<u16>,
}

impl Default for DetailPane {
    fn default() -> Self {
        DetailPane { scroll: 0, limit: Cell::new(u16::MAX) }
    }
}

impl DetailPane {
    /// Back to the top (a new node shown).
    pub fn home(&mut self) {
        self.scroll = 0;
    }

    /// Offsets count wrapped lines, up to the last frame's limit (so `up` after `end` moves at once).
    pub fn scroll(&mut self, how: Scroll, page: u16) {
        self.scroll = how.within(self.scroll, page, self.limit.get());
    }

    /// The offset to draw at, now that the frame measured `limit` (which it keeps).
    pub fn measured(&self, limit: u16) -> u16 {
        self.limit.set(limit);
        self.scroll.min(limit)
    }
}

/// The transcript pane: lines up from where it rests (the newest line, or the selected
/// ReAct step; below zero, lines down from there), and how far up and down it can go as
/// the last frame measured (`u16::MAX` before the first frame).
pub struct TranscriptPane {
    pub scroll: i32,
    pub limit: Cell<(u16, u16)>,
}

impl Default for TranscriptPane {
    fn default() -> Self {
        TranscriptPane { scroll: 0, limit: Cell::new((u16::MAX, u16::MAX)) }
    }
}

impl TranscriptPane {
    /// Back to where it rests.
    pub fn home(&mut self) {
        self.scroll = 0;
    }

    /// Move by `how` within the last frame's limits (home is the top, end where it rests
    /// or below).
    pub fn scroll(&mut self, how: Scroll, page: u16) {
        let (up, down) = self.limit.get();
        let (up, down, page) = (i32::from(up), -i32::from(down), i32::from(page));
        let at = self.scroll.clamp(down, up);
        self.scroll = match how {
            Scroll::Up => at + 1,
            Scroll::Down => at - 1,
            Scroll::PageUp => at + page,
            Scroll::PageDown => at - page,
            Scroll::Home => up,
            Scroll::End => down,
        }
        .clamp(down, up)
    }

    /// The offset to draw at, now that the frame measured `up` and `down` (which it keeps).
    pub fn measured(&self, up: u16, down: u16) -> i32 {
        self.limit.set((up, down));
        self.scroll.clamp(-i32::from(down), i32::from(up))
    }
}

/// The scores pane: its first shown row, the ranking kept between frames, and the node
/// on each line inside its frame as the last frame drew it (for clicks).
#[derive(Default)]
pub struct ScoresPane {
    pub scroll: u16,
    pub(crate) rank_cache: RefCell<super::scores::RankCache>,
    /// None for a heading or the cut-off line.
    pub lines: RefCell<Vec<Option<NodeId>>>,
}

impl ScoresPane {
    /// Back to the best (a new step or run is read from the best down).
    pub fn home(&mut self) {
        self.scroll = 0;
    }

    /// Move by `how` within `0..=max` (the pane's largest useful scroll).
    pub fn scroll(&mut self, how: Scroll, page: u16, max: usize) {
        let page = usize::from(page);
        let now = usize::from(self.scroll).min(max);
        let next = match how {
            Scroll::Up => now.saturating_sub(1),
            Scroll::Down => now + 1,
            Scroll::PageUp => now.saturating_sub(page),
            Scroll::PageDown => now + page,
            Scroll::Home => 0,
            Scroll::End => max,
        };
        self.scroll = next.min(max) as u16;
    }

    /// The node on line `line` inside the frame, as last drawn.
    pub fn node_at(&self, line: usize) -> Option<NodeId> {
        self.lines.borrow().get(line).copied().flatten()
    }
}

/// The help and caption popups' view: the rows the last frame showed and the largest
/// useful offset (their scroll itself lives in the popup, which opens at 0).
pub struct HelpView {
    pub view: Cell<(u16, u16)>,
}

impl Default for HelpView {
    fn default() -> Self {
        HelpView { view: Cell::new((10, u16::MAX)) }
    }
}

impl HelpView {
    /// The rows shown and the largest useful offset, as last drawn.
    pub fn get(&self) -> (u16, u16) {
        self.view.get()
    }

    /// What a frame drew: `shown` rows, and `limit` the largest useful offset.
    pub fn set(&self, shown: u16, limit: u16) {
        self.view.set((shown, limit));
    }

    /// `scroll` moved by `how`: by the rows the last frame showed (one kept from the page
    /// before), never past the end.
    pub fn scroll(&self, scroll: u16, how: Scroll) -> u16 {
        let (shown, limit) = self.view.get();
        how.within(scroll, shown.saturating_sub(1).max(1), limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detail_pane_scrolls_within_the_limit_the_last_frame_measured() {
        let mut pane = DetailPane::default();
        // Before the first frame the limit is unknown: a line down still moves.
        pane.scroll(Scroll::Down, 3);
        assert_eq!(pane.scroll, 1);
        assert_eq!(pane.measured(5), 1);
        pane.scroll(Scroll::End, 3);
        assert_eq!(pane.scroll, 5);
        pane.scroll(Scroll::PageDown, 3);
        assert_eq!(pane.scroll, 5, "never past the end");
        pane.scroll(Scroll::PageUp, 3);
        assert_eq!(pane.scroll, 2);
        // A shorter text (a new frame): up moves from its end at once.
        assert_eq!(pane.measured(1), 1);
        pane.scroll(Scroll::Up, 3);
        assert_eq!(pane.scroll, 0);
        pane.scroll(Scroll::Down, 3);
        pane.home();
        assert_eq!(pane.scroll, 0);
    }

    #[test]
    fn the_transcript_scrolls_up_and_down_from_where_it_rests() {
        let mut pane = TranscriptPane::default();
        assert_eq!(pane.measured(3, 2), 0);
        pane.scroll(Scroll::Home, 4);
        assert_eq!(pane.scroll, 3);
        pane.scroll(Scroll::Up, 4);
        assert_eq!(pane.scroll, 3, "never above the first line");
        pane.scroll(Scroll::PageDown, 4);
        assert_eq!(pane.scroll, -1);
        pane.scroll(Scroll::End, 4);
        assert_eq!(pane.scroll, -2);
        pane.scroll = 10;
        assert_eq!(pane.measured(3, 2), 3, "drawn within the limits");
        pane.scroll(Scroll::Down, 4);
        assert_eq!(pane.scroll, 2);
    }

    #[test]
    fn the_scores_pane_and_the_help_view_stop_at_their_ends() {
        let mut scores = ScoresPane::default();
        scores.scroll(Scroll::PageDown, 3, 4);
        assert_eq!(scores.scroll, 3);
        scores.scroll(Scroll::PageDown, 3, 4);
        assert_eq!(scores.scroll, 4);
        scores.scroll(Scroll::Up, 3, 2);
        assert_eq!(scores.scroll, 1, "from the new end");
        scores.home();
        assert_eq!(scores.scroll, 0);
        assert_eq!(scores.node_at(0), None);

        let help = HelpView::default();
        help.set(5, 7);
        assert_eq!(help.scroll(0, Scroll::PageDown), 4, "a page keeps one row of the one before");
        assert_eq!(help.scroll(0, Scroll::End), 7);
        assert_eq!(help.scroll(100, Scroll::Up), 6);
        assert_eq!(help.scroll(3, Scroll::Home), 0);
    }

    #[test]
    fn the_tree_pane_follows_until_the_selection_is_moved_and_again_after_a_reset() {
        let mut tree = TreePane::default();
        assert!(tree.following());
        tree.stop_following();
        assert!(!tree.following());
        tree.reset();
        assert!(tree.following());
    }

    #[test]
    fn actions_map_to_scrolls() {
        assert_eq!(Scroll::of(Action::Top), Some(Scroll::Home));
        assert_eq!(Scroll::of(Action::Bottom), Some(Scroll::End));
        assert_eq!(Scroll::of(Action::PageUp), Some(Scroll::PageUp));
        assert_eq!(Scroll::of(Action::Quit), None);
    }
}
