//! The memory's rules at their thresholds, its change log and its files.

use std::time::{Duration, SystemTime};

use super::persist::{self, validate_name, MemoryStore, PersistError};
use super::*;

fn memory() -> Memory {
    Memory::default()
}

/// A memory whose `add` only merges identical keyword sets, so near pairs can be set up
/// for consolidation.
fn strict_memory() -> Memory {
    Memory::new(MemoryParams { merge_similarity: 1.0, ..MemoryParams::default() }).expect("valid params")
}

fn add(m: &mut Memory, text: &str, category: Category) -> AddOutcome {
    m.add(text, category, "algebraic", Some("p1")).expect("add")
}

#[test]
fn add_inserts_then_dedupes_by_normal_form() {
    let mut m = memory();
    assert_eq!(add(&mut m, "Check the sign before dividing!", Category::Failure), AddOutcome::Inserted(1));
    let e = m.entry(1).expect("entry 1");
    assert_eq!((e.confidence, e.hits, e.misses, e.version), (0.5, 0, 0, 1));
    assert_eq!(e.sources, ["p1"]);
    // Case, spacing and punctuation do not make a new entry; the category does not either.
    let again = m.add("check  the SIGN before dividing", Category::Insight, "Algebraic", Some("p2")).expect("add");
    assert_eq!(again, AddOutcome::Duplicate(1));
    let e = m.entry(1).expect("entry 1");
    assert_eq!((e.hits, m.len()), (1, 1));
    assert_eq!(e.sources, ["p1", "p2"]);
    // The same source twice is listed once.
    add(&mut m, "Check the sign before dividing.", Category::Failure);
    assert_eq!(m.entry(1).map(|e| (e.hits, e.sources.len())), Some((2, 2)));
}

#[test]
fn add_merges_at_a_jaccard_of_point_six_and_not_below() {
    // {alpha beta gamma delta} vs {alpha beta gamma epsilon}: 3/5 = 0.6 exactly.
    let mut m = memory();
    add(&mut m, "alpha beta gamma delta", Category::Insight);
    assert_eq!(add(&mut m, "alpha beta gamma epsilon", Category::Insight), AddOutcome::Merged(1));
    assert_eq!(m.len(), 1);
    assert_eq!(m.entry(1).map(|e| e.hits), Some(1));
    // Same similarity, other category: a new entry.
    assert_eq!(add(&mut m, "alpha beta gamma omega", Category::Success), AddOutcome::Inserted(2));
    // {alpha beta gamma epsilon} (the merged text) vs {alpha beta gamma zeta theta}: 3/6 = 0.5: a new entry.
    assert_eq!(add(&mut m, "alpha beta gamma zeta theta", Category::Insight), AddOutcome::Inserted(3));
    // 5/9 ≈ 0.56 (just below) vs 5/8 = 0.625 (just above).
    let mut m = memory();
    add(&mut m, "one1 apple banana cherry damson elder fig", Category::Insight);
    let below = add(&mut m, "apple banana cherry damson elder grape hazel kiwi", Category::Insight);
    assert!(matches!(below, AddOutcome::Inserted(_)), "{below:?}");
    let mut m = memory();
    add(&mut m, "apple banana cherry damson elder fig", Category::Insight);
    assert_eq!(add(&mut m, "apple banana cherry damson elder grape hazel", Category::Insight), AddOutcome::Merged(1));
}

#[test]
fn a_merge_keeps_the_longer_text_unless_the_entry_has_proven_itself() {
    let mut m = memory();
    add(&mut m, "alpha beta gamma delta", Category::Insight);
    // Longer and the entry is new: the new text wins, the old one goes to the history.
    add(&mut m, "alpha beta gamma delta epsilon", Category::Insight);
    let e = m.entry(1).expect("entry");
    assert_eq!((e.content.as_str(), e.version), ("alpha beta gamma delta epsilon", 2));
    assert_eq!(e.history[0].content, "alpha beta gamma delta");
    // Shorter: kept.
    add(&mut m, "alpha beta gamma epsilon", Category::Insight);
    assert_eq!(m.entry(1).map(|e| e.version), Some(2));
    // Proven (confidence above the start): a longer text does not replace it.
    m.record_use(1, true).expect("use");
    add(&mut m, "alpha beta gamma delta epsilon and more words", Category::Insight);
    let e = m.entry(1).expect("entry");
    assert_eq!((e.content.as_str(), e.version), ("alpha beta gamma delta epsilon", 2));
}

