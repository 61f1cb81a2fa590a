//! Creative writing: reading sentences, plans, passages, votes and coherency scores;
//! the paper's ToT (5 plans → vote → best → 5 passages → vote) on a scripted model;
//! the ending figures; and `run` with the simulated model. Nothing here needs
//! ../shared: the inputs are built in.

use std::process::Command;
use std::sync::Arc;

use serde_json::Value;
use thoughtscope::engine::{Command as EngineCommand, Effect, Engine, Input, LlmReply, MethodKind, Params, Task};
use thoughtscope::engine::{TreeSearch, ValueEvaluator, VoteEvaluator};
use thoughtscope::protocol::{Completion, LlmRequest, LlmResponse, Purpose, Usage};
use thoughtscope::tasks::writing::{inputs, read, Writing};
use thoughtscope::tasks::{SimPlayers, TaskSource};

fn task() -> Arc<Writing> {
    Arc::new(Writing::builtin())
}

const X: &str = "The sky was green. I left early! Was it \"true?\" We sang.";

fn good_passage() -> String {
    "Morning came.\nThe sky was green.\n\nI packed. I left early!\n\nShe asked. Was it \"true?\"\n\nNight fell. We sang."
        .to_string()
}

#[test]
fn sentences_plans_and_passages_are_read() {
    assert_eq!(read::sentences(X), vec!["The sky was green.", "I left early!", "Was it \"true?\"", "We sang."]);
    let lines = inputs();
    assert_eq!(lines.len(), 100);
    let four = lines.iter().filter(|l| read::sentences(l).len() == 4).count();
    assert_eq!(four, 95, "five lines hold an unfinished sentence and read as three");
    // A plan stops at "Passage:" if the model wrote on; a passage is after the last one.
    let reply = "Plan:\n1. a\n2. b\n\nPassage:\nOne.\n\nTwo.";
    assert_eq!(read::plan_of(reply), "1. a\n2. b");
    assert_eq!(read::passage_of(reply), "One.\n\nTwo.");
    assert_eq!(read::passage_of("Just text."), "Just text.");
    assert_eq!(read::paragraphs("a\nb\n\n\n  c  \n"), vec!["a b", "c"]);
    let s = read::sentences(X);
    assert_eq!(read::endings(&good_passage(), &s), vec![true, true, true, true]);
    let bad = good_passage().replace("We sang.", "We sang. Then silence.");
    assert_eq!(read::endings(&bad, &s), vec![true, true, true, false]);
    assert_eq!(read::ending_share(&bad, &s), 0.75);
    // The task: check, score and the answer of a state.
    let t = task();
    assert_eq!(t.check(X, &good_passage()), Ok(()));
    assert_eq!(t.check(X, &bad).unwrap_err(), "paragraph 4 does not end with its sentence");
    assert_eq!(t.check(X, "The sky was green.").unwrap_err(), "1 paragraphs, expected 4");
    assert_eq!(t.score(X, &bad), 0.75);
    let plan = t.parse_sample(X, "", "Plan:\n1. go\nPassage:\nignored");
    assert_eq!((plan.thought.as_str(), plan.path.as_str(), plan.problem), ("1. go", "Plan:\n1. go\n", None));
    assert_eq!(t.extract_answer(X, &plan.path), None, "a plan is no answer");
    let passage = t.parse_sample(X, &plan.path, &format!("Passage:\n{}", good_passage()));
    assert_eq!(passage.path, format!("Plan:\n1. go\n\nPassage:\n{}\n", good_passage()));
    assert_eq!(t.extract_answer(X, &passage.path), Some(good_passage()));
    assert_eq!(t.parse_sample(X, "", "   ").problem.as_deref(), Some("the reply has no plan"));
    assert_eq!(t.parse_sample(X, &plan.path, "Passage:\n").problem.as_deref(), Some("the reply has no passage"));
}

