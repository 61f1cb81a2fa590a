//! Replies in the shapes chat models write (hand-written from instruct models' habits:
//! a "Sure! Here are…" first, numbered or bulleted lists, bold labels, code fences, the
//! answer in `<answer>` tags), read by every task's readers in both prompt styles. Where
//! a reading differs between the styles it is said below: the reference style reads as
//! the papers' code did, so imported logs replay as they were.

use std::sync::Arc;

use super::{TaskOptions, TaskSource, TaskSpec};
use crate::engine::PromptStyle;

fn task(name: &str, style: PromptStyle) -> Arc<dyn TaskSource> {
    let options = TaskOptions { style, ..TaskOptions::default() };
    super::build(name, &options, &mut Vec::new()).unwrap()
}

fn both(name: &str) -> [Arc<dyn TaskSource>; 2] {
    [task(name, PromptStyle::Reference), task(name, PromptStyle::Chat)]
}

fn valid_steps(task: &dyn TaskSource, x: &str, reply: &str) -> Vec<String> {
    let tree = task.tree().unwrap();
    tree.parse_proposals(x, "", reply).into_iter().filter(|p| p.problem.is_none()).map(|p| p.thought).collect()
}

#[test]
fn game24_and_countdown_read_a_chat_models_list_of_steps_in_the_chat_style() {
    let reply =
        "Sure! Here are some possible next steps:\n\n1. 4 + 6 = 10 (left: 5 10 10)\n2. **10 - 5 = 5 (left: 4 5 6)**\n\
                 - `6 * 4 = 24 (left: 5 10 24)`\n\nLet me know if you want more!";
    let [reference, chat] = both("game24");
    assert_eq!(
        valid_steps(chat.as_ref(), "4 5 6 10", reply),
        ["4 + 6 = 10 (left: 5 10 10)", "10 - 5 = 5 (left: 4 5 6)", "6 * 4 = 24 (left: 5 10 24)"]
    );
    let proposals = chat.tree().unwrap().parse_proposals("4 5 6 10", "", reply);
    assert_eq!(proposals.len(), 3, "the remarks around the list are no steps");
    // The reference reads every line as a step, as the paper's code did.
    let read = reference.tree().unwrap().parse_proposals("4 5 6 10", "", reply);
    assert_eq!(read.len(), reply.split('\n').count());
    assert!(read.iter().any(|p| p.thought.starts_with("Sure!") && p.problem.is_some()), "the remark is a bad step");
    // One step asked for: the first step line of the reply, after any remark.
    let one = chat.tree().unwrap().parse_sample("4 5 6 10", "", "Next step:\n**4 + 6 = 10 (left: 5 10 10)**");
    assert_eq!((one.thought.as_str(), one.problem), ("4 + 6 = 10 (left: 5 10 10)", None));
    let [_, countdown] = both("countdown");
    let x = "2 3 8 25 -> 206";
    assert_eq!(
        valid_steps(
            countdown.as_ref(),
            x,
            "Here you go:\n```\n25 * 8 = 200 (left: 2 3 200)\n3. 3 * 2 = 6 (left: 6 8 25)\n```"
        ),
        ["25 * 8 = 200 (left: 2 3 200)", "3 * 2 = 6 (left: 6 8 25)"]
    );
}