#[test]
fn confidence_moves_by_a_tenth_and_is_clamped() {
    let mut m = memory();
    add(&mut m, "use symmetry", Category::Insight);
    assert_eq!(m.record_use(1, false), Ok(0.4));
    assert_eq!(m.record_use(1, false), Ok(0.3), "0.5 - 0.1 - 0.1 is 0.3 exactly");
    for _ in 0..10 {
        m.record_use(1, true).expect("use");
    }
    assert_eq!(m.entry(1).map(|e| (e.confidence, e.hits, e.misses)), Some((1.0, 10, 2)));
    for _ in 0..15 {
        m.record_use(1, false).expect("use");
    }
    assert_eq!(m.entry(1).map(|e| e.confidence), Some(0.0));
    assert_eq!(m.record_use(9, true), Err(MemoryError::UnknownEntry(9)));
}

#[test]
fn signals_keep_the_last_three_and_a_rewrite_versions_the_text() {
    let mut m = memory();
    add(&mut m, "expand then collect terms", Category::Success);
    assert_eq!(m.add_signal(1, "s1"), Ok(false));
    assert_eq!(m.add_signal(1, "s2"), Ok(false));
    assert!(!m.needs_rewrite(1));
    assert_eq!(m.add_signal(1, "s3"), Ok(true));
    assert!(m.needs_rewrite(1));
    assert_eq!(m.add_signal(1, "s4"), Ok(true));
    assert_eq!(
        m.entry(1).map(|e| e.signals.iter().cloned().collect::<Vec<_>>()),
        Some(vec!["s2".into(), "s3".into(), "s4".into()])
    );
    let request = m.rewrite_request(1).expect("request");
    for part in ["expand then collect terms", "1. s2", "3. s4", "success", "algebraic", "one refined"] {
        assert!(request.contains(part), "{part:?} missing from {request}");
    }
    assert_eq!(m.apply_rewrite(1, "Expand, collect, then check degrees."), Ok(2));
    let e = m.entry(1).expect("entry");
    assert_eq!(e.content, "Expand, collect, then check degrees.");
    assert!(e.signals.is_empty());
    assert_eq!(
        e.history,
        [PastVersion { version: 1, content: "expand then collect terms".into(), replaced_at: m.clock() }]
    );
    assert!(!m.needs_rewrite(1));
    assert_eq!(m.apply_rewrite(1, "Third text."), Ok(3));
    assert_eq!(m.entry(1).map(|e| e.history.iter().map(|h| h.version).collect::<Vec<_>>()), Some(vec![1, 2]));
    assert_eq!(m.apply_rewrite(1, "   "), Err(MemoryError::Empty { what: "the memory content" }));
    assert_eq!(m.rewrite_request(7), Err(MemoryError::UnknownEntry(7)));
}

#[test]
fn reliability_is_an_exponential_average_from_one_half() {
    let mut m = memory();
    assert_eq!(m.reliability("casework"), None);
    assert_eq!(m.record_outcome("casework", true), Ok(0.6));
    assert_eq!(m.record_outcome("Casework ", false), Ok(0.48));
    assert_eq!(m.reliability("CASEWORK"), Some(0.48));
    assert_eq!(m.reliability("algebraic"), None);
    let custom = MemoryParams { reliability_decay: 0.5, reliability_initial: 0.2, ..MemoryParams::default() };
    let mut m = Memory::new(custom).expect("params");
    assert_eq!(m.record_outcome("x", true), Ok(0.6));
}

#[test]
fn consolidation_retires_below_point_two_and_merges_at_point_seven() {
    let mut m = strict_memory();
    // 7 shared of 10 (0.7: merged) and 6 shared of 9 (0.67: kept apart).
    let shared7 = "apple banana cherry damson elder grape hazel";
    add(&mut m, &format!("{shared7} kiwi lemon"), Category::Insight); // 1
    add(&mut m, &format!("{shared7} mango"), Category::Insight); // 2: 7/10 with 1
    let shared6 = "nectarine orange papaya quince raspberry strawberry";
    add(&mut m, &format!("{shared6} tangerine ugli"), Category::Insight); // 3
    add(&mut m, &format!("{shared6} vanilla"), Category::Insight); // 4: 6/9 with 3
    add(&mut m, "low confidence lesson", Category::Failure); // 5
    add(&mut m, "pinned low confidence lesson", Category::Failure); // 6
    add(&mut m, "exactly point two lesson", Category::Failure); // 7
    m.edit(5, None, Some(0.1), None).expect("edit");
    m.edit(6, None, Some(0.1), Some(true)).expect("edit");
    m.edit(7, None, Some(0.2), None).expect("edit");
    m.record_use(2, true).expect("use"); // 2 is more confident: it is kept.
    m.add_signal(1, "from one").expect("signal");
    let report = m.consolidate().expect("consolidate");
    assert_eq!(report.retired, [5]);
    assert_eq!(report.merged, [(2, 1)]);
    let ids: Vec<EntryId> = m.entries().iter().map(|e| e.id).collect();
    assert_eq!(ids, [2, 3, 4, 6, 7]);
    let kept = m.entry(2).expect("kept");
    assert_eq!((kept.hits, kept.confidence, kept.content.as_str()), (1, 0.6, format!("{shared7} mango").as_str()));
    assert_eq!(kept.signals, ["from one"]);
    // Nothing left to do.
    assert_eq!(m.consolidate(), Ok(ConsolidateReport::default()));
}

