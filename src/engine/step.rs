//! A ReAct step as the engine knows it: thought, action, observation, and why the step
//! has no usable action (a bad call). The method keeps it on the step's node
//! ([`super::Node::step`]) and writes the node's text from it with [`Step::text`] and
//! [`Step::path_text`], the one place the `Thought i:` / `Action i: Tool[arg]` /
//! `Observation i:` lines are written. Panes, stats and importers read the step, not
//! the text.
//!
//! The step is derived state: sessions record the replies, and the engine rebuilds the
//! steps from them on replay.

use serde::{Deserialize, Serialize};

use crate::protocol::{ToolCallOut, ToolRequest};

/// One ReAct step.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Step {
    /// The step's number (its node's depth).
    pub n: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<String>,
    /// The action taken: the tool (lowercase) and its argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ToolRequest>,
    /// What the tool answered (or, for a bad call, the message restating the format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// Why the step has no usable action (a bad call): what the agent was told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// Further actions the reply wrote (or further native tool calls it made): not taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_actions: Vec<String>,
    /// Native tool mode: the tool calls the reply made, each with its id (the server's, or
    /// `call_<step>_<i>` when it gave none), as the next requests send them back. The first
    /// is the action; the others were answered "not run: one call per step".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ToolCallOut>,
    /// Native tool mode: the reply's thinking (a reasoning model's), sent back with its
    /// calls as the API requires inside a tool loop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<crate::protocol::Thinking>,
}

/// Which part of a step a line of its text belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepPart {
    Thought,
    Action,
    Observation,
}

impl Step {
    pub fn new(n: usize) -> Step {
        Step { n, ..Step::default() }
    }

    /// The action in the paper's text: the tool capitalised, the argument in brackets
    /// (`Search[Paramore]`).
    pub fn action_text(action: &ToolRequest) -> String {
        let mut c = action.name.chars();
        let tool = match c.next() {
            Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
            None => String::new(),
        };
        format!("{tool}[{}]", action.arg)
    }

    /// The step's parts as labelled text, in order: `Thought i: ...`, `Action i: Tool[arg]`,
    /// `Observation i: ...` (parts the step does not have are left out). A part's text may
    /// span lines.
    pub fn parts(&self) -> Vec<(StepPart, String)> {
        let n = self.n;
        let mut out = Vec::with_capacity(3);
        if let Some(t) = &self.thought {
            out.push((StepPart::Thought, format!("Thought {n}: {t}")));
        }
        if let Some(a) = &self.action {
            out.push((StepPart::Action, format!("Action {n}: {}", Step::action_text(a))));
        }
        if let Some(o) = &self.observation {
            out.push((StepPart::Observation, format!("Observation {n}: {o}")));
        }
        out
    }

    /// The step's text on its node (`Node::thought`): the parts, one after another.
    pub fn text(&self) -> String {
        self.parts().into_iter().map(|(_, t)| t).collect::<Vec<_>>().join("\n")
    }

    /// What the step adds to the trajectory (`Node::path` after its parent's): each part
    /// ending in a newline, as the prompts show it.
    pub fn path_text(&self) -> String {
        self.parts().into_iter().map(|(_, t)| t + "\n").collect()
    }

    /// A step the agent could not act on.
    pub fn is_bad_call(&self) -> bool {
        self.action.is_none() && self.problem.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(arg: &str) -> Option<ToolRequest> {
        Some(ToolRequest { name: "search".into(), arg: arg.into() })
    }

    #[test]
    fn the_text_is_the_papers_format() {
        let mut step = Step { n: 2, thought: Some("Look it up.".into()), action: search("Paramore"), ..Step::new(2) };
        assert_eq!(step.text(), "Thought 2: Look it up.\nAction 2: Search[Paramore]");
        assert_eq!(step.path_text(), "Thought 2: Look it up.\nAction 2: Search[Paramore]\n");
        step.observation = Some("Paramore is an American rock band.".into());
        assert_eq!(
            step.path_text(),
            "Thought 2: Look it up.\nAction 2: Search[Paramore]\nObservation 2: Paramore is an American rock band.\n"
        );
        let bare = Step { action: search("x"), ..Step::new(3) };
        assert_eq!(bare.text(), "Action 3: Search[x]");
        assert_eq!(Step::new(1).text(), "");
        assert!(!bare.is_bad_call());
        let bad = Step { thought: Some("hm".into()), problem: Some("Invalid action".into()), ..Step::new(1) };
        assert!(bad.is_bad_call());
    }
}
