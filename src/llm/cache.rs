//! Identical requests are answered once: duplicate value prompts inside a search cost
//! one call, like the reference implementation's value cache. The key covers
//! everything that changes what a model would say (model, messages, n, sampling
//! parameters, and a nonce when a person asks for a fresh answer).

use std::collections::HashMap;

use crate::engine::{LlmRequest, LlmResponse};

#[derive(Debug, Default)]
pub struct ResponseCache {
    entries: HashMap<String, LlmResponse>,
    pub hits: u64,
}

impl ResponseCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The cached reply, marked as cached (no tokens spent, no latency).
    pub fn get(&mut self, model: &str, request: &LlmRequest) -> Option<LlmResponse> {
        let found = self.entries.get(&request.cache_key(model))?;
        self.hits += 1;
        let mut reply = found.clone();
        reply.cached = true;
        reply.latency_ms = 0;
        reply.usage.prompt_tokens = 0;
        reply.usage.completion_tokens = 0;
        Some(reply)
    }

    pub fn put(&mut self, model: &str, request: &LlmRequest, reply: &LlmResponse) {
        self.entries.insert(request.cache_key(model), reply.clone());
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
        }
    }

    #[test]
    fn same_request_hits_and_nonce_misses() {
        let mut cache = ResponseCache::new();
        let reply = LlmResponse {
            completions: vec![Completion { text: "sure".into(), finish_reason: None }],
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
}
