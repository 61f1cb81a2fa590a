//! Which model to talk to, and how: provider profiles and prices.
//!
//! The config file is found and read by [`crate::config::Config::load`] (one rule
//! for every section); this module interprets its `[providers.<name>]` and
//! `[prices."<model>"]` sections and ignores the others (UI settings live there too):
//!
//! ```toml
//! [providers.ollama]            # built in; a section here overrides its fields
//! model = "qwen2.5:7b"
//!
//! [providers.work]
//! kind = "openai"               # openai (any OpenAI-compatible server) | anthropic | responses
//! base_url = "https://llm.example.com/v1"
//! model = "llama-3.1-70b"
//! api_key_cmd = "pass show work/llm"   # or api_key_env = "WORK_LLM_KEY"
//!
//! [prices."llama-3.1-70b"]      # US dollars per million tokens
//! input = 0.6
//! output = 0.8
//! ```
//!
//! Keys come from an environment variable or a command and go straight into the
//! provider as a [`Secret`]; nothing here prints, records or returns them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::cache::{CacheMode, CachePolicy};
use super::http::HttpOptions;
use super::secret::Secret;

/// The compiled-in price table (`assets/prices.toml`).
const DEFAULT_PRICES: &str = include_str!("../../assets/prices.toml");

/// A `[providers.<name>]` section. Every field is optional so a section can
/// override single fields of a built-in profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The API spoken: a kind of [`super::api::KINDS`] (`openai`, `anthropic`, `responses`).
    pub kind: Option<String>,
    pub base_url: Option<String>,
    /// The model used when `--model` is not given.
    pub model: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Shell command printing the API key (e.g. `pass show openai`); wins over `api_key_env`.
    pub api_key_cmd: Option<String>,
    /// Overall limit on one HTTP request, in seconds.
    pub timeout_secs: Option<f64>,
    pub connect_timeout_secs: Option<f64>,
    /// Retries after the first attempt on connection errors, timeouts, 408, 409, 429 and 5xx.
    pub retries: Option<u32>,
    /// Most requests per minute sent to this provider.
    pub rpm: Option<u32>,
    /// Whether the server honours `n` (several choices per request). Unset: find out
    /// from the first reply and fall back to one request per sample if it does not.
    pub n: Option<bool>,
    /// Send `seed` with each request (OpenAI-compatible servers; default true).
    pub seed: Option<bool>,
    /// Name of the max-tokens field: `max_tokens` (default) or `max_completion_tokens`
    /// (OpenAI's reasoning models).
    pub max_tokens_param: Option<String>,
    /// Ask for token usage in streamed replies (`stream_options.include_usage`; default true).
    pub stream_usage: Option<bool>,
    /// The model's context window in tokens (default: what the server says, else a
    /// conservative 4096; see `Provider::context_window`).
    pub context: Option<u64>,
    /// The model is a reasoning model that takes no temperature and a completion limit
    /// named `max_completion_tokens` (default: known from its name: OpenAI's o1, o3, o4
    /// and gpt-5 families).
    pub reasoning: Option<bool>,
    /// How hard a reasoning model thinks: `none`, `minimal`, `low`, `medium`, `high`
    /// or `xhigh` (sent as `reasoning_effort`, or `reasoning.effort` to the Responses API).
    pub reasoning_effort: Option<String>,
    /// Anthropic's extended thinking: the tokens the model may think for (at least 1024).
    pub thinking_budget: Option<u32>,
    /// Switch an open model's thinking on or off (Qwen3, DeepSeek-V3.1, ...): sent as
    /// `chat_template_kwargs.enable_thinking`, which vLLM, SGLang and llama.cpp's server read.
    pub think: Option<bool>,
    /// Where `think` goes: `chat_template_kwargs` (default) or `reasoning_effort` (`none`
    /// for off, `medium` or `--reasoning-effort`'s level for on; the built-in `ollama`).
    pub think_via: Option<super::api::ThinkVia>,
    /// The tag pairs a model served raw puts its thinking between, replacing the
    /// defaults (`[["<think>", "</think>"], ...]`; `[]` turns the splitting off).
    pub think_tags: Option<Vec<[String; 2]>>,
    /// Ask a reply with no text and no tool call once more, at once (default false: an
    /// empty reply is an answer, which the task's reader counts as unreadable).
    pub retry_empty: Option<bool>,
}

/// The levels `reasoning_effort` takes.
pub const REASONING_EFFORTS: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh"];

/// Anthropic's smallest thinking budget.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// Why a reasoning effort is refused, if it is.
pub fn check_reasoning_effort(level: &str) -> Option<String> {
    (!REASONING_EFFORTS.contains(&level))
        .then(|| format!("must be one of {}, not {level:?}", REASONING_EFFORTS.join(", ")))
}

/// Why a thinking budget is refused, if it is.
pub fn check_thinking_budget(tokens: u32) -> Option<String> {
    (!(MIN_THINKING_BUDGET..=1_000_000).contains(&tokens))
        .then(|| format!("must be from {MIN_THINKING_BUDGET} to 1000000 tokens, not {tokens}"))
}

/// Whether a model is one of OpenAI's reasoning models, from its name (`o1`, `o3-mini`,
/// `o4-mini`, `gpt-5`, `gpt-5.1-codex`, `openai/o3`, ...; not `gpt-5-chat`, which is not).
pub fn is_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let o_series = ["o1", "o3", "o4"].iter().any(|p| name == *p || name.starts_with(&format!("{p}-")));
    o_series || (name.starts_with("gpt-5") && !name.contains("chat"))
}

