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

mod pyliteral;
mod trajectories;

pub use pyliteral::MAX_LITERAL_DEPTH;
pub use trajectories::{read_trajectories, QuestionKind, Trajectory, TrajectoryResult, TrajectoryStep};

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

/// `line` without bold marks and backticks, except inside `[...]` or `(...)`. A `**` is
/// a bold mark only where it opens (a boundary before it, text after it) or closes (text
/// before it, a boundary after it): `7 ** 1` and `2**3` are arithmetic, kept as written.
fn strip_emphasis_outside_brackets(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let boundary = |c: Option<&char>| c.is_none_or(|c| c.is_whitespace() || ",.;:!?()[]".contains(*c));
    let text = |c: Option<&char>| c.is_some_and(|c| !c.is_whitespace());
    let mut out = String::with_capacity(line.len());
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            '`' if depth == 0 => {
                i += 1;
                continue;
            }
            '*' if depth == 0 && chars.get(i + 1) == Some(&'*') => {
                let (before, after) = (i.checked_sub(1).and_then(|b| chars.get(b)), chars.get(i + 2));
                let opens = boundary(before) && text(after);
                let closes = text(before) && boundary(after);
                if opens || closes {
                    i += 2;
                    continue;
                }
                out.push_str("**");
                i += 2;
                continue;
            }
            _ => {}
        }
        out.push(c);
        i += 1;
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
    // A tool's name: letters, digits and `_`, and inside it `-` and `.` (an MCP server's
    // tools are named `get-sum` or `files.read`); the `Tool: arg` form takes plain names only,
    // so prose such as `Re-check: ...` is not read as a call.
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let name_end = line.find(|c: char| !(word(c) || c == '-' || c == '.')).unwrap_or(line.len());
    let name_end = line[..name_end].trim_end_matches(['-', '.']).len();
    let plain_end = line.find(|c: char| !word(c)).unwrap_or(line.len());
    let after = line[name_end..].trim_start();
    let name_end = if after.starts_with(['[', '(']) { name_end } else { plain_end };
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

/// Whether `call` only echoes a placeholder of the format the model was shown: an
/// argument of dots (`Finish[...]`) or in angle brackets (`Search[<entity>]`), or a call
/// the reminder (`tools`) writes word for word (`Finish[answer]`).
fn is_placeholder(call: &ToolCall, tools: &str) -> bool {
    let arg = call.arg.trim();
    let dots = !arg.is_empty() && arg.chars().all(|c| c == '.' || c == '…' || c.is_whitespace());
    let angled = arg.starts_with('<') && arg.ends_with('>');
    let written = format!("{}[{}]", call.name, arg).to_lowercase();
    let echoed = tools.to_lowercase().split([',', ' ']).any(|t| t.trim().trim_end_matches('.') == written);
    dots || angled || echoed
}

/// The tools the question-answering tasks' reminders name when a caller names none.
pub const QA_TOOLS: &str = "Search[entity], Lookup[keyword] or Finish[answer]";

/// The message for a reply without a usable action; it restates the format, with the
/// calls of the task's own tools (`tools`, as [`crate::tools::ToolRegistry::call_examples`]
/// writes them) as the example.
fn problem_message(step: usize, detail: &str, tools: &str) -> String {
    format!(
        "Invalid action: {detail}. Reply with one thought and one action, in this form:\n\
         Thought {step}: <your reasoning>\n\
         Action {step}: Tool[argument]\n\
         for example Action {step}: {tools}."
    )
}

