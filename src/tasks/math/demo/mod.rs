//! `math-demo`: 42 problems the project wrote (original, not from MATH), six in each
//! of MATH's seven subjects, levels 1-5, with answers in LaTeX: integers, fractions,
//! radicals, intervals, sets, ordered pairs and expressions. Each has a worked
//! solution (one step a line), the arithmetic step a calculator can do, and the typed
//! mistakes a student (or the simulated model) makes on it: which step goes wrong, how
//! the wrong step reads, and the wrong answer it leads to.

mod problems;

pub use problems::PROBLEMS;

use std::collections::BTreeMap;

use super::Item;

/// A kind of mistake, named the same way in feedback and reflections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MistakeKind {
    Arithmetic,
    Sign,
    OffByOne,
    MissedCase,
    WrongFormula,
}

impl MistakeKind {
    pub const ALL: [MistakeKind; 5] = [
        MistakeKind::Arithmetic,
        MistakeKind::Sign,
        MistakeKind::OffByOne,
        MistakeKind::MissedCase,
        MistakeKind::WrongFormula,
    ];

    /// The words feedback and reflections name the kind with.
    pub fn label(self) -> &'static str {
        match self {
            MistakeKind::Arithmetic => "arithmetic slip",
            MistakeKind::Sign => "sign error",
            MistakeKind::OffByOne => "off-by-one count",
            MistakeKind::MissedCase => "missed case",
            MistakeKind::WrongFormula => "wrong formula",
        }
    }

    /// The kinds a text names (by their labels or close variants).
    pub fn named_in(text: &str) -> Vec<MistakeKind> {
        let t = text.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
        MistakeKind::ALL
            .into_iter()
            .filter(|k| match k {
                MistakeKind::Arithmetic => has(&["arithmetic"]),
                MistakeKind::Sign => has(&["sign error", "wrong sign", "sign mistake", "the sign"]),
                MistakeKind::OffByOne => has(&["off-by-one", "off by one"]),
                MistakeKind::MissedCase => has(&["missed case", "missed a case", "missing case", "a case i missed"]),
                MistakeKind::WrongFormula => has(&["wrong formula", "wrong rule", "wrong method"]),
            })
            .collect()
    }
}

/// The step of a solution a calculator does: its index, the expression (in the syntax
/// every calculator tool reads: numbers, `+ - * / ^`, parentheses) and its exact value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calc {
    pub step: usize,
    pub expr: &'static str,
    pub value: &'static str,
}

/// One typed mistake: the solution is right up to step `step`, which reads `text`
/// instead, and the answer becomes `answer`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mistake {
    pub kind: MistakeKind,
    pub step: usize,
    pub text: &'static str,
    pub answer: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DemoProblem {
    pub subject: &'static str,
    pub level: u8,
    pub problem: &'static str,
    pub answer: &'static str,
    pub steps: &'static [&'static str],
    pub calc: Option<Calc>,
    pub mistakes: &'static [Mistake],
}

impl DemoProblem {
    pub fn item(&self) -> Item {
        let mut facets = BTreeMap::new();
        facets.insert("subject".to_string(), self.subject.to_string());
        facets.insert("level".to_string(), self.level.to_string());
        Item { input: self.problem.to_string(), gold: self.answer.to_string(), facets }
    }
}

/// The problems as task items.
pub fn items() -> Vec<Item> {
    PROBLEMS.iter().map(DemoProblem::item).collect()
}

/// The problem whose text is `text`, if it is one of these.
pub fn find(text: &str) -> Option<&'static DemoProblem> {
    let text = text.trim();
    PROBLEMS.iter().find(|p| p.problem == text)
}

/// How many passes over [`PROBLEMS`] `--range` reaches: index `i` is problem
/// `pass_order(i / n)[i % n]` of pass `i / n` (n = 42), so a long sequence (`--range
/// 0..100`, the memory study) meets each problem again in a new order.
pub const PASSES: usize = 100;

/// Seed of the passes' shuffles (fixed: index `i` means the same problem in every build).
const PASS_SEED: u64 = 0x005E_ED0F_9A55;

/// The order of the problems in pass `pass`: the list's own order in pass 0, a seeded
/// shuffle (Fisher–Yates on splitmix64) in each later pass.
pub fn pass_order(pass: usize) -> Vec<usize> {
    let n = PROBLEMS.len();
    let mut order: Vec<usize> = (0..n).collect();
    if pass == 0 {
        return order;
    }
    let mut state = PASS_SEED ^ (pass as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// Where index `index` of the extended list points: `(problem in PROBLEMS, pass)`, or
/// None past the last pass.
pub fn at_index(index: usize) -> Option<(usize, usize)> {
    let n = PROBLEMS.len();
    let pass = index / n;
    if pass >= PASSES {
        return None;
    }
    Some((pass_order(pass)[index % n], pass))
}
