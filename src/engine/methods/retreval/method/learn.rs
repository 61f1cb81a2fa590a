//! The memory at the end of a problem: what it learnt written back (lessons from the
//! typed failures, successes, rewrites), consolidated, and calls in flight abandoned.

use super::*;

impl Retreval {
    pub(super) fn update_memory(&mut self, core: &mut Core) -> Progress {
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
        // The model's own validation against the run's grading: a lesson learnt from a
        // verdict the grading contradicts is said so (evidence is kept by the memory's rules).
        let keeps_evidence = core.memory.as_ref().is_some_and(|m| m.params().record_evidence);
        let self_checked = self.feedback == FeedbackSource::SelfCheck;
        if let (true, true, Some(a)) = (keeps_evidence, self_checked, final_attempt) {
            if let Some(answer) = self.attempts[a].answer.clone() {
                let approach = self.attempts[a].approach;
                match (solved, core.check_known(&answer)) {
                    (true, Err(why)) => core.log(format!(
                        "memory: the model's own validation called the {approach} attempt correct, but the run's \
                         grading does not ({why}); what the memory learns from this problem is marked self-validated"
                    )),
                    (false, Ok(())) => core.log(format!(
                        "memory: the model's own validation called the {approach} attempt wrong, but the run's \
                         grading says it is correct; what the memory learns from this problem is marked self-validated"
                    )),
                    _ => {}
                }
            }
        }
        let evidence = keeps_evidence.then(|| format!(" ({})", self.evidence_words()));
        let critique = self.last_critique.clone();
        let used: Vec<EntryId> = self.used.iter().copied().collect();
        let mut rewrites = Vec::new();
        let mut log = Vec::new();
        if let Some(m) = core.memory.as_mut() {
            if let Some(a) = final_attempt {
                let approach = self.attempts[a].approach;
                match m.record_outcome(approach.name(), solved) {
                    Ok(r) => log.push(format!(
                        "memory: {approach} approach {}{} → reliability {r:.2}",
                        if solved { "solved" } else { "not solved" },
                        evidence.as_deref().unwrap_or("")
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
            let prompt = super::super::prompt(
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

    pub(super) fn rewritten(&mut self, core: &mut Core) {
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

    pub(super) fn consolidate(&mut self, core: &mut Core) {
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
    pub(super) fn abandon_in_flight(&mut self, core: &mut Core) {
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
}
