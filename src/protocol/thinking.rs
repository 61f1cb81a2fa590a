//! A reply's thinking: what a reasoning model wrote before its answer, kept apart from
//! the answer so no reader (steps, values, actions, grading) ever sees it.
//!
//! It arrives in several shapes: Anthropic's `thinking` blocks (with a signature) and
//! `redacted_thinking` blocks (encrypted), a `reasoning_content` or `reasoning` field
//! beside the content (vLLM's reasoning parsers, DeepSeek, Ollama, OpenRouter, Groq),
//! the Responses API's `reasoning` items (a summary and encrypted content), or — from a
//! model served raw — tags at the start of the content (`<think>…</think>` and the other
//! families' tags), which [`split_tagged`] takes off.

use serde::{Deserialize, Serialize};

/// Where a piece of thinking came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingKind {
    /// An Anthropic `thinking` block: its text and its signature.
    Block,
    /// An Anthropic `redacted_thinking` block: no text, its encrypted `data` as the signature.
    Redacted,
    /// A `reasoning_content` (or `reasoning`) field beside the reply's content.
    Field,
    /// A Responses API `reasoning` item: its summary or text, its id and encrypted content.
    Item,
    /// Tags at the start of the content (`<think>…</think>`), split off by thoughtscope.
    Tag,
    /// The simulated model's thinking mode: not a language model's.
    Simulated,
}

impl ThinkingKind {
    /// How the source is named on screen and in exports.
    pub fn label(self) -> &'static str {
        match self {
            ThinkingKind::Block => "thinking block",
            ThinkingKind::Redacted => "redacted thinking",
            ThinkingKind::Field => "reasoning_content",
            ThinkingKind::Item => "reasoning item",
            ThinkingKind::Tag => "thinking tags",
            ThinkingKind::Simulated => "simulated thinking",
        }
    }
}

/// One piece of a reply's thinking, recorded verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thinking {
    pub kind: ThinkingKind,
    /// The thinking as the model wrote it (empty for redacted or encrypted-only pieces).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// What must go back unchanged in a later turn and is never shown: an Anthropic
    /// block's signature, a redacted block's data, a Responses item's encrypted content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The Responses API item's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Thinking {
    pub fn new(kind: ThinkingKind, text: impl Into<String>) -> Thinking {
        Thinking { kind, text: text.into(), signature: None, id: None }
    }
}

