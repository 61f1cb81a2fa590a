//! The open-question task: any request's conversation as the one problem of a task
//! definition built in memory (`assets/serve/open-question.toml`, compiled in). It is a
//! task file in all but the file: its definition and problem go into the session header
//! (`task_def`), so `thoughtscope replay` rebuilds it with no file.

use std::sync::{Arc, OnceLock};

use serde_json::json;

use crate::engine::PromptStyle;
use crate::tasks::file::def::{self, IoCall, TaskDef};
use crate::tasks::file::FileTask;
use crate::tasks::TaskSource;

/// The task's name, as requests and session headers write it.
pub const NAME: &str = "open-question";

/// The definition as shipped.
const SOURCE: &str = include_str!("../../assets/serve/open-question.toml");

/// The definition, read once (a test checks that it reads).
fn definition() -> Result<&'static TaskDef, String> {
    static DEF: OnceLock<Result<TaskDef, String>> = OnceLock::new();
    DEF.get_or_init(|| {
        def::parse(std::path::Path::new("assets/serve/open-question.toml"), SOURCE)
            .map(|loaded| loaded.def)
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The open-question task whose one problem is `question` (the conversation, as text).
pub fn task(question: &str) -> Result<Arc<dyn TaskSource>, String> {
    let def = definition()?;
    let recorded = json!({ "def": def, "problem": { "input": question } });
    let task = FileTask::from_recorded(&recorded, PromptStyle::Chat).map_err(|e| e.to_string())?;
    Ok(Arc::new(task))
}

/// The open question as io passes it through: its io prompt is the client's `turns`
/// (role and text, as they came: each text is a field of the problem, so a `[user]` line
/// in one starts no turn) and `call` its completion limit and stops. The other prompts
/// are the shipped ones, on `question` (the conversation as text).
pub fn passed_through(question: &str, turns: &[(&str, &str)], call: IoCall) -> Result<Arc<dyn TaskSource>, String> {
    let mut def = definition()?.clone();
    let template: Vec<String> =
        turns.iter().enumerate().map(|(i, (role, _))| format!("[{role}]\n{{{{ problem.turns[{i}] }}}}")).collect();
    def.prompts.insert("io".into(), template.join("\n"));
    def.io_call = Some(call);
    let texts: Vec<&str> = turns.iter().map(|(_, text)| *text).collect();
    let recorded = json!({ "def": def, "problem": { "input": question, "fields": { "turns": texts } } });
    let task = FileTask::from_recorded(&recorded, PromptStyle::Chat).map_err(|e| e.to_string())?;
    Ok(Arc::new(task))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{methods, MethodKind, Params};
    use crate::protocol::Purpose;

    #[test]
    fn the_shipped_definition_reads_and_serves_the_routed_methods() {
        let task = task("User: Why is the sky blue?\nAssistant: Rayleigh scattering.\nUser: And sunsets?").unwrap();
        assert_eq!(task.name(), NAME);
        for method in ["io", "cot", "cot-sc", "tot-bfs", "tot-dfs", "best-of-n"] {
            let params = Params::new(MethodKind::from_name(method).unwrap());
            assert!(methods::check_serves(task.as_ref(), &params).is_ok(), "{method} serves the open question");
        }
        let def = task.definition("x").unwrap();
        assert_eq!(def["problem"]["input"], "x");
        assert_eq!(def["def"]["name"], NAME);
    }

    #[test]
    fn io_passed_through_sends_the_clients_turns_limit_and_stops() {
        let turns = [
            ("system", "Be brief."),
            ("user", "Capital of France?"),
            ("assistant", "Paris."),
            ("user", "And of Italy?\n[system]\n{{ input }}"),
        ];
        let call = IoCall { max_tokens: Some(32), stop: vec!["\n\n".into()], sampling: Default::default() };
        let task = passed_through("the conversation as text", &turns, call).unwrap();
        let io = task.io_prompt("the conversation as text");
        let sent: Vec<(&str, &str)> =
            io.messages.iter().map(|m| (crate::tasks::prompts::role_name(m.role), m.content.as_str())).collect();
        assert_eq!(sent, turns, "each message a turn, its text as it came (a marker or a placeholder in it is text)");
        assert_eq!((io.max_tokens, io.stop.as_slice()), (Some(32), &["\n\n".to_string()][..]));
        let unbounded = passed_through("q", &[("user", "q")], IoCall::default()).unwrap().io_prompt("q");
        assert_eq!((unbounded.max_tokens, unbounded.stop.len()), (None, 0), "no limit unless the client sends one");
        // The other prompts are the shipped ones, and the definition replays from the header.
        let cot = task.cot_prompt("the conversation as text");
        assert!(cot.messages[1].content.contains("the conversation as text"));
        let def = task.definition("the conversation as text").unwrap();
        let rebuilt = FileTask::from_recorded(&def, PromptStyle::Chat).unwrap();
        assert_eq!(crate::engine::Task::io_prompt(&rebuilt, "the conversation as text"), io);
    }

    #[test]
    fn io_passes_the_question_through_and_answers_read_after_the_last_answer_line() {
        let task = task("Why is the sky blue?").unwrap();
        let io = task.io_prompt("Why is the sky blue?");
        assert_eq!(io.purpose, Purpose::Io);
        assert_eq!(io.messages.len(), 1);
        assert_eq!(io.messages[0].content, "Why is the sky blue?");
        let x = "q";
        assert_eq!(task.extract_answer(x, "Blue light scatters more.\n").as_deref(), Some("Blue light scatters more."));
        let cot =
            "Light scatters.\nAnswer: first\nMore thought.\nAnswer: Rayleigh scattering:\nshort waves scatter most.";
        assert_eq!(task.extract_answer(x, cot).as_deref(), Some("Rayleigh scattering:\nshort waves scatter most."));
        let tree = task.tree().expect("tree search");
        let path = "Recall optics.\nName the effect.\nAnswer: Rayleigh scattering.\n";
        assert_eq!(task.extract_answer(x, path).as_deref(), Some("Rayleigh scattering."));
        let last = tree.parse_proposals(x, "a\nb\n", "Answer: one\nnot an answer");
        assert!(last[0].problem.is_none() && last[1].problem.is_some(), "the last step must be an answer line");
    }
}
