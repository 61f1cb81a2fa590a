use std::path::{Path, PathBuf};

use super::pyliteral::{parse_python_literal, Py};
use super::trajectories::dict_get;
use super::*;

fn act(tool: &str, arg: &str) -> Option<ToolCall> {
    Some(ToolCall::action(tool, arg))
}

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

// ---- parse_step: replies written the way models write them ----

#[test]
fn react_parse_continuation_of_thought_prompt() {
    // The prompt ends with "Thought 1:", so the reply starts with the thought's text.
    let p = parse_step(" I need to search Paramore and see if it is from Tennessee.\nAction 1: Search[Paramore]", 1);
    assert_eq!(p.thought.as_deref(), Some("I need to search Paramore and see if it is from Tennessee."));
    assert_eq!(p.action, act("search", "Paramore"));
    assert!(p.extra_actions.is_empty());
    assert_eq!(p.problem, None);
}

#[test]
fn react_parse_labelled_canonical() {
    let p = parse_step("Thought 2: The band is from Franklin, Tennessee.\nAction 2: Finish[REFUTES]", 2);
    assert_eq!(p.thought.as_deref(), Some("The band is from Franklin, Tennessee."));
    assert_eq!(p.action, act("finish", "REFUTES"));
}

#[test]
fn react_parse_any_case_and_spacing() {
    let p = parse_step("thought 1 :   I should look it up.\n   ACTION   1 :   SEARCH[Eric Church]  ", 1);
    assert_eq!(p.thought.as_deref(), Some("I should look it up."));
    assert_eq!(p.action, act("search", "Eric Church"));
}

#[test]
fn react_parse_missing_and_wrong_step_numbers() {
    let p = parse_step("Thought: I need the date.\nAction: Lookup[born]", 4);
    assert_eq!(p.action, act("lookup", "born"));
    assert_eq!(p.thought.as_deref(), Some("I need the date."));
    let p = parse_step("Thought 7: wrong number.\nAction 9: Lookup[born]", 4);
    assert_eq!(p.action, act("lookup", "born"));
    assert_eq!(p.thought.as_deref(), Some("wrong number."));
}

#[test]
fn react_parse_sparse_thought() {
    let p = parse_step("Action 3: Search[Victoria Palace Theatre]", 3);
    assert_eq!(p.thought, None);
    assert_eq!(p.action, act("search", "Victoria Palace Theatre"));
    // The prompt ended with "Thought 3:" and the model wrote nothing there.
    let p = parse_step(" \nAction 3: Search[Victoria Palace Theatre]", 3);
    assert_eq!(p.thought, None);
    assert_eq!(p.problem, None);
}

#[test]
fn react_parse_several_actions_takes_first_notes_rest() {
    let reply = "I will search both.\nAction 1: Search[Arthur's Magazine]\nObservation 1: ...\n\
                 Thought 2: Now the other.\nAction 2: Search[First for Women]";
    let p = parse_step(reply, 1);
    // The self-written observation cuts the rest off.
    assert_eq!(p.action, act("search", "Arthur's Magazine"));
    assert!(p.extra_actions.is_empty());

    let reply =
        "Thought 1: I will search both.\nAction 1: Search[Arthur's Magazine]\nAction 2: Search[First for Women]";
    let p = parse_step(reply, 1);
    assert_eq!(p.action, act("search", "Arthur's Magazine"));
    assert_eq!(p.extra_actions, vec!["Search[First for Women]".to_string()]);
    assert_eq!(p.problem, None);

    let p = parse_step("Action 1: Search[A]\nSearch[B]", 1);
    assert_eq!(p.action, act("search", "A"));
    assert_eq!(p.extra_actions, vec!["Search[B]".to_string()]);
}

#[test]
fn react_parse_action_on_the_next_line() {
    // As in the real FEVER traces.
    let reply = "I need to find another source.\nAction 3: \n\nFinish[NOT ENOUGH INFO]";
    let p = parse_step(reply, 3);
    assert_eq!(p.action, act("finish", "NOT ENOUGH INFO"));
    assert_eq!(p.thought.as_deref(), Some("I need to find another source."));
}

#[test]
fn react_parse_trailing_prose_after_bracket() {
    let p = parse_step("Thought 1: Look it up.\nAction 1: Search[Paramore] to see where the band is from.", 1);
    assert_eq!(p.action, act("search", "Paramore"));
    let p = parse_step("Action 2: Finish[yes]. The two directors are both American.\nThis should be right.", 2);
    assert_eq!(p.action, act("finish", "yes"));
    assert!(p.extra_actions.is_empty());
}

