//! The offline knowledge backend: a folder of documents.
//!
//! * `.txt` / `.md`: the title is the first line when it is a `# heading`, else the file
//!   stem; the body is the rest;
//! * `.jsonl`: one `{"title": ..., "text": ...}` per line.
//!
//! `questions.jsonl` (a task's questions next to its corpus) is not a document file. Bad
//! files and lines become warnings naming the file and line; the rest is loaded.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::knowledge::{KnowledgeBackend, KnowledgeError, Page, SearchOutcome, SIMILAR_TITLES};
use super::text::{overlap_score, split_sentences, title_key, tokens};
use super::BoxFuture;

/// The file in a corpus folder that holds questions, not documents.
pub const QUESTIONS_FILE: &str = "questions.jsonl";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub title: String,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("cannot read the corpus folder {path}: {source}")]
    Folder { path: PathBuf, source: std::io::Error },
}

#[derive(Debug, Clone)]
struct Entry {
    page: Page,
    title_tokens: Vec<String>,
    body_tokens: HashSet<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Corpus {
    entries: Vec<Entry>,
    by_key: HashMap<String, usize>,
    /// Problems met while loading ("file:line: why"), in file order.
    pub warnings: Vec<String>,
}

impl Corpus {
    /// Build from documents; a repeated title (by key) keeps the first and warns.
    pub fn from_documents(docs: impl IntoIterator<Item = Document>) -> Corpus {
        let mut corpus = Corpus::default();
        for doc in docs {
            corpus.add(doc, None);
        }
        corpus
    }

    /// Load every `.txt`, `.md` and `.jsonl` file of `dir` (not recursive), in name order.
    ///
    /// Only regular files inside the folder are read: a symlink is followed only when its
    /// target (canonicalized) is a regular file inside the canonical folder, so a link to
    /// `/proc/self/environ`, `/etc/passwd` or `../x` is skipped; FIFOs, devices and sockets
    /// are skipped without being opened, and so is a file over [`MAX_DOCUMENT_BYTES`].
    /// Each skip is a warning naming the file.
    pub fn load_dir(dir: &Path) -> Result<Corpus, CorpusError> {
        let folder_error = |source| CorpusError::Folder { path: dir.to_path_buf(), source };
        let root = std::fs::canonicalize(dir).map_err(folder_error)?;
        let mut files: Vec<PathBuf> = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(folder_error)? {
            let entry = entry.map_err(folder_error)?;
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if !is_dir {
                files.push(entry.path());
            }
        }
        files.sort();
        let mut corpus = Corpus::default();
        for path in files {
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
            if !matches!(ext.as_str(), "txt" | "md" | "jsonl") || path.file_name().is_some_and(|n| n == QUESTIONS_FILE)
            {
                continue;
            }
            match read_confined(&root, &path) {
                Ok(text) => corpus.load_text(&path, &text),
                Err(why) => corpus.warnings.push(format!("{}: {why}; skipped", path.display())),
            }
        }
        Ok(corpus)
    }

    /// Add the documents of one file's text; `path` names it in warnings and decides the format.
    pub fn load_text(&mut self, path: &Path, text: &str) {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
        if ext == "jsonl" {
            self.load_jsonl(path, text);
            return;
        }
        let doc = parse_text_document(path, text);
        if doc.text.trim().is_empty() {
            self.warnings.push(format!("{}: the document '{}' has no text; skipped", path.display(), doc.title));
        } else {
            self.add(doc, Some(format!("{}", path.display())));
        }
    }

    fn load_jsonl(&mut self, path: &Path, text: &str) {
        for (i, line) in text.lines().enumerate() {
            let at = format!("{}:{}", path.display(), i + 1);
            if line.trim().is_empty() {
                continue;
            }
            let value: serde_json::Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(e) => {
                    self.warnings.push(format!("{at}: not valid JSON ({e}); line skipped"));
                    continue;
                }
            };
            let title = value.get("title").and_then(|t| t.as_str()).map(str::trim).filter(|t| !t.is_empty());
            let body = value.get("text").and_then(|t| t.as_str()).filter(|t| !t.trim().is_empty());
            match (title, body) {
                (Some(title), Some(body)) => {
                    self.add(Document { title: title.to_string(), text: body.to_string() }, Some(at));
                }
                (None, _) => self.warnings.push(format!("{at}: needs a non-empty string \"title\"; line skipped")),
                (Some(_), None) => self.warnings.push(format!("{at}: needs a non-empty string \"text\"; line skipped")),
            }
        }
    }

