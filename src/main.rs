//! The `thoughtscope` command line.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use color_eyre::eyre::{bail, eyre, Result, WrapErr};

use thoughtscope::config::{data_dir, Config, ParamPatch, RunDefaults};
use thoughtscope::engine::Effect;
use thoughtscope::engine::ToolMode;
use thoughtscope::import::{react as import_react, tot as import_tot};
use thoughtscope::llm::config::ProviderArgs;
use thoughtscope::llm::sim::{SimConfig, SimProvider, SimRates};
use thoughtscope::llm::Provider;
use thoughtscope::runtime::headless::header_for;
use thoughtscope::runtime::headless::{run_problems, ProblemResult, RunSetup, Summary};
use thoughtscope::session::{replay, Session};
use thoughtscope::tasks::{self, Problem, TaskOptions};
use thoughtscope::tools::choice::ToolArgs;
use thoughtscope::tui::app::{App, Setup as AppSetup};

#[derive(Parser, Debug)]
#[command(
    name = "thoughtscope",
    version,
    about = "A terminal workbench for LLM reasoning searches (Tree of Thoughts, ReAct, ReTreVal)"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
}

#[derive(Subcommand, Debug)]
enum Cmd {
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

#[derive(Args, Debug)]
struct BenchArgs {
    /// Puzzles to run (0-based, like Python's range).
    #[arg(long, default_value = "900..910")]
    range: String,
    /// Simulated latency of each call for the concurrency comparison.
    #[arg(long, default_value_t = 50)]
    latency_ms: u64,
    /// The concurrency compared against 1.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Inputs in the session the replay cursor is timed on.
    #[arg(long, default_value_t = 100_000)]
    replay_inputs: usize,
    /// Random seeks timed.
    #[arg(long, default_value_t = 200)]
    replay_seeks: usize,
    /// Seed of the random seeks.
    #[arg(long, default_value_t = 7)]
    replay_seed: u64,
    /// Only the replay section.
    #[arg(long)]
    replay_only: bool,
}

#[derive(Args, Debug, Clone, Default)]
struct RunArgs {
    /// Task to solve [default: game24].
    #[arg(long)]
    task: Option<String>,
    /// Model provider: sim (offline default), openai, anthropic, replay, or a profile (ollama, vllm, llamacpp, ...).
    #[arg(long)]
    provider: Option<String>,
    /// Problems by 0-based index, like Python's range: `900..1000`, `..10`, `5`.
    #[arg(long, conflicts_with = "input")]
    range: Option<String>,
    /// One problem written out, e.g. "4 9 10 13".
    #[arg(long)]
    input: Option<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Write one JSON line per problem to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Record sessions: a file for one problem, a directory for several.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Directory of prompt templates overriding the built-in ones (same file names).
    #[arg(long)]
    prompts: Option<PathBuf>,
    /// hotpotqa / fever: the questions (HotpotQA JSON, FEVER JSONL, or ReAct trajectory text).
    #[arg(long)]
    data: Option<PathBuf>,
    #[command(flatten)]
    tools: ToolArgs,
    #[command(flatten)]
    search: ParamPatch,
    #[command(flatten)]
    sim: SimArgs,
    #[command(flatten)]
    connect: ProviderArgs,
    /// `--provider replay`: the session file (or directory) whose recorded replies answer.
    #[arg(long)]
    replay_from: Option<PathBuf>,
    /// Most model calls in flight at once [default: 8].
    #[arg(long)]
    concurrency: Option<usize>,
    /// Colour theme for the explorer (dark, light, high-contrast, or a user theme).
    #[arg(long)]
    theme: Option<String>,
}

/// The simulated model's error model (see `thoughtscope::llm::sim`).
#[derive(Args, Debug, Clone, Default)]
struct SimArgs {
    /// One dial on every sim error rate: 0 = a perfect model, 1 = the calibrated default.
    #[arg(long)]
    sim_noise: Option<f64>,
    /// Base rate of a proposed step with wrong arithmetic.
    #[arg(long)]
    sim_slip: Option<f64>,
    /// Base rate of a proposal that misses every step keeping the puzzle solvable.
    #[arg(long)]
    sim_miss: Option<f64>,
    /// Base rate of an evaluator sample naming the wrong class.
    #[arg(long)]
    sim_misjudge: Option<f64>,
    /// Base rate of a wrong final expression written from right steps.
    #[arg(long)]
    sim_answer: Option<f64>,
    /// Base rate of a wrong direct (io) answer.
    #[arg(long)]
    sim_io: Option<f64>,
    /// Base rate of a chain of thought going wrong at its first step.
    #[arg(long)]
    sim_cot: Option<f64>,
    /// Each sim call takes this long, so concurrency can be seen offline.
    #[arg(long, default_value_t = 0)]
    sim_latency_ms: u64,
}

#[derive(Args, Debug)]
struct ReplayArgs {
    /// A session file, or a directory of them.
    path: PathBuf,
    /// Rebuild without the terminal UI and print a summary.
    #[arg(long)]
    headless: bool,
    /// Colour theme for the explorer.
    #[arg(long)]
    theme: Option<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Prompt template directory the run used, if not the built-in one.
    #[arg(long)]
    prompts: Option<PathBuf>,
    #[command(flatten)]
    fork: ForkArgs,
}

/// Who answers a live run forked from a replay in the explorer (`f`).
#[derive(Args, Debug, Clone, Default)]
struct ForkArgs {
    /// The model of forks: sim (the default: the session's own sim settings) or a real provider.
    #[arg(long)]
    provider: Option<String>,
    #[command(flatten)]
    connect: ProviderArgs,
    /// Tools of forks: actions the session recorded are answered from it, new ones here.
    #[command(flatten)]
    tools: ToolArgs,
}

#[derive(Subcommand, Debug)]
enum ImportCmd {
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
        /// Re-run our tot-bfs on the log's replies and report agreement with its selections.
        #[arg(long)]
        verify: bool,
        #[arg(long)]
        json: bool,
    },
}

