//! The filter (ctrl-f): only the nodes meeting a condition, with their ancestors, in the
//! tree pane. Conditions are written as breakpoints are (`engine::breakpoint`), read of
//! one node instead of one input: `solution`, `score<X`, `score>X`, `disagree`,
//! `tool`/`tool=NAME`, `bad-call`, `parse-fail`, `provider-error`, `thought~/RE/`,
//! `reply~/RE/`; and the statuses `pruned`, `dropped`, `invalid`, `final`, `edited`.
//! Several, separated by commas, show the nodes meeting any of them.

use super::*;
use crate::engine::Node;

impl App {
    /// ctrl-f: the prompt for a condition, or, with a filter on, the filter cleared.
    pub(super) fn filter_key(&mut self) {
        if let Some(filter) = self.filter.take() {
            self.clear_filter(&filter.spec);
            return;
        }
        let mut editor = TextArea::default();
        editor.set_placeholder_text("e.g. solution, pruned, score<0.3, thought~/10/ (empty: no filter)");
        self.popup = Some(Popup::Ask { what: Prompting::Filter, editor: Box::new(editor) });
    }

    fn clear_filter(&mut self, spec: &str) {
        self.filter = None;
        self.filter_generation += 1;
        self.tree.state.set_filter(None);
        self.message = Some(format!("filter {spec} cleared: every node is shown"));
    }

    /// The condition typed at ctrl-f (empty: no filter).
    pub(super) fn filter_answer(&mut self, text: &str) {
        if text.trim().is_empty() {
            match self.filter.take() {
                Some(f) => self.clear_filter(&f.spec),
                None => self.message = Some("no filter".into()),
            }
            return;
        }
        match Filter::parse(text) {
            Err(e) => self.message = Some(e),
            Ok(filter) => {
                self.filter = Some(filter);
                self.filter_generation += 1;
                self.refresh_found();
                let Some(filter) = &self.filter else { return };
                let (spec, matched) = (filter.spec.clone(), filter.matched);
                let key = self.keymap.key_hint(Action::Filter).unwrap_or_default();
                self.message = Some(match matched {
                    0 => format!("filter {spec}: no node meets it yet ({key} clears it)"),
                    n => format!(
                        "filter {spec}: {n} node{} and their ancestors ({key} clears it)",
                        if n == 1 { "" } else { "s" }
                    ),
                });
                // A selection that does not meet the filter moves to the first node that does.
                let here = self.selected();
                if !filter_meets(
                    self.filter.as_ref(),
                    &self.session.run.engine,
                    self.session.run.engine.tree().node(here),
                ) {
                    let tree = self.session.run.engine.tree();
                    let order = crate::tui::state::find::tree_order(tree);
                    let first = tree
                        .nodes()
                        .filter(|n| filter_meets(self.filter.as_ref(), &self.session.run.engine, n))
                        .min_by_key(|n| order[n.id.0])
                        .map(|n| n.id);
                    if let Some(first) = first {
                        self.tree.stop_following();
                        self.select(first);
                    } else if !self.tree.state.shows(here.0) {
                        self.select(NodeId(0));
                    }
                }
            }
        }
    }
}

fn filter_meets(filter: Option<&Filter>, engine: &Engine, node: &Node) -> bool {
    filter.is_some_and(|f| f.meets(engine, node))
}