    fn add(&mut self, doc: Document, at: Option<String>) {
        let key = title_key(&doc.title);
        if key.is_empty() {
            self.warnings.push(format!(
                "{}: the title '{}' has no letters or digits; skipped",
                at.unwrap_or_default(),
                doc.title
            ));
            return;
        }
        if let Some(&first) = self.by_key.get(&key) {
            let kept = &self.entries[first].page.title;
            self.warnings.push(format!(
                "{}: a second document titled '{}' (the first, '{kept}', is kept)",
                at.unwrap_or_else(|| "documents".into()),
                doc.title
            ));
            return;
        }
        let title_tokens = tokens(&doc.title);
        let body_tokens: HashSet<String> = tokens(&doc.text).into_iter().collect();
        let page = Page { title: doc.title, sentences: split_sentences(&doc.text) };
        self.by_key.insert(key, self.entries.len());
        self.entries.push(Entry { page, title_tokens, body_tokens });
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn titles(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.page.title.as_str()).collect()
    }

    pub fn page(&self, title: &str) -> Option<&Page> {
        self.by_key.get(&title_key(title)).map(|&i| &self.entries[i].page)
    }

    /// The page titled `entity` (case, underscores and punctuation ignored), else the titles
    /// sharing the most words with it.
    pub fn find(&self, entity: &str) -> SearchOutcome {
        if let Some(page) = self.page(entity) {
            return SearchOutcome::Found(page.clone());
        }
        let query = tokens(entity);
        let mut scored: Vec<(u32, &str)> = self
            .entries
            .iter()
            .map(|e| (overlap_score(&query, &e.title_tokens, &e.body_tokens), e.page.title.as_str()))
            .filter(|(score, _)| *score > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        SearchOutcome::NotFound {
            similar: scored.into_iter().take(SIMILAR_TITLES).map(|(_, t)| t.to_string()).collect(),
        }
    }
}

/// The largest document file a corpus folder may hold (bigger ones are skipped with a warning).
pub const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;

/// The text of `path`, a file of the canonical folder `root`, or why it is not read: it must
/// resolve inside `root`, be a regular file (checked before opening, so a FIFO is never
/// opened and cannot hang the load) and be at most [`MAX_DOCUMENT_BYTES`].
pub fn read_confined(root: &Path, path: &Path) -> Result<String, String> {
    use std::io::Read;
    let real = std::fs::canonicalize(path).map_err(|e| format!("cannot resolve: {e}"))?;
    if !real.starts_with(root) {
        return Err(format!("a link to {}, outside the corpus folder", real.display()));
    }
    // `real` has no symlink left in it: this is the file itself.
    let meta = std::fs::symlink_metadata(&real).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file (a device, FIFO, socket or folder)".to_string());
    }
    let too_big = |len: u64| format!("larger than {} MiB ({len} bytes)", MAX_DOCUMENT_BYTES / (1024 * 1024));
    if meta.len() > MAX_DOCUMENT_BYTES {
        return Err(too_big(meta.len()));
    }
    let file = std::fs::File::open(&real).map_err(|e| format!("cannot read: {e}"))?;
    // What was opened is still a regular file (not swapped since the check).
    let opened = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !opened.file_type().is_file() {
        return Err("not a regular file (a device, FIFO, socket or folder)".to_string());
    }
    let mut bytes = Vec::new();
    file.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|_| "cannot read: not UTF-8 text".to_string())
}

