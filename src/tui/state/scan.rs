//! Reading the session browser's rows fast: of each file only its first line (the
//! header) and its last few kilobytes (the end line, the outcome, why it stopped) are
//! read, never the whole file, so a folder of many large sessions lists at once. A file
//! that cannot be read is a row saying so, not an error for the whole list.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::OpenSource;
use crate::session::format::{parse_header, parse_record};
use crate::session::{Record, Totals};

/// A session with no end line written to this recently is taken to be still being
/// written (a live run, a batch on a server): it is marked live and opening it follows it.
pub const LIVE_WITHIN: Duration = Duration::from_secs(300);

/// The longest header line read (a header holding a memory whole can be long).
const MAX_HEADER: u64 = 16 << 20;
/// The tail read first, and the most read when the outcome is further back (a demo's
/// captions follow its end).
const TAIL_FIRST: u64 = 16 << 10;
const TAIL_MOST: u64 = 1 << 20;

/// How a session came out, as far as its header and last lines say.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Solved,
    NotSolved,
    /// It stopped issuing calls before the search finished, and why.
    Stopped(String),
    /// No end line, written to recently: still being written.
    Live,
    /// No end line and not written to lately: cut short (killed, a crash), or an explorer
    /// still open on a paused run.
    Unfinished,
    /// It has its end line but the outcome is not among its last lines.
    Ended,
}

impl Outcome {
    /// A few words for the row.
    pub fn text(&self) -> String {
        match self {
            Outcome::Solved => "★ solved".into(),
            Outcome::NotSolved => "✗ not solved".into(),
            Outcome::Stopped(_) => "■ stopped".into(),
            Outcome::Live => "● live".into(),
            Outcome::Unfinished => "… unfinished".into(),
            Outcome::Ended => "ended".into(),
        }
    }
}

/// One session as the browser lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub source: OpenSource,
    /// The folder it is grouped under, as shown.
    pub folder: String,
    /// The file's name.
    pub name: String,
    /// When it was last written (none for a bundled demo).
    pub modified: Option<SystemTime>,
    pub read: Result<Summary, String>,
}

/// What a readable session's header and last lines say.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub task: String,
    pub input: String,
    pub method: String,
    pub provider: String,
    pub model: String,
    pub outcome: Outcome,
    /// The top answer, when the outcome line has one.
    pub answer: Option<String>,
    /// From the end line (none while it is being written).
    pub totals: Option<Totals>,
    /// A demo's note.
    pub note: Option<String>,
}

impl SessionRow {
    pub fn live(&self) -> bool {
        matches!(&self.read, Ok(s) if s.outcome == Outcome::Live)
    }

    /// A bundled demo's title.
    pub fn title(&self) -> Option<&'static str> {
        match self.source {
            OpenSource::Demo(i) => crate::demos::DEMOS.get(i).map(|d| d.title),
            OpenSource::File(_) => None,
        }
    }

    /// Everything a typed filter is matched against, lower case.
    pub fn haystack(&self) -> String {
        let mut text = format!("{} {} {}", self.folder, self.name, self.date());
        if let Some(title) = self.title() {
            text.push(' ');
            text.push_str(title);
        }
        if let OpenSource::File(path) = &self.source {
            text.push(' ');
            text.push_str(&path.display().to_string());
        }
        match &self.read {
            Ok(s) => {
                let fields = [&s.task, &s.input, &s.method, &s.provider, &s.model, &s.outcome.text()];
                for f in fields {
                    text.push(' ');
                    text.push_str(f);
                }
                if let Outcome::Stopped(why) = &s.outcome {
                    text.push(' ');
                    text.push_str(why);
                }
                if let Some(note) = &s.note {
                    text.push(' ');
                    text.push_str(note);
                }
            }
            Err(e) => {
                text.push_str(" cannot be read ");
                text.push_str(e);
            }
        }
        text.to_lowercase()
    }

    /// `2026-12-04 18:51` (UTC), or `bundled` for a demo.
    pub fn date(&self) -> String {
        match self.modified {
            Some(t) => utc_minutes(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())),
            None => "bundled".into(),
        }
    }
}

/// `2026-12-04 18:51`: a UTC time to the minute.
pub fn utc_minutes(unix: u64) -> String {
    let t = crate::session::utc(unix);
    format!("{:04}-{:02}-{:02} {:02}:{:02}", t.year, t.month, t.day, t.hour, t.minute)
}

