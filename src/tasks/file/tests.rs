use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::engine::testkit::{run_cmd, run_sync, sim};
use crate::engine::{methods, Engine, MethodKind};
use crate::tasks::{self, TaskOptions};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/tasks").join(name)
}

fn open(name: &str) -> Arc<dyn TaskSource> {
    let path = example(name);
    tasks::build(path.to_str().unwrap(), &TaskOptions::default(), &mut Vec::new()).expect("the example builds")
}

fn served(task: &dyn TaskSource) -> Vec<&'static str> {
    methods::serving(task, &Params::default()).iter().map(|m| m.kind.label()).collect()
}

/// A task file's text in a temporary folder, read back: the error as its one line.
fn error_of(toml: &str, files: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    std::fs::write(dir.path().join("task.toml"), toml).unwrap();
    let err = match FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e.to_string(),
    };
    assert!(!err.contains('\n'), "one line: {err}");
    err.replace(&dir.path().join("task.toml").display().to_string(), "task.toml")
}

const GOOD: &str = r#"name = "t"
[problems]
items = [{ input = "2 + 2", answer = "4" }]
[prompts]
io = "Q: {{ input }}"
cot = "Think. Q: {{ input }}"
[answer]
read = "answer-line"
[check]
kind = "numeric"
"#;

#[test]
fn the_examples_load_with_the_capabilities_their_prompts_give() {
    let words = open("word-problems");
    assert_eq!((words.name(), words.problem_count()), ("word-problems", 12));
    let methods = served(words.as_ref());
    for m in ["io", "cot", "cot-sc", "self-refine", "reflexion"] {
        assert!(methods.contains(&m), "{m}: {methods:?}");
    }
    assert!(!methods.contains(&"tot-bfs") && !methods.contains(&"react"), "{methods:?}");
    assert_eq!(words.facets(&words.problem(0).unwrap().input)["topic"], "money");

    let steps = open("stepwise");
    let methods = served(steps.as_ref());
    for m in ["tot-bfs", "tot-dfs", "mcts"] {
        assert!(methods.contains(&m), "{m}: {methods:?}");
    }
    let town = open("town-facts");
    let methods = served(town.as_ref());
    for m in ["react", "react-cot-sc", "retreval"] {
        assert!(methods.contains(&m), "{m}: {methods:?}");
    }
    assert!(town.tools().unwrap().get("search").is_some());
}

#[test]
fn a_method_the_file_cannot_serve_is_refused_by_name() {
    let words = open("word-problems");
    let params = Params::new(MethodKind::from_name("tot-bfs").unwrap());
    let refused = methods::check_serves(words.as_ref(), &params).unwrap_err().for_flags();
    assert!(refused.contains("word-problems has no tree-search steps"), "{refused}");
    assert!(refused.contains("cot-sc"), "names what works: {refused}");
}

#[test]
fn answers_are_read_and_checked_as_the_file_says() {
    let words = open("word-problems");
    let x = words.problem(11).unwrap().input;
    let answer = words.extract_answer(&x, "20/60 of an hour\n\\boxed{\\dfrac{1}{3}}").unwrap();
    assert_eq!(words.check(&x, &answer), Ok(()), "the math grader: 1/3");
    assert!(words.check(&x, "0.3").is_err());
    let town = open("town-facts");
    let x = town.problem(1).unwrap().input;
    assert_eq!(
        town.extract_answer(&x, "Thought 3: ok\nAction 3: Finish[the Selby Bay]").as_deref(),
        Some("the Selby Bay")
    );
    assert_eq!(town.check(&x, "the Selby Bay"), Ok(()));
    assert!(town.score(&x, "Selby") > 0.0 && town.score(&x, "Selby") < 1.0, "token F1");
}

#[test]
fn a_step_checker_rejects_steps_of_the_wrong_form() {
    let task = open("stepwise");
    let tree = task.tree().unwrap();
    let x = task.problem(0).unwrap().input;
    let props = tree.parse_proposals(&x, "", "1. 4 * 12 = 48\nfour twelves\n");
    assert_eq!(props[0].thought, "4 * 12 = 48");
    assert_eq!(props[0].problem, None);
    assert!(props[1].problem.as_deref().unwrap().contains("step_pattern"), "{props:?}");
    let y = "4 * 12 = 48\n48 - 30 = 18\n";
    assert!(tree.parse_edit(&x, y, "48 - 30 = 18").problem.unwrap().contains("final_pattern"));
    assert_eq!(tree.parse_edit(&x, y, "Answer: 18").problem, None);
    let value = tree.value().unwrap();
    assert_eq!(value.parse_value(&x, y, &["Looks right.\nsure".into()]).0, 20.0);
    assert_eq!(value.fixed_value(&x, &format!("{y}Answer: 18\n")), None, "a last step with an answer is asked");
}

