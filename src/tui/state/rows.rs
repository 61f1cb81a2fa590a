//! The tree pane's state: which nodes are closed, the selection, the scroll offset, and
//! the flattened list of the rows it shows (every node whose ancestors are all open, in
//! depth-first order). The list is kept up to date as the engine adds nodes (each new
//! node goes in after its parent's shown subtree, and when the timeline goes back the
//! rows of the nodes it took away are dropped: they are the newest, and below nodes that
//! stay) and rebuilt only when a node is opened or closed or many nodes came at once, so
//! a frame draws the rows in view and nothing else, however big the tree.
//!
//! It replaces `tui_tree_widget::TreeState` with the same methods and the same look:
//! identifiers are paths of node ids from the root, and a node is open unless closed.

use std::collections::HashSet;

use ratatui::layout::{Position, Rect};

use crate::engine::{NodeId, SearchTree};

/// One shown row: a node and its depth (the root is at 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub id: usize,
    pub depth: usize,
}

/// New nodes past which the list is rebuilt rather than patched node by node
/// (each patch scans for the parent's row; a rebuild is one walk of the tree).
const PATCH_LIMIT: usize = 32;

#[derive(Debug, Default)]
pub struct TreeState {
    /// Nodes a person closed (a node without children shows as a leaf either way).
    closed: HashSet<usize>,
    /// The selected node's path from the root (empty: nothing selected).
    selected: Vec<usize>,
    offset: usize,
    ensure_selected_in_view: bool,
    rows: Vec<Row>,
    /// The tree length the rows were made for.
    synced: usize,
    /// The open/closed set changed since the rows were made.
    dirty: bool,
    /// Where the rows were last drawn (inside the border), and which row is on which line.
    last_area: Rect,
    last_rendered: Vec<(u16, usize)>,
    /// A filter (ctrl-f): the nodes it shows, by id (nodes past its end are hidden).
    filter: Option<Vec<bool>>,
}

impl TreeState {
    /// The selected node's path from the root.
    pub fn selected(&self) -> &[usize] {
        &self.selected
    }

    /// Select the node at the end of `path` (its ids from the root), scrolled into view at the next frame.
    pub fn select(&mut self, path: Vec<usize>) -> bool {
        self.ensure_selected_in_view = true;
        let changed = self.selected != path;
        self.selected = path;
        changed
    }

    pub fn is_open(&self, id: usize) -> bool {
        !self.closed.contains(&id)
    }

    /// The nodes closed (by a person; every other node with children is open).
    pub fn closed(&self) -> &HashSet<usize> {
        &self.closed
    }

    /// Open the node at the end of `path`.
    pub fn open(&mut self, path: Vec<usize>) -> bool {
        path.last().is_some_and(|&id| self.open_id(id))
    }

    pub fn open_id(&mut self, id: usize) -> bool {
        let changed = self.closed.remove(&id);
        self.dirty |= changed;
        changed
    }

    pub fn close_id(&mut self, id: usize) -> bool {
        let changed = self.closed.insert(id);
        self.dirty |= changed;
        changed
    }

    /// Show only the nodes `shown` marks (by id), or every node again (`None`).
    pub fn set_filter(&mut self, shown: Option<Vec<bool>>) {
        self.filter = shown;
        self.dirty = true;
    }

    /// Whether a filter is on.
    pub fn filtered(&self) -> bool {
        self.filter.is_some()
    }

    /// Whether the filter (if one is on) lets node `id` be shown.
    pub fn shows(&self, id: usize) -> bool {
        self.filter.as_ref().is_none_or(|shown| shown.get(id).copied().unwrap_or(false))
    }

    /// Keep closed only the nodes `keep` says (the others open again).
    pub fn retain_closed(&mut self, keep: impl Fn(usize) -> bool) {
        let before = self.closed.len();
        self.closed.retain(|&id| keep(id));
        self.dirty |= self.closed.len() != before;
    }

