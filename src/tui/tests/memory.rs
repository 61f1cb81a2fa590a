//! The memory pane (`M`: entries, reliabilities, edit / pin / remove as recorded
//! commands), the backtrack-cause chooser, the transcript's memory lines and the
//! scores pane's score-part columns. Most tests set the memory on the engine by hand (and
//! in the header, as the runtime does for a memory-keeping method); the last runs ReTreVal.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::memory::{Category, EntryId, Memory, MemoryChange};
use crate::session::MemorySnapshot;
use crate::tui::app::Popup;

fn key(app: &mut App, code: KeyCode) {
    let effects = app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    settle(app, effects);
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// A memory after a few problems: a failure used on an unsolved problem, a pinned
/// success used twice on solved ones, a rewritten failure, two approaches' reliabilities.
/// Returns it with the ids (failure, success, rewritten).
fn sample_memory() -> (Memory, [EntryId; 3]) {
    let mut m = Memory::default();
    let failure = m
        .add(
            "casework approach, off_by_one: counted both endpoints of the range, so every case came out one too many",
            Category::Failure,
            "casework",
            Some("math-demo 3"),
        )
        .unwrap()
        .id();
    let success = m
        .add(
            "algebraic approach worked: name the unknown, write one equation per condition, solve and substitute back",
            Category::Success,
            "algebraic",
            Some("math-demo 1"),
        )
        .unwrap()
        .id();
    let rewritten = m
        .add("numeric approach, arithmetic_error: dropped a sign", Category::Failure, "numeric", Some("math-demo 7"))
        .unwrap()
        .id();
    m.record_use(success, true).unwrap();
    m.record_use(success, true).unwrap();
    m.record_use(failure, false).unwrap();
    m.edit(success, None, None, Some(true)).unwrap();
    m.apply_rewrite(rewritten, "numeric approach: recheck the sign of every subtraction before going on").unwrap();
    m.record_outcome("algebraic", true).unwrap();
    m.record_outcome("casework", false).unwrap();
    m.take_changes();
    (m, [failure, success, rewritten])
}

/// A live app whose run keeps `memory`: the engine starts from it and the header records it.
fn with_memory(app: &mut App, memory: &Memory) {
    app.session.run.engine.set_memory(Some(memory.clone()));
    app.session.header.memory = Some(MemorySnapshot::new("lessons", memory.clone()));
}

/// A change the method makes to the memory, arriving as the engine reports it.
fn method_change(app: &mut App, change: MemoryChange) {
    let memory = app.session.run.engine.core.memory.as_mut().unwrap();
    memory.apply(&change).unwrap();
    for change in memory.take_changes() {
        app.session.events.push(Event::Memory { change });
    }
}

fn memory_commands(app: &App) -> Vec<MemoryChange> {
    recorded_commands(&app.session_path().unwrap())
        .into_iter()
        .filter_map(|c| match c {
            Command::Memory { change } => Some(change),
            _ => None,
        })
        .collect()
}

fn entry(app: &App, id: EntryId) -> crate::memory::Entry {
    app.session.run.engine.memory().unwrap().entry(id).unwrap().clone()
}

#[test]
fn the_memory_pane_shows_entries_by_confidence_with_reliabilities_and_uses() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let (memory, [failure, _success, _]) = sample_memory();
    with_memory(&mut app, &memory);
    // This problem used the failure entry on an attempt that failed.
    method_change(&mut app, MemoryChange::RecordUse { id: failure, success: false });
    key(&mut app, KeyCode::Char('M'));
    assert!(app.memory_pane.is_some(), "M opens the memory pane");
    let small = render(&mut app, 80, 24);
    insta::assert_snapshot!("memory_pane_80x24", small);
    let large = render(&mut app, 220, 60);
    insta::assert_snapshot!("memory_pane_220x60", large);
    // The list: highest confidence first, each with its numbers; the pinned one marked.
    let success_at = large.find("#2 success algebraic conf 0.70 hits 2/0 v1 📌").expect(&large);
    let rewritten_at = large.find("#3 failure numeric   conf 0.50 hits 0/0 v2").expect(&large);
    let failure_at = large.find("#1 failure casework  conf 0.30 hits 0/2 v1").expect(&large);
    assert!(success_at < rewritten_at && rewritten_at < failure_at, "{large}");
    assert!(large.contains("reliability algebraic 0.60 · casework 0.40"), "{large}");
    assert!(large.contains("this problem: #1 used ✗1"), "{large}");
    // The selected (first) entry in full in the detail area.
    assert!(large.contains("write one equation per condition, solve and substitute back"), "{large}");
    // M again closes it, and the tree is back.
    key(&mut app, KeyCode::Char('M'));
    assert!(app.memory_pane.is_none());
    assert!(!render(&mut app, 80, 24).contains("reliability"));
}

