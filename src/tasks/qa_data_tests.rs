use std::path::{Path, PathBuf};

use super::*;
use crate::engine::{Command, Engine, Input, Params};
use crate::protocol::{Completion, LlmResponse, ToolResult, Usage};
use crate::session::{replay, Session, SessionWriter, FORMAT, VERSION};
use crate::tasks::{build, TaskOptions};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn shared(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} is absent (the shared data folder is not next to this clone)", p.display());
        None
    }
}

fn reply(text: &str) -> LlmResponse {
    LlmResponse {
        completions: vec![Completion::text(text, None)],
        usage: Usage { prompt_tokens: 10, completion_tokens: 5, estimated: false, ..Usage::default() },
        latency_ms: 0,
        model: "test".into(),
        simulated: false,
        cached: false,
        lost: None,
    }
}

#[test]
fn hotpotqa_reads_the_json_list_and_jsonl() {
    let (items, warnings) = read_data(QaKind::HotpotQa, &fixture("hotpot-sample.json")).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(items.len(), 3);
    assert_eq!(items[2].answer, "Arthur's Magazine");
    assert_eq!(items[0].kind, "comparison");
    let jsonl = "{\"question\": \"Q1?\", \"answer\": \"a\"}\n\n{\"question\": \"Q2?\", \"answer\": \"b\"}\n";
    let (items, _) = parse_data(QaKind::HotpotQa, jsonl, "q.jsonl").unwrap();
    assert_eq!(items.iter().map(|q| q.question.as_str()).collect::<Vec<_>>(), ["Q1?", "Q2?"]);
    let err = parse_data(QaKind::HotpotQa, "{\"question\": \"Q1?\"}\n", "q.jsonl").unwrap_err().to_string();
    assert!(err.contains("q.jsonl:1") && err.contains("\"answer\""), "{err}");
}

#[test]
fn fever_reads_jsonl_claims_and_checks_labels() {
    let text = "{\"id\": 1, \"claim\": \"A is B.\", \"label\": \"SUPPORTS\"}\n\
                {\"id\": 2, \"claim\": \"C is D.\", \"label\": \"NOT ENOUGH INFO\"}\n";
    let (items, _) = parse_data(QaKind::Fever, text, "fever.jsonl").unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!((items[1].question.as_str(), items[1].answer.as_str()), ("C is D.", "NOT ENOUGH INFO"));
    let bad = "{\"claim\": \"A.\", \"label\": \"SUPPORTS\"}\n{\"claim\": \"B.\", \"label\": \"MAYBE\"}\n";
    let err = parse_data(QaKind::Fever, bad, "fever.jsonl").unwrap_err().to_string();
    assert!(err.contains("fever.jsonl:2") && err.contains("MAYBE"), "{err}");
    let empty = tempfile::NamedTempFile::new().unwrap();
    let err = read_data(QaKind::Fever, empty.path()).unwrap_err().to_string();
    assert!(err.contains("no claims"), "{err}");
}

#[test]
fn fever_reads_claims_and_gold_from_react_trajectories() {
    let (items, warnings) = read_data(QaKind::Fever, &fixture("react-text-sample.txt")).unwrap();
    assert_eq!(items.len(), 3, "the three claims; the question is another task's");
    assert_eq!(items[1].question, "Stranger Things is set in Bloomington, Indiana.");
    assert_eq!(items[2].answer, "SUPPORTS", "the gold, not the recorded answer");
    assert!(warnings.iter().any(|w| w.contains("question 404") && w.contains("skipped")), "{warnings:?}");
    let (items, _) = read_data(QaKind::HotpotQa, &fixture("react-text-sample.txt")).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].answer, "Arthur's Magazine");
}

#[test]
fn the_shared_files_load_directly() {
    if let Some(path) = shared("react/fever_react_gpt3_first100.txt") {
        let (items, warnings) = read_data(QaKind::Fever, &path).unwrap();
        assert_eq!(items.len(), 100, "{warnings:?}");
        assert_eq!(items[0].question, "Paramore is not from Tennessee.");
        assert_eq!(items[0].answer, "REFUTES");
    }
    if let Some(path) = shared("react/hotpot_dev_v1_simplified.json") {
        let (items, _) = read_data(QaKind::HotpotQa, &path).unwrap();
        assert_eq!(items.len(), 7405);
    }
}

