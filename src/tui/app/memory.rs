//! The memory pane (`M`) and the backtrack-cause chooser (`b` when the method names
//! failure causes). Both read only what the engine shows (`Engine::memory`,
//! `MethodView::backtrack_causes`) and act through commands, so every change a person
//! makes here is recorded in the session and replays; no method is named.
//!
//! The transcript's memory lines ("memory: entry #2 used (solved), confidence 0.60")
//! need what each change did (the new confidence, the version, what consolidation
//! retired), which the recorded event does not carry: they are computed by applying
//! the session's memory events to the header's snapshot, kept in [`NotesCache`] so a
//! frame only applies the changes that are new since the last one.

use super::*;
use crate::memory::{Entry, EntryId, MemoryChange};

impl App {
    /// The selected row's position among the memory pane's rows (approaches and their
    /// entries; none when there are no entries).
    pub fn memory_index(&self) -> Option<usize> {
        self.memory_pane.as_ref()?.index(self.session.run.engine.memory()?)
    }

    pub(super) fn toggle_memory(&mut self) {
        self.memory_pane = match self.memory_pane.take() {
            Some(_) => None,
            None => Some(MemoryPane::default()),
        };
    }

    /// Move the memory pane's selection to `to(current, count)` of its rows.
    fn memory_move(&mut self, to: impl Fn(usize, usize) -> usize) {
        if let (Some(pane), Some(memory)) = (self.memory_pane.as_mut(), self.session.run.engine.memory()) {
            pane.move_to(memory, to);
        }
    }

    /// Fold (`open` false) or unfold the selected approach.
    fn memory_fold(&mut self, open: bool) {
        if let (Some(pane), Some(memory)) = (self.memory_pane.as_mut(), self.session.run.engine.memory()) {
            pane.fold(memory, open);
        }
        self.touch();
    }

    /// A key while the memory pane is shown: its own keys (selection, folding, e, p, d, esc), or
    /// `None` for the keymap (stepping, replay, `M` to close, ...).
    pub(super) fn memory_key(&mut self, key: KeyEvent) -> Option<Vec<Effect>> {
        let plain = !key.modifiers.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let page = self.areas[Pane::Tree.index()].height.saturating_sub(4).max(1) as usize / 2;
        match key.code {
            KeyCode::Esc => {
                self.memory_pane = None;
                return Some(Vec::new());
            }
            KeyCode::Char('e') if plain => return Some(self.memory_edit()),
            KeyCode::Char('p') if plain => return Some(self.memory_pin()),
            KeyCode::Char('d') | KeyCode::Delete if plain => return Some(self.memory_remove_ask()),
            _ => {}
        }
        let moved: fn(usize, usize) -> usize = match self.keymap.action_for(&key)? {
            Action::Up => |c: usize, _| c.saturating_sub(1),
            Action::Down => |c: usize, _| c + 1,
            Action::Top => |_, _| 0,
            Action::Bottom => |_, n: usize| n.saturating_sub(1),
            Action::PageUp => {
                self.memory_move(|c, _| c.saturating_sub(page));
                return Some(Vec::new());
            }
            Action::PageDown => {
                self.memory_move(|c, _| c + page);
                return Some(Vec::new());
            }
            Action::Left | Action::Right => {
                self.memory_fold(self.keymap.action_for(&key) == Some(Action::Right));
                return Some(Vec::new());
            }
            _ => return None,
        };
        self.memory_move(moved);
        self.touch();
        Some(Vec::new())
    }

    /// The mouse wheel over the screen while the memory pane is shown moves its selection.
    pub(super) fn memory_mouse(&mut self, mouse: MouseEvent) -> Vec<Effect> {
        match mouse.kind {
            MouseEventKind::ScrollDown => self.memory_move(|c, _| c + 1),
            MouseEventKind::ScrollUp => self.memory_move(|c, _| c.saturating_sub(1)),
            _ => return Vec::new(),
        }
        self.touch();
        Vec::new()
    }

    /// Why the pane cannot act on an entry now, as the message to show.
    fn memory_target(&mut self) -> Result<Entry, Vec<Effect>> {
        if self.session.replay.is_some() {
            // The read-only replay's message, as for any other command.
            return Err(self.command(Command::Pause));
        }
        match (self.session.run.engine.memory(), self.memory_selected()) {
            (None, _) => self.message = Some("this run keeps no memory".into()),
            (Some(m), None) if m.is_empty() => self.message = Some("the memory has no entries".into()),
            (Some(_), None) => self.message = Some("an approach is selected: ↑↓ select one of its entries".into()),
            (Some(_), Some(entry)) => return Ok(entry.clone()),
        }
        self.touch();
        Err(Vec::new())
    }

