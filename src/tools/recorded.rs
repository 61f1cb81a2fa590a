//! Tools that answer from a recording first. A run forked from a session (an imported
//! ReAct trajectory, say) answers an action the recording already has — same tool (any
//! case) and argument, and for `lookup` the same page and cursor — with the recorded
//! observation, and sends only new actions to the real backend. So a continuation that
//! repeats the log's searches sees the log's pages without touching Wikipedia.
//!
//! What the recorded steps leave behind is tracked as a [`Context`]: the page the last
//! successful search opened (by its entity: the recording has the page's first sentences,
//! not the page) and the lookup cursor. A new lookup on a page only the recording opened
//! fetches that page from the backend first.

use std::collections::HashMap;

use crate::engine::NodeId;
use crate::protocol::{ToolRequest, ToolResult};

use super::ToolCall;

/// One answered tool call of a recorded run: what the engine asked, for which step,
/// and what came back (a replay lists them in order).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedToolCall {
    pub tool: ToolRequest,
    /// The step the call belongs to, and the step whose tool state it continues.
    pub node: NodeId,
    pub after: NodeId,
    pub result: ToolResult,
}

/// What the steps so far left for the next tool call: the open page (the entity of the
/// last search that found one) and the lookup cursor (keyword, results shown).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    pub page: Option<String>,
    pub lookup: Option<(String, usize)>,
}

impl Context {
    /// The context after `call` answered `result`, by the semantics of `search` and
    /// `lookup` (a failed search keeps the page; a new keyword starts its results over).
    pub fn after(&self, call: &ToolCall, result: &ToolResult) -> Context {
        let mut next = self.clone();
        let arg = call.arg.trim();
        match call.name.to_lowercase().as_str() {
            "search" if result.ok && !result.text.starts_with("Could not find") => {
                next.page = Some(arg.to_string());
                next.lookup = None;
            }
            "lookup" => {
                let shown = self.lookup_index(arg) + usize::from(result.text.starts_with("(Result"));
                next.lookup = Some((arg.to_string(), shown));
            }
            _ => {}
        }
        next
    }

    /// How many results of `keyword` were shown on the open page.
    fn lookup_index(&self, keyword: &str) -> usize {
        match &self.lookup {
            Some((k, shown)) if k == keyword => *shown,
            _ => 0,
        }
    }
}

/// A recorded observation's key: the tool, its argument, and for `lookup` the page and
/// the cursor it read from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    tool: String,
    arg: String,
    page: Option<String>,
    index: usize,
}

fn key(context: &Context, call: &ToolCall) -> Key {
    let tool = call.name.trim().to_lowercase();
    let arg = call.arg.trim().to_string();
    if tool == "lookup" {
        Key { page: context.page.clone(), index: context.lookup_index(&arg), tool, arg }
    } else {
        Key { tool, arg, page: None, index: 0 }
    }
}

/// The observations a recording holds, and the context its steps left at each step.
#[derive(Debug, Clone, Default)]
pub struct RecordedTools {
    answers: HashMap<Key, ToolResult>,
    contexts: HashMap<NodeId, Context>,
}

impl RecordedTools {
    /// From a run's answered tool calls, in the order they were made.
    pub fn new(calls: &[RecordedToolCall]) -> RecordedTools {
        let mut recorded = RecordedTools::default();
        for c in calls {
            let call = ToolCall::new(c.tool.name.clone(), c.tool.arg.clone());
            let before = recorded.contexts.get(&c.after).cloned().unwrap_or_default();
            recorded.answers.entry(key(&before, &call)).or_insert_with(|| c.result.clone());
            recorded.contexts.insert(c.node, before.after(&call, &c.result));
        }
        recorded
    }

    /// From a replay's answered tool calls; `None` when there are none.
    pub fn from_calls(calls: &[RecordedToolCall]) -> Option<RecordedTools> {
        let recorded = RecordedTools::new(calls);
        (!recorded.is_empty()).then_some(recorded)
    }

    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The recorded observation of `call` in `context`, if the recording has one.
    pub fn answer(&self, context: &Context, call: &ToolCall) -> Option<&ToolResult> {
        self.answers.get(&key(context, call))
    }

    /// The context the recorded step `node` left, if it is a recorded step.
    pub fn context(&self, node: NodeId) -> Option<&Context> {
        self.contexts.get(&node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ToolRequest;

    fn call(node: usize, after: usize, tool: &str, arg: &str, text: &str) -> RecordedToolCall {
        RecordedToolCall {
            tool: ToolRequest { name: tool.into(), arg: arg.into() },
            node: NodeId(node),
            after: NodeId(after),
            result: ToolResult { text: text.into(), ok: true, latency_ms: 0 },
        }
    }

    #[test]
    fn recorded_answers_match_tool_argument_page_and_cursor() {
        let recorded = RecordedTools::new(&[
            call(1, 0, "search", "Alpha", "Alpha is first."),
            call(2, 1, "lookup", "x", "(Result 1 / 2) x one."),
            call(3, 2, "search", "Nowhere", "Could not find Nowhere. Similar: []."),
            call(4, 3, "lookup", "x", "(Result 2 / 2) x two."),
        ]);
        assert_eq!(recorded.len(), 4);
        let start = Context::default();
        // Any case of the tool name; the argument as written (trimmed).
        assert_eq!(recorded.answer(&start, &ToolCall::new("Search", " Alpha ")).unwrap().text, "Alpha is first.");
        assert!(recorded.answer(&start, &ToolCall::new("search", "alpha")).is_none());
        // A failed search keeps the page; the cursor goes on.
        let after_4 = recorded.context(NodeId(4)).unwrap();
        assert_eq!(after_4, &Context { page: Some("Alpha".into()), lookup: Some(("x".into(), 2)) });
        let on_alpha = recorded.context(NodeId(1)).unwrap();
        assert_eq!(recorded.answer(on_alpha, &ToolCall::new("lookup", "x")).unwrap().text, "(Result 1 / 2) x one.");
        assert!(recorded.answer(after_4, &ToolCall::new("lookup", "x")).is_none(), "a third result is new");
        // The same keyword on another page is a new action.
        let on_beta = Context { page: Some("Beta".into()), lookup: None };
        assert!(recorded.answer(&on_beta, &ToolCall::new("lookup", "x")).is_none());
        let no_more = ToolResult { text: "No more results.".into(), ok: true, latency_ms: 0 };
        assert_eq!(after_4.after(&ToolCall::new("lookup", "x"), &no_more).lookup, Some(("x".into(), 2)));
    }
}
