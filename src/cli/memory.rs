//! `thoughtscope memory ...`: read and edit the named cross-problem memories ReTreVal
//! keeps under the data directory (`$THOUGHTSCOPE_DATA_DIR/memory/<name>.json`).
//!
//! The memory is `--name NAME`, else the one runs on a task with a model use by default
//! (`retreval-<task>-<model>` for `--task` and `--model`; `retreval-<task>`, the one every
//! model shared before memories were named per model, without `--model`), else the
//! config's `defaults.memory`, else its default task's, else the default task's. Text from a memory is printed through the safe
//! printers: a lesson a model wrote cannot send terminal controls.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use color_eyre::eyre::{eyre, Report, Result};

use thoughtscope::memory::persist::{self, PersistError};
use thoughtscope::memory::{Entry, EntryId, Evidence, Memory, MemoryError, MemoryStore};
use thoughtscope::runtime::memory::task_default;
use thoughtscope::safe_text::is_unsafe;
use thoughtscope::tasks::{self, TaskError};

use super::error::{usage_bail, UserError};
use super::pipe::outln;

#[derive(Args, Debug)]
pub(crate) struct MemoryArgs {
    /// The memory: 1 to 64 letters, digits, '.', '_' or '-', as `run --memory` names it (`--name`
    /// is the same) [default: the one runs on the task use].
    #[arg(long = "memory", visible_alias = "name", value_name = "NAME", global = true)]
    pub(crate) name: Option<String>,
    /// Use the memory runs on this task use by default (retreval-<task>-<model> with --model,
    /// else the shared retreval-<task>) [default: the config's defaults.memory, else its task,
    /// else game24].
    #[arg(long, global = true, conflicts_with = "name")]
    pub(crate) task: Option<String>,
    /// With --task: the model whose memory it is (runs name their default memory per task
    /// and model, so one model's lessons do not steer another's).
    #[arg(long, global = true, conflicts_with = "name", value_name = "MODEL")]
    pub(crate) model: Option<String>,
    #[command(subcommand)]
    pub(crate) cmd: MemoryCmd,
}

#[derive(Subcommand, Debug)]
pub(crate) enum MemoryCmd {
    /// The entries, most useful first (confidence × hits).
    List {
        /// One JSON object: name, path, entries (in this order) and approach reliabilities.
        #[arg(long)]
        json: bool,
    },
    /// One entry in full: its text, evidence, signals and past versions.
    Show {
        id: EntryId,
        #[arg(long)]
        json: bool,
    },
    /// Change an entry's text (a new version), confidence or pin.
    Edit {
        id: EntryId,
        /// The new text (the old one is kept in the entry's history).
        #[arg(long)]
        content: Option<String>,
        /// A confidence between 0 and 1.
        #[arg(long)]
        confidence: Option<f64>,
        /// Keep the entry through consolidation, whatever its confidence.
        #[arg(long, conflicts_with = "unpin")]
        pin: bool,
        #[arg(long)]
        unpin: bool,
    },
    /// Remove an entry.
    Rm { id: EntryId },
    /// Remove every entry and approach reliability.
    Clear {
        /// Really clear it (without this, clear says what it would remove).
        #[arg(long)]
        yes: bool,
    },
    /// Write the memory as JSON (the file format `import` reads).
    Export {
        /// Write to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Load an exported memory: into an empty or new memory, or with --merge into this one.
    Import {
        file: PathBuf,
        /// Add the file's entries to the memory's (duplicates are left out).
        #[arg(long)]
        merge: bool,
    },
    /// The memories there are, with their sizes.
    Names,
}

/// A store error as the command reports it: a bad name or a refused change is a usage
/// error (exit 2); an unreadable file, a lock or a full disk is a failure (exit 1).
fn report(e: PersistError) -> Report {
    match e {
        PersistError::BadName(_) | PersistError::Memory(_) => UserError::usage(e.to_string()).into(),
        other => eyre!(other),
    }
}

/// The memory's name: `--name`, else the one runs on `--task` use by default
/// (`retreval-<task>`), else the config's `defaults.memory`, else that of the config's
/// default task — the memory `thoughtscope run` would use.
fn memory_name(args: &MemoryArgs) -> Result<String> {
    let name = match (&args.name, &args.task) {
        (Some(name), _) => name.clone(),
        (None, Some(task)) => match tasks::find(task) {
            Some(entry) => task_default(&entry.info.name, args.model.as_deref()),
            None => return Err(TaskError::Unknown(task.clone()).into()),
        },
        (None, None) => {
            let cfg = super::config(None)?;
            match cfg.defaults.memory {
                Some(name) => name,
                None => {
                    let task = cfg.defaults.task.as_deref().unwrap_or(&tasks::default_task().name);
                    task_default(tasks::find(task).map_or(task, |e| &*e.info.name), args.model.as_deref())
                }
            }
        }
    };
    persist::validate_name(&name).map_err(report)?;
    Ok(name)
}

/// JSON for a terminal: bidi and C1 controls inside strings as `\uXXXX` escapes
/// (serde_json already escapes the C0 ones), so the output stays valid JSON.
fn json_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

fn print_warnings(store: &mut MemoryStore) {
    for w in store.take_warnings() {
        safe_eprintln!("warning: {w}");
    }
}

/// The named memory, which must exist (for commands that change or export it).
fn existing(store: &MemoryStore, name: &str) -> Result<Memory> {
    match store.load(name).map_err(report)? {
        Some(memory) => Ok(memory),
        None => {
            let names = store.names().unwrap_or_default();
            let known = if names.is_empty() { "none yet".to_string() } else { names.join(", ") };
            usage_bail!("there is no memory named {name} in {} (memories: {known})", store.dir().display())
        }
    }
}

fn entry<'a>(memory: &'a Memory, name: &str, id: EntryId) -> Result<&'a Entry> {
    match memory.entry(id) {
        Some(e) => Ok(e),
        None => usage_bail!("memory {name} has no entry {id} (see `thoughtscope memory list --name {name}`)"),
    }
}

