//! What every method works through: the tree, the task, the calls in flight, and the
//! helpers that issue calls and set statuses, scores and metrics.

use super::*;
use crate::protocol::{CallError, LlmRequest, LlmResponse, ToolRequest};

/// Why a call was made; decides what its reply does.
#[derive(Debug, Clone, PartialEq)]
pub enum CallKind {
    /// Propose or sample children of the node.
    Generate,
    /// Value the node.
    Evaluate,
    /// Vote among these nodes (the call's node is their parent).
    Vote { nodes: Vec<NodeId> },
    /// Whole answers (io / cot): each completion becomes a final child.
    Answer,
    /// ReAct: the next thought and action after the node.
    Act,
    /// ReAct: the tool call of the node's action.
    Tool,
    /// The task's judgment of an output after the method is done (`Task::outcome_judge`).
    Judge,
    /// A task's check program, for a verdict (see [`super::check`]).
    Check(CheckRequest),
    /// A call of the method's own kind (its tag is the method's to choose); the reply
    /// goes to `Method::on_reply`.
    Own(u32),
}

#[derive(Debug, Clone)]
pub struct Pending {
    pub node: NodeId,
    pub kind: CallKind,
    pub generation: u64,
    /// Asked for by a person (expand, re-evaluate, edit), not by the method's own schedule.
    pub by_hand: bool,
    /// How many children the node had when the call was asked: a search step's children
    /// that repeat these (made by an earlier hand expansion) are marked duplicates.
    pub children_before: usize,
}

/// The request and reply behind a call, kept for the detail view.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallRecord {
    pub node: NodeId,
    pub request: LlmRequest,
    pub reply: Option<Result<LlmResponse, CallError>>,
}

/// What a batch evaluation does with a candidate whose path an earlier one in the batch has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// Value 0 without asking, as the reference Tree-of-Thoughts code does (its value cache
    /// answers a repeated state in one step with 0).
    ScoreZero,
    /// Ask about each one (the response cache still answers repeats).
    Evaluate,
}

/// Shared state and helpers the methods work through.
#[derive(Clone)]
pub struct Core {
    pub tree: SearchTree,
    pub task: Arc<dyn Task>,
    pub x: String,
    /// The method and its parameters, as the session header records them.
    pub params: Params,
    /// The temperature of every model call.
    pub temperature: f32,
    /// A tree search's generator and evaluator settings, handed over by its method
    /// (`Method::search`); `None` for a method that searches no tree of thoughts.
    pub search: Option<SearchParams>,
    /// Shared, so cloning the engine for a replay checkpoint does not copy every prompt.
    pub calls: BTreeMap<u64, Arc<CallRecord>>,
    pub(super) pending: BTreeMap<u64, Pending>,
    pub(super) next_call: u64,
    pub(super) out: Vec<Effect>,
    pub(super) pruned_from: HashMap<NodeId, NodeStatus>,
    pub rng: SplitMix64,
    /// The cross-problem memory this problem reads and updates (ReTreVal with a
    /// named memory), as it stood when the problem began plus this run's changes.
    /// Every change is journaled and leaves the engine as an `Event::Memory`.
    pub memory: Option<crate::memory::Memory>,
    /// Whether the outcome's outputs are put to the task's judge (`Task::outcome_judge`);
    /// off for an imported log that never judged them.
    pub(super) judge_outcome: bool,
    /// Outputs that share a judged output's judgment (the same answer, as the task's
    /// judge keys them), by the judged output.
    pub(super) judge_twins: HashMap<NodeId, Vec<NodeId>>,
    /// The model's context window in tokens, if the run knows it (the session header's
    /// `context_window`): ReAct trims the oldest observations of a trajectory that would
    /// not fit, and stops before sending one that cannot.
    pub context_window: Option<u64>,
    /// The verdicts of the task's check programs given so far (inputs), by what was asked.
    pub(super) checks: BTreeMap<check::CheckKey, Result<check::Verdict, String>>,
    /// Verdicts asked for while handling the current input and not given yet.
    pub(super) unknown: Vec<CheckRequest>,
    /// What the readers could not read so far (derived from the replies: a replay counts
    /// the same), see [`super::health`].
    pub read_tallies: super::health::ReadTallies,
}

impl Core {
    /// The thought steps of a tree search: the parameter, else the task's own (a task
    /// without tree-search steps has one: its whole answer).
    pub fn steps(&self) -> usize {
        self.search.and_then(|s| s.steps).unwrap_or_else(|| self.task.tree().map_or(1, |t| t.default_steps()))
    }

    /// Whether malformed proposals stay candidates (a tree search's `lenient`; others are strict).
    fn lenient(&self) -> bool {
        self.search.is_some_and(|s| s.lenient)
    }

