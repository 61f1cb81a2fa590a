//! What the scripted local model of the task-file and MCP tests shares: ReTreVal's
//! phases answered by their prompts, the step a native-mode prompt asks for, a native
//! tool call as an OpenAI reply, and the flags that point a run at the scripted server.

use serde_json::{json, Value};

use super::{FakeServer, Reply};

/// ReTreVal's phases, by their prompts: a routine problem, good attempts, a validation
/// that finds them right (`None`: not one of them).
pub fn retreval_phase(prompt: &str) -> Option<String> {
    if prompt.contains("Estimate how complex") {
        return Some("Routine.\nComplexity: 1".into());
    }
    if prompt.contains("Assess this attempt critically") {
        return Some("Each step holds.\nScore: 9".into());
    }
    if prompt.contains("Compare the attempt to judge") {
        let n = prompt.matches("Other attempt ").count();
        let lines: Vec<String> = (1..=n).map(|k| format!("Versus {k}: 5")).collect();
        return Some(format!("{}\nCritique: none found", lines.join("\n")));
    }
    if prompt.contains("Check the attempt step by step") {
        return Some("Every step is right.\nVERDICT: correct".into());
    }
    None
}

/// The step a native-mode ReAct prompt asks for (`Now step N: ...`; 1 if none).
pub fn native_step(prompt: &str) -> usize {
    prompt.rsplit("Now step ").next().and_then(|r| r.split(':').next()).and_then(|n| n.trim().parse().ok()).unwrap_or(1)
}

/// An OpenAI chat reply that says `content` and calls the tool `name` with `arguments`.
pub fn tool_call(step: usize, name: &str, arguments: &Value, content: &str) -> Reply {
    let message = json!({
        "role": "assistant",
        "content": content,
        "tool_calls": [{ "id": format!("call_{step}"), "type": "function",
                         "function": { "name": name, "arguments": arguments.to_string() } }],
    });
    let body = json!({
        "id": "x", "object": "chat.completion", "model": "scripted",
        "choices": [{ "index": 0, "message": message, "finish_reason": "tool_calls" }],
        "usage": { "prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60 },
    });
    Reply::json(200, body.to_string())
}

/// The flags of a run against `server` (its key: `OPENAI_API_KEY=sk-test`, see [`model`]).
pub fn model_args(server: &FakeServer) -> Vec<String> {
    ["--provider", "openai", "--base-url", server.url.as_str(), "--model", "scripted"].map(str::to_string).to_vec()
}

/// `command` pointed at `server`: its flags and a key.
pub fn model<'a>(command: &'a mut std::process::Command, server: &FakeServer) -> &'a mut std::process::Command {
    command.args(model_args(server)).env("OPENAI_API_KEY", "sk-test")
}
