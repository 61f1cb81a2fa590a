//! Mini crosswords (the Tree-of-Thoughts paper's second task): 5×5 grids whose five
//! rows (`h1`..`h5`) and five columns (`v1`..`v5`) are five-letter words with clues.
//!
//! Problems: the paper's test set, puzzles 0, 5, …, 95 of `mini0505.json`
//! (`assets/crosswords/`, MIT, from princeton-nlp/tree-of-thought-llm): problem k is
//! puzzle 5k, so `--range 0..20` (or `..`) runs the 20 test puzzles and `--range 0..2`
//! puzzles 0 and 5. Any puzzle of the file's 156 is `--input "mini N"`.
//!
//! The input `x` is the clue list (`h1. An agendum; ...` one per line, as the
//! reference renders it); a state `y` is the words written so far, one thought a line
//! (`h2. motor`), replayed on an empty board (`board`). As in the reference:
//! * proposals are lines `h1. apple (certain|high|medium|low)`, worth 1 / 0.5 / 0.2 /
//!   0.1, summed over the propose call's samples (`--n-generate`, the paper's 8) and
//!   tried best first, stable on ties; a word that would overwrite a letter already on
//!   the board is kept as a rejected candidate and never tried;
//! * the evaluator judges every clue with at least two letters: sure / maybe /
//!   impossible (one reply, a verdict per clue line); a state with a clue judged
//!   impossible is a dead end (`Task::prune_reason`);
//! * tot-dfs runs as the paper's notebook by default on this task: children in
//!   proposal order, pruned by that rule, at most 3 tried per state, 100 visited
//!   states, states at depth T=9 (the notebook's `env.steps < 10`) are leaves, and the
//!   output is the deepest state visited (first visited on ties);
//! * io and cot replies are read as the reference reads them (`read::board_of_reply`).
//!
//! Figures (`Task::metrics`): `letter`, `word`, `game` of the output — for a tree
//! search the deepest state visited (evaluated), the first visited on ties; for whole
//! answers (io / cot / cot-sc) the mean over the samples — and `oracle_letter`,
//! `oracle_word`, `oracle_game` of the best state visited (most right words, first
//! visited on ties). "Visited" is in the order of the states' evaluation calls.
//!
//! Building a session from the reference's DFS log (list k is problem k): the input is
//! `problem(k).input`; each logged state is a child whose thought is its last action,
//! proposed (with confidences ordering it) in a propose reply of its parent, and whose
//! `count` becomes a value reply with that many `sure` / `maybe` / `impossible` clue
//! lines over `judged_clues` of its board.

pub mod board;
pub mod read;
pub mod sim;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::json;

use board::{accuracy, cells_of, clue_label, Action, Board, ClueStatus, BLANK, CLUES, SIZE};

use super::{prompts, Problem, TaskError, TaskOptions, TaskSource};
use crate::engine::methods::tot_dfs::{ChildOrder, DfsStyle, PruneRule, RunTo};
use crate::engine::task::Board as DrawsBoard;
use crate::engine::task::{
    BoardCell, BoardView, CellClass, ClueRow, Feedback, ProposalScores, Pruning, TreeSearch, ValueEvaluator,
    VoteEvaluator,
};
use crate::engine::{AnswerKind, NodeId, Outcome, PromptStyle, Proposal, Score, SearchTree, Task, TaskInfo};
use crate::protocol::{Prompt, Purpose};

const IO: prompts::Builtin = crate::builtin_prompt!("crosswords", "io.txt");
const COT: prompts::Builtin = crate::builtin_prompt!("crosswords", "cot.txt");
const PROPOSE: prompts::Builtin = crate::builtin_prompt!("crosswords", "propose.txt");
const VALUE: prompts::Builtin = crate::builtin_prompt!("crosswords", "value.txt");
const DATA: &str = include_str!("../../../assets/crosswords/mini0505.json");

