//! Reading a file a user names — a flag's argument, the config directory's files, a
//! folder of templates — by one set of rules, so a wrong path is one clear line instead
//! of a hang or a machine out of memory:
//!
//! * only regular files: a FIFO with no writer would block forever and a device such as
//!   `/dev/zero` never ends. The file is opened without blocking and checked *after*
//!   opening (`fstat` on the handle), so nothing can be swapped in between;
//! * at most a cap per kind of file ([`Kind`]); the read itself is bounded too, so a file
//!   that grows while it is read cannot get past the cap;
//! * where a person would pipe an answer in (`grade --pred-file <(echo 42)`), pipes are
//!   read as well: without blocking, until the writer closes its end, with the same cap and
//!   a time limit ([`PIPE_TIME_LIMIT`]).
//!
//! Every error names the file and the rule it broke. Also where the user's data lives
//! ([`data_dir`]: the explorer's sessions, the memories), so the config and the memory
//! store both find it here, below them.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What kind of file is read, for the cap and the messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// How messages name it ("config file").
    pub what: &'static str,
    /// The largest accepted file, in bytes.
    pub max_bytes: u64,
    /// Whether a pipe (a FIFO, process substitution, `/dev/stdin` on a pipe) is read too.
    pub pipes: bool,
}

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// `--config`, `$THOUGHTSCOPE_CONFIG`, the config directory's `config.toml` (keymap included).
pub const CONFIG: Kind = Kind { what: "config file", max_bytes: MIB, pipes: false };
/// A task file's `task.toml` (`--task`, `task check`), as large as a config file may be.
pub const TASK: Kind = Kind { what: "task file", max_bytes: MIB, pipes: false };
/// A theme under the config directory's `themes/`.
pub const THEME: Kind = Kind { what: "theme file", max_bytes: 64 * KIB, pipes: false };
/// A prompt template in a `--prompts` folder.
pub const TEMPLATE: Kind = Kind { what: "prompt template", max_bytes: 256 * KIB, pipes: false };
/// `--data`: a task's problems.
pub const DATA: Kind = Kind { what: "data file", max_bytes: 256 * MIB, pipes: false };
/// A log or trajectory file to import (`import tot-log`, `import react-text`, ...).
pub const LOG: Kind = Kind { what: "log file", max_bytes: 256 * MIB, pipes: false };
/// A memory file (a named memory, or `memory import FILE`).
pub const MEMORY: Kind = Kind { what: "memory file", max_bytes: 64 * MIB, pipes: false };
/// A memory's lock file (`pid N`, `start T`, `host H`).
pub const LOCK: Kind = Kind { what: "lock file", max_bytes: 4 * KIB, pipes: false };
/// `grade --gold-file / --pred-file`: an answer, often piped in.
pub const ANSWER: Kind = Kind { what: "answer file", max_bytes: 16 * MIB, pipes: true };

/// How long a pipe may take to deliver everything (its writer closing its end).
pub const PIPE_TIME_LIMIT: Duration = Duration::from_secs(60);

/// Environment variable naming the directory for sessions the explorer records.
pub const DATA_DIR_ENV: &str = "THOUGHTSCOPE_DATA_DIR";

/// Where the explorer keeps its sessions: `$THOUGHTSCOPE_DATA_DIR`, else the
/// platform's data directory (`~/.local/share/thoughtscope` on Linux), else
/// `.thoughtscope` in the current directory.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    directories::ProjectDirs::from("", "", "thoughtscope")
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".thoughtscope"))
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{} is {is}, not a file: name a regular {what}", .path.display())]
    NotAFile { path: PathBuf, is: &'static str, what: &'static str },
    #[error("{} is larger than {}, the limit for a {what}", .path.display(), size_text(*.max))]
    TooLarge { path: PathBuf, max: u64, what: &'static str },
    #[error("{}: not UTF-8 text (at byte {at})", .path.display())]
    NotText { path: PathBuf, at: usize },
    #[error("{}: the pipe did not close within {} s; give a file instead", .path.display(), .seconds)]
    PipeTimeout { path: PathBuf, seconds: u64 },
}

impl FileError {
    /// The message without the path, for callers that name the file themselves.
    pub fn reason(&self) -> String {
        match self {
            FileError::Io { source, .. } => source.to_string(),
            FileError::NotAFile { is, what, .. } => format!("it is {is}, not a file: name a regular {what}"),
            FileError::TooLarge { max, what, .. } => {
                format!("it is larger than {}, the limit for a {what}", size_text(*max))
            }
            FileError::NotText { at, .. } => format!("not UTF-8 text (at byte {at})"),
            FileError::PipeTimeout { seconds, .. } => {
                format!("the pipe did not close within {seconds} s; give a file instead")
            }
        }
    }

