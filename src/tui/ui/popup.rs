//! Popups: help (generated from the keymap), the thought editor, one-line questions.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::super::action::Action;
use super::super::state::{Pane, Popup, Prompting};
use super::super::theme::Slot;
use super::View;
use crate::engine::NodeId;

pub(super) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

/// Clear the screen under a popup at `rect`, with a one-cell margin, and out to the
/// screen's edge where less than four cells of the panes would be left beside it: no
/// fragment of a pane's border or text touches the popup's frame.
pub(super) fn clear_under(frame: &mut Frame, view: &View, rect: Rect) {
    let area = frame.area();
    let (mut left, mut top) = (rect.x.saturating_sub(1).max(area.x), rect.y.saturating_sub(1).max(area.y));
    let mut right = rect.right().saturating_add(1).min(area.right());
    let mut bottom = rect.bottom().saturating_add(1).min(area.bottom());
    if left - area.x < 4 {
        left = area.x;
    }
    if top - area.y < 4 {
        top = area.y;
    }
    if area.right() - right < 4 {
        right = area.right();
    }
    if area.bottom() - bottom < 4 {
        bottom = area.bottom();
    }
    let under = Rect { x: left, y: top, width: right - left, height: bottom - top };
    frame.render_widget(Clear, under);
    frame.render_widget(Block::default().style(view.style(Slot::Background)), under);
}

pub(super) fn frame_block(view: &View, title: String, hint: &str) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(view.style(Slot::BorderFocused))
        .style(view.style(Slot::Popup))
        .title(Line::from(Span::styled(format!(" {title} "), view.style(Slot::Title))))
        .title_bottom(Line::from(Span::styled(format!(" {hint} "), view.style(Slot::Dim))))
}

/// The contexts the help groups its keys by, in order.
const HELP_GROUPS: [&str; 4] =
    ["Steering (recorded in the session)", "Moving around", "Replay (the timeline)", "The screen"];

/// Which help group an action belongs to (an index of `HELP_GROUPS`).
fn help_group(action: Action) -> usize {
    use Action::*;
    match action {
        Step | RunPause | Prune | Edit | Backtrack | Expand | Reevaluate | Continue | NewInput | Restart | SaveAs
        | Undo => 0,
        ReplayStepBack | ReplayStepForward | ReplayMarkBack | ReplayMarkForward | ReplayBack | ReplayForward
        | ReplayStart | ReplayEnd | ReplayPlay | ReplayPlayNonstop | ShowCaption | ReplaySlower | ReplayFaster
        | Fork => 2,
        CycleTheme | Help | Quit | Memory | Export | Breaks | Stats | Zoom | Thinking | Pager | Editor | Copy
        | Pane(_) => 3,
        _ => 1,
    }
}

/// The keys that act on `pane` when it has the focus (the help lists them first).
pub fn pane_actions(pane: Pane) -> &'static [Action] {
    use Action::*;
    match pane {
        super::super::state::Pane::Tree => &[
            Up,
            Down,
            Left,
            Right,
            PageUp,
            PageDown,
            Top,
            Bottom,
            ToggleCollapse,
            JumpBest,
            NextSolution,
            ToggleFollow,
            Find,
            FindNext,
            FindPrev,
            GotoNode,
            Filter,
            Pager,
            Editor,
            Copy,
            Zoom,
        ],
        super::super::state::Pane::Scores => &[Up, Down, PageUp, PageDown, Top, Bottom, Zoom],
        super::super::state::Pane::Detail => {
            &[Up, Down, PageUp, PageDown, Top, Bottom, Thinking, Pager, Editor, Copy, Zoom]
        }
        super::super::state::Pane::Transcript => &[Up, Down, PageUp, PageDown, Top, Bottom, Pager, Copy, Zoom],
    }
}

/// The glyphs the tree and scores panes draw, with what each means.
pub const GLYPHS: [(&str, &str); 15] = [
    ("·", "candidate: generated, not (yet) kept by the search"),
    ("○", "frontier: kept, waiting to be expanded"),
    ("●", "expanded: its children were generated"),
    ("◇", "final state that is not a solution"),
    ("★", "solution"),
    ("–", "dropped: below the beam or the threshold"),
    ("↩", "left behind by a backtrack: a dead end, or b by hand"),
    ("✂", "pruned by hand (p)"),
    ("✗", "invalid: the step could not be read or checked (reason in the detail pane)"),
    ("✎", "made by a person's edit (e)"),
    ("▶ ▼", "a collapsed / an open subtree (c, ← →)"),
    ("N= Q=", "MCTS: visits, and mean reward backed up"),
    ("█░", "scores pane: the value as a bar"),
    ("─ beam ─", "scores pane: the cut-off; states above the line are kept"),
    ("…", "scores pane: not valued yet"),
];

