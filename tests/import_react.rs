//! `thoughtscope import react-text`: ReAct's logged trajectories as sessions that replay
//! exactly (the fixture everywhere, the shared 100 FEVER trajectories when present), and
//! an imported session in the explorer's transcript pane.

use std::path::{Path, PathBuf};
use std::process::Command;

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::Value;
use thoughtscope::engine::Input;
use thoughtscope::session::{import_react, replay, Session};
use thoughtscope::tasks::{self, TaskOptions};
use thoughtscope::tui::app::{App, Setup};
use thoughtscope::tui::keymap::Keymap;
use thoughtscope::tui::theme::ThemeSet;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/react-import-sample.txt")
}

fn run_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope")).args(args).output().expect("the binary runs");
    assert!(out.status.success(), "{args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| panic!("no output from {args:?}"));
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn observations(session: &Session) -> Vec<String> {
    session
        .inputs()
        .filter_map(|(i, _)| match i {
            Input::ToolReply(r) => Some(r.result.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn fixture_trajectories_import_and_replay_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported");
    let log = fixture();
    let s = run_json(&["import", "react-text", log.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(s["sessions"], 5);
    assert_eq!(s["em_log"], 3.0);
    assert_eq!(s["em"], 3, "{s}");
    assert_eq!(s["differences"], 0, "{s}");
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        ["fever-00011.jsonl", "fever-00022.jsonl", "fever-00033.jsonl", "fever-00044.jsonl", "hotpotqa-00055.jsonl"]
    );

    // The odd ones: a multi-line observation, then `Action i: \n\nFinish[...]` six times,
    // which the reference environment called invalid, and no finish at all.
    let odd = Session::load(&out.join("fever-00022.jsonl")).unwrap();
    let h = &odd.header;
    assert_eq!((h.task.as_str(), h.index, h.gold.as_deref()), ("fever", Some(22), Some("REFUTES")));
    assert_eq!((h.provider.as_str(), h.model.as_str(), h.simulated), ("import:react-text", "gpt-3 (recorded)", false));
    assert!(h.source.as_deref().unwrap().starts_with("react-text:") && h.source.as_deref().unwrap().ends_with("#22"));
    assert_eq!(h.params.max_steps, 7);
    assert_eq!(
        observations(&odd),
        ["Mount Kilimanjaro is a dormant volcano in Tanzania.\nIt is the highest mountain in Africa.\n\n\
          It rises about 5,895 metres above sea level."]
    );
    let rebuilt = replay::rebuild(&odd, None, None).unwrap();
    assert!(rebuilt.mismatches.is_empty(), "{:?}", rebuilt.mismatches);
    let outcome = rebuilt.engine.outcome().unwrap();
    assert_eq!((outcome.solved, outcome.answer.as_deref()), (false, None));
    let last = rebuilt.engine.tree().nodes().max_by_key(|n| n.depth).unwrap();
    assert_eq!(last.depth, 7);
    assert!(last.path.contains("Observation 7: Invalid action: Finish[REFUTES]\n"), "{}", last.path);
    // A free-text action is the environment's invalid action; HotpotQA answers are normalised.
    let free = replay::rebuild(&Session::load(&out.join("fever-00044.jsonl")).unwrap(), None, None).unwrap();
    let path = &free.engine.tree().nodes().max_by_key(|n| n.depth).unwrap().path;
    assert!(path.contains("Observation 1: Invalid action: check the Nobel Prizes of Marie Curie\n"), "{path}");
    let hotpot = replay::rebuild(&Session::load(&out.join("hotpotqa-00055.jsonl")).unwrap(), None, None).unwrap();
    assert!(hotpot.engine.outcome().unwrap().solved, "'the Danube' matches 'Danube'");

    let r = run_json(&["replay", out.to_str().unwrap(), "--headless", "--json"]);
    assert_eq!((r["n"].as_u64(), r["em"].as_u64()), (Some(5), Some(3)), "{r}");
    assert_eq!(r["bad_calls"], 7, "six invalid finishes and one free-text action: {r}");
}

#[test]
fn the_shared_fever_log_imports_as_100_sessions_with_em_52() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/react/fever_react_gpt3_first100.txt");
    if !log.exists() {
        eprintln!("skipped: {} is absent (the shared data folder is not next to this clone)", log.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fever");
    let s = run_json(&["import", "react-text", log.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(s["sessions"], 100);
    assert_eq!(s["em_log"], 52.0);
    assert_eq!(s["em"], 52, "{s}");
    assert_eq!(s["differences"], 0, "{s}");
    // `replay` fails (exit status 1) on any difference between the rebuilt run and the record.
    let r = run_json(&["replay", out.to_str().unwrap(), "--headless", "--json"]);
    assert_eq!((r["n"].as_u64(), r["em"].as_u64(), r["solved"].as_u64()), (Some(100), Some(52), Some(52)), "{r}");
}

#[test]
fn an_imported_session_shows_its_trajectory_in_the_transcript_pane() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    let report = import_react::import_text(&text, "sample.txt", dir.path()).unwrap();
    assert_eq!(report.differences, 0);
    let session = Session::load(&dir.path().join("fever-00033.jsonl")).unwrap();
    let task = tasks::for_header(&session.header, &TaskOptions::default()).unwrap();
    let setup = Setup { task, prompts: None, header: session.header.clone(), sessions_dir: dir.path().to_path_buf() };
    let mut app = App::replay(setup, session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).unwrap();
    terminal
        .draw(|f| {
            thoughtscope::tui::ui::draw_app(f, &mut app);
        })
        .unwrap();
    let screen = format!("{}", terminal.backend());
    for expected in [
        "Question: Grace Hopper worked on COBOL.",
        "Thought 1: I should search Grace Hopper.",
        "Action 1: Search[Grace Hopper]",
        "Observation 1: Grace Brewster Hopper (1906–1992) was an American computer scientist",
        "Action 2: Lookup[COBOL]",
        "Observation 2: (Result 1 / 2) She helped develop COBOL, an early programming language.",
        "Action 3: Finish[SUPPORTS]",
        "Observation 3: Episode finished, reward = 1",
    ] {
        assert!(screen.contains(expected), "{expected:?} is not on screen:\n{screen}");
    }
}