#[test]
fn react_parse_cuts_self_written_observation() {
    let reply = "Thought 1: Search it.\nAction 1: Search[Paramore]\nObservation 1: Paramore is an American rock band \
                 from Franklin, Tennessee.\nThought 2: So it is from Tennessee.\nAction 2: Finish[REFUTES]";
    let p = parse_step(reply, 1);
    assert_eq!(p.action, act("search", "Paramore"));
    assert!(p.extra_actions.is_empty());
    assert_eq!(p.thought.as_deref(), Some("Search it."));
    // Lowercase and unnumbered observation labels cut too.
    let p = parse_step("Action: Search[x]\nobservation: made up\nAction: Search[y]", 1);
    assert!(p.extra_actions.is_empty());
}

#[test]
fn react_parse_markdown_bold_and_backticks() {
    let reply = "**Thought 1:** I should search for the Victoria Palace Theatre.\n**Action 1:** `Search[Victoria Palace Theatre]`";
    let p = parse_step(reply, 1);
    assert_eq!(p.thought.as_deref(), Some("I should search for the Victoria Palace Theatre."));
    assert_eq!(p.action, act("search", "Victoria Palace Theatre"));

    let reply = "### Thought 1\n\nThought 1: Search it.\n\n```\nAction 1: Search[Paramore]\n```";
    let p = parse_step(reply, 1);
    assert_eq!(p.action, act("search", "Paramore"));
    assert_eq!(p.thought.as_deref(), Some("Search it."));
}

#[test]
fn react_parse_keeps_the_argument_as_written() {
    // Markdown stripping stops at the brackets: `2**3` is a power, not "23".
    for (reply, tool, arg) in [
        ("Thought 1: Compute.\nAction 1: calculate[2**3]", "calculate", "2**3"),
        ("**Thought 1:** Compute.\n**Action 1:** `calculate[9**9**9**9]`", "calculate", "9**9**9**9"),
        ("Thought 1: Compute.\nAction 1: Calculate[`0x10`]", "calculate", "0x10"),
        ("Thought 1: Compute.\nAction 1: calculate(\"2 ** 3\")", "calculate", "2 ** 3"),
        ("Thought 1: Find it.\nAction 1: Search[**Paramore**]", "search", "Paramore"),
    ] {
        assert_eq!(parse_step(reply, 1).action, act(tool, arg), "{reply}");
    }
    let p = parse_step("Thought 1: Compute.\nAction 1: calculate[2**3]", 1);
    let call = p.action.expect("an action");
    assert_eq!(crate::tools::calculate::calculate(&call.arg).as_deref(), Ok("8"));
}

#[test]
fn react_parse_space_before_bracket() {
    let p = parse_step("Thought 1: Search it.\nAction 1: Search [Nikolaj Coster-Waldau]", 1);
    assert_eq!(p.action, act("search", "Nikolaj Coster-Waldau"));
}

#[test]
fn react_parse_function_call_style() {
    let p = parse_step("Thought 1: Search it.\nAction 1: search(\"Ed Wood\")", 1);
    assert_eq!(p.action, act("search", "Ed Wood"));
    let p = parse_step("Action 1: lookup('nationality')", 1);
    assert_eq!(p.action, act("lookup", "nationality"));
    let p = parse_step("Action 1: Search(query=\"Scott Derrickson\")", 1);
    assert_eq!(p.action, act("search", "Scott Derrickson"));
}

#[test]
fn react_parse_colon_form() {
    let p = parse_step("Thought 4: Both are American.\nAction 4: Finish: yes", 4);
    assert_eq!(p.action, act("finish", "yes"));
    let p = parse_step("Action 2: Search: \"Kiss and Tell\".", 2);
    assert_eq!(p.action, act("search", "Kiss and Tell"));
}

#[test]
fn react_parse_nested_brackets_and_quotes() {
    let p = parse_step("Action 1: Search[Kiss and Tell [1945 film]]", 1);
    assert_eq!(p.action, act("search", "Kiss and Tell [1945 film]"));
    let p = parse_step("Action 1: Search[\"Corliss Archer\"]", 1);
    assert_eq!(p.action, act("search", "Corliss Archer"));
}

#[test]
fn react_parse_action_without_label_on_its_own_line() {
    let p = parse_step(" I should search Eric Church.\nSearch[Eric Church]", 1);
    assert_eq!(p.action, act("search", "Eric Church"));
    assert_eq!(p.thought.as_deref(), Some("I should search Eric Church."));
}

#[test]
fn react_parse_no_action_is_a_problem_restating_the_format() {
    let p = parse_step(" I think the claim is probably true, but I am not sure.", 2);
    assert_eq!(p.action, None);
    assert_eq!(p.thought.as_deref(), Some("I think the claim is probably true, but I am not sure."));
    let problem = p.problem.expect("a problem");
    assert!(problem.starts_with("Invalid action: no action found"), "{problem}");
    assert!(problem.contains("Thought 2: <your reasoning>\nAction 2: Tool[argument]"), "{problem}");

    // A thought that only mentions a call mid-sentence is not an action.
    let p = parse_step("I could Search[x] but I won't.", 1);
    assert_eq!(p.action, None);
    assert!(p.problem.is_some());
}

