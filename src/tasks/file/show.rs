//! `thoughtscope task show NAME`: a registered task written as a task file, where it
//! can be written so. Nothing here knows a task by name: the prompts are the task's own
//! io and cot prompts with the problem's text turned into `{{ input }}`, kept only when
//! they render exactly what the task itself sends for each of its first problems; the
//! problems are the task's, with their gold answers and facets; the answer rule and the
//! check are the pair that agrees most with the task's own reading and checking on
//! sample replies, and the file says how far. What a task file cannot hold (a task's own
//! tree-search steps, its tools, a judge, a board) is named, never dropped silently.

use std::fmt::Write as _;

use serde_json::json;

use super::answer::{AnswerRead, AnswerRule, CheckKind, CheckRule, Checker};
use super::{bump_last_number, template};
use crate::engine::Task;
use crate::protocol::{Message, Prompt, Role};
use crate::tasks::{prompts, TaskSource};

/// Problems a written prompt is compared on.
const COMPARED: usize = 20;
/// Problems the answer rules are tried on.
const TRIED: usize = 30;

/// A task written as a task file.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The `task.toml` text (problems inline).
    pub toml: String,
    /// What the file does not hold of the task, a line each.
    pub left_out: Vec<String>,
    /// How the answer rule agrees with the task's own: (agreeing, tried) sample replies.
    pub agreement: (usize, usize),
}

/// `task` written as a task file, or the line that says why it cannot be.
pub fn show(task: &dyn TaskSource) -> Result<Shown, String> {
    let name = task.name().to_string();
    let inputs: Vec<String> = (0..task.problem_count()).filter_map(|i| task.problem(i)).map(|p| p.input).collect();
    if inputs.is_empty() {
        return Err(format!("{name} lists no problems to write (a task that reads its problems takes --data FILE)"));
    }
    if inputs.iter().all(|x| task.gold(x).is_none()) {
        return Err(format!(
            "its problems give no gold answers outside {name}'s own code, so a task file could not check them"
        ));
    }
    let io = template_of(&inputs, &|x| task.io_prompt(x)).map_err(|m| format!("{name}'s io prompt {m}"))?;
    let cot = template_of(&inputs, &|x| task.cot_prompt(x)).map_err(|m| format!("{name}'s cot prompt {m}"))?;
    let (answer, check, agreement) = answer_rules(task, &inputs)?;
    let left_out = left_out(task);
    let info = task.info();
    let mut out = String::new();
    let _ = writeln!(out, "# {name}, written as a task file by `thoughtscope task show {name}`.");
    let _ = writeln!(out, "# Its io and cot prompts render what {name} itself sends, for its first problems.");
    let _ = writeln!(
        out,
        "# Answers are read and checked as below: the same verdicts as {name}'s own on {} of {} sample replies.",
        agreement.0, agreement.1
    );
    let mut left_out = left_out;
    if agreement.0 < agreement.1 {
        left_out.push(format!(
            "a reading and check of answers that agree with {name}'s own on every sample reply (these agree on {} of {})",
            agreement.0, agreement.1
        ));
    }
    for line in &left_out {
        let _ = writeln!(out, "# Not written: {line}.");
    }
    let _ = writeln!(out, "name = {}", quoted(&format!("{name}-file")));
    let _ = writeln!(out, "about = {}", quoted(&info.about));
    let _ = writeln!(out, "input_noun = {}", quoted(&info.input_noun));
    let _ = writeln!(out, "\n[prompts]\nio = {}\ncot = {}", multiline(&io), multiline(&cot));
    let _ = writeln!(out, "\n[answer]\nread = {}", quoted(read_name(answer.read)));
    let _ = writeln!(out, "\n[check]\nkind = {}", quoted(check_name(check.kind)));
    write_problems(&mut out, task, &inputs);
    reads_back(task, &out, &inputs)?;
    Ok(Shown { toml: out, left_out, agreement })
}

/// The written file, read back as a task file, sends what the task sends.
fn reads_back(task: &dyn TaskSource, toml: &str, inputs: &[String]) -> Result<(), String> {
    let bug = |m: String| format!("{} written as a task file does not read back: {m}", task.name());
    let loaded = super::def::parse(std::path::Path::new("task.toml"), toml).map_err(|e| bug(e.to_string()))?;
    let file = super::FileTask::new(loaded.def, loaded.problems, task.prompt_style(), Vec::new()).map_err(bug)?;
    for x in inputs.iter().take(COMPARED) {
        let same = same_messages(&file.io_prompt(x).messages, &task.io_prompt(x).messages)
            && same_messages(&file.cot_prompt(x).messages, &task.cot_prompt(x).messages);
        if !same {
            return Err(bug(format!("its prompts for {:?} differ from the task's own", x.trim())));
        }
    }
    Ok(())
}

