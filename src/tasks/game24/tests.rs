use super::*;
use crate::engine::task::{TreeSearch, ValueEvaluator, VoteEvaluator};
use crate::engine::Task;

fn task() -> Game24 {
    Game24::builtin()
}

#[test]
fn reads_numbers_left_like_the_reference() {
    assert_eq!(current_numbers_text("4 5 6 10", ""), "4 5 6 10");
    assert_eq!(current_numbers_text("4 5 6 10", "4 + 5 = 9 (left: 6 9 10)\n"), "6 9 10");
    assert_eq!(current_numbers_text("x", "a (left: 1 2)\n10 - 4 = 6 (left: 4 6) (if allowed)\n"), "4 6");
}

#[test]
fn proposals_accept_messy_output_and_reject_bad_steps_with_reasons() {
    let t = task();
    let reply = "Possible next steps:\n4 + 5 = 9 (left: 6 9 10)\n**6 * 4 = 24 (left: 5 10 24)**\n10 / 1.5 ≈ 6.67 (left: 6.67)\n5 - 10 = -4 (left: -4 4 6)\n4 * 6 = 24 (left: 5 6 10)\n";
    let ps = t.parse_proposals("4 5 6 10", "", reply);
    assert_eq!(ps.len(), 7, "one candidate per line, as the reference splits");
    assert!(ps[0].problem.is_some(), "prose is rejected");
    assert!(ps[1].problem.is_none(), "{:?}", ps[1].problem);
    assert_eq!(ps[1].path, "4 + 5 = 9 (left: 6 9 10)\n");
    assert!(ps[2].problem.is_none(), "markdown bold is tolerated: {:?}", ps[2].problem);
    assert!(ps[3].problem.is_some(), "1.5 is not among the numbers");
    assert!(ps[4].problem.as_deref().unwrap_or("").contains("-5"), "5 - 10 is -5: {:?}", ps[4].problem);
    assert!(ps[5].problem.is_some(), "wrong left list");
    assert_eq!(ps[6].problem.as_deref(), Some("empty line"));
}

#[test]
fn final_step_expects_an_answer_line() {
    let t = task();
    let y = "4 * 5 = 20 (left: 6 10 20)\n10 - 6 = 4 (left: 4 20)\n4 + 20 = 24 (left: 24)\n";
    let p = t.propose_prompt("4 5 6 10", y);
    assert_eq!(p.context["final"], true);
    assert!(p.messages[0].content.ends_with(y), "the answer prompt continues the steps");
    let ps = t.parse_proposals("4 5 6 10", y, "Answer: (4 * 5) + (10 - 6) = 24");
    assert!(ps[0].problem.is_none());
    let answer = t.extract_answer("4 5 6 10", &ps[0].path).unwrap();
    assert_eq!(answer, "(4 * 5) + (10 - 6) = 24");
    assert!(t.check("4 5 6 10", &answer).is_ok());
    assert!(t.parse_proposals("4 5 6 10", y, "4 + 20 = 24")[0].problem.is_some());
}

#[test]
fn value_prompts_and_the_last_step_rule() {
    let t = task();
    let p = t.value_prompt("4 5 6 10", "4 + 5 = 9 (left: 6 9 10)\n");
    assert!(p.messages[0].content.ends_with("6 9 10\n"));
    assert_eq!(p.context["numbers"], "6 9 10");
    let last = "a (left: 1)\nb (left: 1)\nc (left: 24)\nAnswer: (4 * 5) + (10 - 6) = 24\n";
    let p = t.value_prompt("4 5 6 10", last);
    assert_eq!(p.context["answer"], "(4 * 5) + (10 - 6) = 24");
    assert!(p.messages[0].content.contains("Answer: (4 * 5) + (10 - 6) = 24"));
    let four = "a (left: 1 2 3)\nb (left: 1 2)\nc (left: 3)\nd (left: 3)\n";
    assert_eq!(t.fixed_value("x", four).map(|v| v.0), Some(0.0));
    assert_eq!(t.fixed_value("x", last), None);
    assert_eq!(t.fixed_value("x", "a (left: 1 2 3)\n"), None);
}

