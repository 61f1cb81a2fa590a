//! The run's named memory: resolving `--memory`, loading and saving around a problem
//! (merging onto another writer's file), the headless runner's wiring, session headers
//! and forks keeping the snapshot, and math-demo's passes.

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::engine::{methods, Command, Engine, Input, Params, Task};
use crate::memory::Category;
use crate::runtime::headless::{run_headless, Interrupts, RunSetup};
use crate::runtime::{Run, StopPolicy};
use crate::session::{Header, MemorySnapshot, Session, SessionWriter};
use crate::tasks::TaskSource;

fn cot() -> Params {
    Params::new(methods::cot::KIND)
}

fn store(dir: &Path) -> MemoryStore {
    MemoryStore::new(dir)
}

fn target(dir: &Path, name: &str) -> RunMemory {
    RunMemory { name: name.to_string(), store: store(dir) }
}

fn seeded(dir: &Path, name: &str, lessons: &[(&str, &str)]) -> Memory {
    let mut s = store(dir);
    s.update(name, |m| {
        for (content, approach) in lessons {
            m.add(content, Category::Failure, approach, None)?;
        }
        Ok(())
    })
    .expect("seed");
    s.load(name).expect("loads").expect("exists")
}

fn math_demo() -> Arc<dyn TaskSource> {
    crate::tasks::by_name("math-demo", None).expect("math-demo")
}

#[test]
fn memory_for_a_method_that_keeps_none_is_refused_on_the_command_line_and_ignored_from_the_config() {
    let err = resolve(&cot(), "math-demo", "m", Some("study"), true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--memory needs a method that keeps a memory (retreval); drop it or use --method retreval"
    );
    assert_eq!(resolve(&cot(), "math-demo", "m", Some("study"), false), Ok(None), "a config default is not a mistake");
    assert_eq!(resolve(&cot(), "math-demo", "m", None, false), Ok(None));
    assert_eq!(default_name(&cot(), "math-demo", "gpt-4o"), "cot-math-demo-gpt-4o");
    assert_eq!(task_default("math-demo", None), "retreval-math-demo");
}

#[test]
fn a_new_memory_loads_empty_and_an_existing_one_as_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut s = store(tmp.path());
    assert_eq!(load_for(&mut s, "fresh").expect("loads"), Memory::default());
    assert!(!tmp.path().join("memory/fresh.json").exists(), "loading writes nothing");
    assert!(!tmp.path().join("memory/fresh.lock").exists(), "the lock is let go");
    let written = seeded(tmp.path(), "old", &[("casework approach, off_by_one: count the ends", "casework")]);
    assert_eq!(load_for(&mut s, "old").expect("loads"), written);
}

#[test]
fn a_malformed_memory_file_is_one_line_naming_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("memory")).expect("dir");
    let file = tmp.path().join("memory/bad.json");
    std::fs::write(&file, "{ not json").expect("write");
    let err = load_blocking(&target(tmp.path(), "bad")).unwrap_err().to_string();
    assert!(err.starts_with("cannot read memory bad: ") && err.contains(&file.display().to_string()), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "{ not json", "a bad file is never replaced");
}

/// A problem's run: the engine starts from the stored memory, a person's edit during
/// it is a recorded change, and after the save the next problem loads the edited memory.
#[test]
fn a_problems_changes_are_saved_and_the_next_problem_starts_from_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let started = seeded(tmp.path(), "study", &[("algebraic approach, arithmetic_error: recheck", "algebraic")]);
    let id = started.entries()[0].id;
    let task = math_demo();
    let engine = Engine::new(Arc::clone(&task) as Arc<dyn Task>, &task.problem(0).expect("p0").input, cot());
    let mut run = Run::new(engine, None, StopPolicy::default());
    run.keep_memory(target(tmp.path(), "study"), started.clone());
    assert_eq!(run.engine.memory(), Some(&started));
    let pin = MemoryChange::Edit { id, content: None, confidence: None, pinned: Some(true) };
    run.feed(Input::command(Command::Memory { change: pin.clone() }), None);
    assert_eq!(run.memory_changes(), [pin]);

    let pending = run.take_memory_save().expect("a memory to save");
    assert!(run.take_memory_save().is_none(), "saved once");
    let used = pending.save_blocking().expect("saves");
    assert_eq!(
        used,
        MemoryUse { name: "study".into(), entries_before: 1, entries_after: 1, merged: false, notes: vec![] }
    );
    let next = load_for(&mut store(tmp.path()), "study").expect("loads");
    assert!(next.entry(id).expect("entry").pinned, "the next problem sees the edit");
    assert_eq!(Some(&next), run.engine.memory());
}

