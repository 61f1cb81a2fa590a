//! `thoughtscope run`: a search headless over one or more problems, and a summary.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use color_eyre::eyre::{bail, eyre, Result, WrapErr};

use thoughtscope::config::params::or_list;
use thoughtscope::config::{Config, ParamPatch, RunDefaults};
use thoughtscope::engine::sim::{SimConfig, SimRates};
use thoughtscope::engine::{methods, PromptStyle};
use thoughtscope::llm::sim::SimProvider;
use thoughtscope::llm::{self, ContextWindow, Provider, DEFAULT_CONTEXT_TOKENS};
use thoughtscope::runtime::headless::{
    is_session_file, listen_for_signals, run_headless, ProblemResult, Progress, RunLimits, RunSetup, Summary,
};
use thoughtscope::runtime::memory::{self, RunMemory};
use thoughtscope::tasks::react_text::ActionRules;
use thoughtscope::tasks::{self, Problem, SimPlayers, TaskOptions, TaskSource};

use super::args::RunArgs;
use super::config;
use super::error::{usage_bail, UserError};
use super::pipe::outln;

/// Largest `--sim-noise`: ten times the calibrated rates (each rate still tops out at 1).
const MAX_SIM_NOISE: f64 = 10.0;
/// Longest simulated latency of one call (`--sim-latency-ms`): a minute.
const MAX_SIM_LATENCY_MS: u64 = 60_000;
/// Most model calls in flight (`--concurrency`).
const MAX_CONCURRENCY: usize = 1024;

pub(crate) fn sim_config(args: &RunArgs, d: &RunDefaults, seed: u64, source: &str) -> Result<SimConfig> {
    let base = SimRates::default();
    let s = &args.sim;
    let noise = match (s.sim_noise, d.sim_noise) {
        (Some(x), _) => (x, "--sim-noise".to_string()),
        (None, Some(x)) => (x, format!("defaults.sim_noise in {source}")),
        (None, None) => (1.0, String::new()),
    };
    if !(noise.0.is_finite() && (0.0..=MAX_SIM_NOISE).contains(&noise.0)) {
        usage_bail!(
            "{} is a dial on every sim error rate, from 0 (a perfect model) through 1 (the calibrated default) \
             to {MAX_SIM_NOISE}, not {}",
            noise.1,
            noise.0
        );
    }
    let rate = |flag: &str, value: Option<f64>, default: f64| -> Result<f64> {
        match value {
            None => Ok(default),
            Some(x) if x.is_finite() && (0.0..=1.0).contains(&x) => Ok(x),
            Some(x) => usage_bail!("{flag} is a rate from 0 to 1, not {x}"),
        }
    };
    if s.sim_latency_ms > MAX_SIM_LATENCY_MS {
        usage_bail!(
            "--sim-latency-ms must be at most {MAX_SIM_LATENCY_MS} (a minute per call), not {}",
            s.sim_latency_ms
        );
    }
    Ok(SimConfig {
        seed,
        noise: noise.0,
        rates: SimRates {
            slip: rate("--sim-slip", s.sim_slip, base.slip)?,
            miss: rate("--sim-miss", s.sim_miss, base.miss)?,
            misjudge: rate("--sim-misjudge", s.sim_misjudge, base.misjudge)?,
            answer: rate("--sim-answer", s.sim_answer, base.answer)?,
            io: rate("--sim-io", s.sim_io, base.io)?,
            cot: rate("--sim-cot", s.sim_cot, base.cot)?,
        },
        latency_ms: s.sim_latency_ms,
        thinking: s.sim_thinking,
    })
}

/// `--prompts DIR` must name a directory: a typo would otherwise run the built-in prompts.
pub(crate) fn check_prompts_dir(dir: Option<&Path>) -> Result<()> {
    match dir {
        Some(dir) if !dir.is_dir() => {
            let what = if dir.exists() { "is not a directory" } else { "does not exist" };
            usage_bail!(
                "--prompts {}: {what}; name a directory of prompt templates with the built-in file names \
                 (see assets/prompts/)",
                dir.display()
            )
        }
        _ => Ok(()),
    }
}

