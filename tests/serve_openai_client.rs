//! `thoughtscope serve` driven by the official OpenAI Python client (pinned, installed by
//! `tests/serve/openai-client.sh` into the user cache directory): models, a plain and a
//! streamed answer with parameters in `extra_body`, the session header, a refused key and
//! a refused parameter, the same through the Responses API (`responses.create`, plain and
//! streamed), all against `sim` on a built-in task (offline); then, against a scripted
//! upstream, a bare model name costing one upstream completion and an upstream that dies
//! mid-search reaching the client as a 502 `upstream_unreachable`. Only if pip cannot
//! install the client does this skip, saying why (THOUGHTSCOPE_REQUIRE_OPENAI_CLIENT=1
//! makes that a failure).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use thoughtscope::session::Session;

use crate::support::{FakeServer, Reply, Seen};

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serve/openai-client.sh")
}

/// The venv's python, installing the client if missing.
fn python() -> Result<String, String> {
    let out =
        Command::new("bash").arg(script()).arg("install").stdin(Stdio::null()).output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("pip could not install the openai client: {}", err.lines().last().unwrap_or("")));
    }
    let out = Command::new("bash").arg(script()).arg("python").output().map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The venv's python; none (the test skips, saying why) when pip cannot install the
/// client, unless THOUGHTSCOPE_REQUIRE_OPENAI_CLIENT is set.
fn python_or_skip() -> Option<String> {
    match python() {
        Ok(p) => Some(p),
        Err(why) if std::env::var_os("THOUGHTSCOPE_REQUIRE_OPENAI_CLIENT").is_none() => {
            eprintln!("skipped: {why}");
            None
        }
        Err(why) => panic!("{why}"),
    }
}

/// `serve` with `args` on a free port (sessions under `home`), and the client `script`
/// of tests/serve run against it; the server is stopped when the script ends.
fn serve_and_drive(python: &str, home: &Path, args: &[&str], script: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["serve", "--port", "0", "--api-key", "client-key", "--sessions"])
        .arg(home.join("sessions"))
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env_remove("THOUGHTSCOPE_CONFIG")
        .env_remove("OPENAI_BASE_URL")
        .env("OPENAI_API_KEY", "sk-upstream")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url =
        line.split("listening on ").nth(1).and_then(|r| r.split_whitespace().next()).expect("the address").to_string();
    let out = Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serve").join(script))
        .args([&url, "client-key"])
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    out
}

#[test]
fn the_official_openai_client_gets_answers_streams_and_errors_it_understands() {
    let Some(python) = python_or_skip() else { return };
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    // sim answers the built-in tasks only: with game24 as the default, /v1/models lists
    // the methods that answer (with the open question it lists none).
    let out = serve_and_drive(&python, home.path(), &["--task", "game24"], "client.py");
    assert!(out.status.success(), "client.py: {}", String::from_utf8_lossy(&out.stderr));
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    let models: Vec<&str> = seen["models"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(models.contains(&"cot-sc@sim") && models.contains(&"tot-bfs@sim"), "{models:?}");
    let plain = &seen["plain"];
    assert!(!plain["content"].as_str().unwrap().is_empty(), "{plain}");
    assert_eq!(plain["finish_reason"], "stop");
    assert!(plain["total_tokens"].as_u64().unwrap() > 0);
    let file = sessions.join(plain["session"].as_str().unwrap());
    let recorded = Session::load(&file).unwrap();
    assert_eq!(recorded.header.params.method.label(), "tot-bfs");
    assert_eq!(
        recorded.header.params.get("breadth"),
        Some(&thoughtscope::engine::Value::Whole(3)),
        "extra_body reached the method"
    );
    assert!(file.to_string_lossy().contains(plain["request_id"].as_str().unwrap()));
    let streamed = &seen["streamed"];
    assert!(!streamed["content"].as_str().unwrap().is_empty(), "{streamed}");
    assert_eq!(streamed["finish_reason"], "stop");
    assert!(streamed["total_tokens"].as_u64().unwrap() > 0);
    // The Responses API: a plain answer recorded as a session, a stream of semantic events.
    let plain = &seen["responses_plain"];
    assert_eq!((plain["object"].as_str(), plain["status"].as_str()), (Some("response"), Some("completed")), "{plain}");
    assert!(!plain["text"].as_str().unwrap().is_empty() && plain["output_tokens"].as_u64().unwrap() > 0);
    let recorded = Session::load(&sessions.join(plain["session"].as_str().unwrap())).unwrap();
    assert_eq!(recorded.header.params.get("breadth"), Some(&thoughtscope::engine::Value::Whole(2)));
    let streamed = &seen["responses_streamed"];
    assert_eq!(streamed["text"], streamed["final_text"], "{streamed}");
    assert!(!streamed["text"].as_str().unwrap().is_empty());
    assert_eq!(
        (streamed["first"].as_str(), streamed["last"].as_str()),
        (Some("response.created"), Some("response.completed"))
    );
    assert!(streamed["total_tokens"].as_u64().unwrap() > 0);
    assert_eq!(seen["bad_effort"], "invalid_reasoning_effort");
    assert_eq!(seen["sim_effort"], "unsupported_reasoning_effort", "sim takes no effort: said, not ignored");
    assert_eq!(seen["wrong_key"], 401);
    assert_eq!(seen["bad_parameter"], "invalid_parameter");
}

/// A scripted upstream: the root proposal of any search is answered, every other call of
/// the "doomed" question is a connection closed without a reply; anything else is "Paris".
fn scripted(seen: &Seen) -> Reply {
    let prompt = seen.prompt();
    if prompt.contains("Possible next steps:") {
        Reply::chat(&["Recall the capital.\nName it."], Some((100, 10)))
    } else if prompt.contains("doomed") {
        Reply::Raw(vec![])
    } else {
        Reply::chat(&["Paris"], Some((21, 2)))
    }
}

#[test]
fn the_official_client_pays_one_completion_for_a_bare_model_and_hears_502_from_a_dead_upstream() {
    let Some(python) = python_or_skip() else { return };
    let fake = FakeServer::start(|_, seen| scripted(seen));
    let home = tempfile::tempdir().unwrap();
    let sessions = home.path().join("sessions");
    let upstream = ["--provider", "openai", "--base-url", &fake.url, "--model", "fake-model", "--retries", "1"];
    let out = serve_and_drive(&python, home.path(), &upstream, "upstream.py");
    assert!(out.status.success(), "upstream.py: {}", String::from_utf8_lossy(&out.stderr));
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bare = &seen["bare"];
    assert_eq!((bare["content"].as_str(), bare["choices"].as_u64()), (Some("Paris"), Some(1)), "{bare}");
    assert_eq!((bare["prompt_tokens"].as_u64(), bare["completion_tokens"].as_u64()), (Some(21), Some(2)), "{bare}");
    let asked: Vec<Seen> = fake.seen().into_iter().filter(|s| s.prompt().contains("capital of France")).collect();
    assert_eq!(asked.len(), 1, "a bare model name is one upstream completion");
    let body = &asked[0].body;
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(2), "the system and user turns: {body}");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        (body["temperature"].as_f64(), body["max_tokens"].as_u64(), body["seed"].as_u64()),
        (Some(0.5), Some(20), Some(3))
    );
    assert!(Session::load(&sessions.join(bare["session"].as_str().unwrap())).unwrap().end().is_some());
    assert_eq!(seen["dead"]["status"], 502, "{seen}");
    assert_eq!(seen["dead"]["code"], "upstream_unreachable", "{seen}");
    assert_eq!(seen["dead_streamed"]["code"], "upstream_unreachable", "{seen}");
}
