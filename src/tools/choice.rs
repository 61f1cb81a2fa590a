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

/// The knowledge backends the CLI offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// The MediaWiki API (Wikipedia, or `--wikipedia-url`).
    Wikipedia,
    /// A folder of documents (`--corpus DIR`).
    Corpus,
}

impl BackendKind {
    pub const ALL: [BackendKind; 2] = [BackendKind::Wikipedia, BackendKind::Corpus];

    /// Its name, as `--tools` takes it.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Wikipedia => "wikipedia",
            BackendKind::Corpus => "corpus",
        }
    }

    /// What it is, for `--tools`'s help.
    pub fn about(self) -> &'static str {
        match self {
            BackendKind::Wikipedia => "The MediaWiki API (Wikipedia, or `--wikipedia-url`)",
            BackendKind::Corpus => "A folder of documents (`--corpus DIR`)",
        }
    }

    /// The backend named `name`, if any.
    pub fn from_name(name: &str) -> Option<BackendKind> {
        BackendKind::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// Where search and lookup look, and which MCP servers' tools are offered (`--tools`,
/// `--corpus`, `--wikipedia-url`, `--mcp`, `--mcp-cmd`, `--mcp-url`, which `cli` turns
/// into these).
#[derive(Debug, Clone, Default)]
pub struct ToolOptions {
    /// `--tools`: the backend [default: the task's own].
    pub tools: Option<BackendKind>,
    /// `--corpus`: a folder of .md, .txt and .jsonl documents (implies `--tools corpus`).
    pub corpus: Option<std::path::PathBuf>,
    /// `--wikipedia-url`: the MediaWiki API endpoint (implies `--tools wikipedia`).
    pub wikipedia_url: Option<String>,
    /// `--mcp NAME`: [[mcp]] config entries whose servers' tools are offered.
    pub mcp: Vec<String>,
    /// `--mcp-cmd`: command lines of MCP servers over stdio.
    pub mcp_cmd: Vec<String>,
    /// `--mcp-url [NAME=]URL`: streamable-HTTP MCP servers.
    pub mcp_url: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ToolChoiceError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Corpus(#[from] super::corpus::CorpusError),
}

impl ToolOptions {
    /// The MCP servers these flags name: `--mcp NAME` from `configured` (the config
    /// file's `[[mcp]]` entries), then `--mcp-cmd` lines.
    pub fn mcp_servers(
        &self,
        configured: &[super::mcp::McpConfig],
    ) -> Result<Vec<super::mcp::McpConfig>, ToolChoiceError> {
        let mut out = Vec::new();
        for name in &self.mcp {
            let Some(cfg) = configured.iter().find(|c| &c.name == name) else {
                let known: Vec<&str> = configured.iter().map(|c| c.name.as_str()).collect();
                return Err(ToolChoiceError::Invalid(match known.is_empty() {
                    true => format!("--mcp {name}: the config file has no [[mcp]] entries; add one with name = \"{name}\" and command = \"...\", or use --mcp-cmd"),
                    false => format!("--mcp {name}: no [[mcp]] entry of that name in the config file (entries: {})", known.join(", ")),
                }));
            };
            out.push(cfg.clone());
        }
        for line in &self.mcp_cmd {
            out.push(super::mcp::McpConfig::from_command_line(line).map_err(ToolChoiceError::Invalid)?);
        }
        for flag in &self.mcp_url {
            out.push(super::mcp::McpConfig::from_url_flag(flag).map_err(ToolChoiceError::Invalid)?);
        }
        if let Some(twice) = out.iter().enumerate().find(|(i, c)| out[..*i].iter().any(|o| o.name == c.name)) {
            return Err(ToolChoiceError::Invalid(format!(
                "two MCP servers are named {}; name one --mcp-url NAME=URL",
                twice.1.name
            )));
        }
        Ok(out)
    }

    /// The backend these flags choose, or `None` for the task's own. Problems met loading
    /// a corpus (bad files and lines) go to `warnings`.
    pub fn knowledge(&self, warnings: &mut Vec<String>) -> Result<Option<Arc<dyn KnowledgeBackend>>, ToolChoiceError> {
        let invalid = |m: &str| Err(ToolChoiceError::Invalid(m.to_string()));
        let kind = self
            .tools
            .or(self.corpus.as_ref().map(|_| BackendKind::Corpus))
            .or(self.wikipedia_url.as_ref().map(|_| BackendKind::Wikipedia));
        match kind {
            None => Ok(None),
            Some(BackendKind::Corpus) => {
                if self.wikipedia_url.is_some() {
                    return invalid("--wikipedia-url is for --tools wikipedia, not a corpus");
                }
                let Some(dir) = &self.corpus else {
                    return invalid("--tools corpus needs the folder of documents: --corpus DIR");
                };
                let corpus = super::corpus::Corpus::load_dir(dir)?;
                warnings.extend(corpus.warnings.iter().cloned());
                if corpus.is_empty() {
                    return Err(ToolChoiceError::Invalid(format!(
                        "{}: no documents (.md, .txt or .jsonl with title and text)",
                        dir.display()
                    )));
                }
                Ok(Some(Arc::new(corpus)))
            }
            Some(BackendKind::Wikipedia) => {
                if self.corpus.is_some() {
                    return invalid("--corpus is for --tools corpus, not wikipedia");
                }
                let mut options = WikipediaOptions::default();
                if let Some(url) = &self.wikipedia_url {
                    let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
                        return Err(ToolChoiceError::Invalid(format!(
                            "--wikipedia-url {url:?}: expected an http:// or https:// URL of api.php"
                        )));
                    };
                    let host = rest.split(['/', '?']).next().unwrap_or("");
                    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
                    let name = if host.starts_with('[') {
                        host.split(']').next().unwrap_or(host).trim_start_matches('[')
                    } else {
                        host.split(':').next().unwrap_or(host)
                    };
                    // A server on this machine is reached directly, never through a proxy.
                    options.no_proxy =
                        name == "localhost" || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
                    options.api_url = url.clone();
                }
                Ok(Some(Arc::new(LazyBackend::wikipedia(options))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_are_read_back_by_their_names() {
        for kind in BackendKind::ALL {
            assert_eq!(BackendKind::from_name(kind.name()), Some(kind));
            assert!(!kind.about().ends_with('.'), "help lines end without a period, as clap shows them");
        }
        assert_eq!(BackendKind::from_name("Corpus"), None);
    }

    fn args(tools: Option<BackendKind>, corpus: Option<&std::path::Path>, url: Option<&str>) -> ToolOptions {
        ToolOptions {
            tools,
            corpus: corpus.map(|p| p.to_path_buf()),
            wikipedia_url: url.map(str::to_string),
            mcp: vec![],
            mcp_cmd: vec![],
            mcp_url: vec![],
        }
    }

    #[test]
    fn tool_flags_choose_a_backend_or_leave_the_tasks_own() {
        let mut warnings = Vec::new();
        assert!(args(None, None, None).knowledge(&mut warnings).unwrap().is_none());
        let wiki = args(None, None, Some("http://127.0.0.1:9/w/api.php")).knowledge(&mut warnings).unwrap().unwrap();
        assert_eq!(wiki.name(), "wikipedia");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "# Alpha\nAlpha is a letter.\n").unwrap();
        std::fs::write(dir.path().join("b.jsonl"), "{\"title\": \"Beta\", \"text\": \"Beta too.\"}\nnot json\n")
            .unwrap();
        let corpus = args(None, Some(dir.path()), None).knowledge(&mut warnings).unwrap().unwrap();
        assert_eq!(corpus.name(), "corpus");
        assert!(warnings.iter().any(|w| w.contains("b.jsonl:2")), "{warnings:?}");
        let err = |a: ToolOptions| a.knowledge(&mut Vec::new()).err().unwrap().to_string();
        assert!(err(args(Some(BackendKind::Corpus), None, None)).contains("--corpus DIR"));
        assert!(err(args(Some(BackendKind::Wikipedia), Some(dir.path()), None)).contains("--corpus is for"));
        assert!(err(args(None, Some(dir.path()), Some("http://x"))).contains("--wikipedia-url is for"));
        assert!(err(args(None, None, Some("ftp://x"))).contains("http://"));
        assert!(err(args(None, Some(&dir.path().join("missing")), None)).contains("missing"));
    }

    #[tokio::test]
    async fn a_lazy_backend_is_built_once_on_first_search() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let made = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&made);
        let lazy = LazyBackend::new("corpus", move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let docs = [super::super::corpus::Document { title: "Alpha".into(), text: "Alpha is first.".into() }];
            Ok(Arc::new(super::super::corpus::Corpus::from_documents(docs)) as Arc<dyn KnowledgeBackend>)
        });
        assert_eq!(made.load(Ordering::SeqCst), 0);
        assert!(matches!(lazy.search("Alpha").await, Ok(SearchOutcome::Found(_))));
        assert!(matches!(lazy.search("Gamma").await, Ok(SearchOutcome::NotFound { .. })));
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }
}
