//! One file per search method. A method is a state machine driven by the engine:
//! `advance` issues the next unit of work (a batch of calls), `settle` finishes a
//! batch once all its replies are in, and human commands reshape its state.
//!
//! To add a method (see `mcts.rs`, which was added this way):
//! 1. Write `methods/<name>.rs` with a struct implementing [`Method`] (derive `Clone`:
//!    the replay cursor checkpoints engines) and a `pub const INFO: MethodInfo` whose
//!    `kind` is `MethodKind("<name>")` — the name sessions and `--method` use.
//! 2. Add `pub mod <name>;` and `&<name>::INFO` to [`REGISTRY`] below.
//!
//! The engine's `Core` gives what a method needs: `generate` and `evaluate` with the
//! task's prompts, `issue` for calls of the method's own kind (`CallKind::Own(tag)`,
//! answered in `Method::on_reply`), `set_status`, `set_metrics` (numbers the panes show
//! on each node, e.g. N and Q), `log`, and `finalize` for the outcome. Parameters of
//! its own go in a struct of its own, read (and range-checked) from `Params` by
//! `MethodInfo::build` — new ones from `Params::extra`, flattened into the header;
//! `Method::view` gives the explorer its step counter, status parameters and the
//! scores pane's cut-off. Nothing outside the file names the method.

pub mod best_of_n;
pub mod cot;
pub mod cot_sc;
pub mod hybrid;
pub mod io;
pub mod mcts;
pub mod react;
pub mod reflexion;
pub mod retreval;
pub mod rounds;
mod samples;
pub mod self_refine;
pub mod tot_bfs;
pub mod tot_dfs;

use super::params::{ParamDecl, ParamReader, COMMON, EVALUATOR, GENERATOR, SEED, TEMPERATURE};
use super::task::Capability;
use super::{Core, MethodKind, NodeId, Outcome, ParamError, Params, SearchParams, Task};
use crate::protocol::Purpose;

/// A count with its noun in agreement, for log lines: `count(1, "state", "states")` is
/// `1 state`, `count(2, ...)` is `2 states`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The noun that agrees with `n`: `noun(1, "vote", "votes")` is `vote` (for `1 of 1 vote`).
pub fn noun<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// What a call to `advance` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// Issued this many calls (at least one).
    Issued(usize),
    /// Changed state without calls; call `advance` again.
    Moved,
    /// Nothing can be done until a person acts; the reason goes to the log.
    Stuck(String),
}

/// Cloneable (through `dyn-clone`) so an engine can be checkpointed for replay.
pub trait Method: dyn_clone::DynClone + Send {
    fn advance(&mut self, core: &mut Core) -> Progress;
    /// All calls are answered: close the current batch (select, sort, ...).
    fn settle(&mut self, core: &mut Core);
    fn done(&self) -> bool;
    /// The outcome; called once when `done` turns true.
    fn outcome(&mut self, core: &mut Core) -> Outcome;
    /// New children of `parent` arrived.
    fn on_children(&mut self, core: &mut Core, parent: NodeId, children: &[NodeId], by_hand: bool);
    fn on_prune(&mut self, _core: &mut Core, _node: NodeId) {}
    /// A person added `new` as an edited version of `original`.
    fn on_edit(&mut self, _core: &mut Core, _original: NodeId, _new: NodeId) {}
    /// A person rewrote `node` as `text`. Methods that follow one trajectory (ReAct)
    /// handle it themselves and return the new node; `None` leaves it to the engine's
    /// tree-search edit (a new sibling, evaluated).
    fn edit(&mut self, _core: &mut Core, _node: NodeId, _text: &str) -> Option<Result<NodeId, String>> {
        None
    }
    /// ReAct: the model's reply for the step after `node` (its text and any native tool calls).
    fn on_act(&mut self, _core: &mut Core, _node: NodeId, _reply: &crate::protocol::Completion) {}
    /// ReAct: the step's model call failed. The failure is no text for the model: nothing
    /// of it goes into a later prompt (a context overflow stops the branch).
    fn on_act_failed(&mut self, _core: &mut Core, _node: NodeId, _error: &crate::protocol::CallError) {}
    /// ReAct: the observation for `node`'s action.
    fn on_tool(&mut self, _core: &mut Core, _node: NodeId, _result: crate::protocol::ToolResult) {}
    /// Leave the current branch, or go back to `to` if given; `Err` says why not.
    fn backtrack(&mut self, core: &mut Core, to: Option<NodeId>) -> Result<(), String>;
    /// Why a backtrack would be refused now, asked before a person is asked for a cause
    /// (`None`: it may go ahead; the backtrack itself still checks).
    fn backtrack_refusal(&self, _core: &Core) -> Option<String> {
        None
    }
    /// A person's backtrack naming why the branch failed (one of `MethodView::backtrack_causes`).
    fn backtrack_because(&mut self, core: &mut Core, to: Option<NodeId>, _cause: &str) -> Result<(), String> {
        self.backtrack(core, to)
    }
    fn continue_from(&mut self, core: &mut Core, node: NodeId) -> Result<(), String>;
    /// A reply to one of the method's own calls (`CallKind::Own(tag)`), successful.
    fn on_reply(&mut self, _core: &mut Core, _node: NodeId, _tag: u32, _reply: &crate::protocol::LlmResponse) {}
    /// What the explorer shows of the method (step counter, cut-off, parameters).
    fn view(&self, core: &Core) -> MethodView {
        MethodView { params: core.params.method.label().to_string(), ..MethodView::default() }
    }
    /// A tree search's generator and evaluator settings (from the parameters it
    /// declared), which `Core` uses for its calls and for a person's expand,
    /// re-evaluate and edit; `None` for a method that searches no tree of thoughts.
    fn search(&self) -> Option<SearchParams> {
        None
    }
}

