//! AFL++: a persistent-mode runner over the same [`sim_core::fuzz::Harness`] as the libFuzzer
//! targets, so inputs, `SIM_BUG`/`SIM_SIGNAL` and crash semantics (print, then abort) are the
//! same.

use sim_core::fuzz::{Engine, Harness};
use sim_core::system::SystemSpec;

/// Runs AFL++'s persistent loop over `spec` (returns when AFL++ stops the process). Replay
/// commands printed with a failure start with `replay_prefix` (your `sim` binary).
pub fn run(target: &str, spec: &SystemSpec, replay_prefix: &str) {
    let harness = Harness::from_env_or_exit(spec, target, Engine::Afl).replay_prefix(replay_prefix);
    afl::fuzz!(|data: &[u8]| {
        // AFL++ has no corpus verdict; a failure aborts inside `fuzz_one`.
        let _ = harness.fuzz_one(data);
    });
}
