//! The 5×5 board: clues `h1..h5` (rows) and `v1..v5` (columns), the letters filled so
//! far, and each clue's status (unfilled, filled, or filled and then changed), kept as
//! the reference environment keeps them. A state is the list of actions (`h2. motor`,
//! one per line) replayed on an empty board.

/// Rows and columns.
pub const SIZE: usize = 5;
/// Clues: five across, then five down.
pub const CLUES: usize = 2 * SIZE;
/// An empty cell.
pub const BLANK: u8 = b'_';

/// `h1`..`h5` for 0..5, `v1`..`v5` for 5..10.
pub fn clue_label(clue: usize) -> String {
    if clue < SIZE {
        format!("h{}", clue + 1)
    } else {
        format!("v{}", clue - SIZE + 1)
    }
}

/// The clue a label names (`h2` → 1, `V3` → 7).
pub fn clue_index(label: &str) -> Option<usize> {
    let label = label.trim().to_ascii_lowercase();
    let (kind, n) = label.split_at(label.char_indices().nth(1).map_or(label.len(), |(i, _)| i));
    let n: usize = n.parse().ok().filter(|n| (1..=SIZE).contains(n))?;
    match kind {
        "h" => Some(n - 1),
        "v" => Some(SIZE + n - 1),
        _ => None,
    }
}

/// The board cells (row-major indices) of a clue, in reading order.
pub fn cells_of(clue: usize) -> [usize; SIZE] {
    let mut out = [0; SIZE];
    for (k, cell) in out.iter_mut().enumerate() {
        *cell = if clue < SIZE { clue * SIZE + k } else { k * SIZE + (clue - SIZE) };
    }
    out
}

/// What has happened to a clue's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClueStatus {
    Unfilled,
    Filled,
    /// Filled, then a later word changed one of its letters.
    Changed,
}

impl ClueStatus {
    pub fn label(self) -> &'static str {
        match self {
            ClueStatus::Unfilled => "unfilled",
            ClueStatus::Filled => "filled",
            ClueStatus::Changed => "changed",
        }
    }
}

/// One thought: write `word` into `clue`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    pub clue: usize,
    /// Upper-case letters (or `_`).
    pub word: [u8; SIZE],
}

impl Action {
    /// Read `h2. motor` (the reference's format; `h2 motor` and `H2. MOTOR` too).
    pub fn parse(text: &str) -> Result<Action, String> {
        let text = text.trim();
        let (label, word) = match text.split_once(". ") {
            Some(parts) => parts,
            None => text
                .split_once(char::is_whitespace)
                .ok_or_else(|| format!("{text:?} is not a move: expected a clue and a word, like \"h2. motor\""))?,
        };
        let clue =
            clue_index(label).ok_or_else(|| format!("{label:?} is not a clue: expected h1 to h5 or v1 to v5"))?;
        let word = word.trim();
        if word.chars().count() != SIZE || !word.chars().all(|c| c.is_ascii_alphabetic() || c == '_') {
            return Err(format!("{word:?} is not a word of {SIZE} letters"));
        }
        let mut letters = [BLANK; SIZE];
        for (slot, b) in letters.iter_mut().zip(word.bytes()) {
            *slot = b.to_ascii_uppercase();
        }
        Ok(Action { clue, word: letters })
    }

    /// `h2. motor`, as thoughts are written.
    pub fn text(&self) -> String {
        format!("{}. {}", clue_label(self.clue), String::from_utf8_lossy(&self.word).to_ascii_lowercase())
    }
}

/// The letters on the board and each clue's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    pub cells: [u8; SIZE * SIZE],
    pub status: [ClueStatus; CLUES],
}

impl Default for Board {
    fn default() -> Self {
        Board { cells: [BLANK; SIZE * SIZE], status: [ClueStatus::Unfilled; CLUES] }
    }
}

