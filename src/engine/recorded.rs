//! Playing a recorded input as it was recorded, without the method: for a session that
//! today's engine no longer reproduces (its method or task decides differently now), the
//! replay shows the recorded run by applying each input's recorded events to the tree
//! (nodes added, statuses, scores, metrics, failures, memory changes, the outcome) and
//! keeping the recorded request and reply behind each model call, for the detail pane.
//!
//! What events do not carry stays as it was: a node added this way has its thought as
//! its path, no score samples, no typed step and no notes, and the method's own state
//! (its step counter, frontier, ...) stays where today's engine left it.

use super::*;
use crate::protocol::LlmRequest;

/// What one recorded input could not do to the tree (an event naming a node the tree
/// does not have): the event is skipped and this says why.
pub type RecordedProblem = String;

impl Engine {
    /// Apply one recorded input and the events the recording says it caused, with the
    /// request its reply answers. Nothing is run: the method is not asked, no call is
    /// issued. Returns what could not be applied (each skipped), empty when all was.
    pub fn apply_recorded(
        &mut self,
        input: &Input,
        request: Option<&LlmRequest>,
        events: &[Event],
    ) -> Vec<RecordedProblem> {
        let mut problems = Vec::new();
        if let Some(call) = input.answers() {
            let pending = self.core.pending.remove(&call);
            self.core.next_call = self.core.next_call.max(call.saturating_add(1));
            // A verdict is kept as it was given (the outcome's pane reads it); nothing is run.
            if let (Input::CheckReply(reply), Some(Pending { kind: CallKind::Check(request), .. })) = (input, pending) {
                self.core.checks.insert(request.key(), reply.result.clone());
            }
        }
        if let Input::LlmReply(reply) = input {
            self.record_call(reply, request, events, &mut problems);
        }
        let origin = match input {
            Input::Command { .. } => Origin::Human { edited_from: None },
            _ => Origin::Model,
        };
        let made_by = match input {
            Input::LlmReply(reply) => Some(reply.call),
            _ => None,
        };
        for event in events {
            if let Err(problem) = self.apply_recorded_event(event, &origin, made_by) {
                problems.push(problem);
            }
        }
        problems
    }

    /// Keep the recorded request and reply of a model call, on the node the call was for:
    /// the one today's engine made it for if it made it, else the node the recorded
    /// events put its result on (the parent of the nodes it added, the node it scored).
    fn record_call(
        &mut self,
        reply: &LlmReply,
        request: Option<&LlmRequest>,
        events: &[Event],
        problems: &mut Vec<RecordedProblem>,
    ) {
        if let Some(made) = self.core.calls.get_mut(&reply.call) {
            let made = Arc::make_mut(made);
            made.reply = Some(reply.result.clone());
            if let Some(request) = request {
                made.request = request.clone();
            }
            return;
        }
        let Some(request) = request else {
            problems.push(format!("the reply to call {} has no recorded request; the call is not shown", reply.call));
            return;
        };
        let node = events
            .iter()
            .find_map(|e| match e {
                Event::NodeAdded { parent, .. } => Some(*parent),
                Event::Scored { id, .. } | Event::Metrics { id, .. } => Some(*id),
                Event::CallFailed { node, .. } => Some(*node),
                _ => None,
            })
            .filter(|&n| self.core.tree.contains(n))
            .unwrap_or(NodeId(0));
        let record = CallRecord { node, request: request.clone(), reply: Some(reply.result.clone()) };
        self.core.calls.insert(reply.call, Arc::new(record));
        self.core.tree.node_mut(node).calls.push(reply.call);
    }

    fn known(&self, id: NodeId, what: &str) -> Result<(), RecordedProblem> {
        if self.core.tree.contains(id) {
            Ok(())
        } else {
            Err(format!("a recorded {what} names node {id}, which the tree does not have; skipped"))
        }
    }

    fn apply_recorded_event(&mut self, event: &Event, origin: &Origin, made_by: Option<u64>) -> Result<(), String> {
        match event {
            Event::NodeAdded { id, parent, thought } => {
                self.known(*parent, "new node's parent")?;
                if id.0 != self.core.tree.len() {
                    return Err(format!(
                        "a recorded new node is {id}, but the tree's next node is #{}; skipped",
                        self.core.tree.len()
                    ));
                }
                // The search went on after an outcome (an edit, a continuation): it is open again.
                self.outcome = None;
                let text = thought.to_string();
                let added = self.core.tree.add_child(*parent, text.clone(), text, origin.clone());
                self.core.tree.node_mut(added).made_by = made_by;
            }
            Event::Scored { id, value } => {
                self.known(*id, "score")?;
                let node = self.core.tree.node_mut(*id);
                match node.score.as_mut() {
                    Some(score) => score.value = *value,
                    None => node.score = Some(Box::new(Score { value: *value, ..Score::default() })),
                }
            }
            Event::Status { id, status } => {
                self.known(*id, "status")?;
                self.core.tree.node_mut(*id).status = status.clone();
            }
            Event::Metrics { id, metrics } => {
                self.known(*id, "metrics change")?;
                let node = self.core.tree.node_mut(*id);
                node.metrics.extend(metrics.iter().map(|(k, v)| (k.clone(), *v)));
            }
            Event::CallFailed { call, node, message } => {
                self.known(*node, "failed call")?;
                self.core.tree.node_mut(*node).add_issue(Issue::CallFailed { call: *call, message: message.clone() });
            }
            Event::Memory { change } => {
                let Some(memory) = self.core.memory.as_mut() else {
                    return Err("a recorded memory change, but the session starts from no memory; skipped".into());
                };
                let applied = memory.apply(change).map(|_| ());
                memory.take_changes();
                applied.map_err(|e| format!("a recorded memory change could not be applied ({e}); skipped"))?;
            }
            Event::Mode { mode } => self.mode = *mode,
            Event::Finished { outcome } => {
                if let Some(missing) = outcome.finals.iter().find(|f| !self.core.tree.contains(**f)) {
                    return Err(format!("the recorded outcome names node {missing}, which the tree does not have"));
                }
                self.outcome = Some(outcome.clone());
            }
            // Nothing in the tree: they are in the transcript (the events shown).
            Event::Selected { .. }
            | Event::Backtracked { .. }
            | Event::ReplyDropped { .. }
            | Event::Log { .. }
            | Event::Rejected { .. } => {}
        }
        Ok(())
    }
}
