//! ReTreVal's cross-problem memory: lessons that outlive one problem (insights, failures
//! to avoid, strategies that worked), each with its evidence, plus how reliable each
//! approach type ("algebraic", "casework", ...) has been.
//!
//! The store is pure (sans-IO, like the engine): no clock, no files, no model calls.
//! [`persist`] reads and writes it, one JSON file per named memory; the `thoughtscope
//! memory` command edits those files; the ReTreVal method owns one `Memory` per run.
//!
//! # Using it from a method
//!
//! * At the start of a problem, keep `memory.clone()` as the snapshot the session
//!   records (a `Memory` serialises whole: params, entries, reliabilities, counters).
//! * Mutate it through its methods ([`Memory::add`], [`Memory::record_use`],
//!   [`Memory::add_signal`], [`Memory::apply_rewrite`], [`Memory::record_outcome`],
//!   [`Memory::consolidate`], [`Memory::edit`], [`Memory::remove`]) or, equally, by
//!   building a [`MemoryChange`] and calling [`Memory::apply`]. Every successful mutation
//!   is appended to a journal; [`Memory::take_changes`] drains it for the session file.
//! * A replay (or a fork) starts from the snapshot and applies the recorded changes in
//!   order with [`Memory::apply`]; the result equals the live memory (`==` ignores the
//!   journal), because every rule here is deterministic (ties break by id, times are a
//!   logical counter, the hash is FNV-1a, maps are ordered).
//! * A rewrite is two steps so the model call stays outside: when
//!   [`Memory::needs_rewrite`] says an entry holds three signals, send
//!   [`Memory::rewrite_request`] to a model and give its answer to
//!   [`Memory::apply_rewrite`].
//! * Retrieval for a prompt: [`Memory::retrieve`]; an overview: [`Memory::summary`];
//!   the skepticism penalty's input: [`Memory::reliability`].
//!
//! The constants are the official ReTreVal code's, as fields of [`MemoryParams`].

mod entry;
pub mod persist;
pub mod similarity;
mod store;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use entry::{Category, Entry, EntryId, Evidence, PastVersion};
pub use persist::{MemoryStore, PersistError};

/// The memory's rules and limits. Serialisable so a session header can record them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryParams {
    /// A new entry's confidence.
    pub initial_confidence: f64,
    /// How much one use on a solved (unsolved) problem raises (lowers) confidence.
    pub confidence_step: f64,
    /// Keyword Jaccard similarity at which [`Memory::add`] merges into an entry of the same category.
    pub merge_similarity: f64,
    /// Keyword Jaccard similarity at which [`Memory::consolidate`] merges two entries.
    pub consolidate_similarity: f64,
    /// [`Memory::consolidate`] retires unpinned entries whose confidence is below this.
    pub retire_below: f64,
    /// [`Memory::retrieve`] only returns entries whose confidence is above this.
    pub retrieve_above: f64,
    /// Critique signals an entry keeps; when it holds this many it asks for a rewrite.
    pub max_signals: usize,
    /// An approach's reliability starts here.
    pub reliability_initial: f64,
    /// Weight of the old reliability in the exponential average: `decay·old + (1−decay)·outcome`.
    pub reliability_decay: f64,
    /// Most entries a memory holds (adding more is an error until some are removed).
    pub max_entries: usize,
    /// Longest content, signal or source, in characters.
    pub max_content_chars: usize,
    /// Source problems kept per entry (the oldest are dropped first).
    pub max_sources: usize,
    /// Earlier versions kept per entry (the oldest are dropped first).
    pub max_history: usize,
    /// Whether [`Memory::add`] and [`Memory::consolidate`] merge lessons of different
    /// approaches. No: a lesson about one approach is not another's. Memories recorded
    /// before this rule (whose params lack the field) keep merging, so they replay exactly.
    #[serde(default = "old_rule")]
    pub merge_across_approaches: bool,
    /// The share of a problem's keywords a lesson must have (in its text or the problems
    /// it came from) for [`Memory::retrieve_for`] to give it for that problem: below it,
    /// the lesson is about something else. 0 is the rule before this one (the approach's
    /// name counted as a match), which memories recorded before it read, to replay exactly.
    #[serde(default)]
    pub relevant_share: f64,
    /// Whether added entries keep what their outcome was checked against ([`Evidence`]).
    /// Memories recorded in sessions before this rule (whose params lack the field) keep
    /// none, so they replay exactly; memory files are read with it on ([`persist`]).
    #[serde(default)]
    pub record_evidence: bool,
}

