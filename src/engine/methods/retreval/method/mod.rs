//! The ReTreVal method (`--method retreval`): the building blocks of this folder put
//! together as a search the explorer can watch and steer.
//!
//! ## How ReTreVal runs here
//!
//! 1. **Complexity.** One call (`complexity`) rates the problem 1–5; the table
//!    (`--complexity-table paper|official|1:2x2,...`) maps it to depth D and branching b.
//!    The estimate shows as the root's first child, `complexity 3 → depth 3 ×
//!    branching 3`, and on the root as the note `complexity`. It is a unit of work of
//!    its own: step once, read it, and edit that node to a number 1–5 to change the
//!    shape — allowed until the first attempt is scored. An unreadable reply counts as 3.
//! 2. **Attempts.** b root-level attempts, each told an approach (algebraic, casework,
//!    geometric, numeric, combinatorial, ranked by the memory's reliability, best
//!    first). Each is a tool-augmented solve: a ReAct loop on the task's ReAct prompt
//!    (`--tool-mode native`: its native tool-calling prompt) whose context adds
//!    `retreval: solve`, `approach`, `lessons` (up to 3 memory entries retrieved for
//!    "<problem> <approach>"), `history` (the critique history) and, for a refinement,
//!    `critique` and `attempt`. Every step is a node (thought, action, observation);
//!    the attempt is its chain, shown by its last node, labelled `<approach> · <answer>`.
//!    A solve ends at `finish`, after 6 tool steps, or when it repeats its last action
//!    (loop detection). With `--no-tools` a solve is one chain-of-thought call.
//! 3. **Scores.** Every finished attempt gets a local self-assessment (`local`) and,
//!    with siblings, a cross critique against them (`cross`, skipped with
//!    `--no-cross`); `total = 0.6·local + 0.4·cross − 0.4·(1 − reliability)` (weights
//!    are parameters; no penalty for an approach the memory has never seen, nor with
//!    `--no-memory`). The node's metrics are `local`, `cross`, `penalty`, `total`; its
//!    value is the total; its notes `critique` and `history`.
//! 4. **Search and validation.** Each next level refines the best attempt of the level
//!    with b refinements (same approach, the critique and the attempt in context),
//!    down to depth D or until the best local score reaches 0.9. Then the branch's best
//!    leaf is validated (`validate`; with `--feedback oracle`, the task's checker). On a
//!    failure the cause is classified (`failure`), written to the memory, and the search
//!    jumps to the best unexplored root-level attempt (preferring another approach),
//!    whose critique history gets the typed failure; it is refined from there. A
//!    person's `b` names the cause instead (no classification call) and may name the
//!    root-level attempt to jump to. `--no-backtrack` stops at the first failure.
//! 5. **Decomposition.** When the best total of a branch stays below
//!    `--decompose-threshold` through its refinements (complexity at least
//!    `--decompose-min-complexity`), or with nothing left to backtrack to, complexity at least
//!    `--decompose-min-complexity` and the best total of the attempts not judged wrong
//!    below `--decompose-threshold` (none left counts as below),
//!    the problem is split (`decompose`) into 2–4 subtasks, shown under a
//!    `decomposition` node; each is solved by its own tool-augmented solve, and the
//!    results are composed (`compose`) into a candidate that is validated like the others.
//! 6. **Memory.** With a memory (and without `--no-memory`): failures and validated
//!    successes become entries as they happen; at the end the final approach's outcome
//!    (solved by the validation's verdict, or by the checker with `--feedback oracle`),
//!    each retrieved entry's use, critique signals on the failure entries used, a
//!    rewrite call (`rewrite`) for every entry holding a full set of signals, and a
//!    consolidation. Every change leaves the engine as an `Event::Memory`.
//!
//! The outcome is the final leaf (a validated one if any, else the best scored), then
//! the other attempts by total.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::tree::{split_notes, DropReason};
use crate::engine::{
    CallKind, Core, Event, MethodKind, NodeId, NodeStatus, Origin, Outcome, ParamError, ParamReader, Params, Step,
    ToolMode,
};
use crate::memory::{Category, EntryId};
use crate::protocol::{Completion, LlmRequest, LlmResponse, Prompt, Purpose, ToolRequest, ToolResult};

