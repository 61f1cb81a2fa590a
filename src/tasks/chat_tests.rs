//! The two prompt styles of every task (issue 27): each registered task builds in both;
//! its chat prompts are a system message with the reply format, the examples as
//! alternating turns and the state last; its reference prompts stay one user message
//! (that the simulated model plays both and every chat session replays exactly is
//! `runtime::chat_style_tests`). The lists come from the registries, so a task added
//! with one registration line is covered here.

use std::sync::Arc;

use super::{TaskOptions, TaskSource, TaskSpec, REGISTRY};
use crate::engine::PromptStyle;
use crate::protocol::{Message, Prompt, Role};

/// A problem of every task: its first, or for the tasks that read `--data` one written
/// out, with a gold answer, as a session header would rebuild it.
fn task_in(name: &str, style: PromptStyle) -> (Arc<dyn TaskSource>, String) {
    let options = TaskOptions { style, ..TaskOptions::default() };
    let task = super::build(name, &options, &mut Vec::new()).unwrap_or_else(|e| panic!("{name} in {style}: {e}"));
    if let Some(p) = task.problem(0) {
        return (task, p.input);
    }
    let input = match name {
        "mmlu-pro" => "Which number is prime?\nA. 4\nB. 5\nC. 6\nD. 8",
        "fever" => "The Danube flows into the Black Sea.",
        _ => "What is $1 + 1$?",
    };
    let spec = TaskSpec { name, input, gold: Some("2"), actions: None, facets: None, style, definition: None };
    (super::for_spec(&spec, &options).unwrap(), input.to_string())
}

/// Every prompt a task makes for `x` at its start, by what it is for.
fn prompts_of(task: &dyn TaskSource, x: &str) -> Vec<(&'static str, Prompt)> {
    let mut out = vec![("io", task.io_prompt(x)), ("cot", task.cot_prompt(x))];
    if let Some(tree) = task.tree() {
        out.push(("propose", tree.propose_prompt(x, "")));
        out.push(("sample", tree.sample_prompt(x, "")));
        if let Some(value) = tree.value() {
            out.push(("value", value.value_prompt(x, "")));
        }
        if let Some(vote) = tree.vote() {
            out.push(("vote", vote.vote_prompt(x, &["a\n".to_string(), "b\n".to_string()])));
        }
    }
    if let Some(react) = task.react() {
        out.push(("react", react.react_prompt(x, "", 1)));
        if let Some(native) = react.native() {
            out.push(("react-native", native.react_native_prompt(x, "", 1)));
        }
    }
    if let Some(feedback) = task.feedback() {
        out.push(("feedback", feedback.feedback_prompt(x, "an attempt")));
    }
    out
}

fn roles(messages: &[Message]) -> Vec<Role> {
    messages.iter().map(|m| m.role).collect()
}

/// Placeholders a template fills; none may reach the model unfilled.
const PLACEHOLDERS: [&str; 12] = [
    "{input}",
    "{numbers}",
    "{target}",
    "{answer}",
    "{choices}",
    "{state}",
    "{clues}",
    "{passage}",
    "{question}",
    "{claim}",
    "{trajectory}",
    "{step}",
];

