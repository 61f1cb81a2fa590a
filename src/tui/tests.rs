//! The explorer driven by actions until idle — no terminal, no runtime, no sleeps —
//! and drawn into ratatui's TestBackend for snapshot tests.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::action::Action;
use super::app::{App, Pane, Prompting, Setup};
use super::keymap::Keymap;
use super::theme::ThemeSet;
use super::ui;
use crate::engine::sim::SimConfig;
use crate::engine::{Command, Effect, Event, Input, LlmReply, NodeId, NodeStatus, Origin, Params};
use crate::llm::sim::SimProvider;
use crate::protocol::LlmRequest;
use crate::session::{Record, Session, FORMAT, VERSION};
use crate::tasks::game24::Game24;
use crate::tasks::{Problem, SimPlayers, TaskSource};

fn setup(dir: &Path, params: Params) -> Setup {
    let task: Arc<dyn TaskSource> = Arc::new(Game24::builtin());
    let header = crate::session::Header {
        format: FORMAT.into(),
        version: VERSION,
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: "game24".into(),
        input: String::new(),
        index: None,
        params,
        provider: "sim".into(),
        model: crate::engine::sim::SIM_MODEL.into(),
        simulated: true,
        sim: Some(SimConfig::default()),
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
    };
    Setup {
        task,
        prompts: None,
        header,
        sessions_dir: dir.to_path_buf(),
        session_file: None,
        memory_dir: Some(dir.join("data")),
        limits: Default::default(),
    }
}

fn live(dir: &Path, params: Params) -> App {
    let problem = Problem { index: Some(900), input: "4 5 6 10".into() };
    App::live(setup(dir, params), &problem, Keymap::default(), ThemeSet::default(), "dark")
}

/// Queue the model calls among `effects` as the driver does, dropping cancelled ones.
fn push(queue: &mut VecDeque<(u64, LlmRequest)>, effects: Vec<Effect>) {
    for e in effects {
        match e {
            Effect::CallLlm { call, request } => queue.push_back((call, request)),
            Effect::Cancel { calls } => queue.retain(|(c, _)| !calls.contains(c)),
            Effect::Emit { .. } | Effect::CallTool { .. } | Effect::RunCheck { .. } => {}
        }
    }
}

/// Carry out effects like the driver does (in request order), with the sim
/// answering at once, until nothing is outstanding.
fn settle(app: &mut App, effects: Vec<Effect>) {
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    let mut queue: VecDeque<(u64, LlmRequest)> = VecDeque::new();
    push(&mut queue, effects);
    while let Some((call, request)) = queue.pop_front() {
        let effects = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
        push(&mut queue, effects);
    }
}

fn act(app: &mut App, action: Action) {
    let effects = app.handle_action(action);
    settle(app, effects);
}

fn recorded_commands(path: &Path) -> Vec<Command> {
    let session = Session::load(path).unwrap();
    session
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Input { input: Input::Command { command }, .. } => Some(command.clone()),
            _ => None,
        })
        .collect()
}

fn select(app: &mut App, node: NodeId) {
    app.tree.state.select(app.path_to(node));
}

#[test]
fn a_replys_thinking_is_shown_apart_and_counted_in_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let which = crate::demos::DEMOS.iter().position(|d| d.file == "thinking-bfs.jsonl").unwrap();
    let mut app = demo_replay(dir.path(), which);
    let child = app.session.run.engine.tree().node(NodeId(0)).children[0];
    select(&mut app, child);
    let screen = render(&mut app, 220, 60);
    assert!(screen.contains("thinking (simulated thinking, about"), "{screen}");
    // Folded: its first lines and how many more there are, and the key that unfolds it.
    assert!(screen.contains("│ Okay, let me work through this."), "the thinking's lines, dimmed and marked: {screen}");
    assert!(!screen.contains("│ So I will start with:"), "folded: {screen}");
    assert!(screen.contains("│ … 2 more lines (T unfolds; / finds in them, V pages them)"), "{screen}");
    assert!(screen.contains("thinking) tokens"), "the call line counts the thinking: {screen}");
    // The pager and the clipboard take it whole, folded or not.
    assert!(app.focused_text().1.contains("│ So I will start with:"), "{}", app.focused_text().1);
    act(&mut app, Action::Thinking);
    let unfolded = render(&mut app, 220, 60);
    assert!(unfolded.contains("│ So I will start with:") && !unfolded.contains("more lines (T unfolds"), "{unfolded}");
    assert_eq!(app.message.as_deref(), Some("thinking unfolded in the detail pane"));
    act(&mut app, Action::Thinking);
    let view = ui::View::new(&app, app.selected());
    let folded: Vec<String> = ui::detail::lines(&view).iter().map(|l| l.to_string()).collect();
    assert!(folded.iter().any(|l| l.contains("more lines (T unfolds")), "folded again: {folded:#?}");
    // The transcript says how long the model thought, at the run's end.
    let view = ui::View::new(&app, app.selected());
    let transcript: Vec<String> = ui::transcript::lines(&view).iter().map(|l| l.to_string()).collect();
    let total = app.session.run.totals.reasoning_tokens;
    assert!(
        transcript.iter().any(|l| l.starts_with(&format!("the model thought for {total} tokens in "))),
        "{transcript:#?}"
    );
    let header = crate::tui::ui::status::header_text(&app, 220);
    assert!(header.contains(" thinking)"), "the header counts reasoning tokens apart: {header}");
    // A demo with no thinking says none.
    let plain = demo_replay(dir.path(), 0);
    assert!(!crate::tui::ui::status::header_text(&plain, 220).contains("thinking"));
}

#[test]
fn step_and_run_pause() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    let after_one = app.session.run.engine.tree().len();
    assert!(after_one > 1, "a step proposes children of the root");
    assert!(app.session.run.engine.tree().nodes().all(|n| n.score.is_none()), "one step: proposals only");
    act(&mut app, Action::Step);
    assert!(app.session.run.engine.tree().nodes().any(|n| n.score.is_some()), "the next step evaluates");
    act(&mut app, Action::RunPause);
    assert!(app.session.run.engine.is_finished());
    let path = app.session_path().unwrap();
    assert_eq!(recorded_commands(&path), vec![Command::Step { n: 1 }, Command::Step { n: 1 }, Command::Run]);
    // The recorded session replays to the same tree.
    let session = Session::load(&path).unwrap();
    let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
    assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
    assert_eq!(rebuilt.engine.tree().len(), app.session.run.engine.tree().len());
}

#[test]
fn pause_stops_new_calls() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let effects = app.handle_action(Action::RunPause);
    assert_eq!(app.session.run.engine.mode(), crate::engine::RunMode::Running);
    let paused = app.handle_action(Action::RunPause);
    assert!(paused.is_empty());
    settle(&mut app, effects);
    assert!(!app.session.run.engine.is_finished(), "paused after the first batch");
    assert!(app.session.run.engine.is_idle());
}

#[test]
fn prune_edit_backtrack_expand_through_actions() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default().with("breadth", 2));
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let kept: Vec<NodeId> =
        app.session.run.engine.tree().nodes().filter(|n| n.status == NodeStatus::Frontier).map(|n| n.id).collect();
    assert_eq!(kept.len(), 2);

    // Prune the first kept state, then un-prune it.
    select(&mut app, kept[0]);
    act(&mut app, Action::Prune);
    assert_eq!(app.session.run.engine.tree().node(kept[0]).status, NodeStatus::Pruned);
    act(&mut app, Action::Prune);
    assert_ne!(app.session.run.engine.tree().node(kept[0]).status, NodeStatus::Pruned);

    // Edit it through the popup: a new sibling, marked as human-edited.
    select(&mut app, kept[0]);
    act(&mut app, Action::Edit);
    assert!(matches!(app.popup, Some(super::app::Popup::Edit { .. })));
    app.popup = None;
    let before = app.session.run.engine.tree().len();
    let effects = app.submit_edit(kept[0], "10 - 4 = 6 (left: 5 6 6)".into());
    settle(&mut app, effects);
    let edited = NodeId(before);
    assert_eq!(app.session.run.engine.tree().node(edited).origin, Origin::Human { edited_from: Some(kept[0]) });
    assert!(app.session.run.engine.tree().node(edited).score.is_some(), "the edit was evaluated");

    // Backtrack to the unexplored states of step 1.
    act(&mut app, Action::Backtrack);
    assert!(app.session.events.iter().any(|e| matches!(e, Event::Backtracked { .. })));
    assert!(matches!(app.session.run.engine.tree().node(kept[1]).status, NodeStatus::Dropped(_)));

    // Expand a node by hand.
    let leaf = app
        .session
        .run
        .engine
        .tree()
        .nodes()
        .find(|n| n.depth == 1 && n.children.is_empty() && n.score.is_some())
        .unwrap()
        .id;
    select(&mut app, leaf);
    act(&mut app, Action::Expand);
    assert!(!app.session.run.engine.tree().node(leaf).children.is_empty());

    let commands = recorded_commands(&app.session_path().unwrap());
    assert!(commands.contains(&Command::Prune { node: kept[0] }));
    assert!(commands.contains(&Command::Unprune { node: kept[0] }));
    assert!(commands.contains(&Command::Edit { node: kept[0], text: "10 - 4 = 6 (left: 5 6 6)".into() }));
    assert!(commands.contains(&Command::Backtrack { to: None, cause: None }));
    assert!(commands.contains(&Command::Expand { node: leaf }));
}

#[test]
fn keys_go_through_the_keymap_and_popups_take_text() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let key = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
    let effects = app.handle_key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE));
    settle(&mut app, effects);
    assert!(app.session.run.engine.tree().len() > 1);
    app.handle_key(key('?'));
    assert!(matches!(app.popup, Some(super::app::Popup::Help { .. })));
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(app.popup.is_none());
    // New input through the popup: a puzzle number.
    app.handle_key(key('i'));
    for c in "901".chars() {
        app.handle_key(key(c));
    }
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.session.header.index, Some(901));
    assert_eq!(app.session.run.engine.tree().len(), 1, "a fresh run");
    let bad = app.answer(Prompting::NewInput, "1 2 3");
    assert!(bad.is_empty());
    assert!(app.message.as_deref().unwrap_or("").contains("expected 4 numbers"));
    app.handle_key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    assert_eq!(app.view.focus, Pane::Scores);
    app.handle_key(key('3'));
    assert_eq!(app.view.focus, Pane::Detail);
    let split = app.view.split;
    app.handle_key(key('>'));
    assert_eq!(app.view.split, split + 5);
    app.handle_key(key('t'));
    assert_ne!(app.view.theme_name, "dark");
    app.handle_key(key('q'));
    assert!(app.quit);
}

#[test]
fn save_as_moves_recording() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    let target = dir.path().join("kept/mine.jsonl");
    app.answer(Prompting::SaveAs, target.to_str().unwrap());
    act(&mut app, Action::Step);
    assert_eq!(app.session_path().unwrap(), target);
    assert_eq!(recorded_commands(&target), vec![Command::Step { n: 1 }, Command::Step { n: 1 }]);
}

/// Opening the explorer and quitting (or opening another session) before any step leaves
/// no session file behind; one step and the session is kept, ended. A file the person
/// named is kept even empty.
#[test]
fn a_run_with_nothing_recorded_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let path = app.session_path().unwrap();
    assert!(path.is_file(), "written while the run is open (the browser shows it live)");
    app.finish_recording();
    assert!(!path.exists(), "nothing was recorded: no file is left");
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    let path = app.session_path().unwrap();
    app.finish_recording();
    assert!(Session::load(&path).unwrap().complete(), "a step was recorded: the session is kept");
    let named = dir.path().join("mine.jsonl");
    let mut with_name = setup(dir.path(), Params::default());
    with_name.session_file = Some(named.clone());
    let problem = Problem { index: Some(900), input: "4 5 6 10".into() };
    let mut app = App::live(with_name, &problem, Keymap::default(), ThemeSet::default(), "dark");
    app.finish_recording();
    assert!(named.is_file(), "a file the person named is kept");
}

/// A demo opened as `thoughtscope demo` opens it: at its first caption.
fn demo_opened(dir: &Path, which: usize) -> App {
    let session = crate::demos::load(&crate::demos::DEMOS[which]).unwrap();
    let params = session.header.params.clone();
    App::replay(setup(dir, params), session, Keymap::default(), ThemeSet::default(), "dark").unwrap()
}

/// A demo at its end (most tests look at the finished run).
fn demo_replay(dir: &Path, which: usize) -> App {
    let mut app = demo_opened(dir, which);
    let total = app.session.replay.as_ref().unwrap().total;
    app.seek(total);
    app
}

#[test]
fn replay_moves_through_the_timeline_and_forks() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    let total = app.session.replay.as_ref().unwrap().total;
    let full = app.session.run.engine.tree().len();
    assert!(app.session.run.engine.outcome().is_some_and(|o| o.solved));
    act(&mut app, Action::ReplayStart);
    assert_eq!(app.session.run.engine.tree().len(), 1);
    act(&mut app, Action::ReplayForward);
    act(&mut app, Action::ReplayForward);
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, 2);
    let at_two = app.session.run.engine.tree().len();
    assert!(at_two > 1);
    act(&mut app, Action::ReplayBack);
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, 1);
    act(&mut app, Action::ReplayEnd);
    assert_eq!(app.session.run.engine.tree().len(), full);
    // Steering is refused in a replay.
    act(&mut app, Action::Step);
    assert!(app.message.as_deref().unwrap_or("").contains("read-only"));
    // Fork at input 20: a live run from exactly that state, in a new session naming its parent.
    app.seek(20);
    let nodes_at_fork = app.session.run.engine.tree().len();
    let effects = app.handle_action(Action::Fork);
    assert!(!app.is_replay());
    let forked = app.session_path().unwrap();
    let session = Session::load(&forked).unwrap();
    let parent = session.header.parent.clone().unwrap();
    assert_eq!(parent.inputs, 20);
    assert!(parent.path.ends_with("bfs-solved.jsonl"));
    assert_eq!(app.session.run.engine.tree().len(), nodes_at_fork);
    settle(&mut app, effects);
    act(&mut app, Action::RunPause);
    assert!(app.session.run.engine.is_finished(), "the fork runs to the end");
    // The fork replays on its own.
    let session = Session::load(&forked).unwrap();
    assert!(session.input_count() > 20 && total > 20);
    let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
    assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
}

