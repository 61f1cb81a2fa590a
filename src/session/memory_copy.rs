//! The memory a session starts from, kept once beside the sessions instead of in each
//! header: `<dir>/memory/<sha256>.json`, named by the SHA-256 of its bytes and written
//! (atomically: a temporary file renamed into place) before the first session that
//! refers to it. The header then holds the memory's name and that hash (format version 2),
//! so a session replays with nothing but its folder.
//!
//! A copy is either the whole memory, or the changes on top of another copy: the problems
//! of a run begin one after the other from what the previous one left, so problem k+1's
//! memory is problem k's with problem k's recorded changes applied, and its copy says just
//! that (`base` and `changes`). A whole copy is written again every [`MAX_LINKS`] links, and
//! whenever the memory is not the previous one plus its changes (another writer changed
//! it in between), so reading one walks at most that many small files.
//!
//! A session whose copy is missing does not open: the error names the file to restore.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::memory::{Memory, MemoryChange};

/// The folder beside the sessions that holds the copies.
pub const DIR: &str = "memory";
/// Copies of changes in a row before a whole copy is written again.
pub const MAX_LINKS: usize = 64;
/// The largest copy read (a memory holds at most 100,000 entries of 64 KiB).
const MAX_COPY_BYTES: u64 = 8 << 30;

/// One copy's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "copy", rename_all = "snake_case", deny_unknown_fields)]
enum Copy {
    /// The whole memory.
    Whole { memory: Memory },
    /// The memory of copy `base` with `changes` applied in order.
    Changes { base: String, changes: Vec<MemoryChange> },
}

#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(
        "{file} is missing: the session starts from the memory kept there; copy the sessions' {DIR}/ folder along \
         with them"
    )]
    Missing { file: String },
    #[error("{file}: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file} is damaged: its content does not match the SHA-256 in its name")]
    Damaged { file: String },
    #[error("{file} is not a memory copy: {why}")]
    Unreadable { file: String, why: String },
    #[error("{file}: a recorded change does not apply to the memory it is based on ({why})")]
    Change { file: String, why: String },
    #[error("{file}: its chain of copies goes on for more than {0} links", MAX_CHAIN_READ)]
    TooLong { file: String },
}

/// The most links a reader follows (a writer starts a whole copy every [`MAX_LINKS`]).
const MAX_CHAIN_READ: usize = 100_000;

