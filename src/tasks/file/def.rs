//! A task file as written (`task.toml`), read into a [`TaskDef`]: the definition a
//! session header records whole (prompts inlined, the corpus's documents inlined), and
//! the problem list. Every error names the file, the line and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::answer::{AnswerRule, CheckRule};

/// The call purposes a task file may give prompts for, with the variables each may use.
/// A purpose without a prompt is a capability the task lacks.
pub const PURPOSES: &[(&str, &[&str])] = &[
    ("io", &["input", "problem"]),
    ("cot", &["input", "problem"]),
    ("propose", &["input", "problem", "y", "steps", "step"]),
    ("sample", &["input", "problem", "y", "steps", "step"]),
    ("value", &["input", "problem", "y", "steps", "step", "answer"]),
    ("vote", &["input", "problem", "choices", "ys"]),
    ("react", &["input", "problem", "trajectory", "step", "tools"]),
    ("react_native", &["input", "problem", "trajectory", "step", "tools"]),
    ("judge", &["input", "problem", "answer", "gold", "rubric"]),
    ("feedback", &["input", "problem", "attempt"]),
    ("refine", &["input", "problem", "attempt", "feedback"]),
    ("reflect", &["input", "problem", "attempt", "feedback"]),
];

/// The judge's prompt of a `kind = "judge"` check that gives none of its own.
pub const JUDGE_PROMPT: &str = "[system]
You grade answers strictly by the rubric you are given.
[user]
Problem:
{{ input }}
{% if gold %}
Reference answer: {{ gold }}
{% endif %}
Rubric: {{ rubric }}

The answer to grade: {{ answer }}

Say in a sentence or two whether the answer meets the rubric, then end with a line `VERDICT: correct` or `VERDICT: incorrect`.
";

/// Most bytes of corpus documents a task file may inline into its sessions.
pub const MAX_CORPUS_BYTES: usize = 2 << 20;
/// Most problems a task file may list.
pub const MAX_PROBLEMS: usize = 100_000;

/// What went wrong reading a task file, where: one line, `file:line: key: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {key}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct DefError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

/// The resolved definition: everything the task needs but its problem list. Recorded in
/// session headers, so a session replays and forks without the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskDef {
    pub name: String,
    #[serde(default)]
    pub about: String,
    pub input_noun: String,
    #[serde(default)]
    pub input_hint: String,
    /// Template text by purpose (`io`, `cot`, `propose`, ...).
    pub prompts: BTreeMap<String, String>,
    #[serde(default)]
    pub answer: AnswerRule,
    pub check: CheckRule,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsDef>,
    /// io's completion limit and stop sequences, when the task says them (no task file
    /// can: `serve` sets them in memory for the open question, from the client's request,
    /// and the session header records them). Without: 400 tokens, no stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_call: Option<IoCall>,
}

/// What io's one call asks besides its turns (see [`TaskDef::io_call`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoCall {
    /// `None`: no limit is sent (the server's own applies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// The client's `top_p` and penalties (none: the server's own apply).
    #[serde(default, skip_serializing_if = "crate::protocol::Sampling::is_default")]
    pub sampling: crate::protocol::Sampling,
}

/// Tree search: how deep a full answer is, what a step must look like, how the value
/// evaluator's words count and how a vote is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeDef {
    /// Steps in a full answer (a state this deep is final).
    pub steps: usize,
    /// A regex every step but the last must match (a step checker); a step that does not
    /// is kept as a rejected candidate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_pattern: Option<String>,
    /// A regex the last step (the one that gives the answer) must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_pattern: Option<String>,
    /// A command that checks each candidate step (after the patterns): stdin
    /// `{"input", "steps", "step", "last"}`, stdout a verdict as a check command's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_command: Vec<String>,
    /// How long the step command may take, in milliseconds (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_timeout_ms: Option<u64>,
    /// The value evaluator's words and what each sample naming one adds (the paper's
    /// `impossible = 0.001, likely = 1, sure = 20`).
    #[serde(default)]
    pub value_classes: BTreeMap<String, f64>,
    /// A regex whose first group is the chosen state's number (1-based) in a vote reply;
    /// by default "the best choice is N".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote_pattern: Option<String>,
}

