//! Man pages, made from the same clap definitions as the reference: `thoughtscope.1` and
//! one page per command and nested command (`thoughtscope-run.1`, `thoughtscope-task-new.1`),
//! named as `clap_mangen::generate_to` names them, written under `docs/man/`. Each ends
//! with where its Markdown page and the guides are. They carry no date, so the same code
//! always makes the same bytes and `docs --check` can compare them.

use std::path::PathBuf;

use clap::Command;
use color_eyre::eyre::{eyre, Result};

/// Where the pages go, relative to the repository.
pub(crate) const DIR: &str = "docs/man";

/// Every page (path, text) for `cli` and its visible commands, the command before its
/// own commands. As `clap_mangen::generate_to` does, the top level lists no `help`
/// command, and `cli` is built first so each command's display name is its full name.
pub(crate) fn pages(cli: Command) -> Result<Vec<(PathBuf, String)>> {
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let mut pages = Vec::new();
    add(&cli, "thoughtscope.md", &mut pages)?;
    Ok(pages)
}

/// `cmd`'s page and its commands' pages; `reference` is the page of docs/reference/ that
/// lists `cmd` (a nested command is a section of its command's page).
fn add(cmd: &Command, reference: &str, pages: &mut Vec<(PathBuf, String)>) -> Result<()> {
    let see = format!(
        "The same as Markdown: docs/reference/{reference}. The guides: docs/README.md. Both are in the \
         repository, made from the same code."
    );
    let man = clap_mangen::Man::new(cmd.clone().after_long_help(see))
        .source(format!("thoughtscope {}", env!("CARGO_PKG_VERSION")))
        .manual("thoughtscope manual");
    let mut text = Vec::new();
    man.render(&mut text).map_err(|e| eyre!("the man page of {}: {e}", cmd.get_name()))?;
    let text = String::from_utf8(text).map_err(|e| eyre!("the man page of {}: {e}", cmd.get_name()))?;
    // clap_mangen heads the text after the options EXTRA; a man page calls it SEE ALSO.
    let text = text.replacen(".SH EXTRA\n", ".SH \"SEE ALSO\"\n", 1);
    pages.push((PathBuf::from(DIR).join(man.get_filename()), text));
    let top = reference == "thoughtscope.md";
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set() && c.get_name() != "help") {
        let page = if top { format!("{}.md", sub.get_name()) } else { reference.to_string() };
        add(sub, &page, pages)?;
    }
    Ok(())
}
