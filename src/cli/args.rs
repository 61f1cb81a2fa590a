//! Arguments shared by commands: what a run is (`run`, `tui`), the simulated
//! model's dials, and who answers forks of a replay.

use std::path::PathBuf;

use clap::Args;

use super::connect::{ProviderArgs, ToolArgs};
use super::params::ParamFlags;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct RunArgs {
    /// Task to solve [default: game24].
    #[arg(long)]
    pub(crate) task: Option<String>,
    /// Model provider: sim (offline default), openai, anthropic, replay, or a profile (ollama, vllm, llamacpp, ...).
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// Problems by 0-based index, like Python's range: `900..1000`, `..10`, `5`.
    #[arg(long, conflicts_with = "input")]
    pub(crate) range: Option<String>,
    /// One problem written out, e.g. "4 9 10 13".
    #[arg(long)]
    pub(crate) input: Option<String>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Write one JSON line per problem to this file.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Record sessions: a file for one problem, a directory for several.
    #[arg(long)]
    pub(crate) record: Option<PathBuf>,
    /// Directory of prompt templates overriding the built-in ones (same file names).
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
    /// How prompts are laid out: chat (a system message with the reply format, the examples as
    /// turns, the state last: for chat models) or reference (the papers' completion-style text)
    /// [default: chat for real providers, reference for sim, the recorded style for replay].
    #[arg(long, value_name = "STYLE")]
    pub(crate) prompt_style: Option<thoughtscope::engine::PromptStyle>,
    /// hotpotqa / fever: the questions (HotpotQA JSON, FEVER JSONL, or ReAct trajectory text).
    #[arg(long)]
    pub(crate) data: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) tools: ToolArgs,
    #[command(flatten)]
    pub(crate) search: ParamFlags,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) connect: ProviderArgs,
    /// `--provider replay`: the session file (or directory) whose recorded replies answer.
    #[arg(long)]
    pub(crate) replay_from: Option<PathBuf>,
    /// hotpotqa / fever ReAct: read and answer replies tolerantly (the default) or exactly as
    /// the ReAct paper's notebook did [default: reference when --replay-from sessions were
    /// recorded that way, e.g. imported trajectories; else tolerant].
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) react_mode: Option<ReactMode>,
    /// Most model calls in flight at once [default: 8].
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    /// Colour theme for the explorer (dark, light, high-contrast, or a user theme).
    #[arg(long)]
    pub(crate) theme: Option<String>,
    /// The named cross-problem memory a memory-keeping method (retreval) reads and updates,
    /// kept under the data directory's memory/ [default: <method>-<task>-<model>, one per model, e.g.
    /// retreval-math-demo-gpt-4o-mini].
    #[arg(long, value_name = "NAME")]
    pub(crate) memory: Option<String>,
    /// Breakpoint (repeatable): score<X, score>X, disagree, tool, tool=NAME, bad-call, parse-fail,
    /// provider-error, solution, step=N, calls>N, tokens>N, cost>X, thought~/RE/, reply~/RE/.
    /// The explorer pauses there; `run` notes each in the JSON results. Replaces the config's `break`.
    #[arg(long = "break", value_name = "COND")]
    pub(crate) breaks: Vec<String>,
}

/// How a ReAct agent's replies are read and answered (`--react-mode`).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReactMode {
    /// Any case, markdown, an action on the next line; an unreadable reply gets a format hint.
    Tolerant,
    /// As the notebook: a reply without `\nAction i: ` gets its second call for the action
    /// alone, an unknown action its `Invalid action: ...`, an action is read exactly.
    Reference,
}

impl ReactMode {
    pub(crate) fn rules(self) -> thoughtscope::tasks::react_text::ActionRules {
        use thoughtscope::tasks::react_text::ActionRules;
        match self {
            ReactMode::Tolerant => ActionRules::Tolerant,
            ReactMode::Reference => ActionRules::Reference,
        }
    }
}

/// The simulated model's error model (see `thoughtscope::engine::sim`).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct SimArgs {
    /// One dial on every sim error rate: 0 = a perfect model, 1 = the calibrated default.
    #[arg(long)]
    pub(crate) sim_noise: Option<f64>,
    /// Base rate of a proposed step with wrong arithmetic.
    #[arg(long)]
    pub(crate) sim_slip: Option<f64>,
    /// Base rate of a proposal that misses every step keeping the puzzle solvable.
    #[arg(long)]
    pub(crate) sim_miss: Option<f64>,
    /// Base rate of an evaluator sample naming the wrong class.
    #[arg(long)]
    pub(crate) sim_misjudge: Option<f64>,
    /// Base rate of a wrong final expression written from right steps.
    #[arg(long)]
    pub(crate) sim_answer: Option<f64>,
    /// Base rate of a wrong direct (io) answer.
    #[arg(long)]
    pub(crate) sim_io: Option<f64>,
    /// Base rate of a chain of thought going wrong at its first step.
    #[arg(long)]
    pub(crate) sim_cot: Option<f64>,
    /// Each sim call takes this long, so concurrency can be seen offline.
    #[arg(long, default_value_t = 0)]
    pub(crate) sim_latency_ms: u64,
    /// The simulated model thinks before each answer, as a reasoning model does: a short seeded
    /// trace kept apart from the answer (labelled simulated), shown and counted, never read.
    #[arg(long)]
    pub(crate) sim_thinking: bool,
}

/// Who answers a live run forked from a replay in the explorer (`f`).
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ForkArgs {
    /// The model of forks: sim (the default: the session's own sim settings) or a real provider.
    #[arg(long)]
    pub(crate) provider: Option<String>,
    #[command(flatten)]
    pub(crate) connect: ProviderArgs,
    /// Tools of forks: actions the session recorded are answered from it, new ones here.
    #[command(flatten)]
    pub(crate) tools: ToolArgs,
}
