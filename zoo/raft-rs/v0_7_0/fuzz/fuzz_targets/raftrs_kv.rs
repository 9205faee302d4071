//! `cargo fuzz run -s none raftrs_kv` (from this package's directory): the system `raftrs-kv`
//! against raft 0.7.0, the latest release, fuzzed for new bugs (see NOTES.md and FINDINGS.md).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "raftrs_kv",
    raft_rs_zoo::SPEC,
    replay = "cargo run --release --bin sim --"
);
