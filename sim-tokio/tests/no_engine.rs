//! Built without the `fenced` feature (`cargo test -p sim-tokio --no-default-features`, as CI
//! does): a binary without the OS hooks has no way to keep a tokio node's time, and the run
//! must say so, naming what to link or turn on, rather than hang or pass.
#![cfg(not(feature = "fenced"))]

use sim_core::sim::{Config, Sim};
use sim_tokio::TokioSim;

#[test]
fn without_hooks_or_fenced_a_tokio_node_fails_its_run_saying_why() {
    let mut sim = Sim::new(Config::default());
    sim.tokio_client("client", |_| async {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    });
    let outcome = sim.run_seed(0).outcome;
    assert!(outcome.class.is_failure(), "{outcome:?}");
    for fix in ["use sim_os as _;", "tokio_unstable", "`fenced` feature"] {
        assert!(
            outcome.message.contains(fix),
            "{fix:?} not in {:?}",
            outcome.message
        );
    }
}
