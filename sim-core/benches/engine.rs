//! Engine benchmarks (plain harness: `cargo bench -p sim-core --bench engine`).
//!
//! Every figure is a median over repeated measurements taken in this one process, printed
//! next to its baseline so ratios come from the same run on the same machine:
//!
//! * (a) nanoseconds per scheduling step and per timer event, next to a bare loop doing the
//!   same bookkeeping (a sorted ready vector, a noop-waker poll, a binary timer heap);
//! * (b) the comparison workload — 3 nodes, a client doing 100 request/response round trips
//!   alternating between two echo servers, uniform 1-10 ms latency, a 1 s timeout per
//!   request, and a never-ending 100 ms heartbeat task on every node — as wall time per run
//!   over 2000 seeds (the sweep repeated in 5 rounds; the median round is reported with the
//!   spread of the ratio), simulated seconds per wall second and peak RSS, next to a
//!   hand-written discrete-event loop of the same workload;
//! * memory: RSS after 2000 runs and after many more (`-- --million` for a million), which
//!   must stay flat.
//!
//! `-- --count WHAT N` runs one of them N times and nothing else, for an instruction counter
//! (`valgrind --tool=callgrind --toggle-collect='*counted_runs*'` counts only the N runs; see
//! `scripts/bench-instructions.sh`): WHAT is `workload` or `bare` (the comparison workload on
//! sim-core or as the hand-written loop, seeds 0..N), `steps` or `bare-steps`, `timers` or
//! `bare-timers` ((a)'s runs). It prints `count=WHAT runs=N units=U`, U being the events,
//! steps or timer events the runs did (0 for `bare`, which does not count its events).
//!
//! Wall-clock reads here measure the simulator from outside; none reaches a simulation.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use sim_core::choice::{Choices, Seeded};
use sim_core::net::Socket;
use sim_core::rt::{spawn, yield_now};
use sim_core::sim::{Config, Sim};
use sim_core::time::sleep;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn measure(reps: usize, mut f: impl FnMut() -> u64) -> f64 {
    // Returns the median of ns per unit, where `f` returns how many units it did.
    let samples = (0..reps)
        .map(|_| {
            let t = Instant::now();
            let units = f();
            t.elapsed().as_nanos() as f64 / units.max(1) as f64
        })
        .collect();
    median(samples)
}

// ---------------------------------------------------------------- (a) steps and timers

const TASKS: usize = 8;
const YIELDS: usize = 1000;

fn sim_steps() -> u64 {
    let mut sim = Sim::new(Config::default());
    sim.client("c", |_| async {
        let hs: Vec<_> = (0..TASKS)
            .map(|_| {
                spawn(async {
                    for _ in 0..YIELDS {
                        yield_now().await;
                    }
                })
            })
            .collect();
        for h in hs {
            h.await.unwrap();
        }
    });
    sim.run_seed(1).outcome.steps
}

struct YieldN(usize);
impl Future for YieldN {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The same bookkeeping by hand: boxed futures, a sorted ready vector, a random pick, a
/// noop-waker poll, and re-queueing.
fn bare_steps() -> u64 {
    let mut tasks: Vec<Option<Pin<Box<dyn Future<Output = ()>>>>> = (0..TASKS)
        .map(|_| Some(Box::pin(YieldN(YIELDS)) as Pin<Box<dyn Future<Output = ()>>>))
        .collect();
    let mut ready: Vec<u32> = (0..TASKS as u32).collect();
    let mut rng = Seeded::new(1);
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut steps = 0;
    while !ready.is_empty() {
        let i = rng.below("pick", ready.len() as u64) as usize;
        let id = ready.remove(i);
        let fut = tasks[id as usize].as_mut().unwrap();
        steps += 1;
        if fut.as_mut().poll(&mut cx).is_pending() {
            let pos = ready.binary_search(&id).unwrap_err();
            ready.insert(pos, id);
        } else {
            tasks[id as usize] = None;
        }
    }
    black_box(steps)
}

const TIMERS: usize = 2000;

fn sim_timers() -> u64 {
    let mut sim = Sim::new(Config {
        budget_time: Duration::from_secs(10_000),
        ..Config::default()
    });
    sim.client("c", |_| async {
        for _ in 0..TIMERS {
            sleep(Duration::from_millis(1)).await;
        }
    });
    sim.run_seed(1);
    TIMERS as u64
}

fn bare_timers() -> u64 {
    let mut heap: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    let mut now = 0u64;
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut fut = Box::pin(YieldN(TIMERS));
    for seq in 0..TIMERS as u64 {
        heap.push(Reverse((now + 1_000_000, seq)));
        let Reverse((at, _)) = heap.pop().unwrap();
        now = at;
        let _ = fut.as_mut().poll(&mut cx);
    }
    black_box(now);
    TIMERS as u64
}

// ---------------------------------------------------------------- (b) the comparison workload

#[path = "common/workload.rs"]
mod workload;
use workload::{bare_workload, sim_workload};

/// The fixed cost of a run: the workload's three nodes, no round trips.
fn sim_empty_run() -> u64 {
    let mut sim = Sim::new(Config::default());
    for name in ["echo1", "echo2"] {
        sim.node(name, |_| async {
            let _sock = Socket::<u64>::bind(1).unwrap();
        });
    }
    sim.client("client", |_| async {});
    black_box(sim.run_seed(1));
    1
}

fn rss_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The runs an instruction counter counts (see `--count`): `run(i)` for `i` in `0..n`,
/// returning the sum of the units each did.
#[inline(never)]
fn counted_runs(n: u64, run: &mut dyn FnMut(u64) -> u64) -> u64 {
    (0..n).map(|i| black_box(run(i))).sum()
}

/// `--count WHAT N`: one warm-up run outside the count (lazy statics, first allocations),
/// then N counted ones.
fn count_mode(what: &str, n: u64) {
    let mut run: Box<dyn FnMut(u64) -> u64> = match what {
        "workload" => Box::new(|seed| sim_workload(seed).1),
        "bare" => Box::new(|seed| {
            black_box(bare_workload(seed));
            0
        }),
        "steps" => Box::new(|_| sim_steps()),
        "bare-steps" => Box::new(|_| bare_steps()),
        "timers" => Box::new(|_| sim_timers()),
        "bare-timers" => Box::new(|_| bare_timers()),
        other => {
            eprintln!(
                "--count: workload, bare, steps, bare-steps, timers or bare-timers, not {other}"
            );
            std::process::exit(2);
        }
    };
    black_box(run(n));
    let units = counted_runs(n, &mut run);
    println!("count={what} runs={n} units={units}");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--count") {
        let what = args.get(i + 1).map(String::as_str).unwrap_or("workload");
        let n = args
            .get(i + 2)
            .map(|s| s.parse().expect("--count WHAT N: N is a number"))
            .unwrap_or(100);
        count_mode(what, n);
        return;
    }
    // For a profiler: the comparison workload alone (`PROFILE_RUNS` runs, default 20,000).
    let profile_runs: u64 = std::env::var("PROFILE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    if std::env::args().any(|a| a == "--profile-workload") {
        for seed in 0..profile_runs {
            black_box(sim_workload(seed));
        }
        return;
    }
    if std::env::args().any(|a| a == "--profile-bare") {
        for seed in 0..profile_runs {
            black_box(bare_workload(seed));
        }
        return;
    }
    let million = std::env::args().any(|a| a == "--million");
    // `cargo bench` passes --bench; `cargo test --benches` runs this too, with fewer reps.
    let quick = !std::env::args().any(|a| a == "--bench");
    let reps = if quick { 3 } else { 31 };

