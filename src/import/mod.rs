//! Importers: other tools' logs turned into sessions by running them through the real
//! engine (the reference Tree-of-Thoughts logs, ReAct's text trajectories).

pub mod crosswords_dfs;
pub mod naive;
pub mod react;
pub mod tot;
pub mod writing_bfs;

use std::path::Path;

use crate::engine::{Command, Engine, Event, Input};
use crate::protocol::{CallError, LlmRequest, LlmResponse, Usage};
use crate::runtime::{sync, Run, StopPolicy};
use crate::session::SessionWriter;

/// The kinds of reference Tree-of-Thoughts log `import tot-log` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TotLogFormat {
    /// run.py's Game-of-24 BFS (`{idx, steps, ys, infos, usage_so_far}` per puzzle): [`tot`].
    Game24Bfs,
    /// run.py --naive_run (`{idx, ys, accs | infos, usage_so_far}` per input): [`naive`].
    Naive,
    /// The crosswords notebook's DFS (a list of visited states per puzzle): [`crosswords_dfs`].
    CrosswordsDfs,
    /// run.py's creative-writing BFS (`{idx, steps, ys, infos, usage_so_far}`, sampled
    /// plans and passages with vote counts): [`writing_bfs`].
    WritingBfs,
}

/// Every format, said when a file is none of them.
pub const TOT_LOG_FORMATS: &str = "the Game-of-24 BFS log (a list of {idx, steps, ys, infos, usage_so_far}), a naive \
    sampling log of Game of 24, crosswords or creative writing (a list of {idx, ys, accs or infos, usage_so_far}), the crossword DFS \
    log (a list of lists of {total_step, env_step, actions, info, count}) or the creative-writing BFS log (a list of \
    {idx, steps, ys, infos, usage_so_far} whose input is sentences)";

/// Which format the file at `path` holds, from its shape; a file that is none of them is
/// refused naming what was found and the formats expected.
pub fn detect_tot_log(path: &Path) -> Result<TotLogFormat, tot::ImportError> {
    let source = path.display().to_string();
    let fail = |message: String| tot::ImportError::Read { path: source.clone(), message };
    let text = crate::userfile::read_text(path, &crate::userfile::LOG)
        .map_err(|e| fail(format!("cannot read: {}", e.reason())))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| fail(format!("not JSON ({e}); expected {TOT_LOG_FORMATS}")))?;
    detect_value(&value).map_err(fail)
}

pub fn detect_value(value: &serde_json::Value) -> Result<TotLogFormat, String> {
    let Some(first) = value.as_array().and_then(|a| a.first()) else {
        return Err(format!("not a non-empty JSON list; expected {TOT_LOG_FORMATS}"));
    };
    if first.is_array() && crosswords_dfs::looks_dfs(value) {
        return Ok(TotLogFormat::CrosswordsDfs);
    }
    if naive::looks_naive(value) {
        return Ok(TotLogFormat::Naive);
    }
    if writing_bfs::looks_writing_bfs(first) {
        return Ok(TotLogFormat::WritingBfs);
    }
    if first.get("steps").is_some() || first.get("idx").is_some() {
        // The BFS importer validates it and says precisely what else it is.
        return Ok(TotLogFormat::Game24Bfs);
    }
    Err(format!("entry 0 is none of the known shapes; expected {TOT_LOG_FORMATS}"))
}

/// The header of a session imported from a reference Tree-of-Thoughts log: entry `index`
/// of the log at `source`, priced by the table when it knows `model` (the reference's
/// gpt-4 costs are the table's, so the sessions' costs are the log's).
pub(crate) fn tot_log_header(
    task: &str,
    input: &str,
    index: usize,
    params: crate::engine::Params,
    model: &str,
    source: &str,
) -> crate::session::Header {
    crate::session::Header {
        format: crate::session::FORMAT.into(),
        version: crate::session::VERSION,
        thoughtscope: Some(crate::session::PROGRAM_VERSION.into()),
        task: task.into(),
        input: input.into(),
        index: Some(index),
        params,
        provider: "import:tot-log".into(),
        model: model.into(),
        simulated: false,
        sim: None,
        price: crate::llm::config::PriceTable::defaults().lookup(model),
        source: Some(format!("tot-log:{source}#{index}")),
        parent: None,
        note: None,
        gold: None,
        actions: None,
        facets: Default::default(),
        memory: None,
        unjudged: false,
        prompt_style: Default::default(),
        context_window: None,
        task_def: None,
        provider_notes: Vec::new(),
    }
}

