//! The filter (ctrl-f): only the nodes meeting a condition, with their ancestors, in the
//! tree pane. Conditions are written as breakpoints are (`engine::breakpoint`), read of
//! one node instead of one input: `solution`, `score<X`, `score>X`, `disagree`,
//! `tool`/`tool=NAME`, `bad-call`, `parse-fail`, `provider-error`, `thought~/RE/`,
//! `reply~/RE/`; and the statuses `pruned`, `dropped`, `invalid`, `final`, `edited`.
//! Several, separated by commas, show the nodes meeting any of them.

use crate::engine::breakpoint::{Breakpoint, Condition};
use crate::engine::Node;

use super::*;

/// What a filter's conditions accept, for messages.
pub const FILTER_ACCEPTED: &str = "solution, pruned, dropped, invalid, final, edited, score<X, score>X, disagree, \
                                   tool, tool=NAME, bad-call, parse-fail, provider-error, thought~/RE/, reply~/RE/";

/// One condition on a node.
#[derive(Debug, Clone)]
enum NodeCondition {
    /// A breakpoint's condition, read of the node.
    Break(Condition),
    /// The node has this status (`final` takes solutions too).
    Pruned,
    Dropped,
    Invalid,
    Final,
    /// Written or edited by a person.
    Edited,
}

/// A filter that is on: as written, and the engine its nodes were computed for.
pub struct Filter {
    pub spec: String,
    conditions: Vec<NodeCondition>,
    /// How many nodes meet it (their ancestors are shown too).
    pub matched: usize,
    key: Option<EngineKey>,
}

impl Filter {
    /// Read a filter: conditions separated by commas, any of which shows a node.
    pub fn parse(spec: &str) -> Result<Filter, String> {
        let conditions = spec
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(parse_condition)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Filter { spec: spec.trim().to_string(), conditions, matched: 0, key: None })
    }

    fn meets(&self, engine: &Engine, node: &Node) -> bool {
        self.conditions.iter().any(|c| meets(c, engine, node))
    }
}

fn parse_condition(text: &str) -> Result<NodeCondition, String> {
    let words = match text.to_ascii_lowercase().as_str() {
        "pruned" => Some(NodeCondition::Pruned),
        "dropped" => Some(NodeCondition::Dropped),
        "invalid" => Some(NodeCondition::Invalid),
        "final" => Some(NodeCondition::Final),
        "edited" => Some(NodeCondition::Edited),
        _ => None,
    };
    if let Some(condition) = words {
        return Ok(condition);
    }
    let breakpoint =
        Breakpoint::parse(text).map_err(|e| format!("filter `{text}`: {}; accepted: {FILTER_ACCEPTED}", e.problem))?;
    match breakpoint.condition {
        Condition::Step(_) | Condition::Calls(_) | Condition::Tokens(_) | Condition::Cost(_) => {
            Err(format!("filter `{text}`: a condition on the whole run, not on a node; accepted: {FILTER_ACCEPTED}"))
        }
        condition => Ok(NodeCondition::Break(condition)),
    }
}

/// Whether `node` meets `condition`.
fn meets(condition: &NodeCondition, engine: &Engine, node: &Node) -> bool {
    match condition {
        NodeCondition::Pruned => node.status == NodeStatus::Pruned,
        NodeCondition::Dropped => matches!(node.status, NodeStatus::Dropped(_)),
        NodeCondition::Invalid => matches!(node.status, NodeStatus::Invalid(_)),
        NodeCondition::Final => matches!(node.status, NodeStatus::Final | NodeStatus::Solution),
        NodeCondition::Edited => matches!(node.origin, Origin::Human { .. }),
        NodeCondition::Break(condition) => meets_break(condition, engine, node),
    }
}

/// A breakpoint's condition read of one node: what it would have fired for at this node.
fn meets_break(condition: &Condition, engine: &Engine, node: &Node) -> bool {
    let value = node.score.as_ref().map(|s| s.value);
    let replies = || {
        node.made_by
            .into_iter()
            .chain(node.calls.iter().copied())
            .filter_map(|c| engine.core.calls.get(&c).and_then(|r| r.reply.as_ref()))
    };
    match condition {
        Condition::ScoreBelow(x) => value.is_some_and(|v| v < *x),
        Condition::ScoreAbove(x) => value.is_some_and(|v| v > *x),
        Condition::Disagree => node.score.as_ref().is_some_and(|s| {
            let mut classes: Vec<&str> = s.samples.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect();
            classes.sort_unstable();
            classes.dedup();
            classes.len() > 1
        }),
        Condition::Tool(name) => node
            .step
            .as_ref()
            .and_then(|s| s.action.as_ref())
            .is_some_and(|a| name.as_deref().is_none_or(|n| n.eq_ignore_ascii_case(&a.name))),
        Condition::BadCall => node.issues.iter().any(|i| i.is_bad_call()),
        Condition::ParseFail => {
            matches!(node.status, NodeStatus::Invalid(_))
                || node.issues.iter().any(|i| matches!(i, crate::engine::tree::Issue::Proposal(_)))
        }
        Condition::ProviderError => replies().any(|r| r.is_err()),
        Condition::Solution => node.status == NodeStatus::Solution,
        Condition::Thought(re) => re.is_match(&node.thought),
        Condition::Reply(re) => {
            replies().any(|r| r.as_ref().is_ok_and(|r| r.completions.iter().any(|c| re.is_match(&c.text))))
        }
        // Conditions on the whole run are refused when the filter is read.
        Condition::Step(_) | Condition::Calls(_) | Condition::Tokens(_) | Condition::Cost(_) => false,
    }
}

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
                    let order = super::find::tree_order(tree);
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

    /// Bring the filter's shown nodes up to date with the engine (a walk of the tree when
    /// it changed, nothing otherwise).
    pub(super) fn refresh_filter(&mut self) {
        let key = self.engine_key();
        let Some(mut filter) = self.filter.take() else { return };
        // A tree pane made afresh (a new run, a session opened) has lost the filter: set it again.
        if filter.key != Some(key) || !self.tree.state.filtered() {
            let engine = &self.session.run.engine;
            let tree = engine.tree();
            let mut shown = vec![false; tree.len()];
            shown[tree.root().0] = true;
            let mut matched = 0;
            for node in tree.nodes() {
                if !filter.meets(engine, node) {
                    continue;
                }
                matched += 1;
                // The node and its ancestors, up to the first one already shown.
                let mut at = Some(node.id);
                while let Some(id) = at.filter(|id| !shown[id.0]) {
                    shown[id.0] = true;
                    at = tree.node(id).parent;
                }
            }
            filter.matched = matched;
            filter.key = Some(key);
            self.tree.state.set_filter(Some(shown));
            self.filter_generation += 1;
        }
        self.filter = Some(filter);
    }

    /// What the tree pane's title says of the filter.
    pub fn filter_title(&self) -> Option<String> {
        self.filter.as_ref().map(|f| format!("filter {}: {}", f.spec, f.matched))
    }
}

fn filter_meets(filter: Option<&Filter>, engine: &Engine, node: &Node) -> bool {
    filter.is_some_and(|f| f.meets(engine, node))
}
