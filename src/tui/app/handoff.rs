//! Hand-off: the focused text to `$PAGER` (`V`), the selected thought to `$EDITOR` (`E`,
//! an edited text becomes the edit command, as the `e` popup's does) and the focused text
//! to the system clipboard (`y`, by OSC 52). The app only says what to hand off
//! (`App::outgoing`); the loop suspends the terminal and runs the program
//! (`tui::handoff`), then gives the result back (`App::handed_back`).

use super::*;
use crate::tui::ui::View;

impl App {
    /// The text of the focused pane and what it is: the transcript, or else the selected
    /// node's whole detail (its thought, state, score, every prompt and raw reply).
    pub fn focused_text(&self) -> (String, String) {
        let node = self.selected();
        let view = View::new(self, node);
        if self.view.focus == Pane::Transcript {
            return ("the transcript".into(), plain_text(&crate::tui::ui::transcript::lines(&view)));
        }
        // Whole: the thinking unfolded, whatever the pane shows.
        (format!("{node}'s detail"), plain_text(&crate::tui::ui::detail::lines_with(&view, true)))
    }

    /// `V`: the focused text in the pager.
    pub(super) fn hand_to_pager(&mut self) {
        let (what, text) = self.focused_text();
        self.outgoing = Some(Outgoing::Pager { what, text });
    }

    /// `y`: the focused text to the clipboard.
    pub(super) fn hand_to_clipboard(&mut self) {
        let (what, text) = self.focused_text();
        self.outgoing = Some(Outgoing::Clipboard { what, text });
    }

    /// `E`: in a live run, the selected thought in the editor, to edit (not the root: the
    /// input is not a thought); in a replay, or on the root, the whole detail to read.
    pub(super) fn hand_to_editor(&mut self, node: NodeId) {
        if self.session.replay.is_none() && node != NodeId(0) {
            let text = self.edit_lines(node).join("\n") + "\n";
            self.outgoing = Some(Outgoing::Editor { what: format!("{node}'s thought"), text, edit: Some(node) });
            return;
        }
        let (what, text) = self.focused_text();
        self.outgoing = Some(Outgoing::Editor { what, text, edit: None });
    }

    /// What came back from a hand-off: `Ok(text)` the file as the program left it, or a
    /// one-line error. An edited thought becomes the edit command.
    pub fn handed_back(&mut self, job: &Outgoing, result: Result<String, String>) -> Vec<Effect> {
        self.touch();
        let back = match result {
            Err(e) => {
                self.message = Some(e);
                return Vec::new();
            }
            Ok(back) => back,
        };
        match job {
            Outgoing::Pager { what, .. } => self.message = Some(format!("{what} was shown in the pager")),
            Outgoing::Clipboard { what, text } => {
                self.message = Some(format!(
                    "{what} ({} lines) sent to the clipboard by OSC 52 (in tmux: set -g set-clipboard on)",
                    text.lines().count()
                ))
            }
            Outgoing::Editor { what, edit: None, .. } => {
                let why = if self.session.replay.is_some() {
                    "a replay is read-only: f forks a live run"
                } else {
                    "the root is the input"
                };
                self.message = Some(format!("{what} was opened in the editor; changes are not used ({why})"));
            }
            Outgoing::Editor { text, edit: Some(node), .. } => {
                if back.trim() == text.trim() {
                    self.message = Some(format!("{node}'s thought is unchanged: nothing edited"));
                    return Vec::new();
                }
                if back.trim().is_empty() {
                    self.message = Some(format!("{node}'s thought was emptied: nothing edited"));
                    return Vec::new();
                }
                let lines: Vec<String> =
                    back.trim_end().lines().map(|l| l.trim_end_matches('\r').to_string()).collect();
                let text = self.edited_text(*node, &lines);
                return self.submit_edit(*node, text);
            }
        }
        Vec::new()
    }
}
