//! The simulated model on `qa-demo`. As a ReAct agent it follows the plan the
//! task's own data implies — search the first page, search the second, look up the
//! keyword, finish — with seeded mistakes (a search for the wrong entity, a lookup
//! that finds nothing) from which it recovers on later steps. Without tools (cot,
//! io) it can only guess from its "memory", and is usually wrong: on some questions
//! always with the same wrong entity (so CoT-SC agrees on it), on others wavering
//! between two (so CoT-SC's majority is weak and cot-sc-react backs off to ReAct).
//!
//! When a person edits a step's thought, the agent follows it: a thought that names
//! what to find ("look up flows", "search the Tessel River", or just an entity such as
//! "Marrowick is where she was born") gets that search or lookup as its action, so an
//! edit visibly steers the agent (see [`steered_action`]).

use serde::Deserialize;

use crate::engine::rng::{stable_hash, SplitMix64};
use crate::engine::sim::SimConfig;
use crate::protocol::{CallError, CallErrorKind, LlmRequest, Purpose};
use crate::tasks::react_text::parse_step;

/// Base rate of a wrong action in a ReAct step, and of a wrong CoT/IO answer.
const REACT_SLIP: f64 = 0.2;
const GUESS_WRONG: f64 = 0.75;

/// What a qa-demo request's context holds (the task's prompts and the ReAct method
/// write it); a field of the wrong shape is an error naming it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    pub question: String,
    /// The ReAct trajectory so far.
    pub trajectory: String,
    /// The ReAct step the reply is for (1 when not given).
    pub step: Option<u64>,
    /// A thought a person wrote for this step (an edit), which the action follows.
    pub thought: String,
    /// The question's plan, for a question of the built-in set (`null` otherwise).
    pub gold: Option<Gold>,
}

/// What the task's data implies for a ReAct agent: the pages to search, the keyword to
/// look up and the answer.
#[derive(Debug, Deserialize)]
pub struct Gold {
    pub hops: Vec<String>,
    pub keyword: String,
    pub answer: String,
}

impl Context {
    /// The context of `request`, or the one line that says which field cannot be read.
    pub fn of(request: &LlmRequest) -> Result<Context, CallError> {
        crate::engine::sim::context("qa-demo", request)
    }
}

/// The actions already taken in the trajectory, as (tool, arg) lowercased.
fn taken(trajectory: &str) -> Vec<(String, String)> {
    trajectory
        .lines()
        .filter(|l| l.to_lowercase().starts_with("action"))
        .filter_map(|l| parse_step(l, 0).action)
        .map(|a| (a.name.to_lowercase(), a.arg.to_lowercase()))
        .collect()
}

pub fn answer(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    let ctx = Context::of(request)?;
    let question = ctx.question.as_str();
    match request.purpose {
        Purpose::Act => {
            let Some(Gold { hops, keyword, answer }) = &ctx.gold else {
                return Ok(format!(
                    "I do not know this question well; I will search for it.\nAction: Search[{question}]"
                ));
            };
            let trajectory = ctx.trajectory.as_str();
            let step = ctx.step.unwrap_or(1);
            // A person wrote this step's thought (an edit) and the model writes the action
            // after it: if the thought names what to search or look up, that is the action.
            if let Some((tool, arg)) = steered_action(&ctx.thought) {
                return Ok(format!("Action {step}: {tool}[{arg}]"));
            }
            let done = taken(trajectory);
            let has = |tool: &str, arg: &str| done.iter().any(|(t, a)| t == tool && a == &arg.to_lowercase());
            let slip = rng.chance(cfg.rate(REACT_SLIP));
            let (first, second) = (hops.first().cloned().unwrap_or_default(), hops.get(1).cloned().unwrap_or_default());
            let text = if !has("search", &first) {
                if slip {
                    // A search for the wrong entity: a part of the name.
                    let wrong = first.split_whitespace().last().unwrap_or(&first).to_string();
                    format!("I should look up {wrong} first.\nAction {step}: Search[{wrong} (disambiguation)]")
                } else {
                    format!("I need to find {first} first.\nAction {step}: Search[{first}]")
                }
            } else if !has("search", &second) {
                format!(
                    "{first} leads to {second}. I need to know more about {second}.\nAction {step}: Search[{second}]"
                )
            } else if !has("lookup", keyword) {
                if slip && !done.iter().any(|(t, _)| t == "lookup") {
                    format!("The first sentences do not answer it. I will look for details.\nAction {step}: Lookup[details]")
                } else {
                    format!("I will look up \"{keyword}\" on this page.\nAction {step}: Lookup[{keyword}]")
                }
            } else {
                format!("The observation answers the question: {answer}.\nAction {step}: Finish[{answer}]")
            };
            Ok(text)
        }
        Purpose::Cot | Purpose::Io => {
            let (right, distractors) = match gold_from_question(question) {
                Some(v) => v,
                None => (None, vec!["I am not sure".to_string()]),
            };
            let guess_wrong = rng.chance(cfg.rate(GUESS_WRONG));
            let answer = match right {
                Some(r) if !guess_wrong => r,
                // A second draw only on wavering questions: which samples are right stays the same.
                _ if distractors.len() > 1 && wavers(cfg, question) => {
                    distractors[rng.below(distractors.len())].clone()
                }
                _ => distractors[0].clone(),
            };
            Ok(format!("Thinking about what I remember of it.\nAnswer: {answer}"))
        }
        other => {
            Err(CallError { kind: CallErrorKind::Sim, message: format!("qa-demo has no {} requests", other.label()) })
        }
    }
}

