//! Keys, mouse and actions: what a person asks for, turned into engine commands or app changes.

use super::*;

impl App {
    pub(super) fn command(&mut self, command: Command) -> Vec<Effect> {
        if self.session.replay.is_some() {
            self.message = Some("this is a read-only replay: press f to fork a live run from here".into());
            self.touch();
            return Vec::new();
        }
        self.feed(Input::command(command), None)
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        // ctrl-c always quits, whatever the keymap binds and whatever is open: a keymap
        // that unbinds every key still leaves this way out.
        if crate::tui::keymap::is_ctrl_c(&key) {
            return self.handle_action(Action::Quit);
        }
        if self.popup.is_some() {
            return self.popup_key(key);
        }
        if let Some(mut open) = self.open_pane.take() {
            let action = self.keymap.action_for(&key);
            let (theme, keymap) = (self.theme(), &self.keymap);
            let hint = |a: Action| keymap.key_hint(a).unwrap_or_default();
            let cx = crate::tui::panes::Context { engine: &self.session.run.engine, theme: &theme, key: &hint };
            let handled = open.pane.handle(&key, action, &cx);
            if handled != crate::tui::panes::Handled::Close {
                self.open_pane = Some(open);
            }
            if handled != crate::tui::panes::Handled::No {
                self.touch();
                return Vec::new();
            }
        }
        if self.memory_pane.is_some() {
            if let Some(effects) = self.memory_key(key) {
                return effects;
            }
            // The pane covers the tree: a key that acts on what it hides (the selected
            // node, the other panes) would steer it unseen, and be recorded.
            if let Some(action) = self.keymap.action_for(&key).filter(|a| !passes_memory_pane(*a)) {
                let close = self.keymap.key_hint(Action::Memory).unwrap_or_else(|| "M".into());
                self.message = Some(format!(
                    "{} acts on the tree behind the memory pane: esc or {close} closes the pane first",
                    action_name(action)
                ));
                self.touch();
                return Vec::new();
            }
        }
        match self.keymap.action_for(&key) {
            Some(action) => self.handle_action(action),
            None => Vec::new(),
        }
    }