#[test]
fn the_memory_pane_says_what_each_lessons_outcome_was_checked_against() {
    use crate::memory::Evidence;
    let dir = tempfile::tempdir().unwrap();
    for (evidence, said) in [
        (Some(Evidence::Gold), "checked against the gold answer"),
        (Some(Evidence::SelfValidated), "only self-validated"),
        (None, ""),
    ] {
        let mut m = Memory::default();
        let lesson = "casework approach worked: list the cases by the first digit";
        match evidence {
            Some(e) => m.add_with_evidence(lesson, Category::Success, "casework", Some("math-demo 2"), e),
            None => m.add(lesson, Category::Success, "casework", Some("math-demo 2")),
        }
        .unwrap();
        m.take_changes();
        let mut app = live(dir.path(), Params::default());
        with_memory(&mut app, &m);
        key(&mut app, KeyCode::Char('M'));
        let screen = render(&mut app, 220, 60);
        assert!(screen.contains(lesson), "{screen}");
        for other in ["checked against the gold answer", "only self-validated"] {
            assert_eq!(screen.contains(other), other == said, "{evidence:?}: {screen}");
        }
    }
}

#[test]
fn a_run_without_memory_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    key(&mut app, KeyCode::Char('M'));
    let screen = render(&mut app, 80, 24);
    let text = crate::tui::ui::memory::no_memory_text();
    assert!(text.starts_with("this run keeps no memory"), "{text}");
    assert!(screen.contains("this run keeps no memory"), "{screen}");
    // Its keys say why nothing happens, and send nothing.
    key(&mut app, KeyCode::Char('p'));
    assert_eq!(app.message.as_deref(), Some("this run keeps no memory"));
    assert!(memory_commands(&app).is_empty());
}