#[test]
fn react_parse_unreadable_action_is_a_problem() {
    let p = parse_step("Thought 2: I will look for Africa.\nAction 2: look for Africa", 2);
    assert_eq!(p.action, None);
    let problem = p.problem.expect("a problem");
    assert!(problem.contains("could not read the action \"look for Africa\""), "{problem}");
    assert!(problem.contains("Action 2: Tool[argument]"), "{problem}");

    let p = parse_step("Thought 2: Hmm.\nAction 2:", 2);
    assert!(p.problem.expect("a problem").contains("the action is empty"));

    let p = parse_step("Action 1: Search[Paramore", 1);
    assert_eq!(p.action, None);
    assert!(p.problem.is_some());
}

#[test]
fn react_parse_first_readable_action_wins() {
    let p = parse_step("Action 1: I'll search now\nAction 1: Search[Paramore]", 1);
    assert_eq!(p.action, act("search", "Paramore"));
    assert_eq!(p.problem, None);
}

#[test]
fn react_parse_multiline_thought() {
    let p = parse_step("Thought 3: First line of reasoning.\nSecond line.\nAction 3: Lookup[Tennessee]", 3);
    assert_eq!(p.thought.as_deref(), Some("First line of reasoning.\nSecond line."));
    assert_eq!(p.action, act("lookup", "Tennessee"));
}

#[test]
fn react_format_step_is_canonical_and_parses_back() {
    let action = ToolCall::action("Search", "Paramore");
    assert_eq!(action.name, "search");
    assert_eq!(action.react_text(), "Search[Paramore]");
    let text = format_step(1, Some("I should search Paramore."), Some(&action), Some("Paramore is a band."));
    assert_eq!(
        text,
        "Thought 1: I should search Paramore.\nAction 1: Search[Paramore]\nObservation 1: Paramore is a band.\n"
    );
    assert_eq!(
        format_step(2, None, Some(&ToolCall::action("finish", "SUPPORTS")), None),
        "Action 2: Finish[SUPPORTS]\n"
    );
    let p = parse_step(&format_step(1, Some("I should search Paramore."), Some(&action), None), 1);
    assert_eq!(p.thought.as_deref(), Some("I should search Paramore."));
    assert_eq!(p.action, Some(action));
    assert!(STOP_SEQUENCES.contains(&"\nObservation"));
}

// ---- Python literals ----

#[test]
fn react_python_dict_literals() {
    let v = parse_python_literal(
        "{'steps': 2, 'answer': 'Tom\\'s \"Diner\"', 'x': None, 'ok': True, 'no': False, 'f': -1.5e2, \
         \"l\": [1, (2, 3)], 'u': u'\\u00e9\\n',}",
    )
    .expect("parses");
    assert_eq!(dict_get(&v, "steps"), Some(&Py::Int(2)));
    assert_eq!(dict_get(&v, "answer"), Some(&Py::Str("Tom's \"Diner\"".into())));
    assert_eq!(dict_get(&v, "x"), Some(&Py::None));
    assert_eq!(dict_get(&v, "ok"), Some(&Py::Bool(true)));
    assert_eq!(dict_get(&v, "no"), Some(&Py::Bool(false)));
    assert_eq!(dict_get(&v, "f"), Some(&Py::Float(-150.0)));
    assert_eq!(dict_get(&v, "l"), Some(&Py::List(vec![Py::Int(1), Py::List(vec![Py::Int(2), Py::Int(3)])])));
    assert_eq!(dict_get(&v, "u"), Some(&Py::Str("é\n".into())));
    assert!(parse_python_literal("{'a': 1").is_err());
    assert!(parse_python_literal("{'a': 'open}").is_err());
    assert!(parse_python_literal("{'a': nope}").unwrap_err().contains("nope"));
}

#[test]
fn react_python_literal_depth_is_limited() {
    // Deep enough to overflow the stack of a test thread without the limit.
    for open in ['[', '(', '{'] {
        let text: String = std::iter::repeat_n(open, 200_000).collect();
        let err = parse_python_literal(&text).unwrap_err();
        assert!(err.contains(&format!("nested more than {MAX_LITERAL_DEPTH} levels")), "{err}");
    }
    let ok = format!("{}1{}", "[".repeat(MAX_LITERAL_DEPTH), "]".repeat(MAX_LITERAL_DEPTH));
    assert!(parse_python_literal(&ok).is_ok());
    let deep = format!("{}1{}", "[".repeat(MAX_LITERAL_DEPTH + 1), "]".repeat(MAX_LITERAL_DEPTH + 1));
    assert!(parse_python_literal(&deep).is_err());
    // In a log: the block is skipped with a warning naming the line, the rest is read.
    let block = "1 Claim: x.\nThought 1: t\nAction 1: Finish[SUPPORTS]\nObservation 1: done\n";
    let text = format!(
        "{block}{{'steps': {}1}}\n-----------\n{block}{{'steps': 1, 'answer': 'SUPPORTS', 'gt_answer': 'SUPPORTS', \
         'question_idx': 1, 'em': 1, 'reward': 1, 'f1': 1}}\n",
        "[".repeat(100_000)
    );
    let (trajectories, warnings) = read_trajectories(&text, "deep.txt");
    assert_eq!(trajectories.len(), 1);
    assert!(warnings.iter().any(|w| w.starts_with("deep.txt:5: results dict: nested more than")), "{warnings:?}");
}

