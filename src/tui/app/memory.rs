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

use std::collections::BTreeMap;

use super::*;
use crate::memory::{AddOutcome, Applied, Entry, EntryId, Memory, MemoryChange};

/// The entries as the pane lists them: highest confidence first, ties by id.
pub fn sorted_entries(memory: &Memory) -> Vec<&Entry> {
    let mut entries: Vec<&Entry> = memory.entries().iter().collect();
    entries.sort_by(|a, b| b.confidence.total_cmp(&a.confidence).then(a.id.cmp(&b.id)));
    entries
}

/// What this problem did with an entry, read from its memory events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// Times it was used (retrieved into a prompt) on this problem, solved or not.
    pub solved: u32,
    pub unsolved: u32,
    /// Critique signals it got on this problem.
    pub signals: u32,
}

/// `b`'s chooser: the causes the method names, one selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseChooser {
    pub causes: Vec<&'static str>,
    pub selected: usize,
}

/// What a key did to the chooser.
enum Chosen {
    Pick(&'static str),
    Cancel,
    Stay,
}

impl CauseChooser {
    pub fn new(causes: &[&'static str]) -> CauseChooser {
        CauseChooser { causes: causes.to_vec(), selected: 0 }
    }

    /// Arrows move, Enter picks, Esc cancels; a digit jumps to that line (1-based), a
    /// letter to the next cause starting with it (pressed again, the one after).
    fn key(&mut self, code: KeyCode) -> Chosen {
        let n = self.causes.len();
        if n == 0 {
            return Chosen::Cancel;
        }
        match code {
            KeyCode::Esc => return Chosen::Cancel,
            KeyCode::Enter => return self.causes.get(self.selected).map_or(Chosen::Cancel, |c| Chosen::Pick(c)),
            KeyCode::Up => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down | KeyCode::Tab => self.selected = (self.selected + 1) % n,
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = n - 1,
            KeyCode::Char(c) if c.is_ascii_digit() => {
                let i = c.to_digit(10).unwrap_or(0) as usize;
                if (1..=n).contains(&i) {
                    self.selected = i - 1;
                }
            }
            KeyCode::Char(c) => {
                let c = c.to_ascii_lowercase();
                let starts = |i: usize| self.causes[i].chars().next().map(|f| f.to_ascii_lowercase()) == Some(c);
                if let Some(i) = (1..=n).map(|k| (self.selected + k) % n).find(|&i| starts(i)) {
                    self.selected = i;
                }
            }
            _ => {}
        }
        Chosen::Stay
    }
}

/// The transcript line for one memory change, with what applying it did when known.
pub fn memory_note(change: &MemoryChange, applied: Option<&Applied>) -> String {
    let solved = |s: bool| if s { "solved" } else { "not solved" };
    match (change, applied) {
        (MemoryChange::Add { category, approach, .. }, Some(Applied::Added(outcome))) => match outcome {
            AddOutcome::Inserted(id) => format!("memory: added {category} entry #{id} ({approach})"),
            AddOutcome::Duplicate(id) => {
                format!("memory: {category} lesson ({approach}) already in entry #{id}: one more hit")
            }
            AddOutcome::Merged(id) => format!("memory: {category} lesson ({approach}) merged into entry #{id}"),
        },
        (MemoryChange::Add { category, approach, .. }, _) => format!("memory: added a {category} lesson ({approach})"),
        (MemoryChange::RecordUse { id, success }, Some(Applied::Used { confidence, .. })) => {
            format!("memory: entry #{id} used ({}), confidence {confidence:.2}", solved(*success))
        }
        (MemoryChange::RecordUse { id, success }, _) => format!("memory: entry #{id} used ({})", solved(*success)),
        (MemoryChange::AddSignal { id, signal }, applied) => {
            let due = matches!(applied, Some(Applied::Signalled { needs_rewrite: true, .. }));
            let signal = crate::safe_text::clip(&crate::safe_text::one_line(signal), 80);
            format!("memory: entry #{id} critiqued: {signal}{}", if due { " — due for a rewrite" } else { "" })
        }
        (MemoryChange::Rewrite { id, .. }, Some(Applied::Rewritten { version, .. })) => {
            format!("memory: entry #{id} rewritten (v{version})")
        }
        (MemoryChange::Rewrite { id, .. }, _) => format!("memory: entry #{id} rewritten"),
        (MemoryChange::RecordOutcome { approach, success }, Some(Applied::Outcome { reliability, .. })) => {
            let how = if *success { "worked" } else { "failed" };
            format!("memory: {approach} approach {how}, reliability {reliability:.2}")
        }
        (MemoryChange::RecordOutcome { approach, success }, _) => {
            format!("memory: {approach} approach {}", if *success { "worked" } else { "failed" })
        }
        (MemoryChange::Consolidate, Some(Applied::Consolidated(report))) => {
            let ids = |ids: &[EntryId]| ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", ");
            let mut parts = Vec::new();
            if !report.retired.is_empty() {
                parts.push(format!("retired {}", ids(&report.retired)));
            }
            for (kept, absorbed) in &report.merged {
                parts.push(format!("merged #{absorbed} into #{kept}"));
            }
            if parts.is_empty() {
                parts.push("nothing to retire or merge".into());
            }
            format!("memory: consolidated, {}", parts.join(", "))
        }
        (MemoryChange::Consolidate, _) => "memory: consolidated".into(),
        (MemoryChange::Edit { id, content, confidence, pinned }, _) => {
            let mut parts = Vec::new();
            if content.is_some() {
                parts.push("new text".to_string());
            }
            if let Some(c) = confidence {
                parts.push(format!("confidence {c:.2}"));
            }
            match pinned {
                Some(true) => parts.push("pinned".into()),
                Some(false) => parts.push("unpinned".into()),
                None => {}
            }
            format!("memory: entry #{id} edited by hand ({})", parts.join(", "))
        }
        (MemoryChange::Remove { id }, _) => format!("memory: entry #{id} removed by hand"),
        (MemoryChange::Clear, Some(Applied::Cleared { entries })) => format!("memory: cleared ({entries} entries)"),
        (MemoryChange::Clear, _) => "memory: cleared".into(),
        (MemoryChange::Import { entries, .. }, _) => format!("memory: imported {} entries", entries.len()),
    }
}

/// The memory lines computed so far: the snapshot they start from, the changes applied
/// (a prefix of the events' memory changes while the run goes on), the memory after
/// them, and one line per change.
#[derive(Debug, Default)]
pub(super) struct NotesCache {
    snapshot: Option<Memory>,
    changes: Vec<MemoryChange>,
    state: Option<Memory>,
    notes: Vec<String>,
}

impl App {
    /// One transcript line per `Event::Memory` in `self.session.events`, in order.
    pub fn memory_notes(&self) -> Vec<String> {
        let snapshot = self.session.header.memory.as_ref().map(|s| &s.memory);
        let changes: Vec<&MemoryChange> = self
            .session
            .events
            .iter()
            .filter_map(|e| match e {
                Event::Memory { change } => Some(change),
                _ => None,
            })
            .collect();
        // Only this function borrows the cache, and never while it holds it.
        let Ok(mut cache) = self.memory_notes.try_borrow_mut() else {
            return changes.iter().map(|c| memory_note(c, None)).collect();
        };
        {
            let continues = cache.snapshot.as_ref() == snapshot
                && cache.changes.len() <= changes.len()
                && cache.changes.iter().zip(&changes).all(|(a, b)| a == *b);
            if !continues {
                *cache = NotesCache {
                    snapshot: snapshot.cloned(),
                    state: snapshot.cloned(),
                    changes: Vec::new(),
                    notes: Vec::new(),
                };
            }
            for change in &changes[cache.changes.len()..] {
                let applied = cache.state.as_mut().map(|m| {
                    let applied = m.apply(change);
                    m.take_changes();
                    applied
                });
                let note = match applied {
                    Some(Ok(applied)) => memory_note(change, Some(&applied)),
                    Some(Err(e)) => {
                        format!("{} (not applicable to the recorded memory: {e})", memory_note(change, None))
                    }
                    None => memory_note(change, None),
                };
                cache.notes.push(note);
                cache.changes.push((*change).clone());
            }
        }
        cache.notes.clone()
    }