/// Every test puzzle is this many puzzles after the last (0, 5, ..., 95).
pub const TEST_STRIDE: usize = 5;
/// The test puzzles.
pub const TEST_COUNT: usize = 20;
/// The deepest state the paper's DFS visits (its notebook's `env.steps < 10`).
pub const DFS_DEPTH: usize = 9;

/// Registration (see `tasks::REGISTRY`).
pub const INFO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("crosswords"),
    about: Cow::Borrowed("Mini crosswords: fill a 5x5 grid from ten clues (the Tree-of-Thoughts test puzzles)"),
    input_noun: Cow::Borrowed("puzzle"),
    input_hint: Cow::Borrowed("a test puzzle number (0 to 19) or mini N for any of the 156"),
    input_examples: Cow::Borrowed(&[Cow::Borrowed("0"), Cow::Borrowed("mini 37")]),
    default_problem: 0,
    // A board, checked exactly against the gold one.
    answer_kind: AnswerKind::Expression,
    reads_data: false,
};

/// One puzzle of the file: ten clues (h1..h5, v1..v5) and the 25 gold letters.
#[derive(Debug, Clone, PartialEq)]
pub struct Puzzle {
    pub clues: Vec<String>,
    pub gold: [u8; SIZE * SIZE],
}

impl Puzzle {
    /// The input as the reference renders it: `h1. clue` ... `v5. clue`, one a line.
    pub fn input(&self) -> String {
        self.clues.iter().enumerate().map(|(i, c)| format!("{}. {c}", clue_label(i))).collect::<Vec<_>>().join("\n")
    }
}

/// Read puzzles in the file's format (`[[10 clues], [25 letters]]` each).
pub fn parse_puzzles(text: &str) -> Result<Vec<Puzzle>, String> {
    let raw: Vec<(Vec<String>, Vec<String>)> =
        serde_json::from_str(text).map_err(|e| format!("mini0505.json: not a list of [clues, letters]: {e}"))?;
    raw.into_iter()
        .enumerate()
        .map(|(i, (clues, letters))| {
            if clues.len() != CLUES {
                return Err(format!("mini0505.json puzzle {i}: {} clues, expected {CLUES}", clues.len()));
            }
            let joined: String = letters.concat();
            if joined.len() != SIZE * SIZE || !joined.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(format!("mini0505.json puzzle {i}: expected {} letters", SIZE * SIZE));
            }
            let mut gold = [BLANK; SIZE * SIZE];
            for (slot, b) in gold.iter_mut().zip(joined.bytes()) {
                *slot = b.to_ascii_uppercase();
            }
            Ok(Puzzle { clues: clues.iter().map(|c| c.trim().to_string()).collect(), gold })
        })
        .collect()
}

/// The built-in puzzles (all 156), read once.
pub fn puzzles() -> &'static [Puzzle] {
    static PUZZLES: OnceLock<Vec<Puzzle>> = OnceLock::new();
    PUZZLES.get_or_init(|| match parse_puzzles(DATA) {
        Ok(p) => p,
        // Compiled in and checked by a test.
        Err(e) => unreachable!("built-in crosswords are broken: {e}"),
    })
}

/// The built-in puzzle whose clue list is `x`, by its index in the file.
pub fn find_puzzle(x: &str) -> Option<(usize, &'static Puzzle)> {
    let x = x.trim();
    puzzles().iter().enumerate().find(|(_, p)| p.input() == x)
}

/// The clues of input `x`, read from its lines (`h1. clue`), in clue order.
pub fn clues_of(x: &str) -> Vec<String> {
    let mut clues = vec![String::new(); CLUES];
    for line in x.lines() {
        if let Some((label, clue)) = line.trim().split_once(". ") {
            if let Some(i) = board::clue_index(label) {
                clues[i] = clue.trim().to_string();
            }
        }
    }
    clues
}

