//! What the model got wrong, counted by kind of reply: proposal lines the task could not
//! use, value and vote samples it could not read, answers graded from a fallback line,
//! ReAct steps without an action, retries, and tool calls asked for but never made.
//!
//! The counts are derived, never stored: the readers' marks are counted as replies are
//! read (proposals, value and vote samples, kept in `Core`), and the rest is read from
//! the tree's marks (issues, steps) and the outcome. A replay feeds the same replies, so
//! it derives the same figures as the live run, for sessions recorded before they existed.

use serde::{Deserialize, Serialize};

use super::tree::{Issue, Origin};
use super::{Engine, Proposal};

/// How long an example's reply is shown, in characters.
const EXAMPLE_CHARS: usize = 80;

/// A share of bad replies at or above this (with at least one bad reply) is said in one
/// plain line: the search probably stopped for it.
pub const SHARE_SAID: f64 = 0.5;

/// The first offending reply of a kind, and what the reader made of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    /// The reply (or the line of it the reader looked at), clipped.
    pub reply: String,
    /// What would have been read, or why nothing was.
    pub read: String,
}

/// The replies of one kind: how many were read and how many of those went wrong.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Replies (lines, samples, steps, calls) of the kind.
    pub n: u64,
    /// Of those, the ones that went wrong.
    pub bad: u64,
    /// The first that went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<Example>,
}

impl Tally {
    pub fn is_empty(&self) -> bool {
        self.n == 0 && self.bad == 0
    }

    /// Count one reply that was read well.
    pub fn good(&mut self) {
        self.n += 1;
    }

    /// Count one reply that went wrong (the first is kept as the example).
    pub fn bad(&mut self, reply: &str, read: impl Into<String>) {
        self.n += 1;
        self.bad += 1;
        if self.example.is_none() {
            self.example = Some(Example { reply: clip_line(reply), read: read.into() });
        }
    }

    fn add(&mut self, other: &Tally) {
        self.n += other.n;
        self.bad += other.bad;
        if self.example.is_none() {
            self.example.clone_from(&other.example);
        }
    }

    /// Whether the share of bad replies is large enough to be said on its own line.
    pub fn crosses(&self) -> bool {
        self.bad > 0 && self.n > 0 && self.bad as f64 >= SHARE_SAID * self.n as f64
    }
}

/// A reply as one line (its line breaks shown as `⏎`), clipped to [`EXAMPLE_CHARS`].
fn clip_line(text: &str) -> String {
    let one = text.trim().replace("\r\n", "\n").replace('\n', " ⏎ ");
    crate::safe_text::clip(&one, EXAMPLE_CHARS)
}

/// The tallies `Core` keeps as replies are read (the marks that leave no node behind: a
/// reply that read as nothing, a sample's unread class).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadTallies {
    pub proposals: Tally,
    pub value_samples: Tally,
    pub vote_samples: Tally,
    /// Whole answers (io, cot) that came empty: no node is made of them to count later.
    pub answers: Tally,
}

impl ReadTallies {
    /// The proposals read from one reply: each step line (a blank line is none), good or
    /// with the task's problem; a reply that reads as no step at all is one bad line.
    pub fn count_proposals(&mut self, reply: &str, read: &[Proposal]) {
        let mut any = false;
        for p in read.iter().filter(|p| !p.thought.trim().is_empty()) {
            any = true;
            match &p.problem {
                Some(problem) => self.proposals.bad(&p.thought, problem.clone()),
                None => self.proposals.good(),
            }
        }
        if !any {
            self.proposals.bad(reply, "no step read from the reply");
        }
    }