#[test]
fn sim_plays_the_examples_and_a_perfect_one_solves_them() {
    for (name, method) in [
        ("word-problems", "cot"),
        ("word-problems", "cot-sc"),
        ("stepwise", "tot-bfs"),
        ("stepwise", "tot-dfs"),
        ("stepwise", "mcts"),
    ] {
        let task = open(name);
        let params = Params::new(MethodKind::from_name(method).unwrap());
        assert_eq!(crate::tasks::check_sim_plays(task.as_ref(), &params), Ok(()), "{name} {method}");
        for i in [0, 5, 11] {
            let x = task.problem(i).unwrap().input;
            let mut engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, &x, params.clone());
            run_sync(&mut engine, run_cmd(), sim(0.0, 3));
            assert!(engine.outcome().is_some_and(|o| o.solved), "{name} {method} problem {i}: {:?}", engine.outcome());
        }
    }
    // With the default mistakes, some runs fail: the play is not a shortcut to the answer.
    let task = open("word-problems");
    let params = Params::new(MethodKind::from_name("io").unwrap());
    let solved = (0..12)
        .filter(|&i| {
            let x = task.problem(i).unwrap().input;
            let mut engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, &x, params.clone());
            run_sync(&mut engine, run_cmd(), sim(1.0, 1));
            engine.outcome().is_some_and(|o| o.solved)
        })
        .count();
    assert!((1..12).contains(&solved), "{solved} of 12 io answers right");
}

#[test]
fn sim_says_what_it_cannot_play() {
    let words = open("word-problems");
    let refine = Params::new(MethodKind::from_name("self-refine").unwrap());
    let why = crate::tasks::check_sim_plays(words.as_ref(), &refine).unwrap_err();
    assert!(why.starts_with("sim cannot play word-problems with self-refine: the method makes "), "{why}");
    assert!(why.ends_with("run it with a model (--provider ...)"), "{why}");
    // best-of-n on a task without an evaluator makes verifier (feedback) calls: refused too.
    let best = Params::new(MethodKind::from_name("best-of-n").unwrap());
    assert!(crate::tasks::check_sim_plays(words.as_ref(), &best).unwrap_err().contains("feedback calls"));
    assert_eq!(crate::tasks::check_sim_plays(open("stepwise").as_ref(), &best), Ok(()), "with its value prompt");
    let town = open("town-facts");
    let retreval = Params::new(MethodKind::from_name("retreval").unwrap());
    assert!(crate::tasks::check_sim_plays(town.as_ref(), &retreval).is_err());
    // No gold answer: said, not pretended.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.toml"), GOOD.replace(", answer = \"4\"", "")).unwrap();
    let task = FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()).unwrap();
    let cot = Params::new(MethodKind::from_name("cot").unwrap());
    let why = crate::tasks::check_sim_plays(&task, &cot).unwrap_err();
    assert!(why.contains("problem 0 has no gold answer"), "{why}");
    assert!(task.check("2 + 2", "4").unwrap_err().contains("no gold answer"));
}

