//! The math tasks end to end: `math-demo` and `mc-demo` headless on `sim` (cot, ReAct
//! with the calculator in text and native tool mode, record and replay), `math500` and
//! `mmlu-pro` over small data files with a fake model server, and the shared copies of
//! MATH-500 and MMLU-Pro when `../shared/data` is there.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::{FakeServer, Reply, Seen};
use thoughtscope::tasks::math::demo::{MistakeKind, PROBLEMS};
use thoughtscope::tasks::math::{data, MathKind};

fn run(dir: &Path, args: &[&str]) -> Output {
    support::isolated(dir, Some("sk-test")).args(args).output().expect("the binary runs")
}

/// `--out`'s lines in problem order (they are written as problems end).
fn results(path: &Path) -> Vec<Value> {
    let mut rs: Vec<Value> =
        std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    rs.sort_by_key(|r| r["index"].as_u64());
    rs
}

/// The `n` of every group of one facet, added up.
fn facet_total(s: &Value, facet: &str) -> u64 {
    s["by"][facet]
        .as_object()
        .unwrap_or_else(|| panic!("no breakdown by {facet}: {s}"))
        .values()
        .map(|g| g["n"].as_u64().unwrap())
        .sum()
}

#[test]
fn cot_on_math_demo_is_plausible_and_broken_down_by_subject_and_level() {
    let dir = tempfile::tempdir().unwrap();
    let n = PROBLEMS.len().to_string();
    let range = format!("0..{n}");
    let s = support::summary(&run(
        dir.path(),
        &["run", "--task", "math-demo", "--method", "cot", "--range", &range, "--json"],
    ));
    assert_eq!(s["n"].as_u64(), Some(PROBLEMS.len() as u64));
    let rate = s["success_rate"].as_f64().unwrap();
    assert!((0.45..0.8).contains(&rate), "cot accuracy {rate}");
    assert_eq!(s["by"]["subject"].as_object().unwrap().len(), 7, "{s}");
    assert_eq!(s["by"]["level"].as_object().unwrap().len(), 5, "{s}");
    assert_eq!(facet_total(&s, "subject"), PROBLEMS.len() as u64);
    assert_eq!(facet_total(&s, "level"), PROBLEMS.len() as u64);
    let algebra = &s["by"]["subject"]["Algebra"];
    let (solved, n) = (algebra["solved"].as_f64().unwrap(), algebra["n"].as_f64().unwrap());
    assert!((algebra["accuracy"].as_f64().unwrap() - solved / n).abs() < 1e-9);
    // The human summary prints the same breakdowns.
    let out = run(dir.path(), &["run", "--task", "math-demo", "--method", "cot", "--range", "0..10"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("by subject: Algebra "), "{text}");
    assert!(text.contains("by level: 1 "), "{text}");
    // Per-problem results carry the facets.
    let out_file = dir.path().join("out.jsonl");
    run(
        dir.path(),
        &["run", "--task", "math-demo", "--method", "cot", "--range", "0..2", "--out", out_file.to_str().unwrap()],
    );
    let rs = results(&out_file);
    assert_eq!(rs[0]["facets"]["subject"], "Algebra");
    assert_eq!(rs[0]["facets"]["level"], "1");
}

/// ReAct sends the arithmetic step to the calculator, in text and native tool mode, and
/// on the problems whose only mistakes are arithmetic slips it is always right where cot
/// is not. (With the placeholder tool registry the calculator is `calculate`; with the
/// full one, `calc`: the sim calls the one offered.)
#[test]
fn react_calls_the_calculator_and_beats_cot_on_slips() {
    let dir = tempfile::tempdir().unwrap();
    let slips: Vec<usize> = PROBLEMS
        .iter()
        .enumerate()
        .filter(|(_, p)| p.mistakes.iter().all(|m| m.kind == MistakeKind::Arithmetic))
        .map(|(i, _)| i)
        .collect();
    assert!(slips.len() >= 2);
    let range = format!("0..{}", PROBLEMS.len());
    let solved_on_slips = |args: &[&str], seed: &str, name: &str| -> usize {
        let out = dir.path().join(format!("{name}-{seed}.jsonl"));
        let mut all = vec!["run", "--task", "math-demo", "--range", &range, "--sim-noise", "2.5", "--seed", seed];
        all.extend_from_slice(args);
        all.extend(["--out", out.to_str().unwrap(), "--json"]);
        support::summary(&run(dir.path(), &all));
        results(&out)
            .iter()
            .filter(|r| slips.contains(&(r["index"].as_u64().unwrap() as usize)) && r["correct"] == true)
            .count()
    };
    let (mut cot, mut text, mut native) = (0, 0, 0);
    for seed in ["1", "2", "3"] {
        cot += solved_on_slips(&["--method", "cot"], seed, "cot");
        text += solved_on_slips(&["--method", "react"], seed, "text");
        native += solved_on_slips(&["--method", "react", "--tool-mode", "native"], seed, "native");
    }
    let all = 3 * slips.len();
    assert_eq!((text, native), (all, all), "ReAct with the calculator makes no slips");
    assert!(cot < all, "cot slips at this noise: {cot}/{all}");

    for mode in ["text", "native"] {
        let record = dir.path().join(format!("sessions-{mode}"));
        let s = support::summary(&run(
            dir.path(),
            &[
                "run",
                "--task",
                "math-demo",
                "--method",
                "react",
                "--tool-mode",
                mode,
                "--range",
                "0..5",
                "--record",
                record.to_str().unwrap(),
                "--json",
            ],
        ));
        assert!(s["tool_calls"].as_u64().unwrap() >= 10, "a calculator call and finish each: {s}");
        let session = std::fs::read_to_string(record.join("math-demo-0000-react.jsonl")).unwrap().to_lowercase();
        assert!(session.contains("calc[25 - 7]") || session.contains("\"calc"), "the calculator is called ({mode})");
        assert_eq!(s["by"]["subject"]["Algebra"]["n"], 5);
    }
}

#[test]
fn recorded_sessions_replay_to_the_same_results_and_breakdowns() {
    let dir = tempfile::tempdir().unwrap();
    for (task, method, range) in [("math-demo", "react", "0..12"), ("mc-demo", "cot-sc", "0..8")] {
        let record = dir.path().join(format!("{task}-{method}"));
        let live = support::summary(&run(
            dir.path(),
            &[
                "run",
                "--task",
                task,
                "--method",
                method,
                "--range",
                range,
                "--record",
                record.to_str().unwrap(),
                "--json",
            ],
        ));
        let replayed =
            support::summary(&run(dir.path(), &["replay", "--headless", "--json", record.to_str().unwrap()]));
        for key in ["n", "solved", "by", "llm_calls", "prompt_tokens", "completion_tokens", "tool_calls"] {
            assert_eq!(live[key], replayed[key], "{task} {method}: {key}");
        }
        assert!(!live["by"].as_object().unwrap().is_empty());
    }
}

#[test]
fn mc_demo_runs_with_cot_and_react() {
    let dir = tempfile::tempdir().unwrap();
    let cot = support::summary(&run(
        dir.path(),
        &["run", "--task", "mc-demo", "--method", "cot", "--range", "0..16", "--json"],
    ));
    assert_eq!(cot["n"], 16);
    let rate = cot["success_rate"].as_f64().unwrap();
    assert!((0.4..0.95).contains(&rate), "{rate}");
    assert!(cot["by"]["category"].as_object().unwrap().len() >= 6, "{cot}");
    assert_eq!(facet_total(&cot, "category"), 16);
    let react = support::summary(&run(
        dir.path(),
        &["run", "--task", "mc-demo", "--method", "react", "--range", "0..16", "--json"],
    ));
    assert!(react["tool_calls"].as_u64().unwrap() >= 16);
    // A question of one's own is not one the sim knows: a clear error, not a guess.
    let out = run(dir.path(), &["run", "--task", "mc-demo", "--method", "cot", "--input", "Pick one.\nA. x\nB. y"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not among them"), "{err}");
}

/// A model that answers every math500 request with 55, and every MMLU-Pro one with B.
fn fixed_model(seen: &Seen) -> Reply {
    let prompt = seen.prompt();
    let text = if prompt.contains("Options:") {
        "6 times 7 is 42. The answer is (B)."
    } else {
        "Adding up: $55$.\nThe final answer is $\\boxed{55}$."
    };
    Reply::chat(&[text], Some((50, 10)))
}

#[test]
fn data_tasks_run_on_a_model_and_replay_without_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let model = FakeServer::start(|_, seen| fixed_model(seen));
    let math = support::fixture("math500-sample.jsonl");
    let mmlu = support::fixture("mmlu-pro-sample.jsonl");
    for (task, data, expect_solved, facet) in [("math500", &math, 1, "subject"), ("mmlu-pro", &mmlu, 1, "category")] {
        let record = dir.path().join(task);
        let out = run(
            dir.path(),
            &[
                "run",
                "--task",
                task,
                "--data",
                data.to_str().unwrap(),
                "--method",
                "cot",
                "--range",
                "0..3",
                "--provider",
                "openai",
                "--base-url",
                &model.url,
                "--model",
                "fake-model",
                "--record",
                record.to_str().unwrap(),
                "--json",
            ],
        );
        let warnings = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(warnings.contains(&format!("warning: {}:3:", data.display())), "{warnings}");
        let live = support::summary(&out);
        assert_eq!((live["n"].as_u64(), live["solved"].as_u64()), (Some(3), Some(expect_solved)), "{live}");
        assert_eq!(facet_total(&live, facet), 3, "{live}");
        // The header holds the gold answer and facets: replay needs no data file.
        let header: Value = serde_json::from_str(
            std::fs::read_to_string(record.join(format!("{task}-0000-cot.jsonl"))).unwrap().lines().next().unwrap(),
        )
        .unwrap();
        assert!(header["gold"].is_string() && header["facets"][facet].is_string(), "{header}");
        let replayed =
            support::summary(&run(dir.path(), &["replay", "--headless", "--json", record.to_str().unwrap()]));
        assert_eq!((live["solved"].clone(), live["by"].clone()), (replayed["solved"].clone(), replayed["by"].clone()));
    }
    // math500's first problem was solved, by subject Algebra level 1.
    let replayed = support::summary(&run(
        dir.path(),
        &["replay", "--headless", "--json", dir.path().join("math500").to_str().unwrap()],
    ));
    assert_eq!(replayed["by"]["level"]["1"]["solved"], 1, "{replayed}");

    // A file with no usable problem, and the sim, are refused with one line each.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "\n").unwrap();
    let out = run(dir.path(), &["run", "--task", "math500", "--data", empty.to_str().unwrap(), "--range", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no problems: the file is empty"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = run(
        dir.path(),
        &["run", "--task", "mmlu-pro", "--data", mmlu.to_str().unwrap(), "--method", "cot", "--range", "0"],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("sim cannot play mmlu-pro: it has no simulated player"));
}

/// The shared copies of the benchmarks, when this checkout sits next to `shared/`.
fn shared(rel: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(rel);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: {} is not here (the shared data sits beside the checkout)", path.display());
        None
    }
}

#[test]
fn shared_math500_has_500_problems_in_7_subjects_and_5_levels() {
    let Some(path) = shared("math/math500_prm800k_test.jsonl") else { return };
    let (items, warnings) = data::read(MathKind::Math500, &path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(items.len(), 500);
    let subjects: std::collections::BTreeSet<&str> = items.iter().map(|i| i.facets["subject"].as_str()).collect();
    let levels: std::collections::BTreeSet<&str> = items.iter().map(|i| i.facets["level"].as_str()).collect();
    assert_eq!(subjects.len(), 7, "{subjects:?}");
    assert_eq!(levels.into_iter().collect::<Vec<_>>(), ["1", "2", "3", "4", "5"]);
}

#[test]
fn shared_mmlu_pro_has_12032_questions_in_14_categories() {
    let Some(path) = shared("mmlu-pro/mmlu_pro_test.jsonl") else { return };
    let (items, warnings) = data::read(MathKind::MmluPro, &path).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(items.len(), 12_032);
    let categories: std::collections::BTreeSet<&str> = items.iter().map(|i| i.facets["category"].as_str()).collect();
    assert_eq!(categories.len(), 14, "{categories:?}");
}
