//! Which requests share an answer. Like the reference Tree-of-Thoughts implementation,
//! by default evaluation (value) prompts are answered once per run — duplicate value
//! prompts cost one call — while proposals and samples are drawn afresh each time they
//! are asked (a repeated propose prompt is a new sample, not the first reply again).
//! `--cache-purposes` chooses which purposes share answers, `--cache off` turns sharing
//! off. The key covers everything that changes what a model would say (model, messages,
//! n, sampling parameters, and a nonce when a person asks for a fresh answer); a request
//! of a purpose drawn afresh is keyed by its occurrence too (`#1` the second time it is
//! asked in a run). With `--cache disk` replies are also kept as files under the user
//! cache directory, so a second run of the same search costs no calls and draws the
//! same samples in the same order.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::engine::rng::stable_hash;
use crate::protocol::{LlmRequest, LlmResponse, Purpose};

/// Where replies are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// Nothing is shared: every request is sent.
    Off,
    /// For the run only.
    #[default]
    Memory,
    /// Also on disk under the user cache directory, across runs.
    Disk,
}

impl CacheMode {
    pub const ALL: [CacheMode; 3] = [CacheMode::Off, CacheMode::Memory, CacheMode::Disk];

    /// Its name, as `--cache` takes it and sessions record it.
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Off => "off",
            CacheMode::Memory => "memory",
            CacheMode::Disk => "disk",
        }
    }

    /// What it does, for `--cache`'s help.
    pub fn about(self) -> &'static str {
        match self {
            CacheMode::Off => "Nothing is shared: every request is sent",
            CacheMode::Memory => "For the run only",
            CacheMode::Disk => "Also on disk under the user cache directory, across runs",
        }
    }

    /// The mode named `name`, if any.
    pub fn from_name(name: &str) -> Option<CacheMode> {
        CacheMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// The purposes whose identical requests share one answer within a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachePolicy {
    pub shared: BTreeSet<PurposeName>,
}

/// A purpose by name, ordered (for the policy's set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PurposeName(&'static str);

const PURPOSES: [Purpose; 11] = [
    Purpose::Io,
    Purpose::Cot,
    Purpose::Propose,
    Purpose::Sample,
    Purpose::Value,
    Purpose::Vote,
    Purpose::Act,
    Purpose::Feedback,
    Purpose::Refine,
    Purpose::Reflect,
    Purpose::Judge,
];

impl Default for CachePolicy {
    /// The reference implementation's: value prompts cached, everything else sampled afresh.
    fn default() -> Self {
        CachePolicy::of(&[Purpose::Value])
    }
}

impl CachePolicy {
    pub fn of(purposes: &[Purpose]) -> Self {
        CachePolicy { shared: purposes.iter().map(|p| PurposeName(p.label())).collect() }
    }

    /// Every purpose shares answers (identical requests are always answered once).
    pub fn all() -> Self {
        CachePolicy::of(&PURPOSES)
    }

    /// Whether identical requests of `purpose` share one answer.
    pub fn shares(&self, purpose: Purpose) -> bool {
        self.shared.contains(&PurposeName(purpose.label()))
    }

    /// `--cache-purposes`: `all`, `none`, or a comma-separated list of purposes.
    pub fn parse(text: &str) -> Result<CachePolicy, String> {
        match text.trim() {
            "all" => return Ok(CachePolicy::all()),
            "none" | "" => return Ok(CachePolicy::of(&[])),
            _ => {}
        }
        let mut purposes = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match PURPOSES.iter().find(|p| p.label() == name) {
                Some(p) => purposes.push(*p),
                None => {
                    let known: Vec<&str> = PURPOSES.iter().map(|p| p.label()).collect();
                    return Err(format!(
                        "unknown call purpose {name:?} in --cache-purposes: use all, none, or a list of {}",
                        known.join(", ")
                    ));
                }
            }
        }
        Ok(CachePolicy::of(&purposes))
    }

    /// The policy's names as `--cache-purposes` takes them.
    pub fn label(&self) -> String {
        if self.shared.is_empty() {
            return "none".into();
        }
        self.shared.iter().map(|p| p.0).collect::<Vec<_>>().join(",")
    }
}

