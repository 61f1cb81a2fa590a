//! Native tool mode against fake servers of each API kind: a ReAct episode on qa-demo
//! question 0 whose first reply makes two tool calls (the first runs, the second is
//! answered "not run: one call per step"), then one call a step to `finish`. The second
//! request must carry the assistant turn with its calls (ids as the server gave them)
//! and the results as the API's own tool messages tied to those ids, with no stop
//! sequence; the few-shot examples are tool calls too.

use crate::support;

use serde_json::{json, Value};
use support::{FakeServer, Reply, Seen};

const THOUGHT_1: &str = "I need to find where Ilse Varga was born.";
const NOT_RUN: &str = "not run: one call per step";

/// Which step a request asks for: one more than the last of the server's call ids it sends back.
fn step_of(seen: &Seen) -> usize {
    let body = seen.body.to_string();
    if body.contains("\"srv_2\"") {
        3
    } else if body.contains("\"srv_1\"") {
        2
    } else {
        1
    }
}

/// The episode's calls for `step`: (thought, [(id, tool, arguments)]).
fn plan(step: usize) -> (&'static str, Vec<(&'static str, &'static str, Value)>) {
    match step {
        1 => (
            THOUGHT_1,
            vec![
                ("srv_1", "search", json!({"entity": "Ilse Varga"})),
                ("srv_1b", "lookup", json!({"keyword": "born"})),
            ],
        ),
        2 => ("She was born in Marrowick; now its river.", vec![("srv_2", "search", json!({"entity": "Marrowick"}))]),
        _ => ("Marrowick lies on the Tessel River.", vec![("srv_3", "finish", json!({"answer": "Tessel River"}))]),
    }
}

fn openai(seen: &Seen) -> Reply {
    let (text, calls) = plan(step_of(seen));
    let calls: Vec<Value> = calls
        .into_iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    let body = json!({
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "tool_calls": calls}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 30},
    });
    Reply::json(200, body.to_string())
}

fn anthropic(seen: &Seen) -> Reply {
    let (text, calls) = plan(step_of(seen));
    let mut content = vec![json!({"type": "text", "text": text})];
    content.extend(
        calls.into_iter().map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input})),
    );
    let body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": content,
        "stop_reason": "tool_use", "usage": {"input_tokens": 300, "output_tokens": 30},
    });
    Reply::json(200, body.to_string())
}

fn responses(seen: &Seen) -> Reply {
    let (text, calls) = plan(step_of(seen));
    let mut output = vec![
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}),
    ];
    output.extend(calls.into_iter().map(|(id, name, args)| {
        json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": name, "arguments": args.to_string()})
    }));
    let body = json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-x", "output": output,
        "usage": {"input_tokens": 300, "output_tokens": 30},
    });
    Reply::json(200, body.to_string())
}

/// Run the episode against `server` as `provider`; the summary and the requests of the
/// episode's steps (discovery requests left out).
fn run_episode(server: &FakeServer, provider: &str, dir: &std::path::Path) -> (Value, Vec<Seen>) {
    let record = dir.join("native.jsonl");
    let out = support::isolated(dir, Some("sk-test-0123456789"))
        .args(["run", "--task", "qa-demo", "--method", "react", "--tool-mode", "native", "--range", "0"])
        .args(["--provider", provider, "--model", "fake-model", "--base-url", &server.url])
        .args(["--retries", "0", "--json", "--record", record.to_str().unwrap()])
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env_remove("ANTHROPIC_BASE_URL")
        .output()
        .unwrap();
    let s = support::summary(&out);
    assert_eq!((s["solved"].as_u64(), s["bad_calls"].as_u64()), (Some(1), Some(0)), "{s}");
    let seen: Vec<Seen> = server.seen().into_iter().filter(|r| !support::is_discovery(r)).collect();
    assert_eq!(seen.len(), 3, "three steps, three requests");
    for r in &seen {
        assert!(
            r.body.get("stop").is_none() && r.body.get("stop_sequences").is_none(),
            "no stop with tools: {}",
            r.body
        );
        assert!(r.body["tools"].as_array().is_some_and(|t| !t.is_empty()));
        assert!(!r.body.to_string().contains("Action 1: Search["), "no action written as text: {}", r.body);
    }
    // The session keeps the reply's two calls, and its replay shows the second not run.
    let session = thoughtscope::session::Session::load(&record).unwrap();
    let replayed = thoughtscope::session::replay::rebuild(&session, None, None).unwrap();
    assert!(replayed.fidelity.is_exact(), "{}", replayed.fidelity);
    let step1 = replayed.engine.tree().nodes().find(|n| n.thought.contains("Action 1: Search[Ilse Varga]")).unwrap();
    let note = step1.issues.iter().map(|i| i.to_string()).find(|n| n.contains("2 tool calls")).expect("a note");
    assert!(note.contains(NOT_RUN) && note.contains("lookup"), "{note}");
    (s, seen)
}

