//! Problems side by side: a run's results, `--out` lines (sorted by index: they are
//! written as problems end), JSON summary and session files are the same (apart from
//! wall-clock times) whatever `--concurrency` lets go
//! at once, for several tasks and methods on the simulated model; and a refused key
//! still costs one call when problems go side by side.

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::{FakeServer, Reply};

fn run(dir: &Path, args: &[&str]) -> Output {
    support::isolated(dir, None).args(args).output().expect("the binary runs")
}

/// A JSON line with its wall-clock times taken out (the only thing timing may change):
/// `wall_ms`, and the end line's run clock (when the run began, and how far into it).
fn timeless(line: &str) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("wall_ms");
                if map.get("kind").and_then(Value::as_str) == Some("end") {
                    map.remove("run").expect("an end line of a headless run has the run clock");
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    strip(&mut v);
    v
}

/// Everything a run wrote: stdout's summary, the `--out` lines and each session file,
/// by name, with times taken out.
fn outputs(
    dir: &Path,
    task: &str,
    method: &str,
    range: &str,
    extra: &[&str],
    concurrency: &str,
) -> Vec<(String, Vec<Value>)> {
    let rec = dir.join(format!("sessions-c{concurrency}"));
    let out_file = dir.join(format!("out-c{concurrency}.jsonl"));
    let mut args = vec!["run", "--task", task, "--method", method, "--range", range, "--json"];
    args.extend(["--concurrency", concurrency, "--sim-latency-ms", "3"]);
    args.extend(["--record", rec.to_str().unwrap(), "--out", out_file.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let out = run(dir, &args);
    assert!(out.status.success(), "{task} {method} c={concurrency}: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut all = vec![("summary".to_string(), vec![timeless(stdout.lines().last().unwrap())])];
    let lines = |p: &Path| std::fs::read_to_string(p).unwrap().lines().map(timeless).collect::<Vec<_>>();
    let mut outs = lines(&out_file);
    for o in &mut outs {
        // The session path names the directory of this run.
        if let Some(s) = o.get_mut("session") {
            *s = Value::String(Path::new(s.as_str().unwrap()).file_name().unwrap().to_string_lossy().into());
        }
    }
    // Lines are written as problems end, each with its index: in problem order once sorted.
    let indices: Vec<u64> = outs.iter().map(|r| r["index"].as_u64().expect("each line has its index")).collect();
    let mut distinct = indices.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), indices.len(), "one line per problem: {indices:?}");
    outs.sort_by_key(|r| r["index"].as_u64());
    all.push(("out".into(), outs));
    let mut names: Vec<_> = std::fs::read_dir(&rec).unwrap().map(|e| e.unwrap().path()).collect();
    names.sort();
    for p in names {
        all.push((p.file_name().unwrap().to_string_lossy().into(), lines(&p)));
    }
    all
}

fn same_whatever_the_concurrency(task: &str, method: &str, range: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let one = outputs(dir.path(), task, method, range, extra, "1");
    let many = outputs(dir.path(), task, method, range, extra, "8");
    assert!(
        one.len() > 3,
        "{task} {method}: sessions were recorded: {:?}",
        one.iter().map(|o| &o.0).collect::<Vec<_>>()
    );
    assert_eq!(one.len(), many.len(), "{task} {method}: the same files");
    for ((name, a), (_, b)) in one.iter().zip(&many) {
        assert_eq!(a.len(), b.len(), "{task} {method} {name}: the same number of lines");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert_eq!(x, y, "{task} {method} {name} line {i} differs between --concurrency 1 and 8");
        }
    }
}

#[test]
fn game24_tot_bfs_side_by_side_matches_one_at_a_time() {
    same_whatever_the_concurrency("game24", "tot-bfs", "900..906", &[]);
}

#[test]
fn game24_cot_sc_and_tot_dfs_side_by_side_match_one_at_a_time() {
    same_whatever_the_concurrency("game24", "cot-sc", "900..905", &[]);
    same_whatever_the_concurrency("game24", "tot-dfs", "900..904", &[]);
}

#[test]
fn crosswords_tot_dfs_side_by_side_matches_one_at_a_time() {
    same_whatever_the_concurrency("crosswords", "tot-dfs", "0..3", &[]);
}

/// tot-bfs on game24 against `server` over `range`, `concurrency` at once.
fn openai_tot_bfs<'a>(server: &'a FakeServer, range: &'a str, concurrency: &'a str) -> Vec<&'a str> {
    let mut args = vec!["run", "--task", "game24", "--method", "tot-bfs", "--range", range, "--json"];
    args.extend(["--provider", "openai", "--model", "fake-model", "--base-url", &server.url]);
    args.extend(["--concurrency", concurrency]);
    args
}

