//! Glue between libFuzzer and [`sim_core::fuzz::Harness`]: one macro, so a target per system
//! is one line.
//!
//! ```ignore
//! #![no_main]
//! sim_fuzz::sim_fuzz_target!("echo", systems::echo::SPEC);
//! ```
//!
//! The harness is built from `SIM_BUG` and `SIM_SIGNAL` in libFuzzer's initialisation hook,
//! before the first input; a bad value stops the process with a message and exit code 2.

pub use libfuzzer_sys;
pub use sim_core;

/// Maps the harness's verdict to libFuzzer's.
pub fn corpus(verdict: sim_core::fuzz::Verdict) -> libfuzzer_sys::Corpus {
    match verdict {
        sim_core::fuzz::Verdict::Keep => libfuzzer_sys::Corpus::Keep,
        sim_core::fuzz::Verdict::Reject => libfuzzer_sys::Corpus::Reject,
    }
}

/// Defines a libFuzzer target named `$target` that fuzzes the system `$spec`.
///
/// The harness is built in libFuzzer's initialisation hook, before any input runs, so a bad
/// `SIM_BUG` or `SIM_SIGNAL` exits with code 2 and a message instead of being saved as a crash.
#[macro_export]
macro_rules! sim_fuzz_target {
    ($target:literal, $spec:expr) => {
        static HARNESS: ::std::sync::OnceLock<$crate::sim_core::fuzz::Harness> = ::std::sync::OnceLock::new();

        fn harness() -> &'static $crate::sim_core::fuzz::Harness {
            HARNESS.get_or_init(|| {
                $crate::sim_core::fuzz::Harness::from_env_or_exit(&$spec, $target, $crate::sim_core::fuzz::Engine::LibFuzzer)
            })
        }

        $crate::libfuzzer_sys::fuzz_target!(
            init: {
                harness();
            },
            |data: &[u8]| -> $crate::libfuzzer_sys::Corpus { $crate::corpus(harness().fuzz_one(data)) }
        );
    };
}
