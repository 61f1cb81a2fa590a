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
//!   processes never lose each other's changes. The lock names its writer (pid, the
//!   process's start time where the system tells it, and the host): a lock whose writer
//!   on this host is no longer running — its pid gone, or reused by a process that started
//!   later — is taken over at once with a warning, and so is a lock of the previous format
//!   (`pid N` alone) whose process is gone or started after it; one whose writer cannot be
//!   checked (another host) only when it is older than [`MemoryStore::stale_after`].
//!   Readers need no lock: a rename is all or nothing. Hand-written rather than
//!   `fs4`/`fd-lock` so the lock is visible, works the same on every file system and
//!   needs no crate.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::{Memory, MemoryError};

/// The `format` field of a memory file.
pub const FORMAT: &str = "thoughtscope-memory";
/// The `version` field this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;
/// The largest memory file read or written.
pub const MAX_FILE_BYTES: u64 = crate::userfile::MEMORY.max_bytes;
/// Longest memory name.
pub const MAX_NAME_LEN: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum PersistError {
    #[error("bad memory name {0:?}: use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.'")]
    BadName(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {detail}")]
    Refused { path: PathBuf, detail: String },
    #[error("memory file {path} is not a valid memory: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("memory file {path} has format version {found}; this thoughtscope reads version {FORMAT_VERSION}")]
    Version { path: PathBuf, found: String },
    #[error("memory file {path} is larger than {}, the most a memory may have", crate::userfile::size_text(*.max))]
    TooLarge { path: PathBuf, max: u64 },
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
    let mut file: FileIn = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    file.memory.validate().map_err(|e| malformed(e.to_string()))?;
    // A memory file is the person's live memory: it keeps evidence from now on (entries
    // written before keep none). Sessions keep the rules they recorded.
    file.memory.params.record_evidence = true;
    Ok(file.memory)
}

/// Read and check a memory file anywhere (the file `memory import` takes): a regular file
/// of at most [`MAX_FILE_BYTES`] (see [`crate::userfile`]).
pub fn load_file(path: &Path) -> Result<Memory, PersistError> {
    let text = crate::userfile::read_text(path, &crate::userfile::MEMORY).map_err(|e| match e {
        crate::userfile::FileError::Io { path, source } => PersistError::Io { path, source },
        crate::userfile::FileError::TooLarge { path, max, .. } => PersistError::TooLarge { path, max },
        crate::userfile::FileError::NotText { path, at } => {
            PersistError::Malformed { path, detail: format!("not UTF-8 text (at byte {at})") }
        }
        other => PersistError::Refused { path: path.to_path_buf(), detail: other.reason() },
    })?;
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

    /// The memories under the user data directory ([`crate::userfile::data_dir`]).
    pub fn user() -> MemoryStore {
        MemoryStore::new(&crate::userfile::data_dir())
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
                    // Who holds it: for a person looking at a leftover lock, and for the next
                    // writer to see whether its holder still runs.
                    let _ = file.write_all(LockOwner::me().to_text().as_bytes());
                    return Ok(LockGuard { path });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    if let Some(why) = self.stale(&path) {
                        self.warnings.push(format!("taking over the stale lock {} ({why})", path.display()));
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

    /// Why the lock at `path` is a stopped writer's, if it is: its writer on this host is
    /// no longer running, or (when that cannot be told) the lock is older than
    /// [`MemoryStore::stale_after`].
    fn stale(&self, path: &Path) -> Option<String> {
        let text = crate::userfile::read_text(path, &crate::userfile::LOCK).ok();
        let written = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let gone = |t: &str| {
            let owner = LockOwner::parse(t)?;
            match &owner.host {
                Some(_) => owner.gone(),
                None => owner.gone_old_format(written?),
            }
        };
        if let Some(why) = text.as_deref().and_then(gone) {
            // Another waiter may have taken it over meanwhile: only the lock judged is stale.
            let now = crate::userfile::read_text(path, &crate::userfile::LOCK).ok();
            return (now == text).then_some(why);
        }
        let age = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
        let age = SystemTime::now().duration_since(age).ok()?;
        (age > self.stale_after)
            .then(|| format!("older than {} s; its writer must have stopped", self.stale_after.as_secs()))
    }

    /// Write the file atomically; the caller holds the lock.
    fn write_locked(&self, name: &str, memory: &Memory) -> Result<(), PersistError> {
        let path = self.path(name)?;
        let json = to_json(memory);
        let size = json.len() as u64;
        if size > MAX_FILE_BYTES {
            return Err(PersistError::TooLarge { path, max: MAX_FILE_BYTES });
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

/// Who holds a lock: `pid N`, `start T` (the process's start time in clock ticks since
/// boot, Linux), `host H`, one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockOwner {
    pub pid: u32,
    pub start: Option<u64>,
    pub host: Option<String>,
}

impl LockOwner {
    /// This process.
    pub fn me() -> LockOwner {
        let pid = std::process::id();
        LockOwner { pid, start: process_start(pid), host: host_name() }
    }

    pub fn to_text(&self) -> String {
        let mut text = format!("pid {}\n", self.pid);
        if let Some(start) = self.start {
            text.push_str(&format!("start {start}\n"));
        }
        if let Some(host) = &self.host {
            text.push_str(&format!("host {host}\n"));
        }
        text
    }

    /// A lock file's text; None if it does not name a pid (an empty file, a foreign one).
    pub fn parse(text: &str) -> Option<LockOwner> {
        let field = |name: &str| {
            text.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')).map(str::trim))
        };
        let pid = field("pid")?.parse().ok().filter(|&p| p > 0)?;
        let start = field("start").and_then(|s| s.parse().ok());
        Some(LockOwner { pid, start, host: field("host").map(str::to_string) })
    }

    /// Why the writer holding this lock no longer runs, if it can be told: only for a lock
    /// written on this host (a pid means nothing on another one).
    pub fn gone(&self) -> Option<String> {
        let here = host_name()?;
        if self.host.as_deref() != Some(here.as_str()) {
            return None;
        }
        if !process_alive(self.pid) {
            return Some(format!("its writer, process {}, is no longer running", self.pid));
        }
        match (self.start, process_start(self.pid)) {
            (Some(then), Some(now)) if then != now => {
                Some(format!("its writer, process {}, has ended; that pid is another process's now", self.pid))
            }
            _ => None,
        }
    }
}

impl LockOwner {
    /// [`LockOwner::gone`] for a lock of the previous format (`pid N` alone, written by a
    /// thoughtscope before locks named their host and start time), `written` being the lock
    /// file's time: taken as written on this host, as that version did on one machine, its
    /// writer is gone when the pid no longer runs or runs a process that started after the
    /// lock was written (the pid was given to another process since).
    pub fn gone_old_format(&self, written: SystemTime) -> Option<String> {
        if !process_alive(self.pid) {
            return Some(format!(
                "its writer, process {} (a lock of the previous format), is no longer running",
                self.pid
            ));
        }
        let started = process_start_time(self.pid)?;
        // A second's slack: the file's time and the process's start are measured differently.
        (started > written + Duration::from_secs(1)).then(|| {
            format!(
                "its writer, process {} (a lock of the previous format), has ended; that pid is another process's now",
                self.pid
            )
        })
    }
}

/// When a process started, on the wall clock (Linux: its start in clock ticks after boot,
/// and the boot time from `/proc/stat`).
#[cfg(target_os = "linux")]
fn process_start_time(pid: u32) -> Option<SystemTime> {
    let ticks = process_start(pid)?;
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let boot: u64 = stat.lines().find_map(|l| l.strip_prefix("btime "))?.trim().parse().ok()?;
    // SAFETY: sysconf only reads a system constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_second = u64::try_from(per_second).ok().filter(|&n| n > 0)?;
    let after_boot =
        Duration::from_secs(ticks / per_second) + Duration::from_millis((ticks % per_second) * 1000 / per_second);
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(boot) + after_boot)
}

#[cfg(not(target_os = "linux"))]
fn process_start_time(_pid: u32) -> Option<SystemTime> {
    None
}

/// Whether a process with this pid exists (signal 0 checks without sending anything).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only reports whether the pid exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    // EPERM: it exists but belongs to someone else.
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// A process's start time (clock ticks after boot), from `/proc/PID/stat` on Linux.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: count fields after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // Field 22 of the whole line is the 20th after the name (state is the 1st).
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// This machine's name, for telling locks written here from those of another host.
#[cfg(unix)]
fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
    (!name.is_empty()).then_some(name)
}

#[cfg(not(unix))]
fn host_name() -> Option<String> {
    None
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