/// The template of a prompt: its text with the problem's text as `{{ input }}` (every
/// occurrence, else only the last), kept if it renders what `render` gives for each of
/// the first problems.
fn template_of(inputs: &[String], render: &dyn Fn(&str) -> Prompt) -> Result<String, String> {
    let first = inputs[0].trim();
    let text = turns_text(&render(&inputs[0]).messages);
    if first.is_empty() || !text.contains(first) {
        return Err("does not show the problem's text as given, so it cannot be written as a template".into());
    }
    let every: Vec<&str> = text.split(first).collect();
    let (head, tail) = text.rsplit_once(first).unwrap_or((&text, ""));
    let candidates = [
        every.iter().map(|s| raw(s)).collect::<Vec<_>>().join("{{ input }}"),
        format!("{}{{{{ input }}}}{}", raw(head), raw(tail)),
    ];
    let mut why = String::new();
    for candidate in candidates {
        match renders_as(&candidate, inputs, render) {
            Ok(()) => return Ok(candidate),
            Err(m) if why.is_empty() => why = m,
            Err(_) => {}
        }
    }
    Err(why)
}

/// Whether `template` renders what `render` gives for each of the first problems.
fn renders_as(template: &str, inputs: &[String], render: &dyn Fn(&str) -> Prompt) -> Result<(), String> {
    for (i, x) in inputs.iter().take(COMPARED).enumerate() {
        let vars = minijinja::Value::from_serialize(json!({ "input": x.trim(), "problem": { "input": x.trim() } }));
        let written = template::render(template, &vars).map_err(|m| format!("does not render: {m}"))?;
        let own = render(x).messages;
        if !same_messages(&written, &own) {
            return Err(format!(
                "differs from the task's own for problem {i} (it holds more than the problem's text), so it cannot be written as a template"
            ));
        }
    }
    Ok(())
}

fn same_messages(a: &[Message], b: &[Message]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.role == b.role && a.content == b.content)
}

/// Messages as a task-file prompt: `[system]`/`[user]`/`[assistant]` turns, or the text
/// of a lone user message.
fn turns_text(messages: &[Message]) -> String {
    if let [only] = messages {
        if only.role == Role::User && !prompts::is_turns(&only.content) {
            return only.content.clone();
        }
    }
    messages.iter().map(|m| format!("[{}]\n{}", prompts::role_name(m.role), m.content)).collect::<Vec<_>>().join("\n")
}

/// `text` as template text that renders as itself.
fn raw(text: &str) -> String {
    if ["{{", "{%", "{#", "}}", "%}", "#}"].iter().any(|t| text.contains(t)) {
        format!("{{% raw %}}{text}{{% endraw %}}")
    } else {
        text.to_string()
    }
}

/// The sample replies of a problem with gold answer `gold`: the gold answer and wrong
/// ones (a near miss, a different answer), each stated the ways models state answers.
fn sample_replies(gold: &str) -> Vec<String> {
    let mut answers = vec![gold.to_string(), near_miss(gold), format!("not {gold}")];
    answers.dedup();
    let mut replies = Vec::new();
    for a in &answers {
        replies.push(format!("Let me think.\nSo the answer is \\boxed{{{a}}}."));
        replies.push(format!("Working through it, the answer is {a}."));
        replies.push(format!("Step by step.\nAnswer: {a}"));
        replies.push(a.to_string());
    }
    replies
}

/// `text` with its last letter or digit changed (`36` → `37`, `SLEER` → `SLEES`).
fn near_miss(text: &str) -> String {
    let bumped = bump_last_number(text);
    if !bumped.is_empty() {
        return bumped;
    }
    let mut chars: Vec<char> = text.chars().collect();
    if let Some(c) = chars.iter_mut().rev().find(|c| c.is_alphabetic()) {
        *c = match *c {
            'z' => 'a',
            'Z' => 'A',
            c if c.is_ascii_alphabetic() => (c as u8 + 1) as char,
            _ => 'x',
        };
    }
    chars.into_iter().collect()
}

