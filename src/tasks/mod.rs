//! Tasks: the problems a search works on. Each implements `engine::Task` (pure
//! prompt rendering, reply parsing and answer checking) and knows its inputs.

pub mod game24;
pub mod prompts;
pub mod qa_demo;
pub mod react_text;

use std::sync::Arc;

use crate::engine::Task;

#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("unknown task {0:?} (known: game24, qa-demo)")]
    Unknown(String),
    #[error("bad --range {0:?}: {1}")]
    Range(String, String),
    #[error("bad --input {0:?}: {1}")]
    Input(String, String),
    #[error("prompt template {path}: {message}")]
    Prompt { path: String, message: String },
    #[error("task data: {0}")]
    Data(String),
}

/// One problem of a task: its position in the task's list (if any) and its input text.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub index: Option<usize>,
    pub input: String,
}

/// A task family with its problem list.
pub trait TaskSource: Task {
    /// Number of problems in the built-in list.
    fn problem_count(&self) -> usize;
    /// The problem at a 0-based index.
    fn problem(&self, index: usize) -> Option<Problem>;
    /// A problem written by the user (e.g. `"4 9 10 13"`), normalised and checked.
    fn parse_input(&self, text: &str) -> Result<Problem, TaskError>;
    /// The tools ReAct may use on this task, if it supports ReAct.
    fn tools(&self) -> Option<std::sync::Arc<crate::tools::ToolRegistry>> {
        None
    }
}

/// Parse a Python-style range `A..B` (0-based, end exclusive) or a single index `A`.
pub fn parse_range(text: &str, len: usize) -> Result<std::ops::Range<usize>, TaskError> {
    let err = |m: &str| TaskError::Range(text.to_string(), m.to_string());
    let (a, b) = match text.split_once("..") {
        Some((a, b)) => {
            let a: usize =
                if a.trim().is_empty() { 0 } else { a.trim().parse().map_err(|_| err("start is not a number"))? };
            let b: usize =
                if b.trim().is_empty() { len } else { b.trim().parse().map_err(|_| err("end is not a number"))? };
            (a, b)
        }
        None => {
            let a: usize = text.trim().parse().map_err(|_| err("expected A..B or an index"))?;
            (a, a + 1)
        }
    };
    if a >= b {
        return Err(err("the range is empty"));
    }
    if b > len {
        return Err(err(&format!("the task has {len} problems (indices 0..{len})")));
    }
    Ok(a..b)
}

pub fn by_name(name: &str, prompt_dir: Option<&std::path::Path>) -> Result<Arc<dyn TaskSource>, TaskError> {
    match name {
        "game24" | "24" => Ok(Arc::new(game24::Game24::new(prompt_dir)?)),
        "qa-demo" => Ok(Arc::new(qa_demo::QaDemo::new(prompt_dir)?)),
        other => Err(TaskError::Unknown(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_follow_python() {
        assert_eq!(parse_range("900..1000", 1362).unwrap(), 900..1000);
        assert_eq!(parse_range("5", 1362).unwrap(), 5..6);
        assert_eq!(parse_range("..3", 1362).unwrap(), 0..3);
        assert!(parse_range("10..5", 1362).is_err());
        assert!(parse_range("0..2000", 1362).unwrap_err().to_string().contains("1362 problems"));
        assert!(parse_range("a..b", 10).is_err());
    }
}
