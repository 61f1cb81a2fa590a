//! The `thoughtscope` command line: the arguments, and one file per command.

/// `println!` for text that may hold untrusted parts (model text, names from a session
/// file): controls and bidi characters escaped, known secrets redacted.
macro_rules! safe_println {
    ($($arg:tt)*) => {
        $crate::cli::pipe::outln!("{}", thoughtscope::safe_text::terminal_safe(&format!($($arg)*)))
    };
}

/// `eprintln!` made safe the same way as [`safe_println`].
macro_rules! safe_eprintln {
    ($($arg:tt)*) => {
        eprintln!("{}", thoughtscope::safe_text::terminal_safe(&format!($($arg)*)))
    };
}

mod ablation;
mod args;
mod bench;
mod chart;
mod compare;
mod connect;
mod diff;
mod docs;
pub(crate) mod error;
mod export;
mod grade;
mod import;
mod memory;
mod params;
pub(crate) mod pipe;
mod replay;
mod run;
mod serve;
mod task;
mod tui;
mod variants;

use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use color_eyre::eyre::{eyre, Result};

use error::UserError;
use thoughtscope::config::Config;

use args::RunArgs;
use bench::BenchArgs;
use diff::DiffArgs;
use export::ExportArgs;
use grade::GradeArgs;
use import::ImportCmd;
use memory::MemoryArgs;
use replay::ReplayArgs;
use serve::ServeArgs;

#[derive(Parser, Debug)]
#[command(
    name = "thoughtscope",
    version,
    about = "A terminal workbench for LLM reasoning searches: ToT, ReAct, ReTreVal",
    long_about = "A terminal workbench for LLM reasoning searches (Tree of Thoughts, ReAct, ReTreVal)",
    // With no command the explorer opens, so its options work without `tui`
    // (`thoughtscope --task qa-demo --method react`, as the README writes it).
    args_conflicts_with_subcommands = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Cmd>,
    /// The explorer's options, for when no command is named (the same as `tui`'s).
    #[command(flatten)]
    pub(crate) tui: RunArgs,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Cmd {
    /// Open the explorer on a live run (the default with no command).
    Tui(Box<RunArgs>),
    /// List the demo sessions, or open one in the explorer.
    Demo {
        /// Which demo to open (its number in the list).
        which: Option<usize>,
        #[arg(long)]
        theme: Option<String>,
        /// `P` plays through the captions instead of stopping at each until a key goes on.
        #[arg(long)]
        nonstop: bool,
    },
    /// Re-record the demo sessions into a directory (for maintainers).
    #[command(hide = true)]
    RecordDemos { dir: PathBuf },
    /// Run a search headless over one or more problems and print a summary.
    Run(Box<RunArgs>),
    /// Open a recorded session in the explorer, read-only (--headless prints its summary).
    Replay(Box<ReplayArgs>),
    /// Turn other tools' logs into sessions.
    #[command(subcommand)]
    Import(ImportCmd),
    /// Measure speed: concurrent calls, replay and the explorer at scale.
    ///
    /// Concurrent vs serial calls with simulated latency, and engine throughput.
    Bench(BenchArgs),
    /// Grade a math answer: print `equivalent` or `different`.
    ///
    /// The exit status is 0 either way.
    Grade(GradeArgs),
    /// Read and edit ReTreVal's cross-problem memories.
    ///
    /// The commands: list, show, edit, rm, clear, export, import, names.
    Memory(MemoryArgs),
    /// Export a session's tree: json, dot, mermaid or otel.
    ///
    /// The formats: json, dot (Graphviz), mermaid, or otel (OpenTelemetry OTLP JSON).
    Export(ExportArgs),
    /// Compare two sessions: where they diverge and how their trees differ.
    ///
    /// It prints the first input where they diverge, then how their trees differ. The exit
    /// status is 0 when they are the same, 1 when they differ, 2 on an error.
    Diff(DiffArgs),
    /// Write and check task files: your own problems, prompts and checks.
    ///
    /// No Rust needed: task new DIR, task check PATH, task show NAME.
    #[command(subcommand)]
    Task(task::TaskCmd),
    /// Answer OpenAI-style chat requests with searches, each recorded.
    ///
    /// It answers POST /v1/chat/completions; each search is recorded as a session.
    Serve(Box<ServeArgs>),
    /// Rewrite the docs generated from the code.
    ///
    /// The reference under docs/reference/, the man pages under docs/man/, the README's
    /// method and task table, and assets/explorer.svg.
    Docs(docs::DocsArgs),
}

