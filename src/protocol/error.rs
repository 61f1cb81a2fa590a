//! Why a model call failed, by kind: what sessions record, and what decides whether a
//! live run stops.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct CallError {
    pub kind: CallErrorKind,
    pub message: String,
}

impl CallError {
    pub fn new(kind: CallErrorKind, message: impl Into<String>) -> Self {
        CallError { kind, message: message.into() }
    }
}

/// What kind of failure a call met. Recorded in sessions as its snake_case name
/// (`"auth"`, `"not_found"`, ...); a name this build does not know loads as
/// [`CallErrorKind::Other`] and is written back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CallErrorKind {
    /// 401: the key was refused.
    Auth,
    /// 403: the key may not use this model or endpoint.
    Forbidden,
    /// 404: no such model or endpoint.
    NotFound,
    /// The server could not be reached at all.
    Connect,
    /// The connection failed after it was made.
    Connection,
    /// No reply in time (or 408).
    Timeout,
    BadRequest,
    Conflict,
    TooLarge,
    RateLimited,
    Overloaded,
    /// A 5xx, or an error the server reported mid-stream.
    Server,
    /// Any other non-success status.
    Http,
    /// The HTTP client could not be built from the configuration.
    Config,
    /// The reply could not be read.
    Malformed,
    /// The stream ended before the reply did.
    Truncated,
    /// The reply had no choices at all (a reply whose choices have no text is an
    /// answer, an empty one, and no error).
    Empty,
    /// The prompt does not fit the model's context window (the server said so, in one
    /// of the usual phrasings): the same prompt can never succeed, so the branch stops.
    ContextOverflow,
    /// The reply reached its completion limit before any text (a reasoning model spent
    /// it thinking): the same request cannot do better (the completion limit must be raised).
    AllThinking,
    /// A replayed run asked something the recording does not have.
    NotRecorded,
    /// The driver was halted before the call was sent.
    NotSent,
    /// An identical request in flight failed and this one shared its failure (it was
    /// not sent itself).
    Shared,
    /// The call's task panicked or was lost.
    Internal,
    /// The program is shutting down.
    Shutdown,
    /// An importer's log has no answer for the request.
    Import,
    /// The simulated model cannot answer the request.
    Sim,
    /// Any other kind, as recorded.
    Other(String),
}

impl CallErrorKind {
    const NAMED: [CallErrorKind; 26] = [
        CallErrorKind::Auth,
        CallErrorKind::Forbidden,
        CallErrorKind::NotFound,
        CallErrorKind::Connect,
        CallErrorKind::Connection,
        CallErrorKind::Timeout,
        CallErrorKind::BadRequest,
        CallErrorKind::Conflict,
        CallErrorKind::TooLarge,
        CallErrorKind::RateLimited,
        CallErrorKind::Overloaded,
        CallErrorKind::Server,
        CallErrorKind::Http,
        CallErrorKind::Config,
        CallErrorKind::Malformed,
        CallErrorKind::Truncated,
        CallErrorKind::Empty,
        CallErrorKind::ContextOverflow,
        CallErrorKind::AllThinking,
        CallErrorKind::NotRecorded,
        CallErrorKind::NotSent,
        CallErrorKind::Shared,
        CallErrorKind::Internal,
        CallErrorKind::Shutdown,
        CallErrorKind::Import,
        CallErrorKind::Sim,
    ];

    /// The name sessions record.
    pub fn as_str(&self) -> &str {
        match self {
            CallErrorKind::Auth => "auth",
            CallErrorKind::Forbidden => "forbidden",
            CallErrorKind::NotFound => "not_found",
            CallErrorKind::Connect => "connect",
            CallErrorKind::Connection => "connection",
            CallErrorKind::Timeout => "timeout",
            CallErrorKind::BadRequest => "bad_request",
            CallErrorKind::Conflict => "conflict",
            CallErrorKind::TooLarge => "too_large",
            CallErrorKind::RateLimited => "rate_limited",
            CallErrorKind::Overloaded => "overloaded",
            CallErrorKind::Server => "server",
            CallErrorKind::Http => "http",
            CallErrorKind::Config => "config",
            CallErrorKind::Malformed => "malformed",
            CallErrorKind::Truncated => "truncated",
            CallErrorKind::Empty => "empty",
            CallErrorKind::ContextOverflow => "context_overflow",
            CallErrorKind::AllThinking => "all_thinking",
            CallErrorKind::NotRecorded => "not_recorded",
            CallErrorKind::NotSent => "not_sent",
            CallErrorKind::Shared => "shared",
            CallErrorKind::Internal => "internal",
            CallErrorKind::Shutdown => "shutdown",
            CallErrorKind::Import => "import",
            CallErrorKind::Sim => "sim",
            CallErrorKind::Other(name) => name,
        }
    }