/// The board of state `y`: its moves replayed, or, for a whole io / cot reply, the
/// board the reply writes.
pub fn board_of(y: &str) -> Board {
    Board::from_path(y).unwrap_or_else(|_| read::board_of_reply(y))
}

/// The state as the propose prompt shows it (the reference's `render`): the board,
/// then the clues by status with their current letters.
pub fn render_state(clues: &[String], board: &Board) -> String {
    let mut out = String::from("Current Board:\n");
    for r in 0..SIZE {
        out.push_str(&board.row(r));
        out.push('\n');
    }
    for status in [ClueStatus::Unfilled, ClueStatus::Filled, ClueStatus::Changed] {
        let mut title = status.label().to_string();
        title[..1].make_ascii_uppercase();
        out.push_str(&format!("\n{title}:\n"));
        for c in (0..CLUES).filter(|&c| board.status[c] == status) {
            let clue = clues.get(c).map_or("", String::as_str);
            out.push_str(&format!("{}. {clue}: {}\n", clue_label(c), board.word_text(c)));
        }
    }
    out.trim_end().to_string()
}

/// The clues the evaluator judges: those with at least two letters on the board (the
/// reference skips a clue with four or five blanks).
pub fn judged_clues(board: &Board) -> Vec<usize> {
    (0..CLUES).filter(|&c| board.word(c).iter().filter(|&&b| b == BLANK).count() < 4).collect()
}

pub struct Crosswords {
    io: String,
    cot: String,
    propose: String,
    value: String,
    style: PromptStyle,
}

impl Crosswords {
    /// Replies as the readers take them: as they came in the reference style (the
    /// reference's reading), and in the chat style each line without a list marker, bold
    /// or code marks (`- **h1.** apple (high)` is `h1. apple (high)`).
    fn as_read(&self, replies: &[String]) -> Vec<String> {
        match self.style {
            PromptStyle::Reference => replies.to_vec(),
            PromptStyle::Chat => {
                replies.iter().map(|r| r.lines().map(super::reply::plain_line).collect::<Vec<_>>().join("\n")).collect()
            }
        }
    }

    /// Build for `tasks::REGISTRY`.
    pub fn build(
        info: &TaskInfo,
        options: &TaskOptions,
        _warnings: &mut Vec<String>,
    ) -> Result<Arc<dyn TaskSource>, TaskError> {
        super::no_data(info, options)?;
        Ok(Arc::new(Crosswords::styled(options.loader())?))
    }

    /// With the reference prompts (the built-in ones, or those in `prompt_dir`).
    pub fn new(prompt_dir: Option<&Path>) -> Result<Self, TaskError> {
        Crosswords::styled(prompts::Loader::new(prompt_dir, PromptStyle::Reference))
    }

    pub fn styled(loader: prompts::Loader) -> Result<Self, TaskError> {
        parse_puzzles(DATA).map_err(TaskError::Data)?;
        Ok(Crosswords {
            io: loader.load(IO, &["input"])?,
            cot: loader.load(COT, &["input"])?,
            propose: loader.load(PROPOSE, &["state"])?,
            value: loader.load(VALUE, &["clues"])?,
            style: loader.style,
        })
    }

    /// The built-in prompts only.
    pub fn builtin() -> Self {
        match Crosswords::new(None) {
            Ok(t) => t,
            Err(e) => unreachable!("built-in crosswords assets are broken: {e}"),
        }
    }

    fn context(&self, x: &str, y: &str) -> serde_json::Value {
        json!({"task": INFO.name, "input": x, "y": y, "puzzle": find_puzzle(x).map(|(i, _)| i)})
    }

    /// The accuracy of state `y` against the gold board of `x`, if `x` is a built-in puzzle.
    pub fn accuracy_of(&self, x: &str, y: &str) -> Option<board::Accuracy> {
        let (_, puzzle) = find_puzzle(x)?;
        Some(accuracy(&board_of(y), &puzzle.gold))
    }
}

