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

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// `task check` and `run` on the task folder `task`: both refuse it in one line that
/// contains `said`, at once (no hang, no memory run out).
fn refused(dir: &Path, task: &Path, said: &str) {
    let task = task.to_str().unwrap();
    for args in [vec!["task", "check", task], vec!["run", "--task", task, "--method", "cot", "--range", "0..1"]] {
        let out = ts(dir, &args);
        let err = stderr(&out);
        assert!(matches!(out.status.code(), Some(1 | 2)), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line: {err}");
        assert!(lines[0].contains(said), "{args:?}: {err}");
    }
}

/// A small task file in `dir/name` whose problems and cot prompt are the files `problems`
/// and `cot` (as the file names them), with those files written when they are plain names.
fn small_task(dir: &Path, name: &str, problems: &str, cot: &str) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let toml = format!(
        "name = \"t\"\n[problems]\nfile = {problems:?}\n[prompts]\nio = \"Q: {{{{ input }}}}\"\ncot = {{ file = {cot:?} }}\n\
         [answer]\nread = \"answer-line\"\n[check]\nkind = \"numeric\"\n"
    );
    std::fs::write(folder.join("task.toml"), toml).unwrap();
    if problems == "problems.jsonl" {
        std::fs::write(folder.join(problems), "{\"input\": \"2 + 2\", \"answer\": \"4\"}\n").unwrap();
    }
    if cot == "cot.txt" {
        std::fs::write(folder.join(cot), "Think, then write Answer: N.\n{{ input }}\n").unwrap();
    }
    folder
}

#[test]
fn task_files_and_what_they_name_are_regular_files_of_a_bounded_size() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = small_task(d, "good", "problems.jsonl", "cot.txt");
    let out = ts(d, &["task", "check", good.to_str().unwrap()]);
    assert!(out.status.success(), "the small task is good: {}", stderr(&out));
    // The task file itself: a FIFO, a device.
    let fifo_task = d.join("fifo-task");
    std::fs::create_dir_all(&fifo_task).unwrap();
    mkfifo(&fifo_task.join("task.toml"));
    refused(d, &fifo_task, "it is a FIFO (named pipe), not a file");
    let zero_task = d.join("zero-task.toml");
    std::os::unix::fs::symlink("/dev/zero", &zero_task).unwrap();
    refused(d, &zero_task, "it is a device, not a file");
    // Its problems and a prompt file: FIFOs, a device inside the folder, a huge row.
    let task = small_task(d, "fifos", "problems.jsonl", "cot.txt");
    std::fs::remove_file(task.join("problems.jsonl")).unwrap();
    mkfifo(&task.join("problems.jsonl"));
    refused(d, &task, "problems.file: cannot read problems.jsonl: it is a FIFO (named pipe)");
    let task = small_task(d, "fifo-cot", "problems.jsonl", "cot.txt");
    std::fs::remove_file(task.join("cot.txt")).unwrap();
    mkfifo(&task.join("cot.txt"));
    refused(d, &task, "prompts.cot: cannot read cot.txt: it is a FIFO (named pipe)");
    let task = small_task(d, "big-row", "problems.jsonl", "cot.txt");
    let row = format!("{{\"input\": \"{}\", \"answer\": \"1\"}}\n", "x".repeat(2 << 20));
    std::fs::write(task.join("problems.jsonl"), row).unwrap();
    refused(d, &task, "one problem is at most 1 MiB");
    let task = small_task(d, "big-cot", "problems.jsonl", "cot.txt");
    std::fs::write(task.join("cot.txt"), "x".repeat(300 << 10)).unwrap();
    refused(d, &task, "larger than 256 KiB, the limit for a prompt template");
}

