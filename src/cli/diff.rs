//! `thoughtscope diff A B [--json]`: where two recorded runs first diverge and how
//! their trees differ. Exit status like `diff`: 0 when the runs are the same, 1 when
//! they differ, 2 on an error (a file that is not a session, one that does not replay).

use std::path::PathBuf;

use clap::Args;
use color_eyre::eyre::Result;

use thoughtscope::export;

use super::error::{usage_bail, UserError};
use super::pipe::{out, outln};

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// The first session file.
    pub(crate) a: PathBuf,
    /// The second session file.
    pub(crate) b: PathBuf,
    /// Print the comparison as one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Show both trees side by side in the terminal, aligned by thought.
    #[arg(long, conflicts_with = "json")]
    pub(crate) tui: bool,
    /// Prompt template directory the runs used, if not the built-in one.
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
}

pub(crate) fn diff_cmd(args: DiffArgs) -> Result<()> {
    super::run::check_prompts_dir(args.prompts.as_deref())?;
    super::export::register_env_secrets();
    // Every failure is exit status 2, like `diff`'s "trouble".
    if args.tui {
        if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            usage_bail!("--tui needs a terminal; without it, diff prints its report");
        }
        // The view replays each run once and compares the trees its cursors end at.
        let load =
            |path: &PathBuf| thoughtscope::session::Session::load(path).map_err(|e| UserError::usage(e.to_string()));
        let (a, b) = (load(&args.a)?, load(&args.b)?);
        let mut view =
            thoughtscope::tui::diff_view::DiffView::open(&a, &b, args.prompts.as_deref()).map_err(UserError::usage)?;
        for w in view.warnings() {
            safe_eprintln!("warning: {w}");
        }
        thoughtscope::tui::diff_view::run(&mut view).map_err(|e| UserError::usage(format!("the terminal: {e}")))?;
        if !view.diff.same {
            std::process::exit(1);
        }
        return Ok(());
    }
    let load = |path: &PathBuf| export::load(path, args.prompts.as_deref()).map_err(UserError::usage);
    let a = load(&args.a)?;
    let b = load(&args.b)?;
    for w in [&a, &b].iter().flat_map(|l| l.session.warnings.iter().chain(&l.rebuilt.warnings)) {
        safe_eprintln!("warning: {w}");
    }
    let diff = thoughtscope::diff::diff(&a, &b);
    if args.json {
        let text = serde_json::to_string(&diff).unwrap_or_default();
        outln!("{}", thoughtscope::safe_text::json_safe(&text));
    } else {
        out!("{}", thoughtscope::safe_text::terminal_safe(&diff.text()));
    }
    if !diff.same {
        std::process::exit(1);
    }
    Ok(())
}
