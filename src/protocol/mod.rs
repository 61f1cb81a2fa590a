//! The vocabulary the engine and the providers share: what is asked of a model
//! ([`LlmRequest`], built from a task's [`Prompt`] of [`Message`]s, with its [`Purpose`]),
//! what comes back ([`LlmResponse`]: [`Completion`]s and [`Usage`]), why a call failed
//! ([`CallError`]), tools offered, called and answered ([`ToolDef`], [`ToolCallOut`],
//! [`ToolRequest`], [`ToolResult`]), a reply's [`Thinking`], shared [`Text`], and token estimates.
//!
//! It sits below both: it imports neither the engine nor a provider, so the engine
//! names no provider code and a provider names no engine code for these. The serde
//! shapes are what sessions record; a new field is optional (older sessions read as
//! before). One file per concern, so a new kind of turn (a tool result with its call's
//! id) or of reply content (a model's thinking, reasoning-token usage) is added beside
//! its kin.

mod error;
mod estimate;
mod request;
mod response;
mod text;
mod thinking;
mod tool;

pub use error::{CallError, CallErrorKind};
pub use estimate::{estimate_prompt_tokens, estimate_tokens};
pub use request::{as_written, LlmRequest, Message, Prompt, Purpose, Role, Sampling};
pub use response::{Completion, LlmResponse, LostSamples, Usage};
pub use text::Text;
pub use thinking::{
    default_think_tags, split_tagged, thinking_text, Split, Thinking, ThinkingKind, DEFAULT_THINK_TAGS,
};
pub use tool::{ToolCallOut, ToolDef, ToolRequest, ToolResult};