    /// What this problem did with each entry, from its `RecordUse` and `AddSignal` events.
    pub fn memory_uses(&self) -> BTreeMap<EntryId, MemoryUse> {
        let mut uses: BTreeMap<EntryId, MemoryUse> = BTreeMap::new();
        for event in &self.session.events {
            match event {
                Event::Memory { change: MemoryChange::RecordUse { id, success } } => {
                    let u = uses.entry(*id).or_default();
                    if *success {
                        u.solved += 1;
                    } else {
                        u.unsolved += 1;
                    }
                }
                Event::Memory { change: MemoryChange::AddSignal { id, .. } } => {
                    uses.entry(*id).or_default().signals += 1
                }
                _ => {}
            }
        }
        uses
    }

    /// The selected row's position among the memory pane's rows (approaches and their
    /// entries; none when there are no entries).
    pub fn memory_index(&self) -> Option<usize> {
        self.memory_pane.as_ref()?.index(self.session.run.engine.memory()?)
    }

    /// The selected entry of the memory pane (none when an approach is selected).
    pub fn memory_selected(&self) -> Option<&Entry> {
        self.memory_pane.as_ref()?.entry(self.session.run.engine.memory()?)
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
                Chosen::Pick(cause) => self.command(Command::Backtrack { to: None, cause: Some(cause.to_string()) }),
                Chosen::Cancel => {
                    self.message = Some("backtrack cancelled".into());
                    Vec::new()
                }
                Chosen::Stay => {
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