use super::super::react::{read_step, ReactParams};
use super::super::rounds::{self, FeedbackSource};
use super::super::{count, Candidates, Method, MethodInfo, MethodView, Progress};
use super::{
    clip, complexity_prompt, compose_prompt, cross_prompt, decompose_prompt, failure_note, failure_prompt,
    local_prompt, params, parse_complexity, parse_cross, parse_failure, parse_local_score, parse_subtasks,
    parse_validation, pick_backtrack_target, subtask_problem, validation_prompt, Approach, BacktrackCandidate,
    Complexity, FailureCause, RetrevalParams, Score, Shape, SolvedSubtask, Subtask, TypedFailure, CONTEXT_KEY,
    MAX_TRACE_CHARS,
};

mod learn;
mod score;
mod solve;
mod steer;
mod subtasks;
mod validate;

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("retreval");

pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "ReTreVal: adaptive tree, tool-augmented attempts, local+cross scoring, memory, typed backtracking",
    react: crate::engine::methods::ReactShape::None,
    uses_tools: true,
    needs,
    params: &[
        params::OWN[0],
        params::OWN[1],
        params::OWN[2],
        params::OWN[3],
        params::OWN[4],
        params::OWN[5],
        params::OWN[6],
        params::OWN[7],
        params::OWN[8],
        params::OWN[9],
        params::OWN[10],
        params::OWN[11],
        &rounds::FEEDBACK,
        &super::super::react::TOOL_MODE,
    ],
    wants_memory,
    build: |p| Ok(Box::new(Retreval::new(p)?)),
};

/// `MethodInfo::needs`: ReAct steps for its tool-augmented solves (none with
/// `--no-tools`, which solves with one chain-of-thought call), and the calls of its
/// phases: complexity, local and approach scores (value), cross critiques (vote),
/// validation (feedback), failure classification (reflect), decomposition (propose)
/// and composition (cot).
fn needs(p: &Params) -> crate::engine::methods::Needs {
    use crate::engine::methods::Needs;
    use crate::protocol::Purpose;
    let phases = Needs::of(
        &[],
        &[Purpose::Value, Purpose::Vote, Purpose::Feedback, Purpose::Reflect, Purpose::Propose, Purpose::Cot],
    );
    match RetrevalParams::read(&p.reader()) {
        Ok(r) if r.no_tools => phases,
        _ => Needs::react(p).and(phases),
    }
}

/// `MethodInfo::wants_memory`: a memory unless `--no-memory`.
pub fn wants_memory(p: &Params) -> bool {
    p.reader().flag(&params::NO_MEMORY).is_ok_and(|off| !off)
}

/// Most tool steps one solve takes before it ends without `finish`.
pub const MAX_TOOL_STEPS: usize = 6;
/// A level whose best local score reaches this is not refined further.
pub const GOOD_LOCAL: f64 = 0.9;
/// Memory entries retrieved into one solve's prompt.
pub const LESSONS: usize = 3;
/// The complexity taken when the reply gives none.
const FALLBACK_COMPLEXITY: u8 = 3;

// Own call tags.
const TAG_COMPLEXITY: u32 = 0;
const TAG_SOLVE_COT: u32 = 1;
const TAG_LOCAL: u32 = 2;
const TAG_CROSS: u32 = 3;
const TAG_VALIDATE: u32 = 4;
const TAG_FAILURE: u32 = 5;
const TAG_DECOMPOSE: u32 = 6;
const TAG_COMPOSE: u32 = 7;
/// Rewrite calls: this plus the entry's place in `Retreval::rewrites`.
const TAG_REWRITE: u32 = 100;

