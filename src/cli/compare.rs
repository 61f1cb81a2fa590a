//! `thoughtscope bench compare`: several methods on the same problems, a table of what
//! each did (success, calls, tokens, cost, wall time) and a chart of success against
//! tokens per problem with the quality–cost frontier, in the terminal and as SVG.
//!
//! Every method runs the same problems, in this process, with the same run arguments
//! and seed, all methods side by side: their calls go under the one `--concurrency`
//! limit, shared by every run, and each run gives the same results as on its own (a
//! run's results never depend on timing). The wall column is each method's own time,
//! overlapping the others'; the legend gives the total. The cache is shared where the
//! reference Tree-of-Thoughts code shares it: within one method's run (its repeated
//! value prompts are answered once, as `run` does by default), never across methods —
//! the reference runs each method as a process of its own. `--share-cache` gives each
//! seed one fresh response cache for all its methods instead (a request another method
//! already sent, the same model, messages, sampling and occurrence, is answered from it
//! at no cost); then a seed's methods go one after another in the order given, so what
//! a method finds in the cache never depends on how runs interleave, and the seeds go
//! side by side. A method that keeps a memory (retreval) starts each run on a fresh one
//! of its own, removed afterwards.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use color_eyre::eyre::{eyre, Result};

use thoughtscope::engine::methods;
use thoughtscope::llm::cache::CacheMode;
use thoughtscope::runtime::memory::RunMemory;
use thoughtscope::tasks;

use super::chart::{self, Point};
use super::error::usage_bail;
use super::pipe::outln;
use super::run::every_call_failed;
use super::variants::{check_reserved, check_seeds, pooled, prepare, side_by_side, Outcome, Planned, Pooled, Ran};

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// The task every method runs [default: game24].
    #[arg(long)]
    pub(crate) task: Option<String>,
    /// The methods to compare, comma-separated, e.g. `io,cot,cot-sc,tot-bfs,tot-dfs`.
    #[arg(long, value_delimiter = ',', required = true)]
    pub(crate) methods: Vec<String>,
    /// Problems by 0-based index, like `run --range`.
    #[arg(long, default_value = "0..10")]
    pub(crate) range: String,
    /// Run every method once per seed (comma-separated) and pool the figures.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub(crate) seeds: Vec<u64>,
    /// How the table is printed; markdown also draws the chart.
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    pub(crate) format: Format,
    /// Also write the chart of success against tokens as an SVG file.
    #[arg(long, value_name = "FILE")]
    pub(crate) svg: Option<PathBuf>,
    /// One response cache for all the methods of a seed, instead of one per method's run.
    #[arg(long)]
    pub(crate) share_cache: bool,
    /// Arguments every method's `run` gets (provider, model, method parameters, sim
    /// dials, ...), after `--`: e.g. `-- --provider ollama --model qwen2.5`.
    #[arg(last = true)]
    pub(crate) run_args: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    Markdown,
    Csv,
    Json,
}

pub(crate) fn compare(args: CompareArgs) -> Result<()> {
    check_seeds(&args.seeds)?;
    check_reserved(
        &args.run_args,
        &["--task", "--method", "--range", "--input", "--memory", "--out", "--record", "--seed"],
        "comparison",
    )?;
    let task = args.task.clone().unwrap_or_else(|| tasks::default_task().name.to_string());
    if tasks::find(&task).is_none() {
        let names = tasks::names();
        usage_bail!("unknown task {task:?}; the tasks are {}", names.join(", "));
    }
    for (i, m) in args.methods.iter().enumerate() {
        if methods::find(m).is_none() {
            usage_bail!("unknown method {m:?} in --methods; the methods are {}", methods::names().join(", "));
        }
        if args.methods[..i].contains(m) {
            usage_bail!("--methods names {m} twice; name each method once");
        }
    }
    if let Some(dir) = args.svg.as_ref().and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty()) {
        if !dir.is_dir() {
            usage_bail!("--svg {}: the directory {} does not exist", args.svg_name(), dir.display());
        }
    }
    // Every method's setup is checked before anything runs, so a method the task cannot
    // take is one line now rather than an error after the others have spent their calls.
    for method in &args.methods {
        let (setup, _) = prepare(&args.run_line(&task, method, args.seeds[0]))?;
        if setup.limits.cache == CacheMode::Disk {
            usage_bail!(
                "--cache disk would let the methods answer each other from earlier runs; \
                 leave it out (each method gets its own cache) or give --share-cache"
            );
        }
    }
    let (outcomes, total_secs) = run_all(&args, &task)?;
    let rows: Vec<Pooled> = args.methods.iter().filter_map(|m| pooled(&outcomes, m)).collect();
    let points: Vec<Point> = rows
        .iter()
        .map(|r| Point {
            label: r.name.to_string(),
            tokens: r.tokens() as f64 / r.n().max(1) as f64,
            success: r.success_rate(),
        })
        .collect();
    let on = chart::frontier(&points);
    report(&args, &task, &outcomes, &rows, &points, &on, total_secs);
    if let Some(path) = &args.svg {
        let title = format!("{task} {}: success against tokens", args.range);
        let svg = chart::svg_chart(&points, &title).map_err(|e| eyre!("drawing the chart: {e}"))?;
        std::fs::write(path, svg).map_err(|e| eyre!("--svg {}: {e}; name a file you can write to", args.svg_name()))?;
        if args.format == Format::Markdown {
            safe_println!("chart written to {}", args.svg_name());
        }
    }
    Ok(())
}

