//! The engine: a method driven by inputs (commands, replies, tool observations) in one
//! deterministic order, its run mode, and the outcome.

use super::*;
use crate::protocol::{CallErrorKind, Completion, LlmResponse};

/// Why an engine cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error("method {method} on task {task}: {0}", method = .0.method, task = .0.task)]
    Unsupported(#[from] methods::Unsupported),
}

/// A search: the tree, the method's state and the run mode.
#[derive(Clone)]
pub struct Engine {
    pub core: Core,
    method: Box<dyn Method>,
    pub(super) mode: RunMode,
    pub(super) outcome: Option<Outcome>,
    /// The method's outcome while the task's judge calls about it are in flight.
    judging: Option<Outcome>,
    /// Where the driver pauses the search (set by `Command::Breakpoints`).
    breakpoints: Vec<breakpoint::Breakpoint>,
    /// The method's step when calls were made: (first call made at that step, the step),
    /// one entry each time the step changes (the Stats view's axis).
    call_steps: Vec<(u64, usize)>,
    /// Inputs waiting, in order, for the verdicts of check programs (see [`super::check`]).
    pub(super) waiting: Vec<Input>,
}

impl Engine {
    /// A search with parameters known to be in range (see [`Params::check`]) for a
    /// method known to work on the task (see [`methods::check_serves`]); for a search
    /// built from outside (flags, a session header, a task file) use [`Engine::try_new`].
    pub fn new(task: Arc<dyn Task>, x: &str, params: Params) -> Engine {
        Engine::try_new(task, x, params).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A search, or why not: a parameter out of range for its method, or a method the
    /// task cannot serve.
    pub fn try_new(task: Arc<dyn Task>, x: &str, params: Params) -> Result<Engine, EngineError> {
        let methods::Built { method, temperature, seed, search, .. } = methods::build(&params)?;
        methods::check_serves(task.as_ref(), &params)?;
        let rng = SplitMix64::new(seed ^ 0x5eed_7007);
        let core = Core {
            tree: SearchTree::new(x),
            task,
            x: x.to_string(),
            params,
            temperature,
            search,
            calls: BTreeMap::new(),
            pending: BTreeMap::new(),
            next_call: 0,
            out: Vec::new(),
            pruned_from: HashMap::new(),
            rng,
            memory: None,
            judge_outcome: true,
            judge_twins: HashMap::new(),
            context_window: None,
            checks: BTreeMap::new(),
            unknown: Vec::new(),
            read_tallies: Default::default(),
        };
        Ok(Engine {
            core,
            method,
            mode: RunMode::Paused,
            outcome: None,
            judging: None,
            breakpoints: Vec::new(),
            call_steps: Vec::new(),
            waiting: Vec::new(),
        })
    }

    /// The model's context window (tokens), for methods that fit their prompts to it.
    pub fn set_context_window(&mut self, tokens: Option<u64>) {
        self.core.context_window = tokens;
    }

    /// Whether the outcome is put to the task's judge (on unless a session says it was not).
    pub fn set_outcome_judge(&mut self, judge: bool) {
        self.core.judge_outcome = judge;
    }

    /// Start from this memory (its journal is dropped: it is the problem's snapshot).
    pub fn set_memory(&mut self, memory: Option<crate::memory::Memory>) {
        self.core.memory = memory.map(|mut m| {
            m.take_changes();
            m
        });
    }

    /// The memory as it stands (the snapshot plus this problem's changes so far).
    pub fn memory(&self) -> Option<&crate::memory::Memory> {
        self.core.memory.as_ref()
    }

    /// The run's breakpoints, switched off ones included.
    pub fn breakpoints(&self) -> &[breakpoint::Breakpoint] {
        &self.breakpoints
    }

    pub fn tree(&self) -> &SearchTree {
        &self.core.tree
    }

    pub fn mode(&self) -> RunMode {
        self.mode
    }

    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// What the explorer shows of the method's state.
    /// Why the method would refuse a backtrack now (asked before choosing a cause).
    pub fn backtrack_refusal(&self) -> Option<String> {
        if self.outcome.is_some() {
            return Some("the search is finished".into());
        }
        self.method.backtrack_refusal(&self.core)
    }

    pub fn view(&self) -> methods::MethodView {
        self.method.view(&self.core)
    }

    pub fn is_finished(&self) -> bool {
        self.outcome.is_some()
    }

    /// Calls issued and not yet answered (or cancelled).
    pub fn pending_calls(&self) -> Vec<u64> {
        self.core.pending.keys().copied().collect()
    }

    pub fn is_idle(&self) -> bool {
        self.core.pending.is_empty()
    }

    pub fn handle(&mut self, input: Input) -> Vec<Effect> {
        if self.core.task.runs_checks() {
            return self.handle_checked(input);
        }
        self.handle_now(Some(input))
    }

    /// Apply `input` (none: only settle and go on) and take what it asked for.
    pub(super) fn handle_now(&mut self, input: Option<Input>) -> Vec<Effect> {
        match input {
            Some(Input::Command { command }) => self.command(command),
            Some(Input::LlmReply(reply)) => self.reply(reply),
            Some(Input::ToolReply(reply)) => self.tool_reply(reply),
            Some(Input::CheckReply(reply)) => self.check_reply(reply),
            None => {}
        }
        self.pump();
        self.core.flush_memory();
        self.note_call_step();
        std::mem::take(&mut self.core.out)
    }

    /// The method's step (its `view().step`) when model call `call` was made.
    pub fn call_step(&self, call: u64) -> usize {
        let i = self.call_steps.partition_point(|&(first, _)| first <= call);
        i.checked_sub(1).map_or(0, |i| self.call_steps[i].1)
    }

    fn note_call_step(&mut self) {
        let first = self.core.out.iter().find_map(|e| match e {
            Effect::CallLlm { call, .. } => Some(*call),
            _ => None,
        });
        if let Some(first) = first {
            let step = self.method.view(&self.core).step;
            if self.call_steps.last().map(|&(_, s)| s) != Some(step) {
                self.call_steps.push((first, step));
            }
        }
    }

    /// The search goes on (an edit, a backtrack, a continuation): no outcome yet, and a
    /// judgment of the old one is moot.
    fn reopen(&mut self) {
        self.outcome = None;
        if self.judging.take().is_some() {
            self.core.cancel_where(|p| p.kind == CallKind::Judge);
        }
    }

    fn set_mode(&mut self, mode: RunMode) {
        if self.mode != mode {
            self.mode = mode;
            self.core.emit(Event::Mode { mode });
        }
    }

    /// Why a person cannot `what` here: the method searches no tree of thoughts.
    fn no_search(&self, what: &str) -> String {
        let searches: Vec<&str> = methods::REGISTRY
            .iter()
            .filter(|m| m.param(params::GENERATOR.name).is_some())
            .map(|m| m.kind.label())
            .collect();
        format!(
            "{} searches no tree of thoughts, so there is no generator or evaluator to {what} with (tree searches: {})",
            self.core.params.method,
            searches.join(", ")
        )
    }

    fn reject(&mut self, reason: impl Into<String>) {
        self.core.emit(Event::Rejected { reason: reason.into() });
    }

    fn check_node(&mut self, node: NodeId) -> bool {
        if self.core.tree.contains(node) {
            true
        } else {
            self.reject(format!("there is no node {node}"));
            false
        }
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Run => self.set_mode(RunMode::Running),
            Command::Pause => self.set_mode(RunMode::Paused),
            Command::Step { n } => self.set_mode(RunMode::Step(n.max(1))),
            Command::Prune { node } => self.prune(node),
            Command::Unprune { node } => self.unprune(node),
            Command::Edit { node, text } => self.edit(node, text),
            Command::Backtrack { to, cause } => self.backtrack(to, cause),
            Command::Expand { node } => self.expand(node),
            Command::Memory { change } => self.memory_command(change),
            Command::Breakpoints { set } => self.set_breakpoints(&set),
            Command::Reevaluate { node } => self.reevaluate(node),
            Command::Continue { node } => self.continue_from(node),
        }
    }

