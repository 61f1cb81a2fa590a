//! `thoughtscope diff` aligns the trees by thought under paired parents: a thought
//! changed in one run pairs with its original (and its subtree with its subtree), and
//! the report says which alignment it used.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl")
}

/// The demo BFS run with one proposal reworded (`4 * 5` as `5 * 4`, the same state), so
/// the run goes on exactly as before below it: the reply, the node it added and the
/// prompts that quote it all say `5 * 4`, as a run whose model wrote that would (a reply
/// edited alone would no longer match its recorded events, and is shown as recorded).
fn reworded(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(demo()).unwrap();
    assert!(text.contains("4 * 5 = 20 (left: 6 10 20)"), "the demo proposes 4 * 5 first");
    let path = dir.join("reworded.jsonl");
    std::fs::write(&path, text.replace("4 * 5 = 20 (left: 6 10 20)", "5 * 4 = 20 (left: 6 10 20)")).unwrap();
    path
}

fn diff(a: &Path, b: &Path, json: bool) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_thoughtscope"));
    cmd.arg("diff").arg(a).arg(b);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_reworded_thought_pairs_with_its_original_and_its_subtree_pairs_too() {
    let dir = tempfile::tempdir().unwrap();
    let b = reworded(dir.path());
    let (code, out) = diff(&demo(), &b, true);
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let nodes = v["a"]["nodes"].as_u64().unwrap();
    assert_eq!(v["pairs"].as_u64(), Some(nodes), "every node pairs: {v}");
    assert_eq!(v["only_in_a"].as_array().unwrap().len(), 0, "{v}");
    assert_eq!(v["only_in_b"].as_array().unwrap().len(), 0, "{v}");
    let changed = v["thought_changes"].as_array().unwrap();
    assert_eq!(changed.len(), 1, "{v}");
    assert_eq!(changed[0]["a"], "4 * 5 = 20 (left: 6 10 20)");
    assert_eq!(changed[0]["b"], "5 * 4 = 20 (left: 6 10 20)");
    assert!(v["alignment"].as_str().unwrap().contains("the most alike"), "{v}");
    assert_eq!(v["outcome_differs"], false);

    let (code, text) = diff(&demo(), &b, false);
    assert_eq!(code, 1);
    assert!(text.contains(&format!("aligned {nodes} node pairs: children of paired nodes by thought")), "{text}");
    assert!(text.contains("nodes only in A: 0") && text.contains("nodes only in B: 0"), "{text}");
    assert!(text.contains("paired, thought changed: 1"), "{text}");
    assert!(text.contains("4 * 5 = 20 (left: 6 10 20) → 5 * 4 = 20 (left: 6 10 20)"), "{text}");
}

#[test]
fn a_run_against_itself_pairs_every_node_and_is_the_same() {
    let (code, out) = diff(&demo(), &demo(), true);
    assert_eq!(code, 0, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["pairs"], v["a"]["nodes"]);
    assert_eq!(v["thought_changes"].as_array().unwrap().len(), 0);
}
