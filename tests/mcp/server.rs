//! A small MCP server over stdio for the tests, on rmcp's server side: `add` (two
//! numbers), `slow` (answers after `ms` milliseconds), `fail` (always a tool error) and
//! `die` (the process exits without answering, as a crashing server does), `big` (a text
//! of that many bytes) and `get-sum` (add, under a name with a hyphen, as the reference
//! "everything" server names its tools).
//! Each call is appended to the file in `$MCP_TEST_LOG`, if set, with the environment
//! variables it sees whose names start with `MCP_` or end in `_KEY`; so is its start,
//! with its process id. With `--stay` it does not exit when its stdin closes (as a
//! badly behaved server might), so only a signal ends it (or two minutes).
//!
//! With `--http` it serves the same tools over streamable HTTP instead (rmcp's server
//! mounted in axum at `/mcp`), on 127.0.0.1 and a port the system picks, and prints its
//! URL as its first line. `--token T` makes it refuse (401) a request without
//! `Authorization: Bearer T`; `--header NAME=VALUE` one without that header.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddRequest {
    #[schemars(description = "the first number")]
    a: f64,
    #[schemars(description = "the second number")]
    b: f64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SlowRequest {
    #[schemars(description = "how long to wait, in milliseconds")]
    ms: u64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct FailRequest {
    #[schemars(description = "what to fail with")]
    reason: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct DieRequest {
    #[schemars(description = "the exit code")]
    code: i32,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct BigRequest {
    #[schemars(description = "how many bytes of text")]
    bytes: usize,
}

#[derive(Debug, Clone)]
struct TestTools;

fn log(call: &str) {
    let Ok(path) = std::env::var("MCP_TEST_LOG") else { return };
    let mut seen: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("MCP_") || k.ends_with("_KEY"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    seen.sort();
    let line = format!("{call} env: {}\n", seen.join(" "));
    let _ = std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| {
        use std::io::Write;
        f.write_all(line.as_bytes())
    });
}

#[tool_router]
impl TestTools {
    #[tool(description = "Add two numbers")]
    fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        log(&format!("add {a} {b}"));
        format!("{}", a + b)
    }

    #[tool(description = "Wait, then say done")]
    async fn slow(&self, Parameters(SlowRequest { ms }): Parameters<SlowRequest>) -> String {
        log(&format!("slow {ms}"));
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        format!("done after {ms} ms")
    }

    #[tool(description = "Always fails")]
    fn fail(&self, Parameters(FailRequest { reason }): Parameters<FailRequest>) -> Result<CallToolResult, ErrorData> {
        log(&format!("fail {reason}"));
        Ok(CallToolResult::error(vec![ContentBlock::text(format!("failed: {reason}"))]))
    }

    #[tool(description = "Answer with that many bytes of text")]
    fn big(&self, Parameters(BigRequest { bytes }): Parameters<BigRequest>) -> String {
        log(&format!("big {bytes}"));
        "x".repeat(bytes)
    }

    #[tool(name = "get-sum", description = "Add two numbers (a hyphenated name)")]
    fn get_sum(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        log(&format!("get-sum {a} {b}"));
        format!("{}", a + b)
    }

    #[tool(description = "Exit the server's process at once")]
    fn die(&self, Parameters(DieRequest { code }): Parameters<DieRequest>) -> String {
        log(&format!("die {code}"));
        std::process::exit(code)
    }
}

#[tool_handler]
impl ServerHandler for TestTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

/// The value after `flag` on the command line.
fn option(flag: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned())
}

/// Serve over streamable HTTP until killed.
async fn serve_http() {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        || Ok(TestTools),
        std::sync::Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let token = option("--token").map(|t| format!("Bearer {t}"));
    let header = option("--header").and_then(|h| h.split_once('=').map(|(n, v)| (n.to_string(), v.to_string())));
    let guard = move |request: axum::extract::Request, next: axum::middleware::Next| {
        let (token, header) = (token.clone(), header.clone());
        async move {
            let allowed = {
                let headers = request.headers();
                let has = |name: &str, want: &str| headers.get(name).is_some_and(|v| v.as_bytes() == want.as_bytes());
                token.as_deref().is_none_or(|t| has("authorization", t))
                    && header.as_ref().is_none_or(|(n, v)| has(n, v))
            };
            if !allowed {
                log("refused a request without its token or header");
                return axum::response::IntoResponse::into_response((
                    axum::http::StatusCode::UNAUTHORIZED,
                    "a bearer token and the team header are needed",
                ));
            }
            next.run(request).await
        }
    };
    let app = axum::Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn(guard));
    let listener = match tokio::net::TcpListener::bind("127.0.0.1:0").await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("test-mcp-server: cannot listen on 127.0.0.1: {e}");
            std::process::exit(1);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    println!("http://127.0.0.1:{port}/mcp");
    log(&format!("start pid {} http port {port}", std::process::id()));
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("test-mcp-server: {e}");
        std::process::exit(1);
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--die-at-start") {
        std::process::exit(3);
    }
    if std::env::args().any(|a| a == "--http") {
        return serve_http().await;
    }
    let server = match TestTools.serve(rmcp::transport::stdio()).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("test-mcp-server: {e}");
            std::process::exit(1);
        }
    };
    log(&format!("start pid {}", std::process::id()));
    let _ = server.waiting().await;
    if std::env::args().any(|a| a == "--stay") {
        log("stdin closed, staying");
        tokio::time::sleep(std::time::Duration::from_secs(120)).await;
    }
}
