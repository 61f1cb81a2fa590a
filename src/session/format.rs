//! Format versions: how a line of each version of the session format is read.
//!
//! A file's header says its version; every later line is read as that version says. A
//! line of the current version ([`VERSION`]) is read straight into today's types. A line
//! of an older version is read as JSON and brought up to date one version at a time by
//! the upgrades below (the header's and the other records' apart), then read; a version
//! whose lines mean what they meant before has no upgrade (`None`), and its lines are
//! read straight too. A version newer than this build is refused.
//!
//! # Adding a version
//!
//! Anything that changes what a recorded line means (a field read differently, a key
//! dropped, a new field an older build would silently ignore) needs one:
//!
//! 1. bump [`VERSION`] (writers always write the current version);
//! 2. append one entry to [`UPGRADES`]: the step from the previous version to the new
//!    one, as functions over the header's JSON and over a record's JSON (`None` where
//!    that kind of line is unchanged), written against the old layout as it was;
//! 3. add a test that a line of the old version reads into what it meant (the shipped
//!    sessions under `tests/fixtures/shipped-sessions/` are all version 1 or later and
//!    must keep replaying).
//!
//! # Versions
//!
//! * 1: the first format.
//! * 2: the header's `memory` may name a copy kept beside the session (`memory/<sha256>.json`,
//!   see [`super::memory_copy`]) instead of holding the memory; a version 1 line reads
//!   unchanged.
//! * 3: the header's `params` hold the method and exactly the parameters it declares
//!   (`MethodInfo::params`), defaults included; before, they held every parameter of
//!   every method and left a few out at their defaults. One reader takes both: the
//!   method's declared parameters, a missing one at its default, any other key (an older
//!   header's other methods') ignored, so a version 1 or 2 line reads unchanged.

use serde_json::Value;

use super::{Header, Record, FORMAT};

/// The session format this build writes, and the newest it reads.
pub const VERSION: u32 = 3;

/// One step from a version to the next, on a line's JSON.
pub type Upgrade = fn(&mut Value) -> Result<(), String>;

/// The step from version `v` to `v + 1` is `UPGRADES[v - 1]`: (header, other records).
pub const UPGRADES: [(Option<Upgrade>, Option<Upgrade>); VERSION as usize - 1] = [
    // 1 -> 2: only a new form of the header's `memory`; version 1 lines read as they are.
    (None, None),
    // 2 -> 3: the header's `params` keep only the method's (read by `Params`'s reader).
    (None, None),
];

/// Which of a step's two upgrades applies to a line: the header's or a record's.
type Pick = fn(&(Option<Upgrade>, Option<Upgrade>)) -> Option<Upgrade>;

/// The upgrades of `table` a line of `version` goes through, oldest first.
fn upgrades_from(table: &[(Option<Upgrade>, Option<Upgrade>)], version: u32, pick: Pick) -> Vec<Upgrade> {
    let from = (version.max(1) - 1) as usize;
    table.get(from..).unwrap_or(&[]).iter().filter_map(pick).collect()
}

/// Read a line through `upgrades`: the current type straight when there are none.
fn read_through<T: serde::de::DeserializeOwned>(line: &str, upgrades: &[Upgrade]) -> Result<T, String> {
    if upgrades.is_empty() {
        return serde_json::from_str(line).map_err(|e| e.to_string());
    }
    read_value(serde_json::from_str(line).map_err(|e| e.to_string())?, upgrades)
}

/// Read a line's JSON through `upgrades`.
fn read_value<T: serde::de::DeserializeOwned>(mut value: Value, upgrades: &[Upgrade]) -> Result<T, String> {
    for upgrade in upgrades {
        upgrade(&mut value)?;
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

fn read<T: serde::de::DeserializeOwned>(line: &str, version: u32, pick: Pick) -> Result<T, String> {
    read_through(line, &upgrades_from(&UPGRADES, version, pick))
}

/// Why a first line is not a header this build can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderProblem {
    /// Not JSON at all (possibly cut short: see [`super::Reader`]).
    NotJson(String),
    /// JSON, but not a session header.
    NotAHeader,
    /// A header of another format.
    OtherFormat(String),
    /// A newer version than this build reads.
    Newer(u32),
    /// A session header whose fields do not read as its version says.
    Unreadable { version: u32, why: String },
}

impl std::fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderProblem::NotJson(_) | HeaderProblem::NotAHeader => {
                f.write_str("the first line is not a session header")
            }
            HeaderProblem::OtherFormat(format) => write!(f, "not a session (format {format:?})"),
            HeaderProblem::Newer(v) => write!(
                f,
                "session format version {v} is newer than this build understands ({VERSION}); open it with a newer \
                 thoughtscope"
            ),
            HeaderProblem::Unreadable { version, why } => {
                write!(f, "the session header (format version {version}) is unreadable: {why}")
            }
        }
    }
}

/// A header's reference to the copy of its memory kept beside the session (version 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryRef {
    pub name: String,
    pub sha256: String,
}

