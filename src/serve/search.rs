//! One request as one search: the task, problem, parameters and upstream it names,
//! set up as a headless run recording its session, run through the one run loop, and
//! its result as an answer or an OpenAI-style error.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio::sync::{watch, Semaphore};

use super::openai::{self, Answer, ApiError, ChatRequest, Usage};
use super::{open_question, route, Serve, Upstream};
use crate::engine::sim::SimConfig;
use crate::engine::{methods, MethodKind, Params, PromptStyle};
use crate::llm::sim::SimProvider;
use crate::llm::{ContextWindow, Provider, DEFAULT_CONTEXT_TOKENS};
use crate::runtime::headless::{run_headless_under, Interrupts, RunLimits, RunSetup};
use crate::runtime::StopReason;
use crate::tasks::file::def::IoCall;
use crate::tasks::{self, Problem, SimPlayers, TaskOptions, TaskSource};

/// A request set up to run.
pub(super) struct Prepared {
    pub id: String,
    setup: RunSetup,
    problem: Problem,
    created: u64,
    /// The model as the request wrote it (the response says it back).
    model: String,
    method: MethodKind,
    path: PathBuf,
    /// Choices asked (`n`): more than one gives each of io's samples' answers.
    choices: u32,
}

impl Serve {
    /// The task of requests naming none: `--task`, else the open question.
    fn default_task(&self) -> Result<Arc<dyn TaskSource>, ApiError> {
        match &self.options.task {
            None => open_question::task("a question").map_err(|m| ApiError::new(500, "server_error", "task", m)),
            Some(name) => self.named_task(name, self.style()),
        }
    }

    /// Whether a request naming no task answers with `method` (with the parameters of
    /// `profile`, if any): the method serves the task, and sim (if it is the upstream)
    /// plays it. `GET /v1/models` lists only what does.
    pub(super) fn answers(&self, method: MethodKind, profile: Option<&route::Profile>) -> bool {
        let task = match profile.and_then(|p| p.values.get("task")).and_then(serde_json::Value::as_str) {
            Some(name) if name != open_question::NAME => self.named_task(name, self.style()),
            Some(_) => open_question::task("a question").map_err(|m| ApiError::new(500, "server_error", "task", m)),
            None => self.default_task(),
        };
        let Ok(task) = task else { return false };
        let params = Params::new(method);
        if methods::check_serves(task.as_ref(), &params).is_err() {
            return false;
        }
        match self.options.upstream {
            Upstream::Sim(_) => crate::tasks::check_sim_plays(task.as_ref(), &params).is_ok(),
            Upstream::Real { .. } => true,
        }
    }

