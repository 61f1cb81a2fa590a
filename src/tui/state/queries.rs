//! What drawing asks of the state: the selection, titles, notes and positions, each
//! read (or brought up to date with the engine shown, for the find and the filter)
//! here so `tui/ui` needs nothing of `tui/app`.

use std::collections::BTreeMap;

use super::*;
use crate::engine::Event;
use crate::memory::{Entry, EntryId, MemoryChange};
use crate::session::Caption;
use memory::NotesCache;

impl App {
    pub fn selected(&self) -> NodeId {
        self.tree
            .state
            .selected()
            .last()
            .map(|&i| NodeId(i))
            .filter(|&n| self.session.run.engine.tree().contains(n))
            .unwrap_or(NodeId(0))
    }

    /// Whether the selection follows the newest node.
    pub fn following(&self) -> bool {
        self.tree.following()
    }

    /// "problem 2/6" for the header, when the explorer holds several problems and shows
    /// one of them (not a session opened with `o`).
    pub fn problem_position(&self) -> Option<String> {
        let l = self.problems.as_ref()?;
        let p = &l.problems[l.at];
        let ours = !l.away && self.session.header.input == p.input && self.session.header.index == p.index;
        ours.then(|| format!("problem {}/{}", l.at + 1, l.problems.len()))
    }

    /// The selected entry of the memory pane (none when an approach is selected).
    pub fn memory_selected(&self) -> Option<&Entry> {
        self.memory_pane.as_ref()?.entry(self.session.run.engine.memory()?)
    }

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

    /// The caption for the replay cursor (the last one at or before it), and its number
    /// among the session's captions (1-based) with their count.
    pub fn caption(&self) -> Option<(&Caption, usize, usize)> {
        let r = self.session.replay.as_ref()?;
        let i = r.captions.iter().rposition(|c| c.at <= r.cursor)?;
        Some((&r.captions[i], i + 1, r.captions.len()))
    }

    /// The header's word on following: `following` at the live end, else how many inputs behind.
    pub fn follow_note(&self) -> Option<String> {
        self.followed.as_ref()?;
        let r = self.session.replay.as_ref()?;
        Some(if r.cursor >= r.total {
            "following".to_string()
        } else {
            format!("following, {} behind", r.total - r.cursor)
        })
    }

    /// What the tree pane's title says of the find: `/re/ 3 of 17` on a match, else the count.
    pub fn find_title(&self, selected: NodeId) -> Option<String> {
        let find = self.find.as_ref()?;
        let n = find.count();
        Some(match find.position(selected.0) {
            Some(i) => format!("/{}/ {} of {n}", find.query, i + 1),
            None => format!("/{}/ {n} match{}", find.query, if n == 1 { "" } else { "es" }),
        })
    }

    /// Bring the filter's and the find's nodes up to date with the engine shown (a walk
    /// of the tree when it changed, nothing otherwise). Called before each frame and
    /// before moving from match to match.
    pub fn refresh_found(&mut self) {
        self.refresh_filter();
        let key = (self.engine_key(), self.filter_generation);
        let Some(mut find) = self.find.take() else { return };
        if find.key != Some(key) {
            let state = &self.tree.state;
            find.compute(&self.session.run.engine, |id| state.shows(id));
            find.key = Some(key);
        }
        self.find = Some(find);
    }

    /// What the tree pane's title says of the filter.
    pub fn filter_title(&self) -> Option<String> {
        self.filter.as_ref().map(|f| format!("filter {}: {}", f.spec, f.matched))
    }

    /// Bring the filter's shown nodes up to date with the engine (a walk of the tree when
    /// it changed, nothing otherwise).
    pub(crate) fn refresh_filter(&mut self) {
        let key = self.engine_key();
        let Some(mut filter) = self.filter.take() else { return };
        // A tree pane made afresh (a new run, a session opened) has lost the filter: set it again.
        if filter.key != Some(key) || !self.tree.state.filtered() {
            let engine = &self.session.run.engine;
            let tree = engine.tree();
            let mut shown = vec![false; tree.len()];
            shown[tree.root().0] = true;
            let mut matched = 0;
            for node in tree.nodes() {
                if !filter.meets(engine, node) {
                    continue;
                }
                matched += 1;
                // The node and its ancestors, up to the first one already shown.
                let mut at = Some(node.id);
                while let Some(id) = at.filter(|id| !shown[id.0]) {
                    shown[id.0] = true;
                    at = tree.node(id).parent;
                }
            }
            filter.matched = matched;
            filter.key = Some(key);
            self.tree.state.set_filter(Some(shown));
            self.filter_generation += 1;
        }
        self.filter = Some(filter);
    }
}
