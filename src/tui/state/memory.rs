//! The memory pane (`M`) and the backtrack-cause chooser (`b` when the method names
//! failure causes). Both read only what the engine shows (`Engine::memory`,
//! `MethodView::backtrack_causes`) and act through commands, so every change a person
//! makes here is recorded in the session and replays; no method is named.
//!
//! The transcript's memory lines ("memory: entry #2 used (solved), confidence 0.60")
//! need what each change did (the new confidence, the version, what consolidation
//! retired), which the recorded event does not carry: they are computed by applying
//! the session's memory events to the header's snapshot, kept in [`NotesCache`] so a
//! frame only applies the changes that are new since the last one.

use super::*;
use crate::memory::{AddOutcome, Applied, Entry, EntryId, Memory, MemoryChange};

/// The entries as the pane lists them: highest confidence first, ties by id.
pub fn sorted_entries(memory: &Memory) -> Vec<&Entry> {
    let mut entries: Vec<&Entry> = memory.entries().iter().collect();
    entries.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.id.cmp(&b.id)));
    entries
}

/// What this problem did with an entry, read from its memory events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// Times it was used (retrieved into a prompt) on this problem, solved or not.
    pub solved: u32,
    pub unsolved: u32,
    /// Critique signals it got on this problem.
    pub signals: u32,
}

/// `b`'s chooser: the causes the method names, one selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseChooser {
    pub causes: Vec<&'static str>,
    pub selected: usize,
}

/// What a key did to the chooser.
pub(crate) enum CauseChosen {
    Pick(&'static str),
    Cancel,
    Stay,
}

impl CauseChooser {
    pub fn new(causes: &[&'static str]) -> CauseChooser {
        CauseChooser { causes: causes.to_vec(), selected: 0 }
    }

    /// Arrows move, Enter picks, Esc cancels; a digit jumps to that line (1-based), a
    /// letter to the next cause starting with it (pressed again, the one after).
    pub(crate) fn key(&mut self, code: KeyCode) -> CauseChosen {
        let n = self.causes.len();
        if n == 0 {
            return CauseChosen::Cancel;
        }
        match code {
            KeyCode::Esc => return CauseChosen::Cancel,
            KeyCode::Enter => {
                return self.causes.get(self.selected).map_or(CauseChosen::Cancel, |c| CauseChosen::Pick(c))
            }
            KeyCode::Up => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down | KeyCode::Tab => self.selected = (self.selected + 1) % n,
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = n - 1,
            KeyCode::Char(c) if c.is_ascii_digit() => {
                let i = c.to_digit(10).unwrap_or(0) as usize;
                if (1..=n).contains(&i) {
                    self.selected = i - 1;
                }
            }
            KeyCode::Char(c) => {
                let c = c.to_ascii_lowercase();
                let starts = |i: usize| self.causes[i].chars().next().map(|f| f.to_ascii_lowercase()) == Some(c);
                if let Some(i) = (1..=n).map(|k| (self.selected + k) % n).find(|&i| starts(i)) {
                    self.selected = i;
                }
            }
            _ => {}
        }
        CauseChosen::Stay
    }
}

/// The transcript line for one memory change, with what applying it did when known.
pub fn memory_note(change: &MemoryChange, applied: Option<&Applied>) -> String {
    let solved = |s: bool| if s { "solved" } else { "not solved" };
    match (change, applied) {
        (MemoryChange::Add { category, approach, .. }, Some(Applied::Added(outcome))) => match outcome {
            AddOutcome::Inserted(id) => format!("memory: added {category} entry #{id} ({approach})"),
            AddOutcome::Duplicate(id) => {
                format!("memory: {category} lesson ({approach}) already in entry #{id}: one more hit")
            }
            AddOutcome::Merged(id) => format!("memory: {category} lesson ({approach}) merged into entry #{id}"),
        },
        (MemoryChange::Add { category, approach, .. }, _) => format!("memory: added a {category} lesson ({approach})"),
        (MemoryChange::RecordUse { id, success }, Some(Applied::Used { confidence, .. })) => {
            format!("memory: entry #{id} used ({}), confidence {confidence:.2}", solved(*success))
        }
        (MemoryChange::RecordUse { id, success }, _) => format!("memory: entry #{id} used ({})", solved(*success)),
        (MemoryChange::AddSignal { id, signal }, applied) => {
            let due = matches!(applied, Some(Applied::Signalled { needs_rewrite: true, .. }));
            let signal = crate::safe_text::clip(&crate::safe_text::one_line(signal), 80);
            format!("memory: entry #{id} critiqued: {signal}{}", if due { " — due for a rewrite" } else { "" })
        }
        (MemoryChange::Rewrite { id, .. }, Some(Applied::Rewritten { version, .. })) => {
            format!("memory: entry #{id} rewritten (v{version})")
        }
        (MemoryChange::Rewrite { id, .. }, _) => format!("memory: entry #{id} rewritten"),
        (MemoryChange::RecordOutcome { approach, success }, Some(Applied::Outcome { reliability, .. })) => {
            let how = if *success { "worked" } else { "failed" };
            format!("memory: {approach} approach {how}, reliability {reliability:.2}")
        }
        (MemoryChange::RecordOutcome { approach, success }, _) => {
            format!("memory: {approach} approach {}", if *success { "worked" } else { "failed" })
        }
        (MemoryChange::Consolidate, Some(Applied::Consolidated(report))) => {
            let ids = |ids: &[EntryId]| ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", ");
            let mut parts = Vec::new();
            if !report.retired.is_empty() {
                parts.push(format!("retired {}", ids(&report.retired)));
            }
            for (kept, absorbed) in &report.merged {
                parts.push(format!("merged #{absorbed} into #{kept}"));
            }
            if parts.is_empty() {
                parts.push("nothing to retire or merge".into());
            }
            format!("memory: consolidated, {}", parts.join(", "))
        }
        (MemoryChange::Consolidate, _) => "memory: consolidated".into(),
        (MemoryChange::Edit { id, content, confidence, pinned }, _) => {
            let mut parts = Vec::new();
            if content.is_some() {
                parts.push("new text".to_string());
            }
            if let Some(c) = confidence {
                parts.push(format!("confidence {c:.2}"));
            }
            match pinned {
                Some(true) => parts.push("pinned".into()),
                Some(false) => parts.push("unpinned".into()),
                None => {}
            }
            format!("memory: entry #{id} edited by hand ({})", parts.join(", "))
        }
        (MemoryChange::Remove { id }, _) => format!("memory: entry #{id} removed by hand"),
        (MemoryChange::Clear, Some(Applied::Cleared { entries })) => format!("memory: cleared ({entries} entries)"),
        (MemoryChange::Clear, _) => "memory: cleared".into(),
        (MemoryChange::Import { entries, .. }, _) => format!("memory: imported {} entries", entries.len()),
    }
}

/// The memory lines computed so far: the snapshot they start from, the changes applied
/// (a prefix of the events' memory changes while the run goes on), the memory after
/// them, and one line per change.
#[derive(Debug, Default)]
pub(crate) struct NotesCache {
    pub(crate) snapshot: Option<Memory>,
    pub(crate) changes: Vec<MemoryChange>,
    pub(crate) state: Option<Memory>,
    pub(crate) notes: Vec<String>,
}
