//! The chain, fuzzed: `SIM_BUG=tail-reapplies-stale-resend cargo fuzz run -s none chain`.
#![no_main]
sim_fuzz::sim_fuzz_target!("chain", chain::SPEC, replay = "cargo run --release --bin sim --");
