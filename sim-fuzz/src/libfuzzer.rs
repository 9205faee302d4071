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
///
/// With the lane mutator, every mutant is one edit from the input libFuzzer picked from its
/// corpus: a mutant handed back for another round is replaced by the input it was made from
/// ([`sim_core::mutate::unstack`]).
pub fn custom_mutate(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let limit = max_size.min(data.len());
    if mutator_choice() == sim_core::mutate::MutatorChoice::Bytes {
        return libfuzzer_sys::fuzzer_mutate(data, size, limit);
    }
    let base = match sim_core::mutate::unstack(&data[..size]) {
        Some(base) if base.len() <= limit => base,
        _ => data[..size].to_vec(),
    };
    data[..base.len()].copy_from_slice(&base);
    let len = match sim_core::mutate::mutate(&base, limit, seed) {
        Some(out) => {
            data[..out.len()].copy_from_slice(&out);
            out.len()
        }
        None => libfuzzer_sys::fuzzer_mutate(data, base.len(), limit),
    };
    sim_core::mutate::note_mutant(&base, &data[..len]);
    len
}

/// libFuzzer's custom-crossover hook, written to `out`. With the lane mutator it makes no
/// child: it is one more lane edit of `a`, as [`custom_mutate`] makes. libFuzzer gives the hook
/// half of all mutations, and a child of two runs loses what made either worth keeping:
/// hunting raft-kv `vote-not-persisted` (10 hunts of 60 s each, one edit per run), hunts with
/// lane-wise crossover took a median of 14,012 executions (mean 22,845), without it 10,120
/// (mean 13,386). With `SIM_MUTATOR=bytes` it joins a prefix of one input to a suffix of the
/// other (defining the hook replaces libFuzzer's own crossover, so byte mode needs one of its
/// own).
pub fn custom_crossover(a: &[u8], b: &[u8], out: &mut [u8], seed: u32) -> usize {
    let child = match mutator_choice() {
        sim_core::mutate::MutatorChoice::Lanes => {
            let mut buf = a.to_vec();
            buf.resize(out.len().max(a.len()), 0);
            let len = custom_mutate(&mut buf, a.len().min(out.len()), out.len(), seed);
            buf.truncate(len);
            buf
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
                // Noted first: the harness's first line says which mutator runs.
                $crate::sim_core::fuzz::note_mutator($crate::mutator_choice());
                harness();
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