    /// Whether the task has the evaluator the parameters choose (none without a tree search).
    pub fn has_evaluator(&self) -> bool {
        let tree = self.task.tree();
        match self.search.map(|s| s.evaluator) {
            Some(Evaluator::Value) => tree.is_some_and(|t| t.value().is_some()),
            Some(Evaluator::Vote) => tree.is_some_and(|t| t.vote().is_some()),
            None => false,
        }
    }

    pub fn emit(&mut self, event: Event) {
        self.out.push(Effect::Emit { event });
    }

    pub fn log(&mut self, text: impl Into<String>) {
        self.emit(Event::Log { text: text.into() });
    }

    /// Emit the memory's journaled changes as events (the session records them).
    pub(super) fn flush_memory(&mut self) {
        let Some(memory) = self.memory.as_mut() else { return };
        let changes = memory.take_changes();
        for change in changes {
            self.emit(Event::Memory { change });
        }
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    pub fn evaluation_pending(&self, node: NodeId) -> bool {
        self.pending.values().any(|p| p.node == node && p.kind == CallKind::Evaluate)
    }

    /// Add a child of `parent` to the tree and tell observers (its `NodeAdded` event
    /// carries the node's own thought, shared).
    pub fn add_node(&mut self, parent: NodeId, thought: String, path: String, origin: Origin) -> NodeId {
        let id = self.tree.add_child(parent, thought, path, origin);
        self.emit(Event::NodeAdded { id, parent, thought: self.tree.node(id).thought.clone() });
        id
    }

    pub fn set_status(&mut self, id: NodeId, status: NodeStatus) {
        if self.tree.node(id).status != status {
            self.tree.node_mut(id).status = status.clone();
            self.emit(Event::Status { id, status });
        }
    }

    /// Set some of the node's metrics (the method's own numbers), shown by the panes.
    pub fn set_metrics(&mut self, id: NodeId, metrics: &[(&str, f64)]) {
        let node = self.tree.node_mut(id);
        let mut changed = std::collections::BTreeMap::new();
        for (key, value) in metrics {
            if node.metrics.get(*key) != Some(value) {
                node.metrics.insert(key.to_string(), *value);
                changed.insert(key.to_string(), *value);
            }
        }
        if !changed.is_empty() {
            self.emit(Event::Metrics { id, metrics: changed });
        }
    }

    /// Set the node's note under `label` (replacing one of that label), shown in the detail pane.
    pub fn set_note(&mut self, id: NodeId, label: &str, text: &str) {
        let notes = &mut self.tree.node_mut(id).notes;
        match notes.iter_mut().find(|n| n.label == label) {
            Some(note) => note.text = text.to_string(),
            None => notes.push(tree::Note { label: label.to_string(), text: text.to_string() }),
        }
    }

    /// Set the node's one-line label in the tree (instead of its thought's first line).
    pub fn set_label(&mut self, id: NodeId, label: impl Into<String>) {
        self.tree.node_mut(id).label = Some(label.into());
    }

    pub fn set_score(&mut self, id: NodeId, score: Score) {
        let value = score.value;
        self.tree.node_mut(id).score = Some(Box::new(score));
        self.emit(Event::Scored { id, value });
    }

    /// A node the search may still use: not pruned by hand, not rejected.
    pub fn usable(&self, id: NodeId) -> bool {
        !self.tree.is_pruned(id) && !matches!(self.tree.node(id).status, NodeStatus::Invalid(_))
    }

    pub fn issue(&mut self, node: NodeId, kind: CallKind, request: LlmRequest, by_hand: bool) -> u64 {
        let call = self.next_call;
        self.next_call += 1;
        let generation = self.tree.node(node).generation;
        let children_before = self.tree.node(node).children.len();
        self.pending.insert(call, Pending { node, kind, generation, by_hand, children_before });
        self.calls.insert(call, Arc::new(CallRecord { node, request: request.clone(), reply: None }));
        self.tree.node_mut(node).calls.push(call);
        self.out.push(Effect::CallLlm { call, request });
        call
    }

    /// Ask the runtime to run a tool for `node` (ReAct), continuing the tool state of `after`.
    pub fn issue_tool(&mut self, node: NodeId, after: NodeId, tool: ToolRequest) -> u64 {
        let call = self.next_call;
        self.next_call += 1;
        let generation = self.tree.node(node).generation;
        let children_before = self.tree.node(node).children.len();
        self.pending.insert(call, Pending { node, kind: CallKind::Tool, generation, by_hand: false, children_before });
        self.tree.node_mut(node).calls.push(call);
        self.out.push(Effect::CallTool { call, tool, node, after });
        call
    }

    /// Ask for children of `node` with the configured generator (nothing, with a line
    /// in the log, on a task without tree-search steps: the engine refuses methods that
    /// need them, and a person's expansion there).
    pub fn generate(&mut self, node: NodeId, by_hand: bool) {
        let task = Arc::clone(&self.task);
        let Some(tree) = task.tree() else {
            return self.log(format!("{} has no tree-search steps to generate", task.name()));
        };
        let Some(search) = self.search else { return };
        let y = self.tree.node(node).path.clone();
        let request = match search.generator {
            Generator::Propose => {
                // A task that scores its proposals merges them over n_generate samples.
                let n = if tree.proposal_scores().is_some() { search.n_generate.max(1) } else { 1 };
                LlmRequest::from_prompt(tree.propose_prompt(&self.x, &y), n, self.temperature)
            }
            Generator::Sample => {
                LlmRequest::from_prompt(tree.sample_prompt(&self.x, &y), search.n_generate.max(1), self.temperature)
            }
        };
        self.issue(node, CallKind::Generate, request, by_hand);
        // A candidate a person expands has children too: expanded (●), not "·".
        let expandable = matches!(self.tree.node(node).status, NodeStatus::Frontier)
            || (by_hand && self.tree.node(node).status == NodeStatus::Candidate);
        if expandable {
            self.set_status(node, NodeStatus::Expanded);
        }
    }

    /// Evaluate `nodes` as one batch of candidates; fixed values are set at once.
    /// `duplicates` says what a candidate with the same path as an earlier one in the
    /// batch gets (the method's choice). Returns the number of calls issued (none, with
    /// a line in the log, when the task lacks the chosen evaluator).
    pub fn evaluate(&mut self, nodes: &[NodeId], by_hand: bool, duplicates: Duplicates) -> usize {
        let Some(search) = self.search else { return 0 };
        let usable: Vec<NodeId> = nodes.iter().copied().filter(|&n| self.usable(n)).collect();
        let task = Arc::clone(&self.task);
        let tree = task.tree();
        match search.evaluator {
            Evaluator::Value => {
                let Some(evaluator) = tree.and_then(|t| t.value()) else {
                    self.log(format!("{} has no value evaluator: nothing valued", task.name()));
                    return 0;
                };
                let mut seen = BTreeSet::new();
                let mut issued = 0;
                for id in usable {
                    let y = self.tree.node(id).path.clone();
                    if duplicates == Duplicates::ScoreZero && !seen.insert(y.clone()) {
                        if self.tree.node(id).score.is_none() {
                            let note = "duplicate candidate in this step".to_string();
                            self.set_score(id, Score { value: 0.0, samples: vec![], note: Some(note) });
                        }
                        continue;
                    }
                    if self.tree.node(id).score.is_some() || self.evaluation_pending(id) {
                        continue;
                    }
                    if self.fix_value(evaluator, id) {
                        continue;
                    }
                    let prompt = evaluator.value_prompt(&self.x, &y);
                    let request = LlmRequest::from_prompt(prompt, search.n_evaluate, self.temperature);
                    self.issue(id, CallKind::Evaluate, request, by_hand);
                    issued += 1;
                }
                issued
            }
            Evaluator::Vote => {
                let Some(evaluator) = tree.and_then(|t| t.vote()) else {
                    self.log(format!("{} has no vote evaluator: nothing voted on", task.name()));
                    return 0;
                };
                if usable.is_empty() {
                    return 0;
                }
                let ys: Vec<String> = usable.iter().map(|&n| self.tree.node(n).path.to_string()).collect();
                let parent = self.tree.node(usable[0]).parent.unwrap_or(self.tree.root());
                let prompt = evaluator.vote_prompt(&self.x, &ys);
                let request = LlmRequest::from_prompt(prompt, search.n_evaluate, self.temperature);
                self.issue(parent, CallKind::Vote { nodes: usable }, request, by_hand);
                1
            }
        }
    }

    /// Set the task's fixed value for a node, if it has one (not in lenient mode).
    fn fix_value(&mut self, evaluator: &dyn ValueEvaluator, id: NodeId) -> bool {
        if self.lenient() {
            return false;
        }
        let y = &self.tree.node(id).path;
        match evaluator.fixed_value(&self.x, y) {
            Some((value, note)) => {
                self.set_score(id, Score { value, samples: vec![], note: Some(note) });
                true
            }
            None => false,
        }
    }

    /// Ask the value evaluator again about one node, bypassing the cache (nothing on a
    /// task without one: the engine refuses the command there).
    pub fn reevaluate(&mut self, id: NodeId) {
        let task = Arc::clone(&self.task);
        let Some(evaluator) = task.tree().and_then(|t| t.value()) else {
            return self.log(format!("{} has no value evaluator to ask", task.name()));
        };
        let Some(search) = self.search else { return };
        if self.fix_value(evaluator, id) {
            return;
        }
        let y = self.tree.node(id).path.clone();
        let prompt = evaluator.value_prompt(&self.x, &y);
        let mut request = LlmRequest::from_prompt(prompt, search.n_evaluate, self.temperature);
        request.nonce = self.tree.node(id).calls.len() as u32 + 1;
        self.issue(id, CallKind::Evaluate, request, true);
        match self.tree.value(id) {
            Some(v) => self.log(format!("re-evaluating {id} (now {})", crate::engine::tree::format_value(v))),
            None => self.log(format!("re-evaluating {id} (not valued yet)")),
        }
    }

    /// Add candidates under `parent`. In strict mode a proposal with a problem is
    /// kept as an invalid node with the reason; in lenient mode it stays usable.
    pub fn add_proposals(&mut self, parent: NodeId, proposals: Vec<Proposal>, origin: Origin) -> Vec<NodeId> {
        self.add_proposals_scored(parent, proposals, None, origin)
    }

    /// [`Core::add_proposals`], each child keeping its proposal's own score (one per
    /// proposal, if given) as the metric [`crate::engine::task::PROPOSAL_SCORE`].
    pub fn add_proposals_scored(
        &mut self,
        parent: NodeId,
        proposals: Vec<Proposal>,
        scores: Option<&Vec<f64>>,
        origin: Origin,
    ) -> Vec<NodeId> {
        let mut ids = Vec::with_capacity(proposals.len());
        for (i, p) in proposals.into_iter().enumerate() {
            // Blank lines are candidates only in lenient mode (the reference keeps them).
            if p.thought.is_empty() && !self.lenient() {
                continue;
            }
            let id = self.add_node(parent, p.thought, p.path, origin.clone());
            if let Some(problem) = p.problem {
                self.tree.node_mut(id).add_issue(Issue::Proposal(problem.clone()));
                if !self.lenient() {
                    self.set_status(id, NodeStatus::Invalid(problem));
                }
            }
            if let Some(score) = scores.and_then(|s| s.get(i)) {
                self.set_metrics(id, &[(crate::engine::task::PROPOSAL_SCORE, *score)]);
            }
            ids.push(id);
        }
        ids
    }

    /// Cancel pending calls that satisfy `pred`; returns their ids.
    pub fn cancel_where(&mut self, pred: impl Fn(&Pending) -> bool) -> Vec<u64> {
        let calls: Vec<u64> = self.pending.iter().filter(|(_, p)| pred(p)).map(|(&c, _)| c).collect();
        for c in &calls {
            self.pending.remove(c);
        }
        if !calls.is_empty() {
            self.out.push(Effect::Cancel { calls: calls.clone() });
        }
        calls
    }

    /// Cancel the method's own scheduled calls (not ones a person asked for).
    pub fn cancel_scheduled(&mut self) -> Vec<u64> {
        self.cancel_where(|p| !p.by_hand)
    }

    /// Ask the task's judge about each of the outcome's outputs that it judges; returns
    /// the number of calls issued.
    pub(super) fn judge_outputs(&mut self, outcome: &Outcome) -> usize {
        let task = Arc::clone(&self.task);
        let Some(judge) = task.judge() else { return 0 };
        let mut issued = 0;
        if !self.judge_outcome {
            return 0;
        }
        let mut asked: HashMap<String, NodeId> = HashMap::new();
        self.judge_twins.clear();
        for id in outcome.outputs() {
            let y = self.tree.node(id).path.clone();
            if let Some(key) = judge.judge_key(&self.x, &y) {
                if let Some(&first) = asked.get(&key) {
                    self.judge_twins.entry(first).or_default().push(id);
                    continue;
                }
                asked.insert(key, id);
            }
            if let Some(judge) = judge.outcome_judge(&self.x, &y) {
                let request = LlmRequest::from_prompt(judge.prompt, judge.n.max(1), self.temperature);
                self.issue(id, CallKind::Judge, request, false);
                issued += 1;
            }
        }
        if issued > 0 {
            self.log(format!("judging {} before finishing", methods::count(issued, "output", "outputs")));
        }
        issued
    }

    /// Rank the final states, check their answers and build the outcome.
    pub fn finalize(&mut self, finals: Vec<NodeId>) -> Outcome {
        let mut correct = Vec::with_capacity(finals.len());
        for &id in &finals {
            let y = self.tree.node(id).path.clone();
            let answer = self.task.extract_answer(&self.x, &y);
            let ok = answer.as_deref().map(|a| self.check(a).is_ok()).unwrap_or(false);
            self.tree.node_mut(id).answer = answer;
            self.set_status(id, if ok { NodeStatus::Solution } else { NodeStatus::Final });
            correct.push(ok);
        }
        let answer = finals.first().and_then(|&id| self.tree.node(id).answer.clone());
        Outcome {
            solved: correct.first().copied().unwrap_or(false),
            solved_any: correct.iter().any(|&c| c),
            answer,
            finals,
            sample_accuracy: None,
            answered_by: None,
        }
    }
}