/// Run every method on every seed, side by side under one concurrency limit: each run's
/// outcome (in seed, then method order) and the wall time of them all.
///
/// Runs that share nothing go at once. With `--share-cache` the methods of one seed go
/// one after another in the order given (the seeds side by side), so which replies a
/// method finds in the cache never depends on how the runs interleave.
fn run_all(args: &CompareArgs, task: &str) -> Result<(Vec<Outcome>, f64)> {
    let pid = std::process::id();
    let mut groups: Vec<Vec<Planned>> = Vec::new();
    let mut shared_dirs = Vec::new();
    for &seed in &args.seeds {
        let shared = args.share_cache.then(|| std::env::temp_dir().join(format!("thoughtscope-compare-{pid}-{seed}")));
        let mut group = Vec::new();
        for method in &args.methods {
            let line = args.run_line(task, method, seed);
            let (mut setup, problems) = prepare(&line)?;
            let memory = setup.memory.is_some().then(|| format!("compare-{method}-{seed}-{pid}"));
            if let Some(name) = &memory {
                setup.memory = Some(RunMemory::user(name));
            }
            if let Some(dir) = &shared {
                setup.limits.cache = CacheMode::Disk;
                setup.limits.cache_dir = Some(dir.clone());
            }
            let planned = Planned { name: method.clone(), seed, line, setup, problems, memory };
            if shared.is_some() {
                group.push(planned);
            } else {
                groups.push(vec![planned]);
            }
        }
        if let Some(dir) = shared {
            groups.push(group);
            shared_dirs.push(dir);
        }
    }
    let markdown = args.format == Format::Markdown;
    let ran = side_by_side(
        groups,
        false,
        |p| {
            if markdown {
                safe_eprintln!("running {} (seed {}): thoughtscope run {}", p.name, p.seed, p.line.join(" "));
            }
        },
        |p, secs| {
            if markdown {
                safe_eprintln!("{} (seed {}) done in {secs:.2} s", p.name, p.seed);
            }
        },
    );
    for dir in &shared_dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
    let (mut finished, total_secs) = ran?;
    let place = |p: &Planned| {
        let seed = args.seeds.iter().position(|&s| s == p.seed).unwrap_or(0);
        (seed, args.methods.iter().position(|m| *m == p.name).unwrap_or(0))
    };
    finished.sort_by_key(|r| place(&r.planned));
    let mut outcomes = Vec::new();
    for Ran { planned, results, summary, secs, span } in finished {
        let (method, seed) = (planned.name, planned.seed);
        // A run whose every call failed says nothing about the method: stop with why.
        if let Some(failure) = every_call_failed(&results) {
            return Err(eyre!("every call of {method} to {} failed: {failure}", summary.provider));
        }
        if let Some(reason) = &summary.stopped {
            safe_eprintln!("{method} (seed {seed}) stopped early: {reason}");
        }
        outcomes.push(Outcome { name: method, seed, summary, results, secs, memory: None, span: Some(span) });
    }
    Ok((outcomes, total_secs))
}

impl CompareArgs {
    /// The `run` arguments of `method` on `seed`.
    fn run_line(&self, task: &str, method: &str, seed: u64) -> Vec<String> {
        let mut run: Vec<String> =
            ["--task", task, "--method", method, "--range", &self.range].map(String::from).into();
        run.extend(self.run_args.iter().cloned());
        run.extend(["--seed".into(), seed.to_string()]);
        run
    }

    fn svg_name(&self) -> String {
        self.svg.as_ref().map(|p| p.display().to_string()).unwrap_or_default()
    }
}

fn cost(c: Option<f64>) -> String {
    c.map_or("—".into(), |c| format!("${c:.4}"))
}

