//! `thoughtscope import tot-log` on the reference's other logs: naive IO/CoT sampling of
//! Game of 24 (`accs` or `infos`) and crosswords, and the crossword DFS. Small fixtures
//! check detection, the recomputed figures, sessions that replay, and `--verify` failing
//! on tampered logs; the shared files (skipped with a printed reason when absent) must
//! give the figures /work/shared/data/README.md states.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn run(args: &[&str]) -> Output {
    bin().env("NO_COLOR", "1").args(args).output().expect("the binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn last_json(out: &Output) -> Value {
    assert!(out.status.success(), "failed:\n{}", stderr(out));
    serde_json::from_str(stdout(out).lines().last().expect("output")).expect("JSON")
}

fn import_json(file: &Path, out_dir: Option<&Path>) -> Value {
    let mut args = vec!["import", "tot-log", file.to_str().unwrap(), "--verify", "--json"];
    if let Some(d) = out_dir {
        args.extend(["--out", d.to_str().unwrap()]);
    }
    last_json(&run(&args))
}

/// `fixture` changed by `edit`, written to `dir/name`.
fn edited(fixture_name: &str, dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut log: Value = serde_json::from_str(&std::fs::read_to_string(fixture(fixture_name)).unwrap()).unwrap();
    edit(&mut log);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(&log).unwrap()).unwrap();
    path
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

