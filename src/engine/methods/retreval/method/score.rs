//! Scoring a round of attempts: each attempt's local score, the cross critique among
//! siblings, their combination with the memory's skepticism, and the choice of what to
//! validate.

use super::*;

impl Retreval {
    /// Issue the local (and cross) calls of the active attempts not scored yet.
    pub(super) fn issue_scores(&mut self, core: &mut Core) -> usize {
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
    pub(super) fn siblings(&self, core: &Core, a: usize) -> Vec<usize> {
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
    pub(super) fn combine(&mut self, core: &mut Core) {
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

    pub(super) fn decide(&mut self, core: &mut Core) {
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
}
