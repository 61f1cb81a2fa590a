//! Model providers. A `Provider` turns an `LlmRequest` into completions with token
//! usage. `sim` (the offline default) answers from the task's own logic.

pub mod cache;
pub mod sim;

use std::future::Future;
use std::pin::Pin;

use crate::engine::{CallError, LlmRequest, LlmResponse};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub trait Provider: Send + Sync {
    /// Provider kind as shown to people: `sim`, `replay`, `openai`, ...
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    /// True for providers that are not language models (shown as "simulated").
    fn simulated(&self) -> bool {
        false
    }
    fn complete<'a>(&'a self, request: &'a LlmRequest) -> BoxFuture<'a, Result<LlmResponse, CallError>>;
}

/// Rough token count for text without a tokenizer (about four characters a token).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Estimated prompt tokens of a request.
pub fn estimate_prompt_tokens(request: &LlmRequest) -> u64 {
    request.messages.iter().map(|m| estimate_tokens(&m.content) + 4).sum()
}
