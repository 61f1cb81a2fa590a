use std::path::Path;
use std::sync::Arc;

use futures::executor::block_on;
use serde_json::json;

use super::corpus::{qa_demo, qa_demo_questions, Corpus, Document};
use super::text::split_sentences;
use super::*;

fn demo_registry() -> ToolRegistry {
    ToolRegistry::react(Arc::new(qa_demo())).with(CalculateTool)
}

fn run(registry: &ToolRegistry, state: &mut ToolState, action: &str) -> Observation {
    let call = ToolCall::parse(action).expect("a well-formed action");
    block_on(registry.call(&call, state))
}

#[test]
fn specs_become_openai_and_anthropic_tool_definitions() {
    let spec = SearchTool::new(Arc::new(qa_demo())).spec();
    let openai = spec.to_openai();
    assert_eq!(openai["type"], "function");
    assert_eq!(openai["function"]["name"], "search");
    assert!(openai["function"]["description"].as_str().is_some_and(|d| d.contains("similar")));
    assert_eq!(openai["function"]["parameters"]["type"], "object");
    assert_eq!(openai["function"]["parameters"]["properties"]["entity"]["type"], "string");
    assert_eq!(openai["function"]["parameters"]["required"], json!(["entity"]));

    let anthropic = spec.to_anthropic();
    assert_eq!(anthropic["name"], "search");
    assert_eq!(anthropic["description"], openai["function"]["description"]);
    assert_eq!(anthropic["input_schema"], openai["function"]["parameters"]);
    assert!(anthropic.get("type").is_none());

    let registry = demo_registry();
    assert_eq!(registry.names(), ["search", "lookup", "finish", "calculate"]);
    assert_eq!(registry.openai_tools().as_array().map(Vec::len), Some(4));
    assert_eq!(registry.anthropic_tools()[3]["input_schema"]["required"], json!(["expression"]));
}

#[test]
fn prompt_lines_list_the_tools_in_order() {
    let lines = demo_registry().prompt_lines();
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("(1) search[entity]: "), "{}", lines[0]);
    assert!(lines[1].starts_with("(2) lookup[keyword]: "), "{}", lines[1]);
    assert!(lines[2].starts_with("(3) finish[answer]: "), "{}", lines[2]);
    assert!(lines[3].starts_with("(4) calculate[expression]: "), "{}", lines[3]);
}

#[test]
fn a_native_tool_use_input_becomes_a_call() {
    let spec = FinishTool.spec();
    assert_eq!(spec.call_from_input(&json!({"answer": "Port Celest"})), ToolCall::new("finish", "Port Celest"));
    assert_eq!(spec.call_from_input(&json!("Eskerby")), ToolCall::new("finish", "Eskerby"));
    assert_eq!(spec.call_from_input(&json!({"answer": 24})), ToolCall::new("finish", "24"));
    assert_eq!(spec.call_from_input(&json!({"other": "x"})), ToolCall::new("finish", r#"{"other":"x"}"#));
}

#[test]
fn actions_parse_as_the_react_paper_writes_them() {
    assert_eq!(ToolCall::parse("Search[Colorado orogeny]"), Ok(ToolCall::new("Search", "Colorado orogeny")));
    assert_eq!(ToolCall::parse("Action 2: Lookup[eastern sector]"), Ok(ToolCall::new("Lookup", "eastern sector")));
    assert_eq!(ToolCall::parse("Action: finish[1,800 to 7,000 ft]"), Ok(ToolCall::new("finish", "1,800 to 7,000 ft")));
    assert_eq!(ToolCall::parse("calculate[(1 + 2) * [3]]"), Ok(ToolCall::new("calculate", "(1 + 2) * [3]")));
    assert_eq!(ToolCall::parse("search[Sable Bridge"), Ok(ToolCall::new("search", "Sable Bridge")));
    assert!(ToolCall::parse("I think I should search").is_err_and(|e| e.contains("tool[argument]")));
    assert!(ToolCall::parse("[x]").is_err());
    assert_eq!(ToolCall::new("search", "X").to_string(), "search[X]");
}

#[test]
fn calculate_is_exact() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    let half = run(&registry, &mut state, "calculate[1/3 + 1/6]");
    assert_eq!((half.text.as_str(), half.ok), ("0.5", true));
    assert_eq!(run(&registry, &mut state, "calculate[(3 + 5) * 2 / 4]").text, "4");
    assert_eq!(run(&registry, &mut state, "calculate[1/3 + 1/3]").text, "2/3 (≈ 0.666667)");
    assert_eq!(run(&registry, &mut state, "calculate[0.1 + 0.2]").text, "0.3");
    assert_eq!(run(&registry, &mut state, "Calculate[-7 * 6]").text, "-42");
    assert_eq!(state, ToolState::default(), "calculate keeps no state");
}

#[test]
fn calculate_errors_are_explained() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    for (expr, why) in [("1 / 0", "divides by zero"), ("2 +", "missing"), ("(1 + 2", "parentheses"), ("", "nothing")] {
        let obs = run(&registry, &mut state, &format!("calculate[{expr}]"));
        assert!(!obs.ok, "{expr}");
        assert!(obs.text.contains(why), "{expr}: {}", obs.text);
        assert!(obs.text.contains("e.g. calculate["), "{expr}: {}", obs.text);
    }
    assert!(!run(&registry, &mut state, "calculate[two plus two]").ok);
}

