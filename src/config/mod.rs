//! The user's config file, read by one loader for everything in it. Which file:
//!
//! 1. `--config FILE` (it must exist);
//! 2. else `$THOUGHTSCOPE_CONFIG` (a file);
//! 3. else `$THOUGHTSCOPE_CONFIG_DIR/config.toml`;
//! 4. else `<config dir>/thoughtscope/config.toml` (`~/.config/thoughtscope` on Linux).
//!
//! User themes are in `themes/` next to that file.
//!
//! ```toml
//! theme = "dark"
//! [defaults]          # defaults for a run; every key optional; flags override them
//! method = "tot-bfs"
//! breadth = 5
//! [[keymap]]          # overrides, same shape as assets/keymap.toml
//! on = "ctrl-s"
//! run = "save_as"
//! desc = "Save"
//! [providers.work]    # provider profiles and prices: see `crate::llm::config`
//! kind = "openai"
//! ```
//!
//! A file named with `--config` must be there and parse: one that is missing, is not a
//! regular file or is not TOML stops the command with one line ([`NamedConfigError`]).
//! Otherwise loading never fails: a malformed file at the usual place is one warning naming
//! it, and problems with the theme, `[defaults]` and `[[keymap]]` become
//! warnings naming the file and key, and the affected keys fall back to the built-in
//! defaults. The `[providers.*]` and `[prices.*]` sections are checked strictly, but
//! only a run that builds a real provider fails on them ([`Config::providers`]).
//! This module holds the raw data; the explorer builds its keymap and themes from it.

pub mod params;
pub mod raw;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::llm::config::{ConfigError, FileConfig};
pub use params::ParamPatch;
use raw::{raw_bindings_from_value, toml_error_message, RawBinding};

/// Environment variable naming a directory that holds config.toml and themes/.
pub const CONFIG_DIR_ENV: &str = "THOUGHTSCOPE_CONFIG_DIR";
/// Environment variable naming the config file itself.
pub const CONFIG_FILE_ENV: &str = "THOUGHTSCOPE_CONFIG";

/// `[defaults]`: the search parameters, and the run's other settings, each
/// overriding the built-in default when set (command-line flags override these in turn).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunDefaults {
    pub task: Option<String>,
    pub provider: Option<String>,
    pub sim_noise: Option<f64>,
    pub concurrency: Option<usize>,
    /// The named memory of methods that keep one (`--memory`).
    pub memory: Option<String>,
    /// The search parameters (`method`, `breadth`, ...).
    pub search: ParamPatch,
}

/// The top-level keys and sections of the file.
/// Longest warning about the file (longer ones are cut, saying how long they were).
const MAX_WARNING_CHARS: usize = 500;

pub const TOP_KEYS: &[&str] = &["theme", "defaults", "keymap", "providers", "prices", "break", "mcp", "serve"];

/// The `[defaults]` keys that are not search parameters.
pub const RUN_KEYS: &[&str] = &["task", "provider", "sim_noise", "concurrency", "memory"];

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The theme to start with (checked against the loaded themes by the explorer).
    pub theme: Option<String>,
    pub defaults: RunDefaults,
    /// `[[keymap]]` overrides, in file order, as written (the explorer applies them).
    pub keymap: Vec<RawBinding>,
    /// `[providers.*]` and `[prices.*]`, or why they cannot be used.
    providers: Result<FileConfig, ConfigError>,
    /// The config.toml this came from (set even when the file does not exist).
    pub path: Option<PathBuf>,
    /// `break = ["score<0.3", ...]`: breakpoints of every run (`--break` replaces them).
    pub breakpoints: Vec<String>,
    /// `[[mcp]]`: MCP servers a run may start by name (`--mcp NAME`).
    pub mcp: Vec<crate::tools::mcp::McpConfig>,
    /// `[serve]`: `thoughtscope serve`'s settings, as written (the serve module reads them).
    pub serve: toml::Table,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            theme: None,
            defaults: RunDefaults::default(),
            keymap: Vec::new(),
            providers: Ok(FileConfig::default()),
            path: None,
            breakpoints: Vec::new(),
            mcp: Vec::new(),
            serve: toml::Table::new(),
        }
    }
}

/// Which config file to read, by the rule in the module docs; `explicit` is `--config`.
/// The flag is true when the file must exist.
pub fn locate(explicit: Option<&Path>) -> Option<(PathBuf, bool)> {
    locate_with(explicit, &|name| std::env::var_os(name), default_dir())
}

fn locate_with(
    explicit: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
    platform_dir: Option<PathBuf>,
) -> Option<(PathBuf, bool)> {
    if let Some(path) = explicit {
        return Some((path.to_path_buf(), true));
    }
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(file) = set(CONFIG_FILE_ENV) {
        return Some((file, false));
    }
    let dir = set(CONFIG_DIR_ENV).or(platform_dir)?;
    Some((dir.join("config.toml"), false))
}

