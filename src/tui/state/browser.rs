//! The session browser (`o`): every recorded session and bundled demo as a tree,
//! folder → task → method → session, newest first, on tui-tree-widget. Typing filters
//! it (the matching sessions stay, with the groups above them); enter opens the
//! selected session as a replay, following it when it is still being written.
//!
//! The component owns its state (the rows, the filter, the widget's `TreeState` with
//! the selection, the open groups and the scroll) and its keys; `App` only holds it in
//! its popup and carries out what a key chose (`Chosen`).

use std::cell::{Cell, RefCell};

use tui_tree_widget::{TreeItem, TreeState};

pub use super::scan::{self, SessionRow};
use super::*;

/// A node's identifier in the widget: `f:`, `t:` or `m:` and the group's name, or the
/// session's row number.
pub type NodeKey = String;

/// One node of the browser's tree: a group (folder, task or method) or a session.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Group { key: NodeKey, label: String, sessions: usize, children: Vec<Node> },
    Session(usize),
}

impl Node {
    pub fn key(&self) -> NodeKey {
        match self {
            Node::Group { key, .. } => key.clone(),
            Node::Session(i) => i.to_string(),
        }
    }
}

/// What a key in the browser asks the app to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Chosen {
    Stay,
    Close,
    /// Open the session of this row.
    Open(usize),
    /// Open the file typed as the filter (no listed session matches it).
    OpenPath(PathBuf),
}

/// The browser's state.
pub struct SessionBrowser {
    /// Every session, newest first, then the demos.
    pub rows: Vec<SessionRow>,
    /// What has been typed: the rows shown match every word of it.
    pub filter: String,
    /// tui-tree-widget's state: the selection, the open groups and the scroll. Drawing
    /// (which sees the app shared) records in it what it drew.
    pub state: RefCell<TreeState<NodeKey>>,
    /// The rows the tree showed at the last frame, for the page keys.
    pub page: Cell<usize>,
}

/// Append `row` under the group `key` of `nodes` (made, labelled `label`, if new).
fn add_under<'a>(nodes: &'a mut Vec<Node>, key: String, label: &str) -> &'a mut Vec<Node> {
    let at = match nodes.iter().position(|n| matches!(n, Node::Group { key: k, .. } if *k == key)) {
        Some(at) => at,
        None => {
            nodes.push(Node::Group { key, label: label.to_string(), sessions: 0, children: Vec::new() });
            nodes.len() - 1
        }
    };
    match &mut nodes[at] {
        Node::Group { sessions, children, .. } => {
            *sessions += 1;
            children
        }
        Node::Session(_) => unreachable!("a group was found or made at this position"),
    }
}

impl SessionBrowser {
    /// A browser over `rows` (newest first), every group open, the newest session selected.
    pub fn new(rows: Vec<SessionRow>) -> SessionBrowser {
        let browser = SessionBrowser {
            rows,
            filter: String::new(),
            state: RefCell::new(TreeState::default()),
            page: Cell::new(10),
        };
        browser.refilter();
        browser
    }

    /// The rows matching the filter (each word of it, case ignored), in order.
    pub fn matching(&self) -> Vec<usize> {
        let words: Vec<String> = self.filter.split_whitespace().map(str::to_lowercase).collect();
        (0..self.rows.len())
            .filter(|&i| {
                if words.is_empty() {
                    return true;
                }
                let hay = self.rows[i].haystack();
                words.iter().all(|w| hay.contains(w.as_str()))
            })
            .collect()
    }

    /// The tree of the matching rows: groups in the order of their newest session.
    pub fn tree(&self) -> Vec<Node> {
        let mut top: Vec<Node> = Vec::new();
        for i in self.matching() {
            let row = &self.rows[i];
            let folder = add_under(&mut top, format!("f:{}", row.folder), &row.folder);
            match &row.read {
                Ok(s) => {
                    let task = add_under(folder, format!("t:{}", s.task), &s.task);
                    add_under(task, format!("m:{}", s.method), &s.method).push(Node::Session(i));
                }
                // An unreadable file has no task or method: it sits in its folder.
                Err(_) => folder.push(Node::Session(i)),
            }
        }
        top
    }