    /// Replace the breakpoints with `set` (as written), or reject them all if one is bad.
    fn set_breakpoints(&mut self, set: &[String]) {
        match breakpoint::Breakpoint::parse_all(set) {
            Ok(list) => {
                let texts: Vec<String> = list.iter().map(|b| b.text()).collect();
                self.breakpoints = list;
                match texts.is_empty() {
                    true => self.core.log("breakpoints cleared"),
                    false => self.core.log(format!("breakpoints: {}", texts.join(", "))),
                }
            }
            Err(e) => self.reject(e.to_string()),
        }
    }

    /// Prune `node` and its subtree: calls inside are cancelled.
    fn prune(&mut self, node: NodeId) {
        if !self.check_node(node) {
            return;
        }
        if node == self.core.tree.root() {
            return self.reject("the root cannot be pruned");
        }
        if self.core.tree.node(node).status == NodeStatus::Pruned {
            return self.reject(format!("{node} is already pruned"));
        }
        let old = self.core.tree.node(node).status.clone();
        self.core.pruned_from.insert(node, old);
        self.core.set_status(node, NodeStatus::Pruned);
        self.core.tree.bump_generation(node);
        let tree = &self.core.tree;
        let inside: BTreeSet<NodeId> = tree.subtree(node).into_iter().collect();
        let cancelled = self.core.cancel_where(|p| inside.contains(&p.node));
        self.core.log(format!("pruned {node} ({} cancelled)", methods::count(cancelled.len(), "call", "calls")));
        self.method.on_prune(&mut self.core, node);
    }

