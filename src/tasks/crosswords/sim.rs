//! The simulated model's mini-crossword behaviour: it knows each built-in puzzle's gold
//! board (found from the request's `puzzle` context, an index in `mini0505.json`) and
//! plays from it with seeded mistakes, so a search over crosswords behaves as the
//! paper's did: direct answers get some rows, proposals mix the right word with wrong
//! ones, and the evaluator sometimes misses a wrong letter or doubts a right one.
//!
//! Mistakes (each base rate below is multiplied by `--sim-noise` and by the ratio of
//! the named `--sim-*` rate to its default, so `--sim-noise 0` is a perfect solver):
//! * io / cot (`--sim-io`, `--sim-cot`): each row is wrong with probability 0.75 / 0.72:
//!   a wrong row is another word of the puzzle set (half the time one with the gold
//!   row's first letter), or the gold row with letters changed;
//! * propose (`--sim-slip`): for each clue still open (up to 4, in a seeded order) the
//!   model either knows the word or holds a wrong belief — a five-letter word that fits
//!   the letters on the board (another answer of the puzzle set, or the gold word with
//!   letters changed). Which one is fixed per puzzle, clue and seed, the same in every
//!   sample, so summing samples does not wash it out: a clue is unknown while a uniform
//!   draw is below 0.6 × (1 − right letters on the board / 5), so crossing words help.
//!   Either is offered mostly as certain or high; with probability 0.3 a sample adds
//!   another wrong word (medium or low). A clue whose letters contradict the gold word
//!   gets only wrong words that fit them;
//! * value (`--sim-misjudge`): a clue whose letters agree with the gold word is sure
//!   (maybe when it still has three blanks) but judged impossible with probability
//!   0.04; a clue with a wrong letter is impossible with probability 0.75, else maybe.
//!
//! Every choice comes from the seed and the request (see `sim`), never call order.

use serde::Deserialize;

use crate::engine::rng::{stable_hash, SplitMix64};
use crate::engine::sim::{SimConfig, SimRates};
use crate::protocol::{CallError, CallErrorKind, LlmRequest, Purpose};
use crate::tasks::crosswords::board::{accuracy, clue_label, Board, ClueStatus, BLANK, CLUES, SIZE};
use crate::tasks::crosswords::{board_of, judged_clues, puzzles, Puzzle};

const IO_ROW_WRONG: f64 = 0.75;
const COT_ROW_WRONG: f64 = 0.72;
const PROPOSE_UNKNOWN: f64 = 0.6;
const PROPOSE_SLIP: f64 = 0.3;
const PROPOSE_CLUES: usize = 4;
const JUDGE_FALSE_IMPOSSIBLE: f64 = 0.04;
const JUDGE_MISS_WRONG: f64 = 0.25;

/// What a crosswords request's context holds (the task's prompts and the feedback
/// methods write it); a field of the wrong shape is an error naming it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Context {
    /// The built-in puzzle's index in `mini0505.json` (none for a puzzle not built in).
    pub puzzle: Option<u64>,
    /// The board so far, as the prompt shows it.
    pub y: String,
    /// The attempt feedback looks at.
    pub attempt: String,
}

impl Context {
    /// The context of `request`, or the one line that says which field cannot be read.
    pub fn of(request: &LlmRequest) -> Result<Context, CallError> {
        crate::engine::sim::context("crosswords", request)
    }
}

fn bad_request(what: &str) -> CallError {
    CallError { kind: CallErrorKind::Sim, message: format!("crosswords request without {what}") }
}

/// A base rate scaled by the noise dial and by the named rate's ratio to its default.
fn rate(cfg: &SimConfig, base: f64, named: impl Fn(&SimRates) -> f64) -> f64 {
    let default = named(&SimRates::default());
    let ratio = if default > 0.0 { named(&cfg.rates) / default } else { 1.0 };
    (base * ratio * cfg.noise).clamp(0.0, 1.0)
}

pub fn answer(cfg: &SimConfig, request: &LlmRequest, rng: &mut SplitMix64) -> Result<String, CallError> {
    let ctx = Context::of(request)?;
    let index = ctx.puzzle.ok_or_else(|| bad_request("a built-in puzzle"))?;
    let puzzle = puzzles().get(index as usize).ok_or_else(|| bad_request("a built-in puzzle"))?;
    let y = ctx.y.as_str();
    match request.purpose {
        Purpose::Io => Ok(grid_reply(&whole_board(puzzle, rate(cfg, IO_ROW_WRONG, |r| r.io), rng), None)),
        Purpose::Cot | Purpose::Refine => {
            let board = whole_board(puzzle, rate(cfg, COT_ROW_WRONG, |r| r.cot), rng);
            Ok(grid_reply(&board, Some(puzzle)))
        }
        Purpose::Propose | Purpose::Sample => Ok(propose(cfg, index, puzzle, &board_of(y), rng)),
        Purpose::Value => Ok(judge(cfg, puzzle, &board_of(y), rng)),
        Purpose::Feedback => {
            let right = accuracy(&board_of(&ctx.attempt), &puzzle.gold).game;
            let says = right != rng.chance(rate(cfg, 0.33, |r| r.misjudge) / 2.0);
            Ok(format!(
                "I checked each row and column against its clue.\nVERDICT: {}",
                if says { "correct" } else { "incorrect" }
            ))
        }
        Purpose::Reflect => Ok("Some words did not fit their crossing words; next time check every column too.".into()),
        Purpose::Act | Purpose::Vote | Purpose::Judge => Err(CallError {
            kind: CallErrorKind::Sim,
            message: format!("crosswords has no {} requests", request.purpose.label()),
        }),
    }
}

