//! Tree-of-Thoughts BFS (the paper's Algorithm 1). For each of T steps: generate
//! candidates from every kept state (propose, or sample k), evaluate them (value
//! with n samples, or vote), keep the best b (greedy: stable sort by value,
//! descending; or sampled in proportion to value). After T steps the kept states,
//! in rank order, are the output.

use crate::engine::MethodKind;
use std::collections::BTreeSet;

use crate::engine::event::Event;
use crate::engine::params::{choices, DefaultValue, Kind, ParamDecl, SEARCH};
use crate::engine::tree::DropReason;
use crate::engine::{Core, Duplicates, NodeId, NodeStatus, Outcome, ParamError, ParamReader, SearchParams, Selection};

use super::{count, noun, rank_by_value, Cutoff, Method, MethodInfo, MethodView, Progress};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Generate,
    Generating,
    Evaluate,
    Evaluating,
    Done,
}

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("tot-bfs");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "Tree of Thoughts, breadth-first: keep the b best states per step",
    react: super::ReactShape::None,
    uses_tools: false,
    needs: super::Needs::tree_search,
    params: &[&BREADTH, &SELECT, SEARCH[0], SEARCH[1], SEARCH[2], SEARCH[3], SEARCH[4], SEARCH[5]],
    wants_memory: super::no_memory,
    build: |p| Ok(Box::new(TotBfs::new(BfsParams::read(p)?))),
};

pub const BREADTH: ParamDecl = ParamDecl {
    name: "breadth",
    help: "b: states kept per step",
    kind: Kind::Whole { min: 1, max: 100_000 },
    default: DefaultValue::Whole(5),
};

pub const SELECT: ParamDecl = ParamDecl {
    name: "select",
    help: "How the b states are chosen",
    kind: Kind::Choice(choices::<Selection>),
    default: DefaultValue::Word("greedy"),
};

/// BFS's parameters: the beam and how it is chosen, over the shared search components.
#[derive(Debug, Clone, PartialEq)]
pub struct BfsParams {
    /// b: states kept per step.
    pub breadth: usize,
    pub select: Selection,
    pub search: SearchParams,
}

impl BfsParams {
    pub fn read(p: &ParamReader) -> Result<BfsParams, ParamError> {
        Ok(BfsParams { breadth: p.count(&BREADTH)?, select: p.choice(&SELECT)?, search: SearchParams::read(p)? })
    }
}

#[derive(Debug, Clone)]
pub struct TotBfs {
    params: BfsParams,
    /// Selections made so far; the frontier is expanded at step `step`.
    step: usize,
    frontier: Vec<NodeId>,
    /// Candidates of the current step.
    pool: Vec<NodeId>,
    phase: Phase,
    /// Each finished step's candidates, ranked, for backtracking.
    history: Vec<Vec<NodeId>>,
    /// Every node that was ever in a frontier.
    explored: BTreeSet<NodeId>,
    finals: Vec<NodeId>,
}

impl TotBfs {
    pub fn new(params: BfsParams) -> Self {
        TotBfs {
            params,
            step: 0,
            frontier: vec![NodeId(0)],
            pool: Vec::new(),
            phase: Phase::Generate,
            history: Vec::new(),
            explored: BTreeSet::from([NodeId(0)]),
            finals: Vec::new(),
        }
    }