    /// The methods that answer requests naming no task.
    pub(super) fn methods_served(&self) -> Vec<&'static str> {
        let Ok(task) = self.default_task() else { return Vec::new() };
        methods::serving(task.as_ref(), &Params::default())
            .iter()
            .filter(|m| self.answers(m.kind, None))
            .map(|m| m.kind.label())
            .collect()
    }

    /// How named tasks lay their prompts out: the papers' for sim (which plays them), chat for a model.
    fn style(&self) -> PromptStyle {
        match self.options.upstream {
            Upstream::Sim(_) => PromptStyle::Reference,
            Upstream::Real { .. } => PromptStyle::Chat,
        }
    }

    /// A registered task, or a task file of the config directory's `tasks/` (by name only:
    /// a request may not point the server at a path).
    fn named_task(&self, name: &str, style: PromptStyle) -> Result<Arc<dyn TaskSource>, ApiError> {
        let is_path = name.contains(['/', '\\']) || name.ends_with(".toml") || name.starts_with('.');
        if tasks::find(name).is_none() && (is_path || tasks::file::locate(name).is_none()) {
            return Err(ApiError::invalid(
                "invalid_task",
                format!(
                    "unknown task {}: name a built-in task ({}, or {} for the open question) or a task file in \
                     the config directory's tasks/",
                    openai::echo(name),
                    tasks::names().join(", "),
                    open_question::NAME
                ),
            ));
        }
        let key = format!("{name}\u{1}{}", style.name());
        if let Some(task) = self.tasks.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(Arc::clone(task));
        }
        let options = TaskOptions { style, ..TaskOptions::default() };
        // What is wrong with a task file is the server's business: its path and lines stay
        // on the server's stderr, and the client hears only that the task is not available.
        let task = tasks::build(name, &options, &mut Vec::new()).map_err(|e| {
            let said = format!("thoughtscope serve: task {}: {e}", crate::safe_text::one_line(name));
            eprintln!("{}", crate::safe_text::terminal_safe(&said));
            ApiError::invalid("invalid_task", format!("task {} is not available on this server", openai::echo(name)))
        })?;
        self.tasks.lock().unwrap_or_else(|p| p.into_inner()).insert(key, Arc::clone(&task));
        Ok(task)
    }

    /// Set `request` up: route, task, problem, parameters, upstream, budget and session path.
    pub(super) async fn prepare(&self, request: &ChatRequest) -> Result<Prepared, ApiError> {
        let route = route::route(&request.model, &self.options.profiles)?;
        let profile = route.profile.as_ref().and_then(|p| self.options.profiles.get(p));
        let params = route::params(route.method, request, profile, &self.options.defaults)?;
        let named = route::task_named(request, profile)?.or_else(|| self.options.task.clone());
        // `open-question` names the open question (the default unless `--task` says otherwise).
        let named = named.filter(|n| n != open_question::NAME);
        let (task, problem) = match &named {
            None => {
                if let Upstream::Sim(_) = self.options.upstream {
                    return Err(ApiError::invalid(
                        "sim_cannot_answer",
                        "sim cannot answer an open question (it plays the built-in tasks only): name one in the \
                         request, e.g. \"thoughtscope\": {\"task\": \"game24\"}, or serve a model with --provider",
                    ));
                }
                let question = request.conversation();
                // io is the model: the client's turns, limit and stops, as they came.
                let task = if route.method == methods::io::KIND {
                    let call = IoCall {
                        max_tokens: request.max_tokens,
                        stop: request.stop.clone(),
                        sampling: request.sampling,
                    };
                    open_question::passed_through(&question, &request.turns()?, call)
                } else {
                    refuse_call_fields(request, "the method's calls keep their own (name no method to ask the model")?;
                    open_question::task(&question)
                };
                let task = task.map_err(|m| ApiError::new(500, "server_error", "task", m))?;
                (task, Problem { index: None, input: question })
            }
            Some(name) => {
                refuse_call_fields(request, "the task's prompts keep their own (name no task to ask the model")?;
                let task = self.named_task(name, self.style())?;
                let text = request.last_user().unwrap_or_default();
                let problem =
                    task.parse_input(text).map_err(|e| ApiError::invalid("invalid_problem", e.to_string()))?;
                (task, problem)
            }
        };
        methods::check_serves(task.as_ref(), &params)
            .map_err(|u| ApiError::invalid("unsupported_method", u.to_string()))?;
        let effort = request.reasoning_effort.as_deref();
        let (provider, sim, context) = self.upstream(&route.upstream, task.as_ref(), &params, effort).await?;
        if let Some((field, _)) =
            request.sampling.fields().into_iter().find(|(f, _)| !provider.sampling_fields().contains(f))
        {
            return Err(ApiError::invalid(
                "unsupported_parameter",
                format!("{field} is not taken by the upstream API ({}): leave it out", provider.name()),
            ));
        }
        let mut limits = RunLimits::from_options(&self.options.limits, provider.as_ref())
            .map_err(|e| ApiError::new(500, "server_error", "budget", e.to_string()))?;
        limits.context = context;
        let id = self.request_id();
        let created = unix_seconds();
        let path = self.options.sessions.join(format!("{}-{}-{id}.jsonl", stamp(created), params.method.label()));
        let method = params.method;
        let setup = RunSetup {
            task,
            params,
            provider,
            sim,
            concurrency: self.options.max_calls.max(1),
            record: Some(path.clone()),
            limits,
            replay_tools: None,
            memory: None,
            unjudged: false,
        };
        let choices = request.n;
        Ok(Prepared { id, setup, problem, created, model: request.model.clone(), method, path, choices })
    }

    /// The provider of `model` (empty: the served one), with its sim settings and context window.
    async fn upstream(
        &self,
        model: &str,
        task: &dyn TaskSource,
        params: &Params,
        effort: Option<&str>,
    ) -> Result<(Arc<dyn Provider>, Option<SimConfig>, Option<ContextWindow>), ApiError> {
        let (provider, connect, file) = match &self.options.upstream {
            Upstream::Sim(base) => {
                if !model.is_empty() && model != "sim" {
                    return Err(ApiError::new(
                        404,
                        "invalid_request_error",
                        "model_not_found",
                        format!("this server's upstream is sim, not {model:?}: write method@sim"),
                    ));
                }
                crate::tasks::check_sim_plays(task, params).map_err(|m| ApiError::invalid("sim_cannot_answer", m))?;
                if let Some(effort) = effort {
                    return Err(ApiError::invalid(
                        "unsupported_reasoning_effort",
                        format!("this server's upstream is sim, which takes no reasoning effort: drop {effort:?}"),
                    ));
                }
                let config = SimConfig { seed: params.seed(), ..base.clone() };
                return Ok((Arc::new(SimProvider::new(config.clone(), &SimPlayers)), Some(config), None));
            }
            Upstream::Real { provider, connect, file } => (provider, connect, file),
        };
        let model = if model.is_empty() { self.model.clone() } else { model.to_string() };
        // The request's reasoning effort, else the server's own (`--reasoning-effort`).
        let effort = effort.map(str::to_string).or_else(|| connect.reasoning_effort.clone());
        let key = (model.clone(), params.seed(), effort.clone());
        if let Some((p, window)) = self.providers.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok((Arc::clone(p), None, window.clone()));
        }
        let asked = effort.is_some() && connect.reasoning_effort != effort;
        let mut connect = connect.clone();
        connect.model = Some(model);
        connect.reasoning_effort = effort;
        let built = crate::llm::config::build(provider, &connect, file, params.seed()).map_err(|e| match asked {
            // The request's effort is one the upstream API cannot take: the client's mistake.
            true => ApiError::invalid("unsupported_reasoning_effort", e.to_string()),
            false => ApiError::new(500, "server_error", "upstream_config", e.to_string()),
        })?;
        let window = built.context_window().await.unwrap_or(ContextWindow {
            tokens: DEFAULT_CONTEXT_TOKENS,
            source: "a conservative default".into(),
            measured: false,
        });
        let window = Some(window);
        self.providers.lock().unwrap_or_else(|p| p.into_inner()).insert(key, (Arc::clone(&built), window.clone()));
        Ok((built, None, window))
    }
}

