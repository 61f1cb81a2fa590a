//! Finding nodes: `/` a regex over what the detail pane shows of each node (its thought,
//! notes, answer, state, observation and the raw replies behind it; not the prompts,
//! which repeat the task's examples), `n`/`N` from match to match, `#` a node by number,
//! and `z`, the focused pane on the whole screen. The filter (ctrl-f) is `filter.rs`.
//!
//! Matches are computed once per query and again only when the engine shown changes
//! (`App::engine_key`) or the filter does, never per frame: a frame looks them up.

use std::collections::HashMap;

use regex::{Regex, RegexBuilder};

use super::*;

/// A find that is on: its query, and the nodes matching it in tree order.
pub struct Find {
    pub query: String,
    regex: Regex,
    /// The matching nodes' ids, in tree order (depth first, children in order, as the
    /// pane lists them with nothing closed).
    matches: Vec<usize>,
    /// Whether each node (by id) matches.
    is_match: Vec<bool>,
    /// Each node's place in tree order (by id), to find the match after the selection.
    order: Vec<u32>,
    /// The engine and filter the matches are for.
    key: Option<(EngineKey, u64)>,
    /// How many times the matches were computed (a test sees frames do not recompute them).
    computed: u64,
}

impl Find {
    /// A find for `query`: case-insensitive unless the query has a capital letter. A bad
    /// regex is one line saying so.
    pub fn new(query: &str) -> Result<Find, String> {
        let ignore_case = !query.chars().any(char::is_uppercase);
        let regex = RegexBuilder::new(query)
            .case_insensitive(ignore_case)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("bad regex /{query}/: {}", one_line_error(&e.to_string())))?;
        Ok(Find {
            query: query.to_string(),
            regex,
            matches: Vec::new(),
            is_match: Vec::new(),
            order: Vec::new(),
            key: None,
            computed: 0,
        })
    }

    pub fn is_match(&self, id: usize) -> bool {
        self.is_match.get(id).copied().unwrap_or(false)
    }

    /// How many times the matches were computed for this query.
    pub fn computed(&self) -> u64 {
        self.computed
    }

    /// How many nodes match.
    pub fn count(&self) -> usize {
        self.matches.len()
    }

    /// The 0-based place of node `id` among the matches, if it is one.
    pub fn position(&self, id: usize) -> Option<usize> {
        let at = *self.order.get(id)?;
        self.matches.binary_search_by_key(&at, |&m| self.order[m]).ok()
    }

    /// The match after `id` in tree order (or before it, `forward` false), round to the
    /// first (last); the flag says it went round.
    fn step(&self, id: usize, forward: bool) -> Option<(usize, bool)> {
        let at = self.order.get(id).copied().unwrap_or(0);
        // The matches before `id`'s place (and `id` itself, if it matches, when going back).
        let split = self.matches.partition_point(|&m| self.order[m] < at);
        if forward {
            let after = if self.is_match(id) { split + 1 } else { split };
            match self.matches.get(after) {
                Some(&m) => Some((m, false)),
                None => self.matches.first().map(|&m| (m, true)),
            }
        } else {
            match split.checked_sub(1) {
                Some(i) => Some((self.matches[i], false)),
                None => self.matches.last().map(|&m| (m, true)),
            }
        }
    }

    /// Match every node `shows` lets through against the regex, in tree order.
    fn compute(&mut self, engine: &Engine, shows: impl Fn(usize) -> bool) {
        let tree = engine.tree();
        self.computed += 1;
        self.order = tree_order(tree);
        self.is_match = vec![false; tree.len()];
        let mut by_order: Vec<usize> = Vec::new();
        let mut replies: HashMap<u64, bool> = HashMap::new();
        for node in tree.nodes() {
            if shows(node.id.0) && node_matches(engine, node, &self.regex, &mut replies) {
                self.is_match[node.id.0] = true;
                by_order.push(node.id.0);
            }
        }
        by_order.sort_by_key(|&id| self.order[id]);
        self.matches = by_order;
    }
}

/// The error's last line (the regex crate draws a caret diagram above it).
fn one_line_error(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    match lines.last() {
        Some(last) => last.trim_start_matches("error: ").to_string(),
        None => text.to_string(),
    }
}

/// Each node's place (by id) in depth-first order, children in order.
pub(super) fn tree_order(tree: &crate::engine::SearchTree) -> Vec<u32> {
    let mut order = vec![u32::MAX; tree.len()];
    let mut stack = vec![tree.root()];
    let mut next = 0u32;
    while let Some(id) = stack.pop() {
        order[id.0] = next;
        next += 1;
        stack.extend(tree.node(id).children.iter().rev().copied());
    }
    order
}

/// Whether the regex finds anything in what the detail pane shows of `node` (the prompts
/// left out). `replies` keeps each call's answer: siblings share the reply that wrote them.
fn node_matches(engine: &Engine, node: &crate::engine::Node, re: &Regex, replies: &mut HashMap<u64, bool>) -> bool {
    if re.is_match(&node.thought) || node.notes.iter().any(|n| re.is_match(&n.text)) {
        return true;
    }
    if node.answer.as_deref().is_some_and(|a| re.is_match(a)) {
        return true;
    }
    if node.step.as_ref().and_then(|s| s.observation.as_deref()).is_some_and(|o| re.is_match(o)) {
        return true;
    }
    let calls = node.made_by.into_iter().chain(node.calls.iter().copied());
    for call in calls {
        let hit = *replies.entry(call).or_insert_with(|| {
            let reply = engine.core.calls.get(&call).and_then(|r| r.reply.as_ref()).and_then(|r| r.as_ref().ok());
            reply.is_some_and(|r| {
                r.completions
                    .iter()
                    .any(|c| re.is_match(&c.text) || c.tool_calls.iter().any(|t| re.is_match(&t.describe())))
            })
        });
        if hit {
            return true;
        }
    }
    if node.id != engine.tree().root() {
        let core = &engine.core;
        if core.task.describe_state(&core.x, &node.path).is_some_and(|s| re.is_match(&s)) {
            return true;
        }
    }
    false
}

impl App {
    /// Bring the filter's and the find's nodes up to date with the engine shown (a walk
    /// of the tree when it changed, nothing otherwise). Called before each frame and
    /// before moving from match to match.
    pub fn refresh_found(&mut self) {
        self.refresh_filter();
        let key = (self.engine_key(), self.filter_generation);
        let Some(mut find) = self.find.take() else { return };
        if find.key != Some(key) {
            let state = &self.tree.state;
            find.compute(&self.session.run.engine, |id| state.shows(id));
            find.key = Some(key);
        }
        self.find = Some(find);
    }

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

    /// What the tree pane's title says of the find: `/re/ 3 of 17` on a match, else the count.
    pub fn find_title(&self, selected: NodeId) -> Option<String> {
        let find = self.find.as_ref()?;
        let n = find.count();
        Some(match find.position(selected.0) {
            Some(i) => format!("/{}/ {} of {n}", find.query, i + 1),
            None => format!("/{}/ {n} match{}", find.query, if n == 1 { "" } else { "es" }),
        })
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
