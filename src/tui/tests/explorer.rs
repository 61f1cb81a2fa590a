//! Issue 28, the explorer at 80×24 (and 160×45) after every command: page keys by
//! the pane's height, the scores pane from the top with its cut-off in view, the ReAct
//! transcript following the selection, messages that wrap at words, paragraphs kept,
//! the ReAct editor holding only the step, and the small ones (status bar, ctrl-u,
//! save-as message).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::tui::app::Popup;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// The words of `rows`, in order (a word cut across two rows shows as two words).
fn words(rows: &[String]) -> Vec<String> {
    rows.iter().flat_map(|r| r.split_whitespace().map(str::to_string).collect::<Vec<_>>()).collect()
}

/// A live BFS two levels down (propose and value twice): many candidates, long prompts and replies.
fn bfs_after_a_step(dir: &Path) -> App {
    let mut app = live(dir, Params::default());
    for _ in 0..4 {
        act(&mut app, Action::Step);
    }
    assert!(app.session.run.engine.tree().len() > 20, "enough candidates to page through");
    app
}

#[test]
fn page_keys_move_by_the_panes_height_keeping_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (w, h) in SIZES {
        let mut app = bfs_after_a_step(dir.path());
        select(&mut app, NodeId(1));

        // Detail: the last line of a page is the first of the next; the end is never passed.
        app.view.focus = Pane::Detail;
        let before = pane_rows(&mut app, Pane::Detail, w, h);
        assert!(app.detail.limit.get() as usize > before.len(), "{w}x{h}: the detail is longer than two pages");
        act(&mut app, Action::PageDown);
        let after = pane_rows(&mut app, Pane::Detail, w, h);
        assert_eq!(app.detail.scroll as usize, before.len() - 1, "{w}x{h}");
        assert_eq!(after[0], before[before.len() - 1], "{w}x{h}: one line of overlap");
        act(&mut app, Action::PageUp);
        assert_eq!(app.detail.scroll, 0);
        for _ in 0..200 {
            act(&mut app, Action::PageDown);
        }
        let end = pane_rows(&mut app, Pane::Detail, w, h);
        assert_eq!(app.detail.scroll, app.detail.limit.get(), "{w}x{h}");
        assert!(!end[end.len() - 1].trim().is_empty(), "{w}x{h}: the pane is full at the end: {end:#?}");

        // Transcript (the search's log): PageUp from the newest line keeps one line.
        app.view.focus = Pane::Transcript;
        let before = pane_rows(&mut app, Pane::Transcript, w, h);
        if app.transcript.limit.get().0 > 0 {
            act(&mut app, Action::PageUp);
            let after = pane_rows(&mut app, Pane::Transcript, w, h);
            let moved = (before.len() - 1).min(usize::from(app.transcript.limit.get().0));
            assert_eq!(app.transcript.scroll as usize, moved, "{w}x{h}");
            if moved == before.len() - 1 {
                assert_eq!(after[after.len() - 1], before[0], "{w}x{h}: one line of overlap");
            }
        }

        // Tree: the selection moves by the rows shown less one.
        app.view.focus = Pane::Tree;
        act(&mut app, Action::Top);
        let rows = pane_rows(&mut app, Pane::Tree, w, h).len();
        act(&mut app, Action::PageDown);
        let tree_rows = pane_rows(&mut app, Pane::Tree, w, h);
        let marked = tree_rows.iter().position(|r| r.contains(&format!(" {} ", app.selected())));
        assert_eq!(marked, Some(rows - 1), "{w}x{h}: {tree_rows:#?}");

        // Scores: down by its rows less one, never past the last.
        app.view.focus = Pane::Scores;
        app.scores.scroll = 0;
        let shown = pane_rows(&mut app, Pane::Scores, w, h).len();
        act(&mut app, Action::PageDown);
        assert_eq!(
            usize::from(app.scores.scroll),
            (shown - 1).min(crate::tui::state::scores::max_scroll(&app)),
            "{w}x{h}"
        );
        for _ in 0..50 {
            act(&mut app, Action::PageDown);
        }
        assert_eq!(usize::from(app.scores.scroll), crate::tui::state::scores::max_scroll(&app), "{w}x{h}");
    }
}

