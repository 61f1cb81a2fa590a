//! Several problems in one explorer (`tui --range A..B`), opening sessions and demos
//! from inside the app (`o`), and the settings' problems shown at start.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::tui::app::{OpenSource, Popup};
use crate::tui::ui::status::header_text;

fn three_problems(dir: &Path) -> App {
    let task = Game24::builtin();
    let problems: Vec<Problem> = (900..903).map(|i| task.problem(i).unwrap()).collect();
    App::live_list(setup(dir, Params::default()), problems, Keymap::default(), ThemeSet::default(), "dark").unwrap()
}

fn key(app: &mut App, code: KeyCode) {
    let effects = app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    settle(app, effects);
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn session_files(dir: &Path) -> Vec<Session> {
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files.iter().map(|p| Session::load(p).unwrap()).collect()
}

#[test]
fn a_range_opens_a_problem_list_each_problem_its_own_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = three_problems(dir.path());
    assert!(header_text(&app, 200).contains("problem 1/3"), "{}", header_text(&app, 200));
    assert_eq!(app.session.header.index, Some(900));
    act(&mut app, Action::Step);
    let first_tree = app.session.run.engine.tree().len();
    let first_path = app.session_path().unwrap();

    act(&mut app, Action::NextProblem);
    assert!(!app.is_replay(), "a problem not visited yet starts live");
    assert_eq!(app.session.header.index, Some(901));
    assert_eq!(app.session.run.engine.tree().len(), 1, "a fresh run");
    assert!(header_text(&app, 200).contains("problem 2/3"), "{}", header_text(&app, 200));
    assert_ne!(app.session_path().unwrap(), first_path, "its own session file");
    act(&mut app, Action::RunPause);
    assert!(app.session.run.engine.is_finished());

    act(&mut app, Action::NextProblem);
    assert_eq!(app.session.header.index, Some(902));
    act(&mut app, Action::NextProblem);
    assert_eq!(app.session.header.index, Some(902), "no problem after the last");
    assert!(app.message.as_deref().is_some_and(|m| m.contains("last problem (3 of 3)")), "{:?}", app.message);

    // Back: the recorded run, as it was left, read-only.
    act(&mut app, Action::PrevProblem);
    assert!(app.is_replay());
    assert_eq!(app.session.header.index, Some(901));
    assert!(app.session.run.engine.is_finished());
    act(&mut app, Action::PrevProblem);
    assert_eq!(app.session.header.index, Some(900));
    assert_eq!(app.session.run.engine.tree().len(), first_tree);
    assert_eq!(app.session_path().unwrap(), first_path);
    assert!(header_text(&app, 200).contains("problem 1/3"));
    // R starts it again, live.
    act(&mut app, Action::Restart);
    assert!(!app.is_replay());
    assert_eq!(app.session.header.index, Some(900));

    // One session per problem visited and stepped (902 was only looked at: no file), and
    // the restart's once it records, each ended when left.
    act(&mut app, Action::Step);
    app.finish_recording();
    let sessions = session_files(dir.path());
    let indices: Vec<Option<usize>> = sessions.iter().map(|s| s.header.index).collect();
    assert_eq!(indices.iter().filter(|i| **i == Some(900)).count(), 2, "{indices:?}");
    assert!(indices.contains(&Some(901)) && !indices.contains(&Some(902)), "{indices:?}");
    let run_901 = sessions.iter().find(|s| s.header.index == Some(901)).unwrap();
    assert!(run_901.complete(), "leaving a problem ends its recording");
    assert!(run_901.end().is_some_and(|(t, _)| t.llm_calls > 0));
    assert_eq!(app.list_sessions().len(), 2, "one per problem that recorded something (902 was only looked at)");

    // A demo opened with `o` is not a problem of the list; the next key goes back to it.
    act(&mut app, Action::Open);
    type_text(&mut app, "bundled");
    key(&mut app, KeyCode::Enter);
    assert!(app.is_replay());
    assert!(!header_text(&app, 200).contains("problem 1/3"), "{}", header_text(&app, 200));
    act(&mut app, Action::NextProblem);
    assert_eq!(app.session.header.index, Some(901));
    assert!(header_text(&app, 200).contains("problem 2/3"));
    // On to 902: nothing was recorded there, so it starts afresh (not a missing file).
    act(&mut app, Action::NextProblem);
    assert_eq!(app.session.header.index, Some(902));
    assert!(!app.is_replay(), "{:?}", app.message);
    assert!(app.message.as_deref().is_some_and(|m| !m.contains("cannot be opened")), "{:?}", app.message);
}

#[test]
fn one_problem_has_no_list() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::NextProblem);
    assert_eq!(app.session.header.index, Some(900));
    assert!(app.message.as_deref().is_some_and(|m| m.contains("--range")), "{:?}", app.message);
    assert!(!header_text(&app, 200).contains("problem 1/"));
}

