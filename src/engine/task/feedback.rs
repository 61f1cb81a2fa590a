//! The feedback capability (Self-Refine, Reflexion): prompts that check an attempt,
//! refine it, reflect on a failure, and a chain of thought that carries reflections.
//! The generic prompts build on the task's own chain-of-thought prompt; a task opts in
//! by returning itself from `Task::feedback` (and may override any of them).

use crate::protocol::{Message, Prompt, Purpose, Role};

use super::Task;

/// Feedback on attempts. Every method has a generic version built from
/// [`Task::cot_prompt`]; a task that has this capability says so in `Task::feedback`.
pub trait Feedback: Task {
    /// Ask the model to check `attempt` step by step and end with `VERDICT: correct` or
    /// `VERDICT: incorrect`. Context: the cot context plus `"attempt"`.
    fn feedback_prompt(&self, x: &str, attempt: &str) -> Prompt {
        generic_feedback(self, x, attempt)
    }

    /// Ask for a complete new attempt (in the cot reply's format) that follows `feedback`.
    /// Context: the cot context plus `"attempt"` and `"feedback"`.
    fn refine_prompt(&self, x: &str, attempt: &str, feedback: &str) -> Prompt {
        generic_refine(self, x, attempt, feedback)
    }

    /// Ask for a short reflection on a failed `attempt` (what went wrong, what to do
    /// differently). Context: the cot context plus `"attempt"` and `"feedback"`.
    fn reflect_prompt(&self, x: &str, attempt: &str, feedback: &str) -> Prompt {
        generic_reflect(self, x, attempt, feedback)
    }

    /// Reflexion's later trials: the cot prompt with the reflections added to its (last)
    /// user message. Context: the cot context plus `"reflections"`.
    fn reflexion_cot_prompt(&self, x: &str, reflections: &[String]) -> Prompt {
        let mut prompt = self.cot_prompt(x);
        if reflections.is_empty() {
            return prompt;
        }
        let listed: Vec<String> = reflections.iter().map(|r| format!("- {}", r.trim())).collect();
        let add = format!("\n\n{REFLECTIONS_HEAD}\n{}\n{REFLECTIONS_TAIL}", listed.join("\n"));
        match prompt.messages.iter_mut().rev().find(|m| m.role == Role::User) {
            Some(m) => m.content.push_str(&add),
            None => prompt.messages.push(Message::user(add.trim_start())),
        }
        add_context(&mut prompt, &[("reflections", reflections.into())]);
        prompt
    }

    /// Read a feedback reply: the verdict of its last `VERDICT: correct|incorrect` line,
    /// else of its last sentence that says it plainly (`Yes, every step is correct.`,
    /// `there is an error`; see [`read_plain_verdict`]), `None` if neither; and the text.
    fn parse_feedback(&self, reply: &str) -> (Option<bool>, String) {
        (read_verdict(reply).or_else(|| read_plain_verdict(reply)), reply.trim().to_string())
    }
}

/// The generic feedback prompt ([`Feedback::feedback_prompt`]), for a task that
/// overrides it only sometimes.
pub fn generic_feedback<T: Task + ?Sized>(task: &T, x: &str, attempt: &str) -> Prompt {
    let mut prompt = after_attempt(task, task.cot_prompt(x), Purpose::Feedback, attempt, FEEDBACK_REQUEST.to_string());
    add_context(&mut prompt, &[("attempt", attempt.into())]);
    prompt
}

/// The generic refine prompt ([`Feedback::refine_prompt`]).
pub fn generic_refine<T: Task + ?Sized>(task: &T, x: &str, attempt: &str, feedback: &str) -> Prompt {
    let ask = format!("{REFINE_REQUEST_HEAD}\n\n{}\n\n{REFINE_REQUEST_TAIL}", feedback.trim());
    let mut prompt = after_attempt(task, task.cot_prompt(x), Purpose::Refine, attempt, ask);
    add_context(&mut prompt, &[("attempt", attempt.into()), ("feedback", feedback.into())]);
    prompt
}

