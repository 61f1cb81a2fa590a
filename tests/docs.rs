//! The docs cannot drift from the code: `thoughtscope docs --check` regenerates the
//! reference, the README's method and task table and the explorer's picture in memory
//! and fails naming each committed file that differs; and every relative link in
//! README.md and docs/ leads to a file that exists and, with an `#anchor`, to one of its
//! headings.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn docs(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope")).arg("docs").args(args).output().expect("the binary runs")
}

#[test]
fn the_generated_docs_match_the_code() {
    let out = docs(&["--check", root().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "the generated docs differ from the code: run `cargo run -- docs` and commit the result\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A copy of the generated files with one changed and one removed: `--check` names both
/// and tells what to run; `docs DIR` writes them back, and then `--check` passes.
#[test]
fn a_changed_generated_file_is_named_and_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let copy = |rel: &str| {
        let target = dir.path().join(rel);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(root().join(rel), &target).unwrap();
    };
    copy("README.md");
    copy("assets/explorer.svg");
    for folder in ["docs/reference", "docs/man"] {
        for entry in std::fs::read_dir(root().join(folder)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            copy(&format!("{folder}/{name}"));
        }
    }
    let run = dir.path().join("docs/reference/run.md");
    let text = std::fs::read_to_string(&run).unwrap();
    std::fs::write(&run, text.replacen("--task", "--tsak", 1)).unwrap();
    std::fs::remove_file(dir.path().join("docs/reference/keys.md")).unwrap();
    let man = dir.path().join("docs/man/thoughtscope-serve.1");
    let page = std::fs::read_to_string(&man).unwrap();
    std::fs::write(&man, page.replacen("port", "prot", 1)).unwrap();
    std::fs::remove_file(dir.path().join("docs/man/thoughtscope-task-new.1")).unwrap();
    let out = docs(&["--check", dir.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("docs/reference/run.md") && err.contains("docs/reference/keys.md"), "{err}");
    assert!(err.contains("docs/man/thoughtscope-serve.1") && err.contains("docs/man/thoughtscope-task-new.1"), "{err}");
    assert!(!err.contains("docs/reference/tui.md"), "only the changed files are named: {err}");
    assert!(!err.contains("docs/man/thoughtscope-run.1"), "only the changed files are named: {err}");
    assert!(err.contains("run `cargo run -- docs`"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");

    let out = docs(&[dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&run).unwrap(), text, "the file is written back");
    assert_eq!(std::fs::read_to_string(&man).unwrap(), page, "the man page is written back");
    assert!(docs(&["--check", dir.path().to_str().unwrap()]).status.success());
}

/// The man pages come from the same clap definitions as `--help`: `thoughtscope.1`, one
/// page per command `-h` lists and one per nested command, each with its options; no
/// page is left for a command that is gone; and `man ./docs/man/PAGE` (what the docs
/// tell a reader to type) shows them.
#[test]
fn each_command_has_a_man_page_that_man_reads() {
    let dir = root().join("docs/man");
    let mut pages: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    pages.sort();
    let top = std::fs::read_to_string(dir.join("thoughtscope.1")).unwrap();
    assert!(top.contains(".TH thoughtscope 1"), "{top}");
    let commands = commands(&help(&["-h"]));
    assert!(commands.len() >= 12, "{commands:?}");
    for command in &commands {
        let page = format!("thoughtscope-{command}.1");
        let text = std::fs::read_to_string(dir.join(&page)).unwrap_or_else(|e| panic!("docs/man/{page}: {e}"));
        assert!(text.contains(&format!(".TH thoughtscope-{command} 1")), "{page}");
        assert!(top.contains(&format!("thoughtscope\\-{command}(1)")), "thoughtscope.1 lists {command}");
    }
    assert!(pages.contains(&"thoughtscope-task-new.1".to_string()), "nested commands have pages: {pages:?}");
    for page in &pages {
        let name = page.strip_suffix(".1").unwrap_or_else(|| panic!("docs/man/{page} is not a section-1 page"));
        let command = name.strip_prefix("thoughtscope").unwrap().trim_start_matches('-');
        let first = command.split('-').next().unwrap();
        assert!(command.is_empty() || commands.iter().any(|c| c == first), "docs/man/{page}: no such command");
    }
    let run = std::fs::read_to_string(dir.join("thoughtscope-run.1")).unwrap();
    for flag in ["uct\\-c", "budget\\-usd", "task"] {
        assert!(run.contains(&format!("\\-\\-{flag}")), "thoughtscope-run.1 lists --{flag}");
    }

    let Ok(out) = Command::new("man")
        .current_dir(root())
        .arg("./docs/man/thoughtscope-run.1")
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("LC_ALL", "C")
        .output()
    else {
        eprintln!("skipped reading the page with man: this machine has no `man`");
        return;
    };
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "man: {}", String::from_utf8_lossy(&out.stderr));
    for text in ["thoughtscope-run", "--uct-c", "--budget-usd", "SEE ALSO", "docs/reference/run.md"] {
        assert!(shown.contains(text), "man shows {text}:\n{shown}");
    }
}

/// A README without the table's marker lines is one line saying so, not a panic.
#[test]
fn a_readme_without_the_markers_is_said() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "# thoughtscope\n").unwrap();
    let out = docs(&["--check", dir.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("README.md lacks the marker lines"), "{err}");
    let out = docs(&[dir.path().join("nowhere").to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("README.md"), "the missing file is named");
}

use crate::support::anchor;

/// The anchors of a Markdown file's headings (outside code blocks), with GitHub's `-1`,
/// `-2` suffixes for repeated ones.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = anchor(heading.trim());
        let mut name = base.clone();
        let mut n = 0;
        while seen.contains(&name) {
            n += 1;
            name = format!("{base}-{n}");
        }
        seen.push(name);
    }
    seen
}

/// The targets of a Markdown text's inline links and images, outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code is not a link.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    found
}

fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut files = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut files);
    files.sort();
    files
}

