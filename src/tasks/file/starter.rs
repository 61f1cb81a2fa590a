//! `thoughtscope task new NAME`: a commented starting folder that checks and runs as it
//! is (with `sim`, and with a model), for a person to edit into their own task.

use std::path::{Path, PathBuf};

const TASK_TOML: &str = r#"# A thoughtscope task file. Check it:  thoughtscope task check NAME
# Run it:    thoughtscope run --task NAME --method cot     (or open it: thoughtscope tui --task NAME)
name = "NAME"
about = "What the task is, in one line"
input_noun = "problem"      # what one input is called in the explorer

[problems]
file = "problems.jsonl"     # .jsonl (an object a line), .json (an array) or .csv (a header line)
input = "question"          # the field that is the problem's text      (default "input")
gold = "answer"             # the field with the gold answer             (default "answer")
steps = "steps"             # the correct steps, if any: sim plays tree search and ReAct from them
facets = ["topic"]          # fields results are broken down by
# items = [{ question = "2 + 2?", answer = "4" }]   # or problems written here

# One minijinja template a call purpose: io, cot (both needed), and for tree search
# propose or sample, value or vote; react for ReAct with tools. A purpose without a
# prompt is a capability the task lacks: methods that need it are refused by name.
# Variables: input, problem.<field>; propose/sample/value: y, steps, step (value: answer);
# vote: choices, ys; react: trajectory, step, tools. [system]/[user]/[assistant] lines
# start chat turns. A prompt is text, or { file = "name.txt" } in this folder.
# Write prompts in ''' strings, which TOML keeps as they are: in """ strings a
# backslash starts an escape (\b in \boxed would be a backspace).
[prompts]
io = '''
[system]
Reply with the answer alone, inside \boxed{}.
[user]
{{ input }}'''
cot = { file = "cot.txt" }

[answer]
# How the answer is read from a reply: auto (the math grader's reading), boxed,
# answer-is ("the answer is X"), answer-line ("Answer: X"), last-line,
# regex (with pattern = '...(group)...'), json (with field = "answer").
read = "boxed"

[check]
# exact (case_sensitive, keep_punctuation), numeric (tolerance), math (the grader:
# 1/2 = 0.5 = \frac{1}{2}), choice (A, (B), C) text), regex (the gold answer is a
# pattern), list (gold answers split by separator, default "|"), or command
# (command = ["python3", "check.py"], timeout_ms; stdin {"answer", "gold", "input"},
# stdout {"correct": true, "score": 1}).
kind = "math"

# Tree search (tot-bfs, tot-dfs, mcts) needs a [tree] table and propose/value prompts:
# [tree]
# steps = 3                                   # steps in a full answer
# step_pattern = '^\d+ [-+*/] \d+ = \d+$'     # a step checker: other steps are rejected
# final_pattern = '^Answer: \d+$'             # what the last step must look like
# value_classes = { impossible = 0.001, likely = 1, sure = 20 }
# vote_pattern = 'best choice is (\d+)'

# ReAct (react, retreval) needs a react prompt and tools:
# [tools]
# corpus = "corpus"      # a folder of .md/.txt pages: search[page] and lookup[word]
# calculate = true       # calculate[expression]
# math = true            # calc, algebra, lp and count (the math tools)
"#;

const COT_TXT: &str = r#"[system]
Think step by step, one short line a step, then give the final answer inside \boxed{} on the last line.
[user]
Problem: A box holds 6 eggs. How many eggs are in 4 boxes and 3 loose eggs?
[assistant]
4 * 6 = 24
24 + 3 = 27
\boxed{27}
[user]
Problem: {{ input }}
"#;

const PROBLEMS: &str = r#"{"question": "Ana has 3 bags of 5 apples and eats 2. How many apples are left?", "answer": "13", "steps": ["3 * 5 = 15", "15 - 2 = 13"], "topic": "counting"}
{"question": "A ticket costs $8. How many dollars do 7 tickets cost?", "answer": "56", "steps": ["7 * 8 = 56"], "topic": "money"}
{"question": "What is half of a quarter? Give a fraction.", "answer": "\\frac{1}{8}", "steps": ["1/2 * 1/4 = 1/8"], "topic": "fractions"}
"#;

/// Write the starting folder `dir` (its last part names the task); refuses to write
/// over anything.
pub fn write(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return Err(format!("{}: a task's folder name is its name: one word, like my-task", dir.display()));
    }
    if dir.exists() {
        return Err(format!("{} exists already; name a new folder", dir.display()));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let files = [
        ("task.toml", TASK_TOML.replace("NAME", &name)),
        ("cot.txt", COT_TXT.into()),
        ("problems.jsonl", PROBLEMS.into()),
    ];
    let mut written = Vec::new();
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}
