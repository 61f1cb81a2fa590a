//! The `thoughtscope` command line: the arguments, and one file per command.

/// `println!` for text that may hold untrusted parts (model text, names from a session
/// file): controls and bidi characters escaped, known secrets redacted.
macro_rules! safe_println {
    ($($arg:tt)*) => {
        println!("{}", thoughtscope::safe_text::terminal_safe(&format!($($arg)*)))
    };
}

/// `eprintln!` made safe the same way as [`safe_println`].
macro_rules! safe_eprintln {
    ($($arg:tt)*) => {
        eprintln!("{}", thoughtscope::safe_text::terminal_safe(&format!($($arg)*)))
    };
}

mod args;
mod bench;
mod import;
mod replay;
mod run;
mod tui;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use color_eyre::eyre::{eyre, Result};

use thoughtscope::config::Config;

use args::RunArgs;
use bench::BenchArgs;
use import::ImportCmd;
use replay::ReplayArgs;

#[derive(Parser, Debug)]
#[command(
    name = "thoughtscope",
    version,
    about = "A terminal workbench for LLM reasoning searches (Tree of Thoughts, ReAct, ReTreVal)"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Cmd>,
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
    },
    /// Re-record the demo sessions into a directory (for maintainers).
    #[command(hide = true)]
    RecordDemos { dir: PathBuf },
    /// Run a search headless over one or more problems and print a summary.
    Run(Box<RunArgs>),
    /// Rebuild recorded sessions with no provider calls and print their summary.
    Replay(Box<ReplayArgs>),
    /// Turn other tools' logs into sessions.
    #[command(subcommand)]
    Import(ImportCmd),
    /// Measure speed: concurrent vs serial calls with simulated latency, and engine throughput.
    Bench(BenchArgs),
}

/// Run the command the line names.
pub fn main(cli: Cli) -> Result<()> {
    match cli.command {
        Some(Cmd::Run(args)) => run::run(*args),
        Some(Cmd::Replay(args)) => replay::replay_cmd(*args),
        Some(Cmd::Import(cmd)) => import::import(cmd),
        Some(Cmd::Bench(args)) => bench::bench(args),
        Some(Cmd::Tui(args)) => tui::tui_live(*args),
        Some(Cmd::Demo { which, theme }) => tui::demo(which, theme),
        Some(Cmd::RecordDemos { dir }) => thoughtscope::demos::record_all(&dir).map_err(|e| eyre!(e)),
        None => tui::tui_live(RunArgs::default()),
    }
}

/// The config file (`--config FILE` or the usual place), with its warnings printed once.
pub(crate) fn config(explicit: Option<&Path>) -> Config {
    let (config, warnings) = Config::load(explicit);
    for w in warnings {
        safe_eprintln!("warning: {w}");
    }
    config
}