/// How a method's run reads as ReAct: for the run's summary (steps, which part
/// answered), the explorer's transcript pane and its edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReactShape {
    /// No ReAct trajectory.
    None,
    /// The run is one ReAct trajectory (react): its steps are the answered trajectory's depth.
    Whole,
    /// A ReAct part beside a CoT-SC part (the hybrids): steps are the answered act calls,
    /// the summary counts which part answered, and the transcript shows the trajectory
    /// when a ReAct step is selected.
    Part,
}

/// What a method needs of its task with given parameters: capabilities beyond the
/// core, and the purposes of the calls it makes (what a simulated player must answer);
/// and what it makes do with on a task that lacks them, if anything (best-of-n scores
/// with the task's evaluator, or else with a verifier call).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Needs {
    pub capabilities: Vec<Capability>,
    pub calls: Vec<Purpose>,
    /// Needs that serve as well when these are not met.
    pub otherwise: Option<Box<Needs>>,
}

impl Needs {
    pub fn of(capabilities: &[Capability], calls: &[Purpose]) -> Needs {
        Needs { capabilities: capabilities.to_vec(), calls: calls.to_vec(), otherwise: None }
    }

    /// These needs, or where a task lacks them, `alternative` (tried in order).
    pub fn or_else(mut self, alternative: Needs) -> Needs {
        match &mut self.otherwise {
            Some(next) => **next = std::mem::take(next.as_mut()).or_else(alternative),
            None => self.otherwise = Some(Box::new(alternative)),
        }
        self
    }

    /// What `task` lacks of these needs: empty when they or an alternative are met; else
    /// what each way lacks (a part of a capability it lacks whole, such as the evaluator
    /// of a tree search it cannot do, is not listed apart).
    pub fn lacking(&self, task: &dyn Task) -> Vec<Capability> {
        let lacking: Vec<Capability> = self.capabilities.iter().copied().filter(|c| !c.of(task)).collect();
        if lacking.is_empty() {
            return lacking;
        }
        let mut missing: Vec<Capability> =
            lacking.iter().copied().filter(|c| c.part_of().is_none_or(|whole| !lacking.contains(&whole))).collect();
        if let Some(alternative) = &self.otherwise {
            let also = alternative.lacking(task);
            if also.is_empty() {
                return also;
            }
            for c in also {
                if !missing.contains(&c) {
                    missing.push(c);
                }
            }
        }
        missing
    }

    /// What a tree search needs with these parameters: the steps, the generator's calls
    /// and the chosen evaluator with its calls.
    pub fn tree_search(p: &Params) -> Needs {
        let (evaluator, judged) = match p.word(EVALUATOR.name) {
            Some("vote") => (Capability::VoteEvaluator, Purpose::Vote),
            _ => (Capability::ValueEvaluator, Purpose::Value),
        };
        let generated = match p.word(GENERATOR.name) {
            Some("sample") => Purpose::Sample,
            _ => Purpose::Propose,
        };
        Needs::of(&[Capability::TreeSteps, evaluator], &[generated, judged])
    }