#[test]
fn a_pinned_entry_is_kept_in_a_merge_and_two_pinned_entries_are_not_merged() {
    let mut m = strict_memory();
    add(&mut m, "apple banana cherry damson", Category::Insight);
    add(&mut m, "apple banana cherry damson elder", Category::Insight); // 4/5 = 0.8
    m.edit(2, None, None, Some(true)).expect("pin");
    m.record_use(1, true).expect("1 is more confident, but 2 is pinned");
    assert_eq!(m.consolidate().map(|r| r.merged), Ok(vec![(2, 1)]));
    let mut m = strict_memory();
    add(&mut m, "apple banana cherry damson", Category::Insight);
    add(&mut m, "apple banana cherry damson elder", Category::Insight);
    m.edit(1, None, None, Some(true)).expect("pin");
    m.edit(2, None, None, Some(true)).expect("pin");
    assert_eq!(m.consolidate().map(|r| r.merged), Ok(vec![]));
}

#[test]
fn retrieval_ranks_overlap_times_confidence_above_point_three() {
    let mut m = memory();
    add(&mut m, "factor the quadratic first", Category::Insight); // 1
    add(&mut m, "quadratic formula sign errors", Category::Failure); // 2
    add(&mut m, "draw the triangle", Category::Insight); // 3
    add(&mut m, "quadratic discriminant check", Category::Success); // 4
    add(&mut m, "quadratic roots sum product", Category::Insight); // 5
    m.record_use(2, true).expect("use"); // 0.6
    m.edit(4, None, Some(0.3), None).expect("edit"); // at the floor: left out
    m.edit(5, None, Some(0.31), None).expect("edit"); // just above
    let query = "solve the quadratic by factor";
    let ids: Vec<EntryId> = m.retrieve(query, 10).iter().map(|e| e.id).collect();
    // 1: 2/2 × 0.5 = 0.5; 2: 1/2 × 0.6 = 0.3; 5: 1/2 × 0.31; 3 shares nothing.
    assert_eq!(ids, [1, 2, 5]);
    assert_eq!(m.retrieve(query, 1).iter().map(|e| e.id).collect::<Vec<_>>(), [1]);
    // Ties keep id order.
    let mut m = memory();
    add(&mut m, "quadratic one", Category::Insight);
    add(&mut m, "quadratic two", Category::Insight);
    add(&mut m, "quadratic three", Category::Insight);
    let ids: Vec<EntryId> = m.retrieve("quadratic", 5).iter().map(|e| e.id).collect();
    assert_eq!(ids, [1, 2, 3]);
}

#[test]
fn summary_ranks_confidence_times_hits() {
    let mut m = memory();
    for text in ["first lesson", "second lesson", "third lesson", "fourth lesson"] {
        add(&mut m, text, Category::Insight);
    }
    m.record_use(2, true).expect("use"); // 0.6 × 1
    m.record_use(3, true).expect("use");
    m.record_use(3, true).expect("use"); // 0.7 × 2
    add(&mut m, "first lesson", Category::Insight); // 0.5 × 1
    let ids: Vec<EntryId> = m.summary(10).iter().map(|e| e.id).collect();
    assert_eq!(ids, [3, 2, 1, 4]);
    assert_eq!(m.summary(2).len(), 2);
}

