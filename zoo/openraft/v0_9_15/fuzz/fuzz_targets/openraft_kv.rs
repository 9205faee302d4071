//! `cargo fuzz run -s none openraft_kv` (from this package's directory): the system `openraft-kv`
//! against openraft 0.9.15, the release that fixed equal-vote-granted (see NOTES.md and FINDINGS.md).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "openraft_kv",
    openraft_zoo::SPEC,
    replay = "cargo run --release --bin sim --"
);
