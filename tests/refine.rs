//! Self-Refine and Reflexion from the command line: headless runs on the simulated
//! model, their parameters in the session header, replay agreeing with the run, and
//! their flags refused where they do not belong.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
}

fn run_json(args: &[&str]) -> Value {
    let out = bin().args(args).output().expect("the binary runs");
    assert!(out.status.success(), "{args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| panic!("no output from {args:?}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn without_time(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("wall_ms");
    v
}

/// Every line of every session file in `dir`, parsed.
fn session_lines(dir: &Path) -> Vec<Vec<Value>> {
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect())
        .collect()
}

/// The purposes of the requests a session recorded.
fn purposes(lines: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                if let (Some(Value::String(p)), Some(_)) = (map.get("purpose"), map.get("messages")) {
                    out.push(p.clone());
                }
                map.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    lines.iter().for_each(|l| walk(l, &mut out));
    out
}

/// The ToT paper's IO + Refine: the checker's feedback (no feedback calls), up to 10
/// refinements; the summary and the replay agree.
#[test]
fn io_plus_refine_on_game24_runs_records_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("sessions");
    let rec_s = rec.to_str().unwrap();
    let args = [
        "run",
        "--task",
        "game24",
        "--method",
        "self-refine",
        "--feedback",
        "oracle",
        "--rounds",
        "10",
        "--first",
        "io",
        "--range",
        "900..910",
        "--record",
        rec_s,
        "--json",
    ];
    let s = run_json(&args);
    assert_eq!(s["method"], "self-refine");
    assert_eq!(s["n"], 10);
    let solved = s["solved"].as_u64().unwrap();
    assert!(solved > 0 && solved < 10, "some but not all puzzles solved on the default sim: {s}");
    let calls = s["llm_calls"].as_u64().unwrap();
    assert!(calls > 10 && calls <= 110, "one answer and at most 10 refinements each: {s}");
    assert_eq!(s["params"]["feedback"], "oracle");
    assert_eq!(s["params"]["rounds"], 10);
    let sessions = session_lines(&rec);
    assert_eq!(sessions.len(), 10);
    for lines in &sessions {
        assert_eq!(lines[0]["params"]["rounds"], 10, "the header records the parameters");
        assert_eq!(lines[0]["params"]["first"], "io");
        let p = purposes(lines);
        assert_eq!(p.first().map(String::as_str), Some("io"), "{p:?}");
        assert!(p.iter().all(|p| p == "io" || p == "refine"), "the checker judges without calls: {p:?}");
        assert!(p.len() <= 11);
    }
    let replayed = run_json(&["replay", rec_s, "--headless", "--json"]);
    assert_eq!(without_time(replayed), without_time(s));

    // The command without --first starts from a cot answer and works the same way.
    let s = run_json(&[
        "run",
        "--task",
        "game24",
        "--method",
        "self-refine",
        "--feedback",
        "oracle",
        "--rounds",
        "10",
        "--range",
        "900..910",
        "--json",
    ]);
    assert_eq!(s["n"], 10);
    assert!(s["solved"].as_u64().unwrap() > 0, "{s}");
}

/// Self-Refine with the model's own feedback: feedback and refine calls alternate.
#[test]
fn self_refine_with_self_feedback_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("sessions");
    let rec_s = rec.to_str().unwrap();
    let s = run_json(&[
        "run",
        "--task",
        "game24",
        "--method",
        "self-refine",
        "--rounds",
        "3",
        "--range",
        "900..906",
        "--record",
        rec_s,
        "--json",
    ]);
    assert_eq!(s["n"], 6);
    for lines in session_lines(&rec) {
        let p = purposes(&lines);
        assert_eq!(p[0], "cot");
        for (i, purpose) in p.iter().enumerate().skip(1) {
            assert_eq!(purpose, if i % 2 == 1 { "feedback" } else { "refine" }, "{p:?}");
        }
        assert!(p.len() <= 1 + 2 * 3 + 1, "at most 3 refinements: {p:?}");
    }
    let replayed = run_json(&["replay", rec_s, "--headless", "--json"]);
    assert_eq!(without_time(replayed), without_time(s));
}

/// Reflexion on sim: trials, self-evaluations and reflections; later trials carry the
/// reflections; the replay agrees.
#[test]
fn reflexion_runs_on_sim_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("sessions");
    let rec_s = rec.to_str().unwrap();
    let s = run_json(&[
        "run",
        "--task",
        "game24",
        "--method",
        "reflexion",
        "--trials",
        "4",
        "--range",
        "900..910",
        "--record",
        rec_s,
        "--json",
    ]);
    assert_eq!(s["method"], "reflexion");
    assert_eq!(s["n"], 10);
    assert_eq!(s["params"]["trials"], 4);
    let mut reflected = 0;
    for lines in session_lines(&rec) {
        let p = purposes(&lines);
        assert!(p.iter().filter(|p| *p == "cot").count() <= 4, "{p:?}");
        reflected += p.iter().filter(|p| *p == "reflect").count();
    }
    assert!(reflected > 0, "some trials failed and were reflected on");
    let text: String = session_lines(&rec).concat().iter().map(|l| l.to_string()).collect();
    assert!(text.contains("\"reflections\":["), "later trials carry the reflections in their context");
    let replayed = run_json(&["replay", rec_s, "--headless", "--json"]);
    assert_eq!(without_time(replayed), without_time(s));
    // Oracle judgement works too.
    let s = run_json(&["run", "--method", "reflexion", "--feedback", "oracle", "--range", "900..905", "--json"]);
    assert_eq!(s["n"], 5);
}

#[test]
fn their_flags_are_refused_elsewhere_and_checked() {
    for (args, says) in [
        (&["--method", "tot-bfs", "--rounds", "3"][..], "--rounds is for --method self-refine (the method is tot-bfs)"),
        (
            &["--method", "reflexion", "--rounds", "3"][..],
            "--rounds is for --method self-refine (the method is reflexion)",
        ),
        (
            &["--method", "self-refine", "--trials", "3"][..],
            "--trials is for --method reflexion (the method is self-refine)",
        ),
        (
            &["--method", "cot", "--feedback", "oracle"][..],
            "--feedback is for --method self-refine, reflexion or retreval (the method is cot)",
        ),
        (
            &["--method", "self-refine", "--rounds", "51"][..],
            "rounds (--rounds) is 51: it must be a whole number from 1 to 50",
        ),
        (
            &["--method", "reflexion", "--trials", "21"][..],
            "trials (--trials) is 21: it must be a whole number from 1 to 20",
        ),
    ] {
        let out = bin().args(["run", "--input", "4 9 10 13"]).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    let out = bin()
        .args(["run", "--input", "4 9 10 13", "--method", "self-refine", "--feedback", "teacher"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'teacher' for '--feedback"));
    // --feedback belongs to both methods.
    let s = run_json(&["run", "--input", "4 9 10 13", "--method", "reflexion", "--feedback", "oracle", "--json"]);
    assert_eq!(s["params"]["feedback"], "oracle");
}
