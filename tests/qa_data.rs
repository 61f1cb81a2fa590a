//! Headless `hotpotqa` and `fever` runs with `--data`, with the tools chosen on the command
//! line: a fake model server answers ReAct steps, search goes to a fake MediaWiki API
//! (`--wikipedia-url`) or to a corpus folder (`--corpus`) — never the real Wikipedia — and
//! the sessions replay without the data file.

use crate::support;

use std::path::Path;
use std::process::Output;

use support::{FakeServer, Reply, Seen};
use thoughtscope::engine::Input;
use thoughtscope::session::Session;

fn run(dir: &Path, args: &[&str]) -> Output {
    support::isolated(dir, Some("sk-test")).args(args).output().expect("the binary runs")
}

/// The problem (after the last `Question: ` or `Claim: `) and the step the prompt asks for.
fn problem_and_step(seen: &Seen) -> (String, usize) {
    let prompt = seen.prompt();
    let problem = prompt
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("Question: ").or_else(|| l.strip_prefix("Claim: ")))
        .unwrap_or("")
        .to_string();
    (problem, support::react_step(&prompt))
}

/// A model that plays a fixed script per problem: (thought, action) per step.
fn scripted(seen: &Seen) -> Reply {
    let (problem, step) = problem_and_step(seen);
    let script: &[(&str, &str)] = if problem.starts_with("Were Scott Derrickson") {
        &[("I need Scott Derrickson's nationality.", "Search[Scott Derrickson]"), ("Both are American.", "Finish[yes]")]
    } else if problem.starts_with("What government position") {
        &[
            ("I need the film first.", "Search[Kiss and Tell (1945 film)]"),
            ("I will look for Corliss.", "Lookup[Corliss]"),
            ("Hmm.", "I think I know it"),
            ("Shirley Temple was Chief of Protocol.", "Finish[Chief of Protocol of the United States]"),
        ]
    } else if problem.starts_with("Which magazine") {
        &[("I need both.", "Search[Arthur's Magazine]"), ("I guess.", "Finish[First for Women]")]
    } else if problem.starts_with("Paramore") {
        &[("I should search Paramore.", "Search[Paramore]"), ("It is from Tennessee.", "Finish[REFUTES]")]
    } else {
        &[]
    };
    let text = match script.get(step.wrapping_sub(1)) {
        Some((thought, action)) => format!(" {thought}\nAction {step}: {action}"),
        None => format!(" I do not know.\nAction {step}: Finish[unknown]"),
    };
    Reply::chat(&[&text], Some((100, 10)))
}

const EXTRACT: &str = "This page is about a film. Corliss Archer was played by Shirley Temple. \
Temple later served as Chief of Protocol of the United States.";

fn wiki(seen: &Seen) -> Reply {
    if seen.path.contains("action=query") {
        let body =
            serde_json::json!({"query": {"pages": {"1": {"pageid": 1, "ns": 0, "title": "Page", "extract": EXTRACT}}}});
        Reply::json(200, body.to_string())
    } else {
        Reply::json(500, "{}")
    }
}