    pub(super) fn popup_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        self.touch();
        match self.popup.take() {
            Some(popup @ (Popup::Help { .. } | Popup::Caption { .. })) => {
                let scroll = match popup {
                    Popup::Help { scroll } | Popup::Caption { scroll } => scroll,
                    _ => 0,
                };
                let how = match key.code {
                    KeyCode::Down | KeyCode::Char('j') => Scroll::Down,
                    KeyCode::Up | KeyCode::Char('k') => Scroll::Up,
                    KeyCode::PageDown => Scroll::PageDown,
                    KeyCode::PageUp => Scroll::PageUp,
                    KeyCode::Home | KeyCode::Char('g') => Scroll::Home,
                    KeyCode::End | KeyCode::Char('G') => Scroll::End,
                    _ => return Vec::new(),
                };
                let scroll = self.help.scroll(scroll, how);
                self.popup = Some(match popup {
                    Popup::Caption { .. } => Popup::Caption { scroll },
                    _ => Popup::Help { scroll },
                });
                Vec::new()
            }
            Some(Popup::Edit { node, mut editor }) => match key.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Char('s') if ctrl => self.submit_edit(node, self.edited_text(node, editor.lines())),
                KeyCode::Enter if alt || ctrl => self.submit_edit(node, self.edited_text(node, editor.lines())),
                _ => {
                    type_key(&mut editor, key);
                    self.popup = Some(Popup::Edit { node, editor });
                    Vec::new()
                }
            },
            Some(Popup::Ask { what, mut editor }) => match key.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Enter => {
                    let text = editor.lines().join(" ");
                    // A regex keeps its spaces (an empty one still clears the find).
                    let text =
                        if what == Prompting::Find && !text.trim().is_empty() { text } else { text.trim().into() };
                    self.answer(what, &text)
                }
                _ => {
                    type_key(&mut editor, key);
                    self.popup = Some(Popup::Ask { what, editor });
                    Vec::new()
                }
            },
            Some(Popup::Open(list)) => self.open_popup_key(key, list),
            Some(Popup::Problems { lines, scroll }) => {
                let scroll = match key.code {
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    _ => return Vec::new(),
                };
                self.popup = Some(Popup::Problems { lines, scroll });
                Vec::new()
            }
            Some(popup @ (Popup::MemoryEdit { .. } | Popup::MemoryRemove { .. } | Popup::Causes(_))) => {
                self.memory_popup_key(key, popup)
            }
            Some(Popup::Breaks(list)) => self.breaks_key(key, list),
            Some(Popup::Stats) => {
                // Any key closes the figures except scrolling keys, which have nothing to scroll.
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// The text the edit popup submits. In a ReAct step whose thought was rewritten but
    /// whose action line was left as it was, the old action is dropped: the agent writes
    /// the action that follows the new thought (keeping it would run the old action and
    /// the edit would seem to do nothing). A changed action is kept and run.
    pub(super) fn edited_text(&self, node: NodeId, lines: &[String]) -> String {
        let text = lines.join("\n");
        let Some(step) = &self.session.run.engine.tree().node(node).step else { return text };
        let starts = |l: &str, word: &str| l.trim_start().to_lowercase().starts_with(word);
        let is_action = |l: &str| starts(l, "action");
        // The popup shows the thought and action lines (observations come from the tool).
        let split = |lines: Vec<&str>| -> (String, Vec<String>) {
            let thought: Vec<&str> =
                lines.iter().filter(|l| !is_action(l) && !starts(l, "observation")).map(|l| l.trim()).collect();
            let actions = lines.iter().filter(|l| is_action(l)).map(|l| l.trim().to_string()).collect();
            (thought.join(" ").trim().to_string(), actions)
        };
        let (new_thought, new_actions) = split(lines.iter().map(String::as_str).collect());
        let old = step_edit_text(step);
        let (old_thought, old_actions) = split(old.lines().collect());
        if !new_actions.is_empty() && new_actions == old_actions && new_thought != old_thought {
            return lines.iter().filter(|l| !is_action(l)).cloned().collect::<Vec<_>>().join("\n");
        }
        text
    }

    /// An edit from the popup (also used by tests and scripts).
    pub fn submit_edit(&mut self, node: NodeId, text: String) -> Vec<Effect> {
        let before = self.session.run.engine.tree().len();
        let effects = self.command(Command::Edit { node, text });
        // The person's own new thought is what they look at next.
        let tree = self.session.run.engine.tree();
        let edited = (before..tree.len())
            .map(NodeId)
            .find(|&n| matches!(tree.node(n).origin, Origin::Human { edited_from: Some(from) } if from == node));
        if let Some(edited) = edited {
            self.select(edited);
        }
        effects
    }

    /// An answer to a one-line question popup.
    pub fn answer(&mut self, what: Prompting, text: &str) -> Vec<Effect> {
        match what {
            Prompting::NewInput => match self.parse_problem(text) {
                Ok(problem) => {
                    self.start(problem);
                    self.say_recording();
                    Vec::new()
                }
                Err(e) => {
                    self.message = Some(e);
                    Vec::new()
                }
            },
            Prompting::SaveAs => {
                let path = PathBuf::from(text);
                self.message = Some(match self.session.run.writer_mut() {
                    Some(w) => match w.save_as(&path) {
                        Ok(()) => {
                            // A file the person named is kept, whatever it holds.
                            self.session.own_file = false;
                            format!("saved; recording continues in {}", short_path(&path))
                        }
                        Err(e) => format!("could not save: {e}"),
                    },
                    None => "nothing is being recorded (fork the replay first)".into(),
                });
                Vec::new()
            }
            Prompting::Export => {
                self.export_answer(text);
                Vec::new()
            }
            Prompting::Find => {
                self.find_answer(text);
                Vec::new()
            }
            Prompting::GotoNode => {
                self.goto_answer(text);
                Vec::new()
            }
            Prompting::Filter => {
                self.filter_answer(text);
                Vec::new()
            }
        }
    }

    /// A new input typed at `i`: a problem's number in the task's list, or the input
    /// itself. Errors are worded from the task's info, for the explorer (no CLI flags).
    pub(super) fn parse_problem(&self, text: &str) -> Result<Problem, String> {
        let task = &self.session.setup.task;
        let info = task.info();
        let noun = &info.input_noun;
        let count = task.problem_count();
        if text.trim().is_empty() {
            return Err(format!("no {noun} given: type {}", info.input_hint));
        }
        if let Ok(i) = text.trim().parse::<usize>() {
            if count == 0 {
                // A task whose problems come from a data file opened without one: a number is an input.
                return task.parse_input(text).map_err(|e| input_error(info, text, e));
            }
            return task
                .problem(i)
                .ok_or_else(|| format!("there is no {noun} {i}: the list has {count}, numbered 0 to {}", count - 1));
        }
        task.parse_input(text).map_err(|e| input_error(info, text, e))
    }

    pub fn handle_mouse(&mut self, mouse: MouseEvent) -> Vec<Effect> {
        if self.popup.is_some() {
            return Vec::new();
        }
        if self.memory_pane.is_some() {
            return self.memory_mouse(mouse);
        }
        let at = Position { x: mouse.column, y: mouse.row };
        let pane = Pane::ALL.iter().copied().find(|p| self.areas[p.index()].contains(at));
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if let Some(p) = pane {
                    self.view.focus = p;
                    if p == Pane::Tree && self.tree.state.click_at(at, self.session.run.engine.tree()) {
                        self.tree.stop_following();
                        self.selection_moved();
                    }
                    if p == Pane::Scores {
                        self.click_scores(at);
                    }
                    self.touch();
                }
                Vec::new()
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                if let Some(p) = pane {
                    self.view.focus = p;
                }
                let down = matches!(mouse.kind, MouseEventKind::ScrollDown);
                self.handle_action(if down { Action::Down } else { Action::Up })
            }
            _ => Vec::new(),
        }
    }

    /// A new run says where it records, unless starting it had more to say.
    fn say_recording(&mut self) {
        if self.message.is_none() {
            self.message = self.recording_note();
        }
    }

    /// A click on a row of the scores pane selects its node.
    fn click_scores(&mut self, at: Position) {
        let area = self.areas[Pane::Scores.index()];
        let line = usize::from(at.y.saturating_sub(area.y + 1));
        let clicked = if at.y > area.y { self.scores.node_at(line) } else { None };
        if let Some(node) = clicked {
            self.tree.stop_following();
            self.select(node);
        }
    }

    pub fn handle_action(&mut self, action: Action) -> Vec<Effect> {
        self.touch();
        let node = self.selected();
        match action {
            // Stepping and running leave the selection where the person put it (see `toggle_follow`).
            Action::Step => self.command(Command::Step { n: 1 }),
            Action::RunPause => {
                let running = matches!(self.session.run.engine.mode(), crate::engine::RunMode::Running);
                self.command(if running { Command::Pause } else { Command::Run })
            }
            Action::Prune => {
                let pruned = self.session.run.engine.tree().node(node).status == NodeStatus::Pruned;
                self.command(if pruned { Command::Unprune { node } } else { Command::Prune { node } })
            }
            Action::Edit => self.open_edit(node),
            Action::Backtrack => {
                let causes = self.session.run.engine.view().backtrack_causes;
                self.backtrack_asking(causes)
            }
            Action::Expand => self.command(Command::Expand { node }),
            Action::Reevaluate => self.command(Command::Reevaluate { node }),
            Action::Continue => self.command(Command::Continue { node }),
            Action::ReplayStepBack => self.replay_step(false),
            Action::ReplayStepForward => self.replay_step(true),
            Action::ReplayMarkBack => self.replay_mark(false),
            Action::ReplayMarkForward => self.replay_mark(true),
            Action::ReplayBack => self.replay_move(|c, _| c.saturating_sub(1)),
            Action::ReplayForward => self.replay_move(|c, t| (c + 1).min(t)),
            Action::ReplayStart => self.replay_move(|_, _| 0),
            Action::ReplayEnd => self.replay_move(|_, t| t),
            Action::Fork => self.fork(),
            Action::Undo => self.undo(),
            Action::NextProblem => self.move_problem(1),
            Action::PrevProblem => self.move_problem(-1),
            other => {
                self.local_action(other, node);
                Vec::new()
            }
        }
    }

    /// An action that asks the engine for nothing: moving, focusing, popups, replay
    /// speed, the theme, quitting.
    fn local_action(&mut self, action: Action, node: NodeId) {
        match action {
            Action::Pane(index) => {
                // Its key again closes it; another registered pane's key opens that one instead.
                let was = self.open_pane.take().map(|open| open.index);
                if let Some(kind) = crate::tui::panes::kind(index).filter(|_| was != Some(index)) {
                    self.open_pane = Some(OpenPane { index, pane: (kind.open)() });
                }
            }
            Action::NewInput => self.new_input_popup(),
            Action::Restart => {
                let problem = Problem { index: self.session.header.index, input: self.session.header.input.clone() };
                self.start(problem);
                self.say_recording();
            }
            Action::SaveAs => {
                let current = self.session_path().map(|p| p.display().to_string()).unwrap_or_default();
                let mut editor = Box::new(TextArea::new(vec![current]));
                editor.move_cursor(ratatui_textarea::CursorMove::End);
                self.popup = Some(Popup::Ask { what: Prompting::SaveAs, editor });
            }
            Action::Up | Action::Down | Action::PageUp | Action::PageDown | Action::Top | Action::Bottom => {
                if let Some(how) = Scroll::of(action) {
                    self.scroll(how)
                }
            }
            Action::Left => self.tree.left(self.session.run.engine.tree()),
            Action::Right => self.tree.right(node),
            Action::ToggleCollapse => self.tree.toggle(node, self.session.run.engine.tree()),
            Action::JumpBest => {
                self.tree.stop_following();
                if let Some(best) = self.best_node() {
                    self.select(best);
                }
            }
            Action::NextSolution => self.next_solution(node),
            Action::ToggleFollow => self.toggle_follow(),
            Action::FocusNext | Action::FocusPrev => self.view.cycle_focus(action == Action::FocusNext),
            Action::FocusTree => self.view.focus = Pane::Tree,
            Action::FocusScores => self.view.focus = Pane::Scores,
            Action::FocusDetail => self.view.focus = Pane::Detail,
            Action::FocusTranscript => self.view.focus = Pane::Transcript,
            Action::WiderTree | Action::NarrowerTree => self.view.resize(action == Action::WiderTree),
            Action::ReplayPlay => self.toggle_play(false),
            Action::ReplayPlayNonstop => self.toggle_play(true),
            Action::ShowCaption => match self.caption() {
                Some(_) => self.popup = Some(Popup::Caption { scroll: 0 }),
                None => {
                    self.message = Some("no caption here: captions are in narrated replays (thoughtscope demo)".into())
                }
            },
            Action::ReplaySlower | Action::ReplayFaster => self.replay_speed(action == Action::ReplayFaster),
            Action::CycleTheme => {
                let name = self.view.next_theme();
                self.message = Some(format!("theme {name}"));
            }
            Action::Help => self.popup = Some(Popup::Help { scroll: 0 }),
            Action::Quit => self.quit = true,
            Action::Open => self.open_popup(),
            Action::Memory => self.toggle_memory(),
            Action::Export => self.export_popup(),
            Action::Breaks => self.open_breaks(),
            Action::Stats => self.popup = Some(Popup::Stats),
            Action::Find => self.find_popup(),
            Action::FindNext | Action::FindPrev => self.find_step(action == Action::FindNext, node),
            Action::GotoNode => self.goto_popup(),
            Action::Filter => self.filter_key(),
            Action::Zoom => self.toggle_zoom(),
            Action::Thinking => {
                self.view.thinking_open = !self.view.thinking_open;
                let now = if self.view.thinking_open { "unfolded" } else { "folded" };
                self.message = Some(format!("thinking {now} in the detail pane"));
                self.touch();
            }
            Action::Pager => self.hand_to_pager(),
            Action::Editor => self.hand_to_editor(node),
            Action::Copy => self.hand_to_clipboard(),
            // Taken by `handle_action` too.
            Action::Undo => {}
            // Taken by `handle_action` (listed, so a new action is a compile error until placed).
            Action::Step
            | Action::RunPause
            | Action::Prune
            | Action::Edit
            | Action::Backtrack
            | Action::Expand
            | Action::Reevaluate
            | Action::Continue
            | Action::ReplayStepBack
            | Action::ReplayStepForward
            | Action::ReplayMarkBack
            | Action::ReplayMarkForward
            | Action::ReplayBack
            | Action::ReplayForward
            | Action::ReplayStart
            | Action::ReplayEnd
            | Action::Fork
            | Action::NextProblem
            | Action::PrevProblem => {}
        }
    }

    /// `e`: the edit popup over the selected node's thought (in a replay, a pause first:
    /// the replay is forked when the edit is submitted).
    fn open_edit(&mut self, node: NodeId) -> Vec<Effect> {
        if self.session.replay.is_some() {
            return self.command(Command::Pause);
        }
        if node == NodeId(0) {
            let noun = self.session.setup.task.info().input_noun.clone();
            self.message = Some(format!("the root is the {noun} itself: press i for a new {noun}"));
            return Vec::new();
        }
        let lines = self.edit_lines(node);
        // Soft-wrapped, so a long thought reads from its first column; the cursor
        // waits at the end of the thought (before any action line).
        let row = lines.iter().rposition(|l| !l.trim_start().to_lowercase().starts_with("action")).unwrap_or(0);
        let col = lines.get(row).map_or(0, |l| l.chars().count());
        let mut editor = TextArea::new(lines);
        editor.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
        editor.move_cursor(ratatui_textarea::CursorMove::Jump(
            u16::try_from(row).unwrap_or(u16::MAX),
            u16::try_from(col).unwrap_or(u16::MAX),
        ));
        self.popup = Some(Popup::Edit { node, editor: Box::new(editor) });
        Vec::new()
    }

    /// What the edit popup holds for `node`, line by line.
    pub(super) fn edit_lines(&self, node: NodeId) -> Vec<String> {
        let n = self.session.run.engine.tree().node(node);
        let react = self.session.header.params.method.has_react_steps();
        match n.step.as_deref() {
            // A ReAct step: its own thought and action (the observation comes from the
            // tool, and a bad call's observation restates the format: none of it is the step's).
            Some(step) if react => step_edit_text(step).split('\n').map(str::to_string).collect(),
            _ if react => n
                .thought
                .lines()
                .filter(|l| !l.trim_start().to_lowercase().starts_with("observation"))
                .map(str::to_string)
                .collect(),
            // A method's round (an attempt with its feedback or reflection): the
            // notes are edited too, each under its heading line.
            _ if n.label.is_some() => n.edit_text().lines().map(str::to_string).collect(),
            // Line by line, so a written passage keeps its paragraph breaks (blank lines too).
            _ => n.thought.split('\n').map(|l| l.trim_end_matches('\r').to_string()).collect(),
        }
    }

    /// `i`: ask for a new problem, with the task's examples as the placeholder.
    fn new_input_popup(&mut self) {
        let mut editor = TextArea::default();
        let examples = self.session.setup.task.info().input_examples.clone();
        if !examples.is_empty() {
            editor.set_placeholder_text(format!("e.g. {}", examples.join(" or ")));
        }
        self.popup = Some(Popup::Ask { what: Prompting::NewInput, editor: Box::new(editor) });
    }

    /// `n`: the next solution after `node`, round to the first.
    pub(super) fn next_solution(&mut self, node: NodeId) {
        self.tree.stop_following();
        let solutions: Vec<NodeId> =
            self.session.run.engine.tree().nodes().filter(|n| n.status == NodeStatus::Solution).map(|n| n.id).collect();
        match solutions.iter().find(|&&s| s > node).or(solutions.first()) {
            Some(&s) => self.select(s),
            None => self.message = Some("no solution yet".into()),
        }
    }

    fn toggle_follow(&mut self) {
        self.tree.set_following(!self.tree.following());
        if self.tree.following() {
            // Catch up at once: the newest node, or the answer of a finished search.
            let newest = NodeId(self.session.run.engine.tree().len().saturating_sub(1));
            let target = if self.session.run.engine.outcome().is_some() { self.landing() } else { None };
            self.select(target.unwrap_or(newest));
            self.message = Some("following the newest node (moving the selection stops it)".into());
        } else {
            self.message = Some("not following: the selection stays where you put it".into());
        }
    }

    /// `P` (stopping at each caption) or `N` (through them); either stops playing.
    pub(super) fn toggle_play(&mut self, nonstop: bool) {
        match self.session.replay.as_mut() {
            Some(r) => {
                if !r.playing && r.cursor >= r.total {
                    r.cursor = 0;
                }
                r.playing = !r.playing;
                r.carry = 0.0;
                r.through_captions = nonstop || self.session.play_nonstop;
            }
            None => self.message = Some("play works in a replay (thoughtscope replay FILE)".into()),
        }
    }

    fn replay_speed(&mut self, faster: bool) {
        if let Some(r) = self.session.replay.as_mut() {
            r.speed = if faster { (r.speed * 2.0).min(MAX_PLAY_SPEED) } else { (r.speed / 2.0).max(0.25) };
            self.message = Some(format!("replay speed {} steps/s", r.speed));
        }
    }
}