    /// What ReAct steps need in the tool mode of these parameters.
    pub fn react(p: &Params) -> Needs {
        match p.word(react::TOOL_MODE.name) {
            Some("native") => Needs::of(&[Capability::ReactSteps, Capability::NativeTools], &[Purpose::Act]),
            _ => Needs::of(&[Capability::ReactSteps], &[Purpose::Act]),
        }
    }

    /// These needs and `more`'s.
    pub fn and(mut self, more: Needs) -> Needs {
        for c in more.capabilities {
            if !self.capabilities.contains(&c) {
                self.capabilities.push(c);
            }
        }
        for p in more.calls {
            if !self.calls.contains(&p) {
                self.calls.push(p);
            }
        }
        self
    }
}

/// A method's registration: its name (in sessions and on the command line), a line
/// for help, and how to build its state for a run.
pub struct MethodInfo {
    pub kind: MethodKind,
    pub about: &'static str,
    /// Whether it follows a ReAct trajectory, alone or as a part.
    pub react: ReactShape,
    /// Calls the task's tools (ReAct steps, ReTreVal's solves), so `--tool-mode` applies to it.
    pub uses_tools: bool,
    /// What it needs of a task with these parameters (the registry answers "which methods
    /// work on this task" from it, and the engine refuses a task that lacks a need).
    pub needs: fn(&Params) -> Needs,
    /// Every parameter it reads, besides [`COMMON`] (`temperature`, `seed`), in the
    /// order help lists them: its own and shared ones (the same declaration, or one
    /// with another default, as the hybrids' `samples`).
    pub params: &'static [&'static ParamDecl],
    /// Whether a run with these parameters reads and updates a cross-problem memory
    /// (the runtime then loads the named memory, records it in each session's header
    /// and saves it after each problem). [`no_memory`] for methods without one.
    pub wants_memory: fn(&Params) -> bool,
    /// Reads the method's parameters (each checked as it is read) and builds its state.
    pub build: fn(&ParamReader) -> Result<Box<dyn Method>, ParamError>,
}

impl MethodInfo {
    /// Every parameter the method reads: its own, then [`COMMON`].
    pub fn declared(&self) -> Vec<&'static ParamDecl> {
        self.params.iter().chain(COMMON).copied().collect()
    }

    /// Its declaration of `name`, if it reads it.
    pub fn param(&self, name: &str) -> Option<&'static ParamDecl> {
        self.declared().into_iter().find(|d| d.name == name)
    }
}

impl MethodInfo {
    /// Whether it searches a tree of the task's steps with these parameters.
    pub fn searches_tree(&self, params: &Params) -> bool {
        (self.needs)(params).capabilities.contains(&Capability::TreeSteps)
    }
}

/// Every method, in the order help lists them: one line each.
pub const REGISTRY: &[&MethodInfo] = &[
    &io::INFO,
    &cot::INFO,
    &cot_sc::INFO,
    &tot_bfs::INFO,
    &tot_dfs::INFO,
    &react::INFO,
    &hybrid::REACT_COT_SC_INFO,
    &hybrid::COT_SC_REACT_INFO,
    &mcts::INFO,
    &self_refine::INFO,
    &reflexion::INFO,
    &retreval::INFO,
    &best_of_n::INFO,
];

/// What the method of `params` needs (with `params`).
pub fn needs(params: &Params) -> Needs {
    (params.method.info().needs)(params)
}

/// The capabilities `task` lacks for the method of `params` (see [`Needs::lacking`]).
pub fn missing(task: &dyn Task, params: &Params) -> Vec<Capability> {
    needs(params).lacking(task)
}

/// The methods that work on `task` with these parameters (each with the method swapped
/// in), in the registry's order.
pub fn serving(task: &dyn Task, params: &Params) -> Vec<&'static MethodInfo> {
    REGISTRY.iter().copied().filter(|info| missing(task, &params.switched(info.kind)).is_empty()).collect()
}