/// Every broken relative link of `file`: `(link, why)`.
fn broken_links(file: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut broken = Vec::new();
    for link in links(&text) {
        if link.contains("://") || link.starts_with("mailto:") {
            continue;
        }
        let (path, fragment) = link.split_once('#').map_or((link.as_str(), None), |(p, f)| (p, Some(f)));
        let target = if path.is_empty() { file.to_path_buf() } else { file.parent().unwrap().join(path) };
        let Ok(target) = target.canonicalize() else {
            broken.push((link.clone(), "no such file".to_string()));
            continue;
        };
        if !target.starts_with(root().canonicalize().unwrap()) {
            broken.push((link.clone(), "it leaves the repository".to_string()));
            continue;
        }
        if let Some(fragment) = fragment {
            let is_markdown = target.extension().is_some_and(|e| e == "md");
            let has = is_markdown && anchors(&std::fs::read_to_string(&target).unwrap()).iter().any(|a| a == fragment);
            if !has {
                broken.push((link.clone(), format!("no heading #{fragment} there")));
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_in_the_readme_and_docs_leads_somewhere() {
    let files = markdown_files();
    assert!(files.len() > 10, "README.md and the guides: {files:?}");
    let mut broken = Vec::new();
    for file in &files {
        for (link, why) in broken_links(file) {
            broken.push(format!("{}: {link}: {why}", file.strip_prefix(root()).unwrap().display()));
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The link check finds what it should: a missing file, a missing anchor, a way out of
/// the repository; and passes good links, links in code and web addresses.
#[test]
fn the_link_check_fails_on_a_missing_file_or_anchor() {
    let dir = tempfile::Builder::new().prefix("link-check").tempdir_in(root().join("target")).unwrap();
    let page = dir.path().join("page.md");
    // A file that exists outside the repository, named relative to the page.
    let outside = tempfile::NamedTempFile::new().unwrap();
    let up = "../".repeat(dir.path().components().count() - 1);
    let out = format!("{up}{}", outside.path().strip_prefix("/").unwrap().display());
    std::fs::write(
        dir.path().join("other.md"),
        "# Other\n\n## Tasks and task files\n\n```\n## not a heading\n```\n## Twice\n## Twice\n",
    )
    .unwrap();
    std::fs::write(
        &page,
        format!(
            "# Page\n\n[ok](other.md#tasks-and-task-files) [ok](other.md#twice-1) [ok](#page) \
             [web](https://example.com/x.md) `[code](nowhere.md)`\n\
             [gone](missing.md) [no anchor](other.md#not-a-heading) [out]({out})\n"
        ),
    )
    .unwrap();
    let broken: Vec<String> = broken_links(&page).into_iter().map(|(link, _)| link).collect();
    assert_eq!(broken, ["missing.md".to_string(), "other.md#not-a-heading".to_string(), out]);
}

#[test]
fn no_link_points_at_the_shared_folder() {
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("../shared"), "{} names ../shared, which a clone does not have", file.display());
    }
}

/// Every guide in docs/ is listed in the README's Guides section and in docs/README.md,
/// so a newcomer finds it from either.
#[test]
fn every_guide_is_listed_in_both_indexes() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let guides = &readme[readme.find("\n## Guides\n").expect("a Guides section")..];
    let index = std::fs::read_to_string(root().join("docs/README.md")).unwrap();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".md") || name == "README.md" {
            continue;
        }
        assert!(guides.contains(&format!("](docs/{name})")), "README.md's Guides do not list docs/{name}");
        assert!(index.contains(&format!("]({name})")), "docs/README.md does not list {name}");
    }
}

/// Rows `text` takes on an 80-column terminal (a longer line wraps).
fn rows_at_80(text: &str) -> usize {
    text.lines().map(|l| l.chars().count().div_ceil(80).max(1)).sum()
}

/// The commands `thoughtscope -h` lists (not `help`).
fn commands(top: &str) -> Vec<String> {
    top.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope")).args(args).output().expect("the binary runs");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `-h` is a door: the top level's and each command's fit one 80×24 screen and say where
/// every option is; `--help` still lists every option.
#[test]
fn each_short_help_fits_one_screen_and_points_to_the_rest() {
    let top = help(&["-h"]);
    assert!(rows_at_80(&top) <= 24, "thoughtscope -h takes {} rows:\n{top}", rows_at_80(&top));
    assert!(top.contains("thoughtscope tui -h") && top.contains("docs/reference/"), "{top}");
    let commands = commands(&top);
    assert!(commands.len() >= 12, "{commands:?}");
    for command in &commands {
        let short = help(&[command, "-h"]);
        assert!(rows_at_80(&short) <= 24, "{command} -h takes {} rows:\n{short}", rows_at_80(&short));
        let page = format!("docs/reference/{command}.md");
        assert!(short.contains(&page), "{command} -h names {page}:\n{short}");
        assert!(root().join(&page).exists(), "{page} exists");
    }
    let long = help(&["run", "--help"]);
    let short = help(&["run", "-h"]);
    for flag in ["--uct-c", "--budget-usd", "--sim-noise", "--task"] {
        assert!(long.contains(flag), "run --help lists {flag}");
    }
    assert!(!short.contains("--uct-c") && short.contains("--task"), "run -h keeps the common options:\n{short}");
}
