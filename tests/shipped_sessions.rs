//! Every session file this project has ever shipped opens headless: the demo sessions
//! of every earlier commit (copied into tests/fixtures/shipped-sessions/ by its
//! collect.sh, so this test needs no git history), today's sessions/, and the session
//! fixtures. `replay --headless` exits 0 and says which kind of replay it was.
//! (The explorer side is `tui::tests::shipped`.)

use crate::support;

use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The session files under `dir` (those whose first line is a session header).
fn sessions_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            text.lines().next().is_some_and(|l| l.contains("\"format\":\"thoughtscope-session\""))
        })
        .collect();
    files.sort();
    files
}

/// Every shipped session: the history's, today's demos and the fixtures'.
fn shipped() -> Vec<PathBuf> {
    let mut files = sessions_in(&repo("tests/fixtures/shipped-sessions"));
    assert!(files.len() >= 36, "the shipped sessions are all here ({} found)", files.len());
    files.extend(sessions_in(&repo("sessions")));
    files.extend(sessions_in(&repo("tests/fixtures")));
    files
}

/// What `replay --headless` says about a session it replayed.
const KINDS: [&str; 3] = ["replayed exactly", "replayed exactly but for wording", "shown as recorded"];

#[test]
fn every_shipped_session_replays_headless_and_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let mut said = [0usize; 3];
    for file in shipped() {
        let out = support::sandboxed(dir.path()).args(["replay", "--headless"]).arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = file.display();
        assert!(out.status.success(), "{name}: exit {:?}\n{stderr}", out.status.code());
        let kind = KINDS.iter().rposition(|k| stderr.contains(k)).unwrap_or_else(|| panic!("{name}: {stderr}"));
        said[kind] += 1;
        if kind == 2 {
            // Which program and format recorded it, and from which input it is shown as recorded.
            assert!(stderr.contains("recorded by") && stderr.contains("(format 1)"), "{name}: {stderr}");
            assert!(stderr.contains("today's engine differs from input"), "{name}: {stderr}");
        }
        assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty(), "{name}: a summary");
    }
    println!("exact {}, exact but for wording {}, as recorded {}", said[0], said[1], said[2]);
    // The history holds all three kinds (log lines reworded since, a method changed since).
    assert!(said.iter().all(|&n| n > 0), "{said:?}");
}

#[test]
fn a_folder_of_shipped_sessions_replays_with_a_count_of_each_kind_and_strict_fails_on_the_changed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let folder = repo("tests/fixtures/shipped-sessions");
    let out = support::sandboxed(dir.path()).args(["replay", "--headless", "--json"]).arg(&folder).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let total = sessions_in(&folder).len();
    // The kinds are counted on stderr; the summaries are what `run` printed (one per method).
    let counts = stderr.lines().find_map(|l| l.strip_prefix(&format!("replayed {total} sessions: ")));
    let counts = counts.unwrap_or_else(|| panic!("{stderr}"));
    let numbers: Vec<usize> = counts.split(", ").map(|part| part.split(' ').next().unwrap().parse().unwrap()).collect();
    assert_eq!(numbers.iter().sum::<usize>(), total, "{counts}");
    assert!(numbers.iter().all(|&n| n > 0), "each kind among them: {counts}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let n: u64 =
        stdout.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["n"].as_u64().unwrap()).sum();
    assert_eq!(n as usize, total);
    // --strict: exit 1 when today's engine does not reproduce some of them.
    let changed = folder.join("f14a4c6-retreval-uses.jsonl");
    let out = support::sandboxed(dir.path()).args(["replay", "--headless", "--strict"]).arg(&changed).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--strict"));
    // One reworded by wording only passes --strict, and --verbose lists the lines.
    let reworded = folder.join("edd70eb-bfs-solved.jsonl");
    let out = support::sandboxed(dir.path())
        .args(["replay", "--headless", "--strict", "--verbose"])
        .arg(&reworded)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("worded differently: input 0: 1 line") && stderr.contains("expanding 1 states"),
        "{stderr}"
    );
}

/// Countdown sessions recorded before Game of 24 and countdown became one reach-a-target
/// task (tasks::reach): today's prompts, steps and evaluators must reproduce them exactly,
/// in both prompt styles, so a byte changed in a shared template fails here.
#[test]
fn countdown_sessions_recorded_before_the_shared_reach_task_replay_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let folder = repo("tests/fixtures/shipped-sessions");
    let names = ["37a291d-countdown-tot-bfs-reference", "37a291d-countdown-tot-bfs-chat", "37a291d-countdown-cot-sc"];
    for name in names {
        let file = folder.join(format!("{name}.jsonl"));
        let out =
            support::sandboxed(dir.path()).args(["replay", "--headless", "--strict"]).arg(&file).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: exit {:?}\n{stderr}", out.status.code());
        assert!(stderr.contains("replayed exactly") && !stderr.contains("but for wording"), "{name}: {stderr}");
    }
}
