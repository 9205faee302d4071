//! Echo over streams (`systems::echo`).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "echo",
    systems::echo::SPEC,
    replay = "cargo run --release -p systems --bin sim --"
);