/// The note labels on an attempt's last node.
pub const CRITIQUE_NOTE: &str = "critique";
pub const HISTORY_NOTE: &str = "history";
/// The root's note with the complexity estimate.
pub const COMPLEXITY_NOTE: &str = "complexity";

/// Where the search is. Each phase is what `advance` does next; the replies of the
/// calls it issued are all in when `advance` runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Complexity,
    ReadComplexity,
    Roots,
    Solving,
    Scoring,
    Combine,
    Validate,
    Validated,
    Classify,
    Classified,
    Decompose,
    Decomposed,
    Compose,
    Composed,
    Memory,
    Rewritten,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Root,
    Refine,
    /// A person's rewrite of an attempt.
    Edited,
    /// The solve of one subtask of a decomposition (its index).
    Subtask(usize),
    Composed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SolveState {
    /// Its next step can be asked for.
    Ready,
    /// A model or tool call is in flight.
    Waiting,
    Done,
    /// Pruned, cancelled or failed before any step: never picked.
    Abandoned,
}

/// One attempt: a whole solve (a chain of steps, or one chain-of-thought reply).
#[derive(Debug, Clone)]
struct Attempt {
    kind: Kind,
    approach: Approach,
    /// The node the chain hangs from (the root, a refined attempt's last node, a subtask node).
    anchor: NodeId,
    /// The attempt's own first node (`attempt 2 · casework`), under the anchor; its steps
    /// hang below it. None for a person's rewrite and a composition (one node each).
    head: Option<NodeId>,
    /// The root-level attempt (index) this one descends from (itself for a root-level one).
    branch: usize,
    level: usize,
    /// The problem text it solves (the problem, or a subtask's text).
    x: String,
    /// Its place among its siblings, so equal requests get their own answers.
    nonce: u32,
    history: Vec<String>,
    /// For a refinement: the refined attempt's critique and trace.
    critique_in: Option<String>,
    attempt_in: Option<String>,
    lessons: Vec<String>,
    /// Its step nodes, in order.
    nodes: Vec<NodeId>,
    steps: usize,
    last_action: Option<ToolRequest>,
    acting: Option<ToolRequest>,
    state: SolveState,
    answer: Option<String>,
    local: Option<f64>,
    cross: Option<f64>,
    /// Its own critique (the cross critique, else the local assessment), for refinements.
    critique: String,
    score: Option<Score>,
    /// Root-level: the search went down it or validated it.
    explored: bool,
    validated: Option<bool>,
}

impl Attempt {
    fn last(&self) -> Option<NodeId> {
        self.nodes.last().copied()
    }

    fn tip(&self) -> NodeId {
        self.last().or(self.head).unwrap_or(self.anchor)
    }

    fn total(&self) -> Option<f64> {
        self.score.map(|s| s.total)
    }
}

/// What a validation found.
#[derive(Debug, Clone)]
struct Verdict {
    passed: bool,
    cause: Option<FailureCause>,
    /// The critique (self-check) or the grader's message (oracle).
    feedback: String,
}

/// A decomposition in progress.
#[derive(Debug, Clone)]
struct Decomposition {
    node: NodeId,
    subtasks: Vec<(Subtask, NodeId)>,
    solved: Vec<SolvedSubtask>,
}

/// ReTreVal's state.
#[derive(Debug, Clone)]
pub struct Retreval {
    pub params: RetrevalParams,
    feedback: FeedbackSource,
    tool_mode: ToolMode,
    phase: Phase,
    complexity: Option<Complexity>,
    complexity_node: Option<NodeId>,
    shape: Option<Shape>,
    attempts: Vec<Attempt>,
    /// The attempts of the batch being solved and scored.
    active: Vec<usize>,
    /// The root-level attempt whose branch the search is in.
    branch: Option<usize>,
    /// The attempt being validated, and what the validation found.
    candidate: Option<usize>,
    verdict: Option<Verdict>,
    /// Replies of the method's own calls, by node and tag, read by the next phase.
    replies: BTreeMap<(NodeId, u32), String>,
    decomposition: Option<Decomposition>,
    decomposed: bool,
    /// Memory entries retrieved into this problem's prompts.
    used: BTreeSet<EntryId>,
    /// The last critique of the problem (for the signals of the failure entries used).
    last_critique: Option<String>,
    rewrites: Vec<EntryId>,
    memory_updated: bool,
    finals: Vec<NodeId>,
}

