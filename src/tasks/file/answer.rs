//! How a task file reads an answer from a reply (`[answer]`) and checks it against the
//! gold answer (`[check]`).

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::tasks::react_text::{f1, normalize_answer};

/// Where the answer is in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnswerRead {
    /// The math grader's reading: the last `\boxed{}`, "the final answer is", "the
    /// answer is", "Answer:", a lone answer, the last number or line.
    #[default]
    Auto,
    /// The last `\boxed{...}`.
    Boxed,
    /// What follows the last "the answer is" (to the end of the sentence).
    AnswerIs,
    /// The last line with `Answer:`, after it (else the last line).
    AnswerLine,
    /// The last non-empty line.
    LastLine,
    /// The first group (or the group named `answer`) of the last match of `pattern`.
    Regex,
    /// The string (or number) at `field` of the last JSON object in the reply.
    Json,
}

pub const READS: &[&str] = &["auto", "boxed", "answer-is", "answer-line", "last-line", "regex", "json"];

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerRule {
    #[serde(default)]
    pub read: AnswerRead,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// How an answer is checked against the gold answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckKind {
    /// The same text after normalisation (case, punctuation, articles, spaces).
    Exact,
    /// The same number within `tolerance`.
    Numeric,
    /// The math grader (`thoughtscope grade`): equal values, fractions, expressions, sets.
    Math,
    /// The same choice letter (`A`..), read from "B", "(B)", "B) text", "answer: B".
    Choice,
    /// The gold answer is a regex the whole answer must match.
    Regex,
    /// The gold answer lists accepted answers, split by `separator` (default `|`).
    List,
    /// An external command judges: stdin `{"answer", "gold", "input"}`, stdout a JSON
    /// object `{"correct": bool, "score": 0..1}` (or a first word `correct`/`incorrect`).
    Command,
    /// A model judges by `rubric`: its own recorded call when the method is done (the
    /// `judge` prompt, or a built-in one), read by its `VERDICT: correct|incorrect` line.
    Judge,
}

pub const CHECKS: &[&str] = &["exact", "numeric", "math", "choice", "regex", "list", "command", "judge"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRule {
    pub kind: CheckKind,
    /// exact, list, regex: letters' case matters.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub case_sensitive: bool,
    /// exact, list: punctuation, articles and repeated spaces matter.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_punctuation: bool,
    /// numeric: the largest difference still equal (default 1e-6, relative above 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// list: what separates the accepted answers in the gold field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    /// command: the program and its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// command: how long it may take, in milliseconds (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// judge: what a right answer is, for the judge's prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric: Option<String>,
}

/// Check the rules against each other: `(section, key, message)` for the first problem.
pub fn validate(answer: &AnswerRule, check: &CheckRule) -> Result<(), (&'static str, &'static str, String)> {
    match answer.read {
        AnswerRead::Regex => {
            let Some(p) = &answer.pattern else {
                return Err(("answer", "read", "read = \"regex\" needs pattern = \"...\" with a group".into()));
            };
            let re = regex::Regex::new(p).map_err(|e| ("answer", "pattern", format!("not a valid regex: {e}")))?;
            if re.captures_len() < 2 {
                return Err(("answer", "pattern", "needs a group around the answer, e.g. Final: (.+)".into()));
            }
        }
        AnswerRead::Json if answer.field.is_none() => {
            return Err(("answer", "read", "read = \"json\" needs field = \"...\"".into()));
        }
        _ => {}
    }
    if answer.pattern.is_some() && answer.read != AnswerRead::Regex {
        return Err(("answer", "pattern", "pattern is for read = \"regex\"".into()));
    }
    if answer.field.is_some() && answer.read != AnswerRead::Json {
        return Err(("answer", "field", "field is for read = \"json\"".into()));
    }
    let only = |on: bool, key: &'static str, kinds: &str| {
        if on {
            Err(("check", key, format!("{key} is for kind = {kinds}")))
        } else {
            Ok(())
        }
    };
    let k = check.kind;
    only(check.tolerance.is_some() && k != CheckKind::Numeric, "tolerance", "\"numeric\"")?;
    only(check.separator.is_some() && k != CheckKind::List, "separator", "\"list\"")?;
    only(!check.command.is_empty() && k != CheckKind::Command, "command", "\"command\"")?;
    only(check.timeout_ms.is_some() && k != CheckKind::Command, "timeout_ms", "\"command\"")?;
    only(check.rubric.is_some() && k != CheckKind::Judge, "rubric", "\"judge\"")?;
    if k == CheckKind::Judge && check.rubric.as_deref().is_none_or(|r| r.trim().is_empty()) {
        return Err(("check", "rubric", "kind = \"judge\" needs rubric = \"what a right answer is\"".into()));
    }
    let texts = matches!(k, CheckKind::Exact | CheckKind::List | CheckKind::Regex);
    only(check.case_sensitive && !texts, "case_sensitive", "\"exact\", \"list\" or \"regex\"")?;
    only(
        check.keep_punctuation && !matches!(k, CheckKind::Exact | CheckKind::List),
        "keep_punctuation",
        "\"exact\" or \"list\"",
    )?;
    if let Some(t) = check.tolerance {
        if !t.is_finite() || t < 0.0 {
            return Err(("check", "tolerance", format!("{t} is out of range: a tolerance is 0 or more")));
        }
    }
    if check.separator.as_deref() == Some("") {
        return Err(("check", "separator", "the separator is empty".into()));
    }
    if k == CheckKind::Command {
        if check.command.first().is_none_or(|c| c.trim().is_empty()) {
            return Err(("check", "command", "kind = \"command\" needs command = [\"program\", \"arg\", ...]".into()));
        }
        if check.timeout_ms.is_some_and(|t| !(1..=600_000).contains(&t)) {
            return Err(("check", "timeout_ms", "out of range: 1 to 600000 milliseconds".into()));
        }
    }
    Ok(())
}

