//! The binary against inputs meant to hang it or run it out of memory (issue 26): a tool
//! input that once looped forever, signals while a call never answers, FIFOs and devices on
//! every file argument, `--record` paths, file names with escape sequences, and a crossword
//! run with nothing to score.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{FakeServer, Reply};

fn mkfifo(path: &Path) -> PathBuf {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
    path.to_path_buf()
}

/// Wait at most `limit` for `child`; kill it and fail if it is still running.
fn wait_within(mut child: Child, limit: Duration, what: &str) -> (Output, Duration) {
    let started = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let waited = started.elapsed();
    (child.wait_with_output().expect("output"), waited)
}

/// Run `cmd` (stdin closed, output captured) and give it at most 30 s.
fn bounded(mut cmd: Command, what: &str) -> (Output, Duration) {
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawns");
    wait_within(child, Duration::from_secs(30), what)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn sigint_ends_a_react_run_at_once_whatever_its_calls_and_tools_are_doing() {
    let dir = tempfile::tempdir().unwrap();
    // The first reply asks for an LP that made the solver loop forever (free variables);
    // every later request hangs, as a server that never answers.
    let model = FakeServer::start(|n, _| match n {
        0 => Reply::chat(
            &["The sum is bounded by 4.\nAction 1: lp[maximize x + y subject to x + y <= 4]"],
            Some((50, 10)),
        ),
        _ => Reply::Hang,
    });
    let session = dir.path().join("lp.jsonl");
    let mut cmd = support::isolated(dir.path(), Some("sk-test"));
    cmd.args(["run", "--task", "math-demo", "--method", "react", "--range", "0", "--json"])
        .args(["--provider", "openai", "--base-url", &model.url, "--model", "fake-model", "--retries", "0"])
        .arg("--record")
        .arg(&session);
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // The tool answered once the next model call is out (the old solver never answered).
    let deadline = Instant::now() + Duration::from_secs(20);
    while model.requests() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let (out, waited) = wait_within(child, Duration::from_secs(10), "the interrupted run");
    assert!(waited < Duration::from_secs(10), "ended {waited:?} after SIGINT");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.contains("optimal: maximum = 4 at"), "the lp tool answered: {text}");
    assert!(text.contains(r#"{"kind":"stopped","reason":"interrupted by SIGINT"}"#), "{text}");
    assert!(text.lines().last().unwrap().starts_with(r#"{"kind":"end""#), "the session is closed");
    let summary: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(summary["stopped"], "interrupted by SIGINT", "{summary}");
    assert!(stderr(&out).contains("1 calls in flight were abandoned"), "{}", stderr(&out));
}

#[test]
fn a_fifo_or_a_device_on_any_file_argument_is_one_line_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = mkfifo(&dir.path().join("pipe"));
    let fifo_s = fifo.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let out_s = out_dir.to_str().unwrap();
    let regular = "a FIFO (named pipe), not a file: name a regular";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["run", "--config", fifo_s, "--range", "900"],
            format!("--config {fifo_s}: cannot read it: it is {regular} config file"),
        ),
        (
            vec!["run", "--config", "/dev/zero", "--range", "900"],
            "--config /dev/zero: cannot read it: it is a device".into(),
        ),
        (
            vec!["run", "--task", "math500", "--data", fifo_s, "--range", "0"],
            format!("{fifo_s}: cannot read: it is {regular} data file"),
        ),
        (vec!["import", "react-text", fifo_s, "--out", out_s], format!("{fifo_s}: it is {regular} log file")),
        (vec!["import", "tot-log", fifo_s, "--out", out_s], format!("cannot read: it is {regular} log file")),
        (vec!["memory", "--name", "m", "import", fifo_s], format!("{fifo_s}: it is {regular} memory file")),
        (vec!["grade", "42", "--pred-file", "/dev/zero"], "prediction file /dev/zero: it is a device".into()),
        // A FIFO nobody writes to reads as empty: no wait for a writer.
        (vec!["grade", "42", "--pred-file", fifo_s], "the prediction is empty".into()),
        (vec!["replay", fifo_s, "--headless"], format!("{fifo_s} is a FIFO (named pipe), not a session file")),
    ];
    for (args, expect) in cases {
        let mut cmd = support::sandboxed(dir.path());
        cmd.args(&args);
        let (out, waited) = bounded(cmd, &args.join(" "));
        let err = stderr(&out);
        assert!(err.contains(&expect), "{args:?}: {err}");
        assert!(waited < Duration::from_secs(10), "{args:?} took {waited:?}");
        if args[0] != "run" || args.contains(&"--data") || args.contains(&"--config") {
            assert!(!out.status.success(), "{args:?} succeeded");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        }
    }
    // The config directory's config.toml, a template in --prompts, the memory file itself.
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    mkfifo(&config_dir.join("config.toml"));
    let prompts = dir.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    mkfifo(&prompts.join("io.txt"));
    let memory = dir.path().join("data/memory");
    std::fs::create_dir_all(&memory).unwrap();
    mkfifo(&memory.join("m.json"));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["run", "--range", "900", "--json"], "config.toml: cannot read: it is a FIFO (named pipe)"),
        (vec!["run", "--range", "900", "--prompts", "prompts"], "io.txt: it is a FIFO (named pipe), not a file"),
        (vec!["memory", "--name", "m", "list"], "m.json: it is a FIFO (named pipe), not a file: name a regular memory"),
    ];
    for (args, expect) in cases {
        let mut cmd = support::sandboxed(dir.path());
        cmd.args(&args);
        let (out, waited) = bounded(cmd, &args.join(" "));
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
        assert!(waited < Duration::from_secs(10), "{args:?} took {waited:?}");
    }
}

