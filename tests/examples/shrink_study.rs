//! How well the shrinker reduces long failures (the figures in `sim_core::shrink`'s module
//! docs). Uninstrumented, in process, default faults on.
//!
//!     cargo run --release -p acceptance --example shrink_study
//!     cargo run --release -p acceptance --example shrink_study -- scan SYSTEM BUG FROM TO
//!
//! * Default: shrinks each failure of [`LONG_FAILURES`] (every one at least 1,000 events and
//!   6 operations long) with the default budget (10,000 candidate runs) and prints one
//!   `key=value` line per failure, then a summary line with the medians: events after over
//!   before, operations after, candidate runs and milliseconds per shrink (and per system, the
//!   median events ratio and operations after). `ONLY=N` shrinks
//!   only the N-th failure of the list (from 0); `MAX_RUNS=N` sets the run budget.
//! * `scan SYSTEM BUG FROM TO`: runs seeds `FROM..TO` and lists the failures at least
//!   `MIN_EVENTS` (1,000) events and `MIN_OPS` (6) operations long: how the list was found.

use std::collections::BTreeMap;
use std::time::Instant;

use sim_core::choice::Input;
use sim_core::shrink::Shrinker;
use sim_core::system::{self, SystemSpec};
use sim_core::trace::EventKind;

/// Long failures with the default faults: (system, bug, seed), each at least 1,000 events
/// and 6 operations long. Per bug, the seeds the shrinking issue named where they are that
/// long, then the first ones `scan` lists from seed 0 (raft-kv's rarer bugs: from
/// 100,000,000, the first 300,000 seeds); `no-heartbeat` has one in its first 400,000 seeds.
const LONG_FAILURES: &[(&str, &str, u64)] = &[
    ("raft-kv", "stale-read", 456),
    ("raft-kv", "stale-read", 518),
    ("raft-kv", "commit-past-request", 21998),
    ("raft-kv", "commit-past-request", 100_025_108),
    ("raft-kv", "old-term-commit", 7858),
    ("raft-kv", "old-term-commit", 100_004_812),
    ("raft-kv", "vote-not-persisted", 100_023_464),
    ("raft-kv", "vote-not-persisted", 100_053_757),
    ("raft-kv", "ack-before-fsync", 100_022_177),
    ("raft-kv", "ack-before-fsync", 100_222_918),
    ("registry", "partial-batch", 462),
    ("registry", "partial-batch", 634),
    ("registry", "no-heartbeat", 20331),
    ("registry", "reply-reinsert", 4310),
    ("registry", "reply-reinsert", 5942),
];

fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| v.parse().expect("a number"))
}

fn spec(name: &str) -> SystemSpec {
    let specs = systems::all();
    *system::find(&specs, name).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    })
}

/// The run's outcome and its workload operations.
fn measure(spec: &SystemSpec, bug: &str, seed: u64) -> (sim_core::report::Outcome, usize) {
    let opts = spec.options(Some(bug)).expect("a known bug");
    let report = spec.run_traced(&opts, &Input::Seed(seed));
    let ops = report
        .history
        .events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::OpStart { .. }))
        .count();
    (report.outcome, ops)
}

fn scan(args: &[String]) {
    let (system, bug) = (args[0].as_str(), args[1].as_str());
    let from: u64 = args[2].parse().expect("FROM is a number");
    let to: u64 = args[3].parse().expect("TO is a number");
    let (min_events, min_ops) = (knob("MIN_EVENTS", 1_000), knob("MIN_OPS", 6) as usize);
    let spec = spec(system);
    for seed in from..to {
        let (outcome, ops) = measure(&spec, bug, seed);
        if outcome.class.is_failure() && outcome.steps >= min_events && ops >= min_ops {
            println!(
                "system={system} bug={bug} seed={seed} events={} ops={ops} {}",
                outcome.steps,
                outcome.failure_class()
            );
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("scan") {
        if args.len() < 5 {
            eprintln!("usage: shrink_study scan SYSTEM BUG FROM TO");
            std::process::exit(2);
        }
        return scan(&args[1..]);
    }
    let max_runs = knob("MAX_RUNS", 10_000);
    let only = std::env::var("ONLY")
        .ok()
        .map(|v| v.parse::<usize>().expect("ONLY is an index"));
    let (mut ratios, mut ops_after, mut runs, mut ms) = (vec![], vec![], vec![], vec![]);
    // Per system: events ratios and operations after.
    let mut by_system: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (i, &(system, bug, seed)) in LONG_FAILURES.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let spec = spec(system);
        let opts = spec.options(Some(bug)).expect("a known bug");
        let started = Instant::now();
        let shrinker = if spec.thread_per_run {
            Shrinker::thread_per_run(|| (spec.build)(&opts))
        } else {
            Shrinker::new(|| (spec.build)(&opts))
        };
        let shrunk = shrinker
            .max_runs(max_runs)
            .run(&Input::Seed(seed))
            .expect("a failing seed");
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let (before, after) = (shrunk.outcome_before.steps, shrunk.outcome.steps);
        println!(
            "system={system} bug={bug} seed={seed} events_before={before} events_after={after} \
             ops_before={} ops_after={} bytes_before={} bytes_after={} runs={} shrink_ms={elapsed_ms} \
             verified={} failure={}",
            shrunk.ops_before,
            shrunk.ops_after,
            shrunk.bytes_before.len(),
            shrunk.bytes.len(),
            shrunk.runs,
            shrunk.verified,
            shrunk.outcome.failure_class()
        );
        ratios.push(after as f64 / before as f64);
        ops_after.push(shrunk.ops_after as f64);
        let system_figures = by_system.entry(system).or_default();
        system_figures.0.push(after as f64 / before as f64);
        system_figures.1.push(shrunk.ops_after as f64);
        runs.push(shrunk.runs as f64);
        ms.push(elapsed_ms as f64);
    }
    if ratios.is_empty() {
        return;
    }
    for (system, (mut system_ratios, mut system_ops)) in by_system {
        println!(
            "system={system} failures={} median_events_ratio={:.3} median_ops_after={}",
            system_ratios.len(),
            median(&mut system_ratios),
            median(&mut system_ops)
        );
    }
    let worst_ratio = ratios.iter().copied().fold(0.0, f64::max);
    let worst_ms = ms.iter().copied().fold(0.0, f64::max);
    println!(
        "failures={} median_events_ratio={:.3} worst_events_ratio={:.3} median_ops_after={} \
         median_runs={} median_shrink_ms={} worst_shrink_ms={worst_ms}",
        ratios.len(),
        median(&mut ratios),
        worst_ratio,
        median(&mut ops_after),
        median(&mut runs),
        median(&mut ms),
    );
}
