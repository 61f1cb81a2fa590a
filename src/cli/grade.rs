//! `thoughtscope grade GOLD PRED`: whether a prediction (a model reply or an answer) is
//! equivalent to a gold answer (or a MATH solution with a `\boxed{}`).

use std::path::{Path, PathBuf};

use clap::Args;
use color_eyre::eyre::Result;

use thoughtscope::grade::{grade_with, GradeOptions, Precision};
use thoughtscope::userfile;

use super::error::usage_bail;
use super::pipe::outln;

#[derive(Args, Debug)]
pub(crate) struct GradeArgs {
    /// The gold answer, or a solution whose last `\boxed{}` is the answer (`-` reads stdin).
    #[arg(allow_hyphen_values = true)]
    pub(crate) gold: Option<String>,
    /// The prediction: an answer or a whole model reply (`-` reads stdin).
    #[arg(allow_hyphen_values = true)]
    pub(crate) pred: Option<String>,
    /// Read the gold answer from a file instead.
    #[arg(long)]
    pub(crate) gold_file: Option<PathBuf>,
    /// Read the prediction from a file instead.
    #[arg(long)]
    pub(crate) pred_file: Option<PathBuf>,
    /// Print one JSON object: equivalent, gold and pred (extracted, normalized), reason.
    #[arg(long)]
    pub(crate) json: bool,
    /// Decimal places a number written with a decimal point is compared at (0 to 15):
    /// both sides are rounded to N places (`0.333333` is 1/3 at 6, `0.33` needs 2).
    #[arg(long, value_name = "N", default_value_t = 6)]
    pub(crate) precision: u32,
    /// Variables must match, `f(x)` is not `f(y)` (the default).
    #[arg(long, overrides_with = "no_strict")]
    pub(crate) strict: bool,
    /// Rename the prediction's variables to the gold's (sorted order) when they differ.
    #[arg(long, overrides_with = "strict")]
    pub(crate) no_strict: bool,
    /// A relation may equal a set or interval gold (`x > 5` for `(5,\infty)`), and a tuple a
    /// set with the same elements (`(1,3)` for `\{1,3\}`).
    #[arg(long)]
    pub(crate) set_relation: bool,
}

/// A file or pipe (`--pred-file <(echo 42)`), by the rules of [`userfile::ANSWER`]: no
/// device, no FIFO left waiting for a writer, at most 16 MiB.
fn read_file(path: &Path, what: &str) -> Result<String> {
    match userfile::read_text(path, &userfile::ANSWER) {
        Ok(text) => Ok(text),
        Err(e) => usage_bail!("{what} file {}: {}", path.display(), e.reason()),
    }
}

fn read_stdin(what: &str) -> Result<String> {
    match userfile::read_stdin(&userfile::ANSWER) {
        Ok(text) => Ok(text),
        Err(e) => usage_bail!("reading the {what} from standard input: {}", e.reason()),
    }
}

pub(crate) fn grade(args: GradeArgs) -> Result<()> {
    // Positionals fill gold first; with --gold-file a single positional is the prediction.
    let (gold_arg, pred_arg) = match (&args.gold_file, args.gold, args.pred) {
        (Some(_), Some(_), Some(_)) => usage_bail!("give the gold answer as GOLD or --gold-file, not both"),
        (Some(_), Some(only), None) => (None, Some(only)),
        (_, g, p) => (g, p),
    };
    if gold_arg.as_deref() == Some("-") && pred_arg.as_deref() == Some("-") {
        usage_bail!("only one of GOLD and PRED can be '-' (standard input)");
    }
    let gold = match (&args.gold_file, gold_arg) {
        (Some(path), _) => read_file(path, "gold")?,
        (None, Some(g)) if g == "-" => read_stdin("gold")?,
        (None, Some(g)) => g,
        (None, None) => usage_bail!("grade needs a GOLD answer (or --gold-file FILE)"),
    };
    let pred = match (&args.pred_file, pred_arg) {
        (Some(_), Some(_)) => usage_bail!("give the prediction as PRED or --pred-file, not both"),
        (Some(path), None) => read_file(path, "prediction")?,
        (None, Some(p)) if p == "-" => read_stdin("prediction")?,
        (None, Some(p)) => p,
        (None, None) => usage_bail!("grade needs a PRED answer (or --pred-file FILE)"),
    };
    if gold.trim().is_empty() {
        usage_bail!("the gold answer is empty");
    }
    if pred.trim().is_empty() {
        usage_bail!("the prediction is empty");
    }
    let precision = match Precision::new(args.precision) {
        Ok(p) => p,
        Err(e) => usage_bail!("--precision: {e}"),
    };
    let options = GradeOptions { precision, strict: !args.no_strict, set_relation: args.set_relation };
    let g = grade_with(&gold, &pred, &options);
    if args.json {
        outln!("{}", serde_json::to_string(&g)?);
    } else {
        outln!("{}", if g.equivalent { "equivalent" } else { "different" });
        safe_eprintln!("gold {:?} vs pred {:?}: {}", g.gold.normalized, g.pred.normalized, g.reason);
    }
    Ok(())
}
