//! Breakpoints: conditions on what one input did to a search (a node scored low, a
//! tool about to be called, a solution found, the tokens passing a value, ...). The
//! check is pure: it sees the input, the effects and events it caused, the engine after
//! it and the run's meters before and after, and says which breakpoints fired and why.
//! Pausing is the driver's job (`runtime::Run`); the set of breakpoints lives in the
//! engine (set by `Command::Breakpoints`), so replays and forks carry it.
//!
//! One small syntax is shared by `--break`, the config's `break = [...]` and the
//! explorer's `B` list: see [`ACCEPTED`]. A leading `#` marks a breakpoint that is
//! kept but switched off.

use serde::{Deserialize, Serialize};

use super::event::Event;
use super::input::Input;
use super::search::Engine;
use super::tree::{Issue, NodeId, NodeStatus};
use super::Effect;
use crate::protocol::CallErrorKind;

/// What the syntax accepts, for messages.
pub const ACCEPTED: &str = "score<X, score>X, disagree, tool, tool=NAME, bad-call, parse-fail, provider-error, \
                            solution, step=N, calls>N, tokens>N, cost>X, thought~/REGEX/, reply~/REGEX/";

/// A condition that stops a search.
#[derive(Debug, Clone)]
pub enum Condition {
    /// A node scored below this.
    ScoreBelow(f64),
    /// A node scored above this.
    ScoreAbove(f64),
    /// The evaluator's samples of one node fell in different classes.
    Disagree,
    /// A tool call (of this tool, if named) is about to be made.
    Tool(Option<String>),
    /// A reply had no usable action (ReAct).
    BadCall,
    /// The task could not use a proposed thought (malformed, wrong arithmetic, ...).
    ParseFail,
    /// A model call failed.
    ProviderError,
    /// A final state whose answer is correct.
    Solution,
    /// The method's step counter reached this.
    Step(usize),
    /// Calls the provider answered (cache hits not counted) passed this.
    Calls(u64),
    /// Tokens (prompt and completion) passed this.
    Tokens(u64),
    /// The cost in US dollars passed this.
    Cost(f64),
    /// A new thought matches.
    Thought(regex::Regex),
    /// A model reply's text matches.
    Reply(regex::Regex),
}

/// One breakpoint: its text as written (what sessions record), its condition, and
/// whether it is switched on.
#[derive(Debug, Clone)]
pub struct Breakpoint {
    /// The condition as written, without the `#` of a switched-off one.
    pub spec: String,
    pub condition: Condition,
    pub enabled: bool,
}

/// A breakpoint that could not be read: names it and says what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("breakpoint `{spec}`: {problem}; accepted: {ACCEPTED}")]
pub struct BreakError {
    pub spec: String,
    pub problem: String,
}

impl Breakpoint {
    /// Read one breakpoint (`#` in front: kept, switched off).
    pub fn parse(text: &str) -> Result<Breakpoint, BreakError> {
        let trimmed = text.trim();
        let (enabled, body) = match trimmed.strip_prefix('#') {
            Some(rest) => (false, rest.trim()),
            None => (true, trimmed),
        };
        let condition = parse_condition(body)
            .map_err(|problem| BreakError { spec: trimmed.to_string(), problem: problem.to_string() })?;
        Ok(Breakpoint { spec: body.to_string(), condition, enabled })
    }

    /// Read a list (the first bad one is the error).
    pub fn parse_all<S: AsRef<str>>(texts: &[S]) -> Result<Vec<Breakpoint>, BreakError> {
        texts.iter().map(|t| Breakpoint::parse(t.as_ref())).collect()
    }

    /// The text that reads back into this breakpoint (with `#` if switched off).
    pub fn text(&self) -> String {
        if self.enabled {
            self.spec.clone()
        } else {
            format!("#{}", self.spec)
        }
    }
}

fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
    text.trim().parse::<T>().map_err(|_| format!("`{}` is not {what}", text.trim()))
}

fn finite(text: &str) -> Result<f64, String> {
    let x: f64 = number(text, "a number")?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("`{}` is not a finite number", text.trim()))
    }
}

fn pattern(text: &str) -> Result<regex::Regex, String> {
    let text = text.trim();
    let inner = text
        .strip_prefix('/')
        .and_then(|t| t.strip_suffix('/'))
        .filter(|_| text.len() >= 2)
        .ok_or_else(|| format!("`{text}` is not a /REGEX/ between slashes"))?;
    if inner.is_empty() {
        return Err("the regex between the slashes is empty".into());
    }
    regex::Regex::new(inner).map_err(|e| format!("bad regex /{inner}/: {}", e.to_string().replace('\n', " ")))
}