/// The verdict of each clue in an evaluation's labels (`h1 sure`), the last one given.
pub fn verdicts_of(score: &Score) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    for label in &score.samples {
        if let Some((clue, verdict)) = label.split_once(' ') {
            if let Some(c) = board::clue_index(clue) {
                out.insert(c, verdict.to_string());
            }
        }
    }
    out
}

impl Task for Crosswords {
    fn info(&self) -> &TaskInfo {
        &INFO
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Io,
            messages: prompts::render_messages(&self.io, &[("input", x)]),
            context: self.context(x, ""),
            stop: vec![],
            max_tokens: Some(200),
            sampling: Default::default(),
        }
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Cot,
            messages: prompts::render_messages(&self.cot, &[("input", x)]),
            context: self.context(x, ""),
            stop: vec![],
            max_tokens: Some(600),
            sampling: Default::default(),
        }
    }

    fn extract_answer(&self, _x: &str, y: &str) -> Option<String> {
        Some(board_of(y).answer_text())
    }

    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let (_, puzzle) = find_puzzle(x).ok_or("not one of the built-in puzzles: no gold board to check against")?;
        let board = Board::parse_answer(answer).ok_or_else(|| format!("{answer:?} is not a board of five rows"))?;
        let acc = accuracy(&board, &puzzle.gold);
        if acc.game {
            Ok(())
        } else {
            let wrong = CLUES - (acc.word * CLUES as f64).round() as usize;
            Err(format!("{wrong} of {CLUES} words wrong ({:.0}% of letters right)", 100.0 * acc.letter))
        }
    }

    fn score(&self, x: &str, answer: &str) -> f64 {
        match (find_puzzle(x), Board::parse_answer(answer)) {
            (Some((_, p)), Some(b)) => accuracy(&b, &p.gold).word,
            _ => 0.0,
        }
    }

    fn describe_state(&self, _x: &str, y: &str) -> Option<String> {
        let board = Board::from_path(y).ok()?;
        Some(format!("{} of {CLUES} clues filled: {}", board.filled(), board.answer_text()))
    }

    fn answer_key(&self, answer: &str) -> String {
        answer.trim().to_ascii_uppercase()
    }

    fn metrics(&self, x: &str, tree: &SearchTree, outcome: &Outcome) -> BTreeMap<String, f64> {
        let Some((_, puzzle)) = find_puzzle(x) else { return BTreeMap::new() };
        let acc = |id: NodeId| accuracy(&board_of(&tree.node(id).path), &puzzle.gold);
        let visited = visited_states(tree);
        // A tree search: the deepest state visited, the first visited on ties (the paper's
        // DFS output). Whole answers (io, cot): the mean over the samples.
        let output: Vec<board::Accuracy> = match deepest_visited(tree, &visited) {
            Some(id) => vec![acc(id)],
            None if outcome.sample_accuracy.is_some() => outcome.finals.iter().map(|&id| acc(id)).collect(),
            None => outcome.finals.first().map(|&id| acc(id)).into_iter().collect(),
        };
        let candidates = if visited.is_empty() { outcome.finals.clone() } else { visited };
        let mut out = BTreeMap::new();
        let n = output.len().max(1) as f64;
        // Summed from 0.0: an empty `sum::<f64>()` is -0.0, which `--out` would print.
        out.insert("letter".into(), output.iter().fold(0.0, |s, a| s + a.letter) / n);
        out.insert("word".into(), output.iter().fold(0.0, |s, a| s + a.word) / n);
        out.insert("game".into(), output.iter().filter(|a| a.game).count() as f64 / n);
        // The oracle: the state with the most right words, the first visited on ties.
        let mut best: Option<board::Accuracy> = None;
        for id in candidates {
            let a = acc(id);
            if best.is_none_or(|b| a.word > b.word) {
                best = Some(a);
            }
        }
        let best = best.unwrap_or(board::Accuracy { letter: 0.0, word: 0.0, game: false });
        out.insert("oracle_letter".into(), best.letter);
        out.insert("oracle_word".into(), best.word);
        out.insert("oracle_game".into(), if best.game { 1.0 } else { 0.0 });
        out
    }

    fn tree(&self) -> Option<&dyn TreeSearch> {
        Some(self)
    }

    fn prompt_style(&self) -> PromptStyle {
        self.style
    }

    fn feedback(&self) -> Option<&dyn Feedback> {
        Some(self)
    }

    fn board(&self) -> Option<&dyn DrawsBoard> {
        Some(self)
    }
}