#[test]
fn demo_sessions_replay_exactly_and_show_what_they_claim() {
    for (i, demo) in crate::demos::DEMOS.iter().enumerate() {
        let session = crate::demos::load(demo).unwrap();
        assert!(session.warnings.is_empty(), "{}: {:?}", demo.file, session.warnings);
        assert!(session.header.note.is_some());
        let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
        assert!(rebuilt.fidelity.is_exact(), "{}: {}", demo.file, rebuilt.fidelity);
        assert!(rebuilt.engine.outcome().is_some_and(|o| o.solved), "{} is solved", demo.file);
        let events: Vec<&Event> = session.events().collect();
        match i {
            0 => assert_eq!(session.header.params.method, crate::engine::methods::tot_bfs::KIND),
            1 => assert!(events.iter().filter(|e| matches!(e, Event::Backtracked { .. })).count() >= 2),
            3 => {
                assert_eq!(session.header.params.method, crate::engine::methods::mcts::KIND);
                let root = rebuilt.engine.tree().node(NodeId(0));
                assert!(root.metrics.get("N").is_some_and(|&n| n >= 3.0), "several iterations: {:?}", root.metrics);
                assert!(events.iter().any(|e| matches!(e, Event::Metrics { .. })));
            }
            4 => {
                assert_eq!(session.header.params.method, crate::engine::methods::cot_sc::KIND);
                let outcome = rebuilt.engine.outcome().unwrap();
                assert!(outcome.sample_accuracy.is_some_and(|a| a < 1.0), "the samples disagree: {outcome:?}");
                // The caption tells the vote as counted: the winner's votes, and a tie when there is one.
                let votes = rebuilt.engine.view().votes.unwrap();
                let top = &votes.tallies[0];
                let tied: Vec<&str> =
                    votes.tallies[1..].iter().filter(|t| t.votes == top.votes).map(|t| t.answer.as_str()).collect();
                let captions = crate::demos::narrate(&session).unwrap();
                let (_, caption) = captions.iter().find(|(_, c)| c.contains("The vote")).expect("a vote caption");
                assert!(caption.contains(&format!("{} vote", top.votes)), "{caption}");
                assert_eq!(caption.contains("tie"), !tied.is_empty(), "{caption}");
                assert!(!caption.contains("most votes") || tied.is_empty(), "a tie is not the most votes: {caption}");
                let logged_tie = events.iter().any(|e| matches!(e, Event::Log { text } if text.contains("tied with")));
                assert_eq!(logged_tie, !tied.is_empty(), "the transcript's log line says the tie too");
                for answer in tied {
                    assert!(caption.contains(answer), "{answer} is tied: {caption}");
                }
            }
            5 => {
                assert_eq!(session.header.params.method, crate::engine::methods::react::KIND);
                // Unsolved before the edit, solved from the edited step after it.
                let finished: Vec<bool> = events
                    .iter()
                    .filter_map(|e| match e {
                        Event::Finished { outcome } => Some(outcome.solved),
                        _ => None,
                    })
                    .collect();
                assert_eq!(finished, vec![false, true]);
                let tree = rebuilt.engine.tree();
                let edited = tree.nodes().find(|n| matches!(n.origin, Origin::Human { .. })).expect("a human edit");
                let finals = &rebuilt.engine.outcome().unwrap().finals;
                assert!(finals.iter().any(|&f| tree.is_within(f, edited.id)), "the answer grows from the edit");
            }
            8 => {
                // A reasoning model's search: every reply thought apart from its answer, and
                // the thinking counted as reasoning tokens, none of it read.
                assert!(session.header.sim.as_ref().is_some_and(|s| s.thinking), "recorded in thinking mode");
                let replies: Vec<&crate::protocol::LlmResponse> = session
                    .records
                    .iter()
                    .filter_map(|r| match r {
                        Record::Input { input: Input::LlmReply(reply), .. } => reply.result.as_ref().ok(),
                        _ => None,
                    })
                    .collect();
                assert!(!replies.is_empty());
                for r in &replies {
                    assert!(r.usage.reasoning_tokens > 0 && r.usage.reasoning_tokens < r.usage.completion_tokens);
                    for c in &r.completions {
                        assert_eq!(c.thinking.len(), 1, "each sample thought");
                        assert_eq!(c.thinking[0].kind, crate::protocol::ThinkingKind::Simulated);
                        assert!(!c.text.contains("So I will start with"), "the answer holds no thinking");
                    }
                }
                assert!(rebuilt.totals.reasoning_tokens > 0);
            }
            6 | 7 => {
                use crate::memory::{Category, MemoryChange};
                assert_eq!(session.header.params.method, crate::engine::methods::retreval::method::KIND);
                let snapshot = &session.header.memory.as_ref().expect("a memory snapshot").memory;
                // Every change the problem made, applied to the snapshot, is the memory the replay ends with.
                let mut memory = snapshot.clone();
                for e in &events {
                    if let Event::Memory { change } = e {
                        memory.apply(change).unwrap();
                    }
                }
                assert_eq!(Some(&memory), rebuilt.engine.memory());
                assert!(session.inputs().any(|(input, _)| matches!(input, Input::ToolReply(_))), "a tool call");
                assert!(events
                    .iter()
                    .any(|e| matches!(e, Event::Metrics { metrics, .. } if metrics.contains_key("cross"))));
                // Every typed failure is of an attempt the task's checker rejects: a lesson
                // comes from a real mistake, not a validator's false alarm on a right answer.
                let tree = rebuilt.engine.tree();
                for n in tree.nodes().filter(|n| n.note("failure").is_some()) {
                    let answer = n.answer.as_deref().unwrap_or("");
                    assert!(
                        rebuilt.engine.core.task.check(&session.header.input, answer).is_err(),
                        "{}: {answer}",
                        n.id
                    );
                }
                if i == 6 {
                    assert!(events.iter().any(|e| matches!(e, Event::Backtracked { .. })), "a typed backtrack");
                    assert!(snapshot.is_empty(), "the first problem starts from an empty memory");
                    assert!(events.iter().any(|e| matches!(
                        e,
                        Event::Memory { change: MemoryChange::Add { category: Category::Failure, .. } }
                    )));
                    // The next demo starts from the memory this one ended with.
                    let next = crate::demos::load(&crate::demos::DEMOS[7]).unwrap();
                    assert_eq!(next.header.memory.as_ref().map(|m| &m.memory), rebuilt.engine.memory());
                } else {
                    let failures: Vec<u64> =
                        snapshot.entries().iter().filter(|e| e.category == Category::Failure).map(|e| e.id).collect();
                    assert!(
                        events.iter().any(|e| matches!(e,
                        Event::Memory { change: MemoryChange::RecordUse { id, .. } } if failures.contains(id))),
                        "the lesson the previous problem wrote is used"
                    );
                    // ... because it is about the same thing: the problems share their topic words.
                    use crate::memory::similarity::topic_words;
                    let here = topic_words(&session.header.input);
                    for e in snapshot.entries().iter().filter(|e| e.category == Category::Failure) {
                        let about: Vec<String> =
                            e.sources.iter().flat_map(|s| topic_words(s)).filter(|w| here.contains(w)).collect();
                        assert!(about.len() >= 2, "entry #{} shares {about:?} with {:?}", e.id, session.header.input);
                    }
                }
            }
            _ => {
                let tree = rebuilt.engine.tree();
                let edited = tree.nodes().find(|n| matches!(n.origin, Origin::Human { .. })).expect("a human edit");
                let solution = tree.nodes().find(|n| n.status == NodeStatus::Solution).expect("a solution");
                assert!(tree.is_within(solution.id, edited.id), "the solution grows from the edit");
            }
        }
    }
}

#[test]
fn demo_recording_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    crate::demos::record_all(dir.path()).unwrap();
    for demo in &crate::demos::DEMOS {
        let fresh = std::fs::read_to_string(dir.path().join(demo.file)).unwrap();
        assert!(
            fresh == demo.text,
            "{} differs from a fresh recording: run `thoughtscope record-demos sessions`",
            demo.file
        );
    }
}

fn render(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            ui::draw_app(f, app);
        })
        .unwrap();
    format!("{}", terminal.backend())
}

#[test]
fn snapshots_of_the_whole_layout() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    app.seek(40);
    insta::assert_snapshot!("layout_80x24", render(&mut app, 80, 24));
    insta::assert_snapshot!("layout_160x50", render(&mut app, 160, 50));
    let mut app = demo_replay(dir.path(), 2);
    insta::assert_snapshot!("edit_demo_160x50", render(&mut app, 160, 50));
}

#[test]
fn snapshots_of_each_pane_and_popup() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 1);
    app.seek(30);
    let full = render(&mut app, 120, 40);
    let areas = app.areas;
    let crop = |r: ratatui::layout::Rect| -> String {
        full.lines()
            .skip(r.y as usize + 1)
            .take(r.height as usize)
            .map(|l| {
                // TestBackend's Display quotes each line; strip the quotes before cropping.
                let inner: String = l
                    .trim_start_matches('"')
                    .trim_end_matches('"')
                    .chars()
                    .skip(r.x as usize)
                    .take(r.width as usize)
                    .collect();
                inner
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    insta::assert_snapshot!("pane_tree", crop(areas[Pane::Tree.index()]));
    insta::assert_snapshot!("pane_scores", crop(areas[Pane::Scores.index()]));
    insta::assert_snapshot!("pane_detail", crop(areas[Pane::Detail.index()]));
    insta::assert_snapshot!("pane_transcript", crop(areas[Pane::Transcript.index()]));
    insta::assert_snapshot!("status_bar", ui::status::header_text(&app, 120));
    insta::assert_snapshot!("footer", full.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(""));
    app.handle_action(Action::Help);
    insta::assert_snapshot!("popup_help", render(&mut app, 120, 40));
    app.popup = None;
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    let node = NodeId(1);
    select(&mut app, node);
    app.handle_action(Action::Edit);
    insta::assert_snapshot!("popup_edit", render(&mut app, 80, 24));
}

#[test]
fn no_color_draws_without_colours() {
    use ratatui::style::Color;
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    app.view.no_color = true;
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    terminal
        .draw(|f| {
            ui::draw_app(f, &mut app);
        })
        .unwrap();
    let buffer = terminal.backend().buffer();
    assert!(buffer.content().iter().all(|c| c.fg == Color::Reset && c.bg == Color::Reset));
    app.view.no_color = false;
    terminal
        .draw(|f| {
            ui::draw_app(f, &mut app);
        })
        .unwrap();
    assert!(terminal.backend().buffer().content().iter().any(|c| c.fg != Color::Reset));
}

#[test]
fn mouse_clicks_select_and_focus() {
    use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 2);
    app.seek(0);
    app.seek(3);
    render(&mut app, 100, 30);
    let tree = app.areas[Pane::Tree.index()];
    let click = |column, row| MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    };
    // The second line inside the tree pane is the root's first child.
    app.handle_mouse(click(tree.x + 6, tree.y + 2));
    assert_eq!(app.selected(), NodeId(1));
    let detail = app.areas[Pane::Detail.index()];
    app.handle_mouse(click(detail.x + 2, detail.y + 2));
    assert_eq!(app.view.focus, Pane::Detail);
    let scroll = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: detail.x + 2,
        row: detail.y + 2,
        modifiers: KeyModifiers::NONE,
    };
    app.handle_mouse(scroll);
    assert_eq!(app.detail.scroll, 1);
}

#[test]
fn streamed_text_shows_until_the_reply_lands_and_cost_is_priced() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let effects = app.handle_action(Action::Step);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().find(|e| matches!(e, Effect::CallLlm { .. }))
    else {
        panic!("a call")
    };
    app.on_delta(call, 0, "4 + 5 = 9 ");
    app.on_delta(call, 0, "(left: 6 9 10)");
    app.on_delta(999, 0, "not a call of this run");
    assert_eq!(app.session.streaming.len(), 1);
    let screen = render(&mut app, 160, 120);
    assert!(screen.contains("receiving sample 1:"), "{screen}");
    assert!(screen.contains("4 + 5 = 9 (left: 6 9 10)"));
    assert!(screen.contains(" · receiving"), "the call's header says text is arriving:\n{screen}");
    assert!(!screen.contains(&format!("── call {call} · propose · n=1 · waiting")), "{screen}");
    // At 80×24 the long prompt does not push the arriving text off screen: the pane follows it.
    select(&mut app, NodeId(0));
    let small = render(&mut app, 80, 24);
    assert!(small.contains("(left: 6 9 10)"), "the streamed text is in view at 80×24:\n{small}");
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
    assert!(app.session.streaming.is_empty());
    assert_eq!(app.cost_usd(), None, "sim has no price");
    app.session.header.price = Some(crate::llm::config::Price { input: 1.0, output: 2.0 });
    let expected =
        (app.session.run.totals.prompt_tokens as f64 + 2.0 * app.session.run.totals.completion_tokens as f64) / 1e6;
    assert_eq!(app.cost_usd(), Some(expected));
    assert!(render(&mut app, 160, 40).contains("$0.0"));
}

#[test]
fn imported_sessions_open_and_say_where_nodes_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tot-log-3.json");
    let report = crate::import::tot::import(&log, Some(dir.path())).unwrap();
    let path = report.checks[0].session.clone().unwrap();
    let session = Session::load(Path::new(&path)).unwrap();
    let params = session.header.params.clone();
    let mut app =
        App::replay(setup(dir.path(), params), session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    select(&mut app, NodeId(1));
    let screen = render(&mut app, 160, 50);
    assert!(screen.contains("imported from tot-log (model gpt-4)"), "{screen}");
}

#[test]
fn native_tool_calls_show_in_the_explorer_as_the_same_transcript() {
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let params = Params::new(crate::engine::methods::react::KIND).with("tool_mode", crate::engine::ToolMode::Native);
    let mut s = setup(dir.path(), params);
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
    let effects = app.handle_action(Action::Step);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().next() else { panic!("a model call") };
    assert!(!request.tools.is_empty());
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    let effects = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
    let Some(Effect::CallTool { tool, .. }) = effects.into_iter().next() else { panic!("a tool call") };
    assert_eq!(tool.name, "search");
    let screen = render(&mut app, 160, 50);
    assert!(screen.contains("Action 1: Search["), "{screen}");
    for _ in 0..2 {
        app.handle_action(Action::Up);
    }
    // Tall enough for the whole prompt in the detail pane.
    let screen = render(&mut app, 160, 200);
    assert!(screen.contains("tools offered: search, lookup, finish, calculate"), "{screen}");
    assert!(screen.contains("tool call search({\"entity\":"), "the raw reply shows the tool call: {screen}");
}

