//! `thoughtscope diff A B --tui`: the two trees side by side, aligned by thought, each
//! row marked `=` (the same), `≠` (same thought, different score or status), `‹` (only
//! in A) or `›` (only in B); the header says where the runs first diverge. A timeline
//! over both runs (a replay cursor per side, moved together: ←→ one input, Home/End, `d`
//! the divergence) shows the trees after input i, shared up to the divergence. Each run
//! is replayed once on opening (its cursor, walked to the end, also gives the comparison).
//! Drawing is a pure function of [`DiffView`]; `run` owns the terminal and puts it back on
//! every exit.

use std::path::Path;

use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::diff::rows::{rows, Mark, Row};
use crate::diff::Diff;
use crate::engine::{NodeId, SearchTree};
use crate::session::cursor::ReplayCursor;
use crate::session::Session;

/// Lines above the trees: the timeline, each run, the divergence, the summary.
const HEADER: u16 = 5;

/// Both runs at one point of their timelines: input `position` on each side (clamped
/// at each side's end). Up to the first divergence the two sides apply the same inputs,
/// so their trees are the same; past it each side steps through its own.
pub struct Timeline<'a> {
    pub a: ReplayCursor<'a>,
    pub b: ReplayCursor<'a>,
    /// The inputs applied on the longer side (0 ..= the longer run's count).
    pub position: usize,
}

impl Timeline<'_> {
    /// The end of the longer run.
    pub fn last(&self) -> usize {
        self.a.total().max(self.b.total())
    }

    fn seek(&mut self, position: usize) {
        self.position = position.min(self.last());
        self.a.seek(self.position);
        self.b.seek(self.position);
    }
}

pub struct DiffView<'a> {
    /// The comparison of the two whole runs.
    pub diff: Diff,
    pub timeline: Timeline<'a>,
    /// The rows of the two trees at the timeline's position.
    pub rows: Vec<Row>,
    pub selected: usize,
    /// First row shown.
    pub offset: usize,
    pub quit: bool,
}

impl<'a> DiffView<'a> {
    /// The view at the end of both runs, each replayed once; `prompts` is the template
    /// directory the runs used. The error is one line naming the run that does not replay.
    pub fn open(a: &'a Session, b: &'a Session, prompts: Option<&Path>) -> Result<Self, String> {
        let (ca, cb) = (crate::diff::replay(a, prompts)?, crate::diff::replay(b, prompts)?);
        let diff = crate::diff::diff_runs(
            crate::diff::Run { session: a, engine: ca.engine() },
            crate::diff::Run { session: b, engine: cb.engine() },
        );
        let position = ca.total().max(cb.total());
        let rows = rows(ca.engine().tree(), cb.engine().tree());
        let timeline = Timeline { a: ca, b: cb, position };
        Ok(DiffView { diff, timeline, rows, selected: 0, offset: 0, quit: false })
    }

    /// What the runs' replays warned about (a torn last line), for the CLI to print.
    pub fn warnings(&self) -> Vec<String> {
        let (a, b) = (&self.timeline.a, &self.timeline.b);
        a.session()
            .warnings
            .iter()
            .chain(a.warnings())
            .chain(&b.session().warnings)
            .chain(b.warnings())
            .cloned()
            .collect()
    }

    /// The input (0-based) where the runs first differ, if they do.
    pub fn divergence(&self) -> Option<usize> {
        self.diff.first_divergence.as_ref().map(|d| d.input)
    }

