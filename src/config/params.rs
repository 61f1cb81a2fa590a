//! The search parameters as a patch: every field optional. The command line fills
//! one from flags (it is flattened into `run`/`tui` as clap arguments), the config
//! file fills one from `[defaults]`, and [`ParamPatch::merge`] lays them over the
//! built-in [`Params`]: flag > file > default.
//!
//! A new parameter is one line in [`param_patch!`] below: its doc (the help line),
//! its clap attribute, its type and how the file reads it. It lands in the
//! [`Params`] field of the same name, or, if `Params` has none, in `Params::extra`
//! (the parameters of methods that keep their own, such as MCTS's `uct_c`).

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::engine::methods::rounds::{FeedbackSource, FirstPrompt};
use crate::engine::methods::tot_dfs::{ChildOrder, PruneRule, RunTo};
use crate::engine::{Evaluator, Generator, MethodKind, Params, Selection, ToolMode};

use super::Reader;

/// A value named by a word on the command line and in the config file, e.g. `--generator sample`.
/// The engine's enums stay free of clap: the names live here.
pub trait Named: Sized + Clone + Send + Sync + 'static {
    /// Every value with its name (and a line of help), in the order help lists them.
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)>;

    fn names() -> Vec<&'static str> {
        Self::values().into_iter().map(|(name, _, _)| name).collect()
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::values().into_iter().find(|(n, _, _)| *n == name).map(|(_, _, v)| v)
    }
}

/// A clap parser for a [`Named`] value: the names are the possible values shown in help.
pub fn named<T: Named>() -> impl TypedValueParser<Value = T> {
    let values = T::values().into_iter().map(|(name, help, _)| match help {
        Some(help) => PossibleValue::new(name).help(help),
        None => PossibleValue::new(name),
    });
    PossibleValuesParser::new(values)
        .try_map(|name: String| T::from_name(&name).ok_or_else(|| format!("unknown {name}")))
}

impl Named for MethodKind {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        crate::engine::methods::REGISTRY.iter().map(|info| (info.kind.label(), Some(info.about), info.kind)).collect()
    }
}

impl Named for Generator {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![("propose", None, Generator::Propose), ("sample", None, Generator::Sample)]
    }
}

impl Named for Evaluator {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![("value", None, Evaluator::Value), ("vote", None, Evaluator::Vote)]
    }
}

impl Named for Selection {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![("greedy", None, Selection::Greedy), ("sample", None, Selection::Sample)]
    }
}

impl Named for ToolMode {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![("text", None, ToolMode::Text), ("native", None, ToolMode::Native)]
    }
}

impl Named for FeedbackSource {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![
            ("self", Some("the same model checks the attempt"), FeedbackSource::SelfCheck),
            ("oracle", Some("the task's checker judges (no call)"), FeedbackSource::Oracle),
        ]
    }
}

impl Named for FirstPrompt {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![("cot", None, FirstPrompt::Cot), ("io", None, FirstPrompt::Io)]
    }
}

impl Named for ChildOrder {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![
            ("value", Some("evaluate all children, try the best valued first"), ChildOrder::Value),
            (
                "proposal",
                Some("try children by their proposal's own score, evaluating each when tried"),
                ChildOrder::Proposal,
            ),
        ]
    }
}

impl Named for PruneRule {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![
            ("threshold", Some("drop children valued below --threshold"), PruneRule::Threshold),
            (
                "task",
                Some("drop children the task calls dead ends (crosswords: a clue judged impossible)"),
                PruneRule::Task,
            ),
            ("none", Some("drop none"), PruneRule::None),
        ]
    }
}

impl Named for RunTo {
    fn values() -> Vec<(&'static str, Option<&'static str>, Self)> {
        vec![
            ("final", Some("stop at the first state of depth T"), RunTo::Final),
            ("cap", Some("go on to the state cap; output the deepest state visited"), RunTo::Cap),
        ]
    }
}

