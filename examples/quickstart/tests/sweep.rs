//! Seed sweeps in `cargo test`. `DST_SEED=N cargo test` runs seed N alone (the line a failure
//! prints), with its trace.

use sim_core::choice::Input;
use sim_core::sim::for_each_seed;

#[test]
fn the_correct_register_passes_every_seed() {
    let opts = quickstart::SPEC.options(None).unwrap();
    for_each_seed(0..2000, |seed| {
        let report = quickstart::SPEC.run(&opts, &Input::Seed(seed));
        assert!(
            report.outcome.class.is_pass(),
            "seed {seed}: {}",
            report.outcome.summary_line()
        );
    });
}

#[test]
fn the_planted_bug_is_found_by_a_sweep() {
    let opts = quickstart::SPEC
        .options(Some("ack-before-replicate"))
        .unwrap();
    let failing: Vec<u64> = (0..2000)
        .filter(|&seed| {
            quickstart::SPEC
                .run(&opts, &Input::Seed(seed))
                .outcome
                .class
                .is_failure()
        })
        .collect();
    assert!(
        !failing.is_empty(),
        "no seed of 2,000 found ack-before-replicate"
    );
}
