//! libFuzzer: the target macro and the custom mutator and crossover hooks it installs.

pub use libfuzzer_sys;

/// Maps the harness's verdict to libFuzzer's.
pub fn corpus(verdict: sim_core::fuzz::Verdict) -> libfuzzer_sys::Corpus {
    match verdict {
        sim_core::fuzz::Verdict::Keep => libfuzzer_sys::Corpus::Keep,
        sim_core::fuzz::Verdict::Reject => libfuzzer_sys::Corpus::Reject,
    }
}

/// The mutator `SIM_MUTATOR` chooses, read once; a bad value exits with code 2.
pub fn mutator_choice() -> sim_core::mutate::MutatorChoice {
    static CHOICE: std::sync::OnceLock<sim_core::mutate::MutatorChoice> =
        std::sync::OnceLock::new();
    *CHOICE.get_or_init(|| {
        sim_core::mutate::MutatorChoice::from_env().unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(2)
        })
    })
}

/// libFuzzer's custom-mutator hook: a lane edit of `data[..size]` written back in place, or
/// libFuzzer's own mutation when the lane mutator declines or is switched off.
pub fn custom_mutate(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let limit = max_size.min(data.len());
    if mutator_choice() == sim_core::mutate::MutatorChoice::Lanes {
        if let Some(out) = sim_core::mutate::mutate(&data[..size], limit, seed) {
            data[..out.len()].copy_from_slice(&out);
            return out.len();
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, limit)
}

/// libFuzzer's custom-crossover hook, written to `out`: a lane-wise child of two inputs, or
/// with `SIM_MUTATOR=bytes` a prefix of one joined to a suffix of the other (defining the
/// hook replaces libFuzzer's own crossover, so byte mode needs one of its own).
pub fn custom_crossover(a: &[u8], b: &[u8], out: &mut [u8], seed: u32) -> usize {
    let child = match mutator_choice() {
        sim_core::mutate::MutatorChoice::Lanes => {
            sim_core::mutate::crossover(a, b, out.len(), seed)
        }
        sim_core::mutate::MutatorChoice::Bytes => {
            let cut_a = seed as usize % (a.len() + 1);
            let cut_b = (seed as usize / 7919) % (b.len() + 1);
            let mut joined = a[..cut_a].to_vec();
            joined.extend_from_slice(&b[cut_b..]);
            joined.truncate(out.len());
            joined
        }
    };
    out[..child.len()].copy_from_slice(&child);
    child.len()
}

/// Defines a libFuzzer target named `$target` that fuzzes the system `$spec`; failures print
/// replay commands starting with `replay` (default `sim`).
///
/// The harness is built in libFuzzer's initialisation hook, before any input runs, so a bad
/// `SIM_BUG` or `SIM_SIGNAL` exits with code 2 and a message instead of being saved as a crash.
#[macro_export]
macro_rules! sim_fuzz_target {
    ($target:literal, $spec:expr) => {
        $crate::sim_fuzz_target!($target, $spec, replay = "sim");
    };
    ($target:literal, $spec:expr, replay = $replay:expr) => {
        static HARNESS: ::std::sync::OnceLock<$crate::sim_core::fuzz::Harness> = ::std::sync::OnceLock::new();

        fn harness() -> &'static $crate::sim_core::fuzz::Harness {
            HARNESS.get_or_init(|| {
                $crate::sim_core::fuzz::Harness::from_env_or_exit(&$spec, $target, $crate::sim_core::fuzz::Engine::LibFuzzer)
                    .replay_prefix($replay)
            })
        }

        $crate::libfuzzer_sys::fuzz_target!(
            init: {
                harness();
                $crate::mutator_choice();
            },
            |data: &[u8]| -> $crate::libfuzzer_sys::Corpus { $crate::corpus(harness().fuzz_one(data)) }
        );

        $crate::libfuzzer_sys::fuzz_mutator!(
            |data: &mut [u8], size: usize, max_size: usize, seed: u32| {
                $crate::custom_mutate(data, size, max_size, seed)
            }
        );

        $crate::libfuzzer_sys::fuzz_crossover!(
            |a: &[u8], b: &[u8], out: &mut [u8], seed: u32| {
                $crate::custom_crossover(a, b, out, seed)
            }
        );
    };
}
