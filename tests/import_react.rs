//! `thoughtscope import react-text`: ReAct's logged trajectories as sessions that replay
//! exactly (the fixture everywhere, the shared 100 FEVER trajectories when present), and
//! an imported session in the explorer's transcript pane.

use std::path::{Path, PathBuf};
use std::process::Command;

use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::Value;
use thoughtscope::engine::Input;
use thoughtscope::import::react as import_react;
use thoughtscope::session::{replay, Session};
use thoughtscope::tasks::TaskOptions;
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
    assert_eq!(h.params.whole("max_steps"), Some(7));
    assert_eq!(
        observations(&odd),
        ["Mount Kilimanjaro is a dormant volcano in Tanzania.\nIt is the highest mountain in Africa.\n\n\
          It rises about 5,895 metres above sea level."]
    );
    let rebuilt = replay::rebuild(&odd, None, None).unwrap();
    assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
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

    // A directory of two tasks is summarised per task: fever (4), then hotpotqa (1).
    let replayed = std::process::Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["replay", out.to_str().unwrap(), "--headless", "--json"])
        .output()
        .unwrap();
    assert!(replayed.status.success(), "{}", String::from_utf8_lossy(&replayed.stderr));
    let groups: Vec<serde_json::Value> =
        String::from_utf8_lossy(&replayed.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let counts: Vec<_> = groups.iter().map(|r| (r["task"].as_str(), r["n"].as_u64(), r["em"].as_u64())).collect();
    assert_eq!(counts, [(Some("fever"), Some(4), Some(2)), (Some("hotpotqa"), Some(1), Some(1))], "{groups:?}");
    let bad: u64 = groups.iter().map(|r| r["bad_calls"].as_u64().unwrap()).sum();
    assert_eq!(bad, 7, "six invalid finishes and one free-text action: {groups:?}");
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
    // Each one opens in the explorer with its trajectory in the transcript pane.
    let mut rendered = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let session = Session::load(&path).unwrap();
        let rebuilt = replay::rebuild(&session, None, None).unwrap();
        // Every step is typed on its node and its text is the step's, written once.
        let tree = rebuilt.engine.tree();
        for node in tree.nodes().filter(|n| n.depth > 0) {
            let step = node.step.as_ref().unwrap_or_else(|| panic!("{}: node {} has no step", path.display(), node.id));
            assert_eq!(node.thought, step.text());
            assert_eq!(node.path, format!("{}{}", tree.node(node.parent.unwrap()).path, step.path_text()));
            // A bad call is a step that could not act, or (the code's `ohh...`) one whose
            // reply did not split and whose action the model was asked for again.
            let reasked = node.issues.iter().any(|i| i.to_string().contains("asked again for the action"));
            assert_eq!(step.is_bad_call() || reasked, node.issues.iter().any(|i| i.is_bad_call()));
        }
        let last = rebuilt.engine.tree().nodes().max_by_key(|n| n.depth).unwrap();
        let last_line: String = last.thought.lines().last().unwrap_or("").chars().take(50).collect();
        let screen = render(session, dir.path());
        // The transcript follows the last step: its last line (the observation) is on screen.
        let transcript = screen.split_once("4 Transcript").map(|(_, t)| t).unwrap_or_default();
        assert!(transcript.contains(&last_line), "{}: {last_line:?} not in the transcript\n{screen}", path.display());
        rendered += 1;
    }
    assert_eq!(rendered, 100);
}