/// What a memory recorded before a rule existed did.
fn old_rule() -> bool {
    true
}

impl Default for MemoryParams {
    fn default() -> MemoryParams {
        MemoryParams {
            initial_confidence: 0.5,
            confidence_step: 0.1,
            merge_similarity: 0.6,
            consolidate_similarity: 0.7,
            retire_below: 0.2,
            retrieve_above: 0.3,
            max_signals: 3,
            reliability_initial: 0.5,
            reliability_decay: 0.8,
            max_entries: 10_000,
            max_content_chars: 4_000,
            max_sources: 64,
            max_history: 16,
            merge_across_approaches: false,
            relevant_share: 0.25,
            record_evidence: true,
        }
    }
}

/// Hard ceilings on the limits themselves, so a hand-edited file cannot ask for more.
pub const MAX_ENTRIES_CEILING: usize = 100_000;
pub const MAX_CONTENT_CEILING: usize = 65_536;
const MAX_SMALL_CEILING: usize = 1_000;

impl MemoryParams {
    /// Every parameter in range; the error names the field.
    pub fn validate(&self) -> Result<(), MemoryError> {
        let unit = [
            ("initial_confidence", self.initial_confidence),
            ("confidence_step", self.confidence_step),
            ("merge_similarity", self.merge_similarity),
            ("relevant_share", self.relevant_share),
            ("consolidate_similarity", self.consolidate_similarity),
            ("retire_below", self.retire_below),
            ("retrieve_above", self.retrieve_above),
            ("reliability_initial", self.reliability_initial),
            ("reliability_decay", self.reliability_decay),
        ];
        for (field, value) in unit {
            if !(0.0..=1.0).contains(&value) {
                return Err(MemoryError::Param(format!("{field} must be between 0 and 1, not {value}")));
            }
        }
        let counts = [
            ("max_entries", self.max_entries, MAX_ENTRIES_CEILING),
            ("max_content_chars", self.max_content_chars, MAX_CONTENT_CEILING),
            ("max_signals", self.max_signals, MAX_SMALL_CEILING),
            ("max_sources", self.max_sources, MAX_SMALL_CEILING),
            ("max_history", self.max_history, MAX_SMALL_CEILING),
        ];
        for (field, value, ceiling) in counts {
            if value == 0 || value > ceiling {
                return Err(MemoryError::Param(format!("{field} must be between 1 and {ceiling}, not {value}")));
            }
        }
        Ok(())
    }
}

/// The memory: entries in id order, approach reliabilities, and two counters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    params: MemoryParams,
    entries: Vec<Entry>,
    /// Approach type → exponential average of its outcomes (1 solved, 0 not).
    reliability: BTreeMap<String, f64>,
    /// The id the next inserted entry gets.
    next_id: EntryId,
    /// Logical clock: the number of changes applied so far.
    clock: u64,
    /// Changes applied since the last [`Memory::take_changes`]; not part of the state.
    #[serde(skip)]
    journal: Vec<MemoryChange>,
}

impl PartialEq for Memory {
    /// The state only: two memories are equal whatever their unread journals hold.
    fn eq(&self, other: &Memory) -> bool {
        self.params == other.params
            && self.entries == other.entries
            && self.reliability == other.reliability
            && self.next_id == other.next_id
            && self.clock == other.clock
    }
}

impl Default for Memory {
    fn default() -> Memory {
        Memory::empty(MemoryParams::default())
    }
}

