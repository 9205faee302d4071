//! The comparison workload, shared by the engine benchmark and the cross-framework
//! comparison (`benches/compare` at the repository root): 3 nodes, a client doing 100
//! request/response round trips alternating between two echo servers, uniform 1-10 ms latency,
//! a 1 s timeout per request, and a never-ending 100 ms heartbeat task on every node.
//!
//! `sim_workload` runs it on sim-core; `bare_workload` is the same workload as a hand-written
//! discrete-event loop (a heap of `(time, seq, event)`), the baseline for the engine's cost.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Duration;

use sim_core::choice::{Choices, Seeded};
use sim_core::net::{Addr, Socket};
use sim_core::rt::spawn;
use sim_core::sim::{Config, Sim};
use sim_core::time::{interval, timeout};

/// Round trips per run.
pub const ROUND_TRIPS: u64 = 100;

/// A task that ticks every 100 ms and never ends.
pub async fn heartbeat() {
    let mut tick = interval(Duration::from_millis(100));
    loop {
        tick.tick().await;
    }
}

/// Runs the workload on sim-core; returns (simulated nanoseconds, history events).
pub fn sim_workload(seed: u64) -> (u64, u64) {
    let mut sim = Sim::new(Config::default());
    for name in ["echo1", "echo2"] {
        sim.node(name, |_| async {
            spawn(heartbeat());
            let sock = Socket::<u64>::bind(1).unwrap();
            loop {
                let (from, n) = sock.recv().await;
                sock.send(from, n);
            }
        });
    }
    sim.client("client", |_| async {
        spawn(heartbeat());
        let sock = Socket::<u64>::bind(1).unwrap();
        let servers = [Addr::named("echo1", 1), Addr::named("echo2", 1)];
        for n in 0..ROUND_TRIPS {
            sock.send(servers[(n % 2) as usize], n);
            let reply = timeout(Duration::from_secs(1), sock.recv()).await;
            assert_eq!(reply.map(|r| r.1), Ok(n));
        }
    });
    let o = sim.run_seed(seed).outcome;
    assert!(o.class.is_pass(), "{o:?}");
    (o.sim_time_ns, o.steps)
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Heartbeat(u8),
    ServerRecv { server: u8, n: u64 },
    ClientRecv { n: u64 },
    Timeout { n: u64 },
}

/// The same workload as a hand-written discrete-event loop: a heap of (time, seq, event).
/// Returns simulated nanoseconds.
pub fn bare_workload(seed: u64) -> u64 {
    let mut rng = Seeded::new(seed);
    let mut heap: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
    let mut seq = 0;
    let mut push = |heap: &mut BinaryHeap<_>, at: u64, ev: Ev| {
        seq += 1;
        heap.push(Reverse((at, seq, ev)));
    };
    const MS: u64 = 1_000_000;
    for node in 0..3 {
        push(&mut heap, 0, Ev::Heartbeat(node));
    }
    let latency = |rng: &mut Seeded| rng.range_inclusive("lat", 1, 10) * MS;
    let l = latency(&mut rng);
    push(&mut heap, l, Ev::ServerRecv { server: 0, n: 0 });
    push(&mut heap, 1000 * MS, Ev::Timeout { n: 0 });
    let mut outstanding = Some(0u64);
    let mut now = 0;
    let mut heartbeats = 0u64;
    while let Some(Reverse((at, _, ev))) = heap.pop() {
        now = at;
        match ev {
            Ev::Heartbeat(node) => {
                heartbeats += 1;
                push(&mut heap, now + 100 * MS, Ev::Heartbeat(node));
            }
            Ev::ServerRecv { n, .. } => {
                let l = latency(&mut rng);
                push(&mut heap, now + l, Ev::ClientRecv { n });
            }
            Ev::ClientRecv { n } => {
                assert_eq!(outstanding, Some(n));
                let next = n + 1;
                if next == ROUND_TRIPS {
                    break;
                }
                outstanding = Some(next);
                let l = latency(&mut rng);
                push(
                    &mut heap,
                    now + l,
                    Ev::ServerRecv {
                        server: (next % 2) as u8,
                        n: next,
                    },
                );
                push(&mut heap, now + 1000 * MS, Ev::Timeout { n: next });
            }
            Ev::Timeout { n } => {
                assert!(
                    outstanding != Some(n),
                    "no request times out at 10 ms latency"
                );
            }
        }
    }
    black_box(heartbeats);
    now
}
