//! Every run says what the model got wrong (issue 47, item 4): proposal lines the task
//! could not use, value samples with no class word, answers graded from a fallback line,
//! ReAct steps without an action. The counts are in `run --json`, the `--out` lines and
//! the human summary, with one plain line when half the replies of a kind or more went
//! wrong; `replay --headless` of the session derives the same figures.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::{FakeServer, Reply, Seen};

/// The system message of a request (what kind of call it is, in the chat style).
fn system(seen: &Seen) -> String {
    seen.body["messages"][0]["content"].as_str().unwrap_or("").to_string()
}

fn run(dir: &Path, server: &FakeServer, args: &[&str]) -> Output {
    run_on(dir, server, "4 5 6 10", args)
}

fn run_on(dir: &Path, server: &FakeServer, input: &str, args: &[&str]) -> Output {
    support::isolated(dir, Some("sk-test"))
        .args(["run", "--task", "game24", "--input", input, "--concurrency", "1"])
        .args(["--provider", "openai", "--model", "fake-model", "--base-url", server.url.as_str()])
        .args(["--retries", "0", "--timeout", "10"])
        .args(args)
        .output()
        .expect("the binary runs")
}

fn replay(dir: &Path, session: &Path, json: bool) -> Output {
    let mut cmd = support::isolated(dir, None);
    cmd.args(["replay", session.to_str().unwrap(), "--headless"]);
    if json {
        cmd.arg("--json");
    }
    cmd.output().expect("the binary runs")
}

fn stdout(out: &Output) -> String {
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// Proposal lines naming numbers the puzzle does not have: every line is rejected, the
/// search stops at its first step, and the run says why.
fn unreadable_proposals(_: usize, seen: &Seen) -> Reply {
    if seen.prompt().to_lowercase().contains("possible next steps") {
        return Reply::chat(&["3 * 8 = 24 (left: 4 5 24)\n7 - 3 = 4 (left: 4 4 5 6)"], Some((100, 10)));
    }
    Reply::chat(&["sure"], Some((100, 1)))
}

#[test]
fn unreadable_proposals_are_counted_said_and_replayed_the_same() {
    let server = FakeServer::start(unreadable_proposals);
    let dir = tempfile::tempdir().unwrap();
    let (rec, out_file) = (dir.path().join("s.jsonl"), dir.path().join("out.jsonl"));
    let out = run(
        dir.path(),
        &server,
        &["--method", "tot-bfs", "--json", "--record", rec.to_str().unwrap(), "--out", out_file.to_str().unwrap()],
    );
    let s = support::summary(&out);
    let proposals = &s["reply_health"]["proposals"];
    assert_eq!((proposals["n"].as_u64(), proposals["bad"].as_u64()), (Some(2), Some(2)), "{s}");
    assert_eq!(proposals["example"]["reply"], "3 * 8 = 24 (left: 4 5 24)", "{s}");
    assert_eq!(proposals["example"]["read"], "3 is not among the numbers 4 5 6 10", "{s}");
    // The problem's line in --out has the same figures.
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(&out_file).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(line["reply_health"], s["reply_health"]);

    // The human summary: the counts and the plain line with the first offending reply.
    let human = stdout(&replay(dir.path(), &rec, false));
    let said = "2 of 2 proposal lines unreadable or invalid, e.g. \"3 * 8 = 24 (left: 4 5 24)\": 3 is not among \
                the numbers 4 5 6 10";
    assert!(human.contains(said), "{human}");
    assert!(human.contains("the model got wrong: proposal lines unreadable or invalid 2/2"), "{human}");
    // The replay derives the same figures as the live run.
    let replayed = support::last_json(&replay(dir.path(), &rec, true));
    assert_eq!(replayed["reply_health"], s["reply_health"]);

    // The live run's human summary says the same.
    let live = stdout(&run(dir.path(), &server, &["--method", "tot-bfs"]));
    assert!(live.contains(said), "{live}");
}

/// Readable steps (the first two numbers left added: 2 2 10 10 reaches 24), "sure"
/// values and an answer line at the end: nothing is said.
fn good_model(_: usize, seen: &Seen) -> Reply {
    let prompt = seen.prompt();
    let text = if prompt.to_lowercase().contains("possible next steps") {
        let last = prompt.rsplit("Input: ").next().unwrap_or("");
        let numbers: Vec<i64> =
            last.lines().next().unwrap_or("").split_whitespace().filter_map(|n| n.parse().ok()).collect();
        let (a, b) = (numbers[0], numbers[1]);
        let mut left = numbers[2..].to_vec();
        left.push(a + b);
        left.sort();
        let left: Vec<String> = left.iter().map(|n| n.to_string()).collect();
        format!("{a} + {b} = {} (left: {})", a + b, left.join(" "))
    } else if system(seen).starts_with("You judge") {
        "sure".to_string()
    } else {
        // The last step (every number combined): the answer line.
        "Answer: (2 + 2 + 10) + 10 = 24".to_string()
    };
    Reply::chat(&[&text], Some((100, 10)))
}

#[test]
fn a_run_whose_replies_all_read_says_nothing_of_them() {
    let server = FakeServer::start(good_model);
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("good.jsonl");
    let args = ["--method", "tot-bfs", "--json", "--record", rec.to_str().unwrap()];
    let s = support::summary(&run_on(dir.path(), &server, "2 2 10 10", &args));
    assert_eq!(s["solved"], 1, "{s}");
    let health = &s["reply_health"];
    for kind in ["proposals", "value_samples", "answers"] {
        assert!(health[kind]["n"].as_u64().unwrap_or(0) > 0, "{kind} counted: {s}");
        assert_eq!(health[kind]["bad"], 0, "{kind}: {s}");
    }
    let human = stdout(&replay(dir.path(), &rec, false));
    assert!(!human.contains("the model got wrong") && !human.contains("proposal lines"), "{human}");
}

/// io replies with no `Answer:` line: each is graded from its last line, and the run
/// says so with the line that was graded.
#[test]
fn answers_graded_from_a_fallback_line_are_said() {
    let server = FakeServer::start(|_, _| Reply::chat(&["Let me think.\n4 * 6 = 24"], Some((50, 10))));
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("io.jsonl");
    let s =
        support::summary(&run(dir.path(), &server, &["--method", "io", "--json", "--record", rec.to_str().unwrap()]));
    let answers = &s["reply_health"]["answers"];
    let n = answers["n"].as_u64().unwrap();
    assert!(n >= 1, "{s}");
    assert_eq!(answers["bad"].as_u64(), Some(n), "{s}");
    let human = stdout(&replay(dir.path(), &rec, false));
    let said = format!(
        "{n} of {n} answers with no answer line (empty, or graded from a fallback line), e.g. \"4 * 6 = 24\": graded as \"4 * 6 = 24\""
    );
    assert!(human.contains(&said), "{human}");
    assert_eq!(support::last_json(&replay(dir.path(), &rec, true))["reply_health"], s["reply_health"]);
}