#[test]
fn a_task_file_reads_nothing_outside_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("secret.txt"), "the user's secret").unwrap();
    std::fs::write(d.join("secret.jsonl"), "{\"input\": \"the user's secret\", \"answer\": \"4\"}\n").unwrap();
    let secret = d.join("secret.txt").display().to_string();
    for (name, problems, cot, said) in [
        ("dotdot", "problems.jsonl", "../secret.txt", "prompts.cot"),
        ("absolute", "problems.jsonl", secret.as_str(), "prompts.cot"),
        ("problems", "../secret.jsonl", "cot.txt", "problems.file"),
        ("nested-dotdot", "sub/../../secret.jsonl", "cot.txt", "problems.file"),
    ] {
        let folder = small_task(d, name, problems, cot);
        let out = ts(d, &["task", "check", folder.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(said) && err.contains("not a path inside the task's folder"), "{name}: {err}");
        assert!(!err.contains("the user's secret") && !stdout(&out).contains("the user's secret"), "{name}");
    }
    // Links inside the folder that lead out of it: to a file, to /dev/zero, to a folder.
    for (name, link, target, said) in [
        ("linked-cot", "cot.txt", d.join("secret.txt"), "prompts.cot: cot.txt is a link out of the task's folder"),
        ("linked-zero", "problems.jsonl", PathBuf::from("/dev/zero"), "problems.file: problems.jsonl is a link out"),
    ] {
        let folder = small_task(d, name, "problems.jsonl", "cot.txt");
        std::fs::remove_file(folder.join(link)).unwrap();
        std::os::unix::fs::symlink(&target, folder.join(link)).unwrap();
        refused(d, &folder, said);
    }
    let folder = small_task(d, "linked-dir", "sub/secret.jsonl", "cot.txt");
    std::os::unix::fs::symlink(d, folder.join("sub")).unwrap();
    refused(d, &folder, "problems.file: sub/secret.jsonl is a link out of the task's folder");
    // The corpus: a folder out of it is refused; files inside it that are not regular
    // files inside it are skipped, each said.
    let town = d.join("town");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tasks/town-facts"), &town);
    std::os::unix::fs::symlink(d.join("secret.txt"), town.join("corpus/secret.md")).unwrap();
    mkfifo(&town.join("corpus/pipe.md"));
    let out = ts(d, &["task", "check", town.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("secret.md: a link to") && err.contains("outside the corpus folder; skipped"), "{err}");
    assert!(err.contains("pipe.md: not a regular file"), "{err}");
    let toml = std::fs::read_to_string(town.join("task.toml")).unwrap();
    std::fs::write(town.join("task.toml"), toml.replacen("corpus = \"corpus\"", "corpus = \"..\"", 1)).unwrap();
    let out = ts(d, &["task", "check", town.to_str().unwrap()]);
    assert!(stderr(&out).contains("tools.corpus: \"..\" is not a path inside the task's folder"), "{}", stderr(&out));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            copy_dir(&path, &to.join(path.file_name().unwrap()));
        } else {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
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

#[test]
fn what_a_newcomer_gets_wrong_in_a_task_file_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // task new writes ''' prompts: \boxed stays as written, and no warning.
    let out = ts(d, &["task", "new", "mine"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ts(d, &["task", "check", "mine"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("inside \\boxed{}") && !stderr(&out).contains("warning"), "{}", stderr(&out));
    // A """ prompt with \boxed holds a backspace: a warning naming the key and line.
    let toml = std::fs::read_to_string(d.join("mine/task.toml")).unwrap();
    std::fs::write(
        d.join("mine/task.toml"),
        toml.replacen("io = '''", "io = \"\"\"", 1).replacen("{{ input }}'''", "{{ input }}\"\"\"", 1),
    )
    .unwrap();
    let out = ts(d, &["task", "check", "mine"]);
    let err = stderr(&out);
    assert!(
        err.contains("warning: ")
            && err.contains("prompts.io: line 2 of the template holds the control character U+0008"),
        "{err}"
    );
    // An answer rule that reads nothing from the final states: said once, with an example.
    stepwise(d, |t| t.replacen("read = \"answer-line\"", "read = \"boxed\"", 1));
    let out = ts(d, &["run", "--task", "stepwise", "--method", "tot-bfs", "--range", "0..2", "--sim-noise", "0"]);
    let err = stderr(&out);
    assert!(
        err.contains("warning: stepwise's answer rule ([answer] read = \"boxed\") read no answer from the final states of 2 of 2 problems")
            && err.contains("e.g. problem 0, #") && err.contains("Answer: 18"),
        "{err}"
    );
    assert_eq!(err.matches("read no answer").count(), 1, "once a run: {err}");
    // A problem of your own on a task that checks gold answers: refused at the start.
    let out = ts(d, &["run", "--task", "stepwise", "--method", "cot", "--input", "What is 2 + 3?"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a problem of your own has none"), "{err}");
    // Several words without quotes: one plain line saying to quote them.
    for args in [
        &["--task", "stepwise", "--input", "4", "9", "10", "13"][..],
        &["run", "--task", "stepwise", "--input", "4", "9", "10", "13"],
    ] {
        let out = ts(d, args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(
            err.trim(),
            "error: --input takes one value: quote a value of several words, as in --input \"4 9 10 13\" (see --help)"
        );
    }
}

#[test]
fn a_checker_ends_with_a_run_killed_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pid_file = d.join("checker.pid");
    let script = format!("echo $$ > {}; sleep 300; echo correct", pid_file.display());
    stepwise(d, |t| with_check(t, &["sh", "-c", &script], Some(600_000)));
    let mut cmd = support::sandboxed(d);
    cmd.args(["run", "--task", "stepwise", "--method", "cot", "--range", "0..1"]);
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse::<u32>().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the checker never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    let _ = child.wait();
    let gone = (0..250).any(|_| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).unwrap_or("");
        let alive = !stat.is_empty() && state != "Z";
        if alive {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive
    });
    assert!(gone, "the checker {pid} outlived the run killed with SIGKILL");
}
