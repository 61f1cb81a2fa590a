//! The raw shapes of config-file sections that other modules interpret: keymap
//! entries as written (the explorer turns them into bindings), and toml errors as
//! one line.

use serde::{Deserialize, Deserializer, Serialize};

/// A keymap entry as written in a file: `on` is one key or a list of alternative
/// keys, `run` an action name (or `"none"`/`"noop"` to unbind), `desc` a one-liner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBinding {
    #[serde(deserialize_with = "one_or_many")]
    pub on: Vec<String>,
    pub run: String,
    #[serde(default)]
    pub desc: Option<String>,
    /// 1-based position of the entry in its file, for messages (0: use the position in the slice).
    #[serde(skip)]
    pub entry: usize,
}

fn one_or_many<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    match OneOrMany::deserialize(deserializer) {
        Ok(OneOrMany::One(key)) => Ok(vec![key]),
        Ok(OneOrMany::Many(keys)) => Ok(keys),
        Err(_) => Err(serde::de::Error::custom("`on` must be a key string or a list of key strings")),
    }
}

/// Read the `keymap` array of a parsed file into entries, numbering them from 1.
/// Entries that are not shaped like a binding come back as (entry, message) problems
/// (entry 0: the `keymap` value itself is wrong).
pub fn raw_bindings_from_value(value: Option<&toml::Value>) -> (Vec<RawBinding>, Vec<(usize, String)>) {
    let mut raws = Vec::new();
    let mut problems = Vec::new();
    match value {
        None => {}
        Some(toml::Value::Array(entries)) => {
            for (i, entry) in entries.iter().enumerate() {
                match entry.clone().try_into::<RawBinding>() {
                    Ok(mut raw) => {
                        raw.entry = i + 1;
                        raws.push(raw);
                    }
                    Err(e) => problems.push((i + 1, e.message().trim().to_string())),
                }
            }
        }
        Some(_) => problems.push((0, "`keymap` must be an array of tables ([[keymap]])".to_string())),
    }
    (raws, problems)
}

/// A toml error as "line L, column C: message" (one line, no source snippet).
pub fn toml_error_message(error: &toml::de::Error, text: &str) -> String {
    let message = error.message().trim();
    match error.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message.to_string(),
    }
}