/// The prompt style of a run: the one asked for, else the recorded sessions' for a
/// replay, reference for `sim` (the papers' prompts, which the demos and fidelity checks
/// use) and chat for a real model.
pub(crate) fn prompt_style(
    asked: Option<PromptStyle>,
    provider: &str,
    replay: Option<&thoughtscope::session::provider::ReplayProvider>,
    task: &str,
) -> Result<PromptStyle> {
    if let Some(style) = asked {
        return Ok(style);
    }
    Ok(match (provider, replay) {
        ("sim", _) => PromptStyle::Reference,
        (_, Some(replay)) => {
            let styles: std::collections::BTreeSet<&str> =
                replay.recorded_specs(task).iter().map(|s| s.style.name()).collect();
            if styles.len() > 1 {
                usage_bail!(
                    "the sessions of --replay-from were recorded in more than one prompt style ({}); \
                     name one with --prompt-style",
                    styles.into_iter().collect::<Vec<_>>().join(", ")
                );
            }
            replay.recorded_specs(task).first().map_or(PromptStyle::Reference, |s| s.style)
        }
        _ => PromptStyle::Chat,
    })
}

/// The model's context window as the provider knows it (its profile, its server), else
/// [`DEFAULT_CONTEXT_TOKENS`] with a note saying so and how to state it.
fn context_window_of(provider: &dyn Provider, trims: bool) -> Result<ContextWindow> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    Ok(match rt.block_on(provider.context_window()) {
        Some(window) => window,
        // The default is not enforced: only a method that trims to it (ReAct) needs the note.
        None if !trims => {
            ContextWindow { tokens: DEFAULT_CONTEXT_TOKENS, source: "a conservative default".into(), measured: false }
        }
        None => {
            safe_eprintln!(
                "note: {} does not say how many tokens the model holds; ReAct trajectories are trimmed to fit \
                 {DEFAULT_CONTEXT_TOKENS} and no longer prompt is sent (give --context-window N, or context = N in the provider's profile)",
                provider.describe()
            );
            ContextWindow { tokens: DEFAULT_CONTEXT_TOKENS, source: "a conservative default".into(), measured: false }
        }
    })
}

