//! The engine is pure logic: nothing under src/engine may use an async runtime,
//! an HTTP client, a terminal library or the command-line parser.

use std::path::Path;

const FORBIDDEN: [&str; 6] = ["tokio", "reqwest", "ratatui", "crossterm", "std::net", "clap"];

fn scan(dir: &Path, offenders: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("src/engine is readable") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            scan(&path, offenders);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source is readable");
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for name in FORBIDDEN {
                    let used = code.contains(&format!("{name}::"))
                        || code.contains(&format!("use {name}"))
                        || code.contains(&format!("extern crate {name}"));
                    if used {
                        offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
}

#[test]
fn engine_imports_no_io_crates() {
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut offenders = Vec::new();
    scan(&engine, &mut offenders);
    assert!(offenders.is_empty(), "the engine must stay sans-IO:\n{}", offenders.join("\n"));
}

#[test]
fn the_scan_catches_a_forbidden_import() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.rs"), "use tokio::sync::mpsc;\n// tokio:: in a comment is fine\n").unwrap();
    let mut offenders = Vec::new();
    scan(dir.path(), &mut offenders);
    assert_eq!(offenders.len(), 1, "{offenders:?}");
}