/// Self-Refine and Reflexion with the generic prompts over the cot prompt.
impl Feedback for Crosswords {}

impl TreeSearch for Crosswords {
    fn default_steps(&self) -> usize {
        DFS_DEPTH
    }

    fn propose_prompt(&self, x: &str, y: &str) -> Prompt {
        let state = render_state(&clues_of(x), &board_of(y));
        Prompt {
            purpose: Purpose::Propose,
            messages: prompts::render_messages(&self.propose, &[("state", &state)]),
            context: self.context(x, y),
            stop: vec![],
            max_tokens: Some(400),
            sampling: Default::default(),
        }
    }

    fn sample_prompt(&self, x: &str, y: &str) -> Prompt {
        Prompt { purpose: Purpose::Sample, ..self.propose_prompt(x, y) }
    }

    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal> {
        self.merge_proposals(x, y, &[reply.to_string()]).into_iter().map(|(p, _)| p).collect()
    }

    fn parse_sample(&self, x: &str, y: &str, reply: &str) -> Proposal {
        match self.parse_proposals(x, y, reply).into_iter().next() {
            Some(p) => p,
            None => Proposal {
                thought: reply.trim().lines().next().unwrap_or("").to_string(),
                path: y.to_string(),
                problem: Some("no line of the form \"h1. apple (high)\"".into()),
            },
        }
    }

    fn parse_edit(&self, _x: &str, y: &str, text: &str) -> Proposal {
        let text = text.trim();
        let line = text.lines().next().unwrap_or("");
        match Action::parse(line) {
            Ok(action) => proposal_for(y, &action),
            Err(problem) => {
                Proposal { thought: text.to_string(), path: format!("{y}{text}\n"), problem: Some(problem) }
            }
        }
    }

    fn dfs_style(&self) -> DfsStyle {
        DfsStyle { order: ChildOrder::Proposal, prune: PruneRule::Task, max_children: 3, run_to: RunTo::Cap }
    }

    fn value(&self) -> Option<&dyn ValueEvaluator> {
        Some(self)
    }

    /// The reference has no vote prompt for crosswords.
    fn vote(&self) -> Option<&dyn VoteEvaluator> {
        None
    }

    fn proposal_scores(&self) -> Option<&dyn ProposalScores> {
        Some(self)
    }

    fn pruning(&self) -> Option<&dyn Pruning> {
        Some(self)
    }
}

impl ProposalScores for Crosswords {
    fn merge_proposals(&self, _x: &str, y: &str, replies: &[String]) -> Vec<(Proposal, f64)> {
        let replies = self.as_read(replies);
        read::merge_proposals(&replies)
            .into_iter()
            .filter_map(|(text, score)| Action::parse(&text).ok().map(|a| (proposal_for(y, &a), score)))
            .collect()
    }
}

