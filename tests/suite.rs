//! The integration tests as one test binary: each file of tests/ is a module of this crate
//! root, so the library is linked once for all of them rather than once per file (issue 49).
//! Cargo.toml turns off the discovery of test targets; a new test file is one `mod` line here.

mod support;

mod breakpoints;
mod chat_families;
mod cli;
mod cmp_side_by_side;
mod compare;
mod crosswords;
mod diff;
mod docs;
mod e2e_pty;
mod empty_replies;
mod engine_is_sans_io;
mod export;
mod grade;
mod hostile_inputs;
mod import_logs;
mod import_react;
mod import_tot;
mod llama_server;
mod math_tasks;
mod mcp_tools;
mod memory_cli;
mod memory_run;
mod native_tools;
mod parallel_runs;
mod provider_faults;
mod provider_reasoning;
mod provider_responses;
mod provider_runs;
mod qa_data;
mod readme;
mod refine;
mod reply_health;
mod reply_parsers;
mod retreval;
mod sched_samples;
mod secrets;
mod serve;
mod serve_openai_client;
mod shipped_sessions;
mod structure;
mod task_file_guards;
mod task_files;
mod tools_wikipedia;
mod upstream_lost;
mod viz_diff;
mod writing;
