//! ReTreVal: the method ([`method`], `--method retreval`; see its "How ReTreVal runs here") and its building blocks.
//!
//! ReTreVal (Reasoning Tree with Validation) grows a tree whose depth and branching
//! come from the model's own complexity estimate, scores each node by a local
//! self-assessment and a cross critique against its siblings minus a skepticism
//! penalty for unreliable approaches, validates the best leaf, backtracks to a
//! sibling approach with the typed failure in its critique history, and decomposes
//! hard problems into subtasks. This folder holds the pure pieces that method is
//! built from — parameters, prompts, reply parsers and the small decisions — with no
//! model calls and no state; the `Method` impl, its `REGISTRY` line, the explorer
//! panes and `sim`'s answers come with the method. The approaches' reliability (an
//! exponential average) lives in the memory store (`crate::memory`); the scoring
//! here takes it as a number.
//!
//! * [`params`]: the declarations of ReTreVal's own parameters ([`params::OWN`]), the
//!   [`RetrevalParams`] read from them, and a status-bar [`RetrevalParams::label`].
//! * [`complexity`]: the depth × branching tables and the 1–5 estimate's prompt and parser.
//! * [`scoring`]: [`Score`] (local, cross, penalty, total), the local self-assessment and
//!   cross-critique prompts and parsers, and the approach-type classifier.
//! * [`failure`]: [`FailureCause`], the validation and failure-classification prompts and
//!   parsers, [`pick_backtrack_target`] and the critique-history note.
//! * [`decompose`]: the subtask prompt, its parser into a dependency-ordered
//!   [`Subtask`] list, each subtask's problem text and the composing prompt.
//!
//! ## Prompts and what `sim` sees
//! No purpose is ReTreVal's own: each prompt takes the closest existing [`Purpose`] and
//! marks itself with `"retreval": "<kind>"` in its context, on top of the task's
//! chain-of-thought context (so `"task"`, `"problem"` and the like are there too). A
//! provider that answers from the context (`sim`) must look at `"retreval"` first.
//!
//! | kind         | purpose    | extra context fields            | parser                          |
//! |--------------|------------|---------------------------------|---------------------------------|
//! | `complexity` | `value`    | —                               | [`parse_complexity`]            |
//! | `local`      | `value`    | `trace`                         | [`parse_local_score`]           |
//! | `cross`      | `vote`     | `trace`, `siblings`             | [`parse_cross`]                 |
//! | `approach`   | `value`    | `trace`, `approaches`           | [`parse_approach`]              |
//! | `validate`   | `feedback` | `attempt`, `causes`             | [`parse_validation`]            |
//! | `failure`    | `reflect`  | `attempt`, `feedback`, `causes` | [`parse_failure`]               |
//! | `decompose`  | `propose`  | `max_subtasks`                  | [`parse_subtasks`]              |
//! | `compose`    | `cot`      | `subtasks` (goal and result)    | the task's own answer parsing   |
//!
//! Every parser takes arbitrary text: it never panics, reads at most
//! [`MAX_REPLY_CHARS`] of it, and says "unreadable" (`None` or an error line) rather
//! than guess. Texts placed into prompts are clipped (see [`MAX_TRACE_CHARS`]).

pub mod complexity;
pub mod decompose;
pub mod failure;
pub mod method;
pub mod params;
pub mod scoring;

#[cfg(test)]
mod method_tests;
#[cfg(test)]
mod tests;

pub use complexity::{complexity_prompt, parse_complexity, Complexity, ComplexityReading, ComplexityTable, Shape};
pub use decompose::{compose_prompt, decompose_prompt, parse_subtasks, subtask_problem, SolvedSubtask, Subtask};
pub use failure::{
    failure_note, failure_prompt, parse_failure, parse_failure_cause, parse_validation, pick_backtrack_target,
    validation_prompt, BacktrackCandidate, FailureCause, TypedFailure, Validation,
};
pub use method::{Retreval, INFO};
pub use params::RetrevalParams;
pub use scoring::{
    approach_from_trace, approach_prompt, cross_prompt, local_prompt, parse_approach, parse_cross, parse_local_score,
    Approach, CrossCritique, LocalReading, Score, Weights,
};

