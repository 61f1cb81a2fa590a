//! Runs with a named cross-problem memory, end to end through the binary, with
//! `THOUGHTSCOPE_DATA_DIR` in a temp folder: `--memory` and its mistakes, math-demo's
//! passes past its 42 problems, replays that never write the memory file, and a
//! ReTreVal sequence of problems where problem k+1 starts from the memory problem k saved.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use thoughtscope::memory::{Memory, MemoryStore};
use thoughtscope::session::Session;

fn run(dir: &Path, args: &[&str]) -> Output {
    support::sandboxed(dir).args(args).output().expect("the binary runs")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A usage error: exit 2 and one `error:` line that contains `expected`.
fn usage_error(out: &Output, expected: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("error:") && stderr.contains(expected), "{expected:?} not in {stderr}");
}

/// `--out`'s lines in problem order (they are written as problems end).
fn lines(path: &Path) -> Vec<Value> {
    let mut rs: Vec<Value> = std::fs::read_to_string(path)
        .expect("out file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    rs.sort_by_key(|r| r["index"].as_u64());
    rs
}

#[test]
fn memory_with_a_method_that_keeps_none_is_one_plain_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = run(tmp.path(), &["run", "--task", "math-demo", "--method", "cot", "--range", "0", "--memory", "study"]);
    usage_error(&out, "--memory needs a method that keeps a memory (retreval); drop it or use --method retreval");
    assert!(!tmp.path().join("data/memory").exists(), "nothing written");
    // The explorer checks the same before it needs a terminal.
    let out = run(tmp.path(), &["tui", "--task", "math-demo", "--method", "cot", "--range", "0", "--memory", "study"]);
    usage_error(&out, "--memory needs a method that keeps a memory");
}

#[test]
fn a_config_default_memory_does_not_get_in_the_way_of_methods_without_one() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("config")).expect("config dir");
    std::fs::write(tmp.path().join("config/config.toml"), "[defaults]\nmemory = \"study\"\n").expect("config");
    let out = run(tmp.path(), &["run", "--task", "math-demo", "--method", "cot", "--range", "0", "--json"]);
    let summary: Value = serde_json::from_str(&ok(&out)).expect("JSON");
    assert!(summary.get("memory").is_none(), "{summary}");
    assert!(!tmp.path().join("data/memory").exists());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("defaults.memory"), "no warning for a known key");
}

