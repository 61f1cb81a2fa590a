//! Programs a task runs to judge an answer or a step (a task file's `[check] command`
//! and `[tree] step_command`), the sans-IO way: the engine never starts them. When a
//! decision needs a verdict it does not have, the input that needed it waits, and the
//! engine asks its driver to run the program ([`Effect::RunCheck`]); the verdict comes
//! back as an input ([`Input::CheckReply`]) that the session records like a model reply,
//! and the input that waited is taken again, now with the verdict. A replay feeds the
//! recorded verdicts, so opening, replaying, exporting or diffing a session starts no
//! program.
//!
//! Waiting is done by trying: an input is given to a copy of the engine; if that copy
//! asked for a verdict it does not have, the copy is dropped and the input waits (with
//! every input after it, in order) until the verdicts are in. So a method checks
//! answers and steps synchronously, as before, and still never decides on a verdict it
//! has not been given.

use serde::{Deserialize, Serialize};

use super::*;

/// What a check program judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckPurpose {
    /// An answer, against the gold answer (`[check] command`).
    Answer,
    /// A candidate step of a tree search (`[tree] step_command`).
    Step,
}

impl CheckPurpose {
    /// How messages name the program: "check command", "step command".
    pub fn noun(self) -> &'static str {
        match self {
            CheckPurpose::Answer => "check command",
            CheckPurpose::Step => "step command",
        }
    }
}

/// A program to run for a verdict: what the engine asks its driver to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRequest {
    pub purpose: CheckPurpose,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// How long it may take, all told (writing its input, running, printing), in ms.
    pub timeout_ms: u64,
    /// Its standard input: one JSON object.
    pub stdin: String,
}

/// A verdict is known by what was asked: the purpose and the program's input.
pub type CheckKey = (CheckPurpose, String);

impl CheckRequest {
    pub fn key(&self) -> CheckKey {
        (self.purpose, self.stdin.clone())
    }

    /// The command line as a person would type it (`sh -c 'echo correct'`), cut short.
    pub fn command_line(&self) -> String {
        let words: Vec<String> = self.argv.iter().map(|a| shell_word(a)).collect();
        crate::safe_text::clip(&words.join(" "), 160)
    }

    /// "the check command `python3 check.py`".
    pub fn named(&self) -> String {
        format!("the {} `{}`", self.purpose.noun(), self.command_line())
    }
}

/// `word` as a shell would need it written: as it is when plain, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What a check program said: right or not, a score in [0, 1], and its own words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub correct: bool,
    pub score: f64,
    /// The first line it printed, cut short (shown beside the verdict).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub said: String,
}

/// Longest `said` kept, in characters.
const SAID_CHARS: usize = 200;

impl Verdict {
    /// The verdict in a program's output: a JSON object with `correct` (and `score`, 0
    /// to 1), or a first word `correct`/`incorrect` (`true`/`false`, `yes`/`no`,
    /// `pass`/`fail`). `None`: neither.
    pub fn read(output: &str) -> Option<Verdict> {
        let out = output.trim();
        let said = crate::safe_text::clip(out.lines().next().unwrap_or("").trim(), SAID_CHARS);
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(out) {
            let correct = v.get("correct")?.as_bool()?;
            let score = match v.get("score") {
                None | Some(serde_json::Value::Null) => f64::from(u8::from(correct)),
                Some(s) => s.as_f64()?,
            };
            return (score.is_finite() && (0.0..=1.0).contains(&score)).then_some(Verdict { correct, score, said });
        }
        let first = out.split_whitespace().next()?.to_ascii_lowercase();
        match first.trim_end_matches(['.', ',', ':', ';', '!']) {
            "correct" | "true" | "yes" | "pass" => Some(Verdict { correct: true, score: 1.0, said }),
            "incorrect" | "false" | "no" | "fail" => Some(Verdict { correct: false, score: 0.0, said }),
            _ => None,
        }
    }

    /// What the verdict says of `what`, for a note: "correct (the program said: ...)".
    fn describe(&self) -> String {
        let word = if self.correct { "correct" } else { "incorrect" };
        if self.said.is_empty() || self.said.eq_ignore_ascii_case(word) {
            word.to_string()
        } else {
            format!("{word} ({})", self.said)
        }
    }
}

/// A check program's verdict, as the run loop got it: an input, recorded in the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReply {
    pub call: u64,
    /// The verdict, or the one line that says why the program gave none (it could not
    /// start, ran out of time and in which phase, crashed, exited non-zero, printed too
    /// much or no verdict). A failure is an error of the task, never a wrong answer.
    pub result: Result<Verdict, String>,
}

impl Core {
    /// Whether `answer` is right: by the task's own check, or by the verdict its check
    /// program gave. A verdict not given yet is noted as needed (the input waits for it,
    /// see the module docs) and reads as not right meanwhile.
    pub fn check(&mut self, answer: &str) -> Result<(), String> {
        match self.task.check_command(&self.x, answer) {
            None => self.task.check(&self.x, answer),
            Some(request) => {
                let known = self.verdict_on(&request, answer);
                if known.is_none() {
                    self.unknown.push(request);
                }
                known.unwrap_or_else(|| Err(format!("{answer:?} is not checked yet")))
            }
        }
    }

    /// [`Core::check`] from what is known, noting nothing (for drawing and reports).
    pub fn check_known(&self, answer: &str) -> Result<(), String> {
        match self.task.check_command(&self.x, answer) {
            None => self.task.check(&self.x, answer),
            Some(request) => self
                .verdict_on(&request, answer)
                .unwrap_or_else(|| Err(format!("{answer:?} was not checked: its check command was not run"))),
        }
    }