impl Board {
    /// The board after the actions of state `y` (one per non-empty line), on an empty
    /// board. A line that is not a move is an error naming it.
    pub fn from_path(y: &str) -> Result<Board, String> {
        let mut board = Board::default();
        for (i, line) in y.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let action = Action::parse(line).map_err(|e| format!("line {}: {e}", i + 1))?;
            board.apply(&action);
        }
        Ok(board)
    }

    /// A board read from 25 letters, row by row (`_` for blanks).
    pub fn from_letters(letters: &[u8; SIZE * SIZE]) -> Board {
        Board { cells: *letters, status: [ClueStatus::Unfilled; CLUES] }
    }

    /// The current letters of a clue.
    pub fn word(&self, clue: usize) -> [u8; SIZE] {
        cells_of(clue).map(|c| self.cells[c])
    }

    pub fn word_text(&self, clue: usize) -> String {
        String::from_utf8_lossy(&self.word(clue)).into_owned()
    }

    /// The cells whose letter `action` would change (a filled letter overwritten).
    pub fn overwrites(&self, action: &Action) -> Vec<usize> {
        cells_of(action.clue)
            .iter()
            .zip(action.word)
            .filter(|(&c, new)| self.cells[c] != BLANK && self.cells[c] != *new)
            .map(|(&c, _)| c)
            .collect()
    }

    /// Write the action's word: every clue one of whose letters changes becomes
    /// `Changed`, then the action's clue is `Filled` (as the reference's `step`).
    pub fn apply(&mut self, action: &Action) {
        let changed = self.overwrites(action);
        for (c, letter) in cells_of(action.clue).iter().zip(action.word) {
            self.cells[*c] = letter;
        }
        for clue in 0..CLUES {
            if cells_of(clue).iter().any(|c| changed.contains(c)) {
                self.status[clue] = ClueStatus::Changed;
            }
        }
        self.status[action.clue] = ClueStatus::Filled;
    }

    /// Row `r` as text, `_` for blanks.
    pub fn row(&self, r: usize) -> String {
        String::from_utf8_lossy(&self.cells[r * SIZE..(r + 1) * SIZE]).into_owned()
    }

    /// The board as an answer: its five rows joined by `/` (`AGEND/MOTOR/...`).
    pub fn answer_text(&self) -> String {
        (0..SIZE).map(|r| self.row(r)).collect::<Vec<_>>().join("/")
    }

    /// Read an answer written by [`Board::answer_text`] (or the rows on lines).
    pub fn parse_answer(text: &str) -> Option<Board> {
        let rows: Vec<&str> = text.split(['/', '\n']).map(str::trim).filter(|r| !r.is_empty()).collect();
        if rows.len() != SIZE {
            return None;
        }
        let mut cells = [BLANK; SIZE * SIZE];
        for (r, row) in rows.iter().enumerate() {
            let letters: Vec<u8> = row.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            if letters.len() != SIZE || !letters.iter().all(|b| b.is_ascii_alphabetic() || *b == BLANK) {
                return None;
            }
            for (k, b) in letters.iter().enumerate() {
                cells[r * SIZE + k] = b.to_ascii_uppercase();
            }
        }
        Some(Board::from_letters(&cells))
    }

    /// How many clues are filled (or changed).
    pub fn filled(&self) -> usize {
        self.status.iter().filter(|s| **s != ClueStatus::Unfilled).count()
    }
}

/// How close a board is to the gold one: the share of right letters and of right
/// words (all ten), and whether it is all right (the reference's r_letter, r_word, r_game).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    pub letter: f64,
    pub word: f64,
    pub game: bool,
}

pub fn accuracy(board: &Board, gold: &[u8; SIZE * SIZE]) -> Accuracy {
    let letters = board.cells.iter().zip(gold).filter(|(a, b)| a == b).count();
    let gold_board = Board::from_letters(gold);
    let words = (0..CLUES).filter(|&c| board.word(c) == gold_board.word(c)).count();
    Accuracy {
        letter: letters as f64 / (SIZE * SIZE) as f64,
        word: words as f64 / CLUES as f64,
        game: board.cells == *gold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_fill_rows_and_columns_and_mark_changed_clues() {
        let mut b = Board::default();
        b.apply(&Action::parse("h2. motor").unwrap());
        assert_eq!(b.row(1), "MOTOR");
        assert_eq!(b.word_text(5), "_M___");
        let over = Action::parse("v1. azure").unwrap();
        assert_eq!(b.overwrites(&over), vec![5], "row 2, column 1: M would become Z");
        let fits = Action::parse("v1. amass").unwrap();
        assert!(b.overwrites(&fits).is_empty());
        b.apply(&Action::parse("v2. _____").unwrap());
        assert_eq!(b.status[1], ClueStatus::Changed, "h2 lost its O");
        assert_eq!(b.status[6], ClueStatus::Filled);
        assert_eq!(Action::parse("V3 Salon").unwrap().text(), "v3. salon");
        assert!(Action::parse("x1. salon").is_err() && Action::parse("h6. salon").is_err());
        assert!(Action::parse("h1. sal").is_err() && Action::parse("h1").is_err());
        assert_eq!(clue_index("h10"), None);
        assert_eq!(
            Board::from_path("h1. agend\nbad").unwrap_err(),
            "line 2: \"bad\" is not a move: expected a clue and a word, like \"h2. motor\""
        );
        let g = *b"AGENDMOTORARTSYSALLESLEER";
        let full = Board::from_letters(&g);
        assert_eq!(Board::parse_answer(&full.answer_text()), Some(full.clone()));
        assert_eq!(accuracy(&full, &g), Accuracy { letter: 1.0, word: 1.0, game: true });
        let row = Board::from_path("h2. motor").unwrap();
        let a = accuracy(&row, &g);
        assert_eq!((a.letter, a.word, a.game), (0.2, 0.1, false));
    }
}