#[test]
fn hotpotqa_runs_with_data_and_a_local_wikipedia_and_replays_without_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let model = FakeServer::start(|_, seen| scripted(seen));
    let wikipedia = FakeServer::start(|_, seen| wiki(seen));
    let wiki_url = format!("{}/w/api.php", wikipedia.url);
    let data = support::fixture("hotpot-sample.json");
    let record = dir.path().join("sessions");
    let s = support::summary(&run(
        dir.path(),
        &[
            "run",
            "--task",
            "hotpotqa",
            "--data",
            data.to_str().unwrap(),
            "--method",
            "react",
            "--range",
            "0..3",
            "--provider",
            "openai",
            "--base-url",
            &model.url,
            "--model",
            "fake-model",
            "--wikipedia-url",
            &wiki_url,
            // The reference prompt: the unreadable third step is one bad call, as in the
            // ReAct notebook (the chat prompt would ask it once more: see react_chat_tests).
            "--prompt-style",
            "reference",
            "--record",
            record.to_str().unwrap(),
            "--json",
        ],
    ));
    assert_eq!(s["task"], "hotpotqa");
    assert_eq!(s["n"], 3);
    assert_eq!(s["em"], 1, "{s}");
    // F1: 1 (yes), 2/3 (Chief of Protocol of the United States), 0 (First for Women).
    assert!((s["f1"].as_f64().unwrap() - (1.0 + 2.0 / 3.0) / 3.0).abs() < 1e-9, "{s}");
    assert!((s["mean_steps"].as_f64().unwrap() - 8.0 / 3.0).abs() < 1e-9, "{s}");
    assert_eq!(s["bad_calls"], 1, "{s}");
    assert_eq!(s["llm_calls"], 8, "{s}");
    assert_eq!(s["tool_calls"], 7, "{s}");
    assert_eq!(s["tokens"], 880, "{s}");
    assert_eq!(wikipedia.requests(), 3, "three searches, one request each (lookups read the page)");

    // The lookup read the fake page; the session keeps the gold answer.
    let session = Session::load(&record.join("hotpotqa-0001-react.jsonl")).unwrap();
    assert_eq!(session.header.gold.as_deref(), Some("Chief of Protocol"));
    let observations: Vec<String> = session
        .inputs()
        .filter_map(|(i, _)| match i {
            Input::ToolReply(r) => Some(r.result.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(observations[1], "(Result 1 / 1) Corliss Archer was played by Shirley Temple.");

    // Replay needs neither the data file nor the servers.
    drop(model);
    drop(wikipedia);
    let r = support::summary(&run(dir.path(), &["replay", record.to_str().unwrap(), "--headless", "--json"]));
    for key in ["n", "em", "f1", "mean_steps", "bad_calls", "llm_calls", "tool_calls", "tokens"] {
        assert_eq!(r[key], s[key], "{key}: run {s}, replay {r}");
    }
}

#[test]
fn fever_runs_over_a_corpus_folder() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(
        corpus.join("paramore.md"),
        "# Paramore\nParamore is an American rock band from Franklin, Tennessee. It formed in 2004.\n",
    )
    .unwrap();
    let data = dir.path().join("claims.jsonl");
    std::fs::write(
        &data,
        "{\"claim\": \"Paramore is not from Tennessee.\", \"label\": \"REFUTES\"}\n\
         {\"claim\": \"Paramore formed in 2004.\", \"label\": \"SUPPORTS\"}\n",
    )
    .unwrap();
    let model = FakeServer::start(|_, seen| scripted(seen));
    let record = dir.path().join("sessions");
    let args = [
        "run",
        "--task",
        "fever",
        "--data",
        data.to_str().unwrap(),
        "--method",
        "react",
        "--range",
        "0..2",
        "--provider",
        "openai",
        "--base-url",
        &model.url,
        "--model",
        "fake-model",
        "--corpus",
        corpus.to_str().unwrap(),
        "--record",
        record.to_str().unwrap(),
        "--json",
    ];
    let s = support::summary(&run(dir.path(), &args));
    assert_eq!((s["task"].as_str(), s["n"].as_u64(), s["em"].as_u64()), (Some("fever"), Some(2), Some(1)), "{s}");
    let session = Session::load(&record.join("fever-0000-react.jsonl")).unwrap();
    let first_observation = session.inputs().find_map(|(i, _)| match i {
        Input::ToolReply(r) => Some(r.result.text.clone()),
        _ => None,
    });
    assert_eq!(
        first_observation.as_deref(),
        Some("Paramore is an American rock band from Franklin, Tennessee. It formed in 2004.")
    );

    // Bad tool flags are refused with a clear message.
    let out = run(dir.path(), &["run", "--task", "fever", "--data", data.to_str().unwrap(), "--tools", "corpus"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--corpus DIR"));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = run(
        dir.path(),
        &["run", "--task", "fever", "--data", data.to_str().unwrap(), "--corpus", empty.to_str().unwrap()],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no documents"), "{}", String::from_utf8_lossy(&out.stderr));
    // The sim does not play these tasks.
    let out = run(
        dir.path(),
        &["run", "--task", "fever", "--data", data.to_str().unwrap(), "--method", "react", "--range", "0"],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("sim cannot play fever: it has no simulated player"));
}
