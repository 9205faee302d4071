//! `cargo fuzz run -s none raftrs_kv` (from zoo/raft-rs/v0_6_0_alpha): raft 0.6.0-alpha, whose
//! `Ready::must_sync()` ignores entries, under the harness's every fault.
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "raftrs_kv",
    raft_rs_zoo::SPEC,
    replay = "cargo run --release --bin sim --"
);