/// How the driver files one call: its key (for the cache, for coalescing identical calls
/// in flight and for the replay provider), and its occurrence among identical requests
/// of a purpose drawn afresh (0 for shared purposes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallKey {
    pub key: String,
    pub occurrence: u32,
    /// Identical requests share this one's answer.
    pub shared: bool,
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
    /// `--cache off`: nothing is looked up or kept (occurrences are still counted).
    off: bool,
    policy: CachePolicy,
    /// How often each request of a purpose drawn afresh was asked in this run.
    occurrences: HashMap<String, u32>,
    /// Disk keys written during this run by any of its problems' caches ([`ResponseCache::scope`]):
    /// a problem reads only entries from before the run, so what it sees does not depend
    /// on how far the problems beside it have got.
    written: Option<Arc<Mutex<HashSet<String>>>>,
    /// Shared keys one problem's driver has sent and not had answered yet, with the
    /// drivers of other problems waiting for that answer (problems side by side sharing
    /// one cache ask an identical request once, as the reference's loop does).
    flying: HashMap<String, Flight>,
    next_flight: u64,
}

/// A driver waiting for another problem's identical request.
pub type Waiter = tokio::sync::oneshot::Sender<Result<LlmResponse, crate::protocol::CallError>>;

/// A shared request in flight: which asking it is, and who waits for its answer.
#[derive(Debug)]
struct Flight {
    id: u64,
    waiters: Vec<Waiter>,
}

/// What [`ResponseCache::wait_or_fly`] says.
pub enum Asked {
    /// Another problem has it in flight: its answer comes here.
    Wait(tokio::sync::oneshot::Receiver<Result<LlmResponse, crate::protocol::CallError>>),
    /// Send it: the flight's id, for [`ResponseCache::land`].
    Fly(u64),
}

