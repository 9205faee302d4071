//! A deliberately nondeterministic system: every crash must say `class=diverged`.
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "canary",
    systems::fixtures::CANARY,
    replay = "cargo run --release -p systems --bin sim --"
);
