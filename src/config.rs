//! The user's config file, `<config dir>/thoughtscope/config.toml` (or
//! `$THOUGHTSCOPE_CONFIG_DIR/config.toml`):
//!
//! ```toml
//! theme = "dark"
//! [defaults]          # defaults for a run; every key optional
//! method = "tot-bfs"
//! breadth = 5
//! [[keymap]]          # overrides, same shape as assets/keymap.toml
//! on = "ctrl-s"
//! run = "save_as"
//! desc = "Save"
//! ```
//!
//! Loading never fails: problems become warnings naming the file and key, and the
//! affected keys fall back to the built-in defaults. Sections this module does not
//! own (`[providers.*]`, `[prices.*]`, ...) are ignored.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::tui::keymap::{raw_bindings_from_value, toml_error_message, Keymap, RawBinding};
use crate::tui::theme::ThemeSet;

/// Environment variable naming a directory that holds config.toml and themes/.
pub const CONFIG_DIR_ENV: &str = "THOUGHTSCOPE_CONFIG_DIR";

pub const GENERATORS: &[&str] = &["propose", "sample"];
pub const EVALUATORS: &[&str] = &["value", "vote"];
pub const SELECTIONS: &[&str] = &["greedy", "sample"];
pub const TOOL_MODES: &[&str] = &["text", "native"];

/// Defaults for a run, each overriding the built-in default when set (command-line
/// flags override these in turn). The enum-like values are checked against the
/// allowed names, spelled as on the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunDefaults {
    pub task: Option<String>,
    /// A registered method (`engine::methods::REGISTRY`).
    pub method: Option<String>,
    pub provider: Option<String>,
    pub breadth: Option<usize>,
    pub n_generate: Option<u32>,
    pub n_evaluate: Option<u32>,
    /// One of [`GENERATORS`].
    pub generator: Option<String>,
    /// One of [`EVALUATORS`].
    pub evaluator: Option<String>,
    /// One of [`SELECTIONS`].
    pub select: Option<String>,
    pub steps: Option<usize>,
    pub threshold: Option<f64>,
    pub max_states: Option<usize>,
    pub samples: Option<u32>,
    /// One of [`TOOL_MODES`] (ReAct).
    pub tool_mode: Option<String>,
    /// ReAct: most thought/action/observation steps.
    pub max_steps: Option<usize>,
    /// cot-sc-react: the majority share below which ReAct takes over.
    pub majority_threshold: Option<f64>,
    pub temperature: Option<f32>,
    pub lenient: Option<bool>,
    pub seed: Option<u64>,
    pub sim_noise: Option<f64>,
    pub concurrency: Option<usize>,
}

const DEFAULT_KEYS: &[&str] = &[
    "task",
    "method",
    "provider",
    "breadth",
    "n_generate",
    "n_evaluate",
    "generator",
    "evaluator",
    "select",
    "steps",
    "threshold",
    "max_states",
    "samples",
    "tool_mode",
    "max_steps",
    "majority_threshold",
    "temperature",
    "lenient",
    "seed",
    "sim_noise",
    "concurrency",
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// The theme to start with (checked against the loaded themes by the caller).
    pub theme: Option<String>,
    pub defaults: RunDefaults,
    /// `[[keymap]]` overrides, in file order; apply with [`Config::build_keymap`].
    pub keymap: Vec<RawBinding>,
    /// The config.toml this came from (set even when the file does not exist).
    pub path: Option<PathBuf>,
}

impl Config {
    /// The config directory: `$THOUGHTSCOPE_CONFIG_DIR` if set, else the
    /// platform's (`~/.config/thoughtscope` on Linux).
    pub fn dir() -> Option<PathBuf> {
        dir_from(std::env::var_os(CONFIG_DIR_ENV))
    }

    /// Load config.toml from [`Config::dir`]. Never fails; see the module docs.
    pub fn load() -> (Config, Vec<String>) {
        match Config::dir() {
            Some(dir) => Config::load_from(&dir),
            None => (Config::default(), Vec::new()),
        }
    }

