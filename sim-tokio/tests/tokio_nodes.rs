//! Tokio nodes: determinism of what tokio hides, causality across nodes, crash and restart.
//!
//! This binary does not link the OS hooks, so its runtimes keep time with fences;
//! `clocked.rs` runs the same tests with the hooks linked, where runtimes read the hooks'
//! virtual clock.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use sim_core::sim::{Config, Sim};
use sim_tokio::net::UdpSocket;
use sim_tokio::runtime::knobs;
use sim_tokio::TokioSim;

/// An echo server and a client whose loop uses `select!` without `biased;` (two branches
/// always ready at once, so tokio's RNG picks), `tokio::spawn`, an mpsc channel and
/// `Instant` reads; every choice is noted into the history.
fn select_scenario() -> Sim {
    let mut sim = Sim::new(Config::default());
    sim.tokio_node("server", |_| async {
        let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = sock.recv_from(&mut buf).await.unwrap();
            sock.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.tokio_client("client", |_| async {
        let start = tokio::time::Instant::now();
        let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(4);
        tokio::spawn(async move {
            for i in 0.. {
                tokio::time::sleep(Duration::from_millis(3)).await;
                if tx.send(i).await.is_err() {
                    break;
                }
            }
        });
        let mut buf = [0u8; 16];
        for round in 0..20u32 {
            sock.send_to(&round.to_le_bytes(), "server:1")
                .await
                .unwrap();
            tokio::select! {
                _ = std::future::ready(()) => sim_core::sim::note("first"),
                _ = std::future::ready(()) => sim_core::sim::note("second"),
            }
            tokio::select! {
                got = sock.recv_from(&mut buf) => {
                    got.unwrap();
                    sim_core::sim::note("reply");
                }
                Some(i) = rx.recv() => sim_core::sim::note(&format!("tick {i}")),
                _ = tokio::time::sleep(Duration::from_millis(5)) => sim_core::sim::note("timeout"),
            }
            let elapsed = start.elapsed();
            sim_core::sim::note(&format!("at {elapsed:?}"));
        }
    });
    sim
}

#[test]
fn same_input_same_hash_a_thousand_times() {
    let first = select_scenario().run_seed(7);
    assert!(first.outcome.class.is_pass(), "{:?}", first.outcome);
    for _ in 0..1000 {
        let again = select_scenario().run_seed(7);
        assert_eq!(again.outcome.history_hash, first.outcome.history_hash);
    }
    // And the input matters: other seeds give other histories.
    let hashes: BTreeSet<u64> = (0..20)
        .map(|seed| select_scenario().run_seed(seed).outcome.history_hash)
        .collect();
    assert!(hashes.len() > 1, "every seed gave the same history");
}

#[cfg(tokio_unstable)]
#[test]
fn without_the_rng_seed_select_order_escapes_the_input() {
    knobs::SEED_TOKIO_RNG.with(|k| k.set(false));
    let hashes: BTreeSet<u64> = (0..50)
        .map(|_| select_scenario().run_seed(7).outcome.history_hash)
        .collect();
    knobs::SEED_TOKIO_RNG.with(|k| k.set(true));
    assert!(
        hashes.len() > 1,
        "unseeded tokio RNG still replayed: the determinism test could not fail"
    );
}

/// The client sends a request at 10 ms on zero-latency links; the server stamps when it got
/// it, the client when it sent it and when the reply came. Returns (sent, received, replied)
/// in ms.
fn causality_run(seed: u64) -> (u64, u64, u64) {
    let mut config = Config::default();
    config.net.latency_ms_min = 0;
    config.net.latency_ms_max = 0;
    config.net.jitter_ms_max = 0;
    let mut sim = Sim::new(config);
    let seen = Rc::new(RefCell::new((0u64, 0u64, 0u64)));
    let s = seen.clone();
    sim.tokio_node("server", move |_| {
        let s = s.clone();
        async move {
            let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
            let mut buf = [0u8; 4];
            let (n, from) = sock.recv_from(&mut buf).await.unwrap();
            s.borrow_mut().1 = sim_core::time::now().as_nanos() / 1_000_000;
            sock.send_to(&buf[..n], from).await.unwrap();
        }
    });
    let c = seen.clone();
    sim.tokio_client("client", move |_| {
        let c = c.clone();
        async move {
            let start = tokio::time::Instant::now();
            let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
            tokio::time::sleep(Duration::from_millis(10)).await;
            c.borrow_mut().0 = start.elapsed().as_millis() as u64;
            sock.send_to(b"req", "server:1").await.unwrap();
            let mut buf = [0u8; 4];
            sock.recv_from(&mut buf).await.unwrap();
            c.borrow_mut().2 = start.elapsed().as_millis() as u64;
        }
    });
    let report = sim.run_seed(seed);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let got = *seen.borrow();
    got
}

fn causal(seed: u64) -> bool {
    let (sent, received, replied) = causality_run(seed);
    sent == 10 && received == 10 && replied == 10
}

#[test]
fn zero_latency_reply_is_never_seen_before_its_request() {
    for seed in 0..50 {
        assert!(causal(seed), "seed {seed}: {:?}", causality_run(seed));
    }
}

#[test]
fn without_the_stop_at_the_fence_the_causality_test_fails() {
    // Fences are how a runtime keeps time without the OS hooks' clock (and a clocked runtime
    // has no fence to remove: tokio's time is the world's).
    knobs::CLOCKED.with(|k| k.set(false));
    knobs::STOP_AT_ADVANCE.with(|k| k.set(false));
    let broken = (0..10).any(|seed| !causal(seed));
    knobs::STOP_AT_ADVANCE.with(|k| k.set(true));
    knobs::CLOCKED.with(|k| k.set(true));
    assert!(
        broken,
        "running ahead went unnoticed: the causality test could not fail"
    );
}

/// Counts live tasks of a node: each holds a guard.
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

#[test]
fn crash_mid_select_leaves_nothing_running() {
    for seed in 0..200 {
        let mut sim = Sim::new(Config::default());
        // Live tasks per incarnation, and whether a dead incarnation acted after its crash.
        let counters: Rc<Vec<Arc<AtomicI64>>> =
            Rc::new((0..3).map(|_| Arc::new(AtomicI64::new(0))).collect());
        let zombie = Rc::new(Cell::new(false));
        let (cs, zs) = (counters.clone(), zombie.clone());
        sim.tokio_node("server", move |ctx| {
            let counter = cs[ctx.incarnation() as usize].clone();
            let zombie = zs.clone();
            async move {
                let _main = live(&counter);
                let inc = ctx.incarnation();
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
                let c = counter.clone();
                tokio::task::spawn_local(async move {
                    let _g = live(&c);
                    std::future::pending::<()>().await;
                });
                let sock = UdpSocket::bind("0.0.0.0:1").await.unwrap();
                let mut buf = [0u8; 4];
                loop {
                    tokio::select! {
                        _ = rx.recv() => {}
                        _ = sock.recv_from(&mut buf) => {}
                        _ = tokio::time::sleep(Duration::from_micros(1500)) => {}
                    }
                    if !sim_core::node::is_up("server")
                        || sim_core::node::lookup("server").is_none()
                    {
                        zombie.set(true);
                    }
                    let _ = inc;
                }
            }
        });
        let cs = counters.clone();
        sim.tokio_client("nemesis", move |_| {
            let cs = cs.clone();
            async move {
                let sock = UdpSocket::bind("0.0.0.0:2").await.unwrap();
                for inc in 0..2usize {
                    let wait = 1 + (seed % 7) * 3 + inc as u64;
                    tokio::time::sleep(Duration::from_micros(wait * 700)).await;
                    sock.send_to(b"x", "server:1").await.unwrap();
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    assert!(
                        cs[inc].load(Ordering::SeqCst) > 0,
                        "incarnation {inc} never ran"
                    );
                    sim_core::node::crash("server").unwrap();
                    assert_eq!(
                        cs[inc].load(Ordering::SeqCst),
                        0,
                        "tasks of incarnation {inc} outlived the crash"
                    );
                    sim_core::node::restart("server").unwrap();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        let report = sim.run_seed(seed);
        assert!(
            report.outcome.class.is_pass(),
            "seed {seed}: {:?}",
            report.outcome
        );
        assert!(!zombie.get(), "seed {seed}: a crashed incarnation acted");
        // The run's teardown drops the last incarnation too.
        assert!(
            counters.iter().all(|c| c.load(Ordering::SeqCst) == 0),
            "seed {seed}: tasks leaked"
        );
    }
}

/// A tokio task's panic is caught by tokio (its `JoinHandle` reads `JoinError`) and the code
/// goes on; the run must still fail, and its trace must end with the panic on that node.
#[test]
fn a_panic_caught_inside_a_tokio_node_fails_the_run_and_is_in_the_trace() {
    for tokio_node in [true, false] {
        let mut sim = Sim::new(Config {
            recording: sim_core::trace::Recording::Full,
            ..Config::default()
        });
        let work = || async {
            tokio::time::sleep(Duration::from_millis(2)).await;
            let missing: Option<u32> = std::hint::black_box(None);
            missing.expect("the value is there");
        };
        if tokio_node {
            sim.tokio_client("n", move |_| async move {
                let joined = tokio::task::spawn_local(work()).await;
                assert!(joined.unwrap_err().is_panic());
                tokio::time::sleep(Duration::from_millis(5)).await;
            });
        } else {
            sim.client("n", move |_| async move {
                sim_core::time::sleep(Duration::from_millis(1)).await;
                // Native tasks: the panic fails the run where it happens.
                let _ = sim_core::rt::spawn(async {
                    sim_core::time::sleep(Duration::from_millis(2)).await;
                })
                .await;
                let missing: Option<u32> = std::hint::black_box(None);
                missing.expect("the value is there");
            });
        }
        let report = sim.run_seed(0);
        let o = &report.outcome;
        assert_eq!(o.class, sim_core::report::Class::Panic, "{o:?}");
        assert!(o.message.contains("the value is there"), "{}", o.message);
        if tokio_node {
            assert!(
                o.message.contains("caught by the code under test"),
                "{}",
                o.message
            );
        }
        let events = report.history.events();
        let panic_line = events
            .iter()
            .rev()
            .find(|e| e.detail.contains("panicked"))
            .expect("a panic line in the trace");
        assert_eq!(panic_line.node.as_deref(), Some("n"), "{panic_line:?}");
        assert!(panic_line.detail.contains("the value is there"));
    }
}
