//! The memory a session starts from is kept once beside the sessions (`memory/<sha>.json`,
//! whole or as changes on the previous copy), each session's header naming its copy; a
//! replay needs nothing but the folder, and a missing or damaged copy is said by name.
//! Headers are written whole or not at all, and a torn one is said plainly.

use super::memory_copy::{self, MAX_LINKS};
use super::tests::header;
use super::*;
use crate::engine::Command;
use crate::memory::{Category, Memory, MemoryChange};

/// A memory of `n` entries of about a kilobyte each.
fn big_memory(n: usize) -> Memory {
    let mut m = Memory::default();
    for i in 0..n {
        let words: Vec<String> = (0..150).map(|w| format!("w{i}x{w}")).collect();
        m.add(&words.join(" "), Category::Insight, "algebraic", None).unwrap();
    }
    m.take_changes();
    m
}

fn add(i: usize) -> MemoryChange {
    MemoryChange::Add {
        content: format!("lesson {i}: check the signs before cancelling"),
        category: Category::Failure,
        approach: "numeric".into(),
        source: None,
        evidence: None,
    }
}

/// Record a session at `path` starting from `memory`, making `changes`; gives the memory it ends with.
fn record(path: &Path, memory: &Memory, changes: &[MemoryChange]) -> Memory {
    let mut h = header();
    h.memory = Some(MemorySnapshot::new("study", memory.clone()));
    let mut w = SessionWriter::create(path, &h).unwrap();
    let mut now = memory.clone();
    for change in changes {
        now.apply(change).unwrap();
        let event = Event::Memory { change: change.clone() };
        w.input(&Input::command(Command::Step { n: 1 }), None, &[event]).unwrap();
    }
    now.take_changes();
    w.end(Totals::default(), 0, None, &[]).unwrap();
    now
}

fn copies(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(memory_copy::DIR))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
}

fn first_line(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap().lines().next().unwrap().to_string()
}

#[test]
fn a_run_keeps_its_memory_once_beside_its_sessions_and_each_replays_from_that_folder_alone() {
    let dir = tempfile::tempdir().unwrap();
    let start = big_memory(200);
    // Four problems one after the other, each from what the one before left (the third
    // changes nothing, so the fourth starts where it did).
    let paths: Vec<PathBuf> = (0..4).map(|i| dir.path().join(format!("p-{i}.jsonl"))).collect();
    let after_a = record(&paths[0], &start, &[add(1), add(2)]);
    let after_b = record(&paths[1], &after_a, &[add(3)]);
    let after_c = record(&paths[2], &after_b, &[]);
    record(&paths[3], &after_c, &[add(4)]);
    let files = copies(dir.path());
    assert_eq!(files.len(), 3, "a whole copy, two of changes, the fourth the third's: {files:?}");
    let sizes: Vec<u64> = files.iter().map(|f| std::fs::metadata(f).unwrap().len()).collect();
    let mut sorted = sizes.clone();
    sorted.sort_unstable();
    assert!(sorted[2] > 200_000 && sorted[1] < 1_000, "{sizes:?}");
    let shas: Vec<String> =
        paths.iter().map(|p| Session::load(p).unwrap().header.memory.unwrap().copy.unwrap()).collect();
    assert_eq!(shas[2], shas[3]);
    let (a, b, c) = (&paths[0], &paths[1], &paths[2]);
    for path in &paths {
        let line = first_line(path);
        assert!(line.len() < 2_000, "the header names its copy ({} bytes)", line.len());
        assert!(
            line.contains(&format!("\"version\":{}", crate::session::VERSION)) && line.contains("\"sha256\":"),
            "{line}"
        );
    }
    // Each reads back into the memory it started from, the chain followed link by link.
    for (path, memory) in [(a, &start), (b, &after_a), (c, &after_b), (&paths[3], &after_c)] {
        memory_copy::forget_read();
        let session = Session::load(path).unwrap();
        let snapshot = session.header.memory.as_ref().unwrap();
        assert_eq!(&snapshot.memory, memory, "{}", path.display());
        assert!(snapshot.copy.is_some());
        assert_eq!(Session::parse(&std::fs::read_to_string(path).unwrap(), path).unwrap().header, session.header);
    }
    // The folder alone replays: moved elsewhere, nothing else needed.
    let moved = tempfile::tempdir().unwrap();
    for f in &paths {
        std::fs::copy(f, moved.path().join(f.file_name().unwrap())).unwrap();
    }
    let to = moved.path().join(memory_copy::DIR);
    std::fs::create_dir_all(&to).unwrap();
    for f in &files {
        std::fs::copy(f, to.join(f.file_name().unwrap())).unwrap();
    }
    memory_copy::forget_read();
    let session = Session::load(&moved.path().join("p-1.jsonl")).unwrap();
    assert_eq!(session.header.memory.unwrap().memory, after_a);
}