#[test]
fn math_demo_ranges_past_42_are_further_passes_with_their_index_and_pass() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out_file = tmp.path().join("out.jsonl");
    let out = run(
        tmp.path(),
        &["run", "--task", "math-demo", "--method", "cot", "--range", "40..45", "--out", "out.jsonl", "--json"],
    );
    let summary: Value = serde_json::from_str(&ok(&out)).expect("JSON");
    assert_eq!(summary["n"], 5);
    let rs = lines(&out_file);
    let indices: Vec<u64> = rs.iter().map(|r| r["index"].as_u64().expect("index")).collect();
    assert_eq!(indices, [40, 41, 42, 43, 44]);
    assert!(rs[0]["facets"].get("pass").is_none() && rs[1]["facets"].get("pass").is_none());
    let order = thoughtscope::tasks::math::demo::pass_order(1);
    for (r, k) in rs[2..].iter().zip(0..) {
        assert_eq!(r["facets"]["pass"], "1", "{r}");
        assert_eq!(r["input"], thoughtscope::tasks::math::demo::PROBLEMS[order[k]].problem);
    }
    assert_eq!(summary["by"]["pass"]["1"]["n"], 3, "{summary}");
    // Past the last pass is one line saying how far indices go.
    let out = run(tmp.path(), &["run", "--task", "math-demo", "--method", "cot", "--range", "0..999999"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("further passes"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Other tasks keep their end.
    let out = run(tmp.path(), &["run", "--task", "mc-demo", "--method", "cot", "--range", "0..100"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("16 problems (indices 0..16)"));
}

/// A session recorded with a memory snapshot replays from its header alone: no memory
/// file is read or written.
#[test]
fn replaying_a_session_with_a_memory_snapshot_writes_no_memory_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let rec = tmp.path().join("s.jsonl");
    ok(&run(
        tmp.path(),
        &["run", "--task", "math-demo", "--method", "cot", "--range", "2", "--record", rec.to_str().expect("path")],
    ));
    // Give the header a snapshot, as a memory-keeping run records it.
    let text = std::fs::read_to_string(&rec).expect("session");
    let (first, rest) = text.split_once('\n').expect("header line");
    let mut header: Value = serde_json::from_str(first).expect("header");
    let mut memory = Memory::default();
    memory
        .add(
            "algebraic approach, arithmetic_error: recheck",
            thoughtscope::memory::Category::Failure,
            "algebraic",
            None,
        )
        .expect("add");
    header["memory"] = serde_json::json!({"name": "study", "memory": memory});
    std::fs::write(&rec, format!("{header}\n{rest}")).expect("rewrite");
    let live: Value =
        serde_json::from_str(&ok(&run(tmp.path(), &["replay", rec.to_str().expect("path"), "--headless", "--json"])))
            .expect("JSON");
    assert_eq!(live["n"], 1, "{live}");
    let session = Session::load(&rec).expect("loads");
    assert_eq!(session.header.memory.expect("snapshot").memory, memory);
    assert!(!tmp.path().join("data/memory").exists(), "a replay writes no memory file");
}

// ---- pending the ReTreVal method (issue 13): run with --include-ignored after the merge ----

/// The memory each session's header starts from, and the memory its recorded changes
/// lead to.
fn memory_path(session: &Session) -> (String, Memory, Memory) {
    let snapshot = session.header.memory.clone().expect("the header records the memory");
    let mut after = snapshot.memory.clone();
    for event in session.events() {
        if let thoughtscope::engine::Event::Memory { change } = event {
            after.apply(change).expect("a recorded change applies");
        }
    }
    (snapshot.name, snapshot.memory, after)
}

/// The memory a retreval run on math-demo with `sim` uses by default: one per task and model.
const DEFAULT: &str = "retreval-math-demo-sim-1-simulated";

#[test]
fn retreval_saves_its_memory_after_each_problem_and_the_next_starts_from_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = run(
        tmp.path(),
        &[
            "run",
            "--task",
            "math-demo",
            "--method",
            "retreval",
            "--range",
            "0..4",
            "--record",
            "sessions",
            "--out",
            "out.jsonl",
            "--json",
        ],
    );
    let summary: Value = serde_json::from_str(&ok(&out)).expect("JSON");
    assert_eq!(summary["memory"]["name"], DEFAULT, "{summary}");
    let file = tmp.path().join("data/memory/retreval-math-demo-sim-1-simulated.json");
    assert!(file.is_file(), "the default memory is retreval-<task>-<model>");
    let rs = lines(&tmp.path().join("out.jsonl"));
    assert_eq!(rs.len(), 4);
    let mut previous: Option<Memory> = None;
    let mut changed = false;
    for r in &rs {
        let session = Session::load(&tmp.path().join(r["session"].as_str().expect("session"))).expect("loads");
        let (name, before, after) = memory_path(&session);
        assert_eq!(name, DEFAULT);
        if let Some(prev) = &previous {
            assert_eq!(&before, prev, "problem k+1 starts from the memory problem k left");
        } else {
            assert_eq!(before, Memory::default(), "the first problem starts from an empty memory");
        }
        assert_eq!(r["memory"]["entries_before"], before.len());
        assert_eq!(r["memory"]["entries_after"], after.len());
        changed |= before != after;
        previous = Some(after);
    }
    assert!(changed, "four problems taught the memory something");
    let stored = MemoryStore::new(&tmp.path().join("data")).load(DEFAULT).expect("loads").expect("exists");
    assert_eq!(Some(stored), previous, "the file is what the last problem left");
    // A second run goes on from there.
    ok(&run(
        tmp.path(),
        &["run", "--task", "math-demo", "--method", "retreval", "--range", "4", "--record", "s4.jsonl"],
    ));
    let (_, before, _) = memory_path(&Session::load(&tmp.path().join("s4.jsonl")).expect("loads"));
    assert_eq!(Some(before), previous);
}

#[test]
fn retreval_memory_names_and_ablation() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = ["run", "--task", "math-demo", "--method", "retreval", "--range", "0"];
    ok(&run(tmp.path(), &[&base[..], &["--memory", "study"]].concat()));
    assert!(tmp.path().join("data/memory/study.json").is_file());
    assert!(!tmp.path().join("data/memory/retreval-math-demo-sim-1-simulated.json").exists());
    usage_error(&run(tmp.path(), &[&base[..], &["--memory", "../escape"]].concat()), "bad memory name");
    usage_error(&run(tmp.path(), &[&base[..], &["--memory", ""]].concat()), "bad memory name");
    // --no-memory: the method keeps none, so no file, no snapshot, and --memory is refused.
    let fresh = tempfile::tempdir().expect("tempdir");
    ok(&run(fresh.path(), &[&base[..], &["--no-memory", "--record", "s.jsonl"]].concat()));
    assert!(!fresh.path().join("data/memory").exists());
    assert!(Session::load(&fresh.path().join("s.jsonl")).expect("loads").header.memory.is_none());
    usage_error(
        &run(fresh.path(), &[&base[..], &["--no-memory", "--memory", "study"]].concat()),
        "--memory needs a method that keeps a memory",
    );
}

