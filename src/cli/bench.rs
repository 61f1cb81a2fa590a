//! `thoughtscope bench`: concurrent vs serial calls with simulated latency, engine
//! throughput, and the replay cursor's step and seek times.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use color_eyre::eyre::{eyre, Result};

use thoughtscope::engine::sim::SimConfig;
use thoughtscope::llm::limit::rounds_bound;
use thoughtscope::llm::sim::SimProvider;
use thoughtscope::llm::testserver::{LatencyServer, Registering, Registry, ServerOptions};
use thoughtscope::runtime::headless::{run_problems, RunSetup, Summary};
use thoughtscope::tasks::SimPlayers;

use super::run::summarize;

use super::error::usage_bail;
use super::pipe::outln;

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
    /// Latency of the local OpenAI-compatible server the HTTP section runs against.
    #[arg(long, default_value_t = 100)]
    pub(crate) http_latency_ms: u64,
    /// --concurrency of the HTTP section's runs.
    #[arg(long, default_value_t = 64)]
    pub(crate) http_concurrency: usize,
    /// Puzzles of each HTTP run (from puzzle 900), comma-separated.
    #[arg(long, default_value = "5,100", value_delimiter = ',')]
    pub(crate) http_puzzles: Vec<usize>,
    /// Only the HTTP section (and the per-call overhead).
    #[arg(long)]
    pub(crate) http_only: bool,
    /// Leave the HTTP section out.
    #[arg(long)]
    pub(crate) no_http: bool,
}

/// Time one headless run of `args` in this process.
pub(crate) fn timed_run(args: &[&str]) -> Result<(Summary, f64)> {
    timed_run_with(args, |_| {})
}

/// The setup and problems `thoughtscope run ARGS` would have.
fn run_setup(args: &[&str]) -> Result<(RunSetup, Vec<thoughtscope::tasks::Problem>)> {
    super::variants::prepare(args)
}