/// Every answer word of the puzzle set (the vocabulary wrong words come from).
fn vocabulary() -> &'static [[u8; SIZE]] {
    static WORDS: std::sync::OnceLock<Vec<[u8; SIZE]>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        let mut words: Vec<[u8; SIZE]> = Vec::new();
        for p in puzzles() {
            let b = Board::from_letters(&p.gold);
            for c in 0..CLUES {
                let w = b.word(c);
                if !words.contains(&w) {
                    words.push(w);
                }
            }
        }
        words
    })
}

/// A five-letter word other than `gold` that keeps the letters of `pattern` (`_` free).
fn wrong_word(gold: [u8; SIZE], pattern: [u8; SIZE], rng: &mut SplitMix64) -> [u8; SIZE] {
    let fits = |w: &[u8; SIZE]| *w != gold && w.iter().zip(pattern).all(|(a, p)| p == BLANK || *a == p);
    let candidates: Vec<&[u8; SIZE]> = vocabulary().iter().filter(|w| fits(w)).collect();
    if !candidates.is_empty() {
        return *candidates[rng.below(candidates.len())];
    }
    // No word of the set fits: change free letters of the gold word (or of the pattern).
    let mut word = gold;
    for (k, p) in pattern.iter().enumerate() {
        if *p != BLANK {
            word[k] = *p;
        }
    }
    let free: Vec<usize> = (0..SIZE).filter(|&k| pattern[k] == BLANK).collect();
    if free.is_empty() {
        return word;
    }
    for _ in 0..(1 + rng.below(2)) {
        let k = free[rng.below(free.len())];
        word[k] = b'A' + rng.below(26) as u8;
    }
    if word == gold {
        let k = free[0];
        word[k] = if gold[k] == b'E' { b'A' } else { b'E' };
    }
    word
}

/// A whole board written at once: each row right, or wrong with probability `wrong`.
fn whole_board(puzzle: &Puzzle, wrong: f64, rng: &mut SplitMix64) -> Board {
    let gold = Board::from_letters(&puzzle.gold);
    let mut cells = puzzle.gold;
    for r in 0..SIZE {
        if rng.chance(wrong) {
            let mut pattern = [BLANK; SIZE];
            if rng.chance(0.5) {
                pattern[0] = gold.word(r)[0];
            }
            let w = wrong_word(gold.word(r), pattern, rng);
            cells[r * SIZE..(r + 1) * SIZE].copy_from_slice(&w);
        }
    }
    Board::from_letters(&cells)
}

/// The grid after `Output:`, letters separated by spaces; CoT replies think first.
fn grid_reply(board: &Board, thoughts_of: Option<&Puzzle>) -> String {
    let mut out = String::new();
    if thoughts_of.is_some() {
        for c in 0..CLUES {
            out.push_str(&format!("{}. {}\n", clue_label(c), board.word_text(c).to_ascii_lowercase()));
        }
        out.push('\n');
    }
    out.push_str("Output:\n");
    for r in 0..SIZE {
        let row: Vec<String> = board.row(r).chars().map(|c| c.to_string()).collect();
        out.push_str(&row.join(" "));
        out.push('\n');
    }
    out
}

