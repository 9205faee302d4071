//! Two-phase commit (`systems::two_pc`).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "two_pc",
    systems::two_pc::SPEC,
    replay = "cargo run --release -p systems --bin sim --"
);