impl Retreval {
    pub fn new(p: &ParamReader) -> Result<Retreval, ParamError> {
        Ok(Retreval {
            params: RetrevalParams::read(p)?,
            feedback: rounds::read_feedback(p)?,
            tool_mode: p.choice(&super::super::react::TOOL_MODE)?,
            phase: Phase::Complexity,
            complexity: None,
            complexity_node: None,
            shape: None,
            attempts: Vec::new(),
            active: Vec::new(),
            branch: None,
            candidate: None,
            verdict: None,
            replies: BTreeMap::new(),
            decomposition: None,
            decomposed: false,
            used: BTreeSet::new(),
            last_critique: None,
            rewrites: Vec::new(),
            memory_updated: false,
            finals: Vec::new(),
        })
    }
}

fn fallback_failure(cause: FailureCause, approach: Approach, feedback: &str) -> TypedFailure {
    let summary = feedback.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no summary");
    TypedFailure { cause, approach, summary: clip(summary, 300) }
}

fn fmt_total(t: Option<f64>) -> String {
    t.map_or("unscored".to_string(), |t| format!("{t:.2}"))
}

fn reply_text(reply: &LlmResponse) -> String {
    reply.completions.first().map(|c| c.text.to_string()).unwrap_or_default()
}

impl Method for Retreval {
    fn advance(&mut self, core: &mut Core) -> Progress {
        match self.phase {
            Phase::Complexity => {
                let prompt = complexity_prompt(core.task.as_ref(), &core.x);
                let root = core.tree.root();
                core.issue(root, CallKind::Own(TAG_COMPLEXITY), LlmRequest::from_prompt(prompt, 1, 0.0), false);
                self.phase = Phase::ReadComplexity;
                Progress::Issued(1)
            }
            Phase::ReadComplexity => {
                // The call failed (its reply would have set the estimate).
                let c = Complexity(FALLBACK_COMPLEXITY);
                self.set_complexity(core, c, "the complexity call failed; taken as 3: ");
                self.phase = Phase::Roots;
                Progress::Moved
            }
            Phase::Roots => self.start_roots(core),
            Phase::Solving => self.solve_round(core),
            Phase::Scoring => {
                let issued = self.issue_scores(core);
                self.phase = Phase::Combine;
                if issued > 0 {
                    Progress::Issued(issued)
                } else {
                    Progress::Moved
                }
            }
            Phase::Validate => self.validate(core),
            Phase::Classify => {
                let Some((c, last)) = self.candidate.and_then(|c| Some((c, self.attempts[c].last()?))) else {
                    self.finish_best(core);
                    return Progress::Moved;
                };
                let feedback = self.verdict.as_ref().map(|v| v.feedback.clone()).unwrap_or_default();
                let trace = self.trace(core, c);
                let prompt = failure_prompt(core.task.as_ref(), &self.attempts[c].x, &trace, &feedback);
                core.issue(last, CallKind::Own(TAG_FAILURE), LlmRequest::from_prompt(prompt, 1, 0.0), false);
                self.phase = Phase::Classified;
                Progress::Issued(1)
            }
            // Reading replies happens in `settle`.
            Phase::Combine
            | Phase::Validated
            | Phase::Classified
            | Phase::Decomposed
            | Phase::Composed
            | Phase::Rewritten => {
                self.settle(core);
                Progress::Moved
            }
            Phase::Decompose => {
                let prompt = decompose_prompt(core.task.as_ref(), &core.x, self.params.max_subtasks);
                let root = core.tree.root();
                core.issue(root, CallKind::Own(TAG_DECOMPOSE), LlmRequest::from_prompt(prompt, 1, 0.0), false);
                self.phase = Phase::Decomposed;
                Progress::Issued(1)
            }
            Phase::Compose => {
                let Some(d) = self.decomposition.clone() else {
                    self.finish_best(core);
                    return Progress::Moved;
                };
                let prompt = compose_prompt(core.task.as_ref(), &core.x, &d.solved);
                core.issue(
                    d.node,
                    CallKind::Own(TAG_COMPOSE),
                    LlmRequest::from_prompt(prompt, 1, core.temperature),
                    false,
                );
                self.phase = Phase::Composed;
                Progress::Issued(1)
            }
            Phase::Memory => self.update_memory(core),
            Phase::Done => Progress::Stuck("the search is finished".into()),
        }
    }

