//! The ReAct text format (Yao et al.): `Thought i: ...` / `Action i: Tool[arg]` /
//! `Observation i: ...`. Pure text handling, no I/O except the data readers:
//!
//! * [`parse_step`] reads a model's reply in one ReAct step, tolerantly (any case, missing
//!   or wrong step numbers, markdown, an action on the line after `Action i:`, several
//!   actions, a model that writes its own observation, `search("x")` and `Finish: x`);
//! * [`format_step`] writes the canonical text, [`STOP_SEQUENCES`] go with requests;
//! * [`read_trajectories`] reads ReAct's logged trajectories (blocks separated by
//!   `-----------`, each ending in a Python dict of results);
//! * [`normalize_answer`], [`exact_match`] and [`f1`] score like the HotpotQA script the
//!   ReAct code uses;
//! * [`read_hotpotqa`] reads `hotpot_dev_v1_simplified.json`.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Actions are tool calls: `Search[Paramore]` is `ToolCall { name: "search", arg: "Paramore" }`.
pub use crate::tools::ToolCall;

/// Stop sequences for a ReAct step request: the model must stop before writing the
/// observation itself (the ReAct code stops at `\nObservation {i}:`).
pub const STOP_SEQUENCES: &[&str] = &["\nObservation"];

/// What a model's reply in one ReAct step says.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedStep {
    pub thought: Option<String>,
    /// The action to take: the first readable one.
    pub action: Option<ToolCall>,
    /// Further actions the reply wrote, as written: noted, not taken.
    pub extra_actions: Vec<String>,
    /// Why the reply is unusable (no readable action); the message restates the format
    /// and is meant to be shown to the agent as its observation.
    pub problem: Option<String>,
    /// [`parse_step_reference`] only: the reply did not split at `\nAction {step}: ` (the
    /// ReAct code prints `ohh...`, takes the first line as the thought and asks the model
    /// again for the action).
    pub ask_action: bool,
}