#[test]
fn prompts_follow_the_papers_format_and_answers_score_by_em_and_f1() {
    let items =
        vec![QaItem { question: "Who wrote Dracula?".into(), answer: "Bram Stoker".into(), kind: String::new() }];
    let task = QaData::new(QaKind::HotpotQa, None, items, None).unwrap();
    let p = task.react_prompt("Who wrote Dracula?", "Thought 1: t\nAction 1: Search[Dracula]\n", 2);
    let text = &p.messages[0].content;
    assert!(text.contains("Search[entity]") && text.contains("Finish[answer]"), "{text}");
    assert!(text.ends_with("Question: Who wrote Dracula?\nThought 1: t\nAction 1: Search[Dracula]\nThought 2:"));
    assert_eq!(p.stop, vec!["\nObservation".to_string()]);
    let y = "Thought 1: t\nAction 1: Finish[bram stoker.]\nObservation 1: Episode finished";
    let answer = task.extract_answer("", y).unwrap();
    assert_eq!(answer, "bram stoker.");
    assert!(task.check("Who wrote Dracula?", &answer).is_ok());
    assert!((task.score("Who wrote Dracula?", "Stoker") - 2.0 / 3.0).abs() < 1e-9);
    assert!(task.check("Who else?", "x").unwrap_err().contains("no gold"));
    assert_eq!(task.gold("Who wrote Dracula?").as_deref(), Some("Bram Stoker"));
    assert_eq!(extract_answer("Thought: it is so.\nAnswer: REFUTES"), Some("REFUTES".into()));
    assert_eq!(extract_answer("SUPPORTS\n"), Some("SUPPORTS".into()));

    let fever = QaData::new(QaKind::Fever, None, vec![], None).unwrap();
    let p = fever.react_prompt("The sky is green.", "", 1);
    assert!(p.messages[0].content.ends_with("Claim: The sky is green.\nThought 1:"));
    assert!(p.messages[0].content.contains("NOT ENOUGH INFO"));
    assert_eq!(p.context["task"], "fever");
    // A template without the claim's placeholder is refused, naming the file.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("react.txt"), "Question: {question}\n{trajectory}Thought {step}:").unwrap();
    let err = QaData::new(QaKind::Fever, Some(dir.path()), vec![], None).err().unwrap().to_string();
    assert!(err.contains("react.txt") && err.contains("{claim}"), "{err}");
}

#[test]
fn reference_rules_make_the_environments_invalid_actions() {
    let task = QaData::new(QaKind::Fever, None, vec![], None).unwrap().with_rules(ActionRules::Reference);
    let step = task.parse_react("Thought 3: I am done.\nAction 3: \n\nFinish[NOT ENOUGH INFO]", 3);
    assert_eq!(step.thought.as_deref(), Some("I am done."));
    assert_eq!(step.action, None);
    assert_eq!(step.problem.as_deref(), Some("Invalid action: Finish[NOT ENOUGH INFO]"));
    let step = task.parse_react("Thought 1: t\nAction 1: Search[Paramore]", 1);
    assert_eq!(step.action, Some(("search".into(), "Paramore".into())));
    // Tolerant rules read the same reply as a finish.
    let tolerant = QaData::new(QaKind::Fever, None, vec![], None).unwrap();
    let step = tolerant.parse_react("Thought 3: I am done.\nAction 3: \n\nFinish[NOT ENOUGH INFO]", 3);
    assert_eq!(step.action, Some(("finish".into(), "NOT ENOUGH INFO".into())));
}