#[test]
fn a_memory_changed_by_someone_else_between_problems_is_kept_whole_again() {
    let dir = tempfile::tempdir().unwrap();
    let start = big_memory(3);
    let after = record(&dir.path().join("a.jsonl"), &start, &[add(1)]);
    let mut edited = after.clone();
    edited.apply(&add(99)).unwrap();
    edited.take_changes();
    record(&dir.path().join("b.jsonl"), &edited, &[]);
    memory_copy::forget_read();
    assert_eq!(Session::load(&dir.path().join("b.jsonl")).unwrap().header.memory.unwrap().memory, edited);
    let texts: Vec<String> = copies(dir.path()).iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert_eq!(texts.iter().filter(|t| t.starts_with("{\"copy\":\"whole\"")).count(), 2, "{texts:?}");
}

#[test]
fn a_whole_copy_is_written_again_after_the_longest_chain_of_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut starts = Vec::new();
    let mut memory = big_memory(1);
    for i in 0..MAX_LINKS + 2 {
        starts.push(memory.clone());
        memory = record(&dir.path().join(format!("s-{i:03}.jsonl")), &memory, &[add(i)]);
    }
    let texts: Vec<String> = copies(dir.path()).iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert_eq!(texts.len(), MAX_LINKS + 2);
    assert_eq!(texts.iter().filter(|t| t.starts_with("{\"copy\":\"whole\"")).count(), 2);
    for i in [MAX_LINKS, MAX_LINKS + 1] {
        memory_copy::forget_read();
        let session = Session::load(&dir.path().join(format!("s-{i:03}.jsonl"))).unwrap();
        assert_eq!(session.header.memory.unwrap().memory, starts[i], "session {i}");
    }
}

