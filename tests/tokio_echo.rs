//! The tokio echo (plain tokio on tokio nodes): the planted bug is found by a seed sweep, the
//! correct system passes, and a run replays bit for bit.

use acceptance::run;
use sim_core::choice::Input;
use sim_core::report::Class;
use sim_core::sim::for_each_seed;

fn spec() -> sim_core::system::SystemSpec {
    systems::all()
        .into_iter()
        .find(|s| s.name == "tokio-echo")
        .expect("tokio-echo is registered")
}

#[test]
fn the_correct_system_passes_every_seed() {
    let spec = spec();
    for_each_seed(0..200, |seed| {
        let outcome = run(&spec, None, false, &Input::Seed(seed));
        assert!(outcome.class.is_pass(), "seed {seed}: {outcome:?}");
    });
}

#[test]
fn a_sweep_finds_the_stale_reply_bug_and_it_replays() {
    let spec = spec();
    let found = (0..200)
        .find(|&seed| {
            run(
                &spec,
                Some("stale-reply-accepted"),
                false,
                &Input::Seed(seed),
            )
            .class
                == Class::Correctness
        })
        .expect("the planted bug is found within 200 seeds");
    let first = run(
        &spec,
        Some("stale-reply-accepted"),
        false,
        &Input::Seed(found),
    );
    let again = run(
        &spec,
        Some("stale-reply-accepted"),
        false,
        &Input::Seed(found),
    );
    assert_eq!(first, again);
    assert_eq!(first.invariant.as_deref(), Some("echo-is-exact"));
}