/// Forget the memory last read (so a test reads every link of a chain).
#[cfg(test)]
pub(super) fn forget_read() {
    *READ.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

/// Where copy `sha` of the sessions in `dir` is.
pub fn path(dir: &Path, sha: &str) -> PathBuf {
    dir.join(DIR).join(format!("{sha}.json"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// What was last kept in a folder under a memory's name: its copy, the memory as the
/// session that refers to it has left it so far (its start with the changes it recorded),
/// those changes, and the links since the last whole copy. Only a hint for writing the
/// next copy as changes: it is used when the next memory equals `now` (nobody else changed
/// the memory in between), and a whole copy is written otherwise.
struct Last {
    sha: String,
    now: Memory,
    changes: Vec<MemoryChange>,
    links: usize,
}

type Kept = HashMap<(PathBuf, String), Last>;

/// The last copy kept per (folder, memory name) by this process.
static LAST: Mutex<Option<Kept>> = Mutex::new(None);

/// The memory last read from a copy (a replay of a folder reads one problem after the
/// other: each copy's base is the one read before it, so only its changes are applied).
static READ: Mutex<Option<(PathBuf, String, Memory)>> = Mutex::new(None);

fn key(dir: &Path, name: &str) -> (PathBuf, String) {
    (dir.to_path_buf(), name.to_string())
}

/// Keep `memory` (named `name`) beside the sessions in `dir`: as changes on the copy kept
/// there last if it is that one plus the changes recorded since, else whole. Returns the
/// copy's SHA-256. A copy that exists already is not written again (its name is its content).
pub fn store(dir: &Path, name: &str, memory: &Memory) -> Result<String, CopyError> {
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    let kept = last.get_or_insert_with(HashMap::new);
    let (copy, links) = match kept.get(&key(dir, name)) {
        Some(l) if l.links < MAX_LINKS && &l.now == memory && path(dir, &l.sha).is_file() => {
            if l.changes.is_empty() {
                // Unchanged since: the same copy.
                return Ok(l.sha.clone());
            }
            (Copy::Changes { base: l.sha.clone(), changes: l.changes.clone() }, l.links + 1)
        }
        _ => (Copy::Whole { memory: memory.clone() }, 0),
    };
    let sha = match write_copy(dir, &copy) {
        Ok(sha) => sha,
        Err(e) => {
            kept.remove(&key(dir, name));
            return Err(e);
        }
    };
    kept.insert(key(dir, name), Last { sha: sha.clone(), now: memory.clone(), changes: Vec::new(), links });
    Ok(sha)
}

/// A session that refers to the last copy of `name` kept in `dir` recorded `change`: the
/// next copy may be written as changes on that one. A change that does not apply (not
/// one the memory made) makes the next copy whole.
pub fn note_change(dir: &Path, name: &str, change: &MemoryChange) {
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    let Some(l) = last.as_mut().and_then(|m| m.get_mut(&key(dir, name))) else { return };
    if l.now.apply(change).is_err() {
        l.links = MAX_LINKS;
    }
    l.now.take_changes();
    l.changes.push(change.clone());
}

/// Write `copy` under its hash, unless it is there.
fn write_copy(dir: &Path, copy: &Copy) -> Result<String, CopyError> {
    // Memory content is model text: known secret values never reach the file.
    let text = crate::llm::secret::redact_json_line(serde_json::to_string(copy).unwrap_or_default());
    let sha = sha256_hex(text.as_bytes());
    place(dir, &sha, text.as_bytes())?;
    Ok(sha)
}

/// Put `bytes` (a copy's text) at copy `sha` of `dir`, through a temporary file renamed
/// into place, so a reader never sees part of one; a copy there already is kept.
fn place(dir: &Path, sha: &str, bytes: &[u8]) -> Result<(), CopyError> {
    let file = path(dir, sha);
    if file.is_file() {
        return Ok(());
    }
    let io = |source| CopyError::Io { file: file.display().to_string(), source };
    let folder = dir.join(DIR);
    std::fs::create_dir_all(&folder).map_err(io)?;
    let partial = folder.join(format!(".{sha}.json.{}.partial", std::process::id()));
    let written = std::fs::File::create(&partial).and_then(|mut f| {
        f.write_all(bytes)?;
        f.write_all(b"\n")?;
        f.flush()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&partial, &file)) {
        let _ = std::fs::remove_file(&partial);
        return Err(io(e));
    }
    Ok(())
}

/// Read copy `sha` of the sessions in `dir` (following its base copies) into the memory it holds.
pub fn read(dir: &Path, sha: &str) -> Result<Memory, CopyError> {
    let mut chain: Vec<(String, Vec<MemoryChange>)> = Vec::new();
    let mut at = sha.to_string();
    let cached = READ.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let mut memory = loop {
        if let Some((d, s, m)) = &cached {
            if d == dir && *s == at {
                break m.clone();
            }
        }
        if chain.len() > MAX_CHAIN_READ {
            return Err(CopyError::TooLong { file: path(dir, sha).display().to_string() });
        }
        match read_one(dir, &at)? {
            Copy::Whole { memory } => break memory,
            Copy::Changes { base, changes } => {
                chain.push((at, changes));
                at = base;
            }
        }
    };
    for (copy, changes) in chain.into_iter().rev() {
        for change in &changes {
            if let Err(e) = memory.apply(change) {
                let file = path(dir, &copy).display().to_string();
                return Err(CopyError::Change { file, why: e.to_string() });
            }
        }
    }
    memory.take_changes();
    *READ.lock().unwrap_or_else(|p| p.into_inner()) = Some((dir.to_path_buf(), sha.to_string(), memory.clone()));
    Ok(memory)
}

fn read_one(dir: &Path, sha: &str) -> Result<Copy, CopyError> {
    let bytes = read_bytes(dir, sha)?;
    let name = path(dir, sha).display().to_string();
    serde_json::from_slice(&bytes).map_err(|e| CopyError::Unreadable { file: name, why: e.to_string() })
}

/// The text of copy `sha`, checked against its name.
fn read_bytes(dir: &Path, sha: &str) -> Result<Vec<u8>, CopyError> {
    let file = path(dir, sha);
    let name = file.display().to_string();
    let meta = match std::fs::metadata(&file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(CopyError::Missing { file: name }),
        Err(source) => return Err(CopyError::Io { file: name, source }),
    };
    if !meta.is_file() || meta.len() > MAX_COPY_BYTES {
        let why = if meta.is_file() { "it is larger than any memory" } else { "it is not a regular file" };
        return Err(CopyError::Unreadable { file: name, why: why.into() });
    }
    let mut bytes = std::fs::read(&file).map_err(|source| CopyError::Io { file: name.clone(), source })?;
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    if sha256_hex(&bytes) != sha {
        return Err(CopyError::Damaged { file: name });
    }
    Ok(bytes)
}

/// Copy copy `sha` and the copies it is based on from the sessions in `from` to those in
/// `to` (a session saved elsewhere takes its memory with it).
pub fn copy_chain(from: &Path, to: &Path, sha: &str) -> Result<(), CopyError> {
    let mut at = Some(sha.to_string());
    let mut links = 0;
    while let Some(sha) = at.take() {
        if links > MAX_CHAIN_READ {
            return Err(CopyError::TooLong { file: path(from, &sha).display().to_string() });
        }
        links += 1;
        let bytes = read_bytes(from, &sha)?;
        place(to, &sha, &bytes)?;
        let name = path(from, &sha).display().to_string();
        match serde_json::from_slice(&bytes).map_err(|e| CopyError::Unreadable { file: name, why: e.to_string() })? {
            Copy::Changes { base, .. } => at = Some(base),
            Copy::Whole { .. } => {}
        }
    }
    Ok(())
}
