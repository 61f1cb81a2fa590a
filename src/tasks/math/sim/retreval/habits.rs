//! The simulated model's habits in ReTreVal: each approach's typical mistake and its
//! rate, how a mistake maps to a failure cause, and which lessons in a prompt warn it off
//! which mistakes.

use super::Context;
use crate::engine::methods::retreval::{Approach, FailureCause};
use crate::engine::rng::SplitMix64;
use crate::tasks::math::demo::MistakeKind;

/// Each approach's typical mistake.
pub const WEAKNESS: [(Approach, MistakeKind); 5] = [
    (Approach::Algebraic, MistakeKind::Sign),
    (Approach::Casework, MistakeKind::MissedCase),
    (Approach::Geometric, MistakeKind::WrongFormula),
    (Approach::Numeric, MistakeKind::Arithmetic),
    (Approach::Combinatorial, MistakeKind::OffByOne),
];
/// The range an approach's weakness rate is drawn from (per seed).
pub const RATE_MIN: f64 = 0.25;
pub const RATE_MAX: f64 = 0.5;
/// Share of the weakness rate when the problem lists no mistake of the typical kind.
pub const FALLBACK: f64 = 0.25;
/// Share of the level rate (`ERROR_BY_LEVEL`) for a background mistake of any kind.
pub const BACKGROUND: f64 = 0.15;
/// Factor on the rate of a mistake a lesson or the history warns of.
pub const LESSON: f64 = 0.2;
/// Chance a refinement does not fix a mistake the critique names.
pub const REFINE_MISS: f64 = 0.1;
/// Chance a refinement whose critique names no mistake keeps the attempt's mistake.
pub const ANCHOR: f64 = 0.6;
/// Chance a level 1–2 problem's complexity is over-estimated.
pub const OVERESTIMATE: f64 = 0.35;
/// Chance a level 3–5 problem's complexity is off by one (either way, evenly).
pub const MISESTIMATE: f64 = 0.3;
/// Chance a local self-assessment of a right attempt is doubtful (6).
pub(super) const DOUBT: f64 = 0.1;
/// Chance an answer nobody listed is called wrong in validation.
pub(super) const OTHER_CAUGHT: f64 = 0.5;

/// How each kind of mistake is filed as a failure cause (one to one).
pub const CAUSES: [(MistakeKind, FailureCause); 5] = [
    (MistakeKind::Arithmetic, FailureCause::ArithmeticError),
    (MistakeKind::Sign, FailureCause::LogicError),
    (MistakeKind::OffByOne, FailureCause::OffByOne),
    (MistakeKind::MissedCase, FailureCause::IncompleteReasoning),
    (MistakeKind::WrongFormula, FailureCause::WrongConstraint),
];

/// The failure cause a kind of mistake is filed under.
pub fn cause_of(kind: MistakeKind) -> FailureCause {
    CAUSES.iter().find(|(k, _)| *k == kind).map_or(FailureCause::Other, |(_, c)| *c)
}

/// The kind of mistake a failure cause stands for (`missing_step` and `other`: none).
pub fn kind_of(cause: FailureCause) -> Option<MistakeKind> {
    CAUSES.iter().find(|(_, c)| *c == cause).map(|(k, _)| *k)
}

/// An approach's typical mistake (`other`: none).
pub fn typical(approach: Approach) -> Option<MistakeKind> {
    WEAKNESS.iter().find(|(a, _)| *a == approach).map(|(_, k)| *k)
}

/// An approach's weakness rate for a seed (before `--sim-noise`): 0 for `other`.
pub fn weakness_rate(seed: u64, approach: Approach) -> f64 {
    let Some(i) = WEAKNESS.iter().position(|(a, _)| *a == approach) else { return 0.0 };
    let u = SplitMix64::from_parts(&[seed, 0x3ea4_7e55, i as u64]).next_f64();
    RATE_MIN + (RATE_MAX - RATE_MIN) * u
}

/// The kinds of mistake an approach falls into, most typical first: where a problem
/// has no pitfall of the typical kind, the approach errs the closest way it has.
pub fn habit_order(approach: Approach) -> [MistakeKind; 5] {
    use MistakeKind::{Arithmetic, MissedCase, OffByOne, Sign, WrongFormula};
    match approach {
        Approach::Algebraic => [Sign, Arithmetic, WrongFormula, MissedCase, OffByOne],
        Approach::Casework => [MissedCase, OffByOne, WrongFormula, Sign, Arithmetic],
        Approach::Geometric => [WrongFormula, Arithmetic, Sign, OffByOne, MissedCase],
        Approach::Numeric => [Arithmetic, Sign, OffByOne, WrongFormula, MissedCase],
        Approach::Combinatorial => [OffByOne, MissedCase, WrongFormula, Arithmetic, Sign],
        Approach::Other => MistakeKind::ALL,
    }
}