impl Prepared {
    /// The session file's name (the response header gives it).
    pub fn file_name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// Run the search through the one run loop, its calls under `calls`, stopping on a
    /// signal heard on `interrupts`; the session is recorded and ended whatever happens.
    pub async fn run(self, calls: Arc<Semaphore>, interrupts: watch::Receiver<Interrupts>) -> Result<Answer, ApiError> {
        let done =
            run_headless_under(&self.setup, std::slice::from_ref(&self.problem), calls, interrupts, |_| Ok(())).await;
        let Some(result) = done.results.first() else {
            let why = done.stopped.unwrap_or_else(|| "the search did not start".into());
            return Err(match done.signal {
                Some(_) => ApiError::new(503, "server_error", "shutting_down", why),
                None => ApiError::new(500, "server_error", "session_not_recorded", why),
            });
        };
        let stopped = result.stopped.clone().unwrap_or_default();
        let about = json!({
            "request_id": self.id,
            "session": self.path.display().to_string(),
            "method": self.method.label(),
            "task": self.setup.task.name(),
            "calls": result.calls,
            "cache_hits": result.cache_hits,
            "cost_usd": result.cost_usd,
            "stopped": result.stopped,
        });
        let Some(content) = result.answer.clone() else {
            let message = result.error.clone().unwrap_or_else(|| "the search ended without an answer".into());
            return Err(if done.signal.is_some() {
                ApiError::new(503, "server_error", "shutting_down", format!("the server is shutting down: {message}"))
            } else if let Some(StopReason::Budget(_)) = &result.stop_reason {
                ApiError::new(400, "insufficient_quota", "budget_exceeded", message)
            } else if let Some(StopReason::Fatal { unreachable, message }) = &result.stop_reason {
                // Whenever it came: a server that dies after the search's first calls is
                // as much the upstream's failure as one that never answered.
                let code = if *unreachable { "upstream_unreachable" } else { "upstream_refused" };
                ApiError::new(502, "upstream_error", code, format!("the upstream model failed: {message}"))
            } else if let Some(upstream) = &result.provider_error {
                ApiError::new(
                    502,
                    "upstream_error",
                    "upstream_failed",
                    format!("the upstream model failed: {upstream}"),
                )
            } else {
                ApiError::new(422, "search_error", "no_answer", message)
            });
        };
        let finish_reason = if stopped.is_empty() { "stop" } else { "length" };
        let choices = if self.choices > 1 { self.sample_answers()? } else { Vec::new() };
        Ok(Answer {
            id: format!("chatcmpl-{}", self.id),
            created: self.created,
            model: self.model,
            content,
            finish_reason,
            choices,
            usage: Usage {
                prompt_tokens: result.prompt_tokens,
                completion_tokens: result.completion_tokens,
                reasoning_tokens: result.reasoning_tokens,
            },
            about,
        })
    }
}

