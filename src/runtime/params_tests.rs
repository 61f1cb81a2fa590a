//! A method's run depends on exactly the parameters it declares, shown on `sim` for
//! every registered method: a `[defaults]` file that sets every other method's
//! parameters changes nothing (the same session, byte for byte), varying its own
//! changes the run, and the session header alone rebuilds it exactly.

use std::path::Path;
use std::sync::Arc;

use crate::config::{Config, ParamPatch};
use crate::engine::methods::{self, MethodInfo};
use crate::engine::params::tests::alternative;
use crate::engine::sim::SimConfig;
use crate::engine::{Command, Engine, Input, Params, Task};
use crate::llm::sim::SimProvider;
use crate::runtime::headless::{header_for, RunSetup};
use crate::runtime::{sync, Run, StopPolicy};
use crate::session::{MemorySnapshot, Session, SessionWriter};
use crate::tasks::{SimPlayers, TaskOptions, TaskSource};

/// A task the method runs on with `sim`: one with tools for methods that take ReAct
/// steps or call tools, Game of 24 for the others.
fn task_for(info: &MethodInfo) -> Arc<dyn TaskSource> {
    let name = match (info.react != methods::ReactShape::None, info.uses_tools) {
        (true, _) => "qa-demo",
        (false, true) => "math-demo",
        (false, false) => "game24",
    };
    crate::tasks::build(name, &TaskOptions::default(), &mut Vec::new()).unwrap()
}

/// Run problem 0 of `task` to its end with `sim` (and the task's tools), recording the
/// session at `path`; returns the file's text.
fn record(task: &Arc<dyn TaskSource>, params: &Params, path: &Path) -> String {
    let sim = SimConfig::default();
    let setup = RunSetup {
        task: Arc::clone(task),
        params: params.clone(),
        provider: Arc::new(SimProvider::new(sim.clone(), &SimPlayers)),
        sim: Some(sim.clone()),
        concurrency: 1,
        record: None,
        limits: Default::default(),
        replay_tools: None,
        unjudged: false,
        memory: None,
    };
    let problem = task.problem(0).unwrap();
    let mut engine = Engine::new(Arc::clone(task) as Arc<dyn Task>, &problem.input, params.clone());
    let mut header = header_for(&setup, &problem);
    if (params.method.info().wants_memory)(params) {
        let memory = crate::memory::Memory::default();
        engine.set_memory(Some(memory.clone()));
        header.memory = Some(MemorySnapshot::new("test", memory));
    }
    let writer = SessionWriter::create(path, &header).unwrap();
    let mut run = Run::new(engine, Some(writer), StopPolicy::default());
    let sim = SimProvider::new(sim, &SimPlayers);
    let mut runner = crate::runtime::tools::ToolRunner::new(task.tools().unwrap_or_default());
    let tool = sync::tools_of(&mut runner);
    sync::drive_with_tools(&mut run, vec![Input::command(Command::Run)], |r| sim.answer(r), tool).unwrap();
    run.end(0).unwrap();
    std::fs::read_to_string(path).unwrap()
}

/// `[defaults]` setting each parameter of `params` to a valid value other than its default.
fn defaults_file(params: &[&'static crate::engine::ParamDecl]) -> String {
    let mut text = String::from("[defaults]\n");
    for decl in params {
        let json = crate::engine::ParamDecl::to_json(&alternative(decl));
        text.push_str(&format!("{} = {json}\n", decl.name));
    }
    text
}

#[test]
fn each_method_runs_on_exactly_the_parameters_it_declares() {
    let dir = tempfile::tempdir().unwrap();
    for info in methods::REGISTRY {
        let task = task_for(info);
        let plain = Params::new(info.kind);
        let first = record(&task, &plain, &dir.path().join(format!("{}-plain.jsonl", info.kind)));

        // Every other method's parameters, set in [defaults], change nothing.
        let others: Vec<_> =
            methods::all_params().into_iter().map(|p| p.decl).filter(|d| info.param(d.name).is_none()).collect();
        let (config, warnings) = Config::parse(&defaults_file(&others), "c.toml");
        assert!(warnings.is_empty(), "{}: {warnings:?}", info.kind);
        let resolved = ParamPatch::resolve(&ParamPatch::of(info.kind), &config.defaults.search).unwrap();
        assert_eq!(resolved, plain, "{}", info.kind);
        let again = record(&task, &resolved, &dir.path().join(format!("{}-others.jsonl", info.kind)));
        assert_eq!(again, first, "{}: the same session", info.kind);

        // Its own, varied all at once, change the run; the header records each and rebuilds it.
        let own = info.declared();
        let (config, warnings) = Config::parse(&defaults_file(&own), "c.toml");
        assert!(warnings.is_empty(), "{}: {warnings:?}", info.kind);
        let varied = ParamPatch::resolve(&ParamPatch::of(info.kind), &config.defaults.search)
            .unwrap_or_else(|e| panic!("{}: {e}", info.kind));
        let path = dir.path().join(format!("{}-varied.jsonl", info.kind));
        let text = record(&task, &varied, &path);
        assert_ne!(
            text.lines().skip(1).collect::<Vec<_>>(),
            first.lines().skip(1).collect::<Vec<_>>(),
            "{}",
            info.kind
        );
        let session = Session::load(&path).unwrap();
        assert_eq!(session.header.params, varied, "{}", info.kind);
        let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
        assert!(rebuilt.fidelity.is_exact(), "{}: {}", info.kind, rebuilt.fidelity);
    }
}
