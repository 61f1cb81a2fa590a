//! Following a session another process is writing (`replay --follow FILE`): the file is
//! read again when it grows, up to its last whole line (a line still being written is
//! not an error: it is read when it is whole), and the timeline stays at the live end
//! unless the person has moved it. Forking works as from any replay; a fork ends the
//! following (the explorer then runs its own session).

use super::*;

/// What the follower has read of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Following {
    pub path: PathBuf,
    /// The file's length when it was last looked at.
    pub(crate) seen: u64,
    /// Bytes read, up to the end of the last whole line.
    pub(crate) read: u64,
}

/// Read the whole lines of a session file being written (a torn last line left for later).
/// Gives the session and the bytes read.
pub fn read_written(path: &Path) -> Result<(Session, u64), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("could not read {}: {e}", path.display()))?;
    let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let text = String::from_utf8_lossy(&bytes[..whole]);
    let session = Session::parse(&text, path).map_err(|e| e.to_string())?;
    Ok((session, whole as u64))
}
