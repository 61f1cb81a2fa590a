//! `thoughtscope memory ...` end to end, with `THOUGHTSCOPE_DATA_DIR` in a temp folder:
//! list, show, edit, rm, export, import, clear and names, the exit codes of mistakes, and
//! memory text that cannot reach the terminal raw.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use thoughtscope::memory::{Category, Memory, MemoryStore};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memory-sample.json")
}

fn run(dir: &Path, args: &[&str]) -> Output {
    support::sandboxed(dir).arg("memory").args(args).output().expect("the binary runs")
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

fn stored(dir: &Path, name: &str) -> Memory {
    MemoryStore::new(&dir.join("data")).load(name).expect("loads").expect("exists")
}

#[test]
fn import_list_show_edit_rm_export_clear_round_trip() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let sample = fixture();
    let sample = sample.to_str().expect("utf-8 path");

    // --task names the memory runs on the task use by default.
    let out = ok(&run(dir, &["list", "--task", "math-demo"]));
    assert!(out.contains("memory retreval-math-demo has no entries yet"), "{out}");
    let out = ok(&run(dir, &["import", sample, "--name", "math-demo"]));
    assert!(out.contains("imported memory math-demo (3 entries)"), "{out}");
    assert!(dir.join("data/memory/math-demo.json").is_file());

    // Ranked by confidence × hits: 2 (0.7 × 3), 1 (0.6 × 1), 3 (0 hits).
    let out = ok(&run(dir, &["list", "--name", "math-demo"]));
    let ids: Vec<&str> = out.lines().skip(2).take(3).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(ids, ["2*", "1", "3"], "{out}");
    assert!(out.contains("casework") && out.contains("3/1") && out.contains("v2"), "{out}");
    assert!(
        out.contains("Factor the quadratic before using the formula.") && !out.contains("sign slips"),
        "first line only: {out}"
    );
    assert!(out.contains("approach reliability: algebraic 0.48, casework 0.60"), "{out}");
    // The hostile entry's controls are escaped, never sent raw.
    assert!(out.contains("\\u{1b}]0;pwned") && !out.contains('\u{1b}') && !out.contains('\u{202e}'), "{out}");

    let json: Value = serde_json::from_str(&ok(&run(dir, &["list", "--json", "--name", "math-demo"]))).expect("JSON");
    let ids: Vec<u64> = json["entries"].as_array().expect("entries").iter().filter_map(|e| e["id"].as_u64()).collect();
    assert_eq!(ids, [2, 1, 3]);
    assert_eq!(json["entries"][2]["content"], "Evil \u{1b}]0;pwned\u{7} text \u{202e} reversed", "valid JSON, escaped");
    assert_eq!(json["reliability"]["casework"], 0.6);

    let out = ok(&run(dir, &["show", "2", "--name", "math-demo"]));
    for part in
        ["entry 2 of memory math-demo (pinned)", "missed the empty case", "v1 (replaced at change 8): Count the cases."]
    {
        assert!(out.contains(part), "{part:?} not in {out}");
    }
    let shown: Value =
        serde_json::from_str(&ok(&run(dir, &["show", "1", "--json", "--name", "math-demo"]))).expect("JSON");
    assert_eq!(shown["sources"][0], "math-demo/3");

    let out = ok(&run(
        dir,
        &[
            "edit",
            "1",
            "--content",
            "Factor first; check roots.",
            "--confidence",
            "0.9",
            "--pin",
            "--name",
            "math-demo",
        ],
    ));
    assert!(out.contains("edited entry 1 of memory math-demo (version 2)"), "{out}");
    let m = stored(dir, "math-demo");
    let e = m.entry(1).expect("entry 1");
    assert_eq!((e.content.as_str(), e.confidence, e.pinned, e.version), ("Factor first; check roots.", 0.9, true, 2));
    assert_eq!(e.history[0].content, "Factor the quadratic before using the formula.\nIt avoids sign slips.");
    ok(&run(dir, &["edit", "1", "--unpin", "--name", "math-demo"]));
    assert!(!stored(dir, "math-demo").entry(1).expect("entry").pinned);

    let out = ok(&run(dir, &["rm", "3", "--name", "math-demo"]));
    assert!(out.contains("removed entry 3"), "{out}");
    assert_eq!(stored(dir, "math-demo").entries().iter().map(|e| e.id).collect::<Vec<_>>(), [1, 2]);

    // Export to a file and to stdout: the same memory, and the file imports elsewhere.
    let exported = dir.join("export.json");
    ok(&run(dir, &["export", "--name", "math-demo", "--out", exported.to_str().expect("path")]));
    let stdout_json = ok(&run(dir, &["export", "--name", "math-demo"]));
    let from_file: Value = serde_json::from_str(&std::fs::read_to_string(&exported).expect("file")).expect("JSON");
    assert_eq!(from_file, serde_json::from_str::<Value>(&stdout_json).expect("JSON"));
    ok(&run(dir, &["import", exported.to_str().expect("path"), "--name", "copy"]));
    assert_eq!(stored(dir, "copy"), stored(dir, "math-demo"));

    // Importing into a memory with entries needs --merge; duplicates are left out.
    usage_error(&run(dir, &["import", sample, "--name", "copy"]), "add --merge");
    let out = ok(&run(dir, &["import", sample, "--name", "copy", "--merge"]));
    assert!(out.contains("imported 2 entries into memory copy (1 duplicates left out"), "{out}");
    assert_eq!(stored(dir, "copy").len(), 4);

    let out = ok(&run(dir, &["names"]));
    assert_eq!(out.lines().collect::<Vec<_>>(), ["copy  4 entries", "math-demo  2 entries"]);

    // clear asks for --yes, then empties the memory (ids are not reused).
    usage_error(&run(dir, &["clear", "--name", "copy"]), "run again with --yes");
    assert_eq!(stored(dir, "copy").len(), 4);
    let out = ok(&run(dir, &["clear", "--yes", "--name", "copy"]));
    assert!(out.contains("cleared memory copy (4 entries removed)"), "{out}");
    let cleared = stored(dir, "copy");
    assert!(cleared.is_empty() && cleared.reliabilities().is_empty());
}

