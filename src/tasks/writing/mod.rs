//! Creative writing (the Tree-of-Thoughts paper's third task): given four random
//! sentences (a line of `assets/writing/data_100_random_text.txt`), write a coherent
//! passage of four short paragraphs whose paragraphs end with those sentences, in order.
//!
//! As in the reference (`src/tot/tasks/text.py`, prompts `src/tot/prompts/text.py`):
//! * io and cot use its standard and cot prompts (`assets/prompts/writing/`); a reply's
//!   passage is the text after its last `Passage:` (all of it when it has none);
//! * tree search has two steps (`TreeSearch::default_steps`): a plan, then a passage. Both are
//!   sampled from the cot prompt — the plan with the stop `\nPassage:`, the passage from
//!   the cot prompt followed by the chosen plan. A plan state's path is `Plan:\n<plan>\n`,
//!   a passage state's adds `\nPassage:\n<passage>\n`. The paper's search is
//!   `tot-bfs --generator sample --n-generate 5 --evaluator vote --n-evaluate 5 --breadth 1`
//!   (the platform lets a task set its step count, not its generator or evaluator, so
//!   those are flags);
//! * votes read "The best choice is N" (the first number after the last such phrase);
//! * the value evaluator (`--evaluator value`) is the reference's coherency judge
//!   (`score.txt`): each sample reads "Thus the coherency score is N" (the prompt asks
//!   for 1 to 10; any whole number is read, as there) and the state's value is the mean
//!   of the readable samples.
//!
//! Checking: there is no gold passage. `check` passes a passage whose paragraphs end
//! with the input's sentences, in order, with one paragraph per sentence; `score` is the
//! share of sentences that end their paragraph. The figures (`Task::metrics`) are
//! `endings` (that share) and `all_endings` (all of them), of the top-ranked output — or
//! the mean over the samples for io / cot — and `coherency`, the paper's own figure:
//! once the method is done the engine asks the judge (`OutcomeJudge::outcome_judge`: the score
//! prompt, purpose `judge`, [`JUDGE_SAMPLES`] samples) about each output's passage, as
//! the reference's `test_output` does; an output's coherency is the mean of its readable
//! samples (0 when none is readable, as there), kept as the node's metric `coherency`,
//! and the figure is the mean over the outputs.

pub mod read;
pub mod sim;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::{prompts, Problem, TaskError, TaskOptions, TaskSource};
use crate::engine::task::{DfsStyle, Feedback, OutcomeJudge, TreeSearch, ValueEvaluator, VoteEvaluator};
use crate::engine::{AnswerKind, JudgeRequest, Judgment, Outcome, PromptStyle, Proposal, SearchTree, Task, TaskInfo};
use crate::protocol::{Message, Prompt, Purpose};

const IO: prompts::Builtin = crate::builtin_prompt!("writing", "io.txt");
const COT: prompts::Builtin = crate::builtin_prompt!("writing", "cot.txt");
const VOTE: prompts::Builtin = crate::builtin_prompt!("writing", "vote.txt");
const SCORE: prompts::Builtin = crate::builtin_prompt!("writing", "score.txt");
const DATA: &str = include_str!("../../../assets/writing/data_100_random_text.txt");

/// Samples of the coherency judge per output (the reference's `test_output`).
pub const JUDGE_SAMPLES: u32 = 5;

/// The node metric (and run figure) of the judge's coherency score, 1 to 10.
pub const COHERENCY: &str = "coherency";

/// Thought steps: a plan, then a passage.
pub const STEPS: usize = 2;

/// Registration (see `tasks::REGISTRY`).
pub const INFO: TaskInfo = TaskInfo {
    name: Cow::Borrowed("writing"),
    about: Cow::Borrowed(
        "Creative writing: a 4-paragraph passage ending with 4 given sentences (the Tree-of-Thoughts inputs)",
    ),
    input_noun: Cow::Borrowed("sentence set"),
    input_hint: Cow::Borrowed("a line number (0 to 99) or four sentences"),
    input_examples: Cow::Borrowed(&[
        Cow::Borrowed("0"),
        Cow::Borrowed("The sky was green. I left. It rained. We sang."),
    ]),
    default_problem: 0,
    answer_kind: AnswerKind::ShortText,
    reads_data: false,
};

