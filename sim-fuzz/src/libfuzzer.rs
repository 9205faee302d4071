//! libFuzzer: the target macro and the custom mutator and crossover hooks it installs.

pub use libfuzzer_sys;

use sim_core::fuzz::{hunt_max_len_bytes, HUNT_FLAGS, HUNT_SEED_RUNS};

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
    match mutator_choice() {
        sim_core::mutate::MutatorChoice::Bytes => libfuzzer_sys::fuzzer_mutate(data, size, limit),
        sim_core::mutate::MutatorChoice::Fresh => {
            let mutant = sim_core::mutate::fresh_mutant(limit, seed);
            write_or_engine(data, mutant, size, limit)
        }
        sim_core::mutate::MutatorChoice::Lanes => {
            let base = match sim_core::mutate::unstack(&data[..size]) {
                Some(base) if base.len() <= limit => base,
                _ => data[..size].to_vec(),
            };
            data[..base.len()].copy_from_slice(&base);
            let mutant = sim_core::mutate::mutate(&base, limit, seed);
            let len = write_or_engine(data, mutant, base.len(), limit);
            sim_core::mutate::note_mutant(&base, &data[..len]);
            len
        }
    }
}

/// Writes `mutant` over `data`, or, when the mutator declined, has libFuzzer mutate
/// `data[..size]` itself; returns the new length.
fn write_or_engine(data: &mut [u8], mutant: Option<Vec<u8>>, size: usize, limit: usize) -> usize {
    match mutant {
        Some(out) => {
            data[..out.len()].copy_from_slice(&out);
            out.len()
        }
        None => libfuzzer_sys::fuzzer_mutate(data, size, limit),
    }
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
        sim_core::mutate::MutatorChoice::Lanes | sim_core::mutate::MutatorChoice::Fresh => {
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
/// The hook also makes the target, run as typed, search the way `sim hunt` does (see
/// [`as_typed_is_the_hunt`]).
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
                $crate::as_typed_is_the_hunt(harness);
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

/// Set in the environment of the process [`as_typed_is_the_hunt`] starts, so it runs once.
const APPLIED: &str = "SIM_HUNT_DEFAULTS_APPLIED";

/// Makes `cargo fuzz run -s none TARGET`, as typed, the hunt: called from libFuzzer's
/// initialisation hook, before libFuzzer reads its flags. When the corpus directory
/// libFuzzer was given is empty it writes [`HUNT_SEED_RUNS`] seeded runs into it (their bytes
/// replay those runs), and when the user gave none of [`HUNT_FLAGS`]' flags it starts this
/// program again with them added, and `-max_len` at 4x the longest corpus input (at least
/// 4,096), as the hunt has it (libfuzzer-sys does not hand its hook libFuzzer's
/// arguments, so they are added by running again, once). A flag the user gave wins.
///
/// Nothing happens for a replay or a minimisation (a file argument, `-minimize_crash`,
/// `-merge`, `-cleanse_crash`), or with `SIM_HUNT_DEFAULTS=off` in the environment.
pub fn as_typed_is_the_hunt(harness: fn() -> &'static sim_core::fuzz::Harness) {
    if std::env::var("SIM_HUNT_DEFAULTS").is_ok_and(|v| v == "off") {
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let special = ["-minimize_crash", "-merge", "-cleanse_crash", "-help"];
    if args[1..].iter().any(|a| {
        special.iter().any(|s| a.starts_with(s))
            || (!a.starts_with('-') && std::path::Path::new(a).is_file())
    }) {
        return;
    }
    let corpus = args[1..]
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(std::path::Path::new)
        .find(|p| p.is_dir());
    if let Some(corpus) = corpus {
        seed_if_empty(harness(), corpus);
    }
    if std::env::var_os(APPLIED).is_some() {
        return;
    }
    let given = |flag: &str| {
        let name = &flag[..=flag.find('=').unwrap_or(flag.len() - 1)];
        args.iter().any(|a| a.starts_with(name))
    };
    // Any of them given: the user runs a search of their own, and gets what they typed.
    if HUNT_FLAGS.iter().any(|flag| given(flag)) {
        return;
    }
    let mut flags: Vec<String> = HUNT_FLAGS.iter().map(|f| f.to_string()).collect();
    if !given("-max_len=") {
        // As the hunt: room to grow to 4x the longest input (libFuzzer's default stops at the
        // longest, when that is over 4,096 bytes).
        let longest_bytes = corpus.map_or(0, longest_file_bytes);
        flags.push(format!("-max_len={}", hunt_max_len_bytes(longest_bytes)));
    }
    reexec_with(&args, &flags);
}

/// The length of the longest file in `dir`.
fn longest_file_bytes(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| usize::try_from(m.len()).unwrap_or(usize::MAX))
        .max()
        .unwrap_or(0)
}

fn seed_if_empty(harness: &sim_core::fuzz::Harness, corpus: &std::path::Path) {
    let empty = std::fs::read_dir(corpus).is_ok_and(|mut entries| entries.next().is_none());
    if !empty {
        return;
    }
    // Which seeds to start from is the campaign's choice, outside every simulation: like
    // libFuzzer's own -seed, it differs from one start to the next, so independent campaigns
    // start from different runs (each run is still exactly replayed by its bytes).
    #[allow(clippy::disallowed_methods)]
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() ^ (d.as_secs() as u32));
    let first = u64::from(clock ^ std::process::id()) * HUNT_SEED_RUNS;
    for seed in first..first + HUNT_SEED_RUNS {
        let run = sim_core::run_spec::RunSpec::new(
            harness.variant().clone(),
            sim_core::choice::Input::Seed(seed),
        );
        let (_, bytes) = run.run_encoded();
        // A seed run that fails is written too: libFuzzer's first pass over the corpus runs
        // it and reports the crash as its own.
        let path = corpus.join(format!("seed-{seed}"));
        #[allow(clippy::disallowed_methods)] // the fuzzer's corpus, outside every simulation
        if let Err(e) = std::fs::write(&path, &bytes) {
            eprintln!(
                "warning: cannot write the seed input {}: {e}",
                path.display()
            );
            return;
        }
    }
    eprintln!(
        "sim: the corpus {} was empty: wrote {HUNT_SEED_RUNS} seeded runs to start from (seeds {first}..{})",
        corpus.display(),
        first + HUNT_SEED_RUNS
    );
}

#[cfg(unix)]
fn reexec_with(args: &[String], flags: &[String]) {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    eprintln!(
        "sim: running with the hunt's libFuzzer flags {} (SIM_HUNT_DEFAULTS=off: libFuzzer's own)",
        flags.join(" ")
    );
    // `exec` returns only if it failed; libFuzzer then runs with the flags it was given.
    let error = std::process::Command::new(exe)
        .args(flags)
        .args(&args[1..])
        .env(APPLIED, "1")
        .exec();
    eprintln!("warning: cannot start again with the hunt's flags: {error}");
}

#[cfg(not(unix))]
fn reexec_with(_args: &[String], _flags: &[String]) {}