#[test]
fn the_default_memory_is_the_one_runs_on_the_task_use() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let mut store = MemoryStore::new(&dir.join("data"));
    store
        .update("retreval-game24", |m| {
            Ok(m.add("use the biggest numbers first", Category::Insight, "numeric", None)?)
        })
        .expect("seed");
    let out = ok(&run(dir, &["list"]));
    assert!(out.starts_with("memory retreval-game24: 1 entries"), "{out}");
    assert!(ok(&run(dir, &["list", "--task", "game24"])).contains("use the biggest numbers first"));
    // The config's default task names the memory when no --task is given.
    std::fs::create_dir_all(dir.join("config")).expect("config dir");
    std::fs::write(dir.join("config/config.toml"), "[defaults]\ntask = \"math-demo\"\n").expect("config");
    assert!(ok(&run(dir, &["list"])).contains("memory retreval-math-demo has no entries yet"));
    // ... and the config's default memory, like `run`'s, comes first.
    std::fs::write(dir.join("config/config.toml"), "[defaults]\ntask = \"math-demo\"\nmemory = \"study\"\n")
        .expect("config");
    assert!(ok(&run(dir, &["list"])).contains("memory study has no entries yet"));
}

#[test]
fn mistakes_are_one_line_with_exit_code_two() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let sample = fixture();
    let sample = sample.to_str().expect("utf-8 path");
    usage_error(&run(dir, &["list", "--name", "../etc"]), "bad memory name \"../etc\"");
    usage_error(&run(dir, &["list", "--name", &"x".repeat(65)]), "bad memory name");
    usage_error(&run(dir, &["list", "--task", "chess"]), "unknown task \"chess\"");
    usage_error(&run(dir, &["show", "1", "--name", "nothing"]), "there is no memory named nothing");
    ok(&run(dir, &["import", sample, "--name", "m"]));
    usage_error(&run(dir, &["show", "9", "--name", "m"]), "memory m has no entry 9");
    usage_error(&run(dir, &["rm", "9", "--name", "m"]), "memory m has no entry 9");
    usage_error(&run(dir, &["edit", "1", "--name", "m"]), "needs --content TEXT, --confidence X, --pin or --unpin");
    usage_error(&run(dir, &["edit", "1", "--confidence", "1.5", "--name", "m"]), "between 0 and 1, not 1.5");
    usage_error(&run(dir, &["edit", "1", "--content", "   ", "--name", "m"]), "the memory content is empty");
    usage_error(&run(dir, &["show", "x", "--name", "m"]), "invalid value 'x'");
    // A malformed import file is refused and names the file; the memory is unchanged.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"format\": \"thoughtscope-memory\", \"version\": 7, \"memory\": {}}").expect("write");
    usage_error(
        &run(dir, &["import", bad.to_str().expect("path"), "--name", "m", "--merge"]),
        "bad.json has format version 7",
    );
    usage_error(&run(dir, &["import", "missing.json", "--name", "m2"]), "missing.json");
    assert_eq!(stored(dir, "m").len(), 3);
    // A stored file that went bad is an error naming it (exit 1), never an empty memory.
    let stored_file = dir.join("data/memory/m.json");
    std::fs::write(&stored_file, "{ not json").expect("corrupt");
    let out = run(dir, &["list", "--name", "m"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("m.json is not a valid memory"), "{stderr}");
    let out = run(dir, &["rm", "1", "--name", "m"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&stored_file).expect("file"), "{ not json", "left as it was");
    // `names` reports it rather than hiding it.
    assert!(ok(&run(dir, &["names"])).contains("m  unreadable: memory file"));
}
