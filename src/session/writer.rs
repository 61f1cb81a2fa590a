//! Writing a session file: the header, then records appended and flushed as the run goes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{io_err, memory_copy, ForkPoint, Header, Record, Session, SessionError, Totals, PROGRAM_VERSION, VERSION};
use crate::engine::{Event, Input};
use crate::protocol::LlmRequest;

/// Appends records to a session file, flushing after each input and its events.
pub struct SessionWriter {
    path: PathBuf,
    file: File,
    seq: u64,
    /// The copy of the starting memory kept beside the session: (folder, memory name, SHA-256).
    memory: Option<(PathBuf, String, String)>,
    /// Large tool results written so far: later requests refer to them (see [`super::shared`]).
    shared: super::shared::SharedTexts,
}

/// Where a new session keeps the memory it starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Once, beside the sessions (`memory/<sha256>.json`), the header naming it.
    Beside,
    /// In the header (a session that must stand alone: the bundled demos).
    InHeader,
}

/// The folder a session file is in (`.` for a bare file name).
fn folder(path: &Path) -> PathBuf {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => dir.to_path_buf(),
        None => PathBuf::from("."),
    }
}

impl SessionWriter {
    /// A new session at `path`; the memory it starts from (if any) is kept once beside it.
    pub fn create(path: &Path, header: &Header) -> Result<Self, SessionError> {
        SessionWriter::create_keeping(path, header, Keep::Beside)
    }

    /// A new session whose header holds the memory it starts from, so the file stands
    /// alone (the bundled demos, compiled into the program).
    pub fn create_self_contained(path: &Path, header: &Header) -> Result<Self, SessionError> {
        SessionWriter::create_keeping(path, header, Keep::InHeader)
    }

