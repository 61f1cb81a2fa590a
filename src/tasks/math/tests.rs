use std::collections::BTreeSet;
use std::path::Path;

use crate::engine::{NativeTools, ReactSteps};

use super::answer::{choice_letter, finish_arg, first_finish, join_options, last_boxed, split_options};
use super::demo::{MistakeKind, PROBLEMS};
use super::mc_demo::QUESTIONS;
use super::*;
use crate::engine::Task;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn demo_task(kind: MathKind) -> MathTask {
    let items = if kind == MathKind::McDemo { mc_demo::items() } else { demo::items() };
    MathTask::new(kind, None, items).unwrap()
}

#[test]
fn math500_file_reads_good_lines_and_names_bad_ones() {
    let path = fixture("math500-sample.jsonl");
    let (items, warnings) = data::read(MathKind::Math500, &path).unwrap();
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(items[0].gold, "55");
    assert_eq!(items[1].facets["subject"], "Prealgebra");
    assert_eq!(items[1].facets["level"], "2");
    assert_eq!(items[2].facets["level"], "3", "\"Level 3\" reads as 3");
    assert_eq!(items[0].facets[ID_FACET], "sample/algebra/1.json");
    let name = path.display().to_string();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].starts_with(&format!("{name}:3: not JSON")), "{}", warnings[0]);
    assert!(warnings[1].starts_with(&format!("{name}:4: \"level\" must be 1 to 5")), "{}", warnings[1]);
    assert!(warnings[2].starts_with(&format!("{name}:7: no \"problem\" field")), "{}", warnings[2]);
}

#[test]
fn mmlu_file_checks_letters_against_indices() {
    let path = fixture("mmlu-pro-sample.jsonl");
    let (items, warnings) = data::read(MathKind::MmluPro, &path).unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0].gold, "B");
    assert_eq!(items[0].facets["category"], "math");
    assert_eq!(items[0].facets[ID_FACET], "1");
    assert_eq!(items[2].gold, "C");
    assert!(items[2].input.ends_with("J. Nm"), "ten options, A to J: {}", items[2].input);
    let name = path.display().to_string();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert_eq!(warnings[0], format!("{name}:3: \"answer\" A and \"answer_index\" 2 (option C) disagree; skipped"));
    assert!(warnings[1].starts_with(&format!("{name}:4: \"options\" is empty")), "{}", warnings[1]);
    assert!(warnings[2].contains(":6: \"answer\" \"D\" is not one of the option letters A to B"), "{}", warnings[2]);
}

#[test]
fn a_file_without_problems_is_one_clear_error() {
    let err = data::parse(MathKind::Math500, "\n\n", "empty.jsonl").unwrap_err().to_string();
    assert_eq!(err, "task data: empty.jsonl: no problems: the file is empty");
    let err = data::parse(MathKind::MmluPro, "{}\n[1]\n", "bad.jsonl").unwrap_err().to_string();
    assert_eq!(err, "task data: bad.jsonl: no questions: none of its 2 lines is a usable question (see the warnings)");
    let err = data::read(MathKind::Math500, Path::new("/no/such/file.jsonl")).unwrap_err().to_string();
    assert!(err.starts_with("task data: /no/such/file.jsonl: cannot read"), "{err}");
    // Many bad lines: twenty named, the rest counted.
    let text = "x\n".repeat(30) + r#"{"problem": "p", "answer": "1", "subject": "Algebra", "level": 1}"#;
    let (_, warnings) = data::parse(MathKind::Math500, &text, "f").unwrap();
    assert_eq!(warnings.len(), 21);
    assert_eq!(warnings[20], "f: 10 more lines skipped");
}

