//! Large tool results written once per session. A ReAct prompt repeats every observation
//! so far (in its messages, and in the structured context `sim` reads), so a 4 MB tool
//! result would be copied into each later request the session records (a 21 MB session for
//! one such result). A tool reply's text of at least [`SHARE_MIN`] bytes is written in
//! full once, in its `tool_reply` record; a later request holding it is written with that
//! text cut out and a `shared` list on its record naming where it goes back
//! (`{"path": "/messages/1/content", "at": byte, "seq": n}`: a JSON pointer into the
//! request, the byte in that string, and the tool reply's input). The loader puts it back
//! before the line is read, so every reader sees the request as it was sent. The field is
//! new and optional: sessions without it read as before.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Record;
use crate::engine::Input;

/// The smallest tool result written once and referred to after.
pub const SHARE_MIN: usize = 64 * 1024;

/// Where a shared text goes back into a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedText {
    /// A JSON pointer to a string of the request.
    pub path: String,
    /// The byte in that string (as written: after the cuts listed before this one).
    pub at: usize,
    /// The input (a tool reply) whose result text it is.
    pub seq: u64,
}

/// The large tool results of a session so far, by the seq of their input.
#[derive(Debug, Default, Clone)]
pub struct SharedTexts {
    texts: Vec<(u64, String)>,
}

/// A key as a JSON pointer writes it.
fn escaped(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl SharedTexts {
    /// Keep `record`'s tool result if it is large.
    pub fn note(&mut self, record: &Record) {
        if let Record::Input { seq, input: Input::ToolReply(reply), .. } = record {
            if reply.result.text.len() >= SHARE_MIN && !self.texts.iter().any(|(s, _)| s == seq) {
                self.texts.push((*seq, reply.result.text.clone()));
            }
        }
    }

    /// Cut the known texts out of every long string under `value` (at `path`).
    fn cut(&self, value: &mut Value, path: &mut String, cuts: &mut Vec<SharedText>) {
        match value {
            Value::String(string) if string.len() >= SHARE_MIN => {
                for (seq, text) in &self.texts {
                    let mut from = 0;
                    while string.len() >= text.len() {
                        let Some(found) = string.get(from..).and_then(|rest| rest.find(text.as_str())) else { break };
                        let at = from + found;
                        string.replace_range(at..at + text.len(), "");
                        cuts.push(SharedText { path: path.clone(), at, seq: *seq });
                        from = at;
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("/{i}"));
                    self.cut(item, path, cuts);
                    path.truncate(len);
                }
            }
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&escaped(key));
                    self.cut(item, path, cuts);
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }

    /// The line of `record`: its request with the large results already written cut out.
    pub fn line(&self, record: &Record) -> String {
        let plain = || serde_json::to_string(record).unwrap_or_default();
        if self.texts.is_empty() || !matches!(record, Record::Input { request: Some(_), .. }) {
            return plain();
        }
        let Ok(mut value) = serde_json::to_value(record) else { return plain() };
        let mut cuts = Vec::new();
        self.cut(&mut value["request"], &mut String::new(), &mut cuts);
        if cuts.is_empty() {
            return plain();
        }
        value["shared"] = serde_json::to_value(&cuts).unwrap_or(Value::Null);
        value.to_string()
    }

    /// `line` with the texts its `shared` list names put back (None: it names none), or
    /// what could not be put back (a text whose tool reply is not in the file).
    pub fn restore(&self, line: &str) -> Result<Option<String>, String> {
        if !line.contains("\"shared\"") {
            return Ok(None);
        }
        let Ok(mut value) = serde_json::from_str::<Value>(line) else { return Ok(None) };
        let Some(listed) = value.as_object_mut().and_then(|o| o.remove("shared")) else { return Ok(None) };
        let cuts: Vec<SharedText> =
            serde_json::from_value(listed).map_err(|e| format!("its shared texts are unreadable: {e}"))?;
        // Last cut first: each place holds in the text as it was after the cuts before it.
        for cut in cuts.iter().rev() {
            let text = self.texts.iter().find(|(seq, _)| *seq == cut.seq).map(|(_, t)| t).ok_or_else(|| {
                format!("its request names the result of input {}, which is not in the file", cut.seq)
            })?;
            let place = match value["request"].pointer_mut(&cut.path) {
                Some(Value::String(s)) if s.is_char_boundary(cut.at) => s,
                _ => return Err(format!("its request has no place {} in {}", cut.at, cut.path)),
            };
            place.insert_str(cut.at, text);
        }
        Ok(Some(value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ToolReply;
    use crate::protocol::{LlmRequest, Message, Purpose, ToolResult};

    fn reply(seq: u64, text: &str) -> Record {
        let input = Input::ToolReply(ToolReply {
            call: seq,
            result: ToolResult { text: text.into(), ok: true, latency_ms: 0 },
        });
        Record::Input { seq, input, request: None }
    }

    fn asked(seq: u64, messages: Vec<Message>) -> Record {
        let request = LlmRequest {
            purpose: Purpose::Act,
            messages,
            n: 1,
            temperature: 0.0,
            max_tokens: None,
            stop: vec![],
            context: Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        };
        Record::Input {
            seq,
            input: crate::engine::Input::command(crate::engine::Command::Pause),
            request: Some(request),
        }
    }

    #[test]
    fn a_large_result_is_written_once_and_put_back_where_it_was() {
        let big = "x".repeat(SHARE_MIN) + "é tail";
        let other = "y".repeat(SHARE_MIN + 7);
        let mut prompt = asked(
            3,
            vec![
                Message::system("tools"),
                Message::user(format!("Observation 1: {big}\nObservation 2: small\nObservation 3: {other}\n{big}!")),
            ],
        );
        if let Record::Input { request: Some(request), .. } = &mut prompt {
            request.context =
                serde_json::json!({"trajectory": [{"observation/text": big.clone()}, {"observation": "small"}]});
        }
        let records = [
            reply(0, &big),
            reply(1, "small"),
            reply(2, &other),
            prompt,
            asked(4, vec![Message::user("nothing shared")]),
        ];
        let mut writing = SharedTexts::default();
        let mut lines = Vec::new();
        for r in &records {
            lines.push(writing.line(r));
            writing.note(r);
        }
        let total: usize = lines.iter().map(String::len).sum();
        assert!(total < big.len() + other.len() + 2000, "each large text written once: {total}");
        assert!(lines[3].contains("/context/trajectory/0/observation~1text"), "the context too: {}", &lines[3][..300]);
        assert!(!lines[4].contains("\"shared\":"), "a request without them is written as before");
        let mut reading = SharedTexts::default();
        for (line, original) in lines.iter().zip(&records) {
            let restored = reading.restore(line).unwrap();
            let record =
                crate::session::format::parse_record(restored.as_deref().unwrap_or(line), crate::session::VERSION)
                    .unwrap();
            reading.note(&record);
            assert_eq!(&record, original);
        }
        // A line naming a result the file does not have is said, not a panic.
        let e = SharedTexts::default().restore(&lines[3]).unwrap_err();
        assert!(e.contains("names the result of input"), "{e}");
    }
}