#[test]
fn openai_native_steps_send_tool_calls_and_tool_messages() {
    let server = FakeServer::start(|_, seen| openai(seen));
    let dir = tempfile::tempdir().unwrap();
    let (_, seen) = run_episode(&server, "openai", dir.path());
    let messages = seen[1].body["messages"].as_array().unwrap().clone();
    let at = messages
        .iter()
        .position(|m| m["tool_calls"][0]["id"] == "srv_1")
        .unwrap_or_else(|| panic!("the step's assistant turn: {messages:?}"));
    let said = &messages[at];
    assert_eq!(said["role"], "assistant");
    assert_eq!(said["content"], THOUGHT_1);
    let calls = said["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (&calls[0]["id"], &calls[0]["type"], &calls[0]["function"]["name"]),
        (&json!("srv_1"), &json!("function"), &json!("search"))
    );
    let arguments: Value = serde_json::from_str(calls[0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"entity": "Ilse Varga"}));
    assert_eq!(calls[1]["id"], "srv_1b");
    let (result, not_run, ask) = (&messages[at + 1], &messages[at + 2], &messages[at + 3]);
    assert_eq!((&result["role"], &result["tool_call_id"]), (&json!("tool"), &json!("srv_1")));
    assert!(result["content"].as_str().unwrap().contains("Marrowick"), "{result}");
    assert_eq!(not_run, &json!({"role": "tool", "tool_call_id": "srv_1b", "content": NOT_RUN}));
    assert_eq!(ask["role"], "user");
    assert!(ask["content"].as_str().unwrap().starts_with("Now step 2"), "{ask}");
    assert_eq!(messages.len(), at + 4, "the ask is the last turn");
    // The few-shot example is tool calls and tool messages too.
    let example = messages.iter().find(|m| m["tool_calls"][0]["id"] == "example_1").expect("the example's first call");
    assert_eq!(example["tool_calls"][0]["function"]["name"], "search");
    assert!(messages.iter().any(|m| m["role"] == "tool" && m["tool_call_id"] == "example_1"));
    // The third request has both steps' calls, each answered once.
    let third = seen[2].body["messages"].as_array().unwrap();
    for id in ["srv_1", "srv_1b", "srv_2"] {
        assert_eq!(third.iter().filter(|m| m["tool_call_id"] == id).count(), 1, "{id}");
    }
}

