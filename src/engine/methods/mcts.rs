//! Monte Carlo tree search over thoughts. Each iteration selects a leaf from the
//! root by UCT (Q + c·√(ln N_parent / N_child), unvisited children first), expands
//! it with the task's generator, values every child with the task's evaluator
//! (optionally going on greedily for `rollout_depth` more levels from the best
//! child), and backs the best reward up the path as a running mean. Rewards are
//! values scaled to [0, 1] by the task's value classes. The run stops after
//! `iterations` iterations, or at once on a final state valued at the top of the
//! scale; the answer is the best visited final state (highest Q, then most visits).
//!
//! Parameters (declared below, with the tree searches' shared ones): `uct_c`
//! (exploration constant, default 1.0), `iterations` (default 30),
//! `rollout_depth` (default 0: the evaluator's value is the reward).
//! Each node shows `N` (visits) and `Q` (mean reward) as metrics.

use std::collections::BTreeSet;

use crate::engine::event::Event;
use crate::engine::params::{DefaultValue, Kind, ParamDecl, SEARCH};
use crate::engine::tree::DropReason;
use crate::engine::{
    Core, Duplicates, Evaluator, MethodKind, NodeId, NodeStatus, Outcome, ParamError, ParamReader, SearchParams,
};

use super::{count, Method, MethodInfo, MethodView, Progress};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("mcts");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "Monte Carlo tree search over thoughts: UCT selection, evaluator rewards, mean backup",
    react: super::ReactShape::None,
    uses_tools: false,
    needs: super::Needs::tree_search,
    params: &[&UCT_C, &ITERATIONS, &ROLLOUT_DEPTH, SEARCH[0], SEARCH[1], SEARCH[2], SEARCH[3], SEARCH[4], SEARCH[5]],
    wants_memory: super::no_memory,
    build: |params| {
        let (mcts, search) = MctsParams::read(params)?;
        Ok(Box::new(Mcts::new(mcts, search)))
    },
};

/// MCTS's own parameters (declared below).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MctsParams {
    pub uct_c: f64,
    pub iterations: usize,
    pub rollout_depth: usize,
}

pub const UCT_C: ParamDecl = ParamDecl {
    name: "uct_c",
    help: "The exploration constant c of UCT",
    kind: Kind::Real { min: 0.0, max: 100.0 },
    default: DefaultValue::Real(1.0),
};

pub const ITERATIONS: ParamDecl = ParamDecl {
    name: "iterations",
    help: "Iterations (select, expand, evaluate, back up)",
    kind: Kind::Whole { min: 1, max: 100_000 },
    default: DefaultValue::Whole(30),
};

pub const ROLLOUT_DEPTH: ParamDecl = ParamDecl {
    name: "rollout_depth",
    help: "Levels to go on greedily from the best new child before backing up",
    kind: Kind::Whole { min: 0, max: 100 },
    default: DefaultValue::Whole(0),
};

impl MctsParams {
    /// MCTS's parameters, with the shared search components.
    pub fn read(p: &ParamReader) -> Result<(MctsParams, SearchParams), ParamError> {
        let mcts = MctsParams {
            uct_c: p.real(&UCT_C)?,
            iterations: p.count(&ITERATIONS)?,
            rollout_depth: p.count(&ROLLOUT_DEPTH)?,
        };
        Ok((mcts, SearchParams::read(p)?))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Select,
    /// Children of `leaf` are being generated (`rollout` levels below the expanded node).
    Expanding {
        leaf: NodeId,
        path: Vec<NodeId>,
        rollout: usize,
    },
    /// Children of `leaf` are being valued.
    Evaluating {
        leaf: NodeId,
        path: Vec<NodeId>,
        rollout: usize,
        children: Vec<NodeId>,
    },
    Done,
}

#[derive(Debug, Clone)]
pub struct Mcts {
    params: MctsParams,
    search: SearchParams,
    phase: Phase,
    iterations: usize,
    /// Nodes whose children were asked for (each is expanded once).
    expanded: BTreeSet<NodeId>,
    /// Nodes with nothing left to try under them.
    exhausted: BTreeSet<NodeId>,
    /// The next iteration expands this node (a person's "continue from").
    forced: Option<NodeId>,
    /// The path the last iteration went down, for a forced backtrack.
    last_path: Vec<NodeId>,
    finals: Vec<NodeId>,
}

impl Mcts {
    pub fn new(params: MctsParams, search: SearchParams) -> Self {
        Mcts {
            params,
            search,
            phase: Phase::Select,
            iterations: 0,
            expanded: BTreeSet::new(),
            exhausted: BTreeSet::new(),
            forced: None,
            last_path: Vec::new(),
            finals: Vec::new(),
        }
    }