use crate::engine::task::Task;
use crate::protocol::{Message, Prompt, Purpose};

/// The most of a reply any parser here reads (characters); the rest is ignored.
pub const MAX_REPLY_CHARS: usize = 100_000;

/// The most of one reasoning trace (or critique, or result) put into a prompt (characters).
pub const MAX_TRACE_CHARS: usize = 12_000;

/// The context key that marks a prompt as ReTreVal's, with its kind as the value.
pub const CONTEXT_KEY: &str = "retreval";

/// `text` cut to at most `max` characters (on a character boundary), with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// The first [`MAX_REPLY_CHARS`] of a reply: what the parsers read.
fn bounded(reply: &str) -> &str {
    match reply.char_indices().nth(MAX_REPLY_CHARS) {
        None => reply,
        Some((at, _)) => &reply[..at],
    }
}

/// The system message of ReTreVal's own prompts (validation, scoring, failure analysis,
/// decomposition) in the chat style: their user message names the labelled fields.
pub const CHAT_SYSTEM: &str = "You check and guide a step-by-step problem solver. Answer exactly in the labelled \
fields the message asks for (`Field: value`), one per line, in the order asked, with nothing before or after them: no \
preamble, no markdown, no code fences. Give each field a real value, never the list of choices it was given.";

/// A ReTreVal prompt: one user message (after [`CHAT_SYSTEM`] in the chat style), the task's chain-of-thought context with
/// `"retreval": kind` and `fields` added.
fn prompt(task: &dyn Task, x: &str, purpose: Purpose, kind: &str, text: String, fields: serde_json::Value) -> Prompt {
    let mut context = match task.cot_prompt(x).context {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    context.insert(CONTEXT_KEY.into(), kind.into());
    if let serde_json::Value::Object(more) = fields {
        context.extend(more);
    }
    let messages = match task.prompt_style() {
        crate::engine::PromptStyle::Reference => vec![Message::user(text)],
        crate::engine::PromptStyle::Chat => vec![Message::system(CHAT_SYSTEM), Message::user(text)],
    };
    Prompt {
        purpose,
        messages,
        context: serde_json::Value::Object(context),
        stop: Vec::new(),
        max_tokens: Some(1024),
        sampling: Default::default(),
    }
}

/// One token of a reply as the parsers see it.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    /// A number, and whether it was written as a word (`three`).
    Number(f64, bool),
    Slash,
}

/// Lower-cased tokens of `text`: words, numbers (digits, a sign and a decimal point, or
/// the words zero to ten) and `/`. Markdown, punctuation and brackets separate tokens.
fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut current = String::new();
    let flush = |current: &mut String, out: &mut Vec<Token>| {
        let word = current.trim_end_matches(['.', '-']).trim_start_matches('.');
        if !word.is_empty() && word != "-" {
            out.push(match number(word) {
                Some(n) => Token::Number(n, word.starts_with(|c: char| c.is_alphabetic())),
                None => Token::Word(word.to_string()),
            });
        }
        current.clear();
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || c == '_' || ((c == '.' || c == '-') && !current.is_empty()) {
            current.push(c);
        } else if c == '-' || c == '−' {
            flush(&mut current, &mut out);
            current.push('-');
        } else {
            flush(&mut current, &mut out);
            if c == '/' {
                out.push(Token::Slash);
            }
        }
    }
    flush(&mut current, &mut out);
    out
}

