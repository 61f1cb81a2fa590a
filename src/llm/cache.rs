//! Identical requests are answered once: duplicate value prompts inside a search cost
//! one call, like the reference implementation's value cache. The key covers
//! everything that changes what a model would say (model, messages, n, sampling
//! parameters, and a nonce when a person asks for a fresh answer). With `--cache
//! disk` replies are also kept as files under the user cache directory, so a second
//! run of the same search costs no calls.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::rng::stable_hash;
use crate::engine::{LlmRequest, LlmResponse};

/// Where replies are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// For the run only.
    #[default]
    Memory,
    /// Also on disk under the user cache directory, across runs.
    Disk,
}

/// `<cache dir>/thoughtscope/responses` (`$XDG_CACHE_HOME` on Linux).
pub fn default_disk_dir() -> Option<PathBuf> {
    directories::BaseDirs::new().map(|d| d.cache_dir().join("thoughtscope").join("responses"))
}

/// One reply on disk, with its full key so a hash collision is never a wrong answer.
#[derive(Serialize, Deserialize)]
struct DiskEntry {
    key: String,
    reply: LlmResponse,
}

#[derive(Debug, Default)]
pub struct ResponseCache {
    entries: HashMap<String, LlmResponse>,
    pub hits: u64,
    disk: Option<PathBuf>,
    /// Disk entries that could not be written (the run goes on without them).
    pub disk_errors: u64,
}

impl ResponseCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// A cache that also keeps replies as files in `dir` (created if missing).
    pub fn with_disk(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(ResponseCache { disk: Some(dir.to_path_buf()), ..Self::default() })
    }

    fn disk_path(&self, key: &str) -> Option<PathBuf> {
        let dir = self.disk.as_ref()?;
        let mut salted = key.as_bytes().to_vec();
        salted.extend_from_slice(b"#2");
        Some(dir.join(format!("{:016x}{:016x}.json", stable_hash(key.as_bytes()), stable_hash(&salted))))
    }

    fn read_disk(&self, key: &str) -> Option<LlmResponse> {
        let text = std::fs::read_to_string(self.disk_path(key)?).ok()?;
        let entry: DiskEntry = serde_json::from_str(&text).ok()?;
        (entry.key == key).then_some(entry.reply)
    }

    fn write_disk(&mut self, key: &str, reply: &LlmResponse) {
        let Some(path) = self.disk_path(key) else { return };
        let entry = DiskEntry { key: key.to_string(), reply: reply.clone() };
        // Known secret values never reach the file (a redacted key only makes a miss later).
        let text = super::secret::redact_json_line(serde_json::to_string(&entry).unwrap_or_default());
        // Write then rename, so a reader never sees half a file.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let ok = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &path));
        if ok.is_err() {
            let _ = std::fs::remove_file(&tmp);
            self.disk_errors += 1;
        }
    }

    /// The cached reply, marked as cached (no tokens spent, no latency).
    pub fn get(&mut self, model: &str, request: &LlmRequest) -> Option<LlmResponse> {
        let key = request.cache_key(model);
        if !self.entries.contains_key(&key) {
            let stored = self.read_disk(&key)?;
            self.entries.insert(key.clone(), stored);
        }
        let found = self.entries.get(&key)?;
        self.hits += 1;
        let mut reply = found.clone();
        reply.cached = true;
        reply.latency_ms = 0;
        reply.usage.prompt_tokens = 0;
        reply.usage.completion_tokens = 0;
        Some(reply)
    }

    pub fn put(&mut self, model: &str, request: &LlmRequest, reply: &LlmResponse) {
        let key = request.cache_key(model);
        if self.disk.is_some() && !reply.cached {
            self.write_disk(&key, reply);
        }
        self.entries.insert(key, reply.clone());
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Completion, Message, Purpose, Usage};

    fn request(text: &str) -> LlmRequest {
        LlmRequest {
            purpose: Purpose::Value,
            messages: vec![Message::user(text)],
            n: 3,
            temperature: 0.7,
            max_tokens: None,
            stop: vec![],
            context: serde_json::Value::Null,
            nonce: 0,
            tools: vec![],
        }
    }

    #[test]
    fn same_request_hits_and_nonce_misses() {
        let mut cache = ResponseCache::new();
        let reply = LlmResponse {
            completions: vec![Completion::text("sure", None)],
            usage: Usage { prompt_tokens: 10, completion_tokens: 2, estimated: false },
            latency_ms: 5,
            model: "m".into(),
            simulated: false,
            cached: false,
        };
        let r = request("4 4 10");
        assert!(cache.get("m", &r).is_none());
        cache.put("m", &r, &reply);
        let hit = cache.get("m", &r).unwrap();
        assert!(hit.cached);
        assert_eq!(hit.usage.prompt_tokens, 0);
        assert_eq!(hit.completions, reply.completions);
        assert_eq!(cache.hits, 1);
        let mut fresh = r.clone();
        fresh.nonce = 1;
        assert!(cache.get("m", &fresh).is_none());
        assert!(cache.get("other-model", &r).is_none());
        // The structured context does not change the key.
        let mut same = r.clone();
        same.context = serde_json::json!({"y": "x"});
        assert!(cache.get("m", &same).is_some());
    }

    #[test]
    fn the_disk_cache_answers_a_later_run() {
        let dir = tempfile::tempdir().unwrap();
        let reply = LlmResponse {
            completions: vec![Completion::text("likely", Some("stop".into()))],
            usage: Usage { prompt_tokens: 10, completion_tokens: 2, estimated: false },
            latency_ms: 5,
            model: "m".into(),
            simulated: false,
            cached: false,
        };
        let r = request("1 2 3");
        let mut first = ResponseCache::with_disk(dir.path()).unwrap();
        first.put("m", &r, &reply);
        let mut second = ResponseCache::with_disk(dir.path()).unwrap();
        let hit = second.get("m", &r).expect("found on disk");
        assert!(hit.cached);
        assert_eq!(hit.completions, reply.completions);
        assert!(second.get("m", &request("other")).is_none());
        assert!(second.get("other-model", &r).is_none());
        // A damaged file is a miss, not an error.
        for e in std::fs::read_dir(dir.path()).unwrap() {
            std::fs::write(e.unwrap().path(), "{not json").unwrap();
        }
        assert!(ResponseCache::with_disk(dir.path()).unwrap().get("m", &r).is_none());
    }
}
