//! ReAct's conversation with a chat model: the episode as turns (each step an assistant
//! turn, each observation the next user turn), trimmed to the context window by whole
//! turn pairs, and in native tool mode each action a tool call answered by its tool
//! result (with the reply's thinking sent back with its calls).

use super::*;

/// The marker an observation trimmed to fit the context window is replaced by.
pub const TRIMMED: &str = "[trimmed to fit the model's context window]";

/// How many `Observation i:` lines `trajectory` has.
pub(super) fn observation_count(trajectory: &str) -> usize {
    trajectory.lines().filter(|l| l.starts_with("Observation ")).count()
}

/// `trajectory` with its first `k` observations replaced by [`TRIMMED`] (an observation
/// runs from its `Observation i:` line to the next labelled line).
pub fn trim_observations(trajectory: &str, k: usize) -> String {
    let mut out = String::with_capacity(trajectory.len());
    let (mut seen, mut skipping) = (0, false);
    for line in trajectory.split_inclusive('\n') {
        let labelled = ["Thought ", "Action ", "Observation "].iter().any(|l| line.starts_with(l));
        if labelled {
            skipping = false;
        }
        if line.starts_with("Observation ") {
            seen += 1;
            if seen <= k {
                let label = line.split_once(':').map_or(line.trim_end(), |(l, _)| l);
                out.push_str(&format!("{label}: {TRIMMED}\n"));
                skipping = true;
                continue;
            }
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

/// A trajectory as a chat conversation: what comes before its first step (`lead`), then
/// one pair a step: the model's part (`Thought i:` / `Action i:` lines, an assistant turn)
/// and what it was told (`Observation i:` lines, the next user turn; empty while the step
/// has no observation yet).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EpisodeTurns {
    pub lead: String,
    pub pairs: Vec<(String, String)>,
}

impl EpisodeTurns {
    /// Split `trajectory` by its labelled lines; a line without a label goes with the part
    /// above it (a thought or an observation may span lines).
    pub fn of(trajectory: &str) -> EpisodeTurns {
        let mut turns = EpisodeTurns::default();
        // Whether the lines go to the user part of the last pair (else its assistant part).
        let mut in_user = false;
        // The number of the last observation: a `Thought i:` or `Action i:` line numbered
        // no higher is part of what the model was told (a format reminder quoting the
        // step's form), not a step of its own.
        let mut told_step = None;
        for line in trajectory.split_inclusive('\n') {
            let quoted = in_user && label_number(line).zip(told_step).is_some_and(|(i, told)| i <= told);
            let model = (line.starts_with("Thought ") || line.starts_with("Action ")) && !quoted;
            let told = line.starts_with("Observation ");
            if told {
                told_step = label_number(line);
            }
            if model && (in_user || turns.pairs.is_empty()) {
                turns.pairs.push((String::new(), String::new()));
                in_user = false;
            } else if told && !turns.pairs.is_empty() {
                in_user = true;
            }
            // An observation with no step before it is told with the text before the steps.
            match turns.pairs.last_mut() {
                Some((_, user)) if in_user => user.push_str(line),
                Some((model, _)) => model.push_str(line),
                None => turns.lead.push_str(line),
            }
        }
        turns
    }
}

/// The number of a labelled line (`Thought 3: ...` is 3).
fn label_number(line: &str) -> Option<usize> {
    let (label, _) = line.split_once(':')?;
    label.split_whitespace().nth(1)?.parse().ok()
}

/// `trajectory` without its first `k` steps, a line saying so in their place (the chat
/// style's trimming: whole turn pairs go, so no turn is cut in half).
pub fn drop_oldest_steps(trajectory: &str, k: usize) -> String {
    let turns = EpisodeTurns::of(trajectory);
    let k = k.min(turns.pairs.len());
    let mut out = turns.lead.clone();
    out.push_str(&format!(
        "[{} left out to fit the model's context window]\n",
        super::super::count(k, "earlier step", "earlier steps")
    ));
    for (model, told) in turns.pairs.iter().skip(k) {
        out.push_str(model);
        out.push_str(told);
    }
    out
}

/// The chat style's conversation for a ReAct step: the last user message of `messages`,
/// which holds the state with `trajectory` in it, becomes the question's turn, then each
/// step of the trajectory as an assistant turn (its thought and action) and a user turn
/// (its observation), the last user turn ending with what followed the trajectory (the ask
/// for the next step). Messages whose last turn does not hold the trajectory word for word
/// (a template that places it elsewhere) are left as they are.
pub fn episode_in_turns(messages: &mut Vec<Message>, trajectory: &str) {
    if trajectory.trim().is_empty() {
        return;
    }
    if messages.last().is_none_or(|m| m.role != Role::User) {
        return;
    }
    let Some(last) = messages.pop() else { return };
    let Some(at) = last.content.rfind(trajectory) else {
        messages.push(last);
        return;
    };
    let (head, tail) = (&last.content[..at], &last.content[at + trajectory.len()..]);
    let turns = EpisodeTurns::of(trajectory);
    let question = format!("{head}{}", turns.lead);
    if !question.trim().is_empty() {
        messages.push(Message::user(question.trim_end()));
    }
    for (model, told) in &turns.pairs {
        messages.push(Message::assistant(model.trim_end()));
        if !told.trim().is_empty() {
            messages.push(Message::user(told.trim_end()));
        }
    }
    let tail = tail.trim();
    if tail.is_empty() {
        return;
    }
    match messages.last_mut() {
        Some(m) if m.role == Role::User => {
            m.content.push('\n');
            m.content.push_str(tail);
        }
        _ => messages.push(Message::user(tail)),
    }
}

/// The tool result an extra call of one reply gets (ReAct takes one action a step).
pub const NOT_RUN: &str = "not run: one call per step";

/// What the finish tool answers (`tools::finish`): the result the few-shot examples' last
/// call gets, as they show none.
pub const FINISHED: &str = "Episode finished";

/// Native tool mode in the chat style: the conversation [`episode_in_turns`] made, with
/// each action written as a native tool call and each observation as its tool result.
/// The first `examples` messages are the template's (the few-shot examples): an assistant
/// turn ending in `Action i: Tool[arg]` becomes its thought (the label left out) with the
/// call (id `example_<k>`), and the `Observation i:` that opens the next user turn the
/// call's result (the rest of that turn, if any, stays a user turn). The episode's turns
/// are written from `steps`: the calls the model made, with their ids, the first answered
/// by its observation and the others with [`NOT_RUN`]; a step whose action a person wrote
/// or the model wrote as text is a call with the id `call_<step>_1`. A step with no action
/// (a bad call without a tool call) stays as text, as it was said.
pub fn native_turns(messages: &mut Vec<Message>, examples: usize, tools: &[ToolDef], steps: &[Step]) {
    let old = std::mem::take(messages);
    // The ids sent so far: a server that gives the same id in every reply would otherwise
    // tie two results to one id.
    let mut used = std::collections::HashSet::new();
    let mut example = 0;
    let mut i = 0;
    while i < old.len() {
        let m = &old[i];
        let next = old.get(i + 1).filter(|n| n.role == Role::User);
        let converted = if m.role != Role::Assistant || !m.tool_calls.is_empty() {
            None
        } else if i < examples {
            example_as_call(m, next, tools, &mut example)
        } else {
            episode_as_call(m, next, tools, steps, &mut used)
        };
        match converted {
            Some((turns, used_next)) => {
                messages.extend(turns);
                i += if used_next { 2 } else { 1 };
            }
            None => {
                messages.push(m.clone());
                i += 1;
            }
        }
    }
}

/// The `Action i: Tool[arg]` line of an assistant turn (its last such line): the step
/// number, the tool and the argument, and the turn's other lines.
fn action_line(text: &str) -> Option<(usize, String, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().rposition(|l| l.starts_with("Action "))?;
    let (label, call) = lines[at].split_once(':')?;
    let n: usize = label.trim_start_matches("Action ").trim().parse().ok()?;
    let call = call.trim();
    let open = call.find('[')?;
    let arg = call[open + 1..].strip_suffix(']')?;
    let rest: Vec<&str> = lines.iter().enumerate().filter(|(k, _)| *k != at).map(|(_, l)| *l).collect();
    Some((n, call[..open].trim().to_string(), arg.to_string(), rest.join("\n")))
}

/// The step number of an episode's assistant turn: its first `Thought i:` or `Action i:` label.
fn step_number(text: &str) -> Option<usize> {
    let line = text.lines().find(|l| l.starts_with("Thought ") || l.starts_with("Action "))?;
    let (label, _) = line.split_once(':')?;
    label.split_whitespace().nth(1)?.parse().ok()
}

/// `text` without its `Thought i:` label.
fn unlabelled_thought(text: &str, n: usize) -> String {
    let text = text.trim();
    text.strip_prefix(&format!("Thought {n}:")).map_or(text, str::trim).to_string()
}

/// A user turn opening with `Observation n:`: the observation (to its first blank line, or
/// exactly `known` when the turn starts with it) and what follows it.
fn observation_of(turn: &Message, n: usize, known: Option<&str>) -> Option<(String, String)> {
    let label = format!("Observation {n}:");
    let body = turn.content.strip_prefix(&label)?;
    if let Some(known) = known {
        let rest = body.trim_start_matches(' ').strip_prefix(known)?;
        return Some((known.to_string(), rest.trim().to_string()));
    }
    let (observation, rest) = body.split_once("\n\n").unwrap_or((body, ""));
    Some((observation.trim().to_string(), rest.trim().to_string()))
}

/// The turns for a call (or calls) and their results: the assistant turn, one tool turn a
/// call (the first answered `first`, the others [`NOT_RUN`]), then `rest` as a user turn.
fn call_turns(thought: String, calls: Vec<ToolCallOut>, first: String, rest: String) -> Vec<Message> {
    let mut turns = vec![];
    let results: Vec<Message> = calls
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let answer = if k == 0 { first.clone() } else { NOT_RUN.to_string() };
            Message::tool(c.id.clone().unwrap_or_default(), answer)
        })
        .collect();
    turns.push(Message::assistant_calls(thought, calls));
    turns.extend(results);
    if !rest.is_empty() {
        turns.push(Message::user(rest));
    }
    turns
}