/// The config directory: `$THOUGHTSCOPE_CONFIG_DIR` if set, else the platform's (where
/// `tasks/` holds task files found by name).
pub fn dir() -> Option<PathBuf> {
    std::env::var_os(CONFIG_DIR_ENV).filter(|v| !v.is_empty()).map(PathBuf::from).or_else(default_dir)
}

/// The platform's config directory for thoughtscope (`~/.config/thoughtscope` on Linux).
fn default_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "thoughtscope").map(|p| p.config_dir().to_path_buf())
}

/// A config file named with `--config` that cannot be used: what is wrong, in one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--config {path}: {reason}")]
pub struct NamedConfigError {
    pub path: String,
    pub reason: String,
}

impl Config {
    /// Find and read the config file (`explicit` is `--config`). Only a file named with
    /// `--config` can fail (missing, not a regular file, not TOML); see the module docs.
    pub fn load(explicit: Option<&Path>) -> Result<(Config, Vec<String>), NamedConfigError> {
        match locate(explicit) {
            Some((path, true)) => Config::load_named(&path),
            Some((path, false)) => Ok(Config::load_file(&path, false)),
            None => Ok((Config::default(), Vec::new())),
        }
    }

    /// Read a file the person named: it must be a readable regular file that parses as
    /// TOML (a bad key inside it is still a warning, as anywhere).
    pub fn load_named(path: &Path) -> Result<(Config, Vec<String>), NamedConfigError> {
        let refuse = |reason: String| NamedConfigError {
            path: path.display().to_string(),
            reason: crate::userfile::clip(&reason, MAX_WARNING_CHARS).into_owned(),
        };
        let text = crate::userfile::read_text(path, &crate::userfile::CONFIG).map_err(|e| {
            let hint = if e.is_not_found() { "; name a config file that exists, or leave --config out" } else { "" };
            refuse(format!("cannot read it: {}{hint}", e.reason()))
        })?;
        if let Err(e) = toml::from_str::<toml::Table>(&text) {
            return Err(refuse(format!(
                "not valid TOML: {}; fix the file or leave --config out",
                toml_error_message(&e, &text)
            )));
        }
        Ok(Config::load_file(path, true))
    }

    /// Load `dir/config.toml`. A missing file is no problem.
    pub fn load_from(dir: &Path) -> (Config, Vec<String>) {
        Config::load_file(&dir.join("config.toml"), false)
    }

    /// Load `path`. A missing file is no problem unless `required`; an unreadable or
    /// malformed one gives one warning and the defaults. Only a regular file of at most
    /// [`crate::userfile::CONFIG`]'s size is read (a FIFO or `/dev/zero` is refused at once).
    pub fn load_file(path: &Path, required: bool) -> (Config, Vec<String>) {
        let source = path.display().to_string();
        let (mut config, warnings) = match crate::userfile::read_text(path, &crate::userfile::CONFIG) {
            Ok(text) => Config::parse(&text, &source),
            Err(e) if e.is_not_found() && !required => (Config::default(), Vec::new()),
            Err(e) => {
                let message = e.reason();
                let warning = format!("{source}: cannot read: {message}; using the defaults");
                let config =
                    Config { providers: Err(ConfigError::File { path: source, message }), ..Config::default() };
                (config, vec![warning])
            }
        };
        config.path = Some(path.to_path_buf());
        // A warning quotes what the file says: a huge value is not printed or drawn whole.
        let warnings =
            warnings.into_iter().map(|w| crate::userfile::clip(&w, MAX_WARNING_CHARS).into_owned()).collect();
        (config, warnings)
    }