#[test]
fn a_session_header_rebuilds_the_task_without_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("stepwise");
    std::fs::create_dir(&copy).unwrap();
    for f in ["task.toml", "problems.jsonl"] {
        std::fs::copy(example("stepwise").join(f), copy.join(f)).unwrap();
    }
    let task = tasks::build(copy.to_str().unwrap(), &TaskOptions::default(), &mut Vec::new()).unwrap();
    let x = task.problem(4).unwrap().input;
    let recorded = task.definition(&x).unwrap();
    std::fs::remove_dir_all(&copy).unwrap();
    let text = serde_json::to_string(&recorded).unwrap();
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    let spec = tasks::TaskSpec {
        name: "stepwise",
        input: &x,
        gold: Some("125"),
        actions: None,
        facets: None,
        style: PromptStyle::Reference,
        definition: Some(&back),
    };
    let rebuilt = tasks::for_spec(&spec, &TaskOptions::default()).unwrap();
    assert_eq!(rebuilt.name(), "stepwise");
    assert_eq!(rebuilt.check(&x, "125"), Ok(()));
    assert_eq!(
        rebuilt.tree().unwrap().propose_prompt(&x, "").messages,
        task.tree().unwrap().propose_prompt(&x, "").messages
    );
    assert_eq!(served(rebuilt.as_ref()), served(task.as_ref()));
    // A recorded definition this version cannot read is an error naming it.
    let broken = serde_json::json!({ "def": { "name": 3 }, "problem": {} });
    let spec = tasks::TaskSpec { definition: Some(&broken), ..spec };
    let err = tasks::for_spec(&spec, &TaskOptions::default()).err().unwrap().to_string();
    assert!(err.starts_with("task file the session's task definition:"), "{err}");
}

#[test]
fn bad_files_name_the_file_the_line_and_the_key() {
    let cases: Vec<(String, &str)> = vec![
        (GOOD.replace("kind = \"numeric\"", "kind = \"numerik\""), "task.toml:10: kind: unknown variant `numerik`"),
        (GOOD.replace("[answer]", "[answer]\nreed = 1"), "task.toml:8: reed: unknown field `reed`"),
        (
            GOOD.replace("Q: {{ input }}\"", "Q: {{ qustion }}\""),
            "task.toml:6: prompts.cot: the template uses {{ qustion }}",
        ),
        (
            GOOD.replace("read = \"answer-line\"", "read = \"regex\""),
            "task.toml:8: answer.read: read = \"regex\" needs pattern",
        ),
        (
            GOOD.replace("kind = \"numeric\"", "kind = \"exact\"\ntolerance = 0.1"),
            "task.toml:11: check.tolerance: tolerance is for kind = \"numeric\"",
        ),
        (GOOD.replace("io = \"Q: {{ input }}\"\n", ""), "task.toml:4: prompts.io: every task has an io prompt"),
        (
            GOOD.replace("items = [{ input = \"2 + 2\", answer = \"4\" }]", "file = \"missing.jsonl\""),
            "task.toml:3: problems.file: cannot read missing.jsonl",
        ),
        (
            GOOD.replace("[prompts]", "[prompts]\npropose = \"{{ y }}\""),
            "task.toml:5: prompts.propose: a tree-search prompt needs a [tree] table",
        ),
        (
            GOOD.replace("input = \"2 + 2\"", "inp = \"2 + 2\""),
            "task.toml:2: problems.input: items[0]: no text in the field \"input\"",
        ),
        (GOOD.replace("name = \"t\"", "name = \"my task\""), "task.toml:1: name: a task name is one word"),
        (GOOD.replace("[check]", "[tree]\nsteps = 0\n[check]"), "task.toml:10: tree.steps: 0 is out of range"),
        (GOOD.replace("cot = \"Think. Q: {{ input }}\"", "cot = \"{{ problem.level }}\""), "problems 0: "),
        (GOOD.replace("[problems]", "[problems"), "task.toml:2: problems: unclosed table"),
    ];
    for (toml, expected) in cases {
        let err = error_of(&toml, &[]);
        let err = err.trim_start_matches("task file ");
        if expected == "problems 0: " {
            assert!(err.contains("prompts.cot: problem 0: template") && err.contains("undefined"), "{err}");
            continue;
        }
        assert!(err.starts_with(expected), "expected {expected:?}, got {err:?}\n{toml}");
    }
    let err = error_of(
        &GOOD.replace("items = [{ input = \"2 + 2\", answer = \"4\" }]", "file = \"p.jsonl\""),
        &[("p.jsonl", "{\"input\": \"a\"}\n{oops\n")],
    );
    assert!(err.contains("problems.file: p.jsonl: line 2: not valid JSON"), "{err}");
}