/// One line explaining the score badge, from the task's value classes (Game of 24:
/// `[20.002 isi]` = the value 20.002, from samples impossible, sure, impossible).
pub fn badge_line(classes: &[(&str, f64)]) -> String {
    if classes.is_empty() {
        return "[v] = the value the evaluator gave the state".to_string();
    }
    let letters: Vec<String> = classes
        .iter()
        .map(|(name, value)| format!("{} {name} ({value})", name.chars().next().unwrap_or('?')))
        .collect();
    let example: String = classes.iter().filter_map(|(name, _)| name.chars().next()).collect();
    format!(
        "[value {example}] = the value (the sum of the samples' classes), then one letter per evaluator \
         sample: {}; ? unreadable",
        letters.join(", ")
    )
}

/// What the mouse does, on the help's last key line.
pub const MOUSE_HELP: &str =
    "a click focuses a pane and selects a node, the wheel scrolls; shift+drag selects text as usual (the explorer \
     takes the mouse)";

pub fn help_lines(view: &View) -> Vec<Line<'static>> {
    let rows = view.app.keymap.help();
    let width = rows.iter().map(|(k, _, _)| k.chars().count()).max().unwrap_or(8).min(18);
    let heading = |text: &str| Line::from(Span::styled(format!(" {text}"), view.style(Slot::Title)));
    let mut lines = Vec::new();
    // The focused pane's keys first, then the rest by group.
    let focused = view.app.view.focus;
    let firsts = pane_actions(focused);
    let group: Vec<_> = rows.iter().filter(|(_, action, _)| firsts.contains(action)).collect();
    let mut groups = vec![(format!("The {} pane (focused)", focused.title()), group)];
    for (g, name) in HELP_GROUPS.iter().enumerate() {
        let group: Vec<_> =
            rows.iter().filter(|(_, action, _)| help_group(*action) == g && !firsts.contains(action)).collect();
        groups.push((name.to_string(), group));
    }
    for (name, group) in groups {
        if group.is_empty() {
            continue;
        }
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(heading(&name));
        for (keys, _, desc) in group {
            lines.push(Line::from(vec![
                Span::styled(format!(" {keys:<width$} "), view.style(Slot::HelpKey)),
                Span::styled(desc.clone(), view.style(Slot::HelpDesc)),
            ]));
        }
    }
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<width$} ", "mouse"), view.style(Slot::HelpKey)),
        Span::styled(MOUSE_HELP, view.style(Slot::HelpDesc)),
    ]));
    lines.push(Line::default());
    lines.push(heading("What the marks mean"));
    for (glyph, meaning) in GLYPHS {
        lines.push(Line::from(vec![
            Span::styled(format!(" {glyph:<width$} "), view.style(Slot::HelpKey)),
            Span::styled(meaning, view.style(Slot::HelpDesc)),
        ]));
    }
    let classes = crate::engine::task::value_classes(view.app.session.run.engine.core.task.as_ref());
    lines.push(Line::from(vec![
        Span::styled(format!(" {:<width$} ", "[badge]"), view.style(Slot::HelpKey)),
        Span::styled(badge_line(classes), view.style(Slot::HelpDesc)),
    ]));
    lines
}

/// What saving the edit popup does, in the method's terms: a ReAct step (a node with a
/// step) is continued by the agent; a tree search's thought becomes a sibling, evaluated
/// if the task has an evaluator; any other node (a sample) a sibling.
pub fn edit_title(view: &View, node: NodeId) -> String {
    let engine = &view.app.session.run.engine;
    let n = engine.tree().node(node);
    if let Some(step) = &n.step {
        return format!("Edit step {}: the agent continues from your thought", step.n);
    }
    if n.label.is_some() {
        // A method's round: the text and its notes (feedback, reflection) are edited together.
        return format!("Edit {node}: a changed text continues from a new sibling; changed notes guide the next call");
    }
    let evaluated = if engine.core.has_evaluator() { ", evaluated" } else { "" };
    if view.app.session.header.params.method.info().searches_tree(&view.app.session.header.params) {
        format!("Edit thought {node}: becomes a new sibling{evaluated}")
    } else {
        format!("Edit {node}: becomes a new sibling{evaluated}")
    }
}