/// Defines [`ParamPatch`]: per field, its doc and clap attributes, its type, and the
/// [`Reader`] method (with arguments) that takes it from `[defaults]`.
macro_rules! param_patch {
    ($( $(#[$attr:meta])* $name:ident : $ty:ty = $read:ident($($arg:expr),*); )*) => {
        /// Method parameters, named as in the Tree-of-Thoughts paper. Unset ones come from
        /// the config file's [defaults], then the built-in defaults shown.
        #[derive(clap::Args, Debug, Clone, Default, PartialEq)]
        pub struct ParamPatch {
            $( $(#[$attr])* pub $name: Option<$ty>, )*
        }

        impl ParamPatch {
            /// The keys `[defaults]` accepts for search parameters.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($name)),*];

            pub(crate) fn read<W: FnMut(&str, String)>(reader: &mut Reader<'_, W>) -> ParamPatch {
                ParamPatch { $( $name: reader.$read(stringify!($name) $(, $arg)*), )* }
            }

            /// Each field set in `self`, else in `under`.
            pub fn or(&self, under: &ParamPatch) -> ParamPatch {
                ParamPatch { $( $name: self.$name.clone().or_else(|| under.$name.clone()), )* }
            }

            /// The set fields by name, as they are written in a session header.
            fn entries(&self) -> serde_json::Map<String, serde_json::Value> {
                let mut out = serde_json::Map::new();
                $(
                    if let Some(v) = &self.$name {
                        out.insert(stringify!($name).into(), serde_json::to_value(v).unwrap_or_default());
                    }
                )*
                out
            }
        }
    };
}

param_patch! {
    /// Search method [default: tot-bfs].
    #[arg(long, value_parser = named::<MethodKind>())]
    method: MethodKind = choice();
    /// MCTS: the exploration constant c of UCT [default: 1.0].
    #[arg(long)]
    uct_c: f64 = number(0.0);
    /// MCTS: iterations (select, expand, evaluate, back up) [default: 30].
    #[arg(long)]
    iterations: usize = whole(1);
    /// MCTS: levels to go on greedily from the best new child before backing up [default: 0].
    #[arg(long)]
    rollout_depth: usize = whole(0);
    /// b: states kept per step (tot-bfs) [default: 5].
    #[arg(long)]
    breadth: usize = whole(1);
    /// k: samples per state with `--generator sample` [default: 1].
    #[arg(long)]
    n_generate: u32 = whole(1);
    /// Evaluator samples per state (value) or per step (vote) [default: 3].
    #[arg(long)]
    n_evaluate: u32 = whole(0);
    /// [default: propose]
    #[arg(long, value_parser = named::<Generator>())]
    generator: Generator = choice();
    /// [default: value]
    #[arg(long, value_parser = named::<Evaluator>())]
    evaluator: Evaluator = choice();
    /// [default: greedy]
    #[arg(long, value_parser = named::<Selection>())]
    select: Selection = choice();
    /// T: thought steps (default: the task's, 4 for game24).
    #[arg(long)]
    steps: usize = whole(1);
    /// tot-dfs: prune children valued below this [default: 3].
    #[arg(long)]
    threshold: f64 = number(f64::MIN);
    /// tot-dfs: cap on states expanded [default: 100].
    #[arg(long)]
    max_states: usize = whole(1);
    /// k for io / cot / cot-sc [default: 10; 21 for react-cot-sc and cot-sc-react, as in the ReAct paper].
    #[arg(long)]
    samples: u32 = whole(1);
    /// react: most thought/action/observation steps [default: 7].
    #[arg(long)]
    max_steps: usize = whole(1);
    /// react: actions in the paper's text format (`Action i: Tool[arg]`), or as native tool
    /// calls (OpenAI `tools`, Anthropic `tool_use`) [default: text].
    #[arg(long, value_parser = named::<ToolMode>())]
    tool_mode: ToolMode = choice();
    /// cot-sc-react: back off to ReAct when the majority answer has fewer than this share of the samples
    /// [default: 0.5, the ReAct paper's n/2].
    #[arg(long)]
    majority_threshold: f64 = number(0.0);
    /// [default: 0.7]
    #[arg(long)]
    temperature: f32 = number(0.0);
    /// Keep malformed proposals as candidates, as the reference implementation does.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    lenient: bool = boolean();
    /// Seed for the method's own random choices and for `sim` [default: 0].
    #[arg(long)]
    seed: u64 = whole(0);
    /// self-refine: most refinements after the first answer, 1 to 50 [default: 4].
    #[arg(long)]
    rounds: usize = whole(1);
    /// reflexion: most trials, 1 to 20 [default: 3].
    #[arg(long)]
    trials: usize = whole(1);
    /// self-refine, reflexion and retreval: who judges an attempt, the model itself or the task's checker
    /// (no call; with self-refine, the ToT paper's IO + Refine) [default: self].
    #[arg(long, value_parser = named::<FeedbackSource>())]
    feedback: FeedbackSource = choice();
    /// self-refine: the prompt of the first answer [default: cot].
    #[arg(long, value_parser = named::<FirstPrompt>())]
    first: FirstPrompt = choice();
    /// retreval: complexity 1-5 → depth × branching: paper, official, or 1:2x2,2:2x3,3:3x3,4:4x4,5:5x4
    /// [default: paper].
    #[arg(long, value_name = "TABLE")]
    complexity_table: String = string();
    /// retreval: weight of the local self-assessment in a node's score, 0 to 1 [default: 0.6].
    #[arg(long)]
    local_weight: f64 = number(0.0);
    /// retreval: weight of the cross critique against siblings, 0 to 1 [default: 0.4].
    #[arg(long)]
    cross_weight: f64 = number(0.0);
    /// retreval: weight of the skepticism penalty on 1 − the approach's reliability, 0 to 1 [default: 0.4].
    #[arg(long)]
    skeptic_weight: f64 = number(0.0);
    /// retreval: decompose when the best score stays below this, 0 to 1 [default: 0.5].
    #[arg(long)]
    decompose_threshold: f64 = number(0.0);
    /// retreval: decompose only problems at least this complex, 1 to 5 [default: 3].
    #[arg(long)]
    decompose_min_complexity: u64 = whole(1);
    /// retreval: most subtasks of a decomposition, 2 to 4 [default: 4].
    #[arg(long)]
    max_subtasks: u64 = whole(1);
    /// retreval ablation: no cross-problem memory (no lessons, no updates, no skepticism penalty).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    no_memory: bool = boolean();
    /// retreval ablation: no typed-failure backtracking after a failed validation.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    no_backtrack: bool = boolean();
    /// retreval ablation: no tools (each attempt is one chain-of-thought call).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    no_tools: bool = boolean();
    /// retreval ablation: no cross critique (the local score takes its weight).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    no_cross: bool = boolean();
    /// retreval ablation: never decompose.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    no_decompose: bool = boolean();
    /// tot-dfs: the order children are tried in [default: the task's; value, or proposal for crosswords].
    #[arg(long, value_parser = named::<ChildOrder>())]
    child_order: ChildOrder = choice();
    /// tot-dfs: which tried children are dropped [default: the task's; threshold, or task for crosswords].
    #[arg(long, value_parser = named::<PruneRule>())]
    prune: PruneRule = choice();
    /// tot-dfs: prune nothing (the same as --prune none).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    no_prune: bool = boolean();
    /// tot-dfs: most children tried per state, 0 for all [default: the task's; 0, or 3 for crosswords].
    #[arg(long)]
    max_children: usize = whole(0);
    /// tot-dfs: stop at the first state of depth T, or go on to the state cap [default: the task's;
    /// final, or cap for crosswords].
    #[arg(long, value_parser = named::<RunTo>())]
    run_to: RunTo = choice();
}

impl ParamPatch {
    /// The one place parameters are merged: `flags` over `file` over the built-in defaults.
    pub fn merge(flags: &ParamPatch, file: &ParamPatch) -> Params {
        flags.or(file).params()
    }

    /// These parameters over the built-in defaults. Each set field replaces the
    /// [`Params`] field of its name, or goes to `Params::extra` if there is none.
    pub fn params(&self) -> Params {
        let base = Params::default();
        let method = self.method.unwrap_or(base.method);
        let samples = method.info().default_samples.unwrap_or(base.samples);
        let base = Params { method, samples, ..base };
        let serde_json::Value::Object(mut fields) = serde_json::to_value(&base).unwrap_or_default() else {
            return base;
        };
        fields.extend(self.entries());
        // Every field's type is its `Params` field's type (a test sets them all), so this cannot fail.
        serde_json::from_value(serde_json::Value::Object(fields)).unwrap_or(base)
    }
}
