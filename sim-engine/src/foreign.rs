//! Hooks for foreign runtimes: what a runtime driven *by* a node (say, a paused tokio runtime
//! advanced by sleep fences) needs to know about the world, read without changing it.
//!
//! A foreign runtime keeps its own clock. It may move that clock forward only as far as the
//! world stays still: [`next_instant`] says how far that is, so the runtime never runs past
//! something another node (or the network) does.
//!
//! ```
//! use std::time::Duration;
//! use sim_core::foreign::next_instant;
//! use sim_core::sim::{Config, Sim};
//! use sim_core::time::{now, sleep, Instant};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.node("ticker", |_| async { sleep(Duration::from_millis(7)).await });
//! sim.client("c", |_| async {
//!     sleep(Duration::from_millis(1)).await;
//!     // Only the ticker's timer is pending: the world next acts at 7 ms.
//!     assert_eq!(next_instant(), Some(Instant::from_nanos(7_000_000)));
//!     assert!(next_instant() > Some(now()));
//! });
//! assert!(sim.run_seed(0).outcome.class.is_pass());
//! ```

use crate::time::Instant;
use crate::world::with;

/// The earliest instant at which the world, without the running task, does anything: now if
/// another task is ready or something is due now, else the next due timer or delivery, or
/// `None` when nothing is pending. Must be called from a task inside a simulation.
pub fn next_instant() -> Option<Instant> {
    with(|w| {
        w.exec_mut().drain_wakes();
        let now = w.now_ns();
        if w.exec().others_ready() {
            return Some(Instant::from_nanos(now));
        }
        w.clock_mut()
            .next_due()
            .map(|at| Instant::from_nanos(at.max(now)))
    })
}
