//! The shape issue 25 asked for, kept: no source file outside tests over 900 lines and
//! no function over 120 (test modules and test files excluded). Counted on the text with
//! strings, characters and comments blanked, braces matched.

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 900;
const MAX_FN_LINES: usize = 120;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if name != "tests" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

/// `text` with the contents of strings, raw strings, character literals and comments
/// replaced by spaces (line breaks kept), so braces in them do not count.
fn blank(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let keep = |c: u8| if c == b'\n' { b'\n' } else { b' ' };
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let mut j = i + 1;
            while b.get(j) == Some(&b'#') {
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            let mut close = String::from("\"");
            close.push_str(&"#".repeat(hashes));
            let end = text[j + 1..].find(&close).map_or(b.len(), |k| j + 1 + k + close.len());
            out.extend(b[i..end].iter().map(|&c| keep(c)));
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            out.extend(b[i..end].iter().map(|&c| keep(c)));
            i = end;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            let rest = &text[i + 1..];
            let len = if rest.starts_with('\\') {
                rest.find('\'').map(|k| k + 2)
            } else {
                rest.chars()
                    .next()
                    .filter(|_| rest[rest.chars().next().map_or(0, char::len_utf8)..].starts_with('\''))
                    .map(|ch| ch.len_utf8() + 2)
            };
            match len {
                Some(n) => {
                    out.extend(std::iter::repeat_n(b' ', n));
                    i += n;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Each function of `text` (outside its test module) longer than `max` lines: name and first line.
fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let blanked = blank(text);
    let lines: Vec<&str> = blanked.lines().collect();
    let end = lines.iter().position(|l| l.starts_with("#[cfg(test)]")).unwrap_or(lines.len());
    let mut long = Vec::new();
    for i in 0..end {
        let line = lines[i].trim_start();
        let line = line.strip_prefix("pub(crate) ").or(line.strip_prefix("pub(super) ")).unwrap_or(line);
        let line = line.strip_prefix("pub ").unwrap_or(line);
        let line = line.strip_prefix("async ").unwrap_or(line);
        let line = line.strip_prefix("const ").unwrap_or(line);
        let Some(rest) = line.strip_prefix("fn ") else { continue };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let (mut depth, mut started, mut j) = (0i64, false, i);
        while j < end {
            let l = lines[j];
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            started |= l.contains('{');
            if (started && depth <= 0) || (!started && l.trim_end().ends_with(';')) {
                break;
            }
            j += 1;
        }
        if j - i + 1 > max {
            long.push((name, i + 1, j - i + 1));
        }
    }
    long
}

#[test]
fn no_source_file_over_900_lines_and_no_function_over_120() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 100, "{} source files", files.len());
    let mut over = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let code_lines = text.lines().take_while(|l| !l.starts_with("#[cfg(test)]")).count();
        let name = file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&file).display().to_string();
        if code_lines > MAX_FILE_LINES {
            over.push(format!("{name}: {code_lines} lines"));
        }
        for (f, at, n) in long_functions(&text, MAX_FN_LINES) {
            over.push(format!("{name}:{at}: fn {f} is {n} lines"));
        }
    }
    assert!(over.is_empty(), "split these along their concerns:\n{}", over.join("\n"));
}

#[test]
fn the_counter_sees_a_long_function_and_ignores_braces_in_strings() {
    let body: String = (0..130).map(|i| format!("    let x{i} = \"{{\";\n")).collect();
    let text = format!("fn long() {{\n{body}}}\nfn short() {{ let c = '{{'; }}\n");
    let long = long_functions(&text, MAX_FN_LINES);
    assert_eq!(long, vec![("long".to_string(), 1, 132)]);
}

// ---- Layers: which folder may name which (issue 49) ----
//
// Each rule forbids one arrow between folders of src/. A file's paths are read from its
// code (comments and strings blanked): every leaf of every `use` tree, and every path in
// expressions, types and attributes that starts at `crate`, `super`, `self` or an extern
// crate, each resolved to where it points from the file's module (inline `mod x { ... }`
// blocks and `super::super::` included). Test files count too: a lower layer's tests may
// not reach up across a forbidden arrow either.