#[test]
fn pin_edit_and_remove_from_the_pane_are_recorded_commands() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let (memory, [failure, success, rewritten]) = sample_memory();
    with_memory(&mut app, &memory);
    key(&mut app, KeyCode::Char('M'));
    // The first entry (the pinned success) is selected: p unpins it.
    key(&mut app, KeyCode::Char('p'));
    let unpin = MemoryChange::Edit { id: success, content: None, confidence: None, pinned: Some(false) };
    assert_eq!(memory_commands(&app), vec![unpin.clone()]);
    assert!(!entry(&app, success).pinned, "the engine applied it");
    assert!(!render(&mut app, 220, 60).contains("📌"), "the screen says so");
    // Down to the next approach (numeric): p there says what to select, and sends nothing.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char('p'));
    assert!(app.message.as_deref().is_some_and(|m| m.starts_with("an approach is selected")), "{:?}", app.message);
    assert_eq!(memory_commands(&app).len(), 1);
    // Down again: its entry (the rewritten failure); p pins it.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char('p'));
    let pin = MemoryChange::Edit { id: rewritten, content: None, confidence: None, pinned: Some(true) };
    assert_eq!(memory_commands(&app), vec![unpin.clone(), pin.clone()]);
    assert!(render(&mut app, 220, 60).contains("#3 failure numeric   conf 0.50 hits 0/0 v2 📌"));

    // e opens the editor on the entry's text; typed text and Enter send the new text.
    key(&mut app, KeyCode::Char('e'));
    let Some(Popup::MemoryEdit { id, editor }) = &app.popup else { panic!("e opens the memory editor") };
    assert_eq!(*id, rewritten);
    assert_eq!(editor.lines().join("\n"), entry(&app, rewritten).content);
    type_text(&mut app, " twice");
    insta::assert_snapshot!("memory_edit_80x24", render(&mut app, 80, 24));
    key(&mut app, KeyCode::Enter);
    assert!(app.popup.is_none());
    let text = "numeric approach: recheck the sign of every subtraction before going on twice".to_string();
    let edit = MemoryChange::Edit { id: rewritten, content: Some(text.clone()), confidence: None, pinned: None };
    assert_eq!(memory_commands(&app), vec![unpin.clone(), pin.clone(), edit.clone()]);
    assert_eq!(entry(&app, rewritten).content, text);
    assert_eq!(entry(&app, rewritten).version, 3);
    // An unchanged text sends nothing; Esc cancels.
    key(&mut app, KeyCode::Char('e'));
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.message.as_deref(), Some("memory entry #3 unchanged"));
    key(&mut app, KeyCode::Char('e'));
    type_text(&mut app, "xyz");
    key(&mut app, KeyCode::Esc);
    assert_eq!(memory_commands(&app).len(), 3);

    // d asks first: n keeps the entry, y removes it.
    key(&mut app, KeyCode::End);
    assert_eq!(app.memory_selected().map(|e| e.id), Some(failure));
    key(&mut app, KeyCode::Char('d'));
    assert!(matches!(app.popup, Some(Popup::MemoryRemove { id }) if id == failure));
    assert!(render(&mut app, 80, 24).contains("Remove memory entry #1?"));
    key(&mut app, KeyCode::Char('n'));
    assert_eq!(memory_commands(&app).len(), 3);
    assert!(app.session.run.engine.memory().unwrap().entry(failure).is_some());
    key(&mut app, KeyCode::Char('d'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(memory_commands(&app), vec![unpin, pin, edit, MemoryChange::Remove { id: failure }]);
    assert!(app.session.run.engine.memory().unwrap().entry(failure).is_none());
    assert_eq!(app.session.run.engine.memory().unwrap().len(), 2);
    // The selection falls on what is there now, and the screen lists two entries.
    assert_eq!(app.memory_selected().map(|e| e.id), Some(rewritten));
    let screen = render(&mut app, 220, 60);
    assert!(screen.contains("2 entries") && !screen.contains("#1 failure"), "{screen}");
    // The transcript reads the person's changes as the engine logged them, once each.
    let view = ui::View::new(&app, app.selected());
    let log: Vec<String> = ui::transcript::lines(&view).iter().map(|l| l.to_string()).collect();
    assert_eq!(log.iter().filter(|l| l.contains("memory entry 3")).count(), 2, "{log:?}");
    assert!(log.iter().any(|l| l == "removed memory entry 1"), "{log:?}");
    assert!(!log.iter().any(|l| l.starts_with("memory: entry #1 removed")), "not twice: {log:?}");
}

#[test]
fn a_replay_shows_the_memory_as_of_its_cursor_and_refuses_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (memory, [_, success, _]) = sample_memory();
    let mut setup = setup(dir.path(), Params::default());
    // The live run starts from the named memory as the store holds it.
    crate::memory::MemoryStore::new(&dir.path().join("data")).save("lessons", &memory).unwrap();
    setup.header.memory = Some(MemorySnapshot::new("lessons", crate::memory::Memory::default()));
    let problem = Problem { index: Some(900), input: "4 5 6 10".into() };
    let mut app = App::live(setup.clone(), &problem, Keymap::default(), ThemeSet::default(), "dark");
    app.session.run.engine.set_memory(Some(memory.clone()));
    act(&mut app, Action::Step);
    key(&mut app, KeyCode::Char('M'));
    key(&mut app, KeyCode::Char('p'));
    assert!(!entry(&app, success).pinned);
    act(&mut app, Action::Step);
    let path = app.session_path().unwrap();
    app.finish_recording();

    let session = Session::load(&path).unwrap();
    let mut replay = App::replay(setup, session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    replay.seek(usize::MAX);
    assert!(!entry(&replay, success).pinned, "at the end: unpinned, as recorded");
    replay.seek(0);
    assert!(entry(&replay, success).pinned, "at the start: the header's snapshot");
    key(&mut replay, KeyCode::Char('M'));
    assert!(render(&mut replay, 220, 60).contains("📌"));
    // A replay is read-only: p says so and records nothing.
    key(&mut replay, KeyCode::Char('p'));
    assert!(replay.message.as_deref().unwrap_or("").contains("read-only replay"), "{:?}", replay.message);
    assert!(entry(&replay, success).pinned);
    replay.seek(usize::MAX);
    assert!(!render(&mut replay, 220, 60).contains("📌"), "the pane follows the cursor");
}

#[test]
fn the_transcript_reads_memory_changes_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let (memory, [failure, success, rewritten]) = sample_memory();
    with_memory(&mut app, &memory);
    method_change(&mut app, MemoryChange::RecordUse { id: success, success: true });
    method_change(
        &mut app,
        MemoryChange::Add {
            content: "geometric approach, wrong_constraint: used the diameter as the radius".into(),
            category: Category::Failure,
            approach: "geometric".into(),
            source: Some("game24 900".into()),
            evidence: None,
        },
    );
    method_change(&mut app, MemoryChange::AddSignal { id: rewritten, signal: "too vague to act on".into() });
    method_change(&mut app, MemoryChange::Rewrite { id: rewritten, content: "numeric: sign check".into() });
    method_change(&mut app, MemoryChange::RecordOutcome { approach: "casework".into(), success: false });
    method_change(&mut app, MemoryChange::RecordUse { id: failure, success: false });
    method_change(&mut app, MemoryChange::Consolidate);
    let view = ui::View::new(&app, app.selected());
    let log: Vec<String> = ui::transcript::lines(&view).iter().map(|l| l.to_string()).collect();
    let memory_lines: Vec<&String> = log.iter().filter(|l| l.starts_with("memory:")).collect();
    assert_eq!(
        memory_lines,
        vec![
            "memory: entry #2 used (solved), confidence 0.80",
            "memory: added failure entry #4 (geometric)",
            "memory: entry #3 critiqued: too vague to act on",
            "memory: entry #3 rewritten (v3)",
            "memory: casework approach failed, reliability 0.32",
            "memory: entry #1 used (not solved), confidence 0.30",
            "memory: consolidated, nothing to retire or merge",
        ],
        "{log:?}"
    );
    // Below the retiring line, consolidation retires it; the line names what it did.
    method_change(&mut app, MemoryChange::RecordUse { id: failure, success: false });
    method_change(&mut app, MemoryChange::RecordUse { id: failure, success: false });
    method_change(&mut app, MemoryChange::Consolidate);
    let view = ui::View::new(&app, app.selected());
    let log: Vec<String> = ui::transcript::lines(&view).iter().map(|l| l.to_string()).collect();
    assert_eq!(log.last().map(String::as_str), Some("memory: consolidated, retired #1"), "{log:?}");
    // The pane marks what this problem used.
    let uses = app.memory_uses();
    assert_eq!(uses[&success].solved, 1);
    assert_eq!(uses[&failure].unsolved, 3);
    assert_eq!(uses[&rewritten].signals, 1);
}