    /// Give a pruned node back the status it had.
    fn unprune(&mut self, node: NodeId) {
        if !self.check_node(node) {
            return;
        }
        match self.core.pruned_from.remove(&node) {
            Some(old) => {
                self.core.set_status(node, old);
                self.core.log(format!("un-pruned {node}"));
            }
            None => self.reject(format!("{node} is not pruned")),
        }
    }

    /// A person's text in place of `node`'s: a new sibling the search goes on from (the
    /// old continuation stays), or the method's own edit where it has one.
    fn edit(&mut self, node: NodeId, text: String) {
        if !self.check_node(node) {
            return;
        }
        let Some(parent) = self.core.tree.node(node).parent else {
            return self.reject("the root (the puzzle input) cannot be edited; use a new input instead");
        };
        let text = text.trim().to_string();
        if text.is_empty() {
            return self.reject("an edited thought cannot be empty");
        }
        if let Some(result) = self.method.edit(&mut self.core, node, &text) {
            match result {
                Ok(new) => {
                    self.core.log(format!("edited {node} by hand as {new}; the old continuation stays"));
                    self.reopen();
                }
                Err(reason) => self.reject(reason),
            }
            return;
        }
        let y = self.core.tree.node(parent).path.clone();
        let mut proposal = match self.core.task.tree() {
            Some(tree) => tree.parse_edit(&self.core.x, &y, &text),
            // A task that answers whole: the text is a whole answer after `y`.
            None => Proposal { thought: text.clone(), path: format!("{y}{text}\n"), problem: None },
        };
        self.core.check_steps(&y, std::slice::from_mut(&mut proposal));
        let origin = Origin::Human { edited_from: Some(node) };
        let ids = self.core.add_proposals(parent, vec![proposal], origin);
        // The task may read the text as no step at all (an empty thought is dropped).
        let Some(&new) = ids.first() else {
            return self.reject("the edited text is not a step this task can read; nothing was added");
        };
        self.core.log(format!("edited {node} by hand as {new}"));
        if self.core.usable(new) && self.core.has_evaluator() {
            self.core.evaluate(&[new], true, Duplicates::ScoreZero);
        }
        self.method.on_edit(&mut self.core, node, new);
        // A finished search can go on from an edit.
        self.reopen();
    }

    /// Backtrack by hand, to `to` or where the method chooses, for `cause` if given.
    fn backtrack(&mut self, to: Option<NodeId>, cause: Option<String>) {
        if let Some(node) = to {
            if !self.check_node(node) {
                return;
            }
        }
        let done = match cause.as_deref() {
            Some(cause) => self.method.backtrack_because(&mut self.core, to, cause),
            None => self.method.backtrack(&mut self.core, to),
        };
        if let Err(reason) = done {
            self.reject(reason);
        } else {
            self.reopen();
        }
    }