#[test]
fn a_typed_input_is_refused_where_it_could_not_be_checked_or_rendered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.toml"), GOOD).unwrap();
    let task = FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()).unwrap();
    assert_eq!(task.parse_input("2 + 2").unwrap().index, Some(0));
    // Answers are checked against gold answers, which a problem of one's own lacks.
    let err = task.parse_input(" 3 + 3 ").unwrap_err().to_string();
    assert!(err.contains("a problem of your own has none: pick one of them (--range A..B"), "{err}");
    // A judge needs none: the problem is taken, unless the prompts read fields it lacks.
    std::fs::write(dir.path().join("task.toml"), JUDGED).unwrap();
    let task = FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()).unwrap();
    assert_eq!(task.parse_input(" Name a moon. ").unwrap(), Problem { index: None, input: "Name a moon.".into() });
    let fields = JUDGED
        .replace("answer = \"Mars\" }", "answer = \"Mars\", level = 1 }")
        .replace("answer = \"red\" }", "answer = \"red\", level = 2 }")
        .replace("Think, then end with a line Answer: ...\\nQ: {{ input }}", "Level {{ problem.level }}: {{ input }}");
    std::fs::write(dir.path().join("task.toml"), fields).unwrap();
    let task = FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()).unwrap();
    assert!(task.parse_input("Name a moon.").unwrap_err().to_string().contains("problem.level"));
    assert_eq!(task.cot_prompt("Name a planet.").messages[0].content, "Level 1: Name a planet.");
}

#[test]
fn the_starter_checks_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("my-task");
    starter::write(&folder).unwrap();
    assert!(starter::write(&folder).unwrap_err().contains("exists already"));
    let task = FileTask::open(&folder, &TaskOptions::default(), &mut Vec::new()).unwrap();
    assert_eq!(task.name(), "my-task");
    let cot = Params::new(MethodKind::from_name("cot").unwrap());
    assert_eq!(crate::tasks::check_sim_plays(&task, &cot), Ok(()));
    let task: Arc<dyn Task> = Arc::new(task);
    let mut engine = Engine::new(task, "A ticket costs $8. How many dollars do 7 tickets cost?", cot);
    run_sync(&mut engine, run_cmd(), sim(0.0, 1));
    assert!(engine.outcome().unwrap().solved);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// Whatever the bytes, the loader says what is wrong in one line and never panics.
    #[test]
    fn the_loader_never_panics(cut in 0usize..400, junk in ".{0,40}", at in 0usize..400) {
        let base = std::fs::read_to_string(example("stepwise").join("task.toml")).unwrap();
        let mut text: String = base.chars().take(cut.max(1) * 4).collect();
        let at = text.char_indices().nth(at % text.chars().count().max(1)).map_or(0, |(i, _)| i);
        text.insert_str(at, &junk);
        if let Err(e) = def::parse(&example("stepwise").join("task.toml"), &text) {
            proptest::prop_assert!(!e.to_string().contains('\n'), "{}", e);
        }
    }
}

const JUDGED: &str = r#"name = "judged"
[problems]
items = [{ input = "Name a primary colour.", answer = "red" }, { input = "Name a planet.", answer = "Mars" }]
[prompts]
io = "Q: {{ input }}"
cot = "Think, then end with a line Answer: ...\nQ: {{ input }}"
[answer]
read = "answer-line"
[check]
kind = "judge"
rubric = "Any answer of the kind asked is right."
"#;

fn judged_task() -> Arc<FileTask> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.toml"), JUDGED).unwrap();
    Arc::new(FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()).unwrap())
}

/// Run cot on problem 0 with the chain of thought answering `answer` and the judge
/// replying `verdict`: the outcome, and the requests made.
fn judged_run(
    task: &Arc<FileTask>,
    answer: &str,
    verdict: &str,
) -> (crate::engine::Outcome, Vec<crate::protocol::LlmRequest>) {
    let params = Params::new(MethodKind::from_name("cot").unwrap());
    let mut engine = Engine::new(Arc::clone(task) as Arc<dyn Task>, "Name a primary colour.", params);
    let mut seen = Vec::new();
    run_sync(&mut engine, run_cmd(), |r| {
        seen.push(r.clone());
        vec![if r.purpose == Purpose::Judge { verdict.to_string() } else { format!("Let me see.\nAnswer: {answer}") }]
    });
    (engine.outcome().cloned().expect("the run ends"), seen)
}

