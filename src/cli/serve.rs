//! `thoughtscope serve`: answer OpenAI-style chat requests with searches, each
//! recorded as a session (see `thoughtscope::serve`).

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;
use color_eyre::eyre::Result;

use thoughtscope::llm::config::ProviderOptions;
use thoughtscope::runtime::signals;
use thoughtscope::runtime::Signal;
use thoughtscope::serve::settings::Settings;
use thoughtscope::serve::{self, Options, Serve, Upstream};

use super::args::{RunArgs, SimArgs};
use super::connect::ProviderArgs;
use super::error::{usage_bail, UserError};

/// Most searches or upstream calls at once (`--max-searches`, `--max-calls`).
const MAX_AT_ONCE: usize = 1024;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ServeArgs {
    /// Address to listen on; one other machines can reach needs an API key [default: 127.0.0.1].
    #[arg(long)]
    pub(crate) host: Option<String>,
    /// Port to listen on; 0 takes a free one (the address is printed) [default: 8787].
    #[arg(long)]
    pub(crate) port: Option<u16>,
    /// Upstream model provider: sim (offline default; plays the built-in tasks only), openai, anthropic, or a profile.
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// The bearer token every request must carry (else [serve] api_key in the config); required off loopback.
    #[arg(long, value_name = "KEY")]
    pub(crate) api_key: Option<String>,
    /// Folder of the requests' sessions [default: the data directory's sessions/].
    #[arg(long, value_name = "DIR")]
    pub(crate) sessions: Option<PathBuf>,
    /// Task of requests that name none in their thoughtscope object [default: the open question].
    #[arg(long)]
    pub(crate) task: Option<String>,
    /// Searches at once; a request beyond them is answered 429 with Retry-After [default: 4].
    #[arg(long, value_name = "N")]
    pub(crate) max_searches: Option<usize>,
    /// Upstream calls at once over all searches; more wait their turn [default: 16].
    #[arg(long, value_name = "N")]
    pub(crate) max_calls: Option<usize>,
    #[command(flatten)]
    pub(crate) sim: SimArgs,
    #[command(flatten)]
    pub(crate) connect: ProviderArgs,
}

/// Whether `host` is this machine only.
fn loopback(host: &str) -> Result<bool> {
    if host == "localhost" {
        return Ok(true);
    }
    match host.trim_matches(['[', ']']).parse::<IpAddr>() {
        Ok(ip) => Ok(ip.is_loopback()),
        Err(_) => usage_bail!("--host {host:?} is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1) or localhost"),
    }
}

/// What `serve`'s flags and the config's `[serve]` table both set, each from its flag
/// if given, else from the table (the one place the two are merged).
fn merged(args: &ServeArgs, file: Settings) -> Settings {
    Settings {
        api_key: args.api_key.clone().or(file.api_key),
        budget_tokens: args.connect.budget_tokens.or(file.budget_tokens),
        budget_usd: args.connect.budget_usd.or(file.budget_usd),
        max_searches: args.max_searches.or(file.max_searches),
        max_calls: args.max_calls.or(file.max_calls),
        profiles: file.profiles,
    }
}