#[test]
fn anthropic_native_steps_send_tool_use_and_tool_result_blocks() {
    let server = FakeServer::start(|_, seen| anthropic(seen));
    let dir = tempfile::tempdir().unwrap();
    let (_, seen) = run_episode(&server, "anthropic", dir.path());
    let messages = seen[1].body["messages"].as_array().unwrap().clone();
    // Turns alternate, user first, as the Messages API wants.
    assert_eq!(messages[0]["role"], "user");
    for pair in messages.windows(2) {
        assert_ne!(pair[0]["role"], pair[1]["role"], "{messages:?}");
    }
    let at = messages
        .iter()
        .position(|m| m["content"].as_array().is_some_and(|b| b.iter().any(|b| b["id"] == "srv_1")))
        .expect("the step's assistant turn");
    assert_eq!(
        messages[at],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": THOUGHT_1},
            {"type": "tool_use", "id": "srv_1", "name": "search", "input": {"entity": "Ilse Varga"}},
            {"type": "tool_use", "id": "srv_1b", "name": "lookup", "input": {"keyword": "born"}},
        ]})
    );
    // Both results in one user message, then the ask as a text block.
    let next = &messages[at + 1];
    assert_eq!(next["role"], "user");
    let blocks = next["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 3, "{next}");
    assert_eq!((&blocks[0]["type"], &blocks[0]["tool_use_id"]), (&json!("tool_result"), &json!("srv_1")));
    assert!(blocks[0]["content"].as_str().unwrap().contains("Marrowick"), "{next}");
    assert_eq!(blocks[1], json!({"type": "tool_result", "tool_use_id": "srv_1b", "content": NOT_RUN}));
    assert_eq!(blocks[2]["type"], "text");
    assert!(blocks[2]["text"].as_str().unwrap().starts_with("Now step 2"), "{next}");
    assert_eq!(messages.len(), at + 2);
    assert!(seen[1].body["system"].as_str().is_some_and(|s| s.contains("call exactly one of the tools")));
    // The example's calls are tool_use blocks answered by tool_result blocks.
    let first = seen[0].body["messages"].as_array().unwrap();
    let blocks: Vec<&Value> = first.iter().filter_map(|m| m["content"].as_array()).flatten().collect();
    let example = blocks.iter().find(|b| b["id"] == "example_1").expect("the example's first call");
    assert_eq!((&example["type"], &example["name"]), (&json!("tool_use"), &json!("search")));
    assert!(blocks.iter().any(|b| b["type"] == "tool_result" && b["tool_use_id"] == "example_1"));
}

#[test]
fn responses_native_steps_send_function_call_and_output_items() {
    let server = FakeServer::start(|_, seen| responses(seen));
    let dir = tempfile::tempdir().unwrap();
    let (_, seen) = run_episode(&server, "openai-responses", dir.path());
    let input = seen[1].body["input"].as_array().unwrap().clone();
    let at = input.iter().position(|m| m["call_id"] == "srv_1").expect("the step's first call");
    assert_eq!(input[at - 1], json!({"role": "assistant", "content": THOUGHT_1}));
    assert_eq!((&input[at]["type"], &input[at]["name"]), (&json!("function_call"), &json!("search")), "{}", input[at]);
    let arguments: Value = serde_json::from_str(input[at]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"entity": "Ilse Varga"}));
    assert_eq!((&input[at + 1]["type"], &input[at + 1]["call_id"]), (&json!("function_call"), &json!("srv_1b")));
    let output = &input[at + 2];
    assert_eq!((&output["type"], &output["call_id"]), (&json!("function_call_output"), &json!("srv_1")));
    assert!(output["output"].as_str().unwrap().contains("Marrowick"), "{output}");
    assert_eq!(input[at + 3], json!({"type": "function_call_output", "call_id": "srv_1b", "output": NOT_RUN}));
    assert_eq!(input[at + 4]["role"], "user");
    assert!(input[at + 4]["content"].as_str().unwrap().starts_with("Now step 2"));
}

/// `reply` (a fake server's JSON answer to a request for `step`) with a reasoning model's
/// thinking in the API's own shape.
fn thinking(reply: Reply, provider: &str, step: usize) -> Reply {
    let Reply::Json { body, .. } = reply else { panic!("a JSON reply") };
    let mut v: Value = serde_json::from_str(&body).unwrap();
    match provider {
        "anthropic" => {
            let content = v["content"].as_array_mut().unwrap();
            content.insert(
                0,
                json!({"type": "thinking", "thinking": format!("think {step}"), "signature": format!("sig-{step}")}),
            );
            content.insert(1, json!({"type": "redacted_thinking", "data": format!("red-{step}")}));
        }
        "openai" => v["choices"][0]["message"]["reasoning_content"] = json!(format!("think {step}")),
        _ => v["output"].as_array_mut().unwrap().insert(
            0,
            json!({"type": "reasoning", "id": format!("rs_{step}"), "encrypted_content": format!("enc-{step}"),
                   "summary": [{"type": "summary_text", "text": format!("think {step}")}]}),
        ),
    }
    Reply::json(200, v.to_string())
}