/// The right answer and plausible wrong ones (the hops' names, the first hop's first), for tool-less answers.
fn gold_from_question(question: &str) -> Option<(Option<String>, Vec<String>)> {
    let q = crate::tools::corpus::qa_demo_questions().ok()?.into_iter().find(|q| q.question == question)?;
    let mut distractors: Vec<String> = q.hops.iter().filter(|h| **h != q.answer).cloned().collect();
    if distractors.is_empty() {
        distractors.push("unknown".into());
    }
    Some((Some(q.answer), distractors))
}

/// Whether the sim's "memory" of a question wavers between wrong entities (about half
/// the questions, by seed) rather than settling on one.
fn wavers(cfg: &SimConfig, question: &str) -> bool {
    SplitMix64::from_parts(&[cfg.seed, stable_hash(question.as_bytes()), 0xa5e7]).chance(0.5)
}

/// Words that start a phrase naming what to find, and the tool each means: `search`
/// always searches; the others search a named entity (capitalised) and look a plain
/// term up on the current page, as ReAct's `Lookup` does.
const STEER_VERBS: &[(&str, &str)] = &[
    ("search for ", "Search"),
    ("search ", "Search"),
    ("look up ", "Lookup"),
    ("lookup ", "Lookup"),
    ("look for ", "Lookup"),
    ("find ", "Lookup"),
];

/// Capitalised words that do not name an entity (sentence starts, pronouns, the verbs above).
const NOT_ENTITIES: &[&str] = &[
    "a", "an", "and", "but", "first", "find", "he", "her", "his", "how", "i", "i'll", "i'm", "if", "it", "its", "let",
    "let's", "look", "lookup", "maybe", "my", "next", "now", "or", "search", "she", "so", "that", "the", "then",
    "there", "they", "this", "thought", "action", "we", "what", "when", "where", "which", "who", "why",
];

/// Pronouns and fillers that do not say what to find on their own ("search it").
const VAGUE: &[&str] =
    &["it", "that", "this", "them", "him", "her", "there", "here", "more", "again", "something", "the answer"];

/// The action a person's thought asks for, if it names what to find: a phrase after
/// one of [`STEER_VERBS`], else the last capitalised name in it (searched). `None` when
/// the thought names nothing (the agent then follows its own plan).
pub(super) fn steered_action(thought: &str) -> Option<(&'static str, String)> {
    // A pasted "Thought 2:" label is not part of the thought.
    let thought = match thought.split_once(':') {
        Some((label, rest)) if label.trim().to_lowercase().starts_with("thought") => rest,
        _ => thought,
    };
    // ASCII lowercasing keeps byte offsets, so they index the original text.
    let lower = thought.to_ascii_lowercase();
    let verb = STEER_VERBS
        .iter()
        .filter_map(|&(verb, tool)| find_word(&lower, verb).map(|at| (at, verb, tool)))
        .min_by_key(|&(at, verb, _)| (at, std::cmp::Reverse(verb.len())));
    if let Some((at, verb, tool)) = verb {
        let phrase = phrase_after(&thought[at + verb.len()..]);
        if !phrase.is_empty() && !VAGUE.contains(&phrase.to_lowercase().as_str()) {
            let tool = if tool == "Lookup" && entity(&phrase).is_some() { "Search" } else { tool };
            return Some((tool, phrase));
        }
    }
    entity(thought).map(|name| ("Search", name))
}

/// Where `word` starts in `text` at a word boundary.
fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word)
        .map(|(at, _)| at)
        .find(|&at| text[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '\''))
}

/// The phrase a verb is followed by: up to the end of its clause, without an article,
/// quotes or brackets.
fn phrase_after(rest: &str) -> String {
    let end = rest.find(['.', ',', ';', ':', '!', '?', '\n', '(']).unwrap_or(rest.len());
    let mut phrase = rest[..end].trim();
    for stop in [" and ", " then ", " to ", " on ", " in this ", " first", " next", " instead", " again"] {
        if let Some(at) = phrase.to_ascii_lowercase().find(stop) {
            phrase = phrase[..at].trim();
        }
    }
    for article in ["the ", "a ", "an ", "about ", "for "] {
        if phrase.len() > article.len() && phrase.get(..article.len()).is_some_and(|a| a.eq_ignore_ascii_case(article))
        {
            phrase = phrase[article.len()..].trim();
        }
    }
    phrase.trim_matches(|c: char| matches!(c, '"' | '\'' | '[' | ']' | '`')).trim().to_string()
}

