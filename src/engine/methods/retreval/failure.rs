//! Step 4 of ReTreVal: validation and typed-failure backtracking. The best leaf is
//! self-checked (a verdict and, when it fails, a root cause from a fixed list); a
//! failure is classified (cause, approach, summary), the search jumps to the
//! best-scored unexplored root-level sibling — preferring a different approach — and
//! that sibling's critique history gets a note of the failure.

use serde::{Deserialize, Serialize};

use crate::engine::task::{read_verdict, Task};
use crate::protocol::{Prompt, Purpose};

use super::scoring::{parse_approach, Approach};
use super::{bounded, clip, field, prompt, MAX_TRACE_CHARS};

/// The root cause of a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCause {
    ArithmeticError,
    LogicError,
    IncompleteReasoning,
    WrongConstraint,
    OffByOne,
    MissingStep,
    Other,
}

impl FailureCause {
    /// Every cause, in the order prompts list them.
    pub const ALL: [FailureCause; 7] = [
        FailureCause::ArithmeticError,
        FailureCause::LogicError,
        FailureCause::IncompleteReasoning,
        FailureCause::WrongConstraint,
        FailureCause::OffByOne,
        FailureCause::MissingStep,
        FailureCause::Other,
    ];

    /// Its name (as serialised): `arithmetic_error`, `off_by_one`, ...
    pub fn name(self) -> &'static str {
        match self {
            FailureCause::ArithmeticError => "arithmetic_error",
            FailureCause::LogicError => "logic_error",
            FailureCause::IncompleteReasoning => "incomplete_reasoning",
            FailureCause::WrongConstraint => "wrong_constraint",
            FailureCause::OffByOne => "off_by_one",
            FailureCause::MissingStep => "missing_step",
            FailureCause::Other => "other",
        }
    }

    /// For people: `arithmetic error`, `off-by-one`, ...
    pub fn label(self) -> &'static str {
        match self {
            FailureCause::ArithmeticError => "arithmetic error",
            FailureCause::LogicError => "logic error",
            FailureCause::IncompleteReasoning => "incomplete reasoning",
            FailureCause::WrongConstraint => "wrong constraint",
            FailureCause::OffByOne => "off-by-one",
            FailureCause::MissingStep => "missing step",
            FailureCause::Other => "other",
        }
    }

    /// The cause `name` names: its snake_case name, or the same words with spaces,
    /// dashes or in another case (`Off-by-one`, `logic error`).
    pub fn from_name(name: &str) -> Option<FailureCause> {
        let key: String =
            name.trim().chars().map(|c| if c == ' ' || c == '-' { '_' } else { c.to_ascii_lowercase() }).collect();
        Self::ALL.into_iter().find(|c| c.name() == key)
    }
}

impl std::fmt::Display for FailureCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The causes a text names, in order: each cause's words in sequence, joined by
/// spaces, dashes or underscores (`arithmetic error`, `off-by-one`, `MISSING_STEP`).
fn causes_in(text: &str) -> Vec<FailureCause> {
    // Split on everything but letters and digits, so the name's separators all look alike.
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let hit = FailureCause::ALL.into_iter().find_map(|c| {
            let parts: Vec<&str> = c.name().split('_').collect();
            let n = parts.len();
            (words.get(i..i + n).is_some_and(|w| w.iter().zip(&parts).all(|(a, b)| a == b))).then_some((c, n))
        });
        match hit {
            Some((c, n)) => {
                found.push(c);
                i += n;
            }
            None => i += 1,
        }
    }
    found
}

/// Read a cause from a reply: the first cause named on the last `Cause:` line, else
/// the reply's only cause named; `None` if it names none or several without a label.
pub fn parse_failure_cause(reply: &str) -> Option<FailureCause> {
    let reply = bounded(reply);
    for line in reply.lines().rev() {
        if let Some(text) = field(line, &["root cause", "cause", "failure type", "failure"]) {
            let mut named = causes_in(text);
            named.sort();
            named.dedup();
            // One cause is the cause; several are the prompt's list echoed back
            // (`Cause: one of arithmetic_error, logic_error, ...`), which names none.
            if let [one] = named.as_slice() {
                return Some(*one);
            }
            if named.len() > 1 {
                return None;
            }
        }
    }
    let mut all = causes_in(reply);
    all.sort();
    all.dedup();
    match all.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// What a validation (self-check) reply said.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// The last `VERDICT:` line's verdict; `None` when the reply gives none.
    pub verdict: Option<bool>,
    /// The cause the reply names (read only when the verdict is not `correct`).
    pub cause: Option<FailureCause>,
    /// The reply's text (clipped), as critique.
    pub critique: String,
}