/// The backend and sampling temperature a reference log's file name states: run.py names
/// its logs `{backend}_{temperature}_...` (`gpt-4_1.0_naive_cot_sample_10_start0_end100.json`,
/// `gpt-4_1.0_generate_sample_select_greedy_sample5_start0_end100.json`); a copy named with
/// the task first (`game24_gpt-4_0.7_naive_...`) is read the same way after that word. The
/// temperature is the first part that is a number, the backend everything before it.
pub(crate) fn named_backend_and_temperature(file_name: &str) -> Option<(String, f32)> {
    let stem = file_name.strip_suffix(".json").unwrap_or(file_name);
    let parts: Vec<&str> = stem.split('_').collect();
    let first = usize::from(matches!(parts.first().copied(), Some("game24" | "crosswords" | "text")));
    let at = (first + 1..parts.len()).find(|&i| parts[i].parse::<f32>().is_ok_and(|t| t.is_finite() && t >= 0.0))?;
    let temperature = parts[at].parse::<f32>().ok()?;
    Some((parts[first..at].join("_"), temperature))
}

/// Each entry's own (prompt, completion) tokens from the log's cumulative `usage_so_far`:
/// the difference from the entry before, or the entry's own figure where the counter went
/// down (it restarted: logs of two runs put together).
pub(crate) fn own_usage(cumulative: impl IntoIterator<Item = (u64, u64)>) -> Vec<(u64, u64)> {
    let mut before = (0u64, 0u64);
    cumulative
        .into_iter()
        .map(|now| {
            let own = if now.0 >= before.0 && now.1 >= before.1 { (now.0 - before.0, now.1 - before.1) } else { now };
            before = now;
            own
        })
        .collect()
}

/// What answers an imported run's calls from a log entry.
pub(crate) trait LogAnswerer {
    /// The log's reply to `request`, carrying `usage`.
    fn answer(&mut self, request: &LlmRequest, usage: Usage) -> Result<LlmResponse, CallError>;
    /// Whether the reference answered `request` from its own cache (no call, no tokens):
    /// the reply is then a cache hit and carries no share of the entry's tokens.
    fn answered_from_cache(&self, _request: &LlmRequest) -> bool {
        false
    }
}

/// The session an imported entry records to `path` (none without one), with `header()`.
pub(crate) fn log_writer(
    path: Option<&Path>,
    header: impl FnOnce() -> crate::session::Header,
) -> Result<Option<SessionWriter>, tot::ImportError> {
    Ok(path.map(|p| SessionWriter::create(p, &header())).transpose()?)
}

/// Which calls of an imported run say their tokens are an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shares {
    /// Every call: the log gives tokens per entry only.
    Estimated,
    /// Only where the entry's tokens are shared over more than one call.
    EstimatedIfShared,
}

/// Re-run `engine` against `answers()`, recording to `writer()`: a first run (unrecorded)
/// counts the calls, so the entry's `usage` (the log gives tokens per entry only) is
/// shared equally over them before anything is written, and the session's totals are the
/// log's. Calls the reference answered from its cache are cache hits with no share.
/// Gives the ended run, its events and the answerer of the recorded run.
pub(crate) fn drive_sharing_usage<A: LogAnswerer>(
    engine: impl Fn() -> Engine,
    answers: impl Fn() -> A,
    usage: (u64, u64),
    shares: Shares,
    writer: impl FnOnce() -> Result<Option<SessionWriter>, tot::ImportError>,
) -> Result<(Run, Vec<Event>, A), tot::ImportError> {
    let go = || vec![Input::command(Command::Run)];
    let calls = {
        let (mut counting, mut calls) = (answers(), 0u64);
        let mut run = Run::new(engine(), None, StopPolicy::default());
        sync::drive(&mut run, go(), |r| {
            calls += u64::from(!counting.answered_from_cache(r));
            counting.answer(r, Usage::default())
        })?;
        calls
    };
    let (mut answering, mut call) = (answers(), 0u64);
    let mut run = Run::new(engine(), writer()?, StopPolicy::default());
    let events = sync::drive(&mut run, go(), |r| {
        if answering.answered_from_cache(r) {
            return answering.answer(r, Usage::default());
        }
        let usage = Usage {
            prompt_tokens: tot::share(usage.0, calls, call),
            completion_tokens: tot::share(usage.1, calls, call),
            estimated: shares == Shares::Estimated || calls > 1,
            ..Usage::default()
        };
        call += 1;
        answering.answer(r, usage)
    })?;
    run.end(0)?;
    Ok((run, events, answering))
}

