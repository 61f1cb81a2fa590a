//! `serve`'s connections: its own accept loop over hyper's HTTP/1 connections, so that
//! clients that are slow or never finish cannot hold the server.
//!
//! * **Time limits.** A request's head must arrive within [`HEADER_SECS`] of the
//!   connection's start or of the previous answer (hyper's header read timeout, which so
//!   also ends an idle kept-alive connection); its body within [`BODY_SECS`] (read by the
//!   handler, after the token is checked: see `super::chat`).
//! * **A cap on open connections.** At the cap, a new connection takes the place of the
//!   oldest one with no request in flight (one still sending its head, or idle), which is
//!   closed; when every connection has a request in flight it is answered 503 and closed.
//!   So connections that send half a request, however many, never lock out a client.
//! * **Shutdown.** On the first signal the server stops accepting, closes every
//!   connection with no request in flight at once, and lets those with one finish (their
//!   searches are stopped by the signal and close their sessions), up to [`DRAIN_SECS`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::Router;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

/// How long a request's head may take to arrive (and a kept-alive connection may sit idle).
pub const HEADER_SECS: u64 = 10;
/// How long a request's body may take to arrive once its head has.
pub const BODY_SECS: u64 = 15;
/// How long connections with a request in flight may take to finish after a signal.
pub const DRAIN_SECS: u64 = 15;
/// File descriptors kept for everything but client connections (sessions, upstream
/// connections, MCP servers, the cache).
const RESERVED_FDS: u64 = 256;

/// The cap on open connections when none is given: what the process's open-file limit
/// leaves after [`RESERVED_FDS`], from 16 to 4096.
pub fn default_max_connections() -> usize {
    let soft = open_file_limit().unwrap_or(1024);
    soft.saturating_sub(RESERVED_FDS).clamp(16, 4096) as usize
}

#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    #[allow(clippy::useless_conversion)] // rlim_t is u64 on Linux, not everywhere.
    let soft = u64::try_from(limit.rlim_cur).unwrap_or(u64::MAX);
    (rc == 0).then_some(soft)
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// One open connection as the accept loop tracks it.
struct Tracked {
    /// Requests in flight (from the handler's start to the end of its response body).
    busy: Arc<AtomicUsize>,
    /// Told to close the connection now.
    close: Arc<Notify>,
    accepted: Instant,
}

type Table = Arc<Mutex<HashMap<u64, Tracked>>>;

fn lock(table: &Table) -> std::sync::MutexGuard<'_, HashMap<u64, Tracked>> {
    table.lock().unwrap_or_else(|p| p.into_inner())
}

/// Close the oldest connection with no request in flight; false if every one has one.
fn evict_one(table: &Table) -> bool {
    let table = lock(table);
    let oldest = table.values().filter(|c| c.busy.load(Ordering::SeqCst) == 0).min_by_key(|c| c.accepted);
    match oldest {
        Some(c) => {
            c.close.notify_one();
            true
        }
        None => false,
    }
}

/// Serve `router` on `listener` with at most `max_connections` open, until `shutdown`
/// resolves; then close the idle connections and wait (up to [`DRAIN_SECS`]) for the rest.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    max_connections: usize,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let table: Table = Arc::default();
    let (stop_tx, stop_rx) = watch::channel(false);
    let next = AtomicU64::new(0);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of file descriptors, say: try again shortly, closing an idle connection.
                    evict_one(&table);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let open = lock(&table).len();
        if open >= max_connections.max(1) && !evict_one(&table) {
            tokio::spawn(refuse(stream));
            continue;
        }
        let id = next.fetch_add(1, Ordering::Relaxed);
        let tracked = Tracked { busy: Arc::default(), close: Arc::default(), accepted: Instant::now() };
        let (busy, close) = (Arc::clone(&tracked.busy), Arc::clone(&tracked.close));
        lock(&table).insert(id, tracked);
        let (table, router, stop) = (Arc::clone(&table), router.clone(), stop_rx.clone());
        tokio::spawn(async move {
            connection(stream, router, busy, close, stop).await;
            lock(&table).remove(&id);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let deadline = Instant::now() + Duration::from_secs(DRAIN_SECS);
    while !lock(&table).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A connection over the cap with every other one busy: a 503 and close.
async fn refuse(mut stream: TcpStream) {
    let body = r#"{"error":{"message":"the server has too many open connections; try again shortly","type":"server_error","code":"too_many_connections","param":null}}"#;
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let write = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), write).await;
}

/// Counts a request in flight while it lives.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn new(busy: &Arc<AtomicUsize>) -> InFlight {
        busy.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(busy))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn connection(
    stream: TcpStream,
    router: Router,
    busy: Arc<AtomicUsize>,
    close: Arc<Notify>,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let counted = Arc::clone(&busy);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        // In flight from here until the response body has been sent (a stream included).
        let guard = InFlight::new(&counted);
        let router = router.clone();
        async move {
            let response = router.oneshot(request.map(Body::new)).await?;
            Ok::<_, std::convert::Infallible>(response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    let _kept = &guard;
                    frame
                }))
            }))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(Duration::from_secs(HEADER_SECS)).keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            () = close.notified() => return,
            changed = stop.changed(), if !draining => {
                if changed.is_err() || busy.load(Ordering::SeqCst) == 0 {
                    return;
                }
                // A request in flight: answer it, then close.
                conn.as_mut().graceful_shutdown();
                draining = true;
            }
        }
    }
}
