//! Session files: JSON Lines. The first line is a header (format version, task,
//! input, method parameters, provider and model — never a secret); then one line
//! per recorded input (with the request behind each model reply), the events it
//! caused, and an `end` line with the run's totals; narrated sessions (the demos) also
//! hold `caption` lines, each tied to an input position. Lines are appended and flushed
//! as the run goes, so a crash loses at most the line being written.

pub mod cursor;
pub mod fidelity;
pub mod format;
pub mod memory_copy;
pub mod provider;
pub mod replay;
pub mod shared;
mod writer;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::sim::SimConfig;
use crate::engine::{Effect, Engine, Event, Input, Params};
use crate::llm::config::Price;
use crate::protocol::LlmRequest;

pub use writer::SessionWriter;

pub const FORMAT: &str = "thoughtscope-session";
pub use format::VERSION;

/// The version of the program this build is, as new headers record it.
pub const PROGRAM_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    /// The format version of the file as read (see [`format`]); written as [`VERSION`].
    pub version: u32,
    /// The version of thoughtscope that wrote the file (absent in files written before
    /// it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thoughtscope: Option<String>,
    pub task: String,
    /// The problem's input text, e.g. `"4 5 6 10"`.
    pub input: String,
    /// 0-based index in the task's list, if it came from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    pub params: Params,
    pub provider: String,
    pub model: String,
    /// The replies come from the `sim` provider, not a language model.
    #[serde(default)]
    pub simulated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim: Option<SimConfig>,
    /// The model's price when the run was made (US dollars per million tokens), for costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
    /// Where this session came from if it was imported (e.g. `tot-log:FILE#idx`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The session this one was forked from, and after how many inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ForkPoint>,
    /// A line on what this session shows (demo sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The problem's gold answer, for tasks whose answers come from a data file
    /// (hotpotqa, fever), so replay checks and scores without the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
    /// How ReAct actions were read, if not tolerantly (imported trajectories: as the
    /// reference environment read them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<crate::tasks::react_text::ActionRules>,
    /// What the problem is (subject and level, category; its id in the data set), so
    /// replays break results down without the data file. Empty for most tasks.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub facets: std::collections::BTreeMap<String, String>,
    /// The cross-problem memory as it stood when the problem began (ReTreVal with a
    /// named memory): the engine starts from it, and the session's `memory` events
    /// are every change the problem made, so replays and forks see the same memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemorySnapshot>,
    /// The outcome was not put to the task's judge (an imported log that never judged
    /// it), so replays do not ask the judge either. Absent: it was, as the task does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unjudged: bool,
    /// How the task laid its prompts out (`--prompt-style`); absent: reference, the only
    /// style before chat prompts. Every call's messages are recorded with it.
    #[serde(default, skip_serializing_if = "crate::engine::PromptStyle::is_reference")]
    pub prompt_style: crate::engine::PromptStyle,
    /// The model's context window in tokens as the run knew it (the provider's profile or
    /// server; `sim` has none), so replays and forks fit prompts to it the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// The task's whole definition and the problem's record, for a task written as a
    /// file (`tasks::file`): the session rebuilds the task from it, without the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_def: Option<serde_json::Value>,
    /// What the provider's requests left out or sent otherwise than the run asked (a
    /// reasoning model's temperature, extended thinking's limits), one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_notes: Vec<String>,
}

/// A named memory at the start of a problem. Written into the header whole (format 1,
/// and sessions that must stand alone such as the bundled demos), or as the memory's name
/// and the SHA-256 of its copy beside the session (`memory/<sha256>.json`, format 2: see
/// [`memory_copy`]); read back either way into the memory itself.
#[derive(Debug, Clone, Deserialize)]
pub struct MemorySnapshot {
    /// The memory's name (its file under the data directory's `memory/`).
    pub name: String,
    pub memory: crate::memory::Memory,
    /// The copy beside the session that the header refers to (its SHA-256), when it was
    /// read from or written as one; `None`: the header holds the memory.
    #[serde(skip)]
    pub copy: Option<String>,
}

impl PartialEq for MemorySnapshot {
    /// The same memory under the same name, wherever it is kept.
    fn eq(&self, other: &MemorySnapshot) -> bool {
        self.name == other.name && self.memory == other.memory
    }
}

