use std::fs::OpenOptions;
use std::io::Write;

use super::*;
use crate::engine::Command;
use crate::session::fidelity::Fidelity;
use crate::session::replay;

pub(super) fn header() -> Header {
    Header {
        format: FORMAT.into(),
        version: VERSION,
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: "game24".into(),
        input: "4 5 6 10".into(),
        index: Some(900),
        params: Params::new(crate::engine::methods::tot_bfs::KIND),
        provider: "sim".into(),
        model: "sim-1".into(),
        simulated: true,
        sim: None,
        price: None,
        source: None,
        parent: None,
        note: None,
        gold: None,
        actions: None,
        facets: Default::default(),
        memory: None,
        unjudged: false,
        prompt_style: Default::default(),
        context_window: None,
        task_def: None,
        provider_notes: Vec::new(),
    }
}

fn write_session(path: &Path, n: usize) {
    let mut w = SessionWriter::create(path, &header()).unwrap();
    for _ in 0..n {
        let input = Input::command(Command::Step { n: 1 });
        w.input(&input, None, &[Event::Log { text: "stepped".into() }]).unwrap();
    }
    w.end(Totals::default(), 5, None, &[]).unwrap();
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 3);
    let s = Session::load(&path).unwrap();
    assert_eq!(s.header, header());
    assert_eq!(s.inputs().count(), 3);
    assert_eq!(s.events().count(), 3);
    assert_eq!(s.end(), Some((Totals::default(), 5)));
    assert!(s.warnings.is_empty());
}

#[test]
fn torn_last_line_is_reported_with_its_line_number_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 3);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"kind\":\"input\",\"seq\":3,\"inp").unwrap();
    drop(f);
    let s = Session::load(&path).unwrap();
    assert_eq!(s.inputs().count(), 3);
    assert_eq!(s.warnings.len(), 1);
    // header + 3 inputs + 3 events + end = 8 lines; the torn one is line 9.
    assert!(s.warnings[0].contains("s.jsonl:9: torn last line"), "{}", s.warnings[0]);
}

#[test]
fn malformed_middle_line_stops_there_and_keeps_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 3);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4] = "{not json";
    std::fs::write(&path, lines.join("\n")).unwrap();
    let s = Session::load(&path).unwrap();
    assert_eq!(s.records.len(), 3, "lines 2-4 kept");
    assert!(s.warnings[0].contains(":5: malformed line"), "{}", s.warnings[0]);
}

#[test]
fn not_a_session_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    let err = Session::load(&path).unwrap_err().to_string();
    assert!(err.contains("x.jsonl:1") && err.contains("header"), "{err}");
    std::fs::write(&path, "").unwrap();
    assert!(Session::load(&path).unwrap_err().to_string().contains("empty"));
    let missing = dir.path().join("missing.jsonl");
    assert!(Session::load(&missing).unwrap_err().to_string().contains("missing.jsonl"));
    let mut h = header();
    h.version = VERSION + 1;
    // (A writer writes the current version whatever the header it is given says.)
    std::fs::write(&path, serde_json::to_string(&Record::Header(Box::new(h))).unwrap() + "\n").unwrap();
    assert!(Session::load(&path).unwrap_err().to_string().contains("newer"));
}

#[test]
fn a_header_with_parameters_out_of_range_is_an_error_naming_the_parameter() {
    let mut h = header();
    h.params = h.params.with("n_evaluate", 4_294_967_295u64);
    let text = serde_json::to_string(&Record::Header(Box::new(h))).unwrap();
    let Err(err) = Session::parse(&text, Path::new("big.jsonl")) else { panic!("loaded") };
    let message = err.to_string();
    assert!(message.contains("big.jsonl") && message.contains("n_evaluate"), "{message}");
    // The same header in range loads.
    let text = serde_json::to_string(&Record::Header(Box::new(header()))).unwrap();
    assert!(Session::parse(&text, Path::new("ok.jsonl")).is_ok());
}

#[test]
fn only_regular_files_are_read_so_a_fifo_or_a_device_cannot_hang_or_exhaust_memory() {
    let err = Session::load(Path::new("/dev/zero")).unwrap_err().to_string();
    assert!(err.contains("/dev/zero is a device") && err.contains("regular file"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = Session::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("is a directory"), "{err}");
    let fifo = dir.path().join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        // Opening a FIFO blocks until someone writes: it must not be opened at all.
        let err = Session::load(&fifo).unwrap_err().to_string();
        assert!(err.contains("pipe.jsonl is a FIFO"), "{err}");
    }
}

