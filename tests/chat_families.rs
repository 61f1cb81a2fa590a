//! Recorded chat replies of three model families (tests/fixtures/chat/: a GPT-4o-like, a
//! Claude-like with tool_use blocks, a small open model) drive each method through a fake
//! server of the family's API. Each run checks the requests the server received (one
//! system message per call purpose, ReAct's episode in turns, native tool messages tied
//! to their calls' ids) and the run's reply-health counts, derived from the fixture
//! replies the server actually served (each is annotated with what it says: an answer
//! line or not, its class word, its verdict, its action), so a reader or a counter that
//! breaks fails here.

use crate::support;

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use support::{FakeServer, Reply, Seen};

const FAMILIES: [&str; 3] = ["gpt4o", "claude", "small-open"];

/// What a request asks for, read from its system message and its last turn.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Io,
    Cot,
    Propose(String),
    Value,
    Vote,
    Feedback,
    Refine,
    QaCot,
    React { step: usize, retry: bool },
    Native { step: usize, retry: bool },
    Judge(&'static str),
}

impl Kind {
    /// The fixture list a sequentially served kind draws from.
    fn list(&self) -> Option<(&'static str, &'static str)> {
        Some(match self {
            Kind::Io => ("game24", "io"),
            Kind::Cot => ("game24", "cot"),
            Kind::Value => ("game24", "value"),
            Kind::Vote => ("game24", "vote"),
            Kind::Feedback => ("game24", "feedback"),
            Kind::Refine => ("game24", "refine"),
            Kind::QaCot => ("qa", "cot"),
            _ => return None,
        })
    }
}

/// The text of a message's content: a string, or its text blocks joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The system messages of a request: OpenAI's `system` turns, or Anthropic's `system` field.
fn systems(seen: &Seen) -> Vec<String> {
    let mut out: Vec<String> = seen.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system")
        .map(|m| content_text(&m["content"]))
        .collect();
    if let Some(s) = seen.body.get("system") {
        out.push(content_text(s));
    }
    out
}

fn turns(seen: &Seen) -> Vec<Value> {
    seen.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m["role"] != "system")
        .collect()
}

fn last_text(seen: &Seen) -> String {
    turns(seen).last().map(|m| content_text(&m["content"])).unwrap_or_default()
}

