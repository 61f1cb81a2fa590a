//! Several problems in one explorer (`tui --range A..B`), opening a session or demo
//! from inside the app (`o`), and the problems found in the config and theme files,
//! shown at start.
//!
//! Each problem of the list is its own session, recorded separately (as headless
//! `run --record DIR` does). Leaving a problem ends its recording; coming back to it
//! opens what was recorded as a replay (`f` forks it, `R` starts it again).

use super::*;

/// The problems of this explorer and which one is open.
pub struct ProblemList {
    pub problems: Vec<Problem>,
    /// The open problem (0-based).
    pub at: usize,
    /// The session each problem was recorded in, once visited.
    pub(crate) sessions: Vec<Option<PathBuf>>,
    /// The setup the list's runs use (a session opened with `o` brings its own).
    pub(crate) setup: Setup,
    /// A session opened with `o` is on screen, not the list's problem.
    pub(crate) away: bool,
}

/// Where an entry of the open popup comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenSource {
    /// A bundled demo, by its index in [`crate::demos::DEMOS`].
    Demo(usize),
    File(PathBuf),
}
