//! `thoughtscope bench`: concurrent vs serial calls with simulated latency, engine
//! throughput, and the replay cursor's step and seek times.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use color_eyre::eyre::{bail, eyre, Result};

use thoughtscope::runtime::headless::{run_problems, Summary};

use super::error::usage_bail;
use super::pipe::outln;
use super::run::{setup_run, summarize};
use super::Cmd;

#[derive(clap::Subcommand, Debug)]
pub(crate) enum BenchWhat {
    /// ReTreVal against its ablations (--no-memory, --no-backtrack, --no-tools, --no-cross,
    /// --no-decompose) and Self-Refine on one sequence of problems.
    Ablation(super::ablation::AblationArgs),
    /// Several methods on the same problems: a table (success, calls, tokens, cost, wall)
    /// and a chart of success against tokens with the quality–cost frontier (`--svg`).
    Compare(super::compare::CompareArgs),
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    pub(crate) what: Option<BenchWhat>,
    /// Puzzles to run (0-based, like Python's range).
    #[arg(long, default_value = "900..910")]
    pub(crate) range: String,
    /// Simulated latency of each call for the concurrency comparison.
    #[arg(long, default_value_t = 50)]
    pub(crate) latency_ms: u64,
    /// The concurrency compared against 1.
    #[arg(long, default_value_t = 16)]
    pub(crate) concurrency: usize,
    /// Inputs in the session the replay cursor is timed on.
    #[arg(long, default_value_t = 100_000)]
    pub(crate) replay_inputs: usize,
    /// Random seeks timed.
    #[arg(long, default_value_t = 200)]
    pub(crate) replay_seeks: usize,
    /// Seed of the random seeks.
    #[arg(long, default_value_t = 7)]
    pub(crate) replay_seed: u64,
    /// Only the replay section.
    #[arg(long)]
    pub(crate) replay_only: bool,
    /// Nodes in the sampled session that replay at scale and the explorer are timed on
    /// (0 skips that section).
    #[arg(long, default_value_t = 100_000)]
    pub(crate) scale_nodes: usize,
    /// Only the replay-at-scale and explorer section.
    #[arg(long)]
    pub(crate) scale_only: bool,
    /// Rounds of key presses and timeline steps timed in the explorer.
    #[arg(long, default_value_t = 50)]
    pub(crate) explorer_rounds: usize,
    /// Replay FILE headless and print its time and memory (the bench runs this in a
    /// fresh process of its own, so the peak memory is the replay's).
    #[arg(long, hide = true, value_name = "FILE")]
    pub(crate) measure_replay: Option<PathBuf>,
}

/// Time one headless run of `args` in this process.
pub(crate) fn timed_run(args: &[&str]) -> Result<(Summary, f64)> {
    let mut full = vec!["thoughtscope", "run"];
    full.extend_from_slice(args);
    let cli = super::parse_from(full).map_err(|e| eyre!(e.to_string()))?;
    let Some(Cmd::Run(run_args)) = cli.command else { bail!("bench arguments did not parse") };
    let (setup, problems) = setup_run(&run_args)?;
    let rt = tokio::runtime::Runtime::new()?;
    let started = Instant::now();
    let results = rt.block_on(run_problems(&setup, &problems, |_| {}));
    let secs = started.elapsed().as_secs_f64();
    Ok((summarize(&setup, &results, (secs * 1000.0) as u64), secs))
}

