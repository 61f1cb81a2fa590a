//! No known secret leaves its provider: an API key a model echoes in a successful reply,
//! or a tool reads from a document, is redacted before it reaches the engine, so it is in
//! no session, no disk-cache file, no output, and is never sent back to a model; and a
//! corpus symlink to `/proc/self/environ` is not read at all.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::{FakeServer, Reply, Seen};

const KEY: &str = "sk-proj-ECHOED-secret-canary-7731";

fn run(dir: &Path, args: &[&str]) -> Output {
    support::isolated(dir, Some(KEY)).args(args).output().expect("the binary runs")
}

fn files_under(p: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(p) else { return out };
    for e in entries {
        let path = e.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            out.extend(files_under(&path));
        } else if meta.is_file() {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Game-of-24 replies that also repeat the key the request carried.
fn echoing_game24(seen: &Seen) -> Reply {
    let auth = seen.header("authorization").unwrap_or("").trim_start_matches("Bearer ").to_string();
    let prompt = seen.prompt();
    if !prompt.to_lowercase().contains("possible next steps") {
        return Reply::chat(&[&format!("sure (my key: {auth})")], Some((100, 10)));
    }
    let last = prompt.rsplit("Input: ").next().unwrap_or("");
    let n: Vec<i64> = last.lines().next().unwrap_or("").split_whitespace().filter_map(|n| n.parse().ok()).collect();
    if n.len() < 2 {
        return Reply::chat(&[&format!("no idea, {auth}")], Some((100, 10)));
    }
    let mut left: Vec<i64> = n[2..].to_vec();
    left.push(n[0] + n[1]);
    left.sort();
    let left: Vec<String> = left.iter().map(i64::to_string).collect();
    let text =
        format!("{} + {} = {} (left: {})\nBy the way, your key is {auth}.", n[0], n[1], n[0] + n[1], left.join(" "));
    Reply::chat(&[&text], Some((100, 10)))
}

#[test]
fn a_key_echoed_in_successful_replies_is_redacted_from_sessions_cache_and_output() {
    let server = FakeServer::start(|_, seen| echoing_game24(seen));
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let file = rec.join("s.jsonl");
    let args = [
        "run",
        "--task",
        "game24",
        "--method",
        "tot-bfs",
        "--model",
        "fake-model",
        "--provider",
        "openai",
        "--base-url",
        &server.url,
        "--input",
        "4 5 6 10",
        "--record",
        file.to_str().unwrap(),
        "--cache",
        "disk",
        "--json",
    ];
    let out = run(dir.path(), &args);
    let s = support::summary(&out);
    assert!(s["llm_calls"].as_u64().unwrap() >= 2, "{s}");
    assert!(server.seen().iter().all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}"))));
    // The key was echoed in every reply, yet it is in no request after the first ones...
    for (i, r) in server.seen().iter().enumerate() {
        assert!(!r.raw_body.contains(KEY), "request {i} sends the key back to the model");
    }
    // ... nor in any file or output.
    let sessions = files_under(&rec);
    let cache = files_under(&dir.path().join("cache"));
    assert!(!sessions.is_empty() && !cache.is_empty(), "a session and cache entries were written");
    for (path, bytes) in sessions.iter().chain(&cache) {
        assert!(!contains(bytes, KEY), "{} holds the key", path.display());
    }
    assert!(sessions.iter().any(|(_, b)| contains(b, "your key is [redacted].")), "the reply is kept, redacted");
    assert!(cache.iter().any(|(_, b)| contains(b, "[redacted]")), "the cache keeps the redacted reply");
    assert!(!contains(&out.stdout, KEY) && !contains(&out.stderr, KEY));

    // The redacted session replays as recorded, and the tree printed has no key either.
    let session = &sessions[0].0;
    let replay = run(dir.path(), &["replay", session.to_str().unwrap(), "--headless"]);
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    assert!(!contains(&replay.stdout, KEY) && !contains(&replay.stderr, KEY));

    // A second run answered from the disk cache shows no key either.
    let again = run(dir.path(), &args);
    assert!(support::summary(&again)["cache_hits"].as_u64().unwrap() > 0);
    for (path, bytes) in files_under(dir.path()) {
        assert!(!contains(&bytes, KEY), "{} holds the key", path.display());
    }
}

/// A ReAct model that repeats the key in its thought, then reads a document holding the
/// key and tries the corpus's `environ` link.
fn leaky_agent(seen: &Seen) -> Reply {
    let step = support::react_step(&seen.prompt());
    let auth = seen.header("authorization").unwrap_or("").trim_start_matches("Bearer ").to_string();
    let text = match step {
        1 => format!(" I was given the key {auth}.\nAction 1: Search[Vault]"),
        2 => " Now the environment.\nAction 2: Search[environ]".to_string(),
        _ => format!(" Done.\nAction {step}: Finish[SUPPORTS]"),
    };
    Reply::chat(&[&text], Some((100, 10)))
}

#[cfg(target_os = "linux")]
#[test]
fn a_key_in_a_thought_or_an_observation_is_never_sent_back_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("vault.md"), format!("# Vault\nThe vault code is {KEY}. It is kept safe.\n")).unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", corpus.join("environ.txt")).unwrap();
    let data = dir.path().join("claims.jsonl");
    std::fs::write(&data, "{\"claim\": \"The vault is safe.\", \"label\": \"SUPPORTS\"}\n").unwrap();
    let model = FakeServer::start(|_, seen| leaky_agent(seen));
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
        "0",
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
    let out = run(dir.path(), &args);
    support::summary(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("environ.txt") && stderr.contains("outside the corpus folder"), "{stderr}");
    let seen = model.seen();
    assert!(seen.len() >= 3, "three steps: {}", seen.len());
    for (i, r) in seen.iter().enumerate() {
        let prompt = r.prompt();
        assert!(!prompt.contains(KEY), "request {i} sends the key back: {prompt}");
        assert!(!prompt.contains("OPENAI_API_KEY"), "request {i} holds the environment");
    }
    let third = seen[2].prompt();
    assert!(third.contains("I was given the key [redacted]."), "{third}");
    assert!(third.contains("The vault code is [redacted]."), "{third}");
    for (path, bytes) in files_under(&record) {
        assert!(!contains(&bytes, KEY), "{} holds the key", path.display());
    }
    assert!(!contains(&out.stdout, KEY) && !contains(&out.stderr, KEY));
}

