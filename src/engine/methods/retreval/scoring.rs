//! Step 3 of ReTreVal: scoring a node. A local score (the model's self-assessment of
//! the node's full trace, 0–10) and a cross score (pairwise critique of the node
//! against its siblings) combine as
//!
//! `total = w_local·local + w_cross·cross − w_skeptic·(1 − reliability)`
//!
//! where `reliability` is the node's approach type's exponential average kept in the
//! memory store; an approach the memory has never seen (`None`) gets no penalty. When
//! there is no cross score — the `no_cross` ablation, or a node without siblings —
//! the local score takes the whole of both weights, so totals stay on one scale.
//! Local and cross are on 0–1 (the 0–10 replies divided by 10).
//!
//! The approach type comes from a classifier prompt over a fixed list, with a keyword
//! fallback from the trace text when the reply names none.

use serde::{Deserialize, Serialize};

use crate::engine::task::Task;
use crate::protocol::{Prompt, Purpose};

use super::{bounded, clip, field, prompt, read_rating, tokens, Token, MAX_TRACE_CHARS};

/// The score's weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub local: f64,
    pub cross: f64,
    /// The skepticism penalty's weight on `1 − reliability`.
    pub skeptic: f64,
}

impl Default for Weights {
    /// The paper's 0.6 local, 0.4 cross, 0.4 skepticism.
    fn default() -> Self {
        Weights { local: 0.6, cross: 0.4, skeptic: 0.4 }
    }
}

/// A node's score, as the scores pane shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    /// The self-assessment, 0–1.
    pub local: f64,
    /// The cross critique, 0–1; `None` without one (its weight went to `local`).
    pub cross: Option<f64>,
    /// The skepticism penalty subtracted (0 for an approach never seen).
    pub penalty: f64,
    pub total: f64,
}

/// `x` in 0..=1, NaN as 0.
fn unit(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

impl Score {
    /// Combine a local score, a cross score (if any) and the approach's reliability
    /// (if the memory has seen it). Inputs are clamped to 0–1 (NaN counts as 0).
    pub fn combine(local: f64, cross: Option<f64>, reliability: Option<f64>, w: Weights) -> Score {
        let local = unit(local);
        let cross = cross.map(unit);
        let penalty = reliability.map_or(0.0, |r| w.skeptic * (1.0 - unit(r)));
        let gained = match cross {
            Some(c) => w.local * local + w.cross * c,
            None => (w.local + w.cross) * local,
        };
        Score { local, cross, penalty, total: gained - penalty }
    }

    /// The node metrics the panes render: `local`, `cross` (when there is one), `penalty`, `total`.
    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        let mut m = vec![("local", self.local)];
        if let Some(c) = self.cross {
            m.push(("cross", c));
        }
        m.push(("penalty", self.penalty));
        m.push(("total", self.total));
        m
    }
}

/// What a local self-assessment reply said.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalReading {
    /// The score on 0–1 (the reply's 0–10 divided by 10).
    pub score: f64,
    /// Set when the reply's number was outside 0–10 and clamped.
    pub note: Option<String>,
}

/// Ask the model to assess `trace`, its full reasoning so far on problem `x`, with a
/// score 0–10 (purpose `value`, context `"retreval": "local"` and `trace`).
pub fn local_prompt(task: &dyn Task, x: &str, trace: &str) -> Prompt {
    let trace = clip(trace.trim(), MAX_TRACE_CHARS);
    let text = format!(
        "Problem:\n{}\n\nHere is a reasoning attempt at it so far:\n\n{trace}\n\n\
Assess this attempt critically: is every step correct, does it make progress toward \
the answer, and is anything missing? In a few sentences say what is right and what is \
doubtful, then end with a line `Score: N` where N is a whole number from 0 (wrong or \
useless) to 10 (certainly correct and complete).",
        clip(x.trim(), MAX_TRACE_CHARS)
    );
    let mut p = prompt(task, x, Purpose::Value, "local", text, serde_json::json!({ "trace": trace }));
    p.max_tokens = Some(400);
    p
}