/// The engine's view of a parsed step: the action as (tool, argument).
impl From<ParsedStep> for crate::engine::ReactStep {
    fn from(p: ParsedStep) -> Self {
        crate::engine::ReactStep {
            thought: p.thought,
            action: p.action.map(|a| (a.name, a.arg)),
            problem: p.problem,
            extra_actions: p.extra_actions,
            ask_action: p.ask_action,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Thought,
    Action,
    Observation,
}

/// A line that starts with a label: `Thought 1:`, `action:`, `OBSERVATION 12 :`.
/// Returns the label, its number if any, and the text after the colon.
fn label_of(line: &str) -> Option<(Label, Option<usize>, &str)> {
    let line = line.trim_start();
    let word_end = line.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(line.len());
    let label = match line[..word_end].to_ascii_lowercase().as_str() {
        "thought" => Label::Thought,
        "action" => Label::Action,
        "observation" => Label::Observation,
        _ => return None,
    };
    let rest = line[word_end..].trim_start();
    let digits_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let number = rest[..digits_end].parse().ok();
    let rest = rest[digits_end..].trim_start().strip_prefix(':')?;
    Some((label, number, rest))
}

/// A line without markdown decoration: no `**` or backticks (outside brackets: an
/// action's argument such as `calculate[2**3]` is kept as written), no leading list
/// marker, quote marker or heading hashes.
fn clean_line(line: &str) -> String {
    let line = strip_emphasis_outside_brackets(line);
    let mut s = line.trim();
    loop {
        let before = s;
        s = s.trim_start_matches('#').trim_start();
        for marker in ["- ", "* ", "> "] {
            if let Some(rest) = s.strip_prefix(marker) {
                s = rest.trim_start();
            }
        }
        if s == before {
            break;
        }
    }
    s.to_string()
}

/// `line` without `**` and backticks, except inside `[...]` or `(...)`.
fn strip_emphasis_outside_brackets(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut depth = 0usize;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            '`' if depth == 0 => continue,
            '*' if depth == 0 && chars.peek() == Some(&'*') => {
                chars.next();
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// An argument without markdown wrapped around it (`**Paris**`, `` `Paris` ``).
fn unwrap_emphasis(mut s: &str) -> &str {
    loop {
        let t = s.trim();
        let inner = if t.len() >= 4 && t.starts_with("**") && t.ends_with("**") {
            &t[2..t.len() - 2]
        } else if t.len() >= 2 && t.starts_with('`') && t.ends_with('`') {
            &t[1..t.len() - 1]
        } else {
            return t;
        };
        s = inner;
    }
}

fn strip_quotes(s: &str) -> &str {
    let s = s.trim();
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

/// The text between an opening bracket at the start of `s` and its matching close,
/// and what follows the close.
fn bracketed(s: &str, open: char, close: char) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some((&s[open.len_utf8()..i], &s[i + close.len_utf8()..]));
            }
        }
    }
    None
}

/// One tool call at the start of a (cleaned) line: `Search[x]`, `Search [x]`,
/// `search("x")`, `search(query="x")` or (if `allow_colon`) `Finish: x`. Text after the
/// call is ignored. The second value tells whether the call fills the line (only
/// trailing punctuation after it).
fn parse_call(line: &str, allow_colon: bool) -> Option<(ToolCall, bool)> {
    let line = clean_line(line);
    if !line.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name_end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(line.len());
    let name = &line[..name_end];
    let rest = line[name_end..].trim_start();
    let whole = |after: &str| after.trim().trim_matches(|c: char| c == '.' || c == ',' || c == ';').is_empty();
    if rest.starts_with('[') {
        let (inner, after) = bracketed(rest, '[', ']')?;
        Some((ToolCall::action(name, strip_quotes(unwrap_emphasis(inner))), whole(after)))
    } else if rest.starts_with('(') {
        let (inner, after) = bracketed(rest, '(', ')')?;
        let mut arg = unwrap_emphasis(inner);
        // One keyword argument: `search(query="x")`.
        if let Some((key, value)) = arg.split_once('=') {
            let key = key.trim();
            let value = value.trim();
            if !key.is_empty()
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && (value.starts_with('"') || value.starts_with('\''))
            {
                arg = value;
            }
        }
        Some((ToolCall::action(name, strip_quotes(arg)), whole(after)))
    } else if let Some(arg) = rest.strip_prefix(':').filter(|_| allow_colon) {
        let arg = strip_quotes(arg.trim().trim_end_matches('.'));
        if arg.is_empty() {
            return None;
        }
        Some((ToolCall::action(name, arg), false))
    } else {
        None
    }
}

/// The first readable call among the non-empty lines of an action's text (`Tool: arg`
/// only on the first line).
fn first_call(text: &str) -> Option<ToolCall> {
    text.lines().filter(|l| !l.trim().is_empty()).enumerate().find_map(|(i, l)| parse_call(l, i == 0).map(|(a, _)| a))
}

fn shorten(s: &str, max: usize) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= max {
        s
    } else {
        format!("{}...", s.chars().take(max).collect::<String>())
    }
}

/// The message for a reply without a usable action; it restates the format.
fn problem_message(step: usize, detail: &str) -> String {
    format!(
        "Invalid action: {detail}. Reply with one thought and one action, in this form:\n\
         Thought {step}: <your reasoning>\n\
         Action {step}: Tool[argument]\n\
         for example Action {step}: Search[entity], Lookup[keyword] or Finish[answer]."
    )
}

struct Section {
    label: Option<Label>,
    lines: Vec<String>,
}

impl Section {
    fn text(&self) -> String {
        self.lines.join("\n").trim().to_string()
    }
}

