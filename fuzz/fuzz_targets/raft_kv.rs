//! Raft key-value store (`systems::raft_kv`).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "raft_kv",
    systems::raft_kv::SPEC,
    replay = "cargo run --release -p systems --bin sim --"
);
