//! `search[entity]` and `lookup[keyword]` with the ReAct paper's Wikipedia semantics, over a
//! `KnowledgeBackend` (the offline `corpus` or the online `wikipedia`).
//!
//! * search: the first sentences of the page (5, as in the paper), or
//!   "Could not find X. Similar: ['A', 'B']." when there is no such page;
//! * lookup: the next sentence of the current page containing the keyword,
//!   "(Result 1 / 3) sentence", then "No more results.".

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::text::first_sentences;
use super::{BoxFuture, LookupCursor, Observation, Tool, ToolSpec, ToolState};

/// A page as search opened it: its title and its sentences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub title: String,
    pub sentences: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SearchOutcome {
    Found(Page),
    /// No page by that name; up to a few similar titles, best first.
    NotFound {
        similar: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KnowledgeError {
    #[error("{source_name} did not answer within {seconds} s")]
    Timeout { source_name: String, seconds: f64 },
    #[error("could not reach {source_name}: {message}")]
    Unreachable { source_name: String, message: String },
    #[error("{source_name} answered with HTTP status {status}")]
    Status { source_name: String, status: u16 },
    #[error("{source_name} sent a reply that could not be read: {message}")]
    Malformed { source_name: String, message: String },
}

pub trait KnowledgeBackend: Send + Sync {
    /// `corpus` or `wikipedia`, shown in observations and the UI.
    fn name(&self) -> &str;
    /// Find the page named `entity`, or titles similar to it.
    fn search<'a>(&'a self, entity: &'a str) -> BoxFuture<'a, Result<SearchOutcome, KnowledgeError>>;
}

/// How many sentences a search shows, as in the ReAct paper.
pub const SEARCH_SENTENCES: usize = 5;
/// How many similar titles a failed search lists.
pub const SIMILAR_TITLES: usize = 5;

/// `search[entity]`.
#[derive(Clone)]
pub struct SearchTool {
    backend: Arc<dyn KnowledgeBackend>,
    sentences: usize,
}

impl SearchTool {
    pub fn new(backend: Arc<dyn KnowledgeBackend>) -> SearchTool {
        SearchTool { backend, sentences: SEARCH_SENTENCES }
    }

    /// Show this many sentences of a found page instead of 5.
    pub fn sentences(mut self, n: usize) -> SearchTool {
        self.sentences = n.max(1);
        self
    }
}

/// `['A', 'B']`, the way the paper (Python) prints the similar titles.
fn python_list(titles: &[String]) -> String {
    let quoted: Vec<String> = titles.iter().map(|t| format!("'{}'", t.replace('\'', "\\'"))).collect();
    format!("[{}]", quoted.join(", "))
}

impl Tool for SearchTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single(
            "search",
            &format!(
                "searches the exact entity on {} and returns the first paragraph if it exists; if not, returns some similar entities to search",
                if self.backend.name() == "wikipedia" { "Wikipedia" } else { "the document collection" }
            ),
            "entity",
            "the page title to search for",
        )
    }

    fn call<'a>(&'a self, arg: &'a str, state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        Box::pin(async move {
            let entity = arg.trim();
            if entity.is_empty() {
                return Observation::fail("search needs an entity to look for, e.g. search[Paris]");
            }
            match self.backend.search(entity).await {
                Ok(SearchOutcome::Found(page)) => {
                    let text = if page.sentences.is_empty() {
                        format!("The page '{}' has no text.", page.title)
                    } else {
                        first_sentences(&page.sentences, self.sentences)
                    };
                    state.page = Some(page);
                    state.lookup = None;
                    Observation::ok(text)
                }
                // As in the paper, a failed search leaves the current page as it was.
                Ok(SearchOutcome::NotFound { similar }) => {
                    let similar: Vec<String> = similar.into_iter().take(SIMILAR_TITLES).collect();
                    Observation::ok(format!("Could not find {entity}. Similar: {}.", python_list(&similar)))
                }
                Err(e) => Observation::fail(format!("Search failed: {e}. Try again or search for something else.")),
            }
        })
    }
}

/// `lookup[keyword]`: works on the page in `ToolState`, needs no backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct LookupTool;

/// Run a lookup on the state (pure; the tool is this and nothing else).
pub fn lookup(keyword: &str, state: &mut ToolState) -> Observation {
    let keyword = keyword.trim();
    let Some(page) = &state.page else {
        return Observation::fail(
            "There is no page to look in yet: search[entity] for a page first, then lookup[keyword].",
        );
    };
    if keyword.is_empty() {
        return Observation::fail("lookup needs a keyword to find in the current page, e.g. lookup[born]");
    }
    let needle = keyword.to_lowercase();
    let results: Vec<&String> = page.sentences.iter().filter(|s| s.to_lowercase().contains(&needle)).collect();
    // A new keyword starts from the first result again.
    let cursor = match &mut state.lookup {
        Some(c) if c.keyword == keyword => c,
        other => other.insert(LookupCursor { keyword: keyword.to_string(), shown: 0 }),
    };
    match results.get(cursor.shown) {
        Some(sentence) => {
            cursor.shown += 1;
            Observation::ok(format!("(Result {} / {}) {}", cursor.shown, results.len(), sentence))
        }
        None => Observation::ok("No more results."),
    }
}

impl Tool for LookupTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec::single(
            "lookup",
            "returns the next sentence containing keyword in the page found by the last search",
            "keyword",
            "the word or phrase to find in the current page",
        )
    }

    fn call<'a>(&'a self, arg: &'a str, state: &'a mut ToolState) -> BoxFuture<'a, Observation> {
        Box::pin(async move { lookup(arg, state) })
    }
}