/// `max_tokens` and `stop` reach the model only when io answers the open question (a
/// bare model name): elsewhere they are refused, saying why (`why`), not dropped.
fn refuse_call_fields(request: &ChatRequest, why: &str) -> Result<(), ApiError> {
    let mut given: Vec<&str> = request.sampling.fields().into_iter().map(|(f, _)| f).collect();
    if !request.stop.is_empty() {
        given.insert(0, "stop");
    }
    if request.max_tokens.is_some() {
        given.insert(0, "max_tokens");
    }
    let given = match given.as_slice() {
        [] => return Ok(()),
        [one] => format!("{one} is"),
        [first @ .., last] => format!("{} and {last} are", first.join(", ")),
    };
    Err(ApiError::invalid(
        "unsupported_parameter",
        format!("{given} passed to the model only by io on an open question; {why} directly): leave it out"),
    ))
}

impl Prepared {
    /// The answer of each of io's samples, in the order the replies were recorded (from
    /// the session, which holds every reply): the choices of a request with `n` > 1.
    /// Fewer than asked (a sample's call failed) is a 502 naming how many came back.
    fn sample_answers(&self) -> Result<Vec<String>, ApiError> {
        let session = crate::session::Session::load(&self.path)
            .map_err(|e| ApiError::new(500, "server_error", "session_not_read", e.to_string()))?;
        let mut answers = Vec::new();
        for (input, _) in session.inputs() {
            if let crate::engine::Input::LlmReply(crate::engine::LlmReply { result: Ok(reply), .. }) = input {
                for c in &reply.completions {
                    let answer = self.setup.task.extract_answer(&self.problem.input, c.text.as_str());
                    answers.push(answer.unwrap_or_else(|| c.text.trim().to_string()));
                }
            }
        }
        if answers.len() < self.choices as usize {
            return Err(ApiError::new(
                502,
                "upstream_error",
                "upstream_failed",
                format!("the upstream model gave {} of the {} choices asked", answers.len(), self.choices),
            ));
        }
        answers.truncate(self.choices as usize);
        Ok(answers)
    }
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `20261204T160512Z`: a UTC time that sorts as text.
pub(super) fn stamp(unix: u64) -> String {
    let t = crate::session::utc(unix);
    format!("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.year, t.month, t.day, t.hour, t.minute, t.second)
}

#[cfg(test)]
mod tests {
    #[test]
    fn stamps_are_utc_and_sort_as_text() {
        assert_eq!(super::stamp(0), "19700101T000000Z");
        assert_eq!(super::stamp(1_764_864_312), "20251204T160512Z");
        assert_eq!(super::stamp(951_782_400), "20000229T000000Z");
    }
}