    fn select(&mut self, core: &mut Core) {
        let candidates: Vec<NodeId> =
            self.pool.iter().copied().filter(|&n| core.usable(n) && core.tree.node(n).score.is_some()).collect();
        let ranked = rank_by_value(core, &candidates);
        let b = self.params.breadth;
        let kept: Vec<NodeId> = match self.params.select {
            Selection::Greedy => ranked.iter().copied().take(b).collect(),
            Selection::Sample => sample_by_value(core, &candidates, b),
        };
        for &id in &ranked {
            if kept.contains(&id) {
                core.set_status(id, NodeStatus::Frontier);
            } else {
                core.set_status(id, NodeStatus::Dropped(DropReason::BelowBeam { beam: b, step: self.step + 1 }));
            }
        }
        // Children of a subtree a person pruned are no candidates of the step.
        let pruned = self.pool.iter().filter(|&&n| core.tree.is_pruned(n)).count();
        let pool = self.pool.len() - pruned;
        core.emit(Event::Selected { step: self.step, kept: kept.clone(), candidates: pool });
        let not_counted = if pruned > 0 { format!("; {pruned} in pruned subtrees not counted") } else { String::new() };
        core.log(format!(
            "step {}: kept {} of {} {} ({} evaluated{not_counted})",
            self.step + 1,
            kept.len(),
            pool,
            noun(pool, "candidate", "candidates"),
            candidates.len()
        ));
        self.explored.extend(kept.iter().copied());
        self.history.truncate(self.step);
        self.history.push(ranked);
        self.frontier = kept;
        self.pool.clear();
        self.step += 1;
        self.phase = Phase::Generate;
    }
}

/// Choose `b` distinct candidates, each draw in proportion to value (without
/// replacement, so no state is expanded twice).
fn sample_by_value(core: &mut Core, candidates: &[NodeId], b: usize) -> Vec<NodeId> {
    let mut left: Vec<NodeId> = candidates.to_vec();
    let mut kept = Vec::new();
    while kept.len() < b && !left.is_empty() {
        let weights: Vec<f64> = left.iter().map(|&n| core.tree.value(n).unwrap_or(0.0).max(0.0)).collect();
        let total: f64 = weights.iter().sum();
        let i = if total <= 0.0 {
            core.rng.below(left.len())
        } else {
            let mut r = core.rng.next_f64() * total;
            let mut pick = left.len() - 1;
            for (i, w) in weights.iter().enumerate() {
                if r < *w {
                    pick = i;
                    break;
                }
                r -= w;
            }
            pick
        };
        kept.push(left.remove(i));
    }
    kept
}

impl Method for TotBfs {
    fn advance(&mut self, core: &mut Core) -> Progress {
        match self.phase {
            Phase::Generate => {
                if self.step >= core.steps() {
                    self.finals = self.frontier.iter().copied().filter(|&n| core.usable(n)).collect();
                    self.phase = Phase::Done;
                    return Progress::Moved;
                }
                let targets: Vec<NodeId> = self.frontier.iter().copied().filter(|&n| core.usable(n)).collect();
                if targets.is_empty() {
                    core.log(format!("step {}: no states left to expand; the search ends unsolved", self.step + 1));
                    self.finals.clear();
                    self.phase = Phase::Done;
                    return Progress::Moved;
                }
                for &n in &targets {
                    core.generate(n, false);
                }
                core.log(format!("step {}: expanding {}", self.step + 1, count(targets.len(), "state", "states")));
                self.pool.clear();
                self.phase = Phase::Generating;
                Progress::Issued(targets.len())
            }
            Phase::Evaluate => {
                let pool = self.pool.clone();
                let issued = core.evaluate(&pool, false, Duplicates::ScoreZero);
                self.phase = Phase::Evaluating;
                if issued == 0 {
                    Progress::Moved
                } else {
                    Progress::Issued(issued)
                }
            }
            Phase::Generating | Phase::Evaluating => Progress::Stuck("waiting for replies".into()),
            Phase::Done => Progress::Stuck("the search is finished".into()),
        }
    }

    fn settle(&mut self, core: &mut Core) {
        match self.phase {
            Phase::Generating => self.phase = Phase::Evaluate,
            Phase::Evaluating => self.select(core),
            _ => {}
        }
    }

    fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        core.finalize(self.finals.clone())
    }

    fn on_children(&mut self, core: &mut Core, parent: NodeId, children: &[NodeId], by_hand: bool) {
        let in_step = matches!(self.phase, Phase::Generating | Phase::Evaluate | Phase::Evaluating)
            && core.tree.node(parent).depth == self.step;
        if !by_hand || in_step {
            self.pool.extend_from_slice(children);
        }
        if !by_hand {
            // Children a person made by hand before the step reached `parent` are the
            // step's candidates too (the step's repeats of them are marked duplicates).
            let earlier = core.tree.node(parent).children.iter().copied();
            let earlier: Vec<NodeId> = earlier.filter(|c| !children.contains(c) && !self.pool.contains(c)).collect();
            self.pool.extend(earlier);
        }
    }

    fn on_edit(&mut self, core: &mut Core, original: NodeId, new: NodeId) {
        if !core.usable(new) {
            return;
        }
        if self.pool.contains(&original) {
            self.pool.push(new);
        } else if self.frontier.contains(&original) {
            self.frontier.push(new);
            self.explored.insert(new);
            core.set_status(new, NodeStatus::Frontier);
            if self.phase == Phase::Generating {
                core.generate(new, false);
            }
        }
    }

    fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String> {
        let Some(previous) = self.step.checked_sub(1).and_then(|s| self.history.get(s)) else {
            return Err("nothing to backtrack to: no step has been selected yet".into());
        };
        let b = self.params.breadth;
        let unexplored = |n: &NodeId| !self.explored.contains(n) && core.usable(*n);
        let alternatives: Vec<NodeId> = match to {
            None => previous.iter().copied().filter(unexplored).take(b).collect(),
            // One chosen state of the step before, if it is still unexplored.
            Some(node) if previous.contains(&node) && unexplored(&node) => vec![node],
            Some(node) => {
                return Err(format!(
                    "{node} is not an unexplored candidate of step {}: BFS backtracks to the step before",
                    self.step
                ))
            }
        };
        if alternatives.is_empty() {
            return Err(format!("step {}: every candidate has been explored already", self.step));
        }
        core.cancel_scheduled();
        let from = std::mem::take(&mut self.frontier);
        for &n in from.iter().chain(self.pool.iter()) {
            if core.usable(n) {
                core.set_status(n, NodeStatus::Dropped(DropReason::Backtracked));
            }
        }
        self.pool.clear();
        for &n in &alternatives {
            core.set_status(n, NodeStatus::Frontier);
        }
        self.explored.extend(alternatives.iter().copied());
        // One line says it all in the transcript: where from, where to, and why there.
        let ids = |ns: &[NodeId]| ns.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" ");
        let line = format!(
            "backtracked from {} to {} at step {}: the {} of the step before",
            ids(&from),
            ids(&alternatives),
            self.step + 1,
            count(alternatives.len(), "best unexplored state", "best unexplored states")
        );
        core.emit(Event::Backtracked { from, to: alternatives.clone() });
        core.log(line);
        self.frontier = alternatives;
        self.phase = Phase::Generate;
        Ok(())
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        core.cancel_scheduled();
        for &n in self.frontier.iter().chain(self.pool.iter()) {
            if n != node && matches!(core.tree.node(n).status, NodeStatus::Frontier | NodeStatus::Candidate) {
                core.set_status(n, NodeStatus::Dropped(DropReason::ContinuedFrom(node)));
            }
        }
        self.pool.clear();
        self.step = core.tree.node(node).depth;
        self.history.truncate(self.step);
        self.frontier = vec![node];
        self.explored.insert(node);
        core.set_status(node, NodeStatus::Frontier);
        self.finals.clear();
        self.phase = Phase::Generate;
        Ok(())
    }

    fn search(&self) -> Option<SearchParams> {
        Some(self.params.search)
    }

    fn view(&self, _core: &Core) -> MethodView {
        let (p, s) = (&self.params, &self.params.search);
        let params = format!("tot-bfs b={} n={} {:?}/{:?}", p.breadth, s.n_evaluate, s.generator, s.evaluator);
        // The step in flight counts, so the header agrees with the transcript's "step N: ...".
        let in_flight = matches!(self.phase, Phase::Generating | Phase::Evaluate | Phase::Evaluating);
        MethodView {
            params: params.to_lowercase(),
            step: self.step + usize::from(in_flight),
            step_noun: "step",
            cutoff: Some(Cutoff::Beam { n: p.breadth, label: format!("beam b={}", p.breadth) }),
            candidates: super::Candidates::ByDepth,
            votes: None,
            ..MethodView::default()
        }
    }
}
