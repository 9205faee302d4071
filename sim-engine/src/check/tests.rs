//! Known histories, linearizable or not. Each non-trivial test was seen to fail with the
//! search broken on purpose, one way at a time: no backtracking (give up at the first
//! return reached); real time ignored (every call sorted first); indeterminate operations
//! dropped; the memo keyed without the model state; a search that runs out of choices
//! reading as success; every operation in one partition.

use super::kv::{Kv, KvInput, KvOutput};
use super::{linearizable, linearizable_within, CheckError, Limits, OpLog};

type Log = OpLog<KvInput, KvOutput>;

fn get(key: u64) -> KvInput {
    KvInput::Get { key }
}
fn put(key: u64, value: u64) -> KvInput {
    KvInput::Put { key, value }
}
fn cas(key: u64, from: u64, to: u64) -> KvInput {
    KvInput::Cas { key, from, to }
}
fn val(v: Option<u64>) -> KvOutput {
    KvOutput::Value(v)
}

/// One operation that runs alone: call, then return.
fn alone(log: &mut Log, client: &str, input: KvInput, output: KvOutput) {
    let op = log.call(client, input);
    log.ret(op, output);
}

fn violation(log: &Log) -> super::Violation {
    match linearizable(&Kv, log) {
        Err(CheckError::NotLinearizable(v)) => v,
        other => panic!("expected a violation, got {other:?} for {log:?}"),
    }
}

#[test]
fn sequential_history_that_reads_its_writes_is_linearizable() {
    let mut log = Log::new();
    alone(&mut log, "a", get(1), val(None));
    alone(&mut log, "a", put(1, 5), KvOutput::Done);
    alone(&mut log, "b", get(1), val(Some(5)));
    alone(&mut log, "b", cas(1, 5, 6), KvOutput::Swapped(true));
    alone(&mut log, "a", cas(1, 5, 7), KvOutput::Swapped(false));
    alone(&mut log, "a", get(1), val(Some(6)));
    assert_eq!(linearizable(&Kv, &log), Ok(()));
}

#[test]
fn a_read_after_a_completed_write_that_misses_it_is_not_linearizable() {
    let mut log = Log::new();
    alone(&mut log, "a", put(1, 5), KvOutput::Done);
    alone(&mut log, "b", get(1), val(None));
    let v = violation(&log);
    assert_eq!(v.partition, 1);
    assert_eq!(v.culprit, 1, "the stale read is the culprit: {v}");
    assert_eq!(v.window.len(), 2, "the write it missed, and the read: {v}");
    assert!(v.minimal, "{v}");
    let text = v.to_string();
    assert!(
        text.contains("Get { key: 1 } -> Value(None) <- culprit"),
        "{text}"
    );
}

#[test]
fn a_read_concurrent_with_a_write_may_see_either_value() {
    for seen in [None, Some(5)] {
        let mut log = Log::new();
        let w = log.call("a", put(1, 5));
        let r = log.call("b", get(1));
        log.ret(r, val(seen));
        log.ret(w, KvOutput::Done);
        assert_eq!(linearizable(&Kv, &log), Ok(()), "read saw {seen:?}");
    }
}

#[test]
fn reads_that_see_a_write_then_the_old_value_are_not_linearizable() {
    // Two reads concurrent with a write, one after the other: new, then old, is impossible.
    let mut log = Log::new();
    alone(&mut log, "a", put(1, 1), KvOutput::Done);
    let w = log.call("a", put(1, 2));
    alone(&mut log, "b", get(1), val(Some(2)));
    alone(&mut log, "c", get(1), val(Some(1)));
    log.ret(w, KvOutput::Done);
    let v = violation(&log);
    assert_eq!(v.culprit, 3, "{v}");
}

#[test]
fn a_history_whose_only_linearization_needs_backtracking_passes() {
    // put(1) and put(2) overlap; a later read sees 1, so put(2) must go first. The search
    // tries put(1) first (it was called first) and must undo that choice.
    let mut log = Log::new();
    let a = log.call("a", put(1, 1));
    let b = log.call("b", put(1, 2));
    log.ret(a, KvOutput::Done);
    log.ret(b, KvOutput::Done);
    alone(&mut log, "c", get(1), val(Some(1)));
    assert_eq!(linearizable(&Kv, &log), Ok(()));
}

