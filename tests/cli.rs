//! End-to-end checks of the `thoughtscope` binary: headless runs, sessions, replay
//! and the reference-log import.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
}

fn run_json(args: &[&str]) -> Value {
    let out = bin().args(args).output().expect("the binary runs");
    assert!(out.status.success(), "{args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| panic!("no output from {args:?}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn without_time(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("wall_ms");
    v
}

const BASE: [&str; 8] = ["run", "--task", "game24", "--method", "tot-bfs", "--provider", "sim", "--json"];

#[test]
fn perfect_sim_solves_the_whole_test_set() {
    let mut args = BASE.to_vec();
    args.extend(["--sim-noise", "0", "--range", "900..1000"]);
    let s = run_json(&args);
    assert_eq!(s["n"], 100);
    assert_eq!(s["solved"], 100, "{s}");
    for key in [
        "task",
        "method",
        "provider",
        "model",
        "n",
        "solved",
        "solved_any",
        "success_rate",
        "llm_calls",
        "cache_hits",
        "prompt_tokens",
        "completion_tokens",
        "wall_ms",
    ] {
        assert!(s.get(key).is_some(), "summary lacks {key}: {s}");
    }
    assert_eq!(s["provider"], "sim");
    assert!(s["model"].as_str().unwrap().contains("simulated"));
    assert!(s["cache_hits"].as_u64().unwrap() > 0, "duplicate value prompts hit the cache");
}

#[test]
fn default_sim_shows_the_papers_pattern() {
    let range = ["--range", "900..960", "--seed", "1"];
    let rate = |method: &str, extra: &[&str]| -> f64 {
        let mut args = vec!["run", "--method", method, "--json"];
        args.extend(range);
        args.extend(extra);
        run_json(&args)["success_rate"].as_f64().unwrap()
    };
    let b5 = rate("tot-bfs", &["--breadth", "5"]);
    let b1 = rate("tot-bfs", &["--breadth", "1"]);
    let cot = rate("cot", &["--samples", "1"]);
    assert!(b5 > b1 && b1 > cot, "b5 {b5}, b1 {b1}, cot {cot}");
    assert!(b5 < 1.0, "b=5 is high but not perfect: {b5}");
}

#[test]
fn concurrency_changes_nothing_but_time() {
    let mut a = BASE.to_vec();
    a.extend(["--range", "900..906", "--seed", "5", "--concurrency", "1"]);
    let mut b = BASE.to_vec();
    b.extend(["--range", "900..906", "--seed", "5", "--concurrency", "16"]);
    assert_eq!(without_time(run_json(&a)), without_time(run_json(&b)));
}

#[test]
fn recorded_runs_replay_to_the_same_summary_with_no_calls() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("sessions");
    let out = dir.path().join("per-puzzle.jsonl");
    let mut args = BASE.to_vec();
    let (rec_s, out_s) = (rec.to_str().unwrap(), out.to_str().unwrap());
    args.extend(["--range", "900..904", "--record", rec_s, "--out", out_s]);
    let original = run_json(&args);
    let lines = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        for key in ["input", "answer", "correct", "calls", "prompt_tokens", "session"] {
            assert!(r.get(key).is_some(), "row lacks {key}: {r}");
        }
        assert!(Path::new(r["session"].as_str().unwrap()).exists());
    }
    let replayed = run_json(&["replay", rec_s, "--headless", "--json"]);
    assert_eq!(without_time(replayed), without_time(original));
    // Every line of a session is a header, an input, an event or the end; sim replies are labelled.
    let first = PathBuf::from(rows[0]["session"].as_str().unwrap());
    let text = std::fs::read_to_string(&first).unwrap();
    assert!(text.lines().next().unwrap().contains("\"simulated\":true"));
    assert!(text.contains("\"request\""), "requests are recorded with their replies");
}

/// `replay --headless` of a run whose problems went side by side reports the run's wall
/// time, not the sum of its problems' (they overlap); sessions of two runs add up the two
/// runs; sessions without the run clock (earlier versions) give the sum and say so.
#[test]
fn a_replay_reports_the_runs_wall_time_not_the_sum_of_its_problems() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("sessions");
    let rec_s = rec.to_str().unwrap();
    let mut args = BASE.to_vec();
    args.extend(["--range", "900..904", "--record", rec_s, "--concurrency", "4", "--sim-latency-ms", "40"]);
    let original = run_json(&args);
    let wall = |v: &Value| v["wall_ms"].as_u64().unwrap();
    let replayed = run_json(&["replay", rec_s, "--headless", "--json"]);
    let summed: u64 = std::fs::read_dir(&rec)
        .unwrap()
        .map(|e| thoughtscope::session::Session::load(&e.unwrap().path()).unwrap().end().unwrap().1)
        .sum();
    assert!(wall(&replayed) <= wall(&original), "{} vs the run's {}", wall(&replayed), wall(&original));
    assert!(
        wall(&replayed) < summed * 3 / 4,
        "four problems side by side: the run ({} ms) is well under their sum ({summed} ms)",
        wall(&replayed)
    );
    // A second run's sessions in the same folder: the two runs' times add up.
    let mut again = BASE.to_vec();
    again.extend(["--range", "904..906", "--record", rec_s, "--concurrency", "2", "--sim-latency-ms", "40"]);
    let second = run_json(&again);
    let both = run_json(&["replay", rec_s, "--headless", "--json"]);
    assert!(wall(&both) > wall(&replayed) && wall(&both) <= wall(&replayed) + wall(&second), "{both}");
    // Sessions from before the run clock (their end lines without it): the sum, said on stderr.
    let old = dir.path().join("old");
    std::fs::create_dir(&old).unwrap();
    let mut old_sum = 0;
    for entry in std::fs::read_dir(&rec).unwrap().take(3) {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<String> = text
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                if v["kind"] == "end" {
                    v.as_object_mut().unwrap().remove("run").expect("the end line has the run clock");
                    old_sum += v["wall_ms"].as_u64().unwrap();
                }
                v.to_string()
            })
            .collect();
        std::fs::write(old.join(path.file_name().unwrap()), lines.join("\n") + "\n").unwrap();
    }
    let out = bin().args(["replay", old.to_str().unwrap(), "--headless", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("3 of these 3 sessions do not record when their run began"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(wall(&summary), old_sum);
}

#[test]
fn a_torn_session_replays_what_it_kept_and_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.jsonl");
    let f = file.to_str().unwrap();
    run_json(&["run", "--input", "4 9 10 13", "--record", f, "--json"]);
    let text = std::fs::read_to_string(&file).unwrap();
    let n = text.lines().count();
    let kept: Vec<&str> = text.lines().take(n / 2).collect();
    let torn = format!("{}\n{}", kept.join("\n"), &text.lines().nth(n / 2).unwrap()[..10]);
    std::fs::write(&file, torn).unwrap();
    let out = bin().args(["replay", f, "--headless", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("one.jsonl:{}: torn last line", n / 2 + 1)), "{stderr}");
    assert!(out.status.success(), "a torn file still replays: {stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"n\":1"));
}