impl Profile {
    /// `self` with the fields `over` sets replaced.
    fn overlay(mut self, over: &Profile) -> Profile {
        macro_rules! take {
            ($($f:ident),*) => { $( if over.$f.is_some() { self.$f = over.$f.clone(); } )* };
        }
        take!(
            kind,
            base_url,
            model,
            api_key_env,
            api_key_cmd,
            timeout_secs,
            connect_timeout_secs,
            retries,
            rpm,
            n,
            seed,
            max_tokens_param,
            stream_usage,
            context,
            reasoning,
            reasoning_effort,
            thinking_budget,
            think,
            think_via,
            think_tags,
            retry_empty
        );
        self
    }
}

/// The built-in profile `name` (each provider kind brings its own; see [`super::api`]).
pub fn builtin_profile(name: &str) -> Option<Profile> {
    let (kind, b) = super::api::builtin(name)?;
    Some(Profile {
        kind: Some(kind.kind().to_string()),
        base_url: Some(b.base_url.to_string()),
        api_key_env: b.key_env.map(str::to_string),
        n: b.n,
        think_via: b.think_via,
        ..Profile::default()
    })
}

/// The names of the built-in profiles, in registry order.
pub fn builtin_names() -> Vec<&'static str> {
    super::api::builtins().map(|(_, b)| b.name).collect()
}

/// Price of a model in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million prompt (input) tokens.
    pub input: f64,
    /// Per million completion (output) tokens.
    pub output: f64,
}

impl Price {
    pub const FREE: Price = Price { input: 0.0, output: 0.0 };

    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input + completion_tokens as f64 * self.output) / 1e6
    }
}

/// The parts of the config file this module reads.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FileConfig {
    #[serde(default)]
    pub providers: BTreeMap<String, Profile>,
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// The file these came from, for messages about its keys (empty: not from a file).
    #[serde(skip)]
    pub path: String,
}

/// Equal settings are equal wherever they were read from.
impl PartialEq for FileConfig {
    fn eq(&self, other: &FileConfig) -> bool {
        self.providers == other.providers && self.prices == other.prices
    }
}

/// Longest overall limit on one request (`--timeout`, `timeout_secs`): a day.
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;
/// Longest limit on connecting (`--connect-timeout`, `connect_timeout_secs`): an hour.
pub const MAX_CONNECT_TIMEOUT_SECS: f64 = 3_600.0;
/// Most retries of one call (`--retries`, `retries`).
pub const MAX_RETRIES: u32 = 100;
/// How long `api_key_cmd` may take before it is stopped.
pub const KEY_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a number of seconds is not a usable limit, if it is not: NaN, zero, negative
/// or above `max` (a plain `Duration::from_secs_f64(1e30)` would panic).
fn check_secs(s: f64, max: f64) -> Option<String> {
    (!(s.is_finite() && s > 0.0 && s <= max))
        .then(|| format!("must be a number of seconds above 0 and at most {max}, not {s}"))
}

fn check_retries(n: u32) -> Option<String> {
    (n > MAX_RETRIES).then(|| format!("must be at most {MAX_RETRIES}, not {n}"))
}

fn check_rpm(n: u32) -> Option<String> {
    (n == 0).then(|| "must be at least 1 (leave it out for no limit)".to_string())
}

