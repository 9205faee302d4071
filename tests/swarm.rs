//! The swarm sweep (`--intensity swarm`): a fault profile drawn per seed, failures that
//! replay strictly from their repro files and their seeds, correct systems that stay clean,
//! and plain sweeps left as they were.

use std::path::Path;

use sim_core::choice::Input;
use sim_core::faults::Intensity;
use sim_core::sim::for_each_seed;
use sim_core::system::SystemSpec;

use acceptance::{key_value as value, scratch_dir as scratch, sim_cli as sim};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The history hash and class of one run of `spec` (with `bug`) on `seed` at `intensity`.
fn run_at(spec: &SystemSpec, bug: Option<&str>, seed: u64, intensity: Intensity) -> (u64, bool) {
    let mut opts = spec.options(bug).expect("known bug");
    opts.config.intensity = intensity;
    let outcome = spec.run(&opts, &Input::Seed(seed)).outcome;
    (outcome.history_hash, outcome.class.is_failure())
}

#[test]
fn a_swarm_sweep_failure_replays_strictly_from_its_repro_file_and_its_seed() {
    let dir = scratch("swarm-replay");
    let (code, out) = sim(&[
        "sweep",
        "--system",
        "registry",
        "--bug",
        "partial-batch",
        "--intensity",
        "swarm",
        "--until-first",
        "--jobs",
        "1",
        "--seeds",
        "0..2000",
        "--failures-dir",
        s(&dir),
    ]);
    assert_eq!(code, 1, "the swarm sweep finds the planted bug: {out}");
    let seed = value(&out, "first_failure_seed").expect("a first failing seed");
    let replay = out
        .lines()
        .find(|l| l.starts_with("replay="))
        .unwrap_or_else(|| panic!("a replay line: {out}"));
    assert!(
        replay.contains(&format!("--intensity swarm --seed {seed}")),
        "the replay line names the intensity: {replay}"
    );
    let repro = dir.join(format!(
        "registry-partial-batch-intensity-swarm-seed-{seed}.repro.json"
    ));
    let text = std::fs::read_to_string(&repro).expect("the repro file is written");
    assert!(text.contains("\"intensity\": \"swarm\""), "{text}");
    let (code, replayed) = sim(&["replay", s(&repro)]);
    assert_eq!(code, 1, "{replayed}");
    assert_eq!(value(&replayed, "strict").as_deref(), Some("true"));
    let pinned = value(&replayed, "pinned_history_hash").expect("the pinned hash");
    let rerun = |intensity: &[&str]| {
        let mut args = vec![
            "run",
            "--system",
            "registry",
            "--bug",
            "partial-batch",
            "--seed",
            seed.as_str(),
            "--failures-dir",
            s(&dir),
        ];
        args.extend_from_slice(intensity);
        let (_, out) = sim(&args);
        value(&out, "history_hash").expect("a summary line")
    };
    assert_eq!(rerun(&["--intensity", "swarm"]), pinned);
    assert_ne!(
        rerun(&[]),
        pinned,
        "the same seed without the flag is another run"
    );
}

#[test]
fn an_unknown_intensity_is_refused_with_the_valid_ones() {
    let (code, _) = sim(&[
        "sweep",
        "--system",
        "two-pc",
        "--intensity",
        "x8",
        "--seeds",
        "0..1",
    ]);
    assert_eq!(code, 2);
    assert!("x8"
        .parse::<Intensity>()
        .unwrap_err()
        .to_string()
        .contains("use 1 (every fault at the odds its scenario sets, the default) or swarm"));
}

/// Every seed of a swarm sweep is the same run every time, whatever ran before it on the
/// thread, and differs from the plain run of the same seed.
#[test]
fn a_swarm_seed_is_a_pure_function_of_the_seed() {
    let spec = systems::wal::SPEC;
    let forward: Vec<(u64, bool)> = (0..40)
        .map(|seed| run_at(&spec, None, seed, Intensity::Swarm))
        .collect();
    let backward: Vec<(u64, bool)> = (0..40)
        .rev()
        .map(|seed| run_at(&spec, None, seed, Intensity::Swarm))
        .collect();
    assert!(forward.iter().eq(backward.iter().rev()));
    let plain: Vec<u64> = (0..40)
        .map(|seed| run_at(&spec, None, seed, Intensity::Configured).0)
        .collect();
    assert!(forward
        .iter()
        .zip(&plain)
        .all(|((swarm, _), plain)| swarm != plain));
}

/// The correct systems pass swarm seeds as they pass plain ones, in `for_each_seed` as a
/// test writes it (`DST_SEED=N` replays one).
#[test]
fn the_correct_systems_pass_every_swarm_seed() {
    for (spec, seeds) in [
        (systems::two_pc::SPEC, 0..300),
        (systems::registry::SPEC, 0..150),
        (systems::wal::SPEC, 0..150),
        (systems::echo::SPEC, 0..150),
    ] {
        for_each_seed(seeds, |seed| {
            let (_, failed) = run_at(&spec, None, seed, Intensity::Swarm);
            assert!(!failed, "{} failed swarm seed {seed}", spec.name);
        });
    }
}