/// Read a first line as a session header of any version this build reads, with the
/// copy of its memory it refers to, if it refers to one (its `memory` is then unset
/// until the copy is read: see [`super::memory_copy::read`]).
pub fn parse_header(line: &str) -> Result<(Header, Option<MemoryRef>), HeaderProblem> {
    let mut value: Value = serde_json::from_str(line).map_err(|e| HeaderProblem::NotJson(e.to_string()))?;
    let Some(fields) = value.as_object().filter(|o| o.get("kind").and_then(Value::as_str) == Some("header")) else {
        return Err(HeaderProblem::NotAHeader);
    };
    match fields.get("format").and_then(Value::as_str) {
        Some(FORMAT) => {}
        Some(other) => return Err(HeaderProblem::OtherFormat(other.to_string())),
        None => return Err(HeaderProblem::NotAHeader),
    }
    let version = match fields.get("version").and_then(Value::as_u64) {
        Some(v) => u32::try_from(v).unwrap_or(u32::MAX),
        None => return Err(HeaderProblem::Unreadable { version: 0, why: "it has no version number".into() }),
    };
    if version > VERSION {
        return Err(HeaderProblem::Newer(version));
    }
    if version == 0 {
        return Err(HeaderProblem::Unreadable { version, why: "version 0 was never written".into() });
    }
    let unreadable = |why| HeaderProblem::Unreadable { version, why };
    let memory_ref = take_memory_ref(&mut value).map_err(unreadable)?;
    let upgrades = upgrades_from(&UPGRADES, version, |u| u.0);
    let record = match memory_ref {
        None => read_through::<Record>(line, &upgrades),
        Some(_) => read_value::<Record>(value, &upgrades),
    };
    match record.map_err(unreadable)? {
        Record::Header(h) => Ok((*h, memory_ref)),
        _ => Err(HeaderProblem::NotAHeader),
    }
}

/// Take a `memory` that names a copy (`{"name": .., "sha256": ..}`) out of a header's JSON.
fn take_memory_ref(header: &mut Value) -> Result<Option<MemoryRef>, String> {
    let Some(memory) = header.get("memory").and_then(Value::as_object) else { return Ok(None) };
    let Some(sha) = memory.get("sha256") else { return Ok(None) };
    if memory.contains_key("memory") {
        return Err("its memory is both held and named by a copy".into());
    }
    let sha = sha.as_str().filter(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()));
    let Some(sha256) = sha.map(str::to_ascii_lowercase) else {
        return Err("its memory's sha256 is not 64 hexadecimal digits".into());
    };
    let Some(name) = memory.get("name").and_then(Value::as_str).map(str::to_string) else {
        return Err("its memory has no name".into());
    };
    if let Some(o) = header.as_object_mut() {
        o.remove("memory");
    }
    Ok(Some(MemoryRef { name, sha256 }))
}

/// Read a line after the header of a file of format `version`.
pub fn parse_record(line: &str, version: u32) -> Result<Record, String> {
    read(line, version, |u| u.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_up_to_this_one_has_its_upgrade_step() {
        assert_eq!(UPGRADES.len() as u32, VERSION - 1);
        for v in 1..=VERSION {
            let all: Pick = |_| Some(|_| Ok(()));
            assert_eq!(upgrades_from(&UPGRADES, v, all).len() as u32, VERSION - v, "version {v}");
        }
    }

    /// What a future step would do: version 1 wrote a log line's text as `said`.
    fn said_to_text(v: &mut Value) -> Result<(), String> {
        let Some(event) = v.get_mut("event").and_then(Value::as_object_mut) else { return Ok(()) };
        if let Some(text) = event.remove("said") {
            event.insert("text".into(), text);
        }
        Ok(())
    }

    #[test]
    fn a_step_brings_an_old_line_up_to_date_and_a_current_line_is_read_straight() {
        let table: [(Option<Upgrade>, Option<Upgrade>); 2] = [(None, Some(said_to_text)), (None, None)];
        let pick: Pick = |u| u.1;
        let old = r#"{"kind":"event","seq":0,"event":{"event":"log","said":"hello"}}"#;
        let hello = Record::Event { seq: 0, event: crate::engine::Event::Log { text: "hello".into() } };
        assert_eq!(read_through::<Record>(old, &upgrades_from(&table, 1, pick)), Ok(hello.clone()));
        // Without the step the old line does not read as a log line.
        assert!(read_through::<Record>(old, &[]).is_err());
        // Lines of the later versions skip the step.
        assert!(upgrades_from(&table, 2, pick).is_empty() && upgrades_from(&table, 3, pick).is_empty());
        let current = r#"{"kind":"event","seq":0,"event":{"event":"log","text":"hello"}}"#;
        assert_eq!(read_through::<Record>(current, &upgrades_from(&table, 3, pick)), Ok(hello));
        assert!(parse_record(current, 1).is_ok() && parse_record(current, VERSION).is_ok());
    }

    #[test]
    fn headers_are_told_apart_by_what_is_wrong_with_them() {
        assert!(matches!(parse_header("{\"kind\":\"hea"), Err(HeaderProblem::NotJson(_))));
        assert_eq!(parse_header("{\"hello\":1}"), Err(HeaderProblem::NotAHeader));
        assert_eq!(
            parse_header(r#"{"kind":"header","format":"other","version":1}"#),
            Err(HeaderProblem::OtherFormat("other".into()))
        );
        let newer = format!(r#"{{"kind":"header","format":"{FORMAT}","version":{}}}"#, VERSION + 1);
        assert_eq!(parse_header(&newer), Err(HeaderProblem::Newer(VERSION + 1)));
        let bad = format!(r#"{{"kind":"header","format":"{FORMAT}","version":1,"task":3}}"#);
        let Err(HeaderProblem::Unreadable { version: 1, why }) = parse_header(&bad) else { panic!("read") };
        assert!(!why.is_empty());
    }
}