#[test]
fn calculate_has_bounded_powers_and_never_misreads_hexadecimal() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    assert_eq!(run(&registry, &mut state, "calculate[2**3]").text, "8");
    assert_eq!(run(&registry, &mut state, "calculate[2 ^ 10 / 4]").text, "256");
    assert_eq!(run(&registry, &mut state, "calculate[0x10]").text, "16");
    let started = std::time::Instant::now();
    let tower = run(&registry, &mut state, "calculate[9**9**9**9]");
    assert!(!tower.ok && tower.text.contains("too large"), "{}", tower.text);
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "a power tower is refused at once");
    let bad_hex = run(&registry, &mut state, "calculate[0xG1]");
    assert!(!bad_hex.ok && bad_hex.text.contains("hexadecimal"), "{}", bad_hex.text);
}

#[test]
fn an_unknown_tool_lists_the_valid_ones() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    let obs = run(&registry, &mut state, "browse[https://example.com]");
    assert!(!obs.ok);
    assert_eq!(
        obs.text,
        "There is no tool named 'browse'. Valid tools: search[entity], lookup[keyword], finish[answer], calculate[expression]."
    );
    assert!(!registry.is_finish(&ToolCall::new("browse", "")));
    let empty = block_on(ToolRegistry::new().call(&ToolCall::new("search", "x"), &mut state));
    assert!(!empty.ok && empty.text.contains("no tool named"), "{}", empty.text);
}

#[test]
fn finish_is_detected_and_ends_the_episode() {
    let registry = demo_registry();
    assert!(registry.is_finish(&ToolCall::new("Finish", "Port Celest")));
    assert!(registry.is_finish(&ToolCall::new(" finish ", "")));
    assert!(!registry.is_finish(&ToolCall::new("search", "Finish")));
    let mut state = ToolState::default();
    let obs = run(&registry, &mut state, "Finish[Port Celest]");
    assert_eq!((obs.text.as_str(), obs.ok), ("Episode finished", true));
}

#[test]
fn registering_a_tool_with_a_known_name_replaces_it() {
    struct Shout;
    impl Tool for Shout {
        fn spec(&self) -> ToolSpec {
            ToolSpec::single("CALCULATE", "shouts", "text", "what to shout")
        }
        fn call<'a>(&'a self, arg: &'a str, _: &'a mut ToolState) -> BoxFuture<'a, Observation> {
            Box::pin(async move { Observation::ok(arg.to_uppercase()) })
        }
    }
    let registry = demo_registry().with(Shout);
    assert_eq!(registry.names(), ["search", "lookup", "finish", "CALCULATE"]);
    assert_eq!(run(&registry, &mut ToolState::default(), "calculate[1+1]").text, "1+1");
}

#[test]
fn search_shows_the_first_five_sentences_of_an_exact_title() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    let obs = run(&registry, &mut state, "Search[Marrowick]");
    assert!(obs.ok);
    assert!(obs.text.starts_with("Marrowick is the second-largest city of Veloria"), "{}", obs.text);
    assert!(obs.text.ends_with("grain and timber."), "the fifth sentence ends it: {}", obs.text);
    assert!(!obs.text.contains("northern quarter"), "the sixth sentence is not shown");
    let page = state.page.as_ref().expect("the search opened the page");
    assert_eq!((page.title.as_str(), page.sentences.len()), ("Marrowick", 6));
}

