//! The filter (ctrl-f): only the nodes meeting a condition, with their ancestors, in the
//! tree pane. Conditions are written as breakpoints are (`engine::breakpoint`), read of
//! one node instead of one input: `solution`, `score<X`, `score>X`, `disagree`,
//! `tool`/`tool=NAME`, `bad-call`, `parse-fail`, `provider-error`, `thought~/RE/`,
//! `reply~/RE/`; and the statuses `pruned`, `dropped`, `invalid`, `final`, `edited`.
//! Several, separated by commas, show the nodes meeting any of them.

use crate::engine::breakpoint::{Breakpoint, Condition};
use crate::engine::Node;

use super::*;
use crate::engine::Origin;

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
    pub(crate) key: Option<EngineKey>,
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

    pub(crate) fn meets(&self, engine: &Engine, node: &Node) -> bool {
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
