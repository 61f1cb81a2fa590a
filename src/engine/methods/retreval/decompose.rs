//! Step 5 of ReTreVal: decomposition. When the problem is complex enough and the best
//! score stays low, the model splits the problem into 2–4 subtasks in dependency order,
//! each with an explicit exit condition; each subtask is solved by its own sub-search
//! on [`subtask_problem`]'s text, and [`compose_prompt`] asks for the whole answer from
//! the results.

use serde::{Deserialize, Serialize};

use crate::engine::task::Task;
use crate::protocol::{Prompt, Purpose, Role};

use super::{bounded, clip, field, prompt, CONTEXT_KEY, MAX_TRACE_CHARS};

/// One subtask of a decomposition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subtask {
    /// Its number, 1-based, in dependency order.
    pub id: usize,
    pub goal: String,
    /// Earlier subtasks whose results it needs (ascending, each below `id`).
    pub depends_on: Vec<usize>,
    /// When the subtask counts as done.
    pub exit_condition: String,
}

/// A subtask with its sub-search's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SolvedSubtask {
    pub subtask: Subtask,
    pub result: String,
}

/// Fewest subtasks a decomposition has.
pub const MIN_SUBTASKS: usize = 2;
/// Most subtasks a decomposition may have (the `max_subtasks` parameter's top).
pub const MAX_SUBTASKS: usize = 4;
/// Most characters kept of a subtask's goal or exit condition.
const MAX_FIELD_CHARS: usize = 2_000;

/// Ask the model to split problem `x` into 2 to `max_subtasks` (clamped to 2–4)
/// subtasks in dependency order, each with `Subtask K:`, `Depends on:` and
/// `Exit condition:` lines (purpose `propose`, context `"retreval": "decompose"`,
/// `max_subtasks`).
pub fn decompose_prompt(task: &dyn Task, x: &str, max_subtasks: usize) -> Prompt {
    let max = max_subtasks.clamp(MIN_SUBTASKS, MAX_SUBTASKS);
    let text = format!(
        "Problem:\n{}\n\nThis problem is hard to solve in one go. Split it into {MIN_SUBTASKS} to {max} \
subtasks that, solved in order, give the answer. List them in dependency order: a subtask may \
use only the results of subtasks listed before it. Write each subtask as exactly these lines:\n\
Subtask K: what to find or show\n\
Depends on: the numbers of earlier subtasks it uses, or none\n\
Exit condition: the concrete result that means it is done (e.g. a value of x, a count, a proven claim)\n\
Do not solve the subtasks.",
        clip(x.trim(), MAX_TRACE_CHARS)
    );
    let mut p = prompt(task, x, Purpose::Propose, "decompose", text, serde_json::json!({ "max_subtasks": max }));
    p.max_tokens = Some(600);
    p
}

/// `Subtask 2: goal`, `**Sub-task 2.** goal`, `### Task 2) goal`: the number and the
/// text after it (maybe empty).
fn subtask_header(line: &str) -> Option<(usize, &str)> {
    let start = line.trim_start_matches(|c: char| !c.is_alphanumeric());
    let rest = ["subtask", "sub-task", "sub task", "task"].iter().find_map(|label| {
        let head = start.get(..label.len())?;
        head.eq_ignore_ascii_case(label).then(|| &start[label.len()..])
    })?;
    let rest = rest.trim_start_matches([' ', '#']);
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 3 {
        return None;
    }
    let number: usize = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    let markdown = |c: char| c == '*' || c == '_' || c == '`' || c.is_whitespace();
    let after = after.trim_start_matches(markdown);
    // A separator, or nothing: `Subtask 2` alone on its line.
    let after = match after.strip_prefix([':', '.', ')', '-', '—', '–']) {
        Some(text) => text,
        None if after.is_empty() => after,
        None => return None,
    };
    Some((number, after.trim_matches(markdown)))
}

/// Which field continuation lines go on.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Goal,
    Exit,
    Other,
}

struct Draft {
    number: usize,
    goal: String,
    depends: Option<String>,
    exit: Option<String>,
}

