//! Seeds (and wall time) to a system's first failure, for comparing a seed sweep with fuzzing.
//!
//! `cargo run --release -p acceptance --example seed_sweep -- SYSTEM BUG [START] [MAX]`
//! sweeps seeds START, START+1, ... (at most MAX) and prints `seeds=N seconds=S` for the first
//! failure. SYSTEM may be an example system or a fixture (`lock`, `floor`).

use std::time::Instant;

use sim_core::choice::Input;
use sim_core::system;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: seed_sweep SYSTEM BUG [START] [MAX]");
        std::process::exit(2);
    }
    let specs: Vec<_> = systems::all()
        .into_iter()
        .chain(systems::fixtures::all())
        .collect();
    let spec = system::find(&specs, &args[0]).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let opts = spec.options(Some(args[1].as_str())).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let start: u64 = args
        .get(2)
        .map_or(0, |s| s.parse().expect("START is a number"));
    let max: u64 = args
        .get(3)
        .map_or(10_000_000, |s| s.parse().expect("MAX is a number"));
    let began = Instant::now();
    for n in 1..=max {
        let seed = start + n - 1;
        let report = spec.run(&opts, &Input::Seed(seed));
        if report.outcome.class.is_failure() {
            println!(
                "system={} bug={} start={start} seeds={n} first_failure_seed={seed} seconds={:.3} {}",
                spec.name,
                args[1],
                began.elapsed().as_secs_f64(),
                report.outcome.summary_line()
            );
            return;
        }
    }
    println!(
        "system={} bug={} start={start} seeds={max} first_failure_seed=none seconds={:.3}",
        spec.name,
        args[1],
        began.elapsed().as_secs_f64()
    );
}
