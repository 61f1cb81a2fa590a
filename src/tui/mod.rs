//! The terminal explorer: the live thought tree, scores, detail and transcript,
//! with steering, replay and fork. `app` holds the state and reacts to actions
//! (synchronously, testable without a terminal); `ui` draws a snapshot; this
//! module owns the terminal and the async loop.

pub mod action;
pub mod app;
pub mod bench;
pub mod diff_view;
pub mod handoff;
pub mod keymap;
pub mod panes;
pub mod settings;
pub mod state;
pub mod theme;
pub mod ui;

use std::future::Future;
use std::io::Stdout;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture, Event as TermEvent};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::Terminal;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::engine::{Effect, RunMode};
use crate::llm::Provider;
use crate::runtime::headless::open_cache;
use crate::runtime::Driver;
use app::App;

/// Puts the terminal back however the program leaves: normal return, error or panic.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

pub fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(std::io::stdout(), LeaveAlternateScreen, DisableMouseCapture, ratatui::crossterm::cursor::Show);
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
}

/// Raw mode, the alternate screen and mouse reporting: the explorer's terminal (at start,
/// and again after a hand-off to a pager or editor).
pub fn enter_terminal() -> std::io::Result<()> {
    enable_raw_mode()?;
    execute!(std::io::stdout(), EnterAlternateScreen, EnableMouseCapture)
}

fn setup_terminal() -> std::io::Result<(Terminal<CrosstermBackend<Stdout>>, TerminalGuard)> {
    let guard = TerminalGuard;
    enter_terminal()?;
    let terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    Ok((terminal, guard))
}

/// Run the explorer until the person quits or a signal (SIGINT, SIGQUIT, SIGTERM,
/// SIGHUP) arrives; either way the session gets its end line and the terminal is put
/// back. Returns the app and the signal that ended it, if one did.
pub async fn run(
    app: App,
    provider: Arc<dyn Provider>,
    concurrency: usize,
    initial: Vec<Effect>,
) -> std::io::Result<(App, Option<crate::runtime::Signal>)> {
    use crate::runtime::Signal;
    install_panic_hook();
    // In raw mode ctrl-c is a key, but `kill -INT` (or SIGQUIT, or a closed terminal) is not.
    // Heard on a thread of their own; a second signal exits within a second, the terminal put back.
    let mut signals =
        crate::runtime::signals::listen(&[Signal::INT, Signal::QUIT, Signal::TERM, Signal::HUP], restore_terminal)?;
    let (mut terminal, guard) = setup_terminal()?;
    let caught = Arc::new(Mutex::new(None));
    let noted = Arc::clone(&caught);
    let quit = Box::pin(async move {
        let Some(signal) = crate::runtime::signals::first(&mut signals).await else {
            // The listener is gone: no signal will come.
            return std::future::pending().await;
        };
        if let Ok(mut noted) = noted.lock() {
            *noted = Some(signal);
        }
    });
    let events = handoff::Events::new();
    let keys = events.clone();
    let outside = move |job: &app::Outgoing| handoff::carry_out(job, &events);
    let app = drive_with(app, &mut terminal, keys, quit, provider, concurrency, initial, outside).await?;
    drop(terminal);
    drop(guard);
    let signal = caught.lock().ok().and_then(|c| *c);
    Ok((app, signal))
}

/// How long a message stays on the footer (a key clears it sooner).
const MESSAGE_LIFETIME: Duration = Duration::from_secs(8);
/// The loop's frame timer: playback plays the steps due at each frame and draws once.
pub(crate) const FRAME: Duration = Duration::from_millis(33);

/// What the loop's frame timer keeps between frames: the busy clock (it runs only while
/// calls are in flight or the search is running), the message on screen and since when
/// (messages expire), and when playback last played.
struct FrameClock {
    busy_since: Option<Instant>,
    busy_before: Duration,
    message_since: Option<(String, Instant)>,
    last_play: Instant,
}

impl FrameClock {
    fn new() -> FrameClock {
        FrameClock { busy_since: None, busy_before: Duration::ZERO, message_since: None, last_play: Instant::now() }
    }

    /// A new run starts its busy clock at `from_ms` (zero, or where an undone run was).
    fn reset_busy(&mut self, from_ms: u64) {
        self.busy_since = None;
        self.busy_before = Duration::from_millis(from_ms);
    }

