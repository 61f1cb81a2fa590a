//! `thoughtscope replay`: rebuild recorded sessions with no provider calls, headless
//! or in the explorer.

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::{bail, eyre, Result, WrapErr};

use thoughtscope::runtime::headless::{ProblemResult, Summary};
use thoughtscope::session::fidelity::Fidelity;
use thoughtscope::session::{replay, RunClock, Session};
use thoughtscope::tasks::Problem;

use super::args::ForkArgs;
use super::pipe::{out, outln};
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
    /// Fail (exit status 1) if today's engine does not reproduce every decision of a
    /// session (such a session is still shown, as recorded; wording may differ).
    #[arg(long)]
    pub(crate) strict: bool,
    /// Also list the log lines today's engine words differently, input by input.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// In the explorer, `P` plays through the captions instead of stopping at each.
    #[arg(long)]
    pub(crate) nonstop: bool,
    /// Follow the session as another process writes it (a headless run, a batch): new
    /// lines show as they arrive, the timeline at the live end unless you move it.
    #[arg(long, conflicts_with = "headless")]
    pub(crate) follow: bool,
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

/// Sessions summarised together: those of one task, method (with its parameters),
/// provider and model, in the order they first appear.
struct Group {
    key: String,
    header: thoughtscope::session::Header,
    results: Vec<ProblemResult>,
    /// Where each session's end fell in its run (none for sessions from before it was kept).
    clocks: Vec<Option<RunClock>>,
    /// How its sessions replayed: exact, exact but for wording, as recorded.
    kinds: Kinds,
    /// What the runs found out about the server, as their sessions recorded it (each once).
    found: Vec<String>,
}

/// How many sessions replayed each way.
#[derive(Debug, Default, Clone, Copy)]
struct Kinds {
    exact: usize,
    reworded: usize,
    as_recorded: usize,
}

impl Kinds {
    fn add(&mut self, fidelity: &Fidelity) {
        match fidelity {
            Fidelity::Exact => self.exact += 1,
            Fidelity::Reworded { .. } => self.reworded += 1,
            Fidelity::AsRecorded { .. } => self.as_recorded += 1,
        }
    }

    fn sum(self, other: Kinds) -> Kinds {
        Kinds {
            exact: self.exact + other.exact,
            reworded: self.reworded + other.reworded,
            as_recorded: self.as_recorded + other.as_recorded,
        }
    }
}

/// Rebuild one session file, reading it once without keeping its records.
fn replay_one(file: &Path, prompts: Option<&Path>) -> Result<replay::Replayed, String> {
    replay::replay_file(file, prompts).map_err(|e| e.to_string())
}

/// A group's wall time: each run's, from its start to its last problem's end (problems
/// side by side overlap, so their times do not add up), summed over the runs its
/// sessions come from. Sessions recorded before the run clock was kept give only their
/// own times: then it is their sum, and stderr says so.
fn group_wall_ms(g: &Group) -> u64 {
    match g.clocks.iter().copied().collect::<Option<Vec<RunClock>>>() {
        Some(clocks) => RunClock::wall_ms(&clocks),
        None => {
            let sum = g.results.iter().map(|r| r.wall_ms).sum();
            if g.results.len() > 1 {
                safe_eprintln!(
                    "note: {} of these {} sessions do not record when their run began (recorded by an earlier \
                     version), so wall_ms is the sum of the problems' times, {sum} ms, not the run's",
                    g.clocks.iter().filter(|c| c.is_none()).count(),
                    g.results.len()
                );
            }
            sum
        }
    }
}

/// Each group's summary (as `run` prints it: a replay gives the same summary).
fn print_groups(groups: &[Group], json: bool) {
    for (i, g) in groups.iter().enumerate() {
        let h = &g.header;
        let wall_ms = group_wall_ms(g);
        let summary =
            Summary::from_results(&h.task, &h.params, &h.provider, &h.model, h.simulated, &g.results, wall_ms)
                .priced(h.price.as_ref());
        if i > 0 && !json {
            outln!();
        }
        print_summary(&summary, json);
        // As `run` said them after its summary.
        for found in &g.found {
            safe_eprintln!("note: {found}");
        }
    }
}

