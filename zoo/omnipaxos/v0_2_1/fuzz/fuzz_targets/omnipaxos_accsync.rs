//! `cargo fuzz run -s none omnipaxos_accsync` (from this package's directory): the system `omnipaxos-accsync`
//! against omnipaxos 0.2.1, the release that fixed accept-sync-past-follower-log (see NOTES.md and FINDINGS.md).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "omnipaxos_accsync",
    omnipaxos_zoo::SPEC_ACCEPT_SYNC,
    replay = "cargo run --release --bin sim --"
);
