//! The explorer part of `thoughtscope bench`: a recorded session opened as `thoughtscope
//! replay FILE` opens it, then key presses, timeline steps and playback ticks, each timed
//! from the action to a drawn frame (into ratatui's TestBackend, at 220x60 and 80x24).

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use super::action::Action;
use super::app::{App, Setup};
use super::keymap::Keymap;
use super::theme::ThemeSet;
use super::ui;
use crate::runtime::bench::{FRAME_GOAL_MS, OPEN_GOAL_S};
use crate::session::Session;
use crate::tasks::TaskOptions;

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Mean and max of some timings, in ms.
fn stats(times: &[f64]) -> (f64, f64) {
    let max = times.iter().copied().fold(0.0, f64::max);
    (times.iter().sum::<f64>() / times.len().max(1) as f64, max)
}

/// Open `path` in the explorer as `thoughtscope replay` does (load, build the task, open
/// at the end) and draw the first frame.
pub fn open(path: &Path, terminal: &mut Terminal<TestBackend>) -> Result<App, String> {
    let session = Session::load(path).map_err(|e| e.to_string())?;
    let task = session.header.build_task(&TaskOptions::default()).map_err(|e| e.to_string())?;
    let setup = Setup {
        task,
        prompts: None,
        header: session.header.clone(),
        sessions_dir: std::env::temp_dir(),
        session_file: None,
        memory_dir: None,
        limits: Default::default(),
    };
    let mut app = App::replay(setup, session, Keymap::default(), ThemeSet::default(), "dark")?;
    draw(&mut app, terminal)?;
    Ok(app)
}