#[test]
fn the_help_popup_pages_and_scrolls_to_its_ends_without_closing() {
    let dir = tempfile::tempdir().unwrap();
    for (w, h) in SIZES {
        let mut app = live(dir.path(), Params::default());
        app.handle_action(Action::Help);
        let first = render(&mut app, w, h);
        let (shown, limit) = app.help.get();
        assert!(limit > 0, "{w}x{h}: the help is longer than the screen");
        let scroll = |app: &App| match &app.popup {
            Some(Popup::Help { scroll }) => *scroll,
            _ => panic!("the help stays open"),
        };
        app.handle_key(key(KeyCode::PageDown));
        assert_eq!(scroll(&app), (shown - 1).min(limit), "{w}x{h}");
        for code in [KeyCode::End, KeyCode::Home, KeyCode::Char('G'), KeyCode::Char('g')] {
            app.handle_key(key(code));
            let expected = if matches!(code, KeyCode::End | KeyCode::Char('G')) { limit } else { 0 };
            assert_eq!(scroll(&app), expected, "{w}x{h}: {code:?}");
        }
        for _ in 0..100 {
            app.handle_key(key(KeyCode::PageDown));
        }
        assert_eq!(scroll(&app), limit, "{w}x{h}: PageDown stops at the end");
        let last = render(&mut app, w, h);
        assert!(last.contains("[badge]"), "{w}x{h}: the help's last line shows at its end:\n{last}");
        // The focused pane's keys come first.
        assert!(!first.contains("[badge]") && first.contains("The Tree pane (focused)"), "{w}x{h}:\n{first}");
        app.handle_key(key(KeyCode::Esc));
        assert!(app.popup.is_none());
    }
}

#[test]
fn the_scores_pane_goes_back_to_the_top_on_a_new_step_a_new_run_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = bfs_after_a_step(dir.path());
    render(&mut app, 80, 24);
    app.view.focus = Pane::Scores;
    act(&mut app, Action::PageDown);
    assert!(app.scores.scroll > 0);
    act(&mut app, Action::Step);
    assert_eq!(app.scores.scroll, 0, "a new step");
    act(&mut app, Action::PageDown);
    assert!(app.scores.scroll > 0);
    act(&mut app, Action::Restart);
    assert_eq!(app.scores.scroll, 0, "R");
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    render(&mut app, 80, 24);
    act(&mut app, Action::PageDown);
    assert!(app.scores.scroll > 0);
    app.answer(Prompting::NewInput, "1 2 3 4");
    assert_eq!(app.scores.scroll, 0, "a new run");
}

#[test]
fn the_beam_cut_off_shows_with_the_best_rows_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = bfs_after_a_step(dir.path());
    let (kept, _) = beam_split(&mut app);
    for (w, h) in SIZES {
        let rows = pane_rows(&mut app, Pane::Scores, w, h);
        let cut = rows.iter().position(|r| r.contains("beam b=5"));
        let cut = cut.unwrap_or_else(|| panic!("{w}x{h}: the cut-off line shows: {rows:#?}"));
        assert_eq!(row_node(&rows[0]), Some(kept[0]), "{w}x{h}: the best row first: {rows:#?}");
        assert!(cut > 0 && cut + 1 < rows.len(), "{w}x{h}: rows on both sides of the cut: {rows:#?}");
        let below = row_node(&rows[cut + 1]).unwrap();
        assert!(!kept.contains(&below), "{w}x{h}: under the line, one the beam dropped: {rows:#?}");
    }
}

#[test]
fn the_react_transcript_follows_the_selection() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _tools) = react_on_qa_demo(dir.path());
    let tree = app.session.run.engine.tree();
    let mut steps = vec![];
    let mut at = tree.root();
    while let Some(&next) = tree.node(at).children.last() {
        steps.push(next);
        at = next;
    }
    assert!(steps.len() >= 3, "a trajectory of several steps");
    for (w, h) in SIZES {
        // From the last step (where the transcript rested at its end) up to the question.
        select(&mut app, *steps.last().unwrap());
        pane_rows(&mut app, Pane::Transcript, w, h);
        app.view.focus = Pane::Tree;
        act(&mut app, Action::Top);
        let rows = pane_rows(&mut app, Pane::Transcript, w, h);
        assert!(rows[0].starts_with("Question:"), "{w}x{h}: the question shows the top: {rows:#?}");
        for (k, &step) in steps.iter().enumerate() {
            select(&mut app, step);
            let rows = pane_rows(&mut app, Pane::Transcript, w, h);
            let n = app.session.run.engine.tree().node(step).step.as_ref().map(|s| s.n).unwrap_or(k + 1);
            let thought = format!("▶ Thought {n}:");
            assert!(
                rows.iter().any(|r| r.starts_with(&thought)),
                "{w}x{h}: step {n}'s thought is on screen: {rows:#?}"
            );
        }
    }
}