/// A text cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

pub(crate) fn memory(args: MemoryArgs) -> Result<()> {
    let mut store = MemoryStore::user();
    let name = match args.cmd {
        MemoryCmd::Names => return names(&store),
        _ => memory_name(&args)?,
    };
    let path = store.path(&name).map_err(report)?;
    match args.cmd {
        MemoryCmd::Names => Ok(()),
        MemoryCmd::List { json } => list(&store, &name, &path, json),
        MemoryCmd::Show { id, json } => {
            let memory = existing(&store, &name)?;
            show(entry(&memory, &name, id)?, &name, json)
        }
        MemoryCmd::Edit { id, content, confidence, pin, unpin } => {
            if content.is_none() && confidence.is_none() && !pin && !unpin {
                usage_bail!("memory edit needs --content TEXT, --confidence X, --pin or --unpin");
            }
            entry(&existing(&store, &name)?, &name, id)?;
            let pinned = if pin {
                Some(true)
            } else if unpin {
                Some(false)
            } else {
                None
            };
            let version = store
                .update(&name, |m| {
                    m.edit(id, content.as_deref(), confidence, pinned)?;
                    Ok(m.entry(id).map_or(0, |e| e.version))
                })
                .map_err(report)?;
            print_warnings(&mut store);
            outln!("edited entry {id} of memory {name} (version {version})");
            Ok(())
        }
        MemoryCmd::Rm { id } => {
            entry(&existing(&store, &name)?, &name, id)?;
            store.update(&name, |m| Ok(m.remove(id)?)).map_err(report)?;
            print_warnings(&mut store);
            outln!("removed entry {id} from memory {name}");
            Ok(())
        }
        MemoryCmd::Clear { yes } => {
            let memory = existing(&store, &name)?;
            if !yes {
                usage_bail!(
                    "clearing memory {name} removes its {} entries and {} approach reliabilities; run again with --yes",
                    memory.len(),
                    memory.reliabilities().len()
                );
            }
            let removed = store.update(&name, |m| Ok(m.clear())).map_err(report)?;
            print_warnings(&mut store);
            outln!("cleared memory {name} ({removed} entries removed)");
            Ok(())
        }
        MemoryCmd::Export { out } => {
            let memory = existing(&store, &name)?;
            let json = persist::to_json(&memory);
            match out {
                Some(file) => {
                    if let Err(e) = std::fs::write(&file, format!("{json}\n")) {
                        return Err(eyre!("writing {}: {e}", file.display()));
                    }
                    safe_eprintln!("exported memory {name} ({} entries) to {}", memory.len(), file.display());
                }
                None => outln!("{}", json_safe(&json)),
            }
            Ok(())
        }
        MemoryCmd::Import { file, merge } => {
            let imported = persist::load_file(&file).map_err(|e| UserError::usage(e.to_string()))?;
            let refuse = |m: &Memory| {
                format!(
                    "memory {name} already has {} entries: add --merge to merge {} into it, \
                     or clear it first (memory clear --yes)",
                    m.len(),
                    file.display()
                )
            };
            if let Some(current) = store.load(&name).map_err(report)? {
                if !merge && (!current.is_empty() || !current.reliabilities().is_empty()) {
                    usage_bail!("{}", refuse(&current));
                }
            }
            let message = store
                .update(&name, |m| {
                    if merge {
                        let r = m.merge_from(&imported)?;
                        return Ok(format!(
                            "imported {} entries into memory {name} ({} duplicates left out, {} approach reliabilities added)",
                            r.inserted.len(),
                            r.duplicates,
                            r.approaches
                        ));
                    }
                    if !m.is_empty() || !m.reliabilities().is_empty() {
                        // Filled between the check above and the lock: refused the same way.
                        return Err(PersistError::Memory(MemoryError::Invalid(refuse(m))));
                    }
                    *m = imported.clone();
                    Ok(format!("imported memory {name} ({} entries)", m.len()))
                })
                .map_err(report)?;
            print_warnings(&mut store);
            outln!("{message}");
            Ok(())
        }
    }
}