/// The built-in tools a ReAct task offers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolsDef {
    /// The corpus documents search/lookup read, by file name, with their text.
    #[serde(default)]
    pub corpus: Vec<CorpusFile>,
    /// Also offer `calculate`.
    #[serde(default)]
    pub calculate: bool,
    /// Also offer the math tools: `calc`, `algebra`, `lp`, `count`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub math: bool,
    /// MCP servers (by their `[[mcp]]` names) whose tools the task needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp: Vec<String>,
    /// The MCP servers' tools a run offered (recorded, so a replay offers the same).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_tools: Vec<crate::tools::mcp::McpToolDef>,
    /// The MCP servers a run started, as recorded (secret-looking `env` values redacted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<crate::tools::mcp::McpConfig>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorpusFile {
    pub name: String,
    pub text: String,
}

/// One problem: its input, gold answer, correct steps (for `sim`) and facets, and every
/// field of its row (templates read them as `problem.<field>`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileProblem {
    pub input: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facets: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub fields: serde_json::Map<String, serde_json::Value>,
}

// ---- The file as written.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDef {
    name: String,
    #[serde(default)]
    about: String,
    #[serde(default)]
    input_noun: Option<String>,
    #[serde(default)]
    input_hint: Option<String>,
    problems: RawProblems,
    prompts: BTreeMap<String, RawPrompt>,
    #[serde(default)]
    answer: AnswerRule,
    check: CheckRule,
    #[serde(default)]
    tree: Option<TreeDef>,
    #[serde(default)]
    tools: Option<RawTools>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProblems {
    /// A `.jsonl`, `.json` (an array of objects) or `.csv` file, relative to the task file.
    #[serde(default)]
    file: Option<String>,
    /// Problems written in the task file itself.
    #[serde(default)]
    items: Vec<toml::Table>,
    #[serde(default = "default_input_field")]
    input: String,
    #[serde(default = "default_gold_field")]
    gold: String,
    #[serde(default = "default_steps_field")]
    steps: String,
    #[serde(default)]
    facets: Vec<String>,
}

fn default_input_field() -> String {
    "input".into()
}
fn default_gold_field() -> String {
    "answer".into()
}
fn default_steps_field() -> String {
    "steps".into()
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawPrompt {
    Text(String),
    File { file: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTools {
    /// A folder of `.md`/`.txt`/`.jsonl` documents, relative to the task file.
    #[serde(default)]
    corpus: Option<String>,
    #[serde(default)]
    calculate: bool,
    #[serde(default)]
    math: bool,
    #[serde(default)]
    mcp: Vec<String>,
}

/// A task file read: its definition, its problems, and warnings (skipped corpus files).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub def: TaskDef,
    pub problems: Vec<FileProblem>,
    /// The file read (`task.toml` inside a folder).
    pub path: PathBuf,
    pub warnings: Vec<String>,
}

/// The task file at `path`: a `.toml` file, or a folder holding `task.toml`.
pub fn task_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("task.toml")
    } else {
        path.to_path_buf()
    }
}

/// Read and check the task file at `path` (a file or a folder with `task.toml`), by the
/// safe reader's rules ([`crate::userfile::TASK`]: a regular file of at most 1 MiB).
pub fn load(path: &Path) -> Result<Loaded, DefError> {
    let file = task_file(path);
    let text = crate::userfile::read_text(&file, &crate::userfile::TASK).map_err(|e| DefError {
        file: file.clone(),
        line: None,
        key: "file".into(),
        message: format!("cannot read it: {}", e.reason()),
    })?;
    parse(&file, &text)
}

/// Largest problem (a row of `[problems] file`, as its JSON) a task file may list: the
/// `--data` rule for one line (a problem goes whole into each of its sessions' headers).
pub const MAX_ROW_BYTES: usize = 1024 * 1024;