#[test]
fn search_ignores_case_underscores_and_punctuation_in_titles() {
    let registry = demo_registry();
    for entity in ["sable_bridge", "SABLE BRIDGE", "Sable  Bridge.", "the glass-orchard"] {
        let mut state = ToolState::default();
        let obs = run(&registry, &mut state, &format!("search[{entity}]"));
        assert!(obs.ok && !obs.text.starts_with("Could not find"), "{entity}: {}", obs.text);
        assert!(state.page.is_some(), "{entity}");
    }
}

#[test]
fn a_missing_page_lists_similar_titles() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    let obs = run(&registry, &mut state, "search[Lund]");
    assert_eq!(obs.text, "Could not find Lund. Similar: ['Comet Lund-Hara', 'Petra Lund'].");
    assert!(obs.ok, "a search that finds nothing still worked");
    assert!(state.page.is_none());

    let obs = run(&registry, &mut state, "search[Marrowick University]");
    assert!(
        obs.text.starts_with("Could not find Marrowick University. Similar: ['University of Marrowick', "),
        "{}",
        obs.text
    );
    let listed = obs.text.matches("', '").count() + 1;
    assert!(listed <= 5, "{}", obs.text);

    let obs = run(&registry, &mut state, "search[Zyxxq]");
    assert_eq!(obs.text, "Could not find Zyxxq. Similar: [].");
}

#[test]
fn a_failed_search_keeps_the_current_page_as_in_the_paper() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    run(&registry, &mut state, "search[Eskerby]");
    run(&registry, &mut state, "search[Nowhere Town]");
    assert_eq!(state.page.as_ref().map(|p| p.title.as_str()), Some("Eskerby"));
    assert!(run(&registry, &mut state, "lookup[slate]").text.starts_with("(Result 1 / 1) Eskerby grew rich"));
}

#[test]
fn lookup_advances_through_results_then_says_no_more() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    run(&registry, &mut state, "search[Marrowick]");
    let first = run(&registry, &mut state, "lookup[river]");
    assert_eq!(
        first.text,
        "(Result 1 / 3) The city lies on both banks of the Tessel River, about twenty kilometres from the coast."
    );
    let second = run(&registry, &mut state, "Lookup[river]");
    assert!(second.text.starts_with("(Result 2 / 3) Its old town grew around a river crossing"), "{}", second.text);
    let third = run(&registry, &mut state, "lookup[river]");
    assert!(third.text.starts_with("(Result 3 / 3) The river port"), "{}", third.text);
    assert_eq!(run(&registry, &mut state, "lookup[river]").text, "No more results.");
    assert_eq!(run(&registry, &mut state, "lookup[river]").text, "No more results.");
    assert_eq!(state.lookup, Some(LookupCursor { keyword: "river".into(), shown: 3 }));

    // Another keyword starts again; so does a new search.
    assert!(run(&registry, &mut state, "lookup[RIVER PORT]").text.starts_with("(Result 1 / 1) The river port"));
    assert!(run(&registry, &mut state, "lookup[river]").text.starts_with("(Result 1 / 3)"));
    run(&registry, &mut state, "search[Tessel River]");
    assert_eq!(state.lookup, None);
    assert!(run(&registry, &mut state, "lookup[river]")
        .text
        .starts_with("(Result 1 / 2) The Tessel River is the longest"));
    assert_eq!(run(&registry, &mut state, "lookup[volcano]").text, "No more results.");
}

#[test]
fn lookup_before_any_search_explains_what_to_do() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    let obs = run(&registry, &mut state, "lookup[river]");
    assert!(!obs.ok);
    assert!(obs.text.contains("search[entity]"), "{}", obs.text);
    assert_eq!(state, ToolState::default());
    run(&registry, &mut state, "search[Eskerby]");
    assert!(!run(&registry, &mut state, "lookup[ ]").ok);
}

#[test]
fn tool_state_and_observations_round_trip_through_json() {
    let registry = demo_registry();
    let mut state = ToolState::default();
    run(&registry, &mut state, "search[Wend River]");
    let obs = run(&registry, &mut state, "lookup[Eskerby]");
    let saved = serde_json::to_string(&state).expect("state serialises");
    let mut restored: ToolState = serde_json::from_str(&saved).expect("state loads");
    assert_eq!(restored, state);
    // A fork continues from the restored state exactly as the original would.
    assert_eq!(run(&registry, &mut restored, "lookup[Eskerby]"), run(&registry, &mut state, "lookup[Eskerby]"));
    let obs_json = serde_json::to_value(&obs).expect("observation serialises");
    assert_eq!(obs_json["ok"], true);
    assert!(obs_json["latency_ms"].is_u64());
    assert_eq!(serde_json::from_value::<Observation>(obs_json).ok(), Some(obs));
}

