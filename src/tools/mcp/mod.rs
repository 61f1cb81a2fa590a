//! Tools from Model Context Protocol servers, through the official Rust SDK (`rmcp`):
//! a server is a process the person names (`[[mcp]]` in the config file, `--mcp NAME`,
//! `--mcp-cmd "CMD ARGS"`), started with only the environment its entry names (and
//! `PATH`, to find its program), or a streamable-HTTP endpoint (`url`, `--mcp-url`; see
//! [`http`]); it is asked for its tools, and called with a time limit.
//! Every failure — a server that does not start or cannot be reached, dies, hangs or
//! answers with an error — is one line naming the server, and a call's failure a failed
//! observation, never a hang or a panic.
//!
//! The servers run on a runtime of their own (started once), so a call can be awaited
//! from any runtime and a connection made from synchronous set-up code. A call's result
//! is an ordinary recorded tool reply: a replay or a fork needs no server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient};
use rmcp::ServiceExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{BoxFuture, Observation, Tool, ToolSpec, ToolState};

pub mod http;
pub mod stdio;

/// How long a server may take to start and list its tools.
pub const START_SECS: u64 = 20;
/// A call's time limit unless the entry sets `timeout_secs`.
pub const CALL_SECS: u64 = 30;

/// One `[[mcp]]` entry: a server over stdio (`command`) or streamable HTTP (`url`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    pub name: String,
    /// The program (a stdio server).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// The only environment the server gets (besides `PATH`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Offer only these of its tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// A call's time limit in seconds (default [`CALL_SECS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// The endpoint of a streamable-HTTP server (instead of `command`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers sent with each request to `url` (secret-looking values are redacted
    /// in a session).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// A bearer token sent to `url` (`Authorization: Bearer ...`); never recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<String>,
    /// The environment variable that holds the bearer token (read at start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
}

impl McpConfig {
    /// `--mcp-cmd "CMD ARGS"`: a server named after its program.
    pub fn from_command_line(line: &str) -> Result<McpConfig, String> {
        let mut words = line.split_whitespace().map(str::to_string);
        let command = words.next().ok_or("--mcp-cmd needs a command, e.g. --mcp-cmd \"my-server --flag\"")?;
        let name = std::path::Path::new(&command)
            .file_name()
            .map_or_else(|| command.clone(), |n| n.to_string_lossy().to_string());
        Ok(McpConfig { name, command, args: words.collect(), ..McpConfig::default() })
    }

    /// `--mcp-url [NAME=]URL`: a streamable-HTTP server, named NAME or after the URL's host.
    pub fn from_url_flag(flag: &str) -> Result<McpConfig, String> {
        let (name, url) = match flag.split_once('=') {
            Some((name, url)) if !name.contains(['/', ':']) => (name.trim().to_string(), url.trim().to_string()),
            _ => {
                let host = reqwest::Url::parse(flag.trim()).ok().and_then(|u| u.host_str().map(str::to_string));
                (host.unwrap_or_default(), flag.trim().to_string())
            }
        };
        let cfg = McpConfig { name, url: Some(url), ..McpConfig::default() };
        cfg.check().map_err(|why| {
            format!("--mcp-url {flag}: {why} (expected NAME=URL, e.g. --mcp-url docs=http://127.0.0.1:8000/mcp)")
        })?;
        Ok(cfg)
    }

