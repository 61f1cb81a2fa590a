//! The explorer's settings from the config file: the keymap with the file's
//! `[[keymap]]` overrides, the themes (built-in and the user's), and which theme.
//! The config module only holds the raw data; it is turned into these here.

use crate::config::Config;
use crate::tui::keymap::Keymap;
use crate::tui::theme::ThemeSet;

/// The default keymap with the file's `[[keymap]]` overrides applied, and warnings
/// for entries that had to be skipped.
pub fn build_keymap(cfg: &Config) -> (Keymap, Vec<String>) {
    Keymap::default().with_overrides(&cfg.keymap, &cfg.source())
}

/// Built-in themes plus the user's from [`Config::themes_dir`].
pub fn theme_set(cfg: &Config) -> ThemeSet {
    ThemeSet::load(cfg.themes_dir().as_deref())
}

/// Keymap, themes and theme name from the config file and `--theme`; problems found go to `notes`.
/// An unknown `--theme` is an error listing the known ones (the config file's `theme`
/// is only warned about, like its other keys).
pub fn ui_settings(
    cfg: &Config,
    theme_flag: Option<String>,
    notes: &mut Vec<String>,
) -> Result<(Keymap, ThemeSet, String), String> {
    let (keymap, warnings) = build_keymap(cfg);
    notes.extend(warnings);
    let themes = theme_set(cfg);
    notes.extend(themes.warnings().iter().cloned());
    if let Some(flag) = theme_flag.as_deref().filter(|name| themes.get(name).is_none()) {
        let flag = crate::userfile::clip(flag, 64);
        let dir = cfg.themes_dir().map(|d| format!(", or a file {}/{flag}.toml", d.display())).unwrap_or_default();
        return Err(format!("--theme {flag:?}: no such theme (known: {}{dir})", themes.names().join(", ")));
    }
    let wanted = theme_flag.or(cfg.theme.clone()).unwrap_or_else(|| "dark".into());
    if themes.get(&wanted).is_none() {
        notes.push(format!(
            "{}: theme: no theme {:?} (known: {}); using {}",
            cfg.source(),
            crate::userfile::clip(&wanted, 64),
            themes.names().join(", "),
            themes.get_or_first(&wanted).name
        ));
    }
    Ok((keymap, themes, wanted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::Action;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    #[test]
    fn the_files_keymap_overrides_apply_and_bad_ones_are_named() {
        let text = "[[keymap]]\non = \"ctrl-s\"\nrun = \"save_as\"\ndesc = \"Save\"\n\
                    [[keymap]]\non = [\"q\"]\nrun = \"none\"\n[[keymap]]\non = 7\nrun = \"step\"\n\
                    [[keymap]]\non = \"y\"\nrun = \"stepp\"\n";
        let (config, warnings) = Config::parse(text, "config.toml");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let (keymap, warnings) = build_keymap(&config);
        // Entry numbers survive the skipped entry: the bad action is entry 4.
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("config.toml: keymap entry 4: unknown action \"stepp\""), "{}", warnings[0]);
        let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(keymap.action_for(&ctrl_s), Some(Action::SaveAs));
        assert_eq!(keymap.action_for(&KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE)), None);
    }

    #[test]
    fn user_themes_are_next_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "theme = \"mine\"\n").unwrap();
        std::fs::create_dir(dir.path().join("themes")).unwrap();
        std::fs::write(dir.path().join("themes/mine.toml"), "inherits = \"light\"\n").unwrap();
        let (config, warnings) = Config::load_from(dir.path());
        assert!(warnings.is_empty(), "{warnings:?}");
        let mut notes = Vec::new();
        let (_, themes, theme) = ui_settings(&config, None, &mut notes).unwrap();
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(theme, "mine");
        assert!(themes.get("mine").is_some());
        let (_, _, theme) = ui_settings(&config, Some("light".into()), &mut notes).unwrap();
        assert_eq!(theme, "light", "the flag beats the file");
    }

    #[test]
    fn an_unknown_theme_flag_is_an_error_listing_the_known_ones_and_the_files_is_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), "theme = \"nope\"\n").unwrap();
        let (config, _) = Config::load_from(dir.path());
        let mut notes = Vec::new();
        let Err(e) = ui_settings(&config, Some("solarised".into()), &mut notes) else {
            panic!("an unknown --theme fails")
        };
        assert!(e.starts_with("--theme \"solarised\": no such theme (known: "), "{e}");
        assert!(e.contains("dark") && e.contains("high-contrast") && !e.contains('\n'), "{e}");
        let (_, _, theme) = ui_settings(&config, None, &mut notes).unwrap();
        assert_eq!(theme, "nope");
        assert!(notes[0].contains("config.toml: theme: no theme \"nope\""), "{notes:?}");
    }
}