    /// Parse config text leniently: a bad key is warned about (naming `source` and
    /// the key) and skipped, and everything else is kept.
    pub fn parse(text: &str, source: &str) -> (Config, Vec<String>) {
        let mut config = Config { providers: FileConfig::parse(text, Path::new(source)), ..Config::default() };
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

        config.breakpoints = parse_breakpoints(table.get("break"), &mut warn);
        config.mcp = parse_mcp(table.get("mcp"), &mut warn);
        match table.get("serve") {
            None => {}
            Some(toml::Value::Table(serve)) => config.serve = serve.clone(),
            Some(other) => warn("serve", format!("expected a table ([serve]), found {}; ignored", describe(other))),
        }

        for key in table.keys().filter(|k| !TOP_KEYS.contains(&k.as_str())) {
            warn(key, format!("unknown key (known: {}); ignored", TOP_KEYS.join(", ")));
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

    /// The `[providers.*]` profiles and `[prices.*]`, for building a real provider:
    /// an error names the file and the bad key (or why the file could not be read).
    pub fn providers(&self) -> Result<&FileConfig, ConfigError> {
        self.providers.as_ref().map_err(Clone::clone)
    }

    /// Where user themes live: `themes/` next to config.toml.
    pub fn themes_dir(&self) -> Option<PathBuf> {
        let path = self.path.clone().or_else(|| locate(None).map(|(path, _)| path))?;
        path.parent().map(|dir| dir.join("themes"))
    }

    /// The file's name for messages.
    pub fn source(&self) -> String {
        self.path.as_ref().map_or_else(|| "config.toml".to_string(), |p| p.display().to_string())
    }
}

/// `[[mcp]]`: the MCP server entries that read (a bad one is warned about and skipped).
fn parse_mcp(value: Option<&toml::Value>, warn: &mut impl FnMut(&str, String)) -> Vec<crate::tools::mcp::McpConfig> {
    let entries = match value {
        None => return Vec::new(),
        Some(toml::Value::Array(entries)) => entries,
        Some(other) => {
            warn("mcp", format!("expected [[mcp]] entries, found {}; ignored", describe(other)));
            return Vec::new();
        }
    };
    let mut out: Vec<crate::tools::mcp::McpConfig> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        match entry.clone().try_into::<crate::tools::mcp::McpConfig>() {
            Ok(cfg) if cfg.check().is_err() => {
                let why = cfg.check().err().unwrap_or_default();
                warn(&format!("mcp entry {}", i + 1), format!("{why}; entry skipped"))
            }
            Ok(cfg) if out.iter().any(|c| c.name == cfg.name) => {
                warn(&format!("mcp entry {}", i + 1), format!("a second server named {}; entry skipped", cfg.name))
            }
            Ok(cfg) => out.push(cfg),
            Err(e) => warn(&format!("mcp entry {}", i + 1), format!("{}; entry skipped", e.message())),
        }
    }
    out
}

/// `break = [...]`: the breakpoints that read (see `engine::breakpoint`); a bad one is
/// a warning naming it, and is skipped.
fn parse_breakpoints(value: Option<&toml::Value>, warn: &mut impl FnMut(&str, String)) -> Vec<String> {
    let mut kept = Vec::new();
    match value {
        None => {}
        Some(toml::Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let key = format!("break[{}]", i + 1);
                match item {
                    toml::Value::String(text) => match crate::engine::breakpoint::Breakpoint::parse(text) {
                        Ok(b) => kept.push(b.text()),
                        Err(e) => warn(&key, format!("{e}; skipped")),
                    },
                    other => warn(&key, format!("expected a string, found {}; skipped", describe(other))),
                }
            }
        }
        Some(other) => warn(
            "break",
            format!("expected a list of breakpoints (break = [\"score<0.3\"]), found {}; ignored", describe(other)),
        ),
    }
    kept
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
        provider: reader.string("provider"),
        sim_noise: reader.number("sim_noise", 0.0),
        concurrency: reader.whole("concurrency", 1),
        memory: reader.string("memory"),
        search: ParamPatch::read(&mut reader),
    };
    let known: Vec<&str> = RUN_KEYS.iter().copied().chain(ParamPatch::keys()).collect();
    for key in table.keys() {
        if !known.contains(&key.as_str()) {
            (reader.warn)(&format!("defaults.{key}"), format!("unknown key (known: {}); ignored", known.join(", ")));
        }
    }
    defaults
}

/// A number in the file, read as `f64` and kept as the parameter's type.
pub(crate) trait FromNumber {
    fn from_number(x: f64) -> Self;
}

impl FromNumber for f64 {
    fn from_number(x: f64) -> f64 {
        x
    }
}

/// Picks typed keys out of `[defaults]`, warning about each one it cannot use.
pub(crate) struct Reader<'a, W: FnMut(&str, String)> {
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

    pub(crate) fn string(&mut self, key: &str) -> Option<String> {
        match self.table.get(key)? {
            toml::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            other => {
                self.reject(key, "a non-empty string", other);
                None
            }
        }
    }

    /// `method`: a registered method's name.
    fn method(&mut self, key: &str) -> Option<crate::engine::MethodKind> {
        let value = self.table.get(key)?;
        let parsed = value.as_str().map(str::trim).and_then(crate::engine::MethodKind::from_name);
        if parsed.is_none() {
            self.reject(key, &format!("one of {}", crate::engine::methods::names().join(", ")), value);
        }
        parsed
    }

    /// A method parameter, in its declared type and range (the check every source of
    /// parameters goes through).
    fn param(&mut self, decl: &crate::engine::ParamDecl) -> Option<crate::engine::Value> {
        use crate::engine::Value;
        let raw = self.table.get(decl.name)?;
        let value = decl.accept(match raw {
            toml::Value::Integer(n) => u64::try_from(*n).map_or(Value::Real(*n as f64), Value::Whole),
            toml::Value::Float(x) => Value::Real(*x),
            toml::Value::String(s) => Value::Word(s.trim().to_string()),
            toml::Value::Boolean(b) => Value::Flag(*b),
            other => Value::Other(describe(other)),
        });
        match decl.check(&value) {
            Ok(()) => Some(value),
            Err(e) => {
                (self.warn)(
                    &format!("defaults.{}", decl.name),
                    format!("found {}: {}; using the default", describe(raw), e.expected),
                );
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

    fn number<T: FromNumber>(&mut self, key: &str, min: f64) -> Option<T> {
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
        parsed.map(T::from_number)
    }
}

#[cfg(test)]
mod tests;