#[test]
fn scores_pane_messages_wrap_at_words_and_say_what_the_pane_shows() {
    let dir = tempfile::tempdir().unwrap();
    // ReAct scores nothing: said in whole words at 80 columns.
    let mut app = qa_live(dir.path(), Params::new(crate::engine::methods::react::KIND));
    for (w, h) in SIZES {
        let rows = pane_rows(&mut app, Pane::Scores, w, h);
        let said: Vec<String> = words(&rows);
        let message = "react scores nothing: its steps are in the transcript";
        assert_eq!(said.join(" "), message, "{w}x{h}: {rows:#?}");
    }
    // ReTreVal says its scores come later, as columns.
    let mut app = demo_opened(dir.path(), 6);
    assert_eq!(app.session.header.params.method, crate::engine::methods::retreval::method::KIND);
    app.seek(0);
    for (w, h) in SIZES {
        let rows = pane_rows(&mut app, Pane::Scores, w, h);
        let said = words(&rows).join(" ");
        assert!(said.contains("(loc crs pen tot)"), "{w}x{h}: {rows:#?}");
        assert!(!said.contains("scores nothing"), "{w}x{h}: {rows:#?}");
        for word in said.split_whitespace() {
            let full = "retreval: each round's attempts show here with their scores (loc crs pen tot) once they are \
                        scored; its steps are in the transcript";
            assert!(full.split_whitespace().any(|x| x == word), "{w}x{h}: {word:?} is cut: {rows:#?}");
        }
    }
    // A read-only replay asks for no key it does not take.
    for demo in [0, 4] {
        let mut app = demo_opened(dir.path(), demo);
        app.seek(0);
        for (w, h) in SIZES {
            let rows = pane_rows(&mut app, Pane::Scores, w, h);
            let said = words(&rows).join(" ");
            assert!(!said.is_empty() && !said.contains("press"), "demo {demo} {w}x{h}: {rows:#?}");
            if demo == 0 {
                assert!(said.contains("no evaluations yet at this point of the replay"), "{w}x{h}: {rows:#?}");
            }
        }
    }
}

/// A live run of `method` on the writing task, finished by the sim.
fn writing_run(dir: &Path, method: crate::engine::MethodKind) -> App {
    let task: Arc<dyn TaskSource> = Arc::new(crate::tasks::writing::Writing::builtin());
    let mut s = setup(dir, Params::new(method));
    s.task = Arc::clone(&task);
    s.header.task = "writing".into();
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
    act(&mut app, Action::RunPause);
    assert!(app.session.run.engine.is_finished());
    app
}

#[test]
fn a_passage_keeps_its_paragraph_breaks_in_the_transcript_and_the_edit_popup() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = writing_run(dir.path(), crate::engine::methods::cot::KIND);
    let answer = app.session.run.engine.outcome().and_then(|o| o.answer.clone()).unwrap();
    let paragraphs: Vec<&str> = answer.split("\n\n").collect();
    assert!(paragraphs.len() >= 2, "the sim writes paragraphs: {answer:?}");
    // Where two paragraphs meet, run together if the break were lost (`hands.The`).
    let glued = format!(
        "{}{}",
        paragraphs[0].split_whitespace().last().unwrap(),
        paragraphs[1].split_whitespace().next().unwrap()
    );
    let view = ui::View::new(&app, app.selected());
    let log: Vec<String> = ui::transcript::lines(&view).iter().map(|l| l.to_string()).collect();
    assert!(log.iter().any(|l| l.trim().is_empty()), "a blank line between paragraphs: {log:#?}");
    assert!(!log.iter().any(|l| l.contains(&glued)), "{glued:?}: {log:#?}");
    let finished = log.iter().position(|l| l.starts_with("finished:")).unwrap();
    assert_eq!(log[finished + 1], "", "{log:#?}");
    for (w, h) in SIZES {
        let screen = render(&mut app, w, h);
        assert!(!screen.contains(&glued), "{w}x{h}:\n{screen}");
    }

    // The edit popup holds the passage line by line, blank lines too, and gives it back whole.
    let tree = app.session.run.engine.tree();
    let node = tree.nodes().find(|n| n.parent.is_some() && n.thought.contains("\n\n")).map(|n| n.id).unwrap();
    select(&mut app, node);
    app.handle_action(Action::Edit);
    let Some(Popup::Edit { editor, .. }) = &app.popup else { panic!("the edit popup is open") };
    assert!(editor.lines().iter().any(|l| l.is_empty()), "{:?}", editor.lines());
    assert_eq!(editor.lines().join("\n"), app.session.run.engine.tree().node(node).thought.to_string());
    for (w, h) in SIZES {
        let screen = render(&mut app, w, h);
        assert!(!screen.contains(&glued), "{w}x{h}:\n{screen}");
    }
}