/// The generic reflect prompt ([`Feedback::reflect_prompt`]).
pub fn generic_reflect<T: Task + ?Sized>(task: &T, x: &str, attempt: &str, feedback: &str) -> Prompt {
    let ask = format!("{REFLECT_REQUEST_HEAD}\n\n{}\n\n{REFLECT_REQUEST_TAIL}", feedback.trim());
    let mut prompt = after_attempt(task, task.cot_prompt(x), Purpose::Reflect, attempt, ask);
    add_context(&mut prompt, &[("attempt", attempt.into()), ("feedback", feedback.into())]);
    prompt
}

/// What the generic feedback prompts add to the task's chain-of-thought context, as a
/// player reads it back (each field only on the prompts that carry it).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct FeedbackContext {
    /// The attempt checked, refined or reflected on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
    /// The feedback a refinement follows or a reflection is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Reflexion: the reflections a later trial carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reflections: Option<Vec<String>>,
}

const FEEDBACK_REQUEST: &str = "Check the attempt above step by step: is every step right, and is the final \
answer correct? Say what is wrong, if anything. End with a line `VERDICT: correct` or `VERDICT: incorrect`.";
const REFINE_REQUEST_HEAD: &str = "Here is feedback on the attempt above:";
const REFINE_REQUEST_TAIL: &str = "Following this feedback, write a complete new attempt at the problem, in \
the same format as before, ending with the final answer.";
const REFLECT_REQUEST_HEAD: &str = "The attempt above was judged incorrect. The feedback was:";
const REFLECT_REQUEST_TAIL: &str = "In two or three sentences, reflect: what went wrong, and what will you do \
differently on the next attempt? Do not write a new attempt.";
const REFLECTIONS_HEAD: &str = "Reflections on your earlier attempts at this problem:";
const REFLECTIONS_TAIL: &str = "Use them to avoid the same mistakes.";

/// The chat style's system message of each call purpose built on the solver's prompt:
/// what the call asks, then the solver's own instructions quoted as the solver's (its
/// rules and format), with what they mean for this call. None of them forbids what the
/// call's last turn asks.
const FEEDBACK_SYSTEM: &str = "You check attempts at a problem. The conversation shows the problem (after any \
worked examples) and an attempt at it; the last message asks you to check the attempt. Check it step by step in \
plain words, say what is wrong if anything, and end with a line `VERDICT: correct` or `VERDICT: incorrect`.";
const FEEDBACK_SOLVER_NOTE: &str = "Those instructions tell you the problem's rules and the attempt's format; they \
were the solver's, not yours: write your check as the last message asks.";
const REFINE_SYSTEM: &str = "You improve attempts at a problem. The conversation shows the problem, an attempt at \
it and feedback on the attempt; write a complete new attempt that follows the feedback, from its first step to its \
final answer.";
const REFINE_SOLVER_NOTE: &str = "Write the new attempt in the format those instructions give, but whole: start \
again from the problem rather than going on from the earlier attempt.";
const REFLECT_SYSTEM: &str = "You reflect on failed attempts at a problem. The conversation shows the problem, an \
attempt at it and the feedback that judged it incorrect; answer in two or three sentences of plain prose: what went \
wrong, and what to do differently on the next attempt. Do not write a new attempt.";
const REFLECT_SOLVER_NOTE: &str =
    "Those instructions tell you the problem's rules; they were the solver's, not yours: write only the reflection.";

/// In the chat style, the call's own system message in place of the solver's (see
/// [`FEEDBACK_SYSTEM`]); the reference style keeps the papers' prompts as they are.
fn own_system(prompt: &mut Prompt, purpose: Purpose) {
    let (role, note) = match purpose {
        Purpose::Feedback => (FEEDBACK_SYSTEM, FEEDBACK_SOLVER_NOTE),
        Purpose::Refine => (REFINE_SYSTEM, REFINE_SOLVER_NOTE),
        Purpose::Reflect => (REFLECT_SYSTEM, REFLECT_SOLVER_NOTE),
        _ => return,
    };
    let solver_first = prompt.messages.first().is_some_and(|m| m.role == Role::System);
    let text = match solver_first {
        true => {
            let solver = prompt.messages.remove(0).content;
            format!("{role}\n\nThe solver of this problem was told:\n\"\"\"\n{}\n\"\"\"\n{note}", solver.trim())
        }
        false => role.to_string(),
    };
    prompt.messages.insert(0, Message::system(text));
}