/// The first whole number after `label` in `text`.
fn number_after(text: &str, label: &str) -> Option<usize> {
    let at = text.rfind(label)? + label.len();
    text[at..].trim_start().split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

fn kind_of(seen: &Seen) -> Kind {
    let system = systems(seen).join("\n");
    let last = last_text(seen);
    let retry = last.starts_with("That reply could not be read");
    if seen.body["tools"].as_array().is_some_and(|t| !t.is_empty()) {
        let step = number_after(&last, "Now step ").or_else(|| number_after(&last, "Write thought "));
        return Kind::Native { step: step.unwrap_or(0), retry };
    }
    let first = |p: &str| system.starts_with(p);
    if first("You check and guide") {
        let judge = ["Complexity: N", "CAUSE:", "Critique:", "Score: N"]
            .into_iter()
            .zip(["complexity", "validate", "cross", "score"])
            .find(|(mark, _)| last.contains(mark))
            .map_or("unknown", |(_, name)| name);
        return Kind::Judge(judge);
    }
    if first("You answer a question by interleaving") {
        let step = number_after(&last, "Write Thought ").or_else(|| number_after(&last, "Thought "));
        return Kind::React { step: step.unwrap_or(0), retry };
    }
    match () {
        _ if first("You check attempts") => Kind::Feedback,
        _ if first("You improve attempts") => Kind::Refine,
        _ if first("You list possible next steps") => {
            Kind::Propose(last.trim().trim_start_matches("Input:").trim().to_string())
        }
        _ if first("You judge whether") => Kind::Value,
        _ if first("You compare partial attempts") => Kind::Vote,
        _ if first("You answer questions") => Kind::QaCot,
        _ if first("You solve the Game of 24") && system.contains("exactly one line") => Kind::Io,
        _ if first("You solve the Game of 24") => Kind::Cot,
        _ => Kind::Judge("unknown"),
    }
}

/// A family's fixture and what its fake server served, in order: (kind, fixture entry).
#[derive(Clone)]
struct Family {
    name: &'static str,
    fixture: Value,
    served: Arc<Mutex<Vec<(Kind, Value)>>>,
    cursors: Arc<Mutex<HashMap<&'static str, usize>>>,
}

impl Family {
    fn load(name: &'static str) -> Family {
        let path = support::fixture(&format!("chat/{name}.json"));
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        Family { name, fixture, served: Arc::default(), cursors: Arc::default() }
    }

    fn provider(&self) -> &str {
        self.fixture["provider"].as_str().unwrap()
    }

    /// The next `n` replies of a sequential list (from its start again when all were served).
    fn next(&self, list: (&'static str, &'static str), n: usize) -> Vec<Value> {
        let entries = self.fixture[list.0][list.1].as_array().unwrap_or_else(|| panic!("{}: no {list:?}", self.name));
        let mut cursors = self.cursors.lock().unwrap();
        let at = cursors.entry(list.1).or_insert(0);
        let out = (0..n).map(|i| entries[(*at + i) % entries.len()].clone()).collect();
        *at += n;
        out
    }

    /// The fixture entries answering `kind` (n samples), or why there are none.
    fn entries(&self, kind: &Kind, n: usize) -> Result<Vec<Value>, String> {
        if let Some(list) = kind.list() {
            return Ok(self.next(list, n));
        }
        let found = match kind {
            Kind::Propose(numbers) => self.fixture["game24"]["propose"].get(numbers.as_str()).cloned(),
            Kind::React { step, retry } => self.fixture["qa"]["react"]
                .as_array()
                .and_then(|e| e.iter().find(|e| e["step"] == *step && e["retry"] == *retry).cloned()),
            Kind::Native { step, .. } => {
                self.fixture["qa"]["native"].as_array().and_then(|e| e.iter().find(|e| e["step"] == *step).cloned())
            }
            Kind::Judge(name) => self.fixture["judge"].get(*name).map(|t| json!({ "text": t })),
            _ => None,
        };
        found.map(|e| vec![e; n]).ok_or_else(|| format!("{}: no fixture reply for {kind:?}", self.name))
    }

    /// The fake server's answer to one request, in the family's API shape.
    fn answer(&self, seen: &Seen) -> Reply {
        let kind = kind_of(seen);
        let n = seen.body["n"].as_u64().unwrap_or(1) as usize;
        let entries = match self.entries(&kind, n) {
            Ok(e) => e,
            Err(why) => {
                self.served.lock().unwrap().push((kind, json!({ "missing": why })));
                return Reply::json(400, json!({"error": {"message": why}}).to_string());
            }
        };
        let step = match kind {
            Kind::Native { step, .. } => step,
            _ => 0,
        };
        self.served.lock().unwrap().extend(entries.iter().map(|e| (kind.clone(), e.clone())));
        match self.provider() {
            "anthropic" => anthropic_reply(&entries[0], step),
            _ => openai_reply(&entries, step),
        }
    }

    fn served(&self) -> Vec<(Kind, Value)> {
        self.served.lock().unwrap().clone()
    }
}

/// An entry's native calls with the server's ids, `fx_<step>_<i>`.
fn calls(entry: &Value, step: usize) -> Vec<(String, String, Value)> {
    let calls = entry["calls"].as_array().cloned().unwrap_or_default();
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("fx_{step}_{}", i + 1), c["name"].as_str().unwrap().to_string(), c["input"].clone()))
        .collect()
}

fn openai_reply(entries: &[Value], step: usize) -> Reply {
    let choices: Vec<Value> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut message = json!({"role": "assistant", "content": e["text"]});
            let calls: Vec<Value> = calls(e, step)
                .into_iter()
                .map(|(id, name, input)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}})
                })
                .collect();
            let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
            if !calls.is_empty() {
                message["tool_calls"] = json!(calls);
            }
            json!({"index": i, "message": message, "finish_reason": finish})
        })
        .collect();
    let body = json!({"id": "x", "object": "chat.completion", "model": "fake-model", "choices": choices,
                      "usage": {"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240}});
    Reply::json(200, body.to_string())
}

fn anthropic_reply(entry: &Value, step: usize) -> Reply {
    let mut content = Vec::new();
    if let Some(text) = entry["text"].as_str().filter(|t| !t.is_empty()) {
        content.push(json!({"type": "text", "text": text}));
    }
    let calls = calls(entry, step);
    let stop = if calls.is_empty() { "end_turn" } else { "tool_use" };
    content.extend(
        calls.into_iter().map(|(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input})),
    );
    let body = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": content,
                      "stop_reason": stop, "usage": {"input_tokens": 200, "output_tokens": 40}});
    Reply::json(200, body.to_string())
}