    /// Load `dir/config.toml`. A missing file is no problem; an unreadable or
    /// malformed one gives one warning and the defaults.
    pub fn load_from(dir: &Path) -> (Config, Vec<String>) {
        let path = dir.join("config.toml");
        let source = path.display().to_string();
        let (mut config, warnings) = match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &source),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Config::default(), Vec::new()),
            Err(e) => (Config::default(), vec![format!("{source}: cannot read: {e}; using the defaults")]),
        };
        config.path = Some(path);
        (config, warnings)
    }

    /// Parse config text leniently: a bad key is warned about (naming `source` and
    /// the key) and skipped, and everything else is kept.
    pub fn parse(text: &str, source: &str) -> (Config, Vec<String>) {
        let mut config = Config::default();
        let mut warnings = Vec::new();
        let table: toml::Table = match toml::from_str(text) {
            Ok(table) => table,
            Err(e) => {
                warnings.push(format!("{source}: {}; using the defaults", toml_error_message(&e, text)));
                return (config, warnings);
            }
        };
        let mut warn = |key: &str, message: String| warnings.push(format!("{source}: {key}: {message}"));

        match table.get("theme") {
            None => {}
            Some(toml::Value::String(name)) => config.theme = Some(name.clone()),
            Some(other) => warn("theme", format!("expected a theme name, found {}; ignored", describe(other))),
        }

        match table.get("defaults") {
            None => {}
            Some(toml::Value::Table(defaults)) => config.defaults = parse_defaults(defaults, &mut warn),
            Some(other) => {
                warn("defaults", format!("expected a table ([defaults]), found {}; ignored", describe(other)))
            }
        }

        let (raws, problems) = raw_bindings_from_value(table.get("keymap"));
        for (entry, message) in problems {
            match entry {
                0 => warn("keymap", format!("{message}; ignored")),
                n => warn(&format!("keymap entry {n}"), format!("{message}; entry skipped")),
            }
        }
        config.keymap = raws;
        (config, warnings)
    }

    /// Where user themes live: `themes/` next to config.toml.
    pub fn themes_dir(&self) -> Option<PathBuf> {
        let path = self.path.clone().or_else(|| Config::dir().map(|d| d.join("config.toml")))?;
        path.parent().map(|dir| dir.join("themes"))
    }

    /// Built-in themes plus the user's from [`Config::themes_dir`].
    pub fn theme_set(&self) -> ThemeSet {
        ThemeSet::load(self.themes_dir().as_deref())
    }

    /// The default keymap with this file's `[[keymap]]` overrides applied, and
    /// warnings for entries that had to be skipped.
    pub fn build_keymap(&self) -> (Keymap, Vec<String>) {
        let source = self.path.as_ref().map_or_else(|| "config.toml".to_string(), |p| p.display().to_string());
        Keymap::default().with_overrides(&self.keymap, &source)
    }
}

fn dir_from(env: Option<OsString>) -> Option<PathBuf> {
    match env {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => directories::ProjectDirs::from("", "", "thoughtscope").map(|p| p.config_dir().to_path_buf()),
    }
}

fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("string \"{s}\""),
        toml::Value::Table(_) | toml::Value::Array(_) => value.type_str().to_string(),
        other => format!("{} {other}", other.type_str()),
    }
}

fn parse_defaults(table: &toml::Table, warn: &mut impl FnMut(&str, String)) -> RunDefaults {
    let mut reader = Reader { table, warn };
    let defaults = RunDefaults {
        task: reader.string("task"),
        method: reader.choice("method", &crate::engine::methods::names()),
        provider: reader.string("provider"),
        breadth: reader.whole("breadth", 1),
        n_generate: reader.whole("n_generate", 1),
        n_evaluate: reader.whole("n_evaluate", 0),
        generator: reader.choice("generator", GENERATORS),
        evaluator: reader.choice("evaluator", EVALUATORS),
        select: reader.choice("select", SELECTIONS),
        steps: reader.whole("steps", 1),
        threshold: reader.number("threshold", f64::MIN),
        max_states: reader.whole("max_states", 1),
        samples: reader.whole("samples", 1),
        tool_mode: reader.choice("tool_mode", TOOL_MODES),
        max_steps: reader.whole("max_steps", 1),
        majority_threshold: reader.number("majority_threshold", 0.0),
        temperature: reader.number("temperature", 0.0).map(|t| t as f32),
        lenient: reader.boolean("lenient"),
        seed: reader.whole("seed", 0),
        sim_noise: reader.number("sim_noise", 0.0),
        concurrency: reader.whole("concurrency", 1),
    };
    for key in table.keys() {
        if !DEFAULT_KEYS.contains(&key.as_str()) {
            (reader.warn)(
                &format!("defaults.{key}"),
                format!("unknown key (known: {}); ignored", DEFAULT_KEYS.join(", ")),
            );
        }
    }
    defaults
}