#[test]
fn mmlu_pro_answers_are_read_as_the_benchmark_reads_them() {
    let cases: &[(&str, usize, Option<char>)] = &[
        ("Let's think. The answer is (C).", 4, Some('C')),
        ("the answer is B because", 4, Some('B')),
        // The first "answer is" wins, as re.search finds it.
        ("The answer is (A). Wait, the answer is (D).", 4, Some('A')),
        ("Answer: D", 4, Some('D')),
        ("answer:\n  C", 4, Some('C')),
        // On the first line with a match, the last one (greedy .*).
        ("Answer: A or Answer: B\nAnswer: C", 4, Some('B')),
        // The last standalone letter among the offered ones.
        ("I pick B, no, D.", 4, Some('D')),
        ("I pick B, no, H.", 4, Some('B')),
        ("Both options are bad; maybe (C)", 3, Some('C')),
        ("Apples and Bananas", 4, None),
        ("", 10, None),
        // "answer is" is case-sensitive in the benchmark; the fallback still finds the letter.
        ("ANSWER IS (E)", 5, Some('E')),
    ];
    for (reply, n, want) in cases {
        assert_eq!(choice_letter(reply, *n), *want, "{reply:?}");
    }
}

#[test]
fn options_split_from_and_join_into_the_input() {
    let input = join_options("What is 2 + 2?\nThink.", &["3".into(), "4".into(), "5\nor so".into()]);
    assert_eq!(input, "What is 2 + 2?\nThink.\n\nA. 3\nB. 4\nC. 5 or so");
    let (q, o) = split_options(&input);
    assert_eq!(q, "What is 2 + 2?\nThink.");
    assert_eq!(o, vec!["3", "4", "5 or so"]);
    let (q, o) = split_options("No options here.");
    assert_eq!((q.as_str(), o.len()), ("No options here.", 0));
    let (_, o) = split_options("Q?\nA) yes\nB) no");
    assert_eq!(o, vec!["yes", "no"]);
}

#[test]
fn finish_and_boxed_answers_keep_their_brackets() {
    assert_eq!(
        finish_arg("Thought 2: done\nAction 2: Finish[[2,5)\\cup(5,\\infty)]").as_deref(),
        Some("[2,5)\\cup(5,\\infty)")
    );
    assert_eq!(
        first_finish("x\nAction 3: finish[(-\\infty,2]\\cup[3,\\infty)]").as_deref(),
        Some("(-\\infty,2]\\cup[3,\\infty)")
    );
    assert_eq!(first_finish("Action 1: calc[2^10]\nAction 2: finish[3]"), None, "the first action is not finish");
    assert_eq!(first_finish("Observation 1: x\nAction 2: finish[3]"), None);
    assert_eq!(last_boxed(r"so $\boxed{\frac{1}{2}}$ and \boxed{\{1,2\}}").as_deref(), Some(r"\{1,2\}"));
    assert_eq!(last_boxed(r"\boxed{\frac{7}{2}} end").as_deref(), Some(r"\frac{7}{2}"));
    assert_eq!(last_boxed(r"\boxed{unclosed"), None);
    // The task reads a finish with unbalanced brackets as finish, not as a bad call.
    let task = demo_task(MathKind::MathDemo);
    let step = task.parse_react("The domain.\nAction 2: finish[[2,5)\\cup(5,\\infty)]", 2);
    assert_eq!(step.action, Some(("finish".into(), "[2,5)\\cup(5,\\infty)".into())));
    assert_eq!(step.problem, None);
}

#[test]
fn the_demo_sets_cover_subjects_levels_and_categories() {
    assert!(PROBLEMS.len() >= 40);
    let subjects: BTreeSet<&str> = PROBLEMS.iter().map(|p| p.subject).collect();
    assert_eq!(subjects.len(), 7, "{subjects:?}");
    let levels: BTreeSet<u8> = PROBLEMS.iter().map(|p| p.level).collect();
    assert_eq!(levels, (1..=5).collect());
    let kinds: BTreeSet<MistakeKind> = PROBLEMS.iter().flat_map(|p| p.mistakes.iter().map(|m| m.kind)).collect();
    assert_eq!(kinds.len(), 5, "every kind of mistake appears");
    assert!(QUESTIONS.len() >= 12);
    let categories: BTreeSet<&str> = QUESTIONS.iter().map(|q| q.category).collect();
    assert!(categories.len() >= 6, "{categories:?}");
    let texts: BTreeSet<&str> = PROBLEMS.iter().map(|p| p.problem).collect();
    assert_eq!(texts.len(), PROBLEMS.len(), "problems are distinct");
}