#[test]
fn answers_in_bold_labels_and_answer_tags_are_read_in_both_styles() {
    for t in both("game24") {
        for reply in ["Steps done.\n**Answer:** (5 + 3 - 2) * 4 = 24", "<answer>(5 + 3 - 2) * 4 = 24</answer>"] {
            let answer = t.extract_answer("2 3 4 5", reply).unwrap();
            assert_eq!(answer, "(5 + 3 - 2) * 4 = 24", "{reply:?}");
            assert!(t.check("2 3 4 5", &answer).is_ok());
        }
    }
    for t in both("countdown") {
        let answer =
            t.extract_answer("1 2 3 4 25 50 -> 219", "**Answer:** `(50 + 25) * (4 - 1) - 3 * 2 = 219`").unwrap();
        assert!(t.check("1 2 3 4 25 50 -> 219", &answer).is_ok(), "{answer}");
    }
    for t in both("qa-demo") {
        let x = t.problem(0).unwrap().input;
        let answer = t.extract_answer(&x, "**Thought:** It is on the river.\n**Answer:** Grey Sea").unwrap();
        assert_eq!(answer, "Grey Sea");
    }
    for t in both("math-demo") {
        let x = t.problem(0).unwrap().input;
        for reply in ["Step 1: ...\nThe final answer is $\\boxed{28}$.", "Working...\n<answer>28</answer>"] {
            assert_eq!(t.extract_answer(&x, reply).as_deref(), Some("28"), "{reply:?}");
        }
    }
    for t in both("mc-demo") {
        let x = t.problem(0).unwrap().input;
        assert_eq!(t.extract_answer(&x, "Let me think.\n\n**The answer is (B)**").as_deref(), Some("B"));
    }
    for style in [PromptStyle::Reference, PromptStyle::Chat] {
        let spec = TaskSpec {
            name: "fever",
            input: "The Danube flows into the Black Sea.",
            gold: Some("SUPPORTS"),
            actions: None,
            facets: None,
            style,
            definition: None,
        };
        let fever = super::for_spec(&spec, &TaskOptions { style, ..TaskOptions::default() }).unwrap();
        let answer = fever.extract_answer(spec.input, "Thought: It does.\n**Answer:** SUPPORTS").unwrap();
        assert!(fever.check(spec.input, &answer).is_ok(), "{answer}");
    }
}

#[test]
fn evaluator_and_vote_replies_with_markdown_are_read_in_both_styles() {
    for t in both("game24") {
        let tree = t.tree().unwrap();
        let value = tree.value().unwrap();
        let samples = ["Let me try.\n10 + 14 = 24\n\n**sure**".to_string(), "Hmm: 1 * 2 = 2\n*impossible*".to_string()];
        let (v, labels) = value.parse_value("4 5 6 10", "", &samples);
        assert_eq!(labels, ["sure", "impossible"]);
        assert!((v - 20.001).abs() < 1e-9, "{v}");
        let vote = tree.vote().unwrap();
        assert_eq!(vote.parse_vote("Choice 1 loses a 4.\n\n**The best choice is 2**", 3), Some(1));
    }
    for t in both("writing") {
        let value = t.tree().unwrap().value().unwrap();
        let (v, labels) = value.parse_value("x", "", &["It flows.\n\n**Thus the coherency score is 7.**".to_string()]);
        assert_eq!((v, labels), (7.0, vec!["7".to_string()]));
        assert_eq!(t.tree().unwrap().vote().unwrap().parse_vote("Analysis...\nThe best choice is **1**.", 2), Some(0));
    }
    // Crosswords reads list-shaped suggestions and verdicts in the chat style; the
    // reference reads only the reference's exact lines.
    let [reference, chat] = both("crosswords");
    let x = chat.problem(0).unwrap().input;
    let reply = "Here are my suggestions:\n- h1. tasks (high)\n**v1.** AGEND (certain)\nh2. motor (low)\n";
    let read: Vec<String> =
        chat.tree().unwrap().parse_proposals(&x, "", reply).into_iter().map(|p| p.thought).collect();
    assert_eq!(read.len(), 3, "{read:?}");
    assert!(read.iter().any(|t| t.contains("agend")) && read.iter().any(|t| t.contains("tasks")), "{read:?}");
    let read = reference.tree().unwrap().parse_proposals(&x, "", reply);
    assert_eq!(read.len(), 1, "only `h2. motor (low)` is the reference's shape");
    let tree = chat.tree().unwrap();
    let y1 = tree.parse_proposals(&x, "", "h1. tasks (high)").remove(0).path;
    let y = tree.parse_proposals(&x, &y1, "h2. motor (high)").remove(0).path;
    let value = tree.value().unwrap();
    let (_, labels) = value.parse_value(&x, &y, &["- **h1.** tasks: sure\n- v2. ?: impossible".to_string()]);
    assert_eq!(labels, ["h1 sure", "v2 impossible"]);
}