    /// The proposals a task merged from several replies: each counted; replies that gave
    /// none at all are one bad line each.
    pub fn count_merged<'a>(&mut self, replies: &[String], merged: impl Iterator<Item = &'a Proposal>) {
        let mut any = false;
        for p in merged.filter(|p| !p.thought.trim().is_empty()) {
            any = true;
            match &p.problem {
                Some(problem) => self.proposals.bad(&p.thought, problem.clone()),
                None => self.proposals.good(),
            }
        }
        if !any {
            for reply in replies {
                self.proposals.bad(reply, "no step read from the reply");
            }
        }
    }

    /// Value samples and the label the evaluator read from each (`?`: none). A task
    /// whose labels are not one per sample (crosswords: one per clue) is not counted.
    pub fn count_values(&mut self, samples: &[String], labels: &[String], classes: &[(&'static str, f64)]) {
        if samples.len() != labels.len() {
            return;
        }
        for (sample, label) in samples.iter().zip(labels) {
            if label == "?" {
                let read = match classes.is_empty() {
                    true => "no score read".to_string(),
                    false => {
                        let names: Vec<&str> = classes.iter().rev().map(|(n, _)| *n).collect();
                        format!("no class word ({}) read", names.join(", "))
                    }
                };
                self.value_samples.bad(last_line(sample), read);
            } else {
                self.value_samples.good();
            }
        }
    }
}

/// The last non-empty line of a reply (where evaluators read their verdict).
pub fn last_line(reply: &str) -> &str {
    reply.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("")
}

/// What the model got wrong in one problem's search (or, summed, in a run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyHealth {
    /// Proposed or sampled steps; bad: the task could not read them or rejected them.
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub proposals: Tally,
    /// Value samples; bad: no class word (no value) read.
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub value_samples: Tally,
    /// Vote samples; bad: no choice (or one outside the list) read.
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub vote_samples: Tally,
    /// Answers graded, and empty ones; bad: empty, or read from a fallback line (the reply
    /// had no answer line).
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub answers: Tally,
    /// ReAct steps the model wrote; bad: no action could be read.
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub steps: Tally,
    /// ReAct steps the model wrote; bad: asked again with a format reminder.
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub retries: Tally,
    /// Actions and tool calls the model asked for; bad: never made (one action a step).
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub tool_calls: Tally,
    /// Replies to requests that offered native tools; bad: the reply called none (the
    /// server may drop `tools` — some chat templates do — or the model does not call them).
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub offered_tools: Tally,
}

/// The kinds, in the order they are shown: (key, the replies' noun, what went wrong).
const KINDS: [(&str, &str, &str); 8] = [
    ("proposals", "proposal lines", "unreadable or invalid"),
    ("value_samples", "value samples", "with no class word"),
    ("vote_samples", "vote samples", "with no readable choice"),
    ("answers", "answers", "with no answer line (empty, or graded from a fallback line)"),
    ("steps", "ReAct steps", "without an action"),
    ("retries", "ReAct steps", "asked again with a format reminder"),
    ("tool_calls", "tool calls asked for", "never made"),
    ("offered_tools", "replies offered tools", "with no tool call"),
];

/// What a reply that was offered tools and called none says about the server.
const NO_TOOL_CALL: &str = "no tool call; the server may drop `tools` (some chat templates do) or the model \
     does not call them: --tool-mode text asks for actions as text";