impl MemorySnapshot {
    pub fn new(name: impl Into<String>, memory: crate::memory::Memory) -> MemorySnapshot {
        MemorySnapshot { name: name.into(), memory, copy: None }
    }
}

impl Serialize for MemorySnapshot {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("MemorySnapshot", 2)?;
        s.serialize_field("name", &self.name)?;
        match &self.copy {
            Some(sha) => s.serialize_field("sha256", sha)?,
            None => s.serialize_field("memory", &self.memory)?,
        }
        s.end()
    }
}

impl Header {
    /// What the header says about its task, for `tasks::for_spec`.
    pub fn task_spec(&self) -> crate::tasks::TaskSpec<'_> {
        crate::tasks::TaskSpec {
            name: &self.task,
            input: &self.input,
            gold: self.gold.as_deref(),
            actions: self.actions,
            facets: Some(&self.facets),
            style: self.prompt_style,
            definition: self.task_def.as_ref(),
        }
    }

    /// The search this header describes on `task` (one [`Header::build_task`] built, which
    /// checks that it serves the method), starting from the header's memory.
    pub fn engine(&self, task: std::sync::Arc<dyn crate::engine::Task>) -> Engine {
        let mut engine = Engine::new(task, &self.input, self.params.clone());
        engine.set_memory(self.memory.as_ref().map(|m| m.memory.clone()));
        engine.set_outcome_judge(!self.unjudged);
        engine.set_context_window(self.context_window);
        engine
    }

    /// The task the session ran, built from the header alone (no data file); a header
    /// whose method that task cannot serve is refused here, naming what the task lacks.
    pub fn build_task(
        &self,
        options: &crate::tasks::TaskOptions,
    ) -> Result<std::sync::Arc<dyn crate::tasks::TaskSource>, crate::tasks::TaskError> {
        let task = crate::tasks::for_spec(&self.task_spec(), options)?;
        crate::engine::methods::check_serves(task.as_ref(), &self.params)?;
        Ok(task)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForkPoint {
    pub path: String,
    pub inputs: usize,
}

/// Totals of a run, from its recorded replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Totals {
    /// Calls that reached the provider (not those answered from the cache or sharing
    /// an identical call in flight).
    pub llm_calls: u64,
    pub cache_hits: u64,
    pub failed_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Tool calls answered (ReAct).
    #[serde(default)]
    pub tool_calls: u64,
    /// Of `prompt_tokens` and `completion_tokens`, those a model's server did not report
    /// and were estimated from the text (about four characters a token; see
    /// [`crate::protocol::estimate_tokens`]). The simulated model's counts are its own, not
    /// estimates of anything, and are not among them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub estimated_tokens: u64,
    /// Of `completion_tokens`, those the model spent thinking (reasoning models).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Samples asked for and lost: their call fetched them one request each and a later
    /// request failed (the samples that came are counted as the call's; see
    /// [`crate::protocol::LostSamples`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost_samples: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Totals {
    /// All tokens, as reported or estimated.
    pub fn tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// All tokens, counted on the safe side for a budget: estimated ones count
    /// [`ESTIMATE_MARGIN`] times (a text-length estimate has been seen at half the
    /// server's own count).
    pub fn tokens_for_budget(&self) -> u64 {
        self.tokens() + (ESTIMATE_MARGIN - 1) * self.estimated_tokens
    }

    pub fn count(&mut self, input: &Input) {
        if let Input::ToolReply(_) = input {
            self.tool_calls += 1;
        }
        if let Input::LlmReply(reply) = input {
            match &reply.result {
                Ok(r) if r.cached => self.cache_hits += 1,
                Ok(r) => {
                    self.llm_calls += 1;
                    self.prompt_tokens += r.usage.prompt_tokens;
                    self.completion_tokens += r.usage.completion_tokens;
                    self.reasoning_tokens += r.usage.reasoning_tokens;
                    self.lost_samples += r.lost.as_ref().map_or(0, |l| u64::from(l.samples));
                    if r.usage.estimated && !r.simulated {
                        self.estimated_tokens += r.usage.prompt_tokens + r.usage.completion_tokens;
                    }
                }
                // Shared the failure of an identical request in flight: not sent, not counted.
                Err(e) if e.kind == crate::protocol::CallErrorKind::Shared => {}
                Err(_) => {
                    self.llm_calls += 1;
                    self.failed_calls += 1;
                }
            }
        }
    }

    pub fn add(&mut self, other: &Totals) {
        self.llm_calls += other.llm_calls;
        self.cache_hits += other.cache_hits;
        self.failed_calls += other.failed_calls;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.tool_calls += other.tool_calls;
        self.estimated_tokens += other.estimated_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.lost_samples += other.lost_samples;
    }
}

