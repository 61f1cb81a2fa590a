//! What `bench ablation` and `bench compare` share: running `thoughtscope run <args>` in
//! this process once per variant and seed — side by side under one concurrency limit —
//! and pooling each variant's runs.

use color_eyre::eyre::{bail, eyre, Result};

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{watch, Semaphore};

use thoughtscope::memory::MemoryStore;
use thoughtscope::runtime::headless::{run_problems_under, ProblemResult, RunSetup, Summary};
use thoughtscope::tasks::Problem;

use super::error::usage_bail;
use super::run::{every_call_failed, setup_run, summarize};
use super::Cmd;

/// One variant's run on one seed.
pub(crate) struct Outcome {
    pub(crate) name: String,
    pub(crate) seed: u64,
    pub(crate) summary: Summary,
    pub(crate) results: Vec<ProblemResult>,
    pub(crate) secs: f64,
    /// The variant's memory, when it kept one and it is kept afterwards.
    pub(crate) memory: Option<String>,
    /// When the run began and ended, in seconds from the start of a bench whose runs
    /// overlap (`bench compare`); `None` when runs go one after another.
    pub(crate) span: Option<(f64, f64)>,
}

impl Outcome {
    pub(crate) fn solved(&self, index: usize) -> Option<bool> {
        self.results.get(index).map(|r| r.correct)
    }

    pub(crate) fn tokens(&self) -> u64 {
        self.summary.prompt_tokens + self.summary.completion_tokens
    }
}

/// Parse `thoughtscope run <args>` and set the run up (checking every flag), without
/// running anything.
pub(crate) fn prepare<S: AsRef<str>>(args: &[S]) -> Result<(RunSetup, Vec<thoughtscope::tasks::Problem>)> {
    let mut full = vec!["thoughtscope".to_string(), "run".to_string()];
    full.extend(args.iter().map(|a| a.as_ref().to_string()));
    let cli = super::parse_from(full).map_err(|e| eyre!(e.to_string()))?;
    let Some(Cmd::Run(run_args)) = cli.command else { bail!("the run arguments did not parse") };
    setup_run(&run_args)
}

/// Run a prepared setup on its problems: each problem's result, the summary and the wall
/// time in seconds. Its calls go under `limit` when given (shared with runs beside it),
/// else under a `--concurrency` limit of its own; `progress` sees each problem's result.
pub(crate) async fn run_prepared(
    setup: &RunSetup,
    problems: &[thoughtscope::tasks::Problem],
    limit: Option<Arc<Semaphore>>,
    progress: impl FnMut(&ProblemResult),
) -> (Vec<ProblemResult>, Summary, f64) {
    let limit = limit.unwrap_or_else(|| Arc::new(Semaphore::new(setup.concurrency.max(1))));
    let started = std::time::Instant::now();
    let results = run_problems_under(setup, problems, limit, progress).await;
    let secs = started.elapsed().as_secs_f64();
    let summary = summarize(setup, &results, (secs * 1000.0) as u64);
    (results, summary, secs)
}

/// Run `thoughtscope run <args>` in this process, after `adjust` has had its say on the
/// setup: each problem's result, the summary and the wall time in seconds.
pub(crate) fn run_variant<S: AsRef<str>>(
    args: &[S],
    adjust: impl FnOnce(&mut RunSetup),
) -> Result<(Vec<ProblemResult>, Summary, f64)> {
    let (mut setup, problems) = prepare(args)?;
    adjust(&mut setup);
    let rt = tokio::runtime::Runtime::new()?;
    Ok(rt.block_on(run_prepared(&setup, &problems, None, |_| {})))
}

/// `--seeds`: one to a hundred.
pub(crate) fn check_seeds(seeds: &[u64]) -> Result<()> {
    if seeds.is_empty() || seeds.len() > 100 {
        usage_bail!("--seeds takes 1 to 100 seeds, e.g. 0,1,2");
    }
    Ok(())
}