#[test]
fn replaying_the_recorded_changes_on_the_snapshot_gives_the_same_memory() {
    let mut live = memory();
    add(&mut live, "factor the quadratic first", Category::Insight);
    live.record_outcome("algebraic", true).expect("outcome");
    let _ = live.take_changes();
    // The snapshot a session records when a problem begins, through its JSON.
    let snapshot: Memory =
        serde_json::from_str(&serde_json::to_string(&live).expect("serialise")).expect("deserialise");
    assert_eq!(snapshot, live);

    add(&mut live, "alpha beta gamma delta", Category::Failure);
    add(&mut live, "alpha beta gamma epsilon", Category::Failure);
    add(&mut live, "factor the quadratic first!", Category::Insight);
    live.record_use(1, true).expect("use");
    live.record_use(2, false).expect("use");
    for s in ["too vague", "wrong sign", "missed a case"] {
        live.add_signal(2, s).expect("signal");
    }
    let request = live.rewrite_request(2).expect("request");
    assert!(request.contains("missed a case"));
    live.apply_rewrite(2, "List every case before computing.").expect("rewrite");
    live.record_outcome("casework", false).expect("outcome");
    live.edit(1, Some("Factor first, then check the roots."), Some(0.9), Some(true)).expect("edit");
    assert!(live.record_use(99, true).is_err(), "a refused change is not recorded");
    add(&mut live, "short lived", Category::Success);
    live.remove(3).expect("remove");
    let mut other = memory();
    add(&mut other, "imported lesson about geometry", Category::Insight);
    other.record_outcome("geometric", true).expect("outcome");
    live.merge_from(&other).expect("import");
    live.edit(2, None, Some(0.05), None).expect("edit");
    live.consolidate().expect("consolidate");

    let changes = live.take_changes();
    assert_eq!(changes.len(), 16);
    let text: Vec<String> = changes.iter().map(|c| serde_json::to_string(c).expect("change")).collect();
    let mut replay = snapshot;
    for line in &text {
        let change: MemoryChange = serde_json::from_str(line).expect("change parses");
        replay.apply(&change).expect("replays");
    }
    assert_eq!(replay, live);
    assert!(live.entry(2).is_none(), "retired by the consolidation");
    assert_eq!(live.reliability("geometric"), Some(0.6));
}