/// The text of a reply's thinking pieces, joined by a blank line.
pub fn thinking_text(pieces: &[Thinking]) -> String {
    pieces.iter().map(|t| t.text.trim()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
}

/// The pairs of tags open models put their thinking between, in the order they are
/// tried: DeepSeek-R1, Qwen3, QwQ and their kin (`<think>`), other fine-tunes
/// (`<thinking>`, `<reasoning>`, `<thought>`), Open-Thoughts and Bespoke models
/// (`<|begin_of_thought|>`), Kimi (`◁think▷`), Seed-OSS (`<seed:think>`), Magistral
/// (`[THINK]`) and Command A (`<|START_THINKING|>`). A profile's `think_tags` replaces them.
pub const DEFAULT_THINK_TAGS: &[(&str, &str)] = &[
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("<thought>", "</thought>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("◁think▷", "◁/think▷"),
    ("<seed:think>", "</seed:think>"),
    ("[THINK]", "[/THINK]"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
];

/// The default tags as owned pairs (a profile's setting has the same shape).
pub fn default_think_tags() -> Vec<(String, String)> {
    DEFAULT_THINK_TAGS.iter().map(|(o, c)| (o.to_string(), c.to_string())).collect()
}

/// A reply whose thinking was taken off its front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub thinking: String,
    pub answer: String,
    /// The thinking never ended (no closing tag): the reply stopped while thinking.
    pub unclosed: bool,
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.is_char_boundary(prefix.len())
        && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn find_ignore_case(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let (t, n) = (text.as_bytes(), needle.as_bytes());
    (0..=t.len().saturating_sub(n.len()))
        .find(|&i| t.len() >= i + n.len() && text.is_char_boundary(i) && t[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// OpenAI's harmony format (gpt-oss served raw): the `analysis` channel is thinking, the
/// `final` channel the answer.
fn split_harmony(text: &str) -> Option<Split> {
    const CHANNEL: &str = "<|channel|>";
    const MESSAGE: &str = "<|message|>";
    if !text.trim_start().starts_with(CHANNEL) && !text.contains("<|channel|>final") {
        return None;
    }
    let mut thinking = Vec::new();
    let mut answer = None;
    for segment in text.split(CHANNEL).skip(1) {
        let Some((channel, body)) = segment.split_once(MESSAGE) else { continue };
        let body = body.split("<|end|>").next().unwrap_or(body);
        let body = body.split("<|return|>").next().unwrap_or(body);
        let body = body.split("<|start|>").next().unwrap_or(body);
        match channel.split_whitespace().next().unwrap_or("") {
            "final" => answer = Some(body.trim().to_string()),
            _ => thinking.push(body.trim().to_string()),
        }
    }
    let unclosed = answer.is_none();
    Some(Split { thinking: thinking.join("\n\n"), answer: answer.unwrap_or_default(), unclosed })
}

/// Take the thinking off the front of a reply's text, given the tag pairs to look for.
/// `None` when the text has none: it is all answer.
///
/// - `<think>…</think>answer`: the thinking and the answer after the closing tag (several
///   leading blocks are all thinking).
/// - `<think>…` with no closing tag: all thinking, no answer (the reply stopped while thinking).
/// - `…</think>answer` with no opening tag: the chat template opened the block in the
///   prompt (DeepSeek-R1, Qwen3 thinking), so everything before the closing tag is thinking.
/// - OpenAI's harmony channels (`<|channel|>analysis<|message|>…`), always.
pub fn split_tagged(text: &str, tags: &[(String, String)]) -> Option<Split> {
    if let Some(split) = split_harmony(text) {
        return Some(split);
    }
    let mut rest = text.trim_start();
    let mut thinking: Vec<&str> = Vec::new();
    'blocks: loop {
        for (open, close) in tags {
            if open.is_empty() || !starts_with_ignore_case(rest, open) {
                continue;
            }
            let inner = &rest[open.len()..];
            match find_ignore_case(inner, close) {
                Some(end) => {
                    thinking.push(inner[..end].trim());
                    rest = inner[end + close.len()..].trim_start();
                    continue 'blocks;
                }
                None => {
                    thinking.push(inner.trim());
                    return Some(Split { thinking: thinking.join("\n\n"), answer: String::new(), unclosed: true });
                }
            }
        }
        break;
    }
    if !thinking.is_empty() {
        return Some(Split { thinking: thinking.join("\n\n"), answer: rest.to_string(), unclosed: false });
    }
    // Only a closing tag: the block was opened by the prompt's template.
    for (open, close) in tags {
        if let Some(end) = find_ignore_case(text, close) {
            if find_ignore_case(&text[..end], open).is_none() {
                return Some(Split {
                    thinking: text[..end].trim().to_string(),
                    answer: text[end + close.len()..].trim_start().to_string(),
                    unclosed: false,
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Option<(String, String, bool)> {
        split_tagged(text, &default_think_tags()).map(|s| (s.thinking, s.answer, s.unclosed))
    }

    fn pair(thinking: &str, answer: &str) -> Option<(String, String, bool)> {
        Some((thinking.to_string(), answer.to_string(), false))
    }

    #[test]
    fn every_familys_tags_come_off_the_front() {
        let answer = "4 + 5 = 9 (left: 6 9 10)";
        for (open, close) in DEFAULT_THINK_TAGS {
            let text = format!("{open}\nLet me try 4 + 5 first.\n{close}\n\n{answer}");
            assert_eq!(split(&text), pair("Let me try 4 + 5 first.", answer), "{open}");
        }
        assert_eq!(split("  <THINK>upper case</THINK>done"), pair("upper case", "done"));
        assert_eq!(split("<think>a</think><think>b</think> c"), pair("a\n\nb", "c"), "several leading blocks");
    }

    #[test]
    fn a_closing_tag_alone_means_the_template_opened_the_block() {
        assert_eq!(split("Okay, so 4 * 6 = 24.\n</think>\n\nAnswer: 24"), pair("Okay, so 4 * 6 = 24.", "Answer: 24"));
    }

    #[test]
    fn thinking_that_never_ends_leaves_no_answer() {
        assert_eq!(split("<think>Hmm, 4 and 6, wait"), Some(("Hmm, 4 and 6, wait".into(), String::new(), true)));
    }

    #[test]
    fn text_without_tags_is_all_answer() {
        for text in ["4 + 5 = 9", "I think <think> is a tag", "", "a <think>late</think> block is not thinking"] {
            assert_eq!(split(text), None, "{text:?}");
        }
    }

    #[test]
    fn harmony_channels_split_analysis_from_final() {
        let text = "<|channel|>analysis<|message|>We need 24.<|end|><|start|>assistant<|channel|>final<|message|>(4+4)*3 = 24<|return|>";
        assert_eq!(split(text), pair("We need 24.", "(4+4)*3 = 24"));
        let cut = split("<|channel|>analysis<|message|>Still thinking").unwrap();
        assert_eq!((cut.1.as_str(), cut.2), ("", true));
    }

    #[test]
    fn a_profiles_own_tags_replace_the_defaults() {
        let tags = vec![("<scratch>".to_string(), "</scratch>".to_string())];
        let s = split_tagged("<scratch>x</scratch>y", &tags).unwrap();
        assert_eq!((s.thinking.as_str(), s.answer.as_str()), ("x", "y"));
        assert_eq!(split_tagged("<think>x</think>y", &tags), None);
        assert_eq!(split_tagged("<think>x</think>y", &[]), None, "no tags: no splitting");
    }

    #[test]
    fn multibyte_text_never_splits_inside_a_character() {
        assert_eq!(split("é<think>"), None);
        assert_eq!(split("◁think▷ü◁/think▷ä"), pair("ü", "ä"));
    }
}