fn main() -> Result<()> {
    color_eyre::install()?;
    let cli = Cli::parse();
    match cli.command {
        Some(Cmd::Run(args)) => run(*args),
        Some(Cmd::Replay(args)) => replay_cmd(*args),
        Some(Cmd::Import(ImportCmd::TotLog { file, out, verify, json })) => {
            import_tot_log(&file, out.as_deref(), verify, json)
        }
        Some(Cmd::Import(ImportCmd::ReactText { file, out, json })) => import_react_text(&file, &out, json),
        Some(Cmd::Bench(args)) => bench(args),
        Some(Cmd::Tui(args)) => tui_live(*args),
        Some(Cmd::Demo { which, theme }) => demo(which, theme),
        Some(Cmd::RecordDemos { dir }) => thoughtscope::demos::record_all(&dir).map_err(|e| eyre!(e)),
        None => tui_live(RunArgs::default()),
    }
}

/// Time one headless run of `args` in this process.
fn timed_run(args: &[&str]) -> Result<(Summary, f64)> {
    let mut full = vec!["thoughtscope", "run"];
    full.extend_from_slice(args);
    let cli = Cli::try_parse_from(full).map_err(|e| eyre!(e.to_string()))?;
    let Some(Cmd::Run(run_args)) = cli.command else { bail!("bench arguments did not parse") };
    let (setup, problems) = setup_run(&run_args)?;
    let rt = tokio::runtime::Runtime::new()?;
    let started = Instant::now();
    let results = rt.block_on(run_problems(&setup, &problems, |_| {}));
    let secs = started.elapsed().as_secs_f64();
    Ok((summarize(&setup, &results, (secs * 1000.0) as u64), secs))
}

fn bench(args: BenchArgs) -> Result<()> {
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
    result.map_err(|e| eyre!(e))
}

/// A fresh directory under the system's temporary directory, for the bench's session.
fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("thoughtscope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn bench_runs(args: &BenchArgs) -> Result<()> {
    let latency = args.latency_ms.to_string();
    let c = args.concurrency.to_string();
    println!("concurrency: tot-bfs on game24 {} with --sim-latency-ms {latency}", args.range);
    let (serial, t1) = timed_run(&["--range", &args.range, "--sim-latency-ms", &latency, "--concurrency", "1"])?;
    let (parallel, tn) = timed_run(&["--range", &args.range, "--sim-latency-ms", &latency, "--concurrency", &c])?;
    println!("  --concurrency 1   {t1:8.2} s  ({} calls)", serial.llm_calls);
    println!("  --concurrency {c:<3} {tn:8.2} s  ({} calls)", parallel.llm_calls);
    println!(
        "  speed-up {:.1}x; summaries identical apart from time: {}",
        t1 / tn,
        serial.without_time() == parallel.without_time()
    );
    println!("engine throughput: tot-bfs on game24 0..200, sim without latency");
    let (s, t) = timed_run(&["--range", "0..200", "--concurrency", "1"])?;
    let calls = (s.llm_calls + s.cache_hits) as f64;
    println!("  {:.0} puzzles/s, {:.0} replies/s ({} replies in {t:.2} s)", s.n as f64 / t, calls / t, calls);
    Ok(())
}

fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn open_tui(
    mut app: App,
    provider: Arc<dyn Provider>,
    concurrency: usize,
    notes: Vec<String>,
    initial: Vec<Effect>,
) -> Result<()> {
    if !std::io::stdout().is_terminal() {
        bail!("the explorer needs a terminal; for scripts use `thoughtscope run ... --json` or `replay --headless`");
    }
    app.no_color = no_color();
    if let Some(first) = notes.first() {
        app.message =
            Some(if notes.len() > 1 { format!("{first} (+{} more)", notes.len() - 1) } else { first.clone() });
    }
    let rt = tokio::runtime::Runtime::new()?;
    let app = rt.block_on(thoughtscope::tui::run(app, provider, concurrency, initial))?;
    for n in &notes {
        eprintln!("warning: {n}");
    }
    if let Some(path) = app.session_path() {
        if !app.is_replay() {
            println!("session recorded in {}", path.display());
        }
    }
    Ok(())
}

fn tui_live(mut args: RunArgs) -> Result<()> {
    let cfg = config(args.connect.config.as_deref());
    if args.input.is_none() && args.range.is_none() {
        // Each task names the problem it opens on (Game of 24: the paper's first test puzzle).
        let name = args.task.as_deref().or(cfg.defaults.task.as_deref()).unwrap_or(tasks::default_task().name);
        let entry = tasks::find(name).ok_or_else(|| tasks::TaskError::Unknown(name.to_string()))?;
        args.range = Some(entry.info.default_problem.to_string());
    }
    let (setup, problems) = setup_run_with(&args, &cfg)?;
    let Some(problem) = problems.first() else { bail!("no problem to open") };
    let mut notes = Vec::new();
    let (keymap, themes, theme) = thoughtscope::tui::settings::ui_settings(&cfg, args.theme.clone(), &mut notes);
    let app_setup = AppSetup {
        task: Arc::clone(&setup.task),
        prompts: args.prompts.clone(),
        header: header_for(&setup, problem),
        sessions_dir: args.record.clone().unwrap_or_else(|| data_dir().join("sessions")),
        limits: setup.limits.clone(),
    };
    let app = App::live(app_setup, problem, keymap, themes, &theme);
    open_tui(app, Arc::clone(&setup.provider), setup.concurrency, notes, Vec::new())
}

fn tui_replay(session: Session, theme: Option<String>, prompts: Option<PathBuf>, fork: &ForkArgs) -> Result<()> {
    let cfg = config(fork.connect.config.as_deref());
    let mut notes: Vec<String> = session.warnings.clone();
    let (keymap, themes, theme) = thoughtscope::tui::settings::ui_settings(&cfg, theme, &mut notes);
    let knowledge = fork.tools.knowledge(&mut notes)?;
    let options = TaskOptions { prompts: prompts.clone(), data: None, knowledge };
    let task = tasks::for_header(&session.header, &options)?;
    // A fork continues with the simulated model the session used (or the default one),
    // unless a provider is named.
    let provider: Arc<dyn Provider> = match fork.provider.as_deref() {
        None | Some("sim") => Arc::new(SimProvider::new(session.header.sim.clone().unwrap_or_default())),
        Some(name) => {
            thoughtscope::llm::config::build(name, &fork.connect, cfg.providers()?, session.header.params.seed)?
        }
    };
    // A fork spends like a live run: the same budgets, price and cache flags.
    let limits = thoughtscope::runtime::headless::RunLimits::from_args(&fork.connect, provider.as_ref())?;
    let app_setup =
        AppSetup { task, prompts, header: session.header.clone(), sessions_dir: data_dir().join("sessions"), limits };
    let app = App::replay(app_setup, session, keymap, themes, &theme).map_err(|e| eyre!(e))?;
    open_tui(app, provider, cfg.defaults.concurrency.unwrap_or(8), notes, Vec::new())
}

