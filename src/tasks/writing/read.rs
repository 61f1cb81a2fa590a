//! Reading the creative-writing task's texts: the input's sentences, a reply's plan
//! and passage, its paragraphs, which paragraphs end with their sentence, and the
//! verdicts of vote and coherency-score replies.

/// The sentences of an input line, in order: split after `.`, `!` or `?` (and any
/// closing quotes or brackets) followed by a space or the end. Five lines of the data
/// hold an unfinished sentence that runs into the next, so they read as three.
pub fn sentences(input: &str) -> Vec<String> {
    let chars: Vec<char> = input.trim().chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut i = 0;
    while i < chars.len() {
        current.push(chars[i]);
        if matches!(chars[i], '.' | '!' | '?') {
            let mut j = i + 1;
            while j < chars.len() && matches!(chars[j], '"' | '\'' | '\u{201d}' | '\u{2019}' | ')') {
                current.push(chars[j]);
                j += 1;
            }
            if j >= chars.len() || chars[j].is_whitespace() {
                out.push(current.trim().to_string());
                current.clear();
            }
            i = j;
            continue;
        }
        i += 1;
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// The plan of a reply: the text after its first `Plan:` (or all of it), up to a
/// `Passage:` if the model went on to write one.
pub fn plan_of(text: &str) -> String {
    let text = text.trim();
    let after = text.find("Plan:").map_or(text, |at| &text[at + "Plan:".len()..]);
    let plan = after.find("Passage:").map_or(after, |at| &after[..at]);
    plan.trim().to_string()
}

/// The passage of a reply or a state: the text after its last `Passage:` (as the
/// reference splits on it), or the whole text when it has none.
pub fn passage_of(text: &str) -> String {
    let text = text.trim();
    let passage = text.rfind("Passage:").map_or(text, |at| &text[at + "Passage:".len()..]);
    passage.trim().to_string()
}

/// Paragraphs: blocks of text between blank lines, trimmed, each with its lines joined
/// by a space.
pub fn paragraphs(passage: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in passage.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line.trim());
        }
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    out
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// For each sentence of the input, whether paragraph i of the passage ends with it
/// (spacing aside).
pub fn endings(passage: &str, sentences: &[String]) -> Vec<bool> {
    let paras = paragraphs(passage);
    sentences.iter().enumerate().map(|(i, s)| paras.get(i).is_some_and(|p| squash(p).ends_with(&squash(s)))).collect()
}

/// The share of the sentences that end their paragraph, 0 for no sentences.
pub fn ending_share(passage: &str, sentences: &[String]) -> f64 {
    let e = endings(passage, sentences);
    if e.is_empty() {
        0.0
    } else {
        e.iter().filter(|&&ok| ok).count() as f64 / e.len() as f64
    }
}

/// The choice a vote reply names in "The best choice is N" (0-based), if it is one of
/// `n_choices`.
pub fn vote(reply: &str, n_choices: usize) -> Option<usize> {
    crate::tasks::reply::best_choice(reply, n_choices)
}

/// The score a judge reply gives in "Thus the coherency score is N": any whole number,
/// as the reference's `coherency score is (\d+)` reads it (the prompt asks for 1 to 10),
/// so a log's scores re-read as they were counted.
pub fn coherency(reply: &str) -> Option<u64> {
    crate::tasks::reply::number_after(reply, "coherency score is")
}
