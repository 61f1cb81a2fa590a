//! Named memories on disk: `<data dir>/memory/<name>.json`, one file per memory.
//!
//! * The file is `{"format": "thoughtscope-memory", "version": 1, "memory": {...}}`.
//!   Loading a file that is malformed, of another version, over [`MAX_FILE_BYTES`] or
//!   whose memory breaks its own limits is an error naming the file; a file is never
//!   silently discarded or replaced by an empty memory.
//! * Writes are atomic: the JSON goes to `.<name>.json.tmp` in the same folder, which is
//!   fsynced and renamed over the old file, then the folder is fsynced. A crash or a
//!   failed write leaves the old file whole (at worst a stray temp file).
//! * Writers take an advisory lock, `<name>.lock`, created with `create_new` and removed
//!   when done; [`MemoryStore::update`] holds it across read, change and write, so two
//!   processes never lose each other's changes. A lock older than
//!   [`MemoryStore::stale_after`] (a writer that crashed) is taken over with a warning.
//!   Readers need no lock: a rename is all or nothing. Hand-written rather than
//!   `fs4`/`fd-lock` so the lock is visible, works the same on every file system and
//!   needs no crate.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::{Memory, MemoryError};

/// The `format` field of a memory file.
pub const FORMAT: &str = "thoughtscope-memory";
/// The `version` field this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;
/// The largest memory file read or written.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Longest memory name.
pub const MAX_NAME_LEN: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("bad memory name {0:?}: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'")]
    BadName(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("memory file {path} is not a valid memory: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("memory file {path} has format version {found}; this thoughtscope reads version {FORMAT_VERSION}")]
    Version { path: PathBuf, found: String },
    #[error("memory file {path} is {size} bytes, more than the {max} a memory may have")]
    TooLarge { path: PathBuf, size: u64, max: u64 },
    #[error(
        "memory {name:?} is being written by another process (lock file {path}); \
         if no thoughtscope is running, delete the lock file"
    )]
    Locked { name: String, path: PathBuf },
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PersistError + '_ {
    move |source| PersistError::Io { path: path.to_path_buf(), source }
}

/// Check a memory name: `[A-Za-z0-9._-]{1,64}`, not starting with a dot.
pub fn validate_name(name: &str) -> Result<(), PersistError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(PersistError::BadName(name.to_string()))
    }
}

#[derive(Serialize)]
struct FileOut<'a> {
    format: &'static str,
    version: u64,
    memory: &'a Memory,
}

#[derive(Deserialize)]
struct FileHeader {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileIn {
    #[allow(dead_code)]
    format: String,
    #[allow(dead_code)]
    version: u64,
    memory: Memory,
}

/// A memory as the file format's JSON (what `memory export` prints).
pub fn to_json(memory: &Memory) -> String {
    let file = FileOut { format: FORMAT, version: FORMAT_VERSION, memory };
    // A Memory has only string keys and finite numbers: serialising cannot fail.
    serde_json::to_string_pretty(&file).unwrap_or_default()
}

/// Parse the file format's JSON; `path` names the source in errors.
pub fn from_json(text: &str, path: &Path) -> Result<Memory, PersistError> {
    let malformed = |detail: String| PersistError::Malformed { path: path.to_path_buf(), detail };
    let header: FileHeader = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    if header.format.as_ref().and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(malformed(format!("it has no \"format\": \"{FORMAT}\" field")));
    }
    match header.version {
        Some(v) if v.as_u64() == Some(FORMAT_VERSION) => {}
        Some(v) => return Err(PersistError::Version { path: path.to_path_buf(), found: v.to_string() }),
        None => return Err(malformed("it has no \"version\" field".into())),
    }
    let file: FileIn = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    file.memory.validate().map_err(|e| malformed(e.to_string()))?;
    Ok(file.memory)
}

/// Read and check a memory file anywhere (the file `memory import` takes).
pub fn load_file(path: &Path) -> Result<Memory, PersistError> {
    let file = File::open(path).map_err(io(path))?;
    let size = file.metadata().map_err(io(path))?.len();
    if size > MAX_FILE_BYTES {
        return Err(PersistError::TooLarge { path: path.to_path_buf(), size, max: MAX_FILE_BYTES });
    }
    let mut bytes = Vec::new();
    // `take` bounds the read even if the file grows after the size check.
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(io(path))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| PersistError::Malformed { path: path.to_path_buf(), detail: format!("not UTF-8 text ({e})") })?;
    from_json(&text, path)
}

/// The folder of named memories and how its writers wait for each other.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    dir: PathBuf,
    /// How long a writer waits for another one's lock before giving up.
    pub lock_wait: Duration,
    /// A lock file older than this is a crashed writer's, taken over with a warning.
    pub stale_after: Duration,
    warnings: Vec<String>,
}

