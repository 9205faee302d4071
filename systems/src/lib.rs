//! Example systems under test for sim-core, each with its invariants and planted bugs.
//!
//! Every system is real protocol code written against sim-core's handles (sockets, timers,
//! spawn). Planted bugs are chosen at run time by name, never by editing code:
//! `sim run --system two-pc --bug first-vote-wins --seed 3`.
#![deny(missing_docs)]

// Linked for every binary that runs these systems: tokio-echo reads std's clock (see
// `sim_core::os`).
use sim_os as _;

pub mod echo;
pub mod fixtures;
pub mod raft_kv;
pub mod registry;
pub mod tokio_echo;
pub mod two_pc;
pub mod wal;

use sim_core::system::SystemSpec;

/// Every registered system, in the order `sim list` shows them.
pub fn all() -> Vec<SystemSpec> {
    vec![
        two_pc::SPEC,
        echo::SPEC,
        tokio_echo::SPEC,
        registry::SPEC,
        raft_kv::SPEC,
        wal::SPEC,
    ]
}
