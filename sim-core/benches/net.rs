//! Simulated messages per second (send + deliver) on one core, next to a bare loop over a
//! binary heap keyed `(deliver_at, seq)` doing the same bookkeeping and nothing else.
//!
//! Run with `cargo bench -p sim-core --bench net`. Prints the median of several runs of each.
//! The simulated workload: a sender keeps 100 datagrams in flight to a receiver (it sends
//! 100, then sleeps 1 ms), for 100 000 messages; every message is a send event, a delivery
//! event, and a receiver task step, each folded into the history hash.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use sim_core::net::{Addr, FaultProfile, Faults, NetConfig, Socket};
use sim_core::sim::{Config, Sim};
use sim_core::time::sleep;

const MESSAGES: u64 = 100_000;
const BATCH: u64 = 100;
const RUNS: usize = 7;

fn sim_run(faults: Faults) -> f64 {
    let net = NetConfig {
        faults,
        ..NetConfig::default()
    };
    let mut sim = Sim::new(Config {
        net,
        budget_steps: u64::MAX,
        budget_time: Duration::from_secs(3600),
        ..Config::default()
    });
    sim.node("rx", |_| async {
        let sock = Socket::<u64>::bind(1).unwrap();
        loop {
            black_box(sock.recv().await);
        }
    });
    sim.client("tx", |_| async {
        let sock = Socket::<u64>::bind(1).unwrap();
        let to = Addr::named("rx", 1);
        for batch in 0..MESSAGES / BATCH {
            for n in 0..BATCH {
                sock.send(to, batch * BATCH + n);
            }
            sleep(Duration::from_millis(1)).await;
        }
        // Let the last batch land.
        sleep(Duration::from_millis(100)).await;
    });
    let started = Instant::now();
    let report = sim.run_seed(7);
    let wall = started.elapsed().as_secs_f64();
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    MESSAGES as f64 / wall
}

/// The same shape with nothing but a heap: push a batch of (deliver_at, seq) with a latency
/// from a cheap PRNG, advance the clock, pop what is due.
fn bare_heap() -> f64 {
    let started = Instant::now();
    let mut heap: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
    let (mut now, mut seq, mut state) = (0u64, 0u64, 0x9e37_79b9_7f4a_7c15u64);
    let mut delivered = 0u64;
    for _ in 0..MESSAGES / BATCH {
        for _ in 0..BATCH {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let latency_ns = (1 + state % 10) * 1_000_000;
            seq += 1;
            heap.push(Reverse((now + latency_ns, seq)));
        }
        now += 1_000_000;
        while heap.peek().is_some_and(|Reverse((at, _))| *at <= now) {
            black_box(heap.pop());
            delivered += 1;
        }
    }
    while let Some(x) = heap.pop() {
        black_box(x);
        delivered += 1;
    }
    assert_eq!(delivered, MESSAGES);
    MESSAGES as f64 / started.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("rates are finite"));
    v[v.len() / 2]
}

fn main() {
    let plain = median((0..RUNS).map(|_| sim_run(Faults::Off)).collect());
    let faulty = median(
        (0..RUNS)
            .map(|_| sim_run(Faults::Fixed(FaultProfile::EVERYTHING)))
            .collect(),
    );
    let heap = median((0..RUNS).map(|_| bare_heap()).collect());
    println!(
        "net/datagrams, no faults:       {:>12.0} messages/s (median of {RUNS})",
        plain
    );
    println!(
        "net/datagrams, every fault on:  {:>12.0} messages sent/s (median of {RUNS}; some lost)",
        faulty
    );
    println!(
        "bare heap of (deliver_at, seq): {:>12.0} messages/s (median of {RUNS})",
        heap
    );
    println!(
        "simulator / bare heap: {:.1}x slower, {:.0} ns per message",
        heap / plain,
        1e9 / plain
    );
}
