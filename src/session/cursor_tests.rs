//! The cursor must reach exactly the state a fresh rebuild reaches, whichever way it
//! got there: forward, back to a checkpoint and on, or across several checkpoints.

use super::cursor::ReplayCursor;
use super::replay::rebuild;
use super::{Record, Session};
use crate::engine::{Engine, Event, Input};

/// Everything observable of an engine (its method's private state shows in what it does next).
fn fingerprint(engine: &Engine) -> String {
    format!(
        "{}\n{:?}\n{:?}\n{:?}\n{:?}",
        serde_json::to_string(engine.tree()).unwrap(),
        engine.core.calls,
        engine.pending_calls(),
        engine.mode(),
        engine.outcome()
    )
}

fn recorded_events(session: &Session, k: usize) -> Vec<Event> {
    session
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Event { seq, event } if (*seq as usize) < k => Some(event.clone()),
            _ => None,
        })
        .collect()
}

/// Positions to visit, in an order that goes forward, back and across checkpoints.
fn positions(total: usize, interval: usize) -> Vec<usize> {
    let mut at = vec![total, 0, 1, interval + 1, interval - 1, interval, 3, total.saturating_sub(1)];
    for c in [2, 3, 5] {
        at.extend([c * interval + 1, c * interval, c * interval - 1]);
    }
    at.extend([total / 2, 2, total, total / 3, 0]);
    at.into_iter().map(|k| k.min(total)).collect()
}

/// Seek through `positions` and compare each state with a fresh rebuild to there.
fn check_against_rebuild(session: &Session, interval: usize, exact: bool) {
    let name = session.path.display();
    let mut cursor = ReplayCursor::new(session, None).unwrap().with_interval(interval);
    let total = cursor.total();
    assert_eq!(total, session.input_count());
    for k in positions(total, interval) {
        cursor.seek(k);
        let fresh = rebuild(session, None, Some(k)).unwrap();
        assert_eq!(cursor.position(), k, "{name}");
        assert_eq!(fresh.inputs, k, "{name}");
        assert_eq!(fingerprint(cursor.engine()), fingerprint(&fresh.engine), "{name}: engine at input {k}");
        assert_eq!(cursor.totals(), fresh.totals, "{name}: totals at input {k}");
        assert_eq!(cursor.tool_calls(), &fresh.tool_calls[..], "{name}: tool calls at input {k}");
        assert_eq!(cursor.pending_tools(), fresh.pending_tools, "{name}: pending tools at input {k}");
        assert_eq!(cursor.reworded(), fresh.reworded, "{name}: wording at input {k}");
        // The cursor knows where today's engine diverges once it has been there; a
        // rebuild up to `k` finds it if it is before `k`.
        match (fresh.fidelity.recorded_from(), cursor.fidelity().recorded_from()) {
            (Some(f), c) => assert_eq!(c, Some(f), "{name}: divergence at input {k}"),
            (None, c) => assert!(c.is_none_or(|c| c >= k), "{name}: divergence {c:?} before {k}"),
        }
        if exact {
            assert!(fresh.fidelity.is_exact(), "{name}: {}", fresh.fidelity);
            assert_eq!(cursor.events(), &recorded_events(session, k)[..], "{name}: events at input {k}");
        }
    }
    // One more step forward from a checkpoint goes on exactly as the record does.
    cursor.seek(interval.min(total));
    cursor.forward(total);
    assert_eq!(cursor.position(), total);
    assert_eq!(fingerprint(cursor.engine()), fingerprint(&rebuild(session, None, None).unwrap().engine));
    assert_eq!(cursor.checkpoints(), 1 + total / interval, "{name}: a checkpoint every {interval} inputs");
}

#[test]
fn cursor_matches_a_fresh_rebuild_on_the_demo_sessions() {
    for demo in crate::demos::DEMOS.iter() {
        let session = crate::demos::load(demo).unwrap();
        for interval in [1, 7, 16, super::cursor::DEFAULT_INTERVAL] {
            check_against_rebuild(&session, interval, true);
        }
    }
}

