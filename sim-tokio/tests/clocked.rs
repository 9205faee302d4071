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
