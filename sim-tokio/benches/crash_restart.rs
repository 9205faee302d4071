//! Crash and restart of a tokio node in the middle of `select!`, run after run: every task of
//! a crashed incarnation must be gone, and memory must stay flat.
//!
//! `cargo bench -p sim-tokio --bench crash_restart` runs 100,000 runs (each: a server whose
//! main task selects over a channel fed by a spawned ticker, a socket and a sleep, crashed
//! and restarted twice by a client) and prints the resident set every 10,000 runs, and the
//! live-task count after each run (must be 0), and the open file descriptors at the start and
//! the end (must be equal: each runtime opens an epoll instance and an event fd).
//! `cargo test --benches` runs 2,000. The OS hooks are linked, so the runtimes are clocked.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sim_core::sim::{Config, Sim};
use sim_os as _;
use sim_tokio::net::UdpSocket;
use sim_tokio::TokioSim;

/// Counts a live task while it exists.
struct Live(Arc<AtomicI64>);
impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
fn live(counter: &Arc<AtomicI64>) -> Live {
    counter.fetch_add(1, Ordering::SeqCst);
    Live(counter.clone())
}

fn one_run(seed: u64, alive: &Arc<AtomicI64>) {
    let mut sim = Sim::new(Config::default());
    let counter = alive.clone();
    sim.tokio_node("server", move |_| {
        let counter = counter.clone();
        async move {
            let _main = live(&counter);
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<u32>();
            let c = counter.clone();
            tokio::spawn(async move {
                let _g = live(&c);
                let mut tick = tokio::time::interval(Duration::from_millis(1));
                loop {
                    tick.tick().await;
                    let _ = tx.send(1);
                }
            });
            let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
            let mut buf = [0u8; 4];
            loop {
                tokio::select! {
                    _ = rx.recv() => {}
                    _ = sock.recv_from(&mut buf) => {}
                    _ = tokio::time::sleep(Duration::from_micros(1500)) => {}
                }
            }
        }
    });
    sim.tokio_client("nemesis", move |_| async move {
        let sock = UdpSocket::bind("0.0.0.0:2").await.unwrap();
        for round in 0..2u64 {
            let wait = 1 + (seed % 7) * 3 + round;
            tokio::time::sleep(Duration::from_micros(wait * 700)).await;
            sock.send_to(b"x", "server:1").await.unwrap();
            tokio::time::sleep(Duration::from_millis(wait)).await;
            sim_core::node::crash("server").unwrap();
            sim_core::node::restart("server").unwrap();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    });
    let report = sim.run_seed(seed);
    assert!(
        report.outcome.class.is_pass(),
        "seed {seed}: {:?}",
        report.outcome
    );
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn main() {
    let fds_first = open_fds();
    let quick = !std::env::args().any(|a| a == "--bench");
    let runs: u64 = if quick { 2_000 } else { 100_000 };
    let every = runs / 10;
    let alive = Arc::new(AtomicI64::new(0));
    let started = Instant::now();
    let mut samples = Vec::new();
    for seed in 0..runs {
        one_run(seed, &alive);
        let left = alive.load(Ordering::SeqCst);
        assert_eq!(left, 0, "seed {seed}: {left} tasks outlived their run");
        if (seed + 1) % every == 0 {
            let rss = rss_kib().unwrap_or(0);
            samples.push(rss);
            println!("runs={} rss_kib={rss}", seed + 1);
        }
    }
    let first = samples[0];
    let last = *samples.last().unwrap();
    let fds_last = open_fds();
    assert_eq!(fds_first, fds_last, "file descriptors leaked");
    println!(
        "runs={runs} live_tasks_after_every_run=0 rss_kib_first={first} rss_kib_last={last} \
         open_fds_first={fds_first} open_fds_last={fds_last} us_per_run={:.1}",
        started.elapsed().as_secs_f64() * 1e6 / runs as f64
    );
}