/// One imported puzzle or input checked against its log entry (`--verify`).
pub trait LogCheck {
    /// How messages name it: "puzzle 3 (1 1 4 6)", "input 7".
    fn label(&self) -> String;
    /// Where the re-run differs from the log; empty when it agrees.
    fn disagreements(&self) -> &[String];
}

/// What every `import tot-log` report has for `--verify`.
pub trait VerifiedImport {
    type Check: LogCheck;
    fn checks(&self) -> &[Self::Check];
    /// What its entries are called in the plural: "puzzles" or "inputs".
    fn units(&self) -> &'static str;

    /// Entries that agree with the log everywhere.
    fn agreeing(&self) -> usize {
        self.checks().iter().filter(|c| c.disagreements().is_empty()).count()
    }

    /// Every difference, one line each, named by its entry.
    fn difference_lines(&self) -> Vec<String> {
        self.checks()
            .iter()
            .flat_map(|c| {
                let label = c.label();
                c.disagreements().iter().map(move |d| format!("{label}: {d}"))
            })
            .collect()
    }

    /// `Err` with one line saying how many entries differ and the first difference.
    fn verdict(&self) -> Result<(), String> {
        let checks = self.checks();
        match checks.iter().find_map(|c| c.disagreements().first().map(|d| (c, d))) {
            None => Ok(()),
            Some((c, d)) => Err(format!(
                "{} of {} {} differ from the log; the first: {}: {d}",
                checks.len() - self.agreeing(),
                checks.len(),
                self.units(),
                c.label()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Check(&'static str, Vec<String>);
    impl LogCheck for Check {
        fn label(&self) -> String {
            self.0.to_string()
        }
        fn disagreements(&self) -> &[String] {
            &self.1
        }
    }
    struct Report(Vec<Check>);
    impl VerifiedImport for Report {
        type Check = Check;
        fn checks(&self) -> &[Check] {
            &self.0
        }
        fn units(&self) -> &'static str {
            "puzzles"
        }
    }

    #[test]
    fn the_verdict_names_how_many_differ_and_the_first_difference() {
        let r = Report(vec![
            Check("puzzle 1", vec![]),
            Check("puzzle 2", vec!["step 1: kept a".into(), "step 2: kept b".into()]),
            Check("puzzle 3", vec!["final".into()]),
        ]);
        assert_eq!(r.agreeing(), 1);
        assert_eq!(r.verdict().unwrap_err(), "2 of 3 puzzles differ from the log; the first: puzzle 2: step 1: kept a");
        assert_eq!(r.difference_lines(), ["puzzle 2: step 1: kept a", "puzzle 2: step 2: kept b", "puzzle 3: final"]);
        assert!(Report(vec![Check("puzzle 1", vec![])]).verdict().is_ok());
    }

    #[test]
    fn file_names_state_backend_and_temperature_in_the_references_own_naming() {
        let named = |n: &str| named_backend_and_temperature(n);
        assert_eq!(named("gpt-4_1.0_naive_cot_sample_10_start0_end100.json"), Some(("gpt-4".into(), 1.0)));
        assert_eq!(
            named("gpt-4_1.0_generate_sample_select_greedy_sample5_start0_end100.json"),
            Some(("gpt-4".into(), 1.0))
        );
        assert_eq!(
            named("game24_gpt-4_0.7_naive_standard_sample_100_start900_end1000.json"),
            Some(("gpt-4".into(), 0.7))
        );
        assert_eq!(named("crosswords_my_model_1.0_naive_cot.json"), Some(("my_model".into(), 1.0)));
        assert_eq!(
            named("gpt-3.5-turbo_0.0_propose1_value3_greedy5_start900_end1000.json"),
            Some(("gpt-3.5-turbo".into(), 0.0))
        );
        // No backend before the number, no number, or not a temperature: nothing is read.
        assert_eq!(named("0.7_naive.json"), None);
        assert_eq!(named("log.json"), None);
        assert_eq!(named("gpt-4_nan_naive.json"), None);
    }

    #[test]
    fn usage_is_each_entrys_own_and_a_restarted_counter_counts_whole() {
        assert_eq!(own_usage([(10, 1), (25, 3), (5, 2), (9, 4)]), [(10, 1), (15, 2), (5, 2), (4, 2)]);
    }
}
