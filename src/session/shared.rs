//! Large tool results written once per session. A ReAct prompt repeats every observation
//! so far, so a 4 MB tool result would be copied into each later request the session
//! records (a 21 MB session for one such result). A tool reply's text of at least
//! [`SHARE_MIN`] bytes is written in full once, in its `tool_reply` record; a later
//! request whose messages contain it is written with that text cut out and a `shared`
//! list on its record naming where it goes back (`{"message": i, "at": byte, "seq": n}`,
//! `seq` being the tool reply's input). The loader puts it back, so every reader sees the
//! request as it was sent. The field is new and optional: sessions without it read as before.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Record;
use crate::engine::Input;

/// The smallest tool result written once and referred to after.
pub const SHARE_MIN: usize = 64 * 1024;

/// Where a shared text goes back into a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SharedText {
    /// The request's message.
    pub message: usize,
    /// The byte in that message's text (as written: after the cuts listed before this one).
    pub at: usize,
    /// The input (a tool reply) whose result text it is.
    pub seq: u64,
}

/// The large tool results of a session so far, by the seq of their input.
#[derive(Debug, Default, Clone)]
pub struct SharedTexts {
    texts: Vec<(u64, String)>,
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

    /// The line of `record`: its request with the large results already written cut out.
    pub fn line(&self, record: &Record) -> String {
        let plain = || serde_json::to_string(record).unwrap_or_default();
        let Record::Input { request: Some(request), .. } = record else { return plain() };
        if self.texts.is_empty() {
            return plain();
        }
        let mut messages = request.messages.clone();
        let mut cuts = Vec::new();
        for (i, message) in messages.iter_mut().enumerate() {
            for (seq, text) in &self.texts {
                let mut from = 0;
                while message.content.len() >= text.len() {
                    let Some(found) = message.content.get(from..).and_then(|rest| rest.find(text.as_str())) else {
                        break;
                    };
                    let at = from + found;
                    message.content.replace_range(at..at + text.len(), "");
                    cuts.push(SharedText { message: i, at, seq: *seq });
                    from = at;
                }
            }
        }
        if cuts.is_empty() {
            return plain();
        }
        let Ok(mut value) = serde_json::to_value(record) else { return plain() };
        value["request"]["messages"] = serde_json::to_value(&messages).unwrap_or(Value::Null);
        value["shared"] = serde_json::to_value(&cuts).unwrap_or(Value::Null);
        value.to_string()
    }

    /// Put the texts a line's `shared` list names back into `record` (read from `line`).
    /// Says what could not be put back (a text whose tool reply is not in the file).
    pub fn restore(&self, line: &str, record: &mut Record) -> Result<(), String> {
        if !line.contains("\"shared\"") {
            return Ok(());
        }
        let Record::Input { request: Some(request), .. } = record else { return Ok(()) };
        let cuts: Vec<SharedText> = match serde_json::from_str::<Value>(line).map(|mut v| v["shared"].take()) {
            Ok(Value::Null) | Err(_) => return Ok(()),
            Ok(list) => serde_json::from_value(list).map_err(|e| format!("its shared texts are unreadable: {e}"))?,
        };
        // Last cut first: each offset holds in the text as it was after the cuts before it.
        for cut in cuts.iter().rev() {
            let text = self
                .texts
                .iter()
                .find(|(seq, _)| *seq == cut.seq)
                .map(|(_, t)| t)
                .ok_or_else(|| format!("its request names the result of input {}, which is not in the file", cut.seq))?;
            let message = request
                .messages
                .get_mut(cut.message)
                .filter(|m| m.content.is_char_boundary(cut.at))
                .ok_or_else(|| format!("its request has no place {} in message {}", cut.at, cut.message))?;
            message.content.insert_str(cut.at, text);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{LlmRequest, Message, Purpose, ToolReply, ToolResult};

    fn reply(seq: u64, text: &str) -> Record {
        let input = Input::ToolReply(ToolReply { call: seq, result: ToolResult { text: text.into(), ok: true, latency_ms: 0 } });
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
        };
        Record::Input { seq, input: crate::engine::Input::command(crate::engine::Command::Pause), request: Some(request) }
    }

    #[test]
    fn a_large_result_is_written_once_and_put_back_where_it_was() {
        let big = "x".repeat(SHARE_MIN) + "é tail";
        let other = "y".repeat(SHARE_MIN + 7);
        let records = [
            reply(0, &big),
            reply(1, "small"),
            reply(2, &other),
            asked(
                3,
                vec![
                    Message::system("tools"),
                    Message::user(format!("Observation 1: {big}\nObservation 2: small\nObservation 3: {other}\n{big}!")),
                ],
            ),
            asked(4, vec![Message::user("nothing shared")]),
        ];
        let mut writing = SharedTexts::default();
        let mut lines = Vec::new();
        for r in &records {
            lines.push(writing.line(r));
            writing.note(r);
        }
        let total: usize = lines.iter().map(String::len).sum();
        assert!(total < 2 * big.len() + other.len() + 2000, "each large text written once: {total}");
        assert!(!lines[4].contains("\"shared\":"), "a request without them is written as before");
        let mut reading = SharedTexts::default();
        for (line, original) in lines.iter().zip(&records) {
            let mut record = crate::session::format::parse_record(line, crate::session::VERSION).unwrap();
            reading.restore(line, &mut record).unwrap();
            reading.note(&record);
            assert_eq!(&record, original);
        }
        // A line naming a result the file does not have is said, not a panic.
        let mut record = crate::session::format::parse_record(&lines[3], crate::session::VERSION).unwrap();
        let e = SharedTexts::default().restore(&lines[3], &mut record).unwrap_err();
        assert!(e.contains("names the result of input"), "{e}");
    }
}