fn non_empty(s: String) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// Read a model's reply in ReAct step `step` (its `Thought`/`Action` for that step).
///
/// The thought is the labelled thought before the first action, or else the unlabelled
/// text before it (the prompt usually ends with `Thought i:`, so the reply starts with
/// the thought's text). The action is the first readable one; later ones go to
/// `extra_actions`. Anything from a line starting with `Observation` on is cut off.
/// A reply with no readable action gets a `problem`.
pub fn parse_step(reply: &str, step: usize) -> ParsedStep {
    let mut sections = vec![Section { label: None, lines: Vec::new() }];
    for raw in reply.lines() {
        let trimmed = raw.trim();
        if trimmed.starts_with("```") {
            continue;
        }
        let line = clean_line(raw);
        match label_of(&line) {
            Some((Label::Observation, _, _)) => break,
            Some((label, _, rest)) => sections.push(Section { label: Some(label), lines: vec![rest.to_string()] }),
            None => {
                if let Some(last) = sections.last_mut() {
                    last.lines.push(line);
                }
            }
        }
    }

    let mut parsed = ParsedStep::default();
    let first_action = sections.iter().position(|s| s.label == Some(Label::Action));
    let before = &sections[..first_action.unwrap_or(sections.len())];
    let labelled_thought = before.iter().rev().find(|s| s.label == Some(Label::Thought)).map(Section::text);
    let unlabelled = before.first().map(Section::text).unwrap_or_default();

    match first_action {
        Some(first) => {
            parsed.thought = labelled_thought.and_then(non_empty).or_else(|| non_empty(unlabelled));
            let mut unreadable = None;
            for section in sections[first..].iter().filter(|s| s.label == Some(Label::Action)) {
                let text = section.text();
                if parsed.action.is_some() {
                    if !text.is_empty() {
                        parsed.extra_actions.push(shorten(&text, 200));
                    }
                    continue;
                }
                let mut calls = text.lines().filter(|l| !l.trim().is_empty()).enumerate().filter_map(|(i, l)| {
                    // `Tool: arg` only as the action's first line; later lines may be prose.
                    parse_call(l, i == 0).map(|(call, _)| (call, l))
                });
                match calls.next() {
                    Some((call, _)) => {
                        parsed.action = Some(call);
                        // Further calls on their own lines: noted.
                        parsed.extra_actions.extend(calls.map(|(_, l)| shorten(l, 200)));
                    }
                    None => {
                        if unreadable.is_none() {
                            unreadable = Some(text);
                        }
                    }
                }
            }
            if parsed.action.is_none() {
                let detail = match unreadable.filter(|t| !t.is_empty()) {
                    Some(text) => format!("could not read the action {:?}", shorten(&text, 80)),
                    None => "the action is empty".to_string(),
                };
                parsed.problem = Some(problem_message(step, &detail));
            }
        }
        None => {
            // No `Action` label: accept a line that is nothing but a bracket call.
            let text = labelled_thought.unwrap_or(unlabelled);
            let lines: Vec<&str> = text.lines().collect();
            let found = lines.iter().position(|l| matches!(parse_call(l, false), Some((_, true))));
            match found {
                Some(i) => {
                    parsed.action = parse_call(lines[i], false).map(|(a, _)| a);
                    parsed.thought = non_empty(lines[..i].join("\n").trim().to_string());
                    parsed.extra_actions = lines[i + 1..]
                        .iter()
                        .filter(|l| matches!(parse_call(l, false), Some((_, true))))
                        .map(|l| shorten(l, 200))
                        .collect();
                }
                None => {
                    parsed.thought = non_empty(text);
                    parsed.problem = Some(problem_message(step, "no action found in the reply"));
                }
            }
        }
    }
    parsed
}

/// How a ReAct reply's action is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionRules {
    /// [`parse_step`]: any case, markdown, an action on the next line, `search("x")`, ...
    #[default]
    Tolerant,
    /// [`parse_step_reference`]: exactly as the ReAct paper's code and environment read
    /// them, so imported trajectories replay with the environment's `Invalid action` steps.
    Reference,
}

/// Read a reply in step `step` by `rules`.
pub fn parse_step_with(rules: ActionRules, reply: &str, step: usize) -> ParsedStep {
    match rules {
        ActionRules::Tolerant => parse_step(reply, step),
        ActionRules::Reference => parse_step_reference(reply, step),
    }
}