#[test]
fn votes_and_coherency_scores_are_read_as_the_reference_reads_them() {
    let t = task();
    assert_eq!(t.parse_vote("Choice 1 is weak.\nThe best choice is 3", 5), Some(2));
    assert_eq!(t.parse_vote("the BEST CHOICE IS {2}.", 5), Some(1));
    assert_eq!(t.parse_vote("The best choice is 2. No wait, the best choice is 4", 5), Some(3), "the last one");
    assert_eq!(t.parse_vote("The best choice is 6", 5), None, "outside the list");
    assert_eq!(t.parse_vote("I like them all.", 5), None);
    assert_eq!(read::coherency("Nice.\nThus the coherency score is 7"), Some(7));
    assert_eq!(read::coherency("Thus the coherency score is 11"), Some(11), "any number, as the reference");
    assert_eq!(read::coherency("no score"), None);
    let (value, labels) =
        t.parse_value(X, "", &["coherency score is 6".into(), "garbled".into(), "coherency score is 9.".into()]);
    assert_eq!(value, 7.5, "the mean of the readable samples");
    assert_eq!(labels, vec!["6", "?", "9"]);
    // The judge is the reference's score prompt over the passage alone.
    let y = format!("Plan:\n1. go\n\nPassage:\n{}\n", good_passage());
    let prompt = t.value_prompt(X, &y);
    assert!(prompt.messages[0].content.starts_with("Analyze the following passage"));
    assert!(prompt.messages[0].content.trim_end().ends_with(&good_passage()));
    let vote = t.vote_prompt(X, &["a".into(), "b".into()]);
    assert!(vote.messages[0].content.contains("Choice 1:\na\nChoice 2:\nb\n"), "{}", vote.messages[0].content);
}

// ---- the paper's ToT on a scripted model ----

fn reply(call: u64, texts: Vec<String>) -> Input {
    Input::LlmReply(LlmReply {
        call,
        result: Ok(LlmResponse {
            completions: texts.into_iter().map(|t| Completion::text(t, None)).collect(),
            usage: Usage::default(),
            latency_ms: 0,
            model: "script".into(),
            simulated: false,
            cached: false,
            lost: None,
        }),
    })
}

fn paper_params() -> Params {
    Params::new(MethodKind::from_name("tot-bfs").unwrap())
        .with("generator", "sample")
        .with("evaluator", "vote")
        .with("n_generate", 5)
        .with("n_evaluate", 5)
        .with("breadth", 1)
}

/// Plans "plan 0".."plan 4" (the votes pick plan 2); from it, passages 0..4 of which
/// only passage 1 ends its paragraphs right (the votes pick it).
fn scripted(request: &LlmRequest, i: usize) -> String {
    let y = request.context["y"].as_str().unwrap_or("");
    match request.purpose {
        Purpose::Sample if y.is_empty() => format!("Plan:\nplan {i}"),
        Purpose::Sample => {
            assert!(y.contains("plan 2"), "passages are written from the chosen plan: {y}");
            if i == 1 {
                format!("Passage:\n{}", good_passage())
            } else {
                format!("Passage:\nDraft {i}.\n\nNo endings.")
            }
        }
        Purpose::Vote => {
            let ys = request.context["ys"].as_array().unwrap();
            let plans = ys.iter().all(|y| !y.as_str().unwrap().contains("Passage:"));
            // Four of five votes for the intended choice, one for choice 1.
            let pick = if i == 4 {
                1
            } else if plans {
                3
            } else {
                2
            };
            format!("Analysis.\nThe best choice is {pick}")
        }
        // The coherency judge of the output: 7, 8, 7, 8, 7 (mean 7.4).
        Purpose::Judge => {
            assert_eq!(request.context["passage"], good_passage().as_str(), "the output's passage is judged");
            format!("It flows.\nThus the coherency score is {}", 7 + i % 2)
        }
        other => panic!("unexpected {other:?} call"),
    }
}

