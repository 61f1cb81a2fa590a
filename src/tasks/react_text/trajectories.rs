//! Recorded ReAct trajectories (the reference's printed logs): blocks split at their
//! headers, each step's Thought/Action/Observation and the result dict read back.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// Actions are tool calls: `Search[Paramore]` is `ToolCall { name: "search", arg: "Paramore" }`.
use super::pyliteral::{parse_python_literal, Py};
use super::*;

/// Whether a trajectory checks a claim (FEVER) or answers a question (HotpotQA).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionKind {
    Claim,
    Question,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryStep {
    /// The step number as written (or counted when the log has none).
    pub n: usize,
    pub thought: Option<String>,
    /// The action text as written, e.g. `Finish[NOT ENOUGH INFO]` (empty if none), its
    /// lines trimmed and blank ones dropped.
    pub action_raw: String,
    /// The action exactly as the log has it after `Action i: `, leading blank lines kept
    /// (`\n\nFinish[x]`: what made the reference environment call it invalid).
    #[serde(default)]
    pub action_text: String,
    /// The action as read tolerantly; `None` when unreadable. A log's environment may
    /// still have called it invalid (see the observation).
    pub action: Option<ToolCall>,
    pub observation: String,
    /// The model's first reply in this step when it did not split into a thought and an
    /// action: the text the ReAct code printed after `ohh...`. The step's thought is its
    /// first line and the action came from a second call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bad_call: Option<String>,
}

/// The results dict at the end of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryResult {
    pub steps: usize,
    pub answer: String,
    pub gt_answer: String,
    pub em: f64,
    pub reward: f64,
    pub f1: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub question_idx: Option<usize>,
    pub kind: QuestionKind,
    pub question: String,
    pub steps: Vec<TrajectoryStep>,
    pub result: Option<TrajectoryResult>,
}

pub(super) fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 5 && t.chars().all(|c| c == '-')
}

/// `3687 Claim: ...`, `Question: ...`: the index (if any), the kind and the text.
pub(super) fn header_of(line: &str) -> Option<(Option<usize>, QuestionKind, String)> {
    let line = line.trim();
    let digits_end = line.find(|c: char| !c.is_ascii_digit()).unwrap_or(line.len());
    let idx = line[..digits_end].parse().ok();
    let rest = line[digits_end..].trim_start();
    let word_end = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
    let kind = match rest[..word_end].to_ascii_lowercase().as_str() {
        "claim" => QuestionKind::Claim,
        "question" => QuestionKind::Question,
        _ => return None,
    };
    let text = rest[word_end..].trim_start().strip_prefix(':')?;
    Some((idx, kind, text.trim().to_string()))
}

/// Read ReAct text trajectories. `source` names the text in warnings
/// (`source:line: message`). A malformed block is skipped with a warning; the rest are kept.
pub fn read_trajectories(text: &str, source: &str) -> (Vec<Trajectory>, Vec<String>) {
    let mut trajectories = Vec::new();
    let mut warnings = Vec::new();
    let mut block: Vec<(usize, &str)> = Vec::new();
    let mut flush = |block: &mut Vec<(usize, &str)>| {
        if block.iter().any(|(_, l)| !l.trim().is_empty()) {
            match read_block(block, source, &mut warnings) {
                Ok(t) => trajectories.push(t),
                Err((line, message)) => warnings.push(format!("{source}:{line}: {message}; block skipped")),
            }
        }
        block.clear();
    };
    for (i, line) in text.lines().enumerate() {
        if is_separator(line) {
            flush(&mut block);
        } else {
            block.push((i + 1, line));
        }
    }
    flush(&mut block);
    (trajectories, warnings)
}

