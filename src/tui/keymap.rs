//! Keys to actions. The default keymap is `assets/keymap.toml` (compiled in); the
//! user's `[[keymap]]` entries in config.toml replace bindings key by key. Every
//! binding carries a description, and the help popup is generated from them.
//!
//! Key syntax: `"space" "enter" "tab" "backtab" "esc" "up" "down" "left" "right"
//! "pageup" "pagedown" "home" "end" "backspace" "delete" "insert" "f1".."f12"`, or a
//! single character (`"a"`, `"R"`, `"?"`, `"["`), with optional modifiers
//! `ctrl-`, `alt-`, `shift-` (`"ctrl-c"`, `"alt-x"`, `"shift-tab"` = `"backtab"`).
//! Letters are case sensitive: `"R"` and `"shift-r"` are the same key.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use thiserror::Error;

use crate::config::raw::toml_error_message;
pub use crate::config::raw::{raw_bindings_from_value, RawBinding};
use crate::tui::action::Action;

/// The default keymap, compiled in. A test parses it, so loading it cannot fail at runtime.
pub const DEFAULT_KEYMAP: &str = include_str!("../../assets/keymap.toml");

/// The `run` values that unbind a key instead of binding it.
const UNBIND: [&str; 2] = ["none", "noop"];

/// One key with its modifiers, in a canonical form: characters never carry SHIFT
/// (the case of a letter says it), and shift-tab is always `BackTab`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeySpec {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

/// A key string that is not in the key syntax.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown key \"{0}\"")]
pub struct KeyParseError(pub String);

impl KeySpec {
    pub fn new(code: KeyCode, modifiers: KeyModifiers) -> KeySpec {
        // Terminals disagree on whether 'R' comes with SHIFT, '?' with SHIFT, and
        // shift-tab as Tab+SHIFT or BackTab; fold all of them into one form.
        let mut modifiers = modifiers;
        let code = match code {
            KeyCode::Char(c) if modifiers.contains(KeyModifiers::SHIFT) => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::Char(single_uppercase(c))
            }
            KeyCode::Tab if modifiers.contains(KeyModifiers::SHIFT) => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            KeyCode::BackTab => {
                modifiers.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            other => other,
        };
        KeySpec { code, modifiers }
    }

    /// The key a crossterm event stands for, in canonical form.
    pub fn from_event(event: &KeyEvent) -> KeySpec {
        KeySpec::new(event.code, event.modifiers)
    }

