//! `thoughtscope diff A B --tui`: the two trees side by side, aligned by thought, each
//! row marked `=` (the same), `≠` (same thought, different score or status), `‹` (only
//! in A) or `›` (only in B); the header says where the runs first diverge. Drawing is a
//! pure function of [`DiffView`]; `run` owns the terminal and puts it back on every exit.

use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::diff::rows::{rows, Mark, Row};
use crate::diff::Diff;
use crate::engine::{NodeId, SearchTree};
use crate::export::Loaded;

pub struct DiffView<'a> {
    pub a: &'a Loaded,
    pub b: &'a Loaded,
    pub diff: &'a Diff,
    pub rows: Vec<Row>,
    pub selected: usize,
    /// First row shown.
    pub offset: usize,
    pub quit: bool,
}

impl<'a> DiffView<'a> {
    pub fn new(a: &'a Loaded, b: &'a Loaded, diff: &'a Diff) -> Self {
        let rows = rows(a.rebuilt.engine.tree(), b.rebuilt.engine.tree());
        DiffView { a, b, diff, rows, selected: 0, offset: 0, quit: false }
    }

    /// Move the selection: ↑↓ jk, page keys, g/G home/end; q, esc or ctrl-c quit.
    pub fn key(&mut self, code: KeyCode, modifiers: KeyModifiers, page: usize) {
        let last = self.rows.len().saturating_sub(1);
        let page = page.max(1);
        match code {
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => self.quit = true,
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::PageDown => self.selected = (self.selected + page).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(page),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = last,
            // The next row that differs.
            KeyCode::Char('n') => {
                if let Some(i) = self.rows.iter().skip(self.selected + 1).position(|r| r.mark != Mark::Same) {
                    self.selected += i + 1;
                }
            }
            _ => {}
        }
    }

    fn scroll_to_selection(&mut self, height: usize) {
        let height = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
    }
}

fn mark_style(mark: Mark) -> Style {
    match mark {
        Mark::Same => Style::default(),
        Mark::Changed => Style::default().fg(Color::Yellow),
        Mark::OnlyA => Style::default().fg(Color::Red),
        Mark::OnlyB => Style::default().fg(Color::Green),
    }
}

/// One side of a row: indent, id, status, value, thought, cut to `width` characters.
fn cell(tree: &SearchTree, id: Option<NodeId>, depth: usize, width: usize) -> String {
    let text = match id {
        Some(id) => {
            let n = tree.node(id);
            let value =
                tree.value(id).map(|v| format!(" {}", crate::engine::tree::format_value(v))).unwrap_or_default();
            format!(
                "{}{} {}{} {}",
                "  ".repeat(depth.min(12)),
                id,
                n.status.label(),
                value,
                crate::export::node_text(tree, id)
            )
        }
        None => String::new(),
    };
    let text = crate::safe_text::clip(&text, width);
    format!("{text:<width$}")
}

fn side_line(name: &str, l: &Loaded) -> String {
    let outcome = match l.rebuilt.engine.outcome() {
        Some(o) => format!(
            "{} {}",
            if o.solved { "solved" } else { "not solved" },
            o.answer.as_deref().unwrap_or("(no answer)")
        ),
        None => "unfinished".into(),
    };
    format!(
        "{name}: {} · {} inputs, {} nodes · {outcome}",
        l.session.path.display(),
        l.session.input_count(),
        l.rebuilt.engine.tree().len()
    )
}