/// The answer rule and check that agree most with the task's own reading and checking
/// on the sample replies of its first problems, and how far: (agreeing, tried).
fn answer_rules(task: &dyn TaskSource, inputs: &[String]) -> Result<(AnswerRule, CheckRule, (usize, usize)), String> {
    let reads =
        [AnswerRead::Auto, AnswerRead::Boxed, AnswerRead::AnswerIs, AnswerRead::AnswerLine, AnswerRead::LastLine];
    let kinds = [CheckKind::Math, CheckKind::Exact, CheckKind::Choice, CheckKind::Numeric];
    let cases: Vec<(String, String, String)> = inputs
        .iter()
        .take(TRIED)
        .filter_map(|x| task.gold(x).map(|g| (x.clone(), g)))
        .flat_map(|(x, g)| sample_replies(&g).into_iter().map(move |r| (x.clone(), g.clone(), r)))
        .collect();
    let own: Vec<bool> =
        cases.iter().map(|(x, _, r)| task.extract_answer(x, r).is_some_and(|a| task.check(x, &a).is_ok())).collect();
    if !own.contains(&true) {
        return Err(format!(
            "{} takes none of the sample replies' answers as right (it reads answers its own way), so no reading of them can be written to match",
            task.name()
        ));
    }
    let checker = Checker::default();
    let mut best: Option<(AnswerRule, CheckRule, usize)> = None;
    for kind in kinds {
        for read in reads {
            let answer = AnswerRule { read, ..AnswerRule::default() };
            let check = CheckRule::of(kind);
            let agree = cases
                .iter()
                .zip(&own)
                .filter(|((x, g, r), own)| {
                    answer.read(r).is_some_and(|a| check.check(&checker, x, &a, g).is_ok()) == **own
                })
                .count();
            if best.as_ref().is_none_or(|b| agree > b.2) {
                best = Some((answer, check, agree));
            }
        }
    }
    let (answer, check, agree) = best.unwrap_or((AnswerRule::default(), CheckRule::of(CheckKind::Exact), 0));
    Ok((answer, check, (agree, cases.len())))
}

/// What of the task a task file does not hold.
fn left_out(task: &dyn TaskSource) -> Vec<String> {
    let name = task.name();
    let mut out = Vec::new();
    if task.tree().is_some() {
        out.push(format!("{name}'s tree-search steps and evaluators (its own step rules)"));
    }
    if task.react().is_some() {
        out.push(format!("{name}'s ReAct steps and tools"));
    }
    if task.judge().is_some() {
        out.push(format!("{name}'s judge of finished outputs"));
    }
    if task.board().is_some() {
        out.push(format!("{name}'s board view"));
    }
    out
}

fn write_problems(out: &mut String, task: &dyn TaskSource, inputs: &[String]) {
    let facets: std::collections::BTreeSet<String> = inputs.iter().flat_map(|x| task.facets(x).into_keys()).collect();
    let listed: Vec<String> = facets.iter().map(|f| quoted(f)).collect();
    let _ = writeln!(out, "\n[problems]\ninput = \"input\"\ngold = \"answer\"\nfacets = [{}]", listed.join(", "));
    for x in inputs {
        let _ = writeln!(out, "\n[[problems.items]]\ninput = {}", quoted(x.trim()));
        if let Some(gold) = task.gold(x) {
            let _ = writeln!(out, "answer = {}", quoted(&gold));
        }
        for (k, v) in task.facets(x) {
            let _ = writeln!(out, "{} = {}", toml_key(&k), quoted(&v));
        }
    }
}

fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

fn toml_key(key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        key.to_string()
    } else {
        quoted(key)
    }
}

/// A TOML multi-line literal string where the text allows one, else a basic string.
fn multiline(text: &str) -> String {
    let literal_ok = !text.contains("'''")
        && !text.ends_with('\'')
        && !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        && !text.contains('\r');
    if literal_ok {
        format!("'''\n{text}'''")
    } else {
        quoted(text)
    }
}

fn read_name(read: AnswerRead) -> &'static str {
    match serde_json::to_value(read) {
        Ok(serde_json::Value::String(s)) => super::answer::READS.iter().find(|r| **r == s).copied().unwrap_or("auto"),
        _ => "auto",
    }
}

fn check_name(kind: CheckKind) -> &'static str {
    match serde_json::to_value(kind) {
        Ok(serde_json::Value::String(s)) => super::answer::CHECKS.iter().find(|c| **c == s).copied().unwrap_or("exact"),
        _ => "exact",
    }
}