// ---- trajectories ----

#[test]
fn react_reads_the_fixture_trajectories() {
    let path = fixture("react-text-sample.txt");
    let text = std::fs::read_to_string(&path).expect("fixture");
    let (ts, warnings) = read_trajectories(&text, "sample");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(ts.len(), 4);

    let t = &ts[0];
    assert_eq!(t.question_idx, Some(101));
    assert_eq!(t.kind, QuestionKind::Claim);
    assert_eq!(t.question, "Nikolaj Coster-Waldau worked with the Fox Broadcasting Company.");
    assert_eq!(t.steps.len(), 2);
    assert_eq!(t.steps[0].action, act("search", "Nikolaj Coster-Waldau"));
    assert_eq!(t.steps[1].observation, "Episode finished, reward = 1");
    let r = t.result.as_ref().expect("result");
    assert_eq!((r.steps, r.answer.as_str(), r.gt_answer.as_str()), (2, "SUPPORTS", "SUPPORTS"));
    assert_eq!((r.em, r.reward, r.f1), (1.0, 1.0, 1.0));

    // A multi-line observation, and an action on the line after `Action 2:`.
    let t = &ts[1];
    assert_eq!(t.steps.len(), 3);
    assert_eq!(
        t.steps[0].observation,
        "Stranger Things is an American science fiction horror drama television series.\n\
         Set in the 1980s, primarily in the fictional town of Hawkins, Indiana.\n\n\
         The series centers on the disappearance of a young boy."
    );
    assert_eq!(t.steps[1].action_raw, "Finish[REFUTES]");
    assert_eq!(t.steps[1].action, act("finish", "REFUTES"));
    assert_eq!(t.steps[1].observation, "Invalid action: Finish[REFUTES]");
    assert_eq!(t.steps[2].n, 3);

    // An unreadable action.
    let t = &ts[2];
    assert_eq!(t.steps[1].action_raw, "look for Africa");
    assert_eq!(t.steps[1].action, None);
    assert_eq!(t.result.as_ref().map(|r| r.em), Some(0.0));

    // HotpotQA: a question, a step without a thought, quotes in the dict, True as em.
    let t = &ts[3];
    assert_eq!(t.kind, QuestionKind::Question);
    assert_eq!(t.question_idx, Some(404));
    assert_eq!(t.steps.len(), 3);
    assert_eq!(t.steps[1].n, 2);
    assert_eq!(t.steps[1].thought, None);
    assert_eq!(t.steps[1].action, act("search", "First for Women"));
    let r = t.result.as_ref().expect("result");
    assert_eq!((r.answer.as_str(), r.gt_answer.as_str(), r.em), ("Arthur's Magazine", "Arthur's Magazine", 1.0));
}

