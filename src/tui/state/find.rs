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
    pub(crate) key: Option<(EngineKey, u64)>,
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
    pub(crate) fn step(&self, id: usize, forward: bool) -> Option<(usize, bool)> {
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
    pub(crate) fn compute(&mut self, engine: &Engine, shows: impl Fn(usize) -> bool) {
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
pub(crate) fn tree_order(tree: &crate::engine::SearchTree) -> Vec<u32> {
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
                r.completions.iter().any(|c| {
                    re.is_match(&c.text)
                        || c.tool_calls.iter().any(|t| re.is_match(&t.describe()))
                        || c.thinking.iter().any(|t| re.is_match(&t.text))
                })
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
