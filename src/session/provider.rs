//! The `replay` provider: answers requests with the replies recorded in session files, with no
//! network. A request that was never recorded fails with a clear error, so a
//! changed prompt or parameter shows up at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::engine::{CallError, CallErrorKind, Input, LlmRequest, LlmResponse};
use crate::llm::{BoxFuture, Provider};
use crate::session::{Session, SessionError};

pub struct ReplayProvider {
    model: String,
    simulated: bool,
    replies: HashMap<String, LlmResponse>,
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
        let mut provider = ReplayProvider { model: String::new(), simulated: false, replies: HashMap::new() };
        for file in &files {
            let session = Session::load(file)?;
            if provider.model.is_empty() {
                provider.model = session.header.model.clone();
                provider.simulated = session.header.simulated;
            }
            for (input, request) in session.inputs() {
                let (Input::LlmReply(reply), Some(request)) = (input, request) else { continue };
                if let Ok(r) = &reply.result {
                    let mut r = r.clone();
                    r.cached = false;
                    provider.replies.entry(request.cache_key(&session.header.model)).or_insert(r);
                }
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

    pub fn len(&self) -> usize {
        self.replies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.replies.is_empty()
    }
}

impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn simulated(&self) -> bool {
        self.simulated
    }

    fn complete<'a>(&'a self, request: &'a LlmRequest) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(async move {
            self.replies.get(&request.cache_key(&self.model)).cloned().ok_or_else(|| CallError {
                kind: CallErrorKind::NotRecorded,
                message: format!(
                    "no recorded reply for this {} request (the prompt or parameters differ from the recording)",
                    request.purpose.label()
                ),
            })
        })
    }
}
