//! The replicated registry (`systems::registry`).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "registry",
    systems::registry::SPEC,
    replay = "cargo run --release -p systems --bin sim --"
);