#[test]
fn bad_arguments_get_clear_errors() {
    let out = bin().args(["run", "--range", "0..5000"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("1362 problems"));
    let out = bin().args(["run", "--input", "1 2 3"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected 4 numbers"));
    let out = bin().args(["replay", "/nonexistent/x.jsonl", "--headless"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.jsonl"));
}

fn shared_log() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/tot/gpt-4_0.7_propose1_value3_greedy5_start900_end1000.json");
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is absent (the shared data folder is not next to this clone)", p.display());
        None
    }
}

#[test]
fn reference_log_verifies_400_of_400_steps() {
    let Some(log) = shared_log() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("imported");
    let s = run_json(&[
        "import",
        "tot-log",
        log.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--verify",
        "--json",
    ]);
    assert_eq!(s["steps"], 400);
    assert_eq!(s["steps_agreeing"], 400, "{s}");
    assert_eq!(s["solved_any"], 69);
    assert_eq!(s["solved"], 62);
    let replayed = run_json(&["replay", out_dir.to_str().unwrap(), "--headless", "--json"]);
    assert_eq!(replayed["n"], 100);
    assert_eq!(replayed["solved_any"], 69);
    assert_eq!(replayed["solved"], 62);
    // Re-run live against the log's replies: values cached, proposals drawn afresh, as the
    // reference did, so the search finds what the log found.
    let from = out_dir.to_str().unwrap();
    let rerun = run_json(&[
        "run",
        "--provider",
        "replay",
        "--replay-from",
        from,
        "--range",
        "900..1000",
        "--lenient",
        "--n-evaluate",
        "3",
        "--json",
    ]);
    assert_eq!((rerun["solved"].as_u64(), rerun["solved_any"].as_u64()), (Some(62), Some(69)), "{rerun}");
    assert_eq!(rerun["failed_calls"], Value::Null, "{rerun}");
}

#[test]
fn fixture_log_verifies_without_shared_data() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tot-log-3.json");
    let s = run_json(&["import", "tot-log", log.to_str().unwrap(), "--verify", "--json"]);
    assert_eq!(s["steps"], 12);
    assert_eq!(s["steps_agreeing"], 12, "{s}");
}

/// Puzzle 964 of the reference run's log (tests/fixtures/tot-log-gpt4-964.NOTICE): a propose
/// prompt repeats in it, and the reference sampled it afresh while caching value prompts.
#[test]
fn replaying_an_imported_reference_log_draws_proposals_afresh_and_caches_values() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tot-log-gpt4-964.json");
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("imported");
    let imported =
        run_json(&["import", "tot-log", log.to_str().unwrap(), "--out", sessions.to_str().unwrap(), "--json"]);
    assert_eq!((imported["solved"].as_u64(), imported["solved_any"].as_u64()), (Some(1), Some(1)), "{imported}");
    let from = sessions.to_str().unwrap();
    let replayed = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--provider",
            "replay",
            "--replay-from",
            from,
            "--range",
            "964..965",
            "--lenient",
            "--n-evaluate",
            "3",
            "--json",
        ];
        args.extend_from_slice(extra);
        run_json(&args)
    };
    let s = replayed(&[]);
    assert_eq!((s["solved"].as_u64(), s["solved_any"].as_u64()), (Some(1), Some(1)), "the log's result: {s}");
    assert_eq!(s["failed_calls"], Value::Null, "every request was in the recording: {s}");
    assert!(s["cache_hits"].as_u64().unwrap() > 0, "repeated value prompts are cached: {s}");
    // Sharing proposals too answers the repeated propose prompt with its first reply: another search.
    let all = replayed(&["--cache-purposes", "all"]);
    assert_eq!(all["solved_any"], 0, "{all}");
    let off = replayed(&["--cache", "off"]);
    assert_eq!((off["solved"].as_u64(), off["cache_hits"].as_u64()), (Some(1), Some(0)), "{off}");
    assert_eq!(
        off["llm_calls"].as_u64().unwrap(),
        s["llm_calls"].as_u64().unwrap() + s["cache_hits"].as_u64().unwrap()
    );
    let out = bin().args(["run", "--cache-purposes", "value,proposals", "--input", "4 9 10 13"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown call purpose \"proposals\""));
}

#[test]
fn the_explorer_needs_a_terminal_and_says_so() {
    let out = bin().env("THOUGHTSCOPE_DATA_DIR", std::env::temp_dir()).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a terminal"));
}

#[test]
fn config_defaults_apply_and_bad_keys_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[defaults]\nmethod = \"tot-bs\"\nbreadth = 1\nsim_noise = 0\n")
        .unwrap();
    let out = bin()
        .env("THOUGHTSCOPE_CONFIG_DIR", dir.path())
        .args(["run", "--input", "4 9 10 13", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("config.toml") && stderr.contains("defaults.method"), "{stderr}");
    let s: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(s["method"], "tot-bfs", "the bad key falls back to the default");
    assert_eq!(s["solved"], 1, "sim_noise = 0 from the config makes the model perfect");
    std::fs::write(dir.path().join("config.toml"), "[defaults\n").unwrap();
    let out = bin()
        .env("THOUGHTSCOPE_CONFIG_DIR", dir.path())
        .args(["run", "--input", "4 9 10 13", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "a malformed config does not stop a run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml: line 1"));
}

#[test]
fn an_unknown_config_key_warns_naming_the_file_and_key_and_flags_win_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(&file, "[defaults]\nbreadht = 2\nbreadth = 1\nsim_noise = 0\n[default]\nmethod = \"io\"\n").unwrap();
    let rec = dir.path().join("one.jsonl");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--input", "4 9 10 13", "--record", rec.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        bin().env("THOUGHTSCOPE_CONFIG_DIR", dir.path()).args(args).output().unwrap()
    };
    let out = run(&[]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let name = file.display().to_string();
    for key in ["defaults.breadht: unknown key", "default: unknown key"] {
        let line = format!("warning: {name}: {key}");
        assert_eq!(stderr.lines().filter(|l| l.starts_with(&line)).count(), 1, "{line} in {stderr}");
    }
    let breadth = || thoughtscope::session::Session::load(&rec).unwrap().header.params.whole("breadth");
    assert_eq!(breadth(), Some(1), "the file's value over the default (5)");
    assert!(run(&["--breadth", "3"]).status.success());
    assert_eq!(breadth(), Some(3), "the flag over the file");
    std::fs::remove_file(&file).unwrap();
    assert!(run(&[]).status.success());
    assert_eq!(breadth(), Some(5), "the built-in default");
}