    /// Whether the entry can be used, or what is wrong with it in one line.
    pub fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("needs a name".to_string());
        }
        match (&self.url, self.command.trim().is_empty()) {
            (None, true) => Err("needs a command (a stdio server) or a url (a streamable-HTTP server)".to_string()),
            (Some(_), false) => Err("has both a command and a url; give one".to_string()),
            (Some(url), true) => {
                if !self.args.is_empty() || !self.env.is_empty() {
                    return Err("args and env are for a command; a url server takes headers".to_string());
                }
                if self.bearer_token.is_some() && self.bearer_token_env.is_some() {
                    return Err("has both bearer_token and bearer_token_env; give one".to_string());
                }
                http::check(url, &self.headers)
            }
            (None, false)
                if !self.headers.is_empty() || self.bearer_token.is_some() || self.bearer_token_env.is_some() =>
            {
                Err("headers and bearer tokens are for a url; a command server takes env".to_string())
            }
            (None, false) => Ok(()),
        }
    }

    /// The bearer token to send, read from its variable if the entry names one.
    fn token(&self) -> Result<Option<String>, String> {
        match (&self.bearer_token, &self.bearer_token_env) {
            (Some(token), _) => Ok(Some(token.clone())),
            (None, Some(var)) => match std::env::var(var) {
                Ok(token) if !token.trim().is_empty() => Ok(Some(token.trim().to_string())),
                _ => Err(format!("bearer_token_env names {var}, which is not set")),
            },
            (None, None) => Ok(None),
        }
    }

    /// Where the server is, for messages: its url or its program.
    pub fn place(&self) -> &str {
        self.url.as_deref().unwrap_or(&self.command)
    }

    /// The entry as a session header records it: its `env` values that look like secrets
    /// are redacted.
    /// The entry as a session header records it: its `env` values and `headers` that look
    /// like secrets are redacted, and a bearer token is never written.
    pub fn recorded(&self) -> McpConfig {
        let hide = |map: &BTreeMap<String, String>| {
            map.iter()
                .map(|(k, v)| {
                    let secret = looks_secret(k, v);
                    (k.clone(), if secret { "(redacted)".to_string() } else { v.clone() })
                })
                .collect()
        };
        McpConfig {
            env: hide(&self.env),
            headers: hide(&self.headers),
            bearer_token: self.bearer_token.as_ref().map(|_| "(redacted)".to_string()),
            ..self.clone()
        }
    }

    /// The values [`McpConfig::recorded`] hides, to redact wherever they might show.
    fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = (self.env.iter().chain(&self.headers))
            .filter(|(k, v)| looks_secret(k, v))
            .map(|(_, v)| v.clone())
            .collect();
        out.extend(self.bearer_token.clone());
        out.extend(self.bearer_token_env.as_ref().and_then(|var| std::env::var(var).ok()));
        out
    }
}

/// Whether an `env` entry looks like a secret: a name that says so (key, token, secret,
/// password, auth), a value already known as one, or a long value of letters and digits
/// without spaces.
pub fn looks_secret(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let named = ["KEY", "TOKEN", "SECRET", "PASSWORD", "AUTH"].iter().any(|w| upper.contains(w));
    let random = value.len() >= 20
        && !value.contains(char::is_whitespace)
        && value.chars().any(|c| c.is_ascii_digit())
        && value.chars().any(|c| c.is_ascii_alphabetic());
    named || random || crate::llm::secret::contains_secret(value)
}

/// What a server's tool is: recorded in session headers, so a replay offers the same tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolDef {
    pub server: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The JSON schema of its arguments.
    pub schema: Value,
}

impl McpToolDef {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: self.name.clone(), description: self.description.clone(), args: self.schema.clone() }
    }
}

/// What a session records of the MCP servers a run offered: the servers (as
/// [`McpConfig::recorded`] writes them) and their tools, so a replay offers the same tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpRecord {
    #[serde(default)]
    pub servers: Vec<McpConfig>,
    #[serde(default)]
    pub tools: Vec<McpToolDef>,
}

impl McpRecord {
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.tools.is_empty()
    }
}

/// The MCP servers' tools a run adds to a task's own: started (live) or from a session's
/// record (offline: a call says the server is not running), with their record.
#[derive(Clone, Default)]
pub struct McpTools {
    pub tools: Vec<Arc<dyn Tool>>,
    pub record: McpRecord,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools").field("record", &self.record).finish()
    }
}

impl McpTools {
    /// Start each server and list its tools, or the one line that says which failed.
    pub fn start(servers: &[McpConfig]) -> Result<McpTools, String> {
        let mut out = McpTools::default();
        for server in servers {
            let (tools, defs) = connect(server)?;
            out.tools.extend(tools);
            out.record.tools.extend(defs);
            out.record.servers.push(server.recorded());
        }
        Ok(out)
    }

    /// The tools a session recorded, without their servers (a replay or a fork).
    pub fn offline(record: &McpRecord) -> McpTools {
        McpTools { tools: offline(&record.tools), record: record.clone() }
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.record.is_empty()
    }

    /// Their names, as a list for messages ("add, slow and fail").
    pub fn names(&self) -> Vec<String> {
        self.record.tools.iter().map(|t| t.name.clone()).collect()
    }
}

