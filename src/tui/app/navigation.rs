//! The selection in the tree, folding, scrolling and jumps.

use super::*;

impl App {
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

    pub(super) fn select(&mut self, node: NodeId) {
        if !self.run.engine.tree().contains(node) {
            return;
        }
        let path = self.path_to(node);
        for i in 1..path.len() {
            self.collapsed.remove(&path[i - 1]);
        }
        self.open_all();
        self.tree_state.select(path);
        self.selection_moved();
    }

    /// The selection moved: the detail pane shows the new node from its top, and a ReAct
    /// transcript the new step (a scroll kept from the old one would hide it).
    pub(super) fn selection_moved(&mut self) {
        self.detail_scroll = 0;
        if self.header.params.method.has_react_steps() {
            self.transcript_scroll = 0;
        }
    }

    /// Whether the selection follows the newest node.
    pub fn following(&self) -> bool {
        self.follow
    }

    /// Open the way down to `node`'s children: it and its ancestors are no longer
    /// collapsed (the tree widget opens them at the next `open_all`).
    pub(super) fn reveal(&mut self, node: NodeId) {
        for id in self.path_to(node) {
            self.collapsed.remove(&id);
        }
    }

    /// Where the selection lands when the search is over: a solution among the final
    /// states (best ranked first), else the best-ranked final state, else the best state.
    pub fn landing(&self) -> Option<NodeId> {
        let engine = &self.run.engine;
        let tree = engine.tree();
        let finals: Vec<NodeId> = engine
            .outcome()
            .map(|o| o.finals.iter().copied().filter(|&n| tree.contains(n)).collect())
            .unwrap_or_default();
        finals
            .iter()
            .copied()
            .find(|&n| tree.node(n).status == NodeStatus::Solution)
            .or_else(|| finals.first().copied())
            .or_else(|| self.best_node())
    }

    /// Remember as collapsed by hand the nodes closed in the tree pane since `open_all`.
    pub(super) fn keep_closed(&mut self) {
        self.collapsed.extend(self.tree_state.closed().iter().copied());
    }

    /// Open every node except the ones collapsed by hand.
    pub fn open_all(&mut self) {
        let collapsed = &self.collapsed;
        self.tree_state.retain_closed(|id| collapsed.contains(&id));
    }

    /// How far PageUp/PageDown move in `pane`: its visible rows as the last frame drew
    /// them, less one line kept from the page before (at least one line).
    pub fn page(&self, pane: Pane) -> u16 {
        let inner = self.areas[pane.index()].height.saturating_sub(2);
        let rows = match pane {
            Pane::Scores => super::super::ui::scores::visible_rows(self) as u16,
            _ => inner,
        };
        rows.saturating_sub(1).max(1)
    }

    pub(super) fn scroll(&mut self, action: Action) {
        let page = self.page(self.focus);
        match self.focus {
            Pane::Scores => {
                // The ranked candidates (or the vote) scroll within the pane.
                let max = super::super::ui::scores::max_scroll(self);
                let now = usize::from(self.scores_scroll).min(max);
                let next = match action {
                    Action::Up => now.saturating_sub(1),
                    Action::Down => now + 1,
                    Action::PageUp => now.saturating_sub(page as usize),
                    Action::PageDown => now + page as usize,
                    Action::Top => 0,
                    _ => max,
                };
                self.scores_scroll = next.min(max) as u16;
            }
            Pane::Tree => {
                self.follow = false;
                self.tree_state.sync(self.run.engine.tree());
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
                self.selection_moved();
            }
            Pane::Detail => {
                // Offsets count wrapped lines, up to the last frame's limit (so `up` after `end` moves at once).
                let limit = self.detail_limit.get();
                let at = self.detail_scroll.min(limit);
                self.detail_scroll = match action {
                    Action::Up => at.saturating_sub(1),
                    Action::Down => at.saturating_add(1),
                    Action::PageUp => at.saturating_sub(page),
                    Action::PageDown => at.saturating_add(page),
                    Action::Top => 0,
                    _ => limit,
                }
                .min(limit)
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
                // Offsets count wrapped lines up from where the pane rests (the newest line, or
                // the selected ReAct step; below zero down from there), within the last frame's limits.
                let (up, down) = self.transcript_limit.get();
                let (up, down, page) = (i32::from(up), -i32::from(down), i32::from(page));
                let at = self.transcript_scroll.clamp(down, up);
                self.transcript_scroll = match action {
                    Action::Up => at + 1,
                    Action::Down => at - 1,
                    Action::PageUp => at + page,
                    Action::PageDown => at - page,
                    Action::Top => up,
                    _ => down,
                }
                .clamp(down, up)
            }
        }
    }

    /// The best-valued state: the highest value at the deepest scored level (first on ties).
    pub(super) fn best_node(&self) -> Option<NodeId> {
        // The best-valued state, solved or not (`n` goes to the solutions).
        let tree = self.run.engine.tree();
        let depth = tree.nodes().filter(|n| n.score.is_some()).map(|n| n.depth).max()?;
        tree.nodes()
            .filter(|n| n.depth == depth && n.score.is_some())
            .max_by(|a, b| {
                let (x, y) = (a.score.as_ref().map_or(0.0, |s| s.value), b.score.as_ref().map_or(0.0, |s| s.value));
                x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal).then(b.id.cmp(&a.id))
            })
            .map(|n| n.id)
    }
}