/// A path short enough for a one-line message: a long one as `…/` and its file name.
pub(super) fn short_path(path: &Path) -> String {
    let full = path.display().to_string();
    match path.file_name().map(|n| n.to_string_lossy()) {
        // A long file name keeps its end (its number and `.jsonl`), so the save-as message
        // stays on one line at 80 columns (issue 28).
        Some(name) if name.chars().count() > 40 => {
            let end: String = name.chars().skip(name.chars().count() - 39).collect();
            format!("…/…{end}")
        }
        Some(name) if full.chars().count() > 40 => format!("…/{name}"),
        _ => full,
    }
}

/// What the edit popup holds of a ReAct step: its thought and action lines, without
/// the observation.
fn step_edit_text(step: &crate::engine::Step) -> String {
    let parts = step.parts().into_iter().filter(|(part, _)| *part != crate::engine::StepPart::Observation);
    parts.map(|(_, text)| text).collect::<Vec<_>>().join("\n")
}

/// A task's complaint about a typed input, in the explorer's words: the command line's
/// `bad --input "…":` becomes what was typed (shortened, so the message fits its line)
/// and the task's noun; the task's reason says what it expected.
fn input_error(info: &crate::engine::TaskInfo, text: &str, error: crate::tasks::TaskError) -> String {
    let why = match error {
        crate::tasks::TaskError::Input(_, why) => why,
        other => other.to_string(),
    };
    let text = text.trim();
    let shown = if text.chars().count() > 24 {
        format!("{}…", text.chars().take(23).collect::<String>())
    } else {
        text.into()
    };
    format!("{shown:?} is not a {}: {why}", info.input_noun)
}

/// Whether `action` still works while the memory pane is shown: stepping and running the
/// search, the replay's controls, and what opens or closes a view; not what acts on the
/// tree's selected node or moves among the panes the memory pane hides.
fn passes_memory_pane(action: Action) -> bool {
    use Action::*;
    matches!(
        action,
        Step | RunPause
            | ReplayStepBack
            | ReplayStepForward
            | ReplayMarkBack
            | ReplayMarkForward
            | ReplayBack
            | ReplayForward
            | ReplayStart
            | ReplayEnd
            | ReplayPlay
            | ReplayPlayNonstop
            | ShowCaption
            | ReplaySlower
            | ReplayFaster
            | CycleTheme
            | Help
            | Quit
            | Memory
            | Stats
            | Breaks
            | SaveAs
            | Open
            | NextProblem
            | PrevProblem
    )
}

/// An action's name as the keymap writes it (`expand`).
fn action_name(action: Action) -> String {
    serde_json::to_value(action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{action:?}"))
}