/// The servers' runtime: started on first use, never dropped.
fn runtime() -> Result<&'static tokio::runtime::Runtime, String> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("mcp")
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the MCP runtime: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A running server: its peer, whether its process still runs, and the way to end it
/// (ended when the last of its tools is dropped, with the run, or by [`end_servers`]).
struct Connection {
    peer: Peer<RoleClient>,
    process: Arc<Process>,
    cancel: Option<rmcp::service::RunningServiceCancellationToken>,
    /// Messages of a stdio server over the size limit (none for a streamable-HTTP one,
    /// whose transport says so itself).
    oversized: Option<Arc<stdio::Oversized>>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.process.stopping.store(true, Ordering::SeqCst);
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
        }
    }
}

/// A server's process as the program tracks it, so it can be ended at exit or on a signal
/// (a streamable-HTTP server has no process here: only its connection is tracked).
struct Process {
    name: String,
    /// None: a streamable-HTTP server.
    pid: Option<u32>,
    /// The connection still runs (set false when the service loop ends: the process
    /// exited, or was ended and reaped).
    running: AtomicBool,
    /// The program is ending it (so its end is no surprise).
    stopping: AtomicBool,
}

impl Process {
    fn new(name: &str, pid: Option<u32>) -> Process {
        Process { name: name.to_string(), pid, running: AtomicBool::new(true), stopping: AtomicBool::new(false) }
    }

    /// A streamable-HTTP server found gone by a call: later calls say so at once, and the
    /// run ends with one line about it, as for a process that ended.
    fn lost(&self) {
        if self.pid.is_none() && self.running.swap(false, Ordering::SeqCst) && !self.stopping.load(Ordering::SeqCst) {
            NOTES.lock().unwrap_or_else(|p| p.into_inner()).push(format!(
                "the MCP server {} closed its connection during the run; calls to its tools after that were failed observations",
                self.name
            ));
        }
    }

    /// How its end shows: a process stops, a connection closes.
    fn ended(&self) -> &'static str {
        match self.pid {
            Some(_) => "its process stopped",
            None => "its connection closed",
        }
    }
}

/// Every server started by this program, and what went wrong with them (a server that
/// ended during the run).
static PROCESSES: Mutex<Vec<Arc<Process>>> = Mutex::new(Vec::new());
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// End every server process still running (SIGTERM, then SIGKILL for one still there a
/// second later), and return the lines to tell the person: servers that ended on their
/// own during the run. Called when the program ends, a run stopped by a signal included.
pub fn end_servers() -> Vec<String> {
    let processes: Vec<Arc<Process>> = std::mem::take(&mut *PROCESSES.lock().unwrap_or_else(|p| p.into_inner()));
    for p in &processes {
        p.stopping.store(true, Ordering::SeqCst);
    }
    let live: Vec<&Arc<Process>> =
        processes.iter().filter(|p| p.pid.is_some() && p.running.load(Ordering::SeqCst)).collect();
    for p in &live {
        p.stopping.store(true, Ordering::SeqCst);
        signal(p.pid, Signal::Term);
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    while live.iter().any(|p| p.running.load(Ordering::SeqCst)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for p in live.iter().filter(|p| p.running.load(Ordering::SeqCst)) {
        signal(p.pid, Signal::Kill);
    }
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(|p| p.into_inner()))
}

enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal(pid: Option<u32>, signal: Signal) {
    let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) else { return };
    let number = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) with a pid this program started (still running: its connection
    // has not ended, so it has not been reaped) and a plain signal number; the server leads
    // its own process group (see `stdio`), so its children get the signal too.
    unsafe {
        if libc::kill(-pid, number) != 0 {
            libc::kill(pid, number);
        }
    }
}

#[cfg(not(unix))]
fn signal(_pid: Option<u32>, _signal: Signal) {
    // Elsewhere the server ends when its stdin closes, as MCP's stdio servers do.
}

/// A started server's tools (live) and their definitions.
pub type Started = (Vec<Arc<dyn Tool>>, Vec<McpToolDef>);