/// Whether `task` can serve the method of `params`: `Err` names what it lacks and
/// the methods that work.
pub fn check_serves(task: &dyn Task, params: &Params) -> Result<(), Unsupported> {
    let missing = missing(task, params);
    if missing.is_empty() {
        return Ok(());
    }
    let working: Vec<&'static str> = serving(task, params).iter().map(|m| m.kind.label()).collect();
    // Methods the parameters given rule out that work with their own defaults (react with
    // --tool-mode native on a task without a native prompt works in text mode): named too,
    // with the settings that stand in their way.
    let mut unless: Vec<String> = Vec::new();
    let elsewhere: Vec<&'static str> = REGISTRY
        .iter()
        .filter(|info| !working.contains(&info.kind.label()))
        .filter(|info| self::missing(task, &Params::new(info.kind)).is_empty())
        .map(|info| {
            let defaults = Params::new(info.kind);
            for decl in info.declared() {
                let given = params.get(decl.name);
                if given.is_some() && given != defaults.get(decl.name) {
                    let value = match given {
                        Some(crate::engine::params::Value::Word(w)) => w.clone(),
                        other => other.map(ToString::to_string).unwrap_or_default(),
                    };
                    let setting = format!("--{} {value}", decl.name.replace('_', "-"));
                    if !unless.contains(&setting) {
                        unless.push(setting);
                    }
                }
            }
            info.kind.label()
        })
        .collect();
    let also = match (elsewhere.is_empty(), unless.is_empty()) {
        (true, _) => None,
        (false, true) => Some(format!("; and {} with their default parameters", elsewhere.join(", "))),
        (false, false) => Some(format!(
            "; and {} without {}",
            elsewhere.join(", "),
            crate::engine::text::and_list(&unless.iter().map(String::as_str).collect::<Vec<_>>())
        )),
    }
    .map(Box::new);
    Err(Unsupported { task: task.name().to_string(), method: params.method, missing, working, also })
}

/// A method its task cannot serve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{task} has no {}; methods that work: {}{}", crate::engine::text::and_list(&self.missing.iter().map(|c| c.describe()).collect::<Vec<_>>()), if self.working.is_empty() { "none".to_string() } else { self.working.join(", ") }, self.also.as_deref().map_or("", String::as_str))]
pub struct Unsupported {
    pub task: String,
    pub method: MethodKind,
    pub missing: Vec<Capability>,
    pub working: Vec<&'static str>,
    /// The methods that work with their own defaults but not with the parameters given,
    /// and the settings in their way (`; and react without --tool-mode native`), or empty.
    pub also: Option<Box<String>>,
}

impl Unsupported {
    /// The refusal as the command line says it: `--task T --method M: T has no ...`.
    pub fn for_flags(&self) -> String {
        format!("--task {} --method {}: {self}", self.task, self.method)
    }
}

/// `MethodInfo::wants_memory` of a method that keeps no memory.
pub fn no_memory(_: &Params) -> bool {
    false
}

pub fn find(name: &str) -> Option<&'static MethodInfo> {
    REGISTRY.iter().copied().find(|info| info.kind.0 == name)
}

/// The methods that read the parameter `name`, in registry order.
pub fn readers_of(name: &str) -> Vec<MethodKind> {
    REGISTRY.iter().filter(|info| info.param(name).is_some()).map(|info| info.kind).collect()
}

/// A parameter some method declares, with the methods that read it and each one's default.
#[derive(Debug, Clone)]
pub struct SharedParam {
    /// The first declaration (its name, help and kind are every reader's: a test checks it).
    pub decl: &'static ParamDecl,
    pub readers: Vec<(MethodKind, super::params::DefaultValue)>,
}

impl SharedParam {
    /// Whether every method reads it.
    pub fn everyone(&self) -> bool {
        self.readers.len() == REGISTRY.len()
    }
}

/// Every parameter any method declares, once each: [`COMMON`] first, then in registry
/// and declaration order. The command line's flags and `[defaults]`'s keys are these.
pub fn all_params() -> Vec<SharedParam> {
    let mut all: Vec<SharedParam> = Vec::new();
    let order = COMMON.iter().copied().chain(REGISTRY.iter().flat_map(|info| info.params.iter().copied()));
    for decl in order {
        if all.iter().any(|p| p.decl.name == decl.name) {
            continue;
        }
        let readers =
            REGISTRY.iter().filter_map(|info| info.param(decl.name).map(|d| (info.kind, d.default))).collect();
        all.push(SharedParam { decl, readers });
    }
    all
}

/// The registered names, for help and errors.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|info| info.kind.0).collect()
}

dyn_clone::clone_trait_object!(Method);

/// A method built from its parameters, with the settings `Core` applies for it.
pub struct Built {
    pub method: Box<dyn Method>,
    pub temperature: f32,
    pub seed: u64,
    /// The tree search's components, if it is one ([`Method::search`]).
    pub search: Option<SearchParams>,
    /// The parameters read, in order (every one the method declares: a test checks it).
    pub read: Vec<&'static str>,
}