/// `name`, a file the task file names under `key`, as a path inside the task's folder
/// `base`, or the line that says why not: no absolute path, no `..`, and no link that
/// leads out of the folder (a task folder someone shares cannot read the user's files).
pub fn inside_folder(base: &Path, name: &str) -> Result<PathBuf, String> {
    use std::path::Component;
    let rel = Path::new(name);
    let outside = rel.is_absolute()
        || rel.components().any(|c| matches!(c, Component::ParentDir | Component::RootDir | Component::Prefix(_)));
    let shown = crate::userfile::clip(name, 80);
    if outside || name.trim().is_empty() {
        return Err(format!(
            "{shown:?} is not a path inside the task's folder: a task file names its files relative to its folder, \
             with no absolute path and no .."
        ));
    }
    let folder = if base.as_os_str().is_empty() { Path::new(".") } else { base };
    let root = std::fs::canonicalize(folder).map_err(|e| format!("cannot read the task's folder: {e}"))?;
    let real = std::fs::canonicalize(folder.join(rel)).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !real.starts_with(&root) {
        return Err(format!("{shown} is a link out of the task's folder: a task file reads only files in its folder"));
    }
    Ok(real)
}

/// Read and check a task file's text; `file` names it in errors and anchors its
/// relative paths.
pub fn parse(file: &Path, text: &str) -> Result<Loaded, DefError> {
    let raw: RawDef = toml::from_str(text).map_err(|e| syntax_error(file, text, &e))?;
    let at = Locator { file, text };
    let base = file.parent().unwrap_or(Path::new("."));
    let name = raw.name.trim().to_string();
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '/' || c == '\\') {
        return Err(at.error(&[], "name", "a task name is one word without spaces or slashes (e.g. word-problems)"));
    }
    let mut warnings = Vec::new();
    let mut prompts = read_prompts(&at, base, raw.prompts, &mut warnings)?;
    super::answer::validate(&raw.answer, &raw.check).map_err(|(section, key, m)| at.error(&[section], key, &m))?;
    match (raw.check.kind == super::answer::CheckKind::Judge, prompts.contains_key("judge")) {
        (true, false) => {
            prompts.insert("judge".into(), JUDGE_PROMPT.into());
        }
        (false, true) => {
            return Err(at.error(&["prompts"], "judge", "a judge prompt is for [check] kind = \"judge\""));
        }
        _ => {}
    }
    if let Some(tree) = &raw.tree {
        validate_tree(&at, tree, &prompts)?;
    } else if let Some(p) = ["propose", "sample", "value", "vote"].into_iter().find(|p| prompts.contains_key(*p)) {
        return Err(at.error(&["prompts"], p, "a tree-search prompt needs a [tree] table (its steps, at least)"));
    }
    let tools = match raw.tools {
        Some(t) => Some(read_tools(&at, base, t)?),
        None => None,
    };
    if prompts.contains_key("react")
        != tools.as_ref().is_some_and(|(t, _)| !t.corpus.is_empty() || t.calculate || t.math || !t.mcp.is_empty())
    {
        let key = if prompts.contains_key("react") { "react" } else { "tools" };
        return Err(at.error(&["prompts", "tools"], key, "a react prompt and a [tools] table go together"));
    }
    if prompts.contains_key("react_native") && !prompts.contains_key("react") {
        return Err(at.error(&["prompts"], "react_native", "a react_native prompt goes with a react prompt"));
    }
    let problems = read_problems(&at, base, &raw.problems)?;
    if let Some(tree) = &raw.tree {
        if let Some((i, p)) =
            problems.iter().enumerate().find(|(_, p)| !p.steps.is_empty() && p.steps.len() != tree.steps)
        {
            let n = p.steps.len();
            return Err(at.error(
                &["problems"],
                &raw.problems.steps,
                &format!("problem {i} lists {n} correct steps; [tree] steps is {}", tree.steps),
            ));
        }
    }
    let def = TaskDef {
        input_noun: raw.input_noun.unwrap_or_else(|| "problem".into()),
        input_hint: raw.input_hint.unwrap_or_default(),
        name,
        about: raw.about,
        prompts,
        answer: raw.answer,
        check: raw.check,
        tree: raw.tree,
        tools: tools.as_ref().map(|(t, _)| t.clone()),
        io_call: None,
    };
    warnings.extend(tools.map(|(_, w)| w).unwrap_or_default());
    Ok(Loaded { def, problems, path: file.to_path_buf(), warnings })
}