/// Every demo answer re-derived where arithmetic can: the calculator step's value is
/// the exact value of its expression; each step a mistake names exists; each wrong
/// answer differs from the gold and from the other wrong answers (under the grader,
/// so this holds with the full LaTeX-aware grader too).
#[test]
fn demo_answers_and_mistakes_are_consistent() {
    use crate::arith::expr::eval_calc;
    for p in PROBLEMS {
        let calc = p.calc.unwrap_or_else(|| panic!("{}: no calculator step", p.problem));
        let value = eval_calc(calc.expr).unwrap_or_else(|e| panic!("{}: {e}", calc.expr));
        assert_eq!(Ok(value), eval_calc(calc.value), "{}", p.problem);
        assert!(calc.step < p.steps.len());
        assert!(!p.mistakes.is_empty(), "{}", p.problem);
        assert!(crate::grade::equivalent(p.answer, p.answer), "{}", p.answer);
        let flat = |s: &str| s.replace([' ', '$'], "").replace(r"\left", "").replace(r"\right", "");
        assert!(
            flat(p.steps.last().unwrap()).contains(&flat(p.answer)),
            "{}: the last step states the answer",
            p.problem
        );
        for (i, m) in p.mistakes.iter().enumerate() {
            assert!(m.step < p.steps.len(), "{}", p.problem);
            assert!(!crate::grade::equivalent(p.answer, m.answer), "{}: {} is the gold", p.problem, m.answer);
            for other in &p.mistakes[i + 1..] {
                assert!(
                    !crate::grade::equivalent(m.answer, other.answer),
                    "{}: two mistakes give {}",
                    p.problem,
                    m.answer
                );
            }
        }
    }
    for q in QUESTIONS {
        assert!((4..=10).contains(&q.options.len()), "{}", q.question);
        assert!(q.answer < q.options.len());
        let calc = q.calc.unwrap();
        assert_eq!(eval_calc(calc.expr), eval_calc(calc.value), "{}", q.question);
        let letters: Vec<String> = (0..q.options.len()).map(|i| answer::letter(i).to_string()).collect();
        for (i, m) in q.mistakes.iter().enumerate() {
            assert!(letters.contains(&m.answer.to_string()) && m.answer != q.gold(), "{}: {}", q.question, m.answer);
            assert!(q.mistakes[i + 1..].iter().all(|o| o.answer != m.answer), "{}", q.question);
        }
    }
}

#[test]
fn check_grades_against_the_gold_without_revealing_it() {
    let task = demo_task(MathKind::MathDemo);
    let p = &PROBLEMS[0];
    assert_eq!(task.check(p.problem, p.answer), Ok(()));
    let err = task.check(p.problem, "5").unwrap_err();
    assert!(!err.contains(p.answer), "{err}");
    assert!(task.check("a problem of my own", "1").is_err());
    let cot = format!("Steps.\nThe final answer is $\\boxed{{{}}}$.", p.answer);
    assert_eq!(task.extract_answer(p.problem, &cot).as_deref(), Some(p.answer));
    assert_eq!(task.answer_key(p.answer), crate::grade::normalize(p.answer));

    let mc = demo_task(MathKind::McDemo);
    let q = &QUESTIONS[0];
    let input = q.input();
    assert_eq!(mc.check(&input, &q.gold()), Ok(()));
    let err = mc.check(&input, "A").unwrap_err();
    assert_eq!(err, "option A is not the right option");
    assert_eq!(mc.extract_answer(&input, "so the answer is (B).").as_deref(), Some("B"));
    assert_eq!(mc.extract_answer(&input, "Action 2: finish[B]").as_deref(), Some("B"));
    assert!(mc.check(&input, "Z").unwrap_err().contains("names none of the options A to D"));
}