#[test]
fn a_second_native_call_shows_in_the_transcript_as_not_run() {
    use crate::protocol::{Completion, LlmResponse, ToolCallOut, Usage};
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let params = Params::new(crate::engine::methods::react::KIND).with("tool_mode", crate::engine::ToolMode::Native);
    let mut s = setup(dir.path(), params);
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
    let effects = app.handle_action(Action::Step);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().next() else { panic!("a model call") };
    let call_of = |id: &str, name: &str, args: serde_json::Value| ToolCallOut {
        id: Some(id.into()),
        name: name.into(),
        arguments: args,
    };
    let completion = Completion {
        text: "Two at once.".into(),
        finish_reason: Some("tool_calls".into()),
        tool_calls: vec![
            call_of("a", "search", serde_json::json!({"entity": "Ilse Varga"})),
            call_of("b", "lookup", serde_json::json!({"keyword": "born"})),
        ],
        thinking: Vec::new(),
    };
    let reply = LlmResponse {
        completions: vec![completion],
        usage: Usage::default(),
        latency_ms: 0,
        model: "m".into(),
        simulated: false,
        cached: false,
        lost: None,
    };
    let effects = app.on_reply(LlmReply { call, result: Ok(reply) }, &request);
    let tools: Vec<_> = effects.iter().filter(|e| matches!(e, Effect::CallTool { .. })).collect();
    assert_eq!(tools.len(), 1, "one call a step");
    let screen = render(&mut app, 160, 50);
    assert!(screen.contains("Action 1: Search[Ilse Varga]"), "{screen}");
    assert!(screen.contains(r#"lookup({"keyword":"born"}): not run: one call per step"#), "{screen}");
}

/// A live ReAct run on the bundled QA demo's first question, not started.
fn react_live_on_qa_demo(dir: &Path) -> App {
    let task: Arc<dyn TaskSource> = Arc::new(crate::tasks::qa_demo::QaDemo::new(None).unwrap());
    let mut s = setup(dir, Params::new(crate::engine::methods::react::KIND));
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark")
}

/// A ReAct step whose reply thought says how long, beside the step in the transcript.
#[test]
fn a_react_step_that_thought_says_for_how_long() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = react_live_on_qa_demo(dir.path());
    let effects = app.handle_action(Action::Step);
    let sim = SimProvider::new(SimConfig { thinking: true, ..SimConfig::default() }, &SimPlayers);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().next() else { panic!("a model call") };
    let reply = sim.answer(&request);
    let tokens = reply.as_ref().unwrap().usage.reasoning_tokens;
    assert!(tokens > 0, "the simulated model thought");
    app.on_reply(LlmReply { call, result: reply }, &request);
    let view = ui::View::new(&app, app.selected());
    let lines: Vec<String> = ui::transcript::lines(&view).iter().map(|l| l.to_string()).collect();
    let said = format!("(thought for {tokens} tokens)");
    assert_eq!(lines.iter().filter(|l| l.contains(&said)).count(), 1, "once, on the step's first line: {lines:#?}");
}

#[test]
fn react_runs_in_the_explorer_with_a_styled_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = react_live_on_qa_demo(dir.path());
    // One step: the model's thought and action; the tool call goes to the driver.
    let effects = app.handle_action(Action::Step);
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().next() else { panic!("a model call") };
    let effects = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
    let Some(Effect::CallTool { call, tool, .. }) = effects.into_iter().next() else { panic!("a tool call") };
    assert_eq!(tool.name, "search");
    let reply = Input::ToolReply(crate::engine::ToolReply {
        call,
        result: crate::protocol::ToolResult {
            text: "Ilse Varga was a composer born in Marrowick.".into(),
            ok: true,
            latency_ms: 3,
        },
    });
    app.on_input(reply, None);
    let screen = render(&mut app, 160, 50);
    assert!(screen.contains("Action 1: Search["), "{screen}");
    assert!(screen.contains("Observation 1: Ilse Varga was a composer born in Marrowick."), "{screen}");
    let commands = recorded_commands(&app.session_path().unwrap());
    assert_eq!(commands, vec![Command::Step { n: 1 }]);
    let session = Session::load(&app.session_path().unwrap()).unwrap();
    assert!(
        session.records.iter().any(|r| matches!(r, Record::Input { input: Input::ToolReply(_), .. })),
        "the observation is recorded"
    );
}

#[test]
fn a_context_overflow_shows_once_in_the_react_transcript() {
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let mut tools = crate::runtime::tools::ToolRunner::new(task.tools().unwrap());
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::react::KIND));
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let mut app = App::live(s, &task.problem(0).unwrap(), Keymap::default(), ThemeSet::default(), "dark");
    let fx = app.handle_action(Action::Step);
    settle_react(&mut app, fx, &mut tools);
    let fx = app.handle_action(Action::Step);
    let Some(Effect::CallLlm { call, request }) = fx.into_iter().next() else { panic!("a model call") };
    let error = crate::protocol::CallError {
        kind: crate::protocol::CallErrorKind::ContextOverflow,
        message: "HTTP 400 Bad Request: This model's maximum context length is 2048 tokens".into(),
    };
    let fx = app.on_reply(LlmReply { call, result: Err(error) }, &request);
    assert!(!fx.iter().any(|e| matches!(e, Effect::CallLlm { .. })), "nothing is asked again");
    let screen = render(&mut app, 160, 50);
    let transcript: Vec<&str> = screen.lines().skip_while(|l| !l.contains("4 Transcript")).collect();
    let lines: Vec<&&str> =
        transcript.iter().filter(|l| l.contains("does not fit the model's context window")).collect();
    assert_eq!(lines.len(), 1, "once, in the transcript:\n{screen}");
    assert!(lines[0].contains("(context_overflow: HTTP 400"), "with the server's words: {}", lines[0]);
}

/// Carry out effects like the driver does, with the sim answering model calls and
/// the task's own tools (the qa-demo corpus) answering tool calls, until idle.
fn settle_react(app: &mut App, effects: Vec<Effect>, tools: &mut crate::runtime::tools::ToolRunner) {
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    let mut queue: VecDeque<Effect> = effects.into();
    while let Some(e) = queue.pop_front() {
        let more = match e {
            Effect::CallLlm { call, request } => {
                app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request)
            }
            Effect::CallTool { call, tool, node, after } => {
                let result = rt.block_on(tools.run(&tool, node, after));
                app.on_input(Input::ToolReply(crate::engine::ToolReply { call, result }), None)
            }
            Effect::Cancel { calls } => {
                queue.retain(|q| !matches!(q, Effect::CallLlm { call, .. } | Effect::CallTool { call, .. } if calls.contains(call)));
                Vec::new()
            }
            Effect::Emit { .. } | Effect::RunCheck { .. } => Vec::new(),
        };
        queue.extend(more);
    }
}

#[test]
fn an_edited_react_thought_keeps_both_branches_after_save_and_reopen() {
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let mut tools = crate::runtime::tools::ToolRunner::new(task.tools().unwrap());
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::react::KIND));
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s.clone(), &problem, Keymap::default(), ThemeSet::default(), "dark");
    let fx = app.handle_action(Action::RunPause);
    settle_react(&mut app, fx, &mut tools);
    assert!(app.session.run.engine.is_finished());
    let first_len = app.session.run.engine.tree().len();
    assert!(first_len >= 4, "a few steps to the answer");

    // Select step 2 in the transcript pane (up from the end walks the steps) and edit its thought.
    app.view.focus = Pane::Transcript;
    let tip = NodeId(first_len - 1);
    select(&mut app, tip);
    for _ in 0..(app.session.run.engine.tree().node(tip).depth - 2) {
        app.handle_action(Action::Up);
    }
    let step2 = app.selected();
    assert_eq!(app.session.run.engine.tree().node(step2).depth, 2);
    app.handle_action(Action::Edit);
    let Some(super::app::Popup::Edit { editor, .. }) = &app.popup else { panic!("the edit popup opens") };
    assert!(editor.lines().iter().all(|l| !l.starts_with("Observation")), "{:?}", editor.lines());
    assert!(editor.lines().iter().any(|l| l.starts_with("Thought 2:")), "{:?}", editor.lines());
    app.popup = None;
    let fx = app.submit_edit(step2, "Thought 2: Let me check the lighthouse record before anything else.".into());
    settle_react(&mut app, fx, &mut tools);
    let edited = app
        .session
        .run
        .engine
        .tree()
        .nodes()
        .find(|n| matches!(n.origin, Origin::Human { edited_from: Some(f) } if f == step2))
        .map(|n| n.id)
        .expect("the edited step is a new node");
    assert!(app.session.run.engine.tree().node(edited).thought.contains("\nAction 2: "), "the model wrote the action");
    assert!(app.session.run.engine.tree().node(edited).tool_ms.is_some());
    let fx = app.handle_action(Action::RunPause);
    settle_react(&mut app, fx, &mut tools);
    assert!(app.session.run.engine.is_finished(), "the agent carried on from the edit to an answer");
    let outcome = app.session.run.engine.outcome().unwrap().clone();
    assert!(app.session.run.engine.tree().is_within(outcome.finals[0], edited), "the answer is on the edited branch");

    // Save, reopen as a replay: both branches are there and each reads in the transcript.
    let target = dir.path().join("edited.jsonl");
    app.answer(Prompting::SaveAs, target.to_str().unwrap());
    app.finish_recording();
    let session = Session::load(&target).unwrap();
    let mut replayed = App::replay(s, session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    let parent = replayed.session.run.engine.tree().node(edited).parent.unwrap();
    assert_eq!(replayed.session.run.engine.tree().node(parent).children, vec![step2, edited]);
    assert_eq!(replayed.session.run.engine.tree().len(), app.session.run.engine.tree().len());
    select(&mut replayed, step2);
    let old = render(&mut replayed, 160, 50);
    assert!(old.contains("[branch 1 of 2]"), "{old}");
    select(&mut replayed, edited);
    let new = render(&mut replayed, 160, 50);
    assert!(new.contains("✎ Thought 2: Let me check the lighthouse record"), "{new}");
    assert!(new.contains("[branch 2 of 2]"), "{new}");
    assert!(new.contains("tools: search[entity] · lookup[keyword] · finish[answer] · calculate[expression]"), "{new}");
    // At 80 columns the tools in the title end in `…` where the pane cuts them.
    let narrow = render(&mut replayed, 80, 24);
    let title = narrow.lines().find(|l| l.contains("4 Transcript")).expect("the transcript pane");
    assert!(title.contains("tools: search[entity] · lookup[keyword]") && title.contains("…"), "{title}");
    // The detail pane has the call that wrote the step's action, below its text.
    replayed.view.focus = Pane::Detail;
    let mut detail = new.clone();
    for _ in 0..12 {
        if detail.contains("· act · n=1 · wrote this") {
            break;
        }
        replayed.handle_action(Action::PageDown);
        detail = render(&mut replayed, 160, 50);
    }
    assert!(detail.contains("· act · n=1 · wrote this"), "the detail pane shows the call behind the step: {detail}");
    assert!(new.contains("Observation 2: (0 ms) Marrowick"), "tool latency on observations: {new}");
    // The tree pane labels steps by their actions, so the branches read side by side.
    assert!(new.contains("2 Search["), "{new}");
}

#[test]
fn a_hybrid_shows_the_switch_in_the_log_and_react_steps_as_a_trajectory() {
    use crate::protocol::{Completion, LlmResponse, Usage};
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::hybrid::COT_SC_REACT).with("samples", 4));
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
    let effects = app.handle_action(Action::RunPause);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().find(|e| matches!(e, Effect::CallLlm { .. }))
    else {
        panic!("the CoT-SC call")
    };
    // Four different answers: the majority (1 of 4) is weak, so ReAct takes over.
    let completions = ["Marrowick", "Ilse Varga", "Tessel River", "Grey Sea"]
        .map(|a| Completion::text(format!("Answer: {a}"), None))
        .to_vec();
    let response = LlmResponse {
        completions,
        usage: Usage::default(),
        latency_ms: 0,
        model: "test".into(),
        simulated: true,
        cached: false,
        lost: None,
    };
    let effects = app.on_reply(LlmReply { call, result: Ok(response) }, &request);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().find(|e| matches!(e, Effect::CallLlm { .. }))
    else {
        panic!("the first ReAct call")
    };
    let sim = SimProvider::new(SimConfig { noise: 0.0, ..SimConfig::default() }, &SimPlayers);
    app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
    select(&mut app, NodeId(0));
    let screen = render(&mut app, 160, 50);
    assert!(screen.contains("backing off to ReAct"), "{screen}");
    select(&mut app, NodeId(5));
    let screen = render(&mut app, 160, 50);
    assert!(screen.contains("Action 1: Search[Ilse Varga]"), "{screen}");
    assert!(!screen.contains("backing off to ReAct"), "the trajectory in place of the log: {screen}");
}

/// A knowledge backend that answers from the qa-demo corpus after `delay`, counting searches.
struct SlowCorpus {
    inner: crate::tools::corpus::Corpus,
    delay: std::time::Duration,
    searches: std::sync::atomic::AtomicUsize,
}

impl crate::tools::KnowledgeBackend for SlowCorpus {
    fn name(&self) -> &str {
        "slow corpus"
    }

    fn search<'a>(
        &'a self,
        entity: &'a str,
    ) -> crate::llm::BoxFuture<
        'a,
        Result<crate::tools::knowledge::SearchOutcome, crate::tools::knowledge::KnowledgeError>,
    > {
        Box::pin(async move {
            self.searches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            Ok(self.inner.find(entity))
        })
    }
}

