//! The correct systems pass every seed, as 16 tests of one slice each, so a test runner that
//! splits tests across machines splits the seeds too:
//!
//! ```sh
//! # machine I of N (I = 1..N): a 16th of the seeds per test, tests divided among machines
//! SIM_SWEEP_SEEDS=1000000 cargo nextest run -p acceptance --test sweep_slices --partition count:I/N
//! ```
//!
//! `SIM_SWEEP_SEEDS` (default 320, so `cargo test` stays quick) is the number of seeds in
//! all; slice `k` runs the seeds `k, k + 16, ...` (the shard `k/16` of `sim sweep`), each on
//! one world. A failure names its seed and replay command.

use std::sync::atomic::AtomicBool;

use sim_core::campaign::{Campaign, Shard};
use sim_core::run_spec::{RunFlags, Variant};

const SLICES: u64 = 16;

fn sweep_slice(index: u64) {
    let seeds: u64 = std::env::var("SIM_SWEEP_SEEDS")
        .ok()
        .map_or(320, |s| s.parse().expect("SIM_SWEEP_SEEDS is a number"));
    let shard = Shard {
        index,
        count: SLICES,
    };
    let stop = AtomicBool::new(false);
    for system in systems::all() {
        let variant = Variant::new(&system, None, RunFlags::default()).unwrap();
        let tally = Campaign::new(&variant, 0..seeds, shard, 1).run(&stop, |_| {});
        assert_eq!(tally.runs, shard.len(&(0..seeds)));
        if let Some(f) = tally.first_failure {
            panic!(
                "{} failed seed {}: {}\nreplay: sim run {} --seed {}",
                system.name,
                f.seed,
                f.outcome.summary_line(),
                variant.args(),
                f.seed
            );
        }
    }
}

macro_rules! slices {
    ($($name:ident = $k:expr),* $(,)?) => {
        $(#[test] fn $name() { sweep_slice($k) })*
    };
}

slices!(
    slice_00 = 0,
    slice_01 = 1,
    slice_02 = 2,
    slice_03 = 3,
    slice_04 = 4,
    slice_05 = 5,
    slice_06 = 6,
    slice_07 = 7,
    slice_08 = 8,
    slice_09 = 9,
    slice_10 = 10,
    slice_11 = 11,
    slice_12 = 12,
    slice_13 = 13,
    slice_14 = 14,
    slice_15 = 15,
);
