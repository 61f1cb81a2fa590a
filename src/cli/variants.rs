//! What `bench ablation` and `bench compare` share: running `thoughtscope run <args>` in
//! this process once per variant and seed, and pooling each variant's runs.

use color_eyre::eyre::{bail, eyre, Result};

use thoughtscope::runtime::headless::{run_problems, ProblemResult, RunSetup, Summary};

use super::error::usage_bail;
use super::run::{setup_run, summarize};
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
pub(crate) fn prepare(args: &[String]) -> Result<(RunSetup, Vec<thoughtscope::tasks::Problem>)> {
    let mut full = vec!["thoughtscope".to_string(), "run".to_string()];
    full.extend_from_slice(args);
    let cli = super::parse_from(full).map_err(|e| eyre!(e.to_string()))?;
    let Some(Cmd::Run(run_args)) = cli.command else { bail!("the run arguments did not parse") };
    setup_run(&run_args)
}

/// Run `thoughtscope run <args>` in this process, after `adjust` has had its say on the
/// setup: each problem's result, the summary and the wall time in seconds.
pub(crate) fn run_variant(
    args: &[String],
    adjust: impl FnOnce(&mut RunSetup),
) -> Result<(Vec<ProblemResult>, Summary, f64)> {
    let (mut setup, problems) = prepare(args)?;
    adjust(&mut setup);
    let rt = tokio::runtime::Runtime::new()?;
    let started = std::time::Instant::now();
    let results = rt.block_on(run_problems(&setup, &problems, |_| {}));
    let secs = started.elapsed().as_secs_f64();
    let summary = summarize(&setup, &results, (secs * 1000.0) as u64);
    Ok((results, summary, secs))
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