    /// Expand `node` by hand (tree searches).
    fn expand(&mut self, node: NodeId) {
        if !self.check_node(node) {
            return;
        }
        if !self.core.usable(node) {
            return self.reject(format!("{node} is pruned or invalid"));
        }
        if self.core.search.is_none() {
            return self.reject(self.no_search("expand a node"));
        }
        if self.core.task.tree().is_none() {
            return self.reject(format!("{} has no tree-search steps to expand", self.core.task.name()));
        }
        let had = self.core.tree.node(node).children.len();
        self.core.generate(node, true);
        if had == 0 {
            self.core.log(format!("expanding {node} by hand"));
        } else {
            self.core.log(format!(
                "expanding {node} by hand again (it has {}): new children that repeat them are marked duplicates",
                methods::count(had, "child", "children")
            ));
        }
    }

    /// Ask the task's evaluator for `node`'s value again.
    fn reevaluate(&mut self, node: NodeId) {
        if !self.check_node(node) {
            return;
        }
        if node == self.core.tree.root() {
            return self.reject("the root has no value to re-evaluate");
        }
        if self.core.task.tree().and_then(|t| t.value()).is_none() {
            return self.reject(format!("{} has no value evaluator to ask", self.core.task.name()));
        }
        if self.core.search.is_none() {
            return self.reject(self.no_search("re-evaluate a node"));
        }
        self.core.reevaluate(node);
    }

    /// Go on from `node` (the method's own continuation).
    fn continue_from(&mut self, node: NodeId) {
        if !self.check_node(node) {
            return;
        }
        if !self.core.usable(node) {
            return self.reject(format!("{node} is pruned or invalid"));
        }
        match self.method.continue_from(&mut self.core, node) {
            Ok(()) => {
                self.reopen();
                self.core.log(format!("continuing from {node}"));
            }
            Err(reason) => self.reject(reason),
        }
    }

    /// A person's change to the memory: an entry edited, pinned or removed.
    fn memory_command(&mut self, change: crate::memory::MemoryChange) {
        use crate::memory::MemoryChange;
        if !matches!(change, MemoryChange::Edit { .. } | MemoryChange::Remove { .. }) {
            return self.reject("a person can edit, pin or remove a memory entry; other changes are the method's");
        }
        let Some(memory) = self.core.memory.as_mut() else {
            return self.reject("this run has no memory (ReTreVal keeps one; see --memory)");
        };
        match memory.apply(&change) {
            Ok(_) => {
                let what = match &change {
                    MemoryChange::Remove { id } => format!("removed memory entry {id}"),
                    MemoryChange::Edit { id, content, confidence, pinned } => {
                        let mut parts = Vec::new();
                        if content.is_some() {
                            parts.push("rewrote".to_string());
                        }
                        if let Some(c) = confidence {
                            parts.push(format!("set confidence {c:.2} of"));
                        }
                        match pinned {
                            Some(true) => parts.push("pinned".to_string()),
                            Some(false) => parts.push("unpinned".to_string()),
                            None => {}
                        }
                        format!("{} memory entry {id} by hand", parts.join(", "))
                    }
                    _ => unreachable!("checked above"),
                };
                self.core.log(what);
            }
            Err(e) => self.reject(format!("memory: {e}")),
        }
    }

    fn tool_reply(&mut self, reply: ToolReply) {
        let call = reply.call;
        let Some(pending) = self.core.pending.remove(&call) else {
            self.core.emit(Event::ReplyDropped { call, reason: "no such tool call in flight".into() });
            return;
        };
        if self.core.tree.node(pending.node).generation != pending.generation {
            self.core.emit(Event::ReplyDropped { call, reason: "the node changed since the call was made".into() });
            return;
        }
        self.method.on_tool(&mut self.core, pending.node, reply.result);
    }

