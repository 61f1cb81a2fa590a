//! The selection in the tree, folding, scrolling and jumps.

use super::*;

impl App {
    /// The ids from the root down to `node`, as the tree widget names it.
    pub fn path_to(&self, node: NodeId) -> Vec<usize> {
        let tree = self.session.run.engine.tree();
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
        if !self.session.run.engine.tree().contains(node) {
            return;
        }
        let path = self.path_to(node);
        self.tree.select(path);
        self.selection_moved();
    }

    /// The selection moved: the detail pane shows the new node from its top, and a ReAct
    /// transcript the new step (a scroll kept from the old one would hide it).
    pub(super) fn selection_moved(&mut self) {
        self.detail.home();
        if self.session.header.params.method.has_react_steps() {
            self.transcript.home();
        }
    }

    /// Open the way down to `node`'s children: it and its ancestors are no longer
    /// collapsed (the tree widget opens them at the next `open_all`).
    pub(super) fn reveal(&mut self, node: NodeId) {
        let path = self.path_to(node);
        self.tree.reveal(&path);
    }

    /// Where the selection lands when the search is over: a solution among the final
    /// states (best ranked first), else the best-ranked final state, else the best state.
    pub fn landing(&self) -> Option<NodeId> {
        let engine = &self.session.run.engine;
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
        self.tree.keep_closed();
    }

    /// Open every node except the ones collapsed by hand.
    pub fn open_all(&mut self) {
        self.tree.open_all();
    }

    /// How far PageUp/PageDown move in `pane`: its visible rows as the last frame drew
    /// them, less one line kept from the page before (at least one line).
    pub fn page(&self, pane: Pane) -> u16 {
        let inner = self.areas[pane.index()].height.saturating_sub(2);
        let rows = match pane {
            Pane::Scores => super::super::state::scores::visible_rows(self) as u16,
            _ => inner,
        };
        rows.saturating_sub(1).max(1)
    }

    /// Move the focused pane by `how`: each pane scrolls itself (the tree moves its selection).
    pub(super) fn scroll(&mut self, how: Scroll) {
        let page = self.page(self.view.focus);
        match self.view.focus {
            Pane::Scores => {
                // The ranked candidates (or the vote) scroll within the pane.
                let max = super::super::state::scores::max_scroll(self);
                self.scores.scroll(how, page, max);
            }
            Pane::Tree => {
                self.tree.scroll(how, page, self.session.run.engine.tree());
                self.selection_moved();
            }
            Pane::Detail => self.detail.scroll(how, page),
            Pane::Transcript
                if self.session.header.params.method.has_react_steps() && matches!(how, Scroll::Up | Scroll::Down) =>
            {
                // A ReAct trajectory: up and down walk its steps (down follows the newest branch).
                self.tree.stop_following();
                let tree = self.session.run.engine.tree();
                let node = self.selected();
                let next = match how {
                    Scroll::Up => tree.node(node).parent,
                    _ => tree.node(node).children.last().copied(),
                };
                if let Some(next) = next {
                    self.select(next);
                }
                self.transcript.home();
            }
            Pane::Transcript => self.transcript.scroll(how, page),
        }
    }

    /// The best-valued state: the highest value at the deepest scored level (first on ties).
    pub(super) fn best_node(&self) -> Option<NodeId> {
        // The best-valued state, solved or not (`n` goes to the solutions).
        let tree = self.session.run.engine.tree();
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
