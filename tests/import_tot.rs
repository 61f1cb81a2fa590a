//! `thoughtscope import tot-log`: the log's format is validated (other kinds of reference
//! logs are refused, naming what was expected and what was found), `--verify` checks
//! selections, final paths and verdicts, a puzzle listed twice is an error, and the log's
//! token usage reaches the sessions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn run(args: &[&str]) -> Output {
    bin().env("NO_COLOR", "1").args(args).output().expect("the binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn last_json(out: &Output) -> Value {
    assert!(out.status.success(), "failed:\n{}", stderr(out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().expect("output")).expect("JSON")
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

/// tot-log-3.json changed by `edit`, written to `dir/name`.
fn edited_log(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut log: Value = serde_json::from_str(&std::fs::read_to_string(fixture("tot-log-3.json")).unwrap()).unwrap();
    edit(&mut log);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&log).unwrap()).unwrap();
    path
}

#[test]
fn other_kinds_of_reference_logs_are_refused_naming_the_file_and_the_formats() {
    // Creative-writing logs are imported now (tests/import_logs.rs).
    let cases = [("react-text-sample.txt", "not JSON")];
    for (name, found) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("sessions");
        let file = fixture(name);
        let out = run(&["import", "tot-log", file.to_str().unwrap(), "--out", out_dir.to_str().unwrap(), "--verify"]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{name} was accepted");
        assert!(err.contains(&format!("{}: ", file.display())), "{name}: the message names the file: {err}");
        assert!(err.contains(found), "{name}: says what it found: {err}");
        // Naive logs, the crossword DFS log and writing's BFS log are imported
        // (tests/import_logs.rs); what is none of them names the formats it expected.
        assert!(err.contains("Game-of-24 BFS log"), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(files_in(&out_dir), 0, "{name}: nothing is written");
    }
}

#[test]
fn a_file_name_that_names_another_search_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // The reference's name for a creative-writing run (sample + vote).
    let path = edited_log(dir.path(), "gpt-4_1.0_sample5_vote5_greedy1_start0_end100.json", |_| {});
    let out = run(&["import", "tot-log", path.to_str().unwrap(), "--verify"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("the file name says --method_generate sample"), "{}", stderr(&out));
}

#[test]
fn verify_fails_on_an_edited_final_path_naming_the_puzzle_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited_log(dir.path(), "edited.json", |log| {
        // A final answer written onto the first final path.
        let y = &mut log[0]["ys"][0];
        *y = Value::String(format!("{}Answer: (4 * 5) + (10 - 6) = 24\n", y.as_str().unwrap()));
    });
    let out = run(&["import", "tot-log", path.to_str().unwrap(), "--verify"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "an edited final path passed: {err}");
    assert!(err.contains("puzzle 900 (4 5 6 10): final paths (ys): final path 1: we have"), "{err}");
    assert!(err.contains("1 of 3 puzzles differ from the log; the first: puzzle 900"), "{err}");
}

#[test]
fn verify_fails_on_an_edited_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited_log(dir.path(), "edited.json", |log| log[1]["infos"][0]["r"] = Value::from(1));
    let out = run(&["import", "tot-log", path.to_str().unwrap(), "--verify"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "an edited verdict passed: {err}");
    assert!(err.contains("puzzle 901 (1 1 4 6): verdict on final path 1"), "{err}");
    assert!(err.contains("we find it wrong (r 0), the log's infos say correct (r 1)"), "{err}");
}

#[test]
fn a_puzzle_listed_twice_is_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited_log(dir.path(), "twice.json", |log| log[2]["idx"] = Value::from(900));
    let out_dir = dir.path().join("sessions");
    let out = run(&["import", "tot-log", path.to_str().unwrap(), "--out", out_dir.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains("puzzle idx 900 appears twice (entries 0 and 2)"), "{err}");
    assert_eq!(files_in(&out_dir), 0);
}

/// Another run of the reference (5 value samples, 3 states kept) verifies, from its
/// file name or from the log alone, and its sessions carry the log's tokens.
#[test]
fn another_runs_log_verifies_and_its_sessions_carry_the_logs_tokens() {
    let name = "gpt-4_0.7_propose1_value5_greedy3_start900_end903.json";
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("renamed.json");
    std::fs::copy(fixture(name), &renamed).unwrap();
    for (i, file) in [fixture(name), renamed].iter().enumerate() {
        let out_dir = dir.path().join(format!("sessions-{i}"));
        let s = last_json(&run(&[
            "import",
            "tot-log",
            file.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--verify",
            "--json",
        ]));
        assert_eq!((s["steps"].as_u64(), s["steps_agreeing"].as_u64()), (Some(12), Some(12)), "{s}");
        assert_eq!(s["puzzles_agreeing"], 3, "{s}");
        assert_eq!((s["n_evaluate"].as_u64(), s["breadth"].as_u64()), (Some(5), Some(3)), "{s}");
        // usage_so_far is cumulative: the last puzzle's figures are the run's.
        assert_eq!((s["prompt_tokens"].as_u64(), s["completion_tokens"].as_u64()), (Some(6021), Some(1803)), "{s}");
        let replayed = last_json(&run(&["replay", out_dir.to_str().unwrap(), "--headless", "--json"]));
        assert_eq!(replayed["n"], 3);
        assert_eq!(replayed["prompt_tokens"], 6021, "{replayed}");
        assert_eq!(replayed["completion_tokens"], 1803, "{replayed}");
        // The reference's value cache lasts the run: 34 values it held were not asked again
        // (cache hits, no tokens); 30 proposals and 73 values were.
        assert_eq!(
            (replayed["llm_calls"].as_u64(), replayed["cache_hits"].as_u64()),
            (Some(103), Some(34)),
            "{replayed}"
        );
        // Every reply the cache gave carries no tokens, and every one with tokens was asked.
        let mut hits = 0;
        for entry in std::fs::read_dir(&out_dir).unwrap() {
            for line in std::fs::read_to_string(entry.unwrap().path()).unwrap().lines() {
                let v: Value = serde_json::from_str(line).unwrap();
                let Some(ok) = v["input"]["result"].get("Ok").filter(|_| v["input"]["type"] == "llm_reply") else {
                    continue;
                };
                if ok["cached"] == true {
                    hits += 1;
                    let usage = (&ok["usage"]["prompt_tokens"], &ok["usage"]["completion_tokens"]);
                    assert_eq!(usage, (&Value::from(0), &Value::from(0)), "a cache hit with tokens: {line}");
                }
            }
        }
        assert_eq!(hits, 34);
        let first = std::fs::read_to_string(out_dir.join("tot-log-0900.jsonl")).unwrap();
        let header: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
        assert_eq!(header["params"]["breadth"], 3, "{header}");
        assert_eq!(header["params"]["n_evaluate"], 5, "{header}");
    }
}

/// The shared Game-of-24 BFS log: the reference made 4,546 calls and its value cache
/// answered 5,451 more. Imported, and re-driven through the live search from the
/// recording, those are the calls and the cache hits, the hits with no tokens, and no
/// call fails.
#[test]
fn the_shared_bfs_log_re_drives_with_the_references_calls_and_cache_hits() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/tot/gpt-4_0.7_propose1_value3_greedy5_start900_end1000.json");
    if !log.exists() {
        println!("skipped: {} is absent (the shared data folder is not next to this clone)", log.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sessions");
    let s = last_json(&run(&["import", "tot-log", log.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]));
    assert_eq!((s["prompt_tokens"].as_u64(), s["completion_tokens"].as_u64()), (Some(1_387_936), Some(547_859)));
    let mut args = vec!["run", "--task", "game24", "--method", "tot-bfs", "--breadth", "5", "--n-evaluate", "3"];
    args.extend(["--steps", "4", "--lenient", "--temperature", "0.7", "--range", "900..1000"]);
    args.extend(["--provider", "replay", "--replay-from", out.to_str().unwrap(), "--json"]);
    let r = last_json(&run(&args));
    let counts = (r["llm_calls"].as_u64(), r["cache_hits"].as_u64(), r["failed_calls"].as_u64());
    assert_eq!(counts, (Some(4546), Some(5451), None), "{r}");
    // All the log's tokens, on the calls it made.
    assert_eq!((r["prompt_tokens"].as_u64(), r["completion_tokens"].as_u64()), (Some(1_387_936), Some(547_859)));
    assert_eq!((r["solved"].as_u64(), r["solved_any"].as_u64()), (Some(62), Some(69)), "{r}");
}