pub(crate) fn bench(args: BenchArgs) -> Result<()> {
    if let Some(BenchWhat::Ablation(a)) = args.what {
        return super::ablation::ablation(a);
    }
    if let Some(BenchWhat::Compare(c)) = args.what {
        return super::compare::compare(c);
    }
    if !(1..=10_000_000).contains(&args.replay_inputs) {
        usage_bail!("--replay-inputs must be from 1 to 10000000, not {}", args.replay_inputs);
    }
    if args.replay_seeks > 1_000_000 {
        usage_bail!("--replay-seeks must be at most 1000000, not {}", args.replay_seeks);
    }
    if let Some(file) = &args.measure_replay {
        let m = thoughtscope::runtime::bench::measure_replay(file).map_err(|e| eyre!(e))?;
        outln!("{}", m.line());
        return Ok(());
    }
    if args.scale_nodes > 10_000_000 {
        usage_bail!("--scale-nodes must be at most 10000000, not {}", args.scale_nodes);
    }
    if !(1..=100_000).contains(&args.explorer_rounds) {
        usage_bail!("--explorer-rounds must be from 1 to 100000, not {}", args.explorer_rounds);
    }
    if args.scale_only {
        return bench_scale(&args);
    }
    if !args.replay_only {
        bench_runs(&args)?;
    }
    let dir = tempfile_dir()?;
    let result = thoughtscope::runtime::bench::replay_bench(
        &dir,
        args.replay_inputs,
        args.replay_seeks,
        args.replay_seed,
        &mut std::io::stdout(),
    );
    let _ = std::fs::remove_dir_all(&dir);
    result.map_err(|e| eyre!(e))?;
    if args.replay_only {
        return Ok(());
    }
    bench_scale(&args)
}

/// Replay at scale and the explorer on a sampled session of `--scale-nodes` nodes.
pub(crate) fn bench_scale(args: &BenchArgs) -> Result<()> {
    if args.scale_nodes == 0 {
        return Ok(());
    }
    let dir = tempfile_dir()?;
    let path = dir.join("bench-scale.jsonl");
    // The headless replay runs in a fresh process of this binary, so its peak memory is its own.
    let child = |file: &std::path::Path| -> std::result::Result<String, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to run the replay: {e}"))?;
        let output = std::process::Command::new(exe)
            .arg("bench")
            .arg("--measure-replay")
            .arg(file)
            .output()
            .map_err(|e| format!("cannot run the replay measurement: {e}"))?;
        if !output.status.success() {
            return Err(format!("the replay measurement failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let mut out = std::io::stdout();
    let result = thoughtscope::runtime::bench::replay_scale_bench(&path, args.scale_nodes, &child, &mut out)
        .and_then(|()| thoughtscope::tui::bench::explorer_bench(&path, args.explorer_rounds, &mut out));
    let _ = std::fs::remove_dir_all(&dir);
    result.map_err(|e| eyre!(e))
}

/// A fresh directory under the system's temporary directory, for the bench's session.
pub(crate) fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("thoughtscope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

pub(crate) fn bench_runs(args: &BenchArgs) -> Result<()> {
    let latency = args.latency_ms.to_string();
    let c = args.concurrency.to_string();
    outln!("concurrency: tot-bfs on game24 {} with --sim-latency-ms {latency}", args.range);
    let (serial, t1) = timed_run(&["--range", &args.range, "--sim-latency-ms", &latency, "--concurrency", "1"])?;
    let (parallel, tn) = timed_run(&["--range", &args.range, "--sim-latency-ms", &latency, "--concurrency", &c])?;
    outln!("  --concurrency 1   {t1:8.2} s  ({} calls)", serial.llm_calls);
    outln!("  --concurrency {c:<3} {tn:8.2} s  ({} calls)", parallel.llm_calls);
    outln!(
        "  speed-up {:.1}x; summaries identical apart from time: {}",
        t1 / tn,
        serial.without_time() == parallel.without_time()
    );
    outln!("engine throughput: tot-bfs on game24 0..200, sim without latency");
    let (s, t) = timed_run(&["--range", "0..200", "--concurrency", "1"])?;
    let calls = (s.llm_calls + s.cache_hits) as f64;
    outln!("  {:.0} puzzles/s, {:.0} replies/s ({} replies in {t:.2} s)", s.n as f64 / t, calls / t, calls);
    Ok(())
}
