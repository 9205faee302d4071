//! What must hold: Raft's safety properties over what the nodes report, and linearizability
//! of what the clients saw.
//!
//! Nodes report to an [`Observer`] that lives outside them (it survives their crashes); each
//! report is checked at once by sim-core's [`RaftSafety`] and the first violation of each
//! property is kept for the invariant of that name:
//!
//! * `election-safety`: at most one leader per term.
//! * `leader-completeness`: a node that leads term `T` holds, at every index, the entry that
//!   was applied there in an earlier term (committed entries are never lost or replaced).
//! * `state-machine-safety`: every node that applies an index applies the same entry (term
//!   and data) there, in every incarnation.
//! * `linearizable` (once the workload is done): the clients' history has a linearization
//!   under the key-value register model ([`sim_core::check`]).

use std::fmt;

use sim_core::check::kv::Kv;
use sim_core::check::raft::RaftSafety;
use sim_core::check::ClientHistory;

/// The invariants checked as they happen, in the order the scenario registers them (the
/// properties of [`RaftSafety`] this harness reports to).
pub const RAFT_INVARIANTS: [&str; 3] = [
    "election-safety",
    "leader-completeness",
    "state-machine-safety",
];

/// An entry as the checks compare it: its term and a digest of its data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EntryId {
    /// The term of the leader that created it.
    pub term: u64,
    /// FNV-1a of its data.
    pub digest: u64,
}

impl fmt::Debug for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "term {}, data #{:016x}", self.term, self.digest)
    }
}

/// Everything the checks know.
#[derive(Debug, Default)]
pub struct Observer {
    safety: RaftSafety<EntryId>,
    /// The clients' history, judged once every client has finished.
    pub clients: ClientHistory<Kv>,
}

impl Observer {
    /// Nothing observed yet; `clients` clients about to run.
    pub fn new(clients: usize) -> Self {
        Observer {
            clients: ClientHistory::new(Kv, clients),
            ..Observer::default()
        }
    }

    /// The first violation of `name`, if any.
    pub fn check(&self, name: &str) -> Result<(), String> {
        self.safety.check(name)
    }

    /// Node `node` leads `term`; `entry_at(i)` is its log's entry `i` (`None` past its end).
    pub fn became_leader(
        &mut self,
        node: u64,
        term: u64,
        entry_at: impl Fn(u64) -> Option<EntryId>,
    ) {
        self.safety.became_leader(node, term, entry_at);
    }

    /// `node`, in `term`, applied `id` at `index`.
    pub fn applied(&mut self, node: u64, index: u64, id: EntryId, term: u64) {
        self.safety.applied(node, index, id, term);
    }
}
