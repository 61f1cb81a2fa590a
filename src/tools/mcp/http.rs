//! Streamable-HTTP MCP servers (`url = "http://..."`): rmcp's streamable-HTTP transport
//! over the project's own reqwest 0.12 client. rmcp ships a client for reqwest 0.13
//! only, so [`HttpClient`] implements rmcp's `StreamableHttpClient` trait here: a POST
//! per message (answered by JSON, an SSE stream or 202), a GET for the server's own
//! event stream, a DELETE to end the session. Every failure is an rmcp transport error
//! the caller turns into one line naming the server.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    HttpStatusError, SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use rmcp::transport::StreamableHttpClientTransport;
use sse_stream::{Sse, SseStream};

/// The most of a JSON answer read (as rmcp's own clients: 16 MiB).
pub const MAX_JSON: usize = 16 * 1024 * 1024;
/// The most of an error answer kept for the message.
const MAX_ERROR_TEXT: usize = 300;
/// How long reaching the server may take (the start-up and each call have their own limits).
const CONNECT_SECS: u64 = 10;
/// Headers the transport sets itself; an entry's `headers` may not name them.
pub const RESERVED: &[&str] =
    &["accept", "content-type", "authorization", "mcp-session-id", "mcp-protocol-version", "last-event-id"];

type Error = StreamableHttpError<reqwest::Error>;

/// What went wrong with a request, plainly: the HTTP client's own causes (a refused
/// connection, a timeout), which rmcp's error does not chain.
pub fn reason(error: &(dyn std::error::Error + 'static)) -> String {
    match error.downcast_ref::<Error>() {
        // Its own first line only repeats the URL.
        Some(StreamableHttpError::Client(e)) => {
            std::error::Error::source(e).map_or_else(|| super::causes(e), super::causes)
        }
        _ => super::causes(error),
    }
}

/// Whether a request's error says the server is gone (its connection refused or closed).
pub fn refused(error: &(dyn std::error::Error + 'static)) -> bool {
    match error.downcast_ref::<Error>() {
        Some(StreamableHttpError::Client(e)) => e.is_connect(),
        Some(StreamableHttpError::TransportChannelClosed | StreamableHttpError::UnexpectedEndOfStream) => true,
        _ => false,
    }
}

/// Our reqwest client, as rmcp's streamable-HTTP transport takes it.
#[derive(Clone)]
pub struct HttpClient(reqwest::Client);

impl HttpClient {
    /// A client for `url`: a server on this machine is reached directly, never through a
    /// proxy, and redirects are followed only as [`redirects`] says.
    pub fn new(url: &str) -> Result<HttpClient, String> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(CONNECT_SECS))
            .redirect(redirects())
            .user_agent(concat!("thoughtscope/", env!("CARGO_PKG_VERSION")));
        if is_loopback(url) {
            builder = builder.no_proxy();
        }
        builder.build().map(HttpClient).map_err(|e| format!("cannot make an HTTP client: {e}"))
    }
}

/// Most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;

/// Which redirects an MCP request follows: only to the same origin (scheme, host and
/// port) and only those that keep the method and body (307, 308). Every request carries
/// the entry's headers and bearer token, which reqwest would send on to another origin
/// (it drops only `Authorization`); any other redirect is not followed, and its answer
/// is reported as [`redirect_refused`] says.
fn redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same = attempt.previous().first().is_some_and(|first| same_origin(first, attempt.url()));
        let keeps_body = matches!(attempt.status(), StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT);
        if same && keeps_body && attempt.previous().len() <= MAX_REDIRECTS {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme() && a.host() == b.host() && a.port_or_known_default() == b.port_or_known_default()
}