/// Title from a leading `# heading` line, else the file stem (underscores as spaces).
fn parse_text_document(path: &Path, text: &str) -> Document {
    let text = text.trim_start_matches('\u{feff}');
    let mut lines = text.lines();
    let first = lines.by_ref().find(|l| !l.trim().is_empty()).unwrap_or("");
    if let Some(heading) = first.trim().strip_prefix("# ") {
        let body: Vec<&str> = lines.collect();
        return Document { title: heading.trim().to_string(), text: body.join("\n") };
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("untitled").replace('_', " ");
    Document { title: stem, text: text.to_string() }
}

impl KnowledgeBackend for Corpus {
    fn name(&self) -> &str {
        "corpus"
    }

    fn search<'a>(&'a self, entity: &'a str) -> BoxFuture<'a, Result<SearchOutcome, KnowledgeError>> {
        Box::pin(async move { Ok(self.find(entity)) })
    }
}

// ---------------------------------------------------------------------------------------------
// The qa-demo corpus and questions, compiled in (the files live in assets/corpus/qa-demo/)
// ---------------------------------------------------------------------------------------------

/// The `qa-demo` documents: (file name, text).
pub const QA_DEMO_FILES: [(&str, &str); 32] = [
    ("ambry_river.md", include_str!("../../assets/corpus/qa-demo/ambry_river.md")),
    ("anselm_kray.md", include_str!("../../assets/corpus/qa-demo/anselm_kray.md")),
    ("callow_river.md", include_str!("../../assets/corpus/qa-demo/callow_river.md")),
    ("comet_lund_hara.md", include_str!("../../assets/corpus/qa-demo/comet_lund_hara.md")),
    ("corran_opera_house.md", include_str!("../../assets/corpus/qa-demo/corran_opera_house.md")),
    ("dunhallow.md", include_str!("../../assets/corpus/qa-demo/dunhallow.md")),
    ("eskerby.md", include_str!("../../assets/corpus/qa-demo/eskerby.md")),
    ("grey_sea.md", include_str!("../../assets/corpus/qa-demo/grey_sea.md")),
    ("halden_cross.md", include_str!("../../assets/corpus/qa-demo/halden_cross.md")),
    ("harbour_at_dusk.md", include_str!("../../assets/corpus/qa-demo/harbour_at_dusk.md")),
    ("ilse_varga.md", include_str!("../../assets/corpus/qa-demo/ilse_varga.md")),
    ("jory_fenwick.md", include_str!("../../assets/corpus/qa-demo/jory_fenwick.md")),
    ("kray_institute.md", include_str!("../../assets/corpus/qa-demo/kray_institute.md")),
    ("maren_holt.md", include_str!("../../assets/corpus/qa-demo/maren_holt.md")),
    ("marrowick.md", include_str!("../../assets/corpus/qa-demo/marrowick.md")),
    ("mount_highfell.md", include_str!("../../assets/corpus/qa-demo/mount_highfell.md")),
    ("northern_survey.md", include_str!("../../assets/corpus/qa-demo/northern_survey.md")),
    ("oren_calloway.md", include_str!("../../assets/corpus/qa-demo/oren_calloway.md")),
    ("petra_lund.md", include_str!("../../assets/corpus/qa-demo/petra_lund.md")),
    ("port_celest.md", include_str!("../../assets/corpus/qa-demo/port_celest.md")),
    ("sable_bridge.md", include_str!("../../assets/corpus/qa-demo/sable_bridge.md")),
    ("saltmere_lighthouse.md", include_str!("../../assets/corpus/qa-demo/saltmere_lighthouse.md")),
    ("saren_observatory.md", include_str!("../../assets/corpus/qa-demo/saren_observatory.md")),
    ("tessel_river.md", include_str!("../../assets/corpus/qa-demo/tessel_river.md")),
    ("the_glass_orchard.md", include_str!("../../assets/corpus/qa-demo/the_glass_orchard.md")),
    ("the_lantern_keeper.md", include_str!("../../assets/corpus/qa-demo/the_lantern_keeper.md")),
    ("tomas_reule.md", include_str!("../../assets/corpus/qa-demo/tomas_reule.md")),
    ("university_of_marrowick.md", include_str!("../../assets/corpus/qa-demo/university_of_marrowick.md")),
    ("veloria.md", include_str!("../../assets/corpus/qa-demo/veloria.md")),
    ("velorian_mark.md", include_str!("../../assets/corpus/qa-demo/velorian_mark.md")),
    ("weller_gallery.md", include_str!("../../assets/corpus/qa-demo/weller_gallery.md")),
    ("wend_river.md", include_str!("../../assets/corpus/qa-demo/wend_river.md")),
];

pub const QA_DEMO_QUESTIONS: &str = include_str!("../../assets/corpus/qa-demo/questions.jsonl");

/// The built-in `qa-demo` corpus: fictional documents written for two-hop questions.
pub fn qa_demo() -> Corpus {
    let mut corpus = Corpus::default();
    for (name, text) in QA_DEMO_FILES {
        corpus.load_text(Path::new(name), text);
    }
    corpus
}

/// A question answered by combining two pages: search `hops[0]`, then `hops[1]`, then
/// `lookup[keyword]` in the second finds a sentence with the answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QaQuestion {
    pub question: String,
    pub answer: String,
    pub hops: Vec<String>,
    pub keyword: String,
}

/// Parse a questions file (JSON Lines); an error names the line.
pub fn parse_questions(name: &str, text: &str) -> Result<Vec<QaQuestion>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: QaQuestion = serde_json::from_str(line).map_err(|e| format!("{name}:{}: {e}", i + 1))?;
        out.push(q);
    }
    Ok(out)
}

/// The built-in `qa-demo` questions.
pub fn qa_demo_questions() -> Result<Vec<QaQuestion>, String> {
    parse_questions(QUESTIONS_FILE, QA_DEMO_QUESTIONS)
}
