//! Tokio nodes with the OS hooks linked, where each runtime reads the hooks' virtual clock and
//! learns its next timer from its idle wait: the tests of `tokio_nodes.rs` again, and what
//! only this mode promises (event-driven steps; `clocked_fds.rs` checks file descriptors).

use std::time::Duration;

use sim_core::sim::{Config, Sim};
use sim_os as _;
use sim_tokio::runtime::{knobs, steps_taken};
use sim_tokio::TokioSim;

#[path = "tokio_nodes.rs"]
mod tokio_nodes;

/// Two tokio nodes ticking every 100 ms for a virtual second; returns runtime steps taken.
fn two_tickers_steps(clocked: bool) -> u64 {
    knobs::CLOCKED.with(|k| k.set(clocked));
    let mut sim = Sim::new(Config::default());
    for name in ["a", "b"] {
        sim.tokio_node(name, |_| async {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tick.tick().await;
            }
        });
    }
    sim.tokio_client("client", |_| async {
        tokio::time::sleep(Duration::from_secs(1)).await;
    });
    let before = steps_taken();
    let report = sim.run_seed(3);
    knobs::CLOCKED.with(|k| k.set(true));
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    steps_taken() - before
}

#[test]
fn a_clocked_node_steps_only_when_it_has_work() {
    let clocked = two_tickers_steps(true);
    let fenced = two_tickers_steps(false);
    // One step per tick per node (2 x 11), the client's start and its sleep's end, and one
    // where tokio's hierarchical wheel moves a timer down a level (a timer over 64 ms away is
    // first due at the start of its coarser slot: tokio wakes there in production too).
    assert!(
        clocked <= 50,
        "clocked runtimes took {clocked} steps (fenced: {fenced})"
    );
    // Fenced runtimes creep past each other a millisecond at a time.
    assert!(
        fenced > 10 * clocked,
        "fenced {fenced} vs clocked {clocked}"
    );
}

/// A tokio node's tasks woken from outside its runtime — by a sim-core timer, and by a native
/// sim-core node through a `tokio::sync` channel — run at the instant of the wake. Tokio says
/// so by writing to its runtime's claimed wake-up fd, and only that write reaches the node:
/// nothing here goes through sim-tokio's network types.
#[test]
fn a_wake_from_outside_the_runtime_reaches_a_clocked_node() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
    let rx = Rc::new(RefCell::new(Some(rx)));
    let seen: Rc<RefCell<Vec<(String, u64)>>> = Rc::default();
    let mut sim = Sim::new(Config::default());
    sim.node("native", move |_| {
        let tx = tx.clone();
        async move {
            for i in 1..=3u64 {
                sim_core::time::sleep(Duration::from_millis(7)).await;
                tx.send(i).unwrap();
            }
        }
    });
    let (rx, seen_by_client) = (rx.clone(), seen.clone());
    sim.tokio_client("client", move |_| {
        let (mut rx, seen) = (rx.borrow_mut().take().unwrap(), seen_by_client.clone());
        async move {
            let ms = || sim_core::time::now().as_nanos() / 1_000_000;
            // A sim-core timer inside a `tokio::spawn`ed task.
            let timer = tokio::spawn(async {
                sim_core::time::sleep(Duration::from_millis(5)).await;
                sim_core::time::now().as_nanos() / 1_000_000
            });
            let fired_ms = timer.await.unwrap();
            seen.borrow_mut().push(("timer".into(), fired_ms));
            seen.borrow_mut().push(("timer seen".into(), ms()));
            // Messages from a native node, on the main task.
            for _ in 0..3 {
                let i = rx.recv().await.unwrap();
                seen.borrow_mut().push((format!("message {i}"), ms()));
            }
        }
    });
    let report = sim.run_seed(1);
    assert!(report.outcome.class.is_pass(), "{:?}", report.outcome);
    let expected: Vec<(String, u64)> = [
        ("timer", 5),
        ("timer seen", 5),
        ("message 1", 7),
        ("message 2", 14),
        ("message 3", 21),
    ]
    .iter()
    .map(|(what, at)| (what.to_string(), *at))
    .collect();
    assert_eq!(*seen.borrow(), expected);
}
