//! Validation and what follows it: a validated answer finishes the run, a failed one is
//! classified into a typed failure, remembered, and answered by backtracking to the
//! attempt best placed to avoid it.

use super::*;

impl Retreval {
    pub(super) fn validate(&mut self, core: &mut Core) -> Progress {
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

    pub(super) fn validated(&mut self, core: &mut Core) {
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

    pub(super) fn classified(&mut self, core: &mut Core) {
        let Some(c) = self.candidate else { return self.finish_best(core) };
        let last = self.attempts[c].last().unwrap_or(core.tree.root());
        let verdict = self.verdict.take();
        let approach = self.attempts[c].approach;
        let fallback_cause = verdict.as_ref().and_then(|v| v.cause).unwrap_or(FailureCause::Other);
        let feedback = verdict.map(|v| v.feedback).unwrap_or_default();
        // Only a classification that was read, with a summary, is a lesson for the memory.
        let (mut failure, lesson) = match self.replies.remove(&(last, TAG_FAILURE)).map(|r| parse_failure(&r, approach))
        {
            Some(Ok(f)) => {
                let lesson = !f.summary.trim().is_empty();
                (f, lesson)
            }
            Some(Err(why)) => {
                core.log(format!("{why}; the failure is recorded as {fallback_cause}, and no lesson is written"));
                (fallback_failure(fallback_cause, approach, &feedback), false)
            }
            None => {
                core.log(format!(
                    "the failure classification got no reply; the failure is recorded as {fallback_cause}, and no \
                     lesson is written"
                ));
                (fallback_failure(fallback_cause, approach, &feedback), false)
            }
        };
        // The attempt's hinted approach is what reliability tracks; an edited attempt has none.
        if approach != Approach::Other {
            failure.approach = approach;
        }
        self.after_failure(core, Some((c, failure, lesson)));
    }

    /// Write a typed failure to the memory and the attempt's notes.
    /// `lesson`: whether the failure was read from a classification with a summary (an
    /// unreadable one is noted on the attempt but writes nothing lasting).
    pub(super) fn remember_failure(&mut self, core: &mut Core, a: usize, failure: &TypedFailure, lesson: bool) {
        if let Some(last) = self.attempts[a].last() {
            core.set_note(last, "failure", &failure_note(failure));
        }
        if !self.memory_on(core) {
            return;
        }
        if !lesson {
            core.log("memory: nothing written (the failure's classification could not be read)");
            return;
        }
        let content = format!("{} approach, {}: {}", failure.approach, failure.cause, failure.summary);
        let evidence = self.evidence();
        let source = clip(self.attempts[a].x.trim(), 200);
        if let Some(m) = core.memory.as_mut() {
            match m.add_with_evidence(&content, Category::Failure, failure.approach.name(), Some(&source), evidence) {
                Ok(outcome) => core.log(format!("memory: failure entry {} ({content})", outcome.id())),
                Err(e) => core.log(format!("memory: the failure could not be written: {e}")),
            }
        }
    }

    /// What a lesson's outcome was checked against: the task's checker (oracle feedback)
    /// or only the model's own validation.
    pub(super) fn evidence(&self) -> crate::memory::Evidence {
        match self.feedback {
            FeedbackSource::Oracle => crate::memory::Evidence::Gold,
            FeedbackSource::SelfCheck => crate::memory::Evidence::SelfValidated,
        }
    }

    /// How the memory's log says what an outcome was checked against.
    pub(super) fn evidence_words(&self) -> &'static str {
        match self.feedback {
            FeedbackSource::Oracle => "checked against the gold answer",
            FeedbackSource::SelfCheck => "self-validated",
        }
    }

    pub(super) fn remember_success(&mut self, core: &mut Core, a: usize) {
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
        let evidence = self.evidence();
        if let Some(m) = core.memory.as_mut() {
            match m.add_with_evidence(&content, Category::Success, approach.name(), Some(&source), evidence) {
                Ok(outcome) => core.log(format!("memory: success entry {}", outcome.id())),
                Err(e) => core.log(format!("memory: the success could not be written: {e}")),
            }
        }
    }

    /// After a failed validation (or a level with nothing usable): record the failure,
    /// then backtrack, decompose or finish.
    pub(super) fn after_failure(&mut self, core: &mut Core, failed: Option<(usize, TypedFailure, bool)>) {
        let failed_approach = failed.as_ref().map(|(_, f, _)| f.approach);
        if let Some((a, f, lesson)) = &failed {
            self.remember_failure(core, *a, f, *lesson);
            self.last_critique = Some(clip(&failure_note(f), 300));
        }
        match self.backtrack_target(core, failed_approach) {
            Some(target) => self.jump(core, failed.map(|(a, f, _)| (a, f)), target, false),
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

    pub(super) fn backtrack_target(&self, core: &Core, failed: Option<Approach>) -> Option<usize> {
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
    pub(super) fn jump(
        &mut self,
        core: &mut Core,
        failed: Option<(usize, TypedFailure)>,
        target: usize,
        by_hand: bool,
    ) {
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
    pub(super) fn finish_best(&mut self, core: &mut Core) {
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

    pub(super) fn finish_with(&mut self, core: &mut Core, a: usize) {
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
}