#[test]
fn demo_lists_the_bundled_sessions() {
    let out = bin().arg("demo").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert_eq!(stdout.lines().filter(|l| l.contains(".jsonl")).count(), 9, "{stdout}");
    assert!(stdout.contains("mcts.jsonl"));
    // Listed with their titles.
    assert!(stdout.contains("1. Beam search over thoughts (bfs-solved.jsonl)"), "{stdout}");
    assert!(stdout.contains("Self-consistency: the vote (cot-sc-vote.jsonl)"), "{stdout}");
    assert!(stdout.contains("A person edits a ReAct step (react-edit.jsonl)"), "{stdout}");
    assert!(stdout.contains("8. ReTreVal: the lesson on the next problem (retreval-uses.jsonl)"), "{stdout}");
    assert!(stdout.contains("9. A reasoning model's search (simulated thinking) (thinking-bfs.jsonl)"), "{stdout}");
    assert!(stdout.contains("edits the step"));
}

#[test]
fn react_on_qa_demo_beats_cot_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("react");
    let react = run_json(&[
        "run",
        "--task",
        "qa-demo",
        "--method",
        "react",
        "--range",
        "0..15",
        "--record",
        rec.to_str().unwrap(),
        "--json",
    ]);
    let cot =
        run_json(&["run", "--task", "qa-demo", "--method", "cot", "--samples", "1", "--range", "0..15", "--json"]);
    for key in ["n", "em", "f1", "mean_steps", "bad_calls", "llm_calls", "tool_calls", "tokens"] {
        assert!(react.get(key).is_some(), "summary lacks {key}: {react}");
    }
    let (r, c) = (react["em"].as_u64().unwrap(), cot["em"].as_u64().unwrap());
    assert!(r >= 11, "react answers most questions: {react}");
    assert!(r >= c + 5, "cot clearly fewer: react {r}, cot {c}");
    assert!(react["tool_calls"].as_u64().unwrap() >= 45);
    let replayed = run_json(&["replay", rec.to_str().unwrap(), "--headless", "--json"]);
    assert_eq!(without_time(replayed), without_time(react));
}

#[test]
fn react_with_native_tool_calls_answers_like_text_mode_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("native");
    let react = ["run", "--task", "qa-demo", "--method", "react", "--range", "0..15", "--json"];
    let mut native_args = react.to_vec();
    native_args.extend(["--tool-mode", "native", "--record", rec.to_str().unwrap()]);
    let native = run_json(&native_args);
    let text = run_json(&react);
    assert_eq!((native["tool_mode"].as_str(), text["tool_mode"].as_str()), (Some("native"), Some("text")));
    let (n, t) = (native["em"].as_u64().unwrap(), text["em"].as_u64().unwrap());
    assert!(n >= 11, "native tool calling answers most questions: {native}");
    assert!(n + 2 >= t, "about as well as text mode: native {n}, text {t}");
    assert_eq!(native["bad_calls"], 0, "{native}");
    assert!(native["tool_calls"].as_u64().unwrap() >= 45, "{native}");
    // The sessions hold the tool calls, and the transcript in the canonical text.
    let first = std::fs::read_to_string(rec.join("qa-demo-0000-react.jsonl")).unwrap();
    assert!(first.contains("\"tool_calls\":[{") && first.contains("\"tools\":[{"), "tool calls are recorded");
    assert!(first.contains("Action 1: Search["), "steps are written as Thought/Action text");
    let replayed = run_json(&["replay", rec.to_str().unwrap(), "--headless", "--json"]);
    assert_eq!(without_time(replayed), without_time(native));

    let out =
        bin().args(["run", "--task", "qa-demo", "--method", "cot", "--tool-mode", "native", "--range", "0"]).output();
    let out = out.unwrap();
    assert!(!out.status.success());
    let says = "--tool-mode is for --method react, react-cot-sc, cot-sc-react or retreval (the method is cot)";
    assert!(String::from_utf8_lossy(&out.stderr).contains(says), "{}", String::from_utf8_lossy(&out.stderr));

    // The hybrids' ReAct part acts with native tool calls too.
    let hybrid = run_json(&[
        "run",
        "--task",
        "qa-demo",
        "--method",
        "react-cot-sc",
        "--tool-mode",
        "native",
        "--range",
        "0..5",
        "--json",
    ]);
    assert_eq!(hybrid["tool_mode"], "native", "{hybrid}");
    assert!(hybrid["em"].as_u64().unwrap() >= 4, "{hybrid}");
    assert!(hybrid["tool_calls"].as_u64().unwrap() >= 15, "{hybrid}");
}

