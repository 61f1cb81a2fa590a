//! Whole `thoughtscope run`s against a local fault-injecting server: failures stay
//! in their calls and the session stays loadable with every completed call in it; a
//! refused key stops the run with the server's words; budgets stop a run cleanly; the
//! disk cache answers a second run; profiles and prices come from the config file;
//! and an API key in the environment appears in no file the program writes.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use support::{FakeServer, Reply, Seen};
use thoughtscope::engine::Input;
use thoughtscope::session::{Record, Session};

const KEY: &str = "sk-proj-THOUGHTSCOPE-leak-canary-42";

/// A sandbox: home, config and cache directories of its own, and the API key set.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn run(&self, args: &[&str]) -> Output {
        let d = self.dir.path();
        Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
            .args(args)
            .current_dir(d)
            .env("HOME", d)
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env("XDG_CACHE_HOME", d.join("cache"))
            .env_remove("THOUGHTSCOPE_CONFIG")
            .env_remove("OPENAI_BASE_URL")
            .env("OPENAI_API_KEY", KEY)
            .output()
            .expect("the binary runs")
    }

    /// Every file under the sandbox, with its contents.
    fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        fn walk(p: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
            for e in std::fs::read_dir(p).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else {
                    out.push((path.clone(), std::fs::read(&path).unwrap()));
                }
            }
        }
        let mut out = Vec::new();
        walk(self.dir.path(), &mut out);
        out
    }
}

fn summary(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| panic!("no output; stderr: {}", stderr(out)));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Answers Game-of-24 prompts plausibly: two valid steps for a propose prompt, "sure"
/// otherwise; one choice per request (ignores n).
fn game24_text(seen: &Seen) -> String {
    support::game24_text(&seen.prompt(), "sure")
}

fn game24_reply(seen: &Seen) -> Reply {
    Reply::chat(&[&game24_text(seen)], Some((100, 10)))
}

const RUN: [&str; 8] = ["run", "--task", "game24", "--method", "tot-bfs", "--model", "fake-model", "--json"];

fn run_args<'a>(server: &'a FakeServer, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = RUN.to_vec();
    a.extend(["--provider", "openai", "--base-url", server.url.as_str(), "--retries", "2", "--timeout", "10"]);
    a.extend_from_slice(extra);
    a
}