/// `--verify` fails on each tampered log, saying the difference given with it.
fn verify_fails_saying(cases: Vec<(PathBuf, &str)>) {
    for (path, said) in cases {
        let out = run(&["import", "tot-log", path.to_str().unwrap(), "--verify"]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{}: --verify passed a tampered log", path.display());
        assert!(err.contains(said), "{}: {err}", path.display());
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn each_format_is_recognised_and_named() {
    let cases = [
        ("tot-other-game24-naive.json", "format: Game of 24 naive sampling log", "--method io"),
        (
            "game24_tiny_0.7_naive_cot_sample_3_start900_end902.json",
            "format: Game of 24 naive sampling log",
            "--method cot",
        ),
        ("tot-other-crosswords-naive.json", "format: crosswords naive sampling log", "--method io"),
        ("tot-other-crosswords-dfs.json", "format: crossword DFS log", "tot-dfs --task crosswords"),
        ("tot-log-3.json", "format: Game-of-24 BFS log", "propose"),
        ("tot-other-text-naive.json", "format: creative writing naive sampling log", "--method io"),
        ("tot-other-text-bfs.json", "format: creative-writing BFS log", "--method_evaluate vote"),
    ];
    for (name, format, method) in cases {
        let out = run(&["import", "tot-log", fixture(name).to_str().unwrap(), "--verify"]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(format), "{name}: {text}");
        assert!(text.contains(method), "{name}: {text}");
    }
    // Something else is refused in one line naming every format read, writing's included.
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"[{"name": "x"}]"#).unwrap();
    let out = run(&["import", "tot-log", other.to_str().unwrap(), "--verify"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("creative-writing BFS log") && err.contains("crossword DFS log"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn game24_naive_figures_sessions_and_tokens() {
    // `infos` with r (run.py's test_output), CoT from the file name, two inputs of three samples.
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("game24_tiny_0.7_naive_cot_sample_3_start900_end902.json");
    let j = import_json(&file, Some(dir.path()));
    assert_eq!(j["method"], "cot");
    assert_eq!(j["model"], "tiny");
    assert_eq!((j["samples"].as_u64(), j["samples_correct"].as_u64()), (Some(6), Some(3)));
    assert_eq!((j["puzzles_any"].as_u64(), j["puzzles_first"].as_u64()), (Some(2), Some(2)));
    // usage_so_far is cumulative: the second input spent 1000 prompt and 220 completion tokens.
    assert_eq!((j["prompt_tokens"].as_u64(), j["completion_tokens"].as_u64()), (Some(2000), Some(520)));
    assert_eq!(j["puzzles_agreeing"].as_u64(), Some(2));
    // The sessions replay without a provider, with the log's tokens and the same figures.
    let replay = last_json(&run(&["replay", "--headless", "--json", dir.path().to_str().unwrap()]));
    let text = replay.to_string();
    assert!(text.contains("2000") && text.contains("520"), "the tokens reach the sessions: {text}");
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files.len(), 2, "{files:?}");
    // `accs` (run.py's naive_run) works the same.
    let j = import_json(&fixture("tot-other-game24-naive.json"), None);
    assert_eq!((j["samples"].as_u64(), j["samples_correct"].as_u64()), (Some(6), Some(0)));
}

#[test]
fn crosswords_naive_figures_are_the_mean_over_samples() {
    let j = import_json(&fixture("tot-other-crosswords-naive.json"), None);
    assert_eq!(j["task"], "crosswords");
    assert_eq!(j["samples"].as_u64(), Some(4));
    // The log's infos: letters 0.24, 0.40 (input 0) and two of input 1; all re-derive.
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("tot-other-crosswords-naive.json")).unwrap()).unwrap();
    let infos: Vec<&Value> = log.as_array().unwrap().iter().flat_map(|e| e["infos"].as_array().unwrap()).collect();
    let mean = |k: &str| infos.iter().map(|i| i[k].as_f64().unwrap()).sum::<f64>() / infos.len() as f64;
    assert!(close(&j["letter"], mean("r_letter")), "{j}");
    assert!(close(&j["word"], mean("r_word")), "{j}");
    assert_eq!(j["games"].as_u64(), Some(0));
}

#[test]
fn crossword_dfs_log_reruns_in_the_logs_order_with_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let j = import_json(&fixture("tot-other-crosswords-dfs.json"), Some(dir.path()));
    assert_eq!(j["format"], "crosswords_dfs");
    assert_eq!((j["puzzles"].as_u64(), j["puzzles_agreeing"].as_u64()), (Some(2), Some(2)));
    assert_eq!(j["states"].as_u64(), Some(6));
    // The deepest state of each puzzle, first visited on ties, from the log's own infos.
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("tot-other-crosswords-dfs.json")).unwrap()).unwrap();
    let mut letters = 0.0;
    for states in log.as_array().unwrap() {
        let mut deepest: Option<&Value> = None;
        for s in states.as_array().unwrap() {
            if deepest.is_none_or(|d| s["env_step"].as_u64() > d["env_step"].as_u64()) {
                deepest = Some(s);
            }
        }
        letters += deepest.unwrap()["info"]["r_letter"].as_f64().unwrap();
    }
    assert!(close(&j["letter"], letters / 2.0), "{j}");
    let replay = last_json(&run(&["replay", "--headless", "--json", dir.path().to_str().unwrap()]));
    assert!(replay.to_string().contains("tot-dfs"), "{replay}");
}

#[test]
fn a_branching_dfs_log_without_pruning_backtracks_as_logged() {
    // Puzzle 0: two subtrees under h2, then the root's second child; a state judged
    // impossible (h1. tasks) is expanded, so the run was without pruning.
    let dir = tempfile::tempdir().unwrap();
    let j = import_json(&fixture("crosswords_dfs_no_prune_tiny.json"), Some(dir.path()));
    assert_eq!(j["prune"], false);
    assert_eq!((j["states"].as_u64(), j["puzzles_agreeing"].as_u64()), (Some(7), Some(1)));
    // Deepest: depth 3, first visited (h2 h1 h3: 15 of 25 letters, 3 of 10 words).
    assert!(close(&j["letter"], 0.6) && close(&j["word"], 0.3), "{j}");
    assert!(close(&j["oracle_letter"], 0.6) && close(&j["oracle_word"], 0.3), "{j}");
    let session = std::fs::read_to_string(dir.path().join("crosswords-dfs-00.jsonl")).unwrap();
    assert!(session.contains("\"prune\":\"none\""), "the session records the search's options");
}

#[test]
fn verify_fails_on_tampered_logs_naming_where() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            edited("tot-other-game24-naive.json", dir.path(), "g24.json", |l| l[1]["accs"][0] = Value::Bool(true)),
            "input 901 (1 2 4 7): sample 1: we find",
        ),
        (
            edited("tot-other-crosswords-naive.json", dir.path(), "cw.json", |l| {
                l[0]["infos"][1]["r_letter"] = Value::from(0.5)
            }),
            "input 0",
        ),
        (
            edited("tot-other-crosswords-dfs.json", dir.path(), "dfs-info.json", |l| {
                l[0][1]["info"]["r_word"] = Value::from(0.9)
            }),
            "puzzle 0: state 1",
        ),
        (
            // A depth-first search visits a state's children before its parent's next sibling.
            // Here: the root's second child (state 5) moved before the first child's second subtree.
            edited("crosswords_dfs_no_prune_tiny.json", dir.path(), "dfs_no_prune_order.json", |l| {
                let states = l[0].as_array_mut().unwrap();
                let moved = states.remove(5);
                states.insert(3, moved);
            }),
            "puzzle 0: visit 4: we visit \"h2. motor, h1. tasks\", the log \"h1. agend\"",
        ),
    ];
    verify_fails_saying(cases);
}

