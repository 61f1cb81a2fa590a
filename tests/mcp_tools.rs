//! Tools from an MCP server (the test server in tests/mcp/server.rs) offered to ReAct and
//! ReTreVal, on a task file and on the built-in tasks: started with only its configured
//! environment, called in text and native modes, failures (a server that dies included)
//! as observations, recorded so a replay needs no server, and ended with the run.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::{sandboxed, summary, FakeServer, Reply};

const TASK: &str = r#"name = "sums"
[problems]
items = [
  { input = "What is 2 + 3?", answer = "5", steps = ['add[{"a": 2, "b": 3}]'] },
  { input = "What is 10 + 32?", answer = "42", steps = ['add[{"a": 10, "b": 32}]'] },
  { input = "What is 1 + 1, slowly?", answer = "2", steps = ['slow[{"ms": 3000}]', 'fail[{"reason": "no luck"}]', 'add[{"a": 1, "b": 1}]'] },
]
[prompts]
io = "Q: {{ input }}"
cot = "Q: {{ input }}\nAnswer: ..."
react = """
[system]
Use the tools:
{{ tools }}
[user]
Question: {{ input }}
{{ trajectory }}
Write Thought {{ step }} and Action {{ step }}, and nothing else."""
react_native = """
[user]
Question: {{ input }}
{{ trajectory }}
Now step {{ step }}: write thought {{ step }} as text, then call one tool."""
[answer]
read = "answer-line"
[check]
kind = "numeric"
[tools]
mcp = ["calc"]
"#;

/// A folder with the task, a config naming a copy of the test server (so a test can
/// remove it), and the copy.
fn setup(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("sums")).unwrap();
    std::fs::write(dir.join("sums/task.toml"), TASK).unwrap();
    let built = Path::new(env!("CARGO_BIN_EXE_thoughtscope")).parent().unwrap().join("examples/test-mcp-server");
    let server = dir.join("test-mcp-server");
    std::fs::copy(&built, &server)
        .unwrap_or_else(|e| panic!("{}: {e} (cargo test builds the example)", built.display()));
    std::fs::create_dir_all(dir.join("config")).unwrap();
    let config = format!(
        "[[mcp]]\nname = \"calc\"\ncommand = {:?}\nenv = {{ MCP_TEST_LOG = {:?}, MCP_API_KEY = \"sk-mcp-abcdefghij0123456789\" }}\ntimeout_secs = 1\n",
        server.display().to_string(),
        dir.join("calls.log").display().to_string()
    );
    std::fs::write(dir.join("config/config.toml"), config).unwrap();
    server
}

fn run(dir: &Path, extra: &[&str]) -> std::process::Output {
    run_range(dir, "0..3", extra)
}

fn run_range(dir: &Path, range: &str, extra: &[&str]) -> std::process::Output {
    // sim without its errors: every problem is solved as its steps say.
    let args = ["run", "--task", "./sums", "--method", "react", "--range", range, "--mcp", "calc", "--json"];
    let args = [&args[..], &["--sim-noise", "0"]].concat();
    sandboxed(dir).args(args).args(extra).env("OPENAI_API_KEY", "sk-thoughtscope-own-key-0123456789").output().unwrap()
}