fn propose(cfg: &SimConfig, puzzle_index: u64, puzzle: &Puzzle, board: &Board, rng: &mut SplitMix64) -> String {
    let gold = Board::from_letters(&puzzle.gold);
    let mut open: Vec<usize> = (0..CLUES).filter(|&c| board.status[c] != ClueStatus::Filled).collect();
    rng.shuffle(&mut open);
    let unknown = rate(cfg, PROPOSE_UNKNOWN, |r| r.slip);
    let slip = rate(cfg, PROPOSE_SLIP, |r| r.slip);
    let mut lines = Vec::new();
    for c in open.into_iter().take(PROPOSE_CLUES) {
        let pattern = board.word(c);
        let target = gold.word(c);
        let right_letters = pattern.iter().zip(target).filter(|(p, g)| **p == *g).count();
        let contradicted = pattern.iter().zip(target).any(|(p, g)| *p != BLANK && *p != g);
        // What the model believes about this clue is the same in every sample of a call
        // (and across calls): seeded by the puzzle and the clue, not the sample.
        let mut belief = SplitMix64::from_parts(&[cfg.seed, puzzle_index, c as u64, stable_hash(&pattern)]);
        let fixed = SplitMix64::from_parts(&[cfg.seed, puzzle_index, c as u64]).next_f64();
        let knows = !contradicted && fixed >= unknown * (1.0 - right_letters as f64 / SIZE as f64);
        if knows {
            let confidence = ["certain", "certain", "high", "medium"][rng.below(4)];
            lines.push(line(c, target, confidence));
            if rng.chance(slip) {
                lines.push(line(c, wrong_word(target, pattern, rng), ["medium", "low"][rng.below(2)]));
            }
        } else {
            let believed = wrong_word(target, pattern, &mut belief);
            lines.push(line(c, believed, ["certain", "high", "high", "medium"][rng.below(4)]));
            if rng.chance(slip) {
                lines.push(line(c, wrong_word(target, pattern, rng), ["medium", "low"][rng.below(2)]));
            }
        }
    }
    lines.join("\n")
}

fn line(clue: usize, word: [u8; SIZE], confidence: &str) -> String {
    format!("{}. {} ({confidence})", clue_label(clue), String::from_utf8_lossy(&word).to_ascii_lowercase())
}

fn judge(cfg: &SimConfig, puzzle: &Puzzle, board: &Board, rng: &mut SplitMix64) -> String {
    let gold = Board::from_letters(&puzzle.gold);
    let false_impossible = rate(cfg, JUDGE_FALSE_IMPOSSIBLE, |r| r.misjudge);
    let miss = rate(cfg, JUDGE_MISS_WRONG, |r| r.misjudge);
    let mut lines = Vec::new();
    for c in judged_clues(board) {
        let letters = board.word(c);
        let blanks = letters.iter().filter(|&&b| b == BLANK).count();
        let agrees = letters.iter().zip(gold.word(c)).all(|(l, g)| *l == BLANK || *l == g);
        let verdict = if agrees {
            if rng.chance(false_impossible) {
                "impossible"
            } else if blanks >= 3 {
                "maybe"
            } else {
                "sure"
            }
        } else if rng.chance(miss) {
            "maybe"
        } else {
            "impossible"
        };
        let shown: Vec<String> = letters.iter().map(|&b| (b as char).to_ascii_lowercase().to_string()).collect();
        lines.push(format!("{}. {}: {verdict}", clue_label(c), shown.join(" ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::context_testing::{self, assert_bad_contexts_refused};
    use crate::engine::{Feedback, Task};
    use crate::tasks::crosswords::Crosswords;
    use crate::tasks::TaskSource;

    fn ask(request: &LlmRequest) -> Result<String, CallError> {
        context_testing::ask(answer, request)
    }

    /// Every prompt the task writes is read by the typed context, field by field; a
    /// context of the wrong shape is an error naming the field, never a silent default.
    #[test]
    fn the_tasks_prompts_are_read_by_the_typed_context() {
        let task = Crosswords::builtin();
        let x = task.problem(1).unwrap().input;
        let tree = task.tree().expect("crosswords searches trees");
        let propose = context_testing::request(tree.propose_prompt(&x, ""));
        let ctx = Context::of(&propose).unwrap();
        assert_eq!((ctx.puzzle, ctx.y.as_str()), (Some(5), ""), "the test set is every fifth puzzle");
        assert!(ask(&propose).is_ok());
        for prompt in [task.io_prompt(&x), task.cot_prompt(&x)] {
            let request = context_testing::request(prompt);
            assert_eq!(Context::of(&request).unwrap().puzzle, Some(5));
            assert!(ask(&request).unwrap().lines().count() >= 5, "a whole board");
        }
        let feedback = context_testing::request(task.feedback_prompt(&x, "AGEND\nMOTOR"));
        assert_eq!(Context::of(&feedback).unwrap().attempt, "AGEND\nMOTOR");
        assert!(ask(&feedback).unwrap().contains("VERDICT: "));
        let bad = [
            (serde_json::json!({"puzzle": "5"}), "field \"puzzle\": invalid type: string \"5\", expected u64"),
            (serde_json::json!({"puzzle": 5, "y": 3}), "field \"y\": invalid type: integer `3`, expected a string"),
            (serde_json::json!({"puzzle": 5, "attempt": ["a"]}), "field \"attempt\": invalid type: sequence"),
        ];
        assert_bad_contexts_refused("crosswords", answer, &propose, &bad);
        let mut unknown = propose;
        unknown.context = serde_json::json!({"puzzle": null, "y": ""});
        assert_eq!(ask(&unknown).unwrap_err().message, "crosswords request without a built-in puzzle");
    }
}
