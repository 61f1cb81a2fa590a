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
    /// `max_tokens` (or `max_completion_tokens`, `max_output_tokens`): the completion
    /// limit, passed to the model by io on the open question (refused otherwise).
    pub max_tokens: Option<u32>,
    /// `stop`: stop sequences, passed as `max_tokens` is.
    pub stop: Vec<String>,
    /// `n`: choices wanted, each one of io's samples (a search gives one answer).
    pub n: u32,
    /// `reasoning_effort` (chat completions) or `reasoning.effort` (Responses): asked of
    /// the upstream model as `--reasoning-effort` would.
    pub reasoning_effort: Option<String>,
    /// `top_p` and the presence and frequency penalties, where given other than the
    /// API's default (io passes them through; an upstream that cannot take one refuses).
    pub sampling: crate::protocol::Sampling,
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

/// The most choices a request may ask for (`n`), as OpenAI's API allows.
pub const MAX_N: u32 = 128;

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
        let n = match body.get("n") {
            None | Some(Value::Null) => 1,
            Some(n) => {
                n.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| (1..=MAX_N).contains(n)).ok_or_else(|| {
                    ApiError::invalid("invalid_n", format!("n must be a whole number from 1 to {MAX_N}"))
                })?
            }
        };
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
        let reasoning_effort = effort(body.get("reasoning_effort"), "reasoning_effort")?;
        let max_tokens = completion_limit(&body)?;
        let stop = match body.get("stop") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(list)) => list
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| ApiError::invalid("invalid_stop", "stop must be a text or a list of texts"))?,
            Some(_) => return Err(ApiError::invalid("invalid_stop", "stop must be a text or a list of texts")),
        };
        let sampling = sampling(&body)?;
        Ok(ChatRequest {
            model,
            messages,
            stream,
            thoughtscope,
            temperature,
            seed,
            max_tokens,
            stop,
            n,
            reasoning_effort,
            sampling,
        })
    }

    /// Read a Responses request (`POST /v1/responses`) as the same search request:
    /// `instructions` is the system message, `input` a text or a list of messages (text
    /// parts only), `reasoning.effort` the effort; a mistake is named by its field.
    pub fn parse_responses(body: &[u8]) -> Result<ChatRequest, ApiError> {
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::invalid("invalid_json", format!("the body is not JSON: {e}")))?;
        let Value::Object(mut body) = value else {
            return Err(ApiError::invalid("invalid_json", "the body must be a JSON object"));
        };
        let mut messages = Vec::new();
        match body.get("instructions") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => messages.push(("system".to_string(), s.clone())),
            Some(_) => return Err(ApiError::invalid("invalid_instructions", "instructions must be text")),
        }
        match body.get("input") {
            Some(Value::String(s)) if !s.trim().is_empty() => messages.push(("user".to_string(), s.clone())),
            Some(Value::Array(items)) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    messages.push(input_item(i, item)?);
                }
            }
            _ => return Err(ApiError::invalid("missing_input", "input is required: a text or a non-empty list")),
        }
        for refused in ["previous_response_id", "conversation"] {
            if body.get(refused).is_some_and(|v| !v.is_null()) {
                return Err(ApiError::invalid(
                    "unsupported_parameter",
                    format!("{refused} is not supported: responses are not stored; send the whole input"),
                ));
            }
        }
        let effort = match body.get("reasoning") {
            None | Some(Value::Null) => None,
            Some(Value::Object(r)) => self::effort(r.get("effort"), "reasoning.effort")?,
            Some(_) => return Err(ApiError::invalid("invalid_reasoning", "reasoning must be a JSON object")),
        };
        // The rest reads as a chat request does: model, stream, temperature, thoughtscope.
        body.remove("input");
        body.remove("reasoning");
        if let Some(limit) = body.remove("max_output_tokens") {
            body.insert("max_tokens".into(), limit);
        }
        body.insert(
            "messages".into(),
            Value::Array(messages.iter().map(|(r, t)| json!({"role": r, "content": t})).collect()),
        );
        let mut request = ChatRequest::parse(&serde_json::to_vec(&body).unwrap_or_default())?;
        request.reasoning_effort = effort;
        Ok(request)
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

    /// The conversation as the turns io sends: each message's role (`developer` is a
    /// system turn) and text as it came. What no chat template can carry is refused: a
    /// system message after the first, a tool message, or a last message not the user's.
    pub fn turns(&self) -> Result<Vec<(&'static str, &str)>, ApiError> {
        let bad = |i: usize, what: &str| {
            ApiError::invalid("invalid_message", format!("messages[{i}]: {what} (io passes the conversation through)"))
        };
        let mut turns = Vec::new();
        for (i, (role, text)) in self.messages.iter().enumerate() {
            let role = match role.as_str() {
                "system" | "developer" if i == 0 => "system",
                "system" | "developer" => return Err(bad(i, "only the first message may be system or developer")),
                "user" => "user",
                "assistant" => "assistant",
                _ => return Err(bad(i, "tool messages are not served (no tools are offered)")),
            };
            turns.push((role, text.as_str()));
        }
        match turns.last() {
            Some(("user", _)) => Ok(turns),
            _ => Err(bad(turns.len().saturating_sub(1), "the last message must be the user's")),
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

/// The completion limit a request names: `max_tokens` or `max_completion_tokens` (the
/// same number if both).
fn completion_limit(body: &Map<String, Value>) -> Result<Option<u32>, ApiError> {
    let mut limit = None;
    for field in ["max_tokens", "max_completion_tokens"] {
        let n = match body.get(field) {
            None | Some(Value::Null) => continue,
            Some(v) => v.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n >= 1).ok_or_else(|| {
                ApiError::invalid("invalid_max_tokens", format!("{field} must be a whole number of at least 1"))
            })?,
        };
        if limit.is_some_and(|l| l != n) {
            return Err(ApiError::invalid(
                "invalid_max_tokens",
                "max_tokens and max_completion_tokens differ: send one of them",
            ));
        }
        limit = Some(n);
    }
    Ok(limit)
}

/// A reasoning effort a request names, checked.
/// `top_p` (above 0, at most 1) and the presence and frequency penalties (-2 to 2); a
/// field at the API's default (1, 0) is as good as absent.
fn sampling(body: &Map<String, Value>) -> Result<crate::protocol::Sampling, ApiError> {
    let read = |field: &'static str, default: f64, ok: fn(f64) -> bool, range: &str| match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x == default => Ok(None),
            Some(x) if ok(x) => Ok(Some(x as f32)),
            _ => Err(ApiError::invalid("invalid_parameter", format!("{field} must be a number {range}"))),
        },
    };
    let penalty = |x: f64| (-2.0..=2.0).contains(&x);
    Ok(crate::protocol::Sampling {
        top_p: read("top_p", 1.0, |x| x > 0.0 && x <= 1.0, "above 0 and at most 1")?,
        presence_penalty: read("presence_penalty", 0.0, penalty, "from -2 to 2")?,
        frequency_penalty: read("frequency_penalty", 0.0, penalty, "from -2 to 2")?,
    })
}