/// Self-Refine's and Reflexion's calls each have their own system message in the chat
/// style (the solver's instructions quoted as the solver's, never as the call's own);
/// the reference style keeps the papers' one prompt, the cot prompt then the request.
#[test]
fn feedback_refine_and_reflect_calls_have_their_own_system_message_in_the_chat_style() {
    use crate::protocol::{Purpose, Role};
    for name in ["game24", "countdown", "math-demo", "writing", "qa-demo"] {
        let [reference, chat] = both(name);
        let x = chat.problem(0).map(|p| p.input).unwrap_or_else(|| "What is $1 + 1$?".into());
        for task in [&reference, &chat] {
            let Some(fb) = task.feedback() else { continue };
            let cot = task.cot_prompt(&x);
            let prompts = [
                (Purpose::Feedback, fb.feedback_prompt(&x, "an attempt")),
                (Purpose::Refine, fb.refine_prompt(&x, "an attempt", "step 2 is wrong")),
                (Purpose::Reflect, fb.reflect_prompt(&x, "an attempt", "step 2 is wrong")),
            ];
            for (purpose, prompt) in prompts {
                assert_eq!(prompt.purpose, purpose);
                let systems: Vec<&str> =
                    prompt.messages.iter().filter(|m| m.role == Role::System).map(|m| m.content.as_str()).collect();
                if task.prompt_style().is_reference() {
                    // Byte for byte the cot prompt, the attempt, the request.
                    assert_eq!(prompt.messages[..cot.messages.len()], cot.messages[..], "{name} {purpose:?}");
                    assert_eq!(prompt.messages.len(), cot.messages.len() + 2);
                    continue;
                }
                assert_eq!(systems.len(), 1, "{name} {purpose:?}: one system message: {systems:?}");
                assert_eq!(prompt.messages[0].role, Role::System);
                let own = systems[0];
                let opening = match purpose {
                    Purpose::Feedback => "You check attempts",
                    Purpose::Refine => "You improve attempts",
                    _ => "You reflect on failed attempts",
                };
                assert!(own.starts_with(opening), "{name} {purpose:?}: {own}");
                // The solver's rules are there, as the solver's.
                if let Some(solver) = cot.messages.first().filter(|m| m.role == Role::System) {
                    assert!(own.contains(&format!("was told:\n\"\"\"\n{}\n\"\"\"", solver.content.trim())), "{own}");
                }
                // The turns after it are the cot prompt's, then the attempt and the request.
                assert_eq!(prompt.messages[1..cot.messages.len()], cot.messages[1..], "{name} {purpose:?}");
                let last = prompt.messages.last().unwrap();
                assert_eq!(last.role, Role::User);
                if purpose == Purpose::Feedback {
                    assert!(own.contains("VERDICT: correct") && last.content.contains("VERDICT: correct"));
                }
            }
        }
    }
}

/// Feedback replies in the ways chat models of several families end them: a VERDICT line
/// (in markdown or not), or a plain sentence; each read as the verdict it states.
#[test]
fn feedback_verdicts_are_read_in_the_plain_ways_chat_models_state_them() {
    let task = task("game24", PromptStyle::Chat);
    let fb = task.feedback().unwrap();
    for (family, reply, verdict) in [
        // GPT-4o-like: markdown, a bold verdict label followed by a sentence.
        (
            "gpt",
            "### Checking\n1. 4 + 6 = 10 ✓\n2. 10 * 3 = 30 ✗ (3 is not available)\n\n**Verdict:** incorrect",
            Some(false),
        ),
        ("gpt", "Each step uses the numbers left.\n\n**Verdict:** The solution is correct.", Some(true)),
        ("gpt", "All steps check out and the expression equals 24.", Some(true)),
        // Claude-like: prose, then a plain conclusion.
        ("claude", "Looking at each step in turn, the arithmetic holds.\n\nYes, every step is correct.", Some(true)),
        ("claude", "I went through the attempt carefully. No errors found.", Some(true)),
        (
            "claude",
            "The first two steps are fine. However, there is an error in step 3: 4 * 5 is 20, not 24.",
            Some(false),
        ),
        ("claude", "The final expression evaluates to 25, so the answer is incorrect.", Some(false)),
        // A small open model: short and loose.
        ("small", "The solution is correct.", Some(true)),
        ("small", "correct", Some(true)),
        ("small", "The answer is wrong because 25 is not 24.", Some(false)),
        ("small", "Every step is correct, but the final answer does not equal 24.", Some(false)),
        ("small", "Let me check whether the answer is correct.\nStep 1: 4 + 6 = 10.", None),
        ("small", "Is it correct?", None),
        ("small", "I am not sure.", None),
    ] {
        assert_eq!(fb.parse_feedback(reply).0, verdict, "{family}: {reply:?}");
    }
}
