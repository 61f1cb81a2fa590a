//! Demo sessions the project records itself with the simulated model (in
//! `sessions/`, bundled into the binary): each shows one idea of search over
//! thoughts, narrated by captions (`caption` records tied to input positions) that
//! the explorer shows during playback. The captions are written from what the
//! recorded run did (its events and commands), so they cannot tell a different story.
//! `thoughtscope record-demos DIR` regenerates them deterministically.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::arith::parse_numbers;
use crate::arith::steps::moves;
use crate::engine::sim::SimConfig;
use crate::engine::{Command, Engine, Event, Input, NodeId, Params, Task};
use crate::llm::sim::SimProvider;
use crate::runtime::headless::{header_for, RunSetup};
use crate::runtime::tools::ToolRunner;
use crate::runtime::{sync, Run, StopPolicy};
use crate::session::{Header, MemorySnapshot, Record, Session, SessionWriter};
use crate::tasks::game24::solvable;
use crate::tasks::game24::Game24;
use crate::tasks::{Problem, SimPlayers, TaskOptions, TaskSource};

mod about;
use about::*;

/// A bundled demo: its file name, title and text.
pub struct Demo {
    pub file: &'static str,
    pub title: &'static str,
    pub text: &'static str,
}

pub const DEMOS: [Demo; 9] = [
    Demo { file: "bfs-solved.jsonl", title: BFS_TITLE, text: include_str!("../sessions/bfs-solved.jsonl") },
    Demo { file: "dfs-backtracks.jsonl", title: DFS_TITLE, text: include_str!("../sessions/dfs-backtracks.jsonl") },
    Demo { file: "edit-rescues.jsonl", title: EDIT_TITLE, text: include_str!("../sessions/edit-rescues.jsonl") },
    Demo { file: "mcts.jsonl", title: MCTS_TITLE, text: include_str!("../sessions/mcts.jsonl") },
    Demo { file: "cot-sc-vote.jsonl", title: COT_SC_TITLE, text: include_str!("../sessions/cot-sc-vote.jsonl") },
    Demo { file: "react-edit.jsonl", title: REACT_TITLE, text: include_str!("../sessions/react-edit.jsonl") },
    Demo {
        file: "retreval-learns.jsonl",
        title: RETREVAL_LEARNS_TITLE,
        text: include_str!("../sessions/retreval-learns.jsonl"),
    },
    Demo {
        file: "retreval-uses.jsonl",
        title: RETREVAL_USES_TITLE,
        text: include_str!("../sessions/retreval-uses.jsonl"),
    },
    Demo { file: "thinking-bfs.jsonl", title: THINKING_TITLE, text: include_str!("../sessions/thinking-bfs.jsonl") },
];

/// Load a bundled demo as a session (named after its file in `sessions/`).
pub fn load(demo: &Demo) -> Result<Session, String> {
    Session::parse(demo.text, &PathBuf::from("sessions").join(demo.file)).map_err(|e| e.to_string())
}

fn setup(params: Params, sim: SimConfig) -> (RunSetup, Arc<Game24>, SimProvider) {
    let task = Arc::new(Game24::builtin());
    let (setup, sim) = setup_for(Arc::clone(&task) as Arc<dyn TaskSource>, params, sim);
    (setup, task, sim)
}

fn setup_for(task: Arc<dyn TaskSource>, params: Params, sim: SimConfig) -> (RunSetup, SimProvider) {
    let provider = SimProvider::new(sim.clone(), &SimPlayers);
    let setup = RunSetup {
        task,
        params,
        provider: Arc::new(SimProvider::new(sim.clone(), &SimPlayers)),
        sim: Some(sim),
        concurrency: 1,
        record: None,
        limits: Default::default(),
        replay_tools: None,
        unjudged: false,
        // Demos never read or write a person's memory files.
        memory: None,
    };
    (setup, provider)
}

/// A run being recorded, the sim answering its calls, and (for tasks with tools) the
/// tools answering its actions, each branch from the tool state of the step it
/// continues (as in a live run: an edit's branch does not see the abandoned one's pages
/// or lookup cursor).
struct Recording<'a> {
    run: Run,
    sim: &'a SimProvider,
    tools: Option<ToolRunner>,
}

type Recorder<'a> = Recording<'a>;

fn step(rec: &mut Recorder, inputs: Vec<Input>) -> Result<Vec<Event>, String> {
    let Recording { run, sim, tools } = rec;
    let Some(runner) = tools.as_mut() else {
        return sync::drive(run, inputs, |r| sim.answer(r)).map_err(|e| e.to_string());
    };
    sync::drive_with_tools(run, inputs, |r| sim.answer(r), sync::tools_of(runner)).map_err(|e| e.to_string())
}

fn start<'a>(
    setup: &RunSetup,
    sim: &'a SimProvider,
    problem: &Problem,
    out: Option<(&Path, &str)>,
) -> Result<Recorder<'a>, String> {
    start_from(setup, sim, problem, out, crate::memory::Memory::default())
}