    /// Parse the key syntax described in the module docs.
    pub fn parse(text: &str) -> Result<KeySpec, KeyParseError> {
        let err = || KeyParseError(text.to_string());
        let mut rest = text;
        let mut modifiers = KeyModifiers::NONE;
        // A lone character is always a key, so "-" and "ctrl--" work.
        while rest.chars().count() > 1 {
            let lower = rest.to_ascii_lowercase();
            let found = MODIFIER_NAMES.iter().find(|(name, _)| lower.starts_with(name) && lower.len() > name.len());
            match found {
                Some((name, flag)) => {
                    modifiers |= *flag;
                    rest = &rest[name.len()..];
                }
                None => break,
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (None, _) => return Err(err()),
            (Some(c), None) => KeyCode::Char(c),
            _ => named_key(&rest.to_ascii_lowercase()).ok_or_else(err)?,
        };
        Ok(KeySpec::new(code, modifiers))
    }
}

const MODIFIER_NAMES: [(&str, KeyModifiers); 6] = [
    ("ctrl-", KeyModifiers::CONTROL),
    ("control-", KeyModifiers::CONTROL),
    ("alt-", KeyModifiers::ALT),
    ("shift-", KeyModifiers::SHIFT),
    ("super-", KeyModifiers::SUPER),
    ("meta-", KeyModifiers::META),
];

fn single_uppercase(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn named_key(name: &str) -> Option<KeyCode> {
    let code = match name {
        "space" => KeyCode::Char(' '),
        "enter" | "return" => KeyCode::Enter,
        "tab" => KeyCode::Tab,
        "backtab" => KeyCode::BackTab,
        "esc" | "escape" => KeyCode::Esc,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pageup" | "pgup" => KeyCode::PageUp,
        "pagedown" | "pgdn" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "insert" | "ins" => KeyCode::Insert,
        _ => {
            let n: u8 = name.strip_prefix('f')?.parse().ok()?;
            if !(1..=24).contains(&n) {
                return None;
            }
            KeyCode::F(n)
        }
    };
    Some(code)
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (flag, name) in [
            (KeyModifiers::CONTROL, "ctrl-"),
            (KeyModifiers::ALT, "alt-"),
            (KeyModifiers::SUPER, "super-"),
            (KeyModifiers::META, "meta-"),
            (KeyModifiers::SHIFT, "shift-"),
        ] {
            if self.modifiers.contains(flag) {
                f.write_str(name)?;
            }
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("backtab"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Up => f.write_str("up"),
            KeyCode::Down => f.write_str("down"),
            KeyCode::Left => f.write_str("left"),
            KeyCode::Right => f.write_str("right"),
            KeyCode::PageUp => f.write_str("pageup"),
            KeyCode::PageDown => f.write_str("pagedown"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Delete => f.write_str("delete"),
            KeyCode::Insert => f.write_str("insert"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{}", format!("{other:?}").to_lowercase()),
        }
    }
}

impl FromStr for KeySpec {
    type Err = KeyParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KeySpec::parse(s)
    }
}

/// ctrl-c, the key that always quits (see [`Keymap::with_overrides`]).
pub fn is_ctrl_c(key: &KeyEvent) -> bool {
    KeySpec::from_event(key) == KeySpec::new(KeyCode::Char('c'), KeyModifiers::CONTROL)
}

/// One bound action: the keys that run it and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub keys: Vec<KeySpec>,
    pub action: Action,
    pub desc: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeymapError {
    /// The file is not valid TOML or not shaped like a keymap.
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// One `[[keymap]]` entry is wrong.
    #[error("{file}: keymap entry {entry}: {message}")]
    Entry { file: String, entry: usize, message: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keymap {
    bindings: Vec<Binding>,
    index: HashMap<KeySpec, Action>,
}

impl Default for Keymap {
    /// The compiled-in keymap (a test guarantees it parses; an empty keymap otherwise).
    fn default() -> Keymap {
        let mut keymap = Keymap::from_toml(DEFAULT_KEYMAP, "assets/keymap.toml")
            .unwrap_or_else(|_| Keymap::from_bindings(Vec::new()));
        // Each registered pane on its own key (a test holds that no two claim one key).
        for action in Action::all().into_iter().filter(|a| matches!(a, Action::Pane(_))) {
            let Action::Pane(i) = action else { continue };
            let Some(kind) = super::panes::kind(i) else { continue };
            let Ok(key) = KeySpec::parse(kind.key) else { continue };
            if !keymap.index.contains_key(&key) {
                keymap.bindings.push(Binding { keys: vec![key], action, desc: kind.about.to_string() });
            }
        }
        keymap.reindex();
        keymap
    }
}

impl Keymap {
    fn from_bindings(bindings: Vec<Binding>) -> Keymap {
        let mut keymap = Keymap { bindings, index: HashMap::new() };
        keymap.reindex();
        keymap
    }

    fn reindex(&mut self) {
        self.bindings.retain(|b| !b.keys.is_empty());
        self.index =
            self.bindings.iter().flat_map(|b| b.keys.iter().map(move |k| (*k, b.action))).collect::<HashMap<_, _>>();
    }

    /// Parse a whole keymap file strictly: any bad entry, or a key bound twice, is an error.
    pub fn from_toml(text: &str, source: &str) -> Result<Keymap, KeymapError> {
        let file_err = |message: String| KeymapError::File { file: source.to_string(), message };
        let table: toml::Table = toml::from_str(text).map_err(|e| file_err(toml_error_message(&e, text)))?;
        let (raws, problems) = raw_bindings_from_value(table.get("keymap"));
        if let Some((entry, message)) = problems.into_iter().next() {
            return Err(match entry {
                0 => file_err(message),
                entry => KeymapError::Entry { file: source.to_string(), entry, message },
            });
        }
        let mut bindings = Vec::new();
        let mut seen: HashMap<KeySpec, usize> = HashMap::new();
        for raw in &raws {
            let entry_err =
                |message: String| KeymapError::Entry { file: source.to_string(), entry: raw.entry, message };
            let binding = parse_raw(raw, |_| String::new()).map_err(entry_err)?;
            let Some(binding) = binding else {
                return Err(entry_err(format!("\"{}\" unbinds keys, which only makes sense in overrides", raw.run)));
            };
            for key in &binding.keys {
                if let Some(first) = seen.insert(*key, raw.entry) {
                    return Err(entry_err(format!("key \"{key}\" is already bound by entry {first}")));
                }
            }
            bindings.push(binding);
        }
        Ok(Keymap::from_bindings(bindings))
    }

    /// This keymap with user entries applied: each entry's keys are taken away from
    /// whatever they were bound to, then bound to its action (or left unbound for
    /// `run = "none"`). A bad entry is skipped with a warning naming `source` and the entry.
    /// ctrl-c stays bound to quit: an entry that rebinds or unbinds it is warned about and
    /// has its other keys applied.
    pub fn with_overrides(&self, overrides: &[RawBinding], source: &str) -> (Keymap, Vec<String>) {
        let mut keymap = self.clone();
        let mut warnings = Vec::new();
        let ctrl_c = KeySpec::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        for (position, raw) in overrides.iter().enumerate() {
            let entry = if raw.entry == 0 { position + 1 } else { raw.entry };
            let fallback_desc = |action: Action| self.desc_for(action);
            match parse_raw(raw, fallback_desc) {
                Err(message) => warnings.push(format!("{source}: keymap entry {entry}: {message}")),
                Ok(mut binding) => {
                    let mut keys: Vec<KeySpec> = match &binding {
                        Some(b) => b.keys.clone(),
                        None => raw.on.iter().filter_map(|k| KeySpec::parse(k).ok()).collect(),
                    };
                    let quits = binding.as_ref().is_some_and(|b| b.action == Action::Quit);
                    if keys.contains(&ctrl_c) && !quits {
                        warnings.push(format!(
                            "{source}: keymap entry {entry}: ctrl-c always quits; its binding of ctrl-c is ignored"
                        ));
                        keys.retain(|k| *k != ctrl_c);
                        if let Some(b) = binding.as_mut() {
                            b.keys.retain(|k| *k != ctrl_c);
                        }
                    }
                    for existing in &mut keymap.bindings {
                        existing.keys.retain(|k| !keys.contains(k));
                    }
                    if let Some(binding) = binding {
                        keymap.bindings.push(binding);
                    }
                    keymap.reindex();
                }
            }
        }
        (keymap, warnings)
    }

    /// The action bound to a key press (or repeat); releases are ignored.
    pub fn action_for(&self, key: &KeyEvent) -> Option<Action> {
        if key.kind == KeyEventKind::Release {
            return None;
        }
        self.index.get(&KeySpec::from_event(key)).copied()
    }

    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }

    /// Every key bound to `action`, in keymap order.
    pub fn keys_for(&self, action: Action) -> Vec<KeySpec> {
        self.bindings.iter().filter(|b| b.action == action).flat_map(|b| b.keys.iter().copied()).collect()
    }

    /// The first key for `action` as text (for hints such as "? help"), if any.
    pub fn key_hint(&self, action: Action) -> Option<String> {
        self.keys_for(action).first().map(ToString::to_string)
    }

    /// Rows for the help popup, in `Action::all()` order, one per bound action:
    /// (keys joined like "up, k", action, description).
    pub fn help(&self) -> Vec<(String, Action, String)> {
        Action::all()
            .into_iter()
            .filter_map(|action| {
                let keys = self.keys_for(action);
                if keys.is_empty() {
                    return None;
                }
                let keys = keys.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                Some((keys, action, self.desc_for(action)))
            })
            .collect()
    }

    /// The first non-empty description of `action`, or its name in words.
    fn desc_for(&self, action: Action) -> String {
        self.bindings
            .iter()
            .filter(|b| b.action == action && !b.desc.trim().is_empty())
            .map(|b| b.desc.clone())
            .next()
            .unwrap_or_else(|| action.name().replace('_', " "))
    }
}

/// Turn one entry into a binding; `Ok(None)` means "unbind these keys".
fn parse_raw(raw: &RawBinding, fallback_desc: impl Fn(Action) -> String) -> Result<Option<Binding>, String> {
    if raw.on.is_empty() {
        return Err("`on` lists no keys".to_string());
    }
    let keys = raw.on.iter().map(|k| KeySpec::parse(k).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
    let run = raw.run.trim();
    if UNBIND.contains(&run) {
        return Ok(None);
    }
    let action = Action::all().into_iter().find(|a| a.name() == run).ok_or_else(|| {
        let known = Action::all().iter().map(|a| a.name()).collect::<Vec<_>>().join(", ");
        format!("unknown action \"{run}\" (known: {known}, or none to unbind)")
    })?;
    let desc = match &raw.desc {
        Some(desc) if !desc.trim().is_empty() => desc.trim().to_string(),
        _ => fallback_desc(action),
    };
    Ok(Some(Binding { keys, action, desc }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyEventKind, KeyEventState};
    use std::collections::HashSet;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    fn raw(on: &str, run: &str) -> RawBinding {
        RawBinding { on: vec![on.to_string()], run: run.to_string(), desc: None, entry: 0 }
    }

    #[test]
    fn every_syntax_round_trips() {
        let canonical = [
            "space",
            "enter",
            "tab",
            "backtab",
            "esc",
            "up",
            "down",
            "left",
            "right",
            "pageup",
            "pagedown",
            "home",
            "end",
            "backspace",
            "delete",
            "insert",
            "a",
            "R",
            "?",
            "[",
            "]",
            "{",
            "}",
            "+",
            "-",
            "=",
            "*",
            "ctrl-c",
            "alt-x",
            "ctrl-alt-delete",
            "shift-up",
            "ctrl--",
        ];
        for text in canonical.into_iter().map(String::from).chain((1..=12).map(|n| format!("f{n}"))) {
            let spec = KeySpec::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(spec.to_string(), text, "display of {text}");
            assert_eq!(KeySpec::parse(&spec.to_string()), Ok(spec));
        }
    }

    #[test]
    fn aliases_fold_to_one_form() {
        let same = [
            ("shift-tab", "backtab"),
            ("shift-r", "R"),
            ("shift-R", "R"),
            ("shift-?", "?"),
            ("Enter", "enter"),
            ("CTRL-c", "ctrl-c"),
            ("F5", "f5"),
            ("escape", "esc"),
            (" ", "space"),
            ("control-c", "ctrl-c"),
        ];
        for (alias, canonical) in same {
            assert_eq!(KeySpec::parse(alias).map(|k| k.to_string()).as_deref(), Ok(canonical), "{alias}");
        }
        assert_ne!(KeySpec::parse("r"), KeySpec::parse("R"));
        assert_eq!(KeySpec::parse("ctrl-c").unwrap(), KeySpec::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    }

    #[test]
    fn bad_keys_are_named() {
        for bad in ["spcae", "", "ctrl-", "f13x", "f0", "ctrl-foo", "hyper"] {
            assert_eq!(KeySpec::parse(bad), Err(KeyParseError(bad.to_string())));
        }
        assert_eq!(KeySpec::parse("spcae").unwrap_err().to_string(), "unknown key \"spcae\"");
    }

    #[test]
    fn default_keymap_parses_binds_everything_once() {
        let file = Keymap::from_toml(DEFAULT_KEYMAP, "assets/keymap.toml").unwrap();
        let keymap = Keymap::default();
        // The default is the file's bindings, then each registered pane's on its own key
        // (a pane whose key the file binds would have none: the loop below says so).
        assert_eq!(keymap.bindings()[..file.bindings().len()], file.bindings()[..]);
        assert_eq!(keymap.bindings().len(), file.bindings().len() + crate::tui::panes::PANES.len());
        for action in Action::all() {
            assert!(!keymap.keys_for(action).is_empty(), "{action:?} has no key");
        }
        let mut seen = HashSet::new();
        for binding in keymap.bindings() {
            assert!(!binding.desc.trim().is_empty(), "{:?} has no description", binding.action);
            for key in &binding.keys {
                assert!(seen.insert(*key), "{key} bound twice");
            }
        }
        let help = keymap.help();
        assert_eq!(help.len(), Action::all().len());
        assert!(help.iter().map(|(_, a, _)| *a).eq(Action::all()));
        let up = help.iter().find(|(_, a, _)| *a == Action::Up).unwrap();
        assert_eq!(up.0, "up, k");
        let quit = help.iter().find(|(_, a, _)| *a == Action::Quit).unwrap();
        assert_eq!(quit.0, "q, ctrl-c");
    }

    #[test]
    fn required_default_keys() {
        let keymap = Keymap::default();
        let expect = [
            ("space", Action::Step),
            ("r", Action::RunPause),
            ("R", Action::Restart),
            ("enter", Action::Continue),
            ("?", Action::Help),
            ("ctrl-c", Action::Quit),
            ("G", Action::Bottom),
            ("g", Action::Top),
            ("backtab", Action::FocusPrev),
            ("P", Action::ReplayPlay),
            ("p", Action::Prune),
            ("+", Action::ReplayFaster),
            ("=", Action::ReplayFaster),
            ("-", Action::ReplaySlower),
            ("{", Action::ReplayMarkBack),
            ("}", Action::ReplayMarkForward),
            ("[", Action::ReplayStepBack),
            ("]", Action::ReplayStepForward),
            (".", Action::ReplayForward),
            ("(", Action::ReplayStart),
            ("*", Action::JumpBest),
            ("M", Action::Memory),
            ("/", Action::Find),
            ("n", Action::FindNext),
            ("N", Action::FindPrev),
            ("#", Action::GotoNode),
            (":", Action::GotoNode),
            ("ctrl-f", Action::Filter),
            ("z", Action::Zoom),
            ("a", Action::NextSolution),
            ("A", Action::ReplayPlayNonstop),
        ];
        for (text, action) in expect {
            let spec = KeySpec::parse(text).unwrap();
            assert_eq!(keymap.action_for(&key(spec.code, spec.modifiers)), Some(action), "{text}");
        }
    }

    #[test]
    fn action_for_real_events() {
        let keymap = Keymap::default();
        // Shift-R as most terminals report it, and as some do.
        assert_eq!(keymap.action_for(&key(KeyCode::Char('R'), KeyModifiers::SHIFT)), Some(Action::Restart));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('R'), KeyModifiers::NONE)), Some(Action::Restart));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('r'), KeyModifiers::SHIFT)), Some(Action::Restart));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('r'), KeyModifiers::NONE)), Some(Action::RunPause));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('?'), KeyModifiers::SHIFT)), Some(Action::Help));
        assert_eq!(keymap.action_for(&key(KeyCode::BackTab, KeyModifiers::SHIFT)), Some(Action::FocusPrev));
        assert_eq!(keymap.action_for(&key(KeyCode::BackTab, KeyModifiers::NONE)), Some(Action::FocusPrev));
        assert_eq!(keymap.action_for(&key(KeyCode::Tab, KeyModifiers::SHIFT)), Some(Action::FocusPrev));
        assert_eq!(keymap.action_for(&key(KeyCode::Tab, KeyModifiers::NONE)), Some(Action::FocusNext));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)), Some(Action::Quit));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('c'), KeyModifiers::NONE)), Some(Action::ToggleCollapse));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('z'), KeyModifiers::NONE)), Some(Action::Zoom));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('Z'), KeyModifiers::NONE)), None);
        assert_eq!(keymap.action_for(&key(KeyCode::Char('#'), KeyModifiers::SHIFT)), Some(Action::GotoNode));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('f'), KeyModifiers::CONTROL)), Some(Action::Filter));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('q'), KeyModifiers::ALT)), None);

        let release = KeyEvent::new_with_kind_and_state(
            KeyCode::Char('q'),
            KeyModifiers::NONE,
            KeyEventKind::Release,
            KeyEventState::NONE,
        );
        assert_eq!(keymap.action_for(&release), None);
        let repeat = KeyEvent::new_with_kind(KeyCode::Char('j'), KeyModifiers::NONE, KeyEventKind::Repeat);
        assert_eq!(keymap.action_for(&repeat), Some(Action::Down));
    }

    #[test]
    fn overrides_replace_and_unbind() {
        let base = Keymap::default();
        let overrides = vec![
            RawBinding { on: vec!["ctrl-s".into()], run: "save_as".into(), desc: Some("Save".into()), entry: 0 },
            raw("k", "step"),
            raw("q", "none"),
            RawBinding { on: vec!["j".into(), "J".into()], run: "noop".into(), desc: None, entry: 0 },
        ];
        let (keymap, warnings) = base.with_overrides(&overrides, "config.toml");
        assert!(warnings.is_empty(), "{warnings:?}");
        let press = |c: char, m| keymap.action_for(&key(KeyCode::Char(c), m));
        assert_eq!(press('s', KeyModifiers::CONTROL), Some(Action::SaveAs));
        assert_eq!(press('s', KeyModifiers::NONE), Some(Action::SaveAs), "the default binding stays");
        assert_eq!(press('k', KeyModifiers::NONE), Some(Action::Step));
        assert_eq!(press('q', KeyModifiers::NONE), None);
        assert_eq!(press('j', KeyModifiers::NONE), None);
        assert_eq!(press('c', KeyModifiers::CONTROL), Some(Action::Quit));
        let help = keymap.help();
        let row = |action| help.iter().find(|(_, a, _)| *a == action).cloned().unwrap();
        assert_eq!(row(Action::Up).0, "up");
        assert_eq!(row(Action::Down).0, "down");
        assert_eq!(row(Action::Step).0, "space, k");
        assert_eq!(row(Action::SaveAs).0, "s, ctrl-s");
        assert_eq!(row(Action::Quit).0, "ctrl-c");
        // The override without a description borrows the default one.
        assert_eq!(row(Action::Step).2, base.desc_for(Action::Step));
        // The base keymap is untouched.
        assert_eq!(base.action_for(&key(KeyCode::Char('q'), KeyModifiers::NONE)), Some(Action::Quit));
    }

    #[test]
    fn ctrl_c_cannot_be_unbound_or_rebound() {
        let base = Keymap::default();
        // Every bound key unbound, ctrl-c among them, and ctrl-c bound to step as well.
        let mut every: Vec<String> =
            base.bindings().iter().flat_map(|b| b.keys.iter().map(ToString::to_string)).collect();
        every.sort();
        let overrides = vec![
            RawBinding { on: every, run: "none".into(), desc: None, entry: 1 },
            RawBinding { on: vec!["ctrl-c".into(), "x".into()], run: "step".into(), desc: None, entry: 2 },
        ];
        let (keymap, warnings) = base.with_overrides(&overrides, "config.toml");
        assert_eq!(
            warnings,
            [
                "config.toml: keymap entry 1: ctrl-c always quits; its binding of ctrl-c is ignored",
                "config.toml: keymap entry 2: ctrl-c always quits; its binding of ctrl-c is ignored",
            ]
        );
        let ctrl_c = key(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(keymap.action_for(&ctrl_c), Some(Action::Quit));
        assert!(is_ctrl_c(&ctrl_c) && !is_ctrl_c(&key(KeyCode::Char('c'), KeyModifiers::NONE)));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('x'), KeyModifiers::NONE)), Some(Action::Step));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('q'), KeyModifiers::NONE)), None, "the rest is unbound");
    }

    #[test]
    fn bad_override_entries_are_named_and_skipped() {
        let overrides = vec![raw("x", "step"), raw("spcae", "step"), raw("ctrl-s", "stepp"), raw("y", "prune")];
        let (keymap, warnings) = Keymap::default().with_overrides(&overrides, "config.toml");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(warnings[0], "config.toml: keymap entry 2: unknown key \"spcae\"");
        assert!(
            warnings[1].starts_with("config.toml: keymap entry 3: unknown action \"stepp\" (known: step, run_pause, "),
            "{}",
            warnings[1]
        );
        assert_eq!(keymap.action_for(&key(KeyCode::Char('x'), KeyModifiers::NONE)), Some(Action::Step));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('y'), KeyModifiers::NONE)), Some(Action::Prune));
        assert_eq!(keymap.action_for(&key(KeyCode::Char('s'), KeyModifiers::CONTROL)), None);
    }

    #[test]
    fn strict_file_errors_name_the_entry() {
        let dup = "[[keymap]]\non = \"a\"\nrun = \"step\"\n[[keymap]]\non = [\"b\", \"a\"]\nrun = \"prune\"\n";
        let err = Keymap::from_toml(dup, "k.toml").unwrap_err();
        assert_eq!(err.to_string(), "k.toml: keymap entry 2: key \"a\" is already bound by entry 1");
        let typo = "[[keymap]]\non = \"a\"\nrun = \"step\"\ndesk = \"x\"\n";
        let err = Keymap::from_toml(typo, "k.toml").unwrap_err().to_string();
        assert!(err.starts_with("k.toml: keymap entry 1: unknown field `desk`"), "{err}");
        let bad_on = "[[keymap]]\non = 3\nrun = \"step\"\n";
        let err = Keymap::from_toml(bad_on, "k.toml").unwrap_err().to_string();
        assert!(err.contains("keymap entry 1: `on` must be a key string"), "{err}");
        let syntax = "[[keymap]]\non = \"a\nrun = \"step\"\n";
        let err = Keymap::from_toml(syntax, "k.toml").unwrap_err().to_string();
        assert!(err.starts_with("k.toml: line 2, column"), "{err}");
    }
}