#[test]
fn editing_a_react_step_without_an_action_holds_only_its_thought() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, mut tools) = {
        use crate::tasks::qa_demo::QaDemo;
        let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
        let tools = crate::runtime::tools::ToolRunner::new(task.tools().unwrap());
        let mut s = setup(dir.path(), Params::new(crate::engine::methods::react::KIND));
        s.task = Arc::clone(&task);
        s.header.task = "qa-demo".into();
        (App::live(s, &task.problem(0).unwrap(), Keymap::default(), ThemeSet::default(), "dark"), tools)
    };
    // The model's first reply has a thought and no action.
    let fx = app.handle_action(Action::Step);
    let Some(Effect::CallLlm { call, request }) = fx.into_iter().next() else { panic!("a model call") };
    let sim = SimProvider::new(SimConfig::default(), &crate::tasks::SimPlayers);
    let mut reply = sim.answer(&request).unwrap();
    reply.completions.truncate(1);
    reply.completions[0] =
        crate::protocol::Completion::text("Thought 1: I should find the town first, then its river.", None);
    let fx = app.on_reply(LlmReply { call, result: Ok(reply) }, &request);
    settle_react(&mut app, fx, &mut tools);
    let tree = app.session.run.engine.tree();
    let bad = tree.nodes().find(|n| n.step.as_ref().is_some_and(|s| s.is_bad_call())).map(|n| n.id).unwrap();
    let observation = tree.node(bad).step.as_ref().and_then(|s| s.observation.clone()).unwrap();
    assert!(observation.contains("<your reasoning>"), "the observation restates the format: {observation}");

    select(&mut app, bad);
    app.handle_action(Action::Edit);
    let lines = match &app.popup {
        Some(Popup::Edit { editor, .. }) => editor.lines().to_vec(),
        _ => panic!("the edit popup is open"),
    };
    assert_eq!(lines.len(), 1, "the step's thought only: {lines:?}");
    assert!(lines[0].starts_with("Thought 1: I should find the town first"), "{lines:?}");
    for (w, h) in SIZES {
        let screen = render(&mut app, w, h);
        let popup: Vec<&str> = screen
            .lines()
            .skip_while(|l| !l.contains("Edit step 1"))
            .take_while(|l| !l.contains("ctrl-s save"))
            .collect();
        assert!(popup.len() >= 2, "{w}x{h}:\n{screen}");
        assert!(popup.iter().any(|l| l.contains("I should find the town")), "{w}x{h}: {popup:#?}");
        assert!(!popup.iter().any(|l| l.contains("for example") || l.contains("<your")), "{w}x{h}: {popup:#?}");
    }
    // What the person writes is what reaches the model: ctrl-u clears the line, then a new thought.
    app.handle_key(ctrl('u'));
    for c in "Thought 1: I need to search the Tessel River.".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    let fx = app.handle_key(ctrl('s'));
    settle_react(&mut app, fx, &mut tools);
    let new = edited_from(&app, bad);
    assert_eq!(new.len(), 1);
    let step = app.session.run.engine.tree().node(new[0]).step.as_deref().cloned().unwrap();
    assert_eq!(step.thought.as_deref(), Some("I need to search the Tessel River."), "{step:?}");
}

#[test]
fn the_status_bar_keeps_the_method_parameters_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    for steps in 0..3 {
        let header = ui::status::header_text(&app, 80);
        assert!(header.contains("tot-bfs b=5 n=3 propose/value"), "after {steps} steps: {header}");
        assert!(header.lines().all(|l| l.chars().count() <= 80), "{header}");
        act(&mut app, Action::Step);
    }
}