/// One forbidden arrow: files of module `from` (src/NAME/ and src/NAME.rs; a nested
/// module as a path, `tui/ui` for src/tui/ui/ and src/tui/ui.rs) may not name anything
/// `forbids` accepts (a resolved path: `crate::llm::sim::SimProvider`
/// is `["crate", "llm", "sim", "SimProvider"]`).
struct Layer {
    from: &'static str,
    why: &'static str,
    forbids: fn(&[String]) -> bool,
}

fn under(path: &[String], prefix: &[&str]) -> bool {
    path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
}

const LAYERS: &[Layer] = &[
    Layer { from: "engine", why: "the engine imports no provider code", forbids: |p| under(p, &["crate", "llm"]) },
    Layer {
        from: "protocol",
        why: "the protocol sits below the engine and the providers: it names nothing else of the crate",
        forbids: |p| p.first().is_some_and(|c| c == "crate") && !under(p, &["crate", "protocol"]),
    },
    Layer {
        from: "llm",
        why: "providers name no task (sim finds players through engine::sim::Players)",
        forbids: |p| under(p, &["crate", "tasks"]),
    },
    Layer {
        from: "tasks",
        why: "tasks do not import the sim provider (players use engine::sim)",
        forbids: |p| under(p, &["crate", "llm", "sim"]),
    },
    Layer {
        from: "config",
        why: "the config does not import the memory store",
        forbids: |p| under(p, &["crate", "memory"]),
    },
    Layer {
        from: "memory",
        why: "the memory store does not import the config (the data dir is userfile's)",
        forbids: |p| under(p, &["crate", "config"]),
    },
    Layer {
        from: "userfile",
        why: "userfile sits below the config and the memory store",
        forbids: |p| under(p, &["crate", "config"]) || under(p, &["crate", "memory"]),
    },
    Layer {
        from: "tui/ui",
        why: "the explorer's drawing reads tui::state and names nothing of tui::app",
        forbids: |p| under(p, &["crate", "tui", "app"]),
    },
];

/// Whether the file at `rel` (under src/) is in module `from` (`engine`, `tui/ui`).
fn in_module(rel: &Path, from: &str) -> bool {
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    let want: Vec<&str> = from.split('/').collect();
    parts.len() >= want.len() && parts.iter().zip(&want).all(|(a, b)| a == b)
}

/// The modules that may use clap: the command line (src/cli/) and the binary's root.
const CLAP_ALLOWED: &[&str] = &["cli", "main"];

/// Every `.rs` file under `dir`, test files included.
fn all_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            all_sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Punct(char),
}

