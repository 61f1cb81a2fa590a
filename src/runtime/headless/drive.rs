//! Driving one run to its end, and the signals that stop it: the first stops issuing
//! calls, a second stops waiting for those in flight.

use tokio::sync::watch;

use crate::engine::Input;
use crate::runtime::{Driver, Run, Signal, StopReason};

/// Drive a run until its engine finishes or stalls (nothing outstanding), after
/// feeding `first`. A stop (budget, fatal error, recording failure) halts the driver:
/// calls not yet sent are dropped, calls already sent land and are recorded.
pub async fn drive(run: &mut Run, driver: &mut Driver, first: Vec<Input>) {
    let (_keep, mut never) = Interrupts::channel();
    drive_until(run, driver, first, &mut never).await;
}

/// The signals a headless run has received: the first one stops the run, a second
/// one stops waiting for the calls already sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interrupts {
    pub first: Option<Signal>,
    pub count: u32,
}

impl Interrupts {
    /// A channel to send signals on (a test, or [`listen_for_signals`]) and its receiver.
    pub fn channel() -> (watch::Sender<Interrupts>, watch::Receiver<Interrupts>) {
        watch::channel(Interrupts::default())
    }

    /// Note one more signal.
    pub fn add(&mut self, signal: Signal) {
        self.first.get_or_insert(signal);
        self.count += 1;
    }
}

/// Catch SIGINT, SIGTERM and SIGHUP from now on (they no longer end the program at
/// once) and report them on the returned channel. They are heard on a thread of their
/// own whatever the run's workers are doing; a second signal ends the program within
/// [`crate::runtime::signals::HARD_EXIT_AFTER`] (see [`crate::runtime::signals`]).
pub fn listen_for_signals() -> std::io::Result<watch::Receiver<Interrupts>> {
    crate::runtime::signals::listen(&[Signal::INT, Signal::TERM, Signal::HUP], crate::runtime::signals::flush_stdout)
}

/// How long the calls in flight at the first signal may take to land (what they cost
/// is then counted) before they are abandoned and the run ends.
pub const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// [`drive`], stopping on a signal: the first one stops issuing calls (the session
/// gets a `stopped` record), abandons the tool calls in flight (they cost nothing, and a
/// tool computing could hold the end up to its time limit) and lets the model calls
/// already sent land for up to [`SIGNAL_GRACE`], so what they cost is counted; after
/// that, or at a second signal, it stops waiting for them. Returns how many model calls
/// in flight were abandoned that way.
pub async fn drive_until(
    run: &mut Run,
    driver: &mut Driver,
    first: Vec<Input>,
    interrupts: &mut watch::Receiver<Interrupts>,
) -> usize {
    drive_watching(run, driver, first, interrupts, |_| {}).await
}

/// [`drive_until`], showing each model reply or tool observation to `seen` before the run takes it.
pub(super) async fn drive_watching(
    run: &mut Run,
    driver: &mut Driver,
    first: Vec<Input>,
    interrupts: &mut watch::Receiver<Interrupts>,
    mut seen: impl FnMut(&Input),
) -> usize {
    for input in first {
        let fed = run.feed(input, None);
        driver.apply(&fed);
    }
    let mut listening = true;
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        let now = *interrupts.borrow_and_update();
        if let Some(signal) = now.first {
            if now.count > 1 {
                return driver.outstanding();
            }
            if !matches!(run.stopped(), Some(StopReason::Interrupted(_))) {
                let fed = run.interrupt(StopReason::Interrupted(signal));
                // Halt even if a budget had stopped the run already: nothing more is sent.
                driver.halt();
                driver.apply(&fed);
                driver.abandon_tools();
                grace = Some(Box::pin(tokio::time::sleep(SIGNAL_GRACE)));
            }
        }
        tokio::select! {
            changed = interrupts.changed(), if listening => listening = changed.is_ok(),
            () = async { if let Some(g) = grace.as_mut() { g.await } }, if grace.is_some() => {
                return driver.outstanding();
            }
            next = driver.next_input() => match next {
                Some((input, request)) => {
                    seen(&input);
                    let fed = run.feed(input, request.as_ref());
                    driver.apply(&fed);
                }
                None => return 0,
            },
        }
    }
}
