//! What must hold: Raft's safety properties (Figure 3 of the paper) and linearizability of
//! what the clients saw.
//!
//! Replicas report what they do to an [`Observer`] (outside the nodes, so it survives their
//! crashes); each report is checked at once and the first violation of each property is kept
//! for the scenario's invariant of that name:
//!
//! * `election-safety`: at most one leader per term.
//! * `log-matching`: two logs holding an entry with the same index and term hold the same
//!   entry there and agree on every entry before it. Checked by induction: every entry ever
//!   written at (index, term) is the same command after the same previous term.
//! * `leader-completeness`: a leader's log, when it is elected, holds every entry committed
//!   before (committed entries are never lost, across crashes and restarts).
//! * `state-machine-safety`: no two replicas apply different entries at one index (a
//!   committed entry is never changed).
//! * `linearizable` (checked once the workload is done): the clients' history has a
//!   linearization under the key-value register model; the message names the window.

use std::collections::BTreeMap;

use sim_core::check::kv::Kv;
use sim_core::check::ClientHistory;

use super::log::{Entry, Log};

/// The invariants' names, in the order the scenario registers them.
pub const RAFT_INVARIANTS: [&str; 4] = [
    "election-safety",
    "log-matching",
    "leader-completeness",
    "state-machine-safety",
];

/// Everything the checks know, reported by the replicas and clients.
#[derive(Debug, Default)]
pub struct Observer {
    leaders: BTreeMap<u64, u32>,
    /// (index, term) → (command, term at index - 1), for every entry ever written.
    written: BTreeMap<(u64, u64), Entry>,
    written_prev: BTreeMap<(u64, u64), u64>,
    /// Committed entries by index, as the leader that committed them had them, with the
    /// term it led.
    committed: BTreeMap<u64, (Entry, u64)>,
    /// The entry first applied at each index.
    applied: BTreeMap<u64, (u32, Entry)>,
    violations: BTreeMap<&'static str, String>,
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

    /// `node` became leader of `term` with `log`.
    pub fn became_leader(&mut self, node: u32, term: u64, log: &Log) {
        if let Some(&other) = self.leaders.get(&term) {
            if other != node {
                self.violate(
                    "election-safety",
                    format!("r{other} and r{node} are both leaders of term {term}"),
                );
            }
        }
        self.leaders.insert(term, node);
        // Leader completeness (§5.4): an entry committed in a term is in the log of every
        // leader of a later term. (A leader of an earlier term, elected late from votes it
        // was granted long ago, need not hold it: it cannot commit anything any more.)
        let missing = self
            .committed
            .iter()
            .find(|(&index, (entry, in_term))| *in_term < term && log.get(index) != Some(entry));
        if let Some((&index, (entry, in_term))) = missing {
            let has = log.get(index).copied();
            self.violate(
                "leader-completeness",
                format!(
                    "r{node} leads term {term} without entry {index} committed in term {in_term} ({entry:?}); its log has {has:?} there"
                ),
            );
        }
    }

    /// `node` wrote `entries` into its log from `index` on, after an entry of `prev_term`.
    pub fn wrote(&mut self, node: u32, index: u64, prev_term: u64, entries: &[Entry]) {
        let mut prev = prev_term;
        for (i, entry) in entries.iter().enumerate() {
            let at = (index + i as u64, entry.term);
            let earlier = *self.written.entry(at).or_insert(*entry);
            let earlier_prev = *self.written_prev.entry(at).or_insert(prev);
            if earlier != *entry || earlier_prev != prev {
                self.violate(
                    "log-matching",
                    format!(
                        "r{node} holds {entry:?} after term {prev} at index {}, but another log held {earlier:?} after term {earlier_prev} at the same index and term",
                        at.0
                    ),
                );
            }
            prev = entry.term;
        }
    }

    /// The leader of `term` committed `entry` at `index`.
    pub fn committed(&mut self, node: u32, term: u64, index: u64, entry: Entry) {
        let (earlier, _) = *self.committed.entry(index).or_insert((entry, term));
        if earlier != entry {
            self.violate(
                "state-machine-safety",
                format!("r{node} committed {entry:?} at index {index}, where {earlier:?} was committed before"),
            );
        }
    }

    /// `node` applied `entry` at `index` to its state machine.
    pub fn applied(&mut self, node: u32, index: u64, entry: Entry) {
        let (first, earlier) = *self.applied.entry(index).or_insert((node, entry));
        if earlier != entry {
            self.violate(
                "state-machine-safety",
                format!("r{node} applied {entry:?} at index {index}, but r{first} applied {earlier:?} there"),
            );
        }
    }
}