/// Draw the view (and keep the selection on screen).
pub fn draw(frame: &mut Frame, view: &mut DiffView) {
    let area = frame.area();
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(4), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let d = view.diff;
    let divergence = match &d.first_divergence {
        Some(x) => format!("first divergence: input {} ({}) · A: {} · B: {}", x.input, x.kind.label(), x.a, x.b),
        None if d.same => "the runs are the same".into(),
        None => "the recorded inputs are the same".into(),
    };
    let summary = format!(
        "only in A {} · only in B {} · score differs {} · status differs {}{}",
        d.only_in_a.len(),
        d.only_in_b.len(),
        d.score_changes.len(),
        d.status_changes.len(),
        if d.outcome_differs { " · outcomes differ" } else { "" }
    );
    let lines: Vec<Line> = [side_line("A", view.a), side_line("B", view.b), divergence, summary]
        .into_iter()
        .map(|t| Line::from(crate::safe_text::terminal_safe(&t).into_owned()))
        .collect();
    frame.render_widget(Paragraph::new(lines), header);

    let block = Block::default().borders(Borders::TOP).title(" A  ·  B — aligned by thought ");
    let inner = block.inner(body);
    frame.render_widget(block, body);
    let height = inner.height as usize;
    view.scroll_to_selection(height);
    let half = (inner.width as usize).saturating_sub(3) / 2;
    let (ta, tb) = (view.a.rebuilt.engine.tree(), view.b.rebuilt.engine.tree());
    let lines: Vec<Line> = view
        .rows
        .iter()
        .enumerate()
        .skip(view.offset)
        .take(height)
        .map(|(i, r)| {
            let mut style = mark_style(r.mark);
            if i == view.selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            let left = crate::safe_text::terminal_safe(&cell(ta, r.a, r.depth, half)).into_owned();
            let right = crate::safe_text::terminal_safe(&cell(tb, r.b, r.depth, half)).into_owned();
            Line::from(vec![
                Span::styled(left, style),
                Span::styled(format!(" {} ", r.mark.sign()), style.add_modifier(Modifier::BOLD)),
                Span::styled(right, style),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
    let keys = format!(
        "row {}/{} · ↑↓ move · n next difference · g/G ends · q quit · = same ≠ differs ‹ only A › only B",
        (view.selected + 1).min(view.rows.len()),
        view.rows.len()
    );
    frame.render_widget(Paragraph::new(Line::from(keys).style(Style::default().add_modifier(Modifier::DIM))), footer);
}

/// Rows of the body at this terminal size (for page keys).
fn body_height(area: Rect) -> usize {
    area.height.saturating_sub(6) as usize
}

/// Show the view until the person quits; the terminal is put back on every exit path.
pub fn run(view: &mut DiffView) -> std::io::Result<()> {
    super::install_panic_hook();
    let (mut terminal, guard) = super::setup_terminal()?;
    while !view.quit {
        terminal.draw(|frame| draw(frame, view))?;
        if let TermEvent::Key(key) = event::read()? {
            if key.kind == KeyEventKind::Press {
                let size = terminal.size()?;
                view.key(key.code, key.modifiers, body_height(Rect::new(0, 0, size.width, size.height)));
            }
        }
    }
    drop(terminal);
    drop(guard);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use super::*;
    use crate::engine::{Command, Input};
    use crate::session::{apply_input, replay, Session, SessionWriter, Totals};

    /// The demo BFS session and a fork of it that prunes node #1 after two inputs.
    fn parent_and_fork(dir: &Path) -> (Loaded, Loaded) {
        let parent_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
        let parent = Session::load(&parent_path).unwrap();
        let fork = dir.join("fork.jsonl");
        let mut writer = SessionWriter::fork(&fork, &parent, 2).unwrap();
        let mut rebuilt = replay::rebuild(&parent, None, Some(2)).unwrap();
        let input = Input::command(Command::Prune { node: NodeId(1) });
        let applied = apply_input(&mut rebuilt.engine, &mut Totals::default(), &input);
        writer.input(&input, None, &applied.events).unwrap();
        drop(writer);
        (crate::export::load(&parent_path, None).unwrap(), crate::export::load(&fork, None).unwrap())
    }

    fn screen(view: &mut DiffView, w: u16, h: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
        terminal.draw(|f| draw(f, view)).unwrap();
        let buf = terminal.backend().buffer().clone();
        (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn both_trees_side_by_side_with_the_differences_marked() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let diff = crate::diff::diff(&a, &b);
        let mut view = DiffView::new(&a, &b, &diff);
        assert_eq!(view.rows.len(), a.rebuilt.engine.tree().len(), "the fork's nodes all pair with the parent's");
        for (w, h) in [(80, 24), (220, 60)] {
            let text = screen(&mut view, w, h);
            assert!(text.contains("first divergence: input 2 (command)"), "{text}");
            assert!(text.contains(&format!("only in A {}", diff.only_in_a.len())), "{text}");
            assert!(text.contains(" ≠ "), "node #1 pruned in B only: {text}");
            assert!(text.contains(" = "), "{text}");
            assert!(text.contains("#1 expanded"), "{text}");
            assert!(text.contains("#1 pruned"), "{text}");
        }
        // n goes to the next difference; the selection stays on screen at the end.
        view.key(KeyCode::Char('n'), KeyModifiers::NONE, 10);
        assert_ne!(view.rows[view.selected].mark, Mark::Same);
        view.key(KeyCode::Char('G'), KeyModifiers::NONE, 10);
        assert_eq!(view.selected, view.rows.len() - 1);
        let text = screen(&mut view, 80, 24);
        assert!(text.contains(&format!("row {}/{}", view.rows.len(), view.rows.len())), "{text}");
        assert!(text.contains(" ‹ "), "the parent's later nodes are only in A: {text}");
        view.key(KeyCode::Char('q'), KeyModifiers::NONE, 10);
        assert!(view.quit);
    }
}
