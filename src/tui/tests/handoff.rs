//! Hand-off, driven by keys and drawn at 80×24 and 160×45: `V` the focused text for the
//! pager, `E` the selected thought for the editor (a changed text becomes the edit
//! command), `y` the focused text for the clipboard; the help says so, and how to select
//! text with the mouse on. (The terminal side runs end to end in `tests/e2e_pty.rs`.)

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::tui::app::Outgoing;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

fn press(app: &mut App, c: char) {
    let effects = app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::SHIFT));
    settle(app, effects);
}

/// A live run after one step, with the first child of the root selected.
fn stepped(dir: &Path) -> (App, NodeId) {
    let mut app = live(dir, Params::default());
    act(&mut app, Action::Step);
    let child = app.session.run.engine.tree().node(NodeId(0)).children[0];
    select(&mut app, child);
    (app, child)
}

/// Give back what the outside program left and carry out the effects.
fn back(app: &mut App, job: &Outgoing, result: Result<String, String>) {
    let effects = app.handed_back(job, result);
    settle(app, effects);
}

#[test]
fn v_hands_the_whole_detail_to_the_pager_and_the_transcript_when_it_is_focused() {
    for (w, h) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let (mut app, child) = stepped(dir.path());
        render(&mut app, w, h);
        press(&mut app, 'V');
        let Some(Outgoing::Pager { what, text }) = app.outgoing.take() else { panic!("V asks for the pager") };
        assert_eq!(what, format!("{child}'s detail"));
        let thought = app.session.run.engine.tree().node(child).thought.clone();
        assert!(text.contains(&format!("  {}", thought.lines().next().unwrap())), "the thought: {text}");
        // The whole detail, past what the pane shows at this size: the prompts and raw replies.
        assert!(text.contains("prompt (user):") && text.contains("reply 1:"), "{text}");
        let pane = usize::from(app.areas[Pane::Detail.index()].height.saturating_sub(2));
        assert!(text.lines().count() > pane, "more than the pane shows: {} lines, {pane} rows", text.lines().count());
        let job = Outgoing::Pager { what, text };
        back(&mut app, &job, Ok(String::new()));
        let screen = render(&mut app, w, h);
        assert!(screen.contains(&format!("{child}'s detail was shown in the pager")), "{screen}");
        // The transcript, when it has the focus.
        act(&mut app, Action::FocusTranscript);
        act(&mut app, Action::Pager);
        let Some(Outgoing::Pager { what, text }) = app.outgoing.take() else { panic!("V asks for the pager") };
        assert_eq!(what, "the transcript");
        assert!(text.contains("step 1: expanding 1 state"), "{text}");
    }
}

#[test]
fn e_edits_the_thought_in_the_editor_and_a_changed_text_is_the_edit_command() {
    for (w, h) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let (mut app, child) = stepped(dir.path());
        press(&mut app, 'E');
        let Some(job @ Outgoing::Editor { edit: Some(node), .. }) = app.outgoing.take() else {
            panic!("E asks for the editor on the thought")
        };
        assert_eq!(node, child);
        let Outgoing::Editor { text, .. } = &job else { unreachable!() };
        assert_eq!(text.trim_end(), app.session.run.engine.tree().node(child).thought);
        // Unchanged: nothing is sent.
        let before = app.session.run.engine.tree().len();
        back(&mut app, &job, Ok(text.clone()));
        assert_eq!(app.session.run.engine.tree().len(), before);
        assert!(render(&mut app, w, h).contains(&format!("{child}'s thought is unchanged")));
        // Changed: an edit, recorded, and the new sibling is selected.
        back(&mut app, &job, Ok("4 + 6 = 10 (left: 5 10 10)\n".into()));
        let edited = app.selected();
        let n = app.session.run.engine.tree().node(edited);
        assert!(matches!(n.origin, Origin::Human { edited_from: Some(from) } if from == child), "{:?}", n.origin);
        assert_eq!(n.thought, "4 + 6 = 10 (left: 5 10 10)");
        let commands = recorded_commands(&app.session_path().unwrap());
        assert!(
            commands.contains(&Command::Edit { node: child, text: "4 + 6 = 10 (left: 5 10 10)".into() }),
            "{commands:?}"
        );
        assert!(render(&mut app, w, h).contains("✎"), "the edit is drawn");
        // An editor that failed says so in one line, and nothing is edited.
        let count = app.session.run.engine.tree().len();
        back(&mut app, &job, Err("$EDITOR (nano) ended with exit status: 1".into()));
        assert_eq!(app.session.run.engine.tree().len(), count);
        assert!(render(&mut app, w, h).contains("$EDITOR (nano) ended with"));
    }
}

#[test]
fn in_a_replay_e_opens_the_detail_to_read_and_edits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = demo_replay(dir.path(), 0);
    let node = app.session.run.engine.tree().node(NodeId(0)).children[0];
    select(&mut app, node);
    act(&mut app, Action::Editor);
    let Some(job @ Outgoing::Editor { edit: None, .. }) = app.outgoing.take() else {
        panic!("E in a replay opens the detail, not an edit")
    };
    let count = app.session.run.engine.tree().len();
    back(&mut app, &job, Ok("changed".into()));
    assert_eq!(app.session.run.engine.tree().len(), count);
    assert!(app.message.as_deref().unwrap_or_default().contains("a replay is read-only"), "{:?}", app.message);
}

#[test]
fn y_sends_the_focused_text_to_the_clipboard_and_the_help_says_how() {
    for (w, h) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let (mut app, child) = stepped(dir.path());
        act(&mut app, Action::FocusDetail);
        let effects = app.handle_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE));
        settle(&mut app, effects);
        let Some(job @ Outgoing::Clipboard { .. }) = app.outgoing.take() else { panic!("y asks for the clipboard") };
        let Outgoing::Clipboard { what, text } = &job else { unreachable!() };
        assert_eq!(what, &format!("{child}'s detail"));
        assert_eq!(text, &app.focused_text().1);
        assert!(!job.suspends(), "the clipboard keeps the screen");
        back(&mut app, &job, Ok(text.clone()));
        let screen = render(&mut app, w, h);
        assert!(screen.contains("sent to the clipboard by OSC 52"), "{screen}");
        // The help lists the three keys, and how to select text while the mouse is on.
        let help = crate::tui::ui::help_text(&app);
        for line in ["V  ", "E  ", "y  ", "shift+drag selects"] {
            assert!(help.contains(line), "{line:?} in the help:\n{help}");
        }
    }
}