fn check_price(x: f64) -> Option<String> {
    // -0.0 too: a negative price would make every budget unreachable.
    (!(x.is_finite() && x.is_sign_positive())).then(|| format!("must be a price of 0 or more, not {x}"))
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

impl FileConfig {
    pub fn parse(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
        let path = path.display().to_string();
        let mut file: FileConfig = toml::from_str(text).map_err(|e| ConfigError::File {
            path: path.clone(),
            message: crate::config::raw::toml_error_message(&e, text),
        })?;
        file.path = path;
        file.check()?;
        Ok(file)
    }

    /// The numbers of every profile and price in range; an error names the file and key.
    fn check(&self) -> Result<(), ConfigError> {
        let fail = |key: String, problem: String| ConfigError::File {
            path: self.path.clone(),
            message: format!("{key} {problem}"),
        };
        for (name, p) in &self.providers {
            let key = |field: &str| format!("providers.{name}.{field}");
            if let Some(kind) = p.kind.as_deref().filter(|k| super::api::kind(k).is_none()) {
                let known = super::api::kind_names();
                return Err(fail(key("kind"), format!("must be one of {known}, not {kind:?}")));
            }
            if let Some(problem) = p.timeout_secs.and_then(|s| check_secs(s, MAX_TIMEOUT_SECS)) {
                return Err(fail(key("timeout_secs"), problem));
            }
            if let Some(problem) = p.connect_timeout_secs.and_then(|s| check_secs(s, MAX_CONNECT_TIMEOUT_SECS)) {
                return Err(fail(key("connect_timeout_secs"), problem));
            }
            if let Some(problem) = p.retries.and_then(check_retries) {
                return Err(fail(key("retries"), problem));
            }
            if let Some(problem) = p.rpm.and_then(check_rpm) {
                return Err(fail(key("rpm"), problem));
            }
            if let Some(problem) = p.reasoning_effort.as_deref().and_then(check_reasoning_effort) {
                return Err(fail(key("reasoning_effort"), problem));
            }
            if let Some(problem) = p.thinking_budget.and_then(check_thinking_budget) {
                return Err(fail(key("thinking_budget"), problem));
            }
            if let Some(pair) = p.think_tags.iter().flatten().find(|[open, close]| open.is_empty() || close.is_empty())
            {
                return Err(fail(key("think_tags"), format!("has an empty tag in {pair:?}")));
            }
        }
        for (model, price) in &self.prices {
            for (field, x) in [("input", price.input), ("output", price.output)] {
                if let Some(problem) = check_price(x) {
                    return Err(fail(format!("prices.\"{model}\".{field}"), problem));
                }
            }
        }
        Ok(())
    }

    /// The profile called `name`: a built-in one with the file's fields laid over it.
    pub fn profile(&self, name: &str) -> Option<Profile> {
        match (builtin_profile(name), self.providers.get(name)) {
            (Some(b), Some(f)) => Some(b.overlay(f)),
            (Some(b), None) => Some(b),
            (None, Some(f)) => Some(f.clone()),
            (None, None) => None,
        }
    }

    /// The default price table with the file's prices laid over it.
    pub fn price_table(&self) -> PriceTable {
        let mut table = PriceTable::defaults();
        table.entries.extend(self.prices.iter().map(|(k, v)| (k.clone(), *v)));
        table
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    pub entries: BTreeMap<String, Price>,
}

impl PriceTable {
    pub fn defaults() -> PriceTable {
        // The compiled-in table is checked by a test; an error here cannot happen at run time.
        let file: FileConfig = toml::from_str(DEFAULT_PRICES).unwrap_or_default();
        PriceTable { entries: file.prices }
    }

    /// The price of `model`: its exact entry, else the longest entry it begins with.
    pub fn lookup(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.entries.get(model) {
            return Some(*p);
        }
        self.entries
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(n, _)| n.len())
            .map(|(_, p)| *p)
    }
}

/// True for a URL whose host is on this machine (no proxy, no key needed, no price).
pub fn is_loopback(url: &str) -> bool {
    let Ok(u) = reqwest::Url::parse(url) else { return false };
    match u.host_str() {
        Some("localhost") => true,
        Some(h) => h.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}

/// What the user chose about a real provider beyond its profile (`run`'s and the
/// explorer's flags, which `cli` turns into these): each `None` is the profile's.
#[derive(Debug, Clone, Default)]
pub struct ProviderOptions {
    /// `--model` (default: the profile's model).
    pub model: Option<String>,
    /// `--base-url` (default: the profile's; for `openai`, $OPENAI_BASE_URL).
    pub base_url: Option<String>,
    /// `--config`: the config file (default: found as [`crate::config::Config::load`] says).
    pub config: Option<PathBuf>,
    /// `--cache`: where shared answers are kept.
    pub cache: CacheMode,
    /// `--cache-purposes`: which purposes share answers (default: [`CachePolicy::default`]).
    pub cache_purposes: Option<CachePolicy>,
    /// `--budget-usd`: stop issuing calls once the run has cost this many US dollars.
    pub budget_usd: Option<f64>,
    /// `--budget-tokens`: stop issuing calls once the run has used this many tokens.
    pub budget_tokens: Option<u64>,
    /// `--timeout`: overall limit on one HTTP request, in seconds (default 300).
    pub timeout: Option<f64>,
    /// `--connect-timeout`: limit on connecting, in seconds (default 10).
    pub connect_timeout: Option<f64>,
    /// `--retries` on connection errors, timeouts, 408, 409, 429 and 5xx (default 4).
    pub retries: Option<u32>,
    /// `--rpm`: most requests per minute sent to the provider.
    pub rpm: Option<u32>,
    /// `--context-window`: the model's context window in tokens (default: the profile's
    /// `context`, else what the server says, else 4096).
    pub context_window: Option<u64>,
    /// `--reasoning-effort`: how hard a reasoning model thinks (default: the profile's).
    pub reasoning_effort: Option<String>,
    /// `--thinking-budget`: Anthropic's extended thinking, in tokens (default: the profile's).
    pub thinking_budget: Option<u32>,
    /// `--think on|off`: an open model's thinking switched (default: the profile's, else the model's own).
    pub think: Option<bool>,
}

/// Everything needed to build a real provider.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The profile's name as chosen (`openai`, `ollama`, `work`, ...).
    pub name: String,
    pub kind: super::api::Kind,
    pub base_url: String,
    pub model: String,
    pub key: Option<Secret>,
    /// Where the key was to come from, named in authentication errors (never the key).
    pub key_source: Option<String>,
    pub http: HttpOptions,
    pub n_supported: Option<bool>,
    pub seed: Option<u64>,
    pub max_tokens_param: String,
    pub stream_usage: bool,
    /// Ask a reply with no text once more, at once (the profile's `retry_empty`).
    pub retry_empty: bool,
    /// The context window the command line or the profile states, with where it came from.
    pub context: Option<crate::llm::ContextWindow>,
    /// What the API is asked of a reasoning model (see [`super::api::Reasoning`]).
    pub reasoning: super::api::Reasoning,
}

/// A limit in seconds from `--flag` (checked here) or the profile (checked when the file
/// was read, and again here so a profile built in code cannot panic either).
fn secs(
    flag: Option<f64>,
    file: Option<f64>,
    names: (&str, &str),
    max: f64,
    default: Duration,
) -> Result<Duration, ConfigError> {
    let (value, name) = match (flag, file) {
        (Some(s), _) => (s, names.0),
        (None, Some(s)) => (s, names.1),
        (None, None) => return Ok(default),
    };
    if let Some(problem) = check_secs(value, max) {
        return Err(ConfigError::Invalid(format!("{name} {problem}")));
    }
    Duration::try_from_secs_f64(value).map_err(|e| ConfigError::Invalid(format!("{name} {value}: {e}")))
}

/// A count from `--flag` or the profile, checked by `check`.
fn count(
    flag: Option<u32>,
    file: Option<u32>,
    names: (&str, &str),
    check: fn(u32) -> Option<String>,
) -> Result<Option<u32>, ConfigError> {
    let (value, name) = match (flag, file) {
        (Some(n), _) => (n, names.0),
        (None, Some(n)) => (n, names.1),
        (None, None) => return Ok(None),
    };
    match check(value) {
        Some(problem) => Err(ConfigError::Invalid(format!("{name} {problem}"))),
        None => Ok(Some(value)),
    }
}

/// Run `cmd` with `sh -c` and take its trimmed output as the key. `key` names the
/// setting in messages; a command still running after `timeout` is killed (with
/// anything it started) and is an error.
fn key_from_command(cmd: &str, key: &str, timeout: Duration) -> Result<Option<Secret>, ConfigError> {
    use std::io::Read;
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    // Its own process group, so a timeout stops what the shell started too.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child =
        command.spawn().map_err(|e| ConfigError::Invalid(format!("{key}: could not run the command: {e}")))?;
    // Read in a thread so a command printing much cannot block on a full pipe.
    let reader = child.stdout.take().map(|mut stdout| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stdout.read_to_end(&mut bytes);
            bytes
        })
    });
    let started = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < timeout => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                kill_group(&mut child);
                return Err(ConfigError::Invalid(format!(
                    "{key}: the command printed no key within {} s and was stopped; check it runs on its own \
                     (e.g. that it does not wait for a password)",
                    timeout.as_secs_f64()
                )));
            }
            Err(e) => {
                kill_group(&mut child);
                return Err(ConfigError::Invalid(format!("{key}: could not wait for the command: {e}")));
            }
        }
    };
    let stdout = reader.and_then(|r| r.join().ok()).unwrap_or_default();
    if !status.success() {
        return Err(ConfigError::Invalid(format!("{key}: the command failed ({status})")));
    }
    let secret = Secret::new(String::from_utf8_lossy(&stdout).to_string());
    if secret.is_none() {
        return Err(ConfigError::Invalid(format!("{key}: the command printed nothing")));
    }
    Ok(secret)
}