/// The context window the sessions of `--replay-from` were recorded with, so a re-drive
/// fits (and trims) its prompts as the recording did; sessions recorded with different
/// windows cannot be re-driven as one run.
fn recorded_window(replay: &thoughtscope::session::provider::ReplayProvider) -> Result<Option<ContextWindow>> {
    match replay.recorded_context_windows().as_slice() {
        [] | [None] => Ok(None),
        [Some(tokens)] => {
            Ok(Some(ContextWindow { tokens: *tokens, source: "the recorded sessions' header".into(), measured: false }))
        }
        many => usage_bail!(
            "the sessions of --replay-from were recorded with different context windows ({}); replay them apart",
            many.iter().map(|w| w.map_or("none".to_string(), |t| format!("{t} tokens"))).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A re-drive samples at the temperature its sessions recorded (an imported log's, read
/// from its file name) unless `--temperature` or the config names one; sessions recorded
/// at several temperatures need it named.
fn recorded_temperature(
    params: &mut thoughtscope::engine::Params,
    args: &RunArgs,
    d: &RunDefaults,
    replay: &thoughtscope::session::provider::ReplayProvider,
    task: &str,
) -> Result<()> {
    let given = args.search.get("temperature").is_some() || d.search.get("temperature").is_some();
    if given || !params.reads("temperature") {
        return Ok(());
    }
    match replay.recorded_temperatures(task).as_slice() {
        [] => Ok(()),
        [t] => params.set("temperature", *t).map_err(|e| UserError::usage(e.to_string()).into()),
        many => usage_bail!(
            "the sessions of --replay-from were recorded at several temperatures ({}); name one with --temperature",
            many.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The method and its parameters: as given; with no method named and a default that does
/// not serve the task, the first method that does, said in a note.
fn resolve_params(
    args: &RunArgs,
    d: &RunDefaults,
    task: &dyn TaskSource,
    task_name: &str,
    notes: &mut Vec<String>,
) -> Result<thoughtscope::engine::Params> {
    let mut params = ParamPatch::resolve(&args.search, &d.search)?;
    // No method named and the default does not serve the task: the first that does, said.
    if args.search.method.is_none() && d.search.method.is_none() && methods::check_serves(task, &params).is_err() {
        let serving: Vec<thoughtscope::engine::MethodKind> =
            methods::serving(task, &params).iter().map(|info| info.kind).collect();
        if let Some(&first) = serving.first() {
            let note = format!(
                "the default method {} does not work on {task_name}; running {first}, the first that does \
                 (--method names another: {})",
                params.method,
                serving.iter().map(|m| m.label()).collect::<Vec<_>>().join(", ")
            );
            safe_eprintln!("note: {note}");
            notes.push(note);
            let mut patch = args.search.clone();
            patch.method = Some(first);
            params = ParamPatch::resolve(&patch, &d.search)?;
        }
    }
    Ok(params)
}

pub(crate) fn setup_run(args: &RunArgs) -> Result<(RunSetup, Vec<Problem>)> {
    setup_run_with(args, &config(args.connect.config.as_deref())?)
}

/// The recording `--provider replay` answers from (`--replay-from`), loaded.
fn replay_of(args: &RunArgs, provider: &str) -> Result<Option<thoughtscope::session::provider::ReplayProvider>> {
    if provider != "replay" {
        return Ok(None);
    }
    let from =
        args.replay_from.as_deref().ok_or_else(|| UserError::usage("--provider replay needs --replay-from SESSION"))?;
    Ok(Some(thoughtscope::session::provider::ReplayProvider::load(from)?))
}

pub(crate) fn setup_run_with(args: &RunArgs, cfg: &Config) -> Result<(RunSetup, Vec<Problem>)> {
    setup_run_noting(args, cfg, &mut Vec::new())
}

/// [`setup_run_with`], also handing back the notes it printed (the method it chose), for
/// the explorer to show: stderr is hidden behind its full screen.
pub(crate) fn setup_run_noting(
    args: &RunArgs,
    cfg: &Config,
    notes: &mut Vec<String>,
) -> Result<(RunSetup, Vec<Problem>)> {
    let d = &cfg.defaults;
    check_prompts_dir(args.prompts.as_deref())?;
    let task_name = args.task.clone().or(d.task.clone()).unwrap_or_else(|| tasks::default_task().name.to_string());
    let mut warnings = Vec::new();
    let knowledge = args.tools.options().knowledge(&mut warnings)?;
    let provider_name = args.provider.clone().or(d.provider.clone()).unwrap_or_else(|| "sim".into());
    let replay = replay_of(args, &provider_name)?;
    let actions = react_actions(args, replay.as_ref())?;
    let style = prompt_style(args.prompt_style, &provider_name, replay.as_ref(), &task_name)?;
    let mcp = args.tools.options().mcp_servers(&cfg.mcp)?;
    let data = args.data.clone();
    let options =
        TaskOptions { prompts: args.prompts.clone(), data, knowledge, actions, style, mcp, ..Default::default() };
    let mut task = tasks::build(&task_name, &options, &mut warnings)?;
    for w in warnings {
        safe_eprintln!("warning: {w}");
    }
    // No data file: a re-drive's problems are the replayed sessions' own.
    let specs = replay.as_ref().map(|r| r.recorded_specs(&task_name)).unwrap_or_default();
    let from_replay = task.problem_count() == 0 && args.input.is_none() && !specs.is_empty();
    if from_replay {
        task = tasks::for_specs(&task_name, &specs, &options)?;
    }
    if actions.is_some_and(|a| a != ActionRules::Tolerant) && task.action_rules() != actions {
        let readers = tasks::and_list(&tasks::reading_reference_actions());
        usage_bail!(
            "--react-mode reference is the ReAct notebook's way with {readers}; {task_name} reads its replies its own \
             way"
        );
    }
    let problems = problems_to_run(args, task.as_ref(), &task_name, from_replay)?;
    let mut params = resolve_params(args, d, task.as_ref(), &task_name, notes)?;
    if let Some(replay) = &replay {
        recorded_temperature(&mut params, args, d, replay, &task_name)?;
    }
    // A method the task cannot serve is refused here, naming what the task lacks and the
    // methods that work (the engine refuses it too, for callers that build one directly).
    if let Err(refused) = methods::check_serves(task.as_ref(), &params) {
        usage_bail!("{}", refused.for_flags());
    }
    // Flags of other methods (MCTS's --uct-c, ...) are a mistake: the method would not read them.
    if let Some((name, readers)) = args.search.not_read_by(params.method) {
        usage_bail!(
            "--{} is for --method {} (the method is {})",
            name.replace('_', "-"),
            or_list(&readers),
            params.method
        );
    }
    if actions == Some(ActionRules::Reference) && params.word("tool_mode") == Some("native") {
        usage_bail!("--react-mode reference reads actions in the notebook's text format; drop --tool-mode native");
    }
    let mut replay_tools = None;
    let mut replay_window = None;
    let replay_unjudged = replay.as_ref().map(|r| r.recorded_unjudged(&task_name));
    let (provider, sim): (Arc<dyn Provider>, Option<SimConfig>) = match provider_name.as_str() {
        "sim" => {
            if let Err(why) = thoughtscope::tasks::check_sim_plays(task.as_ref(), &params) {
                usage_bail!("{why}");
            }
            let cfg = sim_config(args, d, params.seed(), &cfg.source())?;
            (Arc::new(SimProvider::new(cfg.clone(), &SimPlayers)), Some(cfg))
        }
        "replay" => {
            let replay = replay.ok_or_else(|| UserError::usage("--provider replay needs --replay-from SESSION"))?;
            for w in &replay.warnings {
                eprintln!("warning: {w}");
            }
            replay_tools = Some(replay.all_recorded_tools());
            replay_window = recorded_window(&replay)?;
            (Arc::new(replay), None)
        }
        name => (llm::config::build(name, &args.connect.options(), cfg.providers()?, params.seed())?, None),
    };
    refuse_clamped_temperature(provider.as_ref(), &params)?;
    let concurrency = args.concurrency.or(d.concurrency).unwrap_or(8);
    if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
        let from = args
            .concurrency
            .map_or_else(|| format!("defaults.concurrency in {}", cfg.source()), |_| "--concurrency".into());
        usage_bail!("{from} must be from 1 to {MAX_CONCURRENCY}, not {concurrency}");
    }
    let mut limits = RunLimits::from_options(&args.connect.options(), provider.as_ref())?;
    limits.breakpoints = breakpoints(args, cfg)?;
    // Every request is fitted to the model's context window (ReAct trims its trajectory,
    // the driver sends nothing that cannot fit): ask once, before the run; a replay
    // re-drives with the window its sessions recorded.
    if provider_name == "replay" {
        limits.context = replay_window;
    } else if !provider.simulated() {
        let trims = params.method.info().react != methods::ReactShape::None;
        limits.context = Some(context_window_of(provider.as_ref(), trims)?);
    }
    notes.extend(provider_notes(provider.as_ref()));
    let memory = run_memory(args, d, &params, &task_name, provider.model())?;
    let unjudged = replay_unjudged.is_some_and(|u| u);
    if unjudged {
        safe_eprintln!(
            "note: no judge calls, as the replayed sessions were recorded (they never judged their outcome)"
        );
    }
    let setup = RunSetup {
        task,
        params,
        provider,
        sim,
        concurrency,
        record: args.record.clone(),
        limits,
        replay_tools,
        memory,
        unjudged,
    };
    Ok((setup, problems))
}

/// The problems `--input` or `--range` names (a re-drive's own when neither is given),
/// or the one line that says how to name them.
fn problems_to_run(args: &RunArgs, task: &dyn TaskSource, task_name: &str, from_replay: bool) -> Result<Vec<Problem>> {
    if task.problem_count() == 0 && args.input.is_none() {
        let noun = &task.info().input_noun;
        usage_bail!(
            "{task_name} has no {noun}s of its own: name a data file with --data FILE (or one {noun} with --input)"
        );
    }
    let problems: Vec<Problem> = match (&args.input, &args.range) {
        (Some(input), _) => vec![task.parse_input(input)?],
        (None, Some(range)) => {
            let r = tasks::parse_range_within(range, task.problem_count(), task.range_limit())?;
            r.filter_map(|i| task.problem(i)).collect()
        }
        (None, None) if from_replay => (0..task.problem_count()).filter_map(|i| task.problem(i)).collect(),
        (None, None) => {
            // The task's own example of a written input (one line, not a problem number).
            let example = task
                .info()
                .input_examples
                .iter()
                .find(|e| !e.contains('\n') && !e.chars().all(|c| c.is_ascii_digit()))
                .map_or_else(|| "TEXT".to_string(), |e| format!("{e:?}"));
            usage_bail!("say which problems: --range A..B (0-based, like Python) or --input {example}")
        }
    };
    Ok(problems)
}

/// How ReAct replies are read: `--react-mode`, else as the replayed sessions were (an
/// imported trajectory is re-driven the notebook's way), else the task's own way.
fn react_actions(
    args: &RunArgs,
    replay: Option<&thoughtscope::session::provider::ReplayProvider>,
) -> Result<Option<ActionRules>> {
    if let Some(mode) = args.react_mode {
        return Ok(Some(mode.rules()));
    }
    let Some(recorded) = replay.map(|r| r.recorded_actions()) else { return Ok(None) };
    match recorded.as_slice() {
        [] | [None] => Ok(None),
        [Some(rules)] => {
            if *rules == ActionRules::Reference {
                safe_eprintln!("note: --react-mode reference, as the replayed sessions were recorded");
            }
            Ok(Some(*rules))
        }
        _ => usage_bail!(
            "the sessions in --replay-from were recorded in different ReAct modes; replay one kind at a time or \
             say which with --react-mode"
        ),
    }
}

/// The named memory of a run (`--memory`, else `defaults.memory`, else
/// `<method>-<task>-<model>`) when its method keeps one; `--memory` for a method without
/// one is a mistake. A memory under the old shared default name is named in a note.
pub(crate) fn run_memory(
    args: &RunArgs,
    d: &RunDefaults,
    params: &thoughtscope::engine::Params,
    task: &str,
    model: &str,
) -> Result<Option<RunMemory>> {
    let (given, by_flag) = match (&args.memory, &d.memory) {
        (Some(name), _) => (Some(name.as_str()), true),
        (None, Some(name)) => (Some(name.as_str()), false),
        (None, None) => (None, false),
    };
    match memory::resolve(params, task, model, given, by_flag) {
        Ok(name) => {
            let memory = name.map(|n| RunMemory::user(&n));
            if let (Some(m), None) = (&memory, given) {
                if let Some(note) = memory::old_default_note(&m.store, params, task, &m.name) {
                    safe_eprintln!("note: {note}");
                }
            }
            Ok(memory)
        }
        Err(memory::MemoryArgError::BadName(m)) if !by_flag => usage_bail!("defaults.memory in the config file: {m}"),
        Err(e) => usage_bail!("{e}"),
    }
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

/// What the provider's requests leave out or send otherwise than the run asks (a
/// reasoning model's temperature, ...), each printed as a note.
fn provider_notes(provider: &dyn Provider) -> Vec<String> {
    let notes = provider.notes();
    for note in &notes {
        safe_eprintln!("note: {note}");
    }
    notes
}

/// A temperature the provider's API would clamp is refused: the run would not be the one
/// asked for (and the session header would not say what was sent).
fn refuse_clamped_temperature(provider: &dyn Provider, params: &thoughtscope::engine::Params) -> Result<()> {
    let temperature = params.reader().real(&thoughtscope::engine::params::TEMPERATURE);
    if let (Some((lo, hi)), Ok(t)) = (provider.temperature_range(), temperature) {
        if !(f64::from(lo)..=f64::from(hi)).contains(&t) {
            usage_bail!(
                "temperature {t}: provider {} accepts {lo} to {hi}, so it would be sent as {}; give --temperature \
                 from {lo} to {hi}",
                provider.name(),
                t.clamp(f64::from(lo), f64::from(hi))
            );
        }
    }
    Ok(())
}

pub(crate) fn print_summary(s: &Summary, json: bool) {
    if json {
        outln!("{}", thoughtscope::safe_text::json_safe(&serde_json::to_string(s).unwrap_or_default()));
        return;
    }
    let label = if s.simulated { format!("{} [simulated]", s.model) } else { s.model.clone() };
    let method = match &s.tool_mode {
        Some(mode) => format!("{} (tool mode {mode})", s.method),
        None => s.method.clone(),
    };
    safe_println!("task {}  method {method}  provider {}  model {}", s.task, s.provider, label);
    outln!(
        "solved {}/{} ({:.1}%)  any final path correct {}/{}",
        s.solved,
        s.n,
        100.0 * s.success_rate,
        s.solved_any,
        s.n
    );
    if let (Some(em), Some(f1)) = (s.em, s.f1) {
        // The steps' figures only for a method with ReAct steps (io and cot have none).
        let steps = match s.mean_steps {
            Some(steps) => format!(
                "  mean steps {steps:.1}  bad calls {}  tool calls {}",
                s.bad_calls.unwrap_or(0),
                s.tool_calls.unwrap_or(0)
            ),
            None => String::new(),
        };
        outln!("em {em}/{}  f1 {f1:.3}{steps}", s.n);
        if let (Some(first), Some(retry)) = (s.read_first_try, s.read_after_retry) {
            if first + retry > 0 {
                outln!("actions read first try {first}  after a retry {retry}");
            }
        }
    }
    if let Some(parts) = &s.answered_by {
        let parts: Vec<String> = parts.iter().map(|(part, n)| format!("{part} {n}")).collect();
        safe_println!("answered by {}", if parts.is_empty() { "none".to_string() } else { parts.join(", ") });
    }
    for (facet, groups) in &s.by {
        let parts: Vec<String> = groups
            .iter()
            .map(|(value, g)| format!("{value} {}/{} ({:.0}%)", g.solved, g.n, 100.0 * g.accuracy))
            .collect();
        safe_println!("by {facet}: {}", parts.join(", "));
    }
    if let Some(m) = &s.memory {
        let merged = if m.merged { " (merged with changes another writer made meanwhile)" } else { "" };
        safe_println!("memory {}: {} entries before, {} after{merged}", m.name, m.entries_before, m.entries_after);
    }
    if !s.metrics.is_empty() {
        // Shares as percentages; a task's plain scores (writing's coherency) as they are.
        let task = thoughtscope::tasks::by_name(&s.task, None).ok();
        let parts: Vec<String> = s
            .metrics
            .iter()
            .map(|(k, v)| match task.as_ref().is_none_or(|t| t.metric_is_share(k)) {
                true => format!("{k} {:.1}%", 100.0 * v),
                false => format!("{k} {v:.2}"),
            })
            .collect();
        safe_println!("mean {}", parts.join("  "));
    }
    if let Some(a) = s.mean_sample_accuracy {
        outln!("mean correct per sample {:.1}%  best of k {}/{}", 100.0 * a, s.solved_any, s.n);
    }
    // A reasoning model's completion is its thinking and its answer: said apart.
    let completion = match s.reasoning_tokens {
        0 => format!("{} completion", s.completion_tokens),
        r => format!(
            "{} completion ({r} reasoning + {} answer)",
            s.completion_tokens,
            s.completion_tokens.saturating_sub(r)
        ),
    };
    outln!(
        "calls {}  cache hits {}  tokens {} prompt + {completion}  {} ms",
        s.llm_calls,
        s.cache_hits,
        s.prompt_tokens,
        s.wall_ms
    );
    if s.estimated_tokens > 0 {
        outln!(
            "of those tokens {} are estimates from the text (about 4 characters a token): the server did not \
             report usage",
            s.estimated_tokens
        );
    }
    if s.failed_calls > 0 || s.lost_samples > 0 || s.cost_usd.is_some() {
        let cost = s.cost_usd.map(|c| format!("cost ${c:.4}  ")).unwrap_or_default();
        let overflows = match s.context_overflows {
            0 => String::new(),
            n => format!(" ({n} did not fit the model's context window)"),
        };
        let lost = match s.lost_samples {
            0 => String::new(),
            n => format!(", samples lost {n} (their calls kept the samples that came)"),
        };
        outln!("{cost}failed calls {}{overflows}{lost}", s.failed_calls);
    }
    if let Some(counts) = s.reply_health.counts_line() {
        safe_println!("the model got wrong: {counts}");
    }
    for warning in s.reply_health.warnings() {
        safe_println!("{warning}");
    }
    if s.incomplete > 0 {
        outln!(
            "incomplete {}/{}: the recording ends before the run did (no end line); not a verdict",
            s.incomplete,
            s.n
        );
    }
    if let Some(reason) = &s.stopped {
        safe_println!("stopped early: {reason}");
    }
}

pub(crate) fn run(args: RunArgs) -> Result<()> {
    let (setup, problems) = setup_run(&args)?;
    if let Some(record) = args.record.as_deref().filter(|r| problems.len() > 1 && is_session_file(r)) {
        usage_bail!(
            "--record {}: a path ending in .jsonl is one session file, but this run has {} problems; name a directory",
            record.display(),
            problems.len()
        );
    }
    // Opened (and emptied) before any call, and written a line per problem as each ends,
    // so an interrupted or killed run keeps the problems it finished.
    let mut out = match &args.out {
        Some(path) => Some(OutFile::create(path)?),
        None => None,
    };
    let bar = if std::io::stderr().is_terminal() && problems.len() > 1 {
        let bar = indicatif::ProgressBar::new(problems.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {msg} [{elapsed}<{eta}]")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    let started = Instant::now();
    let rt = tokio::runtime::Runtime::new()?;
    let mut progress = Progress::new(problems.len());
    if let Some(b) = &bar {
        b.set_message(progress.line());
    }
    let done = rt.block_on(async {
        let interrupts = listen_for_signals().wrap_err("setting up signal handling")?;
        let done = run_headless(&setup, &problems, interrupts, |r| {
            progress.add(r);
            if let Some(b) = &bar {
                b.set_position(progress.done as u64);
                b.set_message(progress.line());
            }
            // Stale locks taken over, changes that could not go on top of another writer's file.
            for note in r.memory.iter().flat_map(|m| m.notes.iter()) {
                let line = thoughtscope::safe_text::terminal_safe(&format!("memory: {note}")).into_owned();
                match &bar {
                    Some(b) => b.println(line),
                    None => eprintln!("{line}"),
                }
            }
            if let Some(e) = &r.error {
                let index = r.index.map(|i| format!("{i} ")).unwrap_or_default();
                let line =
                    thoughtscope::safe_text::terminal_safe(&format!("problem {index}({}): {e}", r.input)).into_owned();
                match &bar {
                    Some(b) => b.println(line),
                    None => eprintln!("{line}"),
                }
            }
            match &mut out {
                Some(out) => out.write(r),
                None => Ok(()),
            }
        })
        .await;
        Ok::<_, color_eyre::Report>(done)
    })?;
    // Nothing the runtime still runs is waited for: an abandoned tool's thread or a stuck
    // lookup must not keep the program from ending.
    rt.shutdown_background();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let wall_ms = started.elapsed().as_millis() as u64;
    if done.results.is_empty() {
        if let Some(reason) = &done.stopped {
            if done.signal.is_none() {
                // Nothing ran (the session could not even be created): one line, no summary.
                bail!("{reason}");
            }
        }
    }
    let mut summary = summarize(&setup, &done.results, wall_ms);
    if summary.stopped.is_none() {
        summary.stopped = done.stopped.clone();
    }
    print_summary(&summary, args.json);
    for found in setup.provider.found() {
        safe_eprintln!("note: {found}");
    }
    if let Some(line) = unread_note(setup.task.as_ref(), &done.results) {
        safe_eprintln!("warning: {line}");
    }
    if let Some(signal) = done.signal {
        if done.abandoned > 0 {
            eprintln!("{signal}: {} calls in flight were abandoned; what they cost is not counted", done.abandoned);
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
        // The MCP servers end with the run (exit skips main's ending of them).
        for note in thoughtscope::tools::mcp::end_servers() {
            eprintln!("warning: {note}");
        }
        std::process::exit(signal.exit_code());
    }
    if let Some(reason) = summary.stopped.as_ref().filter(|r| !r.starts_with("budget")) {
        bail!("the run stopped: {reason}");
    }
    if let Some(failure) = every_call_failed(&done.results) {
        bail!("every call to {} failed: {failure}", setup.provider.describe());
    }
    Ok(())
}

/// What to say of problems whose final states gave no answer the task could read (its
/// answer rule finds none in them, so they count as unsolved): once a run, with one example.
pub(crate) fn unread_note(task: &dyn TaskSource, results: &[ProblemResult]) -> Option<String> {
    let unread: Vec<&ProblemResult> = results.iter().filter(|r| r.unread.is_some()).collect();
    let first = unread.first()?;
    let rule = task.answer_rule().map(|r| format!(" ({r})")).unwrap_or_default();
    let problem = first.index.map(|i| format!("problem {i}")).unwrap_or_else(|| "the problem".into());
    Some(format!(
        "{}'s answer rule{rule} read no answer from the final states of {} of {}, so they count as \
         unsolved; e.g. {problem}, {}",
        task.name(),
        unread.len(),
        thoughtscope::engine::methods::count(results.len(), "problem", "problems"),
        first.unread.as_deref().unwrap_or("")
    ))
}

/// The first failure, if calls were sent and none of them succeeded (nothing the run
/// reports is then the model's doing).
pub(crate) fn every_call_failed(results: &[ProblemResult]) -> Option<&str> {
    let sent: u64 = results.iter().map(|r| r.calls).sum();
    let failed: u64 = results.iter().map(|r| r.failed_calls).sum();
    if sent == 0 || failed < sent {
        return None;
    }
    results.iter().find_map(|r| r.provider_error.as_deref())
}

/// The `--out` file: one JSON line per problem, written and flushed as each ends.
struct OutFile {
    path: std::path::PathBuf,
    file: std::fs::File,
}

impl OutFile {
    fn create(path: &Path) -> Result<OutFile> {
        let file = std::fs::File::create(path)
            .map_err(|e| eyre!("--out {}: {e}; name a file you can write to", path.display()))?;
        Ok(OutFile { path: path.to_path_buf(), file })
    }

    /// Append one result; an error names the file and the OS error.
    fn write(&mut self, r: &ProblemResult) -> std::result::Result<(), String> {
        use std::io::Write;
        let mut line = serde_json::to_string(r).map_err(|e| e.to_string())?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(|e| format!("--out {}: {e}", self.path.display()))
    }
}

/// The run's breakpoints: `--break` (each checked), else the config's `break`.
fn breakpoints(args: &RunArgs, cfg: &Config) -> Result<Vec<String>> {
    if args.breaks.is_empty() {
        return Ok(cfg.breakpoints.clone());
    }
    let mut kept = Vec::new();
    for text in &args.breaks {
        match thoughtscope::engine::breakpoint::Breakpoint::parse(text) {
            Ok(b) => kept.push(b.text()),
            Err(e) => usage_bail!("--break: {e}"),
        }
    }
    Ok(kept)
}
