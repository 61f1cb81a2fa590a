//! OpenAI's Responses API (`POST /v1/responses`), which OpenAI recommends for new work
//! and its agents SDK speaks; vLLM, OpenRouter and others serve it too. Its differences
//! from chat completions:
//! - system messages go in `instructions`, the other turns in `input`;
//! - there is no `n` (k samples are k requests, side by side as slots allow), no `seed`
//!   and no stop sequences: the reply is cut at the request's stops here, so a model
//!   may write (and bill) past a stop it would have halted at in chat completions;
//! - the completion limit is `max_output_tokens`; replies are not stored (`store: false`);
//! - a reply is a list of output items: `message` items hold `output_text` (and
//!   `refusal`) parts, `function_call` items are tool calls with their `call_id`;
//!   `reasoning` items are the reply's thinking (their summary or text, id and
//!   encrypted content kept), never its answer, and their tokens are counted apart;
//! - `status` says how it ended: `completed`, or `incomplete` with a reason
//!   (`max_output_tokens` reads as a reply cut by its length), or `failed` with an error;
//! - a streamed reply is typed events ending with `response.completed`,
//!   `response.incomplete` or `response.failed` (no `[DONE]`); the final event carries
//!   the whole response, which is what is kept.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::provider::{malformed, tool_arguments, truncated};
use super::{Api, Builtin, Call, Part, Samples, StreamRead};
use crate::llm::http::{reported_error_kind, server_message, shorten};
use crate::llm::secret::Secret;
use crate::llm::{DeltaFn, Streamed};
use crate::protocol::{CallError, CallErrorKind, Completion, Thinking, ThinkingKind, ToolCallOut};

/// The Responses kind.
pub struct Responses;

pub(super) static API: Responses = Responses;

const PROFILES: &[Builtin] = &[Builtin {
    name: "openai-responses",
    base_url: "https://api.openai.com/v1",
    key_env: Some("OPENAI_API_KEY"),
    base_url_env: Some("OPENAI_BASE_URL"),
    n: Some(false),
    think_via: None,
    about: "OpenAI's Responses API",
}];

impl Api for Responses {
    fn kind(&self) -> &'static str {
        "responses"
    }

    fn about(&self) -> &'static str {
        "OpenAI's Responses API (no n, seed or stops: samples are one request each, stops are cut here)"
    }

    fn profiles(&self) -> &'static [Builtin] {
        PROFILES
    }

    fn samples(&self) -> Samples {
        Samples::OnePerRequest
    }

    /// The API takes no stop sequences: every one is cut here.
    fn stops_cut_here<'s>(&self, stops: &'s [String]) -> Vec<&'s String> {
        stops.iter().collect()
    }

    fn url(&self, base_url: &str) -> String {
        format!("{base_url}/responses")
    }

    fn authorize(&self, request: reqwest::RequestBuilder, key: Option<&Secret>) -> reqwest::RequestBuilder {
        super::bearer(request, key)
    }

    fn sampling_fields(&self) -> &'static [&'static str] {
        &["top_p"]
    }

    fn body(&self, call: &Call<'_>) -> Value {
        let request = call.request;
        let (system, input) = super::system_apart(request, |m| {
            if !m.tool_calls.is_empty() {
                // Its reasoning items as received (with their encrypted content: replies are
                // not stored), the turn's text as a message, then one `function_call` item a call.
                let mut items: Vec<Value> = m
                    .thinking
                    .iter()
                    .filter(|t| t.kind == ThinkingKind::Item && t.id.is_some())
                    .map(|t| {
                        let summary: Vec<Value> = (!t.text.is_empty())
                            .then(|| json!({"type": "summary_text", "text": t.text}))
                            .into_iter()
                            .collect();
                        let mut item = json!({"type": "reasoning", "id": t.id, "summary": summary});
                        if let Some(enc) = &t.signature {
                            item["encrypted_content"] = json!(enc);
                        }
                        item
                    })
                    .collect();
                if !m.content.trim().is_empty() {
                    items.push(json!({"role": "assistant", "content": m.content}));
                }
                for c in &m.tool_calls {
                    items.push(json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments_text()}));
                }
                return Some(items);
            }
            let id = m.tool_call_id.as_ref()?;
            Some(vec![json!({"type": "function_call_output", "call_id": id, "output": m.content})])
        });
        let mut body = json!({
            "model": call.model,
            "input": input,
            "store": false,
        });
        let obj = body.as_object_mut().expect("a JSON object literal");
        let reasoning = &call.settings.reasoning;
        if reasoning.model || reasoning.effort.is_some() {
            let mut asked = json!({"summary": "auto"});
            if let Some(effort) = &reasoning.effort {
                asked["effort"] = json!(effort);
            }
            obj.insert("reasoning".into(), asked);
            // Replies are not stored: the thinking comes back encrypted, to be sent back.
            obj.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        if !reasoning.model {
            obj.insert("temperature".into(), json!(crate::llm::wire_temperature(request.temperature)));
        }
        request.sampling.insert_into(obj, self.sampling_fields());
        if let Some(system) = system {
            obj.insert("instructions".into(), json!(system));
        }
        if let Some(m) = request.max_tokens {
            obj.insert("max_output_tokens".into(), json!(m));
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}))
                .collect();
            obj.insert("tools".into(), Value::Array(tools));
            obj.insert("tool_choice".into(), json!("auto"));
        }
        if call.stream {
            obj.insert("stream".into(), json!(true));
        }
        body
    }

    fn notes(&self, model: &str, settings: &super::Settings) -> Vec<String> {
        super::reasoning_notes(model, settings)
    }

    fn parse(&self, text: &str) -> Result<Part, CallError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| malformed(format!("the reply is not valid JSON ({e}): {}", shorten(text, 200))))?;
        response(&v, text)
    }

    fn stream(&self) -> Box<dyn StreamRead> {
        Box::<StreamState>::default()
    }
}

