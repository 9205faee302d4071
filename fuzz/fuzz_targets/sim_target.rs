//! The flagship target: two-phase commit. `SIM_BUG=first-vote-wins cargo fuzz run sim_target`.
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "sim_target",
    systems::two_pc::SPEC,
    replay = "cargo run --release -p systems --bin sim --"
);