/// One run of a family: the summary, the human summary (the session replayed headless),
/// the requests (discovery left out) and what was served.
struct Run {
    summary: Value,
    human: String,
    seen: Vec<Seen>,
    served: Vec<(Kind, Value)>,
}

fn run(fam: &Family, args: &[&str]) -> Run {
    let answering = fam.clone();
    let server = FakeServer::start(move |_, seen| answering.answer(seen));
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("s.jsonl");
    let out = support::isolated(dir.path(), Some("sk-test-0123456789"))
        .args(["run", "--provider", fam.provider(), "--model", "fake-model", "--base-url", &server.url])
        .args(["--retries", "0", "--timeout", "20", "--concurrency", "1", "--json"])
        .args(["--record", record.to_str().unwrap()])
        .args(args)
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env_remove("ANTHROPIC_BASE_URL")
        .output()
        .unwrap();
    let served = fam.served();
    let missing: Vec<&Value> = served.iter().map(|(_, e)| e).filter(|e| e.get("missing").is_some()).collect();
    assert!(missing.is_empty(), "{}: {missing:?}", fam.name);
    let summary = support::summary(&out);
    let human = replay_human(dir.path(), &record);
    let seen = server.seen().into_iter().filter(|r| !support::is_discovery(r)).collect();
    Run { summary, human, seen, served }
}