/// [`start`] from `memory` (for a method that keeps one).
fn start_from<'a>(
    setup: &RunSetup,
    sim: &'a SimProvider,
    problem: &Problem,
    out: Option<(&Path, &str)>,
    memory: crate::memory::Memory,
) -> Result<Recorder<'a>, String> {
    let task = &setup.task;
    let mut engine = Engine::new(Arc::clone(task) as Arc<dyn Task>, &problem.input, setup.params.clone());
    // A method that keeps a memory starts from the one given (demos never touch the
    // person's memory files), recorded in the header so the demo replays exactly.
    let memory = (setup.params.method.info().wants_memory)(&setup.params)
        .then(|| MemorySnapshot::new(crate::runtime::memory::shared_name(&setup.params, task.name()), memory));
    engine.set_memory(memory.as_ref().map(|m| m.memory.clone()));
    let writer = match out {
        Some((path, note)) => {
            let mut header: Header = header_for(setup, problem);
            header.note = Some(note.to_string());
            header.memory = memory;
            // Bundled into the program: the demo holds its memory itself.
            Some(SessionWriter::create_self_contained(path, &header).map_err(|e| e.to_string())?)
        }
        None => None,
    };
    let tools = task.tools().map(ToolRunner::new);
    Ok(Recording { run: Run::new(engine, writer, StopPolicy::default()), sim, tools })
}

/// Narrate a demo's session (captions from what it recorded), then close it with its
/// end line (wall time 0, so recordings are reproducible): a session without one
/// replays as cut short.
fn end(rec: &mut Recorder, title: &str) -> Result<(), String> {
    let writer = rec.run.writer_mut().ok_or("a demo is recorded to a file")?;
    let path = writer.path().to_path_buf();
    let session = Session::load(&path).map_err(|e| e.to_string())?;
    for (at, caption) in narrate(&session)? {
        let title = (at == 0).then_some(title);
        writer.caption(at as u64, title, &caption).map_err(|e| e.to_string())?;
    }
    rec.run.end(0).map_err(|e| e.to_string())
}

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    crate::engine::methods::count(n, thing, &format!("{thing}s"))
}

/// The captions of a recorded session, by input position: an introduction at 0 (the
/// header's note and the keys that move through the story), then one for each search
/// step kept, backtrack, command a person gave and the end. Captions due at the same
/// position are joined.
pub fn narrate(session: &Session) -> Result<Vec<(usize, String)>, String> {
    let rebuilt = crate::session::replay::rebuild(session, None, None).map_err(|e| e.to_string())?;
    let mut narrator = Narrator::new(session, &rebuilt);
    let note = session.header.note.clone().unwrap_or_default();
    let mut captions: Vec<(usize, String)> = vec![(
        0,
        format!(
            "{note}. Press }} for the next caption ({{ goes back), ] for the next search step, \
             P to play, ? for the keys and what the marks mean."
        ),
    )];
    for record in &session.records {
        let Some((at, text)) = narrator.caption(record) else { continue };
        match captions.last_mut() {
            Some((last, joined)) if *last == at => {
                joined.push(' ');
                joined.push_str(&text);
            }
            _ => captions.push((at, text)),
        }
    }
    Ok(captions)
}

/// What [`narrate`] has told once already (each is told the first time it happens).
#[derive(Default)]
struct Told {
    complexity: bool,
    tool: bool,
    cross: bool,
    iterations: bool,
    samples: bool,
    failure: bool,
    badge: bool,
}

/// Writes a session's captions from its records and the run they rebuild.
struct Narrator<'a> {
    session: &'a Session,
    rebuilt: &'a crate::session::replay::Rebuilt,
    react: bool,
    cot_sc: bool,
    retreval: bool,
    /// The steps a person edits later: pointed out when they appear.
    edited: Vec<NodeId>,
    /// Each node's depth and the nodes valued so far, as the events built them.
    depths: std::collections::HashMap<NodeId, usize>,
    scored: std::collections::HashSet<NodeId>,
    /// The nodes made since the last selection.
    fresh: Vec<NodeId>,
    /// The method's own log lines by input, for captions that quote why it did something.
    logs: std::collections::BTreeMap<u64, Vec<&'a str>>,
    told: Told,
}