#[test]
fn changes_are_snake_case_tagged_json() {
    let c = MemoryChange::RecordUse { id: 3, success: true };
    assert_eq!(serde_json::to_string(&c).expect("json"), r#"{"change":"record_use","id":3,"success":true}"#);
    let c: MemoryChange = serde_json::from_str(r#"{"change":"consolidate"}"#).expect("parses");
    assert_eq!(c, MemoryChange::Consolidate);
    let add: MemoryChange =
        serde_json::from_str(r#"{"change":"add","content":"x y z","category":"failure","approach":"numeric"}"#)
            .expect("parses");
    assert!(matches!(add, MemoryChange::Add { category: Category::Failure, source: None, .. }));
    assert!(serde_json::from_str::<MemoryChange>(r#"{"change":"explode"}"#).is_err());
}

#[test]
fn bad_changes_are_refused_without_changing_anything() {
    let params = MemoryParams { max_entries: 2, max_content_chars: 20, ..MemoryParams::default() };
    let mut m = Memory::new(params).expect("params");
    add(&mut m, "first", Category::Insight);
    add(&mut m, "second", Category::Insight);
    let before = m.clone();
    assert_eq!(m.add("third", Category::Insight, "x", None), Err(MemoryError::Full(2)));
    assert_eq!(
        m.add(&"long ".repeat(10), Category::Insight, "x", None),
        Err(MemoryError::TooLong { what: "the memory content", len: 49, max: 20 })
    );
    assert!(matches!(m.add("?!?", Category::Insight, "x", None), Err(MemoryError::Empty { .. })));
    assert_eq!(m.add("fine", Category::Insight, " ", None), Err(MemoryError::Empty { what: "the approach" }));
    assert_eq!(m.edit(1, None, Some(1.5), None), Err(MemoryError::Confidence(1.5)));
    assert!(m.edit(1, None, Some(f64::NAN), None).is_err());
    assert!(m.edit(1, None, None, None).is_err());
    assert_eq!(m.remove(5), Err(MemoryError::UnknownEntry(5)));
    assert_eq!(m, before);
    assert_eq!(m.take_changes().len(), 2);
    let bad = MemoryParams { merge_similarity: 1.2, ..MemoryParams::default() };
    assert_eq!(
        Memory::new(bad).err().map(|e| e.to_string()).unwrap_or_default(),
        "bad memory parameter: merge_similarity must be between 0 and 1, not 1.2"
    );
}

#[test]
fn clear_keeps_ids_unique() {
    let mut m = memory();
    add(&mut m, "first", Category::Insight);
    m.record_outcome("algebraic", true).expect("outcome");
    assert_eq!(m.clear(), 1);
    assert!(m.is_empty() && m.reliabilities().is_empty());
    assert_eq!(add(&mut m, "second", Category::Insight), AddOutcome::Inserted(2));
}

// ---- files -----------------------------------------------------------------------

fn sample() -> Memory {
    let mut m = memory();
    add(&mut m, "factor the quadratic first", Category::Insight);
    add(&mut m, "watch the sign when moving terms", Category::Failure);
    m.add_signal(2, "it happened again").expect("signal");
    m.record_outcome("algebraic", false).expect("outcome");
    m
}

#[test]
fn a_memory_round_trips_through_its_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = MemoryStore::new(dir.path());
    assert_eq!(store.names().expect("names"), Vec::<String>::new());
    assert_eq!(store.load("game24").expect("load"), None);
    let m = sample();
    store.save("game24", &m).expect("save");
    assert_eq!(store.load("game24").expect("load"), Some(m.clone()));
    let text = std::fs::read_to_string(dir.path().join("memory/game24.json")).expect("file");
    assert!(text.contains("\"format\": \"thoughtscope-memory\"") && text.contains("\"version\": 1"), "{text}");
    assert!(!dir.path().join("memory/game24.lock").exists(), "the lock is removed");
    store.save("math-demo", &Memory::default()).expect("save");
    assert_eq!(store.names().expect("names"), ["game24", "math-demo"]);
    let added =
        store.update("game24", |m| Ok(m.add("a third lesson", Category::Success, "numeric", None)?)).expect("update");
    assert_eq!(added, AddOutcome::Inserted(3));
    assert_eq!(store.load("game24").expect("load").map(|m| m.len()), Some(3));
}

#[test]
fn a_failed_write_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = MemoryStore::new(dir.path());
    let old = sample();
    store.save("m", &old).expect("save");
    // The temp file cannot be created (a folder sits at its path): the write fails
    // before the rename, whoever runs the test (root ignores read-only folders).
    let tmp = dir.path().join("memory/.m.json.tmp");
    std::fs::create_dir(&tmp).expect("blocker");
    let err = store.save("m", &Memory::default()).expect_err("write fails");
    assert!(err.to_string().contains(".m.json.tmp"), "{err}");
    assert_eq!(store.load("m").expect("old file loads"), Some(old.clone()));
    // A change that fails writes nothing either.
    let refused = store.update("m", |m| Ok(m.remove(42)?));
    assert!(matches!(refused, Err(PersistError::Memory(MemoryError::UnknownEntry(42)))));
    std::fs::remove_dir(&tmp).expect("unblock");
    // A crash's leftover temp file is harmless: ignored on load, replaced on save.
    std::fs::write(&tmp, "{ torn").expect("leftover");
    assert_eq!(store.load("m").expect("load"), Some(old));
    store.save("m", &Memory::default()).expect("save over the leftover");
    assert_eq!(store.load("m").expect("load"), Some(Memory::default()));
    assert_eq!(store.names().expect("names"), ["m"]);
}

/// A number as a word of letters (`12` → `bc`): keywords have no digits.
fn letters(n: usize) -> String {
    n.to_string().bytes().map(|d| char::from(b'a' + (d - b'0'))).collect()
}

#[test]
fn writers_wait_for_the_lock_and_lose_no_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut holder = MemoryStore::new(dir.path());
    let guard = holder.lock("m").expect("lock");
    let mut other = MemoryStore::new(dir.path());
    other.lock_wait = Duration::from_millis(100);
    let err = other.save("m", &sample()).expect_err("locked");
    assert!(matches!(err, PersistError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("m.lock"), "{err}");
    assert_eq!(other.load("m").expect("load"), None, "nothing written");
    drop(guard);
    other.save("m", &Memory::default()).expect("free again");

    // Four writers adding ten entries each: all forty are there.
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let mut store = MemoryStore::new(dir.path());
            std::thread::spawn(move || {
                for i in 0..10 {
                    store
                        .update("m", |m| {
                            Ok(m.add(&format!("lesson zz{}", letters(t * 100 + i)), Category::Insight, "x", None)?)
                        })
                        .expect("update");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer");
    }
    assert_eq!(MemoryStore::new(dir.path()).load("m").expect("load").map(|m| m.len()), Some(40));
}

#[test]
fn a_stale_lock_is_taken_over_with_a_warning() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = MemoryStore::new(dir.path());
    std::fs::create_dir_all(store.dir()).expect("dir");
    let lock = store.dir().join("m.lock");
    let file = std::fs::File::create(&lock).expect("lock");
    file.set_modified(SystemTime::now() - Duration::from_secs(600)).expect("age it");
    drop(file);
    store.lock_wait = Duration::from_millis(100);
    store.save("m", &sample()).expect("stale lock taken over");
    let warnings = store.take_warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("stale lock"), "{warnings:?}");
    assert!(!lock.exists());
}

#[test]
fn bad_files_are_errors_that_name_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = MemoryStore::new(dir.path());
    std::fs::create_dir_all(store.dir()).expect("dir");
    let path = store.dir().join("m.json");
    let cases = [
        ("{\"format\": \"thoughtscope-memory\", \"version\": 1, \"memory\": {", "EOF while parsing"),
        ("[1, 2]", "not a valid memory"),
        ("{\"version\": 1}", "no \"format\""),
        ("{\"format\": \"thoughtscope-memory\", \"version\": 2, \"memory\": {}}", "format version 2"),
        ("{\"format\": \"thoughtscope-memory\", \"memory\": {}}", "no \"version\""),
        ("{\"format\": \"thoughtscope-memory\", \"version\": 1, \"memory\": {\"entries\": []}}", "missing field"),
    ];
    for (text, expected) in cases {
        std::fs::write(&path, text).expect("write");
        let err = store.load("m").expect_err(text).to_string();
        assert!(err.contains(expected) && err.contains("m.json"), "{text}: {err}");
    }
    // A memory that breaks its own limits: the error names the entry and the field.
    let mut m = sample();
    m.edit(1, None, Some(0.5), None).expect("edit");
    let text = persist::to_json(&m).replace("\"confidence\": 0.5", "\"confidence\": 2.5");
    std::fs::write(&path, text).expect("write");
    let err = store.load("m").expect_err("bad confidence").to_string();
    assert!(err.contains("entry 1: confidence 2.5"), "{err}");
    // Deep nesting is serde_json's recursion-limit error, not a stack overflow.
    std::fs::write(&path, "[".repeat(100_000)).expect("write");
    assert!(store.load("m").expect_err("deep").to_string().contains("recursion limit"));
    // Too large: refused before reading (a sparse file costs no disk).
    let big = std::fs::File::create(&path).expect("create");
    big.set_len(persist::MAX_FILE_BYTES + 1).expect("grow");
    let err = store.load("m").expect_err("too large").to_string();
    assert!(err.contains("is larger than 64 MiB, the most a memory may have"), "{err}");
    std::fs::write(&path, [0xff, 0xfe]).expect("write");
    assert!(store.load("m").expect_err("binary").to_string().contains("not UTF-8"));
}

#[test]
fn names_are_checked() {
    for good in ["game24", "math-demo", "a.b_c-9", &"x".repeat(64)] {
        assert!(validate_name(good).is_ok(), "{good}");
    }
    for bad in ["", "../x", "a/b", "a b", ".hidden", "é", &"x".repeat(65)] {
        let err = validate_name(bad).expect_err(bad).to_string();
        assert!(err.starts_with("bad memory name"), "{err}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(matches!(MemoryStore::new(dir.path()).load("../etc"), Err(PersistError::BadName(_))));
}

/// A pid no process has now: a child that has ended (and been waited for).
fn ended_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().expect("true runs");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}

#[test]
fn a_lock_whose_writer_is_no_longer_running_is_taken_over_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = MemoryStore::new(dir.path());
    std::fs::create_dir_all(store.dir()).expect("dir");
    let lock = store.dir().join("m.lock");
    let me = persist::LockOwner::me();
    let Some(host) = me.host.clone() else {
        eprintln!("skipped: this system gives no host name, so lock owners cannot be checked");
        return;
    };
    // A fresh lock (far from the 5-minute age rule) left by a process that has ended.
    let gone = persist::LockOwner { pid: ended_pid(), start: None, host: Some(host.clone()) };
    std::fs::write(&lock, gone.to_text()).expect("lock");
    store.lock_wait = Duration::from_millis(200);
    let started = std::time::Instant::now();
    store.save("m", &sample()).expect("the dead writer's lock is taken over");
    assert!(started.elapsed() < Duration::from_secs(2), "no wait for the age rule: {:?}", started.elapsed());
    let warnings = store.take_warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("is no longer running"), "{warnings:?}");
    assert!(!lock.exists(), "the lock was let go after the save");

    // A lock naming a live process (this one) is respected.
    std::fs::write(&lock, me.to_text()).expect("lock");
    assert!(matches!(store.save("m", &sample()), Err(PersistError::Locked { .. })));
    // A dead pid on another host cannot be checked: the lock waits for the age rule.
    let elsewhere = persist::LockOwner { pid: ended_pid(), start: None, host: Some(format!("{host}-other")) };
    std::fs::write(&lock, elsewhere.to_text()).expect("lock");
    assert!(matches!(store.save("m", &sample()), Err(PersistError::Locked { .. })));
    // This pid with another start time: the writer ended and its pid was given to us.
    match me.start {
        Some(start) => {
            let reused = persist::LockOwner { start: Some(start + 1), ..me.clone() };
            std::fs::write(&lock, reused.to_text()).expect("lock");
            store.save("m", &sample()).expect("a reused pid's lock is taken over");
            let warnings = store.take_warnings();
            assert!(warnings[0].contains("that pid is another process's now"), "{warnings:?}");
        }
        None => eprintln!("skipped the pid-reuse case: no process start times on this system"),
    }
    // A lock of the previous format (`pid N` alone) whose process is gone: taken over at once.
    std::fs::write(&lock, format!("pid {}\n", ended_pid())).expect("lock");
    let started = std::time::Instant::now();
    store.save("m", &sample()).expect("an old-format lock of an ended process is taken over");
    assert!(started.elapsed() < Duration::from_secs(2), "no wait: {:?}", started.elapsed());
    let warnings = store.take_warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("previous format), is no longer running"), "{warnings:?}");
    // One naming a live process that started before it was written (this one) is respected.
    std::fs::write(&lock, format!("pid {}\n", std::process::id())).expect("lock");
    assert!(matches!(store.save("m", &sample()), Err(PersistError::Locked { .. })));
    // One written before its pid's process started: that pid was given to another process since.
    if cfg!(target_os = "linux") {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep runs");
        std::fs::write(&lock, format!("pid {}\n", child.id())).expect("lock");
        let file = std::fs::File::options().write(true).open(&lock).expect("lock");
        file.set_modified(SystemTime::now() - Duration::from_secs(240)).expect("age it");
        drop(file);
        let saved = store.save("m", &sample());
        let _ = child.kill();
        let _ = child.wait();
        saved.expect("a reused pid's old-format lock is taken over");
        assert!(store.take_warnings()[0].contains("that pid is another process's now"));
    }
    assert_eq!(persist::LockOwner::parse(&me.to_text()), Some(me));
    assert_eq!(persist::LockOwner::parse("pid 0\n"), None, "pid 0 is not a process");
    assert_eq!(persist::LockOwner::parse(""), None);
}