pub(super) fn read_block(
    block: &[(usize, &str)],
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<Trajectory, (usize, String)> {
    let non_blank: Vec<usize> = (0..block.len()).filter(|&i| !block[i].1.trim().is_empty()).collect();
    let Some(&h) = non_blank.first() else {
        return Err((block.first().map_or(0, |(n, _)| *n), "empty block".to_string()));
    };
    let (first_no, first) = block[h];
    // The header, possibly with the index alone on the line before it.
    let header = match header_of(first) {
        Some(header) => Some((header, h + 1)),
        None => match (first.trim().parse::<usize>(), non_blank.get(1)) {
            (Ok(idx), Some(&j)) => match header_of(block[j].1) {
                Some((None, kind, text)) => Some(((Some(idx), kind, text), j + 1)),
                _ => None,
            },
            _ => None,
        },
    };
    let Some(((mut question_idx, kind, question), body_start)) = header else {
        return Err((
            first_no,
            format!("expected `<index> Claim: ...` or `<index> Question: ...`, found {:?}", shorten(first, 60)),
        ));
    };

    // Body: question continuation, labelled sections, then the results dict.
    let mut question_lines = vec![question];
    let mut sections: Vec<(Label, Option<usize>, Vec<&str>)> = Vec::new();
    let mut result_at: Option<usize> = None;
    // A bad call: its line number and text so far (what the code printed after `ohh...`).
    let mut bad: Option<(usize, Vec<&str>)> = None;
    // Bad calls by the index of the Thought section of the step they belong to.
    let mut bad_calls: HashMap<usize, String> = HashMap::new();
    for (pos, &(no, line)) in block.iter().enumerate().skip(body_start) {
        let trimmed = line.trim();
        let dict = (trimmed.starts_with("{'") || trimmed.starts_with("{\"")) && !sections.is_empty();
        if let Some((at, lines)) = bad.as_mut() {
            // The bad call's text runs to the step the code printed for it, whose thought
            // is the text's first line: `Thought i: <first line>`.
            let text = lines.join("\n");
            let first = text.trim().lines().next().unwrap_or("").trim().to_string();
            match label_of(line) {
                Some((Label::Thought, _, rest)) if rest.trim() == first => {
                    bad_calls.insert(sections.len(), text);
                    bad = None;
                }
                _ if dict => {
                    warnings.push(format!(
                        "{source}:{at}: `ohh...` (a bad call) is not followed by `Thought i: {}`; its text is ignored",
                        shorten(&first, 40)
                    ));
                    bad = None;
                }
                _ => {
                    lines.push(line);
                    continue;
                }
            }
        } else if let Some(rest) = line.strip_prefix("ohh...") {
            // `print('ohh...', thought_action)`: the reply follows one space.
            bad = Some((no, vec![rest.strip_prefix(' ').unwrap_or(rest)]));
            continue;
        }
        if dict {
            result_at = Some(pos);
            break;
        }
        match label_of(line) {
            Some((label, n, rest)) => sections.push((label, n, vec![rest])),
            None => match sections.last_mut() {
                Some(section) => section.2.push(line),
                None => question_lines.push(trimmed.to_string()),
            },
        }
    }
    if sections.is_empty() {
        return Err((first_no, "no `Thought`/`Action`/`Observation` lines".to_string()));
    }

    if let Some((at, _)) = bad {
        warnings.push(format!("{source}:{at}: `ohh...` (a bad call) is not followed by its step; its text is ignored"));
    }
    let steps = steps_of(&sections, &mut bad_calls);

    let result = match result_at {
        None => {
            let last = block.last().map_or(first_no, |(n, _)| *n);
            warnings
                .push(format!("{source}:{last}: no results dict at the end of the trajectory; kept without a result"));
            None
        }
        Some(pos) => Some(read_result(block, pos, source, warnings, &mut question_idx)?),
    };

    Ok(Trajectory { question_idx, kind, question: question_lines.join("\n").trim().to_string(), steps, result })
}

/// The steps of a trajectory from its labelled sections: a Thought starts a step, and so
/// does an Action or Observation after the step's own; each Thought takes the bad call
/// printed before it (`bad_calls`, by section index).
fn steps_of(
    sections: &[(Label, Option<usize>, Vec<&str>)],
    bad_calls: &mut HashMap<usize, String>,
) -> Vec<TrajectoryStep> {
    let mut steps: Vec<TrajectoryStep> = Vec::new();
    // Whether the last step has its action and its observation yet.
    let (mut has_action, mut has_observation) = (false, false);
    for (i, (label, n, body)) in sections.iter().enumerate() {
        let text = body.join("\n").trim().to_string();
        let new_step = match label {
            Label::Thought => true,
            Label::Action => has_action || has_observation,
            Label::Observation => has_observation,
        };
        if new_step || steps.is_empty() {
            let n = n.unwrap_or_else(|| steps.last().map_or(1, |s| s.n + 1));
            steps.push(TrajectoryStep {
                n,
                thought: None,
                action_raw: String::new(),
                action_text: String::new(),
                action: None,
                observation: String::new(),
                bad_call: None,
            });
            (has_action, has_observation) = (false, false);
        }
        let Some(step) = steps.last_mut() else { continue };
        match label {
            Label::Thought => {
                step.thought = non_empty(text);
                step.bad_call = bad_calls.remove(&i);
            }
            Label::Action => {
                let exact = body.join("\n");
                step.action_text = exact.strip_prefix(' ').unwrap_or(&exact).trim_end().to_string();
                step.action_raw = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("\n");
                step.action = first_call(&step.action_raw);
                has_action = true;
            }
            Label::Observation => {
                step.observation = text;
                has_observation = true;
            }
        }
    }
    steps
}

/// The results dict that ends a trajectory, from line `pos` of `block` on (it may span
/// lines until it closes); its `question_idx` fills in one the header did not give.
fn read_result(
    block: &[(usize, &str)],
    pos: usize,
    source: &str,
    warnings: &mut Vec<String>,
    question_idx: &mut Option<usize>,
) -> Result<TrajectoryResult, (usize, String)> {
    let (dict_no, _) = block[pos];
    // The dict is one line in ReAct's logs; allow it to span lines until it closes.
    let mut dict_text = String::new();
    let mut after = block.len();
    for (i, (_, line)) in block.iter().enumerate().skip(pos) {
        dict_text.push_str(line);
        dict_text.push('\n');
        if line.trim_end().ends_with('}') {
            after = i + 1;
            break;
        }
    }
    // After the dict only ReAct's timing line (numbers) is expected.
    let timing = |l: &str| l.split_whitespace().all(|w| w.parse::<f64>().is_ok());
    if let Some((no, _)) = block[after..].iter().find(|(_, l)| !timing(l)) {
        warnings
            .push(format!("{source}:{no}: unexpected text after the results dict (a missing `-----------`?); ignored"));
    }
    let value = parse_python_literal(&dict_text).map_err(|e| (dict_no, format!("results dict: {e}")))?;
    let result = result_from(&value).map_err(|e| (dict_no, format!("results dict: {e}")))?;
    if let Some(Py::Int(i)) = dict_get(&value, "question_idx") {
        match *question_idx {
            None => *question_idx = usize::try_from(*i).ok(),
            Some(idx) if i64::try_from(idx).ok() != Some(*i) => warnings.push(format!(
                "{source}:{dict_no}: the results dict says question_idx {i}, the header says {idx}; keeping {idx}"
            )),
            Some(_) => {}
        }
    }
    Ok(result)
}

pub(super) fn dict_get<'a>(value: &'a Py, key: &str) -> Option<&'a Py> {
    match value {
        Py::Dict(items) => items.iter().find(|(k, _)| matches!(k, Py::Str(s) if s == key)).map(|(_, v)| v),
        _ => None,
    }
}