/// The failure causes a text names, by name or label (`off_by_one`, `off-by-one`,
/// `incomplete reasoning`), in order of first appearance.
pub fn causes_named(text: &str) -> Vec<FailureCause> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut found = Vec::new();
    for i in 0..words.len() {
        for cause in FailureCause::ALL {
            let parts: Vec<&str> = cause.name().split('_').collect();
            if words.get(i..i + parts.len()).is_some_and(|w| w == parts.as_slice()) && !found.contains(&cause) {
                found.push(cause);
            }
        }
    }
    found
}

/// Whether a text names the approach (by any of its words: `casework`, `algebra`, ...).
pub(super) fn names_approach(text: &str, approach: Approach) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_')
        .any(|w| w != "other" && Approach::from_word(w) == Some(approach))
}

/// The kinds of mistake the context's lessons and history warn of for `approach`:
/// those whose cause is named on a line that also names the approach.
pub fn warned_of(ctx: &Context, approach: Approach) -> Vec<MistakeKind> {
    let mut kinds = Vec::new();
    for lines in [&ctx.lessons, &ctx.history] {
        for line in lines.iter().flat_map(|l| l.lines()) {
            if !names_approach(line, approach) {
                continue;
            }
            for kind in causes_named(line).into_iter().filter_map(kind_of) {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
        }
    }
    kinds
}

/// The kinds a critique names: by the kind's words or by its cause.
pub(super) fn kinds_named(text: &str) -> Vec<MistakeKind> {
    let mut kinds = MistakeKind::named_in(text);
    kinds.extend(causes_named(text).into_iter().filter_map(kind_of));
    kinds.sort();
    kinds.dedup();
    kinds
}

/// The first thought of a solve: the approach and how it goes about the problem, in
/// the words `approach_from_trace` counts.
pub(super) fn intro(approach: Approach) -> &'static str {
    match approach {
        Approach::Algebraic => {
            "Approach: algebraic — write the condition as an equation in a variable, then solve it algebraically: \
             isolate, factor or substitute, and simplify."
        }
        Approach::Casework => {
            "Approach: casework — split the problem into cases and work case by case, each case separately, then \
             combine the cases, making sure no case or subcase is left out."
        }
        Approach::Geometric => {
            "Approach: geometric — read the situation geometrically: draw the figure with its coordinates, angles and \
             lengths, and use geometry (area, perimeter, triangle and circle facts)."
        }
        Approach::Numeric => {
            "Approach: numeric — compute the quantities directly: evaluate each expression numerically, calculate \
             every value and plug the numbers in."
        }
        Approach::Combinatorial => {
            "Approach: combinatorial — count the possibilities: choose, count the arrangements, permutations or \
             combinations, and count the ways once each."
        }
        Approach::Other => "Approach: other — work through the problem directly.",
    }
}

/// What to check after a failure of a cause, for summaries and rewritten lessons.
pub(super) fn check(cause: FailureCause) -> &'static str {
    match cause {
        FailureCause::ArithmeticError => "recompute every calculation, or hand it to the calculator, before using it",
        FailureCause::LogicError => "track the signs when moving terms across and when evaluating powers",
        FailureCause::IncompleteReasoning => "list every case, including the boundary ones, before adding them up",
        FailureCause::WrongConstraint => {
            "check that the formula fits the situation the problem describes before using it"
        }
        FailureCause::OffByOne => "check whether the endpoints are counted, by trying a small instance",
        FailureCause::MissingStep => "write out every step the answer depends on",
        FailureCause::Other => "recheck the final answer against every condition of the problem",
    }
}

/// `text` cut to `max` characters with `…`.
pub(super) fn short(text: &str, max: usize) -> String {
    crate::engine::methods::retreval::clip(text.trim(), max)
}

/// Whitespace removed and square brackets written round, to compare a result however
/// it was carried (a finish argument cannot hold `]`).
pub(super) fn squash(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '[' => '(',
            ']' => ')',
            c => c,
        })
        .collect()
}