/// Picks typed keys out of `[defaults]`, warning about each one it cannot use.
struct Reader<'a, W: FnMut(&str, String)> {
    table: &'a toml::Table,
    warn: &'a mut W,
}

impl<W: FnMut(&str, String)> Reader<'_, W> {
    fn reject(&mut self, key: &str, expected: &str, value: &toml::Value) {
        (self.warn)(
            &format!("defaults.{key}"),
            format!("expected {expected}, found {}; using the default", describe(value)),
        );
    }

    fn string(&mut self, key: &str) -> Option<String> {
        match self.table.get(key)? {
            toml::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            other => {
                self.reject(key, "a non-empty string", other);
                None
            }
        }
    }

    fn choice(&mut self, key: &str, allowed: &[&str]) -> Option<String> {
        let value = self.table.get(key)?;
        match value.as_str().map(str::trim) {
            Some(s) if allowed.contains(&s) => Some(s.to_string()),
            _ => {
                self.reject(key, &format!("one of {}", allowed.join(", ")), value);
                None
            }
        }
    }

    fn whole<T: TryFrom<i64>>(&mut self, key: &str, min: i64) -> Option<T> {
        let value = self.table.get(key)?;
        let parsed = value.as_integer().filter(|n| *n >= min).and_then(|n| T::try_from(n).ok());
        if parsed.is_none() {
            self.reject(key, &format!("a whole number of at least {min}"), value);
        }
        parsed
    }

    fn number(&mut self, key: &str, min: f64) -> Option<f64> {
        let value = self.table.get(key)?;
        let parsed = match value {
            toml::Value::Float(x) => Some(*x),
            toml::Value::Integer(n) => Some(*n as f64),
            _ => None,
        };
        let parsed = parsed.filter(|x| x.is_finite() && *x >= min);
        if parsed.is_none() {
            let expected = if min == f64::MIN { "a number".to_string() } else { format!("a number of at least {min}") };
            self.reject(key, &expected, value);
        }
        parsed
    }

    fn boolean(&mut self, key: &str) -> Option<bool> {
        let value = self.table.get(key)?;
        let parsed = value.as_bool();
        if parsed.is_none() {
            self.reject(key, "true or false", value);
        }
        parsed
    }
}

/// Environment variable naming the directory for sessions the explorer records.
pub const DATA_DIR_ENV: &str = "THOUGHTSCOPE_DATA_DIR";

/// Where the explorer keeps its sessions: `$THOUGHTSCOPE_DATA_DIR`, else the
/// platform's data directory (`~/.local/share/thoughtscope` on Linux), else
/// `.thoughtscope` in the current directory.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    directories::ProjectDirs::from("", "", "thoughtscope")
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".thoughtscope"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::Action;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    const FULL: &str = r#"
theme = "light"

[defaults]
task = "game24"
method = "tot-dfs"
provider = "sim"
breadth = 5
n_generate = 1
n_evaluate = 3
generator = "sample"
evaluator = "vote"
select = "greedy"
threshold = 3
max_states = 100
samples = 10
tool_mode = "native"
max_steps = 5
majority_threshold = 0.6
temperature = 0.7
seed = 42
sim_noise = 1.5
concurrency = 8

[providers.local]
base_url = "http://localhost:8080/v1"

[prices."gpt-4"]
input = 30.0

[[keymap]]
on = "ctrl-s"
run = "save_as"
desc = "Save"