/// Where a problem's end falls in its run: the run's start (Unix milliseconds, which
/// also tells one run's sessions from another's) and the milliseconds from it to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunClock {
    pub started_unix_ms: u64,
    pub ended_ms: u64,
}

impl RunClock {
    /// The wall time of the runs these clocks come from: for each run (by its start),
    /// from its start to its last problem's end, summed over the runs.
    pub fn wall_ms(clocks: &[RunClock]) -> u64 {
        let mut runs: BTreeMap<u64, u64> = BTreeMap::new();
        for c in clocks {
            let end = runs.entry(c.started_unix_ms).or_insert(0);
            *end = (*end).max(c.ended_ms);
        }
        runs.values().sum()
    }
}

/// How many times a budget counts an estimated token: a streamed reply's length-based
/// estimate came to 12.7k tokens where the server counted 25.3k, so twice.
pub const ESTIMATE_MARGIN: u64 = 2;

/// What one input did to an engine: the work for a driver (calls, tool calls,
/// cancellations) and the events, apart.
#[derive(Debug, Default)]
pub struct Applied {
    pub effects: Vec<Effect>,
    pub events: Vec<Event>,
}

/// One input through an engine, counted into `totals`: the step every run loop
/// (`runtime::Run`) and the replay cursor take for each input, so live runs and
/// replays count and handle inputs the same way.
pub fn apply_input(engine: &mut Engine, totals: &mut Totals, input: &Input) -> Applied {
    totals.count(input);
    let mut applied = Applied::default();
    for effect in engine.handle(input.clone()) {
        match effect {
            Effect::Emit { event } => applied.events.push(event),
            other => applied.effects.push(other),
        }
    }
    applied
}

// Input records are nearly every record of a session and the largest variant: boxing them
// would allocate once a record to shrink the few others (the header is boxed already).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Record {
    /// Boxed: the header is much larger than the other records.
    Header(Box<Header>),
    Input {
        seq: u64,
        input: Input,
        /// The request a model reply answers (recorded for people and for replay checks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<LlmRequest>,
    },
    Event {
        seq: u64,
        event: Event,
    },
    End {
        totals: Totals,
        wall_ms: u64,
        /// When the run this problem was part of began, and how far into it this problem
        /// ended: what a summary of several sessions needs for the run's wall time, since
        /// problems run side by side overlap (absent in sessions from before it was kept).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<RunClock>,
        /// What the run found out about the server that a setting could have said (it
        /// ignored `n`, sent no token usage, ...): one line each (absent when nothing was,
        /// and in sessions from before it was kept).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        found: Vec<String>,
    },
    /// The run stopped issuing calls before the search finished (a budget was
    /// exceeded, the server refused the key, ...), and why.
    Stopped {
        reason: String,
    },
    /// Narration for a person watching the replay (demo sessions): shown from the
    /// point where `at` inputs have been applied until the next caption. Optional
    /// and ignored by the engine, so sessions without captions load unchanged.
    Caption {
        at: u64,
        /// A heading for the caption box (a demo's title on its first caption).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        text: String,
    },
}

/// One caption of a session: shown once `at` inputs have been applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caption {
    pub at: usize,
    pub title: Option<String>,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}:{line}: {message}")]
    Format { path: String, line: usize, message: String },
    #[error("{path} is {kind}, not a session file: name a regular file (*.jsonl)")]
    NotAFile { path: String, kind: &'static str },
    /// The memory the session starts from is kept beside it, and cannot be read.
    #[error("{path}: {source}")]
    Memory { path: String, source: memory_copy::CopyError },
}

pub(super) fn io_err(path: &Path, source: std::io::Error) -> SessionError {
    SessionError::Io { path: path.display().to_string(), source }
}

/// A loaded session: everything up to the first unreadable line.
#[derive(Debug, Clone)]
pub struct Session {
    pub path: PathBuf,
    pub header: Header,
    pub records: Vec<Record>,
    /// Problems met while loading (a torn last line, a malformed line), each naming file and line.
    pub warnings: Vec<String>,
}