#[test]
fn malformed_logs_get_one_plain_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            edited("tot-other-crosswords-dfs.json", dir.path(), "a.json", |l| l[0][1]["actions"] = Value::from("x")),
            "puzzle 0, state 1: no list `actions`",
        ),
        (
            edited("tot-other-crosswords-dfs.json", dir.path(), "b.json", |l| {
                l[0][1]["count"]["sure"] = Value::from(40)
            }),
            "count has 45 verdicts",
        ),
        (
            edited("tot-other-game24-naive.json", dir.path(), "c.json", |l| l[0]["ys"][0] = Value::from(3)),
            "entry 0 (idx 900): `ys[0]` is not text",
        ),
        (
            edited("tot-other-game24-naive.json", dir.path(), "d.json", |l| l[0]["idx"] = Value::from(99999)),
            "there is no Game of 24 input 99999",
        ),
    ];
    for (path, said) in cases {
        let out = run(&["import", "tot-log", path.to_str().unwrap(), "--verify"]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{} was accepted", path.display());
        assert!(err.contains(said), "{}: {err}", path.display());
        assert!(!err.contains("panicked"), "{err}");
    }
}

// ---- the shared reference logs ----

fn shared(name: &str) -> Option<PathBuf> {
    let path = Path::new("/work/shared/data/tot").join(name);
    if path.exists() {
        Some(path)
    } else {
        println!("skipped: {} is absent (the shared reference logs are not on this machine)", path.display());
        None
    }
}

#[test]
fn shared_game24_naive_log_gives_734_of_10000_and_33_of_100() {
    let Some(file) = shared("game24_gpt-4_0.7_naive_standard_sample_100_start900_end1000.json") else { return };
    let j = import_json(&file, None);
    assert_eq!((j["samples_correct"].as_u64(), j["samples"].as_u64()), (Some(734), Some(10_000)));
    assert_eq!((j["puzzles_any"].as_u64(), j["puzzles_first"].as_u64()), (Some(33), Some(8)));
    assert_eq!(j["puzzles_agreeing"].as_u64(), Some(100));
}

#[test]
fn shared_crosswords_naive_log_gives_letter_38_72_and_word_14() {
    let Some(file) = shared("crosswords_gpt-4_0.7_naive_standard_sample_10_start0_end20.json") else { return };
    let j = import_json(&file, None);
    assert!((j["letter"].as_f64().unwrap() - 0.3872).abs() < 5e-5, "{j}");
    assert!((j["word"].as_f64().unwrap() - 0.14).abs() < 5e-5, "{j}");
    assert_eq!((j["games"].as_u64(), j["samples"].as_u64()), (Some(0), Some(200)));
}

#[test]
fn shared_crossword_dfs_log_gives_65_4_41_5_and_oracle_71_6_51_5() {
    let Some(file) = shared("crosswords_dfs_no_prune.json") else { return };
    let j = import_json(&file, None);
    assert_eq!(j["prune"], false);
    assert_eq!((j["puzzles_agreeing"].as_u64(), j["states"].as_u64()), (Some(20), Some(2000)));
    let pct = |k: &str| (j[k].as_f64().unwrap() * 1000.0).round() / 10.0;
    assert_eq!((pct("letter"), pct("word"), j["games"].as_u64()), (65.4, 41.5, Some(1)));
    assert_eq!((pct("oracle_letter"), pct("oracle_word"), j["oracle_games"].as_u64()), (71.6, 51.5, Some(4)));
}

#[test]
fn shared_writing_naive_log_gives_coherency_6_19() {
    let Some(file) = shared("text_gpt-4_1.0_naive_standard_sample_10_start0_end100.json") else { return };
    let j = import_json(&file, None);
    assert_eq!((j["judged"].as_u64(), j["samples"].as_u64()), (Some(1000), Some(1000)));
    assert!((j["coherency"].as_f64().unwrap() - 6.1926).abs() < 1e-9, "{j}");
    assert_eq!(j["puzzles_agreeing"].as_u64(), Some(100));
    // Two runs' counters put together: 286,213 + 93,489 prompt tokens.
    assert_eq!((j["prompt_tokens"].as_u64(), j["completion_tokens"].as_u64()), (Some(379_702), Some(883_144)));
}

