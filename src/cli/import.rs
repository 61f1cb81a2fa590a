//! `thoughtscope import`: other tools' logs as sessions.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use color_eyre::eyre::{bail, eyre, Result};

use super::pipe::outln;
use thoughtscope::import;
use thoughtscope::import::{
    crosswords_dfs as import_dfs, naive as import_naive, react as import_react, tot as import_tot,
    writing_bfs as import_writing_bfs, TotLogFormat, VerifiedImport,
};

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
    /// A reference Tree-of-Thoughts log (JSON): the Game-of-24 BFS, a naive IO/CoT sampling
    /// log of Game of 24, crosswords or creative writing, the crossword DFS, or the
    /// creative-writing BFS; the format is recognised.
    TotLog {
        file: PathBuf,
        /// Directory for the sessions, one per puzzle.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Re-run the search on the log's replies and check every recorded decision and figure
        /// against the session (exit 1 on any difference).
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
    match import::detect_tot_log(file)? {
        TotLogFormat::Game24Bfs => {}
        TotLogFormat::Naive => return import_naive_log(file, out, verify, json),
        TotLogFormat::CrosswordsDfs => return import_dfs_log(file, out, verify, json),
        TotLogFormat::WritingBfs => return import_writing_bfs_log(file, out, verify, json),
    }
    if !json {
        outln!("format: Game-of-24 BFS log (run.py --task game24 --method_generate propose --method_evaluate value)");
    }
    let report = import_tot::import(file, out)?;
    say_differences(&report, verify);
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
            safe_println!("wrote {} sessions to {}", report.puzzles, o.display());
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
    verdict(&report, verify)
}

fn import_naive_log(file: &Path, out: Option<&Path>, verify: bool, json: bool) -> Result<()> {
    let report = import_naive::import(file, out)?;
    say_differences(&report, verify);
    if !verify {
        // A stored score the reference's own scorer does not give is said on every import.
        for c in &report.checks {
            for d in &c.score_disagreements {
                safe_eprintln!("{}: input {}: {d}", file.display(), c.idx);
            }
        }
    }
    let game24 = report.task == import_naive::NaiveTask::Game24;
    if json {
        let mut brief = serde_json::json!({
            "format": "naive",
            "task": report.task,
            "method": report.method,
            "model": report.backend,
            "temperature": report.temperature.to_string().parse::<f64>().unwrap_or_default(),
            "puzzles": report.puzzles,
            "puzzles_agreeing": report.puzzles_agreeing,
            "samples": report.samples,
            "prompt_tokens": report.prompt_tokens,
            "completion_tokens": report.completion_tokens,
            "sessions": out.map(|o| o.display().to_string()),
        });
        let figures = if game24 {
            serde_json::json!({
                "samples_correct": report.samples_correct,
                "puzzles_any": report.puzzles_any,
                "puzzles_first": report.puzzles_first,
            })
        } else if let Some(coherency) = report.coherency {
            serde_json::json!({"coherency": coherency, "judged": report.judged})
        } else {
            serde_json::json!({
                "letter": report.letter,
                "word": report.word,
                "games": report.games,
                "log": {"letter": report.log_letter, "word": report.log_word, "games": report.log_games},
            })
        };
        if let (Some(b), Some(f)) = (brief.as_object_mut(), figures.as_object()) {
            b.extend(f.clone());
        }
        outln!("{brief}");
    } else {
        let from =
            if report.method_from_name { "from the file name" } else { "the file name does not say; io assumed" };
        outln!(
            "format: {} naive sampling log (run.py --naive_run), read as --method {} ({from}), {} at temperature {}",
            report.task.label(),
            report.method,
            report.backend,
            report.temperature
        );
        if let Some(o) = out {
            safe_println!("wrote {} sessions to {}", report.puzzles, o.display());
        }
        outln!("tokens: {} prompt, {} completion", report.prompt_tokens, report.completion_tokens);
        let n = report.puzzles;
        if game24 {
            outln!(
                "samples correct {}/{} ({:.2}%)  a correct sample {}/{n}  first sample {}/{n}",
                report.samples_correct,
                report.samples,
                100.0 * report.samples_correct as f64 / report.samples.max(1) as f64,
                report.puzzles_any,
                report.puzzles_first
            );
        } else if let Some(coherency) = report.coherency {
            outln!("coherency {coherency:.2} (mean over {} of {} samples judged)", report.judged, report.samples);
        } else {
            outln!(
                "letter {:.2}%  word {:.2}%  games {} of {} samples by the reference's scorer; the log's scores: \
                 letter {:.2}%  word {:.2}%  games {}",
                100.0 * report.letter,
                100.0 * report.word,
                report.games,
                report.samples,
                100.0 * report.log_letter,
                100.0 * report.log_word,
                report.log_games
            );
        }
        if verify {
            outln!("{} of {n} inputs agree with the log on every sample", report.puzzles_agreeing);
        }
    }
    verdict(&report, verify)
}

