//! Text helpers shared by the knowledge backends: sentence splitting, title keys and
//! the token-overlap score behind "Similar: [...]".

/// Words that end with a period without ending a sentence.
const ABBREVIATIONS: [&str; 44] = [
    "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "ft", "ave", "rd", "no", "vol", "vols", "ch", "fig",
    "gen", "col", "lt", "sgt", "capt", "cmdr", "rev", "gov", "sen", "rep", "hon", "inc", "ltd", "co", "corp", "vs",
    "etc", "approx", "ca", "cf", "jan", "feb", "aug", "sept", "oct", "nov", "dec",
];

/// Split text into sentences. Paragraphs (lines) never join; MediaWiki section headings
/// (`== History ==`) and Markdown headings are dropped. A period does not end a sentence
/// after a known abbreviation ("Dr.", "St."), an initial ("J."), a dotted abbreviation
/// ("U.S.", "e.g.") or when the next word starts in lower case.
pub fn split_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("==") || line.starts_with('#') {
            continue;
        }
        split_line(line, &mut out);
    }
    out
}

fn split_line(line: &str, out: &mut Vec<String>) {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let mut start = 0;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        // Closing quotes or brackets right after the mark belong to the sentence.
        let mut end_k = k + 1;
        while end_k < chars.len() && matches!(chars[end_k].1, '"' | '\'' | ')' | '”' | '’') {
            end_k += 1;
        }
        let Some(&(_, after)) = chars.get(end_k) else { continue };
        if !after.is_whitespace() {
            continue;
        }
        let next = chars[end_k..].iter().map(|&(_, c)| c).find(|c| !c.is_whitespace());
        let starts_new = next.is_some_and(|n| n.is_uppercase() || n.is_ascii_digit() || matches!(n, '"' | '“' | '('));
        if !starts_new || (c == '.' && is_abbreviation(&line[start..i])) {
            continue;
        }
        let end = chars.get(end_k).map_or(line.len(), |&(j, _)| j);
        push_sentence(&line[start..end], out);
        start = end;
    }
    push_sentence(&line[start..], out);
}

fn push_sentence(s: &str, out: &mut Vec<String>) {
    let s = s.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
}

/// Whether the word just before a period (`before` ends right before it) is an abbreviation.
fn is_abbreviation(before: &str) -> bool {
    let word = before.rsplit(|c: char| c.is_whitespace() || c == '(').next().unwrap_or("");
    if word.is_empty() {
        return false;
    }
    // "U.S", "e.g", "Ph.D": dotted abbreviations.
    if word.contains('.') && word.chars().any(char::is_alphabetic) && word.split('.').all(|p| p.chars().count() <= 2) {
        return true;
    }
    let mut chars = word.chars();
    // A single capital letter is an initial ("J. R. Fenwick").
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_uppercase() {
            return true;
        }
    }
    ABBREVIATIONS.contains(&word.to_lowercase().as_str())
}

/// The key titles are compared by: lower case, underscores and punctuation as spaces,
/// single spaces ("Sable_Bridge", "sable bridge!" and "Sable  Bridge" are one key).
pub fn title_key(title: &str) -> String {
    let mapped: String =
        title.chars().map(|c| if c.is_alphanumeric() { c.to_lowercase().next().unwrap_or(c) } else { ' ' }).collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

const STOPWORDS: [&str; 12] = ["the", "a", "an", "of", "in", "on", "and", "at", "to", "for", "by", "de"];

/// Content words of a title or query, as keys.
pub fn tokens(text: &str) -> Vec<String> {
    let key = title_key(text);
    let mut out: Vec<String> = Vec::new();
    for t in key.split(' ') {
        if !t.is_empty() && !STOPWORDS.contains(&t) && !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    out
}

/// How well a page matches a query: query words in the title count three times as much as
/// query words in the body.
pub fn overlap_score(query: &[String], title: &[String], body: &std::collections::HashSet<String>) -> u32 {
    query
        .iter()
        .map(|q| {
            if title.contains(q) {
                3
            } else if body.contains(q) {
                1
            } else {
                0
            }
        })
        .sum()
}

/// The first `n` sentences, joined the way the ReAct paper shows a page.
pub fn first_sentences(sentences: &[String], n: usize) -> String {
    sentences.iter().take(n).cloned().collect::<Vec<_>>().join(" ")
}
