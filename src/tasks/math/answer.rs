//! Reading answers out of replies: the free answer of a math reply (through
//! `crate::grade`), a ReAct `finish[...]`, and the option letter of a multiple-choice
//! reply the way MMLU-Pro's evaluation reads it. Also the option lines of a
//! multiple-choice input. Everything here is linear in the text it reads.

/// The option letters, in order.
pub const LETTERS: [char; 10] = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J'];

/// Most options a question may have.
pub const MAX_OPTIONS: usize = LETTERS.len();

/// The letter of option `i` (0-based); past J, `?`.
pub fn letter(i: usize) -> char {
    LETTERS.get(i).copied().unwrap_or('?')
}

/// The last `max` bytes of `text` (at a character boundary).
pub fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// `text` cut to about `n` characters, for messages.
pub fn clip(text: &str, n: usize) -> String {
    let mut out: String = text.chars().take(n).collect();
    if text.chars().count() > n {
        out.push('…');
    }
    out
}

/// The argument of the last `finish[...]` action in a ReAct trajectory (any case),
/// up to its last `]`, so bracketed answers such as `[2, 5)` survive.
pub fn finish_arg(y: &str) -> Option<String> {
    y.lines().rev().find_map(|line| {
        let t = line.trim_start();
        let lower = t.to_ascii_lowercase();
        if !lower.starts_with("action") {
            return None;
        }
        let at = lower.find("finish[")?;
        let rest = &t[at + "finish[".len()..];
        Some(rest.rsplit_once(']').map_or(rest, |(a, _)| a).trim().to_string())
    })
}

/// The argument of a ReAct reply's action if that action is `finish[...]` (its first
/// action line, before any observation), read to the line's last `]`.
pub fn first_finish(reply: &str) -> Option<String> {
    for line in reply.lines() {
        let t = line.trim_start().trim_start_matches(['*', '#', '-', '>', ' ']);
        let lower = t.to_ascii_lowercase();
        if lower.starts_with("observation") {
            return None;
        }
        if !lower.starts_with("action") {
            continue;
        }
        let at = lower.find("finish[")?;
        // Only when finish is the action itself, right after the label.
        let label = lower[..at].trim_end();
        if !label.trim_start_matches("action").trim().trim_end_matches(':').trim().chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let rest = &t[at + "finish[".len()..];
        return Some(rest.rsplit_once(']').map_or(rest, |(a, _)| a).trim().to_string());
    }
    None
}

/// The final answer of a free-form math reply, as the grader extracts it; if what it
/// gives is still wrapped in `\boxed{...}`, the content.
pub fn math_answer(reply: &str) -> Option<String> {
    let got = crate::grade::extract_answer(reply)?;
    Some(last_boxed(&got).unwrap_or(got))
}

/// The content of the last `\boxed{...}` or `\fbox{...}` in `text`, braces matched.
pub fn last_boxed(text: &str) -> Option<String> {
    let at = ["\\boxed{", "\\fbox{"].iter().filter_map(|m| text.rfind(m).map(|i| i + m.len())).max()?;
    let mut depth = 1usize;
    for (i, c) in text[at..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(text[at..at + i].trim().to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// The option letter a multiple-choice reply gives, read as MMLU-Pro's evaluation reads
/// it: the first `answer is \(?([A-J])\)?`; else the first line with
/// `[aA]nswer:\s*([A-J])` (its last such match); else the last standalone letter among
/// the `n` offered ones.
pub fn choice_letter(reply: &str, n: usize) -> Option<char> {
    answer_is(reply).or_else(|| answer_colon(reply)).or_else(|| last_standalone(reply, n))
}

fn is_letter(c: char) -> bool {
    ('A'..='J').contains(&c)
}

/// `answer is \(?([A-J])\)?`, first match.
fn answer_is(text: &str) -> Option<char> {
    text.match_indices("answer is ").find_map(|(at, m)| {
        let mut rest = text[at + m.len()..].chars();
        let c = rest.next()?;
        let c = if c == '(' { rest.next()? } else { c };
        is_letter(c).then_some(c)
    })
}

/// `.*[aA]nswer:\s*([A-J])` as Python's `re.search` finds it: the first line that has a
/// match, and on it the last one (`.*` is greedy and stops at a newline; `\s*` does not).
fn answer_colon(text: &str) -> Option<char> {
    let mut line_start = 0;
    for line in text.split('\n') {
        let mut found = None;
        for (at, _) in line.match_indices("nswer:") {
            if at == 0 || !matches!(line.as_bytes()[at - 1], b'a' | b'A') {
                continue;
            }
            let after = &text[line_start + at + "nswer:".len()..];
            if let Some(c) = after.trim_start().chars().next().filter(|&c| is_letter(c)) {
                found = Some(c);
            }
        }
        if found.is_some() {
            return found;
        }
        line_start += line.len() + 1;
    }
    None
}

/// The last `\b[A-J]\b` among the first `n` letters.
fn last_standalone(text: &str, n: usize) -> Option<char> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).rev().find_map(|i| {
        let c = chars[i];
        let offered = LETTERS.iter().take(n).any(|&l| l == c);
        let before = i.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i + 1).copied();
        (offered && !word(before) && !word(after)).then_some(c)
    })
}

/// A multiple-choice input split into its question and its options: the trailing lines
/// `A. ...`, `B. ...` (consecutive letters from A; `A)` is read too).
pub fn split_options(input: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = input.trim().lines().collect();
    // Walk back over option lines; they must run A, B, C, ... from where they start.
    let mut start = lines.len();
    while start > 0 && option_line(lines[start - 1]).is_some() {
        start -= 1;
    }
    let mut options = Vec::new();
    let mut first = start;
    for (k, line) in lines[start..].iter().enumerate() {
        match option_line(line) {
            Some((c, text)) if c == letter(options.len()) => options.push(text.to_string()),
            // A run that does not start at A (or skips a letter): only its tail from the last A counts.
            Some(('A', text)) => {
                options = vec![text.to_string()];
                first = start + k;
            }
            _ => {
                options.clear();
                first = lines.len();
            }
        }
    }
    if options.len() > MAX_OPTIONS {
        options.truncate(MAX_OPTIONS);
    }
    let question = lines[..first].join("\n").trim().to_string();
    if options.is_empty() {
        return (input.trim().to_string(), options);
    }
    (question, options)
}

/// `A. text` or `A) text` → ('A', "text").
fn option_line(line: &str) -> Option<(char, &str)> {
    let line = line.trim();
    let mut chars = line.chars();
    let c = chars.next().filter(|&c| is_letter(c))?;
    let sep = chars.next()?;
    if sep != '.' && sep != ')' {
        return None;
    }
    let rest = &line[2..];
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    Some((c, rest.trim()))
}

/// The input text of a multiple-choice question: the question, then `A. option` lines.
pub fn join_options(question: &str, options: &[String]) -> String {
    let mut out = question.trim().to_string();
    out.push('\n');
    for (i, o) in options.iter().enumerate() {
        // One line each: an option's own line breaks become spaces.
        let one_line: Vec<&str> = o.split_whitespace().collect();
        out.push_str(&format!("\n{}. {}", letter(i), one_line.join(" ")));
    }
    out
}