    fn reply(&mut self, mut reply: LlmReply) {
        let call = reply.call;
        if let Ok(response) = &mut reply.result {
            response.share_repeated_texts();
        }
        let Some(pending) = self.core.pending.remove(&call) else {
            let reason =
                if self.core.calls.contains_key(&call) { "cancelled or already answered" } else { "no such call" };
            self.core.emit(Event::ReplyDropped { call, reason: reason.into() });
            return;
        };
        if let Some(record) = self.core.calls.get_mut(&call) {
            Arc::make_mut(record).reply = Some(reply.result.clone());
        }
        if self.core.tree.node(pending.node).generation != pending.generation {
            let reason = "the node changed since the call was made".to_string();
            self.core.emit(Event::ReplyDropped { call, reason });
            return;
        }
        let node = pending.node;
        let response = match reply.result {
            Ok(r) => r,
            Err(err) => {
                let message = err.to_string();
                self.core.tree.node_mut(node).add_issue(Issue::CallFailed { call, message: message.clone() });
                self.core.emit(Event::CallFailed { call, node, message: message.clone() });
                if err.kind == CallErrorKind::ContextOverflow {
                    self.note_overflow(node);
                }
                if pending.kind == CallKind::Act {
                    self.method.on_act_failed(&mut self.core, node, &err);
                }
                if pending.kind == CallKind::Evaluate {
                    let note = format!("evaluation failed: {message}");
                    self.core.set_score(node, Score { value: 0.0, samples: vec![], note: Some(note) });
                }
                return;
            }
        };
        if let Some(lost) = &response.lost {
            // The samples that came are read as any reply's; the call still says it fell short.
            let came = response.completions.len();
            let what = format!(
                "{came} of {} samples of call #{call} came; {} lost when a request failed: {}",
                came + lost.samples as usize,
                lost.samples,
                lost.error
            );
            self.core.tree.node_mut(node).add_issue(Issue::Note(what.clone()));
            self.core.log(format!("{node}: {what}"));
        }
        let before = self.core.tree.len();
        let kind = pending.kind.clone();
        self.apply_reply(node, pending, response);
        // Remember which call wrote each new node, for the detail view (or, for a
        // person's ReAct thought the model completed, which call wrote its action).
        for id in before..self.core.tree.len() {
            self.core.tree.node_mut(NodeId(id)).made_by = Some(call);
        }
        if self.core.tree.len() == before && kind == CallKind::Act {
            self.core.tree.node_mut(node).made_by.get_or_insert(call);
        }
    }

    /// Say once (the first time in the run) that prompts have outgrown the model's
    /// context window: the branches that reach it stop there, which the method does.
    fn note_overflow(&mut self, node: NodeId) {
        let overflowed =
            |c: &&Arc<CallRecord>| matches!(&c.reply, Some(Err(e)) if e.kind == CallErrorKind::ContextOverflow);
        if self.core.calls.values().filter(overflowed).count() == 1 {
            self.core.log(format!(
                "the prompt for {node} does not fit the model's context window: it is not sent again, and a \
                 branch whose prompt outgrows the window stops there (give the model a larger context, or \
                 fewer steps)"
            ));
        }
    }

    /// Expanding a node again can give children its earlier ones already are (the same
    /// prompt, the same reply): marked ✗ duplicate, said in the log, and not valued again.
    /// `earlier` are the children to compare with: by hand, every other child; in a search
    /// step, those the node had when the step asked (a hand expansion before the step).
    fn mark_repeats(&mut self, node: NodeId, children: &[NodeId], earlier: Vec<NodeId>) {
        let mut repeats = Vec::new();
        for &child in children {
            let path = &self.core.tree.node(child).path;
            if let Some(&twin) = earlier.iter().find(|&&e| self.core.tree.node(e).path == *path) {
                repeats.push(format!("{child} = {twin}"));
                self.core.set_status(child, NodeStatus::Invalid(format!("duplicate of {twin}")));
            }
        }
        if !repeats.is_empty() {
            self.core.log(format!(
                "{} of {} new children of {node} repeat earlier ones, marked ✗ duplicate: {}",
                repeats.len(),
                children.len(),
                repeats.join(", ")
            ));
        }
    }

    /// New children that repeat the node's earlier ones are marked (`mark_repeats`): by
    /// hand against every other child, in a search step against those the node had when
    /// the step asked. A person's expansion is then valued as a ToT step is.
    fn check_repeats(&mut self, node: NodeId, children: &[NodeId], pending: &Pending) {
        let siblings = &self.core.tree.node(node).children;
        if pending.by_hand {
            let earlier = siblings.iter().copied().filter(|c| !children.contains(c)).collect();
            self.mark_repeats(node, children, earlier);
            self.core.evaluate(children, true, Duplicates::ScoreZero);
        } else if pending.children_before > 0 {
            let earlier = siblings.iter().copied().take(pending.children_before).collect();
            self.mark_repeats(node, children, earlier);
        }
    }