/// A whole response object (`raw`: its text, for messages).
fn response(v: &Value, raw: &str) -> Result<Part, CallError> {
    if let Some(error) = v.get("error").filter(|e| !e.is_null()) {
        let message = server_message(&json!({ "error": error }).to_string());
        return Err(CallError { kind: reported_error_kind(&message, CallErrorKind::Server), message });
    }
    let status = v.get("status").and_then(Value::as_str).unwrap_or("completed");
    let output = v
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(format!("the reply has no output list: {}", shorten(raw, 200))))?;
    let mut text = String::new();
    let mut refusal = String::new();
    let mut tool_calls = Vec::new();
    let mut thinking = Vec::new();
    for item in output {
        match item.get("type").and_then(Value::as_str).unwrap_or("") {
            "message" => {
                for part in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => text.push_str(part.get("text").and_then(Value::as_str).unwrap_or("")),
                        Some("refusal") => refusal.push_str(part.get("refusal").and_then(Value::as_str).unwrap_or("")),
                        _ => {}
                    }
                }
            }
            "reasoning" => thinking.push(reasoning_item(item)),
            "function_call" => tool_calls.push(ToolCallOut {
                id: item.get("call_id").and_then(Value::as_str).map(str::to_string),
                name: item.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
                arguments: tool_arguments(item.get("arguments")),
            }),
            _ => {}
        }
    }
    let finish_reason = match status {
        "completed" if !tool_calls.is_empty() => "tool_calls".to_string(),
        "completed" if text.is_empty() && !refusal.is_empty() => "refusal".to_string(),
        "completed" => "stop".to_string(),
        "incomplete" => match v.pointer("/incomplete_details/reason").and_then(Value::as_str) {
            Some("max_output_tokens") => "length".to_string(),
            Some(reason) => reason.to_string(),
            None => "incomplete".to_string(),
        },
        "failed" => {
            return Err(CallError {
                kind: CallErrorKind::Server,
                message: format!("the response failed without saying why: {}", shorten(raw, 200)),
            })
        }
        other => {
            return Err(malformed(format!(
                "the response is {other:?}, not finished (background responses are not asked for): {}",
                shorten(raw, 200)
            )))
        }
    };
    // A refusal is the reply's words when it has no others: the task's reader sees it.
    let text = if text.is_empty() { refusal } else { text };
    let usage = v.get("usage").and_then(|u| Some((u.get("input_tokens")?.as_u64()?, u.get("output_tokens")?.as_u64()?)));
    let finish_reason = Some(finish_reason.into());
    Ok(Part {
        completions: vec![Completion { text: text.into(), finish_reason, tool_calls, thinking }],
        usage,
        reasoning_tokens: v.pointer("/usage/output_tokens_details/reasoning_tokens").and_then(Value::as_u64),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
    })
}