/// Build the method `params` names from them: the common parameters are read for
/// `Core`, the rest by the method's `build`.
pub fn build(params: &Params) -> Result<Built, ParamError> {
    let reader = params.reader();
    // Within 0..=2, so the f32 is the number given.
    let temperature = reader.real(&TEMPERATURE)? as f32;
    let seed = reader.whole(&SEED)?;
    let method = (params.method.info().build)(&reader)?;
    let search = method.search();
    Ok(Built { method, temperature, seed, search, read: reader.names_read() })
}

/// What the explorer shows of a method's state, so no pane needs to know the method.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodView {
    /// The method and its parameters, for the status bar (`tot-bfs b=5 n=3 propose/value`).
    pub params: String,
    /// The method's own step counter (BFS steps, DFS expansions, ReAct steps, MCTS iterations).
    pub step: usize,
    /// What `step` counts, e.g. `step`, `iteration`.
    pub step_noun: &'static str,
    /// The scores pane's cut-off among the current candidates, if the method has one.
    pub cutoff: Option<Cutoff>,
    /// Which nodes the scores pane ranks.
    pub candidates: Candidates,
    /// A vote over sampled answers (CoT-SC and the hybrids' CoT-SC part): the scores
    /// pane shows its histogram and the tree labels samples by their answer.
    pub votes: Option<Votes>,
    /// The failure causes a person can name when backtracking (`b` asks for one when
    /// this is not empty); the method reads it in `Method::backtrack_because`.
    pub backtrack_causes: &'static [&'static str],
}

/// Which nodes the scores pane ranks as the current round of candidates.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Candidates {
    /// The latest scored node's siblings (a DFS expansion, a ReAct step).
    #[default]
    Siblings,
    /// The latest scored node's whole depth (a BFS step).
    ByDepth,
    /// The nodes the method names: a round whose candidates are not siblings, e.g.
    /// ReTreVal's attempts, each scored on its own last step.
    These(Vec<NodeId>),
}

/// The answers sampled so far and how they vote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Votes {
    /// One entry per (normalised) answer, most votes first; ties keep the order the
    /// answers were first seen, so the first entry is the majority the method takes.
    pub tallies: Vec<Tally>,
    /// Samples that came back (the n the votes are out of), counting those without an answer.
    pub samples: usize,
    /// Samples asked for.
    pub asked: usize,
    /// cot-sc-react: the share of the n votes the majority needs (`majority_threshold`).
    pub threshold: Option<f64>,
    /// Each sample with the normalised answer it votes for.
    pub answers: Vec<(NodeId, String)>,
}

/// The votes for one normalised answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Tally {
    pub answer: String,
    pub votes: usize,
    /// The first sample that gave it (the majority's representative).
    pub first: NodeId,
}

impl Votes {
    /// The answer `node` votes for, if it is a sample with one.
    pub fn answer_of(&self, node: NodeId) -> Option<&str> {
        self.answers.iter().find(|(n, _)| *n == node).map(|(_, a)| a.as_str())
    }

    /// Votes the majority needs (threshold × n), if there is a threshold.
    pub fn needed(&self) -> Option<f64> {
        self.threshold.map(|t| t * self.samples as f64)
    }
}

impl Default for MethodView {
    fn default() -> Self {
        MethodView {
            params: String::new(),
            step: 0,
            step_noun: "step",
            cutoff: None,
            candidates: Candidates::Siblings,
            votes: None,
            backtrack_causes: &[],
        }
    }
}

/// Where the scores pane draws its cut-off line.
#[derive(Debug, Clone, PartialEq)]
pub enum Cutoff {
    /// After the first `n` usable candidates (a beam).
    Beam { n: usize, label: String },
    /// Before the first candidate valued below `value`.
    Threshold { value: f64, label: String },
}

impl Cutoff {
    pub fn label(&self) -> &str {
        match self {
            Cutoff::Beam { label, .. } | Cutoff::Threshold { label, .. } => label,
        }
    }
}

/// Stable sort by value, descending (unscored last): the reference's
/// `sorted(ids, key=value, reverse=True)`, which keeps ties in their original order.
pub fn rank_by_value(core: &Core, nodes: &[NodeId]) -> Vec<NodeId> {
    let mut ranked = nodes.to_vec();
    let v = |id: &NodeId| core.tree.value(*id).unwrap_or(f64::NEG_INFINITY);
    ranked.sort_by(|a, b| v(b).partial_cmp(&v(a)).unwrap_or(std::cmp::Ordering::Equal));
    ranked
}

#[cfg(test)]
mod hybrid_tests;

#[cfg(test)]
mod react_chat_tests;
#[cfg(test)]
mod react_native_tests;

#[cfg(test)]
mod react_context_tests;
