//! The framework's floor: one node that sleeps once. For executions per second only.
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "floor",
    systems::fixtures::FLOOR,
    replay = "cargo run --release -p systems --bin sim --"
);