/// The real explorer loop (`tui::drive`: key stream, 33 ms frame tick, driver,
/// drawing into a TestBackend) runs a ReAct agent whose search tool takes 200 ms on
/// tokio's paused clock. The tick fires about six times while each search is in
/// flight; a tool call that the loop's `select!` restarted would search again on
/// every tick. Each search must reach the backend exactly once.
#[tokio::test(start_paused = true)]
async fn explorer_loop_runs_a_slow_tool_once() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let slow = Arc::new(SlowCorpus {
        inner: crate::tools::corpus::qa_demo(),
        delay: std::time::Duration::from_millis(200),
        searches: Default::default(),
    });
    let task = crate::tasks::qa_demo::QaDemo::new(None).unwrap().with_knowledge(Some(slow.clone()));
    let task: Arc<dyn TaskSource> = Arc::new(task);
    let problem = task.problem(0).unwrap();
    let params = Params::new(crate::engine::methods::react::KIND);
    let mut setup = setup(dir.path(), params);
    setup.header.task = "qa-demo".into();
    setup.task = Arc::clone(&task);
    let app = App::live(setup, &problem, Keymap::default(), ThemeSet::default(), "dark");
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    // `r` runs the agent; the key stream then stays open (no more keys) until the run is done.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let key = |c| {
        Ok(ratatui::crossterm::event::Event::Key(ratatui::crossterm::event::KeyEvent::from(
            ratatui::crossterm::event::KeyCode::Char(c),
        )))
    };
    tx.send(key('r')).unwrap();
    let keys = tokio_stream_from(rx);
    let provider: Arc<dyn crate::llm::Provider> = Arc::new(SimProvider::new(SimConfig::default(), &SimPlayers));
    // The run takes a few simulated seconds (the paused clock jumps when all is idle);
    // after a simulated minute the loop is asked to quit.
    let quit = Box::pin(tokio::time::sleep(std::time::Duration::from_secs(60)));
    let app = super::drive(app, &mut terminal, keys.boxed(), quit, provider, 8, Vec::new()).await.unwrap();
    drop(tx);
    let outcome = app.session.run.engine.outcome().cloned();
    assert!(outcome.is_some(), "the agent finished within a simulated minute");
    let tool_calls = app.session.run.totals.tool_calls as usize;
    // Each step's thought holds its `Action i: Search[...]` line.
    let searches: usize = app
        .session
        .run
        .engine
        .tree()
        .nodes()
        .filter(|n| n.depth > 0 && n.thought.to_lowercase().contains(": search["))
        .count();
    assert!(searches >= 1, "the agent searched at least once");
    assert_eq!(
        slow.searches.load(std::sync::atomic::Ordering::SeqCst),
        searches,
        "each search reached the backend once ({tool_calls} tool calls in all)"
    );
}

fn tokio_stream_from<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<T>,
) -> impl futures::Stream<Item = T> + Send {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// `--budget-tokens` stops the explorer's run as it stops a headless one: the engine is
/// paused, the session records why, and later commands that could call are refused.
#[test]
fn explorer_stops_at_the_token_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut unlimited = live(dir.path(), Params::default());
    act(&mut unlimited, Action::RunPause);
    let all_tokens = unlimited.session.run.totals.prompt_tokens + unlimited.session.run.totals.completion_tokens;

    let mut setup = setup(dir.path(), Params::default());
    let budget = all_tokens / 3;
    setup.limits.budget.tokens = Some(budget);
    let problem = Problem { index: Some(900), input: "4 5 6 10".into() };
    let mut app = App::live(setup, &problem, Keymap::default(), ThemeSet::default(), "dark");
    act(&mut app, Action::RunPause);
    let stopped = app.session.run.stopped().cloned().expect("the budget stopped the run");
    assert!(matches!(stopped, crate::runtime::StopReason::Budget(_)), "{stopped:?}");
    let spent = app.session.run.totals.prompt_tokens + app.session.run.totals.completion_tokens;
    assert!(spent >= budget && spent < all_tokens, "spent {spent} of {all_tokens} with a budget of {budget}");
    assert!(app.message.as_deref().unwrap_or("").contains("budget exceeded"), "{:?}", app.message);
    assert_eq!(app.session.run.engine.mode(), crate::engine::RunMode::Paused);
    // Stepping again would spend: refused, with a line saying what to do.
    let effects = app.handle_action(Action::Step);
    assert!(effects.iter().all(|e| !matches!(e, Effect::CallLlm { .. })));
    assert!(app.message.as_deref().unwrap_or("").contains("start a new run"), "{:?}", app.message);
    let session = Session::load(&app.session_path().unwrap()).unwrap();
    assert!(session.stopped().is_some_and(|r| r.contains("budget exceeded")), "{:?}", session.stopped());
}

/// A refused key stops the explorer's run at the first reply, as headless.
#[test]
fn explorer_stops_on_a_fatal_provider_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let effects = app.handle_action(Action::RunPause);
    let Some(Effect::CallLlm { call, request }) = effects.into_iter().find(|e| matches!(e, Effect::CallLlm { .. }))
    else {
        panic!("running issues a call")
    };
    let refused =
        crate::protocol::CallError { kind: crate::protocol::CallErrorKind::Auth, message: "401 invalid key".into() };
    let effects = app.on_reply(LlmReply { call, result: Err(refused) }, &request);
    assert!(effects.iter().all(|e| !matches!(e, Effect::CallLlm { .. })), "nothing more is sent");
    assert!(matches!(app.session.run.stopped(), Some(crate::runtime::StopReason::Fatal { unreachable: false, .. })));
    assert!(app.message.as_deref().unwrap_or("").contains("the server refused the call"), "{:?}", app.message);
}

/// `--cache disk` works in the explorer: a second live run of the same puzzle is
/// answered from the disk cache by the real loop.
#[tokio::test(start_paused = true)]
async fn explorer_uses_the_disk_cache() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let mut totals = Vec::new();
    for _ in 0..2 {
        let mut setup = setup(dir.path(), Params::default());
        setup.limits.cache = crate::llm::cache::CacheMode::Disk;
        setup.limits.cache_dir = Some(dir.path().join("cache"));
        let problem = Problem { index: Some(900), input: "4 5 6 10".into() };
        let app = App::live(setup, &problem, Keymap::default(), ThemeSet::default(), "dark");
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        let key = ratatui::crossterm::event::KeyEvent::from(ratatui::crossterm::event::KeyCode::Char('r'));
        let keys = futures::stream::iter(vec![Ok(ratatui::crossterm::event::Event::Key(key))])
            .chain(futures::stream::pending());
        let quit = Box::pin(tokio::time::sleep(std::time::Duration::from_secs(30)));
        let provider: Arc<dyn crate::llm::Provider> = Arc::new(SimProvider::new(SimConfig::default(), &SimPlayers));
        let app = super::drive(app, &mut terminal, keys.boxed(), quit, provider, 8, Vec::new()).await.unwrap();
        assert!(app.session.run.engine.is_finished());
        totals.push(app.session.run.totals);
    }
    assert!(totals[0].llm_calls > 0);
    assert_eq!(totals[1].llm_calls, 0, "{:?}", totals[1]);
    assert_eq!(totals[1].cache_hits, totals[0].llm_calls + totals[0].cache_hits);
}

/// MCTS in the explorer: space runs one iteration, the status bar counts iterations,
/// and N and Q show on the nodes of the tree pane.
#[test]
fn mcts_steps_by_iteration_and_shows_n_and_q() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::new(crate::engine::methods::mcts::KIND));
    act(&mut app, Action::Step);
    assert_eq!(app.session.run.engine.view().step, 1);
    let root = app.session.run.engine.tree().node(NodeId(0));
    assert_eq!(root.metrics.get("N"), Some(&1.0));
    act(&mut app, Action::Step);
    assert_eq!(app.session.run.engine.view().step, 2);
    assert_eq!(app.session.run.engine.tree().node(NodeId(0)).metrics.get("N"), Some(&2.0));
    let screen = render(&mut app, 180, 40);
    assert!(screen.contains("#0 N=2 Q="), "{screen}");
    assert!(screen.contains("mcts c=1 iters 30"), "{screen}");
    assert!(screen.contains("iteration 2 ·"), "{screen}");
}

/// The explorer's state after input `k` must be a fresh rebuild's, with the events recorded so far.
fn assert_replay_state(app: &App, k: usize) {
    let r = app.session.replay.as_ref().unwrap();
    assert_eq!(r.cursor, k);
    let rebuilt = crate::session::replay::rebuild(&r.session, None, Some(k)).unwrap();
    let tree = |e: &crate::engine::Engine| serde_json::to_string(e.tree()).unwrap();
    assert_eq!(tree(&app.session.run.engine), tree(&rebuilt.engine), "tree at input {k}");
    assert_eq!(app.session.run.engine.pending_calls(), rebuilt.engine.pending_calls(), "pending calls at input {k}");
    assert_eq!(app.session.run.totals, rebuilt.totals, "totals at input {k}");
    let recorded: Vec<Event> = r
        .session
        .records
        .iter()
        .filter_map(|rec| match rec {
            Record::Event { seq, event } if (*seq as usize) < k => Some(event.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(app.session.events, recorded, "events at input {k}");
}

#[test]
fn explorer_seeks_through_the_cursor_back_and_forth() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 1);
    let total = app.session.replay.as_ref().unwrap().total;
    assert_replay_state(&app, total);
    for k in [0, 5, 4, total, 1, total - 1, 17, 16, 30, 2] {
        app.seek(k);
        assert_replay_state(&app, k);
    }
    act(&mut app, Action::ReplayStart);
    assert_replay_state(&app, 0);
    act(&mut app, Action::ReplayForward);
    act(&mut app, Action::ReplayForward);
    assert_replay_state(&app, 2);
    act(&mut app, Action::ReplayEnd);
    assert_replay_state(&app, total);
    act(&mut app, Action::ReplayBack);
    assert_replay_state(&app, total - 1);
}

#[test]
fn playback_plays_the_search_steps_due_since_the_last_frame() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    let total = app.session.replay.as_ref().unwrap().total;
    let steps = app.session.replay.as_ref().unwrap().marks.steps.clone();
    assert!(steps.len() >= 4, "{steps:?}");
    // Play from the end starts again at the beginning (through the captions: `P`'s stops are tested in captions.rs).
    act(&mut app, Action::ReplayPlayNonstop);
    assert!(app.session.replay.as_ref().unwrap().playing);
    assert_eq!(app.session.replay.as_ref().unwrap().speed, super::app::PLAY_SPEED);
    app.session.replay.as_mut().unwrap().speed = 4.0;
    // 0.3 s at 4 steps/s: 1.2 steps due, 1 played and 0.2 carried.
    app.play_tick(0.3);
    assert_replay_state(&app, steps[1]);
    app.play_tick(0.2);
    assert_replay_state(&app, steps[2]);
    // A frame too short for a whole step plays none, but counts towards the next.
    app.play_tick(0.1);
    assert_replay_state(&app, steps[2]);
    app.play_tick(0.0);
    assert_replay_state(&app, steps[2]);
    // Paused: nothing plays however long the frame.
    act(&mut app, Action::ReplayPlay);
    app.play_tick(10.0);
    assert_replay_state(&app, steps[2]);
    assert!(app.play_interval().is_none());
    // Playing on to the end stops there.
    act(&mut app, Action::ReplayPlayNonstop);
    app.play_tick(100.0);
    assert_replay_state(&app, total);
    assert!(!app.session.replay.as_ref().unwrap().playing);
    // Faster is capped.
    for _ in 0..20 {
        act(&mut app, Action::ReplayFaster);
    }
    assert_eq!(app.session.replay.as_ref().unwrap().speed, super::app::MAX_PLAY_SPEED);
    assert!(app.message.as_deref().unwrap_or("").contains("steps/s"));
}

/// The header keeps mode, outcome, method, step, calls, tokens and time at 80
/// columns, giving up detail (the question's tail, the model) rather than items.
#[test]
fn the_header_keeps_the_essentials_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let header = ui::status::header_text(&app, 80);
    assert!(header.starts_with(" PAUSED "), "{header}");
    act(&mut app, Action::RunPause);
    assert!(app.session.run.engine.is_finished());
    for width in [80, 120, 220] {
        let header = ui::status::header_text(&app, width);
        assert!(header.lines().all(|l| l.chars().count() <= width), "{width}: {header}");
        assert!(header.lines().count() <= if width >= 220 { 1 } else { 2 }, "{header}");
        for part in [" FINISHED ", "solved", "game24 #900", "tot-bfs", "step 4", "calls", "tok", "s"] {
            assert!(header.contains(part), "{width} columns: {part:?} missing from {header:?}");
        }
    }
    // The full parameters where there is room.
    assert!(ui::status::header_text(&app, 220).contains("tot-bfs b=5 n=3 propose/value"));
    // A long question is cut, not the rest of the line.
    app.session.header.input =
        "Which river flows through the town where the author of the novel was born, and how long is it?".into();
    let header = ui::status::header_text(&app, 80);
    assert!(header.lines().all(|l| l.chars().count() <= 80), "{header}");
    for part in [" FINISHED ", "solved", "Which river", "…", "tot-bfs", "calls", "tok"] {
        assert!(header.contains(part), "{part:?} missing from {header:?}");
    }
}

/// A simulated model is said in the header at every width and every point of a replay
/// (the 80×24 replay header dropped the word once the input count grew to two digits).
#[test]
fn the_header_always_says_the_model_is_simulated() {
    let dir = tempfile::tempdir().unwrap();
    let said = |header: &str| header.split(|c: char| !c.is_alphanumeric()).any(|w| w == "sim" || w == "simulated");
    for which in 0..crate::demos::DEMOS.len() {
        let mut app = demo_opened(dir.path(), which);
        let total = app.session.replay.as_ref().unwrap().total;
        for at in (0..=total).step_by((total / 25).max(1)).chain([total]) {
            app.seek(at);
            for width in [60, 80, 120, 220] {
                let header = ui::status::header_text(&app, width);
                assert!(said(&header), "demo {} at {at}/{total}, {width} wide: {header}", which + 1);
            }
        }
    }
    // A real model's header does not say it.
    let mut app = demo_replay(dir.path(), 0);
    app.session.header.simulated = false;
    app.session.header.provider = "openai".into();
    app.session.header.model = "gpt-4o".into();
    assert!(!said(&ui::status::header_text(&app, 80)));
}

