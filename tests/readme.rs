//! The README's opening stays what a newcomer needs: what the product is, the two set-up
//! commands (the explorer on the offline default, the whole test suite, which is what
//! `.ci/run` runs) and a table of contents that lists every section, in order.

use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md is readable")
}

/// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to dashes.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text.find(&format!("\n## {heading}\n")).unwrap_or_else(|| panic!("no section {heading:?}"));
    let body = &text[start + heading.len() + 5..];
    body.find("\n## ").map_or(body, |end| &body[..end])
}

#[test]
fn the_readme_opens_with_the_product_the_two_commands_and_its_contents() {
    let text = readme();
    assert!(text.starts_with("# thoughtscope\n\n"), "the README starts with the product's name");
    let intro = &text[..text.find("\n## ").expect("sections")];
    assert!(intro.contains("terminal workbench"), "the opening says what the product is");
    let headings: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("## ")).collect();
    assert_eq!(headings[..2], ["Set-up on a fresh machine", "Contents"], "set-up first, then the contents");

    let setup = section(&text, "Set-up on a fresh machine");
    let block = setup.split("```").nth(1).expect("a code block of commands");
    let commands: Vec<&str> =
        block.lines().skip(1).map(|l| l.split('#').next().unwrap().trim()).filter(|l| !l.is_empty()).collect();
    assert_eq!(commands, ["cargo run --release", "cargo test"], "exactly the two set-up commands");
    let ci = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).expect(".ci/run");
    assert!(ci.lines().any(|l| l.starts_with("cargo test")), ".ci/run runs the README's test command");

    let listed: Vec<(String, String)> = section(&text, "Contents")
        .lines()
        .filter_map(|l| l.strip_prefix("- ["))
        .map(|l| {
            let (title, rest) = l.split_once("](#").expect("a link");
            (title.to_string(), rest.trim_end_matches(')').to_string())
        })
        .collect();
    let expected: Vec<(String, String)> = headings[2..].iter().map(|h| (h.to_string(), anchor(h))).collect();
    assert_eq!(listed, expected, "the contents list every section in order, with working links");
}

/// The `--task` and `--method` rows of the CLI reference list every registered task and
/// method, in the registries' order, so the reference cannot go stale.
#[test]
fn the_cli_reference_lists_every_task_and_method_of_the_registries() {
    let text = readme();
    let reference = section(&text, "CLI reference");
    let listed = |flag: &str| -> Vec<String> {
        let row = reference
            .lines()
            .find(|l| l.starts_with(&format!("| `{flag} ")))
            .unwrap_or_else(|| panic!("a {flag} row in the CLI reference"));
        let values = row[format!("| `{flag} ").len()..].split('`').next().unwrap_or("");
        values.split("\\|").map(str::to_string).collect()
    };
    let tasks: Vec<String> = thoughtscope::tasks::REGISTRY.iter().map(|e| e.info.name.to_string()).collect();
    let methods: Vec<String> =
        thoughtscope::engine::methods::REGISTRY.iter().map(|m| m.kind.label().to_string()).collect();
    let mut listed_tasks = listed("--task");
    let mut registered_tasks = tasks.clone();
    listed_tasks.sort();
    registered_tasks.sort();
    assert_eq!(listed_tasks, registered_tasks, "the --task row lists every registered task");
    assert_eq!(listed("--method"), methods, "the --method row lists every method, in the registry's order");
}