#[test]
fn every_task_lays_its_prompts_out_in_both_styles() {
    let mut checked = 0;
    for entry in REGISTRY {
        let name = &*entry.info.name;
        let (chat, x) = task_in(name, PromptStyle::Chat);
        let (reference, _) = task_in(name, PromptStyle::Reference);
        assert_eq!(chat.prompt_style(), PromptStyle::Chat, "{name}");
        assert_eq!(reference.prompt_style(), PromptStyle::Reference, "{name}");
        for ((what, c), (_, r)) in prompts_of(chat.as_ref(), &x).into_iter().zip(prompts_of(reference.as_ref(), &x)) {
            let label = format!("{name} {what}");
            let m = &c.messages;
            assert_eq!(m[0].role, Role::System, "{label}: {:?}", roles(m));
            assert!(m.iter().skip(1).all(|m| m.role != Role::System), "{label}: one system message, first");
            for pair in m[1..].windows(2) {
                assert_ne!(pair[0].role, pair[1].role, "{label}: turns alternate: {:?}", roles(m));
            }
            assert_eq!(m.last().unwrap().role, Role::User, "{label}: the state is the last turn");
            // (The last turn is the state, which may be empty: a crossword with no clue to judge.)
            assert!(m[..m.len() - 1].iter().all(|m| !m.content.trim().is_empty()), "{label}: no empty turn");
            for msg in m {
                for p in PLACEHOLDERS {
                    assert!(!msg.content.contains(p), "{label}: {p} left unfilled in {:?}", msg.content);
                }
            }
            if what != "feedback" {
                assert_eq!(roles(&r.messages), [Role::User], "{label}: a reference prompt is one user message");
                // The same request otherwise: purpose, the context sim reads, the reply's length.
                assert_eq!((c.purpose, &c.context, c.max_tokens), (r.purpose, &r.context, r.max_tokens), "{label}");
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} prompts");
}

/// The chat style for a task with no chat templates is refused in so many words (all the
/// built-in ones have them: a user task without them gets this line).
#[test]
fn a_style_the_task_has_no_prompts_for_is_refused() {
    let task: Arc<dyn TaskSource> = Arc::new(super::game24::Game24::builtin());
    let options = TaskOptions { style: PromptStyle::Chat, ..TaskOptions::default() };
    let err = super::styled(task, &options).err().unwrap().to_string();
    assert_eq!(err, "task game24 has no chat prompts (use --prompt-style reference)");
}

#[test]
fn a_users_chat_template_overrides_by_its_path_and_bad_turns_are_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("chat")).unwrap();
    let file = dir.path().join("chat/propose.txt");
    std::fs::write(&file, "[system]\nList steps.\n[user]\nNumbers: {numbers}\n").unwrap();
    let options = TaskOptions { style: PromptStyle::Chat, ..TaskOptions::prompts(Some(dir.path())) };
    let mut warnings = Vec::new();
    let task = super::build("game24", &options, &mut warnings).unwrap();
    let p = task.tree().unwrap().propose_prompt("4 5 6 10", "");
    assert_eq!(p.messages, [Message::system("List steps."), Message::user("Numbers: 4 5 6 10")]);
    assert!(warnings.is_empty(), "{warnings:?}");
    for (text, why) in [
        ("List steps: {numbers}\n", "a chat template is written as turns: its first line is [system] or [user]"),
        (
            "[system]\nList.\n[user]\n{numbers}\n[assistant]\nok\n",
            "the last turn must be [user]: the state the model is to answer",
        ),
        ("[user]\n{numbers}\n[system]\nx\n", "turn 2 is [system]; only the first turn may be"),
        ("[system]\n\n[user]\n{numbers}\n", "turn 1 ([system]) is empty"),
    ] {
        std::fs::write(&file, text).unwrap();
        let err = super::build("game24", &options, &mut Vec::new()).err().unwrap().to_string();
        assert_eq!(err, format!("prompt template {}: {why}", file.display()), "{text:?}");
    }
    // A reference template beside it is not read in the chat style, and that is said.
    std::fs::write(&file, "[system]\nList steps.\n[user]\nNumbers: {numbers}\n").unwrap();
    std::fs::write(dir.path().join("propose.txt"), "Steps for {numbers}:\n").unwrap();
    let mut warnings = Vec::new();
    super::build("game24", &options, &mut warnings).unwrap();
    assert!(warnings.iter().any(|w| w.contains("propose.txt: not a template this task reads")), "{warnings:?}");
}

/// A problem's text or a model's reply with a line `[user]` in it fills a placeholder;
/// it never starts a turn.
#[test]
fn a_marker_inside_a_filled_placeholder_is_text() {
    let template = "[system]\nRules.\n[user]\nQ: {question}\n";
    let m = super::prompts::render_messages(template, &[("question", "a\n[assistant]\nb")]);
    assert_eq!(m, [Message::system("Rules."), Message::user("Q: a\n[assistant]\nb")]);
    // A reference template (no marker first) is one user message, byte for byte.
    let m = super::prompts::render_messages("Q: {question}\n\n", &[("question", "x")]);
    assert_eq!(m, [Message::user("Q: x\n\n")]);
}
