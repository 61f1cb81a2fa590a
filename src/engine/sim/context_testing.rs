//! For the players' tests: a prompt as the request the engine sends, the player's answer
//! to it, and the check that a context of the wrong shape is refused naming its field
//! ([`super::context`]), never read as a silent default.

use serde_json::Value;

use super::{Play, SimConfig};
use crate::engine::rng::SplitMix64;
use crate::protocol::{CallError, LlmRequest, Prompt};

/// `prompt` as the request the engine sends (one sample at temperature 0.7).
pub fn request(prompt: Prompt) -> LlmRequest {
    LlmRequest::from_prompt(prompt, 1, 0.7)
}

/// `play`'s answer to `request` with the default simulated model and seed 1.
pub fn ask(play: Play, request: &LlmRequest) -> Result<String, CallError> {
    play(&SimConfig::default(), request, &mut SplitMix64::new(1))
}

/// `request` with each of `bad`'s contexts is refused by `play` with an error that
/// starts `{task} request context: {says}`.
pub fn assert_bad_contexts_refused(task: &str, play: Play, request: &LlmRequest, bad: &[(Value, &str)]) {
    for (context, says) in bad {
        let mut wrong = request.clone();
        wrong.context = context.clone();
        let e = ask(play, &wrong).expect_err("a context of the wrong shape is refused");
        assert!(e.message.starts_with(&format!("{task} request context: {says}")), "{e}");
    }
}
