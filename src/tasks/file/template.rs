//! A task file's prompt templates: minijinja (`{{ input }}`, `{% for s in steps %}`),
//! split into turns first by the `[system]` / `[user]` / `[assistant]` markers the
//! built-in chat prompts use, so a marker inside a problem never starts a turn.

use std::collections::BTreeSet;

use minijinja::{Environment, UndefinedBehavior, Value};

use crate::protocol::Message;
use crate::tasks::prompts;

/// How much work one prompt may take (a loop over a huge range is an error, not a hang).
const FUEL: u64 = 200_000;

fn env() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(FUEL));
    env.set_keep_trailing_newline(true);
    env
}

/// The turns of a template, each still a template.
fn turns(template: &str) -> Vec<Message> {
    prompts::render_messages(template, &[])
}

/// Check a template: its turns (a chat layout), its syntax, and that it uses only
/// `allowed` variables (and the fields of `problem`).
pub fn check(template: &str, allowed: &[&str]) -> Result<(), String> {
    if template.trim().is_empty() {
        return Err("the prompt is empty".into());
    }
    if prompts::is_turns(template) {
        prompts::check_turns(template)?;
    }
    let env = env();
    let globals: BTreeSet<String> = env.globals().map(|(name, _)| name.to_string()).collect();
    for turn in turns(template) {
        let compiled = env.template_from_str(&turn.content).map_err(|e| describe(&e))?;
        let mut unknown: Vec<String> = compiled
            .undeclared_variables(false)
            .into_iter()
            .filter(|v| !allowed.contains(&v.as_str()) && !globals.contains(v))
            .collect();
        unknown.sort();
        if let Some(name) = unknown.first() {
            return Err(format!(
                "the template uses {{{{ {name} }}}}, which this prompt does not have (it has: {})",
                allowed.join(", ")
            ));
        }
    }
    Ok(())
}

/// The `problem.<field>` names a template reads.
pub fn problem_fields(template: &str) -> BTreeSet<String> {
    let env = env();
    let mut fields = BTreeSet::new();
    for turn in turns(template) {
        if let Ok(t) = env.template_from_str(&turn.content) {
            for v in t.undeclared_variables(true) {
                if let Some(field) = v.strip_prefix("problem.") {
                    fields.insert(field.split('.').next().unwrap_or(field).to_string());
                }
            }
        }
    }
    fields
}

/// The messages of `template` with `vars`, turn by turn; an error names the variable or
/// the line that failed.
pub fn render(template: &str, vars: &Value) -> Result<Vec<Message>, String> {
    let env = env();
    turns(template)
        .into_iter()
        .map(|m| {
            let content = env.render_str(&m.content, vars).map_err(|e| describe(&e))?;
            Ok(Message { content, ..m })
        })
        .collect()
}

/// A template error in one line: what and where.
fn describe(e: &minijinja::Error) -> String {
    let what = e.detail().map_or_else(|| e.kind().to_string(), str::to_string);
    match e.line() {
        Some(line) => format!("template line {line}: {what}"),
        None => format!("template: {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_variables_and_bad_syntax_are_named() {
        assert_eq!(check("Q: {{ input }}", &["input"]), Ok(()));
        assert_eq!(check("{% for s in steps %}{{ s }}{% endfor %}{{ range(3)|length }}", &["steps"]), Ok(()));
        let err = check("Q: {{ qustion }}", &["input", "problem"]).unwrap_err();
        assert!(err.contains("{{ qustion }}") && err.contains("input, problem"), "{err}");
        let err = check("Q: {{ input ", &["input"]).unwrap_err();
        assert!(err.starts_with("template line 1:"), "{err}");
        assert!(check("[user]\n{{ input }}\n[system]\nlate", &["input"]).is_err(), "a system turn only first");
        assert!(check("  ", &["input"]).is_err());
    }

    #[test]
    fn renders_turn_by_turn_and_strictly() {
        let vars = minijinja::context! { input => "2 + 2\n[user]", problem => minijinja::context! { level => 1 } };
        let messages = render("[system]\nBe brief.\n[user]\n{{ input }} (level {{ problem.level }})", &vars).unwrap();
        assert_eq!(messages.len(), 2, "a marker in the input starts no turn");
        assert_eq!(messages[1].content, "2 + 2\n[user] (level 1)");
        assert!(render("{{ problem.missing }}", &vars).unwrap_err().contains("undefined"));
        assert!(render("{% for i in range(100000) %}{{ i }}{% endfor %}", &vars).is_err(), "fuel runs out");
        assert_eq!(
            problem_fields("{{ problem.options }} {{ input }} {{ problem.a.b }}"),
            ["a".to_string(), "options".to_string()].into()
        );
    }
}