#[test]
fn a_line_over_the_cap_stops_reading_without_taking_it_all_in() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 2);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(&vec![b'x'; 5000]).unwrap();
    drop(f);
    let s = Session::load_limited(&path, 1000).unwrap();
    // header + 2 inputs + 2 events + end: the long line is line 7.
    assert_eq!(s.records.len(), 5);
    assert!(s.warnings[0].contains("s.jsonl:7: a line longer than 1000 bytes"), "{:?}", s.warnings);
    // No newline at all from the first byte: not a session.
    std::fs::write(&path, vec![0u8; 5000]).unwrap();
    let err = Session::load_limited(&path, 1000).unwrap_err().to_string();
    assert!(err.contains("s.jsonl:1: a line longer than 1000 bytes"), "{err}");
}

#[test]
fn a_session_without_its_end_line_is_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 2);
    assert!(Session::load(&path).unwrap().complete());
    let text = std::fs::read_to_string(&path).unwrap();
    let cut: Vec<&str> = text.lines().take(4).collect();
    std::fs::write(&path, cut.join("\n") + "\n").unwrap();
    let s = Session::load(&path).unwrap();
    assert!(!s.complete());
    assert!(s.warnings.is_empty(), "a cut at a line boundary tears no line: {:?}", s.warnings);
}

#[test]
fn parse_and_load_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    write_session(&path, 3);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = "{broken";
    let text = lines.join("\r\n");
    std::fs::write(&path, &text).unwrap();
    let loaded = Session::load(&path).unwrap();
    let parsed = Session::parse(&text, &path).unwrap();
    assert_eq!(loaded.records, parsed.records);
    assert_eq!(loaded.warnings, parsed.warnings);
    assert!(loaded.warnings[0].contains(":4: malformed line"), "{:?}", loaded.warnings);
}

/// The loader and the replay of what it loads never panic, whatever the bytes: arbitrary
/// bytes, and a recorded session cut, with bytes changed, or lines dropped, doubled or
/// swapped (what a crash, a full disk or a careless edit does to a file).
mod fuzz {
    use proptest::prelude::*;

    use super::*;

    /// A mutation of a valid session, applied to its bytes.
    #[derive(Debug, Clone)]
    enum Mutation {
        Cut(usize),
        SetByte(usize, u8),
        DropLine(usize),
        DoubleLine(usize),
        SwapLines(usize, usize),
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            any::<usize>().prop_map(Mutation::Cut),
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
            any::<usize>().prop_map(Mutation::DropLine),
            any::<usize>().prop_map(Mutation::DoubleLine),
            (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        ]
    }

    fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
        let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
        let n = lines.len();
        match *m {
            Mutation::Cut(i) => {
                bytes.truncate(i % (bytes.len() + 1));
                return;
            }
            Mutation::SetByte(i, b) => {
                if !bytes.is_empty() {
                    let at = i % bytes.len();
                    bytes[at] = b;
                }
                return;
            }
            Mutation::DropLine(i) => {
                lines.remove(i % n);
            }
            Mutation::DoubleLine(i) => {
                let line = lines[i % n].clone();
                lines.insert(i % n, line);
            }
            Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
        }
        *bytes = lines.join(&b'\n');
    }

    /// Load `bytes` as a file and as text, and replay what loads.
    fn load_and_replay(bytes: &[u8]) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fuzzed.jsonl");
        std::fs::write(&path, bytes).unwrap();
        let loaded = Session::load(&path);
        let parsed = Session::parse(&String::from_utf8_lossy(bytes), &path);
        assert_eq!(loaded.is_ok(), parsed.is_ok());
        if let Ok(session) = loaded {
            let _ = session.complete();
            let _ = session.stopped();
            if let Ok(rebuilt) = crate::session::replay::rebuild(&session, None, None) {
                let _ = rebuilt.engine.outcome();
                let _ = rebuilt.engine.tree().render_text();
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            load_and_replay(&bytes);
        }

        #[test]
        fn a_header_then_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let mut text = serde_json::to_vec(&Record::Header(Box::new(header()))).unwrap();
            text.push(b'\n');
            text.extend(bytes);
            load_and_replay(&text);
        }

        #[test]
        fn mutated_recorded_sessions_never_panic(
            demo in 0..crate::demos::DEMOS.len(),
            mutations in proptest::collection::vec(mutation(), 1..4),
        ) {
            let mut bytes = crate::demos::DEMOS[demo].text.as_bytes().to_vec();
            for m in &mutations {
                apply(&mut bytes, m);
            }
            load_and_replay(&bytes);
        }
    }
}

