//! Raft's safety properties, checked as the nodes report what they do.
//!
//! A harness for a Raft implementation (its own or a third-party crate's) reports elections,
//! appends, syncs and applied entries to one [`RaftSafety`] that lives outside the nodes, so
//! it survives their crashes. Each report is checked at once; the first violation of each
//! property is kept under its name ([`RaftSafety::check`]), ready for
//! [`crate::sim::Sim::invariant`]:
//!
//! * `election-safety`: at most one leader per term (§5.2).
//! * `log-matching`: two logs that hold an entry with the same index and term hold the same
//!   entry there, after the same term (§5.3).
//! * `leader-completeness`: a leader of term `T` holds every entry committed in a term before
//!   `T` (§5.4). The term an entry was committed in is bounded by the lowest term any node
//!   applied it in, so this checks leaders of terms after that bound: a leader of an earlier
//!   term, elected late from votes granted long ago, need not hold it (it can no longer
//!   commit anything).
//! * `state-machine-safety`: every node that applies an index applies the same entry there,
//!   in every incarnation (§5.4.3).
//! * `committed-on-majority`: an entry applied as committed is durable (synced, not
//!   truncated since) on a majority of the voters — only checked when the harness reports
//!   durability ([`RaftSafety::recovered`], [`RaftSafety::synced`],
//!   [`RaftSafety::truncated`]) and gave the voter count.
//!
//! Entries are compared as the harness describes them: any `E: Eq + Debug`, usually the
//! entry's term and a digest or the `Debug` text of its payload.
//!
//! ```
//! use sim_core::check::raft::RaftSafety;
//!
//! // Three voters; entries described as (term, payload).
//! let mut safety: RaftSafety<(u64, &str)> = RaftSafety::new().with_voters(3);
//! safety.became_leader(1, 1, |_| None);
//! safety.applied(1, 1, (1, "x=1"), 1);
//! // Node 2 leads term 2 without the entry node 1 applied: a committed write is lost.
//! safety.became_leader(2, 2, |_| None);
//! assert!(safety.check("leader-completeness").is_err());
//! assert!(safety.check("election-safety").is_ok());
//! ```

use std::collections::BTreeMap;
use std::fmt::Debug;

/// The names of every property [`RaftSafety`] checks, for registering invariants.
pub const RAFT_SAFETY: [&str; 5] = [
    "election-safety",
    "log-matching",
    "leader-completeness",
    "state-machine-safety",
    "committed-on-majority",
];

/// Raft's safety properties over the nodes' reports (see the [module docs](self)).
#[derive(Debug)]
pub struct RaftSafety<E> {
    /// Per term, its leader.
    leaders: BTreeMap<u64, u64>,
    /// Per (index, term), the entry first appended there and the term before it.
    written: BTreeMap<(u64, u64), (E, Option<u64>)>,
    /// Per index, the entry first applied there, the node that applied it, and the lowest
    /// term any node was in when it applied it.
    applied: BTreeMap<u64, Applied<E>>,
    /// Per node, what its disk holds: index to the term of the entry there.
    durable: BTreeMap<u64, BTreeMap<u64, u64>>,
    voters: Option<usize>,
    violations: BTreeMap<&'static str, String>,
}

#[derive(Debug)]
struct Applied<E> {
    by_node: u64,
    entry: E,
    lowest_term: u64,
}

impl<E> Default for RaftSafety<E> {
    fn default() -> Self {
        RaftSafety {
            leaders: BTreeMap::new(),
            written: BTreeMap::new(),
            applied: BTreeMap::new(),
            durable: BTreeMap::new(),
            voters: None,
            violations: BTreeMap::new(),
        }
    }
}

impl<E: Clone + Eq + Debug> RaftSafety<E> {
    /// Nothing reported yet; `committed-on-majority` is off until [`RaftSafety::with_voters`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks `committed-on-majority` against `voters` voters (a fixed membership).
    pub fn with_voters(mut self, voters: usize) -> Self {
        assert!(voters > 0, "a Raft group has at least one voter");
        self.voters = Some(voters);
        self
    }

