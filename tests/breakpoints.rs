//! `--break` and the config's `break` in headless runs: where each breakpoint would
//! have fired goes into the JSON results, the runs are not stopped, and bad syntax is
//! one plain line naming the breakpoint.

use std::process::Command;

use serde_json::Value;

fn bin(config_dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_thoughtscope"));
    c.env("THOUGHTSCOPE_CONFIG_DIR", config_dir).env_remove("THOUGHTSCOPE_CONFIG");
    c
}

fn results(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn headless_breaks_are_written_into_the_results_without_stopping() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let rec = dir.path().join("sessions");
    let status = bin(dir.path())
        .args(["run", "--task", "game24", "--method", "tot-bfs", "--provider", "sim", "--range", "900..903"])
        .args(["--break", "score<0.01", "--break", "solution", "--break", "#disagree", "--break", "step=2"])
        .arg("--out")
        .arg(&out)
        .arg("--record")
        .arg(&rec)
        .status()
        .unwrap();
    assert!(status.success());
    let results = results(&out);
    assert_eq!(results.len(), 3);
    let mut solutions = 0;
    for r in &results {
        assert!(r.get("stopped").is_none(), "breakpoints do not stop a headless run: {r}");
        let breaks = r["breaks"].as_array().cloned().unwrap_or_default();
        for b in &breaks {
            for key in ["input", "step", "breakpoint", "reason"] {
                assert!(b.get(key).is_some(), "{key} missing in {b}");
            }
            assert_ne!(b["breakpoint"], "disagree", "a switched-off breakpoint never fires");
        }
        let solved = r["correct_any"].as_bool().unwrap();
        let fired = breaks.iter().filter(|b| b["breakpoint"] == "solution").count();
        assert_eq!(solved, fired > 0, "solution fires exactly when a solution is found: {r}");
        solutions += fired;
        assert_eq!(breaks.iter().filter(|b| b["breakpoint"] == "step=2").count(), 1, "{r}");
        // The node a score breakpoint names was scored that low in the recorded session.
        let session = r["session"].as_str().unwrap();
        let text = std::fs::read_to_string(session).unwrap();
        for b in breaks.iter().filter(|b| b["breakpoint"] == "score<0.01") {
            let node = b["node"].as_u64().unwrap();
            let scored = text.lines().any(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["event"]["event"] == "scored"
                    && v["event"]["id"] == node
                    && v["event"]["value"].as_f64().unwrap() < 0.01
            });
            assert!(scored, "node {node} was scored below 0.01 in {session}");
        }
    }
    assert!(solutions > 0, "some problem of 900..903 is solved by the default sim");
}

#[test]
fn bad_break_syntax_is_one_plain_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin(dir.path())
        .args(["run", "--task", "game24", "--provider", "sim", "--range", "900", "--break", "score<<1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("--break: breakpoint `score<<1`: `<1` is not a number; accepted: score<X"), "{stderr}");
}

#[test]
fn the_config_break_list_applies_and_a_bad_entry_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "break = [\"solution\", \"nonsense\"]\n").unwrap();
    let out = dir.path().join("out.jsonl");
    let run = bin(dir.path())
        .args(["run", "--task", "game24", "--method", "tot-bfs", "--provider", "sim", "--sim-noise", "0"])
        .args(["--range", "900", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("break[2]: breakpoint `nonsense`: `nonsense` is not a condition"), "{stderr}");
    let r = &results(&out)[0];
    assert_eq!(r["breaks"][0]["breakpoint"], "solution", "{r}");
}
