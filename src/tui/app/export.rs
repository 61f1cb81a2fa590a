//! `X`: export the tree on screen (a replay's tree at its cursor, a live run's tree as
//! recorded so far) to a file. A one-line popup asks where, prefilled with a path next
//! to the session; the file's ending picks the format (`.json`, `.dot`/`.gv`,
//! `.mmd`/`.mermaid`, `.otlp.json`/`.otel.json`), or a bare format name takes the
//! prefilled path with that format's ending. The message line says what was written.

use std::path::{Path, PathBuf};

use ratatui_textarea::TextArea;

use super::{unique_path, App, Popup, Prompting};
use crate::export::{self, Format, Options};
use crate::session::replay;

/// The format a path's ending names.
pub fn format_for(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".otlp.json") || name.ends_with(".otel.json") {
        Some(Format::Otel)
    } else if name.ends_with(".json") {
        Some(Format::Json)
    } else if name.ends_with(".dot") || name.ends_with(".gv") {
        Some(Format::Dot)
    } else if name.ends_with(".mmd") || name.ends_with(".mermaid") {
        Some(Format::Mermaid)
    } else {
        None
    }
}

impl App {
    /// Where an export in `format` goes by default: next to the session, named after it.
    fn export_default(&self, format: Format) -> Option<PathBuf> {
        let session = self.session_path()?;
        let dir = session.parent().map(Path::to_path_buf).unwrap_or_default();
        let stem = session.file_stem()?.to_string_lossy().into_owned();
        let at = self.session.replay.as_ref().filter(|r| r.cursor < r.total).map(|r| format!("-at{}", r.cursor));
        Some(unique_path(&dir, &format!("{stem}{}.{}", at.unwrap_or_default(), format.extension())))
    }

    /// `X`: ask where to export (the default path for DOT prefilled).
    pub(super) fn export_popup(&mut self) {
        match self.export_default(Format::Dot) {
            Some(path) => {
                let mut editor = Box::new(TextArea::new(vec![path.display().to_string()]));
                editor.move_cursor(ratatui_textarea::CursorMove::End);
                self.popup = Some(Popup::Ask { what: Prompting::Export, editor });
            }
            None => self.message = Some("nothing recorded to export yet (no session file)".into()),
        }
    }

    /// The answer to the export popup: a path (its ending picks the format) or a format name.
    pub(super) fn export_answer(&mut self, text: &str) {
        self.message = Some(match self.export_to(text.trim()) {
            Ok(line) | Err(line) => line,
        });
    }

    fn export_to(&mut self, text: &str) -> Result<String, String> {
        let (path, format) = match Format::parse(text) {
            Ok(format) => (self.export_default(format).ok_or("no session file to name the export after")?, format),
            Err(_) if text.is_empty() => return Err("export cancelled: no file named".into()),
            Err(_) => {
                let path = PathBuf::from(text);
                let format = format_for(&path).ok_or_else(|| {
                    format!(
                        "{text}: end the name in .json, .dot, .mmd or .otlp.json (or type json, dot, mermaid or otel)"
                    )
                })?;
                (path, format)
            }
        };
        let prompts = self.session.setup.prompts.clone();
        // The tree on screen: a replay's at its cursor, a live run's as recorded.
        let (session, limit) = match &self.session.replay {
            Some(r) => ((*r.session).clone(), Some(r.cursor)),
            None => {
                let file = self.session_path().ok_or("nothing recorded to export yet (no session file)")?;
                (crate::session::Session::load(&file).map_err(|e| format!("could not export: {e}"))?, None)
            }
        };
        let rebuilt =
            replay::rebuild(&session, prompts.as_deref(), limit).map_err(|e| format!("could not export: {e}"))?;
        let options = Options { start_unix_nanos: export::start_nanos(&session.path, rebuilt.wall_ms) };
        let out = export::export(&session, &rebuilt, format, &options);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("could not export to {}: {e}", path.display()))?;
        }
        std::fs::write(&path, out).map_err(|e| format!("could not export to {}: {e}", path.display()))?;
        Ok(format!("exported the tree ({format}, {} nodes) to {}", rebuilt.engine.tree().len(), path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ending_names_the_format() {
        assert_eq!(format_for(Path::new("a/b.otlp.json")), Some(Format::Otel));
        assert_eq!(format_for(Path::new("b.JSON")), Some(Format::Json));
        assert_eq!(format_for(Path::new("b.gv")), Some(Format::Dot));
        assert_eq!(format_for(Path::new("b.mmd")), Some(Format::Mermaid));
        assert_eq!(format_for(Path::new("b.svg")), None);
    }
}