#[test]
fn a_judge_check_asks_the_model_when_the_method_is_done_and_its_verdict_decides() {
    let task = judged_task();
    assert!(task.check("Name a primary colour.", "blue").unwrap_err().contains("not judged yet"));
    let (outcome, seen) = judged_run(&task, "blue", "Blue is a primary colour.\nVERDICT: correct");
    assert!(outcome.solved, "the judge said blue is right: {outcome:?}");
    let purposes: Vec<Purpose> = seen.iter().map(|r| r.purpose).collect();
    assert_eq!(purposes, [Purpose::Cot, Purpose::Judge]);
    let judge = seen[1].messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
    assert!(judge.contains("Rubric: Any answer of the kind asked is right."), "{judge}");
    assert!(judge.contains("The answer to grade: blue") && judge.contains("Reference answer: red"), "{judge}");
    assert_eq!(task.check("Name a primary colour.", "blue"), Ok(()), "the verdict is kept");
    let (outcome, _) = judged_run(&task, "green", "Green is not.\nVERDICT: incorrect");
    assert!(!outcome.solved);
    assert!(task.check("Name a primary colour.", "green").unwrap_err().contains("the judge says"));
    // A reply without a verdict is not counted as right, and the node says why.
    let params = Params::new(MethodKind::from_name("cot").unwrap());
    let mut engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, "Name a planet.", params);
    run_sync(&mut engine, run_cmd(), |r| {
        vec![if r.purpose == Purpose::Judge { "Hmm, hard to say.".into() } else { "Answer: Venus".into() }]
    });
    assert!(!engine.outcome().unwrap().solved);
    let notes: Vec<String> = engine.tree().nodes().filter_map(|n| n.note("judge").map(str::to_string)).collect();
    assert!(notes.iter().any(|n| n.contains("no `VERDICT: correct|incorrect` line")), "{notes:?}");
    // sim plays the judge from the gold answer.
    let params = Params::new(MethodKind::from_name("cot-sc").unwrap());
    assert_eq!(crate::tasks::check_sim_plays(task.as_ref(), &params), Ok(()));
    let mut engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, "Name a planet.", params);
    run_sync(&mut engine, run_cmd(), sim(0.0, 3));
    let outcome = engine.outcome().unwrap();
    assert!(outcome.solved && outcome.sample_accuracy == Some(1.0), "{outcome:?}");
    // A rubric is required, and only a judge check has one.
    let err = error_of(&JUDGED.replace("rubric = \"Any answer of the kind asked is right.\"", ""), &[]);
    assert!(err.contains("check.") && err.contains("needs rubric"), "{err}");
    let err = error_of(&GOOD.replace("kind = \"numeric\"", "kind = \"numeric\"\nrubric = \"x\""), &[]);
    assert!(err.contains("check.rubric: rubric is for kind = \"judge\""), "{err}");
}

/// Stepwise with a step command, or an answer check command (never run by these tests:
/// the verdicts are the test's own).
fn with_commands(dir: &Path, step: bool, answer: bool) -> FileTask {
    let folder = dir.join("stepwise");
    std::fs::create_dir_all(&folder).unwrap();
    for e in std::fs::read_dir(example("stepwise")).unwrap() {
        let path = e.unwrap().path();
        std::fs::copy(&path, folder.join(path.file_name().unwrap())).unwrap();
    }
    let mark = dir.join("ran.log").display().to_string();
    let script = format!("echo ran >> {mark}; echo correct");
    let mut toml = std::fs::read_to_string(folder.join("task.toml")).unwrap();
    if step {
        toml = toml.replacen("[tree]", &format!("[tree]\nstep_command = [\"sh\", \"-c\", {script:?}]"), 1);
    }
    if answer {
        toml = toml.replacen(
            "kind = \"numeric\"",
            &format!("kind = \"command\"\ncommand = [\"sh\", \"-c\", {script:?}]"),
            1,
        );
    }
    std::fs::write(folder.join("task.toml"), toml).unwrap();
    FileTask::open(&folder, &TaskOptions::default(), &mut Vec::new()).unwrap()
}

