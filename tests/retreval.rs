//! `thoughtscope run --method retreval`: its flags reach the session header, and a bad
//! flag is one plain line. (What the method does is tested at engine level, with
//! scripted replies, in `src/engine/methods/retreval/method_tests.rs`.)

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .arg("run")
        .args(args)
        .current_dir(dir)
        .env("THOUGHTSCOPE_DATA_DIR", dir.join("data"))
        .env("THOUGHTSCOPE_CONFIG_DIR", dir.join("config"))
        .env_remove("THOUGHTSCOPE_CONFIG")
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .output()
        .expect("the binary runs")
}

const BASE: [&str; 8] = ["--task", "math-demo", "--method", "retreval", "--provider", "sim", "--range", "0..1"];

#[test]
fn the_ablation_flags_are_accepted_and_recorded_in_the_session_header() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("one.jsonl");
    let mut args = BASE.to_vec();
    args.extend([
        "--no-memory",
        "--no-tools",
        "--no-cross",
        "--complexity-table",
        "official",
        "--skeptic-weight",
        "0.3",
        "--record",
        rec.to_str().unwrap(),
        "--json",
    ]);
    let out = run(dir.path(), &args);
    assert!(out.status.success(), "failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let session = thoughtscope::session::Session::load(&rec).unwrap();
    let params = &session.header.params;
    assert_eq!(params.method.label(), "retreval");
    assert_eq!(params.extra["no_memory"], true);
    assert_eq!(params.extra["no_tools"], true);
    assert_eq!(params.extra["no_cross"], true);
    assert_eq!(params.extra["complexity_table"], "official");
    assert_eq!(params.extra["skeptic_weight"], 0.3);
    assert!(params.extra.get("no_backtrack").is_none(), "flags not given stay out of the header");
}

#[test]
fn a_bad_complexity_table_is_one_plain_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = BASE.to_vec();
    args.extend(["--complexity-table", "huge"]);
    let out = run(dir.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("complexity_table (--complexity-table) is \"huge\""), "{stderr}");
    assert!(stderr.contains("paper, official"), "{stderr}");
    // A ReTreVal flag with another method is refused too.
    let out = run(dir.path(), &["--task", "math-demo", "--method", "react", "--no-memory", "--range", "0..1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--no-memory is for --method retreval"), "{stderr}");
}
