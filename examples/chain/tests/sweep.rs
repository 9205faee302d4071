//! Seed sweeps in `cargo test`. `DST_SEED=N cargo test` runs seed N alone (the line a failure
//! prints), with its trace.

use sim_core::choice::Input;
use sim_core::sim::for_each_seed;

#[test]
fn the_correct_chain_passes_every_seed() {
    let opts = chain::SPEC.options(None).unwrap();
    for_each_seed(0..1000, |seed| {
        let report = chain::SPEC.run(&opts, &Input::Seed(seed));
        assert!(
            report.outcome.class.is_pass(),
            "seed {seed}: {}",
            report.outcome.summary_line()
        );
    });
}