/// Read a local assessment: `Score: 7`, `**Score:** 7/10`, `7 out of 10`, `**7**`,
/// `seven`, or a reply that is only a number. Clamped to 0–10 with a note; `None`
/// when no number can be read.
pub fn parse_local_score(reply: &str) -> Option<LocalReading> {
    let said = read_rating(reply, &["score", "rating", "grade"], 10.0)?;
    let taken = said.clamp(0.0, 10.0);
    let note = (said != taken).then(|| format!("the model scored {said} of 10; taken as {taken}"));
    Some(LocalReading { score: taken / 10.0, note })
}

/// Most siblings one cross critique compares against; more are left out of the prompt.
pub const MAX_SIBLINGS: usize = 8;

/// The most of each sibling's trace shown in a cross-critique prompt (characters).
const MAX_SIBLING_CHARS: usize = 4_000;

/// What a cross critique reply said.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossCritique {
    /// Per sibling compared (in the prompt's order): the node's score against it on
    /// 0–1 (0.5 as good as the sibling), `None` where the reply gave none.
    pub scores: Vec<Option<f64>>,
    /// The critique's text (clipped), for the node's critique history.
    pub critique: String,
}

impl CrossCritique {
    /// The cross score: the mean of the comparisons read, `None` if none was.
    pub fn cross(&self) -> Option<f64> {
        let read: Vec<f64> = self.scores.iter().flatten().copied().collect();
        (!read.is_empty()).then(|| read.iter().sum::<f64>() / read.len() as f64)
    }
}

/// Ask the model to critique `trace` (the node's full trace on problem `x`) against
/// each of its siblings' traces (at most [`MAX_SIBLINGS`]; more are left out): a line
/// `Versus K: N` per sibling, N from 0 (this attempt is clearly worse) through 5 (as
/// good) to 10 (clearly better), then `Critique: ...`. Purpose `vote` (a comparison of
/// states), context `"retreval": "cross"`, `trace` and `siblings`.
pub fn cross_prompt(task: &dyn Task, x: &str, trace: &str, siblings: &[String]) -> Prompt {
    let trace = clip(trace.trim(), MAX_TRACE_CHARS);
    let siblings: Vec<String> = siblings.iter().take(MAX_SIBLINGS).map(|s| clip(s.trim(), MAX_SIBLING_CHARS)).collect();
    let listed: Vec<String> =
        siblings.iter().enumerate().map(|(i, s)| format!("Other attempt {}:\n{s}", i + 1)).collect();
    let lines: Vec<String> = (1..=siblings.len()).map(|k| format!("Versus {k}: N")).collect();
    let text = format!(
        "Problem:\n{}\n\nThe attempt to judge:\n{trace}\n\n{}\n\n\
Compare the attempt to judge with each other attempt in turn: which reasoning is more \
likely to reach the correct answer, and why? Write one line per other attempt, exactly:\n{}\n\
where N is a whole number from 0 (the attempt to judge is clearly worse) through 5 (as \
good) to 10 (clearly better). Then write `Critique:` followed by the main weakness of \
the attempt to judge that the comparison shows.",
        clip(x.trim(), MAX_TRACE_CHARS),
        listed.join("\n\n"),
        lines.join("\n"),
    );
    let mut p =
        prompt(task, x, Purpose::Vote, "cross", text, serde_json::json!({ "trace": trace, "siblings": siblings }));
    p.max_tokens = Some(600);
    p
}

