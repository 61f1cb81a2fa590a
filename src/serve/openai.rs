//! The OpenAI chat-completions wire format: the request as `serve` reads it, the
//! answer (whole or as `chat.completion.chunk` events), and errors as
//! `{"error": {"message", "type", "code"}}` with their HTTP status.

use serde_json::{json, Map, Value};

/// A chat-completions request, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// `method@model`, or a model name alone (io).
    pub model: String,
    pub messages: Vec<(String, String)>,
    pub stream: bool,
    /// The `thoughtscope` object (`extra_body` in the OpenAI clients).
    pub thoughtscope: Map<String, Value>,
    /// Top-level `temperature` and `seed`, for the methods that read them.
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
}

/// An error to answer with: status, OpenAI error type, code and one-line message.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub kind: &'static str,
    pub code: &'static str,
    pub message: String,
    /// Seconds a client should wait before trying again (429, 503).
    pub retry_after: Option<u64>,
}

/// The most of a message sent back: what a request sent is echoed only in part.
const MAX_MESSAGE_CHARS: usize = 1000;
/// The most of one value of a request quoted in a message.
const MAX_ECHO_CHARS: usize = 80;

/// A value a request sent, quoted for a message: one line, at most [`MAX_ECHO_CHARS`].
pub fn echo(value: &str) -> String {
    let quoted = format!("{:?}", crate::safe_text::one_line(value));
    if quoted.chars().count() <= MAX_ECHO_CHARS {
        return quoted;
    }
    let cut: String = quoted.chars().take(MAX_ECHO_CHARS).collect();
    format!("{cut}...\" ({} characters)", value.chars().count())
}

impl ApiError {
    pub fn new(status: u16, kind: &'static str, code: &'static str, message: impl Into<String>) -> ApiError {
        let message = crate::safe_text::clip(&message.into(), MAX_MESSAGE_CHARS);
        ApiError { status, kind, code, message, retry_after: None }
    }

    /// A mistake in the request (400).
    pub fn invalid(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(400, "invalid_request_error", code, message)
    }

    /// The body: `{"error": {"message", "type", "code"}}`.
    pub fn body(&self) -> Value {
        json!({ "error": { "message": self.message, "type": self.kind, "code": self.code, "param": null } })
    }
}

impl ChatRequest {
    /// Read a request body; a mistake is named by its field.
    pub fn parse(body: &[u8]) -> Result<ChatRequest, ApiError> {
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::invalid("invalid_json", format!("the body is not JSON: {e}")))?;
        let Value::Object(mut body) = value else {
            return Err(ApiError::invalid("invalid_json", "the body must be a JSON object"));
        };
        let model = match body.get("model") {
            Some(Value::String(m)) if !m.trim().is_empty() => m.trim().to_string(),
            _ => return Err(ApiError::invalid("missing_model", "model is required: a model name, or method@model")),
        };
        let messages = match body.get("messages") {
            Some(Value::Array(list)) if !list.is_empty() => {
                list.iter().enumerate().map(|(i, m)| message(i, m)).collect::<Result<Vec<_>, _>>()?
            }
            _ => return Err(ApiError::invalid("missing_messages", "messages is required: a non-empty list")),
        };
        let stream = match body.get("stream") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(ApiError::invalid("invalid_stream", "stream must be true or false")),
        };
        match body.get("n") {
            None | Some(Value::Null) => {}
            Some(n) if n.as_u64() == Some(1) => {}
            Some(_) => {
                return Err(ApiError::invalid(
                    "unsupported_n",
                    "n must be 1: a search gives one answer (ask for samples in the thoughtscope object)",
                ))
            }
        }
        let thoughtscope = match body.remove("thoughtscope") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(o)) => o,
            Some(_) => return Err(ApiError::invalid("invalid_thoughtscope", "thoughtscope must be a JSON object")),
        };
        let temperature = match body.get("temperature") {
            None | Some(Value::Null) => None,
            Some(t) => Some(
                t.as_f64().ok_or_else(|| ApiError::invalid("invalid_temperature", "temperature must be a number"))?,
            ),
        };
        let seed = match body.get("seed") {
            None | Some(Value::Null) => None,
            Some(s) => {
                Some(s.as_u64().ok_or_else(|| ApiError::invalid("invalid_seed", "seed must be a whole number"))?)
            }
        };
        Ok(ChatRequest { model, messages, stream, thoughtscope, temperature, seed })
    }

    /// The conversation as one text: a lone user message as it is, otherwise one
    /// `Role: text` paragraph a message.
    pub fn conversation(&self) -> String {
        match self.messages.as_slice() {
            [(role, text)] if role == "user" => text.trim().to_string(),
            all => all
                .iter()
                .map(|(role, text)| {
                    let mut name = role.clone();
                    if let Some(first) = name.get_mut(0..1) {
                        first.make_ascii_uppercase();
                    }
                    format!("{name}: {}", text.trim())
                })
                .collect::<Vec<_>>()
                .join("\n\n"),
        }
    }

    /// The last user message (the problem of a named task, e.g. `4 9 10 13`).
    pub fn last_user(&self) -> Option<&str> {
        self.messages.iter().rev().find(|(role, _)| role == "user").map(|(_, text)| text.trim())
    }
}

