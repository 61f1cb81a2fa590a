//! `thoughtscope diff A B`: the same session (exit 0), two seeds and a fork against
//! its parent (exit 1, with the first divergence and the tree differences), and a
//! malformed file (exit 2, one plain line).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::pty::{self, Pty};

use thoughtscope::engine::{Command as EngineCommand, Input, NodeId};
use thoughtscope::session::{apply_input, replay, Session, SessionWriter, Totals};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
}

fn diff(a: &Path, b: &Path, json: bool) -> Output {
    let mut cmd = bin();
    cmd.args(["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    if json {
        cmd.arg("--json");
    }
    cmd.output().expect("the binary runs")
}

fn diff_json(a: &Path, b: &Path) -> (i32, Value) {
    let out = diff(a, b, true);
    let text = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}\nstderr: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn a_session_against_itself_is_the_same() {
    let file = repo("sessions/bfs-solved.jsonl");
    let out = diff(&file, &file, false);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the runs are the same"), "{text}");
    let (code, v) = diff_json(&file, &file);
    assert_eq!(code, 0);
    assert_eq!(v["same"], true);
    assert!(v["first_divergence"].is_null());
    assert_eq!(v["only_in_a"].as_array().unwrap().len(), 0);
}

#[test]
fn a_fork_diverges_at_the_persons_command() {
    let dir = tempfile::tempdir().unwrap();
    let parent_path = repo("sessions/bfs-solved.jsonl");
    let parent = Session::load(&parent_path).unwrap();
    // Fork after the first expansion's reply, and prune the first proposal there.
    let at = 2;
    let fork = dir.path().join("fork.jsonl");
    let mut writer = SessionWriter::fork(&fork, &parent, at).unwrap();
    let mut rebuilt = replay::rebuild(&parent, None, Some(at)).unwrap();
    let input = Input::command(EngineCommand::Prune { node: NodeId(1) });
    let applied = apply_input(&mut rebuilt.engine, &mut Totals::default(), &input);
    writer.input(&input, None, &applied.events).unwrap();
    drop(writer);

    let (code, v) = diff_json(&parent_path, &fork);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["same"], false);
    assert_eq!(v["first_divergence"]["input"], at);
    assert_eq!(v["first_divergence"]["kind"], "command");
    assert!(v["first_divergence"]["b"].as_str().unwrap().contains("prune"), "{v}");
    // The header's link to the parent is where the file came from, not a parameter.
    assert_eq!(v["parameters"].as_array().unwrap().len(), 0, "{v}");
    assert!(!v["only_in_a"].as_array().unwrap().is_empty(), "the parent searched further");
    let pruned = v["status_changes"].as_array().unwrap();
    assert!(pruned.iter().any(|c| c["a_id"] == 1 && c["b"] == "pruned"), "{v}");
    assert_eq!(v["outcome_differs"], true);

    let out = diff(&parent_path, &fork, false);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("first divergence: input {at} (command)")), "{text}");
    assert!(text.contains("nodes only in A: "), "{text}");
    assert!(text.contains("the runs differ"), "{text}");
}

#[test]
fn two_seeds_differ_in_their_parameters_and_replies() {
    let dir = tempfile::tempdir().unwrap();
    let record = |seed: &str| {
        let file = dir.path().join(format!("seed{seed}.jsonl"));
        let out = bin()
            .args(["run", "--task", "game24", "--method", "tot-bfs", "--provider", "sim", "--input", "4 5 6 10"])
            .args(["--seed", seed, "--record", file.to_str().unwrap()])
            .env("HOME", dir.path())
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        file
    };
    let (a, b) = (record("1"), record("2"));
    let (code, v) = diff_json(&a, &b);
    assert_eq!(code, 1, "{v}");
    let fields: Vec<&str> = v["parameters"].as_array().unwrap().iter().map(|c| c["field"].as_str().unwrap()).collect();
    assert!(fields.contains(&"seed"), "{fields:?}");
    let kind = v["first_divergence"]["kind"].as_str().expect("a divergence");
    assert!(["reply", "prompt"].contains(&kind), "{v}");
    let differences = ["only_in_a", "only_in_b", "score_changes", "status_changes"]
        .iter()
        .map(|k| v[k].as_array().unwrap().len())
        .sum::<usize>();
    assert!(differences > 0, "{v}");
}

#[test]
fn a_malformed_file_is_exit_2_and_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken.jsonl");
    std::fs::write(&bad, "{\"kind\":\"header\", oops\n").unwrap();
    let good = repo("sessions/bfs-solved.jsonl");
    for (a, b) in [(&good, &bad), (&bad, &good)] {
        let out = diff(a, b, false);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains("broken.jsonl"), "{err}");
        assert!(out.stdout.is_empty());
    }
    let out = diff(&good, &dir.path().join("missing.jsonl"), true);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

/// `--tui` in a pseudo-terminal: both trees drawn, `q` quits, the terminal is put back;
/// without a terminal it is one plain line.
#[test]
fn the_side_by_side_view_opens_and_quits_cleanly() {
    let file = repo("sessions/bfs-solved.jsonl");
    let out = bin().args(["diff", file.to_str().unwrap(), file.to_str().unwrap(), "--tui"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--tui needs a terminal"), "{err}");

    let mut screen =
        Pty::spawn(pty::thoughtscope(&["diff", file.to_str().unwrap(), file.to_str().unwrap(), "--tui"]), 24, 80);
    screen.wait_until("both trees", |text| text.contains("the runs are the same") && text.contains("#0 expanded"));
    assert!(screen.screen(|s| s.alternate_screen()));
    screen.send(b"q");
    let status = screen.wait_exit("q");
    assert!(status.success(), "the same runs: exit 0 ({status:?})");
    screen.assert_restored("q");
}

/// Two runs that differ only in a reply's thinking diverge at that reply, and the detail
/// shows the thinking line that differs, marked.
#[test]
fn a_reply_that_thought_otherwise_diverges_at_its_thinking() {
    let dir = tempfile::tempdir().unwrap();
    let a = repo("sessions/thinking-bfs.jsonl");
    let text = std::fs::read_to_string(&a).unwrap();
    let changed = text.replacen("Okay, let me work through this.", "Hmm, let me go slowly.", 1);
    assert_ne!(changed, text, "the demo's first thinking is as expected");
    let b = dir.path().join("b.jsonl");
    std::fs::write(&b, changed).unwrap();
    let (_, v) = diff_json(&a, &b);
    let d = &v["first_divergence"];
    assert_eq!(d["kind"], "reply", "{v}");
    let detail = d["detail"].to_string();
    assert!(detail.contains("[thinking] Okay, let me work through this.") && detail.contains("[thinking] Hmm"), "{d}");
}
