//! A task file's commands and files against hostile or broken setups (issue 46, items 1
//! to 5 and the task-file findings of 13), one case per family:
//!
//! * a session never runs a program by being opened: replay, export, diff, a replay of a
//!   session recorded before verdicts were inputs; a re-run that does run them names them;
//! * the task file, its problems, prompts and corpus are read by the safe reader and stay
//!   inside the task's folder (FIFOs, devices, links out, `..`, absolute paths, huge rows);
//! * check commands obey their limit whatever they do, and one that fails is an error of
//!   the task, never a wrong answer, found by `task check` before a run.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Wait at most `limit` for `child`; kill it and fail if it is still running.
fn wait_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// `thoughtscope ARGS` in `dir` (sandboxed, stdin closed), given at most 60 s.
fn ts(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = support::sandboxed(dir);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    wait_within(cmd.spawn().expect("spawns"), Duration::from_secs(60), &args.join(" "))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A copy of the stepwise example in `dir/stepwise`, its toml changed by `edit`.
fn stepwise(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tasks/stepwise");
    let to = dir.join("stepwise");
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(&from).unwrap() {
        let path = e.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
    let toml = std::fs::read_to_string(to.join("task.toml")).unwrap();
    std::fs::write(to.join("task.toml"), edit(toml)).unwrap();
    to
}

/// `toml` with `[check]` run by `argv` (and `timeout_ms`, if given).
fn with_check(toml: String, argv: &[&str], timeout_ms: Option<u64>) -> String {
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    let timeout = timeout_ms.map(|t| format!("\ntimeout_ms = {t}")).unwrap_or_default();
    toml.replacen("kind = \"numeric\"", &format!("kind = \"command\"\ncommand = [{}]{timeout}", argv.join(", ")), 1)
}

/// `toml` with a `[tree] step_command` run by `argv`.
fn with_step_command(toml: String, argv: &[&str]) -> String {
    let argv: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    toml.replacen("[tree]", &format!("[tree]\nstep_command = [{}]", argv.join(", ")), 1)
}

/// Commands that leave a mark in `ran.log` (in the directory they run in) and say correct.
const MARKS_CHECK: &[&str] = &["sh", "-c", "echo check >> ran.log; echo correct"];
const MARKS_STEP: &[&str] = &["sh", "-c", "echo step >> ran.log; echo correct"];

fn marks(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("ran.log")).map(|t| t.lines().count()).unwrap_or(0)
}

#[test]
fn opening_a_session_runs_none_of_its_programs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stepwise(d, |t| with_step_command(with_check(t, MARKS_CHECK, None), MARKS_STEP));
    let out = ts(d, &["run", "--task", "stepwise", "--method", "tot-bfs", "--range", "0..1", "--record", "s.jsonl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ran = marks(d);
    assert!(ran > 1, "the live run ran its check and step commands");
    assert!(stderr(&out).contains("note: running the check command `sh -c"), "named first: {}", stderr(&out));
    let session = std::fs::read_to_string(d.join("s.jsonl")).unwrap();
    assert_eq!(session.matches("\"type\":\"check_reply\"").count(), ran, "each verdict is a recorded input");
    std::fs::remove_file(d.join("ran.log")).unwrap();
    // Opened where the task folder is not: the session stands alone, and nothing runs.
    let away = d.join("away");
    std::fs::create_dir_all(&away).unwrap();
    std::fs::copy(d.join("s.jsonl"), away.join("s.jsonl")).unwrap();
    let opened: [&[&str]; 7] = [
        &["replay", "--headless", "s.jsonl"],
        &["replay", "--headless", "--json", "s.jsonl"],
        &["export", "s.jsonl", "--format", "json"],
        &["export", "s.jsonl", "--format", "dot"],
        &["export", "s.jsonl", "--format", "otel"],
        &["diff", "s.jsonl", "s.jsonl"],
        &["replay", "--headless", "--strict", "s.jsonl"],
    ];
    for args in opened {
        let out = ts(&away, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(marks(&away), 0, "{args:?} ran a program");
    }
    let out = ts(&away, &["replay", "--headless", "s.jsonl"]);
    let text = stdout(&out) + &stderr(&out);
    assert!(text.contains("solved 1/1") && !text.contains("as recorded"), "replayed by today's engine: {text}");
    // A live re-run of the session's calls runs the commands again, and names them first.
    let out = ts(
        d,
        &[
            "run",
            "--task",
            "stepwise",
            "--method",
            "tot-bfs",
            "--range",
            "0..1",
            "--provider",
            "replay",
            "--replay-from",
            "s.jsonl",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("note: running the step command `sh -c"), "{}", stderr(&out));
    assert_eq!(marks(d), ran, "the re-run ran them as the run did");
}

#[test]
fn a_session_recorded_before_verdicts_were_inputs_opens_as_recorded_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Recorded by 35da091, whose replay ran its commands (15 marks a replay).
    std::fs::copy(support::fixture("task-commands/stepwise-bfs-before-verdicts.jsonl"), d.join("old.jsonl")).unwrap();
    for args in [
        &["replay", "--headless", "old.jsonl"][..],
        &["export", "old.jsonl", "--format", "mermaid"],
        &["diff", "old.jsonl", "old.jsonl"],
    ] {
        let out = ts(d, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(marks(d), 0, "{args:?} ran a program");
    }
    let out = ts(d, &["replay", "--headless", "old.jsonl"]);
    let text = stdout(&out) + &stderr(&out);
    assert!(text.contains("did not record"), "the note says why it is shown as recorded: {text}");
    assert!(text.contains("solved 1/1") && text.contains("f1 1.000"), "its recorded verdicts stand: {text}");
}

#[test]
fn a_checker_that_holds_the_run_is_stopped_at_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A child left holding its output: the verdict counts at once, the run ends.
    stepwise(d, |t| with_check(t, &["sh", "-c", "sleep 300 & echo correct"], Some(2000)));
    let started = Instant::now();
    let out = ts(d, &["run", "--task", "stepwise", "--method", "cot", "--range", "0..2", "--sim-noise", "0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("solved 2/2"), "{}", stdout(&out));
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    // One that never reads an input over the pipe's buffer: stopped at its limit, saying so.
    let big = d.join("big");
    std::fs::create_dir_all(&big).unwrap();
    let task = stepwise(&big, |t| with_check(t, &["sh", "-c", "sleep 300"], Some(500)));
    let long = format!(
        "{{\"input\": \"{} 2 + 2?\", \"answer\": \"4\", \"steps\": [\"2 + 2 = 4\", \"4 + 0 = 4\", \"Answer: 4\"]}}\n",
        "pad ".repeat(50_000)
    );
    std::fs::write(task.join("problems.jsonl"), long).unwrap();
    let started = Instant::now();
    let out = ts(&big, &["run", "--task", "stepwise", "--method", "cot", "--range", "0..1", "--sim-noise", "0"]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("did not read its input") && err.contains("within 500 ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
}

#[test]
fn a_checker_that_fails_is_an_error_of_the_task_not_a_wrong_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, argv, said) in [
        ("missing", vec!["/no/such/checker"], "cannot start"),
        ("crash", vec!["sh", "-c", "kill -SEGV $$"], "was killed by signal 11"),
        (
            "status",
            vec!["sh", "-c", "echo broken >&2; exit 3"],
            "exited with status 3 and printed nothing (on its error output: \"broken\")",
        ),
        ("garbage", vec!["sh", "-c", "echo maybe"], "printed \"maybe\""),
        ("slow", vec!["sh", "-c", "sleep 30; echo correct"], "took over 300 ms"),
    ] {
        let here = d.join(name);
        std::fs::create_dir_all(&here).unwrap();
        stepwise(&here, |t| with_check(t, &argv, Some(300)));
        let out =
            ts(&here, &["run", "--task", "stepwise", "--method", "cot", "--range", "0..1", "--record", "s.jsonl"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or_else(|| panic!("{name}: {err}"));
        assert!(line.contains("the task failed: the check command `") && line.contains(said), "{name}: {err}");
        let session = std::fs::read_to_string(here.join("s.jsonl")).unwrap();
        assert!(session.contains("\"stopped\"") && session.contains("the task failed"), "{name}: recorded");
        // task check tries the checker on a gold answer before any run.
        let out = ts(&here, &["task", "check", "stepwise"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains("note: running the check command `") && err.contains(said), "{name}: {err}");
        assert!(!stdout(&out).contains("is good"), "{name}");
    }
    // A step command that fails stops a tree search the same way.
    let here = d.join("step-fails");
    std::fs::create_dir_all(&here).unwrap();
    stepwise(&here, |t| with_step_command(t, &["sh", "-c", "echo '{\"verdict\": 1}'"]));
    let out = ts(&here, &["run", "--task", "stepwise", "--method", "tot-bfs", "--range", "0..1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the task failed: the step command `sh -c") && err.contains("printed \"{\\\"verdict"),
        "{err}"
    );
    let out = ts(&here, &["task", "check", "stepwise"]);
    assert!(
        stderr(&out).contains("note: running the step command `sh -c") && !out.status.success(),
        "{}",
        stderr(&out)
    );
    // A checker that refuses the gold answer is found by task check too.
    let here = d.join("refuses");
    std::fs::create_dir_all(&here).unwrap();
    stepwise(&here, |t| with_check(t, &["sh", "-c", "echo incorrect"], None));
    let out = ts(&here, &["task", "check", "stepwise"]);
    assert!(stderr(&out).contains("says problem 0's gold answer \"18\" is wrong"), "{}", stderr(&out));
    // And one that works is said to.
    let here = d.join("works");
    std::fs::create_dir_all(&here).unwrap();
    stepwise(&here, |t| with_step_command(with_check(t, MARKS_CHECK, None), MARKS_STEP));
    let out = ts(&here, &["task", "check", "stepwise"]);
    assert!(out.status.success() && stdout(&out).contains("is good"), "{}", stderr(&out));
    assert_eq!(marks(&here), 2, "each command ran once");
}