/// Message `i`: its role and text (a list of parts gives its text parts).
fn message(i: usize, m: &Value) -> Result<(String, String), ApiError> {
    let bad = |what: &str| ApiError::invalid("invalid_message", format!("messages[{i}]: {what}"));
    let role = m.get("role").and_then(Value::as_str).ok_or_else(|| bad("role is required"))?;
    if !matches!(role, "system" | "developer" | "user" | "assistant" | "tool") {
        return Err(bad("role must be system, developer, user, assistant or tool"));
    }
    let text = match m.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let mut text = Vec::new();
            for part in parts {
                match (part.get("type").and_then(Value::as_str), part.get("text").and_then(Value::as_str)) {
                    (Some("text"), Some(t)) => text.push(t),
                    _ => return Err(bad("only text content parts are supported")),
                }
            }
            text.join("\n")
        }
        Some(_) => return Err(bad("content must be text or a list of text parts")),
    };
    Ok((role.to_string(), text))
}

/// Token counts of the whole search.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub fn json(&self) -> Value {
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        })
    }
}

/// What a search answered, in the response's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub id: String,
    pub created: u64,
    pub model: String,
    pub content: String,
    /// `stop`, or `length` when a budget stopped the search.
    pub finish_reason: &'static str,
    pub usage: Usage,
    /// The `thoughtscope` object of the response: session, method, task, calls, cost.
    pub about: Value,
}

impl Answer {
    /// The whole response (`chat.completion`).
    pub fn completion(&self) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": self.content },
                "logprobs": null,
                "finish_reason": self.finish_reason,
            }],
            "usage": self.usage.json(),
            "thoughtscope": self.about,
        })
    }

    /// The streamed response: the role, the content, the finish, then the usage (a
    /// chunk with no choices, as with `stream_options.include_usage`).
    pub fn chunks(&self) -> Vec<Value> {
        let chunk = |choices: Value| {
            json!({
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": choices,
            })
        };
        let mut usage = chunk(json!([]));
        usage["usage"] = self.usage.json();
        usage["thoughtscope"] = self.about.clone();
        vec![
            chunk(json!([{ "index": 0, "delta": { "role": "assistant", "content": "" }, "finish_reason": null }])),
            chunk(json!([{ "index": 0, "delta": { "content": self.content }, "finish_reason": null }])),
            chunk(json!([{ "index": 0, "delta": {}, "finish_reason": self.finish_reason }])),
            usage,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_and_mistakes_named_by_field() {
        let body = br#"{"model": "cot-sc@m", "messages": [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Why?"}]}], "stream": true,
            "thoughtscope": {"samples": 3}, "temperature": 0.5}"#;
        let r = ChatRequest::parse(body).unwrap();
        assert_eq!(r.model, "cot-sc@m");
        assert!(r.stream);
        assert_eq!(r.thoughtscope["samples"], 3);
        assert_eq!(r.temperature, Some(0.5));
        assert_eq!(r.conversation(), "System: Be brief.\n\nUser: Why?");
        assert_eq!(r.last_user(), Some("Why?"));
        let one = ChatRequest::parse(br#"{"model": "m", "messages": [{"role": "user", "content": " 4 9 10 13 "}]}"#);
        assert_eq!(one.unwrap().conversation(), "4 9 10 13");
        for (body, code) in [
            (&b"nope"[..], "invalid_json"),
            (br#"{"messages": [{"role": "user", "content": "x"}]}"#, "missing_model"),
            (br#"{"model": "m", "messages": []}"#, "missing_messages"),
            (br#"{"model": "m", "messages": [{"role": "wizard", "content": "x"}]}"#, "invalid_message"),
            (br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "n": 2}"#, "unsupported_n"),
            (
                br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "thoughtscope": 3}"#,
                "invalid_thoughtscope",
            ),
        ] {
            let e = ChatRequest::parse(body).unwrap_err();
            assert_eq!((e.status, e.code), (400, code), "{}", e.message);
            assert_eq!(e.body()["error"]["type"], "invalid_request_error");
        }
    }

    #[test]
    fn answers_are_whole_completions_or_chunks_ending_with_usage() {
        let a = Answer {
            id: "chatcmpl-1".into(),
            created: 7,
            model: "cot-sc@m".into(),
            content: "42".into(),
            finish_reason: "stop",
            usage: Usage { prompt_tokens: 10, completion_tokens: 5 },
            about: json!({"session": "s.jsonl"}),
        };
        let whole = a.completion();
        assert_eq!(whole["choices"][0]["message"]["content"], "42");
        assert_eq!(whole["usage"]["total_tokens"], 15);
        let chunks = a.chunks();
        let text: String = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
        assert_eq!(text, "42");
        assert_eq!(chunks[2]["choices"][0]["finish_reason"], "stop");
        assert_eq!(chunks[3]["usage"]["total_tokens"], 15);
        assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk"));
    }
}