fn append(text: &mut String, more: &str) {
    // Bytes, not characters: a constant-time check (the field is clipped to characters later).
    if text.len() < MAX_FIELD_CHARS {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(more);
    }
}

/// Read a decomposition reply into subtasks, checking that there are 2 to
/// `max_subtasks` (clamped to 2–4), numbered 1, 2, ... in order, each with a goal and
/// an exit condition, and that every dependency points to an earlier subtask (so the
/// order is a topological order and there is no cycle). A missing `Depends on:` line
/// means none. Lines before the first subtask are ignored. A bad reply is one error
/// line naming the subtask and what is wrong.
pub fn parse_subtasks(reply: &str, max_subtasks: usize) -> Result<Vec<Subtask>, String> {
    let max = max_subtasks.clamp(MIN_SUBTASKS, MAX_SUBTASKS);
    let too_many = |n: usize| format!("the reply lists {n} or more subtasks; it must list {MIN_SUBTASKS} to {max}");
    let mut drafts: Vec<Draft> = Vec::new();
    let mut open = Open::Other;
    for line in bounded(reply).lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some((number, goal)) = subtask_header(trimmed) {
            if drafts.len() == max {
                return Err(too_many(max + 1));
            }
            drafts.push(Draft { number, goal: String::new(), depends: None, exit: None });
            if let Some(d) = drafts.last_mut() {
                append(&mut d.goal, goal);
            }
            open = Open::Goal;
            continue;
        }
        let Some(d) = drafts.last_mut() else { continue };
        if let Some(text) = field(trimmed, &["goal", "objective"]) {
            append(&mut d.goal, text);
            open = Open::Goal;
        } else if let Some(text) = field(trimmed, &["depends on", "dependencies", "depends", "requires", "uses"]) {
            d.depends = Some(clip(text, MAX_FIELD_CHARS));
            open = Open::Other;
        } else if let Some(text) =
            field(trimmed, &["exit condition", "exit criterion", "exit", "done when", "success criterion"])
        {
            append(d.exit.get_or_insert_with(String::new), text);
            open = Open::Exit;
        } else {
            match open {
                Open::Goal => append(&mut d.goal, trimmed),
                Open::Exit => append(d.exit.get_or_insert_with(String::new), trimmed),
                Open::Other => {}
            }
        }
    }
    match drafts.len() {
        0 => return Err("the reply lists no subtasks (expected lines `Subtask 1: ...`)".into()),
        n if n < MIN_SUBTASKS => {
            return Err(format!("the reply lists {n} subtask; it must list {MIN_SUBTASKS} to {max}"));
        }
        _ => {}
    }
    let numbers: Vec<usize> = drafts.iter().map(|d| d.number).collect();
    if numbers.iter().enumerate().any(|(i, n)| *n != i + 1) {
        let listed: Vec<String> = numbers.iter().map(usize::to_string).collect();
        return Err(format!(
            "the subtasks are numbered {}; they must be numbered 1, 2, ... in order",
            listed.join(", ")
        ));
    }
    let mut out = Vec::with_capacity(drafts.len());
    for d in drafts {
        let id = d.number;
        let goal = clip(d.goal.trim(), MAX_FIELD_CHARS);
        if goal.is_empty() {
            return Err(format!("subtask {id} has no goal"));
        }
        let exit_condition = clip(d.exit.as_deref().unwrap_or("").trim(), MAX_FIELD_CHARS);
        if exit_condition.is_empty() {
            return Err(format!("subtask {id} has no exit condition (expected a line `Exit condition: ...`)"));
        }
        let depends_on = dependencies(id, d.depends.as_deref().unwrap_or(""))?;
        out.push(Subtask { id, goal, depends_on, exit_condition });
    }
    Ok(out)
}

