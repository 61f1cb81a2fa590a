//! Text keys for the memory: the normalised form two entries must share to be the same
//! entry, and the keyword sets whose Jaccard similarity decides merges and retrieval.
//!
//! Everything here is linear in the text's length, and the text is capped by
//! [`super::MemoryParams::max_content_chars`], so no key costs more than a bounded scan.

use std::collections::BTreeSet;

/// Words too common to say what an entry is about.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one", "our", "out",
    "has", "have", "his", "how", "its", "may", "who", "did", "get", "got", "let", "say", "she", "too", "use", "with",
    "this", "that", "from", "they", "them", "then", "than", "there", "their", "these", "those", "into", "onto", "over",
    "when", "what", "which", "while", "where", "will", "would", "should", "could", "been", "being", "were", "each",
    "such", "only", "also", "some", "very", "just", "more", "most", "other", "about", "after", "before", "does",
];

/// Lower case, punctuation removed, whitespace collapsed to single spaces: two contents
/// with the same normal form are the same entry ("Check  the sign!" = "check the sign").
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else if c.is_alphanumeric() {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.extend(c.to_lowercase());
        }
        // Punctuation and symbols are dropped without splitting the word around them.
    }
    out
}

/// A stable 64-bit hash of the normal form (FNV-1a): the same on every platform and in
/// every run, unlike `std`'s randomly seeded hasher.
pub fn content_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in normalize(text).bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The keywords of a text: its lower-case words (runs of letters) of at least three
/// letters, minus [`STOP_WORDS`].
pub fn keywords(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Words every kind of problem uses (what it asks for, how the answer is written, the
/// markup of its formulas): sharing them says nothing about what two problems are about.
const GENERIC_WORDS: &[&str] = &[
    "find",
    "compute",
    "calculate",
    "determine",
    "evaluate",
    "express",
    "answer",
    "answers",
    "value",
    "values",
    "number",
    "numbers",
    "real",
    "given",
    "show",
    "many",
    "much",
    "result",
    "form",
    "simplest",
    "write",
    "written",
    "common",
    "positive",
    "negative",
    "integer",
    "integers",
    "whole",
    "least",
    "greatest",
    "sum",
    "total",
    "frac",
    "dfrac",
    "tfrac",
    "sqrt",
    "cdot",
    "times",
    "text",
    "left",
    "right",
    "infty",
    "mathrm",
    "approach",
    "error",
    "track",
    "step",
    "steps",
    "check",
    "here",
    "give",
    "your",
    "ways",
    "possible",
    "inclusive",
];

/// The keywords of `text` that say what it is about: [`keywords`] without the
/// [`GENERIC_WORDS`] every problem and every lesson uses.
pub fn topic_words(text: &str) -> BTreeSet<String> {
    let mut words = keywords(text);
    words.retain(|w| !GENERIC_WORDS.contains(&w.as_str()));
    words
}

/// |a ∩ b| / |a ∪ b|; 0 when both are empty (two texts with no keywords are not alike).
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let shared = a.intersection(b).count();
    let union = a.len() + b.len() - shared;
    if union == 0 {
        0.0
    } else {
        shared as f64 / union as f64
    }
}

/// The share of the query's keywords an entry has: |q ∩ e| / |q|; 0 for an empty query.
pub fn overlap(query: &BTreeSet<String>, entry: &BTreeSet<String>) -> f64 {
    if query.is_empty() {
        return 0.0;
    }
    query.intersection(entry).count() as f64 / query.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_forms_ignore_case_punctuation_and_spacing() {
        assert_eq!(normalize("  Check the SIGN,  before\tdividing! "), "check the sign before dividing");
        assert_eq!(normalize("don't"), "dont");
        assert_eq!(content_hash("Check the sign."), content_hash("check   the sign"));
        assert_ne!(content_hash("check the sign"), content_hash("check the signs"));
    }

    #[test]
    fn keywords_are_words_of_three_letters_or_more_without_stop_words() {
        let k = keywords("The sum of x^2 and 2x is AT most 10; check it: factor!");
        let got: Vec<&str> = k.iter().map(String::as_str).collect();
        assert_eq!(got, ["check", "factor", "sum"]);
    }

    #[test]
    fn jaccard_and_overlap() {
        let a = keywords("alpha beta gamma delta");
        let b = keywords("alpha beta gamma epsilon");
        assert!((jaccard(&a, &b) - 3.0 / 5.0).abs() < 1e-12);
        assert_eq!(jaccard(&keywords(""), &keywords("")), 0.0);
        assert!((overlap(&keywords("alpha zeta"), &a) - 0.5).abs() < 1e-12);
        assert_eq!(overlap(&keywords(""), &a), 0.0);
    }
}