#[test]
fn backtracking_that_runs_out_of_choices_fails() {
    // Three overlapping writes, then reads of 1 and of 3 in sequence: once 3 is read, nothing
    // can bring back 1... unless 1 was last. Reading 3 then 1 is impossible.
    let mut log = Log::new();
    let ops: Vec<_> = (1..=3).map(|v| log.call("w", put(1, v))).collect();
    for op in ops {
        log.ret(op, KvOutput::Done);
    }
    alone(&mut log, "r", get(1), val(Some(3)));
    alone(&mut log, "r", get(1), val(Some(1)));
    let v = violation(&log);
    assert_eq!(v.culprit, 4, "{v}");
}

#[test]
fn a_timed_out_write_may_take_effect_later() {
    let mut log = Log::new();
    let w = log.call("a", put(1, 5));
    log.time_out(w);
    alone(&mut log, "b", get(1), val(None));
    alone(&mut log, "b", get(1), val(Some(5)));
    assert_eq!(linearizable(&Kv, &log), Ok(()));
}

#[test]
fn a_timed_out_write_may_never_take_effect() {
    let mut log = Log::new();
    let w = log.call("a", put(1, 5));
    log.time_out(w);
    alone(&mut log, "b", get(1), val(None));
    assert_eq!(linearizable(&Kv, &log), Ok(()));
}

#[test]
fn a_timed_out_write_cannot_take_effect_before_it_started() {
    let mut log = Log::new();
    alone(&mut log, "b", get(1), val(Some(5)));
    let w = log.call("a", put(1, 5));
    log.time_out(w);
    let v = violation(&log);
    assert_eq!(v.culprit, 0, "{v}");
    // The failing prefix ends with the read, before the write was called: the read alone.
    assert_eq!(v.window.len(), 1, "{v}");
}

#[test]
fn a_timed_out_write_cannot_take_effect_twice() {
    // 5 appears, is overwritten by 6, then appears again: one write of 5 cannot do that.
    let mut log = Log::new();
    let w = log.call("a", put(1, 5));
    log.time_out(w);
    alone(&mut log, "b", get(1), val(Some(5)));
    alone(&mut log, "b", put(1, 6), KvOutput::Done);
    alone(&mut log, "b", get(1), val(Some(5)));
    let v = violation(&log);
    assert_eq!(v.culprit, 3, "{v}");
}

#[test]
fn a_timed_out_compare_and_set_explains_a_later_read_and_needs_backtracking() {
    // The timed-out cas must be placed after put(1, 1) and before the read of 2.
    let mut log = Log::new();
    let c = log.call("a", cas(1, 1, 2));
    log.time_out(c);
    alone(&mut log, "b", put(1, 1), KvOutput::Done);
    alone(&mut log, "b", get(1), val(Some(2)));
    assert_eq!(linearizable(&Kv, &log), Ok(()));
}

#[test]
fn two_compare_and_sets_from_one_value_cannot_both_win() {
    let mut log = Log::new();
    alone(&mut log, "a", put(1, 0), KvOutput::Done);
    let x = log.call("a", cas(1, 0, 1));
    let y = log.call("b", cas(1, 0, 2));
    log.ret(x, KvOutput::Swapped(true));
    log.ret(y, KvOutput::Swapped(true));
    violation(&log);
}

#[test]
fn keys_are_checked_apart_and_the_failing_key_is_named() {
    let mut log = Log::new();
    alone(&mut log, "a", put(1, 1), KvOutput::Done);
    alone(&mut log, "a", put(2, 1), KvOutput::Done);
    alone(&mut log, "b", get(1), val(Some(1)));
    alone(&mut log, "b", get(2), val(Some(7)));
    let v = violation(&log);
    assert_eq!(v.partition, 2, "{v}");
    assert!(v.window.iter().all(|o| o.input.contains("key: 2")), "{v}");
}

