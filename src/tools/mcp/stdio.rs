//! Stdio MCP servers: the process, started so that it ends with the run, and the
//! transport over its stdin and stdout (rmcp's line transport), watched for messages over
//! the size limit.
//!
//! * **The process ends with the run.** On Linux the server gets a parent-death signal
//!   (`PR_SET_PDEATHSIG`, SIGKILL): a run killed with `kill -9` takes its servers with it.
//!   It is also the leader of a process group of its own, so the run's end (or a signal to
//!   the run) ends the server's own children with it ([`super::end_servers`]), and a Ctrl-C
//!   in the terminal reaches the run, which ends its servers, rather than each server.
//! * **A message over the limit is named at once.** rmcp drops a line longer than its
//!   limit without a word, so the call it answered would wait for its time limit. The
//!   server's stdout is read through [`Watched`], which sees a line pass the limit as it
//!   comes, reads the JSON-RPC id it answers from the line's start (or its end, where some
//!   SDKs write the id last) and tells the waiting call, which fails at once naming the limit.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

/// The largest message read from a stdio server: 16 MiB, the HTTP transport's limit too.
pub const MAX_MESSAGE: usize = super::http::MAX_JSON;

/// How much of a line's start and end is kept to find its id.
const KEEP: usize = 512;

/// The messages a server sent over the limit: the ids they answered (`None`: an id that
/// could not be read), in order.
#[derive(Debug)]
pub struct Oversized {
    tx: watch::Sender<Vec<Option<Value>>>,
}

impl Oversized {
    pub fn new() -> Arc<Oversized> {
        Arc::new(Oversized { tx: watch::channel(Vec::new()).0 })
    }

    fn report(&self, id: Option<Value>) {
        self.tx.send_modify(|ids| ids.push(id));
    }

    /// Wait until a message over the limit answers `id` (or one whose id could not be read
    /// arrives while this call waits).
    pub async fn answered(&self, id: &Value) {
        let mut rx = self.tx.subscribe();
        let seen = rx.borrow_and_update().len();
        loop {
            if rx.changed().await.is_err() {
                return std::future::pending().await;
            }
            let ids = rx.borrow_and_update();
            if ids.iter().skip(seen).any(|i| i.as_ref().is_none_or(|i| i == id)) {
                return;
            }
        }
    }
}

/// A server's stdout, watched for lines longer than `limit` (see the module docs).
pub struct Watched<R> {
    inner: R,
    limit: usize,
    oversized: Arc<Oversized>,
    /// Bytes of the current line so far.
    length: usize,
    head: Vec<u8>,
    /// The last [`KEEP`] bytes of the current line (a ring: `tail_at` is the oldest).
    tail: Vec<u8>,
    tail_at: usize,
    /// The current line passed the limit; `reported` once its id was said.
    over: bool,
    reported: bool,
}

impl<R> Watched<R> {
    pub fn new(inner: R, limit: usize, oversized: Arc<Oversized>) -> Watched<R> {
        Watched {
            inner,
            limit,
            oversized,
            length: 0,
            head: Vec::new(),
            tail: Vec::new(),
            tail_at: 0,
            over: false,
            reported: false,
        }
    }

    /// Take in bytes just read.
    fn see(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|&b| b == b'\n');
            let part = &bytes[..end.unwrap_or(bytes.len())];
            self.length += part.len();
            if self.head.len() < KEEP {
                let room = KEEP - self.head.len();
                self.head.extend_from_slice(&part[..part.len().min(room)]);
            }
            for &b in part.iter().skip(part.len().saturating_sub(KEEP)) {
                self.push_tail(b);
            }
            if self.length > self.limit && !self.over {
                self.over = true;
                // The id at the line's start (rmcp, Python): said before the rest arrives.
                if let Some(id) = id_at_start(&self.head) {
                    self.oversized.report(Some(id));
                    self.reported = true;
                }
            }
            match end {
                Some(at) => {
                    if self.over && !self.reported {
                        let tail = self.tail_bytes();
                        self.oversized.report(id_at_end(&tail));
                    }
                    self.length = 0;
                    self.head.clear();
                    self.tail.clear();
                    self.tail_at = 0;
                    self.over = false;
                    self.reported = false;
                    bytes = &bytes[at + 1..];
                }
                None => bytes = &[],
            }
        }
    }

    fn push_tail(&mut self, b: u8) {
        if self.tail.len() < KEEP {
            self.tail.push(b);
        } else {
            self.tail[self.tail_at] = b;
            self.tail_at = (self.tail_at + 1) % KEEP;
        }
    }

    fn tail_bytes(&self) -> Vec<u8> {
        let mut out = self.tail[self.tail_at..].to_vec();
        out.extend_from_slice(&self.tail[..self.tail_at]);
        out
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Watched<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let new = buf.filled()[before..].to_vec();
            self.see(&new);
        }
        polled
    }
}