/// The run flags the bench sets itself may not come after `--`.
pub(crate) fn check_reserved(run_args: &[String], reserved: &[&str], bench: &str) -> Result<()> {
    for flag in reserved {
        if run_args.iter().any(|a| a == flag || a.starts_with(&format!("{flag}="))) {
            usage_bail!("{flag} is the {bench}'s to set; leave it out of the arguments after --");
        }
    }
    Ok(())
}

/// One variant's runs, one per seed, pooled.
pub(crate) struct Pooled<'a> {
    pub(crate) name: &'a str,
    pub(crate) runs: Vec<&'a Outcome>,
}

impl Pooled<'_> {
    pub(crate) fn n(&self) -> usize {
        self.runs.iter().map(|o| o.results.len()).sum()
    }

    pub(crate) fn solved(&self) -> usize {
        self.runs.iter().map(|o| o.results.iter().filter(|r| r.correct).count()).sum()
    }

    /// Solved over problems run (0 when none ran).
    pub(crate) fn success_rate(&self) -> f64 {
        self.solved() as f64 / self.n().max(1) as f64
    }

    /// Accuracy on each run's problems from `from` on, pooled.
    pub(crate) fn accuracy(&self, from: usize) -> Option<f64> {
        let later: Vec<&ProblemResult> = self.runs.iter().flat_map(|o| o.results.iter().skip(from)).collect();
        (!later.is_empty()).then(|| later.iter().filter(|r| r.correct).count() as f64 / later.len() as f64)
    }

    /// What the model got wrong over every run's problems, by kind of reply.
    pub(crate) fn reply_health(&self) -> thoughtscope::engine::health::ReplyHealth {
        thoughtscope::engine::health::ReplyHealth::sum(self.runs.iter().map(|o| &o.summary.reply_health))
    }

    pub(crate) fn calls(&self) -> u64 {
        self.runs.iter().map(|o| o.summary.llm_calls).sum()
    }

    pub(crate) fn cache_hits(&self) -> u64 {
        self.runs.iter().map(|o| o.summary.cache_hits).sum()
    }

    pub(crate) fn prompt_tokens(&self) -> u64 {
        self.runs.iter().map(|o| o.summary.prompt_tokens).sum()
    }

    pub(crate) fn completion_tokens(&self) -> u64 {
        self.runs.iter().map(|o| o.summary.completion_tokens).sum()
    }

    pub(crate) fn tokens(&self) -> u64 {
        self.runs.iter().map(|o| o.tokens()).sum()
    }

    /// US dollars, when every run's model has a known price.
    pub(crate) fn cost(&self) -> Option<f64> {
        self.runs.iter().map(|o| o.summary.cost_usd).sum()
    }

    pub(crate) fn secs(&self) -> f64 {
        self.runs.iter().map(|o| o.secs).sum()
    }

    /// The variant's own wall time: from its first run's start to its last run's end
    /// when its runs overlap others (each run's time counted once), else their sum.
    pub(crate) fn wall(&self) -> f64 {
        let spans: Option<Vec<(f64, f64)>> = self.runs.iter().map(|o| o.span).collect();
        match spans {
            Some(spans) if !spans.is_empty() => {
                let start = spans.iter().map(|s| s.0).fold(f64::INFINITY, f64::min);
                let end = spans.iter().map(|s| s.1).fold(0.0, f64::max);
                (end - start).max(0.0)
            }
            _ => self.secs(),
        }
    }

    /// Each seed's accuracy, for the spread.
    pub(crate) fn per_seed(&self) -> Vec<(u64, f64)> {
        self.runs.iter().map(|o| (o.seed, o.summary.success_rate)).collect()
    }
}

/// The runs of the variant `name`, if it ran.
pub(crate) fn pooled<'a>(outcomes: &'a [Outcome], name: &str) -> Option<Pooled<'a>> {
    let runs: Vec<&Outcome> = outcomes.iter().filter(|o| o.name == name).collect();
    let name = runs.first()?.name.as_str();
    Some(Pooled { name, runs })
}