/// A `reasoning` output item: its full text where the server gives it (`content` of
/// `reasoning_text` parts, as open servers do), else its summary; its id and encrypted
/// content kept for a later turn.
fn reasoning_item(item: &Value) -> Thinking {
    let texts = |key: &str| -> Vec<String> {
        let parts = item.get(key).and_then(Value::as_array).into_iter().flatten();
        parts.filter_map(|p| p.get("text").and_then(Value::as_str)).map(str::to_string).collect()
    };
    let content = texts("content");
    let text = if content.is_empty() { texts("summary") } else { content };
    Thinking {
        kind: ThinkingKind::Item,
        text: text.join("\n\n"),
        signature: item.get("encrypted_content").and_then(Value::as_str).map(str::to_string),
        id: item.get("id").and_then(Value::as_str).map(str::to_string),
    }
}

/// Accumulates a streamed response: text as it comes (for the watcher and for a cut
/// stream's message), then the whole response from the final event.
#[derive(Default)]
struct StreamState {
    text: String,
    /// Function calls by output index: name and arguments as they arrive.
    calls: BTreeMap<u64, (Option<String>, String, String)>,
    /// Reasoning text or summary as it streams.
    thinking: String,
    done: Option<Part>,
}

impl StreamRead for StreamState {
    fn event(&mut self, data: &str, sample: u32, deltas: Option<&DeltaFn>) -> Result<(), CallError> {
        let v: Value = serde_json::from_str(data).map_err(|e| {
            malformed(format!(
                "a stream event is not valid JSON ({e}) after {} characters: {}",
                self.text.len(),
                shorten(data, 200)
            ))
        })?;
        let index = v.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "response.output_text.delta" => {
                let piece = v.get("delta").and_then(Value::as_str).unwrap_or("");
                self.text.push_str(piece);
                if let (Some(d), false) = (deltas, piece.is_empty()) {
                    d(sample, Streamed::Text(piece));
                }
            }
            "response.output_item.added" if v.pointer("/item/type").and_then(Value::as_str) == Some("function_call") => {
                let id = v.pointer("/item/call_id").and_then(Value::as_str).map(str::to_string);
                let name = v.pointer("/item/name").and_then(Value::as_str).unwrap_or("").to_string();
                self.calls.insert(index, (id, name, String::new()));
            }
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => {
                self.thinking.push_str(v.get("delta").and_then(Value::as_str).unwrap_or(""));
            }
            "response.function_call_arguments.delta" => {
                if let (Some(call), Some(piece)) = (self.calls.get_mut(&index), v.get("delta").and_then(Value::as_str)) {
                    call.2.push_str(piece);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let r = v.get("response").ok_or_else(|| malformed(format!("{} without its response", shorten(data, 80))))?;
                self.done = Some(response(r, data)?);
            }
            "error" => {
                let said = server_message(data);
                return Err(CallError {
                    kind: reported_error_kind(&said, CallErrorKind::Server),
                    message: format!("the server reported an error mid-stream: {said}"),
                });
            }
            _ => {}
        }
        Ok(())
    }

    fn chars(&self) -> usize {
        self.text.len()
    }