#[test]
fn counters_at_their_limit_are_refused_on_load_and_never_wrap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("m.json");
    let text = persist::to_json(&sample());
    for (field, value) in [("next_id", u64::MAX), ("clock", u64::MAX), ("next_id", store::MAX_COUNTER + 1)] {
        let at = text.find(&format!("\"{field}\": ")).expect("the field is written");
        let end = at + text[at..].find([',', '\n']).expect("its end");
        let edited = format!("{}\"{field}\": {value}{}", &text[..at], &text[end..]);
        std::fs::write(&path, edited).expect("write");
        let err = persist::load_file(&path).expect_err("refused").to_string();
        assert!(err.contains(&format!("{field} is {value}, more than 9007199254740992 (2^53)")), "{err}");
    }
    // At the limit: the next change fails, says why, and changes nothing.
    let at_limit = |field: &str| {
        let at = text.find(&format!("\"{field}\": ")).expect("field");
        let end = at + text[at..].find([',', '\n']).expect("end");
        let edited = format!("{}\"{field}\": {}{}", &text[..at], store::MAX_COUNTER, &text[end..]);
        persist::from_json(&edited, &path).expect("2^53 itself is allowed")
    };
    let mut m = at_limit("next_id");
    let before = m.clone();
    let err = m.add("a brand new lesson about limits", Category::Insight, "x", None).expect_err("no id left");
    assert!(matches!(err, MemoryError::Exhausted("next_id")), "{err}");
    assert!(err.to_string().contains("at its limit (2^53)"), "{err}");
    assert_eq!(m, before, "nothing changed");
    let mut other = memory();
    add(&mut other, "an entry the full memory has not seen", Category::Insight);
    let import = MemoryChange::Import { entries: other.entries().to_vec(), reliability: Default::default() };
    assert!(matches!(m.apply(&import), Err(MemoryError::Exhausted("next_id"))));
    assert_eq!(m, before);
    let mut m = at_limit("clock");
    let before = m.clone();
    assert!(matches!(m.apply(&MemoryChange::Clear), Err(MemoryError::Exhausted("clock"))));
    assert_eq!(m, before);
}