impl ReplyHealth {
    /// The figures of a search as it stands (see the module's notes).
    pub fn of(engine: &Engine) -> ReplyHealth {
        let core = &engine.core;
        let read = &core.read_tallies;
        let mut health = ReplyHealth {
            proposals: read.proposals.clone(),
            value_samples: read.value_samples.clone(),
            vote_samples: read.vote_samples.clone(),
            answers: read.answers.clone(),
            ..ReplyHealth::default()
        };
        let tree = engine.tree();
        for node in tree.nodes() {
            let Some(step) = node.step.as_deref() else { continue };
            if node.origin != Origin::Model {
                continue;
            }
            let thought = step.thought.as_deref().unwrap_or("");
            // The reply that made the node, as it came (a retried step's first reply).
            let first = node
                .made_by
                .and_then(|call| core.calls.get(&call))
                .and_then(|record| record.reply.as_ref())
                .and_then(|reply| reply.as_ref().ok())
                .and_then(|response| response.completions.first())
                .map(|c| c.text.to_string());
            let retried = node.issues.iter().find_map(|i| match i {
                Issue::Retried(problem) => Some(problem),
                _ => None,
            });
            match node.issues.iter().find_map(|i| match i {
                Issue::BadCall(problem) => Some(problem),
                _ => None,
            }) {
                // A retried step's thought is the retry's reply, the one that had no action.
                Some(problem) if retried.is_some() => health.steps.bad(thought, problem.clone()),
                Some(problem) => health.steps.bad(first.as_deref().unwrap_or(thought), problem.clone()),
                None => health.steps.good(),
            }
            match retried {
                Some(problem) => health.retries.bad(first.as_deref().unwrap_or(thought), problem.clone()),
                None => health.retries.good(),
            }
            if step.action.is_some() {
                health.tool_calls.good();
            }
            for extra in &step.extra_actions {
                health.tool_calls.bad(extra, "not made: one action a step");
            }
        }
        for record in core.calls.values().filter(|r| !r.request.tools.is_empty()) {
            let Some(Ok(response)) = &record.reply else { continue };
            for completion in &response.completions {
                match completion.tool_calls.is_empty() {
                    true => health.offered_tools.bad(&completion.text, NO_TOOL_CALL),
                    false => health.offered_tools.good(),
                }
            }
        }
        if let Some(outcome) = engine.outcome() {
            for id in outcome.outputs().into_iter().filter(|&id| tree.contains(id)) {
                let node = tree.node(id);
                let Some(answer) = node.answer.as_deref() else { continue };
                match core.task.answer_from_fallback(&core.x, &node.path) {
                    Some(true) => {
                        let last = node.path.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
                        health.answers.bad(last, format!("graded as {answer:?}"));
                    }
                    Some(false) => health.answers.good(),
                    // The task cannot tell: not counted.
                    None => {}
                }
            }
        }
        health
    }

    fn tallies(&self) -> [&Tally; 8] {
        [
            &self.proposals,
            &self.value_samples,
            &self.vote_samples,
            &self.answers,
            &self.steps,
            &self.retries,
            &self.tool_calls,
            &self.offered_tools,
        ]
    }

    fn tallies_mut(&mut self) -> [&mut Tally; 8] {
        [
            &mut self.proposals,
            &mut self.value_samples,
            &mut self.vote_samples,
            &mut self.answers,
            &mut self.steps,
            &mut self.retries,
            &mut self.tool_calls,
            &mut self.offered_tools,
        ]
    }

    /// Nothing counted at all.
    pub fn is_empty(&self) -> bool {
        self.tallies().iter().all(|t| t.is_empty())
    }

    /// Nothing went wrong.
    pub fn all_good(&self) -> bool {
        self.tallies().iter().all(|t| t.bad == 0)
    }

    /// Add another problem's figures (the first examples are kept).
    pub fn add(&mut self, other: &ReplyHealth) {
        for (mine, theirs) in self.tallies_mut().into_iter().zip(other.tallies()) {
            mine.add(theirs);
        }
    }

