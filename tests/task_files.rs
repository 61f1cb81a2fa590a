//! Tasks written as files (`assets/tasks/`): written and checked with `task new` and
//! `task check`, run with `sim` and against a scripted local server, and replayed with
//! the task file gone.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{last_json, sandboxed, summary, FakeServer, Reply};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tasks").join(name)
}

/// A copy of example `name` in `dir` (so a test can delete it); `judged-words` is a
/// copy of word-problems (see [`judged`]).
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
    copy(&example(if name == "judged-words" { "word-problems" } else { name }), &to);
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
    std::fs::write(&toml, written.replace("{{ input }}'''", "{{ inptu }}'''")).unwrap();
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
fn sim_run_then_replay_without_the_file(name: &str, method: &str, extra: &[&str], keys: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let folder = copy_example(name, dir.path());
    judged(&folder);
    let mut args = vec![
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
    args.extend(extra);
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
    let s = sim_run_then_replay_without_the_file("word-problems", "cot-sc", &[], &keys);
    let solved = s["solved"].as_u64().unwrap();
    assert!((6..=12).contains(&solved), "cot-sc solves most: {s}");
    let s = sim_run_then_replay_without_the_file("stepwise", "tot-bfs", &[], &keys);
    assert!(s["solved"].as_u64().unwrap() >= 6, "{s}");
    let qa = ["n", "em", "f1", "tool_calls", "llm_calls"];
    for extra in [&[][..], &["--tool-mode", "native"][..]] {
        let s = sim_run_then_replay_without_the_file("town-facts", "react", extra, &qa);
        assert!(s["tool_calls"].as_u64().unwrap() >= 24, "{extra:?}: {s}");
        assert!(s["em"].as_f64().unwrap() > 0.5, "{extra:?}: {s}");
    }
    // A judged check: the judge's calls are recorded (2 calls a problem with cot), and
    // its verdicts come back on replay without the file.
    let s = sim_run_then_replay_without_the_file("judged-words", "cot", &["--samples", "1"], &keys);
    assert_eq!(s["llm_calls"].as_u64(), Some(24), "{s}");
    assert!((6..=12).contains(&s["solved"].as_u64().unwrap()), "{s}");
}

/// `folder`, if it is named judged-words, made a copy of word-problems checked by a judge.
fn judged(folder: &Path) {
    if folder.file_name().is_some_and(|n| n == "judged-words") {
        let toml = folder.join("task.toml");
        let text =
            std::fs::read_to_string(&toml).unwrap().replace("name = \"word-problems\"", "name = \"judged-words\"");
        let text = text.replace(
            "kind = \"math\"",
            "kind = \"judge\"\nrubric = \"The answer is the same amount as the reference answer.\"",
        );
        std::fs::write(toml, text).unwrap();
    }
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
    if let Some(text) = support::scripted::retreval_phase(&prompt) {
        return Reply::chat(&[&text], Some((50, 10)));
    }
    if seen.body["tools"].as_array().is_some_and(|t| !t.is_empty()) {
        let p = find("town-facts", "question").expect("only town-facts has tools");
        return native_step(seen, &p);
    }
    let text = if let Some(p) = find("word-problems", "question").filter(|_| prompt.contains("The answer to grade:")) {
        // The judge of judged-words: right when the answer is the reference.
        let graded = prompt.split("The answer to grade:").nth(1).unwrap_or("").lines().next().unwrap_or("").trim();
        let verdict = if graded == p["answer"].as_str().unwrap() { "correct" } else { "incorrect" };
        format!("Compared with the reference.\nVERDICT: {verdict}")
    } else if let Some(p) = find("town-facts", "question") {
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

/// A native tool call: the problem's next correct action, named as the offered tool's
/// schema says.
fn native_step(seen: &support::Seen, p: &Value) -> Reply {
    let step = support::scripted::native_step(&seen.prompt());
    let steps: Vec<&str> = p["steps"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let action =
        steps.get(step - 1).map_or_else(|| format!("Finish[{}]", p["answer"].as_str().unwrap()), |s| s.to_string());
    let (name, arg) = action.trim_end_matches(']').split_once('[').unwrap();
    let name = name.to_lowercase();
    let tool = seen.body["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == name.as_str()).unwrap();
    let param = tool["function"]["parameters"]["properties"].as_object().unwrap().keys().next().unwrap().clone();
    let arguments = serde_json::json!({ param: arg });
    support::scripted::tool_call(step, &name, &arguments, &format!("I take the next step: {action}."))
}

#[test]
fn each_example_runs_against_a_scripted_local_server() {
    let server = FakeServer::start(|_, seen| scripted(seen));
    let dir = tempfile::tempdir().unwrap();
    judged(&copy_example("judged-words", dir.path()));
    for (name, method, extra) in [
        ("word-problems", "cot-sc", &[][..]),
        ("word-problems", "io", &[]),
        ("stepwise", "tot-bfs", &[]),
        ("stepwise", "mcts", &[]),
        ("town-facts", "react", &[]),
        ("town-facts", "react", &["--tool-mode", "native"]),
        ("town-facts", "react-cot-sc", &[]),
        ("word-problems", "retreval", &["--no-tools", "--no-memory"]),
        ("town-facts", "retreval", &["--no-memory"]),
        ("stepwise", "retreval", &["--no-tools", "--no-memory"]),
        ("judged-words", "cot-sc", &[]),
    ] {
        let path = if name == "judged-words" { dir.path().join(name) } else { example(name) };
        let mut args = vec![
            "run",
            "--task",
            path.to_str().unwrap(),
            "--method",
            method,
            "--range",
            "0..12",
            "--json",
            "--record",
            name,
        ];
        args.extend(extra);
        let out = support::scripted::model(sandboxed(dir.path()).args(args), &server).output().unwrap();
        let s = summary(&out);
        assert_eq!(s["solved"].as_u64(), Some(12), "{name} {method} {extra:?}: {s}\n{}", stderr(&out));
        assert_eq!(s["simulated"], false);
    }
    // The judge's calls reached the server with the rubric.
    let seen = server.seen();
    let judged = seen.iter().filter(|s| s.prompt().contains("Rubric: The answer is the same amount")).count();
    assert_eq!(judged, 12, "one judge call a distinct answer (cot-sc's samples agree)");
    // ReTreVal ran its phases on the task files: a complexity estimate and a validation a problem.
    for phase in ["Estimate how complex", "Check the attempt step by step"] {
        let n = seen.iter().filter(|s| s.prompt().contains(phase)).count();
        assert!(n >= 36, "{phase}: {n} calls for three ReTreVal runs of 12 problems");
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

#[test]
fn a_built_in_task_is_shown_as_a_task_file_that_sends_its_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let mut shown = Vec::new();
    for entry in thoughtscope::tasks::REGISTRY {
        let name = &*entry.info.name;
        let out = sandboxed(dir.path()).args(["task", "show", name]).output().unwrap();
        if !out.status.success() {
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
            assert!(err.starts_with(&format!("error: {name} cannot be written as a task file: ")), "{err}");
            continue;
        }
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, &out.stdout).unwrap();
        let check = sandboxed(dir.path()).args(["task", "check", path.to_str().unwrap()]).output().unwrap();
        assert!(check.status.success(), "{name}: the shown file checks: {}", stderr(&check));
        shown.push(name.to_string());
    }
    assert!(shown.contains(&"math-demo".to_string()), "{shown:?}");
    // Tasks that read their problems are shown from their data.
    for (name, data) in [("math500", "math500-sample.jsonl"), ("hotpotqa", "hotpot-sample.json")] {
        let data = support::fixture(data);
        let out =
            sandboxed(dir.path()).args(["task", "show", name, "--data", data.to_str().unwrap()]).output().unwrap();
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let path = dir.path().join(format!("{name}-data.toml"));
        std::fs::write(&path, &out.stdout).unwrap();
        let check = sandboxed(dir.path()).args(["task", "check", path.to_str().unwrap()]).output().unwrap();
        assert!(check.status.success(), "{name}: {}", stderr(&check));
    }
    let text = std::fs::read_to_string(dir.path().join("math-demo.toml")).unwrap();
    let agree = text.lines().find(|l| l.contains("sample replies")).unwrap();
    let figures: Vec<&str> = agree.split_whitespace().filter(|w| w.parse::<u32>().is_ok()).collect();
    assert!(figures.len() == 2 && figures[0] == figures[1], "math-demo's check is written whole: {agree}");
    assert!(!text.contains("# Not written: a reading"), "{text}");
    // The built-in task and its file send the same prompts and grade alike.
    let server = FakeServer::start(|_, _| Reply::chat(&["Step.\nThe final answer is $\\boxed{2}$."], Some((50, 10))));
    let mut figures = Vec::new();
    for task in ["math-demo", dir.path().join("math-demo.toml").to_str().unwrap()] {
        let args = ["run", "--task", task, "--method", "cot", "--samples", "1", "--range", "0..6", "--json"];
        let out = sandboxed(dir.path())
            .args(args)
            .args(["--provider", "openai", "--base-url", server.url.as_str(), "--model", "m"])
            .env("OPENAI_API_KEY", "sk-test")
            .output()
            .unwrap();
        let s = summary(&out);
        figures.push((s["solved"].clone(), s["n"].clone()));
    }
    assert_eq!(figures[0], figures[1], "the same verdicts");
    assert_eq!(figures[0].0, 1, "problem 1's answer is 2");
    let bodies: Vec<String> = server.seen().into_iter().map(|s| s.body["messages"].to_string()).collect();
    assert_eq!(bodies.len(), 12);
    let (mut own, mut file) = (bodies[..6].to_vec(), bodies[6..].to_vec());
    own.sort();
    file.sort();
    assert_eq!(own, file, "the same messages (problems run in parallel, so in any order)");
}

/// A method ruled out only by a parameter given (react with --tool-mode native on a task
/// without a native prompt) is still named among what works, with the setting in the way.
#[test]
fn a_refusal_names_the_methods_a_setting_rules_out() {
    let dir = tempfile::tempdir().unwrap();
    let folder = copy_example("town-facts", dir.path());
    let toml = std::fs::read_to_string(folder.join("task.toml")).unwrap();
    let without: String = toml.lines().filter(|l| !l.starts_with("react_native")).collect::<Vec<_>>().join("\n");
    std::fs::write(folder.join("task.toml"), without).unwrap();
    let out = sandboxed(dir.path())
        .args(["run", "--task", folder.to_str().unwrap(), "--method", "react", "--tool-mode", "native", "--range", "0"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(err.contains("no native tool-calling prompt"), "{err}");
    let (_, also) = err.split_once("; and ").unwrap_or_else(|| panic!("the methods a setting rules out: {err}"));
    assert!(also.contains("react") && also.contains("retreval"), "{err}");
    assert!(also.trim_end().ends_with("without --tool-mode native"), "{err}");
    // With the setting dropped, react runs.
    let out = sandboxed(dir.path())
        .args(["run", "--task", folder.to_str().unwrap(), "--method", "react", "--range", "0", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}