impl<'a> Narrator<'a> {
    fn new(session: &'a Session, rebuilt: &'a crate::session::replay::Rebuilt) -> Narrator<'a> {
        let method = session.header.params.method;
        let edited = session
            .inputs()
            .filter_map(|(input, _)| match input {
                Input::Command { command: Command::Edit { node, .. } } => Some(*node),
                _ => None,
            })
            .collect();
        let mut logs: std::collections::BTreeMap<u64, Vec<&str>> = Default::default();
        for record in &session.records {
            if let Record::Event { seq, event: Event::Log { text } } = record {
                logs.entry(*seq).or_default().push(text);
            }
        }
        Narrator {
            session,
            rebuilt,
            react: method.has_react_steps(),
            cot_sc: method == crate::engine::methods::cot_sc::KIND,
            retreval: method == crate::engine::methods::retreval::method::KIND,
            edited,
            depths: std::collections::HashMap::from([(NodeId(0), 0)]),
            scored: std::collections::HashSet::new(),
            fresh: Vec::new(),
            logs,
            told: Told::default(),
        }
    }

    /// The caption `record` makes, with the input position it is due at.
    fn caption(&mut self, record: &Record) -> Option<(usize, String)> {
        let (seq, text) = match record {
            Record::Input { seq, input: Input::Command { command }, .. } => (*seq, self.command(*seq, command)?),
            Record::Input { seq, input: Input::LlmReply(_), .. } if self.cot_sc && !self.told.samples => {
                self.told.samples = true;
                let text = "The samples are in: each is a chain of thought ending in an answer (one node each). \
                            No evaluator judges them; they vote.";
                (*seq, text.to_string())
            }
            Record::Input { seq, input: Input::ToolReply(reply), .. } if self.retreval && !self.told.tool => {
                self.told.tool = true;
                let text = format!(
                    "Tool-augmented refinement: an attempt called a tool and got “{}”; each tool call is a \
                     child step of its attempt, with the observation.",
                    crate::safe_text::clip(reply.result.text.lines().next().unwrap_or(""), 60)
                );
                // Told once the tools called together have all answered, so the step the
                // explorer follows (the newest) shows its observation with the caption.
                (self.tools_answered(*seq), text)
            }
            Record::Event { seq, event } if self.retreval => (*seq, self.retreval_event(*seq, event)?),
            Record::Event { seq, event } => (*seq, self.search_event(*seq, event)?),
            _ => return None,
        };
        Some((seq as usize + 1, text))
    }

    /// The last input of the run of tool replies that `seq` is in.
    fn tools_answered(&self, seq: u64) -> u64 {
        let mut last = seq;
        for record in &self.session.records {
            match record {
                Record::Input { seq: s, input: Input::ToolReply(_), .. } if *s == last + 1 => last = *s,
                Record::Input { seq: s, .. } if *s > last => break,
                _ => {}
            }
        }
        last
    }

    /// `id` and the first line of its thought.
    fn named(&self, id: NodeId) -> String {
        let tree = self.rebuilt.engine.tree();
        if tree.contains(id) {
            format!("{id} “{}”", crate::safe_text::clip(tree.node(id).thought.lines().next().unwrap_or(""), 48))
        } else {
            id.to_string()
        }
    }

    /// `n candidate states valued`, explaining the badge the first time.
    /// The beam width the run was recorded with (`breadth`), if the method has one.
    fn breadth(&self) -> Option<u64> {
        self.session.header.params.whole("breadth")
    }

    /// Follow the tree as the events build it: each node's depth, and which were valued.
    fn track(&mut self, event: &Event) {
        match event {
            Event::NodeAdded { id, parent, .. } => {
                let depth = self.depths.get(parent).copied().unwrap_or(0) + 1;
                self.depths.insert(*id, depth);
                self.fresh.push(*id);
            }
            Event::Scored { id, .. } => {
                self.scored.insert(*id);
            }
            _ => {}
        }
    }

    /// How many states at `depth` made since the last selection the evaluator valued (a
    /// search that goes on after an edit makes that depth again).
    fn valued_at(&self, depth: usize) -> usize {
        self.fresh.iter().filter(|id| self.depths.get(id) == Some(&depth) && self.scored.contains(id)).count()
    }

    /// The candidates of step `step` (0-based) and how many were valued, as recorded.
    fn valued(&mut self, step: usize, candidates: usize) -> String {
        let told = std::mem::replace(&mut self.told.badge, true);
        let badge = if told { "" } else { " (the badge on each: its value and the evaluator's samples)" };
        match self.valued_at(step + 1) {
            v if v == candidates => format!("{} valued{badge}", count(candidates, "candidate state")),
            v => format!("{} made, {v} of them valued{badge}", count(candidates, "candidate state")),
        }
    }

    fn command(&self, seq: u64, command: &Command) -> Option<String> {
        Some(match command {
            Command::Edit { node, text } if self.react => format!(
                "A person rewrites step {node} as “{}”: a new sibling (✎) whose action runs at once; the old \
                 branch stays in the tree.",
                crate::safe_text::clip(&text.replace('\n', " "), 90)
            ),
            Command::Edit { node, text } => format!(
                "A person edits {node} into “{}”: the edit is a new sibling (✎) that the evaluator values like \
                 any other step.",
                crate::safe_text::clip(text, 60)
            ),
            Command::Continue { node } => {
                format!("Continue (enter) from {node}: the search goes on from the edited step only.")
            }
            Command::Prune { node } => format!("A person prunes {node} (✂): the search skips it."),
            Command::Backtrack { .. } => "A person forces a backtrack (b).".to_string(),
            Command::Run if seq > 0 => "Run (r): the search goes on by itself.".to_string(),
            Command::Run if self.cot_sc => format!(
                "Run: one request asks the model for {} of a chain of thought at once, at a temperature that \
                 lets them differ.",
                count(self.session.header.params.whole("samples").unwrap_or_default() as usize, "sample")
            ),
            _ => return None,
        })
    }

    fn retreval_event(&mut self, seq: u64, event: &Event) -> Option<String> {
        use crate::memory::{Category, MemoryChange};
        Some(match event {
            Event::Log { text } if text.starts_with("complexity ") && !self.told.complexity => {
                self.told.complexity = true;
                format!(
                    "The model rates the problem first: {text}. The table turns the rating into the tree's depth \
                     and branching; a person can edit the estimate node before the tree grows. Each root-level \
                     attempt is told another approach, ranked by the memory's reliability."
                )
            }
            Event::Metrics { metrics, .. } if metrics.contains_key("cross") && !self.told.cross => {
                self.told.cross = true;
                "Scores: a local self-assessment and a cross critique against the sibling attempts, 0.6·local + \
                 0.4·cross minus a skepticism penalty for an approach that has failed before (the scores pane: \
                 loc crs pen tot)."
                    .to_string()
            }
            Event::Backtracked { .. } => {
                let why = self
                    .logs
                    .get(&seq)
                    .and_then(|l| l.iter().find(|t| t.contains("backtracking")))
                    .copied()
                    .unwrap_or("the validation failed; backtracking");
                format!(
                    "The best attempt fails validation: {why}. The typed failure goes into the sibling's \
                     critique history (its History note), and the search goes on there."
                )
            }
            Event::Memory { change: MemoryChange::Add { content, category, .. } } if *category == Category::Failure => {
                format!(
                    "The memory learns from the failure: “{}” (M shows the memory).",
                    crate::safe_text::clip(content, 120)
                )
            }
            Event::Memory { change: MemoryChange::RecordUse { id, success } } => {
                let earlier =
                    self.session.header.memory.as_ref().is_some_and(|m| m.memory.entries().iter().any(|e| e.id == *id));
                format!(
                    "Memory entry #{id}, written {}, was retrieved into {} prompts as a lesson; the problem {}, so \
                     its confidence {}.",
                    if earlier { "on an earlier problem" } else { "earlier in this problem" },
                    if earlier { "this problem's" } else { "the later attempts'" },
                    if *success { "was solved" } else { "was not solved" },
                    if *success { "rises" } else { "falls" }
                )
            }
            Event::Finished { outcome } if outcome.solved => format!(
                "Solved: {}. The final approach's reliability and the memory are updated; the next problem of \
                 the run starts from this memory.",
                outcome.answer.as_deref().unwrap_or("a final state")
            ),
            _ => return None,
        })
    }

    fn search_event(&mut self, seq: u64, event: &Event) -> Option<String> {
        self.track(event);
        let mut caption = self.search_caption(event);
        // The same input starts the next step (the status bar counts the step in flight):
        // say so, so the caption and the status bar agree.
        if let (Some(text), Event::Selected { step, kept, .. }) = (caption.as_mut(), event) {
            let next = format!("step {}: expanding", step + 2);
            if !kept.is_empty() && self.logs.get(&seq).is_some_and(|l| l.iter().any(|t| t.starts_with(&next))) {
                let them = if kept.len() == 1 { "it" } else { "them" };
                text.push_str(&format!(" Step {} now expands {them}.", step + 2));
            }
        }
        if matches!(event, Event::Selected { .. }) {
            self.fresh.clear();
        }
        caption
    }

    fn search_caption(&mut self, event: &Event) -> Option<String> {
        Some(match event {
            Event::NodeAdded { id, .. } if self.edited.contains(id) => {
                if self.react {
                    format!("Watch step {}: the agent takes a wrong turn here.", self.named(*id))
                } else {
                    format!("Watch {}: a person will come back to it.", self.named(*id))
                }
            }
            Event::Selected { step, kept, candidates } if kept.is_empty() => format!(
                "Step {}: {} — nothing left to keep: every candidate is invalid or valued impossible.",
                step + 1,
                if *candidates == 0 {
                    "no candidate state could be made".to_string()
                } else {
                    count(*candidates, "candidate state")
                }
            ),
            Event::Selected { step, kept, candidates } if kept.len() == 1 && self.breadth() == Some(1) => format!(
                "Step {}: {}; greedy search (b=1) keeps only the best, {}.",
                step + 1,
                self.valued(*step, *candidates),
                self.named(kept[0])
            ),
            Event::Selected { step, kept, candidates } if kept.len() == 1 => format!(
                "Step {}: {}; the beam{} keeps the only one valued, {}.",
                step + 1,
                self.valued(*step, *candidates),
                self.breadth().map(|b| format!(" (b={b})")).unwrap_or_default(),
                self.named(kept[0])
            ),
            Event::Selected { step, kept, candidates } => format!(
                "Step {}: {}; the beam keeps the {} best ({}) and drops the rest (–). The best: {}.",
                step + 1,
                self.valued(*step, *candidates),
                kept.len(),
                kept.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "),
                self.named(kept[0])
            ),
            Event::Backtracked { from, to } => {
                let to = to.first().map(|&t| self.named(t)).unwrap_or_default();
                let why = self.why_left(from);
                format!("{why}, so the search backtracks to {to} and tries its next child.")
            }
            Event::Metrics { id, metrics } if id.0 == 0 && !self.told.iterations => {
                self.told.iterations = true;
                let n = metrics.get("N").copied().unwrap_or(0.0);
                format!(
                    "One MCTS iteration: UCT chose a leaf, it was expanded and its children valued, and the best \
                     reward was backed up the path (the root now has N = {n}). N counts visits, Q is the mean \
                     reward."
                )
            }
            Event::Finished { outcome } => return self.finished(outcome),
            _ => return None,
        })
    }

    /// Why the search left `from` (a DFS backtrack): a leaf that is not a solution, no
    /// child valued above the threshold, or children above it that were all tried — as the
    /// tree the run built shows them.
    fn why_left(&self, from: &[NodeId]) -> String {
        let tree = self.rebuilt.engine.tree();
        let names = from.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ");
        let threshold = self.session.header.params.number("threshold");
        let at = threshold.map(|t| format!(" ({})", crate::engine::tree::format_value(t))).unwrap_or_default();
        let known: Vec<NodeId> = from.iter().copied().filter(|&f| tree.contains(f)).collect();
        if known.iter().all(|&f| tree.node(f).children.is_empty()) && !known.is_empty() {
            return format!("{names} is a final state and not a solution");
        }
        let tried: Vec<String> = known
            .iter()
            .flat_map(|&f| tree.node(f).children.iter().copied())
            .filter(|&c| threshold.is_some_and(|t| tree.value(c).is_some_and(|v| v >= t)))
            .map(|c| c.to_string())
            .collect();
        match tried.len() {
            0 => format!("Dead end at {names}: no child is valued above the threshold{at}"),
            1 => format!(
                "{names} has no untried child above the threshold{at} left: its only one, {}, led nowhere",
                tried[0]
            ),
            _ => format!(
                "{names} has no untried child above the threshold{at} left: {} were all tried and led nowhere",
                crate::tasks::and_list(&tried.iter().map(String::as_str).collect::<Vec<_>>())
            ),
        }
    }

    /// How the run ended (a failure is told once: an edit's evaluation may end a paused
    /// search again).
    fn finished(&mut self, outcome: &crate::engine::Outcome) -> Option<String> {
        if self.cot_sc {
            return Some(self.vote());
        }
        if outcome.solved {
            return Some(format!(
                "Solved: {}. ★ marks the solution; * jumps to the best state, n to the next solution.",
                outcome.answer.as_deref().unwrap_or("a final state")
            ));
        }
        if std::mem::replace(&mut self.told.failure, true) {
            return None;
        }
        Some(if self.react {
            format!(
                "The agent has used its {} steps without a right answer: the run ends unsolved.",
                self.session.header.params.whole("max_steps").unwrap_or_default()
            )
        } else {
            format!(
                "The search ends without a solution{}: the state it kept cannot reach the goal, and it has \
                 nothing else left to try.",
                outcome.answer.as_deref().map(|a| format!(" (it answers {a})")).unwrap_or_default()
            )
        })
    }

    /// The vote as the run counted it: the winner's votes, a tie and how it was broken,
    /// and whether the answer is right.
    fn vote(&self) -> String {
        let engine = &self.rebuilt.engine;
        let outcome = engine.outcome();
        let votes = engine.view().votes.unwrap_or_default();
        let Some(top) = votes.tallies.first() else {
            return "The vote: no sample gave an answer, so there is none.".to_string();
        };
        let answer = outcome.and_then(|o| o.answer.clone()).unwrap_or_else(|| top.answer.clone());
        let right = outcome.is_some_and(|o| o.solved);
        let verdict = if right { "it is right" } else { "it is wrong" };
        let tied: Vec<&crate::engine::methods::Tally> =
            votes.tallies.iter().skip(1).filter(|t| t.votes == top.votes).collect();
        let out_of = format!("{} of {}", count(top.votes, "vote"), votes.samples);
        if tied.is_empty() {
            let others = votes.tallies.len() - 1;
            let rest = match others {
                0 => "every sample gave it".to_string(),
                _ => format!("the other samples split among {}", count(others, "other answer")),
            };
            format!("The vote: {answer} has the most votes, {out_of} ({rest}), and {verdict}.")
        } else {
            let names: Vec<String> = tied.iter().map(|t| t.answer.clone()).collect();
            format!(
                "The vote is a tie: {answer} and {} have {} votes each. A tie goes to the answer the samples \
                 gave first, {answer} (sample {}), and {verdict}.",
                crate::tasks::and_list(&names.iter().map(String::as_str).collect::<Vec<_>>()),
                top.votes,
                top.first
            )
        }
    }
}