    /// Partial credit for `answer` in [0, 1]: the task's score, or its check program's
    /// (`None`: the program gave no verdict on it, as in a session recorded before
    /// verdicts were inputs).
    pub fn score(&self, answer: &str) -> Option<f64> {
        match self.task.check_command(&self.x, answer) {
            None => Some(self.task.score(&self.x, answer)),
            Some(request) => match self.checks.get(&request.key())? {
                Ok(v) => Some(v.score),
                Err(_) => Some(0.0),
            },
        }
    }

    fn verdict_on(&self, request: &CheckRequest, answer: &str) -> Option<Result<(), String>> {
        Some(match self.checks.get(&request.key())? {
            Ok(v) if v.correct => Ok(()),
            Ok(v) => Err(format!("{} says {answer:?} is wrong: {}", request.named(), v.describe())),
            Err(failure) => Err(failure.clone()),
        })
    }

    /// Each proposal after `y` that the task's step command judges gets its verdict: a
    /// refusal (or a failure of the program) is the proposal's problem. A verdict not
    /// given yet is noted as needed.
    pub fn check_steps(&mut self, y: &str, proposals: &mut [Proposal]) {
        let task = Arc::clone(&self.task);
        let Some(tree) = task.tree() else { return };
        for p in proposals.iter_mut() {
            let Some(request) = tree.step_command(&self.x, y, p) else { continue };
            match self.checks.get(&request.key()) {
                Some(Ok(v)) if v.correct => {}
                Some(Ok(v)) => p.problem = Some(format!("{} refuses the step: {}", request.named(), v.describe())),
                Some(Err(failure)) => p.problem = Some(failure.clone()),
                None => self.unknown.push(request),
            }
        }
    }

    /// Ask the driver to run `request`; its verdict comes back as [`Input::CheckReply`].
    fn issue_check(&mut self, request: CheckRequest) -> u64 {
        let call = self.next_call;
        self.next_call += 1;
        let root = self.tree.root();
        if !self.pending.values().any(|p| matches!(&p.kind, CallKind::Check(r) if r.argv == request.argv)) {
            let named = self.checks.keys().any(|(purpose, _)| *purpose == request.purpose);
            if !named {
                self.log(format!(
                    "running {} for a verdict (once per {}; the verdicts are recorded, and a replay never runs it)",
                    request.named(),
                    if request.purpose == CheckPurpose::Answer { "answer" } else { "step" }
                ));
            }
        }
        // By hand: no search step cancels it (a person's commands wait while it runs).
        self.pending.insert(
            call,
            Pending {
                node: root,
                kind: CallKind::Check(request.clone()),
                generation: 0,
                by_hand: true,
                children_before: 0,
            },
        );
        self.out.push(Effect::RunCheck { call, request });
        call
    }

    /// The check programs asked for and not answered yet, as effects (a fork runs them).
    pub fn pending_checks(&self) -> Vec<Effect> {
        self.pending
            .iter()
            .filter_map(|(&call, p)| match &p.kind {
                CallKind::Check(request) => Some(Effect::RunCheck { call, request: request.clone() }),
                _ => None,
            })
            .collect()
    }

    fn checks_pending(&self) -> bool {
        self.pending.values().any(|p| matches!(p.kind, CallKind::Check(_)))
    }
}

impl Engine {
    /// [`Engine::handle`] for a task that runs check programs: each input is tried on a
    /// copy of the engine; one that needs a verdict not given yet waits for it (see the
    /// module docs).
    pub(super) fn handle_checked(&mut self, input: Input) -> Vec<Effect> {
        if let Input::CheckReply(reply) = input {
            self.check_reply(reply);
            let mut out = std::mem::take(&mut self.core.out);
            if self.core.checks_pending() {
                return out;
            }
            let waiting = std::mem::take(&mut self.waiting);
            if waiting.is_empty() {
                out.extend(self.handle_now(None));
            }
            for input in waiting {
                out.extend(self.try_input(input));
            }
            return out;
        }
        self.try_input(input)
    }

    fn try_input(&mut self, input: Input) -> Vec<Effect> {
        if !self.waiting.is_empty() {
            self.waiting.push(input);
            return Vec::new();
        }
        let mut trial = self.clone();
        let effects = trial.handle_now(Some(input.clone()));
        if trial.core.unknown.is_empty() {
            *self = trial;
            return effects;
        }
        let mut asked = std::collections::BTreeSet::new();
        for request in std::mem::take(&mut trial.core.unknown) {
            let key = request.key();
            let in_flight = self.core.pending.values().any(|p| matches!(&p.kind, CallKind::Check(r) if r.key() == key));
            if !in_flight && asked.insert(key) {
                self.core.issue_check(request);
            }
        }
        self.waiting.push(input);
        std::mem::take(&mut self.core.out)
    }

    /// A check program's verdict: kept (every later question about the same answer or
    /// step is answered by it) and said in the log.
    pub(super) fn check_reply(&mut self, reply: CheckReply) {
        let call = reply.call;
        let request = match self.core.pending.remove(&call) {
            Some(Pending { kind: CallKind::Check(request), .. }) => request,
            Some(other) => {
                self.core.pending.insert(call, other);
                let reason = "a verdict for a call that is not a check".to_string();
                return self.core.emit(Event::ReplyDropped { call, reason });
            }
            None => {
                let reason = "no such check in flight".to_string();
                return self.core.emit(Event::ReplyDropped { call, reason });
            }
        };
        let said = match &reply.result {
            Ok(v) => format!("{} says {}", request.named(), v.describe()),
            Err(failure) => failure.clone(),
        };
        self.core.log(crate::safe_text::clip(&said, 300));
        self.core.checks.insert(request.key(), reply.result);
    }
}