/// `prompt`'s messages (in the chat style under the call's own system message), then
/// `attempt` as the assistant's reply, then `ask` from the user.
fn after_attempt<T: Task + ?Sized>(
    task: &T,
    mut prompt: Prompt,
    purpose: Purpose,
    attempt: &str,
    ask: String,
) -> Prompt {
    prompt.purpose = purpose;
    if !task.prompt_style().is_reference() {
        own_system(&mut prompt, purpose);
    }
    prompt.messages.push(Message::assistant(attempt.to_string()));
    prompt.messages.push(Message::user(ask));
    prompt
}

/// Add fields to a prompt's context object (a context that is not an object becomes one).
fn add_context(prompt: &mut Prompt, fields: &[(&str, serde_json::Value)]) {
    if !prompt.context.is_object() {
        prompt.context = serde_json::Value::Object(serde_json::Map::new());
    }
    if let Some(obj) = prompt.context.as_object_mut() {
        for (k, v) in fields {
            obj.insert(k.to_string(), v.clone());
        }
    }
}

/// The verdict of the last line that names one: `VERDICT: correct`, `**Verdict:** Incorrect`,
/// `Verdict - incorrect` (case, markdown and the separator do not matter).
pub fn read_verdict(reply: &str) -> Option<bool> {
    reply.lines().rev().find_map(|line| {
        let cleaned: String = line.to_lowercase().chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
        let words: Vec<&str> = cleaned.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "verdict")?;
        match words.get(at + 1..)?.iter().find(|w| !matches!(**w, "is" | "the"))? {
            &"correct" | &"right" => Some(true),
            &"incorrect" | &"wrong" | &"not" => Some(false),
            _ => None,
        }
    })
}

