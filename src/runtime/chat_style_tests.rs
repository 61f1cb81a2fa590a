//! The simulated model plays every task in the chat prompt style through the run loop,
//! and the sessions replay exactly (issue 27; moved here from the tasks' chat tests, as
//! it drives runs: the tasks do not reach up to the runtime or the providers). The list
//! comes from the registries, so a task added with one registration line is covered.

use std::sync::Arc;

use super::headless::{run_headless, Interrupts, RunSetup};
use crate::engine::{methods, Params, PromptStyle};
use crate::llm::sim::SimProvider;
use crate::protocol::Role;
use crate::session;
use crate::tasks::{self, Problem, SimPlayers, TaskOptions};

/// Every task the simulated model plays, with every method that serves it, in the chat
/// style: the run ends, every call it made is laid out as chat, its session header says
/// chat, and the session replays exactly.
#[tokio::test]
async fn sim_plays_every_task_and_method_in_the_chat_style_and_the_sessions_replay_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = 0;
    for entry in tasks::REGISTRY.iter().filter(|e| e.sim.is_some() && !e.info.reads_data) {
        let name = &*entry.info.name;
        let options = TaskOptions { style: PromptStyle::Chat, ..TaskOptions::default() };
        let task = tasks::build(name, &options, &mut Vec::new()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let problem: Problem = task.problem(entry.info.default_problem).or_else(|| task.problem(0)).unwrap();
        for info in methods::serving(task.as_ref(), &Params::default()) {
            let label = format!("{name} / {}", info.kind.label());
            let record = dir.path().join(format!("{name}-{}", info.kind.label()));
            let setup = RunSetup {
                task: Arc::clone(&task),
                params: Params::new(info.kind),
                provider: Arc::new(SimProvider::new(Default::default(), &SimPlayers)),
                sim: Some(Default::default()),
                concurrency: 4,
                record: Some(record.join("s.jsonl")),
                limits: Default::default(),
                replay_tools: None,
                unjudged: false,
                memory: None,
            };
            let (_keep, rx) = Interrupts::channel();
            let done = run_headless(&setup, std::slice::from_ref(&problem), rx, |_| Ok(())).await;
            assert!(done.stopped.is_none(), "{label}: {:?}", done.stopped);
            let path = done.results[0].session.clone().unwrap_or_else(|| panic!("{label}: recorded"));
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.lines().next().unwrap().contains("\"prompt_style\":\"chat\""), "{label}");
            let session = session::Session::load(std::path::Path::new(&path)).unwrap();
            assert_eq!(session.header.prompt_style, PromptStyle::Chat, "{label}");
            let rebuilt = session::replay::rebuild(&session, None, None).unwrap();
            assert!(rebuilt.fidelity.is_exact(), "{label}: {}", rebuilt.fidelity);
            assert_eq!(rebuilt.engine.core.task.prompt_style(), PromptStyle::Chat, "{label}: rebuilt in its style");
            let calls = &rebuilt.engine.core.calls;
            assert!(!calls.is_empty(), "{label}: it called the model");
            for call in calls.values() {
                assert_eq!(call.request.messages[0].role, Role::System, "{label}: {:?}", call.request.purpose);
            }
            runs += 1;
        }
    }
    assert!(runs > 20, "{runs} runs");
}
