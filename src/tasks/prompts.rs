//! Prompt templates: files under `assets/prompts/<task>/`, compiled in, and
//! overridable by a user directory holding files of the same names.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::TaskError;

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
