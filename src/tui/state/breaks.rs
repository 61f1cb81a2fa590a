//! Breakpoints in the explorer: the `B` list (toggle, add, remove), the message and
//! selection when one fires, and "play until" in a replay. A live run's list is the
//! engine's: each change is a `Command::Breakpoints`, recorded like any command. A
//! replay's list is the explorer's own (the recording is read-only); it starts as the
//! session's and says where playback stops. While a live run is held at a breakpoint,
//! nothing new is sent until it runs or steps: a command's calls (expand, edit,
//! backtrack, ...) join the held ones, and the message line says so.

use super::*;
use crate::engine::breakpoint::Hit;

/// The `B` popup: the breakpoints as text, the selected row, and the line being typed.
pub struct BreakList {
    pub items: Vec<String>,
    pub selected: usize,
    /// `a`: a new breakpoint being typed.
    pub adding: Option<Box<TextArea<'static>>>,
    /// Why the last typed breakpoint was refused.
    pub error: Option<String>,
}

/// Where playback stops in a replay: (cursor position after the input, what fired).
pub type BreakMarks = Vec<(usize, Hit)>;
