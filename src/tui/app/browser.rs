//! The session browser (`o`): every recorded session and bundled demo as a tree,
//! folder → task → method → session, newest first, on tui-tree-widget. Typing filters
//! it (the matching sessions stay, with the groups above them); enter opens the
//! selected session as a replay, following it when it is still being written.
//!
//! The component owns its state (the rows, the filter, the widget's `TreeState` with
//! the selection, the open groups and the scroll) and its keys; `App` only holds it in
//! its popup and carries out what a key chose (`Chosen`).

use super::*;
use crate::tui::state::scan;

impl App {
    /// `o`: the session browser over the sessions folder and the bundled demos.
    pub fn open_popup(&mut self) {
        let rows = scan::scan(&self.session.setup.sessions_dir, std::time::SystemTime::now());
        self.popup = Some(Popup::Open(Box::new(SessionBrowser::new(rows))));
        self.touch();
    }

    pub(super) fn open_popup_key(&mut self, key: KeyEvent, mut browser: Box<SessionBrowser>) -> Vec<Effect> {
        let opened = match browser.key(key) {
            Chosen::Stay => {
                self.popup = Some(Popup::Open(browser));
                return Vec::new();
            }
            Chosen::Close => return Vec::new(),
            Chosen::Open(row) => {
                let row = &browser.rows[row];
                self.open_browsed(&row.source, row.live())
            }
            Chosen::OpenPath(path) => self.open_browsed(&OpenSource::File(path), false),
        };
        if let Err(e) = opened {
            // Stay in the browser, so another session (or a corrected path) can be chosen.
            self.message = Some(format!("cannot open: {}", crate::safe_text::one_line(&e)));
            self.popup = Some(Popup::Open(browser));
        }
        Vec::new()
    }

    /// Open a session chosen in the browser: a live one is followed as it is written
    /// (as `replay --follow` does), any other opened as it stands.
    pub fn open_browsed(&mut self, source: &OpenSource, live: bool) -> Result<(), String> {
        // Whatever was followed before is not what is shown now.
        self.followed = None;
        match source {
            OpenSource::File(path) if live => {
                let (session, read) = read_written(path)?;
                self.open_replay(session)?;
                if let Some(list) = self.problems.as_mut() {
                    list.away = true;
                }
                self.follow_file(read);
                self.message = Some(format!("following {} as it is written (f forks a live run)", shown_path(path)));
                Ok(())
            }
            _ => self.open_source(source),
        }
    }
}