    /// Open the selected node if it is closed, close it if it is open and has children.
    pub fn toggle_selected(&mut self, tree: &SearchTree) -> bool {
        let Some(&id) = self.selected.last() else { return false };
        self.ensure_selected_in_view = true;
        if !self.is_open(id) {
            return self.open_id(id);
        }
        has_children(tree, id) && self.close_id(id)
    }

    /// Close the selected node, or if it is closed or a leaf, select its parent.
    pub fn key_left(&mut self, tree: &SearchTree) -> bool {
        let Some(&id) = self.selected.last() else { return false };
        self.ensure_selected_in_view = true;
        if has_children(tree, id) && self.is_open(id) {
            return self.close_id(id);
        }
        if self.selected.len() > 1 {
            self.selected.pop();
            return true;
        }
        false
    }

    /// Open the selected node.
    pub fn key_right(&mut self) -> bool {
        let Some(&id) = self.selected.last() else { return false };
        self.ensure_selected_in_view = true;
        self.open_id(id)
    }

    /// The rows shown (as of the last `sync`).
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The first row shown in the pane.
    pub fn offset(&self) -> usize {
        self.offset
    }

    fn selected_index(&self) -> Option<usize> {
        let id = *self.selected.last()?;
        self.rows.iter().position(|r| r.id == id)
    }

    /// Select the row `change` makes of the selected row's index (clamped to the rows).
    pub fn select_relative(&mut self, change: impl FnOnce(Option<usize>) -> usize) -> bool {
        let Some(last) = self.rows.len().checked_sub(1) else { return false };
        let index = change(self.selected_index()).min(last);
        let path = self.path_of_row(index);
        self.select(path)
    }

    pub fn key_up(&mut self) -> bool {
        self.select_relative(|c| c.map_or(usize::MAX, |c| c.saturating_sub(1)))
    }

    pub fn key_down(&mut self) -> bool {
        self.select_relative(|c| c.map_or(0, |c| c.saturating_add(1)))
    }

    pub fn select_first(&mut self) -> bool {
        self.select_relative(|_| 0)
    }

    pub fn select_last(&mut self) -> bool {
        self.select_relative(|_| usize::MAX)
    }

    /// The path of the node on row `index`: the rows above it at each smaller depth.
    fn path_of_row(&self, index: usize) -> Vec<usize> {
        let row = self.rows[index];
        let mut path = vec![0; row.depth + 1];
        path[row.depth] = row.id;
        let mut want = row.depth;
        for r in self.rows[..index].iter().rev() {
            if want == 0 {
                break;
            }
            if r.depth < want {
                want = r.depth;
                path[want] = r.id;
            }
        }
        path
    }

    /// The node drawn on the line at `position`, if any.
    pub fn rendered_at(&self, position: Position) -> Option<usize> {
        if !self.last_area.contains(position) {
            return None;
        }
        self.last_rendered.iter().rev().find(|(y, _)| position.y >= *y).map(|&(_, id)| id)
    }

    /// A click on a row selects it, or toggles it if it is already selected.
    pub fn click_at(&mut self, position: Position, tree: &SearchTree) -> bool {
        let Some(id) = self.rendered_at(position) else { return false };
        if self.selected.last() == Some(&id) {
            return self.toggle_selected(tree);
        }
        match self.rows.iter().position(|r| r.id == id) {
            Some(index) => {
                let path = self.path_of_row(index);
                self.select(path)
            }
            None => false,
        }
    }

    /// Bring the rows up to date with `tree`: patch in the nodes added since the last
    /// sync, drop those taken away (a tree is only ever cut back to an earlier length: a
    /// node's id is larger than its parent's, so the nodes left keep their order), or
    /// rebuild the list if nodes were opened or closed or many were added.
    pub fn sync(&mut self, tree: &SearchTree) {
        let len = tree.len();
        if !self.dirty && len < self.synced && !self.rows.is_empty() {
            self.rows.retain(|r| r.id < len);
        } else if self.dirty || len < self.synced || len - self.synced > PATCH_LIMIT || self.rows.is_empty() {
            self.rows = flatten_shown(tree, &self.closed, self.filter.as_deref());
        } else {
            for id in self.synced..len {
                self.patch(tree, id);
            }
        }
        self.synced = len;
        self.dirty = false;
    }