#[test]
fn tot_samples_five_plans_votes_then_five_passages_and_votes() {
    let mut engine = Engine::new(task(), X, paper_params());
    let mut queue: Vec<Effect> = engine.handle(Input::Command { command: EngineCommand::Run });
    let mut calls = Vec::new();
    while let Some(effect) = (!queue.is_empty()).then(|| queue.remove(0)) {
        if let Effect::CallLlm { call, request } = effect {
            let stage = request.context["stage"].as_str().unwrap_or("").to_string();
            calls.push((request.purpose, request.n, stage));
            let texts = (0..request.n as usize).map(|i| scripted(&request, i)).collect();
            queue.extend(engine.handle(reply(call, texts)));
            assert!(calls.len() < 100, "the search does not end");
        }
    }
    assert!(engine.is_finished());
    let sample = |stage: &str| (Purpose::Sample, 5, stage.to_string());
    let vote = (Purpose::Vote, 5, String::new());
    let judge = (Purpose::Judge, 5, String::new());
    assert_eq!(calls, vec![sample("plan"), vote.clone(), sample("passage"), vote, judge]);
    let tree = engine.tree();
    let plan = tree.nodes().find(|n| n.path == "Plan:\nplan 2\n").unwrap();
    assert_eq!(plan.score.as_ref().unwrap().samples, vec!["4 of 5 votes"]);
    let outcome = engine.outcome().unwrap();
    assert_eq!(outcome.answer, Some(good_passage()));
    assert!(outcome.solved);
    let m = task().metrics(X, tree, outcome);
    assert_eq!((m["endings"], m["all_endings"]), (1.0, 1.0));
    // The judge's call is on the output's node, and its mean is the node's metric and the figure.
    let out = tree.node(outcome.finals[0]);
    let judge_call = *out.calls.last().unwrap();
    assert_eq!(engine.core.calls[&judge_call].request.purpose, Purpose::Judge);
    assert!((out.metrics["coherency"] - 7.4).abs() < 1e-9, "{:?}", out.metrics);
    assert!((m["coherency"] - 7.4).abs() < 1e-9);
    assert!(out.note("judge").is_some_and(|n| n.contains("7, 8, 7, 8, 7")), "{:?}", out.notes);
}

/// A failed judge call leaves the output unjudged (no figure), and the search still ends.
#[test]
fn a_failed_judge_call_leaves_no_coherency() {
    let mut engine = Engine::new(task(), X, paper_params());
    let mut queue: Vec<Effect> = engine.handle(Input::Command { command: EngineCommand::Run });
    while let Some(effect) = (!queue.is_empty()).then(|| queue.remove(0)) {
        if let Effect::CallLlm { call, request } = effect {
            let result = if request.purpose == Purpose::Judge {
                Err(thoughtscope::protocol::CallError {
                    kind: thoughtscope::protocol::CallErrorKind::Import,
                    message: "no scores".into(),
                })
            } else {
                Ok(LlmResponse {
                    completions: (0..request.n as usize)
                        .map(|i| Completion::text(scripted(&request, i), None))
                        .collect(),
                    usage: Usage::default(),
                    latency_ms: 0,
                    model: "scripted".into(),
                    simulated: false,
                    cached: false,
                    lost: None,
                })
            };
            queue.extend(engine.handle(Input::LlmReply(LlmReply { call, result })));
        }
    }
    assert!(engine.is_finished());
    let m = task().metrics(X, engine.tree(), engine.outcome().unwrap());
    assert!(!m.contains_key("coherency"), "{m:?}");
    assert_eq!(m["endings"], 1.0);
}

#[test]
fn io_metrics_are_the_mean_over_samples() {
    let params = Params::new(MethodKind::from_name("io").unwrap()).with("samples", 2);
    let mut engine = Engine::new(task(), X, params);
    let mut queue: Vec<Effect> = engine.handle(Input::Command { command: EngineCommand::Run });
    while let Some(effect) = (!queue.is_empty()).then(|| queue.remove(0)) {
        if let Effect::CallLlm { call, request } = effect {
            let half = good_passage().replace("We sang.", "Quiet.").replace("I left early!", "Gone.");
            let texts = if request.purpose == Purpose::Judge {
                // Every sample is judged: the well-formed one 9, the other 5 (an unreadable reply is not counted).
                let score = if request.context["passage"] == good_passage().as_str() { "9" } else { "5" };
                let mut t = vec![format!("Thus the coherency score is {score}"); request.n as usize];
                t[0] = "no score here".into();
                t
            } else {
                [good_passage(), half].into_iter().cycle().take(request.n as usize).collect()
            };
            queue.extend(engine.handle(reply(call, texts)));
        }
    }
    let outcome = engine.outcome().unwrap();
    let m = task().metrics(X, engine.tree(), outcome);
    assert_eq!((m["endings"], m["all_endings"]), (0.75, 0.5));
    assert_eq!(m["coherency"], 7.0, "the mean over both samples of each one's mean score");
    let judged = outcome.finals.iter().filter(|&&id| engine.tree().node(id).metrics.contains_key("coherency")).count();
    assert_eq!(judged, 2);
}

// ---- the command line, with the simulated model ----

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["run", "--task", "writing", "--range", "0..2", "--json"])
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON summary")
}

