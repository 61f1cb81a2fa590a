//! Finding nodes: `/` a regex over what the detail pane shows of each node (its thought,
//! notes, answer, state, observation and the raw replies behind it; not the prompts,
//! which repeat the task's examples), `n`/`N` from match to match, `#` a node by number,
//! and `z`, the focused pane on the whole screen. The filter (ctrl-f) is `filter.rs`.
//!
//! Matches are computed once per query and again only when the engine shown changes
//! (`App::engine_key`) or the filter does, never per frame: a frame looks them up.

use super::*;

impl App {
    /// `/`: the prompt for a new regex. It starts empty (what is typed is the whole new
    /// query, never appended to the old one); the find that is on is named in the
    /// placeholder, and `n`/`N` keep moving through it.
    pub(super) fn find_popup(&mut self) {
        let mut editor = TextArea::new(vec![String::new()]);
        let placeholder = match &self.find {
            Some(f) => format!("a new regex (now /{}/; empty: no find)", crate::safe_text::clip(&f.query, 24)),
            None => "a regex, e.g. 10 - 4 or search\\[ (empty: no find)".to_string(),
        };
        editor.set_placeholder_text(placeholder);
        self.popup = Some(Popup::Ask { what: Prompting::Find, editor: Box::new(editor) });
    }

    /// The query typed at `/`: the first match from the selection on is selected.
    pub(super) fn find_answer(&mut self, query: &str) {
        if query.is_empty() {
            self.message = Some(match self.find.take() {
                Some(f) => format!("find /{}/ cleared", f.query),
                None => "no find".into(),
            });
            return;
        }
        match Find::new(query) {
            Err(e) => self.message = Some(e),
            Ok(find) => {
                self.find = Some(find);
                self.refresh_found();
                let here = self.selected().0;
                let first = self.find.as_ref().and_then(|f| {
                    if f.is_match(here) {
                        Some((here, false))
                    } else {
                        f.step(here, true)
                    }
                });
                match first {
                    Some((node, _)) => self.go_to_match(node, false),
                    None => {
                        let filtered =
                            if self.tree.state.filtered() { " among the nodes the filter shows" } else { "" };
                        self.message = Some(format!("/{query}/: no match{filtered} (n and N wait for one)"));
                    }
                }
            }
        }
    }

    /// `n` / `N`: the next (previous) match; with no find on, `n` is the next solution and
    /// `N` plays a replay without stopping, as before there was a find.
    pub(super) fn find_step(&mut self, forward: bool, node: NodeId) {
        if self.find.is_none() {
            if forward {
                self.next_solution(node);
            } else {
                self.toggle_play(true);
            }
            return;
        }
        self.refresh_found();
        let Some(find) = self.find.as_ref() else { return };
        match find.step(node.0, forward) {
            Some((next, wrapped)) => self.go_to_match(next, wrapped),
            None => self.message = Some(format!("/{}/: no match", find.query)),
        }
    }

    /// Select match `node` (opening its ancestors) and say which match it is.
    fn go_to_match(&mut self, node: usize, wrapped: bool) {
        self.tree.stop_following();
        self.select(NodeId(node));
        if let Some(find) = &self.find {
            let at = find.position(node).map_or(0, |i| i + 1);
            let round = if wrapped { " (round from the other end)" } else { "" };
            self.message = Some(format!("/{}/: match {at} of {}{round}", find.query, find.count()));
        }
    }

    /// `#` or `:`: the prompt for a node's number.
    pub(super) fn goto_popup(&mut self) {
        let mut editor = TextArea::default();
        let last = self.session.run.engine.tree().len().saturating_sub(1);
        editor.set_placeholder_text(format!("a node's number, 0 to {last}"));
        self.popup = Some(Popup::Ask { what: Prompting::GotoNode, editor: Box::new(editor) });
    }

    /// The number typed at `#`: select that node, or say plainly why not.
    pub(super) fn goto_answer(&mut self, text: &str) {
        let len = self.session.run.engine.tree().len();
        let digits = text.trim().trim_start_matches('#').trim();
        let Ok(n) = digits.parse::<usize>() else {
            self.message = Some(format!("{:?} is not a node number: type one from 0 to {}", text.trim(), len - 1));
            return;
        };
        if n >= len {
            self.message = Some(format!("there is no node #{n}: this tree has {len} nodes, #0 to #{}", len - 1));
            return;
        }
        if !self.tree.state.shows(n) {
            let key = self.keymap.key_hint(Action::Filter).unwrap_or_default();
            self.message = Some(format!("node #{n} is hidden by the filter ({key} clears it)"));
            return;
        }
        self.tree.stop_following();
        self.select(NodeId(n));
        self.view.focus = Pane::Tree;
        self.message = Some(format!("node #{n}"));
    }

    /// `z`: the focused pane on the whole screen (between the header and the footer), or back.
    pub(super) fn toggle_zoom(&mut self) {
        self.view.zoomed = !self.view.zoomed;
        let key = self.keymap.key_hint(Action::Zoom).unwrap_or_default();
        self.message = Some(if self.view.zoomed {
            format!("{} pane zoomed ({key} gives the others back; tab zooms the next pane)", self.view.focus.title())
        } else {
            "every pane is back".into()
        });
    }
}