#[test]
fn an_mcp_servers_tools_answer_record_and_replay_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = setup(dir.path());
    for (mode, record) in [("text", "text"), ("native", "native")] {
        let out = run(dir.path(), &["--tool-mode", mode, "--record", record]);
        let s = summary(&out);
        assert_eq!(s["solved"], 3, "{mode}: {s}");
    }
    let log = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
    assert_eq!(log.matches("add 2 3 env:").count(), 2, "text and native each called add: {log}");
    assert!(log.contains("slow 3000") && log.contains("fail no luck"), "{log}");
    // Only the environment the entry names reaches the server.
    assert!(log.contains("MCP_API_KEY=sk-mcp-"), "{log}");
    assert!(!log.contains("OPENAI_API_KEY"), "thoughtscope's own key stays out: {log}");
    // The session names the server and its tools, without the secret, and each call's
    // result is a recorded observation (a slow call and a failing one included).
    let session = std::fs::read_to_string(dir.path().join("text/sums-0002-react.jsonl")).unwrap();
    assert!(session.contains("\"mcp_servers\"") && session.contains("\"mcp_tools\""), "the header lists them");
    assert!(!session.contains("sk-mcp-abcdefghij0123456789"), "the secret is redacted");
    assert!(session.contains("the MCP server calc did not answer slow within 1 s"), "a hang is an observation");
    assert!(session.contains("fail (calc) failed: failed: no luck"), "a tool error is an observation");
    // The server is gone: the sessions replay from their recorded observations.
    std::fs::remove_file(&server).unwrap();
    for record in ["text", "native"] {
        let out = sandboxed(dir.path()).args(["replay", record, "--headless", "--json"]).output().unwrap();
        assert_eq!(summary(&out)["solved"], 3, "{record}");
    }
    // A server that cannot start is one line naming it.
    let out = run(dir.path(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("the MCP server \"calc\": cannot start"), "{err}");
    assert!(!err.contains("task data"), "{err}");
}