/// A lesson about one approach is not merged into another's (demo 7's entry #1 once held
/// the lessons of four approaches under "failure · geometric"); memories recorded before
/// the rule keep merging, so they replay exactly.
#[test]
fn lessons_of_different_approaches_stay_apart() {
    let lesson = |approach: &str| {
        format!("with {approach}, track the signs when moving terms across and when evaluating powers")
    };
    let mut m = memory();
    let first = m.add(&lesson("geometric"), Category::Failure, "geometric", Some("p")).unwrap();
    let second = m.add(&lesson("numeric"), Category::Failure, "numeric", Some("p")).unwrap();
    assert!(matches!((first, second), (AddOutcome::Inserted(_), AddOutcome::Inserted(_))), "{first:?} {second:?}");
    assert_eq!(m.entries().iter().map(|e| e.approach.as_str()).collect::<Vec<_>>(), ["geometric", "numeric"]);
    // The same approach still merges a near-duplicate.
    let again = m.add(&format!("{}.", lesson("numeric")), Category::Failure, "numeric", Some("q")).unwrap();
    assert!(matches!(again, AddOutcome::Merged(_) | AddOutcome::Duplicate(_)), "{again:?}");
    m.consolidate().unwrap();
    assert_eq!(m.len(), 2, "consolidation keeps the approaches apart too");
    // A memory recorded before the rule (its params lack the field) merges as it did.
    let old: MemoryParams = serde_json::from_str("{}").unwrap();
    assert!(old.merge_across_approaches && old.relevant_share == 0.0);
    let mut m = Memory::new(old).unwrap();
    m.add(&lesson("geometric"), Category::Failure, "geometric", Some("p")).unwrap();
    let merged = m.add(&lesson("numeric"), Category::Failure, "numeric", Some("p")).unwrap();
    assert!(matches!(merged, AddOutcome::Merged(_)), "{merged:?}");
}

