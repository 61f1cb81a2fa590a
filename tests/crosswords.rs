//! Mini crosswords: reading proposals, verdicts and boards, the paper's DFS on a
//! scripted model (children cap, state cap, backtracking, pruning), the metrics, and a
//! `run` with the simulated model. Nothing here needs ../shared: the puzzles are built in.

use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};
use thoughtscope::engine::task::{ProposalScores, Pruning};
use thoughtscope::engine::{
    Command as EngineCommand, Effect, Engine, Input, LlmReply, MethodKind, NodeId, NodeStatus, Outcome, Params, Score,
    SearchTree, Task,
};
use thoughtscope::engine::{TreeSearch, ValueEvaluator};
use thoughtscope::protocol::{Completion, LlmRequest, LlmResponse, Purpose, Usage};
use thoughtscope::tasks::crosswords::board::{Action, Board};
use thoughtscope::tasks::crosswords::{read, Crosswords};
use thoughtscope::tasks::{SimPlayers, TaskSource};

fn task() -> Arc<Crosswords> {
    Arc::new(Crosswords::builtin())
}

/// Puzzle 0 (gold AGEND / MOTOR / ARTSY / SALLE / SLEER).
fn x() -> String {
    Crosswords::builtin().problem(0).unwrap().input
}

#[test]
fn proposals_read_confidences_and_sum_over_samples_best_first_stable_on_ties() {
    let samples = [
        "h1. agend (high)\nv1. amass (medium)\nnot a proposal\nh2. motor (low)".to_string(),
        "v1. amass (certain) fits\nh3. artsy (medium)\nh2. motor (high)\nh4. salle (maybe)".to_string(),
    ];
    let merged = read::merge_proposals(&samples);
    let got: Vec<(&str, f64)> = merged.iter().map(|(a, s)| (a.as_str(), (s * 100.0).round() / 100.0)).collect();
    // v1 0.2 + 1 = 1.2; h2 0.1 + 0.5 = 0.6; h1 0.5; h3 0.2 (h4's "maybe" is no confidence).
    assert_eq!(got, vec![("v1. amass", 1.2), ("h2. motor", 0.6), ("h1. agend", 0.5), ("h3. artsy", 0.2)]);
    let tied = read::merge_proposals(&["h5. sleer (low)\nh4. salle (low)\nh3. artsy (low)"]);
    let order: Vec<&str> = tied.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(order, vec!["h5. sleer", "h4. salle", "h3. artsy"], "ties keep the order first seen");
    // The task turns them into children of the state, each with its score.
    let t = task();
    assert!(TreeSearch::proposal_scores(&*t).is_some());
    let children = t.merge_proposals(&x(), "h2. motor\n", &samples);
    assert_eq!(children[0].0.thought, "v1. amass");
    assert_eq!(children[0].0.path, "h2. motor\nv1. amass\n");
    assert!((children[0].1 - 1.2).abs() < 1e-9);
}

#[test]
fn a_word_that_would_overwrite_a_letter_is_a_rejected_candidate() {
    let t = task();
    let children = t.merge_proposals(&x(), "h1. agend\n", &["v1. bmass (certain)\nv1. amass (low)".to_string()]);
    assert_eq!(children[0].0.thought, "v1. bmass");
    assert_eq!(children[0].0.problem.as_deref(), Some("would overwrite A at row 1 column 1"));
    assert_eq!(children[1].0.problem, None, "a word that keeps the letters is fine");
    let mut board = Board::from_path("h1. agend").unwrap();
    assert_eq!(board.overwrites(&Action::parse("v1. bmass").unwrap()), vec![0]);
    board.apply(&Action::parse("v1. bmass").unwrap());
    assert_eq!(board.status[0], thoughtscope::tasks::crosswords::board::ClueStatus::Changed);
}

#[test]
fn verdicts_are_read_per_clue_and_one_impossible_prunes() {
    let t = task();
    let y = "h2. motor\nh1. tasks\n";
    let prompt = t.value_prompt(&x(), y);
    // Clues with at least two letters: h1, h2 and v1..v5 (each crossing two filled rows).
    assert_eq!(prompt.context["clues"], json!(["h1", "h2", "v1", "v2", "v3", "v4", "v5"]));
    assert!(prompt.messages[0].content.contains("h2. An engine: m o t o r"));
    let reply = "h1. tasks: maybe\nh2. motor: sure\nv1. t m _ _ _: impossible\nh3. x: sure\nv2. maybe";
    let (value, labels) = t.parse_value(&x(), y, &[reply.to_string()]);
    assert_eq!(labels, vec!["h1 maybe", "h2 sure", "v1 impossible", "v2 maybe"], "h3 is not judged here");
    assert_eq!(value, 1.0 + 2.0 + 0.0 + 1.0);
    let score = Score { value, samples: labels, note: None };
    assert_eq!(t.prune_reason(&x(), y, &score).as_deref(), Some("judged impossible: v1"));
    let fine = Score { value: 4.0, samples: vec!["h1 sure".into(), "v1 maybe".into()], note: None };
    assert_eq!(t.prune_reason(&x(), y, &fine), None);
}