/// The notebook's bad calls: a reply that did not split into `Thought i` and `Action i`
/// is printed after `ohh...`, then the step made of its first line and the action a second
/// call wrote. Each imports as that bad call followed by its step, nothing more.
#[test]
fn bad_calls_import_as_a_bad_call_then_the_step() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/react-bad-calls.txt");
    let text = std::fs::read_to_string(&log).unwrap();
    let (trajectories, warnings) = thoughtscope::tasks::react_text::read_trajectories(&text, "bad.txt");
    assert!(warnings.is_empty(), "{warnings:?}");
    let steps: Vec<usize> = trajectories.iter().map(|t| t.steps.len()).collect();
    assert_eq!(steps, [2, 2], "no extra step from the bad call's own `Action 1:` lines");
    let first = &trajectories[0].steps[0];
    assert_eq!(first.observation, "Paramore is an American rock band from Franklin, Tennessee, formed in 2004.");
    assert_eq!(first.bad_call, None);
    let bad = trajectories[0].steps[1].bad_call.as_deref().unwrap();
    assert_eq!(bad, " The observation says that the band is \"from Franklin, Tennessee\", so the claim is false.");
    let bad = trajectories[1].steps[0].bad_call.as_deref().unwrap();
    assert!(bad.ends_with("\nAction 1: Search[Eric Church]\nAction 1: Search[Eric Church (singer)]"), "{bad:?}");
    assert_eq!(trajectories[1].steps[0].action_raw, "Search[Eric Church]");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported");
    let s = run_json(&["import", "react-text", log.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!((s["sessions"].as_u64(), s["em"].as_u64()), (Some(2), Some(2)), "{s}");
    assert_eq!(s["differences"], 0, "{s}");
    for (name, bad_step) in [("fever-00011.jsonl", 2), ("fever-00022.jsonl", 1)] {
        let session = Session::load(&out.join(name)).unwrap();
        // Two calls in the bad step: the reply that did not split, then the action alone.
        let replies: Vec<(String, bool)> = session
            .inputs()
            .filter_map(|(i, request)| match i {
                Input::LlmReply(r) => {
                    let reask = request.and_then(|q| q.context.get("reask")).is_some();
                    Some((r.result.as_ref().unwrap().completions[0].text.to_string(), reask))
                }
                _ => None,
            })
            .collect();
        assert_eq!(replies.len(), 3, "{name}: {replies:?}");
        assert!(replies[bad_step - 1].0.starts_with(" "), "{name}: the bad reply as printed: {replies:?}");
        assert!(replies[bad_step].1, "{name}: the second call asks for the action: {replies:?}");
        let rebuilt = replay::rebuild(&session, None, None).unwrap();
        assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
        let tree = rebuilt.engine.tree();
        let nodes: Vec<_> = tree.nodes().filter(|n| n.depth > 0).collect();
        assert_eq!(nodes.len(), 2, "{name}: two steps");
        let bad = nodes.iter().find(|n| n.depth == bad_step).unwrap();
        assert!(bad.issues.iter().any(|i| i.is_bad_call()), "{name}: the step records its bad call");
        assert!(rebuilt.engine.outcome().unwrap().solved, "{name}");
    }
    let eric = replay::rebuild(&Session::load(&out.join("fever-00022.jsonl")).unwrap(), None, None).unwrap();
    let path = &eric.engine.tree().nodes().max_by_key(|n| n.depth).unwrap().path;
    assert!(
        path.contains(
            "Thought 1: I need to search Eric Church and see if he is a sound mixer.\nAction 1: Search[Eric Church]\n\
             Observation 1: Kenneth Eric Church"
        ),
        "{path}"
    );
    let r = run_json(&["replay", out.to_str().unwrap(), "--headless", "--json"]);
    assert_eq!((r["n"].as_u64(), r["em"].as_u64(), r["bad_calls"].as_u64()), (Some(2), Some(2), Some(2)), "{r}");
}

/// An imported session opened in the explorer (replay, cursor at the end), drawn at 160×50.
fn render(session: Session, sessions_dir: &Path) -> String {
    let task = session.header.build_task(&TaskOptions::default()).unwrap();
    let setup = Setup {
        task,
        prompts: None,
        header: session.header.clone(),
        sessions_dir: sessions_dir.to_path_buf(),
        session_file: None,
        memory_dir: None,
        limits: Default::default(),
    };
    let mut app = App::replay(setup, session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).unwrap();
    terminal
        .draw(|f| {
            thoughtscope::tui::ui::draw_app(f, &mut app);
        })
        .unwrap();
    format!("{}", terminal.backend())
}

#[test]
fn an_imported_session_shows_its_trajectory_in_the_transcript_pane() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    let report = import_react::import_text(&text, "sample.txt", dir.path()).unwrap();
    assert_eq!(report.differences, 0);
    let session = Session::load(&dir.path().join("fever-00033.jsonl")).unwrap();
    let screen = render(session, dir.path());
    // A step whose action the reference called invalid shows the action as written.
    let odd = render(Session::load(&dir.path().join("fever-00022.jsonl")).unwrap(), dir.path());
    let transcript = odd.split_once("4 Transcript").map(|(_, t)| t).unwrap_or_default();
    assert!(transcript.contains("Action 7: ⏎⏎Finish[REFUTES]"), "{odd}");
    assert!(transcript.contains("Observation 7: Invalid action: Finish[REFUTES]"), "{odd}");
    for expected in [
        "Claim: Grace Hopper worked on COBOL.",
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

// ---- Forking an imported trajectory: recorded actions from the recording, new ones live ----

use std::sync::{Arc, Mutex};

use thoughtscope::llm::cache::ResponseCache;
use thoughtscope::llm::{BoxFuture, CallOptions, Provider};
use thoughtscope::protocol::{CallError, CallErrorKind, Completion, LlmRequest, LlmResponse, Usage};
use thoughtscope::runtime::tools::ToolRunner;
use thoughtscope::runtime::Driver;
use thoughtscope::tools::corpus::{Corpus, Document};
use thoughtscope::tools::recorded::RecordedTools;
use thoughtscope::tools::{KnowledgeBackend, KnowledgeError, SearchOutcome};
use thoughtscope::tui::action::Action;

/// A corpus that notes every search it is asked for.
struct Counting {
    corpus: Corpus,
    searches: Mutex<Vec<String>>,
}

impl KnowledgeBackend for Counting {
    fn name(&self) -> &str {
        "corpus"
    }

    fn search<'a>(&'a self, entity: &'a str) -> BoxFuture<'a, Result<SearchOutcome, KnowledgeError>> {
        self.searches.lock().unwrap().push(entity.to_string());
        Box::pin(async move { Ok(self.corpus.find(entity)) })
    }
}

/// A model that answers each ReAct step from a script (by the step the request is for).
struct Script(Vec<&'static str>);

impl Provider for Script {
    fn name(&self) -> &str {
        "script"
    }

    fn model(&self) -> &str {
        "script"
    }

    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        let step = request.context["step"].as_u64().unwrap_or(0) as usize;
        let result = match self.0.get(step.wrapping_sub(1)) {
            Some(text) => Ok(LlmResponse {
                completions: vec![Completion::text(text.to_string(), None)],
                usage: Usage { prompt_tokens: 1, completion_tokens: 1, estimated: false, ..Usage::default() },
                latency_ms: 0,
                model: "script".into(),
                simulated: false,
                cached: false,
                lost: None,
            }),
            None => Err(CallError {
                kind: CallErrorKind::Other("script".into()),
                message: format!("no reply for step {step}"),
            }),
        };
        Box::pin(async move { result })
    }
}

#[tokio::test]
async fn a_fork_of_an_imported_session_answers_recorded_actions_from_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    import_react::import_text(&text, "sample.txt", dir.path()).unwrap();
    let session = Session::load(&dir.path().join("fever-00033.jsonl")).unwrap();
    let backend = Arc::new(Counting {
        corpus: Corpus::from_documents([
            Document {
                title: "Grace Hopper".into(),
                text: "Grace Hopper was a computer pioneer. She helped develop COBOL, an early programming language. \
                       Later COBOL became widely used in business."
                    .into(),
            },
            Document { title: "COBOL".into(), text: "COBOL is a programming language designed in 1959.".into() },
        ]),
        searches: Mutex::new(Vec::new()),
    });
    let options =
        TaskOptions { knowledge: Some(backend.clone() as Arc<dyn KnowledgeBackend>), ..TaskOptions::default() };
    let task = session.header.build_task(&options).unwrap();
    let registry = task.tools().unwrap();
    let recorded = RecordedTools::from_calls(&replay::rebuild(&session, None, None).unwrap().tool_calls).map(Arc::new);
    assert_eq!(recorded.as_ref().map(|r| r.len()), Some(3), "search, lookup and finish were recorded");
    let setup = Setup {
        task,
        prompts: None,
        header: session.header.clone(),
        sessions_dir: dir.path().join("forks"),
        session_file: None,
        memory_dir: None,
        limits: Default::default(),
    };
    let mut app = App::replay(setup, session, Keymap::default(), ThemeSet::default(), "dark").unwrap();

    // Fork after step 2's reply, before its observation: the pending lookup is made again.
    app.seek(4);
    let mut effects = app.handle_action(Action::Fork);
    assert!(!app.is_replay(), "{:?}", app.message);
    // The continuation: a lookup the log did not make, a search it did, a new search, the log's finish.
    let script = Script(vec![
        "",
        "",
        "Thought 3: I want the next result.\nAction 3: Lookup[COBOL]",
        "Thought 4: Back to her page.\nAction 4: Search[Grace Hopper]",
        "Thought 5: What is COBOL?\nAction 5: Search[COBOL]",
        "Thought 6: She worked on COBOL.\nAction 6: Finish[SUPPORTS]",
    ]);
    let mut driver = Driver::new(
        Arc::new(script),
        Arc::new(tokio::sync::Semaphore::new(2)),
        Arc::new(Mutex::new(ResponseCache::new())),
    )
    .with_tools(ToolRunner::new(registry).with_recorded(recorded));
    driver.execute(&effects);
    effects = app.handle_action(Action::RunPause);
    driver.execute(&effects);
    while let Some((input, request)) = driver.next_input().await {
        let effects = app.on_input(input, request.as_ref());
        driver.execute(&effects);
    }
    let outcome = app.session.run.engine.outcome().cloned().expect("the fork finished");
    assert!(outcome.solved);
    let path = &app.session.run.engine.tree().node(outcome.finals[0]).path;
    for expected in [
        // Recorded (the pending call of the fork point): the log's observation.
        "Observation 2: (Result 1 / 2) She helped develop COBOL, an early programming language.\n",
        // New: the page the log's search opened, fetched from the backend, its next result.
        "Observation 3: (Result 2 / 2) Later COBOL became widely used in business.\n",
        // Recorded again: the log's page, not the backend's.
        "Observation 4: Grace Brewster Hopper (1906–1992) was an American computer scientist",
        // New.
        "Observation 5: COBOL is a programming language designed in 1959.\n",
        "Observation 6: Episode finished, reward = 1\n",
    ] {
        assert!(path.contains(expected), "{expected:?} not in\n{path}");
    }
    assert_eq!(*backend.searches.lock().unwrap(), ["Grace Hopper", "COBOL"], "only new actions reach the backend");

    // The fork is a session of its own that replays exactly.
    app.finish_recording();
    let fork = Session::load(&app.session_path().unwrap()).unwrap();
    assert_eq!(fork.header.parent.as_ref().map(|p| p.inputs), Some(4));
    let rebuilt = replay::rebuild(&fork, None, None).unwrap();
    assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
    assert!(rebuilt.engine.outcome().unwrap().solved);
}

#[tokio::test]
async fn a_new_lookup_after_an_invalid_action_reads_the_page_the_log_opened() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture()).unwrap();
    import_react::import_text(&text, "sample.txt", dir.path()).unwrap();
    let session = Session::load(&dir.path().join("fever-00022.jsonl")).unwrap();
    let backend = Arc::new(Counting {
        corpus: Corpus::from_documents([Document {
            title: "Mount Kilimanjaro".into(),
            text: "Mount Kilimanjaro is a volcano. It stands in Tanzania, in East Africa.".into(),
        }]),
        searches: Mutex::new(Vec::new()),
    });
    let options =
        TaskOptions { knowledge: Some(backend.clone() as Arc<dyn KnowledgeBackend>), ..TaskOptions::default() };
    let task = session.header.build_task(&options).unwrap();
    let registry = task.tools().unwrap();
    let recorded = RecordedTools::from_calls(&replay::rebuild(&session, None, None).unwrap().tool_calls).map(Arc::new);
    let setup = Setup {
        task,
        prompts: None,
        header: session.header.clone(),
        sessions_dir: dir.path().join("forks"),
        session_file: None,
        memory_dir: None,
        limits: Default::default(),
    };
    let mut app = App::replay(setup, session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    // Inputs: run, step 1 and its observation, step 2 (an invalid action, no tool call).
    app.seek(4);
    let effects = app.handle_action(Action::Fork);
    let script = Script(vec![
        "",
        "",
        "Thought 3: Which continent?\nAction 3: Lookup[Africa]",
        "Thought 4: It is in Africa.\nAction 4: Finish[REFUTES]",
    ]);
    let mut driver = Driver::new(
        Arc::new(script),
        Arc::new(tokio::sync::Semaphore::new(2)),
        Arc::new(Mutex::new(ResponseCache::new())),
    )
    .with_tools(ToolRunner::new(registry).with_recorded(recorded));
    driver.execute(&effects);
    driver.execute(&app.handle_action(Action::RunPause));
    while let Some((input, request)) = driver.next_input().await {
        let effects = app.on_input(input, request.as_ref());
        driver.execute(&effects);
    }
    let outcome = app.session.run.engine.outcome().cloned().expect("the fork finished");
    let path = &app.session.run.engine.tree().node(outcome.finals[0]).path;
    assert!(path.contains("Observation 2: Invalid action: Finish[REFUTES]\n"), "{path}");
    assert!(path.contains("Observation 3: (Result 1 / 1) It stands in Tanzania, in East Africa.\n"), "{path}");
    assert!(outcome.solved);
    assert_eq!(*backend.searches.lock().unwrap(), ["Mount Kilimanjaro"]);
}