    /// One frame at `now`: the busy time, an expired message, the playback steps due.
    /// True when the screen must be drawn again although the app's version is the same.
    fn tick(&mut self, app: &mut App, outstanding: usize, now: Instant) -> bool {
        let mut redraw = false;
        let busy = app.session.replay.is_none()
            && !app.session.run.engine.is_finished()
            && (outstanding > 0 || app.session.run.engine.mode() != RunMode::Paused);
        match (busy, self.busy_since) {
            (true, None) => self.busy_since = Some(now),
            (false, Some(since)) => {
                self.busy_before += now.duration_since(since);
                self.busy_since = None;
            }
            _ => {}
        }
        let running = self.busy_since.map_or(Duration::ZERO, |since| now.duration_since(since));
        let ms = (self.busy_before + running).as_millis() as u64;
        if app.session.replay.is_none() && ms / 100 != app.session.elapsed_ms / 100 {
            app.session.elapsed_ms = ms;
            redraw = true;
        }
        match (&app.message, &self.message_since) {
            (None, _) => self.message_since = None,
            (Some(m), Some((seen, since))) if m == seen => {
                if now.duration_since(*since) >= MESSAGE_LIFETIME {
                    app.message = None;
                    self.message_since = None;
                    redraw = true;
                }
            }
            (Some(m), _) => self.message_since = Some((m.clone(), now)),
        }
        // A followed file that grew shows its new lines.
        if app.follow_tick() {
            redraw = true;
        }
        // Play the inputs due since the last frame (none are due while paused).
        if app.play_interval().is_some() {
            app.play_tick(now.duration_since(self.last_play).as_secs_f64());
        }
        self.last_play = now;
        redraw
    }
}
/// The context window the driver refuses prompts over: the model's, when the run measured
/// it (stated or said by the server); none for a guess, a replay or `sim`.
fn measured_window(app: &App) -> Option<u64> {
    app.session.setup.limits.context.as_ref().filter(|c| c.measured).map(|c| c.tokens)
}

/// The explorer's loop on any backend and any stream of terminal events (tests give
/// a `TestBackend` and scripted keys): keys become engine commands through the app,
/// the driver carries out calls and tool calls as its own tasks, every reply goes
/// through the app's [`crate::runtime::Run`] (recording, totals, budgets, fatal-error
/// stop), and frames are drawn on a tick when something changed. Ends when the app
/// quits, the events end, or `quit` resolves.
pub async fn drive<B: Backend>(
    app: App,
    terminal: &mut Terminal<B>,
    keys: impl Stream<Item = std::io::Result<TermEvent>> + Unpin,
    quit: impl Future<Output = ()> + Unpin,
    provider: Arc<dyn Provider>,
    concurrency: usize,
    initial: Vec<Effect>,
) -> std::io::Result<App> {
    let no_terminal = |_: &app::Outgoing| -> Result<String, String> { Err("no terminal here to hand off to".into()) };
    drive_with(app, terminal, keys, quit, provider, concurrency, initial, no_terminal).await
}