/// The built-in inputs, one a line.
pub fn inputs() -> Vec<&'static str> {
    DATA.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
}

/// Whether state `y` is a plan (first step) rather than a passage.
pub fn is_plan_state(y: &str) -> bool {
    y.trim_start().starts_with("Plan:") && !y.contains("Passage:")
}

pub struct Writing {
    io: String,
    cot: String,
    vote: String,
    score: String,
    style: PromptStyle,
}

impl Writing {
    /// Build for `tasks::REGISTRY`.
    pub fn build(
        info: &TaskInfo,
        options: &TaskOptions,
        _warnings: &mut Vec<String>,
    ) -> Result<Arc<dyn TaskSource>, TaskError> {
        super::no_data(info, options)?;
        Ok(Arc::new(Writing::styled(options.loader())?))
    }

    /// With the reference prompts (the built-in ones, or those in `prompt_dir`).
    pub fn new(prompt_dir: Option<&Path>) -> Result<Self, TaskError> {
        Writing::styled(prompts::Loader::new(prompt_dir, PromptStyle::Reference))
    }

    pub fn styled(loader: prompts::Loader) -> Result<Self, TaskError> {
        Ok(Writing {
            io: loader.load(IO, &["input"])?,
            cot: loader.load(COT, &["input"])?,
            vote: loader.load(VOTE, &["choices"])?,
            score: loader.load(SCORE, &["passage"])?,
            style: loader.style,
        })
    }

    /// The built-in prompts only.
    pub fn builtin() -> Self {
        match Writing::new(None) {
            Ok(t) => t,
            Err(e) => unreachable!("built-in writing prompts are broken: {e}"),
        }
    }

    fn context(&self, x: &str, y: &str) -> serde_json::Value {
        json!({"task": INFO.name, "input": x, "y": y, "sentences": read::sentences(x)})
    }

    fn cot_messages(&self, x: &str) -> Vec<Message> {
        prompts::render_messages(&self.cot, &[("input", x.trim())])
    }

    /// The reference's score prompt for judging a passage's coherency.
    pub fn score_prompt(&self, x: &str, passage: &str) -> Prompt {
        let mut context = self.context(x, passage);
        context["passage"] = json!(passage);
        Prompt {
            purpose: Purpose::Value,
            messages: prompts::render_messages(&self.score, &[("passage", passage)]),
            context,
            stop: vec![],
            max_tokens: Some(600),
            sampling: Default::default(),
        }
    }
}

impl Task for Writing {
    fn info(&self) -> &TaskInfo {
        &INFO
    }