#[test]
fn a_backend_failure_is_an_observation() {
    struct Down;
    impl KnowledgeBackend for Down {
        fn name(&self) -> &str {
            "down"
        }
        fn search<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<SearchOutcome, KnowledgeError>> {
            Box::pin(async { Err(KnowledgeError::Timeout { source_name: "wikipedia".into(), seconds: 2.0 }) })
        }
    }
    let registry = ToolRegistry::react(Arc::new(Down));
    let mut state = ToolState::default();
    let obs = run(&registry, &mut state, "search[Anything]");
    assert!(!obs.ok);
    assert_eq!(obs.text, "Search failed: wikipedia did not answer within 2 s. Try again or search for something else.");
    assert!(!run(&registry, &mut state, "search[]").ok);
}

#[test]
fn sentences_split_without_breaking_abbreviations() {
    let text = "Dr. Aldo Saren moved to the U.S. in 1910. He met J. R. Fenwick at St. Ives, e.g. at the harbour. \
                It cost 3.5 marks! Was it worth it? \"Yes,\" he said. The end";
    assert_eq!(
        split_sentences(text),
        [
            "Dr. Aldo Saren moved to the U.S. in 1910.",
            "He met J. R. Fenwick at St. Ives, e.g. at the harbour.",
            "It cost 3.5 marks!",
            "Was it worth it?",
            "\"Yes,\" he said.",
            "The end",
        ]
    );
    let wiki =
        "Intro sentence one. Intro two.\n\n== History ==\nFounded in 1903.\n=== Later ===\nClosed (in 1990.) Reopened.";
    assert_eq!(
        split_sentences(wiki),
        ["Intro sentence one.", "Intro two.", "Founded in 1903.", "Closed (in 1990.)", "Reopened."]
    );
}

#[test]
fn corpus_loading_warns_about_bad_files_and_lines_and_keeps_the_rest() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).expect("write a test file");
    write("a_heading.md", "# Blue Lake\n\nBlue Lake is cold. It is deep.\n");
    write("Green_Hill.txt", "Green Hill is a hill. Sheep graze on it.");
    write("empty.md", "# Empty Page\n\n");
    write(
        "more.jsonl",
        "{\"title\": \"Red Rock\", \"text\": \"Red Rock is red. It is a rock.\"}\n\
         {not json\n\
         \n\
         {\"text\": \"no title\"}\n\
         {\"title\": \"No Text\"}\n\
         {\"title\": \"blue_lake\", \"text\": \"A duplicate.\"}\n",
    );
    write("questions.jsonl", "{\"question\": \"q\", \"answer\": \"a\", \"hops\": [], \"keyword\": \"k\"}\n");
    write("picture.png", "not text");
    std::fs::write(dir.path().join("latin1.txt"), [0xff, 0xfe, 0x41]).expect("write a test file");

    let corpus = Corpus::load_dir(dir.path()).expect("the folder loads");
    // Files load in byte order of their names (capitals first).
    assert_eq!(corpus.titles(), ["Green Hill", "Blue Lake", "Red Rock"]);
    assert_eq!(corpus.page("Green Hill").map(|p| p.sentences.len()), Some(2));
    let w = &corpus.warnings;
    assert_eq!(w.len(), 6, "{w:#?}");
    assert!(w[0].contains("empty.md") && w[0].contains("no text"), "{}", w[0]);
    assert!(w[1].contains("latin1.txt") && w[1].contains("cannot read"), "{}", w[1]);
    assert!(w[2].contains("more.jsonl:2:") && w[2].contains("not valid JSON"), "{}", w[2]);
    assert!(w[3].contains("more.jsonl:4:") && w[3].contains("\"title\""), "{}", w[3]);
    assert!(w[4].contains("more.jsonl:5:") && w[4].contains("\"text\""), "{}", w[4]);
    assert!(w[5].contains("more.jsonl:6:") && w[5].contains("Blue Lake"), "{}", w[5]);

    let missing = Corpus::load_dir(&dir.path().join("nope"));
    assert!(missing.is_err_and(|e| e.to_string().contains("nope")));

    let built = Corpus::from_documents([Document { title: "X".into(), text: "One. Two.".into() }]);
    assert_eq!(built.len(), 1);
}

