//! The config file's `[serve]` table: what `serve`'s flags say, for a server started
//! the same way every time, and the profiles a request's model may name.
//!
//! ```toml
//! [serve]
//! api_key = "..."          # or --api-key; required off loopback
//! budget_tokens = 20000     # each request's search stops issuing calls there
//! budget_usd = 0.05
//! max_searches = 4          # searches at once; more are answered 429
//! max_calls = 16            # upstream calls at once, over all searches
//! max_connections = 512     # open connections at once (default: from the open-file limit)
//! [serve.profiles.careful]  # model "careful@gpt-4o-mini"
//! method = "cot-sc"
//! samples = 7
//! ```

use std::collections::BTreeMap;

use super::route::Profile;
use crate::engine::MethodKind;

/// `[serve]` as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    pub api_key: Option<String>,
    pub budget_tokens: Option<u64>,
    pub budget_usd: Option<f64>,
    pub max_searches: Option<usize>,
    pub max_calls: Option<usize>,
    pub max_connections: Option<usize>,
    pub profiles: BTreeMap<String, Profile>,
}

const KEYS: &[&str] =
    &["api_key", "budget_tokens", "budget_usd", "max_searches", "max_calls", "max_connections", "profiles"];

/// Read `[serve]`; a mistake is one line naming the key (the server does not start on it).
pub fn read(table: &toml::Table, source: &str) -> Result<Settings, String> {
    let at = |key: &str, what: &str| format!("{source}: serve.{key}: {what}");
    let mut s = Settings::default();
    for (key, value) in table {
        match key.as_str() {
            "api_key" => match value.as_str().map(str::trim) {
                Some(k) if !k.is_empty() => s.api_key = Some(k.to_string()),
                _ => return Err(at(key, "expected the key as a non-empty string")),
            },
            "budget_tokens" => {
                s.budget_tokens = Some(
                    whole(value).filter(|n| *n >= 1).ok_or_else(|| at(key, "expected a whole number of at least 1"))?,
                )
            }
            "budget_usd" => match value.as_float().or_else(|| value.as_integer().map(|n| n as f64)) {
                Some(x) if x.is_finite() && x > 0.0 => s.budget_usd = Some(x),
                _ => return Err(at(key, "expected a positive amount of US dollars")),
            },
            "max_searches" | "max_calls" => {
                let n = whole(value)
                    .filter(|n| (1..=1024).contains(n))
                    .ok_or_else(|| at(key, "expected a whole number from 1 to 1024"))?;
                if key == "max_searches" {
                    s.max_searches = Some(n as usize);
                } else {
                    s.max_calls = Some(n as usize);
                }
            }
            "max_connections" => {
                let n = whole(value)
                    .filter(|n| (1..=MAX_CONNECTIONS as u64).contains(n))
                    .ok_or_else(|| at(key, &format!("expected a whole number from 1 to {MAX_CONNECTIONS}")))?;
                s.max_connections = Some(n as usize);
            }
            "profiles" => {
                let Some(profiles) = value.as_table() else {
                    return Err(at(key, "expected tables [serve.profiles.NAME]"));
                };
                for (name, profile) in profiles {
                    let p = self::profile(profile).map_err(|m| at(&format!("profiles.{name}"), &m))?;
                    s.profiles.insert(name.clone(), p);
                }
            }
            _ => return Err(at(key, &format!("unknown key (known: {})", KEYS.join(", ")))),
        }
    }
    Ok(s)
}

/// Most open connections (`--max-connections`, `max_connections`).
pub const MAX_CONNECTIONS: usize = 65_536;

fn whole(value: &toml::Value) -> Option<u64> {
    value.as_integer().and_then(|n| u64::try_from(n).ok())
}

/// A profile: `method` and the parameters (and `task`) as a request's `thoughtscope`
/// object writes them; the parameters are checked when a request uses it.
fn profile(value: &toml::Value) -> Result<Profile, String> {
    let table = value.as_table().ok_or("expected a table with method = \"...\"")?;
    let method = table.get("method").and_then(toml::Value::as_str).ok_or("needs method = \"...\"")?;
    let method = MethodKind::from_name(method)
        .ok_or_else(|| format!("unknown method {method:?} (known: {})", crate::engine::methods::names().join(", ")))?;
    let mut values = serde_json::Map::new();
    for (key, v) in table.iter().filter(|(k, _)| k.as_str() != "method") {
        let json = serde_json::to_value(v).map_err(|e| format!("{key}: {e}"))?;
        values.insert(key.clone(), json);
    }
    Ok(Profile { method, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_serve_table_reads_and_a_mistake_names_its_key() {
        let table: toml::Table = toml::from_str(
            "api_key = \"k\"\nbudget_tokens = 500\nmax_searches = 2\n[profiles.careful]\nmethod = \"cot-sc\"\nsamples = 7\n",
        )
        .unwrap();
        let s = read(&table, "c.toml").unwrap();
        assert_eq!(s.api_key.as_deref(), Some("k"));
        assert_eq!((s.budget_tokens, s.max_searches), (Some(500), Some(2)));
        assert_eq!(s.profiles["careful"].method.label(), "cot-sc");
        assert_eq!(s.profiles["careful"].values["samples"], 7);
        for (text, key) in [
            ("budget_tokens = 0", "serve.budget_tokens"),
            ("max_calls = \"x\"", "serve.max_calls"),
            ("colour = 1", "serve.colour: unknown key"),
            ("[profiles.p]\nmethod = \"magic\"", "serve.profiles.p: unknown method"),
        ] {
            let e = read(&toml::from_str(text).unwrap(), "c.toml").unwrap_err();
            assert!(e.starts_with("c.toml: ") && e.contains(key), "{e}");
        }
    }
}
