//! Capabilities that shape what people see of a task: a judge of finished outputs
//! (figures for the run's summary) and a board drawn for a state.

use crate::engine::Score;
use crate::protocol::Prompt;

/// A model judgment the engine asks for about an output once the method is done (see
/// [`OutcomeJudge`]): the prompt (purpose `Judge`) and its sample count.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRequest {
    pub prompt: Prompt,
    pub n: u32,
}

/// What a task reads from a judge's samples: metrics for the judged node (which
/// `Task::metrics` then reads from the tree), a line for its detail pane and, for a task
/// whose answers the judge grades (a task file's `kind = "judge"` check), the verdict:
/// the node becomes a solution or not, and the outcome's figures follow.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Judgment {
    pub metrics: Vec<(String, f64)>,
    pub note: String,
    pub verdict: Option<bool>,
}

/// A model judgment of each output that the engine asks for when any method is done,
/// before it finishes, as an ordinary recorded call on the output's node — so replay
/// repeats it and a fork judges afresh (creative writing's coherency).
pub trait OutcomeJudge {
    /// The judgment to ask for about output `y`, if this output is judged.
    fn outcome_judge(&self, x: &str, y: &str) -> Option<JudgeRequest>;
    /// Read the judge's samples about output `y`; the metrics are set on its node.
    fn read_judgment(&self, x: &str, y: &str, samples: &[String]) -> Judgment;
    /// Outputs with the same key share one judgment (one call); `None`: each output is
    /// judged on its own (a passage's coherency).
    fn judge_key(&self, _x: &str, _y: &str) -> Option<String> {
        None
    }
}

/// A state drawn as a grid in the explorer (crosswords' board).
pub trait Board {
    /// State `y` as a grid, with the evaluator's verdicts from `score`.
    fn board(&self, x: &str, y: &str, score: Option<&Score>) -> BoardView;
}

/// A state drawn as a grid: cells row by row with a class each, labels for the rows
/// and columns, and the clues with their letters and verdicts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BoardView {
    pub rows: Vec<Vec<BoardCell>>,
    pub row_labels: Vec<String>,
    pub column_labels: Vec<String>,
    pub clues: Vec<ClueRow>,
}

/// One cell: its letter (`None` when empty) and its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardCell {
    pub letter: Option<char>,
    pub class: CellClass,
}

/// How a cell is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellClass {
    Empty,
    /// Filled by an earlier step.
    Filled,
    /// Written by this state's own step.
    Changed,
    /// This state's step overwrote a different letter here.
    Conflict,
}

/// One clue of a board: label (`h1`), clue text, current letters (`_` blank), status
/// (`unfilled`, `filled`, `changed`) and the evaluator's verdict, if it gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClueRow {
    pub label: String,
    pub clue: String,
    pub letters: String,
    pub status: String,
    pub verdict: Option<String>,
}
