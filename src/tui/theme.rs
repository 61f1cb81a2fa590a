//! Colour themes: TOML files of named slots. The built-ins (`themes/*.toml`) are
//! compiled in; user files in `<config dir>/thoughtscope/themes/*.toml` add themes
//! or override a built-in of the same name.
//!
//! ```toml
//! name = "mine"
//! inherits = "dark"          # optional; slots not given here come from it (default: dark)
//! [palette]                  # optional names for colours used below
//! orange = "#E69F00"
//! [slots]
//! border = "dark_gray"       # a colour alone is the foreground
//! selection = { bg = "orange", fg = "black", bold = true, reversed = false }
//! ```
//!
//! Colours: a name (`black red green yellow blue magenta cyan gray dark_gray
//! light_red light_green light_yellow light_blue light_magenta light_cyan white
//! reset`), `#rrggbb`, an index `0`..`255`, or a palette name. Style keys: `fg`,
//! `bg`, `bold`, `italic`, `underline`, `dim`, `reversed`, `crossed_out`. A slot given
//! in a file replaces the inherited slot whole.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use thiserror::Error;

use crate::config::raw::toml_error_message;

const BUILTIN_SOURCES: [(&str, &str); 3] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    ("high-contrast", include_str!("../../themes/high-contrast.toml")),
];

const BUILTIN_NAMES: [&str; 3] = ["dark", "light", "high-contrast"];

/// The theme a user theme inherits from when it names none.
pub const DEFAULT_THEME: &str = "dark";