fn replay_human(dir: &Path, record: &Path) -> String {
    let out: Output = support::isolated(dir, None)
        .args(["replay", record.to_str().unwrap(), "--headless"])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "replay failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

impl Run {
    /// The served fixture entries of the kinds `want` picks.
    fn served_of(&self, want: impl Fn(&Kind) -> bool) -> Vec<&Value> {
        self.served.iter().filter(|(k, _)| want(k)).map(|(_, e)| e).collect()
    }

    /// (n, bad) of a kind of `reply_health` in the JSON summary; (0, 0) when absent.
    fn tally(&self, kind: &str) -> (u64, u64) {
        let t = &self.summary["reply_health"][kind];
        (t["n"].as_u64().unwrap_or(0), t["bad"].as_u64().unwrap_or(0))
    }

    /// The kind's counts are (n, bad), and the human summary says them in one plain line
    /// ("B of N …, e.g. …") exactly when the bad share reaches half.
    fn check(&self, family: &str, kind: &str, n: u64, bad: u64) {
        assert_eq!(self.tally(kind), (n, bad), "{family} {kind}: {}", self.summary["reply_health"]);
        let (noun, wrong) = match kind {
            "proposals" => ("proposal lines", "unreadable or invalid"),
            "value_samples" => ("value samples", "with no class word"),
            "vote_samples" => ("vote samples", "with no readable choice"),
            "answers" => ("answers", "with no answer line (empty, or graded from a fallback line)"),
            "steps" => ("ReAct steps", "without an action"),
            "retries" => ("ReAct steps", "asked again with a format reminder"),
            _ => ("tool calls asked for", "never made"),
        };
        let line = format!("{bad} of {n} {noun} {wrong}, e.g. ");
        let crosses = bad > 0 && 2 * bad >= n;
        assert_eq!(self.human.contains(&line), crosses, "{family} {kind}: {line:?} said?\n{}", self.human);
    }

    /// Every request carries exactly one system message (first, in the OpenAI shape).
    fn one_system_message_each(&self, family: &str) {
        for seen in &self.seen {
            assert_eq!(systems(seen).len(), 1, "{family}: {}", seen.body);
            if let Some(first) = seen.body["messages"].as_array().and_then(|m| m.first()) {
                assert!(seen.body.get("system").is_some() || first["role"] == "system", "{family}: {}", seen.body);
            }
        }
    }

    fn requests(&self, want: impl Fn(&Kind) -> bool) -> Vec<&Seen> {
        self.seen.iter().filter(|s| want(&kind_of(s))).collect()
    }
}

fn flag(entry: &Value, key: &str) -> bool {
    entry[key].as_bool().unwrap_or_else(|| panic!("the fixture entry names {key}: {entry}"))
}

fn count(entries: &[&Value], key: &str, want: bool) -> u64 {
    entries.iter().filter(|e| flag(e, key) == want).count() as u64
}

/// io, cot and cot-sc on Game of 24: every sample is an answer; those without an answer
/// line are graded from a fallback line.
#[test]
fn game24_answers_of_each_family_are_read_and_counted() {
    for family in FAMILIES {
        for method in ["io", "cot", "cot-sc"] {
            let fam = Family::load(family);
            let run = run(&fam, &["--task", "game24", "--input", "4 5 6 10", "--method", method, "--samples", "3"]);
            run.one_system_message_each(family);
            let samples = run.served_of(|k| matches!(k, Kind::Io | Kind::Cot));
            assert_eq!(samples.len(), 3, "{family} {method}");
            // io and cot grade every sample (cot-sc its majority, checked by its own tests).
            if method != "cot-sc" {
                run.check(family, "answers", 3, count(&samples, "answer_line", false));
            }
            if fam.provider() == "openai" {
                assert_eq!(run.seen.len(), 1, "{family} {method}: one request, n = 3");
                assert_eq!(run.seen[0].body["n"], 3);
            } else {
                assert_eq!(run.seen.len(), 3, "{family} {method}: Anthropic has no n");
            }
            // The prompt is the task's examples as turns, the puzzle last.
            let last = last_text(&run.seen[0]);
            assert!(last.starts_with("Input: 4 5 6 10"), "{family}: {last}");
        }
    }
}

/// Tree of Thoughts (breadth-first with values and with votes, depth-first; two steps):
/// proposals counted line by line as the fixture marks them, value samples with no class
/// word and vote samples with no choice counted.
#[test]
fn tot_proposals_values_and_votes_of_each_family_are_counted() {
    for family in FAMILIES {
        for (method, extra) in [("tot-bfs", "value"), ("tot-bfs", "vote"), ("tot-dfs", "")] {
            let fam = Family::load(family);
            let mut args = vec!["--task", "game24", "--input", "4 5 6 10", "--method", method, "--steps", "2"];
            if method == "tot-bfs" {
                args.extend(["--breadth", "1", "--evaluator", extra]);
            }
            let run = run(&fam, &args);
            run.one_system_message_each(family);
            let proposals = run.served_of(|k| matches!(k, Kind::Propose(_)));
            assert!(!proposals.is_empty(), "{family} {method}");
            let lines: u64 = proposals.iter().map(|e| e["lines"].as_u64().unwrap()).sum();
            let bad: u64 = proposals.iter().map(|e| e["bad"].as_u64().unwrap()).sum();
            run.check(family, "proposals", lines, bad);
            let values = run.served_of(|k| *k == Kind::Value);
            let unread = values.iter().filter(|e| e["cls"].is_null()).count() as u64;
            run.check(family, "value_samples", values.len() as u64, unread);
            let votes = run.served_of(|k| *k == Kind::Vote);
            let unread = votes.iter().filter(|e| e["choice"].is_null()).count() as u64;
            run.check(family, "vote_samples", votes.len() as u64, unread);
            assert_eq!(votes.is_empty(), extra != "vote", "{family} {method} {extra}");
            // A value request is the numbers alone after the examples, under the judge's system message.
            for seen in run.requests(|k| *k == Kind::Value) {
                assert!(systems(seen)[0].starts_with("You judge"), "{family}");
                assert_eq!(turns(seen).last().unwrap()["role"], "user");
            }
        }
    }
}

/// The part of a feedback or refine call's system message that is its own: the solver's
/// instructions are quoted after it as the solver's.
fn own_part(system: &str) -> &str {
    system.split("\"\"\"").next().unwrap_or(system)
}

/// Self-Refine: the attempt, feedback until the verdict (read as the fixture marks it)
/// says correct, a refinement after each other one. Feedback and refine calls have their
/// own system messages, which never say "write only the lines".
#[test]
fn self_refine_reads_each_familys_verdicts_under_their_own_system_messages() {
    for family in FAMILIES {
        let fam = Family::load(family);
        let run = run(&fam, &["--task", "game24", "--input", "4 5 6 10", "--method", "self-refine"]);
        run.one_system_message_each(family);
        let kinds: Vec<&Kind> = run.served.iter().map(|(k, _)| k).collect();
        let verdicts: Vec<bool> =
            run.served_of(|k| *k == Kind::Feedback).iter().map(|e| e["verdict"].as_bool().unwrap_or(false)).collect();
        // The first verdict that reads correct ends the chain; every one before it is refined.
        let correct_at = verdicts.iter().position(|v| *v).expect("a feedback reply reads correct");
        let mut want = vec![&Kind::Cot];
        for _ in 0..correct_at {
            want.extend([&Kind::Feedback, &Kind::Refine]);
        }
        want.push(&Kind::Feedback);
        assert_eq!(kinds, want, "{family}: the chain the verdicts make");
        let solver = systems(run.requests(|k| *k == Kind::Cot)[0])[0].clone();
        assert!(solver.contains("write only the lines"), "the solver's own instructions");
        for (kind, head) in [(Kind::Feedback, "You check attempts"), (Kind::Refine, "You improve attempts")] {
            for seen in run.requests(|k| *k == kind) {
                let system = &systems(seen)[0];
                assert!(system.starts_with(head), "{family}: {system}");
                assert!(!own_part(system).contains("write only the lines"), "{family}: {system}");
                // The attempt is the assistant's turn, the ask the user's last.
                let t = turns(seen);
                assert_eq!((&t[t.len() - 2]["role"], &t[t.len() - 1]["role"]), (&json!("assistant"), &json!("user")));
            }
        }
        let last = run.served_of(|k| matches!(k, Kind::Cot | Kind::Refine));
        let last = last.last().unwrap();
        assert_eq!(run.summary["solved"], u64::from(flag(last, "correct")), "{family}: {}", run.summary);
        run.check(family, "answers", 1, u64::from(!flag(last, "answer_line")));
    }
}

/// What the fixture's ReAct replies make of one episode, read as the fixture marks them:
/// each step's first reply, and (when the method `retries`) its retry when that reply has
/// no action.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Episode {
    steps: u64,
    /// Steps whose retry had no action either.
    bad: u64,
    retried: u64,
}