fn demo(which: Option<usize>, theme: Option<String>) -> Result<()> {
    let list: Vec<(usize, &thoughtscope::demos::Demo, Session)> = thoughtscope::demos::DEMOS
        .iter()
        .enumerate()
        .map(|(i, d)| thoughtscope::demos::load(d).map(|s| (i + 1, d, s)).map_err(|e| eyre!(e)))
        .collect::<Result<_>>()?;
    let chosen = match which {
        Some(n) => n,
        None => {
            for (n, d, s) in &list {
                println!("{n}. {:<22} {}", d.file, s.header.note.clone().unwrap_or_default());
            }
            if !std::io::stdin().is_terminal() {
                println!("open one with: thoughtscope demo N");
                return Ok(());
            }
            print!("open which demo? [1-{}] ", list.len());
            std::io::Write::flush(&mut std::io::stdout())?;
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            match line.trim().parse::<usize>() {
                Ok(n) => n,
                Err(_) => return Ok(()),
            }
        }
    };
    let Some((_, _, session)) = list.into_iter().find(|(n, _, _)| *n == chosen) else {
        bail!("there is no demo {chosen}: run `thoughtscope demo` for the list");
    };
    tui_replay(session, theme, None, &ForkArgs::default())
}

fn sim_config(args: &RunArgs, d: &RunDefaults, seed: u64) -> SimConfig {
    let base = SimRates::default();
    let s = &args.sim;
    SimConfig {
        seed,
        noise: s.sim_noise.or(d.sim_noise).unwrap_or(1.0).max(0.0),
        rates: SimRates {
            slip: s.sim_slip.unwrap_or(base.slip),
            miss: s.sim_miss.unwrap_or(base.miss),
            misjudge: s.sim_misjudge.unwrap_or(base.misjudge),
            answer: s.sim_answer.unwrap_or(base.answer),
            io: s.sim_io.unwrap_or(base.io),
            cot: s.sim_cot.unwrap_or(base.cot),
        },
        latency_ms: s.sim_latency_ms,
    }
}

/// The config file (`--config FILE` or the usual place), with its warnings printed once.
fn config(explicit: Option<&Path>) -> Config {
    let (config, warnings) = Config::load(explicit);
    for w in warnings {
        eprintln!("warning: {w}");
    }
    config
}

fn setup_run(args: &RunArgs) -> Result<(RunSetup, Vec<Problem>)> {
    setup_run_with(args, &config(args.connect.config.as_deref()))
}

fn setup_run_with(args: &RunArgs, cfg: &Config) -> Result<(RunSetup, Vec<Problem>)> {
    let d = &cfg.defaults;
    let task_name = args.task.clone().or(d.task.clone()).unwrap_or_else(|| tasks::default_task().name.into());
    let mut warnings = Vec::new();
    let knowledge = args.tools.knowledge(&mut warnings)?;
    let options = TaskOptions { prompts: args.prompts.clone(), data: args.data.clone(), knowledge };
    let task = tasks::build(&task_name, &options, &mut warnings)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    if task.problem_count() == 0 && args.input.is_none() {
        bail!("{task_name} has no questions of its own: name a data file with --data FILE (or one with --input)");
    }
    let problems: Vec<Problem> = match (&args.input, &args.range) {
        (Some(input), _) => vec![task.parse_input(input)?],
        (None, Some(range)) => {
            let r = tasks::parse_range(range, task.problem_count())?;
            r.filter_map(|i| task.problem(i)).collect()
        }
        (None, None) => bail!("say which problems: --range A..B (0-based, like Python) or --input \"4 9 10 13\""),
    };
    let params = ParamPatch::merge(&args.search, &d.search);
    let t = params.majority_threshold;
    if !(0.0..=1.0).contains(&t) {
        bail!("--majority-threshold is a share of the samples, from 0 to 1 (0.5 = the ReAct paper's n/2), not {t}");
    }
    let react_task = task.tools().is_some();
    match (params.method, react_task) {
        (
            thoughtscope::engine::methods::react::KIND
            | thoughtscope::engine::methods::hybrid::REACT_COT_SC
            | thoughtscope::engine::methods::hybrid::COT_SC_REACT,
            false,
        ) => {
            bail!(
                "--method {} needs a task with tools (qa-demo, hotpotqa, fever); {task_name} has none",
                params.method.label()
            )
        }
        (method, true) if method.info().tree_search => {
            bail!(
                "{task_name} is answered with react, cot, cot-sc, io or the hybrids react-cot-sc and cot-sc-react; \
                 tree search over its steps is not defined"
            )
        }
        _ => {}
    }
    let s = &args.search;
    if (s.uct_c.is_some() || s.iterations.is_some() || s.rollout_depth.is_some())
        && params.method != thoughtscope::engine::methods::mcts::KIND
    {
        bail!("--uct-c, --iterations and --rollout-depth are for --method mcts (the method is {})", params.method);
    }
    if let Some(c) = s.uct_c.filter(|c| !(c.is_finite() && *c >= 0.0 && *c <= 100.0)) {
        bail!("--uct-c is the exploration constant, a number from 0 to 100 (about 1 is usual), not {c}");
    }
    if s.iterations.is_some_and(|n| n == 0 || n > 100_000) {
        bail!("--iterations must be from 1 to 100000");
    }
    if s.rollout_depth.is_some_and(|d| d > 100) {
        bail!("--rollout-depth must be at most 100");
    }
    if args.search.tool_mode == Some(ToolMode::Native) && !params.method.has_react_steps() {
        bail!("--tool-mode is for --method react and its hybrids (the method is {})", params.method.label());
    }
    let provider_name = args.provider.clone().or(d.provider.clone()).unwrap_or_else(|| "sim".into());
    let (provider, sim): (Arc<dyn Provider>, Option<SimConfig>) = match provider_name.as_str() {
        "sim" if !task.info().sim_plays => {
            let plays: Vec<&str> = tasks::REGISTRY.iter().filter(|e| e.info.sim_plays).map(|e| e.info.name).collect();
            bail!("the sim provider plays only {}; run {task_name} with a model (--provider ...)", plays.join(" and "))
        }
        "sim" => {
            let cfg = sim_config(args, d, params.seed);
            (Arc::new(SimProvider::new(cfg.clone())), Some(cfg))
        }
        "replay" => {
            let from =
                args.replay_from.as_deref().ok_or_else(|| eyre!("--provider replay needs --replay-from SESSION"))?;
            (Arc::new(thoughtscope::llm::replay::ReplayProvider::load(from)?), None)
        }
        name => (thoughtscope::llm::config::build(name, &args.connect, cfg.providers()?, params.seed)?, None),
    };
    let concurrency = args.concurrency.or(d.concurrency).unwrap_or(8);
    if concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let limits = thoughtscope::runtime::headless::RunLimits::from_args(&args.connect, provider.as_ref())?;
    let setup = RunSetup { task, params, provider, sim, concurrency, record: args.record.clone(), limits };
    Ok((setup, problems))
}