    /// The kind a recorded name stands for (a named kind, else `Other`).
    pub fn from_name(name: &str) -> CallErrorKind {
        Self::NAMED.iter().find(|k| k.as_str() == name).cloned().unwrap_or_else(|| CallErrorKind::Other(name.into()))
    }

    /// Every later call would fail the same way, so a live run stops rather than fail
    /// them all: the key was refused, the model or endpoint does not exist, or the
    /// server cannot be reached — no connection could be made (`connect`), or every one
    /// made was closed before the reply (`connection`: a server killed mid-reply, a proxy
    /// that accepts and then hangs up). Both come after every retry failed. A timeout is
    /// not fatal: a slow model is not a dead one, and the next (shorter) call may answer.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            CallErrorKind::Auth
                | CallErrorKind::Forbidden
                | CallErrorKind::NotFound
                | CallErrorKind::Connect
                | CallErrorKind::Connection
        )
    }

    /// The server is out of reach (as opposed to refusing the call): no connection, or
    /// none that lasted to the reply.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, CallErrorKind::Connect | CallErrorKind::Connection)
    }
}

impl std::fmt::Display for CallErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CallErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CallErrorKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Ok(CallErrorKind::from_name(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_error_kinds_keep_their_recorded_names() {
        for kind in CallErrorKind::NAMED.iter() {
            let json = serde_json::to_string(kind).unwrap();
            assert_eq!(json, format!("\"{kind}\""));
            assert_eq!(&serde_json::from_str::<CallErrorKind>(&json).unwrap(), kind, "{json}");
            assert!(!matches!(kind, CallErrorKind::Other(_)));
        }
        let e = CallError::new(CallErrorKind::NotFound, "HTTP 404");
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, r#"{"kind":"not_found","message":"HTTP 404"}"#);
        assert_eq!(serde_json::from_str::<CallError>(&json).unwrap(), e);
        assert_eq!(e.to_string(), "not_found: HTTP 404");
    }

    #[test]
    fn an_unknown_recorded_kind_loads_and_is_written_back_unchanged() {
        let json = r#"{"kind":"quota_exhausted_v2","message":"m"}"#;
        let e: CallError = serde_json::from_str(json).unwrap();
        assert_eq!(e.kind, CallErrorKind::Other("quota_exhausted_v2".into()));
        assert_eq!(e.kind.to_string(), "quota_exhausted_v2");
        assert!(!e.kind.is_fatal());
        assert_eq!(serde_json::to_string(&e).unwrap(), json);
    }

    #[test]
    fn only_auth_forbidden_not_found_and_a_lost_connection_are_fatal() {
        let fatal: Vec<&str> = CallErrorKind::NAMED.iter().filter(|k| k.is_fatal()).map(|k| k.as_str()).collect();
        assert_eq!(fatal, ["auth", "forbidden", "not_found", "connect", "connection"]);
        let unreachable: Vec<&str> =
            CallErrorKind::NAMED.iter().filter(|k| k.is_unreachable()).map(|k| k.as_str()).collect();
        assert_eq!(unreachable, ["connect", "connection"]);
        assert!(!CallErrorKind::Timeout.is_fatal(), "a slow model is not a dead one");
        assert!(!CallErrorKind::from_name("test").is_fatal());
        assert_eq!(CallErrorKind::from_name("auth"), CallErrorKind::Auth);
    }
}
