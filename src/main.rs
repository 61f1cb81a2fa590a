//! The `thoughtscope` binary: parse the command line and run it. A failure the user
//! can fix prints as one plain line (`cli::error`; exit code 2 for usage errors, 1
//! otherwise); a panic is a bug and keeps color-eyre's full report.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // The panic hook only: errors returned by a command are reported by `cli::error`.
    let _ = color_eyre::install();
    cli::pipe::quiet_broken_pipe();
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(e) => {
            let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
            return cli::error::clap_error(&e, &args);
        }
    };
    let result = cli::main(cli);
    // The MCP servers the run started end with it (a run stopped by a signal included);
    // one that ended on its own during the run is said once.
    for note in thoughtscope::tools::mcp::end_servers() {
        eprintln!("warning: {note}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(report) => cli::error::report(&report),
    }
}
