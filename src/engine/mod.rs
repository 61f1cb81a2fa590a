//! The sans-IO core. `Engine::handle(Input) -> Vec<Effect>` is the whole interface:
//! the engine owns the tree and the method's state, does no I/O and reads no clock.
//! Everything nondeterministic arrives as an `Input`; everything to be done leaves as
//! an `Effect`. This module must never import tokio, reqwest, ratatui, crossterm or clap
//! (checked by `tests/engine_is_sans_io.rs`).

mod core;
pub mod params;
mod prompt_style;
mod search;

pub mod breakpoint;
pub mod check;
pub mod command;
pub mod effect;
pub mod event;
pub mod health;
pub mod input;
pub mod methods;
pub mod recorded;
pub mod rng;
pub mod sim;
pub mod step;
pub mod task;
pub mod text;
pub mod tree;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use check::{CheckPurpose, CheckReply, CheckRequest};
pub use command::Command;
pub use effect::Effect;
pub use event::{Event, Outcome, RunMode};
pub use input::{Input, LlmReply, ToolReply};
pub use prompt_style::PromptStyle;
pub use step::{Step, StepPart};
pub use task::{
    AnswerKind, Capability, Feedback, JudgeRequest, Judgment, NativeTools, Proposal, ReactStep, ReactSteps, Task,
    TaskInfo, TreeSearch, ValueEvaluator, VoteEvaluator,
};
pub use tree::{Issue, Node, NodeId, NodeStatus, Note, Origin, Score, SearchTree};

use methods::{Method, Progress};
use rng::SplitMix64;

pub use self::core::{CallKind, CallRecord, Core, Duplicates, Pending};
pub use self::params::{
    Evaluator, Generator, MethodKind, ParamDecl, ParamError, ParamReader, Params, SearchParams, Selection, ToolMode,
    Value,
};
pub use self::search::{Engine, EngineError};

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
