//! `cargo fuzz run -s none openraft_kv_live_reader` (from this package's directory): the system `openraft-kv-live-reader`
//! against openraft 0.9.25, the release that fixed empty-log-read-panic and the latest 0.9, fuzzed for new bugs (see NOTES.md and FINDINGS.md).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "openraft_kv_live_reader",
    openraft_zoo::SPEC_LIVE_READER,
    replay = "cargo run --release --bin sim --"
);
