//! What the checks read: each replica as the model saw it, acknowledgements, and the two
//! invariants.

use super::*;

/// A member's replica, as the invariants read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replica {
    /// Applied version.
    pub version: u64,
    /// The table at that version.
    pub table: Table,
    /// False after a (re)start until the first snapshot arrives.
    pub synced: bool,
    /// Waiting for a snapshot it asked for (it knows it is behind).
    pub resyncing: bool,
}

/// What a member has in flight for operations (the system's own "not at rest").
#[derive(Debug, Clone, Default)]
pub struct Busy {
    /// Client calls it holds (not yet answered).
    pub held_calls: usize,
    /// Calls queued at it as leader, not yet in a commit.
    pub queued: usize,
    /// A commit in flight.
    pub committing: bool,
    /// An election in progress.
    pub electing: bool,
}

/// An acknowledged answer, as a client received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    /// The operation.
    pub op: Op,
    /// The version that committed it.
    pub version: u64,
    /// Its position in the batch.
    pub index: u32,
    /// The answer.
    pub yes: bool,
}

/// How often each at-rest check found something to compare (the vacuity guards read these).
#[derive(Debug, Clone, Default)]
pub struct CheckCounts {
    /// Rest states in which a replica at a version ≥ 1 was compared with the store.
    pub compared: u64,
    /// Acknowledged registrations checked at a replica.
    pub visible: u64,
    /// Rest states past [`STALE_BOUND`] in which replicas were checked for being current.
    pub caught_up: u64,
}

/// Everything the invariants read, and the members write.
#[derive(Debug, Default)]
pub struct Model {
    /// The store.
    pub store: Store,
    /// Per member.
    pub replicas: [Replica; 3],
    /// Per member.
    pub busy: [Busy; 3],
    /// Clients with a call outstanding.
    pub clients_waiting: u32,
    /// Every acknowledged answer.
    pub acks: Vec<Ack>,
    /// Last change of anything rest depends on (ns of virtual time).
    pub last_activity_ns: u64,
    /// When the replication of the last batch or snapshot sent has settled.
    pub repl_settles_at_ns: u64,
    /// The network's delivery bound for the replication stream in this run.
    pub delivery_bound_ns: u64,
    /// How often the checks had something to check.
    pub counts: CheckCounts,
}

pub(super) fn now_ns() -> u64 {
    now().elapsed_since_start().as_nanos() as u64
}

impl Model {
    pub(super) fn touch(&mut self) {
        self.last_activity_ns = now_ns();
    }

    /// Members the checks look at: up, not paused, synced, not resyncing.
    pub(super) fn checked_members(&self) -> Vec<usize> {
        (0..MEMBERS.len())
            .filter(|&i| {
                let r = &self.replicas[i];
                node::is_up(MEMBERS[i]) && !node::is_paused(MEMBERS[i]) && r.synced && !r.resyncing
            })
            .collect()
    }

    /// Since when the system has been at rest (see the module docs), or `None`.
    pub fn rest_since_ns(&self) -> Option<u64> {
        if self.clients_waiting > 0 || now_ns() < self.repl_settles_at_ns {
            return None;
        }
        for (i, busy) in self.busy.iter().enumerate() {
            if !node::is_up(MEMBERS[i]) {
                continue;
            }
            if busy.held_calls > 0 || busy.queued > 0 || busy.committing || busy.electing {
                return None;
            }
        }
        Some(self.last_activity_ns.max(self.repl_settles_at_ns))
    }

    /// `same-version-same-contents`.
    pub fn check_same_version(&mut self) -> Result<(), String> {
        if self.rest_since_ns().is_none() {
            return Ok(());
        }
        let mut tables: BTreeMap<u64, Table> = BTreeMap::new();
        for i in self.checked_members() {
            let r = &self.replicas[i];
            if r.version > self.store.version {
                return Err(format!(
                    "{} is at version {} beyond the store's {}",
                    MEMBERS[i], r.version, self.store.version
                ));
            }
            let expected = tables
                .entry(r.version)
                .or_insert_with(|| self.store.table_at(r.version));
            if r.version > 0 {
                self.counts.compared += 1;
            }
            if r.table != *expected {
                let peers: Vec<String> = self
                    .checked_members()
                    .into_iter()
                    .filter(|&j| j != i && self.replicas[j].version == r.version)
                    .map(|j| format!("{} holds {:?}", MEMBERS[j], self.replicas[j].table))
                    .collect();
                return Err(format!(
                    "at rest, {} at version {} holds {:?}, but version {} is {:?}{}",
                    MEMBERS[i],
                    r.version,
                    r.table,
                    r.version,
                    expected,
                    if peers.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", peers.join(", "))
                    }
                ));
            }
        }
        Ok(())
    }

    /// `acknowledged-visible`.
    pub fn check_acknowledged_visible(&mut self) -> Result<(), String> {
        let Some(since) = self.rest_since_ns() else {
            return Ok(());
        };
        let members = self.checked_members();
        for ack in &self.acks {
            let Op::Register { name, owner } = ack.op else {
                continue;
            };
            if !ack.yes {
                continue;
            }
            for &i in &members {
                let r = &self.replicas[i];
                if r.version < ack.version {
                    continue;
                }
                // Was the name touched by a later committed operation, up to this replica's
                // version?
                let later = (ack.version..=r.version).any(|v| {
                    let ops = &self.store.log[v as usize - 1];
                    let from = if v == ack.version {
                        ack.index as usize + 1
                    } else {
                        0
                    };
                    ops.iter().skip(from).any(|op| match *op {
                        Op::Register { name: n, .. } | Op::Unregister { name: n } => n == name,
                    })
                });
                if later {
                    continue;
                }
                self.counts.visible += 1;
                if r.table.get(&name) != Some(&owner) {
                    return Err(format!(
                        "at rest, name {name} registered by c{} (acknowledged at version {}) is not visible at {} (version {}, {:?})",
                        owner + 1,
                        ack.version,
                        MEMBERS[i],
                        r.version,
                        r.table
                    ));
                }
            }
        }
        let rested = Duration::from_nanos(now_ns().saturating_sub(since));
        if rested >= STALE_BOUND {
            self.counts.caught_up += 1;
            for &i in &members {
                let r = &self.replicas[i];
                if r.version != self.store.version {
                    return Err(format!(
                        "after {rested:?} at rest, {} is still at version {} while the store is at {}: what was acknowledged since is not visible there",
                        MEMBERS[i], r.version, self.store.version
                    ));
                }
            }
        }
        Ok(())
    }
}
