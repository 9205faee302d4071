//! The echo-over-streams system: the correct server passes with every network fault
//! available, the planted half-close bug is found by a seed sweep, and the sweep is not
//! vacuous (exchanges succeed, and faults happen).

use sim_core::choice::Input;
use sim_core::net::{FaultProfile, Faults};
use sim_core::system::SystemSpec;

fn echo() -> SystemSpec {
    systems::echo::SPEC
}

#[test]
fn the_correct_echo_passes_every_seed_with_swarm_faults() {
    let spec = echo();
    let opts = spec.options(None).unwrap();
    for seed in 0..300 {
        let o = spec.run(&opts, &Input::Seed(seed)).outcome;
        assert!(o.class.is_pass(), "seed {seed}: {o:?}");
    }
}

#[test]
fn the_correct_echo_passes_with_every_fault_at_full_rate() {
    let spec = echo();
    let mut opts = spec.options(None).unwrap();
    opts.faults = Some(Faults::Fixed(FaultProfile::EVERYTHING));
    for seed in 0..200 {
        let o = spec.run(&opts, &Input::Seed(seed)).outcome;
        assert!(o.class.is_pass(), "seed {seed}: {o:?}");
    }
}

#[test]
fn the_half_close_bug_is_found_by_a_seed_sweep() {
    let spec = echo();
    let opts = spec.options(Some("half-close-drops-reply")).unwrap();
    let failing: Vec<u64> = (0..100)
        .filter(|&s| spec.run(&opts, &Input::Seed(s)).outcome.class.is_failure())
        .collect();
    assert!(
        !failing.is_empty(),
        "the planted bug should be found in 100 seeds"
    );
    let o = spec.run(&opts, &Input::Seed(failing[0])).outcome;
    assert_eq!(o.invariant.as_deref(), Some("echo-is-exact"), "{o:?}");
    // Without faults too: the bug needs no network fault, only TCP's half-close.
    let mut quiet = opts.clone();
    quiet.faults = Some(Faults::Fixed(FaultProfile::NONE));
    assert!((0..100).any(|s| spec.run(&quiet, &Input::Seed(s)).outcome.class.is_failure()));
}

#[test]
fn the_sweep_is_not_vacuous() {
    let spec = echo();
    let opts = spec.options(None).unwrap();
    let (mut ok, mut failed, mut resets, mut holds) = (0, 0, 0, 0);
    for seed in 0..100 {
        let report = spec.run_traced(&opts, &Input::Seed(seed));
        for e in report.history.events() {
            match e.kind.name() {
                "result" if e.detail.contains("Ok(") => ok += 1,
                "result" => failed += 1,
                "reset" => resets += 1,
                "hold" => holds += 1,
                _ => {}
            }
        }
    }
    assert!(
        ok > failed,
        "most exchanges should succeed: {ok} ok, {failed} failed"
    );
    assert!(
        failed > 0 && resets > 0 && holds > 0,
        "faults should bite: {failed} failed, {resets} resets, {holds} holds"
    );
    eprintln!("echo, 100 seeds: {ok} exchanges ok, {failed} failed by faults, {resets} resets, {holds} holds");
}