    /// Insert node `id` (the newest child of its parent) after its parent's shown subtree.
    fn patch(&mut self, tree: &SearchTree, id: usize) {
        let Some(parent) = tree.node(NodeId(id)).parent else { return };
        if !self.is_open(parent.0) || !self.shows(id) {
            return;
        }
        let Some(at) = self.rows.iter().rposition(|r| r.id == parent.0) else { return };
        let depth = self.rows[at].depth;
        let end = self.rows[at + 1..].iter().position(|r| r.depth <= depth).map_or(self.rows.len(), |i| at + 1 + i);
        self.rows.insert(end, Row { id, depth: depth + 1 });
    }

    /// Fix the scroll offset for a pane `height` rows high (the selection in view if
    /// asked) and return the range of rows to draw.
    pub fn window(&mut self, height: usize) -> std::ops::Range<usize> {
        let len = self.rows.len();
        if height == 0 || len == 0 {
            return 0..0;
        }
        let ensure = if self.ensure_selected_in_view { self.selected_index() } else { None };
        let mut start = self.offset.min(len - 1);
        if let Some(i) = ensure {
            start = start.min(i);
        }
        let mut end = (start + height).min(len);
        if let Some(i) = ensure.filter(|&i| i >= end) {
            end = i + 1;
            start = end.saturating_sub(height);
        }
        self.offset = start;
        self.ensure_selected_in_view = false;
        start..end
    }

    /// Note where the rows were drawn, for clicks.
    pub fn drawn(&mut self, area: Rect, lines: Vec<(u16, usize)>) {
        self.last_area = area;
        self.last_rendered = lines;
    }
}

fn has_children(tree: &SearchTree, id: usize) -> bool {
    tree.get(NodeId(id)).is_some_and(|n| !n.children.is_empty())
}

/// Every node whose ancestors are all open, depth first, children in order.
pub fn flatten(tree: &SearchTree, closed: &HashSet<usize>) -> Vec<Row> {
    flatten_shown(tree, closed, None)
}

