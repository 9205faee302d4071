//! What must hold: Raft's safety properties over what the nodes report, and linearizability
//! of what the clients saw.
//!
//! Nodes report to an [`Observer`] that lives outside them (it survives their crashes); each
//! report is checked at once and the first violation of each property is kept for the
//! invariant of that name:
//!
//! * `election-safety`: at most one leader per term.
//! * `leader-completeness`: a node that leads term `T` holds, at every index, the entry that
//!   was applied there in an earlier term (committed entries are never lost or replaced).
//! * `state-machine-safety`: every node that applies an index applies the same entry (term
//!   and data) there, in every incarnation.
//! * `linearizable` (once the workload is done): the clients' history has a linearization
//!   under the key-value register model ([`sim_core::check`]).

use std::collections::BTreeMap;

use sim_core::check::kv::{Kv, KvInput, KvOutput};
use sim_core::check::{self, OpLog};

/// The invariants checked as they happen, in the order the scenario registers them.
pub const RAFT_INVARIANTS: [&str; 3] = [
    "election-safety",
    "leader-completeness",
    "state-machine-safety",
];

/// An entry as the checks compare it: its term and a digest of its data.
pub type EntryId = (u64, u64);

/// Everything the checks know.
#[derive(Debug, Default)]
pub struct Observer {
    leaders: BTreeMap<u64, u64>,
    /// The entry first applied at each index, the node that applied it, and the lowest term
    /// any node was in when it applied it (the entry was committed in that term or before).
    applied: BTreeMap<u64, (u64, EntryId, u64)>,
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

    /// Node `node` leads `term`; `entry_at(i)` is its log's entry `i` (`None` past its end).
    pub fn became_leader(
        &mut self,
        node: u64,
        term: u64,
        entry_at: impl Fn(u64) -> Option<EntryId>,
    ) {
        if let Some(&other) = self.leaders.get(&term) {
            if other != node {
                self.violate(
                    "election-safety",
                    format!("n{other} and n{node} are both leaders of term {term}"),
                );
            }
        }
        self.leaders.insert(term, node);
        // §5.4: an entry committed in a term is in the log of every leader of a later term.
        // (A leader of an earlier term, elected late from votes granted long ago, need not
        // hold it: it can no longer commit anything.) The term an entry was committed in is
        // bounded by the term of the first node that applied it, so this checks leaders of
        // terms after that bound.
        let missing = self
            .applied
            .iter()
            .find(|(&index, (_, id, by_term))| *by_term < term && entry_at(index) != Some(*id));
        if let Some((&index, &(by, id, _))) = missing {
            let has = entry_at(index);
            self.violate(
                "leader-completeness",
                format!(
                    "n{node} leads term {term} without entry {index} (term {}, data #{:016x}) that n{by} applied; its log has {has:?} there",
                    id.0, id.1
                ),
            );
        }
    }

    /// `node`, in `term`, applied `id` at `index`.
    pub fn applied(&mut self, node: u64, index: u64, id: EntryId, term: u64) {
        let slot = self.applied.entry(index).or_insert((node, id, term));
        slot.2 = slot.2.min(term);
        let (first, earlier, _) = *slot;
        if earlier != id {
            self.violate(
                "state-machine-safety",
                format!(
                    "n{node} applied (term {}, data #{:016x}) at index {index}, but n{first} applied (term {}, data #{:016x}) there",
                    id.0, id.1, earlier.0, earlier.1
                ),
            );
        }
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