/// The subtask numbers a `Depends on:` text names, each checked to come before `id`.
fn dependencies(id: usize, text: &str) -> Result<Vec<usize>, String> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut deps = Vec::new();
    for word in &words {
        if word.chars().all(|c| c.is_ascii_digit()) {
            let d: usize = match word.parse() {
                Ok(d) if d <= 1000 => d,
                _ => return Err(format!("subtask {id} depends on subtask {word}, which does not exist")),
            };
            if d == id {
                return Err(format!("subtask {id} depends on itself"));
            }
            if d > id {
                return Err(format!(
                    "subtask {id} depends on subtask {d}, which comes later (dependencies must point to earlier subtasks)"
                ));
            }
            if d == 0 {
                return Err(format!("subtask {id} depends on subtask 0, which does not exist"));
            }
            deps.push(d);
        }
    }
    let none = words.is_empty() || words.iter().any(|w| matches!(*w, "none" | "nothing" | "no" | "n" | "independent"));
    if deps.is_empty() && !none {
        return Err(format!(
            "subtask {id}'s dependencies {:?} name no subtask number (write `none` if it has none)",
            clip(text, 80)
        ));
    }
    deps.sort_unstable();
    deps.dedup();
    Ok(deps)
}

/// The problem text a subtask's sub-search solves: the main problem, the results of
/// the subtasks it depends on (from `solved`), its goal and exit condition.
pub fn subtask_problem(problem: &str, subtask: &Subtask, solved: &[SolvedSubtask]) -> String {
    let mut text = format!("Main problem:\n{}\n", clip(problem.trim(), MAX_TRACE_CHARS));
    let known: Vec<String> = solved
        .iter()
        .filter(|s| subtask.depends_on.contains(&s.subtask.id))
        .map(|s| {
            format!("- Subtask {} ({}): {}", s.subtask.id, s.subtask.goal, clip(s.result.trim(), MAX_TRACE_CHARS / 4))
        })
        .collect();
    if !known.is_empty() {
        text.push_str(&format!("\nResults already found:\n{}\n", known.join("\n")));
    }
    text.push_str(&format!("\nSolve only this subtask: {}\nIt is done when: {}", subtask.goal, subtask.exit_condition));
    text
}

/// The system message of the compose call in the chat style: its own instructions, with
/// the solver's (the task's chain-of-thought system message) quoted for the answer's format.
const COMPOSE_SYSTEM: &str = "You combine the results of a problem's solved subtasks into the answer to the whole \
problem. Check that the results fit together and fit the problem, then solve the whole problem step by step, using \
the results where they hold, and give the final answer.";
const COMPOSE_SOLVER_NOTE: &str =
    "Those were the solver's instructions: write your steps and the final answer in the form they ask for.";

/// In the chat style, the compose call's own system message in place of the solver's.
fn compose_system(p: &mut Prompt) {
    let text = match p.messages.first().is_some_and(|m| m.role == Role::System) {
        true => {
            let solver = p.messages.remove(0).content;
            format!(
                "{COMPOSE_SYSTEM}\n\nThe solver of this problem was told:\n\"\"\"\n{}\n\"\"\"\n{COMPOSE_SOLVER_NOTE}",
                solver.trim()
            )
        }
        false => COMPOSE_SYSTEM.to_string(),
    };
    p.messages.insert(0, crate::protocol::Message::system(text));
}