    /// The widget's items for `nodes`, each labelled by `text` (the node and its depth).
    pub fn items<'a>(
        nodes: &[Node],
        depth: usize,
        text: &dyn Fn(&Node, usize) -> ratatui::text::Line<'a>,
    ) -> Vec<TreeItem<'a, NodeKey>> {
        nodes
            .iter()
            .map(|n| match n {
                Node::Group { key, children, .. } => {
                    let children = Self::items(children, depth + 1, text);
                    // Keys are unique among siblings by construction (one group per name).
                    TreeItem::new(key.clone(), text(n, depth), children)
                        .unwrap_or_else(|_| TreeItem::new_leaf(key.clone(), text(n, depth)))
                }
                Node::Session(_) => TreeItem::new_leaf(n.key(), text(n, depth)),
            })
            .collect()
    }

    /// The identifiers of the nodes shown (open groups' children), top to bottom.
    pub fn visible(&self) -> Vec<Vec<NodeKey>> {
        let items = Self::items(&self.tree(), 0, &|_, _| ratatui::text::Line::default());
        self.state.borrow().flatten(&items).into_iter().map(|f| f.identifier).collect()
    }

    /// The row of the selected session, if a session (not a group) is selected.
    pub fn selected_row(&self) -> Option<usize> {
        let state = self.state.borrow();
        let last = state.selected().last()?;
        last.parse().ok().filter(|i: &usize| *i < self.rows.len())
    }

    /// Every group of the tree open, and the selection on the session it was on if it is
    /// still shown, else on the first session shown (the newest).
    fn refilter(&self) {
        let tree = self.tree();
        let mut state = self.state.borrow_mut();
        state.close_all();
        fn open(state: &mut TreeState<NodeKey>, nodes: &[Node], path: &mut Vec<NodeKey>) {
            for n in nodes {
                if let Node::Group { key, children, .. } = n {
                    path.push(key.clone());
                    state.open(path.clone());
                    open(state, children, path);
                    path.pop();
                }
            }
        }
        open(&mut state, &tree, &mut Vec::new());
        let items = Self::items(&tree, 0, &|_, _| ratatui::text::Line::default());
        let shown: Vec<Vec<NodeKey>> = state.flatten(&items).into_iter().map(|f| f.identifier).collect();
        let keep = shown.iter().find(|p| p.as_slice() == state.selected() && !p.is_empty()).cloned();
        let first = shown.iter().find(|p| p.last().is_some_and(|k| k.parse::<usize>().is_ok())).cloned();
        state.select(keep.or(first).or_else(|| shown.first().cloned()).unwrap_or_default());
    }

    /// Select the `n`th shown node from `to(current, count)`.
    fn move_to(&self, to: impl Fn(usize, usize) -> usize) {
        let shown = self.visible();
        if shown.is_empty() {
            return;
        }
        let mut state = self.state.borrow_mut();
        let current = shown.iter().position(|p| p.as_slice() == state.selected()).unwrap_or(0);
        let next = to(current, shown.len()).min(shown.len() - 1);
        state.select(shown[next].clone());
    }

    /// A key: moving, folding, typing the filter, opening (enter) or closing (esc).
    pub fn key(&mut self, key: KeyEvent) -> Chosen {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let page = self.page.get().saturating_sub(1).max(1);
        match key.code {
            KeyCode::Esc => return Chosen::Close,
            KeyCode::Enter => return self.enter(),
            KeyCode::Up => self.move_to(|c, _| c.saturating_sub(1)),
            KeyCode::Down => self.move_to(|c, _| c + 1),
            KeyCode::PageUp => self.move_to(|c, _| c.saturating_sub(page)),
            KeyCode::PageDown => self.move_to(|c, _| c + page),
            KeyCode::Home => self.move_to(|_, _| 0),
            KeyCode::End => self.move_to(|_, n| n - 1),
            KeyCode::Left => {
                self.state.borrow_mut().key_left();
            }
            KeyCode::Right => {
                self.state.borrow_mut().key_right();
            }
            KeyCode::Backspace => {
                self.filter.pop();
                self.refilter();
            }
            KeyCode::Char('u') | KeyCode::Char('U') if ctrl => {
                self.filter.clear();
                self.refilter();
            }
            KeyCode::Char(c) if !ctrl && !alt => {
                self.filter.push(c);
                self.refilter();
            }
            _ => {}
        }
        Chosen::Stay
    }

    /// Enter: open the selected session; with no session shown, the filter as a file's
    /// path; on a group, fold or unfold it.
    fn enter(&mut self) -> Chosen {
        if let Some(row) = self.selected_row() {
            return Chosen::Open(row);
        }
        let typed = self.filter.trim();
        if !typed.is_empty() && self.matching().is_empty() {
            return Chosen::OpenPath(PathBuf::from(typed));
        }
        self.state.borrow_mut().toggle_selected();
        Chosen::Stay
    }
}