impl ValueEvaluator for Crosswords {
    fn value_classes(&self) -> &[(&'static str, f64)] {
        &read::VERDICTS
    }

    fn value_prompt(&self, x: &str, y: &str) -> Prompt {
        let board = board_of(y);
        let clues = clues_of(x);
        let judged = judged_clues(&board);
        let lines: Vec<String> = judged
            .iter()
            .map(|&c| {
                let letters: Vec<String> =
                    board.word(c).iter().map(|&b| (b as char).to_ascii_lowercase().to_string()).collect();
                format!("{}. {}: {}", clue_label(c), clues[c], letters.join(" "))
            })
            .collect();
        let mut context = self.context(x, y);
        context["clues"] = json!(judged.iter().map(|&c| clue_label(c)).collect::<Vec<_>>());
        Prompt {
            purpose: Purpose::Value,
            messages: prompts::render_messages(&self.value, &[("clues", &lines.join("\n"))]),
            context,
            stop: vec![],
            max_tokens: Some(400),
            sampling: Default::default(),
        }
    }

    fn parse_value(&self, _x: &str, y: &str, samples: &[String]) -> (f64, Vec<String>) {
        let judged = judged_clues(&board_of(y));
        let mut value = 0.0;
        let mut labels = Vec::new();
        for sample in self.as_read(samples) {
            for (clue, verdict) in read::verdicts(&sample).into_iter().filter(|(c, _)| judged.contains(c)) {
                value += read::VERDICTS.iter().find(|(v, _)| *v == verdict).map_or(0.0, |(_, w)| *w);
                labels.push(format!("{} {verdict}", clue_label(clue)));
            }
        }
        (value, labels)
    }

    fn fixed_value(&self, _x: &str, _y: &str) -> Option<(f64, String)> {
        None
    }
}

impl Pruning for Crosswords {
    fn prune_reason(&self, _x: &str, _y: &str, score: &Score) -> Option<String> {
        let impossible: Vec<&str> = score.samples.iter().filter_map(|l| l.strip_suffix(" impossible")).collect();
        (!impossible.is_empty()).then(|| format!("judged impossible: {}", impossible.join(", ")))
    }
}

/// The explorer draws a state as the grid.
impl DrawsBoard for Crosswords {
    fn board(&self, x: &str, y: &str, score: Option<&Score>) -> BoardView {
        let clues = clues_of(x);
        let (board, before) = match Board::from_path(y) {
            Ok(board) => {
                let lines: Vec<&str> = y.lines().filter(|l| !l.trim().is_empty()).collect();
                let parent = lines[..lines.len().saturating_sub(1)].join("\n");
                (board, Board::from_path(&parent).unwrap_or_default())
            }
            Err(_) => (read::board_of_reply(y), Board::default()),
        };
        let verdicts = score.map(verdicts_of).unwrap_or_default();
        let rows = (0..SIZE)
            .map(|r| {
                (0..SIZE)
                    .map(|k| {
                        let cell = r * SIZE + k;
                        let (now, was) = (board.cells[cell], before.cells[cell]);
                        let class = if now == BLANK {
                            CellClass::Empty
                        } else if was == BLANK {
                            CellClass::Changed
                        } else if was != now {
                            CellClass::Conflict
                        } else {
                            CellClass::Filled
                        };
                        BoardCell { letter: (now != BLANK).then_some(now as char), class }
                    })
                    .collect()
            })
            .collect();
        let clue_rows = (0..CLUES)
            .map(|c| ClueRow {
                label: clue_label(c),
                clue: clues[c].clone(),
                letters: board.word_text(c),
                status: board.status[c].label().to_string(),
                verdict: verdicts.get(&c).cloned(),
            })
            .collect();
        BoardView {
            rows,
            row_labels: (0..SIZE).map(clue_label).collect(),
            column_labels: (SIZE..CLUES).map(clue_label).collect(),
            clues: clue_rows,
        }
    }
}

/// The states a search visited (evaluated), in the order it first asked about each.
pub fn visited_states(tree: &SearchTree) -> Vec<NodeId> {
    let mut visited: Vec<(u64, NodeId)> = tree
        .nodes()
        .filter(|n| n.score.is_some() && n.parent.is_some())
        .map(|n| (n.calls.first().copied().unwrap_or(u64::MAX), n.id))
        .collect();
    visited.sort();
    visited.into_iter().map(|(_, id)| id).collect()
}

/// The deepest of `visited` (in visiting order), the first on ties.
pub fn deepest_visited(tree: &SearchTree, visited: &[NodeId]) -> Option<NodeId> {
    let mut best: Option<NodeId> = None;
    for &id in visited {
        if best.is_none_or(|b| tree.node(id).depth > tree.node(b).depth) {
            best = Some(id);
        }
    }
    best
}

/// The proposal writing `action` after state `y`: rejected if it would overwrite a
/// letter already on the board (the reference skips such a candidate).
fn proposal_for(y: &str, action: &Action) -> Proposal {
    let thought = action.text();
    let problem = match Board::from_path(y) {
        Err(e) => Some(format!("the state before it cannot be read: {e}")),
        Ok(board) => {
            let over = board.overwrites(action);
            (!over.is_empty()).then(|| {
                let cells: Vec<String> = over
                    .iter()
                    .map(|&c| format!("{} at row {} column {}", board.cells[c] as char, c / SIZE + 1, c % SIZE + 1))
                    .collect();
                format!("would overwrite {}", cells.join(", "))
            })
        }
    };
    Proposal { thought: thought.clone(), path: format!("{y}{thought}\n"), problem }
}

impl TaskSource for Crosswords {
    fn problem_count(&self) -> usize {
        TEST_COUNT.min(puzzles().len().div_ceil(TEST_STRIDE))
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        if index >= self.problem_count() {
            return None;
        }
        puzzles().get(index * TEST_STRIDE).map(|p| Problem { index: Some(index), input: p.input() })
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        let t = text.trim();
        let err = |m: String| TaskError::Input(t.chars().take(60).collect(), m);
        if let Some(n) = t.strip_prefix("mini").map(str::trim) {
            let n: usize =
                n.parse().map_err(|_| err("expected \"mini N\", N a puzzle's index in mini0505.json".into()))?;
            let puzzle = puzzles().get(n).ok_or_else(|| {
                err(format!("mini0505.json has {} puzzles (0 to {})", puzzles().len(), puzzles().len() - 1))
            })?;
            let index = (n % TEST_STRIDE == 0 && n / TEST_STRIDE < self.problem_count()).then_some(n / TEST_STRIDE);
            return Ok(Problem { index, input: puzzle.input() });
        }
        if let Some((n, puzzle)) = find_puzzle(t) {
            let index = (n % TEST_STRIDE == 0 && n / TEST_STRIDE < self.problem_count()).then_some(n / TEST_STRIDE);
            return Ok(Problem { index, input: puzzle.input() });
        }
        Err(err("expected \"mini N\" (a puzzle of mini0505.json, 0 to 155) or the ten clue lines of one".into()))
    }