/// Another writer changed the file while the problem ran: both sides' work survives,
/// and a use of an entry the problem added follows that entry to its new id.
#[test]
fn changes_are_applied_on_top_of_another_writers_file_with_new_ids_mapped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let started = seeded(tmp.path(), "shared", &[("numeric approach worked: estimate first", "numeric")]);
    // The problem adds a lesson, uses it and records an outcome.
    let mut now = started.clone();
    let ours = now.add("casework approach, missing_step: list every case", Category::Failure, "casework", None);
    let ours = ours.expect("add").id();
    now.record_use(ours, true).expect("use");
    now.record_outcome("casework", false).expect("outcome");
    let changes = now.take_changes();
    // Meanwhile another writer added a different lesson, taking the id the problem's got.
    let mut s = store(tmp.path());
    let theirs = s
        .update("shared", |m| {
            Ok(m.add("geometric approach, wrong_constraint: draw it", Category::Failure, "geometric", None)?.id())
        })
        .expect("other writer");
    assert_eq!(theirs, ours, "the same id was handed out twice");

    let saved = save_after(&mut s, "shared", &started, &changes, &now).expect("saves");
    assert!(saved.merged && saved.skipped.is_empty(), "{saved:?}");
    let file = s.load("shared").expect("loads").expect("exists");
    assert_eq!(file.len(), 3, "{file:?}");
    let find = |text: &str| file.entries().iter().find(|e| e.content.contains(text)).expect(text).clone();
    assert_eq!(find("draw it").hits, 0, "the other writer's entry is untouched");
    let mine = find("list every case");
    assert_ne!(mine.id, theirs);
    assert_eq!(mine.hits, 1, "the use followed the entry to its new id");
    assert!(file.reliability("casework").is_some());
}

#[test]
fn a_memory_that_cannot_be_written_is_one_line_naming_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let started = seeded(tmp.path(), "stuck", &[]);
    // The temp file's place is taken by a folder: the atomic write cannot start.
    std::fs::create_dir_all(tmp.path().join("memory/.stuck.json.tmp")).expect("blocker");
    let pending =
        PendingSave { target: target(tmp.path(), "stuck"), started: started.clone(), changes: vec![], now: started };
    let err = pending.save_blocking().unwrap_err().to_string();
    let file = tmp.path().join("memory/stuck.json").display().to_string();
    assert!(err.starts_with(&format!("cannot save memory {file}: ")), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_session_header_keeps_the_snapshot_and_a_fork_starts_from_the_parents() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let memory = seeded(tmp.path(), "study", &[("algebraic approach, logic_error: check signs", "algebraic")]);
    let task = math_demo();
    let problem = task.problem(3).expect("p3");
    let setup = RunSetup {
        task: Arc::clone(&task),
        params: cot(),
        provider: Arc::new(crate::llm::sim::SimProvider::new(Default::default(), &crate::tasks::SimPlayers)),
        sim: None,
        concurrency: 1,
        record: None,
        limits: Default::default(),
        replay_tools: None,
        unjudged: false,
        memory: None,
    };
    let mut header: Header = crate::runtime::headless::header_for(&setup, &problem);
    header.memory = Some(MemorySnapshot::new("study", memory.clone()));
    let path = tmp.path().join("s.jsonl");
    let mut w = SessionWriter::create(&path, &header).expect("create");
    let mut engine = header.engine(Arc::clone(&task) as Arc<dyn Task>);
    assert_eq!(engine.memory(), Some(&memory), "the engine starts from the header's memory");
    let fx = engine.handle(Input::command(Command::Pause));
    let events: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            crate::engine::Effect::Emit { event } => Some(event.clone()),
            _ => None,
        })
        .collect();
    w.input(&Input::command(Command::Pause), None, &events).expect("input");
    drop(w);
    let session = Session::load(&path).expect("loads");
    assert_eq!(session.header.memory, header.memory, "the snapshot round-trips through the file");

    let fork_path = tmp.path().join("fork.jsonl");
    drop(SessionWriter::fork(&fork_path, &session, 1).expect("fork"));
    let fork = Session::load(&fork_path).expect("fork loads");
    assert_eq!(fork.header.memory, header.memory, "a fork starts from its parent's snapshot");
    assert_eq!(fork.header.parent.as_ref().map(|p| p.inputs), Some(1));
    assert_eq!(fork.header.engine(Arc::clone(&task) as Arc<dyn Task>).memory(), Some(&memory));
}

