//! The online knowledge backend: the MediaWiki API (Wikipedia by default).
//!
//! A page is `action=query&prop=extracts&explaintext=1&redirects=1&titles=...`; when it is
//! missing, `action=opensearch` gives similar titles. Answers (found or not) are cached in
//! memory; failures are not, so a later search can succeed.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use super::knowledge::{KnowledgeBackend, KnowledgeError, Page, SearchOutcome, SIMILAR_TITLES};
use super::text::split_sentences;
use super::BoxFuture;

pub const DEFAULT_API_URL: &str = "https://en.wikipedia.org/w/api.php";

#[derive(Debug, Clone, PartialEq)]
pub struct WikipediaOptions {
    /// The `api.php` endpoint.
    pub api_url: String,
    pub connect_timeout: Duration,
    /// Overall limit on one request, reply body included.
    pub timeout: Duration,
    pub user_agent: String,
    /// Do not use a proxy (servers on this machine).
    pub no_proxy: bool,
}

impl Default for WikipediaOptions {
    fn default() -> Self {
        WikipediaOptions {
            api_url: DEFAULT_API_URL.to_string(),
            connect_timeout: Duration::from_secs(5),
            timeout: Duration::from_secs(20),
            user_agent: format!(
                "thoughtscope/{} (ReAct search tool; https://github.com/thoughtscope/thoughtscope)",
                env!("CARGO_PKG_VERSION")
            ),
            no_proxy: false,
        }
    }
}

pub struct Wikipedia {
    client: reqwest::Client,
    options: WikipediaOptions,
    cache: Mutex<HashMap<String, SearchOutcome>>,
}

const NAME: &str = "wikipedia";

impl Wikipedia {
    pub fn new(options: WikipediaOptions) -> Result<Wikipedia, KnowledgeError> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(options.connect_timeout)
            .timeout(options.timeout)
            .user_agent(options.user_agent.clone());
        if options.no_proxy {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| KnowledgeError::Unreachable {
            source_name: NAME.into(),
            message: format!("cannot build an HTTP client: {e}"),
        })?;
        Ok(Wikipedia { client, options, cache: Mutex::new(HashMap::new()) })
    }

    pub fn options(&self) -> &WikipediaOptions {
        &self.options
    }

    /// How many searches (found or not) the in-memory cache holds.
    pub fn cached(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }

    async fn get_json(&self, params: &[(&str, &str)]) -> Result<Value, KnowledgeError> {
        let response = self.client.get(&self.options.api_url).query(params).send().await.map_err(|e| self.error(e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(KnowledgeError::Status { source_name: NAME.into(), status: status.as_u16() });
        }
        let body = response.text().await.map_err(|e| self.error(e))?;
        serde_json::from_str(&body)
            .map_err(|e| KnowledgeError::Malformed { source_name: NAME.into(), message: e.to_string() })
    }

    fn error(&self, e: reqwest::Error) -> KnowledgeError {
        if e.is_timeout() {
            KnowledgeError::Timeout { source_name: NAME.into(), seconds: self.options.timeout.as_secs_f64() }
        } else {
            // The chain's innermost cause is the useful part ("connection refused").
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                message = s.to_string();
                source = s.source();
            }
            KnowledgeError::Unreachable { source_name: NAME.into(), message }
        }
    }

    async fn fetch(&self, entity: &str) -> Result<SearchOutcome, KnowledgeError> {
        let reply = self
            .get_json(&[
                ("action", "query"),
                ("prop", "extracts"),
                ("explaintext", "1"),
                ("redirects", "1"),
                ("titles", entity),
                ("format", "json"),
            ])
            .await?;
        if let Some(page) = parse_extract(&reply)? {
            return Ok(SearchOutcome::Found(page));
        }
        let limit = SIMILAR_TITLES.to_string();
        let similar = self
            .get_json(&[
                ("action", "opensearch"),
                ("search", entity),
                ("limit", &limit),
                ("namespace", "0"),
                ("format", "json"),
            ])
            .await?;
        Ok(SearchOutcome::NotFound { similar: parse_opensearch(&similar)? })
    }
}

fn malformed(message: &str) -> KnowledgeError {
    KnowledgeError::Malformed { source_name: NAME.into(), message: message.to_string() }
}

/// The page in a `prop=extracts` reply (`formatversion` 1 or 2), or None when it is missing.
pub fn parse_extract(reply: &Value) -> Result<Option<Page>, KnowledgeError> {
    if let Some(error) = reply.get("error") {
        let info = error.get("info").and_then(Value::as_str).unwrap_or("no details");
        return Err(malformed(&format!("the API reported an error: {info}")));
    }
    let pages = &reply["query"]["pages"];
    let page = match pages {
        Value::Object(map) => map.values().next(),
        Value::Array(list) => list.first(),
        _ => return Err(malformed("no query.pages in the reply")),
    };
    let Some(page) = page else { return Ok(None) };
    if page.get("missing").is_some() || page.get("invalid").is_some() {
        return Ok(None);
    }
    let title = page.get("title").and_then(Value::as_str).unwrap_or("").to_string();
    let extract = page.get("extract").and_then(Value::as_str).unwrap_or("");
    if extract.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(Page { title, sentences: split_sentences(extract) }))
}

/// The titles of an `opensearch` reply: `[query, [titles], [descriptions], [urls]]`.
pub fn parse_opensearch(reply: &Value) -> Result<Vec<String>, KnowledgeError> {
    let titles =
        reply.get(1).and_then(Value::as_array).ok_or_else(|| malformed("an opensearch reply without titles"))?;
    Ok(titles.iter().filter_map(Value::as_str).take(SIMILAR_TITLES).map(str::to_string).collect())
}

impl KnowledgeBackend for Wikipedia {
    fn name(&self) -> &str {
        NAME
    }

    fn search<'a>(&'a self, entity: &'a str) -> BoxFuture<'a, Result<SearchOutcome, KnowledgeError>> {
        Box::pin(async move {
            let key = entity.trim().to_string();
            if let Some(hit) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
                return Ok(hit);
            }
            let outcome = self.fetch(&key).await?;
            if let Ok(mut cache) = self.cache.lock() {
                cache.insert(key, outcome.clone());
            }
            Ok(outcome)
        })
    }
}