fn episode(fam: &Family, retries: bool) -> Episode {
    let entries = fam.fixture["qa"]["react"].as_array().unwrap();
    let find = |step: usize, retry: bool| entries.iter().find(|e| e["step"] == step && e["retry"] == retry);
    let mut e = Episode::default();
    for step in 1.. {
        let Some(first) = find(step, false) else { break };
        e.steps += 1;
        let action = match first["action"].as_str() {
            Some(a) => Some(a),
            None if retries => {
                e.retried += 1;
                find(step, true).and_then(|r| r["action"].as_str())
            }
            None => None,
        };
        match action {
            Some(a) if a.starts_with("finish[") => break,
            Some(_) => {}
            None => e.bad += 1,
        }
    }
    e
}

/// The turns of a ReAct request after its question: the model's steps as assistant
/// turns, each followed by a user turn with the step's observation.
fn after_question(seen: &Seen) -> Vec<Value> {
    let t = turns(seen);
    let at = t.iter().rposition(|m| content_text(&m["content"]).contains("Question: Which river")).unwrap();
    t[at + 1..].to_vec()
}

/// Check the episode's requests in the chat style (text mode): at step s, s - 1 assistant
/// turns after the question, each holding that step's action as the model wrote it and
/// answered by a user turn with its observation.
fn check_text_turns(family: &str, run: &Run) {
    let asks = run.requests(|k| matches!(k, Kind::React { retry: false, .. }));
    assert!(!asks.is_empty(), "{family}");
    for seen in asks {
        let Kind::React { step, .. } = kind_of(seen) else { unreachable!() };
        let after = after_question(seen);
        let said: Vec<&Value> = after.iter().filter(|m| m["role"] == "assistant").collect();
        assert_eq!(said.len(), step - 1, "{family} step {step}: {after:?}");
        for (i, pair) in after.chunks(2).enumerate() {
            assert_eq!(pair[0]["role"], "assistant", "{family} step {step}: {after:?}");
            assert_eq!(pair.len(), 2, "{family} step {step}: each step answered by its observation: {after:?}");
            let told = content_text(&pair[1]["content"]);
            assert_eq!(pair[1]["role"], "user");
            assert!(told.starts_with(&format!("Observation {}", i + 1)), "{family} step {step}: {told}");
        }
    }
}

/// ReAct in the chat style's text mode, and react-cot-sc (which finishes with ReAct
/// here): the episode in turns, steps without an action and retries counted as the
/// fixture's replies come to.
#[test]
fn react_text_episodes_of_each_family_are_turns_and_counted() {
    for family in FAMILIES {
        for method in ["react", "react-cot-sc"] {
            let fam = Family::load(family);
            let run = run(&fam, &["--task", "qa-demo", "--range", "0", "--method", method]);
            run.one_system_message_each(family);
            check_text_turns(family, &run);
            let e = episode(&fam, true);
            run.check(family, "steps", e.steps, e.bad);
            run.check(family, "retries", e.steps, e.retried);
            run.check(family, "tool_calls", e.steps - e.bad, 0);
            assert_eq!(run.summary["solved"], 1, "{family} {method}: {}", run.summary);
            assert!(run.served_of(|k| *k == Kind::QaCot).is_empty(), "{family} {method}: ReAct finished");
        }
    }
}