/// A call of `name` with its one argument, named as the offered tool's schema says.
fn call_of(id: String, name: &str, arg: &str, tools: &[ToolDef]) -> ToolCallOut {
    let def = tools.iter().find(|t| t.name.eq_ignore_ascii_case(name));
    let mut arguments = serde_json::Map::new();
    let several = def.is_some_and(|d| d.parameters["properties"].as_object().is_some_and(|p| p.len() > 1));
    match serde_json::from_str::<serde_json::Value>(arg) {
        // A tool of several arguments takes them as the JSON object written.
        Ok(serde_json::Value::Object(object)) if several => arguments = object,
        _ => {
            let key = def.and_then(ToolDef::arg_name).unwrap_or("input");
            arguments.insert(key.to_string(), serde_json::Value::String(arg.to_string()));
        }
    }
    let name = def.map_or_else(|| name.to_lowercase(), |d| d.name.clone());
    ToolCallOut { id: Some(id), name, arguments: serde_json::Value::Object(arguments) }
}

fn example_as_call(
    m: &Message,
    next: Option<&Message>,
    tools: &[ToolDef],
    counter: &mut usize,
) -> Option<(Vec<Message>, bool)> {
    let (n, name, arg, other) = action_line(&m.content)?;
    *counter += 1;
    let call = call_of(format!("example_{counter}"), &name, &arg, tools);
    let thought = unlabelled_thought(&other, n);
    match next.and_then(|t| observation_of(t, n, None)) {
        Some((observation, rest)) => Some((call_turns(thought, vec![call], observation, rest), true)),
        // The example's last call (finish) shows no result: the finish tool's.
        None => {
            let result = if call.name.eq_ignore_ascii_case("finish") {
                FINISHED.to_string()
            } else {
                "(the example shows no result)".to_string()
            };
            Some((call_turns(thought, vec![call], result, String::new()), false))
        }
    }
}