fn effort(value: Option<&Value>, field: &str) -> Result<Option<String>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(level)) => match crate::llm::config::check_reasoning_effort(level) {
            None => Ok(Some(level.clone())),
            Some(problem) => Err(ApiError::invalid("invalid_reasoning_effort", format!("{field} {problem}"))),
        },
        Some(_) => Err(ApiError::invalid("invalid_reasoning_effort", format!("{field} must be text"))),
    }
}

/// Item `i` of a Responses `input`: a message with text content (`input_text` and
/// `output_text` parts, or a text).
fn input_item(i: usize, item: &Value) -> Result<(String, String), ApiError> {
    let bad = |what: &str| ApiError::invalid("invalid_input", format!("input[{i}]: {what}"));
    if item.get("type").and_then(Value::as_str).is_some_and(|t| t != "message") {
        return Err(bad("only message items are supported (no tool calls or their outputs)"));
    }
    let role = item.get("role").and_then(Value::as_str).ok_or_else(|| bad("role is required"))?;
    if !matches!(role, "system" | "developer" | "user" | "assistant") {
        return Err(bad("role must be system, developer, user or assistant"));
    }
    let text = match item.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let mut text = Vec::new();
            for part in parts {
                match (part.get("type").and_then(Value::as_str), part.get("text").and_then(Value::as_str)) {
                    (Some("input_text" | "output_text" | "text"), Some(t)) => text.push(t),
                    _ => return Err(bad("only text content parts are supported")),
                }
            }
            text.join("\n")
        }
        _ => return Err(bad("content must be text or a list of text parts")),
    };
    Ok((role.to_string(), text))
}

