//! What a run says when prompts outgrow the model's context window: one line per problem,
//! with the first refusal's facts (without the advice each refusal carries) and one piece
//! of advice that fits where the model is served — a figure above the window the server
//! said, the flag of the server that said it, nothing to raise where the window is fixed.

use std::sync::Arc;

use crate::engine::{CallRecord, Engine};
use crate::llm::ContextWindow;
use crate::protocol::CallErrorKind;

/// The messages of the calls whose prompt did not fit the model's context window.
pub(crate) fn overflows(engine: &Engine) -> Vec<String> {
    let overflowed = |c: &Arc<CallRecord>| match &c.reply {
        Some(Err(e)) if e.kind == CallErrorKind::ContextOverflow => Some(e.message.clone()),
        _ => None,
    };
    engine.core.calls.values().filter_map(overflowed).collect()
}

/// Where the model is served, as far as a run can tell, for the advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    /// A hosted API (OpenAI, Anthropic, ...): its window is the model's and cannot be raised.
    Hosted,
    /// llama.cpp's llama-server (its `/props`, its `exceed_context_size` error).
    LlamaServer,
    /// llama-cpp-python's server (`Requested tokens (N) exceed context window of M`).
    LlamaCppPython,
    /// vLLM (`max_model_len` in its model list).
    Vllm,
    /// A server on this machine or the network that did not say what it is.
    Unknown,
}

/// The one line a problem's result says about its `n` context overflows, the first
/// saying `first`: the facts, then advice that fits the server (`describe` is the
/// provider as named in messages, `window` the run's context window if known).
pub(crate) fn overflow_note(n: usize, first: &str, window: Option<&ContextWindow>, describe: &str) -> String {
    let (what, branches) = match n {
        1 => ("1 prompt".to_string(), "its branch"),
        _ => (format!("{n} prompts"), "their branches"),
    };
    let said = window_said(first);
    let tokens = said.or(window.filter(|w| w.measured).map(|w| w.tokens));
    let size = tokens.map(|t| format!(" ({t} tokens)")).unwrap_or_default();
    let fact = facts_of(first);
    let advice = advice(served(first, window, describe), tokens, first.starts_with("not sent:"), window);
    format!(
        "{what} did not fit the model's context window{size}, so {branches} stopped there (first: {fact}); {advice}"
    )
}

/// A refusal without the advice it carries (`; give the model ...`, the reason in brackets).
fn facts_of(message: &str) -> &str {
    let message = message.split("; give the model").next().unwrap_or(message);
    message.trim_end_matches(" (the prompt does not fit the model's context window)").trim_end()
}

fn served(first: &str, window: Option<&ContextWindow>, describe: &str) -> Served {
    let source = window.map_or("", |w| w.source.as_str());
    let lower = first.to_lowercase();
    const HOSTED: [&str; 8] = [
        "api.openai.com",
        "api.anthropic.com",
        "api.mistral.ai",
        "api.deepseek.com",
        "api.groq.com",
        "api.together.xyz",
        "openrouter.ai",
        "generativelanguage.googleapis.com",
    ];
    if HOSTED.iter().any(|h| describe.contains(h)) {
        Served::Hosted
    } else if source.ends_with("/props")
        || lower.contains("exceed_context_size")
        || lower.contains("available context size")
    {
        Served::LlamaServer
    } else if lower.contains("requested tokens") && lower.contains("context window of") {
        Served::LlamaCppPython
    } else if source.contains("(max_model_len)") {
        Served::Vllm
    } else {
        Served::Unknown
    }
}

/// What to do: a context over the window where it can be raised (twice the window when
/// known, so never the figure the server already has), else fewer or shorter prompts.
fn advice(served: Served, tokens: Option<u64>, not_sent: bool, window: Option<&ContextWindow>) -> String {
    let fewer = "or take fewer steps (--max-steps, a smaller breadth) or a shorter prompt";
    let more = |flag: &str| match tokens {
        Some(t) => format!("{flag} {}", t * 2),
        None => format!("{flag} N"),
    };
    let mut advice = match served {
        Served::Hosted => {
            format!("this model's window is fixed by the API: pick a model with a larger window, {}", &fewer[3..])
        }
        Served::LlamaServer => format!("restart llama-server with a larger context ({}) {fewer}", more("-c")),
        Served::LlamaCppPython => format!("restart the server with a larger context ({}) {fewer}", more("--n_ctx")),
        Served::Vllm => {
            format!("restart vLLM with a larger context ({}) if the model allows it, {fewer}", more("--max-model-len"))
        }
        Served::Unknown => format!(
            "serve the model with a larger context (llama-server: {}; llama-cpp-python: {}; Ollama: {}; vLLM: {}) {fewer}",
            more("-c"),
            more("--n_ctx"),
            more("num_ctx"),
            more("--max-model-len")
        ),
    };
    // A prompt refused before it was sent, against a window stated by hand: the figure
    // may be the wrong one.
    if let Some(w) =
        window.filter(|w| not_sent && (w.source.contains("--context-window") || w.source.contains(".context")))
    {
        advice.push_str(&format!("; if the model holds more than {} tokens, say so in {}", w.tokens, w.source));
    }
    advice
}

