//! `thoughtscope task ...`: write and check task files (`tasks::file`).

use std::path::{Path, PathBuf};

use clap::Subcommand;
use color_eyre::eyre::Result;

use thoughtscope::engine::{methods, Params, PromptStyle};
use thoughtscope::engine::{CheckRequest, Task};
use thoughtscope::tasks::file::{def, starter, FileTask};
use thoughtscope::tasks::{TaskOptions, TaskSource};
use thoughtscope::tools::choice::ToolOptions;

use super::error::UserError;

#[derive(Subcommand, Debug)]
pub(crate) enum TaskCmd {
    /// Write a commented starting folder DIR (task.toml, a prompt, three problems); its
    /// last part names the task.
    New { dir: PathBuf },
    /// Check a task file (or a folder with task.toml): every error names the file, line
    /// and key; then print the first problem's rendered prompts and the methods that work.
    /// A check command or a step command is run once, on a gold answer or a correct
    /// step, to prove it works (the command is named first).
    Check {
        path: PathBuf,
        /// Lay the prompts out as a chat model gets them (default) or as one text.
        #[arg(long, default_value = "chat")]
        prompt_style: PromptStyle,
        /// Start the MCP server of this [[mcp]] config entry (repeatable) [default: the
        /// servers the file's [tools] mcp names].
        #[arg(long, value_name = "NAME")]
        mcp: Vec<String>,
        /// The config file with the [[mcp]] entries [default: the usual place].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
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
        TaskCmd::Check { path, prompt_style, mcp, config } => check(&path, prompt_style, mcp, config.as_deref()),
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

fn check(path: &std::path::Path, style: PromptStyle, mcp: Vec<String>, config: Option<&Path>) -> Result<()> {
    let mut warnings = Vec::new();
    let mcp = mcp_servers(path, mcp, config)?;
    let options = TaskOptions { style, mcp, ..TaskOptions::default() };
    let task = FileTask::open(path, &options, &mut warnings).map_err(|e| UserError::usage(e.to_string()))?;
    for w in &warnings {
        safe_eprintln!("warning: {w}");
    }
    prove_commands(&task)?;
    let d = task.def();
    let problems = methods::count(task.problem_count(), "problem", "problems");
    safe_println!("{}: task {} is good: {problems}", def::task_file(path).display(), d.name);
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

/// The MCP servers `task check` starts: those `--mcp` names, else those the file's
/// `[tools] mcp` names, from the config file's `[[mcp]]` entries.
fn mcp_servers(
    path: &Path,
    named: Vec<String>,
    config: Option<&Path>,
) -> Result<Vec<thoughtscope::tools::mcp::McpConfig>> {
    let named = match named.is_empty() {
        false => named,
        // A file that does not read is said by FileTask::open, with its line.
        true => match def::load(path) {
            Ok(loaded) => loaded.def.tools.map(|t| t.mcp).unwrap_or_default(),
            Err(_) => Vec::new(),
        },
    };
    if named.is_empty() {
        return Ok(Vec::new());
    }
    let cfg = super::config(config)?;
    let tools = ToolOptions { mcp: named, ..ToolOptions::default() };
    let servers = tools.mcp_servers(&cfg.mcp).map_err(|e| {
        UserError::usage(format!("{} names an MCP server to start: {e}", def::task_file(path).display()))
    })?;
    Ok(servers)
}

/// Run the task's check command on a gold answer, and its step command on a correct step,
/// once each, naming each before it runs: a checker that cannot start, fails or refuses
/// what is right is an error of the task, said in one line.
fn prove_commands(task: &FileTask) -> Result<()> {
    let with_gold = task.problems().iter().enumerate().find(|(_, p)| p.gold.is_some());
    if let Some((i, p)) = with_gold {
        let gold = p.gold.clone().unwrap_or_default();
        if let Some(request) = task.check_command(&p.input, &gold) {
            prove(&request, &format!("problem {i}'s gold answer {gold:?}"))?;
        }
    } else if task.def().check.kind == thoughtscope::tasks::file::answer::CheckKind::Command {
        return Err(UserError::usage(format!(
            "{}: no problem has a gold answer, so its check command cannot be tried (nor any answer checked)",
            task.def().name
        ))
        .into());
    }
    let Some(tree) = task.tree() else { return Ok(()) };
    let with_steps = task.problems().iter().enumerate().find(|(_, p)| !p.steps.is_empty());
    let Some((i, p)) = with_steps else {
        if task.def().tree.as_ref().is_some_and(|t| !t.step_command.is_empty()) {
            safe_eprintln!("note: the step command was not tried: no problem lists its correct steps");
        }
        return Ok(());
    };
    let first = tree.parse_edit(&p.input, "", &p.steps[0]);
    if let Some(request) = tree.step_command(&p.input, "", &first) {
        prove(&request, &format!("problem {i}'s first correct step {:?}", p.steps[0]))?;
    }
    Ok(())
}

/// Run `request` on `what` (right, from the file): its verdict must be "correct".
fn prove(request: &CheckRequest, what: &str) -> Result<()> {
    safe_eprintln!("note: running {} on {what}, to prove it works", request.named());
    match thoughtscope::runtime::check_run::run(request) {
        Ok(v) if v.correct => Ok(()),
        Ok(v) => Err(UserError::usage(format!(
            "{} says {what} is wrong{}: fix the program or the task file",
            request.named(),
            if v.said.is_empty() { String::new() } else { format!(" ({})", v.said) }
        ))
        .into()),
        Err(failure) => Err(UserError::usage(failure).into()),
    }
}