#[test]
fn build_reads_data_and_refuses_data_for_builtin_tasks() {
    let options = TaskOptions { data: Some(fixture("hotpot-sample.json")), ..TaskOptions::default() };
    let mut warnings = Vec::new();
    let task = build("hotpotqa", &options, &mut warnings).unwrap();
    assert_eq!(task.problem_count(), 3);
    assert!(task.tools().unwrap().names().iter().any(|n| n == "search"));
    let err = build("game24", &options, &mut warnings).err().unwrap().to_string();
    assert!(err.contains("--data"), "{err}");
    let none = build("fever", &TaskOptions::default(), &mut warnings).unwrap();
    assert_eq!(none.problem_count(), 0);
}

/// A hotpotqa session made with data replays from its header alone, with the same score.
#[test]
fn a_session_replays_without_its_data_file() {
    let dir = tempfile::tempdir().unwrap();
    let options = TaskOptions { data: Some(fixture("hotpot-sample.json")), ..TaskOptions::default() };
    let task = build("hotpotqa", &options, &mut Vec::new()).unwrap();
    let problem = task.problem(2).unwrap();
    let params = Params::new(crate::engine::methods::react::KIND).with("max_steps", 7);
    let header = crate::session::Header {
        format: FORMAT.into(),
        version: VERSION,
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: "hotpotqa".into(),
        input: problem.input.clone(),
        index: problem.index,
        params: params.clone(),
        provider: "test".into(),
        model: "test".into(),
        simulated: false,
        sim: None,
        price: None,
        source: None,
        parent: None,
        note: None,
        gold: task.gold(&problem.input),
        actions: None,
        facets: Default::default(),
        memory: None,
        unjudged: false,
        prompt_style: Default::default(),
        context_window: None,
        task_def: None,
        provider_notes: Vec::new(),
    };
    assert_eq!(header.gold.as_deref(), Some("Arthur's Magazine"));
    let path = dir.path().join("s.jsonl");
    let writer = SessionWriter::create(&path, &header).unwrap();
    let engine = Engine::new(task.clone() as Arc<dyn Task>, &problem.input, params);
    let mut run = crate::runtime::Run::new(engine, Some(writer), Default::default());
    let replies = [
        "Thought 1: I need both start dates.\nAction 1: Search[Arthur's Magazine]",
        "Thought 2: Now the other.\nAction 2: Search[First for Women]",
        "Thought 3: 1844 is before 1989.\nAction 3: Finish[Arthur's Magazine]",
    ];
    let mut step = 0;
    crate::runtime::sync::drive_with_tools(
        &mut run,
        vec![Input::command(Command::Run)],
        |_| {
            step += 1;
            Ok(reply(replies[step - 1]))
        },
        |tool, _, _| ToolResult { text: format!("(page of {})", tool.arg), ok: true, latency_ms: 0 },
    )
    .unwrap();
    run.end(0).unwrap();
    assert!(run.engine.outcome().unwrap().solved);

    let session = Session::load(&path).unwrap();
    assert_eq!(session.header.gold.as_deref(), Some("Arthur's Magazine"));
    let rebuilt = replay::rebuild(&session, None, None).unwrap();
    assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
    assert!(rebuilt.engine.outcome().unwrap().solved, "checked against the header's gold");
    assert_eq!(rebuilt.totals.tool_calls, 3);
    let again = session.header.build_task(&TaskOptions::default()).unwrap();
    assert_eq!(again.gold(&problem.input).as_deref(), Some("Arthur's Magazine"));
}

#[test]
fn answers_after_letters_that_change_length_in_lower_case_do_not_panic() {
    use crate::engine::Task;
    // 'İ' is 2 bytes but 3 in lower case: a byte offset found in the lower-cased text
    // would cut the 'é' after the label in half.
    let demo = crate::tasks::qa_demo::QaDemo::new(None).unwrap();
    assert_eq!(demo.extract_answer("", "İ answer:é").as_deref(), Some("é"));
    assert_eq!(demo.extract_answer("", "İ Action 3: Finish[é]").as_deref(), Some("é"));
    assert_eq!(super::extract_answer("İ answer:é").as_deref(), Some("é"));
    assert_eq!(super::extract_answer("Action 1: İ Finish[é]").as_deref(), Some("é"));
}