// ---- creative writing: naive sampling and the ToT search, with the coherency judge ----

#[test]
fn writing_naive_log_judges_every_sample_and_replays_at_the_logs_cost() {
    let dir = tempfile::tempdir().unwrap();
    let file = edited(
        "tot-other-text-naive.json",
        dir.path(),
        "text_gpt-4_1.0_naive_standard_sample_2_start0_end1.json",
        |_| {},
    );
    let out = dir.path().join("sessions");
    let j = import_json(&file, Some(&out));
    assert_eq!(
        (j["task"].as_str(), j["method"].as_str(), j["model"].as_str()),
        (Some("writing"), Some("io"), Some("gpt-4"))
    );
    assert_eq!(j["temperature"], 1.0);
    // infos: rs 2,3,2,2,2 (r 2.2) and 4,3,2,3,3 (r 3.0).
    assert!(close(&j["coherency"], 2.6), "{j}");
    assert_eq!((j["judged"].as_u64(), j["puzzles_agreeing"].as_u64()), (Some(2), Some(1)));
    let replay = last_json(&run(&["replay", "--headless", "--json", out.to_str().unwrap()]));
    assert!(close(&replay["metrics"]["coherency"], 2.6), "{replay}");
    // One sampling call and a judgment of each sample, with the log's tokens and cost.
    assert_eq!(replay["llm_calls"], 3);
    assert_eq!((replay["prompt_tokens"].as_u64(), replay["completion_tokens"].as_u64()), (Some(3774), Some(7743)));
    assert!(close(&replay["cost_usd"], 0.5778), "{replay}");
    let session = std::fs::read_to_string(out.join("writing-io-0000.jsonl")).unwrap();
    assert!(session.contains("Thus the coherency score is 4"), "the judge's replies are the log's scores");
}

/// A log under the reference repository's own name (`{backend}_{temperature}_...`, no task
/// word in front) is read at the temperature the name states, so re-driving it at that
/// temperature finds every call recorded.
#[test]
fn a_log_under_the_references_own_name_is_read_at_its_temperature() {
    let dir = tempfile::tempdir().unwrap();
    let name = "gpt-4_1.0_naive_standard_sample_2_start0_end1.json";
    let file = edited("tot-other-text-naive.json", dir.path(), name, |_| {});
    let out = dir.path().join("sessions");
    let j = import_json(&file, Some(&out));
    assert_eq!((j["task"].as_str(), j["model"].as_str()), (Some("writing"), Some("gpt-4")), "{j}");
    assert_eq!(j["temperature"], 1.0, "{j}");
    let session = std::fs::read_to_string(out.join("writing-io-0000.jsonl")).unwrap();
    let header: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
    assert_eq!(header["params"]["temperature"], 1.0, "{header}");
    let input = header["input"].as_str().unwrap();
    let mut args = vec!["run", "--task", "writing", "--method", "io", "--samples", "2", "--temperature", "1.0"];
    args.extend(["--input", input, "--provider", "replay", "--replay-from", out.to_str().unwrap(), "--json"]);
    let r = last_json(&run(&args));
    // The sampling call and a judgment of each sample, all recorded.
    assert_eq!((r["failed_calls"].as_u64(), r["llm_calls"].as_u64()), (None, Some(3)), "{r}");
    // Without --temperature the re-drive samples at the recorded 1.0 (not the task's 0.7).
    let without: Vec<&str> = args.iter().copied().filter(|a| *a != "--temperature" && *a != "1.0").collect();
    let r = last_json(&run(&without));
    assert_eq!((r["failed_calls"].as_u64(), r["llm_calls"].as_u64()), (None, Some(3)), "{r}");
    assert_eq!(r["params"]["temperature"], 1.0, "{r}");
    // A temperature named is the one asked for, and the recording says it differs.
    let mut other = without.clone();
    other.extend(["--temperature", "0.7"]);
    let out = run(&other);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("temperature: recorded 1.0, now 0.7"));
}