#[test]
fn a_refused_key_costs_one_call_when_problems_go_side_by_side() {
    let server = FakeServer::start(|_, _| Reply::json(401, r#"{"error":{"message":"Incorrect API key provided"}}"#));
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &openai_tot_bfs(&server, "900..910", "8"));
    assert!(!out.status.success());
    assert_eq!(server.requests(), 1, "the first problem went alone until its call came back");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(s["n"], 1, "no problem started after the stop: {s}");
}

#[test]
fn problems_go_side_by_side_under_one_limit() {
    // Every call takes a while; one after another, the sixth problem's first proposal
    // would come after all the calls of the five before it. Side by side, the five later
    // problems start as soon as the first problem's first call has come back well.
    let server = FakeServer::start(|_, seen| {
        std::thread::sleep(std::time::Duration::from_millis(30));
        Reply::chat(&[&support::game24_text(&seen.prompt(), "likely")], Some((10, 5)))
    });
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &openai_tot_bfs(&server, "900..906", "64"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(s["n"], 6);
    let seen = server.seen();
    // A problem's first proposal names its four numbers after "Input:".
    let root_proposals: Vec<usize> = seen
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            let p = r.prompt();
            p.to_lowercase().contains("possible next steps")
                && p.rsplit("Input: ").next().unwrap_or("").lines().next().unwrap_or("").split_whitespace().count() == 4
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(root_proposals.len(), 6, "one first proposal per problem");
    let last = *root_proposals.last().unwrap();
    assert!(
        last * 2 < seen.len(),
        "the last problem's first call was request {last} of {}: problems went one after another",
        seen.len()
    );
}

#[test]
fn samples_a_server_will_not_return_at_once_go_side_by_side_and_are_recorded_in_order() {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    // Ignores n; answers value prompts after a while, later samples sooner, naming the
    // seed each was asked with (the seed of sample i is the call's seed + i).
    let in_flight: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (flight, peak) = (Arc::clone(&in_flight), Arc::clone(&most));
    let server = FakeServer::start(move |_, seen| {
        let prompt = seen.prompt();
        if prompt.to_lowercase().contains("possible next steps") {
            // One step only, so one value call at a time has the server to itself.
            let text = support::game24_text(&prompt, "likely").lines().next().unwrap_or("").to_string();
            return Reply::chat(&[&text], Some((10, 5)));
        }
        let now = {
            let mut f = flight.lock().unwrap();
            let n = f.entry(prompt.clone()).or_insert(0);
            *n += 1;
            *n
        };
        peak.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
        let seed = seen.body["seed"].as_u64().unwrap_or(0);
        std::thread::sleep(std::time::Duration::from_millis(120 - (seed % 3) * 40));
        *flight.lock().unwrap().get_mut(&prompt).unwrap() -= 1;
        Reply::chat(&[&format!("seed {seed}\nlikely")], Some((10, 5)))
    });
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("s.jsonl");
    let out = run(
        dir.path(),
        &[
            "run",
            "--task",
            "game24",
            "--method",
            "tot-bfs",
            "--input",
            "4 5 6 10",
            "--json",
            "--provider",
            "openai",
            "--model",
            "fake-model",
            "--base-url",
            &server.url,
            "--concurrency",
            "8",
            "--record",
            rec.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        most.load(std::sync::atomic::Ordering::SeqCst) >= 2,
        "the samples of one value call were never in flight together"
    );
    let session = thoughtscope::session::Session::load(&rec).unwrap();
    let mut checked = 0;
    for (input, request) in session.inputs() {
        let (thoughtscope::engine::Input::LlmReply(reply), Some(request)) = (input, request) else { continue };
        if request.n < 2 {
            continue;
        }
        let reply = reply.result.as_ref().expect("the value calls succeed");
        let seeds: Vec<u64> = reply
            .completions
            .iter()
            .map(|c| c.text.lines().next().unwrap().trim_start_matches("seed ").parse().unwrap())
            .collect();
        assert_eq!(seeds.len(), request.n as usize, "every sample is there");
        assert!(seeds.windows(2).all(|w| w[1] == w[0] + 1), "samples in order: {seeds:?}");
        checked += 1;
    }
    assert!(checked > 0, "the run made value calls with n > 1");
}

#[tokio::test]
async fn anthropic_samples_go_side_by_side_each_under_a_slot_of_the_limit() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use thoughtscope::llm::config::{resolve, FileConfig, ProviderOptions};
    use thoughtscope::llm::fanout::Slots;
    use thoughtscope::llm::{CallOptions, Provider};
    use thoughtscope::protocol::{LlmRequest, Message, Purpose};
    let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n2, m2) = (Arc::clone(&now), Arc::clone(&most));
    let server = FakeServer::start(move |i, _| {
        m2.fetch_max(n2.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(100));
        n2.fetch_sub(1, Ordering::SeqCst);
        let body = serde_json::json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": format!("reply {i}")}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 15, "output_tokens": 3}
        });
        Reply::json(200, body.to_string())
    });
    let args = ProviderOptions {
        model: Some("claude-test".into()),
        base_url: Some(server.url.clone()),
        timeout: Some(10.0),
        retries: Some(0),
        ..Default::default()
    };
    let env = |k: &str| (k == "ANTHROPIC_API_KEY").then(|| "sk-ant-test".to_string());
    let resolved = resolve("anthropic", &args, &FileConfig::default(), &env, 1).unwrap();
    let provider = thoughtscope::llm::api::HttpProvider::new(&resolved).unwrap();
    let messages = vec![Message::user("Evaluate if given numbers can reach 24: 4 4 10")];
    let request = LlmRequest { n: 4, max_tokens: Some(50), ..LlmRequest::simple(Purpose::Value, messages) };
    // The call holds one slot of four; the other three are free. The fake server answers
    // two requests at a time (its two threads), so two or more samples at once is side by side.
    let limit = Arc::new(tokio::sync::Semaphore::new(4));
    let _call = Arc::clone(&limit).acquire_owned().await.unwrap();
    let halted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let options = CallOptions { slots: Slots::of(Arc::clone(&limit), halted), ..CallOptions::default() };
    let reply = provider.complete(&request, options).await.expect("four samples");
    assert_eq!(reply.completions.len(), 4);
    assert_eq!(reply.usage.prompt_tokens, 4 * 15, "each sample's usage counts");
    assert_eq!(server.requests(), 4, "one request per sample");
    assert!(most.load(Ordering::SeqCst) >= 2, "the samples went one after another");
    assert_eq!(limit.available_permits(), 3, "the extra slots were given back");
}
