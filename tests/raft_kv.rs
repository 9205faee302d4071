//! Raft key-value store: the correct system passes a sweep with every fault drawn; the
//! shallow planted bug is found by sweeping; the deep ones' sweep finds replay as found.

use acceptance::run;
use sim_core::choice::Input;
use sim_core::report::Class;
use sim_core::sim::for_each_seed;

fn spec() -> sim_core::system::SystemSpec {
    systems::raft_kv::SPEC
}

#[test]
fn the_correct_system_passes_every_seed() {
    for_each_seed(0..300, |seed| {
        let outcome = run(&spec(), None, false, &Input::Seed(seed));
        assert!(outcome.class.is_pass(), "seed {seed}: {outcome:?}");
    });
}

#[test]
fn a_stale_read_is_found_by_a_sweep_and_reported_as_not_linearizable() {
    let found = (0..600)
        .map(|seed| run(&spec(), Some("stale-read"), false, &Input::Seed(seed)))
        .find(|o| o.class == Class::Correctness)
        .expect("600 seeds find stale-read (it fails about one seed in a hundred)");
    assert_eq!(
        found.invariant.as_deref(),
        Some("linearizable"),
        "{found:?}"
    );
    assert!(
        found.message.contains("window") && found.message.contains("culprit"),
        "the message names the window: {}",
        found.message
    );
}

/// The deep bugs fail about once in several thousand seeds (ack-before-fsync and
/// commit-past-request once in tens of thousands): too many for a debug-build test to sweep. These are the first failing seeds of `sim sweep --system raft-kv --bug B`,
/// pinned so that a change which stops the failure (or moves it) is seen.
#[test]
fn the_deep_bugs_first_failing_seeds_still_fail_the_same_way() {
    for (bug, seed, invariant) in [
        ("ack-before-fsync", 888385, "leader-completeness"),
        ("old-term-commit", 7858, "leader-completeness"),
        ("vote-not-persisted", 18706, "election-safety"),
        ("commit-past-request", 21998, "state-machine-safety"),
    ] {
        let outcome = run(&spec(), Some(bug), false, &Input::Seed(seed));
        assert_eq!(
            outcome.invariant.as_deref(),
            Some(invariant),
            "{bug} seed {seed}: {outcome:?}"
        );
        let correct = run(&spec(), None, false, &Input::Seed(seed));
        assert!(correct.class.is_pass(), "correct, seed {seed}: {correct:?}");
    }
}

#[test]
fn runs_replay_exactly() {
    for seed in 0..20 {
        let first = run(&spec(), Some("stale-read"), false, &Input::Seed(seed));
        let again = run(&spec(), Some("stale-read"), false, &Input::Seed(seed));
        assert_eq!(first, again, "seed {seed}");
    }
}
