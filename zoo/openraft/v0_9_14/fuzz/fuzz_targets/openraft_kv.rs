//! openraft 0.9.14 (a released version with a known bug; nothing planted): `cargo fuzz run
//! -s none openraft_kv` from `zoo/openraft/v0_9_14`. A crash is a safety violation of the
//! release, replayed with the package's own `sim`.
#![no_main]
sim_fuzz::sim_fuzz_target!(
    "openraft_kv",
    openraft_zoo::SPEC,
    replay = "cargo run --release --bin sim --"
);
