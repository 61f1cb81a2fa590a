//! `thoughtscope run --method retreval`: its flags reach the session header, and a bad
//! flag is one plain line. (What the method does is tested at engine level, with
//! scripted replies, in `src/engine/methods/retreval/method_tests.rs`.)

use crate::support;

use std::path::Path;
use std::process::Output;

fn run(dir: &Path, args: &[&str]) -> Output {
    support::sandboxed(dir).arg("run").args(args).output().expect("the binary runs")
}

const BASE: [&str; 8] = ["--task", "math-demo", "--method", "retreval", "--provider", "sim", "--range", "0..1"];

#[test]
fn the_ablation_flags_are_accepted_and_recorded_in_the_session_header() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("one.jsonl");
    let mut args = BASE.to_vec();
    args.extend([
        "--no-memory",
        "--no-tools",
        "--no-cross",
        "--complexity-table",
        "official",
        "--skeptic-weight",
        "0.3",
        "--record",
        rec.to_str().unwrap(),
        "--json",
    ]);
    let out = run(dir.path(), &args);
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let session = thoughtscope::session::Session::load(&rec).unwrap();
    let params = &session.header.params;
    assert_eq!(params.method.label(), "retreval");
    let header = serde_json::to_value(params).unwrap();
    assert_eq!(header["no_memory"], true);
    assert_eq!(header["no_tools"], true);
    assert_eq!(header["no_cross"], true);
    assert_eq!(header["complexity_table"], "official");
    assert_eq!(header["skeptic_weight"], 0.3);
    assert_eq!(header["no_backtrack"], false, "flags not given are recorded at their defaults");
    assert_eq!(header["local_weight"], 0.6, "and so are its own defaults");
    assert!(header.get("breadth").is_none() && header.get("threshold").is_none(), "no other method's: {header}");
}

#[test]
fn a_bad_complexity_table_is_one_plain_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = BASE.to_vec();
    args.extend(["--complexity-table", "huge"]);
    let out = run(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("complexity_table (--complexity-table) is \"huge\""), "{stderr}");
    assert!(stderr.contains("paper, official"), "{stderr}");
    // A ReTreVal flag with another method is refused too.
    let out = run(dir.path(), &["--task", "math-demo", "--method", "react", "--no-memory", "--range", "0..1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--no-memory is for --method retreval"), "{stderr}");
}

fn bench(dir: &Path, args: &[&str]) -> Output {
    support::sandboxed(dir).args(["bench", "ablation"]).args(args).output().expect("the binary runs")
}

/// The ablation's figures are the runs' own: each row equals the `run` it names, and
/// the claims are computed from the per-problem results.
#[test]
fn the_ablation_reports_what_its_runs_did() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(
        dir.path(),
        &[
            "--range",
            "0..6",
            "--split",
            "3",
            "--variants",
            "full,no-memory,self-refine",
            "--json",
            "--",
            "--sim-noise",
            "2",
        ],
    );
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let rows = report["variants"].as_array().unwrap();
    assert_eq!(
        rows.iter().map(|r| r["variant"].as_str().unwrap()).collect::<Vec<_>>(),
        ["full", "no-memory", "self-refine"]
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("data/memory")).map(|d| d.count()).unwrap_or(0),
        0,
        "the variants' memories are removed afterwards"
    );
    // The same run by hand, on a fresh memory.
    let mut args = vec!["--method", "retreval", "--range", "0..6", "--cache", "off", "--memory", "mine"];
    args.extend(["--task", "math-demo", "--sim-noise", "2", "--seed", "0", "--out", "full.jsonl", "--json"]);
    let by_hand = run(dir.path(), &args);
    assert!(by_hand.status.success(), "failed:\n{}", String::from_utf8_lossy(&by_hand.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&by_hand.stdout).unwrap();
    let full = &rows[0];
    assert_eq!(full["solved"], summary["solved"]);
    assert_eq!(full["calls"], summary["llm_calls"]);
    let tokens = summary["prompt_tokens"].as_u64().unwrap() + summary["completion_tokens"].as_u64().unwrap();
    assert_eq!(full["tokens"], tokens);
    let results: Vec<serde_json::Value> = std::fs::read_to_string(dir.path().join("full.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let later = results[3..].iter().filter(|r| r["correct"] == true).count() as f64 / 3.0;
    assert!((full["later_accuracy"].as_f64().unwrap() - later).abs() < 1e-9, "{full}");
    let refine = rows[2]["tokens"].as_f64().unwrap();
    assert!((full["tokens_vs_self_refine"].as_f64().unwrap() - tokens as f64 / refine).abs() < 1e-9);
    let w = &report["versus_self_refine"];
    assert!(w["wins"].as_u64().unwrap() + w["regressions"].as_u64().unwrap() <= 6, "{w}");
    // A variant it does not know, or a flag that is the ablation's own, is one line.
    let out = bench(dir.path(), &["--variants", "full,bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown variant \"bogus\""));
    let out = bench(dir.path(), &["--", "--method", "cot"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--method is the ablation's to set"));
}

/// The variants and seeds run side by side, each on its own memory: every seed's row is
/// the `run` of that seed alone, and with `--keep-memory` each (variant, seed) keeps a
/// memory of its own.
#[test]
fn the_ablation_runs_side_by_side_and_each_seed_is_its_own_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = bench(
        dir.path(),
        &["--range", "0..4", "--split", "2", "--variants", "full", "--seeds", "0,1", "--keep-memory", "--json"],
    );
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(report["wall_s"].as_f64().unwrap() > 0.0, "{report}");
    let full = &report["variants"][0];
    let kept: Vec<&str> = full["memory"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert_eq!(kept.len(), 2, "{full}");
    assert!(kept[0] != kept[1] && kept[0].contains("-0-") && kept[1].contains("-1-"), "{kept:?}");
    for name in &kept {
        assert!(dir.path().join(format!("data/memory/{name}.json")).is_file(), "{name} kept");
    }
    let mut calls = 0;
    for (i, seed) in ["0", "1"].into_iter().enumerate() {
        let mut args = vec!["--method", "retreval", "--range", "0..4", "--cache", "off", "--memory", "alone"];
        args.extend(["--task", "math-demo", "--seed", seed, "--json"]);
        let memory = dir.path().join("data/memory/alone.json");
        let _ = std::fs::remove_file(&memory);
        let by_hand = run(dir.path(), &args);
        assert!(by_hand.status.success(), "failed:\n{}", String::from_utf8_lossy(&by_hand.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&by_hand.stdout).unwrap();
        assert_eq!(full["by_seed"][i]["accuracy"], summary["success_rate"], "seed {seed}: {full} vs {summary}");
        // The memory each learnt is the same as the one kept for that seed.
        let ours = std::fs::read_to_string(dir.path().join(format!("data/memory/{}.json", kept[i]))).unwrap();
        let theirs = std::fs::read_to_string(&memory).unwrap();
        let entries = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["memory"]["entries"].clone();
        assert!(entries(&ours).as_array().is_some_and(|e| !e.is_empty()), "seed {seed} learnt: {ours}");
        assert_eq!(entries(&ours), entries(&theirs), "seed {seed}'s memory");
        calls += summary["llm_calls"].as_u64().unwrap();
    }
    assert_eq!(full["calls"].as_u64().unwrap(), calls);
}