    fn gold(&self, input: &str) -> Option<String> {
        find_puzzle(input).map(|(_, p)| Board::from_letters(&p.gold).answer_text())
    }
}

/// The cells of clue `c`, for callers that draw or check clues.
pub fn clue_cells(c: usize) -> [usize; SIZE] {
    cells_of(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_puzzles_read_and_the_test_set_is_every_fifth() {
        assert_eq!(puzzles().len(), 156);
        let task = Crosswords::builtin();
        assert_eq!(task.problem_count(), 20);
        assert_eq!(task.problem(1).unwrap().input, puzzles()[5].input());
        assert!(task.problem(20).is_none());
        assert_eq!(task.parse_input("mini 10").unwrap().index, Some(2));
        assert_eq!(task.parse_input("mini 11").unwrap().index, None);
        assert!(task.parse_input("mini 156").unwrap_err().to_string().contains("156 puzzles"));
        assert!(task.parse_input("a b c").is_err());
        let x = task.problem(0).unwrap().input;
        assert_eq!(task.check(&x, "AGEND/MOTOR/ARTSY/SALLE/SLEER"), Ok(()));
        assert!(task.check(&x, "AGEND/MOTOR/ARTSY/SALLE/SLEEP").unwrap_err().starts_with("2 of 10 words wrong"));
    }
}