fn summarize(setup: &RunSetup, results: &[ProblemResult], wall_ms: u64) -> Summary {
    Summary::from_results(
        setup.task.name(),
        &setup.params,
        setup.provider.name(),
        setup.provider.model(),
        setup.provider.simulated(),
        results,
        wall_ms,
    )
    .priced(setup.limits.price.as_ref())
}

fn print_summary(s: &Summary, json: bool) {
    if json {
        println!("{}", serde_json::to_string(s).unwrap_or_default());
        return;
    }
    let label = if s.simulated { format!("{} [simulated]", s.model) } else { s.model.clone() };
    let method = match &s.tool_mode {
        Some(mode) => format!("{} (tool mode {mode})", s.method),
        None => s.method.clone(),
    };
    println!("task {}  method {method}  provider {}  model {}", s.task, s.provider, label);
    println!(
        "solved {}/{} ({:.1}%)  any final path correct {}/{}",
        s.solved,
        s.n,
        100.0 * s.success_rate,
        s.solved_any,
        s.n
    );
    if let (Some(em), Some(f1)) = (s.em, s.f1) {
        println!(
            "em {em}/{}  f1 {f1:.3}  mean steps {:.1}  bad calls {}  tool calls {}",
            s.n,
            s.mean_steps.unwrap_or(0.0),
            s.bad_calls.unwrap_or(0),
            s.tool_calls.unwrap_or(0)
        );
    }
    if let Some(parts) = &s.answered_by {
        let parts: Vec<String> = parts.iter().map(|(part, n)| format!("{part} {n}")).collect();
        println!("answered by {}", if parts.is_empty() { "none".to_string() } else { parts.join(", ") });
    }
    if let Some(a) = s.mean_sample_accuracy {
        println!("mean correct per sample {:.1}%  best of k {}/{}", 100.0 * a, s.solved_any, s.n);
    }
    println!(
        "calls {}  cache hits {}  tokens {} prompt + {} completion  {} ms",
        s.llm_calls, s.cache_hits, s.prompt_tokens, s.completion_tokens, s.wall_ms
    );
    if s.failed_calls > 0 || s.cost_usd.is_some() {
        let cost = s.cost_usd.map(|c| format!("cost ${c:.4}  ")).unwrap_or_default();
        println!("{cost}failed calls {}", s.failed_calls);
    }
    if let Some(reason) = &s.stopped {
        println!("stopped early: {reason}");
    }
}

