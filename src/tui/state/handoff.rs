//! Hand-off: the focused text to `$PAGER` (`V`), the selected thought to `$EDITOR` (`E`,
//! an edited text becomes the edit command, as the `e` popup's does) and the focused text
//! to the system clipboard (`y`, by OSC 52). The app only says what to hand off
//! (`App::outgoing`); the loop suspends the terminal and runs the program
//! (`tui::handoff`), then gives the result back (`App::handed_back`).

use super::*;

/// Something for the world outside the explorer, carried out by the loop between frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outgoing {
    /// Show `text` in the pager (`$PAGER`, else `less`).
    Pager { what: String, text: String },
    /// Open `text` in the editor (`$VISUAL`, `$EDITOR`, else `vi`). `edit`: the node whose
    /// thought `text` is; a changed text becomes an edit of it (a new sibling).
    Editor { what: String, text: String, edit: Option<NodeId> },
    /// Put `text` on the system clipboard (OSC 52: works over SSH, and in tmux with
    /// `set-clipboard on`).
    Clipboard { what: String, text: String },
}

impl Outgoing {
    /// Whether the terminal is handed to another program (and must be drawn afresh after).
    pub fn suspends(&self) -> bool {
        !matches!(self, Outgoing::Clipboard { .. })
    }
}

/// The lines as plain text (styles dropped), one per line.
pub fn plain(lines: &[ratatui::text::Line<'_>]) -> String {
    let mut out = String::new();
    for line in lines {
        for span in &line.spans {
            out.push_str(&span.content);
        }
        out.push('\n');
    }
    out
}
