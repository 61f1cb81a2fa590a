//! Model providers. A `Provider` turns an `LlmRequest` into completions with token
//! usage. `sim` (the offline default) answers from the task's own logic; the real
//! models are spoken to through the kinds of [`api`], one file each (OpenAI's chat
//! completions for OpenAI, Ollama, vLLM, llama.cpp, LM Studio and OpenRouter;
//! Anthropic's Messages; OpenAI's Responses), all on one [`api::HttpProvider`]
//! (`replay`, which answers from recorded sessions, lives with them in
//! `session::provider`). `config` chooses one from the command line, the environment
//! and the config file.

pub mod api;
pub mod cache;
pub mod config;
pub mod fanout;
pub mod http;
pub mod limit;

pub mod secret;
pub mod sim;
pub mod testserver;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::protocol::{CallError, LlmRequest, LlmResponse};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub trait Provider: Send + Sync {
    /// Provider kind as shown to people: `sim`, `replay`, `openai`, ...
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    /// True for providers that are not language models (shown as "simulated").
    fn simulated(&self) -> bool {
        false
    }
    /// Answer `request`, made as `options` say (streamed, which occurrence, more slots
    /// for samples fetched one request each). The one call a provider implements.
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>>;

    /// The provider as named in messages: its kind and, for a server, its address
    /// (`openai (http://127.0.0.1:8080/v1)`).
    fn describe(&self) -> String {
        self.name().to_string()
    }

    /// What cached replies are keyed to besides the request: the model, and for a
    /// server its address (the same model name on two servers is two models).
    fn cache_scope(&self) -> String {
        self.model().to_string()
    }

    /// What the model costs, if known (US dollars per million tokens).
    fn price(&self) -> Option<config::Price> {
        None
    }

    /// The price is only assumed: a server on this machine that no price names is taken
    /// as free (see [`config::ModelPrice`]), so a cost of 0 measures nothing.
    fn price_assumed(&self) -> bool {
        false
    }

    /// The model's context window in tokens and where that comes from (the profile, the
    /// server's `/props` or `/v1/models`), if known. Asked once, before a run.
    fn context_window(&self) -> BoxFuture<'_, Option<ContextWindow>> {
        Box::pin(async { None })
    }

    /// The temperatures the API accepts, if it is narrower than the parameter's 0 to 2
    /// (Anthropic: 0 to 1): a run asking for one outside it is refused, never sent clamped.
    fn temperature_range(&self) -> Option<(f32, f32)> {
        None
    }

    /// The sampling fields besides the temperature the provider sends (see
    /// [`crate::protocol::Sampling`]); a request with another is refused before it is made.
    fn sampling_fields(&self) -> &'static [&'static str] {
        &[]
    }

    /// What the requests leave out or send otherwise than a run asks (a reasoning model's
    /// temperature, ...): one line each, printed before a run and recorded in its sessions.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// What the run found out about the server that a setting could have said (it
    /// ignored `n`, ...): one line each, printed after a run.
    fn found(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether a run's problems may go side by side. A provider whose answers depend
    /// on how often a request was asked across problems (replay) says no.
    fn problems_side_by_side(&self) -> bool {
        true
    }
}

/// How a call is made, besides its request. `CallOptions::default()` is a plain call:
/// not streamed, the first occurrence, no slots beyond the call's own.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Receives text as it arrives (sample index, new text). Providers that cannot
    /// stream answer whole and never call it.
    pub stream: Option<DeltaFn>,
    /// The call is the `occurrence`-th of identical requests drawn afresh in this run
    /// (0 the first time; always 0 for shared purposes). Models just sample again; the
    /// replay provider answers with the recording's reply of that occurrence.
    pub occurrence: u32,
    /// More slots of the run's concurrency limit, for samples the provider fetches one
    /// request each (see [`fanout`]). Providers that return all samples at once ignore them.
    pub slots: fanout::Slots,
}

impl CallOptions {
    /// A plain call whose text is reported through `sink` as it arrives.
    pub fn streaming(sink: DeltaFn) -> CallOptions {
        CallOptions { stream: Some(sink), ..CallOptions::default() }
    }
}

/// A model's context window: how many tokens a prompt and its reply may hold together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextWindow {
    pub tokens: u64,
    /// Where the figure comes from, for messages: `--context-window`, `providers.NAME.context
    /// in FILE`, `the server's /props`, `a conservative default`, ...
    pub source: String,
    /// The figure is the model's: stated (`--context-window`, the profile) or said by the
    /// server, not a guess or a recording. Only then is a prompt that cannot fit refused
    /// before it is sent; with a guess the server is asked and says.
    pub measured: bool,
}

/// The window taken when neither the profile nor the server says (small on purpose: a
/// trimmed observation is said, a prompt the server refuses stops the branch).
pub const DEFAULT_CONTEXT_TOKENS: u64 = 4096;

/// What a streaming provider reports of a sample as its reply arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streamed<'a> {
    /// More text of the sample.
    Text(&'a str),
    /// Forget the sample's text so far: its stream was cut and is being asked again.
    Restart,
}

/// Receives a streamed reply as it arrives: (sample index, what came).
pub type DeltaFn = Arc<dyn Fn(u32, Streamed<'_>) + Send + Sync>;

/// Build the real provider a resolved profile describes.
pub fn build_http(
    resolved: &config::Resolved,
    price: Option<config::ModelPrice>,
) -> Result<Arc<dyn Provider>, CallError> {
    Ok(Arc::new(api::HttpProvider::new(resolved)?.priced(price)))
}

/// A temperature as the request body sends it (see [`crate::protocol::as_written`]).
pub use crate::protocol::as_written as wire_temperature;
