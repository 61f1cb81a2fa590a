//! Breakpoints in the explorer (pause before sending, the message and selection, the
//! `B` list, replays stopping at the same places) and the Stats view `S`.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::engine::RunMode;
use crate::tui::app::Popup;
use crate::tui::ui::stats::Stats;

fn with_breaks(dir: &Path, breaks: &[&str]) -> App {
    let mut setup = setup(dir, Params::default());
    setup.limits.breakpoints = breaks.iter().map(|s| s.to_string()).collect();
    let problem = Problem { index: Some(900), input: "4 5 6 10".into() };
    App::live(setup, &problem, Keymap::default(), ThemeSet::default(), "dark")
}

fn key(app: &mut App, code: KeyCode) {
    let effects = app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    settle(app, effects);
}

fn calls_in(effects: &[Effect]) -> usize {
    effects.iter().filter(|e| matches!(e, Effect::CallLlm { .. } | Effect::CallTool { .. })).count()
}

#[test]
fn a_firing_breakpoint_pauses_before_sending_selects_the_node_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = with_breaks(dir.path(), &["score<0.3"]);
    // Drive by hand to see what each reply sends.
    let sim = SimProvider::new(SimConfig::default(), &crate::tasks::SimPlayers);
    let mut queue: VecDeque<(u64, LlmRequest)> = VecDeque::new();
    let mut effects = app.handle_action(Action::RunPause);
    let hit_effects = loop {
        for e in effects {
            match e {
                Effect::CallLlm { call, request } => queue.push_back((call, request)),
                Effect::Cancel { calls } => queue.retain(|(c, _)| !calls.contains(c)),
                _ => {}
            }
        }
        let Some((call, request)) = queue.pop_front() else { panic!("the search ended without the breakpoint firing") };
        let out = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
        if !app.session.run.break_hits().is_empty() {
            break out;
        }
        effects = out;
    };
    let hit = app.session.run.break_hits()[0].clone();
    assert_eq!(calls_in(&hit_effects), 0, "nothing new is sent when a breakpoint fires");
    assert_eq!(app.session.run.engine.mode(), RunMode::Paused);
    let node = hit.hit.node.expect("a scored node");
    assert_eq!(app.selected(), node, "the node is selected");
    let message = app.message.clone().unwrap();
    assert!(message.starts_with("break score<0.3: "), "{message}");
    assert!(message.contains(&format!("{node} scored")), "{message}");
    let value = app.session.run.engine.tree().node(node).score.as_ref().unwrap().value;
    assert!(value < 0.3);
    // The calls in flight land, but nothing new goes out while paused.
    for (call, request) in std::mem::take(&mut queue) {
        let out = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
        assert_eq!(calls_in(&out), 0, "paused: nothing new");
    }
    let held = app.session.run.held().len();
    // Running again sends what was held first.
    let resumed = app.handle_action(Action::RunPause);
    assert!(calls_in(&resumed) >= held, "{} < {held}", calls_in(&resumed));
    settle(&mut app, resumed);
    // It pauses again wherever the breakpoint fires again; run on until the end.
    for _ in 0..100 {
        if app.session.run.engine.is_finished() {
            break;
        }
        act(&mut app, Action::RunPause);
    }
    assert!(app.session.run.engine.is_finished());
    // The session holds the breakpoints as a command, and the pause the breakpoint made.
    let path = app.session_path().unwrap();
    let commands = recorded_commands(&path);
    assert_eq!(commands[0], Command::Breakpoints { set: vec!["score<0.3".into()] });
    assert_eq!(commands[1], Command::Run);
    assert_eq!(commands[2], Command::Pause);
    let rebuilt = crate::session::replay::rebuild(&Session::load(&path).unwrap(), None, None).unwrap();
    assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
}

#[test]
fn a_replay_plays_until_the_same_places() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = with_breaks(dir.path(), &["score<0.3", "solution"]);
    act(&mut app, Action::RunPause);
    // Resume after each pause until the search is over.
    let mut guard = 0;
    while !app.session.run.engine.is_finished() {
        act(&mut app, Action::RunPause);
        guard += 1;
        assert!(guard < 200, "the search never finishes");
    }
    let live: Vec<(u64, Option<NodeId>, String)> =
        app.session.run.break_hits().iter().map(|h| (h.input, h.hit.node, h.hit.breakpoint.clone())).collect();
    assert!(live.len() >= 2, "{live:?}");
    let path = app.session_path().unwrap();
    app.finish_recording();
    let session = Session::load(&path).unwrap();
    let mut replay =
        App::replay(setup(dir.path(), Params::default()), session, Keymap::default(), ThemeSet::default(), "dark")
            .unwrap();
    replay.seek(0);
    let mut stops = Vec::new();
    for _ in 0..live.len() {
        if let Some(r) = replay.session.replay.as_mut() {
            r.playing = true;
        }
        let mut ticks = 0;
        while replay.session.replay.as_ref().is_some_and(|r| r.playing) {
            replay.play_tick(1.0);
            ticks += 1;
            assert!(ticks < 10_000);
        }
        let at = replay.session.replay.as_ref().unwrap().cursor;
        let message = replay.message.clone().unwrap_or_default();
        if !message.starts_with("break ") {
            break;
        }
        stops.push((at as u64 - 1, replay.selected(), message));
        // Several breakpoints on one input are one stop.
        while stops.len() < live.len() && live.get(stops.len()).is_some_and(|l| l.0 == at as u64 - 1) {
            let last = stops.last().unwrap().clone();
            stops.push(last);
        }
    }
    let places: Vec<u64> = stops.iter().map(|s| s.0).collect();
    let expected: Vec<u64> = live.iter().map(|l| l.0).collect();
    assert_eq!(places, expected, "{stops:?}");
    let first_node = live[0].1.unwrap();
    assert_eq!(stops[0].1, first_node, "the replay selects the node the live run did");
    assert!(stops[0].2.ends_with("stopped"), "{}", stops[0].2);
}