/// Tokens a server did not report are estimates, and the header says so (`~`); the
/// simulated model's own counts, and an imported log's totals, are not marked.
#[test]
fn the_header_marks_estimated_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::RunPause);
    let total = app.session.run.totals.tokens();
    assert!(total > 0 && app.session.run.totals.estimated_tokens == 0, "{:?}", app.session.run.totals);
    let plain = format!(" {} tok", ui::status::short_count(total));
    assert!(ui::status::header_text(&app, 120).contains(&plain), "{}", ui::status::header_text(&app, 120));
    app.session.run.totals.estimated_tokens = total / 2;
    for width in [80, 120, 220] {
        let header = ui::status::header_text(&app, width);
        assert!(header.contains(&format!(" ~{} tok", ui::status::short_count(total))), "{width}: {header}");
    }
    app.session.header.provider = "import:tot".into();
    assert!(ui::status::header_text(&app, 120).contains(&plain));
}

/// A call whose tokens the server did not report says in the detail pane how they were
/// estimated (from the text, and the tool definitions when the request offered tools).
#[test]
fn the_detail_pane_says_how_a_calls_tokens_were_estimated() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    let node = app.session.run.engine.tree().nodes().find_map(|n| n.made_by.map(|_| n.id)).expect("a model-made node");
    select(&mut app, node);
    let detail = |app: &App| -> String {
        let view = ui::View::new(app, app.selected());
        ui::detail::lines(&view).iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n")
    };
    assert!(!detail(&app).contains("estimated"), "the simulated model's counts are its own: {}", detail(&app));
    let call = app.session.run.engine.tree().node(node).made_by.unwrap();
    let record = Arc::make_mut(app.session.run.engine.core.calls.get_mut(&call).unwrap());
    if let Some(Ok(reply)) = &mut record.reply {
        reply.usage.estimated = true;
        reply.simulated = false;
    }
    let text = detail(&app);
    assert!(text.contains("tokens (estimated from the text: the server reported no usage)"), "{text}");
    let record = Arc::make_mut(app.session.run.engine.core.calls.get_mut(&call).unwrap());
    record.request.tools.push(crate::protocol::ToolDef {
        name: "search".into(),
        description: "look it up".into(),
        parameters: serde_json::json!({}),
    });
    assert!(detail(&app).contains("(estimated from the text and the tool definitions"), "{}", detail(&app));
}

/// Pausing with calls in flight says so until they land; the mode reads FINISHED at the end.
#[test]
fn pausing_shows_the_calls_still_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    let effects = app.handle_action(Action::RunPause);
    assert_eq!(ui::status::mode(&app).0, "RUNNING");
    app.handle_action(Action::RunPause);
    let in_flight = app.session.run.engine.pending_calls().len();
    assert!(in_flight > 0);
    assert_eq!(ui::status::mode(&app).0, format!("pausing ({in_flight} in flight)"));
    settle(&mut app, effects);
    assert_eq!(ui::status::mode(&app).0, "PAUSED");
    act(&mut app, Action::RunPause);
    assert_eq!(ui::status::mode(&app).0, "FINISHED");
}

/// The clock counts busy time only (10 s of reading before a step used to show
/// 10+ s), the session's end line records it, and messages expire.
#[tokio::test(start_paused = true)]
async fn the_clock_counts_busy_time_and_messages_expire() {
    use futures::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    app.message = Some("a note from the start".into());
    let mut terminal = Terminal::new(TestBackend::new(100, 30)).unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let key = |c| {
            Ok(ratatui::crossterm::event::Event::Key(ratatui::crossterm::event::KeyEvent::from(
                ratatui::crossterm::event::KeyCode::Char(c),
            )))
        };
        // Ten seconds of reading, a step, ten more seconds, quit.
        tokio::time::sleep(std::time::Duration::from_secs(10)).await;
        tx.send(key(' ')).unwrap();
        tokio::time::sleep(std::time::Duration::from_secs(10)).await;
        tx.send(key('q')).unwrap();
        std::future::pending::<()>().await;
    });
    let provider: Arc<dyn crate::llm::Provider> = Arc::new(SimProvider::new(SimConfig::default(), &SimPlayers));
    let quit = Box::pin(tokio::time::sleep(std::time::Duration::from_secs(60)));
    let app =
        super::drive(app, &mut terminal, tokio_stream_from(rx).boxed(), quit, provider, 8, Vec::new()).await.unwrap();
    assert!(app.session.run.totals.llm_calls >= 1, "the step ran");
    assert!(app.session.elapsed_ms < 1000, "busy time only, not the 20 s of reading: {} ms", app.session.elapsed_ms);
    assert_eq!(app.message, None, "the start message expired");
    let session = Session::load(&app.session_path().unwrap()).unwrap();
    let ended = session.records.iter().rev().find_map(|r| match r {
        crate::session::Record::End { wall_ms, .. } => Some(*wall_ms),
        _ => None,
    });
    assert!(ended.is_some_and(|ms| ms < 1000), "the session records busy time: {ended:?}");
}

/// A live ReAct run on qa-demo, finished by the sim, with its tool runner.
fn react_on_qa_demo(dir: &Path) -> (App, crate::runtime::tools::ToolRunner) {
    let mut app = react_live_on_qa_demo(dir);
    let mut tools = crate::runtime::tools::ToolRunner::new(app.session.setup.task.tools().unwrap());
    let fx = app.handle_action(Action::RunPause);
    settle_react(&mut app, fx, &mut tools);
    assert!(app.session.run.engine.is_finished());
    (app, tools)
}

/// The step a person's edit of `from` made.
fn edited_from(app: &App, from: NodeId) -> Vec<NodeId> {
    let tree = app.session.run.engine.tree();
    tree.nodes()
        .filter(|n| matches!(n.origin, Origin::Human { edited_from: Some(f) } if f == from))
        .map(|n| n.id)
        .collect()
}

/// Editing a ReAct step: the popup reads from column 0 with the text wrapped, its title
/// says what happens to a ReAct step, the cursor moves over wrapped lines, and with
/// `sim` the rewritten thought steers the next action (the unchanged old action line is
/// not run again).
#[test]
fn a_react_edit_popup_wraps_and_the_sim_agent_follows_the_edited_thought() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let dir = tempfile::tempdir().unwrap();
    let (mut app, mut tools) = react_on_qa_demo(dir.path());
    let step2 = app.session.run.engine.tree().nodes().find(|n| n.depth == 2).map(|n| n.id).unwrap();
    let old = app.session.run.engine.tree().node(step2).thought.clone();
    let thought_line = old.lines().next().unwrap().to_string();
    assert!(thought_line.chars().count() > 74, "long enough to wrap in the popup: {thought_line}");
    select(&mut app, step2);
    app.handle_action(Action::Edit);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("Edit step 2: the agent continues from your thought"), "{screen}");
    assert!(!screen.contains("evaluated"), "a ReAct step is not evaluated: {screen}");
    assert!(screen.contains("│Thought 2: "), "the popup starts at column 0: {screen}");
    let last_word = thought_line.split_whitespace().last().unwrap();
    assert!(screen.contains(&format!("│{last_word}")), "the thought wraps onto a second line: {screen}");
    assert!(screen.contains("│Action 2: "), "{screen}");

    // The cursor waits at the end of the thought and moves over the wrapped lines.
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let cursor = |app: &App| match &app.popup {
        Some(super::app::Popup::Edit { editor, .. }) => editor.cursor(),
        _ => panic!("the edit popup is open"),
    };
    let end = thought_line.chars().count();
    assert_eq!(cursor(&app), (0, end));
    app.handle_key(key(KeyCode::Down));
    assert_eq!(cursor(&app).0, 1, "down to the action line");
    app.handle_key(key(KeyCode::Up));
    assert_eq!(cursor(&app).0, 0, "up to the thought's wrapped second line");
    app.handle_key(key(KeyCode::Up));
    assert_eq!(cursor(&app).0, 0, "up to its first line");
    assert!(cursor(&app).1 < end - last_word.len(), "on the first screen line: {:?}", cursor(&app));
    app.handle_key(key(KeyCode::End));
    assert_eq!(cursor(&app), (0, end));

    // Rewrite the thought, leave the action line: the agent writes the action for it.
    for _ in 0..end - "Thought 2: ".len() {
        app.handle_key(key(KeyCode::Backspace));
    }
    for c in "look up flows".chars() {
        app.handle_key(key(KeyCode::Char(c)));
    }
    let fx = app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    settle_react(&mut app, fx, &mut tools);
    let new = edited_from(&app, step2);
    assert_eq!(new.len(), 1, "one edit");
    let thought = &app.session.run.engine.tree().node(new[0]).thought;
    assert!(thought.starts_with("Thought 2: look up flows\nAction 2: Lookup[flows]\nObservation 2: "), "{thought}");

    // A thought that names an entity: the next action searches it.
    let fx = app.submit_edit(step2, "Thought 2: The answer is about the Tessel River, I think.".into());
    settle_react(&mut app, fx, &mut tools);
    let new = edited_from(&app, step2);
    assert_eq!(new.len(), 2);
    let step = app.session.run.engine.tree().node(new[1]).step.as_deref().cloned().unwrap();
    assert_eq!(
        step.action,
        Some(crate::protocol::ToolRequest { name: "search".into(), arg: "Tessel River".into() }),
        "the edit steered the agent"
    );
    assert!(step.observation.unwrap_or_default().contains("Tessel River is the longest river"));

    // Saved unchanged, the step keeps its action (only a rewritten thought drops it).
    select(&mut app, step2);
    app.handle_action(Action::Edit);
    let fx = app.handle_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
    settle_react(&mut app, fx, &mut tools);
    let new = edited_from(&app, step2);
    assert_eq!(new.len(), 3);
    let again = app.session.run.engine.tree().node(new[2]).step.as_deref().cloned().unwrap();
    assert_eq!(again.action, app.session.run.engine.tree().node(step2).step.as_ref().unwrap().action);
}

/// A tree search's edit popup says the edit becomes a sibling and is evaluated.
#[test]
fn a_tree_search_edit_popup_says_the_thought_becomes_an_evaluated_sibling() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    select(&mut app, NodeId(1));
    app.handle_action(Action::Edit);
    let screen = render(&mut app, 120, 30);
    assert!(screen.contains("Edit thought #1: becomes a new sibling, evaluated"), "{screen}");
    // A screen narrower than the popup is no reason to panic.
    for (w, h) in [(20, 6), (2, 2), (1, 1)] {
        render(&mut app, w, h);
    }
}

/// `i` asks in the task's words, and a bad input is named as the task's input (not
/// as the command line's `--input`).
#[test]
fn new_input_prompts_and_errors_speak_the_task() {
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    app.handle_action(Action::NewInput);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("New puzzle: a puzzle number or four numbers"), "{screen}");
    assert!(screen.contains("e.g. 900 or 4 9 10 13"), "the examples are the placeholder: {screen}");
    app.popup = None;
    for (typed, message) in [
        ("abc", "\"abc\" is not a puzzle: expected numbers separated by spaces"),
        ("1 2", "\"1 2\" is not a puzzle: expected 4 numbers, got 2"),
        ("99999", "there is no puzzle 99999: the list has 1362, numbered 0 to 1361"),
        ("", "no puzzle given: type a puzzle number or four numbers"),
    ] {
        app.answer(Prompting::NewInput, typed);
        assert_eq!(app.message.as_deref(), Some(message), "{typed:?}");
    }

    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::react::KIND));
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let mut app = App::live(s, &task.problem(0).unwrap(), Keymap::default(), ThemeSet::default(), "dark");
    app.handle_action(Action::NewInput);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("New question: a question number or a question of your own"), "{screen}");
    assert!(!screen.contains("puzzle"), "no Game-of-24 wording: {screen}");
    app.popup = None;
    select(&mut app, NodeId(0));
    app.handle_action(Action::Edit);
    assert_eq!(app.message.as_deref(), Some("the root is the question itself: press i for a new question"));
    app.popup = None;
    for (typed, message) in [
        ("99", "there is no question 99: the list has 15, numbered 0 to 14"),
        ("  ", "no question given: type a question number or a question of your own"),
    ] {
        app.answer(Prompting::NewInput, typed);
        assert_eq!(app.message.as_deref(), Some(message), "{typed:?}");
    }
    app.answer(Prompting::NewInput, "3");
    assert_eq!(app.session.header.index, Some(3));
    app.answer(Prompting::NewInput, "Who founded the University of Marrowick?");
    assert_eq!(app.session.header.input, "Who founded the University of Marrowick?");
}

/// Demos open at the start on their first caption, titled, and the caption box shows it.
#[test]
fn demos_open_at_their_first_caption_with_title_and_description() {
    let dir = tempfile::tempdir().unwrap();
    for (i, demo) in crate::demos::DEMOS.iter().enumerate() {
        let mut app = demo_opened(dir.path(), i);
        assert_eq!(app.session.replay.as_ref().unwrap().cursor, 0, "{} opens at the start", demo.file);
        let (caption, k, n) = app.caption().expect("a caption at the start");
        assert_eq!((k, caption.at), (1, 0));
        assert!(n >= 3, "{}: {n} captions", demo.file);
        assert_eq!(caption.title.as_deref(), Some(demo.title));
        let note = app.session.header.note.clone().unwrap();
        assert!(caption.text.contains(&note), "the description is told: {}", caption.text);
        let screen = render(&mut app, 160, 45);
        assert!(screen.contains(demo.title), "{screen}");
        assert!(screen.contains(&format!("1/{n}")), "{screen}");
    }
}

/// `]` and `[` move a whole search step, `}` and `{` to the next human action or caption:
/// demo 1 (89 inputs) is told in a handful of presses.
#[test]
fn the_timeline_moves_by_search_step_and_by_caption() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_opened(dir.path(), 0);
    let total = app.session.replay.as_ref().unwrap().total;
    assert!(total > 80);
    // Each `]` lands after a step's last reply: the step's beam selection is in.
    act(&mut app, Action::ReplayStepForward);
    let after_one = app.session.replay.as_ref().unwrap().cursor;
    assert!(after_one > 1 && after_one < total, "{after_one}");
    let selected = |app: &App| app.session.events.iter().filter(|e| matches!(e, Event::Selected { .. })).count();
    assert_eq!(selected(&app), 1, "one step done at {after_one}");
    let mut presses = 1;
    while app.session.replay.as_ref().unwrap().cursor < total {
        act(&mut app, Action::ReplayStepForward);
        presses += 1;
        assert!(presses < 10, "the end in a handful of steps");
    }
    assert_eq!(selected(&app), 4);
    act(&mut app, Action::ReplayStepBack);
    assert!(app.session.replay.as_ref().unwrap().cursor < total);
    act(&mut app, Action::ReplayStart);
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, 0);
    // `}` walks the captions one by one; `{` comes back.
    let n = app.caption().unwrap().2;
    for k in 2..=n {
        act(&mut app, Action::ReplayMarkForward);
        assert_eq!(app.caption().unwrap().1, k, "caption {k} at input {}", app.session.replay.as_ref().unwrap().cursor);
    }
    act(&mut app, Action::ReplayMarkBack);
    assert_eq!(app.caption().unwrap().1, n - 1);
    // One input at a time is still there.
    let at = app.session.replay.as_ref().unwrap().cursor;
    act(&mut app, Action::ReplayForward);
    assert_eq!(app.session.replay.as_ref().unwrap().cursor, at + 1);
}