#[test]
fn writing_bfs_log_reruns_its_votes_and_judgment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sessions");
    let j = import_json(&fixture("tot-other-text-bfs.json"), Some(&out));
    assert_eq!(j["format"], "writing_bfs");
    assert_eq!((j["steps_agreeing"].as_u64(), j["steps"].as_u64()), (Some(2), Some(2)));
    assert_eq!((j["finals_agreeing"].as_u64(), j["inputs_agreeing"].as_u64()), (Some(1), Some(1)));
    // Read off the log: 2 samples per state, up to 5 votes counted, 1 state kept.
    assert_eq!(
        (j["n_generate"].as_u64(), j["n_evaluate"].as_u64(), j["breadth"].as_u64()),
        (Some(2), Some(5), Some(1))
    );
    assert!(close(&j["coherency"], 6.4), "{j}");
    let replay = last_json(&run(&["replay", "--headless", "--json", out.to_str().unwrap()]));
    assert_eq!(replay["method"], "tot-bfs");
    assert!(close(&replay["metrics"]["coherency"], 6.4), "{replay}");
    // Two samplings, two votes, one judgment; the log's tokens and cost.
    assert_eq!(replay["llm_calls"], 5);
    assert_eq!((replay["prompt_tokens"].as_u64(), replay["completion_tokens"].as_u64()), (Some(3910), Some(2120)));
    assert!(close(&replay["cost_usd"], 0.2445), "{replay}");
}

#[test]
fn writing_logs_of_other_runs_import_too() {
    let dir = tempfile::tempdir().unwrap();
    // Another model, three votes, two states kept, from the file name; infos and usage missing.
    let file =
        edited("tot-other-text-bfs.json", dir.path(), "llama-3_0.7_sample2_vote5_greedy2_start0_end1.json", |l| {
            let e = &mut l[0];
            e.as_object_mut().unwrap().remove("infos");
            e.as_object_mut().unwrap().remove("usage_so_far");
            let plans = e["steps"][0]["new_ys"].clone();
            e["steps"][0]["values"] = serde_json::json!([2, 1]);
            e["steps"][0]["select_new_ys"] = plans.clone();
            e["steps"][1]["ys"] = plans.clone();
            // Each kept plan gets two passages; the log's second-plan passage wins.
            let p = |k: usize, t: &str| format!("{}\nPassage:\n{t}", plans[k].as_str().unwrap());
            e["steps"][1]["new_ys"] = serde_json::json!([p(0, "A."), p(0, "B."), p(1, "C."), p(1, "D.")]);
            e["steps"][1]["values"] = serde_json::json!([1, 0, 3, 1]);
            e["steps"][1]["select_new_ys"] = serde_json::json!([p(1, "C."), p(0, "A.")]);
            e["ys"] = e["steps"][1]["select_new_ys"].clone();
        });
    let out = dir.path().join("s");
    let j = import_json(&file, Some(&out));
    assert_eq!(
        (j["model"].as_str(), j["breadth"].as_u64(), j["n_evaluate"].as_u64()),
        (Some("llama-3"), Some(2), Some(5))
    );
    assert_eq!(j["inputs_agreeing"].as_u64(), Some(1), "{j}");
    // No judge scores at all (run.py's older text runs): the log never asked the judge,
    // so neither does the session, and it replays with no failed call: three samplings
    // (the plans, then the passages of each kept plan) and two votes.
    assert_eq!(j["judged"].as_u64(), Some(0), "{j}");
    let replay = last_json(&run(&["replay", "--headless", "--json", out.to_str().unwrap()]));
    assert_eq!((replay["failed_calls"].as_u64(), replay["llm_calls"].as_u64()), (None, Some(5)), "{replay}");
    let session = std::fs::read_to_string(out.join("writing-tot-bfs-0000.jsonl")).unwrap();
    let header: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
    assert_eq!(header["unjudged"], true, "{header}");
    assert!(!session.contains("\"judge\""), "no judge request recorded");
    // Re-driven through the live search from the recording, it makes no judge call either
    // (said on stderr): the same five calls, none failed, with the log's tokens.
    let input = header["input"].as_str().unwrap();
    let mut args = vec!["run", "--task", "writing", "--method", "tot-bfs", "--generator", "sample", "--n-generate"];
    args.extend(["2", "--evaluator", "vote", "--n-evaluate", "5", "--breadth", "2", "--steps", "2", "--temperature"]);
    args.extend(["0.7", "--input", input, "--provider", "replay", "--replay-from", out.to_str().unwrap(), "--json"]);
    let redriven = run(&args);
    assert!(stderr(&redriven).contains("note: no judge calls"), "{}", stderr(&redriven));
    let redriven = last_json(&redriven);
    assert_eq!((redriven["failed_calls"].as_u64(), redriven["llm_calls"].as_u64()), (None, Some(5)), "{redriven}");
    // A naive writing log with a sample's scores missing: that sample stays unjudged.
    let naive = edited("tot-other-text-naive.json", dir.path(), "naive.json", |l| {
        l[0]["infos"][1].as_object_mut().unwrap().remove("rs");
        l[0]["infos"][1].as_object_mut().unwrap().remove("r");
    });
    let j = import_json(&naive, None);
    assert_eq!(j["judged"].as_u64(), Some(1));
    assert!(close(&j["coherency"], 2.2), "{j}");
}