#[test]
fn a_step_command_is_asked_once_a_step_through_the_engine_and_never_run_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = with_commands(dir.path(), true, false);
    let gold = file.problems()[0].steps.clone();
    let task: Arc<dyn TaskSource> = Arc::new(file);
    let tree = task.tree().unwrap();
    let x = task.problem(0).unwrap().input;
    let first = "4 * 12 = 48";
    // Reading a reply runs nothing: the step command is a request the engine makes.
    let props = tree.parse_proposals(&x, "", &format!("{first}\nfour twelves"));
    assert_eq!(props[0].problem, None, "{props:?}");
    assert!(tree.step_command(&x, "", &props[1]).is_none(), "a step the pattern refused is not asked about");
    let request = tree.step_command(&x, "", &props[0]).unwrap();
    let sent: serde_json::Value = serde_json::from_str(&request.stdin).unwrap();
    assert_eq!((sent["step"].as_str(), sent["last"].as_bool()), (Some(first), Some(false)), "{sent}");
    // A run: every verdict comes from the driver (here, this test), once per step.
    let mut asked: Vec<String> = Vec::new();
    let verdict = |r: &crate::engine::CheckRequest| {
        asked.push(r.stdin.clone());
        let v: serde_json::Value = serde_json::from_str(&r.stdin).unwrap();
        let ok = gold.iter().any(|g| Some(g.as_str()) == v["step"].as_str());
        Ok(crate::engine::check::Verdict { correct: ok, score: f64::from(u8::from(ok)), said: "judged".into() })
    };
    let mut engine =
        Engine::new(Arc::clone(&task) as Arc<dyn Task>, &x, Params::new(MethodKind::from_name("tot-bfs").unwrap()));
    let events = crate::engine::testkit::run_sync_checked(&mut engine, run_cmd(), sim(1.0, 3), verdict);
    let shown: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
    let shown = shown.join("\n");
    assert!(!asked.is_empty(), "the step command was asked");
    let distinct: std::collections::BTreeSet<&String> = asked.iter().collect();
    assert_eq!(distinct.len(), asked.len(), "each step asked once: {asked:?}");
    let invalid = |n: &crate::engine::Node| matches!(&n.status, crate::engine::NodeStatus::Invalid(why) if why.contains("refuses the step"));
    let refused: Vec<String> = engine.tree().nodes().filter(|n| invalid(n)).map(|n| n.thought.to_string()).collect();
    assert!(!refused.is_empty(), "a wrong step is refused on its node\n{shown}");
    assert!(refused.iter().all(|t| !gold.contains(t)), "only wrong steps are refused: {refused:?}");
    let right = engine.tree().nodes().filter(|n| gold.contains(&n.thought.to_string())).count();
    assert!(right > 0 && engine.tree().nodes().filter(|n| gold.contains(&n.thought.to_string())).all(|n| !invalid(n)));
    assert!(!dir.path().join("ran.log").exists(), "the engine ran nothing");
}

#[test]
fn an_answer_check_command_decides_by_the_recorded_verdict_and_a_failure_is_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(with_commands(dir.path(), false, true));
    let x = task.problem(0).unwrap().input;
    // Outside a run, the check runs nothing and says so.
    assert!(task.check(&x, "18").unwrap_err().contains("checked by the program sh in a run"));
    for (verdict, solved) in
        [(Ok(true), true), (Ok(false), false), (Err("the check command `x` exited with status 3"), false)]
    {
        let mut engine =
            Engine::new(Arc::clone(&task) as Arc<dyn Task>, &x, Params::new(MethodKind::from_name("cot").unwrap()));
        let mut asked = 0;
        let events = crate::engine::testkit::run_sync_checked(&mut engine, run_cmd(), sim(0.0, 1), |r| {
            asked += 1;
            assert_eq!(r.purpose, crate::engine::CheckPurpose::Answer);
            verdict
                .map(|c| crate::engine::check::Verdict { correct: c, score: 0.5, said: String::new() })
                .map_err(String::from)
        });
        assert_eq!(asked, 1, "asked once");
        let outcome = engine.outcome().expect("finished");
        assert_eq!(outcome.solved, solved, "{verdict:?}");
        let answer = outcome.answer.clone().unwrap();
        let expected = if verdict.is_ok() { 0.5 } else { 0.0 };
        assert_eq!(engine.core.score(&answer), Some(expected), "the score is the verdict's");
        let logs: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                crate::engine::Event::Log { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert!(logs.iter().any(|l| l.starts_with("running the check command `sh -c")), "named first: {logs:?}");
        if let Err(failure) = verdict {
            assert_eq!(engine.core.check_known(&answer), Err(failure.to_string()), "a failure is not a wrong answer");
        }
    }
    assert!(!dir.path().join("ran.log").exists(), "the engine ran nothing");
}