#[test]
fn values_sum_classes_as_the_reference_does() {
    let t = task();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(t.parse_value("", "", &s(&["sure", "sure", "sure"])).0, 60.0);
    let (v, labels) = t.parse_value("", "", &s(&["10 + 14 = 24\nlikely", "impossible", "Impossible."]));
    assert_eq!(v, 0.001 * 2.0 + 1.0);
    assert_eq!(v, 1.002, "same float as Python's sum");
    assert_eq!(labels, vec!["likely", "impossible", "impossible"]);
    let (v, labels) = t.parse_value("", "", &s(&["I think so", "", "sure or likely"]));
    assert_eq!(v, 0.0);
    assert_eq!(labels, vec!["?", "?", "?"]);
    assert_eq!(read_value_class("**Sure**\n\n"), Some("sure"));
}

#[test]
fn votes_and_answers() {
    let t = task();
    assert_eq!(t.parse_vote("Choice 2 looks good.\nThe best choice is 2", 3), Some(1));
    assert_eq!(t.parse_vote("The best choice is 7", 3), None);
    assert_eq!(t.parse_vote("no idea", 3), None);
    assert_eq!(t.extract_answer("", "(10 - 4) * (13 - 9) = 24"), Some("(10 - 4) * (13 - 9) = 24".into()));
    assert!(t.check("4 9 10 13", "(10 - 4) * (13 - 9) = 24").is_ok());
    assert!(t.check("4 9 10 13", "(10 - 4) * (13 - 9) + 1 = 24").is_err());
    assert_eq!(t.answer_key("Answer: 4*9 - 13+10 = 24"), t.answer_key("4 * 9 - 13 + 10"));
}

#[test]
fn puzzles_and_inputs() {
    let t = task();
    assert_eq!(t.problem_count(), 1362);
    let p = t.problem(900).unwrap();
    assert_eq!(p.index, Some(900));
    let again = t.parse_input(&p.input).unwrap();
    assert_eq!(again.index, Some(900));
    let typed = t.parse_input("13 10 9 4").unwrap();
    assert_eq!(typed.input, "4 9 10 13", "numbers are put in the list's order");
    assert!(t.parse_input("1 2 3").is_err());
    assert!(t.parse_input("one two").is_err());
}

#[test]
fn prompt_overrides_from_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("propose.txt"), "MY PROPOSE {numbers}\n").unwrap();
    let t = Game24::new(Some(dir.path())).unwrap();
    let p = t.propose_prompt("4 5 6 10", "");
    assert_eq!(p.messages[0].content, "MY PROPOSE 4 5 6 10\n");
    std::fs::write(dir.path().join("value.txt"), "no placeholder\n").unwrap();
    let err = Game24::new(Some(dir.path())).err().unwrap().to_string();
    assert!(err.contains("value.txt") && err.contains("{numbers}"), "{err}");
}

#[test]
fn an_answer_after_a_letter_that_grows_in_lower_case_does_not_panic() {
    // 'İ' is 2 bytes but 3 in lower case; the label's offset must come from the text itself.
    assert_eq!(task().extract_answer("4 4 6 8", "İ answer:é").as_deref(), Some("é"));
}

/// Everything a model writes is untrusted: the parsers, checkers and the solver never panic.
mod robustness {
    use super::super::{check_answer, solvable, solve};
    use crate::arith::reach::answer_from_steps;
    use crate::arith::steps::{check_step, moves, parse_step_line};
    use crate::arith::{eval_expr, format_numbers, parse_number, parse_numbers, Q};

    use crate::arith::testing::{fr, q, qs};

