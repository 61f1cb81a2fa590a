//! `thoughtscope run`: a search headless over one or more problems, and a summary.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use color_eyre::eyre::{bail, eyre, Result, WrapErr};

use thoughtscope::config::{Config, ParamPatch, RunDefaults};
use thoughtscope::engine::ToolMode;
use thoughtscope::llm::sim::{SimConfig, SimProvider, SimRates};
use thoughtscope::llm::Provider;
use thoughtscope::runtime::headless::{run_problems, ProblemResult, RunSetup, Summary};
use thoughtscope::tasks::{self, Problem, TaskOptions};

use super::args::RunArgs;
use super::config;

pub(crate) fn sim_config(args: &RunArgs, d: &RunDefaults, seed: u64) -> SimConfig {
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

pub(crate) fn setup_run(args: &RunArgs) -> Result<(RunSetup, Vec<Problem>)> {
    setup_run_with(args, &config(args.connect.config.as_deref()))
}

pub(crate) fn setup_run_with(args: &RunArgs, cfg: &Config) -> Result<(RunSetup, Vec<Problem>)> {
    let d = &cfg.defaults;
    let task_name = args.task.clone().or(d.task.clone()).unwrap_or_else(|| tasks::default_task().name.into());
    let mut warnings = Vec::new();
    let knowledge = args.tools.knowledge(&mut warnings)?;
    let options = TaskOptions { prompts: args.prompts.clone(), data: args.data.clone(), knowledge };
    let task = tasks::build(&task_name, &options, &mut warnings)?;
    for w in warnings {
        safe_eprintln!("warning: {w}");
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
            (Arc::new(thoughtscope::session::provider::ReplayProvider::load(from)?), None)
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

pub(crate) fn summarize(setup: &RunSetup, results: &[ProblemResult], wall_ms: u64) -> Summary {
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

pub(crate) fn print_summary(s: &Summary, json: bool) {
    if json {
        println!("{}", thoughtscope::safe_text::json_safe(&serde_json::to_string(s).unwrap_or_default()));
        return;
    }
    let label = if s.simulated { format!("{} [simulated]", s.model) } else { s.model.clone() };
    let method = match &s.tool_mode {
        Some(mode) => format!("{} (tool mode {mode})", s.method),
        None => s.method.clone(),
    };
    safe_println!("task {}  method {method}  provider {}  model {}", s.task, s.provider, label);
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
        safe_println!("answered by {}", if parts.is_empty() { "none".to_string() } else { parts.join(", ") });
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
        safe_println!("stopped early: {reason}");
    }
}

pub(crate) fn run(args: RunArgs) -> Result<()> {
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
            safe_eprintln!("problem {:?} ({}): {e}", r.index, r.input);
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

pub(crate) fn write_results(path: &Path, results: &[ProblemResult]) -> Result<()> {
    let mut text = String::new();
    for r in results {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    std::fs::write(path, text).wrap_err_with(|| format!("writing {}", path.display()))
}
