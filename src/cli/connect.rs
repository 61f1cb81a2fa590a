//! The flags that choose and configure a real provider and the tools a run offers, and
//! their conversion into the library's plain option structs
//! ([`ProviderOptions`], [`ToolOptions`]): clap stays in `cli`.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;

use thoughtscope::llm::cache::{CacheMode, CachePolicy};
use thoughtscope::llm::config::ProviderOptions;
use thoughtscope::tools::choice::{BackendKind, ToolOptions};

/// Options of `run` (and the UI) that choose and configure a real provider.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ProviderArgs {
    /// Model name (default: the profile's model).
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// API base URL, e.g. http://localhost:11434/v1 (default: the profile's; for `openai`, $OPENAI_BASE_URL).
    #[arg(long)]
    pub(crate) base_url: Option<String>,
    /// The config file: [defaults], [providers.NAME] profiles, [prices."MODEL"], ... (default: $THOUGHTSCOPE_CONFIG,
    /// else $THOUGHTSCOPE_CONFIG_DIR/config.toml, else <config dir>/thoughtscope/config.toml).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Where shared answers are kept: off (every request is sent), memory (identical requests of the
    /// --cache-purposes answered once per run), disk (also across runs, under the user cache directory).
    #[arg(long, value_parser = cache_mode(), default_value = "memory")]
    pub(crate) cache: CacheMode,
    /// Call purposes whose identical requests share one answer: all, none, or a list of io, cot, propose,
    /// sample, value, vote, act (default value: evaluations cached, proposals and samples drawn afresh,
    /// like the reference Tree-of-Thoughts implementation).
    #[arg(long, value_parser = CachePolicy::parse, value_name = "LIST")]
    pub(crate) cache_purposes: Option<CachePolicy>,
    /// Stop issuing calls once the run has cost this many US dollars (by the price table).
    #[arg(long)]
    pub(crate) budget_usd: Option<f64>,
    /// Stop issuing calls once the run has used this many tokens (prompt + completion).
    #[arg(long)]
    pub(crate) budget_tokens: Option<u64>,
    /// Overall limit on one HTTP request, in seconds (default 300).
    #[arg(long)]
    pub(crate) timeout: Option<f64>,
    /// Limit on connecting to the server, in seconds (default 10).
    #[arg(long)]
    pub(crate) connect_timeout: Option<f64>,
    /// Retries on connection errors, timeouts, 408, 409, 429 and 5xx (default 4).
    #[arg(long)]
    pub(crate) retries: Option<u32>,
    /// Most requests per minute sent to the provider.
    #[arg(long)]
    pub(crate) rpm: Option<u32>,
    /// The model's context window in tokens, for trimming a long ReAct trajectory (default: the
    /// profile's `context`, else what the server says, else 4096).
    #[arg(long, value_name = "TOKENS")]
    pub(crate) context_window: Option<u64>,
    /// How hard a reasoning model thinks: none, minimal, low, medium, high or xhigh (sent as
    /// reasoning_effort; OpenAI, the Responses API, vLLM, Ollama) [default: the profile's].
    #[arg(long, value_name = "LEVEL")]
    pub(crate) reasoning_effort: Option<String>,
    /// Anthropic's extended thinking: the tokens the model may think for before it answers (at
    /// least 1024) [default: the profile's].
    #[arg(long, value_name = "TOKENS")]
    pub(crate) thinking_budget: Option<u32>,
    /// Switch an open model's thinking on or off (Qwen3, DeepSeek-V3.1, ...; sent as
    /// chat_template_kwargs.enable_thinking to vLLM, SGLang and llama.cpp's server) [default: the model's own].
    #[arg(long, value_name = "on|off", value_parser = clap::builder::BoolishValueParser::new())]
    pub(crate) think: Option<bool>,
}

impl ProviderArgs {
    /// The options these flags give, for the library.
    pub(crate) fn options(&self) -> ProviderOptions {
        ProviderOptions {
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            config: self.config.clone(),
            cache: self.cache,
            cache_purposes: self.cache_purposes.clone(),
            budget_usd: self.budget_usd,
            budget_tokens: self.budget_tokens,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            retries: self.retries,
            rpm: self.rpm,
            context_window: self.context_window,
            reasoning_effort: self.reasoning_effort.clone(),
            thinking_budget: self.thinking_budget,
            think: self.think,
        }
    }
}

/// `--tools`, `--corpus`, `--wikipedia-url`: where search and lookup look.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ToolArgs {
    /// Where search and lookup look: wikipedia or corpus [default: the task's own: qa-demo's
    /// compiled-in corpus, wikipedia for hotpotqa and fever].
    #[arg(long, value_parser = backend_kind())]
    pub(crate) tools: Option<BackendKind>,
    /// A folder of .md, .txt and .jsonl documents to search (implies --tools corpus).
    #[arg(long, value_name = "DIR")]
    pub(crate) corpus: Option<std::path::PathBuf>,
    /// The MediaWiki API endpoint (api.php) of the wikipedia backend (implies --tools wikipedia)
    /// [default: https://en.wikipedia.org/w/api.php].
    #[arg(long, value_name = "URL")]
    pub(crate) wikipedia_url: Option<String>,
    /// Offer the tools of the MCP server of this [[mcp]] config entry to ReAct and
    /// ReTreVal, next to the task's own (repeatable).
    #[arg(long, value_name = "NAME")]
    pub(crate) mcp: Vec<String>,
    /// Offer the tools of the MCP server this command starts (over stdio; repeatable).
    #[arg(long, value_name = "CMD ARGS")]
    pub(crate) mcp_cmd: Vec<String>,
    /// Offer the tools of the streamable-HTTP MCP server at URL, named NAME (or after
    /// its host; repeatable). Headers and tokens go in an [[mcp]] entry.
    #[arg(long, value_name = "[NAME=]URL")]
    pub(crate) mcp_url: Vec<String>,
}

impl ToolArgs {
    /// The options these flags give, for the library.
    pub(crate) fn options(&self) -> ToolOptions {
        ToolOptions {
            tools: self.tools,
            corpus: self.corpus.clone(),
            wikipedia_url: self.wikipedia_url.clone(),
            mcp: self.mcp.clone(),
            mcp_cmd: self.mcp_cmd.clone(),
            mcp_url: self.mcp_url.clone(),
        }
    }
}

/// `--cache`'s values, with their help, from the library's list.
fn cache_mode() -> impl TypedValueParser<Value = CacheMode> {
    let values = CacheMode::ALL.map(|m| PossibleValue::new(m.name()).help(m.about()));
    PossibleValuesParser::new(values)
        .try_map(|name: String| CacheMode::from_name(&name).ok_or_else(|| format!("unknown cache mode {name}")))
}

/// `--tools`'s values, with their help, from the library's list.
fn backend_kind() -> impl TypedValueParser<Value = BackendKind> {
    let values = BackendKind::ALL.map(|b| PossibleValue::new(b.name()).help(b.about()));
    PossibleValuesParser::new(values)
        .try_map(|name: String| BackendKind::from_name(&name).ok_or_else(|| format!("unknown backend {name}")))
}