/// Captions are an optional record kind: written after the fact, read back in input
/// order, carried into a fork up to its point, and a session without any (every session
/// written before they existed) loads as before.
#[test]
fn captions_are_optional_records_tied_to_input_positions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut w = SessionWriter::create(&path, &header()).unwrap();
    for _ in 0..4 {
        w.input(&Input::command(Command::Step { n: 1 }), None, &[]).unwrap();
    }
    w.caption(3, None, "third").unwrap();
    w.caption(0, Some("A demo"), "first").unwrap();
    w.end(Totals::default(), 0, None, &[]).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#"{"kind":"caption","at":0,"title":"A demo","text":"first"}"#), "{text}");
    let s = Session::load(&path).unwrap();
    assert!(s.warnings.is_empty() && s.complete());
    assert_eq!(s.input_count(), 4);
    let captions = s.captions();
    assert_eq!(
        captions,
        vec![
            Caption { at: 0, title: Some("A demo".into()), text: "first".into() },
            Caption { at: 3, title: None, text: "third".into() },
        ]
    );
    // A fork at input 2 keeps the narration up to there.
    let fork = SessionWriter::fork(&dir.path().join("f.jsonl"), &s, 2).unwrap();
    drop(fork);
    let forked = Session::load(&dir.path().join("f.jsonl")).unwrap();
    assert_eq!(forked.captions().len(), 1);
    // Without captions: nothing changes.
    let plain = dir.path().join("plain.jsonl");
    write_session(&plain, 3);
    let s = Session::load(&plain).unwrap();
    assert!(s.captions().is_empty() && s.warnings.is_empty());
    assert_eq!(s.input_count(), 3);
}

/// What a headless replay of `path` must agree on, read once ([`replay::replay_file`])
/// or loaded whole and rebuilt ([`replay::rebuild`]).
fn check_replay_file_matches_rebuild(path: &Path) -> replay::Replayed {
    let session = Session::load(path).unwrap();
    let rebuilt = replay::rebuild(&session, None, None).unwrap();
    let streamed = replay::replay_file(path, None).unwrap();
    let name = path.display();
    let s = &streamed.rebuilt;
    assert_eq!(streamed.header, session.header, "{name}");
    assert_eq!(streamed.load_warnings, session.warnings, "{name}");
    assert_eq!(streamed.complete, session.complete(), "{name}");
    assert_eq!(streamed.stopped.as_deref(), session.stopped(), "{name}");
    assert_eq!(
        serde_json::to_string(s.engine.tree()).unwrap(),
        serde_json::to_string(rebuilt.engine.tree()).unwrap(),
        "{name}: tree"
    );
    assert_eq!(format!("{:?}", s.engine.core.calls), format!("{:?}", rebuilt.engine.core.calls), "{name}: calls");
    assert_eq!(s.engine.pending_calls(), rebuilt.engine.pending_calls(), "{name}");
    assert_eq!(s.engine.outcome(), rebuilt.engine.outcome(), "{name}");
    assert_eq!(s.totals, rebuilt.totals, "{name}");
    assert_eq!(s.wall_ms, rebuilt.wall_ms, "{name}");
    assert_eq!(s.fidelity, rebuilt.fidelity, "{name}");
    assert_eq!(s.reworded, rebuilt.reworded, "{name}");
    assert_eq!(s.warnings, rebuilt.warnings, "{name}");
    assert_eq!(s.inputs, rebuilt.inputs, "{name}");
    assert_eq!(s.tool_calls, rebuilt.tool_calls, "{name}");
    assert_eq!(s.pending_tools, rebuilt.pending_tools, "{name}");
    streamed
}