fn run(command: Command) -> Vec<Input> {
    vec![Input::command(command)]
}

/// Record, into `dir/file`, a plain run of `params` on the first test puzzle (from
/// 900) whose run `shows` what the demo is about.
fn first_run(
    dir: &Path,
    file: &str,
    title: &str,
    note: &str,
    params: Params,
    shows: impl Fn(&Engine, &[Event]) -> bool,
) -> Result<(), String> {
    first_run_of(dir, (file, title, note), params, SimConfig::default(), shows)
}

/// [`first_run`] with the simulated model set as `sim` says.
fn first_run_of(
    dir: &Path,
    (file, title, note): (&str, &str, &str),
    params: Params,
    sim: SimConfig,
    shows: impl Fn(&Engine, &[Event]) -> bool,
) -> Result<(), String> {
    let (setup, task, sim) = setup(params, sim);
    for i in 900..1000 {
        let problem = task.problem(i).ok_or("no puzzle")?;
        let mut rec = start(&setup, &sim, &problem, None)?;
        let events = step(&mut rec, run(Command::Run))?;
        if shows(&rec.run.engine, &events) {
            let mut rec = start(&setup, &sim, &problem, Some((&dir.join(file), note)))?;
            step(&mut rec, run(Command::Run))?;
            return end(&mut rec, title);
        }
    }
    Err(format!("no test puzzle for the demo {file}"))
}