#[test]
fn native_tool_mode_is_a_prompt_the_file_gives() {
    let town = open("town-facts");
    let native = town.react().and_then(|r| r.native()).expect("town-facts has a react_native prompt");
    let names: Vec<String> = native.tool_defs().into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"search".to_string()) && names.contains(&"finish".to_string()), "{names:?}");
    let x = town.problem(0).unwrap().input;
    let prompt = native.react_native_prompt(&x, "", 1);
    assert!(prompt.messages.last().unwrap().content.contains("then call one tool"), "{:?}", prompt.messages);
    let params = Params::new(MethodKind::from_name("react").unwrap()).with("tool_mode", "native");
    assert_eq!(crate::tasks::check_sim_plays(town.as_ref(), &params), Ok(()));
    let err = error_of(&GOOD.replace("cot = ", "react_native = \"{{ input }}\"\ncot = "), &[]);
    assert!(err.contains("prompts.react_native: a react_native prompt goes with a react prompt"), "{err}");
}

#[test]
fn the_math_tools_are_offered_by_name() {
    let toml = GOOD
        .replace("[answer]", "react = \"Q: {{ input }}\\n{{ trajectory }}\\nThought {{ step }}:\"\n[answer]")
        + "[tools]\nmath = true\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.toml"), toml).unwrap();
    let task = FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()).unwrap();
    let tools = task.tools().expect("ReAct with the math tools");
    for name in ["calc", "algebra", "lp", "count", "finish"] {
        assert!(tools.get(name).is_some(), "{name}");
    }
    assert!(served(&task).contains(&"react"), "{:?}", served(&task));
}

#[test]
fn feedback_refine_and_reflect_prompts_come_from_the_file_where_it_gives_them() {
    let toml = GOOD.replace(
        "[answer]",
        "feedback = \"Check: {{ attempt }}\\nSay VERDICT: correct or incorrect.\"\nrefine = \"Redo {{ input }} after: {{ feedback }}\"\n[answer]",
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("task.toml"), &toml).unwrap();
    let task = Arc::new(FileTask::open(dir.path(), &TaskOptions::default(), &mut Vec::new()).unwrap());
    let feedback = task.feedback().unwrap();
    let p = feedback.feedback_prompt("2 + 2", "Answer: 5");
    assert_eq!(
        (p.purpose, p.messages[0].content.as_str()),
        (Purpose::Feedback, "Check: Answer: 5\nSay VERDICT: correct or incorrect.")
    );
    let p = feedback.refine_prompt("2 + 2", "Answer: 5", "2 + 2 is 4");
    assert_eq!((p.purpose, p.messages[0].content.as_str()), (Purpose::Refine, "Redo 2 + 2 after: 2 + 2 is 4"));
    // No reflect prompt: the generic one over the cot prompt.
    let p = feedback.reflect_prompt("2 + 2", "Answer: 5", "wrong");
    assert_eq!(p.purpose, Purpose::Reflect);
    assert!(p.messages.last().unwrap().content.contains("The attempt above was judged incorrect"), "{p:?}");
    // Self-Refine sends the file's prompts and stops on the verdict.
    let params = Params::new(MethodKind::from_name("self-refine").unwrap());
    let mut engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, "2 + 2", params);
    let mut seen = Vec::new();
    run_sync(&mut engine, run_cmd(), |r| {
        seen.push((r.purpose, r.messages.last().map(|m| m.content.clone()).unwrap_or_default()));
        vec![match r.purpose {
            Purpose::Feedback if seen.len() > 2 => "Fine.\nVERDICT: correct".to_string(),
            Purpose::Feedback => "2 + 2 is 4.\nVERDICT: incorrect".to_string(),
            Purpose::Refine => "Answer: 4".to_string(),
            _ => "Answer: 5".to_string(),
        }]
    });
    assert!(engine.outcome().unwrap().solved, "{seen:?}");
    assert!(
        seen.iter().any(|(p, m)| *p == Purpose::Refine && m.starts_with("Redo 2 + 2 after: 2 + 2 is 4.")),
        "{seen:?}"
    );
    // A variable the purpose does not have is an error naming it.
    let err = error_of(&GOOD.replace("[answer]", "feedback = \"{{ feedback }}\"\n[answer]"), &[]);
    assert!(err.contains("prompts.feedback: the template uses {{ feedback }}"), "{err}");
}
