//! Reading answers out of prose: math spans (`$..$`, `\(..\)`, `\[..\]`, `$$..$$`) and
//! the words that join several of them, numbers written in plain text, and whether a
//! text is prose at all or already an answer.

use super::normalize::UNIT_WORDS;

/// A piece of a reply: where it is and the answer text it gives.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Piece {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Well-formed math spans, and the byte ranges of malformed inline math (`$` or `\(`
/// closed on another line), whose contents are not read as answers. Display math
/// (`$$`, `\[`) may span lines; inline math may not.
pub(crate) fn math_spans(text: &str) -> (Vec<Piece>, Vec<(usize, usize)>) {
    let mut spans = Vec::new();
    let mut malformed = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let (open, close, display) = if rest.starts_with("\\$") {
            i += 2;
            continue;
        } else if rest.starts_with("$$") {
            ("$$", "$$", true)
        } else if rest.starts_with('$') {
            ("$", "$", false)
        } else if rest.starts_with("\\(") {
            ("\\(", "\\)", false)
        } else if rest.starts_with("\\[") {
            ("\\[", "\\]", true)
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let body_start = i + open.len();
        let Some(len) = find_close(&text[body_start..], close) else {
            i = body_start;
            continue;
        };
        let body = &text[body_start..body_start + len];
        let end = body_start + len + close.len();
        if !display && body.contains('\n') {
            malformed.push((i, end));
        } else if !body.trim().is_empty() {
            spans.push(Piece { start: i, end, text: body.trim().to_string() });
        }
        i = end;
    }
    (spans, malformed)
}

/// Where `close` first occurs in `body` (an escaped `\$` does not close a `$`).
fn find_close(body: &str, close: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = body[from..].find(close).map(|k| k + from) {
        if close.starts_with('$') && at > 0 && body.as_bytes()[at - 1] == b'\\' {
            from = at + 1;
            continue;
        }
        return Some(at);
    }
    None
}

/// `\text{...}`-like commands whose braces hold words that are not prose.
const TEXT_COMMANDS: [&str; 9] = [
    "\\text{",
    "\\textbf{",
    "\\textit{",
    "\\textrm{",
    "\\textnormal{",
    "\\mbox{",
    "\\mathrm{",
    "\\operatorname{",
    "\\mathbf{",
];

/// The text between two boxes or spans joins them into one answer: empty (for boxes),
/// a comma or semicolon, or a few words with `and` / `or` (`\quad \text{and} \quad`,
/// `papers and`, `\text{ for part (a) and }`) — not a sentence, not other symbols.
pub(crate) fn joins(gap: &str, allow_empty: bool) -> bool {
    let mut g = gap.to_string();
    for cmd in TEXT_COMMANDS {
        g = g.replace(cmd, " ");
    }
    for noise in ["\\qquad", "\\quad", "\\(", "\\)", "\\[", "\\]", "\\,", "\\;", "\\ ", "\\!", "$", "~", "{", "}", "**"]
    {
        g = g.replace(noise, " ");
    }
    if g.len() > 60 {
        return false;
    }
    let words: Vec<&str> =
        g.split(|c: char| c.is_whitespace() || c == ',' || c == ';').filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return allow_empty || g.contains([',', ';']);
    }
    let connector = words.iter().any(|w| w.eq_ignore_ascii_case("and") || w.eq_ignore_ascii_case("or"));
    // A comma and the next value's name: `$x=\boxed{1}$, $x=\boxed{2}$`.
    if !connector && g.contains([',', ';']) {
        let name = match words[..] {
            [one] => one.to_string(),
            [name, "="] => format!("{name}="),
            _ => return false,
        };
        let label = name.strip_suffix('=').unwrap_or("");
        return !label.is_empty()
            && label.len() <= 4
            && label.starts_with(|c: char| c.is_ascii_alphabetic())
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '\'');
    }
    // Names of the values are fine (`\boxed{1} and y_2 = \boxed{2}`).
    connector
        && words.len() <= 6
        && words.iter().all(|w| w.chars().all(|c| c.is_alphanumeric() || "()'._=".contains(c)))
}

/// The last run of math spans joined by [`joins`] (`$12$ and $13$`), as one answer.
pub(crate) fn last_span_group(text: &str) -> Option<Piece> {
    let (spans, _) = math_spans(text);
    let last = spans.last()?;
    let mut first = spans.len() - 1;
    while first > 0 && joins(&text[spans[first - 1].end..spans[first].start], false) {
        first -= 1;
    }
    let parts: Vec<&str> = spans[first..]
        .iter()
        .map(|p| p.text.trim_end_matches([',', '.', ';']).trim())
        .filter(|t| !t.is_empty())
        .collect();
    Some(Piece { start: spans[first].start, end: last.end, text: parts.join(", ") })
}

