//! Breakpoints in the explorer: the `B` list (toggle, add, remove), the message and
//! selection when one fires, and "play until" in a replay. A live run's list is the
//! engine's: each change is a `Command::Breakpoints`, recorded like any command. A
//! replay's list is the explorer's own (the recording is read-only); it starts as the
//! session's and says where playback stops. While a live run is held at a breakpoint,
//! nothing new is sent until it runs or steps: a command's calls (expand, edit,
//! backtrack, ...) join the held ones, and the message line says so.

use super::*;
use crate::engine::breakpoint::{self, Breakpoint, Gauge, Hit, Seen};

impl App {
    /// The breakpoints the list shows: the live engine's, or the replay's own.
    pub fn breakpoint_texts(&self) -> Vec<String> {
        match &self.session.replay_breaks {
            Some(list) if self.session.replay.is_some() => list.iter().map(Breakpoint::text).collect(),
            _ => self.session.run.engine.breakpoints().iter().map(Breakpoint::text).collect(),
        }
    }

    pub(super) fn open_breaks(&mut self) {
        let items = self.breakpoint_texts();
        self.popup = Some(Popup::Breaks(BreakList { items, selected: 0, adding: None, error: None }));
    }

    /// A breakpoint fired: select its node, stop following, and say which and why.
    pub(super) fn show_break(&mut self, hit: &Hit, count: usize) {
        if let Some(node) = hit.node.filter(|n| self.session.run.engine.tree().contains(*n)) {
            self.tree.stop_following();
            self.select(node);
        }
        let more = if count > 1 { format!(" (+{} more)", count - 1) } else { String::new() };
        // A run that finished with this input is finished, not paused.
        let what = if self.session.replay.is_some() {
            "stopped"
        } else if self.session.run.engine.is_finished() {
            "finished"
        } else {
            "paused"
        };
        self.message = Some(format!("break {}: {}{more} — {what}", hit.breakpoint, hit.reason));
    }

    /// More breakpoints fired while the search was already held at one (the calls in flight
    /// landing): the first stays selected, and the message names each further hit too.
    pub(super) fn add_break(&mut self, hits: &[Hit]) {
        let Some(message) = self.message.as_mut().filter(|m| m.starts_with("break ")) else {
            if let Some(hit) = hits.first() {
                self.show_break(hit, hits.len());
            }
            return;
        };
        let Some(at) = message.rfind(" — ") else { return };
        let more: Vec<&str> = hits.iter().map(|h| h.reason.as_str()).collect();
        message.insert_str(at, &format!("; then {}", more.join("; ")));
    }

    /// A command's calls joined those a breakpoint held: say so, and which keys send them.
    pub(super) fn show_held_back(&mut self, joined: usize) {
        let held = self.session.run.held().len();
        let key = |action: Action, name: &str| self.keymap.key_hint(action).unwrap_or_else(|| name.to_string());
        let (run, step) = (key(Action::RunPause, "run_pause"), key(Action::Step, "step"));
        let calls = if joined == 1 { "1 new call waits".to_string() } else { format!("{joined} new calls wait") };
        self.message =
            Some(format!("held at a breakpoint: {calls}, {held} held in all — {run} runs, {step} steps to send them"));
    }

    /// Make `items` the breakpoints: a command in a live run, the replay's own list in a replay.
    fn set_breakpoints(&mut self, items: Vec<String>) -> Vec<Effect> {
        if self.session.replay.is_some() {
            match Breakpoint::parse_all(&items) {
                Ok(list) => {
                    self.session.set_replay_breaks(Some(list));
                }
                Err(e) => self.message = Some(e.to_string()),
            }
            return Vec::new();
        }
        self.feed(Input::command(Command::Breakpoints { set: items }), None)
    }

