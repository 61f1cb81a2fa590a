//! `thoughtscope tui` (the default: the explorer on a live run) and `thoughtscope
//! demo`; replays open in the explorer through here too.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use color_eyre::eyre::{bail, eyre, Result};

use thoughtscope::engine::Effect;
use thoughtscope::llm::sim::SimProvider;
use thoughtscope::llm::Provider;
use thoughtscope::memory::Memory;
use thoughtscope::runtime::headless::{header_for, is_session_file};
use thoughtscope::session::{MemorySnapshot, Session};
use thoughtscope::tasks::{self, SimPlayers, TaskOptions};
use thoughtscope::tui::app::{App, Setup as AppSetup};
use thoughtscope::tui::settings::ui_settings;
use thoughtscope::userfile::data_dir;

use super::args::{ForkArgs, RunArgs};
use super::config_notes;
use super::error::{usage_bail, UserError};
use super::pipe::{out, outln};
use super::run::{check_prompts_dir, setup_run_noting};

pub(crate) fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

pub(crate) fn open_tui(
    mut app: App,
    provider: Arc<dyn Provider>,
    concurrency: usize,
    notes: Vec<String>,
    initial: Vec<Effect>,
) -> Result<()> {
    if !std::io::stdout().is_terminal() {
        for n in &notes {
            safe_eprintln!("warning: {n}");
        }
        bail!("the explorer needs a terminal; for scripts use `thoughtscope run ... --json` or `replay --headless`");
    }
    app.view.no_color = no_color();
    // Shown in the explorer (stderr is hidden behind the full screen), and again on stderr after it.
    app.show_problems(&notes);
    let rt = tokio::runtime::Runtime::new()?;
    let ran = rt.block_on(thoughtscope::tui::run(app, provider, concurrency, initial));
    // Nothing left running (an abandoned tool's thread, a stuck lookup) holds the exit up.
    rt.shutdown_background();
    let (mut app, signal) = ran?;
    for n in &notes {
        safe_eprintln!("warning: {n}");
    }
    let listed = app.list_sessions();
    if let Some(path) = app.session_path() {
        if !app.is_replay() && !listed.contains(&path) {
            safe_println!("session recorded in {}", path.display());
        }
    }
    for path in listed {
        safe_println!("session recorded in {}", path.display());
    }
    if let Some(signal) = signal {
        eprintln!("stopped by {signal}");
        // The MCP servers end with the run (exit skips main's ending of them).
        for note in thoughtscope::tools::mcp::end_servers() {
            eprintln!("warning: {note}");
        }
        std::process::exit(signal.exit_code());
    }
    if let Some(failed) = app.session.run.memory_error.take() {
        bail!("{failed}");
    }
    Ok(())
}

pub(crate) fn tui_live(mut args: RunArgs) -> Result<()> {
    let mut notes = Vec::new();
    let cfg = config_notes(args.connect.config.as_deref(), &mut notes);
    if args.input.is_none() && args.range.is_none() {
        // Each task names the problem it opens on (Game of 24: the paper's first test puzzle).
        let name = args.task.as_deref().or(cfg.defaults.task.as_deref()).unwrap_or(&tasks::default_task().name);
        args.range = Some(tasks::default_problem(name)?.to_string());
    }
    let mut said = Vec::new();
    let (setup, problems) = setup_run_noting(&args, &cfg, &mut said)?;
    let Some(problem) = problems.first() else { bail!("no problem to open") };
    let (keymap, themes, theme) = ui_settings(&cfg, args.theme.clone(), &mut notes).map_err(UserError::usage)?;
    // An existing directory is a directory; a path ending in .jsonl is the session file.
    let (sessions_dir, session_file) = match args.record.clone() {
        Some(file) if is_session_file(&file) => {
            let dir = file
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            (dir, Some(file))
        }
        Some(dir) => (dir, None),
        None => (data_dir().join("sessions"), None),
    };
    let mut header = header_for(&setup, problem);
    // Names the memory each live run loads as it stands when the run starts (`App::start`).
    header.memory = setup.memory.as_ref().map(|m| MemorySnapshot::new(m.name.clone(), Memory::default()));
    let app_setup = AppSetup {
        task: Arc::clone(&setup.task),
        prompts: args.prompts.clone(),
        header,
        sessions_dir,
        session_file,
        memory_dir: None,
        limits: setup.limits.clone(),
    };
    // `--range A..B` opens them all: the next/previous problem keys move through them.
    let mut app = App::live_list(app_setup, problems, keymap, themes, &theme).map_err(|e| eyre!(e))?;
    // The method chosen for the person (`--task math-demo` alone) is said on screen too.
    app.message = said.first().map(|n| format!("note: {n}"));
    open_tui(app, Arc::clone(&setup.provider), setup.concurrency, notes, Vec::new())
}

