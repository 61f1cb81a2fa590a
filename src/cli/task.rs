//! `thoughtscope task ...`: write and check task files (`tasks::file`).

use std::path::PathBuf;

use clap::Subcommand;
use color_eyre::eyre::Result;

use thoughtscope::engine::{methods, Params, PromptStyle};
use thoughtscope::tasks::file::{def, starter, FileTask};
use thoughtscope::tasks::{TaskOptions, TaskSource};

use super::error::UserError;

#[derive(Subcommand, Debug)]
pub(crate) enum TaskCmd {
    /// Write a commented starting folder DIR (task.toml, a prompt, three problems); its
    /// last part names the task.
    New { dir: PathBuf },
    /// Check a task file (or a folder with task.toml): every error names the file, line
    /// and key; then print the first problem's rendered prompts and the methods that work.
    Check {
        path: PathBuf,
        /// Lay the prompts out as a chat model gets them (default) or as one text.
        #[arg(long, default_value = "chat")]
        prompt_style: PromptStyle,
    },
    /// Print a built-in task as a task file (its io and cot prompts, its problems, the
    /// answer rule and check that agree with its own), where it can be written so.
    Show {
        name: String,
        /// The prompts as a chat model gets them (default) or as one text.
        #[arg(long, default_value = "chat")]
        prompt_style: PromptStyle,
        /// The problems, for a task that reads them from a file (hotpotqa, fever).
        #[arg(long)]
        data: Option<PathBuf>,
    },
}

pub(crate) fn task_cmd(cmd: TaskCmd) -> Result<()> {
    match cmd {
        TaskCmd::New { dir } => {
            let written = starter::write(&dir).map_err(UserError::usage)?;
            for path in written {
                safe_println!("wrote {}", path.display());
            }
            safe_println!("check it with: thoughtscope task check {}", dir.display());
            Ok(())
        }
        TaskCmd::Check { path, prompt_style } => check(&path, prompt_style),
        TaskCmd::Show { name, prompt_style, data } => show(&name, prompt_style, data),
    }
}

fn show(name: &str, style: PromptStyle, data: Option<PathBuf>) -> Result<()> {
    if thoughtscope::tasks::find(name).is_none() {
        let known: Vec<&str> = thoughtscope::tasks::REGISTRY.iter().map(|e| &*e.info.name).collect();
        return Err(UserError::usage(format!("{name} is not a built-in task (tasks: {})", known.join(", "))).into());
    }
    let mut warnings = Vec::new();
    let options = TaskOptions { style, data, ..TaskOptions::default() };
    let task =
        thoughtscope::tasks::build(name, &options, &mut warnings).map_err(|e| UserError::usage(e.to_string()))?;
    let shown = thoughtscope::tasks::file::show::show(task.as_ref())
        .map_err(|m| UserError::usage(format!("{name} cannot be written as a task file: {m}")))?;
    safe_println!("{}", shown.toml.trim_end());
    for line in &shown.left_out {
        safe_eprintln!("note: not written: {line}");
    }
    Ok(())
}

fn check(path: &std::path::Path, style: PromptStyle) -> Result<()> {
    let mut warnings = Vec::new();
    let options = TaskOptions { style, ..TaskOptions::default() };
    let task = FileTask::open(path, &options, &mut warnings).map_err(|e| UserError::usage(e.to_string()))?;
    for w in &warnings {
        safe_eprintln!("warning: {w}");
    }
    let d = task.def();
    safe_println!("{}: task {} is good: {} problems", def::task_file(path).display(), d.name, task.problem_count());
    let served: Vec<&str> = methods::serving(&task, &Params::default()).iter().map(|m| m.kind.label()).collect();
    safe_println!("methods that work: {}", served.join(", "));
    let played: Vec<&str> = methods::serving(&task, &Params::default())
        .iter()
        .filter(|m| thoughtscope::tasks::check_sim_plays(&task, &Params::new(m.kind)).is_ok())
        .map(|m| m.kind.label())
        .collect();
    safe_println!("sim plays: {}", if played.is_empty() { "none".to_string() } else { played.join(", ") });
    if let Some(first) = task.problem(0) {
        safe_println!("\nthe first problem: {}", first.input);
        if let Some(gold) = task.gold(&first.input) {
            safe_println!("gold answer: {gold}");
        }
    }
    for (purpose, messages) in task.rendered_examples() {
        safe_println!("\n--- {purpose} prompt ---");
        for m in messages {
            safe_println!("[{}]\n{}", thoughtscope::tasks::prompts::role_name(m.role), m.content);
        }
    }
    Ok(())
}