#[test]
fn prompts_fill_the_problem_and_can_be_overridden() {
    let task = demo_task(MathKind::MathDemo);
    let p = &PROBLEMS[3];
    let cot = task.cot_prompt(p.problem);
    assert!(cot.messages[0].content.contains(p.problem));
    assert!(cot.messages[0].content.contains("\\boxed{"));
    assert_eq!(cot.context["problem"], p.problem);
    assert_eq!(cot.context["task"], "math-demo");
    let act = task.react_prompt(p.problem, "", 1);
    assert!(act.messages[0].content.contains("finish["), "{}", act.messages[0].content);
    assert!(act.context["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(!task.tool_defs().is_empty());

    let mc = demo_task(MathKind::McDemo);
    let q = &QUESTIONS[1];
    let prompt = mc.cot_prompt(&q.input()).messages[0].content.clone();
    assert!(prompt.contains("about physics"), "{prompt}");
    assert!(prompt.contains("A. 12 m\nB. 24 m"), "{prompt}");
    assert!(prompt.contains("The answer is (X)"));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cot.txt"), "Mine: {problem}").unwrap();
    let mine = MathTask::new(MathKind::MathDemo, Some(dir.path()), demo::items()).unwrap();
    assert_eq!(mine.cot_prompt("x").messages[0].content, "Mine: x");
    std::fs::write(dir.path().join("io.txt"), "no placeholder").unwrap();
    let err = MathTask::new(MathKind::MathDemo, Some(dir.path()), demo::items()).err().unwrap().to_string();
    assert_eq!(err, "prompt template io.txt: missing the placeholder {problem}");
}

#[test]
fn inputs_of_ones_own_and_by_number() {
    let task = demo_task(MathKind::MathDemo);
    assert_eq!(task.parse_input("3").unwrap().input, PROBLEMS[3].problem);
    let own = task.parse_input("  What is 1 + 1?  ").unwrap();
    assert_eq!((own.index, own.input.as_str()), (None, "What is 1 + 1?"));
    assert!(task.parse_input("  ").is_err());
    let mc = demo_task(MathKind::McDemo);
    let err = mc.parse_input("Just a question?").unwrap_err().to_string();
    assert!(err.contains("A. ..., B. ..."), "{err}");
    let own = mc.parse_input("Pick one.\nA. x\nB. y").unwrap();
    assert_eq!(own.input, "Pick one.\n\nA. x\nB. y");
}

#[test]
fn a_session_header_rebuilds_a_data_task() {
    let mut facets = BTreeMap::new();
    facets.insert("subject".to_string(), "Algebra".to_string());
    let spec = TaskSpec {
        name: "math500",
        input: "What is 1 + 1?",
        gold: Some("2"),
        actions: None,
        facets: Some(&facets),
        style: Default::default(),
        definition: None,
    };
    let task = MathTask::from_spec(MathKind::Math500, &spec, Default::default()).unwrap();
    assert_eq!(task.check("What is 1 + 1?", "2"), Ok(()));
    assert_eq!(task.facets("What is 1 + 1?")["subject"], "Algebra");
    assert_eq!(task.gold("What is 1 + 1?").as_deref(), Some("2"));
    let built = crate::tasks::for_spec(&spec, &TaskOptions::default()).unwrap();
    assert_eq!(built.name(), "math500");
    assert_eq!(built.problem_count(), 1);
}

proptest::proptest! {
    /// The readers never panic, whatever a model writes.
    #[test]
    fn answer_readers_never_panic(text in "(?s).{0,300}", n in 0usize..12) {
        let _ = choice_letter(&text, n);
        let _ = split_options(&text);
        let _ = first_finish(&text);
        let _ = finish_arg(&text);
        let _ = last_boxed(&text);
        let _ = answer::tail(&text, 7);
        let task = demo_task(MathKind::McDemo);
        let _ = task.extract_answer(&text, &text);
        let _ = task.parse_input(&text);
    }
}