#[test]
fn b_asks_for_the_cause_when_the_method_names_causes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default().with("breadth", 2));
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    const CAUSES: [&str; 4] = ["arithmetic_error", "logic_error", "off_by_one", "other"];
    let backtracks = |app: &App| -> Vec<Command> {
        recorded_commands(&app.session_path().unwrap())
            .into_iter()
            .filter(|c| matches!(c, Command::Backtrack { .. }))
            .collect()
    };
    // The chooser opens; Esc sends nothing.
    let effects = app.backtrack_asking(&CAUSES);
    assert!(effects.is_empty());
    assert!(matches!(&app.popup, Some(Popup::Causes(c)) if c.causes == CAUSES && c.selected == 0));
    let screen = render(&mut app, 80, 24);
    insta::assert_snapshot!("causes_chooser_80x24", screen);
    assert!(screen.contains("why did this branch fail?") && screen.contains("off by one"), "{screen}");
    key(&mut app, KeyCode::Esc);
    assert!(app.popup.is_none());
    assert!(backtracks(&app).is_empty());
    // A letter jumps to the cause starting with it; Enter picks it.
    app.backtrack_asking(&CAUSES);
    key(&mut app, KeyCode::Char('o'));
    assert!(matches!(&app.popup, Some(Popup::Causes(c)) if c.selected == 2));
    key(&mut app, KeyCode::Char('o'));
    assert!(matches!(&app.popup, Some(Popup::Causes(c)) if c.selected == 3), "again: the next with that letter");
    key(&mut app, KeyCode::Char('2'));
    assert!(matches!(&app.popup, Some(Popup::Causes(c)) if c.selected == 1), "a digit: that line");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert!(app.popup.is_none());
    assert_eq!(backtracks(&app), vec![Command::Backtrack { to: None, cause: Some("off_by_one".into()) }]);
    // This method names no causes: b backtracks at once, with none.
    assert!(app.session.run.engine.view().backtrack_causes.is_empty());
    key(&mut app, KeyCode::Char('b'));
    assert!(app.popup.is_none());
    assert_eq!(
        backtracks(&app),
        vec![
            Command::Backtrack { to: None, cause: Some("off_by_one".into()) },
            Command::Backtrack { to: None, cause: None }
        ]
    );
}