/// `}` stops at what a person did (demo 3: the edit and the continue), each with its caption.
#[test]
fn the_timeline_stops_at_human_actions() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_opened(dir.path(), 2);
    let session = Arc::clone(&app.session.replay.as_ref().unwrap().session);
    let edit_at = session
        .records
        .iter()
        .find_map(|r| match r {
            Record::Input { seq, input: Input::Command { command: Command::Edit { .. } }, .. } => Some(*seq as usize),
            _ => None,
        })
        .unwrap();
    let mut stops = Vec::new();
    while app.session.replay.as_ref().unwrap().cursor < app.session.replay.as_ref().unwrap().total {
        act(&mut app, Action::ReplayMarkForward);
        stops.push(app.session.replay.as_ref().unwrap().cursor);
    }
    assert!(stops.contains(&(edit_at + 1)), "{stops:?} stops right after the edit at {edit_at}");
    app.seek(edit_at + 1);
    let (caption, _, _) = app.caption().unwrap();
    assert!(caption.text.contains("edits"), "{}", caption.text);
}

/// Demo 3 shows the greedy search failing on its dead end before the edit rescues it.
#[test]
fn the_edit_demo_fails_before_the_edit_rescues_it() {
    let session = crate::demos::load(&crate::demos::DEMOS[2]).unwrap();
    let mut failed_at = None;
    let mut edited_at = None;
    for r in &session.records {
        match r {
            Record::Event { seq, event: Event::Finished { outcome } } if !outcome.solved && failed_at.is_none() => {
                failed_at = Some(*seq)
            }
            Record::Input { seq, input: Input::Command { command: Command::Edit { .. } }, .. } => {
                edited_at = Some(*seq)
            }
            _ => {}
        }
    }
    let (failed, edited) = (failed_at.expect("the search fails first"), edited_at.expect("an edit"));
    assert!(failed < edited, "fails at input {failed}, edited at {edited}");
    let captions = session.captions();
    assert!(captions.iter().any(|c| c.at == failed as usize + 1 && c.text.contains("without a solution")));
}

/// Help is grouped by context, and explains every mark the tree and scores panes draw
/// and the score badge.
#[test]
fn help_is_grouped_with_a_glyph_legend_and_the_badge_explained() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    act(&mut app, Action::Help);
    let text = render(&mut app, 200, 120);
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle:?} in the help:\n{text}"));
    assert!(
        at("Steering") < at("Moving around") && at("Moving around") < at("Replay") && at("Replay") < at("The screen")
    );
    assert!(at("Steering") < at("Prune the selected") && at("Prune the selected") < at("Moving around"));
    assert!(at("Replay (the timeline)") < at("one search step forward"));
    // Every status glyph the tree draws is in the legend.
    use crate::engine::tree::{DropReason, NodeStatus as S};
    let statuses = [
        S::Candidate,
        S::Frontier,
        S::Expanded,
        S::Dropped(DropReason::BelowBeam { beam: 1, step: 1 }),
        S::Pruned,
        S::Invalid("x".into()),
        S::Final,
        S::Solution,
    ];
    let legend = &text[at("What the marks mean")..];
    for status in statuses {
        let mut tree = crate::engine::tree::SearchTree::new("x");
        let root = tree.root();
        tree.node_mut(root).status = status.clone();
        let glyph = ui::tree::status_glyph(tree.node(root));
        assert!(legend.contains(&format!(" {glyph} ")), "{glyph} ({status:?}) is explained:\n{legend}");
    }
    for mark in ["✎", "▶ ▼", "N= Q=", "█░", "beam", "…"] {
        assert!(legend.contains(mark), "{mark} is explained");
    }
    assert!(legend.contains("s sure") && legend.contains("l likely") && legend.contains("i impossible"), "{legend}");
}

// ---- Panes that agree with the engine, a selection that stays, everything reachable ----

/// The inner rows of `pane` as drawn at `width`×`height`.
fn pane_rows(app: &mut App, pane: Pane, width: u16, height: u16) -> Vec<String> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal
        .draw(|f| {
            ui::draw_app(f, app);
        })
        .unwrap();
    let area = app.areas[pane.index()];
    let buffer = terminal.backend().buffer();
    (area.y + 1..area.y + area.height.saturating_sub(1))
        .map(|y| (area.x + 1..area.x + area.width.saturating_sub(1)).map(|x| buffer[(x, y)].symbol()).collect())
        .collect()
}

/// The mark a node's status should have in the tree pane (the README's legend).
fn expected_glyph(status: &NodeStatus) -> &'static str {
    match status {
        NodeStatus::Candidate => "·",
        NodeStatus::Frontier => "○",
        NodeStatus::Expanded => "●",
        NodeStatus::Dropped(
            crate::engine::tree::DropReason::NoChildLeft
            | crate::engine::tree::DropReason::Backtracked
            | crate::engine::tree::DropReason::Exhausted,
        ) => "↩",
        NodeStatus::Dropped(_) => "–",
        NodeStatus::Pruned => "✂",
        NodeStatus::Invalid(_) => "✗",
        NodeStatus::Final => "◇",
        NodeStatus::Solution => "★",
    }
}

/// Every node of the engine's tree is on a row of the tree pane (nothing was collapsed
/// by hand), with the mark of its status in the engine.
fn assert_tree_pane_matches_engine(app: &mut App, after: &str) {
    let nodes: Vec<(NodeId, NodeStatus)> =
        app.session.run.engine.tree().nodes().map(|n| (n.id, n.status.clone())).collect();
    let rows = pane_rows(app, Pane::Tree, 220, nodes.len() as u16 + 30);
    for (id, status) in nodes {
        let mark = format!("{} {id} ", expected_glyph(&status));
        let row = rows.iter().find(|r| r.contains(&format!(" {id} ")) && r.contains(&format!("{id} ")));
        assert!(
            rows.iter().any(|r| r.contains(&mark)),
            "after {after}: {id} ({status:?}) should show as {mark:?}; its row: {row:?}\n{}",
            rows.join("\n")
        );
    }
}

/// Move the selection by hand (as arrow keys do) and put it on `node`.
fn select_by_hand(app: &mut App, node: NodeId) {
    app.view.focus = Pane::Tree;
    act(app, Action::Top);
    select(app, node);
}

#[test]
fn the_selection_stays_where_the_person_put_it_and_follow_tracks_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    assert!(app.following(), "following at the start");
    assert_eq!(app.selected(), NodeId(app.session.run.engine.tree().len() - 1), "the newest node while following");
    // The person picks #2; stepping does not take it away.
    select_by_hand(&mut app, NodeId(2));
    assert!(!app.following(), "moving the selection stops following");
    act(&mut app, Action::Step);
    assert!(app.session.run.engine.tree().len() > 10);
    assert_eq!(app.selected(), NodeId(2), "the selection stayed on #2");
    let rows = pane_rows(&mut app, Pane::Detail, 160, 45);
    assert!(rows[0].starts_with("#2 "), "the detail pane shows #2: {rows:?}");
    // F follows again: at once the newest node, and after each step the new newest.
    act(&mut app, Action::ToggleFollow);
    assert!(app.following());
    assert_eq!(app.selected(), NodeId(app.session.run.engine.tree().len() - 1));
    assert!(render(&mut app, 160, 45).contains("nodes · following"), "the tree pane's title says so");
    act(&mut app, Action::Step);
    assert_eq!(app.selected(), NodeId(app.session.run.engine.tree().len() - 1));
    act(&mut app, Action::ToggleFollow);
    assert!(!app.following());
    // The key is in the keymap.
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    app.handle_key(KeyEvent::new(KeyCode::Char('F'), KeyModifiers::SHIFT));
    assert!(app.following(), "F toggles follow");
}

#[test]
fn a_finished_run_and_a_demo_at_its_end_land_on_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::RunPause);
    let outcome = app.session.run.engine.outcome().cloned().expect("finished");
    let selected = app.selected();
    assert!(outcome.finals.contains(&selected), "{selected} is a final state of {:?}", outcome.finals);
    if outcome.solved_any {
        assert_eq!(app.session.run.engine.tree().node(selected).status, NodeStatus::Solution);
    }
    assert_ne!(selected, NodeId(app.session.run.engine.tree().len() - 1), "not simply the last node made");
    // Each demo opens at its end on its solution.
    for which in 0..crate::demos::DEMOS.len() {
        let app = demo_replay(dir.path(), which);
        let tree = app.session.run.engine.tree();
        assert_eq!(tree.node(app.selected()).status, NodeStatus::Solution, "demo {}", which + 1);
    }
    // A person who moved the selection keeps it when the run ends.
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    select_by_hand(&mut app, NodeId(1));
    act(&mut app, Action::RunPause);
    assert_eq!(app.selected(), NodeId(1));
}

#[test]
fn every_command_leaves_the_tree_pane_agreeing_with_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default().with("breadth", 2));
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    assert_tree_pane_matches_engine(&mut app, "two steps");
    let tree = app.session.run.engine.tree();
    let dropped = tree.nodes().find(|n| matches!(n.status, NodeStatus::Dropped(_))).expect("a dropped state").id;
    let kept: Vec<NodeId> = tree.nodes().filter(|n| n.status == NodeStatus::Frontier).map(|n| n.id).collect();

    // x on a dropped node: its new children show, evaluated, and its mark is the engine's.
    select_by_hand(&mut app, dropped);
    act(&mut app, Action::Expand);
    let children = app.session.run.engine.tree().node(dropped).children.clone();
    assert!(!children.is_empty(), "the expansion made children");
    assert!(children.iter().all(|&c| app.session.run.engine.tree().node(c).score.is_some()), "and evaluated them");
    assert_eq!(app.selected(), dropped, "the selection stays on the expanded node");
    assert_tree_pane_matches_engine(&mut app, "expanding a dropped node");

    select_by_hand(&mut app, kept[0]);
    act(&mut app, Action::Prune);
    assert_tree_pane_matches_engine(&mut app, "prune");
    act(&mut app, Action::Prune);
    assert_tree_pane_matches_engine(&mut app, "un-prune");
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    assert_tree_pane_matches_engine(&mut app, "two more steps");
    act(&mut app, Action::Backtrack);
    assert_tree_pane_matches_engine(&mut app, "backtrack");
    let effects = app.submit_edit(kept[1], "10 - 4 = 6 (left: 5 6 6)".into());
    settle(&mut app, effects);
    assert!(
        matches!(app.session.run.engine.tree().node(app.selected()).origin, Origin::Human { .. }),
        "the edit is selected"
    );
    assert_tree_pane_matches_engine(&mut app, "edit");
    select_by_hand(&mut app, kept[1]);
    act(&mut app, Action::Reevaluate);
    assert_tree_pane_matches_engine(&mut app, "re-evaluate");
    let dropped =
        app.session.run.engine.tree().nodes().filter(|n| matches!(n.status, NodeStatus::Dropped(_))).last().unwrap().id;
    select_by_hand(&mut app, dropped);
    act(&mut app, Action::Continue);
    act(&mut app, Action::Step);
    assert!(!app.session.run.engine.tree().node(dropped).children.is_empty(), "the search went on from {dropped}");
    assert_tree_pane_matches_engine(&mut app, "continue");
    act(&mut app, Action::RunPause);
    assert_tree_pane_matches_engine(&mut app, "the end of the run");
}

#[test]
fn continue_on_a_react_step_shows_the_new_branch() {
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let mut tools = crate::runtime::tools::ToolRunner::new(task.tools().unwrap());
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::react::KIND));
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
    let fx = app.handle_action(Action::RunPause);
    settle_react(&mut app, fx, &mut tools);
    assert!(app.session.run.engine.is_finished());
    let step2 = app.session.run.engine.tree().nodes().find(|n| n.depth == 2).unwrap().id;
    select_by_hand(&mut app, step2);
    let before = app.session.run.engine.tree().len();
    let fx = app.handle_action(Action::Continue);
    settle_react(&mut app, fx, &mut tools);
    let fx = app.handle_action(Action::Step);
    settle_react(&mut app, fx, &mut tools);
    assert!(app.session.run.engine.tree().len() > before, "continuing made a new branch");
    assert_eq!(app.selected(), step2);
    assert_tree_pane_matches_engine(&mut app, "continue on a ReAct step");
}

#[test]
fn the_detail_pane_scrolls_to_the_end_of_wrapped_text_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    // A long streamed reply for the root's first call: long lines that wrap many times.
    let effects = app.handle_action(Action::Step);
    let Some(Effect::CallLlm { call, .. }) = effects.first() else { panic!("a call") };
    let long: Vec<String> =
        (0..12).map(|i| format!("line {i}: {}", "a thought that goes on and on ".repeat(5))).collect();
    app.on_delta(*call, 0, &format!("{}\nthe very last words ZQXEND", long.join("\n")));
    app.view.focus = Pane::Detail;
    let shown = |app: &mut App| pane_rows(app, Pane::Detail, 80, 24).join("\n");
    assert!(!shown(&mut app).contains("ZQXEND"));
    act(&mut app, Action::Bottom);
    let at_end = shown(&mut app);
    assert!(at_end.contains("ZQXEND"), "the last line is reachable:\n{at_end}");
    // Up from the end moves at once (the offset is not parked past the limit).
    act(&mut app, Action::Up);
    let up = shown(&mut app);
    assert_ne!(up, at_end);
    // Page by page from the top also reaches it.
    act(&mut app, Action::Top);
    for _ in 0..200 {
        act(&mut app, Action::PageDown);
    }
    assert!(shown(&mut app).contains("ZQXEND"));
}