/// A lesson is retrieved for a problem it is about (its text or the problems it came
/// from share the problem's words), not because it names the approach being tried: demo
/// 8 once credited a lesson about (x+3)(x+3) for a dice problem.
#[test]
fn a_lesson_is_retrieved_for_problems_it_is_about() {
    let mut m = memory();
    let source = "Simplify $\\frac{x^2 - 9}{x + 3}$ for $x \\ne -3$.";
    m.add(
        "numeric approach, sign error: with numeric, track the signs when factoring a difference of squares",
        Category::Failure,
        "numeric",
        Some(source),
    )
    .unwrap();
    let near = "Simplify $\\frac{x^2 - 16}{x - 4}$ for $x \\ne 4$.";
    let dice = "Two fair dice are rolled. What is the probability that the sum is 7?";
    assert_eq!(m.retrieve_for(near, "numeric", 3).len(), 1, "a problem of the same kind");
    assert!(m.retrieve_for(dice, "numeric", 3).is_empty(), "the approach's name alone is no relevance");
    // The rule before: the approach's name was a match.
    let old: MemoryParams = serde_json::from_str("{}").unwrap();
    let mut m = Memory::new(old).unwrap();
    m.add("numeric approach: track the signs", Category::Failure, "numeric", Some(source)).unwrap();
    assert_eq!(m.retrieve_for(dice, "numeric", 3).len(), 1);
}

#[test]
fn an_entry_keeps_its_evidence_and_is_gold_only_while_every_outcome_behind_it_was_checked() {
    use super::Evidence::{Gold, SelfValidated};
    let mut m = Memory::default();
    let gold =
        m.add_with_evidence("casework: count both ends", Category::Failure, "casework", None, Gold).unwrap().id();
    assert_eq!(m.entry(gold).unwrap().evidence, Some(Gold));
    // The same lesson again, checked again: still gold; then from a self-validated outcome.
    m.add_with_evidence("casework: count both ends", Category::Failure, "casework", None, Gold).unwrap();
    assert_eq!(m.entry(gold).unwrap().evidence, Some(Gold));
    m.add_with_evidence("casework: count both ends", Category::Failure, "casework", None, SelfValidated).unwrap();
    assert_eq!(m.entry(gold).unwrap().evidence, Some(SelfValidated));
    // A person's entry (plain add) has none, and the change replays to the same memory.
    let plain = m.add("algebra: isolate x first", Category::Insight, "algebraic", None).unwrap().id();
    assert_eq!(m.entry(plain).unwrap().evidence, None);
    let mut replayed = Memory::default();
    for change in m.take_changes() {
        replayed.apply(&change).unwrap();
    }
    assert_eq!(replayed, m);
    // A memory whose rules keep no evidence (recorded before the rule) writes none.
    let mut old: Memory = serde_json::from_value({
        let mut v = serde_json::to_value(Memory::default()).unwrap();
        v["params"].as_object_mut().unwrap().remove("record_evidence");
        v
    })
    .unwrap();
    let id = old.add_with_evidence("x", Category::Insight, "algebraic", None, Gold).unwrap().id();
    assert_eq!(old.entry(id).unwrap().evidence, None);
    assert!(!serde_json::to_string(&old.take_changes()).unwrap().contains("evidence"));
    // An old entry without the field loads.
    let json = serde_json::to_value(m.entry(plain).unwrap()).unwrap();
    assert!(json.get("evidence").is_none());
    let back: super::Entry = serde_json::from_value(json).unwrap();
    assert_eq!(back.evidence, None);
}