    fn visits(core: &Core, id: NodeId) -> f64 {
        core.tree.node(id).metrics.get("N").copied().unwrap_or(0.0)
    }

    fn q(core: &Core, id: NodeId) -> f64 {
        core.tree.node(id).metrics.get("Q").copied().unwrap_or(0.0)
    }

    fn terminal(core: &Core, id: NodeId) -> bool {
        core.tree.node(id).depth >= core.steps()
    }

    /// A node's value scaled to [0, 1] by the task's top value class and the number of evaluator samples.
    fn reward(&self, core: &Core, id: NodeId) -> f64 {
        let Some(value) = core.tree.value(id) else { return 0.0 };
        let samples = f64::from(self.search.n_evaluate);
        let top = match self.search.evaluator {
            Evaluator::Value => {
                crate::engine::task::value_classes(core.task.as_ref()).iter().map(|(_, v)| *v).fold(0.0, f64::max)
            }
            Evaluator::Vote => 1.0,
        };
        let scale = if top > 0.0 { top * samples } else { samples };
        (value / scale).clamp(0.0, 1.0)
    }

    /// Children the search may still go down: usable, valued, not exhausted.
    fn selectable(&self, core: &Core, id: NodeId) -> Vec<NodeId> {
        core.tree
            .node(id)
            .children
            .iter()
            .copied()
            .filter(|&c| core.usable(c) && core.tree.node(c).score.is_some() && !self.exhausted.contains(&c))
            .collect()
    }

    /// UCT descent from the root to a node to expand (or a final state).
    fn select(&self, core: &Core) -> Vec<NodeId> {
        let mut path = vec![core.tree.root()];
        let mut node = core.tree.root();
        while self.expanded.contains(&node) && !Self::terminal(core, node) {
            let children = self.selectable(core, node);
            if children.is_empty() {
                break;
            }
            let parent_n = Self::visits(core, node).max(1.0);
            let uct = |c: NodeId| {
                let n = Self::visits(core, c);
                if n == 0.0 {
                    f64::INFINITY
                } else {
                    Self::q(core, c) + self.params.uct_c * (parent_n.ln() / n).sqrt()
                }
            };
            // Highest UCT; ties go to the earlier child, so runs are reproducible.
            let mut best = children[0];
            for &c in &children[1..] {
                if uct(c) > uct(best) {
                    best = c;
                }
            }
            node = best;
            path.push(node);
        }
        path
    }

    /// Add `reward` to every node of `path` (mean backup) and count the iteration.
    fn backup(&mut self, core: &mut Core, path: &[NodeId], reward: f64) {
        for &id in path {
            let n = Self::visits(core, id);
            let q = Self::q(core, id);
            core.set_metrics(id, &[("N", n + 1.0), ("Q", (q * n + reward) / (n + 1.0))]);
        }
        self.iterations += 1;
        self.last_path = path.to_vec();
    }

    /// Mark `id` exhausted when nothing under it can be tried any more.
    fn exhaust(&mut self, core: &mut Core, id: NodeId) {
        self.exhausted.insert(id);
        if id != core.tree.root() && core.usable(id) && !Self::terminal(core, id) {
            core.set_status(id, NodeStatus::Dropped(DropReason::Exhausted));
        }
    }