#[test]
fn replay_file_reads_once_and_rebuilds_what_load_and_rebuild_do() {
    let dir = tempfile::tempdir().unwrap();
    // The demo sessions (narrated, several methods), written out as files.
    for demo in crate::demos::DEMOS.iter() {
        let path = dir.path().join(demo.file);
        std::fs::write(&path, demo.text).unwrap();
        let r = check_replay_file_matches_rebuild(&path);
        assert!(r.rebuilt.fidelity.is_exact(), "{}: {}", demo.file, r.rebuilt.fidelity);
    }
    // ReAct sessions answer tool calls.
    let text = include_str!("../../tests/fixtures/react-import-sample.txt");
    let report = crate::import::react::import_text(text, "sample.txt", dir.path()).unwrap();
    let mut tool_calls = 0;
    for t in &report.trajectories {
        tool_calls += check_replay_file_matches_rebuild(Path::new(&t.session)).rebuilt.tool_calls.len();
    }
    assert!(tool_calls > 0, "the sessions answer tool calls");
    // A sampled tot-bfs run, as the scale bench records it.
    let path = dir.path().join("sampled.jsonl");
    crate::runtime::bench::record_sampled_session(&path, 400).unwrap();
    let r = check_replay_file_matches_rebuild(&path);
    assert!(r.rebuilt.engine.tree().len() > 100 && r.rebuilt.fidelity.is_exact() && r.complete);
}

#[test]
fn replay_file_drops_a_torn_last_input_and_plays_a_changed_record_as_rebuild_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sampled.jsonl");
    crate::runtime::bench::record_sampled_session(&path, 300).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Cut inside the last reply's events (the file killed mid-write): that input is torn.
    let last_input = lines.iter().rposition(|l| l.contains("\"kind\":\"input\"")).unwrap();
    let events_after = lines[last_input + 1..].iter().filter(|l| l.contains("\"kind\":\"event\"")).count();
    assert!(events_after >= 2, "the last input caused events");
    let torn = dir.path().join("torn.jsonl");
    std::fs::write(&torn, lines[..last_input + 2].join("\n") + "\n").unwrap();
    let r = check_replay_file_matches_rebuild(&torn);
    assert!(!r.complete);
    assert!(r.rebuilt.warnings.iter().any(|w| w.contains("is torn")), "{:?}", r.rebuilt.warnings);
    // A recorded score changed: today's engine decides otherwise there, and both play
    // the record from that input on, the changed score included.
    let at = lines.iter().position(|l| l.contains("\"event\":\"scored\"")).unwrap();
    let mut changed: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    changed[at] = changed[at].replace("\"value\":", "\"value\":1000.5,\"x\":");
    let edited = dir.path().join("edited.jsonl");
    std::fs::write(&edited, changed.join("\n") + "\n").unwrap();
    let r = check_replay_file_matches_rebuild(&edited);
    let Record::Event { seq, event: Event::Scored { id, .. } } = serde_json::from_str(&changed[at]).unwrap() else {
        panic!("a score")
    };
    assert_eq!(r.rebuilt.fidelity.recorded_from(), Some(seq as usize), "{}", r.rebuilt.fidelity);
    assert_eq!(r.rebuilt.engine.tree().node(id).score.as_ref().map(|s| s.value), Some(1000.5));
    assert_eq!(r.rebuilt.inputs, session_inputs(&edited));
    // A log line worded otherwise: the same decisions, replayed by today's engine.
    let log = lines.iter().position(|l| l.contains("\"event\":\"log\"")).unwrap();
    let mut reworded: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    reworded[log] = reworded[log].replace("\"text\":\"", "\"text\":\"(as it was then) ");
    let reworded_path = dir.path().join("reworded.jsonl");
    std::fs::write(&reworded_path, reworded.join("\n") + "\n").unwrap();
    let r = check_replay_file_matches_rebuild(&reworded_path);
    assert!(matches!(r.rebuilt.fidelity, Fidelity::Reworded { inputs: 1, lines: 1, .. }), "{}", r.rebuilt.fidelity);
    assert_eq!(r.rebuilt.reworded.len(), 1);
    // A malformed line in the middle: both stop there with the same warning.
    let mut broken: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    broken[at] = "{not json".into();
    let broken_path = dir.path().join("broken.jsonl");
    std::fs::write(&broken_path, broken.join("\n") + "\n").unwrap();
    let r = check_replay_file_matches_rebuild(&broken_path);
    assert!(r.load_warnings.iter().any(|w| w.contains("malformed line")), "{:?}", r.load_warnings);
}

fn session_inputs(path: &Path) -> usize {
    Session::load(path).unwrap().input_count()
}