impl AnswerRule {
    /// The answer `reply` states, if any.
    pub fn read(&self, reply: &str) -> Option<String> {
        let found = match self.read {
            AnswerRead::Auto => crate::grade::extract_answer(reply),
            AnswerRead::Boxed => last_boxed(reply),
            AnswerRead::AnswerIs => {
                let lower = reply.to_lowercase();
                lower.rfind("answer is").map(|at| {
                    let rest = reply[at + "answer is".len()..].trim_start_matches([':', ' ']);
                    let end = rest.find(['\n']).unwrap_or(rest.len());
                    rest[..end].trim().trim_end_matches('.').trim().to_string()
                })
            }
            AnswerRead::AnswerLine => crate::tasks::reply::answer_line(reply),
            AnswerRead::LastLine => Some(crate::tasks::reply::last_line(reply).to_string()),
            AnswerRead::Regex => {
                let re = regex::Regex::new(self.pattern.as_deref().unwrap_or("(.+)")).ok()?;
                let caps = re.captures_iter(reply).last()?;
                caps.name("answer").or_else(|| caps.get(1)).map(|m| m.as_str().trim().to_string())
            }
            AnswerRead::Json => last_json_field(reply, self.field.as_deref().unwrap_or("answer")),
        };
        found.map(|a| a.trim().to_string()).filter(|a| !a.is_empty())
    }

    /// A reply that states `answer` so that [`AnswerRule::read`] reads it back (the
    /// simulated model's way of answering); `None` for a regex, which has no one form.
    pub fn write(&self, answer: &str) -> Option<String> {
        let text = match self.read {
            AnswerRead::Auto | AnswerRead::AnswerIs => format!("The answer is {answer}."),
            AnswerRead::Boxed => format!("So the answer is \\boxed{{{answer}}}."),
            AnswerRead::AnswerLine => format!("Answer: {answer}"),
            AnswerRead::LastLine => answer.to_string(),
            AnswerRead::Json => serde_json::json!({ self.field.as_deref().unwrap_or("answer"): answer }).to_string(),
            AnswerRead::Regex => return None,
        };
        (self.read(&text).as_deref() == Some(answer.trim())).then_some(text)
    }
}