pub(crate) fn tui_replay(
    session: Session,
    theme: Option<String>,
    prompts: Option<PathBuf>,
    fork: &ForkArgs,
    nonstop: bool,
    follow: Option<u64>,
) -> Result<()> {
    check_prompts_dir(prompts.as_deref())?;
    if fork.connect.context_window.is_some() {
        let kept = session.header.context_window.map_or("none".to_string(), |t| format!("{t} tokens"));
        usage_bail!(
            "--context-window is for a new run; a fork keeps the window its session recorded ({kept}), so it \
             fits prompts as the session did"
        );
    }
    let mut notes: Vec<String> = session.warnings.clone();
    let cfg = config_notes(fork.connect.config.as_deref(), &mut notes);
    let (keymap, themes, theme) = ui_settings(&cfg, theme, &mut notes).map_err(UserError::usage)?;
    let knowledge = fork.tools.options().knowledge(&mut notes)?;
    let options = TaskOptions { prompts: prompts.clone(), knowledge, ..TaskOptions::default() };
    let task = session.header.build_task(&options)?;
    // A fork continues with the simulated model the session used (or the default one),
    // unless a provider is named.
    let provider: Arc<dyn Provider> = match fork.provider.as_deref() {
        None | Some("sim") => Arc::new(SimProvider::new(session.header.sim.clone().unwrap_or_default(), &SimPlayers)),
        Some(name) => thoughtscope::llm::config::build(
            name,
            &fork.connect.options(),
            cfg.providers()?,
            session.header.params.seed(),
        )?,
    };
    // A fork spends like a live run: the same budgets, price and cache flags.
    let limits = thoughtscope::runtime::headless::RunLimits::from_options(&fork.connect.options(), provider.as_ref())?;
    let app_setup = AppSetup {
        task,
        prompts,
        header: session.header.clone(),
        sessions_dir: data_dir().join("sessions"),
        session_file: None,
        memory_dir: None,
        limits,
    };
    let mut app = App::replay(app_setup, session, keymap, themes, &theme).map_err(|e| eyre!(e))?;
    app.session.play_nonstop = nonstop;
    if let Some(read) = follow {
        // `replay --follow`: the file is read again as it grows (`read` bytes are shown).
        app.follow_file(read);
    }
    open_tui(app, provider, cfg.defaults.concurrency.unwrap_or(8), notes, Vec::new())
}

pub(crate) fn demo(which: Option<usize>, theme: Option<String>, nonstop: bool) -> Result<()> {
    let list: Vec<(usize, &thoughtscope::demos::Demo, Session)> = thoughtscope::demos::DEMOS
        .iter()
        .enumerate()
        .map(|(i, d)| thoughtscope::demos::load(d).map(|s| (i + 1, d, s)).map_err(|e| eyre!(e)))
        .collect::<Result<_>>()?;
    let chosen = match which {
        Some(n) => n,
        None => {
            for (n, d, s) in &list {
                outln!("{n}. {} ({})\n   {}", d.title, d.file, s.header.note.clone().unwrap_or_default());
            }
            if !std::io::stdin().is_terminal() {
                outln!("open one with: thoughtscope demo N");
                return Ok(());
            }
            out!("open which demo? [1-{}] ", list.len());
            std::io::Write::flush(&mut std::io::stdout())?;
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            match line.trim().parse::<usize>() {
                Ok(n) => n,
                Err(_) => return Ok(()),
            }
        }
    };
    let Some((_, _, session)) = list.into_iter().find(|(n, _, _)| *n == chosen) else {
        usage_bail!("there is no demo {chosen}: run `thoughtscope demo` for the list");
    };
    tui_replay(session, theme, None, &ForkArgs::default(), nonstop, None)
}