    pub(super) fn breaks_key(&mut self, key: KeyEvent, mut list: BreakList) -> Vec<Effect> {
        if let Some(mut editor) = list.adding.take() {
            match key.code {
                KeyCode::Esc => {}
                KeyCode::Enter => {
                    let text = editor.lines().join(" ").trim().to_string();
                    match Breakpoint::parse(&text) {
                        Ok(b) => {
                            list.items.push(b.text());
                            list.selected = list.items.len() - 1;
                            list.error = None;
                            let effects = self.set_breakpoints(list.items.clone());
                            list.items = self.breakpoint_texts();
                            self.popup = Some(Popup::Breaks(list));
                            return effects;
                        }
                        Err(e) => {
                            list.error = Some(e.to_string());
                            list.adding = Some(editor);
                        }
                    }
                }
                _ => {
                    type_key(&mut editor, key);
                    list.adding = Some(editor);
                }
            }
            self.popup = Some(Popup::Breaks(list));
            return Vec::new();
        }
        let mut effects = Vec::new();
        let count = list.items.len();
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('B') => return Vec::new(),
            KeyCode::Up | KeyCode::Char('k') => list.selected = list.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => list.selected = (list.selected + 1).min(count.saturating_sub(1)),
            KeyCode::Char('a') => {
                let mut editor = TextArea::default();
                editor.set_placeholder_text("score<0.3, tool=search, thought~/regex/, ...");
                list.adding = Some(Box::new(editor));
                list.error = None;
            }
            KeyCode::Char(' ') | KeyCode::Enter if count > 0 => {
                let mut items = list.items.clone();
                let i = list.selected.min(count - 1);
                items[i] = match items[i].strip_prefix('#') {
                    Some(on) => on.to_string(),
                    None => format!("#{}", items[i]),
                };
                effects = self.set_breakpoints(items);
                list.items = self.breakpoint_texts();
            }
            KeyCode::Char('d') | KeyCode::Delete if count > 0 => {
                let mut items = list.items.clone();
                items.remove(list.selected.min(count - 1));
                effects = self.set_breakpoints(items);
                list.items = self.breakpoint_texts();
                list.selected = list.selected.min(list.items.len().saturating_sub(1));
            }
            _ => {}
        }
        self.popup = Some(Popup::Breaks(list));
        effects
    }

    /// Where playback stops: every input of the replayed session after which one of the
    /// replay's breakpoints fires (computed once per list, walking a second cursor).
    fn replay_break_marks(&mut self) -> &BreakMarks {
        if self.session.break_marks.is_none() {
            let marks = match (&self.session.replay, &self.session.replay_breaks) {
                (Some(r), Some(list)) if list.iter().any(|b| b.enabled) => {
                    walk_breaks(&r.session, self.session.setup.prompts.as_deref(), list)
                }
                _ => Vec::new(),
            };
            self.session.break_marks = Some(marks);
        }
        self.session.break_marks.get_or_insert_with(Vec::new)
    }

    /// Playback from `from` towards `to`: the first breakpoint position on the way, if any.
    pub(super) fn break_between(&mut self, from: usize, to: usize) -> Option<(usize, Hit, usize)> {
        let marks = self.replay_break_marks();
        let first = marks.iter().find(|(at, _)| *at > from && *at <= to)?;
        let count = marks.iter().filter(|(at, _)| *at == first.0).count();
        Some((first.0, first.1.clone(), count))
    }
}

/// Every place in `session` where one of `list` fires, as the live run checks them:
/// the input, its effects and events, the engine after it and the meters around it.
pub fn walk_breaks(session: &Arc<Session>, prompts: Option<&std::path::Path>, list: &[Breakpoint]) -> BreakMarks {
    let Ok(mut cursor) = ReplayCursor::shared(Arc::clone(session), prompts) else { return Vec::new() };
    let price = session.header.price;
    let needs_step = list.iter().any(|b| matches!(b.condition, breakpoint::Condition::Step(_)));
    let gauge = |c: &ReplayCursor| {
        let t = c.totals();
        Gauge {
            calls: t.llm_calls,
            tokens: t.prompt_tokens + t.completion_tokens,
            cost: price.as_ref().map(|p| p.cost(t.prompt_tokens, t.completion_tokens)),
            step: if needs_step { c.engine().view().step } else { 0 },
        }
    };
    let inputs: Vec<Input> = session.inputs().map(|(i, _)| i.clone()).collect();
    let mut marks = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let before = gauge(&cursor);
        let events_before = cursor.events().len();
        let tools_before: Vec<u64> = call_ids(&cursor.pending_tools());
        if cursor.forward(1) == 0 {
            break;
        }
        let after = gauge(&cursor);
        let events = &cursor.events()[events_before..];
        // The effects the input caused that the conditions read: the tool calls it issued.
        let effects: Vec<Effect> = cursor
            .pending_tools()
            .into_iter()
            .filter(|e| !call_ids(std::slice::from_ref(e)).iter().any(|c| tools_before.contains(c)))
            .collect();
        let seen = Seen { input, effects: &effects, events, engine: cursor.engine(), before, after };
        for hit in breakpoint::check(list, &seen) {
            marks.push((i + 1, hit));
        }
    }
    marks
}

fn call_ids(effects: &[Effect]) -> Vec<u64> {
    effects.iter().filter_map(Effect::call).collect()
}
