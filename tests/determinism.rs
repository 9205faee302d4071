//! Determinism: a run is a pure function of its input, and the checks that say so can fail.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use acceptance::{run, two_pc};
use sim_core::choice::Input;
use sim_core::net::{Addr, Socket};
use sim_core::sim::{Config, Sim};
use sim_core::trace::Recording;

#[test]
fn one_input_run_1000_times_gives_one_history_hash() {
    let spec = two_pc();
    for input in [
        Input::Seed(7),
        Input::Bytes(vec![9, 200, 3, 17, 0, 255, 42, 8, 1, 1, 1]),
    ] {
        let hashes: BTreeSet<u64> = (0..1000)
            .map(|_| run(&spec, Some("first-vote-wins"), false, &input).history_hash)
            .collect();
        assert_eq!(
            hashes.len(),
            1,
            "input {input} gave {} different histories",
            hashes.len()
        );
    }
}

#[test]
fn forty_seeds_give_forty_distinct_histories_on_the_correct_system() {
    let spec = two_pc();
    let outcomes: Vec<_> = (0..40)
        .map(|s| run(&spec, None, false, &Input::Seed(s)))
        .collect();
    assert!(
        outcomes.iter().all(|o| o.class.is_pass()),
        "the correct 2PC must pass: {outcomes:?}"
    );
    let hashes: BTreeSet<u64> = outcomes.iter().map(|o| o.history_hash).collect();
    assert_eq!(hashes.len(), 40, "seeds should explore different schedules");
}

#[test]
fn recording_the_trace_does_not_change_the_hash() {
    let spec = two_pc();
    for seed in 0..20 {
        let mut opts = spec.options(Some("first-vote-wins")).unwrap();
        let quiet = spec.run(&opts, &Input::Seed(seed)).outcome;
        opts.config.recording = Recording::Full;
        let report = spec.run(&opts, &Input::Seed(seed));
        assert_eq!(quiet, report.outcome, "seed {seed}");
        assert_eq!(report.history.events().len() as u64, report.outcome.steps);
    }
}

/// A scenario that leaks state between runs through a global: the hash check must see it.
/// This is the determinism test's own control: it proves the comparison has the power to fail.
#[test]
fn a_nondeterministic_scenario_is_caught_by_comparing_hashes() {
    static LEAK: AtomicU64 = AtomicU64::new(0);
    let scenario = || {
        let mut sim = Sim::new(Config::default());
        sim.node("server", |_| async {
            let sock = Socket::<u64>::bind(1).unwrap();
            loop {
                let (from, n) = sock.recv().await;
                sock.send(from, n);
            }
        });
        sim.client("client", |_| async {
            let sock = Socket::<u64>::bind(1).unwrap();
            // Nondeterminism on purpose: how many messages depends on earlier runs.
            let count = LEAK.fetch_add(1, Ordering::Relaxed) % 3 + 1;
            for n in 0..count {
                sock.send(Addr::named("server", 1), n);
                sock.recv().await;
            }
        });
        sim
    };
    let a = scenario().run_seed(1).outcome.history_hash;
    let b = scenario().run_seed(1).outcome.history_hash;
    assert_ne!(
        a, b,
        "a run that reads outside state must not look deterministic"
    );
}

#[test]
fn a_seed_saved_as_bytes_replays_the_same_history() {
    let spec = two_pc();
    for seed in 0..50 {
        let opts = spec.options(Some("first-vote-wins")).unwrap();
        let (report, bytes) = (spec.build)(&opts).run_encoded(&Input::Seed(seed));
        let replay = spec.run(&opts, &Input::Bytes(bytes.clone()));
        assert_eq!(
            report.outcome.history_hash,
            replay.outcome.history_hash,
            "seed {seed} via {} bytes",
            bytes.len()
        );
        assert_eq!(report.outcome.class, replay.outcome.class);
    }
}
