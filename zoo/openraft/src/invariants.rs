//! What must hold: Raft's safety properties, observed through openraft's storage calls, and
//! linearizability of what the clients saw.
//!
//! The log store and the state machine of every replica report to one [`Observer`] (outside
//! the nodes, so it survives their crashes); each report is checked at once by sim-core's
//! [`RaftSafety`] and the first violation of each property is kept for the scenario's
//! invariant of that name:
//!
//! * `election-safety`: at most one leader per term. openraft persists a *committed* vote
//!   (granted by a quorum) naming the leader, on the leader itself when it is elected and on
//!   every follower that accepts it; two committed votes of one term naming different nodes
//!   are two leaders of that term (the crate is built with `single-term-leader`, standard
//!   Raft's rule).
//! * `log-matching`: every entry ever appended at (index, term) is the same entry, after the
//!   same previous term.
//! * `leader-completeness`: when a node persists a committed vote for itself (it leads term
//!   `T`), its log holds every entry known committed in an earlier term: committed entries
//!   are never lost. An entry is known committed once a state machine applied it; its commit
//!   term is bounded above by the applying replica's term at that moment (it learned the
//!   commit from a leader whose vote it had accepted), so the check never blames a late
//!   leader of an old term for an entry committed after it.
//! * `state-machine-safety`: no two state machines apply different entries at one index (a
//!   committed entry is never changed).
//! * `committed-on-majority`: an entry a state machine applies is committed, so it is durable
//!   (appended and synced, not truncated since) on a majority of the voters at that moment:
//!   what committed means. It fails at the moment of a commit that no quorum backs, before
//!   any later loss shows.
//! * `linearizable` (checked once the workload is done): the clients' history has a
//!   linearization under the key-value register model.

use std::collections::BTreeMap;
use std::fmt;

use sim_core::check::kv::Kv;
use sim_core::check::raft::RaftSafety;
use sim_core::check::ClientHistory;

use crate::types::{Entry, NodeId};

/// The invariants' names, in the order the scenario registers them.
pub const RAFT_INVARIANTS: [&str; 5] = [
    "election-safety",
    "log-matching",
    "leader-completeness",
    "state-machine-safety",
    "committed-on-majority",
];

/// Voters in the cluster.
const VOTERS: usize = 5;

/// An entry as the checks compare it: its term and its payload (as openraft prints it).
#[derive(Clone, PartialEq, Eq)]
pub struct Seen {
    /// The term of the leader that proposed it.
    pub term: u64,
    /// The payload's `Debug` text.
    pub payload: String,
}

impl fmt::Debug for Seen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "term {}, {}", self.term, self.payload)
    }
}

impl Seen {
    /// How the checks see `entry`.
    pub fn of(entry: &Entry) -> Seen {
        Seen {
            term: entry.log_id.leader_id.term,
            payload: format!("{:?}", entry.payload),
        }
    }
}

/// Everything the checks know, reported by the replicas and the clients.
#[derive(Debug)]
pub struct Observer {
    safety: RaftSafety<Seen>,
    /// The clients' history, judged once every client has finished.
    pub clients: ClientHistory<Kv>,
}

impl Observer {
    /// Nothing observed yet; `clients` clients about to run.
    pub fn new(clients: usize) -> Self {
        Observer {
            safety: RaftSafety::new().with_voters(VOTERS),
            clients: ClientHistory::new(Kv, clients),
        }
    }

    /// The first violation of `name`, if any.
    pub fn check(&self, name: &str) -> Result<(), String> {
        self.safety.check(name)
    }

    /// `node` persisted a committed vote of `term` for `leader`; `log` is `node`'s log.
    pub fn committed_vote(
        &mut self,
        node: NodeId,
        term: u64,
        leader: NodeId,
        log: &BTreeMap<u64, Entry>,
    ) {
        if node == leader {
            self.safety
                .became_leader(node, term, |index| log.get(&index).map(Seen::of));
        } else {
            self.safety.elected(term, leader);
        }
    }

    /// `node` appended `entry` at `index`, after an entry of `prev_term`.
    pub fn appended(&mut self, node: NodeId, index: u64, prev_term: Option<u64>, entry: &Entry) {
        let seen = Seen::of(entry);
        self.safety
            .appended(node, index, seen.term, prev_term, &seen);
    }

    /// `node` restarted with `log` on its disk.
    pub fn recovered(&mut self, node: NodeId, log: &BTreeMap<u64, Entry>) {
        let held = log.iter().map(|(&i, e)| (i, e.log_id.leader_id.term));
        self.safety.recovered(node, held);
    }

    /// `node`'s entries `(index, term)` are durable.
    pub fn synced(&mut self, node: NodeId, entries: &[(u64, u64)]) {
        self.safety.synced(node, entries.iter().copied());
    }

    /// `node` cut its log from `index` on.
    pub fn truncated(&mut self, node: NodeId, index: u64) {
        self.safety.truncated(node, index);
    }

    /// `node`, in `term`, applied `entry` (committed, as its state machine was told).
    pub fn applied(&mut self, node: NodeId, term: u64, entry: &Entry) {
        let entry_term = entry.log_id.leader_id.term;
        self.safety
            .applied_durable(node, entry.log_id.index, Seen::of(entry), entry_term, term);
    }
}