    /// Small deterministic generator (no external crates).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 33
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn fuzz_never_panics() {
        let pieces = [
            "0",
            "1",
            "4",
            "9",
            "10",
            "24",
            "-",
            "+",
            "*",
            "/",
            "x",
            "(",
            ")",
            "=",
            " ",
            ".",
            ",",
            "\u{2212}",
            "\u{d7}",
            "\u{f7}",
            "\u{2248}",
            "left:",
            "(left: ",
            "approx.",
            "Answer:",
            "**",
            "1. ",
            "- ",
            "2/3",
            "9223372036854775807",
            "99999999999999999999",
            "0.",
            "é",
            "[",
            "]",
            "~",
            "...",
            "\u{2026}",
            "remaining:",
            ":",
            "\n",
            "\t",
            "e",
            "round",
        ];
        let mut rng = Lcg(42);
        let numbers = qs("4 5 6 10");
        for _ in 0..20_000 {
            let len = rng.below(16);
            let s: String = (0..len).map(|_| pieces[rng.below(pieces.len())]).collect();
            let _ = parse_number(&s);
            let _ = parse_numbers(&s);
            let _ = parse_step_line(&s);
            let _ = check_step(&numbers, &s);
            let _ = eval_expr(&s);
            let _ = check_answer(&numbers, &s);
            let _ = answer_from_steps(&numbers, &[&s]);
        }
    }

    #[test]
    fn fuzz_step_lines_from_moves_never_panic_on_extremes() {
        let extremes = [q(i64::MAX), q(-i64::MAX), fr(1, i64::MAX), fr(i64::MAX, i64::MAX - 1), q(0), q(1), q(-1)];
        let mut rng = Lcg(7);
        for _ in 0..500 {
            let n = 1 + rng.below(4);
            let nums: Vec<Q> = (0..n).map(|_| extremes[rng.below(extremes.len())]).collect();
            let _ = solvable(&nums);
            let _ = solve(&nums);
            for m in moves(&nums) {
                assert_eq!(check_step(&nums, &m.line), Ok(m.left.clone()), "{}", m.line);
            }
        }
        // Ratios built by callers with the extreme i64::MIN value don't panic either.
        let weird = [q(i64::MIN), Q::new_raw(i64::MIN, i64::MIN), q(3)];
        let _ = moves(&weird);
        let _ = solvable(&weird);
        let _ = format_numbers(&weird);
        let _ = check_step(&weird, "3 + 3 = 6 (left: 6)");
        let _ = check_answer(&weird, "3 * 8");
    }
}

/// The shared arithmetic on the game's own puzzles.
mod on_the_puzzles {
    use super::super::puzzles::puzzles;
    use super::super::{check_answer, solvable, solve};
    use crate::arith::format_numbers;
    use crate::arith::reach::answer_from_steps;
    use crate::arith::steps::{check_step, moves};
    use crate::arith::testing::q;

    #[test]
    fn all_puzzles_solvable_and_solutions_check() {
        let all = puzzles().unwrap();
        let mut solved = 0;
        for (rank, nums) in &all {
            if solvable(nums) {
                let s = solve(nums).unwrap_or_else(|| panic!("rank {rank}: no solution"));
                assert_eq!(check_answer(nums, &s), Ok(()), "rank {rank}: {s}");
                assert_eq!(check_answer(nums, &format!("Answer: {s} = 24")), Ok(()));
                solved += 1;
            }
        }
        assert_eq!(solved, 1362);
    }

    #[test]
    fn answer_from_steps_round_trip_on_test_split() {
        let all = puzzles().unwrap();
        let mut checked = 0;
        for (rank, input) in &all[900..1000] {
            if !solvable(input) {
                continue;
            }
            let mut current = input.clone();
            let mut lines = Vec::new();
            while current.len() > 1 {
                let m = moves(&current)
                    .into_iter()
                    .find(|m| solvable(&m.left))
                    .unwrap_or_else(|| panic!("rank {rank}: stuck at {}", format_numbers(&current)));
                assert_eq!(check_step(&current, &m.line), Ok(m.left.clone()));
                current = m.left.clone();
                lines.push(m.line);
            }
            assert_eq!(current, vec![q(24)]);
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let ans =
                answer_from_steps(input, &refs).unwrap_or_else(|| panic!("rank {rank}: steps {lines:?} did not chain"));
            assert_eq!(check_answer(input, &ans), Ok(()), "rank {rank}: {ans}");
            assert_eq!(check_answer(input, &format!("Answer: {ans} = 24")), Ok(()));
            checked += 1;
        }
        assert_eq!(checked, 100);
    }
}
