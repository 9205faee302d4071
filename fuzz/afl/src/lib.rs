//! AFL++ glue: the same [`sim_core::fuzz::Harness`] as the libFuzzer targets, so inputs,
//! `SIM_BUG`/`SIM_SIGNAL` and crash semantics (print, then abort) are the same.
//!
//! A target per system is one line: `fn main() { sim_afl::run("echo", &systems::echo::SPEC) }`.

use sim_core::fuzz::{Engine, Harness};
use sim_core::system::SystemSpec;

/// Runs AFL++'s persistent loop over `spec` (returns when AFL++ stops the process).
pub fn run(target: &str, spec: &SystemSpec) {
    let harness = Harness::from_env_or_exit(spec, target, Engine::Afl);
    afl::fuzz!(|data: &[u8]| {
        // AFL++ has no corpus verdict; a failure aborts inside `fuzz_one`.
        let _ = harness.fuzz_one(data);
    });
}