/// The causes' names, for prompts.
fn cause_names() -> Vec<&'static str> {
    FailureCause::ALL.iter().map(|c| c.name()).collect()
}

/// Ask the model to check `attempt` (the best leaf's full trace) on problem `x` step by
/// step, ending with `VERDICT: correct|incorrect` and, if incorrect, `CAUSE: NAME`
/// (purpose `feedback`, context `"retreval": "validate"`, `attempt`, `causes`).
pub fn validation_prompt(task: &dyn Task, x: &str, attempt: &str) -> Prompt {
    let attempt = clip(attempt.trim(), MAX_TRACE_CHARS);
    let causes = cause_names();
    let text = format!(
        "Problem:\n{}\n\nA solution attempt:\n{attempt}\n\n\
Check the attempt step by step: is every calculation and every inference right, does it \
use the problem's conditions correctly, and does it reach a final answer? Then end with \
a line `VERDICT: correct` or `VERDICT: incorrect`. If incorrect, add a last line \
`CAUSE: NAME` with the root cause, one of: {}.",
        clip(x.trim(), MAX_TRACE_CHARS),
        causes.join(", ")
    );
    let mut p = prompt(
        task,
        x,
        Purpose::Feedback,
        "validate",
        text,
        serde_json::json!({ "attempt": attempt, "causes": causes }),
    );
    p.max_tokens = Some(800);
    p
}

/// Read a validation reply: its verdict (the last `VERDICT:` line), and unless the
/// verdict is `correct`, the cause it names.
pub fn parse_validation(reply: &str) -> Validation {
    let reply = bounded(reply);
    let verdict = read_verdict(reply);
    let cause = if verdict == Some(true) { None } else { parse_failure_cause(reply) };
    Validation { verdict, cause, critique: clip(reply.trim(), MAX_TRACE_CHARS) }
}

/// A classified failure: what went wrong, in which approach, in a sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypedFailure {
    pub cause: FailureCause,
    pub approach: Approach,
    pub summary: String,
}

/// Most characters of a failure's summary kept (in notes and the memory).
pub const MAX_SUMMARY_CHARS: usize = 300;

/// Ask the model to classify why `attempt` failed, given `feedback` (the validation's
/// critique or the grader's message): `Cause:`, `Approach:` and `Summary:` lines
/// (purpose `reflect`, context `"retreval": "failure"`, `attempt`, `feedback`, `causes`).
pub fn failure_prompt(task: &dyn Task, x: &str, attempt: &str, feedback: &str) -> Prompt {
    let attempt = clip(attempt.trim(), MAX_TRACE_CHARS);
    let feedback = clip(feedback.trim(), MAX_TRACE_CHARS);
    let causes = cause_names();
    let approaches: Vec<&str> = Approach::ALL.iter().map(|a| a.name()).collect();
    let text = format!(
        "Problem:\n{}\n\nA failed solution attempt:\n{attempt}\n\nWhy it was judged wrong:\n{feedback}\n\n\
Classify the failure. Answer with exactly three lines:\n\
Cause: one of {}\n\
Approach: the attempt's approach, one of {}\n\
Summary: one sentence on what went wrong, specific enough to avoid next time",
        clip(x.trim(), MAX_TRACE_CHARS),
        causes.join(", "),
        approaches.join(", ")
    );
    let mut p = prompt(
        task,
        x,
        Purpose::Reflect,
        "failure",
        text,
        serde_json::json!({ "attempt": attempt, "feedback": feedback, "causes": causes }),
    );
    p.max_tokens = Some(200);
    p
}

/// Read a failure classification. The cause must be readable (else an error line
/// saying so); the approach falls back to `fallback` (e.g. the keyword guess from the
/// trace) and the summary to the reply's first other line.
pub fn parse_failure(reply: &str, fallback: Approach) -> Result<TypedFailure, String> {
    let reply = bounded(reply);
    let cause = parse_failure_cause(reply).ok_or_else(|| {
        format!("the failure classification names no cause (expected `Cause:` and one of {})", cause_names().join(", "))
    })?;
    let approach =
        reply.lines().rev().find_map(|line| field(line, &["approach"]).and_then(parse_approach)).unwrap_or(fallback);
    let summary = reply
        .lines()
        .find_map(|line| field(line, &["summary"]).filter(|s| !s.is_empty()))
        .or_else(|| {
            reply
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty() && field(line, &["root cause", "cause", "approach"]).is_none())
        })
        .unwrap_or("");
    let summary = clip(&summary.split_whitespace().collect::<Vec<_>>().join(" "), MAX_SUMMARY_CHARS);
    Ok(TypedFailure { cause, approach, summary })
}

