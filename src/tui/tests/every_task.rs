//! Every task the simulated model plays, with every method that serves it, in the
//! explorer: it runs to an outcome, draws at 80×24 and 160×45, and the session it saved
//! replays exactly. The lists come from the registries, so a task or a method added
//! with one registration line is covered here without an edit.

use super::*;
use crate::engine::methods;
use crate::runtime::tools::ToolRunner;
use crate::tasks::TaskOptions;

#[test]
fn every_task_the_sim_plays_runs_in_the_explorer_with_each_method_and_replays_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = 0;
    for entry in crate::tasks::REGISTRY.iter().filter(|e| e.sim.is_some() && !e.info.reads_data) {
        let name = entry.info.name.to_string();
        let task = crate::tasks::build(&name, &TaskOptions::default(), &mut Vec::new()).unwrap();
        let served = methods::serving(task.as_ref(), &Params::default());
        assert!(!served.is_empty(), "{name}: some method serves it");
        let problem = task.problem(entry.info.default_problem).or_else(|| task.problem(0)).unwrap();
        for info in served {
            let label = format!("{name} / {}", info.kind.label());
            let mut s = setup(dir.path(), Params::new(info.kind));
            s.task = Arc::clone(&task);
            s.header.task = name.clone();
            let mut app = App::live(s, &problem, Keymap::default(), ThemeSet::default(), "dark");
            let mut tools = ToolRunner::new(task.tools().unwrap_or_default());
            let fx = app.handle_action(Action::RunPause);
            settle_react(&mut app, fx, &mut tools);
            assert!(app.run.engine.is_finished(), "{label}: the run ends");
            assert!(app.run.engine.outcome().is_some(), "{label}: with an outcome");
            for (w, h) in [(80, 24), (160, 45)] {
                let screen = render(&mut app, w, h);
                assert!(
                    screen.contains(info.kind.label()),
                    "{label}: the header names the method at {w}×{h}:\n{screen}"
                );
            }
            app.finish_recording();
            let path = app.session_path().unwrap();
            let session = Session::load(&path).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(session.header.task, name);
            let rebuilt = crate::session::replay::rebuild(&session, None, None).unwrap();
            assert!(rebuilt.fidelity.is_exact(), "{label}: {}", rebuilt.fidelity);
            assert_eq!(rebuilt.engine.tree().len(), app.run.engine.tree().len(), "{label}: the same tree");
            runs += 1;
        }
    }
    assert!(runs > 20, "{runs} runs");
}