fn draw(app: &mut App, terminal: &mut Terminal<TestBackend>) -> Result<(), String> {
    terminal
        .draw(|f| {
            ui::draw_app(f, app);
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Time `n` rounds of `actions` (each one action, then a drawn frame); returns the timings.
fn timed(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    actions: &[Action],
    n: usize,
) -> Result<Vec<f64>, String> {
    let mut times = Vec::with_capacity(n * actions.len());
    for _ in 0..n {
        for &action in actions {
            let t = Instant::now();
            let effects = app.handle_action(action);
            draw(app, terminal)?;
            times.push(ms(t));
            if !effects.is_empty() {
                return Err(format!("{action:?} in a replay asked for work: {effects:?}"));
            }
        }
    }
    Ok(times)
}

/// Open the session at `path` in the explorer and print the open time and the key,
/// timeline and playback figures with their ratios to the goals.
pub fn explorer_bench(path: &Path, rounds: usize, out: &mut dyn Write) -> Result<(), String> {
    let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}").map_err(|e| e.to_string());
    let mut big = Terminal::new(TestBackend::new(220, 60)).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut app = open(path, &mut big)?;
    let open_s = started.elapsed().as_secs_f64();
    let (nodes, total) = (app.session.run.engine.tree().len(), app.session.replay.as_ref().map_or(0, |r| r.total));
    w(out, format!("explorer on the same session ({nodes} nodes, {total} inputs), drawn at 220x60:"))?;
    w(
        out,
        format!(
            "  open to first frame  {open_s:8.3} s                      goal ≤ {OPEN_GOAL_S} s: {:.2}x of it",
            open_s / OPEN_GOAL_S
        ),
    )?;
    let line = |name: &str, times: &[f64]| {
        let (mean, max) = stats(times);
        format!(
            "  {name:<20} mean {mean:7.3} ms  max {max:7.3} ms   goal ≤ {FRAME_GOAL_MS} ms: mean {:.3}x, max {:.2}x of it",
            mean / FRAME_GOAL_MS,
            max / FRAME_GOAL_MS
        )
    };
    // Selection moves in the tree pane (the view scrolls with them).
    let keys = timed(&mut app, &mut big, &[Action::Down, Action::Down, Action::PageDown, Action::Up], rounds)?;
    w(out, line("key to frame", &keys))?;
    // The same at 80x24.
    let mut small = Terminal::new(TestBackend::new(80, 24)).map_err(|e| e.to_string())?;
    let keys = timed(&mut app, &mut small, &[Action::Down, Action::PageDown, Action::Up], rounds)?;
    w(out, line("key to frame 80x24", &keys))?;
    // Timeline steps by one input, back and forth around the middle and near the end.
    for at in [total / 2, total.saturating_sub(3)] {
        app.seek(at);
        let times = timed(&mut app, &mut big, &[Action::ReplayBack, Action::ReplayForward], rounds)?;
        w(out, line(&format!("timeline step @{at}"), &times))?;
    }
    // Back over a checkpoint: the worst case of a step back, just after a jump there, at
    // checkpoints spread over the whole session.
    let interval = app.session.replay.as_ref().map_or(1, |r| r.timeline.interval());
    let checkpoints = (total / interval.max(1)).max(1);
    let count = rounds.min(checkpoints);
    let mut back = Vec::new();
    for j in 1..=count {
        let k = (j * checkpoints / count).max(1);
        app.seek((k * interval).min(total));
        let t = Instant::now();
        app.handle_action(Action::ReplayBack);
        draw(&mut app, &mut big)?;
        back.push(ms(t));
    }
    w(out, line(&format!("step back past a checkpoint (every {interval})"), &back))?;
    // Playback from the start at the fastest speed: every tick plays the steps due and draws.
    app.seek(0);
    let speed = super::app::MAX_PLAY_SPEED;
    if let Some(r) = app.session.replay.as_mut() {
        r.speed = speed;
        r.playing = true;
    }
    let (mut ticks, mut played) = (Vec::new(), 0);
    while app.session.replay.as_ref().is_some_and(|r| r.playing) && ticks.len() < 10_000 {
        let t = Instant::now();
        app.play_tick(1.0 / speed);
        draw(&mut app, &mut big)?;
        ticks.push(ms(t));
        played += 1;
    }
    let (mean, _) = stats(&ticks);
    let steps = app.session.replay.as_ref().map_or(0, |r| r.marks.steps.len().saturating_sub(1));
    let can = 1000.0 / mean.max(1e-9);
    w(out, line(&format!("playback tick ({played})"), &ticks))?;
    w(
        out,
        format!(
            "  playback at {speed} steps/s shown: ticks take {mean:.3} ms, so up to {can:.0} steps/s can be drawn ({:.2}x of the speed shown)",
            can / speed
        ),
    )?;
    // The same playback as the terminal loop plays it: a frame every `FRAME`, each playing
    // the steps due since the last one (its own work included) and drawing once; at the
    // speed a replay opens with and at the fastest.
    for speed in [super::app::PLAY_SPEED, speed] {
        let (steps, wall, frames, shown_s) = real_time(&mut app, &mut big, speed, 1, steps)?;
        w(
            out,
            format!(
                "  playback in real time at {speed} steps/s: {steps} steps drawn in {wall:.3} s over {frames} frames of {} ms; \
                 the speed shown takes {shown_s:.3} s: {:.2}x of it (the last step {:.0} ms late)",
                super::FRAME.as_millis(),
                wall / shown_s.max(1e-9),
                (wall - shown_s).max(0.0) * 1000.0
            ),
        )?;
    }
    // The same at the fastest speed, played over and over (back to the start after the
    // last step, inside the frame that plays it): a speed held for a while, rather than
    // four steps whose last frame's work is all the lag.
    let passes = 16;
    let (played, wall, frames, shown_s) = real_time(&mut app, &mut big, speed, passes, steps)?;
    w(
        out,
        format!(
            "  playback held at {speed} steps/s: the {steps} steps {passes} times over, {played} steps drawn in {wall:.3} s over \
             {frames} frames; the speed shown takes {shown_s:.3} s: {:.2}x of it",
            wall / shown_s.max(1e-9)
        ),
    )?;
    Ok(())
}

/// Play the replay in `app` from the start at `speed` as the terminal loop does (a frame
/// every [`super::FRAME`] plays the steps due since the last one, its own work included,
/// and draws once; a late frame is skipped, not made up, as tokio's
/// `MissedTickBehavior::Skip`), `passes` times over its `steps` steps. Gives the steps
/// played, the wall time, the frames and what the speed shown takes for those steps
/// (rounded up to whole frames).
fn real_time(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    speed: f64,
    passes: usize,
    steps: usize,
) -> Result<(usize, f64, usize, f64), String> {
    let start = |app: &mut App| {
        app.seek(0);
        if let Some(r) = app.session.replay.as_mut() {
            r.speed = speed;
            r.playing = true;
        }
    };
    start(app);
    if let Some(r) = app.session.replay.as_mut() {
        r.carry = 0.0;
    }
    let frame = super::FRAME;
    let started = Instant::now();
    let (mut last, mut next, mut frames, mut pass) = (started, started + frame, 0, 1);
    while frames < 100_000 {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        let now = Instant::now();
        app.play_tick(now.duration_since(last).as_secs_f64());
        let ended = !app.session.replay.as_ref().is_some_and(|r| r.playing);
        if ended && pass < passes {
            pass += 1;
            start(app);
        }
        draw(app, terminal)?;
        last = now;
        frames += 1;
        if ended && pass >= passes && !app.session.replay.as_ref().is_some_and(|r| r.playing) {
            break;
        }
        next += frame;
        while next <= Instant::now() {
            next += frame;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let played = steps * passes;
    let shown_s = ((played as f64 / speed) / frame.as_secs_f64()).ceil() * frame.as_secs_f64();
    Ok((played, wall, frames, shown_s))
}