/// `run --provider replay` re-drives an imported trajectory with no network: its tool
/// calls are answered from the recording, and a changed parameter is named.
#[test]
fn run_with_the_replay_provider_answers_tool_calls_from_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported");
    run_json(&["import", "react-text", fixture().to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]);
    let from = out.join("fever-00011.jsonl");
    let rec = dir.path().join("rerun.jsonl");
    let claim = "The Danube flows into the Black Sea.";
    let args = ["run", "--task", "fever", "--method", "react", "--provider", "replay", "--input", claim, "--json"];
    let mut exact = args.to_vec();
    exact.extend(["--replay-from", from.to_str().unwrap(), "--temperature", "0", "--record", rec.to_str().unwrap()]);
    let s = run_json(&exact);
    assert_eq!((s["llm_calls"].as_u64(), s["tool_calls"].as_u64()), (Some(2), Some(2)), "{s}");
    assert_eq!(s["failed_calls"], Value::Null, "{s}");
    let rerun = Session::load(&rec).unwrap();
    let original = Session::load(&from).unwrap();
    assert_eq!(observations(&rerun), observations(&original), "the recorded observations, not live ones");
    assert_eq!(rerun.end().map(|e| e.0.llm_calls), Some(2));

    // Without --temperature the re-drive samples at the recorded 0.0.
    let mut recorded = args.to_vec();
    recorded.extend(["--replay-from", from.to_str().unwrap()]);
    let s = run_json(&recorded);
    assert_eq!((s["llm_calls"].as_u64(), s["failed_calls"].as_u64()), (Some(2), None), "{s}");
    // The recorded run used temperature 0.0; asked at 0.7, the error says so.
    let mut changed = recorded.clone();
    changed.extend(["--temperature", "0.7"]);
    let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope")).args(&changed).output().unwrap();
    assert!(!out.status.success(), "every call failed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("temperature: recorded 0.0, now 0.7"), "{err}");
    assert!(err.contains("every call to replay failed"), "{err}");
}

