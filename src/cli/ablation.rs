//! `thoughtscope bench ablation`: ReTreVal against its ablations and Self-Refine on one
//! sequence of problems, the figures the README's ablation study quotes.
//!
//! Every variant runs the same problems in the same order, in this process, with the
//! response cache off (a repeated problem is asked again, so tokens are counted), each
//! memory-keeping variant on a fresh memory of its own (`ablation-<variant>-<seed>-<pid>`,
//! removed afterwards unless `--keep-memory`). All the (seed, variant) runs go side by
//! side, their calls under the one `--concurrency` limit; a run's results never depend
//! on timing, so each row is what the variant gives on its own. Printed: a table per variant (accuracy
//! overall and on the later problems, calls, tokens, tokens relative to Self-Refine),
//! then the claims' shape — memory's gain on the later problems, the share of the
//! no-backtracking run's failures that backtracking recovers, wins and regressions
//! against Self-Refine, and the token ratio.

use clap::Args;
use color_eyre::eyre::{eyre, Result};

use super::error::usage_bail;
use super::pipe::outln;
use super::run::every_call_failed;
use super::variants::{check_reserved, check_seeds, pooled, prepare, side_by_side, Outcome, Planned, Pooled, Ran};

#[derive(Args, Debug)]
pub(crate) struct AblationArgs {
    /// Problems by 0-based index, like `run --range` (math-demo takes indices past 41 as
    /// further passes over its problems in a shuffled order).
    #[arg(long, default_value = "0..100")]
    pub(crate) range: String,
    /// How many of the first problems count as "early": accuracy on the rest is where a
    /// memory learnt on the early ones shows.
    #[arg(long, default_value_t = 50)]
    pub(crate) split: usize,
    /// Only these variants (comma-separated): full, no-memory, no-backtrack, no-tools,
    /// no-cross, no-decompose, self-refine [default: all].
    #[arg(long, value_delimiter = ',')]
    pub(crate) variants: Vec<String>,
    /// Run every variant once per seed (comma-separated, e.g. `0,1,2,3,4`) and pool the
    /// figures: one seed's memory path can swing a few problems either way.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    pub(crate) seeds: Vec<u64>,
    /// Keep each variant's memory file (named in the output) instead of removing it.
    #[arg(long)]
    pub(crate) keep_memory: bool,
    /// Print the figures as one JSON object instead of tables.
    #[arg(long)]
    pub(crate) json: bool,
    /// Arguments every variant's `run` gets (task, data, provider, model, seed, ...),
    /// after `--`: e.g. `-- --task math500 --data test.jsonl --provider ollama`. The task
    /// is math-demo unless given; the provider is the run's default (sim).
    #[arg(last = true)]
    pub(crate) run_args: Vec<String>,
}

/// The variants, in the order they are run and printed: name and their own run flags.
const VARIANTS: &[(&str, &[&str])] = &[
    ("full", &["--method", "retreval"]),
    ("no-memory", &["--method", "retreval", "--no-memory"]),
    ("no-backtrack", &["--method", "retreval", "--no-backtrack"]),
    ("no-tools", &["--method", "retreval", "--no-tools"]),
    ("no-cross", &["--method", "retreval", "--no-cross"]),
    ("no-decompose", &["--method", "retreval", "--no-decompose"]),
    ("self-refine", &["--method", "self-refine"]),
];

fn pct(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{:.1}%", 100.0 * x))
}

