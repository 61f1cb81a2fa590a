//! Reading model replies the same way in every task: the answer line, an expression's
//! key, an evaluator's class word, a vote's "best choice". One reading each, so two
//! tasks that ask the same question cannot disagree on what a reply says.

/// The last line of `text`, trimmed.
pub fn last_line(text: &str) -> &str {
    text.trim().rsplit('\n').next().unwrap_or("").trim()
}

/// `line` after its `answer:` label (any case), or the whole line, trimmed.
pub fn strip_answer_prefix(line: &str) -> &str {
    match line.to_ascii_lowercase().find("answer:") {
        // `**Answer:** 6 * 4 = 24`: the label's closing bold is not the answer's.
        Some(i) => line[i + "answer:".len()..].trim().trim_matches(|c| c == '*' || c == '`').trim(),
        None => line.trim(),
    }
}

/// A line of a chat model's list as the line it means: without a list marker (`1.`,
/// `2)`, `-`, `*`, `•`), bold and code marks, trimmed. `h1.` (a crossword clue) is kept.
pub fn plain_line(line: &str) -> String {
    let mut rest = line.trim();
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits <= 2 {
        let after = &rest[digits..];
        if let Some(tail) = after.strip_prefix(". ").or_else(|| after.strip_prefix(") ")) {
            rest = tail;
        }
    }
    for marker in ["- ", "* ", "• "] {
        if let Some(tail) = rest.strip_prefix(marker) {
            rest = tail;
            break;
        }
    }
    rest.replace("**", "").replace('`', "").trim().to_string()
}

/// The step lines of a chat model's reply to a propose prompt: each line [`plain_line`],
/// without code fences and without the lines that are no step (a "Sure! Here are…"
/// before the list, a remark after it: no `=` and no `answer`).
pub fn chat_step_lines(reply: &str) -> Vec<String> {
    reply
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .map(plain_line)
        .filter(|l| l.contains('=') || l.to_ascii_lowercase().contains("answer"))
        .collect()
}

/// The answer a reply gives: the last line with an `Answer:` label, else the last line
/// (as the reference reads it), without the label; none when that is empty.
pub fn answer_line(reply: &str) -> Option<String> {
    if let Some(tagged) = answer_tag(reply) {
        let answer = strip_answer_prefix(&tagged).to_string();
        return (!answer.is_empty()).then_some(answer);
    }
    let line = reply.lines().rev().find(|l| l.to_lowercase().contains("answer:")).unwrap_or_else(|| last_line(reply));
    let answer = strip_answer_prefix(line);
    (!answer.is_empty()).then(|| answer.to_string())
}

/// Whether [`answer_line`] reads `reply`'s answer from its last line because it has no
/// `<answer>` tag and no `Answer:` line.
pub fn answer_line_is_fallback(reply: &str) -> bool {
    answer_tag(reply).is_none() && !reply.lines().any(|l| l.to_lowercase().contains("answer:"))
}

/// The text of the last `<answer>…</answer>` in `reply` (any case), as chat models are
/// often told to write it; none without a closed tag.
pub fn answer_tag(reply: &str) -> Option<String> {
    let lower = reply.to_ascii_lowercase();
    let open = lower.rfind("<answer>")?;
    let close = lower[open..].find("</answer>")? + open;
    Some(reply[open + "<answer>".len()..close].trim().to_string())
}

/// The key two expression answers share when they are the same expression: the left
/// side of `=`, without its label and spaces.
pub fn expression_key(answer: &str) -> String {
    let answer = strip_answer_prefix(answer);
    answer.split('=').next().unwrap_or(answer).chars().filter(|c| !c.is_whitespace()).collect()
}