/// The longest line a session file may have (a reply with its request is far less);
/// reading stops there, so a file without newlines cannot use up memory.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// What a path is, when it is not a regular file.
fn not_a_file(kind: std::fs::FileType) -> &'static str {
    crate::userfile::not_a_file(kind)
}

/// Reads a session line by line: the header first, then records, up to the first
/// line that is not a record (a torn last line, or a malformed line with more after it).
struct Reader {
    name: String,
    /// The folder the file is in (copies of memories are kept there).
    dir: PathBuf,
    header: Option<Header>,
    /// Records handed out so far.
    kept: usize,
    warnings: Vec<String>,
    /// A line that did not parse, held until we know whether it was the last one.
    bad: Option<(usize, String)>,
    /// A first line that begins as a header and is cut short: a torn header if it is the
    /// file's only line.
    torn_header: Option<String>,
    done: bool,
    /// Large tool results read so far, for the requests that refer to them.
    shared: shared::SharedTexts,
}

impl Reader {
    fn new(path: &Path) -> Self {
        Reader {
            name: path.display().to_string(),
            dir: match path.parent().filter(|d| !d.as_os_str().is_empty()) {
                Some(d) => d.to_path_buf(),
                None => PathBuf::from("."),
            },
            header: None,
            kept: 0,
            warnings: Vec::new(),
            bad: None,
            torn_header: None,
            done: false,
            shared: shared::SharedTexts::default(),
        }
    }

    fn format_error(&self, line: usize, message: String) -> SessionError {
        SessionError::Format { path: self.name.clone(), line, message }
    }

    /// Take line `n` (1-based): the record it holds, if it is one past the header.
    fn line(&mut self, n: usize, line: &str) -> Result<Option<Record>, SessionError> {
        if self.done || line.trim().is_empty() {
            return Ok(None);
        }
        if let Some((bad, e)) = self.bad.take() {
            // The bad line was not the last one: the file is damaged, not torn.
            let kept = self.kept;
            self.warnings
                .push(format!("{}:{bad}: malformed line ({e}); stopped reading here, kept {kept} records", self.name));
            self.done = true;
            return Ok(None);
        }
        let Some(header) = &self.header else {
            if self.torn_header.is_some() {
                return Err(self.format_error(1, "the first line is not a session header".into()));
            }
            return self.first_line(n, line);
        };
        // Large tool results written once go back into the requests that hold them.
        let restored = match self.shared.restore(line) {
            Ok(restored) => restored,
            Err(e) => {
                self.warnings.push(format!("{}:{n}: {e}; its request is shown without that text", self.name));
                None
            }
        };
        match format::parse_record(restored.as_deref().unwrap_or(line), header.version) {
            Ok(Record::Header(_)) => {
                let kept = self.kept;
                self.warnings
                    .push(format!("{}:{n}: a second header; stopped reading here, kept {kept} records", self.name));
                self.done = true;
            }
            Ok(r) => {
                self.shared.note(&r);
                self.kept += 1;
                return Ok(Some(r));
            }
            Err(e) => self.bad = Some((n, e)),
        }
        Ok(None)
    }

    /// The file's first line: its header, of any version this build reads.
    fn first_line(&mut self, n: usize, line: &str) -> Result<Option<Record>, SessionError> {
        const OPENING: &str = r#"{"kind":"header""#;
        match format::parse_header(line) {
            Ok((mut h, memory)) => {
                if let Err(e) = h.params.check() {
                    return Err(self.format_error(n, format!("the header's parameters are out of range: {e}")));
                }
                if let Some(r) = memory {
                    // The memory the session starts from, kept beside it.
                    let path = &self.name;
                    let dir = self.dir.clone();
                    let memory = memory_copy::read(&dir, &r.sha256)
                        .map_err(|source| SessionError::Memory { path: path.clone(), source })?;
                    h.memory = Some(MemorySnapshot { name: r.name, memory, copy: Some(r.sha256) });
                }
                self.header = Some(h);
                Ok(None)
            }
            // Cut short while it was written, if nothing follows it.
            Err(format::HeaderProblem::NotJson(e)) if line.starts_with(OPENING) || OPENING.starts_with(line) => {
                self.torn_header = Some(e);
                Ok(None)
            }
            Err(problem) => Err(self.format_error(n, problem.to_string())),
        }
    }

