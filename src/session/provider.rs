//! The `replay` provider: answers requests with the replies recorded in session files, with no
//! network. A request that was never recorded fails with a clear error naming what differs
//! (the prompt, or which parameter: `temperature: recorded 0.0, now 0.7`). A request asked
//! several times in a run is answered with the recording's replies in order (the second
//! proposal from the same state gets the second recorded reply, as the original run drew
//! it), and the tool calls of a recorded ReAct run are answered from the recording too
//! ([`ReplayProvider::recorded_tools`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::Input;
use crate::llm::{BoxFuture, CallOptions, Provider};
use crate::protocol::{CallError, CallErrorKind, LlmRequest, LlmResponse};
use crate::session::{Session, SessionError};
use crate::tasks::react_text::ActionRules;
use crate::tools::recorded::RecordedTools;

pub struct ReplayProvider {
    model: String,
    simulated: bool,
    /// Replies by request key, in the order the recordings hold them.
    replies: HashMap<String, Vec<LlmResponse>>,
    /// The first recorded request of each prompt (messages and purpose), to say which
    /// parameter differs when a request is not recorded.
    by_prompt: HashMap<String, LlmRequest>,
    /// The observations of each recorded run's tool calls, by the problem's input.
    tools: HashMap<String, Arc<RecordedTools>>,
    /// Problems met while loading that do not stop a replay (tool calls that could not be
    /// rebuilt), each naming its file.
    pub warnings: Vec<String>,
    /// How the recorded sessions read ReAct replies (their headers' `actions`), each once.
    actions: Vec<Option<ActionRules>>,
    /// The recorded sessions' headers, in file order.
    headers: Vec<crate::session::Header>,
}

/// What identifies a prompt whatever the sampling parameters.
fn prompt_key(request: &LlmRequest) -> String {
    serde_json::json!({"purpose": request.purpose.label(), "messages": request.messages}).to_string()
}

/// The parameters of `now` that differ from `recorded`, as `name: recorded X, now Y`.
pub fn parameter_differences(recorded: &LlmRequest, now: &LlmRequest) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |name: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{name}: recorded {a}, now {b}"));
        }
    };
    differ("temperature", format!("{:?}", recorded.temperature), format!("{:?}", now.temperature));
    differ("n", recorded.n.to_string(), now.n.to_string());
    let tokens = |m: Option<u32>| m.map_or("none".to_string(), |m| m.to_string());
    differ("max_tokens", tokens(recorded.max_tokens), tokens(now.max_tokens));
    differ("stop", format!("{:?}", recorded.stop), format!("{:?}", now.stop));
    differ("nonce", recorded.nonce.to_string(), now.nonce.to_string());
    let tools = |r: &LlmRequest| {
        let names: Vec<&str> = r.tools.iter().map(|t| t.name.as_str()).collect();
        format!("[{}]", names.join(", "))
    };
    differ("tools", tools(recorded), tools(now));
    if out.is_empty() && serde_json::json!(recorded.tools) != serde_json::json!(now.tools) {
        out.push("tools: the same names with different definitions".into());
    }
    out
}

