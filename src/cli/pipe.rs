//! Standard output that may be a pipe closed early (`thoughtscope replay ... | head`):
//! the reader has all it wanted, so the process ends quietly with status 0 instead of
//! panicking on the broken pipe. Every command prints to stdout through [`outln!`]
//! and [`out!`]; a panic hook catches any `println!` that slips through.

use std::io::Write;

/// Write to stdout and flush; on a closed pipe, exit quietly; other failures
/// (a full disk behind a redirect) are printed as one line, exit code 1.
pub(crate) fn write_stdout(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(1);
    }
}

/// `println!` that ends the process quietly when stdout is a closed pipe.
macro_rules! outln {
    () => {
        $crate::cli::pipe::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::pipe::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

/// `print!` that ends the process quietly when stdout is a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::pipe::write_stdout(format_args!($($arg)*))
    };
}
pub(crate) use out;

/// The message `println!` panics with on a closed pipe.
fn is_broken_pipe_panic(message: &str) -> bool {
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}

/// A `println!` anywhere (library code included) that hits a closed pipe ends the
/// process quietly rather than with a panic report. Other panics go to the hook
/// installed before (color-eyre's).
pub(crate) fn quiet_broken_pipe() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_broken_pipe_panic(message) {
            std::process::exit(0);
        }
        previous(info);
    }));
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_broken_pipe_panic_is_recognised() {
        assert!(super::is_broken_pipe_panic("failed printing to stdout: Broken pipe (os error 32)"));
        assert!(!super::is_broken_pipe_panic("index out of bounds"));
    }
}