/// One run of a bench: a variant (a method, an ablation) on a seed, set up and ready.
pub(crate) struct Planned {
    pub(crate) name: String,
    pub(crate) seed: u64,
    /// Its `thoughtscope run` arguments, to say what runs.
    pub(crate) line: Vec<String>,
    pub(crate) setup: RunSetup,
    pub(crate) problems: Vec<Problem>,
    /// The fresh memory this run keeps, if its method keeps one.
    pub(crate) memory: Option<String>,
}

/// A run that [`side_by_side`] finished.
pub(crate) struct Ran {
    pub(crate) planned: Planned,
    pub(crate) results: Vec<ProblemResult>,
    pub(crate) summary: Summary,
    pub(crate) secs: f64,
    /// When it began and ended, in seconds from the start of them all.
    pub(crate) span: (f64, f64),
}

/// Whether the runs after the first may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    Waiting,
    Go,
    /// The first run failed every call: start nothing more.
    Stop,
}

/// Run the groups side by side, the runs of a group one after another, every call under
/// one concurrency limit (the runs' `--concurrency`, the largest if they differ). A run's
/// results never depend on timing, so each is what it would be on its own.
///
/// The first run goes alone until one of its problems has a call answered well (or it
/// ends), so a refused key or an unreachable server costs one run's calls, not all. A
/// run whose every call failed stops its group, and as the first stops them all.
/// `started` and `ended` hear of each run as it starts and as it ends well; each run's
/// memory is removed when it ends unless `keep_memory`. The runs come back in the order
/// they finished, with the wall time of them all.
pub(crate) fn side_by_side(
    groups: Vec<Vec<Planned>>,
    keep_memory: bool,
    started: impl Fn(&Planned),
    ended: impl Fn(&Planned, f64),
) -> Result<(Vec<Ran>, f64)> {
    let concurrency = groups.iter().flatten().map(|p| p.setup.concurrency).max().unwrap_or(1).max(1);
    let limit = Arc::new(Semaphore::new(concurrency));
    let (gate_tx, gate) = watch::channel(Gate::Waiting);
    let rt = tokio::runtime::Runtime::new()?;
    let began = Instant::now();
    let (started, ended) = (&started, &ended);
    let runs = groups.into_iter().enumerate().map(|(g, group)| {
        let (limit, mut gate, gate_tx) = (Arc::clone(&limit), gate.clone(), gate_tx.clone());
        async move {
            let mut done = Vec::new();
            if g > 0 && gate.wait_for(|go| *go != Gate::Waiting).await.map_or(true, |go| *go == Gate::Stop) {
                return done;
            }
            for (i, planned) in group.into_iter().enumerate() {
                let opener = g == 0 && i == 0;
                started(&planned);
                let start = began.elapsed().as_secs_f64();
                let answered = |r: &ProblemResult| {
                    if opener && r.calls > r.failed_calls {
                        gate_tx.send_if_modified(|go| std::mem::replace(go, Gate::Go) == Gate::Waiting);
                    }
                };
                let (results, summary, secs) =
                    run_prepared(&planned.setup, &planned.problems, Some(Arc::clone(&limit)), answered).await;
                if let (Some(name), false) = (&planned.memory, keep_memory) {
                    if let Ok(path) = MemoryStore::user().path(name) {
                        let _ = std::fs::remove_file(path);
                    }
                }
                // A run that failed every call stops its group (the ones after it would
                // find nothing of it in a shared cache), and as the opener stops them all.
                let failed = every_call_failed(&results).is_some();
                if opener {
                    let next = if failed { Gate::Stop } else { Gate::Go };
                    gate_tx.send_if_modified(|go| std::mem::replace(go, next) == Gate::Waiting);
                }
                if !failed {
                    ended(&planned, secs);
                }
                done.push(Ran { planned, results, summary, secs, span: (start, start + secs) });
                if failed {
                    break;
                }
            }
            done
        }
    });
    let finished: Vec<Ran> = rt.block_on(futures::future::join_all(runs)).into_iter().flatten().collect();
    Ok((finished, began.elapsed().as_secs_f64()))
}