#[test]
fn the_scores_pane_shows_score_parts_as_columns_and_the_detail_their_notes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let ranked = crate::tui::state::scores::current_candidates(&app).iter().map(|n| n.id).collect::<Vec<_>>();
    assert!(ranked.len() >= 3, "{ranked:?}");
    let parts: [(f64, Option<f64>, f64); 3] = [(0.8, Some(0.7), 0.12), (0.6, None, 0.0), (0.4, Some(0.2), 0.05)];
    for (&id, (local, cross, penalty)) in ranked.iter().zip(parts) {
        let total = local * 0.5 + cross.unwrap_or(local) * 0.5 - penalty;
        let mut metrics = vec![("local", local)];
        if let Some(c) = cross {
            metrics.push(("cross", c));
        }
        metrics.extend([("penalty", penalty), ("total", total)]);
        let core = &mut app.session.run.engine.core;
        core.set_metrics(id, &metrics);
        core.set_label(id, format!("casework · {}", id.0));
        core.set_note(id, "history", "casework approach, off_by_one: counted both endpoints");
        core.set_note(id, "critique", "the last case double-counts 10");
    }
    // Changed behind the app's back (a method sets these while handling an input): a
    // change of the engine, as `feed` marks one.
    app.session.revision += 1;
    select(&mut app, ranked[0]);
    let small = render(&mut app, 80, 24);
    let area = app.areas[Pane::Scores.index()];
    let pane: Vec<String> = small
        .lines()
        .skip(area.y as usize)
        .take(area.height as usize)
        .map(|l| l.trim_matches('"').chars().skip(area.x as usize).take(area.width as usize).collect())
        .collect();
    insta::assert_snapshot!("scores_parts_80x24", pane.join("\n"));
    assert!(pane.iter().any(|l| l.contains("loc   crs   pen   tot")), "{pane:?}");
    assert!(pane.iter().any(|l| l.contains("0.80  0.70 −0.12  0.63")), "{pane:?}");
    assert!(pane.iter().any(|l| l.contains("0.60     –  0.00  0.60")), "no cross-check: a dash: {pane:?}");
    let large = render(&mut app, 220, 60);
    assert!(large.contains("local   cross penalty   total"), "{large}");
    assert!(large.contains("casework · "), "the label beside the parts: {large}");
    // The detail pane shows the node's notes under their headings.
    assert!(large.contains("History") && large.contains("counted both endpoints"), "{large}");
    assert!(large.contains("Critique") && large.contains("the last case double-counts 10"), "{large}");
}

