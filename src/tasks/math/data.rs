//! The data files of `math500` and `mmlu-pro`, both JSON Lines:
//!
//! * MATH-500 (PRM800K's `test.jsonl`): `problem`, `solution`, `answer`, `subject`,
//!   `level` (1-5, a number or `"Level 3"`), `unique_id`;
//! * MMLU-Pro: `question`, `options` (1 to 10 strings), `answer` (a letter),
//!   `answer_index` (0-based, must agree with the letter), `category`, and optionally
//!   `question_id` and `src`.
//!
//! A line that cannot be used is skipped with a warning naming the file and line; a
//! file with no usable problem is an error. Sizes are bounded: the file, each line and
//! each text field.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::answer::{join_options, letter, LETTERS, MAX_OPTIONS};
use super::{Item, MathKind, ID_FACET};
use crate::tasks::TaskError;

/// Largest data file read (bytes): the `--data` cap of [`crate::userfile::DATA`].
pub const MAX_FILE: u64 = crate::userfile::DATA.max_bytes;
/// Longest line of a data file (bytes).
pub const MAX_LINE: usize = 1024 * 1024;
/// Longest problem, question or option text (bytes).
pub const MAX_TEXT: usize = 64 * 1024;
/// Warnings listed one by one; the rest are counted.
const MAX_WARNINGS: usize = 20;

/// One MATH problem as the data file has it.
#[derive(Debug, Clone, PartialEq)]
pub struct MathItem {
    pub problem: String,
    pub solution: String,
    pub answer: String,
    pub subject: String,
    pub level: u8,
    pub unique_id: String,
}

impl MathItem {
    pub fn item(&self) -> Item {
        let mut facets = BTreeMap::new();
        facets.insert("subject".to_string(), self.subject.clone());
        facets.insert("level".to_string(), self.level.to_string());
        if !self.unique_id.is_empty() {
            facets.insert(ID_FACET.to_string(), self.unique_id.clone());
        }
        Item { input: self.problem.trim().to_string(), gold: self.answer.trim().to_string(), facets }
    }
}

/// One MMLU-Pro question as the data file has it.
#[derive(Debug, Clone, PartialEq)]
pub struct McItem {
    pub question: String,
    pub options: Vec<String>,
    /// 0-based index of the right option.
    pub answer_index: usize,
    pub category: String,
    pub question_id: Option<String>,
    pub src: Option<String>,
}

impl McItem {
    pub fn item(&self) -> Item {
        let mut facets = BTreeMap::new();
        facets.insert("category".to_string(), self.category.clone());
        if let Some(id) = &self.question_id {
            facets.insert(ID_FACET.to_string(), id.clone());
        }
        Item { input: join_options(&self.question, &self.options), gold: letter(self.answer_index).to_string(), facets }
    }
}

/// Read `path` for task `kind` (math500 or mmlu-pro): the problems and the warnings
/// about skipped lines, each naming the file and line.
pub fn read(kind: MathKind, path: &Path) -> Result<(Vec<Item>, Vec<String>), TaskError> {
    let name = path.display().to_string();
    let text = crate::userfile::read_text(path, &crate::userfile::DATA)
        .map_err(|e| TaskError::Data(format!("{name}: cannot read: {}", e.reason())))?;
    parse(kind, &text, &name)
}

/// [`read`] on text; `name` names it in messages.
pub fn parse(kind: MathKind, text: &str, name: &str) -> Result<(Vec<Item>, Vec<String>), TaskError> {
    let mut items = Vec::new();
    let mut warnings = Vec::new();
    let mut skipped = 0usize;
    let mut lines = 0usize;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        lines += 1;
        let parsed = if line.len() > MAX_LINE {
            Err(format!("the line is longer than {MAX_LINE} bytes"))
        } else {
            serde_json::from_str::<Value>(line).map_err(|e| format!("not JSON: {e}")).and_then(|v| match kind {
                MathKind::MmluPro | MathKind::McDemo => mc_item(&v).map(|q| q.item()),
                MathKind::Math500 | MathKind::MathDemo => math_item(&v).map(|p| p.item()),
            })
        };
        match parsed {
            Ok(item) => items.push(item),
            Err(why) => {
                skipped += 1;
                if warnings.len() < MAX_WARNINGS {
                    warnings.push(format!("{name}:{}: {why}; skipped", i + 1));
                }
            }
        }
    }
    if skipped > warnings.len() {
        warnings.push(format!("{name}: {} more lines skipped", skipped - warnings.len()));
    }
    if items.is_empty() {
        let what = if kind.choice() { "question" } else { "problem" };
        let why = if lines == 0 {
            "the file is empty".to_string()
        } else {
            format!("none of its {lines} lines is a usable {what} (see the warnings)")
        };
        return Err(TaskError::Data(format!("{name}: no {what}s: {why}")));
    }
    Ok((items, warnings))
}