fn parse_condition(body: &str) -> Result<Condition, String> {
    if body.is_empty() {
        return Err("empty condition".into());
    }
    if let Some((key, re)) = body.split_once('~') {
        return match key.trim().to_ascii_lowercase().as_str() {
            "thought" => Ok(Condition::Thought(pattern(re)?)),
            "reply" => Ok(Condition::Reply(pattern(re)?)),
            other => Err(format!("`{other}~` is not a condition (thought~ and reply~ take a regex)")),
        };
    }
    if let Some(i) = body.find(['<', '>', '=']) {
        let key = body[..i].trim().to_ascii_lowercase();
        let op = &body[i..i + 1];
        let value = &body[i + 1..];
        return match (key.as_str(), op) {
            ("score", "<") => Ok(Condition::ScoreBelow(finite(value)?)),
            ("score", ">") => Ok(Condition::ScoreAbove(finite(value)?)),
            ("tool", "=") if !value.trim().is_empty() => Ok(Condition::Tool(Some(value.trim().to_string()))),
            ("tool", "=") => Err("tool= needs a tool name".into()),
            ("step", "=") => Ok(Condition::Step(number(value, "a step number")?)),
            ("calls", ">") => Ok(Condition::Calls(number(value, "a whole number of calls")?)),
            ("tokens", ">") => Ok(Condition::Tokens(number(value, "a whole number of tokens")?)),
            ("cost", ">") => Ok(Condition::Cost(finite(value)?)),
            ("score" | "tool" | "step" | "calls" | "tokens" | "cost", _) => {
                Err(format!("`{key}` does not take `{op}`"))
            }
            _ => Err(format!("`{key}` is not a condition")),
        };
    }
    match body.to_ascii_lowercase().as_str() {
        "disagree" => Ok(Condition::Disagree),
        "tool" => Ok(Condition::Tool(None)),
        "bad-call" => Ok(Condition::BadCall),
        "parse-fail" => Ok(Condition::ParseFail),
        "provider-error" => Ok(Condition::ProviderError),
        "solution" => Ok(Condition::Solution),
        other => Err(format!("`{other}` is not a condition")),
    }
}

/// A run's meters at one moment, for the conditions on counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gauge {
    /// Calls the provider answered (the run's call count; cache hits not counted).
    pub calls: u64,
    /// Prompt and completion tokens.
    pub tokens: u64,
    /// US dollars, if the model's price is known.
    pub cost: Option<f64>,
    /// The method's step counter.
    pub step: usize,
}

/// What one input did, as the conditions see it.
pub struct Seen<'a> {
    pub input: &'a Input,
    /// The calls, tool calls and cancellations it caused.
    pub effects: &'a [Effect],
    pub events: &'a [Event],
    /// The engine after the input.
    pub engine: &'a Engine,
    pub before: Gauge,
    pub after: Gauge,
}

/// A breakpoint that fired: which, at which node (if one), and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub breakpoint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeId>,
    pub reason: String,
}

/// Whether a count went past `limit` with this input.
fn passed(before: f64, after: f64, limit: f64) -> bool {
    before <= limit && after > limit
}

