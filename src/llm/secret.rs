//! An API key. It lives only inside a provider: it prints as `***` (Debug and
//! Display), is not serialisable, and error text from servers is scrubbed of it.
//!
//! Every key made into a [`Secret`] (from the environment, the config file or an
//! `api_key_cmd`) is also noted in a process-wide set of known secret values, and
//! [`redact`] (with [`redact_json`] and [`redact_data`] for structured data) replaces
//! them with [`REDACTED`] wherever text is written: model replies and tool observations
//! as they reach the engine (so a key a model echoes or a tool reads is never recorded
//! nor sent back to a model), session lines, disk-cache files, streamed text and
//! terminal output.

use std::borrow::Cow;
use std::fmt;
use std::sync::RwLock;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// What a known secret value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this are not redacted everywhere: a real API key is longer, and
/// replacing a short word (`none`, `ollama`) in every text would mangle it. Provider error
/// messages are still scrubbed of any key by [`Secret::scrub`].
pub const MIN_REDACTED_LEN: usize = 8;

/// The known secret values, longest first (so a key containing another is replaced whole).
static KNOWN: RwLock<Vec<String>> = RwLock::new(Vec::new());

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// `None` for an empty or blank value (an unset key, in effect). The value becomes a
    /// known secret, redacted from everything written.
    pub fn new(value: impl Into<String>) -> Option<Secret> {
        let value = value.into().trim().to_string();
        if value.is_empty() {
            return None;
        }
        register(&value);
        Some(Secret(value))
    }

    /// The key itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Note `value` as a secret to redact (values under [`MIN_REDACTED_LEN`] bytes are not).
pub fn register(value: &str) {
    let value = value.trim();
    if value.len() < MIN_REDACTED_LEN {
        return;
    }
    let Ok(mut known) = KNOWN.write() else { return };
    let mut forms = vec![value.to_string()];
    // How the value looks inside a JSON string, where it differs (quotes, backslashes).
    if let Ok(quoted) = serde_json::to_string(value) {
        let escaped = &quoted[1..quoted.len() - 1];
        if escaped != value {
            forms.push(escaped.to_string());
        }
    }
    for form in forms {
        if !known.contains(&form) {
            known.push(form);
        }
    }
    known.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
}

/// Whether `text` contains a known secret value.
pub fn contains_secret(text: &str) -> bool {
    KNOWN.read().is_ok_and(|known| known.iter().any(|k| text.contains(k.as_str())))
}

/// `text` with every known secret value replaced by [`REDACTED`] (borrowed when there is none).
pub fn redact(text: &str) -> Cow<'_, str> {
    let Ok(known) = KNOWN.read() else { return Cow::Borrowed(text) };
    let mut out = Cow::Borrowed(text);
    for k in known.iter() {
        if out.contains(k.as_str()) {
            out = Cow::Owned(out.replace(k.as_str(), REDACTED));
        }
    }
    out
}

/// Redact every string (and object key) in a JSON value; true if anything changed.
pub fn redact_json(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) => match redact(s) {
            Cow::Owned(r) => {
                *s = r;
                true
            }
            Cow::Borrowed(_) => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |changed, v| redact_json(v) | changed),
        Value::Object(map) => {
            let mut changed = false;
            let keys: Vec<String> = map.keys().filter(|k| contains_secret(k)).cloned().collect();
            for key in keys {
                if let Some(v) = map.remove(&key) {
                    map.insert(redact(&key).into_owned(), v);
                    changed = true;
                }
            }
            map.values_mut().fold(changed, |changed, v| redact_json(v) | changed)
        }
        _ => false,
    }
}

/// A copy of `data` with every known secret value in its strings redacted, or `None` when
/// it holds none (or its redacted form no longer reads back as a `T`).
pub fn redact_data<T: Serialize + DeserializeOwned>(data: &T) -> Option<T> {
    let mut value = serde_json::to_value(data).ok()?;
    if !redact_json(&mut value) {
        return None;
    }
    serde_json::from_value(value).ok()
}

/// Redact `data` in place (nothing happens when it holds no known secret).
pub fn redact_in_place<T: Serialize + DeserializeOwned>(data: &mut T) {
    if KNOWN.read().is_ok_and(|k| k.is_empty()) {
        return;
    }
    if let Some(clean) = redact_data(data) {
        *data = clean;
    }
}

/// One serialised JSON line (a session record, a cache file) with known secrets redacted
/// inside its strings; the line is returned as is when it holds none.
pub fn redact_json_line(line: String) -> String {
    if !contains_secret(&line) {
        return line;
    }
    match serde_json::from_str::<serde_json::Value>(&line) {
        Ok(mut value) => {
            redact_json(&mut value);
            // A secret that only appears across JSON syntax is replaced in the text.
            let text = serde_json::to_string(&value).unwrap_or_default();
            redact(&text).into_owned()
        }
        Err(_) => redact(&line).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_and_scrubs_itself() {
        let s = Secret::new("sk-very-secret").unwrap();
        assert_eq!(format!("{s} {s:?} {:?}", Some(&s)), "*** *** Some(***)");
        assert_eq!(s.scrub("bad key sk-very-secret given"), "bad key *** given");
        assert_eq!(s.expose(), "sk-very-secret");
        assert!(Secret::new("  \n").is_none());
    }

    #[test]
    fn a_secret_made_anywhere_is_redacted_from_text_json_and_data() {
        let _key = Secret::new("sk-redact-me-0123456789").unwrap();
        let _quoted = Secret::new("pa\"ss\\word-with-quotes").unwrap();
        assert_eq!(redact("the key is sk-redact-me-0123456789."), "the key is [redacted].");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        assert!(contains_secret("xx sk-redact-me-0123456789 xx") && !contains_secret("sk-redact-me"));

        let line = serde_json::to_string(&serde_json::json!({
            "text": "echo sk-redact-me-0123456789 and pa\"ss\\word-with-quotes",
            "sk-redact-me-0123456789": [1, "sk-redact-me-0123456789"],
        }))
        .unwrap();
        let clean = redact_json_line(line);
        assert!(!clean.contains("sk-redact-me") && !clean.contains("word-with-quotes"), "{clean}");
        let v: serde_json::Value = serde_json::from_str(&clean).expect("still JSON");
        assert_eq!(v["text"], "echo [redacted] and [redacted]");
        assert_eq!(v["[redacted]"][1], "[redacted]");

        let mut data = vec![("a".to_string(), "my sk-redact-me-0123456789".to_string())];
        redact_in_place(&mut data);
        assert_eq!(data[0].1, "my [redacted]");
        assert!(redact_data(&data).is_none(), "nothing left to redact");
    }

    #[test]
    fn short_values_are_not_redacted_everywhere() {
        let _short = Secret::new("ollama").unwrap();
        assert_eq!(redact("ollama serves llama"), "ollama serves llama");
    }
}
