//! `thoughtscope import`: other tools' logs as sessions.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use color_eyre::eyre::{bail, Result};

use super::pipe::outln;
use thoughtscope::import::{react as import_react, tot as import_tot};

#[derive(Subcommand, Debug)]
pub(crate) enum ImportCmd {
    /// ReAct's logged trajectories (text: FEVER `Claim:` / HotpotQA `Question:` blocks), one session each.
    ReactText {
        file: PathBuf,
        /// Directory for the sessions (named by task and question index).
        #[arg(long)]
        out: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The reference Tree-of-Thoughts implementation's Game-of-24 BFS log (JSON).
    TotLog {
        file: PathBuf,
        /// Directory for the sessions, one per puzzle.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Re-run our tot-bfs on the log's replies and check its selections, final paths and verdicts
        /// (exit 1 on any difference).
        #[arg(long)]
        verify: bool,
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn import(cmd: ImportCmd) -> Result<()> {
    match cmd {
        ImportCmd::TotLog { file, out, verify, json } => import_tot_log(&file, out.as_deref(), verify, json),
        ImportCmd::ReactText { file, out, json } => import_react_text(&file, &out, json),
    }
}

fn import_tot_log(file: &Path, out: Option<&Path>, verify: bool, json: bool) -> Result<()> {
    if out.is_none() && !verify {
        bail!("say where the sessions go with --out DIR (or only check fidelity with --verify)");
    }
    let report = import_tot::import(file, out)?;
    if verify {
        for c in &report.checks {
            for d in &c.disagreements {
                safe_eprintln!("puzzle {} ({}): {d}", c.idx, c.input);
            }
        }
    }
    let run = &report.run;
    if json {
        let brief = serde_json::json!({
            "puzzles": report.puzzles,
            "puzzles_agreeing": report.puzzles_agreeing,
            "steps": report.steps,
            "steps_agreeing": report.steps_agreeing,
            "finals_agreeing": report.finals_agreeing,
            "verdicts_agreeing": report.verdicts_agreeing,
            "solved": report.solved,
            "solved_any": report.solved_any,
            "prompt_tokens": report.prompt_tokens,
            "completion_tokens": report.completion_tokens,
            "model": run.backend,
            "n_evaluate": run.n_evaluate,
            "breadth": run.n_select,
            // Through its text, so 0.7 reads 0.7 rather than the f32's 0.699999988.
            "temperature": run.temperature.to_string().parse::<f64>().unwrap_or_default(),
            "sessions": out.map(|o| o.display().to_string()),
        });
        outln!("{brief}");
    } else {
        let from = if run.from_file_name { "the file name" } else { "the log (run.py's defaults for the rest)" };
        outln!(
            "read as {} at temperature {}: propose, value with {} samples, greedy keeping {} (from {from})",
            run.backend,
            run.temperature,
            run.n_evaluate,
            run.n_select
        );
        if let Some(o) = out {
            outln!("wrote {} sessions to {}", report.puzzles, o.display());
        }
        outln!("tokens: {} prompt, {} completion", report.prompt_tokens, report.completion_tokens);
        if verify {
            outln!("{} of {} steps select the same candidates as the log", report.steps_agreeing, report.steps);
            outln!(
                "{} of {n} puzzles end on the log's final paths, {} with its verdicts",
                report.finals_agreeing,
                report.verdicts_agreeing,
                n = report.puzzles
            );
            outln!(
                "solved_any {}/{}  solved (top-ranked) {}/{}",
                report.solved_any,
                report.puzzles,
                report.solved,
                report.puzzles
            );
        }
    }
    if verify {
        if let Some((c, d)) = report.first_difference() {
            bail!(
                "{} of {} puzzles differ from the log; the first: puzzle {} ({}): {d}",
                report.puzzles - report.puzzles_agreeing,
                report.puzzles,
                c.idx,
                c.input
            );
        }
    }
    Ok(())
}

fn import_react_text(file: &Path, out: &Path, json: bool) -> Result<()> {
    let report = import_react::import(file, out)?;
    for w in &report.warnings {
        safe_eprintln!("warning: {w}");
    }
    for t in &report.trajectories {
        for d in &t.differences {
            safe_eprintln!("{}: {d}", t.session);
        }
    }
    let n = report.sessions;
    if json {
        let brief = serde_json::json!({
            "sessions": n,
            "out": out.display().to_string(),
            "em_log": report.em_log,
            "em": report.em,
            "f1_log": report.f1_log,
            "f1": report.f1,
            "differences": report.differences,
            "warnings": report.warnings.len(),
        });
        outln!("{brief}");
    } else {
        outln!("wrote {n} sessions to {}", out.display());
        outln!(
            "em {}/{n} in the log, {}/{n} by our scoring (f1 {:.3} / {:.3})",
            report.em_log,
            report.em,
            report.f1_log,
            report.f1
        );
        outln!("{} places where a session shows something other than the log", report.differences);
    }
    Ok(())
}