/// The verdict a chat model states in plain words, from its last sentence that states
/// one (questions and sentences that only announce a check are skipped): `Yes, every
/// step is correct.`, `The solution is correct.`, `No errors found` are correct;
/// `incorrect`, `there is an error`, `step 2 is wrong`, `so it doesn't reach 24` are not
/// (a last sentence that says the result falls short is the verdict, not an earlier
/// step's `is right`). `None` when no sentence says either.
pub fn read_plain_verdict(reply: &str) -> Option<bool> {
    const FINE: [&str; 9] = [
        "no error",
        "no mistake",
        "nothing wrong",
        "no issue",
        "no problem",
        "without error",
        "not wrong",
        "not incorrect",
        "no flaw",
    ];
    const BAD: [&str; 24] = [
        "doesn't reach",
        "does not reach",
        "doesn't give",
        "does not give",
        "doesn't make",
        "does not make",
        "doesn't work",
        "does not work",
        "incorrect",
        "not correct",
        "isn't correct",
        "is not right",
        "isn't right",
        "not right",
        "wrong",
        "an error",
        "errors",
        "a mistake",
        "mistakes",
        "invalid",
        "not valid",
        "flawed",
        "does not equal",
        "doesn't equal",
    ];
    const GOOD: [&str; 8] =
        ["correct", "is right", "are right", "all right", "valid", "checks out", "check out", "accurate"];
    let sentences = reply.split_inclusive(['.', '!', '?', '\n']);
    for sentence in sentences.collect::<Vec<_>>().into_iter().rev() {
        // A typographic apostrophe (`doesn’t`) reads as the plain one.
        let mut s = sentence.trim().to_lowercase().replace(['*', '`', '_'], "").replace('\u{2019}', "'");
        if s.is_empty() || s.ends_with('?') {
            continue;
        }
        // "Let me check whether it is correct" announces a check; it says nothing yet.
        if ["whether", "let me", "let's", "if the", "if it", "if every", "if all"].iter().any(|w| s.contains(w)) {
            continue;
        }
        let mut fine = false;
        for phrase in FINE {
            if s.contains(phrase) {
                fine = true;
                s = s.replace(phrase, " ");
            }
        }
        if BAD.iter().any(|w| s.contains(w)) {
            return Some(false);
        }
        if fine || GOOD.iter().any(|w| s.contains(w)) {
            return Some(true);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_is_read_from_the_last_line_that_names_one() {
        for (reply, verdict) in [
            ("All steps check.\nVERDICT: correct", Some(true)),
            ("VERDICT: incorrect", Some(false)),
            ("**Verdict:** Incorrect", Some(false)),
            ("Verdict - incorrect.", Some(false)),
            ("verdict: CORRECT", Some(true)),
            ("> VERDICT: `correct`", Some(true)),
            ("VERDICT: correct\nOn second thought...\nVERDICT: incorrect", Some(false)),
            ("The verdict is not correct", Some(false)),
            ("VERDICT: unsure", None),
            ("", None),
        ] {
            assert_eq!(read_verdict(reply), verdict, "{reply:?}");
        }
    }

    #[test]
    fn a_plain_verdict_that_the_result_falls_short_is_read_before_the_steps_checked() {
        let claude = "Let me check each step.\n\nStep 1: 10 - 6 = 4 is right, leaving 4, 4 and 5.\nStep 2: 4 + 5 = 9 \
                      is right, leaving 4 and 9.\nStep 3: 9 × 4 = 36, so the final expression doesn't reach 24.";
        assert_eq!(read_plain_verdict(claude), Some(false));
        for reply in ["The expression does not give 24.", "This approach doesn't work.", "It does not make 24."] {
            assert_eq!(read_plain_verdict(reply), Some(false), "{reply:?}");
        }
        assert_eq!(read_plain_verdict("Step 1 is right.\nThe expression is correct."), Some(true));
        assert_eq!(read_plain_verdict("Step 1 is right. So the answer doesn\u{2019}t reach 24."), Some(false));
    }

    #[test]
    fn the_generic_prompts_build_on_the_cot_prompt() {
        let task = crate::tasks::game24::Game24::builtin();
        let cot = task.cot_prompt("4 5 6 10");
        let fb = task.feedback_prompt("4 5 6 10", "Answer: 4 * 6 = 24");
        assert_eq!(fb.purpose, Purpose::Feedback);
        assert_eq!(fb.messages[..cot.messages.len()], cot.messages[..]);
        assert_eq!(fb.context["attempt"], "Answer: 4 * 6 = 24");
        assert_eq!(fb.context["task"], "game24");
        let reflect = task.reflect_prompt("4 5 6 10", "a", "it is wrong");
        assert_eq!(
            (reflect.purpose, &reflect.context["feedback"]),
            (Purpose::Reflect, &serde_json::json!("it is wrong"))
        );
        assert!(reflect.messages.last().unwrap().content.contains("it is wrong"));
        let plain = task.reflexion_cot_prompt("4 5 6 10", &[]);
        assert_eq!(plain, cot, "no reflections: the cot prompt itself");
        let with = task.reflexion_cot_prompt("4 5 6 10", &["first".into(), "second".into()]);
        assert_eq!(with.purpose, Purpose::Cot);
        assert_eq!(with.messages.len(), cot.messages.len());
        assert!(with
            .messages
            .last()
            .unwrap()
            .content
            .ends_with("- first\n- second\nUse them to avoid the same mistakes."));
        assert_eq!(task.parse_feedback("  x\nVERDICT: correct \n"), (Some(true), "x\nVERDICT: correct".to_string()));
        // What the prompts add reads back typed.
        let read: FeedbackContext = serde_json::from_value(reflect.context.clone()).unwrap();
        assert_eq!((read.attempt.as_deref(), read.feedback.as_deref()), (Some("a"), Some("it is wrong")));
        let read: FeedbackContext = serde_json::from_value(with.context.clone()).unwrap();
        assert_eq!(read.reflections, Some(vec!["first".to_string(), "second".to_string()]));
    }
}