    fn io_prompt(&self, x: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Io,
            messages: prompts::render_messages(&self.io, &[("input", x.trim())]),
            context: self.context(x, ""),
            stop: vec![],
            max_tokens: Some(1000),
            sampling: Default::default(),
        }
    }

    fn cot_prompt(&self, x: &str) -> Prompt {
        Prompt {
            purpose: Purpose::Cot,
            messages: self.cot_messages(x),
            context: self.context(x, ""),
            stop: vec![],
            max_tokens: Some(1200),
            sampling: Default::default(),
        }
    }

    fn extract_answer(&self, _x: &str, y: &str) -> Option<String> {
        if is_plan_state(y) {
            return None;
        }
        let passage = read::passage_of(y);
        (!passage.is_empty()).then_some(passage)
    }

    fn check(&self, x: &str, answer: &str) -> Result<(), String> {
        let sentences = read::sentences(x);
        let paragraphs = read::paragraphs(answer);
        if paragraphs.len() != sentences.len() {
            return Err(format!("{} paragraphs, expected {}", paragraphs.len(), sentences.len()));
        }
        let wrong: Vec<String> = read::endings(answer, &sentences)
            .iter()
            .enumerate()
            .filter(|(_, ok)| !**ok)
            .map(|(i, _)| (i + 1).to_string())
            .collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "paragraph {} does not end with its sentence",
                super::and_list(&wrong.iter().map(String::as_str).collect::<Vec<_>>())
            ))
        }
    }

    fn score(&self, x: &str, answer: &str) -> f64 {
        read::ending_share(answer, &read::sentences(x))
    }

    fn describe_state(&self, x: &str, y: &str) -> Option<String> {
        if y.trim().is_empty() {
            return None;
        }
        if is_plan_state(y) {
            return Some(format!("a plan of {} lines", read::plan_of(y).lines().count()));
        }
        let sentences = read::sentences(x);
        let ends = read::endings(&read::passage_of(y), &sentences);
        Some(format!(
            "a passage of {} paragraphs; {} of {} end with their sentence",
            read::paragraphs(&read::passage_of(y)).len(),
            ends.iter().filter(|&&ok| ok).count(),
            sentences.len()
        ))
    }

    fn metrics(&self, x: &str, tree: &SearchTree, outcome: &Outcome) -> BTreeMap<String, f64> {
        let sentences = read::sentences(x);
        // Whole answers (io, cot): the mean over the samples; a tree search: its top output.
        let outputs = outcome.outputs();
        let shares: Vec<f64> = outputs
            .iter()
            .map(|&id| {
                let y = &tree.node(id).path;
                if is_plan_state(y) {
                    0.0
                } else {
                    read::ending_share(&read::passage_of(y), &sentences)
                }
            })
            .collect();
        let n = shares.len().max(1) as f64;
        let mut out = BTreeMap::new();
        out.insert("endings".into(), shares.iter().sum::<f64>() / n);
        out.insert("all_endings".into(), shares.iter().filter(|&&s| s >= 1.0).count() as f64 / n);
        // The judged outputs (a plan-only output is not judged; a failed call leaves none).
        let judged: Vec<f64> = outputs.iter().filter_map(|&id| tree.node(id).metrics.get(COHERENCY).copied()).collect();
        if !judged.is_empty() {
            out.insert(COHERENCY.into(), judged.iter().sum::<f64>() / judged.len() as f64);
        }
        out
    }

    fn metric_is_share(&self, name: &str) -> bool {
        name != COHERENCY
    }

    fn tree(&self) -> Option<&dyn TreeSearch> {
        Some(self)
    }

    fn prompt_style(&self) -> PromptStyle {
        self.style
    }

    fn feedback(&self) -> Option<&dyn Feedback> {
        Some(self)
    }

    fn judge(&self) -> Option<&dyn OutcomeJudge> {
        Some(self)
    }
}

/// Self-Refine and Reflexion with the generic prompts over the cot prompt.
impl Feedback for Writing {}

impl TreeSearch for Writing {
    fn default_steps(&self) -> usize {
        STEPS
    }

    fn sample_prompt(&self, x: &str, y: &str) -> Prompt {
        // The reference samples both steps from the cot prompt: the plan stops before
        // "Passage:", the passage continues the prompt after the chosen plan.
        let mut messages = self.cot_messages(x);
        let (stop, stage) = if y.trim().is_empty() {
            (vec!["\nPassage:".to_string()], "plan")
        } else {
            if let Some(last) = messages.last_mut() {
                last.content = format!("{}\n\n{}", last.content.trim_end(), y.trim_end());
            }
            (vec![], "passage")
        };
        let mut context = self.context(x, y);
        context["stage"] = json!(stage);
        Prompt {
            purpose: Purpose::Sample,
            messages,
            context,
            stop,
            max_tokens: Some(1200),
            sampling: Default::default(),
        }
    }

    fn propose_prompt(&self, x: &str, y: &str) -> Prompt {
        Prompt { purpose: Purpose::Propose, ..self.sample_prompt(x, y) }
    }

    fn parse_proposals(&self, x: &str, y: &str, reply: &str) -> Vec<Proposal> {
        vec![self.parse_sample(x, y, reply)]
    }

    fn parse_sample(&self, _x: &str, y: &str, reply: &str) -> Proposal {
        if y.trim().is_empty() {
            let plan = read::plan_of(reply);
            let problem = plan.is_empty().then(|| "the reply has no plan".to_string());
            Proposal { path: format!("Plan:\n{plan}\n"), thought: plan, problem }
        } else {
            let passage = read::passage_of(reply);
            let problem = passage.is_empty().then(|| "the reply has no passage".to_string());
            Proposal { path: format!("{}\n\nPassage:\n{passage}\n", y.trim_end()), thought: passage, problem }
        }
    }

