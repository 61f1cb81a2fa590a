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
