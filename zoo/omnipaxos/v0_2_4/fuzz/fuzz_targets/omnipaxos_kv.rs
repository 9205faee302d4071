//! `cargo fuzz run -s none omnipaxos_kv` (from this package's directory): the system `omnipaxos-kv`
//! against omnipaxos 0.2.4, the latest release, fuzzed for new bugs (see NOTES.md and FINDINGS.md).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "omnipaxos_kv",
    omnipaxos_zoo::SPEC,
    replay = "cargo run --release --bin sim --"
);
