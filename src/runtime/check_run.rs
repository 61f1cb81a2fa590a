//! Running a task's check program for a verdict (`Effect::RunCheck`): the only place a
//! task file's `[check] command` or `[tree] step_command` is started, by a live run (or
//! `task check`, which runs it once to prove it works). A replay never gets here: the
//! verdicts are inputs of the session.
//!
//! The time limit covers everything the program does: reading its input (written to it
//! without blocking, so one that never reads a large input cannot hold the run), running,
//! and printing (read as it comes, at most [`MAX_OUTPUT`]). The program is the leader of
//! a process group of its own; when it ends, or at the limit, the whole group is killed,
//! so children it left running (`sleep 300 & echo correct`) or that hold its output open
//! cannot hold the run either. Its verdict is what it printed before it ended. Each way
//! of failing is one line that names the program, the phase and what it printed. On
//! Linux the program also dies with the run (a parent-death signal), however the run ends.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::engine::check::Verdict;
use crate::engine::CheckRequest;

/// Most bytes a check program may print on its standard output (a verdict is a line).
pub const MAX_OUTPUT: usize = 64 * 1024;
/// Bytes of its standard error kept for messages (the rest is read and dropped).
const KEPT_STDERR: usize = 4 * 1024;
/// How long a wait for the pipes lasts at most before the program's state is looked at again.
const TICK: Duration = Duration::from_millis(10);
/// Characters of what a program printed that a message quotes.
const QUOTED: usize = 200;

/// Where a program was when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// It did not read all of its input within the limit.
    Input,
    /// It did not finish within the limit.
    Running,
    /// It printed more than [`MAX_OUTPUT`].
    Output,
}

/// What was read from the program.
#[derive(Default)]
struct Printed {
    out: Vec<u8>,
    err: Vec<u8>,
}

