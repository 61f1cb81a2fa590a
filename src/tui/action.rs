//! Everything a person can do in the explorer, as one documented enum. Keys map
//! to actions through the TOML keymap (`assets/keymap.toml`), and the help popup is
//! generated from the keymap's descriptions.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    // Steering the search (each becomes an engine command, recorded in the session).
    /// Carry out one unit of work (one batch of model calls), then pause.
    Step,
    /// Run until finished, or pause a running search.
    RunPause,
    /// Prune the selected subtree, or un-prune it.
    Prune,
    /// Edit the selected thought in a popup; the edit becomes a new sibling.
    Edit,
    /// Force a backtrack (BFS: the next best states of the step before; DFS: pop to the parent).
    Backtrack,
    /// Generate more children of the selected node now.
    Expand,
    /// Ask the evaluator again about the selected node.
    Reevaluate,
    /// Continue the search from the selected node only.
    Continue,
    /// Start on a new problem (its number in the task's list, or your own input).
    NewInput,
    /// Start the same problem again from scratch.
    Restart,
    /// Save the session under a new name.
    SaveAs,

    // Moving around.
    Up,
    Down,
    /// Collapse the selected node, or go to its parent.
    Left,
    /// Expand the selected node, or go to its first child.
    Right,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Select the best-valued state of the deepest level reached.
    JumpBest,
    /// Select the next solution.
    NextSolution,
    /// Follow the newest node as the search adds nodes, or stop following.
    ToggleFollow,
    /// Collapse or expand the selected node.
    ToggleCollapse,
    FocusNext,
    FocusPrev,
    /// Focus a pane by its number (shown in its title).
    FocusTree,
    FocusScores,
    FocusDetail,
    FocusTranscript,
    /// Give the tree pane more (or less) of the width.
    WiderTree,
    NarrowerTree,

    // Replay.
    /// One search step back in the timeline (to the end of the previous step).
    ReplayStepBack,
    /// One search step forward in the timeline (to the end of the next step).
    ReplayStepForward,
    /// Back to the previous human action (a recorded command) or caption.
    ReplayMarkBack,
    /// Forward to the next human action (a recorded command) or caption.
    ReplayMarkForward,
    /// One input back in the timeline.
    ReplayBack,
    /// One input forward in the timeline.
    ReplayForward,
    ReplayStart,
    ReplayEnd,
    /// Play the timeline forward, stopping at each caption, or stop playing.
    ReplayPlay,
    /// Play the timeline forward without stopping at captions, or stop playing.
    ReplayPlayNonstop,
    /// Show the replay's caption in full (a popup that scrolls).
    ShowCaption,
    ReplaySlower,
    ReplayFaster,
    /// Start a live run from the state at the replay cursor, as a new session.
    Fork,
    /// Undo the last steering command: a new session forked just before it (the old one kept).
    Undo,

    // The screen.
    CycleTheme,
    Help,
    Quit,

    // Problems and sessions.
    /// Go to the next problem of the list (`tui --range A..B`), each its own session.
    NextProblem,
    /// Go to the previous problem of the list (its recorded run opens as a replay).
    PrevProblem,
    /// Open a demo or a recorded session, as a replay in this explorer.
    Open,

    // The cross-problem memory.
    /// Show or hide the memory pane (the run's memory: entries, reliabilities; edit, pin, remove).
    Memory,

    // Exports.
    /// Export the tree on screen to a file (JSON, Graphviz DOT, Mermaid or OpenTelemetry).
    Export,
    // Debugging.
    /// Breakpoints: where the search pauses (space toggle, a add, d remove, esc close).
    Breaks,
    /// The run's figures: calls and tokens over time, scores per step, calls by purpose.
    Stats,

    // Finding nodes.
    /// Find: a regex over the nodes' thoughts, states, replies and observations.
    Find,
    /// The next match of the find (with no find on: the next solution).
    FindNext,
    /// The previous match of the find (with no find on, in a replay: play without stopping).
    FindPrev,
    /// Go to a node by its number.
    GotoNode,
    /// Show only the nodes meeting a condition (the breakpoints' syntax) and their ancestors.
    Filter,
    /// Give the focused pane the whole screen, or give it back.
    Zoom,
    /// Fold or unfold each reply's thinking in the detail pane.
    Thinking,

    // Handing off to other programs.
    /// The focused text (the node's detail, or the transcript) in `$PAGER`.
    Pager,
    /// The selected thought in `$EDITOR`; a changed text becomes an edit.
    Editor,
    /// The focused text to the system clipboard (OSC 52).
    Copy,

    // Registered panes.
    /// Open (or close) the registered pane `tui::panes::PANES[i]`; named after it in keymaps.
    Pane(u8),
}

impl Action {
    /// Every action, in help order.
    pub const ALL: [Action; 66] = [
        Action::Step,
        Action::RunPause,
        Action::Prune,
        Action::Edit,
        Action::Backtrack,
        Action::Expand,
        Action::Reevaluate,
        Action::Continue,
        Action::NewInput,
        Action::Restart,
        Action::SaveAs,
        Action::Up,
        Action::Down,
        Action::Left,
        Action::Right,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
        Action::JumpBest,
        Action::NextSolution,
        Action::ToggleFollow,
        Action::ToggleCollapse,
        Action::FocusNext,
        Action::FocusPrev,
        Action::FocusTree,
        Action::FocusScores,
        Action::FocusDetail,
        Action::FocusTranscript,
        Action::WiderTree,
        Action::NarrowerTree,
        Action::ReplayStepBack,
        Action::ReplayStepForward,
        Action::ReplayMarkBack,
        Action::ReplayMarkForward,
        Action::ReplayBack,
        Action::ReplayForward,
        Action::ReplayStart,
        Action::ReplayEnd,
        Action::ReplayPlay,
        Action::ReplayPlayNonstop,
        Action::ShowCaption,
        Action::ReplaySlower,
        Action::ReplayFaster,
        Action::Fork,
        Action::Undo,
        Action::CycleTheme,
        Action::Help,
        Action::Quit,
        Action::NextProblem,
        Action::PrevProblem,
        Action::Open,
        Action::Memory,
        Action::Export,
        Action::Breaks,
        Action::Stats,
        Action::Find,
        Action::FindNext,
        Action::FindPrev,
        Action::GotoNode,
        Action::Filter,
        Action::Zoom,
        Action::Thinking,
        Action::Pager,
        Action::Editor,
        Action::Copy,
    ];

    /// Every action with a registered pane's after `ALL`, in help order.
    pub fn all() -> Vec<Action> {
        let panes = (0..super::panes::PANES.len()).filter_map(|i| u8::try_from(i).ok()).map(Action::Pane);
        Action::ALL.into_iter().chain(panes).collect()
    }

    /// The snake_case name used in keymap files (a registered pane's: its name).
    pub fn name(self) -> String {
        if let Action::Pane(i) = self {
            return super::panes::kind(i).map(|k| k.name.to_string()).unwrap_or_default();
        }
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    }
}