fn import_dfs_log(file: &Path, out: Option<&Path>, verify: bool, json: bool) -> Result<()> {
    let report = import_dfs::import(file, out)?;
    say_differences(&report, verify);
    if json {
        let brief = serde_json::json!({
            "format": "crosswords_dfs",
            "puzzles": report.puzzles,
            "puzzles_agreeing": report.puzzles_agreeing,
            "prune": report.prune,
            "states": report.states,
            "letter": report.letter,
            "word": report.word,
            "games": report.games,
            "oracle_letter": report.oracle_letter,
            "oracle_word": report.oracle_word,
            "oracle_games": report.oracle_games,
            "sessions": out.map(|o| o.display().to_string()),
        });
        outln!("{brief}");
    } else {
        outln!(
            "format: crossword DFS log (the reference notebook's infoss), {} puzzles, {} states, read as tot-dfs --task \
             crosswords with {}",
            report.puzzles,
            report.states,
            if report.prune { "pruning" } else { "no pruning" }
        );
        if let Some(o) = out {
            safe_println!("wrote {} sessions to {}", report.puzzles, o.display());
        }
        outln!("tokens: the log records none");
        let n = report.puzzles;
        outln!(
            "deepest state: letter {:.1}%  word {:.1}%  games {} of {n}",
            100.0 * report.letter,
            100.0 * report.word,
            report.games
        );
        outln!(
            "best state (oracle): letter {:.1}%  word {:.1}%  games {} of {n}",
            100.0 * report.oracle_letter,
            100.0 * report.oracle_word,
            report.oracle_games
        );
        if verify {
            outln!(
                "{} of {n} puzzles agree with the log (visiting order, infos, counts, figures)",
                report.puzzles_agreeing
            );
        }
    }
    verdict(&report, verify)
}

fn import_writing_bfs_log(file: &Path, out: Option<&Path>, verify: bool, json: bool) -> Result<()> {
    let report = import_writing_bfs::import(file, out)?;
    say_differences(&report, verify);
    let run = &report.run;
    if json {
        let brief = serde_json::json!({
            "format": "writing_bfs",
            "inputs": report.inputs,
            "inputs_agreeing": report.inputs_agreeing,
            "steps": report.steps,
            "steps_agreeing": report.steps_agreeing,
            "finals_agreeing": report.finals_agreeing,
            "judged": report.judged,
            "coherency": report.coherency,
            "prompt_tokens": report.prompt_tokens,
            "completion_tokens": report.completion_tokens,
            "model": run.backend,
            "n_generate": run.n_generate,
            "n_evaluate": run.n_evaluate,
            "breadth": run.n_select,
            "temperature": run.temperature.to_string().parse::<f64>().unwrap_or_default(),
            "sessions": out.map(|o| o.display().to_string()),
        });
        outln!("{brief}");
    } else {
        let from = if run.from_file_name { "the file name" } else { "the log" };
        outln!(
            "format: creative-writing BFS log (run.py --task text --method_generate sample --method_evaluate vote), \
             read as {} at temperature {}: {} samples per state, {} votes, greedy keeping {} (from {from})",
            run.backend,
            run.temperature,
            run.n_generate,
            run.n_evaluate,
            run.n_select
        );
        if let Some(o) = out {
            safe_println!("wrote {} sessions to {}", report.inputs, o.display());
        }
        outln!("tokens: {} prompt, {} completion", report.prompt_tokens, report.completion_tokens);
        match report.coherency {
            Some(c) => outln!("coherency {c:.2} (mean over {} of {} outputs judged)", report.judged, report.inputs),
            None => outln!("coherency: the log has no judge scores (infos rs)"),
        }
        if verify {
            outln!("{} of {} steps keep the same states as the log", report.steps_agreeing, report.steps);
            outln!(
                "{} of {} inputs agree with the log on votes, outputs and coherency",
                report.inputs_agreeing,
                report.inputs
            );
        }
    }
    verdict(&report, verify)
}

/// With `--verify`, every difference on stderr, one line each, named by its puzzle or input.
fn say_differences(report: &impl VerifiedImport, verify: bool) {
    if verify {
        for line in report.difference_lines() {
            safe_eprintln!("{line}");
        }
    }
}

/// With `--verify`, one line saying how many entries differ and the first difference (exit 1).
fn verdict(report: &impl VerifiedImport, verify: bool) -> Result<()> {
    match report.verdict() {
        Err(line) if verify => Err(eyre!(line)),
        _ => Ok(()),
    }
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
        safe_println!("wrote {n} sessions to {}", out.display());
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
