//! Step 1 of ReTreVal: the model rates a problem's complexity 1–5 before the tree is
//! built, and a table maps the rating to the tree's depth and branching. Two tables
//! are built in — the paper's range (depth 2–5, branching 2–4) and the official
//! code's — and a person may give their own (`--complexity-table 1:2x2,2:2x3,...`).

use crate::engine::task::Task;
use crate::protocol::{Prompt, Purpose};

use super::{clip, prompt, read_rating, MAX_TRACE_CHARS};

/// A complexity rating, 1 (routine) to 5 (hardest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "u8", into = "u8")]
pub struct Complexity(pub(super) u8);

impl Complexity {
    pub const MIN: u8 = 1;
    pub const MAX: u8 = 5;

    /// `level` if it is 1 to 5.
    pub fn new(level: u8) -> Option<Complexity> {
        (Self::MIN..=Self::MAX).contains(&level).then_some(Complexity(level))
    }

    pub fn level(self) -> u8 {
        self.0
    }
}

impl TryFrom<u8> for Complexity {
    type Error = String;
    fn try_from(level: u8) -> Result<Self, String> {
        Complexity::new(level).ok_or_else(|| format!("complexity {level} is outside 1 to 5"))
    }
}

impl From<Complexity> for u8 {
    fn from(c: Complexity) -> u8 {
        c.0
    }
}

impl std::fmt::Display for Complexity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The tree's shape for one complexity level: levels of thoughts below the root, and
/// children per expanded node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    pub depth: u8,
    pub branching: u8,
}

/// Depth × branching for each complexity level 1..=5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComplexityTable {
    /// `paper`, `official`, or the table as given (`1:2x2,...`).
    name: String,
    shapes: [Shape; 5],
}

const fn shape(depth: u8, branching: u8) -> Shape {
    Shape { depth, branching }
}

impl ComplexityTable {
    pub const MAX_DEPTH: u8 = 8;
    pub const MAX_BRANCHING: u8 = 6;
    /// What a table string must look like, for errors.
    pub const FORMAT: &'static str = "paper, official, or LEVEL:DEPTHxBRANCHING for levels 1 to 5, \
e.g. 1:2x2,2:2x3,3:3x3,4:4x4,5:5x4 (depth 1 to 8, branching 1 to 6)";

    /// The paper's range: 1→(2,2) 2→(2,3) 3→(3,3) 4→(4,4) 5→(5,4). The default.
    pub fn paper() -> ComplexityTable {
        ComplexityTable {
            name: "paper".into(),
            shapes: [shape(2, 2), shape(2, 3), shape(3, 3), shape(4, 4), shape(5, 4)],
        }
    }

    /// The official code's: 1→(1,2) 2→(2,2) 3→(3,3) 4→(4,3) 5→(5,4).
    pub fn official() -> ComplexityTable {
        ComplexityTable {
            name: "official".into(),
            shapes: [shape(1, 2), shape(2, 2), shape(3, 3), shape(4, 3), shape(5, 4)],
        }
    }

    /// `paper`, `official`, or an explicit table: every level 1 to 5 once, as
    /// `LEVEL:DEPTHxBRANCHING` separated by commas (spaces allowed, any order). The
    /// error says which piece is wrong.
    pub fn parse(text: &str) -> Result<ComplexityTable, String> {
        let text = text.trim();
        match text {
            "paper" => return Ok(Self::paper()),
            "official" => return Ok(Self::official()),
            _ => {}
        }
        if text.chars().count() > 200 {
            return Err("it is too long".into());
        }
        let mut shapes: [Option<Shape>; 5] = [None; 5];
        for piece in text.split(',').map(str::trim) {
            let bad = || format!("{piece:?} is not LEVEL:DEPTHxBRANCHING");
            let (level, dims) = piece.split_once(':').ok_or_else(bad)?;
            let (depth, branching) = dims.trim().split_once(['x', 'X', '×']).ok_or_else(bad)?;
            let read = |s: &str| s.trim().parse::<u8>().map_err(|_| bad());
            let (level, depth, branching) = (read(level)?, read(depth)?, read(branching)?);
            let slot = match level {
                1..=5 => &mut shapes[usize::from(level - 1)],
                _ => return Err(format!("level {level} in {piece:?} is outside 1 to 5")),
            };
            if slot.is_some() {
                return Err(format!("level {level} is given twice"));
            }
            if !(1..=Self::MAX_DEPTH).contains(&depth) {
                return Err(format!("depth {depth} of level {level} is outside 1 to {}", Self::MAX_DEPTH));
            }
            if !(1..=Self::MAX_BRANCHING).contains(&branching) {
                return Err(format!("branching {branching} of level {level} is outside 1 to {}", Self::MAX_BRANCHING));
            }
            *slot = Some(shape(depth, branching));
        }
        let mut out = [shape(1, 1); 5];
        for (i, s) in shapes.iter().enumerate() {
            out[i] = s.ok_or_else(|| format!("level {} is missing", i + 1))?;
        }
        let name = (1..=5).zip(out).map(|(l, s)| format!("{l}:{}x{}", s.depth, s.branching)).collect::<Vec<_>>();
        Ok(ComplexityTable { name: name.join(","), shapes: out })
    }

