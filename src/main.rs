//! The `thoughtscope` binary: parse the command line and run it; errors are
//! printed by color-eyre (exit code 1), usage errors by clap (exit code 2).

mod cli;

use clap::Parser;

fn main() -> color_eyre::eyre::Result<()> {
    color_eyre::install()?;
    cli::main(cli::Cli::parse())
}