#[test]
fn replay_file_rebuilds_a_file_whose_events_are_not_after_their_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sampled.jsonl");
    crate::runtime::bench::record_sampled_session(&path, 300).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // All events moved to the end (before the end line): the same records, another order.
    let (mut head, mut events, mut tail) = (Vec::new(), Vec::new(), Vec::new());
    for l in text.lines() {
        if l.contains("\"kind\":\"event\"") {
            events.push(l);
        } else if l.contains("\"kind\":\"end\"") {
            tail.push(l);
        } else {
            head.push(l);
        }
    }
    let moved = dir.path().join("moved.jsonl");
    std::fs::write(&moved, [head, events, tail].concat().join("\n") + "\n").unwrap();
    let r = check_replay_file_matches_rebuild(&moved);
    assert!(r.rebuilt.fidelity.is_exact(), "{}", r.rebuilt.fidelity);
    assert!(r.complete);
}

#[test]
fn a_tree_node_stays_small_so_a_replay_holds_little_per_node() {
    // The nodes are most of what a replayed tot-bfs run holds (100k nodes in a 43 MB
    // session): ReAct's step and the score are boxed, as most nodes have neither, and
    // the thought and path are shared text.
    assert!(
        std::mem::size_of::<crate::engine::tree::Node>() <= 336,
        "{}",
        std::mem::size_of::<crate::engine::tree::Node>()
    );
}

/// Tokens a server did not report are counted as estimated (the simulated model's are
/// its own), and a budget counts them on the safe side, saying so.
#[test]
fn estimated_tokens_are_counted_apart_and_budgets_count_them_twice() {
    use crate::engine::LlmReply;
    use crate::protocol::{LlmResponse, Usage};
    use crate::runtime::headless::Budget;
    let reply = |estimated: bool, simulated: bool| {
        Input::LlmReply(LlmReply {
            call: 0,
            result: Ok(LlmResponse {
                completions: Vec::new(),
                usage: Usage { prompt_tokens: 300, completion_tokens: 100, estimated, ..Usage::default() },
                latency_ms: 0,
                model: "m".into(),
                simulated,
                cached: false,
                lost: None,
            }),
        })
    };
    let mut totals = Totals::default();
    totals.count(&reply(false, false));
    totals.count(&reply(true, true));
    assert_eq!((totals.tokens(), totals.estimated_tokens, totals.tokens_for_budget()), (800, 0, 800));
    totals.count(&reply(true, false));
    assert_eq!((totals.tokens(), totals.estimated_tokens, totals.tokens_for_budget()), (1200, 400, 1600));
    let mut sum = Totals::default();
    sum.add(&totals);
    assert_eq!(sum, totals);
    // 1,200 tokens by the count, but 400 of them estimated: a budget of 1,500 is spent.
    let budget = Budget { tokens: Some(1500), usd: None };
    let why = budget.exceeded(&totals, None).expect("over budget");
    assert_eq!(
        why,
        "budget exceeded: 1600 tokens counted (400 of them estimated, as the server did not report them, and \
         counted 2 times), --budget-tokens 1500"
    );
    assert!(Budget { tokens: Some(1700), usd: None }.exceeded(&totals, None).is_none());
    // Money the same way, the extra count at the dearer price: 900 in + 300 out, plus 400 at $2.
    let price = crate::llm::config::Price { input: 1.0, output: 2.0 };
    let cost = (900.0 + 300.0 * 2.0 + 400.0 * 2.0) / 1e6;
    assert!(Budget { tokens: None, usd: Some(cost * 0.99) }.exceeded(&totals, Some(&price)).is_some());
    assert!(Budget { tokens: None, usd: Some(cost * 1.01) }.exceeded(&totals, Some(&price)).is_none());
    // Serialized only when there are some, so older readers see the same totals.
    assert!(!serde_json::to_string(&Totals::default()).unwrap().contains("estimated"));
}

/// One name for a problem's session, in `run --record DIR` and in the explorer: the task,
/// the problem (its index, or its input made safe for a file name) and the method.
#[test]
fn session_file_names_say_task_problem_and_method_and_stay_in_their_folder() {
    assert_eq!(super::file_name("game24", Some(900), "4 5 6 10", "tot-bfs"), "game24-0900-tot-bfs.jsonl");
    assert_eq!(super::file_name("game24", None, "4 5 6 10", "cot"), "game24-4_5_6_10-cot.jsonl");
    let odd = super::file_name("qa", None, "../../etc/passwd?\nwhy", "react");
    assert!(!odd.contains('/') && !odd.contains('\n') && !odd.starts_with('.'), "{odd}");
    assert_eq!(super::file_name("qa", None, "   ", "io"), "qa-input-io.jsonl");
    let long = super::file_name("qa", None, &"x".repeat(500), "io");
    assert!(long.len() < 60, "{long}");
}
