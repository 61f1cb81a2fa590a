//! The final answer a reply (or a gold solution) states. In order:
//!
//! 1. The last group of `\boxed{}`/`\fbox{}` — boxes joined only by a comma, `and`/`or`
//!    or a few words with one (`\boxed{1} and \boxed{2}`) are one answer, a list — unless
//!    a "final answer" statement comes after it (the Minerva format's closing `Final
//!    Answer: The final answer is $X$. I hope it is correct.` beats a box mid-solution).
//! 2. A "final answer" statement: what follows it (after its last ` is `) up to the end of
//!    the sentence or "I hope it is correct".
//! 3. "The answer is X" / "Answer: X".
//! 4. The whole text, when it is an answer rather than prose.
//! 5. The last math span (spans joined like boxes: `$12$ and $13$`) or plain-text number,
//!    whichever comes last; math opened with `$` or `\(` and closed on another line is
//!    not read.
//! 6. The last non-empty line.
//!
//! Steps 2 and 3 read their text the same way: an answer as it is, else its last math
//! span, else its last number.

use super::prose::{is_prose, joins, last_number, last_span_group, math_spans, Piece};

/// The final answer in `reply`, with maths delimiters and a trailing period stripped;
/// `None` when the reply states nothing.
pub fn extract_answer(reply: &str) -> Option<String> {
    let raw = final_answer(reply)?;
    let answer = strip_delimiters(&raw);
    (!answer.is_empty()).then_some(answer)
}

/// Whether `reply` states its answer (a tag, a box, a "final answer" statement, "the
/// answer is"): when it does not, [`extract_answer`] falls back to the whole text, its
/// last number or its last line.
pub fn states_answer(reply: &str) -> bool {
    let reply = few_shot_reply(reply);
    crate::tasks::reply::answer_tag(reply).is_some_and(|t| !t.is_empty())
        || last_box_group(reply).is_some()
        || final_statement(reply).is_some()
        || answer_phrase(reply).is_some()
}

fn final_answer(reply: &str) -> Option<String> {
    let reply = few_shot_reply(reply);
    // A chat model told to tag its answer: the last `<answer>…</answer>` is the answer.
    if let Some(tagged) = crate::tasks::reply::answer_tag(reply).filter(|t| !t.is_empty()) {
        return Some(final_answer(&tagged).unwrap_or(tagged));
    }
    let boxes = last_box_group(reply);
    let statement = final_statement(reply);
    let chosen = match (&boxes, &statement) {
        (Some(b), Some((at, content))) if *at >= b.end => answer_in(content).or_else(|| Some(b.text.clone())),
        (Some(b), _) => Some(b.text.clone()),
        (None, Some((_, content))) => answer_in(content),
        (None, None) => None,
    };
    chosen
        .or_else(|| answer_phrase(reply).and_then(|c| answer_in(&c)))
        .or_else(|| bare(reply))
        .or_else(|| last_math_or_number(reply))
        .or_else(|| reply.lines().rev().map(str::trim).find(|l| !l.is_empty()).map(str::to_string))
}

/// A few-shot (Minerva) reply without the next problem a model went on to write: after
/// its first `I hope it is correct`, a line starting `Problem:` ends the reply.
fn few_shot_reply(reply: &str) -> &str {
    let lower = reply.to_ascii_lowercase();
    let Some(hope) = lower.find("i hope it is correct") else { return reply };
    let after = &lower[hope..];
    match after.find("\nproblem:") {
        Some(k) => &reply[..hope + k],
        None => reply,
    }
}

/// Byte offsets of each `\boxed` / `\fbox` command and just after its name (not `\boxedx`).
fn find_box_commands(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    ["\\boxed", "\\fbox"].into_iter().flat_map(move |cmd| {
        text.match_indices(cmd).filter_map(move |(i, _)| {
            let end = i + cmd.len();
            let next = text[end..].chars().next();
            (!next.is_some_and(|c| c.is_ascii_alphabetic())).then_some((i, end))
        })
    })
}

