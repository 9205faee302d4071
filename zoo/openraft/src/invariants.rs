//! What must hold: Raft's safety properties, observed through openraft's storage calls, and
//! linearizability of what the clients saw.
//!
//! The log store and the state machine of every replica report to one [`Observer`] (outside
//! the nodes, so it survives their crashes); each report is checked at once and the first
//! violation of each property is kept for the scenario's invariant of that name:
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

use sim_core::check::kv::{Kv, KvInput, KvOutput};
use sim_core::check::{self, OpLog};

use crate::types::{Entry, NodeId};

/// The invariants' names, in the order the scenario registers them.
pub const RAFT_INVARIANTS: [&str; 5] = [
    "election-safety",
    "log-matching",
    "leader-completeness",
    "state-machine-safety",
    "committed-on-majority",
];

/// Voters in the cluster, and how many make a majority.
const VOTERS: usize = 5;
const MAJORITY: usize = VOTERS / 2 + 1;

/// An entry as the checks compare it: its term and its payload (as openraft prints it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The term of the leader that proposed it.
    pub term: u64,
    /// The payload's `Debug` text.
    pub payload: String,
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
#[derive(Debug, Default)]
pub struct Observer {
    /// term → the node a committed vote of that term names.
    leaders: BTreeMap<u64, NodeId>,
    /// (index, term) → the entry and the term before it, for every entry ever appended.
    written: BTreeMap<(u64, u64), (Seen, Option<u64>)>,
    /// index → the committed entry, and an upper bound of the term it was committed in.
    committed: BTreeMap<u64, (Seen, u64)>,
    /// index → the node that applied it first and the entry.
    applied: BTreeMap<u64, (NodeId, Seen)>,
    /// node → index → term of each entry it holds durably (synced, not truncated since).
    durable: BTreeMap<NodeId, BTreeMap<u64, u64>>,
    violations: BTreeMap<&'static str, String>,
    /// The clients' history.
    pub ops: OpLog<KvInput, KvOutput>,
    /// Clients still running their workload.
    pub clients_running: usize,
    linearizable: Option<Result<(), String>>,
}

impl Observer {
    /// Nothing observed yet; `clients` clients about to run.
    pub fn new(clients: usize) -> Self {
        Observer {
            clients_running: clients,
            ..Observer::default()
        }
    }

    fn violate(&mut self, name: &'static str, message: String) {
        self.violations.entry(name).or_insert(message);
    }

    /// The first violation of `name`, if any.
    pub fn check(&self, name: &str) -> Result<(), String> {
        match self.violations.get(name) {
            Some(message) => Err(message.clone()),
            None => Ok(()),
        }
    }

    /// `node` persisted a committed vote: `leader` leads `term`. If `node` is the leader, `log`
    /// is its log at that moment.
    pub fn committed_vote(
        &mut self,
        node: NodeId,
        term: u64,
        leader: NodeId,
        log: &BTreeMap<u64, Entry>,
    ) {
        let known = *self.leaders.entry(term).or_insert(leader);
        if known != leader {
            self.violate(
                "election-safety",
                format!("n{known} and n{leader} both lead term {term} (n{node} persisted the vote for n{leader})"),
            );
        }
        if node != leader {
            return;
        }
        let missing = self.committed.iter().find(|(index, (seen, in_term))| {
            *in_term < term && log.get(index).map(Seen::of).as_ref() != Some(seen)
        });
        if let Some((&index, (seen, in_term))) = missing {
            let has = log.get(&index).map(Seen::of);
            self.violate(
                "leader-completeness",
                format!(
                    "n{node} leads term {term} without entry {index} (term {}, {}) committed by term {in_term}; its log has {has:?} there",
                    seen.term, seen.payload
                ),
            );
        }
    }

    /// `node` appended `entry` after an entry of `prev_term` (`None`: at index 0).
    pub fn appended(&mut self, node: NodeId, index: u64, prev_term: Option<u64>, entry: &Entry) {
        let seen = Seen::of(entry);
        let (earlier, earlier_prev) = self
            .written
            .entry((index, seen.term))
            .or_insert_with(|| (seen.clone(), prev_term))
            .clone();
        if earlier != seen || earlier_prev != prev_term {
            self.violate(
                "log-matching",
                format!(
                    "n{node} appended {seen:?} after term {prev_term:?} at index {index}, but another log held {earlier:?} after term {earlier_prev:?} at the same index and term"
                ),
            );
        }
    }

    /// `node` recovered `log` from its disk at a start: what it holds durably.
    pub fn recovered(&mut self, node: NodeId, log: &BTreeMap<u64, Entry>) {
        let held = log
            .iter()
            .map(|(&i, e)| (i, e.log_id.leader_id.term))
            .collect();
        self.durable.insert(node, held);
    }

    /// `node` synced entries `(index, term)` it had appended.
    pub fn synced(&mut self, node: NodeId, entries: &[(u64, u64)]) {
        self.durable
            .entry(node)
            .or_default()
            .extend(entries.iter().copied());
    }

    /// `node` cut its log from `index` on (counted at once, before the cut is synced).
    pub fn truncated(&mut self, node: NodeId, index: u64) {
        if let Some(held) = self.durable.get_mut(&node) {
            held.split_off(&index);
        }
    }

    /// `node`, whose vote is of `term`, applied `entry` to its state machine.
    pub fn applied(&mut self, node: NodeId, term: u64, entry: &Entry) {
        let index = entry.log_id.index;
        let seen = Seen::of(entry);
        let (first, earlier) = self
            .applied
            .entry(index)
            .or_insert_with(|| (node, seen.clone()))
            .clone();
        if earlier != seen {
            self.violate(
                "state-machine-safety",
                format!("n{node} applied {seen:?} at index {index}, but n{first} applied {earlier:?} there"),
            );
        }
        let term_of_entry = entry.log_id.leader_id.term;
        let holders: Vec<NodeId> = self
            .durable
            .iter()
            .filter(|(_, held)| held.get(&index) == Some(&term_of_entry))
            .map(|(&n, _)| n)
            .collect();
        if holders.len() < MAJORITY {
            self.violate(
                "committed-on-majority",
                format!(
                    "n{node} applied entry {index} (term {term_of_entry}, {}) as committed, but only {holders:?} of {VOTERS} voters hold it durably",
                    seen.payload
                ),
            );
        }
        let committed = self
            .committed
            .entry(index)
            .or_insert_with(|| (seen.clone(), term));
        committed.1 = committed.1.min(term);
    }

    /// The `linearizable` invariant: decided once, when the last client finished.
    pub fn check_linearizable(&mut self) -> Result<(), String> {
        if self.clients_running > 0 {
            return Ok(());
        }
        let ops = &self.ops;
        self.linearizable
            .get_or_insert_with(|| match check::linearizable(&Kv, ops) {
                Ok(()) => Ok(()),
                Err(e) => Err(e.to_string()),
            })
            .clone()
    }
}
