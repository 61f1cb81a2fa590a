//! The named cross-problem memory of a run whose method keeps one
//! (`MethodInfo::wants_memory`): which memory (`--memory NAME`, default
//! `<method>-<task>-<model>`, so one model's lessons do not steer another's), loading it before each problem and saving it after, so problem
//! k+1 starts from what problem k left. The method is never named here: the method's
//! registration says whether it wants a memory.
//!
//! Saving is a read-change-write under the memory's lock ([`MemoryStore::update`]): if
//! nobody else wrote the file since the problem began, the engine's memory replaces
//! it; if someone did (a `memory edit`, another run on the same memory), this
//! problem's changes are applied on top of what is there now, with the ids of entries
//! this problem added mapped to their new ids, so neither side's work is lost.
//! Replays and forks never come here: they start from their session header's
//! snapshot and write no memory file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::Params;
use crate::memory::{persist, Applied, EntryId, Memory, MemoryChange, MemoryStore, PersistError};

/// `--memory` given for a method that keeps none, or a bad name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryArgError {
    /// With the methods that keep one, from the registry (`retreval`).
    #[error("--memory needs a method that keeps a memory ({}); drop it or use --method {}", .0.join(", "), .0.first().map_or("...", String::as_str))]
    NotKept(Vec<String>),
    #[error("--memory: {0}")]
    BadName(String),
}

/// The memory a run of `params` on `task` with `model` uses: `given` (`--memory`, or the
/// config file's `defaults.memory`, which any model shares), else [`default_name`]
/// (`retreval-math-demo-gpt-4o-mini`); `None` when the method keeps no memory.
/// `given_by_flag` says whether `given` came from the command line (a config default is
/// ignored for methods without a memory).
pub fn resolve(
    params: &Params,
    task: &str,
    model: &str,
    given: Option<&str>,
    given_by_flag: bool,
) -> Result<Option<String>, MemoryArgError> {
    let wants = (params.method.info().wants_memory)(params);
    if !wants {
        return match given {
            Some(_) if given_by_flag => Err(MemoryArgError::NotKept(keepers())),
            _ => Ok(None),
        };
    }
    let name = match given {
        Some(name) => name.to_string(),
        None => default_name(params, task, model),
    };
    persist::validate_name(&name).map_err(|e| MemoryArgError::BadName(e.to_string()))?;
    Ok(Some(name))
}

/// `<method>-<task>-<model>`, e.g. `retreval-math-demo-gpt-4o-mini`: the memory a run
/// uses by default, one per model so that one model's lessons (validated by that model
/// itself) do not steer another's. The model's name is made safe for a memory name
/// (other characters become `-`) and the whole is cut to the name's 64 characters.
pub fn default_name(params: &Params, task: &str, model: &str) -> String {
    per_model(&shared_name(params, task), model)
}