/// A ReAct model whose thoughts carry terminal escape sequences and bidi overrides.
fn hostile_agent(seen: &Seen) -> Reply {
    let step = support::react_step(&seen.prompt());
    let text = match step {
        1 => " Retitle\u{1b}]0;pwned\u{7} and clear\u{1b}[2J\u{9b}1m, then \u{202e}txt.exe\u{2066}.\nAction 1: Search[Vault]"
            .to_string(),
        _ => format!(" Done\u{200f}.\nAction {step}: Finish[SUPPORTS]"),
    };
    Reply::chat(&[&text], Some((100, 10)))
}

#[test]
fn headless_output_escapes_control_and_bidi_characters_from_model_text() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("vault.md"), "# Vault\nThe vault is safe.\n").unwrap();
    let data = dir.path().join("claims.jsonl");
    std::fs::write(&data, "{\"claim\": \"The vault is safe.\", \"label\": \"SUPPORTS\"}\n").unwrap();
    let model = FakeServer::start(|_, seen| hostile_agent(seen));
    let file = dir.path().join("hostile.jsonl");
    let args = [
        "run",
        "--task",
        "fever",
        "--data",
        data.to_str().unwrap(),
        "--method",
        "react",
        "--input",
        "The vault is safe.",
        "--provider",
        "openai",
        "--base-url",
        &model.url,
        "--model",
        "fake-model",
        "--corpus",
        corpus.to_str().unwrap(),
        "--record",
        file.to_str().unwrap(),
        "--json",
    ];
    support::summary(&run(dir.path(), &args));
    let recorded = std::fs::read_to_string(&file).unwrap();
    assert!(recorded.contains("\u{202e}txt.exe"), "the session keeps the text as the model wrote it");

    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
            || c == '\u{200e}'
            || c == '\u{200f}'
    };
    let out = run(dir.path(), &["replay", file.to_str().unwrap(), "--headless"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert!(!stdout.chars().any(unsafe_char), "raw control or bidi characters reach the terminal: {stdout:?}");
    assert!(
        stdout.contains("Retitle\\u{1b}]0;pwned\\u{7} and clear\\u{1b}[2J\\u{9b}1m, then \\u{202e}txt.exe\\u{2066}."),
        "they show as visible escapes: {stdout}"
    );
    // The JSON summary stays valid JSON with nothing raw in it either.
    let json = run(dir.path(), &["replay", file.to_str().unwrap(), "--headless", "--json"]);
    let text = String::from_utf8(json.stdout).expect("UTF-8 output");
    assert!(!text.chars().any(unsafe_char), "{text:?}");
    support::summary(&Output { status: json.status, stdout: text.into_bytes(), stderr: json.stderr });
}