#[test]
fn ctrl_u_clears_to_the_start_of_the_line_in_text_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    app.handle_action(Action::NewInput);
    for c in "1 2 3 4".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    app.handle_key(key(KeyCode::Left));
    app.handle_key(ctrl('u'));
    let text = |app: &App| match &app.popup {
        Some(Popup::Ask { editor, .. }) => editor.lines().join("\n"),
        _ => panic!("the question is open"),
    };
    assert_eq!(text(&app), "4", "the text before the cursor goes");
    app.handle_key(key(KeyCode::End));
    app.handle_key(ctrl('u'));
    assert_eq!(text(&app), "");
}

#[test]
fn the_save_as_message_keeps_to_one_line_and_leaves_the_scores_pane_its_height() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = bfs_after_a_step(dir.path());
    render(&mut app, 80, 24);
    let scores = app.areas[Pane::Scores.index()];
    let target = dir.path().join("a-rather-long-folder-name/and-another-one-below-it/my-own-session.jsonl");
    app.answer(Prompting::SaveAs, target.to_str().unwrap());
    let message = app.message.clone().unwrap();
    assert!(message.starts_with("saved") && message.contains("my-own-session.jsonl"), "{message}");
    let screen = render(&mut app, 80, 24);
    assert_eq!(ui::status::footer_height(&app, 80), 1, "{message}");
    assert_eq!(app.areas[Pane::Scores.index()], scores, "{screen}");
    assert_eq!(app.session_path().unwrap(), target);
    // A long file name too (checked by hand: it wrapped to a second line at 80×24 and took
    // a row from the panes); the message keeps the name's end.
    let long = dir.path().join(format!("{}-the-end.jsonl", "my-saved-session-with-a-long-name".repeat(2)));
    app.answer(Prompting::SaveAs, long.to_str().unwrap());
    let message = app.message.clone().unwrap();
    assert!(message.starts_with("saved") && message.ends_with("-the-end.jsonl"), "{message}");
    for (w, h) in [(80, 24), (160, 45)] {
        render(&mut app, w, h);
        let scores = app.areas[Pane::Scores.index()];
        app.message = None;
        render(&mut app, w, h);
        assert_eq!(app.areas[Pane::Scores.index()], scores, "{w}x{h}");
        app.message = Some(message.clone());
        assert_eq!(ui::status::footer_height(&app, w as usize), 1, "{w}x{h}: {message}");
    }
}

/// Where a popup titled `title` was drawn on `screen`: (left, right, top, bottom) columns
/// and rows of its frame.
fn popup_frame(screen: &[Vec<String>], title: &str) -> (usize, usize, usize, usize) {
    let top = screen.iter().position(|row| row.concat().contains(title)).unwrap();
    let left = screen[top].iter().position(|c| c == "┌").unwrap();
    let right = screen[top].iter().rposition(|c| c == "┐").unwrap();
    let bottom = (top + 1..screen.len()).find(|&y| screen[y][left] == "└").unwrap();
    (left, right, top, bottom)
}

#[test]
fn popups_leave_no_fragments_of_the_panes_beside_them() {
    let dir = tempfile::tempdir().unwrap();
    for (w, h) in SIZES {
        let mut app = bfs_after_a_step(dir.path());
        select(&mut app, NodeId(1));
        for (open, title) in
            [(Action::Edit, "Edit thought #1"), (Action::Stats, "Stats of this run"), (Action::Help, " Keys ")]
        {
            app.popup = None;
            app.handle_action(open);
            let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
            terminal
                .draw(|f| {
                    ui::draw_app(f, &mut app);
                })
                .unwrap();
            let buffer = terminal.backend().buffer();
            let screen: Vec<Vec<String>> =
                (0..h).map(|y| (0..w).map(|x| buffer[(x, y)].symbol().to_string()).collect()).collect();
            let (left, right, top, bottom) = popup_frame(&screen, title);
            let (w, h) = (w as usize, h as usize);
            // A one-cell gutter, and the whole side where fewer than four cells are left.
            let from = if left <= 4 { 0 } else { left - 1 };
            let to = if w - 1 - right <= 4 { w } else { right + 2 };
            let rows_from = if top <= 4 { 0 } else { top - 1 };
            let rows_to = if h - 1 - bottom <= 4 { h } else { bottom + 2 };
            for (y, row) in screen.iter().enumerate().take(rows_to).skip(rows_from) {
                for x in (from..to).filter(|&x| x < left || x > right || y < top || y > bottom) {
                    assert_eq!(row[x], " ", "{w}x{h} {title}: a fragment at ({x}, {y}):\n{}", row.concat());
                }
            }
        }
    }
}
