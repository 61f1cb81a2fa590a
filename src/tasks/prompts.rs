//! Prompt templates: files under `assets/prompts/<task>/`, compiled in, and
//! overridable by a user directory holding files of the same names.
//!
//! Each template comes in two styles ([`PromptStyle`]): the reference papers' text
//! (`assets/prompts/<task>/<name>`), sent as one user message, and a chat layout
//! (`assets/prompts/<task>/chat/<name>`) written as turns, each after a line of its own
//! that names its role: `[system]`, `[user]` or `[assistant]`. A chat template's last
//! turn is `[user]`: the current state, asking for exactly the next step. A user's
//! `--prompts` directory overrides either by the same path (`chat/propose.txt`).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::TaskError;
use crate::engine::PromptStyle;
use crate::protocol::{Message, Role};

/// A built-in template in both styles, compiled in (see [`builtin!`](crate::builtin_prompt)).
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// The file name, as in `assets/prompts/<task>/` and a user's `--prompts` directory.
    pub name: &'static str,
    pub reference: &'static str,
    pub chat: &'static str,
}

/// `builtin_prompt!("game24", "propose.txt")`: the [`Builtin`] of a task's template, its
/// reference text and its chat turns compiled in from `assets/prompts/`.
#[macro_export]
macro_rules! builtin_prompt {
    ($task:literal, $name:literal) => {
        $crate::tasks::prompts::Builtin {
            name: $name,
            reference: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/prompts/", $task, "/", $name)),
            chat: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/prompts/", $task, "/chat/", $name)),
        }
    };
}

/// Where a task's templates come from: the user's directory, if any, and the style.
#[derive(Debug, Clone, Copy, Default)]
pub struct Loader<'a> {
    pub dir: Option<&'a Path>,
    pub style: PromptStyle,
}