/// The content of the last `\boxed{...}` (braces inside balanced).
fn last_boxed(reply: &str) -> Option<String> {
    let at = reply.rfind("\\boxed{")? + "\\boxed{".len();
    let mut depth = 1;
    for (i, c) in reply[at..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(reply[at..at + i].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// `field` of the last JSON object in `reply` that has it.
fn last_json_field(reply: &str, field: &str) -> Option<String> {
    let mut found = None;
    for (start, _) in reply.match_indices('{') {
        let mut stream = serde_json::Deserializer::from_str(&reply[start..]).into_iter::<serde_json::Value>();
        if let Some(Ok(v)) = stream.next() {
            if let Some(t) = v.get(field).and_then(super::def::text_of) {
                found = Some(t);
            }
        }
    }
    found
}

/// How long a check or step command may take by default, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// What a task's checking keeps: the judge's verdicts as they are read. (A check
/// command's verdicts are inputs of the run, kept by the engine: see
/// [`crate::engine::check`].)
#[derive(Debug, Default)]
pub struct Checker {
    /// The judge's verdicts, by (problem, answer), as its recorded replies were read.
    judged: Mutex<HashMap<(String, String), bool>>,
}

impl Checker {
    /// The judge's verdict on an answer to `input` (by its normal form, `key`), if read.
    pub fn judged(&self, input: &str, key: &str) -> Option<bool> {
        let judged = self.judged.lock().unwrap_or_else(|p| p.into_inner());
        judged.get(&(input.trim().to_string(), key.to_string())).copied()
    }

    /// Keep the judge's verdict on an answer to `input` (by its normal form; the latest
    /// reading stands).
    pub fn set_judged(&self, input: &str, key: &str, right: bool) {
        let mut judged = self.judged.lock().unwrap_or_else(|p| p.into_inner());
        judged.insert((input.trim().to_string(), key.to_string()), right);
    }
}

impl CheckRule {
    /// A check of `kind` with every option at its default.
    pub fn of(kind: CheckKind) -> CheckRule {
        CheckRule {
            kind,
            case_sensitive: false,
            keep_punctuation: false,
            tolerance: None,
            separator: None,
            command: vec![],
            timeout_ms: None,
            rubric: None,
        }
    }

    fn texts_equal(&self, a: &str, b: &str) -> bool {
        let norm = |s: &str| match (self.keep_punctuation, self.case_sensitive) {
            (false, false) => normalize_answer(s),
            (false, true) => normalize_answer_keep_case(s),
            (true, false) => s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase(),
            (true, true) => s.split_whitespace().collect::<Vec<_>>().join(" "),
        };
        norm(a) == norm(b)
    }

    /// Whether `answer` is right for `gold` (`input`: the problem, for a command).
    pub fn check(&self, checker: &Checker, input: &str, answer: &str, gold: &str) -> Result<(), String> {
        let wrong = || Err(format!("{answer:?} is not {gold:?}"));
        match self.kind {
            CheckKind::Exact => {
                if self.texts_equal(answer, gold) {
                    Ok(())
                } else {
                    wrong()
                }
            }
            CheckKind::Numeric => {
                let (Some(a), Some(g)) = (number(answer), number(gold)) else {
                    return Err(format!("{answer:?} is not a number like the gold answer {gold:?}"));
                };
                let tol = self.tolerance.unwrap_or(1e-6);
                if (a - g).abs() <= tol * g.abs().max(1.0) {
                    Ok(())
                } else {
                    wrong()
                }
            }
            CheckKind::Math => {
                if crate::grade::equivalent(gold, answer) {
                    Ok(())
                } else {
                    wrong()
                }
            }
            CheckKind::Choice => match (choice_letter(answer), choice_letter(gold)) {
                (Some(a), Some(g)) if a == g => Ok(()),
                (None, _) => Err(format!("{answer:?} names no choice letter")),
                _ => wrong(),
            },
            CheckKind::Regex => {
                let pattern = format!("^(?:{gold})$");
                let re = regex::RegexBuilder::new(&pattern)
                    .case_insensitive(!self.case_sensitive)
                    .build()
                    .map_err(|e| format!("the gold answer {gold:?} is not a valid regex: {e}"))?;
                if re.is_match(answer.trim()) {
                    Ok(())
                } else {
                    Err(format!("{answer:?} does not match {gold:?}"))
                }
            }
            CheckKind::List => {
                let sep = self.separator.as_deref().unwrap_or("|");
                if gold.split(sep).any(|g| self.texts_equal(answer, g)) {
                    Ok(())
                } else {
                    Err(format!("{answer:?} is none of the accepted answers {gold:?}"))
                }
            }
            CheckKind::Judge => match checker.judged(input, &self.key(answer)) {
                Some(true) => Ok(()),
                Some(false) => Err(format!("the judge says {answer:?} is wrong")),
                None => Err(format!("{answer:?} is not judged yet: the judge is asked when the method is done")),
            },
            // Its program's verdict is an input of the run (`CheckRule::command_request`);
            // here, outside a run, it is not run.
            CheckKind::Command => Err(format!(
                "{answer:?} is checked by the program {} in a run, which records its verdict",
                self.command.first().map_or("(none)", String::as_str)
            )),
        }
    }

    /// Partial credit in [0, 1]: token F1 for text checks, the command's score, else 1 or 0.
    pub fn score(&self, checker: &Checker, input: &str, answer: &str, gold: &str) -> f64 {
        match self.kind {
            CheckKind::Exact => f1(answer, gold),
            CheckKind::List => {
                let sep = self.separator.as_deref().unwrap_or("|");
                gold.split(sep).map(|g| f1(answer, g)).fold(0.0, f64::max)
            }
            CheckKind::Command => 0.0,
            _ => f64::from(u8::from(self.check(checker, input, answer, gold).is_ok())),
        }
    }

    /// The normal form majority voting counts answers by.
    pub fn key(&self, answer: &str) -> String {
        match self.kind {
            CheckKind::Numeric => number(answer).map_or_else(|| answer.trim().to_string(), |n| n.to_string()),
            CheckKind::Math => crate::grade::normalize(answer),
            CheckKind::Choice => choice_letter(answer).map_or_else(|| answer.trim().to_string(), String::from),
            CheckKind::Exact | CheckKind::List if !self.case_sensitive => normalize_answer(answer),
            _ => answer.split_whitespace().collect::<Vec<_>>().join(" "),
        }
    }

    /// The program run to check `answer` to `input` against `gold`, for a command check:
    /// stdin `{"answer", "gold", "input"}`, a verdict on stdout.
    pub fn command_request(&self, input: &str, answer: &str, gold: &str) -> Option<crate::engine::CheckRequest> {
        if self.kind != CheckKind::Command || self.command.is_empty() {
            return None;
        }
        let stdin = serde_json::json!({ "answer": answer, "gold": gold, "input": input });
        Some(crate::engine::CheckRequest {
            purpose: crate::engine::CheckPurpose::Answer,
            argv: self.command.clone(),
            timeout_ms: self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
            stdin: stdin.to_string(),
        })
    }
}

fn normalize_answer_keep_case(s: &str) -> String {
    let kept: String = s.chars().filter(|c| !c.is_ascii_punctuation()).collect();
    kept.split_whitespace()
        .filter(|w| !matches!(w.to_lowercase().as_str(), "a" | "an" | "the"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The number an answer states: `1,234.5`, `$12`, `45%`, `-3`, `3/4`.
fn number(text: &str) -> Option<f64> {
    let t: String = text.trim().trim_end_matches('.').chars().filter(|c| !matches!(c, ',' | '$' | '%' | ' ')).collect();
    if let Some((a, b)) = t.split_once('/') {
        let (a, b): (f64, f64) = (a.parse().ok()?, b.parse().ok()?);
        return (b != 0.0).then(|| a / b);
    }
    t.parse().ok().filter(|n: &f64| n.is_finite())
}

/// The choice letter an answer names: `B`, `(B)`, `B) text`, `B. text`, `answer: B`.
fn choice_letter(text: &str) -> Option<char> {
    let t = crate::tasks::reply::strip_answer_prefix(text.trim()).trim_start_matches(['(', '[', '*']);
    let mut chars = t.chars();
    let first = chars.next()?.to_ascii_uppercase();
    let lone = matches!(chars.next(), None | Some(')' | ']' | '.' | ':' | ' ' | '*'));
    (first.is_ascii_uppercase() && lone).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(kind: CheckKind) -> CheckRule {
        CheckRule::of(kind)
    }

    #[test]
    fn every_reading_reads_what_it_writes() {
        for read in [
            AnswerRead::Auto,
            AnswerRead::Boxed,
            AnswerRead::AnswerIs,
            AnswerRead::AnswerLine,
            AnswerRead::LastLine,
            AnswerRead::Json,
        ] {
            let r = AnswerRule { read, pattern: None, field: (read == AnswerRead::Json).then(|| "final".into()) };
            for answer in ["42", "Port Celest", "\\frac{3}{4}"] {
                let written = r.write(answer).unwrap_or_else(|| panic!("{read:?} writes {answer}"));
                assert_eq!(r.read(&format!("Some work first.\n{written}")).as_deref(), Some(answer), "{read:?}");
            }
        }
        let r = AnswerRule { read: AnswerRead::Regex, pattern: Some("FINAL=(\\w+)".into()), field: None };
        assert_eq!(r.read("FINAL=a then FINAL=b").as_deref(), Some("b"));
        assert_eq!(r.write("b"), None, "a regex has no one form");
        let boxed = AnswerRule { read: AnswerRead::Boxed, ..AnswerRule::default() };
        assert_eq!(boxed.read("\\boxed{\\frac{1}{2}} no").as_deref(), Some("\\frac{1}{2}"));
        assert_eq!(boxed.read("no box"), None);
    }

    #[test]
    fn each_check_kind_decides() {
        let c = Checker::default();
        let ok = |r: &CheckRule, a: &str, g: &str| r.check(&c, "x", a, g).is_ok();
        assert!(ok(&rule(CheckKind::Exact), "the Grey Sea.", "grey sea"));
        assert!(!ok(&CheckRule { case_sensitive: true, ..rule(CheckKind::Exact) }, "grey Sea", "Grey Sea"));
        assert!(ok(&rule(CheckKind::Numeric), "$1,200", "1200"));
        assert!(!ok(&rule(CheckKind::Numeric), "1201", "1200"));
        assert!(ok(&CheckRule { tolerance: Some(0.01), ..rule(CheckKind::Numeric) }, "3.14", "3.1416"));
        assert!(ok(&rule(CheckKind::Math), "\\frac{1}{2}", "0.5"));
        assert!(ok(&rule(CheckKind::Choice), "(B) Paris", "B"));
        assert!(!ok(&rule(CheckKind::Choice), "C", "B"));
        assert!(ok(&rule(CheckKind::Regex), "colour", "colou?r"));
        assert!(ok(&rule(CheckKind::List), "NYC", "New York|NYC"));
        assert_eq!(rule(CheckKind::Numeric).key("12.0"), rule(CheckKind::Numeric).key("12"));
    }

    #[test]
    fn rules_that_contradict_are_refused_by_key() {
        let r = AnswerRule::default();
        let numeric_tol = CheckRule { tolerance: Some(0.1), ..rule(CheckKind::Exact) };
        assert_eq!(validate(&r, &numeric_tol).unwrap_err().1, "tolerance");
        assert_eq!(validate(&r, &rule(CheckKind::Command)).unwrap_err().1, "command");
        let regex = AnswerRule { read: AnswerRead::Regex, pattern: Some("no group".into()), field: None };
        assert_eq!(validate(&regex, &rule(CheckKind::Exact)).unwrap_err().1, "pattern");
        assert!(validate(&r, &rule(CheckKind::Math)).is_ok());
    }

    #[test]
    fn a_command_check_is_a_request_and_never_runs_here() {
        let rule = CheckRule {
            command: vec!["sh".into(), "-c".into(), "echo ran >> mark; echo correct".into()],
            timeout_ms: Some(500),
            ..rule(CheckKind::Command)
        };
        let request = rule.command_request("3+4", "7", "7").unwrap();
        assert_eq!(request.timeout_ms, 500);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&request.stdin).unwrap()["answer"], "7");
        let c = Checker::default();
        assert!(rule.check(&c, "3+4", "7", "7").unwrap_err().contains("checked by the program sh in a run"));
        assert_eq!(rule.score(&c, "3+4", "7", "7"), 0.0);
        assert_eq!(CheckRule::of(CheckKind::Exact).command_request("x", "1", "1"), None);
    }
}