/// The line injected into a backtrack target's critique history:
/// `Earlier attempt failed: arithmetic error in algebraic approach: <summary>`.
pub fn failure_note(failure: &TypedFailure) -> String {
    let summary = clip(&failure.summary.split_whitespace().collect::<Vec<_>>().join(" "), MAX_SUMMARY_CHARS);
    let summary = if summary.is_empty() { "no summary" } else { summary.as_str() };
    format!("Earlier attempt failed: {} in {} approach: {summary}", failure.cause.label(), failure.approach)
}

/// A node the search may backtrack to: one root-level child (the caller passes the
/// root's children), its total score (`None`: not scored), whether the search has
/// already gone down it, and its approach type if known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BacktrackCandidate<Id> {
    pub id: Id,
    pub score: Option<f64>,
    pub explored: bool,
    pub approach: Option<Approach>,
}

/// The root-level sibling to backtrack to after `failed` (the failed attempt's
/// approach, if known): the best-scored unexplored candidate whose approach differs
/// from `failed` (an unknown approach counts as different), else the best-scored
/// unexplored one. Unscored (or NaN) candidates rank below every scored one; ties keep
/// the candidates' order. `None` when every candidate is explored.
pub fn pick_backtrack_target<Id: Copy>(candidates: &[BacktrackCandidate<Id>], failed: Option<Approach>) -> Option<Id> {
    let rank = |c: &BacktrackCandidate<Id>| c.score.filter(|s| !s.is_nan()).unwrap_or(f64::NEG_INFINITY);
    let best = |different_only: bool| {
        candidates
            .iter()
            .filter(|c| !c.explored)
            .filter(|c| !different_only || failed.is_none() || c.approach != failed)
            // Strictly better replaces, so the first of equals stays.
            .fold(None::<&BacktrackCandidate<Id>>, |best, c| match best {
                Some(b) if rank(c) <= rank(b) => Some(b),
                _ => Some(c),
            })
            .map(|c| c.id)
    };
    best(true).or_else(|| best(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_snake_case_with_labels_and_read_back_from_either() {
        assert_eq!(serde_json::to_string(&FailureCause::OffByOne).unwrap(), "\"off_by_one\"");
        for c in FailureCause::ALL {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
            assert_eq!(FailureCause::from_name(c.name()), Some(c));
            assert_eq!(FailureCause::from_name(c.label()), Some(c));
            assert_eq!(FailureCause::from_name(&c.label().to_uppercase()), Some(c));
        }
        assert_eq!(FailureCause::from_name("typo"), None);
    }

    #[test]
    fn a_cause_is_read_from_its_line_or_a_lone_mention() {
        for (reply, cause) in [
            ("Cause: arithmetic_error", Some(FailureCause::ArithmeticError)),
            ("**Root cause:** Off-by-one", Some(FailureCause::OffByOne)),
            ("CAUSE: missing step (the case n = 0)", Some(FailureCause::MissingStep)),
            ("The attempt stops early: incomplete reasoning.", Some(FailureCause::IncompleteReasoning)),
            ("Not an arithmetic error.\nCause: logic error", Some(FailureCause::LogicError)),
            ("cause: WRONG_CONSTRAINT", Some(FailureCause::WrongConstraint)),
            ("Cause: off by one", Some(FailureCause::OffByOne)),
            ("Cause: other", Some(FailureCause::Other)),
            ("arithmetic error or logic error", None),
            ("Cause: bad luck", None),
            ("", None),
        ] {
            assert_eq!(parse_failure_cause(reply), cause, "{reply:?}");
        }
    }

    #[test]
    fn validation_reads_the_verdict_and_the_cause_of_a_failure() {
        let v = parse_validation("Step 3 multiplies wrong: 7*8 is 56.\nVERDICT: incorrect\nCAUSE: arithmetic_error");
        assert_eq!((v.verdict, v.cause), (Some(false), Some(FailureCause::ArithmeticError)));
        assert!(v.critique.starts_with("Step 3"));
        let v = parse_validation("Every step holds; no arithmetic error.\nVERDICT: correct");
        assert_eq!((v.verdict, v.cause), (Some(true), None), "a correct verdict has no cause");
        let v = parse_validation("Hard to say.");
        assert_eq!((v.verdict, v.cause), (None, None));
        let task = crate::tasks::game24::Game24::builtin();
        let p = validation_prompt(&task, "4 5 6 10", "(5 * 4) + 10 - 6 = 24");
        assert_eq!((p.purpose, &p.context["retreval"]), (Purpose::Feedback, &serde_json::json!("validate")));
        assert!(p.messages[0].content.contains("off_by_one") && p.messages[0].content.contains("VERDICT: incorrect"));
    }

    #[test]
    fn a_failure_classification_gives_cause_approach_and_summary() {
        let reply =
            "Cause: off_by_one\nApproach: combinatorial\nSummary: counted the arrangements\n  including the empty one.";
        let f = parse_failure(reply, Approach::Other).unwrap();
        assert_eq!((f.cause, f.approach), (FailureCause::OffByOne, Approach::Combinatorial));
        assert_eq!(f.summary, "counted the arrangements");
        // Sloppy: markdown, no approach line (the fallback), no summary label.
        let f =
            parse_failure("**Cause:** logic error\nThe sign flips when dividing by a negative.", Approach::Algebraic)
                .unwrap();
        assert_eq!(
            (f.cause, f.approach, f.summary.as_str()),
            (FailureCause::LogicError, Approach::Algebraic, "The sign flips when dividing by a negative.")
        );
        // An unreadable cause is an error line.
        let err = parse_failure("Approach: algebraic\nSummary: wrong", Approach::Other).unwrap_err();
        assert!(err.starts_with("the failure classification names no cause") && !err.contains('\n'), "{err}");
        // A huge summary is clipped.
        let f = parse_failure(&format!("Cause: other\nSummary: {}", "word ".repeat(10_000)), Approach::Other).unwrap();
        assert!(f.summary.chars().count() <= MAX_SUMMARY_CHARS + 1);
        let p = failure_prompt(&crate::tasks::game24::Game24::builtin(), "4 5 6 10", "a", "wrong");
        assert_eq!(
            (p.purpose, &p.context["retreval"], &p.context["feedback"]),
            (Purpose::Reflect, &serde_json::json!("failure"), &serde_json::json!("wrong"))
        );
    }

    #[test]
    fn the_failure_note_names_cause_approach_and_summary() {
        let f = TypedFailure {
            cause: FailureCause::ArithmeticError,
            approach: Approach::Algebraic,
            summary: "7 × 8 taken as 54\nin step 2".into(),
        };
        assert_eq!(
            failure_note(&f),
            "Earlier attempt failed: arithmetic error in algebraic approach: 7 × 8 taken as 54 in step 2"
        );
        let f = TypedFailure { summary: " ".into(), ..f };
        assert_eq!(failure_note(&f), "Earlier attempt failed: arithmetic error in algebraic approach: no summary");
    }

    fn cand(id: u32, score: Option<f64>, explored: bool, approach: Option<Approach>) -> BacktrackCandidate<u32> {
        BacktrackCandidate { id, score, explored, approach }
    }

    #[test]
    fn backtracking_picks_the_best_unexplored_sibling_of_another_approach() {
        use Approach::*;
        let cands = [
            cand(1, Some(0.9), true, Some(Geometric)),  // explored: never
            cand(2, Some(0.8), false, Some(Algebraic)), // the failed approach
            cand(3, Some(0.6), false, Some(Casework)),
            cand(4, Some(0.7), false, Some(Numeric)),
            cand(5, None, false, Some(Geometric)),
        ];
        assert_eq!(pick_backtrack_target(&cands, Some(Algebraic)), Some(4), "best of another approach");
        assert_eq!(pick_backtrack_target(&cands, Some(Numeric)), Some(2));
        assert_eq!(pick_backtrack_target(&cands, None), Some(2), "no failed approach: the best unexplored");
        // Only the failed approach is left: take it rather than nothing.
        let same = [cand(1, Some(0.2), false, Some(Algebraic)), cand(2, Some(0.5), false, Some(Algebraic))];
        assert_eq!(pick_backtrack_target(&same, Some(Algebraic)), Some(2));
        // Everything explored, or nothing at all.
        assert_eq!(pick_backtrack_target(&[cand(1, Some(1.0), true, None)], None), None);
        assert_eq!(pick_backtrack_target::<u32>(&[], Some(Algebraic)), None);
    }

    #[test]
    fn backtracking_is_stable_on_ties_and_ranks_unscored_last() {
        use Approach::*;
        let tied = [cand(7, Some(0.5), false, Some(Casework)), cand(3, Some(0.5), false, Some(Numeric))];
        assert_eq!(pick_backtrack_target(&tied, Some(Algebraic)), Some(7));
        let unscored =
            [cand(1, None, false, None), cand(2, Some(f64::NAN), false, None), cand(3, Some(-0.2), false, None)];
        assert_eq!(pick_backtrack_target(&unscored, Some(Algebraic)), Some(3), "a negative total still beats unscored");
        let none_scored = [cand(1, None, false, None), cand(2, None, false, None)];
        assert_eq!(pick_backtrack_target(&none_scored, None), Some(1));
        // An unknown approach counts as different from the failed one.
        let mixed = [cand(1, Some(0.9), false, Some(Algebraic)), cand(2, Some(0.1), false, None)];
        assert_eq!(pick_backtrack_target(&mixed, Some(Algebraic)), Some(2));
    }
}
