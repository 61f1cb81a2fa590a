//! Decomposition: a problem split into subtasks, each solved as a problem of its own,
//! then composed into one answer.

use super::*;

impl Retreval {
    pub(super) fn decomposed(&mut self, core: &mut Core) {
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

    pub(super) fn start_subtask(&mut self, core: &mut Core, k: usize) {
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

    pub(super) fn subtask_done(&mut self, core: &mut Core, a: usize, k: usize) {
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

    pub(super) fn composed(&mut self, core: &mut Core) {
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
}