/// Start the server of `config` and list its tools, or the one line that says what failed.
pub fn connect(config: &McpConfig) -> Result<Started, String> {
    // Its secrets never reach a log or the screen.
    for secret in config.secrets() {
        crate::llm::secret::register(&secret);
    }
    let rt = runtime()?;
    let cfg = config.clone();
    let name = config.name.clone();
    let joined = std::thread::spawn(move || {
        // Started on the runtime's own worker, which lives as long as the program: a
        // parent-death signal follows the thread that started the process, and this one ends now.
        let started = rt.spawn(async move {
            tokio::time::timeout(Duration::from_secs(START_SECS), start(&cfg))
                .await
                .unwrap_or_else(|_| Err(format!("it did not answer within {START_SECS} s")))
        });
        rt.block_on(started).unwrap_or_else(|_| Err("its start-up failed".to_string()))
    })
    .join();
    let (connection, defs) = match joined {
        Ok(Ok(started)) => started,
        // The name quoted: a server named after its program ("server") must not read as a typo.
        Ok(Err(why)) => return Err(format!("the MCP server {name:?}: {why}")),
        Err(_) => return Err(format!("the MCP server {name:?}: its start-up failed")),
    };
    let connection = Arc::new(connection);
    let timeout = Duration::from_secs(config.timeout_secs.unwrap_or(CALL_SECS).max(1));
    let tools = defs
        .iter()
        .map(|def| {
            Arc::new(McpTool { def: def.clone(), connection: Some(Arc::clone(&connection)), timeout }) as Arc<dyn Tool>
        })
        .collect();
    Ok((tools, defs))
}

type Service = rmcp::service::RunningService<RoleClient, ()>;

/// Start a stdio server's process (ending with this one: see [`stdio`]) and its protocol,
/// its stdout watched for messages over [`stdio::MAX_MESSAGE`].
async fn start_process(cfg: &McpConfig) -> Result<(Service, Process, Option<Arc<stdio::Oversized>>), String> {
    use std::process::Stdio;
    let mut command = tokio::process::Command::new(&cfg.command);
    command.args(&cfg.args).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command.envs(&cfg.env).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).kill_on_drop(true);
    stdio::tie_to_this_process(&mut command);
    let mut child = command.spawn().map_err(|e| format!("cannot start {}: {e}", cfg.command))?;
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(format!("cannot start {}: its stdin and stdout could not be had", cfg.command));
    };
    let process = Process::new(&cfg.name, child.id());
    let oversized = stdio::Oversized::new();
    let watched = stdio::Watched::new(stdout, stdio::MAX_MESSAGE, Arc::clone(&oversized));
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new_client(watched, stdin)
        .with_max_line_length(stdio::MAX_MESSAGE);
    // The process is reaped when it ends (its end is seen as the transport's end).
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    let service = ().serve(transport).await.map_err(|e| format!("it did not start the protocol: {e}"))?;
    Ok((service, process, Some(oversized)))
}

/// Reach a streamable-HTTP server and start its protocol.
async fn start_remote(cfg: &McpConfig, url: &str) -> Result<(Service, Process, Option<Arc<stdio::Oversized>>), String> {
    let transport = http::transport(url, &cfg.headers, cfg.token()?)?;
    let service = ().serve(transport).await.map_err(|e| {
        let why = match &e {
            rmcp::service::ClientInitializeError::TransportError { error, .. } => http::reason(error.error.as_ref()),
            other => causes(other),
        };
        format!("cannot reach {url}: {why}")
    })?;
    Ok((service, Process::new(&cfg.name, None), None))
}

/// An error with its causes, each once ("a: b: c").
pub(crate) fn causes(e: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(e);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.retain(|p| !text.contains(p.as_str()));
            parts.push(text);
        }
        next = e.source();
    }
    let said = parts.join(": ");
    // rmcp's wrappers say nothing a person needs.
    said.replace("Client error: ", "").replace("unexpected server response: ", "")
}

