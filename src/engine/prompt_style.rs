//! How a task lays its prompts out for the model: the reference papers' prompts or a
//! chat model's turns.

use serde::{Deserialize, Serialize};

/// How a task lays its prompts out for the model (`--prompt-style`). Recorded in session
/// headers (absent: reference), so replays and forks send the same messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromptStyle {
    /// The reference papers' completion-style prompts, each one user message that ends
    /// where the model is to go on (`Thought 3:`): for fidelity, base models and `sim`.
    #[default]
    Reference,
    /// For chat models: a system message with the instructions and the exact reply
    /// format, the examples as user/assistant turns, the current state as the last
    /// user turn asking for exactly the next step.
    Chat,
}

impl PromptStyle {
    pub const ALL: [PromptStyle; 2] = [PromptStyle::Reference, PromptStyle::Chat];

    pub fn name(self) -> &'static str {
        match self {
            PromptStyle::Reference => "reference",
            PromptStyle::Chat => "chat",
        }
    }

    pub fn is_reference(&self) -> bool {
        *self == PromptStyle::Reference
    }
}

impl std::fmt::Display for PromptStyle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for PromptStyle {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PromptStyle::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown prompt style {s:?} (known: reference, chat)"))
    }
}
