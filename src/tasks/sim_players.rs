//! The simulated model's players, as the tasks registered them: the registry the
//! simulator (`engine::sim`) finds a request's player in, and whether it can play a
//! run before the run starts.

use super::{and_list, file, find, names};
use crate::engine::sim::{Play, Players};
use crate::engine::{Params, Task};
use crate::protocol::{LlmRequest, ToolRequest};

/// Every task's player ([`super::TaskEntry::sim`]), and a task file's: what the sim
/// provider is given (`SimProvider::new(config, &SimPlayers)`).
pub struct SimPlayers;

impl Players for SimPlayers {
    fn player(&self, request: &LlmRequest) -> Option<Play> {
        // A task file's prompts carry what its player reads (`tasks::file::sim`).
        if request.context.get(file::CONTEXT_KEY).is_some() {
            return Some(file::sim::play as Play);
        }
        let task = request.context.get("task").and_then(|t| t.as_str()).unwrap_or("");
        find(task).and_then(|entry| entry.sim)
    }

    /// Read as the ReAct tasks read a step; an answer with unbalanced brackets (an
    /// interval such as `[2,5)`) runs to the last `]`.
    fn read_step(&self, text: &str) -> (Option<String>, Option<ToolRequest>) {
        let parsed = super::react_text::parse_step(text, 0);
        let action = parsed.action.map(|mut action| {
            if action.name.eq_ignore_ascii_case("finish") {
                if let Some(arg) = super::math::answer::finish_arg(text) {
                    action.arg = arg;
                }
            }
            ToolRequest { name: action.name, arg: action.arg }
        });
        (parsed.thought, action)
    }
}

/// Whether the simulated model plays the registered task named `task` (or an alias).
fn plays(task: &str) -> bool {
    find(task).is_some_and(|entry| entry.sim.is_some())
}

/// Whether the simulated model can play a run of `params` on `task`: `Err` is the one
/// line that says why not, for refusing the run before it starts.
pub fn check_sim_plays(task: &dyn Task, params: &Params) -> Result<(), String> {
    if let Some(verdict) = task.sim_plays(params) {
        return verdict;
    }
    if plays(task.name()) {
        return Ok(());
    }
    let played: Vec<&str> = names().into_iter().filter(|name| plays(name)).collect();
    Err(format!(
        "sim cannot play {}: it has no simulated player (sim plays {}); run it with a model (--provider ...)",
        task.name(),
        and_list(&played)
    ))
}