/// The last JSON line `thoughtscope ARGS` prints, whatever its exit status.
fn last_json(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope")).args(args).output().expect("the binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_else(|| {
        panic!("no output from {args:?}:\n{}", String::from_utf8_lossy(&out.stderr));
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

fn sessions_in(dir: &Path) -> Vec<Session> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths.iter().map(|p| Session::load(p).unwrap()).collect()
}

/// Re-driving imported trajectories through the live `react` method with the replay
/// provider gives the log's figures with no failed call, in the notebook's mode, chosen
/// by itself from the sessions' headers: quotes kept in `Search["..."]`, `Login[...]`
/// answered with the notebook's `Invalid action: login[...]`, a reply without
/// `\nAction i: ` asked again for its action, and `Action 2: \n\nFinish[...]` invalid.
/// A reply whose `Action i:` is empty (the strip takes its space) is asked again too, and
/// a claim the log holds at two indices is re-driven twice.
/// Read tolerantly (today's default for live runs), the same recording goes astray.
#[test]
fn re_driving_imported_trajectories_gives_the_logs_figures() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/react-redrive.txt");
    let log = log.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let imported = dir.path().join("imported");
    let s = run_json(&["import", "react-text", log, "--out", imported.to_str().unwrap(), "--json"]);
    assert_eq!(
        (s["sessions"].as_u64(), s["em"].as_u64(), s["differences"].as_u64()),
        (Some(6), Some(6), Some(0)),
        "{s}"
    );
    let redrive = |rec: &Path, mode: &[&str]| {
        let mut args = vec!["run", "--task", "fever", "--data", log, "--range", "0..6", "--method", "react"];
        args.extend(["--provider", "replay", "--replay-from", imported.to_str().unwrap(), "--temperature", "0"]);
        args.extend(["--json", "--record", rec.to_str().unwrap()]);
        args.extend(mode);
        last_json(&args)
    };
    let rec = dir.path().join("redriven");
    let r = redrive(&rec, &[]);
    assert_eq!((r["n"].as_u64(), r["em"].as_u64(), r["failed_calls"].as_u64()), (Some(6), Some(6), None), "{r}");
    assert_eq!((r["bad_calls"].as_u64(), r["tool_calls"].as_u64()), (Some(4), Some(10)), "{r}");
    let original = sessions_in(&imported);
    let redriven = sessions_in(&rec);
    assert_eq!(redriven.len(), 6);
    for (a, b) in original.iter().zip(&redriven) {
        assert_eq!(b.header.actions, Some(thoughtscope::tasks::react_text::ActionRules::Reference));
        assert_eq!(observations(b), observations(a), "{}", b.path.display());
    }
    let quoted = replay::rebuild(&redriven[0], None, None).unwrap();
    let path = &quoted.engine.tree().nodes().max_by_key(|n| n.depth).unwrap().path;
    assert!(path.contains("Action 1: Search[\"Love the Way You Lie\"]\n"), "{path}");
    let login = replay::rebuild(&redriven[1], None, None).unwrap();
    let path = &login.engine.tree().nodes().max_by_key(|n| n.depth).unwrap().path;
    assert!(path.contains("Observation 1: Invalid action: login[Nikolaj Coster-Waldau]\n"), "{path}");

    // Tolerantly: the format hint, a stripped quote, a tool named login and an accepted
    // `\n\nFinish` (whose failed finish no longer counts) all leave the recording.
    let tolerant = redrive(&dir.path().join("tolerant"), &["--react-mode", "tolerant"]);
    assert!(tolerant["failed_calls"].as_u64().unwrap_or(0) > 0, "{tolerant}");
    assert!(tolerant["em"].as_u64().unwrap() < 6, "{tolerant}");
    // With no data file the problems are the replayed sessions' own, with their gold answers.
    let mut args = vec!["run", "--task", "fever", "--method", "react", "--provider", "replay", "--replay-from"];
    args.extend([imported.to_str().unwrap(), "--temperature", "0", "--json"]);
    let bare = run_json(&args);
    // The claim the log holds twice (indices 99 and 100) is two problems, as in the log.
    assert_eq!((bare["n"].as_u64(), bare["em"].as_u64(), bare["failed_calls"].as_u64()), (Some(6), Some(6), None));
    // Said explicitly, the notebook's mode is the same as chosen by itself.
    let explicit = redrive(&dir.path().join("explicit"), &["--react-mode", "reference"]);
    assert_eq!((explicit["em"].as_u64(), explicit["failed_calls"].as_u64()), (Some(6), None), "{explicit}");
}

/// The shared log's 100 FEVER trajectories, imported and re-driven through the live
/// `react` method (the notebook's mode chosen from the sessions' headers), give the log's
/// 52/100 with no failed call, each re-driven session showing the imported one's
/// observations.
#[test]
fn re_driving_the_shared_fever_log_gives_its_52_of_100() {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/react/fever_react_gpt3_first100.txt");
    if !log.exists() {
        eprintln!("skipped: {} is absent (the shared data folder is not next to this clone)", log.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let imported = dir.path().join("imported");
    let s = run_json(&["import", "react-text", log.to_str().unwrap(), "--out", imported.to_str().unwrap(), "--json"]);
    assert_eq!((s["sessions"].as_u64(), s["em"].as_u64(), s["differences"].as_u64()), (Some(100), Some(52), Some(0)));
    let rec = dir.path().join("redriven");
    let mut args = vec!["run", "--task", "fever", "--method", "react", "--provider", "replay", "--replay-from"];
    args.extend([imported.to_str().unwrap(), "--temperature", "0", "--json", "--record", rec.to_str().unwrap()]);
    let r = last_json(&args);
    assert_eq!((r["n"].as_u64(), r["em"].as_u64(), r["solved"].as_u64()), (Some(100), Some(52), Some(52)), "{r}");
    assert_eq!(r["failed_calls"].as_u64().unwrap_or(0), 0, "{r}");
    let original = sessions_in(&imported);
    let redriven = sessions_in(&rec);
    // The imported sessions are named by the log's question index, the re-driven ones by
    // position: pair them by claim.
    let by_claim = |sessions: &[Session]| {
        let mut v: Vec<(String, Vec<String>)> =
            sessions.iter().map(|s| (s.header.input.clone(), observations(s))).collect();
        v.sort();
        v
    };
    assert_eq!(redriven.len(), 100);
    assert_eq!(by_claim(&redriven), by_claim(&original));
}

/// `--react-mode reference` is the notebook's way with its own tasks; elsewhere it is refused.
#[test]
fn the_reference_mode_is_for_hotpotqa_and_fever() {
    let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["run", "--task", "qa-demo", "--method", "react", "--range", "0..1", "--react-mode", "reference"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--react-mode reference") && err.lines().count() == 1, "{err}");
}