#[test]
fn io_replies_are_read_as_the_reference_reads_them() {
    let reply = "Some thinking.\nOutput:\nignored\nOutput:\nA G E N D\nM O T O R\nA R T\nS A L L E S\nSLEER\n";
    let board = read::board_of_reply(reply);
    // Row 3 is padded, row 4 has five tokens (the sixth is dropped), row 5 is one token.
    assert_eq!(board.answer_text(), "AGEND/MOTOR/ART__/SALLE/SLEER");
    let long = read::board_of_reply("Output:\nAGENDA\nM O T O R");
    assert_eq!(
        long.answer_text(),
        "_____/MOTOR/_____/_____/_____",
        "a six-letter row is refused, and rows start at the top"
    );
    let t = task();
    assert_eq!(t.extract_answer(&x(), reply).as_deref(), Some("AGEND/MOTOR/ART__/SALLE/SLEER"));
    assert!(t.check(&x(), "AGEND/MOTOR/ARTSY/SALLE/SLEER").is_ok());
}

// ---- the DFS on a scripted model ----

fn dfs_params(edit: impl Fn(Params) -> Params) -> Params {
    edit(Params::new(MethodKind::from_name("tot-dfs").unwrap()).with("n_evaluate", 1))
}

fn respond(call: u64, text: String) -> Input {
    Input::LlmReply(LlmReply {
        call,
        result: Ok(LlmResponse {
            completions: vec![Completion::text(text, None)],
            usage: Usage::default(),
            latency_ms: 0,
            model: "script".into(),
            simulated: false,
            cached: false,
            lost: None,
        }),
    })
}

/// Run the engine to the end, answering each call with `model(request)`; the states
/// evaluated, in order.
fn drive(params: Params, model: impl Fn(&LlmRequest) -> String) -> (Engine, Vec<String>) {
    let mut engine = Engine::new(task(), &x(), params);
    let mut queue: Vec<Effect> = engine.handle(Input::Command { command: EngineCommand::Run });
    let mut valued = Vec::new();
    let mut guard = 0;
    while let Some(effect) = (!queue.is_empty()).then(|| queue.remove(0)) {
        if let Effect::CallLlm { call, request } = effect {
            if request.purpose == Purpose::Value {
                valued.push(request.context["y"].as_str().unwrap_or("").to_string());
            }
            let text = model(&request);
            queue.extend(engine.handle(respond(call, text)));
            guard += 1;
            assert!(guard < 10_000, "the search does not end");
        }
    }
    assert!(engine.is_finished(), "the search finished");
    (engine, valued)
}

fn y_of(request: &LlmRequest) -> String {
    request.context["y"].as_str().unwrap_or("").to_string()
}

/// Root: four candidates; a depth-1 state: an overwriting word first, then one more
/// word; deeper: nothing. The evaluator calls any state holding h2 impossible.
fn scripted(request: &LlmRequest) -> String {
    let y = y_of(request);
    match request.purpose {
        Purpose::Propose => match y.lines().count() {
            0 => "h2. motor (certain)\nh1. agend (high)\nv1. amass (medium)\nh3. artsy (low)".into(),
            1 => "v1. bmass (certain)\nh5. sleer (high)".into(),
            _ => String::new(),
        },
        Purpose::Value => {
            // A verdict for every clue; the task reads those it asked about.
            let verdict = if y.contains("h2.") { "impossible" } else { "sure" };
            ["h1", "h2", "h3", "h4", "h5", "v1", "v2", "v3", "v4", "v5"].map(|c| format!("{c}. {verdict}")).join("\n")
        }
        other => panic!("unexpected {other:?} call"),
    }
}

