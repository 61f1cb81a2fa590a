//! What comes back from a model: completions (text, finish reason, native tool calls),
//! token usage and latency.

use serde::{Deserialize, Serialize};

use super::{Text, Thinking, ToolCallOut};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// Shared: a reply's samples are often the same text, and the run keeps each reply.
    pub text: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<Text>,
    /// Native tool calls the reply made (empty for plain text replies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallOut>,
    /// The model's thinking before its answer, apart from `text` (which is the answer
    /// alone): no reader sees it. Empty for models that do not think apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<Thinking>,
}

impl Completion {
    /// A plain text reply.
    pub fn text(text: impl Into<String>, finish_reason: Option<String>) -> Self {
        Completion {
            text: text.into().into(),
            finish_reason: finish_reason.map(Into::into),
            tool_calls: Vec::new(),
            thinking: Vec::new(),
        }
    }

    /// The thinking's text, its pieces joined by a blank line (empty without thinking).
    pub fn thinking_text(&self) -> String {
        super::thinking_text(&self.thinking)
    }

    /// Take thinking tags off the front of the text (a model served raw), when the reply
    /// carries no thinking of its own: the text keeps the answer alone.
    pub fn split_thinking_tags(&mut self, tags: &[(String, String)]) {
        if !self.thinking.is_empty() {
            // Thinking came apart already; tags still at the front are the answer's business.
            return;
        }
        if let Some(split) = super::split_tagged(&self.text, tags) {
            self.thinking.push(Thinking::new(super::ThinkingKind::Tag, split.thinking));
            self.text = split.answer.into();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// True when the numbers are an estimate (a simulated model, or a server that did not say).
    #[serde(default)]
    pub estimated: bool,
    /// Of `completion_tokens`, those the model spent thinking (the server's
    /// `reasoning_tokens`, or estimated from the thinking's text where it did not say).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmResponse {
    pub completions: Vec<Completion>,
    pub usage: Usage,
    pub latency_ms: u64,
    pub model: String,
    /// Produced by the `sim` provider: not a language model.
    #[serde(default)]
    pub simulated: bool,
    /// Answered from the cache: no call was made.
    #[serde(default)]
    pub cached: bool,
    /// Samples asked for and never received: the call fetched its samples one request
    /// each and a later request failed after its retries. The samples that came are kept
    /// here with their tokens, and this says how many did not and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<LostSamples>,
}

/// Samples of a call that did not come (see [`LlmResponse::lost`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LostSamples {
    /// How many of the samples asked for did not come.
    pub samples: u32,
    /// Why: the failure of the first request that did not answer.
    pub error: super::CallError,
}

impl LlmResponse {
    /// Store repeated samples once: a completion whose text or finish reason an earlier
    /// one's (among the last 64) equals shares that one's. The run keeps every reply, and
    /// `n` samples of one prompt often repeat themselves.
    pub fn share_repeated_texts(&mut self) {
        const WINDOW: usize = 64;
        for i in 1..self.completions.len() {
            let (before, rest) = self.completions.split_at_mut(i);
            let c = &mut rest[0];
            let earlier = &before[i.saturating_sub(WINDOW)..];
            if let Some(e) = earlier.iter().rev().find(|e| e.text == c.text) {
                c.text = e.text.clone();
            }
            if let Some(reason) = &c.finish_reason {
                if let Some(r) = earlier.iter().rev().find_map(|e| e.finish_reason.as_ref().filter(|r| *r == reason)) {
                    c.finish_reason = Some(r.clone());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replys_repeated_samples_are_stored_once() {
        let stop = || Some("stop".to_string());
        let mut r = LlmResponse {
            completions: vec![
                Completion::text("4 + 5 = 9", stop()),
                Completion::text("5 * 4 = 20", stop()),
                Completion::text("4 + 5 = 9", stop()),
                Completion::text("4 + 5 = 9", None),
            ],
            usage: Usage::default(),
            latency_ms: 0,
            model: "m".into(),
            simulated: false,
            cached: false,
            lost: None,
        };
        let before = r.clone();
        r.share_repeated_texts();
        assert_eq!(r, before, "the reply reads the same");
        let c = &r.completions;
        assert!(c[2].text.shares(&c[0].text) && c[3].text.shares(&c[0].text));
        assert!(!c[1].text.shares(&c[0].text));
        let reason = |i: usize| c[i].finish_reason.clone().unwrap();
        assert!(reason(1).shares(&reason(0)) && reason(2).shares(&reason(0)));
        assert!(c[3].finish_reason.is_none());
    }
}
