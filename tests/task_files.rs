//! Tasks written as files (`assets/tasks/`): written and checked with `task new` and
//! `task check`, run with `sim` and against a scripted local server, and replayed with
//! the task file gone.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{last_json, sandboxed, summary, FakeServer, Reply};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tasks").join(name)
}

/// A copy of example `name` in `dir` (so a test can delete it).
fn copy_example(name: &str, dir: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let path = e.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let to = dir.join(name);
    copy(&example(name), &to);
    to
}

fn problems(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(example(name).join("problems.jsonl")).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn a_new_task_checks_and_a_bad_one_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let out = sandboxed(dir.path()).args(["task", "new", "my-task"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = sandboxed(dir.path()).args(["task", "check", "my-task"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("task my-task is good: 3 problems"), "{text}");
    assert!(text.contains("methods that work: io, cot, cot-sc"), "{text}");
    assert!(
        text.contains("--- cot prompt ---") && text.contains("Problem: Ana has 3 bags"),
        "the rendered prompt: {text}"
    );
    // A typo in a template: one line naming file, line and key, exit 2, no backtrace.
    let toml = dir.path().join("my-task/task.toml");
    let written = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, written.replace("{{ input }}\"\"\"", "{{ inptu }}\"\"\"")).unwrap();
    let out = sandboxed(dir.path()).args(["task", "check", "my-task"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("my-task/task.toml:") && err.contains(": prompts.io: the template uses {{ inptu }}"), "{err}");
    // Run by its name from the config directory's tasks/.
    let tasks = dir.path().join("config/tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::rename(dir.path().join("my-task"), tasks.join("my-task")).unwrap();
    std::fs::write(tasks.join("my-task/task.toml"), written).unwrap();
    let out = sandboxed(dir.path())
        .args(["run", "--task", "my-task", "--method", "cot", "--range", "0..3", "--json"])
        .output()
        .unwrap();
    let s = summary(&out);
    assert_eq!((s["task"].as_str(), s["n"].as_u64()), (Some("my-task"), Some(3)), "{s}");
}

/// Run with sim and record; delete the task file; replay the sessions to the same figures.
fn sim_run_then_replay_without_the_file(name: &str, method: &str, keys: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let folder = copy_example(name, dir.path());
    let args = [
        "run",
        "--task",
        folder.to_str().unwrap(),
        "--method",
        method,
        "--range",
        "0..12",
        "--json",
        "--record",
        "sessions",
    ];
    let out = sandboxed(dir.path()).args(args).output().unwrap();
    let s = summary(&out);
    assert_eq!((s["task"].as_str(), s["n"].as_u64()), (Some(name), Some(12)), "{s}");
    std::fs::remove_dir_all(&folder).unwrap();
    let out = sandboxed(dir.path()).args(["replay", "sessions", "--headless", "--json"]).output().unwrap();
    let replayed = summary(&out);
    for key in keys {
        assert_eq!(replayed[key], s[key], "{name} {method}: {key} after replay without the task file");
    }
    s
}

#[test]
fn sim_runs_each_example_and_the_sessions_replay_without_the_file() {
    let keys = ["n", "solved", "llm_calls", "prompt_tokens", "completion_tokens"];
    let s = sim_run_then_replay_without_the_file("word-problems", "cot-sc", &keys);
    let solved = s["solved"].as_u64().unwrap();
    assert!((6..=12).contains(&solved), "cot-sc solves most: {s}");
    let s = sim_run_then_replay_without_the_file("stepwise", "tot-bfs", &keys);
    assert!(s["solved"].as_u64().unwrap() >= 6, "{s}");
    let s = sim_run_then_replay_without_the_file("town-facts", "react", &["n", "em", "f1", "tool_calls", "llm_calls"]);
    assert!(s["tool_calls"].as_u64().unwrap() >= 24, "{s}");
    assert!(s["em"].as_f64().unwrap() > 0.5, "{s}");
}

#[test]
fn sim_refuses_what_it_cannot_play_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = example("town-facts");
    let out = sandboxed(dir.path())
        .args(["run", "--task", path.to_str().unwrap(), "--method", "retreval", "--range", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.starts_with("error: sim cannot play town-facts with retreval: the method makes"), "{err}");
    let path = example("word-problems");
    let out = sandboxed(dir.path())
        .args(["run", "--task", path.to_str().unwrap(), "--method", "react", "--range", "0"])
        .output()
        .unwrap();
    assert!(stderr(&out).contains("word-problems has no ReAct steps with tools"), "{}", stderr(&out));
}

/// The scripted model: it finds the problem in the prompt and answers what the prompt
/// asks, from the example's own correct steps and gold answers.
fn scripted(seen: &support::Seen) -> Reply {
    let prompt = seen.prompt();
    let find =
        |name: &str, field: &str| problems(name).into_iter().find(|p| prompt.contains(p[field].as_str().unwrap()));
    let text = if let Some(p) = find("town-facts", "question") {
        let step = support::react_step(&prompt);
        let steps: Vec<&str> = p["steps"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        let action = steps
            .get(step.max(1) - 1)
            .map_or_else(|| format!("Finish[{}]", p["answer"].as_str().unwrap()), |s| s.to_string());
        format!("Thought {step}: I look it up.\nAction {step}: {action}")
    } else if let Some(p) = find("stepwise", "input") {
        let steps: Vec<&str> = p["steps"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        let done: Vec<&str> = steps.iter().copied().filter(|s| prompt.contains(&format!("\n{s}\n"))).collect();
        if prompt.contains("Judgement:") {
            let wrong = prompt.contains("= 49\n");
            (if wrong { "impossible" } else { "sure" }).to_string()
        } else if prompt.contains("Possible next steps:") {
            let next = steps.get(done.len()).copied().unwrap_or("Answer: 0");
            format!("{next}\n{}", next.replace("= 48", "= 49"))
        } else {
            format!("{}\nAnswer: {}", steps[..2].join("\n"), p["answer"].as_str().unwrap())
        }
    } else if let Some(p) = find("word-problems", "question") {
        let steps: Vec<&str> = p["steps"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
        format!("{}\n\\boxed{{{}}}", steps.join("\n"), p["answer"].as_str().unwrap())
    } else {
        format!("I cannot tell what this asks: {prompt}")
    };
    Reply::chat(&[&text], Some((50, 10)))
}

#[test]
fn each_example_runs_against_a_scripted_local_server() {
    let server = FakeServer::start(|_, seen| scripted(seen));
    let dir = tempfile::tempdir().unwrap();
    for (name, method, expect) in [
        ("word-problems", "cot-sc", 12),
        ("word-problems", "io", 12),
        ("stepwise", "tot-bfs", 12),
        ("stepwise", "mcts", 12),
        ("town-facts", "react", 12),
        ("town-facts", "react-cot-sc", 12),
    ] {
        let path = example(name);
        let args = [
            "run",
            "--task",
            path.to_str().unwrap(),
            "--method",
            method,
            "--range",
            "0..12",
            "--json",
            "--provider",
            "openai",
            "--base-url",
            server.url.as_str(),
            "--model",
            "scripted",
            "--record",
            name,
        ];
        let out = sandboxed(dir.path()).args(args).env("OPENAI_API_KEY", "sk-test").output().unwrap();
        let s = summary(&out);
        assert_eq!(s["solved"].as_u64(), Some(expect), "{name} {method}: {s}\n{}", stderr(&out));
        assert_eq!(s["simulated"], false);
    }
    // The chat layout reached the server: a system turn, then the problem.
    let seen = server.seen();
    let first = &seen.iter().find(|s| s.prompt().contains("word problems")).unwrap().body["messages"];
    assert_eq!(first[0]["role"], "system", "{first}");
    // A reply in the wrong format is read as no answer, and said so in the summary.
    let garbled = FakeServer::start(|_, _| Reply::chat(&["no idea at all"], None));
    let path = example("word-problems");
    let args = [
        "run",
        "--task",
        path.to_str().unwrap(),
        "--method",
        "cot",
        "--range",
        "0..2",
        "--json",
        "--provider",
        "openai",
        "--base-url",
        garbled.url.as_str(),
        "--model",
        "m",
    ];
    let out = sandboxed(dir.path()).args(args).env("OPENAI_API_KEY", "sk-test").output().unwrap();
    assert_eq!(last_json(&out)["solved"], 0, "{}", stderr(&out));
}