#[test]
fn the_transcript_wraps_long_observations_at_80x24() {
    use crate::tasks::qa_demo::QaDemo;
    let dir = tempfile::tempdir().unwrap();
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let mut tools = crate::runtime::tools::ToolRunner::new(task.tools().unwrap());
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::react::KIND));
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
    let fx = app.handle_action(Action::RunPause);
    settle_react(&mut app, fx, &mut tools);
    // The step with the longest observation: its last word is on screen.
    let (node, observation) = app
        .session
        .run
        .engine
        .tree()
        .nodes()
        .filter_map(|n| Some((n.id, n.step.as_ref()?.observation.clone()?)))
        .max_by_key(|(_, o)| o.chars().count())
        .unwrap();
    assert!(observation.chars().count() > 80, "a long observation: {observation}");
    let last = observation.split_whitespace().last().unwrap().to_string();
    select(&mut app, node);
    // The step shows from its ▶ Thought line; PageDown reads on to its last word.
    let rows = pane_rows(&mut app, Pane::Transcript, 80, 24);
    assert!(rows[0].starts_with("▶ Thought"), "{rows:#?}");
    app.view.focus = Pane::Transcript;
    let mut seen = rows.join("\n");
    for _ in 0..5 {
        act(&mut app, Action::PageDown);
        seen = pane_rows(&mut app, Pane::Transcript, 80, 24).join("\n");
        if seen.contains(&last) {
            break;
        }
    }
    assert!(seen.contains(&last), "{last:?} is shown:\n{seen}");
    // Scrolling counts wrapped lines: from the top, the question, then down to the end.
    app.view.focus = Pane::Transcript;
    act(&mut app, Action::Top);
    let top = pane_rows(&mut app, Pane::Transcript, 80, 24);
    assert!(top[0].starts_with("Question:"), "{top:?}");
}

#[test]
fn the_transcript_says_each_thing_once_with_counts_in_agreement() {
    let dir = tempfile::tempdir().unwrap();
    let texts = |app: &App| -> Vec<String> {
        let view = ui::View::new(app, app.selected());
        ui::transcript::lines(&view).iter().map(|l| l.to_string()).collect()
    };
    // DFS: a backtrack is one line, with its reason.
    let app = demo_replay(dir.path(), 1);
    let lines = texts(&app);
    let backtracks: Vec<&String> = lines.iter().filter(|l| l.starts_with("backtracked")).collect();
    assert!(backtracks.len() >= 2, "{lines:#?}");
    assert!(backtracks.iter().all(|l| l.contains(": ")), "each with its reason: {backtracks:#?}");
    for pair in lines.windows(2) {
        assert!(!pair[1].starts_with(pair[0].as_str()), "said twice: {pair:?}");
    }
    // Demo 3: the greedy search ends unsolved, an edit is valued (which ends the paused
    // search again, with the same verdict), and the continued search solves it: each
    // verdict is told once.
    let lines = texts(&demo_replay(dir.path(), 2));
    let verdicts: Vec<&String> = lines.iter().filter(|l| l.starts_with("finished:")).collect();
    assert_eq!(verdicts.len(), 2, "{lines:#?}");
    assert!(verdicts[0].starts_with("finished: not solved") && verdicts[1].starts_with("finished: solved"));
    // BFS: a backtrack by hand says from where to where, in one line that wraps at 80 columns.
    let mut app = live(dir.path(), Params::default().with("breadth", 2));
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    act(&mut app, Action::Backtrack);
    let lines = texts(&app);
    let backtracks: Vec<&String> = lines.iter().filter(|l| l.starts_with("backtracked")).collect();
    assert_eq!(backtracks.len(), 1, "{lines:#?}");
    assert!(backtracks[0].contains(" to #") && backtracks[0].ends_with("of the step before"), "{backtracks:?}");
    let rows = pane_rows(&mut app, Pane::Transcript, 80, 24).join("\n");
    assert!(rows.contains("\nthe step before"), "the end of the long line wraps into view:\n{rows}");
    // Counts agree with their nouns in every demo's log and in a greedy run.
    let mut all: Vec<String> = Vec::new();
    for which in 0..crate::demos::DEMOS.len() {
        all.extend(texts(&demo_replay(dir.path(), which)));
    }
    let mut greedy = live(dir.path(), Params::default().with("breadth", 1));
    act(&mut greedy, Action::RunPause);
    all.extend(texts(&greedy));
    assert!(all.iter().any(|l| l.contains("expanding 1 state")), "a one-state step is logged");
    for line in &all {
        for wrong in
            [" 1 states", " 1 children", " 1 candidates", "of 1 candidates", " 1 votes", " 1 calls", " 1 iterations"]
        {
            assert!(!line.contains(wrong), "{wrong:?} in {line:?}");
        }
    }
    assert!(all.iter().any(|l| l.contains("1 child passes the threshold")), "{all:#?}");
}

#[test]
fn a_node_closed_by_hand_stays_closed_while_new_children_show_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default().with("breadth", 2));
    for _ in 0..3 {
        act(&mut app, Action::Step);
    }
    let tree = app.session.run.engine.tree();
    let kept = tree.nodes().find(|n| n.depth == 1 && !n.children.is_empty()).expect("an expanded state").id;
    let hidden = tree.node(kept).children.clone();
    let dropped = tree.nodes().find(|n| matches!(n.status, NodeStatus::Dropped(_))).expect("a dropped state").id;
    // Close the expanded state with the left arrow, then expand another node by hand.
    select_by_hand(&mut app, kept);
    act(&mut app, Action::Left);
    select(&mut app, dropped);
    act(&mut app, Action::Expand);
    let made = app.session.run.engine.tree().node(dropped).children.clone();
    assert!(!made.is_empty());
    let rows = pane_rows(&mut app, Pane::Tree, 220, 80).join("\n");
    for id in made {
        assert!(rows.contains(&format!(" {id} ")), "the new child {id} shows:\n{rows}");
    }
    for id in hidden {
        assert!(!rows.contains(&format!(" {id} ")), "{id} stays inside its closed parent:\n{rows}");
    }
}

/// Every row of the scores pane, scrolled through from the top (the pane shows a window of them).
fn score_rows(app: &mut App, width: u16, height: u16) -> (Vec<String>, String) {
    let pane = |app: &mut App| -> Vec<String> {
        let full = render(app, width, height);
        let r = app.areas[Pane::Scores.index()];
        full.lines()
            .skip(r.y as usize)
            .take(r.height as usize)
            .map(|l| {
                let inner: String = l
                    .trim_start_matches('"')
                    .trim_end_matches('"')
                    .chars()
                    .skip(r.x as usize)
                    .take(r.width as usize)
                    .collect();
                inner
            })
            .collect()
    };
    app.scores.scroll = 0;
    let first = pane(app);
    let title = first[0].clone();
    let inner = |lines: &[String]| -> Vec<String> {
        lines[1..lines.len() - 1].iter().map(|l| l.trim_start_matches('│').trim_end_matches('│').to_string()).collect()
    };
    let max = crate::tui::state::scores::max_scroll(app);
    // At the top the pane may skip rows to show the cut-off line: read on from one row down.
    let mut rows = inner(&first);
    if max > 0 {
        app.scores.scroll = 1;
        rows.truncate(1);
        rows.extend(inner(&pane(app)));
    }
    for s in 2..=max {
        app.scores.scroll = s as u16;
        rows.push(inner(&pane(app)).last().cloned().unwrap_or_default());
    }
    app.scores.scroll = 0;
    while rows.last().is_some_and(|r| r.trim().is_empty()) {
        rows.pop();
    }
    (rows, title)
}

/// The node a scores row shows (`○ #12 41 lss ...`), if it shows one.
fn row_node(row: &str) -> Option<NodeId> {
    row.split_whitespace().nth(1)?.strip_prefix('#')?.parse().ok().map(NodeId)
}

/// The ids shown above and below the cut-off line (`── beam b=5 ──`), checking each
/// row's mark against the engine's status.
fn beam_split(app: &mut App) -> (Vec<NodeId>, Vec<NodeId>) {
    let (rows, _) = score_rows(app, 160, 50);
    let cut = rows.iter().position(|r| r.contains("beam b=")).unwrap_or_else(|| panic!("no beam line: {rows:#?}"));
    let ids = |rows: &[String]| -> Vec<NodeId> {
        rows.iter()
            .map(|r| {
                let id = row_node(r).unwrap_or_else(|| panic!("not a node row: {r:?}"));
                let glyph = ui::tree::status_glyph(app.session.run.engine.tree().node(id));
                assert!(r.trim_start().starts_with(glyph), "{id} is marked {glyph} in the engine: {r:?}");
                id
            })
            .collect()
    };
    (ids(&rows[..cut]), ids(&rows[cut + 1..]))
}

/// The issue's reproduction: after pruning the best kept state at step 1, the scores
/// pane drew it above the beam line unmarked and put a dropped state inside the beam;
/// after a backtrack it still showed the old beam. The pane must say what the engine kept.
#[test]
fn the_scores_pane_agrees_with_the_engine_after_prune_and_backtrack() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let frontier = |app: &App, depth: usize| -> std::collections::BTreeSet<NodeId> {
        app.session
            .run
            .engine
            .tree()
            .nodes()
            .filter(|n| n.depth == depth && n.status == NodeStatus::Frontier)
            .map(|n| n.id)
            .collect()
    };
    let (kept, rest) = beam_split(&mut app);
    assert_eq!(kept.len(), 5);
    assert_eq!(kept.iter().copied().collect::<std::collections::BTreeSet<_>>(), frontier(&app, 1));
    // Prune the best kept state: it leaves the beam, marked, and no dropped state takes its place.
    let best = kept[0];
    select(&mut app, best);
    act(&mut app, Action::Prune);
    assert_eq!(app.session.run.engine.tree().node(best).status, NodeStatus::Pruned);
    let (kept, after) = beam_split(&mut app);
    assert_eq!(kept.len(), 4, "four states are left in the beam");
    assert_eq!(kept.iter().copied().collect::<std::collections::BTreeSet<_>>(), frontier(&app, 1));
    assert!(after.contains(&best), "the pruned state is below the beam line");
    assert_eq!(after.len(), rest.len() + 1);
    // The next step expands exactly the four states the pane shows in the beam.
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let expanded: std::collections::BTreeSet<NodeId> = app
        .session
        .run
        .engine
        .tree()
        .nodes()
        .filter(|n| n.depth == 1 && n.status == NodeStatus::Expanded)
        .map(|n| n.id)
        .collect();
    assert_eq!(expanded, kept.iter().copied().collect());
    // Backtrack: the new beam is what the engine keeps now, the old one is marked dropped.
    let (old, _) = beam_split(&mut app);
    act(&mut app, Action::Backtrack);
    assert!(app.session.events.iter().any(|e| matches!(e, Event::Backtracked { .. })));
    let (kept, after) = beam_split(&mut app);
    assert_eq!(kept.iter().copied().collect::<std::collections::BTreeSet<_>>(), frontier(&app, 2));
    assert!(kept.iter().all(|id| !old.contains(id)), "the old beam left: {kept:?} vs {old:?}");
    assert!(old.iter().all(|id| after.contains(id)), "the old beam is below the line, marked dropped");
}

/// The pane scrolls when focused and says how much of the list it shows; thoughts use
/// the whole width; an invalid candidate reads differently from one awaiting its value.
#[test]
fn the_scores_pane_scrolls_counts_and_tells_invalid_from_pending() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    // Step 2's evaluation with only its first reply in: the rest are pending.
    let effects = app.handle_action(Action::Step);
    let calls: Vec<(u64, LlmRequest)> = effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::CallLlm { call, request } => Some((call, request)),
            _ => None,
        })
        .collect();
    assert!(calls.len() > 1);
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    let (call, request) = &calls[0];
    app.on_reply(LlmReply { call: *call, result: sim.answer(request) }, request);
    let candidates = crate::tui::state::scores::current_candidates(&app);
    let n = candidates.len();
    assert!(candidates.iter().all(|c| c.depth == 2));
    let invalid: Vec<NodeId> =
        candidates.iter().filter(|c| matches!(c.status, NodeStatus::Invalid(_))).map(|c| c.id).collect();
    let pending: Vec<NodeId> =
        candidates.iter().filter(|c| c.status == NodeStatus::Candidate && c.score.is_none()).map(|c| c.id).collect();
    assert!(!invalid.is_empty() && !pending.is_empty(), "{invalid:?} {pending:?}");
    // A long thought is shown whole when the pane is wide enough.
    let long = "4 * 6 = 24 (left: 24), then 24 is reached";
    app.session.run.engine.core.tree.node_mut(pending[0]).thought = long.into();
    let (rows, title) = score_rows(&mut app, 160, 50);
    assert_eq!(rows.iter().filter(|r| row_node(r).is_some()).count(), n, "every candidate has a row: {rows:#?}");
    assert!(title.contains(&format!(" of {n}")), "the title counts what is shown: {title}");
    for row in &rows {
        let Some(id) = row_node(row) else { continue };
        let node = app.session.run.engine.tree().node(id);
        if invalid.contains(&id) {
            assert!(row.trim_start().starts_with('✗') && !row.contains('…'), "invalid: {row:?}");
        } else if pending.contains(&id) {
            assert!(row.trim_start().starts_with('·') && row.contains(" … "), "pending: {row:?}");
        }
        let thought = node.thought.lines().next().unwrap_or("");
        assert!(row.contains(thought), "the whole thought {thought:?} fits in {row:?}");
    }
    assert!(rows.iter().any(|r| r.contains(long)));
    // Focused, the pane scrolls by its own keys (the tree selection stays).
    let selected = app.selected();
    act(&mut app, Action::FocusScores);
    act(&mut app, Action::Down);
    assert_eq!(app.scores.scroll, 1);
    assert_eq!(app.selected(), selected);
    let full = render(&mut app, 160, 50);
    let r = app.areas[Pane::Scores.index()];
    let title = full.lines().nth(r.y as usize).unwrap_or("");
    assert!(title.contains("2–") && title.contains(&format!(" of {n}")), "{title}");
    act(&mut app, Action::Bottom);
    assert_eq!(usize::from(app.scores.scroll), crate::tui::state::scores::max_scroll(&app));
    act(&mut app, Action::Top);
    assert_eq!(app.scores.scroll, 0);
}