#[test]
fn o_opens_a_demo_or_a_recorded_session_as_a_replay() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    act(&mut app, Action::RunPause);
    let recorded = app.session_path().unwrap();
    // An older session in the folder, listed after the newer one.
    let older = dir.path().join("older.jsonl");
    std::fs::copy(&recorded, &older).unwrap();
    let file = std::fs::File::options().write(true).open(&older).unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000)).unwrap();
    drop(file);

    act(&mut app, Action::Open);
    let Some(Popup::Open(browser)) = &app.popup else { panic!("the session browser") };
    let sources: Vec<OpenSource> = browser.rows.iter().map(|r| r.source.clone()).collect();
    let demos = crate::demos::DEMOS.len();
    assert_eq!(sources[..2], [OpenSource::File(recorded.clone()), OpenSource::File(older.clone())], "newest first");
    assert_eq!(sources[2..], (0..demos).map(OpenSource::Demo).collect::<Vec<_>>()[..], "then the demos");
    // The older one, selected, is named in full under the tree.
    key(&mut app, KeyCode::Down);
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("older.jsonl · 1970-01-12 13:46"), "{screen}");
    key(&mut app, KeyCode::Up);

    // The second demo (filtered by its file's name): a replay in this app, on its first
    // caption like `thoughtscope demo 2`.
    type_text(&mut app, "dfs-backtracks");
    let screen = render(&mut app, 100, 30);
    assert!(screen.contains("demo 2 · dfs-backtracks.jsonl"), "{screen}");
    key(&mut app, KeyCode::Enter);
    assert!(app.popup.is_none());
    assert!(app.is_replay());
    assert_eq!(app.session.header.params.method.label(), "tot-dfs");
    let r = app.session.replay.as_ref().unwrap();
    let first = r.captions.first().expect("the demo is narrated").at;
    assert_eq!(r.cursor, first);
    app.seek(r.total);
    assert!(app.session.run.engine.tree().len() > 1);
    // The live run it left was ended.
    assert!(Session::load(&recorded).unwrap().complete());

    // A path typed by hand; a wrong one keeps the popup open and says why.
    act(&mut app, Action::Open);
    type_text(&mut app, &dir.path().join("nope.jsonl").display().to_string());
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.popup, Some(Popup::Open(_))));
    assert!(app.message.as_deref().is_some_and(|m| m.starts_with("cannot open") && m.contains("nope.jsonl")));
    key(&mut app, KeyCode::Esc);
    act(&mut app, Action::Open);
    type_text(&mut app, &older.display().to_string());
    key(&mut app, KeyCode::Enter);
    assert!(app.popup.is_none());
    assert_eq!(app.session_path().unwrap(), older);
    assert_eq!(app.session.header.index, Some(900));
    assert!(app.session.run.engine.is_finished());
    // And it forks like any replay.
    act(&mut app, Action::Fork);
    assert!(!app.is_replay());
}

#[test]
fn settings_problems_show_in_the_explorer_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "theme = \"broken\"\n[defaults]\nbreadth = \"five\"\n").unwrap();
    std::fs::create_dir(dir.path().join("themes")).unwrap();
    std::fs::write(dir.path().join("themes/broken.toml"), "[slots]\nborder = \"#12\"\n").unwrap();
    let (config, mut notes) = crate::config::Config::load_from(dir.path());
    let (keymap, themes, theme) = crate::tui::settings::ui_settings(&config, None, &mut notes).unwrap();
    assert!(notes.len() >= 2, "{notes:?}");
    let sessions = tempfile::tempdir().unwrap();
    let problem = Problem { index: Some(900), input: "4 5 6 10".into() };
    let mut app = App::live(setup(sessions.path(), Params::default()), &problem, keymap, themes, &theme);
    app.show_problems(&notes);
    assert!(matches!(app.popup, Some(Popup::Problems { .. })));
    let screen = render(&mut app, 160, 45);
    let config_file = dir.path().join("config.toml").display().to_string();
    assert!(screen.contains(&format!("{config_file}: defaults.breadth")), "{screen}");
    assert!(screen.contains("broken.toml: slot border"), "{screen}");
    assert!(screen.contains(&format!("{} warnings about the settings files", notes.len())), "{screen}");
    // A key closes it; the explorer goes on as usual.
    key(&mut app, KeyCode::Esc);
    assert!(app.popup.is_none());

    // A single problem goes to the message line.
    let mut app = live(sessions.path(), Params::default());
    app.show_problems(&notes[..1]);
    assert!(app.popup.is_none());
    assert_eq!(app.message.as_deref(), Some(notes[0].as_str()));
}

#[test]
fn a_multiple_choice_input_reads_on_one_line_in_the_header_tree_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let task = crate::tasks::build("mc-demo", &crate::tasks::TaskOptions::default(), &mut Vec::new()).unwrap();
    let problems: Vec<Problem> = (0..2).map(|i| task.problem(i).unwrap()).collect();
    assert!(problems[0].input.contains('\n'), "the options are on lines of their own");
    let mut s = setup(dir.path(), Params::new(crate::engine::methods::cot::KIND));
    s.header.task = "mc-demo".into();
    s.task = task;
    let mut app = App::live_list(s, problems.clone(), Keymap::default(), ThemeSet::default(), "dark").unwrap();
    let flat = crate::safe_text::one_line(&problems[0].input);
    let first_option = flat.find(" A. ").expect("options after the question, one space apart");
    let screen = render(&mut app, 220, 30);
    let header = header_text(&app, 220);
    assert!(header.contains(&flat[..first_option + 5]), "header: {header}");
    assert!(screen.contains(&format!("input {}", &flat[..first_option + 5])), "tree:\n{screen}");
    act(&mut app, Action::NextProblem);
    let second = crate::safe_text::one_line(&problems[1].input);
    assert_eq!(app.message.as_deref(), Some(format!("problem 2/2: {second}").as_str()));
}