    /// A propose or sample reply: its steps as children of `node`, each counted as read
    /// or not (see [`health::ReadTallies`]).
    fn apply_generate(&mut self, node: NodeId, pending: &Pending, texts: &[String], x: &str, y: &str) {
        // Only a tree search generates (`Core::generate` asks nothing without one).
        let Some(SearchParams { generator, .. }) = self.core.search else { return };
        let task = Arc::clone(&self.core.task);
        let Some(tree) = task.tree() else {
            return self.core.log(format!("{} has no tree-search steps: the reply is not read", task.name()));
        };
        let merged = match generator {
            Generator::Propose => tree.proposal_scores(),
            Generator::Sample => None,
        };
        let tallies = &mut self.core.read_tallies;
        let (mut proposals, scores): (Vec<Proposal>, Vec<f64>) = match (generator, merged) {
            (Generator::Propose, Some(scored)) => {
                let merged = scored.merge_proposals(x, y, texts);
                tallies.count_merged(texts, merged.iter().map(|(p, _)| p));
                merged.into_iter().unzip()
            }
            (Generator::Propose, None) => {
                let mut all = Vec::new();
                for t in texts {
                    let read = tree.parse_proposals(x, y, t);
                    tallies.count_proposals(t, &read);
                    all.extend(read);
                }
                all.into_iter().map(|p| (p, 0.0)).unzip()
            }
            (Generator::Sample, _) => texts
                .iter()
                .map(|t| {
                    let p = tree.parse_sample(x, y, t);
                    tallies.count_proposals(t, std::slice::from_ref(&p));
                    (p, 0.0)
                })
                .unzip(),
        };
        self.core.check_steps(y, &mut proposals);
        let children =
            self.core.add_proposals_scored(node, proposals, merged.is_some().then_some(&scores), Origin::Model);
        self.check_repeats(node, &children, pending);
        self.method.on_children(&mut self.core, node, &children, pending.by_hand);
    }

    /// What a successful reply does, by the kind of call.
    fn apply_reply(&mut self, node: NodeId, pending: Pending, response: LlmResponse) {
        let texts: Vec<String> = response.completions.iter().map(|c| c.text.to_string()).collect();
        let (x, y) = (self.core.x.clone(), self.core.tree.node(node).path.clone());
        match pending.kind {
            CallKind::Generate => self.apply_generate(node, &pending, &texts, &x, &y),
            CallKind::Evaluate => {
                let task = Arc::clone(&self.core.task);
                match task.tree().and_then(|t| t.value()) {
                    Some(evaluator) => {
                        let before = self.core.tree.value(node);
                        let (value, samples) = evaluator.parse_value(&x, &y, &texts);
                        self.core.read_tallies.count_values(&texts, &samples, evaluator.value_classes());
                        self.core.set_score(node, Score { value, samples, note: None });
                        // `v`: the old value and the new one, in the log.
                        if let (true, Some(before)) = (pending.by_hand, before) {
                            self.core.log(format!(
                                "re-evaluated {node}: {} → {}",
                                crate::engine::tree::format_value(before),
                                crate::engine::tree::format_value(value)
                            ));
                        }
                    }
                    None => self.core.log(format!("{} has no value evaluator: the reply is not read", task.name())),
                }
            }
            CallKind::Vote { nodes } => {
                let task = Arc::clone(&self.core.task);
                let Some(vote) = task.tree().and_then(|t| t.vote()) else {
                    return self.core.log(format!("{} has no vote evaluator: the reply is not read", task.name()));
                };
                let mut votes = vec![0.0; nodes.len()];
                let mut out_of_range = 0;
                let tallies = &mut self.core.read_tallies.vote_samples;
                for t in &texts {
                    // A choice outside the list counts as an unreadable vote, like one with no choice.
                    match vote.parse_vote(t, nodes.len()) {
                        Some(i) => match votes.get_mut(i) {
                            Some(count) => {
                                *count += 1.0;
                                tallies.good();
                            }
                            None => {
                                out_of_range += 1;
                                let read = format!("choice {} is outside 1..{}", i + 1, nodes.len());
                                tallies.bad(health::last_line(t), read);
                            }
                        },
                        None => tallies.bad(health::last_line(t), "no choice read"),
                    }
                }
                if out_of_range > 0 {
                    self.core.log(format!(
                        "{out_of_range} of {} {} named a choice outside 1..{}; not counted",
                        texts.len(),
                        methods::noun(texts.len(), "vote reply", "vote replies"),
                        nodes.len()
                    ));
                }
                for (i, &id) in nodes.iter().enumerate() {
                    let samples = vec![format!("{} of {} votes", votes[i], texts.len())];
                    self.core.set_score(id, Score { value: votes[i], samples, note: None });
                }
            }
            CallKind::Act => {
                // The first completion: its text, and its native tool calls if any.
                let completion = response.completions.first().cloned().unwrap_or_else(|| Completion::text("", None));
                self.method.on_act(&mut self.core, node, &completion);
            }
            CallKind::Tool | CallKind::Check(_) => {}
            CallKind::Judge => {
                let task = Arc::clone(&self.core.task);
                let Some(judge) = task.judge() else {
                    return self.core.log(format!("{} has no judge: the reply is not read", task.name()));
                };
                let judgment = judge.read_judgment(&x, &y, &texts);
                let metrics: Vec<(&str, f64)> = judgment.metrics.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                let twins = self.core.judge_twins.get(&node).cloned().unwrap_or_default();
                for id in std::iter::once(node).chain(twins) {
                    self.core.set_metrics(id, &metrics);
                    if !judgment.note.is_empty() {
                        self.core.set_note(id, "judge", &judgment.note);
                    }
                    if let Some(right) = judgment.verdict {
                        self.core.set_status(id, if right { NodeStatus::Solution } else { NodeStatus::Final });
                    }
                }
                if let (Some(_), Some(outcome)) = (judgment.verdict, self.judging.as_mut()) {
                    regrade(&self.core, outcome);
                }
            }
            CallKind::Own(tag) => self.method.on_reply(&mut self.core, node, tag, &response),
            CallKind::Answer => {
                // An empty reply makes no answer node: it is counted here, as an answer with
                // nothing to grade (the others are counted from the outcome).
                for _ in texts.iter().filter(|t| t.trim().is_empty()) {
                    self.core.read_tallies.answers.bad("", "an empty reply, nothing to grade");
                }
                let proposals = texts
                    .iter()
                    .map(|t| Proposal { thought: t.trim().to_string(), path: t.clone(), problem: None })
                    .collect();
                let children = self.core.add_proposals(node, proposals, Origin::Model);
                self.method.on_children(&mut self.core, node, &children, pending.by_hand);
            }
        }
    }