impl Condition {
    /// The node and reason, if the condition holds for what `seen` shows.
    pub fn check(&self, seen: &Seen) -> Option<(Option<NodeId>, String)> {
        let tree = seen.engine.tree();
        let added = || {
            seen.events.iter().filter_map(|e| match e {
                Event::NodeAdded { id, thought, .. } => Some((*id, thought.as_str())),
                _ => None,
            })
        };
        let last_added = || added().next_back().map(|(id, _)| id);
        match self {
            Condition::ScoreBelow(x) | Condition::ScoreAbove(x) => {
                // Every node of the batch that crossed, the first selected.
                let below = matches!(self, Condition::ScoreBelow(_));
                let side = if below { "below" } else { "above" };
                let hits: Vec<(NodeId, f64)> = seen
                    .events
                    .iter()
                    .filter_map(|e| match e {
                        Event::Scored { id, value } if (below && value < x) || (!below && value > x) => {
                            Some((*id, *value))
                        }
                        _ => None,
                    })
                    .collect();
                let (first, value) = *hits.first()?;
                if hits.len() == 1 {
                    return Some((Some(first), format!("{first} scored {value}, {side} {x}")));
                }
                let mut listed: Vec<String> = hits.iter().take(6).map(|(id, v)| format!("{id} {v}")).collect();
                if hits.len() > 6 {
                    listed.push(format!("and {} more", hits.len() - 6));
                }
                Some((Some(first), format!("{} nodes scored {side} {x}: {}", hits.len(), listed.join(", "))))
            }
            Condition::Disagree => seen.events.iter().find_map(|e| match e {
                Event::Scored { id, .. } if tree.contains(*id) => {
                    let samples = &tree.node(*id).score.as_ref()?.samples;
                    let mut classes: Vec<&str> = samples.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect();
                    classes.sort_unstable();
                    classes.dedup();
                    (classes.len() > 1)
                        .then(|| (Some(*id), format!("{id}'s evaluations disagree: {}", samples.join(", "))))
                }
                _ => None,
            }),
            Condition::Tool(name) => seen.effects.iter().find_map(|e| match e {
                Effect::CallTool { tool, node, .. }
                    if name.as_deref().is_none_or(|n| n.eq_ignore_ascii_case(&tool.name)) =>
                {
                    let arg = crate::safe_text::clip(&tool.arg.replace('\n', " "), 60);
                    Some((Some(*node), format!("{node} is about to call {}[{arg}]", tool.name)))
                }
                _ => None,
            }),
            Condition::BadCall => added().find_map(|(id, _)| {
                let issue = tree.node(id).issues.iter().find(|i| i.is_bad_call())?;
                Some((Some(id), format!("{id}: {issue}")))
            }),
            Condition::ParseFail => {
                let objection = added().find_map(|(id, _)| {
                    tree.node(id).issues.iter().find_map(|i| match i {
                        Issue::Proposal(problem) => Some((Some(id), format!("{id} could not be used: {problem}"))),
                        _ => None,
                    })
                });
                objection.or_else(|| {
                    seen.events.iter().find_map(|e| match e {
                        Event::Status { id, status: NodeStatus::Invalid(problem) } => {
                            Some((Some(*id), format!("{id} is invalid: {problem}")))
                        }
                        _ => None,
                    })
                })
            }
            Condition::ProviderError => match seen.input {
                Input::LlmReply(reply) => match &reply.result {
                    Err(e) if !matches!(e.kind, CallErrorKind::NotSent | CallErrorKind::Shared) => {
                        let node = seen.engine.core.calls.get(&reply.call).map(|c| c.node);
                        let message = crate::safe_text::clip(&e.message.replace('\n', " "), 80);
                        Some((node, format!("call {} failed ({}): {message}", reply.call, e.kind)))
                    }
                    _ => None,
                },
                _ => None,
            },
            Condition::Solution => seen.events.iter().find_map(|e| match e {
                Event::Status { id, status: NodeStatus::Solution } => {
                    let answer = tree.node(*id).answer.clone().unwrap_or_default();
                    Some((Some(*id), format!("{id} is a solution: {answer}")))
                }
                _ => None,
            }),
            Condition::Step(n) => (seen.before.step < *n && seen.after.step >= *n)
                .then(|| (last_added(), format!("the search reached step {}", seen.after.step))),
            Condition::Calls(n) => passed(seen.before.calls as f64, seen.after.calls as f64, *n as f64)
                .then(|| (last_added(), format!("calls passed {n} ({} answered)", seen.after.calls))),
            Condition::Tokens(n) => passed(seen.before.tokens as f64, seen.after.tokens as f64, *n as f64)
                .then(|| (last_added(), format!("tokens passed {n} ({} used)", seen.after.tokens))),
            Condition::Cost(x) => match (seen.before.cost, seen.after.cost) {
                (Some(b), Some(a)) if passed(b, a, *x) => {
                    Some((last_added(), format!("cost passed ${x} (${a:.4} spent)")))
                }
                _ => None,
            },
            Condition::Thought(re) => added().find_map(|(id, thought)| {
                re.is_match(thought).then(|| (Some(id), format!("{id}'s thought matches /{}/", re.as_str())))
            }),
            Condition::Reply(re) => match seen.input {
                Input::LlmReply(reply) => {
                    let completions = &reply.result.as_ref().ok()?.completions;
                    let i = completions.iter().position(|c| re.is_match(&c.text))?;
                    let node = seen.engine.core.calls.get(&reply.call).map(|c| c.node);
                    Some((node, format!("reply {} to call {} matches /{}/", i + 1, reply.call, re.as_str())))
                }
                _ => None,
            },
        }
    }
}

/// The switched-on breakpoints among `breakpoints` that fire for what `seen` shows, in list order.
pub fn check(breakpoints: &[Breakpoint], seen: &Seen) -> Vec<Hit> {
    breakpoints
        .iter()
        .filter(|b| b.enabled)
        .filter_map(|b| {
            let (node, reason) = b.condition.check(seen)?;
            Some(Hit { breakpoint: b.spec.clone(), node, reason })
        })
        .collect()
}

#[cfg(test)]
#[path = "breakpoint_tests.rs"]
mod tests;