/// The class of `classes` named on an evaluator sample's last non-empty line, if exactly
/// one is named there (a line naming two is not read as either). A class word right after
/// `not` is no class named (`I'm not sure there's a way, but it looks likely.` is likely).
pub fn value_class(sample: &str, classes: &[(&'static str, f64)]) -> Option<&'static str> {
    let line = sample.lines().rev().map(str::trim).find(|l| !l.is_empty())?.to_lowercase();
    let words: Vec<&str> = line.split(|c: char| !c.is_alphabetic()).filter(|w| !w.is_empty()).collect();
    let named = |n: &str| words.iter().enumerate().any(|(i, w)| *w == n && (i == 0 || words[i - 1] != "not"));
    let found: Vec<&'static str> = classes.iter().map(|(n, _)| *n).filter(|n| named(n)).collect();
    match found.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// A chat model's verdict line followed by its reasons (`**Likely**` then why): when the
/// last line names no class ([`value_class`]), the last line that is a class word alone,
/// after any `Label:` and markdown (`**Likely**`, `Evaluation: sure`, `- impossible.`).
/// The chat style's reading; the reference reads the last line only, as the papers did.
pub fn chat_value_class(sample: &str, classes: &[(&'static str, f64)]) -> Option<&'static str> {
    value_class(sample, classes).or_else(|| {
        sample.lines().rev().find_map(|line| {
            let plain = plain_line(line).to_lowercase();
            let rest = plain.rsplit_once(':').map_or(plain.as_str(), |(_, r)| r);
            let word = rest.trim().trim_end_matches(['.', '!']).trim();
            classes.iter().map(|(n, _)| *n).find(|n| *n == word)
        })
    })
}

/// The value of evaluator `samples`: each read by [`value_class`] and its class's value
/// added, class by class in the table's order (the reference's order, so the floats match
/// its logs exactly); with the label of each sample, `?` for one that names no class.
pub fn class_value(samples: &[String], classes: &[(&'static str, f64)]) -> (f64, Vec<String>) {
    class_value_styled(samples, classes, crate::engine::PromptStyle::Reference)
}

/// [`class_value`] read in `style`: the chat style reads each sample by [`chat_value_class`].
pub fn class_value_styled(
    samples: &[String],
    classes: &[(&'static str, f64)],
    style: crate::engine::PromptStyle,
) -> (f64, Vec<String>) {
    let read: Vec<Option<&'static str>> = match style.is_reference() {
        true => samples.iter().map(|s| value_class(s, classes)).collect(),
        false => samples.iter().map(|s| chat_value_class(s, classes)).collect(),
    };
    let mut value = 0.0;
    for (name, v) in classes {
        let count = read.iter().filter(|c| **c == Some(*name)).count();
        value += v * count as f64;
    }
    (value, read.iter().map(|c| c.unwrap_or("?").to_string()).collect())
}

/// The first whole number after the last occurrence of `phrase` (case-insensitive).
pub fn number_after(reply: &str, phrase: &str) -> Option<u64> {
    let (lower, phrase) = (reply.to_lowercase(), phrase.to_lowercase());
    let at = lower.rfind(&phrase)?;
    let digits: String = lower[at + phrase.len()..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// The choice a vote reply names in "The best choice is N" (0-based), if it is one of
/// `n_choices`.
pub fn best_choice(reply: &str, n_choices: usize) -> Option<usize> {
    let n = usize::try_from(number_after(reply, "best choice is")?).ok()?;
    (1..=n_choices).contains(&n).then(|| n - 1)
}

/// The states a vote chooses among, as the vote prompts list them: `Choice i:` and the
/// state, one after another.
pub fn numbered_choices(ys: &[String]) -> String {
    ys.iter().enumerate().map(|(i, y)| format!("Choice {}:\n{}", i + 1, y.trim_end())).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLASSES: [(&str, f64); 3] = [("impossible", 0.001), ("likely", 1.0), ("sure", 20.0)];

    #[test]
    fn answers_are_read_from_the_labelled_line_or_the_last() {
        assert_eq!(
            answer_line("4 + 9 = 13 (left: 10 13)\nAnswer: (4 + 9) + 10 = 23\n").as_deref(),
            Some("(4 + 9) + 10 = 23")
        );
        assert_eq!(answer_line("thinking\n(1 + 2) * 8").as_deref(), Some("(1 + 2) * 8"));
        assert_eq!(answer_line("Answer:   \n"), None);
        assert_eq!(expression_key("Answer: (1 + 2) * 8 = 24"), "(1+2)*8");
        assert_eq!(strip_answer_prefix("The ANSWER: 7"), "7");
        // A chat model's tags win over the last line.
        let tagged = "Sure! Here is my work.\n<answer>(4 + 8) * (10 - 8) = 24</answer>\nHope this helps!";
        assert_eq!(answer_line(tagged).as_deref(), Some("(4 + 8) * (10 - 8) = 24"));
        assert_eq!(answer_line("<ANSWER>Answer: 12</ANSWER>").as_deref(), Some("12"));
        assert_eq!(answer_tag("<answer>unclosed"), None);
    }

    #[test]
    fn a_value_sample_names_exactly_one_class_on_its_last_line() {
        assert_eq!(value_class("10 + 14 = 24\nsure\n\n", &CLASSES), Some("sure"));
        assert_eq!(value_class("**Likely**.", &CLASSES), Some("likely"));
        assert_eq!(value_class("sure\nlikely or impossible", &CLASSES), None);
        assert_eq!(value_class("unsure", &CLASSES), None, "a word containing a class is not the class");
        // A chat model's hedge: the class after "not" is not named.
        assert_eq!(value_class("I'm not sure there's a way, but it looks likely.", &CLASSES), Some("likely"));
        assert_eq!(value_class("Not impossible, but not sure either.", &CLASSES), None);
        assert_eq!(value_class("not sure", &CLASSES), None);
        let samples = ["sure".to_string(), "likely".into(), "no idea".into(), "sure".into()];
        assert_eq!(
            class_value(&samples, &CLASSES),
            (41.0, vec!["sure".into(), "likely".into(), "?".into(), "sure".into()])
        );
    }

    #[test]
    fn the_chat_style_reads_a_class_word_alone_above_the_reasons() {
        let sample = "**Likely**\n\n16 + 5 + 4 = 25 is close, so a subtraction might reach 24.";
        assert_eq!(value_class(sample, &CLASSES), None, "the reference reads the last line only");
        assert_eq!(chat_value_class(sample, &CLASSES), Some("likely"));
        assert_eq!(chat_value_class("Evaluation: sure\n10 + 14 = 24", &CLASSES), Some("sure"));
        assert_eq!(chat_value_class("- impossible.\nThe numbers are too small.", &CLASSES), Some("impossible"));
        // A class word inside a sentence above is no verdict; the last line still wins.
        assert_eq!(chat_value_class("It is likely fine.\nno idea", &CLASSES), None);
        assert_eq!(chat_value_class("sure\nlikely", &CLASSES), Some("likely"));
        let samples = ["**Sure**\nbecause 4 * 6 = 24".to_string(), "no idea".into()];
        let chat = class_value_styled(&samples, &CLASSES, crate::engine::PromptStyle::Chat);
        assert_eq!(chat, (20.0, vec!["sure".into(), "?".into()]));
        assert_eq!(class_value(&samples, &CLASSES), (0.0, vec!["?".into(), "?".into()]));
    }

    #[test]
    fn a_vote_names_a_choice_in_range_after_its_last_phrase() {
        assert_eq!(best_choice("The best choice is 2.", 3), Some(1));
        assert_eq!(best_choice("the best choice is 1 ... The Best Choice Is 3", 3), Some(2));
        assert_eq!(best_choice("The best choice is 4", 3), None);
        assert_eq!(best_choice("The best choice is 0", 3), None);
        assert_eq!(best_choice("The best choice is 99999999999999999999999", 3), None);
        assert_eq!(best_choice("no vote", 3), None);
        assert_eq!(numbered_choices(&["a\n".into(), "b".into()]), "Choice 1:\na\nChoice 2:\nb");
    }
}