    println!("== (a) scheduling steps and timer events, median of {reps}");
    let sim_step = measure(reps, sim_steps);
    let bare_step = measure(reps, bare_steps);
    println!(
        "step_ns_sim={sim_step:.1} step_ns_bare={bare_step:.1} ratio={:.2}",
        sim_step / bare_step
    );
    let sim_timer = measure(reps, sim_timers);
    let bare_timer = measure(reps, bare_timers);
    println!(
        "timer_ns_sim={sim_timer:.1} timer_ns_bare={bare_timer:.1} ratio={:.2}",
        sim_timer / bare_timer
    );

    let empty = measure(reps * 100, sim_empty_run);
    println!("empty_run_ns={empty:.0} (three nodes started and torn down, no events)");
    // What `thread_per_run` (sim_core::os::isolated) adds to every run: a thread spawned,
    // its hash keys fixed, joined.
    let isolated = measure(reps * 100, || {
        sim_core::os::isolated(sim_empty_run);
        1
    });
    println!(
        "thread_per_run_overhead_ns={:.0} (an empty run on a fresh thread, minus the run)",
        isolated - empty
    );

    let seeds = if quick { 50 } else { 2000 };
    // A shared machine has slow spells lasting seconds. Sim and bare runs alternate seed by
    // seed so a spell slows both, and the whole sweep is repeated: the round with the median
    // ratio is reported, with the spread of the ratios.
    let rounds = if quick { 1 } else { 5 };
    println!("== (b) 3 nodes, 100 round trips, 1-10 ms latency, 1 s timeouts, 100 ms heartbeats; {seeds} seeds, {rounds} rounds");
    let mut results = Vec::new();
    let mut peak_rss_kib = 0;
    for round in 0..rounds {
        let mut sim_us = Vec::new();
        let mut bare_us = Vec::new();
        let mut sim_secs = 0.0;
        let mut wall_secs = 0.0;
        let mut events = Vec::new();
        for seed in 0..seeds {
            let t = Instant::now();
            let (simulated, steps) = sim_workload(seed);
            events.push(steps as f64);
            let e = t.elapsed();
            sim_us.push(e.as_secs_f64() * 1e6);
            sim_secs += simulated as f64 / 1e9;
            wall_secs += e.as_secs_f64();
            let t = Instant::now();
            black_box(bare_workload(seed));
            bare_us.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let (s, b) = (median(sim_us), median(bare_us));
        results.push((s / b, s, b, median(events), sim_secs / wall_secs));
        if round == 0 {
            peak_rss_kib = rss_kib("VmHWM:").unwrap_or(0);
        }
    }
    results.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap());
    let (ratio, s, b, ev, speed) = results[results.len() / 2];
    println!(
        "run_us_sim={s:.1} run_us_bare={b:.1} ratio={ratio:.2} ratio_min={:.2} ratio_max={:.2} events_per_run={ev:.0} ns_per_event={:.1} sim_seconds_per_wall_second={speed:.0} peak_rss_kib_after_{}_runs={}",
        results[0].0,
        results[results.len() - 1].0,
        s * 1000.0 / ev,
        seeds,
        peak_rss_kib
    );

    let extra: u64 = if million {
        1_000_000
    } else if quick {
        200
    } else {
        50_000
    };
    let before = rss_kib("VmRSS:").unwrap_or(0);
    for seed in 0..extra {
        black_box(sim_workload(seed));
    }
    let after = rss_kib("VmRSS:").unwrap_or(0);
    println!(
        "rss_kib_before={before} rss_kib_after_{extra}_more_runs={after} growth_kib={}",
        after as i64 - before as i64
    );
}