#[test]
fn the_window_is_the_few_operations_that_fail_not_the_whole_history() {
    let mut log = Log::new();
    for v in 0..200 {
        alone(&mut log, "a", put(1, v), KvOutput::Done);
        alone(&mut log, "b", get(1), val(Some(v)));
    }
    alone(&mut log, "a", put(1, 1000), KvOutput::Done);
    alone(&mut log, "b", get(1), val(Some(199)));
    for v in 0..50 {
        alone(&mut log, "a", put(1, v), KvOutput::Done);
    }
    let v = violation(&log);
    assert_eq!(v.culprit, 401, "{v}");
    assert_eq!(v.prefix_ops, 402, "{v}");
    assert!(v.minimal, "{v}");
    let shown: Vec<usize> = v.window.iter().map(|o| o.index).collect();
    assert_eq!(
        shown,
        [398, 400, 401],
        "put 199, put 1000, then the read of 199: {v}"
    );
    assert_eq!(
        v.span_ns(),
        (v.window[0].call_ns, v.window[2].return_ns.unwrap())
    );
}

#[test]
fn an_empty_or_all_timed_out_history_is_linearizable() {
    let mut log = Log::new();
    assert_eq!(linearizable(&Kv, &log), Ok(()));
    let a = log.call("a", put(1, 1));
    let b = log.call("b", get(1));
    log.time_out(a);
    log.time_out(b);
    assert_eq!(linearizable(&Kv, &log), Ok(()));
}

#[test]
fn limits_are_reported_as_undecided_never_as_a_verdict() {
    let mut log = Log::new();
    for v in 0..10 {
        alone(&mut log, "a", put(1, v), KvOutput::Done);
    }
    let tight = Limits {
        budget_steps: 3,
        ..Limits::default()
    };
    assert!(matches!(
        linearizable_within(&Kv, &log, tight),
        Err(CheckError::OutOfBudget {
            partition: 1,
            ops: 10,
            ..
        })
    ));
    let short = Limits {
        ops_max: 4,
        ..Limits::default()
    };
    assert!(matches!(
        linearizable_within(&Kv, &log, short),
        Err(CheckError::TooLong {
            partition: 1,
            ops: 10,
            ops_max: 4
        })
    ));
}

#[test]
fn many_concurrent_clients_with_timeouts_stay_cheap() {
    // Ten clients always overlapping, a third of their writes timed out: the memo keeps the
    // search small (a budget far below 2^10 per step would trip without it).
    let mut log = Log::new();
    let mut value = 0u64;
    let mut current: Option<u64> = None;
    for round in 0..50u64 {
        let ops: Vec<_> = (0..10)
            .map(|c| {
                value += 1;
                (log.call(&format!("c{c}"), put(1, value)), value)
            })
            .collect();
        for (i, (op, v)) in ops.into_iter().enumerate() {
            if (round + i as u64) % 3 == 0 {
                log.time_out(op);
            } else {
                log.ret(op, KvOutput::Done);
                current = Some(v);
            }
        }
        let r = log.call("r", get(1));
        log.ret(r, val(current));
    }
    let limits = Limits {
        budget_steps: 200_000,
        ..Limits::default()
    };
    assert_eq!(linearizable_within(&Kv, &log, limits), Ok(()));
}

#[test]
fn inside_a_run_the_log_writes_operation_marks_and_virtual_times() {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use crate::sim::{Config, Sim};
    use crate::trace::{EventKind, Recording};

    let log = Rc::new(RefCell::new(Log::new()));
    let mut sim = Sim::new(Config {
        recording: Recording::Full,
        ..Config::default()
    });
    let l = log.clone();
    sim.client("c1", move |_| {
        let l = l.clone();
        async move {
            let op = l.borrow_mut().call("c1", put(1, 1));
            crate::time::sleep(Duration::from_millis(3)).await;
            l.borrow_mut().ret(op, KvOutput::Done);
            let late = l.borrow_mut().call("c1", get(1));
            l.borrow_mut().time_out(late);
        }
    });
    let report = sim.run_seed(0);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let marks: Vec<&str> = report
        .history
        .events()
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                EventKind::OpStart { .. } | EventKind::OpResult { .. }
            )
        })
        .map(|e| e.kind.name())
        .collect();
    assert_eq!(marks, ["op", "result", "op", "result"]);
    let log = log.borrow();
    assert_eq!(log.ops()[0].return_ns, Some(3_000_000));
    assert!(log.ops()[1].is_indeterminate());
    assert_eq!(linearizable(&Kv, &log), Ok(()));
}
