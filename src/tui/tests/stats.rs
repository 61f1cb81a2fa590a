//! The Stats view `S`: calls and tokens per method step (agreeing with the run's totals)
//! and, for a session with latencies, over time; both sizes by eye in the snapshots.

use super::*;
use crate::tui::app::Popup;
use crate::tui::ui::stats::{over_time, stretch, Stats};

/// The demo BFS session with every model reply's latency set to `ms`.
fn bfs_with_latency(dir: &Path, ms: u64) -> Session {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
    let text = std::fs::read_to_string(demo).unwrap();
    let path = dir.join("slow.jsonl");
    // The header's sim setting stays; only the replies' recorded latencies change.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for line in lines.iter_mut().skip(1) {
        *line = line.replace("\"latency_ms\":0,", &format!("\"latency_ms\":{ms},"));
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    Session::load(&path).unwrap()
}

fn replay_at_end(dir: &Path, session: Session) -> App {
    let params = session.header.params.clone();
    let mut app = App::replay(setup(dir, params), session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    let total = app.session.replay.as_ref().unwrap().total;
    app.seek(total);
    app
}

#[test]
fn calls_and_tokens_per_step_add_up_to_the_totals_and_follow_the_method_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::RunPause);
    let stats = Stats::of(&app.session.run.engine);
    let totals = app.session.run.totals;
    assert_eq!(stats.step_noun, "step");
    assert_eq!(stats.per_step.values().map(|s| s.0).sum::<u64>(), totals.llm_calls);
    assert_eq!(stats.per_step.values().map(|s| s.1).sum::<u64>(), totals.prompt_tokens + totals.completion_tokens);
    // BFS on game24 solves in four steps: calls in steps 1 to 4, the first a lone propose.
    let steps: Vec<usize> = stats.per_step.keys().copied().collect();
    assert_eq!(steps, vec![1, 2, 3, 4], "{:?}", stats.per_step);
    assert!(stats.per_step[&2].0 > stats.per_step[&1].0, "step 2 evaluates more states: {:?}", stats.per_step);
    // sim recorded no latencies: the view says so rather than drawing a flat time line.
    assert!(stats.latency_per_call.iter().all(|&ms| ms == 0));
    act(&mut app, Action::Stats);
    assert!(matches!(app.popup, Some(Popup::Stats)));
    for (w, h) in [(80, 24), (220, 60)] {
        let screen = render(&mut app, w, h);
        assert!(screen.contains("calls and tokens per step"), "{w}x{h}: {screen}");
        assert!(screen.contains("step 1") && screen.contains("step 4"), "the axis is labelled: {screen}");
        let (peak_step, peak) = stats.per_step.iter().max_by_key(|(s, c)| (c.0, std::cmp::Reverse(**s))).unwrap();
        assert!(screen.contains(&format!("peak {} (step {peak_step})", peak.0)), "{w}x{h}: {screen}");
        assert!(screen.contains("no latencies recorded"), "{w}x{h}: {screen}");
    }
}

#[test]
fn a_session_with_latencies_gets_a_time_axis() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = replay_at_end(dir.path(), bfs_with_latency(dir.path(), 250));
    let stats = Stats::of(&app.session.run.engine);
    assert_eq!(stats.latency_per_call.len() as u64, stats.calls);
    assert_eq!(stats.latency_per_call.iter().sum::<u64>(), 250 * stats.calls);
    let total_s = format!("{:.1} s", 0.25 * stats.calls as f64);
    app.popup = Some(Popup::Stats);
    for (w, h) in [(80, 24), (220, 60)] {
        let screen = render(&mut app, w, h);
        assert!(screen.contains(&format!("over time (the calls' latencies added up, 0 … {total_s})")), "{screen}");
        assert!(screen.contains("0 s") && !screen.contains("no latencies recorded"), "{screen}");
        insta::assert_snapshot!(format!("stats_latency_{w}x{h}"), screen);
    }
}

#[test]
fn the_chart_helpers_spread_and_bin_what_they_are_given() {
    assert_eq!(stretch(&[1, 2], 4), vec![1, 1, 2, 2]);
    assert_eq!(stretch(&[1, 5, 2, 0], 2), vec![5, 2]);
    assert_eq!(stretch(&[], 3), vec![0, 0, 0]);
    // Four calls of 1 s each over four columns: one a column, the tokens with them.
    assert_eq!(over_time(&[1000; 4], &[10, 20, 30, 40], 4), (vec![1, 1, 1, 1], vec![10, 20, 30, 40]));
    // A slow first call leaves the start empty; every call is counted once.
    let (calls, tokens) = over_time(&[9000, 500, 500], &[1, 2, 3], 10);
    assert_eq!(calls.iter().sum::<u64>(), 3);
    assert_eq!(tokens.iter().sum::<u64>(), 6);
    assert_eq!(calls[..9].iter().sum::<u64>(), 1);
}

/// What the provider found out about the server is said once on the footer as it is
/// found, listed in the Stats view with how the `~` tokens were estimated, written on the
/// session's end line, and listed again when the session is opened.
#[test]
fn what_the_run_found_about_the_server_is_said_listed_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::RunPause);
    let ignored =
        "fake (http://x) ignored `n` (it sent fewer samples than asked): the rest were fetched one request each";
    app.on_found(vec![ignored.into()]);
    assert!(
        app.message.as_deref().is_some_and(|m| m.starts_with("note: fake (http://x) ignored `n`")),
        "{:?}",
        app.message
    );
    app.message = None;
    app.on_found(vec![ignored.into()]);
    assert_eq!(app.message, None, "a line already said is not said again");
    app.session.run.totals.estimated_tokens = 42;
    app.popup = Some(Popup::Stats);
    for (w, h) in [(80, 24), (220, 60)] {
        let screen = render(&mut app, w, h);
        assert!(screen.contains("server") && screen.contains("ignored `n`"), "{w}x{h}: {screen}");
        assert!(screen.contains("~ 42 of the tokens are estimated from the text"), "{w}x{h}: {screen}");
    }
    let path = app.session.run.writer().unwrap().path().to_path_buf();
    app.finish_recording();
    let session = Session::load(&path).unwrap();
    assert_eq!(session.found(), [ignored.to_string()]);
    let mut replayed = replay_at_end(dir.path(), session);
    replayed.popup = Some(Popup::Stats);
    let screen = render(&mut replayed, 220, 60);
    assert!(screen.contains("ignored `n`"), "the opened session lists it: {screen}");
    replayed.on_found(vec!["another".into()]);
    assert!(replayed.session.run.found().is_empty(), "a replay records nothing new");
}
