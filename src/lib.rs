//! thoughtscope: a terminal workbench for LLM reasoning searches.
//!
//! * `arith` — exact rational arithmetic and expressions, shared by tasks and tools;
//! * `protocol` — what the engine and the providers both speak: requests, replies, call
//!   errors, tool calls, token estimates;
//! * `engine` — the sans-IO search core (tree, methods, commands, events);
//! * `tasks` — problems (Game of 24, ...) with prompts, parsers and checkers;
//! * `llm` — providers (`sim`, `replay`) and the response cache;
//! * `memory` — ReTreVal's cross-problem memory store and its files;
//! * `session` — JSONL recording, loading, replay and importers;
//! * `runtime` — the tokio driver and headless runs;
//! * `export` — a run's tree as JSON, DOT, Mermaid or OpenTelemetry spans;
//! * `diff` — two runs compared: first divergence and tree differences;
//! * `serve` — the OpenAI-compatible HTTP front: each request a recorded search;
//! * `safe_text` — text made safe for a terminal (controls and bidi escaped, secrets redacted).

pub mod arith;
pub mod config;
pub mod demos;
pub mod diff;
pub mod engine;
pub mod export;
pub mod grade;
pub mod import;
pub mod llm;
pub mod memory;
pub mod protocol;
pub mod runtime;
pub mod safe_text;
pub mod serve;
pub mod session;
pub mod tasks;
pub mod tools;
pub mod tui;
pub mod userfile;