    /// `paper`, `official` or the explicit table in normal form.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tree's shape for a complexity level.
    pub fn shape(&self, level: Complexity) -> Shape {
        self.shapes[usize::from(level.0 - 1)]
    }
}

impl Default for ComplexityTable {
    fn default() -> Self {
        Self::paper()
    }
}

/// What a complexity reply said.
#[derive(Debug, Clone, PartialEq)]
pub struct ComplexityReading {
    pub level: Complexity,
    /// Set when the reply's number was not a whole 1–5 and was clamped or rounded:
    /// what it said and what was taken, for the log.
    pub note: Option<String>,
}

/// Ask the model for a 1–5 complexity estimate of problem `x` (purpose `value`,
/// context `"retreval": "complexity"`). The reply should end with `Complexity: N`.
pub fn complexity_prompt(task: &dyn Task, x: &str) -> Prompt {
    let text = format!(
        "Estimate how complex the following problem is to solve, on a scale from 1 to 5:\n\
1 = routine, one or two direct steps;\n\
2 = easy, a short chain of standard steps;\n\
3 = moderate, several steps or one idea to find;\n\
4 = hard, a long chain of steps or a non-obvious idea;\n\
5 = very hard, several ideas, cases or subproblems.\n\n\
Problem:\n{}\n\n\
Do not solve it. In one or two sentences say what makes it easy or hard, then end with a line \
`Complexity: N` where N is a whole number from 1 to 5.",
        clip(x.trim(), MAX_TRACE_CHARS)
    );
    let mut p = prompt(task, x, Purpose::Value, "complexity", text, serde_json::json!({}));
    p.max_tokens = Some(200);
    p
}