    fn parse_edit(&self, x: &str, y: &str, text: &str) -> Proposal {
        self.parse_sample(x, y, text)
    }

    fn value(&self) -> Option<&dyn ValueEvaluator> {
        Some(self)
    }

    fn vote(&self) -> Option<&dyn VoteEvaluator> {
        Some(self)
    }

    fn dfs_style(&self) -> DfsStyle {
        DfsStyle::default()
    }
}

/// The coherency judge as a value evaluator (plain numbers, 1 to 10).
impl ValueEvaluator for Writing {
    fn value_prompt(&self, x: &str, y: &str) -> Prompt {
        let passage = if is_plan_state(y) { read::plan_of(y) } else { read::passage_of(y) };
        self.score_prompt(x, &passage)
    }

    fn parse_value(&self, _x: &str, _y: &str, samples: &[String]) -> (f64, Vec<String>) {
        let scores: Vec<Option<u64>> = samples.iter().map(|s| read::coherency(s)).collect();
        let read: Vec<u64> = scores.iter().flatten().copied().collect();
        let value = if read.is_empty() { 0.0 } else { read.iter().sum::<u64>() as f64 / read.len() as f64 };
        (value, scores.iter().map(|s| s.map_or("?".to_string(), |n| n.to_string())).collect())
    }

    fn value_classes(&self) -> &[(&'static str, f64)] {
        &[]
    }

    fn fixed_value(&self, _x: &str, _y: &str) -> Option<(f64, String)> {
        None
    }
}

impl VoteEvaluator for Writing {
    fn vote_prompt(&self, x: &str, ys: &[String]) -> Prompt {
        let choices: String =
            ys.iter().enumerate().map(|(i, y)| format!("Choice {}:\n{}\n", i + 1, y.trim_end())).collect();
        let mut context = self.context(x, "");
        context["ys"] = json!(ys);
        Prompt {
            purpose: Purpose::Vote,
            messages: prompts::render_messages(&self.vote, &[("choices", &choices)]),
            context,
            stop: vec![],
            max_tokens: Some(1000),
            sampling: Default::default(),
        }
    }

    fn parse_vote(&self, reply: &str, n_choices: usize) -> Option<usize> {
        read::vote(reply, n_choices)
    }
}

impl OutcomeJudge for Writing {
    fn outcome_judge(&self, x: &str, y: &str) -> Option<JudgeRequest> {
        if is_plan_state(y) {
            return None;
        }
        // An empty passage is judged too, as the reference judges whatever the output is.
        let prompt = Prompt { purpose: Purpose::Judge, ..self.score_prompt(x, &read::passage_of(y)) };
        Some(JudgeRequest { prompt, n: JUDGE_SAMPLES })
    }

    fn read_judgment(&self, x: &str, y: &str, samples: &[String]) -> Judgment {
        // As the reference: the mean of the readable scores, 0 when none is readable.
        let (value, read) = self.parse_value(x, y, samples);
        Judgment {
            metrics: vec![(COHERENCY.to_string(), value)],
            note: format!("coherency {value:.2} (the judge's scores: {})", read.join(", ")),
            verdict: None,
        }
    }
}

impl TaskSource for Writing {
    fn problem_count(&self) -> usize {
        inputs().len()
    }

    fn problem(&self, index: usize) -> Option<Problem> {
        inputs().get(index).map(|l| Problem { index: Some(index), input: l.to_string() })
    }

    fn parse_input(&self, text: &str) -> Result<Problem, TaskError> {
        let t = text.trim();
        let err = |m: &str| TaskError::Input(t.chars().take(60).collect(), m.to_string());
        if let Ok(n) = t.parse::<usize>() {
            return self.problem(n).ok_or_else(|| err("the task has 100 sentence sets (0 to 99)"));
        }
        if read::sentences(t).len() < 2 {
            return Err(err("expected a line number (0 to 99) or several sentences, each ending with . ! or ?"));
        }
        let index = inputs().iter().position(|l| *l == t);
        Ok(Problem { index, input: t.to_string() })
    }
}