#[test]
fn retreval_stops_with_one_line_when_its_memory_cannot_be_saved() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("data/memory/.retreval-math-demo-sim-1-simulated.json.tmp"))
        .expect("blocker");
    let out = run(
        tmp.path(),
        &["run", "--task", "math-demo", "--method", "retreval", "--range", "0..3", "--record", "sessions"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("cannot save memory") && stderr.contains("retreval-math-demo-sim-1-simulated.json"),
        "{stderr}"
    );
    // The sessions folder also keeps the memory copies the sessions start from (memory/).
    let recorded: Vec<_> = std::fs::read_dir(tmp.path().join("sessions"))
        .expect("sessions")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(recorded.len(), 1, "the first problem's session stays; no other starts: {recorded:?}");
}

#[test]
fn retreval_replay_and_fork_start_from_the_recorded_memory_and_write_no_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    ok(&run(
        tmp.path(),
        &["run", "--task", "math-demo", "--method", "retreval", "--range", "0..2", "--record", "sessions"],
    ));
    let file = tmp.path().join("data/memory/retreval-math-demo-sim-1-simulated.json");
    let saved = std::fs::read(&file).expect("memory file");
    let second = tmp.path().join("sessions/math-demo-0001-retreval.jsonl");
    let live: Value = serde_json::from_str(&ok(&run(
        tmp.path(),
        &["replay", second.to_str().expect("path"), "--headless", "--json"],
    )))
    .expect("JSON");
    assert_eq!(live["n"], 1);
    assert_eq!(std::fs::read(&file).expect("memory file"), saved, "a replay writes no memory file");
    // A fork carries the parent's snapshot.
    let parent = Session::load(&second).expect("loads");
    let fork = tmp.path().join("fork.jsonl");
    drop(thoughtscope::session::SessionWriter::fork(&fork, &parent, parent.input_count() / 2).expect("fork"));
    assert_eq!(Session::load(&fork).expect("loads").header.memory, parent.header.memory);
}