/// A box: where its command starts, where it ends, and its contents (nested braces kept;
/// a box inside it is read through).
fn boxed_at(text: &str, start: usize, after_name: usize) -> Piece {
    let rest = &text[after_name..];
    let skipped = rest.len() - rest.trim_start().len();
    let rest = rest.trim_start();
    let Some(body) = rest.strip_prefix('{') else {
        // `\boxed 5`: up to the closing `$` or the end of the line.
        let len = rest.find(['$', '\n']).unwrap_or(rest.len());
        return Piece { start, end: after_name + skipped + len, text: rest[..len].to_string() };
    };
    let body_start = after_name + skipped + 1;
    let mut depth = 1usize;
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            // `\{` and `\}` are literal braces (a set), not grouping.
            '\\' => {
                chars.next();
            }
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Piece { start, end: body_start + i + 1, text: inner_box(&body[..i]) };
                }
            }
            _ => {}
        }
    }
    // Unbalanced (a reply cut off mid-answer): take what there is.
    Piece { start, end: text.len(), text: inner_box(body) }
}

/// A box's contents, or what a box inside them says (`\boxed{\boxed{7}}`).
fn inner_box(body: &str) -> String {
    match last_box_group(body) {
        Some(inner) => inner.text,
        None => body.to_string(),
    }
}

/// The last group of boxes (see the module docs), its contents joined by commas.
fn last_box_group(text: &str) -> Option<Piece> {
    let mut starts: Vec<(usize, usize)> = find_box_commands(text).collect();
    starts.sort_unstable();
    let mut boxes: Vec<Piece> = Vec::new();
    for (start, after_name) in starts {
        // A box inside the previous one is part of its contents.
        if boxes.last().is_some_and(|b| start < b.end) {
            continue;
        }
        boxes.push(boxed_at(text, start, after_name));
    }
    let last = boxes.last()?;
    let mut first = boxes.len() - 1;
    while first > 0 && joins(&text[boxes[first - 1].end..boxes[first].start], true) {
        first -= 1;
    }
    let parts: Vec<String> =
        boxes[first..].iter().map(|b| strip_delimiters(&b.text)).filter(|t| !t.is_empty()).collect();
    Some(Piece { start: boxes[first].start, end: last.end, text: parts.join(", ") })
}

/// The last "final answer" statement: where it is, and its text up to "I hope it is
/// correct", the end of its paragraph, or the end of its line (the next line when the
/// phrase ends its own, as in a `**Final Answer**` heading).
fn final_statement(text: &str) -> Option<(usize, String)> {
    // ASCII lowercasing keeps byte offsets.
    let lower = text.to_ascii_lowercase();
    // A statement, not a mention ("this final answer of 5"): the phrase is followed by
    // a colon, "is", or the end of its line (a heading).
    let at = lower.match_indices("final answer").map(|(k, _)| k).filter(|&k| {
        let after = lower[k + "final answer".len()..].trim_start_matches(['*', ' ', '\t']);
        after.is_empty() || after.starts_with([':', '\n', '\r']) || after.starts_with("is ") || after.starts_with("is:")
    });
    let at = at.last()?;
    let mut rest = &text[at + "final answer".len()..];
    rest = rest.trim_start_matches([' ', '\t', ':', '*']);
    for lead in ["the final answer is", "is"] {
        if rest.len() >= lead.len()
            && rest.is_char_boundary(lead.len())
            && rest[..lead.len()].eq_ignore_ascii_case(lead)
        {
            rest = rest[lead.len()..].trim_start_matches([' ', '\t', ':', '*']);
            break;
        }
    }
    let rest = rest.trim_start_matches(['\n', '\r', ' ', '*']);
    let lower_rest = rest.to_ascii_lowercase();
    let mut end = rest.len();
    for stop in ["i hope it is correct", "\n\n", "\n", "<|"] {
        if let Some(k) = lower_rest.find(stop) {
            end = end.min(k);
        }
    }
    let content = rest[..end].trim();
    (!content.is_empty()).then(|| (at, content.to_string()))
}