fn qa_demo_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/corpus/qa-demo")
}

#[test]
fn the_compiled_in_qa_demo_matches_its_folder() {
    let from_disk = Corpus::load_dir(&qa_demo_dir()).expect("assets/corpus/qa-demo loads");
    assert!(from_disk.warnings.is_empty(), "{:#?}", from_disk.warnings);
    let built_in = qa_demo();
    assert!(built_in.warnings.is_empty(), "{:#?}", built_in.warnings);
    let mut a = from_disk.titles();
    let mut b = built_in.titles();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "a file was added to or removed from the folder: update QA_DEMO_FILES");
    assert!((28..=35).contains(&built_in.len()), "{}", built_in.len());
    for title in built_in.titles() {
        let n = built_in.page(title).map_or(0, |p| p.sentences.len());
        assert!((3..=8).contains(&n), "{title} has {n} sentences");
    }
}

#[test]
fn every_qa_demo_question_is_answered_by_its_two_hops() {
    let questions = qa_demo_questions().expect("questions.jsonl parses");
    assert!((12..=15).contains(&questions.len()), "{}", questions.len());
    let corpus = qa_demo();
    let registry = demo_registry();
    for q in &questions {
        assert_eq!(q.hops.len(), 2, "{}", q.question);
        let [first, second] = [&q.hops[0], &q.hops[1]];
        let hop1 = corpus.page(first).unwrap_or_else(|| panic!("no page '{first}' for: {}", q.question));
        assert!(corpus.page(second).is_some(), "no page '{second}' for: {}", q.question);
        // The bridge is named on the first page; the answer is not there.
        assert!(hop1.sentences.iter().any(|s| s.contains(second.trim_start_matches("The "))), "{}", q.question);
        assert!(!hop1.sentences.iter().any(|s| s.contains(&q.answer)), "hop 1 gives away: {}", q.question);

        let mut state = ToolState::default();
        assert!(run(&registry, &mut state, &format!("search[{first}]")).ok);
        assert!(run(&registry, &mut state, &format!("search[{second}]")).ok);
        let obs = run(&registry, &mut state, &format!("lookup[{}]", q.keyword));
        assert!(obs.text.starts_with("(Result 1 / "), "{}: {}", q.question, obs.text);
        assert!(obs.text.contains(&q.answer), "{}: {}", q.question, obs.text);
        assert!(block_on(registry.call(&ToolCall::new("finish", &q.answer), &mut state)).ok);
    }
}

#[test]
fn wikipedia_replies_parse_in_both_format_versions() {
    use super::wikipedia::{parse_extract, parse_opensearch};
    let v2 = json!({"query": {"pages": [{"pageid": 1, "title": "A", "extract": "One. Two."}]}});
    let page = parse_extract(&v2).ok().flatten().expect("a page");
    assert_eq!((page.title.as_str(), page.sentences.len()), ("A", 2));
    assert_eq!(parse_extract(&json!({"query": {"pages": [{"title": "B", "missing": true}]}})).ok(), Some(None));
    assert_eq!(parse_extract(&json!({"query": {"pages": {"-1": {"title": "<", "invalid": ""}}}})).ok(), Some(None));
    assert_eq!(parse_extract(&json!({"query": {"pages": {"5": {"title": "C", "extract": ""}}}})).ok(), Some(None));
    assert!(parse_extract(&json!({"batchcomplete": ""})).is_err());
    assert_eq!(
        parse_opensearch(&json!(["q", ["X", 3, "Y"], [], []])).ok(),
        Some(vec!["X".to_string(), "Y".to_string()])
    );
    assert!(parse_opensearch(&json!({"q": 1})).is_err());
}