impl ResponseCache {
    /// Ask for a shared `key`: wait for the answer another problem has in flight, or
    /// fly it (the caller's request is now the one in flight under the returned id, and
    /// [`Self::land`] must follow, answered or not).
    pub fn wait_or_fly(&mut self, key: &str) -> Asked {
        if self.off {
            return Asked::Fly(0);
        }
        if let Some(flight) = self.flying.get_mut(key) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            flight.waiters.push(tx);
            return Asked::Wait(rx);
        }
        self.next_flight += 1;
        self.flying.insert(key.to_string(), Flight { id: self.next_flight, waiters: Vec::new() });
        Asked::Fly(self.next_flight)
    }

    /// The flight `id` of `key` is given up: true, and it is no longer in flight, when no
    /// other problem waits for it; false (nothing changes) when one does, so the request
    /// must run on for them.
    pub fn unfly_unless_waited(&mut self, key: &str, id: u64) -> bool {
        match self.flying.get(key) {
            Some(flight) if flight.id == id && !flight.waiters.is_empty() => false,
            Some(flight) if flight.id == id => {
                self.flying.remove(key);
                true
            }
            _ => true,
        }
    }

    /// The flight `id` of `key` is answered (or failed, or given up): everyone waiting
    /// gets `result`, each answer counted as a cache hit. A flight already landed is left.
    pub fn land(&mut self, key: &str, id: u64, result: &Result<LlmResponse, crate::protocol::CallError>) {
        if self.flying.get(key).is_none_or(|f| f.id != id) {
            return;
        }
        for waiter in self.flying.remove(key).map(|f| f.waiters).unwrap_or_default() {
            if waiter.send(result.clone()).is_ok() && result.is_ok() {
                self.hits += 1;
            }
        }
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// A cache that answers nothing (`--cache off`).
    pub fn off() -> Self {
        ResponseCache { off: true, ..Self::default() }
    }

    /// Share answers only for the purposes `policy` names.
    pub fn with_policy(mut self, policy: CachePolicy) -> Self {
        self.policy = policy;
        self
    }

    pub fn policy(&self) -> &CachePolicy {
        &self.policy
    }

    /// File a call that is about to be made: its key, and for a purpose drawn afresh its
    /// occurrence in this run (counted here, so call this once per call, in the order
    /// the engine issued them).
    pub fn key_for(&mut self, model: &str, request: &LlmRequest) -> CallKey {
        let key = request.cache_key(model);
        if !self.off && self.policy.shares(request.purpose) {
            return CallKey { key, occurrence: 0, shared: true };
        }
        let seen = self.occurrences.entry(key.clone()).or_insert(0);
        let occurrence = *seen;
        *seen += 1;
        let key = if occurrence == 0 { key } else { format!("{key}#{occurrence}") };
        CallKey { key, occurrence, shared: false }
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

    /// A cache for one problem of a run whose problems go side by side: the same disk,
    /// policy and mode, with entries and occurrences of its own (it sees the replies on
    /// disk from before the run and its own, never another problem's of this run).
    pub fn scope(&mut self) -> ResponseCache {
        let written = Arc::clone(self.written.get_or_insert_with(Default::default));
        ResponseCache {
            disk: self.disk.clone(),
            off: self.off,
            policy: self.policy.clone(),
            written: Some(written),
            ..Self::default()
        }
    }

    fn read_disk(&self, key: &str) -> Option<LlmResponse> {
        // Checked and read under the lock, so another problem's write cannot slip in between.
        let written = self.written.as_ref().map(|w| w.lock().unwrap_or_else(|e| e.into_inner()));
        if written.as_ref().is_some_and(|w| w.contains(key)) {
            return None;
        }
        let text = std::fs::read_to_string(self.disk_path(key)?).ok()?;
        let entry: DiskEntry = serde_json::from_str(&text).ok()?;
        (entry.key == key).then_some(entry.reply)
    }

    fn write_disk(&mut self, key: &str, reply: &LlmResponse) {
        let Some(path) = self.disk_path(key) else { return };
        let written = self.written.clone();
        let mut written = written.as_ref().map(|w| w.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(w) = written.as_mut() {
            w.insert(key.to_string());
        }
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

    /// The cached reply, marked as cached (no tokens spent, no latency), for a request of
    /// a shared purpose.
    pub fn get(&mut self, model: &str, request: &LlmRequest) -> Option<LlmResponse> {
        self.get_key(&request.cache_key(model))
    }

    /// The reply filed under `key` (from [`ResponseCache::key_for`]), marked as cached.
    pub fn get_key(&mut self, key: &str) -> Option<LlmResponse> {
        if self.off {
            return None;
        }
        if !self.entries.contains_key(key) {
            let stored = self.read_disk(key)?;
            self.entries.insert(key.to_string(), stored);
        }
        let found = self.entries.get(key)?;
        self.hits += 1;
        let mut reply = found.clone();
        reply.cached = true;
        reply.latency_ms = 0;
        reply.usage.prompt_tokens = 0;
        reply.usage.completion_tokens = 0;
        Some(reply)
    }

    pub fn put(&mut self, model: &str, request: &LlmRequest, reply: &LlmResponse) {
        let key = CallKey { key: request.cache_key(model), occurrence: 0, shared: true };
        self.put_key(&key, reply);
    }

    /// Keep the reply of the call filed as `key`: in memory if identical requests share
    /// it, and on disk (`--cache disk`) whatever its purpose, so a later run draws the same.
    pub fn put_key(&mut self, key: &CallKey, reply: &LlmResponse) {
        // A reply short of samples (some were lost) is not the answer to the request.
        if self.off || reply.lost.is_some() {
            return;
        }
        if self.disk.is_some() && !reply.cached {
            self.write_disk(&key.key, reply);
        }
        // An unshared call's key is never asked again in this run: only disk keeps it.
        if key.shared {
            self.entries.insert(key.key.clone(), reply.clone());
        }
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
    use crate::protocol::{Completion, Message, Purpose, Usage};

    #[test]
    fn cache_modes_are_named_as_serde_writes_them_and_read_back_by_name() {
        for mode in CacheMode::ALL {
            assert_eq!(serde_json::to_string(&mode).unwrap(), format!("\"{}\"", mode.name()));
            assert_eq!(CacheMode::from_name(mode.name()), Some(mode));
            assert!(!mode.about().ends_with('.'), "help lines end without a period, as clap shows them");
        }
        assert_eq!(CacheMode::from_name("Disk"), None);
    }

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
            sampling: Default::default(),
        }
    }

    #[test]
    fn same_request_hits_and_nonce_misses() {
        let mut cache = ResponseCache::new();
        let reply = LlmResponse {
            completions: vec![Completion::text("sure", None)],
            usage: Usage { prompt_tokens: 10, completion_tokens: 2, estimated: false, ..Usage::default() },
            latency_ms: 5,
            model: "m".into(),
            simulated: false,
            cached: false,
            lost: None,
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

    fn proposal(text: &str) -> LlmRequest {
        LlmRequest { purpose: Purpose::Propose, n: 1, ..request(text) }
    }

    #[test]
    fn by_default_values_are_shared_and_proposals_drawn_afresh() {
        let mut cache = ResponseCache::new();
        let reply = LlmResponse {
            completions: vec![Completion::text("4 + 4 = 8 (left: 8 10)", None)],
            usage: Usage { prompt_tokens: 10, completion_tokens: 2, estimated: false, ..Usage::default() },
            latency_ms: 5,
            model: "m".into(),
            simulated: false,
            cached: false,
            lost: None,
        };
        // A repeated propose prompt is a new call, keyed by its occurrence.
        let p = proposal("4 4 10");
        let first = cache.key_for("m", &p);
        assert_eq!((first.occurrence, first.shared), (0, false));
        assert_eq!(first.key, p.cache_key("m"), "a first occurrence keeps the plain key");
        cache.put_key(&first, &reply);
        let second = cache.key_for("m", &p);
        assert_eq!((second.occurrence, second.shared), (1, false));
        assert_ne!(second.key, first.key);
        assert!(cache.get_key(&second.key).is_none(), "the second proposal is sampled afresh");
        // A value prompt is shared.
        let v = request("4 4 10");
        let k = cache.key_for("m", &v);
        assert_eq!((k.occurrence, k.shared), (0, true));
        cache.put_key(&k, &reply);
        assert_eq!(cache.key_for("m", &v), k);
        assert!(cache.get_key(&k.key).is_some());
        // --cache-purposes all shares proposals too; --cache off shares nothing.
        let mut all = ResponseCache::new().with_policy(CachePolicy::all());
        let k = all.key_for("m", &p);
        all.put_key(&k, &reply);
        assert_eq!(all.key_for("m", &p), k);
        assert!(all.get_key(&k.key).is_some());
        let mut off = ResponseCache::off();
        let k = off.key_for("m", &v);
        assert!(!k.shared);
        off.put_key(&k, &reply);
        assert!(off.get_key(&k.key).is_none() && off.is_empty());
        assert_eq!(off.key_for("m", &v).occurrence, 1);
    }

    #[test]
    fn cache_purposes_parse_by_name() {
        assert_eq!(CachePolicy::parse("value").unwrap(), CachePolicy::default());
        assert_eq!(CachePolicy::parse("value, vote").unwrap().label(), "value,vote");
        assert_eq!(CachePolicy::parse("all").unwrap(), CachePolicy::all());
        assert_eq!(CachePolicy::parse("none").unwrap().label(), "none");
        let e = CachePolicy::parse("value,proposals").unwrap_err();
        assert!(e.contains("\"proposals\"") && e.contains("propose"), "{e}");
    }

    #[test]
    fn a_problems_scope_sees_replies_from_before_the_run_and_its_own_only() {
        let dir = tempfile::tempdir().unwrap();
        let reply = |text: &str| LlmResponse {
            completions: vec![Completion::text(text, Some("stop".into()))],
            usage: Usage { prompt_tokens: 10, completion_tokens: 2, estimated: false, ..Usage::default() },
            latency_ms: 5,
            model: "m".into(),
            simulated: false,
            cached: false,
            lost: None,
        };
        let (old, new) = (request("1 2 3"), request("4 5 6"));
        ResponseCache::with_disk(dir.path()).unwrap().put("m", &old, &reply("from an earlier run"));
        let mut run = ResponseCache::with_disk(dir.path()).unwrap();
        let (mut a, mut b) = (run.scope(), run.scope());
        assert_eq!(a.get("m", &old).unwrap().completions[0].text, "from an earlier run");
        a.put("m", &new, &reply("a's"));
        assert_eq!(a.get("m", &new).unwrap().completions[0].text, "a's", "its own reply");
        assert!(b.get("m", &new).is_none(), "not a neighbour's, though it is on disk now");
        assert!(b.get("m", &old).is_some());
        // Occurrences are counted per problem.
        let p = proposal("1 2 3");
        assert_eq!((a.key_for("m", &p).occurrence, b.key_for("m", &p).occurrence), (0, 0));
        // A later run reads what this one wrote.
        assert!(ResponseCache::with_disk(dir.path()).unwrap().get("m", &new).is_some());
    }

    #[test]
    fn the_disk_cache_answers_a_later_run() {
        let dir = tempfile::tempdir().unwrap();
        let reply = LlmResponse {
            completions: vec![Completion::text("likely", Some("stop".into()))],
            usage: Usage { prompt_tokens: 10, completion_tokens: 2, estimated: false, ..Usage::default() },
            latency_ms: 5,
            model: "m".into(),
            simulated: false,
            cached: false,
            lost: None,
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
        // Proposals are kept on disk by occurrence: a later run draws the same ones in order.
        let p = proposal("1 2 3");
        let mut run1 = ResponseCache::with_disk(dir.path()).unwrap();
        let (k0, k1) = (run1.key_for("m", &p), run1.key_for("m", &p));
        let second_reply = LlmResponse { completions: vec![Completion::text("other", None)], ..reply.clone() };
        run1.put_key(&k0, &reply);
        run1.put_key(&k1, &second_reply);
        let mut run2 = ResponseCache::with_disk(dir.path()).unwrap();
        let first = run2.key_for("m", &p);
        assert_eq!(run2.get_key(&first.key).unwrap().completions, reply.completions);
        let again = run2.key_for("m", &p);
        assert_eq!(run2.get_key(&again.key).unwrap().completions[0].text, "other");
        // A damaged file is a miss, not an error.
        for e in std::fs::read_dir(dir.path()).unwrap() {
            std::fs::write(e.unwrap().path(), "{not json").unwrap();
        }
        assert!(ResponseCache::with_disk(dir.path()).unwrap().get("m", &r).is_none());
    }
}