/// The one line for a redirect that was not followed (see [`redirects`]).
fn redirect_refused(response: &reqwest::Response) -> String {
    let status = response.status();
    let location =
        response.headers().get(reqwest::header::LOCATION).map(|v| String::from_utf8_lossy(v.as_bytes()).to_string());
    let target = location.as_deref().and_then(|l| response.url().join(l).ok());
    let shown = |text: &str| crate::safe_text::clip(&crate::safe_text::one_line(text), 200);
    match target {
        Some(to) if !same_origin(response.url(), &to) => format!(
            "HTTP {status}: it redirects to {}, another origin, and MCP requests are not sent to another origin \
             (they carry this entry's headers and token); if you trust that server, make it the entry's url",
            shown(to.as_str())
        ),
        Some(to) => format!(
            "HTTP {status}: it redirects to {} in a way that would drop the request's body (only 307 and 308 are \
             followed); make that the entry's url",
            shown(to.as_str())
        ),
        None => format!("HTTP {status}: a redirect without a usable Location; check the entry's url"),
    }
}

/// Whether `url`'s host is this machine.
fn is_loopback(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else { return false };
    let host = url.host_str().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Check an entry's `url` and `headers`, or say what is wrong in one line.
pub fn check(url: &str, headers: &BTreeMap<String, String>) -> Result<(), String> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
        _ => return Err(format!("url {url:?} is not an http:// or https:// URL")),
    }
    for (name, value) in headers {
        if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
            let hint = if name.eq_ignore_ascii_case("authorization") { " (use bearer_token)" } else { "" };
            return Err(format!("header {name} is set by the transport itself{hint}"));
        }
        HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header name {name:?} is not a valid HTTP header name"))?;
        HeaderValue::from_str(value).map_err(|_| format!("header {name}'s value is not a valid HTTP header value"))?;
    }
    Ok(())
}

/// rmcp's transport to `url` with `headers` and a bearer `token`.
pub fn transport(
    url: &str,
    headers: &BTreeMap<String, String>,
    token: Option<String>,
) -> Result<StreamableHttpClientTransport<HttpClient>, String> {
    check(url, headers)?;
    let mut custom = HashMap::new();
    for (name, value) in headers {
        // Both were checked above.
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            custom.insert(n, v);
        }
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    config.retry_config = Arc::new(FewRetries);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    Ok(StreamableHttpClientTransport::with_client(HttpClient::new(url)?, config))
}

/// How often a broken event stream is resumed: twice, 300 ms apart, so a server that went
/// away fails its pending call soon rather than at the call's time limit (rmcp's default
/// retries without end).
#[derive(Debug)]
struct FewRetries;

impl SseRetryPolicy for FewRetries {
    fn retry(&self, times: usize) -> Option<Duration> {
        (times < 2).then_some(Duration::from_millis(300))
    }
}

/// The request with the headers every MCP request carries.
fn request(
    builder: reqwest::RequestBuilder,
    session_id: Option<&str>,
    token: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    let mut builder = builder.header(ACCEPT, format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"));
    if let Some(id) = session_id {
        builder = builder.header(HEADER_SESSION_ID, id);
    }
    if let Some(token) = token {
        builder = builder.bearer_auth(token);
    }
    // The transport adds MCP-Protocol-Version here after the handshake; the entry's
    // own headers were checked against the reserved ones.
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    builder
}

/// Whether the response's content type is `mime`.
fn is(response: &reqwest::Response, mime: &str) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(mime))
}

/// Up to `limit` bytes of the body (`Err` with what was read past it: too large).
async fn read(response: reqwest::Response, limit: usize) -> Result<Result<Vec<u8>, Vec<u8>>, reqwest::Error> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        body.extend_from_slice(&chunk?);
        if body.len() > limit {
            return Ok(Err(body));
        }
    }
    Ok(Ok(body))
}

/// The error of a response that is not a success: a JSON-RPC error it carries (the
/// caller answers with it), or the status with the start of its text.
async fn failure(response: reqwest::Response) -> Result<ServerJsonRpcMessage, Error> {
    let status = response.status();
    if status.is_redirection() {
        return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(redirect_refused(&response))));
    }
    let retry_after = response.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).map(str::to_string);
    let json = is(&response, JSON_MIME_TYPE);
    let body = match read(response, MAX_JSON).await {
        Ok(Ok(body)) | Ok(Err(body)) => body,
        Err(_) => Vec::new(),
    };
    if json {
        if let Ok(message @ JsonRpcMessage::Error(_)) = serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
            return Ok(message);
        }
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return Err(HttpStatusError::new(status.as_u16(), retry_after).into());
    }
    let text = String::from_utf8_lossy(&body);
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(MAX_ERROR_TEXT).collect();
    let hint = match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => " (check the entry's bearer_token and headers)",
        _ => "",
    };
    let said = if text.is_empty() { String::new() } else { format!(": {text}") };
    Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}{hint}{said}"))))
}