#[test]
fn retreval_in_the_explorer_asks_for_the_cause_scores_in_parts_and_shows_what_it_learnt() {
    use crate::engine::methods::retreval::FailureCause;
    let dir = tempfile::tempdir().unwrap();
    let task = crate::tasks::build("math-demo", &crate::tasks::TaskOptions::default(), &mut Vec::new()).unwrap();
    let mut tools = crate::runtime::tools::ToolRunner::new(task.tools().unwrap());
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::retreval::method::KIND));
    s.task = Arc::clone(&task);
    s.header.task = "math-demo".into();
    s.header.memory = Some(MemorySnapshot::new("retreval-math-demo", Memory::default()));
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
    let causes: Vec<&str> = FailureCause::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(app.session.run.engine.view().backtrack_causes, causes.as_slice());
    // Before any attempt is scored there is nothing to backtrack from: b says so at once,
    // without asking for a cause first (issue 28).
    let fx = app.handle_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::NONE));
    settle_react(&mut app, fx, &mut tools);
    assert!(app.popup.is_none(), "no cause chooser when nothing can be backtracked");
    assert!(
        app.session.events.iter().any(
            |e| matches!(e, crate::engine::Event::Rejected { reason } if reason.contains("nothing to backtrack from"))
        ),
        "the engine's reason is shown"
    );
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("nothing to backtrack"), "{screen}");
    // Step until the root-level attempts are scored.
    let scored = |app: &App| app.session.run.engine.tree().nodes().filter(|n| n.metrics.contains_key("total")).count();
    for _ in 0..200 {
        if scored(&app) >= 2 && !app.session.run.engine.core.has_pending() {
            break;
        }
        let fx = app.handle_action(Action::Step);
        settle_react(&mut app, fx, &mut tools);
    }
    assert!(scored(&app) >= 2, "attempts get scored step by step");
    // The scores pane ranks the whole round of attempts, not one attempt's last step.
    let ranked: Vec<_> = crate::tui::state::scores::current_candidates(&app).iter().map(|n| n.id).collect();
    let totals: Vec<_> =
        app.session.run.engine.tree().nodes().filter(|n| n.metrics.contains_key("total")).map(|n| n.id).collect();
    assert!(ranked.len() >= 2 && totals.iter().all(|t| ranked.contains(t)), "ranked {ranked:?}, scored {totals:?}");
    let best =
        app.session.run.engine.tree().nodes().filter(|n| n.metrics.contains_key("total")).map(|n| n.id).last().unwrap();
    select(&mut app, best);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("loc") && screen.contains("tot"), "the scores pane shows the parts:\n{screen}");
    // b asks why; Enter on the first cause records it with the backtrack.
    let fx = app.handle_key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::NONE));
    assert!(fx.is_empty());
    assert!(matches!(&app.popup, Some(Popup::Causes(_))), "the chooser opens");
    let fx = app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    settle_react(&mut app, fx, &mut tools);
    let backtracks: Vec<Command> = recorded_commands(&app.session_path().unwrap())
        .into_iter()
        .filter(|c| matches!(c, Command::Backtrack { .. }))
        .collect();
    // The first, refused, is recorded as every command is; the second carries the cause.
    assert_eq!(
        backtracks,
        [
            Command::Backtrack { to: None, cause: None },
            Command::Backtrack { to: None, cause: Some("arithmetic_error".into()) }
        ]
    );
    // The person's cause is a failure entry in the memory at once.
    let memory = app.session.run.engine.memory().unwrap();
    assert!(
        memory.entries().iter().any(|e| e.category == Category::Failure && e.content.contains("arithmetic_error")),
        "{:?}",
        memory.entries()
    );
    // Run to the end: M lists the failure entry, the transcript says what the memory learnt.
    let fx = app.handle_action(Action::RunPause);
    settle_react(&mut app, fx, &mut tools);
    assert!(app.session.run.engine.is_finished());
    key(&mut app, KeyCode::Char('M'));
    let screen = render(&mut app, 220, 60);
    assert!(screen.contains("failure") && screen.contains("arithmetic_error"), "{screen}");
    assert!(
        screen.contains("memory: added success entry") && screen.contains("memory: consolidated"),
        "the transcript tells what the memory learnt:\n{screen}"
    );
    // The finished run's memory is on disk already, before any quit (issue 28), and
    // leaving writes nothing twice.
    let store = crate::memory::MemoryStore::new(&dir.path().join("data"));
    let saved = store.load("retreval-math-demo").unwrap().expect("the memory file exists");
    assert_eq!(saved.entries(), app.session.run.engine.memory().unwrap().entries(), "saved when the run finished");
    app.finish_recording();
    assert_eq!(store.load("retreval-math-demo").unwrap().unwrap().entries(), saved.entries(), "not applied twice");
}