/// [`timed_run`], with `adjust` changing the setup first.
fn timed_run_with(args: &[&str], adjust: impl FnOnce(&mut RunSetup)) -> Result<(Summary, f64)> {
    let (_, summary, secs) = super::variants::run_variant(args, adjust)?;
    Ok((summary, secs))
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
    if args.http_only {
        bench_http(&args)?;
        bench_serve(&args)?;
        return bench_overhead();
    }
    if !args.replay_only {
        bench_runs(&args)?;
        bench_overhead()?;
        if !args.no_http {
            bench_http(&args)?;
            bench_serve(&args)?;
        }
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

/// The goals of the HTTP section: wall over its bound, for few and for many puzzles.
const HTTP_GOAL_FEW: f64 = 1.2;
const HTTP_GOAL_MANY: f64 = 1.5;
/// The driver's own CPU per call.
const OVERHEAD_GOAL_US: f64 = 100.0;

/// Whole tot-bfs runs over real HTTP against a local server answering after a set
/// latency (with the simulated model's answers), honouring `n` and ignoring it, each
/// against its bound: the longest of the critical path (the same run on the in-process
/// sim with unbounded concurrency and the same latency), requests ÷ concurrency ×
/// latency, and the slot-limited rounds (see [`rounds_bound`]: rounds of several
/// problems that meet need more than one round trip when their requests outnumber
/// the slots, which neither of the other two counts).
pub(crate) fn bench_http(args: &BenchArgs) -> Result<()> {
    if args.http_concurrency == 0 || args.http_puzzles.iter().any(|&n| n == 0 || n > 400) {
        usage_bail!("--http-concurrency must be at least 1 and --http-puzzles from 1 to 400 each");
    }
    let latency = args.http_latency_ms;
    let c = args.http_concurrency;
    outln!(
        "http: tot-bfs on game24 against a local OpenAI-compatible server answering after {latency} ms, --concurrency {c}"
    );
    let rt = tokio::runtime::Runtime::new()?;
    // The first small run's lead over the reference's loop, which the empty-reply run is held to.
    let mut clean_lead = None;
    for honour_n in [true, false] {
        let registry = Registry::default();
        let options = ServerOptions::new(Duration::from_millis(latency), honour_n);
        let server =
            LatencyServer::start(options, registry.clone(), SimProvider::new(SimConfig::default(), &SimPlayers))
                .map_err(|e| eyre!("cannot start the local server: {e}"))?;
        outln!("  server {} n (one request per sample where ignored):", if honour_n { "honours" } else { "ignores" });
        for &n in &args.http_puzzles {
            let range = format!("900..{}", 900 + n);
            let c_text = c.to_string();
            let http_args = http_run_args(&range, &server.url, &c_text);
            let before = server.requests();
            let (mut setup, problems) = run_setup(&http_args)?;
            let inner = Arc::clone(&setup.provider);
            setup.provider = Arc::new(Registering { inner, registry: registry.clone() });
            let started = Instant::now();
            let results = rt.block_on(run_problems(&setup, &problems, |_| {}));
            let secs = started.elapsed().as_secs_f64();
            let summary = summarize(&setup, &results, (secs * 1000.0) as u64);
            let requests = server.requests() - before;
            // Requests by round of each problem; the first problem goes alone for one round trip.
            let units: Vec<Vec<u64>> = results
                .iter()
                .map(|r| r.rounds.iter().map(|d| if honour_n { d.calls } else { d.samples }).collect())
                .collect();
            let starts: Vec<u64> = (0..units.len()).map(|p| u64::from(p > 0)).collect();
            let round_trips = rounds_bound(&units, &starts, c);
            let slotted = round_trips as f64 * latency as f64 / 1000.0;
            // The critical path: the same search, every call at once, the same latency.
            let latency_text = latency.to_string();
            let (_, critical) =
                timed_run(&["--range", &range, "--sim-latency-ms", &latency_text, "--concurrency", "1024"])?;
            let spread = requests as f64 / c as f64 * latency as f64 / 1000.0;
            let bound = critical.max(spread).max(slotted);
            let goal = if n <= 5 { HTTP_GOAL_FEW } else { HTTP_GOAL_MANY };
            outln!(
                "    {n:>3} puzzles  wall {secs:6.2} s  {} calls ({requests} requests, {} solved)  critical path {critical:.2} s  \
                 requests÷c×latency {spread:.2} s  slot-limited rounds {slotted:.2} s ({round_trips} round trips)",
                summary.llm_calls,
                summary.solved,
            );
            outln!(
                "                 wall / bound {:.2}x (goal ≤ {goal}x)   wall / max(critical path, requests÷c×latency) {:.2}x",
                secs / bound,
                secs / critical.max(spread)
            );
            if summary.failed_calls > 0 {
                outln!("    ({} calls failed: {:?})", summary.failed_calls, summary.stopped);
            }
            if honour_n && n <= 5 {
                let (sequential, reference_secs) = reference_run(&rt, &http_args, options)?;
                outln!(
                    "                 one problem after another (the reference's order, its value cache shared): {sequential} \
                     requests; side by side {requests} ({:.2}x)",
                    requests as f64 / sequential.max(1) as f64
                );
                let lead = reference_secs / secs;
                outln!("                 one call at a time, as the reference's loop: {reference_secs:.2} s; lead {lead:.1}x");
                if clean_lead.is_none() {
                    clean_lead = Some((n, lead, secs));
                }
            }
        }
        drop(server);
    }
    if let Some((n, lead, wall)) = clean_lead {
        bench_http_empty(&rt, args, n, (lead, wall))?;
    }
    drop(rt);
    Ok(())
}

/// 1 in this many proposals answered empty in the empty-reply run.
const EMPTY_PROPOSALS: u32 = 5;

/// The same small run against a server answering 1 in [`EMPTY_PROPOSALS`] proposals with
/// empty content and `finish_reason: "stop"`: an empty reply is an answer (counted as
/// unreadable), so the requests stay the reference's loop's and the lead over it the clean
/// server's (`clean`: its lead and wall, for `n` puzzles).
fn bench_http_empty(rt: &tokio::runtime::Runtime, args: &BenchArgs, n: usize, clean: (f64, f64)) -> Result<()> {
    let (clean_lead, clean_wall) = clean;
    let latency = args.http_latency_ms;
    let options =
        ServerOptions { empty_proposals: EMPTY_PROPOSALS, ..ServerOptions::new(Duration::from_millis(latency), true) };
    let registry = Registry::default();
    let server = LatencyServer::start(options, registry.clone(), SimProvider::new(SimConfig::default(), &SimPlayers))
        .map_err(|e| eyre!("cannot start the local server: {e}"))?;
    outln!("  server honours n and answers 1 in {EMPTY_PROPOSALS} proposals empty (finish reason \"stop\"):");
    let range = format!("900..{}", 900 + n);
    let c_text = args.http_concurrency.to_string();
    let http_args = http_run_args(&range, &server.url, &c_text);
    let (setup, results, secs) = registered_run(rt, &http_args, registry)?;
    let summary = summarize(&setup, &results, (secs * 1000.0) as u64);
    let requests = server.requests();
    let unreadable = summary.reply_health.proposals.bad;
    outln!(
        "    {n:>3} puzzles  wall {secs:6.2} s  {} calls ({requests} requests, {} solved, {} failed)  \
         proposal lines unreadable {unreadable}/{}",
        summary.llm_calls,
        summary.solved,
        summary.failed_calls,
        summary.reply_health.proposals.n,
    );
    let (reference, reference_secs) = reference_run(rt, &http_args, options)?;
    drop(server);
    let lead = reference_secs / secs;
    outln!(
        "                 one problem after another, one call at a time, as the reference's loop: {reference} requests in \
         {reference_secs:.2} s"
    );
    outln!(
        "                 requests {requests} against the reference's {reference} ({:.2}x, goal ≤ 1x); lead {lead:.1}x \
         against the clean server's {clean_lead:.1}x ({:.2}x of it, goal ≥ 0.9x); wall {:.2}x the clean server's",
        requests as f64 / reference.max(1) as f64,
        lead / clean_lead,
        secs / clean_wall
    );
    Ok(())
}

/// The arguments of an HTTP section run of the puzzles `range` against the server at `url`.
fn http_run_args<'a>(range: &'a str, url: &'a str, concurrency: &'a str) -> [&'a str; 14] {
    [
        "--range",
        range,
        "--provider",
        "openai",
        "--base-url",
        url,
        "--model",
        "bench-model",
        "--concurrency",
        concurrency,
        "--timeout",
        "120",
        // The reference's prompts, so the requests are the reference's search's.
        "--prompt-style",
        "reference",
    ]
}

/// Requests per second `serve` sustains against the HTTP section's latency, with io and
/// cot-sc, against the same requests sent to the upstream directly.
fn bench_serve(args: &BenchArgs) -> Result<()> {
    let mut out = std::io::stdout();
    thoughtscope::serve::bench::serve_bench(args.http_latency_ms, 200, 16, &mut out).map_err(|e| eyre!(e))
}

/// The run `args` names, its calls registered in `registry`: its set-up, results and wall
/// time in seconds.
fn registered_run(
    rt: &tokio::runtime::Runtime,
    args: &[&str],
    registry: Registry,
) -> Result<(thoughtscope::runtime::headless::RunSetup, Vec<thoughtscope::runtime::headless::ProblemResult>, f64)> {
    let (mut setup, problems) = run_setup(args)?;
    let inner = Arc::clone(&setup.provider);
    setup.provider = Arc::new(Registering { inner, registry });
    let started = Instant::now();
    let results = rt.block_on(run_problems(&setup, &problems, |_| {}));
    Ok((setup, results, started.elapsed().as_secs_f64()))
}

/// The requests the run `http_args` names makes with its problems one after another and
/// one call at a time, as the reference's loop makes them, against a fresh server answering
/// as `options` say (the same seeded answers), and the time it takes: the count side-by-side
/// runs are held to, and the time their lead is measured against.
fn reference_run(rt: &tokio::runtime::Runtime, http_args: &[&str], options: ServerOptions) -> Result<(u64, f64)> {
    let registry = Registry::default();
    let server = LatencyServer::start(options, registry.clone(), SimProvider::new(SimConfig::default(), &SimPlayers))
        .map_err(|e| eyre!("cannot start the local server: {e}"))?;
    let mut args: Vec<&str> = http_args.to_vec();
    let at = |flag: &str, args: &[&str]| args.iter().position(|a| *a == flag).map(|i| i + 1);
    if let Some(i) = at("--base-url", &args) {
        args[i] = &server.url;
    }
    if let Some(i) = at("--concurrency", &args) {
        args[i] = "1";
    }
    let (_, results, secs) = registered_run(rt, &args, registry)?;
    if results.iter().any(|r| r.failed_calls > 0) {
        return Err(eyre!("the one-after-another run had failed calls"));
    }
    Ok((server.requests(), secs))
}

/// The driver's CPU per call: a tot-bfs run on the sim without latency through the
/// driver, against the same problems fed synchronously (engine and sim alone).
pub(crate) fn bench_overhead() -> Result<()> {
    let args = ["--range", "0..300", "--concurrency", "16"];
    let cpu = thoughtscope::runtime::bench::cpu_seconds;
    let Some(start) = cpu() else {
        outln!("per-call overhead: skipped (no /proc/self/stat to read CPU time from)");
        return Ok(());
    };
    let (summary, _) = timed_run(&args)?;
    let driven = cpu().unwrap_or(start) - start;
    let replies = summary.llm_calls + summary.cache_hits;
    let (setup, problems) = run_setup(&args)?;
    let before = cpu().unwrap_or(0.0);
    let synced = thoughtscope::runtime::bench::sync_sim_replies(&setup, &problems).map_err(|e| eyre!(e))?;
    let sync_cpu = cpu().unwrap_or(before) - before;
    let per_driven = driven / replies.max(1) as f64 * 1e6;
    let per_sync = sync_cpu / synced.max(1) as f64 * 1e6;
    let overhead = (per_driven - per_sync).max(0.0);
    outln!("per-call overhead: tot-bfs on game24 0..300, sim without latency, --concurrency 16");
    outln!("  through the driver {per_driven:7.1} µs CPU per reply ({replies} replies, {driven:.2} s CPU)");
    outln!("  engine and sim alone {per_sync:5.1} µs CPU per reply ({synced} replies, {sync_cpu:.2} s CPU)");
    outln!(
        "  the driver's own {overhead:7.1} µs per call   goal ≤ {OVERHEAD_GOAL_US} µs: {:.2}x of it",
        overhead / OVERHEAD_GOAL_US
    );
    Ok(())
}