#[cfg(unix)]
#[test]
fn corpus_loading_reads_only_regular_files_inside_the_folder() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().expect("a temporary folder");
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "# Secret\n\nThe password is hunter2.\n").expect("write a test file");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path().join("corpus");
    std::fs::create_dir(&root).expect("a corpus folder");
    let write = |name: &str, text: &str| std::fs::write(root.join(name), text).expect("write a test file");
    write("alpha.md", "# Alpha\n\nAlpha is the first letter.\n");
    // A link to a document in the folder is fine; links leaving it are not.
    symlink(root.join("alpha.md"), root.join("alias.md")).expect("a symlink");
    symlink("/proc/self/environ", root.join("environ.txt")).expect("a symlink");
    symlink("/etc/passwd", root.join("passwd.txt")).expect("a symlink");
    symlink(&secret, root.join("up.md")).expect("a symlink");
    symlink("../../../../../../../../etc/hostname", root.join("dots.txt")).expect("a symlink");
    symlink("/dev/zero", root.join("zero.txt")).expect("a symlink");
    symlink(root.join("missing.md"), root.join("dangling.md")).expect("a symlink");
    // A FIFO would block a reader forever; it must not even be opened.
    let fifo = root.join("pipe.txt");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    // Over the size cap (sparse, so the test writes nothing).
    let big = std::fs::File::create(root.join("huge.txt")).expect("a big file");
    big.set_len(super::corpus::MAX_DOCUMENT_BYTES + 1).expect("a sparse file");

    let corpus = Corpus::load_dir(&root).expect("the folder loads");
    // The alias duplicates Alpha (kept once); nothing else is a document.
    assert_eq!(corpus.titles(), ["Alpha"]);
    let w = corpus.warnings.join("\n");
    for name in ["environ.txt", "passwd.txt", "up.md", "dots.txt", "zero.txt", "dangling.md", "pipe.txt", "huge.txt"] {
        assert!(w.lines().any(|l| l.contains(name) && l.ends_with("skipped")), "{name} is named in a skip: {w}");
    }
    assert!(w.contains("outside the corpus folder"), "{w}");
    assert!(w.contains("not a regular file"), "{w}");
    assert!(w.contains("larger than 16 MiB"), "{w}");
    assert!(!w.contains("hunter2") && !w.contains("root:"), "no content of an outside file is shown: {w}");
    for (_, text) in corpus.titles().iter().map(|t| (t, corpus.page(t))) {
        let text = text.map(|p| p.sentences.join(" ")).unwrap_or_default();
        assert!(!text.contains("hunter2") && !text.contains("PATH="));
    }
    assert!(matches!(corpus.find("environ"), super::SearchOutcome::NotFound { .. }));

    // The folder itself may be reached through a symlink: its files are inside it.
    let via = dir.path().join("via");
    symlink(&root, &via).expect("a symlink");
    assert_eq!(Corpus::load_dir(&via).expect("loads through a link").titles(), ["Alpha"]);
}

/// Arbitrary text never panics the tool argument parsers: the action reader, native
/// tool-call inputs, the calculator, search and lookup (on the qa-demo corpus, after a
/// search opened a page). Few cases, so it runs briefly in every `cargo test`.
mod arbitrary_arguments {
    use proptest::prelude::*;

    use super::*;