fn solved(engine: &Engine) -> bool {
    engine.outcome().is_some_and(|o| o.solved)
}

/// The scripted rescue: run the greedy search to its failure, edit the dead end it
/// kept at step 1 into a step that can still reach 24, continue from the edit, run.
fn rescue(rec: &mut Recorder, input: &str) -> Result<bool, String> {
    let events = step(rec, run(Command::Run))?;
    if solved(&rec.run.engine) {
        return Ok(false);
    }
    let Some(kept) = events.iter().find_map(|e| match e {
        Event::Selected { step: 0, kept, .. } => kept.first().copied(),
        _ => None,
    }) else {
        return Ok(false);
    };
    let numbers = parse_numbers(input).ok_or("bad input")?;
    let Some(good) = moves(&numbers).into_iter().find(|m| solvable(&m.left)) else { return Ok(false) };
    let events = step(rec, run(Command::Edit { node: kept, text: good.line }))?;
    let Some(edited) = events.iter().find_map(|e| match e {
        Event::NodeAdded { id, .. } => Some(*id),
        _ => None,
    }) else {
        return Ok(false);
    };
    step(rec, vec![Input::command(Command::Continue { node: edited }), Input::command(Command::Run)])?;
    Ok(solved(&rec.run.engine))
}

/// Greedy BFS on the first test puzzle where it fails alone, keeps a dead end at
/// step 1, and the edit rescues it.
fn edit(dir: &Path) -> Result<(), String> {
    let params = Params::new(crate::engine::methods::tot_bfs::KIND).with("breadth", 1);
    let (setup, task, sim) = setup(params, SimConfig::default());
    for i in 900..1000 {
        let problem = task.problem(i).ok_or("no puzzle")?;
        let mut alone = start(&setup, &sim, &problem, None)?;
        step(&mut alone, run(Command::Run))?;
        if solved(&alone.run.engine) {
            continue;
        }
        // The step-1 choice must be a dead end for the edit to matter.
        let first_kept = alone
            .run
            .engine
            .tree()
            .nodes()
            .find(|n| n.depth == 1 && n.status != crate::engine::NodeStatus::Candidate && !n.children.is_empty())
            .map(|n| n.id);
        let dead_end = first_kept.is_some_and(|k: NodeId| {
            let left =
                crate::tasks::game24::current_numbers_text(&problem.input, &alone.run.engine.tree().node(k).path);
            parse_numbers(&left).is_some_and(|n| !solvable(&n))
        });
        if !dead_end {
            continue;
        }
        let mut trial = start(&setup, &sim, &problem, None)?;
        if rescue(&mut trial, &problem.input)? {
            let mut rec = start(&setup, &sim, &problem, Some((&dir.join("edit-rescues.jsonl"), EDIT_NOTE)))?;
            rescue(&mut rec, &problem.input)?;
            return end(&mut rec, EDIT_TITLE);
        }
    }
    Err("no test puzzle for the edit demo".into())
}

