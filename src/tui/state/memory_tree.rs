//! The memory pane's list (`M`) as a tui-tree-widget tree: approach → entries. The
//! approaches come in the order of their most trusted entry, each approach's entries by
//! confidence (ties by id), as [`sorted_entries`] ranks them. The pane owns its state:
//! the selected row (by key, so it stays on an entry when confidences reorder; by
//! position when that row is gone), the approaches folded by hand, and the widget's
//! `TreeState` (drawn from it, so its scroll follows the selection).

use std::cell::RefCell;
use std::collections::BTreeSet;

use tui_tree_widget::{TreeItem, TreeState};

use super::sorted_entries;
use crate::memory::{Entry, EntryId, Memory};

/// A row's key in the widget: `a:` and the approach, or the entry's id.
pub type RowKey = String;

fn approach_key(approach: &str) -> RowKey {
    format!("a:{approach}")
}

/// The memory pane's state.
#[derive(Debug, Default)]
pub struct MemoryPane {
    /// The selected row's key.
    pub key: Option<RowKey>,
    /// The selected row's position among the rows shown, when its key is gone.
    pub selected: usize,
    /// Approaches folded by hand (new approaches show open).
    pub closed: BTreeSet<String>,
    /// tui-tree-widget's state, set from the above before each use.
    pub state: RefCell<TreeState<RowKey>>,
}

/// The entries grouped by approach: approaches in the order of their most trusted
/// entry, the entries of each by confidence.
pub fn by_approach(memory: &Memory) -> Vec<(String, Vec<&Entry>)> {
    let mut groups: Vec<(String, Vec<&Entry>)> = Vec::new();
    for e in sorted_entries(memory) {
        match groups.iter_mut().find(|(a, _)| *a == e.approach) {
            Some((_, entries)) => entries.push(e),
            None => groups.push((e.approach.clone(), vec![e])),
        }
    }
    groups
}

impl MemoryPane {
    /// The widget's items, each row's text from `approach` (name, entries) or `entry`.
    pub fn items<'a>(
        memory: &'a Memory,
        approach: &dyn Fn(&str, &[&Entry]) -> ratatui::text::Line<'a>,
        entry: &dyn Fn(&Entry) -> ratatui::text::Line<'a>,
    ) -> Vec<TreeItem<'a, RowKey>> {
        by_approach(memory)
            .into_iter()
            .map(|(name, entries)| {
                let children: Vec<TreeItem<'a, RowKey>> =
                    entries.iter().map(|e| TreeItem::new_leaf(e.id.to_string(), entry(e))).collect();
                let key = approach_key(&name);
                let text = approach(&name, &entries);
                // Entry ids are unique, so the children's keys are.
                TreeItem::new(key.clone(), text.clone(), children).unwrap_or_else(|_| TreeItem::new_leaf(key, text))
            })
            .collect()
    }

    /// The rows shown (open approaches' entries), top to bottom, as widget paths.
    pub fn rows(&self, memory: &Memory) -> Vec<Vec<RowKey>> {
        let items = Self::items(memory, &|_, _| Default::default(), &|_| Default::default());
        self.sync(memory);
        self.state.borrow().flatten(&items).into_iter().map(|f| f.identifier).collect()
    }

    /// The selected row's position among `rows` (none when there are none).
    fn index_in(&self, rows: &[Vec<RowKey>]) -> Option<usize> {
        if rows.is_empty() {
            return None;
        }
        let Some(key) = &self.key else {
            // Nothing chosen yet: the most trusted entry.
            return rows.iter().position(|p| p.len() == 2).or(Some(0));
        };
        let by_key = rows.iter().position(|p| p.last() == Some(key));
        Some(by_key.unwrap_or(self.selected.min(rows.len() - 1)))
    }

    /// The selected row's position among the rows shown.
    pub fn index(&self, memory: &Memory) -> Option<usize> {
        self.index_in(&self.rows(memory))
    }

    /// The selected entry (none when an approach is selected).
    pub fn entry<'m>(&self, memory: &'m Memory) -> Option<&'m Entry> {
        let rows = self.rows(memory);
        let path = rows.get(self.index_in(&rows)?)?;
        let id: EntryId = path.last()?.parse().ok()?;
        memory.entry(id)
    }

    /// Set the widget's state from the pane's: every approach open but those folded,
    /// and the selected row's path selected.
    pub fn sync(&self, memory: &Memory) {
        let mut state = self.state.borrow_mut();
        state.close_all();
        let groups = by_approach(memory);
        for (name, _) in &groups {
            if !self.closed.contains(name) {
                state.open(vec![approach_key(name)]);
            }
        }
        let mut rows: Vec<Vec<RowKey>> = Vec::new();
        for (name, entries) in &groups {
            rows.push(vec![approach_key(name)]);
            if !self.closed.contains(name) {
                rows.extend(entries.iter().map(|e| vec![approach_key(name), e.id.to_string()]));
            }
        }
        let at = self.index_in(&rows);
        let path = at.and_then(|i| rows.get(i).cloned()).unwrap_or_default();
        if state.selected() != path.as_slice() {
            state.select(path);
        }
    }

    /// Select the row at `to(current, count)` of the rows shown.
    pub fn move_to(&mut self, memory: &Memory, to: impl Fn(usize, usize) -> usize) {
        let rows = self.rows(memory);
        if rows.is_empty() {
            return;
        }
        let current = self.index_in(&rows).unwrap_or(0);
        let next = to(current, rows.len()).min(rows.len() - 1);
        self.selected = next;
        self.key = rows[next].last().cloned();
    }

    /// Left: fold the selected approach, or from an entry go to its approach. Right:
    /// unfold the selected approach.
    pub fn fold(&mut self, memory: &Memory, open: bool) {
        let rows = self.rows(memory);
        let Some(path) = self.index_in(&rows).and_then(|i| rows.get(i)) else { return };
        let approach = path[0].strip_prefix("a:").unwrap_or_default().to_string();
        match (open, path.len()) {
            (true, _) => {
                self.closed.remove(&approach);
            }
            (false, 1) => {
                self.closed.insert(approach);
            }
            (false, _) => self.key = Some(path[0].clone()),
        }
        // The position follows the key in the rows as they are now.
        let rows = self.rows(memory);
        if let Some(i) = self.index_in(&rows) {
            self.selected = i;
        }
    }
}
