//! How the cost of a run grows: wall time and memory per run as the cluster, the workload
//! and the simulated time grow.
//!
//! `cargo bench -p sim-core --bench scale` prints one table row per size:
//!
//! * nodes 3 → 10 → 50 → 200: every node a server with a 100 ms heartbeat; one client does
//!   100 request/response round trips, each to the next server in turn (1-10 ms latency);
//! * operations 100 → 1,000 → 10,000 round trips on 3 nodes;
//! * simulated time 1 min → 1 h → 24 h of a heartbeat-only cluster of 3 nodes (one heartbeat
//!   per node per second; a client that only sleeps ends the run).
//!
//! Columns: events (history length), µs per run, ns per event, and memory per run: the peak
//! of bytes allocated during the run (a counting allocator around the system one), and the
//! bytes per event. Medians over several runs with different seeds; the run's own work only
//! (the scenario is built outside the timing).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use sim_core::net::{Addr, Socket};
use sim_core::rt::spawn;
use sim_core::sim::{Config, Sim};
use sim_core::time::{interval, sleep, timeout};

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator, whose contract the caller meets.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

async fn heartbeat(every: Duration) {
    let mut tick = interval(every);
    loop {
        tick.tick().await;
    }
}

/// `nodes` servers with heartbeats every `beat`; a client doing `ops` round trips, or (with
/// `ops` 0) sleeping for `quiet`.
fn scenario(nodes: usize, ops: u64, beat: Duration, quiet: Duration) -> Sim {
    let mut sim = Sim::new(Config {
        budget_steps: u64::MAX,
        budget_time: quiet + Duration::from_secs(3600),
        ..Config::default()
    });
    let names: Vec<String> = (0..nodes).map(|i| format!("n{i}")).collect();
    for name in &names {
        sim.node(name, move |_| async move {
            spawn(heartbeat(beat));
            let sock = Socket::<u64>::bind(1).unwrap();
            loop {
                let (from, n) = sock.recv().await;
                sock.send(from, n);
            }
        });
    }
    sim.client("client", move |_| {
        let names = names.clone();
        async move {
            if ops == 0 {
                sleep(quiet).await;
                return;
            }
            let sock = Socket::<u64>::bind(1).unwrap();
            for n in 0..ops {
                let to = Addr::named(&names[(n as usize) % names.len()], 1);
                sock.send(to, n);
                let reply = timeout(Duration::from_secs(1), sock.recv()).await;
                assert_eq!(reply.map(|r| r.1), Ok(n));
            }
        }
    });
    sim
}

/// (events, µs per run, peak bytes per run): medians over `runs` seeds.
fn measure(runs: u64, build: impl Fn() -> Sim) -> (u64, f64, usize) {
    let mut micros = Vec::new();
    let mut peaks = Vec::new();
    let mut events = 0;
    for seed in 0..runs {
        let sim = build();
        let base = LIVE.load(Relaxed);
        PEAK.store(base, Relaxed);
        let started = Instant::now();
        let outcome = sim.run_seed(seed).outcome;
        micros.push(started.elapsed().as_secs_f64() * 1e6);
        peaks.push(PEAK.load(Relaxed) - base);
        assert!(outcome.class.is_pass(), "{outcome:?}");
        events = outcome.steps;
    }
    micros.sort_by(f64::total_cmp);
    peaks.sort_unstable();
    (events, micros[micros.len() / 2], peaks[peaks.len() / 2])
}

fn row(label: &str, (events, micros, peak): (u64, f64, usize)) {
    println!(
        "{label:<28} {events:>10} {micros:>12.0} {:>10.0} {:>12} {:>8.0}",
        micros * 1000.0 / events as f64,
        peak,
        peak as f64 / events as f64
    );
}

fn main() {
    let ms = Duration::from_millis;
    println!(
        "{:<28} {:>10} {:>12} {:>10} {:>12} {:>8}",
        "size", "events", "us/run", "ns/event", "peak_bytes", "B/event"
    );
    for nodes in [3, 10, 50, 200] {
        let runs = if nodes >= 50 { 5 } else { 21 };
        row(
            &format!("nodes={nodes} ops=100"),
            measure(runs, || scenario(nodes, 100, ms(100), ms(0))),
        );
    }
    for ops in [100, 1_000, 10_000] {
        let runs = if ops >= 10_000 { 5 } else { 21 };
        row(
            &format!("nodes=3 ops={ops}"),
            measure(runs, || scenario(3, ops, ms(100), ms(0))),
        );
    }
    for (label, quiet) in [("1min", 60), ("1h", 3600), ("24h", 86_400)] {
        let runs = if quiet >= 86_400 { 3 } else { 11 };
        let quiet = Duration::from_secs(quiet);
        row(
            &format!("nodes=3 heartbeat-only {label}"),
            measure(runs, || scenario(3, 0, ms(1000), quiet)),
        );
    }
}