#[test]
fn mcp_flags_that_cannot_work_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = sandboxed(dir.path())
        .args(["run", "--task", "game24", "--method", "cot", "--range", "0", "--mcp", "calc"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("game24 uses no tools (it has no ReAct steps), so --mcp has no place"), "{err}");
    let out =
        sandboxed(dir.path()).args(["run", "--task", "./sums", "--method", "react", "--mcp", "nope"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--mcp nope: no [[mcp]] entry of that name in the config file (entries: calc)"), "{err}");
    let out = sandboxed(dir.path()).args(["run", "--task", "./sums", "--method", "react"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[tools] mcp names the server calc: start it with --mcp calc"), "{err}");
    // A server that cannot start: its name quoted (a program called "server" reads as one), no "task data".
    let out = sandboxed(dir.path())
        .args(["run", "--task", "math-demo", "--method", "react", "--range", "0", "--mcp-cmd", "./server --x"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.trim().starts_with("error: the MCP server \"server\": cannot start ./server:"), "{err}");
}

/// The scripted model of a built-in task's ReAct and ReTreVal: step 1 adds 2 and 3 with
/// the MCP server's `add`, step 2 finishes with 5 (as text, or as native tool calls when
/// the request offers tools); ReTreVal's other phases get plain good answers.
fn scripted(seen: &support::Seen) -> Reply {
    let prompt = seen.prompt();
    let plain = |text: &str| Reply::chat(&[text], Some((50, 10)));
    if let Some(text) = support::scripted::retreval_phase(&prompt) {
        return plain(&text);
    }
    let Some(tools) = seen.body["tools"].as_array().filter(|t| !t.is_empty()) else {
        let step = support::react_step(&prompt).max(1);
        let action = if step == 1 { r#"add[{"a": 2, "b": 3}]"# } else { "finish[5]" };
        return plain(&format!("Thought {step}: I use the tools.\nAction {step}: {action}"));
    };
    let step = support::scripted::native_step(&prompt);
    let (name, arguments) = if step == 1 {
        ("add", json!({"a": 2, "b": 3}))
    } else {
        let finish = tools.iter().find(|t| t["function"]["name"] == "finish").expect("finish is offered");
        let param = finish["function"]["parameters"]["properties"].as_object().unwrap().keys().next().unwrap().clone();
        ("finish", json!({ param: "5" }))
    };
    support::scripted::tool_call(step, name, &arguments, &format!("Step {step}: I call {name}."))
}

fn picked(s: &Value) -> Value {
    json!([s["solved"], s["solved_any"], s["tool_calls"]])
}

#[test]
fn built_in_tasks_offer_an_mcp_servers_tools_in_text_and_native_modes_and_replay_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = setup(dir.path());
    let model = FakeServer::start(|_, seen| scripted(seen));
    let hotpot = support::fixture("hotpot-sample.json");
    let runs: [(&str, &str, &str, &[&str]); 6] = [
        ("math-demo", "react", "text", &[]),
        ("math-demo", "react", "native", &[]),
        ("qa-demo", "react", "text", &[]),
        ("qa-demo", "react", "native", &[]),
        ("math-demo", "retreval", "text", &["--no-memory"]),
        ("hotpotqa", "react", "text", &["--data", hotpot.to_str().unwrap()]),
    ];
    let mut summaries = Vec::new();
    for (task, method, mode, extra) in runs {
        let record = dir.path().join(format!("{task}-{method}-{mode}.jsonl"));
        let args = [
            "run",
            "--task",
            task,
            "--method",
            method,
            "--tool-mode",
            mode,
            "--range",
            "0..1",
            "--mcp",
            "calc",
            "--json",
            "--record",
            record.to_str().unwrap(),
        ];
        let out = support::scripted::model(sandboxed(dir.path()).args(args).args(extra), &model).output().unwrap();
        let s = summary(&out);
        let session = std::fs::read_to_string(&record).unwrap();
        assert!(session.contains(r#""result":{"text":"5","ok":true"#), "{task} {method} {mode}: add answered 5");
        let header: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
        let mcp = &header["task_def"]["mcp"];
        assert_eq!(mcp["servers"][0]["name"], "calc", "{task}: the header names the server: {header}");
        let names: Vec<&str> = mcp["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["add", "big", "die", "fail", "get-sum", "slow"], "{task}: and its tools");
        assert!(!session.contains("sk-mcp-abcdefghij0123456789"), "{task}: the secret is redacted");
        summaries.push((record, picked(&s)));
    }
    // The model was offered the server's tools: listed in text prompts (several
    // arguments as their JSON object; after hotpotqa's own three), as native definitions.
    let seen = model.seen();
    let listed = |needle: &str| seen.iter().filter(|r| r.prompt().contains(needle)).count();
    assert!(listed(r#"add[{"a": number, "b": number}]: Add two numbers"#) >= 4, "math-demo, qa-demo, retreval");
    assert!(listed(r#"(4) add[{"a": number, "b": number}]: Add two numbers"#) >= 2, "hotpotqa lists it fourth");
    let native = seen
        .iter()
        .filter_map(|r| r.body["tools"].as_array())
        .filter(|t| {
            t.iter()
                .any(|t| t["function"]["name"] == "add" && t["function"]["parameters"]["required"] == json!(["a", "b"]))
        })
        .count();
    assert!(native >= 4, "math-demo and qa-demo native offered add with its schema: {native}");
    let log = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
    assert!(log.matches("add 2 3 env:").count() >= 6, "each run called the server: {log}");
    // The server is gone: every session replays from its recorded observations.
    std::fs::remove_file(&server).unwrap();
    for (record, picked_run) in summaries {
        let out =
            sandboxed(dir.path()).args(["replay", record.to_str().unwrap(), "--headless", "--json"]).output().unwrap();
        assert_eq!(picked(&summary(&out)), picked_run, "{}", record.display());
    }
}

#[test]
fn a_server_that_dies_mid_run_is_one_line_and_failed_observations() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let task = TASK.replace(
        r#"steps = ['add[{"a": 2, "b": 3}]'] },
  { input = "What is 10 + 32?""#,
        r#"steps = ['add[{"a": 2, "b": 3}]', 'die[{"code": 4}]', 'add[{"a": 1, "b": 4}]'] },
  { input = "What is 10 + 32?""#,
    );
    assert_ne!(task, TASK);
    std::fs::write(dir.path().join("sums/task.toml"), task).unwrap();
    let out = run(dir.path(), &["--record", "died"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run goes on: {err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("MCP server")).collect();
    assert_eq!(
        warnings,
        ["warning: the MCP server calc ended during the run; calls to its tools after that were failed observations"],
        "{err}"
    );
    let session = std::fs::read_to_string(dir.path().join("died/sums-0000-react.jsonl")).unwrap();
    let replies: Vec<Value> = session
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["input"]["type"] == "tool_reply")
        .map(|v| v["input"]["result"].clone())
        .collect();
    // add, die, add, then finish.
    assert_eq!(replies.len(), 4, "{replies:?}");
    assert_eq!(replies[0]["text"], "5", "{replies:?}");
    assert!(replies[1]["text"].as_str().unwrap().contains("has ended (its process stopped during the call of die"));
    assert!(replies[2]["text"].as_str().unwrap().contains("has ended (its process stopped during the run), so add"));
    assert_eq!((&replies[1]["ok"], &replies[2]["ok"]), (&json!(false), &json!(false)), "{replies:?}");
    let log = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
    assert!(log.contains("die 4") && !log.contains("add 1 4"), "{log}");
    // The session is whole: it replays.
    let out =
        sandboxed(dir.path()).args(["replay", "died/sums-0000-react.jsonl", "--headless", "--json"]).output().unwrap();
    summary(&out);
}

/// The server's process ids, from its start lines in the log.
fn server_pids(log: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter_map(|l| l.strip_prefix("start pid ")?.split_whitespace().next()?.parse().ok()).collect()
}

/// Whether the process lives (and is no zombie), asking up to ten seconds for it to go.
fn still_there(pid: u32) -> bool {
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()).unwrap_or("");
        if stat.is_empty() || state == "Z" {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    true
}

#[cfg(target_os = "linux")]
#[test]
fn the_server_process_ends_with_the_run_and_on_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let server = setup(dir.path());
    // A server that does not leave when its stdin closes: only thoughtscope ending it does.
    let config = std::fs::read_to_string(dir.path().join("config/config.toml")).unwrap();
    let config = config.replace("timeout_secs = 1", "timeout_secs = 30\nargs = [\"--stay\"]");
    std::fs::write(dir.path().join("config/config.toml"), config).unwrap();
    let log = dir.path().join("calls.log");
    let out = run(dir.path(), &[]);
    summary(&out);
    let pids = server_pids(&log);
    assert_eq!(pids.len(), 1, "{}", std::fs::read_to_string(&log).unwrap());
    assert!(!still_there(pids[0]), "the server {} outlived the run", pids[0]);
    // A headless run stopped by SIGINT while a call is in flight (slow waits 20 s).
    let task = std::fs::read_to_string(dir.path().join("sums/task.toml")).unwrap();
    std::fs::write(
        dir.path().join("sums/task.toml"),
        task.replace(r#"'slow[{"ms": 3000}]'"#, r#"'slow[{"ms": 20000}]'"#),
    )
    .unwrap();
    let child = sandboxed(dir.path())
        .args(["run", "--task", "./sums", "--method", "react", "--range", "2..3", "--mcp", "calc", "--json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("slow 20000") {
        assert!(waited < 600, "the slow call never came");
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    let pid = *server_pids(&log).last().unwrap();
    let sent = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!still_there(pid), "the server {pid} outlived the stopped run");
    drop(server);
}

/// The test server serving over streamable HTTP on 127.0.0.1 (its `--http` mode), ended
/// when dropped.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start(binary: &Path, log: &Path, args: &[&str]) -> HttpServer {
        use std::io::BufRead;
        let mut child = std::process::Command::new(binary)
            .arg("--http")
            .args(args)
            .env("MCP_TEST_LOG", log)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "the server's first line is its URL: {line:?}");
        HttpServer { child, url: line.trim().to_string() }
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A config naming the HTTP server at `url` calc, with `extra` lines (headers, a token).
fn http_config(dir: &Path, url: &str, extra: &str) {
    let config = format!("[[mcp]]\nname = \"calc\"\nurl = {url:?}\ntimeout_secs = 1\n{extra}");
    std::fs::write(dir.join("config/config.toml"), config).unwrap();
}

const TOKEN: &str = "mcp-bearer-abcdefghij0123456789";

#[test]
fn a_streamable_http_servers_tools_answer_record_and_replay_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let binary = setup(dir.path());
    let log = dir.path().join("calls.log");
    // A server that wants a bearer token and a header, named in the config file.
    let mut guarded = HttpServer::start(&binary, &log, &["--token", TOKEN, "--header", "x-team=blue"]);
    http_config(dir.path(), &guarded.url, &format!("bearer_token = {TOKEN:?}\nheaders = {{ x-team = \"blue\" }}\n"));
    for mode in ["text", "native"] {
        let out = run(dir.path(), &["--tool-mode", mode, "--record", mode]);
        assert_eq!(summary(&out)["solved"], 3, "{mode}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.matches("add 2 3 env:").count(), 2, "text and native each called add: {calls}");
    assert!(!calls.contains("refused"), "every request had the token and the header: {calls}");
    let session = std::fs::read_to_string(dir.path().join("text/sums-0002-react.jsonl")).unwrap();
    let header: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
    let server = &header["task_def"]["def"]["tools"]["mcp_servers"][0];
    assert_eq!(server["url"], guarded.url.as_str(), "{header}");
    assert_eq!((&server["headers"]["x-team"], &server["bearer_token"]), (&json!("blue"), &json!("(redacted)")));
    assert!(!session.contains(TOKEN), "the token is never written");
    assert!(session.contains("the MCP server calc did not answer slow within 1 s"), "a hang is an observation");
    assert!(session.contains("fail (calc) failed: failed: no luck"), "a tool error is an observation");
    // A wrong token: the server's 401 is one line naming the server.
    http_config(
        dir.path(),
        &guarded.url,
        "bearer_token = \"wrong-token-0123456789\"\nheaders = { x-team = \"blue\" }\n",
    );
    let out = run(dir.path(), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("the MCP server \"calc\": cannot reach http://127.0.0.1:"), "{err}");
    assert!(err.contains("401 Unauthorized (check the entry's bearer_token and headers)"), "{err}");
    assert!(!err.contains("wrong-token"), "{err}");

    // A built-in task, the server given on the command line, and a scripted model in
    // both tool modes.
    let mut open = HttpServer::start(&binary, &log, &[]);
    let model = FakeServer::start(|_, seen| scripted(seen));
    let flag = format!("calc={}", open.url);
    let mut records = Vec::new();
    for mode in ["text", "native"] {
        let record = dir.path().join(format!("math-demo-{mode}.jsonl"));
        let args = ["run", "--task", "math-demo", "--method", "react", "--tool-mode", mode, "--range", "0..1"];
        let more = ["--mcp-url", &flag, "--json", "--record", record.to_str().unwrap()];
        let out = support::scripted::model(sandboxed(dir.path()).args(args).args(more), &model).output().unwrap();
        let s = summary(&out);
        let session = std::fs::read_to_string(&record).unwrap();
        assert!(session.contains(r#""result":{"text":"5","ok":true"#), "{mode}: add answered 5");
        let header: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
        assert_eq!(header["task_def"]["mcp"]["servers"][0]["url"], open.url.as_str(), "{header}");
        records.push((record, picked(&s)));
    }
    let native = model.seen().iter().filter_map(|r| r.body["tools"].as_array().cloned()).count();
    assert!(native >= 2, "native mode offered the server's tools as definitions");
    // The servers are gone: every session replays from its recorded observations.
    guarded.stop();
    open.stop();
    for record in ["text", "native"] {
        let out = sandboxed(dir.path()).args(["replay", record, "--headless", "--json"]).output().unwrap();
        assert_eq!(summary(&out)["solved"], 3, "{record}");
    }
    for (record, picked_run) in records {
        let out =
            sandboxed(dir.path()).args(["replay", record.to_str().unwrap(), "--headless", "--json"]).output().unwrap();
        assert_eq!(picked(&summary(&out)), picked_run, "{}", record.display());
    }
}

#[test]
fn an_unreachable_or_bad_url_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // A port nothing listens on: taken, then given back.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let runs: [(Vec<String>, &str); 3] = [
        (vec!["--mcp-url".into(), format!("calc={url}")], "the MCP server \"calc\": cannot reach http://127.0.0.1:"),
        (vec!["--mcp-url".into(), "calc=ftp://x/mcp".into()], "--mcp-url calc=ftp://x/mcp: url \"ftp://x/mcp\" is not"),
        (vec!["--mcp-url".into(), "just-words".into()], "--mcp-url just-words: needs a name"),
    ];
    for (flags, said) in runs {
        let args = ["run", "--task", "./sums", "--method", "react", "--range", "0..1", "--sim-noise", "0"];
        let out = sandboxed(dir.path()).args(args).args(&flags).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{flags:?}");
        assert_eq!(err.trim().lines().count(), 1, "{flags:?}: {err}");
        assert!(err.contains(said), "{flags:?}: {err}");
    }
    // A config entry that is both kinds of server is warned about and skipped.
    http_config(dir.path(), &url, "command = \"test-mcp-server\"\n");
    let out = run(dir.path(), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mcp entry 1: has both a command and a url; give one; entry skipped"), "{err}");
}

/// A streamable-HTTP server that redirects (301, 302, 303, 307, 308) to another origin: the
/// redirect is not followed, so the other origin never sees the entry's headers or token,
/// and the run stops with one line saying why. A same-origin 302 (which would turn the POST
/// into a GET) is not followed either.
#[test]
fn redirects_to_another_origin_are_not_followed_and_the_headers_stay_home() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let elsewhere = FakeServer::start(|_, _| Reply::json(200, "{}"));
    let target = format!("{}/mcp", elsewhere.url);
    for status in [301u16, 302, 303, 307, 308] {
        let to = target.clone();
        let redirecting = FakeServer::start(move |_, _| Reply::Json {
            status,
            headers: vec![("location".into(), to.clone())],
            body: String::new(),
        });
        let url = format!("{}/mcp", redirecting.url);
        http_config(
            dir.path(),
            &url,
            "bearer_token = \"tok-abcdefghij0123456789\"\nheaders = { X-Api-Key = \"key-abcdefghij0123456789\" }\n",
        );
        let out = run(dir.path(), &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{status}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{status}: {err}");
        assert!(err.contains(&format!("it redirects to {target}, another origin")), "{status}: {err}");
        assert!(err.contains("MCP requests are not sent to another origin"), "{status}: {err}");
        assert!(redirecting.requests() >= 1, "{status}: the server was asked");
        let seen = redirecting.seen();
        assert_eq!(seen[0].header("x-api-key"), Some("key-abcdefghij0123456789"), "the entry's header went home");
    }
    assert_eq!(elsewhere.requests(), 0, "the other origin saw no request: {:?}", elsewhere.seen());
    // The same origin, but a redirect that would drop the body: not followed either.
    let same = FakeServer::start(|_, seen| {
        let to = if seen.path.ends_with("/moved") { "/mcp" } else { "/moved" };
        Reply::Json { status: 302, headers: vec![("location".into(), to.into())], body: String::new() }
    });
    http_config(dir.path(), &format!("{}/mcp", same.url), "");
    let out = run(dir.path(), &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only 307 and 308 are followed"), "{err}");
    assert_eq!(same.requests(), 1, "not followed");
}

/// The task of `setup` with problem 0's steps replaced by `steps` (TOML literal strings).
fn with_steps(dir: &Path, steps: &str) {
    let task = TASK.replace(r#"steps = ['add[{"a": 2, "b": 3}]'] },"#, &format!("steps = [{steps}] }},"));
    assert_ne!(task, TASK);
    std::fs::write(dir.join("sums/task.toml"), task).unwrap();
}

fn set_timeout(dir: &Path, secs: u64) {
    let config = std::fs::read_to_string(dir.join("config/config.toml")).unwrap();
    std::fs::write(
        dir.join("config/config.toml"),
        config.replace("timeout_secs = 1", &format!("timeout_secs = {secs}")),
    )
    .unwrap();
}

/// A stdio server's answer over the size limit (16 MiB) fails its call at once, naming
/// the limit, instead of waiting out the call's time limit; the run goes on.
#[test]
fn an_answer_over_the_size_limit_is_named_at_once() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    set_timeout(dir.path(), 120);
    with_steps(dir.path(), r#"'big[{"bytes": 17000000}]', 'add[{"a": 2, "b": 3}]'"#);
    let started = std::time::Instant::now();
    let out = run_range(dir.path(), "0..1", &["--record", "big.jsonl"]);
    let took = started.elapsed();
    assert_eq!(summary(&out)["solved"], 1, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < std::time::Duration::from_secs(60), "not the call's time limit: {took:?}");
    let session = std::fs::read_to_string(dir.path().join("big.jsonl")).unwrap();
    assert!(
        session.contains("the MCP server calc's answer to big exceeded the limit of 16 MiB for one message"),
        "named at once"
    );
    assert!(!session.contains("did not answer big"), "not reported as a hang");
}

/// A tool whose name has a hyphen (as every tool of the reference "everything" server but
/// `echo`) is called as a text action.
#[test]
fn a_tool_named_with_a_hyphen_is_called_as_a_text_action() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    with_steps(dir.path(), r#"'get-sum[{"a": 2, "b": 3}]'"#);
    let out = run_range(dir.path(), "0..1", &["--record", "hyphen.jsonl"]);
    assert_eq!(summary(&out)["solved"], 1, "{}", String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
    assert!(log.contains("get-sum 2 3"), "the server was called: {log}");
    let session = std::fs::read_to_string(dir.path().join("hyphen.jsonl")).unwrap();
    assert!(session.contains(r#""result":{"text":"5","ok":true"#), "get-sum answered 5");
}

/// kill -9 of a run busy in a call: the server (one that stays when its stdin closes)
/// ends with it, through its parent-death signal.
#[cfg(target_os = "linux")]
#[test]
fn the_server_process_ends_when_the_run_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let config = std::fs::read_to_string(dir.path().join("config/config.toml")).unwrap();
    let config = config.replace("timeout_secs = 1", "timeout_secs = 60\nargs = [\"--stay\"]");
    std::fs::write(dir.path().join("config/config.toml"), config).unwrap();
    with_steps(dir.path(), r#"'slow[{"ms": 30000}]'"#);
    let log = dir.path().join("calls.log");
    let mut child = sandboxed(dir.path())
        .args(["run", "--task", "./sums", "--method", "react", "--range", "0..1", "--mcp", "calc", "--sim-noise", "0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while !std::fs::read_to_string(&log).unwrap_or_default().contains("slow 30000") {
        assert!(waited < 1200, "the slow call never came");
        std::thread::sleep(std::time::Duration::from_millis(50));
        waited += 1;
    }
    let pid = *server_pids(&log).last().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!still_there(pid), "the server {pid} outlived the killed run");
}

/// A large result under the limit is written once in the session, not copied into every
/// later prompt the session records; the session still loads with every prompt whole and
/// replays exactly.
#[test]
fn a_large_result_is_stored_once_per_session() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    set_timeout(dir.path(), 60);
    with_steps(dir.path(), r#"'big[{"bytes": 4000000}]', 'add[{"a": 1, "b": 1}]', 'add[{"a": 2, "b": 3}]'"#);
    let out = run_range(dir.path(), "0..1", &["--record", "large.jsonl"]);
    assert_eq!(summary(&out)["solved"], 1, "{}", String::from_utf8_lossy(&out.stderr));
    let path = dir.path().join("large.jsonl");
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 6_000_000, "the 4 MB result is written once, not in each of the 3 later prompts: {size} bytes");
    let session = thoughtscope::session::Session::load(&path).unwrap();
    let whole = session
        .records
        .iter()
        .filter_map(|r| match r {
            thoughtscope::session::Record::Input { request: Some(request), .. } => Some(request),
            _ => None,
        })
        .filter(|request| request.messages.iter().any(|m| m.content.contains(&"x".repeat(4_000_000))))
        .count();
    assert!(whole >= 3, "the loaded prompts hold the result whole: {whole}");
    let out =
        sandboxed(dir.path()).args(["replay", "large.jsonl", "--headless", "--json", "--strict"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("replayed exactly"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn task_check_starts_the_servers_a_task_file_names() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    // The file names calc in [tools] mcp: task check starts it from the config, as --mcp calc would.
    for extra in [&[][..], &["--mcp", "calc"]] {
        let out = sandboxed(dir.path()).args(["task", "check", "./sums"]).args(extra).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{extra:?}: {stderr}");
        assert!(stdout.contains("task sums is good") && stdout.contains("react"), "{extra:?}: {stdout}");
    }
    // One the config does not have is one line saying so.
    std::fs::write(dir.path().join("config/config.toml"), "").unwrap();
    let out = sandboxed(dir.path()).args(["task", "check", "./sums"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("names an MCP server to start") && stderr.contains("calc"), "{stderr}");
}