/// The command line of this process, parsed. Every option taking a value accepts a
/// negative number (`--temperature -1`), so range checks can name the flag instead of
/// clap reading `-1` as an unknown flag.
pub(crate) fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os())
}

pub(crate) fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = short_help(negative_numbers(Cli::command())).try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// The options a command's short help (`-h`) shows, most used first; the rest are in its
/// `--help` and its page of docs/reference. A command not named here shows them all.
const SHORT_HELP: &[(&str, &[&str])] = &[
    ("tui", &["task", "method", "provider", "model", "range", "input", "record", "theme"]),
    ("run", &["task", "method", "provider", "model", "range", "input", "json", "out", "record"]),
    ("replay", &["headless", "json", "follow", "strict", "provider", "model"]),
    ("serve", &["host", "port", "provider", "model", "api_key", "sessions", "task"]),
    ("bench", &["range", "latency_ms", "concurrency"]),
    ("grade", &["gold_file", "pred_file", "json", "no_strict"]),
    ("memory", &["memory", "task"]),
];

/// Each command's `-h` as a door to one screen: its common options, then where every
/// option is (`--help`, and the same as a page under docs/reference).
fn short_help(mut command: clap::Command) -> clap::Command {
    let names: Vec<String> =
        command.get_subcommands().filter(|c| !c.is_hide_set()).map(|c| c.get_name().to_string()).collect();
    for name in names {
        let shown = SHORT_HELP.iter().find(|(n, _)| *n == name).map(|(_, shown)| *shown);
        command = command.mut_subcommand(&name, |sub| {
            let sub = match shown {
                Some(shown) => sub.mut_args(|arg| {
                    if arg.is_positional() || shown.contains(&arg.get_id().as_str()) {
                        arg
                    } else {
                        arg.hide_short_help(true)
                    }
                }),
                None => sub,
            };
            sub.after_help(format!("Every option: thoughtscope {name} --help, or docs/reference/{name}.md"))
                .after_long_help(format!("This help as a page: docs/reference/{name}.md"))
        });
    }
    // With no command the explorer opens: its options are `tui`'s, listed there.
    command
        .help_template("{about-with-newline}\n{usage-heading} {usage}\n\nCommands:\n{subcommands}{after-help}")
        .after_help("Options: the explorer's (thoughtscope tui -h). Pages: docs/reference/")
}

fn negative_numbers(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| {
            let takes_values = arg.get_action().takes_values() && arg.get_num_args().is_none_or(|n| n.takes_values());
            if takes_values {
                arg.allow_negative_numbers(true)
            } else {
                arg
            }
        })
        .mut_subcommands(negative_numbers)
}

/// Run the command the line names.
pub fn main(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Cmd::Run(args)) => run::run(*args),
        Some(Cmd::Replay(args)) => replay::replay_cmd(*args),
        Some(Cmd::Import(cmd)) => import::import(cmd),
        Some(Cmd::Bench(args)) => bench::bench(args),
        Some(Cmd::Grade(args)) => grade::grade(args),
        Some(Cmd::Memory(args)) => memory::memory(args),
        Some(Cmd::Export(args)) => export::export_cmd(args),
        Some(Cmd::Diff(args)) => diff::diff_cmd(args),
        Some(Cmd::Task(cmd)) => task::task_cmd(cmd),
        Some(Cmd::Serve(args)) => serve::serve_cmd(*args),
        Some(Cmd::Docs(args)) => docs::docs_cmd(args),
        Some(Cmd::Tui(args)) => tui::tui_live(*args),
        Some(Cmd::Demo { which, theme, nonstop }) => tui::demo(which, theme, nonstop),
        Some(Cmd::RecordDemos { dir }) => thoughtscope::demos::record_all(&dir).map_err(|e| eyre!(e)),
        None => tui::tui_live(cli.tui),
    }
}