/// A TOML error as one line: the file, the line it points at, the key on that line.
fn syntax_error(file: &Path, text: &str, e: &toml::de::Error) -> DefError {
    let line = e.span().map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    let key = line
        .and_then(|l| text.lines().nth(l - 1))
        .map(|l| l.split('=').next().unwrap_or("").trim().trim_matches(['[', ']']).to_string())
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| "toml".into());
    let message = e.message().lines().next().unwrap_or("not valid TOML").trim().to_string();
    DefError { file: file.to_path_buf(), line, key, message }
}

/// Finds the line of a key in the file's text, for errors found after parsing.
struct Locator<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Locator<'_> {
    /// An error at `key`: on its line under the first of `sections` that has it (`[]`:
    /// the top level), else at the first section's header.
    fn error(&self, sections: &[&str], key: &str, message: &str) -> DefError {
        let found = sections.iter().find_map(|s| self.line_of(&[s], key).map(|l| (Some(l), format!("{s}.{key}"))));
        let (line, key) = match (found, sections.first()) {
            (Some(found), _) => found,
            (None, Some(s)) => (self.line_of(&[s], key), format!("{s}.{key}")),
            (None, None) => (self.line_of(&[], key), key.to_string()),
        };
        DefError { file: self.file.to_path_buf(), line, key, message: message.to_string() }
    }

    fn line_of(&self, sections: &[&str], key: &str) -> Option<usize> {
        let mut current = String::new();
        let mut header = None;
        let key_line = |line: &str| {
            let k = line.split('=').next().unwrap_or("").trim().trim_matches('"');
            line.contains('=') && (k == key || k.rsplit('.').next() == Some(key))
        };
        for (i, line) in self.text.lines().enumerate() {
            let t = line.trim();
            if t.starts_with('[') && !t.contains('=') {
                current = t.trim_matches(['[', ']']).trim().to_string();
                if header.is_none() && sections.iter().any(|s| current == *s) {
                    header = Some(i + 1);
                }
                continue;
            }
            let in_section =
                if sections.is_empty() { current.is_empty() } else { sections.contains(&current.as_str()) };
            if in_section && key_line(t) {
                return Some(i + 1);
            }
        }
        header
    }
}