/// Read a cross critique of a node against `siblings` siblings: lines that start with
/// a comparison label, like `Versus 2: 7`, `**vs. attempt 2:** 7/10`, `Comparison 1 -
/// six` (scores clamped to 0–10; numbers outside 1..=siblings ignored; the last line
/// for a sibling wins), wherever they are; and the critique text: from `Critique:`
/// on — or, without one, the whole reply — less its comparison lines.
pub fn parse_cross(reply: &str, siblings: usize) -> CrossCritique {
    let reply = bounded(reply);
    let siblings = siblings.min(MAX_SIBLINGS);
    let mut scores = vec![None; siblings];
    // Lines that are not comparisons: before the `Critique:` line, and from it on.
    let mut rest = Vec::new();
    let mut critique: Option<Vec<&str>> = None;
    const LABELS: [&str; 7] = ["versus", "vs", "comparison", "attempt", "sibling", "against", "other"];
    for line in reply.lines() {
        if critique.is_none() {
            if let Some(text) = field(line, &["critique"]) {
                critique = Some(vec![text]);
                continue;
            }
        }
        // A comparison line starts with its label (so prose that mentions an attempt is text).
        let toks = tokens(line);
        let comparison = match toks.first() {
            Some(Token::Word(w)) if LABELS.contains(&w.as_str()) => {
                let mut nums = toks[1..].iter().filter_map(|t| match t {
                    Token::Number(n, _) => Some(*n),
                    _ => None,
                });
                match (nums.next(), nums.next()) {
                    (Some(k), Some(score)) if k.fract() == 0.0 && k >= 1.0 && k <= siblings as f64 => {
                        Some((k as usize, score))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match (comparison, critique.as_mut()) {
            (Some((k, score)), _) => scores[k - 1] = Some(score.clamp(0.0, 10.0) / 10.0),
            (None, Some(c)) => c.push(line),
            (None, None) => rest.push(line),
        }
    }
    let critique = critique.unwrap_or(rest).join("\n").trim().to_string();
    CrossCritique { scores, critique: clip(&critique, MAX_TRACE_CHARS) }
}

/// A node's high-level approach type, for the skepticism penalty and the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approach {
    Algebraic,
    Casework,
    Geometric,
    Numeric,
    Combinatorial,
    Other,
}

impl Approach {
    /// Every approach type, in the order prompts list them.
    pub const ALL: [Approach; 6] = [
        Approach::Algebraic,
        Approach::Casework,
        Approach::Geometric,
        Approach::Numeric,
        Approach::Combinatorial,
        Approach::Other,
    ];

    /// Its name (as serialised): `algebraic`, `casework`, ...
    pub fn name(self) -> &'static str {
        match self {
            Approach::Algebraic => "algebraic",
            Approach::Casework => "casework",
            Approach::Geometric => "geometric",
            Approach::Numeric => "numeric",
            Approach::Combinatorial => "combinatorial",
            Approach::Other => "other",
        }
    }

    /// The approach a word names, if it names one (`algebra`, `combinatorics`, `numerical`, ...).
    pub fn from_word(word: &str) -> Option<Approach> {
        Some(match word.to_lowercase().as_str() {
            "algebraic" | "algebra" | "algebraically" => Approach::Algebraic,
            "casework" | "case-work" | "case_work" | "case-based" => Approach::Casework,
            "geometric" | "geometry" | "geometrical" | "geometrically" => Approach::Geometric,
            "numeric" | "numerical" | "numerically" | "computational" | "arithmetic" => Approach::Numeric,
            "combinatorial" | "combinatorics" | "counting" => Approach::Combinatorial,
            "other" => Approach::Other,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Approach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Ask the model which approach type `trace` takes (purpose `value`, context
/// `"retreval": "approach"`, `trace` and `approaches`, the list's names). The reply
/// should end with `Approach: NAME`.
pub fn approach_prompt(task: &dyn Task, x: &str, trace: &str) -> Prompt {
    let trace = clip(trace.trim(), MAX_TRACE_CHARS);
    let names: Vec<&str> = Approach::ALL.iter().map(|a| a.name()).collect();
    let text = format!(
        "Problem:\n{}\n\nA reasoning attempt at it:\n{trace}\n\n\
Which high-level approach does this attempt take? Choose exactly one of: {}.\n\
Answer with one line `Approach: NAME`.",
        clip(x.trim(), MAX_TRACE_CHARS),
        names.join(", ")
    );
    let mut p =
        prompt(task, x, Purpose::Value, "approach", text, serde_json::json!({ "trace": trace, "approaches": names }));
    p.max_tokens = Some(50);
    p
}

/// Read an approach classification: the first approach word after `Approach:` on the
/// last line that has one, else the reply's only approach named (`Algebraic.`,
/// `**combinatorics**`); `None` if it names none or several without a label.
pub fn parse_approach(reply: &str) -> Option<Approach> {
    let reply = bounded(reply);
    let named = |text: &str| -> Vec<Approach> {
        tokens(text)
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Approach::from_word(w),
                _ => None,
            })
            .collect()
    };
    for line in reply.lines().rev() {
        let toks = tokens(line);
        if let Some(at) = toks.iter().rposition(|t| matches!(t, Token::Word(w) if w == "approach")) {
            let after = toks[at + 1..].iter().find_map(|t| match t {
                Token::Word(w) => Approach::from_word(w),
                _ => None,
            });
            if after.is_some() {
                return after;
            }
        }
    }
    let mut all = named(reply);
    all.sort();
    all.dedup();
    match all.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Word stems that suggest each approach (matched at the start of a word).
const KEYWORDS: [(Approach, &[&str]); 5] = [
    (
        Approach::Algebraic,
        &[
            "equation",
            "substitut",
            "factor",
            "polynomial",
            "quadratic",
            "variable",
            "expand",
            "simplif",
            "solve",
            "isolat",
            "coefficient",
            "algebra",
        ],
    ),
    (Approach::Casework, &["case", "otherwise", "suppose", "parity", "subcase", "either"]),
    (
        Approach::Geometric,
        &[
            "triangle",
            "circle",
            "angle",
            "area",
            "perimeter",
            "radius",
            "coordinate",
            "polygon",
            "diagonal",
            "tangent",
            "geometr",
            "pythag",
        ],
    ),
    (
        Approach::Numeric,
        &[
            "calculat",
            "comput",
            "approximat",
            "decimal",
            "multiply",
            "divide",
            "plug",
            "evaluat",
            "numer",
            "arithmetic",
            "estimat",
        ],
    ),
    (
        Approach::Combinatorial,
        &[
            "choose",
            "permutation",
            "combination",
            "arrangement",
            "ways",
            "binomial",
            "factorial",
            "count",
            "combinator",
            "pigeonhole",
        ],
    ),
];

/// The approach a trace's words suggest, when the classifier's reply names none: the
/// type whose keywords occur most often (ties go to the earlier in [`Approach::ALL`]),
/// `other` when none occurs.
pub fn approach_from_trace(trace: &str) -> Approach {
    let mut counts = [0usize; 5];
    for token in tokens(bounded(trace)) {
        let Token::Word(word) = token else { continue };
        for (i, (_, stems)) in KEYWORDS.iter().enumerate() {
            if stems.iter().any(|s| word.starts_with(s)) {
                counts[i] += 1;
            }
        }
    }
    let best = counts.iter().enumerate().fold(None, |best: Option<(usize, usize)>, (i, &n)| match best {
        Some((_, m)) if m >= n => best,
        _ if n > 0 => Some((i, n)),
        _ => best,
    });
    best.map_or(Approach::Other, |(i, _)| KEYWORDS[i].0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn the_score_formula_is_the_papers() {
        // 0.6·0.8 + 0.4·0.5 − 0.4·(1 − 0.3) = 0.48 + 0.2 − 0.28 = 0.40
        let s = Score::combine(0.8, Some(0.5), Some(0.3), Weights::default());
        assert!(close(s.penalty, 0.28), "{s:?}");
        assert!(close(s.total, 0.40), "{s:?}");
        assert_eq!((s.local, s.cross), (0.8, Some(0.5)));
        // An approach never seen: no penalty.
        let s = Score::combine(0.8, Some(0.5), None, Weights::default());
        assert_eq!(s.penalty, 0.0);
        assert!(close(s.total, 0.68));
        // Full reliability: no penalty either; zero reliability: the whole skeptic weight.
        assert_eq!(Score::combine(0.8, Some(0.5), Some(1.0), Weights::default()).penalty, 0.0);
        assert!(close(Score::combine(0.8, Some(0.5), Some(0.0), Weights::default()).penalty, 0.4));
    }

    #[test]
    fn without_a_cross_score_the_local_score_takes_both_weights() {
        let s = Score::combine(0.8, None, Some(0.3), Weights::default());
        assert!(close(s.total, 0.8 - 0.28), "{s:?}");
        assert_eq!(s.cross, None);
        let names: Vec<&str> = s.metrics().iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ["local", "penalty", "total"]);
        let names: Vec<&str> =
            Score::combine(0.1, Some(0.2), None, Weights::default()).metrics().iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ["local", "cross", "penalty", "total"]);
    }

    #[test]
    fn score_inputs_out_of_range_are_clamped() {
        let s = Score::combine(f64::NAN, Some(7.0), Some(-3.0), Weights::default());
        assert_eq!((s.local, s.cross), (0.0, Some(1.0)));
        assert!(close(s.penalty, 0.4));
        assert!(close(s.total, 0.0));
        let w = Weights { local: 0.5, cross: 0.5, skeptic: 0.0 };
        assert!(close(Score::combine(1.0, Some(0.0), Some(0.0), w).total, 0.5));
    }

    #[test]
    fn local_scores_are_read_tolerantly() {
        for (reply, score) in [
            ("The algebra checks.\nScore: 7", 0.7),
            ("**Score:** 8/10", 0.8),
            ("I give it 6 out of 10.", 0.6),
            ("9/10", 0.9),
            ("**4**", 0.4),
            ("Score: seven", 0.7),
            ("10", 1.0),
            ("Score: 0", 0.0),
            ("Step 2 is wrong (it uses 3 instead of 4).\nScore: 2", 0.2),
            ("Score: 7.5", 0.75),
        ] {
            let r = parse_local_score(reply).unwrap_or_else(|| panic!("{reply:?}"));
            assert!(close(r.score, score) && r.note.is_none(), "{reply:?}: {r:?}");
        }
        let r = parse_local_score("Score: 12").unwrap();
        assert_eq!((r.score, r.note.as_deref()), (1.0, Some("the model scored 12 of 10; taken as 10")));
        assert_eq!(parse_local_score("Score: -1").unwrap().score, 0.0);
        for reply in ["", "Looks fine.", "Score: good", "between 6 and 8"] {
            assert_eq!(parse_local_score(reply), None, "{reply:?}");
        }
    }

    #[test]
    fn cross_critiques_give_a_score_per_sibling_and_the_critique() {
        let reply =
            "Versus 1: 7\n**vs. attempt 2:** 3/10\nComparison 3 - six\nCritique: It never checks\nthe boundary case.";
        let c = parse_cross(reply, 3);
        assert_eq!(c.scores, [Some(0.7), Some(0.3), Some(0.6)]);
        assert_eq!(c.critique, "It never checks\nthe boundary case.");
        assert!(close(c.cross().unwrap(), (0.7 + 0.3 + 0.6) / 3.0));
        // A sibling without a line is None; the mean is over those read.
        let c = parse_cross("Versus 2: 10\nVersus 9: 0\nThe other is sloppier.", 3);
        assert_eq!(c.scores, [None, Some(1.0), None]);
        assert_eq!(c.cross(), Some(1.0));
        assert_eq!(c.critique, "Versus 9: 0\nThe other is sloppier.", "a line for a sibling that is not there is text");
        // Scores outside 0-10 are clamped; the last line for a sibling wins.
        assert_eq!(parse_cross("Versus 1: 15\nVersus 2: 4\nVersus 2: 5", 2).scores, [Some(1.0), Some(0.5)]);
        // Nothing readable.
        let c = parse_cross("I cannot compare these.", 2);
        assert_eq!((c.cross(), &c.scores, c.critique.as_str()), (None, &vec![None, None], "I cannot compare these."));
        assert_eq!(parse_cross("Versus 1: 7", 0).scores, Vec::<Option<f64>>::new());
        // The critique first, the scores after it; prose mentioning an attempt is not a score.
        let c = parse_cross("Critique: weaker than attempt 2 in 3 places.\nVersus 1: 4\nVersus 2: 2\nOverall weak.", 2);
        assert_eq!(c.scores, [Some(0.4), Some(0.2)]);
        assert_eq!(c.critique, "weaker than attempt 2 in 3 places.\nOverall weak.");
        let c = parse_cross("It beats attempt 1 by 5 steps.\nVersus 1: 6", 1);
        assert_eq!((c.scores, c.critique.as_str()), (vec![Some(0.6)], "It beats attempt 1 by 5 steps."));
    }

    #[test]
    fn the_cross_prompt_lists_each_sibling_and_asks_one_line_each() {
        let task = crate::tasks::game24::Game24::builtin();
        let many: Vec<String> = (0..12).map(|i| format!("sibling trace {i}")).collect();
        let p = cross_prompt(&task, "4 5 6 10", "my trace", &many);
        assert_eq!((p.purpose, &p.context["retreval"]), (Purpose::Vote, &serde_json::json!("cross")));
        assert_eq!(p.context["siblings"].as_array().map(Vec::len), Some(MAX_SIBLINGS));
        let text = &p.messages[0].content;
        assert!(text.contains("Other attempt 8:\nsibling trace 7") && !text.contains("sibling trace 8"));
        assert!(text.contains("Versus 1: N\n") && text.contains("Versus 8: N\n"));
        let local = local_prompt(&task, "4 5 6 10", "my trace");
        assert_eq!(
            (local.purpose, &local.context["retreval"], &local.context["trace"]),
            (Purpose::Value, &serde_json::json!("local"), &serde_json::json!("my trace"))
        );
        let long = "x".repeat(MAX_TRACE_CHARS * 2);
        assert!(local_prompt(&task, "4 5 6 10", &long).messages[0].content.chars().count() < MAX_TRACE_CHARS + 1000);
    }

    #[test]
    fn approach_classifications_are_read_from_the_label_or_a_lone_name() {
        for (reply, approach) in [
            ("Approach: algebraic", Some(Approach::Algebraic)),
            ("**Approach:** Casework", Some(Approach::Casework)),
            ("It sets up coordinates.\nApproach: geometry", Some(Approach::Geometric)),
            ("Combinatorics.", Some(Approach::Combinatorial)),
            ("numerical", Some(Approach::Numeric)),
            ("Approach: other", Some(Approach::Other)),
            // The label beats a different name in the reasoning.
            ("Not algebraic: it counts cases.\nApproach: combinatorial", Some(Approach::Combinatorial)),
            ("algebraic or geometric", None),
            ("Approach: unclear", None),
            ("", None),
        ] {
            assert_eq!(parse_approach(reply), approach, "{reply:?}");
        }
        assert_eq!(serde_json::to_string(&Approach::Casework).unwrap(), "\"casework\"");
        assert_eq!(Approach::ALL.map(|a| Approach::from_word(a.name())), Approach::ALL.map(Some));
    }

    #[test]
    fn the_keyword_fallback_reads_the_trace() {
        for (trace, approach) in [
            (
                "Let x be the width. The equation 2x + 3 = 11; substituting and solving gives x = 4.",
                Approach::Algebraic,
            ),
            ("Case 1: n is even. Case 2: n is odd; otherwise ...", Approach::Casework),
            ("The triangle has a right angle, so its area is half the product of the legs.", Approach::Geometric),
            ("Compute 17 * 23 = 391, then divide by 7 and round the decimal.", Approach::Numeric),
            ("Choose 3 of 8: the number of ways is a binomial coefficient, 56 ways.", Approach::Combinatorial),
            ("The answer is 12.", Approach::Other),
            ("", Approach::Other),
        ] {
            assert_eq!(approach_from_trace(trace), approach, "{trace:?}");
        }
        // A tie goes to the earlier type in the list.
        assert_eq!(approach_from_trace("equation triangle"), Approach::Algebraic);
        let p = approach_prompt(&crate::tasks::game24::Game24::builtin(), "4 5 6 10", "t");
        assert_eq!(p.context["approaches"][5], "other");
    }
}
