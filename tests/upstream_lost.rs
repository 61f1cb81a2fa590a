//! A server that dies during a headless run (it answers the first call, then closes
//! every connection without a reply, as a killed server or a proxy in front of one
//! does): after the retries the run stops as it does for a server never reached —
//! STOPPED, "the server is unreachable", recorded in the session — instead of failing
//! the search node by node and calling it unsolved.

use crate::support;

use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use support::{FakeServer, Reply};
use thoughtscope::session::Session;

fn run(dir: &std::path::Path, args: &[&str]) -> Output {
    support::isolated(dir, Some("sk-test")).args(args).output().expect("the binary runs")
}

#[test]
fn a_server_that_closes_its_connections_mid_run_stops_the_run_as_unreachable() {
    let answered = AtomicUsize::new(0);
    let server = FakeServer::start(move |_, seen| {
        if answered.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::chat(&[&support::game24_text(&seen.prompt(), "sure")], Some((100, 10)))
        } else {
            Reply::Raw(vec![])
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.jsonl");
    let out = run(
        dir.path(),
        &[
            "run",
            "--task",
            "game24",
            "--method",
            "tot-bfs",
            "--model",
            "fake-model",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            &server.url,
            "--retries",
            "1",
            "--timeout",
            "10",
            "--range",
            "900..901",
            "--record",
            rec.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a run stopped by a dead server is an error: {stderr}");
    assert!(stderr.contains("the server is unreachable") && stderr.contains("the connection failed"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no summary ({e}): {stdout}\n{stderr}"));
    assert!(summary["stopped"].as_str().unwrap_or_default().starts_with("the server is unreachable"), "{summary}");
    assert_eq!(summary["solved"], 0, "{summary}");
    let session = Session::load(&rec).unwrap();
    assert!(session.stopped().is_some_and(|s| s.starts_with("the server is unreachable")), "{:?}", session.stopped());
    assert!(session.end().is_some(), "the session is closed");
    // The root proposal, then a value call and its one retry; the search went no further.
    assert!(server.requests() >= 3, "{} requests", server.requests());
}
