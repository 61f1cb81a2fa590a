//! Steering by hand: editing the complexity or an attempt, and backtracking to a chosen
//! attempt with a chosen cause.

use super::*;

impl Retreval {
    pub(super) fn edit_complexity(&mut self, core: &mut Core, text: &str) -> Result<NodeId, String> {
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

    pub(super) fn edit_attempt(
        &mut self,
        core: &mut Core,
        a: usize,
        node: NodeId,
        text: &str,
    ) -> Result<NodeId, String> {
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
    /// The checks `backtrack_by_hand` makes before it changes anything.
    pub(super) fn backtrack_refusal_now(&self, core: &Core) -> Option<String> {
        if self.phase == Phase::Done {
            return Some("the search is finished".into());
        }
        let scored = self.branch.is_some() || self.best_of(core, self.leaves().collect::<Vec<_>>()).is_some();
        (!scored).then(|| "no attempt is scored yet: there is nothing to backtrack from".into())
    }

    pub(super) fn backtrack_by_hand(
        &mut self,
        core: &mut Core,
        to: Option<NodeId>,
        cause: FailureCause,
    ) -> Result<(), String> {
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
        self.remember_failure(core, failed, &failure, true);
        self.last_critique = Some(clip(&failure_note(&failure), 300));
        self.candidate = None;
        self.finals.clear();
        self.jump(core, Some((failed, failure)), target, true);
        Ok(())
    }
}