    /// Line `n` is longer than `max_line` bytes: stop reading there.
    fn too_long(&mut self, n: usize, max_line: usize) -> Result<(), SessionError> {
        let message = format!("a line longer than {max_line} bytes: not a session line");
        if self.header.is_none() {
            return Err(self.format_error(n, message));
        }
        let kept = self.kept;
        match self.bad.take() {
            // A bad line held back was not the last one after all.
            Some((bad, e)) => self
                .warnings
                .push(format!("{}:{bad}: malformed line ({e}); stopped reading here, kept {kept} records", self.name)),
            None => {
                self.warnings.push(format!("{}:{n}: {message}; stopped reading here, kept {kept} records", self.name))
            }
        }
        self.done = true;
        Ok(())
    }

    /// The header and the warnings, once every line has been taken.
    fn finish(mut self) -> Result<(Header, Vec<String>), SessionError> {
        if let Some((n, e)) = self.bad.take() {
            let kept = self.kept;
            self.warnings.push(format!("{}:{n}: torn last line skipped ({e}); kept {kept} records", self.name));
        }
        match (self.header.take(), &self.torn_header) {
            (Some(h), _) => Ok((h, self.warnings)),
            (None, Some(_)) => Err(self.format_error(
                1,
                "the session header is torn: the file ends inside its first line (the run was cut short as it \
                 started), so nothing was recorded"
                    .into(),
            )),
            (None, None) => Err(self.format_error(1, "empty file: no session header".into())),
        }
    }

    /// The header, once line 1 has been read.
    fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }
}

/// Read the session file at `path` line by line as [`Session::load`] does, handing each
/// record to `take` with the header as it is read, without keeping them: a headless
/// replay holds only the run it rebuilds. `take` returns false to stop reading. Gives
/// the header and the problems met while loading.
pub fn read_records(
    path: &Path,
    mut take: impl FnMut(&Header, Record) -> bool,
) -> Result<(Header, Vec<String>), SessionError> {
    read_records_limited(path, MAX_LINE_BYTES, &mut take)
}