#[test]
fn the_memory_pane_groups_entries_by_approach_and_folds_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let (mut memory, [failure, success, rewritten]) = sample_memory();
    // A second casework lesson, more trusted than the first: casework now leads numeric.
    let second = memory
        .add("casework approach worked: list the cases by the remainder", Category::Success, "casework", None)
        .unwrap()
        .id();
    memory.edit(second, None, Some(0.6), None).unwrap();
    memory.take_changes();
    with_memory(&mut app, &memory);
    key(&mut app, KeyCode::Char('M'));
    let groups: Vec<(String, Vec<EntryId>)> = crate::tui::app::by_approach(app.session.run.engine.memory().unwrap())
        .into_iter()
        .map(|(a, es)| (a, es.iter().map(|e| e.id).collect()))
        .collect();
    let want = [("algebraic", vec![success]), ("casework", vec![second, failure]), ("numeric", vec![rewritten])];
    assert_eq!(groups, want.map(|(a, ids)| (a.to_string(), ids)), "by the most trusted entry, then by confidence");
    for (w, h) in [(80, 24), (160, 45)] {
        let screen = render(&mut app, w, h);
        let at = |text: &str| screen.find(text).unwrap_or_else(|| panic!("{w}x{h}: {text}\n{screen}"));
        assert!(at("▼ algebraic  1 entry") < at("▼ casework  2 entries · reliability 0.40"), "{screen}");
        assert!(
            at("#4 success casework") < at("#1 failure casework") && at("#1 failure") < at("▼ numeric"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("memory_by_approach_{w}x{h}"), screen);
    }
    // Down over the casework approach to its first entry; ← goes up to the approach, ← again folds it.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    assert_eq!(app.memory_selected().map(|e| e.id), Some(second));
    key(&mut app, KeyCode::Left);
    assert_eq!(app.memory_selected(), None, "the approach is selected");
    key(&mut app, KeyCode::Left);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("▶ casework  2 entries") && !screen.contains("#4 success"), "{screen}");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.memory_selected().map(|e| e.id), None, "the numeric approach, past the folded entries");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.memory_selected().map(|e| e.id), Some(rewritten));
    // → on the approach unfolds it again.
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Right);
    assert!(render(&mut app, 80, 24).contains("#4 success casework"));
}

/// While the memory pane covers the tree, keys that act on the tree's selected node (x
/// expand, v re-evaluate, b backtrack) or move among the hidden panes
/// do nothing, send nothing and record nothing; they say why. j and k move the pane's
/// selection, and stepping the search still works.
#[test]
fn the_memory_pane_keeps_the_keys_that_would_steer_the_hidden_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let (memory, _) = sample_memory();
    with_memory(&mut app, &memory);
    key(&mut app, KeyCode::Char('M'));
    let before_tree = app.session.run.engine.tree().len();
    let before_selected = app.selected();
    let before_commands = recorded_commands(&app.session_path().unwrap()).len();
    let start = app.memory_index().unwrap();
    for c in ['x', 'v', 'c', 'b', 'u', 'a', '*', '/', 'z', 'y', '1', 'j', 'j', 'k', 'j'] {
        key(&mut app, KeyCode::Char(c));
        assert!(app.popup.is_none(), "{c} opened nothing behind the pane");
        assert!(app.memory_pane.is_some(), "{c}: the pane stays");
    }
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.session.run.engine.tree().len(), before_tree, "nothing expanded");
    assert_eq!(app.selected(), before_selected, "the tree's selection did not move");
    assert_eq!(recorded_commands(&app.session_path().unwrap()).len(), before_commands, "nothing recorded");
    assert_eq!(app.memory_index(), Some(start + 2), "j and k moved the pane's own selection");
    assert!(app.message.as_deref().is_some_and(|m| m.contains("closes the pane first")), "{:?}", app.message);
    // Stepping the search is not the hidden tree's selection: it still works.
    key(&mut app, KeyCode::Char(' '));
    assert!(recorded_commands(&app.session_path().unwrap()).len() > before_commands, "space stepped the search");
    // Closed, the same key reaches the tree.
    key(&mut app, KeyCode::Esc);
    app.message = None;
    key(&mut app, KeyCode::Char('x'));
    assert!(!app.message.as_deref().is_some_and(|m| m.contains("closes the pane first")), "{:?}", app.message);
}