pub(crate) fn replay_cmd(args: ReplayArgs) -> Result<()> {
    if !args.headless {
        if args.path.is_dir() {
            bail!("{}: the explorer opens one session file; use --headless for a directory", args.path.display());
        }
        if args.follow {
            // Whole lines only: the line being written is read when it is whole.
            let (session, read) = thoughtscope::tui::app::read_written(&args.path).map_err(|e| eyre!(e))?;
            return tui_replay(session, args.theme, args.prompts, &args.fork, args.nonstop, Some(read));
        }
        let session = Session::load(&args.path)?;
        return tui_replay(session, args.theme, args.prompts, &args.fork, args.nonstop, None);
    }
    super::run::check_prompts_dir(args.prompts.as_deref())?;
    let directory = args.path.is_dir();
    let files = session_files(&args.path)?;
    let mut groups: Vec<Group> = Vec::new();
    let mut skipped = 0;
    let single = files.len() == 1;
    for file in &files {
        let replay::Replayed { header, load_warnings, complete, stopped, run, found, rebuilt } =
            match replay_one(file, args.prompts.as_deref()) {
                Ok(loaded) => loaded,
                // One bad file in a directory does not hide the others.
                Err(e) if directory => {
                    safe_eprintln!("warning: skipped {e}");
                    skipped += 1;
                    continue;
                }
                Err(e) => bail!("{e}"),
            };
        for w in load_warnings.iter().chain(&rebuilt.warnings) {
            safe_eprintln!("warning: {w}");
        }
        if !complete {
            safe_eprintln!(
                "warning: {}: incomplete: the recording has no end line (the run was cut short); replayed as far as \
                 it goes",
                file.display()
            );
        }
        // Which kind of replay it was: said for one file, and for each that is not exact.
        if single || !rebuilt.fidelity.is_exact() {
            safe_eprintln!("{}: {}", file.display(), rebuilt.fidelity.describe(&header));
        }
        if args.verbose {
            for r in &rebuilt.reworded {
                safe_eprintln!("  worded differently: {r}");
            }
        }
        let problem = Problem { index: header.index, input: header.input.clone() };
        let mut r = ProblemResult::new(&problem, rebuilt.engine.outcome(), rebuilt.totals, rebuilt.wall_ms)
            .priced(header.price.as_ref())
            .with_qa(&rebuilt.engine)
            .with_health(&rebuilt.engine)
            .with_facets(header.facets.clone())
            .with_metrics(&rebuilt.engine)
            .with_overflows(&rebuilt.engine);
        r.session = Some(file.display().to_string());
        r.stopped = stopped;
        r.incomplete = !complete;
        if single && !args.json {
            out!("{}", thoughtscope::safe_text::terminal_safe(&rebuilt.engine.tree().render_text()));
        }
        let h = &header;
        let key = format!(
            "{}\u{0}{}\u{0}{}\u{0}{}",
            h.task,
            serde_json::to_string(&h.params).unwrap_or_default(),
            h.provider,
            h.model
        );
        let group = match groups.iter().position(|g| g.key == key) {
            Some(i) => &mut groups[i],
            None => {
                let (results, clocks, kinds) = (Vec::new(), Vec::new(), Kinds::default());
                groups.push(Group { key, header, results, clocks, kinds, found: Vec::new() });
                let last = groups.len() - 1;
                &mut groups[last]
            }
        };
        group.results.push(r);
        group.clocks.push(run);
        group.kinds.add(&rebuilt.fidelity);
        for f in found {
            if !group.found.contains(&f) {
                group.found.push(f);
            }
        }
    }
    if groups.is_empty() {
        bail!(
            "{}: none of the {skipped} session files could be replayed (see the warnings above)",
            args.path.display()
        );
    }
    print_groups(&groups, args.json);
    let kinds = groups.iter().fold(Kinds::default(), |all, g| all.sum(g.kinds));
    if !single {
        eprintln!(
            "replayed {} sessions: {} exactly, {} exactly but for wording, {} as recorded (today's engine differs)",
            kinds.exact + kinds.reworded + kinds.as_recorded,
            kinds.exact,
            kinds.reworded,
            kinds.as_recorded
        );
    }
    if skipped > 0 {
        eprintln!("{skipped} of {} session files skipped", files.len());
    }
    if args.strict && kinds.as_recorded > 0 {
        bail!(
            "--strict: today's engine does not reproduce {} of the sessions (shown as recorded; see above)",
            kinds.as_recorded
        );
    }
    Ok(())
}
