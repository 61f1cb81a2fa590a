//! Check programs of every kind of misbehaviour: each ends within its limit (plus a
//! margin for a loaded machine), leaves nothing of itself running, and fails in one line
//! that names the program, the phase and what it printed.

use std::time::{Duration, Instant};

use super::*;
use crate::engine::CheckPurpose;

/// A check of `script` (run by `sh -c`) with `stdin` and a limit of `timeout_ms`.
fn sh(script: &str, stdin: &str, timeout_ms: u64) -> CheckRequest {
    CheckRequest {
        purpose: CheckPurpose::Answer,
        argv: vec!["sh".into(), "-c".into(), script.into()],
        timeout_ms,
        stdin: stdin.into(),
    }
}

const INPUT: &str = r#"{"answer": "7", "gold": "7", "input": "3 + 4"}"#;

/// How far past its limit a run may end on a busy machine: it must end, not hang.
const MARGIN: Duration = Duration::from_secs(5);

/// Run `request`, checking that it ended within its limit (plus [`MARGIN`]).
fn timed(request: &CheckRequest) -> Result<Verdict, String> {
    let started = Instant::now();
    let result = run(request);
    let took = started.elapsed();
    assert!(took < Duration::from_millis(request.timeout_ms) + MARGIN, "{:?} took {took:?}", request.argv);
    result
}

/// Whether process `pid` still runs (a zombie counts as ended).
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state is the field after the command name in parentheses.
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).unwrap_or("");
    !stat.is_empty() && state != "Z" && state != "X"
}

/// The pid a script wrote to `file`, once it is there.
fn pid_in(file: &std::path::Path) -> i32 {
    for _ in 0..200 {
        if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} was never written", file.display());
}

fn gone_soon(pid: i32) -> bool {
    (0..200).any(|_| {
        let gone = !alive(pid);
        if !gone {
            std::thread::sleep(Duration::from_millis(10));
        }
        gone
    })
}

#[test]
fn verdicts_are_read_as_json_or_a_first_word() {
    let v = timed(&sh(r#"cat > /dev/null; echo '{"correct": true, "score": 0.5}'"#, INPUT, 5000)).unwrap();
    assert_eq!((v.correct, v.score), (true, 0.5));
    let v = timed(&sh("grep -q '\"answer\": \"7\"' && echo 'Correct: well done' || echo incorrect", INPUT, 5000));
    assert_eq!(v.map(|v| (v.correct, v.said)), Ok((true, "Correct: well done".to_string())));
    assert!(!timed(&sh("echo INCORRECT", INPUT, 5000)).unwrap().correct);
}

#[test]
fn a_program_that_fails_is_one_line_naming_it_and_what_it_printed() {
    let cases: [(&str, &str); 6] = [
        ("echo maybe", "printed \"maybe\"; a check program prints"),
        ("echo '{\"correct\": \"yes\"}'", "printed \"{\\\"correct\\\": \\\"yes\\\"}\""),
        ("echo '{\"correct\": true, \"score\": 7}'", "a check program prints"),
        ("echo correct; exit 3", "exited with status 3 and printed \"correct\""),
        ("echo oops >&2; exit 1", "exited with status 1 and printed nothing (on its error output: \"oops\")"),
        ("kill -SEGV $$", "was killed by signal 11"),
    ];
    for (script, said) in cases {
        let failure = timed(&sh(script, INPUT, 5000)).expect_err(script);
        assert!(failure.starts_with("the check command `sh -c "), "{failure}");
        assert!(failure.contains(said), "{script}: {failure}");
        assert!(!failure.contains('\n'), "one line: {failure}");
    }
    let missing = CheckRequest { argv: vec!["/no/such/checker".into()], ..sh("", INPUT, 5000) };
    let failure = timed(&missing).unwrap_err();
    assert!(failure.starts_with("the check command `/no/such/checker` cannot start:"), "{failure}");
    let empty = CheckRequest { argv: vec![], ..sh("", INPUT, 5000) };
    assert!(timed(&empty).unwrap_err().contains("names no program"));
}

#[test]
fn a_program_over_its_limit_is_stopped_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let script = format!("sleep 30 & echo $! > {}; sleep 30", pid_file.display());
    let failure = timed(&sh(&script, INPUT, 300)).unwrap_err();
    assert!(failure.contains("took over 300 ms; it was stopped"), "{failure}");
    assert!(gone_soon(pid_in(&pid_file)), "the child it started is killed with it");
}

#[test]
fn children_left_holding_the_output_do_not_hold_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    // The verdict is printed, and a child keeps the output pipe open for 30 s.
    let script = format!("sleep 30 & echo $! > {}; echo correct", pid_file.display());
    let started = Instant::now();
    let v = timed(&sh(&script, INPUT, 10_000)).unwrap();
    assert!(v.correct && started.elapsed() < Duration::from_secs(5), "the verdict counts at once");
    assert!(gone_soon(pid_in(&pid_file)), "what it left running is killed");
    // A program that goes to the background and answers later has given no verdict when it ends.
    let failure = timed(&sh("(sleep 1; echo correct) &", INPUT, 10_000)).unwrap_err();
    assert!(failure.contains("printed nothing"), "{failure}");
    // One that leaves its process group keeps running, but cannot hold the run either.
    let v = timed(&sh("setsid sleep 30 & echo correct", INPUT, 10_000)).unwrap();
    assert!(v.correct);
}

#[test]
fn input_is_written_within_the_limit_whether_or_not_it_is_read() {
    let big = format!(r#"{{"answer": "{}", "gold": "7", "input": "x"}}"#, "7".repeat(4 << 20));
    // It reads none of its input and keeps running: the limit covers writing it.
    let failure = timed(&sh("sleep 30", &big, 300)).unwrap_err();
    assert!(failure.contains(&format!("did not read its input ({} bytes) within 300 ms", big.len())), "{failure}");
    // It reads none of it and answers at once: what it did not read does not matter.
    assert!(timed(&sh("echo correct", &big, 10_000)).unwrap().correct);
    // It reads all of it.
    assert!(timed(&sh("wc -c > /dev/null; echo correct", &big, 10_000)).unwrap().correct);
}

#[test]
fn output_is_bounded() {
    let failure = timed(&sh("yes correct", INPUT, 10_000)).unwrap_err();
    assert!(failure.contains("printed over 64 KiB on its output"), "{failure}");
    // Its error output is read and dropped past what messages quote: no limit, no hang.
    let v = timed(&sh("head -c 3000000 /dev/zero | tr '\\0' x >&2; echo correct", INPUT, 10_000)).unwrap();
    assert!(v.correct);
}