macro_rules! slots {
    ($($variant:ident => $name:literal,)*) => {
        /// A named place in the UI that has a style.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Slot {
            $($variant,)*
        }

        impl Slot {
            /// Every slot, in file order.
            pub const ALL: &'static [Slot] = &[$(Slot::$variant,)*];
            pub const COUNT: usize = Slot::ALL.len();

            /// The snake_case name used in theme files.
            pub fn name(self) -> &'static str {
                match self {
                    $(Slot::$variant => $name,)*
                }
            }

            pub fn from_name(name: &str) -> Option<Slot> {
                match name {
                    $($name => Some(Slot::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

slots! {
    Text => "text",
    Dim => "dim",
    Background => "background",
    Border => "border",
    BorderFocused => "border_focused",
    Title => "title",
    Selection => "selection",
    StatusBar => "status_bar",
    StatusKey => "status_key",
    ModeRunning => "mode_running",
    ModePaused => "mode_paused",
    ModeStepping => "mode_stepping",
    ModeReplay => "mode_replay",
    Simulated => "simulated",
    NodeCandidate => "node_candidate",
    NodeFrontier => "node_frontier",
    NodeExpanded => "node_expanded",
    NodeKept => "node_kept",
    NodeDropped => "node_dropped",
    NodePruned => "node_pruned",
    NodeEdited => "node_edited",
    NodeInvalid => "node_invalid",
    NodeFinal => "node_final",
    NodeSolution => "node_solution",
    ScoreHigh => "score_high",
    ScoreMid => "score_mid",
    ScoreLow => "score_low",
    Bar => "bar",
    BarKept => "bar_kept",
    Cutoff => "cutoff",
    Thought => "thought",
    Action => "action",
    Observation => "observation",
    Error => "error",
    Warning => "warning",
    HelpKey => "help_key",
    HelpDesc => "help_desc",
    Popup => "popup",
    Timeline => "timeline",
    FindMatch => "find_match",
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ThemeError {
    /// Not valid TOML, or a top-level key of the wrong shape.
    #[error("{file}: {message}")]
    File { file: String, message: String },
    #[error("{file}: slot \"{slot}\" is not a known slot")]
    UnknownSlot { file: String, slot: String },
    #[error("{file}: slot {slot}: {message}")]
    BadSlot { file: String, slot: String, message: String },
    #[error("{file}: missing slots: {}", .slots.join(", "))]
    MissingSlots { file: String, slots: Vec<String> },
    #[error("{file}: inherits \"{name}\", which is not a built-in theme (built-ins: {})", BUILTIN_NAMES.join(", "))]
    UnknownParent { file: String, name: String },
}

/// A complete theme: a style for every slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub name: String,
    styles: [Style; Slot::COUNT],
}

impl Theme {
    pub fn style(&self, slot: Slot) -> Style {
        self.styles[slot as usize]
    }

    pub fn set_style(&mut self, slot: Slot, style: Style) {
        self.styles[slot as usize] = style;
    }

    /// A colourless theme that still marks the selection; the last resort if a
    /// built-in could not be loaded.
    pub fn plain() -> Theme {
        let mut theme = Theme { name: "plain".to_string(), styles: [Style::default(); Slot::COUNT] };
        theme.set_style(Slot::Selection, Style::default().add_modifier(Modifier::REVERSED));
        theme.no_color()
    }

    pub fn builtin_names() -> &'static [&'static str] {
        &BUILTIN_NAMES
    }

    /// A built-in theme by name (`dark`, `light`, `high-contrast`).
    pub fn builtin(name: &str) -> Option<Theme> {
        builtins().iter().find(|t| t.name == name).cloned()
    }

    /// Parse a user theme. Slots it leaves out come from `inherits` (a built-in) or
    /// from the dark theme.
    pub fn from_toml(text: &str, source: &str) -> Result<Theme, ThemeError> {
        let partial = PartialTheme::parse(text, source)?;
        let parent = partial.inherits.as_deref().unwrap_or(DEFAULT_THEME);
        let base = match Theme::builtin(parent) {
            Some(base) => base,
            None if partial.inherits.is_none() => Theme::plain(),
            None => return Err(ThemeError::UnknownParent { file: source.to_string(), name: parent.to_string() }),
        };
        Ok(partial.over(base, source))
    }

    /// Parse a theme that must define every slot itself (the built-ins).
    fn from_toml_complete(text: &str, source: &str) -> Result<Theme, ThemeError> {
        let partial = PartialTheme::parse(text, source)?;
        let missing: Vec<String> =
            Slot::ALL.iter().filter(|s| partial.styles[**s as usize].is_none()).map(|s| s.name().to_string()).collect();
        if !missing.is_empty() {
            return Err(ThemeError::MissingSlots { file: source.to_string(), slots: missing });
        }
        Ok(partial.over(Theme::plain(), source))
    }

    /// The theme without colours (for `NO_COLOR`): modifiers stay, and statuses
    /// that relied on colour get a modifier so they stay distinguishable.
    pub fn no_color(&self) -> Theme {
        let mut theme = self.clone();
        for &slot in Slot::ALL {
            let old = theme.style(slot);
            let mut style = Style { fg: None, bg: None, underline_color: None, ..old };
            if slot == Slot::Selection {
                // The selection must never disappear, whatever the node under it looks like.
                style = style.add_modifier(Modifier::REVERSED);
            } else if style.add_modifier.is_empty() {
                style = style.add_modifier(fallback_modifier(slot));
            }
            theme.set_style(slot, style);
        }
        theme
    }
}

/// What a slot looks like without colour, when its theme gave it no modifier.
fn fallback_modifier(slot: Slot) -> Modifier {
    match slot {
        Slot::Dim | Slot::NodeDropped | Slot::Observation => Modifier::DIM,
        Slot::BorderFocused | Slot::Title | Slot::Error | Slot::Warning | Slot::HelpKey | Slot::Cutoff => {
            Modifier::BOLD
        }
        Slot::StatusBar => Modifier::REVERSED,
        Slot::StatusKey | Slot::ModeRunning | Slot::ModePaused | Slot::ModeStepping | Slot::ModeReplay => {
            Modifier::REVERSED | Modifier::BOLD
        }
        Slot::Simulated | Slot::NodeEdited => Modifier::ITALIC,
        Slot::NodeKept | Slot::BarKept => Modifier::BOLD,
        Slot::NodePruned => Modifier::CROSSED_OUT | Modifier::DIM,
        Slot::NodeInvalid => Modifier::UNDERLINED | Modifier::ITALIC,
        Slot::NodeFinal => Modifier::UNDERLINED,
        Slot::NodeSolution => Modifier::BOLD | Modifier::UNDERLINED,
        _ => Modifier::empty(),
    }
}

fn builtins() -> &'static [Theme] {
    static BUILTINS: OnceLock<Vec<Theme>> = OnceLock::new();
    BUILTINS.get_or_init(|| {
        BUILTIN_SOURCES
            .iter()
            .filter_map(|(name, text)| Theme::from_toml_complete(text, &format!("themes/{name}.toml")).ok())
            .collect()
    })
}

/// Longest theme name (it is drawn in the settings and the status bar).
const MAX_NAME_CHARS: usize = 64;
/// Longest piece of a theme file quoted in a message.
const MAX_QUOTED: usize = 40;

/// A theme file as written: name, parent and the slots it sets.
struct PartialTheme {
    name: Option<String>,
    inherits: Option<String>,
    styles: [Option<Style>; Slot::COUNT],
}

impl PartialTheme {
    fn parse(text: &str, source: &str) -> Result<PartialTheme, ThemeError> {
        let file_err = |message: String| ThemeError::File { file: source.to_string(), message };
        let table: toml::Table = toml::from_str(text).map_err(|e| file_err(toml_error_message(&e, text)))?;
        let string_key = |key: &str| -> Result<Option<String>, ThemeError> {
            match table.get(key) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(file_err(format!("`{key}` must be a string, not {}", other.type_str()))),
            }
        };
        let name = string_key("name")?;
        if let Some(long) = name.as_ref().map(|n| n.chars().count()).filter(|&n| n > MAX_NAME_CHARS) {
            return Err(file_err(format!("`name` is {long} characters long (at most {MAX_NAME_CHARS})")));
        }
        let inherits = string_key("inherits")?.map(|i| crate::userfile::clip(&i, MAX_QUOTED).into_owned());

        let mut palette = BTreeMap::new();
        match table.get("palette") {
            None => {}
            Some(toml::Value::Table(entries)) => {
                for (key, value) in entries {
                    let colour = value
                        .as_str()
                        .ok_or_else(|| {
                            file_err(format!(
                                "palette {}: must be a colour string",
                                crate::userfile::clip(key, MAX_QUOTED)
                            ))
                        })
                        .and_then(|text| {
                            parse_color(text, &BTreeMap::new()).map_err(|message| {
                                file_err(format!("palette {}: {message}", crate::userfile::clip(key, MAX_QUOTED)))
                            })
                        })?;
                    palette.insert(key.clone(), colour);
                }
            }
            Some(_) => return Err(file_err("`palette` must be a table of colours".to_string())),
        }

        let mut styles = [None; Slot::COUNT];
        match table.get("slots") {
            None => {}
            Some(toml::Value::Table(entries)) => {
                for (key, value) in entries {
                    let slot = Slot::from_name(key).ok_or_else(|| ThemeError::UnknownSlot {
                        file: source.to_string(),
                        slot: crate::userfile::clip(key, MAX_QUOTED).into_owned(),
                    })?;
                    let style = parse_style(value, &palette).map_err(|message| ThemeError::BadSlot {
                        file: source.to_string(),
                        slot: key.clone(),
                        message,
                    })?;
                    styles[slot as usize] = Some(style);
                }
            }
            Some(_) => return Err(file_err("`slots` must be a table ([slots])".to_string())),
        }
        for key in table.keys() {
            if !["name", "inherits", "palette", "slots"].contains(&key.as_str()) {
                return Err(file_err(format!(
                    "unknown key `{}` (expected name, inherits, palette, slots)",
                    crate::userfile::clip(key, MAX_QUOTED)
                )));
            }
        }
        Ok(PartialTheme { name, inherits, styles })
    }

    /// The complete theme: these slots over `base`'s. Unnamed themes take the file stem.
    fn over(self, base: Theme, source: &str) -> Theme {
        let mut theme = base;
        theme.name = self.name.unwrap_or_else(|| {
            Path::new(source).file_stem().map_or_else(|| source.to_string(), |s| s.to_string_lossy().into_owned())
        });
        for (i, style) in self.styles.into_iter().enumerate() {
            if let Some(style) = style {
                theme.styles[i] = style;
            }
        }
        theme
    }
}

fn parse_style(value: &toml::Value, palette: &BTreeMap<String, Color>) -> Result<Style, String> {
    match value {
        toml::Value::String(text) => Ok(Style::default().fg(parse_color(text, palette)?)),
        toml::Value::Table(entries) => {
            let mut style = Style::default();
            for (key, value) in entries {
                let flag = match key.as_str() {
                    "fg" | "bg" => {
                        let text = value.as_str().ok_or_else(|| format!("`{key}` must be a colour string"))?;
                        let colour = parse_color(text, palette)?;
                        style = if key == "fg" { style.fg(colour) } else { style.bg(colour) };
                        continue;
                    }
                    "bold" => Modifier::BOLD,
                    "italic" => Modifier::ITALIC,
                    "underline" => Modifier::UNDERLINED,
                    "dim" => Modifier::DIM,
                    "reversed" => Modifier::REVERSED,
                    "crossed_out" => Modifier::CROSSED_OUT,
                    other => {
                        return Err(format!(
                        "unknown key `{other}` (expected fg, bg, bold, italic, underline, dim, reversed, crossed_out)"
                    ))
                    }
                };
                match value.as_bool() {
                    Some(true) => style = style.add_modifier(flag),
                    // `false` switches the modifier off even where an outer style set it.
                    Some(false) => style = style.remove_modifier(flag),
                    None => return Err(format!("`{key}` must be true or false")),
                }
            }
            Ok(style)
        }
        other => Err(format!("must be a colour string or a style table, not {}", other.type_str())),
    }
}

const COLOR_NAMES: [(&str, Color); 17] = [
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("dark_gray", Color::DarkGray),
    ("light_red", Color::LightRed),
    ("light_green", Color::LightGreen),
    ("light_yellow", Color::LightYellow),
    ("light_blue", Color::LightBlue),
    ("light_magenta", Color::LightMagenta),
    ("light_cyan", Color::LightCyan),
    ("white", Color::White),
    ("reset", Color::Reset),
];

/// Parse a colour: a palette name, a colour name, `#rrggbb` or an index 0..255.
pub fn parse_color(text: &str, palette: &BTreeMap<String, Color>) -> Result<Color, String> {
    // Quoted in messages at most this long: a huge value is not drawn on screen.
    let shown = crate::userfile::clip(text, MAX_QUOTED);
    let trimmed = text.trim();
    if let Some(colour) = palette.get(trimmed) {
        return Ok(*colour);
    }
    if let Some(hex) = trimmed.strip_prefix('#') {
        let bad = || format!("colour \"{shown}\" is not #rrggbb");
        if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| bad());
        return Ok(Color::Rgb(byte(0)?, byte(2)?, byte(4)?));
    }
    if trimmed.chars().all(|c| c.is_ascii_digit()) && !trimmed.is_empty() {
        return trimmed
            .parse::<u8>()
            .map(Color::Indexed)
            .map_err(|_| format!("colour index \"{shown}\" is not 0..255"));
    }
    let name = trimmed.to_ascii_lowercase().replace(['-', ' '], "_").replace("grey", "gray");
    let name = if name == "darkgray" { "dark_gray".to_string() } else { name };
    COLOR_NAMES.iter().find(|(n, _)| *n == name).map(|(_, c)| *c).ok_or_else(|| {
        let names = COLOR_NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
        format!("colour \"{shown}\" is not a colour name ({names}), #rrggbb or an index 0..255")
    })
}

/// The built-in themes plus the user's, in cycling order: built-ins first, then
/// user-only themes by name.
#[derive(Debug, Clone)]
pub struct ThemeSet {
    themes: Vec<Theme>,
    warnings: Vec<String>,
}

impl Default for ThemeSet {
    fn default() -> ThemeSet {
        ThemeSet::load(None)
    }
}

impl ThemeSet {
    /// Built-ins plus every `*.toml` in `themes_dir` (usually
    /// `<config dir>/thoughtscope/themes`). A missing directory is fine; a bad
    /// file is skipped with a warning naming it.
    pub fn load(themes_dir: Option<&Path>) -> ThemeSet {
        let mut themes: Vec<Theme> = builtins().to_vec();
        let mut warnings = Vec::new();
        if themes.is_empty() {
            themes.push(Theme::plain());
        }
        let Some(dir) = themes_dir else {
            return ThemeSet { themes, warnings };
        };
        let mut files = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                // Not only regular files: a FIFO or device named *.toml is reported, not skipped silently.
                .filter(|p| p.extension().is_some_and(|x| x == "toml") && !p.is_dir())
                .collect::<Vec<_>>(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                warnings.push(format!("{}: cannot read the themes directory: {e}", dir.display()));
                Vec::new()
            }
        };
        files.sort();
        let builtin_count = themes.len();
        let mut user: Vec<Theme> = Vec::new();
        for path in files {
            let source = path.display().to_string();
            let text = match crate::userfile::read_text(&path, &crate::userfile::THEME) {
                Ok(text) => text,
                Err(e) => {
                    warnings.push(format!("{source}: cannot read: {}; skipped", e.reason()));
                    continue;
                }
            };
            let theme = match Theme::from_toml(&text, &source) {
                Ok(theme) => theme,
                Err(e) => {
                    warnings.push(format!("{e}; theme skipped"));
                    continue;
                }
            };
            if let Some(existing) = themes[..builtin_count].iter_mut().find(|t| t.name == theme.name) {
                *existing = theme;
            } else if let Some(existing) = user.iter_mut().find(|t| t.name == theme.name) {
                warnings.push(format!("{source}: a theme named \"{}\" was already loaded; this one wins", theme.name));
                *existing = theme;
            } else {
                user.push(theme);
            }
        }
        user.sort_by(|a, b| a.name.cmp(&b.name));
        themes.extend(user);
        ThemeSet { themes, warnings }
    }

    pub fn get(&self, name: &str) -> Option<&Theme> {
        self.themes.iter().find(|t| t.name == name)
    }

    /// The theme named, or the first one (dark) if there is none by that name.
    pub fn get_or_first(&self, name: &str) -> &Theme {
        self.get(name).unwrap_or(&self.themes[0])
    }

    /// The theme after `name` in cycling order, wrapping; the first one if `name` is unknown.
    pub fn next_after(&self, name: &str) -> &Theme {
        let next = self.themes.iter().position(|t| t.name == name).map_or(0, |i| (i + 1) % self.themes.len());
        &self.themes[next]
    }

    pub fn names(&self) -> Vec<&str> {
        self.themes.iter().map(|t| t.name.as_str()).collect()
    }

    pub fn themes(&self) -> &[Theme] {
        &self.themes
    }

    /// One line per theme file that could not be used.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_with_every_slot() {
        assert_eq!(BUILTIN_SOURCES.len(), Theme::builtin_names().len());
        for (name, text) in BUILTIN_SOURCES {
            let theme = Theme::from_toml_complete(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(theme.name, name);
            assert_eq!(Theme::builtin(name), Some(theme.clone()));
            // Every slot is explicitly set to something.
            for &slot in Slot::ALL {
                assert_ne!(theme.style(slot), Style::default(), "{name}: {slot} is empty");
            }
        }
        assert_eq!(builtins().len(), 3);
        assert!(Theme::builtin("nope").is_none());
    }

    #[test]
    fn slot_names_round_trip() {
        assert_eq!(Slot::COUNT, 40);
        for &slot in Slot::ALL {
            assert_eq!(Slot::from_name(slot.name()), Some(slot));
        }
    }

    #[test]
    fn high_contrast_statuses_differ_without_colour() {
        let theme = Theme::builtin("high-contrast").unwrap().no_color();
        let statuses = [
            Slot::NodeSolution,
            Slot::NodePruned,
            Slot::NodeInvalid,
            Slot::NodeKept,
            Slot::NodeDropped,
            Slot::NodeEdited,
            Slot::NodeFinal,
        ];
        for (i, a) in statuses.iter().enumerate() {
            assert!(!theme.style(*a).add_modifier.is_empty(), "{a}");
            for b in &statuses[i + 1..] {
                assert_ne!(theme.style(*a).add_modifier, theme.style(*b).add_modifier, "{a} vs {b}");
            }
        }
        assert!(theme.style(Slot::Selection).add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn partial_theme_inherits() {
        let text = r##"
            name = "mine"
            inherits = "light"
            [palette]
            orange = "#E69F00"
            [slots]
            border = "orange"
            selection = { fg = "black", bg = "236", bold = true, underline = true }
            node_pruned = "dark-grey"
        "##;
        let theme = Theme::from_toml(text, "themes/mine.toml").unwrap();
        let light = Theme::builtin("light").unwrap();
        assert_eq!(theme.name, "mine");
        assert_eq!(theme.style(Slot::Border), Style::default().fg(Color::Rgb(0xE6, 0x9F, 0x00)));
        assert_eq!(
            theme.style(Slot::Selection),
            Style::default()
                .fg(Color::Black)
                .bg(Color::Indexed(236))
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        );
        assert_eq!(theme.style(Slot::NodePruned), Style::default().fg(Color::DarkGray));
        assert_eq!(theme.style(Slot::Text), light.style(Slot::Text));

        // No `inherits`: the dark theme fills the gaps; no `name`: the file stem.
        let theme = Theme::from_toml("[slots]\ntext = \"white\"\n", "themes/stem.toml").unwrap();
        assert_eq!(theme.name, "stem");
        assert_eq!(theme.style(Slot::Border), Theme::builtin("dark").unwrap().style(Slot::Border));
    }

    #[test]
    fn bad_themes_name_file_and_slot() {
        let err = |text: &str| Theme::from_toml(text, "themes/mine.toml").unwrap_err().to_string();
        assert_eq!(
            err("[slots]\nnode_prunned = \"red\"\n"),
            "themes/mine.toml: slot \"node_prunned\" is not a known slot"
        );
        assert_eq!(
            err("[slots]\nborder = \"#12345\"\n"),
            "themes/mine.toml: slot border: colour \"#12345\" is not #rrggbb"
        );
        assert!(err("[slots]\nborder = \"mauve\"\n")
            .starts_with("themes/mine.toml: slot border: colour \"mauve\" is not a colour name (black, red"));
        assert_eq!(
            err("[slots]\nborder = \"256\"\n"),
            "themes/mine.toml: slot border: colour index \"256\" is not 0..255"
        );
        assert!(err("[slots]\nborder = { fg = \"red\", blink = true }\n").contains("slot border: unknown key `blink`"));
        assert_eq!(
            err("[slots]\nborder = { bold = \"yes\" }\n"),
            "themes/mine.toml: slot border: `bold` must be true or false"
        );
        assert!(err("inherits = \"solarized\"\n")
            .starts_with("themes/mine.toml: inherits \"solarized\", which is not a built-in"));
        assert!(err("[slots\n").starts_with("themes/mine.toml: line 1, column"));
        assert!(err("colour = 1\n").contains("unknown key `colour`"));
        let missing = Theme::from_toml_complete("name = \"x\"\n[slots]\ntext = \"red\"\n", "x.toml").unwrap_err();
        assert!(missing.to_string().starts_with("x.toml: missing slots: dim, background"), "{missing}");
    }

    #[test]
    fn no_color_strips_colours_keeps_modifiers() {
        for name in Theme::builtin_names() {
            let theme = Theme::builtin(name).unwrap();
            let plain = theme.no_color();
            for &slot in Slot::ALL {
                let style = plain.style(slot);
                assert_eq!((style.fg, style.bg, style.underline_color), (None, None, None), "{name} {slot}");
                assert!(style.add_modifier.contains(theme.style(slot).add_modifier), "{name} {slot} lost a modifier");
            }
            let selection = plain.style(Slot::Selection).add_modifier;
            assert!(selection.contains(Modifier::REVERSED), "{name}");
            assert_ne!(plain.style(Slot::NodeSolution), plain.style(Slot::NodeCandidate), "{name}");
            assert_ne!(plain.style(Slot::NodePruned), plain.style(Slot::NodeCandidate), "{name}");
        }
    }

    #[test]
    fn theme_set_overrides_cycles_and_warns() {
        let dir = tempfile::tempdir().unwrap();
        let write = |file: &str, text: &str| std::fs::write(dir.path().join(file), text).unwrap();
        write("dark.toml", "name = \"dark\"\n[slots]\nborder = \"red\"\n");
        write("zebra.toml", "name = \"zebra\"\ninherits = \"light\"\n");
        write("aqua.toml", "[slots]\ntext = \"cyan\"\n");
        write("broken.toml", "[slots]\nborder = \"#12\"\n");
        write("notes.txt", "not a theme");

        let set = ThemeSet::load(Some(dir.path()));
        assert_eq!(set.names(), ["dark", "light", "high-contrast", "aqua", "zebra"]);
        assert_eq!(set.get("dark").unwrap().style(Slot::Border), Style::default().fg(Color::Red));
        let builtin_dark = Theme::builtin("dark").unwrap();
        assert_eq!(set.get("dark").unwrap().style(Slot::Text), builtin_dark.style(Slot::Text));
        assert_eq!(set.warnings().len(), 1, "{:?}", set.warnings());
        assert!(set.warnings()[0].contains("broken.toml: slot border: colour \"#12\" is not #rrggbb"));

        let mut name = "dark".to_string();
        let mut order = Vec::new();
        for _ in 0..5 {
            name = set.next_after(&name).name.clone();
            order.push(name.clone());
        }
        assert_eq!(order, ["light", "high-contrast", "aqua", "zebra", "dark"]);
        assert_eq!(set.next_after("unknown").name, "dark");
        assert_eq!(set.get_or_first("unknown").name, "dark");

        let missing = ThemeSet::load(Some(&dir.path().join("nope")));
        assert_eq!(missing.names(), Theme::builtin_names());
        assert!(missing.warnings().is_empty());
    }

    #[test]
    fn huge_themes_fifos_and_long_values_are_refused_without_being_drawn() {
        let dir = tempfile::tempdir().unwrap();
        // Over the 64 KiB cap: skipped before it is parsed.
        let huge = format!("[slots]\nborder = \"{}\"\n", "x".repeat(100 * 1024));
        std::fs::write(dir.path().join("huge.toml"), huge).unwrap();
        // Under the cap but with a long value and a long name.
        std::fs::write(dir.path().join("long.toml"), format!("[slots]\nborder = \"{}\"\n", "y".repeat(5000))).unwrap();
        std::fs::write(dir.path().join("named.toml"), format!("name = \"{}\"\n", "n".repeat(65))).unwrap();
        let fifo = dir.path().join("pipe.toml");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let started = std::time::Instant::now();
        let set = ThemeSet::load(Some(dir.path()));
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "the FIFO did not block");
        let w = set.warnings();
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].ends_with("huge.toml: cannot read: it is larger than 64 KiB, the limit for a theme file; skipped"));
        assert!(w[1].contains("long.toml: slot border: colour \"yyyy") && w[1].contains("… (5000 characters)"));
        assert!(w[1].len() < 500, "the value is clipped: {}", w[1]);
        assert!(w[2].contains("named.toml: `name` is 65 characters long (at most 64)"), "{}", w[2]);
        assert!(w[3].contains("pipe.toml: cannot read: it is a FIFO (named pipe), not a file"), "{}", w[3]);
        assert_eq!(set.names(), Theme::builtin_names(), "none of them loaded");
    }
}