fn llm_replies(session: &Session) -> Vec<&thoughtscope::engine::LlmReply> {
    session
        .inputs()
        .filter_map(|(i, _)| match i {
            Input::LlmReply(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn replay(sb: &Sandbox, path: &Path) -> Value {
    let out = sb.run(&["replay", path.to_str().unwrap(), "--headless", "--json"]);
    assert!(out.status.success(), "replay: {}", stderr(&out));
    summary(&out)
}

fn without_time(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("wall_ms");
    v
}

#[test]
fn faults_fail_single_calls_and_the_session_keeps_every_completed_call() {
    let server = FakeServer::start(|i, seen| match i {
        0 => Reply::json(500, r#"{"error":{"message":"warming up"}}"#),
        // Malformed on every attempt (--retries 2): the call fails, the run goes on.
        3..=5 => Reply::json(200, r#"{"choices":[{"message":{"content":"su"#),
        6 => Reply::Json {
            status: 429,
            headers: vec![("retry-after".into(), "0".into())],
            body: r#"{"error":{"message":"slow down"}}"#.into(),
        },
        _ => game24_reply(seen),
    });
    let sb = Sandbox::new();
    let rec = sb.path("s.jsonl");
    // One call at a time, so requests 3 to 5 are the three attempts of one call.
    let out =
        sb.run(&run_args(&server, &["--input", "4 5 6 10", "--concurrency", "1", "--record", rec.to_str().unwrap()]));
    assert!(out.status.success(), "{}", stderr(&out));
    let s = summary(&out);
    // Request 2 is a value call for 3 samples that the server answers with one (it ignores
    // n); the next sample's request is malformed on every attempt, so that call keeps the
    // sample that came and says the other two were lost. No call failed whole.
    assert_eq!((s["failed_calls"].as_u64(), s["lost_samples"].as_u64()), (None, Some(2)), "{s}");
    assert!(s["llm_calls"].as_u64().unwrap() >= 4, "{s}");
    assert!(s["prompt_tokens"].as_u64().unwrap() > 0);
    assert_eq!(s["cost_usd"], 0.0, "a server on this machine costs nothing");

    let session = Session::load(&rec).expect("the session loads");
    assert!(session.warnings.is_empty(), "{:?}", session.warnings);
    let replies = llm_replies(&session);
    let total = s["llm_calls"].as_u64().unwrap() + s["cache_hits"].as_u64().unwrap();
    assert_eq!(replies.len() as u64, total, "every call is in the session");
    assert!(replies.iter().all(|r| r.result.is_ok()), "no call failed whole");
    let lost: Vec<_> = replies.iter().filter_map(|r| r.result.as_ref().ok()?.lost.as_ref()).collect();
    assert_eq!(lost.len(), 1);
    assert_eq!((lost[0].samples, &lost[0].error.kind), (2, &thoughtscope::protocol::CallErrorKind::Malformed));
    // Requests and raw replies are recorded for the explorer.
    for (input, request) in session.inputs() {
        if let Input::LlmReply(r) = input {
            assert!(request.is_some(), "call {} has its request", r.call);
        }
    }

    assert!(session.end().is_some(), "the session was closed with totals");
    assert_eq!(without_time(replay(&sb, &rec)), without_time(s));
}

#[test]
fn a_refused_key_stops_the_run_with_the_servers_message() {
    let server = FakeServer::start(|_, seen| {
        let sent = seen.header("authorization").unwrap_or("").to_string();
        Reply::json(401, format!(r#"{{"error":{{"message":"Incorrect API key provided: {sent}"}}}}"#))
    });
    let sb = Sandbox::new();
    let rec = sb.path("sessions");
    let out = sb.run(&run_args(&server, &["--range", "900..903", "--record", rec.to_str().unwrap()]));
    assert!(!out.status.success(), "a refused key is an error");
    let err = stderr(&out);
    assert!(err.contains("HTTP 401 Unauthorized") && err.contains("Incorrect API key provided: Bearer ***"), "{err}");
    assert!(err.contains("OPENAI_API_KEY"), "{err}");
    assert_eq!(server.requests(), 1, "no retries, no further calls, no further problems");
    let s = summary(&out);
    assert_eq!(s["n"], 1, "the problems after the stop were not started");
    assert!(s["stopped"].as_str().unwrap().contains("refused"), "{s}");
    let session = Session::load(&rec.join("game24-0900-tot-bfs.jsonl")).unwrap();
    assert!(session.stopped().is_some());
    assert_eq!(llm_replies(&session).len(), 1);
    for (path, bytes) in sb.files() {
        assert!(!contains(&bytes, KEY), "{} holds the key", path.display());
    }
    assert!(!contains(&out.stdout, KEY) && !contains(&out.stderr, KEY));
}

#[test]
fn an_api_key_in_the_environment_appears_in_no_file_written() {
    // The server echoes the key in a (non-fatal) error, as some servers do.
    let server = FakeServer::start(|i, seen| {
        if i == 2 {
            let auth = seen.header("authorization").unwrap_or("").to_string();
            return Reply::json(400, format!(r#"{{"error":{{"message":"bad request from {auth}"}}}}"#));
        }
        game24_reply(seen)
    });
    let sb = Sandbox::new();
    let (rec, out_file) = (sb.path("rec"), sb.path("results.jsonl"));
    let args = run_args(
        &server,
        &["--range", "900..902", "--record", rec.to_str().unwrap(), "--out", out_file.to_str().unwrap()],
    );
    let mut args = args;
    args.extend(["--cache", "disk"]);
    let out = sb.run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.seen()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()), "the key was used");
    let files = sb.files();
    assert!(files.iter().any(|(p, _)| p.starts_with(sb.path("cache"))), "the disk cache wrote files");
    assert!(files.len() >= 4, "sessions, results and cache entries: {}", files.len());
    let mut saw_scrubbed = false;
    for (path, bytes) in &files {
        assert!(!contains(bytes, KEY), "{} holds the key", path.display());
        saw_scrubbed |= contains(bytes, "bad request from Bearer ***");
    }
    assert!(saw_scrubbed, "the server's message is recorded, scrubbed");
    assert!(!contains(&out.stdout, KEY) && !contains(&out.stderr, KEY));
}

#[test]
fn a_token_budget_stops_the_run_cleanly_and_it_replays() {
    let server = FakeServer::start(|_, seen| game24_reply(seen));
    let sb = Sandbox::new();
    let rec = sb.path("rec");
    let out = sb
        .run(&run_args(&server, &["--range", "900..903", "--record", rec.to_str().unwrap(), "--budget-tokens", "250"]));
    assert!(out.status.success(), "a budget stop is a clean stop: {}", stderr(&out));
    let s = summary(&out);
    let reason = s["stopped"].as_str().unwrap();
    assert!(reason.starts_with("budget exceeded") && reason.contains("--budget-tokens 250"), "{s}");
    assert_eq!(s["n"], 1, "later problems are not started");
    let used = s["prompt_tokens"].as_u64().unwrap() + s["completion_tokens"].as_u64().unwrap();
    assert!(used >= 250, "{s}");
    let file = rec.join("game24-0900-tot-bfs.jsonl");
    let session = Session::load(&file).unwrap();
    assert!(session.warnings.is_empty());
    assert_eq!(session.stopped(), Some(reason));
    let stop_at = session.records.iter().position(|r| matches!(r, Record::Stopped { .. })).unwrap();
    assert!(
        matches!(&session.records[stop_at - 2], Record::Input { input: Input::Command { .. }, .. }),
        "the pause that stopped the search is recorded as an input before the reason"
    );
    let unbudgeted = FakeServer::start(|_, seen| game24_reply(seen));
    let full = sb.run(&run_args(&unbudgeted, &["--input", "4 5 6 10"]));
    assert!(server.requests() < unbudgeted.requests(), "{} vs {}", server.requests(), unbudgeted.requests());
    assert!(full.status.success());
    let replayed = replay(&sb, &file);
    assert_eq!(replayed["stopped"], s["stopped"]);
    assert_eq!(replayed["llm_calls"], s["llm_calls"]);
}

/// A server that reports no usage: its tokens are estimated, the summary says how many,
/// and `--budget-tokens` counts them twice, so the run stops no later than a server that
/// reported the same figures would have had it.
#[test]
fn a_token_budget_counts_estimated_tokens_on_the_safe_side() {
    let server = FakeServer::start(|_, seen| Reply::chat(&[&game24_text(seen)], None));
    let sb = Sandbox::new();
    let out = sb.run(&run_args(&server, &["--input", "4 5 6 10"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let all = summary(&out);
    let tokens = all["prompt_tokens"].as_u64().unwrap() + all["completion_tokens"].as_u64().unwrap();
    assert_eq!(all["estimated_tokens"].as_u64(), Some(tokens), "every token is an estimate: {all}");
    let text = sb.run(
        &[&RUN[..7], &["--provider", "openai", "--base-url", server.url.as_str(), "--input", "4 5 6 10"]].concat(),
    );
    assert!(String::from_utf8_lossy(&text.stdout).contains(&format!("of those tokens {tokens} are estimates")));
    // A budget of two thirds of what the run uses stops it by the time a third is used.
    let budget = tokens * 2 / 3;
    let flag = budget.to_string();
    let out = sb.run(&run_args(&server, &["--input", "4 5 6 10", "--budget-tokens", &flag]));
    let s = summary(&out);
    let reason = s["stopped"].as_str().unwrap_or_default();
    assert!(reason.contains("of them estimated") && reason.contains("counted 2 times"), "{s}");
    let used = s["prompt_tokens"].as_u64().unwrap() + s["completion_tokens"].as_u64().unwrap();
    assert!(2 * used >= budget && used < budget, "used {used} of {tokens}, budget {budget}: {s}");
}

#[test]
fn profiles_and_prices_come_from_the_config_file_and_a_dollar_budget_stops() {
    let server = FakeServer::start(|_, seen| game24_reply(seen));
    let sb = Sandbox::new();
    let cfg = sb.path("my.toml");
    std::fs::write(
        &cfg,
        format!(
            "[ui]\ntheme = \"x\"\n\n[providers.fake]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake-model\"\n\
             api_key_env = \"FAKE_KEY_UNSET\"\n\n[prices.\"fake-model\"]\ninput = 1000.0\noutput = 2000.0\n",
            server.url
        ),
    )
    .unwrap();
    let rec = sb.path("one.jsonl");
    let out = sb.run(&[
        "run",
        "--provider",
        "fake",
        "--config",
        cfg.to_str().unwrap(),
        "--input",
        "4 5 6 10",
        "--budget-usd",
        "0.25",
        "--record",
        rec.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!((s["provider"].as_str(), s["model"].as_str()), (Some("fake"), Some("fake-model")));
    let cost = s["cost_usd"].as_f64().unwrap();
    let expected =
        (s["prompt_tokens"].as_f64().unwrap() * 1000.0 + s["completion_tokens"].as_f64().unwrap() * 2000.0) / 1e6;
    assert!((cost - expected).abs() < 1e-9 && cost >= 0.25, "{s}");
    assert!(s["stopped"].as_str().unwrap().contains("--budget-usd 0.25"), "{s}");
    assert!(server.seen()[0].header("authorization").is_none(), "this profile names an unset key: none is sent");
    let header = Session::load(&rec).unwrap().header;
    assert_eq!(header.price.map(|p| p.input), Some(1000.0));
    assert_eq!(replay(&sb, &rec)["cost_usd"], s["cost_usd"]);

    // Without a price a dollar budget is refused up front, naming the model.
    let out = sb.run(&[
        "run",
        "--provider",
        "openai",
        "--base-url",
        "https://llm.invalid/v1",
        "--model",
        "mystery-1",
        "--input",
        "4 5 6 10",
        "--budget-usd",
        "1",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("[prices.\"mystery-1\"]"), "{}", stderr(&out));
    let out = sb.run(&["run", "--provider", "nosuch", "--input", "4 5 6 10"]);
    assert!(stderr(&out).contains("unknown provider \"nosuch\""), "{}", stderr(&out));
}

/// A money budget that cannot be measured is refused before any call, in one line naming
/// the price to add: a server on this machine that nothing prices (it counts as free, so
/// the budget would never trip, though it may pass calls on to a paid API), and the
/// simulated model. A price the config file states, even 0, is measured and accepted.
#[test]
fn a_dollar_budget_on_a_free_by_rule_local_server_is_refused_naming_the_price_to_add() {
    let server = FakeServer::start(|_, seen| game24_reply(seen));
    let sb = Sandbox::new();
    let out = sb.run(&run_args(&server, &["--input", "4 5 6 10", "--budget-usd", "1"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("[prices.\"fake-model\"]") && err.contains("on this machine"), "{err}");
    assert_eq!(server.requests(), 0, "refused before any call");
    let out = sb.run(&["run", "--input", "4 5 6 10", "--budget-usd", "1"]);
    assert!(!out.status.success() && stderr(&out).contains("use --budget-tokens"), "{}", stderr(&out));

    let cfg = sb.path("free.toml");
    std::fs::write(&cfg, "[prices.\"fake-model\"]\ninput = 0.0\noutput = 0.0\n").unwrap();
    let out =
        sb.run(&run_args(&server, &["--input", "4 5 6 10", "--budget-usd", "1", "--config", cfg.to_str().unwrap()]));
    assert!(out.status.success(), "a stated price of 0 is a price: {}", stderr(&out));
    assert_eq!(summary(&out)["cost_usd"], 0.0);
}

/// The one config file serves every section: a profile in `$THOUGHTSCOPE_CONFIG_DIR/config.toml`
/// answers `--provider NAME`, and its `[defaults]` apply to the same run.
#[test]
fn a_profile_in_the_config_dir_is_used_with_the_defaults_beside_it() {
    let server = FakeServer::start(|_, seen| game24_reply(seen));
    let sb = Sandbox::new();
    let dir = sb.path("conf");
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "[defaults]\nbreadth = 1\nprovider = \"dirfake\"\n\n[providers.dirfake]\nkind = \"openai\"\n\
         base_url = \"{}\"\nmodel = \"dir-model\"\n",
        server.url
    );
    std::fs::write(dir.join("config.toml"), text).unwrap();
    let rec = sb.path("dir.jsonl");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
            .args(args)
            .current_dir(sb.path(""))
            .env("HOME", sb.path(""))
            .env("XDG_CONFIG_HOME", sb.path("config"))
            .env("XDG_CACHE_HOME", sb.path("cache"))
            .env_remove("THOUGHTSCOPE_CONFIG")
            .env("THOUGHTSCOPE_CONFIG_DIR", &dir)
            .output()
            .expect("the binary runs")
    };
    let out =
        run(&["run", "--provider", "dirfake", "--input", "4 5 6 10", "--record", rec.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!((s["provider"].as_str(), s["model"].as_str()), (Some("dirfake"), Some("dir-model")), "{s}");
    assert!(!server.seen().is_empty());
    assert_eq!(Session::load(&rec).unwrap().header.params.whole("breadth"), Some(1), "[defaults] of the same file");
    // The provider can come from [defaults] too.
    let out = run(&["run", "--input", "4 5 6 10", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(summary(&out)["provider"], "dirfake");
}

#[test]
fn the_disk_cache_answers_a_second_run_and_replay_provider_answers_from_a_session() {
    let server = FakeServer::start(|_, seen| game24_reply(seen));
    let sb = Sandbox::new();
    let rec = sb.path("first.jsonl");
    let first =
        sb.run(&run_args(&server, &["--input", "4 5 6 10", "--cache", "disk", "--record", rec.to_str().unwrap()]));
    assert!(first.status.success(), "{}", stderr(&first));
    let sent = server.requests();
    assert!(sent > 0);
    let second = sb.run(&run_args(&server, &["--input", "4 5 6 10", "--cache", "disk"]));
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(server.requests(), sent, "the second run sent nothing");
    let (a, b) = (summary(&first), summary(&second));
    assert_eq!(b["llm_calls"], 0);
    assert_eq!(b["cache_hits"].as_u64().unwrap(), a["llm_calls"].as_u64().unwrap() + a["cache_hits"].as_u64().unwrap());
    assert_eq!(a["solved_any"], b["solved_any"]);

    drop(server);
    let out = sb.run(&[
        "run",
        "--provider",
        "replay",
        "--replay-from",
        rec.to_str().unwrap(),
        "--input",
        "4 5 6 10",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = summary(&out);
    assert_eq!((r["provider"].as_str(), r["model"].as_str()), (Some("replay"), Some("fake-model")));
    assert_eq!(r["failed_calls"], Value::Null, "every request was in the recording: {r}");
    assert_eq!(r["llm_calls"], a["llm_calls"]);
}

/// Plays the ReAct agent on qa-demo question 0 through OpenAI native tool calls: search
/// the composer, search her city (with a second call the method must ignore), finish.
fn tool_calling_agent(seen: &Seen) -> Reply {
    assert!(seen.body["tools"].as_array().is_some_and(|t| !t.is_empty()), "every step offers the tools");
    // Each earlier step is an assistant turn with this server's calls (c1, c2, ...).
    let messages = seen.body["messages"].as_array().cloned().unwrap_or_default();
    let ours = |m: &&Value| m["tool_calls"][0]["id"].as_str().is_some_and(|id| id.starts_with('c'));
    let step = messages.iter().filter(ours).count() + 1;
    let call = |id: &str, name: &str, args: Value| serde_json::json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    let (text, calls) = match step {
        1 => (
            "I need to find where Ilse Varga was born.",
            vec![call("c1", "search", serde_json::json!({"entity": "Ilse Varga"}))],
        ),
        2 => (
            "She was born in Marrowick; now the river of Marrowick.",
            vec![
                call("c2", "search", serde_json::json!({"entity": "Marrowick"})),
                call("c3", "lookup", serde_json::json!({"keyword": "river"})),
            ],
        ),
        _ => (
            "Marrowick lies on the Tessel River.",
            vec![call("c4", "finish", serde_json::json!({"answer": "Tessel River"}))],
        ),
    };
    let body = serde_json::json!({
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "tool_calls": calls},
                     "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 30},
    });
    Reply::json(200, body.to_string())
}

#[test]
fn native_react_against_a_tool_calling_server_records_and_replays() {
    let server = FakeServer::start(|_, seen| tool_calling_agent(seen));
    let sb = Sandbox::new();
    let rec = sb.path("native.jsonl");
    let rec_s = rec.to_str().unwrap();
    let url = server.url.clone();
    let args = [
        "run",
        "--task",
        "qa-demo",
        "--method",
        "react",
        "--tool-mode",
        "native",
        "--range",
        "0",
        "--provider",
        "openai",
        "--base-url",
        url.as_str(),
        "--model",
        "fake-model",
        "--retries",
        "0",
        "--json",
    ];
    let mut with_record = args.to_vec();
    with_record.extend(["--record", rec_s]);
    let out = sb.run(&with_record);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = summary(&out);
    assert_eq!(
        (s["solved"].as_u64(), s["bad_calls"].as_u64(), s["tool_calls"].as_u64()),
        (Some(1), Some(0), Some(3)),
        "{s}"
    );
    assert_eq!(s["tool_mode"], "native");
    assert_eq!(server.requests(), 3);
    let body = &server.seen()[0].body;
    assert_eq!(body["tool_choice"], "auto");
    let names: Vec<&str> =
        body["tools"].as_array().unwrap().iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(names, ["search", "lookup", "finish", "calculate"]);
    assert_eq!(body["tools"][0]["function"]["parameters"]["required"], serde_json::json!(["entity"]));

    // The session has the tool calls and the canonical transcript; it replays with no calls.
    let text = std::fs::read_to_string(&rec).unwrap();
    assert!(text.contains("\"tool_mode\":\"native\"") && text.contains("\"tool_calls\""));
    let session = Session::load(&rec).unwrap();
    let replayed = thoughtscope::session::replay::rebuild(&session, None, None).unwrap();
    assert!(replayed.fidelity.is_exact(), "{}", replayed.fidelity);
    let tree = replayed.engine.tree();
    let step2 =
        tree.nodes().find(|n| n.thought.contains("Action 2: Search[Marrowick]")).expect("step 2 in canonical text");
    assert!(step2.issues.iter().any(|i| i.to_string().contains("2 tool calls")), "{:?}", step2.issues);
    assert_eq!(without_time(replay(&sb, &rec)), without_time(s.clone()));

    // And the recorded replies answer the same run again, tools and all, with no server.
    drop(server);
    let again = sb.run(&[
        "run",
        "--task",
        "qa-demo",
        "--method",
        "react",
        "--tool-mode",
        "native",
        "--range",
        "0",
        "--provider",
        "replay",
        "--replay-from",
        rec_s,
        "--json",
    ]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(summary(&again)["solved"], 1, "{}", stderr(&again));
}

#[test]
fn a_server_that_always_fails_exits_non_zero_naming_the_provider_error() {
    let server = FakeServer::start(|_, _| Reply::json(500, r#"{"error":{"message":"the GPU is on fire"}}"#));
    let sb = Sandbox::new();
    let out_file = sb.path("results.jsonl");
    let out =
        sb.run(&run_args(&server, &["--range", "900..902", "--concurrency", "1", "--out", out_file.to_str().unwrap()]));
    assert!(!out.status.success(), "a run whose every call failed must fail: {}", stderr(&out));
    let err = stderr(&out);
    let line = err.lines().find(|l| l.contains("every call to")).unwrap_or_default();
    assert!(line.contains(&format!("every call to openai ({}) failed: HTTP 500", server.url)), "{err}");
    assert!(line.contains("the GPU is on fire"), "{err}");
    // Each problem the failures ended is named on stderr, and marked in the results.
    assert!(err.contains("(4 5 6 10): no answer: 1 of 1 calls to openai"), "{err}");
    let s = summary(&out);
    assert_eq!((s["solved"].as_u64(), s["provider_errors"].as_u64()), (Some(0), Some(2)), "{s}");
    let lines: Vec<Value> =
        std::fs::read_to_string(&out_file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert!(l["provider_error"].as_str().unwrap().contains("HTTP 500"), "{l}");
        assert_eq!(l["correct"], false);
    }
}

#[test]
fn a_failed_root_proposal_is_reported_as_a_provider_error_not_a_model_failure() {
    // Puzzle 901's calls all fail; 900 is answered.
    let server = FakeServer::start(|_, seen| {
        if seen.prompt().contains("1 2 4 7") {
            Reply::json(503, r#"{"error":{"message":"overloaded"}}"#)
        } else {
            game24_reply(seen)
        }
    });
    let sb = Sandbox::new();
    let out_file = sb.path("results.jsonl");
    let out = sb.run(&run_args(&server, &["--range", "900..902", "--out", out_file.to_str().unwrap()]));
    assert!(out.status.success(), "some calls succeeded: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("(1 2 4 7): no answer") && err.contains("HTTP 503"), "{err}");
    let s = summary(&out);
    assert_eq!(s["provider_errors"], 1, "{s}");
    let mut lines: Vec<Value> =
        std::fs::read_to_string(&out_file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    lines.sort_by_key(|r| r["index"].as_u64()); // written as problems end
    assert_eq!(lines[0]["provider_error"], Value::Null);
    assert!(lines[1]["provider_error"].as_str().unwrap().contains("overloaded"), "{}", lines[1]);
}

/// A server that answers every call with no text (`"content": null`, finish reason
/// `"stop"`): each reply is an answer, asked once (no back-off retries), the run finishes
/// with no failed call, and every proposal line is counted unreadable, the first example
/// saying it was an empty reply rather than a silent 0% success.
#[test]
fn a_run_of_nothing_but_empty_replies_counts_them_unreadable() {
    let server = FakeServer::start(|_, _| {
        Reply::json(200, r#"{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}"#)
    });
    let sb = Sandbox::new();
    let out = sb.run(&run_args(&server, &["--range", "900..902", "--concurrency", "1"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let s = summary(&out);
    assert_eq!((s["failed_calls"].as_u64().unwrap_or(0), s["provider_errors"].as_u64().unwrap_or(0)), (0, 0), "{s}");
    assert_eq!(server.requests() as u64, s["llm_calls"].as_u64().unwrap(), "one request a call: {s}");
    let proposals = &s["reply_health"]["proposals"];
    assert_eq!(proposals["bad"], proposals["n"], "{s}");
    assert_eq!(proposals["bad"].as_u64(), s["llm_calls"].as_u64(), "each empty proposal reply is one bad line: {s}");
    assert_eq!(proposals["example"], serde_json::json!({"reply": "", "read": "no step read from the reply"}), "{s}");
}

/// What the last line of a ReAct prompt asks for: `Thought N:`'s N (the reference
/// prompt), or `Write Thought N and Action N, ...`'s (the chat prompt, the default).
fn asked_step(seen: &Seen) -> Option<u32> {
    let last = seen.prompt().trim_end().lines().last().unwrap_or("").to_string();
    if let Some(rest) = last.strip_prefix("Write Thought ") {
        return rest.split_whitespace().next()?.parse().ok();
    }
    last.strip_prefix("Thought ")?.strip_suffix(':')?.parse().ok()
}

fn react_args<'a>(server: &'a FakeServer, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run", "--task", "qa-demo", "--method", "react", "--range", "0..1", "--json"];
    a.extend(["--provider", "openai", "--model", "fake-model", "--base-url", server.url.as_str()]);
    a.extend(["--retries", "2", "--timeout", "10"]);
    a.extend_from_slice(extra);
    a
}

const STEP_1: &str = "I need to find Ilse Varga first.\nAction 1: Search[Ilse Varga]";

/// A prompt that outgrows the model's context (the server says so with a 400, as vLLM,
/// OpenAI and llama-cpp-python word it) stops the ReAct episode at once: the failure is
/// not written into a next prompt, nothing is sent again, and stderr says it once.
#[test]
fn a_context_overflow_stops_the_react_branch_and_is_said_once() {
    const TOO_LONG: &str = r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 2154 tokens (1898 in the messages, 256 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let server = FakeServer::start(|_, seen| match asked_step(seen) {
        Some(1) => Reply::chat(&[STEP_1], Some((400, 20))),
        _ => Reply::json(400, TOO_LONG),
    });
    let sb = Sandbox::new();
    let rec = sb.path("overflow.jsonl");
    let out = sb.run(&react_args(&server, &["--max-steps", "6", "--record", rec.to_str().unwrap()]));
    let err = stderr(&out);
    assert!(out.status.success(), "one call of two failed: {err}");
    assert_eq!(server.requests(), 2, "step 1, then step 2 once: not retried, nothing sent after it");
    for seen in server.seen() {
        let prompt = seen.prompt();
        assert!(!prompt.contains("maximum context length") && !prompt.contains("call failed"), "{prompt}");
    }
    let said: Vec<&str> = err.lines().filter(|l| l.contains("context window")).collect();
    assert_eq!(said.len(), 1, "once on stderr: {err}");
    assert!(said[0].contains("problem 0") && said[0].contains("--n_ctx 4096"), "twice the server's 2048: {}", said[0]);
    assert_eq!(said[0].matches("larger context").count(), 1, "the advice once: {}", said[0]);
    let s = summary(&out);
    assert_eq!((s["context_overflows"].as_u64(), s["failed_calls"].as_u64()), (Some(1), Some(1)), "{s}");
    // The session records the typed failure and replays to the same summary.
    let session = Session::load(&rec).unwrap();
    let kinds: Vec<String> =
        llm_replies(&session).iter().filter_map(|r| r.result.as_ref().err().map(|e| e.kind.to_string())).collect();
    assert_eq!(kinds, ["context_overflow"]);
    assert_eq!(replay(&sb, &rec)["context_overflows"], 1);
}

/// A ReAct step whose call fails (a server error, after its retries) is lost, not text:
/// the step is asked again with the very prompt that failed, so no failure message ever
/// reaches the model, and the lost step counts against --max-steps.
#[test]
fn a_failed_react_call_is_never_written_into_the_next_prompt() {
    let failures = std::sync::atomic::AtomicUsize::new(0);
    let server = FakeServer::start(move |_, seen| match asked_step(seen) {
        Some(1) => Reply::chat(&[STEP_1], Some((400, 20))),
        Some(2) if failures.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 3 => {
            Reply::json(500, r#"{"error":{"message":"upstream hiccup"}}"#)
        }
        _ => Reply::chat(&["Marrowick is the city.\nAction 2: Finish[Tessel River]"], Some((500, 20))),
    });
    let sb = Sandbox::new();
    let out = sb.run(&react_args(&server, &["--max-steps", "4"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = server.seen();
    assert_eq!(seen.len(), 1 + 3 + 1, "step 1; step 2 failed (3 attempts), asked again: {}", seen.len());
    for s in &seen {
        let prompt = s.prompt();
        assert!(!prompt.contains("upstream hiccup") && !prompt.contains("call failed"), "{prompt}");
    }
    assert_eq!(seen[1].prompt(), seen[4].prompt(), "the step is asked again as it was");
    assert_eq!(asked_step(&seen[4]), Some(2));
    let s = summary(&out);
    assert_eq!((s["failed_calls"].as_u64(), s["em"].as_u64()), (Some(1), Some(1)), "{s}");

    // A server that fails every step after the first: four steps of the budget, then the end.
    let server = FakeServer::start(|_, seen| match asked_step(seen) {
        Some(1) => Reply::chat(&[STEP_1], Some((400, 20))),
        _ => Reply::json(500, r#"{"error":{"message":"down"}}"#),
    });
    let out = sb.run(&react_args(&server, &["--max-steps", "4"]));
    let s = summary(&out);
    assert_eq!((s["llm_calls"].as_u64(), s["failed_calls"].as_u64()), (Some(4), Some(3)), "{s}");
}

/// With the window known (stated, or said by the server), no method sends a prompt that
/// cannot fit: a tot-bfs proposal over a 300-token window fails as `context_overflow`
/// before any server is asked, the summary counts it and stderr says why. With only the
/// conservative default the server is asked (it may hold more), and it says.
#[test]
fn no_method_sends_a_prompt_that_cannot_fit_a_measured_window() {
    let tot = |server: &FakeServer, extra: &[&str], rec: &str| {
        let mut a = vec!["run", "--task", "game24", "--method", "tot-bfs", "--input", "4 9 10 13", "--json"];
        a.extend(["--provider", "openai", "--model", "fake-model", "--base-url", server.url.as_str()]);
        a.extend(["--retries", "0", "--timeout", "10", "--record", rec]);
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    for (serve, flag) in [(None, Some("300")), (Some(r#"{"default_generation_settings":{"n_ctx":300}}"#), None)] {
        let server = FakeServer::start(|_, _| Reply::chat(&["4 + 9 = 13 (left: 10 13 13)"], Some((50, 5))));
        if let Some(props) = serve {
            server.serve_discovery("/props", props);
        }
        let sb = Sandbox::new();
        let rec = sb.path("s.jsonl");
        let mut args = tot(&server, &[], rec.to_str().unwrap());
        if let Some(f) = flag {
            args.extend(["--context-window".to_string(), f.to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = sb.run(&args);
        let err = stderr(&out);
        assert_eq!(server.requests(), 0, "nothing that cannot fit is sent: {err}");
        let s = summary(&out);
        assert!(s["context_overflows"].as_u64() >= Some(1), "{s}");
        assert_eq!(s["failed_calls"], s["llm_calls"], "{s}");
        assert!(err.contains("context window (300 tokens)"), "{err}");
        let session = Session::load(&rec).unwrap();
        let kinds: Vec<String> =
            llm_replies(&session).iter().filter_map(|r| r.result.as_ref().err().map(|e| e.kind.to_string())).collect();
        assert!(!kinds.is_empty() && kinds.iter().all(|k| k == "context_overflow"), "{kinds:?}");
        let message = llm_replies(&session).iter().find_map(|r| r.result.as_ref().err().map(|e| e.message.clone()));
        assert!(message.unwrap().starts_with("not sent: the prompt (about "), "the refusal says it was not sent");
    }
    // The default is a guess: the request goes, and the server answers.
    let server = FakeServer::start(|_, _| Reply::chat(&["4 + 9 = 13 (left: 10 13 13)"], Some((50, 5))));
    let sb = Sandbox::new();
    let rec = sb.path("s.jsonl");
    let args = tot(&server, &[], rec.to_str().unwrap());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.run(&args);
    assert!(server.requests() >= 1, "{}", stderr(&out));
    assert_eq!(summary(&out)["context_overflows"].as_u64().unwrap_or(0), 0);
}

/// A ReAct run whose prompts were trimmed to a small window re-drives exactly through
/// `--provider replay`: the replay fits its prompts to the window the sessions recorded,
/// so every trimmed step finds its recorded reply.
#[test]
fn a_trimmed_react_run_re_drives_with_its_recorded_window() {
    let server = FakeServer::start(move |_, seen| match asked_step(seen) {
        Some(k) if k < 4 => {
            Reply::chat(&[&format!("Looking further.\nAction {k}: Search[Marrowick {k}]")], Some((50, 5)))
        }
        _ => Reply::chat(&["Enough.\nAction 4: Finish[Tessel River]"], Some((50, 5))),
    });
    let sb = Sandbox::new();
    let rec = sb.path("trimmed.jsonl");
    let window = "830";
    let out = sb.run(&react_args(
        &server,
        &["--max-steps", "6", "--context-window", window, "--record", rec.to_str().unwrap()],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let session = Session::load(&rec).unwrap();
    assert_eq!(session.header.context_window, window.parse().ok());
    // In the chat style whole (assistant, user) turn pairs are dropped from the oldest and
    // the question's turn says how many; the reference style trims observations instead.
    let trimmed =
        server.seen().iter().filter(|s| s.prompt().contains("left out to fit the model's context window]")).count();
    assert!(trimmed >= 1, "the window is small enough that a step is trimmed: {}", stderr(&out));
    let first = summary(&out);
    let again = sb.run(&[
        "run",
        "--task",
        "qa-demo",
        "--method",
        "react",
        "--range",
        "0..1",
        "--json",
        "--max-steps",
        "6",
        "--provider",
        "replay",
        "--replay-from",
        rec.to_str().unwrap(),
    ]);
    assert!(again.status.success(), "{}", stderr(&again));
    let redriven = summary(&again);
    assert_eq!(redriven["failed_calls"].as_u64().unwrap_or(0), 0, "{redriven}");
    assert_eq!(
        (redriven["llm_calls"].clone(), redriven["em"].clone()),
        (first["llm_calls"].clone(), first["em"].clone())
    );
}

/// Before a ReAct run the client asks the server its context window (llama.cpp's
/// `/props`, vLLM's `/v1/models`), unless `--context-window` or the profile says it; a
/// server that does not say gets a conservative 4096 and a note that says how to state
/// it. The session header records the window, so replays fit prompts the same way.
#[test]
fn the_context_window_comes_from_the_flag_the_server_or_a_stated_default() {
    let window_of = |serve: &[(&str, &str)], extra: &[&str]| {
        let server = FakeServer::start(|_, _| Reply::chat(&["Done.\nAction 1: Finish[Tessel River]"], Some((50, 5))));
        for (path, body) in serve {
            server.serve_discovery(path, body);
        }
        let sb = Sandbox::new();
        let rec = sb.path("s.jsonl");
        let mut args = react_args(&server, &["--record", rec.to_str().unwrap()]);
        args.extend_from_slice(extra);
        let out = sb.run(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(server.requests(), 1, "one model call; asking the window is no model call");
        (Session::load(&rec).unwrap().header.context_window, stderr(&out))
    };
    let props = r#"{"default_generation_settings":{"n_ctx":2048},"total_slots":1}"#;
    let (window, err) = window_of(&[("/props", props)], &[]);
    assert_eq!(window, Some(2048), "llama.cpp's /props");
    assert!(!err.contains("does not say"), "{err}");
    let models = r#"{"object":"list","data":[{"id":"fake-model","object":"model","max_model_len":8192}]}"#;
    assert_eq!(window_of(&[("/models", models)], &[]).0, Some(8192), "vLLM's /v1/models");
    let (window, err) = window_of(&[], &[]);
    assert_eq!(window, Some(4096), "a conservative default");
    let note: Vec<&str> = err.lines().filter(|l| l.starts_with("note: ")).collect();
    assert_eq!(note.len(), 1, "{err}");
    assert!(note[0].contains("--context-window N") && note[0].contains("trimmed to fit 4096"), "{}", note[0]);
    let (window, err) = window_of(&[("/props", props)], &["--context-window", "3000"]);
    assert_eq!(window, Some(3000), "the flag is taken over the server");
    assert!(!err.contains("note: "), "{err}");
    // Out of range: one line saying the range.
    let server = FakeServer::start(|_, _| Reply::chat(&["x"], None));
    let sb = Sandbox::new();
    let out = sb.run(&react_args(&server, &["--context-window", "10"]));
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--context-window must be from 256 to 100000000 tokens, not 10"), "{}", stderr(&out));
    assert_eq!(server.requests(), 0);
}

/// A temperature the Anthropic API would clamp (it takes 0 to 1) is refused before any
/// call, in one plain line naming the range; one inside it is sent as given, to
/// `/v1/messages` whether `--base-url` ends in `/v1` or not.
#[test]
fn anthropic_refuses_a_temperature_it_would_clamp_and_takes_a_base_url_without_v1() {
    let server = FakeServer::start(|_, _| {
        let body = serde_json::json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "Answer: 4 * 6 = 24"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5},
        });
        Reply::json(200, body.to_string())
    });
    let sb = Sandbox::new();
    let base = server.url.trim_end_matches("/v1").to_string();
    let run = |temperature: &str| {
        let d = sb.dir.path();
        Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
            .args(["run", "--task", "game24", "--method", "io", "--input", "4 5 6 10", "--json"])
            .args(["--provider", "anthropic", "--model", "claude-x", "--base-url", base.as_str()])
            .args(["--temperature", temperature, "--retries", "0", "--timeout", "10"])
            .current_dir(d)
            .env("HOME", d)
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env("XDG_CACHE_HOME", d.join("cache"))
            .env_remove("THOUGHTSCOPE_CONFIG")
            .env_remove("ANTHROPIC_BASE_URL")
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .output()
            .unwrap()
    };
    let out = run("1.5");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("temperature 1.5") && err.contains("accepts 0 to 1"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one plain line: {err}");
    assert_eq!(server.requests(), 0, "nothing sent");
    let out = run("0.9");
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = server.seen();
    assert!(!seen.is_empty());
    for s in &seen {
        assert_eq!(s.path, "/v1/messages");
        assert_eq!(s.body["temperature"], 0.9);
    }
}
