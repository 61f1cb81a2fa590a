//! What a run may spend (budgets in tokens and dollars, refused where they cannot be
//! measured) and where replies are kept (the response cache).

use std::path::PathBuf;

use crate::engine::{Command, Input};
use crate::llm::cache::{CacheMode, CachePolicy, ResponseCache};
use crate::llm::config::{ConfigError, Price, ProviderOptions};
use crate::llm::Provider;
use crate::session::Totals;

/// Spending limits for a whole run; a run stops issuing calls when one is reached.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

impl Budget {
    /// Why `spent` is over budget, if it is.
    /// Tokens the server did not report are estimated from the text and count
    /// [`crate::session::ESTIMATE_MARGIN`] times here, so an under-estimate does not let a
    /// run spend past its budget (the message says how many were estimated).
    pub fn exceeded(&self, spent: &Totals, price: Option<&Price>) -> Option<String> {
        let tokens = spent.tokens_for_budget();
        let estimated = spent.estimated_tokens;
        let how = if estimated > 0 {
            format!(
                " ({estimated} of them estimated, as the server did not report them, and counted {} times)",
                crate::session::ESTIMATE_MARGIN
            )
        } else {
            String::new()
        };
        if let Some(max) = self.tokens.filter(|&m| tokens >= m) {
            return Some(format!("budget exceeded: {tokens} tokens counted{how}, --budget-tokens {max}"));
        }
        if let (Some(max), Some(p)) = (self.usd, price) {
            // The extra count of estimated tokens at the dearer of the two prices.
            let extra = (crate::session::ESTIMATE_MARGIN - 1) * estimated;
            let cost = p.cost(spent.prompt_tokens, spent.completion_tokens) + p.cost(extra, 0).max(p.cost(0, extra));
            if cost >= max {
                return Some(format!("budget exceeded: ${cost:.4} spent{how}, --budget-usd {max}"));
            }
        }
        None
    }
}

/// What a run may spend and where replies are kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLimits {
    pub budget: Budget,
    /// The model's price, for costs (US dollars per million tokens).
    pub price: Option<Price>,
    pub cache: CacheMode,
    /// Which call purposes share answers (default: value prompts, like the reference).
    pub cache_policy: CachePolicy,
    /// Directory of the disk cache (default: under the user cache directory).
    pub cache_dir: Option<PathBuf>,
    /// Breakpoints as written (`--break`, the config's `break`), already checked: headless
    /// runs note where each fires, the explorer pauses there.
    pub breakpoints: Vec<String>,
    /// The model's context window, once asked of the provider (`None`: not known, as for
    /// `sim`): recorded in each session header for the engine to fit prompts to.
    pub context: Option<crate::llm::ContextWindow>,
}

impl RunLimits {
    /// The limits `args` ask for, with `provider`'s price.
    pub fn from_options(args: &ProviderOptions, provider: &dyn Provider) -> Result<RunLimits, ConfigError> {
        let price = provider.price();
        if let Some(b) = args.budget_usd {
            if !(b.is_finite() && b > 0.0) {
                return Err(ConfigError::Invalid(format!("--budget-usd must be a positive amount, not {b}")));
            }
            if let Some(why) = unmeasured_money(provider, price.is_some()) {
                return Err(ConfigError::Invalid(why));
            }
        }
        if args.budget_tokens == Some(0) {
            return Err(ConfigError::Invalid("--budget-tokens must be at least 1".into()));
        }
        Ok(RunLimits {
            budget: Budget { usd: args.budget_usd, tokens: args.budget_tokens },
            price,
            cache: args.cache,
            cache_policy: args.cache_purposes.clone().unwrap_or_default(),
            cache_dir: None,
            breakpoints: Vec::new(),
            context: None,
        })
    }

    /// The inputs a run opens with: its breakpoints (if any), then `then`.
    pub fn opening(&self, then: Input) -> Vec<Input> {
        let mut inputs = Vec::new();
        if !self.breakpoints.is_empty() {
            inputs.push(Input::command(Command::Breakpoints { set: self.breakpoints.clone() }));
        }
        inputs.push(then);
        inputs
    }
}

/// Why a money budget could not be measured on `provider`, if it could not: refused
/// rather than warned about, since a budget that never trips lets a run spend without
/// bound (a local proxy to a paid API is taken as free), and a warning scrolls away.
fn unmeasured_money(provider: &dyn Provider, priced: bool) -> Option<String> {
    let model = provider.model();
    let add =
        format!("add [prices.\"{model}\"] with input and output (US dollars per million tokens) to the config file");
    if provider.simulated() {
        return Some(
            "--budget-usd: the simulated model has no price, so a money budget would never stop the run; \
             use --budget-tokens N"
                .into(),
        );
    }
    if !priced {
        return Some(format!("--budget-usd needs the price of model {model:?}: {add}"));
    }
    if provider.price_assumed() {
        return Some(format!(
            "--budget-usd cannot be measured: {} is on this machine and nothing prices model {model:?}, so it \
             counts as free and the budget would never stop the run; if it passes calls on to a paid API, {add}",
            provider.describe()
        ));
    }
    None
}

/// The response cache `limits` ask for, and a note if the disk cache could not be had.
pub fn open_cache(limits: &RunLimits) -> (ResponseCache, Option<String>) {
    let policy = limits.cache_policy.clone();
    let (cache, note) = match limits.cache {
        CacheMode::Off => (ResponseCache::off(), None),
        CacheMode::Memory => (ResponseCache::new(), None),
        CacheMode::Disk => {
            let dir = limits.cache_dir.clone().or_else(crate::llm::cache::default_disk_dir);
            match dir.as_deref().map(ResponseCache::with_disk) {
                Some(Ok(c)) => (c, None),
                Some(Err(e)) => (
                    ResponseCache::new(),
                    Some(format!("the disk cache is unavailable ({e}); replies are kept in memory only")),
                ),
                None => {
                    (ResponseCache::new(), Some("no user cache directory; replies are kept in memory only".to_string()))
                }
            }
        }
    };
    (cache.with_policy(policy), note)
}
