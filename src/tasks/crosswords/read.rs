//! Reading what a model writes about a crossword: proposals with confidences (summed
//! over samples), the evaluator's verdict per clue, and a whole board from an IO or
//! CoT reply. Each follows the reference implementation's reading.

use super::board::{clue_index, clue_label, Board, BLANK, SIZE};

/// What each confidence adds to a candidate's score (the reference's table).
pub const CONFIDENCES: [(&str, f64); 4] = [("certain", 1.0), ("high", 0.5), ("medium", 0.2), ("low", 0.1)];

/// The evaluator's verdicts, lowest first, with the value each adds.
pub const VERDICTS: [(&str, f64); 3] = [("impossible", 0.0), ("maybe", 1.0), ("sure", 2.0)];

/// One proposal line, `h1. apple (medium)` (anything may follow the parenthesis):
/// the move as `h1. apple` and its confidence's value. Other lines are not proposals.
pub fn proposal_line(line: &str) -> Option<(String, f64)> {
    let line = line.trim();
    let (label, rest) = line.split_once(". ")?;
    if label.len() != 2 || !label.starts_with(['h', 'v']) {
        return None;
    }
    let clue = clue_index(label)?;
    let word = rest.get(..SIZE)?;
    if !word.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let rest = rest[SIZE..].strip_prefix(" (")?;
    let (confidence, _) = rest.split_once(')')?;
    let value = CONFIDENCES.iter().find(|(name, _)| *name == confidence)?.1;
    Some((format!("{}. {}", clue_label(clue), word.to_ascii_lowercase()), value))
}

/// Candidates of several samples, each with its confidences summed over the samples,
/// best first; ties keep the order candidates were first seen (a stable sort).
pub fn merge_proposals<S: AsRef<str>>(replies: &[S]) -> Vec<(String, f64)> {
    let mut scored: Vec<(String, f64)> = Vec::new();
    for reply in replies {
        for (action, value) in reply.as_ref().lines().filter_map(proposal_line) {
            match scored.iter_mut().find(|(a, _)| *a == action) {
                Some((_, total)) => *total += value,
                None => scored.push((action, value)),
            }
        }
    }
    scored.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    scored
}

/// The verdicts of one evaluator reply: for each line that starts with a clue label,
/// the clue and the last verdict word on the line.
pub fn verdicts(reply: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for line in reply.lines() {
        let line = line.trim().trim_start_matches(['-', '*', ' ']);
        let Some(label) = line.get(..2) else { continue };
        let Some(clue) = clue_index(label) else { continue };
        if line[2..].starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let words: Vec<String> = line[2..]
            .split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .collect();
        let verdict = words.iter().rev().find_map(|w| VERDICTS.iter().find(|(v, _)| v == w).map(|(v, _)| *v));
        if let Some(verdict) = verdict {
            if !out.iter().any(|(c, _)| *c == clue) {
                out.push((clue, verdict));
            }
        }
    }
    out
}

/// The board a whole IO or CoT reply writes, as the reference reads it: the last five
/// lines after the last `Output:`, the first five space-separated tokens of each joined
/// and padded with `_` to five letters (a row longer than five stays blank, as the
/// reference's environment refuses it); missing rows are blank.
pub fn board_of_reply(reply: &str) -> Board {
    let after = reply.rsplit("Output:\n").next().unwrap_or(reply);
    let lines: Vec<&str> = after.trim().split('\n').collect();
    let last = &lines[lines.len().saturating_sub(SIZE)..];
    let mut cells = [BLANK; SIZE * SIZE];
    for (r, line) in last.iter().enumerate() {
        let joined: String = line.split(' ').take(SIZE).collect();
        // The reference's `step` refuses a word longer than five: the row stays blank.
        if joined.chars().count() > SIZE {
            continue;
        }
        for (k, c) in joined.chars().enumerate() {
            cells[r * SIZE + k] = if c.is_ascii() { c.to_ascii_uppercase() as u8 } else { b'?' };
        }
    }
    Board::from_letters(&cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proposal_lines_follow_the_reference_pattern() {
        assert_eq!(proposal_line("h1. Apple (high) because"), Some(("h1. apple".into(), 0.5)));
        assert_eq!(proposal_line("v5. tasks (certain)"), Some(("v5. tasks".into(), 1.0)));
        for bad in ["h1. appl (high)", "h1. apples (high)", "h6. apple (low)", "h1. apple (sure)", "h1 apple (low)"] {
            assert_eq!(proposal_line(bad), None, "{bad}");
        }
    }

    #[test]
    fn verdicts_take_the_last_class_word_of_each_clue_line() {
        let v = verdicts("h1. agend: sure\nv2. A gadget: g _ _ _ _: maybe\nnoise impossible\nh3: impossible");
        assert_eq!(v, vec![(0, "sure"), (6, "maybe"), (2, "impossible")]);
    }
}