/// The window a refusal states: OpenAI's and vLLM's `maximum context length is N`,
/// llama-cpp-python's `context window of N`, this program's `context window (N tokens)`,
/// Anthropic's `> N maximum`, TGI's `must be <= N`, llama-server's `n_ctx`.
fn window_said(message: &str) -> Option<u64> {
    const BEFORE: [&str; 6] = [
        "maximum context length is ",
        "context window of ",
        "context window (",
        "must be <= ",
        "\"n_ctx\":",
        "n_ctx: ",
    ];
    let lower = message.to_lowercase();
    let number_at = |rest: &str| -> Option<u64> {
        let digits: String = rest.trim_start().chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok().filter(|n| *n > 0)
    };
    if let Some(n) = BEFORE.iter().find_map(|b| lower.find(b).and_then(|i| number_at(&lower[i + b.len()..]))) {
        return Some(n);
    }
    // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum".
    let i = lower.find(" maximum")?;
    let before = lower[..i].rsplit("> ").next()?;
    number_at(before).filter(|_| before.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(tokens: u64, source: &str) -> ContextWindow {
        ContextWindow { tokens, source: source.to_string(), measured: true }
    }

    const OPENAI: &str = "HTTP 400 Bad Request from http://127.0.0.1:9/v1/chat/completions: This model's maximum \
         context length is 4096 tokens. However, you requested 4354 tokens. (the prompt does not fit the model's context window)";

    #[test]
    fn the_window_is_read_from_each_servers_words() {
        assert_eq!(window_said(OPENAI), Some(4096));
        assert_eq!(window_said("Requested tokens (2100) exceed context window of 2048"), Some(2048));
        assert_eq!(window_said("prompt is too long: 210000 tokens > 200000 maximum"), Some(200000));
        assert_eq!(window_said("`inputs` tokens + `max_new_tokens` must be <= 8192. Given: 9000"), Some(8192));
        assert_eq!(
            window_said("not sent: the prompt (about 900 tokens) and its reply (up to 256) do not fit the model's context window (300 tokens); give"),
            Some(300)
        );
        assert_eq!(window_said("the request exceeds the available context size, try increasing it"), None);
    }

    #[test]
    fn the_advice_is_said_once_and_never_the_figure_the_server_has() {
        let note = overflow_note(3, OPENAI, None, "openai (http://127.0.0.1:9/v1)");
        assert!(
            note.starts_with("3 prompts did not fit the model's context window (4096 tokens), so their branches"),
            "{note}"
        );
        assert!(note.contains("8192") && !note.contains("-c 4096") && !note.contains("num_ctx 4096"), "{note}");
        assert_eq!(note.matches("larger context").count(), 1, "{note}");
        assert!(!note.contains("(the prompt does not fit"), "the refusal's own reason is not repeated: {note}");

        let llama = overflow_note(1, "HTTP 400 Bad Request from http://h/v1/chat/completions: the request exceeds the available context size, try increasing it", Some(&window(2048, "the server's http://h/props")), "openai (http://h/v1)");
        assert!(
            llama.contains("restart llama-server with a larger context (-c 4096)") && llama.contains("(2048 tokens)"),
            "{llama}"
        );

        let python =
            overflow_note(1, "Requested tokens (2100) exceed context window of 4096", None, "openai (http://h/v1)");
        assert!(python.contains("--n_ctx 8192") && !python.contains("--n_ctx 4096"), "{python}");

        let vllm = overflow_note(
            1,
            "x maximum context length is 32768 tokens",
            Some(&window(32768, "the server's http://h/v1/models (max_model_len)")),
            "openai (http://h/v1)",
        );
        assert!(vllm.contains("--max-model-len 65536"), "{vllm}");

        let hosted = overflow_note(1, OPENAI, None, "openai (https://api.openai.com/v1)");
        assert!(
            hosted.contains("fixed by the API") && !hosted.contains("restart") && !hosted.contains("-c "),
            "{hosted}"
        );
    }

    #[test]
    fn a_prompt_refused_before_sending_keeps_its_facts_and_names_where_the_window_was_stated() {
        let first = "not sent: the prompt (about 900 tokens) and its reply (up to 256) do not fit the model's context \
             window (300 tokens); give the model a larger context (--context-window N, or context = N in the provider's \
             profile) or a shorter prompt";
        let note = overflow_note(2, first, Some(&window(300, "--context-window")), "openai (http://h/v1)");
        assert!(note.contains("(first: not sent: the prompt (about 900 tokens) and its reply (up to 256) do not fit the model's context window (300 tokens))"), "{note}");
        assert_eq!(note.matches("give the model").count(), 0, "{note}");
        assert!(note.ends_with("if the model holds more than 300 tokens, say so in --context-window"), "{note}");
        let unknown = overflow_note(1, "context length exceeded", None, "openai (http://h/v1)");
        assert!(unknown.contains("-c N") && !unknown.contains("tokens)"), "{unknown}");
    }
}