impl ReplayProvider {
    /// Load every reply from `path`: a session file or a directory of them.
    pub fn load(path: &Path) -> Result<ReplayProvider, SessionError> {
        let files: Vec<PathBuf> = if path.is_dir() {
            let mut f: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| SessionError::Io { path: path.display().to_string(), source: e })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            f.sort();
            f
        } else {
            vec![path.to_path_buf()]
        };
        let mut provider = ReplayProvider {
            model: String::new(),
            simulated: false,
            replies: HashMap::new(),
            by_prompt: HashMap::new(),
            tools: HashMap::new(),
            warnings: Vec::new(),
            actions: Vec::new(),
            headers: Vec::new(),
        };
        for file in &files {
            let session = Session::load(file)?;
            if !provider.actions.contains(&session.header.actions) {
                provider.actions.push(session.header.actions);
            }
            provider.headers.push(session.header.clone());
            if provider.model.is_empty() {
                provider.model = session.header.model.clone();
                provider.simulated = session.header.simulated;
            }
            let mut has_tools = false;
            for (input, request) in session.inputs() {
                has_tools |= matches!(input, Input::ToolReply(_));
                let (Input::LlmReply(reply), Some(request)) = (input, request) else { continue };
                provider.by_prompt.entry(prompt_key(request)).or_insert_with(|| request.clone());
                // Replies the recorded run shared (cache hits) stay in the sequence: a run
                // that asks the same request again gets what the recorded run got.
                if let Ok(r) = &reply.result {
                    let mut r = r.clone();
                    r.cached = false;
                    provider.replies.entry(request.cache_key(&session.header.model)).or_default().push(r);
                }
            }
            if has_tools {
                provider.load_tools(&session);
            }
        }
        if provider.model.is_empty() {
            return Err(SessionError::Format {
                path: path.display().to_string(),
                line: 0,
                message: "no session files (*.jsonl) to replay from".into(),
            });
        }
        Ok(provider)
    }

    /// Keep the observations of `session`'s tool calls (rebuilt with their steps, which
    /// say what page and lookup cursor each call read from).
    fn load_tools(&mut self, session: &Session) {
        match super::replay::rebuild(session, None, None) {
            Ok(rebuilt) => {
                if let Some(recorded) = RecordedTools::from_calls(&rebuilt.tool_calls) {
                    self.tools.entry(session.header.input.clone()).or_insert_with(|| Arc::new(recorded));
                }
            }
            Err(e) => self.warnings.push(format!(
                "{}: its tool calls cannot be replayed ({e}); they will fail as not recorded",
                session.path.display()
            )),
        }
    }

    pub fn len(&self) -> usize {
        self.replies.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.replies.is_empty()
    }

    /// The recorded observations of the run of problem `input`, if it made tool calls.
    pub fn recorded_tools(&self, input: &str) -> Option<Arc<RecordedTools>> {
        self.tools.get(input).cloned()
    }

    /// The sampling temperatures the recorded sessions of task `task` ran at, each once
    /// (an imported log's from its file name), so a re-drive samples as they did.
    pub fn recorded_temperatures(&self, task: &str) -> Vec<f64> {
        let mut seen: Vec<f64> = Vec::new();
        for h in self.headers.iter().filter(|h| h.task == task) {
            if let Some(t) = h.params.number("temperature") {
                if !seen.contains(&t) {
                    seen.push(t);
                }
            }
        }
        seen
    }

    /// Whether every recorded session of task `task` says it never judged its outcome
    /// (header `unjudged`: an imported log without judge scores), so a re-drive does not either.
    pub fn recorded_unjudged(&self, task: &str) -> bool {
        let mut of_task = self.headers.iter().filter(|h| h.task == task).peekable();
        of_task.peek().is_some() && of_task.all(|h| h.unjudged)
    }

    /// The ways the recorded sessions read ReAct replies, each once (`None`: tolerantly,
    /// the sessions that say nothing), so a re-drive reads them the same way.
    pub fn recorded_actions(&self) -> Vec<Option<ActionRules>> {
        self.actions.clone()
    }

    /// What the recorded sessions of task `task` say about their problems, in file order.
    /// The context windows the recorded sessions were run with (their headers'
    /// `context_window`), each once, in file order; `None` for sessions with none.
    pub fn recorded_context_windows(&self) -> Vec<Option<u64>> {
        let mut seen = Vec::new();
        for w in self.headers.iter().map(|h| h.context_window) {
            if !seen.contains(&w) {
                seen.push(w);
            }
        }
        seen
    }

    pub fn recorded_specs(&self, task: &str) -> Vec<crate::tasks::TaskSpec<'_>> {
        // A problem once however many sessions ran it (a session and its forks): the same
        // input at the same index. The same question at two indices (a data set that holds
        // a claim twice, as FEVER's dev split does) is two problems, as it was in the log.
        let mut seen = std::collections::HashSet::new();
        self.headers
            .iter()
            .filter(|h| h.task == task && seen.insert((h.input.as_str(), h.index)))
            .map(|h| h.task_spec())
            .collect()
    }

    /// Every problem's recorded tool observations, by input.
    pub fn all_recorded_tools(&self) -> HashMap<String, Arc<RecordedTools>> {
        self.tools.clone()
    }

    /// The recorded reply to the `occurrence`-th asking of `request`, or why there is none.
    pub fn answer(&self, request: &LlmRequest, occurrence: u32) -> Result<LlmResponse, CallError> {
        let purpose = request.purpose.label();
        let not_recorded = |message: String| CallError { kind: CallErrorKind::NotRecorded, message };
        match self.replies.get(&request.cache_key(&self.model)) {
            Some(replies) => match replies.get(occurrence as usize) {
                Some(reply) => Ok(reply.clone()),
                None => Err(not_recorded(format!(
                    "no recorded reply for this {purpose} request asked {} times: the recording answered it {} \
                     time{} (the search took a different path)",
                    occurrence + 1,
                    replies.len(),
                    if replies.len() == 1 { "" } else { "s" }
                ))),
            },
            None => match self.by_prompt.get(&prompt_key(request)) {
                Some(recorded) => {
                    let diff = parameter_differences(recorded, request);
                    let what = if diff.is_empty() { "the model differs".to_string() } else { diff.join("; ") };
                    Err(not_recorded(format!("no recorded reply for this {purpose} request: {what}")))
                }
                None => Err(not_recorded(format!(
                    "no recorded reply for this {purpose} request: the recording has no {purpose} request with \
                     this prompt (the prompt templates, the task or the search path differ)"
                ))),
            },
        }
    }
}

impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    /// Replies are filed by occurrence over all the recorded problems, in their order.
    fn problems_side_by_side(&self) -> bool {
        false
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn simulated(&self) -> bool {
        self.simulated
    }

    /// The recording's reply of the call's occurrence, whole (no stream).
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(async move { self.answer(request, options.occurrence) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Completion, Message, Purpose, Usage};

    fn request(text: &str, temperature: f32) -> LlmRequest {
        LlmRequest {
            purpose: Purpose::Act,
            messages: vec![Message::user(text)],
            n: 1,
            temperature,
            max_tokens: Some(100),
            stop: vec!["\nObservation".into()],
            context: serde_json::Value::Null,
            nonce: 0,
            tools: vec![],
            sampling: Default::default(),
        }
    }

    fn reply(text: &str) -> LlmResponse {
        LlmResponse {
            completions: vec![Completion::text(text, None)],
            usage: Usage::default(),
            latency_ms: 0,
            model: "m".into(),
            simulated: false,
            cached: false,
            lost: None,
        }
    }

    fn provider(recorded: &[(LlmRequest, LlmResponse)]) -> ReplayProvider {
        let mut p = ReplayProvider {
            model: "m".into(),
            simulated: false,
            replies: HashMap::new(),
            by_prompt: HashMap::new(),
            tools: HashMap::new(),
            warnings: vec![],
            actions: vec![],
            headers: vec![],
        };
        for (req, rep) in recorded {
            p.by_prompt.entry(prompt_key(req)).or_insert_with(|| req.clone());
            p.replies.entry(req.cache_key("m")).or_default().push(rep.clone());
        }
        p
    }

    #[test]
    fn a_request_asked_again_gets_the_next_recorded_reply() {
        let r = request("Question: x", 0.0);
        let p = provider(&[(r.clone(), reply("first")), (r.clone(), reply("second"))]);
        assert_eq!(p.answer(&r, 0).unwrap().completions[0].text, "first");
        assert_eq!(p.answer(&r, 1).unwrap().completions[0].text, "second");
        let e = p.answer(&r, 2).unwrap_err();
        assert_eq!(e.kind, CallErrorKind::NotRecorded);
        assert!(e.message.contains("asked 3 times") && e.message.contains("answered it 2 times"), "{e}");
    }

    #[tokio::test]
    async fn the_one_call_takes_its_occurrence_and_stream_from_the_options_through_a_wrapper() {
        use crate::llm::testserver::{Registering, Registry};
        let r = request("Question: x", 0.0);
        let inner: Arc<dyn Provider> = Arc::new(provider(&[(r.clone(), reply("first")), (r.clone(), reply("second"))]));
        let p = Registering { inner, registry: Registry::default() };
        let streamed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = Arc::clone(&streamed);
        let sink: crate::llm::DeltaFn = Arc::new(move |_, _| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        });
        let second = CallOptions { occurrence: 1, ..CallOptions::streaming(sink) };
        assert_eq!(p.complete(&r, second).await.unwrap().completions[0].text, "second");
        assert_eq!(p.complete(&r, CallOptions::default()).await.unwrap().completions[0].text, "first");
        let third = CallOptions { occurrence: 2, ..CallOptions::default() };
        assert_eq!(p.complete(&r, third).await.unwrap_err().kind, CallErrorKind::NotRecorded);
        assert_eq!(streamed.load(std::sync::atomic::Ordering::SeqCst), 0, "a recording answers whole");
    }

    #[test]
    fn a_parameter_mismatch_is_named() {
        let p = provider(&[(request("Question: x", 0.0), reply("a"))]);
        let e = p.answer(&request("Question: x", 0.7), 0).unwrap_err();
        assert_eq!(e.kind, CallErrorKind::NotRecorded);
        assert!(e.message.contains("temperature: recorded 0.0, now 0.7"), "{e}");
        let mut more = request("Question: x", 0.0);
        more.max_tokens = None;
        more.n = 2;
        let e = p.answer(&more, 0).unwrap_err();
        assert!(
            e.message.contains("n: recorded 1, now 2") && e.message.contains("max_tokens: recorded 100, now none"),
            "{e}"
        );
        let e = p.answer(&request("Question: y", 0.0), 0).unwrap_err();
        assert!(e.message.contains("no act request with this prompt"), "{e}");
    }
}