/// `flatten`, keeping only the nodes `shown` marks (by id) when a filter is given (the
/// root is always shown).
fn flatten_shown(tree: &SearchTree, closed: &HashSet<usize>, shown: Option<&[bool]>) -> Vec<Row> {
    let shows = |id: NodeId| shown.is_none_or(|s| s.get(id.0).copied().unwrap_or(false));
    let mut rows = Vec::new();
    let mut stack = vec![(tree.root(), 0usize)];
    while let Some((id, depth)) = stack.pop() {
        rows.push(Row { id: id.0, depth });
        if !closed.contains(&id.0) {
            stack.extend(tree.node(id).children.iter().rev().filter(|&&c| shows(c)).map(|&c| (c, depth + 1)));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::SplitMix64;
    use crate::engine::{NodeStatus, Origin};

    /// The rows a full walk of the tree gives for the state's closed set.
    fn walked(tree: &SearchTree, state: &TreeState) -> Vec<Row> {
        flatten(tree, state.closed())
    }

    #[test]
    fn the_patched_rows_match_a_full_walk_after_adds_opens_closes_and_prunes() {
        let mut rng = SplitMix64::new(15);
        let mut tree = SearchTree::new("4 5 6 10");
        let mut state = TreeState::default();
        state.sync(&tree);
        let mut patched = 0;
        // Earlier trees of this history, to go back to as the timeline does (an earlier
        // state of the same run: the tree cut back to an earlier length).
        let mut earlier: Vec<SearchTree> = Vec::new();
        let (mut cut_back, mut longest) = (0, 0);
        for round in 0..3000 {
            if round % 50 == 0 {
                earlier.push(tree.clone());
            }
            // Now and then back to an earlier tree (its rows dropped, not rebuilt), and on from there.
            if round % 71 == 70 {
                let i = earlier.len() - 1 - (rng.next_u64() % earlier.len().min(3) as u64) as usize;
                let back = earlier[i].clone();
                if back.len() < tree.len() {
                    // What came after it is another history from here on.
                    earlier.truncate(i + 1);
                    tree = back;
                    state.sync(&tree);
                    assert_eq!(state.rows(), walked(&tree, &state).as_slice(), "back, round {round}");
                    cut_back += 1;
                }
            }
            let pick = |rng: &mut SplitMix64, tree: &SearchTree| NodeId((rng.next_u64() % tree.len() as u64) as usize);
            match rng.next_u64() % 10 {
                // Mostly adds, a few at a time (patched), now and then a burst (rebuilt).
                0..=5 => {
                    let n = if round % 97 == 0 { PATCH_LIMIT + 5 } else { 1 + (rng.next_u64() % 3) as usize };
                    for _ in 0..n {
                        let parent = pick(&mut rng, &tree);
                        tree.add_child(parent, format!("t{round}"), String::new(), Origin::Model);
                    }
                    patched += usize::from(n <= PATCH_LIMIT);
                }
                6 => {
                    let node = pick(&mut rng, &tree);
                    state.select(vec![node.0]);
                    state.toggle_selected(&tree);
                }
                7 => {
                    let node = pick(&mut rng, &tree);
                    state.close_id(node.0);
                }
                8 => {
                    let node = pick(&mut rng, &tree);
                    state.open_id(node.0);
                }
                _ => {
                    let node = pick(&mut rng, &tree);
                    tree.node_mut(node).status = NodeStatus::Pruned;
                }
            }
            state.sync(&tree);
            assert_eq!(state.rows(), walked(&tree, &state).as_slice(), "round {round}");
            longest = longest.max(tree.len());
        }
        assert!(patched > 1000, "most adds were patched in, not rebuilt");
        assert!(cut_back > 10, "{cut_back} times back");
        assert!(longest > 500, "the tree grew to {longest} nodes");
    }

    #[test]
    fn navigation_walks_the_rows_and_paths_come_from_the_rows_above() {
        let mut tree = SearchTree::new("root");
        let a = tree.add_child(NodeId(0), "a".into(), String::new(), Origin::Model);
        let b = tree.add_child(NodeId(0), "b".into(), String::new(), Origin::Model);
        let a1 = tree.add_child(a, "a1".into(), String::new(), Origin::Model);
        let b1 = tree.add_child(b, "b1".into(), String::new(), Origin::Model);
        let mut state = TreeState::default();
        state.sync(&tree);
        let ids: Vec<usize> = state.rows().iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![0, a.0, a1.0, b.0, b1.0]);
        state.select_last();
        assert_eq!(state.selected(), &[0, b.0, b1.0]);
        state.key_up();
        assert_eq!(state.selected(), &[0, b.0]);
        // Left closes an open node, then goes to the parent; right opens it again.
        state.key_left(&tree);
        state.sync(&tree);
        assert_eq!(state.rows().len(), 4, "b's child is hidden");
        state.key_left(&tree);
        assert_eq!(state.selected(), &[0]);
        state.select(vec![0, b.0]);
        state.key_right();
        state.sync(&tree);
        assert_eq!(state.rows().len(), 5);
        // A leaf has nothing to close: left goes to its parent.
        state.select(vec![0, a.0, a1.0]);
        state.key_left(&tree);
        assert_eq!(state.selected(), &[0, a.0]);
        // The window keeps the selection in view.
        state.select_last();
        assert_eq!(state.window(2), 3..5);
        state.select_first();
        assert_eq!(state.window(2), 0..2);
    }
}