/// Native tool mode: each call goes back as the API's own tool message tied to its id.
#[test]
fn native_episodes_send_tool_messages_with_the_calls_ids() {
    // The families whose fixture has native steps (the small model's has none).
    for fam in FAMILIES.map(Family::load).into_iter().filter(|f| f.fixture["native"] == true) {
        let family = fam.name;
        let run = run(&fam, &["--task", "qa-demo", "--range", "0", "--method", "react", "--tool-mode", "native"]);
        run.one_system_message_each(family);
        let steps = fam.fixture["qa"]["native"].as_array().unwrap().len();
        assert_eq!(run.seen.len(), steps, "{family}: one request a step");
        run.check(family, "steps", steps as u64, 0);
        run.check(family, "tool_calls", steps as u64, 0);
        assert_eq!(run.summary["solved"], 1, "{family}: {}", run.summary);
        let last = run.seen.last().unwrap();
        assert!(last.body.get("stop").is_none() && last.body.get("stop_sequences").is_none());
        let messages = turns(last);
        for step in 1..steps {
            let id = format!("fx_{step}_1");
            match fam.provider() {
                "anthropic" => {
                    let at = messages
                        .iter()
                        .position(|m| m["content"].as_array().is_some_and(|b| b.iter().any(|b| b["id"] == id)))
                        .unwrap_or_else(|| panic!("{family}: the tool_use {id}"));
                    assert_eq!(messages[at]["role"], "assistant");
                    let blocks = messages[at + 1]["content"].as_array().unwrap();
                    assert_eq!((&blocks[0]["type"], &blocks[0]["tool_use_id"]), (&json!("tool_result"), &json!(id)));
                }
                _ => {
                    let at = messages
                        .iter()
                        .position(|m| m["tool_calls"][0]["id"] == id)
                        .unwrap_or_else(|| panic!("{family}: the tool call {id}"));
                    assert_eq!(messages[at]["role"], "assistant");
                    assert_eq!(
                        (&messages[at + 1]["role"], &messages[at + 1]["tool_call_id"]),
                        (&json!("tool"), &json!(id))
                    );
                }
            }
        }
    }
}

/// cot-sc-react: the majority of the fixture's answers decides whether ReAct is tried.
#[test]
fn cot_sc_react_backs_off_as_each_familys_majority_says() {
    for family in FAMILIES {
        let fam = Family::load(family);
        let run = run(&fam, &["--task", "qa-demo", "--range", "0", "--method", "cot-sc-react", "--samples", "3"]);
        run.one_system_message_each(family);
        let samples = run.served_of(|k| *k == Kind::QaCot);
        assert_eq!(samples.len(), 3, "{family}");
        // A sample with no answer line gives no answer (qa tasks never grade a fallback line).
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for answer in samples.iter().filter_map(|s| s["answer"].as_str()) {
            *counts.entry(answer).or_default() += 1;
        }
        let top = counts.values().max().copied().unwrap_or(0);
        let backs_off = (top as f64) < 0.5 * samples.len() as f64;
        assert_eq!(!run.requests(|k| matches!(k, Kind::React { .. })).is_empty(), backs_off, "{family}");
    }
}

/// ReTreVal on qa-demo: each attempt is a ReAct episode in turns; the judge calls each
/// have the judge's one system message; steps are counted over every attempt.
#[test]
fn retreval_attempts_and_judges_of_each_family_are_read() {
    for family in FAMILIES {
        let fam = Family::load(family);
        let run = run(&fam, &["--task", "qa-demo", "--range", "0", "--method", "retreval", "--no-memory"]);
        run.one_system_message_each(family);
        check_text_turns(family, &run);
        let attempts = run.served_of(|k| *k == Kind::React { step: 1, retry: false }).len() as u64;
        assert!(attempts >= 1, "{family}");
        let e = episode(&fam, false);
        run.check(family, "steps", attempts * e.steps, attempts * e.bad);
        run.check(family, "retries", attempts * e.steps, attempts * e.retried);
        for judge in ["complexity", "score", "validate"] {
            assert!(!run.served_of(|k| *k == Kind::Judge(judge)).is_empty(), "{family}: a {judge} call");
        }
        for seen in run.requests(|k| matches!(k, Kind::Judge(_))) {
            assert!(systems(seen)[0].starts_with("You check and guide"), "{family}");
        }
        assert_eq!(run.summary["solved"], 1, "{family}: {}", run.summary);
    }
}
