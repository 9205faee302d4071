//! The fuzz-signal benchmark: a combination lock over message arrival order
//! (`systems::fixtures::LOCK`). `SIM_BUG=opens cargo fuzz run lock`.
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "lock",
    systems::fixtures::LOCK,
    replay = "cargo run --release -p systems --bin sim --"
);
