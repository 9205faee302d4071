//! Two-phase commit: the planted bug is found by exploring schedules; the correct system passes.

use std::collections::BTreeMap;

use acceptance::{run, two_pc};
use sim_core::choice::{Input, Seeded, Source};
use sim_core::report::Class;
use sim_core::sim::for_each_seed;

#[test]
fn pinned_workload_fails_on_some_schedules_and_not_others_reproducibly() {
    let spec = two_pc();
    let mut by_class: BTreeMap<Class, Vec<u64>> = BTreeMap::new();
    for seed in 0..60 {
        let first = run(&spec, Some("first-vote-wins"), true, &Input::Seed(seed));
        let again = run(&spec, Some("first-vote-wins"), true, &Input::Seed(seed));
        assert_eq!(first, again, "seed {seed} must reproduce exactly");
        by_class.entry(first.class).or_default().push(seed);
    }
    let failing = by_class.get(&Class::Correctness).map_or(0, Vec::len);
    let passing = by_class.get(&Class::Pass).map_or(0, Vec::len);
    assert!(
        failing > 0 && passing > 0,
        "same workload, different schedules, different outcomes: {by_class:?}"
    );
    assert_eq!(
        failing + passing,
        60,
        "only pass or atomicity violations expected: {by_class:?}"
    );
}

#[test]
fn the_correct_system_passes_every_seed() {
    let spec = two_pc();
    for_each_seed(0..500, |seed| {
        for pinned in [false, true] {
            let outcome = run(&spec, None, pinned, &Input::Seed(seed));
            assert!(
                outcome.class.is_pass(),
                "seed {seed} pinned={pinned}: {outcome:?}"
            );
        }
    });
}

#[test]
fn the_planted_bug_is_found_by_a_seed_sweep() {
    let spec = two_pc();
    let failing: Vec<u64> = (0..200)
        .filter(|&s| {
            run(&spec, Some("first-vote-wins"), false, &Input::Seed(s)).class == Class::Correctness
        })
        .collect();
    assert!(
        !failing.is_empty(),
        "200 seeds should find the first-vote-wins bug"
    );
}

/// Any byte buffer is a valid input: the correct system passes on all of them, and the
/// harness never panics (a panic here would abort this test).
#[test]
fn any_byte_buffer_is_a_valid_input() {
    let spec = two_pc();
    let mut rng = Seeded::new(1234);
    let mut buffers: Vec<Vec<u8>> = vec![
        Vec::new(),
        vec![0],
        vec![255; 1],
        vec![255; 4096],
        vec![0; 100_000],
    ];
    let mut big = vec![0u8; 1 << 20];
    rng.fill("test", &mut big);
    buffers.push(big);
    for len in (0..300).map(|i| i * 7) {
        let mut b = vec![0u8; len];
        rng.fill("test", &mut b);
        buffers.push(b);
    }
    for (i, bytes) in buffers.into_iter().enumerate() {
        let input = Input::Bytes(bytes);
        let correct = run(&spec, None, false, &input);
        assert!(
            correct.class.is_pass(),
            "buffer {i}: the correct system must pass: {correct:?}"
        );
        let buggy = run(&spec, Some("first-vote-wins"), false, &input);
        assert!(
            matches!(buggy.class, Class::Pass | Class::Correctness),
            "buffer {i}: {buggy:?}"
        );
    }
}

/// Two-phase commit runs with every network fault available: the correct protocol (votes
/// deduplicated by voter, a duplicated Begin ignored, participants in doubt asking for the
/// decision) passes every check under a drawn fault profile and under all faults at once,
/// and the planted bug is still found.
#[test]
fn the_correct_system_passes_under_network_faults() {
    use sim_core::net::{FaultProfile, Faults};
    let spec = two_pc();
    for faults in [Faults::Swarm, Faults::Fixed(FaultProfile::EVERYTHING)] {
        let mut opts = spec.options(None).unwrap();
        opts.faults = Some(faults);
        let mut buggy = spec.options(Some("first-vote-wins")).unwrap();
        buggy.faults = Some(faults);
        let mut found = 0;
        for_each_seed(0..400, |seed| {
            let outcome = spec.run(&opts, &Input::Seed(seed)).outcome;
            assert!(
                outcome.class.is_pass(),
                "{faults:?} seed {seed}: {outcome:?}"
            );
            found +=
                u32::from(spec.run(&buggy, &Input::Seed(seed)).outcome.class == Class::Correctness);
        });
        assert!(
            found > 0 || std::env::var("DST_SEED").is_ok(),
            "{faults:?}: the bug should be found"
        );
    }
}