#[test]
fn a_piped_answer_is_read_and_an_oversized_config_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Process substitution: a pipe with a writer, which may be slow to write.
    let script = format!("exec {:?} grade 42 --pred-file <(sleep 0.3; echo 42)", env!("CARGO_BIN_EXE_thoughtscope"));
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &script]);
    let (out, _) = bounded(cmd, "grade with a pipe");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "equivalent");
    let big = dir.path().join("big.toml");
    std::fs::write(&big, format!("theme = \"{}\"\n", "x".repeat(2 << 20))).unwrap();
    let mut cmd = support::sandboxed(dir.path());
    cmd.args(["run", "--range", "900", "--json", "--config", big.to_str().unwrap()]);
    let (out, _) = bounded(cmd, "an oversized config");
    let err = stderr(&out);
    assert!(err.contains("cannot read it: it is larger than 1 MiB, the limit for a config file"), "{err}");
    assert_eq!(out.status.code(), Some(2), "a named config file that cannot be read stops the run: {err}");
    assert!(err.len() < 1000, "the value is not echoed: {} bytes", err.len());
}

#[test]
fn record_paths_are_directories_when_they_are_and_files_when_they_end_in_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let mut cmd = support::sandboxed(dir.path());
    cmd.args(["run", "--range", "900", "--json", "--record", sessions.to_str().unwrap()]);
    let (out, _) = bounded(cmd, "run --record DIR");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(sessions.join("game24-0900-tot-bfs.jsonl").is_file(), "one problem into an existing directory");
    let file = dir.path().join("many.jsonl");
    let mut cmd = support::sandboxed(dir.path());
    cmd.args(["run", "--range", "900..902", "--json", "--record", file.to_str().unwrap()]);
    let (out, _) = bounded(cmd, "run --record FILE.jsonl");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("a path ending in .jsonl is one session file, but this run has 2 problems"));
    assert!(!file.exists(), "nothing ran");
}

#[test]
fn a_replay_warning_prints_an_escape_in_a_file_name_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = support::sandboxed(dir.path());
    let good = dir.path().join("good.jsonl");
    cmd.args(["run", "--range", "900", "--json", "--record", good.to_str().unwrap()]);
    assert!(bounded(cmd, "record").0.status.success());
    // Cut after a few lines and torn: no end line, a torn last line.
    let text = std::fs::read_to_string(&good).unwrap();
    let mut cut: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    cut.push_str("{\"kind\":\"inp");
    let evil = dir.path().join("evil\u{1b}[31mred.jsonl");
    std::fs::write(&evil, cut).unwrap();
    let mut cmd = support::sandboxed(dir.path());
    cmd.arg("replay").arg(&evil).arg("--headless");
    let (out, _) = bounded(cmd, "replay");
    let err = stderr(&out);
    assert!(err.contains("incomplete: the recording has no end line"), "{err}");
    assert!(err.contains("torn last line"), "{err}");
    assert!(!err.contains('\u{1b}'), "an escape reached the terminal: {err:?}");
}