/// What the last lines say: the end line's totals, the outcome and why it stopped.
#[derive(Debug, Default)]
struct Tail {
    ended: Option<Totals>,
    finished: Option<crate::engine::Outcome>,
    stopped: Option<String>,
}

impl Tail {
    fn done(&self) -> bool {
        self.finished.is_some() || self.stopped.is_some()
    }
}

/// Read the records among `lines` (whole lines, the last first) that say how the run
/// ended. Only lines that can be one of them are parsed.
fn read_tail<'a>(lines: impl Iterator<Item = &'a str>, version: u32, tail: &mut Tail) {
    for line in lines {
        let line = line.trim_end_matches('\r');
        let wanted = line.starts_with(r#"{"kind":"end""#)
            || line.starts_with(r#"{"kind":"stopped""#)
            || (line.starts_with(r#"{"kind":"event""#) && line.contains(r#""finished""#));
        if !wanted {
            continue;
        }
        match parse_record(line, version) {
            Ok(Record::End { totals, .. }) if tail.ended.is_none() => tail.ended = Some(totals),
            Ok(Record::Stopped { reason }) if tail.stopped.is_none() => tail.stopped = Some(reason),
            Ok(Record::Event { event: crate::engine::Event::Finished { outcome }, .. }) if tail.finished.is_none() => {
                tail.finished = Some(outcome)
            }
            _ => {}
        }
        if tail.done() {
            return;
        }
    }
}

/// The whole lines of `bytes`, the last first; the first is dropped when `cut` (the
/// window starts inside it).
fn lines_backward(bytes: &[u8], cut: bool) -> Vec<&str> {
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| {
        // A window may start inside a character: from the first whole one.
        std::str::from_utf8(&bytes[e.valid_up_to()..]).unwrap_or("")
    });
    let mut lines: Vec<&str> = text.split('\n').collect();
    // What follows the last newline is a line still being written.
    lines.pop();
    if cut && !lines.is_empty() {
        lines.remove(0);
    }
    lines.reverse();
    lines
}

fn summary(header_line: &str, tail: Tail, modified: Option<SystemTime>, now: SystemTime) -> Result<Summary, String> {
    let (h, _) = parse_header(header_line).map_err(|e| e.to_string())?;
    let recent = modified.is_some_and(|m| now.duration_since(m).map_or(true, |age| age <= LIVE_WITHIN));
    let outcome = match (&tail.finished, &tail.stopped, &tail.ended) {
        (_, Some(why), _) => Outcome::Stopped(why.clone()),
        (Some(o), _, _) if o.solved => Outcome::Solved,
        (Some(_), _, _) => Outcome::NotSolved,
        (None, None, Some(_)) => Outcome::Ended,
        (None, None, None) if recent => Outcome::Live,
        (None, None, None) => Outcome::Unfinished,
    };
    // A run finished but its explorer still open (no end line yet): live if written lately.
    let outcome = match outcome {
        Outcome::Solved | Outcome::NotSolved if tail.ended.is_none() && recent => Outcome::Live,
        o => o,
    };
    Ok(Summary {
        task: h.task.clone(),
        input: crate::safe_text::one_line(&h.input),
        method: h.params.method.label().to_string(),
        provider: h.provider.clone(),
        model: h.model.clone(),
        outcome,
        answer: tail.finished.and_then(|o| o.answer).map(|a| crate::safe_text::one_line(&a)),
        totals: tail.ended,
        note: h.note.clone(),
    })
}

/// Read one session file's header and last lines.
pub fn read_file(path: &Path, now: SystemTime) -> (Option<SystemTime>, Result<Summary, String>) {
    let modified = std::fs::metadata(path).ok().and_then(|m| m.modified().ok());
    (modified, read_file_summary(path, modified, now))
}

fn read_file_summary(path: &Path, modified: Option<SystemTime>, now: SystemTime) -> Result<Summary, String> {
    let file = crate::userfile::open_regular(path).map_err(|(e, kind)| match kind {
        Some(kind) => format!("it is {kind}, not a session file"),
        None => e.to_string(),
    })?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    let mut reader = BufReader::new(file);
    let mut first = Vec::new();
    (&mut reader).take(MAX_HEADER).read_until(b'\n', &mut first).map_err(|e| e.to_string())?;
    if first.is_empty() {
        return Err("empty file: no session header".into());
    }
    if first.last() != Some(&b'\n') && first.len() as u64 >= MAX_HEADER {
        return Err("the first line is not a session header".into());
    }
    let header_line = String::from_utf8_lossy(&first).trim_end().to_string();
    let version = parse_header(&header_line).map_err(|e| e.to_string())?.0.version;
    let mut file = reader.into_inner();
    let body = first.len() as u64;
    let mut window = TAIL_FIRST;
    let tail = loop {
        let start = len.saturating_sub(window).max(body);
        file.seek(SeekFrom::Start(start)).map_err(|e| e.to_string())?;
        let mut bytes = Vec::with_capacity((len - start) as usize);
        (&mut file).take(len - start).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        let mut tail = Tail::default();
        read_tail(lines_backward(&bytes, start > body).into_iter(), version, &mut tail);
        // A file without its end line is read no further: its outcome is that it is not over.
        if tail.done() || tail.ended.is_none() || start == body || window >= TAIL_MOST {
            break tail;
        }
        window *= 4;
    };
    summary(&header_line, tail, modified, now)
}

/// A bundled demo's row, from its text (its header and its last lines).
pub fn demo_row(index: usize, demo: &crate::demos::Demo) -> SessionRow {
    let text = demo.text;
    let (header_line, rest) = text.split_once('\n').unwrap_or((text, ""));
    let version = parse_header(header_line).map(|(h, _)| h.version).unwrap_or(crate::session::VERSION);
    let mut tail = Tail::default();
    read_tail(lines_backward(rest.as_bytes(), false).into_iter(), version, &mut tail);
    SessionRow {
        source: OpenSource::Demo(index),
        folder: "bundled demos".into(),
        name: demo.file.to_string(),
        modified: None,
        read: summary(header_line, tail, None, UNIX_EPOCH),
    }
}

/// The session files (`*.jsonl`) in `dir` and in its folders one level down (a batch's
/// `run --record DIR`), with when each was last written.
fn session_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files = Vec::new();
    for entry in read.filter_map(Result::ok) {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if let Ok(inner) = std::fs::read_dir(&path) {
                files.extend(inner.filter_map(Result::ok).map(|e| e.path()).filter(|p| is_session_name(p)));
            }
        } else if is_session_name(&path) {
            files.push(path);
        }
    }
    files
}

fn is_session_name(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "jsonl")
}