#[test]
fn the_b_list_adds_toggles_and_removes_as_recorded_commands() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::Breaks);
    assert!(matches!(app.popup, Some(Popup::Breaks(_))));
    key(&mut app, KeyCode::Char('a'));
    for c in "scroe<1".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    let Some(Popup::Breaks(list)) = &app.popup else { panic!("the list stays open") };
    let error = list.error.clone().expect("a refusal");
    assert!(error.starts_with("breakpoint `scroe<1`: `scroe` is not a condition; accepted:"), "{error}");
    for _ in 0..7 {
        key(&mut app, KeyCode::Backspace);
    }
    for c in "solution".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.breakpoint_texts(), ["solution"]);
    key(&mut app, KeyCode::Char(' '));
    assert_eq!(app.breakpoint_texts(), ["#solution"]);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("[off] solution"), "{screen}");
    key(&mut app, KeyCode::Char('d'));
    assert!(app.breakpoint_texts().is_empty());
    key(&mut app, KeyCode::Esc);
    assert!(app.popup.is_none());
    let commands = recorded_commands(&app.session_path().unwrap());
    assert_eq!(
        commands,
        [
            Command::Breakpoints { set: vec!["solution".into()] },
            Command::Breakpoints { set: vec!["#solution".into()] },
            Command::Breakpoints { set: vec![] },
        ]
    );
}

#[test]
fn stats_agree_with_the_run_totals_and_draw_at_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::RunPause);
    assert!(app.session.run.engine.is_finished());
    let stats = Stats::of(&app.session.run.engine);
    let totals = app.session.run.totals;
    assert_eq!(stats.calls, totals.llm_calls);
    assert_eq!(stats.tokens, totals.prompt_tokens + totals.completion_tokens);
    assert_eq!(stats.by_purpose.iter().map(|(_, n)| n).sum::<u64>(), totals.llm_calls);
    assert_eq!(stats.tokens_per_call.len() as u64, totals.llm_calls);
    let scored = app.session.run.engine.tree().nodes().filter(|n| n.score.is_some()).count();
    assert_eq!(stats.scores.values().map(Vec::len).sum::<usize>(), scored);
    act(&mut app, Action::Stats);
    assert!(matches!(app.popup, Some(Popup::Stats)));
    for (w, h) in [(80, 24), (220, 60)] {
        let screen = render(&mut app, w, h);
        let run_line = format!("{} calls · {} tokens", stats.calls, stats.tokens);
        assert!(screen.contains(&run_line), "{w}x{h}: {screen}");
        assert!(screen.contains("depth 1"), "{w}x{h}: {screen}");
        assert!(screen.contains("calls by purpose"), "{w}x{h}: {screen}");
        let (top, n) = &stats.by_purpose[0];
        let share = format!("{n} ({:.0}%)", *n as f64 * 100.0 / stats.calls as f64);
        assert!(screen.contains(top.as_str()) && screen.contains(&share), "{w}x{h}: {screen}");
        insta::assert_snapshot!(format!("stats_{w}x{h}"), screen);
    }
    key(&mut app, KeyCode::Char('x'));
    assert!(app.popup.is_none(), "any key closes the view");
}