    /// Close an expansion: value the children in, roll out or back up.
    fn finish_expansion(
        &mut self,
        core: &mut Core,
        leaf: NodeId,
        path: Vec<NodeId>,
        rollout: usize,
        children: &[NodeId],
    ) {
        let valued: Vec<NodeId> =
            children.iter().copied().filter(|&c| core.usable(c) && core.tree.node(c).score.is_some()).collect();
        let best = valued.iter().copied().fold(None, |best: Option<NodeId>, c| match best {
            Some(b) if self.reward(core, b) >= self.reward(core, c) => Some(b),
            _ => Some(c),
        });
        let Some(best) = best else {
            // A dead end: nothing usable came back.
            if rollout == 0 {
                self.exhaust(core, leaf);
            }
            core.log(format!("iteration {}: nothing usable below {leaf}, reward 0 backed up", self.iterations + 1));
            self.backup(core, &path, 0.0);
            return;
        };
        if rollout == 0 {
            for &c in &valued {
                let r = self.reward(core, c);
                core.set_metrics(c, &[("N", 1.0), ("Q", r)]);
            }
        }
        if rollout < self.params.rollout_depth && !Self::terminal(core, best) {
            // Go on greedily from the best child; the rollout's nodes stay out of the statistics.
            core.log(format!("rollout {} from {best}", rollout + 1));
            self.expanded.insert(best);
            core.generate(best, false);
            self.phase = Phase::Expanding { leaf: best, path, rollout: rollout + 1 };
            return;
        }
        let reward = self.reward(core, best);
        if Self::terminal(core, best) && reward >= 1.0 {
            self.finals.push(best);
        }
        core.log(format!(
            "iteration {}: best child {best}, reward {reward:.2} backed up to the root",
            self.iterations + 1
        ));
        self.backup(core, &path, reward);
    }

    fn best_final(&self, core: &Core) -> Vec<NodeId> {
        let mut finals: Vec<NodeId> = core
            .tree
            .nodes()
            .filter(|n| n.depth >= core.steps() && core.usable(n.id) && Self::visits(core, n.id) > 0.0)
            .map(|n| n.id)
            .collect();
        let key = |id: &NodeId| (Self::q(core, *id), Self::visits(core, *id));
        finals.sort_by(|a, b| key(b).partial_cmp(&key(a)).unwrap_or(std::cmp::Ordering::Equal).then(a.cmp(b)));
        finals
    }
}

impl Method for Mcts {
    fn advance(&mut self, core: &mut Core) -> Progress {
        if self.phase != Phase::Select {
            return Progress::Stuck("MCTS is waiting for replies".into());
        }
        if !self.finals.is_empty() {
            core.log(format!("reached a final state valued at the top of the scale: {}", self.finals[0]));
            self.phase = Phase::Done;
            return Progress::Moved;
        }
        if self.iterations >= self.params.iterations {
            core.log(format!("{}, the budget; stopping", count(self.iterations, "iteration", "iterations")));
            self.phase = Phase::Done;
            return Progress::Moved;
        }
        if self.exhausted.contains(&core.tree.root()) {
            core.log("every branch is exhausted");
            self.phase = Phase::Done;
            return Progress::Moved;
        }
        let path = match self.forced.take().filter(|&n| core.tree.contains(n) && core.usable(n)) {
            Some(node) => {
                let mut path = core.tree.ancestors(node);
                path.reverse();
                path.push(node);
                path
            }
            None => self.select(core),
        };
        let leaf = *path.last().unwrap_or(&core.tree.root());
        if Self::terminal(core, leaf) {
            // A final state again: its value is the reward.
            let reward = self.reward(core, leaf);
            self.backup(core, &path, reward);
            return Progress::Moved;
        }
        if self.expanded.contains(&leaf) {
            // Expanded before and nothing below it is left.
            self.exhaust(core, leaf);
            self.backup(core, &path, 0.0);
            return Progress::Moved;
        }
        self.expanded.insert(leaf);
        let route: Vec<String> = path.iter().map(|n| n.to_string()).collect();
        core.log(format!("iteration {}: UCT descends {}; expanding {leaf}", self.iterations + 1, route.join(" → ")));
        core.set_status(leaf, NodeStatus::Expanded);
        core.generate(leaf, false);
        self.phase = Phase::Expanding { leaf, path, rollout: 0 };
        Progress::Issued(1)
    }

    fn settle(&mut self, core: &mut Core) {
        match std::mem::replace(&mut self.phase, Phase::Select) {
            Phase::Expanding { leaf, path, rollout } => {
                // The generator's call failed or was cancelled: no children.
                self.finish_expansion(core, leaf, path, rollout, &[]);
            }
            Phase::Evaluating { leaf, path, rollout, children } => {
                self.finish_expansion(core, leaf, path, rollout, &children);
            }
            other => self.phase = other,
        }
    }