    /// Strings that look like what models write: brackets, operators, digits, markdown,
    /// unicode (bidi controls, combining marks) and arbitrary characters.
    fn model_text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[a-zA-Z0-9 \\[\\]()*^/+\\-.,:`\"'#_=xX\u{202e}\u{301}\u{d7}\u{f7}\u{2212}]{0,80}",
            "(calculate|search|lookup|finish|Action 1:) ?[\\[(][-+*/^x0-9 .()]{0,40}[\\])]?",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn the_action_reader_never_panics(text in model_text()) {
            if let Ok(call) = ToolCall::parse(&text) {
                prop_assert!(!call.name.is_empty());
                let _ = call.react_text();
            }
        }

        #[test]
        fn native_inputs_never_panic(arg in model_text(), key in "[a-z]{0,8}") {
            let spec = SearchTool::new(Arc::new(qa_demo())).spec();
            for input in [json!(arg), json!({ key.clone(): arg.clone() }), json!({"entity": [arg.clone()]}), json!(null)] {
                let call = spec.call_from_input(&input);
                prop_assert_eq!(call.name.as_str(), "search");
            }
        }

        #[test]
        fn the_calculator_never_panics(expr in model_text()) {
            match calculate::calculate(&expr) {
                Ok(value) => prop_assert!(!value.is_empty()),
                Err(why) => prop_assert!(why.contains("calculate")),
            }
        }

        #[test]
        fn search_and_lookup_never_panic(entity in model_text(), keyword in model_text()) {
            let registry = demo_registry();
            let mut state = ToolState::default();
            let _ = block_on(registry.call(&ToolCall::new("search", entity.clone()), &mut state));
            let _ = block_on(registry.call(&ToolCall::new("lookup", keyword.clone()), &mut state));
            // Lookup on a page that is surely open, twice (the cursor advances).
            let mut opened = ToolState::default();
            let found = block_on(registry.call(&ToolCall::new("search", "Sable Bridge"), &mut opened));
            prop_assert!(found.ok);
            for _ in 0..2 {
                let _ = block_on(registry.call(&ToolCall::new("lookup", keyword.clone()), &mut opened));
            }
            let _ = text::split_sentences(&entity);
            let _ = text::title_key(&keyword);
        }
    }
}

#[test]
fn mcp_tools_join_a_registry_with_their_record_and_read_as_their_json_object() {
    let def = mcp::McpToolDef {
        server: "calc".into(),
        name: "add".into(),
        description: "Add two numbers".into(),
        schema: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
    };
    let record = mcp::McpRecord { servers: vec![], tools: vec![def] };
    let registry = demo_registry().with_mcp(&mcp::McpTools::offline(&record));
    assert_eq!(registry.names(), ["search", "lookup", "finish", "calculate", "add"]);
    assert_eq!(registry.mcp(), &record, "the record goes with the tools");
    assert!(demo_registry().mcp().is_empty());
    assert!(registry.prompt_lines().ends_with(r#"(5) add[{"a": number, "b": number}]: Add two numbers"#));
    assert!(registry.call_examples().ends_with(r#"calculate[expression] or add[{"a": number, "b": number}]"#));
    // Without its server, a call says so.
    let said = run(&registry, &mut ToolState::default(), r#"add[{"a": 1, "b": 2}]"#);
    assert!(!said.ok && said.text.contains("the MCP server calc is not running"), "{}", said.text);
}

/// Any name an MCP server gives its tools (`get-sum`, `files.read`) is callable: as a
/// text action, and natively, where the APIs' names allow no `.` (sent as `files_read`,
/// and a call by that name comes back to the tool).
#[test]
fn mcp_tool_names_with_hyphens_and_dots_are_callable_as_text_and_natively() {
    use crate::protocol::ToolCallOut;
    let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}});
    let defs: Vec<mcp::McpToolDef> = ["get-sum", "files.read"]
        .iter()
        .map(|n| mcp::McpToolDef {
            server: "s".into(),
            name: n.to_string(),
            description: "d".into(),
            schema: schema.clone(),
        })
        .collect();
    let record = mcp::McpRecord { servers: vec![], tools: defs };
    let registry = demo_registry().with_mcp(&mcp::McpTools::offline(&record));
    for (reply, name) in [
        ("Thought 1: add them.\nAction 1: get-sum[{\"a\": 1, \"b\": 2}]", "get-sum"),
        ("Thought 1: read it.\nAction 1: files.read[{\"a\": 1, \"b\": 2}]", "files.read"),
        ("Thought 1: add them.\nAction 1: Get-Sum({\"a\": 1, \"b\": 2})", "get-sum"),
    ] {
        let parsed = crate::tasks::react_text::parse_step(reply, 1);
        let action = parsed.action.unwrap_or_else(|| panic!("{reply}: {:?}", parsed.problem));
        assert_eq!(action.name, name, "{reply}");
        let said = run(&registry, &mut ToolState::default(), &format!("{}[{}]", action.name, action.arg));
        assert!(said.text.contains("the MCP server s is not running"), "{name} reached its tool: {}", said.text);
    }
    // Prose with a hyphen before a colon is still not a call.
    assert!(crate::tasks::react_text::parse_step("Thought 1: x\nAction 1: Re-check: the sum", 1).action.is_none());
    // Natively: `.` is not allowed in the APIs' names, so it is sent as `_` and comes back.
    let defs = registry.tool_defs();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert!(names.contains(&"get-sum") && names.contains(&"files_read"), "{names:?}");
    assert_eq!(registry.openai_tools()[5]["function"]["name"], "files_read");
    let call = ToolCallOut { id: None, name: "files_read".into(), arguments: json!({"a": 1, "b": 2}) };
    let request = call.to_request(&defs).unwrap();
    let said = run(&registry, &mut ToolState::default(), &format!("{}[{}]", request.name, request.arg));
    assert!(said.text.contains("the MCP server s is not running"), "files_read reached files.read: {}", said.text);
    assert_eq!(crate::tools::native_name("files.read"), "files_read");
    assert_eq!(crate::tools::native_name("get-sum"), "get-sum");
}