pub(crate) fn ablation(args: AblationArgs) -> Result<()> {
    for v in &args.variants {
        if !VARIANTS.iter().any(|(name, _)| name == v) {
            let names: Vec<&str> = VARIANTS.iter().map(|(n, _)| *n).collect();
            usage_bail!("unknown variant {v:?}; the variants are {}", names.join(", "));
        }
    }
    check_seeds(&args.seeds)?;
    check_reserved(
        &args.run_args,
        &["--method", "--range", "--memory", "--cache", "--out", "--record", "--seed"],
        "ablation",
    )?;
    let chosen: Vec<&(&str, &[&str])> = VARIANTS
        .iter()
        .filter(|(name, _)| args.variants.is_empty() || args.variants.iter().any(|v| v == name))
        .collect();
    let pid = std::process::id();
    // Every (seed, variant) run is a group of its own: they all go side by side.
    let mut groups = Vec::new();
    for (seed, (name, flags)) in args.seeds.iter().flat_map(|s| chosen.iter().map(move |v| (*s, *v))) {
        let mut line: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        line.extend(["--range".into(), args.range.clone(), "--cache".into(), "off".into()]);
        let memory = (flags.contains(&"retreval") && !flags.contains(&"--no-memory"))
            .then(|| format!("ablation-{name}-{seed}-{pid}"));
        if let Some(m) = &memory {
            line.extend(["--memory".into(), m.clone()]);
        }
        if !args.run_args.iter().any(|a| a == "--task" || a.starts_with("--task=")) {
            line.extend(["--task".into(), "math-demo".into()]);
        }
        line.extend(args.run_args.iter().cloned());
        line.extend(["--seed".into(), seed.to_string()]);
        let (setup, problems) = prepare(&line)?;
        groups.push(vec![Planned { name: name.to_string(), seed, line, setup, problems, memory }]);
    }
    let json = args.json;
    let (mut finished, total_secs) = side_by_side(
        groups,
        args.keep_memory,
        |p| {
            if !json {
                outln!("running {} (seed {}): thoughtscope run {}", p.name, p.seed, p.line.join(" "));
            }
        },
        |_, _| {},
    )?;
    // In seed, then variant order (as they were planned).
    let place = |r: &Ran| {
        let seed = args.seeds.iter().position(|&s| s == r.planned.seed).unwrap_or(0);
        (seed, chosen.iter().position(|(n, _)| *n == r.planned.name).unwrap_or(0))
    };
    finished.sort_by_key(place);
    let mut outcomes = Vec::new();
    for Ran { planned, results, summary, secs, .. } in finished {
        if let Some(failure) = every_call_failed(&results) {
            return Err(eyre!("every call of {} to {} failed: {failure}", planned.name, summary.provider));
        }
        let memory = planned.memory.filter(|_| args.keep_memory);
        outcomes.push(Outcome { name: planned.name, seed: planned.seed, summary, results, secs, memory, span: None });
    }
    report(&args, &outcomes, total_secs);
    Ok(())
}

/// Over the seeds both ran: problems `a` solved that `b` did not, and the other way round.
fn wins(a: &Pooled, b: &Pooled) -> (usize, usize) {
    let mut won = 0;
    let mut lost = 0;
    for x in &a.runs {
        let Some(y) = b.runs.iter().find(|y| y.seed == x.seed) else { continue };
        for i in 0..x.results.len().min(y.results.len()) {
            match (x.solved(i), y.solved(i)) {
                (Some(true), Some(false)) => won += 1,
                (Some(false), Some(true)) => lost += 1,
                _ => {}
            }
        }
    }
    (won, lost)
}

