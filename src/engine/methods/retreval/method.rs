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
    CallKind, Completion, Core, Event, LlmRequest, LlmResponse, MethodKind, NodeId, NodeStatus, Origin, Outcome,
    ParamError, ParamReader, Params, Prompt, Purpose, Step, ToolMode, ToolRequest, ToolResult,
};
use crate::memory::{Category, EntryId};

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
    use crate::engine::Purpose;
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

    fn memory_on(&self, core: &Core) -> bool {
        !self.params.no_memory && core.memory.is_some()
    }

    fn shape_text(c: Complexity, s: Shape) -> String {
        format!("complexity {c} → depth {} × branching {}", s.depth, s.branching)
    }

    /// Take a complexity: the shape, the node's label, the root's note, the log.
    fn set_complexity(&mut self, core: &mut Core, c: Complexity, why: &str) {
        let shape = self.params.table.shape(c);
        self.complexity = Some(c);
        self.shape = Some(shape);
        let text = Self::shape_text(c, shape);
        let node = match self.complexity_node {
            Some(n) => n,
            None => {
                let root = core.tree.root();
                let n = core.add_node(root, text.clone(), String::new(), Origin::Model);
                core.set_status(n, NodeStatus::Expanded);
                self.complexity_node = Some(n);
                n
            }
        };
        core.tree.node_mut(node).thought = text.as_str().into();
        core.set_label(node, text.clone());
        let root = core.tree.root();
        core.set_note(root, COMPLEXITY_NOTE, &format!("{text} ({} table)", self.params.table.name()));
        core.log(format!("{why}{text} ({} table)", self.params.table.name()));
    }

    /// The approach hints for `b` root-level attempts: by the memory's reliability, best
    /// first (never seen counts as the initial reliability; ties keep the list's order).
    fn approach_hints(&self, core: &Core, b: usize) -> Vec<Approach> {
        let mut ranked: Vec<Approach> = Approach::ALL.into_iter().filter(|a| *a != Approach::Other).collect();
        if self.memory_on(core) {
            if let Some(m) = core.memory.as_ref() {
                let initial = m.params().reliability_initial;
                let r = |a: &Approach| m.reliability(a.name()).unwrap_or(initial);
                ranked.sort_by(|a, b| r(b).total_cmp(&r(a)));
            }
        }
        (0..b).map(|i| ranked[i % ranked.len()]).collect()
    }

    /// The memory's lessons for a solve of `x` with `approach` (recording their use).
    fn lessons(&mut self, core: &Core, x: &str, approach: Approach) -> Vec<String> {
        if !self.memory_on(core) {
            return Vec::new();
        }
        let Some(m) = core.memory.as_ref() else { return Vec::new() };
        let found: Vec<(EntryId, String)> =
            m.retrieve(&format!("{x} {approach}"), LESSONS).into_iter().map(|e| (e.id, e.content.clone())).collect();
        self.used.extend(found.iter().map(|(id, _)| *id));
        found.into_iter().map(|(_, c)| c).collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn new_attempt(
        &mut self,
        core: &mut Core,
        kind: Kind,
        approach: Approach,
        anchor: NodeId,
        branch: Option<usize>,
        level: usize,
        x: String,
        nonce: u32,
        history: Vec<String>,
    ) -> usize {
        let lessons = self.lessons(core, &x, approach);
        let index = self.attempts.len();
        let head = match kind {
            Kind::Edited | Kind::Composed => None,
            _ => {
                let what = match kind {
                    Kind::Root => format!("attempt {} · {approach}", nonce + 1),
                    Kind::Subtask(k) => format!("solve of subtask {}", k + 1),
                    _ => format!("refinement {} · {approach}", nonce + 1),
                };
                let id = core.add_node(anchor, what.clone(), String::new(), Origin::Model);
                core.set_status(id, NodeStatus::Expanded);
                core.set_label(id, what);
                if !history.is_empty() {
                    core.set_note(id, HISTORY_NOTE, &history.join("\n"));
                }
                Some(id)
            }
        };
        self.attempts.push(Attempt {
            kind,
            approach,
            anchor,
            head,
            branch: branch.unwrap_or(index),
            level,
            x,
            nonce,
            history,
            critique_in: None,
            attempt_in: None,
            lessons,
            nodes: Vec::new(),
            steps: 0,
            last_action: None,
            acting: None,
            state: SolveState::Ready,
            answer: None,
            local: None,
            cross: None,
            critique: String::new(),
            score: None,
            explored: false,
            validated: None,
        });
        index
    }

    fn usable(&self, core: &Core, a: usize) -> bool {
        let at = &self.attempts[a];
        at.state == SolveState::Done && at.last().is_some_and(|n| core.usable(n) && !core.tree.is_pruned(n))
    }

    /// The attempt whose chain holds `node`.
    fn attempt_of(&self, node: NodeId) -> Option<usize> {
        self.attempts.iter().position(|a| a.nodes.contains(&node))
    }

    /// The attempt whose last node is `node`.
    fn attempt_at(&self, node: NodeId) -> Option<usize> {
        self.attempts.iter().position(|a| a.last() == Some(node) && a.state == SolveState::Done)
    }

    /// The best of `among` by total (scored and usable; the first of equals).
    fn best_of(&self, core: &Core, among: impl IntoIterator<Item = usize>) -> Option<usize> {
        among.into_iter().filter(|&a| self.usable(core, a) && self.attempts[a].score.is_some()).fold(
            None,
            |best: Option<usize>, a| match best {
                Some(b) if self.attempts[a].total() <= self.attempts[b].total() => Some(b),
                _ => Some(a),
            },
        )
    }

    /// The attempts that answer the problem (not subtasks).
    fn leaves(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.attempts.len()).filter(|&a| !matches!(self.attempts[a].kind, Kind::Subtask(_)))
    }

    // ---- solving ---------------------------------------------------------------------

    /// The guidance a solve's prompt starts with, and its context fields.
    fn solve_prompt(&self, a: &Attempt, mut prompt: Prompt, step: Option<usize>) -> Prompt {
        let mut guide = format!("Approach: solve this with the {} approach.\n", a.approach);
        if !a.lessons.is_empty() {
            guide.push_str("Lessons from earlier problems:\n");
            for l in &a.lessons {
                guide.push_str(&format!("- {}\n", clip(l.trim(), 500)));
            }
        }
        if !a.history.is_empty() {
            guide.push_str("Critique history of this line of attack:\n");
            for h in &a.history {
                guide.push_str(&format!("- {}\n", clip(h.trim(), 1000)));
            }
        }
        if let (Some(prior), Some(critique)) = (&a.attempt_in, &a.critique_in) {
            guide.push_str(&format!(
                "An earlier attempt to improve on:\n{}\nCritique of it:\n{}\nWrite a better attempt.\n",
                clip(prior.trim(), MAX_TRACE_CHARS / 2),
                clip(critique.trim(), 2000)
            ));
        }
        if let Kind::Subtask(_) = a.kind {
            guide.push_str("Solve only the subtask below and finish with its result.\n");
        }
        match prompt.messages.iter_mut().find(|m| m.role == crate::engine::request::Role::User) {
            Some(m) => m.content = format!("{guide}\n{}", m.content),
            None => prompt.messages.insert(0, crate::engine::Message::user(guide)),
        }
        if !prompt.context.is_object() {
            prompt.context = serde_json::json!({});
        }
        if let Some(c) = prompt.context.as_object_mut() {
            c.insert(CONTEXT_KEY.into(), "solve".into());
            c.insert("approach".into(), a.approach.name().into());
            c.insert("lessons".into(), a.lessons.clone().into());
            c.insert("history".into(), a.history.clone().into());
            if let (Some(prior), Some(critique)) = (&a.attempt_in, &a.critique_in) {
                c.insert("critique".into(), critique.clone().into());
                c.insert("attempt".into(), prior.clone().into());
            }
            if let Kind::Subtask(k) = a.kind {
                c.insert("subtask".into(), (k + 1).into());
            }
            if let Some(step) = step {
                c.insert("step".into(), step.into());
            }
        }
        prompt
    }

    /// Ask for attempt `a`'s next step (or its one chain-of-thought reply).
    fn issue_step(&mut self, core: &mut Core, a: usize) -> bool {
        let at = self.attempts[a].clone();
        if self.params.no_tools {
            let prompt = self.solve_prompt(&at, core.task.cot_prompt(&at.x), None);
            let mut request = LlmRequest::from_prompt(prompt, 1, core.temperature);
            request.nonce = at.nonce;
            core.issue(at.tip(), CallKind::Own(TAG_SOLVE_COT), request, false);
            self.attempts[a].state = SolveState::Waiting;
            return true;
        }
        let step = at.steps + 1;
        let trajectory = core.tree.node(at.tip()).path.clone();
        let native = self.tool_mode == ToolMode::Native;
        let react = core.task.react();
        let prompt = match (native, react) {
            (true, Some(r)) => r.native().map(|n| (n.react_native_prompt(&at.x, &trajectory, step), n.tool_defs())),
            (false, Some(r)) => Some((r.react_prompt(&at.x, &trajectory, step), Vec::new())),
            (_, None) => None,
        };
        // The engine refuses ReTreVal with tools on a task without ReAct steps; this is the line if one gets here.
        let Some((prompt, tools)) = prompt else {
            let what = if native { "native tool-calling ReAct prompt and tools" } else { "ReAct prompt" };
            core.log(format!(
                "the task {} has no {what}: attempt {} ends (use --no-tools for one chain-of-thought call)",
                core.task.name(),
                a + 1
            ));
            self.end_solve(core, a);
            return false;
        };
        let prompt = self.solve_prompt(&at, prompt, Some(step));
        let mut request = LlmRequest::from_prompt(prompt, 1, core.temperature);
        request.tools = tools;
        request.nonce = at.nonce;
        core.issue(at.tip(), CallKind::Act, request, false);
        self.attempts[a].state = SolveState::Waiting;
        true
    }

    /// Add a step node for attempt `a`: a child of its tip, its path the attempt's trajectory.
    fn add_step(&mut self, core: &mut Core, a: usize, step: Step) -> NodeId {
        let parent = self.attempts[a].tip();
        let before = core.tree.node(parent).path.clone();
        let thought = step.text();
        let path = format!("{before}{}", step.path_text());
        let id = core.add_node(parent, thought, path, Origin::Model);
        core.tree.node_mut(id).step = Some(Box::new(step));
        core.set_status(id, NodeStatus::Expanded);
        self.attempts[a].nodes.push(id);
        id
    }

    /// Rewrite step node `id` from its (changed) step.
    fn rewrite_step(core: &mut Core, id: NodeId, step: Step) {
        let parent_path = core.tree.node(id).parent.map(|p| core.tree.node(p).path.clone()).unwrap_or_default();
        let n = core.tree.node_mut(id);
        n.thought = step.text().into();
        n.path = format!("{parent_path}{}", step.path_text()).into();
        n.step = Some(Box::new(step));
    }

    /// The solve of `a` is over: its answer, label and notes.
    fn end_solve(&mut self, core: &mut Core, a: usize) {
        let at = &mut self.attempts[a];
        let Some(last) = at.last() else {
            at.state = SolveState::Abandoned;
            core.log(format!("attempt {} ({}) ended without a step", a + 1, at.approach));
            return;
        };
        at.state = SolveState::Done;
        let path = core.tree.node(last).path.clone();
        at.answer = core.task.extract_answer(&at.x, &path);
        core.tree.node_mut(last).answer = at.answer.clone();
        let label = self.label(a);
        core.set_label(last, label);
        let history = self.attempts[a].history.join("\n");
        if !history.is_empty() {
            core.set_note(last, HISTORY_NOTE, &history);
        }
    }

    fn label(&self, a: usize) -> String {
        let at = &self.attempts[a];
        let answer = at.answer.as_deref().map_or("no answer".to_string(), |s| clip(s, 40));
        match at.kind {
            Kind::Subtask(k) => format!("subtask {} · {answer}", k + 1),
            Kind::Composed => format!("composed · {answer}"),
            _ => format!("{} · {answer}", at.approach),
        }
    }

    /// The trace an attempt is judged by.
    fn trace(&self, core: &Core, a: usize) -> String {
        self.attempts[a].last().map(|n| core.tree.node(n).path.to_string()).unwrap_or_default()
    }

    /// Start `b` refinements of attempt `a` (children of its last node).
    fn refine(&mut self, core: &mut Core, a: usize) {
        let Some(shape) = self.shape else { return };
        let Some(last) = self.attempts[a].last() else { return };
        let parent = self.attempts[a].clone();
        let mut history = parent.history.clone();
        if !parent.critique.trim().is_empty() {
            history.push(clip(parent.critique.trim(), 1000));
        }
        let trace = self.trace(core, a);
        let mut fresh = Vec::new();
        // Places after what already hangs from `last` (a person's edit, earlier refinements).
        let first = core.tree.node(last).children.len();
        for i in 0..usize::from(shape.branching) {
            let nonce = (first + i) as u32;
            let n = self.new_attempt(
                core,
                Kind::Refine,
                parent.approach,
                last,
                Some(parent.branch),
                parent.level + 1,
                parent.x.clone(),
                nonce,
                history.clone(),
            );
            self.attempts[n].critique_in = Some(parent.critique.clone());
            self.attempts[n].attempt_in = Some(trace.clone());
            fresh.push(n);
        }
        self.attempts[parent.branch].explored = true;
        self.branch = Some(parent.branch);
        core.log(format!(
            "refining {last} ({}, total {}) with {} at level {}",
            parent.approach,
            fmt_total(parent.total()),
            count(fresh.len(), "refinement", "refinements"),
            parent.level + 1
        ));
        self.active = fresh;
        self.phase = Phase::Solving;
    }

    // ---- scoring ---------------------------------------------------------------------

    /// Issue the local (and cross) calls of the active attempts not scored yet.
    fn issue_scores(&mut self, core: &mut Core) -> usize {
        let mut issued = 0;
        let batch: Vec<usize> = self.active.clone();
        for &a in &batch {
            if !self.usable(core, a) || self.attempts[a].score.is_some() {
                continue;
            }
            let Some(last) = self.attempts[a].last() else { continue };
            let trace = self.trace(core, a);
            let x = self.attempts[a].x.clone();
            let request = LlmRequest::from_prompt(local_prompt(core.task.as_ref(), &x, &trace), 1, 0.0);
            core.issue(last, CallKind::Own(TAG_LOCAL), request, false);
            issued += 1;
            let siblings = self.siblings(core, a);
            if !self.params.no_cross && !siblings.is_empty() {
                let texts: Vec<String> = siblings.iter().map(|&s| self.trace(core, s)).collect();
                let request = LlmRequest::from_prompt(cross_prompt(core.task.as_ref(), &x, &trace, &texts), 1, 0.0);
                core.issue(last, CallKind::Own(TAG_CROSS), request, false);
                issued += 1;
            }
        }
        issued
    }

    /// The finished attempts beside `a` (the same anchor), for its cross critique.
    fn siblings(&self, core: &Core, a: usize) -> Vec<usize> {
        let at = &self.attempts[a];
        if matches!(at.kind, Kind::Subtask(_) | Kind::Composed) {
            return Vec::new();
        }
        (0..self.attempts.len())
            .filter(|&s| s != a && self.attempts[s].anchor == at.anchor && self.usable(core, s))
            .filter(|&s| !matches!(self.attempts[s].kind, Kind::Subtask(_) | Kind::Composed))
            .collect()
    }

    /// Read the scoring replies and set every active attempt's score.
    fn combine(&mut self, core: &mut Core) {
        let batch: Vec<usize> = self.active.clone();
        for a in batch {
            if !self.usable(core, a) || self.attempts[a].score.is_some() {
                continue;
            }
            let Some(last) = self.attempts[a].last() else { continue };
            let local_reply = self.replies.remove(&(last, TAG_LOCAL));
            let local = match local_reply.as_deref().and_then(parse_local_score) {
                Some(r) => {
                    if let Some(note) = r.note {
                        core.log(format!("{last}: {note}"));
                    }
                    r.score
                }
                None => {
                    let why = "the local assessment gave no readable score; taken as 0.5";
                    core.set_note(last, "local", why);
                    core.log(format!("{last}: {why}"));
                    0.5
                }
            };
            let siblings = self.siblings(core, a).len();
            let mut critique = local_reply.map(|r| clip(r.trim(), 2000)).unwrap_or_default();
            let cross = match self.replies.remove(&(last, TAG_CROSS)) {
                Some(reply) => {
                    let c = parse_cross(&reply, siblings);
                    if !c.critique.is_empty() {
                        critique = clip(&c.critique, 2000);
                    }
                    if c.cross().is_none() {
                        core.log(format!("{last}: the cross critique gave no readable comparison; local score only"));
                    }
                    c.cross()
                }
                None => None,
            };
            let approach = self.attempts[a].approach;
            let reliability = if self.memory_on(core) {
                core.memory.as_ref().and_then(|m| m.reliability(approach.name()))
            } else {
                None
            };
            let score = Score::combine(local, cross, reliability, self.params.effective_weights());
            let at = &mut self.attempts[a];
            at.local = Some(score.local);
            at.cross = score.cross;
            at.critique = critique.clone();
            at.score = Some(score);
            if !critique.is_empty() {
                core.set_note(last, CRITIQUE_NOTE, &critique);
            }
            core.set_metrics(last, &score.metrics());
            core.set_score(last, crate::engine::Score { value: score.total, samples: vec![], note: None });
            core.log(format!(
                "{last} ({}): local {:.2}{}, penalty {:.2}, total {:.2}",
                self.label(a),
                score.local,
                score.cross.map_or(String::new(), |c| format!(", cross {c:.2}")),
                score.penalty,
                score.total
            ));
        }
    }

    // ---- deciding --------------------------------------------------------------------

    fn decide(&mut self, core: &mut Core) {
        let batch = self.active.clone();
        // A subtask's solve: keep its result, go on to the next one or compose.
        if let Some(&a) = batch.first() {
            if let Kind::Subtask(k) = self.attempts[a].kind {
                return self.subtask_done(core, a, k);
            }
            if self.attempts[a].kind == Kind::Composed {
                if self.usable(core, a) {
                    self.candidate = Some(a);
                    self.phase = Phase::Validate;
                } else {
                    self.finish_best(core);
                }
                return;
            }
        }
        let Some(best) = self.best_of(core, batch.iter().copied()) else {
            core.log("no attempt of this level can be used");
            return self.after_failure(core, None);
        };
        let depth = self.shape.map_or(1, |s| usize::from(s.depth));
        let at = &self.attempts[best];
        let good = at.local.unwrap_or(0.0) >= GOOD_LOCAL;
        if at.level < depth && !good {
            return self.refine(core, best);
        }
        if good && at.level < depth {
            core.log(format!(
                "{} scores local {:.2} ≥ {GOOD_LOCAL}: no further refinement",
                self.label(best),
                at.local.unwrap_or(0.0)
            ));
        }
        let branch = self.attempts[best].branch;
        let candidate = self
            .best_of(core, self.leaves().filter(|&a| self.attempts[a].branch == branch).collect::<Vec<_>>())
            .unwrap_or(best);
        // The best score stayed below the threshold through the refinements: split the
        // problem before validating (the composed candidate is validated instead).
        let total = self.attempts[candidate].total();
        let complexity = self.complexity.unwrap_or(Complexity(FALLBACK_COMPLEXITY));
        if !self.decomposed && self.params.should_decompose(complexity, total) {
            core.log(format!(
                "best total {} < {} after the refinements at complexity {complexity}: decomposing",
                fmt_total(total),
                self.params.decompose_threshold
            ));
            self.phase = Phase::Decompose;
            return;
        }
        self.candidate = Some(candidate);
        self.phase = Phase::Validate;
    }

    fn validate(&mut self, core: &mut Core) -> Progress {
        let Some(c) = self.candidate else {
            self.finish_best(core);
            return Progress::Moved;
        };
        let branch = self.attempts[c].branch;
        self.attempts[branch].explored = true;
        let Some(last) = self.attempts[c].last() else {
            self.finish_best(core);
            return Progress::Moved;
        };
        self.phase = Phase::Validated;
        match self.feedback {
            FeedbackSource::Oracle => {
                let (passed, feedback) = rounds::oracle_feedback(core, last);
                core.log(format!("validating {last} ({}) with the task's checker", self.label(c)));
                self.verdict = Some(Verdict { passed, cause: None, feedback });
                Progress::Moved
            }
            FeedbackSource::SelfCheck => {
                let trace = self.trace(core, c);
                let prompt = validation_prompt(core.task.as_ref(), &self.attempts[c].x, &trace);
                core.issue(last, CallKind::Own(TAG_VALIDATE), LlmRequest::from_prompt(prompt, 1, 0.0), false);
                core.log(format!("validating {last} ({})", self.label(c)));
                Progress::Issued(1)
            }
        }
    }

    fn validated(&mut self, core: &mut Core) {
        let Some(c) = self.candidate else { return self.finish_best(core) };
        let last = self.attempts[c].last().unwrap_or(core.tree.root());
        let mut call_failed = false;
        let verdict = match self.verdict.take() {
            Some(v) => v,
            None => match self.replies.remove(&(last, TAG_VALIDATE)) {
                Some(reply) => {
                    let v = parse_validation(&reply);
                    if v.verdict.is_none() {
                        core.log(format!(
                            "the validation of {last} gives no verdict; treated as failed (cause {})",
                            v.cause.unwrap_or(FailureCause::Other)
                        ));
                    }
                    Verdict { passed: v.verdict == Some(true), cause: v.cause, feedback: v.critique }
                }
                None => {
                    core.log(format!("the validation of {last} got no reply; treated as failed (cause other)"));
                    // A failed call is no critique: nothing of it goes to a later prompt or the memory.
                    call_failed = true;
                    Verdict { passed: false, cause: None, feedback: String::new() }
                }
            },
        };
        self.attempts[c].validated = Some(verdict.passed);
        if call_failed {
            core.set_note(last, "validation", "(no verdict: the validation call failed)");
        } else {
            core.set_note(last, "validation", &verdict.feedback);
            self.last_critique = Some(clip(verdict.feedback.trim(), 300));
        }
        if verdict.passed {
            core.log(format!("validation passed: {last} ({})", self.label(c)));
            self.remember_success(core, c);
            return self.finish_with(core, c);
        }
        core.log(format!("validation failed: {last} ({})", self.label(c)));
        if self.params.no_backtrack {
            core.log("no backtracking (--no-backtrack): the best leaf is the answer");
            return self.finish_best(core);
        }
        self.verdict = Some(verdict);
        self.phase = Phase::Classify;
    }

    fn classified(&mut self, core: &mut Core) {
        let Some(c) = self.candidate else { return self.finish_best(core) };
        let last = self.attempts[c].last().unwrap_or(core.tree.root());
        let verdict = self.verdict.take();
        let approach = self.attempts[c].approach;
        let fallback_cause = verdict.as_ref().and_then(|v| v.cause).unwrap_or(FailureCause::Other);
        let feedback = verdict.map(|v| v.feedback).unwrap_or_default();
        let mut failure = match self.replies.remove(&(last, TAG_FAILURE)).map(|r| parse_failure(&r, approach)) {
            Some(Ok(f)) => f,
            Some(Err(why)) => {
                core.log(format!("{why}; the failure is recorded as {fallback_cause}"));
                fallback_failure(fallback_cause, approach, &feedback)
            }
            None => {
                core.log(format!(
                    "the failure classification got no reply; the failure is recorded as {fallback_cause}"
                ));
                fallback_failure(fallback_cause, approach, &feedback)
            }
        };
        // The attempt's hinted approach is what reliability tracks; an edited attempt has none.
        if approach != Approach::Other {
            failure.approach = approach;
        }
        self.after_failure(core, Some((c, failure)));
    }

    /// Write a typed failure to the memory and the attempt's notes.
    fn remember_failure(&mut self, core: &mut Core, a: usize, failure: &TypedFailure) {
        if let Some(last) = self.attempts[a].last() {
            core.set_note(last, "failure", &failure_note(failure));
        }
        if !self.memory_on(core) {
            return;
        }
        let content = format!("{} approach, {}: {}", failure.approach, failure.cause, failure.summary);
        let source = clip(self.attempts[a].x.trim(), 200);
        if let Some(m) = core.memory.as_mut() {
            match m.add(&content, Category::Failure, failure.approach.name(), Some(&source)) {
                Ok(outcome) => core.log(format!("memory: failure entry {} ({content})", outcome.id())),
                Err(e) => core.log(format!("memory: the failure could not be written: {e}")),
            }
        }
    }

    fn remember_success(&mut self, core: &mut Core, a: usize) {
        if !self.memory_on(core) {
            return;
        }
        let at = &self.attempts[a];
        let trace = self.trace(core, a);
        let line = trace
            .lines()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .map(|l| l.trim_start_matches(|c: char| c != ':').trim_start_matches(':').trim())
            .filter(|l| !l.is_empty())
            .unwrap_or("the attempt was validated");
        let answer = at.answer.as_deref().map_or(String::new(), |s| format!(" (answer {})", clip(s, 60)));
        let content = format!("{} approach worked: {}{answer}", at.approach, clip(line, 200));
        let approach = at.approach;
        let source = clip(at.x.trim(), 200);
        if let Some(m) = core.memory.as_mut() {
            match m.add(&content, Category::Success, approach.name(), Some(&source)) {
                Ok(outcome) => core.log(format!("memory: success entry {}", outcome.id())),
                Err(e) => core.log(format!("memory: the success could not be written: {e}")),
            }
        }
    }

    /// After a failed validation (or a level with nothing usable): record the failure,
    /// then backtrack, decompose or finish.
    fn after_failure(&mut self, core: &mut Core, failed: Option<(usize, TypedFailure)>) {
        let failed_approach = failed.as_ref().map(|(_, f)| f.approach);
        if let Some((a, f)) = &failed {
            self.remember_failure(core, *a, f);
            self.last_critique = Some(clip(&failure_note(f), 300));
        }
        match self.backtrack_target(core, failed_approach) {
            Some(target) => self.jump(core, failed, target, false),
            None => {
                // Attempts the validation already judged wrong do not count as the best score:
                // when every approach failed, nothing stands above the threshold.
                let open: Vec<usize> = self.leaves().filter(|&a| self.attempts[a].validated != Some(false)).collect();
                let best = self.best_of(core, open).and_then(|b| self.attempts[b].total());
                let complexity = self.complexity.unwrap_or(Complexity(FALLBACK_COMPLEXITY));
                if !self.decomposed && self.params.should_decompose(complexity, best) {
                    core.log(format!(
                        "no unexplored root-level attempt left; best total {} < {} at complexity {complexity}: decomposing",
                        fmt_total(best),
                        self.params.decompose_threshold
                    ));
                    self.phase = Phase::Decompose;
                } else {
                    core.log("no unexplored root-level attempt left");
                    self.finish_best(core);
                }
            }
        }
    }

    fn backtrack_target(&self, core: &Core, failed: Option<Approach>) -> Option<usize> {
        let candidates: Vec<BacktrackCandidate<usize>> = self
            .leaves()
            .filter(|&a| {
                self.attempts[a].kind == Kind::Root && self.usable(core, a) && self.attempts[a].score.is_some()
            })
            .map(|a| BacktrackCandidate {
                id: a,
                score: self.attempts[a].total(),
                explored: self.attempts[a].explored,
                approach: Some(self.attempts[a].approach),
            })
            .collect();
        pick_backtrack_target(&candidates, failed)
    }

    /// Jump to root-level attempt `target` with the failure in its critique history.
    fn jump(&mut self, core: &mut Core, failed: Option<(usize, TypedFailure)>, target: usize, by_hand: bool) {
        let Some(to) = self.attempts[target].last() else { return };
        let from = failed.as_ref().and_then(|(a, _)| self.attempts[*a].last());
        if let Some((_, f)) = &failed {
            self.attempts[target].history.push(failure_note(f));
        }
        let history = self.attempts[target].history.join("\n");
        if !history.is_empty() {
            core.set_note(to, HISTORY_NOTE, &history);
        }
        let t = &self.attempts[target];
        let why = match &failed {
            Some((_, f)) if by_hand => format!("marked wrong by hand ({} in {} approach)", f.cause, f.approach),
            Some((_, f)) => format!("validation failed ({} in {} approach)", f.cause, f.approach),
            None => "nothing usable".to_string(),
        };
        core.log(format!("{why}; backtracking to {to} ({}, total {})", t.approach, fmt_total(t.total())));
        core.emit(Event::Backtracked { from: from.into_iter().collect(), to: vec![to] });
        self.attempts[target].explored = true;
        self.branch = Some(target);
        // Refined once at least, whatever the depth, so the history is used.
        self.refine(core, target);
    }

    /// Finish with the best validated leaf, else the best scored.
    fn finish_best(&mut self, core: &mut Core) {
        let validated: Vec<usize> = self.leaves().filter(|&a| self.attempts[a].validated == Some(true)).collect();
        let pick = self.best_of(core, validated).or_else(|| self.best_of(core, self.leaves().collect::<Vec<_>>()));
        match pick {
            Some(a) => self.finish_with(core, a),
            None => {
                core.log("no usable attempt: no answer");
                self.finals.clear();
                self.phase = Phase::Memory;
            }
        }
    }

    fn finish_with(&mut self, core: &mut Core, a: usize) {
        let Some(first) = self.attempts[a].last() else { return self.finish_best(core) };
        let mut others: Vec<usize> = self.leaves().filter(|&o| o != a && self.usable(core, o)).collect();
        others.sort_by(|x, y| {
            let t = |i: &usize| self.attempts[*i].total().unwrap_or(f64::NEG_INFINITY);
            t(y).total_cmp(&t(x))
        });
        self.finals =
            std::iter::once(first).chain(others.into_iter().filter_map(|o| self.attempts[o].last())).collect();
        self.candidate = Some(a);
        core.log(format!("final: {first} ({})", self.label(a)));
        self.phase = Phase::Memory;
    }

    // ---- decomposition ---------------------------------------------------------------

    fn decomposed(&mut self, core: &mut Core) {
        let root = core.tree.root();
        let reply = self.replies.remove(&(root, TAG_DECOMPOSE)).unwrap_or_default();
        self.decomposed = true;
        let subtasks = match parse_subtasks(&reply, self.params.max_subtasks) {
            Ok(s) => s,
            Err(why) => {
                core.log(format!("decomposition: {why}; the best leaf is the answer"));
                return self.finish_best(core);
            }
        };
        let node = core.add_node(root, "decomposition".into(), String::new(), Origin::Model);
        core.set_status(node, NodeStatus::Expanded);
        core.set_label(node, format!("decomposition · {}", count(subtasks.len(), "subtask", "subtasks")));
        let mut nodes = Vec::new();
        for s in subtasks {
            let deps = if s.depends_on.is_empty() {
                "none".to_string()
            } else {
                s.depends_on.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
            };
            let thought =
                format!("Subtask {}: {}\nDepends on: {deps}\nExit condition: {}", s.id, s.goal, s.exit_condition);
            let id = core.add_node(node, thought, String::new(), Origin::Model);
            core.set_status(id, NodeStatus::Expanded);
            core.set_label(id, format!("subtask {} · {}", s.id, clip(&s.goal, 60)));
            nodes.push((s, id));
        }
        core.log(format!("decomposed into {}", count(nodes.len(), "subtask", "subtasks")));
        self.decomposition = Some(Decomposition { node, subtasks: nodes, solved: Vec::new() });
        self.start_subtask(core, 0);
    }

    fn start_subtask(&mut self, core: &mut Core, k: usize) {
        let Some(d) = self.decomposition.clone() else { return self.finish_best(core) };
        let Some((subtask, node)) = d.subtasks.get(k).cloned() else {
            self.phase = Phase::Compose;
            return;
        };
        let x = subtask_problem(&core.x, &subtask, &d.solved);
        let approach = self
            .best_of(core, self.leaves().collect::<Vec<_>>())
            .map_or(Approach::Algebraic, |b| self.attempts[b].approach);
        let a = self.new_attempt(core, Kind::Subtask(k), approach, node, None, 1, x, 0, Vec::new());
        self.attempts[a].explored = true;
        self.active = vec![a];
        self.phase = Phase::Solving;
    }

    fn subtask_done(&mut self, core: &mut Core, a: usize, k: usize) {
        let result = match (&self.attempts[a].answer, self.attempts[a].last()) {
            (Some(answer), _) => answer.clone(),
            (None, Some(last)) => {
                let path = core.tree.node(last).path.clone();
                clip(path.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no result").trim(), 500)
            }
            (None, None) => "no result".to_string(),
        };
        if let Some(d) = self.decomposition.as_mut() {
            if let Some((subtask, _)) = d.subtasks.get(k) {
                d.solved.push(SolvedSubtask { subtask: subtask.clone(), result: result.clone() });
            }
        }
        core.log(format!("subtask {} solved: {}", k + 1, clip(&result, 80)));
        self.start_subtask(core, k + 1);
    }

    fn composed(&mut self, core: &mut Core) {
        let Some(d) = self.decomposition.clone() else { return self.finish_best(core) };
        let text = self.replies.remove(&(d.node, TAG_COMPOSE)).unwrap_or_default();
        if text.trim().is_empty() {
            core.log("the composition gave no text; the best leaf is the answer");
            return self.finish_best(core);
        }
        let approach = self
            .best_of(core, self.leaves().collect::<Vec<_>>())
            .map_or(Approach::Other, |b| self.attempts[b].approach);
        let a = self.new_attempt(core, Kind::Composed, approach, d.node, None, 1, core.x.clone(), 0, Vec::new());
        let id = core.add_node(d.node, text.trim().to_string(), text.clone(), Origin::Model);
        self.attempts[a].nodes.push(id);
        self.attempts[a].explored = true;
        self.end_solve(core, a);
        core.log(format!("composed the subtasks' results: {}", self.label(a)));
        self.active = vec![a];
        self.phase = Phase::Scoring;
    }

    // ---- the memory at the end -------------------------------------------------------

    fn update_memory(&mut self, core: &mut Core) -> Progress {
        if self.memory_updated || !self.memory_on(core) {
            self.phase = Phase::Done;
            return Progress::Moved;
        }
        self.memory_updated = true;
        let final_attempt = self.finals.first().and_then(|&n| self.attempt_at(n));
        let solved = match (final_attempt, self.feedback) {
            (Some(a), FeedbackSource::Oracle) => {
                self.attempts[a].last().is_some_and(|n| rounds::oracle_feedback(core, n).0)
            }
            (Some(a), FeedbackSource::SelfCheck) => self.attempts[a].validated == Some(true),
            (None, _) => false,
        };
        let critique = self.last_critique.clone();
        let used: Vec<EntryId> = self.used.iter().copied().collect();
        let mut rewrites = Vec::new();
        let mut log = Vec::new();
        if let Some(m) = core.memory.as_mut() {
            if let Some(a) = final_attempt {
                let approach = self.attempts[a].approach;
                match m.record_outcome(approach.name(), solved) {
                    Ok(r) => log.push(format!(
                        "memory: {approach} approach {} → reliability {r:.2}",
                        if solved { "solved" } else { "not solved" }
                    )),
                    Err(e) => log.push(format!("memory: the outcome could not be recorded: {e}")),
                }
            }
            for id in used {
                let failure_entry = m.entry(id).is_some_and(|e| e.category == Category::Failure);
                if let Err(e) = m.record_use(id, solved) {
                    log.push(format!("memory: entry {id} was used but is gone: {e}"));
                    continue;
                }
                if failure_entry {
                    if let Some(c) = critique.as_deref().filter(|c| !c.trim().is_empty()) {
                        if let Err(e) = m.add_signal(id, c) {
                            log.push(format!("memory: no signal for entry {id}: {e}"));
                        }
                    }
                }
                if m.needs_rewrite(id) {
                    rewrites.push(id);
                }
            }
        }
        for line in log {
            core.log(line);
        }
        self.rewrites = rewrites;
        if self.rewrites.is_empty() {
            self.consolidate(core);
            return Progress::Moved;
        }
        let root = core.tree.root();
        let mut issued = 0;
        for (i, &id) in self.rewrites.clone().iter().enumerate() {
            let Some(m) = core.memory.as_ref() else { break };
            let (Ok(text), Some(entry)) = (m.rewrite_request(id), m.entry(id)) else { continue };
            let signals: Vec<String> = entry.signals.iter().cloned().collect();
            let content = entry.content.clone();
            let prompt = super::prompt(
                core.task.as_ref(),
                &core.x,
                Purpose::Reflect,
                "rewrite",
                text,
                serde_json::json!({ "entry": content, "signals": signals }),
            );
            core.issue(root, CallKind::Own(TAG_REWRITE + i as u32), LlmRequest::from_prompt(prompt, 1, 0.0), false);
            issued += 1;
        }
        core.log(format!("memory: rewriting {}", count(issued, "entry", "entries")));
        self.phase = Phase::Rewritten;
        if issued == 0 {
            self.consolidate(core);
            return Progress::Moved;
        }
        Progress::Issued(issued)
    }

    fn rewritten(&mut self, core: &mut Core) {
        let root = core.tree.root();
        let mut log = Vec::new();
        for (i, id) in self.rewrites.clone().into_iter().enumerate() {
            let reply = self.replies.remove(&(root, TAG_REWRITE + i as u32)).unwrap_or_default();
            let Some(m) = core.memory.as_mut() else { break };
            match m.apply_rewrite(id, &reply) {
                Ok(v) => log.push(format!("memory: entry {id} rewritten (version {v})")),
                Err(e) => log.push(format!("memory: the rewrite of entry {id} was not taken: {e}")),
            }
        }
        for line in log {
            core.log(line);
        }
        self.consolidate(core);
    }

    fn consolidate(&mut self, core: &mut Core) {
        if let Some(m) = core.memory.as_mut() {
            let line = match m.consolidate() {
                Ok(r) if r.retired.is_empty() && r.merged.is_empty() => None,
                Ok(r) => Some(format!("memory: consolidated ({} retired, {} merged)", r.retired.len(), r.merged.len())),
                Err(e) => Some(format!("memory: consolidation failed: {e}")),
            };
            if let Some(line) = line {
                core.log(line);
            }
        }
        self.phase = Phase::Done;
    }

    // ---- a person's steering ---------------------------------------------------------

    /// Stop every solve in flight (their calls are cancelled; their nodes stay).
    fn abandon_in_flight(&mut self, core: &mut Core) {
        core.cancel_scheduled();
        for a in 0..self.attempts.len() {
            if matches!(self.attempts[a].state, SolveState::Ready | SolveState::Waiting) {
                self.attempts[a].state = SolveState::Abandoned;
                if let Some(first) = self.attempts[a].head.or(self.attempts[a].nodes.first().copied()) {
                    core.tree.bump_generation(first);
                    core.set_status(first, NodeStatus::Dropped(DropReason::Backtracked));
                }
            }
        }
        // Scoring or validation replies still to come are cancelled with them.
        let root = core.tree.root();
        self.replies.retain(|(n, _), _| *n == root);
        self.verdict = None;
    }

    fn edit_complexity(&mut self, core: &mut Core, text: &str) -> Result<NodeId, String> {
        let node = self.complexity_node.ok_or("there is no complexity estimate yet")?;
        if self.attempts.iter().any(|a| a.score.is_some()) {
            return Err("the complexity can change only before the first attempt is scored".into());
        }
        let (thought, _) = split_notes(text);
        let digits: Vec<u8> = thought.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
        // `complexity 4 → depth ...` (the label edited) or just `4`.
        let level = digits.first().copied().and_then(Complexity::new).ok_or_else(|| {
            format!("write the complexity as a whole number from 1 to 5 (not {:?})", clip(&thought, 40))
        })?;
        if !self.attempts.is_empty() {
            self.abandon_in_flight(core);
            self.attempts.clear();
            self.active.clear();
            self.used.clear();
        }
        self.set_complexity(core, level, "complexity set by hand: ");
        self.phase = Phase::Roots;
        Ok(node)
    }

    fn edit_attempt(&mut self, core: &mut Core, a: usize, node: NodeId, text: &str) -> Result<NodeId, String> {
        let (trace, _) = split_notes(text);
        if trace.trim().is_empty() {
            return Err("an edited attempt cannot be empty".into());
        }
        self.abandon_in_flight(core);
        let old = self.attempts[a].clone();
        let root_level = old.kind == Kind::Root || (old.kind == Kind::Edited && old.branch == a);
        let n = self.new_attempt(
            core,
            Kind::Edited,
            old.approach,
            old.anchor,
            if root_level { None } else { Some(old.branch) },
            old.level,
            old.x.clone(),
            0,
            old.history.clone(),
        );
        if root_level {
            // A root-level rewrite is a root-level attempt of its own (it can be backtracked to).
            self.attempts[n].kind = Kind::Root;
        }
        let id = core.add_node(old.anchor, trace.clone(), trace.clone(), Origin::Human { edited_from: Some(node) });
        core.set_status(id, NodeStatus::Expanded);
        self.attempts[n].nodes.push(id);
        self.end_solve(core, n);
        self.active = vec![n];
        self.candidate = None;
        self.finals.clear();
        self.phase = Phase::Scoring;
        Ok(id)
    }

    /// The person's backtrack: `cause` is the current best attempt's typed failure.
    fn backtrack_by_hand(&mut self, core: &mut Core, to: Option<NodeId>, cause: FailureCause) -> Result<(), String> {
        if self.phase == Phase::Done {
            return Err("the search is finished".into());
        }
        let branch = self
            .branch
            .or_else(|| self.best_of(core, self.leaves().collect::<Vec<_>>()).map(|b| self.attempts[b].branch));
        let Some(branch) = branch else {
            return Err("no attempt is scored yet: there is nothing to backtrack from".into());
        };
        let in_branch: Vec<usize> = self.leaves().filter(|&a| self.attempts[a].branch == branch).collect();
        let failed = self.best_of(core, in_branch).unwrap_or(branch);
        let target = match to {
            Some(node) => {
                let t = self
                    .attempt_of(node)
                    .filter(|&t| self.attempts[t].kind == Kind::Root)
                    .ok_or_else(|| format!("{node} is not part of a root-level attempt"))?;
                if !self.usable(core, t) || self.attempts[t].score.is_none() {
                    return Err(format!("{node}'s attempt is pruned, unfinished or not scored yet"));
                }
                t
            }
            None => {
                let approach = Some(self.attempts[failed].approach);
                self.backtrack_target(core, approach)
                    .ok_or("every root-level attempt has been explored: there is nowhere to backtrack to")?
            }
        };
        let approach = self.attempts[failed].approach;
        let failure = TypedFailure {
            cause,
            approach,
            summary: format!("a person judged the {approach} attempt wrong ({})", cause.label()),
        };
        self.abandon_in_flight(core);
        self.attempts[branch].explored = true;
        self.remember_failure(core, failed, &failure);
        self.last_critique = Some(clip(&failure_note(&failure), 300));
        self.candidate = None;
        self.finals.clear();
        self.jump(core, Some((failed, failure)), target, true);
        Ok(())
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
            Phase::Roots => {
                let b = self.shape.map_or(1, |s| usize::from(s.branching));
                let hints = self.approach_hints(core, b);
                let root = core.tree.root();
                self.active = hints
                    .iter()
                    .enumerate()
                    .map(|(i, &h)| {
                        self.new_attempt(core, Kind::Root, h, root, None, 1, core.x.clone(), i as u32, Vec::new())
                    })
                    .collect();
                let names: Vec<&str> = hints.iter().map(|h| h.name()).collect();
                core.log(format!("{}: {}", count(b, "root-level attempt", "root-level attempts"), names.join(", ")));
                self.phase = Phase::Solving;
                Progress::Moved
            }
            Phase::Solving => {
                let mut issued = 0;
                for a in self.active.clone() {
                    if self.attempts[a].state != SolveState::Ready {
                        continue;
                    }
                    if !self.params.no_tools && self.attempts[a].steps >= MAX_TOOL_STEPS {
                        if let Some(last) = self.attempts[a].last() {
                            core.set_note(last, "stopped", &format!("no finish after {MAX_TOOL_STEPS} tool steps"));
                        }
                        core.log(format!(
                            "attempt {} ({}) stops after {MAX_TOOL_STEPS} tool steps",
                            a + 1,
                            self.attempts[a].approach
                        ));
                        self.end_solve(core, a);
                        continue;
                    }
                    if self.issue_step(core, a) {
                        issued += 1;
                    }
                }
                if issued > 0 {
                    return Progress::Issued(issued);
                }
                if self.active.iter().any(|&a| self.attempts[a].state == SolveState::Waiting) {
                    return Progress::Stuck("waiting for replies".into());
                }
                self.phase = Phase::Scoring;
                Progress::Moved
            }
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
        let typed =
            Step { thought, action: read.action.clone(), extra_actions: read.extra_actions.clone(), ..Step::new(step) };
        let id = self.add_step(core, a, typed);
        core.tree.node_mut(id).issues.extend(read.notes.into_iter().map(crate::engine::Issue::Note));
        let action = read.action.filter(|_| read.problem.is_none());
        let Some(action) = action else {
            let problem = read.problem.unwrap_or_else(|| {
                "no action: write `Action N: tool[argument]` (calc, algebra, lp, count, or finish[answer])".into()
            });
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

    fn on_act_failed(&mut self, core: &mut Core, node: NodeId, error: &crate::engine::CallError) {
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