fn episode_as_call(
    m: &Message,
    next: Option<&Message>,
    tools: &[ToolDef],
    steps: &[Step],
    used: &mut std::collections::HashSet<String>,
) -> Option<(Vec<Message>, bool)> {
    let n = step_number(&m.content)?;
    let step = steps.iter().rev().find(|s| s.n == n)?;
    let mut calls = match (step.calls.is_empty(), step.action.as_ref()) {
        (false, _) => step.calls.clone(),
        (true, Some(a)) => vec![call_of(format!("call_{n}_1"), &a.name, &a.arg, tools)],
        (true, None) => return None,
    };
    // An id an earlier step already used goes as `call_<step>_<i>` (the same in a replay).
    for (k, call) in calls.iter_mut().enumerate() {
        let id = call.id.clone().unwrap_or_default();
        if !used.insert(id) {
            let fresh = format!("call_{n}_{}", k + 1);
            used.insert(fresh.clone());
            call.id = Some(fresh);
        }
    }
    let thought = step.thought.clone().unwrap_or_default();
    // The step's observation opens the next turn (the last step's is followed by the ask).
    let observation = step.observation.as_deref()?;
    let (observation, rest) = observation_of(next?, n, Some(observation))?;
    let mut turns = call_turns(thought, calls, observation, rest);
    // The reply's thinking goes back with its calls (a reasoning model's tool loop).
    turns[0].thinking = step.thinking.clone();
    Some((turns, true))
}