fn read_prompts(
    at: &Locator,
    base: &Path,
    raw: BTreeMap<String, RawPrompt>,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, String>, DefError> {
    let mut prompts = BTreeMap::new();
    for (purpose, prompt) in raw {
        let Some((_, vars)) = PURPOSES.iter().find(|(p, _)| *p == purpose) else {
            let known: Vec<&str> = PURPOSES.iter().map(|(p, _)| *p).collect();
            return Err(at.error(&["prompts"], &purpose, &format!("no such prompt (prompts: {})", known.join(", "))));
        };
        let text = match prompt {
            RawPrompt::Text(text) => text,
            RawPrompt::File { file } => read_inside(base, &file, &crate::userfile::TEMPLATE)
                .map_err(|m| at.error(&["prompts"], &purpose, &m))?,
        };
        super::template::check(&text, vars).map_err(|m| at.error(&["prompts"], &purpose, &m))?;
        if let Some(m) = control_character(&text) {
            warnings.push(at.error(&["prompts"], &purpose, &m).to_string());
        }
        prompts.insert(purpose, text);
    }
    // Every task answers whole (io) and with a chain of thought (cot): the core methods
    // and the feedback methods build on them.
    for core in ["io", "cot"] {
        if !prompts.contains_key(core) {
            return Err(at.error(&["prompts"], core, &format!("every task has an {core} prompt (the core: io, cot)")));
        }
    }
    Ok(prompts)
}

/// What a template's control character (other than a line break or tab) is, if it has
/// one: most often a TOML escape the writer did not mean (`\\b` of `\\boxed` in a `"""` string).
fn control_character(text: &str) -> Option<String> {
    // A carriage return is a line break's only before \n (\rightarrow in a """ string is one alone).
    let lone = |at: usize, c: char| c == '\r' && !text[at + 1..].starts_with('\n');
    let (at, c) =
        text.char_indices().find(|&(at, c)| c.is_control() && (!matches!(c, '\n' | '\t' | '\r') || lone(at, c)))?;
    let line = text[..at].matches('\n').count() + 1;
    let escape = match c {
        '\u{8}' => " (\\b: in a \"\"\" string, \\boxed starts with a backspace)",
        '\u{c}' => " (\\f: in a \"\"\" string, \\frac starts with a form feed)",
        '\r' => " (\\r: in a \"\"\" string, \\rightarrow starts with a carriage return)",
        _ => "",
    };
    Some(format!(
        "line {line} of the template holds the control character U+{:04X}{escape}; a model sees it as it is: \
         write prompts in ''' strings (kept as written) or double the backslash",
        c as u32
    ))
}

fn validate_tree(at: &Locator, tree: &TreeDef, prompts: &BTreeMap<String, String>) -> Result<(), DefError> {
    let err = |key: &str, m: &str| at.error(&["tree"], key, m);
    if !(1..=20).contains(&tree.steps) {
        return Err(err("steps", &format!("{} is out of range: a tree search takes 1 to 20 steps", tree.steps)));
    }
    for (key, pattern) in [("step_pattern", &tree.step_pattern), ("final_pattern", &tree.final_pattern)] {
        if let Some(p) = pattern {
            regex::Regex::new(p)
                .map_err(|e| err(key, &format!("not a valid regex: {}", first_line(&e.to_string()))))?;
        }
    }
    if !tree.step_command.is_empty() && tree.step_command[0].trim().is_empty() {
        return Err(err("step_command", "step_command = [\"program\", \"arg\", ...] names a program first"));
    }
    if tree.step_timeout_ms.is_some() && tree.step_command.is_empty() {
        return Err(err("step_timeout_ms", "step_timeout_ms is for a step_command"));
    }
    if tree.step_timeout_ms.is_some_and(|t| !(1..=600_000).contains(&t)) {
        return Err(err("step_timeout_ms", "out of range: 1 to 600000 milliseconds"));
    }
    if let Some(p) = &tree.vote_pattern {
        let re = regex::Regex::new(p).map_err(|e| err("vote_pattern", &format!("not a valid regex: {e}")))?;
        if re.captures_len() < 2 {
            return Err(err("vote_pattern", "needs a group that captures the chosen number, e.g. (\\d+)"));
        }
    }
    if !prompts.contains_key("propose") && !prompts.contains_key("sample") {
        return Err(err("steps", "a tree search needs a propose or a sample prompt"));
    }
    if !prompts.contains_key("value") && !prompts.contains_key("vote") {
        return Err(err("steps", "a tree search needs a value or a vote prompt to judge its states"));
    }
    if prompts.contains_key("value") && tree.value_classes.is_empty() {
        return Err(err(
            "value_classes",
            "a value prompt needs its words and their values, e.g. { impossible = 0.001, likely = 1, sure = 20 }",
        ));
    }
    for (word, v) in &tree.value_classes {
        if word.is_empty() || !word.chars().all(char::is_alphabetic) || !v.is_finite() || *v < 0.0 {
            return Err(err(
                "value_classes",
                &format!("{word:?} = {v}: a class is one word with a value of 0 or more"),
            ));
        }
    }
    Ok(())
}

fn first_line(text: &str) -> String {
    text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("").to_string()
}

fn read_tools(at: &Locator, base: &Path, raw: RawTools) -> Result<(ToolsDef, Vec<String>), DefError> {
    let mut corpus = Vec::new();
    let mut warnings = Vec::new();
    if let Some(folder) = raw.corpus {
        let err = |m: String| at.error(&["tools"], "corpus", &m);
        let dir = inside_folder(base, &folder).map_err(err)?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| err(format!("cannot read the folder {folder}: {e}")))?
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        files.sort();
        let mut total = 0;
        for path in files {
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
            let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
            if !matches!(ext.as_str(), "md" | "txt" | "jsonl") || name == crate::tools::corpus::QUESTIONS_FILE {
                continue;
            }
            // As `--corpus` reads a folder: regular files inside it only, each skip said.
            match crate::tools::corpus::read_confined(&dir, &path) {
                Ok(text) => {
                    total += text.len();
                    corpus.push(CorpusFile { name, text });
                }
                Err(why) => warnings.push(format!("{}: {why}; skipped", path.display())),
            }
        }
        if total > MAX_CORPUS_BYTES {
            return Err(err(format!(
                "{folder} holds {total} bytes of documents; a task file's corpus is at most {MAX_CORPUS_BYTES} (its sessions carry it)"
            )));
        }
        if corpus.is_empty() {
            return Err(err(format!("{folder} has no .md, .txt or .jsonl documents")));
        }
        let built = super::corpus_of(&corpus);
        warnings.extend(built.warnings.iter().cloned());
    }
    Ok((ToolsDef { corpus, calculate: raw.calculate, math: raw.math, mcp: raw.mcp, ..ToolsDef::default() }, warnings))
}