fn qa_demo() -> Result<Arc<dyn TaskSource>, String> {
    crate::tasks::build("qa-demo", &TaskOptions::default(), &mut Vec::new()).map_err(|e| e.to_string())
}

/// CoT-SC on qa-demo: the first question whose samples disagree and whose majority is right.
fn cot_sc_vote(dir: &Path) -> Result<(), String> {
    let params = Params::new(crate::engine::methods::cot_sc::KIND);
    let (setup, sim) = setup_for(qa_demo()?, params, SimConfig::default());
    for i in 0..setup.task.problem_count() {
        let problem = setup.task.problem(i).ok_or("no question")?;
        let mut rec = start(&setup, &sim, &problem, None)?;
        step(&mut rec, run(Command::Run))?;
        let split_vote =
            rec.run.engine.outcome().is_some_and(|o| o.solved && o.sample_accuracy.is_some_and(|a| a < 1.0));
        if split_vote {
            let mut rec = start(&setup, &sim, &problem, Some((&dir.join("cot-sc-vote.jsonl"), COT_SC_NOTE)))?;
            step(&mut rec, run(Command::Run))?;
            return end(&mut rec, COT_SC_TITLE);
        }
    }
    Err("no qa-demo question for the CoT-SC demo".into())
}

/// The ReAct steps along the path to the engine's newest deepest step, by depth (1 = first).
fn trajectory(engine: &Engine) -> Vec<NodeId> {
    let tree = engine.tree();
    let Some(tip) = tree.nodes().filter(|n| n.step.is_some()).max_by_key(|n| (n.depth, n.id.0)).map(|n| n.id) else {
        return Vec::new();
    };
    let mut path = vec![tip];
    while let Some(parent) = tree.node(*path.last().unwrap_or(&tip)).parent {
        if tree.node(parent).step.is_none() {
            break;
        }
        path.push(parent);
    }
    path.reverse();
    path
}