    /// Settle finished batches and issue new ones as the run mode allows.
    fn pump(&mut self) {
        loop {
            if self.outcome.is_some() || self.core.has_pending() {
                return;
            }
            // The judge calls are answered: the outcome stands.
            if let Some(outcome) = self.judging.take() {
                return self.finish(outcome);
            }
            self.method.settle(&mut self.core);
            if self.method.done() {
                let outcome = self.method.outcome(&mut self.core);
                if self.core.judge_outputs(&outcome) > 0 {
                    self.judging = Some(outcome);
                    return;
                }
                return self.finish(outcome);
            }
            match self.mode {
                RunMode::Paused => return,
                RunMode::Step(0) => return self.set_mode(RunMode::Paused),
                _ => {}
            }
            match self.method.advance(&mut self.core) {
                Progress::Issued(_) => {
                    if let RunMode::Step(k) = self.mode {
                        self.mode = RunMode::Step(k.saturating_sub(1));
                    }
                }
                Progress::Moved => {}
                Progress::Stuck(reason) => {
                    self.core.log(reason);
                    return self.set_mode(RunMode::Paused);
                }
            }
        }
    }

    fn finish(&mut self, outcome: Outcome) {
        self.core.emit(Event::Finished { outcome: outcome.clone() });
        self.outcome = Some(outcome);
        self.set_mode(RunMode::Paused);
    }
}

/// The outcome's figures from its finals' statuses, after a judge's verdicts set them.
fn regrade(core: &Core, outcome: &mut Outcome) {
    let solved: Vec<bool> = outcome.finals.iter().map(|&n| core.tree.node(n).status == NodeStatus::Solution).collect();
    outcome.solved = solved.first().copied().unwrap_or(false);
    outcome.solved_any = solved.iter().any(|&s| s);
    if outcome.sample_accuracy.is_some() {
        let right = solved.iter().filter(|&&s| s).count();
        outcome.sample_accuracy = Some(if solved.is_empty() { 0.0 } else { right as f64 / solved.len() as f64 });
    }
}