#[test]
fn a_missing_or_damaged_copy_is_an_error_naming_the_file_to_restore() {
    let dir = tempfile::tempdir().unwrap();
    let start = big_memory(2);
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    let after = record(&a, &start, &[add(1)]);
    record(&b, &after, &[]);
    let whole = copies(dir.path())
        .into_iter()
        .find(|f| std::fs::read_to_string(f).unwrap().starts_with("{\"copy\":\"whole\""))
        .unwrap();
    let kept = std::fs::read(&whole).unwrap();
    std::fs::remove_file(&whole).unwrap();
    memory_copy::forget_read();
    for session in [&a, &b] {
        let err = Session::load(session).unwrap_err().to_string();
        assert!(err.starts_with(&session.display().to_string()), "{err}");
        assert!(err.contains(&whole.display().to_string()) && err.contains("is missing"), "{err}");
        assert!(err.contains("copy the sessions' memory/ folder"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
    // One changed byte: the content no longer matches its name.
    let mut damaged = kept.clone();
    let at = damaged.len() / 2;
    damaged[at] = if damaged[at] == b'a' { b'b' } else { b'a' };
    std::fs::write(&whole, &damaged).unwrap();
    let err = Session::load(&a).unwrap_err().to_string();
    assert!(err.contains("is damaged") && err.contains(&whole.display().to_string()), "{err}");
    std::fs::write(&whole, &kept).unwrap();
    assert_eq!(Session::load(&b).unwrap().header.memory.unwrap().memory, after);
}

#[test]
fn a_session_saved_elsewhere_takes_its_memory_copies_along() {
    let dir = tempfile::tempdir().unwrap();
    let start = big_memory(2);
    let after = record(&dir.path().join("a.jsonl"), &start, &[add(1)]);
    let mut h = header();
    h.memory = Some(MemorySnapshot::new("study", after.clone()));
    let mut w = SessionWriter::create(&dir.path().join("b.jsonl"), &h).unwrap();
    let other = dir.path().join("elsewhere/b.jsonl");
    w.save_as(&other).unwrap();
    w.end(Totals::default(), 0, None, &[]).unwrap();
    assert_eq!(copies(&dir.path().join("elsewhere")).len(), 2, "the changes and the copy they are on");
    memory_copy::forget_read();
    assert_eq!(Session::load(&other).unwrap().header.memory.unwrap().memory, after);
}

#[test]
fn demo_sessions_keep_their_memory_in_the_header_and_version_1_headers_read_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let memory = big_memory(2);
    let mut h = header();
    h.memory = Some(MemorySnapshot::new("study", memory.clone()));
    let path = dir.path().join("alone.jsonl");
    SessionWriter::create_self_contained(&path, &h).unwrap().end(Totals::default(), 0, None, &[]).unwrap();
    assert!(copies(dir.path()).is_empty());
    let line = first_line(&path);
    assert!(line.contains("\"memory\":{\"name\":\"study\",\"memory\":{"), "{line}");
    // The same header as version 1 wrote it.
    let v1 = line.replace(&format!("\"version\":{}", crate::session::VERSION), "\"version\":1");
    let old = Session::parse(&v1, &path).unwrap();
    assert_eq!(old.header.version, 1);
    assert_eq!(old.header.memory.unwrap().memory, memory);
}

#[test]
fn a_header_is_written_whole_and_a_torn_one_is_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, "an older file in the way\n").unwrap();
    let mut w = SessionWriter::create(&path, &header()).unwrap();
    w.end(Totals::default(), 0, None, &[]).unwrap();
    // It replaced what was there, and left nothing half-written beside it.
    assert!(Session::load(&path).unwrap().complete());
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert_eq!(names, vec!["s.jsonl".to_string()]);
    // A header cut short (a kill as the run started, before this writer): said as such.
    let line = first_line(&path);
    for cut in [10, line.len() / 2, line.len() - 1] {
        std::fs::write(&path, &line[..cut]).unwrap();
        let err = Session::load(&path).unwrap_err().to_string();
        assert!(err.contains("s.jsonl:1") && err.contains("header is torn"), "{cut}: {err}");
    }
    // Something else on the first line is not a header, torn or not.
    std::fs::write(&path, format!("{}\n{}\n", &line[..line.len() / 2], line)).unwrap();
    let err = Session::load(&path).unwrap_err().to_string();
    assert!(err.contains("not a session header"), "{err}");
    std::fs::write(&path, "hello").unwrap();
    assert!(Session::load(&path).unwrap_err().to_string().contains("not a session header"));
    // A path that is a folder is refused, naming it.
    let err = SessionWriter::create(dir.path(), &header()).err().unwrap().to_string();
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
}

#[test]
fn a_session_named_by_something_other_than_a_file_is_written_into_never_replaced() {
    use std::os::unix::net::UnixListener;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("socket.jsonl");
    let _listener = UnixListener::bind(&path).unwrap();
    let mut h = header();
    h.memory = Some(MemorySnapshot::new("study", big_memory(1)));
    // A socket cannot be opened as a file: the error names it, and it is still a socket.
    let err = SessionWriter::create(&path, &h).err().unwrap().to_string();
    assert!(err.contains("socket.jsonl"), "{err}");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&path).unwrap().file_type().is_socket());
    // Nothing was put beside it.
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    assert_eq!(names, vec!["socket.jsonl".to_string()]);
    // A link is written through: the file it points to holds the session.
    let target = dir.path().join("target.jsonl");
    std::fs::write(&target, "").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    SessionWriter::create(&link, &header()).unwrap().end(Totals::default(), 0, None, &[]).unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(Session::load(&target).unwrap().complete());
}