fn run(args: RunArgs) -> Result<()> {
    let (setup, problems) = setup_run(&args)?;
    let bar = if std::io::stderr().is_terminal() && problems.len() > 1 {
        let bar = indicatif::ProgressBar::new(problems.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} solved {msg} [{elapsed}<{eta}]")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let started = Instant::now();
    let rt = tokio::runtime::Runtime::new()?;
    let mut solved = 0;
    let results = rt.block_on(run_problems(&setup, &problems, |r| {
        solved += r.correct as usize;
        if let Some(b) = &bar {
            b.set_message(solved.to_string());
            b.inc(1);
        }
        if let Some(e) = &r.error {
            eprintln!("problem {:?} ({}): {e}", r.index, r.input);
        }
    }));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let wall_ms = started.elapsed().as_millis() as u64;
    if let Some(out) = &args.out {
        write_results(out, &results)?;
    }
    let summary = summarize(&setup, &results, wall_ms);
    print_summary(&summary, args.json);
    match &summary.stopped {
        Some(reason) if !reason.starts_with("budget") => bail!("the run stopped: {reason}"),
        _ => Ok(()),
    }
}

fn write_results(path: &Path, results: &[ProblemResult]) -> Result<()> {
    let mut text = String::new();
    for r in results {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    std::fs::write(path, text).wrap_err_with(|| format!("writing {}", path.display()))
}

fn session_files(path: &Path) -> Result<Vec<PathBuf>> {
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

fn replay_cmd(args: ReplayArgs) -> Result<()> {
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
            eprintln!("warning: {w}");
        }
        let rebuilt = replay::rebuild(&session, args.prompts.as_deref(), None)?;
        for m in &rebuilt.mismatches {
            eprintln!("replay differs: {m}");
        }
        mismatches += rebuilt.mismatches.len();
        let problem = Problem { index: session.header.index, input: session.header.input.clone() };
        let mut r = ProblemResult::new(&problem, rebuilt.engine.outcome(), rebuilt.totals, rebuilt.wall_ms)
            .priced(session.header.price.as_ref())
            .with_qa(&rebuilt.engine);
        r.session = Some(file.display().to_string());
        r.stopped = session.stopped().map(str::to_string);
        if single && !args.json {
            print!("{}", rebuilt.engine.tree().render_text());
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

fn import_tot_log(file: &Path, out: Option<&Path>, verify: bool, json: bool) -> Result<()> {
    if out.is_none() && !verify {
        bail!("say where the sessions go with --out DIR (or only check fidelity with --verify)");
    }
    let report = import_tot::import(file, out)?;
    if verify {
        for c in &report.checks {
            for d in &c.disagreements {
                eprintln!("puzzle {} ({}): {d}", c.idx, c.input);
            }
        }
    }
    if json {
        let brief = serde_json::json!({
            "puzzles": report.puzzles,
            "steps": report.steps,
            "steps_agreeing": report.steps_agreeing,
            "solved": report.solved,
            "solved_any": report.solved_any,
            "sessions": out.map(|o| o.display().to_string()),
        });
        println!("{brief}");
    } else {
        if let Some(o) = out {
            println!("wrote {} sessions to {}", report.puzzles, o.display());
        }
        if verify {
            println!("{} of {} steps select the same candidates as the log", report.steps_agreeing, report.steps);
            println!(
                "solved_any {}/{}  solved (top-ranked) {}/{}",
                report.solved_any, report.puzzles, report.solved, report.puzzles
            );
        }
    }
    if verify && report.steps_agreeing != report.steps {
        bail!("{} steps disagree with the log", report.steps - report.steps_agreeing);
    }
    Ok(())
}

fn import_react_text(file: &Path, out: &Path, json: bool) -> Result<()> {
    let report = import_react::import(file, out)?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    for t in &report.trajectories {
        for d in &t.differences {
            eprintln!("{}: {d}", t.session);
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
        println!("{brief}");
    } else {
        println!("wrote {n} sessions to {}", out.display());
        println!(
            "em {}/{n} in the log, {}/{n} by our scoring (f1 {:.3} / {:.3})",
            report.em_log, report.em, report.f1_log, report.f1
        );
        println!("{} places where a session shows something other than the log", report.differences);
    }
    Ok(())
}