fn headless_setup(data: &Path, record: &Path, name: &str) -> RunSetup {
    RunSetup {
        task: math_demo(),
        params: cot(),
        provider: Arc::new(crate::llm::sim::SimProvider::new(Default::default(), &crate::tasks::SimPlayers)),
        sim: None,
        concurrency: 1,
        record: Some(record.to_path_buf()),
        limits: Default::default(),
        replay_tools: None,
        unjudged: false,
        memory: Some(target(data, name)),
    }
}

/// The headless runner loads the memory before each problem, records it in the
/// session's header, and saves it after; each result says what the memory held.
#[tokio::test]
async fn headless_problems_record_the_memory_they_start_from_and_save_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let memory = seeded(&data, "study", &[("numeric approach, arithmetic_error: recheck", "numeric")]);
    let record = tmp.path().join("sessions");
    let setup = headless_setup(&data, &record, "study");
    let problems: Vec<_> = (0..2).filter_map(|i| setup.task.problem(i)).collect();
    let (_keep, rx) = Interrupts::channel();
    let done = run_headless(&setup, &problems, rx, |_| Ok(())).await;
    assert_eq!(done.results.len(), 2, "{:?}", done.stopped);
    assert!(done.stopped.is_none(), "{:?}", done.stopped);
    for r in &done.results {
        let used = r.memory.as_ref().expect("memory noted");
        assert_eq!((used.name.as_str(), used.entries_before, used.entries_after), ("study", 1, 1));
        let session = Session::load(Path::new(r.session.as_deref().expect("recorded"))).expect("loads");
        let snapshot = session.header.memory.expect("the header holds the memory");
        assert_eq!((snapshot.name.as_str(), &snapshot.memory), ("study", &memory));
    }
    assert!(data.join("memory/study.json").is_file());
    assert!(!data.join("memory/study.lock").exists(), "no lock left behind");
    let line = serde_json::to_value(&done.results[0]).expect("json");
    assert_eq!(line["memory"], serde_json::json!({"name": "study", "entries_before": 1, "entries_after": 1}));
}

#[tokio::test]
async fn a_memory_that_cannot_be_read_stops_the_run_before_it_spends() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("memory")).expect("dir");
    std::fs::write(data.join("memory/study.json"), "[]").expect("write");
    let setup = headless_setup(&data, &tmp.path().join("sessions"), "study");
    let problems: Vec<_> = (0..2).filter_map(|i| setup.task.problem(i)).collect();
    let (_keep, rx) = Interrupts::channel();
    let done = run_headless(&setup, &problems, rx, |_| Ok(())).await;
    assert!(done.results.is_empty());
    let stopped = done.stopped.expect("stopped");
    assert!(stopped.starts_with("cannot read memory study: ") && stopped.contains("study.json"), "{stopped}");
    assert!(!tmp.path().join("sessions").exists(), "nothing recorded, nothing spent");
}

#[tokio::test]
async fn a_memory_that_cannot_be_saved_stops_the_run_after_that_problem_and_keeps_its_session() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    seeded(&data, "study", &[]);
    std::fs::create_dir_all(data.join("memory/.study.json.tmp")).expect("blocker");
    let setup = headless_setup(&data, &tmp.path().join("sessions"), "study");
    let problems: Vec<_> = (0..3).filter_map(|i| setup.task.problem(i)).collect();
    let (_keep, rx) = Interrupts::channel();
    let mut reported = Vec::new();
    let done = run_headless(&setup, &problems, rx, |r| {
        reported.push(r.clone());
        Ok(())
    })
    .await;
    assert_eq!(done.results.len(), 1, "no problem starts from a memory that lost the last one's lessons");
    let stopped = done.stopped.expect("stopped");
    assert!(stopped.starts_with("cannot save memory ") && stopped.contains("study.json"), "{stopped}");
    assert_eq!(done.results[0].error.as_deref(), Some(stopped.as_str()));
    // Its line (`--out`) was written before the save was tried: a slow save, or a kill
    // during it, loses no finished problem.
    assert_eq!(reported.len(), 1);
    assert_eq!(reported[0].error, None, "reported before the save failed");
    assert_eq!(reported[0].memory.as_ref().map(|m| m.entries_after), Some(0), "the memory as the problem left it");
    let session = Session::load(Path::new(done.results[0].session.as_deref().expect("recorded"))).expect("loads");
    assert!(session.complete(), "what was recorded stays, end line included");
}