    /// Read the replies of the batch just answered (so scores and verdicts show at
    /// once, even when the run pauses after the batch).
    fn settle(&mut self, core: &mut Core) {
        match self.phase {
            Phase::Combine => {
                self.combine(core);
                self.decide(core);
            }
            Phase::Validated => self.validated(core),
            Phase::Classified => self.classified(core),
            Phase::Decomposed => self.decomposed(core),
            Phase::Composed => self.composed(core),
            Phase::Rewritten => self.rewritten(core),
            _ => {}
        }
    }

    fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        core.finalize(self.finals.clone())
    }

    fn on_children(&mut self, _core: &mut Core, _parent: NodeId, _children: &[NodeId], _by_hand: bool) {}

    fn on_prune(&mut self, core: &mut Core, _node: NodeId) {
        for a in 0..self.attempts.len() {
            let at = &self.attempts[a];
            let gone = core.tree.is_pruned(at.tip()) || at.nodes.iter().any(|&n| core.tree.is_pruned(n));
            if gone && matches!(at.state, SolveState::Ready | SolveState::Waiting) {
                self.attempts[a].state = SolveState::Abandoned;
                core.log(format!("attempt {} ({}) pruned: it is not picked", a + 1, self.attempts[a].approach));
            }
        }
    }

    fn edit(&mut self, core: &mut Core, node: NodeId, text: &str) -> Option<Result<NodeId, String>> {
        if Some(node) == self.complexity_node {
            return Some(self.edit_complexity(core, text));
        }
        match self.attempt_at(node) {
            Some(a) => Some(self.edit_attempt(core, a, node, text)),
            None => Some(Err(
                "edit an attempt's last node (its answer) or the complexity estimate; steps in the middle of an attempt \
                 are kept as the model wrote them"
                    .into(),
            )),
        }
    }

    fn on_act(&mut self, core: &mut Core, node: NodeId, reply: &Completion) {
        let Some(a) = self
            .attempts
            .iter()
            .position(|at| at.state == SolveState::Waiting && at.tip() == node && !self.params.no_tools)
        else {
            return;
        };
        let step = self.attempts[a].steps + 1;
        self.attempts[a].steps = step;
        let read = read_step(core, ReactParams { max_steps: MAX_TOOL_STEPS, tool_mode: self.tool_mode }, reply, step);
        let mut thought = read.thought.as_deref().map(|t| t.trim().to_string());
        if thought.is_none() && read.action.is_none() {
            thought = Some(read.raw.clone());
        }
        let typed = Step {
            thought,
            action: read.action.clone(),
            extra_actions: read.extra_actions.clone(),
            calls: read.calls.clone(),
            thinking: if read.calls.is_empty() { Vec::new() } else { reply.thinking.clone() },
            ..Step::new(step)
        };
        let id = self.add_step(core, a, typed);
        core.tree.node_mut(id).issues.extend(read.notes.into_iter().map(crate::engine::Issue::Note));
        let action = read.action.filter(|_| read.problem.is_none());
        let Some(action) = action else {
            let problem = read.problem.unwrap_or_else(|| no_action(core));
            core.tree.node_mut(id).add_issue(crate::engine::Issue::BadCall(problem.clone()));
            let mut s = core.tree.node(id).step.as_deref().cloned().unwrap_or_else(|| Step::new(step));
            s.problem = Some(problem.clone());
            s.observation = Some(problem);
            Self::rewrite_step(core, id, s);
            self.attempts[a].state = SolveState::Ready;
            return;
        };
        let same = |p: &ToolRequest| p.name.eq_ignore_ascii_case(&action.name) && p.arg.trim() == action.arg.trim();
        if self.attempts[a].last_action.as_ref().is_some_and(same) {
            let why =
                format!("the same action as the step before ({}); the solve ends here", Step::action_text(&action));
            let mut s = core.tree.node(id).step.as_deref().cloned().unwrap_or_else(|| Step::new(step));
            s.observation = Some(format!("(not run: {why})"));
            Self::rewrite_step(core, id, s);
            core.set_note(id, "loop", &why);
            core.log(format!("attempt {} ({}): loop detected at {id}: {why}", a + 1, self.attempts[a].approach));
            self.end_solve(core, a);
            return;
        }
        self.attempts[a].last_action = Some(action.clone());
        self.attempts[a].acting = Some(action.clone());
        // Tools keep no state across ReTreVal's steps: each starts from the root's.
        let root = core.tree.root();
        core.issue_tool(id, root, action);
    }

    fn on_act_failed(&mut self, core: &mut Core, node: NodeId, error: &crate::protocol::CallError) {
        let message = error.to_string();
        let Some(a) = self.attempts.iter().position(|at| at.state == SolveState::Waiting && at.tip() == node) else {
            return;
        };
        core.log(format!(
            "attempt {} ({}): the model call failed ({message}); the solve ends",
            a + 1,
            self.attempts[a].approach
        ));
        self.end_solve(core, a);
    }

    fn on_tool(&mut self, core: &mut Core, node: NodeId, result: ToolResult) {
        let Some(a) = self.attempts.iter().position(|at| at.state == SolveState::Waiting && at.tip() == node) else {
            return;
        };
        core.tree.node_mut(node).tool_ms = Some(result.latency_ms);
        let mut s = core.tree.node(node).step.as_deref().cloned().unwrap_or_else(|| Step::new(self.attempts[a].steps));
        s.observation = Some(result.text.trim().to_string());
        Self::rewrite_step(core, node, s);
        let finished = self.attempts[a].acting.take().is_some_and(|t| t.name.eq_ignore_ascii_case("finish"));
        if finished {
            self.end_solve(core, a);
        } else {
            self.attempts[a].state = SolveState::Ready;
        }
    }

    fn on_reply(&mut self, core: &mut Core, node: NodeId, tag: u32, reply: &LlmResponse) {
        if tag == TAG_COMPLEXITY && self.phase == Phase::ReadComplexity {
            // Read at once, so a person stepping sees the estimate (and can edit it) before the tree grows.
            match parse_complexity(&reply_text(reply)) {
                Some(r) => {
                    if let Some(note) = r.note {
                        core.log(note);
                    }
                    self.set_complexity(core, r.level, "");
                }
                None => {
                    let c = Complexity(FALLBACK_COMPLEXITY);
                    self.set_complexity(core, c, "the complexity reply is unreadable; taken as 3: ");
                }
            }
            self.phase = Phase::Roots;
            return;
        }
        if tag == TAG_SOLVE_COT {
            let Some(a) = self
                .attempts
                .iter()
                .position(|at| at.state == SolveState::Waiting && at.tip() == node && at.nodes.is_empty())
            else {
                return;
            };
            let text = reply_text(reply);
            if text.trim().is_empty() {
                core.log(format!("attempt {} ({}): the reply is empty", a + 1, self.attempts[a].approach));
                self.attempts[a].state = SolveState::Abandoned;
                return;
            }
            let id = core.add_node(node, text.trim().to_string(), text.clone(), Origin::Model);
            core.set_status(id, NodeStatus::Expanded);
            self.attempts[a].nodes.push(id);
            self.attempts[a].steps = 1;
            self.end_solve(core, a);
            return;
        }
        self.replies.insert((node, tag), reply_text(reply));
    }

    fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String> {
        self.backtrack_by_hand(core, to, FailureCause::Other)
    }

    fn backtrack_refusal(&self, core: &Core) -> Option<String> {
        self.backtrack_refusal_now(core)
    }

    fn backtrack_because(&mut self, core: &mut Core, to: Option<NodeId>, cause: &str) -> Result<(), String> {
        let cause = FailureCause::from_name(cause).ok_or_else(|| {
            let names: Vec<&str> = FailureCause::ALL.iter().map(|c| c.name()).collect();
            format!("{cause:?} is not a failure cause (one of {})", names.join(", "))
        })?;
        self.backtrack_by_hand(core, to, cause)
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        let a = self
            .attempt_of(node)
            .filter(|&a| self.usable(core, a) && self.attempts[a].score.is_some())
            .filter(|&a| !matches!(self.attempts[a].kind, Kind::Subtask(_)))
            .ok_or_else(|| format!("{node} is not part of a finished, scored attempt: continue from an attempt"))?;
        if self.shape.is_none() {
            return Err("the complexity is not estimated yet".into());
        }
        self.abandon_in_flight(core);
        self.candidate = None;
        self.finals.clear();
        self.refine(core, a);
        Ok(())
    }

    fn view(&self, _core: &Core) -> MethodView {
        let mut params = self.params.label();
        if let (Some(c), Some(s)) = (self.complexity, self.shape) {
            params.push_str(&format!(" · complexity {c} → {}×{}", s.depth, s.branching));
        }
        if self.feedback == FeedbackSource::Oracle {
            params.push_str(" · oracle");
        }
        MethodView {
            params,
            step: self.attempts.iter().filter(|a| a.state == SolveState::Done).count(),
            step_noun: "attempt",
            cutoff: None,
            candidates: round(&self.attempts),
            votes: None,
            backtrack_causes: CAUSE_NAMES,
        }
    }
}