/// Token counts of the whole search.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of the completion tokens, those the upstream model spent thinking.
    pub reasoning_tokens: u64,
}

impl Usage {
    pub fn json(&self) -> Value {
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        })
    }

    /// The Responses API's names for the same counts.
    pub fn responses_json(&self) -> Value {
        json!({
            "input_tokens": self.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": self.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
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
    /// With `n` > 1, each of io's samples' answers, in order (`choices[i]`); empty: the
    /// one `content`.
    pub choices: Vec<String>,
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
            "choices": self.texts().iter().enumerate().map(|(i, text)| json!({
                "index": i,
                "message": { "role": "assistant", "content": text },
                "logprobs": null,
                "finish_reason": self.finish_reason,
            })).collect::<Vec<_>>(),
            "usage": self.usage.json(),
            "thoughtscope": self.about,
        })
    }

    /// The whole response in the Responses API's shape (`object: "response"`): one
    /// message item of one `output_text` part; a search stopped by a budget is
    /// `incomplete` with the reason `max_output_tokens`.
    pub fn response(&self) -> Value {
        let (status, incomplete) = match self.finish_reason {
            "length" => ("incomplete", json!({"reason": "max_output_tokens"})),
            _ => ("completed", Value::Null),
        };
        json!({
            "id": self.id.replacen("chatcmpl-", "resp_", 1),
            "object": "response",
            "created_at": self.created,
            "status": status,
            "incomplete_details": incomplete,
            "error": null,
            "model": self.model,
            "output": [self.message_item("completed", &self.content)],
            "output_text": self.content,
            "parallel_tool_calls": false,
            "tool_choice": "none",
            "tools": [],
            "usage": self.usage.responses_json(),
            "thoughtscope": self.about,
        })
    }

    /// The answer of each choice: the samples', or the one content.
    fn texts(&self) -> Vec<&str> {
        match self.choices.as_slice() {
            [] => vec![self.content.as_str()],
            all => all.iter().map(String::as_str).collect(),
        }
    }

    fn message_item(&self, status: &str, text: &str) -> Value {
        json!({
            "type": "message",
            "id": self.id.replacen("chatcmpl-", "msg_", 1),
            "status": status,
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        })
    }

    /// The streamed Responses answer: its semantic events, each `(type, data)`, from
    /// `response.created` to `response.completed` (or `response.incomplete`), numbered.
    pub fn response_events(&self) -> Vec<(String, Value)> {
        let whole = self.response();
        let mut started = whole.clone();
        started["status"] = json!("in_progress");
        started["output"] = json!([]);
        started["usage"] = Value::Null;
        let part = json!({"type": "output_text", "text": "", "annotations": []});
        let done_part = json!({"type": "output_text", "text": self.content, "annotations": []});
        let item_id = self.id.replacen("chatcmpl-", "msg_", 1);
        let at = |extra: Value| {
            let mut v = json!({"item_id": item_id, "output_index": 0, "content_index": 0});
            if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
                v.extend(extra.clone());
            }
            v
        };
        let end = if whole["status"] == "incomplete" { "response.incomplete" } else { "response.completed" };
        let events = vec![
            ("response.created", json!({"response": started})),
            ("response.in_progress", json!({"response": started})),
            ("response.output_item.added", json!({"output_index": 0, "item": self.message_item("in_progress", "")})),
            ("response.content_part.added", at(json!({"part": part}))),
            ("response.output_text.delta", at(json!({"delta": self.content, "logprobs": []}))),
            ("response.output_text.done", at(json!({"text": self.content, "logprobs": []}))),
            ("response.content_part.done", at(json!({"part": done_part}))),
            (
                "response.output_item.done",
                json!({"output_index": 0, "item": self.message_item("completed", &self.content)}),
            ),
            (end, json!({"response": whole})),
        ];
        events
            .into_iter()
            .enumerate()
            .map(|(n, (kind, mut data))| {
                data["type"] = json!(kind);
                data["sequence_number"] = json!(n);
                (kind.to_string(), data)
            })
            .collect()
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
        let mut chunks = Vec::new();
        for (i, text) in self.texts().into_iter().enumerate() {
            chunks.push(chunk(
                json!([{ "index": i, "delta": { "role": "assistant", "content": "" }, "finish_reason": null }]),
            ));
            chunks.push(chunk(json!([{ "index": i, "delta": { "content": text }, "finish_reason": null }])));
            chunks.push(chunk(json!([{ "index": i, "delta": {}, "finish_reason": self.finish_reason }])));
        }
        chunks.push(usage);
        chunks
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
            (br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "n": 0}"#, "invalid_n"),
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
    fn io_pass_through_fields_are_read_and_what_cannot_pass_is_refused() {
        let body = br#"{"model": "m", "messages": [{"role": "developer", "content": "Be brief."},
            {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": "Why?"}], "max_completion_tokens": 64, "stop": "END", "top_p": 1,
            "presence_penalty": 0.5}"#;
        let r = ChatRequest::parse(body).unwrap();
        assert_eq!((r.max_tokens, r.stop.as_slice()), (Some(64), &["END".to_string()][..]));
        let at_default = crate::protocol::Sampling { presence_penalty: Some(0.5), ..Default::default() };
        assert_eq!(r.sampling, at_default, "top_p 1 is the default: as good as absent");
        let turns = r.turns().unwrap();
        assert_eq!(turns, [("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello."), ("user", "Why?")]);
        let responses = br#"{"model": "m", "input": "Hi", "max_output_tokens": 9}"#;
        assert_eq!(ChatRequest::parse_responses(responses).unwrap().max_tokens, Some(9));
        for (body, code) in [
            (&br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "top_p": 0}"#[..], "invalid_parameter"),
            (br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "presence_penalty": "1"}"#, "invalid_parameter"),
            (br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}"#, "invalid_max_tokens"),
            (
                br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5, "max_completion_tokens": 6}"#,
                "invalid_max_tokens",
            ),
            (br#"{"model": "m", "messages": [{"role": "user", "content": "x"}], "stop": [1]}"#, "invalid_stop"),
        ] {
            let e = ChatRequest::parse(body).unwrap_err();
            assert_eq!((e.status, e.code), (400, code), "{}", e.message);
        }
        for (messages, says) in [
            (
                r#"[{"role": "user", "content": "x"}, {"role": "system", "content": "y"}, {"role": "user", "content": "z"}]"#,
                "messages[1]: only the first",
            ),
            (
                r#"[{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}, {"role": "user", "content": "z"}]"#,
                "messages[1]: tool",
            ),
            (r#"[{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]"#, "messages[1]: the last"),
        ] {
            let r = ChatRequest::parse(format!(r#"{{"model": "m", "messages": {messages}}}"#).as_bytes()).unwrap();
            let e = r.turns().unwrap_err();
            assert!(e.code == "invalid_message" && e.message.starts_with(says), "{}", e.message);
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
            usage: Usage { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 0 },
            about: json!({"session": "s.jsonl"}),
            choices: Vec::new(),
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
        let two = Answer { choices: vec!["6".into(), "7".into()], ..a };
        let whole = two.completion();
        let texts: Vec<&Value> =
            whole["choices"].as_array().unwrap().iter().map(|c| &c["message"]["content"]).collect();
        assert_eq!(texts, [&json!("6"), &json!("7")]);
        let chunks = two.chunks();
        let second: String = chunks
            .iter()
            .filter(|c| c["choices"][0]["index"] == 1)
            .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(second, "7");
    }
}