#[test]
fn dfs_tries_three_children_per_state_by_proposal_score_prunes_and_backtracks() {
    let (engine, visited) = drive(dfs_params(|p| p), scripted);
    assert_eq!(
        visited,
        vec![
            "h2. motor\n", // pruned: judged impossible
            "h1. agend\n", // its overwriting child is skipped; h5 is tried
            "h1. agend\nh5. sleer\n",
            "v1. amass\n", // the third child of the root, after backtracking
            "v1. amass\nh5. sleer\n",
        ],
        "h3. artsy, a fourth child, is never tried"
    );
    let tree = engine.tree();
    let by_thought = |path: &str| tree.nodes().find(|n| n.path == path).unwrap();
    assert!(matches!(by_thought("h2. motor\n").status, NodeStatus::Dropped(_)));
    assert!(matches!(by_thought("h1. agend\nv1. bmass\n").status, NodeStatus::Invalid(_)));
    assert!(by_thought("h1. agend\nv1. bmass\n").score.is_none(), "an overwrite is never evaluated");
    assert!(by_thought("h3. artsy\n").score.is_none());
    assert_eq!(by_thought("h2. motor\n").metrics.get("proposal"), Some(&1.0));
    // The output: the deepest state, the first visited on ties.
    let outcome = engine.outcome().unwrap();
    assert_eq!(tree.node(outcome.finals[0]).path, "h1. agend\nh5. sleer\n");
    assert_eq!(outcome.answer.as_deref(), Some("AGEND/_____/_____/_____/SLEER"));
}

#[test]
fn without_pruning_the_impossible_state_is_searched_too() {
    for no_prune in [("no_prune", json!(true)), ("prune", json!("none"))] {
        let params = dfs_params(|p| {
            let mut header = serde_json::to_value(&p).unwrap();
            header[no_prune.0] = no_prune.1.clone();
            serde_json::from_value(header).unwrap()
        });
        let (engine, visited) = drive(params, scripted);
        // After h2 (no A on the board yet) "v1. bmass" overwrites nothing, so it is tried first.
        assert_eq!(visited[..3], ["h2. motor\n", "h2. motor\nv1. bmass\n", "h2. motor\nh5. sleer\n"]);
        assert_eq!(visited.len(), 7);
        let outcome = engine.outcome().unwrap();
        assert_eq!(engine.tree().node(outcome.finals[0]).path, "h2. motor\nv1. bmass\n");
    }
}

