//! `SIM_BUG=ack-before-replicate cargo fuzz run register -s none` (from examples/quickstart).
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "register",
    quickstart::SPEC,
    replay = "cargo run --release --bin sim --"
);