/// A step written as a person would type it in the edit popup.
fn step_text(engine: &Engine, id: NodeId) -> Option<String> {
    let step = engine.tree().node(id).step.as_ref()?;
    let action = step.action.as_ref()?;
    let n = engine.tree().node(id).depth;
    let thought = step.thought.as_deref().unwrap_or("").trim();
    Some(format!("Thought {n}: {thought}\nAction {n}: {}", crate::engine::Step::action_text(action)))
}

/// The ReAct edit: the first question and seed where the agent, with a step limit,
/// takes a wrong turn and runs out of steps; a person rewrites the first step where it
/// went another way than a mistake-free agent (thought and action: the edit runs its
/// action), and the agent answers correctly from there.
fn react_edit(dir: &Path) -> Result<(), String> {
    let params = Params::new(crate::engine::methods::react::KIND).with("max_steps", 4);
    let task = qa_demo()?;
    for seed in 0..40 {
        let (setup, sim) = setup_for(Arc::clone(&task), params.clone(), SimConfig { seed, ..SimConfig::default() });
        let (_, perfect_sim) =
            setup_for(Arc::clone(&task), params.clone(), SimConfig { seed, noise: 0.0, ..SimConfig::default() });
        for i in 0..task.problem_count() {
            let problem = task.problem(i).ok_or("no question")?;
            let mut alone = start(&setup, &sim, &problem, None)?;
            step(&mut alone, run(Command::Run))?;
            if solved(&alone.run.engine) {
                continue;
            }
            let mut perfect = start(&setup, &perfect_sim, &problem, None)?;
            step(&mut perfect, run(Command::Run))?;
            if !solved(&perfect.run.engine) {
                continue;
            }
            let (went, right) = (trajectory(&alone.run.engine), trajectory(&perfect.run.engine));
            let action = |engine: &Engine, id: NodeId| engine.tree().node(id).step.as_ref().map(|s| s.action.clone());
            let Some((node, text)) = went.iter().zip(&right).find_map(|(&a, &p)| {
                let differs = action(&alone.run.engine, a) != action(&perfect.run.engine, p);
                differs.then(|| step_text(&perfect.run.engine, p).map(|text| (a, text))).flatten()
            }) else {
                continue;
            };
            let script = [run(Command::Run), run(Command::Edit { node, text }), run(Command::Run)];
            let mut trial = start(&setup, &sim, &problem, None)?;
            for inputs in script.clone() {
                step(&mut trial, inputs)?;
            }
            if !solved(&trial.run.engine) {
                continue;
            }
            let mut rec = start(&setup, &sim, &problem, Some((&dir.join("react-edit.jsonl"), REACT_NOTE)))?;
            for inputs in script {
                step(&mut rec, inputs)?;
            }
            return end(&mut rec, REACT_TITLE);
        }
    }
    Err("no qa-demo question for the ReAct edit demo".into())
}