    fn violate(&mut self, name: &'static str, message: String) {
        debug_assert!(RAFT_SAFETY.contains(&name), "unlisted property {name}");
        self.violations.entry(name).or_insert(message);
    }

    /// The first violation of the property `name` (one of [`RAFT_SAFETY`]), if any.
    pub fn check(&self, name: &str) -> Result<(), String> {
        match self.violations.get(name) {
            Some(message) => Err(message.clone()),
            None => Ok(()),
        }
    }

    /// `node` leads `term` (or a node durably voted for it: report whichever the harness
    /// sees first); `entry_at(i)` is the leader's log entry at `i`, `None` past its end.
    pub fn became_leader(&mut self, node: u64, term: u64, entry_at: impl Fn(u64) -> Option<E>) {
        self.elected(term, node);
        let missing = self.applied.iter().find(|(&index, applied)| {
            applied.lowest_term < term && entry_at(index).as_ref() != Some(&applied.entry)
        });
        if let Some((&index, applied)) = missing {
            let message = format!(
                "n{node} leads term {term} without entry {index} ({:?}) that n{} applied by term {}; its log has {} there",
                applied.entry,
                applied.by_node,
                applied.lowest_term,
                entry_at(index).map_or("nothing".to_string(), |e| format!("({e:?})"))
            );
            self.violate("leader-completeness", message);
        }
    }

    /// Some node learned that `leader` leads `term` (for `election-safety` alone: a node's
    /// durable vote, a heartbeat; [`RaftSafety::became_leader`] reports this too).
    pub fn elected(&mut self, term: u64, leader: u64) {
        let known = *self.leaders.entry(term).or_insert(leader);
        if known != leader {
            self.violate(
                "election-safety",
                format!("n{known} and n{leader} are both leaders of term {term}"),
            );
        }
    }

    /// `node` appended `entry` of `term` at `index`, after an entry of `prev_term` (`None`
    /// at the start of the log).
    pub fn appended(
        &mut self,
        node: u64,
        index: u64,
        term: u64,
        prev_term: Option<u64>,
        entry: &E,
    ) {
        let (earlier, earlier_prev) = self
            .written
            .entry((index, term))
            .or_insert_with(|| (entry.clone(), prev_term))
            .clone();
        if earlier != *entry || earlier_prev != prev_term {
            self.violate(
                "log-matching",
                format!(
                    "n{node} appended {entry:?} after term {prev_term:?} at index {index}, but another log held {earlier:?} after term {earlier_prev:?} at the same index and term"
                ),
            );
        }
    }

    /// `node` restarted with `log` on its disk: `(index, term)` of every entry it recovered.
    pub fn recovered(&mut self, node: u64, log: impl IntoIterator<Item = (u64, u64)>) {
        self.durable.insert(node, log.into_iter().collect());
    }

    /// `node`'s entries `(index, term)` are durable (its sync returned).
    pub fn synced(&mut self, node: u64, entries: impl IntoIterator<Item = (u64, u64)>) {
        self.durable.entry(node).or_default().extend(entries);
    }

    /// `node` cut its log from `index` on.
    pub fn truncated(&mut self, node: u64, index: u64) {
        if let Some(held) = self.durable.get_mut(&node) {
            held.split_off(&index);
        }
    }

    /// `node`, in `term`, applied `entry` at `index`.
    pub fn applied(&mut self, node: u64, index: u64, entry: E, term: u64) {
        self.applied_entry(node, index, entry, None, term);
    }

    /// As [`RaftSafety::applied`], and checks `committed-on-majority` for the entry of term
    /// `entry_term` (with [`RaftSafety::with_voters`] and durability reports).
    pub fn applied_durable(&mut self, node: u64, index: u64, entry: E, entry_term: u64, term: u64) {
        self.applied_entry(node, index, entry, Some(entry_term), term);
    }