/// A JSON-ish action as chat models write one: `{"action": "Search", "input": "x"}` (also
/// `tool`/`name` for the tool and `action_input`/`argument`/`arg`/`query`/`args` for its
/// argument), the first such object in `text`. An object that is not exactly one tool and
/// one text argument is not read.
fn json_action(text: &str) -> Option<ToolCall> {
    let start = text.find('{')?;
    let (inner, _) = bracketed(&text[start..], '{', '}')?;
    let value: serde_json::Value = serde_json::from_str(&format!("{{{inner}}}")).ok()?;
    let object = value.as_object()?;
    let pick = |keys: &[&str]| keys.iter().find_map(|k| object.get(*k));
    let name = pick(&["action", "tool", "name"])?.as_str()?.trim();
    let arg = match pick(&["input", "action_input", "argument", "arg", "query", "args"])? {
        serde_json::Value::String(s) => s.trim().to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        // `{"args": {"query": "x"}}`: an object of one text value.
        serde_json::Value::Object(o) if o.len() == 1 => o.values().next()?.as_str()?.trim().to_string(),
        _ => return None,
    };
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain.then(|| ToolCall::action(name, &arg))
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
    parse_step_naming(reply, step, QA_TOOLS)
}

/// [`parse_step`], with a reminder that names `tools` (the task's own calls, as
/// [`crate::tools::ToolRegistry::call_examples`] writes them). A reply whose only action
/// is a JSON-ish object (`{"action": "Search", "input": "x"}`) is read too.
pub fn parse_step_naming(reply: &str, step: usize, tools: &str) -> ParsedStep {
    let mut parsed = read_step(reply, step, tools);
    if parsed.action.is_none() {
        if let Some(call) = json_action(reply).filter(|c| !is_placeholder(c, tools)) {
            parsed.action = Some(call);
            parsed.problem = None;
        }
    }
    parsed
}

/// `rest` without the labels of `label`'s kind the model wrote again after the first
/// (`Thought 6: Thought 5: x` is the thought `x`), so they are not doubled in later prompts.
fn without_repeated_labels(label: Label, mut rest: &str) -> &str {
    while let Some((again, _, after)) = label_of(rest) {
        if again != label {
            break;
        }
        rest = after;
    }
    rest.trim_start()
}