#[test]
fn math_demo_ranges_past_the_list_are_shuffled_passes_with_a_pass_facet() {
    use crate::tasks::math::demo::{pass_order, PROBLEMS};
    let task = math_demo();
    let n = PROBLEMS.len();
    assert_eq!((task.problem_count(), n), (42, 42));
    let range = crate::tasks::parse_range_within("0..100", task.problem_count(), task.range_limit()).expect("range");
    let problems: Vec<_> = range.filter_map(|i| task.problem(i)).collect();
    assert_eq!(problems.len(), 100);
    for (i, p) in problems.iter().enumerate() {
        assert_eq!(p.index, Some(i), "the index is recorded as given");
    }
    // Pass 0 is the list itself: existing ranges are unchanged, and carry no pass facet.
    for (i, p) in problems.iter().take(n).enumerate() {
        assert_eq!(p.input, PROBLEMS[i].problem);
        assert!(!task.problem_facets(p).contains_key("pass"));
    }
    for pass in 1..=2 {
        let order = pass_order(pass);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "pass {pass} is a permutation");
        assert_ne!(order, (0..n).collect::<Vec<_>>(), "pass {pass} is shuffled");
        assert_eq!(order, pass_order(pass), "and fixed");
    }
    assert_ne!(pass_order(1), pass_order(2), "each pass has its own order");
    for (i, p) in problems.iter().enumerate().skip(n) {
        assert_eq!(p.input, PROBLEMS[pass_order(i / n)[i % n]].problem, "index {i}");
        let facets = task.problem_facets(p);
        assert_eq!(facets.get("pass").map(String::as_str), Some((i / n).to_string().as_str()));
        assert!(facets.contains_key("subject") && facets.contains_key("level"));
    }
    // An open range still ends at the list; the passes end somewhere.
    assert_eq!(crate::tasks::parse_range_within("40..", 42, task.range_limit()).expect("open"), 40..42);
    let err = crate::tasks::parse_range_within("0..100000", 42, task.range_limit()).unwrap_err().to_string();
    assert!(err.contains("further passes"), "{err}");
    // Other tasks keep their bounds.
    let mc = crate::tasks::by_name("mc-demo", None).expect("mc-demo");
    assert_eq!(mc.range_limit(), mc.problem_count());
    assert!(mc.problem(mc.problem_count()).is_none());
}

/// The explorer's live runs: each loads the named memory (the template header names it)
/// as it stands when it starts, and saves it when it ends, once; a memory file that
/// cannot be read is a message and a run without a memory, not a crash.
#[test]
fn the_explorers_live_runs_load_the_memory_when_they_start_and_save_it_when_they_end() {
    use crate::tui::app::{App, Setup};
    use crate::tui::keymap::Keymap;
    use crate::tui::theme::ThemeSet;
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let name = "explorer-study";
    let memory = seeded(&data, name, &[("casework approach, off_by_one: count both ends", "casework")]);
    let id = memory.entries()[0].id;
    let task = math_demo();
    let problem = task.problem(5).expect("p5");
    let bare = headless_setup(&data, tmp.path(), name);
    let mut header = crate::runtime::headless::header_for(&bare, &problem);
    header.memory = Some(MemorySnapshot::new(name, Memory::default()));
    let setup = Setup {
        task,
        prompts: None,
        header,
        sessions_dir: tmp.path().join("sessions"),
        session_file: None,
        memory_dir: Some(data.clone()),
        limits: Default::default(),
    };
    let mut app = App::live(setup.clone(), &problem, Keymap::default(), ThemeSet::default(), "dark");
    let snapshot = app.session.header.memory.clone().expect("the run's header holds the memory");
    assert_eq!((snapshot.name.as_str(), &snapshot.memory), (name, &memory), "loaded as it stands, not the template");
    assert_eq!(app.session.run.engine.memory(), Some(&memory));
    let recorded = Session::load(&app.session_path().expect("recording")).expect("loads");
    assert_eq!(recorded.header.memory, app.session.header.memory);

    let pin = MemoryChange::Edit { id, content: None, confidence: None, pinned: Some(true) };
    app.session.run.feed(Input::command(Command::Memory { change: pin }), None);
    app.finish_recording();
    let stored = load_for(&mut store(&data), name).expect("loads");
    assert!(stored.entry(id).expect("entry").pinned, "saved when the run ended");
    // Saved once: a person's change to the file after that is not overwritten.
    store(&data).update(name, |m| Ok(m.remove(id)?)).expect("remove by hand");
    app.finish_recording();
    assert!(load_for(&mut store(&data), name).expect("loads").is_empty());
    assert!(app.session.run.memory_error.is_none());

    // A broken file: the next run says so and keeps no memory.
    std::fs::write(data.join(format!("memory/{name}.json")), "{}").expect("break it");
    let app = App::live(setup, &problem, Keymap::default(), ThemeSet::default(), "dark");
    assert!(app.session.header.memory.is_none() && app.session.run.engine.memory().is_none());
    let message = app.message.clone().unwrap_or_default();
    assert!(message.contains("cannot read memory explorer-study") && message.contains("keeps no memory"), "{message}");
}