/// Read a reply as the ReAct paper's code does: the stripped reply is split at
/// `\nAction {step}: ` (a reply may also start with `Action {step}: `); the action, its
/// first letter lowercased and then stripped, must be `search[...]`, `lookup[...]` or
/// `finish[...]`, anything else gets the environment's observation `Invalid action: {action}`
/// as its problem. So `Action 3: \n\nFinish[x]` is invalid there (and here), as it was in
/// the paper's runs. A leading `Thought {step}:` label is dropped from the thought.
pub fn parse_step_reference(reply: &str, step: usize) -> ParsedStep {
    let text = reply.trim();
    let marker = format!("Action {step}: ");
    let split_at = format!("\n{marker}");
    let empty_at_end = format!("\n{}", marker.trim_end());
    // The code's `thought, action = reply.strip().split(f"\nAction {i}: ")` fails unless
    // the marker occurs exactly once: a bad call, whose first line is taken as the thought.
    if !text.starts_with(&marker) && !text.ends_with(&empty_at_end) && text.matches(&split_at).count() != 1 {
        let first = text.lines().next().unwrap_or("").trim().to_string();
        return ParsedStep {
            thought: non_empty(first),
            problem: Some(format!("the reply did not split into Thought {step} and Action {step}")),
            ask_action: true,
            ..ParsedStep::default()
        };
    }
    let (thought, action) = match text.strip_prefix(&marker) {
        Some(action) => ("", action),
        None => match text.split_once(&split_at) {
            Some(split) => split,
            // An empty action at the very end (`Action 3:` lost its space to the strip).
            None => (text.strip_suffix(&empty_at_end).unwrap_or(text), ""),
        },
    };
    let thought = thought.trim();
    let label = format!("Thought {step}:");
    let thought = thought.strip_prefix(&label).unwrap_or(thought).trim().to_string();
    let mut chars = action.chars();
    let action: String = match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    };
    let action = action.trim();
    let mut parsed = ParsedStep { thought: non_empty(thought), ..ParsedStep::default() };
    for tool in ["search", "lookup", "finish"] {
        let inner = action.strip_prefix(tool).and_then(|r| r.strip_prefix('[')).and_then(|r| r.strip_suffix(']'));
        if let Some(arg) = inner {
            parsed.action = Some(ToolCall::action(tool, arg));
            return parsed;
        }
    }
    parsed.problem = Some(format!("Invalid action: {action}"));
    parsed
}

/// The canonical text of one step: `Thought i: ...\nAction i: Tool[arg]\nObservation i: ...\n`.
/// Missing parts are left out (a sparse thought, or a step whose observation is not known yet).
/// Written by the engine's one step formatter, [`crate::engine::Step::path_text`].
pub fn format_step(step: usize, thought: Option<&str>, action: Option<&ToolCall>, observation: Option<&str>) -> String {
    crate::engine::Step {
        thought: thought.map(|t| t.trim().to_string()),
        action: action.map(|a| crate::engine::ToolRequest { name: a.name.clone(), arg: a.arg.clone() }),
        observation: observation.map(|o| o.trim().to_string()),
        ..crate::engine::Step::new(step)
    }
    .path_text()
}

// ---------------------------------------------------------------------------------------
// Trajectories

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

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 5 && t.chars().all(|c| c == '-')
}

/// `3687 Claim: ...`, `Question: ...`: the index (if any), the kind and the text.
fn header_of(line: &str) -> Option<(Option<usize>, QuestionKind, String)> {
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

fn read_block(
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

    let result = match result_at {
        None => {
            let last = block.last().map_or(first_no, |(n, _)| *n);
            warnings
                .push(format!("{source}:{last}: no results dict at the end of the trajectory; kept without a result"));
            None
        }
        Some(pos) => {
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
                warnings.push(format!(
                    "{source}:{no}: unexpected text after the results dict (a missing `-----------`?); ignored"
                ));
            }
            let value = parse_python_literal(&dict_text).map_err(|e| (dict_no, format!("results dict: {e}")))?;
            let result = result_from(&value).map_err(|e| (dict_no, format!("results dict: {e}")))?;
            if let Some(Py::Int(i)) = dict_get(&value, "question_idx") {
                match question_idx {
                    None => question_idx = usize::try_from(*i).ok(),
                    Some(idx) if i64::try_from(idx).ok() != Some(*i) => warnings.push(format!(
                        "{source}:{dict_no}: the results dict says question_idx {i}, the header says {idx}; keeping {idx}"
                    )),
                    Some(_) => {}
                }
            }
            Some(result)
        }
    };

    Ok(Trajectory { question_idx, kind, question: question_lines.join("\n").trim().to_string(), steps, result })
}

fn dict_get<'a>(value: &'a Py, key: &str) -> Option<&'a Py> {
    match value {
        Py::Dict(items) => items.iter().find(|(k, _)| matches!(k, Py::Str(s) if s == key)).map(|(_, v)| v),
        _ => None,
    }
}