    /// The file does not exist (callers for which a missing file is no problem check this).
    pub fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// `1 MiB`, `64 KiB`, `300 bytes`.
pub fn size_text(bytes: u64) -> String {
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes % KIB == 0 {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// What a path is when it is not a regular file ("a FIFO (named pipe)", "a device", ...).
pub fn not_a_file(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "something other than a regular file"
}

/// Read `path` as UTF-8 text by the rules of `kind` (see the module docs).
pub fn read_text(path: &Path, kind: &Kind) -> Result<String, FileError> {
    let bytes = read_bytes(path, kind)?;
    String::from_utf8(bytes)
        .map_err(|e| FileError::NotText { path: path.to_path_buf(), at: e.utf8_error().valid_up_to() })
}

/// Read `path` by the rules of `kind` (see the module docs).
pub fn read_bytes(path: &Path, kind: &Kind) -> Result<Vec<u8>, FileError> {
    let io = |source| FileError::Io { path: path.to_path_buf(), source };
    let file = open_nonblocking(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    let file_type = meta.file_type();
    if file_type.is_file() {
        if meta.len() > kind.max_bytes {
            return Err(too_large(path, kind));
        }
        return read_capped(file, path, kind);
    }
    if kind.pipes && is_pipe(file_type) {
        return read_pipe(file, path, kind);
    }
    Err(FileError::NotAFile { path: path.to_path_buf(), is: not_a_file(file_type), what: kind.what })
}

/// Open `path` for reading, and check that what was opened is a regular file. Opening
/// does not block, whatever the path is. For readers with rules of their own (a session
/// is read line by line, with a cap per line).
pub fn open_regular(path: &Path) -> Result<File, (std::io::Error, Option<&'static str>)> {
    let file = open_nonblocking(path).map_err(|e| (e, None))?;
    let file_type = file.metadata().map_err(|e| (e, None))?.file_type();
    if !file_type.is_file() {
        return Err((std::io::ErrorKind::InvalidInput.into(), Some(not_a_file(file_type))));
    }
    Ok(file)
}

fn too_large(path: &Path, kind: &Kind) -> FileError {
    FileError::TooLarge { path: path.to_path_buf(), max: kind.max_bytes, what: kind.what }
}

/// A regular file, read to its end but never past the cap (it may grow meanwhile).
fn read_capped(file: File, path: &Path, kind: &Kind) -> Result<Vec<u8>, FileError> {
    let mut bytes = Vec::new();
    file.take(kind.max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Io { path: path.to_path_buf(), source })?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(too_large(path, kind));
    }
    Ok(bytes)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

#[cfg(unix)]
fn is_pipe(kind: std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_fifo()
}

#[cfg(not(unix))]
fn is_pipe(_kind: std::fs::FileType) -> bool {
    false
}

/// A pipe, read until its writer closes it (a FIFO nobody opened for writing reads as
/// empty), waiting for data with `poll` so the whole read stays within [`PIPE_TIME_LIMIT`].
#[cfg(unix)]
fn read_pipe(mut file: File, path: &Path, kind: &Kind) -> Result<Vec<u8>, FileError> {
    use std::os::fd::AsRawFd;
    let io = |source| FileError::Io { path: path.to_path_buf(), source };
    let deadline = std::time::Instant::now() + PIPE_TIME_LIMIT;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                bytes.extend_from_slice(&chunk[..n]);
                if bytes.len() as u64 > kind.max_bytes {
                    return Err(too_large(path, kind));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Err(FileError::PipeTimeout {
                        path: path.to_path_buf(),
                        seconds: PIPE_TIME_LIMIT.as_secs(),
                    });
                }
                let mut fd = libc::pollfd { fd: file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
                let ms = libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX).max(1);
                // SAFETY: one valid pollfd for the duration of the call; the fd stays open (we own `file`).
                let ready = unsafe { libc::poll(&mut fd, 1, ms) };
                if ready < 0 {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(io(e));
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
}

#[cfg(not(unix))]
fn read_pipe(file: File, path: &Path, kind: &Kind) -> Result<Vec<u8>, FileError> {
    read_capped(file, path, kind)
}

/// Standard input read with `kind`'s cap (`grade --pred-file -`): `/dev/zero` piped in
/// is an error after the cap, not a machine out of memory.
pub fn read_stdin(kind: &Kind) -> Result<String, FileError> {
    let path = Path::new("standard input");
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(kind.max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| FileError::Io { path: path.to_path_buf(), source })?;
    if bytes.len() as u64 > kind.max_bytes {
        return Err(too_large(path, kind));
    }
    String::from_utf8(bytes)
        .map_err(|e| FileError::NotText { path: path.to_path_buf(), at: e.utf8_error().valid_up_to() })
}

/// `text` cut to `max` characters with an ellipsis, for quoting a user's value in a
/// message (a 100 MB theme value is not drawn on screen).
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((at, _)) => std::borrow::Cow::Owned(format!("{}… ({} characters)", &text[..at], text.chars().count())),
    }
}

#[cfg(test)]
mod tests;