/// A token as a number: digits (with a sign and a decimal point) or a word zero to ten.
fn number(word: &str) -> Option<f64> {
    const WORDS: [&str; 11] = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
    if let Some(i) = WORDS.iter().position(|w| *w == word) {
        return Some(i as f64);
    }
    let digits = word.strip_prefix('-').unwrap_or(word);
    if digits.is_empty()
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        || !digits.starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    word.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// The number tokens of `toks` written in digits, or if there are none, those written as words.
fn numbers(toks: &[Token]) -> Vec<f64> {
    let pick = |words: bool| -> Vec<f64> {
        toks.iter()
            .filter_map(|t| match t {
                Token::Number(n, w) if *w == words => Some(*n),
                _ => None,
            })
            .collect()
    };
    let digits = pick(false);
    if digits.is_empty() {
        pick(true)
    } else {
        digits
    }
}

/// A number read from a reply on a scale up to `top`: after one of the `labels` (the
/// last such line wins; digits before number words, so `Complexity: this one is 3` is
/// 3), as `N/top` or `N out of top`, in bold (`**N**`), or as the reply's only number.
/// The number as written (the caller clamps it).
fn read_rating(reply: &str, labels: &[&str], top: f64) -> Option<f64> {
    let reply = bounded(reply);
    // 1. A labelled line: `Complexity: 3`, `**Score:** 7/10`, `Rating - seven`.
    for line in reply.lines().rev() {
        let toks = tokens(line);
        let Some(at) = toks.iter().rposition(|t| matches!(t, Token::Word(w) if labels.contains(&w.as_str()))) else {
            continue;
        };
        if let Some(n) = numbers(&toks[at + 1..]).first() {
            return Some(*n);
        }
    }
    let toks = tokens(reply);
    // 2. `N/top` or `N out of top` (the last one).
    let fraction = toks.windows(3).rev().find_map(|w| match w {
        [Token::Number(n, _), Token::Slash, Token::Number(d, _)] if *d == top => Some(*n),
        _ => None,
    });
    let out_of = || {
        toks.windows(4).rev().find_map(|w| match w {
            [Token::Number(n, _), Token::Word(o), Token::Word(f), Token::Number(d, _)]
                if o == "out" && f == "of" && *d == top =>
            {
                Some(*n)
            }
            _ => None,
        })
    };
    if let Some(n) = fraction.or_else(out_of) {
        return Some(n);
    }
    // 3. Bold: `**3**` (the last one).
    let parts: Vec<&str> = reply.split("**").collect();
    let closed = parts.len().saturating_sub(1) / 2;
    let bold = parts.iter().skip(1).step_by(2).take(closed).collect::<Vec<_>>();
    if let Some(n) = bold.iter().rev().find_map(|inner| match tokens(inner).as_slice() {
        [Token::Number(n, _)] => Some(*n),
        _ => None,
    }) {
        return Some(n);
    }
    // 4. The reply's only number.
    match numbers(&toks).as_slice() {
        [n] => Some(*n),
        _ => None,
    }
}

/// The text of a labelled line (`Critique: ...`, `**Exit condition:** ...`,
/// `- Depends on — 1`): after one of `labels` (matched without case at the line's
/// start, past markdown and list marks) and a separator (`:`, `-`, `—`, `=`). Put
/// longer labels before their prefixes.
fn field<'a>(line: &'a str, labels: &[&str]) -> Option<&'a str> {
    let start = line.trim_start_matches(|c: char| !c.is_alphanumeric());
    let markdown = |c: char| c == '*' || c == '_' || c == '`' || c.is_whitespace();
    labels.iter().find_map(|label| {
        let head = start.get(..label.len())?;
        if !head.eq_ignore_ascii_case(label) {
            return None;
        }
        let rest = &start[label.len()..];
        if rest.starts_with(|c: char| c.is_alphanumeric()) {
            return None;
        }
        let rest = rest.trim_start_matches(markdown);
        let rest = rest.strip_prefix([':', '-', '—', '–', '='])?;
        Some(rest.trim_start_matches(markdown).trim_end_matches(markdown))
    })
}