/// Held at a breakpoint, nothing new is sent until the search runs or steps: a hand
/// command's calls (here an expand) join the held ones, the message line and the header
/// say so, and a step sends them all; the session still replays without a mismatch.
#[test]
fn held_at_a_breakpoint_a_hand_commands_calls_wait_for_run_or_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = with_breaks(dir.path(), &["score<0.3"]);
    let sim = SimProvider::new(SimConfig::default(), &crate::tasks::SimPlayers);
    let mut queue: VecDeque<(u64, LlmRequest)> = VecDeque::new();
    push(&mut queue, app.handle_action(Action::RunPause));
    while app.session.run.break_hits().is_empty() {
        let Some((call, request)) = queue.pop_front() else { panic!("the search ended without the breakpoint firing") };
        let out = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
        push(&mut queue, out);
    }
    assert!(app.session.run.at_break());
    // The calls in flight land; nothing new goes out.
    for (call, request) in std::mem::take(&mut queue) {
        let out = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
        assert_eq!(calls_in(&out), 0, "held: nothing new");
    }
    let held_before = app.session.run.held().len();
    let header = |app: &App| crate::tui::ui::status::mode(app).0;
    let expected = if held_before == 0 { "PAUSED".to_string() } else { format!("PAUSED ({held_before} held)") };
    assert_eq!(header(&app), expected, "held calls are not in flight");
    // Expand the root by hand: its calls wait with the held ones.
    select(&mut app, NodeId(0));
    let out = app.handle_action(Action::Expand);
    assert_eq!(calls_in(&out), 0, "an expand while held sends nothing");
    let held = app.session.run.held().len();
    assert!(held > held_before, "the expand's calls are held: {held} vs {held_before}");
    let joined = held - held_before;
    let message = app.message.clone().unwrap();
    assert!(message.starts_with("held at a breakpoint: "), "{message}");
    assert!(message.contains(&format!("{joined} new call")), "{message}");
    assert!(message.contains(&format!("{held} held in all")) && message.contains("r runs, space steps"), "{message}");
    assert_eq!(header(&app), format!("PAUSED ({held} held)"));
    for (w, h) in [(80, 24), (220, 60)] {
        let screen = render(&mut app, w, h);
        assert!(screen.contains("held at a breakpoint"), "{w}x{h}: {screen}");
        assert!(screen.contains(&format!("PAUSED ({held} held)")), "{w}x{h}: {screen}");
    }
    // A step sends everything held, the expand's calls included, and the hold is over.
    let stepped = app.handle_action(Action::Step);
    assert!(calls_in(&stepped) >= held, "{} < {held}", calls_in(&stepped));
    assert!(app.session.run.held().is_empty() && !app.session.run.at_break());
    settle(&mut app, stepped);
    for _ in 0..100 {
        if app.session.run.engine.is_finished() {
            break;
        }
        act(&mut app, Action::RunPause);
    }
    let path = app.session_path().unwrap();
    let commands = recorded_commands(&path);
    assert!(commands.contains(&Command::Expand { node: NodeId(0) }), "{commands:?}");
    let rebuilt = crate::session::replay::rebuild(&Session::load(&path).unwrap(), None, None).unwrap();
    assert!(rebuilt.fidelity.is_exact(), "{}", rebuilt.fidelity);
}

/// Issue 28: replies still in flight when `score<2` pauses the run land while it is held;
/// each low score they bring is named too (the first node stays selected), and a
/// breakpoint on the input that finished the search says finished, not paused.
#[test]
fn every_low_score_of_a_held_batch_is_named_and_a_finished_run_is_not_called_paused() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = with_breaks(dir.path(), &["score<2"]);
    let sim = SimProvider::new(SimConfig::default(), &crate::tasks::SimPlayers);
    let mut queue: VecDeque<(u64, LlmRequest)> = VecDeque::new();
    let mut effects = app.handle_action(Action::RunPause);
    loop {
        for e in effects {
            if let Effect::CallLlm { call, request } = e {
                queue.push_back((call, request));
            }
        }
        let (call, request) = queue.pop_front().expect("the breakpoint fires");
        effects = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
        if !app.session.run.break_hits().is_empty() {
            break;
        }
    }
    let first = app.selected();
    for (call, request) in std::mem::take(&mut queue) {
        app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
    }
    let message = app.message.clone().unwrap();
    let low: Vec<NodeId> = app
        .session
        .run
        .engine
        .tree()
        .nodes()
        .filter(|n| n.score.as_ref().is_some_and(|s| s.value < 2.0))
        .map(|n| n.id)
        .collect();
    assert!(low.len() > 1, "several low scores in the batch: {low:?}");
    for id in &low {
        assert!(message.contains(&format!("{id} scored")), "{id} not named: {message}");
    }
    assert!(message.ends_with("— paused"), "{message}");
    assert_eq!(app.selected(), first, "the first hit stays selected");

    // `solution`: each hit says paused while the search goes on, finished once it is over.
    let mut app = with_breaks(dir.path(), &["solution"]);
    let mut queue: VecDeque<(u64, LlmRequest)> = VecDeque::new();
    let mut effects = app.handle_action(Action::RunPause);
    let (mut said, mut hits) = (Vec::new(), 0);
    loop {
        for e in effects {
            if let Effect::CallLlm { call, request } = e {
                queue.push_back((call, request));
            }
        }
        let Some((call, request)) = queue.pop_front() else {
            if app.session.run.engine.is_finished() {
                break;
            }
            effects = app.handle_action(Action::RunPause);
            continue;
        };
        effects = app.on_reply(LlmReply { call, result: sim.answer(&request) }, &request);
        if app.session.run.break_hits().len() > hits {
            hits = app.session.run.break_hits().len();
            let message = app.message.clone().unwrap();
            let end = if app.session.run.engine.is_finished() { "— finished" } else { "— paused" };
            assert!(message.starts_with("break solution: ") && message.ends_with(end), "{message}");
            said.push(message);
        }
    }
    assert!(said.iter().any(|m| m.ends_with("— finished")), "a solution found as the search ends: {said:?}");
}