pub fn draw(frame: &mut Frame, view: &View, area: Rect) {
    let Some(popup) = &view.app.popup else { return };
    match popup {
        Popup::Help { scroll } => {
            // Long descriptions wrap: the popup is as tall as the wrapped lines (or the screen).
            let inner = 110.min(area.width).saturating_sub(2).max(1);
            let help = Paragraph::new(help_lines(view)).wrap(Wrap { trim: false });
            let rows = help.line_count(inner);
            let rect = centered(area, 110, (rows + 2).min(u16::MAX as usize) as u16);
            // What the keys scroll by and up to: the rows shown, and the last offset that fills them.
            let shown = rect.height.saturating_sub(2);
            let limit = rows.saturating_sub(usize::from(shown)).min(usize::from(u16::MAX)) as u16;
            view.app.help.set(shown, limit);
            clear_under(frame, view, rect);
            let block = frame_block(view, "Keys".into(), "esc close · ↑↓ PgUp PgDn Home End scroll");
            frame.render_widget(help.block(block).scroll(((*scroll).min(limit), 0)), rect);
        }
        Popup::Caption { scroll } => super::caption::draw_full(frame, view, area, *scroll),
        Popup::Edit { node, editor } => {
            let width = 76.min(area.width);
            // Tall enough for the wrapped text and a line to type on, within the screen.
            let rows: usize = editor
                .lines()
                .iter()
                .map(|l| l.chars().count().max(1).div_ceil((width as usize).saturating_sub(2).max(1)))
                .sum();
            let rect = centered(
                area,
                width,
                u16::try_from(rows)
                    .unwrap_or(u16::MAX)
                    .saturating_add(3)
                    .clamp(5, area.height.saturating_sub(2).max(5)),
            );
            clear_under(frame, view, rect);
            let block = frame_block(view, edit_title(view, *node), "ctrl-s save · esc cancel");
            let inner = block.inner(rect);
            frame.render_widget(block, rect);
            frame.render_widget(&**editor, inner);
        }
        Popup::Ask { what, editor } => {
            let title = match what {
                Prompting::NewInput => {
                    let info = view.app.session.setup.task.info();
                    // The examples are the editor's placeholder.
                    format!("New {}: {}", info.input_noun, info.input_hint)
                }
                Prompting::SaveAs => "Save the session as".to_string(),
                Prompting::Export => "Export the tree to (.json .dot .mmd .otlp.json, or a format name)".to_string(),
                Prompting::Find => "Find (a regex; lower case ignores case)".to_string(),
                Prompting::GotoNode => "Go to node #".to_string(),
                Prompting::Filter => "Filter: show the nodes meeting (and their ancestors)".to_string(),
            };
            let width = (title.chars().count() as u16 + 6).max(70);
            let rect = centered(area, width, 3);
            clear_under(frame, view, rect);
            let block = frame_block(view, title, "enter ok · esc cancel");
            let [inner] = Layout::vertical([Constraint::Length(1)]).areas(block.inner(rect));
            frame.render_widget(block, rect);
            frame.render_widget(&**editor, inner);
        }
        Popup::Open(browser) => super::browser::draw(frame, view, area, browser),
        Popup::Problems { lines, scroll } => super::problems::draw_problems(frame, view, area, lines, *scroll),
        Popup::MemoryEdit { id, editor } => {
            let width = 76.min(area.width);
            let inner_width = (width as usize).saturating_sub(2).max(1);
            let rows: usize = editor.lines().iter().map(|l| l.chars().count().max(1).div_ceil(inner_width)).sum();
            let height = u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2).clamp(3, area.height.max(3));
            let rect = centered(area, width, height);
            clear_under(frame, view, rect);
            let block = frame_block(view, format!("Edit memory entry #{id}"), "enter save · esc cancel");
            let inner = block.inner(rect);
            frame.render_widget(block, rect);
            frame.render_widget(&**editor, inner);
        }
        Popup::MemoryRemove { id } => {
            let headline = view
                .app
                .session
                .run
                .engine
                .memory()
                .and_then(|m| m.entry(*id))
                .map(|e| crate::safe_text::one_line(e.headline()))
                .unwrap_or_default();
            let rect = centered(area, 60, 4);
            clear_under(frame, view, rect);
            let block = frame_block(view, format!("Remove memory entry #{id}?"), "y remove · n keep");
            let text = Paragraph::new(Line::from(Span::styled(headline, view.style(Slot::Thought))))
                .block(block)
                .wrap(Wrap { trim: false });
            frame.render_widget(text, rect);
        }
        Popup::Causes(chooser) => {
            let width = chooser.causes.iter().map(|c| c.chars().count()).max().unwrap_or(0).max(40) as u16 + 6;
            let rect = centered(area, width, chooser.causes.len() as u16 + 2);
            clear_under(frame, view, rect);
            let lines: Vec<Line> = chooser
                .causes
                .iter()
                .enumerate()
                .map(|(i, cause)| {
                    let here = i == chooser.selected;
                    let slot = if here { Slot::Selection } else { Slot::Text };
                    Line::from(vec![
                        Span::styled(if here { "▶ " } else { "  " }, view.style(Slot::Selection)),
                        Span::styled(format!("{} ", i + 1), view.style(Slot::Dim)),
                        Span::styled(cause.replace('_', " "), view.style(slot)),
                    ])
                })
                .collect();
            let block = frame_block(view, "Backtrack: why did this branch fail?".into(), "enter pick · esc cancel");
            frame.render_widget(Paragraph::new(lines).block(block), rect);
        }
        Popup::Breaks(list) => super::breaks::draw(frame, view, area, list),
        Popup::Stats => super::stats::draw(frame, view, area),
    }
}
