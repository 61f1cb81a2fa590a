//! The grader on real MATH-500 answers (when the data set is there) and the `grade`
//! command: its verdict line, exit codes and JSON shape.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use thoughtscope::grade::{equivalent, extract_answer, normalize};

fn math500() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).join("shared/data/math/math500_prm800k_test.jsonl")
}

#[test]
fn every_math500_answer_matches_itself_and_its_solution() {
    let path = math500();
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipped: {} is not there (the MATH-500 data set lives outside the repository)", path.display());
        return;
    };
    let rows: Vec<Value> =
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(rows.len(), 500);
    let answers: Vec<&str> = rows.iter().map(|r| r["answer"].as_str().expect("answer")).collect();
    let mut self_ok = 0;
    let mut solution_ok = 0;
    let mut misses = Vec::new();
    for (row, answer) in rows.iter().zip(&answers) {
        if equivalent(answer, answer) {
            self_ok += 1;
        } else {
            misses.push(format!("self: {answer}"));
        }
        let solution = row["solution"].as_str().expect("solution");
        let boxed = extract_answer(solution).unwrap_or_default();
        if equivalent(answer, &boxed) {
            solution_ok += 1;
        } else {
            misses.push(format!("solution: {answer} vs {boxed}"));
        }
    }
    // Shuffled pairs: answer i against answer i+k, where the normal forms differ.
    let (mut pairs, mut different) = (0, 0);
    let mut false_matches = Vec::new();
    for k in [1, 7, 101] {
        for i in 0..answers.len() {
            let (a, b) = (answers[i], answers[(i + k) % answers.len()]);
            if normalize(a) == normalize(b) {
                continue;
            }
            pairs += 1;
            if equivalent(a, b) {
                false_matches.push(format!("{a} vs {b}"));
            } else {
                different += 1;
            }
        }
    }
    println!("self {self_ok}/500, solution {solution_ok}/500, shuffled different {different}/{pairs}");
    println!("misses: {misses:#?}\nshuffled pairs judged equivalent: {false_matches:#?}");
    assert_eq!(self_ok, 500, "{misses:#?}");
    assert!(solution_ok >= 495, "{misses:#?}");
    assert!(different * 100 >= pairs * 99, "{false_matches:#?}");
}

fn grade_cmd(args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .arg("grade")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.unwrap_or("").as_bytes()).expect("stdin written");
    drop(input);
    child.wait_with_output().expect("the binary ends")
}

#[test]
fn grade_prints_the_verdict_and_exits_0_either_way() {
    let out = grade_cmd(&["\\frac{1}{2}", "0.5"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "equivalent");
    let out = grade_cmd(&["(1,2)", "[1,2]"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "different");
    // Negative numbers and lists starting with a minus are answers, not flags.
    let out = grade_cmd(&["-2,1", "1, -2"], None);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "equivalent", "{}", String::from_utf8_lossy(&out.stderr));
    let out = grade_cmd(&["-3", "3"], None);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "different");
}

#[test]
fn grade_json_shape_and_long_replies_from_files_and_stdin() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let reply = dir.path().join("reply.txt");
    std::fs::write(
        &reply,
        "Let me think.\n\nSo $x = 1 \\pm \\sqrt{19}$ and\nthe answer is $\\boxed{1\\pm\\sqrt{19}}$.",
    )
    .expect("written");
    let file = reply.to_string_lossy().to_string();
    let out = grade_cmd(&["--json", "1+\\sqrt{19}, 1-\\sqrt{19}", "--pred-file", &file], None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "one object: {stdout}");
    let v: Value = serde_json::from_str(stdout.trim()).expect("JSON");
    assert_eq!(v["equivalent"], true, "{v}");
    assert_eq!(v["pred"]["extracted"], "1\\pm\\sqrt{19}");
    assert_eq!(v["gold"]["normalized"], "1+\\sqrt{19},1-\\sqrt{19}");
    for side in ["gold", "pred"] {
        for key in ["extracted", "normalized"] {
            assert!(v[side][key].is_string(), "{side}.{key}: {v}");
        }
    }
    assert!(v["reason"].is_string());
    let gold = dir.path().join("solution.txt");
    std::fs::write(&gold, "Adding, we get $\\boxed{12}$.").expect("written");
    let out = grade_cmd(&["--gold-file", &gold.to_string_lossy(), "12.0"], None);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "equivalent", "{}", String::from_utf8_lossy(&out.stderr));
    let out = grade_cmd(&["--json", "12", "-"], Some("Thinking...\nFinal answer: 12\n"));
    let v: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).expect("JSON");
    assert_eq!(v["equivalent"], true, "{v}");
}

#[test]
fn grade_errors_are_one_line_with_exit_2() {
    for (args, needle) in [
        (vec!["5", "   "], "prediction is empty"),
        (vec!["", "5"], "gold answer is empty"),
        (vec!["5"], "PRED"),
        (vec!["5", "--pred-file", "/nonexistent/reply.txt"], "/nonexistent/reply.txt"),
        (vec!["-", "-"], "only one"),
        (vec!["--gold-file", "/etc/hostname", "1", "2"], "not both"),
    ] {
        let out = grade_cmd(&args, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