#[test]
fn a_reasoning_models_thinking_goes_back_with_its_calls_as_each_api_requires() {
    for provider in ["anthropic", "openai", "openai-responses"] {
        let server = FakeServer::start(move |_, seen| {
            let step = step_of(seen);
            let reply = match provider {
                "anthropic" => anthropic(seen),
                "openai" => openai(seen),
                _ => responses(seen),
            };
            thinking(reply, provider, step)
        });
        let dir = tempfile::tempdir().unwrap();
        let (_, seen) = run_episode(&server, provider, dir.path());
        let body = &seen[2].body;
        match provider {
            // Anthropic: the blocks whole and first, signature and redacted data unchanged.
            "anthropic" => {
                let messages = body["messages"].as_array().unwrap();
                for step in [1, 2] {
                    let id = format!("srv_{step}");
                    let turn = messages
                        .iter()
                        .find(|m| m["content"].as_array().is_some_and(|b| b.iter().any(|b| b["id"] == id.as_str())))
                        .unwrap();
                    let blocks = turn["content"].as_array().unwrap();
                    assert_eq!(
                        blocks[0],
                        json!({"type": "thinking", "thinking": format!("think {step}"), "signature": format!("sig-{step}")})
                    );
                    assert_eq!(blocks[1], json!({"type": "redacted_thinking", "data": format!("red-{step}")}));
                    assert_eq!(blocks[2]["type"], "text");
                }
            }
            // DeepSeek's shape: reasoning_content on the assistant turn of the calls.
            "openai" => {
                let messages = body["messages"].as_array().unwrap();
                for step in [1, 2] {
                    let turn = messages.iter().find(|m| m["tool_calls"][0]["id"] == format!("srv_{step}")).unwrap();
                    assert_eq!(turn["reasoning_content"], format!("think {step}"), "{turn}");
                }
                assert!(messages.iter().all(|m| m.get("reasoning_content").is_none() || m["role"] == "assistant"));
            }
            // Responses: the reasoning item with its encrypted content, before its calls.
            _ => {
                let input = body["input"].as_array().unwrap();
                for step in [1, 2] {
                    let item = input.iter().position(|i| i["id"] == format!("rs_{step}")).expect("the reasoning item");
                    assert_eq!(input[item]["encrypted_content"], format!("enc-{step}"));
                    assert_eq!(input[item]["type"], "reasoning");
                    let call = input.iter().position(|i| i["call_id"] == format!("srv_{step}")).unwrap();
                    assert!(item < call, "reasoning before its calls");
                }
            }
        }
        // The session records the thinking and replays exactly (checked in run_episode).
        let text = std::fs::read_to_string(dir.path().join("native.jsonl")).unwrap();
        assert!(text.contains("think 1"), "{provider}: the thinking is recorded");
    }
}

/// A server that accepts `tools` and whose model never calls one (llama-cpp-python with a
/// template that drops them): each reply is counted as offered tools and calling none, and
/// the summary says so in one line that suggests the text mode.
#[test]
fn a_server_that_drops_tools_is_named_with_the_text_mode_suggested() {
    let server = FakeServer::start(|_, _| {
        Reply::chat(&["I should search for Ilse Varga.\nAction 1: Search[Ilse Varga]"], Some((300, 20)))
    });
    let dir = tempfile::tempdir().unwrap();
    let run = |json: bool| {
        let mut cmd = support::isolated(dir.path(), Some("sk-test-0123456789"));
        cmd.args(["run", "--task", "qa-demo", "--method", "react", "--tool-mode", "native", "--range", "0"])
            .args(["--provider", "openai", "--model", "fake-model", "--base-url", &server.url])
            .args(["--retries", "0", "--max-steps", "3"]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let s = support::summary(&run(true));
    let asked = server.seen().into_iter().filter(|r| !support::is_discovery(r) && r.body["tools"].is_array()).count();
    let offered = &s["reply_health"]["offered_tools"];
    assert!(asked > 0, "the requests offered tools");
    assert_eq!((offered["n"].as_u64(), offered["bad"].as_u64()), (Some(asked as u64), Some(asked as u64)), "{s}");
    assert!(offered["example"]["read"].as_str().unwrap().contains("--tool-mode text"), "{offered}");
    let human = run(false);
    let text = String::from_utf8_lossy(&human.stdout);
    let said = format!("{asked} of {asked} replies offered tools with no tool call, e.g. ");
    let line = text.lines().find(|l| l.starts_with(&said)).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("Search[Ilse Varga]") && line.contains("--tool-mode text"), "{line}");
}