#[test]
fn react_malformed_blocks_are_skipped_with_warnings() {
    let text = "1 Claim: A.\nThought 1: t\nAction 1: Finish[SUPPORTS]\nObservation 1: done\n\
                {'steps': 1, 'answer': 'SUPPORTS', 'gt_answer': 'SUPPORTS', 'question_idx': 1, 'em': 1, 'reward': 1, 'f1': 1}\n\
                -----------\n\
                this is not a header\nThought 1: t\n\
                -----------\n\
                3 Claim: C.\nThought 1: t\nAction 1: Finish[x]\nObservation 1: done\n\
                {'steps': 1, 'answer': 'x', 'em': 1\n\
                -----------\n\
                4 Claim: D.\n\
                -----------\n\
                5 Question: E?\nAction 1: Finish[e]\nObservation 1: done\n\
                -----------\n";
    let (ts, warnings) = read_trajectories(text, "log.txt");
    assert_eq!(ts.iter().map(|t| t.question_idx).collect::<Vec<_>>(), vec![Some(1), Some(5)]);
    assert_eq!(warnings.len(), 4, "{warnings:#?}");
    assert!(warnings[0].starts_with("log.txt:7: expected `<index> Claim: ...`"), "{}", warnings[0]);
    assert!(warnings[0].ends_with("block skipped"));
    assert!(warnings[1].starts_with("log.txt:14: results dict:"), "{}", warnings[1]);
    assert!(warnings[2].starts_with("log.txt:16: no `Thought`"), "{}", warnings[2]);
    assert!(warnings[3].starts_with("log.txt:20: no results dict"), "{}", warnings[3]);
    assert_eq!(ts[1].result, None);
    assert_eq!(ts[1].steps[0].thought, None);

    // Text after the results dict (two trajectories without a separator) is reported.
    let text = "1 Claim: A.\nAction 1: Finish[x]\n{'steps': 1, 'answer': 'x', 'gt_answer': 'x', 'em': 1, 'reward': 1, \
                'f1': 1}\n\n1 1 1.0 2.5\n2 Claim: B.\nAction 1: Finish[y]\n";
    let (ts, warnings) = read_trajectories(text, "f");
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].question_idx, Some(1));
    assert_eq!(warnings, vec!["f:6: unexpected text after the results dict (a missing `-----------`?); ignored"]);

    // Missing keys name the key.
    let (ts, warnings) = read_trajectories("1 Claim: A.\nAction 1: Finish[x]\n{'steps': 1, 'answer': 'x'}\n", "f");
    assert!(ts.is_empty());
    assert!(warnings[0].contains("no \"gt_answer\""), "{warnings:?}");
}

#[test]
fn react_reads_the_shared_fever_trajectories() {
    let Some(path) = shared("react/fever_react_gpt3_first100.txt") else { return };
    let text = std::fs::read_to_string(&path).expect("readable");
    let (ts, warnings) = read_trajectories(&text, &path.display().to_string());
    assert!(warnings.is_empty(), "{warnings:#?}");
    assert_eq!(ts.len(), 100);

    // Independent scans of the text: the dicts' em values and the observation lines.
    let mut em_sum = 0.0;
    for piece in text.split("'em': ").skip(1) {
        let number: String = piece.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        em_sum += number.parse::<f64>().expect("a number after 'em': ");
    }
    let observations = text.lines().filter(|l| l.starts_with("Observation ")).count();
    let results: Vec<&TrajectoryResult> = ts.iter().filter_map(|t| t.result.as_ref()).collect();
    assert_eq!(results.len(), 100);
    assert_eq!(results.iter().map(|r| r.em).sum::<f64>(), em_sum);
    assert_eq!(em_sum, 52.0);
    assert_eq!(ts.iter().map(|t| t.steps.len()).sum::<usize>(), observations);

    assert!(ts.iter().all(|t| t.kind == QuestionKind::Claim && t.question_idx.is_some()));
    assert_eq!(ts[0].question_idx, Some(3687));
    assert_eq!(ts[0].question, "Paramore is not from Tennessee.");
    // The logged em is exact match of answer and gold; f1 agrees too.
    for r in &results {
        assert_eq!(exact_match(&r.answer, &r.gt_answer), r.em == 1.0, "{r:?}");
        assert_eq!(f1(&r.answer, &r.gt_answer), r.f1, "{r:?}");
    }
    // Actions written on the line after `Action i:` are read.
    let next_line = ts.iter().flat_map(|t| &t.steps).filter(|s| s.observation.starts_with("Invalid action")).count();
    assert!(next_line >= 5);
    assert!(ts.iter().flat_map(|t| &t.steps).all(|s| s.action.is_some()));
}

// ---- scoring ----

#[test]
fn react_normalize_answer_like_hotpotqa() {
    assert_eq!(normalize_answer("The  Eiffel Tower!"), "eiffel tower");
    assert_eq!(normalize_answer("A Tale of Two Cities"), "tale of two cities");
    assert_eq!(normalize_answer("Arthur's Magazine"), "arthurs magazine");
    assert_eq!(normalize_answer("an apple, the pear"), "apple pear");
    assert_eq!(normalize_answer("theatre anthem"), "theatre anthem");
    assert_eq!(normalize_answer("NOT ENOUGH INFO"), "not enough info");
    assert_eq!(normalize_answer(""), "");
}

