//! Method parameters: each method declares the ones it reads ([`ParamDecl`], in its
//! `MethodInfo::params`), and flags, `[defaults]` keys, range checks and the session
//! header's `params` all come from those declarations. Here: the method names, the
//! declaration types, the parameters every method reads ([`COMMON`]: `temperature`,
//! `seed`) and those of the tree searches' shared components ([`SearchParams`]).

mod decl;
mod set;

pub use decl::{choice_name, choices, Choice, DefaultValue, Kind, ParamDecl, Value};
pub use set::{ParamReader, Params};

use super::*;

/// A search method, by its registered name (`methods::REGISTRY`). Each method's
/// module defines its own `KIND`; sessions store the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MethodKind(pub(crate) &'static str);

impl MethodKind {
    pub fn label(self) -> &'static str {
        self.0
    }

    /// The registered method with this name.
    pub fn from_name(name: &str) -> Option<MethodKind> {
        methods::find(name).map(|info| info.kind)
    }

    /// Its registration (every `MethodKind` is registered: they come from the registry).
    pub fn info(self) -> &'static methods::MethodInfo {
        methods::find(self.0).unwrap_or(methods::REGISTRY[0])
    }

    /// Methods that follow a ReAct trajectory (thought, action, observation), alone
    /// or as a part of a hybrid.
    pub fn has_react_steps(self) -> bool {
        self.info().react != methods::ReactShape::None
    }
}

impl std::fmt::Display for MethodKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Serialize for MethodKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for MethodKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        MethodKind::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!("unknown method {name:?} (known: {})", methods::names().join(", ")))
        })
    }
}

/// A parameter outside what it accepts, in one line: its name (as in the session
/// header and `[defaults]`; the flag is the same with dashes), the value and the range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{name} (--{flag}) is {value}: {expected}", flag = name.replace('_', "-"))]
pub struct ParamError {
    pub name: String,
    pub value: String,
    pub expected: String,
}

/// Largest sample counts (`n_generate`, `n_evaluate`, `samples`): far above any
/// published setting, and small enough that one call's replies fit in memory.
pub const MAX_SAMPLES: u64 = 1000;

pub const TEMPERATURE: ParamDecl = ParamDecl {
    name: "temperature",
    help: "Sampling temperature of every model call",
    kind: Kind::Real { min: 0.0, max: 2.0 },
    default: DefaultValue::Real(0.7),
};

pub const SEED: ParamDecl = ParamDecl {
    name: "seed",
    help: "Seed for the method's own random choices and for `sim`",
    kind: Kind::Whole { min: 0, max: u64::MAX },
    default: DefaultValue::Whole(0),
};

/// What every method reads, after its own parameters: the engine makes its model calls
/// at `temperature` and its random choices from `seed`.
pub const COMMON: &[&ParamDecl] = &[&TEMPERATURE, &SEED];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generator {
    Propose,
    Sample,
}

impl Choice for Generator {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("propose", "one reply lists the next steps", Generator::Propose),
        ("sample", "k samples each write a next step", Generator::Sample),
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evaluator {
    Value,
    Vote,
}

impl Choice for Evaluator {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("value", "each state is valued on its own", Evaluator::Value),
        ("vote", "the model votes for the best of a step's states", Evaluator::Vote),
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    Greedy,
    Sample,
}

impl Choice for Selection {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("greedy", "the b best valued", Selection::Greedy),
        ("sample", "b drawn in proportion to value (with --seed)", Selection::Sample),
    ];
}

/// How a ReAct agent writes its actions: in the paper's text format (`Action i: Tool[arg]`,
/// with stop sequences), or as native tool calls (OpenAI `tools`, Anthropic `tool_use`),
/// where the reply's text is the thought and the tool call is the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolMode {
    #[default]
    Text,
    Native,
}

impl Choice for ToolMode {
    const CHOICES: &'static [(&'static str, &'static str, Self)] = &[
        ("text", "the paper's `Action i: Tool[arg]` lines", ToolMode::Text),
        ("native", "native tool calls (OpenAI `tools`, Anthropic `tool_use`)", ToolMode::Native),
    ];
}

impl ToolMode {
    pub fn label(self) -> &'static str {
        choice_name(self)
    }
}

impl From<ToolMode> for Value {
    fn from(mode: ToolMode) -> Value {
        Value::Word(mode.label().to_string())
    }
}

pub const GENERATOR: ParamDecl = ParamDecl {
    name: "generator",
    help: "How a state's children are made",
    kind: Kind::Choice(choices::<Generator>),
    default: DefaultValue::Word("propose"),
};

pub const N_GENERATE: ParamDecl = ParamDecl {
    name: "n_generate",
    help: "k: samples per state with --generator sample",
    kind: Kind::Whole { min: 1, max: MAX_SAMPLES },
    default: DefaultValue::Whole(1),
};

pub const EVALUATOR: ParamDecl = ParamDecl {
    name: "evaluator",
    help: "How states are scored",
    kind: Kind::Choice(choices::<Evaluator>),
    default: DefaultValue::Word("value"),
};

pub const N_EVALUATE: ParamDecl = ParamDecl {
    name: "n_evaluate",
    help: "Evaluator samples per state (value) or per step (vote)",
    kind: Kind::Whole { min: 1, max: MAX_SAMPLES },
    default: DefaultValue::Whole(3),
};

pub const STEPS: ParamDecl = ParamDecl {
    name: "steps",
    help: "T: thought steps",
    kind: Kind::Whole { min: 1, max: 1000 },
    default: DefaultValue::Unset("the task's, 4 for game24"),
};

pub const LENIENT: ParamDecl = ParamDecl {
    name: "lenient",
    help: "Keep malformed proposals as candidates, as the reference implementation does",
    kind: Kind::Flag,
    default: DefaultValue::Flag(false),
};

/// The parameters of [`SearchParams`], for the `MethodInfo::params` of a tree search.
pub const SEARCH: [&ParamDecl; 6] = [&GENERATOR, &N_GENERATE, &EVALUATOR, &N_EVALUATE, &STEPS, &LENIENT];

/// The task components a tree search drives (the generator and the evaluator with
/// their sample counts, the step count, leniency): the parameter struct every
/// tree-search method embeds in its own and hands to `Core` ([`Method::search`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchParams {
    pub generator: Generator,
    pub n_generate: u32,
    pub evaluator: Evaluator,
    pub n_evaluate: u32,
    /// `None`: the task's default.
    pub steps: Option<usize>,
    /// Keep malformed proposals as candidates, like the reference implementation,
    /// instead of rejecting them.
    pub lenient: bool,
}

impl SearchParams {
    pub fn read(p: &ParamReader) -> Result<SearchParams, ParamError> {
        // Both counts are at most MAX_SAMPLES, so they fit.
        let n = |decl| p.whole(decl).map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        Ok(SearchParams {
            generator: p.choice(&GENERATOR)?,
            n_generate: n(&N_GENERATE)?,
            evaluator: p.choice(&EVALUATOR)?,
            n_evaluate: n(&N_EVALUATE)?,
            steps: p.optional_count(&STEPS)?,
            lenient: p.flag(&LENIENT)?,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