    /// The sum of several problems' figures.
    pub fn sum<'a>(all: impl IntoIterator<Item = &'a ReplyHealth>) -> ReplyHealth {
        let mut total = ReplyHealth::default();
        for h in all {
            total.add(h);
        }
        total
    }

    /// The counts of what went wrong, in one line (`proposal lines unreadable or invalid
    /// 7/7, value samples with no class word 3/12`); none when nothing did.
    pub fn counts_line(&self) -> Option<String> {
        let parts: Vec<String> = KINDS
            .iter()
            .zip(self.tallies())
            .filter(|(_, t)| t.bad > 0)
            .map(|((_, noun, wrong), t)| format!("{noun} {wrong} {}/{}", t.bad, t.n))
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// A short form for the explorer's header, of the kinds [`ReplyHealth::warnings`]
    /// names (`model got wrong: proposals 7/7 · values 3/4`); none when no kind's share
    /// reaches [`SHARE_SAID`].
    pub fn short_line(&self) -> Option<String> {
        let parts: Vec<String> = KINDS
            .iter()
            .zip(self.tallies())
            .filter(|(_, t)| t.crosses())
            .map(|((key, _, _), t)| format!("{} {}/{}", short_name(key), t.bad, t.n))
            .collect();
        (!parts.is_empty()).then(|| format!("model got wrong: {}", parts.join(" · ")))
    }

    /// One plain line for each kind whose share of bad replies reaches [`SHARE_SAID`],
    /// with the first offending reply and what was read of it:
    /// `7 of 7 proposal lines unreadable or invalid, e.g. "3 * 8 = 24": 3 is not among …`.
    pub fn warnings(&self) -> Vec<String> {
        KINDS
            .iter()
            .zip(self.tallies())
            .filter(|(_, t)| t.crosses())
            .map(|((_, noun, wrong), t)| {
                let example = match &t.example {
                    Some(e) if e.reply.is_empty() => format!(", e.g. an empty reply: {}", e.read),
                    Some(e) => format!(", e.g. {:?}: {}", e.reply, e.read),
                    None => String::new(),
                };
                format!("{} of {} {noun} {wrong}{example}", t.bad, t.n)
            })
            .collect()
    }
}

/// A kind's name in the header's short line.
fn short_name(key: &str) -> &'static str {
    match key {
        "proposals" => "proposals",
        "value_samples" => "values",
        "vote_samples" => "votes",
        "answers" => "fallback answers",
        "steps" => "no action",
        "retries" => "retries",
        "offered_tools" => "no tool call",
        _ => "calls not made",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_half_or_more_is_said_with_its_first_example() {
        let mut h = ReplyHealth::default();
        h.proposals.bad("3 * 8 = 24 (left: 24)", "3 is not among the numbers 4 5 6 10");
        h.proposals.bad("second\nline", "later");
        h.proposals.good();
        h.value_samples.good();
        h.value_samples.bad("I think so", "no class word");
        h.value_samples.good();
        let warnings = h.warnings();
        assert_eq!(
            warnings,
            vec![
                "2 of 3 proposal lines unreadable or invalid, e.g. \"3 * 8 = 24 (left: 24)\": 3 is not among the \
                 numbers 4 5 6 10"
            ]
        );
        assert_eq!(
            h.counts_line().as_deref(),
            Some("proposal lines unreadable or invalid 2/3, value samples with no class word 1/3")
        );
        assert_eq!(h.short_line().as_deref(), Some("model got wrong: proposals 2/3"));
    }

    #[test]
    fn nothing_wrong_says_nothing_and_sums_keep_the_first_example() {
        let mut good = ReplyHealth::default();
        good.steps.good();
        assert!(good.warnings().is_empty() && good.counts_line().is_none() && good.short_line().is_none());
        let mut bad = ReplyHealth::default();
        bad.steps.bad("Thought: hmm", "no action found");
        let mut other = ReplyHealth::default();
        other.steps.bad("later", "other");
        let total = ReplyHealth::sum([&good, &bad, &other]);
        assert_eq!((total.steps.n, total.steps.bad), (3, 2));
        assert_eq!(total.steps.example.as_ref().map(|e| e.reply.as_str()), Some("Thought: hmm"));
        assert_eq!(
            total.warnings(),
            vec!["2 of 3 ReAct steps without an action, e.g. \"Thought: hmm\": no action found"]
        );
    }

    #[test]
    fn an_example_is_one_clipped_line() {
        let mut t = Tally::default();
        t.bad(&format!("first\nsecond {}", "x".repeat(200)), "why");
        let e = t.example.unwrap();
        assert!(e.reply.starts_with("first ⏎ second"), "{}", e.reply);
        assert!(e.reply.chars().count() <= EXAMPLE_CHARS, "{}", e.reply);
    }
}