fn list(store: &MemoryStore, name: &str, path: &std::path::Path, json: bool) -> Result<()> {
    let memory = store.load(name).map_err(report)?;
    let present = memory.is_some();
    let memory = memory.unwrap_or_default();
    let ranked = memory.summary(usize::MAX);
    if json {
        let value = serde_json::json!({
            "name": name,
            "path": path,
            "entries": ranked,
            "reliability": memory.reliabilities(),
        });
        outln!("{}", json_safe(&serde_json::to_string(&value)?));
        return Ok(());
    }
    if !present {
        safe_println!("memory {name} has no entries yet ({} does not exist)", path.display());
        return Ok(());
    }
    safe_println!("memory {name}: {} entries ({})", memory.len(), path.display());
    if !ranked.is_empty() {
        outln!(
            "{:>5}  {:<8}  {:<12}  {:>4}  {:>11}  {:>4}  {:<8}  content",
            "id",
            "category",
            "approach",
            "conf",
            "hits/misses",
            "ver",
            "evidence"
        );
    }
    for e in &ranked {
        let pin = if e.pinned { "*" } else { " " };
        safe_println!(
            "{:>5}{pin} {:<8}  {:<12}  {:>4.2}  {:>11}  {:>4}  {:<8}  {}",
            e.id,
            e.category.name(),
            cut(&e.approach, 12),
            e.confidence,
            format!("{}/{}", e.hits, e.misses),
            format!("v{}", e.version),
            e.evidence.map_or("-", |v| v.name()),
            cut(e.headline(), 80)
        );
    }
    if ranked.iter().any(|e| e.evidence.is_some()) {
        safe_println!(
            "evidence: gold = the outcome was checked against the gold answer; self = only the model's own \
             validation; - = not recorded"
        );
    }
    if !memory.reliabilities().is_empty() {
        let parts: Vec<String> = memory.reliabilities().iter().map(|(a, r)| format!("{a} {r:.2}")).collect();
        safe_println!("approach reliability: {}", parts.join(", "));
    }
    Ok(())
}

fn show(e: &Entry, name: &str, json: bool) -> Result<()> {
    if json {
        outln!("{}", json_safe(&serde_json::to_string_pretty(e)?));
        return Ok(());
    }
    safe_println!("entry {} of memory {name}{}", e.id, if e.pinned { " (pinned)" } else { "" });
    safe_println!("category:   {}", e.category);
    safe_println!("approach:   {}", e.approach);
    safe_println!("confidence: {:.2}", e.confidence);
    safe_println!("hits:       {}, misses: {}", e.hits, e.misses);
    safe_println!("version:    {}", e.version);
    safe_println!("created:    change {}, updated: change {}", e.created, e.updated);
    safe_println!(
        "evidence:   {}",
        match e.evidence {
            Some(Evidence::Gold) => "gold (the outcome was checked against the gold answer)",
            Some(Evidence::SelfValidated) =>
                "self (only the model's own validation; not checked against a gold answer)",
            None => "not recorded (written before evidence was kept, or by a person)",
        }
    );
    if !e.sources.is_empty() {
        safe_println!("sources:    {}", e.sources.join(", "));
    }
    safe_println!("content:");
    for line in e.content.lines() {
        safe_println!("  {line}");
    }
    if !e.signals.is_empty() {
        safe_println!("signals (oldest first):");
        for (n, s) in e.signals.iter().enumerate() {
            safe_println!("  {}. {s}", n + 1);
        }
    }
    if !e.history.is_empty() {
        safe_println!("history:");
        for h in &e.history {
            safe_println!(
                "  v{} (replaced at change {}): {}",
                h.version,
                h.replaced_at,
                cut(&h.content.replace('\n', " "), 200)
            );
        }
    }
    Ok(())
}

fn names(store: &MemoryStore) -> Result<()> {
    let names = store.names().map_err(report)?;
    if names.is_empty() {
        safe_eprintln!("no memories in {}", store.dir().display());
    }
    for name in names {
        match store.load(&name) {
            Ok(Some(m)) => safe_println!("{name}  {} entries", m.len()),
            Ok(None) => {}
            Err(e) => safe_println!("{name}  unreadable: {e}"),
        }
    }
    Ok(())
}