#[test]
fn the_default_memory_is_per_task_and_model_and_the_old_shared_one_is_kept_and_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // A memory under the old default name (every model shared it).
    let store = MemoryStore::new(&tmp.path().join("data"));
    let mut old = Memory::default();
    old.add(
        "casework approach, off_by_one: count both ends",
        thoughtscope::memory::Category::Failure,
        "casework",
        None,
    )
    .expect("adds");
    let mut writer = store.clone();
    writer.save("retreval-math-demo", &old).expect("saves");
    let old_file = tmp.path().join("data/memory/retreval-math-demo.json");
    let old_bytes = std::fs::read(&old_file).expect("old file");
    let base = ["run", "--task", "math-demo", "--method", "retreval", "--range", "0"];
    let out = run(tmp.path(), &base);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "note: memory retreval-math-demo (the default before memories were named per model, shared by every \
             model) is kept as it is; this run starts memory {DEFAULT} for this model; give --memory \
             retreval-math-demo to go on with the shared one"
        )),
        "{stderr}"
    );
    assert!(tmp.path().join(format!("data/memory/{DEFAULT}.json")).is_file());
    assert_eq!(std::fs::read(&old_file).expect("old file"), old_bytes, "the old memory is kept as it was");
    // Said once, when the per-model memory starts.
    let again = run(tmp.path(), &["run", "--task", "math-demo", "--method", "retreval", "--range", "1"]);
    ok(&again);
    assert!(!String::from_utf8_lossy(&again.stderr).contains("note: memory retreval-math-demo "));
    // --memory with the old name goes on with the shared memory, without a note.
    let shared = run(tmp.path(), &[&base[..], &["--memory", "retreval-math-demo", "--record", "s.jsonl"]].concat());
    ok(&shared);
    assert!(!String::from_utf8_lossy(&shared.stderr).contains("note: memory"));
    let session = Session::load(&tmp.path().join("s.jsonl")).expect("loads");
    let (name, before, _) = memory_path(&session);
    assert_eq!(name, "retreval-math-demo");
    assert_eq!(before.entries(), old.entries(), "the shared memory's lessons are used");
    // `memory list --task T --model M` names the per-model memory; without --model, the shared one.
    let listed = ok(&run(tmp.path(), &["memory", "list", "--task", "math-demo", "--model", "sim-1 (simulated)"]));
    assert!(listed.contains(&format!("memory {DEFAULT}: ")), "{listed}");
    let listed = ok(&run(tmp.path(), &["memory", "list", "--task", "math-demo"]));
    assert!(listed.contains("memory retreval-math-demo: "), "{listed}");
}

#[test]
fn each_lesson_says_whether_its_outcome_was_checked_against_the_gold_answer_or_only_self_validated() {
    use thoughtscope::memory::Evidence;
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = ["run", "--task", "math-demo", "--method", "retreval", "--range", "0..3"];
    ok(&run(tmp.path(), &[&base[..], &["--memory", "own"]].concat()));
    ok(&run(tmp.path(), &[&base[..], &["--memory", "graded", "--feedback", "oracle"]].concat()));
    let store = MemoryStore::new(&tmp.path().join("data"));
    for (name, evidence) in [("own", Evidence::SelfValidated), ("graded", Evidence::Gold)] {
        let memory = store.load(name).expect("loads").expect("exists");
        assert!(!memory.is_empty(), "{name} learnt something");
        assert!(memory.entries().iter().all(|e| e.evidence == Some(evidence)), "{name}: {:?}", memory.entries());
        let listed = ok(&run(tmp.path(), &["memory", "list", "--memory", name]));
        let header = listed.lines().find(|l| l.contains("hits/misses")).expect("a header line");
        assert!(header.contains("evidence"), "{listed}");
        let column = format!("  {}  ", evidence.name());
        assert!(listed.lines().filter(|l| l.contains("approach")).count() >= 1);
        assert!(listed.contains(&column), "{listed}");
        let shown = ok(&run(tmp.path(), &["memory", "show", &memory.entries()[0].id.to_string(), "--memory", name]));
        assert!(shown.contains(&format!("evidence:   {}", evidence.name())), "{shown}");
    }
    // An entry written before evidence was kept loads, and shows none.
    let file = tmp.path().join("data/memory/own.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).expect("file")).expect("JSON");
    for e in v["memory"]["entries"].as_array_mut().expect("entries") {
        e.as_object_mut().expect("entry").remove("evidence");
    }
    v["memory"]["params"].as_object_mut().expect("params").remove("record_evidence");
    let old = serde_json::to_string_pretty(&v).expect("JSON");
    assert!(!old.contains("self_validated") && !old.contains("record_evidence"), "{old}");
    std::fs::write(&file, old).expect("write");
    let memory = store.load("own").expect("an old file loads").expect("exists");
    assert!(memory.entries().iter().all(|e| e.evidence.is_none()));
    let listed = ok(&run(tmp.path(), &["memory", "list", "--memory", "own"]));
    assert!(!listed.contains("  self  "), "{listed}");
}