/// What follows the last "the answer is" / "answer is" / "answer:" / "####" (GSM8K's
/// mark), to the end of its line.
fn answer_phrase(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let (at, len) = ["the answer is", "answer is", "answer:", "####"]
        .iter()
        .filter_map(|p| lower.rfind(p).map(|i| (i, p.len())))
        .max_by_key(|&(i, len)| (i + len, len))?;
    let rest = text[at + len..].trim_start_matches([' ', '\t', ':', '*']);
    let line = rest.lines().next().unwrap_or("").trim();
    let line = line.find("I hope").map_or(line, |k| line[..k].trim());
    (!line.is_empty()).then(|| line.to_string())
}

/// The answer a short statement gives (`$5$. I hope`, `The volume of $V$ is 120`,
/// `"$12$ and $13$"`): after its last ` is `, up to the end of its sentence; the text as
/// it is when it is an answer, else its last math span or number, else the text.
fn answer_in(statement: &str) -> Option<String> {
    let s = statement.trim().trim_matches(['"', '*']).trim();
    let s = first_sentence(s);
    let s = after_last_is(s).trim().trim_matches(['"', '*']).trim();
    if strip_delimiters(s).is_empty() {
        return None;
    }
    bare(s).or_else(|| last_math_or_number(s)).or_else(|| Some(s.to_string()))
}

/// Where a statement's answer ends: a full stop, or a clause that explains it.
const SENTENCE_ENDS: [&str; 7] = [". ", ", since ", ", because ", ", which ", " because ", " since ", ", as "];

/// `text` up to the first end of its sentence (see [`SENTENCE_ENDS`]) outside math.
fn first_sentence(text: &str) -> &str {
    let (spans, _) = math_spans(text);
    let outside = |k: &usize| !spans.iter().any(|p| (p.start..p.end).contains(k));
    let end = SENTENCE_ENDS.iter().filter_map(|stop| text.match_indices(stop).map(|(k, _)| k).find(outside)).min();
    end.map_or(text, |k| &text[..k])
}

/// The text after the last ` is ` outside math (`The largest $n$ is 34` -> `34`).
fn after_last_is(text: &str) -> &str {
    let (spans, _) = math_spans(text);
    let at = text
        .match_indices(" is ")
        .map(|(k, _)| k)
        .filter(|k| !spans.iter().any(|p| (p.start..p.end).contains(k)))
        .last();
    at.map_or(text, |k| &text[k + 4..])
}

/// The text itself when it is an answer: no math delimiters inside once the outer ones
/// are stripped, and not prose.
fn bare(text: &str) -> Option<String> {
    let s = strip_delimiters(text);
    // `\$` is a dollar sign, not a delimiter.
    let unescaped = s.replace("\\$", "");
    let delimited = unescaped.contains('$') || ["\\(", "\\)", "\\[", "\\]"].iter().any(|d| unescaped.contains(d));
    // Several lines are a reply, unless delimiters held them (a matrix in `$$`).
    let lines = s.lines().filter(|l| !l.trim().is_empty()).count();
    if s.is_empty() || delimited || is_prose(&s) || (lines > 1 && s == text.trim()) {
        return None;
    }
    Some(number_then_words(&s).unwrap_or(s))
}

/// `12 apples`, `3 hours ago`: a number followed by plain words is that number.
fn number_then_words(s: &str) -> Option<String> {
    let (number, words) = s.split_once(' ')?;
    let numeric = number
        .trim_start_matches('-')
        .split(['.', ','])
        .all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    let plain = words.split_whitespace().all(|w| w.len() >= 3 && w.bytes().all(|b| b.is_ascii_alphabetic()));
    // `28 percent` keeps its word: a percentage is not the plain number.
    let first = words.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    if matches!(first.as_str(), "percent" | "percentage" | "pct" | "per") {
        return None;
    }
    (numeric && plain && !words.trim().is_empty()).then(|| number.to_string())
}