    /// Move both runs to input `position` (clamped) and recompute the rows.
    pub fn go_to(&mut self, position: usize) {
        self.timeline.seek(position);
        self.rows = rows(self.timeline.a.engine().tree(), self.timeline.b.engine().tree());
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    /// Move the selection: ↑↓ jk, page keys, g/G first/last row, n next difference;
    /// the timeline: ←→ (or , .) one input, Home/End (or ( )) its ends, d the
    /// divergence; q, esc or ctrl-c quit.
    pub fn key(&mut self, code: KeyCode, modifiers: KeyModifiers, page: usize) {
        let last = self.rows.len().saturating_sub(1);
        let page = page.max(1);
        let position = self.timeline.position;
        match code {
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => self.quit = true,
            KeyCode::Down | KeyCode::Char('j') => self.selected = (self.selected + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::PageDown => self.selected = (self.selected + page).min(last),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(page),
            KeyCode::Char('g') => self.selected = 0,
            KeyCode::Char('G') => self.selected = last,
            // The next row that differs.
            KeyCode::Char('n') => {
                if let Some(i) = self.rows.iter().skip(self.selected + 1).position(|r| r.mark != Mark::Same) {
                    self.selected += i + 1;
                }
            }
            KeyCode::Left | KeyCode::Char(',') => self.go_to(position.saturating_sub(1)),
            KeyCode::Right | KeyCode::Char('.') => self.go_to(position + 1),
            KeyCode::Home | KeyCode::Char('(') => self.go_to(0),
            KeyCode::End | KeyCode::Char(')') => self.go_to(usize::MAX),
            KeyCode::Char('d') => {
                if let Some(k) = self.divergence() {
                    self.go_to(k);
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

    /// `input i of nA / nB` and where the cursor is against the divergence.
    pub fn timeline_line(&self) -> String {
        let t = &self.timeline;
        let at = format!("input {} of {} / {}", t.position, t.a.total(), t.b.total());
        // The same inputs need not make the same trees (other parameters, another engine):
        // the rows say which, and the line never claims more than they show.
        let differing = self.rows.iter().filter(|r| r.mark != Mark::Same).count();
        let yet = if differing == 0 {
            String::new()
        } else {
            let rows = if differing == 1 { "row already differs" } else { "rows already differ" };
            format!(", yet {differing} {rows} (the runs differ in more than their inputs)")
        };
        let place = match self.divergence() {
            Some(k) if t.position < k => format!("shared ({k} inputs the same{yet}; d: the divergence)"),
            Some(k) if t.position == k && differing == 0 => {
                "at the divergence: both runs are the same up to here".to_string()
            }
            Some(k) if t.position == k => format!("at the divergence: the same inputs up to here{yet}"),
            Some(_) => "past the divergence: each run its own inputs".to_string(),
            None => "the recorded inputs are the same".to_string(),
        };
        format!("{at} · {place}")
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

fn side_line(name: &str, cursor: &ReplayCursor) -> String {
    let engine = cursor.engine();
    let outcome = match engine.outcome() {
        Some(o) => format!(
            "{} {}",
            if o.solved { "solved" } else { "not solved" },
            o.answer.as_deref().unwrap_or("(no answer)")
        ),
        None => "unfinished".into(),
    };
    format!(
        "{name}: {} · input {}/{}, {} nodes · {outcome}",
        cursor.session().path.display(),
        cursor.position(),
        cursor.total(),
        engine.tree().len()
    )
}

/// Draw the view (and keep the selection on screen).
pub fn draw(frame: &mut Frame, view: &mut DiffView) {
    let area = frame.area();
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(HEADER), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let d = &view.diff;
    let divergence = divergence_line(d, area.width as usize);
    let summary = format!(
        "at the end: paired {} · only in A {} · only in B {} · thought changed {} · score differs {} · status differs {}{}",
        d.pairs,
        d.only_in_a.len(),
        d.only_in_b.len(),
        d.thought_changes.len(),
        d.score_changes.len(),
        d.status_changes.len(),
        if d.outcome_differs { " · outcomes differ" } else { "" }
    );
    let lines: Vec<Line> =
        [view.timeline_line(), side_line("A", &view.timeline.a), side_line("B", &view.timeline.b), divergence, summary]
            .into_iter()
            // A line wider than the screen is cut where it shows it (`…`).
            .map(|t| Line::from(crate::safe_text::clip(&crate::safe_text::terminal_safe(&t), area.width as usize)))
            .collect();
    frame.render_widget(Paragraph::new(lines), header);

    let title = " A  ·  B — aligned by thought under paired parents (the same, then the most alike) ";
    let block = Block::default()
        .borders(Borders::TOP)
        .title(crate::safe_text::clip(title, (area.width as usize).saturating_sub(1)));
    let inner = block.inner(body);
    frame.render_widget(block, body);
    let height = inner.height as usize;
    view.scroll_to_selection(height);
    let half = (inner.width as usize).saturating_sub(3) / 2;
    let (ta, tb) = (view.timeline.a.engine().tree(), view.timeline.b.engine().tree());
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
    let what = match view.rows.get(view.selected) {
        Some(r) if r.mark == Mark::Changed => format!(" · {} differs", r.differs.words()),
        Some(r) if matches!(r.mark, Mark::OnlyA | Mark::OnlyB) => format!(" · {}", only_reason(view, r)),
        _ => String::new(),
    };
    let keys = format!(
        "row {}/{}{what} · ↑↓ row · ←→ input · d divergence · Home/End · n difference · q quit · g/G first/last row · = same ≠ differs ‹ only A › only B",
        (view.selected + 1).min(view.rows.len()),
        view.rows.len()
    );
    // The row and why it differs come first; the keys are cut with `…` where the screen ends.
    let keys = crate::safe_text::clip(&keys, area.width as usize);
    frame.render_widget(Paragraph::new(Line::from(keys).style(Style::default().add_modifier(Modifier::DIM))), footer);
}

/// Where the runs first diverge, in `width` columns: each run's input gets half of what
/// the line has left, so B's shows too however long A's is (issue 28: at 160 columns
/// A's reply filled the line and B's was cut off).
fn divergence_line(d: &Diff, width: usize) -> String {
    let Some(x) = &d.first_divergence else {
        return if d.same { "the runs are the same".into() } else { "the recorded inputs are the same".into() };
    };
    let head = format!("diverged at input {}: {}", x.input, x.kind.label());
    let share = width.saturating_sub(head.chars().count() + 2 * " · A: ".chars().count()).max(16) / 2;
    let side = |t: &str| crate::safe_text::clip(t, share);
    format!("{head} · A: {} · B: {}", side(&x.a), side(&x.b))
}

/// Why a row is on one side only: what the other run did with the node's parent.
fn only_reason(view: &DiffView, row: &Row) -> String {
    let (ta, tb) = (view.timeline.a.engine().tree(), view.timeline.b.engine().tree());
    let (this, other, id, side, other_side) = match (row.a, row.b) {
        (Some(a), None) => (ta, tb, a, "A", "B"),
        (None, Some(b)) => (tb, ta, b, "B", "A"),
        _ => return String::new(),
    };
    let Some(parent) = this.node(id).parent else { return format!("only in {side}: its root") };
    let twin = view.rows.iter().find_map(|r| match side {
        "A" if r.a == Some(parent) => Some(r.b),
        "B" if r.b == Some(parent) => Some(r.a),
        _ => None,
    });
    let why = match twin.flatten() {
        None => format!("its parent {parent} is only in {side} too"),
        Some(p) if other.is_pruned(p) => format!("{other_side} pruned its parent {p}"),
        Some(p) if other.node(p).children.is_empty() => format!("{other_side} has not expanded its parent {p} here"),
        Some(p) => format!("{other_side}'s children of {p} are other thoughts"),
    };
    format!("only in {side}: {why}")
}

/// Rows of the body at this terminal size (for page keys).
fn body_height(area: Rect) -> usize {
    area.height.saturating_sub(HEADER + 2) as usize
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
    use crate::export::Loaded;
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
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        assert_eq!(view.diff, diff, "the view compares what `diff` does");
        assert_eq!(view.rows.len(), a.rebuilt.engine.tree().len(), "the fork's nodes all pair with the parent's");
        for (w, h) in [(80, 24), (220, 60)] {
            let text = screen(&mut view, w, h);
            assert!(text.contains("diverged at input 2: command"), "{text}");
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
        // A ‹ row says why: what B did with its parent.
        let only = view.rows.iter().position(|r| r.mark == Mark::OnlyA).expect("a row only in A");
        view.selected = only;
        for (w, h) in [(80, 24), (220, 60)] {
            let text = screen(&mut view, w, h);
            let footer = text.lines().last().unwrap_or_default().to_string();
            assert!(footer.contains(" · only in A: "), "{w}x{h}: {footer}");
            let r = &view.rows[only];
            let reason = only_reason(&view, r);
            assert!(
                reason.contains("pruned its parent")
                    || reason.contains("has not expanded")
                    || reason.contains("other thoughts")
                    || reason.contains("only in A too"),
                "{reason}"
            );
        }
        view.key(KeyCode::Char('q'), KeyModifiers::NONE, 10);
        assert!(view.quit);
    }

    /// Issue 28: `d` said "both runs are the same up to here" while rows showed ≠; the
    /// line says the same only when every row is the same.
    #[test]
    fn the_divergence_line_never_claims_the_same_over_differing_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        press(&mut view, KeyCode::Char('d'));
        assert!(view.timeline_line().contains("both runs are the same up to here"), "{}", view.timeline_line());
        // The same inputs, different trees (as runs with other parameters give).
        view.rows[0].mark = Mark::Changed;
        let line = view.timeline_line();
        assert!(!line.contains("the same up to here") || line.contains("yet 1 row already differs"), "{line}");
        assert!(line.contains("at the divergence: the same inputs up to here, yet 1 row already differs"), "{line}");
        let text = screen(&mut view, 220, 60);
        assert!(text.contains("yet 1 row already differs") && text.contains(" ≠ "), "{text}");
    }

    /// At 80×24 a header line wider than the screen ends in `…` where it is cut.
    #[test]
    fn header_lines_too_wide_for_80_columns_end_in_an_ellipsis() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        let text = screen(&mut view, 80, 24);
        let rows: Vec<&str> = text.lines().take(HEADER as usize).collect();
        let full = [view.timeline_line(), side_line("A", &view.timeline.a), side_line("B", &view.timeline.b)];
        assert!(full.iter().any(|t| t.chars().count() > 80), "a line is too wide: {full:#?}");
        for (row, full) in rows.iter().zip(&full) {
            if full.chars().count() > 80 {
                assert!(row.ends_with('…'), "{row:?} cut from {full:?}");
                let kept: String = full.chars().take(79).collect();
                assert_eq!(row.trim_end_matches('…'), kept);
            } else {
                assert_eq!(row.trim_end(), full.as_str());
            }
        }
    }

    /// Issue 28, checked by hand: at 80×24 the table's title and the footer were cut
    /// without `…`, and at 160×45 A's input filled the divergence line, so B's was cut off
    /// (`(left: ……`). Both runs' inputs show at both sizes, and a cut line ends in one `…`.
    #[test]
    fn the_divergence_names_both_runs_and_every_cut_line_ends_in_an_ellipsis() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        let x = view.diff.first_divergence.clone().expect("the fork diverges");
        // Make A's input longer than any screen, as a long reply is.
        view.diff.first_divergence.as_mut().unwrap().a = format!("{} {}", x.a, "5 - 4 = 1 (left: 1 6 10) ".repeat(12));
        let b_start: String = x.b.chars().take(8).collect();
        for (w, h) in [(80u16, 24u16), (160, 45)] {
            let text = screen(&mut view, w, h);
            let rows: Vec<&str> = text.lines().collect();
            let line = rows[3].trim_end();
            assert!(line.contains(" · B: ") && line.contains(&b_start), "{w}x{h}: B's input shows: {line:?}");
            assert!(!text.contains("……"), "{w}x{h}: one ellipsis at a cut:\n{text}");
            let title = rows[HEADER as usize].trim_end_matches(['─', ' ']);
            assert!(title.ends_with("most alike)") || title.ends_with('…'), "{w}x{h}: {title:?}");
            let footer = rows[h as usize - 1].trim_end();
            assert!(footer.ends_with("› only B") || footer.ends_with('…'), "{w}x{h}: {footer:?}");
            assert!(footer.starts_with("row 1/"), "{w}x{h}: {footer:?}");
        }
        // At 80 columns the title and the footer are both too wide: each says where it is cut.
        let text = screen(&mut view, 80, 24);
        let rows: Vec<&str> = text.lines().collect();
        assert!(rows[HEADER as usize].contains('…') && rows[23].ends_with('…'), "{text}");
    }

    fn press(view: &mut DiffView, code: KeyCode) {
        view.key(code, KeyModifiers::NONE, 10);
    }

    /// The body's rows (below the header's five lines and the border, above the footer).
    fn body(text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        lines[6..lines.len() - 1].join("\n")
    }

    #[test]
    fn the_timeline_is_shared_up_to_the_divergence_then_each_run_steps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let diff = crate::diff::diff(&a, &b);
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        assert_eq!(view.diff, diff, "the view compares what `diff` does");
        let (na, nb) = (a.session.input_count(), b.session.input_count());
        assert_eq!(nb, 3, "the fork: two of the parent's inputs and a prune");
        assert!(na > nb);
        // It starts at the end: the whole runs, as before.
        assert_eq!(view.timeline.position, na);
        assert_eq!(view.rows, rows(a.rebuilt.engine.tree(), b.rebuilt.engine.tree()));

        // d: at the divergence both trees are the same (no ‹ › ≠ rows).
        press(&mut view, KeyCode::Char('d'));
        assert_eq!(view.timeline.position, 2);
        assert_eq!((view.timeline.a.position(), view.timeline.b.position()), (2, 2));
        assert!(view.rows.iter().all(|r| r.mark == Mark::Same), "{:?}", view.rows);
        assert_eq!(view.timeline.a.engine().tree().len(), view.timeline.b.engine().tree().len());
        for (w, h) in [(80, 24), (220, 60)] {
            let text = screen(&mut view, w, h);
            assert!(text.contains(&format!("input 2 of {na} / {nb}")), "{text}");
            assert!(text.contains("at the divergence"), "{text}");
            assert!(text.contains("diverged at input 2: command"), "{text}");
            assert!(text.contains(&format!("A: {}", a.session.path.display()).chars().take(20).collect::<String>()));
            let rows_text = body(&text);
            for sign in [" ‹ ", " › ", " ≠ "] {
                assert!(!rows_text.contains(sign), "no differences before the divergence ({sign}):\n{text}");
            }
            assert!(rows_text.contains(" = "), "{text}");
        }

        // One input later the fork's prune shows: node #1 differs.
        press(&mut view, KeyCode::Right);
        assert_eq!(view.timeline.position, 3);
        assert!(view.rows.iter().any(|r| r.mark == Mark::Changed), "{:?}", view.rows);
        for (w, h) in [(80, 24), (220, 60)] {
            let text = screen(&mut view, w, h);
            assert!(text.contains(&format!("input 3 of {na} / {nb}")), "{text}");
            assert!(text.contains("past the divergence"), "{text}");
            assert!(text.contains("#1 pruned"), "{text}");
            assert!(body(&text).contains(" ≠ "), "{text}");
        }
        // Back one: the same again; before the divergence the inputs are shared.
        press(&mut view, KeyCode::Left);
        assert!(view.rows.iter().all(|r| r.mark == Mark::Same));
        press(&mut view, KeyCode::Char(','));
        assert_eq!(view.timeline.position, 1);
        assert!(view.timeline_line().contains("shared"), "{}", view.timeline_line());
        assert!(view.rows.iter().all(|r| r.mark == Mark::Same));
        press(&mut view, KeyCode::Home);
        assert_eq!((view.timeline.position, view.timeline.a.position(), view.timeline.b.position()), (0, 0, 0));
        assert!(screen(&mut view, 80, 24).contains(&format!("input 0 of {na} / {nb}")));
    }

    #[test]
    fn opening_the_view_replays_each_run_once() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let before = crate::diff::replays();
        let view = DiffView::open(&a.session, &b.session, None).unwrap();
        // One replay a side gives the timeline's end, the rows and the comparison (it was
        // two a side: a rebuild to compare, then the cursors walked again).
        assert_eq!(crate::diff::replays() - before, 2);
        assert_eq!(view.timeline.a.position(), a.session.input_count());
        assert_eq!(view.timeline.b.position(), b.session.input_count());
        assert_eq!(view.diff, crate::diff::diff(&a, &b));
        assert_eq!(view.rows, rows(a.rebuilt.engine.tree(), b.rebuilt.engine.tree()));
    }

    #[test]
    fn a_changed_row_says_what_differs() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        press(&mut view, KeyCode::Char('n'));
        let row = &view.rows[view.selected];
        assert_eq!(row.mark, Mark::Changed);
        let words = row.differs.words();
        for (w, h) in [(80, 24), (220, 60)] {
            let text = screen(&mut view, w, h);
            assert!(text.contains(&format!("{words} differs")), "{text}");
            assert!(text.contains(&format!("paired {}", view.diff.pairs)), "{text}");
        }
    }

    #[test]
    fn stepping_past_the_shorter_run_clamps_it() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = parent_and_fork(dir.path());
        let diff = crate::diff::diff(&a, &b);
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        assert_eq!(view.diff, diff, "the view compares what `diff` does");
        let na = a.session.input_count();
        press(&mut view, KeyCode::Char('d'));
        for _ in 0..3 {
            press(&mut view, KeyCode::Right);
        }
        // The fork ends at 3 and stays there; the parent goes on.
        assert_eq!((view.timeline.position, view.timeline.a.position(), view.timeline.b.position()), (5, 5, 3));
        let text = screen(&mut view, 80, 24);
        assert!(text.contains("B: ") && text.contains("input 3/3"), "{text}");
        assert!(text.contains("input 5/"), "{text}");
        // End and past the end: the longer run's end, both clamped.
        press(&mut view, KeyCode::End);
        press(&mut view, KeyCode::Right);
        press(&mut view, KeyCode::Char('.'));
        assert_eq!((view.timeline.position, view.timeline.a.position(), view.timeline.b.position()), (na, na, 3));
        assert_eq!(view.rows, rows(a.rebuilt.engine.tree(), b.rebuilt.engine.tree()));
        // The selection stays on a row when the rows change under it.
        press(&mut view, KeyCode::Char('G'));
        press(&mut view, KeyCode::Home);
        assert!(view.selected < view.rows.len());
        for (w, h) in [(80, 24), (220, 60), (20, 5)] {
            screen(&mut view, w, h);
        }
    }

    #[test]
    fn a_run_with_no_inputs_against_one_with_many() {
        let dir = tempfile::tempdir().unwrap();
        let parent_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/bfs-solved.jsonl");
        let parent = Session::load(&parent_path).unwrap();
        let empty = dir.path().join("empty.jsonl");
        drop(SessionWriter::fork(&empty, &parent, 0).unwrap());
        let (a, b) = (crate::export::load(&empty, None).unwrap(), crate::export::load(&parent_path, None).unwrap());
        let diff = crate::diff::diff(&a, &b);
        let mut view = DiffView::open(&a.session, &b.session, None).unwrap();
        assert_eq!(view.diff, diff, "the view compares what `diff` does");
        let nb = b.session.input_count();
        for code in [KeyCode::Char('d'), KeyCode::Right, KeyCode::End, KeyCode::Left, KeyCode::Home, KeyCode::Left] {
            press(&mut view, code);
            for (w, h) in [(80, 24), (220, 60)] {
                let text = screen(&mut view, w, h);
                assert!(text.contains(&format!(" of 0 / {nb}")), "{text}");
            }
            assert_eq!(view.timeline.a.position(), 0);
        }
        press(&mut view, KeyCode::End);
        assert_eq!(view.timeline.b.position(), nb);
        assert!(view.rows.iter().any(|r| r.mark == Mark::OnlyB), "{:?}", view.rows);
    }
}