/// Run `request`'s program for its verdict, within its time limit (see the module docs).
/// `Err` is the one line that says why there is no verdict.
pub fn run(request: &CheckRequest) -> Result<Verdict, String> {
    let named = request.named();
    let Some(program) = request.argv.first().filter(|p| !p.trim().is_empty()) else {
        return Err(format!("{named} names no program"));
    };
    let mut command = Command::new(program);
    command.args(&request.argv[1..]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group, so the whole of it can be ended at once.
        command.process_group(0);
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls between fork and exec (prctl, getppid,
        // _exit). The program dies with the thread that waits for it: a run killed
        // (kill -9, a second Ctrl-C) leaves no checker running up to its limit.
        let parent = std::process::id() as libc::pid_t;
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    let mut child = command.spawn().map_err(|e| format!("{named} cannot start: {e}"))?;
    let limit = Duration::from_millis(request.timeout_ms);
    let mut printed = Printed::default();
    let watched = watch(&mut child, request.stdin.as_bytes(), Instant::now() + limit, &mut printed);
    // Whatever happened, nothing of the program outlives its verdict.
    end_group(&mut child);
    let status = child.wait();
    let ms = request.timeout_ms;
    match watched {
        Err(Failure::Input) => {
            return Err(format!(
                "{named} did not read its input ({} bytes) within {ms} ms; it was stopped{}",
                request.stdin.len(),
                says(&printed)
            ))
        }
        Err(Failure::Running) => return Err(format!("{named} took over {ms} ms; it was stopped{}", says(&printed))),
        Err(Failure::Output) => {
            return Err(format!(
                "{named} printed over {} on its output; a verdict is one line: it was stopped",
                crate::userfile::size_text(MAX_OUTPUT as u64)
            ))
        }
        Ok(()) => {}
    }
    let status = status.map_err(|e| format!("{named}: {e}"))?;
    if !status.success() {
        return Err(format!("{named} {}{}", ended(status), says(&printed)));
    }
    let out = String::from_utf8_lossy(&printed.out);
    Verdict::read(&out).ok_or_else(|| {
        format!(
            "{named} printed {}; a check program prints {{\"correct\": true, \"score\": 1}} or a first word correct or incorrect",
            quoted(&out)
        )
    })
}

/// Feed the program its input and read what it prints until it ends (`Ok`) or fails.
fn watch(child: &mut Child, input: &[u8], deadline: Instant, printed: &mut Printed) -> Result<(), Failure> {
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    for fd in [stdin.as_ref().map(raw), stdout.as_ref().map(raw), stderr.as_ref().map(raw)].into_iter().flatten() {
        set_nonblocking(fd);
    }
    let mut written = 0;
    loop {
        if has_ended(child) {
            // What it wrote before it ended is in the pipes: take it, not what anything it left
            // running would add (ended first).
            end_group(child);
            drain(&mut stdout, &mut printed.out, MAX_OUTPUT + 1);
            drain(&mut stderr, &mut printed.err, KEPT_STDERR);
            return if printed.out.len() > MAX_OUTPUT { Err(Failure::Output) } else { Ok(()) };
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(if stdin.is_some() { Failure::Input } else { Failure::Running });
        }
        wait_for_pipes(
            stdin.as_ref().map(raw),
            stdout.as_ref().map(raw),
            stderr.as_ref().map(raw),
            (deadline - now).min(TICK),
        );
        if let Some(pipe) = stdin.as_mut() {
            match pipe.write(&input[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::Interrupted => {
                }
                // It closed its input (a program that does not read it): nothing more to give.
                Err(_) => written = input.len(),
            }
            if written >= input.len() {
                stdin = None;
            }
        }
        drain(&mut stdout, &mut printed.out, MAX_OUTPUT + 1);
        if printed.out.len() > MAX_OUTPUT {
            return Err(Failure::Output);
        }
        drain(&mut stderr, &mut printed.err, KEPT_STDERR);
    }
}

/// Read what `pipe` holds now (without waiting, and at most a few chunks, so a program
/// printing without end cannot hold this loop), keeping at most `keep` bytes; the pipe is
/// closed (`None`) at its end.
fn drain<R: Read>(pipe: &mut Option<R>, into: &mut Vec<u8>, keep: usize) {
    let Some(r) = pipe.as_mut() else { return };
    let mut chunk = [0u8; 16 * 1024];
    for _ in 0..64 {
        match r.read(&mut chunk) {
            Ok(0) => {
                *pipe = None;
                return;
            }
            Ok(n) => {
                let room = keep.saturating_sub(into.len());
                into.extend_from_slice(&chunk[..n.min(room)]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// " and printed \"...\"" (or its error output when it printed nothing), for a failure.
fn says(printed: &Printed) -> String {
    let out = String::from_utf8_lossy(&printed.out);
    let err = String::from_utf8_lossy(&printed.err);
    let err = err.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
    match (out.trim().is_empty(), err.is_empty()) {
        (false, _) => format!(" and printed {}", quoted(&out)),
        (true, false) => format!(" and printed nothing (on its error output: {})", quoted(err)),
        (true, true) => " and printed nothing".to_string(),
    }
}

/// A program's words as a message quotes them: trimmed, control characters escaped, cut short.
fn quoted(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "nothing".to_string();
    }
    format!("{:?}", crate::safe_text::clip(text, QUOTED))
}

/// How a program that did not succeed ended: "exited with status 3", "was killed by signal 11 (it crashed)".
fn ended(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal} (it crashed or was stopped)");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "ended without an exit status".to_string(),
    }
}

#[cfg(unix)]
fn raw(pipe: &impl std::os::fd::AsRawFd) -> i32 {
    pipe.as_raw_fd()
}

#[cfg(not(unix))]
fn raw<T>(_pipe: &T) -> i32 {
    -1
}

#[cfg(unix)]
fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on a descriptor we own (a pipe end of our child), no memory passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

#[cfg(not(unix))]
fn set_nonblocking(_fd: i32) {}

/// Wait until a pipe is ready (input writable, output readable or closed) or `wait` passes.
#[cfg(unix)]
fn wait_for_pipes(stdin: Option<i32>, stdout: Option<i32>, stderr: Option<i32>, wait: Duration) {
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
    if let Some(fd) = stdin {
        fds.push(libc::pollfd { fd, events: libc::POLLOUT, revents: 0 });
    }
    for fd in [stdout, stderr].into_iter().flatten() {
        fds.push(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
    }
    let ms = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX).max(1);
    if fds.is_empty() {
        std::thread::sleep(wait);
        return;
    }
    // SAFETY: `fds` is a valid array of `fds.len()` pollfds for the duration of the call.
    unsafe {
        libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms);
    }
}

#[cfg(not(unix))]
fn wait_for_pipes(_stdin: Option<i32>, _stdout: Option<i32>, _stderr: Option<i32>, wait: Duration) {
    std::thread::sleep(wait);
}

/// Whether the program has ended. On Linux it is not reaped yet (`WNOWAIT`), so its
/// process group cannot be taken by another process before [`end_group`] kills it.
#[cfg(target_os = "linux")]
fn has_ended(child: &mut Child) -> bool {
    // SAFETY: waitid writes one siginfo_t, which we own; WNOWAIT leaves the child as it is.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            child.id() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        r == 0 && info.si_pid() != 0
    }
}

#[cfg(not(target_os = "linux"))]
fn has_ended(child: &mut Child) -> bool {
    matches!(child.try_wait(), Ok(Some(_)))
}

/// Kill the program's whole process group (itself and whatever it started that did not
/// leave the group).
#[cfg(unix)]
fn end_group(child: &mut Child) {
    let pgid = child.id() as libc::pid_t;
    // SAFETY: a plain signal to the group the program leads (its id is held while the
    // program is not reaped, or while any process of the group lives).
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
    let _ = child.kill();
}

#[cfg(not(unix))]
fn end_group(child: &mut Child) {
    let _ = child.kill();
}

#[cfg(test)]
mod tests;
