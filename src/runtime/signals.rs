//! Signals, heard on a thread of their own. The run's runtime may be busy — a worker
//! computing, a call that does not return — and a signal must still end the program
//! within a second or two: the listener runs its own small runtime on its own thread, so
//! it hears every signal whatever the run's workers are doing.
//!
//! The first signal is reported on the channel (the run stops, closes its sessions and
//! prints its summary). A second one is reported too and the program exits at most
//! [`HARD_EXIT_AFTER`] later even if the run has not finished winding down; a third
//! exits at once. Before such an exit `before_exit` runs (the explorer puts the terminal
//! back; a headless run flushes standard output).

use std::time::Duration;

use tokio::sync::watch;

use super::headless::Interrupts;
use super::Signal;

/// How long after a second signal the program exits, if it has not ended by then.
pub const HARD_EXIT_AFTER: Duration = Duration::from_secs(1);

/// Catch `signals` from now on (they no longer end the program by themselves) and report
/// them on the returned channel; see the module docs for the second and third signal.
pub fn listen(signals: &'static [Signal], before_exit: fn()) -> std::io::Result<watch::Receiver<Interrupts>> {
    let (tx, rx) = Interrupts::channel();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(runtime) => runtime,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        runtime.block_on(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let mut streams = Vec::new();
            for s in signals {
                match signal(SignalKind::from_raw(s.number)) {
                    Ok(stream) => streams.push((*s, stream)),
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                }
            }
            let _ = ready_tx.send(Ok(()));
            loop {
                let next = streams.iter_mut().map(|(s, stream)| {
                    let s = *s;
                    Box::pin(async move { stream.recv().await.map(|()| s) })
                });
                let (caught, _, _) = futures::future::select_all(next).await;
                let Some(caught) = caught else { break };
                tx.send_modify(|i| i.add(caught));
                let count = tx.borrow().count;
                if count == 2 {
                    let code = tx.borrow().first.unwrap_or(caught).exit_code();
                    std::thread::spawn(move || {
                        std::thread::sleep(HARD_EXIT_AFTER);
                        exit_now(before_exit, code);
                    });
                } else if count > 2 {
                    exit_now(before_exit, tx.borrow().first.unwrap_or(caught).exit_code());
                }
            }
        });
    })?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(rx),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(std::io::Error::other("the signal thread ended before listening")),
    }
}

fn exit_now(before_exit: fn(), code: i32) -> ! {
    before_exit();
    std::process::exit(code)
}

/// Flush standard output, for [`listen`]'s `before_exit` in a headless run.
pub fn flush_stdout() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
}

/// Wait until the first signal arrives on `rx` and say which it was (None if the
/// listener is gone).
pub async fn first(rx: &mut watch::Receiver<Interrupts>) -> Option<Signal> {
    loop {
        if let Some(signal) = rx.borrow_and_update().first {
            return Some(signal);
        }
        rx.changed().await.ok()?;
    }
}