#[test]
fn cursor_matches_a_fresh_rebuild_on_react_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let text = include_str!("../../tests/fixtures/react-import-sample.txt");
    let report = crate::import::react::import_text(text, "sample.txt", dir.path()).unwrap();
    assert!(report.sessions > 0);
    let mut tool_replies = 0;
    for t in &report.trajectories {
        let session = Session::load(std::path::Path::new(&t.session)).unwrap();
        tool_replies += session.inputs().filter(|(i, _)| matches!(i, Input::ToolReply(_))).count();
        for interval in [1, 3, 5] {
            check_against_rebuild(&session, interval, true);
        }
    }
    assert!(tool_replies > 0, "the sessions answer tool calls");
}

#[test]
fn cursor_matches_a_fresh_rebuild_on_a_long_session_with_default_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let session = crate::runtime::bench::record_steered_session(&dir.path().join("long.jsonl"), 2600).unwrap();
    let cursor = ReplayCursor::new(&session, None).unwrap();
    assert_eq!(cursor.interval(), super::cursor::DEFAULT_INTERVAL);
    assert!(session.input_count() > 2 * cursor.interval());
    check_against_rebuild(&session, cursor.interval(), true);
}

/// Input `seq` of the first demo with its first decision event replaced by `event`.
fn changed_demo(seq: u64, event: Event) -> Session {
    let mut session = crate::demos::load(&crate::demos::DEMOS[0]).unwrap();
    let i = session
        .records
        .iter()
        .position(|r| matches!(r, Record::Event { seq: s, event } if *s == seq && !matches!(event, Event::Log { .. })))
        .unwrap();
    session.records[i] = Record::Event { seq, event };
    session
}

#[test]
fn a_record_today_decides_otherwise_is_played_as_recorded_from_there_whichever_way_the_cursor_goes() {
    let original = crate::demos::load(&crate::demos::DEMOS[0]).unwrap();
    let scored = original
        .records
        .iter()
        .find_map(|r| match r {
            Record::Event { seq, event: Event::Scored { id, .. } } if *seq > 4 => Some((*seq, *id)),
            _ => None,
        })
        .unwrap();
    let (seq, id) = scored;
    let mut session = original.clone();
    for r in session.records.iter_mut() {
        if let Record::Event { seq: s, event: Event::Scored { id: i, value } } = r {
            if *s == seq && *i == id {
                *value = 0.125;
            }
        }
    }
    let mut cursor = ReplayCursor::new(&session, None).unwrap().with_interval(4);
    cursor.seek(session.input_count());
    let from = seq as usize;
    assert_eq!(cursor.fidelity().recorded_from(), Some(from), "{}", cursor.fidelity());
    assert_eq!(cursor.position(), session.input_count(), "played to the end");
    assert_eq!(cursor.engine().tree().node(id).score.as_ref().map(|s| s.value), Some(0.125));
    // What is shown from there on is the record's.
    assert_eq!(cursor.events(), &recorded_events(&session, session.input_count())[..]);
    assert!(cursor.engine().outcome().is_some_and(|o| o.solved), "the recorded outcome");
    // Before it, today's engine, exactly; the divergence stays known.
    cursor.seek(from);
    assert_eq!(fingerprint(cursor.engine()), fingerprint(&rebuild(&original, None, Some(from)).unwrap().engine));
    assert_eq!(cursor.fidelity().recorded_from(), Some(from));
    check_against_rebuild(&session, 4, false);
    check_against_rebuild(&session, 1, false);
}

#[test]
fn a_log_line_worded_otherwise_is_not_a_difference() {
    let mut session = crate::demos::load(&crate::demos::DEMOS[0]).unwrap();
    let i = session.records.iter().position(|r| matches!(r, Record::Event { seq: 5, event: Event::Log { .. } }));
    let i = i.unwrap_or_else(|| {
        session.records.iter().position(|r| matches!(r, Record::Event { event: Event::Log { .. }, .. })).unwrap()
    });
    let Record::Event { seq, .. } = session.records[i].clone() else { unreachable!() };
    session.records[i] = Record::Event { seq, event: Event::Log { text: "worded as it was then".into() } };
    let mut cursor = ReplayCursor::new(&session, None).unwrap().with_interval(4);
    cursor.seek(session.input_count());
    assert!(cursor.fidelity().reproduces(), "{}", cursor.fidelity());
    assert!(matches!(cursor.fidelity(), super::fidelity::Fidelity::Reworded { inputs: 1, lines: 1, .. }));
    assert!(cursor.reworded()[0].contains("worded as it was then"), "{:?}", cursor.reworded());
    cursor.seek(seq as usize);
    assert!(cursor.fidelity().is_exact(), "the wording counted up to the cursor");
    // A decision replaced by a log line is a difference, not wording.
    let changed = changed_demo(5, Event::Log { text: "not what happened".into() });
    let mut cursor = ReplayCursor::new(&changed, None).unwrap();
    cursor.seek(changed.input_count());
    assert_eq!(cursor.fidelity().recorded_from(), Some(5), "{}", cursor.fidelity());
}

