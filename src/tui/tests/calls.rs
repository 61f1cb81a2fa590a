//! The calls pane (`L`, a registered pane): on every shipped session its rows agree with
//! the session's recorded replies and its sums with the session's end totals; it filters
//! by failure and by purpose, closes on its key or esc, and fits at 80×24.

use super::*;
use crate::tui::panes::calls::{rows, summary, Status};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn shipped(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions").join(name)
}

/// The session at `file` opened in the explorer, at its end.
fn at_end(dir: &Path, file: &Path) -> App {
    let session = Session::load(file).unwrap_or_else(|e| panic!("{e}"));
    let params = session.header.params.clone();
    let mut app = App::replay(setup(dir, params), session, Keymap::default(), ThemeSet::default(), "dark").unwrap();
    app.handle_action(Action::ReplayEnd);
    app
}

fn press(app: &mut App, c: char) {
    app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
}

#[test]
fn the_calls_pane_agrees_with_every_shipped_sessions_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(shipped("")).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for file in files {
        let app = at_end(dir.path(), &file);
        let session = Session::load(&file).unwrap();
        let replies: std::collections::BTreeMap<u64, &crate::engine::LlmReply> = session
            .inputs()
            .filter_map(|(input, _)| match input {
                Input::LlmReply(r) => Some((r.call, r)),
                _ => None,
            })
            .collect();
        let rows = rows(&app.session.run.engine);
        let name = file.display();
        assert!(!rows.is_empty(), "{name}: no calls");
        assert_eq!(rows.iter().filter(|r| replies.contains_key(&r.call)).count(), replies.len(), "{name}");
        for row in &rows {
            let Some(reply) = replies.get(&row.call) else {
                assert_eq!(row.status, Status::NoReply, "{name}: call {} has no recorded reply", row.call);
                continue;
            };
            match &reply.result {
                Ok(r) if r.cached => assert_eq!((&row.status, row.tokens), (&Status::Cached, None), "{name}"),
                Ok(r) => {
                    assert!(matches!(row.status, Status::Ok | Status::Retry), "{name}: {row:?}");
                    assert_eq!(row.tokens, Some((r.usage.prompt_tokens, r.usage.completion_tokens)), "{name}");
                    assert_eq!(row.latency_ms, (!r.simulated).then_some(r.latency_ms), "{name}");
                }
                Err(e) => assert_eq!(row.status, Status::Failed(e.kind.as_str().to_string()), "{name}"),
            }
        }
        // The sums agree with the totals the session recorded at its end.
        if let Some((totals, _)) = session.end() {
            let sent = rows.iter().filter(|r| r.counted).count() as u64;
            let prompt: u64 = rows.iter().filter_map(|r| r.tokens).map(|t| t.0).sum();
            let completion: u64 = rows.iter().filter_map(|r| r.tokens).map(|t| t.1).sum();
            assert_eq!(
                (sent, prompt, completion),
                (totals.llm_calls, totals.prompt_tokens, totals.completion_tokens),
                "{name}"
            );
        }
    }
}

#[test]
fn the_calls_pane_opens_on_its_key_filters_and_fits_at_80x24() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = at_end(dir.path(), &shipped("bfs-solved.jsonl"));
    assert_eq!(app.keymap.key_hint(Action::Pane(0)).as_deref(), Some("L"));
    press(&mut app, 'L');
    assert!(app.open_pane.is_some());
    let all = rows(&app.session.run.engine);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains(&summary(&all, all.len())), "{screen}");
    // The footer names the pane's keys, not the explorer's keys they shadow (f is not fork here).
    let footer = screen.lines().last().unwrap_or_default();
    assert!(footer.contains("f failed only") && footer.contains("esc close"), "{footer}");
    assert!(!screen.contains("fork"), "{screen}");
    insta::assert_snapshot!("calls_pane_80x24", screen);

    // `p`: the first purpose's calls only, and the sum of those.
    press(&mut app, 'p');
    let first = all[0].purpose;
    let of: Vec<_> = all.iter().filter(|r| r.purpose == first).cloned().collect();
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains(&format!("purpose {first}")), "{screen}");
    assert!(screen.contains(&summary(&of, all.len())), "{screen}");
    // `f` on top: this session failed no call.
    press(&mut app, 'f');
    assert!(all.iter().all(|r| !matches!(r.status, Status::Failed(_))));
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("no call meets the filter"), "{screen}");
    assert!(screen.contains(&format!("0 of {} calls", all.len())), "{screen}");

    // Keys the pane leaves go to the explorer: `[` steps the timeline back under it.
    let before = app.session.replay.as_ref().unwrap().cursor;
    press(&mut app, '[');
    assert!(app.session.replay.as_ref().unwrap().cursor < before);
    assert!(app.open_pane.is_some());
    // Its key again closes it, and so does esc.
    press(&mut app, 'L');
    assert!(app.open_pane.is_none());
    press(&mut app, 'L');
    app.handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert!(app.open_pane.is_none());
}