    fn applied_entry(
        &mut self,
        node: u64,
        index: u64,
        entry: E,
        entry_term: Option<u64>,
        term: u64,
    ) {
        let first = self.applied.entry(index).or_insert_with(|| Applied {
            by_node: node,
            entry: entry.clone(),
            lowest_term: term,
        });
        first.lowest_term = first.lowest_term.min(term);
        if first.entry != entry {
            let message = format!(
                "n{node} applied {entry:?} at index {index}, but n{} applied {:?} there",
                first.by_node, first.entry
            );
            self.violate("state-machine-safety", message);
        }
        let (Some(voters), Some(entry_term)) = (self.voters, entry_term) else {
            return;
        };
        let holders: Vec<u64> = self
            .durable
            .iter()
            .filter(|(_, held)| held.get(&index) == Some(&entry_term))
            .map(|(&n, _)| n)
            .collect();
        if holders.len() <= voters / 2 {
            self.violate(
                "committed-on-majority",
                format!(
                    "n{node} applied entry {index} (term {entry_term}, {entry:?}) as committed, but only {holders:?} of {voters} voters hold it durably"
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Safety = RaftSafety<(u64, &'static str)>;

    #[test]
    fn two_leaders_of_one_term_break_election_safety() {
        let mut s = Safety::new();
        s.became_leader(1, 3, |_| None);
        s.became_leader(1, 3, |_| None);
        assert!(s.check("election-safety").is_ok());
        s.became_leader(2, 3, |_| None);
        assert!(s
            .check("election-safety")
            .unwrap_err()
            .contains("n1 and n2"));
    }

    #[test]
    fn a_later_leader_must_hold_what_was_applied_before_its_term() {
        let mut s = Safety::new();
        s.applied(1, 1, (1, "a"), 2);
        // A leader of the term the entry was applied in need not hold it.
        s.became_leader(3, 2, |_| None);
        s.became_leader(2, 3, |i| (i == 1).then_some((1, "a")));
        assert!(s.check("leader-completeness").is_ok());
        s.became_leader(3, 4, |i| (i == 1).then_some((4, "b")));
        assert!(s.check("leader-completeness").is_err());
    }

    #[test]
    fn different_entries_at_one_index_and_term_break_log_matching() {
        let mut s = Safety::new();
        s.appended(1, 5, 2, Some(2), &(2, "a"));
        s.appended(2, 5, 2, Some(2), &(2, "a"));
        assert!(s.check("log-matching").is_ok());
        s.appended(3, 5, 2, Some(1), &(2, "a"));
        assert!(s.check("log-matching").is_err());
    }

    #[test]
    fn different_entries_applied_at_one_index_break_state_machine_safety() {
        let mut s = Safety::new();
        s.applied(1, 1, (1, "a"), 1);
        s.applied(2, 1, (1, "a"), 2);
        assert!(s.check("state-machine-safety").is_ok());
        s.applied(3, 1, (2, "b"), 2);
        assert!(s.check("state-machine-safety").is_err());
    }

    #[test]
    fn applying_what_a_minority_holds_durably_breaks_committed_on_majority() {
        let mut s = Safety::new().with_voters(3);
        s.recovered(1, [(1, 1)]);
        s.synced(2, [(1, 1)]);
        s.applied_durable(1, 1, (1, "a"), 1, 1);
        assert!(s.check("committed-on-majority").is_ok());
        s.truncated(2, 1);
        s.applied_durable(2, 1, (1, "a"), 1, 1);
        assert!(s.check("committed-on-majority").is_err());
    }

    #[test]
    fn only_the_first_violation_of_each_property_is_kept() {
        let mut s = Safety::new();
        s.became_leader(1, 1, |_| None);
        s.became_leader(2, 1, |_| None);
        s.became_leader(3, 1, |_| None);
        assert!(s.check("election-safety").unwrap_err().contains("n2"));
    }
}
