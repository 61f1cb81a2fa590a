//! Importers: other tools' logs turned into sessions by running them through the real
//! engine (the reference Tree-of-Thoughts logs, ReAct's text trajectories).

pub mod crosswords_dfs;
pub mod naive;
pub mod react;
pub mod tot;
pub mod writing_bfs;

use std::path::Path;

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
    let text = std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read: {e}")))?;
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
