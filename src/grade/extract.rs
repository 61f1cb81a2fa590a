//! The final answer a model reply states: the last `\boxed{}`/`\fbox{}`, else "the answer
//! is X" / "final answer: X", else "Answer: X", else the last non-empty line.

/// The final answer in `reply`, with maths delimiters and a trailing period stripped;
/// `None` when the reply states nothing.
pub fn extract_answer(reply: &str) -> Option<String> {
    let raw = last_boxed(reply)
        .or_else(|| after_phrase(reply, &["the answer is", "final answer is", "final answer:", "final answer"]))
        .or_else(|| after_phrase(reply, &["answer:"]))
        .or_else(|| reply.lines().rev().map(str::trim).find(|l| !l.is_empty()).map(str::to_string))?;
    let answer = strip_delimiters(&raw);
    (!answer.is_empty()).then_some(answer)
}

/// Whether `text` holds a `\boxed`/`\fbox` (a MATH solution rather than a bare answer).
pub(crate) fn has_box(text: &str) -> bool {
    find_box_commands(text).next().is_some()
}

/// Byte offsets just after each `\boxed` / `\fbox` command name (not `\boxedx`).
fn find_box_commands(text: &str) -> impl Iterator<Item = usize> + '_ {
    ["\\boxed", "\\fbox"].into_iter().flat_map(move |cmd| {
        text.match_indices(cmd).filter_map(move |(i, _)| {
            let end = i + cmd.len();
            let next = text[end..].chars().next();
            (!next.is_some_and(|c| c.is_ascii_alphabetic())).then_some(end)
        })
    })
}

/// The contents of the last `\boxed{...}` (nested braces kept), or of `\boxed 5`.
fn last_boxed(text: &str) -> Option<String> {
    let start = find_box_commands(text).max()?;
    let rest = text[start..].trim_start();
    if let Some(body) = rest.strip_prefix('{') {
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
                        return Some(body[..i].to_string());
                    }
                }
                _ => {}
            }
        }
        // Unbalanced (a reply cut off mid-answer): take what there is.
        Some(body.to_string())
    } else {
        // `\boxed 5`: up to the closing `$` or the end of the line.
        let end = rest.find(['$', '\n']).unwrap_or(rest.len());
        Some(rest[..end].to_string())
    }
}

/// The rest of the line after the last occurrence of any of `phrases` (ASCII, matched
/// case-insensitively).
fn after_phrase(text: &str, phrases: &[&str]) -> Option<String> {
    // ASCII lowercasing keeps byte offsets.
    let lower = text.to_ascii_lowercase();
    let (at, len) =
        phrases.iter().filter_map(|p| lower.rfind(p).map(|i| (i, p.len()))).max_by_key(|&(i, len)| (i, len))?;
    let rest = &text[at + len..];
    let rest = rest.trim_start_matches([' ', '\t', ':', '*']);
    let line = rest.lines().next().unwrap_or("").trim();
    (!line.is_empty()).then(|| line.to_string())
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
}