/// Timeline steps one input at a time, back from the end across checkpoints (through
/// the fine checkpoints of each stretch) and forward again, each equal to a fresh rebuild.
#[test]
fn single_steps_back_and_forward_match_a_fresh_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let session = crate::runtime::bench::record_steered_session(&dir.path().join("steps.jsonl"), 300).unwrap();
    let interval = 64;
    let mut cursor = ReplayCursor::new(&session, None).unwrap().with_interval(interval);
    let total = cursor.total();
    assert!(total > 2 * interval);
    cursor.seek(total);
    let mut k = total;
    let mut fine_seen = 0;
    while k > total - 2 * interval - 3 {
        k -= 1;
        cursor.seek(k);
        fine_seen = fine_seen.max(cursor.fine_checkpoints());
        // Every seventh position is checked against a rebuild (each is a whole replay).
        if k % 7 == 0 || k % interval <= 1 {
            let fresh = rebuild(&session, None, Some(k)).unwrap();
            assert_eq!(fingerprint(cursor.engine()), fingerprint(&fresh.engine), "back to input {k}");
            assert_eq!(cursor.events(), &recorded_events(&session, k)[..], "events back at input {k}");
            assert_eq!(cursor.totals(), fresh.totals);
        }
    }
    assert!(fine_seen > 1, "stepping back keeps fine checkpoints in the stretch");
    for _ in 0..interval + 5 {
        k += 1;
        cursor.seek(k);
        cursor.seek(k - 1);
        cursor.seek(k);
        if k % 5 == 0 {
            let fresh = rebuild(&session, None, Some(k)).unwrap();
            assert_eq!(fingerprint(cursor.engine()), fingerprint(&fresh.engine), "forward to input {k}");
            assert_eq!(cursor.events(), &recorded_events(&session, k)[..]);
        }
    }
}

/// A jump straight to a checkpoint and a step back from it replays less than one spacing
/// of inputs (the explorer's worst step back), and lands where a fresh rebuild does; so do
/// the steps back after it.
#[test]
fn a_step_back_after_a_jump_replays_less_than_one_spacing() {
    let dir = tempfile::tempdir().unwrap();
    let session = crate::runtime::bench::record_steered_session(&dir.path().join("jump.jsonl"), 400).unwrap();
    let mut cursor = ReplayCursor::new(&session, None).unwrap();
    let interval = cursor.interval();
    assert_eq!(interval, super::cursor::DEFAULT_INTERVAL);
    let total = cursor.total();
    assert!(total > 8 * interval, "{total} inputs");
    cursor.seek(total);
    for c in [5, 2, 8, 1, 7, 3] {
        let at = c * interval;
        cursor.seek(total);
        cursor.seek(at);
        for k in [at - 1, at - 2, at - interval / 2, at - interval + 1] {
            let before = cursor.applied();
            cursor.seek(k);
            let cost = cursor.applied() - before;
            assert!(cost < interval as u64, "back to input {k} from {}: {cost} inputs replayed", k + 1);
            let fresh = rebuild(&session, None, Some(k)).unwrap();
            assert_eq!(fingerprint(cursor.engine()), fingerprint(&fresh.engine), "back to input {k}");
            assert_eq!(cursor.events(), &recorded_events(&session, k)[..], "events back at input {k}");
            assert_eq!(cursor.totals(), fresh.totals, "totals back at input {k}");
        }
    }
}

