//! One outcome, one wording: the header, the tree's title and the transcript's
//! finished line say the same verdict ("solved" or "not solved") with the same reason
//! (the task's own check of the top answer, and the right answers ranked below it).

use crate::engine::{Engine, NodeStatus, Outcome};

/// What a finished run came to, worded once for every pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub solved: bool,
    pub answer: Option<String>,
    /// Why it is not solved (none when it is).
    pub reason: Option<String>,
    /// The same in a few words, for the header: "top answer wrong", "no answer" (the
    /// tree's title counts the right answers below it).
    pub short: Option<String>,
}

impl Verdict {
    pub fn of(outcome: &Outcome, engine: &Engine) -> Verdict {
        let answer = outcome.answer.clone();
        if outcome.solved {
            return Verdict { solved: true, answer, reason: None, short: None };
        }
        let tree = engine.tree();
        let right_below = outcome
            .finals
            .iter()
            .skip(1)
            .filter(|&&id| tree.contains(id) && tree.node(id).status == NodeStatus::Solution)
            .count();
        let (short, mut reason) = match &answer {
            Some(a) => match engine.core.check_known(a) {
                Err(why) => {
                    ("top answer wrong".to_string(), format!("top answer wrong: {}", crate::safe_text::one_line(&why)))
                }
                // The task accepts it, yet the method did not count it (a judge, a rule of its own).
                Ok(()) => {
                    ("top answer not accepted".to_string(), "the method did not accept the top answer".to_string())
                }
            },
            None => ("no answer".to_string(), "no answer".to_string()),
        };
        if right_below > 0 {
            let answers = if right_below == 1 { "answer is" } else { "answers are" };
            reason.push_str(&format!("; {right_below} lower-ranked {answers} right (★)"));
        }
        Verdict { solved: false, answer, reason: Some(reason), short: Some(short) }
    }

    /// "solved" or "not solved".
    pub fn word(&self) -> &'static str {
        if self.solved {
            "solved"
        } else {
            "not solved"
        }
    }

    pub fn glyph(&self) -> &'static str {
        if self.solved {
            "★"
        } else {
            "✗"
        }
    }

    /// The transcript's line: `finished: solved — A` or `finished: not solved (reason) — top answer A`.
    pub fn finished_line(&self) -> String {
        match (&self.reason, &self.answer) {
            (None, Some(a)) => format!("finished: solved — {a}"),
            (None, None) => "finished: solved".to_string(),
            (Some(why), Some(a)) => format!("finished: not solved ({why}) — top answer {a}"),
            (Some(why), None) => format!("finished: not solved ({why})"),
        }
    }
}
