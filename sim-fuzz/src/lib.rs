//! # sim-fuzz: fuzz engines drive sim-core systems
//!
//! The glue between a fuzz engine and [`sim_core::fuzz::Harness`], for any system that
//! registers a [`sim_core::system::SystemSpec`]; it knows nothing of particular systems.
//!
//! **libFuzzer** (feature `libfuzzer`, default): a target is one line in a cargo-fuzz crate
//! (whose own `libfuzzer-sys` dependency links libFuzzer):
//!
//! ```ignore
//! #![no_main]
//! sim_fuzz::sim_fuzz_target!("my_system", my_crate::SPEC, replay = "cargo run --release --bin sim --");
//! ```
//!
//! `replay` is how the replay command printed with every failure starts (default `sim`): your
//! own binary built on [`sim_core::cli::Cli`]. The harness is built from `SIM_BUG` and
//! `SIM_SIGNAL` in libFuzzer's initialisation hook, before the first input; a bad value stops
//! the process with a message and exit code 2. Every target also installs
//! [`sim_core::mutate`] as libFuzzer's custom mutator and crossover: edits of whole decisions
//! in the input's lanes, with a share of mutations left to libFuzzer's own. `SIM_MUTATOR=bytes`
//! switches it off (libFuzzer's byte mutations only).
//!
//! **AFL++** (feature `afl`): `fn main() { sim_fuzz::afl::run("my_system", &SPEC, "sim") }`
//! in a binary built with `cargo afl build`; the same harness, inputs and crash semantics.

#[cfg(feature = "afl")]
pub mod afl;

#[cfg(feature = "libfuzzer")]
mod libfuzzer;
#[cfg(feature = "libfuzzer")]
pub use libfuzzer::*;

pub use sim_core;
