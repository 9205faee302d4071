//! Wall-time helpers shared by the comparison binaries, so every engine's median is taken the
//! same way, and the one-engine mode every binary offers for an instruction counter.

use std::time::Instant;

/// The median of `v` (the upper middle for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The wall time of `f`, in microseconds.
pub fn time_us(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e6
}

/// `--engine NAME --seeds N` on the command line: run one engine only, for an instruction
/// counter (`scripts/bench-instructions.sh`). `None` without `--engine`.
pub fn engine_mode() -> Option<(String, u64)> {
    let args: Vec<String> = std::env::args().collect();
    let after = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let engine = after("--engine")?;
    let seeds = after("--seeds")
        .map(|s| s.parse().expect("--seeds takes a number"))
        .unwrap_or(100);
    Some((engine, seeds))
}

/// Runs `run` once for seed `seeds` (a warm-up outside the count: lazy statics, first
/// allocations), then for seeds `0..seeds` inside [`counted_runs`], and prints
/// `engine=NAME seeds=N events=E` (E: the sum of what `run` returns, 0 where an engine does
/// not count its events).
pub fn run_engine(name: &str, seeds: u64, mut run: impl FnMut(u64) -> u64) {
    std::hint::black_box(run(seeds));
    let events = counted_runs(seeds, &mut run);
    println!("engine={name} seeds={seeds} events={events}");
}

/// The runs an instruction counter counts: `valgrind --tool=callgrind
/// --toggle-collect='*counted_runs*'` counts only inside this function.
#[inline(never)]
pub fn counted_runs(seeds: u64, run: &mut dyn FnMut(u64) -> u64) -> u64 {
    (0..seeds).map(|seed| std::hint::black_box(run(seed))).sum()
}
