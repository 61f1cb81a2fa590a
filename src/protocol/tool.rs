//! Tools in the protocol: a tool offered to a model for native calling, a call a model
//! made, and the `name[arg]` call the runtime makes and its result.

use serde::{Deserialize, Serialize};

/// A tool call the engine asks the runtime to make (ReAct): `name[arg]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRequest {
    pub name: String,
    pub arg: String,
}

/// What a tool answered: the observation text, whether it worked, how long it took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub text: String,
    pub ok: bool,
    #[serde(default)]
    pub latency_ms: u64,
}

/// A tool offered to a model for native tool calling: its name, what it does and a
/// JSON schema of its arguments (an object). Providers turn it into OpenAI `tools` /
/// Anthropic `tools` entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

impl ToolDef {
    /// The single argument's name: the first required property, else the first property.
    pub fn arg_name(&self) -> Option<&str> {
        let required = self.parameters["required"].as_array().and_then(|r| r.first()).and_then(|v| v.as_str());
        required.or_else(|| self.parameters["properties"].as_object().and_then(|p| p.keys().next()).map(String::as_str))
    }
}

/// A native tool call in a model's reply. `arguments` is the parsed JSON object; when a
/// server sent arguments that are not valid JSON they are kept as a string, so the
/// method can report the bad call instead of the provider failing the whole reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallOut {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    pub arguments: serde_json::Value,
}

impl ToolCallOut {
    /// The call as `name[arg]` for a tool taking one argument, given the tools offered.
    /// A tool not offered keeps its first string argument (the tool runner then names the
    /// valid tools); arguments that are not a JSON object, or lack the argument, are an error.
    pub fn to_request(&self, tools: &[ToolDef]) -> Result<ToolRequest, String> {
        let name = self.name.trim().to_lowercase();
        if name.is_empty() {
            return Err("the tool call has no tool name".into());
        }
        let def = tools.iter().find(|t| t.name.eq_ignore_ascii_case(&name));
        let several = def.is_some_and(|d| d.parameters["properties"].as_object().is_some_and(|p| p.len() > 1));
        let arg = match &self.arguments {
            // A tool of several arguments (an MCP server's) takes them as one JSON object.
            serde_json::Value::Object(map) if several => serde_json::Value::Object(map.clone()).to_string(),
            serde_json::Value::Object(map) => {
                let wanted = def.and_then(ToolDef::arg_name);
                let value = match wanted.and_then(|a| map.get(a)) {
                    Some(v) => Some(v),
                    // A single argument under another name is still the argument.
                    None if map.len() == 1 => map.values().next(),
                    // A tool not offered: its first string (the runner answers that there is no such tool).
                    None if def.is_none() => map.values().find(|v| v.is_string()),
                    None => None,
                };
                match value {
                    Some(serde_json::Value::String(s)) => s.trim().to_string(),
                    Some(serde_json::Value::Null) | None if def.is_some() => {
                        return Err(format!("the call of {name} has no \"{}\" argument", wanted.unwrap_or("argument")))
                    }
                    Some(serde_json::Value::Null) | None => String::new(),
                    Some(other) => other.to_string(),
                }
            }
            serde_json::Value::String(raw) => {
                return Err(format!(
                    "the arguments of {name} are not a JSON object: {}",
                    raw.chars().take(80).collect::<String>()
                ))
            }
            other => return Err(format!("the arguments of {name} are not a JSON object: {other}")),
        };
        Ok(ToolRequest { name, arg })
    }

    /// The arguments as a JSON text (OpenAI's `arguments` string): arguments the server
    /// sent that were not valid JSON go back as they came.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            serde_json::Value::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }

    /// The arguments as a JSON object (Anthropic's `input`): arguments that were not an
    /// object go back under `"arguments"`, so the model sees what it sent.
    pub fn arguments_object(&self) -> serde_json::Value {
        match &self.arguments {
            serde_json::Value::Object(_) => self.arguments.clone(),
            other => serde_json::json!({ "arguments": other }),
        }
    }

    /// The call as the model made it, `name({json})`, for notes.
    pub fn describe(&self) -> String {
        format!("{}({})", self.name, self.arguments)
    }
}