impl<'a> Loader<'a> {
    pub fn new(dir: Option<&'a Path>, style: PromptStyle) -> Loader<'a> {
        Loader { dir, style }
    }

    /// The template `builtin` in this loader's style, [`load_checked`] for the
    /// placeholders `vars`; a chat template's turns are checked too ([`check_turns`]).
    pub fn load(&self, builtin: Builtin, vars: &[&str]) -> Result<String, TaskError> {
        match self.style {
            PromptStyle::Reference => load_checked(self.dir, builtin.name, builtin.reference, vars),
            PromptStyle::Chat => {
                let name = format!("chat/{}", builtin.name);
                let text = load_checked(self.dir, &name, builtin.chat, vars)?;
                check_turns(&text).map_err(|message| TaskError::Prompt {
                    path: match self.dir.map(|d| d.join(&name)).filter(|p| p.exists()) {
                        Some(p) => p.display().to_string(),
                        None => format!("built-in {name}"),
                    },
                    message,
                })?;
                Ok(text)
            }
        }
    }
}

/// The role a line names if it is a turn marker (`[system]`, `[user]`, `[assistant]`).
fn marker(line: &str) -> Option<Role> {
    match line.trim_end() {
        "[system]" => Some(Role::System),
        "[user]" => Some(Role::User),
        "[assistant]" => Some(Role::Assistant),
        _ => None,
    }
}

/// Whether a template (or a prompt rendered from one) is written as turns: its first
/// non-empty line is a turn marker.
pub fn is_turns(text: &str) -> bool {
    text.lines().find(|l| !l.trim().is_empty()).and_then(marker).is_some()
}

/// The turns of a template: those of a chat layout, or the whole text as one user turn
/// (a reference template). A turn's text is kept as written, without the blank lines
/// around it. Split before placeholders are filled, so a `[user]` line in a problem or
/// a model's reply never starts a turn.
fn turns(template: &str) -> Vec<Message> {
    if !is_turns(template) {
        return vec![Message::user(template)];
    }
    let mut out: Vec<Message> = Vec::new();
    let mut current: Option<(Role, Vec<&str>)> = None;
    let flush = |turn: Option<(Role, Vec<&str>)>, out: &mut Vec<Message>| {
        if let Some((role, lines)) = turn {
            let content = lines.join("\n").trim_matches('\n').to_string();
            out.push(Message::new(role, content));
        }
    };
    for line in template.lines() {
        match marker(line) {
            Some(role) => flush(current.replace((role, Vec::new())), &mut out),
            None => {
                if let Some((_, lines)) = current.as_mut() {
                    lines.push(line);
                }
            }
        }
    }
    flush(current, &mut out);
    out
}

/// The messages of a template with its placeholders filled ([`render`] turn by turn):
/// one user message for a reference template, the turns of a chat one. The last message
/// is the user's (the state), so a task appends to it what follows the state
/// ([`push_to_last`]).
pub fn render_messages(template: &str, vars: &[(&str, &str)]) -> Vec<Message> {
    turns(template).into_iter().map(|m| Message { content: render(&m.content, vars), ..m }).collect()
}

/// [`render_messages`], then `tail` (the partial output a step goes on from) added to
/// the last message.
pub fn render_then(template: &str, vars: &[(&str, &str)], tail: &str) -> Vec<Message> {
    let mut messages = render_messages(template, vars);
    push_to_last(&mut messages, tail);
    messages
}

/// Add `text` to the end of the last message (the partial output a step goes on from).
pub fn push_to_last(messages: &mut [Message], text: &str) {
    if let Some(last) = messages.last_mut() {
        last.content.push_str(text);
    }
}

/// Check a chat template's turns: it starts with a marker, a `[system]` turn comes only
/// first, no turn is empty, and the last is `[user]` (the state the model answers).
pub fn check_turns(template: &str) -> Result<(), String> {
    if !is_turns(template) {
        return Err("a chat template is written as turns: its first line is [system] or [user]".into());
    }
    let turns = turns(template);
    for (i, m) in turns.iter().enumerate() {
        if m.content.trim().is_empty() {
            return Err(format!("turn {} ([{}]) is empty", i + 1, role_name(m.role)));
        }
        if m.role == Role::System && i > 0 {
            return Err(format!("turn {} is [system]; only the first turn may be", i + 1));
        }
    }
    match turns.last() {
        Some(last) if last.role == Role::User => Ok(()),
        _ => Err("the last turn must be [user]: the state the model is to answer".into()),
    }
}

/// A role as its turn marker names it (`[system]`, `[user]`, `[assistant]`).
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// What [`load`] noticed while a task was built on one thread (see [`take_warnings`]).
#[derive(Default)]
struct Noticed {
    warnings: Vec<String>,
    /// The file names asked for, with the folder they were looked for in.
    asked: Vec<(PathBuf, String)>,
}

thread_local! {
    static NOTICED: RefCell<Noticed> = RefCell::new(Noticed::default());
}

/// Load `name` from `dir` if the user gave one and it has that file, else the built-in text.
/// The user's file is read by [`crate::userfile::TEMPLATE`]'s rules (a regular file of at most
/// 256 KiB); a `{placeholder}` in it that the built-in template does not have is warned about
/// ([`take_warnings`]): it would be sent to the model as written.
pub fn load(dir: Option<&Path>, name: &str, builtin: &str) -> Result<String, TaskError> {
    if let Some(dir) = dir {
        NOTICED.with(|n| n.borrow_mut().asked.push((dir.to_path_buf(), name.to_string())));
        let path = dir.join(name);
        if path.exists() {
            let text = crate::userfile::read_text(&path, &crate::userfile::TEMPLATE)
                .map_err(|e| TaskError::Prompt { path: path.display().to_string(), message: e.reason() })?;
            let known = placeholders(builtin);
            let unknown: Vec<String> = placeholders(&text).into_iter().filter(|p| !known.contains(p)).collect();
            if !unknown.is_empty() {
                let known: Vec<String> = known.iter().map(|k| format!("{{{k}}}")).collect();
                let unknown: Vec<String> = unknown.iter().map(|u| format!("{{{u}}}")).collect();
                let warning = format!(
                    "{}: unknown placeholder {} (this template fills {}); sent to the model as written",
                    path.display(),
                    unknown.join(", "),
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                );
                NOTICED.with(|n| n.borrow_mut().warnings.push(warning));
            }
            return Ok(text);
        }
    }
    Ok(builtin.to_string())
}

/// [`load`] `name`, then [`require`] the placeholders `vars` the task fills: what each
/// task does for each of its templates.
pub fn load_checked(dir: Option<&Path>, name: &str, builtin: &str, vars: &[&str]) -> Result<String, TaskError> {
    let text = load(dir, name, builtin)?;
    require(&text, name, vars)?;
    Ok(text)
}

/// The warnings [`load`] gathered on this thread since the last call, and one for each
/// file in `dir` that no [`load`] asked for (a misspelt name would be ignored silently).
pub fn take_warnings(dir: Option<&Path>) -> Vec<String> {
    let Noticed { mut warnings, asked } = NOTICED.with(|n| std::mem::take(&mut *n.borrow_mut()));
    let Some(dir) = dir else { return warnings };
    let names: BTreeSet<&str> = asked.iter().filter(|(d, _)| d == dir).map(|(_, n)| n.as_str()).collect();
    if names.is_empty() {
        return warnings;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return warnings };
    let mut files: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| !f.starts_with('.') && !names.contains(f.as_str()))
        .collect();
    files.sort();
    let list = names.iter().copied().collect::<Vec<_>>().join(", ");
    for file in files {
        warnings.push(format!(
            "{}: not a template this task reads (it reads {list}); ignored",
            dir.join(crate::userfile::clip(&file, 80).as_ref()).display()
        ));
    }
    warnings
}

