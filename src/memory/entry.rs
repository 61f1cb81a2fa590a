//! One memory entry: a lesson (an insight, a failure to avoid, or a strategy that worked)
//! with the evidence for it (confidence, hits, misses, critique signals, the problems it
//! came from) and its earlier versions.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// An entry's id, unique within its memory and never reused after a removal.
pub type EntryId = u64;

/// What kind of lesson an entry is. Only entries of the same category merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Something learnt about a kind of problem.
    Insight,
    /// A mistake to avoid (typed failures from backtracking end up here).
    Failure,
    /// A strategy that solved a problem.
    Success,
}

impl Category {
    pub const ALL: [Category; 3] = [Category::Insight, Category::Failure, Category::Success];

    pub fn name(self) -> &'static str {
        match self {
            Category::Insight => "insight",
            Category::Failure => "failure",
            Category::Success => "success",
        }
    }

    /// The category named `name` (`insight`, `failure`, `success`).
    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an entry's outcome was checked against: the task's gold answer (the checker), or
/// only the model's own validation of its attempt, which may be wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The outcome was checked against the gold answer.
    Gold,
    /// The outcome is the model's own validation, not checked against a gold answer.
    SelfValidated,
}

impl Evidence {
    /// The word `memory list` and the memory pane show.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Gold => "gold",
            Evidence::SelfValidated => "self",
        }
    }

    /// The evidence of an entry that was `old` and is added again with `new`: gold only
    /// when every outcome behind it was checked; self-validated as soon as one was not;
    /// unknown (an entry from before evidence was kept) otherwise.
    pub fn combine(old: Option<Evidence>, new: Option<Evidence>) -> Option<Evidence> {
        match (old, new) {
            (Some(Evidence::SelfValidated), _) | (_, Some(Evidence::SelfValidated)) => Some(Evidence::SelfValidated),
            (Some(Evidence::Gold), Some(Evidence::Gold)) => Some(Evidence::Gold),
            _ => None,
        }
    }
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An earlier text of an entry: what it said while it had `version`, and when (the
/// memory's logical clock) it was replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastVersion {
    pub version: u32,
    pub content: String,
    pub replaced_at: u64,
}

/// One lesson in the memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: EntryId,
    pub content: String,
    pub category: Category,
    /// The approach the lesson is about ("algebraic", "casework", ...), lower case.
    pub approach: String,
    /// In [0, 1]; starts at [`super::MemoryParams::initial_confidence`].
    pub confidence: f64,
    /// Times the entry was confirmed: added again (as a duplicate or a merge) or used
    /// on a problem that was solved.
    pub hits: u32,
    /// Times the entry was used on a problem that was not solved.
    pub misses: u32,
    /// The last critique signals about the entry, oldest first (at most
    /// [`super::MemoryParams::max_signals`]); when full, the entry asks for a rewrite.
    pub signals: VecDeque<String>,
    /// The problems the entry came from, oldest first, without repeats (capped; the
    /// oldest are dropped first).
    pub sources: Vec<String>,
    /// Starts at 1; each rewrite or edit of the text adds one.
    pub version: u32,
    /// The texts it had before, oldest first (capped; the oldest are dropped first).
    pub history: Vec<PastVersion>,
    /// A pinned entry is never retired by consolidation nor absorbed into another
    /// entry, and merges do not replace its text.
    pub pinned: bool,
    /// The memory's logical clock when the entry was inserted and last changed (a
    /// counter of applied changes, never a wall-clock time, so replays compare equal).
    pub created: u64,
    pub updated: u64,
    /// What the outcomes behind the entry were checked against (see [`Evidence::combine`]);
    /// absent for entries written before evidence was kept, and for a person's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
}

impl Entry {
    /// The first line of the content (for one-line listings).
    pub fn headline(&self) -> &str {
        self.content.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
    }

    /// Whether the entry holds a full set of critique signals and should be rewritten.
    pub fn is_full_of_signals(&self, max_signals: usize) -> bool {
        max_signals > 0 && self.signals.len() >= max_signals
    }
}