/// The lock file of one memory, removed when dropped.
#[derive(Debug)]
pub struct LockGuard {
    path: PathBuf,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl MemoryStore {
    /// The memories under `data_dir` (in its `memory/` folder).
    pub fn new(data_dir: &Path) -> MemoryStore {
        MemoryStore {
            dir: data_dir.join("memory"),
            lock_wait: Duration::from_secs(10),
            stale_after: Duration::from_secs(5 * 60),
            warnings: Vec::new(),
        }
    }

    /// The memories under the user data directory ([`crate::config::data_dir`]).
    pub fn user() -> MemoryStore {
        MemoryStore::new(&crate::config::data_dir())
    }

    /// The `memory/` folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Warnings since the last call (a stale lock taken over).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// The file of the memory named `name`.
    pub fn path(&self, name: &str) -> Result<PathBuf, PersistError> {
        validate_name(name)?;
        Ok(self.dir.join(format!("{name}.json")))
    }

    fn lock_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.lock"))
    }

    /// The names of the memories present, sorted.
    pub fn names(&self) -> Result<Vec<String>, PersistError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(PersistError::Io { path: self.dir.clone(), source: e }),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io(&self.dir))?;
            let file = entry.file_name();
            let Some(name) = file.to_str().and_then(|f| f.strip_suffix(".json")) else { continue };
            if validate_name(name).is_ok() && entry.path().is_file() {
                names.push(name.to_string());
            }
        }
        names.sort();
        Ok(names)
    }

    /// The memory named `name`, or None if it has no file yet.
    pub fn load(&self, name: &str) -> Result<Option<Memory>, PersistError> {
        let path = self.path(name)?;
        match load_file(&path) {
            Err(PersistError::Io { source, .. }) if source.kind() == ErrorKind::NotFound => Ok(None),
            other => other.map(Some),
        }
    }

    /// The memory named `name`, or an empty one with default rules.
    pub fn load_or_default(&self, name: &str) -> Result<Memory, PersistError> {
        Ok(self.load(name)?.unwrap_or_default())
    }

    /// Write the memory named `name` (atomically, under its lock).
    pub fn save(&mut self, name: &str, memory: &Memory) -> Result<(), PersistError> {
        let _lock = self.lock(name)?;
        self.write_locked(name, memory)
    }

    /// Read, change and write the memory named `name` under its lock, so concurrent
    /// writers never lose each other's changes. If `change` fails nothing is written.
    pub fn update<T>(
        &mut self,
        name: &str,
        change: impl FnOnce(&mut Memory) -> Result<T, PersistError>,
    ) -> Result<T, PersistError> {
        let _lock = self.lock(name)?;
        let mut memory = self.load_or_default(name)?;
        let out = change(&mut memory)?;
        self.write_locked(name, &memory)?;
        Ok(out)
    }

    /// Take the memory's lock, waiting up to [`MemoryStore::lock_wait`] for another
    /// writer and taking over a stale lock.
    pub fn lock(&mut self, name: &str) -> Result<LockGuard, PersistError> {
        validate_name(name)?;
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let path = self.lock_path(name);
        let started = std::time::Instant::now();
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    // Who holds it, for a person looking at a leftover lock.
                    let _ = writeln!(file, "pid {}", std::process::id());
                    return Ok(LockGuard { path });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    let age = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok());
                    if age.is_some_and(|a| a > self.stale_after) {
                        self.warnings.push(format!(
                            "taking over the stale lock {} (older than {} s; its writer must have stopped)",
                            path.display(),
                            self.stale_after.as_secs()
                        ));
                        match std::fs::remove_file(&path) {
                            Ok(()) => continue,
                            Err(e) if e.kind() == ErrorKind::NotFound => continue,
                            Err(e) => return Err(PersistError::Io { path, source: e }),
                        }
                    }
                    if started.elapsed() >= self.lock_wait {
                        return Err(PersistError::Locked { name: name.to_string(), path });
                    }
                    std::thread::sleep(Duration::from_millis(25));
                }
                Err(e) => return Err(PersistError::Io { path, source: e }),
            }
        }
    }

    /// Write the file atomically; the caller holds the lock.
    fn write_locked(&self, name: &str, memory: &Memory) -> Result<(), PersistError> {
        let path = self.path(name)?;
        let json = to_json(memory);
        let size = json.len() as u64;
        if size > MAX_FILE_BYTES {
            return Err(PersistError::TooLarge { path, size, max: MAX_FILE_BYTES });
        }
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let tmp = self.dir.join(format!(".{name}.json.tmp"));
        let written = (|| {
            let mut file = File::create(&tmp)?;
            file.write_all(json.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(PersistError::Io { path: tmp, source: e });
        }
        if let Err(e) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(PersistError::Io { path, source: e });
        }
        sync_dir(&self.dir).map_err(io(&self.dir))
    }
}

/// Make the rename durable: fsync the folder that holds the file.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Windows has no folder fsync; its rename is durable once it returns.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}
