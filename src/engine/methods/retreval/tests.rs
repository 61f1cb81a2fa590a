//! Property tests: whatever a model replies, no ReTreVal parser panics, and what they
//! return stays in range.

use proptest::prelude::*;

use super::*;

/// Text shaped like the replies the parsers read (labels, fractions, bold, subtask
/// blocks, comparison lines) around arbitrary text, so their branches are reached.
fn reply() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "(Complexity|Score|Rating|level|\\*\\*)[: *-]{0,3}[-0-9a-z. /]{0,12}(\\*\\*)?",
        "[\\s\\S]{0,10}-?[0-9]{0,25}(\\.[0-9]{0,3})? ?(/|out of) ?-?[0-9]{0,3}[\\s\\S]{0,5}",
        "((Versus|vs\\.?|Comparison|Attempt) -?[0-9]{0,3}[:*]{0,3} -?[0-9.]{0,6}(/10)?\n){0,5}(Critique:)?[\\s\\S]{0,20}",
        "(Approach|Cause|Root cause|VERDICT|Summary)[:*]{0,3} ?(algebra|casework|off.by.one|arithmetic error|correct|incorrect|[a-z_ -]{0,12})\n?",
        "((\\*\\*)?(Subtask|Task|Sub-task) ?-?[0-9]{0,4}[:.)]?(\\*\\*)? ?[a-z ]{0,8}\n(- )?(Depends on|Exit condition|Goal|Done when)?[:*]{0,2} ?[0-9a-z ,]{0,8}\n){0,6}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn reply_parsers_never_panic_and_stay_in_range(text in reply(), n in 0usize..12, max in 0usize..8) {
        if let Some(c) = parse_complexity(&text) {
            prop_assert!((1..=5).contains(&c.level.level()));
        }
        if let Some(l) = parse_local_score(&text) {
            prop_assert!((0.0..=1.0).contains(&l.score));
        }
        let cross = parse_cross(&text, n);
        prop_assert_eq!(cross.scores.len(), n.min(scoring::MAX_SIBLINGS));
        prop_assert!(cross.scores.iter().flatten().all(|s| (0.0..=1.0).contains(s)));
        if let Some(c) = cross.cross() {
            prop_assert!((0.0..=1.0).contains(&c));
        }
        let _ = parse_approach(&text);
        let _ = approach_from_trace(&text);
        let _ = parse_failure_cause(&text);
        let _ = parse_validation(&text);
        if let Ok(f) = parse_failure(&text, Approach::Other) {
            prop_assert!(f.summary.chars().count() <= failure::MAX_SUMMARY_CHARS + 1);
            prop_assert!(!failure_note(&f).contains('\n'));
        }
        if let Ok(subtasks) = parse_subtasks(&text, max) {
            prop_assert!((2..=max.clamp(2, 4)).contains(&subtasks.len()));
            for (i, s) in subtasks.iter().enumerate() {
                prop_assert_eq!(s.id, i + 1);
                prop_assert!(s.depends_on.iter().all(|d| *d >= 1 && *d < s.id), "only earlier subtasks");
            }
        } else if let Err(e) = parse_subtasks(&text, max) {
            prop_assert!(!e.contains('\n'), "one line: {}", e);
        }
        let _ = ComplexityTable::parse(&text);
    }

    #[test]
    fn scores_stay_bounded_for_any_inputs(local in any::<f64>(), cross in proptest::option::of(any::<f64>()), rel in proptest::option::of(any::<f64>())) {
        let s = Score::combine(local, cross, rel, Weights::default());
        prop_assert!(s.total.is_finite() && (-0.4..=1.0).contains(&s.total), "{:?}", s);
        prop_assert!((0.0..=0.4).contains(&s.penalty));
    }

    #[test]
    fn the_backtrack_target_is_an_unexplored_candidate(
        cands in prop::collection::vec((proptest::option::of(-1.0f64..2.0), any::<bool>(), 0usize..7), 0..10),
        failed in 0usize..7,
    ) {
        let approach = |i: usize| Approach::ALL.get(i).copied();
        let list: Vec<BacktrackCandidate<usize>> = cands
            .iter()
            .enumerate()
            .map(|(id, (score, explored, a))| BacktrackCandidate { id, score: *score, explored: *explored, approach: approach(*a) })
            .collect();
        match pick_backtrack_target(&list, approach(failed)) {
            None => prop_assert!(list.iter().all(|c| c.explored)),
            Some(id) => {
                prop_assert!(!list[id].explored);
                let others = list.iter().any(|c| !c.explored && (approach(failed).is_none() || c.approach != approach(failed)));
                if others {
                    prop_assert!(approach(failed).is_none() || list[id].approach != approach(failed), "a different approach when there is one");
                }
            }
        }
    }
}

#[test]
fn hostile_replies_are_read_in_bounded_time_and_give_bounded_output() {
    // Each of these is a megabyte or more; a parser that is quadratic in the reply, or
    // keeps all of it, would show here (the parsers read the first MAX_REPLY_CHARS).
    let hostile = [
        "**".repeat(600_000),
        "Versus 1: 7\n".repeat(100_000),
        "Subtask 1: a\nDepends on: 1 2 3 4 5 6 7 8 9\n".repeat(30_000),
        format!("Subtask 1: {}\nExit condition: x\nSubtask 2: b\nExit condition: y", "é".repeat(1_000_000)),
        "Complexity: ".repeat(100_000),
        "\n".repeat(1_000_000),
        "off by one arithmetic error ".repeat(50_000),
        format!("Critique: {}", "word ".repeat(300_000)),
        "-".repeat(1_000_000),
    ];
    for text in &hostile {
        let _ = parse_complexity(text);
        let _ = parse_local_score(text);
        let cross = parse_cross(text, 3);
        assert!(cross.critique.chars().count() <= MAX_TRACE_CHARS + 1);
        let _ = parse_approach(text);
        let _ = approach_from_trace(text);
        assert!(parse_validation(text).critique.chars().count() <= MAX_TRACE_CHARS + 1);
        if let Ok(f) = parse_failure(text, Approach::Other) {
            assert!(f.summary.chars().count() <= failure::MAX_SUMMARY_CHARS + 1);
        }
        if let Ok(subtasks) = parse_subtasks(text, 4) {
            assert!(subtasks.iter().all(|s| s.goal.chars().count() <= 2_001));
        }
    }
    assert_eq!(parse_subtasks(&hostile[2], 4).unwrap_err(), "the reply lists 5 or more subtasks; it must list 2 to 4");
}