/// [`drive`], with `outside` carrying out the app's hand-offs (`app::Outgoing`: a pager,
/// an editor, the clipboard) and returning the text they leave.
#[allow(clippy::too_many_arguments)]
pub async fn drive_with<B: Backend>(
    mut app: App,
    terminal: &mut Terminal<B>,
    mut keys: impl Stream<Item = std::io::Result<TermEvent>> + Unpin,
    mut quit: impl Future<Output = ()> + Unpin,
    provider: Arc<dyn Provider>,
    concurrency: usize,
    initial: Vec<Effect>,
    mut outside: impl FnMut(&app::Outgoing) -> Result<String, String>,
) -> std::io::Result<App> {
    let limit = Arc::new(Semaphore::new(concurrency.max(1)));
    let (cache, note) = open_cache(&app.session.setup.limits);
    // Where the run records, unless the app opened with something else to say.
    if app.message.is_none() {
        app.message = app.recording_note();
    }
    if let Some(note) = note {
        app.message = Some(note);
    }
    let cache = Arc::new(Mutex::new(cache));
    let (delta_tx, mut deltas) = tokio::sync::mpsc::unbounded_channel();
    // The task's tools, and for a fork of a recorded session the actions the recording
    // has answered; both are taken again when the app opens another session (`o`).
    let tools_of = |app: &App| {
        let recorded =
            app.session.replay.as_ref().and_then(|r| {
                crate::tools::recorded::RecordedTools::from_calls(r.timeline.all_tool_calls()).map(Arc::new)
            });
        (app.session.setup.task.tools(), recorded)
    };
    let (mut tools, mut recorded) = tools_of(&app);
    let new_driver = |tools: &Option<_>, recorded: &Option<_>, window: Option<u64>| {
        let driver = Driver::new(Arc::clone(&provider), Arc::clone(&limit), Arc::clone(&cache))
            .with_deltas(delta_tx.clone())
            .with_context_window(window);
        match tools {
            Some(t) => {
                driver.with_tools(crate::runtime::tools::ToolRunner::new(Arc::clone(t)).with_recorded(recorded.clone()))
            }
            None => driver,
        }
    };
    let draw_error = |e: B::Error| std::io::Error::other(e.to_string());
    let mut driver = new_driver(&tools, &recorded, measured_window(&app));
    app.session.reset_driver = false;
    driver.execute(&initial);
    let mut tick = tokio::time::interval(FRAME);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut clock = FrameClock::new();
    let mut drawn = u64::MAX;
    loop {
        let effects = tokio::select! {
            event = keys.next() => match event {
                Some(Ok(TermEvent::Key(key))) => {
                    // A key answers the message on screen; what it says itself shows next.
                    app.message = None;
                    app.handle_key(key)
                }
                Some(Ok(TermEvent::Mouse(mouse))) => app.handle_mouse(mouse),
                Some(Ok(TermEvent::Resize(_, _))) => { drawn = u64::MAX; Vec::new() }
                Some(Ok(_)) => Vec::new(),
                Some(Err(e)) => return Err(e),
                None => break,
            },
            // Cancel-safe: the calls and tool calls are tasks of the driver, so losing this race restarts nothing.
            Some((input, request)) = driver.next_input(), if driver.outstanding() > 0 => {
                let effects = app.on_input(input, request.as_ref());
                app.on_found(provider.found());
                effects
            }
            Some(delta) = deltas.recv() => {
                if delta.restart {
                    app.on_restart(delta.call, delta.sample);
                } else {
                    app.on_delta(delta.call, delta.sample, &delta.text);
                }
                Vec::new()
            }
            _ = tick.tick() => {
                if clock.tick(&mut app, driver.outstanding(), Instant::now()) {
                    drawn = u64::MAX;
                }
                if app.view.version != drawn {
                    terminal.draw(|frame| {
                        ui::draw_app(frame, &mut app);
                    }).map_err(draw_error)?;
                    drawn = app.view.version;
                }
                Vec::new()
            },
            _ = &mut quit => { app.quit = true; Vec::new() }
        };
        if app.session.reset_driver {
            if app.session.replay.is_some() {
                // A session was opened: its task's tools and its recorded actions (a fork keeps them).
                (tools, recorded) = tools_of(&app);
            } else {
                tools = app.session.setup.task.tools();
            }
            driver = new_driver(&tools, &recorded, measured_window(&app));
            app.session.reset_driver = false;
            clock.reset_busy(app.session.take_clock_start());
        }
        if app.session.run.stopped().is_some() {
            // A budget, a refused key or a failed recording: send nothing more.
            driver.halt();
        }
        driver.execute(&effects);
        let effects = hand_off(&mut app, terminal, &mut outside, &mut drawn)?;
        driver.execute(&effects);
        if app.quit {
            break;
        }
    }
    app.finish_recording();
    Ok(app)
}

/// Carry out the hand-off the app asked for, if any (a pager, an editor, the clipboard);
/// gives the effects of what came back (an edited thought is an edit).
fn hand_off<B: Backend>(
    app: &mut App,
    terminal: &mut Terminal<B>,
    outside: &mut impl FnMut(&app::Outgoing) -> Result<String, String>,
    drawn: &mut u64,
) -> std::io::Result<Vec<Effect>> {
    let Some(job) = app.outgoing.take() else { return Ok(Vec::new()) };
    let result = outside(&job);
    if job.suspends() {
        // Another program had the screen: clear it and draw all of it again (not
        // `Terminal::clear`, which asks the terminal where its cursor is).
        let cleared = terminal.backend_mut().clear_region(ratatui::backend::ClearType::All);
        cleared.map_err(|e| std::io::Error::other(e.to_string()))?;
        terminal.swap_buffers();
        *drawn = u64::MAX;
    }
    Ok(app.handed_back(&job, result))
}

#[cfg(test)]
mod tests;
