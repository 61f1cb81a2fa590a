//! A task's state drawn as a grid (crosswords' board, `Task::board`): letters by class
//! — filled earlier, written by this step `[A]`, overwriting another letter `!A!`,
//! empty `·` — so the classes read without colour too, then the clues with their
//! letters, status and the evaluator's verdict.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::super::theme::{Slot, Theme};
use crate::engine::task::{BoardView, CellClass};

/// The board's lines: column labels, one line per row, a legend, then the clue table.
pub fn lines(board: &BoardView, theme: &Theme) -> Vec<Line<'static>> {
    let style = |slot| theme.style(slot);
    let label_width = board.row_labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = Vec::new();
    let mut head = vec![Span::raw(format!("  {:label_width$} ", ""))];
    for c in &board.column_labels {
        head.push(Span::styled(format!("{c:^3}"), style(Slot::Title)));
    }
    out.push(Line::from(head));
    for (r, row) in board.rows.iter().enumerate() {
        let label = board.row_labels.get(r).cloned().unwrap_or_default();
        let mut spans = vec![Span::styled(format!("  {label:label_width$} "), style(Slot::Title))];
        for cell in row {
            let letter = cell.letter.unwrap_or(' ');
            let (text, slot) = match cell.class {
                CellClass::Empty => (" · ".to_string(), Slot::Dim),
                CellClass::Filled => (format!(" {letter} "), Slot::Text),
                CellClass::Changed => (format!("[{letter}]"), Slot::ScoreHigh),
                CellClass::Conflict => (format!("!{letter}!"), Slot::Error),
            };
            spans.push(Span::styled(text, style(slot)));
        }
        out.push(Line::from(spans));
    }
    out.push(Line::from(Span::styled("  [x] this step  !x! overwritten  · empty", style(Slot::Dim))));
    for clue in &board.clues {
        let (verdict, slot) = match clue.verdict.as_deref() {
            Some("sure") => ("sure", Slot::ScoreHigh),
            Some("maybe") => ("maybe", Slot::ScoreMid),
            Some("impossible") => ("impossible", Slot::ScoreLow),
            Some(other) => (other, Slot::Text),
            None => ("", Slot::Dim),
        };
        let status_slot = match clue.status.as_str() {
            "changed" => Slot::Error,
            "filled" => Slot::Text,
            _ => Slot::Dim,
        };
        out.push(Line::from(vec![
            Span::styled(format!("  {:<3}", clue.label), style(Slot::Title)),
            Span::styled(format!("{} ", clue.letters), style(Slot::Thought)),
            Span::styled(format!("{:<9}", clue.status), style(status_slot)),
            Span::styled(format!("{verdict:<11}"), style(slot)),
            Span::styled(clue.clue.clone(), style(Slot::Dim)),
        ]));
    }
    out
}

/// The board on its own, for places that draw it as a widget.
pub struct BoardWidget<'a> {
    pub board: &'a BoardView,
    pub theme: &'a Theme,
}

impl Widget for &BoardWidget<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        Paragraph::new(lines(self.board, self.theme)).wrap(Wrap { trim: false }).render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use super::*;
    use crate::engine::task::Task;
    use crate::engine::Score;
    use crate::tasks::crosswords::Crosswords;
    use crate::tasks::TaskSource;

    #[test]
    fn the_board_and_its_clues_at_80x24() {
        let task = Crosswords::builtin();
        let x = task.problem(0).unwrap().input;
        // The last step overwrites h1's G with an X (a conflict) and writes two new letters.
        let y = "h1. agend\nh2. motor\nv2. xoaxx\n";
        let score = Score {
            value: 3.0,
            samples: vec!["h1 sure".into(), "v2 impossible".into(), "v1 maybe".into()],
            note: None,
        };
        let board = task.board().expect("crosswords draws a board").board(&x, y, Some(&score));
        let theme = Theme::plain();
        let widget = BoardWidget { board: &board, theme: &theme };
        let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
        terminal.draw(|f| f.render_widget(&widget, f.area())).unwrap();
        insta::assert_snapshot!("board_80x24", format!("{}", terminal.backend()));
    }
}