fn read_step(reply: &str, step: usize, tools: &str) -> ParsedStep {
    let mut sections = vec![Section { label: None, lines: Vec::new() }];
    // A reply that opens with an observation (the model restating the last one) is read
    // from the label after it; an observation after the step's own text ends the step.
    let mut leading_observation = false;
    for raw in reply.lines() {
        let trimmed = raw.trim();
        if trimmed.starts_with("```") {
            continue;
        }
        let line = clean_line(raw);
        let started = sections.len() > 1 || sections[0].lines.iter().any(|l| !l.trim().is_empty());
        match label_of(&line) {
            Some((Label::Observation, _, _)) if !started => leading_observation = true,
            Some((Label::Observation, _, _)) => break,
            Some((label, _, rest)) => {
                leading_observation = false;
                let rest = without_repeated_labels(label, rest);
                sections.push(Section { label: Some(label), lines: vec![rest.to_string()] })
            }
            None if leading_observation => {}
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
            let (mut unreadable, mut echoed) = (None, None);
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
                    Some((call, _)) if is_placeholder(&call, tools) => {
                        if echoed.is_none() {
                            echoed = Some(call);
                        }
                    }
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
                let detail = match (unreadable.filter(|t| !t.is_empty()), echoed) {
                    (Some(text), _) => format!("could not read the action {:?}", shorten(&text, 80)),
                    (None, Some(call)) => format!(
                        "the action {}[{}] only repeats the format's placeholder; write the real argument",
                        call.name, call.arg
                    ),
                    (None, None) => "the action is empty".to_string(),
                };
                parsed.problem = Some(problem_message(step, &detail, tools));
            }
        }
        None => {
            // No `Action` label: accept a line that is nothing but a bracket call.
            let text = labelled_thought.unwrap_or(unlabelled);
            let lines: Vec<&str> = text.lines().collect();
            let found = lines
                .iter()
                .position(|l| matches!(parse_call(l, false), Some((call, true)) if !is_placeholder(&call, tools)));
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
                    parsed.problem = Some(problem_message(step, "no action found in the reply", tools));
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

/// Read a reply that is the action alone (the model was asked with the prompt ending in
/// `Action {step}:`) by `rules`.
pub fn parse_action_with(rules: ActionRules, action: &str, step: usize) -> ParsedStep {
    match rules {
        ActionRules::Tolerant => parse_step(&format!("Action {step}: {}", action.trim()), step),
        // The notebook's `llm(...).strip()`, then the environment's reading.
        ActionRules::Reference => parse_action_reference(action.trim()),
    }
}

/// Read a reply as the ReAct paper's code does: `thought, action =
/// reply.strip().split(f"\nAction {step}: ")`, which works only when the stripped reply
/// splits into exactly two parts. Anything else (no marker, two of them, a reply that
/// starts with `Action {step}: ` and so has no newline before it, an empty action the
/// strip cut to `\nAction {step}:`) is the code's `ohh...` bad call: its first line is
/// the thought and the model is asked again for the action alone ([`ParsedStep::ask_action`]).
/// The action is then read as the environment does ([`parse_action_reference`]). A leading
/// `Thought {step}:` label is dropped from the thought.
pub fn parse_step_reference(reply: &str, step: usize) -> ParsedStep {
    let text = reply.trim();
    let split_at = format!("\nAction {step}: ");
    let parts: Vec<&str> = text.split(split_at.as_str()).collect();
    let [thought, action] = parts[..] else {
        let first = text.split('\n').next().unwrap_or("").trim().to_string();
        return ParsedStep {
            thought: non_empty(first),
            problem: Some(format!("the reply did not split into Thought {step} and Action {step}")),
            ask_action: true,
            ..ParsedStep::default()
        };
    };
    let thought = thought.trim();
    let label = format!("Thought {step}:");
    let thought = thought.strip_prefix(&label).unwrap_or(thought).trim().to_string();
    ParsedStep { thought: non_empty(thought), ..parse_action_reference(action) }
}

/// Read an action as the ReAct notebook and its environment do: its first letter is
/// lowercased (`action[0].lower() + action[1:]`), then it is stripped, and it must be
/// `search[...]`, `lookup[...]` or `finish[...]` (`think[...]` is the environment's `Nice
/// thought.`); anything else gets the environment's observation `Invalid action: {action}`
/// as its problem. So `\n\nFinish[x]` is invalid there (and here), as it was in the paper's
/// runs, and an argument is kept exactly as written, quotes and all. This is also how the
/// reply to the notebook's second call (the action alone) is read.
pub fn parse_action_reference(action: &str) -> ParsedStep {
    let mut chars = action.chars();
    let action: String = match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    };
    let action = action.trim();
    let mut parsed = ParsedStep::default();
    for tool in ["search", "lookup", "finish"] {
        let inner = action.strip_prefix(tool).and_then(|r| r.strip_prefix('[')).and_then(|r| r.strip_suffix(']'));
        if let Some(arg) = inner {
            parsed.action = Some(ToolCall::action(tool, arg));
            return parsed;
        }
    }
    let think = action.strip_prefix("think[").is_some_and(|r| r.ends_with(']'));
    parsed.problem = Some(if think { "Nice thought.".to_string() } else { format!("Invalid action: {action}") });
    parsed
}

/// The canonical text of one step: `Thought i: ...\nAction i: Tool[arg]\nObservation i: ...\n`.
/// Missing parts are left out (a sparse thought, or a step whose observation is not known yet).
/// Written by the engine's one step formatter, [`crate::engine::Step::path_text`].
pub fn format_step(step: usize, thought: Option<&str>, action: Option<&ToolCall>, observation: Option<&str>) -> String {
    crate::engine::Step {
        thought: thought.map(|t| t.trim().to_string()),
        action: action.map(|a| crate::protocol::ToolRequest { name: a.name.clone(), arg: a.arg.clone() }),
        observation: observation.map(|o| o.trim().to_string()),
        ..crate::engine::Step::new(step)
    }
    .path_text()
}

// ---------------------------------------------------------------------------------------
// Trajectories

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
mod tests;