[[keymap]]
on = ["q"]
run = "none"
"#;

    #[test]
    fn full_file_parses_and_other_sections_are_ignored() {
        let (config, warnings) = Config::parse(FULL, "config.toml");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.theme.as_deref(), Some("light"));
        let expected = RunDefaults {
            task: Some("game24".into()),
            method: Some("tot-dfs".into()),
            provider: Some("sim".into()),
            breadth: Some(5),
            n_generate: Some(1),
            n_evaluate: Some(3),
            generator: Some("sample".into()),
            evaluator: Some("vote".into()),
            select: Some("greedy".into()),
            steps: None,
            threshold: Some(3.0),
            max_states: Some(100),
            samples: Some(10),
            tool_mode: Some("native".into()),
            max_steps: Some(5),
            majority_threshold: Some(0.6),
            temperature: Some(0.7),
            lenient: None,
            seed: Some(42),
            sim_noise: Some(1.5),
            concurrency: Some(8),
        };
        assert_eq!(config.defaults, expected);
        assert_eq!(config.keymap.len(), 2);
        assert_eq!(config.keymap[0].on, ["ctrl-s"]);
        assert_eq!(config.keymap[1].entry, 2);

        let (keymap, warnings) = config.build_keymap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(keymap.action_for(&ctrl_s), Some(Action::SaveAs));
        assert_eq!(keymap.action_for(&KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE)), None);
    }

    #[test]
    fn empty_file_is_all_defaults() {
        let (config, warnings) = Config::parse("", "config.toml");
        assert!(warnings.is_empty());
        assert_eq!(config, Config::default());
    }

    #[test]
    fn a_bad_key_is_named_and_the_rest_kept() {
        let text = r#"
theme = 3
[defaults]
breadth = "five"
method = "tot-bs"
n_evaluate = -1
temperature = 0.5
samples = 4
colour = "red"
[[keymap]]
on = "x"
run = "step"
[[keymap]]
on = 7
run = "step"
[[keymap]]
on = "y"
run = "stepp"
"#;
        let (config, warnings) = Config::parse(text, "config.toml");
        assert_eq!(config.theme, None);
        assert_eq!(config.defaults.breadth, None);
        assert_eq!(config.defaults.method, None);
        assert_eq!(config.defaults.n_evaluate, None);
        assert_eq!(config.defaults.temperature, Some(0.5));
        assert_eq!(config.defaults.samples, Some(4));
        let expected = [
            "config.toml: theme: expected a theme name, found integer 3; ignored",
            "config.toml: defaults.breadth: expected a whole number of at least 1, found string \"five\"; using the default",
            "config.toml: defaults.method: expected one of io, cot, cot-sc, tot-bfs, tot-dfs, react, react-cot-sc, cot-sc-react, mcts, found string \"tot-bs\"; using the default",
            "config.toml: defaults.n_evaluate: expected a whole number of at least 0, found integer -1; using the default",
        ];
        for line in expected {
            assert!(warnings.iter().any(|w| w == line), "missing {line:?} in {warnings:#?}");
        }
        assert!(warnings.iter().any(|w| w.starts_with("config.toml: defaults.colour: unknown key (known: task, ")));
        assert!(warnings.iter().any(|w| w.starts_with("config.toml: keymap entry 2: `on` must be a key string")));
        assert_eq!(warnings.len(), 6, "{warnings:#?}");

        // Entry numbers survive the skipped entry: the bad action is entry 3.
        assert_eq!(config.keymap.len(), 2);
        let (keymap, warnings) = Keymap::default().with_overrides(&config.keymap, "config.toml");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("config.toml: keymap entry 3: unknown action \"stepp\""), "{}", warnings[0]);
        assert_eq!(keymap.action_for(&KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE)), Some(Action::Step));
    }

    #[test]
    fn malformed_file_is_one_warning_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "theme = \"dark\"\n[defaults\nbreadth = 3\n").unwrap();
        let (config, warnings) = Config::load_from(dir.path());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let file = dir.path().join("config.toml").display().to_string();
        assert!(warnings[0].starts_with(&format!("{file}: line 2, column")), "{}", warnings[0]);
        assert_eq!(Config { path: None, ..config }, Config::default());
    }

    #[test]
    fn load_from_reads_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let (config, warnings) = Config::load_from(dir.path());
        assert!(warnings.is_empty(), "a missing file is fine");
        assert_eq!(config.theme, None);

        std::fs::write(dir.path().join("config.toml"), FULL).unwrap();
        std::fs::create_dir(dir.path().join("themes")).unwrap();
        std::fs::write(dir.path().join("themes/mine.toml"), "inherits = \"light\"\n").unwrap();
        let (config, warnings) = Config::load_from(dir.path());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.theme.as_deref(), Some("light"));
        assert_eq!(config.themes_dir(), Some(dir.path().join("themes")));
        assert!(config.theme_set().get("mine").is_some());

        // A directory where the file should be is unreadable: one warning.
        let odd = tempfile::tempdir().unwrap();
        std::fs::create_dir(odd.path().join("config.toml")).unwrap();
        let (_, warnings) = Config::load_from(odd.path());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("config.toml: cannot read"), "{}", warnings[0]);
    }

    #[test]
    fn the_env_var_names_the_directory() {
        assert_eq!(dir_from(Some("/tmp/ts-config".into())), Some(PathBuf::from("/tmp/ts-config")));
        // Unset or empty: the platform directory (if the platform has one).
        assert_eq!(dir_from(Some("".into())), dir_from(None));
        if let Some(dir) = dir_from(None) {
            assert!(dir.ends_with("thoughtscope"), "{}", dir.display());
        }
    }
}