#[test]
fn runs_of_tot_io_and_cot_with_sim_print_the_ending_figures() {
    let tot = run(&[
        "--method",
        "tot-bfs",
        "--generator",
        "sample",
        "--n-generate",
        "5",
        "--evaluator",
        "vote",
        "--n-evaluate",
        "5",
        "--breadth",
        "1",
    ]);
    assert_eq!(tot["task"], "writing");
    assert_eq!(tot["n"], 2);
    // The judge's calls count: per problem 2 samplings, 2 votes and 1 judgment.
    assert_eq!(tot["llm_calls"], 10, "{tot}");
    let io = run(&["--method", "io"]);
    // io: one call of 10 samples, then a judgment of each sample.
    assert_eq!(io["llm_calls"], 2 * (1 + 10), "{io}");
    for summary in [tot, run(&["--method", "tot-bfs"]), io, run(&["--method", "cot"])] {
        for key in ["endings", "all_endings"] {
            let v = summary["metrics"][key].as_f64().unwrap_or(-1.0);
            assert!((0.0..=1.0).contains(&v), "{key}: {v} in {summary}");
        }
        let c = summary["metrics"]["coherency"].as_f64().unwrap_or(-1.0);
        assert!((1.0..=10.0).contains(&c), "coherency {c} in {summary}");
    }
}

/// A recorded run replays exactly: the judge's calls come back from the session, with the
/// same coherency, calls and tokens; the text summary prints the coherency as a score.
#[test]
fn a_judged_run_replays_with_the_same_coherency() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("s");
    let live = run(&["--method", "cot", "--samples", "3", "--record", record.to_str().unwrap()]);
    let replay = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["replay", "--headless", "--json", record.to_str().unwrap()])
        .output()
        .expect("the binary runs");
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    let replay: Value = serde_json::from_slice(&replay.stdout).expect("one JSON summary");
    for key in ["llm_calls", "prompt_tokens", "completion_tokens", "metrics", "solved"] {
        assert_eq!(live[key], replay[key], "{key}");
    }
    let sessions: String =
        std::fs::read_dir(&record).unwrap().map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
    assert!(sessions.contains("\"purpose\":\"judge\""), "the judge's calls are recorded");
    let text = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["replay", "--headless", record.to_str().unwrap()])
        .output()
        .expect("the binary runs");
    let text = String::from_utf8_lossy(&text.stdout);
    let c = live["metrics"]["coherency"].as_f64().unwrap();
    assert!(text.contains(&format!("coherency {c:.2}")), "{text}");
}

#[test]
fn sim_writes_votes_and_judges_the_same_for_the_same_seed_and_request() {
    use thoughtscope::engine::sim::SimConfig;
    use thoughtscope::llm::sim::SimProvider;
    let t = task();
    let x = t.problem(0).unwrap().input;
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    let plans = LlmRequest::from_prompt(t.sample_prompt(&x, ""), 5, 0.7);
    let a = sim.answer(&plans).unwrap();
    assert_eq!(a.completions, sim.answer(&plans).unwrap().completions);
    assert!(a.completions.iter().all(|c| c.text.starts_with("Plan:\n1. ")));
    // A perfect writer ends every paragraph with its sentence and judges it highly.
    let perfect = SimProvider::new(SimConfig { noise: 0.0, ..SimConfig::default() }, &SimPlayers);
    let io = perfect.answer(&LlmRequest::from_prompt(t.io_prompt(&x), 1, 0.7)).unwrap();
    let passage = t.extract_answer(&x, &io.completions[0].text).unwrap();
    assert_eq!(t.check(&x, &passage), Ok(()));
    let judged = perfect.answer(&LlmRequest::from_prompt(t.value_prompt(&x, &passage), 5, 0.7)).unwrap();
    let scores: Vec<Option<u64>> = judged.completions.iter().map(|c| read::coherency(&c.text)).collect();
    assert_eq!(scores, vec![Some(9); 5]);
    // Votes favour the well-formed choice when there is no noise.
    let broken = passage.replace("\n\n", " ");
    let vote = LlmRequest::from_prompt(t.vote_prompt(&x, &[broken, passage]), 5, 0.7);
    let votes: Vec<Option<usize>> =
        perfect.answer(&vote).unwrap().completions.iter().map(|c| t.parse_vote(&c.text, 2)).collect();
    assert_eq!(votes, vec![Some(1); 5]);
    // A request without sentences is one plain error, not a panic.
    let mut bad = LlmRequest::from_prompt(t.io_prompt(&x), 1, 0.7);
    bad.context = serde_json::json!({"task": "writing"});
    assert_eq!(sim.answer(&bad).unwrap_err().message, "writing request without sentences");
}