/// The last run of capitalised words that is a name (not a sentence's "The" or "I"):
/// the newest thing a thought mentions ("Ilse Varga leads to Marrowick" → Marrowick).
fn entity(text: &str) -> Option<String> {
    let mut runs: Vec<Vec<&str>> = vec![Vec::new()];
    for raw in text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '.' | '!' | '?' | '(' | ')')) {
        let word = raw.trim_matches(|c: char| matches!(c, '"' | '\'' | '[' | ']' | '`'));
        let run = runs.last_mut().expect("never empty");
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        if capital && !NOT_ENTITIES.contains(&word.to_lowercase().as_str()) {
            run.push(word);
        } else if !run.is_empty() && word.eq_ignore_ascii_case("of") {
            // "University of Marrowick"
            run.push(word);
        } else if !run.is_empty() {
            runs.push(Vec::new());
        }
    }
    let run = runs.into_iter().rev().find(|r| !r.is_empty())?;
    Some(run.join(" ").trim_end_matches(" of").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Task;
    use crate::tasks::qa_demo::QaDemo;
    use crate::tasks::TaskSource;

    fn ask(request: &LlmRequest) -> Result<String, CallError> {
        answer(&SimConfig { noise: 0.0, ..SimConfig::default() }, request, &mut SplitMix64::new(1))
    }

    /// Every prompt the task writes is read by the typed context, field by field; a
    /// context of the wrong shape is an error naming the field, never a silent default.
    #[test]
    fn the_tasks_prompts_are_read_by_the_typed_context() {
        let task = QaDemo::new(None).unwrap();
        let x = task.problem(0).unwrap().input;
        let react = task.react().expect("qa-demo takes ReAct steps");
        let act = LlmRequest::from_prompt(react.react_prompt(&x, "", 1), 1, 0.7);
        let ctx = Context::of(&act).unwrap();
        let gold = ctx.gold.as_ref().expect("a question of the built-in set has its plan");
        assert_eq!((ctx.question.as_str(), ctx.step, gold.hops.is_empty()), (x.as_str(), Some(1), false));
        assert!(ask(&act).unwrap().ends_with(&format!("Action 1: Search[{}]", gold.hops[0])));
        let mut steered = act.clone();
        steered.context["thought"] = "look up flows".into();
        assert_eq!(ask(&steered).unwrap(), "Action 1: Lookup[flows]");
        let cot = LlmRequest::from_prompt(task.cot_prompt(&x), 1, 0.7);
        assert_eq!(Context::of(&cot).unwrap().question, x);
        assert!(ask(&cot).unwrap().contains(&format!("Answer: {}", gold.answer)), "a perfect memory");
        for (bad, says) in [
            (serde_json::json!({"question": 1}), "field \"question\": invalid type: integer `1`"),
            (serde_json::json!({"step": "2"}), "field \"step\": invalid type: string \"2\""),
            (serde_json::json!({"gold": {"hops": "A"}}), "field \"gold\": invalid type: string \"A\""),
            (serde_json::json!({"gold": {"hops": []}}), "field \"gold\": missing field `keyword`"),
        ] {
            let mut request = act.clone();
            request.context = bad;
            let e = ask(&request).unwrap_err();
            assert!(e.message.starts_with(&format!("qa-demo request context: {says}")), "{e}");
        }
    }

    #[test]
    fn a_thought_that_names_what_to_find_steers_the_action() {
        let cases = [
            ("look up flows", Some(("Lookup", "flows"))),
            ("Thought 2: look up flows", Some(("Lookup", "flows"))),
            ("I should search for the Tessel River next.", Some(("Search", "Tessel River"))),
            ("Marrowick is where she was born; search it.", Some(("Search", "Marrowick"))),
            ("Let me find the University of Marrowick, then its founder.", Some(("Search", "University of Marrowick"))),
            ("Look for \"lantern\" on this page", Some(("Lookup", "lantern"))),
            ("The answer must be on the page about Petra Lund", Some(("Search", "Petra Lund"))),
            // The model's own thought, its action deleted: the newest name, not the first.
            ("Ilse Varga leads to Marrowick. I need to know more about Marrowick.", Some(("Search", "Marrowick"))),
            ("I am not sure what to do.", None),
            ("research is hard", None),
        ];
        for (thought, want) in cases {
            let got = steered_action(thought);
            assert_eq!(got.as_ref().map(|(t, a)| (*t, a.as_str())), want, "{thought:?}");
        }
    }
}