    fn create_keeping(path: &Path, header: &Header, keep: Keep) -> Result<Self, SessionError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if dir.exists() && !dir.is_dir() {
                return Err(io_err(dir, std::io::ErrorKind::NotADirectory.into()));
            }
            std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        }
        // A device or a pipe named as the session (`--record /dev/stdout`) is written
        // into as it is: nothing is put beside it or renamed over it.
        let target = Target::of(path);
        let keep = if target == Target::Special { Keep::InHeader } else { keep };
        // Written now, in today's format, by this program.
        let mut header = header.clone();
        header.version = VERSION;
        header.thoughtscope = Some(PROGRAM_VERSION.to_string());
        let mut memory = None;
        if let Some(m) = header.memory.as_mut() {
            m.copy = match keep {
                Keep::InHeader => None,
                Keep::Beside => {
                    let dir = folder(path);
                    let sha = memory_copy::store(&dir, &m.name, &m.memory)
                        .map_err(|source| SessionError::Memory { path: path.display().to_string(), source })?;
                    memory = Some((dir, m.name.clone(), sha.clone()));
                    Some(sha)
                }
            };
        }
        let file = write_header(path, &header, target)?;
        Ok(SessionWriter { path: path.to_path_buf(), file, seq: 0, memory, shared: Default::default() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of inputs recorded so far.
    pub fn inputs(&self) -> u64 {
        self.seq
    }

    /// Start a new session at `path` holding the first `inputs` inputs of `parent`
    /// (and the events they caused), with a header naming the parent and fork point.
    pub fn fork(path: &Path, parent: &Session, inputs: usize) -> Result<Self, SessionError> {
        let mut header = parent.header.clone();
        header.parent = Some(ForkPoint { path: parent.path.display().to_string(), inputs });
        header.note = None;
        let mut w = SessionWriter::create(path, &header)?;
        let mut copied = Vec::new();
        for r in &parent.records {
            match r {
                Record::Input { seq, .. } | Record::Event { seq, .. } if (*seq as usize) < inputs => {
                    copied.push(r.clone())
                }
                // The narration up to the fork point goes with it.
                Record::Caption { at, .. } if (*at as usize) <= inputs => copied.push(r.clone()),
                _ => {}
            }
        }
        for r in &copied {
            if let Record::Event { event, .. } = r {
                w.note_memory(event);
            }
        }
        w.write(&copied)?;
        w.seq = inputs as u64;
        Ok(w)
    }

    /// Copy what is recorded so far to `path` and keep recording there (with the copy of
    /// the memory it starts from, if that is kept beside it).
    pub fn save_as(&mut self, path: &Path) -> Result<(), SessionError> {
        if path == self.path {
            return Ok(());
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        }
        if let Some((from, _, sha)) = &self.memory {
            memory_copy::copy_chain(from, &folder(path), sha)
                .map_err(|source| SessionError::Memory { path: path.display().to_string(), source })?;
        }
        std::fs::copy(&self.path, path).map_err(|e| io_err(path, e))?;
        let file = OpenOptions::new().append(true).open(path).map_err(|e| io_err(path, e))?;
        self.file = file;
        self.path = path.to_path_buf();
        // Later changes are on the copy in the old folder, not one kept in the new one.
        self.memory = None;
        Ok(())
    }

    /// Record one input, the request it answers, and the events handling it caused.
    pub fn input(&mut self, input: &Input, request: Option<&LlmRequest>, events: &[Event]) -> Result<(), SessionError> {
        let seq = self.seq;
        self.seq += 1;
        let mut records = Vec::with_capacity(1 + events.len());
        records.push(Record::Input { seq, input: input.clone(), request: request.cloned() });
        records.extend(events.iter().map(|e| Record::Event { seq, event: e.clone() }));
        for event in events {
            self.note_memory(event);
        }
        self.write(&records)
    }

    /// A memory change the session records: the next session's copy may be these changes
    /// on this session's copy.
    fn note_memory(&self, event: &Event) {
        if let (Event::Memory { change }, Some((dir, name, _))) = (event, &self.memory) {
            memory_copy::note_change(dir, name, change);
        }
    }

    /// Record a caption shown once `at` inputs have been applied (narration may be
    /// written as the run goes, or afterwards from what it recorded).
    pub fn caption(&mut self, at: u64, title: Option<&str>, text: &str) -> Result<(), SessionError> {
        let record = Record::Caption { at, title: title.map(str::to_string), text: text.to_string() };
        self.write(&[record])
    }

    /// Record that the run stopped issuing calls, and why.
    pub fn stopped(&mut self, reason: &str) -> Result<(), SessionError> {
        self.write(&[Record::Stopped { reason: reason.to_string() }])
    }

    /// Record the end of the run: its totals, its time, where it fell in a run of several,
    /// and what it found out about the server.
    pub fn end(
        &mut self,
        totals: Totals,
        wall_ms: u64,
        run: Option<super::RunClock>,
        found: &[String],
    ) -> Result<(), SessionError> {
        self.write(&[Record::End { totals, wall_ms, run, found: found.to_vec() }])
    }

    fn write(&mut self, records: &[Record]) -> Result<(), SessionError> {
        let mut buf = String::new();
        for r in records {
            // Known secret values never reach the file. A request whose text had a secret
            // redacted is written whole: the places of its shared texts would have moved.
            let line = self.shared.line(r);
            let redacted = crate::llm::secret::redact_json_line(line.clone());
            if redacted == line {
                buf.push_str(&redacted);
            } else {
                buf.push_str(&crate::llm::secret::redact_json_line(serde_json::to_string(r).unwrap_or_default()));
            }
            buf.push('\n');
            self.shared.note(r);
        }
        self.file.write_all(buf.as_bytes()).map_err(|e| io_err(&self.path, e))?;
        self.file.flush().map_err(|e| io_err(&self.path, e))
    }
}

/// The records as lines of the file.
fn lines(records: &[Record]) -> String {
    let mut buf = String::new();
    for r in records {
        // Records are plain data; serialising them cannot fail. Known secret values
        // never reach the file.
        buf.push_str(&crate::llm::secret::redact_json_line(serde_json::to_string(r).unwrap_or_default()));
        buf.push('\n');
    }
    buf
}

/// What a new session's path is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// Nothing, or a regular file (replaced).
    File,
    /// A symbolic link: written through, as a file opened there would be.
    Link,
    /// A device, a FIFO or a socket: written into.
    Special,
}

impl Target {
    fn of(path: &Path) -> Target {
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => Target::Link,
            Ok(m) if !m.is_file() && !m.is_dir() => Target::Special,
            _ => Target::File,
        }
    }
}

/// Put a session file holding just `header` at `path`, whole or not at all: the line goes
/// to a temporary file beside it, flushed, then renamed over `path` (a kill while it is
/// written leaves no session, never a torn header). A link or a device is written
/// through instead. Gives the file open for appending.
fn write_header(path: &Path, header: &Header, target: Target) -> Result<File, SessionError> {
    let text = lines(&[Record::Header(Box::new(header.clone()))]);
    if target != Target::File {
        let mut file =
            OpenOptions::new().create(true).write(true).truncate(true).open(path).map_err(|e| io_err(path, e))?;
        file.write_all(text.as_bytes()).and_then(|()| file.flush()).map_err(|e| io_err(path, e))?;
        return Ok(file);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "session".into());
    let partial = folder(path).join(format!(".{name}.{}.partial", std::process::id()));
    let written = File::create(&partial).and_then(|mut f| {
        f.write_all(text.as_bytes())?;
        f.flush()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&partial, path)) {
        let _ = std::fs::remove_file(&partial);
        return Err(io_err(path, e));
    }
    OpenOptions::new().append(true).open(path).map_err(|e| io_err(path, e))
}
