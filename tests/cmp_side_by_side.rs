//! `thoughtscope bench compare` runs its methods side by side under one concurrency
//! limit: each method's row is what it gives run alone whatever the interleaving, the
//! walls overlap (the total is less than their sum), a shared cache keeps each seed's
//! methods in order, and a method it does not know is still one plain line.

use crate::support;

use std::path::Path;
use std::process::Output;

fn thoughtscope(dir: &Path, args: &[&str]) -> Output {
    support::sandboxed(dir).args(args).output().expect("the binary runs")
}

fn compare_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["bench", "compare", "--format", "json"];
    full.extend_from_slice(args);
    let out = thoughtscope(dir, &full);
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// A row without its wall time (the one figure that depends on timing).
fn without_wall(row: &serde_json::Value) -> serde_json::Value {
    let mut row = row.clone();
    row.as_object_mut().unwrap().remove("wall_s");
    // Where a method stands on the frontier depends on the other methods in the table.
    row.as_object_mut().unwrap().remove("frontier");
    row
}

#[test]
fn each_row_is_the_method_run_alone_and_the_walls_overlap() {
    let dir = tempfile::tempdir().unwrap();
    // Latency makes the runs interleave; a small limit makes them contend for it.
    let run_args = ["--", "--sim-noise", "2", "--sim-latency-ms", "20", "--concurrency", "3"];
    let methods = ["cot-sc", "tot-bfs", "tot-dfs", "mcts"];
    let mut args = vec!["--task", "game24", "--range", "0..3", "--seeds", "0,1", "--methods"];
    let joined = methods.join(",");
    args.push(&joined);
    args.extend_from_slice(&run_args);
    let together = compare_json(dir.path(), &args);
    let rows = together["methods"].as_array().unwrap();
    assert_eq!(rows.iter().map(|r| r["method"].as_str().unwrap()).collect::<Vec<_>>(), methods);
    for (method, row) in methods.iter().zip(rows) {
        let mut alone_args = vec!["--task", "game24", "--range", "0..3", "--seeds", "0,1", "--methods", method];
        alone_args.extend_from_slice(&run_args);
        let alone = compare_json(dir.path(), &alone_args);
        assert_eq!(without_wall(row), without_wall(&alone["methods"][0]), "{method}: side by side vs alone");
        assert!(row["calls"].as_u64().unwrap() > 0, "{row}");
    }
    let walls: f64 = rows.iter().map(|r| r["wall_s"].as_f64().unwrap()).sum();
    let total = together["total_wall_s"].as_f64().unwrap();
    assert!(total < 0.9 * walls, "the methods ran side by side: all took {total} s, their walls sum to {walls} s");
    let legend = together["wall"].as_str().unwrap();
    assert!(legend.contains("side by side") && legend.contains(&format!("{total:.2} s")), "{legend}");
    // A memory-keeping method runs beside another on a task it works on, and the fresh
    // memories it ran on are gone afterwards.
    let args = ["--task", "math-demo", "--range", "0..2", "--seeds", "0,1", "--methods", "cot,retreval"];
    let mut with_memory = args.to_vec();
    with_memory.extend_from_slice(&run_args);
    let together = compare_json(dir.path(), &with_memory);
    assert!(together["methods"][1]["calls"].as_u64().unwrap() > 0, "{together}");
    let memories = dir.path().join("data").join("memory");
    let left: Vec<_> =
        std::fs::read_dir(&memories).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_shared_cache_keeps_each_seeds_methods_in_order_so_rows_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--methods",
        "tot-bfs,tot-dfs",
        "--range",
        "0..3",
        "--seeds",
        "0,1",
        "--share-cache",
        "--",
        "--sim-latency-ms",
        "10",
    ];
    let first = compare_json(dir.path(), &args);
    let second = compare_json(dir.path(), &args);
    let rows = |v: &serde_json::Value| v["methods"].as_array().unwrap().iter().map(without_wall).collect::<Vec<_>>();
    assert_eq!(rows(&first), rows(&second), "the same rows whatever the interleaving");
    let legend = first["wall"].as_str().unwrap();
    assert!(legend.contains("one after another"), "{legend}");
    // tot-dfs finds tot-bfs's replies: it runs after it on each seed.
    assert!(first["methods"][1]["cache_hits"].as_u64().unwrap() > 0, "{}", first["methods"][1]);
}

#[test]
fn an_unknown_method_is_still_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = thoughtscope(dir.path(), &["bench", "compare", "--methods", "io,bogus", "--range", "0..2"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("unknown method \"bogus\""), "{stderr}");
    assert!(out.stdout.is_empty());
}