fn qa_live(dir: &Path, params: Params) -> App {
    use crate::tasks::qa_demo::QaDemo;
    let task: Arc<dyn TaskSource> = Arc::new(QaDemo::new(None).unwrap());
    let mut s = setup(dir, params);
    s.task = Arc::clone(&task);
    s.header.task = "qa-demo".into();
    let problem = task.problem(0).unwrap();
    App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark")
}

/// CoT-SC on qa-demo: samples are labelled by the answer they vote for, and the scores
/// pane shows the vote (not "no evaluations yet") with the majority marked.
#[test]
fn cot_sc_shows_its_vote_in_the_tree_and_the_scores_pane() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = qa_live(dir.path(), Params::new(crate::engine::methods::cot_sc::KIND).with("samples", 21));
    let (rows, title) = score_rows(&mut app, 160, 50);
    assert!(rows[0].contains("waiting for 21 samples"), "{rows:?}");
    assert!(title.contains("vote"), "{title}");
    act(&mut app, Action::RunPause);
    assert!(app.session.run.engine.is_finished());
    let votes = app.session.run.engine.view().votes.expect("cot-sc has a vote");
    assert_eq!(votes.samples, 21);
    let majority = votes.tallies[0].clone();
    let answer = app.session.run.engine.outcome().and_then(|o| o.answer.clone()).unwrap();
    assert_eq!(majority.answer, app.session.run.engine.core.task.answer_key(&answer));
    assert!(votes.tallies.windows(2).all(|w| w[0].votes >= w[1].votes));
    let screen = render(&mut app, 160, 50);
    assert!(!screen.contains("no evaluations yet"), "{screen}");
    // The tree: every sample by its answer.
    let tree = app.session.run.engine.tree();
    for &(id, ref a) in &votes.answers {
        assert!(screen.contains(&format!("{id} answer: {a}")), "{id} answer: {a}\n{screen}");
        assert_eq!(tree.node(id).parent, Some(NodeId(0)));
    }
    // The pane: one row per answer with its votes, the majority first and marked.
    let (rows, title) = score_rows(&mut app, 160, 50);
    assert!(title.contains("vote of 21 samples"), "{title}");
    assert!(rows[0].starts_with(&format!("▶ {}", majority.answer)), "{rows:#?}");
    assert_eq!(rows.iter().filter(|r| r.starts_with('▶')).count(), 1);
    for t in &votes.tallies {
        let text = |r: &String| r.strip_prefix("▶ ").or_else(|| r.strip_prefix("  ")).unwrap_or("").to_string();
        let row =
            rows.iter().map(text).find(|r| r.starts_with(&t.answer)).unwrap_or_else(|| panic!("{t:?}: {rows:#?}"));
        let count: usize = row[t.answer.len()..].split_whitespace().next().unwrap().parse().unwrap();
        assert_eq!(count, t.votes, "{row}");
        assert!(row.contains(&t.first.to_string()));
    }
}

/// cot-sc-react: the threshold line (majority_threshold × n) sits between the answers
/// that reach it and the rest.
#[test]
fn cot_sc_react_draws_the_majority_threshold() {
    use crate::protocol::{Completion, LlmResponse, Usage};
    let run = |answers: [&str; 4]| -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let params = Params::new(crate::engine::methods::hybrid::COT_SC_REACT).with("samples", 4);
        let mut app = qa_live(dir.path(), params);
        let effects = app.handle_action(Action::Step);
        let Some(Effect::CallLlm { call, request }) = effects.into_iter().find(|e| matches!(e, Effect::CallLlm { .. }))
        else {
            panic!("the CoT-SC call")
        };
        let completions = answers.map(|a| Completion::text(format!("Answer: {a}"), None)).to_vec();
        let response = LlmResponse {
            completions,
            usage: Usage::default(),
            latency_ms: 0,
            model: "test".into(),
            simulated: true,
            cached: false,
            lost: None,
        };
        app.on_reply(LlmReply { call, result: Ok(response) }, &request);
        let screen = render(&mut app, 160, 50);
        assert!(screen.contains("answer: Grey Sea"), "{screen}");
        score_rows(&mut app, 160, 50).0
    };
    // 2 of 4 reach 0.5 × 4: the line comes after the majority.
    let rows = run(["Marrowick", "Ilse Varga", "Marrowick", "Grey Sea"]);
    assert!(rows[0].starts_with("▶ Marrowick") && rows[0].contains(" 2 "), "{rows:#?}");
    assert!(rows[1].contains("needs 0.5 × 4 = 2"), "{rows:#?}");
    assert_eq!(rows.len(), 4, "{rows:#?}");
    // Four different answers: none reaches it, the line is on top.
    let rows = run(["Marrowick", "Ilse Varga", "Tessel River", "Grey Sea"]);
    assert!(rows[0].contains("needs 0.5 × 4 = 2"), "{rows:#?}");
    assert!(rows[1].starts_with("▶ Marrowick"), "ties go to the answer seen first: {rows:#?}");
}

/// Snapshot the whole screen at 80×24 and 160×45 after a command, asserting the
/// header shows the method, the mode and (when finished) the outcome.
fn snapshot_scenario(app: &mut App, name: &str, mode: &str) {
    let method = app.session.header.params.method.label().to_string();
    for (w, h) in [(80u16, 24u16), (160, 45)] {
        let screen = render(app, w, h);
        let header: String = screen.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(header.contains(&method), "{name} {w}x{h}: no method in the header\n{header}");
        assert!(header.contains(mode), "{name} {w}x{h}: mode {mode:?} not in the header\n{header}");
        if let Some(o) = app.session.run.engine.outcome() {
            let verdict = ui::outcome::Verdict::of(o, &app.session.run.engine);
            let outcome = format!("{} {}", verdict.glyph(), verdict.word());
            assert!(header.contains(&outcome), "{name} {w}x{h}: outcome not in the header\n{header}");
        }
        insta::assert_snapshot!(format!("scenario_{name}_{w}x{h}"), screen);
    }
}

/// Every pane after run, prune, backtrack, edit and finish, for Game of 24 BFS and DFS,
/// qa-demo ReAct and cot-sc: what the screen shows is pinned, and the header always
/// names the method, the mode and the outcome.
#[test]
fn snapshots_of_the_panes_after_each_command() {
    let dir = tempfile::tempdir().unwrap();
    // BFS: a step, a prune, a backtrack, an edit, the finish.
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    snapshot_scenario(&mut app, "bfs_step", "PAUSED");
    let kept = app.session.run.engine.tree().nodes().find(|n| n.status == NodeStatus::Frontier).unwrap().id;
    select(&mut app, kept);
    act(&mut app, Action::Prune);
    snapshot_scenario(&mut app, "bfs_prune", "PAUSED");
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    act(&mut app, Action::Backtrack);
    snapshot_scenario(&mut app, "bfs_backtrack", "PAUSED");
    select(&mut app, NodeId(1));
    app.handle_action(Action::Edit);
    snapshot_scenario(&mut app, "bfs_edit", "PAUSED");
    app.popup = None;
    act(&mut app, Action::RunPause);
    snapshot_scenario(&mut app, "bfs_finish", "FINISHED");
    // DFS to the end.
    let mut app = live(dir.path(), Params::new(crate::engine::methods::tot_dfs::KIND));
    act(&mut app, Action::RunPause);
    snapshot_scenario(&mut app, "dfs_finish", "FINISHED");
    // qa-demo ReAct, finished, then an edit of its second step open.
    let (mut app, _tools) = react_on_qa_demo(dir.path());
    snapshot_scenario(&mut app, "react_finish", "FINISHED");
    let step2 = app.session.run.engine.tree().nodes().find(|n| n.depth == 2).unwrap().id;
    select(&mut app, step2);
    app.handle_action(Action::Edit);
    snapshot_scenario(&mut app, "react_edit", "FINISHED");
    // cot-sc on qa-demo: the vote.
    let mut app = qa_live(dir.path(), Params::new(crate::engine::methods::cot_sc::KIND).with("samples", 21));
    act(&mut app, Action::RunPause);
    snapshot_scenario(&mut app, "cot_sc_finish", "FINISHED");
}

/// A message longer than the screen is wide takes a second footer line rather than
/// being cut (`this is a read-only replay: …` used to lose its advice at 80 columns).
#[test]
fn a_long_message_wraps_onto_a_second_footer_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    let message =
        "cannot fork: /tmp/some/long/path/to/a/sessions/folder/x.jsonl: Permission denied; choose another folder";
    app.message = Some(message.to_string());
    let screen = render(&mut app, 80, 24);
    let rows: Vec<&str> = screen.lines().collect();
    let footer = format!("{}{}", rows[rows.len() - 2], rows[rows.len() - 1]);
    let flat: String = footer.replace('"', "").split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(message.split_whitespace().last().unwrap()), "the whole message shows:\n{screen}");
    assert!(!flat.contains('…'), "{flat}");
}

/// Restarting (R) or a new input (i) closes the session it leaves with its end line,
/// once, so that recording replays as complete rather than "incomplete".
#[test]
fn restart_and_new_input_close_the_session_they_leave() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Step);
    let first = app.session_path().unwrap();
    act(&mut app, Action::Restart);
    let second = app.session_path().unwrap();
    assert_ne!(first, second);
    let session = Session::load(&first).unwrap();
    assert!(session.complete(), "the left session has its end line");
    let ends = std::fs::read_to_string(&first).unwrap().lines().filter(|l| l.contains("\"kind\":\"end\"")).count();
    assert_eq!(ends, 1);
    act(&mut app, Action::Step);
    app.finish_recording();
    app.finish_recording();
    let ends = std::fs::read_to_string(&second).unwrap().lines().filter(|l| l.contains("\"kind\":\"end\"")).count();
    assert_eq!(ends, 1, "a second finish writes nothing");
}

/// Several problems in one explorer, `o` (open a session or demo), problems in the settings.
mod problems;

/// The session browser (`o`): rows, order, grouping, filter, open, malformed and live files.
mod browser;

/// The memory pane, the backtrack-cause chooser, memory lines and score-part columns.
mod memory;

/// Self-Refine in the explorer: a chain of attempts labelled with answer and verdict,
/// the feedback under the attempt in the detail pane, the status bar counting attempts,
/// and the edit popup editing the feedback so the next refinement follows it.
#[test]
fn self_refine_shows_rounds_with_their_feedback_and_edits_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::new(crate::engine::methods::self_refine::KIND));
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let attempt = NodeId(1);
    let node = app.session.run.engine.tree().node(attempt).clone();
    assert!(node.note("feedback").is_some(), "two steps: an answer and its feedback");
    select(&mut app, attempt);
    app.view.focus = Pane::Detail;
    let screen = render(&mut app, 180, 45);
    assert!(screen.contains("#1 attempt 1 · answer "), "{screen}");
    assert!(screen.contains("✗ incorrect") || screen.contains("✓ correct"), "{screen}");
    assert!(screen.contains("Feedback"), "the detail pane shows the feedback: {screen}");
    assert!(screen.contains("VERDICT: "), "{screen}");
    assert!(screen.contains("self-refine rounds=4 feedback=self"), "{screen}");
    assert!(screen.contains("attempt 1 ·"), "{screen}");
    // The edit popup holds the attempt and, under its heading, the feedback.
    app.handle_action(Action::Edit);
    let Some(super::app::Popup::Edit { editor, .. }) = &app.popup else { panic!("the edit popup opens") };
    assert!(editor.lines().iter().any(|l| l == "── feedback ──"), "{:?}", editor.lines());
    let text = editor.lines().join("\n");
    app.popup = None;
    let (attempt_text, _) = text.split_once("── feedback ──").unwrap();
    let edited = format!("{attempt_text}── feedback ──\nMultiply 5 by 6 first.\nVERDICT: incorrect");
    let fx = app.submit_edit(attempt, edited);
    settle(&mut app, fx);
    act(&mut app, Action::Step);
    let refine = app.session.run.engine.core.calls.values().last().unwrap();
    assert_eq!(refine.request.purpose, crate::protocol::Purpose::Refine);
    assert_eq!(refine.request.context["feedback"], "Multiply 5 by 6 first.\nVERDICT: incorrect");
    assert_eq!(refine.node, attempt);
}

#[test]
fn star_jumps_to_the_best_valued_state_even_when_a_solution_is_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default().with("breadth", 3));
    act(&mut app, Action::Step);
    act(&mut app, Action::Step);
    let tree = app.session.run.engine.tree();
    let depth = tree.nodes().filter(|n| n.score.is_some()).map(|n| n.depth).max().unwrap();
    let mut level: Vec<(f64, NodeId)> =
        tree.nodes().filter(|n| n.depth == depth).filter_map(|n| n.score.as_ref().map(|s| (s.value, n.id))).collect();
    level.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap().then(a.1.cmp(&b.1)));
    let (best, worst) = (level[0], *level.last().unwrap());
    assert!(best.0 > worst.0, "the level has different values: {level:?}");
    // A solution that is not the best-valued state.
    app.session.run.engine.core.tree.node_mut(worst.1).status = NodeStatus::Solution;
    act(&mut app, Action::JumpBest);
    assert_eq!(app.selected(), best.1, "* is the best-valued state; n goes to solutions");
    act(&mut app, Action::NextSolution);
    assert_eq!(app.selected(), worst.1);
}

/// Breakpoints in the explorer and the Stats view.
mod breaks;
/// `X`: exporting the tree on screen.
mod export;
/// Every session this project has shipped opens and steps in the explorer.
mod shipped;
/// The Stats view's axes: per method step, and over the calls' latencies.
mod stats;

/// The calls pane (`L`): its figures against the recorded replies, its filters.
mod calls;
/// Every fact a demo's captions state agrees with what the demo recorded.
mod caption_facts;
/// The demos' captions read whole at 80×24, and playing stops at each.
mod captions;
/// Every task the sim plays, with every method that serves it, runs and replays in the explorer.
mod every_task;
mod explorer;
/// Find, go to a node, the filter and zoom.
mod find;
/// `replay --follow`: a session shown as it is written.
mod follow;
/// Hand-off: the pager, the editor, the clipboard.
mod handoff;
/// The session path at the start, clicks on the scores pane, the help's order.
mod small;
/// What steering shows: repeats of `x`, `v`'s values, statuses, counts and bars.
mod steering;
/// `u`: undo the last steering command by a fork.
mod undo;