/// Kill a child started in its own process group, and everything in that group.
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        // `kill -KILL -PGID`: the shell's children go too (they may hold its stdout open).
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Choose the provider `name` (a profile) with the command-line overrides in `args`,
/// reading keys and defaults from `env`.
pub fn resolve(
    name: &str,
    args: &ProviderOptions,
    file: &FileConfig,
    env: &dyn Fn(&str) -> Option<String>,
    seed: u64,
) -> Result<Resolved, ConfigError> {
    let Some(profile) = file.profile(name) else {
        let builtins = builtin_names();
        let mut known: Vec<String> = builtins.iter().map(|s| s.to_string()).collect();
        known.extend(file.providers.keys().filter(|k| !builtins.contains(&k.as_str())).cloned());
        return Err(ConfigError::Invalid(format!(
            "unknown provider {name:?}: use sim, replay, {} or a [providers.{name}] section in the config file",
            known.join(", ")
        )));
    };
    let kinds = super::api::kind_names();
    let kind = profile.kind.as_deref().ok_or_else(|| {
        ConfigError::Invalid(format!("profile {name:?} needs a kind (one of {kinds}) in the config file"))
    })?;
    let kind = super::api::kind(kind)
        .map(super::api::Kind)
        .ok_or_else(|| ConfigError::Invalid(format!("profile {name:?} has kind {kind:?}: use one of {kinds}")))?;
    let env_url =
        super::api::builtin(name).and_then(|(_, b)| b.base_url_env).and_then(env).filter(|u| !u.trim().is_empty());
    let user_url = file.providers.get(name).and_then(|p| p.base_url.clone());
    let base_url = args
        .base_url
        .clone()
        .or(user_url)
        .or(env_url)
        .or(profile.base_url.clone())
        .ok_or_else(|| ConfigError::Invalid(format!("profile {name:?} has no base_url; give --base-url")))?;
    let base_url = kind.api().base_url(base_url.trim().trim_end_matches('/').to_string());
    let parsed = reqwest::Url::parse(&base_url)
        .map_err(|e| ConfigError::Invalid(format!("--base-url {base_url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ConfigError::Invalid(format!("--base-url {base_url:?} must start with http:// or https://")));
    }
    let model = args.model.clone().or(profile.model.clone()).filter(|m| !m.trim().is_empty()).ok_or_else(|| {
        ConfigError::Invalid(format!(
            "say which model: --model NAME (e.g. gpt-4o-mini, claude-3-5-haiku-latest, llama3.2), \
             or set model in [providers.{name}] of the config file"
        ))
    })?;
    let (key, key_source) = if let Some(cmd) = &profile.api_key_cmd {
        let setting = match file.path.as_str() {
            "" => format!("providers.{name}.api_key_cmd"),
            path => format!("{path}: providers.{name}.api_key_cmd"),
        };
        (key_from_command(cmd, &setting, KEY_COMMAND_TIMEOUT)?, Some(format!("the api_key_cmd of profile {name:?}")))
    } else if let Some(var) = &profile.api_key_env {
        (env(var).and_then(Secret::new), Some(var.clone()))
    } else {
        (None, None)
    };
    if let (Some(api), None) = (kind.api().needs_key(), &key) {
        return Err(ConfigError::Invalid(match &key_source {
            Some(source) => format!("{api} needs a key: set {source} (or api_key_cmd in [providers.{name}])"),
            None => {
                format!("{api} needs a key: set api_key_env or api_key_cmd in [providers.{name}] of the config file")
            }
        }));
    }
    let d = HttpOptions::default();
    let file_key = |field: &str| format!("providers.{name}.{field} in the config file");
    let http = HttpOptions {
        connect_timeout: secs(
            args.connect_timeout,
            profile.connect_timeout_secs,
            ("--connect-timeout", &file_key("connect_timeout_secs")),
            MAX_CONNECT_TIMEOUT_SECS,
            d.connect_timeout,
        )?,
        timeout: secs(
            args.timeout,
            profile.timeout_secs,
            ("--timeout", &file_key("timeout_secs")),
            MAX_TIMEOUT_SECS,
            d.timeout,
        )?,
        retries: count(args.retries, profile.retries, ("--retries", &file_key("retries")), check_retries)?
            .unwrap_or(d.retries),
        rpm: count(args.rpm, profile.rpm, ("--rpm", &file_key("rpm")), check_rpm)?,
        no_proxy: is_loopback(&base_url),
        ..d
    };
    if let (None, Some(source)) = (&key, &key_source) {
        // A hosted API (the built-in profile's own address) or a profile whose section names
        // its key needs one: said now, before any connection, rather than refused by the server.
        let hosted =
            builtin_profile(name).and_then(|b| b.base_url).is_some_and(|u| u.trim_end_matches('/') == base_url);
        // A server on this machine may leave the key its profile names unset.
        let named = file.providers.get(name).is_some_and(|p| p.api_key_env.is_some() || p.api_key_cmd.is_some())
            && !is_loopback(&base_url);
        if hosted || named {
            return Err(ConfigError::Invalid(format!(
                "provider {name} ({base_url}) needs an API key: set {source} (or api_key_cmd in [providers.{name}] \
                 of the config file)"
            )));
        }
    }
    let reasoning = reasoning_of(name, kind, &model, args, &profile)?;
    Ok(Resolved {
        name: name.to_string(),
        kind,
        base_url,
        model,
        key,
        key_source,
        http,
        n_supported: profile.n,
        seed: profile.seed.unwrap_or(true).then_some(seed),
        max_tokens_param: max_tokens_param(&profile, &reasoning),
        stream_usage: profile.stream_usage.unwrap_or(true),
        retry_empty: profile.retry_empty.unwrap_or(false),
        context: context_of(args.context_window, profile.context, &file_key("context"))?,
        reasoning,
    })
}

/// The completion limit's field: the profile's, else `max_completion_tokens` for a
/// reasoning model (OpenAI's take no other), else `max_tokens`.
fn max_tokens_param(profile: &Profile, reasoning: &super::api::Reasoning) -> String {
    let default = if reasoning.model { "max_completion_tokens" } else { "max_tokens" };
    profile.max_tokens_param.clone().unwrap_or_else(|| default.into())
}

/// What a reasoning model is asked, from the flags and the profile, checked against
/// what the kind can send.
fn reasoning_of(
    name: &str,
    kind: super::api::Kind,
    model: &str,
    args: &ProviderOptions,
    profile: &Profile,
) -> Result<super::api::Reasoning, ConfigError> {
    let effort = match (&args.reasoning_effort, &profile.reasoning_effort) {
        (Some(level), _) => Some((level, "--reasoning-effort".to_string())),
        (None, Some(level)) => Some((level, format!("providers.{name}.reasoning_effort"))),
        (None, None) => None,
    };
    if let Some((level, source)) = &effort {
        if let Some(problem) = check_reasoning_effort(level) {
            return Err(ConfigError::Invalid(format!("{source} {problem}")));
        }
    }
    let budget = args.thinking_budget.or(profile.thinking_budget);
    if let Some(problem) = budget.and_then(check_thinking_budget) {
        return Err(ConfigError::Invalid(format!("--thinking-budget {problem}")));
    }
    let api = kind.api();
    if let (Some(_), false) = (budget, api.takes_thinking_budget()) {
        return Err(ConfigError::Invalid(format!(
            "--thinking-budget is Anthropic's extended thinking; provider {name} speaks the {} API: give \
             --reasoning-effort LEVEL instead",
            kind.name()
        )));
    }
    if let (Some((_, source)), false) = (&effort, api.takes_reasoning_effort()) {
        return Err(ConfigError::Invalid(format!(
            "{source} is not part of the {} API: give --thinking-budget TOKENS for Anthropic's extended thinking",
            kind.name()
        )));
    }
    let think = args.think.or(profile.think);
    if let (Some(_), false) = (think, api.takes_think_switch()) {
        return Err(ConfigError::Invalid(format!(
            "--think switches an open model's thinking through chat_template_kwargs, which the {} API has not: \
             give --thinking-budget TOKENS for Anthropic, --reasoning-effort LEVEL for the Responses API",
            kind.name()
        )));
    }
    let think_via = profile.think_via.unwrap_or_default();
    if let (Some(false), super::api::ThinkVia::ReasoningEffort, Some((level, source))) = (think, think_via, &effort) {
        if level.as_str() != "none" {
            return Err(ConfigError::Invalid(format!(
                "--think off and {source} {level} contradict each other: provider {name} switches thinking through \
                 reasoning_effort; leave one out"
            )));
        }
    }
    let tags = match &profile.think_tags {
        Some(pairs) => pairs.iter().map(|[o, c]| (o.clone(), c.clone())).collect(),
        None => crate::protocol::default_think_tags(),
    };
    Ok(super::api::Reasoning {
        model: profile.reasoning.unwrap_or_else(|| is_reasoning_model(model)) || budget.is_some(),
        effort: effort.map(|(level, _)| level.clone()),
        thinking_budget: budget,
        think,
        think_via,
        think_tags: tags,
    })
}

/// The context window stated by `--context-window` or the profile's `context` key
/// (`key` names it in messages), checked: at least 256 tokens.
fn context_of(
    flag: Option<u64>,
    profile: Option<u64>,
    key: &str,
) -> Result<Option<crate::llm::ContextWindow>, ConfigError> {
    let (tokens, source) = match (flag, profile) {
        (Some(t), _) => (t, "--context-window".to_string()),
        (None, Some(t)) => (t, key.to_string()),
        (None, None) => return Ok(None),
    };
    if !(256..=100_000_000).contains(&tokens) {
        return Err(ConfigError::Invalid(format!("{source} must be from 256 to 100000000 tokens, not {tokens}")));
    }
    Ok(Some(crate::llm::ContextWindow { tokens, source, measured: true }))
}

/// Build the provider `name` (a built-in or configured profile) as the command line,
/// the environment and the config file (`file`: its profiles and prices) say.
pub fn build(
    name: &str,
    args: &ProviderOptions,
    file: &FileConfig,
    seed: u64,
) -> Result<std::sync::Arc<dyn super::Provider>, ConfigError> {
    let env = |k: &str| std::env::var(k).ok();
    let resolved = resolve(name, args, file, &env, seed)?;
    let price = resolved.model_price(file);
    super::build_http(&resolved, price).map_err(|e| ConfigError::Invalid(e.message))
}

impl Resolved {
    /// The model's price: the config file's for it, else free for a server on this
    /// machine (a local `gpt-4` is not OpenAI's), else the compiled-in table's, else unknown.
    pub fn price(&self, file: &FileConfig) -> Option<Price> {
        self.model_price(file).map(|p| p.price)
    }

    /// [`Resolved::price`], saying whether it is only assumed (a server on this machine
    /// that the config file does not price is taken as free).
    pub fn model_price(&self, file: &FileConfig) -> Option<ModelPrice> {
        let own = PriceTable { entries: file.prices.clone() };
        let stated = |price| ModelPrice { price, assumed: false };
        own.lookup(&self.model)
            .map(stated)
            .or_else(|| is_loopback(&self.base_url).then_some(ModelPrice { price: Price::FREE, assumed: true }))
            .or_else(|| PriceTable::defaults().lookup(&self.model).map(stated))
    }
}

/// A model's price and where it came from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    pub price: Price,
    /// Nothing states it: a server on this machine whose model the config file does not
    /// price is taken as free. Costs then read 0, which a proxy to a paid API is not.
    pub assumed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_default_price_table_parses_and_matches_by_prefix() {
        let parsed: FileConfig = toml::from_str(DEFAULT_PRICES).expect("assets/prices.toml parses");
        assert!(parsed.prices.len() >= 10);
        let t = PriceTable::defaults();
        assert_eq!(t.lookup("gpt-4o-mini-2024-07-18"), Some(Price { input: 0.15, output: 0.60 }));
        assert_eq!(t.lookup("gpt-4o"), Some(Price { input: 2.5, output: 10.0 }));
        assert_eq!(t.lookup("claude-sonnet-4-20250514").map(|p| p.output), Some(15.0));
        assert_eq!(t.lookup("smollm2"), None);
        let p = Price { input: 2.5, output: 10.0 };
        assert!((p.cost(1_000_000, 100_000) - 3.5).abs() < 1e-9);
    }

    #[test]
    fn profiles_from_the_file_overlay_builtins_and_other_sections_are_ignored() {
        let text = r#"
            [ui]
            theme = "dark"
            [providers.ollama]
            model = "qwen2.5:7b"
            [providers.work]
            kind = "openai"
            base_url = "https://llm.example.com/v1/"
            model = "big"
            api_key_env = "WORK_KEY"
            retries = 1
            [prices."big"]
            input = 1.0
            output = 2.0
        "#;
        let file = FileConfig::parse(text, Path::new("c.toml")).unwrap();
        let env = env_of(&[("WORK_KEY", "k-123"), ("OPENAI_API_KEY", "sk-x")]);
        let r = resolve("ollama", &ProviderOptions::default(), &file, &env, 7).unwrap();
        assert_eq!((r.base_url.as_str(), r.model.as_str()), ("http://localhost:11434/v1", "qwen2.5:7b"));
        assert!(r.key.is_none(), "a local server is not sent the OpenAI key");
        assert!(r.http.no_proxy);
        assert_eq!(r.price(&file), Some(Price::FREE));
        let r = resolve("work", &ProviderOptions::default(), &file, &env, 7).unwrap();
        assert_eq!(r.base_url, "https://llm.example.com/v1");
        assert_eq!(r.key.as_ref().map(|k| k.expose()), Some("k-123"));
        assert_eq!(r.http.retries, 1);
        assert_eq!(r.seed, Some(7));
        assert_eq!(r.price(&file), Some(Price { input: 1.0, output: 2.0 }));
        assert!(!format!("{r:?}").contains("k-123"), "Debug never shows the key");
    }

    #[test]
    fn a_server_on_this_machine_is_free_even_with_an_openai_model_name_unless_the_file_prices_it() {
        let env = env_of(&[("OPENAI_API_KEY", "sk-abc")]);
        let local = ProviderOptions {
            model: Some("gpt-4".into()),
            base_url: Some("http://127.0.0.1:8000/v1".into()),
            ..Default::default()
        };
        let r = resolve("openai", &local, &FileConfig::default(), &env, 0).unwrap();
        assert_eq!(r.price(&FileConfig::default()), Some(Price::FREE), "a local gpt-4 is not OpenAI's gpt-4");
        let priced = FileConfig::parse("[prices.\"gpt-4\"]\ninput = 1.0\noutput = 3.0\n", Path::new("c.toml")).unwrap();
        assert_eq!(r.price(&priced), Some(Price { input: 1.0, output: 3.0 }), "the config file says otherwise");
        // Free by rule is an assumption (a money budget cannot be measured on it); a stated price is not.
        assert_eq!(r.model_price(&FileConfig::default()).map(|p| p.assumed), Some(true));
        assert_eq!(r.model_price(&priced).map(|p| p.assumed), Some(false));
        let remote = ProviderOptions { model: Some("gpt-4".into()), ..Default::default() };
        let r = resolve("openai", &remote, &FileConfig::default(), &env, 0).unwrap();
        assert_eq!(r.price(&FileConfig::default()).map(|p| p.output), Some(60.0), "OpenAI's own gpt-4 is charged");
        assert_eq!(r.model_price(&FileConfig::default()).map(|p| p.assumed), Some(false), "the table states it");
    }

    #[test]
    fn openai_reads_the_usual_environment_and_flags_win() {
        let file = FileConfig::default();
        let env = env_of(&[("OPENAI_API_KEY", "sk-abc"), ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")]);
        let args = ProviderOptions { model: Some("m".into()), ..Default::default() };
        let r = resolve("openai", &args, &file, &env, 0).unwrap();
        assert_eq!(r.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(r.key.as_ref().map(|k| k.expose()), Some("sk-abc"));
        assert_eq!(r.key_source.as_deref(), Some("OPENAI_API_KEY"));
        let args = ProviderOptions { base_url: Some("http://localhost:1/v1".into()), timeout: Some(2.5), ..args };
        let r = resolve("openai", &args, &file, &env, 0).unwrap();
        assert_eq!(r.base_url, "http://localhost:1/v1");
        assert_eq!(r.http.timeout, Duration::from_millis(2500));
    }

    /// The Anthropic SDKs' `ANTHROPIC_BASE_URL` has no `/v1`; with or without it (or with
    /// a trailing slash) the base URL is the API's `/v1`, and the requests go to `/v1/messages`.
    #[test]
    fn an_anthropic_base_url_works_with_or_without_v1() {
        let file = FileConfig::default();
        let args = ProviderOptions { model: Some("claude-x".into()), ..Default::default() };
        const URLS: [&[(&str, &str)]; 4] = [
            &[("ANTHROPIC_API_KEY", "sk-ant"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")],
            &[("ANTHROPIC_API_KEY", "sk-ant"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")],
            &[("ANTHROPIC_API_KEY", "sk-ant"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1")],
            &[("ANTHROPIC_API_KEY", "sk-ant"), ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1/")],
        ];
        for pairs in URLS {
            let url = pairs[1].1;
            let env = env_of(pairs);
            let r = resolve("anthropic", &args, &file, &env, 0).unwrap();
            assert_eq!(r.base_url, "http://127.0.0.1:9/v1", "{url}");
            let flag = ProviderOptions { base_url: Some(url.into()), ..args.clone() };
            assert_eq!(resolve("anthropic", &flag, &file, &env, 0).unwrap().base_url, "http://127.0.0.1:9/v1");
        }
        // A proxy's own path keeps it, with the API's version after it.
        let env = env_of(&[("ANTHROPIC_API_KEY", "sk-ant")]);
        let proxy = ProviderOptions { base_url: Some("https://gw.example/anthropic".into()), ..args.clone() };
        assert_eq!(resolve("anthropic", &proxy, &file, &env, 0).unwrap().base_url, "https://gw.example/anthropic/v1");
        // The OpenAI kind's URL is as given.
        let env = env_of(&[("OPENAI_API_KEY", "sk")]);
        let openai = ProviderOptions { base_url: Some("http://127.0.0.1:9".into()), ..args };
        assert_eq!(resolve("openai", &openai, &file, &env, 0).unwrap().base_url, "http://127.0.0.1:9");
    }

    #[test]
    fn mistakes_get_clear_errors() {
        let file = FileConfig::default();
        let none = env_of(&[]);
        let m = ProviderOptions { model: Some("m".into()), ..Default::default() };
        let err = |name: &str, args: &ProviderOptions| resolve(name, args, &file, &none, 0).unwrap_err().to_string();
        assert!(err("nope", &m).contains("unknown provider \"nope\""));
        assert!(err("openai", &ProviderOptions::default()).contains("--model"));
        assert!(err("anthropic", &m).contains("ANTHROPIC_API_KEY"));
        // A hosted API without its key is refused before any connection, naming the variable.
        for (name, var) in [("openai", "OPENAI_API_KEY"), ("openrouter", "OPENROUTER_API_KEY")] {
            let e = err(name, &m);
            assert!(e.starts_with(&format!("provider {name} (https://")) && e.contains(&format!("set {var}")), "{e}");
        }
        // A server of one's own (another address) may need none.
        let own = ProviderOptions { base_url: Some("http://127.0.0.1:9/v1".into()), ..m.clone() };
        assert!(resolve("openai", &own, &file, &none, 0).unwrap().key.is_none());
        // A profile that names its key variable needs it.
        let named = FileConfig::parse(
            "[providers.work]\nkind = \"openai\"\nbase_url = \"http://10.0.0.9/v1\"\nmodel = \"m\"\napi_key_env = \"WORK_KEY\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let e = resolve("work", &ProviderOptions::default(), &named, &none, 0).unwrap_err().to_string();
        assert!(e.contains("needs an API key: set WORK_KEY"), "{e}");
        let bad = ProviderOptions { base_url: Some("ftp://x".into()), ..m.clone() };
        assert!(err("openai", &bad).contains("http://"));
        let bad = ProviderOptions { timeout: Some(-1.0), ..m.clone() };
        assert!(err("openai", &bad).contains("--timeout must be a number of seconds above 0"));
        let e = FileConfig::parse("[providers.x]\nkynd = \"openai\"\n", Path::new("/c.toml")).unwrap_err();
        assert!(e.to_string().contains("/c.toml") && e.to_string().contains("kynd"), "{e}");
        // A kind the registry does not have is named with the ones it has.
        let e = FileConfig::parse("[providers.x]\nkind = \"gemini\"\n", Path::new("/c.toml")).unwrap_err();
        let kinds = crate::llm::api::kind_names();
        assert_eq!(e.to_string(), format!("/c.toml: providers.x.kind must be one of {kinds}, not \"gemini\""));
        assert!(kinds.starts_with("openai, anthropic"), "{kinds}");
    }

    #[test]
    fn a_key_command_is_run_and_its_failure_does_not_echo_output() {
        let text = "[providers.p]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n\
                    api_key_cmd = \"echo sk-from-cmd\"\n[providers.q]\nkind = \"openai\"\n\
                    base_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\napi_key_cmd = \"echo sk-leak; exit 3\"\n";
        let file = FileConfig::parse(text, Path::new("c.toml")).unwrap();
        let none = env_of(&[]);
        let r = resolve("p", &ProviderOptions::default(), &file, &none, 0).unwrap();
        assert_eq!(r.key.as_ref().map(|k| k.expose()), Some("sk-from-cmd"));
        let e = resolve("q", &ProviderOptions::default(), &file, &none, 0).unwrap_err().to_string();
        assert!(e.contains("c.toml: providers.q.api_key_cmd: the command failed") && !e.contains("sk-leak"), "{e}");
    }

    #[test]
    fn absurd_timeouts_retries_and_rates_are_refused_naming_the_flag() {
        let file = FileConfig::default();
        let none = env_of(&[]);
        let m = ProviderOptions { model: Some("m".into()), ..Default::default() };
        let err = |args: ProviderOptions| resolve("ollama", &args, &file, &none, 0).unwrap_err().to_string();
        for x in [1e30, f64::INFINITY, f64::NAN, 0.0, -1.0, 86_401.0] {
            let e = err(ProviderOptions { timeout: Some(x), ..m.clone() });
            assert!(e.starts_with("--timeout must be a number of seconds above 0 and at most 86400"), "{x}: {e}");
            let e = err(ProviderOptions { connect_timeout: Some(x), ..m.clone() });
            assert!(e.starts_with("--connect-timeout must be"), "{x}: {e}");
        }
        assert!(
            err(ProviderOptions { retries: Some(1_000_000), ..m.clone() }).starts_with("--retries must be at most 100")
        );
        assert!(err(ProviderOptions { rpm: Some(0), ..m.clone() }).starts_with("--rpm must be at least 1"));
        let ok =
            resolve("ollama", &ProviderOptions { timeout: Some(86_400.0), retries: Some(100), ..m }, &file, &none, 0);
        assert_eq!(ok.unwrap().http.timeout, Duration::from_secs(86_400));
    }

    #[test]
    fn the_files_numbers_are_checked_naming_the_file_and_key() {
        let bad = |section: &str| {
            let text = format!("[providers.work]\nkind = \"openai\"\n{section}\n");
            FileConfig::parse(&text, Path::new("/c.toml")).unwrap_err().to_string()
        };
        let e = bad("timeout_secs = 1e30");
        assert!(e.starts_with("/c.toml: providers.work.timeout_secs must be a number of seconds"), "{e}");
        assert!(bad("connect_timeout_secs = -1").contains("providers.work.connect_timeout_secs must be"));
        assert!(bad("connect_timeout_secs = nan").contains("not NaN"));
        assert!(bad("retries = 1000000").contains("providers.work.retries must be at most 100"));
        assert!(bad("rpm = 0").contains("providers.work.rpm must be at least 1"));
        for price in ["input = -1.0\noutput = 1.0", "input = 1.0\noutput = -0.0", "input = nan\noutput = 1.0"] {
            let text = format!("[prices.\"m\"]\n{price}\n");
            let e = FileConfig::parse(&text, Path::new("/c.toml")).unwrap_err().to_string();
            assert!(e.starts_with("/c.toml: prices.\"m\".") && e.contains("must be a price of 0 or more"), "{e}");
        }
        let free = FileConfig::parse("[prices.\"m\"]\ninput = 0.0\noutput = 0\n", Path::new("c.toml"));
        assert!(free.is_ok(), "{free:?}");
    }

    #[test]
    fn a_key_command_that_hangs_is_stopped_with_everything_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("still-running");
        let cmd = format!("sleep 1; touch {}", marker.display());
        let started = std::time::Instant::now();
        let e = key_from_command(&cmd, "c.toml: providers.p.api_key_cmd", Duration::from_millis(200)).unwrap_err();
        assert!(started.elapsed() < Duration::from_millis(900), "stopped at the timeout: {:?}", started.elapsed());
        assert!(e.to_string().starts_with("c.toml: providers.p.api_key_cmd: the command printed no key within 0.2 s"));
        std::thread::sleep(Duration::from_millis(1300));
        assert!(!marker.exists(), "the shell's children were killed too");
        // A command in time still works, however much it prints to stderr.
        let key = key_from_command("echo sk-1; yes x | head -c 200000 >&2", "k", Duration::from_secs(5)).unwrap();
        assert_eq!(key.as_ref().map(|k| k.expose()), Some("sk-1"));
    }
}
