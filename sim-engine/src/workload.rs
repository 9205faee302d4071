//! Workload helpers: how many operations a client issues, and quiet periods between them.
//!
//! A client that always has something to say hides a whole class of defect: whatever a
//! system only repairs when traffic arrives (a follower that notices a gap on the next batch,
//! a cache refreshed on the next request) is repaired before anyone can look. Leaving the
//! system alone is therefore a deliberate choice of the workload, drawn from the input like
//! every other decision, so it shrinks and fuzzes with the rest: [`Quiet::after_op`] draws,
//! after each operation, whether to let virtual time pass with no client traffic, and for
//! how long. Quiet periods can be switched off for a run (`--quiet off`, carried by
//! `sim_core::system::RunOptions::quiet`) so their effect can be measured: a run with them off
//! draws nothing for them.
//!
//! Every draw here has its own label (`workload.ops`, `workload.think_ms`,
//! `workload.quiet`, `workload.quiet_ms`), shared by every system that uses the helper.
//!
//! ```
//! use std::time::Duration;
//! use sim_core::sim::{Config, Sim};
//! use sim_core::workload::{self, Quiet};
//!
//! let mut sim = Sim::new(Config::default());
//! sim.client("client", |_| async {
//!     let quiet = Quiet { enabled: true, per_mille: 500, longest: Duration::from_secs(30) };
//!     for _ in 0..workload::op_count(8) {
//!         // ... one operation ...
//!         quiet.after_op().await;
//!     }
//! });
//! assert!(sim.run_seed(4).outcome.class.is_pass());
//! ```

use std::time::Duration;

use crate::choice::Choices;
use crate::choice::PER_MILLE;
use crate::sim;
use crate::time::sleep;

/// Quiet periods between a client's operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quiet {
    /// Whether quiet periods happen at all; when off, [`Quiet::after_op`] draws nothing.
    pub enabled: bool,
    /// Per thousand operations: a quiet period follows.
    pub per_mille: u64,
    /// The longest quiet period (each is drawn in `1 ms..=` this).
    pub longest: Duration,
}

impl Quiet {
    /// Draws whether a quiet period follows this operation and, if so, sleeps through it.
    /// Returns how long it stayed quiet. Must be called from a task in a simulation.
    pub async fn after_op(&self) -> Duration {
        if !self.enabled || self.per_mille == 0 {
            return Duration::ZERO;
        }
        debug_assert!(
            self.per_mille <= PER_MILLE,
            "quiet per_mille {} over {PER_MILLE}",
            self.per_mille
        );
        if !sim::draw(|s| s.chance(WORKLOAD_QUIET.name(), self.per_mille, PER_MILLE)) {
            return Duration::ZERO;
        }
        let longest_ms = (self.longest.as_millis() as u64).max(1);
        let ms = sim::draw(|s| s.range_inclusive(WORKLOAD_QUIET_MS.name(), 1, longest_ms));
        let quiet = Duration::from_millis(ms);
        sleep(quiet).await;
        quiet
    }
}

/// The op-count naming rule belongs to the input encoding (it decides how the mutator and
/// the shrinker treat a draw), so it lives beside [`crate::choice::lanes::Lane`].
pub use crate::choice::lanes::is_op_count_label;

use crate::choice::lanes::Label;

// The labels this part draws, each declared with its lane: a label whose text would read
// another lane does not compile.
const WORKLOAD_OPS: Label = Label::workload("workload.ops");
const WORKLOAD_QUIET: Label = Label::workload("workload.quiet");
const WORKLOAD_QUIET_MS: Label = Label::workload("workload.quiet_ms");
const WORKLOAD_THINK_MS: Label = Label::workload("workload.think_ms");

/// How many operations a client issues: drawn in `1..=max` (1 is the simplest). Must be
/// called from within a simulation.
pub fn op_count(max: u64) -> u64 {
    1 + sim::draw(|s| s.below(WORKLOAD_OPS.name(), max.max(1)))
}

/// A short think time between two operations, drawn in `0..=max_ms` milliseconds (0, the
/// simplest, is no pause), slept through. Must be called from a task in a simulation.
pub async fn think(max_ms: u64) {
    let ms = sim::draw(|s| s.range_inclusive(WORKLOAD_THINK_MS.name(), 0, max_ms));
    if ms > 0 {
        sleep(Duration::from_millis(ms)).await;
    }
}