/// The last math span group or plain-text number, whichever ends later.
fn last_math_or_number(text: &str) -> Option<String> {
    match (last_span_group(text), last_number(text)) {
        (Some(s), Some(n)) => Some(if n.start >= s.end { n.text } else { s.text }),
        (Some(s), None) => Some(s.text),
        (None, Some(n)) => Some(n.text),
        (None, None) => None,
    }
}

/// Strip surrounding `$...$`, `$$...$$`, `\(...\)`, `\[...\]`, markdown bold and a
/// trailing period.
pub(crate) fn strip_delimiters(answer: &str) -> String {
    let mut s = answer.trim();
    // A few rounds cover `**$\(x\)$**.`; a bound keeps `$$$$...` linear.
    for _ in 0..8 {
        let before = s;
        s = s.trim_matches('*').trim();
        s = s.strip_suffix('.').unwrap_or(s).trim();
        for (open, close) in [("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")] {
            if let Some(inner) = s.strip_prefix(open).and_then(|x| x.strip_suffix(close)) {
                s = inner.trim();
            }
        }
        // "$5$." or "is $5$ dollars": a lone leading or trailing dollar sign.
        if s.starts_with('$') && s.matches('$').count() == 1 {
            s = s[1..].trim();
        }
        if s.ends_with('$') && s.matches('$').count() == 1 {
            s = s[..s.len() - 1].trim();
        }
        if s == before {
            break;
        }
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_box_wins_with_nested_braces() {
        let reply = "First \\boxed{1}. Then $\\boxed{\\frac{1}{\\sqrt{2}}}$.";
        assert_eq!(extract_answer(reply).as_deref(), Some("\\frac{1}{\\sqrt{2}}"));
        assert_eq!(extract_answer("so \\fbox{x^{2}} done").as_deref(), Some("x^{2}"));
        assert_eq!(extract_answer("The result is $\\boxed 5$.").as_deref(), Some("5"));
        assert_eq!(extract_answer("\\boxed{\\{1,2\\}}").as_deref(), Some("\\{1,2\\}"));
        assert_eq!(extract_answer("cut \\boxed{\\frac{1}{2").as_deref(), Some("\\frac{1}{2"));
        assert_eq!(extract_answer("\\boxed{\\boxed{7}}").as_deref(), Some("7"));
    }

    #[test]
    fn phrases_then_answer_then_last_line() {
        assert_eq!(extract_answer("Work...\nThe answer is $\\frac{3}{4}$.\nThanks").as_deref(), Some("\\frac{3}{4}"));
        assert_eq!(extract_answer("Final Answer: 12").as_deref(), Some("12"));
        assert_eq!(extract_answer("**Final answer:** \\(x=2\\)").as_deref(), Some("x=2"));
        assert_eq!(extract_answer("steps\nAnswer: (B)\n").as_deref(), Some("(B)"));
        assert_eq!(extract_answer("first line\n  \\[ 42 \\]  \n\n").as_deref(), Some("42"));
        assert_eq!(extract_answer("   \n  "), None);
        assert_eq!(extract_answer("$$"), None);
    }

    #[test]
    fn a_tagged_answer_is_the_answer() {
        let reply = "Sure! Let me work it out.\nThe sum is 7, not 12.\n<answer>\\boxed{\\frac{1}{6}}</answer>\nDone.";
        assert_eq!(extract_answer(reply).as_deref(), Some("\\frac{1}{6}"));
        assert_eq!(extract_answer("<answer> x - 3 </answer>").as_deref(), Some("x - 3"));
    }
}
