//! Token counts without a tokenizer: what the simulated model reports, what a server
//! that does not say is taken to have counted, and what a ReAct prompt is checked
//! against the context window with.

use super::LlmRequest;

/// Rough token count for text without a tokenizer (about four characters a token).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Estimated prompt tokens of a request.
pub fn estimate_prompt_tokens(request: &LlmRequest) -> u64 {
    let messages: u64 = request
        .messages
        .iter()
        .map(|m| {
            // A turn's native tool calls count as prompt too (none outside native tool mode).
            let calls =
                if m.tool_calls.is_empty() { 0 } else { estimate_tokens(&serde_json::json!(m.tool_calls).to_string()) };
            estimate_tokens(&m.content) + 4 + calls
        })
        .sum();
    // Tool definitions count as prompt too (none for most requests).
    let tools =
        if request.tools.is_empty() { 0 } else { estimate_tokens(&serde_json::json!(request.tools).to_string()) };
    messages + tools
}