/// An SSE stream of a response's body.
fn events(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(response.bytes_stream()).boxed()
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let with_session = session_id.is_some();
        let builder = request(self.0.post(uri.as_ref()), session_id.as_deref(), token, headers);
        let response = builder.json(&message).send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && with_session {
            // The transport starts a new session.
            return Err(StreamableHttpError::SessionExpired);
        }
        let session = response.headers().get(HEADER_SESSION_ID).and_then(|v| v.to_str().ok()).map(str::to_string);
        if !status.is_success() {
            return failure(response).await.map(|m| StreamableHttpPostResponse::Json(m, session));
        }
        // A notification or a reply awaits no answer: any success will do.
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        if is(&response, EVENT_STREAM_MIME_TYPE) {
            return Ok(StreamableHttpPostResponse::Sse(events(response), session));
        }
        if !is(&response, JSON_MIME_TYPE) {
            if awaits_nothing {
                return Ok(StreamableHttpPostResponse::Accepted);
            }
            let ct = response.headers().get(CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).to_string());
            return Err(StreamableHttpError::UnexpectedContentType(ct));
        }
        let body = match read(response, MAX_JSON).await.map_err(StreamableHttpError::Client)? {
            Ok(body) => body,
            Err(_) => return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: MAX_JSON }),
        };
        if body.is_empty() && awaits_nothing {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
            Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
            Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
            Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                "its answer is not a JSON-RPC message ({e}): {}",
                String::from_utf8_lossy(&body).chars().take(MAX_ERROR_TEXT).collect::<String>()
            )))),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let builder = request(self.0.delete(uri.as_ref()), Some(&session_id), token, headers);
        let response = builder.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED || response.status().is_redirection() {
            // A server that keeps no sessions to end (or sends the end elsewhere: not followed).
            return Ok(());
        }
        response.error_for_status().map(|_| ()).map_err(StreamableHttpError::Client)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let mut builder = request(self.0.get(uri.as_ref()), session_id.as_deref(), token, headers);
        if let Some(id) = last_event_id {
            builder = builder.header(HEADER_LAST_EVENT_ID, id);
        }
        let response = builder.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !response.status().is_success() {
            return Err(match failure(response).await {
                Ok(message) => StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!(
                    "its event stream was refused: {}",
                    serde_json::to_string(&message).unwrap_or_default()
                ))),
                Err(e) => e,
            });
        }
        if !is(&response, EVENT_STREAM_MIME_TYPE) && !is(&response, JSON_MIME_TYPE) {
            let ct = response.headers().get(CONTENT_TYPE).map(|v| String::from_utf8_lossy(v.as_bytes()).to_string());
            return Err(StreamableHttpError::UnexpectedContentType(ct));
        }
        Ok(events(response))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_headers_are_checked_in_one_line() {
        let none = BTreeMap::new();
        assert!(check("http://127.0.0.1:8080/mcp", &none).is_ok());
        assert!(check("ftp://x/mcp", &none).unwrap_err().contains("not an http:// or https:// URL"));
        assert!(check("127.0.0.1:8080", &none).is_err());
        let auth = BTreeMap::from([("Authorization".to_string(), "Bearer x".to_string())]);
        assert!(check("https://x/mcp", &auth).unwrap_err().contains("use bearer_token"));
        let bad = BTreeMap::from([("X Team".to_string(), "blue".to_string())]);
        assert!(check("https://x/mcp", &bad).unwrap_err().contains("not a valid HTTP header name"));
        assert!(is_loopback("http://127.0.0.1:9/mcp") && is_loopback("http://localhost/mcp"));
        assert!(!is_loopback("https://example.com/mcp"));
    }
}
