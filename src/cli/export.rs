//! `thoughtscope export FILE --format json|dot|mermaid|otel [--out F]`: the tree a
//! session rebuilds, for scripts, papers and trace viewers (see `thoughtscope::export`).

use std::path::PathBuf;

use clap::Args;
use color_eyre::eyre::{Result, WrapErr};

use thoughtscope::export::{self, Format, Options};

use super::error::usage_bail;
use super::pipe::out;

#[derive(Args, Debug)]
pub(crate) struct ExportArgs {
    /// The session file to export.
    pub(crate) path: PathBuf,
    /// json (for scripts), dot (Graphviz), mermaid, or otel (OpenTelemetry spans as OTLP JSON).
    #[arg(long, default_value = "json")]
    pub(crate) format: String,
    /// Write here instead of to standard output.
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Prompt template directory the run used, if not the built-in one.
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
}

/// Key-like environment values are known secrets, so a session that holds one (written
/// by hand or by an older build) does not carry it into an export.
pub(crate) fn register_env_secrets() {
    for (name, value) in std::env::vars() {
        let upper = name.to_ascii_uppercase();
        if upper.ends_with("_API_KEY") || upper.ends_with("_TOKEN") || upper.ends_with("_SECRET") {
            let _ = thoughtscope::llm::secret::Secret::new(value);
        }
    }
}

pub(crate) fn export_cmd(args: ExportArgs) -> Result<()> {
    let format = match Format::parse(&args.format) {
        Ok(f) => f,
        Err(e) => usage_bail!("--format: {e}"),
    };
    super::run::check_prompts_dir(args.prompts.as_deref())?;
    register_env_secrets();
    let loaded = export::load(&args.path, args.prompts.as_deref()).map_err(color_eyre::eyre::Report::msg)?;
    for w in loaded.session.warnings.iter().chain(&loaded.rebuilt.warnings) {
        safe_eprintln!("warning: {w}");
    }
    if !loaded.rebuilt.fidelity.reproduces() {
        safe_eprintln!(
            "warning: {}: {}",
            args.path.display(),
            loaded.rebuilt.fidelity.describe(&loaded.session.header)
        );
    }
    let options = Options { start_unix_nanos: export::start_nanos(&args.path, loaded.rebuilt.wall_ms) };
    let text = export::export(&loaded.session, &loaded.rebuilt, format, &options);
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text).wrap_err_with(|| format!("writing {}", path.display()))?;
            safe_eprintln!("wrote {} ({}, {} nodes)", path.display(), format, loaded.rebuilt.engine.tree().len());
        }
        None => out!("{text}"),
    }
    Ok(())
}