async fn start(cfg: &McpConfig) -> Result<(Connection, Vec<McpToolDef>), String> {
    cfg.check()?;
    let (service, process, oversized) = match &cfg.url {
        Some(url) => start_remote(cfg, url).await?,
        None => start_process(cfg).await?,
    };
    let process = Arc::new(process);
    let listed = service.list_all_tools().await.map_err(|e| format!("it did not list its tools: {e}"))?;
    let mut defs: Vec<McpToolDef> = listed
        .into_iter()
        .map(|t| McpToolDef {
            server: cfg.name.clone(),
            name: t.name.to_string(),
            description: t.description.map(|d| d.to_string()).unwrap_or_default(),
            schema: Value::Object((*t.input_schema).clone()),
        })
        .collect();
    if let Some(allowed) = &cfg.tools {
        if let Some(missing) = allowed.iter().find(|a| !defs.iter().any(|d| &d.name == *a)) {
            let offered: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
            return Err(format!("it has no tool {missing} (its tools: {})", offered.join(", ")));
        }
        defs.retain(|d| allowed.contains(&d.name));
    }
    if defs.iter().any(|d| d.name.eq_ignore_ascii_case("finish")) {
        return Err("it has a tool named finish, which would take the place of the one that ends an episode; \
                    leave it out with tools = [...] in its [[mcp]] entry"
            .to_string());
    }
    let peer = service.peer().clone();
    let cancel = Some(service.cancellation_token());
    // Watch the connection: when it ends, the process has ended (or was ended).
    PROCESSES.lock().unwrap_or_else(|p| p.into_inner()).push(Arc::clone(&process));
    let watched = Arc::clone(&process);
    tokio::spawn(async move {
        let _ = service.waiting().await;
        let was_running = watched.running.swap(false, Ordering::SeqCst);
        if was_running && !watched.stopping.load(Ordering::SeqCst) {
            let how = match watched.pid {
                Some(_) => "ended",
                None => "closed its connection",
            };
            NOTES.lock().unwrap_or_else(|p| p.into_inner()).push(format!(
                "the MCP server {} {how} during the run; calls to its tools after that were failed observations",
                watched.name
            ));
        }
    });
    Ok((Connection { peer, process, cancel, oversized }, defs))
}

/// The tools of recorded definitions, without a server (a replay): a call says so.
pub fn offline(defs: &[McpToolDef]) -> Vec<Arc<dyn Tool>> {
    defs.iter()
        .map(|def| {
            Arc::new(McpTool { def: def.clone(), connection: None, timeout: Duration::from_secs(CALL_SECS) })
                as Arc<dyn Tool>
        })
        .collect()
}

/// A server's tool.
struct McpTool {
    def: McpToolDef,
    connection: Option<Arc<Connection>>,
    timeout: Duration,
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.def.spec()
    }

    fn call<'a>(&'a self, arg: &'a str, _state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        Box::pin(async move {
            let server = &self.def.server;
            let Some(connection) = &self.connection else {
                return Observation::fail(format!(
                    "the MCP server {server} is not running (this run replays recorded calls; a new call needs --mcp {server})"
                ));
            };
            if !connection.process.running.load(Ordering::SeqCst) {
                return Observation::fail(format!(
                    "the MCP server {server} has ended ({} during the run), so {} cannot be called",
                    connection.process.ended(),
                    self.def.name
                ));
            }
            let arguments = match arguments(&self.def, arg) {
                Ok(a) => a,
                Err(why) => return Observation::fail(why),
            };
            let rt = match runtime() {
                Ok(rt) => rt,
                Err(why) => return Observation::fail(why),
            };
            let peer = connection.peer.clone();
            let params = CallToolRequestParams::new(self.def.name.clone()).with_arguments(arguments);
            let limit = self.timeout;
            let oversized = connection.oversized.clone();
            let call = rt.spawn(async move { tokio::time::timeout(limit, call_tool(&peer, params, oversized)).await });
            match call.await {
                Ok(Ok(Err(Failed::Oversized))) => Observation::fail(format!(
                    "the MCP server {server}'s answer to {} exceeded the limit of {} for one message, so it was \
                     not read",
                    self.def.name,
                    crate::userfile::size_text(stdio::MAX_MESSAGE as u64)
                )),
                Ok(Ok(Err(Failed::Service(e)))) => self.failed(connection, e),
                Ok(Ok(Ok(result))) => {
                    let text = result
                        .content
                        .iter()
                        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                        .collect::<Vec<_>>()
                        .join("\n");
                    let text = match (text.is_empty(), &result.structured_content) {
                        (true, Some(v)) => v.to_string(),
                        (true, None) => "(no text)".to_string(),
                        (false, _) => text,
                    };
                    if result.is_error == Some(true) {
                        Observation::fail(format!("{} ({server}) failed: {text}", self.def.name))
                    } else {
                        Observation::ok(text)
                    }
                }
                Ok(Err(_)) if !connection.process.running.load(Ordering::SeqCst) => Observation::fail(format!(
                    "the MCP server {server} has ended ({} during the call of {})",
                    connection.process.ended(),
                    self.def.name
                )),
                Ok(Err(_)) => Observation::fail(format!(
                    "the MCP server {server} did not answer {} within {} s",
                    self.def.name,
                    limit.as_secs()
                )),
                Err(_) => Observation::fail(format!("the MCP server {server}: the call was lost")),
            }
        })
    }
}