/// The last number written in plain text, outside math spans: `1,000.99`, `2,74`,
/// `2/3`, `100%`, `-5` (a number glued to a letter before it, as in `AZYUK2A`, is not one).
pub(crate) fn last_number(text: &str) -> Option<Piece> {
    let (spans, malformed) = math_spans(text);
    let inside = |i: usize| {
        spans.iter().map(|p| (p.start, p.end)).chain(malformed.iter().copied()).any(|(a, b)| (a..b).contains(&i))
    };
    let bytes = text.as_bytes();
    let mut found = None;
    let mut i = 0;
    while i < bytes.len() {
        let starts =
            bytes[i].is_ascii_digit() || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        let free = i == 0 || {
            let prev = text[..i].chars().next_back().unwrap_or(' ');
            prev.is_whitespace() || "=(:$€£¥[\"'*".contains(prev)
        };
        if starts && free && !inside(i) {
            let end = number_end(bytes, i);
            found = Some(tuple_around(text, i, end).unwrap_or_else(|| Piece {
                start: i,
                end,
                text: text[i..end].to_string(),
            }));
            i = found.as_ref().map_or(end, |p| p.end.max(end));
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    found
}

/// `(2, 3)` or `[0, 1)` written in plain text around the number at `start..end`.
fn tuple_around(text: &str, start: usize, end: usize) -> Option<Piece> {
    let numeric = |c: char| c.is_ascii_digit() || " .,-/".contains(c);
    let open = text[..start].rfind(|c: char| !numeric(c))?;
    let close = end + text[end..].find(|c: char| !numeric(c))?;
    let (o, c) = (text.as_bytes()[open], text.as_bytes()[close]);
    // Brackets first: they are ASCII, so the slices below fall on character boundaries.
    if !(b"([".contains(&o) && b")]".contains(&c)) {
        return None;
    }
    let inner = &text[open + 1..close];
    inner.contains(',').then(|| Piece { start: open, end: close + 1, text: text[open..=close].to_string() })
}

/// The end of the number starting at `i`: digits, `,ddd` groups or one `,d+` (a decimal
/// comma), `.d+`, then ` / d+` and a percent sign or word.
fn number_end(b: &[u8], i: usize) -> usize {
    let digits = |mut k: usize| {
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        k
    };
    let mut k = digits(if b[i] == b'-' { i + 1 } else { i });
    while k + 1 < b.len() && b[k] == b',' && b[k + 1].is_ascii_digit() {
        let next = digits(k + 1);
        let group = next - k - 1;
        k = next;
        if group != 3 {
            break;
        }
    }
    if k + 1 < b.len() && b[k] == b'.' && b[k + 1].is_ascii_digit() {
        k = digits(k + 1);
    }
    let mut j = k;
    while j < b.len() && b[j] == b' ' {
        j += 1;
    }
    if j + 1 < b.len() && b[j] == b'/' {
        let mut d = j + 1;
        while d < b.len() && b[d] == b' ' {
            d += 1;
        }
        if d < b.len() && b[d].is_ascii_digit() {
            k = digits(d);
            j = k;
        }
    }
    for percent in ["%", "percent", "per cent", "pct"] {
        if b[j..].starts_with(percent.as_bytes()) {
            return j + percent.len();
        }
    }
    k
}

/// Words that are not prose in an answer: joining words and function names.
const ANSWER_WORDS: [&str; 14] =
    ["and", "or", "sin", "cos", "tan", "sec", "csc", "cot", "log", "exp", "arcsin", "arccos", "arctan", "mod"];

/// Whether `text` reads as prose rather than an answer: two or more words of three
/// letters or more that are not commands, function names or `\text{}` contents, or one
/// such word beside a unit (`It takes 8 hours`; `15 cm` alone is an answer).
pub(crate) fn is_prose(text: &str) -> bool {
    let mut t = text.to_string();
    for cmd in TEXT_COMMANDS.iter().chain(&["\\begin{", "\\end{"]) {
        while let Some(at) = t.find(cmd) {
            let body = at + cmd.len();
            let len = super::normalize::group_len(&t[body..]).unwrap_or(t.len() - body);
            let end = (body + len + 1).min(t.len());
            t.replace_range(at..end, " ");
        }
    }
    let bytes = t.as_bytes();
    // Units count only beside a word (`It takes 8 hours`, not `15 cm`).
    let (mut words, mut units) = (0, 0);
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let word = t[start..i].to_ascii_lowercase();
        let command = start > 0 && bytes[start - 1] == b'\\';
        if command || word.len() < 3 || ANSWER_WORDS.contains(&word.as_str()) {
            continue;
        }
        if UNIT_WORDS.contains(&word.as_str()) {
            units += 1;
        } else {
            words += 1;
        }
    }
    words >= 2 || (words == 1 && units >= 1)
}
