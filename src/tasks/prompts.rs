//! Prompt templates: files under `assets/prompts/<task>/`, compiled in, and
//! overridable by a user directory holding files of the same names.

use std::path::Path;

use super::TaskError;

/// Load `name` from `dir` if the user gave one and it has that file, else the built-in text.
pub fn load(dir: Option<&Path>, name: &str, builtin: &str) -> Result<String, TaskError> {
    if let Some(dir) = dir {
        let path = dir.join(name);
        if path.exists() {
            return std::fs::read_to_string(&path)
                .map_err(|e| TaskError::Prompt { path: path.display().to_string(), message: e.to_string() });
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
