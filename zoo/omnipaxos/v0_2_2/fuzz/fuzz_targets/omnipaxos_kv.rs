//! `cargo fuzz run -s none omnipaxos_kv` (from this package's directory): the system `omnipaxos-kv`
//! against omnipaxos 0.2.2, whose release has the bug this target hunts (see NOTES.md).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "omnipaxos_kv",
    omnipaxos_zoo::SPEC,
    replay = "cargo run --release --bin sim --"
);