/// One mutation of a memory, as a session records it. [`Memory::apply`] performs it;
/// applying a snapshot's recorded changes in order rebuilds the memory exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case", deny_unknown_fields)]
pub enum MemoryChange {
    /// [`Memory::add`].
    Add {
        content: String,
        category: Category,
        approach: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
        /// What the lesson's outcome was checked against (absent: not kept).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        evidence: Option<Evidence>,
    },
    /// [`Memory::record_use`].
    RecordUse { id: EntryId, success: bool },
    /// [`Memory::add_signal`].
    AddSignal { id: EntryId, signal: String },
    /// [`Memory::apply_rewrite`].
    Rewrite { id: EntryId, content: String },
    /// [`Memory::record_outcome`].
    RecordOutcome { approach: String, success: bool },
    /// [`Memory::consolidate`].
    Consolidate,
    /// [`Memory::edit`]: a person's edit (each part optional).
    Edit {
        id: EntryId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confidence: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pinned: Option<bool>,
    },
    /// [`Memory::remove`].
    Remove { id: EntryId },
    /// [`Memory::clear`].
    Clear,
    /// [`Memory::merge_from`]: entries and reliabilities of another memory.
    Import { entries: Vec<Entry>, reliability: BTreeMap<String, f64> },
}

/// What [`Memory::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", content = "id", rename_all = "snake_case")]
pub enum AddOutcome {
    /// A new entry.
    Inserted(EntryId),
    /// The same text (after normalising) was there already: one more hit on it.
    Duplicate(EntryId),
    /// A similar entry of the same category absorbed it.
    Merged(EntryId),
}

impl AddOutcome {
    pub fn id(self) -> EntryId {
        match self {
            AddOutcome::Inserted(id) | AddOutcome::Duplicate(id) | AddOutcome::Merged(id) => id,
        }
    }
}

/// What [`Memory::consolidate`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsolidateReport {
    /// Entries removed for low confidence.
    pub retired: Vec<EntryId>,
    /// `(kept, absorbed)`: the absorbed entry was merged into the kept one and removed.
    pub merged: Vec<(EntryId, EntryId)>,
}

/// What [`Memory::merge_from`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportReport {
    /// New ids of the entries taken in.
    pub inserted: Vec<EntryId>,
    /// Entries left out because the same text was there already.
    pub duplicates: usize,
    /// Approaches whose reliability was taken in (ones already known keep theirs).
    pub approaches: usize,
}

/// What [`Memory::apply`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    Added(AddOutcome),
    /// The entry's confidence after a use.
    Used {
        id: EntryId,
        confidence: f64,
    },
    /// Whether the entry now needs a rewrite.
    Signalled {
        id: EntryId,
        needs_rewrite: bool,
    },
    Rewritten {
        id: EntryId,
        version: u32,
    },
    /// The approach's reliability after the outcome.
    Outcome {
        approach: String,
        reliability: f64,
    },
    Consolidated(ConsolidateReport),
    Edited {
        id: EntryId,
    },
    Removed {
        id: EntryId,
    },
    /// How many entries were removed.
    Cleared {
        entries: usize,
    },
    Imported(ImportReport),
}

/// A change the memory refused; the memory is unchanged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryError {
    #[error("no memory entry {0}")]
    UnknownEntry(EntryId),
    #[error("{what} is empty")]
    Empty { what: &'static str },
    #[error("{what} is {len} characters long (at most {max})")]
    TooLong { what: &'static str, len: usize, max: usize },
    #[error("the memory is full ({0} entries); remove some or consolidate first")]
    Full(usize),
    #[error("confidence must be a number between 0 and 1, not {0}")]
    Confidence(f64),
    #[error("bad memory parameter: {0}")]
    Param(String),
    #[error("bad memory: {0}")]
    Invalid(String),
    #[error("the memory's {0} is at its limit (2^53); export its entries and import them into a new memory")]
    Exhausted(&'static str),
}