#[test]
fn a_crossword_run_with_nothing_to_score_prints_no_negative_zero() {
    let dir = tempfile::tempdir().unwrap();
    // Every call refused (not retried): the search never gets past its root.
    let model = FakeServer::start(|_, _| Reply::json(400, r#"{"error": {"message": "bad request"}}"#));
    let out_file = dir.path().join("rows.jsonl");
    let mut cmd = support::isolated(dir.path(), Some("sk-test"));
    cmd.args(["run", "--task", "crosswords", "--method", "tot-dfs", "--range", "0", "--json"])
        .args(["--provider", "openai", "--base-url", &model.url, "--model", "fake-model"])
        .arg("--out")
        .arg(&out_file);
    let _ = bounded(cmd, "crosswords");
    let rows = std::fs::read_to_string(&out_file).unwrap();
    let row: Value = serde_json::from_str(rows.lines().next().expect("a row")).unwrap();
    assert!(row["metrics"].is_object(), "{row}");
    assert!(!rows.contains("-0.0"), "{rows}");
    assert_eq!(row["metrics"]["letter"].to_string(), "0.0", "{row}");
}

/// A config file named with `--config` that is missing, a device, a FIFO, a folder or not
/// TOML stops the command with one line naming it (exit 2), for `run`, `serve` and the
/// explorer alike; the same malformed file at the usual place is one warning, and the run goes on.
#[test]
fn a_named_config_file_that_cannot_be_used_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[defaults\nbreadth = 2\n").unwrap();
    let fifo = mkfifo(&dir.path().join("config.fifo"));
    let cases: [(&Path, &str); 5] = [
        (&dir.path().join("missing.toml"), "cannot read it"),
        (Path::new("/dev/zero"), "cannot read it: it is a device, not a file"),
        (&fifo, "cannot read it: it is a FIFO"),
        (dir.path(), "cannot read it"),
        (&bad, "not valid TOML: line 1"),
    ];
    for (path, said) in cases {
        for command in [&["run", "--task", "game24", "--method", "cot", "--range", "0"][..], &["serve", "--port", "0"]]
        {
            let mut cmd = support::sandboxed(dir.path());
            cmd.args(command).arg("--config").arg(path);
            let (out, took) = bounded(cmd, "a bad --config");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command:?} {}: {err}", path.display());
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert!(err.contains(&format!("--config {}: {said}", path.display())), "{err}");
            assert!(took < Duration::from_secs(10), "{took:?}");
        }
    }
    // The same file at the usual place: a warning naming it, and the run goes on.
    std::fs::create_dir_all(dir.path().join("config")).unwrap();
    std::fs::copy(&bad, dir.path().join("config/config.toml")).unwrap();
    let mut cmd = support::sandboxed(dir.path());
    cmd.args(["run", "--task", "game24", "--method", "cot", "--range", "0"]);
    let (out, _) = bounded(cmd, "a malformed default config");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("config.toml: line 1") && err.contains("using the defaults"), "{err}");
}

/// A provider that needs a key, run without it, is one line naming the variable before
/// any connection (no request reaches the server the profile points at).
#[test]
fn a_missing_api_key_is_said_before_any_connection() {
    let dir = tempfile::tempdir().unwrap();
    for (provider, var) in
        [("openai", "OPENAI_API_KEY"), ("openrouter", "OPENROUTER_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
    {
        for command in [&["run", "--task", "game24", "--method", "cot", "--range", "0"][..], &["serve", "--port", "0"]]
        {
            let mut cmd = support::sandboxed(dir.path());
            cmd.args(command)
                .args(["--provider", provider, "--model", "m"])
                .env_remove(var)
                .env_remove("OPENAI_BASE_URL")
                .env_remove("ANTHROPIC_BASE_URL")
                // A connection would go here, and fail loudly.
                .env("HTTPS_PROXY", "http://127.0.0.1:9")
                .env("https_proxy", "http://127.0.0.1:9");
            let (out, took) = bounded(cmd, "a missing key");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{provider}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{provider}: {err}");
            assert!(err.contains(&format!("set {var}")), "{provider}: {err}");
            assert!(took < Duration::from_secs(10), "{took:?}");
        }
    }
}