fn result_from(value: &Py) -> Result<TrajectoryResult, String> {
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

#[derive(Debug, Clone, PartialEq)]
enum Py {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Py>),
    Dict(Vec<(Py, Py)>),
}

/// How deeply lists, tuples and dicts may nest in a literal. ReAct's results dicts nest
/// one level; the limit keeps a hostile or corrupt log from overflowing the stack.
pub const MAX_LITERAL_DEPTH: usize = 64;

/// Parse one Python literal: dicts, lists, tuples, strings (either quote, escapes, an
/// `u`/`b`/`r` prefix), ints, floats, `None`, `True`, `False`, `nan`, `inf`.
fn parse_python_literal(text: &str) -> Result<Py, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = PyParser { chars, pos: 0, depth: 0 };
    let value = p.value()?;
    p.ws();
    if p.pos < p.chars.len() {
        return Err(format!("unexpected {:?} at column {}", p.chars[p.pos], p.pos + 1));
    }
    Ok(value)
}

struct PyParser {
    chars: Vec<char>,
    pos: usize,
    /// Containers open around the current position.
    depth: usize,
}

impl PyParser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn err(&self, what: &str) -> String {
        match self.peek() {
            Some(c) => format!("{what}, found {c:?} at column {}", self.pos + 1),
            None => format!("{what}, found the end of the text"),
        }
    }

    fn value(&mut self) -> Result<Py, String> {
        self.ws();
        if matches!(self.peek(), Some('{' | '[' | '(')) {
            if self.depth >= MAX_LITERAL_DEPTH {
                return Err(format!(
                    "nested more than {MAX_LITERAL_DEPTH} levels deep at column {} (a results dict nests one level)",
                    self.pos + 1
                ));
            }
            self.depth += 1;
            let value = match self.peek() {
                Some('{') => self.dict(),
                Some('[') => self.seq(']').map(Py::List),
                _ => self.seq(')').map(Py::List),
            };
            self.depth -= 1;
            return value;
        }
        match self.peek() {
            Some('\'') | Some('"') => self.string().map(Py::Str),
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                match word.as_str() {
                    "None" => Ok(Py::None),
                    "True" => Ok(Py::Bool(true)),
                    "False" => Ok(Py::Bool(false)),
                    "nan" => Ok(Py::Float(f64::NAN)),
                    "inf" => Ok(Py::Float(f64::INFINITY)),
                    "u" | "U" | "b" | "B" | "r" | "R" if matches!(self.peek(), Some('\'') | Some('"')) => {
                        self.string().map(Py::Str)
                    }
                    _ => Err(format!("unknown name {word:?} at column {}", start + 1)),
                }
            }
            _ => Err(self.err("expected a value")),
        }
    }

    fn dict(&mut self) -> Result<Py, String> {
        self.pos += 1; // '{'
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(Py::Dict(items));
            }
            let key = self.value()?;
            self.ws();
            if self.peek() != Some(':') {
                return Err(self.err("expected ':' after a key"));
            }
            self.pos += 1;
            let value = self.value()?;
            items.push((key, value));
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn seq(&mut self, close: char) -> Result<Vec<Py>, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(items);
            }
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(c) if c == close => {}
                _ => return Err(self.err(&format!("expected ',' or '{close}'"))),
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let start = self.pos;
        let Some(quote) = self.peek() else { return Err(self.err("expected a string")) };
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(format!("unterminated string starting at column {}", start + 1));
            };
            self.pos += 1;
            if c == quote {
                return Ok(out);
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else { continue };
            self.pos += 1;
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' | '\'' | '"' => out.push(e),
                '\n' => {}
                'x' | 'u' | 'U' => {
                    let len = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = self.chars.iter().skip(self.pos).take(len).collect();
                    let ch = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32).filter(|_| hex.len() == len);
                    match ch {
                        Some(ch) => {
                            out.push(ch);
                            self.pos += len;
                        }
                        None => return Err(format!("bad \\{e} escape at column {}", self.pos)),
                    }
                }
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }

    fn number(&mut self) -> Result<Py, String> {
        let start = self.pos;
        if matches!(self.peek(), Some('-') | Some('+')) {
            self.pos += 1;
        }
        if self.chars[self.pos..].starts_with(&['i', 'n', 'f']) {
            self.pos += 3;
            let negative = self.chars[start] == '-';
            return Ok(Py::Float(if negative { f64::NEG_INFINITY } else { f64::INFINITY }));
        }
        let mut float = false;
        while let Some(c) = self.peek() {
            if c.is_ascii_digit() || c == '_' {
                self.pos += 1;
            } else if c == '.' || c == 'e' || c == 'E' {
                float = true;
                self.pos += 1;
                if (c == 'e' || c == 'E') && matches!(self.peek(), Some('-') | Some('+')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        let text: String = self.chars[start..self.pos].iter().filter(|c| **c != '_').collect();
        let bad = || format!("bad number {text:?} at column {}", start + 1);
        if float {
            text.parse().map(Py::Float).map_err(|_| bad())
        } else {
            text.parse().map(Py::Int).map_err(|_| bad())
        }
    }
}

// ---------------------------------------------------------------------------------------
// Scoring, as in the HotpotQA evaluation script the ReAct code uses.

/// Lowercase, drop ASCII punctuation, drop the articles a/an/the (as whole words), and
/// collapse whitespace.
pub fn normalize_answer(s: &str) -> String {
    let lower = s.to_lowercase();
    let no_punct: String = lower.chars().filter(|c| !c.is_ascii_punctuation()).collect();
    // Python's `re.sub(r'\b(a|an|the)\b', ' ', text)`: words are runs of \w characters.
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut no_articles = String::with_capacity(no_punct.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if matches!(word.as_str(), "a" | "an" | "the") {
            out.push(' ');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in no_punct.chars() {
        if is_word(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut no_articles);
            no_articles.push(c);
        }
    }
    flush(&mut word, &mut no_articles);
    no_articles.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Exact match after [`normalize_answer`].
/// A ReAct state for people: how many actions its trajectory took.
pub fn describe_trajectory(y: &str) -> String {
    let steps = y.lines().filter(|l| l.to_lowercase().starts_with("action")).count();
    format!("{steps} actions taken")
}

/// A QA task's check of an answer against its gold answer: exact match after normalising.
pub fn check_answer(answer: &str, gold: &str) -> Result<(), String> {
    if exact_match(answer, gold) {
        Ok(())
    } else {
        Err(format!("expected {gold:?}"))
    }
}

pub fn exact_match(pred: &str, gold: &str) -> bool {
    normalize_answer(pred) == normalize_answer(gold)
}

/// Token-level F1 after [`normalize_answer`]. If either side is `yes`, `no` or
/// `noanswer` and they differ, the score is 0 (the HotpotQA script's rule).
pub fn f1(pred: &str, gold: &str) -> f64 {
    let p = normalize_answer(pred);
    let g = normalize_answer(gold);
    let special = ["yes", "no", "noanswer"];
    if (special.contains(&p.as_str()) || special.contains(&g.as_str())) && p != g {
        return 0.0;
    }
    let p_tokens: Vec<&str> = p.split_whitespace().collect();
    let g_tokens: Vec<&str> = g.split_whitespace().collect();
    let mut gold_counts: HashMap<&str, usize> = HashMap::new();
    for t in &g_tokens {
        *gold_counts.entry(t).or_default() += 1;
    }
    let mut same = 0usize;
    for t in &p_tokens {
        if let Some(n) = gold_counts.get_mut(t) {
            if *n > 0 {
                *n -= 1;
                same += 1;
            }
        }
    }
    if same == 0 {
        return 0.0;
    }
    let precision = same as f64 / p_tokens.len() as f64;
    let recall = same as f64 / g_tokens.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

// ---------------------------------------------------------------------------------------
// Data

/// One HotpotQA question with its gold answer and type (`bridge`, `comparison`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaItem {
    pub question: String,
    pub answer: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

/// Read `hotpot_dev_v1_simplified.json`: a JSON list of `{question, answer, type}`.
/// Errors name the file (and the line and column serde reports).
pub fn read_hotpotqa(path: &Path) -> Result<Vec<QaItem>, String> {
    let text = crate::userfile::read_text(path, &crate::userfile::DATA)
        .map_err(|e| format!("{}: cannot read: {}", path.display(), e.reason()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a HotpotQA list of {{question, answer, type}}: {e}", path.display()))
}

#[cfg(test)]
#[path = "react_text_tests.rs"]
mod tests;