    fn memory_edit(&mut self) -> Vec<Effect> {
        let entry = match self.memory_target() {
            Ok(entry) => entry,
            Err(effects) => return effects,
        };
        let lines: Vec<String> = entry.content.lines().map(str::to_string).collect();
        let mut editor = TextArea::new(if lines.is_empty() { vec![String::new()] } else { lines });
        editor.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
        editor.move_cursor(ratatui_textarea::CursorMove::Bottom);
        editor.move_cursor(ratatui_textarea::CursorMove::End);
        self.popup = Some(Popup::MemoryEdit { id: entry.id, editor: Box::new(editor) });
        self.touch();
        Vec::new()
    }

    fn memory_pin(&mut self) -> Vec<Effect> {
        let entry = match self.memory_target() {
            Ok(entry) => entry,
            Err(effects) => return effects,
        };
        let change = MemoryChange::Edit { id: entry.id, content: None, confidence: None, pinned: Some(!entry.pinned) };
        self.command(Command::Memory { change })
    }

    fn memory_remove_ask(&mut self) -> Vec<Effect> {
        match self.memory_target() {
            Ok(entry) => {
                self.popup = Some(Popup::MemoryRemove { id: entry.id });
                self.touch();
                Vec::new()
            }
            Err(effects) => effects,
        }
    }

    /// A new text for entry `id` from the edit popup (also used by tests and scripts):
    /// an unchanged text sends nothing.
    pub fn submit_memory_edit(&mut self, id: EntryId, text: &str) -> Vec<Effect> {
        let text = text.trim();
        let current = self.session.run.engine.memory().and_then(|m| m.entry(id)).map(|e| e.content.trim().to_string());
        if current.as_deref() == Some(text) {
            self.message = Some(format!("memory entry #{id} unchanged"));
            self.touch();
            return Vec::new();
        }
        let change = MemoryChange::Edit { id, content: Some(text.to_string()), confidence: None, pinned: None };
        self.command(Command::Memory { change })
    }

    /// A key in one of this module's popups (the popup was taken out of `self.popup`).
    pub(super) fn memory_popup_key(&mut self, key: KeyEvent, popup: Popup) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match popup {
            Popup::MemoryEdit { id, mut editor } => match key.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Enter => self.submit_memory_edit(id, &editor.lines().join("\n")),
                KeyCode::Char('s') if ctrl => self.submit_memory_edit(id, &editor.lines().join("\n")),
                _ => {
                    type_key(&mut editor, key);
                    self.popup = Some(Popup::MemoryEdit { id, editor });
                    Vec::new()
                }
            },
            Popup::MemoryRemove { id } => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') => {
                    self.command(Command::Memory { change: MemoryChange::Remove { id } })
                }
                KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                    self.message = Some(format!("memory entry #{id} kept"));
                    Vec::new()
                }
                _ => {
                    self.popup = Some(Popup::MemoryRemove { id });
                    Vec::new()
                }
            },
            Popup::Causes(mut chooser) => match chooser.key(key.code) {
                crate::tui::state::memory::CauseChosen::Pick(cause) => {
                    self.command(Command::Backtrack { to: None, cause: Some(cause.to_string()) })
                }
                crate::tui::state::memory::CauseChosen::Cancel => {
                    self.message = Some("backtrack cancelled".into());
                    Vec::new()
                }
                crate::tui::state::memory::CauseChosen::Stay => {
                    self.popup = Some(Popup::Causes(chooser));
                    Vec::new()
                }
            },
            other => {
                self.popup = Some(other);
                Vec::new()
            }
        }
    }

    /// `b`: a backtrack, asking first for the cause when the method names `causes`
    /// (`MethodView::backtrack_causes`, passed in so tests can give any list).
    pub fn backtrack_asking(&mut self, causes: &[&'static str]) -> Vec<Effect> {
        // Nothing to backtrack from: the engine says why (recorded), before any cause is asked.
        if causes.is_empty() || self.session.replay.is_some() || self.session.run.engine.backtrack_refusal().is_some() {
            // A replay refuses it with its read-only message.
            return self.command(Command::Backtrack { to: None, cause: None });
        }
        self.popup = Some(Popup::Causes(CauseChooser::new(causes)));
        self.touch();
        Vec::new()
    }
}