/// The tokens of blanked code, each with its line: identifiers, `::` and single punctuation.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            // A lifetime or label (character literals are blanked): skip its name.
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push((Tok::Ident(word), line));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                i += 1;
            }
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Tok::Colons, line));
            i += 2;
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// The leaves of a use tree starting at `toks[*at]`, as segment lists (`self` leaves
/// name their parent; globs end in `*`); `*at` ends past the tree.
fn use_leaves(toks: &[(Tok, usize)], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    if matches!(toks.get(*at), Some((Tok::Colons, _))) {
        *at += 1; // a leading `::`
    }
    loop {
        match toks.get(*at) {
            Some((Tok::Punct('{'), _)) => {
                *at += 1;
                while !matches!(toks.get(*at), Some((Tok::Punct('}'), _)) | None) {
                    use_leaves(toks, at, path.clone(), out);
                    if matches!(toks.get(*at), Some((Tok::Punct(','), _))) {
                        *at += 1;
                    }
                }
                *at += 1;
                return;
            }
            Some((Tok::Punct('*'), _)) => {
                *at += 1;
                path.push("*".into());
                out.push(path);
                return;
            }
            Some((Tok::Ident(word), _)) => {
                *at += 1;
                if word == "self" && !path.is_empty() {
                    // `a::{self, b}`: `self` is `a` itself.
                } else {
                    path.push(word.clone());
                }
                if matches!(toks.get(*at), Some((Tok::Colons, _))) {
                    *at += 1;
                    continue;
                }
                if matches!(toks.get(*at), Some((Tok::Ident(w), _)) if w == "as") {
                    *at += 2;
                }
                out.push(path);
                return;
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
}

/// `path` resolved from inside module `module` (its segments under `crate`): `super` and
/// `self` walked, `crate` kept; `None` for a path that starts at a name in scope (an
/// import's, a local's), which the import itself was checked for.
fn resolve(path: &[String], module: &[String], externs: &[&str]) -> Option<Vec<String>> {
    let first = path.first()?;
    if first == "crate" || externs.contains(&first.as_str()) {
        return Some(path.to_vec());
    }
    if first != "super" && first != "self" {
        return None;
    }
    let mut at = module.to_vec();
    let mut rest = path;
    if rest[0] == "self" {
        rest = &rest[1..];
    }
    while rest.first().is_some_and(|s| s == "super") {
        at.pop();
        rest = &rest[1..];
    }
    let mut out = vec!["crate".to_string()];
    out.extend(at);
    out.extend(rest.iter().cloned());
    Some(out)
}

/// Every path `code` names (resolved), with its line. `module` is the file's module
/// under `crate`.
fn named_paths(code: &str, module: &[String]) -> Vec<(Vec<String>, usize)> {
    const EXTERNS: &[&str] = &["clap"];
    let toks = tokens(&blank(code));
    let mut out = Vec::new();
    // The inline modules open at this point, with the brace depth each opened at.
    let (mut inline, mut depth): (Vec<(String, i64)>, i64) = (Vec::new(), 0);
    let here = |inline: &[(String, i64)]| -> Vec<String> {
        module.iter().cloned().chain(inline.iter().map(|(m, _)| m.clone())).collect()
    };
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = &toks[i];
        match tok {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct('{'), _))) = (toks.get(i + 1), toks.get(i + 2)) {
                    inline.push((name.clone(), depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
            }
            Tok::Ident(w) if w == "use" => {
                let mut leaves = Vec::new();
                let mut at = i + 1;
                use_leaves(&toks, &mut at, Vec::new(), &mut leaves);
                for leaf in leaves {
                    if let Some(p) = resolve(&leaf, &here(&inline), EXTERNS) {
                        out.push((p, *line));
                    }
                }
                i = at;
                continue;
            }
            Tok::Ident(first) => {
                let preceded_by_colons = i > 0 && matches!(toks[i - 1].0, Tok::Colons);
                if !preceded_by_colons && matches!(toks.get(i + 1), Some((Tok::Colons, _))) {
                    let mut path = vec![first.clone()];
                    let mut j = i + 1;
                    while let (Some((Tok::Colons, _)), Some((Tok::Ident(next), _))) = (toks.get(j), toks.get(j + 1)) {
                        path.push(next.clone());
                        j += 2;
                    }
                    if let Some(p) = resolve(&path, &here(&inline), EXTERNS) {
                        out.push((p, *line));
                    }
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The module a file under src/ is (`engine/methods/react.rs` is `engine::methods::react`).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// Every forbidden arrow in the crate at `root` (its src/): `file:line: path (why)`.
fn layer_violations(root: &Path) -> Vec<String> {
    let src = root.join("src");
    let mut files = Vec::new();
    all_sources(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap_or(&file).to_path_buf();
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let rules: Vec<&Layer> = LAYERS.iter().filter(|l| in_module(&rel, l.from)).collect();
        let clap_ok = CLAP_ALLOWED.iter().any(|top| in_module(&rel, top));
        for (path, line) in named_paths(&text, &module_of(&rel)) {
            let shown = path.join("::");
            for rule in &rules {
                if (rule.forbids)(&path) {
                    found.push(format!("src/{}:{line}: {shown} ({})", rel.display(), rule.why));
                }
            }
            if !clap_ok && path.first().is_some_and(|c| c == "clap") {
                found.push(format!("src/{}:{line}: {shown} (clap belongs to src/cli only)", rel.display()));
            }
        }
    }
    found
}

#[test]
fn no_layer_names_what_it_must_not() {
    let found = layer_violations(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(found.is_empty(), "imports across a forbidden arrow:\n{}", found.join("\n"));
}

#[test]
fn the_layer_check_catches_planted_imports_and_paths() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let path = dir.path().join("src").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // Each of these is an arrow the rules forbid, written one way or another.
    write("engine/a.rs", "use crate::llm::Provider;\n");
    write("engine/b.rs", "fn f() -> u64 {\n    crate::llm::estimate(&x)\n}\n");
    write("engine/methods/c.rs", "use super::super::super::llm::X;\n");
    write("engine/d.rs", "use crate::{engine::Foo, llm::{self, Bar}};\n");
    write("engine/e.rs", "#[cfg(test)]\nmod tests {\n    use super::super::super::llm::sim::Sim;\n}\n");
    write("llm/f.rs", "pub fn g() { let _ = crate::tasks::names(); }\n");
    write("tasks/g.rs", "use crate::llm::sim::SimConfig;\n");
    write("config/h.rs", "use crate::memory::persist::MAX;\n");
    write("memory/i.rs", "fn d() { crate::config::data_dir(); }\n");
    write("userfile.rs", "const M: u64 = crate::memory::persist::MAX;\n");
    write("protocol/j.rs", "use crate::engine::rng::SplitMix64;\n");
    write("llm/k.rs", "#[derive(Debug, clap::Args)]\nstruct A;\n");
    write("tools/l.rs", "use clap::ValueEnum;\n");
    write("tui/ui/m.rs", "use super::super::app::App;\n");
    write("tui/ui/n.rs", "fn f(a: &crate::tui::app::App) {}\n");
    write("tui/ui.rs", "use crate::tui::{app::Pane, state::App};\n");
    // And these are allowed, or not code at all.
    write("engine/ok.rs", "// crate::llm::X in a comment\nconst S: &str = \"crate::llm::X\";\nuse crate::protocol::LlmRequest;\nuse super::sim::Players;\n");
    write("tasks/ok.rs", "use crate::engine::sim::SimConfig;\nuse crate::llm_like::X;\nfn f<'a>(x: &'a str) {}\n");
    write("cli/ok.rs", "use clap::Args;\n#[derive(clap::Parser)]\nstruct C;\n");
    write("llm/ok.rs", "use crate::engine::sim::Players;\nuse super::tasks_of::X;\n");
    write("tui/ui/ok.rs", "use super::super::state::App;\nuse crate::tui::appearance::X;\n");
    write("tui/app/ok.rs", "use crate::tui::app::Pane;\nuse crate::tui::ui::View;\n");
    write("tui/uix.rs", "use crate::tui::app::App;\n");
    let found = layer_violations(dir.path());
    let files: std::collections::BTreeSet<&str> = found.iter().map(|f| f.split(':').next().unwrap_or("")).collect();
    let expected = [
        "src/config/h.rs",
        "src/engine/a.rs",
        "src/engine/b.rs",
        "src/engine/d.rs",
        "src/engine/e.rs",
        "src/engine/methods/c.rs",
        "src/llm/f.rs",
        "src/llm/k.rs",
        "src/memory/i.rs",
        "src/protocol/j.rs",
        "src/tasks/g.rs",
        "src/tools/l.rs",
        "src/tui/ui.rs",
        "src/tui/ui/m.rs",
        "src/tui/ui/n.rs",
        "src/userfile.rs",
    ];
    assert_eq!(files.into_iter().collect::<Vec<_>>(), expected, "{found:#?}");
    assert!(found.iter().any(|f| f.starts_with("src/engine/b.rs:2: crate::llm::estimate")), "{found:#?}");
    assert!(found.iter().any(|f| f.starts_with("src/engine/d.rs:1: crate::llm ")), "`llm::{{self, ..}}`: {found:#?}");
}