fn report(args: &AblationArgs, outcomes: &[Outcome], total_secs: f64) {
    let split = args.split;
    let variants: Vec<Pooled> = VARIANTS.iter().filter_map(|(name, _)| pooled(outcomes, name)).collect::<Vec<_>>();
    let find = |name: &str| variants.iter().find(|v| v.name == name);
    let refine_tokens = find("self-refine").map(Pooled::tokens).filter(|&t| t > 0);
    let full = find("full");
    let memory_gain = full.zip(find("no-memory")).map(|(f, n)| (f.accuracy(split), n.accuracy(split)));
    // Backtracking's recoveries: problems the run without it failed that the full run solved.
    let recovered = full.zip(find("no-backtrack")).map(|(f, nb)| {
        let (mut back, mut failed) = (0, 0);
        for x in &nb.runs {
            let Some(y) = f.runs.iter().find(|y| y.seed == x.seed) else { continue };
            for i in (0..x.results.len()).filter(|&i| x.solved(i) == Some(false)) {
                failed += 1;
                back += usize::from(y.solved(i) == Some(true));
            }
        }
        (back, failed)
    });
    let versus = full.zip(find("self-refine")).map(|(f, r)| wins(f, r));
    if args.json {
        let rows: Vec<serde_json::Value> = variants
            .iter()
            .map(|v| {
                serde_json::json!({
                    "variant": v.name,
                    "n": v.n(),
                    "solved": v.solved(),
                    "accuracy": v.solved() as f64 / v.n().max(1) as f64,
                    "later_accuracy": v.accuracy(split),
                    "by_seed": v.per_seed().iter().map(|(s, a)| serde_json::json!({"seed": s, "accuracy": a})).collect::<Vec<_>>(),
                    "calls": v.calls(),
                    "tokens": v.tokens(),
                    "tokens_vs_self_refine": refine_tokens.map(|t| v.tokens() as f64 / t as f64),
                    "wall_s": v.secs(),
                    "memory": v.runs.iter().filter_map(|o| o.memory.clone()).collect::<Vec<_>>(),
                })
            })
            .collect();
        let out = serde_json::json!({
            "range": args.range,
            "split": split,
            "seeds": args.seeds,
            "wall_s": total_secs,
            "variants": rows,
            "memory_later_accuracy": memory_gain.map(|(w, wo)| serde_json::json!({"with": w, "without": wo})),
            "backtracking_recovers": recovered.map(|(b, f)| serde_json::json!({"recovered": b, "failed_without": f})),
            "versus_self_refine": versus.map(|(w, l)| serde_json::json!({"wins": w, "regressions": l})),
        });
        outln!("{out}");
        return;
    }
    let first = outcomes.first().map(|o| o.summary.n).unwrap_or(0);
    let later = first.saturating_sub(split);
    let seeds = args.seeds.len();
    let over = if seeds > 1 { format!(" (pooled over {seeds} seeds)") } else { String::new() };
    outln!();
    let later_head =
        if later > 0 { format!("problems {}–{first}", split + 1) } else { format!("after problem {split}") };
    let spread_head = if seeds > 1 { " accuracy by seed |" } else { "" };
    outln!("| variant | solved{over} | accuracy | {later_head} | calls | tokens | tokens ÷ self-refine |{spread_head}");
    outln!("|---|---|---|---|---|---|---|{}", if seeds > 1 { "---|" } else { "" });
    for v in &variants {
        let ratio = refine_tokens.map_or("—".into(), |t| format!("{:.2}×", v.tokens() as f64 / t as f64));
        let spread = if seeds > 1 {
            let each: Vec<String> = v.per_seed().iter().map(|(_, a)| format!("{:.0}", 100.0 * a)).collect();
            format!(" {} |", each.join(" "))
        } else {
            String::new()
        };
        outln!(
            "| {} | {}/{} | {} | {} | {} | {} | {} |{spread}",
            v.name,
            v.solved(),
            v.n(),
            pct(Some(v.solved() as f64 / v.n().max(1) as f64)),
            pct(v.accuracy(split)),
            v.calls(),
            v.tokens(),
            ratio
        );
    }
    outln!();
    if let Some((with, without)) = memory_gain {
        let gain = with.zip(without).map_or("—".into(), |(w, wo)| format!("{:+.1} pp", 100.0 * (w - wo)));
        let later = thoughtscope::engine::methods::count(later, "problem", "problems");
        outln!("memory: on the last {later}: {} with memory, {} without ({gain})", pct(with), pct(without));
    }
    if let Some((back, failed)) = recovered {
        let share = (failed > 0).then(|| back as f64 / failed as f64);
        let failed_n = thoughtscope::engine::methods::count(failed, "problem", "problems");
        outln!("backtracking: recovers {back} of the {failed_n} the run without it failed ({})", pct(share));
    }
    if let Some((won, lost)) = versus {
        let per = if lost > 0 {
            format!("{:.1} wins per regression", won as f64 / lost as f64)
        } else {
            "no regression".into()
        };
        outln!("against self-refine: {won} wins, {lost} regressions ({per})");
    }
    if let (Some(f), Some(t)) = (full, refine_tokens) {
        outln!("tokens: retreval {} vs self-refine {t} ({:.2}×)", f.tokens(), f.tokens() as f64 / t as f64);
    }
    outln!(
        "wall: {} runs side by side, their calls under one --concurrency limit, took {total_secs:.2} s in all",
        outcomes.len()
    );
    for o in outcomes.iter().filter(|o| o.memory.is_some()) {
        outln!("{} (seed {})'s memory is kept as {}", o.name, o.seed, o.memory.as_deref().unwrap_or_default());
    }
}