#[test]
fn react_exact_match_and_f1_known_values() {
    assert!(exact_match("The Eiffel Tower", "eiffel tower."));
    assert!(!exact_match("Eiffel", "Eiffel Tower"));
    assert!((f1("Eiffel", "Eiffel Tower") - 2.0 / 3.0).abs() < 1e-12);
    // pred 3 tokens, gold 2, 2 shared: p = 2/3, r = 1, f1 = 0.8.
    assert!((f1("Chief of Protocol", "Chief Protocol") - 0.8).abs() < 1e-12);
    assert_eq!(f1("Paris", "London"), 0.0);
    assert_eq!(f1("yes", "yes"), 1.0);
    assert_eq!(f1("yes", "no"), 0.0);
    // The special rule: "yes" against "yes indeed" would score 2/3 by tokens.
    assert_eq!(f1("yes", "yes indeed"), 0.0);
    assert_eq!(f1("no answer", "noanswer"), 0.0);
    // Repeated tokens count once per occurrence (a multiset intersection).
    assert!((f1("the cat cat", "cat") - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(f1("", ""), 0.0);
    assert!(exact_match("", ""));
}

// ---- data ----

#[test]
fn react_reads_hotpotqa_fixture_and_names_bad_files() {
    let items = read_hotpotqa(&fixture("hotpot-sample.json")).expect("fixture reads");
    assert_eq!(items.len(), 3);
    assert_eq!(items[0].answer, "yes");
    assert_eq!(items[0].kind, "comparison");
    assert_eq!(
        items[1].question,
        "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"
    );

    let err = read_hotpotqa(Path::new("/nonexistent/hotpot.json")).unwrap_err();
    assert!(err.starts_with("/nonexistent/hotpot.json: cannot read"), "{err}");
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "[{\"question\": \"q\"}]").expect("write");
    let err = read_hotpotqa(&bad).unwrap_err();
    assert!(err.contains("bad.json: not a HotpotQA list") && err.contains("answer"), "{err}");
}

#[test]
fn react_reads_the_shared_hotpotqa_dev_set() {
    let Some(path) = shared("react/hotpot_dev_v1_simplified.json") else { return };
    let items = read_hotpotqa(&path).expect("reads");
    assert_eq!(items.len(), 7405);
    assert_eq!(items[0].question, "Were Scott Derrickson and Ed Wood of the same nationality?");
    assert_eq!(items[0].answer, "yes");
    assert!(items.iter().all(|i| i.kind == "bridge" || i.kind == "comparison"));
}

// ---- parse_step_reference: the ReAct paper's own reading of an action ----

#[test]
fn react_reference_rules_match_the_papers_environment() {
    let p = parse_step_reference(" I should search Paramore.\nAction 1: Search[Paramore]", 1);
    assert_eq!(p.thought.as_deref(), Some("I should search Paramore."));
    assert_eq!(p.action, act("search", "Paramore"));
    assert_eq!(p.problem, None);
    // The first letter is lowercased, nothing else: `SEARCH[x]` is not an action there.
    let p = parse_step_reference("Thought 2: t\nAction 2: SEARCH[x]", 2);
    assert_eq!(p.problem.as_deref(), Some("Invalid action: sEARCH[x]"));
    // Blank lines before the action keep its capital: invalid, as in the logged runs.
    let p = parse_step_reference("Thought 3: t\nAction 3: \n\nFinish[NOT ENOUGH INFO]", 3);
    assert_eq!(p.action, None);
    assert_eq!(p.problem.as_deref(), Some("Invalid action: Finish[NOT ENOUGH INFO]"));
    let p = parse_step_reference("Thought 2: I will look.\nAction 2: look for Africa", 2);
    assert_eq!(p.problem.as_deref(), Some("Invalid action: look for Africa"));
    // The action alone (the second call's reply); text after the bracket; an empty finish;
    // quotes kept; the environment's `think[...]`.
    let p = parse_action_reference("Search[First for Women]");
    assert_eq!((p.thought, p.action), (None, act("search", "First for Women")));
    let p = parse_step_reference("Thought 1: t\nAction 1: Search[x] now", 1);
    assert_eq!(p.problem.as_deref(), Some("Invalid action: search[x] now"));
    assert_eq!(parse_action_reference("finish[]").action, act("finish", ""));
    let p = parse_step_reference(" t\nAction 1: Search[\"Love the Way You Lie\"]", 1);
    assert_eq!(p.action, act("search", "\"Love the Way You Lie\""));
    assert_eq!(parse_action_reference("Think[about it]").problem.as_deref(), Some("Nice thought."));
    assert_eq!(parse_action_with(ActionRules::Reference, " Finish[SUPPORTS]\n", 2).action, act("finish", "SUPPORTS"));
    assert_eq!(parse_action_with(ActionRules::Tolerant, "Finish[SUPPORTS]", 2).action, act("finish", "SUPPORTS"));
    assert_eq!(parse_step_with(ActionRules::Tolerant, "Action 3:\n\nFinish[x]", 3).action, act("finish", "x"));
}

#[test]
fn react_trajectories_keep_the_exact_action_text() {
    let text = std::fs::read_to_string(fixture("react-text-sample.txt")).unwrap();
    let (ts, _) = read_trajectories(&text, "sample");
    assert_eq!(ts[0].steps[0].action_text, "Search[Nikolaj Coster-Waldau]");
    assert_eq!(ts[1].steps[1].action_text, "\n\nFinish[REFUTES]");
    assert_eq!(ts[2].steps[1].action_text, "look for Africa");
}

// ---- property tests: no input makes the parsers panic ----

mod never_panic {
    use super::super::pyliteral::parse_python_literal;
    use super::super::*;
    use proptest::prelude::*;

    /// Text made of the pieces the parsers look for, in any order, so the generated inputs
    /// reach deep into them (labels, brackets, quotes, dict syntax, separators, `ohh...`).
    fn react_like() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("Thought 1: ".to_string()),
            Just("Action 2: ".to_string()),
            Just("Observation 3: ".to_string()),
            Just("\nAction 1: ".to_string()),
            Just("Search[".to_string()),
            Just("Finish[x]".to_string()),
            Just("]".to_string()),
            Just("(".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just("\\".to_string()),
            Just("\n".to_string()),
            Just("-----------\n".to_string()),
            Just("ohh... ".to_string()),
            Just("3687 Claim: ".to_string()),
            Just("Question: ".to_string()),
            Just("{'steps': ".to_string()),
            Just("{".to_string()),
            Just("}".to_string()),
            Just(", ".to_string()),
            Just(": ".to_string()),
            Just("**".to_string()),
            Just("```".to_string()),
            Just("é".to_string()),
            "[0-9.e+-]{1,6}",
            any::<String>(),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn react_text_readers_never_panic(text in react_like(), step in 0usize..12) {
            let _ = parse_step(&text, step);
            let _ = parse_step_reference(&text, step);
            let _ = read_trajectories(&text, "prop.txt");
        }

        #[test]
        fn python_literal_parser_never_panics(text in react_like()) {
            let _ = parse_python_literal(&text);
        }

        #[test]
        fn arbitrary_strings_never_panic(text in any::<String>(), step in any::<usize>()) {
            let _ = parse_step(&text, step);
            let _ = parse_step_reference(&text, step);
            let _ = read_trajectories(&text, "prop.txt");
            let _ = parse_python_literal(&text);
        }
    }
}

#[test]
fn react_reference_replies_that_do_not_split_ask_for_the_action() {
    // No `\nAction i: ` at all, or two of them: the ReAct code's `ohh...` bad call.
    for reply in [" I need to search Eric Church.\n", " t\nAction 1: Search[a]\nAction 1: Search[b]"] {
        let p = parse_step_reference(reply, 1);
        assert!(p.ask_action, "{reply:?}");
        assert_eq!(p.action, None);
        assert_eq!(p.thought.as_deref(), Some(reply.trim().lines().next().unwrap()));
    }
    // `reply.strip().split("\nAction 1: ")` gives one part for a reply that starts with the
    // marker (no newline before it) and for an empty action (the strip takes the space):
    // bad calls too. Only one split reads as a step.
    for reply in
        ["Action 1: Search[a]", " \nAction 1: Search[a]", "t\nAction 1:", "t\nAction 1: \n", "t\nAction 1:Search[a]"]
    {
        let p = parse_step_reference(reply, 1);
        assert!(p.ask_action && p.action.is_none(), "{reply:?}");
        assert_eq!(p.thought.as_deref(), Some(reply.trim().split('\n').next().unwrap()), "{reply:?}");
    }
    assert!(!parse_step_reference(" t\nAction 1: Search[a]", 1).ask_action);
    // Two parts, even when the first is itself a labelled action.
    let p = parse_step_reference("Action 1: a\nAction 1: Search[b]", 1);
    assert_eq!((p.thought.as_deref(), p.action), (Some("Action 1: a"), act("search", "b")));
    // The tolerant reader never asks again.
    assert!(!parse_step(" I need to search Eric Church.\n", 1).ask_action);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any reply reads as an action or a problem, never a panic (markdown, brackets and
    /// unicode included); an action's argument read from `calculate[...]` keeps its `**`.
    #[test]
    fn arbitrary_replies_never_panic(
        reply in proptest::prop_oneof![
            proptest::prelude::any::<String>(),
            "((\\*\\*)?(Thought|Action|Observation) ?[0-9]?:(\\*\\*)? ?`?[a-zA-Z]{0,8}[\\[(]?[a-z0-9 *^`\"]{0,20}[\\])]?`?\n?){0,6}",
        ],
        step in 1usize..5,
    ) {
        let p = parse_step(&reply, step);
        proptest::prop_assert!(p.action.is_some() || p.problem.is_some());
        let _ = parse_step_reference(&reply, step);
    }

    #[test]
    fn a_power_in_an_action_is_kept(a in 0u32..100, b in 0u32..100) {
        let p = parse_step(&format!("Thought 1: x\n**Action 1:** `calculate[{a}**{b}]`"), 1);
        proptest::prop_assert_eq!(p.action, act("calculate", &format!("{a}**{b}")));
    }
}

/// Replies in the shapes chat models write (hand-written from instruct models' habits):
/// a leading pleasantry, bold labels, fences, a JSON-ish action. Each is read where it is
/// unambiguous, and one that still has no action gets a reminder naming the tools given.
#[test]
fn chat_shaped_replies_are_read_and_the_reminder_names_the_tasks_tools() {
    let cases = [
        (
            "Sure! Here is my next step.\n**Thought 1:** I should look her up.\n**Action 1:** Search[Ilse Varga]",
            "search",
            "Ilse Varga",
        ),
        ("```\nThought 2: Compute it.\nAction 2: calc[17 * 23]\n```", "calc", "17 * 23"),
        ("I will search.\n{\"action\": \"Search\", \"input\": \"Marrowick\"}", "search", "Marrowick"),
        (
            "Thought: done.\n```json\n{\"tool\": \"finish\", \"args\": {\"answer\": \"Tessel River\"}}\n```",
            "finish",
            "Tessel River",
        ),
        ("{\"action\": \"calc\", \"action_input\": 42}", "calc", "42"),
    ];
    for (reply, tool, arg) in cases {
        let read = parse_step_naming(reply, 1, "calc[expression] or finish[answer]");
        assert_eq!(read.action, act(tool, arg), "{reply:?}");
        assert_eq!(read.problem, None, "{reply:?}");
    }
    // Not one tool and one text: not read as an action.
    for reply in
        ["{\"action\": \"Search\"}", "{\"action\": [1, 2], \"input\": \"x\"}", "{\"name\": \"a b\", \"input\": \"x\"}"]
    {
        assert_eq!(parse_step_naming(reply, 1, "x").action, None, "{reply:?}");
    }
    let read = parse_step_naming("I think the answer is 7.", 3, "calc[expression] or finish[answer]");
    let problem = read.problem.unwrap();
    assert!(problem.contains("Action 3: calc[expression] or finish[answer]"), "{problem}");
    assert!(!problem.contains("Search"), "{problem}");
    assert!(parse_step("no action", 1).problem.unwrap().contains(QA_TOOLS));
}

/// Issue 47: a reply that only echoes the reminder's placeholder is no action; an action
/// after a leading `Observation N:` line (the model restating the last one) is read; the
/// labels a model wrote twice are not kept in the thought; arithmetic's `**` stays.
#[test]
fn placeholders_leading_observations_repeated_labels_and_arithmetic_stars_are_read_as_meant() {
    let tools = "Search[entity], Lookup[keyword] or Finish[answer]";
    for echo in [
        "Thought 3: I know it.\nAction 3: finish[...]",
        "Action 3: Finish[…]",
        "Thought 3: done\nAction 3: Finish[answer]",
        "Action 3: Search[<entity>]",
        "Finish[...]",
        "{\"action\": \"finish\", \"input\": \"...\"}",
    ] {
        let read = parse_step_naming(echo, 3, tools);
        assert_eq!(read.action, None, "{echo:?}");
        assert!(read.problem.is_some(), "{echo:?}");
    }
    let read = parse_step_naming("Action 3: finish[...]", 3, tools);
    assert!(read.problem.unwrap().contains("only repeats the format's placeholder"));
    // A real argument that merely contains dots is an answer.
    assert_eq!(parse_step_naming("Action 3: Finish[St. Louis...]", 3, tools).action, act("finish", "St. Louis..."));

    let read = parse_step("Observation 1: Grey Sea is a sea.\nAction 2: Finish[Grey Sea]", 2);
    assert_eq!((read.action, read.problem), (act("finish", "Grey Sea"), None));
    let read = parse_step("Observation 1: a\nmore of it\nThought 2: so it is.\nAction 2: Finish[a]", 2);
    assert_eq!((read.thought.as_deref(), read.action), (Some("so it is."), act("finish", "a")));
    // An observation after the step's own text still ends the step.
    let read = parse_step("Thought 2: look.\nAction 2: Search[x]\nObservation 2: made up\nAction 3: Search[y]", 2);
    assert_eq!((read.action, read.extra_actions.len()), (act("search", "x"), 0));

    let read = parse_step("Thought 6: Thought 6: Thought 5: the sea is grey.\nAction 6: Finish[Grey Sea]", 6);
    assert_eq!(read.thought.as_deref(), Some("the sea is grey."));
    let read = parse_step("Thought 2: 7 ** 1 = 7, and **this** is bold.\nAction 2: calculate[7 ** 1]", 2);
    assert_eq!(read.thought.as_deref(), Some("7 ** 1 = 7, and this is bold."));
    assert_eq!(read.action, act("calculate", "7 ** 1"));
    let read = parse_step("**Thought 1:** 2**3 is 8.\n**Action 1:** Finish[8]", 1);
    assert_eq!((read.thought.as_deref(), read.action), (Some("2**3 is 8."), act("finish", "8")));
}
