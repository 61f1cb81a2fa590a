//! Small expectations, at 80×24 and 160×45: a run says its session file when it starts,
//! a click on a row of the scores pane selects that node, and the help lists the focused
//! pane's keys first.

use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use super::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 45)];

#[test]
fn a_run_says_where_it_records_when_it_starts() {
    for (w, h) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = live(dir.path(), Params::default());
        let path = app.session_path().unwrap();
        let said = format!("recording to {}", crate::tui::app::shown_path(&path));
        assert_eq!(app.recording_note().as_deref(), Some(said.as_str()));
        // `R`: a new run, in a new file, says so.
        act(&mut app, Action::Step);
        app.message = None;
        act(&mut app, Action::Restart);
        let again = app.session_path().unwrap();
        assert_ne!(again, path);
        assert_eq!(app.message, Some(format!("recording to {}", crate::tui::app::shown_path(&again))));
        let screen = render(&mut app, w, h);
        assert!(screen.contains("recording to"), "{screen}");
    }
}

/// The loop says it when the explorer opens on a live run (a replay has nothing to say).
#[tokio::test]
async fn the_explorer_opens_saying_where_it_records() {
    let dir = tempfile::tempdir().unwrap();
    let app = live(dir.path(), Params::default());
    let path = app.session_path().unwrap();
    let mut terminal = Terminal::new(TestBackend::new(160, 45)).unwrap();
    let keys = futures::stream::empty::<std::io::Result<ratatui::crossterm::event::Event>>();
    let quit = Box::pin(std::future::pending::<()>());
    let provider: Arc<dyn crate::llm::Provider> =
        Arc::new(SimProvider::new(SimConfig::default(), &crate::tasks::SimPlayers));
    let app = super::super::drive(app, &mut terminal, keys, quit, provider, 8, Vec::new()).await.unwrap();
    let said = app.message.clone().unwrap_or_default();
    assert!(
        said.starts_with("recording to ") && said.ends_with(&*path.file_name().unwrap().to_string_lossy()),
        "{said}"
    );
}

fn click(app: &mut App, x: u16, y: u16) {
    let mouse =
        MouseEvent { kind: MouseEventKind::Down(MouseButton::Left), column: x, row: y, modifiers: KeyModifiers::NONE };
    let effects = app.handle_mouse(mouse);
    settle(app, effects);
}

#[test]
fn a_click_on_a_scores_row_selects_its_node() {
    for (w, h) in SIZES {
        let dir = tempfile::tempdir().unwrap();
        let mut app = live(dir.path(), Params::default());
        // Proposals, then their values: the scores pane ranks them.
        act(&mut app, Action::Step);
        act(&mut app, Action::Step);
        let first = render(&mut app, w, h);
        let area = app.areas[Pane::Scores.index()];
        let lines = app.scores.lines.borrow().clone();
        let (line, node) = lines
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.map(|n| (i, n)))
            .find(|&(_, n)| n != app.selected())
            .unwrap_or_else(|| panic!("a scores row for another node: {lines:?}\n{first}"));
        // The row shows that node's number.
        let screen = render(&mut app, w, h);
        let row: String =
            screen.lines().nth(usize::from(area.y) + 1 + line).unwrap().chars().skip(usize::from(area.x)).collect();
        assert!(row.contains(&format!("{node} ")), "row {line} shows {node}: {row}");
        click(&mut app, area.x + 3, area.y + 1 + line as u16);
        assert_eq!(app.selected(), node);
        assert_eq!(app.view.focus, Pane::Scores);
        // A click on the frame selects nothing new.
        click(&mut app, area.x + 3, area.y);
        assert_eq!(app.selected(), node);
    }
}

#[test]
fn the_help_lists_the_focused_panes_keys_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = live(dir.path(), Params::default());
    for (pane, first) in [(Pane::Tree, "The Tree pane (focused)"), (Pane::Detail, "The Detail pane (focused)")] {
        app.view.focus = pane;
        let help = crate::tui::ui::help_text(&app);
        let heading = help.lines().find(|l| !l.trim().is_empty()).unwrap();
        assert_eq!(heading.trim(), first);
        for action in crate::tui::ui::pane_actions(pane) {
            let desc = app.keymap.help().into_iter().find(|(_, a, _)| a == action).map(|(_, _, d)| d).unwrap();
            let at = help.find(&desc).unwrap();
            assert!(at < help.find("Steering (recorded").unwrap_or(usize::MAX), "{action:?} in the first group");
            assert_eq!(help.matches(&desc).count(), 1, "{action:?} listed once");
        }
    }
    app.view.focus = Pane::Detail;
    app.handle_action(Action::Help);
    let screen = render(&mut app, 80, 24);
    assert!(screen.contains("The Detail pane (focused)"), "{screen}");
}