/// The config file (`--config FILE` or the usual place), with its warnings printed once.
pub(crate) fn config(explicit: Option<&Path>) -> Result<Config, UserError> {
    let (config, warnings) = Config::load(explicit).map_err(|e| UserError::usage(e.to_string()))?;
    for w in warnings {
        safe_eprintln!("warning: {w}");
    }
    Ok(config)
}

/// The config file (`--config FILE` or the usual place), its warnings added to `notes`
/// (the explorer shows them on screen, where stderr would be hidden).
pub(crate) fn config_notes(explicit: Option<&Path>, notes: &mut Vec<String>) -> Result<Config, UserError> {
    let (config, warnings) = Config::load(explicit).map_err(|e| UserError::usage(e.to_string()))?;
    notes.extend(warnings);
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_numbers_are_values_of_every_subcommands_options() {
        negative_numbers(Cli::command()).debug_assert();
        short_help(negative_numbers(Cli::command())).debug_assert();
        let cli = parse_from(["thoughtscope", "run", "--temperature", "-1", "--sim-noise", "-0.5", "--timeout", "-3"])
            .expect("negative values parse");
        let Some(Cmd::Run(args)) = cli.command else { panic!("run") };
        assert_eq!(args.search.get("temperature"), Some(&thoughtscope::engine::Value::Real(-1.0)));
        assert_eq!(args.sim.sim_noise, Some(-0.5));
        assert_eq!(args.connect.timeout, Some(-3.0));
        let cli = parse_from(["thoughtscope", "replay", "x.jsonl", "--headless"]).expect("flags still parse");
        assert!(matches!(cli.command, Some(Cmd::Replay(_))));
        // A negative count parses, so its range check names the parameter; a word is clap's error.
        let cli = parse_from(["thoughtscope", "run", "--breadth", "-2"]).expect("a number");
        let Some(Cmd::Run(args)) = cli.command else { panic!("run") };
        let e = thoughtscope::config::ParamPatch::resolve(&args.search, &Default::default()).unwrap_err();
        assert_eq!(e.to_string(), "breadth (--breadth) is -2: it must be a whole number from 1 to 100000");
        let e =
            parse_from(["thoughtscope", "run", "--breadth", "two"]).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("--breadth") && e.contains("expected a whole number"), "{e}");
    }

    #[test]
    fn the_explorers_options_work_without_the_tui_command() {
        let cli = parse_from(["thoughtscope", "--task", "qa-demo", "--method", "react", "--range", "0..3"])
            .expect("the default command's options parse at the top");
        assert!(cli.command.is_none());
        assert_eq!(cli.tui.task.as_deref(), Some("qa-demo"));
        assert_eq!(cli.tui.range.as_deref(), Some("0..3"));
        assert!(cli.tui.search.method.is_some());
        let cli = parse_from(["thoughtscope", "--temperature", "-1"]).expect("negative values at the top too");
        assert_eq!(cli.tui.search.get("temperature"), Some(&thoughtscope::engine::Value::Real(-1.0)));
        // Commands keep their own options.
        let cli = parse_from(["thoughtscope", "tui", "--task", "qa-demo"]).expect("tui still parses");
        assert!(matches!(cli.command, Some(Cmd::Tui(_))));
        let cli = parse_from(["thoughtscope", "demo", "2", "--theme", "light"]).expect("demo still parses");
        assert!(matches!(cli.command, Some(Cmd::Demo { which: Some(2), .. })));
    }
}
