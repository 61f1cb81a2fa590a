//! Which knowledge backend `search` and `lookup` use, and building it on first use.

use std::sync::{Arc, OnceLock};

use super::knowledge::{KnowledgeBackend, KnowledgeError, SearchOutcome};
use super::wikipedia::{Wikipedia, WikipediaOptions};
use super::BoxFuture;

type Made = Result<Arc<dyn KnowledgeBackend>, KnowledgeError>;

/// A backend built the first time it is searched: replays and imports call no tools,
/// so they never build an HTTP client.
pub struct LazyBackend {
    name: String,
    make: Box<dyn Fn() -> Made + Send + Sync>,
    made: OnceLock<Made>,
}

impl LazyBackend {
    pub fn new(name: &str, make: impl Fn() -> Made + Send + Sync + 'static) -> LazyBackend {
        LazyBackend { name: name.to_string(), make: Box::new(make), made: OnceLock::new() }
    }

    /// Wikipedia through `options` (the real one by default).
    pub fn wikipedia(options: WikipediaOptions) -> LazyBackend {
        LazyBackend::new("wikipedia", move || {
            Wikipedia::new(options.clone()).map(|w| Arc::new(w) as Arc<dyn KnowledgeBackend>)
        })
    }
}

impl KnowledgeBackend for LazyBackend {
    fn name(&self) -> &str {
        &self.name
    }

    fn search<'a>(&'a self, entity: &'a str) -> BoxFuture<'a, Result<SearchOutcome, KnowledgeError>> {
        Box::pin(async move {
            match self.made.get_or_init(|| (self.make)()) {
                Ok(backend) => backend.search(entity).await,
                Err(e) => Err(e.clone()),
            }
        })
    }
}
