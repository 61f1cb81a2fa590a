//! A small MCP server over stdio for the tests, on rmcp's server side: `add` (two
//! numbers), `slow` (answers after `ms` milliseconds) and `fail` (always a tool error).
//! Each call is appended to the file in `$MCP_TEST_LOG`, if set, with the environment
//! variables it sees whose names start with `MCP_` or end in `_KEY`.

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
}

#[tool_handler]
impl ServerHandler for TestTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--die-at-start") {
        std::process::exit(3);
    }
    let server = match TestTools.serve(rmcp::transport::stdio()).await {
        Ok(server) => server,
        Err(e) => {
            eprintln!("test-mcp-server: {e}");
            std::process::exit(1);
        }
    };
    let _ = server.waiting().await;
}