impl McpTool {
    /// The observation of a call the service failed.
    fn failed(&self, connection: &Connection, e: rmcp::service::ServiceError) -> Observation {
        let server = &self.def.server;
        if !connection.process.running.load(Ordering::SeqCst) || is_closed(&e, &connection.process) {
            connection.process.lost();
            return Observation::fail(format!(
                "the MCP server {server} has ended ({} during the call of {}: {})",
                connection.process.ended(),
                self.def.name,
                said(&e)
            ));
        }
        Observation::fail(format!("the MCP server {server}: {}", said(&e)))
    }
}

/// Why a call gave no result.
enum Failed {
    /// Its answer was over the size limit (a stdio server: see [`stdio`]).
    Oversized,
    Service(rmcp::service::ServiceError),
}

/// Call a tool; a stdio server's answer over the size limit fails the call as it arrives.
async fn call_tool(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    oversized: Option<Arc<stdio::Oversized>>,
) -> Result<rmcp::model::CallToolResult, Failed> {
    use rmcp::model::{CallToolRequest, ClientRequest, ServerResult};
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .map_err(Failed::Service)?;
    let id = serde_json::to_value(&handle.id).unwrap_or(Value::Null);
    let over = async {
        match &oversized {
            Some(o) => o.answered(&id).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        answer = handle.await_response() => match answer.map_err(Failed::Service)? {
            ServerResult::CallToolResult(result) => Ok(result),
            _ => Err(Failed::Service(rmcp::service::ServiceError::UnexpectedResponse)),
        },
        () = over => Err(Failed::Oversized),
    }
}

/// A call's error, plainly (a transport's error without rmcp's type names).
fn said(e: &rmcp::service::ServiceError) -> String {
    match e {
        rmcp::service::ServiceError::TransportSend(t) => http::reason(t.error.as_ref()),
        other => causes(other),
    }
}

/// Whether a call's error says the connection is gone (the server's process ended).
/// (A streamable-HTTP server's: its connection closed or refused; another HTTP error, a
/// 500 say, leaves it up.)
fn is_closed(e: &rmcp::service::ServiceError, process: &Process) -> bool {
    use rmcp::service::ServiceError::{TransportClosed, TransportSend};
    match (e, process.pid) {
        (TransportClosed, _) => true,
        (TransportSend(_), Some(_)) => true,
        (TransportSend(t), None) => http::refused(t.error.as_ref()),
        _ => false,
    }
}

/// The JSON arguments of a call written `name[arg]`: a JSON object, or for a tool with
/// one string argument the text itself; checked against the tool's schema.
fn arguments(def: &McpToolDef, arg: &str) -> Result<serde_json::Map<String, Value>, String> {
    let properties = def.schema["properties"].as_object().cloned().unwrap_or_default();
    let object = match serde_json::from_str::<Value>(arg.trim()) {
        Ok(Value::Object(map)) => map,
        _ if properties.len() == 1 && properties.values().next().is_some_and(|p| p["type"] == "string") => {
            let key = properties.keys().next().cloned().unwrap_or_default();
            serde_json::Map::from_iter([(key, Value::String(arg.trim().to_string()))])
        }
        _ => {
            return Err(format!(
                "{} takes its arguments as a JSON object, e.g. {}[{}]",
                def.name,
                def.name,
                example(&properties)
            ))
        }
    };
    check_schema(def, &properties, &object)?;
    Ok(object)
}

fn example(properties: &serde_json::Map<String, Value>) -> String {
    let fields: Vec<String> = properties
        .iter()
        .map(|(k, p)| {
            let v = match p["type"].as_str() {
                Some("number") | Some("integer") => "1".to_string(),
                Some("boolean") => "true".to_string(),
                _ => "\"...\"".to_string(),
            };
            format!("\"{k}\": {v}")
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// The arguments against the schema: required properties present, known properties of
/// their declared type, no unknown ones when the schema forbids them.
fn check_schema(
    def: &McpToolDef,
    properties: &serde_json::Map<String, Value>,
    object: &serde_json::Map<String, Value>,
) -> Result<(), String> {
    let name = &def.name;
    for required in def.schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if !object.contains_key(required) {
            return Err(format!("{name} needs \"{required}\" (its arguments: {})", example(properties)));
        }
    }
    for (key, value) in object {
        let Some(p) = properties.get(key) else {
            if def.schema["additionalProperties"] == Value::Bool(false) {
                return Err(format!("{name} has no argument \"{key}\" (its arguments: {})", example(properties)));
            }
            continue;
        };
        let fits = |t: &str| match t {
            "string" => value.is_string(),
            "number" => value.is_number(),
            "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            "null" => value.is_null(),
            _ => true,
        };
        let ok = match &p["type"] {
            Value::String(t) => fits(t),
            Value::Array(types) => types.iter().filter_map(Value::as_str).any(fits),
            _ => true,
        };
        if !ok {
            return Err(format!("{name}'s \"{key}\" is {}, not {value}", p["type"]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add() -> McpToolDef {
        McpToolDef {
            server: "t".into(),
            name: "add".into(),
            description: "Add".into(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            }),
        }
    }

    #[test]
    fn arguments_are_read_and_checked_against_the_schema() {
        let def = add();
        assert_eq!(arguments(&def, r#"{"a": 2, "b": 3}"#).unwrap().len(), 2);
        let err = arguments(&def, r#"{"a": 2}"#).unwrap_err();
        assert!(err.contains("add needs \"b\""), "{err}");
        let err = arguments(&def, r#"{"a": "two", "b": 3}"#).unwrap_err();
        assert!(err.contains("\"a\" is \"number\""), "{err}");
        let err = arguments(&def, "2 and 3").unwrap_err();
        assert!(err.contains("as a JSON object, e.g. add[{\"a\": 1, \"b\": 1}]"), "{err}");
        let one = McpToolDef {
            schema: serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
            ..add()
        };
        assert_eq!(arguments(&one, "rivers of Tessel").unwrap()["q"], "rivers of Tessel");
    }

    #[test]
    fn a_recorded_entry_hides_secret_values() {
        let mut env = BTreeMap::new();
        env.insert("API_KEY".to_string(), "sk-abcdefghijklmnopqrstuvwxyz123456".to_string());
        env.insert("MODE".to_string(), "fast".to_string());
        let cfg = McpConfig { name: "s".into(), command: "s".into(), env, ..McpConfig::default() };
        let recorded = cfg.recorded();
        assert_eq!(recorded.env["API_KEY"], "(redacted)");
        assert_eq!(recorded.env["MODE"], "fast");
        let headers = BTreeMap::from([
            ("X-Api-Key".to_string(), "abc123def456ghi789jkl".to_string()),
            ("X-Team".to_string(), "blue".to_string()),
        ]);
        let url = Some("https://mcp.example.com/mcp".to_string());
        let remote =
            McpConfig { name: "r".into(), url, headers, bearer_token: Some("tok".into()), ..McpConfig::default() };
        let recorded = remote.recorded();
        assert_eq!(
            (recorded.headers["X-Api-Key"].as_str(), recorded.headers["X-Team"].as_str()),
            ("(redacted)", "blue")
        );
        assert_eq!(recorded.bearer_token.as_deref(), Some("(redacted)"));
        assert!(!serde_json::to_string(&recorded).unwrap().contains("\"command\""), "a url server records no command");
        let named = McpConfig::from_url_flag("https://mcp.example.com/mcp").unwrap();
        assert_eq!(
            (named.name.as_str(), named.url.as_deref()),
            ("mcp.example.com", Some("https://mcp.example.com/mcp"))
        );
        let both = McpConfig { command: "x".into(), ..remote.clone() };
        assert!(both.check().unwrap_err().contains("both a command and a url"));
        let cfg = McpConfig::from_command_line("/usr/bin/my-server --fast").unwrap();
        assert_eq!((cfg.name.as_str(), cfg.args.as_slice()), ("my-server", &["--fast".to_string()][..]));
    }
}