pub(super) fn result_from(value: &Py) -> Result<TrajectoryResult, String> {
    if !matches!(value, Py::Dict(_)) {
        return Err("not a dict".to_string());
    }
    let get = |key: &str| dict_get(value, key).ok_or_else(|| format!("no {key:?}"));
    let number = |key: &str| -> Result<f64, String> {
        match get(key)? {
            Py::Int(i) => Ok(*i as f64),
            Py::Float(f) => Ok(*f),
            Py::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
            other => Err(format!("{key:?} is {other:?}, not a number")),
        }
    };
    let text = |key: &str| -> Result<String, String> {
        match get(key)? {
            Py::Str(s) => Ok(s.clone()),
            Py::None => Ok(String::new()),
            Py::Int(i) => Ok(i.to_string()),
            Py::Float(f) => Ok(f.to_string()),
            Py::Bool(b) => Ok(if *b { "True" } else { "False" }.to_string()),
            other => Err(format!("{key:?} is {other:?}, not a string")),
        }
    };
    let steps = match get("steps")? {
        Py::Int(i) if *i >= 0 => *i as usize,
        other => return Err(format!("\"steps\" is {other:?}, not a count")),
    };
    Ok(TrajectoryResult {
        steps,
        answer: text("answer")?,
        gt_answer: text("gt_answer")?,
        em: number("em")?,
        reward: number("reward")?,
        f1: number("f1")?,
    })
}

// ---------------------------------------------------------------------------------------
// Python literals (the repr of a dict of numbers and strings), without Python.