/// Every row: the sessions under `dir` (newest first, equal times by path), then the
/// bundled demos in their order.
pub fn scan(dir: &Path, now: SystemTime) -> Vec<SessionRow> {
    let mut rows: Vec<SessionRow> = session_files(dir)
        .into_iter()
        .map(|path| {
            let (modified, read) = read_file(&path, now);
            let folder = path.parent().map(super::shown_path).unwrap_or_default();
            let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            SessionRow { source: OpenSource::File(path), folder, name, modified, read }
        })
        .collect();
    rows.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.source_path().cmp(&b.source_path())));
    rows.extend(crate::demos::DEMOS.iter().enumerate().map(|(i, d)| demo_row(i, d)));
    rows
}

impl SessionRow {
    fn source_path(&self) -> Option<&Path> {
        match &self.source {
            OpenSource::File(p) => Some(p),
            OpenSource::Demo(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_to_the_minute() {
        assert_eq!(utc_minutes(0), "1970-01-01 00:00");
        assert_eq!(utc_minutes(1_764_864_312), "2025-12-04 16:05");
        assert_eq!(utc_minutes(951_782_400), "2000-02-29 00:00");
    }

    #[test]
    fn a_demo_row_reads_its_outcome_and_totals_from_its_last_lines() {
        let row = demo_row(0, &crate::demos::DEMOS[0]);
        let s = row.read.unwrap();
        assert_eq!((s.task.as_str(), s.method.as_str(), &s.outcome), ("game24", "tot-bfs", &Outcome::Solved));
        assert_eq!(s.totals.map(|t| t.llm_calls), Some(88));
        assert_eq!(s.answer.as_deref(), Some("10 + ((4 * 5) - 6) = 24"));
    }

    /// A bundled demo is listed with its title, and typing part of it finds it.
    #[test]
    fn a_demo_row_is_known_by_its_title() {
        for (i, demo) in crate::demos::DEMOS.iter().enumerate() {
            let row = demo_row(i, demo);
            assert_eq!(row.title(), Some(demo.title));
            assert!(row.haystack().contains(&demo.title.to_lowercase()), "{}", demo.file);
        }
    }
}