    fn done(&self) -> bool {
        self.phase == Phase::Done
    }

    fn outcome(&mut self, core: &mut Core) -> Outcome {
        let mut finals = self.finals.clone();
        for id in self.best_final(core) {
            if !finals.contains(&id) {
                finals.push(id);
            }
        }
        core.finalize(finals)
    }

    fn on_children(&mut self, core: &mut Core, parent: NodeId, children: &[NodeId], by_hand: bool) {
        if by_hand {
            // A person's expansion: the engine values the children; selection picks them up.
            self.expanded.insert(parent);
            return;
        }
        if let Phase::Expanding { leaf, path, rollout } = std::mem::replace(&mut self.phase, Phase::Select) {
            if leaf == parent {
                // Children of one expansion are one batch, valued as a ToT step is.
                core.evaluate(children, false, Duplicates::ScoreZero);
                self.phase = Phase::Evaluating { leaf, path, rollout, children: children.to_vec() };
                return;
            }
            self.phase = Phase::Expanding { leaf, path, rollout };
        }
    }

    fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String> {
        // Leave the node named, or the iteration in flight, or else the one before.
        let path = match (to, &self.phase) {
            (Some(node), _) => {
                let mut path = core.tree.ancestors(node);
                path.reverse();
                path.push(node);
                path
            }
            (None, Phase::Expanding { path, .. } | Phase::Evaluating { path, .. }) => path.clone(),
            (None, _) => self.last_path.clone(),
        };
        let Some(&leaf) = path.last().filter(|&&n| n != core.tree.root()) else {
            return Err("nothing to backtrack from yet: step the search first".into());
        };
        if matches!(self.phase, Phase::Expanding { .. } | Phase::Evaluating { .. }) {
            core.cancel_scheduled();
            self.phase = Phase::Select;
        }
        let to = core.tree.node(leaf).parent.into_iter().collect::<Vec<_>>();
        self.exhausted.insert(leaf);
        core.set_status(leaf, NodeStatus::Dropped(DropReason::Backtracked));
        core.emit(Event::Backtracked { from: vec![leaf], to });
        self.finals.retain(|&f| f != leaf);
        self.last_path = path[..path.len() - 1].to_vec();
        if self.phase == Phase::Done {
            self.phase = Phase::Select;
        }
        Ok(())
    }

    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String> {
        if Self::terminal(core, node) {
            return Err(format!("{node} is a final state; there is nothing to expand"));
        }
        self.expanded.remove(&node);
        self.exhausted.remove(&node);
        self.forced = Some(node);
        if self.phase == Phase::Done {
            self.phase = Phase::Select;
            self.finals.clear();
        }
        Ok(())
    }

    fn search(&self) -> Option<SearchParams> {
        Some(self.search)
    }

