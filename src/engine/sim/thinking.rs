//! The simulated model's thinking mode (`--sim-thinking`): a short, seeded trace of
//! thinking before each answer, kept apart from the answer as a reasoning model's is
//! and labelled simulated, so the explorer, the demos and the tests show thinking with
//! no server. The answer is the one the model would give without thinking: thinking
//! changes what is recorded and counted, never what the search does.

use crate::engine::rng::SplitMix64;
use crate::protocol::{LlmRequest, Purpose, Role};

/// A line, cut to `max` characters at a character boundary.
fn cut(text: &str, max: usize) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// What the simulated model thinks before writing `answer` to `request`.
pub fn trace(request: &LlmRequest, answer: &str, rng: &mut SplitMix64) -> String {
    const OPENINGS: [&str; 3] =
        ["Okay, let me work through this.", "Let me look at this carefully.", "First, what is being asked?"];
    let asked = request.messages.iter().rev().find(|m| m.role == Role::User).map(|m| m.content.as_str());
    let last_line = asked.and_then(|a| a.lines().rev().find(|l| !l.trim().is_empty())).unwrap_or("");
    let plan = match request.purpose {
        Purpose::Propose | Purpose::Sample => "I should find next steps that keep the rest workable.",
        Purpose::Value => "Can this still reach the goal? Let me try a few combinations.",
        Purpose::Vote => "Let me compare the choices one by one.",
        Purpose::Act => "What do I know so far, and what should I look up next?",
        Purpose::Io | Purpose::Cot => "Let me go step by step.",
        Purpose::Feedback | Purpose::Judge => "Let me check each step against the question.",
        Purpose::Refine => "The feedback names what to change; let me change only that.",
        Purpose::Reflect => "Where did the last attempt go wrong?",
    };
    let mut lines = vec![OPENINGS[rng.below(OPENINGS.len())].to_string()];
    if !last_line.trim().is_empty() {
        lines.push(format!("The last thing asked: \"{}\".", cut(last_line, 60)));
    }
    lines.push(plan.to_string());
    if rng.chance(0.5) {
        lines.push("Wait, let me double-check that before I write it.".into());
    }
    let first = cut(answer, 60);
    if !first.is_empty() {
        lines.push(format!("So I will start with: {first}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Message;

    #[test]
    fn the_trace_is_seeded_and_ends_with_the_answer_it_leads_to() {
        let request = LlmRequest {
            purpose: Purpose::Propose,
            messages: vec![Message::system("s"), Message::user("Input: 4 5 6 10\nPossible next steps:")],
            n: 1,
            temperature: 0.7,
            max_tokens: None,
            stop: vec![],
            context: serde_json::Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        };
        let a = trace(&request, "4 + 5 = 9 (left: 6 9 10)\n5 * 6 = 30 (left: 4 10 30)", &mut SplitMix64::new(3));
        assert_eq!(a, trace(&request, "4 + 5 = 9 (left: 6 9 10)\n", &mut SplitMix64::new(3)), "seeded");
        assert!(
            a.contains("\"Possible next steps:\"") && a.ends_with("So I will start with: 4 + 5 = 9 (left: 6 9 10)")
        );
        let long = "é".repeat(100);
        assert!(trace(&request, &long, &mut SplitMix64::new(1)).ends_with(&format!("{}…", "é".repeat(60))));
    }
}