/// Checkpoints are as close as `DEFAULT_INTERVAL` on a 100,000-node session, and wider
/// where that would take more than the budget (64 MB, each checkpoint holding about half
/// of the final tree and calls on average).
#[test]
fn checkpoint_spacing_follows_the_memory_budget() {
    use super::cursor::{interval_for, DEFAULT_INTERVAL};
    assert_eq!(interval_for(0, 0), DEFAULT_INTERVAL);
    assert_eq!(interval_for(3_830, 102_501), DEFAULT_INTERVAL);
    let estimate = |inputs: usize, nodes: usize| {
        let d = interval_for(inputs, nodes);
        (inputs / d) as f64 * (nodes + inputs * 48) as f64 / 2.0
    };
    for (inputs, nodes) in [(23_000, 610_000), (1_000_000, 10), (200_000, 5_000_000)] {
        assert!(interval_for(inputs, nodes) > DEFAULT_INTERVAL, "{inputs} inputs, {nodes} nodes");
        assert!(estimate(inputs, nodes) <= (64 << 20) as f64, "{inputs} inputs, {nodes} nodes");
    }
}

/// Events recorded per input, in input order.
fn events_per_input(session: &Session) -> Vec<usize> {
    let mut counts = vec![0; session.input_count()];
    let seqs: Vec<u64> = session
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Input { seq, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    for r in &session.records {
        if let Record::Event { seq, .. } = r {
            if let Ok(i) = seqs.binary_search(seq) {
                counts[i] += 1;
            }
        }
    }
    counts
}

/// Steps back one input at a time from a jump to the checkpoint after a heavy input (a
/// BFS selection dropping most candidates) to the checkpoint before it, then forward
/// again onto it: with heavy inputs kept, no step re-applies one (the heaviest input a
/// step applies is a light one) and each lands where a fresh rebuild does; without, some
/// steps re-apply them.
#[test]
fn a_step_back_past_a_heavy_input_re_applies_no_heavy_input() {
    let dir = tempfile::tempdir().unwrap();
    let session = crate::runtime::bench::record_sampled_session(&dir.path().join("heavy.jsonl"), 400).unwrap();
    let counts = events_per_input(&session);
    let interval = 16;
    // The heaviest inputs (the selections), as the cursor is told to count them.
    let heaviest = counts.iter().copied().max().unwrap();
    let threshold = heaviest / 2;
    let heavy: Vec<usize> =
        (0..counts.len()).filter(|&i| counts[i] >= threshold && (i + 1) % interval != 0).map(|i| i + 1).collect();
    assert!(threshold > 50 && !heavy.is_empty(), "heaviest input {heaviest} events, heavy at {heavy:?}");
    // The heaviest input (by recorded events) any step applied.
    let walk = |cursor: &mut ReplayCursor, check: bool| {
        let total = cursor.total();
        let mut worst = 0;
        let mut step = |cursor: &mut ReplayCursor, k: usize| {
            cursor.seek(k);
            worst = worst.max(cursor.heaviest_applied());
        };
        for &p in &heavy {
            let (low, high) = ((p / interval) * interval, ((p / interval + 1) * interval).min(total));
            cursor.seek(total);
            cursor.seek(high);
            for k in (low..high).rev() {
                step(cursor, k);
                if check && (k == p || k + 1 == p || k % 5 == 0) {
                    let fresh = rebuild(&session, None, Some(k)).unwrap();
                    assert_eq!(fingerprint(cursor.engine()), fingerprint(&fresh.engine), "back to input {k}");
                    assert_eq!(cursor.events(), &recorded_events(&session, k)[..], "events back at input {k}");
                }
            }
            // Forward onto the heavy input from just before it.
            cursor.seek(p - 1);
            step(cursor, p);
            if check {
                let fresh = rebuild(&session, None, Some(p)).unwrap();
                assert_eq!(fingerprint(cursor.engine()), fingerprint(&fresh.engine), "forward onto input {p}");
                assert_eq!(cursor.events(), &recorded_events(&session, p)[..]);
            }
        }
        worst
    };
    let mut kept = ReplayCursor::new(&session, None).unwrap().with_interval(interval).with_heavy_events(threshold);
    let worst = walk(&mut kept, true);
    assert!(worst < threshold, "a step past heavy inputs at {heavy:?} applied one of {worst} events");
    assert_eq!(kept.heavy_checkpoints(), heavy.len());
    let mut not_kept = ReplayCursor::new(&session, None).unwrap().with_interval(interval).with_heavy_events(usize::MAX);
    let worst = walk(&mut not_kept, false);
    assert!(worst >= threshold, "without heavy checkpoints a step re-applies one: {worst} events");
}