#[test]
fn verify_fails_on_tampered_writing_logs() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            edited("tot-other-text-naive.json", dir.path(), "n.json", |l| l[0]["infos"][1]["r"] = Value::from(3.5)),
            "sample 2: our coherency is 3 from its scores, the log's infos r says 3.5",
        ),
        (
            edited("tot-other-text-bfs.json", dir.path(), "b.json", |l| l[0]["infos"][0]["r"] = Value::from(9)),
            "input 0: our coherency of the output is 6.4, the log's infos[0].r says 9",
        ),
        (
            // The log keeps the plan with fewer votes: not what a greedy vote keeps.
            edited("tot-other-text-bfs.json", dir.path(), "v.json", |l| {
                l[0]["steps"][0]["values"] = serde_json::json!([1, 4]);
            }),
            "input 0: step 0: we keep other states than the log's select_new_ys",
        ),
    ];
    verify_fails_saying(cases);
}

/// A gpt-4 log's sessions are priced as the reference priced them: the replayed cost is
/// the log's own `usage_so_far.cost`.
#[test]
fn imported_sessions_cost_what_the_log_says_it_cost() {
    let dir = tempfile::tempdir().unwrap();
    let file = edited(
        "game24_tiny_0.7_naive_cot_sample_3_start900_end902.json",
        dir.path(),
        "game24_gpt-4_0.7_naive_cot_sample_3_start900_end902.json",
        |_| {},
    );
    let out = dir.path().join("sessions");
    let j = import_json(&file, Some(&out));
    assert_eq!(j["model"], "gpt-4");
    let replay = last_json(&run(&["replay", "--headless", "--json", out.to_str().unwrap()]));
    // The fixture's last usage_so_far.cost: 0.0912 dollars (30 and 60 per million tokens).
    assert!(close(&replay["cost_usd"], 0.0912), "{replay}");
    // A model the price table does not know stays unpriced rather than guessed.
    let tiny = dir.path().join("tiny");
    import_json(&fixture("game24_tiny_0.7_naive_cot_sample_3_start900_end902.json"), Some(&tiny));
    let replay = last_json(&run(&["replay", "--headless", "--json", tiny.to_str().unwrap()]));
    assert!(replay.get("cost_usd").is_none_or(Value::is_null), "{replay}");
}

/// A crossword log whose stored score is not the reference scorer's (a reply of six rows:
/// `test_output` reads the last five, the log stores the first five's figures) says so on
/// every import, without `--verify` too: the sample named with both figures, and the
/// totals by the reference's scorer next to the log's.
#[test]
fn a_stored_crossword_score_the_reference_scorer_does_not_give_is_said_without_verify() {
    let dir = tempfile::tempdir().unwrap();
    let file = edited("tot-other-crosswords-naive.json", dir.path(), "six-rows.json", |l| {
        let y = l[0]["ys"][0].as_str().unwrap().to_string();
        l[0]["ys"][0] = Value::from(format!("{y}\nZ Z Z Z Z"));
    });
    let out = run(&["import", "tot-log", file.to_str().unwrap(), "--out", dir.path().join("s").to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("input 0: sample 1: the reference's scorer")
            && err.contains("the log's infos say letter 0.24 word 0.1 game false"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "only that sample: {err}");
    let text = stdout(&out);
    assert!(text.contains("by the reference's scorer; the log's scores: letter 29.00%"), "{text}");
    let json = last_json(&run(&[
        "import",
        "tot-log",
        file.to_str().unwrap(),
        "--json",
        "--out",
        dir.path().join("j").to_str().unwrap(),
    ]));
    assert!(close(&json["log"]["letter"], (0.24 + 0.4 + 0.2 + 0.32) / 4.0), "{json}");
    assert!(!close(&json["letter"], (0.24 + 0.4 + 0.2 + 0.32) / 4.0), "{json}");
}
