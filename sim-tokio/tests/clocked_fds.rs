//! Clocked tokio runtimes (OS hooks linked) close what they open: each opens an epoll instance
//! and an event fd, and a crash or the end of the run must close both. A binary of its own,
//! with one test: the count of open descriptors is the whole process's.

use std::time::Duration;

use sim_core::sim::{Config, Sim};
use sim_os as _;
use sim_tokio::TokioSim;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

#[test]
fn crashed_clocked_runtimes_close_what_they_opened() {
    // Each clocked runtime opens an epoll instance and an event fd; a crash or the end of the
    // run must close both.
    let before = open_fds();
    for seed in 0..300 {
        let mut sim = Sim::new(Config::default());
        sim.tokio_node("server", |_| async {
            let mut tick = tokio::time::interval(Duration::from_millis(1));
            loop {
                tick.tick().await;
            }
        });
        sim.tokio_client("nemesis", move |_| async move {
            for _ in 0..2 {
                tokio::time::sleep(Duration::from_millis(1 + seed % 5)).await;
                sim_core::node::crash("server").unwrap();
                sim_core::node::restart("server").unwrap();
            }
        });
        assert!(sim.run_seed(seed).outcome.class.is_pass());
    }
    assert_eq!(open_fds(), before, "file descriptors leaked");
}