/// Read a complexity reply: `Complexity: 3`, `**Complexity:** 3`, `3/5`, `**3**`,
/// `three`, or a reply that is only a number. A number outside 1–5 is clamped and a
/// fraction rounded (with a note); `None` when no number can be read.
pub fn parse_complexity(reply: &str) -> Option<ComplexityReading> {
    let said = read_rating(reply, &["complexity", "level", "rating", "estimate"], 5.0)?;
    let taken = said.round().clamp(f64::from(Complexity::MIN), f64::from(Complexity::MAX));
    let level = Complexity(taken as u8);
    let note = (said != taken).then(|| format!("the model said complexity {said}; taken as {taken}"));
    Some(ComplexityReading { level, note })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(level: u8) -> Complexity {
        Complexity::new(level).unwrap()
    }

    fn shapes(t: &ComplexityTable) -> Vec<(u8, u8)> {
        (1..=5).map(|l| t.shape(c(l))).map(|s| (s.depth, s.branching)).collect()
    }

    #[test]
    fn the_two_built_in_tables_are_the_issues() {
        assert_eq!(shapes(&ComplexityTable::paper()), [(2, 2), (2, 3), (3, 3), (4, 4), (5, 4)]);
        assert_eq!(shapes(&ComplexityTable::official()), [(1, 2), (2, 2), (3, 3), (4, 3), (5, 4)]);
        assert_eq!(ComplexityTable::default(), ComplexityTable::paper());
        assert_eq!(ComplexityTable::parse(" official ").unwrap(), ComplexityTable::official());
    }

    #[test]
    fn an_explicit_table_is_read_in_any_order_and_named_in_normal_form() {
        let t = ComplexityTable::parse("5:5x4, 1:1x1,2:2X2 ,3:3×3,4:8x6").unwrap();
        assert_eq!(shapes(&t), [(1, 1), (2, 2), (3, 3), (8, 6), (5, 4)]);
        assert_eq!(t.name(), "1:1x1,2:2x2,3:3x3,4:8x6,5:5x4");
        // The paper's table written out is the paper's shapes.
        assert_eq!(
            shapes(&ComplexityTable::parse("1:2x2,2:2x3,3:3x3,4:4x4,5:5x4").unwrap()),
            shapes(&ComplexityTable::paper())
        );
    }

    #[test]
    fn a_bad_table_says_which_piece_is_wrong() {
        for (text, error) in [
            ("papers", "\"papers\" is not LEVEL:DEPTHxBRANCHING"),
            ("1:2x2,2:2x3,3:3x3,4:4x4", "level 5 is missing"),
            ("1:2x2,1:2x3,3:3x3,4:4x4,5:5x4", "level 1 is given twice"),
            ("1:2x2,2:2x3,3:3x3,4:4x4,6:5x4", "level 6 in \"6:5x4\" is outside 1 to 5"),
            ("1:9x2,2:2x3,3:3x3,4:4x4,5:5x4", "depth 9 of level 1 is outside 1 to 8"),
            ("1:0x2,2:2x3,3:3x3,4:4x4,5:5x4", "depth 0 of level 1 is outside 1 to 8"),
            ("1:2x7,2:2x3,3:3x3,4:4x4,5:5x4", "branching 7 of level 1 is outside 1 to 6"),
            ("1:2x2,2:2x3,3:3x3,4:4x4,5:5x-4", "\"5:5x-4\" is not LEVEL:DEPTHxBRANCHING"),
            ("1:2x2,,2:2x3", "\"\" is not LEVEL:DEPTHxBRANCHING"),
            ("1:300x2", "\"1:300x2\" is not LEVEL:DEPTHxBRANCHING"),
            ("", "\"\" is not LEVEL:DEPTHxBRANCHING"),
        ] {
            assert_eq!(ComplexityTable::parse(text), Err(error.to_string()), "{text:?}");
        }
        assert_eq!(ComplexityTable::parse(&"1:2x2,".repeat(100)), Err("it is too long".to_string()));
    }

    #[test]
    fn complexity_replies_are_read_tolerantly() {
        for (reply, level) in [
            ("Complexity: 3", 3),
            ("It needs casework over residues.\nComplexity: 4", 4),
            ("**Complexity:** 2", 2),
            ("I'd rate it 3/5.", 3),
            ("3 / 5", 3),
            ("It is a 4 out of 5.", 4),
            ("**3**", 3),
            ("The answer is **2**.", 2),
            ("three", 3),
            ("Complexity: five.", 5),
            ("5", 5),
            ("Complexity: this one is 3", 3),
            // The last labelled line wins over an earlier one.
            ("Complexity: 2 at first sight.\nOn reflection, complexity: 4", 4),
            // A labelled line beats other numbers in the reasoning.
            ("It takes 2 steps and 7 substitutions.\nComplexity: 1", 1),
        ] {
            let got = parse_complexity(reply).unwrap_or_else(|| panic!("{reply:?} unread"));
            assert_eq!((got.level.level(), got.note), (level, None), "{reply:?}");
        }
    }

    #[test]
    fn out_of_range_ratings_are_clamped_with_a_note() {
        let r = parse_complexity("Complexity: 7").unwrap();
        assert_eq!(r.level, c(5));
        assert_eq!(r.note.as_deref(), Some("the model said complexity 7; taken as 5"));
        assert_eq!(parse_complexity("Complexity: 0").unwrap().level, c(1));
        assert_eq!(parse_complexity("Complexity: -2").unwrap().level, c(1));
        let r = parse_complexity("Complexity: 3.5").unwrap();
        assert_eq!((r.level, r.note.is_some()), (c(4), true));
        assert_eq!(parse_complexity("Complexity: 1e400"), None, "not a number as a model writes one");
        assert_eq!(parse_complexity("Complexity: 99999999999999999999999").unwrap().level, c(5));
    }

    #[test]
    fn unreadable_complexity_replies_are_none() {
        for reply in ["", "It is hard.", "Between 2 and 4, depending.", "Complexity: high", "**hard**", "2 or 3"] {
            assert_eq!(parse_complexity(reply), None, "{reply:?}");
        }
    }

    #[test]
    fn the_complexity_prompt_marks_itself_for_sim_and_keeps_the_tasks_context() {
        let task = crate::tasks::game24::Game24::builtin();
        let p = complexity_prompt(&task, "4 5 6 10");
        assert_eq!(p.purpose, Purpose::Value);
        assert_eq!(p.context["retreval"], "complexity");
        assert_eq!(p.context["task"], "game24");
        assert!(p.messages[0].content.contains("4 5 6 10"));
        assert!(p.messages[0].content.contains("Complexity: N"));
        let roundtrip: Complexity = serde_json::from_value(serde_json::json!(3)).unwrap();
        assert_eq!(roundtrip, c(3));
        assert!(serde_json::from_value::<Complexity>(serde_json::json!(6)).is_err());
    }
}
