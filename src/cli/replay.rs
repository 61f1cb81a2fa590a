//! `thoughtscope replay`: rebuild recorded sessions with no provider calls, headless
//! or in the explorer.

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::{bail, Result, WrapErr};

use thoughtscope::runtime::headless::{ProblemResult, Summary};
use thoughtscope::session::{replay, Session};
use thoughtscope::tasks::Problem;

use super::args::ForkArgs;
use super::run::print_summary;
use super::tui::tui_replay;

#[derive(Args, Debug)]
pub(crate) struct ReplayArgs {
    /// A session file, or a directory of them.
    pub(crate) path: PathBuf,
    /// Rebuild without the terminal UI and print a summary.
    #[arg(long)]
    pub(crate) headless: bool,
    /// Colour theme for the explorer.
    #[arg(long)]
    pub(crate) theme: Option<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Prompt template directory the run used, if not the built-in one.
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) fork: ForkArgs,
}

pub(crate) fn session_files(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .wrap_err_with(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!("{}: no session files (*.jsonl) in this directory", path.display());
        }
        Ok(files)
    } else {
        Ok(vec![path.to_path_buf()])
    }
}

pub(crate) fn replay_cmd(args: ReplayArgs) -> Result<()> {
    if !args.headless {
        if args.path.is_dir() {
            bail!("{}: the explorer opens one session file; use --headless for a directory", args.path.display());
        }
        let session = Session::load(&args.path)?;
        return tui_replay(session, args.theme, args.prompts, &args.fork);
    }
    let files = session_files(&args.path)?;
    let mut results = Vec::new();
    let mut first: Option<Session> = None;
    let mut mismatches = 0;
    let single = files.len() == 1;
    for file in &files {
        let session = Session::load(file)?;
        for w in &session.warnings {
            safe_eprintln!("warning: {w}");
        }
        let rebuilt = replay::rebuild(&session, args.prompts.as_deref(), None)?;
        for m in &rebuilt.mismatches {
            safe_eprintln!("replay differs: {m}");
        }
        mismatches += rebuilt.mismatches.len();
        let problem = Problem { index: session.header.index, input: session.header.input.clone() };
        let mut r = ProblemResult::new(&problem, rebuilt.engine.outcome(), rebuilt.totals, rebuilt.wall_ms)
            .priced(session.header.price.as_ref())
            .with_qa(&rebuilt.engine);
        r.session = Some(file.display().to_string());
        r.stopped = session.stopped().map(str::to_string);
        if single && !args.json {
            print!("{}", thoughtscope::safe_text::terminal_safe(&rebuilt.engine.tree().render_text()));
        }
        results.push(r);
        if first.is_none() {
            first = Some(session);
        }
    }
    let Some(first) = first else { bail!("no sessions to replay") };
    let h = &first.header;
    let wall_ms = results.iter().map(|r| r.wall_ms).sum();
    let summary = Summary::from_results(&h.task, &h.params, &h.provider, &h.model, h.simulated, &results, wall_ms)
        .priced(h.price.as_ref());
    print_summary(&summary, args.json);
    if mismatches > 0 {
        bail!("{mismatches} differences between the rebuilt run and the record");
    }
    Ok(())
}