/// The `{name}` placeholders of a template, in order, each once. A brace right after a
/// letter, digit, `\`, `}`, `^` or `_` is LaTeX (`\frac{a}{b}`, `x^{n}`), not a placeholder.
fn placeholders(template: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut before = ' ';
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let prev = rest[..open].chars().next_back().unwrap_or(before);
        let after = &rest[open + 1..];
        let name_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        let name = &after[..name_len];
        let latex = prev.is_alphanumeric() || matches!(prev, '\\' | '}' | '^' | '_');
        let is_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !latex && is_name && after[name_len..].starts_with('}') && !found.iter().any(|f| f == name) {
            found.push(name.to_string());
        }
        before = '{';
        rest = after;
    }
    found
}

/// Fill `{name}` placeholders. Unknown placeholders are left as they are.
pub fn render(template: &str, vars: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// Check that a template has the placeholders a task fills, naming the file if not.
pub fn require(template: &str, file: &str, names: &[&str]) -> Result<(), TaskError> {
    for n in names {
        if !template.contains(&format!("{{{n}}}")) {
            return Err(TaskError::Prompt {
                path: file.to_string(),
                message: format!("missing the placeholder {{{n}}}"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_names_in_braces_but_not_latex() {
        let names =
            placeholders("Problem: {problem}\n{trajectory}Thought {step}: \\frac{a}{b} x^{n} {x} {x} {\"k\": 1} {9}");
        assert_eq!(names, ["problem", "trajectory", "step", "x"]);
    }

    #[test]
    fn a_users_template_is_capped_and_its_unknown_placeholders_and_files_are_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("io.txt"), "Q: {input} and {inptu}\n").unwrap();
        std::fs::write(dir.path().join("cto.txt"), "misspelt\n").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        let _ = take_warnings(None);
        let io = load(Some(dir.path()), "io.txt", "Answer {input}.").unwrap();
        assert_eq!(io, "Q: {input} and {inptu}\n");
        assert_eq!(load(Some(dir.path()), "cot.txt", "Think: {input}").unwrap(), "Think: {input}");
        let warnings = take_warnings(Some(dir.path()));
        assert_eq!(
            warnings,
            [
                format!(
                    "{}: unknown placeholder {{inptu}} (this template fills {{input}}); sent to the model as written",
                    dir.path().join("io.txt").display()
                ),
                format!(
                    "{}: not a template this task reads (it reads cot.txt, io.txt); ignored",
                    dir.path().join("cto.txt").display()
                ),
            ]
        );
        assert!(take_warnings(Some(dir.path())).is_empty(), "taken once");
        // Over the cap: an error naming the file and the limit.
        std::fs::write(dir.path().join("io.txt"), "x".repeat(300 * 1024)).unwrap();
        let err = load(Some(dir.path()), "io.txt", "Answer {input}.").unwrap_err().to_string();
        assert!(
            err.contains("io.txt") && err.contains("larger than 256 KiB, the limit for a prompt template"),
            "{err}"
        );
        let _ = take_warnings(None);
    }
}