/// The id of a JSON-RPC message from the start of its line: the value of the top-level
/// key `"id"` if it comes before anything too long to keep (rmcp and Python write it early).
fn id_at_start(head: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(head);
    let mut depth = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            '"' => {
                // A string: a key at depth 1 named "id" is followed by its value.
                let start = i + 1;
                let mut end = None;
                let mut escaped = false;
                for (j, d) in chars.by_ref() {
                    match d {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        '"' => {
                            end = Some(j);
                            break;
                        }
                        _ => {}
                    }
                }
                let end = end?;
                if depth == 1 && &text[start..end] == "id" {
                    let rest = text[end + 1..].trim_start().strip_prefix(':')?;
                    return first_value(rest);
                }
            }
            _ => {}
        }
    }
    None
}

/// The id of a JSON-RPC message from the end of its line, where it is the last key
/// (`..., "id": 7}`), as the TypeScript SDK writes it.
fn id_at_end(tail: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(tail);
    let text = text.trim_end().strip_suffix('}')?.trim_end();
    let key = text.rfind("\"id\"")?;
    let rest = text[key + 4..].trim_start().strip_prefix(':')?.trim();
    let value: Value = serde_json::from_str(rest).ok()?;
    (value.is_number() || value.is_string()).then_some(value)
}

/// The number or string at the start of `text`.
fn first_value(text: &str) -> Option<Value> {
    let mut stream = serde_json::Deserializer::from_str(text.trim_start()).into_iter::<Value>();
    match stream.next() {
        Some(Ok(v)) if v.is_number() || v.is_string() => Some(v),
        _ => {
            // A value cut short by the end of what was kept: read a number up to its end.
            let number: String = text.trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            serde_json::from_str(&number).ok().filter(Value::is_number)
        }
    }
}

/// Make `command` start a server that ends with this process (Linux: a parent-death
/// signal) and leads a process group of its own (Unix).
pub fn tie_to_this_process(command: &mut tokio::process::Command) {
    #[cfg(unix)]
    {
        #[cfg(target_os = "linux")]
        // SAFETY: getpid is async-signal-safe; called before the fork.
        let parent = unsafe { libc::getpid() };
        // SAFETY: between fork and exec the closure calls only async-signal-safe functions
        // (setpgid, prctl, getppid) and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::setpgid(0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                #[cfg(target_os = "linux")]
                {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // The parent may have died before the signal was asked for.
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                }
                Ok(())
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_read_from_either_end_of_a_line() {
        let head = br#"{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"aaaa"#;
        assert_eq!(id_at_start(head), Some(json!(17)));
        let head = br#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"{\"id\": 3} aaaa"#;
        assert_eq!(id_at_start(head), None, "an id inside the result is not the message's");
        assert_eq!(id_at_start(br#"{"id":"req-9","result":{"#), Some(json!("req-9")));
        assert_eq!(id_at_start(br#"{"jsonrpc":"2.0","id":12"#), Some(json!(12)), "cut after the number");
        assert_eq!(id_at_end(br#"aaaa"}]},"jsonrpc":"2.0","id":5}"#), Some(json!(5)));
        assert_eq!(id_at_end(br#"aaaa"}]},"jsonrpc":"2.0","id": "x-1" }"#), Some(json!("x-1")));
        assert_eq!(id_at_end(br#"aaaa"}]}}"#), None);
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_told_with_its_id_as_it_passes_the_limit() {
        use tokio::io::AsyncReadExt;
        let oversized = Oversized::new();
        let big = format!("{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"text\":\"{}\"}}}}\n", "a".repeat(5000));
        let small = "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n";
        let last = format!("{{\"result\":{{\"text\":\"{}\"}},\"jsonrpc\":\"2.0\",\"id\":6}}\n", "b".repeat(5000));
        let input = format!("{small}{big}{small}{last}");
        let mut watched = Watched::new(input.as_bytes(), 1000, Arc::clone(&oversized));
        let waiting = {
            let o = Arc::clone(&oversized);
            tokio::spawn(async move { o.answered(&json!(6)).await })
        };
        tokio::task::yield_now().await;
        let mut out = Vec::new();
        watched.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, input.as_bytes(), "the bytes pass through unchanged");
        assert_eq!(*oversized.tx.borrow(), vec![Some(json!(4)), Some(json!(6))]);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await.expect("told").unwrap();
    }
}