#[test]
fn dfs_stops_after_100_visited_states_and_never_goes_past_depth_9() {
    // A model that knows every word and judges everything sure: only the caps stop it.
    let gold = Board::from_letters(b"AGENDMOTORARTSYSALLESLEER");
    let model = |request: &LlmRequest| -> String {
        let board = Board::from_path(&y_of(request)).unwrap();
        match request.purpose {
            Purpose::Propose => (0..10)
                .filter(|&c| board.status[c] == thoughtscope::tasks::crosswords::board::ClueStatus::Unfilled)
                .map(|c| {
                    format!(
                        "{}. {} (high)",
                        thoughtscope::tasks::crosswords::board::clue_label(c),
                        gold.word_text(c).to_lowercase()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => "h1. sure\nh2. sure\nh3. sure\nh4. sure\nh5. sure\nv1. sure\nv2. sure\nv3. sure\nv4. sure\nv5. sure"
                .into(),
        }
    };
    let (engine, visited) = drive(dfs_params(|p| p), model);
    assert_eq!(visited.len(), 100, "the state cap");
    let tree = engine.tree();
    for node in tree.nodes() {
        let tried = node.children.iter().filter(|&&c| tree.node(c).score.is_some()).count();
        assert!(tried <= 3, "{} tried {tried} children", node.id);
        assert!(node.depth <= 9, "the paper's DFS visits no state deeper than 9");
    }
    assert_eq!(tree.node(engine.outcome().unwrap().finals[0]).depth, 9);
    let metrics = engine.core.task.metrics(&engine.core.x, tree, engine.outcome().unwrap());
    assert_eq!(metrics["letter"], 1.0, "nine gold words fill the board");
    // A smaller cap and a wider children cap are parameters.
    let params = dfs_params(|p| p.with("max_states", 7).with("max_children", 5));
    let (engine, visited) = drive(params, model);
    assert_eq!(visited.len(), 7);
    let root_tried =
        engine.tree().node(NodeId(0)).children.iter().filter(|&&c| engine.tree().node(c).score.is_some()).count();
    assert!(root_tried <= 5);
}

// ---- metrics ----

#[test]
fn metrics_take_the_deepest_state_first_visited_and_the_best_state_oracle() {
    let t = task();
    let x = x();
    let mut tree = SearchTree::new(&x);
    let root = tree.root();
    let add = |tree: &mut SearchTree, parent: NodeId, path: &str, call: u64| {
        let thought = path.lines().last().unwrap().to_string();
        let id = tree.add_child(parent, thought, path.to_string(), thoughtscope::engine::Origin::Model);
        let node = tree.node_mut(id);
        node.calls.push(call);
        node.score = Some(Box::default());
        id
    };
    // Visiting order (call ids) differs from creation order (node ids).
    let wrong = add(&mut tree, root, "h2. tasks\n", 5);
    let right = add(&mut tree, root, "h1. agend\n", 0);
    let _deep_wrong = add(&mut tree, right, "h1. agend\nh3. xxxxx\n", 3);
    let _deep_right = add(&mut tree, wrong, "h2. tasks\nh1. agend\n", 4);
    let good = add(&mut tree, right, "h1. agend\nh2. motor\n", 7);
    let outcome = Outcome {
        finals: vec![],
        answer: None,
        solved: false,
        solved_any: false,
        sample_accuracy: None,
        answered_by: None,
    };
    let m = t.metrics(&x, &tree, &outcome);
    // Deepest: three states at depth 2; the first visited (call 3) is "agend / xxxxx".
    assert_eq!(m["word"], 0.1);
    assert_eq!(m["letter"], 0.2);
    assert_eq!(m["game"], 0.0);
    // Oracle: the most right words, first visited on ties: "agend / motor" (2 words).
    let _ = good;
    assert_eq!(m["oracle_word"], 0.2);
    assert_eq!(m["oracle_letter"], 0.4);
    // Whole answers: the mean over the samples.
    let mut samples = SearchTree::new(&x);
    let a = samples.add_child(
        samples.root(),
        "a".into(),
        "Output:\nA G E N D\nM O T O R\nA R T S Y\nS A L L E\nS L E E R".into(),
        thoughtscope::engine::Origin::Model,
    );
    let b =
        samples.add_child(samples.root(), "b".into(), "Output:\nA G E N D".into(), thoughtscope::engine::Origin::Model);
    let outcome = Outcome { finals: vec![a, b], sample_accuracy: Some(0.5), ..outcome };
    let m = t.metrics(&x, &samples, &outcome);
    assert_eq!((m["letter"], m["word"], m["game"]), (0.6, 0.55, 0.5));
    assert_eq!((m["oracle_word"], m["oracle_game"]), (1.0, 1.0));
}

// ---- the command line, with the simulated model ----

#[test]
fn a_run_of_tot_dfs_with_sim_prints_the_metrics() {
    let out = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["run", "--task", "crosswords", "--method", "tot-dfs", "--range", "0..2", "--json"])
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: Value = serde_json::from_slice(&out.stdout).expect("one JSON summary");
    assert_eq!(summary["task"], "crosswords");
    assert_eq!(summary["n"], 2);
    for key in ["letter", "word", "game", "oracle_letter", "oracle_word", "oracle_game"] {
        let v = summary["metrics"][key].as_f64().unwrap_or(-1.0);
        assert!((0.0..=1.0).contains(&v), "{key}: {v}");
    }
    assert!(summary["metrics"]["oracle_word"].as_f64() >= summary["metrics"]["word"].as_f64().map(|w| w * 0.0));
    let text = Command::new(env!("CARGO_BIN_EXE_thoughtscope"))
        .args(["run", "--task", "crosswords", "--method", "io", "--range", "0..2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("mean game "), "{text}");
    assert!(text.contains(" oracle_word "), "{text}");
}

#[test]
fn sim_answers_are_the_same_for_the_same_seed_and_request() {
    use thoughtscope::engine::sim::SimConfig;
    use thoughtscope::llm::sim::SimProvider;
    let t = task();
    let prompt = t.propose_prompt(&x(), "h2. motor\n");
    let request = LlmRequest::from_prompt(prompt, 8, 0.7);
    let sim = SimProvider::new(SimConfig::default(), &SimPlayers);
    let a = sim.answer(&request).unwrap();
    let b = sim.answer(&request).unwrap();
    assert_eq!(a.completions, b.completions);
    assert!(a.completions.iter().all(|c| c.text.lines().all(|l| read::proposal_line(l).is_some())));
    let perfect = SimProvider::new(SimConfig { noise: 0.0, ..SimConfig::default() }, &SimPlayers);
    let io = perfect.answer(&LlmRequest::from_prompt(t.io_prompt(&x()), 1, 0.7)).unwrap();
    assert!(t.check(&x(), &t.extract_answer(&x(), &io.completions[0].text).unwrap()).is_ok(), "noise 0 solves it");
}