/// `base` with `model` made safe for a memory name, cut to 64 characters.
fn per_model(base: &str, model: &str) -> String {
    let mut slug = String::new();
    for c in model.chars() {
        let keep = c.is_ascii_alphanumeric() || c == '.' || c == '_';
        if keep {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches(['-', '.']);
    let name = if slug.is_empty() { base.to_string() } else { format!("{base}-{slug}") };
    let cut: String = name.chars().take(persist::MAX_NAME_LEN).collect();
    cut.trim_end_matches(['-', '.']).to_string()
}

/// `<method>-<task>`, e.g. `retreval-math-demo`: the default before memories were named
/// per model (every model shared it), kept for `--memory` and named in a note
/// ([`old_default_note`]); the demos, which touch no memory file, label their snapshot so.
pub fn shared_name(params: &Params, task: &str) -> String {
    format!("{}-{task}", params.method.label())
}

/// The note for a run that uses the per-model default `name` while a memory under the
/// old shared default name exists in `store`: that memory is kept, and how to use it.
/// `None` when there is no such memory or `name` already has a file (said once, when the
/// per-model memory starts).
pub fn old_default_note(store: &MemoryStore, params: &Params, task: &str, name: &str) -> Option<String> {
    let old = shared_name(params, task);
    if old == name {
        return None;
    }
    let exists = |n: &str| store.path(n).is_ok_and(|p| p.exists());
    (exists(&old) && !exists(name)).then(|| {
        format!(
            "memory {old} (the default before memories were named per model, shared by every model) is kept as it \
             is; this run starts memory {name} for this model; give --memory {old} to go on with the shared one"
        )
    })
}

/// The memory a run on `task` with `model` uses by default, for commands that name no
/// method (`thoughtscope memory --task T --model M`): [`default_name`] for the registered
/// method that keeps a memory with its default parameters; without a model, the shared
/// `<method>-<task>` ([`shared_name`]).
pub fn task_default(task: &str, model: Option<&str>) -> String {
    let keepers = keepers();
    // Every build registers one (retreval); the name says "memory" if none did.
    let method = keepers.first().map_or("memory", String::as_str);
    let base = format!("{method}-{task}");
    match model {
        Some(model) => per_model(&base, model),
        None => base,
    }
}

/// The registered methods that keep a memory with their default parameters, in the
/// registry's order.
fn keepers() -> Vec<String> {
    let registry = crate::engine::methods::REGISTRY.iter();
    registry
        .filter(|info| (info.wants_memory)(&Params::new(info.kind)))
        .map(|info| info.kind.label().to_string())
        .collect()
}

/// The named memory of a run and the store it lives in.
#[derive(Debug, Clone)]
pub struct RunMemory {
    pub name: String,
    pub store: MemoryStore,
}

impl RunMemory {
    /// The memory `name` under the user data directory (`$THOUGHTSCOPE_DATA_DIR`, ...).
    pub fn user(name: &str) -> RunMemory {
        RunMemory { name: name.to_string(), store: MemoryStore::user() }
    }

    /// The file the memory lives in (for messages).
    pub fn file(&self) -> String {
        match self.store.path(&self.name) {
            Ok(p) => p.display().to_string(),
            Err(_) => self.store.dir().join(&self.name).display().to_string(),
        }
    }
}

/// What a problem did to its memory, for `--out` lines and `run --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryUse {
    pub name: String,
    pub entries_before: usize,
    pub entries_after: usize,
    /// The file changed while the problem ran: this problem's changes were applied on top.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
    /// Changes that could not be applied on top of another writer's (and stale locks taken over).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The memory `name` as it stands (an empty one with default rules if it has no file
/// yet), read under its lock so a writer in the middle of an update is waited for.
/// Blocking: see [`load`] for async code.
pub fn load_for(store: &mut MemoryStore, name: &str) -> Result<Memory, PersistError> {
    let _lock = store.lock(name)?;
    store.load_or_default(name)
}

/// What [`save_after`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Saved {
    /// Entries in the file now.
    pub entries: usize,
    /// The file had changed since `started`: the changes were applied on top of it.
    pub merged: bool,
    /// Changes that could not be applied there, each with why.
    pub skipped: Vec<String>,
    /// Warnings of the store (a stale lock taken over).
    pub warnings: Vec<String>,
}

/// Save a problem's memory: `started` is what the problem began from, `changes` what
/// it did (in order), `now` the result (`started` with `changes` applied). Blocking:
/// see [`save`] for async code.
pub fn save_after(
    store: &mut MemoryStore,
    name: &str,
    started: &Memory,
    changes: &[MemoryChange],
    now: &Memory,
) -> Result<Saved, PersistError> {
    let mut saved = store.update(name, |current| {
        if current == started {
            *current = now.clone();
            return Ok(Saved { entries: current.len(), ..Saved::default() });
        }
        let skipped = apply_on_top(current, started, changes);
        Ok(Saved { entries: current.len(), merged: true, skipped, warnings: Vec::new() })
    })?;
    saved.warnings = store.take_warnings();
    Ok(saved)
}

/// Apply `changes` (made on `started`) to `current`, mapping the ids of entries they
/// added to the ids those entries get in `current`. Returns the changes refused there.
fn apply_on_top(current: &mut Memory, started: &Memory, changes: &[MemoryChange]) -> Vec<String> {
    let mut ours = started.clone();
    let mut ids: BTreeMap<EntryId, EntryId> = BTreeMap::new();
    let mut skipped = Vec::new();
    for change in changes {
        let original = ours.apply(change);
        let mapped = remap(change, &ids);
        match current.apply(&mapped) {
            Ok(Applied::Added(new)) => {
                if let Ok(Applied::Added(old)) = original {
                    ids.insert(old.id(), new.id());
                }
            }
            Ok(_) => {}
            Err(e) => skipped.push(format!("{}: {e}", describe(change))),
        }
    }
    // The journal is not part of the file; drop it so it does not grow.
    current.take_changes();
    skipped
}

fn remap(change: &MemoryChange, ids: &BTreeMap<EntryId, EntryId>) -> MemoryChange {
    let map = |id: &EntryId| *ids.get(id).unwrap_or(id);
    let mut out = change.clone();
    match &mut out {
        MemoryChange::RecordUse { id, .. }
        | MemoryChange::AddSignal { id, .. }
        | MemoryChange::Rewrite { id, .. }
        | MemoryChange::Edit { id, .. }
        | MemoryChange::Remove { id } => *id = map(id),
        MemoryChange::Add { .. }
        | MemoryChange::RecordOutcome { .. }
        | MemoryChange::Consolidate
        | MemoryChange::Clear
        | MemoryChange::Import { .. } => {}
    }
    out
}

/// A change named in a few words (its tag and entry), for notes.
fn describe(change: &MemoryChange) -> String {
    match change {
        MemoryChange::Add { category, approach, .. } => format!("add ({category}, {approach})"),
        MemoryChange::RecordUse { id, .. } => format!("record_use of entry {id}"),
        MemoryChange::AddSignal { id, .. } => format!("add_signal to entry {id}"),
        MemoryChange::Rewrite { id, .. } => format!("rewrite of entry {id}"),
        MemoryChange::RecordOutcome { approach, .. } => format!("record_outcome of {approach}"),
        MemoryChange::Consolidate => "consolidate".into(),
        MemoryChange::Edit { id, .. } => format!("edit of entry {id}"),
        MemoryChange::Remove { id } => format!("remove of entry {id}"),
        MemoryChange::Clear => "clear".into(),
        MemoryChange::Import { .. } => "import".into(),
    }
}

/// Why loading or saving a run's memory failed: one line naming the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MemoryIoError(pub String);

/// A problem's memory, ready to be saved once its run is over (see
/// [`super::Run::take_memory_save`]).
#[derive(Debug, Clone)]
pub struct PendingSave {
    pub target: RunMemory,
    /// What the problem began from.
    pub started: Memory,
    /// What it did, in order.
    pub changes: Vec<MemoryChange>,
    /// The result.
    pub now: Memory,
}

impl PendingSave {
    /// Save (blocking: the lock may wait for another writer): what the problem did to the memory.
    pub fn save_blocking(self) -> Result<MemoryUse, MemoryIoError> {
        let PendingSave { target, started, changes, now } = self;
        let file = target.file();
        let mut store = target.store;
        let saved = save_after(&mut store, &target.name, &started, &changes, &now)
            .map_err(|e| MemoryIoError(format!("cannot save memory {file}: {e}")))?;
        let mut notes = saved.warnings;
        notes.extend(saved.skipped.iter().map(|s| format!("not applied on top of the file: {s}")));
        Ok(MemoryUse {
            name: target.name,
            entries_before: started.len(),
            entries_after: saved.entries,
            merged: saved.merged,
            notes,
        })
    }

    /// [`PendingSave::save_blocking`] on a blocking thread.
    pub async fn save(self) -> Result<MemoryUse, MemoryIoError> {
        let file = self.target.file();
        tokio::task::spawn_blocking(move || self.save_blocking())
            .await
            .map_err(|e| MemoryIoError(format!("cannot save memory {file}: {e}")))?
    }

    /// What the problem did, if saving failed (entries before and as the engine left them).
    pub fn unsaved_use(&self) -> MemoryUse {
        MemoryUse {
            name: self.target.name.clone(),
            entries_before: self.started.len(),
            entries_after: self.now.len(),
            merged: false,
            notes: Vec::new(),
        }
    }
}

/// [`load_for`] as one line naming the memory on failure (blocking).
pub fn load_blocking(memory: &RunMemory) -> Result<Memory, MemoryIoError> {
    let mut store = memory.store.clone();
    load_for(&mut store, &memory.name).map_err(|e| MemoryIoError(format!("cannot read memory {}: {e}", memory.name)))
}

/// [`load_for`] on a blocking thread (the lock may wait for another writer).
pub async fn load(memory: &RunMemory) -> Result<Memory, MemoryIoError> {
    let target = memory.clone();
    let file = memory.file();
    tokio::task::spawn_blocking(move || load_blocking(&target))
        .await
        .map_err(|e| MemoryIoError(format!("cannot read memory {file}: {e}")))?
}

#[cfg(test)]
mod tests;