fn read_records_limited(
    path: &Path,
    max_line: usize,
    take: &mut dyn FnMut(&Header, Record) -> bool,
) -> Result<(Header, Vec<String>), SessionError> {
    use std::io::{BufRead, BufReader, Read};
    let meta = std::fs::metadata(path).map_err(|e| io_err(path, e))?;
    if !meta.is_file() {
        return Err(SessionError::NotAFile { path: path.display().to_string(), kind: not_a_file(meta.file_type()) });
    }
    // Opened without blocking and checked again: nothing swapped in since the check hangs the read.
    let file = crate::userfile::open_regular(path).map_err(|(e, is)| match is {
        Some(kind) => SessionError::NotAFile { path: path.display().to_string(), kind },
        None => io_err(path, e),
    })?;
    let mut input = BufReader::new(file);
    let mut reader = Reader::new(path);
    let mut buf = Vec::new();
    let mut n = 0;
    while !reader.done {
        buf.clear();
        let read = (&mut input).take(max_line as u64 + 1).read_until(b'\n', &mut buf).map_err(|e| io_err(path, e))?;
        if read == 0 {
            break;
        }
        n += 1;
        if buf.last() != Some(&b'\n') && buf.len() > max_line {
            reader.too_long(n, max_line)?;
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        if let Some(record) = reader.line(n, line.trim_end_matches(['\n', '\r']))? {
            // A record comes only after the header.
            if let Some(header) = reader.header() {
                if !take(header, record) {
                    break;
                }
            }
        }
    }
    reader.finish()
}

impl Session {
    /// Load a session file. Only regular files are read (a FIFO would block, a device
    /// never end), line by line, and no line may be longer than [`MAX_LINE_BYTES`].
    pub fn load(path: &Path) -> Result<Session, SessionError> {
        Session::load_limited(path, MAX_LINE_BYTES)
    }

    fn load_limited(path: &Path, max_line: usize) -> Result<Session, SessionError> {
        let mut records = Vec::new();
        let (header, warnings) = read_records_limited(path, max_line, &mut |_, r| {
            records.push(r);
            true
        })?;
        Ok(Session { path: path.to_path_buf(), header, records, warnings })
    }

    /// Read a session from its text; `path` names it in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Session, SessionError> {
        let mut reader = Reader::new(path);
        let mut records = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if reader.done {
                break;
            }
            records.extend(reader.line(i + 1, line)?);
        }
        let (header, warnings) = reader.finish()?;
        Ok(Session { path: path.to_path_buf(), header, records, warnings })
    }

    /// Whether the run was recorded to its end (the file has its `end` line); a run
    /// cut short (killed, a crash, a full disk) has none.
    pub fn complete(&self) -> bool {
        self.end().is_some()
    }

    /// Number of recorded inputs.
    pub fn input_count(&self) -> usize {
        self.records.iter().filter(|r| matches!(r, Record::Input { .. })).count()
    }

    /// The recorded inputs in order, with the request each reply answers.
    pub fn inputs(&self) -> impl Iterator<Item = (&Input, Option<&LlmRequest>)> {
        self.records.iter().filter_map(|r| match r {
            Record::Input { input, request, .. } => Some((input, request.as_ref())),
            _ => None,
        })
    }

    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.records.iter().filter_map(|r| match r {
            Record::Event { event, .. } => Some(event),
            _ => None,
        })
    }

    /// The captions, in the order of their input positions (a recording's order when equal).
    pub fn captions(&self) -> Vec<Caption> {
        let mut out: Vec<Caption> = self
            .records
            .iter()
            .filter_map(|r| match r {
                Record::Caption { at, title, text } => {
                    Some(Caption { at: *at as usize, title: title.clone(), text: text.clone() })
                }
                _ => None,
            })
            .collect();
        out.sort_by_key(|c| c.at);
        out
    }

    /// Why the run stopped early, if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.records.iter().find_map(|r| match r {
            Record::Stopped { reason } => Some(reason.as_str()),
            _ => None,
        })
    }

    pub fn end(&self) -> Option<(Totals, u64)> {
        self.records.iter().rev().find_map(|r| match r {
            Record::End { totals, wall_ms, .. } => Some((*totals, *wall_ms)),
            _ => None,
        })
    }

    /// What the run found out about the server (see [`Record::End`]), as its end line says.
    pub fn found(&self) -> &[String] {
        self.records
            .iter()
            .rev()
            .find_map(|r| match r {
                Record::End { found, .. } => Some(found.as_slice()),
                _ => None,
            })
            .unwrap_or(&[])
    }

    /// The run clock of the end line, if the session has one.
    pub fn run_clock(&self) -> Option<RunClock> {
        self.records.iter().rev().find_map(|r| match r {
            Record::End { run, .. } => *run,
            _ => None,
        })
    }
}

#[cfg(test)]
mod cursor_tests;
#[cfg(test)]
mod memory_copy_tests;
#[cfg(test)]
mod tests;

/// The file name of a problem's session, the same for `run --record DIR` and the explorer:
/// `{task}-{index:04}-{method}.jsonl`, or the input in place of the index (spaces as `_`,
/// anything but letters, digits, `-`, `_` and `.` as `_`, at most 40 characters), so two
/// methods run on one problem never share a name.
pub fn file_name(task: &str, index: Option<usize>, input: &str, method: &str) -> String {
    let which = match index {
        Some(i) => format!("{i:04}"),
        None => {
            let safe: String = input
                .trim()
                .chars()
                .map(|c| if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
                .take(40)
                .collect();
            let safe = safe.trim_start_matches('.').to_string();
            if safe.is_empty() {
                "input".to_string()
            } else {
                safe
            }
        }
    };
    format!("{task}-{which}-{method}.jsonl")
}

/// `dir/name`, or `dir/name-2`, `-3`, ... if taken: a new recording never replaces one
/// already written (the explorer's sessions and exports, and `run --record DIR`).
pub fn unique_path(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let first = dir.join(name);
    if !first.exists() {
        return first;
    }
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, "jsonl"));
    (2..).map(|i| dir.join(format!("{stem}-{i}.{ext}"))).find(|p| !p.exists()).unwrap_or(first)
}

/// A UTC calendar time, for names and dates of sessions (serve's file names, the browser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: u64,
    pub minute: u64,
    pub second: u64,
}

/// The UTC calendar time of `unix` seconds since 1970 (Howard Hinnant's civil_from_days).
pub fn utc(unix: u64) -> UtcTime {
    let (days, secs) = (unix / 86_400, unix % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    UtcTime { year, month, day, hour: secs / 3600, minute: secs % 3600 / 60, second: secs % 60 }
}