/// The ReTreVal pair, on math-demo at `--sim-noise 2`: the first problem whose run makes
/// a tool call, backtracks on a typed failure of a wrong attempt, writes a failure entry
/// and ends solved;
/// then the first other problem (a later one first) that, starting from the memory that
/// run left, retrieves that entry because it is about the same thing, and is solved.
fn retreval(dir: &Path) -> Result<(), String> {
    let params = Params::new(crate::engine::methods::retreval::method::KIND);
    let task = crate::tasks::build("math-demo", &TaskOptions::default(), &mut Vec::new()).map_err(|e| e.to_string())?;
    let (setup, sim) = setup_for(Arc::clone(&task), params, SimConfig { noise: 2.0, ..SimConfig::default() });
    let count = task.problem_count().min(42);
    let failure_entry = |events: &[Event]| {
        events.iter().any(|e| {
            matches!(e, Event::Memory { change: crate::memory::MemoryChange::Add { category, .. } }
                if *category == crate::memory::Category::Failure)
        })
    };
    for i in 0..count {
        let problem = task.problem(i).ok_or("no problem")?;
        let mut first = start(&setup, &sim, &problem, None)?;
        let events = step(&mut first, run(Command::Run))?;
        let backtracked = events.iter().any(|e| matches!(e, Event::Backtracked { .. }));
        let tool = first.run.totals.tool_calls > 0;
        if !(solved(&first.run.engine)
            && backtracked
            && tool
            && failure_entry(&events)
            && real_failures(&first.run.engine))
        {
            continue;
        }
        let learnt = first.run.engine.memory().cloned().ok_or("the run keeps a memory")?;
        let failures: Vec<u64> =
            learnt.entries().iter().filter(|e| e.category == crate::memory::Category::Failure).map(|e| e.id).collect();
        // Another problem of the run, a later one first.
        for j in (i + 1..count).chain(0..i) {
            let next = task.problem(j).ok_or("no problem")?;
            let mut second = start_from(&setup, &sim, &next, None, learnt.clone())?;
            let events = step(&mut second, run(Command::Run))?;
            let used = events.iter().any(|e| {
                matches!(e, Event::Memory { change: crate::memory::MemoryChange::RecordUse { id, .. } }
                    if failures.contains(id))
            });
            if !(used && solved(&second.run.engine) && real_failures(&second.run.engine)) {
                continue;
            }
            let out = dir.join("retreval-learns.jsonl");
            let mut rec = start(&setup, &sim, &problem, Some((&out, RETREVAL_LEARNS_NOTE)))?;
            step(&mut rec, run(Command::Run))?;
            end(&mut rec, RETREVAL_LEARNS_TITLE)?;
            let out = dir.join("retreval-uses.jsonl");
            let mut rec = start_from(&setup, &sim, &next, Some((&out, RETREVAL_USES_NOTE)), learnt)?;
            step(&mut rec, run(Command::Run))?;
            return end(&mut rec, RETREVAL_USES_TITLE);
        }
    }
    Err("no math-demo pair of problems for the ReTreVal demos".into())
}

/// Whether every attempt ReTreVal filed a typed failure for is wrong by the task's own
/// checker: a demo's lessons must come from real mistakes, not from a validator's false
/// alarm on a right answer.
fn real_failures(engine: &Engine) -> bool {
    let tree = engine.tree();
    let task = &engine.core.task;
    tree.nodes()
        .filter(|n| n.note("failure").is_some())
        .all(|n| n.answer.as_deref().is_none_or(|a| task.check(&engine.core.x, a).is_err()))
}

/// Record the demo sessions into `dir`.
pub fn record_all(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let bfs = Params::new(crate::engine::methods::tot_bfs::KIND);
    first_run(dir, "bfs-solved.jsonl", BFS_TITLE, BFS_NOTE, bfs, |e, _| solved(e))?;
    let dfs = Params::new(crate::engine::methods::tot_dfs::KIND);
    first_run(dir, "dfs-backtracks.jsonl", DFS_TITLE, DFS_NOTE, dfs, |e, events| {
        solved(e) && events.iter().filter(|ev| matches!(ev, Event::Backtracked { .. })).count() >= 2
    })?;
    edit(dir)?;
    let mcts = Params::new(crate::engine::methods::mcts::KIND);
    first_run(dir, "mcts.jsonl", MCTS_TITLE, MCTS_NOTE, mcts, |e, _| solved(e) && e.view().step >= 3)?;
    cot_sc_vote(dir)?;
    react_edit(dir)?;
    retreval(dir)?;
    let thinking = SimConfig { thinking: true, ..SimConfig::default() };
    let bfs = Params::new(crate::engine::methods::tot_bfs::KIND);
    let about = ("thinking-bfs.jsonl", THINKING_TITLE, THINKING_NOTE);
    first_run_of(dir, about, bfs, thinking, |e, _| solved(e))?;
    println!("recorded the demo sessions into {}", crate::safe_text::terminal_safe(&dir.display().to_string()));
    Ok(())
}

#[cfg(test)]
mod tests;