/// A required string field, non-empty and not too long.
fn text_field(v: &Value, key: &str) -> Result<String, String> {
    match v.get(key) {
        Some(Value::String(s)) if s.trim().is_empty() => Err(format!("{key:?} is empty")),
        Some(Value::String(s)) if s.len() > MAX_TEXT => Err(format!("{key:?} is longer than {MAX_TEXT} bytes")),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(format!("{key:?} is not a string")),
        None => Err(format!("no {key:?} field")),
    }
}

/// An id: a string or a number.
fn id_field(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// One MATH problem from a JSON object.
pub fn math_item(v: &Value) -> Result<MathItem, String> {
    if !v.is_object() {
        return Err("not a JSON object".into());
    }
    let problem = text_field(v, "problem")?;
    let answer = text_field(v, "answer")?;
    let subject = text_field(v, "subject")?;
    let level = match v.get("level") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().trim_start_matches("Level").trim().parse().ok(),
        _ => None,
    }
    .filter(|l| (1..=5).contains(l))
    .ok_or_else(|| "\"level\" must be 1 to 5 (a number or \"Level N\")".to_string())?;
    let solution = v.get("solution").and_then(Value::as_str).unwrap_or_default().to_string();
    if solution.len() > MAX_TEXT {
        return Err(format!("\"solution\" is longer than {MAX_TEXT} bytes"));
    }
    Ok(MathItem {
        problem,
        solution,
        answer,
        subject: subject.trim().to_string(),
        level: level as u8,
        unique_id: id_field(v, "unique_id").unwrap_or_default(),
    })
}

/// One MMLU-Pro question from a JSON object; the letter and the index must agree.
pub fn mc_item(v: &Value) -> Result<McItem, String> {
    if !v.is_object() {
        return Err("not a JSON object".into());
    }
    let question = text_field(v, "question")?;
    let options = match v.get("options") {
        Some(Value::Array(a)) if a.is_empty() => return Err("\"options\" is empty".into()),
        Some(Value::Array(a)) if a.len() > MAX_OPTIONS => {
            return Err(format!("{} options; at most {MAX_OPTIONS} (A to J)", a.len()))
        }
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, o)| match o {
                Value::String(s) if s.len() > MAX_TEXT => Err(format!("option {} is too long", letter(i))),
                Value::String(s) => Ok(s.trim().to_string()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err(format!("option {} is not a string", letter(i))),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err("\"options\" is not a list".into()),
        None => return Err("no \"options\" field".into()),
    };
    let n = options.len();
    let last = letter(n - 1);
    let by_letter = match v.get("answer") {
        Some(Value::String(s)) => {
            let s = s.trim();
            let c = s.chars().next().filter(|_| s.chars().count() == 1).map(|c| c.to_ascii_uppercase());
            match c.and_then(|c| LETTERS.iter().position(|&l| l == c)) {
                Some(i) if i < n => Some(i),
                _ => return Err(format!("\"answer\" {s:?} is not one of the option letters A to {last}")),
            }
        }
        Some(_) => return Err("\"answer\" is not a letter".into()),
        None => None,
    };
    let by_index = match v.get("answer_index") {
        Some(Value::Number(x)) => match x.as_u64() {
            Some(i) if (i as usize) < n => Some(i as usize),
            _ => return Err(format!("\"answer_index\" {x} is not an option (0 to {})", n - 1)),
        },
        Some(_) => return Err("\"answer_index\" is not a number".into()),
        None => None,
    };
    let answer_index = match (by_letter, by_index) {
        (Some(a), Some(b)) if a != b => {
            return Err(format!("\"answer\" {} and \"answer_index\" {b} (option {}) disagree", letter(a), letter(b)))
        }
        (Some(a), _) => a,
        (None, Some(b)) => b,
        (None, None) => return Err("no \"answer\" or \"answer_index\" field".into()),
    };
    let category = text_field(v, "category")?;
    Ok(McItem {
        question,
        options,
        answer_index,
        category: category.trim().to_string(),
        question_id: id_field(v, "question_id"),
        src: v.get("src").and_then(Value::as_str).map(str::to_string),
    })
}