#[test]
fn tool_mode_comes_from_the_config_defaults() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[defaults]\ntask = \"qa-demo\"\ntool_mode = \"native\"\n").unwrap();
    let out = bin()
        .env("THOUGHTSCOPE_CONFIG_DIR", dir.path())
        .args(["run", "--method", "react", "--range", "0", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(s["tool_mode"], "native", "{s}");
    let out = bin()
        .env("THOUGHTSCOPE_CONFIG_DIR", dir.path())
        .args(["run", "--method", "react", "--tool-mode", "text", "--range", "0", "--json"])
        .output()
        .unwrap();
    let s: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
    assert_eq!(s["tool_mode"], "text", "the flag wins over the config");
}

/// The ReAct paper's hybrids on qa-demo with the sim: each switches on some
/// questions and not on others, and the recorded sessions replay to the same summary.
#[test]
fn hybrids_on_qa_demo_switch_parts_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let run = |method: &str, extra: &[&str]| {
        let rec = dir.path().join(method);
        let mut args = vec!["run", "--task", "qa-demo", "--method", method, "--range", "0..15"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--record", rec.to_str().unwrap(), "--json"]);
        let summary = run_json(&args);
        for key in ["em", "f1", "mean_steps", "bad_calls", "tool_calls", "tokens", "answered_by"] {
            assert!(summary.get(key).is_some(), "{method} summary lacks {key}: {summary}");
        }
        let replayed = run_json(&["replay", rec.to_str().unwrap(), "--headless", "--json"]);
        assert_eq!(without_time(replayed), without_time(summary.clone()), "{method} replays");
        let header = std::fs::read_to_string(rec.join(format!("qa-demo-0000-{method}.jsonl"))).unwrap();
        let header: Value = serde_json::from_str(header.lines().next().unwrap()).unwrap();
        assert_eq!(header["params"]["samples"], 21, "the paper's 21 CoT-SC samples by default");
        // The header records what the method reads: cot-sc-react's threshold, and no other method's parameters.
        let threshold = header["params"].get("majority_threshold");
        assert_eq!(threshold.is_some(), method == "cot-sc-react", "{method}: {header}");
        assert!(header["params"].get("breadth").is_none(), "{header}");
        let part = |p: &str| summary["answered_by"][p].as_u64().unwrap_or(0);
        (summary.clone(), part("react"), part("cot-sc"))
    };
    // Four steps are too few when the sim slips once: those questions fall back to CoT-SC.
    let (s, react, cot_sc) = run("react-cot-sc", &["--max-steps", "4"]);
    assert!(react >= 5 && cot_sc >= 2 && react + cot_sc == 15, "{s}");
    assert!(s["mean_steps"].as_f64().unwrap() <= 4.0, "ReAct steps only: {s}");
    assert!(s["em"].as_u64().unwrap() >= react, "the sim's finished ReAct episodes are right: {s}");
    // The sim wavers on some questions, so CoT-SC's majority is weak there and ReAct takes over.
    let (s, react, cot_sc) = run("cot-sc-react", &[]);
    assert!(react >= 2 && cot_sc >= 2 && react + cot_sc == 15, "{s}");
    assert!(s["tool_calls"].as_u64().unwrap() >= 4 * react, "{s}");
    assert!(s["em"].as_u64().unwrap() >= react, "{s}");
    // A task without tools cannot run them; the threshold is a share.
    let out = bin().args(["run", "--method", "cot-sc-react", "--range", "0..1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "--task game24 --method cot-sc-react: game24 has no ReAct steps with tools; methods that work: io,"
        ),
        "{err}"
    );
    let args = ["run", "--task", "qa-demo", "--method", "cot-sc-react", "--range", "0..1", "--majority-threshold", "2"];
    let out = bin().args(args).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--majority-threshold"));
}

/// MCTS runs headless like the other methods: its parameters go into the session
/// header, the run replays to the same summary, and its flags are refused elsewhere.
#[test]
fn mcts_runs_headless_records_its_parameters_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("sessions");
    let rec_s = rec.to_str().unwrap();
    let args = [
        "run",
        "--method",
        "mcts",
        "--uct-c",
        "0.7",
        "--iterations",
        "12",
        "--range",
        "900..905",
        "--record",
        rec_s,
        "--json",
    ];
    let original = run_json(&args);
    assert_eq!(original["method"], "mcts");
    assert_eq!(original["n"], 5);
    assert!(original["llm_calls"].as_u64().unwrap() > 5, "{original}");
    let replayed = run_json(&["replay", rec_s, "--headless", "--json"]);
    assert_eq!(without_time(replayed), without_time(original));
    let first = std::fs::read_dir(&rec).unwrap().next().unwrap().unwrap().path();
    let header: Value = serde_json::from_str(std::fs::read_to_string(first).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(header["params"]["uct_c"], 0.7);
    assert_eq!(header["params"]["iterations"], 12);
    // Its flags belong to it; bad values get one plain line.
    let out = bin().args(["run", "--method", "tot-bfs", "--iterations", "5", "--input", "4 9 10 13"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--iterations is for --method mcts (the method is tot-bfs)"));
    let out = bin().args(["run", "--method", "mcts", "--uct-c", "nan", "--input", "4 9 10 13"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("uct_c (--uct-c) is NaN: it must be a number from 0 to 100"));
    let out = bin().args(["run", "--method", "mcts", "--task", "qa-demo", "--range", "0..1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--task qa-demo --method mcts: qa-demo has no tree-search steps; methods that work: io,"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn bench_times_the_replay_cursor_on_a_long_session() {
    let out =
        bin().args(["bench", "--replay-only", "--replay-inputs", "1500", "--replay-seeks", "5"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    let find = |start: &str| lines.iter().find(|l| l.trim_start().starts_with(start)).copied();
    let head = find("replay:").unwrap_or_else(|| panic!("{stdout}"));
    let total: usize = head.split(", ").nth(1).and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap();
    assert!(total >= 1500, "{head}");
    assert!(find("open").is_some_and(|l| l.contains(" ms") && l.contains("checkpoints")), "{stdout}");
    assert!(find("forward step").is_some_and(|l| l.contains("mean") && l.contains("goal ≤ 1 ms")), "{stdout}");
    assert!(find("seek (5 random").is_some_and(|l| l.contains("max") && l.contains("goal ≤ 50 ms")), "{stdout}");
    assert!(find("full rebuild").is_some_and(|l| l.contains("seek mean / rebuild")), "{stdout}");
    // Only the replay section was asked for.
    assert!(!stdout.contains("concurrency:"), "{stdout}");
}

/// Method parameters out of range are refused before anything runs, with a line
/// naming the parameter, its flag and its range (`--n-evaluate 4294967295` used to
/// abort allocating 309 GB; `--breadth 0` and `--max-steps 0` ran silently).
#[test]
fn method_parameters_out_of_range_are_refused_up_front() {
    for (flags, says) in [
        (
            &["--n-evaluate", "4294967295"][..],
            "n_evaluate (--n-evaluate) is 4294967295: it must be a whole number from 1 to 1000",
        ),
        (&["--breadth", "0"][..], "breadth (--breadth) is 0: it must be a whole number from 1 to 100000"),
        (&["--max-steps", "0"][..], "max_steps (--max-steps) is 0"),
        (&["--method", "tot-dfs", "--max-states", "0"][..], "max_states (--max-states) is 0"),
        (&["--method", "cot", "--samples", "0"][..], "samples (--samples) is 0"),
        (&["--temperature=-1"][..], "temperature (--temperature) is -1"),
        (&["--method", "mcts", "--iterations", "0"][..], "iterations (--iterations) is 0"),
        // Non-finite numbers are refused as the config file refuses them (they used to run at the defaults).
        (&["--temperature", "NaN"][..], "temperature (--temperature) is NaN: it must be a number from 0 to 2"),
        (&["--temperature", "inf"][..], "temperature (--temperature) is inf: it must be a number from 0 to 2"),
        (
            &["--method", "tot-dfs", "--threshold", "NaN"][..],
            "threshold (--threshold) is NaN: it must be a finite number",
        ),
        (
            &["--method", "tot-dfs", "--threshold", "inf"][..],
            "threshold (--threshold) is inf: it must be a finite number",
        ),
        (
            &["--method", "tot-dfs", "--threshold", "-inf"][..],
            "threshold (--threshold) is -inf: it must be a finite number",
        ),
        (
            &["--method", "cot-sc-react", "--majority-threshold", "NaN"][..],
            "majority_threshold (--majority-threshold) is NaN: it must be a number from 0 to 1",
        ),
        (
            &["--method", "cot-sc-react", "--majority-threshold", "inf"][..],
            "majority_threshold (--majority-threshold) is inf: it must be a number from 0 to 1",
        ),
        (
            &["--method", "cot-sc-react", "--majority-threshold", "-inf"][..],
            "majority_threshold (--majority-threshold) is -inf: it must be a number from 0 to 1",
        ),
    ] {
        let out = bin().args(["run", "--range", "900..901"]).args(flags).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?} ran: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
    }
}

/// Run the binary as a user would see it fail: with RUST_BACKTRACE=1 (which must not
/// matter), stderr to a pipe. Returns (exit code, stderr).
fn user_error(args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .env("THOUGHTSCOPE_CONFIG_DIR", dir.path())
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_one_plain_line(args: &[&str], code: i32, needle: &str) {
    let (status, stderr) = user_error(args);
    assert_eq!(status, Some(code), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one line, not:\n{stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(needle), "{args:?}: {stderr}");
    for noise in ["Location", "src/", "BACKTRACE", "backtrace", "\x1b[", "panicked"] {
        assert!(!stderr.contains(noise), "{args:?}: {noise:?} in {stderr}");
    }
}

#[test]
fn user_errors_are_one_plain_line_whatever_rust_backtrace_says() {
    assert_one_plain_line(&["run", "--task", "gam24", "--range", "0..1"], 2, "unknown task \"gam24\" (known: game24");
    assert_one_plain_line(&["run", "--range", "0..5000"], 2, "1362 problems");
    assert_one_plain_line(&["replay", "/nonexistent/x.jsonl", "--headless"], 1, "/nonexistent/x.jsonl");
    // clap's own errors too, tips kept.
    assert_one_plain_line(&["run", "--tsk", "game24"], 2, "tip: a similar argument exists: '--task'");
    assert_one_plain_line(&["run", "--breadth", "x"], 2, "invalid value 'x' for '--breadth");
}

#[test]
fn numeric_flags_are_range_checked_naming_the_flag_and_negative_numbers_reach_the_check() {
    let run = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut args = vec!["run", "--range", "900..901"];
        args.extend_from_slice(extra);
        args
    };
    let local = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut args = run(&["--provider", "ollama", "--model", "m"]);
        args.extend_from_slice(extra);
        args
    };
    assert_one_plain_line(&local(&["--timeout", "1e30"]), 2, "--timeout must be a number of seconds above 0");
    assert_one_plain_line(&local(&["--connect-timeout", "1e30"]), 2, "--connect-timeout must be");
    assert_one_plain_line(&local(&["--timeout", "-5"]), 2, "--timeout must be a number of seconds");
    assert_one_plain_line(&local(&["--retries", "1000000"]), 2, "--retries must be at most 100");
    assert_one_plain_line(&run(&["--sim-latency-ms", "18446744073709551615"]), 2, "--sim-latency-ms must be at most");
    assert_one_plain_line(&run(&["--sim-noise", "-1"]), 2, "--sim-noise is a dial");
    assert_one_plain_line(&run(&["--sim-noise", "NaN"]), 2, "--sim-noise is a dial");
    assert_one_plain_line(&run(&["--sim-slip", "1.5"]), 2, "--sim-slip is a rate from 0 to 1, not 1.5");
    assert_one_plain_line(&run(&["--sim-misjudge", "-0.1"]), 2, "--sim-misjudge is a rate from 0 to 1");
    assert_one_plain_line(&run(&["--concurrency", "100000"]), 2, "--concurrency must be from 1 to 1024");
    assert_one_plain_line(&run(&["--budget-usd", "-1"]), 2, "--budget-usd must be a positive amount");
    assert_one_plain_line(&run(&["--budget-usd", "NaN"]), 2, "--budget-usd must be a positive amount");
    // A negative value is a value, not an unknown flag, for the engine's parameters too.
    let (_, stderr) = user_error(&run(&["--temperature", "-1"]));
    assert!(!stderr.contains("unexpected argument"), "{stderr}");
}

#[test]
fn the_config_files_numbers_are_checked_naming_the_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[providers.ollama]\ntimeout_secs = 1e30\n").unwrap();
    let c = config.to_str().unwrap();
    let args = ["run", "--range", "900..901", "--provider", "ollama", "--model", "m", "--config", c];
    assert_one_plain_line(&args, 1, &format!("{c}: providers.ollama.timeout_secs must be a number of seconds"));
    std::fs::write(&config, "[prices.\"m\"]\ninput = -1.0\noutput = 1.0\n").unwrap();
    assert_one_plain_line(&args, 1, "prices.\"m\".input must be a price of 0 or more, not -1");
    std::fs::write(&config, "[defaults]\nconcurrency = 5000\n").unwrap();
    assert_one_plain_line(
        &args[..3].iter().chain(["--config", c].iter()).copied().collect::<Vec<_>>(),
        2,
        "defaults.concurrency in",
    );
}

#[test]
fn a_missing_prompts_directory_and_an_unknown_theme_are_errors() {
    assert_one_plain_line(
        &["run", "--range", "900..901", "--prompts", "/nonexistent/prompts"],
        2,
        "--prompts /nonexistent/prompts: does not exist",
    );
    let session = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
    let s = session.to_str().unwrap();
    assert_one_plain_line(&["replay", s, "--headless", "--prompts", "/nonexistent/p"], 2, "--prompts /nonexistent/p");
    // The theme is checked before the explorer asks for a terminal.
    assert_one_plain_line(&["tui", "--theme", "solarised"], 2, "--theme \"solarised\": no such theme (known: ");
    assert_one_plain_line(&["replay", s, "--theme", "solarised"], 2, "no such theme");
}

#[test]
fn a_reader_that_closes_the_pipe_early_ends_the_output_quietly() {
    let session = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
    let runs: [&[&str]; 3] =
        [&["replay", session.to_str().unwrap(), "--headless"], &["run", "--range", "900..903"], &["demo"]];
    for args in runs {
        let mut child = bin()
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the program writes: every write hits a broken pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

/// Wait (bounded) for a child to end; kill it and fail if it does not.
fn wait_bounded(mut child: std::process::Child, what: &str) -> std::process::Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status().unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// A slow headless run (simulated latency) interrupted once `out` holds two finished problems.
fn interrupt_a_run(signal: &str) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.jsonl");
    let rec = dir.path().join("sessions");
    let child = bin()
        .args(["run", "--range", "900..960", "--sim-latency-ms", "20", "--concurrency", "2", "--json"])
        .args(["--out", out.to_str().unwrap(), "--record", rec.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&out).map_or(0, |t| t.lines().count()) < 2 {
        assert!(std::time::Instant::now() < deadline, "no problem finished");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    send_signal(child.id(), signal);
    (wait_bounded(child, "the interrupted run"), dir)
}

#[test]
fn a_signal_stops_a_headless_run_with_a_partial_summary_and_keeps_the_finished_problems() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let (output, dir) = interrupt_a_run(signal);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(code), "SIG{signal}: {stderr}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let summary: Value = serde_json::from_str(stdout.lines().last().expect("a summary")).unwrap();
        assert_eq!(summary["stopped"], format!("interrupted by SIG{signal}"), "{summary}");
        let rows: Vec<Value> = std::fs::read_to_string(dir.path().join("rows.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // Every problem started is in --out, as a line each, and in the summary.
        assert!(rows.len() >= 2 && rows.len() < 60, "{} rows", rows.len());
        assert_eq!(summary["n"], rows.len(), "{summary}");
        let calls: u64 = rows.iter().map(|r| r["calls"].as_u64().unwrap()).sum();
        assert_eq!(summary["llm_calls"], calls, "the stopped problem's calls are counted");
        // The problem in flight says it was stopped; its session has the stopped record and the end line.
        let last = rows.last().unwrap();
        assert_eq!(last["stopped"], format!("interrupted by SIG{signal}"), "{last}");
        let session = last["session"].as_str().unwrap();
        let text = std::fs::read_to_string(session).unwrap();
        assert!(text.contains(&format!("{{\"kind\":\"stopped\",\"reason\":\"interrupted by SIG{signal}\"}}")));
        assert!(text.lines().last().unwrap().starts_with("{\"kind\":\"end\""), "the session is closed");
        let replayed = bin().args(["replay", session, "--headless", "--json"]).output().unwrap();
        assert!(replayed.status.success(), "{}", String::from_utf8_lossy(&replayed.stderr));
        let replayed: Value = serde_json::from_slice(replayed.stdout.trim_ascii()).unwrap();
        assert_eq!(replayed["stopped"], format!("interrupted by SIG{signal}"));
        assert!(replayed.get("incomplete").is_none(), "a stopped session is complete: {replayed}");
    }
}

/// The problems of `rec` (by index) whose session has its end line.
fn ended_sessions(rec: &Path) -> std::collections::BTreeSet<u64> {
    let mut ended = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(rec).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let index = name.strip_prefix("game24-").and_then(|n| n.split('-').next()).and_then(|n| n.parse().ok());
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let closed = text.ends_with('\n') && text.lines().last().is_some_and(|l| l.starts_with("{\"kind\":\"end\""));
        if let (Some(index), true) = (index, closed) {
            ended.insert(index);
        }
    }
    ended
}

/// The problems a session was started for (its file exists), by index.
fn started_sessions(rec: &Path) -> std::collections::BTreeSet<u64> {
    std::fs::read_dir(rec)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("game24-").and_then(|n| n.split('-').next()).and_then(|n| n.parse().ok())
        })
        .collect()
}

#[test]
fn a_kill_9_mid_run_keeps_every_finished_problem_in_out() {
    let dir = tempfile::tempdir().unwrap();
    let (out, rec) = (dir.path().join("out.jsonl"), dir.path().join("rec"));
    let mut child = bin()
        .args(["run", "--range", "900..930", "--method", "mcts", "--sim-latency-ms", "15", "--json"])
        .args(["--record", rec.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill once a problem has ended while one before it is still running: written in
    // problem order, the later one's line would still be held back then.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        let (ended, started) = (ended_sessions(&rec), started_sessions(&rec));
        let first_running = started.difference(&ended).next().copied();
        if first_running.is_some_and(|r| ended.iter().any(|&e| e > r)) {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended before any problem finished out of order");
        assert!(std::time::Instant::now() < deadline, "no problem finished out of order in 90 s");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    send_signal(child.id(), "KILL");
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
    let ended = ended_sessions(&rec);
    let text = std::fs::read_to_string(&out).unwrap();
    let written: std::collections::BTreeSet<u64> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("a torn --out line ({e}): {l}")))
        .map(|r| r["index"].as_u64().expect("each line names its problem"))
        .collect();
    let missing: Vec<u64> = ended.difference(&written).copied().collect();
    assert!(missing.is_empty(), "finished (session ended) but not in --out: {missing:?}; out has {written:?}");
    assert!(!ended.is_empty());
}

#[test]
fn a_record_path_that_cannot_be_written_fails_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_file = file.join("x.jsonl");
    for (record, range, expect) in [
        ("/dev/full", "900", "No space left on device"),
        (under_file.to_str().unwrap(), "900", "ot a directory"),
        (file.to_str().unwrap(), "900..902", "ot a directory"),
    ] {
        let out = bin().args(["run", "--range", range, "--json", "--record", record]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--record {record} ran");
        assert!(stderr.contains(expect) && stderr.contains("--record"), "--record {record}: {stderr}");
        assert!(out.stdout.is_empty(), "nothing ran, so no summary: {}", String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn a_session_write_failure_mid_run_stops_loudly_and_keeps_the_spending() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("sessions");
    // A file-size limit makes writes past 20 KB fail (EFBIG) like a full disk, after the header.
    let script = "trap '' XFSZ; ulimit -f 40; exec \"$0\" \"$@\"";
    let out = Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_thoughtscope")])
        .args(["run", "--range", "900..905", "--json", "--budget-tokens", "10000000", "--record"])
        .arg(&rec)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("game24-0900-tot-bfs.jsonl") && stderr.contains("os error 27"), "{stderr}");
    let summary: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(summary["n"], 1, "no problem starts after the failure: {summary}");
    assert!(summary["llm_calls"].as_u64().unwrap() > 0, "what was spent is counted: {summary}");
    assert!(summary["prompt_tokens"].as_u64().unwrap() > 0, "{summary}");
    assert!(summary["stopped"].as_str().unwrap().contains("could not be written"), "{summary}");
}

/// Record `range` of `method` into `dir`, one session per problem.
fn record_into(dir: &Path, method: &str, range: &str) {
    run_json(&["run", "--method", method, "--range", range, "--record", dir.to_str().unwrap(), "--json"]);
}

#[test]
fn a_directory_replay_skips_bad_files_and_summarises_each_task_and_method() {
    let dir = tempfile::tempdir().unwrap();
    let bfs = dir.path().join("bfs");
    record_into(&bfs, "tot-bfs", "900..902");
    let cot = dir.path().join("cot");
    record_into(&cot, "cot", "905..907");
    let mixed = dir.path().join("mixed");
    std::fs::create_dir(&mixed).unwrap();
    for from in [&bfs, &cot] {
        for f in std::fs::read_dir(from).unwrap() {
            let f = f.unwrap().path();
            let name =
                format!("{}-{}", from.file_name().unwrap().to_str().unwrap(), f.file_name().unwrap().to_str().unwrap());
            std::fs::copy(&f, mixed.join(name)).unwrap();
        }
    }
    std::fs::write(mixed.join("a-junk.jsonl"), "not a session\n").unwrap();
    let fifo = mixed.join("b-pipe.jsonl");
    let has_fifo = Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    let child = bin()
        .args(["replay", mixed.to_str().unwrap(), "--headless", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_bounded(child, "the directory replay");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("warning: skipped") && stderr.contains("a-junk.jsonl:1"), "{stderr}");
    if has_fifo {
        assert!(stderr.contains("b-pipe.jsonl is a FIFO"), "{stderr}");
    }
    let summaries: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(summaries.len(), 2, "one summary per task and method: {summaries:?}");
    assert_eq!((summaries[0]["method"].as_str(), summaries[0]["n"].as_u64()), (Some("tot-bfs"), Some(2)));
    assert_eq!((summaries[1]["method"].as_str(), summaries[1]["n"].as_u64()), (Some("cot"), Some(2)));
    assert_eq!(summaries[0]["params"]["breadth"], 5, "the summary says what ran: {}", summaries[0]);
    // A single bad file is still an error.
    let out = bin().args(["replay", mixed.join("a-junk.jsonl").to_str().unwrap(), "--headless"]).output().unwrap();
    assert!(!out.status.success());
}

/// Sessions recorded into a folder are named after task, problem and method, as the
/// explorer names its own; a second run of the same method keeps the first run's
/// sessions: its own are named `-2` (before, cot's game24-0900.jsonl silently replaced
/// tot-bfs's, and later runs' names did not say the method).
#[test]
fn a_second_run_into_the_same_folder_keeps_the_first_runs_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("runs");
    record_into(&folder, "tot-bfs", "900..902");
    record_into(&folder, "cot", "900..902");
    record_into(&folder, "tot-bfs", "900..901");
    let mut names: Vec<String> =
        std::fs::read_dir(&folder).unwrap().map(|f| f.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "game24-0900-cot.jsonl",
            "game24-0900-tot-bfs-2.jsonl",
            "game24-0900-tot-bfs.jsonl",
            "game24-0901-cot.jsonl",
            "game24-0901-tot-bfs.jsonl"
        ]
    );
    let method = |name: &str| {
        let text = std::fs::read_to_string(folder.join(name)).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        header["params"]["method"].as_str().unwrap().to_string()
    };
    for name in &names {
        assert!(name.contains(&format!("-{}", method(name))), "{name} names its method");
    }
}

#[test]
fn a_session_cut_inside_an_inputs_events_replays_as_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.jsonl");
    let f = file.to_str().unwrap();
    let original = run_json(&["run", "--input", "4 9 10 13", "--record", f, "--json"]);
    assert_eq!(original["params"]["method"], "tot-bfs", "the summary carries the parameters: {original}");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // An input followed by at least two of its events: cut after the first event, at a line boundary.
    let at = (1..lines.len() - 2)
        .find(|&i| {
            lines[i].starts_with("{\"kind\":\"input\"")
                && lines[i + 1].starts_with("{\"kind\":\"event\"")
                && lines[i + 2].starts_with("{\"kind\":\"event\"")
        })
        .expect("an input with two events");
    std::fs::write(&file, lines[..at + 2].join("\n") + "\n").unwrap();
    let out = bin().args(["replay", f, "--headless", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "a cut file replays: {stderr}");
    assert!(stderr.contains("is torn") && stderr.contains("dropped it"), "{stderr}");
    assert!(stderr.contains("one.jsonl: incomplete"), "{stderr}");
    let s: Value = serde_json::from_slice(out.stdout.trim_ascii()).unwrap();
    assert_eq!(s["incomplete"], 1, "{s}");
    // Cut between two inputs: nothing torn, still incomplete.
    let next_input = (at + 1..lines.len()).find(|&i| lines[i].starts_with("{\"kind\":\"input\"")).unwrap();
    std::fs::write(&file, lines[..next_input].join("\n") + "\n").unwrap();
    let out = bin().args(["replay", f, "--headless"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("torn"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("incomplete 1/1"));
}

#[test]
fn replay_of_a_fifo_or_a_device_fails_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.jsonl");
    if Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        let child = bin()
            .args(["replay", fifo.to_str().unwrap(), "--headless"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_bounded(child, "replay of a FIFO");
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("is a FIFO"));
    }
    let out = bin().args(["replay", "/dev/zero", "--headless"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/zero is a device"));
}

#[test]
fn the_explorers_options_work_without_the_tui_command() {
    // As the README writes it: the options go to the default command, the explorer, which
    // needs a terminal (not a clap error about an unexpected argument).
    let data = tempfile::tempdir().unwrap();
    let out = bin()
        .env("THOUGHTSCOPE_DATA_DIR", data.path())
        .args(["--task", "qa-demo", "--method", "react"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("the explorer needs a terminal"), "{stderr}");
    assert!(!stderr.contains("unexpected argument"), "{stderr}");
    // A bad value is still named like any flag of `tui`.
    let out = bin().env("THOUGHTSCOPE_DATA_DIR", data.path()).args(["--method", "bfs-ish"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--method"), "{stderr}");
}

#[test]
fn the_explorers_settings_warnings_are_kept_for_the_screen_and_printed_when_it_cannot_open() {
    // The explorer shows them on screen; with no terminal they still reach stderr, naming file and key.
    let config = tempfile::tempdir().unwrap();
    std::fs::write(config.path().join("config.toml"), "[defaults]\nbreadth = \"five\"\n").unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = bin()
        .env("THOUGHTSCOPE_CONFIG_DIR", config.path())
        .env("THOUGHTSCOPE_DATA_DIR", data.path())
        .args(["--range", "900..903"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("config.toml: defaults.breadth"), "{stderr}");
    assert!(stderr.contains("the explorer needs a terminal"), "{stderr}");
    assert_eq!(stderr.matches("defaults.breadth").count(), 1, "once: {stderr}");
}

#[test]
fn a_run_without_problems_names_the_tasks_own_kind_of_input() {
    let stderr = |args: &[&str]| {
        let out = bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(stderr(&["run", "--task", "game24"]).contains("--input \"4 9 10 13\""));
    let math = stderr(&["run", "--task", "math-demo"]);
    assert!(math.contains("--input \"What is $2^{10} - 1$?\"") && !math.contains("4 9 10 13"), "{math}");
    let mc = stderr(&["run", "--task", "mmlu-pro"]);
    assert!(mc.contains("no questions of its own") && mc.contains("one question with --input"), "{mc}");
    assert!(stderr(&["run", "--task", "math500"]).contains("no problems of its own"));
}

/// Sessions of format version 1 record every parameter of every method; they replay
/// with zero differences, read as the method's own parameters (react-edit ran with
/// `max_steps` 4), and the summary says so.
#[test]
fn version_1_sessions_replay_with_the_parameters_their_method_reads() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1-sessions");
    for (file, method, own) in [("react-edit.jsonl", "react", "max_steps"), ("cot-sc-vote.jsonl", "cot-sc", "samples")]
    {
        let path = fixtures.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(header["version"], 1, "{file} is a version 1 recording");
        assert!(header["params"].get("breadth").is_some(), "{file} records every method's parameters");
        let out = bin().args(["replay", path.to_str().unwrap(), "--headless", "--json"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !stderr.contains("replay differs"), "{file}: {stderr}");
        let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["params"]["method"], method);
        assert_eq!(summary["params"][own], header["params"][own], "{file}: {summary}");
        assert!(summary["params"].get("breadth").is_none(), "only {method}'s parameters: {summary}");
    }
}

/// `run --json` says what ran: the method and exactly the parameters it reads, its
/// own defaults included; a flag of other methods is refused, naming every method
/// that reads it.
#[test]
fn run_json_shows_the_methods_own_parameters() {
    let s = run_json(&["run", "--method", "mcts", "--iterations", "3", "--input", "4 9 10 13", "--json"]);
    let params = s["params"].as_object().unwrap();
    assert_eq!(params["iterations"], 3);
    assert_eq!((params["uct_c"].as_f64(), params["rollout_depth"].as_u64()), (Some(1.0), Some(0)), "{s}");
    assert!(params.get("breadth").is_none() && params.get("samples").is_none(), "{s}");
    let s = run_json(&["run", "--method", "self-refine", "--input", "4 9 10 13", "--json"]);
    let keys: Vec<&str> = s["params"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["feedback", "first", "method", "rounds", "seed", "temperature"], "{s}");
    let out = bin().args(["run", "--method", "cot", "--lenient", "--input", "4 9 10 13"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim(), "error: --lenient is for --method tot-bfs, tot-dfs or mcts (the method is cot)");
}

/// `run --help` lists each parameter once, under the heading of who reads it.
#[test]
fn run_help_groups_the_parameters_by_the_methods_that_read_them() {
    let out = bin().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let heading_of = |flag: &str| -> String {
        let mut heading = "";
        for line in help.lines() {
            if !line.starts_with(' ') && line.ends_with(':') {
                heading = line;
            }
            let arg = line.trim_start();
            if arg == format!("--{flag}") || arg.starts_with(&format!("--{flag} ")) {
                return heading.to_string();
            }
        }
        panic!("--{flag} is not in {help}")
    };
    assert_eq!(heading_of("temperature"), "Options of every method:");
    assert_eq!(heading_of("uct-c"), "Options of --method mcts:");
    assert_eq!(heading_of("no-memory"), "Options of --method retreval:");
    assert_eq!(heading_of("samples"), "Options several methods read (each names its methods):");
    assert_eq!(help.matches("      --samples ").count(), 1, "once");
    assert!(help.contains("[default: 10; 21 for react-cot-sc, cot-sc-react]"), "{help}");
}

/// `--task math-demo` alone: the default method (tot-bfs) cannot serve it, so the first
/// method that does runs, and a note says so with every method that works (issue 28).
#[test]
fn a_task_the_default_method_cannot_serve_runs_the_first_that_can_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["run", "--task", "math-demo", "--range", "0..1", "--json"])
        .env("THOUGHTSCOPE_DATA_DIR", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let note =
        err.lines().find(|l| l.starts_with("note: the default method tot-bfs")).unwrap_or_else(|| panic!("{err}"));
    let task = thoughtscope::tasks::build("math-demo", &Default::default(), &mut Vec::new()).unwrap();
    let serving: Vec<&str> = thoughtscope::engine::methods::serving(task.as_ref(), &Default::default())
        .iter()
        .map(|i| i.kind.label())
        .collect();
    assert!(note.contains(&format!("running {},", serving[0])), "{note}");
    assert!(note.ends_with(&format!("(--method names another: {})", serving.join(", "))), "{note}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["method"], serving[0]);
    // A method named is never replaced.
    let out = bin().args(["run", "--task", "math-demo", "--method", "tot-bfs", "--range", "0..1"]).output().unwrap();
    assert!(!out.status.success());
}

/// `memory --memory NAME` is `run --memory NAME`'s spelling; `--name` is the same.
#[test]
fn the_memory_command_takes_the_runs_spelling_of_a_memory() {
    let dir = tempfile::tempdir().unwrap();
    let list = |flag: &str| {
        let out =
            bin().args(["memory", flag, "shared", "list"]).env("THOUGHTSCOPE_DATA_DIR", dir.path()).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
    };
    let (a, b) = (list("--memory"), list("--name"));
    assert_eq!(a, b);
    assert!(a.1.contains("shared"), "{}", a.1);
}

/// `replay --help` says what replay does: it opens the explorer; --headless prints.
#[test]
fn replay_help_says_it_opens_the_explorer_and_headless_prints() {
    let out = bin().args(["replay", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let first = help.lines().next().unwrap_or_default();
    assert!(first.contains("explorer") && first.contains("--headless"), "{help}");
    let top = String::from_utf8_lossy(&bin().arg("--help").output().unwrap().stdout).to_string();
    let line = top.lines().find(|l| l.trim_start().starts_with("replay")).unwrap_or_default();
    assert!(line.contains("explorer"), "{top}");
}