    fn finish(self: Box<Self>) -> Result<Part, CallError> {
        let Some(mut part) = self.done else {
            return Err(truncated(format!(
                "the stream ended early, after {} characters, without response.completed",
                self.text.len()
            )));
        };
        // A server whose final event leaves out the output it streamed: keep what came.
        if let Some(c) = part.completions.first_mut().filter(|c| c.text.is_empty() && c.tool_calls.is_empty()) {
            c.text = self.text.into();
            c.tool_calls = self
                .calls
                .into_values()
                .map(|(id, name, args)| ToolCallOut { id, name, arguments: tool_arguments(Some(&Value::String(args))) })
                .collect();
            if !c.tool_calls.is_empty() {
                c.finish_reason = Some("tool_calls".into());
            }
        }
        if let Some(c) = part.completions.first_mut().filter(|c| c.thinking.is_empty() && !self.thinking.is_empty()) {
            c.thinking.push(Thinking::new(ThinkingKind::Item, self.thinking));
        }
        Ok(part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::api::Settings;
    use crate::protocol::{LlmRequest, Message, Purpose, ToolDef};

    fn request() -> LlmRequest {
        LlmRequest {
            purpose: Purpose::Act,
            messages: vec![Message::system("be brief"), Message::user("q"), Message::assistant("a"), Message::user("go")],
            n: 3,
            temperature: 0.7,
            max_tokens: Some(100),
            stop: vec!["\nObservation".into()],
            context: Value::Null,
            nonce: 0,
            tools: vec![ToolDef {
                name: "search".into(),
                description: "look up".into(),
                parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            }],
            sampling: Default::default(),
        }
    }

    #[test]
    fn the_request_takes_instructions_input_and_no_n_seed_or_stop() {
        let settings = Settings {
            seed: Some(7),
            max_tokens_param: "max_tokens".into(),
            stream_usage: true,
            reasoning: Default::default(),
        };
        let r = request();
        let b = Responses.body(&Call { request: &r, model: "gpt-5", n: 1, sample: 2, stream: true, settings: &settings });
        assert_eq!(b["instructions"], "be brief");
        assert_eq!(
            b["input"],
            json!([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "go"}])
        );
        assert_eq!((b["max_output_tokens"].clone(), b["store"].clone(), b["stream"].clone()), (json!(100), json!(false), json!(true)));
        assert_eq!(serde_json::to_string(&b["temperature"]).unwrap(), "0.7");
        assert_eq!(b["tools"][0], json!({"type": "function", "name": "search", "description": "look up", "parameters": r.tools[0].parameters}));
        for absent in ["n", "seed", "stop", "max_tokens", "messages", "stream_options"] {
            assert!(b.get(absent).is_none(), "{absent} is not a Responses field");
        }
        assert_eq!(Responses.stops_cut_here(&r.stop).len(), 1, "every stop is cut here");
    }

    #[test]
    fn whole_responses_read_text_calls_usage_and_how_they_ended() {
        let text = r#"{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-2025",
            "output":[{"type":"reasoning","id":"rs_1","summary":[]},
                      {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Thought 1: look","annotations":[]}]},
                      {"type":"function_call","call_id":"call_9","name":"search","arguments":"{\"query\":\"x\"}"}],
            "usage":{"input_tokens":30,"output_tokens":12,"output_tokens_details":{"reasoning_tokens":8}}}"#;
        let p = Responses.parse(text).unwrap();
        let c = &p.completions[0];
        assert_eq!((c.text.as_str(), c.finish_reason.as_deref()), ("Thought 1: look", Some("tool_calls")));
        assert_eq!(c.tool_calls[0].id.as_deref(), Some("call_9"));
        assert_eq!(c.tool_calls[0].arguments, json!({"query": "x"}));
        assert_eq!((p.usage, p.model.as_deref()), (Some((30, 12)), Some("gpt-5-2025")));

        let cut = r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},
            "output":[{"type":"message","content":[{"type":"output_text","text":"4 + 4"}]}]}"#;
        assert_eq!(Responses.parse(cut).unwrap().completions[0].finish_reason.as_deref(), Some("length"));
        let refused = r#"{"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"I can't"}]}]}"#;
        let c = &Responses.parse(refused).unwrap().completions[0];
        assert_eq!((c.text.as_str(), c.finish_reason.as_deref()), ("I can't", Some("refusal")));
        let failed = r#"{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}"#;
        assert!(Responses.parse(failed).unwrap_err().message.contains("boom"));
        assert_eq!(Responses.parse("{").unwrap_err().kind, CallErrorKind::Malformed);
        assert_eq!(Responses.parse(r#"{"status":"completed"}"#).unwrap_err().kind, CallErrorKind::Malformed);
        let queued = r#"{"status":"queued","output":[]}"#;
        assert!(Responses.parse(queued).unwrap_err().message.contains("\"queued\""));
    }

    #[test]
    fn a_streamed_response_shows_its_deltas_and_keeps_the_final_response() {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let s2 = seen.clone();
        let d: DeltaFn = std::sync::Arc::new(move |i, piece: Streamed<'_>| {
            if let Streamed::Text(t) = piece {
                s2.lock().unwrap().push_str(&format!("{i}:{t} "));
            }
        });
        let mut st: Box<dyn StreamRead> = Box::<StreamState>::default();
        for e in [
            r#"{"type":"response.created","response":{"status":"in_progress","output":[]}}"#,
            r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"4 + "}"#,
            r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"4 = 8"}"#,
            r#"{"type":"response.completed","response":{"status":"completed","model":"m",
                "output":[{"type":"message","content":[{"type":"output_text","text":"4 + 4 = 8"}]}],
                "usage":{"input_tokens":5,"output_tokens":4}}}"#,
        ] {
            st.event(e, 2, Some(&d)).unwrap();
        }
        assert_eq!(st.chars(), 9);
        let p = st.finish().unwrap();
        assert_eq!((p.completions[0].text.as_str(), p.usage), ("4 + 4 = 8", Some((5, 4))));
        assert_eq!(*seen.lock().unwrap(), "2:4 +  2:4 = 8 ");

        // Cut before the final event: a failure, not a short answer.
        let mut st: Box<dyn StreamRead> = Box::<StreamState>::default();
        st.event(r#"{"type":"response.output_text.delta","delta":"4 +"}"#, 0, None).unwrap();
        assert_eq!(st.finish().unwrap_err().kind, CallErrorKind::Truncated);
        // An error event names what the server said.
        let mut st = StreamState::default();
        let e = st.event(r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down"}"#, 0, None).unwrap_err();
        assert!(e.message.contains("slow down"), "{e}");
        // A final event without the output it streamed keeps what came, calls included.
        let mut st: Box<dyn StreamRead> = Box::<StreamState>::default();
        for e in [
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"search","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"query\":"}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"\"y\"}"}"#,
            r#"{"type":"response.completed","response":{"status":"completed","output":[]}}"#,
        ] {
            st.event(e, 0, None).unwrap();
        }
        let c = &st.finish().unwrap().completions[0];
        assert_eq!((c.tool_calls[0].arguments.clone(), c.finish_reason.as_deref()), (json!({"query": "y"}), Some("tool_calls")));
    }

    #[test]
    fn reasoning_items_are_the_replys_thinking() {
        let v = json!({"status": "completed", "output": [
            {"type": "reasoning", "id": "rs_9", "encrypted_content": "enc",
             "summary": [{"type": "summary_text", "text": "Try 4 * 6."}]},
            {"type": "reasoning", "id": "rs_10", "content": [{"type": "reasoning_text", "text": "Full text."}],
             "summary": [{"type": "summary_text", "text": "Short."}]},
            {"type": "message", "content": [{"type": "output_text", "text": "24"}]}],
            "usage": {"input_tokens": 3, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 15}}});
        let p = response(&v, "").unwrap();
        let c = &p.completions[0];
        assert_eq!((c.text.as_str(), c.thinking_text().as_str()), ("24", "Try 4 * 6.\n\nFull text."));
        assert_eq!((c.thinking[0].id.as_deref(), c.thinking[0].signature.as_deref()), (Some("rs_9"), Some("enc")));
        assert_eq!(p.reasoning_tokens, Some(15));
        // Streamed reasoning is kept when the final event leaves the output out.
        let mut st: Box<dyn StreamRead> = Box::<StreamState>::default();
        for data in [
            r#"{"type":"response.reasoning_summary_text.delta","delta":"Try 4 * 6."}"#,
            r#"{"type":"response.output_text.delta","delta":"24"}"#,
            r#"{"type":"response.completed","response":{"status":"completed","output":[]}}"#,
        ] {
            st.event(data, 0, None).unwrap();
        }
        let p = st.finish().unwrap();
        assert_eq!((p.completions[0].text.as_str(), p.completions[0].thinking_text().as_str()), ("24", "Try 4 * 6."));
    }
}