    fn view(&self, _core: &Core) -> MethodView {
        let p = &self.params;
        let mut params = format!("mcts c={} iters {} n={}", p.uct_c, p.iterations, self.search.n_evaluate);
        if p.rollout_depth > 0 {
            params.push_str(&format!(" rollout {}", p.rollout_depth));
        }
        // The iteration in flight counts, so the status agrees with the transcript's latest line.
        let in_flight = matches!(self.phase, Phase::Expanding { .. } | Phase::Evaluating { .. });
        let step = self.iterations + usize::from(in_flight);
        MethodView {
            params,
            step,
            step_noun: "iteration",
            cutoff: None,
            candidates: super::Candidates::Siblings,
            votes: None,
            ..MethodView::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testkit::*;
    use crate::engine::{Command, Event, Params, RunMode};

    const X: &str = "4 5 6 10";

    fn mcts(extra: &[(&str, serde_json::Value)]) -> Params {
        let mut fields = vec![("n_evaluate", serde_json::json!(1))];
        fields.extend(extra.iter().cloned());
        from_header(KIND, &fields)
    }

    fn metric(e: &crate::engine::Engine, id: NodeId, key: &str) -> f64 {
        e.tree().node(id).metrics.get(key).copied().unwrap_or(0.0)
    }

    #[test]
    fn parameters_come_from_the_header_with_defaults() {
        let of = |p: &Params| MctsParams::read(&p.reader()).map(|(m, _)| m);
        assert_eq!(of(&mcts(&[])), Ok(MctsParams { uct_c: 1.0, iterations: 30, rollout_depth: 0 }));
        let p = mcts(&[("uct_c", 0.5.into()), ("iterations", 7.into()), ("rollout_depth", 2.into())]);
        assert_eq!(of(&p), Ok(MctsParams { uct_c: 0.5, iterations: 7, rollout_depth: 2 }));
        // Out of range or of the wrong type: an error naming the parameter.
        for (key, value, says) in [
            ("uct_c", serde_json::json!(-1.0), "uct_c (--uct-c) is -1: it must be a number from 0 to 100"),
            (
                "iterations",
                serde_json::json!(0),
                "iterations (--iterations) is 0: it must be a whole number from 1 to 100000",
            ),
            (
                "iterations",
                serde_json::json!(2.5),
                "iterations (--iterations) is 2.5: it must be a whole number from 1 to 100000",
            ),
            (
                "rollout_depth",
                serde_json::json!("deep"),
                "rollout_depth (--rollout-depth) is \"deep\": it must be a whole number from 0 to 100",
            ),
        ] {
            let err = of(&mcts(&[(key, value)])).unwrap_err();
            assert_eq!(err.to_string(), says);
            assert_eq!(mcts(&[(key, serde_json::json!(null))]).check().map_err(|e| e.name), Err(key.to_string()));
        }
        // A header names them flat, next to the common parameters, and reads back the same.
        let json = serde_json::to_value(mcts(&[("uct_c", 0.5.into())])).unwrap();
        assert_eq!(json["uct_c"], 0.5);
        assert_eq!(serde_json::from_value::<Params>(json).unwrap(), mcts(&[("uct_c", 0.5.into())]));
    }

    /// One step is one iteration: expand the root, value its children, back the best
    /// reward up. The next iteration goes down the child with the highest UCT.
    #[test]
    fn an_iteration_expands_values_and_backs_up() {
        let mut e = engine(X, mcts(&[]));
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let c = calls(&fx);
        assert_eq!(c.len(), 1, "the root's children are asked for");
        assert_eq!(e.core.calls[&c[0].0].node, NodeId(0));
        assert_eq!(e.view().step, 1, "the iteration in flight is counted");
        let fx = e.handle(reply(c[0].0, &["4 + 5 = 9 (left: 6 9 10)\n10 - 4 = 6 (left: 5 6 6)"]));
        let c = calls(&fx);
        assert_eq!(c.len(), 2, "each child is valued");
        e.handle(reply(c[0].0, &["likely"]));
        let fx = e.handle(reply(c[1].0, &["sure"]));
        assert!(calls(&fx).is_empty(), "one step is one iteration");
        assert_eq!(e.mode(), RunMode::Paused);
        assert_eq!(e.view().step, 1);
        // Rewards are values over the top class (sure = 20): 1/20 and 1.
        assert_eq!(metric(&e, NodeId(1), "Q"), 0.05);
        assert_eq!(metric(&e, NodeId(2), "Q"), 1.0);
        assert_eq!(metric(&e, NodeId(0), "N"), 1.0);
        assert_eq!(metric(&e, NodeId(0), "Q"), 1.0, "the root gets the best child's reward");
        assert!(events(&fx).iter().any(|ev| matches!(ev, Event::Metrics { id: NodeId(0), .. })));
        // Both children have one visit: UCT prefers the higher Q.
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let c = calls(&fx);
        assert_eq!(e.core.calls[&c[0].0].node, NodeId(2));
    }

    /// UCT explores: with a large c a less valued child with fewer visits is chosen.
    #[test]
    fn exploration_constant_trades_value_for_visits() {
        let pick = |c: f64| {
            let mut e = engine(X, mcts(&[("uct_c", c.into())]));
            let fx = e.handle(cmd(Command::Step { n: 1 }));
            let g = calls(&fx)[0].0;
            let fx = e.handle(reply(g, &["4 + 5 = 9 (left: 6 9 10)\n10 - 4 = 6 (left: 5 6 6)"]));
            let c2 = calls(&fx);
            e.handle(reply(c2[0].0, &["likely"]));
            e.handle(reply(c2[1].0, &["sure"]));
            // Second iteration expands #2; its children are all impossible.
            let fx = e.handle(cmd(Command::Step { n: 1 }));
            let g = calls(&fx)[0].0;
            let fx = e.handle(reply(g, &["5 + 6 = 11 (left: 6 11)"]));
            for (call, _) in calls(&fx) {
                e.handle(reply(call, &["impossible"]));
            }
            let fx = e.handle(cmd(Command::Step { n: 1 }));
            e.core.calls[&calls(&fx)[0].0].node
        };
        // #2 (mean 0.5 over 2 visits) against #1 (0.05 over 1): greedy goes down #2 to
        // its child #3; a large c expands the less visited #1.
        assert_eq!(pick(0.0), NodeId(3), "greedy: down the higher mean");
        assert_eq!(pick(5.0), NodeId(1), "exploring: the less visited child");
    }

    #[test]
    fn stops_after_the_iteration_budget_and_answers_from_the_best_final() {
        let mut e = engine("4 9 10 13", mcts(&[("iterations", 3.into())]));
        run_sync(&mut e, run_cmd(), sim(0.0, 3));
        assert!(e.is_finished());
        assert!(e.view().step <= 3);
        let mut e = engine("4 9 10 13", mcts(&[]).with("n_evaluate", 3));
        run_sync(&mut e, run_cmd(), sim(0.0, 3));
        let o = e.outcome().unwrap();
        assert!(o.solved, "a perfect sim leads MCTS to 24: {o:?}");
        let answer_node = o.finals[0];
        assert_eq!(e.tree().node(answer_node).depth, 4);
        assert!(metric(&e, answer_node, "N") >= 1.0);
    }

    #[test]
    fn rollouts_go_deeper_before_backing_up() {
        let mut e = engine("4 9 10 13", mcts(&[("rollout_depth", 3.into())]).with("n_evaluate", 3));
        let events = run_sync(&mut e, cmd(Command::Step { n: 1 }), sim(0.0, 3));
        // One iteration reached a final state: the root, its child and three rollout levels.
        assert!(e.tree().nodes().any(|n| n.depth == 4), "{}", e.tree().render_text());
        assert_eq!(e.view().step, 1);
        assert!(events.iter().any(|ev| matches!(ev, Event::Log { text } if text.starts_with("rollout"))));
        // Rollout nodes are not in the statistics; the root got one visit.
        assert_eq!(metric(&e, NodeId(0), "N"), 1.0);
    }

    #[test]
    fn a_person_can_backtrack_and_continue_from_a_node() {
        let mut e = engine(X, mcts(&[]));
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let g = calls(&fx)[0].0;
        let fx = e.handle(reply(g, &["4 + 5 = 9 (left: 6 9 10)\n10 - 4 = 6 (left: 5 6 6)"]));
        let c = calls(&fx);
        e.handle(reply(c[0].0, &["likely"]));
        e.handle(reply(c[1].0, &["sure"]));
        // Nothing below the root's expansion was tried yet: backtrack has nothing to leave.
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        let g = calls(&fx)[0].0;
        assert_eq!(e.core.calls[&g].node, NodeId(2));
        let fx = e.handle(cmd(Command::Backtrack { to: None, cause: None }));
        assert!(events(&fx).contains(&Event::Backtracked { from: vec![NodeId(2)], to: vec![NodeId(0)] }));
        assert_eq!(cancelled(&fx), vec![g]);
        assert!(matches!(e.tree().node(NodeId(2)).status, NodeStatus::Dropped(_)));
        // Continue from #1: the next iteration expands it.
        e.handle(cmd(Command::Continue { node: NodeId(1) }));
        let fx = e.handle(cmd(Command::Step { n: 1 }));
        assert_eq!(e.core.calls[&calls(&fx)[0].0].node, NodeId(1));
        // A named node is left directly.
        let fx = e.handle(cmd(Command::Backtrack { to: Some(NodeId(1)), cause: None }));
        assert!(events(&fx).contains(&Event::Backtracked { from: vec![NodeId(1)], to: vec![NodeId(0)] }));
        assert!(matches!(e.tree().node(NodeId(1)).status, NodeStatus::Dropped(DropReason::Backtracked)));
    }
}
