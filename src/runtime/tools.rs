//! Runs the engine's tool calls (ReAct) against a registry. Each trajectory step
//! continues the tool state (current page, lookup cursor) its previous step left,
//! so branches made by edits keep their own state. With a recording in front
//! ([`ToolRunner::with_recorded`]), actions the recording has are answered from it and
//! only new ones reach the registry's backends.

use std::collections::HashMap;
use std::sync::Arc;

use crate::engine::NodeId;
use crate::protocol::{ToolRequest, ToolResult};
use crate::tools::recorded::{Context, RecordedTools};
use crate::tools::{LookupCursor, ToolCall, ToolRegistry, ToolState};

pub struct ToolRunner {
    registry: Arc<ToolRegistry>,
    states: HashMap<NodeId, ToolState>,
    recorded: Option<Arc<RecordedTools>>,
    /// Replaying (`--provider replay`): actions the recording lacks fail instead of
    /// reaching the backends, so a replay never goes live.
    recorded_only: bool,
    /// With a recording: what each step run here left (see [`Context`]).
    contexts: HashMap<NodeId, Context>,
    /// Calls answered from the recording, and calls sent to the registry.
    pub answered_from_recording: usize,
    pub sent_to_tools: usize,
}

impl ToolRunner {
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        ToolRunner {
            registry,
            states: HashMap::new(),
            recorded: None,
            recorded_only: false,
            contexts: HashMap::new(),
            answered_from_recording: 0,
            sent_to_tools: 0,
        }
    }

    /// Answer actions `recorded` has from it (a run forked from a session), if given.
    pub fn with_recorded(mut self, recorded: Option<Arc<RecordedTools>>) -> Self {
        self.recorded = recorded.filter(|r| !r.is_empty());
        self
    }

    /// Answer every action from `recorded` alone (a replay): one it lacks fails, saying so.
    pub fn recorded_only(mut self, recorded: Option<Arc<RecordedTools>>) -> Self {
        self.recorded = recorded;
        self.recorded_only = true;
        self
    }

    /// Run `tool` for step `node`, starting from the state step `after` left.
    pub async fn run(&mut self, tool: &ToolRequest, node: NodeId, after: NodeId) -> ToolResult {
        let mut state = self.states.get(&after).cloned().unwrap_or_default();
        let call = ToolCall::new(tool.name.clone(), tool.arg.clone());
        let recorded = match self.recorded.clone() {
            Some(recorded) => Some(recorded),
            None if self.recorded_only => Some(Arc::new(RecordedTools::default())),
            None => None,
        };
        let Some(recorded) = recorded else {
            let obs = self.registry.call(&call, &mut state).await;
            self.sent_to_tools += 1;
            self.states.insert(node, state);
            return ToolResult { text: obs.text, ok: obs.ok, latency_ms: obs.latency_ms };
        };
        let context = self.contexts.get(&after).or_else(|| recorded.context(after)).cloned().unwrap_or_default();
        let from_recording = recorded.answer(&context, &call).cloned();
        let result = match &from_recording {
            Some(result) => {
                self.answered_from_recording += 1;
                result.clone()
            }
            None if self.recorded_only => {
                let text = format!(
                    "No recorded observation for {}[{}] at this step: the replayed run took a different action.",
                    call.name, call.arg
                );
                return ToolResult { text, ok: false, latency_ms: 0 };
            }
            None => {
                if call.name.eq_ignore_ascii_case("lookup") {
                    self.open_page(&context, &mut state).await;
                }
                let obs = self.registry.call(&call, &mut state).await;
                self.sent_to_tools += 1;
                ToolResult { text: obs.text, ok: obs.ok, latency_ms: obs.latency_ms }
            }
        };
        let next = context.after(&call, &result);
        if from_recording.is_some() && next.page != context.page {
            // A recorded search opened a page the backend has not fetched; a new lookup fetches it.
            state.page = None;
            state.lookup = None;
        }
        self.contexts.insert(node, next);
        self.states.insert(node, state);
        result
    }

    /// Before a new lookup: fetch the page the recorded steps opened, if the backend has
    /// not, and carry the lookup cursor over.
    async fn open_page(&mut self, context: &Context, state: &mut ToolState) {
        if state.page.is_none() {
            if let Some(entity) = &context.page {
                let mut fetched = ToolState::default();
                self.registry.call(&ToolCall::new("search", entity.clone()), &mut fetched).await;
                self.sent_to_tools += 1;
                state.page = fetched.page;
            }
        }
        state.lookup = context.lookup.clone().map(|(keyword, shown)| LookupCursor { keyword, shown });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::recorded::RecordedToolCall;

    #[tokio::test]
    async fn a_replay_answers_only_from_the_recording() {
        let registry = Arc::new(ToolRegistry::new().with(crate::tools::finish::FinishTool));
        let finish = ToolRequest { name: "Finish".into(), arg: "yes".into() };
        let recorded = RecordedTools::new(&[RecordedToolCall {
            tool: finish.clone(),
            node: NodeId(1),
            after: NodeId(0),
            result: ToolResult { text: "Episode finished, reward = 1".into(), ok: true, latency_ms: 0 },
        }]);
        let mut replay = ToolRunner::new(Arc::clone(&registry)).recorded_only(Some(Arc::new(recorded)));
        let got = replay.run(&finish, NodeId(1), NodeId(0)).await;
        assert_eq!((got.text.as_str(), got.ok), ("Episode finished, reward = 1", true));
        // An action the recording lacks fails instead of reaching the tool.
        let other = ToolRequest { name: "Finish".into(), arg: "no".into() };
        let got = replay.run(&other, NodeId(2), NodeId(0)).await;
        assert!(!got.ok && got.text.starts_with("No recorded observation for Finish[no]"), "{}", got.text);
        assert_eq!(replay.sent_to_tools, 0);
        // With no recording at all, nothing goes live either.
        let mut empty = ToolRunner::new(Arc::clone(&registry)).recorded_only(None);
        assert!(!empty.run(&finish, NodeId(1), NodeId(0)).await.ok);
        // A live run with the same registry does call the tool.
        let mut live = ToolRunner::new(registry);
        live.run(&other, NodeId(2), NodeId(0)).await;
        assert_eq!(live.sent_to_tools, 1);
    }
}
