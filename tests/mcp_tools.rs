//! Tools from an MCP server (the test server in tests/mcp/server.rs) offered to a task
//! file's ReAct: started with only its configured environment, called in text and native
//! modes, failures as observations, recorded so a replay needs no server.

mod support;

use std::path::{Path, PathBuf};

use support::{sandboxed, summary};

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
    let args = ["run", "--task", "./sums", "--method", "react", "--range", "0..3", "--mcp", "calc", "--json"];
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
    let session = std::fs::read_to_string(dir.path().join("text/sums-0002.jsonl")).unwrap();
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
    assert!(err.contains("the MCP server calc: cannot start"), "{err}");
}

#[test]
fn mcp_flags_that_cannot_work_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path());
    let out = sandboxed(dir.path())
        .args(["run", "--task", "qa-demo", "--method", "react", "--range", "0", "--mcp", "calc"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--mcp adds an MCP server's tools to a task file's ReAct; qa-demo offers its own tools"),
        "{err}"
    );
    let out =
        sandboxed(dir.path()).args(["run", "--task", "./sums", "--method", "react", "--mcp", "nope"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--mcp nope: no [[mcp]] entry of that name in the config file (entries: calc)"), "{err}");
    let out = sandboxed(dir.path()).args(["run", "--task", "./sums", "--method", "react"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[tools] mcp names the server calc: start it with --mcp calc"), "{err}");
}