/// The task's chain-of-thought prompt for problem `x` with the solved subtasks'
/// results added to its last user message, asking for the whole answer in the task's
/// usual format (purpose `cot`, so the task's own answer parsing reads the reply;
/// context `"retreval": "compose"` and `subtasks`, each goal with its result).
pub fn compose_prompt(task: &dyn Task, x: &str, solved: &[SolvedSubtask]) -> Prompt {
    let mut p = task.cot_prompt(x);
    let listed: Vec<String> = solved
        .iter()
        .map(|s| {
            format!(
                "Subtask {}: {}\nResult: {}",
                s.subtask.id,
                s.subtask.goal,
                clip(s.result.trim(), MAX_TRACE_CHARS / 4)
            )
        })
        .collect();
    let add = format!(
        "\n\nThe problem was split into subtasks, which are solved:\n\n{}\n\nUsing these results, solve the \
whole problem step by step and give the final answer in the usual format.",
        listed.join("\n\n")
    );
    match p.messages.iter_mut().rev().find(|m| m.role == Role::User) {
        Some(m) => m.content.push_str(&add),
        None => p.messages.push(crate::protocol::Message::user(add.trim_start())),
    }
    if !task.prompt_style().is_reference() {
        compose_system(&mut p);
    }
    p.purpose = Purpose::Cot;
    if !p.context.is_object() {
        p.context = serde_json::json!({});
    }
    if let Some(obj) = p.context.as_object_mut() {
        obj.insert(CONTEXT_KEY.into(), "compose".into());
        let subtasks: Vec<serde_json::Value> =
            solved.iter().map(|s| serde_json::json!({"goal": s.subtask.goal, "result": s.result})).collect();
        obj.insert("subtasks".into(), subtasks.into());
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "Here is a plan.\n\
Subtask 1: Find the roots of x^2 - 5x + 6.\n\
Depends on: none\n\
Exit condition: both roots are known.\n\
Subtask 2: Sum the squares of the roots.\n\
Depends on: 1\n\
Exit condition: a single number.\n\
Subtask 3: Check the sum against Vieta's formulas.\n\
Depends on: 1, 2\n\
Exit condition: the two values agree.";

    #[test]
    fn a_well_formed_decomposition_is_read_in_order() {
        let subtasks = parse_subtasks(GOOD, 4).unwrap();
        assert_eq!(subtasks.len(), 3);
        assert_eq!(
            subtasks[0],
            Subtask {
                id: 1,
                goal: "Find the roots of x^2 - 5x + 6.".into(),
                depends_on: vec![],
                exit_condition: "both roots are known.".into()
            }
        );
        assert_eq!(subtasks[1].depends_on, [1]);
        assert_eq!(subtasks[2].depends_on, [1, 2]);
        assert_eq!(subtasks[2].exit_condition, "the two values agree.");
    }

    #[test]
    fn a_sloppy_decomposition_is_still_read() {
        let reply = "**Subtask 1:** Count the even numbers\nbelow 100.\n- **Exit:** a count\n\n\
### Sub-task 2.\n**Goal:** Count the multiples of 3 among them.\n- *Depends on*: subtask 1 and 1\n- Done when: a count\n\
that is checked twice.";
        let s = parse_subtasks(reply, 4).unwrap();
        assert_eq!(s[0].goal, "Count the even numbers below 100.");
        assert_eq!(
            (s[0].depends_on.clone(), s[0].exit_condition.as_str()),
            (vec![], "a count"),
            "no Depends line: none"
        );
        assert_eq!(s[1].goal, "Count the multiples of 3 among them.");
        assert_eq!(s[1].depends_on, [1]);
        assert_eq!(s[1].exit_condition, "a count that is checked twice.");
    }

    #[test]
    fn a_bad_decomposition_is_one_error_line() {
        let two = |deps2: &str| {
            format!("Subtask 1: a\nDepends on: none\nExit condition: x\nSubtask 2: b\nDepends on: {deps2}\nExit condition: y")
        };
        for (reply, max, error) in [
            ("Just solve it directly.".to_string(), 4, "the reply lists no subtasks (expected lines `Subtask 1: ...`)"),
            ("Subtask 1: a\nExit condition: x".to_string(), 4, "the reply lists 1 subtask; it must list 2 to 4"),
            (GOOD.to_string(), 2, "the reply lists 3 or more subtasks; it must list 2 to 2"),
            (
                two("3"),
                4,
                "subtask 2 depends on subtask 3, which comes later (dependencies must point to earlier subtasks)",
            ),
            (two("2"), 4, "subtask 2 depends on itself"),
            (two("0"), 4, "subtask 2 depends on subtask 0, which does not exist"),
            (
                two("99999999999999999999999"),
                4,
                "subtask 2 depends on subtask 99999999999999999999999, which does not exist",
            ),
            (
                two("the first one"),
                4,
                "subtask 2's dependencies \"the first one\" name no subtask number (write `none` if it has none)",
            ),
            (
                "Subtask 1: a\nExit condition: x\nSubtask 3: b\nExit condition: y".to_string(),
                4,
                "the subtasks are numbered 1, 3; they must be numbered 1, 2, ... in order",
            ),
            (
                "Subtask 2: a\nExit condition: x\nSubtask 1: b\nExit condition: y".to_string(),
                4,
                "the subtasks are numbered 2, 1; they must be numbered 1, 2, ... in order",
            ),
            (
                "Subtask 1: a\nSubtask 2: b\nExit condition: y".to_string(),
                4,
                "subtask 1 has no exit condition (expected a line `Exit condition: ...`)",
            ),
            ("Subtask 1:\nExit condition: x\nSubtask 2: b\nExit condition: y".to_string(), 4, "subtask 1 has no goal"),
        ] {
            let err = parse_subtasks(&reply, max).unwrap_err();
            assert_eq!(err, error, "{reply:?}");
            assert!(!err.contains('\n'));
        }
        // A cycle cannot be written: any edge back is a forward reference from the earlier subtask.
        let cycle = "Subtask 1: a\nDepends on: 2\nExit condition: x\nSubtask 2: b\nDepends on: 1\nExit condition: y";
        assert!(parse_subtasks(cycle, 4).unwrap_err().starts_with("subtask 1 depends on subtask 2, which comes later"));
    }

    #[test]
    fn a_huge_reply_is_refused_early_and_fields_are_clipped() {
        let many: String = (1..=10_000).map(|i| format!("Subtask {i}: g\nExit condition: e\n")).collect();
        assert_eq!(parse_subtasks(&many, 3).unwrap_err(), "the reply lists 4 or more subtasks; it must list 2 to 3");
        let long = format!("Subtask 1: {}\nExit condition: x\nSubtask 2: b\nExit condition: y", "word ".repeat(5_000));
        let s = parse_subtasks(&long, 4).unwrap();
        assert!(s[0].goal.chars().count() <= MAX_FIELD_CHARS + 1);
    }

    #[test]
    fn a_subtask_problem_carries_its_dependencies_results() {
        let s = parse_subtasks(GOOD, 4).unwrap();
        let solved = vec![
            SolvedSubtask { subtask: s[0].clone(), result: "x = 2 or x = 3".into() },
            SolvedSubtask { subtask: s[1].clone(), result: "13".into() },
        ];
        let first = subtask_problem("Let p(x) = x^2 - 5x + 6 ...", &s[0], &solved);
        assert!(!first.contains("Results already found"), "subtask 1 depends on nothing: {first}");
        assert!(first.ends_with(
            "Solve only this subtask: Find the roots of x^2 - 5x + 6.\nIt is done when: both roots are known."
        ));
        let third = subtask_problem("Let p(x) = x^2 - 5x + 6 ...", &s[2], &solved);
        assert!(third.contains("- Subtask 1 (Find the roots of x^2 - 5x + 6.): x = 2 or x = 3\n- Subtask 2 (Sum the squares of the roots.): 13"));
        let second = subtask_problem("p", &s[1], &solved);
        assert!(second.contains("x = 2 or x = 3") && !second.contains(": 13"));
    }

    #[test]
    fn the_compose_prompt_is_the_tasks_cot_prompt_with_the_results() {
        let task = crate::tasks::game24::Game24::builtin();
        let s = parse_subtasks(GOOD, 4).unwrap();
        let solved = vec![SolvedSubtask { subtask: s[0].clone(), result: "x = 2 or x = 3".into() }];
        let cot = task.cot_prompt("4 5 6 10");
        let p = compose_prompt(&task, "4 5 6 10", &solved);
        assert_eq!(p.purpose, Purpose::Cot);
        assert_eq!(p.messages.len(), cot.messages.len());
        let last = &p.messages.last().unwrap().content;
        assert!(last.starts_with(&cot.messages.last().unwrap().content));
        assert!(last.contains("Subtask 1: Find the roots of x^2 - 5x + 6.\nResult: x = 2 or x = 3"));
        assert_eq!(
            (&p.context["retreval"], &p.context["task"]),
            (&serde_json::json!("compose"), &serde_json::json!("game24"))
        );
        assert_eq!(p.context["subtasks"][0]["result"], "x = 2 or x = 3");
        let d = decompose_prompt(&task, "4 5 6 10", 9);
        assert_eq!((d.purpose, &d.context["max_subtasks"]), (Purpose::Propose, &serde_json::json!(4)));
        assert!(d.messages[0].content.contains("Split it into 2 to 4 subtasks"));
    }
}