/// What the wall column means, for the legend under the table.
fn wall_legend(args: &CompareArgs, total_secs: f64) -> String {
    let how = if args.share_cache && args.seeds.len() > 1 {
        "each seed's methods ran one after another (one cache), the seeds side by side"
    } else if args.share_cache {
        "the methods ran one after another (one cache)"
    } else {
        "the methods ran side by side, their calls under one --concurrency limit, so their walls overlap"
    };
    format!("wall: each method's own time, from its start to its end; {how}; all of them took {total_secs:.2} s")
}

#[allow(clippy::too_many_arguments)]
fn report(
    args: &CompareArgs,
    task: &str,
    outcomes: &[Outcome],
    rows: &[Pooled],
    points: &[Point],
    on: &[usize],
    total_secs: f64,
) {
    match args.format {
        Format::Json => {
            let methods: Vec<serde_json::Value> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    serde_json::json!({
                        "method": r.name,
                        "n": r.n(),
                        "solved": r.solved(),
                        "success_rate": r.success_rate(),
                        "calls": r.calls(),
                        "cache_hits": r.cache_hits(),
                        "prompt_tokens": r.prompt_tokens(),
                        "completion_tokens": r.completion_tokens(),
                        "tokens": r.tokens(),
                        "tokens_per_problem": points[i].tokens,
                        "cost_usd": r.cost(),
                        "wall_s": r.wall(),
                        "frontier": on.contains(&i),
                        "reply_health": r.reply_health(),
                        "by_seed": r.per_seed().iter().map(|(s, a)| serde_json::json!({"seed": s, "success_rate": a})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let out = serde_json::json!({
                "task": task,
                "range": args.range,
                "seeds": args.seeds,
                "share_cache": args.share_cache,
                "total_wall_s": total_secs,
                "wall": wall_legend(args, total_secs),
                "methods": methods,
                "frontier": on.iter().map(|&i| rows[i].name).collect::<Vec<_>>(),
            });
            outln!("{}", thoughtscope::safe_text::json_safe(&out.to_string()));
        }
        Format::Csv => {
            // The table stays one row per method; what the wall column means goes to stderr.
            safe_eprintln!("{}", wall_legend(args, total_secs));
            outln!("method,solved,n,success_rate,calls,cache_hits,prompt_tokens,completion_tokens,tokens,cost_usd,wall_s,frontier");
            for (i, r) in rows.iter().enumerate() {
                outln!(
                    "{},{},{},{:.4},{},{},{},{},{},{},{:.3},{}",
                    r.name,
                    r.solved(),
                    r.n(),
                    r.success_rate(),
                    r.calls(),
                    r.cache_hits(),
                    r.prompt_tokens(),
                    r.completion_tokens(),
                    r.tokens(),
                    r.cost().map_or(String::new(), |c| format!("{c:.6}")),
                    r.wall(),
                    on.contains(&i)
                );
            }
        }
        Format::Markdown => {
            let model =
                outcomes.first().map_or(String::new(), |o| format!("{} {}", o.summary.provider, o.summary.model));
            let seeds = match args.seeds.len() {
                1 => format!("seed {}", args.seeds[0]),
                n => format!("pooled over {n} seeds"),
            };
            let cache = if args.share_cache { "one cache for all methods" } else { "each method its own cache" };
            outln!();
            safe_println!("{task} {} on {model}, {seeds}, {cache}", args.range);
            outln!();
            outln!("| method | success | calls | cache hits | tokens (prompt / completion) | cost | wall | frontier |");
            outln!("|---|---|---|---|---|---|---|---|");
            for (i, r) in rows.iter().enumerate() {
                outln!(
                    "| {} | {}/{} ({:.1}%) | {} | {} | {} ({} / {}) | {} | {:.2} s | {} |",
                    r.name,
                    r.solved(),
                    r.n(),
                    100.0 * r.success_rate(),
                    r.calls(),
                    r.cache_hits(),
                    r.tokens(),
                    r.prompt_tokens(),
                    r.completion_tokens(),
                    cost(r.cost()),
                    r.wall(),
                    if on.contains(&i) { "yes" } else { "" }
                );
            }
            outln!();
            // What each method's model got wrong, where anything did (the run summaries' counts).
            for r in rows {
                if let Some(counts) = r.reply_health().counts_line() {
                    safe_println!("{}: the model got wrong: {counts}", r.name);
                }
            }
            outln!("{}", wall_legend(args, total_secs));
            outln!();
            super::pipe::write_stdout(format_args!("{}", chart::text_chart(points)));
            let names: Vec<&str> = on.iter().map(|&i| rows[i].name).collect();
            outln!("frontier (cheapest first): {}", names.join(" → "));
        }
    }
}