/// The scores pane's round: the attempts hanging from the same node as the latest
/// scored one (the root-level attempts, one attempt's refinements, one subtask's
/// solves), each shown by the node its score is on.
fn round(attempts: &[Attempt]) -> Candidates {
    let Some(latest) = attempts.iter().rev().find(|a| a.score.is_some()) else {
        return Candidates::Siblings;
    };
    let anchor = latest.anchor;
    Candidates::These(attempts.iter().filter(|a| a.anchor == anchor).filter_map(|a| a.last().or(a.head)).collect())
}

/// [`FailureCause::ALL`]'s names, for `MethodView::backtrack_causes`.
pub const CAUSE_NAMES: &[&str] = &[
    "arithmetic_error",
    "logic_error",
    "incomplete_reasoning",
    "wrong_constraint",
    "off_by_one",
    "missing_step",
    "other",
];

/// Why a solve step has no action, naming this task's own tools (as its native
/// definitions list them), or the prompt's list when the task has none to name.
pub(in crate::engine::methods::retreval) fn no_action(core: &Core) -> String {
    let tools = core.task.react().and_then(|r| r.native()).map(|n| n.tool_defs()).unwrap_or_default();
    let calls: Vec<String> = tools.iter().map(|t| format!("{}[{}]", t.name, t.arg_name().unwrap_or(""))).collect();
    match calls.split_last() {
        None => "no action: write `Action N: tool[argument]` with one of the tools the prompt lists".into(),
        Some((last, [])) => format!("no action: write `Action N: {last}`"),
        Some((last, rest)) => {
            format!("no action: write `Action N: tool[argument]`, one of {} or {last}", rest.join(", "))
        }
    }
}