/// The server's options from the flags over the config's `[serve]` and `[defaults]`.
fn options(args: &ServeArgs) -> Result<(Options, String, u16)> {
    let cfg = super::config(args.connect.config.as_deref());
    let file = serve::settings::read(&cfg.serve, &cfg.source()).map_err(UserError::usage)?;
    let settings = merged(args, file);
    let host = args.host.clone().unwrap_or_else(|| "127.0.0.1".into());
    let api_key = settings.api_key;
    if api_key.as_deref().is_some_and(|k| k.trim().is_empty()) {
        usage_bail!("--api-key is empty; give the token clients must send");
    }
    if !loopback(&host)? && api_key.is_none() {
        usage_bail!(
            "--host {host} can be reached from other machines: give --api-key KEY (or api_key in the config's \
             [serve]) so that only requests carrying it are answered"
        );
    }
    let at_once = |n: Option<usize>, default: usize, name: &str| -> Result<usize> {
        let n = n.unwrap_or(default);
        if !(1..=MAX_AT_ONCE).contains(&n) {
            usage_bail!("--{name} must be from 1 to {MAX_AT_ONCE}, not {n}");
        }
        Ok(n)
    };
    let max_searches = at_once(settings.max_searches, 4, "max-searches")?;
    let max_calls = at_once(settings.max_calls, 16, "max-calls")?;
    let limits = ProviderOptions {
        budget_tokens: settings.budget_tokens,
        budget_usd: settings.budget_usd,
        ..args.connect.options()
    };
    let provider = args.provider.clone().or(cfg.defaults.provider.clone()).unwrap_or_else(|| "sim".into());
    let upstream = match provider.as_str() {
        "sim" => {
            let run = RunArgs { sim: args.sim.clone(), ..RunArgs::default() };
            Upstream::Sim(super::run::sim_config(&run, &cfg.defaults, 0, &cfg.source())?)
        }
        "replay" => usage_bail!("serve answers new requests: --provider replay has nothing recorded to answer them"),
        _ => Upstream::Real {
            provider,
            connect: Box::new(args.connect.options()),
            file: Box::new(cfg.providers()?.clone()),
        },
    };
    let options = Options {
        upstream,
        sessions: args.sessions.clone().unwrap_or_else(|| thoughtscope::userfile::data_dir().join("sessions")),
        api_key,
        max_searches,
        max_calls,
        limits,
        defaults: cfg.defaults.search.clone(),
        profiles: settings.profiles,
        task: args.task.clone(),
    };
    Ok((options, host, args.port.unwrap_or(8787)))
}

pub(crate) fn serve_cmd(args: ServeArgs) -> Result<()> {
    let (options, host, port) = options(&args)?;
    let sessions = options.sessions.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let interrupts = signals::listen(&[Signal::INT, Signal::TERM], signals::flush_stdout)?;
        let state = Serve::new(options, interrupts.clone()).map_err(UserError::usage)?;
        let address = format!(
            "{}:{port}",
            if host.contains(':') { format!("[{}]", host.trim_matches(['[', ']'])) } else { host.clone() }
        );
        let listener = tokio::net::TcpListener::bind(&address)
            .await
            .map_err(|e| UserError { message: format!("cannot listen on {address}: {e}"), usage: false })?;
        let bound = listener.local_addr()?;
        safe_println!(
            "thoughtscope serve: listening on http://{bound}/v1 (model {}; sessions in {})",
            state.model(),
            sessions.display()
        );
        let mut heard = interrupts.clone();
        serve::serve(state, listener, async move {
            signals::first(&mut heard).await;
        })
        .await?;
        let stopped_by = interrupts.borrow().first;
        if let Some(signal) = stopped_by {
            safe_eprintln!("thoughtscope serve: stopped by {signal}; every session is closed");
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_wins_over_the_serve_table_and_the_table_fills_what_flags_leave() {
        let file = Settings {
            api_key: Some("from-file".into()),
            budget_tokens: Some(100),
            budget_usd: Some(0.5),
            max_searches: Some(2),
            max_calls: Some(3),
            profiles: Default::default(),
        };
        let mut args = ServeArgs { api_key: Some("from-flag".into()), max_calls: Some(9), ..ServeArgs::default() };
        args.connect.budget_usd = Some(0.25);
        let m = merged(&args, file.clone());
        assert_eq!(m.api_key.as_deref(), Some("from-flag"));
        assert_eq!((m.max_searches, m.max_calls), (Some(2), Some(9)));
        assert_eq!((m.budget_tokens, m.budget_usd), (Some(100), Some(0.25)));
        assert_eq!(merged(&ServeArgs::default(), file.clone()), file);
    }
}
