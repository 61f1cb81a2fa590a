//! How the binary reports failures. A user's mistake (a bad flag value, a missing
//! file, a bad config file, an unknown task) or a failure of the environment (a
//! provider that cannot be reached, a disk that is full) is one plain line on stderr,
//! `error: ...`: no colours, no source location, no backtrace, whatever
//! `RUST_BACKTRACE` says. Panics are bugs and keep color-eyre's full report.
//!
//! Exit codes: 2 for usage errors (clap's, [`UserError::usage`], an unknown task, a
//! bad range or input, a bad provider setting), 1 for every other failure.

use std::process::ExitCode;

use color_eyre::eyre::Report;

use thoughtscope::llm::config::ConfigError;
use thoughtscope::tasks::TaskError;

/// A failure the user can fix, with the exit code that says which kind it is.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct UserError {
    pub(crate) message: String,
    /// A bad command line (exit code 2) rather than a failure while running (1).
    pub(crate) usage: bool,
}

impl UserError {
    /// A bad flag value or combination of flags (exit code 2).
    pub(crate) fn usage(message: impl Into<String>) -> UserError {
        UserError { message: message.into(), usage: true }
    }
}

/// Return a [`UserError::usage`] from the enclosing function, `format!`-style.
macro_rules! usage_bail {
    ($($arg:tt)*) => {
        return Err($crate::cli::error::UserError::usage(format!($($arg)*)).into())
    };
}
pub(crate) use usage_bail;

/// The error and its causes as one line: each cause not already quoted by the one
/// before, joined by ": ", with line breaks folded into spaces.
pub(crate) fn one_line(report: &Report) -> String {
    let mut text = String::new();
    for cause in report.chain() {
        let part = cause.to_string();
        if part.is_empty() || text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    fold_lines(&text)
}

fn fold_lines(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// 2 for a usage error anywhere in the chain, else 1.
pub(crate) fn exit_code(report: &Report) -> u8 {
    let usage = report.chain().any(|cause| {
        cause.downcast_ref::<UserError>().is_some_and(|e| e.usage)
            || matches!(
                cause.downcast_ref::<TaskError>(),
                Some(TaskError::Unknown(_) | TaskError::Range(..) | TaskError::Input(..))
            )
            || matches!(cause.downcast_ref::<ConfigError>(), Some(ConfigError::Invalid(_)))
            || cause.downcast_ref::<thoughtscope::engine::ParamError>().is_some()
    });
    if usage {
        2
    } else {
        1
    }
}

/// Print a failed run's error as one line and give its exit code.
pub(crate) fn report(report: &Report) -> ExitCode {
    // Output written through an `io::Write` to a pipe closed early: the reader is done.
    let broken_pipe = report
        .chain()
        .any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe));
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    // Errors quote files and replies: escaped for the terminal, known keys redacted.
    eprintln!("error: {}", thoughtscope::safe_text::terminal_safe(&one_line(report)));
    ExitCode::from(exit_code(report))
}

/// A command line clap refused, as one plain line (help and version print as usual).
pub(crate) fn clap_error(e: &clap::Error, args: &[String]) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(e.exit_code().clamp(0, 255) as u8);
    }
    let line = unquoted_value(e, args).unwrap_or_else(|| clap_line(&e.render().to_string()));
    eprintln!("{}", thoughtscope::safe_text::terminal_safe(&line));
    ExitCode::from(e.exit_code().clamp(0, 255) as u8)
}

/// The line for a value written in several words without quotes (`--input 4 9 10 13`):
/// clap takes the first word as the value and refuses the next (as a stray argument, or
/// as a subcommand, with a message that names nothing useful). `None` for other errors.
fn unquoted_value(e: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(e.kind(), ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand | ErrorKind::ArgumentConflict) {
        return None;
    }
    let stray = [ContextKind::InvalidArg, ContextKind::InvalidSubcommand].into_iter().find_map(|k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    });
    // The first word that no flag takes: clap's stray word when it names one.
    let at = match &stray {
        Some(word) => args.iter().skip(1).position(|a| a == word)? + 1,
        None => args.iter().enumerate().skip(3).find(|(i, a)| !a.starts_with('-') && follows_value(args, *i))?.0,
    };
    if at < 3 || !follows_value(args, at) {
        return None;
    }
    let flag = &args[at - 2];
    let words: Vec<&str> =
        args[at - 1..].iter().map(String::as_str).take_while(|w| !w.starts_with("--") && !w.is_empty()).collect();
    Some(format!(
        "error: {flag} takes one value: quote a value of several words, as in {flag} \"{}\" (see --help)",
        words.join(" ")
    ))
}

/// Whether `args[i]` comes right after a long flag and its value (`--input 4 9`: `9`).
fn follows_value(args: &[String], i: usize) -> bool {
    i >= 2 && args[i - 2].starts_with("--") && !args[i - 2].contains('=') && !args[i - 1].starts_with("--")
}

/// clap's message (plain text: `StyledStr`'s `Display` drops the styles) as one line:
/// the error, its tips, and where to look for more.
fn clap_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: bad command line");
    let mut line = if first.starts_with("error:") { first.to_string() } else { format!("error: {first}") };
    for tip in lines.filter(|l| l.starts_with("tip:")) {
        line.push_str(&format!(" ({tip})"));
    }
    line.push_str(" (see --help)");
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use color_eyre::eyre::{eyre, WrapErr};

    #[test]
    fn errors_are_one_line_without_repeating_their_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory (os error 2)");
        let r: Report = Err::<(), _>(io).wrap_err("reading /x/y.jsonl").unwrap_err();
        assert_eq!(one_line(&r), "reading /x/y.jsonl: No such file or directory (os error 2)");
        assert_eq!(exit_code(&r), 1);
        let r = eyre!("two\n  lines");
        assert_eq!(one_line(&r), "two lines");
        let r: Report = UserError::usage("--timeout must be positive").into();
        assert_eq!((one_line(&r).as_str(), exit_code(&r)), ("--timeout must be positive", 2));
        let r: Report = TaskError::Unknown("chess".into()).into();
        assert_eq!(exit_code(&r), 2);
    }

    #[test]
    fn a_value_of_several_words_without_quotes_says_to_quote_it() {
        for line in [
            "thoughtscope --task game24 --input 4 9 10 13",
            "thoughtscope run --task game24 --input 4 9 10 13 --method cot",
            "thoughtscope tui --input 4 9 10 13",
        ] {
            let args: Vec<String> = line.split(' ').map(String::from).collect();
            let e = crate::cli::parse_from(&args).expect_err(line);
            let said = unquoted_value(&e, &args).unwrap_or_else(|| panic!("{line}: {}", e.render()));
            assert_eq!(
                said,
                "error: --input takes one value: quote a value of several words, as in --input \"4 9 10 13\" (see --help)",
                "{line}"
            );
        }
        // Other mistakes keep clap's line.
        let args: Vec<String> = "thoughtscope run --tsk x".split(' ').map(String::from).collect();
        let e = crate::cli::parse_from(&args).expect_err("unknown flag");
        assert_eq!(unquoted_value(&e, &args), None);
    }

    #[test]
    fn clap_errors_fold_into_one_line_with_their_tips() {
        let rendered = "error: unexpected argument '--tsk' found\n\n  tip: a similar argument exists: '--task'\n\n\
                        Usage: thoughtscope run --task <TASK>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_line(rendered),
            "error: unexpected argument '--tsk' found (tip: a similar argument exists: '--task') (see --help)"
        );
    }
}