/// The text of `file` inside the task's folder, by the safe reader's rules for `kind`.
fn read_inside(base: &Path, file: &str, kind: &crate::userfile::Kind) -> Result<String, String> {
    let path = inside_folder(base, file)?;
    let shown = crate::userfile::clip(file, 80);
    crate::userfile::read_text(&path, kind).map_err(|e| format!("cannot read {shown}: {}", e.reason()))
}

fn read_problems(at: &Locator, base: &Path, raw: &RawProblems) -> Result<Vec<FileProblem>, DefError> {
    let mut rows: Vec<(String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for (i, item) in raw.items.iter().enumerate() {
        let value = serde_json::to_value(item).map_err(|e| at.error(&["problems"], "items", &e.to_string()))?;
        if let serde_json::Value::Object(map) = value {
            rows.push((format!("items[{i}]"), map));
        }
    }
    if let Some(file) = &raw.file {
        let err = |m: String| at.error(&["problems"], "file", &m);
        let text = read_inside(base, file, &crate::userfile::DATA).map_err(err)?;
        let ext = Path::new(file).extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        let read = match ext.as_deref() {
            Some("jsonl") => super::rows::jsonl(&text),
            Some("json") => super::rows::json(&text),
            Some("csv") => super::rows::csv(&text),
            _ => Err(format!("{file}: problems are read from .jsonl, .json or .csv")),
        };
        let read = read.and_then(|rows| match rows.iter().find(|(_, r)| row_bytes(r) > MAX_ROW_BYTES) {
            Some((w, r)) => Err(format!(
                "{w}: a problem of {} bytes; one problem is at most {} (it goes into each session's header)",
                row_bytes(r),
                crate::userfile::size_text(MAX_ROW_BYTES as u64)
            )),
            None => Ok(rows),
        });
        rows.extend(
            read.map_err(|m| err(format!("{file}: {m}")))?.into_iter().map(|(w, r)| (format!("{file}:{w}"), r)),
        );
    }
    if rows.is_empty() {
        return Err(at.error(&["problems"], "file", "no problems: give a file, or items = [{ input = \"...\" }, ...]"));
    }
    if rows.len() > MAX_PROBLEMS {
        return Err(at.error(&["problems"], "file", &format!("{} problems; at most {MAX_PROBLEMS}", rows.len())));
    }
    let mut problems = Vec::with_capacity(rows.len());
    for (where_, row) in rows {
        let err = |key: &str, m: String| at.error(&["problems"], key, &format!("{where_}: {m}"));
        let input = match row.get(&raw.input).map(text_of) {
            Some(Some(t)) if !t.trim().is_empty() => t.trim().to_string(),
            _ => return Err(err("input", format!("no text in the field {:?} (the input)", raw.input))),
        };
        let gold = match row.get(&raw.gold) {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(text_of(v).ok_or_else(|| err("gold", format!("the field {:?} is not text", raw.gold)))?),
        };
        let steps = match row.get(&raw.steps) {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .map(|s| text_of(s).filter(|t| !t.contains('\n')))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| err("steps", format!("the field {:?} is a list of one-line texts", raw.steps)))?,
            Some(_) => return Err(err("steps", format!("the field {:?} is a list of steps", raw.steps))),
        };
        let mut facets = BTreeMap::new();
        for f in &raw.facets {
            if let Some(t) = row.get(f).and_then(text_of) {
                facets.insert(f.clone(), t);
            }
        }
        problems.push(FileProblem { input, gold, steps, facets, fields: row });
    }
    Ok(problems)
}

/// The size of a problem's row as JSON.
fn row_bytes(row: &serde_json::Map<String, serde_json::Value>) -> usize {
    serde_json::to_string(row).map_or(usize::MAX, |t| t.len())
}

/// A JSON value as text: a string as it is, a number or a bool written out.
pub fn text_of(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}
